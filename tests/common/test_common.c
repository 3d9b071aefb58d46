/* Status codes, error messages, version and clock: the conventions every
 * structure shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "temporalfilters.h"
#include "test_util.h"

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
    assert_int_equal(TF_ERR_TIMEOUT, -14);
    assert_int_equal(TF_ERR_UNAVAILABLE, -15);
    assert_int_equal(TF_STATUS_MIN, -15);
}

static void test_status_strings(void **state) {
    (void)state;
    assert_string_equal(tf_status_string(TF_OK), "TF_OK");
    assert_string_equal(tf_status_string(TF_ERR_CHECKSUM), "TF_ERR_CHECKSUM");
    assert_string_equal(tf_status_string(TF_ERR_INTERNAL), "TF_ERR_INTERNAL");
    assert_string_equal(tf_status_string(TF_ERR_TIMEOUT), "TF_ERR_TIMEOUT");
    assert_string_equal(tf_status_string(TF_ERR_UNAVAILABLE), "TF_ERR_UNAVAILABLE");
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

/* A companion library records its failures through the core's message. */
static void test_set_last_error_message(void **state) {
    (void)state;
    tf_set_last_error_message("redis 127.0.0.1:1 unavailable");
    assert_string_equal(tf_last_error_message(), "redis 127.0.0.1:1 unavailable");
    char longer[2000];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    tf_set_last_error_message(longer);
    assert_int_equal(strlen(tf_last_error_message()), 511);
    tf_set_last_error_message(NULL);
    assert_string_equal(tf_last_error_message(), "");
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

/* ---- versioned structs ------------------------------------------------ */

/* A field of a versioned struct: where it starts and how long it is. */
typedef struct {
    size_t offset, size;
} field;
#define FIELD(T, f) \
    { offsetof(T, f), sizeof(((T *)0)->f) }

/* The fields of a versioned struct in declaration order must follow each
 * other without a gap (no interior padding: every byte a caller gets is a
 * field, or the tail padding after the last one, which is zeroed). */
static void check_no_interior_padding(const char *name, size_t size, const field *fields, size_t count) {
    assert_int_equal(fields[0].offset, 0); /* `size` first */
    for (size_t i = 1; i < count; ++i)
        if (fields[i].offset != fields[i - 1].offset + fields[i - 1].size)
            fail_msg("%s: field %zu starts at %zu, %zu bytes after the end of field %zu", name, i, fields[i].offset,
                     fields[i].offset - (fields[i - 1].offset + fields[i - 1].size), i - 1);
    const size_t end = fields[count - 1].offset + fields[count - 1].size;
    assert_true(end <= size && size - end < 8); /* only tail padding after the last field listed */
}
#define CHECK_FIELDS(T, ...)                                                    \
    do {                                                                        \
        const field f_[] = {__VA_ARGS__};                                       \
        check_no_interior_padding(#T, sizeof(T), f_, sizeof f_ / sizeof f_[0]); \
    } while (0)

static void test_versioned_structs_have_no_interior_padding(void **state) {
    (void)state;
    CHECK_FIELDS(tf_deserialize_options, FIELD(tf_deserialize_options, size),
                 FIELD(tf_deserialize_options, max_memory));
    CHECK_FIELDS(tf_recency_sketch_info, FIELD(tf_recency_sketch_info, size), FIELD(tf_recency_sketch_info, width),
                 FIELD(tf_recency_sketch_info, cells), FIELD(tf_recency_sketch_info, depth),
                 FIELD(tf_recency_sketch_info, seed), FIELD(tf_recency_sketch_info, flags));
    CHECK_FIELDS(tf_age_bloom_info, FIELD(tf_age_bloom_info, size), FIELD(tf_age_bloom_info, k),
                 FIELD(tf_age_bloom_info, l), FIELD(tf_age_bloom_info, slice_bits),
                 FIELD(tf_age_bloom_info, generation), FIELD(tf_age_bloom_info, capacity),
                 FIELD(tf_age_bloom_info, seed), FIELD(tf_age_bloom_info, flags));
    CHECK_FIELDS(tf_age_bloom_stats, FIELD(tf_age_bloom_stats, size), FIELD(tf_age_bloom_stats, slices),
                 FIELD(tf_age_bloom_stats, bits), FIELD(tf_age_bloom_stats, bits_per_element),
                 FIELD(tf_age_bloom_stats, inserts), FIELD(tf_age_bloom_stats, fpr_now));
    CHECK_FIELDS(tf_time_bloom_info, FIELD(tf_time_bloom_info, size), FIELD(tf_time_bloom_info, k),
                 FIELD(tf_time_bloom_info, l), FIELD(tf_time_bloom_info, span), FIELD(tf_time_bloom_info, seed),
                 FIELD(tf_time_bloom_info, flags));
    CHECK_FIELDS(tf_time_bloom_stats, FIELD(tf_time_bloom_stats, size), FIELD(tf_time_bloom_stats, slices),
                 FIELD(tf_time_bloom_stats, bits), FIELD(tf_time_bloom_stats, bits_per_element),
                 FIELD(tf_time_bloom_stats, inserts), FIELD(tf_time_bloom_stats, fpr_now));
    CHECK_FIELDS(tf_rate_limiter_info, FIELD(tf_rate_limiter_info, size), FIELD(tf_rate_limiter_info, limit),
                 FIELD(tf_rate_limiter_info, window), FIELD(tf_rate_limiter_info, bucket_width),
                 FIELD(tf_rate_limiter_info, global_limit), FIELD(tf_rate_limiter_info, max_keys),
                 FIELD(tf_rate_limiter_info, seed), FIELD(tf_rate_limiter_info, flags));
    CHECK_FIELDS(tf_rate_limiter_stats, FIELD(tf_rate_limiter_stats, size), FIELD(tf_rate_limiter_stats, keys),
                 FIELD(tf_rate_limiter_stats, reclaimed), FIELD(tf_rate_limiter_stats, denied_full),
                 FIELD(tf_rate_limiter_stats, allowed_full), FIELD(tf_rate_limiter_stats, memory));
}

/* A getter of a versioned struct, over an object of its structure. */
typedef tf_status (*versioned_get)(const void *obj, void *out);
static tf_status sketch_info(const void *o, void *out) { return tf_recency_sketch_get_info(o, out); }
static tf_status age_info(const void *o, void *out) { return tf_age_bloom_get_info(o, out); }
static tf_status age_stats(const void *o, void *out) { return tf_age_bloom_get_stats(o, out); }
static tf_status time_info(const void *o, void *out) { return tf_time_bloom_get_info(o, out); }
static tf_status time_stats(const void *o, void *out) { return tf_time_bloom_get_stats(o, 5000, out); }
static tf_status limiter_info(const void *o, void *out) { return tf_rate_limiter_get_info(o, out); }
static tf_status limiter_stats(const void *o, void *out) { return tf_rate_limiter_get_stats(o, out); }

/* Two calls into caller buffers filled with 0xAA and with 0x55 (then their
 * `size` set) give the same bytes, all `size` of them: every byte is
 * written, padding included, and none comes from the library's stack. */
static void check_same_bytes(const char *name, const void *obj, versioned_get get, size_t size) {
    unsigned char a[512], b[512];
    assert_true(size <= sizeof a);
    memset(a, 0xAA, sizeof a);
    memset(b, 0x55, sizeof b);
    memcpy(a, &size, sizeof size);
    memcpy(b, &size, sizeof size);
    assert_int_equal(get(obj, a), TF_OK);
    assert_int_equal(get(obj, b), TF_OK);
    for (size_t i = 0; i < size; ++i)
        if (a[i] != b[i]) fail_msg("%s: byte %zu of %zu is 0x%02x or 0x%02x: not written", name, i, size, a[i], b[i]);
    assert_int_equal(a[size], 0xAA); /* nothing past `size` */
    assert_int_equal(b[size], 0x55);
}

static void test_versioned_out_writes_every_byte(void **state) {
    (void)state;
    tf_recency_sketch *s = NULL;
    assert_int_equal(tf_recency_sketch_new(100, 3, 7, TF_RECENCY_SKETCH_BLOCKED, &s), TF_OK);
    assert_int_equal(tf_recency_sketch_update(s, "k", 1, 10), TF_OK);
    check_same_bytes("tf_recency_sketch_info", s, sketch_info, sizeof(tf_recency_sketch_info));
    tf_recency_sketch_free(s);
    for (uint32_t flags = 0; flags <= TF_AGE_BLOOM_BLOCKED; ++flags) {
        tf_age_bloom *f = NULL;
        assert_int_equal(tf_age_bloom_new_for(1000, 0.01, 7, flags, &f), TF_OK);
        assert_int_equal(tf_age_bloom_add(f, "k", 1), TF_OK);
        check_same_bytes("tf_age_bloom_info", f, age_info, sizeof(tf_age_bloom_info));
        check_same_bytes("tf_age_bloom_stats", f, age_stats, sizeof(tf_age_bloom_stats));
        tf_age_bloom_free(f);
    }
    tf_time_bloom *t = NULL;
    assert_int_equal(tf_time_bloom_new_for(1000, 0.01, 1000, 7, 0, &t), TF_OK);
    assert_int_equal(tf_time_bloom_add(t, "k", 1, 10), TF_OK);
    check_same_bytes("tf_time_bloom_info", t, time_info, sizeof(tf_time_bloom_info));
    check_same_bytes("tf_time_bloom_stats", t, time_stats, sizeof(tf_time_bloom_stats));
    tf_time_bloom_free(t);
    for (uint32_t flags = 0; flags <= TF_RATE_LIMITER_EXACT; ++flags) {
        tf_rate_limiter *r = NULL;
        int allowed;
        assert_int_equal(tf_rate_limiter_new(5, 1000, 100, 7, flags, &r), TF_OK);
        assert_int_equal(tf_rate_limiter_set_global_limit(r, 50), TF_OK);
        assert_int_equal(tf_rate_limiter_acquire(r, "k", 1, 10, 1, &allowed, NULL, NULL), TF_OK);
        check_same_bytes("tf_rate_limiter_info", r, limiter_info, sizeof(tf_rate_limiter_info));
        check_same_bytes("tf_rate_limiter_stats", r, limiter_stats, sizeof(tf_rate_limiter_stats));
        tf_rate_limiter_free(r);
    }
}

/* A caller built against a newer header passes a longer options struct:
 * options this library does not know are accepted at their defaults (zero
 * bytes) and refused otherwise, never ignored; a size above 4096 is an
 * uninitialized struct. Through every deserialize. */
static void test_options_unknown_fields_refused(void **state) {
    (void)state;
    tf_recency_sketch *s = NULL;
    tf_age_bloom *a = NULL;
    tf_time_bloom *t = NULL;
    tf_rate_limiter *r = NULL;
    assert_int_equal(tf_recency_sketch_new(16, 2, 1, 0, &s), TF_OK);
    assert_int_equal(tf_age_bloom_new(3, 4, 200, 1, 0, &a), TF_OK);
    assert_int_equal(tf_time_bloom_new(3, 4, 200, 1000, 1, 0, &t), TF_OK);
    assert_int_equal(tf_rate_limiter_new(5, 1000, 100, 1, 0, &r), TF_OK);
    const struct {
        const tu_structure *st;
        const void *obj;
    } all[] = {{&tu_recency_sketch, s}, {&tu_age_bloom, a}, {&tu_time_bloom, t}, {&tu_rate_limiter, r}};
    /* a struct of 4096 bytes: the fields of this version, then zeros */
    union {
        tf_deserialize_options o;
        unsigned char bytes[4097];
    } newer;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        size_t n;
        unsigned char *blob = tu_snapshot(all[i].obj, all[i].st->serialize, &n);
        void *out = NULL;
        memset(&newer, 0, sizeof newer);
        newer.o.size = sizeof newer.o + 24; /* three later options, at their defaults */
        newer.o.max_memory = 1 << 30;
        assert_int_equal(all[i].st->deserialize(blob, n, &newer.o, &out), TF_OK);
        all[i].st->free(out);
        newer.o.size = 4096;
        assert_int_equal(all[i].st->deserialize(blob, n, &newer.o, &out), TF_OK);
        all[i].st->free(out);
        const size_t set[] = {sizeof newer.o, sizeof newer.o + 13, 4095};
        for (size_t j = 0; j < sizeof set / sizeof set[0]; ++j) { /* an option set that this version lacks */
            out = NULL;
            newer.bytes[set[j]] = 1;
            TU_REFUSED_NEW(all[i].st->deserialize(blob, n, &newer.o, &out), TF_ERR_INVALID_ARGUMENT, out);
            assert_non_null(strstr(tf_last_error_message(), "unknown to this library version"));
            newer.bytes[set[j]] = 0;
        }
        newer.o.size = 4097; /* more than any version */
        TU_REFUSED_NEW(all[i].st->deserialize(blob, n, &newer.o, &out), TF_ERR_INVALID_ARGUMENT, out);
        assert_non_null(strstr(tf_last_error_message(), "_INIT"));
        newer.o.size = (size_t)-1;
        TU_REFUSED_NEW(all[i].st->deserialize(blob, n, &newer.o, &out), TF_ERR_INVALID_ARGUMENT, out);
        free(blob);
    }
    tf_recency_sketch_free(s);
    tf_age_bloom_free(a);
    tf_time_bloom_free(t);
    tf_rate_limiter_free(r);
}

/* A versioned result struct of more than 4096 bytes was never initialized. */
static void test_versioned_out_size_bound(void **state) {
    (void)state;
    tf_rate_limiter *r = NULL;
    assert_int_equal(tf_rate_limiter_new(5, 1000, 100, 1, 0, &r), TF_OK);
    union {
        tf_rate_limiter_info info;
        unsigned char bytes[4097];
    } big;
    memset(&big, 0, sizeof big);
    big.info.size = 4096;
    assert_int_equal(tf_rate_limiter_get_info(r, &big.info), TF_OK);
    assert_int_equal(big.info.limit, 5);
    memset(&big, 0, sizeof big);
    big.info.size = 4097;
    TU_REFUSED(tf_rate_limiter_get_info(r, &big.info), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(big.info.limit, 0); /* nothing written */
    tf_rate_limiter_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_values_are_pinned),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_last_error_message),
        cmocka_unit_test(test_set_last_error_message),
        cmocka_unit_test(test_last_error_is_thread_local),
        cmocka_unit_test(test_free_null_is_noop),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_versioned_structs_have_no_interior_padding),
        cmocka_unit_test(test_versioned_out_writes_every_byte),
        cmocka_unit_test(test_options_unknown_fields_refused),
        cmocka_unit_test(test_versioned_out_size_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
