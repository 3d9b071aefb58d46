/* Allocation failure, every structure through one table (issue 17.2), and
 * the bound on what an untrusted blob makes deserialize ask for (17.4).
 *
 * alloc_hook.cpp makes every allocation the library makes (its tables, its
 * rings, and through a replaced global operator new everything else) ask
 * one counter. Each case of the table below is one public call, run as
 * `steps` calls in a row on a structure that `make` builds (or, for a
 * constructor, on nothing); it is swept: for n = 0, 1, 2, ... the case runs
 * afresh with n allocations allowed and every later one refused, until it
 * runs with nothing refused. Each refused run must return
 * TF_ERR_OUT_OF_MEMORY with a message, write no handle, and leave the
 * structure as it was before the failing call (serialized before and
 * after, byte for byte; a batch call: as the batch of the requests it
 * answered); the leak checker of the sanitizer build (LeakSanitizer, at
 * exit) sees anything the failure paths left behind. The count of
 * allocations each call made is printed (docs/reliability.md). */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

/* alloc_hook.cpp */
void ah_refuse_after(long n);
long ah_left(void);
long ah_refused(void);
uint64_t ah_bytes(void);
long ah_pause(void);
void ah_resume(long left);

enum { MAX_STEPS = 4096, BATCH = 512 };

/* One call swept: `call` runs step i on obj (NULL for a constructor, which
 * stores what it made in *made). A batch call stores how many requests it
 * answered in *answered, and `prefix` then replays the first `answered`
 * requests of step i on the structure made afresh and brought to step i
 * (the state a refused batch must leave). */
typedef struct {
    const char *name;
    const tu_structure *st;
    void *(*make)(void);
    tf_status (*call)(void *obj, void **made, int step, size_t *answered);
    int steps;
    tf_status (*prefix)(void *obj, int step, size_t answered);
} af_case;

static unsigned char *hook_paused_snapshot(const tu_structure *st, const void *obj, size_t *len) {
    const long left = ah_pause();
    unsigned char *blob = tu_snapshot(obj, st->serialize, len);
    ah_resume(left);
    return blob;
}

/* Runs one case with n allocations allowed; returns the allocations it
 * made when nothing was refused, else -1. */
static long run_once(const af_case *c, long n) {
    void *obj = c->make ? c->make() : NULL;
    long made_allocs = -1;
    ah_refuse_after(n);
    for (int i = 0; i < c->steps; ++i) {
        size_t before_len = 0;
        unsigned char *before = obj ? hook_paused_snapshot(c->st, obj, &before_len) : NULL;
        int sentinel;
        void *made = &sentinel;
        size_t answered = SIZE_MAX;
        tf_clear_last_error();
        const tf_status st = c->call(obj, &made, i, &answered);
        if (st != TF_OK) {
            ah_refuse_after(-1);
            if (st != TF_ERR_OUT_OF_MEMORY)
                fail_msg("%s: step %d with %ld allocations allowed: %s (%s)", c->name, i, n, tf_status_string(st),
                         tf_last_error_message());
            assert_true(ah_refused() > 0);
            assert_true(strlen(tf_last_error_message()) > 0);
            assert_ptr_equal(made, &sentinel);
            if (c->prefix) {
                /* the same structure made afresh (hidden state included:
                 * the limiter's sweep counters), the steps before this one,
                 * then the requests this one answered */
                void *copy = c->make();
                size_t ignored;
                for (int j = 0; j < i; ++j) assert_int_equal(c->call(copy, NULL, j, &ignored), TF_OK);
                assert_true(answered != SIZE_MAX);
                assert_int_equal(c->prefix(copy, i, answered), TF_OK);
                if (!tu_same_blob(obj, copy, c->st->serialize) && getenv("AF_VERBOSE")) {
                    size_t la, lb;
                    unsigned char *x = tu_snapshot(obj, c->st->serialize, &la);
                    unsigned char *y = tu_snapshot(copy, c->st->serialize, &lb);
                    fprintf(stderr, "len %zu %zu\n", la, lb);
                    for (size_t q = 0; q < la && q < lb; ++q)
                        if (x[q] != y[q]) fprintf(stderr, "diff @%zu: %02x %02x\n", q, x[q], y[q]);
                }
                if (!tu_same_blob(obj, copy, c->st->serialize))
                    fail_msg("%s: step %d refused after %zu requests is not their batch", c->name, i, answered);
                c->st->free(copy);
            } else if (obj) {
                tu_assert_blob(obj, c->st->serialize, before, before_len);
            }
            free(before);
            if (obj) c->st->free(obj);
            return -1;
        }
        if (made != &sentinel) {
            assert_null(obj);
            assert_non_null(made);
            c->st->free(made);
        }
        free(before);
    }
    const long left = ah_left(), refused = ah_refused();
    ah_refuse_after(-1);
    if (refused == 0) made_allocs = n - left;
    if (obj) c->st->free(obj);
    return made_allocs;
}

static long sweep(const af_case *c) {
    const int verbose = getenv("AF_VERBOSE") != NULL;
    for (long n = 0;; ++n) {
        const long made = run_once(c, n);
        if (verbose) fprintf(stderr, "%s: n=%ld -> %ld (refused %ld)\n", c->name, n, made, ah_refused());
        if (made >= 0) {
            /* fewer than n when a process-wide cache (a sizing model's
             * memo) was filled by the refused runs before */
            assert_true(made <= n);
            return n;
        }
        if (n > 1000000) fail_msg("%s: still refused after %ld allocations", c->name, n);
    }
}

static void run_cases(const af_case *cases, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        const long allocs = sweep(&cases[i]);
        printf("# %-40s %3d call%s  %5ld allocations swept\n", cases[i].name, cases[i].steps,
               cases[i].steps == 1 ? " " : "s", allocs);
    }
}

#define AF_CASES(...)                                        \
    do {                                                     \
        const af_case cases_[] = {__VA_ARGS__};              \
        run_cases(cases_, sizeof cases_ / sizeof cases_[0]); \
    } while (0)

static tu_key key_of(uint64_t id) { return tu_make_key(0xA1, id); }

