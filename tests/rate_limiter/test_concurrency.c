/* Rate limiter under many threads: per-key and global windows hold whatever
 * the interleaving, free-running traffic with readers, and the global limit
 * changed while requests run. */
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

#define CT_THREADS 8

#define CT_STEP 10 /* time units per phase = bucket width */

#define CT_WINDOW 40

#define CT_PHASES 300

typedef struct {
    tf_rate_limiter *r;
    pthread_barrier_t *bar;
    unsigned id, per_phase, nkeys;
    int jitter, mixed;
    uint32_t *granted; /* [phase][key] permits */
    uint32_t *asked;   /* [phase][key] requests */
    int failed;
} ct_arg;

static void *ct_worker(void *p) {
    ct_arg *a = p;
    tu_rng g = {1000 + a->id};
    for (unsigned ph = 0; ph < CT_PHASES; ++ph) {
        pthread_barrier_wait(a->bar);
        const uint64_t base = (uint64_t)CT_STEP * (ph + 1);
        for (unsigned i = 0; i < a->per_phase; ++i) {
            const unsigned key = (unsigned)tu_below(&g, a->nkeys);
            const uint64_t n = a->mixed ? 1 + tu_below(&g, 2) : 1;
            const uint64_t now = base + (a->jitter ? tu_below(&g, CT_STEP) : 0);
            tu_key k = tu_make_key('T', key);
            int allowed = -1;
            uint64_t rem, retry;
            if (tf_rate_limiter_acquire(a->r, k.b, sizeof k.b, now, n, &allowed, &rem, &retry) != TF_OK ||
                allowed < 0 || (allowed && retry != 0) || (!allowed && retry <= now))
                a->failed = 1;
            if (allowed) a->granted[ph * a->nkeys + key] += (uint32_t)n;
            a->asked[ph * a->nkeys + key] += 1;
            if (i % 8 == 7) { /* readers meanwhile */
                tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT;
                tf_rate_limiter_info info = TF_RATE_LIMITER_INFO_INIT;
                if (tf_rate_limiter_peek(a->r, k.b, sizeof k.b, now, 1, &allowed, NULL, NULL) != TF_OK ||
                    tf_rate_limiter_get_stats(a->r, &st) != TF_OK || tf_rate_limiter_get_info(a->r, &info) != TF_OK ||
                    info.window != CT_WINDOW)
                    a->failed = 1;
            }
        }
    }
    return NULL;
}

/* 8 threads on overlapping keys in phases of CT_STEP time units (times
 * within a phase in any order across threads). In any CT_WINDOW / CT_STEP
 * consecutive phases a key gets at most its limit and all keys at most the
 * global limit; with one time per phase and one permit per request the
 * totals are exactly what the rules give, whatever the interleaving. */
