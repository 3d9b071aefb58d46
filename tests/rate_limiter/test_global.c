/* Rate limiter: the global limit over all keys, with per-key overrides. */
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

#include "limiter_util.h"
#include "limiter_model.h"
#include "temporalfilters.h"
#include "test_util.h"

static void test_global_and_overrides(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(3, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 5));
        OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 100)); /* above the global */
        OK(tf_rate_limiter_set_key_limit(r, "low", 3, 1));   /* below the default */
        OK(tf_rate_limiter_set_key_limit(r, "mid", 3, 4));   /* above the default */
        /* an override cannot take more than the global limit */
        EXPECT(acq(r, "vip", 100, 6), 0, 5, NEVER);
        EXPECT(acq(r, "vip", 100, 4), 1, 1, 0);
        EXPECT(acq(r, "vip", 150, 2), 0, 1, 1100);
        EXPECT(acq(r, "low", 150, 1), 1, 0, 0);
        EXPECT(acq(r, "vip", 150, 1), 0, 0, 1100);
        EXPECT(acq(r, "k", 150, 1), 0, 0, 1100);
        /* when the global window empties, each key up to its own limit */
        EXPECT(acq(r, "low", 1150, 2), 0, 1, NEVER);
        EXPECT(acq(r, "low", 1150, 1), 1, 0, 0);
        EXPECT(acq(r, "low", 1150, 1), 0, 0, ex ? 2150 : 2100);
        EXPECT(acq(r, "mid", 1150, 4), 1, 0, 0);              /* 4 > the default of 3 */
        EXPECT(acq(r, "k", 1150, 1), 0, 0, ex ? 2150 : 2100); /* global full again */
        /* 10 keys share the global window in any window */
        tf_rate_limiter *q = make(3, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(q, 7));
        uint64_t per_window[40] = {0}, total = 0;
        for (uint64_t t = 1; t <= 20000; t += 37) {
            for (uint64_t id = 0; id < 10; ++id) {
                dec d = acq_id(q, id, t, 1 + id % 2);
                if (d.allowed) per_window[t / 500] += 1 + id % 2;
            }
        }
        for (int i = 0; i + 1 < 40; ++i) {
            /* a 1000-long stretch [500 i, 500 i + 1000): at most 7 exact; the
             * bucketed global window can take up to 2 * 7 */
            uint64_t two = per_window[i] + per_window[i + 1];
            assert_true(two <= (ex ? 7u : 14u));
            total += per_window[i];
        }
        assert_true(total >= 7 * 15);
        tf_rate_limiter_free(q);
        /* changing and removing overrides on tracked keys */
        OK(tf_rate_limiter_set_global_limit(r, 0)); /* no global limit */
        EXPECT(acq(r, "k", 1200, 3), 1, 0, 0);
        OK(tf_rate_limiter_set_key_limit(r, "k", 1, 5));
        EXPECT(peek(r, "k", 1200, 2), 1, 0, 0);
        EXPECT(acq(r, "k", 1200, 3), 0, 2, 2200);
        OK(tf_rate_limiter_set_key_limit(r, "k", 1, 0)); /* back to the default */
        EXPECT(acq(r, "k", 1200, 1), 0, 0, 2200);
        OK(tf_rate_limiter_set_key_limit(r, "mid", 3, 2)); /* below what it holds */
        EXPECT(acq(r, "mid", 1200, 1), 0, 0, ex ? 2150 : 2100);
        EXPECT(acq(r, "mid", ex ? 2150 : 2100, 2), 1, 0, 0);
        /* an override set before the key is ever seen, kept while idle */
        OK(tf_rate_limiter_set_key_limit(r, "later", 5, 2));
        EXPECT(acq(r, "later", 3000, 2), 1, 0, 0);
        EXPECT(acq(r, "later", 9000, 3), 0, 2, NEVER);
        tf_rate_limiter_free(r);
    }
}

/* With a global limit, remaining is bounded by the global window's room
 * on every decision, including one the key itself refuses. */
static void test_remaining_bounded_by_global(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        EXPECT(acq(r, "A", 5, 1), 1, 1, 0);
        EXPECT(acq(r, "B", 6, 1), 1, 0, 0);
        dec d = acq(r, "A", 7, 10); /* more than A's limit: never */
        assert_int_equal(d.allowed, 0);
        assert_int_equal(d.retry_at, NEVER);
        if (d.remaining != 0)
            fail_msg("%s: remaining %llu although the global window has no room", mode_name(kModes[m]),
                     ULL(d.remaining));
        tf_rate_limiter_free(r);
        /* the key would grant n = 2 (then 0 left), the global window has 1:
         * denied, nothing taken, so 1 remains (the key still has 2) */
        r = make(3, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        EXPECT(acq(r, "A", 5, 1), 1, 1, 0);
        EXPECT(peek(r, "A", 6, 2), 0, 1, (kModes[m] & EXACT) ? 105 : 100);
        EXPECT(acq(r, "A", 6, 2), 0, 1, (kModes[m] & EXACT) ? 105 : 100);
        tf_rate_limiter_free(r);
    }
}

/* retry_at when both the key and the global window refuse: the later of
 * the two times, at which the request is granted. */
