/* The age-partitioned Bloom filter on bad input: sizing, constructors and
 * every call; a failed call says why and leaves the filter as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ------------------------------------------------------------------ */
/* bad input                                                           */

static void test_sizing_bad_input(void **state) {
    (void)state;
    uint32_t k = 3, l = 3;
    double d = 5;
    const double bad_rates[] = {0.0, 1.0, -0.1, 1.5, NAN, INFINITY, -INFINITY, -0.0};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; ++i) {
        tf_clear_last_error();
        assert_int_equal(tf_age_bloom_choose(bad_rates[i], 0, &k, &l, NULL), TF_ERR_INVALID_ARGUMENT);
        assert_true(strlen(tf_last_error_message()) > 0);
        tf_age_bloom *f = NULL;
        assert_int_equal(tf_age_bloom_new_for(1000, bad_rates[i], 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
        assert_null(f);
    }
    assert_true(k == 3 && l == 3); /* out-parameters untouched */
    assert_int_equal(tf_age_bloom_choose(0.1, 0, NULL, &l, NULL), TF_ERR_NULL);
    assert_int_equal(tf_age_bloom_choose(0.1, 0, &k, NULL, NULL), TF_ERR_NULL);
    const uint32_t bad_k[] = {0, 65, UINT32_MAX};
    const uint32_t bad_l[] = {0, 1025, UINT32_MAX};
    for (size_t i = 0; i < 3; ++i) {
        tf_clear_last_error();
        assert_int_equal(tf_age_bloom_false_positive_rate(bad_k[i], 5, &d), TF_ERR_INVALID_ARGUMENT);
        assert_true(strlen(tf_last_error_message()) > 0);
        assert_int_equal(tf_age_bloom_false_positive_rate(5, bad_l[i], &d), TF_ERR_INVALID_ARGUMENT);
        assert_int_equal(tf_age_bloom_bits_per_element(bad_k[i], 5, &d), TF_ERR_INVALID_ARGUMENT);
        assert_int_equal(tf_age_bloom_bits_per_element(5, bad_l[i], &d), TF_ERR_INVALID_ARGUMENT);
    }
    assert_true(d == 5);
    assert_int_equal(tf_age_bloom_false_positive_rate(5, 5, NULL), TF_ERR_NULL);
    assert_int_equal(tf_age_bloom_bits_per_element(5, 5, NULL), TF_ERR_NULL);
    /* the limits themselves are fine */
    OK(tf_age_bloom_false_positive_rate(TF_AGE_BLOOM_MAX_K, TF_AGE_BLOOM_MAX_L, &d));
    assert_true(d > 0 && d < 1);
    OK(tf_age_bloom_bits_per_element(1, 1, &d));
}

static void test_new_bad_input(void **state) {
    (void)state;
    tf_age_bloom *f = NULL;
#define BADNEW(call, status) TU_REFUSED_NEW(call, status, f)
    BADNEW(tf_age_bloom_new_for(1000, 0.01, 0, 0, NULL), TF_ERR_NULL);
    BADNEW(tf_age_bloom_new_for(0, 0.01, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new_for(1000, NAN, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new_for(1000, 1e-300, 0, 0, &f), TF_ERR_TOO_LARGE);
    /* capacities whose slices would pass 2^40 bits (and the largest ones:
     * test_new_for_huge_capacity) */
    BADNEW(tf_age_bloom_new_for(1ULL << 50, 0.01, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_age_bloom_new_for(UINT64_MAX / 2, 0.01, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_age_bloom_new(3, 3, 1000, 0, 0, NULL), TF_ERR_NULL);
    BADNEW(tf_age_bloom_new(0, 3, 1000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new(65, 3, 1000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new(3, 0, 1000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new(3, 1025, 1000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new(3, 3, 0, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new(3, 3, 63, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_age_bloom_new(3, 3, (1ULL << 40) + 1, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_age_bloom_new(3, 3, UINT64_MAX, 0, 0, &f), TF_ERR_TOO_LARGE);
#undef BADNEW
    /* the smallest filters are fine */
    OK(tf_age_bloom_new(1, 1, 64, 0, 0, &f));
    tf_age_bloom_free(f);
    f = NULL;
    OK(tf_age_bloom_new_for(1, 0.999, 0, 0, &f));
    tf_age_bloom_free(f);
}

/* The largest capacities need slices over 2^40 bits too: TF_ERR_TOO_LARGE,
 * not a filter whose generation wrapped around to 0 (ceil(capacity / l)
 * computed as (capacity + l - 1) / l overflows for capacity > 2^64 - l). */
static void test_new_for_huge_capacity(void **state) {
    (void)state;
    const uint64_t caps[] = {UINT64_MAX, UINT64_MAX - 5, UINT64_MAX - 86};
    for (size_t i = 0; i < 3; ++i) {
        tf_age_bloom *f = NULL;
        tf_clear_last_error();
        tf_status st = tf_age_bloom_new_for(caps[i], 0.01, 0, 0, &f);
        if (st == TF_OK) {
            uint64_t g = 0, cap = 0;
            OK(ab_info(f, NULL, NULL, NULL, &g, &cap, NULL));
            tf_age_bloom_free(f);
            fail_msg("capacity %llu: TF_OK with generation %llu and capacity %llu, want TF_ERR_TOO_LARGE",
                     (unsigned long long)caps[i], (unsigned long long)g, (unsigned long long)cap);
        }
        assert_int_equal(st, TF_ERR_TOO_LARGE);
        assert_true(strlen(tf_last_error_message()) > 0);
        assert_null(f);
    }
}

/* Every failing call on a live filter returns its status, says why, and
 * leaves the filter exactly as it was. */
static void test_calls_bad_input(void **state) {
    (void)state;
    tf_age_bloom *f = ab_filled(ab_make_for(0.01, 500, 3), 'z', 1200);
    size_t n;
    unsigned char *before = ab_snap(f, &n);
    int p;
#define BAD(call, status) TU_REFUSED_UNCHANGED(call, status, f, tu_age_bloom.serialize, before, n)
    BAD(tf_age_bloom_add(NULL, "k", 1), TF_ERR_NULL);
    BAD(tf_age_bloom_add(f, NULL, 1), TF_ERR_NULL);
    BAD(tf_age_bloom_add(f, NULL, SIZE_MAX), TF_ERR_NULL);
    BAD(tf_age_bloom_contains(NULL, "k", 1, &p), TF_ERR_NULL);
    BAD(tf_age_bloom_contains(f, NULL, 2, &p), TF_ERR_NULL);
    BAD(tf_age_bloom_contains(f, "k", 1, NULL), TF_ERR_NULL);
    BAD(tf_age_bloom_add_if_absent(NULL, "k", 1, &p), TF_ERR_NULL);
    BAD(tf_age_bloom_add_if_absent(f, NULL, 1, &p), TF_ERR_NULL);
    BAD(tf_age_bloom_add_if_absent(f, "new key", 7, NULL), TF_ERR_NULL);
    BAD(tf_age_bloom_clear(NULL), TF_ERR_NULL);
    tf_age_bloom_stats st = TF_AGE_BLOOM_STATS_INIT;
    BAD(tf_age_bloom_get_stats(NULL, &st), TF_ERR_NULL);
    BAD(tf_age_bloom_get_stats(f, NULL), TF_ERR_NULL);
    /* a versioned struct below its first version (never initialized) is
     * refused and left alone */
    st.size = 0;
    st.inserts = 99;
    BAD(tf_age_bloom_get_stats(f, &st), TF_ERR_INVALID_ARGUMENT);
    assert_true(st.size == 0 && st.inserts == 99);
#undef BAD
    /* serialized_size, serialize, memory and get_info */
    tu_check_refused_calls(&tu_age_bloom, f, sizeof(tf_age_bloom_info));
    free(before);
    tf_age_bloom_free(f);
}

BU_DEFINE_GROUP(age_input_tests, cmocka_unit_test(test_sizing_bad_input), cmocka_unit_test(test_new_bad_input),
                cmocka_unit_test(test_new_for_huge_capacity), cmocka_unit_test(test_calls_bad_input));
