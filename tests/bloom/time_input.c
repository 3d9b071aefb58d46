/* The time-limited Bloom filter on bad input: constructors, every call
 * (a failed call says why and leaves the filter as it was), and the slice
 * limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* ------------------------------------------------------------------ */
/* bad input                                                           */

static void test_new_bad_input(void **state) {
    (void)state;
    tf_time_bloom *f = NULL;
#define BADNEW(call, status) TU_REFUSED_NEW(call, status, f)
    BADNEW(tf_time_bloom_new_for(100, 0.01, 1000, 0, 0, NULL), TF_ERR_NULL);
    const double bad_rates[] = {0.0, 1.0, -0.5, 2.0, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_rates / sizeof bad_rates[0]; ++i)
        BADNEW(tf_time_bloom_new_for(100, bad_rates[i], 1000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new_for(100, 1e-300, 1000, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_time_bloom_new_for(0, 0.01, 1000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    /* span < l of the chosen pair (for 0.01: 24 by default, 87 with
     * TF_TIME_BLOOM_MIN_MEMORY), and 0 */
    BADNEW(tf_time_bloom_new_for(100, 0.01, 23, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new_for(100, 0.01, 0, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    OK(tf_time_bloom_new_for(100, 0.01, 24, 0, 0, &f));
    tf_time_bloom_free(f);
    f = NULL;
    BADNEW(tf_time_bloom_new_for(100, 0.01, 86, 0, TF_TIME_BLOOM_MIN_MEMORY, &f), TF_ERR_INVALID_ARGUMENT);
    OK(tf_time_bloom_new_for(100, 0.01, 87, 0, TF_TIME_BLOOM_MIN_MEMORY, &f));
    tf_time_bloom_free(f);
    f = NULL;
    /* initial capacities whose slices would pass 2^40 bits */
    BADNEW(tf_time_bloom_new_for(UINT64_MAX, 0.01, 1000, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_time_bloom_new_for(1ULL << 50, 0.01, 1000, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_time_bloom_new(3, 3, 1000, 100, 0, 0, NULL), TF_ERR_NULL);
    BADNEW(tf_time_bloom_new(0, 3, 1000, 100, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(65, 3, 1000, 100, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(3, 0, 1000, 100, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(3, 1025, 1000, 2000, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(3, 3, 63, 100, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(3, 3, 0, 100, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(3, 3, (1ULL << 40) + 1, 100, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_time_bloom_new(3, 3, UINT64_MAX, 100, 0, 0, &f), TF_ERR_TOO_LARGE);
    BADNEW(tf_time_bloom_new(3, 5, 1000, 4, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    BADNEW(tf_time_bloom_new(3, 5, 1000, 0, 0, 0, &f), TF_ERR_INVALID_ARGUMENT);
    /* every bit but TF_TIME_BLOOM_MIN_MEMORY is refused (that one by new
     * only: age_probes.c) */
    BADNEW(tf_time_bloom_new(3, 3, 1000, 100, 0, TF_TIME_BLOOM_MIN_MEMORY, &f), TF_ERR_INVALID_ARGUMENT);
    const uint32_t bad_flags[] = {2, 4, TF_TIME_BLOOM_MIN_MEMORY | 2, 0x80000000u, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; ++i) {
        BADNEW(tf_time_bloom_new(3, 3, 1000, 100, 0, bad_flags[i], &f), TF_ERR_INVALID_ARGUMENT);
        BADNEW(tf_time_bloom_new_for(100, 0.01, 1000, 0, bad_flags[i], &f), TF_ERR_INVALID_ARGUMENT);
    }
#undef BADNEW
    OK(tf_time_bloom_new(1, 1, 64, 1, 0, 0, &f));
    OK(tf_time_bloom_add(f, "k", 1, 1));
    tf_time_bloom_free(f);
}

/* Every failing call on a live filter returns its status, says why, and
 * leaves the filter exactly as it was. */
static void test_calls_bad_input(void **state) {
    (void)state;
    tf_time_bloom *f = tb_make_for(0.01, 5000, 300, 3);
    for (uint64_t i = 0; i < 2000; ++i) tb_add_id(f, 'z', i, 10 + i);
    size_t n;
    unsigned char *before = tb_snap(f, &n);
    int p;
    uint64_t u64;
#define BAD(call, status) TU_REFUSED_UNCHANGED(call, status, f, tu_time_bloom.serialize, before, n)
    BAD(tf_time_bloom_add(NULL, "k", 1, 5000), TF_ERR_NULL);
    BAD(tf_time_bloom_add(f, NULL, 1, 5000), TF_ERR_NULL);
    BAD(tf_time_bloom_add(f, "k", 1, 0), TF_ERR_INVALID_ARGUMENT);
    BAD(tf_time_bloom_contains(NULL, "k", 1, 5000, &p), TF_ERR_NULL);
    BAD(tf_time_bloom_contains(f, NULL, 1, 5000, &p), TF_ERR_NULL);
    BAD(tf_time_bloom_contains(f, "k", 1, 5000, NULL), TF_ERR_NULL);
    BAD(tf_time_bloom_contains(f, "k", 1, 0, &p), TF_ERR_INVALID_ARGUMENT);
    BAD(tf_time_bloom_add_if_absent(NULL, "k", 1, 5000, &p), TF_ERR_NULL);
    BAD(tf_time_bloom_add_if_absent(f, NULL, 1, 5000, &p), TF_ERR_NULL);
    BAD(tf_time_bloom_add_if_absent(f, "new", 3, 5000, NULL), TF_ERR_NULL);
    BAD(tf_time_bloom_add_if_absent(f, "new", 3, 0, &p), TF_ERR_INVALID_ARGUMENT);
    BAD(tf_time_bloom_clear(NULL), TF_ERR_NULL);
    tf_time_bloom_stats st = TF_TIME_BLOOM_STATS_INIT;
    BAD(tf_time_bloom_get_stats(NULL, 5000, &st), TF_ERR_NULL);
    BAD(tf_time_bloom_get_stats(f, 5000, NULL), TF_ERR_NULL);
    BAD(tf_time_bloom_get_stats(f, 0, &st), TF_ERR_INVALID_ARGUMENT);
    /* a versioned struct below its first version (never initialized) is
     * refused and left alone */
    st.size = 0;
    st.inserts = 99;
    BAD(tf_time_bloom_get_stats(f, 5000, &st), TF_ERR_INVALID_ARGUMENT);
    assert_true(st.size == 0 && st.inserts == 99);
    BAD(tf_time_bloom_slice_bits(NULL, 0, &u64), TF_ERR_NULL);
    BAD(tf_time_bloom_slice_bits(f, 0, NULL), TF_ERR_NULL);
    BAD(tf_time_bloom_slice_bits(f, 100000, &u64), TF_ERR_INVALID_ARGUMENT);
    BAD(tf_time_bloom_slice_bits(f, UINT64_MAX, &u64), TF_ERR_INVALID_ARGUMENT);
#undef BAD
    /* serialized_size, serialize, memory and get_info */
    tu_check_refused_calls(&tu_time_bloom, f, sizeof(tf_time_bloom_info));
    free(before);
    tf_time_bloom_free(f);
}

/* The slice limit (4096): a clock that never advances cannot reach it here
 * (the slices grow instead), so a blob brings a filter to the limit; the
 * shift that would pass it fails with TF_ERR_TOO_LARGE and changes nothing. */
static unsigned char *blob_with_slices(uint32_t count, size_t *len) {
    const size_t payload = 80 + (size_t)count * (48 + 8);
    *len = 20 + payload + 8;
    unsigned char *b = calloc(*len, 1);
    assert_non_null(b);
    memcpy(b, "TFLT\x01\x00\x03\x00\x00\x00\x00\x00", 12);
    tu_put_le(b + 12, payload, 8);
    tu_put_le(b + P_K, 1, 4);
    tu_put_le(b + P_L, 1, 4);
    tu_put_le(b + P_SEED, 5, 4);
    tu_put_le(b + P_S, count, 4);
    tu_put_le(b + P_SPAN, 1000, 8);
    tu_put_le(b + P_UNTIL, 0, 8); /* the next insert shifts */
    tu_put_le(b + P_LAST, 900, 8);
    tu_put_le(b + P_HIGH, 1000, 8);
    tu_put_le(b + P_INSERTS, count, 8);
    tu_put_le(b + P_NEXT, count, 8);
    size_t off = P_SLICES;
    for (uint32_t i = 0; i < count; ++i) {
        tu_put_le(b + off, 64, 8);                 /* m */
        tu_put_le(b + off + 8, 1, 8);              /* n */
        tu_put_le(b + off + 16, 1000, 8);          /* t */
        tu_put_le(b + off + 24, count - 1 - i, 8); /* serial */
        tu_put_le(b + off + 32, 1, 8);             /* owned */
        tu_put_le(b + off + 40, 1000, 8);          /* own_end */
        off += 56;                                 /* no bit set: nothing is present */
    }
    tu_fix_checksum(b, *len);
    return b;
}

static void test_slice_limit(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = blob_with_slices(4096, &len);
    tf_time_bloom *f = NULL;
    OK(tf_time_bloom_deserialize(b, len, NULL, &f));
    assert_int_equal(tb_n_slices(f, 1000), 4096);
    size_t n;
    unsigned char *before = tb_snap(f, &n);
    assert_int_equal(n, len);
    assert_memory_equal(before, b, len);
    tf_clear_last_error();
    assert_int_equal(tf_time_bloom_add(f, "k", 1, 1500), TF_ERR_TOO_LARGE);
    assert_true(strlen(tf_last_error_message()) > 0);
    tb_assert_unchanged(f, before, n);
    int p;
    assert_int_equal(tf_time_bloom_add_if_absent(f, "absent key", 10, 1500, &p), TF_ERR_TOO_LARGE);
    tb_assert_unchanged(f, before, n);
    free(before);
    free(b);
    /* one slice more than the limit is corrupt */
    tf_time_bloom *g = NULL;
    b = blob_with_slices(4097, &len);
    assert_int_equal(tf_time_bloom_deserialize(b, len, NULL, &g), TF_ERR_CORRUPT);
    assert_null(g);
    free(b);
    /* once the old slices are stale (now - span > 1000) the shift retires
     * them (equation 3) and succeeds: the limit must not stop a filter for
     * good */
    tf_status st = tf_time_bloom_add(f, "k", 1, 2001);
    const uint64_t slices = tb_n_slices(f, 2001);
    p = 0;
    if (st == TF_OK) OK(tf_time_bloom_contains(f, "k", 1, 2001, &p));
    tf_time_bloom_free(f);
    if (st != TF_OK)
        fail_msg("4096 stale slices: add after the span returned %s (%s)", tf_status_string(st),
                 tf_last_error_message());
    assert_true(slices <= 3);
    assert_int_equal(p, 1);
}

BU_DEFINE_GROUP(time_input_tests, cmocka_unit_test(test_new_bad_input), cmocka_unit_test(test_calls_bad_input),
                cmocka_unit_test(test_slice_limit));
