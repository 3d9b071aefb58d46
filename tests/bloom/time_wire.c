/* The time-limited Bloom filter's wire format (kind 3): round trips,
 * max_memory, impossible counters, the golden blob; the serialize
 * contract, truncated, flipped, hostile and foreign blobs through the
 * tests both Bloom suites share (bloom_wire.c), with this filter's own
 * cases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"
#include "golden.h"

/* ------------------------------------------------------------------ */
/* wire format                                                          */

static void test_serialize_round_trip(void **state) {
    (void)state;
    tf_time_bloom *f = tb_make_for(0.01, 10000, 2000, 77);
    uint64_t now = 5;
    for (uint64_t i = 0; i < 30000; ++i) tb_add_id(f, 'r', i, now += (i % 2) + (i / 10000));
    size_t n;
    unsigned char *blob = tb_snap(f, &n);
    tu_check_envelope(blob, n, 3, 0);
    blob_view v = bu_decode(blob, n);
    uint32_t k, l;
    OK(tb_info(f, &k, &l, NULL, NULL));
    assert_true(v.k == k && v.l == l && v.seed == 77 && v.span == 10000 && v.inserts == 30000);
    assert_int_equal(v.high_water, now);
    assert_int_equal(v.S, tb_n_slices(f, now));
    for (uint32_t i = 0; i < v.S; ++i) {
        uint64_t b;
        OK(tf_time_bloom_slice_bits(f, i, &b));
        assert_int_equal(v.s[i].m, b);
        assert_true(v.s[i].t <= now);
        assert_true(v.s[i].pop <= v.s[i].n);
        if (i) assert_int_equal(v.s[i].serial + 1, v.s[i - 1].serial);
    }
    free(v.s);
    tf_time_bloom *c = NULL;
    OK(tf_time_bloom_deserialize(blob, n, NULL, &c));
    assert_true(tb_same(f, c));
    /* options->max_memory refuses the blob below what its filter holds,
     * before allocating it, and accepts it at exactly that */
    size_t need = 0;
    OK(tf_time_bloom_memory(f, &need));
    assert_int_equal(tu_check_max_memory(blob, n, &tu_time_bloom), need);
    uint64_t s1, s2, b1, b2, i1, i2;
    double e1, e2, p1, p2;
    OK(tb_stats(f, now, &s1, &b1, &e1, &i1, &p1));
    OK(tb_stats(c, now, &s2, &b2, &e2, &i2, &p2));
    assert_true(s1 == s2 && b1 == b2 && e1 == e2 && i1 == i2 && p1 == p2);
    bu_check_same_future(&bu_time, f, c, 40000, 60000, 40000, &now);
    free(blob);
    tf_time_bloom_free(c);
    tf_time_bloom_free(f);
}

/* Deserializes a blob (a tu_try_blob_fn): accepted blobs are used
 * read-only here (bu_try_blob); see test_hostile_counters for what an
 * insert into one may do. */
static tf_status try_blob(const unsigned char *b, size_t n) { return bu_try_blob(&bu_time, b, n); }

/* The filters of the wire tests both suites run (bloom_wire.c). */
static void *tiny(void) {
    tf_time_bloom *f = tb_make(3, 3, 256, 100, 1);
    tb_add_id(f, 'b', 1, 5);
    return f;
}

static void *filled(void) {
    tf_time_bloom *f = tb_make_for(0.1, 1000, 200, 2);
    for (uint64_t i = 0; i < 600; ++i) tb_add_id(f, 't', i, 1 + i);
    return f;
}

/* A small blob with every kind of slice: k + l = 4 slices of 64 bits plus
 * an extra one from a burst, timestamps, a shift. */
static void *small(void) {
    tf_time_bloom *f = tb_make(2, 2, 64, 100, 9);
    for (uint64_t i = 0; i < 40; ++i) tb_add_id(f, 's', i, 10 + i / 4);
    return f;
}

/* The time window's own hostile fields, beyond those of every kind 2/3
 * payload. */
