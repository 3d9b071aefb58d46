/* The rate limiter on Redis (temporalfilters/redis.h) against a
 * redis-server and a three-master Redis Cluster the suite starts itself:
 * the same decisions as the embedded limiter on the same request sequence
 * (both modes, overrides, the global limit, refunds, resets, batches) on
 * both, a cluster slot moved while running, the server's clock, bad input,
 * and the failure policy (a killed, a paused and a restarted server). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <hiredis/hiredis.h>

#include "raw_redis.h"
#include "redis_server.h"
#include "temporalfilters.h"
#include "temporalfilters/redis.h"
#include "test_util.h"

#define OK(call) assert_int_equal((call), TF_OK)
#define ULL(x) ((unsigned long long)(x))

/* Bytes asked of operator new so far, by this program and the libraries
 * (new_count.cpp). */
uint64_t nc_bytes(void);

static rs_server server;   /* the suite's server (group setup) */
static rs_cluster cluster; /* the suite's cluster (group setup) */
static int prefix_seq;

static int group_setup(void **state) {
    (void)state;
    return rs_suite_start(&server, &cluster);
}

static int group_teardown(void **state) {
    (void)state;
    rs_suite_stop(&server, &cluster);
    return 0;
}

/* Options for `s` under a prefix of its own (every case its own state). */
static tf_redis_options options_for(const rs_server *s, char *prefix, size_t cap) {
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    snprintf(prefix, cap, "test:%d:%d:", (int)getpid(), ++prefix_seq);
    o.port = (uint32_t)s->port;
    o.prefix = prefix;
    o.idle_expiry_ms = 600000; /* the tests' clocks are not real time */
    return o;
}

/* Options for the suite's cluster, its first node as the seed. */
static tf_redis_options cluster_options(char *prefix, size_t cap) {
    tf_redis_options o = options_for(&cluster.node[0], prefix, cap);
    o.mode = TF_REDIS_MODE_CLUSTER;
    return o;
}

/* The cluster slot of a limiter key K (its hash tag "k:K"; the global
 * window's is "g"), computed here independently of the library:
 * CRC16-XMODEM modulo 16384. */
