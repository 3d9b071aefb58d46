/*
 * make_corpus - writes the seed corpus of the fuzz targets.
 *
 *   make_corpus DESERIALIZE_DIR OPS_DIR [RATE_LIMITER_DIR [ROTATING_CUCKOO_DIR [RECENCY_WINDOW_DIR]]]
 *
 * DESERIALIZE_DIR (tests/fuzz/corpus/recency_deserialize) receives valid
 * RecencySketch blobs of several shapes and flags, made through the public
 * API, and damaged ones: truncated, bit-flipped, another kind or version,
 * and blobs whose checksum is right but whose fields break an invariant.
 * OPS_DIR (tests/fuzz/corpus/recency_ops) receives operation programs for
 * fuzz_recency_ops (the input format is described at the top of
 * fuzz_recency_ops.cpp). RATE_LIMITER_DIR (tests/fuzz/corpus/rate_limiter)
 * receives inputs of fuzz_rate_limiter (format at the top of
 * fuzz_rate_limiter.cpp): the two golden rate limiter blobs (tests/util/golden.h)
 * as given and with fields patched behind a resealed checksum, small blobs
 * with a full table, a reclaim horizon and a global window (one of them
 * with a seed), damaged blobs,
 * and operation programs for both modes. ROTATING_CUCKOO_DIR
 * (tests/fuzz/corpus/rotating_cuckoo) receives inputs of
 * fuzz_rotating_cuckoo (format at the top of fuzz_rotating_cuckoo.cpp):
 * the two golden filters and a filter with an expired table, as given,
 * damaged, and with fields patched behind a resealed checksum, and
 * operation programs over every layout. RECENCY_WINDOW_DIR
 * (tests/fuzz/corpus/recency_window) receives inputs of
 * fuzz_recency_window (format at the top of fuzz_recency_window.cpp): the
 * four golden structures as given, damaged, and with fields patched behind
 * a resealed checksum, and an operation program per mode.
 *
 * The outputs are committed; rerun this (it is built with the tests, never
 * run by them) only when the format or the op encoding changes, then check
 * that every file is still small:
 *   build/tests/fuzz/make_corpus tests/fuzz/corpus/recency_deserialize \
 *       tests/fuzz/corpus/recency_ops tests/fuzz/corpus/rate_limiter \
 *       tests/fuzz/corpus/rotating_cuckoo tests/fuzz/corpus/recency_window
 *
 * The damaged blobs that keep a valid checksum patch fields of the recency
 * sketch payload (width u64, depth u32, seed u32, cell count u64, cells) as
 * this version writes it; every damaged blob is checked to be refused with
 * the status it was made for, so a layout change shows up here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <murmurhash.h>
#include <temporalfilters.h>

#include "golden.h"
#include "test_util.h"

#define HEADER_SIZE 20
#define TRAILER_SIZE 8
#define PAYLOAD_WIDTH (HEADER_SIZE + 0)
#define PAYLOAD_DEPTH (HEADER_SIZE + 8)
#define PAYLOAD_NCELLS (HEADER_SIZE + 16)
#define PAYLOAD_CELLS (HEADER_SIZE + 24)

static int failures = 0;

static void die(const char *what) {
    fprintf(stderr, "make_corpus: %s\n", what);
    exit(1);
}

static void write_file(const char *dir, const char *name, const uint8_t *data, size_t len) {
    char path[4096];
    FILE *f;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) die("path too long");
    f = fopen(path, "wb");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    if ((len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    printf("%s (%zu bytes)\n", path, len);
}

static void put_le(uint8_t *p, uint64_t v, int bytes) {
    int i;
    for (i = 0; i < bytes; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    int i;
    for (i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

/* Recomputes the checksum of a blob whose payload length field is right. */
static void fix_checksum(uint8_t *blob, size_t len) {
    uint64_t h[2];
    lmmh_x64_128(blob, (unsigned)(len - TRAILER_SIZE), 0, h);
    put_le(blob + len - TRAILER_SIZE, h[0], 8);
}

typedef struct {
    uint8_t *data;
    size_t len;
} blob;

/* The blob of `obj` (`st` says what it is), with room for a byte more. */
static blob blob_of(const tu_structure *st, const void *obj) {
    blob b;
    size_t written = 0;
    if (st->serialized_size(obj, &b.len) != TF_OK) die("serialized_size failed");
    b.data = malloc(b.len + 1); /* +1: room for a trailing byte */
    if (b.data == NULL) die("out of memory");
    if (st->serialize(obj, b.data, b.len, &written) != TF_OK || written != b.len) die("serialize failed");
    return b;
}

static void update(tf_recency_sketch *s, const char *key, uint64_t now) {
    if (tf_recency_sketch_update(s, key, strlen(key), now) != TF_OK) die("update failed");
}

/* A valid sketch blob: shape, flags and a few writes chosen by `variant`. */
static blob make_sketch(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags, int variant) {
    tf_recency_sketch *s = NULL;
    blob b;
    int granted = 0;
    if (tf_recency_sketch_new(width, depth, seed, flags, &s) != TF_OK) die("new failed");
    switch (variant) {
        case 0: /* empty */
            break;
        case 1: /* a few last-seen times, one out of order */
            update(s, "alice", 1000);
            update(s, "bob", 1005);
            update(s, "carol", 1010);
            update(s, "alice", 990);
            update(s, "", 7);
            break;
        case 2: /* pacing */
            if (tf_recency_sketch_pace(s, "client-1", 8, 50, 10, &granted, NULL) != TF_OK) die("pace failed");
            if (tf_recency_sketch_pace(s, "client-2", 8, 55, 10, &granted, NULL) != TF_OK) die("pace failed");
            if (tf_recency_sketch_pace(s, "client-1", 8, 61, 10, &granted, NULL) != TF_OK) die("pace failed");
            break;
        case 3: /* TTL expiries, one saturating */
            if (tf_recency_sketch_ttl_insert(s, "session:1", 9, 1700000000000ull, 60000) != TF_OK ||
                tf_recency_sketch_ttl_insert(s, "session:2", 9, 1700000005000ull, UINT64_MAX) != TF_OK)
                die("ttl_insert failed");
            break;
        default: /* times near the top of the range */
            update(s, "x", UINT64_MAX);
            update(s, "y", UINT64_MAX - 1);
            update(s, "z", 1);
            break;
    }
    b = blob_of(&tu_recency_sketch, s);
    tf_recency_sketch_free(s);
    return b;
}

/* How `data` deserializes as `st` must be `want` (counted as a failure
 * otherwise: the corpus file is not what its name says). */
static void expect_status(const tu_structure *st, const uint8_t *data, size_t len, tf_status want, const char *name) {
    void *obj = NULL;
    const tf_status got = st->deserialize(data, len, NULL, &obj);
    if (got != want) {
        fprintf(stderr, "make_corpus: %s: deserialize gives %s, expected %s\n", name, tf_status_string(got),
                tf_status_string(want));
        ++failures;
    }
    if (obj) st->free(obj);
}

/* Writes a sketch blob after checking how it deserializes. */
static void emit_blob(const char *dir, const char *name, const blob *b, tf_status want) {
    expect_status(&tu_recency_sketch, b->data, b->len, want, name);
    write_file(dir, name, b->data, b->len);
}

/* A copy of `b` cut or grown to `len` bytes (a grown byte is 0). */
static blob resized(const blob *b, size_t len) {
    blob c;
    c.len = len;
    c.data = calloc(len + 1, 1);
    if (c.data == NULL) die("out of memory");
    memcpy(c.data, b->data, len < b->len ? len : b->len);
    return c;
}

/* How a damaged blob is written (emit_blob, rl_emit_blob, rl_emit_sealed). */
typedef void (*emit_fn)(const char *dir, const char *name, const blob *b, tf_status want);

/* `base` cut or grown to `len` bytes. */
static void emit_resized(const char *dir, const char *name, emit_fn emit, const blob *base, size_t len,
                         tf_status want) {
    blob b = resized(base, len);
    emit(dir, name, &b, want);
    free(b.data);
}

/* `base` with byte `off` XORed with `mask`, the checksum left as it was. */
static void emit_flipped(const char *dir, const char *name, emit_fn emit, const blob *base, size_t off, uint8_t mask,
                         tf_status want) {
    blob b = resized(base, base->len);
    b.data[off] ^= mask;
    emit(dir, name, &b, want);
    free(b.data);
}

/* `base` with the little-endian field at `off` set to `value`, the
 * checksum recomputed. */
static void emit_patched(const char *dir, const char *name, emit_fn emit, const blob *base, size_t off, uint64_t value,
                         int bytes, tf_status want) {
    blob b = resized(base, base->len);
    put_le(b.data + off, value, bytes);
    fix_checksum(b.data, b.len);
    emit(dir, name, &b, want);
    free(b.data);
}

