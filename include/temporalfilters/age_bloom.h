/**
 * @file temporalfilters/age_bloom.h
 * @brief Age-partitioned Bloom filter: "was this key among the last N
 * inserts?"
 *
 * The filter is a sequence of k + l slices, each a bit array of m bits (the
 * age-partitioned Bloom filter of section 5 of "Time-limited Bloom Filter",
 * Rodrigues, Shtul, Baquero, Almeida, ACM SAC 2023). An insert sets one bit
 * in each of the k newest slices; every g inserts (a generation) the slices
 * shift: the oldest is emptied and becomes the newest. A query reports a key
 * present when it finds its bits in k consecutive slices. docs/age-bloom.md
 * gives the algorithm, its equations and the measurements.
 *
 * **Error guarantee.** No false negatives within the window: every key
 * among the last l * g inserts (the capacity) is reported present. A key not
 * inserted in the window is reported present with probability at most the
 * filter's false-positive rate, which peaks just before a shift (slice fill
 * ratios 1 - 2^-((i+1)/k), then 1/2) and is computed exactly by
 * tf_age_bloom_false_positive_rate() (classic layout; the blocked layout,
 * below, has its own conservative model, reported by the `fpr_now` of
 * tf_age_bloom_get_stats()). Keys inserted between l * g and (k + l) * g
 * inserts ago may still be reported present, fewer and fewer as their
 * slices leave.
 *
 * **Memory.** (k + l) * m bits, with m = ceil(k * g / ln 2): about
 * (k + l) * k / (l * ln 2) bits per element of capacity
 * (tf_age_bloom_bits_per_element(); the blocked layout needs more, below).
 *
 * **Layouts.** The flag ::TF_AGE_BLOOM_BLOCKED of the constructors chooses
 * the blocked layout: the same count window (a shift every g inserts, no
 * false negatives for the last l * g inserts, a query needs the key's bit in
 * k consecutive slices) with all k + l <= 32 slices stored as the 32-bit
 * lanes of 64-byte lines, so that a key's bits in every slice lie in one
 * block: one line (k + l <= 16) or two adjacent lines. A query reads its
 * block and tests all slices with a few instructions (AVX2 when the CPU has
 * it; the results and blobs are the same without): several times faster
 * than the classic layout, which reads one line per slice it probes.
 *
 * Its error guarantee: keys sharing a block share it in every slice, which
 * makes a slice's bits for a key depend on each other. The sizing uses a
 * model that takes the keys per lane as Poisson and perfectly correlated
 * across slices (summed over every step of their loads, tail included); it
 * overstates the dependence, so the rate stays at or under the target:
 * from 1e-1 to 1e-4, measured 0.53x-0.93x of it just before a shift and
 * 0.54x-0.88x averaged over a generation (test_blocked_fpr); from 1e-5 to
 * 1e-15, 0.03x-0.85x (test_blocked_fpr_small_targets: the exact rate of
 * real filters, computed from their bits). The cost is memory: about 23
 * bits per element at 1e-2, 35 at 1e-3 and 50 at 1e-4, against the classic
 * layout's 20.4, 28.1 and 35.7 with its default (k, l) (1.13x to 1.40x) or
 * 19.7, 25.7 and 31.5 with ::TF_AGE_BLOOM_MIN_MEMORY (1.17x to 1.59x); more
 * below, where the classic layout is the better choice.
 *
 * **Thread safety.** A filter is not internally synchronised. Concurrent
 * calls are safe only when none of them modifies the filter (contains,
 * contains_batch, get_stats, get_info, memory, serialized_size, serialize
 * are read-only); add, add_if_absent, their batch forms, clear and free
 * need exclusive access. Different
 * filters are independent.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_AGE_BLOOM_H
#define TEMPORALFILTERS_AGE_BLOOM_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief An age-partitioned Bloom filter (opaque handle), in either layout.
 *
 * Created by tf_age_bloom_new(), tf_age_bloom_new_for() or
 * tf_age_bloom_deserialize(); destroyed by tf_age_bloom_free().
 * @since 0.1.0
 */
typedef struct tf_age_bloom tf_age_bloom;