static unsigned tag_slot(const char *tag, size_t len) {
    unsigned crc = 0;
    for (size_t i = 0; i < len; ++i) {
        crc ^= (unsigned)(unsigned char)tag[i] << 8;
        for (int b = 0; b < 8; ++b) crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc % 16384;
}

static unsigned key_slot(const char *key, size_t len) {
    char tag[80] = "k:";
    memcpy(tag + 2, key, len);
    return tag_slot(tag, len + 2);
}

typedef struct {
    int allowed;
    uint64_t remaining, retry_at;
} dec;

static dec embedded_acq(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n, int take) {
    dec d = {-1, 0, 0};
    if (take)
        OK(tf_rate_limiter_acquire(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at));
    else
        OK(tf_rate_limiter_peek(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at));
    return d;
}

static dec redis_acq(tf_redis_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n, int take) {
    dec d = {-1, 0, 0};
    tf_status st = take ? tf_redis_limiter_acquire(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at)
                        : tf_redis_limiter_peek(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at);
    if (st != TF_OK) fail_msg("redis call failed: %s: %s", tf_status_string(st), tf_last_error_message());
    return d;
}

static void assert_same(dec a, dec b, const char *what, size_t step) {
    if (a.allowed != b.allowed || a.remaining != b.remaining || a.retry_at != b.retry_at)
        fail_msg("%s, step %zu: embedded (%d, %llu, %llu) but redis (%d, %llu, %llu)", what, step, a.allowed,
                 ULL(a.remaining), ULL(a.retry_at), b.allowed, ULL(b.remaining), ULL(b.retry_at));
}

static const char *const kKeys[] = {"alice", "bob", "carol", "vip", "low", "", "k{x}y", "bin\0ary"};
static const size_t kKeyLens[] = {5, 3, 5, 3, 3, 0, 6, 7};
#define NKEYS (sizeof kKeys / sizeof *kKeys)

/* One behavioural sequence run against both limiters: random keys, permits
 * and steps of time (never backwards), acquires, peeks, batches, refunds,
 * resets, overrides set and removed, the global limit set and changed. */
/* The keys of a sequence, and a hook called before one of its steps. */
typedef struct {
    const char *const *keys;
    const size_t *lens;
    size_t count;
    size_t hook_step;
    void (*hook)(void);
} seq_keys;

static void run_sequence_on(tf_rate_limiter *e, tf_redis_limiter *r, uint64_t seed, int global, const char *what,
                            const seq_keys *ks) {
    const char *const *sk = ks->keys;
    const size_t *sl = ks->lens;
    const uint64_t sn = ks->count;
    tu_rng rng = {seed};
    uint64_t now = 1000;
    OK(tf_rate_limiter_set_key_limit(e, "vip", 3, 9));
    OK(tf_redis_limiter_set_key_limit(r, "vip", 3, 9));
    OK(tf_rate_limiter_set_key_limit(e, "low", 3, 1));
    OK(tf_redis_limiter_set_key_limit(r, "low", 3, 1));
    if (global) {
        OK(tf_rate_limiter_set_global_limit(e, 12));
        OK(tf_redis_limiter_set_global_limit(r, 12));
    }
    size_t granted = 0, denied = 0;
    for (size_t step = 0; step < 1500; ++step) {
        if (ks->hook && step == ks->hook_step) ks->hook();
        now += tu_below(&rng, 4) == 0 ? tu_below(&rng, 400) : tu_below(&rng, 30);
        const size_t k = (size_t)tu_below(&rng, sn);
        const uint64_t n = tu_below(&rng, 20) == 0 ? 1 + tu_below(&rng, 12) : 1 + tu_below(&rng, 2);
        const uint64_t op = tu_below(&rng, 100);
        if (op < 70) {
            dec a = embedded_acq(e, sk[k], sl[k], now, n, 1);
            dec b = redis_acq(r, sk[k], sl[k], now, n, 1);
            assert_same(a, b, what, step);
            if (a.allowed)
                ++granted;
            else
                ++denied;
        } else if (op < 80) {
            assert_same(embedded_acq(e, sk[k], sl[k], now, n, 0), redis_acq(r, sk[k], sl[k], now, n, 0), what, step);
        } else if (op < 88) {
            const void *keys[4];
            size_t lens[4];
            uint64_t times[4];
            int ea[4], ra[4];
            uint64_t erem[4], rrem[4], eret[4], rret[4];
            for (size_t i = 0; i < 4; ++i) {
                const size_t j = (size_t)tu_below(&rng, sn);
                keys[i] = sk[j];
                lens[i] = sl[j];
                times[i] = now + i;
            }
            now += 3;
            OK(tf_rate_limiter_acquire_batch(e, keys, lens, 4, times, n, ea, erem, eret));
            OK(tf_redis_limiter_acquire_batch(r, keys, lens, 4, times, n, ra, rrem, rret));
            for (size_t i = 0; i < 4; ++i) {
                dec a = {ea[i], erem[i], eret[i]}, b = {ra[i], rrem[i], rret[i]};
                assert_same(a, b, what, step);
            }
        } else if (op < 94) {
            OK(tf_rate_limiter_refund(e, sk[k], sl[k], now, n));
            OK(tf_redis_limiter_refund(r, sk[k], sl[k], now, n));
        } else if (op < 96) {
            OK(tf_rate_limiter_reset(e, sk[k], sl[k]));
            OK(tf_redis_limiter_reset(r, sk[k], sl[k]));
        } else if (op < 98) {
            const uint64_t lim = tu_below(&rng, 6); /* 0 removes the override */
            OK(tf_rate_limiter_set_key_limit(e, sk[k], sl[k], lim));
            OK(tf_redis_limiter_set_key_limit(r, sk[k], sl[k], lim));
        } else if (global && op < 99) {
            const uint64_t lim = 8 + tu_below(&rng, 10);
            OK(tf_rate_limiter_set_global_limit(e, lim));
            OK(tf_redis_limiter_set_global_limit(r, lim));
            /* The embedded limiter starts the new global window just past
             * the latest time a key has seen (the next bucket); on the
             * caller's clock the Redis limiter cannot know that time and
             * starts it at the next request's (redis.h,
             * tf_redis_limiter_set_global_limit()). From the next bucket on
             * (every sequence has buckets of 100) the two agree. */
            now = (now / 100 + 1) * 100;
        }
    }
    /* the sequence exercised both answers */
    assert_true(granted > 100);
    assert_true(denied > 100);
}

static void run_sequence(tf_rate_limiter *e, tf_redis_limiter *r, uint64_t seed, int global, const char *what) {
    const seq_keys ks = {kKeys, kKeyLens, NKEYS, 0, NULL};
    run_sequence_on(e, r, seed, global, what, &ks);
}

/* The four sequences (both modes, with and without the global limit), each
 * under a prefix of its own, on the suite's server or on its cluster: the
 * decisions are the embedded limiter's, and Redis decided every one. */
static void check_same_decisions(int on_cluster) {
    const uint32_t modes[] = {0, TF_RATE_LIMITER_EXACT};
    for (size_t m = 0; m < 2; ++m)
        for (int global = 0; global <= 1; ++global) {
            char what[64], prefix[64];
            snprintf(what, sizeof what, "%s%s%s", on_cluster ? "cluster, " : "", modes[m] ? "exact" : "bucketed",
                     global ? " + global" : "");
            tf_rate_limiter *e = NULL;
            tf_redis_limiter *r = NULL;
            OK(tf_rate_limiter_new(5, 1000, 100, 0, modes[m], &e));
            tf_redis_options o =
                on_cluster ? cluster_options(prefix, sizeof prefix) : options_for(&server, prefix, sizeof prefix);
            tf_status st = tf_redis_limiter_new(5, 1000, 100, modes[m], &o, &r);
            if (st != TF_OK) fail_msg("tf_redis_limiter_new: %s", tf_last_error_message());
            run_sequence(e, r, 42 + m * 2 + (uint64_t)global, global, what);
            tf_redis_limiter_stats s = TF_REDIS_LIMITER_STATS_INIT;
            OK(tf_redis_limiter_get_stats(r, &s));
            assert_true(s.decisions > 1000);
            assert_int_equal(s.timeouts + s.unavailable + s.fallback_denied + s.fallback_allowed + s.fallback_local, 0);
            assert_int_equal(s.script_loads, on_cluster ? 3 : 1); /* once on each master */
            if (on_cluster && global)
                assert_true(s.global_undos > 0); /* keys allowed that the global window denied */
            else
                assert_int_equal(s.global_undos, 0);
            tf_redis_limiter_free(r);
            tf_rate_limiter_free(e);
        }
}

static void test_same_decisions_as_embedded(void **state) {
    (void)state;
    check_same_decisions(0);
}

/* The same sequences on the cluster: every key's window on its own slot,
 * the global window on another, the decision in two steps with an undo
 * (temporalfilters/redis.h, "Cluster"); the decisions are the embedded
 * limiter's. */
static void test_cluster_same_decisions_as_embedded(void **state) {
    (void)state;
    /* the keys and the global window are spread over the masters */
    int used[3] = {0, 0, 0};
    for (size_t k = 0; k < NKEYS; ++k) {
        const int owner = rs_cluster_owner(&cluster, 0, key_slot(kKeys[k], kKeyLens[k]));
        assert_true(owner >= 0);
        used[owner] = 1;
    }
    assert_true(used[0] + used[1] + used[2] >= 2);
    assert_true(rs_cluster_owner(&cluster, 0, tag_slot("g", 1)) >= 0);
    check_same_decisions(1);
}

/* The global limit on a cluster, step by step: the key's permits taken and
 * given back when the global window denies; another client sees the key
 * untouched afterwards. */
static void test_cluster_global_undo(void **state) {
    (void)state;
    char prefix[64];
    tf_redis_options o = cluster_options(prefix, sizeof prefix);
    tf_redis_limiter *a = NULL, *b = NULL;
    OK(tf_redis_limiter_new(3, 1000, 100, 0, &o, &a));
    OK(tf_redis_limiter_new(3, 1000, 100, 0, &o, &b));
    OK(tf_redis_limiter_set_global_limit(a, 2));
    dec d = redis_acq(a, "x", 1, 10, 2, 1); /* global 2 of 2 */
    assert_int_equal(d.allowed, 1);
    assert_int_equal(d.remaining, 0);
    d = redis_acq(a, "y", 1, 20, 1, 1); /* y allows, the global window denies: undone */
    assert_int_equal(d.allowed, 0);
    assert_int_equal(d.retry_at, 1000);
    tf_redis_limiter_stats s = TF_REDIS_LIMITER_STATS_INIT;
    OK(tf_redis_limiter_get_stats(a, &s));
    assert_int_equal(s.global_undos, 1);
    OK(tf_redis_limiter_set_global_limit(b, 0)); /* without the global limit, y has its 3 */
    d = redis_acq(b, "y", 1, 30, 3, 1);
    assert_int_equal(d.allowed, 1);
    assert_int_equal(d.remaining, 0);
    /* a refund reaches the global window on its own slot too */
    OK(tf_redis_limiter_set_global_limit(b, 3));
    assert_int_equal(redis_acq(b, "z", 1, 40, 3, 1).allowed, 1);
    assert_int_equal(redis_acq(a, "w", 1, 50, 1, 1).allowed, 0);
    OK(tf_redis_limiter_refund(a, "z", 1, 60, 1));
    d = redis_acq(b, "w", 1, 70, 1, 1);
    assert_int_equal(d.allowed, 1);
    assert_int_equal(d.remaining, 0);
    tf_redis_limiter_free(a);
    tf_redis_limiter_free(b);
}

/* Keys whose slots (0..9) the reshard below moves from node 0 to node 1. */
static char moved_keys[3][16];
static size_t moved_lens[3];

static void reshard_now(void) {
    for (size_t i = 0; i < 3; ++i)
        assert_int_equal(rs_cluster_owner(&cluster, 0, key_slot(moved_keys[i], moved_lens[i])), 0);
    assert_int_equal(rs_cluster_reshard(&cluster, 0, 1, 10), 0);
    for (size_t i = 0; i < 3; ++i)
        for (int n = 0; n < 3; ++n) /* every node knows the new owner */
            assert_int_equal(rs_cluster_owner(&cluster, n, key_slot(moved_keys[i], moved_lens[i])), 1);
}

/* A slot moved while running (redis-cli --cluster reshard): the limiter's
 * table is stale, the old owner answers MOVED, the limiter follows it and
 * no decision is lost or changed (the embedded limiter's, step for step). */
static void test_cluster_slot_moved(void **state) {
    (void)state;
    size_t found = 0;
    for (unsigned i = 0; found < 3 && i < 200000; ++i) {
        char k[16];
        const int len = snprintf(k, sizeof k, "m%u", i);
        if (key_slot(k, (size_t)len) < 10) {
            memcpy(moved_keys[found], k, (size_t)len + 1);
            moved_lens[found++] = (size_t)len;
        }
    }
    assert_int_equal(found, 3);
    const char *keys[] = {moved_keys[0], moved_keys[1], moved_keys[2], "alice", "bob"};
    const size_t lens[] = {moved_lens[0], moved_lens[1], moved_lens[2], 5, 3};
    const seq_keys ks = {keys, lens, 5, 750, reshard_now};
    char prefix[64];
    tf_redis_options o = cluster_options(prefix, sizeof prefix);
    tf_rate_limiter *e = NULL;
    tf_redis_limiter *r = NULL;
    OK(tf_rate_limiter_new(5, 1000, 100, 0, 0, &e));
    OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r));
    run_sequence_on(e, r, 77, 1, "cluster, a slot moved", &ks);
    tf_redis_limiter_stats s = TF_REDIS_LIMITER_STATS_INIT;
    OK(tf_redis_limiter_get_stats(r, &s));
    assert_true(s.redirects >= 1);
    assert_int_equal(s.timeouts + s.unavailable + s.fallback_denied + s.fallback_allowed + s.fallback_local, 0);
    tf_redis_limiter_free(r);
    tf_rate_limiter_free(e);
}