static void check_own_cases(const blob_view *v, const unsigned char *good, size_t n) {
    const size_t s0 = v->s[0].off, sl = v->s[v->S - 1].off;
    const uint64_t high = v->high_water;
    const uint64_t more_words = ((v->s[v->S - 1].m + 63) / 64 + 1) * 64;
    const uint32_t S = v->S;
    const tu_field_case cases[] = {
        {6, 2, 2, TF_ERR_WRONG_KIND}, /* an age bloom */
        {6, 4, 2, TF_ERR_WRONG_KIND},
        {P_K, S + 1, 4, TF_ERR_CORRUPT}, /* fewer slices than k */
        {P_SPAN, 1, 8, TF_ERR_CORRUPT},  /* span shorter than l (2) */
        {P_S, S + 1, 4, TF_ERR_CORRUPT},
        {P_S, 4097, 4, TF_ERR_CORRUPT},
        {P_SPAN, 0, 8, TF_ERR_CORRUPT},
        {P_LAST, high + 1, 8, TF_ERR_CORRUPT}, /* a shift in the future */
        {P_HIGH, 0, 8, TF_ERR_CORRUPT},        /* slices newer than the clock */
        {s0, 1ULL << 41, 8, TF_ERR_CORRUPT},
        {sl, more_words, 8, TF_ERR_CORRUPT}, /* more words than the blob holds */
        {s0 + 16, high + 1, 8, TF_ERR_CORRUPT},
        {sl + 16, UINT64_MAX, 8, TF_ERR_CORRUPT},
    };
    tu_check_field_cases(good, n, cases, sizeof cases / sizeof cases[0], try_blob);
}

/* Counters that no sequence of operations can produce: gen_inserts (the
 * inserts of the current generation) never exceeds inserts, which clear()
 * resets with it.
 * A blob that breaks this is corrupt: the next shift sizes its slice from
 * these counters (equation 6). */
static void test_deserialize_inconsistent_counters(void **state) {
    (void)state;
    tf_time_bloom *f = small();
    size_t n;
    unsigned char *good = tb_snap(f, &n);
    const uint64_t inserts = tu_get_le(good + P_INSERTS, 8);
    const uint64_t values[] = {inserts + 1, 1ULL << 50, UINT64_MAX};
    int bad = 0;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; ++i) {
        tf_status st = tu_try_patched(good, n, P_GEN_INS, values[i], 8, try_blob);
        if (st != TF_ERR_CORRUPT) {
            print_message("# %s = %llu with %llu inserts: %s, want TF_ERR_CORRUPT\n", "gen_inserts",
                          (unsigned long long)values[i], (unsigned long long)inserts, tf_status_string(st));
            bad++;
        }
    }
    free(good);
    tf_time_bloom_free(f);
    if (bad) fail_msg("%d blobs with impossible counters were accepted", bad);
}

/* A hostile blob must not lead to a huge allocation (docs/wire-format.md,
 * docs/conventions.md "Serialization"), at deserialize or after it: with consistent but enormous
 * counters (2^40 inserts in the current generation), the next insert must
 * not ask for a slice of 2^40 bits (128 GiB). */
static void test_hostile_counters(void **state) {
    (void)state;
    /* (Safe under AddressSanitizer too: a shift never allocates more than
     * 16 times the largest slice present.) */
    tf_time_bloom *f = small();
    size_t n;
    unsigned char *b = tb_snap(f, &n);
    tu_put_le(b + P_INSERTS, 1ULL << 40, 8);
    tu_put_le(b + P_GEN_INS, 1ULL << 40, 8);
    tu_put_le(b + P_UNTIL, 0, 8); /* the next insert shifts */
    tu_fix_checksum(b, n);
    tf_time_bloom *c = NULL;
    tf_status st = tf_time_bloom_deserialize(b, n, NULL, &c);
    if (st == TF_OK) {
        const uint64_t high = tu_get_le(b + P_HIGH, 8);
        tf_status add = tf_time_bloom_add(c, "k", 1, high + 1);
        size_t bytes = 0;
        OK(tf_time_bloom_memory(c, &bytes));
        uint64_t s0 = 0;
        OK(tf_time_bloom_slice_bits(c, 0, &s0));
        tf_time_bloom_free(c);
        if (add != TF_OK || bytes > (64u << 20))
            fail_msg(
                "a blob with 2^40 inserts in its generation was accepted; the next add returned %s (%s), "
                "s_0 %llu bits, %zu bytes held",
                tf_status_string(add), tf_last_error_message(), (unsigned long long)s0, bytes);
    } else {
        assert_int_equal(st, TF_ERR_CORRUPT);
    }
    free(b);
    tf_time_bloom_free(f);
}

