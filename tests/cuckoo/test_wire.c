/* Rotating cuckoo filter: blobs. Round trips (every layout, byte for byte,
 * same answers), the serialize contract, max_memory, truncated, bit-flipped,
 * resealed, random and foreign blobs, hostile fields each breaking one
 * invariant behind a valid checksum, and the golden blobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cuckoo_util.h"
#include "golden.h"

/* A small filter of several tables (16-slot first table, ttl). */
static tf_rotating_cuckoo *small_filter(unsigned ways) {
    tf_rotating_cuckoo_options o = ck_options(16, 4, ways, 1 << 20);
    o.ttl = 5000;
    o.max_tables = 8;
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 60; ++i) ck_add_if_absent(f, i, 100 + i);
    ck_remove(f, 3, 200);
    return f;
}

static void test_round_trip(void **state) {
    (void)state;
    static const uint32_t spbs[] = {1, 2, 4, 8};
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i) {
            tf_rotating_cuckoo_options o = ck_options(64, spbs[i], ways, 0);
            o.ttl = 300;
            tf_rotating_cuckoo *f = ck_new(&o);
            for (uint64_t k = 0; k < 2000; ++k) ck_add_if_absent(f, k, 1 + k / 4);
            tf_rotating_cuckoo *c = tu_copy(&tu_rotating_cuckoo, f);
            assert_true(tu_same_blob(f, c, tu_rotating_cuckoo.serialize));
            for (uint64_t k = 0; k < 3000; ++k) assert_int_equal(ck_contains(c, k, 500), ck_contains(f, k, 500));
            size_t m1 = 0, m2 = 0;
            assert_int_equal(tf_rotating_cuckoo_memory(f, &m1), TF_OK);
            assert_int_equal(tf_rotating_cuckoo_memory(c, &m2), TF_OK);
            assert_int_equal(m1, m2);
            /* both go on alike */
            for (uint64_t k = 1500; k < 2500; ++k)
                assert_int_equal(ck_add_if_absent(c, k, 600), ck_add_if_absent(f, k, 600));
            assert_true(tu_same_blob(f, c, tu_rotating_cuckoo.serialize));
            tf_rotating_cuckoo_free(c);
            tf_rotating_cuckoo_free(f);
        }
}

static void test_contracts(void **state) {
    (void)state;
    tf_rotating_cuckoo *f = small_filter(2);
    const size_t n = tu_check_serialize_contract(f, &tu_rotating_cuckoo);
    size_t len;
    unsigned char *blob = tu_snapshot(f, tu_rotating_cuckoo.serialize, &len);
    assert_int_equal(len, n);
    tu_check_envelope(blob, len, 5, 0);
    tu_check_deserialize_nulls(&tu_rotating_cuckoo);
    size_t mem = 0;
    assert_int_equal(tf_rotating_cuckoo_memory(f, &mem), TF_OK);
    assert_int_equal(tu_check_max_memory(blob, len, &tu_rotating_cuckoo), mem);
    /* the memory of what a blob makes stays within its size plus 256 KiB */
    assert_true(mem <= len + 256 * 1024);
    free(blob);
    tf_rotating_cuckoo_free(f);
}

static void test_damaged_blobs(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways) {
        tf_rotating_cuckoo *f = small_filter(ways);
        tu_check_blob_of(f, tu_rotating_cuckoo.serialize, tu_check_truncations, ck_try_blob);
        tu_check_blob_of(f, tu_rotating_cuckoo.serialize, tu_check_resealed, ck_try_blob);
        tf_rotating_cuckoo_free(f);
    }
    tf_rotating_cuckoo_options o = ck_options(16, 4, 2, 1 << 20);
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 10; ++i) ck_add_if_absent(f, i, 100 + i);
    tu_check_blob_of(f, tu_rotating_cuckoo.serialize, tu_check_bit_flips, ck_try_blob);
    tu_check_blob_of(f, tu_rotating_cuckoo.serialize, tu_check_payload_flips, ck_try_blob);
    tf_rotating_cuckoo_free(f);
    tu_check_random_blobs(5, TF_ROTATING_CUCKOO_THREE_WAY, 2026, 600, NULL, NULL, ck_try_blob);
}

