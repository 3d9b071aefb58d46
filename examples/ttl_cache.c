/*
 * ttl_cache.c - a RecencySketch as a TTL prefilter in front of a cache.
 *
 * A service keeps items in a cache with a time-to-live per item. Before it
 * looks an item up, it asks a small RecencySketch whether the item may still
 * be live. The sketch stores each item's expiry time (insert time + TTL):
 *
 *   - "certainly expired or never cached" (0) is never wrong, so the service
 *     skips the cache lookup and goes straight to the origin;
 *   - "maybe live" (1) is sometimes wrong (another item with a later expiry
 *     shares all of the item's cells): then the lookup is simply wasted.
 *
 * The program replays 300,000 requests for 20,000 items with skewed
 * popularity and per-item TTLs of 2 to 8 seconds, counts the cache lookups
 * the prefilter avoids, and checks, by asking the cache anyway, that it never
 * skips an entry that is still live.
 *
 * Build: cc -std=c99 ttl_cache.c $(pkg-config --cflags --libs temporalfilters)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <temporalfilters.h>

#define ITEMS 20000u
#define REQUESTS 300000u
#define REQUESTS_PER_MS 1u
#define KEY_MAX 24

/* ---- a small cache: chained hash table of entries with an expiry time ---- */

#define CACHE_BUCKETS 16384u /* a power of two */

struct entry {
    struct entry *next;
    char key[KEY_MAX];
    size_t key_len;
    uint64_t expires_at; /* live while now < expires_at */
    long value;
};

struct cache {
    struct entry *buckets[CACHE_BUCKETS];
    unsigned long entries;
};

static uint32_t fnv1a(const char *key, size_t len) {
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < len; ++i) h = (h ^ (unsigned char)key[i]) * 16777619u;
    return h;
}

static struct entry *cache_find(struct cache *c, const char *key, size_t len) {
    struct entry *e = c->buckets[fnv1a(key, len) & (CACHE_BUCKETS - 1)];
    for (; e != NULL; e = e->next)
        if (e->key_len == len && memcmp(e->key, key, len) == 0) return e;
    return NULL;
}

/* Returns 1 and the value when `key` has a live entry at `now`. */
static int cache_get(struct cache *c, const char *key, size_t len, uint64_t now, long *value) {
    struct entry *e = cache_find(c, key, len);
    if (e == NULL || now >= e->expires_at) return 0;
    *value = e->value;
    return 1;
}

/* Stores `value` under `key` until now + ttl. Returns 0 when out of memory. */
static int cache_put(struct cache *c, const char *key, size_t len, long value, uint64_t now, uint64_t ttl) {
    struct entry *e = cache_find(c, key, len);
    if (e == NULL) {
        uint32_t b = fnv1a(key, len) & (CACHE_BUCKETS - 1);
        e = malloc(sizeof *e);
        if (e == NULL) return 0;
        memcpy(e->key, key, len);
        e->key_len = len;
        e->next = c->buckets[b];
        c->buckets[b] = e;
        c->entries++;
    }
    e->value = value;
    e->expires_at = now + ttl;
    return 1;
}

static void cache_destroy(struct cache *c) {
    unsigned b;
    for (b = 0; b < CACHE_BUCKETS; ++b) {
        struct entry *e = c->buckets[b];
        while (e != NULL) {
            struct entry *next = e->next;
            free(e);
            e = next;
        }
        c->buckets[b] = NULL;
    }
    c->entries = 0;
}

/* ---- the workload ---- */

/* xorshift64*: a small deterministic generator. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double next_uniform(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* Skewed popularity: low item numbers are requested much more often. */
static unsigned pick_item(void) {
    double u = next_uniform();
    return (unsigned)((double)ITEMS * u * u * u);
}

/* The "origin": slow in real life, a formula here. */
static long fetch_from_origin(unsigned item) { return (long)item * 7 + 3; }

/* Each item has its own TTL, 2 to 8 seconds; the sketch encodes it. */
static uint64_t ttl_of(unsigned item) { return 2000u + (item % 4u) * 2000u; }

static int ok(tf_status status, const char *what) {
    if (status == TF_OK) return 1;
    fprintf(stderr, "ttl_cache: %s failed: %s: %s\n", what, tf_status_string(status), tf_last_error_message());
    return 0;
}