static void concurrent_run(uint32_t flags, uint64_t limit, uint64_t global, int jitter, int mixed) {
    const unsigned nkeys = 32, per_phase = 12;
    tf_rate_limiter *r = make(limit, CT_WINDOW, CT_STEP, flags);
    if (global) OK(tf_rate_limiter_set_global_limit(r, global));
    pthread_barrier_t bar;
    assert_int_equal(pthread_barrier_init(&bar, NULL, CT_THREADS), 0);
    ct_arg args[CT_THREADS];
    pthread_t th[CT_THREADS];
    for (unsigned t = 0; t < CT_THREADS; ++t) {
        ct_arg a = {r, &bar, t, per_phase, nkeys, jitter, mixed, NULL, NULL, 0};
        a.granted = calloc((size_t)CT_PHASES * nkeys, sizeof(uint32_t));
        a.asked = calloc((size_t)CT_PHASES * nkeys, sizeof(uint32_t));
        assert_true(a.granted && a.asked);
        args[t] = a;
    }
    for (unsigned t = 0; t < CT_THREADS; ++t) assert_int_equal(pthread_create(&th[t], NULL, ct_worker, &args[t]), 0);
    for (unsigned t = 0; t < CT_THREADS; ++t) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    uint64_t *gk = calloc((size_t)CT_PHASES * nkeys, sizeof(uint64_t)), *ak = calloc((size_t)CT_PHASES * nkeys, 8);
    assert_true(gk && ak);
    for (unsigned t = 0; t < CT_THREADS; ++t) {
        assert_int_equal(args[t].failed, 0);
        for (size_t i = 0; i < (size_t)CT_PHASES * nkeys; ++i) gk[i] += args[t].granted[i], ak[i] += args[t].asked[i];
        free(args[t].granted);
        free(args[t].asked);
    }
    const unsigned span = CT_WINDOW / CT_STEP;
    const int exact_totals = !jitter && !mixed;
    uint64_t total = 0, binding = 0;
    uint64_t *want = calloc(nkeys, sizeof(uint64_t));
    assert_non_null(want);
    for (unsigned ph = 0; ph < CT_PHASES; ++ph) {
        uint64_t in_window_all = 0, before_all = 0, want_sum = 0, phase_total = 0;
        for (unsigned k = 0; k < nkeys; ++k) {
            uint64_t inwin = 0; /* phases ph - span + 1 .. ph */
            for (unsigned q = ph + 1 >= span ? ph + 1 - span : 0; q <= ph; ++q) inwin += gk[q * nkeys + k];
            if (inwin > limit)
                fail_msg("phase %u key %u: %llu permits in one window (limit %llu)", ph, k, ULL(inwin), ULL(limit));
            const uint64_t got = gk[ph * nkeys + k], before = inwin - got, asked = ak[ph * nkeys + k];
            want[k] = asked < limit - before ? asked : limit - before;
            want_sum += want[k];
            in_window_all += inwin;
            before_all += before;
            phase_total += got;
        }
        if (global && in_window_all > global)
            fail_msg("phase %u: %llu permits in one window (global %llu)", ph, ULL(in_window_all), ULL(global));
        if (exact_totals) {
            /* one time per phase, one permit per request: every key gets
             * min(asked, its room) unless the global room runs out first,
             * and then the global room is used up exactly */
            const uint64_t room_all = global ? global - before_all : NEVER;
            if (want_sum <= room_all) {
                for (unsigned k = 0; k < nkeys; ++k)
                    if (gk[ph * nkeys + k] != want[k])
                        fail_msg("phase %u key %u: %llu granted, want %llu (asked %llu)", ph, k,
                                 ULL(gk[ph * nkeys + k]), ULL(want[k]), ULL(ak[ph * nkeys + k]));
            } else {
                binding++;
                if (phase_total != room_all)
                    fail_msg("phase %u: %llu granted, want the global room %llu (demand %llu)", ph, ULL(phase_total),
                             ULL(room_all), ULL(want_sum));
            }
        }
        total += phase_total;
    }
    free(want);
    assert_true(total > CT_PHASES);
    if (global && exact_totals) assert_true(binding > 10);
    free(gk);
    free(ak);
    tf_rate_limiter_free(r);
}

static void test_concurrent_windows(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        concurrent_run(kModes[m], 3, 0, 0, 0);  /* exact totals per key */
        concurrent_run(kModes[m], 3, 40, 0, 0); /* exact totals with the global limit */
        concurrent_run(kModes[m], 3, 40, 1, 1); /* any order, n = 1 or 2: bounds */
        concurrent_run(kModes[m], 5, 0, 1, 1);
    }
}

typedef struct {
    tf_rate_limiter *r;
    unsigned id;
    uint32_t *granted; /* per key */
    int failed;
    long blobs;
} fr_arg;

#define FR_KEYS 3000

#define FR_REQUESTS 20000

static void *fr_worker(void *p) {
    fr_arg *a = p;
    tu_rng g = {500 + a->id};
    for (uint64_t i = 0; i < FR_REQUESTS; ++i) {
        const unsigned key = (unsigned)tu_below(&g, FR_KEYS);
        tu_key k = tu_make_key('F', key);
        int allowed = -1;
        if (tf_rate_limiter_acquire(a->r, k.b, sizeof k.b, 1 + i, 1, &allowed, NULL, NULL) != TF_OK) a->failed = 1;
        if (allowed == 1) a->granted[key]++;
        if (a->id == 0 && i % 2000 == 0) { /* a snapshot meanwhile reads back */
            size_t need = 0, w = 0;
            if (tf_rate_limiter_serialized_size(a->r, &need) != TF_OK) a->failed = 1;
            for (;;) {
                unsigned char *buf = malloc(need + 1);
                tf_status st = tf_rate_limiter_serialize(a->r, buf, need, &w);
                if (st == TF_ERR_BUFFER_TOO_SMALL) {
                    need = w;
                    free(buf);
                    continue;
                }
                tf_rate_limiter *c = NULL;
                if (st != TF_OK || tf_rate_limiter_deserialize(buf, w, NULL, &c) != TF_OK) a->failed = 1;
                tf_rate_limiter_free(c);
                free(buf);
                a->blobs++;
                break;
            }
        }
    }
    return NULL;
}

/* Free-running threads growing the table on shared keys; nothing leaves
 * the window (it is longer than the run), so each key ends with exactly
 * min(requests, limit) permits, and the global limit is reached exactly. */
