/*
 * bindings/temporalfilters.i - the SWIG interface shared by the Java, Go and
 * Ruby bindings. Each language has its own bindings/<lang>/temporalfilters_<lang>.i,
 * which starts with %module, defines the typemaps for the argument patterns
 * below and the %exception block, then %includes this file.
 *
 * Classes: RecencySketchNative, AgeBloomNative, TimeBloomNative,
 * RateLimiterNative, RotatingCuckooNative, RecencyWindowNative (the C handles), and one read-only value class per
 * versioned struct (RecencySketchInfoNative, AgeBloomStatsNative, ...).
 * Constants: tf_status, TF_NEVER, TF_RETRY_NEVER, every flag and limit, all
 * read from the C headers (nothing here retypes a value).
 *
 * Shape: each handle class is the opaque C type itself (%extend on
 * tf_recency_sketch, ... under the class names, see "the handles" below):
 * the object a language holds points at the C handle, the constructor and
 * the factories (new_for, deserialize) return what tf_<noun>_new* made, the
 * destructor is tf_<noun>_free, and $self in a method is the handle the C
 * functions take. Every method is one call to the C function whose status
 * goes to the error slot (TF_BINDING_RETURN for a value, tf_binding_check for
 * a status alone); only pace, acquire, peek, the batches and serialize_into,
 * which have outputs or checks of their own, take more lines. What every
 * handle has (destructor, deserialize, memory, serialization) is written
 * once, in TF_BINDING_HANDLE.
 *
 * Closed handles: each language layer owns the handle's lifetime and never
 * passes a freed one. Java's proxy zeroes its pointer in delete(), and
 * NativeHandle refuses every later call (ClosedException); Go's handle zeroes
 * its pointer when it frees it and every method checks it first (ErrClosed);
 * Ruby's close() takes the handle out of the object (DATA_PTR = NULL) before
 * freeing it, and the typemap of `self` raises ClosedError for every later
 * call (temporalfilters_ruby.i). A NULL handle that still reached C fails
 * cleanly: every C function refuses it with TF_ERR_NULL.
 *
 * Why no box, and why the methods are one-line bodies rather than bare
 * declarations: until this release each handle sat in a malloc'ed
 * `struct <Name>Native { ctype *s; }` that close() set to NULL, and every
 * method began by fetching s from it and failing when NULL. The language
 * layers already refuse closed handles before the call (and Ruby can clear
 * its own pointer), so the box guarded nothing they did not; it cost an
 * allocation per object and a dependent load per call. Bare declarations
 * (`tf_status clear();`, for which SWIG would call tf_recency_sketch_clear
 * itself) need the class to be known to SWIG by its C name, and then SWIG
 * names the C function of every method with a body <C name>_<method>, which
 * is the library's own function (tf_recency_sketch_query, ...): the two
 * cannot be mixed, and the methods that return a value through a pointer
 * (most of them) need a body in Java and Go, where an output argument cannot
 * become the result. A one-line body per method, with the status checked in
 * one place, is the simpler of the two.
 *
 * Speed: the binding benchmarks (meson test --benchmark, release build,
 * binding ns/op over C ns/op in the same run, medians of 10 alternating runs
 * on a shared 2-core machine) were within their noise (about +-10%) with
 * and without the box: single update / query through Java 3.71 / 2.77 with
 * it, 3.42 / 2.45 without; Go 5.58 / 5.29 and 5.61 / 5.99 (and 5.49 / 5.46
 * in the second half of the runs); Ruby 3.51 / 3.52 and 3.67 / 3.26; the
 * batch calls 0.8 to 1.7 in both. A call now makes one dependent load fewer
 * and an object one malloc fewer.
 *
 * Errors: every wrapper that calls the C library records a failing status in
 * a thread-local slot with tf_binding_check(); the language's %exception block
 * runs right after the call, in the same C function (hence on the same
 * thread), takes the status and message with tf_binding_take_error() and
 * raises the language's error. Go has no exceptions: it panics with
 * "tf:<status>:<message>", which the Go layer recovers into an error.
 *
 * Argument patterns the language files map (by parameter name):
 *   (const void *key, size_t key_len)                 one key (binary-safe)
 *   (const void *blob, size_t blob_len)               a serialized blob
 *   (void *out_buf, size_t out_cap)                   a buffer the caller
 *                                                     allocated, filled here
 *   (const void *keys_data, size_t keys_data_len)     keys concatenated
 *   (const int32_t *key_lens, size_t key_count)       their lengths
 *   (const uint64_t *times, size_t time_count)        one timestamp per key
 *   (uint64_t *out_times, size_t out_count)           one result per key
 *   (int32_t *out_allowed, size_t allowed_count)      one 1/0 answer per key
 *   uint64_t *next_allowed                            an output timestamp
 *   uint64_t / uint32_t scalars                       range-checked, never
 *                                                     wrapped (Java has no
 *                                                     unsigned types)
 */

/* The error slot, the key split and the method bodies (shared with the Redis
 * limiter's module). */
%include "temporalfilters_slot.i"

%{
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "temporalfilters.h"

/* ---- the handles ---------------------------------------------------------- */

/* Each handle class is the opaque C type itself: SWIG knows it by the class
 * name (struct RecencySketchNative, ...), and these make that name the C
 * type, so that the object a language holds points at the C handle and
 * $self in a method is the tf_<noun> pointer the C functions take. (SWIG
 * names a method's C function <struct>_<method>; under the C names those
 * would be the library's own, tf_recency_sketch_query and the like.) */
#define RecencySketchNative tf_recency_sketch
#define AgeBloomNative tf_age_bloom
#define TimeBloomNative tf_time_bloom
#define RateLimiterNative tf_rate_limiter
#define RotatingCuckooNative tf_rotating_cuckoo
#define RecencyWindowNative tf_recency_window


/* The rate limiter's batch writes its C int answers straight into the
 * languages' int32 arrays: int must be int32_t (it is wherever the bindings
 * build; this refuses to compile otherwise). */
/* The defaults of tf_rotating_cuckoo_options, read by the C compiler from
 * TF_ROTATING_CUCKOO_OPTIONS_INIT (the constants TF_BINDING_ROTATING_CUCKOO_*
 * below), so that no language retypes them. */
static tf_rotating_cuckoo_options tf_binding_rotating_cuckoo_defaults(void) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    return o;
}
#define TF_BINDING_RC_TABLE_SLOTS_ (tf_binding_rotating_cuckoo_defaults().table_slots)
#define TF_BINDING_RC_MAX_MEMORY_ (tf_binding_rotating_cuckoo_defaults().max_memory)
#define TF_BINDING_RC_TTL_ (tf_binding_rotating_cuckoo_defaults().ttl)
#define TF_BINDING_RC_MAX_OCCUPANCY_ (tf_binding_rotating_cuckoo_defaults().max_occupancy)
#define TF_BINDING_RC_SLOTS_PER_BUCKET_ (tf_binding_rotating_cuckoo_defaults().slots_per_bucket)
#define TF_BINDING_RC_MAX_KICKS_ (tf_binding_rotating_cuckoo_defaults().max_kicks)
#define TF_BINDING_RC_MAX_TABLES_ (tf_binding_rotating_cuckoo_defaults().max_tables)

/* The defaults of tf_recency_window_options, read from
 * TF_RECENCY_WINDOW_OPTIONS_INIT (the constants TF_BINDING_RECENCY_WINDOW_*
 * below), and the struct filled from the scalars of RecencyWindowNative's
 * constructor and of memory_for (the fields in order). */
