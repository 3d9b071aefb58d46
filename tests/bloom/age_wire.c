/* The age-partitioned Bloom filter's wire format (kind 2, classic layout):
 * round trips, the serialize contract, max_memory, truncated, flipped,
 * hostile and foreign blobs, and the golden blob. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"
#include "golden.h"

static void test_serialize_round_trip(void **state) {
    (void)state;
    tf_age_bloom *f = ab_filled(ab_make_for(0.01, 5000, 77), 'r', 12345);
    size_t n;
    unsigned char *blob = ab_snap(f, &n);
    tu_check_envelope(blob, n, 2, 0);
    uint32_t k, l;
    uint64_t m, g;
    OK(ab_info(f, &k, &l, &m, &g, NULL, NULL));
    assert_int_equal(n, 28 + 80 + (k + l) * (48 + (m + 63) / 64 * 8));
    blob_view v = bu_decode(blob, n);
    assert_int_equal(v.k, k);
    assert_int_equal(v.l, l);
    assert_int_equal(v.seed, 77);
    assert_int_equal(v.generation, g);
    assert_int_equal(v.inserts, 12345);
    assert_int_equal(v.span, 0);
    free(v.s);
    tf_age_bloom *c = NULL;
    OK(tf_age_bloom_deserialize(blob, n, NULL, &c));
    assert_true(ab_same(f, c));
    ab_check_max_memory(f, blob, n);
    uint32_t k2, l2, s2;
    uint64_t m2, g2, cap1, cap2, s1, i1, s3, i2, b1, b2;
    double e1, e2, p1, p2;
    OK(ab_info(c, &k2, &l2, &m2, &g2, &cap2, &s2));
    OK(ab_info(f, NULL, NULL, NULL, NULL, &cap1, NULL));
    assert_true(k2 == k && l2 == l && m2 == m && g2 == g && cap2 == cap1 && s2 == 77);
    OK(ab_stats(f, &s1, &b1, &e1, &i1, &p1));
    OK(ab_stats(c, &s3, &b2, &e2, &i2, &p2));
    assert_true(s1 == s3 && b1 == b2 && e1 == e2 && i1 == i2 && p1 == p2);
    for (uint64_t i = 0; i < 30000; ++i) assert_int_equal(ab_has_id(f, 'r', i), ab_has_id(c, 'r', i));
    /* the copy continues exactly like the original under the same operations */
    tu_rng rng = {3};
    for (int i = 0; i < 20000; ++i) {
        uint64_t id = tu_below(&rng, 40000);
        if (i % 3) {
            ab_add_id(f, 'r', id);
            ab_add_id(c, 'r', id);
        } else {
            tu_key key = tu_make_key('r', id);
            int w1, w2;
            OK(tf_age_bloom_add_if_absent(f, key.b, sizeof key.b, &w1));
            OK(tf_age_bloom_add_if_absent(c, key.b, sizeof key.b, &w2));
            assert_int_equal(w1, w2);
        }
        if (i % 5000 == 0) assert_true(ab_same(f, c));
    }
    assert_true(ab_same(f, c));
    /* ... and stays independent of it */
    ab_add_id(c, 'i', 1);
    assert_false(ab_same(f, c));
    free(blob);
    tf_age_bloom_free(c);
    tf_age_bloom_free(f);
}

static void test_serialize_buffer_too_small(void **state) {
    (void)state;
    tf_age_bloom *f = ab_make(3, 3, 256, 1);
    ab_add_id(f, 'b', 1);
    tu_check_serialize_contract(f, &tu_age_bloom);
    tf_age_bloom_free(f);
}

/* A small blob: 4 slices of 64 bits, some inserts and a shift. */
static tf_age_bloom *small_filter(void) {
    tf_age_bloom *f = ab_make(2, 2, 64, 9); /* g = 22 */
    for (uint64_t i = 0; i < 30; ++i) ab_add_id(f, 's', i);
    return f;
}

static void test_deserialize_truncated(void **state) {
    (void)state;
    tf_age_bloom *f = ab_filled(ab_make_for(0.1, 300, 2), 't', 400);
    size_t n;
    unsigned char *blob = ab_snap(f, &n);
    tu_check_truncations(blob, n, ab_try_blob);
    free(blob);
    tf_age_bloom_free(f);
}

