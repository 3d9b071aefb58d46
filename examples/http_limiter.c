/*
 * http_limiter.c - an API gateway that answers "429 Too Many Requests" with a
 * Retry-After header, using the sliding-window rate limiter.
 *
 * The gateway lets every API key make at most 5 requests per second, one
 * partner key 30 per second (a per-key override), and all keys together 40
 * per second (a global cap, which the partner is held to as well). Five
 * simulated clients send requests for eight seconds of simulated time, one
 * millisecond per step:
 *
 *   alice    a steady client, 4 requests/s: only the global cap stops her
 *   bob      bursts of 8 requests 20 ms apart every 2 s: the tail is limited
 *   mallory  abusive: 40 requests/s, ignores Retry-After
 *   carol    polite: would like 10 requests/s, but waits as Retry-After says
 *   partner  33 requests/s plus a batch call worth 5 permits every second
 *
 * Every decision of the first 400 ms is printed like an HTTP response
 * line, then one line per second. The run is made twice: with the bucketed
 * limiter (the default: 10 buckets of 100 ms per window, constant memory per
 * key, may admit a little early) and in exact mode (the last grants of every
 * key; never more than the limit in any window).
 *
 * The gateway checks itself: it logs every permit it granted and counts, in
 * every window, what was really granted. The program exits with status 1
 * when a promise of the limiter's header is broken:
 *   - exact mode: never more permits than the limit in any window of 1 s;
 *   - bucketed: never more than the limit in any window of W - B + 1 (a
 *     bucket leaves the window up to B - 1 ms early), so at most twice the
 *     limit in a window of 1 s;
 *   - both: the global cap likewise, and Retry-After names the earliest
 *     moment at which the same request would be granted if nothing else
 *     happened (checked on a copy of the limiter made by serializing it).
 *
 * The API keys come from the clients, so the limiter hashes them with a
 * random secret seed (secret_seed below): with a seed a client can guess, it
 * could choose keys that all land in one shard of the limiter's table and
 * slow down every request of that shard. The seed changes where keys are
 * stored, never a decision.
 *
 * Build: cc -std=c99 http_limiter.c $(pkg-config --cflags --libs temporalfilters)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <temporalfilters.h>

#define WINDOW_MS 1000u     /* the limits are per second ... */
#define BUCKET_MS 100u      /* ... counted in buckets of 100 ms (bucketed mode) */
#define KEY_LIMIT 5u        /* requests per second per API key */
#define PARTNER_LIMIT 30u   /* the partner's own limit */
#define GLOBAL_LIMIT 40u    /* all keys together */
#define DURATION_MS 8000u   /* simulated run time */
#define PRINT_UNTIL_MS 400u /* every decision is printed up to here */
#define MAX_GRANTS 20000u   /* log capacity (more than all requests of a run) */

struct client {
    const char *name;
    uint64_t period;      /* one request every `period` ms ... */
    unsigned burst;       /* ... or bursts of `burst` requests, 20 ms apart */
    int polite;           /* waits until Retry-After has passed */
    uint64_t batch_every; /* also a batch call of BATCH_PERMITS this often (0: never) */
    uint64_t limit;       /* its limit per window */
    /* run state */
    uint64_t next_request, next_batch;
    unsigned sent_in_burst;
    unsigned ok, limited;
    uint64_t permits;
};

#define BATCH_PERMITS 5u

/* Every permit granted, in time order: one log per client and one global. */
struct grant_log {
    uint64_t time[MAX_GRANTS];
    uint64_t permits[MAX_GRANTS];
    size_t count;
};

static int log_add(struct grant_log *g, uint64_t time, uint64_t permits) {
    if (g->count == MAX_GRANTS) return 0;
    g->time[g->count] = time;
    g->permits[g->count] = permits;
    g->count++;
    return 1;
}

/* The most permits granted within any window (t - length, t]. */
static uint64_t max_in_window(const struct grant_log *g, uint64_t length) {
    uint64_t in = 0, best = 0;
    size_t lo = 0, hi;
    for (hi = 0; hi < g->count; ++hi) {
        in += g->permits[hi];
        while (g->time[lo] + length <= g->time[hi]) in -= g->permits[lo++];
        if (in > best) best = in;
    }
    return best;
}

/* Prints a failed call's status and message; returns 0 on failure. */
static int ok(tf_status status, const char *what) {
    if (status == TF_OK) return 1;
    fprintf(stderr, "http_limiter: %s failed: %s: %s\n", what, tf_status_string(status), tf_last_error_message());
    return 0;
}