static tf_recency_window_options tf_binding_recency_window_defaults(void) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    return o;
}
#define TF_BINDING_RW_WINDOW_ (tf_binding_recency_window_defaults().window)
#define TF_BINDING_RW_INV_EPS_ (tf_binding_recency_window_defaults().inv_eps)
#define TF_BINDING_RW_BLOCK_ (tf_binding_recency_window_defaults().block)
#define TF_BINDING_RW_MAX_MEMORY_ (tf_binding_recency_window_defaults().max_memory)
#define TF_BINDING_RW_DELTA_ (tf_binding_recency_window_defaults().delta)
#define TF_BINDING_RW_MODE_ (tf_binding_recency_window_defaults().mode)
static tf_recency_window_options tf_binding_recency_window_options(uint64_t window, uint64_t inv_eps, uint64_t block,
                                                                   uint64_t max_memory, double delta, uint32_t mode,
                                                                   uint32_t seed, uint32_t flags) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.window = window;
    o.inv_eps = inv_eps;
    o.block = block;
    o.max_memory = max_memory;
    o.delta = delta;
    o.mode = mode;
    o.seed = seed;
    o.flags = flags;
    return o;
}

typedef char tf_binding_int_is_int32_[sizeof(int) == sizeof(int32_t) ? 1 : -1] __attribute__((unused));

/* ---- the C figure for the binding benchmarks -------------------------- */

static volatile uint64_t tf_binding_sink_;

/* What every C loop below shares. Each runs one operation `op` over the
 * keys of `key_len` bytes laid end to end in keys_data, in C, and returns
 * nanoseconds per key: single-key calls, one per key, or batch calls of 64
 * keys (as the bindings' batch rows pass them). The benchmarks of every
 * binding call these in the same run as their own loop, so the ratio
 * binding / C is measured, not guessed. */
enum { TF_BINDING_LOOP_BATCH = 64 };

/* The number of keys, or (size_t)-1 after recording the failure: no handle,
 * keys_data not a whole number of keys, or op outside [0, ops). */
static size_t tf_binding_loop_keys(const void *handle, size_t keys_data_len, uint32_t key_len, int op, int ops) {
    if (!handle) {
        tf_binding_fail(TF_ERR_NULL, "c_loop_ns: the structure is closed");
        return (size_t)-1;
    }
    if (key_len == 0 || keys_data_len % key_len != 0 || op < 0 || op >= ops) {
        tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "c_loop_ns: keys_data is not a whole number of keys, or bad op");
        return (size_t)-1;
    }
    return keys_data_len / key_len;
}

static uint64_t tf_binding_clock_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double tf_binding_per_key(uint64_t start_ns, size_t n, uint64_t sink) {
    const uint64_t ns = tf_binding_clock_ns() - start_ns;
    tf_binding_sink_ = sink;
    return n ? (double)ns / (double)n : 0.0;
}

/* The next batch: the pointers and lengths of up to TF_BINDING_LOOP_BATCH
 * keys from *p, of the n - i keys left; advances *p and returns the count. */
static size_t tf_binding_gather(const unsigned char **p, uint32_t key_len, size_t i, size_t n, const void **ptrs,
                                size_t *lens) {
    const size_t g = n - i < TF_BINDING_LOOP_BATCH ? n - i : TF_BINDING_LOOP_BATCH;
    for (size_t j = 0; j < g; ++j, *p += key_len) {
        ptrs[j] = *p;
        lens[j] = key_len;
    }
    return g;
}

/* A call of a C loop: a failure is recorded (the language raises it) and
 * ends the loop with 0.0, which every benchmark refuses as a time, so that a
 * loop wired wrongly can never pass for a fast one. */
#define TF_BINDING_LOOP_CALL(call)       \
    do {                                 \
        const tf_status st_ = (call);    \
        if (st_ != TF_OK) {              \
            tf_binding_check(st_);       \
            return 0.0;                  \
        }                                \
    } while (0)

/* The sketch: 0 update and 1 query, one call per key; 2 update_batch and
 * 3 query_batch. Timestamps are t0, t0+1, ... */
static double tf_binding_c_loop_ns(RecencySketchNative *s, const void *keys_data, size_t keys_data_len,
                                   uint32_t key_len, int op, uint64_t t0) {
    const size_t n = tf_binding_loop_keys(s, keys_data_len, key_len, op, 4);
    if (n == (size_t)-1) return 0.0;
    const unsigned char *p = (const unsigned char *)keys_data;
    const void *ptrs[TF_BINDING_LOOP_BATCH];
    size_t lens[TF_BINDING_LOOP_BATCH];
    uint64_t times[TF_BINDING_LOOP_BATCH];
    uint64_t sink = 0;
    const uint64_t start = tf_binding_clock_ns();
    if (op <= 1) {
        for (size_t i = 0; i < n; ++i, p += key_len) {
            if (op == 0) {
                TF_BINDING_LOOP_CALL(tf_recency_sketch_update(s, p, key_len, t0 + i));
            } else {
                uint64_t t = 0;
                TF_BINDING_LOOP_CALL(tf_recency_sketch_query(s, p, key_len, &t));
                sink += t;
            }
        }
    } else {
        for (size_t i = 0; i < n; i += TF_BINDING_LOOP_BATCH) {
            const size_t g = tf_binding_gather(&p, key_len, i, n, ptrs, lens);
            for (size_t j = 0; j < g; ++j) times[j] = t0 + i + j;
            if (op == 2) {
                TF_BINDING_LOOP_CALL(tf_recency_sketch_update_batch(s, ptrs, lens, g, times));
            } else {
                TF_BINDING_LOOP_CALL(tf_recency_sketch_query_batch(s, ptrs, lens, g, times));
                for (size_t j = 0; j < g; ++j) sink += times[j];
            }
        }
    }
    return tf_binding_per_key(start, n, sink);
}

/* The Bloom filters: 0 contains and 1 add, one call per key; 2
 * contains_batch and 3 add_batch; of the age filter `age`, or when it is
 * NULL of the time-limited filter `tb` at time `now`. (One loop for both:
 * the branch between them is taken the same way for every key.) */
static double tf_binding_bloom_c_loop_ns(tf_age_bloom *age, tf_time_bloom *tb, const void *keys_data,
                                         size_t keys_data_len, uint32_t key_len, int op, uint64_t now) {
    const size_t n =
        tf_binding_loop_keys(age ? (const void *)age : (const void *)tb, keys_data_len, key_len, op, 4);
    if (n == (size_t)-1) return 0.0;
    const unsigned char *p = (const unsigned char *)keys_data;
    const void *ptrs[TF_BINDING_LOOP_BATCH];
    size_t lens[TF_BINDING_LOOP_BATCH];
    int present[TF_BINDING_LOOP_BATCH];
    uint64_t sink = 0;
    const uint64_t start = tf_binding_clock_ns();
    if (op <= 1) {
        for (size_t i = 0; i < n; ++i, p += key_len) {
            int v = 0;
            if (op == 1) {
                TF_BINDING_LOOP_CALL(age ? tf_age_bloom_add(age, p, key_len) : tf_time_bloom_add(tb, p, key_len, now));
            } else {
                TF_BINDING_LOOP_CALL(age ? tf_age_bloom_contains(age, p, key_len, &v)
                                         : tf_time_bloom_contains(tb, p, key_len, now, &v));
            }
            sink += (uint64_t)v;
        }
    } else {
        for (size_t i = 0; i < n; i += TF_BINDING_LOOP_BATCH) {
            const size_t g = tf_binding_gather(&p, key_len, i, n, ptrs, lens);
            if (op == 3) {
                TF_BINDING_LOOP_CALL(age ? tf_age_bloom_add_batch(age, ptrs, lens, g)
                                         : tf_time_bloom_add_batch(tb, ptrs, lens, g, now));
                continue;
            }
            TF_BINDING_LOOP_CALL(age ? tf_age_bloom_contains_batch(age, ptrs, lens, g, present)
                                     : tf_time_bloom_contains_batch(tb, ptrs, lens, g, now, present));
            sink += (uint64_t)present[0];
        }
    }
    return tf_binding_per_key(start, n, sink);
}
static double tf_binding_age_bloom_c_loop_ns(AgeBloomNative *f, const void *keys_data, size_t keys_data_len,
                                             uint32_t key_len, int op) {
    return tf_binding_bloom_c_loop_ns(f, NULL, keys_data, keys_data_len, key_len, op, 0);
}
static double tf_binding_time_bloom_c_loop_ns(TimeBloomNative *f, const void *keys_data, size_t keys_data_len,
                                              uint32_t key_len, int op, uint64_t now) {
    return tf_binding_bloom_c_loop_ns(NULL, f, keys_data, keys_data_len, key_len, op, now);
}

