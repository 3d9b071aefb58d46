/* Recency window: the operations through the C API. Info and stats,
 * per-level stats, memory and memory_for, the batch calls against the
 * single calls (same answers, same structure byte for byte), clear, the
 * empty key, the versioned structs' contract. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rw_util.h"

static void test_info_and_stats(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 10000, 8);
        o.seed = 99;
        tf_recency_window *w = rw_new(&o);
        const tf_recency_window_info i = rw_info(w);
        assert_int_equal(i.window, 10000);
        assert_int_equal(i.inv_eps, 8);
        assert_int_equal(i.block, mode == TF_RECENCY_WINDOW_OPTIMAL_SM ? 1250 : 0);
        assert_int_equal(i.max_memory, 0);
        assert_true(i.delta == 0.0);
        assert_int_equal(i.mode, mode);
        assert_int_equal(i.seed, 99);
        assert_int_equal(i.flags, 0);
        assert_int_equal(i.signature_bits, 64);
        /* L = the largest with K 2^(L+1) <= W: 8 * 2^(L+1) <= 10000, L = 9 */
        assert_int_equal(i.levels, mode == TF_RECENCY_WINDOW_HISTORICAL ? 10 : 1);
        assert_int_equal(i.slack, mode == TF_RECENCY_WINDOW_HISTORICAL ? 512 : mode == 1 ? 1 : 1250);
        tf_recency_window_stats s = rw_stats(w);
        assert_int_equal(s.inserts, 0);
        assert_int_equal(s.window_items, 0);
        assert_int_equal(s.items, 0);
        assert_true(s.bits_per_window_item == 0.0);
        size_t mem = 0, predicted = 0;
        assert_int_equal(tf_recency_window_memory(w, &mem), TF_OK);
        assert_int_equal(tf_recency_window_memory_for(&o, &predicted), TF_OK);
        assert_int_equal(mem, predicted);
        assert_int_equal(s.memory, mem);
        for (uint64_t t = 0; t < 30000; ++t) rw_insert(w, t % 15000);
        s = rw_stats(w);
        assert_int_equal(s.inserts, 30000);
        assert_int_equal(s.window_items, 10000);
        assert_int_equal(s.levels, i.levels);
        assert_true(s.items > 0);
        assert_true(s.bits_per_window_item > 8.0 * (double)mem / 10000.0 - 1e-9);
        assert_true(s.bits_per_window_item < 8.0 * (double)mem / 10000.0 + 1e-9);
        assert_true(s.expired > 0);
        assert_int_equal(s.lost, 0);
        if (mode == TF_RECENCY_WINDOW_HISTORICAL) assert_true(s.promotions > 0);
        uint64_t items = 0;
        for (uint64_t l = 0; l < s.levels; ++l) {
            tf_recency_window_level v = TF_RECENCY_WINDOW_LEVEL_INIT;
            assert_int_equal(tf_recency_window_get_level(w, l, &v), TF_OK);
            items += v.items;
            assert_true(v.slots >= 8 && v.slots % 8 == 0); /* an even number of 4-slot buckets */
            assert_true(v.items <= v.slots + 16);
            assert_true(v.capacity > 0 && v.capacity <= v.slots);
            assert_int_equal(v.block_width, mode == TF_RECENCY_WINDOW_HISTORICAL ? (uint64_t)1 << l
                                            : mode == TF_RECENCY_WINDOW_EXACT    ? 1
                                                                                 : 1250);
            assert_true(v.class_bits >= 2 && v.entry_bits > v.class_bits);
            assert_int_equal(v.reserved, 0);
        }
        assert_int_equal(items, s.items);
        /* memory is fixed at creation */
        size_t mem2 = 0;
        assert_int_equal(tf_recency_window_memory(w, &mem2), TF_OK);
        assert_int_equal(mem2, mem);
        tf_recency_window_free(w);
    }
}

static tf_status get_info(const void *w, void *out) { return tf_recency_window_get_info(w, out); }
static tf_status get_stats(const void *w, void *out) { return tf_recency_window_get_stats(w, out); }
static tf_status get_level(const void *w, void *out) { return tf_recency_window_get_level(w, 0, out); }

static void test_versioned_structs(void **state) {
    (void)state;
    tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_HISTORICAL, 500, 2);
    tf_recency_window *w = rw_new(&o);
    for (uint64_t t = 0; t < 700; ++t) rw_insert(w, t);
    tf_recency_window_info i;
    tu_check_versioned_out(w, sizeof i, get_info, &i);
    assert_int_equal(i.window, 500);
    tf_recency_window_stats s;
    tu_check_versioned_out(w, sizeof s, get_stats, &s);
    assert_int_equal(s.inserts, 700);
    tf_recency_window_level v;
    tu_check_versioned_out(w, sizeof v, get_level, &v);
    assert_int_equal(v.block_width, 1);
    tf_recency_window_free(w);
}

