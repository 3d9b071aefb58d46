/* The time-limited Bloom filter's calls: add_if_absent, clear, stats,
 * seeds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ------------------------------------------------------------------ */
/* operations                                                          */

/* add_if_absent is contains, then add when absent: same answers and the
 * same bytes as doing it by hand; a present key changes nothing, not even
 * the clock. */
static void test_add_if_absent(void **state) {
    (void)state;
    bu_check_add_if_absent(&bu_time, tb_make_for(0.05, 3000, 1000, 8), tb_make_for(0.05, 3000, 1000, 8), 3000);
}

static void test_clear(void **state) {
    (void)state;
    tf_time_bloom *f = tb_make_for(0.01, 5000, 500, 4);
    uint64_t now = 1;
    for (uint64_t i = 0; i < 20000; ++i) tb_add_id(f, 'c', i, now += (i % 3 == 0));
    for (uint64_t i = 0; i < 40000; ++i) tb_add_id(f, 'c', i, now += 2); /* more slices */
    const uint64_t slices = tb_n_slices(f, now);
    uint64_t *sizes = malloc(slices * sizeof *sizes);
    for (uint64_t i = 0; i < slices; ++i) OK(tf_time_bloom_slice_bits(f, i, &sizes[i]));
    uint32_t k0, l0, s0;
    uint64_t span0;
    OK(tb_info(f, &k0, &l0, &span0, &s0));
    OK(tf_time_bloom_clear(f));
    for (uint64_t i = 0; i < 40000; ++i) assert_int_equal(tb_has_id(f, 'c', i, now), 0);
    uint64_t inserts, bits;
    double bpe, fpr;
    OK(tb_stats(f, now, NULL, &bits, &bpe, &inserts, &fpr));
    assert_int_equal(inserts, 0);
    assert_true(fpr == 0.0 && bpe == 0.0);
    /* slices keep their sizes */
    assert_int_equal(tb_n_slices(f, now), slices);
    for (uint64_t i = 0; i < slices; ++i) {
        uint64_t b;
        OK(tf_time_bloom_slice_bits(f, i, &b));
        assert_int_equal(b, sizes[i]);
    }
    blob_view v = tb_view(f);
    for (uint32_t i = 0; i < v.S; ++i) assert_true(v.s[i].pop == 0 && v.s[i].n == 0 && v.s[i].t == 0);
    free(v.s);
    uint32_t k, l, s;
    uint64_t span;
    OK(tb_info(f, &k, &l, &span, &s));
    assert_true(k == k0 && l == l0 && span == span0 && s == s0);
    /* and it works again: the span guarantee, with the clock going on */
    tb_stream st;
    tb_stream_init(&st, f, 60000, 12);
    double clock = (double)now;
    uint64_t next_sweep = now + span;
    tb_poisson_phase(&st, &clock, 2.0, 20000, &next_sweep);
    tb_sweep(&st, st.now);
    tb_stream_free(&st);
    OK(tf_time_bloom_clear(f));
    OK(tf_time_bloom_clear(f));
    free(sizes);
    tf_time_bloom_free(f);
    tf_time_bloom_free(NULL);
}

/* stats against what the test knows: inserts, the elements within the
 * span (bits_per_element = bits / those), fpr_now against the model of the
 * actual fills. */
static void test_stats(void **state) {
    (void)state;
    const uint64_t span = 100000;
    tf_time_bloom *f = tb_make_for(0.01, span, 100000, 6);
    uint64_t now = 0, *times = malloc(60000 * sizeof *times);
    assert_non_null(times);
    for (uint64_t i = 0; i < 60000; ++i) {
        now += 1 + (i / 20000); /* 1, then 1/2, then 1/3 per unit */
        times[i] = now;
        tb_add_id(f, 's', i, now);
        if (i % 4999 != 0) continue;
        uint64_t slices, bits, inserts;
        double bpe, fpr;
        OK(tb_stats(f, now, &slices, &bits, &bpe, &inserts, &fpr));
        assert_int_equal(inserts, i + 1);
        uint64_t sum = 0;
        for (uint64_t s = 0; s < slices; ++s) {
            uint64_t b;
            OK(tf_time_bloom_slice_bits(f, s, &b));
            sum += b;
        }
        assert_int_equal(sum, bits);
        /* elements in the span: the library counts whole generations, so
         * the exact count (keys with t >= now - span) is a lower bound up to
         * a generation's worth */
        uint64_t exact = 0;
        for (uint64_t j = 0; j <= i; ++j) exact += times[j] + span >= now;
        const double elements = (double)bits / bpe;
        assert_true(elements >= 0.9 * (double)exact && elements <= 1.15 * (double)exact);
        /* fpr_now: the dynamic program over the measured fills */
        double act = tb_model_actual(f, now);
        assert_true(fabs(act - fpr) <= 1e-9 * fpr);
    }
    free(times);
    tf_time_bloom_free(f);
}

static void test_seed_changes_positions(void **state) {
    (void)state;
    bu_check_seeds_differ(&bu_time, tb_make(2, 2, 64, 100, 1), tb_make(2, 2, 64, 100, 2));
}

BU_DEFINE_GROUP(time_ops_tests, cmocka_unit_test(test_add_if_absent), cmocka_unit_test(test_clear),
                cmocka_unit_test(test_stats), cmocka_unit_test(test_seed_changes_positions));
