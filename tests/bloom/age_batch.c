/* The batch calls of both Bloom filters (in the age filter's suite, since
 * one file serves both) (add, contains and add_if_absent
 * over arrays of keys): the same answers and the same filter (byte-equal
 * blobs) as the single calls in order, on both age layouts and the
 * time-limited filter, with keys repeated within a batch, batches of every
 * length around the prefetch group (8), rotations inside a batch; bad input
 * refused with the filter unchanged. */
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

#define BATCH_MAX 300

/* n keys, some repeated within the batch: ids from [0, spread). */
static void make_keys(tu_rng *rng, size_t n, uint64_t spread, tu_key *keys, const void **ptrs, size_t *lens) {
    for (size_t i = 0; i < n; ++i) {
        keys[i] = tu_make_key('b', tu_below(rng, spread));
        ptrs[i] = keys[i].b;
        lens[i] = sizeof keys[i].b;
    }
}

static void age_batches(uint32_t flags) {
    tf_age_bloom *a = NULL, *b = NULL; /* a: batch calls, b: single calls */
    OK(tf_age_bloom_new_for(2000, 1e-2, 5, flags, &a));
    OK(tf_age_bloom_new_for(2000, 1e-2, 5, flags, &b));
    tu_rng rng = {flags + 1};
    static tu_key keys[BATCH_MAX];
    const void *ptrs[BATCH_MAX];
    size_t lens[BATCH_MAX];
    int got[BATCH_MAX], want[BATCH_MAX];
    /* lengths 0..20 (around the group of 8), then long ones that rotate */
    for (size_t round = 0; round < 60; ++round) {
        const size_t n = round <= 20 ? round : 100 + tu_below(&rng, BATCH_MAX - 100);
        make_keys(&rng, n, 3000, keys, ptrs, lens);
        switch (round % 3) {
            case 0:
                OK(tf_age_bloom_add_batch(a, n ? ptrs : NULL, n ? lens : NULL, n));
                for (size_t i = 0; i < n; ++i) OK(tf_age_bloom_add(b, ptrs[i], lens[i]));
                break;
            case 1:
                OK(tf_age_bloom_contains_batch(a, n ? ptrs : NULL, n ? lens : NULL, n, n ? got : NULL));
                for (size_t i = 0; i < n; ++i) OK(tf_age_bloom_contains(b, ptrs[i], lens[i], &want[i]));
                if (n) assert_memory_equal(got, want, n * sizeof *got);
                break;
            default:
                OK(tf_age_bloom_add_if_absent_batch(a, n ? ptrs : NULL, n ? lens : NULL, n, n ? got : NULL));
                for (size_t i = 0; i < n; ++i) OK(tf_age_bloom_add_if_absent(b, ptrs[i], lens[i], &want[i]));
                if (n) assert_memory_equal(got, want, n * sizeof *got);
                break;
        }
        assert_true(ab_same(a, b));
    }
    /* a key twice in one batch: present the second time */
    const void *twice[2] = {"fresh-key", "fresh-key"};
    const size_t twice_len[2] = {9, 9};
    OK(tf_age_bloom_add_if_absent_batch(a, twice, twice_len, 2, got));
    assert_true(got[0] == 0 && got[1] == 1);
    tf_age_bloom_free(a);
    tf_age_bloom_free(b);
}

static void test_age_batch_equals_single(void **state) {
    (void)state;
    age_batches(0);
    age_batches(TF_AGE_BLOOM_BLOCKED);
}

static void test_time_batch_equals_single(void **state) {
    (void)state;
    tf_time_bloom *a = NULL, *b = NULL;
    OK(tf_time_bloom_new_for(500, 1e-2, 1000, 5, 0, &a));
    OK(tf_time_bloom_new_for(500, 1e-2, 1000, 5, 0, &b));
    tu_rng rng = {77};
    static tu_key keys[BATCH_MAX];
    const void *ptrs[BATCH_MAX];
    size_t lens[BATCH_MAX];
    int got[BATCH_MAX], want[BATCH_MAX];
    uint64_t now = 1;
    for (size_t round = 0; round < 90; ++round) {
        const size_t n = round <= 20 ? round : 50 + tu_below(&rng, BATCH_MAX - 50);
        make_keys(&rng, n, 4000, keys, ptrs, lens);
        /* time moves (rotations, retired slices), now and then backwards */
        now = round % 7 == 6 && now > 40 ? now - 40 : now + tu_below(&rng, 60);
        switch (round % 3) {
            case 0:
                OK(tf_time_bloom_add_batch(a, n ? ptrs : NULL, n ? lens : NULL, n, now));
                for (size_t i = 0; i < n; ++i) OK(tf_time_bloom_add(b, ptrs[i], lens[i], now));
                break;
            case 1:
                OK(tf_time_bloom_contains_batch(a, n ? ptrs : NULL, n ? lens : NULL, n, now, n ? got : NULL));
                for (size_t i = 0; i < n; ++i) OK(tf_time_bloom_contains(b, ptrs[i], lens[i], now, &want[i]));
                if (n) assert_memory_equal(got, want, n * sizeof *got);
                break;
            default:
                OK(tf_time_bloom_add_if_absent_batch(a, n ? ptrs : NULL, n ? lens : NULL, n, now, n ? got : NULL));
                for (size_t i = 0; i < n; ++i) OK(tf_time_bloom_add_if_absent(b, ptrs[i], lens[i], now, &want[i]));
                if (n) assert_memory_equal(got, want, n * sizeof *got);
                break;
        }
        assert_true(tb_same(a, b));
    }
    tf_time_bloom_free(a);
    tf_time_bloom_free(b);
}