/* A batch of BATCH keys from id `first`. */
typedef struct {
    tu_key k[BATCH];
    const void *p[BATCH];
    size_t len[BATCH];
    uint64_t times[BATCH];
} af_batch;
static af_batch *batch_of(uint64_t first, uint64_t now) {
    static af_batch b;
    for (size_t i = 0; i < BATCH; ++i) {
        b.k[i] = key_of(first + i);
        b.p[i] = b.k[i].b;
        b.len[i] = sizeof b.k[i].b;
        b.times[i] = now + i;
    }
    return &b;
}

/* A blob of what `make` builds (for the deserialize cases). */
static unsigned char *blob_of(const tu_structure *st, void *(*make)(void), size_t *len) {
    void *obj = make();
    unsigned char *blob = tu_snapshot(obj, st->serialize, len);
    st->free(obj);
    return blob;
}

/* ---- the recency sketch ---- */

static void *rs_make(void) {
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(512, 4, 7, 0, &s), TF_OK);
    for (uint64_t i = 0; i < 300; ++i) {
        tu_key k = key_of(i);
        assert_int_equal(tf_recency_sketch_update(s, k.b, sizeof k.b, 10 + i), TF_OK);
    }
    return s;
}
static void *rs_make_blocked(void) {
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(512, 4, 7, TF_RECENCY_SKETCH_BLOCKED, &s), TF_OK);
    return s;
}
static unsigned char *rs_blob;
static size_t rs_blob_len;
static tf_status rs_new(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_recency_sketch_new(1000, 4, 1, i % 2 ? TF_RECENCY_SKETCH_BLOCKED : 0, (tf_recency_sketch **)made);
}
static tf_status rs_new_for(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_recency_sketch_new_for(10000, 0.01, 1, TF_RECENCY_SKETCH_CONCURRENT, (tf_recency_sketch **)made);
}
static tf_status rs_deserialize(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_recency_sketch_deserialize(rs_blob, rs_blob_len, NULL, (tf_recency_sketch **)made);
}
static tf_status rs_update(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(1000 + (uint64_t)i);
    return tf_recency_sketch_update(o, k.b, sizeof k.b, 500 + (uint64_t)i);
}
static tf_status rs_update_batch(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    af_batch *b = batch_of(2000 + (uint64_t)i * BATCH, 600);
    return tf_recency_sketch_update_batch(o, b->p, b->len, BATCH, b->times);
}
static tf_status rs_pace(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i % 7);
    int granted;
    uint64_t next;
    return tf_recency_sketch_pace(o, k.b, sizeof k.b, 700 + (uint64_t)i, 3, &granted, &next);
}
static tf_status rs_ttl_insert(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i);
    return tf_recency_sketch_ttl_insert(o, k.b, sizeof k.b, 800 + (uint64_t)i, 50);
}
static tf_status rs_merge(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    const long left = ah_pause();
    tf_recency_sketch *src = rs_make();
    ah_resume(left);
    const tf_status st = tf_recency_sketch_merge(o, src);
    tf_recency_sketch_free(src);
    return st;
}
static tf_status rs_clear(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    return tf_recency_sketch_clear(o);
}
static tf_status rs_reads(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    tu_key k = key_of(3);
    uint64_t t;
    double p;
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    size_t bytes, size, written;
    unsigned char buf[32];
    tf_status st;
    if ((st = tf_recency_sketch_query(o, k.b, sizeof k.b, &t)) != TF_OK) return st;
    if ((st = tf_recency_sketch_error_estimate(o, 100, &p)) != TF_OK) return st;
    if ((st = tf_recency_sketch_get_info(o, &info)) != TF_OK) return st;
    if ((st = tf_recency_sketch_memory(o, &bytes)) != TF_OK) return st;
    if ((st = tf_recency_sketch_serialized_size(o, &size)) != TF_OK) return st;
    st = tf_recency_sketch_serialize(o, buf, sizeof buf, &written);
    return st == TF_ERR_BUFFER_TOO_SMALL ? TF_OK : st;
}

static void test_recency_sketch(void **state) {
    (void)state;
    rs_blob = blob_of(&tu_recency_sketch, rs_make, &rs_blob_len);
    const tu_structure *st = &tu_recency_sketch;
    AF_CASES({"tf_recency_sketch_new (both layouts)", st, NULL, rs_new, 2, NULL},
             {"tf_recency_sketch_new_for", st, NULL, rs_new_for, 1, NULL},
             {"tf_recency_sketch_deserialize", st, NULL, rs_deserialize, 1, NULL},
             {"tf_recency_sketch_update", st, rs_make, rs_update, 100, NULL},
             {"tf_recency_sketch_update (blocked)", st, rs_make_blocked, rs_update, 100, NULL},
             {"tf_recency_sketch_update_batch", st, rs_make, rs_update_batch, 2, NULL},
             {"tf_recency_sketch_pace", st, rs_make, rs_pace, 50, NULL},
             {"tf_recency_sketch_ttl_insert", st, rs_make, rs_ttl_insert, 50, NULL},
             {"tf_recency_sketch_merge", st, rs_make, rs_merge, 1, NULL},
             {"tf_recency_sketch_clear", st, rs_make, rs_clear, 1, NULL},
             {"tf_recency_sketch reads, serialize", st, rs_make, rs_reads, 1, NULL});
    free(rs_blob);
}

/* ---- the Bloom filters ---- */

