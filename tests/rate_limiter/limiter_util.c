/* Helpers of the rate limiter suites (tests/rate_limiter/test_*.c). */
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
#include "test_util.h"

const uint32_t kModes[NMODES] = {0, TF_RATE_LIMITER_EXACT};

tf_rate_limiter *make_seeded(uint64_t limit, uint64_t window, uint64_t width, uint32_t seed, uint32_t flags) {
    tf_rate_limiter *r = NULL;
    OK(tf_rate_limiter_new(limit, window, width, seed, flags, &r));
    assert_non_null(r);
    return r;
}

tf_rate_limiter *make(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags) {
    return make_seeded(limit, window, width, 0, flags);
}

dec acq_b(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n) {
    dec d = {-1, 12345, 12345};
    OK(tf_rate_limiter_acquire(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at));
    return d;
}

dec peek_b(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n) {
    dec d = {-1, 12345, 12345};
    OK(tf_rate_limiter_peek(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at));
    return d;
}

dec acq(tf_rate_limiter *r, const char *k, uint64_t now, uint64_t n) { return acq_b(r, k, strlen(k), now, n); }

dec peek(tf_rate_limiter *r, const char *k, uint64_t now, uint64_t n) { return peek_b(r, k, strlen(k), now, n); }

dec acq_id(tf_rate_limiter *r, uint64_t id, uint64_t now, uint64_t n) {
    tu_key k = tu_make_key('L', id);
    return acq_b(r, k.b, sizeof k.b, now, n);
}

int same_dec(dec a, dec b) { return a.allowed == b.allowed && a.remaining == b.remaining && a.retry_at == b.retry_at; }

const char *mode_name(uint32_t flags) { return (flags & EXACT) ? "exact" : "bucketed"; }

void check_dec(dec d, int a, uint64_t rem, uint64_t retry, int line) {
    if (d.allowed != a || d.remaining != rem || d.retry_at != retry)
        fail_msg("line %d: got (allowed %d, remaining %llu, retry_at %llu), want (%d, %llu, %llu)", line, d.allowed,
                 ULL(d.remaining), ULL(d.retry_at), a, ULL(rem), ULL(retry));
}

unsigned char *snap(const tf_rate_limiter *r, size_t *len) { return tu_snapshot(r, tu_rate_limiter.serialize, len); }

void assert_unchanged(const tf_rate_limiter *r, const unsigned char *before, size_t len) {
    tu_assert_blob(r, tu_rate_limiter.serialize, before, len);
}

tf_rate_limiter *clone_of(const tf_rate_limiter *r) { return tu_copy(&tu_rate_limiter, r); }

tf_rate_limiter_stats stats_of(const tf_rate_limiter *r) {
    tf_rate_limiter_stats s = TF_RATE_LIMITER_STATS_INIT;
    OK(tf_rate_limiter_get_stats(r, &s));
    return s;
}

tf_rate_limiter_info info_of(const tf_rate_limiter *r) {
    tf_rate_limiter_info i = TF_RATE_LIMITER_INFO_INIT;
    OK(tf_rate_limiter_get_info(r, &i));
    return i;
}

/* A populated limiter, with every kind of state. */
tf_rate_limiter *populated(uint32_t flags) {
    tf_rate_limiter *r = make(4, 1000, 100, flags);
    OK(tf_rate_limiter_set_global_limit(r, 50));
    OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 9));
    OK(tf_rate_limiter_set_key_limit(r, "unseen", 6, 2));
    OK(tf_rate_limiter_set_max_keys(r, 1000));
    tu_rng g = {3};
    for (uint64_t i = 0; i < 300; ++i) (void)acq_id(r, tu_below(&g, 40), 1000 + 5 * i, 1 + tu_below(&g, 2));
    (void)acq(r, "vip", 2400, 5);
    return r;
}

tf_status try_blob(const unsigned char *b, size_t n) { return tu_try_load(&tu_rate_limiter, b, n); }

/* Decisions of two limiters agree over the same random in-order traffic. */
void assert_same_decisions(tf_rate_limiter *a, tf_rate_limiter *b, uint64_t from, uint64_t seed) {
    tu_rng g = {seed};
    uint64_t now = from;
    for (int i = 0; i < 20000; ++i) {
        now += tu_below(&g, 3);
        const uint64_t id = tu_below(&g, 60), n = 1 + tu_below(&g, 3);
        tu_key k = tu_make_key('L', id);
        if (tu_below(&g, 20) == 0) {
            OK(tf_rate_limiter_refund(a, k.b, sizeof k.b, now, 1));
            OK(tf_rate_limiter_refund(b, k.b, sizeof k.b, now, 1));
            continue;
        }
        dec x = acq_b(a, k.b, sizeof k.b, now, n), y = acq_b(b, k.b, sizeof k.b, now, n);
        if (!same_dec(x, y))
            fail_msg("request %d: (%d, %llu, %llu) vs (%d, %llu, %llu)", i, x.allowed, ULL(x.remaining),
                     ULL(x.retry_at), y.allowed, ULL(y.remaining), ULL(y.retry_at));
    }
    dec x = acq(a, "vip", now, 1), y = acq(b, "vip", now, 1);
    assert_true(same_dec(x, y));
}
