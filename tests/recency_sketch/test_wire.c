/* RecencySketch's wire format (kind 1): round trips, the serialize contract,
 * truncated, flipped and hostile blobs, deserialize's memory limit and the
 * golden blobs of tests/data. */
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

#include "golden.h"
#include "sketch_util.h"
#include "temporalfilters.h"
#include "test_util.h"

static void test_serialize_round_trip(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_recency_sketch *s = random_sketch(kModes[m], 21, 3000);
        size_t n;
        unsigned char *blob = snap(s, &n);
        assert_int_equal(n, 28 + 24 + 512 * 3 * 8);
        tu_check_envelope(blob, n, 1, kModes[m]);
        tf_recency_sketch *c = NULL;
        OK(tf_recency_sketch_deserialize(blob, n, NULL, &c));
        assert_true(same(s, c));
        const tf_recency_sketch_info i1 = info_of(s), i2 = info_of(c);
        assert_true(i1.width == i2.width && i1.depth == i2.depth && i1.seed == i2.seed && i1.flags == i2.flags &&
                    i1.cells == i2.cells);
        for (uint64_t id = 0; id < 6000; ++id) assert_int_equal(qry(s, id), qry(c, id));
        /* the copy keeps working and stays independent */
        upd(c, 1, 1000000);
        assert_int_equal(qry(c, 1), 1000000);
        assert_true(qry(s, 1) < 1000000);
        free(blob);
        tf_recency_sketch_free(c);
        tf_recency_sketch_free(s);
    }
}

static void test_serialize_buffer_too_small(void **state) {
    (void)state;
    tf_recency_sketch *s = random_sketch(0, 3, 100);
    tu_check_serialize_contract(s, &tu_recency_sketch);
    tf_recency_sketch_free(s);
}

static void test_deserialize_truncated(void **state) {
    (void)state;
    tf_recency_sketch *s = random_sketch(TF_RECENCY_SKETCH_BLOCKED, 3, 100);
    tu_check_blob_of(s, tu_recency_sketch.serialize, tu_check_truncations, try_blob);
    tf_recency_sketch_free(s);
}

/* Every single-bit flip is caught, with the status its field calls for. */
static void test_deserialize_bit_flips(void **state) {
    (void)state;
    tf_recency_sketch *s = make(40, 2, 9, TF_RECENCY_SKETCH_CONCURRENT);
    for (uint64_t i = 0; i < 50; ++i) upd(s, i, 100 + i);
    tu_check_blob_of(s, tu_recency_sketch.serialize, tu_check_bit_flips, try_blob);
    tf_recency_sketch_free(s);
}

/* Blobs with a valid checksum but wrong fields: each gets its status and
 * nothing is allocated from a hostile size. */
static void test_deserialize_hostile_fields(void **state) {
    (void)state;
    tf_recency_sketch *s = make(16, 2, 9, 0);
    upd(s, 1, 5);
    size_t n;
    unsigned char *good = snap(s, &n);
    const tu_field_case cases[] = {
        {4, 2, 2, TF_ERR_UNSUPPORTED_VERSION},                               /* a future format version */
        {4, 0, 2, TF_ERR_UNSUPPORTED_VERSION}, {6, 2, 2, TF_ERR_WRONG_KIND}, /* another structure's blob */
        {6, 6, 2, TF_ERR_WRONG_KIND},          {6, 999, 2, TF_ERR_WRONG_KIND},
        {8, 0x4, 4, TF_ERR_CORRUPT},                                       /* undefined flag bit */
        {8, 0x80000000u, 4, TF_ERR_CORRUPT},   {20, 0, 8, TF_ERR_CORRUPT}, /* width 0 */
        {20, 17, 8, TF_ERR_CORRUPT},                                       /* width disagrees with the cells */
        {20, 1ULL << 61, 8, TF_ERR_CORRUPT},                               /* huge width: rejected, not allocated */
        {20, UINT64_MAX, 8, TF_ERR_CORRUPT},   {28, 0, 4, TF_ERR_CORRUPT}, /* depth 0 */
        {28, 33, 4, TF_ERR_CORRUPT},                                       /* depth too large */
        {36, 33, 8, TF_ERR_CORRUPT},                                       /* cell count disagrees */
        {36, UINT64_MAX, 8, TF_ERR_CORRUPT},
    };
    tu_check_field_cases(good, n, cases, sizeof cases / sizeof cases[0], try_blob);
    /* blocked flag with a width whose whole lines disagree with the cells */
    unsigned char *b = malloc(n);
    assert_non_null(b);
    memcpy(b, good, n);
    tu_put_le(b + 8, TF_RECENCY_SKETCH_BLOCKED, 4);
    tu_put_le(b + 20, 20, 8);
    tu_fix_checksum(b, n);
    assert_int_equal(try_blob(b, n), TF_ERR_CORRUPT);
    free(b);
    free(good);
    tf_recency_sketch_free(s);
}