/* The rate limiter: 0 acquire, one call per key, and 1 acquire_batch; one
 * unit each, key i at time t0 + i (the batch's times likewise). */
static double tf_binding_rate_limiter_c_loop_ns(RateLimiterNative *l, const void *keys_data, size_t keys_data_len,
                                                uint32_t key_len, int op, uint64_t t0) {
    const size_t n = tf_binding_loop_keys(l, keys_data_len, key_len, op, 2);
    if (n == (size_t)-1) return 0.0;
    const unsigned char *p = (const unsigned char *)keys_data;
    const void *ptrs[TF_BINDING_LOOP_BATCH];
    size_t lens[TF_BINDING_LOOP_BATCH];
    uint64_t times[TF_BINDING_LOOP_BATCH];
    int allowed[TF_BINDING_LOOP_BATCH];
    uint64_t remaining[TF_BINDING_LOOP_BATCH], retry_at[TF_BINDING_LOOP_BATCH];
    uint64_t sink = 0;
    const uint64_t start = tf_binding_clock_ns();
    if (op == 0) {
        for (size_t i = 0; i < n; ++i, p += key_len) {
            int a = 0;
            uint64_t rem = 0, retry = 0;
            TF_BINDING_LOOP_CALL(tf_rate_limiter_acquire(l, p, key_len, t0 + i, 1, &a, &rem, &retry));
            sink += (uint64_t)a + rem;
        }
    } else {
        for (size_t i = 0; i < n; i += TF_BINDING_LOOP_BATCH) {
            const size_t g = tf_binding_gather(&p, key_len, i, n, ptrs, lens);
            for (size_t j = 0; j < g; ++j) times[j] = t0 + i + j;
            TF_BINDING_LOOP_CALL(tf_rate_limiter_acquire_batch(l, ptrs, lens, g, times, 1, allowed, remaining, retry_at));
            sink += (uint64_t)allowed[0] + remaining[0];
        }
    }
    return tf_binding_per_key(start, n, sink);
}

/* The rotating cuckoo filter: 0 contains and 1 add_if_absent, one call per
 * key; 2 contains_batch and 3 add_if_absent_batch; all at time `now`. */
static double tf_binding_rotating_cuckoo_c_loop_ns(RotatingCuckooNative *f, const void *keys_data,
                                                   size_t keys_data_len, uint32_t key_len, int op, uint64_t now) {
    const size_t n = tf_binding_loop_keys(f, keys_data_len, key_len, op, 4);
    if (n == (size_t)-1) return 0.0;
    const unsigned char *p = (const unsigned char *)keys_data;
    const void *ptrs[TF_BINDING_LOOP_BATCH];
    size_t lens[TF_BINDING_LOOP_BATCH];
    int present[TF_BINDING_LOOP_BATCH];
    uint64_t sink = 0;
    const uint64_t start = tf_binding_clock_ns();
    if (op <= 1) {
        for (size_t i = 0; i < n; ++i, p += key_len) {
            int v = 0;
            TF_BINDING_LOOP_CALL(op == 0 ? tf_rotating_cuckoo_contains(f, p, key_len, now, &v)
                                         : tf_rotating_cuckoo_add_if_absent(f, p, key_len, now, &v));
            sink += (uint64_t)v;
        }
    } else {
        for (size_t i = 0; i < n; i += TF_BINDING_LOOP_BATCH) {
            const size_t g = tf_binding_gather(&p, key_len, i, n, ptrs, lens);
            TF_BINDING_LOOP_CALL(op == 2 ? tf_rotating_cuckoo_contains_batch(f, ptrs, lens, g, now, present)
                                 : tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, lens, g, now, present));
            sink += (uint64_t)present[0];
        }
    }
    return tf_binding_per_key(start, n, sink);
}

/* The recency window: 0 insert and 1 query, one call per key; 2
 * insert_batch and 3 query_batch. */
static double tf_binding_recency_window_c_loop_ns(RecencyWindowNative *w, const void *keys_data,
                                                  size_t keys_data_len, uint32_t key_len, int op) {
    const size_t n = tf_binding_loop_keys(w, keys_data_len, key_len, op, 4);
    if (n == (size_t)-1) return 0.0;
    const unsigned char *p = (const unsigned char *)keys_data;
    const void *ptrs[TF_BINDING_LOOP_BATCH];
    size_t lens[TF_BINDING_LOOP_BATCH];
    uint64_t recency[TF_BINDING_LOOP_BATCH];
    uint64_t sink = 0;
    const uint64_t start = tf_binding_clock_ns();
    if (op <= 1) {
        for (size_t i = 0; i < n; ++i, p += key_len) {
            if (op == 0) {
                TF_BINDING_LOOP_CALL(tf_recency_window_insert(w, p, key_len));
            } else {
                uint64_t r = 0;
                TF_BINDING_LOOP_CALL(tf_recency_window_query(w, p, key_len, &r));
                sink += r;
            }
        }
    } else {
        for (size_t i = 0; i < n; i += TF_BINDING_LOOP_BATCH) {
            const size_t g = tf_binding_gather(&p, key_len, i, n, ptrs, lens);
            if (op == 2) {
                TF_BINDING_LOOP_CALL(tf_recency_window_insert_batch(w, ptrs, lens, g));
            } else {
                TF_BINDING_LOOP_CALL(tf_recency_window_query_batch(w, ptrs, lens, g, recency));
                sink += recency[0];
            }
        }
    }
    return tf_binding_per_key(start, n, sink);
}

/* The bare crossing for the binding benchmarks: a native call that does
 * nothing but return 0, reached by the same mechanism as every wrapper (a
 * JNI call, a cgo call, a Ruby C method) but with no %exception block (see
 * its declaration below), so that its time is the boundary alone. (It
 * returns a value because cgo's stub of a function with neither arguments
 * nor result leaves a variable unused, a compiler warning.) Not a library
 * function: it lives in each binding's wrapper, like tf_binding_c_loop_ns. */
static int tf_binding_bare_crossing(void) { return 0; }

/* serialize_into: tf_<noun>_serialize into the language's buffer of out_cap
 * bytes; returns the bytes written (0 after a failure, which is recorded).
 * A buffer larger than the blob is fine: the language keeps the first
 * `written` bytes. The language asks serialized_size() first; a structure
 * that allows concurrent calls (the rate limiter) may grow in between, and
 * the call then fails with TF_ERR_BUFFER_TOO_SMALL: the language tries
 * again with a quarter more room than it measured (size + size / 4 + 64
 * bytes), TF_BINDING_SERIALIZE_ATTEMPTS times in all (below). */
static uint64_t tf_binding_serialize_into(tf_status st, size_t written) {
    return tf_binding_check(st) == TF_OK ? (uint64_t)written : 0;
}
#define TF_BINDING_SERIALIZE_INTO(serialize_fn, handle, out_buf, out_cap)      \
    size_t written = 0;                                                       \
    tf_status st = serialize_fn((handle), (out_buf), (out_cap), &written);    \
    return tf_binding_serialize_into(st, written)