/* Two handles of one prefix share the state, the overrides and the global
 * limit: what one takes, the other sees. */
static void test_handles_share_state(void **state) {
    (void)state;
    char prefix[64];
    tf_redis_options o = options_for(&server, prefix, sizeof prefix);
    tf_redis_limiter *a = NULL, *b = NULL;
    OK(tf_redis_limiter_new(3, 1000, 100, 0, &o, &a));
    OK(tf_redis_limiter_new(3, 1000, 100, 0, &o, &b));
    OK(tf_redis_limiter_set_key_limit(a, "u", 1, 2));
    dec d = redis_acq(b, "u", 1, 10, 2, 1);
    assert_int_equal(d.allowed, 1);
    assert_int_equal(d.remaining, 0);
    d = redis_acq(a, "u", 1, 20, 1, 1);
    assert_int_equal(d.allowed, 0);
    assert_int_equal(d.retry_at, 1000); /* bucket 0 leaves at (0 + 10 buckets) * 100 */
    OK(tf_redis_limiter_set_global_limit(b, 1));
    d = redis_acq(a, "w", 1, 30, 1, 1);
    assert_int_equal(d.allowed, 1);
    d = redis_acq(b, "x", 1, 40, 1, 1);
    assert_int_equal(d.allowed, 0);
    tf_redis_limiter_free(a);
    tf_redis_limiter_free(b);
}

