/* Helpers of the rate limiter suites (tests/rate_limiter/test_*.c): making
 * limiters, one decision at a time, snapshots and copies. */
#ifndef TF_TESTS_LIMITER_UTIL_H
#define TF_TESTS_LIMITER_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters.h"

#define OK(call) assert_int_equal((call), TF_OK)
#define NEVER TF_RETRY_NEVER
#define EXACT TF_RATE_LIMITER_EXACT
#define ULL(x) ((unsigned long long)(x))

/* Exact mode: the bytes of a ring of `cap` grant times, as the memory
 * figure counts them: a 24-byte header and 4 bytes a slot (an offset from
 * the ring's base) when the window is at most 2^31 time units, 8 (the time
 * itself) above 2^31 (docs/rate-limiter.md). */
#define RING(cap) (24u + 4u * (uint64_t)(cap))
#define RING_WIDE(cap) (24u + 8u * (uint64_t)(cap))

/* Both modes: bucketed and exact. */
#define NMODES 2
extern const uint32_t kModes[NMODES];

/* A new limiter (asserting success), of seed 0 or of `seed`. */
tf_rate_limiter *make(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags);
tf_rate_limiter *make_seeded(uint64_t limit, uint64_t window, uint64_t width, uint32_t seed, uint32_t flags);

/* One decision. */
typedef struct {
    int allowed;
    uint64_t remaining, retry_at;
} dec;

/* acquire and peek of a key given by its bytes, by a C string, or by an id
 * (the key tu_make_key('L', id)), asserting success. */
dec acq_b(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n);
dec peek_b(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n);
dec acq(tf_rate_limiter *r, const char *k, uint64_t now, uint64_t n);
dec peek(tf_rate_limiter *r, const char *k, uint64_t now, uint64_t n);
dec acq_id(tf_rate_limiter *r, uint64_t id, uint64_t now, uint64_t n);

/* Whether two decisions are the same (allowed, remaining, retry_at). */
int same_dec(dec a, dec b);
/* "exact" or "bucketed", for messages. */
const char *mode_name(uint32_t flags);

/* Asserts a decision, naming the caller's line. */
#define EXPECT(d, a, rem, retry) check_dec((d), (a), (rem), (retry), __LINE__)
void check_dec(dec d, int a, uint64_t rem, uint64_t retry, int line);

/* The limiter's blob (malloc'ed; its length in *len). */
unsigned char *snap(const tf_rate_limiter *r, size_t *len);
/* Asserts that `r` serializes to exactly `before`. */
void assert_unchanged(const tf_rate_limiter *r, const unsigned char *before, size_t len);
/* A copy through a blob. */
tf_rate_limiter *clone_of(const tf_rate_limiter *r);
tf_rate_limiter_stats stats_of(const tf_rate_limiter *r);
tf_rate_limiter_info info_of(const tf_rate_limiter *r);
/* A populated limiter, with every kind of state. */
tf_rate_limiter *populated(uint32_t flags);
/* Deserializes a blob (a tu_try_blob_fn): a failure makes nothing and says why. */
tf_status try_blob(const unsigned char *b, size_t n);
/* Decisions of two limiters agree over the same random in-order traffic. */
void assert_same_decisions(tf_rate_limiter *a, tf_rate_limiter *b, uint64_t from, uint64_t seed);

#endif