static void deserialize_corpus(const char *dir) {
    const uint32_t C = TF_RECENCY_SKETCH_CONCURRENT, B = TF_RECENCY_SKETCH_BLOCKED;
    blob base, b, extra;

    /* Valid blobs: different shapes, flags and contents (<= 64 cells). */
    b = make_sketch(1, 1, 0, 0, 0);
    emit_blob(dir, "valid_1x1_empty", &b, TF_OK);
    free(b.data);
    base = make_sketch(8, 4, 42, 0, 1);
    emit_blob(dir, "valid_8x4_standard", &base, TF_OK);
    b = make_sketch(5, 3, 7, B, 1);
    emit_blob(dir, "valid_5x3_blocked", &b, TF_OK);
    free(b.data);
    b = make_sketch(16, 2, 0xdeadbeefu, C, 2);
    emit_blob(dir, "valid_16x2_concurrent_paced", &b, TF_OK);
    free(b.data);
    b = make_sketch(7, 8, 3, B | C, 3);
    emit_blob(dir, "valid_7x8_blocked_concurrent_ttl", &b, TF_OK);
    free(b.data);
    extra = make_sketch(2, 32, 1, 0, 4);
    emit_blob(dir, "valid_2x32_standard_maxdepth", &extra, TF_OK);
    b = make_sketch(3, 8, 99, B, 4);
    emit_blob(dir, "valid_3x8_blocked_maxdepth", &b, TF_OK);
    free(b.data);

    /* Truncated. */
    emit_resized(dir, "truncated_27", emit_blob, &base, HEADER_SIZE + TRAILER_SIZE - 1, TF_ERR_TRUNCATED);
    emit_resized(dir, "truncated_last_byte", emit_blob, &base, base.len - 1, TF_ERR_TRUNCATED);

    /* Bit flips: a cell, the checksum. */
    emit_flipped(dir, "bitflip_cell", emit_blob, &base, PAYLOAD_CELLS + 3, 0x10, TF_ERR_CHECKSUM);
    emit_flipped(dir, "bitflip_checksum", emit_blob, &base, base.len - 1, 0x80, TF_ERR_CHECKSUM);

    /* Envelope fields, checksum recomputed (the magic: not). */
    emit_flipped(dir, "bad_magic", emit_blob, &base, 0, 'T' ^ 'X', TF_ERR_BAD_MAGIC);
    emit_patched(dir, "version_2", emit_blob, &base, 4, 2, 2, TF_ERR_UNSUPPORTED_VERSION);
    emit_patched(dir, "wrong_kind_2", emit_blob, &base, 6, 2, 2, TF_ERR_WRONG_KIND);
    emit_patched(dir, "unknown_flag_bit", emit_blob, &base, 8, 0x4, 4, TF_ERR_CORRUPT);
    emit_resized(dir, "trailing_byte", emit_blob, &base, base.len + 1, TF_ERR_CORRUPT);

    /* Payload invariants broken, checksum recomputed. */
    emit_patched(dir, "corrupt_depth_0", emit_blob, &base, PAYLOAD_DEPTH, 0, 4, TF_ERR_CORRUPT);
    emit_patched(dir, "corrupt_width_plus_1", emit_blob, &base, PAYLOAD_WIDTH, get_le(base.data + PAYLOAD_WIDTH, 8) + 1,
                 8, TF_ERR_CORRUPT);
    emit_patched(dir, "corrupt_huge_cell_count", emit_blob, &base, PAYLOAD_NCELLS, UINT64_MAX / 8, 8, TF_ERR_CORRUPT);
    /* depth 32 is too deep for the blocked layout */
    emit_patched(dir, "corrupt_blocked_depth_32", emit_blob, &extra, 8, TF_RECENCY_SKETCH_BLOCKED, 4, TF_ERR_CORRUPT);

    free(base.data);
    free(extra.data);
}

/* Op encoding of fuzz_recency_ops.cpp. */
enum {
    UPDATE,
    QUERY,
    PACE,
    TTL_INSERT,
    TTL_LIVE,
    UPDATE2,
    MERGE,
    MERGE_SELF,
    MERGE_BAD,
    CLEAR,
    CLEAR2,
    ROUND_TRIP,
    ESTIMATE,
    INVALID,
    SWEEP,
    INFO,
    DAMAGED,
    DIMENSIONS,
    LONG_KEY,
    PACE_BURST
};
#define FWD(x) (x)           /* time: clock += x (x < 64) */
#define BACK(x) (0x40 | (x)) /* time: clock -= x */
#define ABS 0x80             /* time: next 8 bytes */
#define TOP(x) (0xC0 | (x))  /* time: UINT64_MAX - x (x < 32) */
#define JUMP(x) (0xE0 | (x)) /* time: clock += x << 20 */
#define SPAN(x) ((x)-1)      /* span: 1..254 */
#define SPAN_MAX 0xFE
#define LIT(n) (0xC0 | (n)) /* key: n literal bytes follow */
#define LE64(v)                                                                                                      \
    (uint8_t)((v)&0xff), (uint8_t)(((v) >> 8) & 0xff), (uint8_t)(((v) >> 16) & 0xff), (uint8_t)(((v) >> 24) & 0xff), \
        (uint8_t)(((v) >> 32) & 0xff), (uint8_t)(((v) >> 40) & 0xff), (uint8_t)(((v) >> 48) & 0xff),                 \
        (uint8_t)(((v) >> 56) & 0xff)

/* header: flags (+4: merge source toggles CONCURRENT), width-1, depth-1, seed */
static const uint8_t ops_basic[] = {
    0,     15,    3,          7,      UPDATE,   1,   FWD(5),   UPDATE, 2,      FWD(1), QUERY, 1,
    QUERY, 2,     QUERY,      3,      UPDATE,   1,   BACK(9),  QUERY,  1,      UPDATE, 0,     FWD(2),
    QUERY, 0,     UPDATE,     LIT(3), 'a',      'b', 'c',      FWD(1), QUERY,  LIT(3), 'a',   'b',
    'c',   SWEEP, ROUND_TRIP, INFO,   ESTIMATE, 0,   ESTIMATE, 1,      FWD(0), SWEEP};

static const uint8_t ops_pace[] = {
    0,          7,          1,      1,       PACE,     1,         FWD(1),     SPAN(10), PACE,     1,          FWD(3),
    SPAN(10),   PACE,       1,      FWD(10), SPAN(10), PACE,      2,          FWD(0),   SPAN(10), PACE,       2,
    BACK(20),   SPAN(10),   PACE,   1,       BACK(5),  SPAN(1),   PACE_BURST, 3,        FWD(30),  SPAN(5),    2,
    PACE_BURST, 3,          FWD(5), SPAN(5), 1,        PACE,      4,          TOP(0),   SPAN_MAX, PACE,       4,
    FWD(1),     SPAN(1),    PACE,   5,       TOP(3),   SPAN(200), PACE,       5,        ABS,      LE64(1ull), SPAN(2),
    SWEEP,      ROUND_TRIP, PACE,   1,       FWD(63),  SPAN(10)};

static const uint8_t ops_ttl[] = {0,
                                  31,
                                  2,
                                  9,
                                  TTL_INSERT,
                                  1,
                                  FWD(1),
                                  SPAN(30),
                                  TTL_LIVE,
                                  1,
                                  FWD(10),
                                  TTL_LIVE,
                                  1,
                                  FWD(25),
                                  TTL_LIVE,
                                  1,
                                  BACK(30),
                                  TTL_INSERT,
                                  2,
                                  ABS,
                                  LE64(0xfffffffffffffff0ull),
                                  SPAN(100),
                                  TTL_LIVE,
                                  2,
                                  TOP(0),
                                  TTL_INSERT,
                                  3,
                                  FWD(1),
                                  SPAN_MAX,
                                  TTL_LIVE,
                                  3,
                                  TOP(1),
                                  TTL_LIVE,
                                  9,
                                  FWD(1),
                                  TTL_INSERT,
                                  4,
                                  JUMP(3),
                                  0xFF,
                                  LE64(86400000ull),
                                  TTL_LIVE,
                                  4,
                                  FWD(2),
                                  SWEEP,
                                  ESTIMATE,
                                  1,
                                  FWD(0)};

static const uint8_t ops_merge[] = {
    4,         11,       2,         5,      UPDATE,    1,       FWD(5),    UPDATE2,    1,          FWD(3),
    1,         UPDATE2,  2,         FWD(1), 1,         UPDATE2, 3,         FWD(1),     0,          SPAN(40),
    MERGE,     QUERY,    1,         QUERY,  2,         QUERY,   3,         MERGE_SELF, MERGE_BAD,  0,
    MERGE_BAD, 1,        MERGE_BAD, 2,      MERGE_BAD, 3,       MERGE_BAD, 0x13,       CLEAR2,     UPDATE2,
    4,         BACK(30), 1,         MERGE,  SWEEP,     CLEAR,   MERGE,     SWEEP,      ROUND_TRIP, MERGE};

static const uint8_t ops_blocked[] = {
    2,        4,      2,       3,          UPDATE, 1,         FWD(1), UPDATE,  2,       FWD(1), UPDATE, 3,      FWD(1),
    UPDATE,   4,      FWD(1),  UPDATE,     5,      FWD(1),    UPDATE, 6,       FWD(1),  UPDATE, 7,      FWD(1), UPDATE,
    8,        FWD(1), SWEEP,   QUERY,      20,     PACE,      9,      FWD(1),  SPAN(3), PACE,   9,      FWD(1), SPAN(3),
    ESTIMATE, 1,      BACK(5), ROUND_TRIP, INFO,   MERGE_BAD, 3,      UPDATE2, 1,       FWD(2), 1,      MERGE,  SWEEP};

static const uint8_t ops_concurrent[] = {5,      9,       5,       11, UPDATE,   1,       FWD(4),     UPDATE,
                                         2,      FWD(4),  PACE,    3,  FWD(1),   SPAN(7), TTL_INSERT, 4,
                                         FWD(1), SPAN(9), UPDATE2, 5,  FWD(1),   1,       MERGE,      ROUND_TRIP,
                                         SWEEP,  CLEAR,   QUERY,   1,  ESTIMATE, 0,       INFO};

static const uint8_t ops_blocked_concurrent[] = {
    3,     6,          7,          200,     UPDATE, 1,       FWD(1), UPDATE,  2,   FWD(1),  UPDATE,
    3,     BACK(1),    PACE_BURST, 4,       FWD(9), SPAN(4), 2,      UPDATE2, 1,   JUMP(1), 1,
    MERGE, MERGE_SELF, ROUND_TRIP, DAMAGED, 1,      0,       40,     SWEEP,   INFO};

