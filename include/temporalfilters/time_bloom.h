/**
 * @file temporalfilters/time_bloom.h
 * @brief Time-limited Bloom filter: "was this key inserted within the last
 * T time units?"
 *
 * The time-based age-partitioned Bloom filter of section 6 of
 * "Time-limited Bloom Filter" (Rodrigues, Shtul, Baquero, Almeida, ACM SAC
 * 2023): slices of varying size m_i with timestamps t_i. An insert sets one
 * bit in each of the k newest slices; when the newest slices are full for
 * their share (equations 4-5) the filter shifts: a new slice s_0 is added
 * whose size follows the measured insertion rate (equations 6-8), and slices
 * whose last insert is older than the span retire as inserts come
 * (equation 3), down to the k newest, which never retire (the paper keeps
 * k + l). A query needs k consecutive slices holding the key's bits,
 * and ignores slices older than the span (Algorithm 1). Slices k apart share
 * a hash function, so an operation computes k hashes. docs/time-bloom.md
 * gives the algorithm, its equations and the measurements.
 *
 * **Error guarantee.** No false negatives within the span: a key inserted
 * at time t is reported present at every now with now - span <= t (clock
 * clamped, below), whatever the rate and whatever the clock does. At a
 * steady insertion rate the false-positive rate is at most the target
 * given to tf_time_bloom_new_for() (its peak is
 * tf_age_bloom_false_positive_rate(k, l)) and the filter holds at most
 * k + l + 2 slices (with hundreds of inserts per period span / l; a sparse
 * random stream varies more: up to 55 slices for (10, 24) at 20 inserts
 * per period). While the rate changes, the filter holds more slices for
 * about one span, and the rate rises with them, to about
 * target * (slices - k + 1) / (l + 1) (measured for (10, 24): 1.85x the
 * target over the first span after a tenfold jump, 1.29x over the second,
 * 1.03x over the third). The `fpr_now` of tf_time_bloom_get_stats()
 * gives the rate for the current slices. In plain words, after any pattern
 * of the clock:
 *  - **Idle gaps** (no insert for a while, shorter or longer than the span)
 *    do not count as traffic: when the same rate resumes, the filter keeps
 *    its steady shape (the slices of that rate, no more) and its
 *    false-positive rate from the first insert on.
 *  - **A clock that stands still** (a backward step clamped to the highest
 *    time seen, or a burst at one timestamp): B inserts at one time add at
 *    most 2k slices per tenfold of B over the inserts of one period
 *    (span / l) before them, i.e. at most
 *    k + l + 2 + 2k * log10(B / per-period inserts) slices (measured for
 *    (6, 13), (10, 24), (14, 36) and B from 10^3 to 10^7: about 1.8k per
 *    tenfold; 16 spans' worth at one timestamp gave 71 slices for (10, 24),
 *    the rate 2.7x the target). Bursts within one span add up. One span after
 *    the burst its slices have retired and the rate is back at the target.
 *  - The slices never exceed 4096 (TF_ERR_TOO_LARGE beyond).
 *
 * **Adaptation.** Under a burst the filter adds slices and returns to k + l
 * once the rate settles (k + l + 1 or + 2 right after a shift, since
 * generations are whole numbers of inserts); an over-sized initial capacity
 * shrinks s_0 at the first shift. The rate of equation 6 is measured over
 * the latest generations that cover at least one target period (span / l),
 * and extrapolated at most 4x from a shorter history, so a burst of many
 * generations within one time unit neither divides by zero nor is taken for
 * a rate sustained over the whole period: the slices grow geometrically
 * with it and its memory is linear in its size. Idle time is left out of
 * that measure: a pause of more than one period since the last insert
 * (after it the rate is that of the traffic before the pause), and a past
 * generation that lasted more than two periods (the measure stops before
 * it, at the traffic that followed the pause). Beyond the paper: a
 * generation also ends after one target period even if its slices are not
 * full (so that slices sized for a past burst move on and retire), and
 * stale slices retire down to k rather than k + l (they hold nothing a
 * query may find). Initial slices that never received an insert retire
 * only down to k + l while `now` is at most the span; once `now` exceeds
 * the span they count as stale (no insert within the span) and go down to
 * k like the others, so a filter whose clock starts past the span (a
 * wall clock) drops to k slices over its first inserts and grows back to
 * k + l over about one span of shifts. A burst far above the sized
 * capacity still adds slices, and with them false positives, until it
 * leaves the span: size the initial capacity for the bursts you expect.
 *
 * **Time.** `now` and `span` are in the caller's unit, which must be fine
 * enough that span >= l. A clock that goes backwards is clamped to the
 * highest time seen, so it never causes a false negative or corrupts the
 * filter.
 *
 * **Thread safety.** Not internally synchronised: contains,
 * contains_batch, get_stats, get_info, slice_bits, memory, serialized_size
 * and serialize are read-only and may run concurrently with each other;
 * add, add_if_absent, their batch forms (add_batch, add_if_absent_batch),
 * clear and free need exclusive access. Different filters are independent.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_TIME_BLOOM_H
#define TEMPORALFILTERS_TIME_BLOOM_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A time-limited Bloom filter (opaque handle).
 *
 * Created by tf_time_bloom_new(), tf_time_bloom_new_for() or
 * tf_time_bloom_deserialize(); destroyed by tf_time_bloom_free().
 * @since 0.1.0
 */