/* The bodies of the batches over keys laid end to end (keys_data,
 * keys_data_len, key_lens, key_count: the method's parameters): the keys
 * are split into the pointers `ptrs` and lengths `lens` that `call` (the C
 * batch call) takes. TF_BINDING_KEYS_BATCH is a batch without answers;
 * TF_BINDING_ANSWER_BATCH one with a 1/0 answer per key in its parameters
 * (out_present, present_count), whose length must equal key_count: it
 * returns the number of 1s (a scalar result keeps Ruby's outputs flat, as
 * acquire_batch's), 0 with the failure recorded. `what` names the method
 * in the message. */
#define TF_BINDING_KEYS_SPLIT(fail_value)                                                          \
    const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;                                      \
    size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;                                       \
    if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,    \
                              TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)                          \
    return fail_value
#define TF_BINDING_KEYS_BATCH(call)  \
    TF_BINDING_KEYS_SPLIT();         \
    tf_binding_check(call);          \
    tf_binding_free_split(ptrs, lens, small)
#define TF_BINDING_ANSWER_BATCH(what, call)                                                        \
    if (present_count != key_count) {                                                              \
        tf_binding_fail(TF_ERR_INVALID_ARGUMENT, what ": the output must hold one answer per key"); \
        return 0;                                                                                  \
    }                                                                                              \
    TF_BINDING_KEYS_SPLIT(0);                                                                      \
    uint64_t hits = 0;                                                                             \
    if (tf_binding_check(call) == TF_OK) {                                                         \
        for (size_t i = 0; i < key_count; ++i) hits += out_present[i] != 0;                        \
    }                                                                                              \
    tf_binding_free_split(ptrs, lens, small);                                                      \
    return hits

%}

/* ---- what the languages see: the C headers' constants and structs ----- */

/* The headers themselves, so that no value is typed twice: the tf_status
 * codes, every #define with a plain value (the flags TF_RECENCY_SKETCH_*,
 * TF_AGE_BLOOM_BLOCKED, TF_RATE_LIMITER_* and the limits beside them) as
 * constants of the native module, and the versioned info and stats structs
 * as read-only value classes (one getter per field; `size` is C's business).
 * The structures' functions are wrapped by the classes below instead, and
 * the error-message calls by the error slot above. */
%rename("$ignore", %$isfunction, regextarget=1) "^tf_(recency_sketch|age_bloom|time_bloom|rate_limiter|rotating_cuckoo|recency_window)_";
%rename("$ignore", %$isvariable, regextarget=1, fullname=1) "^tf_[a-z_]+::size$";
%ignore tf_last_error_message;
%ignore tf_clear_last_error;
%ignore tf_set_last_error_message;
%ignore tf_version_number;
%ignore tf_deserialize_options;
%ignore tf_rotating_cuckoo_options;
%ignore tf_recency_window_options;
/* Padding named for the C struct's layout (always 0): no language shows it. */
%ignore tf_rotating_cuckoo_table::reserved;
%ignore tf_recency_window_level::reserved;
/* Fields the C API gained before the language layers show them (the Go
 * suite checks that every getter of a value class has a field of its Go
 * struct): hidden until those layers add them, then this goes. */
%rename(RecencySketchInfoNative) tf_recency_sketch_info;
%rename(AgeBloomInfoNative) tf_age_bloom_info;
%rename(AgeBloomStatsNative) tf_age_bloom_stats;
%rename(TimeBloomInfoNative) tf_time_bloom_info;
%rename(TimeBloomStatsNative) tf_time_bloom_stats;
%rename(RateLimiterInfoNative) tf_rate_limiter_info;
%rename(RateLimiterStatsNative) tf_rate_limiter_stats;
%rename(RotatingCuckooInfoNative) tf_rotating_cuckoo_info;
%rename(RotatingCuckooStatsNative) tf_rotating_cuckoo_stats;
%rename(RotatingCuckooTableNative) tf_rotating_cuckoo_table;
%rename(RecencyWindowInfoNative) tf_recency_window_info;
%rename(RecencyWindowStatsNative) tf_recency_window_stats;
%rename(RecencyWindowLevelNative) tf_recency_window_level;
%nodefaultctor;
%immutable;
%include "temporalfilters/common.h"
%include "temporalfilters/recency_sketch.h"
%include "temporalfilters/age_bloom.h"
%include "temporalfilters/time_bloom.h"
%include "temporalfilters/rate_limiter.h"
%include "temporalfilters/rotating_cuckoo.h"
%include "temporalfilters/recency_window.h"
%mutable;
%clearnodefaultctor;

/* The two times that mean "never" are expressions SWIG does not evaluate
 * (a cast, UINT64_MAX): constants whose values the C compiler takes from the
 * header. (#undef only hides the macros from SWIG's own preprocessor, so that
 * it does not expand the names below; the wrapper code still sees them.) */
#undef TF_NEVER
#undef TF_RETRY_NEVER
%constant uint64_t TF_NEVER = TF_NEVER;
%constant uint64_t TF_RETRY_NEVER = TF_RETRY_NEVER;
/* The recency window's answer "not in the window" (UINT64_MAX) and its
 * limits (shifts), likewise. */
#undef TF_RECENCY_WINDOW_NOT_IN_WINDOW
#undef TF_RECENCY_WINDOW_MAX_WINDOW
#undef TF_RECENCY_WINDOW_MAX_INV_EPS
%constant uint64_t TF_RECENCY_WINDOW_NOT_IN_WINDOW = TF_RECENCY_WINDOW_NOT_IN_WINDOW;
%constant uint64_t TF_RECENCY_WINDOW_MAX_WINDOW = TF_RECENCY_WINDOW_MAX_WINDOW;
%constant uint64_t TF_RECENCY_WINDOW_MAX_INV_EPS = TF_RECENCY_WINDOW_MAX_INV_EPS;

/* How many times every language's serialize measures and writes before it
 * gives up with TF_ERR_BUFFER_TOO_SMALL (see serialize_into): one value for
 * the three, read from here. Why 8: the first attempt allocates exactly the
 * size measured and fails on any growth; each later one has a quarter more
 * room (and 64 bytes), so it fails only when the structure grew by more
 * than a quarter between two native calls made back to back, the second of
 * which holds every lock of the limiter while it writes. Failing eight
 * times takes growth of more than a quarter in each of seven such gaps in a
 * row, more than 1.25^7 = 4.8 times the size in the span of one serialize:
 * traffic under which no snapshot would be worth much anyway, and further
 * attempts would only keep the caller busy longer. (Go used 16, Java and
 * Ruby 8; under the concurrent tests' load every serialize succeeded by its
 * second attempt.) */
%constant int TF_BINDING_SERIALIZE_ATTEMPTS = 8;

/* The options struct of the rotating cuckoo filter (tf_rotating_cuckoo_options)
 * crosses as scalars: RotatingCuckooNative's constructor takes every field
 * (as deserialize fills tf_deserialize_options from max_memory), and the
 * language layers start from these defaults, which the C compiler reads
 * from TF_ROTATING_CUCKOO_OPTIONS_INIT (seed and flags default to 0, as
 * everywhere). docs/conventions.md, "The bindings", says how each language
 * takes them. (The macros are hidden from SWIG, which only names them.) */
