/* Helpers shared by the cmocka suites: deterministic random numbers, keys,
 * blob snapshots and statistical bounds. */
#ifndef TF_TESTS_TEST_UTIL_H
#define TF_TESTS_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters/common.h"

/* splitmix64: a small, good, deterministic generator. */
typedef struct { uint64_t s; } tu_rng;
uint64_t tu_next(tu_rng *r);
/* uniform in [0, n) */
uint64_t tu_below(tu_rng *r, uint64_t n);
double tu_unit(tu_rng *r);

/* A key made of the 8 little-endian bytes of `id` behind a tag byte, so
 * that different suites use different key spaces. */
typedef struct { unsigned char b[9]; } tu_key;
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

/* Writes a little-endian field into a blob. */
void tu_put_le(unsigned char *p, uint64_t v, int bytes);

#endif
