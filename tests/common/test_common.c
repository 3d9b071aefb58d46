/* Status codes, error messages, version and clock: the conventions every
 * structure shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "temporalfilters.h"

static void test_status_values_are_pinned(void **state) {
    (void)state;
    /* These values are ABI: they never change. */
    assert_int_equal(TF_OK, 0);
    assert_int_equal(TF_ERR_NULL, -1);
    assert_int_equal(TF_ERR_INVALID_ARGUMENT, -2);
    assert_int_equal(TF_ERR_OUT_OF_MEMORY, -3);
    assert_int_equal(TF_ERR_TOO_LARGE, -4);
    assert_int_equal(TF_ERR_BUFFER_TOO_SMALL, -5);
    assert_int_equal(TF_ERR_TRUNCATED, -6);
    assert_int_equal(TF_ERR_BAD_MAGIC, -7);
    assert_int_equal(TF_ERR_UNSUPPORTED_VERSION, -8);
    assert_int_equal(TF_ERR_WRONG_KIND, -9);
    assert_int_equal(TF_ERR_CHECKSUM, -10);
    assert_int_equal(TF_ERR_CORRUPT, -11);
    assert_int_equal(TF_ERR_INCOMPATIBLE, -12);
    assert_int_equal(TF_ERR_INTERNAL, -13);
    assert_int_equal(TF_STATUS_MIN, -13);
}

static void test_status_strings(void **state) {
    (void)state;
    assert_string_equal(tf_status_string(TF_OK), "TF_OK");
    assert_string_equal(tf_status_string(TF_ERR_CHECKSUM), "TF_ERR_CHECKSUM");
    assert_string_equal(tf_status_string(TF_ERR_INTERNAL), "TF_ERR_INTERNAL");
    /* every defined code has its own name; unknown codes a fixed one */
    for (int s = TF_STATUS_MIN; s <= 0; ++s) {
        const char *name = tf_status_string(s);
        assert_non_null(name);
        assert_string_not_equal(name, "TF_ERR_UNKNOWN");
        for (int t = TF_STATUS_MIN; t < s; ++t) assert_string_not_equal(name, tf_status_string(t));
    }
    assert_string_equal(tf_status_string(1), "TF_ERR_UNKNOWN");
    assert_string_equal(tf_status_string(TF_STATUS_MIN - 1), "TF_ERR_UNKNOWN");
    assert_string_equal(tf_status_string(-2147483647 - 1), "TF_ERR_UNKNOWN");
}

static void test_version(void **state) {
    (void)state;
    assert_string_equal(tf_version_string(), TF_VERSION_STRING);
    assert_int_equal(tf_version_number(), TF_VERSION_NUMBER);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", TF_VERSION_MAJOR, TF_VERSION_MINOR, TF_VERSION_PATCH);
    assert_string_equal(tf_version_string(), expect);
}

static void test_last_error_message(void **state) {
    (void)state;
    tf_clear_last_error();
    assert_string_equal(tf_last_error_message(), "");
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(0, 4, 0, 0, &s), TF_ERR_INVALID_ARGUMENT);
    assert_null(s);
    assert_non_null(strstr(tf_last_error_message(), "width"));
    /* a successful call does not clear it */
    assert_int_equal(tf_recency_sketch_new(8, 2, 0, 0, &s), TF_OK);
    assert_non_null(strstr(tf_last_error_message(), "width"));
    tf_recency_sketch_free(s);
    tf_clear_last_error();
    assert_string_equal(tf_last_error_message(), "");
}

static void *fail_in_thread(void *arg) {
    (void)arg;
    tf_recency_sketch *s = NULL;
    tf_recency_sketch_new(8, 0, 0, 0, &s); /* depth error */
    return (void *)(strstr(tf_last_error_message(), "depth") != NULL ? (void *)1 : NULL);
}

static void test_last_error_is_thread_local(void **state) {
    (void)state;
    tf_clear_last_error();
    pthread_t t;
    void *ret = NULL;
    assert_int_equal(pthread_create(&t, NULL, fail_in_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_non_null(ret);                             /* the thread saw its own message */
    assert_string_equal(tf_last_error_message(), ""); /* and ours is untouched */
}

static void test_free_null_is_noop(void **state) {
    (void)state;
    tf_recency_sketch_free(NULL);
}

static void test_clock(void **state) {
    (void)state;
    uint64_t a = tf_clock_now_ms();
    uint64_t b = tf_clock_now_ms();
    assert_true(a >= 1);
    assert_true(a > 1600000000000ULL); /* after 2020 */
    assert_true(b + 1000 >= a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_values_are_pinned),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_last_error_message),
        cmocka_unit_test(test_last_error_is_thread_local),
        cmocka_unit_test(test_free_null_is_noop),
        cmocka_unit_test(test_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