static const uint8_t ops_invalid[] = {
    0,       3,       1,       0,       UPDATE,  1,       FWD(1),  INVALID, 0,       1,       INVALID, 1,       1,
    INVALID, 2,       1,       INVALID, 3,       1,       INVALID, 4,       1,       INVALID, 5,       1,       INVALID,
    6,       1,       INVALID, 7,       1,       INVALID, 8,       1,       INVALID, 9,       1,       INVALID, 10,
    1,       INVALID, 11,      1,       INVALID, 12,      1,       INVALID, 13,      5,       1,       INVALID, 14,
    1,       INVALID, 15,      1,       INVALID, 16,      1,       INVALID, 17,      1,       INVALID, 41,      1,
    INVALID, 65,      1,       INVALID, 89,      1,       INVALID, 113,     1,       INVALID, 137,     1,       INVALID,
    161,     1,       INVALID, 185,     1,       INVALID, 209,     1,       INVALID, 233,     1,       INVALID, 18,
    1,       INVALID, 19,      1,       INVALID, 20,      1,       INVALID, 21,      0,       SWEEP};

static const uint8_t ops_damaged[] = {1, 2, 2,       77,   UPDATE, 1,  FWD(1),  UPDATE, 2, FWD(2), DAMAGED, 0,
                                      0, 0, DAMAGED, 0,    0,      27, DAMAGED, 0,      0, 60,     DAMAGED, 1,
                                      0, 3, DAMAGED, 0x21, 0,      50, DAMAGED, 0xE1,   0, 12,     DAMAGED, 2,
                                      0, 0, DAMAGED, 3,    0,      0,  DAMAGED, 7,      0, 0,      SWEEP};

static const uint8_t ops_dimensions[] = {0, 0, 0, 0,      DIMENSIONS, 255,    5,     0, DIMENSIONS,
                                         7, 4, 3, UPDATE, 0,          FWD(1), QUERY, 0};

static const uint8_t ops_collide[] = {
    0,       0,       0,        1, /* one cell: every key shares it */
    UPDATE,  1,       FWD(10),  UPDATE, 2,      BACK(5), QUERY,      2, QUERY,  3,         PACE,     4,
    FWD(1),  SPAN(3), PACE,     5,      FWD(3), SPAN(3), PACE,       6, FWD(0), SPAN(3),   PACE,     7,
    FWD(3),  SPAN(3), PACE,     8,      FWD(3), SPAN(3), TTL_INSERT, 9, FWD(1), SPAN(100), TTL_LIVE, 1,
    FWD(50), SWEEP,   ESTIMATE, 1,      FWD(0), CLEAR,   QUERY,      1, SWEEP};

static const uint8_t ops_clock[] = {0,
                                    19,
                                    2,
                                    4,
                                    UPDATE,
                                    1,
                                    ABS,
                                    LE64(1000000ull),
                                    UPDATE,
                                    2,
                                    BACK(63),
                                    UPDATE,
                                    3,
                                    ABS,
                                    LE64(5ull),
                                    QUERY,
                                    1,
                                    UPDATE,
                                    4,
                                    ABS,
                                    LE64(0ull),
                                    UPDATE,
                                    5,
                                    TOP(0),
                                    UPDATE,
                                    6,
                                    TOP(31),
                                    QUERY,
                                    5,
                                    QUERY,
                                    6,
                                    PACE,
                                    7,
                                    ABS,
                                    LE64(0xfffffffffffffffeull),
                                    0xFF,
                                    LE64(0xffffffffffffffffull),
                                    PACE,
                                    7,
                                    FWD(1),
                                    SPAN(1),
                                    UPDATE,
                                    8,
                                    JUMP(31),
                                    ESTIMATE,
                                    5,
                                    FWD(0),
                                    SWEEP,
                                    ROUND_TRIP,
                                    SWEEP};

static const uint8_t ops_long_key[] = {
    0,   9,   3,   2,   LONG_KEY, 2,   'l', 'o', 'n', 'g', '-', 'k', 'e', 'y',    '-',    'w',     'i',     't',
    'h', '-', '2', '5', '-',      'b', 'y', 't', 'e', 's', '!', '!', '!', FWD(1), UPDATE, LIT(16), 0,       1,
    2,   3,   4,   5,   6,        7,   8,   9,   10,  11,  12,  13,  14,  15,     FWD(1), QUERY,   LIT(16), 0,
    1,   2,   3,   4,   5,        6,   7,   8,   9,   10,  11,  12,  13,  14,     15,     SWEEP};

static const uint8_t ops_depth32[] = {0,      63,     31,      0xA5, /* width capped to 8 for 32 rows */
                                      UPDATE, 1,      FWD(1),  UPDATE, 2,          FWD(1), UPDATE,   3, FWD(1),  PACE,
                                      1,      FWD(1), SPAN(2), MERGE,  ROUND_TRIP, INFO,   ESTIMATE, 1, BACK(2), SWEEP};

static const uint8_t ops_budget[] = {
    0,    1, 0,       3, /* 2 cells, many keys paced with the same interval */
    PACE, 1, FWD(1),  SPAN(50), PACE, 2,  FWD(1),   SPAN(50), PACE, 3,  FWD(1),  SPAN(50), PACE, 4, FWD(1), SPAN(50),
    PACE, 5, FWD(1),  SPAN(50), PACE, 6,  FWD(1),   SPAN(50), PACE, 7,  FWD(1),  SPAN(50), PACE, 8, FWD(1), SPAN(50),
    PACE, 9, FWD(60), SPAN(50), PACE, 10, BACK(30), SPAN(50), PACE, 11, FWD(40), SPAN(50), SWEEP};

static void ops_corpus(const char *dir) {
#define EMIT(name) write_file(dir, #name, name, sizeof name)
    EMIT(ops_basic);
    EMIT(ops_pace);
    EMIT(ops_ttl);
    EMIT(ops_merge);
    EMIT(ops_blocked);
    EMIT(ops_concurrent);
    EMIT(ops_blocked_concurrent);
    EMIT(ops_invalid);
    EMIT(ops_damaged);
    EMIT(ops_dimensions);
    EMIT(ops_collide);
    EMIT(ops_clock);
    EMIT(ops_long_key);
    EMIT(ops_depth32);
    EMIT(ops_budget);
#undef EMIT
}

/* ------------------------------------------------------------------ */
/* fuzz_rate_limiter                                                    */

/* The first byte of an input picks the mode. */
enum { RL_BLOB = 0, RL_SEALED = 1, RL_BUCKETED = 2, RL_EXACT = 3 };

/* Payload fields of a rate limiter blob (kind 4), after the envelope. */
#define RLF_MAX_KEYS (HEADER_SIZE + 24)
#define RLF_GLOBAL_LIMIT (HEADER_SIZE + 32)
#define RLF_HORIZON (HEADER_SIZE + 64)
#define RLF_GLOBAL_LATEST (HEADER_SIZE + 72)
#define RLF_FLAGS 8

/* The limiter's blob; frees it. */
static blob rl_serialize(tf_rate_limiter *r) {
    blob b = blob_of(&tu_rate_limiter, r);
    tf_rate_limiter_free(r);
    return b;
}

static void rl_acquire(tf_rate_limiter *r, const char *key, uint64_t now, uint64_t n) {
    int allowed;
    if (tf_rate_limiter_acquire(r, key, strlen(key), now, n, &allowed, NULL, NULL) != TF_OK) die("acquire failed");
}

/* Writes <mode byte><blob> after checking how the blob (resealed first
 * for RL_SEALED, as the target does) deserializes. */
static void rl_emit(const char *dir, const char *name, int mode, const blob *b, tf_status want) {
    uint8_t *in = malloc(b->len + 1);
    if (in == NULL) die("out of memory");
    in[0] = (uint8_t)mode;
    memcpy(in + 1, b->data, b->len);
    if (mode == RL_SEALED) {
        put_le(in + 1 + 12, b->len - HEADER_SIZE - TRAILER_SIZE, 8);
        fix_checksum(in + 1, b->len);
    }
    expect_status(&tu_rate_limiter, in + 1, b->len, want, name);
    write_file(dir, name, in, b->len + 1);
    free(in);
}

/* rl_emit as an emit_fn: the blob as given, or resealed */
static void rl_emit_blob(const char *dir, const char *name, const blob *b, tf_status want) {
    rl_emit(dir, name, RL_BLOB, b, want);
}
static void rl_emit_sealed(const char *dir, const char *name, const blob *b, tf_status want) {
    rl_emit(dir, name, RL_SEALED, b, want);
}