/**
 * @brief The largest k (hash functions, bits set per insert) of the classic
 * layout.
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_MAX_K 64u

/**
 * @brief The largest l (slices beyond the first k) of the classic layout.
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_MAX_L 1024u

/**
 * @brief Flag of the constructors and of tf_age_bloom_choose(): the blocked
 * layout (k + l <= 32 slices as the lanes of 64-byte lines; see the file's
 * description). 0 is the classic layout. The blob records it (kind 2, flag
 * bit 0) and tf_age_bloom_get_info() reports it.
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_BLOCKED 1u

/**
 * @brief Flag of tf_age_bloom_choose() and tf_age_bloom_new_for() (classic
 * layout): choose the (k, l) with the fewest bits per element, however long
 * its queries. Without it the choice also bounds the query's cost: at most
 * ::TF_AGE_BLOOM_PROBE_BUDGET slices tested per absent key in expectation
 * (tf_age_bloom_expected_probes()), for at most 1.15x the memory of this
 * flag's choice at any rate from 1e-1 to 1e-6 (at 1e-3: k = 14, l = 36,
 * 28.05 bits per element and 5.91 probes, against k = 16, l = 139, 25.74
 * bits and 19.15 probes with this flag). Not recorded in the filter or its
 * blob; refused with ::TF_AGE_BLOOM_BLOCKED and by tf_age_bloom_new().
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_MIN_MEMORY 2u

/**
 * @brief The default chooser's bound on the expected number of slices a
 * query for an absent key tests, at the filter's worst moment (just before
 * a shift).
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_PROBE_BUDGET 6.0

/**
 * @brief What was fixed when a filter was created: its shape, seed and
 * flags. Filled by tf_age_bloom_get_info().
 *
 * A versioned struct: initialize it with ::TF_AGE_BLOOM_INFO_INIT; fields
 * are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_age_bloom_info {
    /** sizeof(tf_age_bloom_info) as the caller was compiled; set by
     *  ::TF_AGE_BLOOM_INFO_INIT. @since 0.1.0 */
    size_t size;
    /** Hash functions: bits set per insert, consecutive slices a key must
     *  match (classic 1..64; blocked k + l <= 32). @since 0.1.0 */
    uint32_t k;
    /** Slices beyond the first k: the window spans l generations. @since 0.1.0 */
    uint32_t l;
    /** Bits per slice (blocked: a multiple of 32). @since 0.1.0 */
    uint64_t slice_bits;
    /** Inserts per generation g: the slices shift every g inserts. @since 0.1.0 */
    uint64_t generation;
    /** The window in inserts, l * generation: every key among the last
     *  `capacity` inserts is reported present. @since 0.1.0 */
    uint64_t capacity;
    /** The hash seed. @since 0.1.0 */
    uint32_t seed;
    /** The flags the filter was created with (::TF_AGE_BLOOM_BLOCKED or 0). @since 0.1.0 */
    uint32_t flags;
} tf_age_bloom_info;

/**
 * @brief Initializer of ::tf_age_bloom_info: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_INFO_INIT \
    { sizeof(tf_age_bloom_info), 0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief The current state of a filter. Filled by tf_age_bloom_get_stats().
 *
 * A versioned struct: initialize it with ::TF_AGE_BLOOM_STATS_INIT; fields
 * are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_age_bloom_stats {
    /** sizeof(tf_age_bloom_stats) as the caller was compiled; set by
     *  ::TF_AGE_BLOOM_STATS_INIT. @since 0.1.0 */
    size_t size;
    /** Number of slices, k + l. @since 0.1.0 */
    uint64_t slices;
    /** Total bits of all slices (blocked: of all lines, unused lanes
     *  included). @since 0.1.0 */
    uint64_t bits;
    /** bits / capacity (l * generation). @since 0.1.0 */
    double bits_per_element;
    /** Inserts since creation or the last tf_age_bloom_clear(). @since 0.1.0 */
    uint64_t inserts;
    /** The false-positive rate for the measured fill (set bits / m) of every
     *  slice, by the dynamic program of tf_age_bloom_false_positive_rate():
     *  exact under the model of independent bits (classic layout), the
     *  conservative model of the blocked layout (blocked). @since 0.1.0 */
    double fpr_now;
} tf_age_bloom_stats;