%constant uint64_t TF_BINDING_ROTATING_CUCKOO_TABLE_SLOTS = TF_BINDING_RC_TABLE_SLOTS_;
%constant uint64_t TF_BINDING_ROTATING_CUCKOO_MAX_MEMORY = TF_BINDING_RC_MAX_MEMORY_;
%constant uint64_t TF_BINDING_ROTATING_CUCKOO_TTL = TF_BINDING_RC_TTL_;
%constant double TF_BINDING_ROTATING_CUCKOO_MAX_OCCUPANCY = TF_BINDING_RC_MAX_OCCUPANCY_;
%constant uint32_t TF_BINDING_ROTATING_CUCKOO_SLOTS_PER_BUCKET = TF_BINDING_RC_SLOTS_PER_BUCKET_;
%constant uint32_t TF_BINDING_ROTATING_CUCKOO_MAX_KICKS = TF_BINDING_RC_MAX_KICKS_;
%constant uint32_t TF_BINDING_ROTATING_CUCKOO_MAX_TABLES = TF_BINDING_RC_MAX_TABLES_;

/* The recency window's options (tf_recency_window_options) cross the same
 * way: RecencyWindowNative's constructor and memory_for take every field,
 * and the defaults come from TF_RECENCY_WINDOW_OPTIONS_INIT. The modes are
 * the header's TF_RECENCY_WINDOW_HISTORICAL, _EXACT and _OPTIMAL_SM. */
%constant uint64_t TF_BINDING_RECENCY_WINDOW_WINDOW = TF_BINDING_RW_WINDOW_;
%constant uint64_t TF_BINDING_RECENCY_WINDOW_INV_EPS = TF_BINDING_RW_INV_EPS_;
%constant uint64_t TF_BINDING_RECENCY_WINDOW_BLOCK = TF_BINDING_RW_BLOCK_;
%constant uint64_t TF_BINDING_RECENCY_WINDOW_MAX_MEMORY = TF_BINDING_RW_MAX_MEMORY_;
%constant double TF_BINDING_RECENCY_WINDOW_DELTA = TF_BINDING_RW_DELTA_;
%constant uint32_t TF_BINDING_RECENCY_WINDOW_MODE = TF_BINDING_RW_MODE_;

/* ---- the handles ---------------------------------------------------------- */

/* What every handle class has: the C type as a class named Native, freed by
 * its destructor; the factory that reads a blob, deserialize(blob,
 * max_memory) (tf_<noun>_deserialize with a tf_deserialize_options whose
 * max_memory is that limit; 0: the library's own bound only); memory()
 * (tf_<noun>_memory);
 * serialization in two steps (the language allocates serialized_size()
 * bytes and passes them to serialize_into()); and %newobject on whatever
 * hands over a new object. */