/*
 * Retry-After must name the earliest time at which the same request would
 * be granted if nothing else happened. A copy of the limiter (serialized and
 * read back, as a restarted gateway would) is asked without consuming
 * anything: one millisecond before that time the request must still be
 * denied, at that time granted. Returns 1 when it holds, 0 when not, -1 on
 * a failed call.
 */
static int retry_after_is_exact(tf_rate_limiter *limiter, const char *key, uint64_t now, uint64_t permits,
                                uint64_t retry_at) {
    static unsigned char blob[1 << 16];
    size_t size = 0, written = 0;
    tf_rate_limiter *copy = NULL;
    int before = 1, at = 0, result = -1;
    if (!ok(tf_rate_limiter_serialized_size(limiter, &size), "tf_rate_limiter_serialized_size")) return -1;
    if (size > sizeof blob) {
        fprintf(stderr, "http_limiter: the limiter's blob (%zu bytes) is larger than expected\n", size);
        return -1;
    }
    if (!ok(tf_rate_limiter_serialize(limiter, blob, sizeof blob, &written), "tf_rate_limiter_serialize") ||
        !ok(tf_rate_limiter_deserialize(blob, written, NULL, &copy), "tf_rate_limiter_deserialize"))
        return -1;
    if (retry_at - 1 > now &&
        !ok(tf_rate_limiter_peek(copy, key, strlen(key), retry_at - 1, permits, &before, NULL, NULL),
            "tf_rate_limiter_peek"))
        goto done;
    if (retry_at - 1 <= now) before = 0; /* denied at `now` already */
    if (!ok(tf_rate_limiter_peek(copy, key, strlen(key), retry_at, permits, &at, NULL, NULL), "tf_rate_limiter_peek"))
        goto done;
    result = !before && at;
done:
    tf_rate_limiter_free(copy);
    return result;
}

struct run_result {
    unsigned ok, limited, bad_retry;
    uint64_t key_max[8], key_max_short[8]; /* per client: max permits in W, in W - B + 1 */
    uint64_t global_max, global_max_short;
    uint64_t reclaimed;
    size_t memory;
};

static struct grant_log logs[8], global_log;

/* A random secret seed for the limiter's key table, read from the system's
 * random source (a fallback mixes the address of a local and the clock of
 * the library when there is none). */
static uint32_t secret_seed(void) {
    uint32_t seed = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&seed, sizeof seed, 1, f) != 1) seed = 0;
        fclose(f);
    }
    if (seed == 0) {
        uint64_t x = tf_clock_now_ms() ^ (uint64_t)(uintptr_t)&seed;
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        seed = (uint32_t)(x ^ (x >> 32));
    }
    return seed;
}