/* The server's clock: now = 0, retry times in the server's milliseconds. */
static void test_server_time(void **state) {
    (void)state;
    char prefix[64];
    tf_redis_options o = options_for(&server, prefix, sizeof prefix);
    o.time_source = TF_REDIS_TIME_SERVER;
    o.idle_expiry_ms = 0; /* one window: 60 s */
    tf_redis_limiter *r = NULL;
    OK(tf_redis_limiter_new(2, 60000, 1000, TF_RATE_LIMITER_EXACT, &o, &r));
    const uint64_t before = tf_clock_now_ms();
    dec d = redis_acq(r, "t", 1, 0, 2, 1);
    assert_int_equal(d.allowed, 1);
    d = redis_acq(r, "t", 1, 0, 1, 1);
    assert_int_equal(d.allowed, 0);
    /* the grant's time + 60 s, by the server's clock (the same machine's) */
    assert_true(d.retry_at >= before + 60000 - 1000 && d.retry_at <= tf_clock_now_ms() + 60000 + 1000);
    int allowed;
    assert_int_equal(tf_redis_limiter_acquire(r, "t", 1, 5, 1, &allowed, NULL, NULL), TF_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tf_last_error_message(), "server's clock"));
    const void *keys[1] = {"t"};
    size_t lens[1] = {1};
    uint64_t times[1] = {5};
    assert_int_equal(tf_redis_limiter_acquire_batch(r, keys, lens, 1, times, 1, &allowed, NULL, NULL),
                     TF_ERR_INVALID_ARGUMENT);
    OK(tf_redis_limiter_acquire_batch(r, keys, lens, 1, NULL, 1, &allowed, NULL, NULL));
    assert_int_equal(allowed, 0);
    tf_redis_limiter_free(r);
}

static void expect_status(tf_status got, tf_status want, const char *needle) {
    if (got != want)
        fail_msg("got %s (%s), want %s", tf_status_string(got), tf_last_error_message(), tf_status_string(want));
    if (needle && !strstr(tf_last_error_message(), needle))
        fail_msg("message \"%s\" does not mention \"%s\"", tf_last_error_message(), needle);
}

static void test_bad_input(void **state) {
    (void)state;
    char prefix[64];
    tf_redis_options o = options_for(&server, prefix, sizeof prefix);
    tf_redis_limiter *r = NULL;
    /* creation */
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &o, NULL), TF_ERR_NULL, "out");
    expect_status(tf_redis_limiter_new(0, 1000, 100, 0, &o, &r), TF_ERR_INVALID_ARGUMENT, "limit");
    expect_status(tf_redis_limiter_new(5, 1000, 300, 0, &o, &r), TF_ERR_INVALID_ARGUMENT, "divide");
    expect_status(tf_redis_limiter_new(5, 1000, 100, TF_RATE_LIMITER_FULL_ALLOW, &o, &r), TF_ERR_INVALID_ARGUMENT,
                  "flags");
    expect_status(tf_redis_limiter_new(5, (uint64_t)1 << 51, 0, TF_RATE_LIMITER_EXACT, &o, &r), TF_ERR_INVALID_ARGUMENT,
                  "2^51");
    tf_redis_options bad = o;
    bad.port = 0;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "port");
    bad = o;
    bad.prefix = "a{b";
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "prefix");
    bad = o;
    bad.fallback = 7;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "fallback");
    bad = o;
    bad.time_source = 9;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "time_source");
    bad = o;
    bad.command_timeout_ms = 0;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "timeout");
    bad = o;
    bad.reconnect_min_ms = 500;
    bad.reconnect_max_ms = 100;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "reconnect");
    bad = o;
    bad.size = 0;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "size");
    bad = o;
    bad.mode = 7;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "mode");
    bad = o;
    bad.cluster_seeds = "127.0.0.1:7000";
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "cluster_seeds");
    const char *bad_seeds[] = {"nocolon", "127.0.0.1:0", "127.0.0.1:70000", ":7000", "127.0.0.1:7000,", "h:7x"};
    for (size_t i = 0; i < sizeof bad_seeds / sizeof *bad_seeds; ++i) {
        bad = o;
        bad.mode = TF_REDIS_MODE_CLUSTER;
        bad.cluster_seeds = bad_seeds[i];
        expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_INVALID_ARGUMENT, "cluster_seeds");
    }
    bad = o;
    bad.mode = TF_REDIS_MODE_CLUSTER; /* a server that is no cluster node */
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_UNAVAILABLE, "CLUSTER SLOTS");
    bad = o;
    bad.port = (uint32_t)rs_free_port(); /* nothing listens there */
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &bad, &r), TF_ERR_UNAVAILABLE, "unavailable");
    assert_null(r);

    OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r));
    int allowed = 7;
    uint64_t rem = 7, retry = 7;
    dec before = redis_acq(r, "k", 1, 100, 1, 1);
    expect_status(tf_redis_limiter_acquire(NULL, "k", 1, 100, 1, &allowed, &rem, &retry), TF_ERR_NULL, "limiter");
    expect_status(tf_redis_limiter_acquire(r, "k", 1, 100, 1, NULL, &rem, &retry), TF_ERR_NULL, "allowed");
    expect_status(tf_redis_limiter_acquire(r, NULL, 1, 100, 1, &allowed, &rem, &retry), TF_ERR_NULL, "key");
    expect_status(tf_redis_limiter_acquire(r, "k", 1, 100, 0, &allowed, &rem, &retry), TF_ERR_INVALID_ARGUMENT, "n");
    expect_status(tf_redis_limiter_acquire(r, "k", 1, 0, 1, &allowed, &rem, &retry), TF_ERR_INVALID_ARGUMENT, "now");
    expect_status(tf_redis_limiter_acquire(r, "k", 1, (uint64_t)1 << 51, 1, &allowed, &rem, &retry),
                  TF_ERR_INVALID_ARGUMENT, "2^51");
    static char big[65537];
    expect_status(tf_redis_limiter_acquire(r, big, sizeof big, 100, 1, &allowed, &rem, &retry), TF_ERR_INVALID_ARGUMENT,
                  "key_len");
    expect_status(tf_redis_limiter_peek(r, "k", 1, 0, 1, &allowed, &rem, &retry), TF_ERR_INVALID_ARGUMENT, "now");
    assert_int_equal(allowed, 7); /* nothing written */
    assert_int_equal(rem, 7);
    assert_int_equal(retry, 7);
    const void *keys[2] = {"k", NULL};
    size_t lens[2] = {1, 3};
    uint64_t times[2] = {100, 100};
    int as[2] = {7, 7};
    expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, 2, times, 1, as, NULL, NULL), TF_ERR_NULL, "keys[1]");
    lens[1] = 0;
    times[1] = 0;
    expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, 2, times, 1, as, NULL, NULL), TF_ERR_INVALID_ARGUMENT,
                  "times[1]");
    expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, 2, NULL, 1, as, NULL, NULL), TF_ERR_NULL, "times");
    expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, 2, times, 0, as, NULL, NULL), TF_ERR_INVALID_ARGUMENT,
                  "n");
    assert_int_equal(as[0], 7);
    expect_status(tf_redis_limiter_refund(r, "k", 1, 0, 1), TF_ERR_INVALID_ARGUMENT, "now");
    expect_status(tf_redis_limiter_refund(NULL, "k", 1, 100, 1), TF_ERR_NULL, "limiter");
    expect_status(tf_redis_limiter_reset(r, NULL, 2), TF_ERR_NULL, "key");
    expect_status(tf_redis_limiter_set_key_limit(r, "k", 1, 70000), TF_ERR_INVALID_ARGUMENT, "limit");
    expect_status(tf_redis_limiter_set_global_limit(NULL, 3), TF_ERR_NULL, "limiter");
    tf_redis_limiter_stats s = TF_REDIS_LIMITER_STATS_INIT;
    s.size = 0;
    expect_status(tf_redis_limiter_get_stats(r, &s), TF_ERR_INVALID_ARGUMENT, "size");
    expect_status(tf_redis_limiter_get_stats(r, NULL), TF_ERR_NULL, "stats");
    /* nothing changed: the next decision follows the first */
    dec after = redis_acq(r, "k", 1, 100, 1, 0);
    assert_int_equal(after.allowed, 1);
    assert_int_equal(after.remaining, before.remaining - 1);
    tf_redis_limiter_free(r);
    tf_redis_limiter_free(NULL);

    tf_redis_limiter *x = NULL;
    expect_status(tf_redis_limiter_new(5, 1000, 0, TF_RATE_LIMITER_EXACT, &o, &x), TF_OK, NULL);
    expect_status(tf_redis_limiter_set_global_limit(x, ((uint64_t)1 << 24) + 1), TF_ERR_INVALID_ARGUMENT, "2^24");
    tf_redis_limiter_free(x);
}

