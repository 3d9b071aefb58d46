/* RecencySketch basics: creation and info, update and query (single and
 * batch), seeds, the TTL prefilter, merge and clear. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sketch_util.h"
#include "temporalfilters.h"
#include "test_util.h"

static void test_new_and_info(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(1000, 4, 7, kModes[m]);
        const tf_recency_sketch_info info = info_of(s);
        assert_int_equal(info.size, sizeof info);
        assert_int_equal(info.width, 1000);
        assert_int_equal(info.depth, 4);
        assert_int_equal(info.seed, 7);
        assert_int_equal(info.flags, kModes[m]);
        assert_int_equal(info.cells, 4000); /* 4000 is a multiple of 8: same in both layouts */
        tu_check_versioned_out(s, sizeof info, tu_recency_sketch.get_info, NULL);
        size_t bytes;
        OK(tf_recency_sketch_memory(s, &bytes));
        assert_true(bytes >= 4000 * 8 && bytes < 4000 * 8 + 1024);
        for (uint64_t i = 0; i < 1000; ++i) assert_int_equal(qry(s, i), TF_NEVER);
        double p = 1;
        OK(tf_recency_sketch_error_estimate(s, 0, &p));
        assert_true(p == 0.0);
        tf_recency_sketch_free(s);
    }
    /* blocked tables round up to whole cache lines */
    tf_recency_sketch *s = make(1001, 3, 0, TF_RECENCY_SKETCH_BLOCKED);
    assert_int_equal(info_of(s).cells, 3008); /* ceil(3003 / 8) * 8 */
    tf_recency_sketch_free(s);
}

static void test_update_query_basics(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(4096, 4, 1, kModes[m]);
        OK(tf_recency_sketch_update(s, "alpha", 5, 10));
        uint64_t t = 0;
        OK(tf_recency_sketch_query(s, "alpha", 5, &t));
        assert_int_equal(t, 10);
        OK(tf_recency_sketch_update(s, "alpha", 5, 5)); /* older: no effect */
        OK(tf_recency_sketch_query(s, "alpha", 5, &t));
        assert_int_equal(t, 10);
        OK(tf_recency_sketch_update(s, "alpha", 5, 20));
        OK(tf_recency_sketch_query(s, "alpha", 5, &t));
        assert_int_equal(t, 20);
        /* the empty key is a key */
        OK(tf_recency_sketch_query(s, NULL, 0, &t));
        assert_int_equal(t, TF_NEVER);
        OK(tf_recency_sketch_update(s, NULL, 0, 33));
        OK(tf_recency_sketch_query(s, "", 0, &t));
        assert_int_equal(t, 33);
        /* keys are binary: NUL bytes count, prefixes differ */
        OK(tf_recency_sketch_update(s, "a\0b", 3, 40));
        OK(tf_recency_sketch_query(s, "a\0b", 3, &t));
        assert_int_equal(t, 40);
        OK(tf_recency_sketch_query(s, "a\0c", 3, &t));
        assert_int_equal(t, TF_NEVER);
        OK(tf_recency_sketch_query(s, "a", 1, &t));
        assert_int_equal(t, TF_NEVER);
        /* the largest timestamp is fine */
        OK(tf_recency_sketch_update(s, "max", 3, UINT64_MAX));
        OK(tf_recency_sketch_query(s, "max", 3, &t));
        assert_int_equal(t, UINT64_MAX);
        tf_recency_sketch_free(s);
    }
}

/* Different seeds give different cell positions (independent sketches). */
static void test_seed_changes_positions(void **state) {
    (void)state;
    tf_recency_sketch *a = make(64, 1, 1, 0), *b = make(64, 1, 2, 0);
    for (uint64_t i = 0; i < 16; ++i) {
        upd(a, i, 5);
        upd(b, i, 5);
    }
    int differ = 0;
    for (uint64_t j = 1000; j < 2000; ++j) differ += (qry(a, j) == 5) != (qry(b, j) == 5);
    assert_true(differ > 100);
    tf_recency_sketch_free(a);
    tf_recency_sketch_free(b);
}