/* Every single-bit flip is caught, with the status its field calls for. */
static void test_deserialize_bit_flips(void **state) {
    (void)state;
    tf_age_bloom *f = small_filter();
    size_t n;
    unsigned char *blob = ab_snap(f, &n);
    assert_true(n < 400);
    tu_check_bit_flips(blob, n, ab_try_blob);
    free(blob);
    tf_age_bloom_free(f);
}

/* Every payload bit flipped with the checksum fixed: either a clean error
 * or a filter that works (a flipped bit in a slice is a valid filter). */
static void test_deserialize_bit_flips_fixed_checksum(void **state) {
    (void)state;
    tf_age_bloom *f = small_filter();
    size_t n;
    unsigned char *blob = ab_snap(f, &n);
    tu_check_payload_flips(blob, n, ab_try_blob);
    free(blob);
    tf_age_bloom_free(f);
}

/* Blobs with a valid checksum but fields that break the invariants. */
static void test_deserialize_hostile_fields(void **state) {
    (void)state;
    tf_age_bloom *f = small_filter();
    size_t n;
    unsigned char *good = ab_snap(f, &n);
    blob_view v = bu_decode(good, n);
    tu_field_case common[BU_SLICE_CASES];
    const size_t n_common = bu_slice_payload_cases(&v, common);
    tu_check_field_cases(good, n, common, n_common, ab_try_blob);
    const size_t s0 = v.s[0].off, s1 = v.s[1].off, s3 = v.s[3].off;
    const uint64_t serial1 = v.s[1].serial;
    free(v.s);
    /* and the count window's own */
    const tu_field_case cases[] = {
        {4, 0, 2, TF_ERR_UNSUPPORTED_VERSION},
        {6, 3, 2, TF_ERR_WRONG_KIND}, /* a time-limited filter */
        {6, 1, 2, TF_ERR_WRONG_KIND},
        {6, 0xffff, 2, TF_ERR_WRONG_KIND},
        {8, 0x80000000u, 4, TF_ERR_CORRUPT},
        {P_K, 3, 4, TF_ERR_CORRUPT}, /* k + l no longer the slice count */
        {P_L, 1, 4, TF_ERR_CORRUPT},
        {P_S, 5, 4, TF_ERR_CORRUPT},
        {P_S, 0, 4, TF_ERR_CORRUPT},
        {P_SPAN, 1000, 8, TF_ERR_CORRUPT}, /* a count window has no span */
        {P_GEN, 0, 8, TF_ERR_CORRUPT},
        {P_GEN, 1000, 8, TF_ERR_CORRUPT}, /* generation too large for 64-bit slices */
        {P_GEN, UINT64_MAX, 8, TF_ERR_CORRUPT},
        {P_UNTIL, 23, 8, TF_ERR_CORRUPT}, /* more than a generation left */
        {P_UNTIL, UINT64_MAX, 8, TF_ERR_CORRUPT},
        {P_INSERTS, 1, 8, TF_ERR_CORRUPT}, /* slices counting more inserts than the filter */
        {s0, 0, 8, TF_ERR_CORRUPT},
        {s0, 128, 8, TF_ERR_CORRUPT},               /* bigger than the data that follows */
        {s0, (1ULL << 40) + 64, 8, TF_ERR_CORRUPT}, /* past the limit */
        {s3, 65, 8, TF_ERR_CORRUPT},                /* same words, but sizes differ... */
        {s1, 100, 8, TF_ERR_CORRUPT},               /* ...and bits beyond m set or more words */
        {s0 + 8, UINT64_MAX, 8, TF_ERR_CORRUPT},    /* n > inserts */
        {s1 + 24, serial1 - 1, 8, TF_ERR_CORRUPT},
        {s0 + 16, 5, 8, TF_ERR_CORRUPT}, /* a timestamp in a count window, newer than its clock (0) */
    };
    tu_check_field_cases(good, n, cases, sizeof cases / sizeof cases[0], ab_try_blob);
    /* a set bit beyond m in the last word of a slice: m = 64 has none, so
     * use a filter with 100-bit slices */
    tf_age_bloom *g = ab_make(2, 2, 100, 1);
    ab_add_id(g, 'h', 1);
    size_t gn;
    unsigned char *gb = ab_snap(g, &gn);
    blob_view gv = bu_decode(gb, gn);
    gb[gv.s[2].off + 48 + 8 + 7] |= 0x80; /* bit 127 of slice 2 */
    tu_fix_checksum(gb, gn);
    assert_int_equal(ab_try_blob(gb, gn), TF_ERR_CORRUPT);
    gb[gv.s[2].off + 48 + 8 + 7] &= 0x7f;
    gb[gv.s[2].off + 48 + 8 + 4] |= 0x10; /* bit 100 */
    tu_fix_checksum(gb, gn);
    assert_int_equal(ab_try_blob(gb, gn), TF_ERR_CORRUPT);
    gb[gv.s[2].off + 48 + 8 + 4] &= 0xef;
    gb[gv.s[2].off + 48 + 8 + 4] |= 0x08; /* bit 99, the last valid one */
    tu_fix_checksum(gb, gn);
    assert_int_equal(ab_try_blob(gb, gn), TF_OK);
    /* slices of one count window all have the same size (120 bits: the same
     * two words) */
    tu_put_le(gb + gv.s[1].off, 120, 8);
    tu_fix_checksum(gb, gn);
    assert_int_equal(ab_try_blob(gb, gn), TF_ERR_CORRUPT);
    free(gv.s);
    free(gb);
    tf_age_bloom_free(g);
    free(good);
    tf_age_bloom_free(f);
}

