/* Recency window: blobs. Round trips of every mode (byte for byte, same
 * answers, going on alike), the serialize contract, max_memory and the
 * memory bound, truncated, bit-flipped, resealed, random and foreign
 * blobs, hostile fields and entries each breaking one invariant behind a
 * valid checksum, and the golden blobs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "golden.h"
#include "rw_util.h"

/* A small structure of `mode` with a stream behind it. */
static tf_recency_window *small_window(uint32_t mode, double delta) {
    tf_recency_window_options o = rw_options(mode, 40, 2);
    o.delta = delta;
    tf_recency_window *w = rw_new(&o);
    for (uint64_t i = 0; i < 90; ++i) rw_insert(w, i % 37);
    return w;
}

static void test_round_trip(void **state) {
    (void)state;
    static const uint64_t Ws[] = {1, 64, 5000};
    for (uint32_t mode = 0; mode < 3; ++mode)
        for (size_t i = 0; i < 3; ++i)
            for (int approx = 0; approx < 2; ++approx) {
                tf_recency_window_options o = rw_options(mode, Ws[i], 4);
                if (approx) o.delta = 0.05;
                tf_recency_window *w = rw_new(&o);
                for (uint64_t k = 0; k < 3 * Ws[i] + 100; ++k) rw_insert(w, k % (Ws[i] + 50));
                tf_recency_window *c = tu_copy(&tu_recency_window, w);
                assert_true(tu_same_blob(w, c, tu_recency_window.serialize));
                for (uint64_t k = 0; k < Ws[i] + 100; ++k) assert_int_equal(rw_query(c, k), rw_query(w, k));
                size_t m1 = 0, m2 = 0;
                assert_int_equal(tf_recency_window_memory(w, &m1), TF_OK);
                assert_int_equal(tf_recency_window_memory(c, &m2), TF_OK);
                assert_int_equal(m1, m2);
                const tf_recency_window_info a = rw_info(w), b = rw_info(c);
                assert_memory_equal(&a, &b, sizeof a);
                const tf_recency_window_stats sa = rw_stats(w), sb = rw_stats(c);
                assert_memory_equal(&sa, &sb, sizeof sa);
                /* both go on alike */
                for (uint64_t k = 0; k < 2 * Ws[i] + 10; ++k)
                    assert_int_equal(rw_insert_report(c, k * 3 % 97), rw_insert_report(w, k * 3 % 97));
                assert_true(tu_same_blob(w, c, tu_recency_window.serialize));
                tf_recency_window_free(c);
                tf_recency_window_free(w);
            }
}

static void test_contracts(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window *w = small_window(mode, 0.0);
        const size_t n = tu_check_serialize_contract(w, &tu_recency_window);
        size_t len;
        unsigned char *blob = tu_snapshot(w, tu_recency_window.serialize, &len);
        assert_int_equal(len, n);
        tu_check_envelope(blob, len, 6, 0);
        size_t mem = 0;
        assert_int_equal(tf_recency_window_memory(w, &mem), TF_OK);
        assert_int_equal(tu_check_max_memory(blob, len, &tu_recency_window), mem);
        /* the memory of what a blob makes stays within its size plus 1 MiB */
        assert_true(mem <= len + (1u << 20));
        free(blob);
        tf_recency_window_free(w);
    }
    tu_check_deserialize_nulls(&tu_recency_window);
    /* a large structure too: the tables are in the blob */
    tf_recency_window_options o = rw_options(TF_RECENCY_WINDOW_HISTORICAL, 1 << 20, 16);
    tf_recency_window *w = rw_new(&o);
    size_t len = 0, mem = 0;
    assert_int_equal(tf_recency_window_serialized_size(w, &len), TF_OK);
    assert_int_equal(tf_recency_window_memory(w, &mem), TF_OK);
    assert_true(mem <= len + (1u << 20));
    tf_recency_window_free(w);
}

static void test_damaged_blobs(void **state) {
    (void)state;
    for (uint32_t mode = 0; mode < 3; ++mode) {
        tf_recency_window *w = small_window(mode, mode == 0 ? 0.01 : 0.0);
        tu_check_blob_of(w, tu_recency_window.serialize, tu_check_truncations, rw_try_blob);
        tu_check_blob_of(w, tu_recency_window.serialize, tu_check_resealed, rw_try_blob);
        tu_check_blob_of(w, tu_recency_window.serialize, tu_check_bit_flips, rw_try_blob);
        tu_check_blob_of(w, tu_recency_window.serialize, tu_check_payload_flips, rw_try_blob);
        tf_recency_window_free(w);
    }
    tu_check_random_blobs(6, 0, 2027, 600, NULL, NULL, rw_try_blob);
}

static tf_status cuckoo_try_blob(const unsigned char *blob, size_t len) {
    return tu_try_load(&tu_rotating_cuckoo, blob, len);
}