/* The batch calls give the single calls' answers and structure. */
static void test_batches(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 700, 4);
        tf_recency_window *a = rw_new(&o), *b = rw_new(&o);
        tu_rng g = {mode + 1};
        enum { N = 37 };
        tu_key keys[N];
        const void *ptrs[N];
        size_t lens[N];
        uint64_t got[N], want[N];
        for (unsigned round = 0; round < 200; ++round) {
            const size_t n = tu_below(&g, N + 1);
            for (size_t i = 0; i < n; ++i) {
                keys[i] = rw_key(tu_below(&g, 900));
                ptrs[i] = keys[i].b;
                lens[i] = sizeof keys[i].b;
            }
            switch (round % 3) {
                case 0:
                    assert_int_equal(tf_recency_window_insert_report_batch(a, ptrs, lens, n, got), TF_OK);
                    for (size_t i = 0; i < n; ++i)
                        assert_int_equal(tf_recency_window_insert_report(b, ptrs[i], lens[i], &want[i]), TF_OK);
                    break;
                case 1:
                    assert_int_equal(tf_recency_window_insert_batch(a, ptrs, lens, n), TF_OK);
                    for (size_t i = 0; i < n; ++i) {
                        assert_int_equal(tf_recency_window_insert(b, ptrs[i], lens[i]), TF_OK);
                        got[i] = want[i] = 0;
                    }
                    break;
                default:
                    assert_int_equal(tf_recency_window_query_batch(a, ptrs, lens, n, got), TF_OK);
                    for (size_t i = 0; i < n; ++i)
                        assert_int_equal(tf_recency_window_query(b, ptrs[i], lens[i], &want[i]), TF_OK);
            }
            for (size_t i = 0; i < n; ++i) assert_int_equal(got[i], want[i]);
        }
        assert_true(tu_same_blob(a, b, tu_recency_window.serialize));
        /* count 0 with NULL arrays is a no-op */
        assert_int_equal(tf_recency_window_insert_batch(a, NULL, NULL, 0), TF_OK);
        assert_int_equal(tf_recency_window_query_batch(a, NULL, NULL, 0, NULL), TF_OK);
        assert_int_equal(tf_recency_window_insert_report_batch(a, NULL, NULL, 0, NULL), TF_OK);
        assert_true(tu_same_blob(a, b, tu_recency_window.serialize));
        tf_recency_window_free(a);
        tf_recency_window_free(b);
    }
}

/* A key repeated within one batch reports its earlier occurrence. */
static void test_repeat_in_batch(void **state) {
    (void)state;
    tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_EXACT, 100, 1);
    tf_recency_window *w = rw_new(&o);
    tu_key k = rw_key(5), j = rw_key(6);
    const void *ptrs[4] = {k.b, j.b, j.b, k.b};
    const size_t lens[4] = {9, 9, 9, 9};
    uint64_t prev[4];
    assert_int_equal(tf_recency_window_insert_report_batch(w, ptrs, lens, 4, prev), TF_OK);
    assert_int_equal(prev[0], TF_RECENCY_WINDOW_NOT_IN_WINDOW);
    assert_int_equal(prev[1], TF_RECENCY_WINDOW_NOT_IN_WINDOW);
    assert_int_equal(prev[2], 0);
    assert_int_equal(prev[3], 2);
    tf_recency_window_free(w);
}

static void test_clear_and_empty_key(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 300, 4);
        tf_recency_window *w = rw_new(&o), *fresh = rw_new(&o);
        for (uint64_t t = 0; t < 1000; ++t) rw_insert(w, t % 400);
        assert_int_equal(tf_recency_window_clear(w), TF_OK);
        assert_true(tu_same_blob(w, fresh, tu_recency_window.serialize));
        assert_int_equal(rw_stats(w).inserts, 0);
        assert_int_equal(rw_query(w, 5), TF_RECENCY_WINDOW_NOT_IN_WINDOW);
        /* the empty key is a key like any other */
        uint64_t r = 0;
        assert_int_equal(tf_recency_window_insert_report(w, NULL, 0, &r), TF_OK);
        assert_int_equal(r, TF_RECENCY_WINDOW_NOT_IN_WINDOW);
        rw_insert(w, 1);
        assert_int_equal(tf_recency_window_query(w, "", 0, &r), TF_OK);
        const tf_recency_window_info info = rw_info(w);
        assert_true(rw_keeps_promise(&info, 1, r));
        if (mode != TF_RECENCY_WINDOW_OPTIMAL_SM) assert_int_equal(r, 1);
        tf_recency_window_free(w);
        tf_recency_window_free(fresh);
    }
}

/* The defaults: NULL options and TF_RECENCY_WINDOW_OPTIONS_INIT alike. */
static void test_defaults(void **state) {
    (void)state;
    tf_recency_window *w = NULL;
    assert_int_equal(tf_recency_window_new(NULL, &w), TF_OK);
    const tf_recency_window_info i = rw_info(w);
    assert_int_equal(i.window, 65536);
    assert_int_equal(i.inv_eps, 8);
    assert_int_equal(i.mode, TF_RECENCY_WINDOW_HISTORICAL);
    size_t a = 0, b = 0;
    const tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    assert_int_equal(tf_recency_window_memory(w, &a), TF_OK);
    assert_int_equal(tf_recency_window_memory_for(&o, &b), TF_OK);
    assert_int_equal(a, b);
    assert_int_equal(tf_recency_window_memory_for(NULL, &b), TF_OK);
    assert_int_equal(a, b);
    tf_recency_window_free(w);
    tf_recency_window_free(NULL);
}

TU_MAIN(test_info_and_stats, test_versioned_structs, test_batches, test_repeat_in_batch, test_clear_and_empty_key,
        test_defaults)