typedef struct tf_time_bloom tf_time_bloom;

/**
 * @brief What was fixed when a filter was created: its shape, span, seed
 * and flags. Filled by tf_time_bloom_get_info().
 *
 * A versioned struct: initialize it with ::TF_TIME_BLOOM_INFO_INIT; fields
 * are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_time_bloom_info {
    /** sizeof(tf_time_bloom_info) as the caller was compiled; set by
     *  ::TF_TIME_BLOOM_INFO_INIT. @since 0.1.0 */
    size_t size;
    /** Hash functions: bits set per insert, consecutive slices a key must
     *  match (1..64). @since 0.1.0 */
    uint32_t k;
    /** The window slices beyond the first k (1..1024): k + l slices in
     *  steady state. @since 0.1.0 */
    uint32_t l;
    /** The window, in the caller's time unit. @since 0.1.0 */
    uint64_t span;
    /** The hash seed. @since 0.1.0 */
    uint32_t seed;
    /** Always 0: ::TF_TIME_BLOOM_MIN_MEMORY, the only flag, is not
     *  recorded in the filter. @since 0.1.0 */
    uint32_t flags;
} tf_time_bloom_info;

/**
 * @brief Initializer of ::tf_time_bloom_info: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_TIME_BLOOM_INFO_INIT \
    { sizeof(tf_time_bloom_info), 0, 0, 0, 0, 0 }

/**
 * @brief The state of a filter at a time `now`. Filled by
 * tf_time_bloom_get_stats().
 *
 * A versioned struct: initialize it with ::TF_TIME_BLOOM_STATS_INIT; fields
 * are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_time_bloom_stats {
    /** sizeof(tf_time_bloom_stats) as the caller was compiled; set by
     *  ::TF_TIME_BLOOM_STATS_INIT. @since 0.1.0 */
    size_t size;
    /** The current number of slices: at least k (the k newest never
     *  retire). Below k + l only after slices with no insert within the
     *  span retired (stale slices, and initial slices never written once
     *  the clock passed the span); retirement happens at inserts.
     *  @since 0.1.0 */
    uint64_t slices;
    /** Total bits of all slices. @since 0.1.0 */
    uint64_t bits;
    /** bits / inserts within the span before `now` (0 when there are none). @since 0.1.0 */
    double bits_per_element;
    /** Inserts since creation or the last tf_time_bloom_clear(). @since 0.1.0 */
    uint64_t inserts;
    /** The false-positive rate at `now` for the measured fill (set bits / m)
     *  of every slice, slices older than the span counting as empty (the
     *  dynamic program of tf_age_bloom_false_positive_rate()). @since 0.1.0 */
    double fpr_now;
} tf_time_bloom_stats;