static void *ab_make(void) {
    tf_age_bloom *f = NULL;
    assert_int_equal(tf_age_bloom_new_for(200, 0.01, 3, 0, &f), TF_OK);
    for (uint64_t i = 0; i < 150; ++i) {
        tu_key k = key_of(i);
        assert_int_equal(tf_age_bloom_add(f, k.b, sizeof k.b), TF_OK);
    }
    return f;
}
static void *ab_make_blocked(void) {
    tf_age_bloom *f = NULL;
    assert_int_equal(tf_age_bloom_new_for(200, 0.01, 3, TF_AGE_BLOOM_BLOCKED, &f), TF_OK);
    for (uint64_t i = 0; i < 150; ++i) {
        tu_key k = key_of(i);
        assert_int_equal(tf_age_bloom_add(f, k.b, sizeof k.b), TF_OK);
    }
    return f;
}
static unsigned char *ab_blob[2];
static size_t ab_blob_len[2];
static tf_status ab_new(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    return tf_age_bloom_new(4, 3, 1024, 1, i % 2 ? TF_AGE_BLOOM_BLOCKED : 0, (tf_age_bloom **)made);
}
static tf_status ab_new_for(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    return tf_age_bloom_new_for(1000, 0.001, 1, i % 2 ? TF_AGE_BLOOM_BLOCKED : 0, (tf_age_bloom **)made);
}
static tf_status ab_deserialize(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    return tf_age_bloom_deserialize(ab_blob[i % 2], ab_blob_len[i % 2], NULL, (tf_age_bloom **)made);
}
static tf_status ab_add(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(1000 + (uint64_t)i);
    return tf_age_bloom_add(o, k.b, sizeof k.b);
}
static tf_status ab_add_if_absent(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i * 3);
    int was;
    return tf_age_bloom_add_if_absent(o, k.b, sizeof k.b, &was);
}
/* 512 new keys a step: the generations rotate within a batch */
static tf_status ab_add_batch(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    af_batch *b = batch_of(3000 + (uint64_t)i * BATCH, 0);
    return tf_age_bloom_add_batch(o, b->p, b->len, BATCH);
}
/* batches that overlap the keys added before and each other */
static tf_status ab_add_if_absent_batch(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    af_batch *b = batch_of((uint64_t)i * 300, 0);
    int was[BATCH];
    return tf_age_bloom_add_if_absent_batch(o, b->p, b->len, BATCH, was);
}
static tf_status ab_clear(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    return tf_age_bloom_clear(o);
}
static tf_status ab_reads(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    tu_key k = key_of(3);
    int present;
    tf_age_bloom_stats stats = TF_AGE_BLOOM_STATS_INIT;
    tf_age_bloom_info info = TF_AGE_BLOOM_INFO_INIT;
    size_t bytes, size, written;
    unsigned char buf[32];
    tf_status st;
    af_batch *b = batch_of(0, 0);
    int answers[BATCH];
    if ((st = tf_age_bloom_contains(o, k.b, sizeof k.b, &present)) != TF_OK) return st;
    if ((st = tf_age_bloom_contains_batch(o, b->p, b->len, BATCH, answers)) != TF_OK) return st;
    if ((st = tf_age_bloom_get_stats(o, &stats)) != TF_OK) return st;
    if ((st = tf_age_bloom_get_info(o, &info)) != TF_OK) return st;
    if ((st = tf_age_bloom_memory(o, &bytes)) != TF_OK) return st;
    if ((st = tf_age_bloom_serialized_size(o, &size)) != TF_OK) return st;
    st = tf_age_bloom_serialize(o, buf, sizeof buf, &written);
    return st == TF_ERR_BUFFER_TOO_SMALL ? TF_OK : st;
}

static void *tb_make(void) {
    tf_time_bloom *f = NULL;
    assert_int_equal(tf_time_bloom_new_for(50, 0.01, 1000, 3, 0, &f), TF_OK);
    for (uint64_t i = 0; i < 40; ++i) {
        tu_key k = key_of(i);
        assert_int_equal(tf_time_bloom_add(f, k.b, sizeof k.b, 10 + i), TF_OK);
    }
    return f;
}
static unsigned char *tb_blob;
static size_t tb_blob_len;
static tf_status tb_new(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_time_bloom_new(4, 3, 1024, 1000, 1, 0, (tf_time_bloom **)made);
}
static tf_status tb_new_for(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_time_bloom_new_for(1000, 0.001, 60000, 1, 0, (tf_time_bloom **)made);
}
static tf_status tb_deserialize(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_time_bloom_deserialize(tb_blob, tb_blob_len, NULL, (tf_time_bloom **)made);
}
/* 10 keys per time unit over 3 spans: the filter grows new slices */
static tf_status tb_add(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(1000 + (uint64_t)i);
    return tf_time_bloom_add(o, k.b, sizeof k.b, 100 + (uint64_t)i / 10 * 10);
}
static tf_status tb_add_if_absent(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i);
    int was;
    return tf_time_bloom_add_if_absent(o, k.b, sizeof k.b, 100 + (uint64_t)i / 10 * 10, &was);
}
/* A refused batch of the time-limited filter names the key it stopped at
 * in its message ("key i of the batch"): the requests it answered. */
static size_t tb_answered(tf_status st) {
    size_t done = SIZE_MAX;
    if (st != TF_OK && sscanf(tf_last_error_message(), "key %zu of the batch", &done) != 1)
        fail_msg("a refused batch's message does not name its key: %s", tf_last_error_message());
    return done;
}
/* 512 new keys a step at one time, the time moving 100 a step: the filter
 * grows new slices within a batch */
static tf_status tb_add_batch_call(void *o, int step, size_t count) {
    af_batch *b = batch_of(20000 + (uint64_t)step * BATCH, 0);
    return tf_time_bloom_add_batch(o, b->p, b->len, count, 100 + (uint64_t)step * 100);
}
static tf_status tb_add_batch(void *o, void **m, int i, size_t *answered) {
    (void)m;
    const tf_status st = tb_add_batch_call(o, i, BATCH);
    *answered = tb_answered(st);
    return st;
}
static tf_status tb_add_batch_prefix(void *o, int step, size_t answered) {
    return answered == 0 ? TF_OK : tb_add_batch_call(o, step, answered);
}
/* batches that overlap the keys added before and each other; a refused
 * one wrote the answers of the keys before the one it names, no other */
