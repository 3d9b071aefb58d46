/* Rate limiter's wire format (kind 4): round trips, the serialize contract,
 * a lowered limit, deserialize's memory limit and the golden blobs of
 * tests/data. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "golden.h"
#include "limiter_util.h"
#include "temporalfilters.h"
#include "test_util.h"

static void test_serialize_round_trip(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (int allow = 0; allow < 2; ++allow) {
            tf_rate_limiter *r = populated(kModes[m] | (allow ? TF_RATE_LIMITER_FULL_ALLOW : 0));
            size_t n;
            unsigned char *blob = snap(r, &n);
            tu_check_envelope(blob, n, 4, kModes[m] | (allow ? TF_RATE_LIMITER_FULL_ALLOW : 0));
            tf_rate_limiter *c = NULL;
            OK(tf_rate_limiter_deserialize(blob, n, NULL, &c));
            tf_rate_limiter_stats s1 = stats_of(r), s2 = stats_of(c);
            assert_int_equal(s1.keys, s2.keys);
            assert_int_equal(s1.reclaimed, s2.reclaimed);
            assert_int_equal(s1.denied_full, s2.denied_full);
            assert_int_equal(s1.allowed_full, s2.allowed_full);
            size_t n2;
            unsigned char *again = snap(c, &n2);
            assert_int_equal(n2, n);
            free(again);
            /* nobody who is limited is forgotten: the same decisions from here */
            assert_same_decisions(r, c, 2400, 99 + m);
            free(blob);
            tf_rate_limiter_free(c);
            tf_rate_limiter_free(r);
        }
    }
    /* max_keys, the policy and the counters survive */
    for (int allow = 0; allow < 2; ++allow) {
        tf_rate_limiter *r = make(2, 100, 10, allow ? TF_RATE_LIMITER_FULL_ALLOW : 0);
        OK(tf_rate_limiter_set_max_keys(r, 2));
        (void)acq(r, "a", 5, 2);
        (void)acq(r, "b", 5, 1);
        (void)acq(r, "c", 5, 1);
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq(c, "d", 6, 1), allow, 0, allow ? 0 : NEVER);
        EXPECT(acq(c, "a", 6, 1), 0, 0, 100);
        EXPECT(acq(c, "b", 6, 1), 1, 0, 0);
        tf_rate_limiter_stats s = stats_of(c);
        assert_int_equal(s.keys, 2);
        assert_int_equal(allow ? s.allowed_full : s.denied_full, 2);
        tf_rate_limiter_free(c);
        tf_rate_limiter_free(r);
    }
}

static void test_serialize_buffer_too_small(void **state) {
    (void)state;
    tf_rate_limiter *r = populated(0);
    size_t need;
    tu_check_serialize_contract(r, &tu_rate_limiter);
    /* an empty limiter: the envelope and the fixed fields */
    tf_rate_limiter *e = make(1, 1, 1, 0);
    OK(tf_rate_limiter_serialized_size(e, &need));
    assert_int_equal(need, 20 + 10 * 8 + 8 + 8 + 8);
    tf_rate_limiter_free(e);
    tf_rate_limiter_free(r);
}

/* A key whose limit was lowered below what it holds is a state the
 * library makes; its blob reads back. */
static void test_serialize_lowered_limit(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const uint64_t at = (kModes[m] & EXACT) ? 105 : 100;
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        EXPECT(acq(r, "A", 5, 5), 1, 0, 0);
        OK(tf_rate_limiter_set_key_limit(r, "A", 1, 2));
        EXPECT(acq(r, "A", 6, 1), 0, 0, at);
        size_t n;
        unsigned char *blob = snap(r, &n);
        tf_rate_limiter *c = NULL;
        tf_status st = tf_rate_limiter_deserialize(blob, n, NULL, &c);
        if (st != TF_OK) fail_msg("%s: %s (%s)", mode_name(kModes[m]), tf_status_string(st), tf_last_error_message());
        EXPECT(acq(c, "A", 7, 1), 0, 0, at);
        tf_rate_limiter_free(c);
        free(blob);
        tf_rate_limiter_free(r);
    }
}

/* Checks max_memory on the blob of `r`: its memory figure is known before
 * anything is allocated (the tables as they grow, long keys, exact rings,
 * the global window and the overrides). */
