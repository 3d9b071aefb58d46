/* RecencySketch: semantics, the one-sided error promise against an exact
 * reference, the too-new probability against the model, pacing, the TTL
 * prefilter, merge, concurrency, bad input and the wire format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "golden.h"
#include "temporalfilters.h"
#include "test_util.h"

#define OK(call) assert_int_equal((call), TF_OK)

static const uint32_t kModes[] = {0, TF_RECENCY_SKETCH_BLOCKED, TF_RECENCY_SKETCH_CONCURRENT,
                                  TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT};
#define NMODES (sizeof kModes / sizeof kModes[0])

static tf_recency_sketch *make(uint64_t w, uint32_t d, uint32_t seed, uint32_t flags) {
    tf_recency_sketch *s = NULL;
    OK(tf_recency_sketch_new(w, d, seed, flags, &s));
    assert_non_null(s);
    return s;
}

static void upd(tf_recency_sketch *s, uint64_t id, uint64_t t) {
    tu_key k = tu_make_key('r', id);
    OK(tf_recency_sketch_update(s, k.b, sizeof k.b, t));
}

static uint64_t qry(const tf_recency_sketch *s, uint64_t id) {
    tu_key k = tu_make_key('r', id);
    uint64_t t = 99;
    OK(tf_recency_sketch_query(s, k.b, sizeof k.b, &t));
    return t;
}

static unsigned char *snap(const tf_recency_sketch *s, size_t *len) {
    size_t n = 0, w = 0;
    OK(tf_recency_sketch_serialized_size(s, &n));
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    OK(tf_recency_sketch_serialize(s, buf, n, &w));
    assert_int_equal(w, n);
    *len = n;
    return buf;
}

static int same(const tf_recency_sketch *a, const tf_recency_sketch *b) {
    size_t na, nb;
    unsigned char *x = snap(a, &na), *y = snap(b, &nb);
    int eq = na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return eq;
}

static tf_recency_sketch_info info_of(const tf_recency_sketch *s) {
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    OK(tf_recency_sketch_get_info(s, &info));
    return info;
}

/* Asserts that `s` serializes to exactly `before`. */
static void assert_unchanged(const tf_recency_sketch *s, const unsigned char *before, size_t len) {
    size_t n;
    unsigned char *now = snap(s, &n);
    assert_int_equal(n, len);
    assert_memory_equal(now, before, len);
    free(now);
}

/* ------------------------------------------------------------------ */
/* semantics                                                           */

static void test_new_and_info(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(1000, 4, 7, kModes[m]);
        const tf_recency_sketch_info info = info_of(s);
        assert_int_equal(info.size, sizeof info);
        assert_int_equal(info.width, 1000);
        assert_int_equal(info.depth, 4);
        assert_int_equal(info.seed, 7);
        assert_int_equal(info.flags, kModes[m]);
        assert_int_equal(info.cells, 4000); /* 4000 is a multiple of 8: same in both layouts */
        /* a caller built against a later, longer version of the struct:
         * the fields this library knows are filled, the rest is left alone */
        struct {
            tf_recency_sketch_info info;
            uint64_t later_field;
        } longer;
        memset(&longer, 0, sizeof longer);
        longer.info.size = sizeof longer;
        longer.later_field = 77;
        OK(tf_recency_sketch_get_info(s, &longer.info));
        assert_int_equal(longer.info.size, sizeof longer);
        assert_int_equal(longer.info.cells, 4000);
        assert_int_equal(longer.later_field, 77);
        size_t bytes;
        OK(tf_recency_sketch_memory(s, &bytes));
        assert_true(bytes >= 4000 * 8 && bytes < 4000 * 8 + 1024);
        for (uint64_t i = 0; i < 1000; ++i) assert_int_equal(qry(s, i), TF_NEVER);
        double p = 1;
        OK(tf_recency_sketch_error_estimate(s, 0, &p));
        assert_true(p == 0.0);
        tf_recency_sketch_free(s);
    }
    /* blocked tables round up to whole cache lines */
    tf_recency_sketch *s = make(1001, 3, 0, TF_RECENCY_SKETCH_BLOCKED);
    assert_int_equal(info_of(s).cells, 3008); /* ceil(3003 / 8) * 8 */
    tf_recency_sketch_free(s);
}

static void test_update_query_basics(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(4096, 4, 1, kModes[m]);
        OK(tf_recency_sketch_update(s, "alpha", 5, 10));
        uint64_t t = 0;
        OK(tf_recency_sketch_query(s, "alpha", 5, &t));
        assert_int_equal(t, 10);
        OK(tf_recency_sketch_update(s, "alpha", 5, 5)); /* older: no effect */
        OK(tf_recency_sketch_query(s, "alpha", 5, &t));
        assert_int_equal(t, 10);
        OK(tf_recency_sketch_update(s, "alpha", 5, 20));
        OK(tf_recency_sketch_query(s, "alpha", 5, &t));
        assert_int_equal(t, 20);
        /* the empty key is a key */
        OK(tf_recency_sketch_query(s, NULL, 0, &t));
        assert_int_equal(t, TF_NEVER);
        OK(tf_recency_sketch_update(s, NULL, 0, 33));
        OK(tf_recency_sketch_query(s, "", 0, &t));
        assert_int_equal(t, 33);
        /* keys are binary: NUL bytes count, prefixes differ */
        OK(tf_recency_sketch_update(s, "a\0b", 3, 40));
        OK(tf_recency_sketch_query(s, "a\0b", 3, &t));
        assert_int_equal(t, 40);
        OK(tf_recency_sketch_query(s, "a\0c", 3, &t));
        assert_int_equal(t, TF_NEVER);
        OK(tf_recency_sketch_query(s, "a", 1, &t));
        assert_int_equal(t, TF_NEVER);
        /* the largest timestamp is fine */
        OK(tf_recency_sketch_update(s, "max", 3, UINT64_MAX));
        OK(tf_recency_sketch_query(s, "max", 3, &t));
        assert_int_equal(t, UINT64_MAX);
        tf_recency_sketch_free(s);
    }
}

/* Different seeds give different cell positions (independent sketches). */
static void test_seed_changes_positions(void **state) {
    (void)state;
    tf_recency_sketch *a = make(64, 1, 1, 0), *b = make(64, 1, 2, 0);
    for (uint64_t i = 0; i < 16; ++i) {
        upd(a, i, 5);
        upd(b, i, 5);
    }
    int differ = 0;
    for (uint64_t j = 1000; j < 2000; ++j) differ += (qry(a, j) == 5) != (qry(b, j) == 5);
    assert_true(differ > 100);
    tf_recency_sketch_free(a);
    tf_recency_sketch_free(b);
}