static double percent(unsigned long part, unsigned long whole) {
    return whole == 0 ? 0.0 : 100.0 * (double)part / (double)whole;
}

int main(void) {
    static struct cache cache; /* zero-initialized: all buckets empty */
    tf_recency_sketch *prefilter = NULL;
    unsigned long skipped = 0, probed = 0, hits = 0, wasted = 0, fetches = 0;
    unsigned long live_skipped = 0; /* the prefilter's promise: must stay 0 */
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    size_t memory = 0;
    int exit_code = EXIT_FAILURE;
    unsigned r;

    /*
     * Size the prefilter for the number of distinct items inserted within
     * one TTL: at most 8,000 requests arrive in the longest TTL (8 s), so at
     * most 8,000 items. With that many, an expired item reads "maybe live"
     * with probability at most 1%.
     */
    if (!ok(tf_recency_sketch_new_for(8000, 0.01, 7u, 0u, &prefilter), "tf_recency_sketch_new_for") ||
        !ok(tf_recency_sketch_get_info(prefilter, &info), "tf_recency_sketch_get_info") ||
        !ok(tf_recency_sketch_memory(prefilter, &memory), "tf_recency_sketch_memory"))
        goto done;

    printf("libtemporalfilters %s: TTL prefilter example\n", tf_version_string());
    printf("prefilter: %llu x %u cells, %zu bytes; %u items, %u requests, TTL 2-8 s\n\n",
           (unsigned long long)info.width, (unsigned)info.depth, memory, ITEMS, REQUESTS);

    for (r = 0; r < REQUESTS; ++r) {
        const uint64_t now = 1 + r / REQUESTS_PER_MS; /* milliseconds; never 0 */
        const unsigned item = pick_item();
        char key[KEY_MAX];
        const int n = snprintf(key, sizeof key, "item:%u", item);
        const size_t len = (size_t)n;
        int maybe_live = 0;
        long value = 0;

        if (!ok(tf_recency_sketch_ttl_maybe_live(prefilter, key, len, now, &maybe_live, NULL),
                "tf_recency_sketch_ttl_maybe_live"))
            goto done;

        if (maybe_live) {
            probed++;
            if (cache_get(&cache, key, len, now, &value)) {
                hits++;
                continue;
            }
            wasted++; /* the prefilter could not rule it out, the cache had nothing live */
        } else {
            skipped++;
            /* Not part of a real service: ask the cache anyway to prove the
             * prefilter right. A skipped entry that is live would be a bug. */
            if (cache_get(&cache, key, len, now, &value)) live_skipped++;
        }

        /* Miss: fetch, store in the cache, and record the expiry in the prefilter. */
        value = fetch_from_origin(item);
        fetches++;
        if (!cache_put(&cache, key, len, value, now, ttl_of(item))) {
            fprintf(stderr, "ttl_cache: out of memory\n");
            goto done;
        }
        if (!ok(tf_recency_sketch_ttl_insert(prefilter, key, len, now, ttl_of(item)), "tf_recency_sketch_ttl_insert"))
            goto done;
    }

    printf("  requests                           %8u\n", REQUESTS);
    printf("  cache hits                         %8lu  (%5.1f%%)\n", hits, percent(hits, REQUESTS));
    printf("  misses (fetched from origin)       %8lu  (%5.1f%%)\n", fetches, percent(fetches, REQUESTS));
    printf("  cache lookups made                 %8lu\n", probed);
    printf("  cache lookups avoided by prefilter %8lu  (%5.1f%% of all requests, %6.2f%% of misses)\n", skipped,
           percent(skipped, REQUESTS), percent(skipped, fetches));
    printf("  lookups wasted (maybe live, miss)  %8lu  (%5.2f%% of misses)\n", wasted, percent(wasted, fetches));
    printf("  live entries skipped by prefilter  %8lu  (must be 0)\n", live_skipped);
    printf("  cache entries at the end           %8lu\n", cache.entries);
    exit_code = live_skipped == 0 ? EXIT_SUCCESS : EXIT_FAILURE;

done:
    cache_destroy(&cache);
    tf_recency_sketch_free(prefilter);
    return exit_code;
}
