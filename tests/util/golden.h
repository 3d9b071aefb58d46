/* The operations behind the golden blobs in tests/data. The C suite rebuilds
 * each sketch from these operations and compares its serialization with the
 * committed blob byte for byte; tests/make_golden.c writes the blobs and the
 * ".expected" answer files that every binding's suite checks too.
 *
 * Changing anything here changes the golden files: that is a format or hash
 * change, which needs a new format version (see README "Wire format"). */
#ifndef TF_TESTS_GOLDEN_H
#define TF_TESTS_GOLDEN_H

#include <stdio.h>
#include <string.h>

#include "temporalfilters.h"

#define GOLDEN_RS_KEYS 250     /* keys "key-0" .. "key-249" are queried */
#define GOLDEN_RS_INSERTED 200 /* of which "key-0" .. "key-199" are updated */

/* The binary key (with NUL bytes) that is also updated. */
static const unsigned char golden_binary_key[] = {0x00, 'b', 'i', 'n', 0x00, 0xff, 0x7f};

static inline size_t golden_key(unsigned i, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "key-%u", i);
    return n < 0 ? 0 : (size_t)n;
}

/* Builds one golden recency sketch: `flags` 0 gives recency_sketch_v1.tfb,
 * TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT gives
 * recency_sketch_blocked_v1.tfb. Returns NULL on any failure. */
