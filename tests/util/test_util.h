/* Helpers shared by the cmocka suites: deterministic random numbers, keys,
 * blob snapshots and statistical bounds. */
#ifndef TF_TESTS_TEST_UTIL_H
#define TF_TESTS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "temporalfilters.h"

/* TU_REDUCED is 1 where the long property tests run smaller counts: under
 * a sanitizer (AddressSanitizer, UndefinedBehaviorSanitizer or
 * ThreadSanitizer: an unoptimised or instrumented build, many times slower)
 * and in a build that defines TF_TEST_REDUCED (scripts/cross.sh does, for
 * suites run under qemu-user's emulation, 10 to 50 times slower). The same
 * code paths run, with bounds that follow the counts; the full counts are
 * the normal build's. One definition for every suite. */
#if defined(TF_TEST_REDUCED) && TF_TEST_REDUCED
#define TU_REDUCED 1
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TU_REDUCED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer) || __has_feature(thread_sanitizer)
#define TU_REDUCED 1
#endif
#endif
#ifndef TU_REDUCED
#define TU_REDUCED 0
#endif

/* splitmix64: a small, good, deterministic generator. */
typedef struct {
    uint64_t s;
} tu_rng;
uint64_t tu_next(tu_rng *r);
/* uniform in [0, n) */
uint64_t tu_below(tu_rng *r, uint64_t n);
double tu_unit(tu_rng *r);

/* A key made of the 8 little-endian bytes of `id` behind a tag byte, so
 * that different suites use different key spaces. */
typedef struct {
    unsigned char b[9];
} tu_key;
tu_key tu_make_key(unsigned char tag, uint64_t id);

/* Reads a whole file; NULL if it cannot. */
unsigned char *tu_read_file(const char *path, size_t *len);
/* Path of a file in tests/data (from the TF_TEST_DATA_DIR define). */
const char *tu_data_path(const char *name);
/* The process's resident memory in bytes (/proc/self/statm); fails the
 * test when it cannot be read. */
uint64_t tu_resident_bytes(void);

/* Recomputes the checksum of a blob after a test edited its header or
 * payload (MurmurHash3 x64_128 of [0, len-8) through libmurmurhash). */
void tu_fix_checksum(unsigned char *blob, size_t len);

/* The status deserialize must return for a valid blob with one bit flipped
 * (`blob` as flipped, `bit` its index): magic, version and kind bytes give
 * their own errors; the payload length, TF_ERR_TRUNCATED when the flip set
 * a bit (longer than the blob) and TF_ERR_CORRUPT when it cleared one
 * (bytes left over); anything else, TF_ERR_CHECKSUM. */
tf_status tu_flipped_status(const unsigned char *blob, size_t bit);

/* Serializes `obj` (a structure's serialize behind one signature). */
typedef tf_status (*tu_serialize_fn)(const void *obj, void *buf, size_t capacity, size_t *written);

/* One structure's calls behind one set of signatures, for the checks
 * below that every structure's suite runs (test_util.c defines the four). */
typedef struct {
    const char *name; /* "age_bloom", as in tf_age_bloom */
    tu_serialize_fn serialize;
    tf_status (*serialized_size)(const void *obj, size_t *size);
    tf_status (*deserialize)(const void *buf, size_t len, const tf_deserialize_options *options, void **out);
    /* the memory it holds (tf_<noun>_memory, in bytes as uint64_t) */
    tf_status (*memory)(const void *obj, uint64_t *bytes);
    /* tf_<noun>_memory itself */
    tf_status (*memory_call)(const void *obj, size_t *bytes);
    /* tf_<noun>_get_info as a tu_get_fn */
    tf_status (*get_info)(const void *obj, void *info);
    void (*free)(void *obj);
} tu_structure;
extern const tu_structure tu_recency_sketch, tu_age_bloom, tu_time_bloom, tu_rate_limiter, tu_rotating_cuckoo,
    tu_recency_window;

