/* The read-only calls every structure's header declares safe to overlap
 * (contains or query and their batches, get_info, get_stats, memory, serialized_size,
 * serialize), run by many threads at once on one shared structure. Each
 * thread checks every answer against the one a single thread computed
 * before, and the structure's blob after the run against the one before:
 * a read that changed something, or answered differently, fails here, and
 * a read that writes shared memory fails under ThreadSanitizer (the
 * 'threads' suite of scripts/test.sh's TSan build). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "temporalfilters.h"
#include "test_util.h"

#define CR_THREADS 8
#define CR_KEYS 3000 /* added keys; as many never added */
#define CR_ROUNDS 3
#define CR_BATCH 32

/* One structure under test: the object, its read-only calls, and the
 * time its time-aware reads are asked at. */
typedef struct {
    const char *name;
    const tu_structure *st;
    void *obj;
    uint64_t now;
    /* *present for one key; TF_OK or the failing status */
    tf_status (*contains)(const void *obj, const tu_key *k, uint64_t now, int *present);
    /* out[i] for `n` keys, or NULL when the structure has no batch call */
    tf_status (*contains_batch)(const void *obj, const void *const *keys, const size_t *lens, size_t n, uint64_t now,
                                int *out);
    /* the structure's stats struct, filled (read-only) */
    tf_status (*stats)(const void *obj, uint64_t now);
} cr_case;

static tf_status age_contains(const void *o, const tu_key *k, uint64_t now, int *p) {
    (void)now;
    return tf_age_bloom_contains(o, k->b, sizeof k->b, p);
}
static tf_status age_stats(const void *o, uint64_t now) {
    (void)now;
    tf_age_bloom_stats s = TF_AGE_BLOOM_STATS_INIT;
    return tf_age_bloom_get_stats(o, &s);
}
static tf_status time_contains(const void *o, const tu_key *k, uint64_t now, int *p) {
    return tf_time_bloom_contains(o, k->b, sizeof k->b, now, p);
}
static tf_status time_stats(const void *o, uint64_t now) {
    tf_time_bloom_stats s = TF_TIME_BLOOM_STATS_INIT;
    return tf_time_bloom_get_stats(o, now, &s);
}
static tf_status cuckoo_contains(const void *o, const tu_key *k, uint64_t now, int *p) {
    return tf_rotating_cuckoo_contains(o, k->b, sizeof k->b, now, p);
}
static tf_status cuckoo_batch(const void *o, const void *const *keys, const size_t *lens, size_t n, uint64_t now,
                              int *out) {
    return tf_rotating_cuckoo_contains_batch(o, keys, lens, n, now, out);
}
static tf_status cuckoo_stats(const void *o, uint64_t now) {
    tf_rotating_cuckoo_stats s = TF_ROTATING_CUCKOO_STATS_INIT;
    tf_status st = tf_rotating_cuckoo_get_stats(o, now, &s);
    if (st != TF_OK) return st;
    tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
    return tf_rotating_cuckoo_get_table(o, 0, now, &t);
}

/* The recency window's answer as an int: 0 for "not in the window", else
 * 1 + the recency (small here: the window holds every key). */
static int window_answer(uint64_t r) { return r == TF_RECENCY_WINDOW_NOT_IN_WINDOW ? 0 : 1 + (int)(r & 0x3fffffff); }
static tf_status window_query(const void *o, const tu_key *k, uint64_t now, int *p) {
    (void)now;
    uint64_t r = 0;
    const tf_status st = tf_recency_window_query(o, k->b, sizeof k->b, &r);
    *p = window_answer(r);
    return st;
}
static tf_status window_batch(const void *o, const void *const *keys, const size_t *lens, size_t n, uint64_t now,
                              int *out) {
    (void)now;
    uint64_t r[64];
    if (n > 64) return TF_ERR_INVALID_ARGUMENT;
    const tf_status st = tf_recency_window_query_batch(o, keys, lens, n, r);
    for (size_t i = 0; i < n; ++i) out[i] = window_answer(r[i]);
    return st;
}
static tf_status window_stats(const void *o, uint64_t now) {
    (void)now;
    tf_recency_window_stats s = TF_RECENCY_WINDOW_STATS_INIT;
    tf_status st = tf_recency_window_get_stats(o, &s);
    if (st != TF_OK) return st;
    tf_recency_window_level l = TF_RECENCY_WINDOW_LEVEL_INIT;
    return tf_recency_window_get_level(o, 0, &l);
}

static tu_key cr_key(uint64_t i) { return tu_make_key('R', i); }

typedef struct {
    const cr_case *c;
    const int *expected; /* [2 * CR_KEYS]: added keys, then keys never added */
    const unsigned char *blob;
    size_t blob_len;
    unsigned id;
    pthread_barrier_t *bar;
    long checked;
    char why[160];
} cr_arg;

