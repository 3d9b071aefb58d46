/* The age-partitioned Bloom filter's calls: keys (empty, binary), seeds,
 * add_if_absent, clear, and the versioned info and stats structs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ------------------------------------------------------------------ */
/* operations                                                          */

/* tf_age_bloom_get_stats as a tu_get_fn */
static tf_status get_stats(const void *f, void *out) { return tf_age_bloom_get_stats(f, out); }

static void test_basics(void **state) {
    (void)state;
    tf_age_bloom *f = ab_make_for(0.01, 1000, 1);
    int p = 7;
    OK(tf_age_bloom_contains(f, "alpha", 5, &p));
    assert_int_equal(p, 0);
    OK(tf_age_bloom_add(f, "alpha", 5));
    OK(tf_age_bloom_contains(f, "alpha", 5, &p));
    assert_int_equal(p, 1);
    /* the empty key is a key; NULL with length 0 is the empty key */
    OK(tf_age_bloom_contains(f, NULL, 0, &p));
    assert_int_equal(p, 0);
    OK(tf_age_bloom_add(f, NULL, 0));
    OK(tf_age_bloom_contains(f, "", 0, &p));
    assert_int_equal(p, 1);
    /* binary keys: NUL bytes count, prefixes differ */
    OK(tf_age_bloom_add(f, "a\0b", 3));
    OK(tf_age_bloom_contains(f, "a\0b", 3, &p));
    assert_int_equal(p, 1);
    int fp = 0;
    OK(tf_age_bloom_contains(f, "a\0c", 3, &p));
    fp += p;
    OK(tf_age_bloom_contains(f, "a", 1, &p));
    fp += p;
    assert_true(fp <= 1); /* each a false positive with probability < 1% */
    /* the versioned structs, for a caller built against a newer, longer
     * struct */
    tf_age_bloom_info info;
    tu_check_versioned_out(f, sizeof info, tu_age_bloom.get_info, &info);
    assert_int_equal(info.flags, 0);
    assert_int_equal(info.seed, 1);
    assert_true(info.capacity >= 1000 && info.capacity == info.l * info.generation);
    tf_age_bloom_stats st;
    tu_check_versioned_out(f, sizeof st, get_stats, &st);
    assert_int_equal(st.inserts, 3);
    assert_int_equal(st.slices, info.k + info.l);
    tf_age_bloom_free(f);
}

static void test_seed_changes_positions(void **state) {
    (void)state;
    tf_age_bloom *b = ab_make(2, 2, 64, 2);
    uint32_t s;
    OK(ab_info(b, NULL, NULL, NULL, NULL, NULL, &s));
    assert_int_equal(s, 2);
    bu_check_seeds_differ(&bu_age, ab_make(2, 2, 64, 1), b);
}

/* add_if_absent is contains, then add when absent: same answers and the
 * same bytes as doing it by hand; a present key changes nothing. */
static void test_add_if_absent(void **state) {
    (void)state;
    bu_check_add_if_absent(&bu_age, ab_make_for(0.05, 2000, 8), ab_make_for(0.05, 2000, 8), 4000);
}

static void test_clear(void **state) {
    (void)state;
    tf_age_bloom *f = ab_filled(ab_make_for(0.01, 3000, 4), 'c', 10000);
    uint32_t k0, l0, s0;
    uint64_t m0, g0, c0;
    OK(ab_info(f, &k0, &l0, &m0, &g0, &c0, &s0));
    OK(tf_age_bloom_clear(f));
    /* every slice is empty: nothing can be present */
    for (uint64_t i = 0; i < 20000; ++i) assert_int_equal(ab_has_id(f, 'c', i), 0);
    uint64_t slices, bits, inserts;
    double fpr;
    OK(ab_stats(f, &slices, &bits, NULL, &inserts, &fpr));
    assert_int_equal(inserts, 0);
    assert_true(fpr == 0.0);
    blob_view v = ab_view(f);
    for (uint32_t i = 0; i < v.S; ++i) {
        assert_int_equal(v.s[i].pop, 0);
        assert_int_equal(v.s[i].n, 0);
    }
    assert_int_equal(v.until_shift, g0);
    free(v.s);
    /* the shape stays */
    uint32_t k, l, s;
    uint64_t m, g, c;
    OK(ab_info(f, &k, &l, &m, &g, &c, &s));
    assert_true(k == k0 && l == l0 && m == m0 && g == g0 && c == c0 && s == s0);
    assert_int_equal(slices, k + l);
    /* and it works like a new filter: the window again */
    uint64_t checked = 0;
    ab_check_window(f, 30000, 9, &checked);
    OK(tf_age_bloom_clear(f));
    OK(tf_age_bloom_clear(f)); /* twice is fine */
    tf_age_bloom_free(f);
    tf_age_bloom_free(NULL); /* a no-op */
}

BU_DEFINE_GROUP(age_ops_tests, cmocka_unit_test(test_basics), cmocka_unit_test(test_seed_changes_positions),
                cmocka_unit_test(test_add_if_absent), cmocka_unit_test(test_clear));