static void rl_blobs(const char *dir) {
    tf_rate_limiter *r = NULL;
    if (golden_rate_limiter(0, &r) != TF_OK) die("golden limiter failed");
    blob golden = rl_serialize(r), b;
    r = NULL;
    if (golden_rate_limiter(TF_RATE_LIMITER_EXACT, &r) != TF_OK) die("golden limiter failed");
    blob exact = rl_serialize(r);
    r = NULL;
    uint64_t keys = 0;
    tf_rate_limiter_stats stats = TF_RATE_LIMITER_STATS_INIT;

    rl_emit_blob(dir, "blob_golden", &golden, TF_OK);
    rl_emit_blob(dir, "blob_golden_exact", &exact, TF_OK);

    /* resealed: a reclaim horizon above the keys' clocks */
    emit_patched(dir, "sealed_golden_horizon", rl_emit_sealed, &golden, RLF_HORIZON, 3500, 8, TF_OK);
    /* resealed: fail-open, the table exactly full */
    b = resized(&exact, exact.len);
    if (tf_rate_limiter_deserialize(exact.data, exact.len, NULL, &r) != TF_OK) die("golden blob does not load");
    if (tf_rate_limiter_get_stats(r, &stats) != TF_OK) die("stats failed");
    keys = stats.keys;
    tf_rate_limiter_free(r);
    put_le(b.data + RLF_MAX_KEYS, keys, 8);
    put_le(b.data + RLF_FLAGS, TF_RATE_LIMITER_EXACT | TF_RATE_LIMITER_FULL_ALLOW, 4);
    rl_emit_sealed(dir, "sealed_golden_exact_full_allow", &b, TF_OK);
    free(b.data);
    /* resealed but broken: a global clock without a global limit */
    emit_patched(dir, "sealed_golden_no_global", rl_emit_sealed, &golden, RLF_GLOBAL_LIMIT, 0, 8, TF_ERR_CORRUPT);

    /* damaged as given */
    emit_resized(dir, "blob_truncated", rl_emit_blob, &golden, golden.len - 1, TF_ERR_TRUNCATED);
    emit_flipped(dir, "blob_bitflip", rl_emit_blob, &exact, RLF_GLOBAL_LATEST, 0x01, TF_ERR_CHECKSUM);

    /* small: two keys of a full table (one idle, one reclaimed: a horizon),
     * a global window, an override; fail-closed; seed 0, and a seed (its
     * field after the header, flag bit 2) */
    for (int seeded = 0; seeded < 2; ++seeded) {
        if (tf_rate_limiter_new(2, 100, 10, seeded ? 0x5eed5eedu : 0, 0, &r) != TF_OK) die("new failed");
        if (tf_rate_limiter_set_global_limit(r, 3) != TF_OK || tf_rate_limiter_set_max_keys(r, 2) != TF_OK ||
            tf_rate_limiter_set_key_limit(r, "vip", 3, 5) != TF_OK)
            die("setting up the limiter failed");
        rl_acquire(r, "a", 10, 1);
        rl_acquire(r, "b", 20, 2);
        rl_acquire(r, "c", 150, 1); /* a and b idle: one is reclaimed */
        rl_acquire(r, "vip", 160, 2);
        b = rl_serialize(r);
        rl_emit_blob(dir, seeded ? "blob_small_full_seeded" : "blob_small_full", &b, TF_OK);
        free(b.data);
    }
    /* the same in exact mode, fail-open, keys up to 40 bytes */
    if (tf_rate_limiter_new(3, 50, 0, 0, TF_RATE_LIMITER_EXACT | TF_RATE_LIMITER_FULL_ALLOW, &r) != TF_OK)
        die("new failed");
    if (tf_rate_limiter_set_global_limit(r, 4) != TF_OK || tf_rate_limiter_set_max_keys(r, 2) != TF_OK)
        die("setting up the limiter failed");
    rl_acquire(r, "0123456789abcdef", 5, 2);
    rl_acquire(r, "a key that is stored outside the table, 40", 7, 1);
    rl_acquire(r, "untracked", 8, 1); /* full: admitted untracked */
    rl_acquire(r, "x", 100, 1);       /* both idle: one is reclaimed */
    b = rl_serialize(r);
    rl_emit_blob(dir, "blob_small_exact_full_allow", &b, TF_OK);
    free(b.data);

    free(golden.data);
    free(exact.data);
}

/* Op encoding of fuzz_rate_limiter.cpp (opcode, key, operand). */
enum {
    RL_ACQ = 0,
    RL_PEEK_ACQ = 2,
    RL_PEEK,
    RL_CLOCK,
    RL_REFUND,
    RL_RESET,
    RL_KEY_LIMIT,
    RL_ROUND_TRIP,
    RL_STATS,
    RL_MAX_KEYS,
    RL_INVALID
};
#define RL_N(x) ((x)-1)           /* n = 1..4 */
#define RL_OVER 14                /* n = limit + 1 */
#define RL_HUGE 0xFF              /* n = UINT64_MAX */
#define RL_FWD(x) (x)             /* clock += x (x < 96) */
#define RL_BUCKETS(x) (95 + (x))  /* clock += x buckets (1..64) */
#define RL_WINDOWS(x) (159 + (x)) /* clock += x windows (1..40) */
#define RL_BACKB(x) (199 + (x))   /* clock -= x buckets (1..40) */
#define RL_BACK(x) (239 + (x))    /* clock -= x (1..12) */
#define RL_END(k) (252 + (k))     /* clock = UINT64_MAX - k windows (0..3) */
#define RL_KL(l) (l)              /* key limit l (0..10 but 7; 0 removes the override) */
#define RL_KL7 18
#define RL_KL_BAD 7                    /* above the maximum: refused */
#define RL_GLOBAL(g) (4 * ((g)-1) + 1) /* global limit g (1..24) */
#define RL_MAX(m) (4 * ((m)-1))        /* max_keys m (1..6) */
#define RL_NONE 0                      /* no global limit, or 1 for max_keys: see RL_NOMAX */
#define RL_NOMAX 1
#define W16(v) (uint8_t)((v)&0xff), (uint8_t)(((v) >> 8) & 0xff)
/* header: mode, full-allow, limit, buckets, width, [exact: ignored width], global, max_keys, start */
#define RL_HEAD(mode, allow, limit, nb, width) (mode), (allow), (limit)-1, (nb)-1, W16((width)-1)
#define CLOCK(how) RL_CLOCK, 0, (how)

static const uint8_t prog_basic[] = {RL_HEAD(RL_BUCKETED, 0, 3, 10, 10),
                                     RL_NONE,
                                     RL_NOMAX,
                                     W16(999),
                                     RL_ACQ,
                                     1,
                                     RL_N(1),
                                     RL_ACQ,
                                     1,
                                     RL_N(2),
                                     RL_PEEK,
                                     1,
                                     RL_N(1),
                                     RL_ACQ,
                                     1,
                                     RL_N(1),
                                     CLOCK(RL_FWD(50)),
                                     RL_ACQ,
                                     2,
                                     RL_N(3),
                                     RL_REFUND,
                                     1,
                                     2,
                                     RL_PEEK_ACQ,
                                     1,
                                     RL_N(1),
                                     CLOCK(RL_BUCKETS(5)),
                                     RL_ACQ,
                                     1,
                                     RL_N(2),
                                     CLOCK(RL_BACK(7)),
                                     RL_ACQ,
                                     1,
                                     RL_N(1),
                                     RL_KEY_LIMIT,
                                     3,
                                     RL_KL(5),
                                     RL_ACQ,
                                     3,
                                     RL_N(4),
                                     RL_ACQ,
                                     3,
                                     RL_OVER,
                                     RL_PEEK,
                                     3,
                                     RL_HUGE,
                                     RL_RESET,
                                     3,
                                     RL_STATS,
                                     0,
                                     RL_ROUND_TRIP,
                                     0,
                                     CLOCK(RL_WINDOWS(1)),
                                     RL_PEEK_ACQ,
                                     1,
                                     RL_N(3),
                                     RL_ACQ,
                                     0,
                                     RL_N(1),
                                     RL_ACQ,
                                     8,
                                     RL_N(1),
                                     RL_ACQ,
                                     10,
                                     RL_N(1),
                                     RL_ACQ,
                                     11,
                                     RL_N(2),
                                     RL_STATS,
                                     0};

static const uint8_t prog_global[] = {RL_HEAD(RL_BUCKETED, 0, 5, 4, 25),
                                      RL_GLOBAL(4),
                                      RL_NOMAX,
                                      W16(4999),
                                      RL_ACQ,
                                      1,
                                      RL_N(2),
                                      RL_ACQ,
                                      2,
                                      RL_N(1),
                                      RL_PEEK,
                                      3,
                                      RL_N(2),
                                      RL_PEEK_ACQ,
                                      3,
                                      RL_N(1),
                                      RL_ACQ,
                                      4,
                                      RL_N(1),
                                      RL_REFUND,
                                      1,
                                      1,
                                      RL_PEEK_ACQ,
                                      4,
                                      RL_N(1),
                                      CLOCK(RL_FWD(30)),
                                      RL_KEY_LIMIT,
                                      5,
                                      RL_KL(9),
                                      RL_ACQ,
                                      5,
                                      RL_N(4),
                                      CLOCK(RL_BACKB(3)),
                                      RL_ACQ,
                                      2,
                                      RL_N(1),
                                      RL_ACQ,
                                      6,
                                      RL_N(1),
                                      RL_PEEK,
                                      5,
                                      RL_HUGE,
                                      RL_ACQ,
                                      5,
                                      RL_OVER,
                                      CLOCK(RL_BUCKETS(4)),
                                      RL_PEEK_ACQ,
                                      1,
                                      RL_N(4),
                                      RL_REFUND,
                                      1,
                                      3,
                                      RL_REFUND,
                                      2,
                                      1,
                                      RL_ACQ,
                                      7,
                                      RL_N(2),
                                      RL_ROUND_TRIP,
                                      0,
                                      RL_ACQ,
                                      7,
                                      RL_N(2),
                                      RL_RESET,
                                      7,
                                      RL_ACQ,
                                      7,
                                      RL_N(1),
                                      RL_STATS,
                                      0};

/* a full table: idle keys make room (and set reclaim horizons), a reclaimed
 * key asks at an earlier time, a round trip, then a fruitless search */
