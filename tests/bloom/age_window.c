/* The count window: the shape new_for gives, the shifts, and the window
 * guarantee (every key among the last l * g inserts is found) against an
 * exact record of the inserts, at the boundary too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ------------------------------------------------------------------ */
/* shape                                                               */

static void test_new_for_shape(void **state) {
    (void)state;
    const double rates[] = {0.1, 0.01, 1e-3, 1e-4};
    const uint64_t caps[] = {1, 100, 12345, 1000000};
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 4; ++j) {
            tf_age_bloom *f = ab_make_for(rates[i], caps[j], 5);
            uint32_t k, l, ck, cl, seed;
            uint64_t m, g, cap, slices, bits, inserts;
            double bpe, fpr;
            OK(tf_age_bloom_choose(rates[i], 0, &ck, &cl, NULL));
            OK(ab_info(f, &k, &l, &m, &g, &cap, &seed));
            assert_int_equal(k, ck);
            assert_int_equal(l, cl);
            assert_int_equal(seed, 5);
            assert_int_equal(g, (caps[j] + l - 1) / l);
            uint64_t want_m = (uint64_t)ceil(k * (double)g / kLn2);
            if (want_m < 64) want_m = 64;
            assert_int_equal(m, want_m);
            assert_int_equal(cap, (uint64_t)l * g);
            assert_true(cap >= caps[j]);
            OK(ab_stats(f, &slices, &bits, &bpe, &inserts, &fpr));
            assert_int_equal(slices, k + l);
            assert_int_equal(bits, (k + l) * m);
            assert_true(fabs(bpe - (double)bits / (double)cap) < 1e-9 * bpe);
            assert_int_equal(inserts, 0);
            assert_true(fpr == 0.0);
            /* bits per element of capacity: the formula, up to rounding m up */
            if (caps[j] >= 12345) {
                double formula;
                OK(tf_age_bloom_bits_per_element(k, l, &formula));
                assert_true(bpe >= formula - 1e-9 && bpe <= formula * 1.01);
            }
            size_t bytes;
            OK(tf_age_bloom_memory(f, &bytes));
            assert_true(bytes >= bits / 8 && bytes <= bits / 8 + 256 * (k + l) + 4096);
            blob_view v = ab_view(f);
            assert_int_equal(v.S, k + l);
            for (uint32_t s = 0; s < v.S; ++s) {
                assert_int_equal(v.s[s].m, m);
                assert_int_equal(v.s[s].pop, 0);
            }
            free(v.s);
            tf_age_bloom_free(f);
        }
    /* the low-level constructor: g = max(1, floor(m ln 2 / k)) */
    const struct {
        uint32_t k, l;
        uint64_t m, g;
    } cases[] = {{1, 1, 64, 44},     {3, 4, 200, 46}, {64, 1024, 64, 1},
                 {6, 13, 1998, 230}, {64, 1, 91, 1},  {10, 5, 1000, 69}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        tf_age_bloom *f = ab_make(cases[i].k, cases[i].l, cases[i].m, 1);
        uint64_t m, g, cap;
        OK(ab_info(f, NULL, NULL, &m, &g, &cap, NULL));
        assert_int_equal(m, cases[i].m);
        assert_int_equal(g, cases[i].g);
        assert_int_equal(cap, cases[i].l * cases[i].g);
        OK(ab_info(f, NULL, NULL, NULL, NULL, NULL, NULL));
        OK(ab_stats(f, NULL, NULL, NULL, NULL, NULL));
        tf_age_bloom_free(f);
    }
}

/* The slices move as section 5.2 says, checked in the payload against a
 * counter model: an insert counts in s_0..s_{k-1}; after g inserts the next
 * insert first shifts (the oldest slice comes back empty as s_0, with the
 * next serial). Set bits never exceed the inserts of a slice. */
static void test_shift_mechanics(void **state) {
    (void)state;
    const uint32_t k = 3, l = 5;
    const uint64_t g = 69;
    tf_age_bloom *f = ab_make_with_generation(k, l, 300, 9, g);
    uint64_t n_model[8] = {0}, serial_model[8], next = k + l, until = g;
    for (uint32_t i = 0; i < k + l; ++i) serial_model[i] = k + l - 1 - i;
    for (uint64_t ins = 1; ins <= 20 * g; ++ins) {
        if (until == 0) {
            memmove(n_model + 1, n_model, 7 * sizeof n_model[0]);
            memmove(serial_model + 1, serial_model, 7 * sizeof serial_model[0]);
            n_model[0] = 0;
            serial_model[0] = next++;
            until = g;
        }
        for (uint32_t i = 0; i < k; ++i) n_model[i]++;
        until--;
        ab_add_id(f, 's', ins);
        if (ins % 7 == 0 || until <= 1 || until >= g - 1) {
            blob_view v = ab_view(f);
            assert_int_equal(v.S, k + l);
            assert_int_equal(v.inserts, ins);
            assert_int_equal(v.until_shift, until);
            assert_int_equal(v.next_serial, next);
            for (uint32_t i = 0; i < k + l; ++i) {
                if (v.s[i].n != n_model[i] || v.s[i].serial != serial_model[i])
                    fail_msg("after %llu inserts, slice %u: n %llu serial %llu, model %llu %llu",
                             (unsigned long long)ins, i, (unsigned long long)v.s[i].n,
                             (unsigned long long)v.s[i].serial, (unsigned long long)n_model[i],
                             (unsigned long long)serial_model[i]);
                assert_true(v.s[i].pop <= v.s[i].n);
                assert_true(v.s[i].pop >= (v.s[i].n ? 1 : 0));
            }
            free(v.s);
        }
    }
    tf_age_bloom_free(f);
}

