/* The operations behind the golden blobs in tests/data. The C suite rebuilds
 * each sketch from these operations and compares its serialization with the
 * committed blob byte for byte; tests/make_golden.c writes the blobs and the
 * ".expected" answer files that every binding's suite checks too.
 *
 * Changing anything here changes the golden files: that is a format or hash
 * change, which needs a new format version (see docs/wire-format.md, "Compatibility"). */
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

/* Each builder below makes its structure in *out and runs the golden
 * operations on it; it returns the first failure (TF_OK when all went
 * well). Whatever it made is in *out either way: the caller frees it. */

/* For the golden keys from, from + step, .. below `to` ("key-<i>"), one
 * call of `op(obj, key, len, i)` each; the first failure stops it and is
 * returned. */
typedef tf_status (*golden_op)(void *obj, const char *key, size_t len, unsigned i);
static inline tf_status golden_each_key(void *obj, unsigned from, unsigned to, unsigned step, golden_op op) {
    char key[32];
    tf_status st = TF_OK;
    for (unsigned i = from; i < to && st == TF_OK; i += step) st = op(obj, key, golden_key(i, key, sizeof key), i);
    return st;
}

/* recency_sketch_v1.tfb and recency_sketch_blocked_v1.tfb:
 *   tf_recency_sketch_new(width 256, depth 3, seed 42, flags 0), or
 *     width 96 with flags TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT
 *   tf_recency_sketch_update("key-i", 1000 + 7 i) for i = 0 .. 199, in order
 *   out of order: "key-i" again for i = 0, 3, .. 198, at 5000 + i (i odd)
 *     or 500 + i (i even: older than its time, no effect)
 *   tf_recency_sketch_update(golden_binary_key, 123456789) */
static inline tf_status golden_sketch_update(void *s, const char *key, size_t len, unsigned i) {
    return tf_recency_sketch_update(s, key, len, 1000 + 7 * (uint64_t)i);
}
static inline tf_status golden_sketch_again(void *s, const char *key, size_t len, unsigned i) {
    return tf_recency_sketch_update(s, key, len, (i % 2) ? 5000 + i : 500 + i);
}
static inline tf_status golden_recency_sketch(uint32_t flags, tf_recency_sketch **out) {
    const uint64_t width = (flags & TF_RECENCY_SKETCH_BLOCKED) ? 96 : 256;
    tf_status st = tf_recency_sketch_new(width, 3, 42, flags, out);
    if (st == TF_OK) st = golden_each_key(*out, 0, GOLDEN_RS_INSERTED, 1, golden_sketch_update);
    if (st == TF_OK) st = golden_each_key(*out, 0, GOLDEN_RS_INSERTED, 3, golden_sketch_again);
    if (st == TF_OK) st = tf_recency_sketch_update(*out, golden_binary_key, sizeof golden_binary_key, 123456789);
    return st;
}

/* ------------------------------------------------------------------ */
/* Bloom filters (age_bloom_v1.tfb, time_bloom_v1.tfb)                 */

#define GOLDEN_AB_INSERTED 300 /* "key-0" .. "key-299" are added */
#define GOLDEN_AB_KEYS 350     /* "key-0" .. "key-349" are queried */

/* The golden count-window filters, age_bloom_v1.tfb (flags 0) and
 * age_bloom_blocked_v1.tfb (flags TF_AGE_BLOOM_BLOCKED):
 *   tf_age_bloom_new(k = 3, l = 4, slice_bits = 200, seed = 42, flags)
 *     (classic: generation g = floor(200 ln 2 / 3) = 46, window l * g =
 *      184 inserts; blocked: slices of 224 bits, g = floor(224 ln 2 / 3) =
 *      51, window l * g = 204 inserts)
 *   tf_age_bloom_add("key-i") for i = 0 .. 299, in order
 *   tf_age_bloom_add_if_absent("key-i") for i = 290 .. 319, in order
 *     (290 .. 299 are in the window: present, not inserted again;
 *      300 .. 319 are inserted unless a false positive says present)
 *   tf_age_bloom_add(golden_binary_key)
 * The .expected files list tf_age_bloom_contains for "key-0" .. "key-349"
 * and then golden_binary_key. */
static inline tf_status golden_age_add(void *f, const char *key, size_t len, unsigned i) {
    (void)i;
    return tf_age_bloom_add(f, key, len);
}
static inline tf_status golden_age_add_if_absent(void *f, const char *key, size_t len, unsigned i) {
    (void)i;
    int was_present;
    return tf_age_bloom_add_if_absent(f, key, len, &was_present);
}
static inline tf_status golden_age_bloom(uint32_t flags, tf_age_bloom **out) {
    tf_status st = tf_age_bloom_new(3, 4, 200, 42, flags, out);
    if (st == TF_OK) st = golden_each_key(*out, 0, GOLDEN_AB_INSERTED, 1, golden_age_add);
    if (st == TF_OK) st = golden_each_key(*out, 290, 320, 1, golden_age_add_if_absent);
    if (st == TF_OK) st = tf_age_bloom_add(*out, golden_binary_key, sizeof golden_binary_key);
    return st;
}

