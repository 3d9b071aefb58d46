/* The cost model of a classic query and the chooser that bounds it: the
 * library's expected probes against an independent exact recursion and a
 * Monte-Carlo run of Algorithm 1; the default choice meets its budget and
 * stays within 1.15x of the memory-minimal choice's bits, and is the best
 * pair an exhaustive search finds under both bounds; the flag that asks for
 * the memory-minimal choice, where it is refused; bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ---- an independent model of the query's cost ---------------------------- */

/* Algorithm 1 written as the paper states it, for the recursion and the
 * simulation below: a window starting at i, p matches carried, c matched
 * so far in this window. */
typedef struct {
    uint32_t k;
    size_t S;
    const double *r;
    double *memo; /* E(i, p, c), NaN until computed; i + k shifted */
} probe_rec;

static double rec_E(probe_rec *m, long i, uint32_t p, uint32_t c) {
    if (i < 0) return 0.0;
    double *slot = &m->memo[((size_t)i * m->k + p) * m->k + c];
    if (!isnan(*slot)) return *slot;
    const double q = m->r[i];
    double e = 1.0;
    if (p + c + 1 < m->k) e += q * rec_E(m, i + 1, p, c + 1);
    e += (1.0 - q) * rec_E(m, i - (long)m->k, c, 0);
    *slot = e;
    return e;
}

/* The expected tests of one query from slice S - k, by recursion over
 * (slice, carried, matched). */
static double independent_probes(uint32_t k, const double *r, size_t S) {
    probe_rec m = {k, S, r, malloc(S * k * k * sizeof(double))};
    assert_non_null(m.memo);
    for (size_t i = 0; i < S * k * k; ++i) m.memo[i] = NAN;
    double e = rec_E(&m, (long)(S - k), 0, 0);
    free(m.memo);
    return e;
}

/* One query of Algorithm 1 on bits drawn with probabilities r (slices
 * [force, force + k) set when force >= 0): the number of slices tested. */
static unsigned simulate_query(uint32_t k, const double *r, size_t S, long force, tu_rng *rng, int *found) {
    long i = (long)S - (long)k;
    uint32_t p = 0, c = 0;
    unsigned tests = 0;
    *found = 0;
    while (i >= 0) {
        ++tests;
        int set = (force >= 0 && i >= force && i < force + (long)k) || tu_unit(rng) < r[i];
        if (set) {
            ++c;
            ++i;
            if (p + c == k) {
                *found = 1;
                return tests;
            }
        } else {
            i -= (long)k;
            p = c;
            c = 0;
        }
    }
    return tests;
}

static double bpe(uint32_t k, uint32_t l) { return (double)(k + l) * k / (l * log(2.0)); }

/* ---- the model ------------------------------------------------------------- */

static void test_probe_model(void **state) {
    (void)state;
    double r[64 + 256];
    /* exact agreement with the recursion on a grid */
    const uint32_t ks[] = {1, 2, 3, 5, 8, 13, 16, 25};
    const uint32_t ls[] = {1, 2, 7, 13, 22, 36, 64, 139};
    for (size_t a = 0; a < sizeof ks / sizeof ks[0]; ++a)
        for (size_t b = 0; b < sizeof ls / sizeof ls[0]; ++b) {
            const uint32_t k = ks[a], l = ls[b];
            double lib = -1;
            OK(tf_age_bloom_expected_probes(k, l, &lib, NULL));
            bu_steady_fills(k, l, r);
            const double mine = independent_probes(k, r, k + l);
            if (!(fabs(lib - mine) <= 1e-9 * mine))
                fail_msg("k=%u l=%u: library %.12g, recursion %.12g", k, l, lib, mine);
            assert_true(lib >= 1.0);
        }
    /* k = 1: every slice is tested until the first set one, from the
     * oldest: sum over j of P(the j oldest slices are all clear) */
    for (uint32_t l = 1; l <= 20; ++l) {
        double lib;
        OK(tf_age_bloom_expected_probes(1, l, &lib, NULL));
        bu_steady_fills(1, l, r);
        double e = 0, clear = 1;
        for (long i = (long)l; i >= 0; --i) {
            e += clear;
            clear *= 1 - r[i];
        }
        assert_true(fabs(lib - e) < 1e-12);
    }
    /* against a Monte-Carlo run of Algorithm 1, absent and present (a key
     * whose run starts at a uniform a in 0..l): within 5 standard errors */
    tu_rng rng = {20261126};
    const struct { uint32_t k, l; } shapes[] = {{6, 13}, {14, 36}, {16, 139}, {25, 68}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const uint32_t k = shapes[s].k, l = shapes[s].l;
        double absent, present;
        OK(tf_age_bloom_expected_probes(k, l, &absent, &present));
        bu_steady_fills(k, l, r);
        const int n = 40000;
        for (int with_key = 0; with_key <= 1; ++with_key) {
            double sum = 0, sum2 = 0;
            for (int q = 0; q < n; ++q) {
                int found;
                long force = with_key ? (long)tu_below(&rng, l + 1) : -1;
                unsigned t = simulate_query(k, r, k + l, force, &rng, &found);
                if (with_key) assert_true(found); /* no false negative */
                sum += t;
                sum2 += (double)t * t;
            }
            const double mean = sum / n, sd = sqrt((sum2 / n - mean * mean) / n);
            const double model = with_key ? present : absent;
            print_message("# k=%u l=%u %s: model %.3f probes, simulated %.3f +- %.3f\n", k, l,
                          with_key ? "present" : "absent", model, mean, sd);
            if (fabs(mean - model) > 5 * sd + 1e-9)
                fail_msg("k=%u l=%u %s: model %.4f, simulation %.4f (sd %.4f)", k, l, with_key ? "present" : "absent",
                         model, mean, sd);
            if (with_key) assert_true(model >= k);
        }
    }
    /* the largest shape answers (the present count's cost is bounded) */
    double a, p;
    OK(tf_age_bloom_expected_probes(TF_AGE_BLOOM_MAX_K, 64, &a, &p));
    assert_true(a >= 1 && p >= TF_AGE_BLOOM_MAX_K);
}