/* One run of the gateway; returns 0 when a library call failed. */
static int run(struct client *clients, size_t n, uint32_t flags, int print, struct run_result *res) {
    const int exact = (flags & TF_RATE_LIMITER_EXACT) != 0;
    tf_rate_limiter *limiter = NULL;
    uint64_t now, second_ok = 0, second_limited = 0;
    tf_rate_limiter_stats stats = TF_RATE_LIMITER_STATS_INIT;
    size_t i;
    int success = 0;

    memset(res, 0, sizeof *res);
    memset(&global_log, 0, sizeof global_log);
    for (i = 0; i < n; ++i) {
        struct client *c = &clients[i];
        memset(&logs[i], 0, sizeof logs[i]);
        c->next_request = 1 + 7 * i; /* time starts at 1: 0 means "never" */
        c->next_batch = c->batch_every ? 200 : UINT64_MAX;
        c->sent_in_burst = 0;
        c->ok = c->limited = 0;
        c->permits = 0;
    }

    if (!ok(tf_rate_limiter_new(KEY_LIMIT, WINDOW_MS, BUCKET_MS, secret_seed(), flags, &limiter),
            "tf_rate_limiter_new") ||
        !ok(tf_rate_limiter_set_global_limit(limiter, GLOBAL_LIMIT), "tf_rate_limiter_set_global_limit"))
        goto done;
    for (i = 0; i < n; ++i)
        if (clients[i].limit != KEY_LIMIT &&
            !ok(tf_rate_limiter_set_key_limit(limiter, clients[i].name, strlen(clients[i].name), clients[i].limit),
                "tf_rate_limiter_set_key_limit"))
            goto done;

    if (print) {
        printf("%8s  %-8s %-16s %s\n", "time", "API key", "request", "response");
    }
    for (now = 1; now <= DURATION_MS; ++now) {
        for (i = 0; i < n; ++i) {
            struct client *c = &clients[i];
            const int is_batch = now >= c->next_batch;
            const uint64_t permits = is_batch ? BATCH_PERMITS : 1;
            const char *request = is_batch ? "POST /v1/batch" : "GET /v1/items";
            int allowed = 0;
            uint64_t remaining = 0, retry_at = 0;
            if (now < c->next_request && !is_batch) continue;

            if (!ok(tf_rate_limiter_acquire(limiter, c->name, strlen(c->name), now, permits, &allowed, &remaining,
                                            &retry_at),
                    "tf_rate_limiter_acquire"))
                goto done;
            if (allowed) {
                c->ok++;
                c->permits += permits;
                second_ok++;
                if (!log_add(&logs[i], now, permits) || !log_add(&global_log, now, permits)) {
                    fprintf(stderr, "http_limiter: grant log full\n");
                    goto done;
                }
                if (print && now <= PRINT_UNTIL_MS)
                    printf("%6.3f s  %-8s %-16s 200 OK, X-RateLimit-Remaining: %llu\n", (double)now / 1000.0, c->name,
                           request, (unsigned long long)remaining);
            } else {
                const int verdict = retry_at == TF_RETRY_NEVER
                                        ? 1 /* can never be granted: not expected here */
                                        : retry_after_is_exact(limiter, c->name, now, permits, retry_at);
                c->limited++;
                second_limited++;
                if (verdict < 0) goto done;
                if (verdict == 0 || retry_at == TF_RETRY_NEVER) {
                    if (++res->bad_retry <= 5)
                        fprintf(stderr,
                                "http_limiter: FAIL: %s at %llu ms (%llu permits): retry at %llu ms is not the "
                                "earliest time the request would be granted\n",
                                c->name, (unsigned long long)now, (unsigned long long)permits,
                                (unsigned long long)retry_at);
                }
                if (print && now <= PRINT_UNTIL_MS) {
                    /* Retry-After is in whole seconds (HTTP delta-seconds), rounded up. */
                    const uint64_t wait_ms = retry_at - now;
                    printf("%6.3f s  %-8s %-16s 429 Too Many Requests, Retry-After: %llu s (retry at %.3f s)\n",
                           (double)now / 1000.0, c->name, request, (unsigned long long)((wait_ms + 999) / 1000),
                           (double)retry_at / 1000.0);
                }
            }

            /* When does this client come back? */
            if (is_batch) {
                c->next_batch += c->batch_every;
                continue;
            }
            if (c->burst) {
                if (++c->sent_in_burst < c->burst) {
                    c->next_request = now + 20;
                    continue;
                }
                c->sent_in_burst = 0;
            }
            c->next_request = now + c->period;
            if (c->polite && !allowed && retry_at > c->next_request) c->next_request = retry_at;
        }
        if (print && now == PRINT_UNTIL_MS) printf("   ...    (from here on, one line per second)\n");
        if (print && now > PRINT_UNTIL_MS && now % 1000 == 0) {
            printf("%6.3f s  second %llu: %llu x 200, %llu x 429\n", (double)now / 1000.0,
                   (unsigned long long)(now / 1000), (unsigned long long)second_ok, (unsigned long long)second_limited);
        }
        if (now % 1000 == 0) second_ok = second_limited = 0;
    }

    for (i = 0; i < n; ++i) {
        res->ok += clients[i].ok;
        res->limited += clients[i].limited;
        res->key_max[i] = max_in_window(&logs[i], WINDOW_MS);
        res->key_max_short[i] = max_in_window(&logs[i], exact ? WINDOW_MS : WINDOW_MS - BUCKET_MS + 1);
    }
    res->global_max = max_in_window(&global_log, WINDOW_MS);
    res->global_max_short = max_in_window(&global_log, exact ? WINDOW_MS : WINDOW_MS - BUCKET_MS + 1);
    if (!ok(tf_rate_limiter_get_stats(limiter, &stats), "tf_rate_limiter_get_stats")) goto done;
    res->reclaimed = stats.reclaimed;
    res->memory = (size_t)stats.memory;
    success = 1;
done:
    tf_rate_limiter_free(limiter);
    return success;
}

static int report(const char *what, int holds, const char *detail) {
    printf("  %-58s %s%s\n", what, holds ? "ok" : "FAIL", detail);
    return holds;
}