static int tb_was[BATCH];
static tf_status tb_add_if_absent_batch_call(void *o, int step, size_t count) {
    af_batch *b = batch_of((uint64_t)step * 300, 0);
    return tf_time_bloom_add_if_absent_batch(o, b->p, b->len, count, 100 + (uint64_t)step * 100, tb_was);
}
static tf_status tb_add_if_absent_batch(void *o, void **m, int i, size_t *answered) {
    (void)m;
    for (size_t j = 0; j < BATCH; ++j) tb_was[j] = -1;
    const tf_status st = tb_add_if_absent_batch_call(o, i, BATCH);
    *answered = tb_answered(st);
    if (st != TF_OK)
        for (size_t j = 0; j < BATCH; ++j) assert_true((tb_was[j] != -1) == (j < *answered));
    return st;
}
static tf_status tb_add_if_absent_batch_prefix(void *o, int step, size_t answered) {
    return answered == 0 ? TF_OK : tb_add_if_absent_batch_call(o, step, answered);
}
static tf_status tb_clear(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    return tf_time_bloom_clear(o);
}
static tf_status tb_reads(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    tu_key k = key_of(3);
    int present;
    uint64_t bits;
    tf_time_bloom_stats stats = TF_TIME_BLOOM_STATS_INIT;
    tf_time_bloom_info info = TF_TIME_BLOOM_INFO_INIT;
    size_t bytes, size, written;
    unsigned char buf[32];
    tf_status st;
    af_batch *b = batch_of(0, 0);
    int answers[BATCH];
    if ((st = tf_time_bloom_contains(o, k.b, sizeof k.b, 60, &present)) != TF_OK) return st;
    if ((st = tf_time_bloom_contains_batch(o, b->p, b->len, BATCH, 60, answers)) != TF_OK) return st;
    if ((st = tf_time_bloom_get_stats(o, 60, &stats)) != TF_OK) return st;
    if ((st = tf_time_bloom_slice_bits(o, 0, &bits)) != TF_OK) return st;
    if ((st = tf_time_bloom_get_info(o, &info)) != TF_OK) return st;
    if ((st = tf_time_bloom_memory(o, &bytes)) != TF_OK) return st;
    if ((st = tf_time_bloom_serialized_size(o, &size)) != TF_OK) return st;
    st = tf_time_bloom_serialize(o, buf, sizeof buf, &written);
    return st == TF_ERR_BUFFER_TOO_SMALL ? TF_OK : st;
}

static void test_bloom_filters(void **state) {
    (void)state;
    /* The blocked layout's sizing model is computed once per process and
     * kept (14,499 allocations the first time: sweeping each of them would
     * take 14,499 runs of that model); it is made here, before the sweep,
     * which then covers what every later call allocates. */
    tf_age_bloom *warm = NULL;
    assert_int_equal(tf_age_bloom_new_for(1000, 0.001, 1, TF_AGE_BLOOM_BLOCKED, &warm), TF_OK);
    tf_age_bloom_free(warm);
    ab_blob[0] = blob_of(&tu_age_bloom, ab_make, &ab_blob_len[0]);
    ab_blob[1] = blob_of(&tu_age_bloom, ab_make_blocked, &ab_blob_len[1]);
    tb_blob = blob_of(&tu_time_bloom, tb_make, &tb_blob_len);
    const tu_structure *ab = &tu_age_bloom, *tb = &tu_time_bloom;
    AF_CASES(
        {"tf_age_bloom_new (both layouts)", ab, NULL, ab_new, 2, NULL},
        {"tf_age_bloom_new_for (both layouts)", ab, NULL, ab_new_for, 2, NULL},
        {"tf_age_bloom_deserialize (both layouts)", ab, NULL, ab_deserialize, 2, NULL},
        {"tf_age_bloom_add (generations rotate)", ab, ab_make, ab_add, 600, NULL},
        {"tf_age_bloom_add (blocked)", ab, ab_make_blocked, ab_add, 600, NULL},
        {"tf_age_bloom_add_if_absent", ab, ab_make, ab_add_if_absent, 300, NULL},
        {"tf_age_bloom_add_batch (generations rotate)", ab, ab_make, ab_add_batch, 4, NULL},
        {"tf_age_bloom_add_batch (blocked)", ab, ab_make_blocked, ab_add_batch, 4, NULL},
        {"tf_age_bloom_add_if_absent_batch", ab, ab_make, ab_add_if_absent_batch, 4, NULL},
        {"tf_age_bloom_add_if_absent_batch (blocked)", ab, ab_make_blocked, ab_add_if_absent_batch, 4, NULL},
        {"tf_age_bloom_clear", ab, ab_make, ab_clear, 1, NULL},
        {"tf_age_bloom reads, serialize", ab, ab_make, ab_reads, 1, NULL},
        {"tf_age_bloom reads, serialize (blocked)", ab, ab_make_blocked, ab_reads, 1, NULL},
        {"tf_time_bloom_new", tb, NULL, tb_new, 1, NULL}, {"tf_time_bloom_new_for", tb, NULL, tb_new_for, 1, NULL},
        {"tf_time_bloom_deserialize", tb, NULL, tb_deserialize, 1, NULL},
        {"tf_time_bloom_add (slices grow)", tb, tb_make, tb_add, 3000, NULL},
        {"tf_time_bloom_add_if_absent", tb, tb_make, tb_add_if_absent, 1000, NULL},
        {"tf_time_bloom_add_batch (slices grow)", tb, tb_make, tb_add_batch, 6, tb_add_batch_prefix},
        {"tf_time_bloom_add_if_absent_batch", tb, tb_make, tb_add_if_absent_batch, 6, tb_add_if_absent_batch_prefix},
        {"tf_time_bloom_clear", tb, tb_make, tb_clear, 1, NULL},
        {"tf_time_bloom reads, serialize", tb, tb_make, tb_reads, 1, NULL});
    free(ab_blob[0]);
    free(ab_blob[1]);
    free(tb_blob);
}

/* ---- the rate limiter ---- */

static void *rl_make_flags(uint32_t flags) {
    tf_rate_limiter *l = NULL;
    assert_int_equal(tf_rate_limiter_new(1000, 100, 10, 5, flags, &l), TF_OK);
    for (uint64_t i = 0; i < 20; ++i) {
        tu_key k = key_of(i);
        int allowed;
        assert_int_equal(tf_rate_limiter_acquire(l, k.b, sizeof k.b, 5 + i, 1, &allowed, NULL, NULL), TF_OK);
    }
    return l;
}
static void *rl_make(void) { return rl_make_flags(0); }
static void *rl_make_exact(void) { return rl_make_flags(TF_RATE_LIMITER_EXACT); }
static unsigned char *rl_blob[2];
static size_t rl_blob_len[2];
static tf_status rl_new(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    return tf_rate_limiter_new(100, 1000, 10, 1, i % 2 ? TF_RATE_LIMITER_EXACT : 0, (tf_rate_limiter **)made);
}
static tf_status rl_deserialize(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    return tf_rate_limiter_deserialize(rl_blob[i % 2], rl_blob_len[i % 2], NULL, (tf_rate_limiter **)made);
}
/* a new key each step: the key table grows */
static tf_status rl_acquire_new_keys(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(1000 + (uint64_t)i);
    int allowed;
    uint64_t rem, retry;
    return tf_rate_limiter_acquire(o, k.b, sizeof k.b, 50, 1, &allowed, &rem, &retry);
}
/* one key granted again and again: the exact mode's ring of grant times grows */
static tf_status rl_acquire_one_key(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(3);
    int allowed;
    return tf_rate_limiter_acquire(o, k.b, sizeof k.b, 50 + (uint64_t)i / 8, 1, &allowed, NULL, NULL);
}
/* a bound of 150 keys and a global limit: the table is full, and a new
 * key reclaims idle ones to get in (or is denied); the exact global
 * window's ring grows */