/* ---- the chooser ---------------------------------------------------------- */

/* The best pair with k <= 64, l <= 256 whose peak rate meets the target and
 * whose absent queries test at most `budget` slices in expectation, by
 * trying them all (pairs that cannot beat the best so far skip the costly
 * probe count). */
static void exhaustive_budget_choice(double target, double budget, uint32_t *bk, uint32_t *bl) {
    double best = INFINITY;
    double r[64 + 257], prefix[64 + 258];
    *bk = *bl = 0;
    for (uint32_t k = 1; k <= TF_AGE_BLOOM_MAX_K && k / log(2.0) < best; ++k) {
        bu_steady_fills(k, 256, r);
        bu_model_prefix(k, r, k + 256, prefix);
        for (uint32_t l = 1; l <= 256; ++l) {
            if (prefix[k + l] > target) continue;
            const double bits = bpe(k, l);
            if (!(bits < best - 1e-12)) continue;
            if (independent_probes(k, r, k + l) > budget) continue;
            best = bits;
            *bk = k;
            *bl = l;
        }
    }
}

static void test_default_choice(void **state) {
    (void)state;
    const double targets[] = {1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 1e-5, 1e-6};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; ++i) {
        uint32_t k, l, mk, ml;
        OK(tf_age_bloom_choose(targets[i], 0, &k, &l, NULL));
        OK(tf_age_bloom_choose(targets[i], TF_AGE_BLOOM_MIN_MEMORY, &mk, &ml, NULL));
        double absent, present, rate, m_absent;
        OK(tf_age_bloom_expected_probes(k, l, &absent, &present));
        OK(tf_age_bloom_expected_probes(mk, ml, &m_absent, NULL));
        OK(tf_age_bloom_false_positive_rate(k, l, &rate));
        const double ratio = bpe(k, l) / bpe(mk, ml);
        print_message(
            "# %g: default k=%u l=%u %.2f bits (%.3fx), %.2f absent / %.2f present probes; "
            "min-memory k=%u l=%u %.2f bits, %.2f absent probes\n",
            targets[i], k, l, bpe(k, l), ratio, absent, present, mk, ml, bpe(mk, ml), m_absent);
        assert_true(rate <= targets[i]);
        assert_true(absent <= TF_AGE_BLOOM_PROBE_BUDGET);
        /* the bound on what the budget costs in memory */
        if (!(ratio <= 1.15)) fail_msg("%g: the default takes %.3fx the memory-minimal bits", targets[i], ratio);
        /* the best pair under both bounds (the slow search on a few rates) */
        if (targets[i] >= 1e-4 && (i % 2 == 0)) {
            uint32_t ek, el;
            exhaustive_budget_choice(targets[i], TF_AGE_BLOOM_PROBE_BUDGET, &ek, &el);
            if (ek != k || el != l) fail_msg("%g: chooser (%u, %u), exhaustive (%u, %u)", targets[i], k, l, ek, el);
        }
    }
}

/* ---- the flag ---------------------------------------------------------------- */