/* A server of its own for a fault test, and a limiter on it (limit 2 per
 * 1000, buckets of 100) with the given timeouts, backoff and fallback. */
static tf_redis_limiter *fault_setup(rs_server *s, char *prefix, size_t cap, uint32_t timeout_ms, uint32_t backoff_min,
                                     uint32_t backoff_max, uint32_t fallback) {
    assert_int_equal(rs_start(s), 0);
    tf_redis_options o = options_for(s, prefix, cap);
    o.command_timeout_ms = o.connect_timeout_ms = timeout_ms;
    o.reconnect_min_ms = backoff_min;
    o.reconnect_max_ms = backoff_max;
    o.fallback = fallback;
    tf_redis_limiter *r = NULL;
    OK(tf_redis_limiter_new(2, 1000, 100, 0, &o, &r));
    return r;
}

/* A server killed mid-run: each fallback decides, is counted, and the
 * status says the server is unavailable. */
static void test_server_killed(void **state) {
    (void)state;
    const uint32_t fallbacks[] = {TF_REDIS_FALLBACK_DENY, TF_REDIS_FALLBACK_ALLOW, TF_REDIS_FALLBACK_LOCAL};
    for (size_t f = 0; f < 3; ++f) {
        rs_server s;
        char prefix[64];
        tf_redis_limiter *r = fault_setup(&s, prefix, sizeof prefix, 500, 100, 5000, fallbacks[f]);
        dec d = redis_acq(r, "a", 1, 10, 1, 1);
        assert_int_equal(d.allowed, 1);
        rs_kill(&s);
        int allowed = -1;
        uint64_t rem = 99, retry = 99;
        const long long t0 = rs_now_ms();
        tf_status st = tf_redis_limiter_acquire(r, "a", 1, 20, 1, &allowed, &rem, &retry);
        assert_true(rs_now_ms() - t0 < 1500);
        expect_status(st, TF_ERR_UNAVAILABLE, "unavailable");
        tf_redis_limiter_stats stats = TF_REDIS_LIMITER_STATS_INIT;
        OK(tf_redis_limiter_get_stats(r, &stats));
        assert_int_equal(stats.unavailable, 1);
        if (fallbacks[f] == TF_REDIS_FALLBACK_DENY) {
            assert_int_equal(allowed, 0);
            assert_int_equal(retry, TF_RETRY_NEVER);
            assert_int_equal(stats.fallback_denied, 1);
        } else if (fallbacks[f] == TF_REDIS_FALLBACK_ALLOW) {
            assert_int_equal(allowed, 1);
            assert_int_equal(stats.fallback_allowed, 1);
        } else {
            /* the embedded limiter: a fresh window of limit 2 */
            assert_int_equal(allowed, 1);
            assert_int_equal(rem, 1);
            assert_int_equal(stats.fallback_local, 1);
            /* a second call fails fast (reconnection not due) and the
             * embedded state goes on from the first */
            st = tf_redis_limiter_acquire(r, "a", 1, 30, 1, &allowed, &rem, &retry);
            expect_status(st, TF_ERR_UNAVAILABLE, "reconnecting");
            assert_int_equal(allowed, 1);
            assert_int_equal(rem, 0);
            st = tf_redis_limiter_acquire(r, "a", 1, 40, 1, &allowed, &rem, &retry);
            assert_int_equal(allowed, 0);
            assert_int_equal(retry, 1000); /* the first grant's bucket leaves */
            const void *keys[2] = {"a", "b"};
            size_t lens[2] = {1, 1};
            uint64_t times[2] = {50, 50};
            int as[2];
            expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, 2, times, 1, as, NULL, NULL),
                          TF_ERR_UNAVAILABLE, NULL);
            assert_int_equal(as[0], 0);
            assert_int_equal(as[1], 1);
            OK(tf_redis_limiter_get_stats(r, &stats));
            assert_int_equal(stats.fallback_local, 5);
            assert_int_equal(stats.unavailable, 4);
        }
        /* the other calls report it too */
        expect_status(tf_redis_limiter_reset(r, "a", 1), TF_ERR_UNAVAILABLE, NULL);
        tf_redis_limiter_free(r);
        rs_stop(&s);
    }
}

