/* Recency window: the promise of each mode through the C API, against an
 * exact reference of the stream. Every insert is an insert_report whose
 * answer (the key's previous recency) is checked; at checkpoints a sample
 * of keys is queried as well. HistoricalMembership: e <= r <= (1 + eps) e
 * over 1e6 inserts of a skewed stream and of an adversarial one (keys
 * recurring exactly at the levels' boundaries); ExactCuckoo exact;
 * OptimalSM within D - 1; keys W + slack - 1 or more inserts old (and keys
 * never inserted) "not in window", keys younger than W never. The
 * approximate mode's false matches against delta. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rw_util.h"

/* The long streams: 1e6 inserts, and 2e5 / 3e5 for the other eps (a
 * tenth of each where counts are reduced, TU_REDUCED of test_util.h). */
#define RW_LONG (TU_REDUCED ? 100000 : 1000000)
#define RW_MID(n) (TU_REDUCED ? (n) / 10 : (n))

#define IDS ((uint64_t)1 << 16)

/* A skewed id: most inserts go to few keys, many keys recur rarely. */
static uint64_t skewed(tu_rng *g) {
    const double u = tu_unit(g);
    return (uint64_t)(u * u * u * u * u * (double)IDS) % IDS;
}

/* An adversarial id at insert t: keys recurring with periods that put
 * their recency exactly on the levels' boundaries (K (2^l - 1), K 2^l - 1,
 * K 2^l), a period per segment of the stream, among skewed noise. */
static uint64_t adversarial(tu_rng *g, uint64_t t, uint64_t K, uint64_t W) {
    if (t % 4 == 3) return skewed(g);
    const uint64_t seg = t / 50000;
    unsigned levels = 0;
    while ((K << (levels + 1)) <= W) ++levels;
    const unsigned l = (unsigned)(seg % (levels + 1));
    const uint64_t periods[3] = {K * (((uint64_t)1 << l) - 1) + 1, K << l, (K << l) + 1};
    const uint64_t p = periods[(seg / (levels + 1)) % 3];
    /* ids above IDS / 2 so that the noise rarely meets them */
    return IDS / 2 + (t % p) % (IDS / 2);
}

/* Runs n inserts of a stream through w (insert_report checked at every
 * one, a sample of queries every `every` inserts); returns the largest
 * relative error seen. */
static double run(tf_recency_window *w, uint64_t n, int kind, uint64_t every) {
    const tf_recency_window_info info = rw_info(w);
    rw_ref ref;
    rw_ref_init(&ref, IDS);
    tu_rng g = {info.window * 31 + info.mode + (uint64_t)kind};
    double worst = 0.0;
    uint64_t in_window = 0;
    for (uint64_t t = 0; t < n; ++t) {
        const uint64_t id = kind ? adversarial(&g, t, info.inv_eps, info.window) : skewed(&g);
        const uint64_t r = rw_ref_recency(&ref, id);
        const uint64_t e = rw_insert_report(w, id);
        if (!rw_keeps_promise(&info, r, e)) {
            fprintf(stderr, "insert %llu: id %llu of recency %llu answered %llu (mode %u, W %llu)\n",
                    (unsigned long long)t, (unsigned long long)id, (unsigned long long)r, (unsigned long long)e,
                    info.mode, (unsigned long long)info.window);
            fail();
        }
        if (e != TF_RECENCY_WINDOW_NOT_IN_WINDOW && r != 0) {
            in_window++;
            const double err = (double)(r - e) / (double)r;
            if (err > worst) worst = err;
        }
        rw_ref_insert(&ref, id);
        if ((t + 1) % every == 0)
            for (unsigned q = 0; q < 500; ++q) {
                const uint64_t qid = tu_below(&g, IDS);
                assert_true(rw_keeps_promise(&info, rw_ref_recency(&ref, qid), rw_query(w, qid)));
            }
    }
    printf("# mode %u W=%llu %s: %.3f of the inserts were in the window\n", info.mode, (unsigned long long)info.window,
           kind ? "adversarial" : "skewed", (double)in_window / (double)n);
    if (info.window >= 1000) assert_true(in_window > n / 4); /* the stream does exercise the window */
    const tf_recency_window_stats s = rw_stats(w);
    assert_int_equal(s.inserts, n);
    assert_int_equal(s.lost, 0);
    rw_ref_free(&ref);
    return worst;
}

static void test_historical_skewed(void **state) {
    (void)state;
    static const uint64_t Ks[] = {1, 2, 8, 16};
    for (size_t i = 0; i < 4; ++i) {
        tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_HISTORICAL, 4096, Ks[i]);
        tf_recency_window *w = rw_new(&o);
        const double worst = run(w, Ks[i] == 8 ? RW_LONG : RW_MID(200000), 0, 20011);
        printf("# historical W=4096 eps=1/%llu skewed: worst relative error %.4f\n", (unsigned long long)Ks[i], worst);
        assert_true(worst <= 1.0 / (double)Ks[i] + 1e-12);
        tf_recency_window_free(w);
    }
}