static void test_foreign_blobs(void **state) {
    (void)state;
    tf_age_bloom *a = NULL;
    assert_int_equal(tf_age_bloom_new(3, 4, 200, 1, 0, &a), TF_OK);
    tu_check_foreign_blob(&tu_age_bloom, a, 5, TF_ERR_CORRUPT, ck_try_blob);
    tf_age_bloom_free(a);
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(64, 2, 1, 0, &s), TF_OK);
    tu_check_foreign_blob(&tu_recency_sketch, s, 5, TF_ERR_CORRUPT, ck_try_blob);
    tf_recency_sketch_free(s);
}

/* payload offsets (lib/cuckoo/rotating_cuckoo.cpp, docs/wire-format.md) */
#define P(off) (20 + (off))
#define T0(off) (20 + 136 + (off)) /* the oldest table's header */

static void test_hostile_fields(void **state) {
    (void)state;
    tf_rotating_cuckoo *f = small_filter(2);
    size_t n;
    unsigned char *good = tu_snapshot(f, tu_rotating_cuckoo.serialize, &n);
    size_t mem = 0;
    assert_int_equal(tf_rotating_cuckoo_memory(f, &mem), TF_OK);
    const uint64_t tables = tu_get_le(good + P(128), 4);
    assert_true(tables >= 3);
    const uint64_t next_serial = tu_get_le(good + P(80), 8), current = tu_get_le(good + P(64), 8);
    const tu_field_case cases[] = {
        {P(0), 0, 8, TF_ERR_CORRUPT},                      /* first table of 0 slots */
        {P(0), 24, 8, TF_ERR_CORRUPT},                     /* not a power of two */
        {P(0), 4, 8, TF_ERR_CORRUPT},                      /* one bucket */
        {P(0), (uint64_t)1 << 40, 8, TF_ERR_CORRUPT},      /* above 2^36 */
        {P(8), 1000, 8, TF_ERR_CORRUPT},                   /* a cap below the first table */
        {P(8), mem - 1, 8, TF_ERR_CORRUPT},                /* a cap below the tables held */
        {P(24), 0, 8, TF_ERR_CORRUPT},                     /* occupancy 0 */
        {P(24), 0x7ff8000000000000ULL, 8, TF_ERR_CORRUPT}, /* NaN */
        {P(24), 0x3ff0000000000001ULL, 8, TF_ERR_CORRUPT}, /* just above 1 */
        {P(32), 3, 4, TF_ERR_CORRUPT},                     /* slots per bucket */
        {P(36), 0, 4, TF_ERR_CORRUPT},                     /* max_kicks */
        {P(36), 4097, 4, TF_ERR_CORRUPT},                  /* */
        {P(40), 0, 4, TF_ERR_CORRUPT},                     /* max_tables */
        {P(40), 2, 4, TF_ERR_CORRUPT},                     /* fewer than the tables */
        {P(48), 1, 8, TF_ERR_CORRUPT},                     /* clock before the tables' times */
        {P(56), UINT64_MAX, 8, TF_ERR_CORRUPT},            /* opened after the clock */
        {P(64), current + 1, 8, TF_ERR_CORRUPT},           /* current != the newest's inserts */
        {P(72), 0, 8, TF_ERR_CORRUPT},                     /* inserts below current */
        {P(80), next_serial + 1, 8, TF_ERR_CORRUPT},       /* serials out of line */
        {P(80), 0, 8, TF_ERR_CORRUPT},                     /* below the table count */
        {P(128), 0, 4, TF_ERR_CORRUPT},                    /* no table */
        {P(128), tables + 1, 4, TF_ERR_CORRUPT},           /* a table more than there is */
        {P(128), 5000, 4, TF_ERR_CORRUPT},                 /* above 1024 */
        {P(132), 1, 4, TF_ERR_CORRUPT},                    /* reserved */
        {T0(0), next_serial, 8, TF_ERR_CORRUPT},           /* the oldest's serial */
        {T0(8), 12, 8, TF_ERR_CORRUPT},                    /* its slots not a power of two */
        {T0(8), 4, 8, TF_ERR_CORRUPT},                     /* one bucket */
        {T0(8), (uint64_t)1 << 36, 8, TF_ERR_CORRUPT},     /* more slots than bytes */
        {T0(8), (uint64_t)1 << 50, 8, TF_ERR_CORRUPT},     /* above 2^36 */
        {T0(16), 0, 8, TF_ERR_CORRUPT},                    /* items != its slots in use */
        {T0(24), UINT64_MAX, 8, TF_ERR_CORRUPT},           /* last after the clock */
        {T0(32), UINT64_MAX, 8, TF_ERR_CORRUPT},           /* owned above the inserts */
        {T0(40), UINT64_MAX, 8, TF_ERR_CORRUPT},           /* ended after the clock */
        {T0(48), 0, 8, TF_ERR_CORRUPT},                    /* a fingerprint erased: items off */
    };
    tu_check_field_cases(good, n, cases, sizeof cases / sizeof cases[0], ck_try_blob);
    /* an unknown flag bit */
    unsigned char *bad = malloc(n);
    memcpy(bad, good, n);
    tu_put_le(bad + 8, 0x2, 4);
    tu_fix_checksum(bad, n);
    assert_int_equal(ck_try_blob(bad, n), TF_ERR_CORRUPT);
    free(bad);
    free(good);
    tf_rotating_cuckoo_free(f);
}