/* Deserializes a blob (and frees what it made); a structure's suite passes
 * its own. */
typedef tf_status (*tu_try_blob_fn)(const unsigned char *blob, size_t len);

/* A call that fails with `status` and says why. */
#define TU_REFUSED(call, status)                          \
    do {                                                  \
        tf_clear_last_error();                            \
        assert_int_equal((call), (status));               \
        assert_true(strlen(tf_last_error_message()) > 0); \
    } while (0)

/* TU_REFUSED for a constructor: it made nothing (`out` is still NULL). */
#define TU_REFUSED_NEW(call, status, out) \
    do {                                  \
        TU_REFUSED(call, status);         \
        assert_null(out);                 \
    } while (0)

/* TU_REFUSED, and `obj` still serializes (`serialize`) to `before`
 * (`len` bytes): the failed call left it as it was. */
#define TU_REFUSED_UNCHANGED(call, status, obj, serialize, before, len) \
    do {                                                                \
        TU_REFUSED(call, status);                                       \
        tu_assert_blob((obj), (serialize), (before), (len));            \
    } while (0)

/* The calls every structure shares, refused on the live `obj`, each with
 * its status and a message and leaving `obj` as it was: serialized_size
 * and serialize with a NULL argument, serialize into a buffer a byte too
 * short (TF_ERR_BUFFER_TOO_SMALL, the size it needs reported), memory
 * with a NULL argument (when it has that call), get_info with a NULL
 * argument and with every size below its struct's first
 * version (`info_size` bytes; nothing written). */
void tu_check_refused_calls(const tu_structure *st, const void *obj, size_t info_size);

/* Flips every bit of a valid blob in turn: each flip gets the status
 * tu_flipped_status names, and the blob reads again afterwards. */