%define TF_BINDING_HANDLE(Native, noun)
%nodefaultctor Native;
%newobject Native::new_for;
%newobject Native::deserialize;
%newobject Native::info;
%newobject Native::stats;
typedef struct Native {} Native;
%extend Native {
    ~Native() { tf_##noun##_free($self); }
    static Native *deserialize(const void *blob, size_t blob_len, uint64_t max_memory) {
        tf_deserialize_options options = TF_DESERIALIZE_OPTIONS_INIT;
        options.max_memory = max_memory;
        TF_BINDING_RETURN(Native *, tf_##noun##_deserialize(blob, blob_len, &options, &v));
    }
    uint64_t memory() { TF_BINDING_RETURN(size_t, tf_##noun##_memory($self, &v)); }
    uint64_t serialized_size() { TF_BINDING_RETURN(size_t, tf_##noun##_serialized_size($self, &v)); }
    uint64_t serialize_into(void *out_buf, size_t out_cap) {
        TF_BINDING_SERIALIZE_INTO(tf_##noun##_serialize, $self, out_buf, out_cap);
    }
}
%enddef

/* (The classes are declared here, so every typemap their methods use must
 * come before: acquire_batch's per-key outputs use the pattern of
 * query_batch's results.) */
%apply (uint64_t *out_times, size_t out_count) {
    (uint64_t *out_remaining, size_t remaining_count),
    (uint64_t *out_retry_at, size_t retry_at_count)
};
/* The cuckoo filter's batch answers (1/0 per key) use the pattern of
 * acquire_batch's out_allowed. */
%apply (int32_t *out_allowed, size_t allowed_count) {
    (int32_t *out_present, size_t present_count)
};
/* The recency window's batch answers (one recency per key, or
 * TF_RECENCY_WINDOW_NOT_IN_WINDOW) use the pattern of query_batch's
 * results. */
%apply (uint64_t *out_times, size_t out_count) {
    (uint64_t *out_recency, size_t recency_count)
};

TF_BINDING_HANDLE(RecencySketchNative, recency_sketch)
TF_BINDING_HANDLE(AgeBloomNative, age_bloom)
TF_BINDING_HANDLE(TimeBloomNative, time_bloom)
TF_BINDING_HANDLE(RateLimiterNative, rate_limiter)
TF_BINDING_HANDLE(RotatingCuckooNative, rotating_cuckoo)
TF_BINDING_HANDLE(RecencyWindowNative, recency_window)

/* The sketch's C figure for the benchmarks (see tf_binding_c_loop_ns). */
%rename(c_loop_ns) tf_binding_c_loop_ns;
double tf_binding_c_loop_ns(RecencySketchNative *s, const void *keys_data, size_t keys_data_len, uint32_t key_len,
                            int op, uint64_t t0);
/* The Bloom filters' C figures (see tf_binding_bloom_c_loop_ns). */
%rename(age_bloom_c_loop_ns) tf_binding_age_bloom_c_loop_ns;
double tf_binding_age_bloom_c_loop_ns(AgeBloomNative *f, const void *keys_data, size_t keys_data_len,
                                      uint32_t key_len, int op);
%rename(time_bloom_c_loop_ns) tf_binding_time_bloom_c_loop_ns;
double tf_binding_time_bloom_c_loop_ns(TimeBloomNative *f, const void *keys_data, size_t keys_data_len,
                                       uint32_t key_len, int op, uint64_t now);

/* The other structures' C figures (see their loops above). */
%rename(rate_limiter_c_loop_ns) tf_binding_rate_limiter_c_loop_ns;
double tf_binding_rate_limiter_c_loop_ns(RateLimiterNative *l, const void *keys_data, size_t keys_data_len,
                                         uint32_t key_len, int op, uint64_t t0);
%rename(rotating_cuckoo_c_loop_ns) tf_binding_rotating_cuckoo_c_loop_ns;
double tf_binding_rotating_cuckoo_c_loop_ns(RotatingCuckooNative *f, const void *keys_data, size_t keys_data_len,
                                            uint32_t key_len, int op, uint64_t now);
%rename(recency_window_c_loop_ns) tf_binding_recency_window_c_loop_ns;
double tf_binding_recency_window_c_loop_ns(RecencyWindowNative *w, const void *keys_data, size_t keys_data_len,
                                           uint32_t key_len, int op);

/* The empty native call of the benchmarks (see tf_binding_bare_crossing):
 * no error check, the crossing alone. */
%noexception tf_binding_bare_crossing;
%rename(bare_crossing) tf_binding_bare_crossing;
int tf_binding_bare_crossing(void);

/* ---- RecencySketch -------------------------------------------------------- */

%extend RecencySketchNative {
    RecencySketchNative(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags) {
        TF_BINDING_RETURN(RecencySketchNative *, tf_recency_sketch_new(width, depth, seed, flags, &v));
    }
    static RecencySketchNative *new_for(uint64_t expected_keys, double too_new_probability, uint32_t seed,
                                      uint32_t flags) {
        TF_BINDING_RETURN(RecencySketchNative *,
                          tf_recency_sketch_new_for(expected_keys, too_new_probability, seed, flags, &v));
    }
    /* The sizing helper, one dimension per call (pure functions). */
    static uint64_t dimensions_width(uint64_t expected_keys, double too_new_probability, uint32_t flags) {
        TF_BINDING_RETURN(uint64_t, tf_recency_sketch_dimensions(expected_keys, too_new_probability, flags, &v, NULL));
    }
    static uint32_t dimensions_depth(uint64_t expected_keys, double too_new_probability, uint32_t flags) {
        TF_BINDING_RETURN(uint32_t, tf_recency_sketch_dimensions(expected_keys, too_new_probability, flags, NULL, &v));
    }

    void update(const void *key, size_t key_len, uint64_t now) {
        tf_binding_check(tf_recency_sketch_update($self, key, key_len, now));
    }
    uint64_t query(const void *key, size_t key_len) {
        TF_BINDING_RETURN(uint64_t, tf_recency_sketch_query($self, key, key_len, &v));
    }
    /* Returns 1 when granted, 0 when denied; *next_allowed as in C. */
    int pace(const void *key, size_t key_len, uint64_t now, uint64_t interval, uint64_t *next_allowed) {
        *next_allowed = 0;
        TF_BINDING_RETURN(int, tf_recency_sketch_pace($self, key, key_len, now, interval, &v, next_allowed));
    }
    void ttl_insert(const void *key, size_t key_len, uint64_t now, uint64_t ttl) {
        tf_binding_check(tf_recency_sketch_ttl_insert($self, key, key_len, now, ttl));
    }
    /* 1 when the key may still be live at now, 0 when certainly expired.
     * Its estimated expiry is query(key). */
    int ttl_maybe_live(const void *key, size_t key_len, uint64_t now) {
        TF_BINDING_RETURN(int, tf_recency_sketch_ttl_maybe_live($self, key, key_len, now, &v, NULL));
    }
    void merge(RecencySketchNative *other) { tf_binding_check(tf_recency_sketch_merge($self, other)); }
    void clear() { tf_binding_check(tf_recency_sketch_clear($self)); }
    double error_estimate(uint64_t since) {
        TF_BINDING_RETURN(double, tf_recency_sketch_error_estimate($self, since, &v));
    }
    /* tf_recency_sketch_get_info: width, depth, seed, flags, cells. */
    tf_recency_sketch_info *info() {
        TF_BINDING_GET_STRUCT(tf_recency_sketch_info, tf_recency_sketch_get_info($self, &v),
                              TF_RECENCY_SKETCH_INFO_INIT);
    }

    /* Batches: keys laid end to end in keys_data, key_lens[i] bytes each. */
    void update_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                      const uint64_t *times, size_t time_count) {
        if (time_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "update_batch: one timestamp per key is needed");
            return;
        }
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return;
        tf_binding_check(tf_recency_sketch_update_batch($self, ptrs, lens, key_count, times));
        tf_binding_free_split(ptrs, lens, small);
    }
    void query_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                     uint64_t *out_times, size_t out_count) {
        if (out_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "query_batch: the output must hold one timestamp per key");
            return;
        }
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return;
        tf_binding_check(tf_recency_sketch_query_batch($self, ptrs, lens, key_count, out_times));
        tf_binding_free_split(ptrs, lens, small);
    }
}

/* ---- AgeBloom (count window) ---------------------------------------------- */

%extend AgeBloomNative {
    /* Low-level: k + l slices of slice_bits bits; flags: 0 (classic) or
     * TF_AGE_BLOOM_BLOCKED. */
    AgeBloomNative(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, uint32_t flags) {
        TF_BINDING_RETURN(AgeBloomNative *, tf_age_bloom_new(k, l, slice_bits, seed, flags, &v));
    }
    /* Sized for a window of `capacity` inserts and a target error rate; the
     * flags choose the layout (and TF_AGE_BLOOM_MIN_MEMORY the classic
     * layout's memory-minimal (k, l)). deserialize reads both layouts. */
    static AgeBloomNative *new_for(uint64_t capacity, double error_rate, uint32_t seed, uint32_t flags) {
        TF_BINDING_RETURN(AgeBloomNative *, tf_age_bloom_new_for(capacity, error_rate, seed, flags, &v));
    }
    /* tf_age_bloom_choose, one number per call (pure functions): k, l, and
     * the fill ratio of a slice leaving the first k (0.5 for the classic
     * layout). */
    static uint32_t choose_k(double error_rate, uint32_t flags) {
        uint32_t l = 0;
        TF_BINDING_RETURN(uint32_t, tf_age_bloom_choose(error_rate, flags, &v, &l, NULL));
    }
    static uint32_t choose_l(double error_rate, uint32_t flags) {
        uint32_t k = 0;
        TF_BINDING_RETURN(uint32_t, tf_age_bloom_choose(error_rate, flags, &k, &v, NULL));
    }
    static double choose_fill(double error_rate, uint32_t flags) {
        uint32_t k = 0, l = 0;
        TF_BINDING_RETURN(double, tf_age_bloom_choose(error_rate, flags, &k, &l, &v));
    }
    static double false_positive_rate(uint32_t k, uint32_t l) {
        TF_BINDING_RETURN(double, tf_age_bloom_false_positive_rate(k, l, &v));
    }
    static double steady_bits_per_element(uint32_t k, uint32_t l) {
        TF_BINDING_RETURN(double, tf_age_bloom_bits_per_element(k, l, &v));
    }
    /* tf_age_bloom_expected_probes, one count per call: the slices a query
     * for an absent key tests in expectation, and for a present key (l + 1
     * times dearer to compute, so asked for only when wanted). */
    static double expected_probes_absent(uint32_t k, uint32_t l) {
        TF_BINDING_RETURN(double, tf_age_bloom_expected_probes(k, l, &v, NULL));
    }
    static double expected_probes_present(uint32_t k, uint32_t l) {
        TF_BINDING_RETURN(double, tf_age_bloom_expected_probes(k, l, NULL, &v));
    }

    void add(const void *key, size_t key_len) { tf_binding_check(tf_age_bloom_add($self, key, key_len)); }
    int contains(const void *key, size_t key_len) {
        TF_BINDING_RETURN(int, tf_age_bloom_contains($self, key, key_len, &v));
    }
    /* 1 when the key was present (and so not inserted), 0 when it was added. */
    int add_if_absent(const void *key, size_t key_len) {
        TF_BINDING_RETURN(int, tf_age_bloom_add_if_absent($self, key, key_len, &v));
    }

    /* The batches: keys laid end to end in keys_data (key_lens[i] bytes
     * each); the answers, 1/0 per key, in out_present; the answering ones
     * return the number of 1s. Every argument is checked before anything
     * changes. */
    void add_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count) {
        TF_BINDING_KEYS_BATCH(tf_age_bloom_add_batch($self, ptrs, lens, key_count));
    }
    uint64_t contains_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                            int32_t *out_present, size_t present_count) {
        TF_BINDING_ANSWER_BATCH("contains_batch",
                                tf_age_bloom_contains_batch($self, ptrs, lens, key_count, (int *)out_present));
    }
    uint64_t add_if_absent_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens,
                                 size_t key_count, int32_t *out_present, size_t present_count) {
        TF_BINDING_ANSWER_BATCH("add_if_absent_batch",
                                tf_age_bloom_add_if_absent_batch($self, ptrs, lens, key_count, (int *)out_present));
    }
    void clear() { tf_binding_check(tf_age_bloom_clear($self)); }
    /* tf_age_bloom_get_info and tf_age_bloom_get_stats. */
    tf_age_bloom_info *info() {
        TF_BINDING_GET_STRUCT(tf_age_bloom_info, tf_age_bloom_get_info($self, &v), TF_AGE_BLOOM_INFO_INIT);
    }
    tf_age_bloom_stats *stats() {
        TF_BINDING_GET_STRUCT(tf_age_bloom_stats, tf_age_bloom_get_stats($self, &v), TF_AGE_BLOOM_STATS_INIT);
    }
}

/* ---- TimeBloom (time window) ---------------------------------------------- */

