/* Rotating cuckoo filter: every bad argument gets its documented status
 * and a message, makes nothing, and leaves the filter as it was. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cuckoo_util.h"

static void refused_options(tf_rotating_cuckoo_options o, tf_status want) {
    tf_rotating_cuckoo *f = NULL;
    TU_REFUSED_NEW(tf_rotating_cuckoo_new(&o, &f), want, f);
}

static void test_bad_options(void **state) {
    (void)state;
    const tf_rotating_cuckoo_options good = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    tf_rotating_cuckoo_options o;
    TU_REFUSED(tf_rotating_cuckoo_new(&good, NULL), TF_ERR_NULL);
    o = good, o.size = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.size = sizeof o - 1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.size = 5000, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.table_slots = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.table_slots = 3000, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.table_slots = 4, refused_options(o, TF_ERR_INVALID_ARGUMENT); /* one bucket of 4 */
    o = good, o.table_slots = (uint64_t)1 << 37, refused_options(o, TF_ERR_TOO_LARGE);
    o = good, o.table_slots = UINT64_MAX, refused_options(o, TF_ERR_TOO_LARGE);
    o = good, o.table_slots = (uint64_t)1 << 36, refused_options(o, TF_ERR_TOO_LARGE); /* above 64 MiB */
    o = good, o.max_memory = 16384 * 8, refused_options(o, TF_ERR_TOO_LARGE);
    o = good, o.max_memory = 0, refused_options(o, TF_ERR_TOO_LARGE);
    o = good, o.slots_per_bucket = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.slots_per_bucket = 3, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.slots_per_bucket = 16, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_occupancy = NAN, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_occupancy = -0.5, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_occupancy = 1.01, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_occupancy = INFINITY, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_kicks = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_kicks = TF_ROTATING_CUCKOO_MAX_KICKS + 1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_tables = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.max_tables = TF_ROTATING_CUCKOO_MAX_TABLES + 1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.flags = 0x2, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.flags = 0x80000000u, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    /* a newer caller's struct: unknown bytes must be zero */
    struct {
        tf_rotating_cuckoo_options o;
        uint64_t later;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.o = good;
    newer.o.size = sizeof newer;
    tf_rotating_cuckoo *f = NULL;
    assert_int_equal(tf_rotating_cuckoo_new(&newer.o, &f), TF_OK);
    tf_rotating_cuckoo_free(f);
    f = NULL;
    newer.later = 1;
    TU_REFUSED_NEW(tf_rotating_cuckoo_new(&newer.o, &f), TF_ERR_INVALID_ARGUMENT, f);
    /* the edges that are accepted */
    o = good, o.table_slots = 8, o.max_occupancy = 1.0, o.max_kicks = TF_ROTATING_CUCKOO_MAX_KICKS;
    o.max_tables = TF_ROTATING_CUCKOO_MAX_TABLES, o.slots_per_bucket = 4;
    f = ck_new(&o);
    tf_rotating_cuckoo_free(f);
}

