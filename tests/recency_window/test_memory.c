/* Recency window: allocation failures. Only creation allocates (new,
 * deserialize: one table per level); each allocation failing in turn
 * (through the library's internal test hook, alloc_hook.cpp) is
 * TF_ERR_OUT_OF_MEMORY with a message, makes nothing and leaves the
 * caller's structures as they were; with memory back the same call
 * succeeds. No other call allocates: a long stream with every allocation
 * refused goes through. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rw_util.h"

/* alloc_hook.cpp: while n >= 0, n more table allocations succeed and every
 * later one fails; -1 turns it off. Each level's table is two packed arrays
 * (the low 64 bits of its entries, and the rest: empty unless the entries
 * are wider), two allocations. */
void rw_fail_allocations_after(long n);

static void test_new_fails_cleanly(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 5000, 4);
        tf_recency_window *probe = rw_new(&o);
        const long blocks = 2 * (long)rw_info(probe).levels;
        tf_recency_window_free(probe);
        for (long k = 0; k < blocks; ++k) {
            tf_recency_window *w = NULL;
            rw_fail_allocations_after(k);
            TU_REFUSED_NEW(tf_recency_window_new(&o, &w), TF_ERR_OUT_OF_MEMORY, w);
            rw_fail_allocations_after(-1);
        }
        /* exactly `blocks` allocations: with that many it works */
        tf_recency_window *w = NULL;
        rw_fail_allocations_after(blocks);
        assert_int_equal(tf_recency_window_new(&o, &w), TF_OK);
        rw_fail_allocations_after(-1);
        tf_recency_window_free(w);
    }
}

static void test_deserialize_fails_cleanly(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 300, 2);
        tf_recency_window *src = rw_new(&o);
        for (uint64_t i = 0; i < 1000; ++i) rw_insert(src, i % 400);
        size_t len;
        unsigned char *blob = tu_snapshot(src, tu_recency_window.serialize, &len);
        const long blocks = 2 * (long)rw_info(src).levels;
        for (long k = 0; k < blocks; ++k) {
            tf_recency_window *w = NULL;
            rw_fail_allocations_after(k);
            TU_REFUSED_NEW(tf_recency_window_deserialize(blob, len, NULL, &w), TF_ERR_OUT_OF_MEMORY, w);
            rw_fail_allocations_after(-1);
            tu_assert_blob(src, tu_recency_window.serialize, blob, len);
        }
        tf_recency_window *w = NULL;
        assert_int_equal(tf_recency_window_deserialize(blob, len, NULL, &w), TF_OK);
        assert_true(tu_same_blob(src, w, tu_recency_window.serialize));
        tf_recency_window_free(w);
        free(blob);
        tf_recency_window_free(src);
    }
}

static void test_operations_never_allocate(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window_options o = rw_options(mode, 2000, 8);
        tf_recency_window *w = rw_new(&o);
        rw_fail_allocations_after(0);
        for (uint64_t i = 0; i < 20000; ++i) (void)rw_insert_report(w, i % 2500);
        assert_int_equal(tf_recency_window_clear(w), TF_OK);
        rw_insert(w, 1);
        rw_fail_allocations_after(-1);
        assert_int_equal(rw_query(w, 1), 0);
        tf_recency_window_free(w);
    }
}

TU_MAIN(test_new_fails_cleanly, test_deserialize_fails_cleanly, test_operations_never_allocate)