%extend TimeBloomNative {
    /* Low-level: k + l initial slices of slice_bits bits; span >= l; flags 0
     * (TF_TIME_BLOOM_MIN_MEMORY is new_for's only). */
    TimeBloomNative(uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t span, uint32_t seed, uint32_t flags) {
        TF_BINDING_RETURN(TimeBloomNative *, tf_time_bloom_new(k, l, slice_bits, span, seed, flags, &v));
    }
    static TimeBloomNative *new_for(uint64_t initial_capacity, double error_rate, uint64_t span, uint32_t seed,
                                  uint32_t flags) {
        TF_BINDING_RETURN(TimeBloomNative *,
                          tf_time_bloom_new_for(initial_capacity, error_rate, span, seed, flags, &v));
    }

    void add(const void *key, size_t key_len, uint64_t now) {
        tf_binding_check(tf_time_bloom_add($self, key, key_len, now));
    }
    int contains(const void *key, size_t key_len, uint64_t now) {
        TF_BINDING_RETURN(int, tf_time_bloom_contains($self, key, key_len, now, &v));
    }
    /* 1 when the key was present within the span (and so not inserted). */
    int add_if_absent(const void *key, size_t key_len, uint64_t now) {
        TF_BINDING_RETURN(int, tf_time_bloom_add_if_absent($self, key, key_len, now, &v));
    }

    /* The batches, as AgeBloomNative's, at one time `now` for all keys. On
     * TF_ERR_OUT_OF_MEMORY (or TF_ERR_TOO_LARGE) the keys before the
     * failing one were processed (the C calls' contract). */
    void add_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                   uint64_t now) {
        TF_BINDING_KEYS_BATCH(tf_time_bloom_add_batch($self, ptrs, lens, key_count, now));
    }
    uint64_t contains_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                            uint64_t now, int32_t *out_present, size_t present_count) {
        TF_BINDING_ANSWER_BATCH("contains_batch",
                                tf_time_bloom_contains_batch($self, ptrs, lens, key_count, now, (int *)out_present));
    }
    uint64_t add_if_absent_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens,
                                 size_t key_count, uint64_t now, int32_t *out_present, size_t present_count) {
        TF_BINDING_ANSWER_BATCH("add_if_absent_batch", tf_time_bloom_add_if_absent_batch($self, ptrs, lens, key_count,
                                                                                         now, (int *)out_present));
    }
    void clear() { tf_binding_check(tf_time_bloom_clear($self)); }
    /* tf_time_bloom_get_info, and tf_time_bloom_get_stats at time now. */
    tf_time_bloom_info *info() {
        TF_BINDING_GET_STRUCT(tf_time_bloom_info, tf_time_bloom_get_info($self, &v), TF_TIME_BLOOM_INFO_INIT);
    }
    tf_time_bloom_stats *stats(uint64_t now) {
        TF_BINDING_GET_STRUCT(tf_time_bloom_stats, tf_time_bloom_get_stats($self, now, &v), TF_TIME_BLOOM_STATS_INIT);
    }
    /* Size of slice i (0 = newest) in bits. */
    uint64_t slice_bits(uint64_t i) { TF_BINDING_RETURN(uint64_t, tf_time_bloom_slice_bits($self, i, &v)); }
}

/* ---- RateLimiter ---------------------------------------------------------- */

%extend RateLimiterNative {
    RateLimiterNative(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t seed, uint32_t flags) {
        TF_BINDING_RETURN(RateLimiterNative *, tf_rate_limiter_new(limit, window, bucket_width, seed, flags, &v));
    }

    void set_global_limit(uint64_t limit) { tf_binding_check(tf_rate_limiter_set_global_limit($self, limit)); }
    void set_key_limit(const void *key, size_t key_len, uint64_t limit) {
        tf_binding_check(tf_rate_limiter_set_key_limit($self, key, key_len, limit));
    }
    void set_max_keys(uint64_t max_keys) { tf_binding_check(tf_rate_limiter_set_max_keys($self, max_keys)); }

    /* A decision in one call: returns 1 when allowed, 0 when denied;
     * *remaining and *retry_at as in C (output pointers, like pace's
     * next_allowed). */
    int acquire(const void *key, size_t key_len, uint64_t now, uint64_t n, uint64_t *remaining, uint64_t *retry_at) {
        *remaining = 0;
        *retry_at = 0;
        TF_BINDING_RETURN(int, tf_rate_limiter_acquire($self, key, key_len, now, n, &v, remaining, retry_at));
    }
    int peek(const void *key, size_t key_len, uint64_t now, uint64_t n, uint64_t *remaining, uint64_t *retry_at) {
        *remaining = 0;
        *retry_at = 0;
        TF_BINDING_RETURN(int, tf_rate_limiter_peek($self, key, key_len, now, n, &v, remaining, retry_at));
    }

    /* tf_rate_limiter_acquire_batch: the same as key_count acquire calls in
     * order, keys laid end to end in keys_data (key_lens[i] bytes each),
     * times[i] for key i, one n for all. The answers go to out_allowed (1
     * granted, 0 denied), out_remaining and out_retry_at (as acquire's), one
     * entry per key; returns the number of keys granted (a scalar result
     * also makes Ruby's outputs a flat [granted, allowed, remaining,
     * retry_at]: appended to a void result, the first Array would swallow
     * the others). Every argument is
     * checked before any decision, so a refused call changes nothing: the
     * lengths of times and of the outputs must equal key_count, and n must be
     * >= 1 even for an empty batch (the C call would accept n == 0 with no
     * keys; the bindings refuse a bad n whatever the batch's size). On
     * TF_ERR_OUT_OF_MEMORY the decisions before the failing key stand. */
    uint64_t acquire_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                           const uint64_t *times, size_t time_count, uint64_t n, int32_t *out_allowed,
                           size_t allowed_count, uint64_t *out_remaining, size_t remaining_count,
                           uint64_t *out_retry_at, size_t retry_at_count) {
        if (time_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "acquire_batch: one timestamp per key is needed");
            return 0;
        }
        if (allowed_count != key_count || remaining_count != key_count || retry_at_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "acquire_batch: every output must hold one entry per key");
            return 0;
        }
        if (n == 0) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "acquire_batch: n must be >= 1");
            return 0;
        }
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return 0;
        uint64_t granted = 0;
        if (tf_binding_check(tf_rate_limiter_acquire_batch($self, ptrs, lens, key_count, times, n, (int *)out_allowed,
                                                           out_remaining, out_retry_at)) == TF_OK) {
            for (size_t i = 0; i < key_count; ++i) granted += out_allowed[i] != 0;
        }
        tf_binding_free_split(ptrs, lens, small);
        return granted;
    }

    void refund(const void *key, size_t key_len, uint64_t now, uint64_t n) {
        tf_binding_check(tf_rate_limiter_refund($self, key, key_len, now, n));
    }
    void reset(const void *key, size_t key_len) { tf_binding_check(tf_rate_limiter_reset($self, key, key_len)); }

    /* tf_rate_limiter_get_stats: keys, reclaimed, denied_full,
     * allowed_full, memory (walks every shard); tf_rate_limiter_get_info:
     * limit, window, bucket_width, flags, global_limit, max_keys. */
    tf_rate_limiter_stats *stats() {
        TF_BINDING_GET_STRUCT(tf_rate_limiter_stats, tf_rate_limiter_get_stats($self, &v), TF_RATE_LIMITER_STATS_INIT);
    }
    tf_rate_limiter_info *info() {
        TF_BINDING_GET_STRUCT(tf_rate_limiter_info, tf_rate_limiter_get_info($self, &v), TF_RATE_LIMITER_INFO_INIT);
    }
}

/* ---- RotatingCuckoo ------------------------------------------------------- */