static void *rl_make_bounded_flags(uint32_t flags) {
    tf_rate_limiter *l = rl_make_flags(flags);
    assert_int_equal(tf_rate_limiter_set_global_limit(l, 100000), TF_OK);
    assert_int_equal(tf_rate_limiter_set_max_keys(l, 150), TF_OK);
    return l;
}
static void *rl_make_bounded(void) { return rl_make_bounded_flags(0); }
static void *rl_make_bounded_exact(void) { return rl_make_bounded_flags(TF_RATE_LIMITER_EXACT); }
/* 250 keys in turn, the time moving by one a step: each key is idle (a
 * window is 100) when it comes again */
static tf_status rl_acquire_idle_keys(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(1000 + (uint64_t)i % 250);
    int allowed;
    return tf_rate_limiter_acquire(o, k.b, sizeof k.b, 50 + (uint64_t)i, 1, &allowed, NULL, NULL);
}
static int rl_allowed[BATCH];
static tf_status rl_batch_call(void *o, int step, size_t count) {
    /* keys repeat after 300, the time moves by one a request: a key goes
     * idle 100 requests after its last, and the requests for new keys
     * reclaim idle ones (their own before they are asked again) */
    af_batch *b = batch_of(5000 + (uint64_t)step * 300, 60);
    for (size_t j = 0; j < BATCH; ++j) b->p[j] = b->k[j % 300].b;
    return tf_rate_limiter_acquire_batch(o, b->p, b->len, count, b->times, 1, rl_allowed, NULL, NULL);
}
static tf_status rl_acquire_batch(void *o, void **m, int i, size_t *answered) {
    (void)m;
    for (size_t j = 0; j < BATCH; ++j) rl_allowed[j] = -1;
    const tf_status st = rl_batch_call(o, i, BATCH);
    size_t n = 0;
    while (n < BATCH && rl_allowed[n] != -1) n++;
    *answered = n;
    return st;
}
static tf_status rl_acquire_batch_prefix(void *o, int step, size_t answered) {
    return answered == 0 ? TF_OK : rl_batch_call(o, step, answered);
}
static tf_status rl_set_key_limit(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(100 + (uint64_t)i);
    return tf_rate_limiter_set_key_limit(o, k.b, sizeof k.b, 10 + (uint64_t)i);
}
static tf_status rl_set_global_limit(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    return tf_rate_limiter_set_global_limit(o, i == 2 ? 0 : 5000 + (uint64_t)i);
}
static tf_status rl_set_max_keys(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    return tf_rate_limiter_set_max_keys(o, i == 0 ? 10 : 0);
}
static tf_status rl_refund_reset(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i % 20);
    return i % 2 ? tf_rate_limiter_reset(o, k.b, sizeof k.b) : tf_rate_limiter_refund(o, k.b, sizeof k.b, 40, 1);
}
static tf_status rl_reads(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    tu_key k = key_of(3);
    int allowed;
    tf_rate_limiter_stats stats = TF_RATE_LIMITER_STATS_INIT;
    tf_rate_limiter_info info = TF_RATE_LIMITER_INFO_INIT;
    size_t bytes, size, written;
    tf_status st;
    if ((st = tf_rate_limiter_peek(o, k.b, sizeof k.b, 60, 1, &allowed, NULL, NULL)) != TF_OK) return st;
    if ((st = tf_rate_limiter_get_stats(o, &stats)) != TF_OK) return st;
    if ((st = tf_rate_limiter_get_info(o, &info)) != TF_OK) return st;
    if ((st = tf_rate_limiter_memory(o, &bytes)) != TF_OK) return st;
    return tf_rate_limiter_serialized_size(o, &size);
    (void)written;
}
/* serialize into a buffer of the full size: the keys are sorted first */
static tf_status rl_serialize(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    size_t size = 0, written = 0;
    tf_status st = tf_rate_limiter_serialized_size(o, &size);
    if (st != TF_OK) return st;
    unsigned char *buf = malloc(size);
    st = tf_rate_limiter_serialize(o, buf, size, &written);
    free(buf);
    return st;
}
static void *rl_make_overrides(void) {
    tf_rate_limiter *l = rl_make();
    for (uint64_t i = 0; i < 5; ++i) {
        tu_key k = key_of(100 + i);
        assert_int_equal(tf_rate_limiter_set_key_limit(l, k.b, sizeof k.b, 3), TF_OK);
    }
    return l;
}

