/* Rate limiter decisions of one key: the Rate Limiter README's worked
 * example, the exact-mode invariant and the bucketed bound as properties
 * against the reference model (limiter_model.c), retry_at, remaining, n
 * permits, peek, refund, reset, binary keys and clocks that go backwards. */
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

/* The long property runs: 1e6 requests (2e5 for the other bucket widths);
 * a quarter of each where counts are reduced (TU_REDUCED, test_util.h). */
#define RL_LONG (TU_REDUCED ? 250000 : 1000000)
#define RL_MID (TU_REDUCED ? 50000 : 200000)
/* ... from 1e4 keys (2,500 where reduced: every one of them is seen) */
#define RL_KEYS (TU_REDUCED ? 2500 : 10000)

/* The Rate Limiter README's worked example, in both modes. */
static void readme_example(uint32_t flags) {
    /* 5 requests per second, 100 ms buckets, the README's timestamps */
    tf_rate_limiter *r = make(5, 1000, 100, flags);
    const uint64_t T = 1592171100000ULL;
    EXPECT(acq(r, "user", T + 1900, 1), 1, 4, 0);
    EXPECT(acq(r, "user", T + 1950, 1), 1, 3, 0);
    EXPECT(acq(r, "user", T + 2013, 1), 1, 2, 0);
    EXPECT(acq(r, "user", T + 2810, 1), 1, 1, 0);
    EXPECT(acq(r, "user", T + 2850, 1), 1, 0, 0); /* total = 5 */
    /* "total = 5 is equal to rps = 5, so we return False"; the bucket
     * 15921711019 (two requests) leaves at 1592171102900 (bucketed), the
     * request at ...1900 leaves then too (exact) */
    EXPECT(acq(r, "user", T + 2890, 1), 0, 0, T + 2900);
    {
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq(c, "user", T + 2899, 1), 0, 0, T + 2900); /* one unit early */
        /* bucketed: both requests of that bucket leave (total 3 -> 4);
         * exact: only ...1900 has left (4 -> 5) */
        EXPECT(acq(c, "user", T + 2900, 1), 1, (flags & EXACT) ? 0 : 1, 0);
        tf_rate_limiter_free(c);
    }
    /* "Next request comes at 1592171102980": the bucket is outdated,
     * total 5 - 2 = 3 < 5, allowed, total = 4 */
    EXPECT(acq(r, "user", T + 2980, 1), 1, 1, 0);
    EXPECT(acq(r, "user", T + 2981, 1), 1, 0, 0);
    /* the oldest left is ...2013 (bucket 15921711020) */
    EXPECT(acq(r, "user", T + 2982, 1), 0, 0, (flags & EXACT) ? T + 3013 : T + 3000);
    tf_rate_limiter_free(r);

    /* The README's error analysis: 1 rps, 100 ms buckets, requests at
     * ...1990 and ...2930 are both allowed by the buckets although less than
     * a second apart; the exact mode refuses the second until ...2990. */
    r = make(1, 1000, 100, flags);
    EXPECT(acq(r, "u", T + 1990, 1), 1, 0, 0);
    if (flags & EXACT)
        EXPECT(acq(r, "u", T + 2930, 1), 0, 0, T + 2990);
    else
        EXPECT(acq(r, "u", T + 2930, 1), 1, 0, 0);
    tf_rate_limiter_free(r);
}

static void test_readme_example(void **state) {
    (void)state;
    readme_example(0);
    readme_example(EXACT);
}

/* The exact-mode invariant: never more than the key's limit in any
 * (t - window, t], over >= 1e6 requests from >= 1e4 keys (2.5e5 from 2,500
 * where counts are reduced). */
static void test_exact_property(void **state) {
    (void)state;
    prop_cfg c = {EXACT, 4, 1000, 0, 0, RL_KEYS, 64, 1000, RL_LONG, 1, 11, 0, 0, 0};
    ref m;
    tf_rate_limiter *r;
    run_property(&c, &m, &r);
    uint64_t keys_seen = 0, limited = 0;
    for (size_t id = 0; id < c.nkeys; ++id) {
        uint64_t lim, most = max_in_interval(&m, (long)id, c.window, 0, &lim);
        if (most > lim) fail_msg("key %zu: %llu permits in one window, limit %llu", id, ULL(most), ULL(lim));
        keys_seen += m.keys[id].last_log >= 0;
        limited += most == lim;
    }
    assert_true(keys_seen >= RL_KEYS);
    assert_true(limited >= 64);
    print_message("# exact: %ld requests, %llu keys granted, %llu permits, %llu keys reached their limit\n", c.ops,
                  ULL(keys_seen), ULL(m.granted), ULL(limited));
    tf_rate_limiter_stats s = stats_of(r);
    assert_true(s.reclaimed > 0); /* idle keys went away meanwhile */
    assert_true(s.keys < RL_KEYS);
    ref_free(&m);
    tf_rate_limiter_free(r);
}