static void test_bad_calls_leave_filter_unchanged(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(256, 4, 2, 0);
    o.ttl = 1000;
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 300; ++i) ck_add(f, i, 10 + i);
    size_t len;
    unsigned char *before = tu_snapshot(f, tu_rotating_cuckoo.serialize, &len);
    const tu_serialize_fn ser = tu_rotating_cuckoo.serialize;
    tu_key k = ck_key(5);
    int out = -1;
    TU_REFUSED(tf_rotating_cuckoo_add(NULL, k.b, 9, 10), TF_ERR_NULL);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add(f, NULL, 9, 10), TF_ERR_NULL, f, ser, before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add(f, k.b, 9, 0), TF_ERR_INVALID_ARGUMENT, f, ser, before, len);
    TU_REFUSED(tf_rotating_cuckoo_contains(NULL, k.b, 9, 10, &out), TF_ERR_NULL);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_contains(f, NULL, 9, 10, &out), TF_ERR_NULL, f, ser, before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_contains(f, k.b, 9, 10, NULL), TF_ERR_NULL, f, ser, before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_contains(f, k.b, 9, 0, &out), TF_ERR_INVALID_ARGUMENT, f, ser, before, len);
    TU_REFUSED(tf_rotating_cuckoo_remove(NULL, k.b, 9, 10, &out), TF_ERR_NULL);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_remove(f, NULL, 9, 10, &out), TF_ERR_NULL, f, ser, before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_remove(f, k.b, 9, 0, &out), TF_ERR_INVALID_ARGUMENT, f, ser, before, len);
    TU_REFUSED(tf_rotating_cuckoo_add_if_absent(NULL, k.b, 9, 10, &out), TF_ERR_NULL);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent(f, NULL, 9, 10, &out), TF_ERR_NULL, f, ser, before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent(f, k.b, 9, 10, NULL), TF_ERR_NULL, f, ser, before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent(f, k.b, 9, 0, &out), TF_ERR_INVALID_ARGUMENT, f, ser, before,
                         len);
    assert_int_equal(out, -1); /* no out-parameter written */
    /* batches: every argument checked before anything changes */
    tu_key keys[3] = {ck_key(900), ck_key(901), ck_key(902)};
    const void *ptrs[3] = {keys[0].b, NULL, keys[2].b};
    size_t lens[3] = {9, 9, 9};
    int res[3] = {-1, -1, -1};
    TU_REFUSED(tf_rotating_cuckoo_add_if_absent_batch(NULL, ptrs, lens, 3, 10, res), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, lens, 3, 10, res), TF_ERR_NULL);
    assert_non_null(strstr(tf_last_error_message(), "keys[1]"));
    tu_assert_blob(f, ser, before, len);
    ptrs[1] = keys[1].b;
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent_batch(f, NULL, lens, 3, 10, res), TF_ERR_NULL, f, ser, before,
                         len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, NULL, 3, 10, res), TF_ERR_NULL, f, ser, before,
                         len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, lens, 3, 10, NULL), TF_ERR_NULL, f, ser,
                         before, len);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, lens, 3, 0, res), TF_ERR_INVALID_ARGUMENT, f,
                         ser, before, len);
    TU_REFUSED(tf_rotating_cuckoo_contains_batch(NULL, ptrs, lens, 3, 10, res), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_contains_batch(f, ptrs, lens, 3, 10, NULL), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_contains_batch(f, ptrs, lens, 3, 0, res), TF_ERR_INVALID_ARGUMENT);
    assert_int_equal(res[0], -1);
    /* getters */
    tf_rotating_cuckoo_stats s = TF_ROTATING_CUCKOO_STATS_INIT;
    TU_REFUSED(tf_rotating_cuckoo_get_stats(NULL, 10, &s), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_get_stats(f, 10, NULL), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_get_stats(f, 0, &s), TF_ERR_INVALID_ARGUMENT);
    s.size = 0;
    TU_REFUSED(tf_rotating_cuckoo_get_stats(f, 10, &s), TF_ERR_INVALID_ARGUMENT);
    tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
    TU_REFUSED(tf_rotating_cuckoo_get_table(NULL, 0, 10, &t), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_get_table(f, 0, 10, NULL), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_get_table(f, 0, 0, &t), TF_ERR_INVALID_ARGUMENT);
    TU_REFUSED(tf_rotating_cuckoo_get_table(f, UINT64_MAX, 10, &t), TF_ERR_INVALID_ARGUMENT);
    TU_REFUSED(tf_rotating_cuckoo_get_info(NULL, NULL), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_memory(NULL, NULL), TF_ERR_NULL);
    TU_REFUSED(tf_rotating_cuckoo_clear(NULL), TF_ERR_NULL);
    tu_check_refused_calls(&tu_rotating_cuckoo, f, sizeof(tf_rotating_cuckoo_info));
    tu_assert_blob(f, ser, before, len);
    free(before);
    tf_rotating_cuckoo_free(f);
}

TU_MAIN(test_bad_options, test_bad_calls_leave_filter_unchanged)