static void test_foreign_blobs(void **state) {
    (void)state;
    tf_age_bloom *a = NULL;
    assert_int_equal(tf_age_bloom_new(3, 4, 200, 1, 0, &a), TF_OK);
    tu_check_foreign_blob(&tu_age_bloom, a, 6, TF_ERR_CORRUPT, rw_try_blob);
    tf_age_bloom_free(a);
    tf_rotating_cuckoo *c = NULL;
    assert_int_equal(tf_rotating_cuckoo_new(NULL, &c), TF_OK);
    tu_check_foreign_blob(&tu_rotating_cuckoo, c, 6, TF_ERR_CORRUPT, rw_try_blob);
    tf_rotating_cuckoo_free(c);
    /* and ours is foreign to the others */
    tf_recency_window *w = small_window(0, 0.0);
    tu_check_foreign_blob(&tu_recency_window, w, 5, TF_ERR_CORRUPT, cuckoo_try_blob);
    tf_recency_window_free(w);
}

/* payload offsets (lib/recency_window/recency_window.cpp, docs/wire-format.md) */
#define P(off) (20 + (off))
#define L0(off) (20 + 96 + (off)) /* level 0's header */

/* Bits [bit, bit + n) of a little-endian byte string. */
static uint64_t get_bits(const unsigned char *p, uint64_t bit, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= (uint64_t)((p[(bit + i) / 8] >> ((bit + i) % 8)) & 1) << i;
    return v;
}
static void set_bits(unsigned char *p, uint64_t bit, unsigned n, uint64_t v) {
    for (unsigned i = 0; i < n; ++i) {
        const unsigned char m = (unsigned char)(1u << ((bit + i) % 8));
        if ((v >> i) & 1)
            p[(bit + i) / 8] |= m;
        else
            p[(bit + i) / 8] &= (unsigned char)~m;
    }
}

/* Level 0 of a blob: its slots' plane (entries of at most 64 bits). */
typedef struct {
    size_t words_off; /* the first word's offset in the blob */
    size_t end;       /* the offset after its planes (its stash) */
    uint64_t slots;
    unsigned bits, class_bits;
} rw_plane;
static rw_plane level0(const unsigned char *blob, const tf_recency_window *w) {
    rw_plane p;
    p.words_off = L0(32);
    p.slots = tu_get_le(blob + L0(0), 8);
    p.bits = (unsigned)tu_get_le(blob + L0(8), 4);
    tf_recency_window_level v = TF_RECENCY_WINDOW_LEVEL_INIT;
    assert_int_equal(tf_recency_window_get_level(w, 0, &v), TF_OK);
    p.class_bits = v.class_bits;
    assert_int_equal(v.entry_bits, p.bits);
    const uint64_t lo = p.bits > 64 ? 64 : p.bits, hi = p.bits > 64 ? p.bits - 64 : 0;
    p.end = p.words_off + 8 * (size_t)((p.slots * lo + 63) / 64 + (p.slots * hi + 63) / 64);
    return p;
}

/* A copy of `good` with `extra` bytes inserted at `off` (envelope's
 * payload length and checksum fixed). */
static unsigned char *with_bytes(const unsigned char *good, size_t n, size_t off, const unsigned char *extra,
                                 size_t count, size_t *out_len) {
    unsigned char *b = malloc(n + count);
    assert_non_null(b);
    memcpy(b, good, off);
    memcpy(b + off, extra, count);
    memcpy(b + off + count, good + off, n - off);
    tu_put_le(b + 12, tu_get_le(b + 12, 8) + count, 8);
    tu_fix_checksum(b, n + count);
    *out_len = n + count;
    return b;
}

/* Level 0 with `count` stash entries (sig, cls) appended to it. */
static tf_status try_stash(const unsigned char *good, size_t n, const rw_plane *p, const uint64_t *entries,
                           unsigned count) {
    const size_t end = p->end;
    unsigned char extra[64];
    for (unsigned i = 0; i < 2 * count; ++i) tu_put_le(extra + 8 * i, entries[i], 8);
    unsigned char *tmp = malloc(n);
    memcpy(tmp, good, n);
    tu_put_le(tmp + L0(12), count, 4);
    size_t len;
    unsigned char *b = with_bytes(tmp, n, end, extra, 16 * count, &len);
    const tf_status st = rw_try_blob(b, len);
    free(b);
    free(tmp);
    return st;
}