/* The exact-mode invariant and every decision against the model with
 * times far from 0 and far apart. A ring keeps each grant as a 32-bit
 * offset from a base at or below its oldest grant when the window is at
 * most 2^31 time units (rebased, every held grant rewritten, when a new
 * time does not fit), the time itself above 2^31: windows on both sides
 * of that line, with and without a global window, rings that grow (limit
 * 12: 4, 8, then 12 slots), times crossing 2^32 and near 2^63, steps of up
 * to 2^26 and jumps of up to 2^44. */
static void test_exact_property_far_times(void **state) {
    (void)state;
    static const struct {
        uint64_t limit, global, window, t0, step, jump;
    } runs[] = {
        {4, 0, 1000, (1ULL << 32) - 5000, 40, 1ULL << 40},
        {4, 0, 1ULL << 31, 1ULL << 63, 1ULL << 26, 0},
        {4, 0, (1ULL << 31) + 1, 1ULL << 63, 1ULL << 26, 0},
        {12, 20, 1ULL << 31, (1ULL << 62) + 3, 1ULL << 25, 1ULL << 34},
        {4, 0, (1ULL << 40) + 7, 5, 1ULL << 36, 1ULL << 44},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; ++i) {
        const int refunds = runs[i].global == 0; /* the model's refunds know no global window */
        prop_cfg c = {EXACT, runs[i].limit, runs[i].window, 0,      runs[i].global, 64,           2,
                      8,     RL_MID / 2,    refunds,        51 + i, runs[i].t0,     runs[i].step, runs[i].jump};
        ref m;
        tf_rate_limiter *r;
        run_property(&c, &m, &r);
        uint64_t limited = 0;
        for (size_t id = 0; id < c.nkeys; ++id) {
            uint64_t lim, most = max_in_interval(&m, (long)id, c.window, 0, &lim);
            if (most > lim) fail_msg("key %zu: %llu permits in one window, limit %llu", id, ULL(most), ULL(lim));
            limited += most == lim;
        }
        assert_true(limited >= 2); /* the hot keys reached their limits */
        if (c.global) {
            uint64_t lim, most = max_in_interval(&m, -1, c.window, 1, &lim);
            if (most > lim) fail_msg("global: %llu permits in one window, limit %llu", ULL(most), ULL(lim));
            assert_true(most == lim); /* the global window filled */
        }
        print_message("# exact, window %llu from %llu: %llu permits, %llu keys reached their limit\n", ULL(c.window),
                      ULL(c.t0), ULL(m.granted), ULL(limited));
        ref_free(&m);
        tf_rate_limiter_free(r);
    }
}

/* The bucketed mode: the exact rule over bucket-rounded times, decision by
 * decision (ref_op also fails if it ever denies what the exact rule over
 * its own history grants); hence at most `limit` permits in any real
 * interval of length window - width + 1 and at most 2 * limit in one of
 * length window. */