static void test_rate_limiter(void **state) {
    (void)state;
    rl_blob[0] = blob_of(&tu_rate_limiter, rl_make_overrides, &rl_blob_len[0]);
    rl_blob[1] = blob_of(&tu_rate_limiter, rl_make_exact, &rl_blob_len[1]);
    const tu_structure *st = &tu_rate_limiter;
    AF_CASES(
        {"tf_rate_limiter_new (both modes)", st, NULL, rl_new, 2, NULL},
        {"tf_rate_limiter_deserialize (both modes)", st, NULL, rl_deserialize, 2, NULL},
        {"tf_rate_limiter_acquire (new keys)", st, rl_make, rl_acquire_new_keys, 600, NULL},
        {"tf_rate_limiter_acquire (new keys, exact)", st, rl_make_exact, rl_acquire_new_keys, 600, NULL},
        {"tf_rate_limiter_acquire (one key, exact)", st, rl_make_exact, rl_acquire_one_key, 900, NULL},
        {"tf_rate_limiter_acquire_batch", st, rl_make, rl_acquire_batch, 2, rl_acquire_batch_prefix},
        {"tf_rate_limiter_acquire_batch (exact)", st, rl_make_exact, rl_acquire_batch, 2, rl_acquire_batch_prefix},
        {"tf_rate_limiter_acquire (bounded)", st, rl_make_bounded, rl_acquire_idle_keys, 600, NULL},
        {"tf_rate_limiter_acquire (bounded, exact)", st, rl_make_bounded_exact, rl_acquire_idle_keys, 600, NULL},
        {"tf_rate_limiter_acquire_batch (bounded)", st, rl_make_bounded, rl_acquire_batch, 2, rl_acquire_batch_prefix},
        {"tf_rate_limiter_acquire_batch (bounded, exact)", st, rl_make_bounded_exact, rl_acquire_batch, 2,
         rl_acquire_batch_prefix},
        {"tf_rate_limiter_set_key_limit", st, rl_make, rl_set_key_limit, 60, NULL},
        {"tf_rate_limiter_set_global_limit", st, rl_make, rl_set_global_limit, 3, NULL},
        {"tf_rate_limiter_set_max_keys", st, rl_make, rl_set_max_keys, 2, NULL},
        {"tf_rate_limiter_refund, _reset", st, rl_make_exact, rl_refund_reset, 40, NULL},
        {"tf_rate_limiter reads", st, rl_make_overrides, rl_reads, 1, NULL},
        {"tf_rate_limiter_serialize", st, rl_make_overrides, rl_serialize, 1, NULL},
        {"tf_rate_limiter_serialize (exact)", st, rl_make_exact, rl_serialize, 1, NULL});
    free(rl_blob[0]);
    free(rl_blob[1]);
}

/* ---- the rotating cuckoo filter ---- */

static void *ck_make_flags(uint32_t flags) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.table_slots = 64;
    o.max_tables = 6;
    o.flags = flags;
    tf_rotating_cuckoo *f = NULL;
    assert_int_equal(tf_rotating_cuckoo_new(&o, &f), TF_OK);
    for (uint64_t i = 0; i < 30; ++i) {
        tu_key k = key_of(i);
        assert_int_equal(tf_rotating_cuckoo_add(f, k.b, sizeof k.b, 5), TF_OK);
    }
    return f;
}
static void *ck_make(void) { return ck_make_flags(0); }
static void *ck_make_three(void) { return ck_make_flags(TF_ROTATING_CUCKOO_THREE_WAY); }
static void *ck_make_ttl(void) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.table_slots = 64;
    o.ttl = 100;
    tf_rotating_cuckoo *f = NULL;
    assert_int_equal(tf_rotating_cuckoo_new(&o, &f), TF_OK);
    return f;
}
static unsigned char *ck_blob;
static size_t ck_blob_len;
static tf_status ck_new(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    tf_rotating_cuckoo_options opt = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    opt.flags = i % 2 ? TF_ROTATING_CUCKOO_THREE_WAY : 0;
    return tf_rotating_cuckoo_new(&opt, (tf_rotating_cuckoo **)made);
}
static tf_status ck_deserialize(void *o, void **made, int i, size_t *a) {
    (void)o, (void)i, (void)a;
    return tf_rotating_cuckoo_deserialize(ck_blob, ck_blob_len, NULL, (tf_rotating_cuckoo **)made);
}
/* tables fill and rotate (at most 6: the oldest dropped) */
static tf_status ck_add(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of(1000 + (uint64_t)i);
    return tf_rotating_cuckoo_add(o, k.b, sizeof k.b, 6 + (uint64_t)i);
}
static tf_status ck_add_if_absent(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i);
    int was;
    return tf_rotating_cuckoo_add_if_absent(o, k.b, sizeof k.b, 6 + (uint64_t)i, &was);
}
static int ck_was[BATCH];
static tf_status ck_batch_call(void *o, int step, size_t count) {
    af_batch *b = batch_of(9000 + (uint64_t)step * 256, 0);
    return tf_rotating_cuckoo_add_if_absent_batch(o, b->p, b->len, count, 10 + (uint64_t)step, ck_was);
}
static tf_status ck_add_if_absent_batch(void *o, void **m, int i, size_t *answered) {
    (void)m;
    for (size_t j = 0; j < BATCH; ++j) ck_was[j] = -1;
    const tf_status st = ck_batch_call(o, i, BATCH);
    size_t n = 0;
    while (n < BATCH && ck_was[n] != -1) n++;
    *answered = n;
    return st;
}
static tf_status ck_add_if_absent_batch_prefix(void *o, int step, size_t answered) {
    return answered == 0 ? TF_OK : ck_batch_call(o, step, answered);
}
static tf_status ck_remove(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i);
    int removed;
    return tf_rotating_cuckoo_remove(o, k.b, sizeof k.b, 6, &removed);
}
static tf_status ck_clear(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    return tf_rotating_cuckoo_clear(o);
}
static tf_status ck_reads(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    af_batch *b = batch_of(0, 0);
    int present[BATCH];
    tf_rotating_cuckoo_stats stats = TF_ROTATING_CUCKOO_STATS_INIT;
    tf_rotating_cuckoo_table table = TF_ROTATING_CUCKOO_TABLE_INIT;
    tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
    size_t bytes, size, written;
    unsigned char buf[32];
    tf_status st;
    if ((st = tf_rotating_cuckoo_contains(o, b->p[0], b->len[0], 7, present)) != TF_OK) return st;
    if ((st = tf_rotating_cuckoo_contains_batch(o, b->p, b->len, BATCH, 7, present)) != TF_OK) return st;
    if ((st = tf_rotating_cuckoo_get_stats(o, 7, &stats)) != TF_OK) return st;
    if ((st = tf_rotating_cuckoo_get_table(o, 0, 7, &table)) != TF_OK) return st;
    if ((st = tf_rotating_cuckoo_get_info(o, &info)) != TF_OK) return st;
    if ((st = tf_rotating_cuckoo_memory(o, &bytes)) != TF_OK) return st;
    if ((st = tf_rotating_cuckoo_serialized_size(o, &size)) != TF_OK) return st;
    st = tf_rotating_cuckoo_serialize(o, buf, sizeof buf, &written);
    return st == TF_ERR_BUFFER_TOO_SMALL ? TF_OK : st;
}
/* time rotation: the ttl passes between adds */
static tf_status ck_add_ttl(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i);
    return tf_rotating_cuckoo_add(o, k.b, sizeof k.b, 1 + (uint64_t)i * 7);
}