static void test_batch_bad_input(void **state) {
    (void)state;
    tf_age_bloom *a = NULL;
    tf_time_bloom *t = NULL;
    OK(tf_age_bloom_new_for(100, 1e-2, 1, 0, &a));
    OK(tf_time_bloom_new_for(100, 1e-2, 1000, 1, 0, &t));
    OK(tf_age_bloom_add(a, "x", 1));
    OK(tf_time_bloom_add(t, "x", 1, 5));
    size_t alen, tlen;
    unsigned char *abefore = ab_snap(a, &alen), *tbefore = tb_snap(t, &tlen);
    const void *keys[3] = {"a", NULL, "c"};
    const size_t lens[3] = {1, 1, 1}, zero_lens[3] = {1, 0, 1};
    int out[3] = {7, 7, 7};
    /* a NULL key with a length, a NULL array, a NULL filter, a NULL out */
    BU_EXPECT_ERR(tf_age_bloom_add_batch(a, keys, lens, 3), TF_ERR_NULL, "keys[1]");
    BU_EXPECT_ERR(tf_age_bloom_add_batch(a, NULL, lens, 3), TF_ERR_NULL, "keys");
    BU_EXPECT_ERR(tf_age_bloom_add_batch(a, keys, NULL, 3), TF_ERR_NULL, "key_lens");
    BU_EXPECT_ERR(tf_age_bloom_add_batch(NULL, keys, zero_lens, 3), TF_ERR_NULL, "filter");
    BU_EXPECT_ERR(tf_age_bloom_contains_batch(a, keys, lens, 3, out), TF_ERR_NULL, "keys[1]");
    BU_EXPECT_ERR(tf_age_bloom_contains_batch(a, keys, zero_lens, 3, NULL), TF_ERR_NULL, "present");
    BU_EXPECT_ERR(tf_age_bloom_contains_batch(NULL, keys, zero_lens, 3, out), TF_ERR_NULL, "filter");
    BU_EXPECT_ERR(tf_age_bloom_add_if_absent_batch(a, keys, lens, 3, out), TF_ERR_NULL, "keys[1]");
    BU_EXPECT_ERR(tf_age_bloom_add_if_absent_batch(a, keys, zero_lens, 3, NULL), TF_ERR_NULL, "was_present");
    BU_EXPECT_ERR(tf_age_bloom_add_if_absent_batch(NULL, keys, zero_lens, 3, out), TF_ERR_NULL, "filter");
    BU_EXPECT_ERR(tf_time_bloom_add_batch(t, keys, lens, 3, 9), TF_ERR_NULL, "keys[1]");
    BU_EXPECT_ERR(tf_time_bloom_add_batch(t, keys, zero_lens, 3, 0), TF_ERR_INVALID_ARGUMENT, "now");
    BU_EXPECT_ERR(tf_time_bloom_add_batch(NULL, keys, zero_lens, 3, 9), TF_ERR_NULL, "filter");
    BU_EXPECT_ERR(tf_time_bloom_contains_batch(t, keys, lens, 3, 9, out), TF_ERR_NULL, "keys[1]");
    BU_EXPECT_ERR(tf_time_bloom_contains_batch(t, keys, zero_lens, 3, 0, out), TF_ERR_INVALID_ARGUMENT, "now");
    BU_EXPECT_ERR(tf_time_bloom_contains_batch(t, keys, zero_lens, 3, 9, NULL), TF_ERR_NULL, "present");
    BU_EXPECT_ERR(tf_time_bloom_contains_batch(NULL, keys, zero_lens, 3, 9, out), TF_ERR_NULL, "filter");
    BU_EXPECT_ERR(tf_time_bloom_add_if_absent_batch(t, keys, lens, 3, 9, out), TF_ERR_NULL, "keys[1]");
    BU_EXPECT_ERR(tf_time_bloom_add_if_absent_batch(t, keys, zero_lens, 3, 0, out), TF_ERR_INVALID_ARGUMENT, "now");
    BU_EXPECT_ERR(tf_time_bloom_add_if_absent_batch(t, keys, zero_lens, 3, 9, NULL), TF_ERR_NULL, "was_present");
    BU_EXPECT_ERR(tf_time_bloom_add_if_absent_batch(NULL, keys, zero_lens, 3, 9, out), TF_ERR_NULL, "filter");
    /* nothing written, nothing changed */
    assert_true(out[0] == 7 && out[1] == 7 && out[2] == 7);
    size_t n;
    unsigned char *aafter = ab_snap(a, &n);
    assert_true(n == alen && memcmp(aafter, abefore, n) == 0);
    unsigned char *tafter = tb_snap(t, &n);
    assert_true(n == tlen && memcmp(tafter, tbefore, n) == 0);
    /* count 0 with NULL arrays: a no-op */
    OK(tf_age_bloom_add_batch(a, NULL, NULL, 0));
    OK(tf_age_bloom_contains_batch(a, NULL, NULL, 0, NULL));
    OK(tf_time_bloom_add_if_absent_batch(t, NULL, NULL, 0, 9, NULL));
    /* a NULL key of length 0 is the empty key */
    OK(tf_age_bloom_add_if_absent_batch(a, keys, zero_lens, 3, out));
    int single;
    OK(tf_age_bloom_contains(a, "", 0, &single));
    assert_int_equal(single, 1);
    free(abefore);
    free(aafter);
    free(tbefore);
    free(tafter);
    tf_age_bloom_free(a);
    tf_time_bloom_free(t);
}

BU_DEFINE_GROUP(age_batch_tests, cmocka_unit_test(test_age_batch_equals_single),
                cmocka_unit_test(test_time_batch_equals_single), cmocka_unit_test(test_batch_bad_input));