static const uint8_t prog_full_deny[] = {RL_HEAD(RL_BUCKETED, 0, 2, 5, 20),
                                         RL_NONE,
                                         RL_MAX(2),
                                         W16(1999),
                                         RL_ACQ,
                                         1,
                                         RL_N(1),
                                         RL_ACQ,
                                         2,
                                         RL_N(2),
                                         CLOCK(RL_WINDOWS(2)),
                                         RL_PEEK_ACQ,
                                         3,
                                         RL_N(1),
                                         RL_ACQ,
                                         4,
                                         RL_N(1),
                                         CLOCK(RL_BACKB(9)),
                                         RL_ACQ,
                                         1,
                                         RL_N(1),
                                         RL_PEEK_ACQ,
                                         2,
                                         RL_N(1),
                                         RL_ROUND_TRIP,
                                         0,
                                         RL_ACQ,
                                         5,
                                         RL_N(1),
                                         CLOCK(RL_WINDOWS(3)),
                                         RL_PEEK_ACQ,
                                         6,
                                         RL_N(2),
                                         RL_PEEK_ACQ,
                                         7,
                                         RL_N(1),
                                         RL_MAX_KEYS,
                                         0,
                                         1,
                                         RL_ACQ,
                                         8,
                                         RL_N(1),
                                         RL_MAX_KEYS,
                                         0,
                                         0,
                                         RL_ACQ,
                                         9,
                                         RL_N(1),
                                         RL_STATS,
                                         0,
                                         RL_RESET,
                                         9,
                                         RL_ACQ,
                                         10,
                                         RL_N(1)};

static const uint8_t prog_full_allow[] = {RL_HEAD(RL_BUCKETED, 1, 4, 3, 100),
                                          RL_GLOBAL(3),
                                          RL_MAX(1),
                                          W16(100),
                                          RL_ACQ,
                                          1,
                                          RL_N(1),
                                          RL_PEEK_ACQ,
                                          2,
                                          RL_N(1),
                                          RL_PEEK_ACQ,
                                          3,
                                          RL_N(1),
                                          RL_ACQ,
                                          4,
                                          RL_N(1),
                                          RL_STATS,
                                          0,
                                          CLOCK(RL_WINDOWS(1)),
                                          RL_PEEK_ACQ,
                                          5,
                                          RL_N(2),
                                          RL_ACQ,
                                          1,
                                          RL_N(1),
                                          CLOCK(RL_END(1)),
                                          RL_ACQ,
                                          6,
                                          RL_N(3),
                                          RL_PEEK_ACQ,
                                          6,
                                          RL_N(1),
                                          CLOCK(RL_END(0)),
                                          RL_PEEK_ACQ,
                                          6,
                                          RL_N(1),
                                          RL_ACQ,
                                          7,
                                          RL_N(1),
                                          RL_ROUND_TRIP,
                                          0,
                                          RL_INVALID,
                                          1,
                                          0,
                                          RL_INVALID,
                                          2,
                                          1,
                                          RL_INVALID,
                                          3,
                                          2,
                                          RL_INVALID,
                                          4,
                                          3,
                                          RL_INVALID,
                                          5,
                                          4,
                                          RL_INVALID,
                                          6,
                                          5,
                                          RL_INVALID,
                                          7,
                                          6,
                                          RL_INVALID,
                                          8,
                                          7,
                                          RL_INVALID,
                                          9,
                                          8,
                                          RL_INVALID,
                                          10,
                                          9,
                                          RL_KEY_LIMIT,
                                          1,
                                          RL_KL_BAD,
                                          RL_STATS,
                                          0};

static const uint8_t exact_basic[] = {RL_HEAD(RL_EXACT, 0, 3, 10, 10),
                                      0,
                                      RL_NONE,
                                      RL_NOMAX,
                                      W16(999),
                                      RL_ACQ,
                                      1,
                                      RL_N(2),
                                      CLOCK(RL_FWD(30)),
                                      RL_ACQ,
                                      1,
                                      RL_N(1),
                                      RL_PEEK_ACQ,
                                      1,
                                      RL_N(1),
                                      CLOCK(RL_FWD(71)),
                                      RL_PEEK_ACQ,
                                      1,
                                      RL_N(2),
                                      CLOCK(RL_BACK(3)),
                                      RL_ACQ,
                                      1,
                                      RL_N(1),
                                      RL_REFUND,
                                      1,
                                      3,
                                      RL_ACQ,
                                      1,
                                      RL_N(3),
                                      RL_KEY_LIMIT,
                                      1,
                                      RL_KL(1),
                                      RL_PEEK,
                                      1,
                                      RL_N(1),
                                      RL_KEY_LIMIT,
                                      1,
                                      RL_KL7,
                                      RL_ACQ,
                                      1,
                                      RL_N(4),
                                      RL_KEY_LIMIT,
                                      1,
                                      RL_KL(0),
                                      RL_ACQ,
                                      1,
                                      RL_OVER,
                                      RL_ROUND_TRIP,
                                      0,
                                      RL_ACQ,
                                      9,
                                      RL_N(1),
                                      RL_ACQ,
                                      10,
                                      RL_N(1),
                                      RL_STATS,
                                      0};

static const uint8_t exact_global_refund[] = {RL_HEAD(RL_EXACT, 0, 8, 1, 100),
                                              0,
                                              RL_GLOBAL(2),
                                              RL_NOMAX,
                                              W16(9),
                                              RL_ACQ,
                                              1,
                                              RL_N(1),
                                              CLOCK(RL_FWD(40)),
                                              RL_ACQ,
                                              2,
                                              RL_N(1),
                                              CLOCK(RL_FWD(10)),
                                              RL_REFUND,
                                              1,
                                              1,
                                              CLOCK(RL_FWD(51)),
                                              RL_PEEK_ACQ,
                                              3,
                                              RL_N(1),
                                              RL_PEEK_ACQ,
                                              4,
                                              RL_N(1),
                                              CLOCK(RL_BACK(12)),
                                              RL_ACQ,
                                              2,
                                              RL_N(1),
                                              RL_REFUND,
                                              2,
                                              2,
                                              RL_ACQ,
                                              5,
                                              RL_N(2),
                                              RL_ACQ,
                                              6,
                                              RL_HUGE,
                                              CLOCK(RL_WINDOWS(1)),
                                              RL_PEEK_ACQ,
                                              6,
                                              RL_N(2),
                                              RL_ROUND_TRIP,
                                              0,
                                              RL_REFUND,
                                              6,
                                              1,
                                              RL_ACQ,
                                              6,
                                              RL_N(1),
                                              RL_STATS,
                                              0};

static const uint8_t exact_full_horizon[] = {RL_HEAD(RL_EXACT, 0, 2, 1, 50),
                                             0,
                                             RL_NONE,
                                             RL_MAX(1),
                                             W16(499),
                                             RL_ACQ,
                                             1,
                                             RL_N(2),
                                             CLOCK(RL_WINDOWS(1)),
                                             RL_PEEK_ACQ,
                                             2,
                                             RL_N(1),
                                             CLOCK(RL_BACK(12)),
                                             RL_PEEK_ACQ,
                                             1,
                                             RL_N(1),
                                             CLOCK(RL_BACK(12)),
                                             RL_ACQ,
                                             3,
                                             RL_N(1),
                                             RL_ROUND_TRIP,
                                             0,
                                             RL_PEEK_ACQ,
                                             1,
                                             RL_N(1),
                                             CLOCK(RL_FWD(30)),
                                             RL_PEEK_ACQ,
                                             1,
                                             RL_N(1),
                                             RL_MAX_KEYS,
                                             0,
                                             2,
                                             RL_ACQ,
                                             4,
                                             RL_N(1),
                                             CLOCK(RL_WINDOWS(2)),
                                             RL_ACQ,
                                             5,
                                             RL_N(1),
                                             RL_ACQ,
                                             6,
                                             RL_N(1),
                                             RL_STATS,
                                             0};

static const uint8_t exact_end_of_time[] = {RL_HEAD(RL_EXACT, 1, 4, 1, 400),
                                            7,
                                            RL_GLOBAL(5),
                                            RL_MAX(3),
                                            W16(65535),
                                            RL_ACQ,
                                            1,
                                            RL_N(4),
                                            RL_ACQ,
                                            2,
                                            RL_N(1),
                                            CLOCK(RL_END(2)),
                                            RL_ACQ,
                                            3,
                                            RL_N(2),
                                            RL_ACQ,
                                            4,
                                            RL_N(2),
                                            RL_PEEK_ACQ,
                                            5,
                                            RL_N(1),
                                            CLOCK(RL_END(0)),
                                            RL_PEEK_ACQ,
                                            3,
                                            RL_N(1),
                                            RL_KEY_LIMIT,
                                            3,
                                            RL_KL(1),
                                            RL_ACQ,
                                            3,
                                            RL_N(1),
                                            RL_REFUND,
                                            3,
                                            3,
                                            RL_ROUND_TRIP,
                                            0,
                                            CLOCK(RL_BACK(1)),
                                            RL_ACQ,
                                            1,
                                            RL_N(1),
                                            RL_STATS,
                                            0};

static void rl_programs(const char *dir) {
#define EMIT(name) write_file(dir, #name, name, sizeof name)
    EMIT(prog_basic);
    EMIT(prog_global);
    EMIT(prog_full_deny);
    EMIT(prog_full_allow);
    EMIT(exact_basic);
    EMIT(exact_global_refund);
    EMIT(exact_full_horizon);
    EMIT(exact_end_of_time);
#undef EMIT
}

/* ---- rotating cuckoo filter (fuzz_rotating_cuckoo) ---------------------- */

enum { RC_BLOB = 0, RC_SEALED = 1, RC_PROGRAM = 2 };
/* payload offsets (docs/wire-format.md, kind 5) */
#define RCF_SPB (HEADER_SIZE + 32)
#define RCF_TABLES (HEADER_SIZE + 128)
#define RCF_FIRST_SERIAL (HEADER_SIZE + 136)
#define RCF_FIRST_ITEMS (HEADER_SIZE + 152)