#define CR_FAIL(a, ...)                                  \
    do {                                                 \
        snprintf((a)->why, sizeof(a)->why, __VA_ARGS__); \
        return NULL;                                     \
    } while (0)

static void *cr_worker(void *p) {
    cr_arg *a = p;
    const cr_case *c = a->c;
    tu_rng g = {77 + a->id};
    unsigned char *buf = malloc(a->blob_len);
    if (buf == NULL) CR_FAIL(a, "out of memory");
    pthread_barrier_wait(a->bar);
    for (unsigned round = 0; round < CR_ROUNDS; ++round) {
        /* each thread its own order, so that the same cells are read at
         * different times by different threads */
        const uint64_t start = tu_below(&g, 2 * CR_KEYS);
        for (uint64_t j = 0; j < 2 * CR_KEYS; ++j) {
            const uint64_t i = (start + j) % (2 * CR_KEYS);
            const tu_key k = cr_key(i);
            int present = -1;
            if (c->contains(c->obj, &k, c->now, &present) != TF_OK) CR_FAIL(a, "contains failed");
            if (present != a->expected[i])
                CR_FAIL(a, "key %llu: %d, alone %d", (unsigned long long)i, present, a->expected[i]);
            a->checked++;
            if (j % 97 == 0) {
                size_t size = 0, mem = 0, written = 0;
                if (c->st->serialized_size(c->obj, &size) != TF_OK || size != a->blob_len)
                    CR_FAIL(a, "serialized_size");
                if (c->st->memory_call(c->obj, &mem) != TF_OK || mem == 0) CR_FAIL(a, "memory");
                if (c->stats(c->obj, c->now) != TF_OK) CR_FAIL(a, "get_stats");
                /* the versioned info structs begin with their size_t
                 * size: a caller compiled against a larger struct */
                union {
                    size_t size;
                    unsigned char bytes[512];
                } info;
                memset(&info, 0, sizeof info);
                info.size = sizeof info;
                if (c->st->get_info(c->obj, &info) != TF_OK) CR_FAIL(a, "get_info");
                if (c->st->serialize(c->obj, buf, a->blob_len, &written) != TF_OK || written != a->blob_len ||
                    memcmp(buf, a->blob, a->blob_len) != 0)
                    CR_FAIL(a, "serialize gave another blob");
            }
        }
        if (c->contains_batch != NULL) {
            tu_key keys[CR_BATCH];
            const void *ptrs[CR_BATCH];
            size_t lens[CR_BATCH];
            int out[CR_BATCH];
            for (uint64_t base = 0; base < 2 * CR_KEYS; base += CR_BATCH) {
                size_t n = 0;
                for (; n < CR_BATCH && base + n < 2 * CR_KEYS; ++n) {
                    keys[n] = cr_key(base + n);
                    ptrs[n] = keys[n].b;
                    lens[n] = sizeof keys[n].b;
                }
                if (c->contains_batch(c->obj, ptrs, lens, n, c->now, out) != TF_OK) CR_FAIL(a, "batch failed");
                for (size_t i = 0; i < n; ++i)
                    if (out[i] != a->expected[base + i]) CR_FAIL(a, "batch key %llu", (unsigned long long)(base + i));
                a->checked += (long)n;
            }
        }
    }
    free(buf);
    return NULL;
}

static void run_readers(const cr_case *c) {
    /* the answers of one thread, before any other runs */
    int *expected = malloc(sizeof(int) * 2 * CR_KEYS);
    assert_non_null(expected);
    long added_found = 0;
    for (uint64_t i = 0; i < 2 * CR_KEYS; ++i) {
        const tu_key k = cr_key(i);
        assert_int_equal(c->contains(c->obj, &k, c->now, &expected[i]), TF_OK);
        if (i < CR_KEYS) added_found += expected[i] != 0;
    }
    /* the added keys are there (no false negatives at this load), so the
     * threads compare against answers that mean something */
    assert_int_equal(added_found, CR_KEYS);
    size_t len = 0;
    unsigned char *blob = tu_snapshot(c->obj, c->st->serialize, &len);
    pthread_barrier_t bar;
    assert_int_equal(pthread_barrier_init(&bar, NULL, CR_THREADS), 0);
    cr_arg args[CR_THREADS];
    pthread_t th[CR_THREADS];
    for (unsigned t = 0; t < CR_THREADS; ++t) {
        memset(&args[t], 0, sizeof args[t]);
        args[t].c = c;
        args[t].expected = expected;
        args[t].blob = blob;
        args[t].blob_len = len;
        args[t].id = t;
        args[t].bar = &bar;
        assert_int_equal(pthread_create(&th[t], NULL, cr_worker, &args[t]), 0);
    }
    for (unsigned t = 0; t < CR_THREADS; ++t) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    for (unsigned t = 0; t < CR_THREADS; ++t) {
        if (args[t].why[0] != '\0') fail_msg("%s, thread %u: %s", c->name, t, args[t].why);
        assert_true(args[t].checked >= (long)CR_ROUNDS * 2 * CR_KEYS);
    }
    tu_assert_blob(c->obj, c->st->serialize, blob, len);
    free(blob);
    free(expected);
}

