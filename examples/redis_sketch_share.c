/*
 * redis_sketch_share.c - three processes share one RecencySketch through Redis.
 *
 * A stream of page views ("user-N" at time T) is split among three worker
 * processes: each sees every third event. Each keeps its own RecencySketch
 * and, after every slice of the stream, calls tf_redis_sketch_share_sync():
 * merge every worker's published sketch into its own, then publish the
 * result under its own entry of the shared name. Once all three have
 * published their last slice, one more merge gives each of them the very
 * sketch a single process would have built from the whole stream: the same
 * answers, byte for byte the same blob. The workers check that, and print
 * a few answers beside the whole stream's.
 *
 * Cell-wise maximum is a join (commutative, associative, idempotent), so
 * the order in which the workers sync does not matter, and merging an
 * entry twice changes nothing (docs/sketch-sharing.md).
 *
 * Usage: redis_sketch_share [HOST] PORT   (a running redis-server)
 *
 * Build: cc -std=c99 redis_sketch_share.c \
 *          $(pkg-config --cflags --libs temporalfilters-redis)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <temporalfilters.h>
#include <temporalfilters/redis.h>

#define WORKERS 3
#define EVENTS 30000u
#define USERS 5000u
#define SLICES 4u
#define WIDTH 8192u
#define DEPTH 4u
#define SEED 42u

static const char *host = "127.0.0.1";
static unsigned port;
static char name[64];

/* Event i of the stream: a user id (a fixed pseudo-random sequence) at time i + 1. */
static unsigned user_of(unsigned i) { return (unsigned)(((uint64_t)i * 2654435761u + 12345u) % 7919u % USERS); }

static int key_of(unsigned user, char *buf, size_t cap) { return snprintf(buf, cap, "user-%u", user); }

static tf_recency_sketch *new_sketch(void) {
    tf_recency_sketch *s = NULL;
    if (tf_recency_sketch_new(WIDTH, DEPTH, SEED, 0, &s) != TF_OK) {
        fprintf(stderr, "tf_recency_sketch_new: %s\n", tf_last_error_message());
        exit(1);
    }
    return s;
}

/* Feeds events [from, to) of the stream whose index is `worker` modulo
 * WORKERS (every event when worker < 0). */
static void feed(tf_recency_sketch *s, unsigned from, unsigned to, int worker) {
    char key[32];
    for (unsigned i = from; i < to; ++i) {
        if (worker >= 0 && i % WORKERS != (unsigned)worker) continue;
        const int n = key_of(user_of(i), key, sizeof key);
        tf_recency_sketch_update(s, key, (size_t)n, (uint64_t)i + 1);
    }
}

static unsigned char *blob_of(const tf_recency_sketch *s, size_t *len) {
    tf_recency_sketch_serialized_size(s, len);
    unsigned char *b = malloc(*len);
    size_t written = 0;
    if (!b || tf_recency_sketch_serialize(s, b, *len, &written) != TF_OK) exit(1);
    return b;
}

static int check(tf_status st, const char *what, int worker) {
    if (st == TF_OK) return 1;
    fprintf(stderr, "worker %d: %s: %s: %s\n", worker, what, tf_status_string(st), tf_last_error_message());
    return 0;
}

/* One worker process: its third of the stream, a sync after each slice;
 * then it tells the parent (done) and waits for the go (every worker has
 * published its last slice) before its final merge. */
