#include "bloom_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void expect_refused(const unsigned char *blob, size_t len, const tf_deserialize_options *o, tf_status want,
                           bu_load_fn load) {
    size_t memory = 0;
    tf_clear_last_error();
    assert_int_equal(load(blob, len, o, &memory), want);
    assert_true(strlen(tf_last_error_message()) > 0);
    assert_int_equal(memory, 0);
}

void bu_check_max_memory(const unsigned char *blob, size_t len, size_t need, bu_load_fn load) {
    size_t memory = 0;
    /* no limit: NULL, or max_memory 0 */
    assert_int_equal(load(blob, len, NULL, &memory), TF_OK);
    assert_int_equal(memory, need);
    tf_deserialize_options o = TF_DESERIALIZE_OPTIONS_INIT;
    assert_int_equal(o.max_memory, 0);
    assert_int_equal(load(blob, len, &o, &memory), TF_OK);
    /* exactly the need: accepted, and no more is held */
    o.max_memory = need;
    memory = 0;
    assert_int_equal(load(blob, len, &o, &memory), TF_OK);
    assert_true(memory > 0 && memory <= o.max_memory);
    /* below it: refused before anything is allocated */
    o.max_memory = need - 1;
    expect_refused(blob, len, &o, TF_ERR_TOO_LARGE, load);
    assert_non_null(strstr(tf_last_error_message(), "max_memory"));
    o.max_memory = 1;
    expect_refused(blob, len, &o, TF_ERR_TOO_LARGE, load);
    /* options never initialized */
    o.size = 0;
    o.max_memory = need;
    expect_refused(blob, len, &o, TF_ERR_INVALID_ARGUMENT, load);
    o.size = offsetof(tf_deserialize_options, max_memory);
    expect_refused(blob, len, &o, TF_ERR_INVALID_ARGUMENT, load);
    /* a caller compiled against a newer, longer struct: the fields this
     * library knows are read, the rest ignored */
    struct {
        tf_deserialize_options o;
        uint64_t later_field;
    } newer;
    memset(&newer, 0xff, sizeof newer);
    newer.o.size = sizeof newer;
    newer.o.max_memory = need - 1;
    expect_refused(blob, len, &newer.o, TF_ERR_TOO_LARGE, load);
    newer.o.max_memory = need;
    assert_int_equal(load(blob, len, &newer.o, &memory), TF_OK);
}
