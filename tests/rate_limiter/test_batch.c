/* Rate limiter: acquire_batch decides as single calls would, and refuses bad
 * arguments before deciding anything. */
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

/* acquire_batch decides exactly as the same single calls in order: the
 * same answers and, afterwards, the same state byte for byte (both modes,
 * global limit and overrides, inline, out-of-line and empty keys, times
 * going backwards, batches across the library's 64-key chunks). */
static void test_acquire_batch_equals_single_calls(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *a = make(4, 1000, 100, kModes[m]), *b = make(4, 1000, 100, kModes[m]);
        for (int i = 0; i < 2; ++i) {
            tf_rate_limiter *r = i ? b : a;
            OK(tf_rate_limiter_set_global_limit(r, 300));
            OK(tf_rate_limiter_set_key_limit(r, "k7", 2, 9));
        }
        enum { NK = 500, MAXB = 200 };
        char names[NK][48];
        size_t lens[NK];
        for (int k = 0; k < NK; ++k) {
            lens[k] = (size_t)snprintf(names[k], sizeof names[k], "k%d", k);
            if (k % 7 == 3) lens[k] = (size_t)snprintf(names[k], sizeof names[k], "a longer key, out of line, %d", k);
            if (k == 0) lens[k] = 0;
        }
        tu_rng g = {31 + m};
        uint64_t now = 1, batches = 0, granted = 0, denied = 0;
        const void *keys[MAXB];
        size_t klens[MAXB];
        uint64_t times[MAXB], rem[MAXB], retry[MAXB];
        int allowed[MAXB];
        for (long done = 0; done < 40000; ++batches) {
            const size_t count = 1 + tu_below(&g, MAXB);
            const uint64_t n = 1 + tu_below(&g, 2);
            for (size_t i = 0; i < count; ++i) {
                const size_t k = tu_below(&g, NK);
                keys[i] = k == 0 && tu_below(&g, 2) ? NULL : names[k];
                klens[i] = lens[k];
                now += tu_below(&g, 5);
                times[i] = tu_below(&g, 10) == 0 && now > 500 ? now - tu_below(&g, 500) : now;
            }
            OK(tf_rate_limiter_acquire_batch(b, keys, klens, count, times, n, allowed, rem, retry));
            for (size_t i = 0; i < count; ++i) {
                dec d = acq_b(a, keys[i], klens[i], times[i], n);
                if (d.allowed != allowed[i] || d.remaining != rem[i] || d.retry_at != retry[i])
                    fail_msg("%s: batch %llu entry %zu: batch (%d, %llu, %llu), single call (%d, %llu, %llu)",
                             mode_name(kModes[m]), ULL(batches), i, allowed[i], ULL(rem[i]), ULL(retry[i]), d.allowed,
                             ULL(d.remaining), ULL(d.retry_at));
                granted += (uint64_t)d.allowed;
                denied += (uint64_t)!d.allowed;
            }
            done += (long)count;
        }
        assert_true(granted > 1000 && denied > 1000);
        size_t na, nb;
        unsigned char *sa = snap(a, &na), *sb = snap(b, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(sa, sb, na);
        /* remaining and retry_at may be NULL */
        const void *k1[1] = {"k1"};
        size_t l1[1] = {2};
        uint64_t t1[1] = {now};
        int al[1] = {-1};
        OK(tf_rate_limiter_acquire_batch(b, k1, l1, 1, t1, 1, al, NULL, NULL));
        assert_int_equal(al[0], acq_b(a, "k1", 2, now, 1).allowed);
        free(sa);
        free(sb);
        tf_rate_limiter_free(a);
        tf_rate_limiter_free(b);
    }
}

/* Every bad argument of a batch is refused before any decision. */
static void test_acquire_batch_bad_input(void **state) {
    (void)state;
    tf_rate_limiter *r = make(2, 100, 10, 0);
    EXPECT(acq(r, "x", 5, 1), 1, 1, 0);
    size_t n;
    unsigned char *before = snap(r, &n);
    const void *keys[3] = {"x", "y", "z"};
    size_t lens[3] = {1, 1, 1};
    uint64_t times[3] = {6, 7, 8}, rem[3], retry[3];
    int allowed[3];
    assert_int_equal(tf_rate_limiter_acquire_batch(NULL, keys, lens, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, NULL, lens, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, NULL, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, NULL, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, times, 1, NULL, rem, retry), TF_ERR_NULL);
    const void *holes[3] = {"x", NULL, "z"};
    assert_int_equal(tf_rate_limiter_acquire_batch(r, holes, lens, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_non_null(strstr(tf_last_error_message(), "keys[1]"));
    uint64_t zero[3] = {6, 7, 0};
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, zero, 1, allowed, rem, retry),
                     TF_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tf_last_error_message(), "times[2]"));
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, times, 0, allowed, rem, retry),
                     TF_ERR_INVALID_ARGUMENT);
    OK(tf_rate_limiter_acquire_batch(r, NULL, NULL, 0, NULL, 1, NULL, NULL, NULL)); /* nothing to do */
    /* n is checked whatever the count, as for one request */
    TU_REFUSED(tf_rate_limiter_acquire_batch(r, NULL, NULL, 0, NULL, 0, NULL, NULL, NULL), TF_ERR_INVALID_ARGUMENT);
    assert_unchanged(r, before, n);
    assert_int_equal(stats_of(r).keys, 1);
    /* a huge n is an answer, not an error */
    OK(tf_rate_limiter_acquire_batch(r, keys, lens, 3, times, NEVER, allowed, rem, retry));
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(allowed[i], 0);
        assert_int_equal(retry[i], NEVER);
    }
    free(before);
    tf_rate_limiter_free(r);
}

TU_MAIN(test_acquire_batch_equals_single_calls, test_acquire_batch_bad_input)