static void test_bucketed_property(void **state) {
    (void)state;
    const uint64_t widths[] = {100, 250, 1000, 1};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
        prop_cfg c = {0, 4, 1000, widths[w], 0, 10000, 64, 1000, w == 0 ? RL_LONG : RL_MID, 1, 12 + w, 0, 0, 0};
        ref m;
        tf_rate_limiter *r;
        run_property(&c, &m, &r);
        uint64_t worst_short = 0, worst_window = 0, over_limit_windows = 0;
        for (size_t id = 0; id < c.nkeys; ++id) {
            uint64_t lim;
            uint64_t a = max_in_interval(&m, (long)id, c.window - c.width + 1, 0, &lim);
            uint64_t b = max_in_interval(&m, (long)id, c.window, 0, &lim);
            if (a > lim)
                fail_msg("width %llu key %zu: %llu permits within window - width + 1", ULL(c.width), id, ULL(a));
            if (b > 2 * lim) fail_msg("width %llu key %zu: %llu permits within a window", ULL(c.width), id, ULL(b));
            if (a * 100 / lim > worst_short) worst_short = a * 100 / lim;
            if (b * 100 / lim > worst_window) worst_window = b * 100 / lim;
            over_limit_windows += b > lim;
        }
        if (c.width == 1) assert_int_equal(m.over_admitted, 0); /* one-unit buckets are exact */
        if (c.width == 1) assert_int_equal(over_limit_windows, 0);
        if (c.width == 100) assert_true(m.over_admitted > 0);
        print_message(
            "# bucketed, %llu buckets: over-admission %.3f%% of %llu permits on random traffic; busiest "
            "window %llu%% of the limit (%llu keys above it), busiest window - width + 1: %llu%%\n",
            ULL(c.window / c.width), 100.0 * (double)m.over_admitted / (double)m.granted, ULL(m.granted),
            ULL(worst_window), ULL(over_limit_windows), ULL(worst_short));
        ref_free(&m);
        tf_rate_limiter_free(r);
    }
}

/* Adversarial traffic reaches the bucketed bound exactly: `limit` permits
 * at the last unit of a bucket, `limit` more as the bucket leaves, window -
 * width + 1 later: 2 * limit within one window (the header's "about
 * limit * (1 + 1 / buckets)" holds only for traffic spread evenly). The
 * exact mode refuses all of the second burst. Over aligned stretches of k
 * windows neither mode grants more than k * limit. */
static void test_bucketed_adversarial(void **state) {
    (void)state;
    const uint64_t L = 7, W = 1000, B = 100;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(L, W, B, kModes[m]);
        uint64_t per_cycle_max = 0, total = 0;
        const uint64_t cycles = 200;
        for (uint64_t id = 0; id < 50; ++id) {
            uint64_t granted_key = 0;
            for (uint64_t cyc = 0; cyc < cycles; cyc += 2) {
                /* bucket j = 10 * cyc + 5: its last unit, then as it leaves */
                const uint64_t end = (10 * cyc + 6) * B - 1, leave = (10 * cyc + 5 + 10) * B;
                uint64_t got = 0;
                for (uint64_t i = 0; i < L + 2; ++i) got += (uint64_t)acq_id(r, id, end, 1).allowed;
                for (uint64_t i = 0; i < L + 2; ++i) got += (uint64_t)acq_id(r, id, leave, 1).allowed;
                assert_true(leave - end < W);
                assert_int_equal(got, kModes[m] & EXACT ? L : 2 * L); /* within window - width + 1 */
                if (got > per_cycle_max) per_cycle_max = got;
                granted_key += got;
            }
            /* the stretch (0, 10 * cycles * B] of `cycles` whole windows */
            assert_true(granted_key <= cycles * L);
            total += granted_key;
        }
        print_message("# %s: adversarial bursts get %llu permits in %llu units (limit %llu per %llu)\n",
                      mode_name(kModes[m]), ULL(per_cycle_max), ULL(W - B + 2), ULL(L), ULL(W));
        (void)total;
        tf_rate_limiter_free(r);
    }
}

/* Random small histories: whenever a request is denied with retry_at = R,
 * the same request at R - 1 is denied and at R granted (on copies, so
 * that nothing else happens), and R is after now. */
static void test_retry_at_exact_time(void **state) {
    (void)state;
    tu_rng g = {77};
    const uint64_t windows[] = {1, 10, 60, 100, 1000};
    long checked = 0;
    for (int trial = 0; trial < 1500; ++trial) {
        const uint32_t flags = kModes[trial % 2];
        const uint64_t W = windows[tu_below(&g, 5)];
        uint64_t B = 1 + tu_below(&g, W);
        while (W % B) --B;
        const uint64_t L = 1 + tu_below(&g, 6);
        tf_rate_limiter *r = make(L, W, B, flags);
        uint64_t now = 1 + tu_below(&g, 3 * W);
        const int steps = (int)tu_below(&g, 12);
        for (int s = 0; s < steps; ++s) {
            now += tu_below(&g, W / 3 + 1);
            (void)acq(r, "x", now, 1 + tu_below(&g, 2));
            if (tu_below(&g, 8) == 0) OK(tf_rate_limiter_refund(r, "x", 1, now, 1));
        }
        now += tu_below(&g, W / 2 + 1);
        const uint64_t n = 1 + tu_below(&g, L);
        tf_rate_limiter *c = clone_of(r);
        dec d = acq(c, "x", now, n);
        tf_rate_limiter_free(c);
        if (d.allowed) {
            assert_int_equal(d.retry_at, 0);
        } else {
            assert_true(d.retry_at > now && d.retry_at != NEVER);
            c = clone_of(r);
            dec early = acq(c, "x", d.retry_at - 1, n);
            tf_rate_limiter_free(c);
            c = clone_of(r);
            dec on_time = acq(c, "x", d.retry_at, n);
            tf_rate_limiter_free(c);
            if (early.allowed || !on_time.allowed)
                fail_msg(
                    "trial %d (%s L %llu W %llu B %llu n %llu): retry_at %llu, granted one unit before: %d, at "
                    "it: %d",
                    trial, mode_name(flags), ULL(L), ULL(W), ULL(B), ULL(n), ULL(d.retry_at), early.allowed,
                    on_time.allowed);
            checked++;
        }
        tf_rate_limiter_free(r);
    }
    assert_true(checked > 300);
}