static void test_deserialize_random_and_null(void **state) {
    (void)state;
    tu_check_random_blobs(1, TF_RECENCY_SKETCH_CONCURRENT | TF_RECENCY_SKETCH_BLOCKED, 2024, 512, NULL, NULL, try_blob);
    tu_check_deserialize_nulls(&tu_recency_sketch);
}

/* options->max_memory bounds the sketch deserialize makes: its memory is
 * known from the blob's shape before anything is allocated. */
/* Checks max_memory on the blob of `s`, and frees `s`. */
static void check_max_memory_of(tf_recency_sketch *s) {
    size_t n, bytes;
    unsigned char *blob = snap(s, &n);
    OK(tf_recency_sketch_memory(s, &bytes));
    assert_int_equal(tu_check_max_memory(blob, n, &tu_recency_sketch), bytes);
    free(blob);
    tf_recency_sketch_free(s);
}

static void test_deserialize_max_memory(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) check_max_memory_of(random_sketch(kModes[m], 8, 500));
    /* a table of 4 MiB and more is mapped, in whole pages: known too */
    const uint64_t widths[] = {(1u << 19) - 8, 1u << 19, (1u << 19) + 3};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) check_max_memory_of(make(widths[i], 1, 3, 0));
}

typedef struct {
    const tf_recency_sketch *s;
    unsigned never;
} golden_check;

/* One line of a golden .expected file: the key's last-seen time. */
static void check_answer(const unsigned char *key, size_t key_len, const unsigned long long *want, void *ctx) {
    golden_check *g = ctx;
    uint64_t t;
    OK(tf_recency_sketch_query(g->s, key, key_len, &t));
    assert_int_equal(t, want[0]);
    g->never += want[0] == 0;
}

static void check_golden(const char *name, uint32_t flags) {
    /* the same operations today give the same bytes, and the blob reads
     * back with the recorded answers */
    tf_recency_sketch *built = NULL;
    OK(golden_recency_sketch(flags, &built));
    tf_recency_sketch *s = tu_golden_read(name, built, &tu_recency_sketch);
    golden_check g = {s, 0};
    assert_int_equal(tu_for_each_answer(name, 1, check_answer, &g), GOLDEN_RS_KEYS + 1);
    assert_true(g.never > 0 && g.never <= GOLDEN_RS_KEYS - GOLDEN_RS_INSERTED);
    uint64_t t;
    OK(tf_recency_sketch_query(s, golden_binary_key, sizeof golden_binary_key, &t));
    assert_int_equal(t, 123456789);
    tf_recency_sketch_free(s);
    tf_recency_sketch_free(built);
}

static void test_golden_blobs(void **state) {
    (void)state;
    check_golden("recency_sketch_v1", 0);
    check_golden("recency_sketch_blocked_v1", TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT);
}

TU_MAIN(test_serialize_round_trip, test_serialize_buffer_too_small, test_deserialize_truncated,
        test_deserialize_bit_flips, test_deserialize_hostile_fields, test_deserialize_random_and_null,
        test_deserialize_max_memory, test_golden_blobs)
