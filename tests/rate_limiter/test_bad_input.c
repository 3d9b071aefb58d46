/* Rate limiter and bad input: every refused argument gets its status and a
 * message, and leaves the limiter as it was. */
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
#include "temporalfilters.h"
#include "test_util.h"

static void test_new_bad_input(void **state) {
    (void)state;
    tf_rate_limiter *r = NULL;
#define BADNEW(l, w, b, f, status)                                        \
    do {                                                                  \
        tf_clear_last_error();                                            \
        assert_int_equal(tf_rate_limiter_new(l, w, b, 0, f, &r), status); \
        assert_null(r);                                                   \
        assert_true(strlen(tf_last_error_message()) > 0);                 \
    } while (0)
    assert_int_equal(tf_rate_limiter_new(5, 100, 10, 0, 0, NULL), TF_ERR_NULL);
    assert_true(strlen(tf_last_error_message()) > 0);
    BADNEW(0, 100, 10, 0, TF_ERR_INVALID_ARGUMENT); /* zero limit */
    BADNEW(0, 100, 0, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 0, 10, 0, TF_ERR_INVALID_ARGUMENT); /* zero window */
    BADNEW(5, 0, 0, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 0, 0, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 0, 0, TF_ERR_INVALID_ARGUMENT);  /* zero bucket width */
    BADNEW(5, 100, 30, 0, TF_ERR_INVALID_ARGUMENT); /* does not divide */
    BADNEW(5, 100, 101, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 200, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 4097, 1, 0, TF_ERR_INVALID_ARGUMENT); /* too many buckets */
    BADNEW(5, (uint64_t)TF_RATE_LIMITER_MAX_BUCKETS * 2, 1, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, NEVER, 1, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(TF_RATE_LIMITER_MAX_KEY_LIMIT + 1, 100, 10, 0, TF_ERR_INVALID_ARGUMENT); /* limit too large */
    BADNEW(TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1, 100, 0, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(NEVER, 100, 10, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(NEVER, 100, 10, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 10, 0x4, TF_ERR_INVALID_ARGUMENT); /* unknown flags */
    BADNEW(5, 100, 10, 0x80000000u, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 10, EXACT | 0x100, TF_ERR_INVALID_ARGUMENT);
#undef BADNEW
    /* the edges that are fine */
    const struct {
        uint64_t l, w, b;
        uint32_t f;
    } good[] = {
        {1, 1, 1, 0},
        {TF_RATE_LIMITER_MAX_KEY_LIMIT, 4096, 1, 0},
        {5, NEVER, NEVER, 0},
        {5, 1ULL << 63, 1ULL << 52, TF_RATE_LIMITER_FULL_ALLOW},
        {TF_RATE_LIMITER_MAX_EXACT_LIMIT, 100, 0, EXACT},
        {5, 100, 30, EXACT}, /* the width is ignored in exact mode */
        {TF_RATE_LIMITER_MAX_KEY_LIMIT + 1, 100, 0, EXACT | TF_RATE_LIMITER_FULL_ALLOW},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        OK(tf_rate_limiter_new(good[i].l, good[i].w, good[i].b, 0, good[i].f, &r));
        EXPECT(acq(r, "k", 1, 1), 1, good[i].l - 1, 0);
        tf_rate_limiter_free(r);
        r = NULL;
    }
    tf_rate_limiter_free(NULL);
}

/* Every failing call says why and leaves the limiter exactly as it was. */
static void test_calls_bad_input(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = populated(kModes[m]);
        size_t n;
        unsigned char *before = snap(r, &n);
        int a = 7;
        uint64_t u = 7, v = 7;
        tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT, st0;
        tf_rate_limiter_info info = TF_RATE_LIMITER_INFO_INIT;
        memset(&st0, 0, sizeof st0);
#define BAD(call, status) TU_REFUSED_UNCHANGED(call, status, r, tu_rate_limiter.serialize, before, n)
        BAD(tf_rate_limiter_set_global_limit(NULL, 5), TF_ERR_NULL);
        if (ex) BAD(tf_rate_limiter_set_global_limit(r, (1ULL << 24) + 1), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_set_key_limit(NULL, "k", 1, 5), TF_ERR_NULL);
        BAD(tf_rate_limiter_set_key_limit(r, NULL, 1, 5), TF_ERR_NULL);
        BAD(tf_rate_limiter_set_key_limit(r, "k", 1,
                                          ex ? TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1 : TF_RATE_LIMITER_MAX_KEY_LIMIT + 1),
            TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_set_key_limit(r, "vip", 3, NEVER), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_set_max_keys(NULL, 5), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(NULL, "k", 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(r, NULL, 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(r, "k", 1, 5000, 1, NULL, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(r, "k", 1, 0, 1, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_acquire(r, "k", 1, 5000, 0, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_peek(NULL, "k", 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_peek(r, NULL, 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_peek(r, "k", 1, 5000, 1, NULL, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_peek(r, "k", 1, 0, 1, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_peek(r, "k", 1, 5000, 0, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_refund(NULL, "vip", 3, 5000, 1), TF_ERR_NULL);
        BAD(tf_rate_limiter_refund(r, NULL, 3, 5000, 1), TF_ERR_NULL);
        BAD(tf_rate_limiter_refund(r, "vip", 3, 0, 1), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_reset(NULL, "vip", 3), TF_ERR_NULL);
        BAD(tf_rate_limiter_reset(r, NULL, 3), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_stats(NULL, &st), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_stats(r, NULL), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_stats(r, &st0), TF_ERR_INVALID_ARGUMENT); /* not initialized */
        assert_true(st.keys == 0 && st0.keys == 0 && st0.memory == 0);
        /* serialized_size, serialize and get_info */
        tu_check_refused_calls(&tu_rate_limiter, r, sizeof(tf_rate_limiter_info));
        assert_int_equal(a, 7); /* out-parameters untouched on failure */
        assert_int_equal(u, 7);
        assert_int_equal(v, 7);
        /* n far above the limit: not an error, a denial that can never be
         * granted; nothing changes (a request at the key's own time) */
        const char *who[] = {"vip", "vip", "fresh", "fresh"};
        const uint64_t how_many[] = {NEVER, 10, 5, NEVER};
        for (int i = 0; i < 4; ++i) {
            dec d = acq(r, who[i], 2400, how_many[i]);
            assert_int_equal(d.allowed, 0);
            assert_int_equal(d.retry_at, NEVER);
            d = peek(r, who[i], 2400, how_many[i]);
            assert_int_equal(d.allowed, 0);
            assert_int_equal(d.retry_at, NEVER);
        }
        OK(tf_rate_limiter_get_stats(r, &st));
        OK(tf_rate_limiter_get_info(r, &info));
        assert_unchanged(r, before, n);
#undef BAD
        free(before);
        tf_rate_limiter_free(r);
    }
}

TU_MAIN(test_new_bad_input, test_calls_bad_input)