/* A paused server (SIGSTOP) accepts connections but never answers: every
 * call returns TF_ERR_TIMEOUT within the timeouts, none hangs. */
static void test_server_paused(void **state) {
    (void)state;
    rs_server s;
    char prefix[64];
    tf_redis_limiter *r = fault_setup(&s, prefix, sizeof prefix, 200, 1, 1, TF_REDIS_FALLBACK_DENY);
    rs_pause(&s);
    for (int i = 0; i < 3; ++i) {
        rs_sleep_ms(5); /* the reconnection is due */
        int allowed = -1;
        const long long t0 = rs_now_ms();
        tf_status st = tf_redis_limiter_acquire(r, "p", 1, 10, 1, &allowed, NULL, NULL);
        const long long took = rs_now_ms() - t0;
        expect_status(st, TF_ERR_TIMEOUT, "did not answer");
        assert_int_equal(allowed, 0);
        if (took < 150 || took > 1200) fail_msg("the timed-out call took %lld ms (timeouts 200 ms)", took);
    }
    const void *keys[2] = {"p", "q"};
    size_t lens[2] = {1, 1};
    uint64_t times[2] = {20, 20};
    int as[2] = {-1, -1};
    rs_sleep_ms(5);
    const long long t0 = rs_now_ms();
    expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, 2, times, 1, as, NULL, NULL), TF_ERR_TIMEOUT, NULL);
    assert_true(rs_now_ms() - t0 < 1200);
    assert_int_equal(as[0], 0);
    assert_int_equal(as[1], 0);
    tf_redis_limiter_stats stats = TF_REDIS_LIMITER_STATS_INIT;
    OK(tf_redis_limiter_get_stats(r, &stats));
    assert_int_equal(stats.timeouts, 4);
    assert_int_equal(stats.fallback_denied, 5);
    rs_resume(&s);
    /* answered again once resumed (with another key: the server may still
     * run the requests whose answers timed out, which the header says) */
    rs_sleep_ms(5);
    dec d = redis_acq(r, "z", 1, 30, 1, 1);
    assert_int_equal(d.allowed, 1);
    tf_redis_limiter_free(r);
    rs_stop(&s);
}

/* A restarted server (empty, without the script): the limiter reconnects
 * after its backoff, loads its script again and decides. */
/* A long pipeline to a server that died after the connection was made:
 * the write meets a reset connection, which raised SIGPIPE and ended the
 * process (exit status 141 with batches of 2,000 keys of 1 KB). The call
 * must return TF_ERR_UNAVAILABLE with the fallback's decisions, and a
 * SIGPIPE the program had not asked for must not be left pending. */
static void test_server_killed_long_pipeline(void **state) {
    (void)state;
    rs_server s;
    char prefix[64];
    tf_redis_limiter *r = fault_setup(&s, prefix, sizeof prefix, 1000, 20, 200, TF_REDIS_FALLBACK_DENY);
    assert_int_equal(redis_acq(r, "a", 1, 10, 1, 1).allowed, 1);
    rs_kill(&s);
    enum { N = 4000, LEN = 1024 };
    char *buf = malloc((size_t)N * LEN);
    const void **keys = malloc(N * sizeof *keys);
    size_t *lens = malloc(N * sizeof *lens);
    uint64_t *times = malloc(N * sizeof *times);
    int *allowed = malloc(N * sizeof *allowed);
    assert_true(buf && keys && lens && times && allowed);
    for (size_t i = 0; i < N; ++i) {
        memset(buf + i * LEN, 'a' + (int)(i % 26), LEN);
        memcpy(buf + i * LEN, &i, sizeof i);
        keys[i] = buf + i * LEN;
        lens[i] = LEN;
        times[i] = 20;
        allowed[i] = 7;
    }
    expect_status(tf_redis_limiter_acquire_batch(r, keys, lens, N, times, 1, allowed, NULL, NULL), TF_ERR_UNAVAILABLE,
                  NULL);
    for (size_t i = 0; i < N; ++i) assert_int_equal(allowed[i], 0);
    sigset_t pending;
    sigemptyset(&pending);
    assert_int_equal(sigpending(&pending), 0);
    assert_int_equal(sigismember(&pending, SIGPIPE), 0);
    free(buf);
    free(keys);
    free(lens);
    free(times);
    free(allowed);
    tf_redis_limiter_free(r);
    rs_stop(&s);
}

