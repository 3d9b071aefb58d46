/* RecencySketch and bad input: every refused argument gets its status and a
 * message, and leaves the sketch as it was. */
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

static void test_new_bad_input(void **state) {
    (void)state;
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0, NULL), TF_ERR_NULL);
    assert_int_equal(tf_recency_sketch_new(0, 2, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 0, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 33, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 9, 0, TF_RECENCY_SKETCH_BLOCKED, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0x4, &s), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0x80000000u, &s), TF_ERR_INVALID_ARGUMENT);
    /* sizes whose product overflows, or that exceed the address space */
    assert_int_equal(tf_recency_sketch_new(UINT64_MAX, 2, 0, 0, &s), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_new(1ULL << 62, 4, 0, 0, &s), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_new(1ULL << 61, 1, 0, 0, &s), TF_ERR_TOO_LARGE);
    assert_int_equal(tf_recency_sketch_new((1ULL << 61) / 3, 32, 0, TF_RECENCY_SKETCH_BLOCKED, &s),
                     TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(tf_recency_sketch_new((1ULL << 61) / 3, 8, 0, TF_RECENCY_SKETCH_BLOCKED, &s), TF_ERR_TOO_LARGE);
    assert_null(s);
    assert_true(strlen(tf_last_error_message()) > 0);
}

/* Every failing call on a live sketch returns its status, says why, and
 * leaves the sketch exactly as it was. */
static void test_calls_bad_input(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 4, 1000);
        size_t n;
        unsigned char *before = snap(s, &n);
        uint64_t t;
        int g;
        double p;
#define BAD(call, status) TU_REFUSED_UNCHANGED(call, status, s, tu_recency_sketch.serialize, before, n)
        BAD(tf_recency_sketch_update(NULL, "k", 1, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_update(s, NULL, 1, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_update(s, "k", 1, 0), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_query(NULL, "k", 1, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_query(s, NULL, 3, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_query(s, "k", 1, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(NULL, "k", 1, 5, 1, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(s, NULL, 1, 5, 1, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(s, "k", 1, 5, 1, NULL, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_pace(s, "k", 1, 0, 1, &g, &t), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_pace(s, "k", 1, 5, 0, &g, &t), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_ttl_insert(NULL, "k", 1, 5, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_insert(s, NULL, 1, 5, 5), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_insert(s, "k", 1, 0, 5), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_ttl_insert(s, "k", 1, 5, 0), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_ttl_maybe_live(NULL, "k", 1, 5, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_maybe_live(s, NULL, 1, 5, &g, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_maybe_live(s, "k", 1, 5, NULL, &t), TF_ERR_NULL);
        BAD(tf_recency_sketch_ttl_maybe_live(s, "k", 1, 0, &g, &t), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_recency_sketch_merge(NULL, s), TF_ERR_NULL);
        BAD(tf_recency_sketch_merge(s, NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_clear(NULL), TF_ERR_NULL);
        BAD(tf_recency_sketch_error_estimate(NULL, 0, &p), TF_ERR_NULL);
        BAD(tf_recency_sketch_error_estimate(s, 0, NULL), TF_ERR_NULL);
#undef BAD
        /* serialized_size, serialize, memory and get_info */
        tu_check_refused_calls(&tu_recency_sketch, s, sizeof(tf_recency_sketch_info));
        free(before);
        tf_recency_sketch_free(s);
    }
}

TU_MAIN(test_new_bad_input, test_calls_bad_input)
