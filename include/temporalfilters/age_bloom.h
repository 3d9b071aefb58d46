/*
 * temporalfilters/age_bloom.h - Age-Partitioned Bloom Filter (APBF): "was
 * this key among the last N inserts?"
 *
 * The filter is a sequence of k + l slices, each a bit array of m bits (the
 * "Time-limited Bloom Filter" paper, section 5; Shtul, Baquero, Almeida).
 * An insert sets one bit in each of the k newest slices; every g inserts (a
 * generation) the slices shift: the oldest is emptied and becomes the
 * newest. A query reports a key present when it finds its bits in k
 * consecutive slices.
 *
 * ERROR GUARANTEE: no false negatives within the window: every key among the
 * last l * g inserts (the capacity) is reported present. A key not inserted
 * in the window is reported present with probability at most the filter's
 * false-positive rate, which peaks just before a shift (slice fill ratios
 * 1 - 2^-((i+1)/k), then 1/2) and is computed exactly by
 * tf_age_bloom_false_positive_rate() (classic layout; the blocked layout,
 * below, has its own conservative model, reported by tf_age_bloom_stats'
 * fpr_now). Keys inserted between l * g and (k + l) * g inserts ago may
 * still be reported present, fewer and fewer as their slices leave.
 *
 * MEMORY: (k + l) * m bits, with m = ceil(k * g / ln 2): about
 * (k + l) * k / (l * ln 2) bits per element of capacity
 * (tf_age_bloom_bits_per_element(); the blocked layout needs more, below).
 *
 * THREAD SAFETY: a filter is not internally synchronised. Concurrent calls
 * are safe only when none of them modifies the filter (contains, stats,
 * info, memory, is_blocked, serialize); add, add_if_absent and clear need
 * exclusive access. Different filters are independent.
 */
#ifndef TEMPORALFILTERS_AGE_BLOOM_H
#define TEMPORALFILTERS_AGE_BLOOM_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_age_bloom tf_age_bloom;

/* Limits of the parameters. */
#define TF_AGE_BLOOM_MAX_K 64u
#define TF_AGE_BLOOM_MAX_L 1024u

/*
 * Sizing: the (k, l) pair whose steady-state false-positive rate is at most
 * `error_rate` with the fewest bits per element of capacity (larger l: less
 * memory, longer queries; l is capped at 256). Shared by the time-limited
 * filter.
 * Errors: TF_ERR_NULL (k or l), TF_ERR_INVALID_ARGUMENT (error_rate NaN or
 * outside (0, 1)), TF_ERR_TOO_LARGE (no pair with k <= 64 meets it).
 * Thread-safe.
 */
TF_API tf_status tf_age_bloom_choose(double error_rate, uint32_t *k, uint32_t *l);

/*
 * The exact steady-state false-positive rate of a filter with parameters
 * (k, l), at its peak just before a shift: a dynamic program over
 * (slice, length of the current run of set bits) with the fill ratios above.
 * Also the worst case of the time-limited filter at a steady rate.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (k or l out of range).
 * Thread-safe.
 */
TF_API tf_status tf_age_bloom_false_positive_rate(uint32_t k, uint32_t l, double *rate);

/* Bits per element of capacity at steady state, (k + l) k / (l ln 2).
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT. Thread-safe. */
TF_API tf_status tf_age_bloom_bits_per_element(uint32_t k, uint32_t l, double *bits);

/*
 * Creates a filter that remembers at least the last `capacity` inserts with
 * a false-positive rate of at most `error_rate`: (k, l) from
 * tf_age_bloom_choose(), generation g = ceil(capacity / l), slices of
 * ceil(k * g / ln 2) bits.
 *  error_rate  in (0, 1).
 *  capacity    window length in inserts, >= 1.
 *  seed        hash seed.
 *  out         receives the filter, owned by the caller (tf_age_bloom_free).
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE (slices of
 * more than 2^40 bits), TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_age_bloom_new_for(double error_rate, uint64_t capacity, uint32_t seed, tf_age_bloom **out);

/*
 * Low-level constructor: k + l slices of `slice_bits` bits, generation
 * g = max(1, floor(slice_bits * ln 2 / k)) (fill ratio 1/2 when a slice
 * leaves the first k). Capacity l * g.
 *  k           1..64 (hash functions; bits set per insert).
 *  l           1..1024.
 *  slice_bits  64..2^40.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE,
 * TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_age_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, tf_age_bloom **out);

/* Destroys a filter; NULL is a no-op. Needs exclusive access. */
TF_API void tf_age_bloom_free(tf_age_bloom *filter);

/*
 * The blocked layout: the same count window (a shift every g inserts, no
 * false negatives for the last l * g inserts, a query needs the key's bit in
 * k consecutive slices) with all k + l <= 32 slices stored as the 32-bit
 * lanes of 64-byte lines, so that a key's bits in every slice lie in one
 * block: one line (k + l <= 16) or two adjacent lines. A query reads its
 * block and tests all slices with a few instructions (AVX2 when the CPU has
 * it; the results and blobs are the same without): several times faster
 * than the classic layout, which reads one line per slice it probes.
 *
 * The error guarantee: keys sharing a block share it in every slice, which
 * makes a slice's bits for a key depend on each other. The sizing uses a
 * model that takes the keys per lane as Poisson and perfectly correlated
 * across slices (summed over every step of their loads, tail included); it
 * overstates the dependence, so the rate stays at or under the target:
 * measured 0.72x-0.97x of it from 1e-1 to 1e-4, and 0.03x-0.85x from 1e-5
 * to 1e-15 (the exact rate of real filters, computed from their bits). The
 * cost is memory: about 23 bits per element at 1e-2, 35 at 1e-3 and 50 at
 * 1e-4 (the classic layout: 20, 26 and 31), more below, where the classic
 * layout is the better choice.
 *
 * tf_age_bloom_choose_blocked gives the (k, l) with k + l in {16, 32} and
 * the fill ratio `fill` of a slice leaving the first k that meet
 * `error_rate` under the model with the fewest bits per element. The
 * search takes tens of milliseconds the first time a rate is asked for
 * (the answer is remembered, for up to 256 rates).
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (error_rate outside
 * (0, 0.2]: near 1 the model is not conservative; use the classic layout),
 * TF_ERR_TOO_LARGE (no pair meets it with slices at least 10% full: below
 * about 1e-18). Thread-safe.
 */
