/* The time-limited Bloom filter's shape: what new and new_for build, the
 * versioned info and stats structs, and the span boundary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ------------------------------------------------------------------ */
/* shape                                                               */

/* tf_time_bloom_get_stats at time 1 as a tu_get_fn */
static tf_status get_stats_at_1(const void *f, void *out) { return tf_time_bloom_get_stats(f, 1, out); }

static void test_new_shape(void **state) {
    (void)state;
    /* the paper's setup: 0.1, 300 s in ms, 1000 per span */
    tf_time_bloom *f = tb_make_for(0.1, 300000, 1000, 9);
    uint32_t k, l, seed;
    uint64_t span;
    OK(tb_info(f, &k, &l, &span, &seed));
    assert_true(k == 6 && l == 13 && span == 300000 && seed == 9);
    for (uint64_t i = 0; i < 19; ++i) {
        uint64_t b;
        OK(tf_time_bloom_slice_bits(f, i, &b));
        assert_int_equal(b, 667); /* ceil(6 * ceil(1000 / 13) / ln 2) */
    }
    OK(tb_info(f, NULL, NULL, NULL, NULL));
    /* the versioned structs, for a caller built against a newer, longer
     * struct */
    tf_time_bloom_info info;
    tu_check_versioned_out(f, sizeof info, tu_time_bloom.get_info, &info);
    assert_true(info.k == 6 && info.l == 13 && info.span == 300000 && info.seed == 9 && info.flags == 0);
    tf_time_bloom_stats st;
    tu_check_versioned_out(f, sizeof st, get_stats_at_1, &st);
    assert_true(st.slices == 19 && st.inserts == 0 && st.bits == 19 * 667);
    tf_time_bloom_free(f);
    const double rates[] = {0.1, 0.01, 1e-3, 1e-4};
    const uint64_t caps[] = {1, 1000, 123456};
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 3; ++j) {
            uint32_t ck, cl;
            OK(tf_age_bloom_choose(rates[i], 0, &ck, &cl, NULL));
            f = tb_make_for(rates[i], 1000000, caps[j], 4);
            OK(tb_info(f, &k, &l, &span, NULL));
            assert_true(k == ck && l == cl && span == 1000000);
            uint64_t m = (uint64_t)ceil(k * ceil((double)caps[j] / l) / kLn2);
            if (m < 64) m = 64;
            uint64_t slices, bits, inserts;
            double bpe, fpr;
            OK(tb_stats(f, 1, &slices, &bits, &bpe, &inserts, &fpr));
            assert_int_equal(slices, k + l);
            assert_int_equal(bits, (k + l) * m);
            assert_true(bpe == 0.0); /* no element in the span */
            assert_int_equal(inserts, 0);
            assert_true(fpr == 0.0);
            for (uint64_t s = 0; s < slices; ++s) {
                uint64_t b;
                OK(tf_time_bloom_slice_bits(f, s, &b));
                assert_int_equal(b, m);
            }
            uint64_t b = 5;
            assert_int_equal(tf_time_bloom_slice_bits(f, slices, &b), TF_ERR_INVALID_ARGUMENT);
            assert_int_equal(b, 5);
            size_t bytes;
            OK(tf_time_bloom_memory(f, &bytes));
            assert_true(bytes >= bits / 8 && bytes <= bits / 8 + 256 * (k + l) + 4096);
            tf_time_bloom_free(f);
        }
    /* the low-level constructor; span >= l is the only constraint on span */
    f = tb_make(3, 4, 1000, 4, 1);
    assert_int_equal(tb_n_slices(f, 1), 7);
    assert_int_equal(tb_total_bits(f, 1), 7000);
    tf_time_bloom_free(f);
    f = tb_make(64, 1024, 64, 1024, 1);
    assert_int_equal(tb_n_slices(f, 1), 1088);
    tf_time_bloom_free(f);
}

/* One key alone: present at every now with now - span <= t, absent after
 * (then every slice is older than the span: nothing can be present). */
static void test_span_boundary(void **state) {
    (void)state;
    tf_time_bloom *f = tb_make(4, 4, 1024, 100, 3);
    OK(tf_time_bloom_add(f, "a", 1, 50));
    int p;
    const uint64_t in[] = {50, 51, 100, 149, 150, 1 /* clamped to 50 */, 49};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; ++i) {
        OK(tf_time_bloom_contains(f, "a", 1, in[i], &p));
        assert_int_equal(p, 1);
    }
    double bpe = tb_bits_per_elt(f, 150);
    assert_true(fabs(bpe - 8 * 1024.0) < 1e-9); /* 8 slices, one element */
    const uint64_t out[] = {151, 152, 1000, UINT64_MAX};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; ++i) {
        OK(tf_time_bloom_contains(f, "a", 1, out[i], &p));
        assert_int_equal(p, 0);
        assert_true(tb_fpr_now(f, out[i]) == 0.0);
        assert_true(tb_bits_per_elt(f, out[i]) == 0.0);
    }
    /* queries do not move the clock: "a" is still there at 150 */
    OK(tf_time_bloom_contains(f, "a", 1, 150, &p));
    assert_int_equal(p, 1);
    /* the empty key, binary keys */
    OK(tf_time_bloom_contains(f, NULL, 0, 60, &p));
    assert_int_equal(p, 0);
    OK(tf_time_bloom_add(f, NULL, 0, 60));
    OK(tf_time_bloom_contains(f, "", 0, 60, &p));
    assert_int_equal(p, 1);
    OK(tf_time_bloom_add(f, "a\0b", 3, 70));
    OK(tf_time_bloom_contains(f, "a\0b", 3, 170, &p));
    assert_int_equal(p, 1);
    OK(tf_time_bloom_contains(f, "a\0b", 3, 171, &p));
    assert_int_equal(p, 0);
    /* UINT64_MAX is a valid time */
    OK(tf_time_bloom_add(f, "z", 1, UINT64_MAX));
    OK(tf_time_bloom_contains(f, "z", 1, UINT64_MAX, &p));
    assert_int_equal(p, 1);
    OK(tf_time_bloom_contains(f, "a\0b", 3, UINT64_MAX, &p));
    assert_int_equal(p, 0);
    tf_time_bloom_free(f);
}

/* As the count window's filter (age_window.c): a large filter's slices
 * take memory when they are used, not when it is made. */
static void test_large_filter_memory_is_taken_when_used(void **state) {
    (void)state;
    const uint64_t before = tu_resident_bytes();
    tf_time_bloom *f = NULL;
    OK(tf_time_bloom_new_for(100000000, 1e-3, 1000, 1, 0, &f));
    size_t bytes = 0;
    OK(tf_time_bloom_memory(f, &bytes));
    bu_check_made_lazily(before, bytes);
    for (uint64_t id = 0; id < 1000; ++id) tb_add_id(f, 'z', id, 10);
    for (uint64_t id = 0; id < 1000; ++id) assert_int_equal(tb_has_id(f, 'z', id, 10), 1);
    tf_time_bloom_free(f);
}

BU_DEFINE_GROUP(time_shape_tests, cmocka_unit_test(test_new_shape), cmocka_unit_test(test_span_boundary),
                cmocka_unit_test(test_large_filter_memory_is_taken_when_used));
