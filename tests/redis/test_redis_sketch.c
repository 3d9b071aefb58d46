/* Sketch sharing through Redis (temporalfilters/redis.h,
 * tf_redis_sketch_share) against a redis-server and a three-master Redis
 * Cluster the suite starts itself: the round trip, convergence of three
 * publishers on the sketch of the whole stream whatever the order of their
 * merges, concurrent publishers, entries of another shape or seed and
 * hostile blobs refused with the local sketch unchanged, expiry, a server
 * killed, paused and restarted, and bad input. */
#define _POSIX_C_SOURCE 200809L
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "raw_redis.h"
#include "redis_server.h"
#include "temporalfilters.h"
#include "temporalfilters/redis.h"
#include "test_util.h"

#define OK(call) assert_int_equal((call), TF_OK)

static rs_server server;   /* the suite's server (group setup) */
static rs_cluster cluster; /* the suite's cluster (group setup) */
static int name_seq;

static int group_setup(void **state) {
    (void)state;
    return rs_suite_start(&server, &cluster);
}

static int group_teardown(void **state) {
    (void)state;
    rs_suite_stop(&server, &cluster);
    return 0;
}

static tf_redis_options options_on(const rs_server *s, int on_cluster) {
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    o.port = (uint32_t)s->port;
    o.prefix = "test:share:";
    if (on_cluster) o.mode = TF_REDIS_MODE_CLUSTER;
    return o;
}

static tf_redis_options suite_options(int on_cluster) {
    return options_on(on_cluster ? &cluster.node[0] : &server, on_cluster);
}

/* A shared name of its own for each use. */
static const char *fresh_name(char *buf, size_t cap) {
    snprintf(buf, cap, "n%d-%d", (int)getpid(), ++name_seq);
    return buf;
}

static void expect_status(tf_status got, tf_status want, const char *needle) {
    if (got != want)
        fail_msg("got %s (%s), want %s", tf_status_string(got), tf_last_error_message(), tf_status_string(want));
    if (needle && !strstr(tf_last_error_message(), needle))
        fail_msg("message \"%s\" does not mention \"%s\"", tf_last_error_message(), needle);
}

static tf_redis_sketch_share *open_share(const tf_redis_options *o, const char *name, const char *publisher,
                                         uint64_t ttl) {
    tf_redis_sketch_share *sh = NULL;
    tf_status st = tf_redis_sketch_share_new(name, publisher, ttl, o, &sh);
    if (st != TF_OK) fail_msg("tf_redis_sketch_share_new: %s: %s", tf_status_string(st), tf_last_error_message());
    return sh;
}

#define WIDTH 512
#define DEPTH 4
#define SEED 7

static tf_recency_sketch *new_sketch(uint64_t width, uint32_t seed, uint32_t flags) {
    tf_recency_sketch *s = NULL;
    OK(tf_recency_sketch_new(width, DEPTH, seed, flags, &s));
    return s;
}

/* The blob of a sketch (malloc'ed). */
static unsigned char *blob_of(const tf_recency_sketch *s, size_t *len) {
    OK(tf_recency_sketch_serialized_size(s, len));
    unsigned char *b = malloc(*len);
    assert_non_null(b);
    size_t written = 0;
    OK(tf_recency_sketch_serialize(s, b, *len, &written));
    assert_int_equal(written, *len);
    return b;
}

