#include "rw_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

tu_key rw_key(uint64_t id) { return tu_make_key('W', id); }

tf_recency_window_options rw_options(uint32_t mode, uint64_t window, uint64_t inv_eps) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.mode = mode;
    o.window = window;
    o.inv_eps = inv_eps;
    o.seed = 7;
    return o;
}

tf_recency_window *rw_new(const tf_recency_window_options *o) {
    tf_recency_window *w = NULL;
    assert_int_equal(tf_recency_window_new(o, &w), TF_OK);
    assert_non_null(w);
    return w;
}

void rw_insert(tf_recency_window *w, uint64_t id) {
    tu_key k = rw_key(id);
    assert_int_equal(tf_recency_window_insert(w, k.b, sizeof k.b), TF_OK);
}

uint64_t rw_query(const tf_recency_window *w, uint64_t id) {
    tu_key k = rw_key(id);
    uint64_t r = 12345;
    assert_int_equal(tf_recency_window_query(w, k.b, sizeof k.b, &r), TF_OK);
    return r;
}

uint64_t rw_insert_report(tf_recency_window *w, uint64_t id) {
    tu_key k = rw_key(id);
    uint64_t r = 12345;
    assert_int_equal(tf_recency_window_insert_report(w, k.b, sizeof k.b, &r), TF_OK);
    return r;
}

tf_recency_window_info rw_info(const tf_recency_window *w) {
    tf_recency_window_info i = TF_RECENCY_WINDOW_INFO_INIT;
    assert_int_equal(tf_recency_window_get_info(w, &i), TF_OK);
    return i;
}

tf_recency_window_stats rw_stats(const tf_recency_window *w) {
    tf_recency_window_stats s = TF_RECENCY_WINDOW_STATS_INIT;
    assert_int_equal(tf_recency_window_get_stats(w, &s), TF_OK);
    return s;
}

void rw_ref_init(rw_ref *r, uint64_t ids) {
    r->ids = ids;
    r->t = 0;
    r->last = malloc(ids * sizeof *r->last);
    assert_non_null(r->last);
    for (uint64_t i = 0; i < ids; ++i) r->last[i] = UINT64_MAX;
}

void rw_ref_free(rw_ref *r) { free(r->last); }

uint64_t rw_ref_recency(const rw_ref *r, uint64_t id) {
    return r->last[id] == UINT64_MAX ? UINT64_MAX : r->t - 1 - r->last[id];
}

void rw_ref_insert(rw_ref *r, uint64_t id) { r->last[id] = r->t++; }

int rw_keeps_promise(const tf_recency_window_info *info, uint64_t r, uint64_t e) {
    const uint64_t W = info->window;
    if (r == UINT64_MAX || r >= W + info->slack - 1) return e == TF_RECENCY_WINDOW_NOT_IN_WINDOW;
    if (e == TF_RECENCY_WINDOW_NOT_IN_WINDOW) return r >= W;
    if (e > r) return 0;
    switch (info->mode) {
        case TF_RECENCY_WINDOW_HISTORICAL: /* r <= (1 + 1/K) e */
            return r * info->inv_eps <= e * (info->inv_eps + 1);
        case TF_RECENCY_WINDOW_EXACT:
            return e == r;
        default:
            return r <= e + info->block - 1;
    }
}

tf_status rw_try_blob(const unsigned char *blob, size_t len) { return tu_try_load(&tu_recency_window, blob, len); }