int main(void) {
    struct client clients[] = {
        {"alice", 250, 0, 0, 0, KEY_LIMIT, 0, 0, 0, 0, 0, 0},
        {"bob", 2000, 8, 0, 0, KEY_LIMIT, 0, 0, 0, 0, 0, 0},
        {"mallory", 25, 0, 0, 0, KEY_LIMIT, 0, 0, 0, 0, 0, 0},
        {"carol", 100, 0, 1, 0, KEY_LIMIT, 0, 0, 0, 0, 0, 0},
        {"partner", 30, 0, 0, 1000, PARTNER_LIMIT, 0, 0, 0, 0, 0, 0},
    };
    const size_t n = sizeof clients / sizeof clients[0];
    struct run_result bucketed, exact;
    unsigned bucketed_ok[8], bucketed_limited[8];
    int holds = 1;
    size_t i;
    char detail[160];

    printf("libtemporalfilters %s: HTTP API gateway with a sliding-window rate limiter\n", tf_version_string());
    printf("limits: %u requests/s per API key, partner %u/s (override), all keys together %u/s (global cap)\n\n",
           KEY_LIMIT, PARTNER_LIMIT, GLOBAL_LIMIT);

    printf("bucketed limiter (%u buckets of %u ms per window):\n", WINDOW_MS / BUCKET_MS, BUCKET_MS);
    if (!run(clients, n, 0, 1, &bucketed)) return EXIT_FAILURE;
    for (i = 0; i < n; ++i) bucketed_ok[i] = clients[i].ok, bucketed_limited[i] = clients[i].limited;
    if (!run(clients, n, TF_RATE_LIMITER_EXACT, 0, &exact)) return EXIT_FAILURE;

    printf("\nsummary over %u s        bucketed                 exact mode\n", DURATION_MS / 1000);
    printf("  %-8s %6s  %5s %5s %11s  %5s %5s %11s\n", "API key", "limit", "200", "429", "max in 1 s", "200", "429",
           "max in 1 s");
    for (i = 0; i < n; ++i)
        printf("  %-8s %4llu/s  %5u %5u %11llu  %5u %5u %11llu\n", clients[i].name,
               (unsigned long long)clients[i].limit, bucketed_ok[i], bucketed_limited[i],
               (unsigned long long)bucketed.key_max[i], clients[i].ok, clients[i].limited,
               (unsigned long long)exact.key_max[i]);
    printf("  %-8s %4u/s  %5u %5u %11llu  %5u %5u %11llu\n", "all", GLOBAL_LIMIT, bucketed.ok, bucketed.limited,
           (unsigned long long)bucketed.global_max, exact.ok, exact.limited, (unsigned long long)exact.global_max);
    printf("  (\"max in 1 s\": the most permits granted within any window of 1 s; the batch call takes %u)\n",
           BATCH_PERMITS);
    printf("  limiter memory: %zu bytes bucketed, %zu bytes exact; idle keys reclaimed: %llu, %llu\n", bucketed.memory,
           exact.memory, (unsigned long long)bucketed.reclaimed, (unsigned long long)exact.reclaimed);

    printf("\nchecks against the log of every permit granted:\n");
    for (i = 0; i < n; ++i) {
        const uint64_t lim = clients[i].limit;
        char what[96];
        snprintf(what, sizeof what, "exact: %s never over %llu in any 1 s", clients[i].name, (unsigned long long)lim);
        snprintf(detail, sizeof detail, " (max %llu)", (unsigned long long)exact.key_max[i]);
        holds &= report(what, exact.key_max[i] <= lim, detail);
        snprintf(what, sizeof what, "bucketed: %s never over %llu in any %u ms", clients[i].name,
                 (unsigned long long)lim, WINDOW_MS - BUCKET_MS + 1);
        snprintf(detail, sizeof detail, " (max %llu; in 1 s: %llu, bound %llu)",
                 (unsigned long long)bucketed.key_max_short[i], (unsigned long long)bucketed.key_max[i],
                 (unsigned long long)(2 * lim));
        holds &= report(what, bucketed.key_max_short[i] <= lim && bucketed.key_max[i] <= 2 * lim, detail);
    }
    snprintf(detail, sizeof detail, " (max %llu)", (unsigned long long)exact.global_max);
    holds &= report("exact: all keys never over the global cap in any 1 s", exact.global_max <= GLOBAL_LIMIT, detail);
    snprintf(detail, sizeof detail, " (max %llu; in 1 s: %llu)", (unsigned long long)bucketed.global_max_short,
             (unsigned long long)bucketed.global_max);
    holds &= report("bucketed: all keys never over the global cap in any 901 ms",
                    bucketed.global_max_short <= GLOBAL_LIMIT && bucketed.global_max <= 2 * GLOBAL_LIMIT, detail);
    snprintf(detail, sizeof detail, " (%u + %u wrong of %u + %u)", bucketed.bad_retry, exact.bad_retry,
             bucketed.limited, exact.limited);
    holds &= report("Retry-After is the earliest time the request passes", bucketed.bad_retry + exact.bad_retry == 0,
                    detail);
    printf("%s\n", holds ? "all promises held" : "FAIL: a promise was broken");
    return holds ? EXIT_SUCCESS : EXIT_FAILURE;
}
