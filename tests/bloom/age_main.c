/* The age-partitioned Bloom filter's suite (test_age_bloom; section 5 of
 * "Time-limited Bloom Filter", Rodrigues, Shtul, Baquero, Almeida, ACM SAC
 * 2023), one file per concern, run in this order:
 *   age_model.c    the false-positive model, the chooser
 *   age_probes.c   the query's cost model, the chooser's probe budget
 *   age_batch.c    the batch calls, of both Bloom filters
 *   age_window.c   the shape and the window guarantee
 *   age_fpr.c      the measured false-positive rate
 *   age_ops.c      keys, seeds, add_if_absent, clear, info, stats
 *   age_input.c    bad input
 *   age_wire.c     the wire format, the golden blob (with bloom_wire.c)
 *   age_blocked.c  the blocked layout (test_blocked_*)
 * The helpers they share with the time-limited filter's suite are in
 * bloom_util.{c,h}. */
#include "bloom_util.h"

#define AGE_MODEL_GROUPS(X) X(age_model_tests) X(age_probes_tests) X(age_batch_tests)
#define AGE_GROUPS(X)   \
    AGE_MODEL_GROUPS(X) \
    X(age_window_tests) X(age_fpr_tests) X(age_ops_tests) X(age_input_tests) X(age_wire_tests) X(age_blocked_tests)
BU_MAIN(AGE_GROUPS)
