/* Helpers of the RecencySketch suites (tests/recency_sketch/test_*.c). */
#ifndef TF_TESTS_SKETCH_UTIL_H
#define TF_TESTS_SKETCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters.h"

#define OK(call) assert_int_equal((call), TF_OK)

/* Every layout and mode: standard, blocked, concurrent, both. */
#define NMODES 4
extern const uint32_t kModes[NMODES];

/* A new sketch (asserting success). */
tf_recency_sketch *make(uint64_t w, uint32_t d, uint32_t seed, uint32_t flags);
/* Update / query of the key tu_make_key('r', id). */
void upd(tf_recency_sketch *s, uint64_t id, uint64_t t);
uint64_t qry(const tf_recency_sketch *s, uint64_t id);
/* The sketch's blob (malloc'ed; its length in *len). */
unsigned char *snap(const tf_recency_sketch *s, size_t *len);
/* Whether two sketches serialize to the same bytes. */
int same(const tf_recency_sketch *a, const tf_recency_sketch *b);
tf_recency_sketch_info info_of(const tf_recency_sketch *s);
/* Asserts that `s` serializes to exactly `before`. */
void assert_unchanged(const tf_recency_sketch *s, const unsigned char *before, size_t len);
/* A 512 x 3 sketch after n random updates of 5,000 keys. */
tf_recency_sketch *random_sketch(uint32_t flags, uint64_t seed, uint64_t n);
/* A copy through a blob. */
tf_recency_sketch *copy_of(const tf_recency_sketch *s);
/* Deserializes a blob (a tu_try_blob_fn): a failure makes nothing and says why. */
tf_status try_blob(const unsigned char *b, size_t n);
/* Largest number of grant times inside any half-open window of length L
 * (`times`, n of them, are sorted in place). */
uint64_t max_in_window(uint64_t *times, size_t n, uint64_t L);

#endif
