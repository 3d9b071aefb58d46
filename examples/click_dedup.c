/*
 * click_dedup.c - de-duplicating a click stream over the last minute with a
 * time-limited Bloom filter.
 *
 * An ad server bills one click per (user, ad) per minute: a repeat of the
 * same (user, ad) within 60 seconds of the click that was counted is a
 * duplicate (a double click, a reload, a bot) and is dropped; a repeat
 * after that is counted again. Instead of a table of every pair it has
 * seen, the server keeps one tf_time_bloom with a span of 60,000 ms and
 * asks tf_time_bloom_add_if_absent() for every click:
 *
 *   - "absent" (0) is always right: the pair was not counted within the
 *     last minute, so the click is counted and the pair inserted;
 *   - "present" (1) is wrong with a small probability (the error rate the
 *     filter was sized for): a click that should be counted is dropped.
 *
 * So the filter may under-bill slightly (false positives) but never bills a
 * duplicate (no false negatives). The program replays 20 minutes of
 * simulated clicks - steady traffic, an ad that goes viral at 10x the rate,
 * a two-minute outage during which the filter is saved and restored, and a
 * click bot - and judges every decision against an exact map of the time of
 * the last counted click of every pair. It exits with status 1 if a
 * duplicate was ever counted.
 *
 * Build: cc -std=c99 click_dedup.c $(pkg-config --cflags --libs temporalfilters) -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <temporalfilters.h>

#define SPAN_MS 60000u  /* duplicates within one minute are dropped */
#define ERROR_RATE 0.01 /* probability of dropping a click that should count */
#define BASE_RATE 300.0 /* clicks per second in normal traffic */
#define USERS 400000u
#define ADS 200u
#define T0 1700000000000ull /* stream start, ms since the Unix epoch */
#define MINUTE 60000.0
#define SAMPLE_MS 1000u /* the filter's statistics are sampled once a second */

/* ---- the simulated stream ---- */

/* xorshift64*: a small deterministic generator. */
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void) { /* [0, 1) */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}
static double between(double lo, double hi) { return lo + (hi - lo) * uniform(); }

/* Time to the next click of a Poisson stream of `per_second` clicks a
 * second, in ms. */
static double next_gap(double per_second) { return -log(1.0 - uniform()) * 1000.0 / per_second; }

/* The phases of the run, back to back. */
struct phase {
    const char *name;
    double minutes;
    double rate; /* organic clicks per second; 0: the server is down */
    int bot;     /* a click bot hammers a few pairs */
    /* measured */
    unsigned long clicks, dropped, counted, wrongly_dropped, wrongly_counted;
    double fpr_sum, bpe_sum;
    unsigned long samples;
    uint64_t max_slices, max_bits;
};

static struct phase phases[] = {
    {"steady traffic", 8.0, BASE_RATE, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0},
    {"an ad goes viral (10x)", 2.0, 10.0 * BASE_RATE, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0},
    {"back to normal", 4.0, BASE_RATE, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0},
    {"outage (filter saved)", 2.0, 0.0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0},
    {"click bot (5 pairs, 20/s)", 4.0, BASE_RATE, 1, 0, 0, 0, 0, 0, 0.0, 0.0, 0, 0, 0},
};
#define PHASES (sizeof phases / sizeof phases[0])
#define BOT_PAIRS 5u
#define BOT_PERIOD_MS 50.0

/* A user who clicks an ad often clicks it again: a double click within a
 * second, or a second visit a little later (inside or outside the minute).
 * Those repeats wait in a min-heap ordered by time. */
struct pending {
    double at;
    uint32_t user, ad;
};
static struct pending *heap = NULL;
static size_t heap_len = 0, heap_cap = 0;

