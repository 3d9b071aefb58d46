/*
 * event_dedup.c - exactly-once-ish event processing with a rotating cuckoo
 * filter: a redelivered event is skipped.
 *
 * A consumer reads events from an at-least-once queue: after a timeout or a
 * crash the queue delivers some events again, up to a few minutes later.
 * Processing an event twice (charging a card twice) is the failure to
 * avoid; skipping an event that was never processed is worse still (a
 * payment lost). The consumer keeps one tf_rotating_cuckoo of the event IDs
 * it processed within the last 10 minutes and asks
 * tf_rotating_cuckoo_add_if_absent() for every delivery:
 *
 *   - "present" (1): the event was processed; the delivery is skipped. A
 *     wrong "present" (a false positive) would skip a new event: its
 *     probability is below 2^-48 per delivery (about 2^-55 with the defaults);
 *   - "absent" (0): the event is processed and its ID remembered. A wrong
 *     "absent" (a false negative) only repeats an event, and happens only
 *     when the memory cap forced the filter to drop a table early: the
 *     filter counts every such key (stats.forgotten_memory).
 *
 * The program replays 30 simulated minutes (a steady stream with 5% of the
 * events redelivered within 5 minutes, and a consumer restart that saves
 * and restores the filter) and judges every decision against an exact
 * record. It exits with status 1 if a new event was ever skipped, or if a
 * redelivery was processed again while the filter reports no early loss.
 *
 * Build: cc -std=c99 event_dedup.c $(pkg-config --cflags --libs temporalfilters)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <temporalfilters.h>

#define TTL_MS 600000u       /* IDs remembered for 10 minutes */
#define REDELIVER_MS 300000u /* a redelivery comes within 5 minutes */
#define EVENTS_PER_SEC 200u
#define MINUTES 30u
#define T0 1700000000000ull

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static void check(tf_status st, const char *what) {
    if (st != TF_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, tf_status_string(st), tf_last_error_message());
        exit(1);
    }
}

/* A pending redelivery: event `id`, due at `due`. */
typedef struct {
    uint64_t id, due;
} redelivery;

int main(void) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.ttl = TTL_MS;
    o.max_memory = (uint64_t)16 << 20; /* 16 MiB: room for 10 minutes of IDs */
    tf_rotating_cuckoo *seen = NULL;
    check(tf_rotating_cuckoo_new(&o, &seen), "tf_rotating_cuckoo_new");

    const uint64_t total = (uint64_t)EVENTS_PER_SEC * 60u * MINUTES;
    redelivery *pending = malloc(sizeof *pending * (size_t)total);
    uint64_t *processed_at = calloc((size_t)total, sizeof *processed_at); /* exact record: 0 = never */
    if (pending == NULL || processed_at == NULL) return 1;
    size_t npending = 0, head = 0;
    uint64_t processed = 0, skipped = 0, repeated = 0, wrongly_skipped = 0;

    for (uint64_t i = 0; i < total; ++i) {
        const uint64_t now = T0 + i * 1000u / EVENTS_PER_SEC;
        /* the consumer restarts after 15 minutes: the filter is saved and restored */
        if (i == total / 2) {
            size_t len = 0, written = 0;
            check(tf_rotating_cuckoo_serialized_size(seen, &len), "serialized_size");
            unsigned char *blob = malloc(len);
            if (blob == NULL) return 1;
            check(tf_rotating_cuckoo_serialize(seen, blob, len, &written), "serialize");
            tf_rotating_cuckoo_free(seen);
            seen = NULL;
            check(tf_rotating_cuckoo_deserialize(blob, written, NULL, &seen), "deserialize");
            free(blob);
            printf("restart at %llu s: the filter was saved (%zu bytes) and restored\n",
                   (unsigned long long)(i / EVENTS_PER_SEC), written);
        }
        /* deliveries due now: redeliveries first, then the next new event */
        uint64_t batch[2];
        size_t n = 0;
        if (head < npending && pending[head].due <= now) batch[n++] = pending[head++].id;
        batch[n++] = i;
        for (size_t b = 0; b < n; ++b) {
            const uint64_t id = batch[b];
            char key[32];
            const int len = snprintf(key, sizeof key, "event-%llu", (unsigned long long)id);
            int was_present = 0;
            check(tf_rotating_cuckoo_add_if_absent(seen, key, (size_t)len, now, &was_present), "add_if_absent");
            if (was_present) {
                skipped++;
                if (processed_at[id] == 0) wrongly_skipped++; /* a false positive: an event lost */
            } else {
                if (processed_at[id] != 0) repeated++; /* processed twice */
                processed_at[id] = now;
                processed++;
            }
        }
        /* 5% of the new events will be delivered again within 5 minutes */
        if (next_random() % 100 < 5) {
            pending[npending].id = i;
            pending[npending].due = now + 1 + next_random() % REDELIVER_MS;
            /* keep the queue ordered by due time (insertion from the back) */
            size_t j = npending++;
            while (j > head && pending[j - 1].due > pending[j].due) {
                redelivery t = pending[j - 1];
                pending[j - 1] = pending[j];
                pending[j] = t;
                --j;
            }
        }
    }

    tf_rotating_cuckoo_stats st = TF_ROTATING_CUCKOO_STATS_INIT;
    const uint64_t end = T0 + total * 1000u / EVENTS_PER_SEC;
    check(tf_rotating_cuckoo_get_stats(seen, end, &st), "get_stats");
    printf("%llu deliveries: %llu processed, %llu redeliveries skipped\n", (unsigned long long)(processed + skipped),
           (unsigned long long)processed, (unsigned long long)skipped);
    printf("processed twice: %llu (forgotten early for memory: %llu keys); new events skipped: %llu\n",
           (unsigned long long)repeated, (unsigned long long)st.forgotten_memory, (unsigned long long)wrongly_skipped);
    printf("filter: %llu tables, %llu IDs, %.1f bits per ID, %llu bytes (cap %llu)\n", (unsigned long long)st.tables,
           (unsigned long long)st.items, st.bits_per_item, (unsigned long long)st.memory,
           (unsigned long long)o.max_memory);
    tf_rotating_cuckoo_free(seen);
    free(pending);
    free(processed_at);
    if (wrongly_skipped != 0) {
        fprintf(stderr, "FAIL: a new event was skipped\n");
        return 1;
    }
    if (repeated != 0 && st.forgotten_memory == 0) {
        fprintf(stderr, "FAIL: a redelivery within the ttl was processed again\n");
        return 1;
    }
    return 0;
}
