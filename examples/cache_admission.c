/*
 * cache_admission.c - a cache-admission rule with a recency window: an
 * object enters the cache only when it was asked for within the last K
 * requests.
 *
 * A CDN node sees a request trace where a few objects are popular and most
 * are asked for once ("one-hit wonders"). Admitting every miss fills the
 * cache with objects never asked for again. The rule here admits an object
 * on a miss only when it was requested within the last K requests before
 * this one: one tf_recency_window_insert_report() per request answers the
 * object's previous recency (requests since its last request) and records
 * this one, in a few bytes per request of the window, whatever the size of
 * the keys.
 *
 * The answer e is within (1 + eps) of the true recency r: e <= r <= (1 +
 * eps) e. So every object asked for within the last K requests is admitted
 * (e <= r < K: no wrong refusal), and an object last asked for r >= K
 * requests ago is admitted only when r < (1 + eps) K: the rule behaves as
 * if K were at most (1 + eps) K. The program replays a synthetic trace
 * (a Zipf-like catalogue plus a stream of one-hit wonders), applies the
 * rule with the window and with an exact record side by side, and exits
 * with status 1 if the window ever refused an object the exact rule
 * admits, or admitted one asked for (1 + eps) K or more requests ago.
 *
 * Build: cc -std=c99 cache_admission.c $(pkg-config --cflags --libs temporalfilters) -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <temporalfilters.h>

#define REQUESTS 400000u
#define CATALOGUE 50000u /* popular objects */
#define K 20000u         /* admit when asked for within the last K requests */
#define INV_EPS 16u      /* answers within (1 + 1/16) */
#define NEVER UINT64_MAX

static uint64_t rng_state = 42;
static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Object i of the catalogue with a Zipf-like (1/rank) popularity, drawn by
 * inverting the harmonic CDF approximately: rank = CATALOGUE^u. */
static uint32_t popular_object(void) {
    const double u = (double)(rng_next() >> 11) / 9007199254740992.0;
    uint32_t rank = (uint32_t)pow((double)CATALOGUE, u);
    return rank >= CATALOGUE ? CATALOGUE - 1 : rank;
}

static int fail(const char *what, tf_status st) {
    fprintf(stderr, "%s failed: %s (%s)\n", what, tf_status_string(st), tf_last_error_message());
    return 1;
}

int main(void) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.window = K; /* answers beyond K are not needed: "not in the window" refuses */
    o.inv_eps = INV_EPS;
    tf_recency_window *w = NULL;
    tf_status st = tf_recency_window_new(&o, &w);
    if (st != TF_OK) return fail("tf_recency_window_new", st);

    /* the exact record: last request index per object (the catalogue, then
     * one id per one-hit wonder) */
    const uint64_t objects = (uint64_t)CATALOGUE + REQUESTS;
    uint64_t *last = malloc(objects * sizeof *last);
    if (last == NULL) return fail("malloc", TF_ERR_OUT_OF_MEMORY);
    for (uint64_t i = 0; i < objects; ++i) last[i] = NEVER;

    uint64_t admitted = 0, exact_admitted = 0, wrong_refusals = 0, beyond_bound = 0, extra = 0;
    uint64_t next_wonder = CATALOGUE;
    const double eps = 1.0 / INV_EPS;
    for (uint64_t i = 0; i < REQUESTS; ++i) {
        /* 70% of the requests go to the catalogue, 30% are one-hit wonders */
        const uint64_t obj = rng_next() % 10 < 7 ? popular_object() : next_wonder++;
        char key[32];
        const int len = snprintf(key, sizeof key, "/objects/%llu", (unsigned long long)obj);
        uint64_t e = 0;
        st = tf_recency_window_insert_report(w, key, (size_t)len, &e);
        if (st != TF_OK) return fail("tf_recency_window_insert_report", st);
        const uint64_t r = last[obj] == NEVER ? NEVER : i - 1 - last[obj];
        last[obj] = i;

        const int admit = e != TF_RECENCY_WINDOW_NOT_IN_WINDOW && e < K;
        const int exact = r != NEVER && r < K;
        admitted += (uint64_t)admit;
        exact_admitted += (uint64_t)exact;
        if (exact && !admit) wrong_refusals++;
        if (admit && !exact) {
            extra++; /* asked for K or more requests ago, within the error */
            if (r == NEVER || (double)r >= (1.0 + eps) * K) beyond_bound++;
        }
    }

    tf_recency_window_stats stats = TF_RECENCY_WINDOW_STATS_INIT;
    st = tf_recency_window_get_stats(w, &stats);
    if (st != TF_OK) return fail("tf_recency_window_get_stats", st);
    printf("requests:            %u (%llu one-hit wonders)\n", REQUESTS, (unsigned long long)(next_wonder - CATALOGUE));
    printf("rule:                admit when asked for within the last %u requests (eps = 1/%u)\n", K, INV_EPS);
    printf("admitted (window):   %llu\n", (unsigned long long)admitted);
    printf("admitted (exact):    %llu\n", (unsigned long long)exact_admitted);
    printf("extra admissions:    %llu (asked for K to (1 + eps) K requests ago)\n", (unsigned long long)extra);
    printf("wrong refusals:      %llu (must be 0)\n", (unsigned long long)wrong_refusals);
    printf("beyond (1 + eps) K:  %llu (must be 0)\n", (unsigned long long)beyond_bound);
    printf("memory:              %llu bytes, %.1f bits per request of the window\n", (unsigned long long)stats.memory,
           stats.bits_per_window_item);
    free(last);
    tf_recency_window_free(w);
    return wrong_refusals == 0 && beyond_bound == 0 ? 0 : 1;
}
