/* Recency window: every bad argument gets its documented status and a
 * message, makes nothing, writes no out-parameter and leaves the structure
 * as it was (its blob before and after). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rw_util.h"

static void refused_options(tf_recency_window_options o, tf_status want) {
    tf_recency_window *w = NULL;
    TU_REFUSED_NEW(tf_recency_window_new(&o, &w), want, w);
    size_t bytes = 777;
    if (want != TF_ERR_TOO_LARGE || o.window > TF_RECENCY_WINDOW_MAX_WINDOW) {
        TU_REFUSED(tf_recency_window_memory_for(&o, &bytes), want);
        assert_int_equal(bytes, 777);
    }
}

static void test_bad_options(void **state) {
    (void)state;
    const tf_recency_window_options good = TF_RECENCY_WINDOW_OPTIONS_INIT;
    tf_recency_window_options o;
    TU_REFUSED(tf_recency_window_new(&good, NULL), TF_ERR_NULL);
    TU_REFUSED(tf_recency_window_memory_for(&good, NULL), TF_ERR_NULL);
    o = good, o.size = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.size = sizeof o - 5, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.size = 5000, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.window = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.window = TF_RECENCY_WINDOW_MAX_WINDOW + 1, refused_options(o, TF_ERR_TOO_LARGE);
    o = good, o.window = UINT64_MAX, refused_options(o, TF_ERR_TOO_LARGE);
    o = good, o.inv_eps = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.inv_eps = TF_RECENCY_WINDOW_MAX_INV_EPS + 1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.inv_eps = UINT64_MAX, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    for (uint32_t mode = 0; mode < 3; ++mode) {
        o = good, o.mode = mode, o.inv_eps = 0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.flags = 1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.flags = 0x80000000u, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.delta = NAN, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.delta = -0.1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.delta = 1.0, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.delta = INFINITY, refused_options(o, TF_ERR_INVALID_ARGUMENT);
        o = good, o.mode = mode, o.max_memory = 1000, refused_options(o, TF_ERR_TOO_LARGE);
    }
    o = good, o.mode = 3, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.mode = UINT32_MAX, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.block = 5, refused_options(o, TF_ERR_INVALID_ARGUMENT); /* block outside OptimalSM */
    o = good, o.mode = TF_RECENCY_WINDOW_EXACT, o.block = 1, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.mode = TF_RECENCY_WINDOW_OPTIMAL_SM, o.block = good.window + 1,
    refused_options(o, TF_ERR_INVALID_ARGUMENT);
    o = good, o.mode = TF_RECENCY_WINDOW_OPTIMAL_SM, o.block = UINT64_MAX, refused_options(o, TF_ERR_INVALID_ARGUMENT);
    /* a newer caller's struct: unknown bytes must be zero */
    struct {
        tf_recency_window_options o;
        uint64_t later;
    } newer;
    memset(&newer, 0, sizeof newer);
    newer.o = good;
    newer.o.size = sizeof newer;
    tf_recency_window *w = NULL;
    assert_int_equal(tf_recency_window_new(&newer.o, &w), TF_OK);
    tf_recency_window_free(w);
    w = NULL;
    newer.later = 1;
    TU_REFUSED_NEW(tf_recency_window_new(&newer.o, &w), TF_ERR_INVALID_ARGUMENT, w);
    /* the edges that are accepted */
    o = good, o.window = 1, o.inv_eps = TF_RECENCY_WINDOW_MAX_INV_EPS;
    w = rw_new(&o);
    tf_recency_window_free(w);
    o = good, o.window = 1, o.inv_eps = 1, o.delta = 0.999;
    w = rw_new(&o);
    tf_recency_window_free(w);
    o = good, o.mode = TF_RECENCY_WINDOW_OPTIMAL_SM, o.window = 10, o.block = 10;
    w = rw_new(&o);
    tf_recency_window_free(w);
    size_t need = 0;
    o = good;
    assert_int_equal(tf_recency_window_memory_for(&o, &need), TF_OK);
    o.max_memory = need;
    w = rw_new(&o);
    tf_recency_window_free(w);
    o.max_memory = need - 1;
    refused_options(o, TF_ERR_TOO_LARGE);
}

