/*
 * temporalfilters/time_bloom.h - Time-limited Bloom Filter: "was this key
 * inserted within the last T time units?"
 *
 * The time-based age-partitioned Bloom filter of the "Time-limited Bloom
 * Filter" paper (Rodrigues, Shtul, Baquero, Almeida; section 6): slices of
 * varying size m_i with timestamps t_i. An insert sets one bit in each of
 * the k newest slices; when the newest slices are full for their share
 * (equations 4-5) the filter shifts: a new slice s_0 is added whose size
 * follows the measured insertion rate (equations 6-8), and slices whose last
 * insert is older than the span retire (equation 3), never below k + l
 * slices. A query needs k consecutive slices holding the key's bits, and
 * ignores slices older than the span (Algorithm 1). Slices k apart share a
 * hash function, so an operation computes k hashes.
 *
 * ERROR GUARANTEE: no false negatives within the span: a key inserted at
 * time t is reported present at every now with now - span <= t (clock
 * clamped, below). At a steady insertion rate the false-positive rate is at
 * most the target given to tf_time_bloom_new_for() (its peak is
 * tf_age_bloom_false_positive_rate(k, l)). While the rate changes, the
 * filter holds more than k + l slices for about one span, and the rate rises
 * with them, to about target * (slices - k + 1) / (l + 1) (measured: 1.2x
 * the target in the span after a tenfold jump, 1.7x during a burst of 16
 * spans' worth of inserts at one timestamp). tf_time_bloom_stats() gives
 * the rate for the current slices.
 *
 * ADAPTATION: under a burst the filter adds slices and returns to k + l once
 * the rate settles (k + l + 1 or + 2 right after a shift, since generations
 * are whole numbers of inserts); an over-sized initial capacity shrinks s_0
 * at the first shift. The rate of equation 6 is measured over the latest
 * generations that cover at least one target period (span / l), and
 * extrapolated at most 4x from a shorter history, so a burst of many
 * generations within one time unit neither divides by zero nor is taken for
 * a rate sustained over the whole period: the slices grow geometrically
 * with it and its memory is linear in its size. Beyond the paper: a
 * generation also ends after one target period even if its slices are not
 * full (so that slices sized for a past burst move on and retire), and
 * stale slices retire down to k rather than k + l (they hold nothing a
 * query may find). A burst far above the sized capacity still adds slices,
 * and with them false positives, until it leaves the span: size the initial
 * capacity for the bursts you expect.
 *
 * TIME: `now` and `span` are in the caller's unit, which must be fine enough
 * that span >= l. A clock that goes backwards is clamped to the highest time
 * seen, so it never causes a false negative or corrupts the filter.
 *
 * THREAD SAFETY: not internally synchronised; contains, stats, info, memory
 * and serialize may run concurrently with each other, add, add_if_absent and
 * clear need exclusive access.
 */
#ifndef TEMPORALFILTERS_TIME_BLOOM_H
#define TEMPORALFILTERS_TIME_BLOOM_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_time_bloom tf_time_bloom;

/*
 * Creates a filter for the keys of the last `span` time units with a
 * false-positive rate of at most `error_rate` at a steady rate: (k, l) from
 * tf_age_bloom_choose(), and k + l initial slices sized for
 * `initial_capacity` inserts per span (the rate adapts from the first shift).
 *  error_rate        in (0, 1).
 *  span              in the caller's unit, >= l of the chosen pair (e.g. use
 *                    milliseconds rather than seconds for short spans).
 *  initial_capacity  expected inserts per span, >= 1.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE,
 * TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_time_bloom_new_for(double error_rate, uint64_t span, uint64_t initial_capacity, uint32_t seed,
                                       tf_time_bloom **out);

/*
 * Low-level constructor: k + l initial slices of `slice_bits` bits each.
 *  k 1..64, l 1..1024, slice_bits 64..2^40, span >= l.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE,
 * TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_time_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t span, uint32_t seed,
                                   tf_time_bloom **out);

/* Destroys a filter; NULL is a no-op. Needs exclusive access. */
TF_API void tf_time_bloom_free(tf_time_bloom *filter);

/*
 * Inserts a key at time now (>= 1). A shift may allocate a new slice; if that
 * fails the call returns TF_ERR_OUT_OF_MEMORY (or TF_ERR_TOO_LARGE past 4096
 * slices, which a clock that never advances can cause) and the filter is
 * unchanged.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (now == 0),
 * TF_ERR_OUT_OF_MEMORY, TF_ERR_TOO_LARGE.
 */
TF_API tf_status tf_time_bloom_add(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now);

/* present receives 1 when the key was (probably) inserted within the span
 * before now, 0 when it certainly was not.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (now == 0). */
TF_API tf_status tf_time_bloom_contains(const tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                        int *present);

/* contains() then add() when absent; was_present receives contains()'s answer.
 * Errors: as tf_time_bloom_add. */
TF_API tf_status tf_time_bloom_add_if_absent(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                             int *was_present);

/* Forgets everything (slices keep their sizes). Errors: TF_ERR_NULL. */
TF_API tf_status tf_time_bloom_clear(tf_time_bloom *filter);

/*
 * State at time now; any out-parameter may be NULL.
 *  slices            current number of slices (>= k + l).
 *  bits              total bits.
 *  bits_per_element  bits / inserts within the span (0 when none).
 *  inserts           inserts since creation or clear.
 *  fpr_now           false-positive rate for the measured fill (set bits / m)
 *                    of every slice, slices older than the span counting as
 *                    empty (the dynamic program of tf_age_bloom_*). O(bits / 64).
 * Errors: TF_ERR_NULL (filter), TF_ERR_INVALID_ARGUMENT (now == 0).
 */
TF_API tf_status tf_time_bloom_stats(const tf_time_bloom *filter, uint64_t now, uint64_t *slices, uint64_t *bits,
                                     double *bits_per_element, uint64_t *inserts, double *fpr_now);

/* Size of slice i (0 = newest) in bits. Errors: TF_ERR_NULL,
 * TF_ERR_INVALID_ARGUMENT (i out of range). */
TF_API tf_status tf_time_bloom_slice_bits(const tf_time_bloom *filter, uint64_t i, uint64_t *bits);

/* Parameters; any out-parameter may be NULL. Errors: TF_ERR_NULL. */
TF_API tf_status tf_time_bloom_info(const tf_time_bloom *filter, uint32_t *k, uint32_t *l, uint64_t *span,
                                    uint32_t *seed);

/* Bytes of memory held. Errors: TF_ERR_NULL. */
TF_API tf_status tf_time_bloom_memory(const tf_time_bloom *filter, size_t *bytes);

/* Serialization (wire format kind 3): every slice, size, timestamp and
 * counter. Same contract as tf_age_bloom_serialize and friends. */
TF_API tf_status tf_time_bloom_serialized_size(const tf_time_bloom *filter, size_t *size);
TF_API tf_status tf_time_bloom_serialize(const tf_time_bloom *filter, void *buf, size_t capacity, size_t *written);
TF_API tf_status tf_time_bloom_deserialize(const void *buf, size_t len, tf_time_bloom **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_TIME_BLOOM_H */