/* Writes <mode byte><blob> after checking how the blob (resealed first for
 * RC_SEALED, as the target does) deserializes. */
static void rc_emit(const char *dir, const char *name, int mode, const blob *b, tf_status want) {
    uint8_t *in = malloc(b->len + 1);
    if (in == NULL) die("out of memory");
    in[0] = (uint8_t)mode;
    memcpy(in + 1, b->data, b->len);
    if (mode == RC_SEALED) {
        put_le(in + 1 + 12, b->len - HEADER_SIZE - TRAILER_SIZE, 8);
        fix_checksum(in + 1, b->len);
    }
    expect_status(&tu_rotating_cuckoo, in + 1, b->len, want, name);
    write_file(dir, name, in, b->len + 1);
    free(in);
}
static void rc_emit_blob(const char *dir, const char *name, const blob *b, tf_status want) {
    rc_emit(dir, name, RC_BLOB, b, want);
}

/* A small filter with a ttl whose oldest table has expired by its clock. */
static blob rc_expired(void) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    tf_rotating_cuckoo *f = NULL;
    int was;
    uint64_t i;
    blob b;
    o.table_slots = 8;
    o.slots_per_bucket = 2;
    o.ttl = 100;
    o.max_kicks = 8;
    if (tf_rotating_cuckoo_new(&o, &f) != TF_OK) die("cuckoo new failed");
    for (i = 0; i < 40; ++i)
        if (tf_rotating_cuckoo_add_if_absent(f, &i, sizeof i, 1 + 10 * i, &was) != TF_OK) die("cuckoo add failed");
    b = blob_of(&tu_rotating_cuckoo, f);
    tf_rotating_cuckoo_free(f);
    return b;
}