/* A blob of the other Bloom filter. */
static void *age_filter(void) {
    tf_age_bloom *a = ab_make(2, 2, 64, 1);
    OK(tf_age_bloom_add(a, "x", 1));
    return a;
}

static const bu_wire wire = {
    .filter = &bu_time,
    .kind = 3,
    .try_blob = try_blob,
    .check_own_cases = check_own_cases,
    .make = {.tiny = tiny, .filled = filled, .small = small, .small_max = 600},
    /* an age bloom's payload read as a time bloom: span 0 < l; a sketch's: not tried */
    .foreign = {.other = &tu_age_bloom,
                .other_small = age_filter,
                .other_edited = TF_ERR_CORRUPT,
                .sketch_edited = TF_OK},
    .random = {.seed = 2026, .max_len = 700, .header = {.s_min = 2, .s_range = 6, .span_min = 3, .span_range = 100}},
};

/* ------------------------------------------------------------------ */
/* golden blob                                                          */

/* One answer of time_bloom_v1.expected: "<key> <now> <present>". */
struct time_expected_ctx {
    const tf_time_bloom *f;
    unsigned absent[2]; /* at GOLDEN_TB_QUERY_1, GOLDEN_TB_QUERY_2 */
};
static void time_expected(const unsigned char *key, size_t klen, const unsigned long long *want, void *ctx) {
    struct time_expected_ctx *c = ctx;
    const unsigned long long when = want[0];
    int p;
    assert_true(when == GOLDEN_TB_QUERY_1 || when == GOLDEN_TB_QUERY_2);
    OK(tf_time_bloom_contains(c->f, key, klen, when, &p));
    assert_int_equal(p, want[1]);
    c->absent[when == GOLDEN_TB_QUERY_2] += want[1] == 0;
}

static void test_golden_blob(void **state) {
    (void)state;
    tf_time_bloom *built = NULL;
    OK(golden_time_bloom(0, &built));
    tf_time_bloom *f = tu_golden_read("time_bloom_v1", built, &tu_time_bloom);
    struct time_expected_ctx ctx = {f, {0, 0}};
    assert_int_equal(tu_for_each_answer("time_bloom_v1", 2, time_expected, &ctx), 2 * (GOLDEN_TB_KEYS + 1));
    /* more keys have expired at the second time */
    assert_true(ctx.absent[1] > ctx.absent[0]);
    /* every key inserted within the span of the first query time is there */
    int p;
    for (unsigned i = 100; i < 250; ++i) {
        char key[32];
        size_t kn = golden_key(i, key, sizeof key);
        OK(tf_time_bloom_contains(f, key, kn, GOLDEN_TB_QUERY_1, &p));
        assert_int_equal(p, 1);
    }
    OK(tf_time_bloom_contains(f, golden_binary_key, sizeof golden_binary_key, GOLDEN_TB_QUERY_2, &p));
    assert_int_equal(p, 1);
    tf_time_bloom_free(f);
    tf_time_bloom_free(built);
}

BU_DEFINE_GROUP(time_wire_tests, cmocka_unit_test(test_serialize_round_trip), BU_WIRE_TESTS(&wire),
                cmocka_unit_test(test_deserialize_inconsistent_counters), cmocka_unit_test(test_hostile_counters),
                cmocka_unit_test(test_golden_blob));