static void test_min_memory_flag(void **state) {
    (void)state;
    uint32_t k, l, mk, ml;
    OK(tf_age_bloom_choose(1e-3, TF_AGE_BLOOM_MIN_MEMORY, &mk, &ml, NULL));
    OK(tf_age_bloom_choose(1e-3, 0, &k, &l, NULL));
    assert_true(mk == 16 && ml == 139);
    assert_true(k == 14 && l == 36);
    /* new_for follows the choice, and the flag is not recorded */
    tf_age_bloom *f = NULL;
    tf_age_bloom_info info = TF_AGE_BLOOM_INFO_INIT;
    OK(tf_age_bloom_new_for(10000, 1e-3, 7, TF_AGE_BLOOM_MIN_MEMORY, &f));
    OK(tf_age_bloom_get_info(f, &info));
    assert_true(info.k == mk && info.l == ml && info.flags == 0);
    tf_age_bloom_free(f);
    OK(tf_age_bloom_new_for(10000, 1e-3, 7, 0, &f));
    OK(tf_age_bloom_get_info(f, &info));
    assert_true(info.k == k && info.l == l && info.flags == 0);
    tf_age_bloom_free(f);
    /* the time-limited filter: the same pairs */
    tf_time_bloom *t = NULL;
    tf_time_bloom_info tinfo = TF_TIME_BLOOM_INFO_INIT;
    OK(tf_time_bloom_new_for(10000, 1e-3, 1000, 7, TF_TIME_BLOOM_MIN_MEMORY, &t));
    OK(tf_time_bloom_get_info(t, &tinfo));
    assert_true(tinfo.k == mk && tinfo.l == ml && tinfo.flags == 0);
    tf_time_bloom_free(t);
    OK(tf_time_bloom_new_for(10000, 1e-3, 1000, 7, 0, &t));
    OK(tf_time_bloom_get_info(t, &tinfo));
    assert_true(tinfo.k == k && tinfo.l == l);
    tf_time_bloom_free(t);
    /* refused: with the blocked layout, where the caller chose (k, l), and
     * unknown bits beside it; nothing is written or created */
    uint32_t k2 = 99, l2 = 99;
    f = (tf_age_bloom *)&k2;
    BU_EXPECT_ERR(tf_age_bloom_choose(1e-3, TF_AGE_BLOOM_MIN_MEMORY | TF_AGE_BLOOM_BLOCKED, &k2, &l2, NULL),
                  TF_ERR_INVALID_ARGUMENT, "classic layout");
    assert_true(k2 == 99 && l2 == 99);
    BU_EXPECT_ERR(tf_age_bloom_new_for(100, 1e-3, 0, TF_AGE_BLOOM_MIN_MEMORY | TF_AGE_BLOOM_BLOCKED, &f),
                  TF_ERR_INVALID_ARGUMENT, "classic layout");
    BU_EXPECT_ERR(tf_age_bloom_new(3, 4, 256, 0, TF_AGE_BLOOM_MIN_MEMORY, &f), TF_ERR_INVALID_ARGUMENT,
                  "chooses (k, l)");
    BU_EXPECT_ERR(tf_age_bloom_choose(1e-3, TF_AGE_BLOOM_MIN_MEMORY | 4u, &k2, &l2, NULL), TF_ERR_INVALID_ARGUMENT,
                  "unknown bits");
    assert_ptr_equal(f, (tf_age_bloom *)&k2);
    t = (tf_time_bloom *)&k2;
    BU_EXPECT_ERR(tf_time_bloom_new(3, 4, 256, 100, 0, TF_TIME_BLOOM_MIN_MEMORY, &t), TF_ERR_INVALID_ARGUMENT,
                  "chooses (k, l)");
    BU_EXPECT_ERR(tf_time_bloom_new_for(100, 1e-3, 1000, 0, 2u, &t), TF_ERR_INVALID_ARGUMENT, "unknown bits");
    assert_ptr_equal(t, (tf_time_bloom *)&k2);
}

/* ---- bad input ---------------------------------------------------------- */

static void test_expected_probes_bad_input(void **state) {
    (void)state;
    double a = -1, p = -1;
    BU_EXPECT_ERR(tf_age_bloom_expected_probes(3, 4, NULL, NULL), TF_ERR_NULL, "NULL");
    BU_EXPECT_ERR(tf_age_bloom_expected_probes(0, 4, &a, &p), TF_ERR_INVALID_ARGUMENT, "k must be");
    BU_EXPECT_ERR(tf_age_bloom_expected_probes(TF_AGE_BLOOM_MAX_K + 1, 4, &a, &p), TF_ERR_INVALID_ARGUMENT,
                  "k must be");
    BU_EXPECT_ERR(tf_age_bloom_expected_probes(3, 0, &a, &p), TF_ERR_INVALID_ARGUMENT, "l must be");
    BU_EXPECT_ERR(tf_age_bloom_expected_probes(3, TF_AGE_BLOOM_MAX_L + 1, &a, &p), TF_ERR_INVALID_ARGUMENT,
                  "l must be");
    assert_true(a == -1 && p == -1);
    /* either output alone */
    OK(tf_age_bloom_expected_probes(3, 4, &a, NULL));
    OK(tf_age_bloom_expected_probes(3, 4, NULL, &p));
    assert_true(a >= 1 && p >= 3);
}

BU_DEFINE_GROUP(age_probes_tests, cmocka_unit_test(test_probe_model), cmocka_unit_test(test_default_choice),
                cmocka_unit_test(test_min_memory_flag), cmocka_unit_test(test_expected_probes_bad_input));
