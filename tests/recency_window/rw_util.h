/* Helpers of the recency window's suites: options, keys, the calls with
 * their status asserted, an exact reference of the stream, the promise of
 * each mode, blob loading. */
#ifndef TF_TESTS_RECENCY_WINDOW_UTIL_H
#define TF_TESTS_RECENCY_WINDOW_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "test_util.h"

/* The key of id `id` (tu_make_key with the suite's tag). */
tu_key rw_key(uint64_t id);

/* Options of `mode` over a window of `window` inserts, 1/eps = inv_eps,
 * seed 7, the rest at their defaults. */
tf_recency_window_options rw_options(uint32_t mode, uint64_t window, uint64_t inv_eps);
/* tf_recency_window_new, asserted to succeed. */
tf_recency_window *rw_new(const tf_recency_window_options *o);

void rw_insert(tf_recency_window *w, uint64_t id);
uint64_t rw_query(const tf_recency_window *w, uint64_t id);
uint64_t rw_insert_report(tf_recency_window *w, uint64_t id);
tf_recency_window_info rw_info(const tf_recency_window *w);
tf_recency_window_stats rw_stats(const tf_recency_window *w);

/* The exact reference: the position of each id's last insert (ids below
 * `ids`), and the inserts made. */
typedef struct {
    uint64_t *last; /* UINT64_MAX: never */
    uint64_t ids, t;
} rw_ref;
void rw_ref_init(rw_ref *r, uint64_t ids);
void rw_ref_free(rw_ref *r);
/* The true recency of id (UINT64_MAX: never inserted). */
uint64_t rw_ref_recency(const rw_ref *r, uint64_t id);
void rw_ref_insert(rw_ref *r, uint64_t id);

/* Whether answer `e` keeps the promise of the structure described by
 * `info` for a key of true recency `r` (UINT64_MAX: never inserted): a
 * key younger than W gets an estimate within the mode's error, one at
 * least W + slack - 1 old (or never inserted) gets
 * TF_RECENCY_WINDOW_NOT_IN_WINDOW, one in between either. */
int rw_keeps_promise(const tf_recency_window_info *info, uint64_t r, uint64_t e);

/* Deserializes a blob and frees what it made (a tu_try_blob_fn). */
tf_status rw_try_blob(const unsigned char *blob, size_t len);

#endif