/**
 * @brief Initializer of ::tf_age_bloom_stats: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_AGE_BLOOM_STATS_INIT \
    { sizeof(tf_age_bloom_stats), 0, 0, 0.0, 0, 0.0 }

/**
 * @brief Chooses the shape tf_age_bloom_new_for() uses for a target error
 * rate, without creating anything.
 *
 * Classic layout (flags 0): the (k, l) pair whose steady-state
 * false-positive rate (tf_age_bloom_false_positive_rate()) is at most
 * `error_rate` and whose absent queries test at most
 * ::TF_AGE_BLOOM_PROBE_BUDGET slices in expectation
 * (tf_age_bloom_expected_probes()), with the fewest bits per element of
 * capacity (larger l: less memory, longer queries; l is capped at 256);
 * with ::TF_AGE_BLOOM_MIN_MEMORY, the pair with the fewest bits whatever
 * its queries cost. Its slices leave the first k half full (`fill` = 0.5).
 * The time-limited filter uses the same pairs. The first call for a rate
 * takes up to a few milliseconds; the answer is remembered.
 *
 * Blocked layout (::TF_AGE_BLOOM_BLOCKED): the (k, l) with k + l in
 * {16, 32} and the fill ratio `fill` of a slice leaving the first k that
 * meet `error_rate` under the blocked layout's conservative model with the
 * fewest bits per element. The search takes tens of milliseconds the first
 * time a rate is asked for (the answer is remembered, for up to 256 rates).
 *
 * @param[in]  error_rate the target false-positive rate: in (0, 1) for the
 *                        classic layout, (0, 0.2] for the blocked one (near
 *                        1 its model is not conservative).
 * @param[in]  flags      0, ::TF_AGE_BLOOM_MIN_MEMORY or ::TF_AGE_BLOOM_BLOCKED.
 * @param[out] k          receives k (hash functions).
 * @param[out] l          receives l (slices beyond the first k).
 * @param[out] fill       receives the fill ratio of a slice when it leaves
 *                        the first k (0.5 for the classic layout); may be
 *                        NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             k or l is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT error_rate is NaN or out of its range,
 *                                 flags has an unknown bit, or both
 *                                 ::TF_AGE_BLOOM_MIN_MEMORY and
 *                                 ::TF_AGE_BLOOM_BLOCKED.
 * @retval TF_ERR_TOO_LARGE        no shape meets error_rate (classic: no pair
 *                                 with k <= 64; blocked: none with slices at
 *                                 least 10% full, below about 1e-18).
 * @retval TF_ERR_OUT_OF_MEMORY    the search's working memory could not be
 *                                 allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_choose(double error_rate, uint32_t flags, uint32_t *k, uint32_t *l, double *fill);

/**
 * @brief The exact steady-state false-positive rate of a classic filter
 * with parameters (k, l), at its peak just before a shift.
 *
 * A dynamic program over (slice, length of the current run of set bits)
 * with the fill ratios 1 - 2^-((i+1)/k) for the first k slices and 1/2
 * beyond. Also the worst case of the time-limited filter at a steady rate.
 *
 * @param[in]  k    hash functions, 1..::TF_AGE_BLOOM_MAX_K.
 * @param[in]  l    slices beyond the first k, 1..::TF_AGE_BLOOM_MAX_L.
 * @param[out] rate receives the rate, in [0, 1].
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             rate is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT k or l is out of range.
 * @retval TF_ERR_OUT_OF_MEMORY    the dynamic program's working memory
 *                                 could not be allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_false_positive_rate(uint32_t k, uint32_t l, double *rate);

/**
 * @brief Bits per element of capacity of a classic filter at steady state,
 * (k + l) k / (l ln 2).
 *
 * @param[in]  k    hash functions, 1..::TF_AGE_BLOOM_MAX_K.
 * @param[in]  l    slices beyond the first k, 1..::TF_AGE_BLOOM_MAX_L.
 * @param[out] bits receives the bits per element.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             bits is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT k or l is out of range.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_bits_per_element(uint32_t k, uint32_t l, double *bits);

/**
 * @brief The expected number of slices a query of a classic filter with
 * parameters (k, l) tests, at its worst moment (the fills of
 * tf_age_bloom_false_positive_rate()).
 *
 * A query looks for k consecutive slices holding the key's bit, starting
 * from the oldest k and jumping k slices towards the newest after a slice
 * without it (docs/age-bloom.md); each slice it tests is one random
 * memory read. Computed exactly by a dynamic program over the window being
 * tested and the matches carried into it: for an absent key, and for a
 * present key whose k slices are equally likely to be any of the l + 1
 * runs a key within the window occupies. The present count is at least k.
 *
 * @param[in]  k       hash functions, 1..::TF_AGE_BLOOM_MAX_K.
 * @param[in]  l       slices beyond the first k, 1..::TF_AGE_BLOOM_MAX_L.
 * @param[out] absent  receives the expected probes for an absent key; may
 *                     be NULL.
 * @param[out] present receives the expected probes for a present key; may
 *                     be NULL (it costs l + 1 times more to compute).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             absent and present are both NULL.
 * @retval TF_ERR_INVALID_ARGUMENT k or l is out of range.
 * @retval TF_ERR_OUT_OF_MEMORY    the dynamic program's working memory
 *                                 could not be allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_expected_probes(uint32_t k, uint32_t l, double *absent, double *present);

/**
 * @brief Creates a filter that remembers at least the last `capacity`
 * inserts with a false-positive rate of at most `error_rate`.
 *
 * (k, l) and the fill come from tf_age_bloom_choose() with the same
 * `error_rate` and `flags`; the generation is g = ceil(capacity / l).
 * Classic layout: slices of ceil(k * g / ln 2) bits (at least 64). Blocked
 * layout: slices of k * g / -ln(1 - fill) bits rounded up to a multiple of
 * 32; its blob is kind 2 with the blocked flag.
 *
 * @param[in]  capacity   the window in inserts, >= 1.
 * @param[in]  error_rate the target false-positive rate: in (0, 1), or
 *                        (0, 0.2] with ::TF_AGE_BLOOM_BLOCKED.
 * @param[in]  seed       the hash seed.
 * @param[in]  flags      0, ::TF_AGE_BLOOM_MIN_MEMORY or ::TF_AGE_BLOOM_BLOCKED.
 * @param[out] out        receives the new filter, owned by the caller
 *                        (tf_age_bloom_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT capacity is 0, error_rate out of range,
 *                                 an unknown flag bit, or both
 *                                 ::TF_AGE_BLOOM_MIN_MEMORY and
 *                                 ::TF_AGE_BLOOM_BLOCKED.
 * @retval TF_ERR_TOO_LARGE        no shape meets error_rate, or the slices
 *                                 would exceed 2^40 bits.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_new_for(uint64_t capacity, double error_rate, uint32_t seed, uint32_t flags,
                                      tf_age_bloom **out);

/**
 * @brief Creates an empty filter of k + l slices of `slice_bits` bits (the
 * low-level constructor).
 *
 * The generation is g = max(1, floor(slice_bits * ln 2 / k)) inserts (fill
 * ratio 1/2 when a slice leaves the first k) and the capacity l * g.
 * Blocked layout: `slice_bits` is rounded up to a multiple of 32 and the
 * generation computed from the rounded size (fill ratio 1/2, more than the
 * sizing of tf_age_bloom_new_for() would choose: the `fpr_now` of
 * tf_age_bloom_get_stats() reports the model's rate); its bits are
 * ceil((k + l) / 16) lines of 64 bytes per 32 bits of slice (unused lanes
 * included). tf_age_bloom_memory() adds one more 64-byte line (so that a
 * two-line block can start on a 128-byte boundary), the allocator's
 * 64-byte alignment slack (from 4 MiB on, rounding up to 4 KiB pages
 * instead), 40 bytes of bookkeeping per slice and the handle: 336 +
 * 40 (k + l) bytes beyond the lines in an x86-64 build, under 4 MiB.
 *
 * @param[in]  k          hash functions: classic 1..::TF_AGE_BLOOM_MAX_K;
 *                        blocked k >= 1 with k + l <= 32.
 * @param[in]  l          slices beyond the first k: classic
 *                        1..::TF_AGE_BLOOM_MAX_L; blocked l >= 1 with
 *                        k + l <= 32.
 * @param[in]  slice_bits bits per slice: classic 64..2^40; blocked 32..2^40.
 *                        Below the minimum: ::TF_ERR_INVALID_ARGUMENT;
 *                        above 2^40: ::TF_ERR_TOO_LARGE.
 * @param[in]  seed       the hash seed.
 * @param[in]  flags      ::TF_AGE_BLOOM_BLOCKED or 0 (::TF_AGE_BLOOM_MIN_MEMORY
 *                        is refused: the caller chose (k, l)).
 * @param[out] out        receives the new filter, owned by the caller
 *                        (tf_age_bloom_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT k or l out of range, slice_bits below 64
 *                                 (blocked: 32), or a flag other than
 *                                 ::TF_AGE_BLOOM_BLOCKED.
 * @retval TF_ERR_TOO_LARGE        slice_bits above 2^40.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_new(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, uint32_t flags,
                                  tf_age_bloom **out);

/**
 * @brief Destroys a filter and frees its memory.
 * @param[in] filter the filter; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_age_bloom_free(tf_age_bloom *filter);

/**
 * @brief Inserts a key, shifting the slices first when the generation is
 * full.
 *
 * @param[in] filter  the filter.
 * @param[in] key     the key's bytes; NULL only when key_len is 0.
 * @param[in] key_len the key's length in bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter is NULL, or key is NULL with key_len > 0.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_add(tf_age_bloom *filter, const void *key, size_t key_len);

/**
 * @brief Asks whether a key is among the last inserts.
 *
 * @param[in]  filter  the filter.
 * @param[in]  key     the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len the key's length in bytes.
 * @param[out] present receives 1 when the key is (probably) among the last
 *                     inserts, 0 when it is certainly not among the last
 *                     l * g.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter or present is NULL, or key is NULL with
 *                     key_len > 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_contains(const tf_age_bloom *filter, const void *key, size_t key_len, int *present);

/**
 * @brief De-duplication in one call: asks whether a key is present and
 * inserts it only when it was absent.
 *
 * @param[in]  filter      the filter.
 * @param[in]  key         the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len     the key's length in bytes.
 * @param[out] was_present receives what tf_age_bloom_contains() would have
 *                         said: 1 (a probable duplicate, not inserted) or 0
 *                         (inserted).
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter or was_present is NULL, or key is NULL with
 *                     key_len > 0.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_add_if_absent(tf_age_bloom *filter, const void *key, size_t key_len, int *was_present);

/**
 * @brief Batch form of tf_age_bloom_add(): adds keys[0 .. count) in order.
 *
 * The same filter as count calls of tf_age_bloom_add() in order. Classic
 * layout: the keys are hashed in groups of 8, and for each key the lines a
 * query of it would test first are prefetched together (the first two
 * slices of each window the query starts from, at most 8 lines: the path
 * of tf_age_bloom_contains()); the insert itself writes the k newest
 * slices, which that prefetch covers only where they overlap. The blocked
 * layout's batches are plain loops of single calls, each of which reads
 * one block. Every argument is checked before anything changes; count == 0
 * is a no-op (the arrays may then be NULL).
 *
 * @param[in,out] filter   the filter.
 * @param[in]     keys     `count` key pointers; keys[i] may be NULL only
 *                         when key_lens[i] is 0.
 * @param[in]     key_lens `count` key lengths in bytes.
 * @param[in]     count    the number of keys.
 * @retval TF_OK          success.
 * @retval TF_ERR_NULL    filter or an array is NULL (with count > 0), or
 *                        keys[i] is NULL with key_lens[i] > 0 (nothing
 *                        changed).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_add_batch(tf_age_bloom *filter, const void *const *keys, const size_t *key_lens,
                                        size_t count);

/**
 * @brief Batch form of tf_age_bloom_contains().
 *
 * The same answers as tf_age_bloom_contains() for keys[0 .. count), with
 * each group of 8 keys hashed and its likeliest lines prefetched before
 * the first is answered (classic layout). Every argument is checked
 * first; count == 0 is a no-op (the arrays may then be NULL).
 *
 * @param[in]  filter   the filter.
 * @param[in]  keys     `count` key pointers; keys[i] may be NULL only when
 *                      key_lens[i] is 0.
 * @param[in]  key_lens `count` key lengths in bytes.
 * @param[in]  count    the number of keys.
 * @param[out] present  receives `count` answers, 1 or 0, with the error
 *                      guarantee of tf_age_bloom_contains().
 * @retval TF_OK          success.
 * @retval TF_ERR_NULL    filter or an array is NULL (with count > 0), or
 *                        keys[i] is NULL with key_lens[i] > 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_contains_batch(const tf_age_bloom *filter, const void *const *keys,
                                             const size_t *key_lens, size_t count, int *present);

/**
 * @brief Batch form of tf_age_bloom_add_if_absent().
 *
 * The same answers and the same filter as tf_age_bloom_add_if_absent() for
 * keys[0 .. count) in order (a key repeated within the batch is present
 * from its second occurrence on), with each group of 8 keys prefetched
 * together (classic layout). Every argument is checked before anything
 * changes; count == 0 is a no-op.
 *
 * @param[in,out] filter      the filter.
 * @param[in]     keys        `count` key pointers; keys[i] may be NULL only
 *                            when key_lens[i] is 0.
 * @param[in]     key_lens    `count` key lengths in bytes.
 * @param[in]     count       the number of keys.
 * @param[out]    was_present receives `count` answers, as
 *                            tf_age_bloom_add_if_absent().
 * @retval TF_OK          success.
 * @retval TF_ERR_NULL    filter or an array is NULL (with count > 0), or
 *                        keys[i] is NULL with key_lens[i] > 0 (nothing
 *                        changed).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_add_if_absent_batch(tf_age_bloom *filter, const void *const *keys, const size_t *key_lens,
                                                  size_t count, int *was_present);

/**
 * @brief Forgets every key and resets the insert count; the shape stays.
 * @param[in] filter the filter.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL filter is NULL.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_clear(tf_age_bloom *filter);

/**
 * @brief Reports the current state: slices, bits, bits per element,
 * inserts and the false-positive rate for the measured fill.
 *
 * Costs O(bits / 64): `fpr_now` counts the set bits of every slice (the
 * blocked layout: a pass over the lanes, then its model, about a
 * millisecond).
 *
 * @param[in]     filter the filter.
 * @param[in,out] stats  a ::tf_age_bloom_stats initialized with
 *                       ::TF_AGE_BLOOM_STATS_INIT; receives the fields its
 *                       `size` covers.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT stats->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @retval TF_ERR_OUT_OF_MEMORY    the working memory of the `fpr_now`
 *                                 computation could not be allocated.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_get_stats(const tf_age_bloom *filter, tf_age_bloom_stats *stats);

/**
 * @brief Reports what was fixed at creation: k, l, slice bits, generation,
 * capacity (l * generation), seed and flags. O(1).
 *
 * @param[in]     filter the filter.
 * @param[in,out] info   a ::tf_age_bloom_info initialized with
 *                       ::TF_AGE_BLOOM_INFO_INIT; receives the fields its
 *                       `size` covers.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             filter or info is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT info->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_get_info(const tf_age_bloom *filter, tf_age_bloom_info *info);

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
TF_API tf_status tf_age_bloom_memory(const tf_age_bloom *filter, size_t *bytes);

/**
 * @brief The size of the filter's blob, in bytes (wire format kind 2;
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
TF_API tf_status tf_age_bloom_serialized_size(const tf_age_bloom *filter, size_t *size);

/**
 * @brief Writes the filter as a blob: wire format kind 2 (the blocked
 * layout sets flag bit 0), little-endian, checksummed; every slice and
 * counter (docs/wire-format.md).
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
TF_API tf_status tf_age_bloom_serialize(const tf_age_bloom *filter, void *buf, size_t capacity, size_t *written);

/**
 * @brief Creates a filter from a blob of tf_age_bloom_serialize() (either
 * layout).
 *
 * Validates the envelope, the checksum and every count and size before
 * allocating (the classic layout's bits past a slice's end as it reads the
 * slice, freeing it on failure): a hostile blob gets a status, never a
 * crash; it makes deserialize ask for at most twice its size plus 64 KiB
 * (SECURITY.md).
 *
 * @param[in]  buf     the blob.
 * @param[in]  len     its length in bytes.
 * @param[in]  options a ::tf_deserialize_options initialized with
 *                     ::TF_DESERIALIZE_OPTIONS_INIT, or NULL for the
 *                     defaults; `max_memory` caps what tf_age_bloom_memory()
 *                     of the new filter may report.
 * @param[out] out     receives the new filter, owned by the caller
 *                     (tf_age_bloom_free()).
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
 *                                    sets an unknown flag bit.
 * @retval TF_ERR_OUT_OF_MEMORY       an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_age_bloom_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                          tf_age_bloom **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_AGE_BLOOM_H */
