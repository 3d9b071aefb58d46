/* The rate limiter's hash seed: any value is valid; it decides where keys
 * are stored in the table (the memory of the shards' tables differs), never
 * an answer (the same decisions, and the same blob but for the seed field);
 * the blob carries it (flag bit 2 and a u32 after the header, only when it
 * is not 0, so that seed 0 writes the blobs of tests/data), a round trip
 * keeps it, and a reader refuses a seed field that breaks those rules. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "limiter_util.h"
#include "temporalfilters.h"
#include "test_util.h"

#define SEED_FLAG 0x4u  /* kind 4's envelope flag: a seed field follows the header */
#define SEED_OFFSET 100 /* the seed field: the 20-byte envelope header, then the 80-byte payload header */
#define WINDOW 100000   /* the traffic of one window: no key goes idle */

static const uint32_t kSeeds[] = {1, 0xdeadbeefu, UINT32_MAX};
#define NSEEDS (sizeof kSeeds / sizeof kSeeds[0])

/* The limiter every test here uses: a global limit, two overrides, a key
 * bound that the traffic never reaches. */
static tf_rate_limiter *limiter(uint32_t seed, uint32_t flags) {
    tf_rate_limiter *r = make_seeded(6, WINDOW, WINDOW / 10, seed, flags);
    OK(tf_rate_limiter_set_global_limit(r, 1500));
    OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 20));
    OK(tf_rate_limiter_set_key_limit(r, "slow", 4, 1));
    OK(tf_rate_limiter_set_max_keys(r, 100000));
    return r;
}

/* The blob of seed 0 as a limiter of `seed` writes it: flag bit 2, the seed
 * after the payload's header, the payload 4 bytes longer, resealed. */
static unsigned char *with_seed_field(const unsigned char *b0, size_t n0, uint32_t seed, size_t *n) {
    *n = n0 + 4;
    unsigned char *b = malloc(*n);
    assert_non_null(b);
    memcpy(b, b0, SEED_OFFSET);
    tu_put_le(b + SEED_OFFSET, seed, 4);
    memcpy(b + SEED_OFFSET + 4, b0 + SEED_OFFSET, n0 - SEED_OFFSET);
    tu_put_le(b + 8, tu_get_le(b + 8, 4) | SEED_FLAG, 4);
    tu_put_le(b + 12, tu_get_le(b + 12, 8) + 4, 8);
    tu_fix_checksum(b, *n);
    return b;
}

/* The same request on every limiter of `rs`; their answers must agree. */
static void same_request(tf_rate_limiter **rs, size_t count, const void *k, size_t len, uint64_t now, uint64_t n,
                         int take, int step) {
    dec first = {0, 0, 0};
    for (size_t i = 0; i < count; ++i) {
        const dec d = take ? acq_b(rs[i], k, len, now, n) : peek_b(rs[i], k, len, now, n);
        if (i == 0)
            first = d;
        else if (!same_dec(first, d))
            fail_msg("step %d (%s n %llu at %llu): seed 0 (%d, %llu, %llu), seed %u (%d, %llu, %llu)", step,
                     take ? "acquire" : "peek", ULL(n), ULL(now), first.allowed, ULL(first.remaining),
                     ULL(first.retry_at), kSeeds[i - 1], d.allowed, ULL(d.remaining), ULL(d.retry_at));
    }
}

/* Random traffic of `steps` operations on every limiter of `rs` from `now`
 * on, up to `until`, 0 .. max_step time units apart (times never go
 * backwards): acquire, peek, refund, reset, an override changed, a batch.
 * Returns the last time. */