static void test_remaining_and_n_permits(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(10, 100, 10, kModes[m]);
        EXPECT(acq(r, "a", 5, 3), 1, 7, 0);
        EXPECT(acq(r, "a", 15, 4), 1, 3, 0);
        EXPECT(acq(r, "a", 25, 4), 0, 3, ex ? 105 : 100); /* 4 > 3: the 3 at 5 must leave */
        EXPECT(acq(r, "a", 25, 3), 1, 0, 0);              /* all at once, exactly to the limit */
        EXPECT(acq(r, "a", 26, 1), 0, 0, ex ? 105 : 100);
        EXPECT(acq(r, "a", 26, 8), 0, 0, ex ? 125 : 120); /* three batches must leave */
        EXPECT(acq(r, "a", 26, 10), 0, 0, ex ? 125 : 120);
        EXPECT(acq(r, "a", 26, 11), 0, 0, NEVER); /* more than the limit: never */
        EXPECT(acq(r, "a", ex ? 105 : 100, 3), 1, 0, 0);
        /* a fresh key: all at once, more than the limit, exactly the limit */
        EXPECT(acq(r, "b", 200, 11), 0, 10, NEVER);
        EXPECT(peek(r, "b", 200, 10), 1, 0, 0);
        EXPECT(acq(r, "b", 200, 10), 1, 0, 0);
        EXPECT(acq(r, "c", 200, NEVER), 0, 10, NEVER);
        EXPECT(acq(r, "c", 200, (uint64_t)1 << 63), 0, 10, NEVER);
        tf_rate_limiter_free(r);
    }
    /* the largest limits */
    tf_rate_limiter *r = make(TF_RATE_LIMITER_MAX_KEY_LIMIT, 10, 1, 0);
    EXPECT(acq(r, "k", 1, TF_RATE_LIMITER_MAX_KEY_LIMIT), 1, 0, 0);
    EXPECT(acq(r, "k", 2, 1), 0, 0, 11);
    EXPECT(acq(r, "k", 11, TF_RATE_LIMITER_MAX_KEY_LIMIT), 1, 0, 0);
    tf_rate_limiter_free(r);
    r = make(TF_RATE_LIMITER_MAX_EXACT_LIMIT, 10, 0, EXACT);
    EXPECT(acq(r, "k", 1, TF_RATE_LIMITER_MAX_EXACT_LIMIT - 1), 1, 1, 0);
    EXPECT(acq(r, "k", 2, 2), 0, 1, 11);
    EXPECT(acq(r, "k", 2, 1), 1, 0, 0);
    tf_rate_limiter_free(r);
}

/* peek creates nothing and takes nothing: the serialized state is the same
 * byte for byte, at the key's own time and at a later one. */