%newobject RotatingCuckooNative::table;
%extend RotatingCuckooNative {
    /* tf_rotating_cuckoo_new with every option (the fields of
     * tf_rotating_cuckoo_options in order; the defaults are the constants
     * TF_BINDING_ROTATING_CUCKOO_*). */
    RotatingCuckooNative(uint64_t table_slots, uint64_t max_memory, uint64_t ttl, double max_occupancy,
                         uint32_t slots_per_bucket, uint32_t max_kicks, uint32_t max_tables, uint32_t seed,
                         uint32_t flags) {
        tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
        o.table_slots = table_slots;
        o.max_memory = max_memory;
        o.ttl = ttl;
        o.max_occupancy = max_occupancy;
        o.slots_per_bucket = slots_per_bucket;
        o.max_kicks = max_kicks;
        o.max_tables = max_tables;
        o.seed = seed;
        o.flags = flags;
        TF_BINDING_RETURN(RotatingCuckooNative *, tf_rotating_cuckoo_new(&o, &v));
    }

    void add(const void *key, size_t key_len, uint64_t now) {
        tf_binding_check(tf_rotating_cuckoo_add($self, key, key_len, now));
    }
    int contains(const void *key, size_t key_len, uint64_t now) {
        TF_BINDING_RETURN(int, tf_rotating_cuckoo_contains($self, key, key_len, now, &v));
    }
    /* 1 when a copy was removed, 0 when the key was not present. */
    int remove(const void *key, size_t key_len, uint64_t now) {
        TF_BINDING_RETURN(int, tf_rotating_cuckoo_remove($self, key, key_len, now, &v));
    }
    /* 1 when the key was present (nothing added), 0 when it was added. */
    int add_if_absent(const void *key, size_t key_len, uint64_t now) {
        TF_BINDING_RETURN(int, tf_rotating_cuckoo_add_if_absent($self, key, key_len, now, &v));
    }

    /* The batches: keys laid end to end in keys_data (key_lens[i] bytes
     * each), one `now` for all, one 1/0 answer per key in out_present;
     * return the number of 1s (TF_BINDING_ANSWER_BATCH). The output's
     * length must equal key_count. */
    uint64_t contains_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                            uint64_t now, int32_t *out_present, size_t present_count) {
        TF_BINDING_ANSWER_BATCH("contains_batch", tf_rotating_cuckoo_contains_batch($self, ptrs, lens, key_count, now,
                                                                                    (int *)out_present));
    }
    /* On TF_ERR_OUT_OF_MEMORY the keys before the failing one were
     * processed (the C call's contract). */
    uint64_t add_if_absent_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens,
                                 size_t key_count, uint64_t now, int32_t *out_present, size_t present_count) {
        TF_BINDING_ANSWER_BATCH("add_if_absent_batch", tf_rotating_cuckoo_add_if_absent_batch($self, ptrs, lens,
                                                                                              key_count, now,
                                                                                              (int *)out_present));
    }

    void clear() { tf_binding_check(tf_rotating_cuckoo_clear($self)); }
    /* tf_rotating_cuckoo_get_info; tf_rotating_cuckoo_get_stats at now;
     * tf_rotating_cuckoo_get_table of table i (0 the newest) at now. */
    tf_rotating_cuckoo_info *info() {
        TF_BINDING_GET_STRUCT(tf_rotating_cuckoo_info, tf_rotating_cuckoo_get_info($self, &v),
                              TF_ROTATING_CUCKOO_INFO_INIT);
    }
    tf_rotating_cuckoo_stats *stats(uint64_t now) {
        TF_BINDING_GET_STRUCT(tf_rotating_cuckoo_stats, tf_rotating_cuckoo_get_stats($self, now, &v),
                              TF_ROTATING_CUCKOO_STATS_INIT);
    }
    tf_rotating_cuckoo_table *table(uint64_t i, uint64_t now) {
        TF_BINDING_GET_STRUCT(tf_rotating_cuckoo_table, tf_rotating_cuckoo_get_table($self, i, now, &v),
                              TF_ROTATING_CUCKOO_TABLE_INIT);
    }
}

/* ---- RecencyWindow -------------------------------------------------------- */

%newobject RecencyWindowNative::level;
%extend RecencyWindowNative {
    /* tf_recency_window_new with every option (the fields of
     * tf_recency_window_options in order; the defaults are the constants
     * TF_BINDING_RECENCY_WINDOW_*, seed and flags 0). */
    RecencyWindowNative(uint64_t window, uint64_t inv_eps, uint64_t block, uint64_t max_memory, double delta,
                        uint32_t mode, uint32_t seed, uint32_t flags) {
        tf_recency_window_options o =
            tf_binding_recency_window_options(window, inv_eps, block, max_memory, delta, mode, seed, flags);
        TF_BINDING_RETURN(RecencyWindowNative *, tf_recency_window_new(&o, &v));
    }
    /* tf_recency_window_memory_for: the bytes a structure of these options
     * would hold (max_memory is not applied). */
    static uint64_t memory_for(uint64_t window, uint64_t inv_eps, uint64_t block, uint64_t max_memory, double delta,
                               uint32_t mode, uint32_t seed, uint32_t flags) {
        tf_recency_window_options o =
            tf_binding_recency_window_options(window, inv_eps, block, max_memory, delta, mode, seed, flags);
        TF_BINDING_RETURN(size_t, tf_recency_window_memory_for(&o, &v));
    }

    void insert(const void *key, size_t key_len) { tf_binding_check(tf_recency_window_insert($self, key, key_len)); }
    /* The recency, or TF_RECENCY_WINDOW_NOT_IN_WINDOW (each language maps
     * it to its own "absent"). */
    uint64_t query(const void *key, size_t key_len) {
        TF_BINDING_RETURN(uint64_t, tf_recency_window_query($self, key, key_len, &v));
    }
    uint64_t insert_report(const void *key, size_t key_len) {
        TF_BINDING_RETURN(uint64_t, tf_recency_window_insert_report($self, key, key_len, &v));
    }

    /* The batches: keys laid end to end in keys_data (key_lens[i] bytes
     * each); the answers, one per key, in out_recency, whose length must
     * equal key_count. Every argument is checked before anything changes. */
    void insert_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count) {
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return;
        tf_binding_check(tf_recency_window_insert_batch($self, ptrs, lens, key_count));
        tf_binding_free_split(ptrs, lens, small);
    }
    void query_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                     uint64_t *out_recency, size_t recency_count) {
        if (recency_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "query_batch: the output must hold one answer per key");
            return;
        }
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return;
        tf_binding_check(tf_recency_window_query_batch($self, ptrs, lens, key_count, out_recency));
        tf_binding_free_split(ptrs, lens, small);
    }
    void insert_report_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                             uint64_t *out_recency, size_t recency_count) {
        if (recency_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "insert_report_batch: the output must hold one answer per key");
            return;
        }
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return;
        tf_binding_check(tf_recency_window_insert_report_batch($self, ptrs, lens, key_count, out_recency));
        tf_binding_free_split(ptrs, lens, small);
    }

    void clear() { tf_binding_check(tf_recency_window_clear($self)); }
    /* tf_recency_window_get_info, _get_stats, and _get_level of level i (0
     * the newest inserts). */
    tf_recency_window_info *info() {
        TF_BINDING_GET_STRUCT(tf_recency_window_info, tf_recency_window_get_info($self, &v),
                              TF_RECENCY_WINDOW_INFO_INIT);
    }
    tf_recency_window_stats *stats() {
        TF_BINDING_GET_STRUCT(tf_recency_window_stats, tf_recency_window_get_stats($self, &v),
                              TF_RECENCY_WINDOW_STATS_INIT);
    }
    tf_recency_window_level *level(uint64_t i) {
        TF_BINDING_GET_STRUCT(tf_recency_window_level, tf_recency_window_get_level($self, i, &v),
                              TF_RECENCY_WINDOW_LEVEL_INIT);
    }
}