static void test_server_restarted(void **state) {
    (void)state;
    rs_server s;
    char prefix[64];
    tf_redis_limiter *r = fault_setup(&s, prefix, sizeof prefix, 1000, 20, 200, TF_REDIS_FALLBACK_DENY);
    assert_int_equal(redis_acq(r, "a", 1, 10, 1, 1).allowed, 1);
    rs_kill(&s);
    int allowed;
    assert_int_equal(tf_redis_limiter_acquire(r, "a", 1, 20, 1, &allowed, NULL, NULL), TF_ERR_UNAVAILABLE);
    assert_int_equal(rs_restart(&s), 0);
    tf_status st = TF_ERR_UNAVAILABLE;
    for (long long end = rs_now_ms() + 10000; st != TF_OK && rs_now_ms() < end; rs_sleep_ms(10))
        st = tf_redis_limiter_acquire(r, "a", 1, 30, 1, &allowed, NULL, NULL);
    expect_status(st, TF_OK, NULL);
    assert_int_equal(allowed, 1);
    tf_redis_limiter_stats stats = TF_REDIS_LIMITER_STATS_INIT;
    OK(tf_redis_limiter_get_stats(r, &stats));
    assert_int_equal(stats.reconnects, 1);
    assert_int_equal(stats.script_loads, 2); /* the new server had no script */
    tf_redis_limiter_free(r);
    rs_stop(&s);
}

/* A cluster batch of one key repeated: no segment holds a key twice, so
 * each request is a segment of its own, and the batch allocated its
 * scratch key replies for the whole batch in every segment: 2,000 requests
 * asked operator new for 2,000 x 2,000 replies (128 KB a request, time
 * O(count^2)). The batch's allocations are now a few KB a request. */
static void test_cluster_batch_of_one_key(void **state) {
    (void)state;
    char prefix[64];
    tf_redis_options o = cluster_options(prefix, sizeof prefix);
    tf_redis_limiter *r = NULL;
    OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r));
    enum { N = 2000 };
    const void **keys = malloc(N * sizeof *keys);
    size_t *lens = malloc(N * sizeof *lens);
    uint64_t *times = malloc(N * sizeof *times);
    int *allowed = malloc(N * sizeof *allowed);
    assert_true(keys && lens && times && allowed);
    for (size_t i = 0; i < N; ++i) {
        keys[i] = "same";
        lens[i] = 4;
        times[i] = 10;
    }
    const uint64_t before = nc_bytes();
    OK(tf_redis_limiter_acquire_batch(r, keys, lens, N, times, 1, allowed, NULL, NULL));
    const uint64_t per = (nc_bytes() - before) / N;
    for (size_t i = 0; i < N; ++i) assert_int_equal(allowed[i], i < 5); /* in order: the first 5 */
    if (per > 32768) fail_msg("the batch asked operator new for %llu bytes a request", ULL(per));
    free(keys);
    free(lens);
    free(times);
    free(allowed);
    tf_redis_limiter_free(r);
}

/* Plants a stored global limit as another client (or an older version)
 * may have written it. */
static void plant_global_limit(const rs_server *s, const char *key, const char *value) {
    redisReply *rep = raw_redis(s, "HSET %s m %s", key, value);
    assert_non_null(rep);
    assert_int_not_equal(rep->type, REDIS_REPLY_ERROR);
    freeReplyObject(rep);
}

/* The global limit of the bucketed mode has a bound of its own: the script
 * holds numbers as doubles, and a limit of 2^63 or more was stored by
 * string.format('%d') as a negative number, which every client then read
 * as "no global limit" (and 2^53 and more were rounded). Limits from 2^51
 * on are refused; one stored in Redis that the script cannot hold fails
 * creation. */
static void test_global_limit_bound(void **state) {
    (void)state;
    char prefix[64];
    tf_redis_options o = options_for(&server, prefix, sizeof prefix);
    tf_redis_limiter *r = NULL, *r2 = NULL;
    OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r));
    expect_status(tf_redis_limiter_set_global_limit(r, UINT64_MAX), TF_ERR_INVALID_ARGUMENT, "2^51");
    expect_status(tf_redis_limiter_set_global_limit(r, ((uint64_t)1 << 63) + 1), TF_ERR_INVALID_ARGUMENT, "2^51");
    expect_status(tf_redis_limiter_set_global_limit(r, (uint64_t)1 << 51), TF_ERR_INVALID_ARGUMENT, "2^51");
    OK(tf_redis_limiter_set_global_limit(r, ((uint64_t)1 << 51) - 1));
    OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r2)); /* it reads the stored limit back */
    dec d = redis_acq(r2, "a", 1, 10, 1, 1);
    assert_int_equal(d.allowed, 1);
    assert_int_equal(d.remaining, 4);
    tf_redis_limiter_free(r2);
    r2 = NULL;
    /* what the old code stored for a limit of 2^63 + 1 */
    char key[96];
    snprintf(key, sizeof key, "%s{g}", prefix);
    plant_global_limit(&server, key, "-9223372036854775808");
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r2), TF_ERR_UNAVAILABLE, "invalid here");
    plant_global_limit(&server, key, "2251799813685248"); /* 2^51 */
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r2), TF_ERR_UNAVAILABLE, "invalid here");
    plant_global_limit(&server, key, "16777217"); /* 2^24 + 1: too large for the exact mode */
    expect_status(tf_redis_limiter_new(5, 1000, 0, TF_RATE_LIMITER_EXACT, &o, &r2), TF_ERR_UNAVAILABLE, "invalid here");
    assert_null(r2);
    tf_redis_limiter_free(r);
}

/* A cluster node that never joined a cluster answers CLUSTER SLOTS with no
 * range: creation loaded the script nowhere; a share's returned TF_OK and
 * every call then failed. Creation fails with TF_ERR_UNAVAILABLE and says
 * why. */
static void test_cluster_without_slots(void **state) {
    (void)state;
    rs_server lone;
    assert_int_equal(rs_start_cluster_node(&lone), 0);
    char prefix[64];
    tf_redis_options o = options_for(&lone, prefix, sizeof prefix);
    o.mode = TF_REDIS_MODE_CLUSTER;
    /* a share's creation sends nothing but the script: it returned TF_OK */
    o.prefix = NULL;
    tf_redis_sketch_share *sh = NULL;
    expect_status(tf_redis_sketch_share_new("n", "p", 0, &o, &sh), TF_ERR_UNAVAILABLE, "no slot ranges");
    assert_null(sh);
    /* a limiter's failed at its next command, reading the global limit:
     * "slot N has no master" */
    o.prefix = prefix;
    tf_redis_limiter *r = NULL;
    expect_status(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r), TF_ERR_UNAVAILABLE, "no slot ranges");
    assert_null(r);
    rs_stop(&lone);
}