static int heap_push(double at, uint32_t user, uint32_t ad) {
    size_t i;
    if (heap_len == heap_cap) {
        size_t cap = heap_cap ? 2 * heap_cap : 4096;
        struct pending *p = realloc(heap, cap * sizeof *p);
        if (p == NULL) return 0;
        heap = p;
        heap_cap = cap;
    }
    i = heap_len++;
    while (i > 0 && heap[(i - 1) / 2].at > at) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i].at = at;
    heap[i].user = user;
    heap[i].ad = ad;
    return 1;
}

static struct pending heap_pop(void) {
    struct pending top = heap[0], last = heap[--heap_len];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= heap_len) break;
        if (c + 1 < heap_len && heap[c + 1].at < heap[c].at) c++;
        if (heap[c].at >= last.at) break;
        heap[i] = heap[c];
        i = c;
    }
    if (heap_len > 0) heap[i] = last;
    return top;
}

/* ---- the exact reference: (user, ad) -> times of its last counted click ---- */

struct slot {
    uint64_t pair;        /* user * ADS + ad + 1; 0 = empty slot */
    uint64_t filter_last; /* last click the filter counted (0: never) */
    uint64_t exact_last;  /* last click an exact de-duplicator counted */
};
static struct slot *table = NULL;
static size_t table_cap = 0, table_len = 0;

static size_t slot_of(uint64_t pair, size_t cap) {
    uint64_t h = pair * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 20) & (cap - 1);
    while (table[i].pair != 0 && table[i].pair != pair) i = (i + 1) & (cap - 1);
    return i;
}

/* The entry of `pair`, created when missing; NULL when out of memory. */
static struct slot *lookup(uint64_t pair) {
    size_t i;
    if (2 * (table_len + 1) > table_cap) { /* keep the load at most 1/2 */
        size_t old_cap = table_cap, cap = table_cap ? 2 * table_cap : 65536, j;
        struct slot *old = table;
        table = calloc(cap, sizeof *table);
        if (table == NULL) {
            table = old;
            return NULL;
        }
        table_cap = cap;
        for (j = 0; j < old_cap; ++j)
            if (old[j].pair != 0) table[slot_of(old[j].pair, cap)] = old[j];
        free(old);
    }
    i = slot_of(pair, table_cap);
    if (table[i].pair == 0) {
        table[i].pair = pair;
        table_len++;
    }
    return &table[i];
}

/* Times of the clicks the exact de-duplicator counted, in order. */
static uint64_t *counted_at = NULL;
static size_t counted_len = 0, counted_cap = 0;

static int push_counted(uint64_t t) {
    if (counted_len == counted_cap) {
        size_t cap = counted_cap ? 2 * counted_cap : 65536;
        uint64_t *c = realloc(counted_at, cap * sizeof *c);
        if (c == NULL) return 0;
        counted_at = c;
        counted_cap = cap;
    }
    counted_at[counted_len++] = t;
    return 1;
}

/* ---- helpers ---- */

static int ok(tf_status status, const char *what) {
    if (status == TF_OK) return 1;
    fprintf(stderr, "click_dedup: %s failed: %s: %s\n", what, tf_status_string(status), tf_last_error_message());
    return 0;
}

static double percent(unsigned long part, unsigned long whole) {
    return whole == 0 ? 0.0 : 100.0 * (double)part / (double)whole;
}

/* Saves the filter to a buffer and reads it back, as a server would across
 * a restart. The old filter is freed; returns the restored one, or NULL. */
static tf_time_bloom *save_and_restore(tf_time_bloom *filter, size_t *blob_bytes) {
    size_t size = 0, written = 0;
    unsigned char *blob = NULL;
    tf_time_bloom *restored = NULL;
    if (ok(tf_time_bloom_serialized_size(filter, &size), "tf_time_bloom_serialized_size")) {
        blob = malloc(size);
        if (blob == NULL)
            fprintf(stderr, "click_dedup: out of memory\n");
        else if (ok(tf_time_bloom_serialize(filter, blob, size, &written), "tf_time_bloom_serialize") &&
                 ok(tf_time_bloom_deserialize(blob, written, NULL, &restored), "tf_time_bloom_deserialize"))
            *blob_bytes = written;
    }
    free(blob);
    tf_time_bloom_free(filter);
    return restored;
}