static uint64_t same_traffic(tf_rate_limiter **rs, size_t count, uint64_t now, uint64_t until, uint64_t max_step,
                             int steps, uint64_t rng) {
    tu_rng g = {rng};
    for (int step = 0; step < steps; ++step) {
        now += tu_below(&g, max_step + 1);
        if (now > until) now = until;
        const uint64_t id = tu_below(&g, 300), n = 1 + tu_below(&g, 3), op = tu_below(&g, 100);
        tu_key k = tu_make_key('S', id);
        if (op == 0) {
            for (size_t i = 0; i < count; ++i) OK(tf_rate_limiter_refund(rs[i], k.b, sizeof k.b, now, 1));
        } else if (op == 1) {
            for (size_t i = 0; i < count; ++i) OK(tf_rate_limiter_reset(rs[i], k.b, sizeof k.b));
        } else if (op == 2) {
            for (size_t i = 0; i < count; ++i) OK(tf_rate_limiter_set_key_limit(rs[i], k.b, sizeof k.b, n + 1));
        } else if (op == 3) {
            tu_key ks[5];
            const void *keys[5];
            size_t lens[5];
            uint64_t times[5];
            for (int j = 0; j < 5; ++j) {
                ks[j] = tu_make_key('S', tu_below(&g, 300));
                keys[j] = ks[j].b;
                lens[j] = sizeof ks[j].b;
                times[j] = now;
            }
            int a0[5], ai[5];
            uint64_t rem0[5], remi[5], ret0[5], reti[5];
            OK(tf_rate_limiter_acquire_batch(rs[0], keys, lens, 5, times, n, a0, rem0, ret0));
            for (size_t i = 1; i < count; ++i) {
                OK(tf_rate_limiter_acquire_batch(rs[i], keys, lens, 5, times, n, ai, remi, reti));
                for (int j = 0; j < 5; ++j)
                    if (a0[j] != ai[j] || rem0[j] != remi[j] || ret0[j] != reti[j])
                        fail_msg("step %d: batch request %d decided differently with seed %u", step, j, kSeeds[i - 1]);
            }
        } else {
            const int vip = op == 4;
            same_request(rs, count, vip ? (const void *)"vip" : k.b, vip ? 3 : sizeof k.b, now, n, op % 5 != 0, step);
        }
    }
    return now;
}

/* Any seed is valid, in both modes, and info reports it. */
static void test_seed_any_value(void **state) {
    (void)state;
    const uint32_t seeds[] = {0, 1, 42, 0x80000000u, UINT32_MAX};
    for (size_t m = 0; m < NMODES; ++m) {
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; ++i) {
            tf_rate_limiter *r = make_seeded(5, 1000, 100, seeds[i], kModes[m]);
            const tf_rate_limiter_info info = info_of(r);
            assert_int_equal(info.seed, seeds[i]);
            assert_int_equal(info.flags, kModes[m]);
            assert_int_equal(info.limit, 5);
            EXPECT(acq(r, "k", 1, 1), 1, 4, 0);
            tf_rate_limiter_free(r);
        }
    }
}

/* Within one window (no key goes idle, nothing is reclaimed), limiters of
 * different seeds decide alike and write the same blob but for the seed
 * field; over many windows (sweeps reclaim idle keys wherever the seed put
 * them) they still decide alike. */
static void test_seed_same_answers(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *rs[1 + NSEEDS];
        rs[0] = limiter(0, kModes[m]);
        for (size_t i = 0; i < NSEEDS; ++i) rs[1 + i] = limiter(kSeeds[i], kModes[m]);
        uint64_t now = same_traffic(rs, 1 + NSEEDS, 1, WINDOW, 2, 30000, 7 + m);
        assert_true(now <= WINDOW);
        size_t n0;
        unsigned char *b0 = snap(rs[0], &n0);
        assert_int_equal(tu_get_le(b0 + 8, 4), kModes[m]); /* seed 0: no seed field */
        assert_true(stats_of(rs[0]).keys > 100);
        for (size_t i = 0; i < NSEEDS; ++i) {
            size_t want_n, n;
            unsigned char *want = with_seed_field(b0, n0, kSeeds[i], &want_n);
            unsigned char *b = snap(rs[1 + i], &n);
            assert_int_equal(n, want_n);
            assert_memory_equal(b, want, n);
            free(b);
            free(want);
        }
        free(b0);
        /* then many windows: idle keys are swept and reclaimed */
        now = same_traffic(rs, 1 + NSEEDS, now, UINT64_MAX, WINDOW / 50, 60000, 70 + m);
        assert_true(now > 100 * (uint64_t)WINDOW);
        assert_true(stats_of(rs[0]).reclaimed > 0);
        for (size_t i = 0; i < 1 + NSEEDS; ++i) tf_rate_limiter_free(rs[i]);
    }
}

/* The seed decides where keys go: the same 2000 keys fill the 64 shards'
 * tables differently (their memory differs), and a round trip rebuilds the
 * tables of its own seed (the same memory in the bucketed mode). */
