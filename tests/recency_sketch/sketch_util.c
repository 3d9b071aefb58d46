/* Helpers of the RecencySketch suites. */
#include "sketch_util.h"

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

#include "test_util.h"

const uint32_t kModes[NMODES] = {0, TF_RECENCY_SKETCH_BLOCKED, TF_RECENCY_SKETCH_CONCURRENT,
                                 TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT};

tf_recency_sketch *make(uint64_t w, uint32_t d, uint32_t seed, uint32_t flags) {
    tf_recency_sketch *s = NULL;
    OK(tf_recency_sketch_new(w, d, seed, flags, &s));
    assert_non_null(s);
    return s;
}

void upd(tf_recency_sketch *s, uint64_t id, uint64_t t) {
    tu_key k = tu_make_key('r', id);
    OK(tf_recency_sketch_update(s, k.b, sizeof k.b, t));
}

uint64_t qry(const tf_recency_sketch *s, uint64_t id) {
    tu_key k = tu_make_key('r', id);
    uint64_t t = 99;
    OK(tf_recency_sketch_query(s, k.b, sizeof k.b, &t));
    return t;
}

unsigned char *snap(const tf_recency_sketch *s, size_t *len) {
    return tu_snapshot(s, tu_recency_sketch.serialize, len);
}

int same(const tf_recency_sketch *a, const tf_recency_sketch *b) {
    return tu_same_blob(a, b, tu_recency_sketch.serialize);
}

tf_recency_sketch_info info_of(const tf_recency_sketch *s) {
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    OK(tf_recency_sketch_get_info(s, &info));
    return info;
}

void assert_unchanged(const tf_recency_sketch *s, const unsigned char *before, size_t len) {
    tu_assert_blob(s, tu_recency_sketch.serialize, before, len);
}

tf_recency_sketch *random_sketch(uint32_t flags, uint64_t seed, uint64_t n) {
    tf_recency_sketch *s = make(512, 3, 77, flags);
    tu_rng r = {seed};
    for (uint64_t i = 0; i < n; ++i) upd(s, tu_below(&r, 5000), 1 + tu_below(&r, 100000));
    return s;
}

tf_recency_sketch *copy_of(const tf_recency_sketch *s) { return tu_copy(&tu_recency_sketch, s); }

tf_status try_blob(const unsigned char *b, size_t n) { return tu_try_load(&tu_recency_sketch, b, n); }

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t max_in_window(uint64_t *times, size_t n, uint64_t L) {
    qsort(times, n, sizeof *times, cmp_u64);
    uint64_t best = 0;
    for (size_t i = 0, j = 0; i < n; ++i) {
        while (times[i] - times[j] >= L) j++;
        if (i - j + 1 > best) best = i - j + 1;
    }
    return best;
}