static void test_age_bloom_readers(void **state) {
    (void)state;
    const uint32_t layouts[] = {0, TF_AGE_BLOOM_BLOCKED};
    for (size_t l = 0; l < 2; ++l) {
        tf_age_bloom *f = NULL;
        assert_int_equal(tf_age_bloom_new_for(4 * CR_KEYS, 1e-3, 7, layouts[l], &f), TF_OK);
        for (uint64_t i = 0; i < CR_KEYS; ++i) {
            const tu_key k = cr_key(i);
            assert_int_equal(tf_age_bloom_add(f, k.b, sizeof k.b), TF_OK);
        }
        const cr_case c = {l ? "age_bloom blocked" : "age_bloom", &tu_age_bloom, f, 0, age_contains, NULL, age_stats};
        run_readers(&c);
        tf_age_bloom_free(f);
    }
}

static void test_time_bloom_readers(void **state) {
    (void)state;
    tf_time_bloom *f = NULL;
    assert_int_equal(tf_time_bloom_new_for(CR_KEYS, 1e-3, 1000, 7, 0, &f), TF_OK);
    for (uint64_t i = 0; i < CR_KEYS; ++i) {
        const tu_key k = cr_key(i);
        assert_int_equal(tf_time_bloom_add(f, k.b, sizeof k.b, 100 + i / 10), TF_OK);
    }
    /* a time later than the last insert: reads at it age nothing */
    const cr_case c = {"time_bloom", &tu_time_bloom, f, 100 + CR_KEYS / 10 + 5, time_contains, NULL, time_stats};
    run_readers(&c);
    tf_time_bloom_free(f);
}

static void test_rotating_cuckoo_readers(void **state) {
    (void)state;
    const uint32_t flags[] = {0, TF_ROTATING_CUCKOO_THREE_WAY};
    for (size_t v = 0; v < 2; ++v) {
        tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
        o.flags = flags[v];
        o.table_slots = 1024; /* small tables: the keys span several */
        o.ttl = 10000;
        o.seed = 7;
        tf_rotating_cuckoo *f = NULL;
        assert_int_equal(tf_rotating_cuckoo_new(&o, &f), TF_OK);
        for (uint64_t i = 0; i < CR_KEYS; ++i) {
            const tu_key k = cr_key(i);
            assert_int_equal(tf_rotating_cuckoo_add(f, k.b, sizeof k.b, 100 + i), TF_OK);
        }
        tf_rotating_cuckoo_stats s = TF_ROTATING_CUCKOO_STATS_INIT;
        assert_int_equal(tf_rotating_cuckoo_get_stats(f, 100 + CR_KEYS, &s), TF_OK);
        assert_true(s.tables > 1);
        const cr_case c = {v ? "rotating_cuckoo three-way" : "rotating_cuckoo",
                           &tu_rotating_cuckoo,
                           f,
                           100 + CR_KEYS,
                           cuckoo_contains,
                           cuckoo_batch,
                           cuckoo_stats};
        run_readers(&c);
        tf_rotating_cuckoo_free(f);
    }
}

static void test_recency_window_readers(void **state) {
    (void)state;
    const uint32_t modes[] = {TF_RECENCY_WINDOW_HISTORICAL, TF_RECENCY_WINDOW_EXACT, TF_RECENCY_WINDOW_OPTIMAL_SM};
    const char *names[] = {"recency_window", "recency_window exact", "recency_window optimal_sm"};
    for (size_t m = 0; m < 3; ++m) {
        tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
        o.mode = modes[m];
        o.window = 4 * CR_KEYS;
        o.seed = 7;
        tf_recency_window *w = NULL;
        assert_int_equal(tf_recency_window_new(&o, &w), TF_OK);
        for (uint64_t i = 0; i < CR_KEYS; ++i) {
            const tu_key k = cr_key(i);
            assert_int_equal(tf_recency_window_insert(w, k.b, sizeof k.b), TF_OK);
        }
        const cr_case c = {names[m], &tu_recency_window, w, 0, window_query, window_batch, window_stats};
        run_readers(&c);
        tf_recency_window_free(w);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_age_bloom_readers),
        cmocka_unit_test(test_time_bloom_readers),
        cmocka_unit_test(test_rotating_cuckoo_readers),
        cmocka_unit_test(test_recency_window_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