static void test_seed_changes_placement(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r0 = make(5, 1000, 100, kModes[m]);
        for (uint64_t id = 0; id < 2000; ++id) (void)acq_id(r0, id, 1, 1);
        const uint64_t mem0 = stats_of(r0).memory;
        for (size_t i = 0; i < NSEEDS; ++i) {
            tf_rate_limiter *r = make_seeded(5, 1000, 100, kSeeds[i], kModes[m]);
            for (uint64_t id = 0; id < 2000; ++id) (void)acq_id(r, id, 1, 1);
            const tf_rate_limiter_stats st = stats_of(r);
            assert_int_equal(st.keys, 2000);
            if (st.memory == mem0)
                fail_msg("%s, seed %u: %llu bytes, as with seed 0: the seed did not move any key", mode_name(kModes[m]),
                         kSeeds[i], ULL(st.memory));
            if (kModes[m] == 0) { /* (exact rings are read back as large as their grants) */
                tf_rate_limiter *c = clone_of(r);
                assert_int_equal(stats_of(c).memory, st.memory);
                tf_rate_limiter_free(c);
            }
            tf_rate_limiter_free(r);
        }
        tf_rate_limiter_free(r0);
    }
}

/* A round trip keeps the seed: the blob says it (flag bit 2, the field),
 * the copy reports it, writes the same bytes and decides as the original. */
static void test_seed_round_trip(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (size_t i = 0; i < NSEEDS; ++i) {
            tf_rate_limiter *r = limiter(kSeeds[i], kModes[m]);
            tf_rate_limiter *rs[1] = {r};
            (void)same_traffic(rs, 1, 1, WINDOW, 2, 2000, 11 + i);
            size_t n;
            unsigned char *b = snap(r, &n);
            tu_check_envelope(b, n, 4, kModes[m] | SEED_FLAG);
            assert_int_equal(tu_get_le(b + SEED_OFFSET, 4), kSeeds[i]);
            tf_rate_limiter *c = NULL;
            OK(tf_rate_limiter_deserialize(b, n, NULL, &c));
            assert_int_equal(info_of(c).seed, kSeeds[i]);
            assert_unchanged(c, b, n);
            assert_same_decisions(r, c, WINDOW, 5 + i);
            free(b);
            tf_rate_limiter_free(c);
            tf_rate_limiter_free(r);
        }
    }
}

/* A reader refuses a seed field of 0 (a seed of 0 has no field: one blob per
 * state), flag bit 2 without the field, the field without the flag, and the
 * envelope flag bits kind 4 does not define. */
static void test_seed_field_checked(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = limiter(0, kModes[m]);
        tf_rate_limiter *rs[1] = {r};
        (void)same_traffic(rs, 1, 1, WINDOW, 2, 500, 3);
        size_t n0, n;
        unsigned char *b0 = snap(r, &n0);
        unsigned char *b = with_seed_field(b0, n0, 77, &n);
        OK(try_blob(b, n));
        tu_put_le(b + SEED_OFFSET, 0, 4); /* a seed field of 0 */
        tu_fix_checksum(b, n);
        assert_int_equal(try_blob(b, n), TF_ERR_CORRUPT);
        tu_put_le(b + SEED_OFFSET, 77, 4);
        tu_put_le(b + 8, kModes[m], 4); /* the field without the flag */
        tu_fix_checksum(b, n);
        assert_int_equal(try_blob(b, n), TF_ERR_CORRUPT);
        tu_put_le(b0 + 8, kModes[m] | SEED_FLAG, 4); /* the flag without the field */
        tu_fix_checksum(b0, n0);
        assert_int_equal(try_blob(b0, n0), TF_ERR_CORRUPT);
        for (uint32_t bit = 3; bit < 32; ++bit) { /* flags kind 4 does not define */
            tu_put_le(b0 + 8, kModes[m] | (1u << bit), 4);
            tu_fix_checksum(b0, n0);
            assert_int_equal(try_blob(b0, n0), TF_ERR_CORRUPT);
        }
        free(b);
        free(b0);
        tf_rate_limiter_free(r);
    }
}

TU_MAIN(test_seed_any_value, test_seed_same_answers, test_seed_changes_placement, test_seed_round_trip,
        test_seed_field_checked)