/* Batches give exactly the results of one call per key, in order. */
static void test_batch_matches_single(void **state) {
    (void)state;
    enum { N = 3000 };
    static unsigned char keybuf[N][24];
    const void *keys[N];
    size_t lens[N];
    uint64_t times[N], got[N];
    tu_rng r = {31};
    for (size_t i = 0; i < N; ++i) {
        lens[i] = (size_t)tu_below(&r, 24); /* lengths 0..23, all tail cases */
        for (size_t j = 0; j < lens[i]; ++j) keybuf[i][j] = (unsigned char)tu_below(&r, 4); /* repeats */
        keys[i] = lens[i] ? keybuf[i] : NULL;
        times[i] = 1 + tu_below(&r, 1000000); /* out of order */
    }
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *a = make(256, 3, 5, kModes[m]), *b = make(256, 3, 5, kModes[m]);
        OK(tf_recency_sketch_update_batch(a, keys, lens, N, times));
        for (size_t i = 0; i < N; ++i) OK(tf_recency_sketch_update(b, keys[i], lens[i], times[i]));
        assert_true(same(a, b));
        OK(tf_recency_sketch_query_batch(a, keys, lens, N, got));
        for (size_t i = 0; i < N; ++i) {
            uint64_t t;
            OK(tf_recency_sketch_query(b, keys[i], lens[i], &t));
            assert_int_equal(got[i], t);
            assert_true(t >= times[i]);
        }
        /* empty batches are fine, even with NULL arrays */
        OK(tf_recency_sketch_update_batch(a, NULL, NULL, 0, NULL));
        OK(tf_recency_sketch_query_batch(a, NULL, NULL, 0, NULL));
        /* a bad element fails the whole batch before anything changes */
        size_t n;
        unsigned char *before = snap(a, &n);
        uint64_t bad_times[N];
        memcpy(bad_times, times, sizeof bad_times);
        for (size_t i = 0; i < N; ++i) bad_times[i] += 5000000;
        bad_times[N - 1] = 0;
        tf_clear_last_error();
        assert_int_equal(tf_recency_sketch_update_batch(a, keys, lens, N, bad_times), TF_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tf_last_error_message(), "times[2999]"));
        assert_unchanged(a, before, n);
        const void *bad_keys[2] = {"x", NULL};
        size_t bad_lens[2] = {1, 4};
        assert_int_equal(tf_recency_sketch_update_batch(a, bad_keys, bad_lens, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_query_batch(a, bad_keys, bad_lens, 2, got), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(a, NULL, lens, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(a, keys, NULL, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(a, keys, lens, 2, NULL), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(NULL, keys, lens, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_query_batch(a, keys, lens, 2, NULL), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_query_batch(NULL, keys, lens, 2, got), TF_ERR_NULL);
        assert_unchanged(a, before, n);
        free(before);
        tf_recency_sketch_free(a);
        tf_recency_sketch_free(b);
    }
}

/* ------------------------------------------------------------------ */
/* the promise: never older than the truth                              */

/* >= 1e6 random updates and queries, timestamps in and out of order,
 * against an exact table of true last-update times. */
static void never_older_property(uint32_t flags, uint64_t width, uint32_t depth) {
    enum { KEYS = 200000, OPS = 1000000 };
    uint64_t *truth = calloc(KEYS, sizeof *truth);
    assert_non_null(truth);
    tf_recency_sketch *s = make(width, depth, 12345, flags);
    tu_rng rng = {42};
    uint64_t clock = 1000, queries = 0, too_new = 0, never_seen_nonzero = 0;
    for (int op = 0; op < OPS; ++op) {
        uint64_t id = tu_below(&rng, KEYS);
        clock += tu_below(&rng, 3);
        if (tu_below(&rng, 10) < 6) {
            /* 1 in 4 updates arrives late, up to 500 units in the past */
            uint64_t t = clock;
            if (tu_below(&rng, 4) == 0) t = clock - tu_below(&rng, 500);
            upd(s, id, t);
            if (t > truth[id]) truth[id] = t;
        } else {
            uint64_t est = qry(s, id);
            queries++;
            if (est < truth[id])
                fail_msg("key %llu: estimate %llu is older than the truth %llu", (unsigned long long)id,
                         (unsigned long long)est, (unsigned long long)truth[id]);
            if (truth[id] == 0 && est != 0) never_seen_nonzero++;
            if (est > truth[id]) too_new++;
        }
    }
    /* and a final sweep over every key */
    for (uint64_t id = 0; id < KEYS; ++id) assert_true(qry(s, id) >= truth[id]);
    print_message("# flags %u %llux%u: %llu queries, %llu too new, %llu never-seen read as seen\n", flags,
                  (unsigned long long)width, depth, (unsigned long long)queries, (unsigned long long)too_new,
                  (unsigned long long)never_seen_nonzero);
    /* the check must be able to fail: the sketch is loaded enough to be
     * wrong on the high side sometimes */
    assert_true(too_new > 0);
    tf_recency_sketch_free(s);
    free(truth);
}

static void test_never_older_standard(void **state) {
    (void)state;
    never_older_property(0, 1 << 16, 4);
}

static void test_never_older_blocked(void **state) {
    (void)state;
    never_older_property(TF_RECENCY_SKETCH_BLOCKED, 1 << 16, 4);
}

static void test_never_older_concurrent_modes(void **state) {
    (void)state;
    never_older_property(TF_RECENCY_SKETCH_CONCURRENT, 1 << 15, 3);
    never_older_property(TF_RECENCY_SKETCH_CONCURRENT | TF_RECENCY_SKETCH_BLOCKED, 1 << 15, 3);
}

/* ------------------------------------------------------------------ */
/* the too-new probability against the math                             */

/* P(too new) for the standard layout: (1 - (1 - 1/w)^n)^d. */
static double model_standard(double n, double w, double d) { return pow(1.0 - exp(n * log1p(-1.0 / w)), d); }

static double choose(unsigned n, unsigned k) {
    if (k > n) return 0;
    double r = 1;
    for (unsigned i = 1; i <= k; ++i) r = r * (double)(n - k + i) / i;
    return r;
}

/* P(too new) for the blocked layout, written independently of the
 * library: a line receives Binomial(n, 1/lines) keys, each marking a
 * random d-subset of its 8 cells; the query's own d-subset must be fully
 * marked. */
static double model_blocked(double n, double lines, unsigned d) {
    double occ[9] = {1, 0, 0, 0, 0, 0, 0, 0, 0}, p = 0, total = choose(8, d);
    const double q = 1.0 / lines;
    for (unsigned k = 0; k <= n && k < 3000; ++k) {
        /* Binomial(n, q) probability of k keys in the query's line */
        double pk = lines <= 1.0
                        ? (k == n ? 1.0 : 0.0)
                        : exp(lgamma(n + 1) - lgamma(k + 1.0) - lgamma(n - k + 1) + k * log(q) + (n - k) * log1p(-q));
        double cover = 0;
        for (unsigned j = 0; j <= 8; ++j) cover += occ[j] * choose(j, d) / total;
        p += pk * cover;
        double next[9] = {0};
        for (unsigned j = 0; j <= 8; ++j)
            for (unsigned fresh = 0; fresh <= d && j + fresh <= 8; ++fresh)
                next[j + fresh] += occ[j] * choose(8 - j, fresh) * choose(j, d - fresh) / total;
        memcpy(occ, next, sizeof occ);
    }
    return p;
}

/* Inserts `old` keys at times 1..old, then `fresh` other keys after the
 * horizon h; returns the fraction of old keys that read as newer than h. */
static double measure_too_new(tf_recency_sketch *s, uint64_t old, uint64_t fresh, uint64_t h) {
    for (uint64_t i = 0; i < old; ++i) upd(s, i, 1 + i);
    for (uint64_t i = 0; i < fresh; ++i) upd(s, 10000000 + i, h + 1 + i);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < old; ++i) {
        uint64_t t = qry(s, i);
        assert_true(t >= 1 + i);
        if (t > h) wrong++;
    }
    return (double)wrong / (double)old;
}

/* The first seed equals the test keys' length (9 bytes), MurmurHash3's
 * corner case where its raw output words are linearly related; the model
 * must hold there too. */
static const uint32_t kKeyLen = sizeof(tu_key);

/* Margin: the M old keys are Bernoulli(p) trials, so the count has standard
 * deviation sqrt(M p (1-p)); keys sharing cells correlate them a little, and
 * double hashing is only approximately independent, so we allow 6 standard
 * deviations plus 5% of p. */
static void assert_near_model(double measured, double p, double m, const char *what) {
    double tol = 6.0 * sqrt(p * (1 - p) / m) + 0.05 * p;
    print_message("# %s: measured %.5f model %.5f tolerance %.5f\n", what, measured, p, tol);
    if (fabs(measured - p) > tol) fail_msg("%s: measured %.5f, model %.5f (tolerance %.5f)", what, measured, p, tol);
}

static void test_too_new_probability_standard(void **state) {
    (void)state;
    const uint64_t w = 8192, old = 200000, h = 5000000;
    const uint32_t d = 4;
    const uint64_t loads[] = {4096, 8192, 16384};
    for (size_t i = 0; i < 3; ++i) {
        tf_recency_sketch *s = make(w, d, kKeyLen + 100 * (uint32_t)i, 0);
        double measured = measure_too_new(s, old, loads[i], h);
        double model = model_standard((double)loads[i], (double)w, d);
        assert_near_model(measured, model, (double)old, "standard");
        /* the occupancy estimate agrees with both */
        double est;
        OK(tf_recency_sketch_error_estimate(s, h, &est));
        assert_near_model(measured, est, (double)old, "standard estimate");
        tf_recency_sketch_free(s);
    }
}

static void test_too_new_probability_blocked(void **state) {
    (void)state;
    const uint64_t w = 8192, old = 200000, h = 5000000;
    const uint32_t d = 4;
    const uint64_t loads[] = {4096, 8192, 16384};
    for (size_t i = 0; i < 3; ++i) {
        tf_recency_sketch *s = make(w, d, kKeyLen + 100 * (uint32_t)i, TF_RECENCY_SKETCH_BLOCKED);
        double measured = measure_too_new(s, old, loads[i], h);
        double model = model_blocked((double)loads[i], (double)(w * d / 8), d);
        assert_near_model(measured, model, (double)old, "blocked");
        double est;
        OK(tf_recency_sketch_error_estimate(s, h, &est));
        assert_near_model(measured, est, (double)old, "blocked estimate");
        /* at equal memory the blocked layout errs more than the standard one */
        assert_true(model > model_standard((double)loads[i], (double)w, d));
        tf_recency_sketch_free(s);
    }
}

/* A never-seen key reads as seen with the probability error_estimate(0). */
static void test_never_seen_keys(void **state) {
    (void)state;
    for (size_t m = 0; m < 2; ++m) {
        tf_recency_sketch *s = make(4096, 3, 5, kModes[m]);
        for (uint64_t i = 0; i < 3000; ++i) upd(s, i, 100 + i);
        double p;
        OK(tf_recency_sketch_error_estimate(s, 0, &p));
        const uint64_t M = 200000;
        uint64_t seen = 0;
        for (uint64_t i = 0; i < M; ++i) {
            uint64_t t = qry(s, 50000000 + i);
            if (t != TF_NEVER) {
                seen++;
                assert_true(t >= 100 && t < 3100); /* it is some other key's time */
            }
        }
        assert_near_model((double)seen / M, p, (double)M, m ? "never-seen blocked" : "never-seen standard");
        tf_recency_sketch_free(s);
    }
}

/* ------------------------------------------------------------------ */
/* sizing                                                              */

static void test_dimensions_meet_target(void **state) {
    (void)state;
    const uint64_t ns[] = {1, 100, 10000, 1000000};
    const double ps[] = {0.1, 0.01, 1e-3, 1e-6};
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 4; ++j) {
            uint64_t w = 0;
            uint32_t d = 0;
            OK(tf_recency_sketch_dimensions(ns[i], ps[j], 0, &w, &d));
            assert_true(w >= 1 && d >= 1 && d <= TF_RECENCY_SKETCH_MAX_DEPTH);
            double p = model_standard((double)ns[i], (double)w, d);
            assert_true(p <= ps[j]);
            /* minimal for its depth: one cell less per row misses the target */
            if (w > 1) assert_true(model_standard((double)ns[i], (double)(w - 1), d) > ps[j]);
            /* near the optimum: about n*log2(1/p)/ln 2 cells (the Bloom bound) */
            double optimum = (double)ns[i] * log2(1 / ps[j]) / log(2.0);
            assert_true((double)w * d <= 1.3 * optimum + 64);

            OK(tf_recency_sketch_dimensions(ns[i], ps[j], TF_RECENCY_SKETCH_BLOCKED, &w, &d));
            assert_true(d >= 1 && d <= TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH);
            uint64_t cells = (w * d + 7) / 8 * 8;
            assert_true(model_blocked((double)ns[i], (double)(cells / 8), d) <= ps[j] * 1.0001);
        }
    /* out-parameters may be NULL */
    OK(tf_recency_sketch_dimensions(1000, 0.01, 0, NULL, NULL));
}