static void test_concurrent_free_running(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (int with_global = 0; with_global < 2; ++with_global) {
            const uint64_t L = 5, G = 5000;
            tf_rate_limiter *r = make(L, 1000000000000ULL, 1000000000ULL, kModes[m]);
            if (with_global) OK(tf_rate_limiter_set_global_limit(r, G));
            fr_arg args[CT_THREADS];
            pthread_t th[CT_THREADS];
            for (unsigned t = 0; t < CT_THREADS; ++t) {
                args[t].r = r;
                args[t].id = t;
                args[t].granted = calloc(FR_KEYS, sizeof(uint32_t));
                args[t].failed = 0;
                args[t].blobs = 0;
                assert_non_null(args[t].granted);
            }
            for (unsigned t = 0; t < CT_THREADS; ++t)
                assert_int_equal(pthread_create(&th[t], NULL, fr_worker, &args[t]), 0);
            for (unsigned t = 0; t < CT_THREADS; ++t) pthread_join(th[t], NULL);
            /* what each key asked for, replayed from the seeds */
            uint64_t asked[FR_KEYS] = {0}, total = 0, want_total = 0;
            for (unsigned t = 0; t < CT_THREADS; ++t) {
                tu_rng g = {500 + t};
                for (uint64_t i = 0; i < FR_REQUESTS; ++i) asked[tu_below(&g, FR_KEYS)]++;
            }
            uint64_t tracked = 0;
            for (unsigned k = 0; k < FR_KEYS; ++k) {
                uint64_t got = 0;
                for (unsigned t = 0; t < CT_THREADS; ++t) got += args[t].granted[k];
                const uint64_t want = asked[k] < L ? asked[k] : L;
                if (!with_global) assert_int_equal(got, want);
                assert_true(got <= want);
                total += got;
                want_total += want;
                tracked += got > 0;
            }
            if (with_global) assert_int_equal(total, want_total < G ? want_total : G);
            tf_rate_limiter_stats s = stats_of(r);
            assert_int_equal(s.keys, tracked);
            for (unsigned t = 0; t < CT_THREADS; ++t) {
                assert_int_equal(args[t].failed, 0);
                free(args[t].granted);
            }
            assert_true(args[0].blobs >= 10);
            tf_rate_limiter_free(r);
        }
    }
}

typedef struct {
    tf_rate_limiter *r;
    int stop;
    pthread_mutex_t mu;
} gl_arg;

static void *gl_worker(void *p) {
    gl_arg *a = p;
    uint64_t t = 1;
    for (;;) {
        pthread_mutex_lock(&a->mu);
        const int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop) break;
        int allowed;
        for (int i = 0; i < 64; ++i) {
            (void)tf_rate_limiter_acquire(a->r, "key", 3, t++, 3, &allowed, NULL, NULL);
            /* a refund gives permits back to the global window too, when
             * there is one: it must not touch the global window's state
             * without its lock when it sees none (a data race with an
             * acquire of a limit set meanwhile) */
            if (i % 4 == 0) (void)tf_rate_limiter_refund(a->r, "key", 3, t, 1);
        }
    }
    return NULL;
}

/* Every function may be called concurrently: set_global_limit while
 * requests and refunds run. Runs in a child process so that a crash (or
 * ThreadSanitizer's report, halt_on_error) is a failure of this test
 * only. */
static void test_concurrent_set_global_limit(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            /* a crash is the child's own death, not cmocka's to report */
            const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
            for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = SIG_DFL;
                sigaction(sigs[i], &sa, NULL);
            }
            gl_arg a;
            a.r = NULL;
            a.stop = 0;
            pthread_mutex_init(&a.mu, NULL);
            if (tf_rate_limiter_new(5, 100, 10, 0, kModes[m], &a.r) != TF_OK) _exit(2);
            pthread_t th[3];
            for (int i = 0; i < 3; ++i)
                if (pthread_create(&th[i], NULL, gl_worker, &a) != 0) _exit(3);
            for (int i = 0; i < 100000; ++i) /* each takes every lock */
                if (tf_rate_limiter_set_global_limit(a.r, (i & 1) ? 2 : 0) != TF_OK) _exit(4);
            pthread_mutex_lock(&a.mu);
            a.stop = 1;
            pthread_mutex_unlock(&a.mu);
            for (int i = 0; i < 3; ++i) pthread_join(th[i], NULL);
            tf_rate_limiter_free(a.r);
            _exit(0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("%s: the child %s %d while set_global_limit ran beside acquire and refund", mode_name(kModes[m]),
                     WIFSIGNALED(status) ? "died of signal" : "exited with",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
}

TU_MAIN(test_concurrent_windows, test_concurrent_free_running, test_concurrent_set_global_limit)
