/* The time-limited Bloom filter's suite (test_time_bloom; sections 6-7 of
 * "Time-limited Bloom Filter", Rodrigues, Shtul, Baquero, Almeida, ACM SAC
 * 2023), one file per concern, run in this order:
 *   time_shape.c   the shape, info and stats, the span boundary
 *   time_span.c    no false negatives within the span
 *   time_fpr.c     the measured false-positive rate
 *   time_adapt.c   section 7.1: rates, bursts, clocks, gaps
 *   time_ops.c     add_if_absent, clear, stats, seeds
 *   time_input.c   bad input, the slice limit
 *   time_wire.c    the wire format, the golden blob (with bloom_wire.c)
 * The helpers they share with the age-partitioned filter's suite are in
 * bloom_util.{c,h}. */
#include "bloom_util.h"

#define TIME_GROUPS(X)  \
    X(time_shape_tests) \
    X(time_span_tests) X(time_fpr_tests) X(time_adapt_tests) X(time_ops_tests) X(time_input_tests) X(time_wire_tests)
BU_MAIN(TIME_GROUPS)