/* A master owning several separate slot ranges (slots moved to it) had the
 * script loaded once per range (only adjacent repeats were dropped): once
 * per master now. */
static void test_cluster_master_of_separate_ranges(void **state) {
    (void)state;
    /* node 2 owns the last range; it gets slots of node 0's, below node 1's */
    assert_int_equal(rs_cluster_reshard(&cluster, 0, 2, 10), 0);
    assert_int_equal(rs_cluster_owner(&cluster, 0, 5461), 1);
    assert_int_equal(rs_cluster_owner(&cluster, 0, 16383), 2);
    char prefix[64];
    tf_redis_options o = cluster_options(prefix, sizeof prefix);
    tf_redis_limiter *r = NULL;
    OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r));
    tf_redis_limiter_stats s = TF_REDIS_LIMITER_STATS_INIT;
    OK(tf_redis_limiter_get_stats(r, &s));
    assert_int_equal(s.script_loads, 3);
    assert_int_equal(redis_acq(r, "a", 1, 10, 1, 1).allowed, 1);
    tf_redis_limiter_free(r);
}

/* One scenario of a refund after set_global_limit, in bucketed mode: X
 * takes 1 at x_t, the global limit of 2 is set, Y takes 2 at y_t, X's
 * permit is refunded at y_t + 1, then Z asks for 1 at y_t + 2 (every time
 * 0 with the server's clock: x_t = y_t = 0). Returns Z's answer. */
static int refund_before_global(tf_redis_limiter *r, uint64_t x_t, uint64_t y_t) {
    const int server = x_t == 0;
    assert_int_equal(redis_acq(r, "x", 1, x_t, 1, 1).allowed, 1);
    OK(tf_redis_limiter_set_global_limit(r, 2));
    assert_int_equal(redis_acq(r, "y", 1, y_t, 2, 1).allowed, 1);
    OK(tf_redis_limiter_refund(r, "x", 1, server ? 0 : y_t + 1, 1));
    return redis_acq(r, "z", 1, server ? 0 : y_t + 2, 1, 1).allowed;
}

/* The server's clock: set_global_limit starts the new global window just
 * past the server's time (in bucketed mode at the next bucket), as the
 * embedded limiter starts it past every key's time. Before, the window
 * started empty at 0 and Y's grants shared X's bucket: the refund of X's
 * permit, taken before the limit was set, took one of Y's out of the
 * global window, and Z was granted too: 3 in one window under a global
 * limit of 2. On the server and on the cluster (masters on one machine:
 * one clock). */
static void test_refund_after_set_global_limit_server_time(void **state) {
    (void)state;
    const uint64_t day = 86400000; /* buckets of a day: the test stays in one */
    for (int on_cluster = 0; on_cluster <= 1; ++on_cluster) {
        for (int attempt = 0;; ++attempt) {
            assert_true(attempt < 3);
            char prefix[64];
            tf_redis_options o =
                on_cluster ? cluster_options(prefix, sizeof prefix) : options_for(&server, prefix, sizeof prefix);
            o.time_source = TF_REDIS_TIME_SERVER;
            tf_redis_limiter *r = NULL;
            OK(tf_redis_limiter_new(5, 2 * day, day, 0, &o, &r));
            const uint64_t first = tf_clock_now_ms() / day;
            const int z = refund_before_global(r, 0, 0);
            const uint64_t last = tf_clock_now_ms() / day;
            tf_redis_limiter_free(r);
            if (first != last) continue; /* midnight (UTC) passed: again */
            if (z) fail_msg("%s: 3 granted in one window under a global limit of 2", on_cluster ? "cluster" : "server");
            break;
        }
    }
}

/* The caller's clock: the library cannot know the keys' times when the
 * global limit is set, and the new window starts at 0 (redis.h,
 * tf_redis_limiter_set_global_limit()). A refund of a permit taken before,
 * in the bucket of the new window's grants, gives one of them back: the
 * documented limitation, shown here (Z granted: 3 under a limit of 2).
 * When the new window's grants are in a later bucket than the permit
 * refunded, the refund leaves them alone. */
static void test_refund_after_set_global_limit_caller_time(void **state) {
    (void)state;
    for (int on_cluster = 0; on_cluster <= 1; ++on_cluster) {
        for (int later = 0; later <= 1; ++later) {
            char prefix[64];
            tf_redis_options o =
                on_cluster ? cluster_options(prefix, sizeof prefix) : options_for(&server, prefix, sizeof prefix);
            tf_redis_limiter *r = NULL;
            OK(tf_redis_limiter_new(5, 1000, 100, 0, &o, &r));
            /* X at 10 (bucket 0); Y at 20 (bucket 0) or 110 (bucket 1) */
            const int z = refund_before_global(r, 10, later ? 110 : 20);
            assert_int_equal(z, later ? 0 : 1);
            tf_redis_limiter_free(r);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_decisions_as_embedded),
        cmocka_unit_test(test_cluster_same_decisions_as_embedded),
        cmocka_unit_test(test_cluster_global_undo),
        cmocka_unit_test(test_cluster_slot_moved),
        cmocka_unit_test(test_cluster_master_of_separate_ranges),
        cmocka_unit_test(test_cluster_batch_of_one_key),
        cmocka_unit_test(test_cluster_without_slots),
        cmocka_unit_test(test_handles_share_state),
        cmocka_unit_test(test_server_time),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_global_limit_bound),
        cmocka_unit_test(test_refund_after_set_global_limit_server_time),
        cmocka_unit_test(test_refund_after_set_global_limit_caller_time),
        cmocka_unit_test(test_server_killed),
        cmocka_unit_test(test_server_paused),
        cmocka_unit_test(test_server_killed_long_pipeline),
        cmocka_unit_test(test_server_restarted),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