static void test_rotating_cuckoo(void **state) {
    (void)state;
    ck_blob = blob_of(&tu_rotating_cuckoo, ck_make, &ck_blob_len);
    const tu_structure *st = &tu_rotating_cuckoo;
    AF_CASES({"tf_rotating_cuckoo_new (both layouts)", st, NULL, ck_new, 2, NULL},
             {"tf_rotating_cuckoo_deserialize", st, NULL, ck_deserialize, 1, NULL},
             {"tf_rotating_cuckoo_add (tables rotate)", st, ck_make, ck_add, 600, NULL},
             {"tf_rotating_cuckoo_add (three-way)", st, ck_make_three, ck_add, 600, NULL},
             {"tf_rotating_cuckoo_add (ttl rotation)", st, ck_make_ttl, ck_add_ttl, 300, NULL},
             {"tf_rotating_cuckoo_add_if_absent", st, ck_make, ck_add_if_absent, 400, NULL},
             {"tf_rotating_cuckoo_add_if_absent_batch", st, ck_make, ck_add_if_absent_batch, 2,
              ck_add_if_absent_batch_prefix},
             {"tf_rotating_cuckoo_remove", st, ck_make, ck_remove, 40, NULL},
             {"tf_rotating_cuckoo_clear", st, ck_make, ck_clear, 1, NULL},
             {"tf_rotating_cuckoo reads", st, ck_make, ck_reads, 1, NULL});
    free(ck_blob);
}

/* ---- the recency window ---- */

static void *rw_make_mode(uint32_t mode) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.window = 300;
    o.inv_eps = 4;
    o.mode = mode;
    if (mode == TF_RECENCY_WINDOW_OPTIMAL_SM) o.block = 10;
    tf_recency_window *w = NULL;
    assert_int_equal(tf_recency_window_new(&o, &w), TF_OK);
    for (uint64_t i = 0; i < 500; ++i) {
        tu_key k = key_of(i % 350);
        assert_int_equal(tf_recency_window_insert(w, k.b, sizeof k.b), TF_OK);
    }
    return w;
}
static void *rw_make(void) { return rw_make_mode(TF_RECENCY_WINDOW_HISTORICAL); }
static void *rw_make_exact(void) { return rw_make_mode(TF_RECENCY_WINDOW_EXACT); }
static void *rw_make_sm(void) { return rw_make_mode(TF_RECENCY_WINDOW_OPTIMAL_SM); }
static unsigned char *rw_blob[3];
static size_t rw_blob_len[3];
static tf_status rw_new(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    tf_recency_window_options opt = TF_RECENCY_WINDOW_OPTIONS_INIT;
    opt.mode = (uint32_t)i;
    if (opt.mode == TF_RECENCY_WINDOW_OPTIMAL_SM) opt.block = 64;
    return tf_recency_window_new(&opt, (tf_recency_window **)made);
}
static tf_status rw_deserialize(void *o, void **made, int i, size_t *a) {
    (void)o, (void)a;
    return tf_recency_window_deserialize(rw_blob[i], rw_blob_len[i], NULL, (tf_recency_window **)made);
}
static tf_status rw_insert_report(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    tu_key k = key_of((uint64_t)i % 400);
    uint64_t prev;
    return i % 2 ? tf_recency_window_insert(o, k.b, sizeof k.b)
                 : tf_recency_window_insert_report(o, k.b, sizeof k.b, &prev);
}
static tf_status rw_batches(void *o, void **m, int i, size_t *a) {
    (void)m, (void)a;
    af_batch *b = batch_of((uint64_t)i * 100, 0);
    uint64_t out[BATCH];
    return i % 2 ? tf_recency_window_insert_batch(o, b->p, b->len, BATCH)
                 : tf_recency_window_insert_report_batch(o, b->p, b->len, BATCH, out);
}
static tf_status rw_clear(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    return tf_recency_window_clear(o);
}
static tf_status rw_reads(void *o, void **m, int i, size_t *a) {
    (void)m, (void)i, (void)a;
    af_batch *b = batch_of(0, 0);
    uint64_t out[BATCH];
    tf_recency_window_stats stats = TF_RECENCY_WINDOW_STATS_INIT;
    tf_recency_window_level level = TF_RECENCY_WINDOW_LEVEL_INIT;
    tf_recency_window_info info = TF_RECENCY_WINDOW_INFO_INIT;
    tf_recency_window_options opt = TF_RECENCY_WINDOW_OPTIONS_INIT;
    size_t bytes, size, written;
    unsigned char buf[32];
    tf_status st;
    if ((st = tf_recency_window_query(o, b->p[0], b->len[0], out)) != TF_OK) return st;
    if ((st = tf_recency_window_query_batch(o, b->p, b->len, BATCH, out)) != TF_OK) return st;
    if ((st = tf_recency_window_get_stats(o, &stats)) != TF_OK) return st;
    if ((st = tf_recency_window_get_level(o, 0, &level)) != TF_OK) return st;
    if ((st = tf_recency_window_get_info(o, &info)) != TF_OK) return st;
    if ((st = tf_recency_window_memory(o, &bytes)) != TF_OK) return st;
    if ((st = tf_recency_window_memory_for(&opt, &bytes)) != TF_OK) return st;
    if ((st = tf_recency_window_serialized_size(o, &size)) != TF_OK) return st;
    st = tf_recency_window_serialize(o, buf, sizeof buf, &written);
    return st == TF_ERR_BUFFER_TOO_SMALL ? TF_OK : st;
}

static void test_recency_window(void **state) {
    (void)state;
    void *(*makes[3])(void) = {rw_make, rw_make_exact, rw_make_sm};
    for (int i = 0; i < 3; ++i) rw_blob[i] = blob_of(&tu_recency_window, makes[i], &rw_blob_len[i]);
    const tu_structure *st = &tu_recency_window;
    AF_CASES({"tf_recency_window_new (every mode)", st, NULL, rw_new, 3, NULL},
             {"tf_recency_window_deserialize (every mode)", st, NULL, rw_deserialize, 3, NULL},
             {"tf_recency_window_insert, _report", st, rw_make, rw_insert_report, 600, NULL},
             {"tf_recency_window_insert, _report (exact)", st, rw_make_exact, rw_insert_report, 600, NULL},
             {"tf_recency_window_insert, _report (sm)", st, rw_make_sm, rw_insert_report, 600, NULL},
             {"tf_recency_window_insert_batch, _report_batch", st, rw_make, rw_batches, 4, NULL},
             {"tf_recency_window_clear", st, rw_make, rw_clear, 1, NULL},
             {"tf_recency_window reads", st, rw_make_exact, rw_reads, 1, NULL});
    for (int i = 0; i < 3; ++i) free(rw_blob[i]);
}