/**
 * @brief Initializer of ::tf_time_bloom_stats: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_TIME_BLOOM_STATS_INIT \
    { sizeof(tf_time_bloom_stats), 0, 0, 0.0, 0, 0.0 }

/**
 * @brief Flag of tf_time_bloom_new_for(): choose the (k, l) with the fewest
 * bits per element, however long its queries (see ::TF_AGE_BLOOM_MIN_MEMORY;
 * without it the choice bounds an absent query's expected probes by
 * ::TF_AGE_BLOOM_PROBE_BUDGET). Not recorded in the filter or its blob;
 * refused by tf_time_bloom_new().
 * @since 0.1.0
 */
#define TF_TIME_BLOOM_MIN_MEMORY 1u

/**
 * @brief Creates a filter for the keys of the last `span` time units with a
 * false-positive rate of at most `error_rate` at a steady rate.
 *
 * (k, l) come from tf_age_bloom_choose() (classic layout; with
 * ::TF_TIME_BLOOM_MIN_MEMORY, as with ::TF_AGE_BLOOM_MIN_MEMORY), and the k + l
 * initial slices are sized for `initial_capacity` inserts per span; the
 * sizes follow the measured rate from the first shift.
 *
 * @param[in]  initial_capacity expected inserts per span, >= 1.
 * @param[in]  error_rate       the target false-positive rate, in (0, 1).
 * @param[in]  span             the window in the caller's unit, >= l of the
 *                              chosen pair (use milliseconds rather than
 *                              seconds for short spans).
 * @param[in]  seed             the hash seed.
 * @param[in]  flags            0 or ::TF_TIME_BLOOM_MIN_MEMORY.
 * @param[out] out              receives the new filter, owned by the caller
 *                              (tf_time_bloom_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT initial_capacity is 0, error_rate out of
 *                                 range, span below l, or an unknown flag.
 * @retval TF_ERR_TOO_LARGE        no pair meets error_rate, or the slices
 *                                 would exceed 2^40 bits.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_new_for(uint64_t initial_capacity, double error_rate, uint64_t span, uint32_t seed,
                                       uint32_t flags, tf_time_bloom **out);

/**
 * @brief Creates an empty filter of k + l initial slices of `slice_bits`
 * bits each (the low-level constructor).
 *
 * @param[in]  k          hash functions, 1..64.
 * @param[in]  l          the window slices beyond the first k, 1..1024
 *                        (k + l slices in steady state).
 * @param[in]  slice_bits bits per initial slice, 64..2^40 (below 64:
 *                        ::TF_ERR_INVALID_ARGUMENT; above 2^40:
 *                        ::TF_ERR_TOO_LARGE).
 * @param[in]  span       the window in the caller's unit, >= l.
 * @param[in]  seed       the hash seed.
 * @param[in]  flags      0 (::TF_TIME_BLOOM_MIN_MEMORY is refused: the
 *                        caller chose (k, l); any other bit too).
 * @param[out] out        receives the new filter, owned by the caller
 *                        (tf_time_bloom_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT k or l out of range, slice_bits below 64,
 *                                 span below l, or flags not 0.
 * @retval TF_ERR_TOO_LARGE        slice_bits above 2^40.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t span, uint32_t seed,
                                   uint32_t flags, tf_time_bloom **out);

/**
 * @brief Destroys a filter and frees its memory.
 * @param[in] filter the filter; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_time_bloom_free(tf_time_bloom *filter);

/**
 * @brief Inserts a key at time `now`.
 *
 * A shift may allocate a new slice; if that fails the call returns
 * ::TF_ERR_OUT_OF_MEMORY (or ::TF_ERR_TOO_LARGE past 4096 slices, which a
 * clock that never advances can cause) and the filter is unchanged.
 *
 * @param[in] filter  the filter.
 * @param[in] key     the key's bytes; NULL only when key_len is 0.
 * @param[in] key_len the key's length in bytes.
 * @param[in] now     the current time, >= 1 (clamped to the highest time
 *                    seen).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter is NULL, or key is NULL with
 *                                 key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    a new slice could not be allocated.
 * @retval TF_ERR_TOO_LARGE        the filter reached 4096 slices within its
 *                                 span.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_add(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now);

/**
 * @brief Asks whether a key was inserted within the span before `now`.
 *
 * @param[in]  filter  the filter.
 * @param[in]  key     the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len the key's length in bytes.
 * @param[in]  now     the current time, >= 1 (clamped to the highest time
 *                     seen).
 * @param[out] present receives 1 when the key was (probably) inserted
 *                     within the span, 0 when it certainly was not.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or present is NULL, or key is NULL
 *                                 with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_contains(const tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                        int *present);

/**
 * @brief tf_time_bloom_contains(), then tf_time_bloom_add() when the key
 * was absent.
 *
 * @param[in]  filter      the filter.
 * @param[in]  key         the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len     the key's length in bytes.
 * @param[in]  now         the current time, >= 1.
 * @param[out] was_present receives the answer of tf_time_bloom_contains():
 *                         1 (not inserted) or 0 (inserted).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or was_present is NULL, or key is
 *                                 NULL with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    as tf_time_bloom_add() (nothing changed).
 * @retval TF_ERR_TOO_LARGE        as tf_time_bloom_add() (nothing changed).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_add_if_absent(tf_time_bloom *filter, const void *key, size_t key_len, uint64_t now,
                                             int *was_present);

/**
 * @brief Batch form of tf_time_bloom_add(): adds keys[0 .. count) in order
 * at time `now`.
 *
 * The same filter as count calls of tf_time_bloom_add() in order with the
 * same `now`; the keys are hashed in groups of 8, and for each key the
 * lines a query of it would test first are prefetched together (the first
 * two slices of each window the query starts from, at most 8 lines: the
 * path of tf_time_bloom_contains()). The insert itself writes the k newest
 * slices, which that prefetch covers only where they overlap. Every
 * argument is checked before anything changes; count == 0 is a no-op (the
 * arrays may then be NULL).
 *
 * @param[in,out] filter   the filter.
 * @param[in]     keys     `count` key pointers; keys[i] may be NULL only
 *                         when key_lens[i] is 0.
 * @param[in]     key_lens `count` key lengths in bytes.
 * @param[in]     count    the number of keys.
 * @param[in]     now      the current time, >= 1 (clamped as for tf_time_bloom_add()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or an array is NULL (with
 *                                 count > 0), or keys[i] is NULL with
 *                                 key_lens[i] > 0 (nothing changed).
 * @retval TF_ERR_INVALID_ARGUMENT now is 0 (nothing changed).
 * @retval TF_ERR_OUT_OF_MEMORY    a rotation could not allocate its slice
 *                                 at key i (or ::TF_ERR_TOO_LARGE, as for
 *                                 tf_time_bloom_add()): keys 0 .. i-1 were
 *                                 added, key i and those after it were not,
 *                                 as if the batch had been keys 0 .. i-1
 *                                 (the message names i).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_add_batch(tf_time_bloom *filter, const void *const *keys, const size_t *key_lens,
                                         size_t count, uint64_t now);

/**
 * @brief Batch form of tf_time_bloom_contains().
 *
 * The same answers as tf_time_bloom_contains() for keys[0 .. count) at
 * time `now`, with each group of 8 keys hashed and its likeliest lines
 * prefetched before the first is answered. Every argument is checked
 * first; count == 0 is a no-op (the arrays may then be NULL).
 *
 * @param[in]  filter   the filter.
 * @param[in]  keys     `count` key pointers; keys[i] may be NULL only when
 *                      key_lens[i] is 0.
 * @param[in]  key_lens `count` key lengths in bytes.
 * @param[in]  count    the number of keys.
 * @param[in]  now      the current time, >= 1.
 * @param[out] present  receives `count` answers, 1 or 0, with the error
 *                      guarantee of tf_time_bloom_contains().
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or an array is NULL (with
 *                                 count > 0), or keys[i] is NULL with
 *                                 key_lens[i] > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_contains_batch(const tf_time_bloom *filter, const void *const *keys,
                                              const size_t *key_lens, size_t count, uint64_t now, int *present);

/**
 * @brief Batch form of tf_time_bloom_add_if_absent().
 *
 * The same answers and the same filter as tf_time_bloom_add_if_absent() for
 * keys[0 .. count) in order at time `now` (a key repeated within the batch
 * is present from its second occurrence on), with each group of 8 keys
 * prefetched together. Every argument is checked before anything changes;
 * count == 0 is a no-op.
 *
 * @param[in,out] filter      the filter.
 * @param[in]     keys        `count` key pointers; keys[i] may be NULL only
 *                            when key_lens[i] is 0.
 * @param[in]     key_lens    `count` key lengths in bytes.
 * @param[in]     count       the number of keys.
 * @param[in]     now         the current time, >= 1.
 * @param[out]    was_present receives `count` answers, as
 *                            tf_time_bloom_add_if_absent().
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or an array is NULL (with
 *                                 count > 0), or keys[i] is NULL with
 *                                 key_lens[i] > 0 (nothing changed).
 * @retval TF_ERR_INVALID_ARGUMENT now is 0 (nothing changed).
 * @retval TF_ERR_OUT_OF_MEMORY    a rotation could not allocate its slice
 *                                 at key i (or ::TF_ERR_TOO_LARGE): keys
 *                                 0 .. i-1 were processed and their answers
 *                                 written, key i and those after it were
 *                                 not (the message names i).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_add_if_absent_batch(tf_time_bloom *filter, const void *const *keys,
                                                   const size_t *key_lens, size_t count, uint64_t now,
                                                   int *was_present);

/**
 * @brief Forgets every key and resets the insert count; the slices keep
 * their number and sizes, and the filter keeps its clock (the highest time
 * seen: earlier times are still clamped to it). Every slice then counts as
 * never written, so once the clock is past the span the next inserts
 * retire them down to k, as after creation.
 * @param[in] filter the filter.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter is NULL.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_clear(tf_time_bloom *filter);

/**
 * @brief Reports the state at time `now`: slices, bits, bits per element
 * within the span, inserts and the false-positive rate for the measured
 * fill.
 *
 * Costs O(bits / 64): `fpr_now` counts the set bits of every slice.
 *
 * @param[in]     filter the filter.
 * @param[in]     now    the time the state is read at, >= 1 (clamped to the
 *                       highest time seen).
 * @param[in,out] stats  a ::tf_time_bloom_stats initialized with
 *                       ::TF_TIME_BLOOM_STATS_INIT; receives the fields its
 *                       `size` covers.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0, or stats->size is below the
 *                                 struct's first version or above 4096 (not
 *                                 initialized).
 * @retval TF_ERR_OUT_OF_MEMORY    the working memory of the `fpr_now`
 *                                 computation could not be allocated.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_get_stats(const tf_time_bloom *filter, uint64_t now, tf_time_bloom_stats *stats);

/**
 * @brief Reports the size of one slice.
 *
 * @param[in]  filter the filter.
 * @param[in]  i      the slice: 0 is the newest, the `slices` of
 *                    tf_time_bloom_get_stats() minus 1 the oldest.
 * @param[out] bits   receives its size in bits.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or bits is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT there is no slice i.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_slice_bits(const tf_time_bloom *filter, uint64_t i, uint64_t *bits);

/**
 * @brief Reports what was fixed at creation: k, l, span, seed and flags.
 * O(1).
 *
 * @param[in]     filter the filter.
 * @param[in,out] info   a ::tf_time_bloom_info initialized with
 *                       ::TF_TIME_BLOOM_INFO_INIT; receives the fields its
 *                       `size` covers.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or info is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT info->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_get_info(const tf_time_bloom *filter, tf_time_bloom_info *info);

/**
 * @brief Reports the bytes of memory the filter holds (the handle, its
 * bookkeeping and every slice).
 *
 * @param[in]  filter the filter.
 * @param[out] bytes  receives the number of bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter or bytes is NULL.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_memory(const tf_time_bloom *filter, size_t *bytes);

/**
 * @brief The size of the filter's blob, in bytes (wire format kind 3;
 * docs/wire-format.md).
 *
 * @param[in]  filter the filter.
 * @param[out] size   receives the blob's size.
 * @retval TF_OK            success.
 * @retval TF_ERR_NULL      filter or size is NULL.
 * @retval TF_ERR_TOO_LARGE the size overflows size_t.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_serialized_size(const tf_time_bloom *filter, size_t *size);

/**
 * @brief Writes the filter as a blob: wire format kind 3, little-endian,
 * checksummed; every slice, size, timestamp and counter
 * (docs/wire-format.md).
 *
 * @param[in]  filter   the filter.
 * @param[out] buf      the buffer; may be NULL when capacity is 0.
 * @param[in]  capacity the buffer's size in bytes.
 * @param[out] written  receives the bytes written; on
 *                      ::TF_ERR_BUFFER_TOO_SMALL, the size needed.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or written is NULL, or buf is NULL
 *                                 while capacity is large enough.
 * @retval TF_ERR_BUFFER_TOO_SMALL capacity is below the blob's size; nothing
 *                                 is written into buf.
 * @retval TF_ERR_TOO_LARGE        the size overflows size_t.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_serialize(const tf_time_bloom *filter, void *buf, size_t capacity, size_t *written);

/**
 * @brief Creates a filter from a blob of tf_time_bloom_serialize().
 *
 * Validates the envelope, the checksum and every count and size before
 * allocating (the bits past a slice's end as it reads the slice, freeing it
 * on failure): a hostile blob gets a status, never a crash; it makes
 * deserialize ask for at most twice its size plus 64 KiB (SECURITY.md).
 *
 * @param[in]  buf     the blob.
 * @param[in]  len     its length in bytes.
 * @param[in]  options a ::tf_deserialize_options initialized with
 *                     ::TF_DESERIALIZE_OPTIONS_INIT, or NULL for the
 *                     defaults; `max_memory` caps what tf_time_bloom_memory()
 *                     of the new filter may report.
 * @param[out] out     receives the new filter, owned by the caller
 *                     (tf_time_bloom_free()).
 * @retval TF_OK                      success.
 * @retval TF_ERR_NULL                buf or out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT    options->size is below the struct's
 *                                    first version or above 4096 (not
 *                                    initialized), or options sets a field
 *                                    this library version does not know
 *                                    (a newer caller's option not left at
 *                                    its default).
 * @retval TF_ERR_TOO_LARGE           the filter would hold more than
 *                                    options->max_memory bytes (nothing is
 *                                    allocated).
 * @retval TF_ERR_TRUNCATED           the blob is shorter than the 28-byte
 *                                    envelope or than its payload length
 *                                    says.
 * @retval TF_ERR_BAD_MAGIC           the blob does not start with "TFLT".
 * @retval TF_ERR_UNSUPPORTED_VERSION the format version is unknown.
 * @retval TF_ERR_WRONG_KIND          the blob holds another structure.
 * @retval TF_ERR_CHECKSUM            the checksum does not match.
 * @retval TF_ERR_CORRUPT             a field breaks the filter's invariants,
 *                                    bytes follow the checksum, or the blob
 *                                    sets a flag bit.
 * @retval TF_ERR_OUT_OF_MEMORY       an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_time_bloom_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                           tf_time_bloom **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_TIME_BLOOM_H */