static void test_hostile_fields(void **state) {
    (void)state;
    tf_recency_window *w = small_window(TF_RECENCY_WINDOW_HISTORICAL, 0.0);
    size_t n;
    unsigned char *good = tu_snapshot(w, tu_recency_window.serialize, &n);
    const uint64_t levels = tu_get_le(good + P(52), 4);
    assert_int_equal(levels, rw_info(w).levels);
    const uint64_t slots = tu_get_le(good + L0(0), 8), items = tu_get_le(good + L0(16), 8);
    const tu_field_case cases[] = {
        {P(0), 0, 8, TF_ERR_CORRUPT},                       /* window 0 */
        {P(0), ((uint64_t)1 << 40) + 1, 8, TF_ERR_CORRUPT}, /* above 2^40 */
        {P(0), 400, 8, TF_ERR_CORRUPT},                     /* another shape than the tables' */
        {P(8), 0, 8, TF_ERR_CORRUPT},                       /* inv_eps 0 */
        {P(8), ((uint64_t)1 << 20) + 1, 8, TF_ERR_CORRUPT}, /* above 2^20 */
        {P(16), 3, 8, TF_ERR_CORRUPT},                      /* a block outside OptimalSM */
        {P(24), 100, 8, TF_ERR_CORRUPT},                    /* a cap below the structure */
        {P(32), 0x7ff8000000000000ULL, 8, TF_ERR_CORRUPT},  /* delta NaN */
        {P(32), 0x3ff0000000000000ULL, 8, TF_ERR_CORRUPT},  /* delta 1 */
        {P(32), 0x3f847ae147ae147bULL, 8, TF_ERR_CORRUPT},  /* delta 0.01: other signature bits */
        {P(40), 1, 4, TF_ERR_CORRUPT},                      /* ExactCuckoo: other levels */
        {P(40), 3, 4, TF_ERR_CORRUPT},                      /* no such mode */
        {P(48), 63, 4, TF_ERR_CORRUPT},                     /* signature bits */
        {P(52), levels + 1, 4, TF_ERR_CORRUPT},             /* levels */
        {P(52), 0, 4, TF_ERR_CORRUPT},                      /* */
        {P(56), (uint64_t)1 << 62, 8, TF_ERR_CORRUPT},      /* inserts */
        {L0(0), slots * 2, 8, TF_ERR_CORRUPT},              /* slots */
        {L0(8), 3, 4, TF_ERR_CORRUPT},                      /* entry bits */
        {L0(12), 17, 4, TF_ERR_CORRUPT},                    /* stash above 16 */
        {L0(12), 1, 4, TF_ERR_CORRUPT},                     /* a stash entry not there */
        {L0(16), items + 1, 8, TF_ERR_CORRUPT},             /* items off */
        {L0(16), items - 1, 8, TF_ERR_CORRUPT},             /* */
        {L0(16), slots + 1, 8, TF_ERR_CORRUPT},             /* more than the slots */
        {L0(24), slots + 1, 8, TF_ERR_CORRUPT},             /* cursor past the table */
        {L0(24), slots, 8, TF_OK},                          /* cursor on the stash: valid */
        {P(64), 12345, 8, TF_OK},                           /* a counter: any value */
    };
    tu_check_field_cases(good, n, cases, sizeof cases / sizeof cases[0], rw_try_blob);

    const rw_plane p = level0(good, w);
    const uint64_t field = ((uint64_t)1 << p.class_bits) - 1;
    /* the stash: a valid entry, a class ID outside the field, a signature
     * twice */
    const uint64_t one[2] = {0x123456789abcdef1ULL, 0};
    assert_int_equal(try_stash(good, n, &p, one, 1), TF_OK);
    const uint64_t outside[2] = {0x123456789abcdef1ULL, field};
    assert_int_equal(try_stash(good, n, &p, outside, 1), TF_ERR_CORRUPT);
    const uint64_t twice[4] = {0x123456789abcdef1ULL, 0, 0x123456789abcdef1ULL, 1};
    assert_int_equal(try_stash(good, n, &p, twice, 2), TF_ERR_CORRUPT);
    free(good);
    tf_recency_window_free(w);

    /* approximate signatures: a stash signature wider than their width */
    w = small_window(TF_RECENCY_WINDOW_HISTORICAL, 0.01);
    good = tu_snapshot(w, tu_recency_window.serialize, &n);
    const uint64_t q_items = tu_get_le(good + L0(16), 8);
    /* entries (at most 64 bits here): each slot is read back */
    const rw_plane q = level0(good, w);
    assert_true(q.bits <= 64);
    uint64_t occupied = UINT64_MAX, empty = UINT64_MAX;
    for (uint64_t s = 0; s < q.slots; ++s) {
        const uint64_t v = get_bits(good + q.words_off, s * q.bits, q.bits);
        const int used = (v & ((1u << q.class_bits) - 1)) != 0;
        if (used && occupied == UINT64_MAX) occupied = s;
        if (!used && empty == UINT64_MAX) empty = s;
    }
    assert_true(occupied != UINT64_MAX && empty != UINT64_MAX);
    unsigned char *bad = malloc(n);
    /* an empty slot with bits above its class field */
    memcpy(bad, good, n);
    set_bits(bad + q.words_off, empty * q.bits + q.class_bits, 1, 1);
    tu_fix_checksum(bad, n);
    assert_int_equal(rw_try_blob(bad, n), TF_ERR_CORRUPT);
    /* bits set past the last slot */
    memcpy(bad, good, n);
    const uint64_t used_bits = q.slots * q.bits;
    if (used_bits % 64 != 0) {
        set_bits(bad + q.words_off, used_bits, 1, 1);
        tu_fix_checksum(bad, n);
        assert_int_equal(rw_try_blob(bad, n), TF_ERR_CORRUPT);
    }
    /* one signature twice: an entry copied into another slot of its bucket */
    uint64_t free_in_bucket = UINT64_MAX;
    for (uint64_t s = occupied / 4 * 4; s < occupied / 4 * 4 + 4; ++s)
        if ((get_bits(good + q.words_off, s * q.bits, q.class_bits)) == 0) free_in_bucket = s;
    if (free_in_bucket != UINT64_MAX) {
        memcpy(bad, good, n);
        set_bits(bad + q.words_off, free_in_bucket * q.bits, q.bits,
                 get_bits(good + q.words_off, occupied * q.bits, q.bits));
        tu_put_le(bad + L0(16), q_items + 1, 8);
        tu_fix_checksum(bad, n);
        assert_int_equal(rw_try_blob(bad, n), TF_ERR_CORRUPT);
        assert_non_null(strstr(tf_last_error_message(), "twice"));
    }
    /* an entry erased: a valid structure that forgot a key */
    memcpy(bad, good, n);
    set_bits(bad + q.words_off, occupied * q.bits, q.bits, 0);
    tu_put_le(bad + L0(16), q_items - 1, 8);
    tu_fix_checksum(bad, n);
    assert_int_equal(rw_try_blob(bad, n), TF_OK);
    free(bad);
    const uint64_t fits[2] = {1, 0}, wide[2] = {UINT64_MAX, 0};
    assert_int_equal(try_stash(good, n, &q, fits, 1), TF_OK);
    assert_int_equal(try_stash(good, n, &q, wide, 1), TF_ERR_CORRUPT);
    /* an unknown flag bit */
    bad = malloc(n);
    memcpy(bad, good, n);
    tu_put_le(bad + 8, 0x1, 4);
    tu_fix_checksum(bad, n);
    assert_int_equal(rw_try_blob(bad, n), TF_ERR_CORRUPT);
    free(bad);
    free(good);
    tf_recency_window_free(w);
}