static void check_golden(const char *name, uint32_t flags) {
    tf_rotating_cuckoo *built = NULL;
    assert_int_equal(golden_rotating_cuckoo(flags, &built), TF_OK);
    tf_rotating_cuckoo *f = tu_golden_read(name, built, &tu_rotating_cuckoo);
    char key[32];
    for (int pass = 0; pass < 2; ++pass) {
        const uint64_t now = pass ? GOLDEN_RC_QUERY_2 : GOLDEN_RC_QUERY_1;
        unsigned present = 0;
        for (unsigned i = 0; i < GOLDEN_RC_KEYS; ++i) {
            const size_t kn = golden_key(i, key, sizeof key);
            int p = -1;
            assert_int_equal(tf_rotating_cuckoo_contains(f, key, kn, now, &p), TF_OK);
            present += (unsigned)p;
            /* never a key that was not added: 85 .. 89 */
            if (i >= 85) assert_int_equal(p, 0);
            /* the refreshed ones (75 .. 84) live until 1800 + ttl */
            if (i >= 75 && i < 85) assert_int_equal(p, 1);
        }
        assert_true(present > 0);
    }
    tf_rotating_cuckoo_free(f);
    tf_rotating_cuckoo_free(built);
}

static void answer(const unsigned char *key, size_t key_len, const unsigned long long *numbers, void *ctx) {
    int p = -1;
    assert_int_equal(tf_rotating_cuckoo_contains(ctx, key, key_len, numbers[0], &p), TF_OK);
    assert_int_equal(p, (int)numbers[1]);
}

static void test_golden_blobs(void **state) {
    (void)state;
    check_golden("rotating_cuckoo_v1", 0);
    check_golden("rotating_cuckoo_three_way_v1", TF_ROTATING_CUCKOO_THREE_WAY);
    const char *names[] = {"rotating_cuckoo_v1", "rotating_cuckoo_three_way_v1"};
    for (int i = 0; i < 2; ++i) {
        size_t len;
        char path[64];
        snprintf(path, sizeof path, "%s.tfb", names[i]);
        unsigned char *blob = tu_read_file(tu_data_path(path), &len);
        assert_non_null(blob);
        tf_rotating_cuckoo *f = NULL;
        assert_int_equal(tf_rotating_cuckoo_deserialize(blob, len, NULL, &f), TF_OK);
        assert_int_equal(tu_for_each_answer(names[i], 2, answer, f), 2 * (GOLDEN_RC_KEYS + 1));
        tf_rotating_cuckoo_free(f);
        free(blob);
    }
}

TU_MAIN(test_round_trip, test_contracts, test_damaged_blobs, test_foreign_blobs, test_hostile_fields, test_golden_blobs)