static void test_retry_at_with_global_and_key(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(2, 100, 5, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        EXPECT(acq(r, "A", 5, 1), 1, 1, 0);
        EXPECT(acq(r, "B", 10, 1), 1, 0, 0);
        /* A needs its permit of 5 gone (105) and the global window both (110) */
        dec d = acq(r, "A", 15, 2);
        assert_int_equal(d.allowed, 0);
        tf_rate_limiter *c = clone_of(r);
        const int early = acq(c, "A", d.retry_at > 0 ? d.retry_at - 1 : 0 + 1, 2).allowed;
        const int on_time = acq(c, "A", d.retry_at, 2).allowed;
        tf_rate_limiter_free(c);
        if (d.retry_at != 110 || early || !on_time)
            fail_msg("%s: retry_at %llu (want 110); granted one unit before: %d, at it: %d", mode_name(kModes[m]),
                     ULL(d.retry_at), early, on_time);
        tf_rate_limiter_free(r);
    }
}

/* A refund gives the key's own permits back to the global window: in
 * exact mode the global limit holds in every window afterwards. */
static void test_global_refund_gives_back_the_keys_permits(void **state) {
    (void)state;
    tf_rate_limiter *r = make(10, 100, 0, EXACT);
    OK(tf_rate_limiter_set_global_limit(r, 2));
    EXPECT(acq(r, "A", 10, 1), 1, 1, 0);
    EXPECT(acq(r, "B", 50, 1), 1, 0, 0);
    OK(tf_rate_limiter_refund(r, "A", 1, 60, 1)); /* A's permit of 10 goes back */
    /* B's permit of 50 counts until 150: one more in (11, 111] at most */
    EXPECT(acq(r, "C", 111, 1), 1, 0, 0);
    EXPECT(acq(r, "D", 111, 1), 0, 0, 150);
    tf_rate_limiter_free(r);
}

/* Setting a global limit starts an empty global window, and the permits
 * the keys took before are not in it: a refund of one of them must not
 * give the new window back a permit it never recorded (it took away
 * another key's grant, and the global limit was exceeded: 8 permits in a
 * window under a limit of 5). Also after a round trip, which keeps the
 * window's clock; refunds of later permits still go back to it. */
static void test_refund_of_a_permit_older_than_the_global_window(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (int trip = 0; trip < 2; ++trip) {
            tf_rate_limiter *r = make(100, 40, 10, kModes[m]);
            assert_int_equal(acq(r, "K", 5, 3).allowed, 1);
            OK(tf_rate_limiter_set_global_limit(r, 5));
            assert_int_equal(acq(r, "K2", 5, 5).allowed, 1); /* at K's time: the same bucket or time */
            if (trip) {
                tf_rate_limiter *c = clone_of(r);
                tf_rate_limiter_free(r);
                r = c;
            }
            OK(tf_rate_limiter_refund(r, "K", 1, 7, 3));
            dec d = acq(r, "K3", 8, 3);
            if (d.allowed)
                fail_msg(
                    "%s%s: K3 granted 3 permits beside K2's 5 under a global limit of 5 (the refund of K's "
                    "permits of before the limit took K2's)",
                    mode_name(kModes[m]), trip ? " (after a round trip)" : "");
            assert_true(d.retry_at > 8 && d.retry_at <= 50);
            /* later permits go back to the global window as before */
            assert_int_equal(acq(r, "K4", 60, 5).allowed, 1);
            assert_int_equal(acq(r, "K5", 61, 1).allowed, 0);
            OK(tf_rate_limiter_refund(r, "K4", 2, 62, 5));
            assert_int_equal(acq(r, "K5", 63, 5).allowed, 1);
            tf_rate_limiter_free(r);
        }
    }
}

/* Fail-open admits a new key the full table cannot track; the global
 * limit ("requests are then granted only when both the key and the global
 * window allow them") still holds. */
static void test_full_allow_keeps_the_global_limit(void **state) {
    (void)state;
    tf_rate_limiter *r = make(5, 100, 10, TF_RATE_LIMITER_FULL_ALLOW);
    OK(tf_rate_limiter_set_global_limit(r, 3));
    OK(tf_rate_limiter_set_max_keys(r, 1));
    EXPECT(acq(r, "A", 5, 3), 1, 0, 0);
    dec d = acq(r, "B", 6, 1);
    tf_rate_limiter_stats s = stats_of(r);
    if (d.allowed)
        fail_msg("an untracked key was admitted past a full global window (allowed_full %llu)", ULL(s.allowed_full));
    tf_rate_limiter_free(r);
}

/* The same interplay as a property: 200 keys, overrides above and below
 * the default and above the global limit, the global limit binding often. */
static void test_global_property(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        prop_cfg c = {kModes[m], 4, 1000, 100, 40, 300, 16, 100, 300000, 0, 21 + m, 0, 0, 0};
        ref rm;
        tf_rate_limiter *r;
        run_property(&c, &rm, &r);
        uint64_t lim;
        for (size_t id = 0; id < c.nkeys; ++id) {
            uint64_t most = max_in_interval(&rm, (long)id, c.window, 0, &lim);
            if (kModes[m] & EXACT) assert_true(most <= lim);
        }
        uint64_t g = max_in_interval(&rm, -1, c.window, 1, &lim);
        uint64_t g_short = max_in_interval(&rm, -1, c.window - c.width + 1, 1, &lim);
        assert_true(g_short <= c.global);
        assert_true(g <= ((kModes[m] & EXACT) ? c.global : 2 * c.global));
        assert_true(g_short == c.global); /* it did bind */
        ref_free(&rm);
        tf_rate_limiter_free(r);
    }
}

TU_MAIN(test_global_and_overrides, test_remaining_bounded_by_global, test_retry_at_with_global_and_key,
        test_global_refund_gives_back_the_keys_permits, test_refund_of_a_permit_older_than_the_global_window,
        test_full_allow_keeps_the_global_limit, test_global_property)