#define GOLDEN_TB_KEYS 260 /* "key-0" .. "key-259" are queried */
#define GOLDEN_TB_SPAN 1000
/* the .expected file answers tf_time_bloom_contains at these two times */
#define GOLDEN_TB_QUERY_1 3000
#define GOLDEN_TB_QUERY_2 3400

/* The golden time-window filter, time_bloom_v1.tfb:
 *   tf_time_bloom_new(k = 3, l = 4, slice_bits = 128, span = 1000, seed = 42,
 *                     flags = 0 (the only flags there are))
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
 * golden_binary_key. */
static inline tf_status golden_time_add(void *f, const char *key, size_t len, unsigned i) {
    return tf_time_bloom_add(f, key, len, i < 200 ? 1000 + 10 * (uint64_t)i : i < 240 ? 3000 : 2500);
}
static inline tf_status golden_time_add_if_absent(void *f, const char *key, size_t len, unsigned i) {
    (void)i;
    int was_present;
    return tf_time_bloom_add_if_absent(f, key, len, 3000, &was_present);
}
static inline tf_status golden_time_bloom(uint32_t flags, tf_time_bloom **out) {
    tf_status st = tf_time_bloom_new(3, 4, 128, GOLDEN_TB_SPAN, 42, flags, out);
    if (st == TF_OK) st = golden_each_key(*out, 0, 245, 1, golden_time_add);
    if (st == TF_OK) st = golden_each_key(*out, 195, 200, 1, golden_time_add_if_absent);
    if (st == TF_OK) st = golden_each_key(*out, 245, 250, 1, golden_time_add_if_absent);
    if (st == TF_OK) st = tf_time_bloom_add(*out, golden_binary_key, sizeof golden_binary_key, 3000);
    return st;
}

/* ------------------------------------------------------------------ */
/* Rate limiter (rate_limiter_v1.tfb, rate_limiter_exact_v1.tfb)       */

#define GOLDEN_RL_KEYS 40      /* "key-0" .. "key-39" are peeked */
#define GOLDEN_RL_PEEK_AT 3000 /* the .expected answers are peeks at this time, n = 1 */

/* The golden rate limiters, rate_limiter_v1.tfb (flags 0) and
 * rate_limiter_exact_v1.tfb (flags TF_RATE_LIMITER_EXACT):
 *   tf_rate_limiter_new(limit 5, window 1000, bucket width 100, seed 0, flags)
 *   tf_rate_limiter_set_global_limit(120)
 *   tf_rate_limiter_set_key_limit("key-7", 9)
 *   for i = 0 .. 299, in order:
 *     tf_rate_limiter_acquire("key-<i mod 30>", now = 1000 + 7 * i,
 *                             n = 1 + (i mod 3 == 0))
 *   tf_rate_limiter_refund("key-3", now = 3000, 1)
 *   tf_rate_limiter_acquire(golden_binary_key, now = 2990, n = 2)
 * (denied acquires change nothing). The .expected file lists
 * tf_rate_limiter_peek(key, now = 3000, n = 1) for "key-0" .. "key-39" and
 * then golden_binary_key: "<key hex> <allowed> <remaining> <retry_at>". */
static inline tf_status golden_rate_limiter(uint32_t flags, tf_rate_limiter **out) {
    int allowed;
    tf_status st = tf_rate_limiter_new(5, 1000, 100, 0, flags, out);
    if (st == TF_OK) st = tf_rate_limiter_set_global_limit(*out, 120);
    if (st == TF_OK) st = tf_rate_limiter_set_key_limit(*out, "key-7", 5, 9);
    for (unsigned i = 0; i < 300 && st == TF_OK; ++i) {
        char key[32];
        st = tf_rate_limiter_acquire(*out, key, golden_key(i % 30, key, sizeof key), 1000 + 7 * (uint64_t)i,
                                     1 + (i % 3 == 0), &allowed, NULL, NULL);
    }
    if (st == TF_OK) st = tf_rate_limiter_refund(*out, "key-3", 5, 3000, 1);
    if (st == TF_OK)
        st = tf_rate_limiter_acquire(*out, golden_binary_key, sizeof golden_binary_key, 2990, 2, &allowed, NULL, NULL);
    return st;
}

/* ------------------------------------------------------------------ */
/* Rotating cuckoo filter (rotating_cuckoo_v1.tfb,                      */
/* rotating_cuckoo_three_way_v1.tfb)                                    */

#define GOLDEN_RC_KEYS 90 /* "key-0" .. "key-89" are queried */
/* the .expected file answers tf_rotating_cuckoo_contains at these times */
#define GOLDEN_RC_QUERY_1 1800
#define GOLDEN_RC_QUERY_2 3600