/* Plausible small header fields for some random payloads. */
static void plant_age_header(unsigned char *buf, size_t len, tu_rng *r) {
    if (len >= P_SLICES && tu_below(r, 2)) {
        tu_put_le(buf + P_K, 1 + tu_below(r, 3), 4);
        tu_put_le(buf + P_L, 1 + tu_below(r, 3), 4);
        tu_put_le(buf + P_S, tu_below(r, 7), 4);
        tu_put_le(buf + P_SPAN, 0, 8);
        tu_put_le(buf + P_GEN, 1 + tu_below(r, 40), 8);
    }
}

static void test_deserialize_wrong_kind_random_and_null(void **state) {
    (void)state;
    /* a time-limited filter and a recency sketch are not age blooms, even
     * with the kind edited: the payload is checked on its own */
    tf_time_bloom *t = tb_make(2, 2, 64, 100, 1);
    tu_check_foreign_blob(&tu_time_bloom, t, 2, TF_ERR_CORRUPT, ab_try_blob);
    tf_time_bloom_free(t);
    tf_recency_sketch *rs = NULL;
    OK(tf_recency_sketch_new(16, 2, 1, 0, &rs));
    tu_check_foreign_blob(&tu_recency_sketch, rs, 2, TF_ERR_CORRUPT, ab_try_blob);
    tf_recency_sketch_free(rs);
    /* random bytes, and random payloads behind a valid envelope */
    tu_check_random_blobs(2, 0, 2025, 640, plant_age_header, ab_try_blob);
    tu_check_deserialize_nulls(&tu_age_bloom);
}

static void test_golden_blob(void **state) {
    (void)state;
    /* window l * g = 184, of which the last 100 plain inserts are checked
     * (the add_if_absent calls and the binary key came after them) */
    ab_check_golden("age_bloom_v1", 0, 100);
}

BU_DEFINE_GROUP(age_wire_tests, cmocka_unit_test(test_serialize_round_trip),
                cmocka_unit_test(test_serialize_buffer_too_small), cmocka_unit_test(test_deserialize_truncated),
                cmocka_unit_test(test_deserialize_bit_flips),
                cmocka_unit_test(test_deserialize_bit_flips_fixed_checksum),
                cmocka_unit_test(test_deserialize_hostile_fields),
                cmocka_unit_test(test_deserialize_wrong_kind_random_and_null), cmocka_unit_test(test_golden_blob));
