/* The age-partitioned Bloom filter's wire format (kind 2, classic layout):
 * round trips, max_memory, the golden blob; the serialize contract,
 * truncated, flipped, hostile and foreign blobs through the tests both
 * Bloom suites share (bloom_wire.c), with this filter's own cases. */
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
    bu_check_same_future(&bu_age, f, c, 30000, 40000, 20000, NULL);
    free(blob);
    tf_age_bloom_free(c);
    tf_age_bloom_free(f);
}

/* The filters of the wire tests both suites run (bloom_wire.c). */
static void *tiny(void) {
    tf_age_bloom *f = ab_make(3, 3, 256, 1);
    ab_add_id(f, 'b', 1);
    return f;
}

static void *filled(void) { return ab_filled(ab_make_for(0.1, 300, 2), 't', 400); }

/* 4 slices of 64 bits, some inserts and a shift. */
static void *small(void) {
    tf_age_bloom *f = ab_make(2, 2, 64, 9); /* g = 22 */
    for (uint64_t i = 0; i < 30; ++i) ab_add_id(f, 's', i);
    return f;
}

/* The count window's own hostile fields, beyond those of every kind 2/3
 * payload. */
static void check_own_cases(const blob_view *v, const unsigned char *good, size_t n) {
    const size_t s0 = v->s[0].off, s1 = v->s[1].off, s3 = v->s[3].off;
    const uint64_t serial1 = v->s[1].serial;
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
}

/* A set bit beyond m in the last word of a slice is corrupt (m = 64 has
 * none, so a filter with 100-bit slices), and slices of one count window
 * all have the same size. */
static void test_deserialize_bits_beyond_m(void **state) {
    (void)state;
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
}

/* A blob of the other Bloom filter. */
static void *time_filter(void) { return tb_make(2, 2, 64, 100, 1); }

static const bu_wire wire = {
    .filter = &bu_age,
    .kind = 2,
    .try_blob = ab_try_blob,
    .check_own_cases = check_own_cases,
    .make = {.tiny = tiny, .filled = filled, .small = small, .small_max = 400},
    /* a time filter's payload read as a count window has a span; a sketch's is corrupt too */
    .foreign = {.other = &tu_time_bloom,
                .other_small = time_filter,
                .other_edited = TF_ERR_CORRUPT,
                .sketch_edited = TF_ERR_CORRUPT},
    .random = {.seed = 2025, .max_len = 640, .header = {.s_min = 0, .s_range = 7, .gen_range = 40}},
};

static void test_golden_blob(void **state) {
    (void)state;
    /* window l * g = 184, of which the last 100 plain inserts are checked
     * (the add_if_absent calls and the binary key came after them) */
    ab_check_golden("age_bloom_v1", 0, 100);
}

BU_DEFINE_GROUP(age_wire_tests, cmocka_unit_test(test_serialize_round_trip), BU_WIRE_TESTS(&wire),
                cmocka_unit_test(test_deserialize_bits_beyond_m), cmocka_unit_test(test_golden_blob));
