/* The time-limited Bloom filter's suite (test_time_bloom; sections 6-7 of
 * "Time-limited Bloom Filter", Rodrigues, Shtul, Baquero, Almeida, ACM SAC
 * 2023), one file per concern, run in this order. The helpers they share
 * with the age-partitioned filter's suite are in bloom_util.{c,h}. */
#include "bloom_util.h"

BU_GROUP(time_shape_tests); /* time_shape.c: the shape, info and stats, the span boundary */
BU_GROUP(time_span_tests);  /* time_span.c: no false negatives within the span */
BU_GROUP(time_fpr_tests);   /* time_fpr.c: the measured false-positive rate */
BU_GROUP(time_adapt_tests); /* time_adapt.c: section 7.1, rates, bursts, clocks, gaps */
BU_GROUP(time_ops_tests);   /* time_ops.c: add_if_absent, clear, stats, seeds */
BU_GROUP(time_input_tests); /* time_input.c: bad input, the slice limit */
BU_GROUP(time_wire_tests);  /* time_wire.c: the wire format, the golden blob */

int main(void) {
    const bu_group groups[] = {
        {time_shape_tests, time_shape_tests_count}, {time_span_tests, time_span_tests_count},
        {time_fpr_tests, time_fpr_tests_count},     {time_adapt_tests, time_adapt_tests_count},
        {time_ops_tests, time_ops_tests_count},     {time_input_tests, time_input_tests_count},
        {time_wire_tests, time_wire_tests_count},
    };
    return bu_run_groups(groups, sizeof groups / sizeof groups[0]);
}