static int same_blob(const tf_recency_sketch *a, const tf_recency_sketch *b) {
    size_t la, lb;
    unsigned char *x = blob_of(a, &la), *y = blob_of(b, &lb);
    const int same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static void assert_unchanged(const tf_recency_sketch *s, const unsigned char *before, size_t len) {
    size_t now_len;
    unsigned char *now = blob_of(s, &now_len);
    if (now_len != len || memcmp(now, before, len) != 0) fail_msg("the local sketch changed in a failed call");
    free(now);
}

/* A generated stream: event i is key (id below `keys`) at time i + 1. */
typedef struct {
    uint64_t *ids;
    size_t n;
} stream;

static stream make_stream(uint64_t seed, size_t n, uint64_t keys) {
    stream s = {malloc(n * sizeof(uint64_t)), n};
    assert_non_null(s.ids);
    tu_rng r = {seed};
    for (size_t i = 0; i < n; ++i) s.ids[i] = tu_below(&r, keys);
    return s;
}

static void feed(tf_recency_sketch *s, const stream *st, size_t from, size_t to, int part, int parts) {
    for (size_t i = from; i < to; ++i) {
        if (parts > 1 && (int)(st->ids[i] * 2654435761u % (uint64_t)parts) != part) continue;
        tu_key k = tu_make_key(0x5a, st->ids[i]);
        OK(tf_recency_sketch_update(s, k.b, sizeof k.b, (uint64_t)i + 1));
    }
}

/* Every key's answer of `a` equals `b`'s (beside the blob check). */
static void assert_same_answers(const tf_recency_sketch *a, const tf_recency_sketch *b, uint64_t keys) {
    for (uint64_t id = 0; id < keys + 50; ++id) {
        tu_key k = tu_make_key(0x5a, id);
        uint64_t x = 0, y = 0;
        OK(tf_recency_sketch_query(a, k.b, sizeof k.b, &x));
        OK(tf_recency_sketch_query(b, k.b, sizeof k.b, &y));
        if (x != y)
            fail_msg("key %llu: %llu here, %llu in the whole stream's sketch", (unsigned long long)id,
                     (unsigned long long)x, (unsigned long long)y);
    }
}

static void raw_hset(const rs_server *s, const char *name, const char *field, const void *v, size_t len) {
    char key[128];
    snprintf(key, sizeof key, "test:share:{s:%s}b", name);
    redisReply *r = raw_redis(s, "HSET %s %s %b", key, field, v, len);
    assert_non_null(r);
    assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
}

static long long raw_pttl(const rs_server *s, const char *name, char kind) {
    char key[128];
    snprintf(key, sizeof key, "test:share:{s:%s}%c", name, kind);
    redisReply *r = raw_redis(s, "PTTL %s", key);
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_INTEGER);
    const long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* ---- round trip ---- */

static void round_trip(int on_cluster) {
    tf_redis_options o = suite_options(on_cluster);
    char names[8][32];
    /* several names: on a cluster they land on different masters */
    for (int n = 0; n < 8; ++n) {
        const char *name = fresh_name(names[n], sizeof names[n]);
        tf_redis_sketch_share *pub = open_share(&o, name, "p1", 0);
        tf_redis_sketch_share *reader = open_share(&o, name, NULL, 0);
        tf_recency_sketch *a = new_sketch(WIDTH, SEED, 0), *b = new_sketch(WIDTH, SEED, 0);
        /* nobody published yet: a merge of nothing succeeds, changes nothing */
        size_t merged = 99, refused = 99;
        OK(tf_redis_sketch_share_merge_into(reader, b, 0, &merged, &refused));
        assert_int_equal(merged, 0);
        assert_int_equal(refused, 0);
        stream st = make_stream(100 + (uint64_t)n, 2000, 300);
        feed(a, &st, 0, st.n, 0, 1);
        OK(tf_redis_sketch_share_publish(pub, a));
        OK(tf_redis_sketch_share_merge_into(reader, b, 0, &merged, &refused));
        assert_int_equal(merged, 1);
        assert_int_equal(refused, 0);
        assert_true(same_blob(a, b));
        /* idempotent: merging again changes nothing */
        OK(tf_redis_sketch_share_merge_into(reader, b, 0, NULL, NULL));
        assert_true(same_blob(a, b));
        /* a concurrent local sketch publishes and merges the same cells */
        tf_recency_sketch *c = new_sketch(WIDTH, SEED, TF_RECENCY_SKETCH_CONCURRENT);
        OK(tf_redis_sketch_share_merge_into(reader, c, 0, &merged, NULL));
        assert_int_equal(merged, 1);
        assert_same_answers(a, c, 300);
        /* remove: the entry is gone */
        OK(tf_redis_sketch_share_remove(reader, "p1"));
        tf_recency_sketch *d = new_sketch(WIDTH, SEED, 0), *empty = new_sketch(WIDTH, SEED, 0);
        OK(tf_redis_sketch_share_merge_into(reader, d, 0, &merged, NULL));
        assert_int_equal(merged, 0);
        assert_true(same_blob(d, empty));
        tf_redis_sketch_share_stats s1 = TF_REDIS_SKETCH_SHARE_STATS_INIT, s2 = TF_REDIS_SKETCH_SHARE_STATS_INIT;
        OK(tf_redis_sketch_share_get_stats(pub, &s1));
        OK(tf_redis_sketch_share_get_stats(reader, &s2));
        assert_int_equal(s1.publishes, 1);
        assert_int_equal(s2.merges, 5);
        assert_int_equal(s2.entries_merged, 3);
        assert_int_equal(s2.entries_refused, 0);
        assert_int_equal(s2.timeouts + s2.unavailable, 0);
        free(st.ids);
        tf_recency_sketch_free(a);
        tf_recency_sketch_free(b);
        tf_recency_sketch_free(c);
        tf_recency_sketch_free(d);
        tf_recency_sketch_free(empty);
        tf_redis_sketch_share_free(pub);
        tf_redis_sketch_share_free(reader);
    }
}

static void test_round_trip_server(void **state) {
    (void)state;
    round_trip(0);
}

static void test_round_trip_cluster(void **state) {
    (void)state;
    round_trip(1);
}

/* ---- convergence ---- */

/* Three publishers each see a third of a stream (by key), in `rounds`
 * slices of time; after each slice each one syncs (merge, then publish), in
 * an order that changes every round, and some merge more than once. After
 * the last round every publisher has published everything it saw; one more
 * merge each, in yet another order, gives every one of them the cells of
 * the sketch that saw the whole stream: byte-equal blobs. */
static void converge(int on_cluster, uint64_t seed, int rounds) {
    tf_redis_options o = suite_options(on_cluster);
    char name[32];
    fresh_name(name, sizeof name);
    const char *ids[3] = {"alpha", "beta", "gamma"};
    tf_redis_sketch_share *sh[3];
    tf_recency_sketch *local[3];
    for (int p = 0; p < 3; ++p) {
        sh[p] = open_share(&o, name, ids[p], 600000);
        local[p] = new_sketch(WIDTH, SEED, p == 1 ? TF_RECENCY_SKETCH_CONCURRENT : 0);
    }
    const uint64_t keys = 2000;
    stream st = make_stream(seed, 20000, keys);
    tf_recency_sketch *whole = new_sketch(WIDTH, SEED, 0);
    feed(whole, &st, 0, st.n, 0, 1);
    tu_rng r = {seed ^ 0x9e37};
    for (int round = 0; round < rounds; ++round) {
        const size_t from = st.n * (size_t)round / (size_t)rounds, to = st.n * (size_t)(round + 1) / (size_t)rounds;
        for (int p = 0; p < 3; ++p) feed(local[p], &st, from, to, p, 3);
        int order[3] = {0, 1, 2};
        for (int i = 2; i > 0; --i) {
            const int j = (int)tu_below(&r, (uint64_t)i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < 3; ++i) {
            const int p = order[i];
            if (tu_below(&r, 2))
                OK(tf_redis_sketch_share_sync(sh[p], local[p]));
            else /* publish alone (merge later): the join does not care */
                OK(tf_redis_sketch_share_publish(sh[p], local[p]));
            if (tu_below(&r, 3) == 0) OK(tf_redis_sketch_share_merge_into(sh[p], local[p], 0, NULL, NULL));
        }
    }
    /* everybody published everything: one merge each, backwards */
    for (int p = 2; p >= 0; --p) {
        size_t merged = 0;
        OK(tf_redis_sketch_share_merge_into(sh[p], local[p], 0, &merged, NULL));
        assert_int_equal(merged, 3);
    }
    tf_recency_sketch *fresh = new_sketch(WIDTH, SEED, 0);
    OK(tf_redis_sketch_share_merge_into(sh[0], fresh, 0, NULL, NULL));
    for (int p = 0; p < 3; ++p) {
        if (p != 1) assert_true(same_blob(local[p], whole));
        assert_same_answers(local[p], whole, keys);
    }
    assert_true(same_blob(fresh, whole));
    /* the concurrent one holds the same cells: its copy's blob is whole's */
    tf_recency_sketch *plain = new_sketch(WIDTH, SEED, 0);
    OK(tf_recency_sketch_merge(plain, local[1]));
    assert_true(same_blob(plain, whole));
    for (int p = 0; p < 3; ++p) {
        tf_recency_sketch_free(local[p]);
        tf_redis_sketch_share_free(sh[p]);
    }
    tf_recency_sketch_free(whole);
    tf_recency_sketch_free(fresh);
    tf_recency_sketch_free(plain);
    free(st.ids);
}

static void test_convergence_server(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 4; ++seed) converge(0, seed, (int)seed + 1);
}

static void test_convergence_cluster(void **state) {
    (void)state;
    for (uint64_t seed = 11; seed <= 13; ++seed) converge(1, seed, 3);
}

/* While publishers are mid-way, a merge sees a part of the stream: no
 * answer newer than the whole stream's, none older than what was published
 * before the merge. */
static void test_partial_view(void **state) {
    (void)state;
    tf_redis_options o = suite_options(0);
    char name[32];
    fresh_name(name, sizeof name);
    stream st = make_stream(77, 6000, 500);
    tf_recency_sketch *whole = new_sketch(WIDTH, SEED, 0), *part0 = new_sketch(WIDTH, SEED, 0);
    feed(whole, &st, 0, st.n, 0, 1);
    feed(part0, &st, 0, st.n, 0, 3);
    tf_redis_sketch_share *p0 = open_share(&o, name, "p0", 0), *reader = open_share(&o, name, NULL, 0);
    OK(tf_redis_sketch_share_publish(p0, part0));
    tf_recency_sketch *seen = new_sketch(WIDTH, SEED, 0);
    OK(tf_redis_sketch_share_merge_into(reader, seen, 0, NULL, NULL));
    for (uint64_t id = 0; id < 500; ++id) {
        tu_key k = tu_make_key(0x5a, id);
        uint64_t w = 0, s = 0, q = 0;
        OK(tf_recency_sketch_query(whole, k.b, sizeof k.b, &w));
        OK(tf_recency_sketch_query(seen, k.b, sizeof k.b, &s));
        OK(tf_recency_sketch_query(part0, k.b, sizeof k.b, &q));
        assert_true(s <= w);
        assert_true(s >= q);
    }
    free(st.ids);
    tf_recency_sketch_free(whole);
    tf_recency_sketch_free(part0);
    tf_recency_sketch_free(seen);
    tf_redis_sketch_share_free(p0);
    tf_redis_sketch_share_free(reader);
}

/* ---- concurrent publishers ---- */

#define THREADS 4
typedef struct {
    const char *name;
    int part, on_cluster;
    const stream *st;
    tf_status status;
} worker;

static void *publish_worker(void *arg) {
    worker *w = arg;
    tf_redis_options o = suite_options(w->on_cluster);
    char id[16];
    snprintf(id, sizeof id, "t%d", w->part);
    tf_redis_sketch_share *sh = NULL;
    w->status = tf_redis_sketch_share_new(w->name, id, 0, &o, &sh);
    if (w->status != TF_OK) return NULL;
    tf_recency_sketch *s = NULL;
    tf_recency_sketch_new(WIDTH, DEPTH, SEED, 0, &s);
    const int rounds = 25;
    for (int r = 0; r < rounds && w->status == TF_OK; ++r) {
        const size_t from = w->st->n * (size_t)r / rounds, to = w->st->n * (size_t)(r + 1) / rounds;
        for (size_t i = from; i < to; ++i) {
            if ((int)(w->st->ids[i] % THREADS) != w->part) continue;
            tu_key k = tu_make_key(0x5a, w->st->ids[i]);
            tf_recency_sketch_update(s, k.b, sizeof k.b, (uint64_t)i + 1);
        }
        w->status = tf_redis_sketch_share_sync(sh, s);
    }
    tf_recency_sketch_free(s);
    tf_redis_sketch_share_free(sh);
    return NULL;
}

static void concurrent(int on_cluster) {
    char name[32];
    fresh_name(name, sizeof name);
    stream st = make_stream(99, 20000, 3000);
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        w[i] = (worker){name, i, on_cluster, &st, TF_OK};
        assert_int_equal(pthread_create(&t[i], NULL, publish_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i) {
        pthread_join(t[i], NULL);
        if (w[i].status != TF_OK) fail_msg("worker %d: %s", i, tf_status_string(w[i].status));
    }
    tf_redis_options o = suite_options(on_cluster);
    tf_redis_sketch_share *reader = open_share(&o, name, NULL, 0);
    tf_recency_sketch *got = new_sketch(WIDTH, SEED, 0), *whole = new_sketch(WIDTH, SEED, 0);
    size_t merged = 0;
    OK(tf_redis_sketch_share_merge_into(reader, got, 0, &merged, NULL));
    assert_int_equal(merged, THREADS);
    feed(whole, &st, 0, st.n, 0, 1);
    assert_true(same_blob(got, whole)); /* no update of any publisher lost */
    tf_recency_sketch_free(got);
    tf_recency_sketch_free(whole);
    tf_redis_sketch_share_free(reader);
    free(st.ids);
}

static void test_concurrent_publishers(void **state) {
    (void)state;
    concurrent(0);
    concurrent(1);
}

/* ---- refused entries ---- */

static void test_other_shape_or_seed_refused(void **state) {
    (void)state;
    for (int on_cluster = 0; on_cluster < 2; ++on_cluster) {
        tf_redis_options o = suite_options(on_cluster);
        tf_recency_sketch *others[3] = {new_sketch(WIDTH / 2, SEED, 0), new_sketch(WIDTH, SEED + 1, 0),
                                        new_sketch(WIDTH, SEED, TF_RECENCY_SKETCH_BLOCKED)};
        const char *what[3] = {"width 256", "seed 8", "blocked"};
        for (int k = 0; k < 3; ++k) {
            char name[32];
            fresh_name(name, sizeof name);
            tf_redis_sketch_share *good = open_share(&o, name, "good", 0), *bad = open_share(&o, name, "odd", 0);
            tf_recency_sketch *g = new_sketch(WIDTH, SEED, 0);
            stream st = make_stream(5, 1000, 100);
            feed(g, &st, 0, st.n, 0, 1);
            feed(others[k], &st, 0, st.n, 0, 1);
            OK(tf_redis_sketch_share_publish(good, g));
            OK(tf_redis_sketch_share_publish(bad, others[k]));
            tf_recency_sketch *local = new_sketch(WIDTH, SEED, 0);
            feed(local, &st, 0, 10, 0, 1);
            size_t len;
            unsigned char *before = blob_of(local, &len);
            size_t merged = 9, refused = 9;
            expect_status(tf_redis_sketch_share_merge_into(good, local, 0, &merged, &refused), TF_ERR_INCOMPATIBLE,
                          "publisher 'odd'");
            assert_string_not_equal(strstr(tf_last_error_message(), what[k]) ? "" : "missing", "missing");
            assert_non_null(strstr(tf_last_error_message(), "1 of 2 entries refused"));
            assert_int_equal(merged, 0);
            assert_int_equal(refused, 1);
            assert_unchanged(local, before, len);
            /* sync publishes nothing when its merge fails */
            tf_redis_sketch_share_stats s = TF_REDIS_SKETCH_SHARE_STATS_INIT;
            expect_status(tf_redis_sketch_share_sync(good, local), TF_ERR_INCOMPATIBLE, "odd");
            assert_unchanged(local, before, len);
            OK(tf_redis_sketch_share_get_stats(good, &s));
            assert_int_equal(s.publishes, 1);
            assert_int_equal(s.entries_refused, 2);
            assert_int_equal(s.merges, 0);
            /* skipping the refused: the compatible one merged, and counted */
            OK(tf_redis_sketch_share_merge_into(good, local, TF_REDIS_SHARE_SKIP_REFUSED, &merged, &refused));
            assert_int_equal(merged, 1);
            assert_int_equal(refused, 1);
            assert_true(same_blob(local, g));
            /* the operator removes the odd entry: merges succeed again */
            OK(tf_redis_sketch_share_remove(good, "odd"));
            OK(tf_redis_sketch_share_sync(good, local));
            tf_recency_sketch_free(g);
            tf_recency_sketch_free(local);
            tf_redis_sketch_share_free(good);
            tf_redis_sketch_share_free(bad);
            free(before);
            free(st.ids);
        }
        for (int k = 0; k < 3; ++k) tf_recency_sketch_free(others[k]);
    }
}

/* Blobs planted in Redis by someone else: each refused with its status,
 * the local sketch unchanged. */
static void test_hostile_blobs_refused(void **state) {
    (void)state;
    tf_redis_options o = suite_options(0);
    tf_recency_sketch *src = new_sketch(WIDTH, SEED, 0);
    stream st = make_stream(8, 500, 100);
    feed(src, &st, 0, st.n, 0, 1);
    size_t len;
    unsigned char *good = blob_of(src, &len);
    tf_age_bloom *bloom = NULL;
    OK(tf_age_bloom_new(4, 4, 1024, 1, 0, &bloom));
    size_t blen = 0, bw = 0;
    OK(tf_age_bloom_serialized_size(bloom, &blen));
    unsigned char *bloom_blob = malloc(blen);
    OK(tf_age_bloom_serialize(bloom, bloom_blob, blen, &bw));
    const size_t huge_len = len + (8u << 20);
    unsigned char *huge = calloc(1, huge_len);
    memcpy(huge, good, len);
    unsigned char *flipped = malloc(len);
    memcpy(flipped, good, len);
    flipped[len / 2] ^= 0x10;
    struct {
        const void *v;
        size_t n;
        tf_status want;
        const char *why;
    } cases[] = {
        {good, len / 2, TF_ERR_TRUNCATED, "truncated"},
        {good, 3, TF_ERR_TRUNCATED, "three bytes"},
        {flipped, len, TF_ERR_CHECKSUM, "bit flipped"},
        {huge, huge_len, TF_ERR_TOO_LARGE, "8 MiB more"},
        {"definitely not a sketch blob, just text that is long enough to have a header", 76, TF_ERR_BAD_MAGIC, "text"},
        {bloom_blob, bw, TF_ERR_WRONG_KIND, "another structure"},
        {"", 0, TF_ERR_TRUNCATED, "empty"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        char name[32];
        fresh_name(name, sizeof name);
        tf_redis_sketch_share *sh = open_share(&o, name, "honest", 0);
        OK(tf_redis_sketch_share_publish(sh, src));
        raw_hset(&server, name, "intruder", cases[c].v, cases[c].n);
        tf_recency_sketch *local = new_sketch(WIDTH, SEED, 0);
        feed(local, &st, 0, 5, 0, 1);
        size_t blen2;
        unsigned char *before = blob_of(local, &blen2);
        const long long t0 = rs_now_ms();
        tf_status got = tf_redis_sketch_share_merge_into(sh, local, 0, NULL, NULL);
        if (got != cases[c].want)
            fail_msg("%s: got %s (%s), want %s", cases[c].why, tf_status_string(got), tf_last_error_message(),
                     tf_status_string(cases[c].want));
        assert_non_null(strstr(tf_last_error_message(), "publisher 'intruder'"));
        assert_true(rs_now_ms() - t0 < 1000); /* the huge one is not even transferred */
        assert_unchanged(local, before, blen2);
        /* skipping it merges the honest entry */
        size_t merged = 0, refused = 0;
        OK(tf_redis_sketch_share_merge_into(sh, local, TF_REDIS_SHARE_SKIP_REFUSED, &merged, &refused));
        assert_int_equal(merged, 1);
        assert_int_equal(refused, 1);
        assert_true(same_blob(local, src));
        free(before);
        tf_recency_sketch_free(local);
        tf_redis_sketch_share_free(sh);
    }
    free(good);
    free(huge);
    free(flipped);
    free(bloom_blob);
    free(st.ids);
    tf_age_bloom_free(bloom);
    tf_recency_sketch_free(src);
}

/* ---- expiry ---- */

static void test_entry_expiry(void **state) {
    (void)state;
    tf_redis_options o = suite_options(0);
    char name[32];
    fresh_name(name, sizeof name);
    tf_recency_sketch *a = new_sketch(WIDTH, SEED, 0), *b = new_sketch(WIDTH, SEED, 0);
    stream st = make_stream(3, 300, 100);
    feed(a, &st, 0, 150, 0, 1);
    feed(b, &st, 150, 300, 0, 1);
    tf_redis_sketch_share *brief = open_share(&o, name, "brief", 300), *reader = open_share(&o, name, NULL, 0);
    OK(tf_redis_sketch_share_publish(brief, a));
    const long long ttl = raw_pttl(&server, name, 'b');
    assert_true(ttl > 0 && ttl <= 300); /* the keys go with their only entry */
    size_t merged = 0;
    tf_recency_sketch *x = new_sketch(WIDTH, SEED, 0);
    OK(tf_redis_sketch_share_merge_into(reader, x, 0, &merged, NULL));
    assert_int_equal(merged, 1);
    /* a publisher whose entry never expires keeps the keys */
    tf_redis_sketch_share *forever = open_share(&o, name, "forever", 0);
    OK(tf_redis_sketch_share_publish(forever, b));
    assert_int_equal(raw_pttl(&server, name, 'b'), -1);
    assert_int_equal(raw_pttl(&server, name, 't'), -1);
    rs_sleep_ms(450);
    tf_recency_sketch *y = new_sketch(WIDTH, SEED, 0);
    OK(tf_redis_sketch_share_merge_into(reader, y, 0, &merged, NULL));
    assert_int_equal(merged, 1); /* "brief" went away */
    assert_true(same_blob(y, b));
    tf_redis_sketch_share_stats s = TF_REDIS_SKETCH_SHARE_STATS_INIT;
    OK(tf_redis_sketch_share_get_stats(reader, &s));
    assert_int_equal(s.expired, 1);
    /* a publisher that comes back refreshes its entry */
    OK(tf_redis_sketch_share_publish(brief, a));
    OK(tf_redis_sketch_share_merge_into(reader, y, 0, &merged, NULL));
    assert_int_equal(merged, 2);
    /* the keys keep no expiry once an entry that never expires was
     * published, even after it is removed (redis.h, "Expiry") */
    OK(tf_redis_sketch_share_remove(reader, "forever"));
    OK(tf_redis_sketch_share_publish(brief, a));
    assert_int_equal(raw_pttl(&server, name, 'b'), -1);
    assert_int_equal(raw_pttl(&server, name, 't'), -1);
    free(st.ids);
    tf_recency_sketch_free(a);
    tf_recency_sketch_free(b);
    tf_recency_sketch_free(x);
    tf_recency_sketch_free(y);
    tf_redis_sketch_share_free(brief);
    tf_redis_sketch_share_free(forever);
    tf_redis_sketch_share_free(reader);
}

/* ---- failures ---- */

static void test_server_down(void **state) {
    (void)state;
    rs_server s;
    assert_int_equal(rs_start(&s), 0);
    tf_redis_options o = options_on(&s, 0);
    o.connect_timeout_ms = o.command_timeout_ms = 300;
    o.reconnect_min_ms = o.reconnect_max_ms = 1;
    tf_redis_sketch_share *sh = open_share(&o, "down", "p", 0);
    tf_recency_sketch *a = new_sketch(WIDTH, SEED, 0), *local = new_sketch(WIDTH, SEED, 0);
    stream st = make_stream(4, 400, 100);
    feed(a, &st, 0, st.n, 0, 1);
    OK(tf_redis_sketch_share_publish(sh, a));
    feed(local, &st, 0, 7, 0, 1);
    size_t len;
    unsigned char *before = blob_of(local, &len);
    /* paused: every call times out within the timeout, nothing changes */
    rs_pause(&s);
    long long t0 = rs_now_ms();
    expect_status(tf_redis_sketch_share_merge_into(sh, local, 0, NULL, NULL), TF_ERR_TIMEOUT, "did not answer");
    assert_true(rs_now_ms() - t0 < 1000);
    assert_unchanged(local, before, len);
    rs_sleep_ms(5);
    t0 = rs_now_ms();
    expect_status(tf_redis_sketch_share_sync(sh, local), TF_ERR_TIMEOUT, NULL);
    assert_true(rs_now_ms() - t0 < 1000);
    assert_unchanged(local, before, len);
    rs_sleep_ms(5);
    expect_status(tf_redis_sketch_share_publish(sh, local), TF_ERR_TIMEOUT, NULL);
    rs_resume(&s);
    /* killed: unavailable at once */
    rs_kill(&s);
    rs_sleep_ms(5);
    t0 = rs_now_ms();
    expect_status(tf_redis_sketch_share_merge_into(sh, local, 0, NULL, NULL), TF_ERR_UNAVAILABLE, "unavailable");
    assert_true(rs_now_ms() - t0 < 1000);
    assert_unchanged(local, before, len);
    rs_sleep_ms(5);
    expect_status(tf_redis_sketch_share_publish(sh, local), TF_ERR_UNAVAILABLE, NULL);
    rs_sleep_ms(5);
    expect_status(tf_redis_sketch_share_remove(sh, "p"), TF_ERR_UNAVAILABLE, NULL);
    tf_redis_sketch_share_stats stats = TF_REDIS_SKETCH_SHARE_STATS_INIT;
    OK(tf_redis_sketch_share_get_stats(sh, &stats));
    assert_int_equal(stats.timeouts, 3);
    assert_int_equal(stats.unavailable, 3);
    assert_int_equal(stats.merges, 0);
    assert_int_equal(stats.publishes, 1);
    /* restarted (an empty server: the entry was in memory only): the
     * share reconnects and loads its script again by itself */
    assert_int_equal(rs_restart(&s), 0);
    rs_sleep_ms(5);
    OK(tf_redis_sketch_share_sync(sh, local));
    OK(tf_redis_sketch_share_get_stats(sh, &stats));
    assert_true(stats.reconnects >= 1);
    assert_unchanged(local, before, len); /* the restarted server had no entry */
    tf_recency_sketch *x = new_sketch(WIDTH, SEED, 0);
    OK(tf_redis_sketch_share_merge_into(sh, x, 0, NULL, NULL));
    assert_true(same_blob(x, local));
    free(before);
    free(st.ids);
    tf_recency_sketch_free(a);
    tf_recency_sketch_free(local);
    tf_recency_sketch_free(x);
    tf_redis_sketch_share_free(sh);
    rs_stop(&s);
    /* no server at all: creation fails with a status */
    tf_redis_options none = TF_REDIS_OPTIONS_INIT;
    none.port = (uint32_t)rs_free_port();
    none.connect_timeout_ms = 300;
    tf_redis_sketch_share *never = NULL;
    expect_status(tf_redis_sketch_share_new("x", "p", 0, &none, &never), TF_ERR_UNAVAILABLE, NULL);
    assert_null(never);
}

/* ---- bad input ---- */

static void test_bad_input(void **state) {
    (void)state;
    tf_redis_options o = suite_options(0);
    tf_redis_sketch_share *sh = NULL;
    char long_id[300];
    memset(long_id, 'x', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    expect_status(tf_redis_sketch_share_new("n", "p", 0, &o, NULL), TF_ERR_NULL, "out");
    expect_status(tf_redis_sketch_share_new(NULL, "p", 0, &o, &sh), TF_ERR_NULL, "name");
    expect_status(tf_redis_sketch_share_new("", "p", 0, &o, &sh), TF_ERR_INVALID_ARGUMENT, "name is empty");
    expect_status(tf_redis_sketch_share_new(long_id, "p", 0, &o, &sh), TF_ERR_INVALID_ARGUMENT, "name is longer");
    expect_status(tf_redis_sketch_share_new("a{b", "p", 0, &o, &sh), TF_ERR_INVALID_ARGUMENT, "'{'");
    expect_status(tf_redis_sketch_share_new("a}b", "p", 0, &o, &sh), TF_ERR_INVALID_ARGUMENT, "'}'");
    expect_status(tf_redis_sketch_share_new("n", "", 0, &o, &sh), TF_ERR_INVALID_ARGUMENT, "publisher is empty");
    expect_status(tf_redis_sketch_share_new("n", long_id, 0, &o, &sh), TF_ERR_INVALID_ARGUMENT, "publisher is longer");
    expect_status(tf_redis_sketch_share_new("n", "p", TF_REDIS_SHARE_MAX_TTL_MS + 1, &o, &sh), TF_ERR_INVALID_ARGUMENT,
                  "entry_ttl_ms");
    tf_redis_options bad = o;
    bad.port = 0;
    expect_status(tf_redis_sketch_share_new("n", "p", 0, &bad, &sh), TF_ERR_INVALID_ARGUMENT, "port");
    bad = o;
    bad.size = 3;
    expect_status(tf_redis_sketch_share_new("n", "p", 0, &bad, &sh), TF_ERR_INVALID_ARGUMENT, "size");
    bad = o;
    bad.cluster_seeds = "nonsense";
    bad.mode = TF_REDIS_MODE_CLUSTER;
    expect_status(tf_redis_sketch_share_new("n", "p", 0, &bad, &sh), TF_ERR_INVALID_ARGUMENT, "cluster_seeds");
    assert_null(sh);
    tf_redis_sketch_share_free(NULL);

    char name[32];
    fresh_name(name, sizeof name);
    sh = open_share(&o, name, "p", 0);
    tf_redis_sketch_share *reader = open_share(&o, name, NULL, 0);
    tf_recency_sketch *s = new_sketch(WIDTH, SEED, 0);
    size_t merged = 7, refused = 7;
    expect_status(tf_redis_sketch_share_publish(NULL, s), TF_ERR_NULL, "share");
    expect_status(tf_redis_sketch_share_publish(sh, NULL), TF_ERR_NULL, "sketch");
    expect_status(tf_redis_sketch_share_publish(reader, s), TF_ERR_INVALID_ARGUMENT, "no publisher id");
    expect_status(tf_redis_sketch_share_merge_into(NULL, s, 0, &merged, &refused), TF_ERR_NULL, "share");
    expect_status(tf_redis_sketch_share_merge_into(sh, NULL, 0, &merged, &refused), TF_ERR_NULL, "sketch");
    expect_status(tf_redis_sketch_share_merge_into(sh, s, 0x2u, &merged, &refused), TF_ERR_INVALID_ARGUMENT, "flags");
    assert_int_equal(merged, 7);
    assert_int_equal(refused, 7);
    expect_status(tf_redis_sketch_share_sync(NULL, s), TF_ERR_NULL, "share");
    expect_status(tf_redis_sketch_share_sync(sh, NULL), TF_ERR_NULL, "sketch");
    expect_status(tf_redis_sketch_share_sync(reader, s), TF_ERR_INVALID_ARGUMENT, "no publisher id");
    expect_status(tf_redis_sketch_share_remove(NULL, "p"), TF_ERR_NULL, "share");
    expect_status(tf_redis_sketch_share_remove(sh, NULL), TF_ERR_NULL, "publisher");
    expect_status(tf_redis_sketch_share_remove(sh, ""), TF_ERR_INVALID_ARGUMENT, "publisher is empty");
    expect_status(tf_redis_sketch_share_remove(sh, long_id), TF_ERR_INVALID_ARGUMENT, "publisher is longer");
    tf_redis_sketch_share_stats stats = TF_REDIS_SKETCH_SHARE_STATS_INIT;
    expect_status(tf_redis_sketch_share_get_stats(NULL, &stats), TF_ERR_NULL, "share");
    expect_status(tf_redis_sketch_share_get_stats(sh, NULL), TF_ERR_NULL, "stats");
    stats.size = 1;
    expect_status(tf_redis_sketch_share_get_stats(sh, &stats), TF_ERR_INVALID_ARGUMENT, "size");
    /* a reader reads; nothing above published anything */
    OK(tf_redis_sketch_share_merge_into(reader, s, 0, &merged, &refused));
    assert_int_equal(merged, 0);
    tf_recency_sketch_free(s);
    tf_redis_sketch_share_free(sh);
    tf_redis_sketch_share_free(reader);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_server),
        cmocka_unit_test(test_round_trip_cluster),
        cmocka_unit_test(test_convergence_server),
        cmocka_unit_test(test_convergence_cluster),
        cmocka_unit_test(test_partial_view),
        cmocka_unit_test(test_concurrent_publishers),
        cmocka_unit_test(test_other_shape_or_seed_refused),
        cmocka_unit_test(test_hostile_blobs_refused),
        cmocka_unit_test(test_entry_expiry),
        cmocka_unit_test(test_server_down),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