/* The sized sketch keeps its promise on a real stream. */
static void test_new_for_meets_target(void **state) {
    (void)state;
    const uint64_t n = 20000;
    const double target = 0.01;
    for (size_t m = 0; m < 2; ++m) {
        tf_recency_sketch *s = NULL;
        OK(tf_recency_sketch_new_for(n, target, 3, kModes[m], &s));
        double measured = measure_too_new(s, 100000, n, 1000000);
        double tol = 6.0 * sqrt(target / 100000.0);
        print_message("# new_for(%llu, %g) %s: too-new rate %.5f\n", (unsigned long long)n, target,
                      m ? "blocked" : "standard", measured);
        assert_true(measured <= target + tol);
        /* and the sizing is not wasteful: the rate is within 2x of the target */
        assert_true(measured >= target / 2 - tol);
        tf_recency_sketch_free(s);
    }
}

static void test_dimensions_bad_input(void **state) {
    (void)state;
    uint64_t w;
    uint32_t d;
    assert_int_equal(tf_recency_sketch_dimensions(0, 0.01, 0, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(10, 0.0, 0, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(10, 1.0, 0, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(10, -0.5, 0, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(10, NAN, 0, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(10, INFINITY, 0, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(10, 0.01, 0x80, &w, &d), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_dimensions(UINT64_MAX, 1e-300, 0, &w, &d), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_dimensions(UINT64_MAX, 1e-12, TF_RECENCY_SKETCH_BLOCKED, &w, &d),
                     TF_ERR_TOO_LARGE);
    tf_recency_sketch *s = (tf_recency_sketch *)&w;
    assert_int_equal(tf_recency_sketch_new_for(0, 0.01, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_ptr_equal(s, (tf_recency_sketch *)&w); /* out untouched on failure */
    assert_int_equal(tf_recency_sketch_new_for(10, 0.01, 0, 0, NULL), TF_ERR_NULL);
}

/* ------------------------------------------------------------------ */
/* pacing                                                              */

static void test_pace_semantics(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(1024, 4, 3, kModes[m]);
        int g = -1;
        uint64_t next = 0;
        OK(tf_recency_sketch_pace(s, "client", 6, 100, 10, &g, &next));
        assert_int_equal(g, 1);
        assert_int_equal(next, 110);
        OK(tf_recency_sketch_pace(s, "client", 6, 105, 10, &g, &next));
        assert_int_equal(g, 0);
        assert_int_equal(next, 110);
        OK(tf_recency_sketch_pace(s, "client", 6, 109, 10, &g, NULL));
        assert_int_equal(g, 0);
        OK(tf_recency_sketch_pace(s, "client", 6, 110, 10, &g, &next));
        assert_int_equal(g, 1);
        assert_int_equal(next, 120);
        /* a grant is a recorded update; a denial records nothing */
        uint64_t t;
        OK(tf_recency_sketch_query(s, "client", 6, &t));
        assert_int_equal(t, 110);
        /* a clock that goes backwards is denied, never granted */
        OK(tf_recency_sketch_pace(s, "client", 6, 50, 10, &g, &next));
        assert_int_equal(g, 0);
        assert_int_equal(next, 120);
        OK(tf_recency_sketch_query(s, "client", 6, &t));
        assert_int_equal(t, 110);
        /* saturation at the end of time */
        OK(tf_recency_sketch_pace(s, "late", 4, UINT64_MAX - 3, 10, &g, &next));
        assert_int_equal(g, 1);
        assert_int_equal(next, UINT64_MAX);
        OK(tf_recency_sketch_pace(s, "late", 4, UINT64_MAX, 10, &g, &next));
        assert_int_equal(g, 0);
        assert_int_equal(next, UINT64_MAX);
        tf_recency_sketch_free(s);
    }
}

/* A key is never granted twice within its interval, whatever the load;
 * checked against an exact per-key record of grants. */
static void test_pace_never_early(void **state) {
    (void)state;
    enum { KEYS = 50000, OPS = 1000000 };
    for (size_t m = 0; m < 2; ++m) {
        uint64_t *last_grant = calloc(KEYS, sizeof *last_grant);
        assert_non_null(last_grant);
        tf_recency_sketch *s = make(4096, 4, 11, kModes[m]); /* overloaded on purpose */
        tu_rng rng = {7};
        uint64_t clock = 1, grants = 0, exact_grants = 0;
        for (int op = 0; op < OPS; ++op) {
            uint64_t id = tu_below(&rng, KEYS);
            clock += tu_below(&rng, 2);
            const uint64_t interval = 5000;
            tu_key k = tu_make_key('p', id);
            int g;
            uint64_t next;
            OK(tf_recency_sketch_pace(s, k.b, sizeof k.b, clock, interval, &g, &next));
            int exact = last_grant[id] == 0 || last_grant[id] + interval <= clock;
            if (g) {
                assert_true(exact); /* never early */
                last_grant[id] = clock;
                grants++;
                assert_int_equal(next, clock + interval);
            } else {
                assert_true(next > clock);
            }
            exact_grants += exact;
        }
        print_message("# pace %s: %llu grants of %llu requests\n", m ? "blocked" : "standard",
                      (unsigned long long)grants, (unsigned long long)OPS);
        assert_true(grants > 0);
        tf_recency_sketch_free(s);
        free(last_grant);
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Largest number of grant times inside any half-open window of length L. */
static uint64_t max_in_window(uint64_t *times, size_t n, uint64_t L) {
    qsort(times, n, sizeof *times, cmp_u64);
    uint64_t best = 0;
    for (size_t i = 0, j = 0; i < n; ++i) {
        while (times[i] - times[j] >= L) j++;
        if (i - j + 1 > best) best = i - j + 1;
    }
    return best;
}

/* The seed's property: with an unbounded key space, the sketch grants at
 * most one request per cell per interval, so at most width*depth in any
 * window of length interval; and under overload it approaches that rate. */
static void test_pace_rate_bound(void **state) {
    (void)state;
    const uint64_t w = 16, L = 100, T = 20000, per_tick = 50;
    const uint32_t d = 2;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(w, d, 1, kModes[m]);
        const uint64_t cells = info_of(s).cells;
        uint64_t *times = malloc(T * per_tick * sizeof *times);
        size_t n = 0;
        uint64_t id = 0;
        for (uint64_t t = 1; t <= T; ++t)
            for (uint64_t r = 0; r < per_tick; ++r) {
                tu_key k = tu_make_key('u', id++); /* always a new key */
                int g;
                OK(tf_recency_sketch_pace(s, k.b, sizeof k.b, t, L, &g, NULL));
                if (g) times[n++] = t;
            }
        uint64_t worst = max_in_window(times, n, L);
        double rate = (double)n / ((double)T / (double)L);
        print_message("# flags %u: %zu grants, at most %llu per interval (bound %llu), mean %.1f per interval\n",
                      kModes[m], n, (unsigned long long)worst, (unsigned long long)cells, rate);
        assert_true(worst <= cells);
        /* overloaded 50x, the rate approaches the constant from below: each
         * cell is claimed again soon after its interval ends */
        assert_true(rate >= 0.5 * (double)cells);
        free(times);
        tf_recency_sketch_free(s);
    }
}

/* ------------------------------------------------------------------ */
/* TTL prefilter                                                        */

static void test_ttl_prefilter(void **state) {
    (void)state;
    enum { KEYS = 20000, OPS = 600000 };
    for (size_t m = 0; m < NMODES; ++m) {
        uint64_t *expiry = calloc(KEYS, sizeof *expiry); /* expiry of the latest insert */
        tf_recency_sketch *s = make(16384, 4, 17, kModes[m]);
        tu_rng rng = {99};
        uint64_t clock = 1000, live_checks = 0, expired_checks = 0, false_live = 0;
        for (int op = 0; op < OPS; ++op) {
            uint64_t id = tu_below(&rng, KEYS);
            clock += tu_below(&rng, 3);
            tu_key k = tu_make_key('t', id);
            if (tu_below(&rng, 3) == 0) {
                uint64_t ttl = 1 + tu_below(&rng, 2000);
                OK(tf_recency_sketch_ttl_insert(s, k.b, sizeof k.b, clock, ttl));
                expiry[id] = clock + ttl;
            } else {
                /* ask about now, and sometimes about the past (clock skew) */
                uint64_t now = clock;
                if (tu_below(&rng, 5) == 0) now = clock > 3000 ? clock - tu_below(&rng, 3000) : clock;
                int live = -1;
                uint64_t at = 0;
                OK(tf_recency_sketch_ttl_maybe_live(s, k.b, sizeof k.b, now, &live, &at));
                assert_true(at >= expiry[id]);
                if (now < expiry[id]) {
                    live_checks++;
                    if (!live) fail_msg("live key %llu reported expired", (unsigned long long)id);
                } else {
                    expired_checks++;
                    false_live += live;
                }
            }
        }
        print_message("# ttl flags %u: %llu live checks, %llu expired checks, %llu wrongly maybe-live\n", kModes[m],
                      (unsigned long long)live_checks, (unsigned long long)expired_checks,
                      (unsigned long long)false_live);
        assert_true(live_checks > 1000 && expired_checks > 1000);
        /* the filter is useful: most expired keys are caught */
        assert_true(false_live < expired_checks / 2);
        free(expiry);
        tf_recency_sketch_free(s);
    }
    /* never inserted -> certainly expired; TTL saturates */
    tf_recency_sketch *s = make(64, 2, 0, 0);
    int live = 1;
    uint64_t at = 1;
    OK(tf_recency_sketch_ttl_maybe_live(s, "x", 1, 5, &live, &at));
    assert_int_equal(live, 0);
    assert_int_equal(at, TF_NEVER);
    OK(tf_recency_sketch_ttl_insert(s, "x", 1, UINT64_MAX - 5, 100));
    OK(tf_recency_sketch_ttl_maybe_live(s, "x", 1, UINT64_MAX - 1, &live, &at));
    assert_int_equal(live, 1);
    assert_int_equal(at, UINT64_MAX);
    OK(tf_recency_sketch_ttl_insert(s, "y", 1, 10, 5));
    OK(tf_recency_sketch_ttl_maybe_live(s, "y", 1, 14, &live, NULL));
    assert_int_equal(live, 1);
    OK(tf_recency_sketch_ttl_maybe_live(s, "y", 1, 15, &live, NULL)); /* live while now < t + ttl */
    assert_int_equal(live, 0);
    tf_recency_sketch_free(s);
}

/* ------------------------------------------------------------------ */
/* merge and clear                                                      */

static tf_recency_sketch *random_sketch(uint32_t flags, uint64_t seed, uint64_t n) {
    tf_recency_sketch *s = make(512, 3, 77, flags);
    tu_rng r = {seed};
    for (uint64_t i = 0; i < n; ++i) upd(s, tu_below(&r, 5000), 1 + tu_below(&r, 100000));
    return s;
}

static tf_recency_sketch *copy_of(const tf_recency_sketch *s) {
    size_t n;
    unsigned char *b = snap(s, &n);
    tf_recency_sketch *c = NULL;
    OK(tf_recency_sketch_deserialize(b, n, NULL, &c));
    free(b);
    return c;
}

static void test_merge_laws(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        uint32_t f = kModes[m];
        tf_recency_sketch *a = random_sketch(f, 1, 800), *b = random_sketch(f, 2, 800), *c = random_sketch(f, 3, 800);
        /* commutative: a+b == b+a */
        tf_recency_sketch *ab = copy_of(a), *ba = copy_of(b);
        OK(tf_recency_sketch_merge(ab, b));
        OK(tf_recency_sketch_merge(ba, a));
        assert_true(same(ab, ba));
        assert_false(same(ab, a));
        /* associative: (a+b)+c == a+(b+c) */
        tf_recency_sketch *bc = copy_of(b);
        OK(tf_recency_sketch_merge(bc, c));
        tf_recency_sketch *a_bc = copy_of(a);
        OK(tf_recency_sketch_merge(a_bc, bc));
        OK(tf_recency_sketch_merge(ab, c));
        assert_true(same(ab, a_bc));
        /* idempotent: a+a == a, also through the same handle */
        tf_recency_sketch *aa = copy_of(a);
        OK(tf_recency_sketch_merge(aa, a));
        assert_true(same(aa, a));
        OK(tf_recency_sketch_merge(aa, aa));
        assert_true(same(aa, a));
        /* the merge answers for both streams: never older than either */
        for (uint64_t id = 0; id < 5000; ++id) {
            uint64_t qa = qry(a, id), qb = qry(b, id), qm = qry(ba, id);
            assert_true(qm >= qa && qm >= qb);
        }
        tf_recency_sketch *all[] = {a, b, c, ab, ba, bc, a_bc, aa};
        for (size_t i = 0; i < 8; ++i) tf_recency_sketch_free(all[i]);
    }
    /* the concurrency mode may differ: it is not part of the shape */
    tf_recency_sketch *p = random_sketch(0, 5, 300), *q = random_sketch(TF_RECENCY_SKETCH_CONCURRENT, 6, 300);
    OK(tf_recency_sketch_merge(q, p));
    OK(tf_recency_sketch_merge(p, q));
    for (uint64_t id = 0; id < 5000; ++id) assert_int_equal(qry(p, id), qry(q, id));
    tf_recency_sketch_free(p);
    tf_recency_sketch_free(q);
}

static void test_merge_incompatible(void **state) {
    (void)state;
    tf_recency_sketch *base = random_sketch(0, 1, 500);
    size_t n;
    unsigned char *before = snap(base, &n);
    tf_recency_sketch *others[] = {make(511, 3, 77, 0), make(512, 4, 77, 0), make(512, 3, 78, 0),
                                   make(512, 3, 77, TF_RECENCY_SKETCH_BLOCKED)};
    for (size_t i = 0; i < 4; ++i) {
        upd(others[i], 1, 999999);
        tf_clear_last_error();
        assert_int_equal(tf_recency_sketch_merge(base, others[i]), TF_ERR_INCOMPATIBLE);
        assert_true(strlen(tf_last_error_message()) > 0);
        assert_unchanged(base, before, n);
        tf_recency_sketch_free(others[i]);
    }
    free(before);
    tf_recency_sketch_free(base);
}

static void test_clear(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 9, 2000);
        OK(tf_recency_sketch_clear(s));
        for (uint64_t id = 0; id < 5000; ++id) assert_int_equal(qry(s, id), TF_NEVER);
        double p;
        OK(tf_recency_sketch_error_estimate(s, 0, &p));
        assert_true(p == 0.0);
        tf_recency_sketch *fresh = make(512, 3, 77, kModes[m]);
        assert_true(same(s, fresh));
        tf_recency_sketch_free(fresh);
        tf_recency_sketch_free(s);
    }
}

/* ------------------------------------------------------------------ */
/* concurrency                                                          */

enum { CT_THREADS = 8, CT_KEYS = 4000, CT_OPS = 200000 };

typedef struct {
    tf_recency_sketch *s;
    unsigned id;
    uint64_t truth[CT_KEYS]; /* this thread's own max per key */
    int failed;
} ct_arg;

static void *ct_worker(void *p) {
    ct_arg *a = p;
    tu_rng r = {1000 + a->id};
    uint64_t last_read[64] = {0};
    for (int op = 0; op < CT_OPS; ++op) {
        uint64_t key = tu_below(&r, CT_KEYS);
        if (op % 4 != 3) {
            uint64_t t = 1 + tu_below(&r, 1u << 30);
            tu_key k = tu_make_key('c', key);
            if (tf_recency_sketch_update(a->s, k.b, sizeof k.b, t) != TF_OK) a->failed = 1;
            if (t > a->truth[key]) a->truth[key] = t;
        } else {
            /* reads of one key never go backwards, even while others write */
            uint64_t probe = key % 64;
            tu_key k = tu_make_key('c', probe);
            uint64_t t;
            if (tf_recency_sketch_query(a->s, k.b, sizeof k.b, &t) != TF_OK) a->failed = 1;
            if (t < last_read[probe] || t < a->truth[probe]) a->failed = 2;
            last_read[probe] = t;
        }
    }
    return NULL;
}

static void test_concurrent_updates(void **state) {
    (void)state;
    for (int blocked = 0; blocked < 2; ++blocked) {
        tf_recency_sketch *s =
            make(2048, 4, 5, TF_RECENCY_SKETCH_CONCURRENT | (blocked ? TF_RECENCY_SKETCH_BLOCKED : 0));
        ct_arg *args = calloc(CT_THREADS, sizeof *args);
        pthread_t th[CT_THREADS];
        for (unsigned i = 0; i < CT_THREADS; ++i) {
            args[i].s = s;
            args[i].id = i;
            assert_int_equal(pthread_create(&th[i], NULL, ct_worker, &args[i]), 0);
        }
        for (unsigned i = 0; i < CT_THREADS; ++i) pthread_join(th[i], NULL);
        for (unsigned i = 0; i < CT_THREADS; ++i) assert_int_equal(args[i].failed, 0);
        /* no update was lost: every key reads at least its true maximum */
        uint64_t exact = 0;
        for (uint64_t key = 0; key < CT_KEYS; ++key) {
            uint64_t truth = 0;
            for (unsigned i = 0; i < CT_THREADS; ++i)
                if (args[i].truth[key] > truth) truth = args[i].truth[key];
            tu_key k = tu_make_key('c', key);
            uint64_t t;
            OK(tf_recency_sketch_query(s, k.b, sizeof k.b, &t));
            assert_true(t >= truth);
            exact += t == truth;
        }
        assert_true(exact > 0);
        free(args);
        tf_recency_sketch_free(s);
    }
}

enum { CP_THREADS = 8, CP_KEYS = 16, CP_OPS = 100000, CP_INTERVAL = 50 };

typedef struct {
    tf_recency_sketch *s;
    uint64_t *clock; /* shared logical clock */
    unsigned id;
    uint64_t *grant_key, *grant_time;
    size_t grants;
    int failed;
} cp_arg;

static void *cp_worker(void *p) {
    cp_arg *a = p;
    tu_rng r = {500 + a->id};
    for (int op = 0; op < CP_OPS; ++op) {
        uint64_t now = __atomic_add_fetch(a->clock, 1, __ATOMIC_SEQ_CST) / 16 + 1;
        uint64_t key = tu_below(&r, CP_KEYS);
        tu_key k = tu_make_key('q', key);
        int g;
        if (tf_recency_sketch_pace(a->s, k.b, sizeof k.b, now, CP_INTERVAL, &g, NULL) != TF_OK) a->failed = 1;
        if (g) {
            a->grant_key[a->grants] = key;
            a->grant_time[a->grants] = now;
            a->grants++;
        }
    }
    return NULL;
}

/* Many threads pace the same few keys: no key is ever granted twice within
 * its interval, under any interleaving. */
static void test_concurrent_pace(void **state) {
    (void)state;
    for (int blocked = 0; blocked < 2; ++blocked) {
        tf_recency_sketch *s =
            make(4096, 4, 5, TF_RECENCY_SKETCH_CONCURRENT | (blocked ? TF_RECENCY_SKETCH_BLOCKED : 0));
        uint64_t clock = 0;
        cp_arg args[CP_THREADS];
        pthread_t th[CP_THREADS];
        for (unsigned i = 0; i < CP_THREADS; ++i) {
            args[i] = (cp_arg){s, &clock, i, malloc(CP_OPS * 8), malloc(CP_OPS * 8), 0, 0};
            assert_int_equal(pthread_create(&th[i], NULL, cp_worker, &args[i]), 0);
        }
        for (unsigned i = 0; i < CP_THREADS; ++i) pthread_join(th[i], NULL);
        size_t total = 0;
        for (uint64_t key = 0; key < CP_KEYS; ++key) {
            uint64_t times[CP_THREADS * CP_OPS / CP_INTERVAL + 64];
            size_t n = 0;
            for (unsigned i = 0; i < CP_THREADS; ++i) {
                assert_int_equal(args[i].failed, 0);
                for (size_t j = 0; j < args[i].grants; ++j)
                    if (args[i].grant_key[j] == key) {
                        assert_true(n < sizeof times / sizeof times[0]);
                        times[n++] = args[i].grant_time[j];
                    }
            }
            total += n;
            /* at most one grant of this key in any window of one interval */
            assert_true(n == 0 || max_in_window(times, n, CP_INTERVAL) == 1);
        }
        uint64_t span = clock / 16 + 1;
        print_message("# concurrent pace: %zu grants over %llu time units for %d keys\n", total,
                      (unsigned long long)span, CP_KEYS);
        /* and keys do get granted about once per interval */
        assert_true(total >= (size_t)(0.5 * CP_KEYS * (double)span / CP_INTERVAL));
        for (unsigned i = 0; i < CP_THREADS; ++i) {
            free(args[i].grant_key);
            free(args[i].grant_time);
        }
        tf_recency_sketch_free(s);
    }
}

/* ------------------------------------------------------------------ */
/* bad input                                                           */

static void test_new_bad_input(void **state) {
    (void)state;
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0, NULL), TF_ERR_NULL);
    assert_int_equal(tf_recency_sketch_new(0, 2, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 0, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 33, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 9, 0, TF_RECENCY_SKETCH_BLOCKED, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0x4, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0x80000000u, &s), TF_ERR_INVALID_ARGUMENT);
    /* sizes whose product overflows, or that exceed the address space */
    assert_int_equal(tf_recency_sketch_new(UINT64_MAX, 2, 0, 0, &s), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_new(1ULL << 62, 4, 0, 0, &s), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_new(1ULL << 61, 1, 0, 0, &s), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_new((1ULL << 61) / 3, 32, 0, TF_RECENCY_SKETCH_BLOCKED, &s),
                     TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new((1ULL << 61) / 3, 8, 0, TF_RECENCY_SKETCH_BLOCKED, &s), TF_ERR_TOO_LARGE);
    assert_null(s);
    assert_true(strlen(tf_last_error_message()) > 0);
}

/* Every failing call on a live sketch returns its status, says why, and
 * leaves the sketch exactly as it was. */
static void test_calls_bad_input(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 4, 1000);
        size_t n;
        unsigned char *before = snap(s, &n);
        uint64_t t;
        int g;
        double p;
        size_t sz;
        tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT, uninitialized;
        memset(&uninitialized, 0, sizeof uninitialized);
#define BAD(call, status)                                 \
    do {                                                  \
        tf_clear_last_error();                            \
        assert_int_equal((call), (status));               \
        assert_true(strlen(tf_last_error_message()) > 0); \
        assert_unchanged(s, before, n);                   \
    } while (0)
        BAD(tf_recency_sketch_update(NULL, "k", 1, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_update(s, NULL, 1, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_update(s, "k", 1, 0), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_query(NULL, "k", 1, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_query(s, NULL, 3, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_query(s, "k", 1, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(NULL, "k", 1, 5, 1, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(s, NULL, 1, 5, 1, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(s, "k", 1, 5, 1, NULL, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(s, "k", 1, 0, 1, &g, &t), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_pace(s, "k", 1, 5, 0, &g, &t), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_ttl_insert(NULL, "k", 1, 5, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_insert(s, NULL, 1, 5, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_insert(s, "k", 1, 0, 5), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_ttl_insert(s, "k", 1, 5, 0), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_ttl_maybe_live(NULL, "k", 1, 5, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_maybe_live(s, NULL, 1, 5, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_maybe_live(s, "k", 1, 5, NULL, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_maybe_live(s, "k", 1, 0, &g, &t), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_merge(NULL, s), TF_ERR_NULL);
        BAD(tf_recency_sketch_merge(s, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_clear(NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_error_estimate(NULL, 0, &p), TF_ERR_NULL);
        BAD(tf_recency_sketch_error_estimate(s, 0, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_memory(NULL, &sz), TF_ERR_NULL);
        BAD(tf_recency_sketch_memory(s, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_get_info(NULL, &info), TF_ERR_NULL);
        BAD(tf_recency_sketch_get_info(s, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_get_info(s, &uninitialized), TF_ERR_INVALID_ARGUMENT);
        assert_int_equal(uninitialized.width, 0); /* nothing written */
        uninitialized.size = sizeof uninitialized - 1;
        BAD(tf_recency_sketch_get_info(s, &uninitialized), TF_ERR_INVALID_ARGUMENT);
        assert_int_equal(uninitialized.width, 0);
        BAD(tf_recency_sketch_serialized_size(NULL, &sz), TF_ERR_NULL);
        BAD(tf_recency_sketch_serialized_size(s, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_serialize(NULL, before, n, &sz), TF_ERR_NULL);
        BAD(tf_recency_sketch_serialize(s, before, n, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_serialize(s, NULL, n, &sz), TF_ERR_NULL);
#undef BAD
        free(before);
        tf_recency_sketch_free(s);
    }
}

/* ------------------------------------------------------------------ */
/* wire format                                                          */

static void test_serialize_round_trip(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 21, 3000);
        size_t n;
        unsigned char *blob = snap(s, &n);
        assert_int_equal(n, 28 + 24 + 512 * 3 * 8);
        assert_memory_equal(blob, "TFLT", 4);
        tf_recency_sketch *c = NULL;
        OK(tf_recency_sketch_deserialize(blob, n, NULL, &c));
        assert_true(same(s, c));
        const tf_recency_sketch_info i1 = info_of(s), i2 = info_of(c);
        assert_true(i1.width == i2.width && i1.depth == i2.depth && i1.seed == i2.seed && i1.flags == i2.flags &&
                    i1.cells == i2.cells);
        for (uint64_t id = 0; id < 6000; ++id) assert_int_equal(qry(s, id), qry(c, id));
        /* the copy keeps working and stays independent */
        upd(c, 1, 1000000);
        assert_int_equal(qry(c, 1), 1000000);
        assert_true(qry(s, 1) < 1000000);
        free(blob);
        tf_recency_sketch_free(c);
        tf_recency_sketch_free(s);
    }
}

/* serialize for tu_check_serialize_contract */
static tf_status serialize_any(const void *obj, void *buf, size_t capacity, size_t *written) {
    return tf_recency_sketch_serialize((const tf_recency_sketch *)obj, buf, capacity, written);
}

static void test_serialize_buffer_too_small(void **state) {
    (void)state;
    tf_recency_sketch *s = random_sketch(0, 3, 100);
    size_t need;
    OK(tf_recency_sketch_serialized_size(s, &need));
    tu_check_serialize_contract(s, need, serialize_any);
    tf_recency_sketch_free(s);
}

static tf_status try_blob(const unsigned char *b, size_t n) {
    tf_recency_sketch *c = NULL;
    tf_status st = tf_recency_sketch_deserialize(b, n, NULL, &c);
    if (st == TF_OK) {
        assert_non_null(c);
        tf_recency_sketch_free(c);
    } else {
        assert_null(c);
        assert_true(strlen(tf_last_error_message()) > 0);
    }
    return st;
}

static void test_deserialize_truncated(void **state) {
    (void)state;
    tf_recency_sketch *s = random_sketch(TF_RECENCY_SKETCH_BLOCKED, 3, 100);
    size_t n;
    unsigned char *blob = snap(s, &n);
    tu_check_truncations(blob, n, try_blob);
    /* a byte too many */
    unsigned char *longer = malloc(n + 1);
    memcpy(longer, blob, n);
    longer[n] = 0;
    assert_int_equal(try_blob(longer, n + 1), TF_ERR_CORRUPT);
    free(longer);
    free(blob);
    tf_recency_sketch_free(s);
}

/* Every single-bit flip is caught, with the status its field calls for. */
static void test_deserialize_bit_flips(void **state) {
    (void)state;
    tf_recency_sketch *s = make(40, 2, 9, TF_RECENCY_SKETCH_CONCURRENT);
    for (uint64_t i = 0; i < 50; ++i) upd(s, i, 100 + i);
    size_t n;
    unsigned char *blob = snap(s, &n);
    tu_check_bit_flips(blob, n, try_blob);
    free(blob);
    tf_recency_sketch_free(s);
}

/* Blobs with a valid checksum but wrong fields: each gets its status and
 * nothing is allocated from a hostile size. */
static void test_deserialize_hostile_fields(void **state) {
    (void)state;
    tf_recency_sketch *s = make(16, 2, 9, 0);
    upd(s, 1, 5);
    size_t n;
    unsigned char *good = snap(s, &n);
    unsigned char *b = malloc(n);
    struct {
        size_t off;
        uint64_t value;
        int bytes;
        tf_status want;
    } cases[] = {
        {4, 2, 2, TF_ERR_UNSUPPORTED_VERSION},                               /* a future format version */
        {4, 0, 2, TF_ERR_UNSUPPORTED_VERSION}, {6, 2, 2, TF_ERR_WRONG_KIND}, /* another structure's blob */
        {6, 6, 2, TF_ERR_WRONG_KIND},          {6, 999, 2, TF_ERR_WRONG_KIND},
        {8, 0x4, 4, TF_ERR_CORRUPT},                                       /* undefined flag bit */
        {8, 0x80000000u, 4, TF_ERR_CORRUPT},   {20, 0, 8, TF_ERR_CORRUPT}, /* width 0 */
        {20, 17, 8, TF_ERR_CORRUPT},                                       /* width disagrees with the cells */
        {20, 1ULL << 61, 8, TF_ERR_CORRUPT},                               /* huge width: rejected, not allocated */
        {20, UINT64_MAX, 8, TF_ERR_CORRUPT},   {28, 0, 4, TF_ERR_CORRUPT}, /* depth 0 */
        {28, 33, 4, TF_ERR_CORRUPT},                                       /* depth too large */
        {36, 33, 8, TF_ERR_CORRUPT},                                       /* cell count disagrees */
        {36, UINT64_MAX, 8, TF_ERR_CORRUPT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        memcpy(b, good, n);
        tu_put_le(b + cases[i].off, cases[i].value, cases[i].bytes);
        tu_fix_checksum(b, n);
        tf_status st = try_blob(b, n);
        if (st != cases[i].want)
            fail_msg("case %zu: got %s (%s), want %s", i, tf_status_string(st), tf_last_error_message(),
                     tf_status_string(cases[i].want));
    }
    /* blocked flag with a width whose whole lines disagree with the cells */
    memcpy(b, good, n);
    tu_put_le(b + 8, TF_RECENCY_SKETCH_BLOCKED, 4);
    tu_put_le(b + 20, 20, 8);
    tu_fix_checksum(b, n);
    assert_int_equal(try_blob(b, n), TF_ERR_CORRUPT);
    /* the untouched blob (with the package's checksum recomputed) is fine:
     * the checksum is MurmurHash3 x64_128 of libmurmurhash */
    memcpy(b, good, n);
    tu_fix_checksum(b, n);
    assert_memory_equal(b, good, n);
    assert_int_equal(try_blob(b, n), TF_OK);
    free(b);
    free(good);
    tf_recency_sketch_free(s);
}

static void test_deserialize_random_and_null(void **state) {
    (void)state;
    tu_rng r = {2024};
    unsigned char buf[512];
    for (int i = 0; i < 20000; ++i) {
        size_t len = tu_below(&r, sizeof buf);
        for (size_t j = 0; j < len; ++j) buf[j] = (unsigned char)tu_next(&r);
        if (i % 2) memcpy(buf, "TFLT\x01\x00\x01\x00", len < 8 ? len : 8); /* get past the header */
        tf_status st = try_blob(buf, len);
        assert_true(st < 0 && st >= TF_STATUS_MIN);
    }
    tf_recency_sketch *c = NULL;
    assert_int_equal(tf_recency_sketch_deserialize(NULL, 10, NULL, &c), TF_ERR_NULL);
    assert_int_equal(tf_recency_sketch_deserialize(buf, 10, NULL, NULL), TF_ERR_NULL);
    assert_int_equal(tf_recency_sketch_deserialize(NULL, 0, NULL, &c), TF_ERR_NULL);
    assert_null(c);
}

static tf_status load_sketch(const unsigned char *blob, size_t len, const tf_deserialize_options *options,
                             uint64_t *memory) {
    tf_recency_sketch *s = NULL;
    const tf_status st = tf_recency_sketch_deserialize(blob, len, options, &s);
    if (st != TF_OK) {
        assert_null(s);
        return st;
    }
    size_t bytes = 0;
    OK(tf_recency_sketch_memory(s, &bytes));
    *memory = bytes;
    tf_recency_sketch_free(s);
    return TF_OK;
}

/* options->max_memory bounds the sketch deserialize makes: its memory is
 * known from the blob's shape before anything is allocated. */
static void test_deserialize_max_memory(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 8, 500);
        size_t n, bytes;
        unsigned char *blob = snap(s, &n);
        OK(tf_recency_sketch_memory(s, &bytes));
        assert_int_equal(tu_check_max_memory(blob, n, load_sketch), bytes);
        free(blob);
        tf_recency_sketch_free(s);
    }
    /* a table of 4 MiB and more is mapped, in whole pages: known too */
    const uint64_t widths[] = {(1u << 19) - 8, 1u << 19, (1u << 19) + 3};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
        tf_recency_sketch *s = make(widths[i], 1, 3, 0);
        size_t n, bytes;
        unsigned char *blob = snap(s, &n);
        OK(tf_recency_sketch_memory(s, &bytes));
        assert_int_equal(tu_check_max_memory(blob, n, load_sketch), bytes);
        free(blob);
        tf_recency_sketch_free(s);
    }
}

static void check_golden(const char *name, uint32_t flags) {
    char file[256];
    snprintf(file, sizeof file, "%s.tfb", name);
    size_t len;
    unsigned char *golden = tu_read_file(tu_data_path(file), &len);
    if (!golden) fail_msg("cannot read %s", tu_data_path(file));
    /* the same operations today give the same bytes */
    tf_recency_sketch *built = golden_recency_sketch(flags);
    assert_non_null(built);
    size_t n;
    unsigned char *now = snap(built, &n);
    assert_int_equal(n, len);
    assert_memory_equal(now, golden, len);
    /* and the blob reads back with the recorded answers */
    tf_recency_sketch *s = NULL;
    OK(tf_recency_sketch_deserialize(golden, len, NULL, &s));
    snprintf(file, sizeof file, "%s.expected", name);
    size_t elen;
    char *expected = (char *)tu_read_file(tu_data_path(file), &elen);
    if (!expected) fail_msg("cannot read %s", tu_data_path(file));
    expected = realloc(expected, elen + 1);
    expected[elen] = 0;
    unsigned lines = 0, never = 0;
    for (char *line = strtok(expected, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char hex[128];
        unsigned long long want;
        assert_int_equal(sscanf(line, "%127s %llu", hex, &want), 2);
        unsigned char key[64];
        size_t klen = strlen(hex) / 2;
        for (size_t i = 0; i < klen; ++i) {
            unsigned v;
            sscanf(hex + 2 * i, "%2x", &v);
            key[i] = (unsigned char)v;
        }
        uint64_t t;
        OK(tf_recency_sketch_query(s, key, klen, &t));
        assert_int_equal(t, want);
        lines++;
        never += want == 0;
    }
    assert_int_equal(lines, GOLDEN_RS_KEYS + 1);
    assert_true(never > 0 && never <= GOLDEN_RS_KEYS - GOLDEN_RS_INSERTED);
    uint64_t t;
    OK(tf_recency_sketch_query(s, golden_binary_key, sizeof golden_binary_key, &t));
    assert_int_equal(t, 123456789);
    free(expected);
    free(now);
    free(golden);
    tf_recency_sketch_free(s);
    tf_recency_sketch_free(built);
}

static void test_golden_blobs(void **state) {
    (void)state;
    check_golden("recency_sketch_v1", 0);
    check_golden("recency_sketch_blocked_v1", TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_and_info),
        cmocka_unit_test(test_update_query_basics),
        cmocka_unit_test(test_seed_changes_positions),
        cmocka_unit_test(test_batch_matches_single),
        cmocka_unit_test(test_never_older_standard),
        cmocka_unit_test(test_never_older_blocked),
        cmocka_unit_test(test_never_older_concurrent_modes),
        cmocka_unit_test(test_too_new_probability_standard),
        cmocka_unit_test(test_too_new_probability_blocked),
        cmocka_unit_test(test_never_seen_keys),
        cmocka_unit_test(test_dimensions_meet_target),
        cmocka_unit_test(test_new_for_meets_target),
        cmocka_unit_test(test_dimensions_bad_input),
        cmocka_unit_test(test_pace_semantics),
        cmocka_unit_test(test_pace_never_early),
        cmocka_unit_test(test_pace_rate_bound),
        cmocka_unit_test(test_ttl_prefilter),
        cmocka_unit_test(test_merge_laws),
        cmocka_unit_test(test_merge_incompatible),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_concurrent_updates),
        cmocka_unit_test(test_concurrent_pace),
        cmocka_unit_test(test_new_bad_input),
        cmocka_unit_test(test_calls_bad_input),
        cmocka_unit_test(test_serialize_round_trip),
        cmocka_unit_test(test_serialize_buffer_too_small),
        cmocka_unit_test(test_deserialize_truncated),
        cmocka_unit_test(test_deserialize_bit_flips),
        cmocka_unit_test(test_deserialize_hostile_fields),
        cmocka_unit_test(test_deserialize_random_and_null),
        cmocka_unit_test(test_deserialize_max_memory),
        cmocka_unit_test(test_golden_blobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