TF_API tf_status tf_age_bloom_choose_blocked(double error_rate, uint32_t *k, uint32_t *l, double *fill);

/*
 * Creates a blocked filter that remembers at least the last `capacity`
 * inserts with a false-positive rate of at most `error_rate` (see above):
 * generation g = ceil(capacity / l), slices of k * g / -ln(1 - fill) bits
 * rounded up to a multiple of 32. Every other function works on it as on a
 * classic filter; its blob is kind 2 with the blocked flag.
 *  error_rate  in (0, 0.2].
 *  capacity    window length in inserts, >= 1.
 *  seed        hash seed.
 *  out         receives the filter, owned by the caller (tf_age_bloom_free).
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE (slices of
 * more than 2^40 bits), TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_age_bloom_new_blocked_for(double error_rate, uint64_t capacity, uint32_t seed, tf_age_bloom **out);

/*
 * Low-level constructor of the blocked layout: k + l slices of `slice_bits`
 * bits rounded up to a multiple of 32, generation g = max(1, floor(bits *
 * ln 2 / k)) (fill ratio 1/2, more than the sizing above would choose:
 * tf_age_bloom_stats reports the model's rate). Memory: ceil((k + l) / 16)
 * lines of 64 bytes per 32 bits of slice (unused lanes included).
 *  k           >= 1; l >= 1; k + l <= 32.
 *  slice_bits  32..2^40.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE,
 * TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_age_bloom_new_blocked(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed,
                                          tf_age_bloom **out);

/* blocked receives 1 for the blocked layout, 0 for the classic one.
 * Errors: TF_ERR_NULL. Read-only (see THREAD SAFETY). */
TF_API tf_status tf_age_bloom_is_blocked(const tf_age_bloom *filter, int *blocked);

/* Inserts a key (shifting first when the generation is full).
 * Errors: TF_ERR_NULL (filter, or key with key_len > 0). */
TF_API tf_status tf_age_bloom_add(tf_age_bloom *filter, const void *key, size_t key_len);

/* present receives 1 when the key is (probably) among the last inserts,
 * 0 when it is certainly not among the last l * g.
 * Errors: TF_ERR_NULL (filter, present, or key with key_len > 0). */
TF_API tf_status tf_age_bloom_contains(const tf_age_bloom *filter, const void *key, size_t key_len, int *present);

/* De-duplication in one call: was_present receives what contains() would
 * have said; the key is inserted only when it was absent.
 * Errors: as tf_age_bloom_add and tf_age_bloom_contains. */
TF_API tf_status tf_age_bloom_add_if_absent(tf_age_bloom *filter, const void *key, size_t key_len, int *was_present);

/* Forgets everything (the shape stays). Errors: TF_ERR_NULL. */
TF_API tf_status tf_age_bloom_clear(tf_age_bloom *filter);

/*
 * Current state; any out-parameter may be NULL.
 *  slices            number of slices (k + l).
 *  bits              total bits of all slices (blocked: of all lines, unused
 *                    lanes included).
 *  bits_per_element  bits / capacity (l * g).
 *  inserts           inserts since creation or clear.
 *  fpr_now           false-positive rate for the measured fill (set bits / m)
 *                    of every slice, by the same dynamic program; exact
 *                    under the model of independent bits (classic layout),
 *                    the conservative model above (blocked). O(bits / 64)
 *                    (blocked: a pass over the lanes, then the model, about
 *                    a millisecond).
 * Errors: TF_ERR_NULL (filter).
 */
TF_API tf_status tf_age_bloom_stats(const tf_age_bloom *filter, uint64_t *slices, uint64_t *bits,
                                    double *bits_per_element, uint64_t *inserts, double *fpr_now);

/* Parameters; any out-parameter may be NULL. capacity = l * generation.
 * Errors: TF_ERR_NULL (filter). */
TF_API tf_status tf_age_bloom_info(const tf_age_bloom *filter, uint32_t *k, uint32_t *l, uint64_t *slice_bits,
                                   uint64_t *generation, uint64_t *capacity, uint32_t *seed);

/* Bytes of memory held. Errors: TF_ERR_NULL. */
TF_API tf_status tf_age_bloom_memory(const tf_age_bloom *filter, size_t *bytes);

/* Serialization (wire format kind 2; see README.md). Same contract as the
 * other structures: serialized_size, serialize (TF_ERR_BUFFER_TOO_SMALL with
 * the needed size in `written`), deserialize (validates everything before
 * allocating; TF_ERR_TRUNCATED, TF_ERR_BAD_MAGIC, TF_ERR_UNSUPPORTED_VERSION,
 * TF_ERR_WRONG_KIND, TF_ERR_CHECKSUM, TF_ERR_CORRUPT, TF_ERR_OUT_OF_MEMORY). */
TF_API tf_status tf_age_bloom_serialized_size(const tf_age_bloom *filter, size_t *size);
TF_API tf_status tf_age_bloom_serialize(const tf_age_bloom *filter, void *buf, size_t capacity, size_t *written);
TF_API tf_status tf_age_bloom_deserialize(const void *buf, size_t len, tf_age_bloom **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_AGE_BLOOM_H */
