/* Helpers the Bloom filter suites share (tests/bloom). */
#ifndef TF_TESTS_BLOOM_UTIL_H
#define TF_TESTS_BLOOM_UTIL_H

#include <stddef.h>

#include "temporalfilters.h"

/* Deserializes `blob` with `options` (a filter's own deserialize); on
 * success reports its _memory() in *memory and frees it. */
typedef tf_status (*bu_load_fn)(const unsigned char *blob, size_t len, const tf_deserialize_options *options,
                                size_t *memory);

/* options->max_memory for a valid blob whose filter holds `need` bytes (its
 * _memory()): refused with TF_ERR_TOO_LARGE below `need` (by one byte, and
 * at 1), accepted at exactly `need` with a filter of at most `need` bytes,
 * and without a limit (NULL options, max_memory 0); options never
 * initialized (size 0, or below the first version) are
 * TF_ERR_INVALID_ARGUMENT; a newer, longer options struct is read as far
 * as the library knows it. */
void bu_check_max_memory(const unsigned char *blob, size_t len, size_t need, bu_load_fn load);

#endif