/* ------------------------------------------------------------------ */
/* the window: no false negatives among the last l * g inserts           */

static void test_no_false_negatives(void **state) {
    (void)state;
    uint64_t checked = 0;
    /* sized by the chooser */
    ab_window_then_free(ab_make_for(0.01, 4000, 11), (uint64_t)(kStream * 1000000), 1, &checked);
    ab_window_then_free(ab_make_for(0.1, 3000, 12), 100000, 2, &checked);
    /* corners of the low-level constructor */
    ab_window_then_free(ab_make(1, 1, 64, 13), 20000, 3, &checked);    /* k = 1, l = 1, g = 44 */
    ab_window_then_free(ab_make(5, 1, 100, 14), 20000, 4, &checked);   /* l = 1: the window is one generation */
    ab_window_then_free(ab_make(64, 1024, 64, 15), 5000, 5, &checked); /* g = 1: a shift per insert, 1088 slices */
    ab_window_then_free(ab_make(7, 3, 5000, 16), 50000, 6, &checked);  /* l < k */
    print_message("# %llu window keys checked present\n", (unsigned long long)checked);
}

/* The capacity guarantee exactly at l*g, and what happens after: a key
 * inserted d inserts ago is present for every d <= l*g. After the (l+1)-th
 * shift since its insert (d = (l+1)*g for every key) its oldest slice is
 * gone and it is found only if the slice next to its k-1 remaining ones
 * holds its bit: probability ~ that slice's fill ratio, 1/2. Each further
 * shift takes one more slice (~1/4, ...), until after k more shifts it is
 * an absent key like any other. */
static void test_window_boundary(void **state) {
    (void)state;
    const uint32_t k = 8, l = 10;
    const uint64_t g = 200;
    tf_age_bloom *f = ab_make_with_generation(k, l, 2309, 21, g);
    const uint64_t W = l * g;
    const uint64_t d[] = {1, W / 2, W - 1, W, W + 1, W + g / 2, W + g - 1, W + g, W + 2 * g, W + (k + 1) * g};
    enum { ND = sizeof d / sizeof d[0] };
    uint64_t present[ND] = {0}, samples = 0;
    uint64_t n = 0;
    const uint64_t warm = (k + l + 1) * g + W + (k + 1) * g;
    const uint64_t measure = 30 * g;
    for (; n < warm + measure; ++n) {
        ab_add_id(f, 'b', n);
        if (n + 1 < warm) continue;
        samples++;
        for (size_t j = 0; j < ND; ++j) present[j] += (uint64_t)ab_has_id(f, 'b', n - d[j]);
    }
    double fpr_model = bu_model_steady(k, l);
    for (size_t j = 0; j < ND; ++j)
        print_message("# k=%u l=%u g=%llu: key inserted %llu ago (%.3f windows) present %.4f\n", k, l,
                      (unsigned long long)g, (unsigned long long)d[j], (double)d[j] / (double)W,
                      (double)present[j] / (double)samples);
    /* d <= l*g: always */
    for (size_t j = 0; j < 4; ++j) assert_int_equal(present[j], samples);
    /* d = l*g + 1: the keys inserted last in their generation lost a slice
     * (1/g of them), the rest are still guaranteed */
    assert_true(present[4] < samples || samples < g);
    assert_true(present[4] >= samples - samples / g - 1);
    /* d = l*g + g/2: half guaranteed, half found with probability ~1/2 */
    double h = (double)present[5] / samples;
    assert_true(h > 0.65 && h < 0.85);
    /* d = (l+1)*g: every key lost exactly one slice: ~1/2 (the fill of s_l;
     * 6000 samples: sd 0.007, plus the fill's own spread) */
    double one = (double)present[7] / samples;
    assert_true(one > 0.42 && one < 0.60);
    /* d = (l+2)*g: two slices lost, ~1/4 */
    double two = (double)present[8] / samples;
    assert_true(two > 0.17 && two < 0.33);
    /* d = (l+k+1)*g: nothing of it is left: the false-positive rate */
    double gone = (double)present[9] / samples;
    assert_true(gone <= fpr_model + 5 * sqrt(fpr_model / samples) + 0.02);
    tf_age_bloom_free(f);
}

/* A large filter's slices take memory when they are used, not when the
 * filter is made (zeroed blocks, never written at creation): 1e8 keys at
 * 1e-3 hold about 330 MiB, of which creation makes at most 16 MiB
 * resident (a filter that zero-filled its slices made all of it
 * resident); the filter then works as any other. */
static void test_large_filter_memory_is_taken_when_used(void **state) {
    (void)state;
    const uint64_t before = tu_resident_bytes();
    tf_age_bloom *f = NULL;
    OK(tf_age_bloom_new_for(100000000, 1e-3, 1, 0, &f));
    size_t bytes = 0;
    OK(tf_age_bloom_memory(f, &bytes));
    bu_check_made_lazily(before, bytes);
    for (uint64_t id = 0; id < 1000; ++id) ab_add_id(f, 'z', id);
    for (uint64_t id = 0; id < 1000; ++id) assert_int_equal(ab_has_id(f, 'z', id), 1);
    tf_age_bloom_free(f);
}

BU_DEFINE_GROUP(age_window_tests, cmocka_unit_test(test_new_for_shape), cmocka_unit_test(test_shift_mechanics),
                cmocka_unit_test(test_no_false_negatives), cmocka_unit_test(test_window_boundary),
                cmocka_unit_test(test_large_filter_memory_is_taken_when_used));