static void test_peek_changes_nothing(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(3, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 5));
        (void)acq(r, "a", 50, 2);
        (void)acq(r, "b", 60, 3);
        size_t n;
        unsigned char *before = snap(r, &n);
        const uint64_t keys = stats_of(r).keys;
        EXPECT(peek(r, "a", 50, 1), 0, 0, 150); /* global full (b took 3) */
        EXPECT(peek(r, "b", 60, 1), 0, 0, 160);
        EXPECT(peek(r, "new", 60, 1), 0, 0, 150);
        assert_unchanged(r, before, n);
        assert_int_equal(stats_of(r).keys, keys);
        /* later than the key has seen, later than anything */
        EXPECT(peek(r, "a", 60, 1), 0, 0, 150);
        EXPECT(peek(r, "a", 5000, 1), 1, 2, 0);
        EXPECT(peek(r, "new", 5000, 3), 1, 0, 0);
        size_t n2;
        unsigned char *after = snap(r, &n2);
        if (n2 != n || memcmp(after, before, n) != 0)
            fail_msg("%s: a peek later than the key's clock changed the serialized state", mode_name(kModes[m]));
        free(after);
        /* and so a later request at an earlier time is decided as if no
         * peek had happened: a's permits at 50 still count at 100 */
        EXPECT(acq(r, "a", 100, 1), 0, 0, 150);
        free(before);
        tf_rate_limiter_free(r);
    }
}

static void test_refund(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(3, 1000, 100, kModes[m]);
        EXPECT(acq(r, "k", 100, 1), 1, 2, 0);
        EXPECT(acq(r, "k", 200, 1), 1, 1, 0);
        EXPECT(acq(r, "k", 300, 1), 1, 0, 0);
        /* the most recent first: the permit of 300 goes back */
        OK(tf_rate_limiter_refund(r, "k", 1, 350, 1));
        EXPECT(peek(r, "k", 350, 1), 1, 0, 0);
        EXPECT(acq(r, "k", 400, 1), 1, 0, 0);
        EXPECT(acq(r, "k", 500, 1), 0, 0, 1100); /* 100 leaves first, not 300 */
        /* more than it holds: back to the full limit, no further */
        OK(tf_rate_limiter_refund(r, "k", 1, 500, 10));
        EXPECT(peek(r, "k", 500, 3), 1, 0, 0);
        EXPECT(peek(r, "k", 500, 4), 0, 3, NEVER);
        OK(tf_rate_limiter_refund(r, "k", 1, 500, NEVER));
        EXPECT(acq(r, "k", 500, 3), 1, 0, 0);
        /* permits that already left are not given back again */
        OK(tf_rate_limiter_refund(r, "k", 1, 1500, 3));
        EXPECT(acq(r, "k", 1500, 3), 1, 0, 0);
        EXPECT(acq(r, "k", 1500, 1), 0, 0, 2500);
        /* an untracked key: a no-op that creates nothing */
        const uint64_t keys = stats_of(r).keys;
        OK(tf_rate_limiter_refund(r, "nobody", 6, 1500, 2));
        OK(tf_rate_limiter_refund(r, "k", 1, 1500, 0)); /* nothing */
        assert_int_equal(stats_of(r).keys, keys);
        EXPECT(acq(r, "k", 1500, 1), 0, 0, 2500);
        /* refund at an earlier time: clamped to the key's clock */
        OK(tf_rate_limiter_refund(r, "k", 1, 10, 1));
        EXPECT(acq(r, "k", 20, 1), 1, 0, 0);
        EXPECT(acq(r, "k", 2499, 1), 0, 0, 2500);
        tf_rate_limiter_free(r);
    }
    /* the global window gets the permits back too */
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(5, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 4));
        EXPECT(acq(r, "a", 10, 4), 1, 0, 0);
        EXPECT(acq(r, "b", 20, 1), 0, 0, ex ? 1010 : 1000);
        OK(tf_rate_limiter_refund(r, "a", 1, 30, 2));
        EXPECT(acq(r, "b", 40, 1), 1, 1, 0);
        EXPECT(acq(r, "b", 40, 1), 1, 0, 0);
        EXPECT(acq(r, "c", 40, 1), 0, 0, ex ? 1010 : 1000);
        tf_rate_limiter_free(r);
    }
}

static void test_reset(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(2, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 4));
        EXPECT(acq(r, "k", 10, 2), 1, 0, 0);
        EXPECT(acq(r, "vip", 10, 4), 1, 0, 0);
        EXPECT(acq(r, "other", 10, 1), 1, 1, 0);
        assert_int_equal(stats_of(r).keys, 3);
        OK(tf_rate_limiter_reset(r, "k", 1));
        OK(tf_rate_limiter_reset(r, "vip", 3));
        assert_int_equal(stats_of(r).keys, 1);
        EXPECT(acq(r, "k", 20, 2), 1, 0, 0);
        EXPECT(acq(r, "vip", 20, 4), 1, 0, 0); /* its override stays */
        EXPECT(acq(r, "vip", 20, 1), 0, 0, ex ? 1020 : 1000);
        EXPECT(acq(r, "other", 20, 1), 1, 0, 0); /* others untouched */
        EXPECT(acq(r, "other", 20, 1), 0, 0, ex ? 1010 : 1000);
        OK(tf_rate_limiter_reset(r, "never-seen", 10)); /* a no-op */
        OK(tf_rate_limiter_reset(r, NULL, 0));          /* the empty key */
        assert_int_equal(stats_of(r).keys, 3);
        tf_rate_limiter_free(r);
    }
}