static void rc_blobs(const char *dir) {
    tf_rotating_cuckoo *f = NULL;
    blob two, three, expired;
    if (golden_rotating_cuckoo(0, &f) != TF_OK) die("golden cuckoo failed");
    two = blob_of(&tu_rotating_cuckoo, f);
    tf_rotating_cuckoo_free(f);
    if (golden_rotating_cuckoo(TF_ROTATING_CUCKOO_THREE_WAY, &f) != TF_OK) die("golden cuckoo failed");
    three = blob_of(&tu_rotating_cuckoo, f);
    tf_rotating_cuckoo_free(f);
    expired = rc_expired();
    rc_emit(dir, "blob_golden", RC_BLOB, &two, TF_OK);
    rc_emit(dir, "blob_golden_three_way", RC_BLOB, &three, TF_OK);
    rc_emit(dir, "blob_expired", RC_BLOB, &expired, TF_OK);
    emit_resized(dir, "blob_truncated", rc_emit_blob, &two, two.len / 2, TF_ERR_TRUNCATED);
    emit_flipped(dir, "blob_bitflip", rc_emit_blob, &two, RCF_FIRST_ITEMS + 100, 0x10, TF_ERR_CHECKSUM);
    /* sealed: the target repairs the checksum, the field breaks an invariant */
    {
        blob b = resized(&expired, expired.len);
        rc_emit(dir, "sealed_expired", RC_SEALED, &b, TF_OK);
        put_le(b.data + RCF_SPB, 3, 4);
        rc_emit(dir, "sealed_bad_slots_per_bucket", RC_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
        b = resized(&two, two.len);
        put_le(b.data + RCF_TABLES, 0, 4);
        rc_emit(dir, "sealed_no_table", RC_SEALED, &b, TF_ERR_CORRUPT);
        put_le(b.data + RCF_TABLES, get_le(two.data + RCF_TABLES, 4), 4);
        put_le(b.data + RCF_FIRST_ITEMS, get_le(two.data + RCF_FIRST_ITEMS, 8) + 1, 8);
        rc_emit(dir, "sealed_wrong_items", RC_SEALED, &b, TF_ERR_CORRUPT);
        put_le(b.data + RCF_FIRST_ITEMS, get_le(two.data + RCF_FIRST_ITEMS, 8), 8);
        put_le(b.data + RCF_FIRST_SERIAL, get_le(two.data + RCF_FIRST_SERIAL, 8) + 1, 8);
        rc_emit(dir, "sealed_wrong_serial", RC_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
    }
    free(two.data);
    free(three.data);
    free(expired.data);
}

/* Programs: mode, 9 option bytes (slots per bucket, table size, ways, ttl,
 * kicks, tables, seed, occupancy, memory), then ops of an opcode and a
 * 16-bit key (op 5 takes a clock byte, op 8 a count and its keys). */
#define RC_K(k) (uint8_t)(k), (uint8_t)((k) >> 8)
#define RC_AIA(k) 0, RC_K(k)
#define RC_ADD(k) 2, RC_K(k)
#define RC_HAS(k) 3, RC_K(k)
#define RC_DEL(k) 4, RC_K(k)
#define RC_CLOCK(b) 5, RC_K(0), (b)
#define RC_COPY 6, RC_K(0)
#define RC_STATS 7, RC_K(0)
#define RC_SWEEP 9, RC_K(0)
#define RC_INVALID(k) 10, RC_K(k)
#define RC_CLEAR 11, RC_K(0)
#define RC_FILL8(b) \
    RC_AIA(b), RC_AIA(b + 1), RC_AIA(b + 2), RC_AIA(b + 3), RC_AIA(b + 4), RC_AIA(b + 5), RC_AIA(b + 6), RC_AIA(b + 7)
static const uint8_t rc_basic[] = {RC_PROGRAM,
                                   2,
                                   3,
                                   0,
                                   0,
                                   31,
                                   7,
                                   1,
                                   0,
                                   7,
                                   RC_FILL8(0),
                                   RC_FILL8(8),
                                   RC_HAS(3),
                                   RC_AIA(3),
                                   RC_DEL(3),
                                   RC_HAS(3),
                                   RC_DEL(3),
                                   RC_ADD(3),
                                   RC_FILL8(16),
                                   RC_FILL8(24),
                                   RC_SWEEP,
                                   RC_STATS,
                                   RC_COPY,
                                   RC_FILL8(32),
                                   RC_SWEEP,
                                   RC_INVALID(5),
                                   RC_HAS(500)};
static const uint8_t rc_ttl[] = {RC_PROGRAM,
                                 1,
                                 2,
                                 0,
                                 100,
                                 10,
                                 15,
                                 9,
                                 200,
                                 7,
                                 RC_FILL8(0),
                                 RC_CLOCK(60),
                                 RC_FILL8(8),
                                 RC_CLOCK(100),
                                 RC_FILL8(16),
                                 RC_CLOCK(120),
                                 RC_SWEEP,
                                 RC_ADD(2),
                                 RC_CLOCK(150),
                                 RC_FILL8(24),
                                 RC_CLOCK(180),
                                 RC_HAS(2),
                                 RC_SWEEP,
                                 RC_COPY,
                                 RC_CLOCK(127),
                                 RC_FILL8(40),
                                 RC_SWEEP,
                                 RC_STATS};
static const uint8_t rc_three_way[] = {RC_PROGRAM,
                                       3,
                                       4,
                                       1,
                                       0,
                                       63,
                                       3,
                                       5,
                                       255,
                                       2,
                                       RC_FILL8(0),
                                       RC_FILL8(8),
                                       RC_FILL8(16),
                                       RC_FILL8(24),
                                       RC_FILL8(32),
                                       RC_FILL8(40),
                                       RC_SWEEP,
                                       RC_COPY,
                                       RC_FILL8(48),
                                       RC_SWEEP,
                                       RC_STATS,
                                       RC_CLEAR,
                                       RC_FILL8(0)};
static const uint8_t rc_cap[] = {RC_PROGRAM,
                                 0,
                                 2,
                                 0,
                                 0,
                                 0,
                                 2,
                                 3,
                                 255,
                                 0,
                                 RC_FILL8(0),
                                 RC_FILL8(8),
                                 RC_FILL8(16),
                                 RC_FILL8(24),
                                 RC_SWEEP,
                                 RC_STATS,
                                 RC_FILL8(32),
                                 RC_SWEEP,
                                 8,
                                 RC_K(1),
                                 5,
                                 RC_K(100),
                                 RC_K(101),
                                 RC_K(2),
                                 RC_K(102),
                                 RC_SWEEP};
static const uint8_t rc_batch[] = {RC_PROGRAM, 2,        1,       1,        80,
                                   20,         8,        0,       0,        3,
                                   8,          RC_K(1),  12,      RC_K(2),  RC_K(3),
                                   RC_K(4),    RC_K(5),  RC_K(6), RC_K(7),  RC_K(1),
                                   RC_K(2),    RC_K(8),  RC_K(9), RC_K(10), RC_CLOCK(255),
                                   8,          RC_K(11), 3,       RC_K(12), RC_K(11),
                                   RC_SWEEP,   RC_COPY,  RC_STATS};

static void rc_programs(const char *dir) {
#define EMIT(name) write_file(dir, #name, name, sizeof name)
    EMIT(rc_basic);
    EMIT(rc_ttl);
    EMIT(rc_three_way);
    EMIT(rc_cap);
    EMIT(rc_batch);
#undef EMIT
}

/* ---- recency window (fuzz_recency_window) --------------------------------- */

enum { RW_BLOB = 0, RW_SEALED = 1, RW_PROGRAM = 2 };
/* payload offsets (docs/wire-format.md, kind 6) */
#define RWF_MODE (HEADER_SIZE + 40)
#define RWF_LEVELS (HEADER_SIZE + 52)
#define RWF_L0_ITEMS (HEADER_SIZE + 96 + 16)
#define RWF_L0_CURSOR (HEADER_SIZE + 96 + 24)

/* Writes <mode byte><blob> after checking how the blob (resealed first for
 * RW_SEALED, as the target does) deserializes. */
static void rw_emit(const char *dir, const char *name, int mode, const blob *b, tf_status want) {
    uint8_t *in = malloc(b->len + 1);
    if (in == NULL) die("out of memory");
    in[0] = (uint8_t)mode;
    memcpy(in + 1, b->data, b->len);
    if (mode == RW_SEALED) {
        put_le(in + 1 + 12, b->len - HEADER_SIZE - TRAILER_SIZE, 8);
        fix_checksum(in + 1, b->len);
    }
    expect_status(&tu_recency_window, in + 1, b->len, want, name);
    write_file(dir, name, in, b->len + 1);
    free(in);
}
static void rw_emit_blob(const char *dir, const char *name, const blob *b, tf_status want) {
    rw_emit(dir, name, RW_BLOB, b, want);
}

/* Level 0 of a recency window blob (its header at RWF_L0, its packed slots
 * after it): slots, entry bits, the class field's width, the words of its
 * planes (the high plane's too, for entries wider than 64 bits). */
#define RWF_SIG_BITS (HEADER_SIZE + 48)
#define RWF_L0 (HEADER_SIZE + 96)
typedef struct {
    size_t at; /* its header */
    uint64_t slots, buckets, sig_max, max_rem, words;
    unsigned bits, class_bits;
} rw_level;
static rw_level rw_level_at(const blob *b, size_t at) {
    rw_level l;
    l.at = at;
    const unsigned sig_bits = (unsigned)get_le(b->data + RWF_SIG_BITS, 4);
    unsigned rem_bits = 0;
    l.slots = get_le(b->data + at, 8);
    l.bits = (unsigned)get_le(b->data + at + 8, 4);
    l.buckets = l.slots / 4;
    l.sig_max = sig_bits == 64 ? UINT64_MAX : (UINT64_C(1) << sig_bits) - 1;
    l.max_rem = l.sig_max / l.buckets;
    for (uint64_t r = l.max_rem; r != 0; r >>= 1) ++rem_bits;
    l.class_bits = l.bits - 1 - rem_bits;
    l.words = (l.slots * (l.bits > 64 ? 64 : l.bits) + 63) / 64;
    if (l.bits > 64) l.words += (l.slots * (l.bits - 64) + 63) / 64;
    return l;
}
static rw_level rw_level0(const blob *b) { return rw_level_at(b, RWF_L0); }
/* The level after l. */
static rw_level rw_level_next(const blob *b, const rw_level *l) {
    return rw_level_at(b, l->at + 32 + 8 * l->words + 16 * get_le(b->data + l->at + 12, 4));
}
/* The n bits (n <= 64) from bit p of the packed words at byte `base` (bit p
 * of the little-endian words is bit p % 8 of byte p / 8). */
static uint64_t rw_bits(const blob *b, size_t base, uint64_t p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i)
        if ((b->data[base + (p + i) / 8] >> ((p + i) % 8)) & 1) v |= UINT64_C(1) << i;
    return v;
}
static void rw_set_bits(blob *b, size_t base, uint64_t p, unsigned n, uint64_t v) {
    for (unsigned i = 0; i < n; ++i) {
        uint8_t *byte = &b->data[base + (p + i) / 8];
        *byte = (uint8_t)((*byte & ~(1u << ((p + i) % 8))) | (((v >> i) & 1) << ((p + i) % 8)));
    }
}
/* Slot s of a level, its low plane: the whole slot for entries of at most
 * 64 bits, its low 64 bits for wider ones. */
static uint64_t rw_slot(const blob *b, const rw_level *l, uint64_t s) {
    const unsigned w = l->bits > 64 ? 64 : l->bits;
    return rw_bits(b, l->at + 32, s * w, w);
}
static void rw_set_slot(blob *b, const rw_level *l, uint64_t s, uint64_t v) {
    const unsigned w = l->bits > 64 ? 64 : l->bits;
    rw_set_bits(b, l->at + 32, s * w, w, v);
}
/* Sets slot s's bits above 64 (entries wider than 64 bits: the high plane,
 * after the low plane's words). */
static size_t rw_hi_plane(const rw_level *l) { return l->at + 32 + 8 * ((l->slots * 64 + 63) / 64); }
static void rw_set_slot_hi(blob *b, const rw_level *l, uint64_t s, uint64_t v) {
    rw_set_bits(b, rw_hi_plane(l), s * (l->bits - 64), l->bits - 64, v);
}
/* The blob with `n` stash entries (sig, cls) appended to level 0's and its
 * count set. */
static blob rw_with_stash(const blob *b, unsigned n, const uint64_t *sig, const uint64_t *cls) {
    const rw_level l = rw_level0(b);
    const size_t at = RWF_L0 + 32 + 8 * l.words + 16 * get_le(b->data + RWF_L0 + 12, 4);
    blob c = resized(b, b->len + 16 * n);
    memcpy(c.data + at + 16 * n, b->data + at, b->len - at);
    for (unsigned i = 0; i < n; ++i) {
        put_le(c.data + at + 16 * i, sig[i], 8);
        put_le(c.data + at + 16 * i + 8, cls[i], 8);
    }
    put_le(c.data + RWF_L0 + 12, get_le(b->data + RWF_L0 + 12, 4) + n, 4);
    return c;
}

/* Hostile blobs of level 0's slots and stash, each breaking one invariant
 * that RecencyWindow::read checks after the header (sealed: the target
 * repairs the length and checksum): bits past the last slot, bits in an
 * empty slot, an entry held
 * twice in a bucket, a remainder past the largest, and stash entries (one
 * that loads, a class ID outside the field, a signature wider than the
 * width, one held twice). `narrow`: a blob whose level 0 has entries of at
 * most 64 bits and signatures below 64 bits. */
static void rw_hostile_slots(const char *dir, const blob *narrow, const blob *exact) {
    const rw_level l = rw_level0(narrow);
    if (l.bits > 64 || l.sig_max == UINT64_MAX) die("rw_hostile_slots: level 0 of the approximate blob is not narrow");
    const uint64_t cm = (UINT64_C(1) << l.class_bits) - 1;
    blob b;
    if ((l.slots * l.bits) % 64 == 0) die("rw_hostile_slots: level 0 has no bits past its last slot");
    b = resized(narrow, narrow->len);
    b.data[RWF_L0 + 32 + (l.slots * l.bits) / 8] |= (uint8_t)(1u << ((l.slots * l.bits) % 8));
    rw_emit(dir, "sealed_tail_bits", RW_SEALED, &b, TF_ERR_CORRUPT);
    free(b.data);
    /* an empty slot (class field 0) with a remainder bit set */
    for (uint64_t s = 0; s < l.slots; ++s) {
        if ((rw_slot(narrow, &l, s) & cm) != 0) continue;
        b = resized(narrow, narrow->len);
        rw_set_slot(&b, &l, s, (cm + 1) << 1);
        rw_emit(dir, "sealed_empty_slot_bits", RW_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
        break;
    }
    /* an entry copied into an empty slot of its bucket (one more entry said) */
    int twice = 0, wide = 0;
    for (uint64_t bucket = 0; bucket < l.buckets && !twice; ++bucket) {
        uint64_t full = UINT64_MAX, empty = UINT64_MAX;
        for (uint64_t j = 0; j < 4; ++j) {
            const uint64_t v = rw_slot(narrow, &l, bucket * 4 + j);
            if ((v & cm) != 0 && full == UINT64_MAX) full = bucket * 4 + j;
            if ((v & cm) == 0 && empty == UINT64_MAX) empty = bucket * 4 + j;
        }
        if (full == UINT64_MAX || empty == UINT64_MAX) continue;
        b = resized(narrow, narrow->len);
        rw_set_slot(&b, &l, empty, rw_slot(narrow, &l, full));
        put_le(b.data + RWF_L0 + 16, get_le(narrow->data + RWF_L0 + 16, 8) + 1, 8);
        rw_emit(dir, "sealed_slot_twice", RW_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
        twice = 1;
    }
    /* an entry in its primary bucket (way 0) whose remainder field is all
     * ones, past the largest remainder there (a level whose bucket count
     * is not a power of two) */
    const unsigned levels = (unsigned)get_le(narrow->data + RWF_LEVELS, 4);
    rw_level v = l;
    for (unsigned i = 0; i < levels && !wide; ++i, v = i < levels ? rw_level_next(narrow, &v) : v) {
        const uint64_t vcm = (UINT64_C(1) << v.class_bits) - 1;
        const unsigned rem_bits = v.bits - 1 - v.class_bits;
        const uint64_t all = (UINT64_C(1) << rem_bits) - 1;
        if (v.bits > 64) continue;
        for (uint64_t s = 0; s < v.slots && !wide; ++s) {
            const uint64_t x = rw_slot(narrow, &v, s), bucket = s / 4;
            if ((x & vcm) == 0 || ((x >> v.class_bits) & 1) != 0) continue;
            if (!(all > v.max_rem || (all == v.max_rem && bucket > v.sig_max % v.buckets))) continue;
            b = resized(narrow, narrow->len);
            rw_set_slot(&b, &v, s, ((all << 1) << v.class_bits) | (x & vcm));
            rw_emit(dir, "sealed_slot_wide", RW_SEALED, &b, TF_ERR_CORRUPT);
            free(b.data);
            wide = 1;
        }
    }
    if (!twice || !wide) die("rw_hostile_slots: no slot to copy or widen");
    /* the stash */
    const uint64_t sig[2] = {UINT64_C(0x0123456789abcdef), UINT64_C(0x0123456789abcdef)}, cls[2] = {0, 0};
    b = rw_with_stash(exact, 1, sig, cls);
    rw_emit(dir, "sealed_stash", RW_SEALED, &b, TF_OK);
    free(b.data);
    b = rw_with_stash(exact, 2, sig, cls);
    rw_emit(dir, "sealed_stash_twice", RW_SEALED, &b, TF_ERR_CORRUPT);
    free(b.data);
    const uint64_t far[1] = {UINT64_C(1) << 40};
    b = rw_with_stash(exact, 1, sig, far);
    rw_emit(dir, "sealed_stash_bad_class", RW_SEALED, &b, TF_ERR_CORRUPT);
    free(b.data);
    const uint64_t wide_sig[1] = {UINT64_MAX};
    b = rw_with_stash(narrow, 1, wide_sig, cls);
    rw_emit(dir, "sealed_stash_wide", RW_SEALED, &b, TF_ERR_CORRUPT);
    free(b.data);
}

/* The slot checks of a level of entries wider than 64 bits (the reader's
 * wide pass, SlidingTable::audit<true>): an exact window of W = 9 (level 0:
 * 24 slots, 6 buckets, 68-bit entries, signatures of 64 bits) holding 6
 * keys, with
 *  - an empty slot (class field 0) with a bit of its high plane set, and
 *  - an entry in its primary bucket (way 0) whose remainder field is all
 *    ones, past the largest remainder (6 buckets: not a power of two). */
static void rw_hostile_wide(const char *dir) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.window = 9;
    o.inv_eps = 4;
    o.mode = TF_RECENCY_WINDOW_EXACT;
    o.seed = 42;
    tf_recency_window *w = NULL;
    if (tf_recency_window_new(&o, &w) != TF_OK) die("rw_hostile_wide: tf_recency_window_new failed");
    for (uint32_t k = 0; k < 6; ++k)
        if (tf_recency_window_insert(w, &k, sizeof k) != TF_OK) die("rw_hostile_wide: insert failed");
    blob g = blob_of(&tu_recency_window, w);
    tf_recency_window_free(w);
    const rw_level l = rw_level0(&g);
    if (l.bits <= 64 || (l.buckets & (l.buckets - 1)) == 0 || l.sig_max != UINT64_MAX)
        die("rw_hostile_wide: level 0 is not wide with a bucket count that is not a power of two");
    rw_emit(dir, "sealed_wide", RW_SEALED, &g, TF_OK);
    const uint64_t cm = (UINT64_C(1) << l.class_bits) - 1;
    int empty = 0, past = 0;
    blob b;
    for (uint64_t s = 0; s < l.slots && !empty; ++s) {
        if ((rw_slot(&g, &l, s) & cm) != 0) continue;
        b = resized(&g, g.len);
        rw_set_slot_hi(&b, &l, s, 1);
        rw_emit(dir, "sealed_wide_empty_slot_bits", RW_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
        empty = 1;
    }
    /* the remainder field: bits class_bits + 1 .. 63 of the low plane and
     * every bit of the high plane */
    const unsigned low_rem = 64 - l.class_bits - 1;
    for (uint64_t s = 0; s < l.slots && !past; ++s) {
        const uint64_t x = rw_slot(&g, &l, s);
        if ((x & cm) == 0 || ((x >> l.class_bits) & 1) != 0) continue;
        b = resized(&g, g.len);
        rw_set_slot(&b, &l, s, (x & cm) | (((UINT64_C(1) << low_rem) - 1) << (l.class_bits + 1)));
        rw_set_slot_hi(&b, &l, s, (UINT64_C(1) << (l.bits - 64)) - 1);
        rw_emit(dir, "sealed_wide_slot_wide", RW_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
        past = 1;
    }
    if (!empty || !past) die("rw_hostile_wide: no empty slot or no entry in its primary bucket");
    free(g.data);
}

static void rw_blobs(const char *dir) {
    static const uint32_t flags[] = {TF_RECENCY_WINDOW_HISTORICAL, TF_RECENCY_WINDOW_HISTORICAL | GOLDEN_RW_APPROX,
                                     TF_RECENCY_WINDOW_EXACT, TF_RECENCY_WINDOW_OPTIMAL_SM};
    static const char *const names[] = {"blob_golden", "blob_golden_approx", "blob_golden_exact",
                                        "blob_golden_optimal_sm"};
    blob golden[4];
    for (int i = 0; i < 4; ++i) {
        tf_recency_window *w = NULL;
        if (golden_recency_window(flags[i], &w) != TF_OK) die("golden recency window failed");
        golden[i] = blob_of(&tu_recency_window, w);
        tf_recency_window_free(w);
        rw_emit(dir, names[i], RW_BLOB, &golden[i], TF_OK);
    }
    emit_resized(dir, "blob_truncated", rw_emit_blob, &golden[0], golden[0].len / 2, TF_ERR_TRUNCATED);
    emit_flipped(dir, "blob_bitflip", rw_emit_blob, &golden[0], RWF_L0_CURSOR + 40, 0x10, TF_ERR_CHECKSUM);
    /* sealed: the target repairs the checksum, the field breaks an invariant */
    {
        blob b = resized(&golden[2], golden[2].len);
        rw_emit(dir, "sealed_exact", RW_SEALED, &b, TF_OK);
        put_le(b.data + RWF_MODE, 3, 4);
        rw_emit(dir, "sealed_bad_mode", RW_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
        b = resized(&golden[0], golden[0].len);
        put_le(b.data + RWF_LEVELS, 9, 4);
        rw_emit(dir, "sealed_bad_levels", RW_SEALED, &b, TF_ERR_CORRUPT);
        put_le(b.data + RWF_LEVELS, get_le(golden[0].data + RWF_LEVELS, 4), 4);
        put_le(b.data + RWF_L0_ITEMS, get_le(golden[0].data + RWF_L0_ITEMS, 8) + 1, 8);
        rw_emit(dir, "sealed_wrong_items", RW_SEALED, &b, TF_ERR_CORRUPT);
        put_le(b.data + RWF_L0_ITEMS, get_le(golden[0].data + RWF_L0_ITEMS, 8), 8);
        put_le(b.data + RWF_L0_CURSOR, 1000, 8);
        rw_emit(dir, "sealed_bad_cursor", RW_SEALED, &b, TF_ERR_CORRUPT);
        free(b.data);
    }
    rw_hostile_slots(dir, &golden[1], &golden[2]);
    rw_hostile_wide(dir);
    for (int i = 0; i < 4; ++i) free(golden[i].data);
}

/* Programs: mode, 7 option bytes (mode, window u16, inv_eps, block, delta,
 * seed), then ops of an opcode and a 16-bit key (op 6 takes a count and
 * its keys). */
#define RW_K(k) (uint8_t)(k), (uint8_t)((k) >> 8)
#define RW_IR(k) 0, RW_K(k)
#define RW_INS(k) 3, RW_K(k)
#define RW_Q(k) 4, RW_K(k)
#define RW_COPY 5, RW_K(0)
#define RW_STATS 7, RW_K(0)
#define RW_INVALID(k) 8, RW_K(k)
#define RW_CLEAR 9, RW_K(0)
#define RW_FILL8(b) \
    RW_IR(b), RW_IR(b + 1), RW_IR(b + 2), RW_IR(b + 3), RW_IR(b + 4), RW_IR(b + 5), RW_IR(b + 6), RW_IR(b + 7)
#define RW_BODY                                                                                                        \
    RW_FILL8(0), RW_FILL8(8), RW_FILL8(0), RW_Q(3), RW_FILL8(16), RW_FILL8(24), RW_FILL8(0), RW_COPY, RW_FILL8(32),    \
        RW_FILL8(40), RW_FILL8(8), RW_STATS, RW_Q(9), RW_Q(500), RW_INVALID(5), 6, RW_K(1), 5, RW_K(2), RW_K(3),       \
        RW_K(2), RW_K(1), 6, RW_K(2), 3, RW_K(7), RW_K(7), RW_FILL8(16), RW_FILL8(0), RW_STATS, RW_CLEAR, RW_FILL8(0), \
        RW_Q(1)
static const uint8_t rw_historical[] = {RW_PROGRAM, 0, RW_K(40), 3, 0, 0, 9, RW_BODY};
static const uint8_t rw_approx[] = {RW_PROGRAM, 0, RW_K(60), 2, 0, 1, 9, RW_BODY};
static const uint8_t rw_exact[] = {RW_PROGRAM, 1, RW_K(30), 1, 0, 0, 9, RW_BODY};
static const uint8_t rw_optimal_sm[] = {RW_PROGRAM, 2, RW_K(50), 4, 7, 0, 9, RW_BODY};

static void rw_programs(const char *dir) {
#define EMIT(name) write_file(dir, #name, name, sizeof name)
    EMIT(rw_historical);
    EMIT(rw_approx);
    EMIT(rw_exact);
    EMIT(rw_optimal_sm);
#undef EMIT
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 6) {
        fprintf(stderr,
                "usage: %s DESERIALIZE_DIR OPS_DIR [RATE_LIMITER_DIR [ROTATING_CUCKOO_DIR [RECENCY_WINDOW_DIR]]]\n",
                argv[0]);
        return 2;
    }
    deserialize_corpus(argv[1]);
    ops_corpus(argv[2]);
    if (argc >= 4) {
        rl_blobs(argv[3]);
        rl_programs(argv[3]);
    }
    if (argc >= 5) {
        rc_blobs(argv[4]);
        rc_programs(argv[4]);
    }
    if (argc == 6) {
        rw_blobs(argv[5]);
        rw_programs(argv[5]);
    }
    if (failures) {
        fprintf(stderr, "make_corpus: %d damaged blob(s) are not refused as intended\n", failures);
        return 1;
    }
    return 0;
}