static int worker(int w, int done_fd, int go_fd) {
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    o.host = host;
    o.port = port;
    char id[16];
    snprintf(id, sizeof id, "worker-%d", w);
    tf_redis_sketch_share *share = NULL;
    /* a worker that dies leaves its entry for 10 minutes at most */
    if (!check(tf_redis_sketch_share_new(name, id, 600000, &o, &share), "open", w)) return 1;
    tf_recency_sketch *mine = new_sketch();
    for (unsigned slice = 0; slice < SLICES; ++slice) {
        feed(mine, EVENTS * slice / SLICES, EVENTS * (slice + 1) / SLICES, w);
        if (!check(tf_redis_sketch_share_sync(share, mine), "sync", w)) return 1;
    }
    char byte = 'd';
    if (write(done_fd, &byte, 1) != 1 || read(go_fd, &byte, 1) != 1) return 1;
    size_t merged = 0;
    if (!check(tf_redis_sketch_share_merge_into(share, mine, 0, &merged, NULL), "merge", w)) return 1;

    /* one sketch that saw the whole stream, to compare with */
    tf_recency_sketch *whole = new_sketch();
    feed(whole, 0, EVENTS, -1);
    size_t la, lb;
    unsigned char *a = blob_of(mine, &la), *b = blob_of(whole, &lb);
    const int same = la == lb && memcmp(a, b, la) == 0;
    unsigned mismatches = 0;
    char key[32];
    for (unsigned u = 0; u < USERS; ++u) {
        const int n = key_of(u, key, sizeof key);
        uint64_t x = 0, y = 0;
        tf_recency_sketch_query(mine, key, (size_t)n, &x);
        tf_recency_sketch_query(whole, key, (size_t)n, &y);
        if (x != y) ++mismatches;
    }
    const unsigned shown[3] = {7u, 1234u, 4999u};
    for (int i = 0; i < 3; ++i) {
        const int n = key_of(shown[i], key, sizeof key);
        uint64_t x = 0, y = 0;
        tf_recency_sketch_query(mine, key, (size_t)n, &x);
        tf_recency_sketch_query(whole, key, (size_t)n, &y);
        printf("worker %d: %-9s last seen at %5llu (one sketch of the whole stream: %5llu)\n", w, key,
               (unsigned long long)x, (unsigned long long)y);
    }
    printf("worker %d: merged %zu entries; %u of %u users answered differently; blob %s the whole stream's\n", w,
           merged, mismatches, USERS, same ? "equals" : "DIFFERS FROM");
    fflush(stdout);
    free(a);
    free(b);
    tf_recency_sketch_free(whole);
    tf_recency_sketch_free(mine);
    tf_redis_sketch_share_free(share);
    return same && mismatches == 0 && merged == WORKERS ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s [HOST] PORT\n", argv[0]);
        return 2;
    }
    if (argc == 3) host = argv[1];
    port = (unsigned)strtoul(argv[argc - 1], NULL, 10);
    snprintf(name, sizeof name, "example-%ld", (long)getpid());
    int done[2], go[2];
    if (pipe(done) != 0 || pipe(go) != 0) return 1;
    pid_t pids[WORKERS];
    fflush(stdout);
    for (int w = 0; w < WORKERS; ++w) {
        pids[w] = fork();
        if (pids[w] < 0) return 1;
        if (pids[w] == 0) _exit(worker(w, done[1], go[0]));
    }
    /* every worker has published its last slice: let them merge */
    char byte;
    int ready = 0;
    while (ready < WORKERS && read(done[0], &byte, 1) == 1) ++ready;
    for (int w = 0; w < WORKERS; ++w)
        if (write(go[1], "g", 1) != 1) return 1;
    int failed = ready != WORKERS;
    for (int w = 0; w < WORKERS; ++w) {
        int status = 0;
        if (waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    }
    /* the workers are gone for good: remove their entries */
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    o.host = host;
    o.port = port;
    tf_redis_sketch_share *share = NULL;
    if (tf_redis_sketch_share_new(name, NULL, 0, &o, &share) == TF_OK) {
        char id[16];
        for (int w = 0; w < WORKERS; ++w) {
            snprintf(id, sizeof id, "worker-%d", w);
            tf_redis_sketch_share_remove(share, id);
        }
        tf_redis_sketch_share_free(share);
    }
    printf(failed ? "the workers did not converge\n"
                  : "%d processes, each seeing a third of the stream, answer as one sketch of all of it\n",
           WORKERS);
    return failed;
}
