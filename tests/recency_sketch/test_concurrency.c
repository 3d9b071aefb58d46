/* RecencySketch's concurrent mode: many threads updating and pacing at once
 * keep the promises of the single-threaded mode. */
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

enum { CT_THREADS = 8, CT_KEYS = 4000, CT_OPS = 200000 };

typedef struct {
    tf_recency_sketch *s;
    unsigned id;
    uint64_t truth[CT_KEYS]; /* this thread's own max per key */
    int failed;
} ct_arg;

static void *ct_worker(void *p) {
    ct_arg *a = p;
    tu_rng r = {1000 + a->id};
    uint64_t last_read[64] = {0};
    for (int op = 0; op < CT_OPS; ++op) {
        uint64_t key = tu_below(&r, CT_KEYS);
        if (op % 4 != 3) {
            uint64_t t = 1 + tu_below(&r, 1u << 30);
            tu_key k = tu_make_key('c', key);
            if (tf_recency_sketch_update(a->s, k.b, sizeof k.b, t) != TF_OK) a->failed = 1;
            if (t > a->truth[key]) a->truth[key] = t;
        } else {
            /* reads of one key never go backwards, even while others write */
            uint64_t probe = key % 64;
            tu_key k = tu_make_key('c', probe);
            uint64_t t;
            if (tf_recency_sketch_query(a->s, k.b, sizeof k.b, &t) != TF_OK) a->failed = 1;
            if (t < last_read[probe] || t < a->truth[probe]) a->failed = 2;
            last_read[probe] = t;
        }
    }
    return NULL;
}

static void test_concurrent_updates(void **state) {
    (void)state;
    for (int blocked = 0; blocked < 2; ++blocked) {
        tf_recency_sketch *s =
            make(2048, 4, 5, TF_RECENCY_SKETCH_CONCURRENT | (blocked ? TF_RECENCY_SKETCH_BLOCKED : 0));
        ct_arg *args = calloc(CT_THREADS, sizeof *args);
        pthread_t th[CT_THREADS];
        for (unsigned i = 0; i < CT_THREADS; ++i) {
            args[i].s = s;
            args[i].id = i;
            assert_int_equal(pthread_create(&th[i], NULL, ct_worker, &args[i]), 0);
        }
        for (unsigned i = 0; i < CT_THREADS; ++i) pthread_join(th[i], NULL);
        for (unsigned i = 0; i < CT_THREADS; ++i) assert_int_equal(args[i].failed, 0);
        /* no update was lost: every key reads at least its true maximum */
        uint64_t exact = 0;
        for (uint64_t key = 0; key < CT_KEYS; ++key) {
            uint64_t truth = 0;
            for (unsigned i = 0; i < CT_THREADS; ++i)
                if (args[i].truth[key] > truth) truth = args[i].truth[key];
            tu_key k = tu_make_key('c', key);
            uint64_t t;
            OK(tf_recency_sketch_query(s, k.b, sizeof k.b, &t));
            assert_true(t >= truth);
            exact += t == truth;
        }
        assert_true(exact > 0);
        free(args);
        tf_recency_sketch_free(s);
    }
}

enum { CP_THREADS = 8, CP_KEYS = 16, CP_OPS = 100000, CP_INTERVAL = 50 };

typedef struct {
    tf_recency_sketch *s;
    uint64_t *clock; /* shared logical clock */
    unsigned id;
    uint64_t *grant_key, *grant_time;
    size_t grants;
    int failed;
} cp_arg;

static void *cp_worker(void *p) {
    cp_arg *a = p;
    tu_rng r = {500 + a->id};
    for (int op = 0; op < CP_OPS; ++op) {
        uint64_t now = __atomic_add_fetch(a->clock, 1, __ATOMIC_SEQ_CST) / 16 + 1;
        uint64_t key = tu_below(&r, CP_KEYS);
        tu_key k = tu_make_key('q', key);
        int g;
        if (tf_recency_sketch_pace(a->s, k.b, sizeof k.b, now, CP_INTERVAL, &g, NULL) != TF_OK) a->failed = 1;
        if (g) {
            a->grant_key[a->grants] = key;
            a->grant_time[a->grants] = now;
            a->grants++;
        }
    }
    return NULL;
}

/* Many threads pace the same few keys: no key is ever granted twice within
 * its interval, under any interleaving. */
static void test_concurrent_pace(void **state) {
    (void)state;
    for (int blocked = 0; blocked < 2; ++blocked) {
        tf_recency_sketch *s =
            make(4096, 4, 5, TF_RECENCY_SKETCH_CONCURRENT | (blocked ? TF_RECENCY_SKETCH_BLOCKED : 0));
        uint64_t clock = 0;
        cp_arg args[CP_THREADS];
        pthread_t th[CP_THREADS];
        for (unsigned i = 0; i < CP_THREADS; ++i) {
            args[i] = (cp_arg){s, &clock, i, malloc(CP_OPS * 8), malloc(CP_OPS * 8), 0, 0};
            assert_int_equal(pthread_create(&th[i], NULL, cp_worker, &args[i]), 0);
        }
        for (unsigned i = 0; i < CP_THREADS; ++i) pthread_join(th[i], NULL);
        size_t total = 0;
        for (uint64_t key = 0; key < CP_KEYS; ++key) {
            uint64_t times[CP_THREADS * CP_OPS / CP_INTERVAL + 64];
            size_t n = 0;
            for (unsigned i = 0; i < CP_THREADS; ++i) {
                assert_int_equal(args[i].failed, 0);
                for (size_t j = 0; j < args[i].grants; ++j)
                    if (args[i].grant_key[j] == key) {
                        assert_true(n < sizeof times / sizeof times[0]);
                        times[n++] = args[i].grant_time[j];
                    }
            }
            total += n;
            /* at most one grant of this key in any window of one interval */
            assert_true(n == 0 || max_in_window(times, n, CP_INTERVAL) == 1);
        }
        uint64_t span = clock / 16 + 1;
        print_message("# concurrent pace: %zu grants over %llu time units for %d keys\n", total,
                      (unsigned long long)span, CP_KEYS);
        /* and keys do get granted about once per interval */
        assert_true(total >= (size_t)(0.5 * CP_KEYS * (double)span / CP_INTERVAL));
        for (unsigned i = 0; i < CP_THREADS; ++i) {
            free(args[i].grant_key);
            free(args[i].grant_time);
        }
        tf_recency_sketch_free(s);
    }
}

TU_MAIN(test_concurrent_updates, test_concurrent_pace)
