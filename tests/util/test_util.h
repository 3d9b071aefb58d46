/* Helpers shared by the cmocka suites: deterministic random numbers, keys,
 * blob snapshots and statistical bounds. */
#ifndef TF_TESTS_TEST_UTIL_H
#define TF_TESTS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters/common.h"

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

/* Recomputes the checksum of a blob after a test edited its header or
 * payload (MurmurHash3 x64_128 of [0, len-8) through libmurmurhash). */
void tu_fix_checksum(unsigned char *blob, size_t len);

/* The status deserialize must return for a valid blob with one bit flipped
 * (`blob` as flipped, `bit` its index): magic, version and kind bytes give
 * their own errors; the payload length, TF_ERR_TRUNCATED when the flip set
 * a bit (longer than the blob) and TF_ERR_CORRUPT when it cleared one
 * (bytes left over); anything else, TF_ERR_CHECKSUM. */
tf_status tu_flipped_status(const unsigned char *blob, size_t bit);

/* Deserializes a blob (and frees what it made); a structure's suite passes
 * its own. */
typedef tf_status (*tu_try_blob_fn)(const unsigned char *blob, size_t len);

/* Flips every bit of a valid blob in turn: each flip gets the status
 * tu_flipped_status names, and the blob reads again afterwards. */
void tu_check_bit_flips(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* Every proper prefix of a valid blob (each copied into a buffer of its
 * exact size, so that ASan sees any overread) is TF_ERR_TRUNCATED. */
void tu_check_truncations(const unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* Flips every payload bit of a valid blob in turn with the checksum fixed,
 * so that the flip reaches the structural checks: each gives TF_OK (a
 * usable structure) or TF_ERR_CORRUPT, and both happen. The blob is left
 * as it was. */
void tu_check_payload_flips(unsigned char *blob, size_t len, tu_try_blob_fn try_blob);

/* Serializes `obj` (a structure's serialize, wrapped by its suite). */
typedef tf_status (*tu_serialize_fn)(const void *obj, void *buf, size_t capacity, size_t *written);

/* The serialize contract for an object that needs `need` bytes: one byte
 * too few is TF_ERR_BUFFER_TOO_SMALL with `need` reported and nothing
 * written, NULL/0 asks for the size the same way, `need` bytes work. */
void tu_check_serialize_contract(const void *obj, size_t need, tu_serialize_fn serialize);

/* Deserializes a blob with `options` (NULL: the defaults), stores the
 * memory of the structure it made in *memory (what the structure's memory
 * figure reports), and frees it. On failure it must have made nothing (the
 * suite's wrapper checks that its `out` stayed NULL). */
typedef tf_status (*tu_load_fn)(const unsigned char *blob, size_t len, const tf_deserialize_options *options,
                                uint64_t *memory);

/* The max_memory contract of deserialize for a valid blob: a limit of the
 * structure's own memory loads it (and it then holds no more), one byte
 * less or a tiny limit is TF_ERR_TOO_LARGE with a message, 0 means no
 * limit, and an options struct whose size is below its first version (not
 * initialized) is TF_ERR_INVALID_ARGUMENT. A longer struct (a caller built
 * against a later header) is read as far as this library knows it. Returns
 * the structure's memory. */
uint64_t tu_check_max_memory(const unsigned char *blob, size_t len, tu_load_fn load);

/* Writes a little-endian field into a blob. */
void tu_put_le(unsigned char *p, uint64_t v, int bytes);

#endif
