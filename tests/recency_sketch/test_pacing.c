/* RecencySketch pacing: grants, never two within an interval, and the bound
 * of width * depth grants per interval. */
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

static void test_pace_semantics(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(1024, 4, 3, kModes[m]);
        int g = -1;
        uint64_t next = 0;
        OK(tf_recency_sketch_pace(s, "client", 6, 100, 10, &g, &next));
        assert_int_equal(g, 1);
        assert_int_equal(next, 110);
        OK(tf_recency_sketch_pace(s, "client", 6, 105, 10, &g, &next));
        assert_int_equal(g, 0);
        assert_int_equal(next, 110);
        OK(tf_recency_sketch_pace(s, "client", 6, 109, 10, &g, NULL));
        assert_int_equal(g, 0);
        OK(tf_recency_sketch_pace(s, "client", 6, 110, 10, &g, &next));
        assert_int_equal(g, 1);
        assert_int_equal(next, 120);
        /* a grant is a recorded update; a denial records nothing */
        uint64_t t;
        OK(tf_recency_sketch_query(s, "client", 6, &t));
        assert_int_equal(t, 110);
        /* a clock that goes backwards is denied, never granted */
        OK(tf_recency_sketch_pace(s, "client", 6, 50, 10, &g, &next));
        assert_int_equal(g, 0);
        assert_int_equal(next, 120);
        OK(tf_recency_sketch_query(s, "client", 6, &t));
        assert_int_equal(t, 110);
        /* saturation at the end of time */
        OK(tf_recency_sketch_pace(s, "late", 4, UINT64_MAX - 3, 10, &g, &next));
        assert_int_equal(g, 1);
        assert_int_equal(next, UINT64_MAX);
        OK(tf_recency_sketch_pace(s, "late", 4, UINT64_MAX, 10, &g, &next));
        assert_int_equal(g, 0);
        assert_int_equal(next, UINT64_MAX);
        tf_recency_sketch_free(s);
    }
}

/* A key is never granted twice within its interval, whatever the load;
 * checked against an exact per-key record of grants. */
static void test_pace_never_early(void **state) {
    (void)state;
    enum { KEYS = 50000, OPS = 1000000 };
    for (size_t m = 0; m < 2; ++m) {
        uint64_t *last_grant = calloc(KEYS, sizeof *last_grant);
        assert_non_null(last_grant);
        tf_recency_sketch *s = make(4096, 4, 11, kModes[m]); /* overloaded on purpose */
        tu_rng rng = {7};
        uint64_t clock = 1, grants = 0, exact_grants = 0;
        for (int op = 0; op < OPS; ++op) {
            uint64_t id = tu_below(&rng, KEYS);
            clock += tu_below(&rng, 2);
            const uint64_t interval = 5000;
            tu_key k = tu_make_key('p', id);
            int g;
            uint64_t next;
            OK(tf_recency_sketch_pace(s, k.b, sizeof k.b, clock, interval, &g, &next));
            int exact = last_grant[id] == 0 || last_grant[id] + interval <= clock;
            if (g) {
                assert_true(exact); /* never early */
                last_grant[id] = clock;
                grants++;
                assert_int_equal(next, clock + interval);
            } else {
                assert_true(next > clock);
            }
            exact_grants += exact;
        }
        print_message("# pace %s: %llu grants of %llu requests\n", m ? "blocked" : "standard",
                      (unsigned long long)grants, (unsigned long long)OPS);
        assert_true(grants > 0);
        tf_recency_sketch_free(s);
        free(last_grant);
    }
}

/* The RecencySketch README's property: with an unbounded key space, the sketch grants at
 * most one request per cell per interval, so at most width*depth in any
 * window of length interval; and under overload it approaches that rate. */
static void test_pace_rate_bound(void **state) {
    (void)state;
    const uint64_t w = 16, L = 100, T = 20000, per_tick = 50;
    const uint32_t d = 2;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = make(w, d, 1, kModes[m]);
        const uint64_t cells = info_of(s).cells;
        uint64_t *times = malloc(T * per_tick * sizeof *times);
        size_t n = 0;
        uint64_t id = 0;
        for (uint64_t t = 1; t <= T; ++t)
            for (uint64_t r = 0; r < per_tick; ++r) {
                tu_key k = tu_make_key('u', id++); /* always a new key */
                int g;
                OK(tf_recency_sketch_pace(s, k.b, sizeof k.b, t, L, &g, NULL));
                if (g) times[n++] = t;
            }
        uint64_t worst = max_in_window(times, n, L);
        double rate = (double)n / ((double)T / (double)L);
        print_message("# flags %u: %zu grants, at most %llu per interval (bound %llu), mean %.1f per interval\n",
                      kModes[m], n, (unsigned long long)worst, (unsigned long long)cells, rate);
        assert_true(worst <= cells);
        /* overloaded 50x, the rate approaches the constant from below: each
         * cell is claimed again soon after its interval ends */
        assert_true(rate >= 0.5 * (double)cells);
        free(times);
        tf_recency_sketch_free(s);
    }
}

TU_MAIN(test_pace_semantics, test_pace_never_early, test_pace_rate_bound)
