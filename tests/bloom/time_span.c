/* The span guarantee: no false negatives, against an exact record of what
 * was inserted when (steady, bursty, doubling, halving, idle gaps). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

static void test_no_false_negatives(void **state) {
    (void)state;
    /* one minute in milliseconds, 500 per second expected */
    const uint64_t span = 60000;
    tf_time_bloom *f = tb_make_for(0.01, span, 30000, 21);
    tb_stream s;
    tb_stream_init(&s, f, 1200000, 7);
    double clock = 1;
    uint64_t next_sweep = span;
    const double r1 = kStream; /* the rate unit: 1000 per second */
    /* steady */
    tb_poisson_phase(&s, &clock, 0.5 * r1, 2 * span, &next_sweep);
    uint64_t steady_slices = s.max_slices;
    /* 10x, then back */
    tb_poisson_phase(&s, &clock, 5.0 * r1, span / 2, &next_sweep);
    tb_poisson_phase(&s, &clock, 0.5 * r1, 1.5 * span, &next_sweep);
    /* doubling every 10 s from 0.125 to 8 per ms, then halving back */
    for (double r = 0.125; r <= 8; r *= 2) tb_poisson_phase(&s, &clock, r * r1, 10000, &next_sweep);
    for (double r = 8; r >= 0.125; r /= 2) tb_poisson_phase(&s, &clock, r * r1, 10000, &next_sweep);
    /* bursty: 4000 inserts at one timestamp every 5 s over a trickle */
    for (int b = 0; b < 24; ++b) {
        uint64_t at = (uint64_t)clock;
        for (int i = 0; i < (int)(4000 * r1); ++i) tb_stream_insert(&s, at);
        tb_poisson_phase(&s, &clock, 0.1 * r1, 5000, &next_sweep);
    }
    tb_sweep(&s, s.now);
    /* idle gaps: half a span, exactly a span, more than a span */
    tb_idle_gap(&s, &clock, span / 2);
    tb_poisson_phase(&s, &clock, 0.5 * r1, span / 2, &next_sweep);
    tb_idle_gap(&s, &clock, span);
    tb_poisson_phase(&s, &clock, 0.5 * r1, span / 2, &next_sweep);
    tb_idle_gap(&s, &clock, 3 * span);
    /* and a long steady run to the end */
    tb_poisson_phase(&s, &clock, 1.0 * r1, 6 * span, &next_sweep);
    tb_sweep(&s, s.now);
    tb_sweep(&s, s.now + span); /* the last keys at their boundary */
    uint64_t inserts;
    OK(tb_stats(f, s.now, NULL, NULL, NULL, &inserts, NULL));
    assert_int_equal(inserts, s.n);
    print_message(
        "# %zu inserts, %llu keys checked present; slices at most %llu (%llu steady), %.1f bits per element at "
        "most\n",
        s.n, (unsigned long long)s.checked, (unsigned long long)s.max_slices, (unsigned long long)steady_slices,
        s.max_bpe);
    assert_true(s.n >= kStream * 1000000);
    tb_stream_free(&s);
    tf_time_bloom_free(f);

    /* a coarse unit (seconds): many inserts share a timestamp, and a
     * generation often lasts less than one unit */
    f = tb_make_for(0.1, 1000, 100, 22);
    tb_stream_init(&s, f, 200000, 8);
    clock = 1;
    next_sweep = 1000;
    tb_poisson_phase(&s, &clock, 1, 2000, &next_sweep);
    tb_poisson_phase(&s, &clock, 50, 1000, &next_sweep);
    tb_idle_gap(&s, &clock, 700);
    tb_poisson_phase(&s, &clock, 20, 3000, &next_sweep);
    tb_sweep(&s, s.now);
    print_message("# seconds: %zu inserts, %llu keys checked present, slices at most %llu\n", s.n,
                  (unsigned long long)s.checked, (unsigned long long)s.max_slices);
    tb_stream_free(&s);
    tf_time_bloom_free(f);
}

BU_DEFINE_GROUP(time_span_tests, cmocka_unit_test(test_no_false_negatives));