/* ---- untrusted blobs: what a hostile blob makes deserialize ask for ---- */

/* The bound each header states on what deserialize allocates for a blob of
 * `len` bytes with NULL options (docs: SECURITY.md). */
typedef struct {
    const tu_structure *st;
    void *(*make)(void);
    uint64_t per_byte, constant;
    /* what a max_memory refusal may have asked for: nothing, but the
     * recency window's plan of its levels (at most 42, no table), which
     * its reader computes to know the memory (memory_for) */
    uint64_t plan;
} af_bound;

static const uint64_t huge_values[] = {0xFFFFFFFFu, 0x80000000u, (uint64_t)1 << 40, (uint64_t)1 << 62, UINT64_MAX};

/* Deserializes `blob` with the hook counting: the status, and the bytes
 * asked for in *bytes. What it made is freed. */
static tf_status counted_load(const af_bound *b, const unsigned char *blob, size_t len,
                              const tf_deserialize_options *opt, uint64_t *bytes, uint64_t *memory) {
    void *out = NULL;
    ah_refuse_after(LONG_MAX);
    const tf_status st = b->st->deserialize(blob, len, opt, &out);
    *bytes = ah_bytes();
    ah_refuse_after(-1);
    *memory = 0;
    if (st == TF_OK) {
        assert_int_equal(b->st->memory(out, memory), TF_OK);
        b->st->free(out);
    }
    return st;
}

static void check_bound(const af_bound *b) {
    size_t len;
    unsigned char *good = blob_of(b->st, b->make, &len);
    unsigned char *blob = malloc(len);
    const uint64_t bound = b->per_byte * len + b->constant;
    uint64_t most = 0, bytes, memory;
    unsigned tried = 0, refused = 0;
    /* every 4-byte-aligned field of the payload's first 256 bytes, as a
     * 4- and an 8-byte field, set to each huge value, checksum fixed */
    const size_t end = len - 8 < 20 + 256 ? len - 8 : 20 + 256;
    for (size_t off = 20; off < end; off += 4)
        for (int w = 4; w <= 8; w += 4) {
            if (off + (size_t)w > len - 8) continue;
            for (size_t v = 0; v < sizeof huge_values / sizeof huge_values[0]; ++v) {
                memcpy(blob, good, len);
                tu_put_le(blob + off, huge_values[v], w);
                tu_fix_checksum(blob, len);
                const tf_status st = counted_load(b, blob, len, NULL, &bytes, &memory);
                tried++;
                refused += st != TF_OK;
                if (bytes > most) most = bytes;
                if (bytes > bound || memory > bound)
                    fail_msg("%s: offset %zu = %#llx (%d bytes): %s, %llu bytes asked, memory %llu, bound %llu",
                             b->st->name, off, (unsigned long long)huge_values[v], w, tf_status_string(st),
                             (unsigned long long)bytes, (unsigned long long)memory, (unsigned long long)bound);
            }
        }
    /* the untouched blob: within the bound too; with max_memory one byte
     * below its memory, TF_ERR_TOO_LARGE before anything is asked for */
    assert_int_equal(counted_load(b, good, len, NULL, &bytes, &memory), TF_OK);
    assert_true(bytes <= bound && memory <= bound);
    tf_deserialize_options opt = TF_DESERIALIZE_OPTIONS_INIT;
    opt.max_memory = memory;
    uint64_t m2;
    assert_int_equal(counted_load(b, good, len, &opt, &bytes, &m2), TF_OK);
    opt.max_memory = memory - 1;
    assert_int_equal(counted_load(b, good, len, &opt, &bytes, &m2), TF_ERR_TOO_LARGE);
    if (bytes > b->plan)
        fail_msg("%s: max_memory refused after %llu bytes were asked for", b->st->name, (unsigned long long)bytes);
    printf(
        "# %-16s blob %6zu bytes, memory %8llu; %4u patched blobs (%4u refused): at most %8llu bytes asked, "
        "bound %llu\n",
        b->st->name, len, (unsigned long long)memory, tried, refused, (unsigned long long)most,
        (unsigned long long)bound);
    free(blob);
    free(good);
}

static void test_untrusted_blobs(void **state) {
    (void)state;
    const af_bound bounds[] = {
        {&tu_recency_sketch, rs_make, 1, 64 << 10, 0},
        {&tu_recency_sketch, rs_make_blocked, 1, 64 << 10, 0},
        {&tu_age_bloom, ab_make, 2, 64 << 10, 0},
        {&tu_age_bloom, ab_make_blocked, 2, 64 << 10, 0},
        {&tu_time_bloom, tb_make, 2, 64 << 10, 0},
        {&tu_rate_limiter, rl_make_overrides, 16, 64 << 10, 0},
        {&tu_rate_limiter, rl_make_exact, 16, 64 << 10, 0},
        {&tu_rotating_cuckoo, ck_make, 1, 256 << 10, 0},
        {&tu_recency_window, rw_make, 1, 1 << 20, 16 << 10},
        {&tu_recency_window, rw_make_exact, 1, 1 << 20, 16 << 10},
        {&tu_recency_window, rw_make_sm, 1, 1 << 20, 16 << 10},
    };
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; ++i) check_bound(&bounds[i]);
}

/* TF_TEST_FILTER=<glob> runs only the matching tests (as the Bloom suites). */
int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recency_sketch), cmocka_unit_test(test_bloom_filters),
        cmocka_unit_test(test_rate_limiter),   cmocka_unit_test(test_rotating_cuckoo),
        cmocka_unit_test(test_recency_window), cmocka_unit_test(test_untrusted_blobs),
    };
    const char *filter = getenv("TF_TEST_FILTER");
    if (filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