static void test_bad_calls_leave_structure_unchanged(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 300, 4);
        tf_recency_window *w = rw_new(&o);
        for (uint64_t i = 0; i < 500; ++i) rw_insert(w, i % 350);
        size_t len;
        unsigned char *before = tu_snapshot(w, tu_recency_window.serialize, &len);
        const tu_serialize_fn ser = tu_recency_window.serialize;
        tu_key k = rw_key(5);
        uint64_t out = 4242;
        TU_REFUSED(tf_recency_window_insert(NULL, k.b, 9), TF_ERR_NULL);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert(w, NULL, 9), TF_ERR_NULL, w, ser, before, len);
        TU_REFUSED(tf_recency_window_query(NULL, k.b, 9, &out), TF_ERR_NULL);
        TU_REFUSED_UNCHANGED(tf_recency_window_query(w, NULL, 9, &out), TF_ERR_NULL, w, ser, before, len);
        TU_REFUSED_UNCHANGED(tf_recency_window_query(w, k.b, 9, NULL), TF_ERR_NULL, w, ser, before, len);
        TU_REFUSED(tf_recency_window_insert_report(NULL, k.b, 9, &out), TF_ERR_NULL);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_report(w, NULL, 9, &out), TF_ERR_NULL, w, ser, before, len);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_report(w, k.b, 9, NULL), TF_ERR_NULL, w, ser, before, len);
        assert_int_equal(out, 4242); /* no out-parameter written */
        /* batches: every argument checked before anything changes */
        tu_key keys[3] = {rw_key(900), rw_key(901), rw_key(902)};
        const void *ptrs[3] = {keys[0].b, NULL, keys[2].b};
        size_t lens[3] = {9, 9, 9};
        uint64_t res[3] = {7, 7, 7};
        TU_REFUSED(tf_recency_window_insert_batch(NULL, ptrs, lens, 3), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_insert_batch(w, ptrs, lens, 3), TF_ERR_NULL);
        assert_non_null(strstr(tf_last_error_message(), "keys[1]"));
        tu_assert_blob(w, ser, before, len);
        TU_REFUSED(tf_recency_window_insert_report_batch(w, ptrs, lens, 3, res), TF_ERR_NULL);
        assert_non_null(strstr(tf_last_error_message(), "keys[1]"));
        tu_assert_blob(w, ser, before, len);
        TU_REFUSED(tf_recency_window_query_batch(w, ptrs, lens, 3, res), TF_ERR_NULL);
        ptrs[1] = keys[1].b;
        TU_REFUSED(tf_recency_window_insert_report_batch(NULL, ptrs, lens, 3, res), TF_ERR_NULL);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_batch(w, NULL, lens, 3), TF_ERR_NULL, w, ser, before, len);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_batch(w, ptrs, NULL, 3), TF_ERR_NULL, w, ser, before, len);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_report_batch(w, NULL, lens, 3, res), TF_ERR_NULL, w, ser, before,
                             len);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_report_batch(w, ptrs, NULL, 3, res), TF_ERR_NULL, w, ser, before,
                             len);
        TU_REFUSED_UNCHANGED(tf_recency_window_insert_report_batch(w, ptrs, lens, 3, NULL), TF_ERR_NULL, w, ser, before,
                             len);
        TU_REFUSED(tf_recency_window_query_batch(NULL, ptrs, lens, 3, res), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_query_batch(w, NULL, lens, 3, res), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_query_batch(w, ptrs, NULL, 3, res), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_query_batch(w, ptrs, lens, 3, NULL), TF_ERR_NULL);
        assert_int_equal(res[0], 7);
        /* getters */
        tf_recency_window_stats s = TF_RECENCY_WINDOW_STATS_INIT;
        TU_REFUSED(tf_recency_window_get_stats(NULL, &s), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_get_stats(w, NULL), TF_ERR_NULL);
        s.size = 0;
        TU_REFUSED(tf_recency_window_get_stats(w, &s), TF_ERR_INVALID_ARGUMENT);
        tf_recency_window_level v = TF_RECENCY_WINDOW_LEVEL_INIT;
        TU_REFUSED(tf_recency_window_get_level(NULL, 0, &v), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_get_level(w, 0, NULL), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_get_level(w, rw_info(w).levels, &v), TF_ERR_INVALID_ARGUMENT);
        TU_REFUSED(tf_recency_window_get_level(w, UINT64_MAX, &v), TF_ERR_INVALID_ARGUMENT);
        assert_int_equal(v.slots, 0);
        v.size = 3;
        TU_REFUSED(tf_recency_window_get_level(w, 0, &v), TF_ERR_INVALID_ARGUMENT);
        TU_REFUSED(tf_recency_window_get_info(NULL, NULL), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_memory(NULL, NULL), TF_ERR_NULL);
        TU_REFUSED(tf_recency_window_clear(NULL), TF_ERR_NULL);
        tu_check_refused_calls(&tu_recency_window, w, sizeof(tf_recency_window_info));
        tu_assert_blob(w, ser, before, len);
        free(before);
        tf_recency_window_free(w);
    }
}

TU_MAIN(test_bad_options, test_bad_calls_leave_structure_unchanged)