/* Keys are their bytes: NUL bytes, the empty key, long keys. */
static void test_keys_are_bytes(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const uint64_t at = (kModes[m] & EXACT) ? 105 : 100; /* when the permits of 5 leave */
        tf_rate_limiter *r = make(1, 100, 10, kModes[m]);
        const char long_a[] = "a key that is longer than sixteen bytes, kept out of line";
        char long_b[sizeof long_a];
        memcpy(long_b, long_a, sizeof long_a);
        long_b[sizeof long_a - 2] ^= 1;
        EXPECT(acq_b(r, NULL, 0, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "", 0, 5, 1), 0, 0, at); /* the same empty key */
        EXPECT(acq_b(r, "\0", 1, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "\0\0", 2, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "a\0b", 3, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "a\0c", 3, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, long_a, sizeof long_a, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, long_b, sizeof long_b, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, long_a, sizeof long_a, 6, 1), 0, 0, at);
        EXPECT(acq_b(r, long_a, 16, 6, 1), 1, 0, 0); /* its 16-byte prefix is another key */
        assert_int_equal(stats_of(r).keys, 8);
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq_b(c, long_b, sizeof long_b, 7, 1), 0, 0, at);
        EXPECT(acq_b(c, "a\0b", 3, 7, 1), 0, 0, at);
        tf_rate_limiter_free(c);
        tf_rate_limiter_free(r);
    }
}

static void test_clock_backwards(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(2, 1000, 100, kModes[m]);
        EXPECT(acq(r, "k", 10000, 2), 1, 0, 0);
        dec d = acq(r, "k", 10050, 1);
        EXPECT(d, 0, 0, 11000);
        size_t n;
        unsigned char *before = snap(r, &n);
        /* earlier times: the same decision, nothing changes */
        EXPECT(acq(r, "k", 5000, 1), 0, 0, 11000);
        EXPECT(acq(r, "k", 1, 1), 0, 0, 11000);
        EXPECT(acq(r, "k", 10049, 2), 0, 0, 11000);
        OK(tf_rate_limiter_refund(r, "k", 1, 10050, 0));
        assert_unchanged(r, before, n);
        free(before);
        /* a permit granted at an earlier time is recorded at the key's time */
        EXPECT(acq(r, "j", 10000, 1), 1, 1, 0);
        EXPECT(acq(r, "j", 100, 1), 1, 0, 0);
        EXPECT(acq(r, "j", 10999, 1), 0, 0, 11000);
        EXPECT(acq(r, "j", 11000, 2), 1, 0, 0);
        /* the global window has its own clock */
        OK(tf_rate_limiter_set_global_limit(r, 1));
        EXPECT(acq(r, "a", 50000, 1), 1, 0, 0);
        EXPECT(acq(r, "b", 100, 1), 0, 0, 51000);
        EXPECT(acq(r, "b", 50999, 1), 0, 0, 51000);
        EXPECT(acq(r, "b", 51000, 1), 1, 0, 0);
        /* the far end of time: no overflow, no wrap */
        OK(tf_rate_limiter_set_global_limit(r, 0));
        EXPECT(acq(r, "end", NEVER - 5, 2), 1, 0, 0);
        EXPECT(acq(r, "end", NEVER, 1), 0, 0, NEVER); /* its permits leave past the end of time */
        EXPECT(acq(r, "end", 7, 1), 0, 0, NEVER);
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq(c, "end", 8, 1), 0, 0, NEVER);
        tf_rate_limiter_free(c);
        (void)ex;
        tf_rate_limiter_free(r);
    }
}

TU_MAIN(test_readme_example, test_exact_property, test_exact_property_far_times, test_bucketed_property,
        test_bucketed_adversarial, test_retry_at_exact_time, test_remaining_and_n_permits, test_peek_changes_nothing,
        test_refund, test_reset, test_keys_are_bytes, test_clock_backwards)