static void check_max_memory_of(const tf_rate_limiter *r) {
    size_t n;
    unsigned char *blob = snap(r, &n);
    /* the copy's memory: its tables grew only as far as its keys need */
    tf_rate_limiter *c = NULL;
    OK(tf_rate_limiter_deserialize(blob, n, NULL, &c));
    assert_int_equal(tu_check_max_memory(blob, n, &tu_rate_limiter), stats_of(c).memory);
    tf_rate_limiter_free(c);
    free(blob);
}

static void test_deserialize_max_memory(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(4, 1000, 100, kModes[m]);
        check_max_memory_of(r); /* empty */
        tf_rate_limiter_free(r);
        r = populated(kModes[m]); /* a global window, overrides, keys */
        check_max_memory_of(r);
        /* long keys (stored out of line), long overrides, and enough keys
         * for every shard's table to grow several times */
        OK(tf_rate_limiter_set_key_limit(r, "an override with a rather long key", 34, 3));
        for (uint64_t i = 0; i < 3000; ++i) {
            char key[64];
            const int len = snprintf(key, sizeof key, "%s-%llu", i % 3 ? "k" : "a-key-longer-than-16-bytes", ULL(i));
            (void)acq_b(r, key, (size_t)len, 2500 + i % 7, 1);
        }
        check_max_memory_of(r);
        tf_rate_limiter_free(r);
    }
    /* an exact limiter with large limits: its rings hold the grants, not
     * the limits (8 bytes per permit of the limits were 16 MB) */
    tf_rate_limiter *r = make(100000, 1000, 0, EXACT);
    OK(tf_rate_limiter_set_global_limit(r, 1u << 20));
    for (uint64_t i = 0; i < 20; ++i) (void)acq_id(r, i, 10, 1);
    check_max_memory_of(r);
    tf_rate_limiter_stats s = stats_of(r);
    assert_true(s.memory < 64 * 1024);
    tf_rate_limiter_free(r);
}

typedef struct {
    tf_rate_limiter *blob, *built;
    unsigned denied;
} golden_check;

/* One line of a golden .expected file: a peek at GOLDEN_RL_PEEK_AT, on the
 * blob and on the limiter built today. */
static void check_answer(const unsigned char *key, size_t key_len, const unsigned long long *want, void *ctx) {
    golden_check *g = ctx;
    EXPECT(peek_b(g->blob, key, key_len, GOLDEN_RL_PEEK_AT, 1), (int)want[0], want[1], want[2]);
    EXPECT(peek_b(g->built, key, key_len, GOLDEN_RL_PEEK_AT, 1), (int)want[0], want[1], want[2]);
    g->denied += want[0] == 0;
}

static void check_golden(const char *name, int exact) {
    /* the same operations today give the same bytes, and the blob reads
     * back with the recorded answers */
    tf_rate_limiter *built = NULL;
    OK(golden_rate_limiter(exact ? TF_RATE_LIMITER_EXACT : 0, &built));
    tf_rate_limiter *r = tu_golden_read(name, built, &tu_rate_limiter);
    golden_check g = {r, built, 0};
    assert_int_equal(tu_for_each_answer(name, 3, check_answer, &g), GOLDEN_RL_KEYS + 1);
    assert_true(g.denied > 0);
    /* key-7 kept its override of 9, the others the default of 5 */
    assert_int_equal(peek(r, "key-7", GOLDEN_RL_PEEK_AT, 9).retry_at != NEVER, 1);
    assert_int_equal(peek(r, "key-7", GOLDEN_RL_PEEK_AT, 10).retry_at, NEVER);
    assert_int_equal(peek(r, "key-6", GOLDEN_RL_PEEK_AT, 6).retry_at, NEVER);
    tf_rate_limiter_free(r);
    tf_rate_limiter_free(built);
}

static void test_golden_blobs(void **state) {
    (void)state;
    check_golden("rate_limiter_v1", 0);
    check_golden("rate_limiter_exact_v1", 1);
}

TU_MAIN(test_serialize_round_trip, test_serialize_buffer_too_small, test_serialize_lowered_limit,
        test_deserialize_max_memory, test_golden_blobs)