/* The golden rotating cuckoo filters, rotating_cuckoo_v1.tfb (flags 0) and
 * rotating_cuckoo_three_way_v1.tfb (flags TF_ROTATING_CUCKOO_THREE_WAY):
 *   tf_rotating_cuckoo_new(TF_ROTATING_CUCKOO_OPTIONS_INIT with table_slots
 *     16, ttl 2000, max_tables 4, seed 42, flags): 4 slots per bucket, the
 *     default occupancy (0.92 two ways, 0.97 three ways)
 *   tf_rotating_cuckoo_add_if_absent("key-i", now = 1000 + 10 i) for
 *     i = 0 .. 79, in order (the tables rotate by fill; the fifth drops the
 *     oldest for the table limit)
 *   tf_rotating_cuckoo_remove("key-i", now = 1800) for i = 0, 7, .. 77
 *   tf_rotating_cuckoo_add("key-i", now = 1500) for i = 75 .. 84 (a clock
 *     that went backwards: clamped to 1800)
 *   tf_rotating_cuckoo_add(golden_binary_key, now = 1800)
 * The .expected file lists, for now = GOLDEN_RC_QUERY_1 and then
 * GOLDEN_RC_QUERY_2, tf_rotating_cuckoo_contains for "key-0" .. "key-89"
 * and golden_binary_key. */
static inline tf_status golden_rc_first(void *f, const char *key, size_t len, unsigned i) {
    int was_present;
    return tf_rotating_cuckoo_add_if_absent(f, key, len, 1000 + 10 * (uint64_t)i, &was_present);
}
static inline tf_status golden_rc_remove(void *f, const char *key, size_t len, unsigned i) {
    (void)i;
    return tf_rotating_cuckoo_remove(f, key, len, 1800, NULL);
}
static inline tf_status golden_rc_again(void *f, const char *key, size_t len, unsigned i) {
    (void)i;
    return tf_rotating_cuckoo_add(f, key, len, 1500);
}
static inline tf_status golden_rotating_cuckoo(uint32_t flags, tf_rotating_cuckoo **out) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.table_slots = 16;
    o.ttl = 2000;
    o.max_tables = 4;
    o.seed = 42;
    o.flags = flags;
    tf_status st = tf_rotating_cuckoo_new(&o, out);
    if (st == TF_OK) st = golden_each_key(*out, 0, 80, 1, golden_rc_first);
    if (st == TF_OK) st = golden_each_key(*out, 0, 80, 7, golden_rc_remove);
    if (st == TF_OK) st = golden_each_key(*out, 75, 85, 1, golden_rc_again);
    if (st == TF_OK) st = tf_rotating_cuckoo_add(*out, golden_binary_key, sizeof golden_binary_key, 1800);
    return st;
}

/* The golden recency windows; the builder's `flags` is the mode plus
 * GOLDEN_RW_APPROX for approximate signatures:
 * recency_window_v1.tfb (TF_RECENCY_WINDOW_HISTORICAL),
 * recency_window_approx_v1.tfb (TF_RECENCY_WINDOW_HISTORICAL |
 * GOLDEN_RW_APPROX), recency_window_exact_v1.tfb (TF_RECENCY_WINDOW_EXACT)
 * and recency_window_optimal_sm_v1.tfb (TF_RECENCY_WINDOW_OPTIMAL_SM):
 *   tf_recency_window_new(TF_RECENCY_WINDOW_OPTIONS_INIT with window 64,
 *     inv_eps 4, seed 42, the mode, delta 0.01 with GOLDEN_RW_APPROX):
 *     OptimalSM's block defaults to 16
 *   tf_recency_window_insert("key-i") for i = 0 .. 99, in order
 *   tf_recency_window_insert_report("key-i") for i = 0, 5, .. 95
 *   tf_recency_window_insert(golden_binary_key)
 * The .expected file lists tf_recency_window_query for "key-0" ..
 * "key-109" and golden_binary_key (18446744073709551615:
 * TF_RECENCY_WINDOW_NOT_IN_WINDOW). */
#define GOLDEN_RW_KEYS 110
#define GOLDEN_RW_APPROX 0x100u
static inline tf_status golden_rw_insert(void *w, const char *key, size_t len, unsigned i) {
    (void)i;
    return tf_recency_window_insert(w, key, len);
}
static inline tf_status golden_rw_again(void *w, const char *key, size_t len, unsigned i) {
    (void)i;
    uint64_t previous;
    return tf_recency_window_insert_report(w, key, len, &previous);
}
static inline tf_status golden_recency_window(uint32_t flags, tf_recency_window **out) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.window = 64;
    o.inv_eps = 4;
    o.seed = 42;
    o.mode = flags & 0xffu;
    if (flags & GOLDEN_RW_APPROX) o.delta = 0.01;
    tf_status st = tf_recency_window_new(&o, out);
    if (st == TF_OK) st = golden_each_key(*out, 0, 100, 1, golden_rw_insert);
    if (st == TF_OK) st = golden_each_key(*out, 0, 100, 5, golden_rw_again);
    if (st == TF_OK) st = tf_recency_window_insert(*out, golden_binary_key, sizeof golden_binary_key);
    return st;
}

#endif