int main(void) {
    tf_time_bloom *filter = NULL;
    tf_time_bloom_info info = TF_TIME_BLOOM_INFO_INIT;
    double phase_start = 0.0, phase_end = 0.0, organic_at = 0.0, bot_at = 0.0, sample_at = SAMPLE_MS;
    double warm_until = SPAN_MS; /* no statistics in the first minute after a start */
    size_t p = 0, blob_bytes = 0, memory = 0;
    unsigned long clicks = 0, dropped = 0, counted = 0, wrongly_dropped = 0, wrongly_counted = 0;
    unsigned long not_duplicates = 0, exact_counted = 0, fn_printed = 0, bot_clicks = 0;
    size_t live_from = 0, live_max = 0; /* pairs the exact de-duplicator counted within the last minute */
    double estimate = 0.0;
    uint64_t max_bits = 0;
    int exit_code = EXIT_FAILURE;

    /*
     * Size for the normal traffic: 300 clicks a second is 18,000 clicks per
     * minute. The filter measures the real rate and adapts from its first
     * shift on, so this is a starting point, not a limit.
     */
    if (!ok(tf_time_bloom_new_for((uint64_t)(BASE_RATE * 60.0), ERROR_RATE, SPAN_MS, 42u, 0, &filter),
            "tf_time_bloom_new_for") ||
        !ok(tf_time_bloom_get_info(filter, &info), "tf_time_bloom_get_info"))
        goto done;

    printf("libtemporalfilters %s: click de-duplication over the last minute\n", tf_version_string());
    printf("filter: time-limited Bloom filter, span %u ms, error rate %g -> k = %u, l = %u (%u slices)\n", SPAN_MS,
           ERROR_RATE, (unsigned)info.k, (unsigned)info.l, (unsigned)(info.k + info.l));
    printf("stream: %u users x %u ads, %.0f clicks/s, double clicks and second visits\n\n", USERS, ADS, BASE_RATE);

    phase_end = phases[0].minutes * MINUTE;
    organic_at = next_gap(phases[0].rate);
    bot_at = phase_end; /* set when the bot phase starts */

    for (;;) {
        struct phase *ph = &phases[p];
        double at;
        uint32_t user, ad;
        uint64_t now, pair;
        struct slot *e;
        int was_present = 0, duplicate;
        char key[32];
        int key_len;

        /* The next click: organic, a pending repeat, or the bot. */
        at = ph->rate > 0.0 ? organic_at : phase_end;
        if (heap_len > 0 && heap[0].at < at) at = heap[0].at;
        if (ph->bot && bot_at < at) at = bot_at;

        /* Statistics of the filter once a second of stream time. */
        while (sample_at <= at && sample_at < phase_end) {
            tf_time_bloom_stats st = TF_TIME_BLOOM_STATS_INIT;
            if (ph->rate > 0.0 && sample_at >= warm_until) {
                if (!ok(tf_time_bloom_get_stats(filter, T0 + (uint64_t)sample_at, &st), "tf_time_bloom_get_stats"))
                    goto done;
                ph->fpr_sum += st.fpr_now;
                ph->bpe_sum += st.bits_per_element;
                ph->samples++;
                if (st.slices > ph->max_slices) ph->max_slices = st.slices;
                if (st.bits > ph->max_bits) ph->max_bits = st.bits;
            }
            sample_at += SAMPLE_MS;
        }

        if (at >= phase_end) { /* next phase */
            if (++p == PHASES) break;
            phase_start = phase_end;
            phase_end += phases[p].minutes * MINUTE;
            if (phases[p].rate > 0.0) {
                organic_at = phase_start + next_gap(phases[p].rate);
                if (phases[p - 1].rate == 0.0) { /* back from the outage */
                    warm_until = phase_start + SPAN_MS;
                    filter = save_and_restore(filter, &blob_bytes);
                    if (filter == NULL) goto done;
                }
            } else {
                /* Down: clicks in flight are lost. */
                heap_len = 0;
            }
            bot_at = phase_start + MINUTE; /* the bot starts a minute into its phase */
            continue;
        }

        if (heap_len > 0 && at == heap[0].at) {
            struct pending r = heap_pop();
            user = r.user;
            ad = r.ad;
        } else if (ph->bot && at == bot_at) {
            user = 7u + (unsigned)(bot_clicks++ % BOT_PAIRS); /* five pairs of one ad, in turn */
            ad = 13u;
            bot_at += BOT_PERIOD_MS / BOT_PAIRS;
            if (bot_at > phase_start + 2.0 * MINUTE) bot_at = phase_end; /* one minute of bot */
        } else {
            /* Popular users and ads click more: skewed choices. */
            const double u = uniform(), v = uniform();
            user = (uint32_t)((double)USERS * u * u);
            ad = (uint32_t)((double)ADS * v * v * v);
            organic_at += next_gap(ph->rate);
            /* A quarter of the clicks are double clicks; one in six is
             * followed by a second visit 10 s to 2.5 min later. */
            if (uniform() < 0.25 && !heap_push(at + between(80.0, 1000.0), user, ad)) goto oom;
            if (uniform() < 1.0 / 6.0 && !heap_push(at + between(10000.0, 150000.0), user, ad)) goto oom;
        }

        now = T0 + (uint64_t)at;
        key_len = snprintf(key, sizeof key, "u%u/ad%u", (unsigned)user, (unsigned)ad);

        /* The server's decision: one call. */
        if (!ok(tf_time_bloom_add_if_absent(filter, key, (size_t)key_len, now, &was_present),
                "tf_time_bloom_add_if_absent"))
            goto done;

        /* The exact judgement: was this pair counted within the last minute? */
        pair = (uint64_t)user * ADS + ad + 1u;
        e = lookup(pair);
        if (e == NULL) goto oom;
        duplicate = e->filter_last != 0 && now - e->filter_last <= SPAN_MS;
        clicks++;
        ph->clicks++;
        if (duplicate && was_present) {
            dropped++;
            ph->dropped++;
        } else if (!duplicate && !was_present) {
            counted++;
            ph->counted++;
        } else if (was_present) { /* dropped, but not a duplicate */
            wrongly_dropped++;
            ph->wrongly_dropped++;
        } else { /* counted although counted less than a minute ago */
            wrongly_counted++;
            ph->wrongly_counted++;
            if (++fn_printed <= 5)
                fprintf(stderr, "click_dedup: FAIL: %s at +%.3f s counted again, last counted %.3f s earlier\n", key,
                        at / 1000.0, (double)(now - e->filter_last) / 1000.0);
        }
        not_duplicates += !duplicate;
        if (!was_present) e->filter_last = now;

        /* An exact de-duplicator on its own, for the totals. */
        if (e->exact_last == 0 || now - e->exact_last > SPAN_MS) {
            exact_counted++;
            e->exact_last = now;
            if (!push_counted(now)) goto oom;
        }
        /* It counts a pair at most once a minute, so the clicks it counted
         * within the last minute are distinct pairs: the most an exact map
         * pruned to the last minute would have to hold. */
        while (now - counted_at[live_from] > SPAN_MS) live_from++;
        if (counted_len - live_from > live_max) live_max = counted_len - live_from;
    }

    if (!ok(tf_time_bloom_memory(filter, &memory), "tf_time_bloom_memory")) goto done;

    printf("  %-26s %8s %8s %8s %8s %8s %8s\n", "", "clicks", "dups", "unique", "wrongly", "", "wrongly");
    printf("  %-26s %8s %8s %8s %8s %8s %8s\n", "phase", "", "dropped", "counted", "dropped", "(rate)", "counted");
    for (p = 0; p < PHASES; ++p) {
        const struct phase *ph = &phases[p];
        const unsigned long should_count = ph->counted + ph->wrongly_dropped;
        if (ph->clicks == 0) {
            printf("  %-26s %8lu   (filter saved to a %zu-byte blob and restored)\n", ph->name, ph->clicks, blob_bytes);
            continue;
        }
        printf("  %-26s %8lu %8lu %8lu %8lu %7.3f%% %8lu\n", ph->name, ph->clicks, ph->dropped, ph->counted,
               ph->wrongly_dropped, percent(ph->wrongly_dropped, should_count), ph->wrongly_counted);
    }
    printf("\n  %-26s %8s %8s %8s %8s\n", "the filter, per phase", "slices", "KiB", "bits/elt", "fpr_now");
    printf("  %-26s %8s %8s %8s %8s\n", "(each second, not in the", "(max)", "(max)", "(mean)", "(mean)");
    printf("   first minute of a start)\n");
    for (p = 0; p < PHASES; ++p) {
        const struct phase *ph = &phases[p];
        if (ph->samples == 0) continue;
        printf("  %-26s %8llu %8.1f %8.1f %7.3f%%\n", ph->name, (unsigned long long)ph->max_slices,
               (double)ph->max_bits / 8192.0, ph->bpe_sum / (double)ph->samples,
               100.0 * ph->fpr_sum / (double)ph->samples);
    }

    /* The filter's own estimate for a fresh key, weighted by the clicks of each phase. */
    for (p = 0; p < PHASES; ++p)
        if (phases[p].samples > 0) {
            estimate +=
                phases[p].fpr_sum / (double)phases[p].samples * (double)(phases[p].counted + phases[p].wrongly_dropped);
            if (phases[p].max_bits > max_bits) max_bits = phases[p].max_bits;
        }
    estimate = not_duplicates == 0 ? 0.0 : estimate / (double)not_duplicates;

    printf("\n  clicks                              %8lu\n", clicks);
    printf("  duplicates dropped                  %8lu  (%.1f%% of the clicks)\n", dropped, percent(dropped, clicks));
    printf("  unique clicks counted               %8lu  (an exact de-duplicator counts %lu)\n", counted, exact_counted);
    printf(
        "  wrongly dropped (false positives)   %8lu  (%.3f%% of the %lu clicks that should count;\n"
        "                                                target %g%%, the filter's estimate %.3f%%)\n",
        wrongly_dropped, percent(wrongly_dropped, not_duplicates), not_duplicates, 100.0 * ERROR_RATE,
        100.0 * estimate);
    printf("  wrongly counted (false negatives)   %8lu  (must be 0)\n", wrongly_counted);
    printf(
        "  memory: the filter at most %.1f KiB (%.1f KiB at the end); an exact map of every pair\n"
        "          %.1f MiB, or about %.1f MiB pruned to the at most %lu pairs counted within a minute\n",
        (double)max_bits / 8192.0, (double)memory / 1024.0, (double)(table_cap * sizeof *table) / 1048576.0,
        (double)(2 * live_max * sizeof *table) / 1048576.0, (unsigned long)live_max);
    printf(
        "\n  The filter's estimate (fpr_now) is for a key it never saw. Clicks are not\n"
        "  independent: once a pair is wrongly dropped its double click is dropped too,\n"
        "  and a repeat a few seconds after the minute may still be found; the rate per\n"
        "  click is a little higher. While the rate jumps (the viral ad) it rises above\n"
        "  the target for about one span, as the header says.\n");
    exit_code = wrongly_counted == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    if (wrongly_counted != 0) printf("FAIL: the filter counted a duplicate\n");
    goto done;

oom:
    fprintf(stderr, "click_dedup: out of memory\n");
done:
    tf_time_bloom_free(filter);
    free(table);
    free(heap);
    free(counted_at);
    return exit_code;
}
