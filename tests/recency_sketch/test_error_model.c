/* RecencySketch's error: the one-sided promise (never older than the truth)
 * against an exact reference, the too-new probability against the model,
 * never-seen keys, and the sizing helpers that invert the model. */
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

#include "sketch_util.h"
#include "temporalfilters.h"
#include "test_util.h"

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

/* Blocked sizing for targets that need more than 2^53 lines at some depth
 * (depth d at p needs about n / p^(1/d) lines): the search over the number
 * of lines ends (in doubles it could bisect forever: 21,523,360 keys at
 * 1e-9 and 7,777,777 at 1e-12 never returned) with a table that keeps the
 * target and, where doubles still tell lines apart, one line less does
 * not; or TOO_LARGE where every depth needs more than 2^57 lines. */
static void test_dimensions_blocked_far_targets(void **state) {
    (void)state;
    static const struct {
        uint64_t n;
        double p;
        tf_status want;
    } cases[] = {
        {21523360, 1e-9, TF_OK},
        {7777777, 1e-12, TF_OK}, /* depth 4, about 1.1e17 lines */
        {1000000007ULL, 1e-9, TF_OK},
        {21523360, 1e-12, TF_ERR_TOO_LARGE},
        {1000000007ULL, 1e-12, TF_ERR_TOO_LARGE},
        {1ULL << 40, 1e-9, TF_ERR_TOO_LARGE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        uint64_t w = 0;
        uint32_t d = 0;
        const tf_status st = tf_recency_sketch_dimensions(cases[i].n, cases[i].p, TF_RECENCY_SKETCH_BLOCKED, &w, &d);
        print_message("# blocked, %llu keys at %g: %s, width %llu, depth %u\n", (unsigned long long)cases[i].n,
                      cases[i].p, tf_status_string(st), (unsigned long long)w, d);
        assert_int_equal(st, cases[i].want);
        if (st != TF_OK) continue;
        const uint64_t lines = (w * d + 7) / 8;
        assert_true(model_blocked((double)cases[i].n, (double)lines, d) <= cases[i].p * 1.0001);
        /* d divides 8: w * d is 8 x the lines the search found */
        if (8 % d == 0 && lines < (1ULL << 53))
            assert_true(model_blocked((double)cases[i].n, (double)(lines - 1), d) > cases[i].p * 0.9999);
    }
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

TU_MAIN(test_never_older_standard, test_never_older_blocked, test_never_older_concurrent_modes,
        test_too_new_probability_standard, test_too_new_probability_blocked, test_never_seen_keys,
        test_dimensions_meet_target, test_dimensions_blocked_far_targets, test_new_for_meets_target,
        test_dimensions_bad_input)