/* Batches give exactly the results of one call per key, in order. */
static void test_batch_matches_single(void **state) {
    (void)state;
    enum { N = 3000 };
    static unsigned char keybuf[N][24];
    const void *keys[N];
    size_t lens[N];
    uint64_t times[N], got[N];
    tu_rng r = {31};
    for (size_t i = 0; i < N; ++i) {
        lens[i] = (size_t)tu_below(&r, 24); /* lengths 0..23, all tail cases */
        for (size_t j = 0; j < lens[i]; ++j) keybuf[i][j] = (unsigned char)tu_below(&r, 4); /* repeats */
        keys[i] = lens[i] ? keybuf[i] : NULL;
        times[i] = 1 + tu_below(&r, 1000000); /* out of order */
    }
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *a = make(256, 3, 5, kModes[m]), *b = make(256, 3, 5, kModes[m]);
        OK(tf_recency_sketch_update_batch(a, keys, lens, N, times));
        for (size_t i = 0; i < N; ++i) OK(tf_recency_sketch_update(b, keys[i], lens[i], times[i]));
        assert_true(same(a, b));
        OK(tf_recency_sketch_query_batch(a, keys, lens, N, got));
        for (size_t i = 0; i < N; ++i) {
            uint64_t t;
            OK(tf_recency_sketch_query(b, keys[i], lens[i], &t));
            assert_int_equal(got[i], t);
            assert_true(t >= times[i]);
        }
        /* empty batches are fine, even with NULL arrays */
        OK(tf_recency_sketch_update_batch(a, NULL, NULL, 0, NULL));
        OK(tf_recency_sketch_query_batch(a, NULL, NULL, 0, NULL));
        /* a bad element fails the whole batch before anything changes */
        size_t n;
        unsigned char *before = snap(a, &n);
        uint64_t bad_times[N];
        memcpy(bad_times, times, sizeof bad_times);
        for (size_t i = 0; i < N; ++i) bad_times[i] += 5000000;
        bad_times[N - 1] = 0;
        tf_clear_last_error();
        assert_int_equal(tf_recency_sketch_update_batch(a, keys, lens, N, bad_times), TF_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(tf_last_error_message(), "times[2999]"));
        assert_unchanged(a, before, n);
        const void *bad_keys[2] = {"x", NULL};
        size_t bad_lens[2] = {1, 4};
        assert_int_equal(tf_recency_sketch_update_batch(a, bad_keys, bad_lens, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_query_batch(a, bad_keys, bad_lens, 2, got), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(a, NULL, lens, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(a, keys, NULL, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(a, keys, lens, 2, NULL), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_update_batch(NULL, keys, lens, 2, times), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_query_batch(a, keys, lens, 2, NULL), TF_ERR_NULL);
        assert_int_equal(tf_recency_sketch_query_batch(NULL, keys, lens, 2, got), TF_ERR_NULL);
        assert_unchanged(a, before, n);
        free(before);
        tf_recency_sketch_free(a);
        tf_recency_sketch_free(b);
    }
}

static void test_ttl_prefilter(void **state) {
    (void)state;
    enum { KEYS = 20000, OPS = 600000 };
    for (size_t m = 0; m < NMODES; ++m) {
        uint64_t *expiry = calloc(KEYS, sizeof *expiry); /* expiry of the latest insert */
        tf_recency_sketch *s = make(16384, 4, 17, kModes[m]);
        tu_rng rng = {99};
        uint64_t clock = 1000, live_checks = 0, expired_checks = 0, false_live = 0;
        for (int op = 0; op < OPS; ++op) {
            uint64_t id = tu_below(&rng, KEYS);
            clock += tu_below(&rng, 3);
            tu_key k = tu_make_key('t', id);
            if (tu_below(&rng, 3) == 0) {
                uint64_t ttl = 1 + tu_below(&rng, 2000);
                OK(tf_recency_sketch_ttl_insert(s, k.b, sizeof k.b, clock, ttl));
                expiry[id] = clock + ttl;
            } else {
                /* ask about now, and sometimes about the past (clock skew) */
                uint64_t now = clock;
                if (tu_below(&rng, 5) == 0) now = clock > 3000 ? clock - tu_below(&rng, 3000) : clock;
                int live = -1;
                uint64_t at = 0;
                OK(tf_recency_sketch_ttl_maybe_live(s, k.b, sizeof k.b, now, &live, &at));
                assert_true(at >= expiry[id]);
                if (now < expiry[id]) {
                    live_checks++;
                    if (!live) fail_msg("live key %llu reported expired", (unsigned long long)id);
                } else {
                    expired_checks++;
                    false_live += live;
                }
            }
        }
        print_message("# ttl flags %u: %llu live checks, %llu expired checks, %llu wrongly maybe-live\n", kModes[m],
                      (unsigned long long)live_checks, (unsigned long long)expired_checks,
                      (unsigned long long)false_live);
        assert_true(live_checks > 1000 && expired_checks > 1000);
        /* the filter is useful: most expired keys are caught */
        assert_true(false_live < expired_checks / 2);
        free(expiry);
        tf_recency_sketch_free(s);
    }
    /* never inserted -> certainly expired; TTL saturates */
    tf_recency_sketch *s = make(64, 2, 0, 0);
    int live = 1;
    uint64_t at = 1;
    OK(tf_recency_sketch_ttl_maybe_live(s, "x", 1, 5, &live, &at));
    assert_int_equal(live, 0);
    assert_int_equal(at, TF_NEVER);
    OK(tf_recency_sketch_ttl_insert(s, "x", 1, UINT64_MAX - 5, 100));
    OK(tf_recency_sketch_ttl_maybe_live(s, "x", 1, UINT64_MAX - 1, &live, &at));
    assert_int_equal(live, 1);
    assert_int_equal(at, UINT64_MAX);
    OK(tf_recency_sketch_ttl_insert(s, "y", 1, 10, 5));
    OK(tf_recency_sketch_ttl_maybe_live(s, "y", 1, 14, &live, NULL));
    assert_int_equal(live, 1);
    OK(tf_recency_sketch_ttl_maybe_live(s, "y", 1, 15, &live, NULL)); /* live while now < t + ttl */
    assert_int_equal(live, 0);
    tf_recency_sketch_free(s);
}

static void test_merge_laws(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        uint32_t f = kModes[m];
        tf_recency_sketch *a = random_sketch(f, 1, 800), *b = random_sketch(f, 2, 800), *c = random_sketch(f, 3, 800);
        /* commutative: a+b == b+a */
        tf_recency_sketch *ab = copy_of(a), *ba = copy_of(b);
        OK(tf_recency_sketch_merge(ab, b));
        OK(tf_recency_sketch_merge(ba, a));
        assert_true(same(ab, ba));
        assert_false(same(ab, a));
        /* associative: (a+b)+c == a+(b+c) */
        tf_recency_sketch *bc = copy_of(b);
        OK(tf_recency_sketch_merge(bc, c));
        tf_recency_sketch *a_bc = copy_of(a);
        OK(tf_recency_sketch_merge(a_bc, bc));
        OK(tf_recency_sketch_merge(ab, c));
        assert_true(same(ab, a_bc));
        /* idempotent: a+a == a, also through the same handle */
        tf_recency_sketch *aa = copy_of(a);
        OK(tf_recency_sketch_merge(aa, a));
        assert_true(same(aa, a));
        OK(tf_recency_sketch_merge(aa, aa));
        assert_true(same(aa, a));
        /* the merge answers for both streams: never older than either */
        for (uint64_t id = 0; id < 5000; ++id) {
            uint64_t qa = qry(a, id), qb = qry(b, id), qm = qry(ba, id);
            assert_true(qm >= qa && qm >= qb);
        }
        tf_recency_sketch *all[] = {a, b, c, ab, ba, bc, a_bc, aa};
        for (size_t i = 0; i < 8; ++i) tf_recency_sketch_free(all[i]);
    }
    /* the concurrency mode may differ: it is not part of the shape */
    tf_recency_sketch *p = random_sketch(0, 5, 300), *q = random_sketch(TF_RECENCY_SKETCH_CONCURRENT, 6, 300);
    OK(tf_recency_sketch_merge(q, p));
    OK(tf_recency_sketch_merge(p, q));
    for (uint64_t id = 0; id < 5000; ++id) assert_int_equal(qry(p, id), qry(q, id));
    tf_recency_sketch_free(p);
    tf_recency_sketch_free(q);
}

static void test_merge_incompatible(void **state) {
    (void)state;
    tf_recency_sketch *base = random_sketch(0, 1, 500);
    size_t n;
    unsigned char *before = snap(base, &n);
    tf_recency_sketch *others[] = {make(511, 3, 77, 0), make(512, 4, 77, 0), make(512, 3, 78, 0),
                                   make(512, 3, 77, TF_RECENCY_SKETCH_BLOCKED)};
    for (size_t i = 0; i < 4; ++i) {
        upd(others[i], 1, 999999);
        tf_clear_last_error();
        assert_int_equal(tf_recency_sketch_merge(base, others[i]), TF_ERR_INCOMPATIBLE);
        assert_true(strlen(tf_last_error_message()) > 0);
        assert_unchanged(base, before, n);
        tf_recency_sketch_free(others[i]);
    }
    free(before);
    tf_recency_sketch_free(base);
}

static void test_clear(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 9, 2000);
        OK(tf_recency_sketch_clear(s));
        for (uint64_t id = 0; id < 5000; ++id) assert_int_equal(qry(s, id), TF_NEVER);
        double p;
        OK(tf_recency_sketch_error_estimate(s, 0, &p));
        assert_true(p == 0.0);
        tf_recency_sketch *fresh = make(512, 3, 77, kModes[m]);
        assert_true(same(s, fresh));
        tf_recency_sketch_free(fresh);
        tf_recency_sketch_free(s);
    }
}

TU_MAIN(test_new_and_info, test_update_query_basics, test_seed_changes_positions, test_batch_matches_single,
        test_ttl_prefilter, test_merge_laws, test_merge_incompatible, test_clear)
