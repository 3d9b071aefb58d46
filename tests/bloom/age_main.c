/* The age-partitioned Bloom filter's suite (test_age_bloom; section 5 of
 * "Time-limited Bloom Filter", Rodrigues, Shtul, Baquero, Almeida, ACM SAC
 * 2023), one file per concern, run in this order. The helpers they share
 * with the time-limited filter's suite are in bloom_util.{c,h}. */
#include "bloom_util.h"

BU_GROUP(age_model_tests);   /* age_model.c: the false-positive model, the chooser */
BU_GROUP(age_window_tests);  /* age_window.c: the shape and the window guarantee */
BU_GROUP(age_fpr_tests);     /* age_fpr.c: the measured false-positive rate */
BU_GROUP(age_ops_tests);     /* age_ops.c: keys, seeds, add_if_absent, clear, info, stats */
BU_GROUP(age_input_tests);   /* age_input.c: bad input */
BU_GROUP(age_wire_tests);    /* age_wire.c: the wire format, the golden blob */
BU_GROUP(age_blocked_tests); /* age_blocked.c: the blocked layout (test_blocked_*) */

int main(void) {
    const bu_group groups[] = {
        {age_model_tests, age_model_tests_count},     {age_window_tests, age_window_tests_count},
        {age_fpr_tests, age_fpr_tests_count},         {age_ops_tests, age_ops_tests_count},
        {age_input_tests, age_input_tests_count},     {age_wire_tests, age_wire_tests_count},
        {age_blocked_tests, age_blocked_tests_count},
    };
    return bu_run_groups(groups, sizeof groups / sizeof groups[0]);
}