static inline tf_recency_sketch *golden_recency_sketch(uint32_t flags) {
    tf_recency_sketch *s = NULL;
    const uint64_t width = (flags & TF_RECENCY_SKETCH_BLOCKED) ? 96 : 256;
    if (tf_recency_sketch_new(width, 3, 42, flags, &s) != TF_OK) return NULL;
    char key[32];
    for (unsigned i = 0; i < GOLDEN_RS_INSERTED; ++i) {
        size_t n = golden_key(i, key, sizeof key);
        if (tf_recency_sketch_update(s, key, n, 1000 + 7 * (uint64_t)i) != TF_OK) goto fail;
    }
    /* out of order: some keys again, some with older times (no effect) */
    for (unsigned i = 0; i < GOLDEN_RS_INSERTED; i += 3) {
        size_t n = golden_key(i, key, sizeof key);
        uint64_t t = (i % 2) ? 5000 + i : 500 + i;
        if (tf_recency_sketch_update(s, key, n, t) != TF_OK) goto fail;
    }
    if (tf_recency_sketch_update(s, golden_binary_key, sizeof golden_binary_key, 123456789) != TF_OK) goto fail;
    return s;
fail:
    tf_recency_sketch_free(s);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Bloom filters (age_bloom_v1.tfb, time_bloom_v1.tfb)                 */

#define GOLDEN_AB_INSERTED 300 /* "key-0" .. "key-299" are added */
#define GOLDEN_AB_KEYS 350     /* "key-0" .. "key-349" are queried */

/* Builds the golden count-window filter, age_bloom_v1.tfb:
 *   tf_age_bloom_new(k = 3, l = 4, slice_bits = 200, seed = 42, flags = 0)
 *     (generation g = floor(200 ln 2 / 3) = 46, window l * g = 184 inserts)
 *   tf_age_bloom_add("key-i") for i = 0 .. 299, in order
 *   tf_age_bloom_add_if_absent("key-i") for i = 290 .. 319, in order
 *     (290 .. 299 are in the window: present, not inserted again;
 *      300 .. 319 are inserted unless a false positive says present)
 *   tf_age_bloom_add(golden_binary_key)
 * The .expected file lists tf_age_bloom_contains for "key-0" .. "key-349"
 * and then golden_binary_key. Returns NULL on any failure. */
static inline tf_age_bloom *golden_age_bloom_fill(tf_age_bloom *f);
static inline tf_age_bloom *golden_age_bloom(void) {
    tf_age_bloom *f = NULL;
    if (tf_age_bloom_new(3, 4, 200, 42, 0, &f) != TF_OK) return NULL;
    return golden_age_bloom_fill(f);
}

/* The blocked layout, age_bloom_blocked_v1.tfb: the same inserts into
 *   tf_age_bloom_new(k = 3, l = 4, slice_bits = 200, seed = 42,
 *                    flags = TF_AGE_BLOOM_BLOCKED)
 *     (slices of 224 bits, generation g = floor(224 ln 2 / 3) = 51, window
 *      l * g = 204 inserts); the .expected file has the same layout. */
static inline tf_age_bloom *golden_age_bloom_blocked(void) {
    tf_age_bloom *f = NULL;
    if (tf_age_bloom_new(3, 4, 200, 42, TF_AGE_BLOOM_BLOCKED, &f) != TF_OK) return NULL;
    return golden_age_bloom_fill(f);
}

static inline tf_age_bloom *golden_age_bloom_fill(tf_age_bloom *f) {
    char key[32];
    for (unsigned i = 0; i < GOLDEN_AB_INSERTED; ++i) {
        size_t n = golden_key(i, key, sizeof key);
        if (tf_age_bloom_add(f, key, n) != TF_OK) goto fail;
    }
    for (unsigned i = 290; i < 320; ++i) {
        size_t n = golden_key(i, key, sizeof key);
        int was_present;
        if (tf_age_bloom_add_if_absent(f, key, n, &was_present) != TF_OK) goto fail;
    }
    if (tf_age_bloom_add(f, golden_binary_key, sizeof golden_binary_key) != TF_OK) goto fail;
    return f;
fail:
    tf_age_bloom_free(f);
    return NULL;
}

#define GOLDEN_TB_KEYS 260 /* "key-0" .. "key-259" are queried */
#define GOLDEN_TB_SPAN 1000
/* the .expected file answers tf_time_bloom_contains at these two times */
#define GOLDEN_TB_QUERY_1 3000
#define GOLDEN_TB_QUERY_2 3400

/* Builds the golden time-window filter, time_bloom_v1.tfb:
 *   tf_time_bloom_new(k = 3, l = 4, slice_bits = 128, span = 1000, seed = 42,
 *                     flags = 0)
 *   tf_time_bloom_add("key-i", now = 1000 + 10 * i) for i = 0 .. 199, in order
 *   tf_time_bloom_add("key-i", now = 3000) for i = 200 .. 239 (a burst at
 *     one timestamp)
 *   tf_time_bloom_add("key-i", now = 2500) for i = 240 .. 244 (a clock
 *     that went backwards: clamped to 3000)
 *   tf_time_bloom_add_if_absent("key-i", now = 3000) for i = 195 .. 199 and
 *     245 .. 249
 *   tf_time_bloom_add(golden_binary_key, now = 3000)
 * The .expected file lists, for now = GOLDEN_TB_QUERY_1 and then
 * GOLDEN_TB_QUERY_2, tf_time_bloom_contains for "key-0" .. "key-259" and
 * golden_binary_key. Returns NULL on any failure. */
static inline tf_time_bloom *golden_time_bloom(void) {
    tf_time_bloom *f = NULL;
    if (tf_time_bloom_new(3, 4, 128, GOLDEN_TB_SPAN, 42, 0, &f) != TF_OK) return NULL;
    char key[32];
    int was_present;
    for (unsigned i = 0; i < 245; ++i) {
        size_t n = golden_key(i, key, sizeof key);
        uint64_t now = i < 200 ? 1000 + 10 * (uint64_t)i : i < 240 ? 3000 : 2500;
        if (tf_time_bloom_add(f, key, n, now) != TF_OK) goto fail;
    }
    for (unsigned j = 0; j < 10; ++j) {
        size_t n = golden_key(j < 5 ? 195 + j : 240 + j, key, sizeof key);
        if (tf_time_bloom_add_if_absent(f, key, n, 3000, &was_present) != TF_OK) goto fail;
    }
    if (tf_time_bloom_add(f, golden_binary_key, sizeof golden_binary_key, 3000) != TF_OK) goto fail;
    return f;
fail:
    tf_time_bloom_free(f);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Rate limiter (rate_limiter_v1.tfb, rate_limiter_exact_v1.tfb)       */

#define GOLDEN_RL_KEYS 40      /* "key-0" .. "key-39" are peeked */
#define GOLDEN_RL_PEEK_AT 3000 /* the .expected answers are peeks at this time, n = 1 */

/* Builds a golden rate limiter; `exact` picks the mode:
 *   tf_rate_limiter_new(limit 5, window 1000, bucket width 100,
 *                       flags exact ? TF_RATE_LIMITER_EXACT : 0)
 *   tf_rate_limiter_set_global_limit(120)
 *   tf_rate_limiter_set_key_limit("key-7", 9)
 *   for i = 0 .. 299, in order:
 *     tf_rate_limiter_acquire("key-<i mod 30>", now = 1000 + 7 * i,
 *                             n = 1 + (i mod 3 == 0))
 *   tf_rate_limiter_refund("key-3", now = 3000, 1)
 *   tf_rate_limiter_acquire(golden_binary_key, now = 2990, n = 2)
 * (denied acquires change nothing). The .expected file lists
 * tf_rate_limiter_peek(key, now = 3000, n = 1) for "key-0" .. "key-39" and
 * then golden_binary_key: "<key hex> <allowed> <remaining> <retry_at>".
 * Returns NULL on any failure. */
static inline tf_rate_limiter *golden_rate_limiter(int exact) {
    tf_rate_limiter *r = NULL;
    if (tf_rate_limiter_new(5, 1000, 100, exact ? TF_RATE_LIMITER_EXACT : 0, &r) != TF_OK) return NULL;
    char key[32];
    int allowed;
    if (tf_rate_limiter_set_global_limit(r, 120) != TF_OK) goto fail;
    if (tf_rate_limiter_set_key_limit(r, "key-7", 5, 9) != TF_OK) goto fail;
    for (unsigned i = 0; i < 300; ++i) {
        size_t n = golden_key(i % 30, key, sizeof key);
        if (tf_rate_limiter_acquire(r, key, n, 1000 + 7 * (uint64_t)i, 1 + (i % 3 == 0), &allowed, NULL, NULL) != TF_OK)
            goto fail;
    }
    if (tf_rate_limiter_refund(r, "key-3", 5, 3000, 1) != TF_OK) goto fail;
    if (tf_rate_limiter_acquire(r, golden_binary_key, sizeof golden_binary_key, 2990, 2, &allowed, NULL, NULL) != TF_OK)
        goto fail;
    return r;
fail:
    tf_rate_limiter_free(r);
    return NULL;
}

#endif
