/*
 * pacing.c - request pacing with a RecencySketch.
 *
 * A service grants each client at most one request per INTERVAL milliseconds.
 * Instead of keeping a table of every client it has ever seen, it keeps one
 * fixed-size RecencySketch and asks tf_recency_sketch_pace() for every
 * request. The sketch never grants a client twice within the interval; when
 * it denies, it says when the client may retry.
 *
 * Five simulated clients send requests at different rates for two seconds of
 * simulated time. One of them ("polite") never sends before the time the
 * sketch named in its last answer, so it is never denied.
 *
 * Build: cc -std=c99 pacing.c $(pkg-config --cflags --libs temporalfilters)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <temporalfilters.h>

#define INTERVAL_MS 250u    /* at most one granted request per client per 250 ms */
#define DURATION_MS 2000u   /* simulated run time */
#define PRINT_UNTIL_MS 600u /* print every decision up to this time, then summarize */

struct client {
    const char *name;
    uint64_t period;       /* the client sends a request every `period` ms ... */
    int polite;            /* ... but a polite one waits for next_allowed if that is later */
    uint64_t next_request; /* simulated time of its next request */
    uint64_t last_grant;   /* for the self-check below (0: never granted) */
    unsigned requests, granted, denied;
};

/* Prints a failed call's status and message; returns 0 on failure. */
static int ok(tf_status status, const char *what) {
    if (status == TF_OK) return 1;
    fprintf(stderr, "pacing: %s failed: %s: %s\n", what, tf_status_string(status), tf_last_error_message());
    return 0;
}

int main(void) {
    struct client clients[] = {
        {"eager", 40, 0, 1, 0, 0, 0, 0},    /* 25 requests/s: mostly denied */
        {"steady", 100, 0, 5, 0, 0, 0, 0},  /* 10 requests/s */
        {"polite", 60, 1, 9, 0, 0, 0, 0},   /* wants 16/s, but waits as told */
        {"slow", 300, 0, 13, 0, 0, 0, 0},   /* slower than the limit: always granted */
        {"bursty", 700, 0, 17, 0, 0, 0, 0}, /* a burst of 4 requests every 700 ms, see below */
    };
    const size_t nclients = sizeof clients / sizeof clients[0];
    tf_recency_sketch *sketch = NULL;
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    size_t memory = 0;
    unsigned double_grants = 0;
    int exit_code = EXIT_FAILURE;
    uint64_t now;
    size_t i;

    /*
     * Size the sketch for the number of distinct clients expected within one
     * interval: with 1000 of them, a client that has waited long enough is
     * wrongly denied with probability at most 0.1%.
     */
    if (!ok(tf_recency_sketch_new_for(1000, 0.001, 42u, 0u, &sketch), "tf_recency_sketch_new_for")) goto done;
    if (!ok(tf_recency_sketch_get_info(sketch, &info), "tf_recency_sketch_get_info") ||
        !ok(tf_recency_sketch_memory(sketch, &memory), "tf_recency_sketch_memory"))
        goto done;
    printf("libtemporalfilters %s: pacing example\n", tf_version_string());
    printf("sketch: %llu x %u cells, %zu bytes; limit: 1 request per client per %u ms\n\n",
           (unsigned long long)info.width, (unsigned)info.depth, memory, INTERVAL_MS);
    printf("  time  client  decision\n");

    /* Timestamps start at 1: 0 means "never" in the library. */
    for (now = 1; now <= DURATION_MS; ++now) {
        for (i = 0; i < nclients; ++i) {
            struct client *c = &clients[i];
            int granted = 0;
            uint64_t next_allowed = 0;
            if (now < c->next_request) continue;

            if (!ok(tf_recency_sketch_pace(sketch, c->name, strlen(c->name), now, INTERVAL_MS, &granted, &next_allowed),
                    "tf_recency_sketch_pace"))
                goto done;

            c->requests++;
            if (granted) {
                c->granted++;
                if (c->last_grant != 0 && now - c->last_grant < INTERVAL_MS) double_grants++;
                c->last_grant = now;
            } else {
                c->denied++;
            }
            if (now <= PRINT_UNTIL_MS) {
                if (granted)
                    printf("%6llu  %-6s  granted\n", (unsigned long long)now, c->name);
                else
                    printf("%6llu  %-6s  denied, retry at %llu (in %llu ms)\n", (unsigned long long)now, c->name,
                           (unsigned long long)next_allowed, (unsigned long long)(next_allowed - now));
            }

            /* When does this client send its next request? */
            if (c->polite)
                c->next_request = now + c->period > next_allowed ? now + c->period : next_allowed;
            else if (strcmp(c->name, "bursty") == 0 && c->requests % 4 != 0)
                c->next_request = now + 5; /* the rest of the burst, 5 ms apart */
            else
                c->next_request = now + c->period;
        }
        if (now == PRINT_UNTIL_MS) printf("   ...  (decisions after %u ms are only counted)\n", PRINT_UNTIL_MS);
    }

    printf("\nsummary over %u ms (at most %u grants per client):\n", DURATION_MS,
           (DURATION_MS + INTERVAL_MS - 1) / INTERVAL_MS);
    printf("  %-6s  %8s  %7s  %6s\n", "client", "requests", "granted", "denied");
    for (i = 0; i < nclients; ++i)
        printf("  %-6s  %8u  %7u  %6u\n", clients[i].name, clients[i].requests, clients[i].granted, clients[i].denied);
    printf("\ngrants closer than %u ms to the previous grant of the same client: %u (must be 0)\n", INTERVAL_MS,
           double_grants);
    exit_code = double_grants == 0 ? EXIT_SUCCESS : EXIT_FAILURE;

done:
    tf_recency_sketch_free(sketch);
    return exit_code;
}