void tu_check_bit_flips(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* Every proper prefix of a valid blob (each copied into a buffer of its
 * exact size, so that ASan sees any overread) is TF_ERR_TRUNCATED; a byte
 * too many is TF_ERR_CORRUPT; so is a payload length that cuts the payload
 * short by a multiple of 8 bytes behind a valid checksum (the payload
 * reader must stop, not read on). */
void tu_check_truncations(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* Random blobs (20,000 of up to max_len - 1 bytes, from `seed`): every
 * other one behind the header of `kind` (magic, version 1, kind), and
 * every fourth (with a planter, every other one) with a consistent
 * envelope (flags within `known_flags`, payload length, checksum) so that
 * its payload is parsed, after `plant` (may be NULL; `ctx` is its own) had
 * its say on the payload (plausible header fields, drawn from the same
 * generator). Each is refused with a status the library defines. */
typedef void (*tu_plant_fn)(unsigned char *blob, size_t len, tu_rng *r, const void *ctx);
void tu_check_random_blobs(uint16_t kind, uint32_t known_flags, uint64_t seed, size_t max_len, tu_plant_fn plant,
                           const void *ctx, tu_try_blob_fn try_blob);

/* Recomputing the checksum of a valid blob (MurmurHash3 x64_128 of
 * libmurmurhash, tu_fix_checksum) gives back its own bytes, and it reads. */
void tu_check_resealed(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* Flips every payload bit of a valid blob in turn with the checksum fixed,
 * so that the flip reaches the structural checks: each gives TF_OK (a
 * usable structure) or TF_ERR_CORRUPT, and both happen. The blob is left
 * as it was. */
void tu_check_payload_flips(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* The envelope of a blob the library wrote: magic "TFLT", format version
 * 1, `kind`, `flags`, and a payload length that fills the blob. */
void tu_check_envelope(const unsigned char *blob, size_t len, uint16_t kind, uint32_t flags);

/* A field of a blob to overwrite (checksum fixed after) and the status
 * deserialize must then return. */
typedef struct {
    size_t off;
    uint64_t value;
    int bytes;
    tf_status want;
} tu_field_case;
/* `good` with one field overwritten and the checksum fixed, read by
 * try_blob: its status. */
tf_status tu_try_patched(const unsigned char *good, size_t n, size_t off, uint64_t value, int bytes,
                         tu_try_blob_fn try_blob);
/* Every case gets its status; then the untouched blob, its checksum
 * recomputed (tu_check_resealed), is the same bytes and reads. */
void tu_check_field_cases(const unsigned char *good, size_t n, const tu_field_case *cases, size_t count,
                          tu_try_blob_fn try_blob);

/* The blob of another structure, `obj` (`other` says which), is
 * TF_ERR_WRONG_KIND; with its kind edited to `kind` (checksum fixed) it is
 * `edited` (its payload is checked on its own; TF_OK: not tried). */
void tu_check_foreign_blob(const tu_structure *other, const void *obj, uint16_t kind, tf_status edited,
                           tu_try_blob_fn try_blob);

/* The blob of `obj` (malloc'ed; its length in *len). */
unsigned char *tu_snapshot(const void *obj, tu_serialize_fn serialize, size_t *len);

/* Whether two structures serialize to the same bytes. */
int tu_same_blob(const void *a, const void *b, tu_serialize_fn serialize);

/* Asserts that `obj` serializes to exactly `before` (len bytes): a call
 * that failed left it as it was. */
void tu_assert_blob(const void *obj, tu_serialize_fn serialize, const unsigned char *before, size_t len);

/* A copy of `obj` through its blob. */
void *tu_copy(const tu_structure *st, const void *obj);

/* The checks above that run over a valid blob (tu_check_truncations,
 * tu_check_bit_flips, tu_check_payload_flips, tu_check_resealed)... */
typedef void (*tu_blob_check_fn)(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* ... run on the blob of `obj`. */
void tu_check_blob_of(const void *obj, tu_serialize_fn serialize, tu_blob_check_fn check, tu_try_blob_fn try_blob);

/* The serialize contract of `obj`, which needs what its serialized_size
 * says (returned): one byte too few is TF_ERR_BUFFER_TOO_SMALL with that
 * size reported and nothing written, NULL/0 asks for the size the same
 * way, that many bytes work. */
size_t tu_check_serialize_contract(const void *obj, const tu_structure *st);

/* Deserialize refuses a NULL blob (with a length or without) and a NULL
 * `out` with TF_ERR_NULL, and makes nothing. */
void tu_check_deserialize_nulls(const tu_structure *st);

/* Deserializes a blob with `options` (NULL: the defaults), stores the
 * memory of the structure it made in *memory (what the structure's memory
 * figure reports), and frees it. On failure it must have made nothing
 * (its `out` stayed NULL). */
tf_status tu_load(const tu_structure *st, const unsigned char *blob, size_t len, const tf_deserialize_options *options,
                  uint64_t *memory);

/* The max_memory contract of deserialize for a valid blob: a limit of the
 * structure's own memory loads it (and it then holds no more), one byte
 * less or a tiny limit is TF_ERR_TOO_LARGE with a message, 0 means no
 * limit, and an options struct whose size is below its first version (not
 * initialized) is TF_ERR_INVALID_ARGUMENT. A longer struct (a caller built
 * against a later header) is read as far as this library knows it. Returns
 * the structure's memory. */
uint64_t tu_check_max_memory(const unsigned char *blob, size_t len, const tu_structure *st);

/* tu_load with the default options, as a tu_try_blob_fn does it: a
 * failure must explain itself. */
tf_status tu_try_load(const tu_structure *st, const unsigned char *blob, size_t len);

/* Fills a versioned out-struct (a structure's get_info / get_stats on
 * `obj`, wrapped by its suite): `out` points at a struct whose `size` field
 * the caller set. */
typedef tf_status (*tu_get_fn)(const void *obj, void *out);

/* The versioned-struct contract of a getter whose struct has `size` bytes:
 * a size of 0 or one byte below the struct's (its first version) is
 * TF_ERR_INVALID_ARGUMENT with nothing written; the struct's own size
 * fills it; a caller built against a later, longer version gets the same
 * fields and keeps the rest of its struct as it was. The fields are copied
 * to `out` (may be NULL) for the caller to check. */
void tu_check_versioned_out(const void *obj, size_t size, tu_get_fn get, void *out);

/* The structure read from the golden blob tests/data/<name>.tfb (free
 * it), after checking that `built` (the structure rebuilt by the
 * operations of tests/util/golden.h; not NULL) serializes to exactly its
 * bytes. */
void *tu_golden_read(const char *name, const void *built, const tu_structure *st);

/* One answer of a golden .expected file: the key's bytes and the numbers
 * that follow it on its line. */
typedef void (*tu_answer_fn)(const unsigned char *key, size_t key_len, const unsigned long long *numbers, void *ctx);

/* Calls `answer` for every line of tests/data/<name>.expected ("<key as
 * hex> <number> ..."; lines that start with '#' are comments), asserting
 * that each has exactly `count` numbers (at most 4). Returns the number
 * of answers. */
unsigned tu_for_each_answer(const char *name, int count, tu_answer_fn answer, void *ctx);

/* Writes a little-endian field into a blob, and reads one. */
void tu_put_le(unsigned char *p, uint64_t v, int bytes);
uint64_t tu_get_le(const unsigned char *p, int bytes);

/* The main of a cmocka suite: TU_MAIN(test_a, test_b, ...) runs the tests
 * (at most 16) in that order as one group (TAP output, one plan). */
#define TU_MAIN(...)                                                                     \
    int main(void) {                                                                     \
        const struct CMUnitTest tu_tests_[] = {TU_EACH_(cmocka_unit_test, __VA_ARGS__)}; \
        return cmocka_run_group_tests(tu_tests_, NULL, NULL);                            \
    }
#define TU_EACH_(f, ...)                                                                                             \
    TU_PICK_(__VA_ARGS__, TU_16_, TU_15_, TU_14_, TU_13_, TU_12_, TU_11_, TU_10_, TU_9_, TU_8_, TU_7_, TU_6_, TU_5_, \
             TU_4_, TU_3_, TU_2_, TU_1_, )                                                                           \
    (f, __VA_ARGS__)
#define TU_PICK_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, name, ...) name
#define TU_1_(f, x) f(x)
#define TU_2_(f, x, ...) f(x), TU_1_(f, __VA_ARGS__)
#define TU_3_(f, x, ...) f(x), TU_2_(f, __VA_ARGS__)
#define TU_4_(f, x, ...) f(x), TU_3_(f, __VA_ARGS__)
#define TU_5_(f, x, ...) f(x), TU_4_(f, __VA_ARGS__)
#define TU_6_(f, x, ...) f(x), TU_5_(f, __VA_ARGS__)
#define TU_7_(f, x, ...) f(x), TU_6_(f, __VA_ARGS__)
#define TU_8_(f, x, ...) f(x), TU_7_(f, __VA_ARGS__)
#define TU_9_(f, x, ...) f(x), TU_8_(f, __VA_ARGS__)
#define TU_10_(f, x, ...) f(x), TU_9_(f, __VA_ARGS__)
#define TU_11_(f, x, ...) f(x), TU_10_(f, __VA_ARGS__)
#define TU_12_(f, x, ...) f(x), TU_11_(f, __VA_ARGS__)
#define TU_13_(f, x, ...) f(x), TU_12_(f, __VA_ARGS__)
#define TU_14_(f, x, ...) f(x), TU_13_(f, __VA_ARGS__)
#define TU_15_(f, x, ...) f(x), TU_14_(f, __VA_ARGS__)
#define TU_16_(f, x, ...) f(x), TU_15_(f, __VA_ARGS__)

#endif