static const char *const golden_names[] = {"recency_window_v1", "recency_window_approx_v1", "recency_window_exact_v1",
                                           "recency_window_optimal_sm_v1"};
static const uint32_t golden_flags[] = {TF_RECENCY_WINDOW_HISTORICAL, TF_RECENCY_WINDOW_HISTORICAL | GOLDEN_RW_APPROX,
                                        TF_RECENCY_WINDOW_EXACT, TF_RECENCY_WINDOW_OPTIMAL_SM};

static void answer(const unsigned char *key, size_t key_len, const unsigned long long *numbers, void *ctx) {
    uint64_t r = 0;
    assert_int_equal(tf_recency_window_query(ctx, key, key_len, &r), TF_OK);
    assert_int_equal(r, numbers[0]);
}

static void test_golden_blobs(void **state) {
    (void)state;
    for (int i = 0; i < 4; ++i) {
        tf_recency_window *built = NULL;
        assert_int_equal(golden_recency_window(golden_flags[i], &built), TF_OK);
        tf_recency_window *w = tu_golden_read(golden_names[i], built, &tu_recency_window);
        /* the golden operations' promise: key-95 was inserted last but one
         * (before the binary key), key-0 .. key-4 long ago, key-100 ..
         * never */
        char key[32];
        const tf_recency_window_info info = rw_info(w);
        for (unsigned k = 0; k < GOLDEN_RW_KEYS; ++k) {
            const size_t kn = golden_key(k, key, sizeof key);
            uint64_t r = 0;
            assert_int_equal(tf_recency_window_query(w, key, kn, &r), TF_OK);
            if (k >= 100 && !(golden_flags[i] & GOLDEN_RW_APPROX)) assert_int_equal(r, TF_RECENCY_WINDOW_NOT_IN_WINDOW);
            if (k == 95) assert_true(rw_keeps_promise(&info, 1, r));
        }
        assert_int_equal(tu_for_each_answer(golden_names[i], 1, answer, w), GOLDEN_RW_KEYS + 1);
        tf_recency_window_free(w);
        tf_recency_window_free(built);
    }
}

TU_MAIN(test_round_trip, test_contracts, test_damaged_blobs, test_foreign_blobs, test_hostile_fields, test_golden_blobs)