static void test_historical_adversarial(void **state) {
    (void)state;
    static const uint64_t Ks[] = {2, 8};
    for (size_t i = 0; i < 2; ++i) {
        tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_HISTORICAL, 3000, Ks[i]);
        tf_recency_window *w = rw_new(&o);
        const double worst = run(w, Ks[i] == 8 ? RW_LONG : RW_MID(300000), 1, 30011);
        printf("# historical W=3000 eps=1/%llu adversarial: worst relative error %.4f\n", (unsigned long long)Ks[i],
               worst);
        tf_recency_window_free(w);
    }
}

static void test_exact_cuckoo(void **state) {
    (void)state;
    static const uint64_t Ws[] = {1, 2, 1000, 5000};
    for (size_t i = 0; i < 4; ++i) {
        tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_EXACT, Ws[i], 8);
        tf_recency_window *w = rw_new(&o);
        assert_int_equal(rw_info(w).slack, 1);
        run(w, 200000, i % 2, 10007);
        tf_recency_window_free(w);
    }
}

static void test_optimal_sm(void **state) {
    (void)state;
    static const uint64_t blocks[] = {0, 1, 7, 1000};
    for (size_t i = 0; i < 4; ++i) {
        tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_OPTIMAL_SM, 3000, 8);
        o.block = blocks[i];
        tf_recency_window *w = rw_new(&o);
        const tf_recency_window_info info = rw_info(w);
        assert_int_equal(info.block, blocks[i] ? blocks[i] : 3000 / 8);
        assert_int_equal(info.slack, info.block);
        run(w, 200000, (int)(i % 2), 10007);
        tf_recency_window_free(w);
    }
}

/* The window's edges, one key at a time: a key is answered until it is W
 * inserts old and "not in window" from W + slack - 1 on. */
static void test_window_edges(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 200, 4);
        tf_recency_window *w = rw_new(&o);
        const tf_recency_window_info info = rw_info(w);
        assert_int_equal(rw_query(w, 1), TF_RECENCY_WINDOW_NOT_IN_WINDOW);
        rw_insert(w, 1);
        for (uint64_t r = 0; r < 200 + info.slack + 5; ++r) {
            const uint64_t e = rw_query(w, 1);
            if (r < 200) assert_true(e != TF_RECENCY_WINDOW_NOT_IN_WINDOW);
            if (r >= 200 + info.slack - 1) assert_int_equal(e, TF_RECENCY_WINDOW_NOT_IN_WINDOW);
            if (mode == TF_RECENCY_WINDOW_EXACT && r < 200) assert_int_equal(e, r);
            rw_insert(w, 1000 + r);
        }
        tf_recency_window_free(w);
    }
}

/* Approximate signatures: keys never inserted are answered "in the window"
 * at most at the rate delta (the rate of a binomial of mean delta n, plus
 * five standard deviations). */
static void test_approximate_false_matches(void **state) {
    (void)state;
    static const double deltas[] = {0.1, 0.01};
    for (size_t i = 0; i < 2; ++i) {
        tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_HISTORICAL, 4096, 4);
        o.delta = deltas[i];
        tf_recency_window *w = rw_new(&o);
        const tf_recency_window_info info = rw_info(w);
        assert_true(info.signature_bits < 64);
        for (uint64_t t = 0; t < 40000; ++t) rw_insert(w, t);
        const uint64_t n = 200000;
        uint64_t matched = 0;
        for (uint64_t q = 0; q < n; ++q) matched += rw_query(w, 1000000 + q) != TF_RECENCY_WINDOW_NOT_IN_WINDOW;
        const double mean = deltas[i] * (double)n;
        printf("# approximate delta=%g (%u signature bits): false matches %.5f\n", deltas[i], info.signature_bits,
               (double)matched / (double)n);
        assert_true((double)matched <= mean + 5.0 * sqrt(mean));
        /* exact signatures: none */
        tf_recency_window_free(w);
    }
    tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_HISTORICAL, 4096, 4);
    tf_recency_window *w = rw_new(&o);
    assert_int_equal(rw_info(w).signature_bits, 64);
    for (uint64_t t = 0; t < 40000; ++t) rw_insert(w, t);
    for (uint64_t q = 0; q < 100000; ++q) assert_int_equal(rw_query(w, 1000000 + q), TF_RECENCY_WINDOW_NOT_IN_WINDOW);
    tf_recency_window_free(w);
}

TU_MAIN(test_historical_skewed, test_historical_adversarial, test_exact_cuckoo, test_optimal_sm, test_window_edges,
        test_approximate_false_matches)
