/**
 * @file temporalfilters/recency_window.h
 * @brief Recency window: "how many inserts ago was this key last seen?"
 * over the last W inserts of a stream, within (1 + eps), or "not within
 * the window".
 *
 * The structures of Holland, Wirth and Zobel, "Recency Queries with
 * Succinct Representation" (ISAAC 2020), in one handle with three modes
 * chosen at creation (tf_recency_window_options::mode):
 *
 *  - ::TF_RECENCY_WINDOW_HISTORICAL (the default), HistoricalMembership:
 *    levels of sliding dictionaries of (signature, equivalence-class ID),
 *    level l holding blocks of 2^l consecutive inserts; entries move up a
 *    level lazily as they age. Memory close to (1 + eps)(log2(2^64 / W) +
 *    log2(1/eps)) bits per window item with exact signatures.
 *  - ::TF_RECENCY_WINDOW_EXACT, ExactCuckoo: one table of timestamps
 *    modulo 2^c - 1, the least such number >= 2W + 3 (between 2W and
 *    4W), lazily deleted by a scan cursor: exact answers.
 *  - ::TF_RECENCY_WINDOW_OPTIMAL_SM, OptimalSM: one table of block IDs,
 *    blocks of D inserts: answers at most D - 1 too small.
 *
 * The tables are two-way cuckoo tables of 4-slot buckets whose slots are
 * packed to the entry's width, the signature stored quotiented.
 * docs/recency-window.md explains the algorithm and the measurements.
 *
 * **Recency.** The stream is the sequence of tf_recency_window_insert()
 * calls (every insert form counts one per key). The recency of a key is
 * the number of inserts made since its last insert: 0 when the newest
 * insert was that key, W - 1 for the oldest insert of a window of W. A
 * key inserted r inserts ago, 0 <= r < W, is never reported out of the
 * window; a key whose last insert is at least W + S - 1 inserts ago (S is
 * the slack: 2^L for HistoricalMembership's top level L, D for OptimalSM,
 * 1 for ExactCuckoo), or a key never inserted, is always reported as
 * ::TF_RECENCY_WINDOW_NOT_IN_WINDOW; in between either answer may come.
 *
 * **The promise per mode**, for a key of true recency r < W answered e:
 *  - HistoricalMembership: e <= r <= (1 + eps) e (eps = 1 / inv_eps):
 *    never too large, and too small by at most eps times the answer.
 *  - ExactCuckoo: e = r.
 *  - OptimalSM: e <= r <= e + D - 1.
 *
 * **Signatures.** With `delta` 0 (the default) a key is its 64-bit hash
 * (one 128-bit MurmurHash3 per key): one query meets another key's equal
 * signature with a probability of at most about W / 2^64 (6e-14 at W =
 * 1e6, 6e-8 at the largest window, 2^40); over a whole window some pair of
 * keys shares a signature with a probability of about W^2 / 2^65 (3e-8 at
 * W = 1e6, near certainty at 2^40), and such a pair is one key to the
 * structure (the answer is the newer's). With `delta` in (0, 1), signatures are
 * cut to f = ceil(log2(held / delta)) bits, 1 to 64 (held: W +
 * floor(1.5 floor(W eps)) + 1 for HistoricalMembership, W + D for
 * OptimalSM, W for ExactCuckoo), so that a key out of the window
 * (or a key whose own entry is older) matches another key's entry with a
 * probability of at most delta: it may then get a wrong estimate or an
 * estimate instead of ::TF_RECENCY_WINDOW_NOT_IN_WINDOW. An entry that
 * finds no room in its table (a kick chain failed with the stash full:
 * never observed, counted in tf_recency_window_stats::lost) is forgotten.
 *
 * **Failures.** A call that fails leaves the structure exactly as it was
 * and writes no out-parameter (serialize's size report aside).
 *
 * **Thread safety.** Not internally synchronised: query, query_batch,
 * get_info, get_stats, get_level, memory, serialized_size and serialize
 * are read-only and may run concurrently with each other; insert,
 * insert_report, their batches, clear and free need exclusive access.
 * Different structures are independent.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_RECENCY_WINDOW_H
#define TEMPORALFILTERS_RECENCY_WINDOW_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A recency window (opaque handle).
 *
 * Created by tf_recency_window_new() or tf_recency_window_deserialize();
 * destroyed by tf_recency_window_free().
 * @since 0.1.0
 */
typedef struct tf_recency_window tf_recency_window;

/**
 * @brief Mode: HistoricalMembership, answers within (1 + eps) (the
 * default).
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_HISTORICAL 0u

/**
 * @brief Mode: ExactCuckoo, exact answers.
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_EXACT 1u

/**
 * @brief Mode: OptimalSM, answers at most D - 1 too small (D: the
 * options' `block`).
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_OPTIMAL_SM 2u

/**
 * @brief The answer of a query for a key that is not within the window
 * (never inserted, or inserted too long ago): UINT64_MAX.
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_NOT_IN_WINDOW UINT64_MAX

/**
 * @brief The largest window W a structure may have (2^40 inserts).
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_MAX_WINDOW ((uint64_t)1 << 40)

/**
 * @brief The largest inverse error 1/eps (2^20).
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_MAX_INV_EPS ((uint64_t)1 << 20)

/**
 * @brief The options of tf_recency_window_new().
 *
 * A versioned struct: initialize it with ::TF_RECENCY_WINDOW_OPTIONS_INIT
 * (usable defaults), then change what you need. Options added by a later
 * version are refused (::TF_ERR_INVALID_ARGUMENT) by a library that does
 * not know them unless they are left at their defaults.
 * @since 0.1.0
 */
typedef struct tf_recency_window_options {
    /** sizeof(tf_recency_window_options) as the caller was compiled; set by
     *  ::TF_RECENCY_WINDOW_OPTIONS_INIT. @since 0.1.0 */
    size_t size;
    /** The window W, in inserts: 1 .. ::TF_RECENCY_WINDOW_MAX_WINDOW.
     *  Default 65536. @since 0.1.0 */
    uint64_t window;
    /** The inverse relative error 1/eps, an integer in 1 ..
     *  ::TF_RECENCY_WINDOW_MAX_INV_EPS (in every mode). HistoricalMembership
     *  answers within (1 + 1/inv_eps); OptimalSM derives its default block
     *  from it. Default 8. @since 0.1.0 */
    uint64_t inv_eps;
    /** OptimalSM's block D, in inserts: 1 .. window, or 0 (the default)
     *  for max(1, window / inv_eps) (absolute error below eps W). Must be 0
     *  in the other modes. @since 0.1.0 */
    uint64_t block;
    /** A cap in bytes on what tf_recency_window_memory() will report: a
     *  larger structure is refused with ::TF_ERR_TOO_LARGE before anything
     *  is allocated. 0 (the default): no cap. @since 0.1.0 */
    uint64_t max_memory;
    /** 0 (the default) for exact 64-bit signatures, or the target
     *  false-match probability in (0, 1) of approximate signatures
     *  (shorter entries; see the file's documentation). @since 0.1.0 */
    double delta;
    /** ::TF_RECENCY_WINDOW_HISTORICAL (the default),
     *  ::TF_RECENCY_WINDOW_EXACT or ::TF_RECENCY_WINDOW_OPTIMAL_SM.
     *  @since 0.1.0 */
    uint32_t mode;
    /** The hash seed. Default 0. @since 0.1.0 */
    uint32_t seed;
    /** Flags: none is defined yet, it must be 0. @since 0.1.0 */
    uint32_t flags;
} tf_recency_window_options;

/**
 * @brief Initializer of ::tf_recency_window_options: every option at its
 * default (window 65536, inv_eps 8, block 0, no memory cap, exact
 * signatures, HistoricalMembership, seed 0, flags 0).
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_OPTIONS_INIT \
    { sizeof(tf_recency_window_options), 65536, 8, 0, 0, 0.0, TF_RECENCY_WINDOW_HISTORICAL, 0, 0 }

/**
 * @brief What was fixed when a structure was created (the options, with
 * the defaults resolved). Filled by tf_recency_window_get_info().
 *
 * A versioned struct: initialize it with ::TF_RECENCY_WINDOW_INFO_INIT;
 * fields are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_recency_window_info {
    /** sizeof(tf_recency_window_info) as the caller was compiled; set by
     *  ::TF_RECENCY_WINDOW_INFO_INIT. @since 0.1.0 */
    size_t size;
    /** The window W, in inserts. @since 0.1.0 */
    uint64_t window;
    /** The inverse relative error 1/eps. @since 0.1.0 */
    uint64_t inv_eps;
    /** OptimalSM's block D (the default resolved); 0 in the other modes.
     *  @since 0.1.0 */
    uint64_t block;
    /** The memory cap in bytes (0: none). @since 0.1.0 */
    uint64_t max_memory;
    /** The target false-match probability (0: exact signatures).
     *  @since 0.1.0 */
    double delta;
    /** The mode (`TF_RECENCY_WINDOW_*`). @since 0.1.0 */
    uint32_t mode;
    /** The hash seed. @since 0.1.0 */
    uint32_t seed;
    /** The flags the structure was created with. @since 0.1.0 */
    uint32_t flags;
    /** Bits of a signature (64 when exact). @since 0.1.0 */
    uint32_t signature_bits;
    /** Levels (sliding dictionaries): L + 1 for HistoricalMembership, 1
     *  otherwise. @since 0.1.0 */
    uint32_t levels;
    /** The slack S in inserts: a key whose last insert is W + S - 1 or more
     *  inserts ago is always out of the window. UINT32_MAX when S is
     *  2^32 - 1 or more (only windows above 2^32 inserts, with a large
     *  block or 1/eps, have such a slack); S in full is then the
     *  block_width of the last level (tf_recency_window_get_level()).
     *  @since 0.1.0 */
    uint32_t slack;
} tf_recency_window_info;

/**
 * @brief Initializer of ::tf_recency_window_info: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_INFO_INIT \
    { sizeof(tf_recency_window_info), 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief The state of a structure. Filled by tf_recency_window_get_stats().
 *
 * A versioned struct: initialize it with ::TF_RECENCY_WINDOW_STATS_INIT;
 * fields are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_recency_window_stats {
    /** sizeof(tf_recency_window_stats) as the caller was compiled; set by
     *  ::TF_RECENCY_WINDOW_STATS_INIT. @since 0.1.0 */
    size_t size;
    /** Inserts since creation or the last clear. @since 0.1.0 */
    uint64_t inserts;
    /** Inserts the window covers: min(inserts, W). @since 0.1.0 */
    uint64_t window_items;
    /** Levels (tf_recency_window_get_level() reads each). @since 0.1.0 */
    uint64_t levels;
    /** Entries held over every level (stale ones not yet met by a scan
     *  included). @since 0.1.0 */
    uint64_t items;
    /** What tf_recency_window_memory() reports, in bytes. @since 0.1.0 */
    uint64_t memory;
    /** Bits of memory per window item: 8 memory / window_items (0 before
     *  the first insert). @since 0.1.0 */
    double bits_per_window_item;
    /** Entries moved up a level. @since 0.1.0 */
    uint64_t promotions;
    /** Entries dropped out of the window. @since 0.1.0 */
    uint64_t expired;
    /** Entries met by a newer entry of their key (the older dropped).
     *  @since 0.1.0 */
    uint64_t merged;
    /** Entries dropped for want of room (a failed kick chain with a full
     *  stash; never observed). @since 0.1.0 */
    uint64_t lost;
    /** Entries in the tables' stashes (kick chains that failed).
     *  @since 0.1.0 */
    uint64_t stashed;
} tf_recency_window_stats;

/**
 * @brief Initializer of ::tf_recency_window_stats: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_STATS_INIT \
    { sizeof(tf_recency_window_stats), 0, 0, 0, 0, 0, 0.0, 0, 0, 0, 0, 0 }

/**
 * @brief One level (sliding dictionary) of a structure. Filled by
 * tf_recency_window_get_level().
 *
 * A versioned struct: initialize it with ::TF_RECENCY_WINDOW_LEVEL_INIT;
 * fields are only ever added at the end.
 * @since 0.1.0
 */
typedef struct tf_recency_window_level {
    /** sizeof(tf_recency_window_level) as the caller was compiled; set by
     *  ::TF_RECENCY_WINDOW_LEVEL_INIT. @since 0.1.0 */
    size_t size;
    /** Slots of its table (4 per bucket, an even number of buckets). @since 0.1.0 */
    uint64_t slots;
    /** Entries it holds (stash included). @since 0.1.0 */
    uint64_t items;
    /** The most live entries it was sized for. @since 0.1.0 */
    uint64_t capacity;
    /** Inserts per class (block) of the level: 2^l for level l of
     *  HistoricalMembership, 1 for ExactCuckoo, D for OptimalSM.
     *  @since 0.1.0 */
    uint64_t block_width;
    /** items / slots. @since 0.1.0 */
    double load;
    /** Bits of one packed entry (stored signature remainder, way bit and
     *  class field). @since 0.1.0 */
    uint32_t entry_bits;
    /** Bits of the class field. @since 0.1.0 */
    uint32_t class_bits;
    /** Entries in its stash. @since 0.1.0 */
    uint32_t stashed;
    /** 0 (reserved; keeps the struct free of padding). @since 0.1.0 */
    uint32_t reserved;
} tf_recency_window_level;

/**
 * @brief Initializer of ::tf_recency_window_level: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_RECENCY_WINDOW_LEVEL_INIT \
    { sizeof(tf_recency_window_level), 0, 0, 0, 0, 0.0, 0, 0, 0, 0 }

/**
 * @brief Creates an empty structure.
 *
 * @param[in]  options a ::tf_recency_window_options initialized with
 *                     ::TF_RECENCY_WINDOW_OPTIONS_INIT, or NULL for the
 *                     defaults.
 * @param[out] out     receives the new structure, owned by the caller
 *                     (tf_recency_window_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT options->size is below the struct's first
 *                                 version or above 4096 (not initialized),
 *                                 it sets a field this library does not
 *                                 know, window is 0, inv_eps is 0 or above
 *                                 ::TF_RECENCY_WINDOW_MAX_INV_EPS, mode is
 *                                 unknown, block is above window (OptimalSM)
 *                                 or not 0 (other modes), delta is not 0 and
 *                                 not in (0, 1) (NaN included), or flags is
 *                                 not 0.
 * @retval TF_ERR_TOO_LARGE        window is above
 *                                 ::TF_RECENCY_WINDOW_MAX_WINDOW, or the
 *                                 structure would hold more than a nonzero
 *                                 max_memory.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_new(const tf_recency_window_options *options, tf_recency_window **out);

/**
 * @brief The bytes a structure of these options would hold (what
 * tf_recency_window_memory() of it reports), without creating it.
 *
 * @param[in]  options as for tf_recency_window_new() (NULL: the defaults);
 *                     max_memory is not applied.
 * @param[out] bytes   receives the number of bytes.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             bytes is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT as for tf_recency_window_new().
 * @retval TF_ERR_TOO_LARGE        window is above
 *                                 ::TF_RECENCY_WINDOW_MAX_WINDOW.
 * @retval TF_ERR_OUT_OF_MEMORY    the small plan of the levels (one record
 *                                 per level) could not be allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_memory_for(const tf_recency_window_options *options, size_t *bytes);

/**
 * @brief Destroys a structure and frees its memory.
 * @param[in] window the structure; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_recency_window_free(tf_recency_window *window);

/**
 * @brief Appends a key to the stream (the next insert).
 *
 * Amortized O(levels): the key's entry goes to the lowest level, and a
 * constant number of cells of every level is scanned for entries to move
 * up or drop.
 *
 * @param[in] window  the structure.
 * @param[in] key     the key's bytes; NULL only when key_len is 0.
 * @param[in] key_len the key's length in bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window is NULL, or key is NULL with key_len > 0.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_insert(tf_recency_window *window, const void *key, size_t key_len);

/**
 * @brief Asks how many inserts ago a key was last inserted.
 *
 * Probes the levels from the lowest (newest) up and answers from the first
 * that holds the key. The answer is within the mode's promise (the file's
 * documentation): HistoricalMembership e <= r <= (1 + eps) e, ExactCuckoo
 * exact, OptimalSM e <= r <= e + D - 1.
 *
 * @param[in]  window  the structure.
 * @param[in]  key     the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len the key's length in bytes.
 * @param[out] recency receives the estimated recency in inserts (0: the
 *                     newest insert was this key), or
 *                     ::TF_RECENCY_WINDOW_NOT_IN_WINDOW.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window or recency is NULL, or key is NULL with
 *                     key_len > 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_query(const tf_recency_window *window, const void *key, size_t key_len,
                                         uint64_t *recency);

/**
 * @brief Insert-then-report: the key's previous recency, then the key
 * appended to the stream, with one hash (the call a cache-admission policy
 * makes).
 *
 * The same as tf_recency_window_query() followed by
 * tf_recency_window_insert().
 *
 * @param[in]  window   the structure.
 * @param[in]  key      the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len  the key's length in bytes.
 * @param[out] previous receives what tf_recency_window_query() answered
 *                      just before this insert: the key's recency then,
 *                      or ::TF_RECENCY_WINDOW_NOT_IN_WINDOW.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window or previous is NULL, or key is NULL with
 *                     key_len > 0 (nothing inserted).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_insert_report(tf_recency_window *window, const void *key, size_t key_len,
                                                 uint64_t *previous);

/**
 * @brief Batch form of tf_recency_window_insert().
 *
 * The same structure as calling tf_recency_window_insert() for keys[0 ..
 * count) in order, with every level's buckets of each group of keys
 * prefetched together so that their cache misses overlap. Every argument
 * is checked before anything changes; count == 0 is a no-op (the arrays
 * may then be NULL).
 *
 * @param[in] window   the structure.
 * @param[in] keys     `count` key pointers; keys[i] may be NULL only when
 *                     key_lens[i] is 0.
 * @param[in] key_lens `count` key lengths in bytes.
 * @param[in] count    the number of keys.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window or an array is NULL, or keys[i] is NULL with
 *                     key_lens[i] > 0 (nothing inserted).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_insert_batch(tf_recency_window *window, const void *const *keys,
                                                const size_t *key_lens, size_t count);

/**
 * @brief Batch form of tf_recency_window_query().
 *
 * The same answers as calling tf_recency_window_query() for keys[0 ..
 * count), with every level's buckets of each group of keys prefetched
 * together. Every argument is checked first; count == 0 is a no-op.
 *
 * @param[in]  window   the structure.
 * @param[in]  keys     `count` key pointers; keys[i] may be NULL only when
 *                      key_lens[i] is 0.
 * @param[in]  key_lens `count` key lengths in bytes.
 * @param[in]  count    the number of keys.
 * @param[out] recency  receives `count` answers, as
 *                      tf_recency_window_query().
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window or an array is NULL, or keys[i] is NULL with
 *                     key_lens[i] > 0.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_query_batch(const tf_recency_window *window, const void *const *keys,
                                               const size_t *key_lens, size_t count, uint64_t *recency);

/**
 * @brief Batch form of tf_recency_window_insert_report().
 *
 * The same answers and the same structure as calling
 * tf_recency_window_insert_report() for keys[0 .. count) in order (a key
 * repeated within the batch reports its earlier occurrence in it), with
 * every level's buckets of each group of keys prefetched together. Every
 * argument is checked before anything changes; count == 0 is a no-op.
 *
 * @param[in]  window   the structure.
 * @param[in]  keys     `count` key pointers; keys[i] may be NULL only when
 *                      key_lens[i] is 0.
 * @param[in]  key_lens `count` key lengths in bytes.
 * @param[in]  count    the number of keys.
 * @param[out] previous receives `count` answers, as
 *                      tf_recency_window_insert_report().
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window or an array is NULL, or keys[i] is NULL with
 *                     key_lens[i] > 0 (nothing inserted).
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_insert_report_batch(tf_recency_window *window, const void *const *keys,
                                                       const size_t *key_lens, size_t count, uint64_t *previous);

/**
 * @brief Forgets every key and restarts the stream: the tables stay
 * allocated and empty, the counters of stats restart at 0.
 *
 * @param[in] window the structure.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window is NULL.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_clear(tf_recency_window *window);

/**
 * @brief Reports what was fixed at creation (the options, defaults
 * resolved). O(1).
 *
 * @param[in]     window the structure.
 * @param[in,out] info   a ::tf_recency_window_info initialized with
 *                       ::TF_RECENCY_WINDOW_INFO_INIT; receives the fields
 *                       its `size` covers.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             window or info is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT info->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_get_info(const tf_recency_window *window, tf_recency_window_info *info);

/**
 * @brief Reports the current state: inserts, entries, memory, bits per
 * window item, promotions, expiries and losses. O(levels).
 *
 * @param[in]     window the structure.
 * @param[in,out] stats  a ::tf_recency_window_stats initialized with
 *                       ::TF_RECENCY_WINDOW_STATS_INIT.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             window or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT stats->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_get_stats(const tf_recency_window *window, tf_recency_window_stats *stats);

/**
 * @brief Reports one level: its table's slots, entries, capacity, block
 * width and entry layout. O(1).
 *
 * @param[in]     window the structure.
 * @param[in]     i      the level: 0 (the newest inserts) to the `levels`
 *                       of tf_recency_window_get_stats() minus 1.
 * @param[in,out] level  a ::tf_recency_window_level initialized with
 *                       ::TF_RECENCY_WINDOW_LEVEL_INIT.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             window or level is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT there is no level i, or level->size is
 *                                 not initialized.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_get_level(const tf_recency_window *window, uint64_t i,
                                             tf_recency_window_level *level);

/**
 * @brief Reports the bytes of memory the structure holds (the handle, its
 * levels, every table and the scan's scratch space); fixed at creation.
 *
 * @param[in]  window the structure.
 * @param[out] bytes  receives the number of bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL window or bytes is NULL.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_memory(const tf_recency_window *window, size_t *bytes);

/**
 * @brief The size of the structure's blob, in bytes (wire format kind 6;
 * docs/wire-format.md).
 *
 * @param[in]  window the structure.
 * @param[out] size   receives the blob's size.
 * @retval TF_OK            success.
 * @retval TF_ERR_NULL      window or size is NULL.
 * @retval TF_ERR_TOO_LARGE the size overflows size_t.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_serialized_size(const tf_recency_window *window, size_t *size);

/**
 * @brief Writes the structure as a blob: wire format kind 6,
 * little-endian, checksummed; the options, the stream position, the
 * counters and every table's packed slots, stash and scan cursor, so that
 * a copy answers and goes on exactly as the original.
 *
 * @param[in]  window   the structure.
 * @param[out] buf      the buffer; may be NULL when capacity is 0.
 * @param[in]  capacity the buffer's size in bytes.
 * @param[out] written  receives the bytes written; on
 *                      ::TF_ERR_BUFFER_TOO_SMALL, the size needed.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             window or written is NULL, or buf is NULL
 *                                 while capacity is large enough.
 * @retval TF_ERR_BUFFER_TOO_SMALL capacity is below the blob's size; nothing
 *                                 is written into buf.
 * @retval TF_ERR_TOO_LARGE        the size overflows size_t.
 * @note Read-only.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_serialize(const tf_recency_window *window, void *buf, size_t capacity,
                                             size_t *written);

/**
 * @brief Creates a structure from a blob of tf_recency_window_serialize().
 *
 * Validates the envelope, the checksum, the options and every table's
 * shape against the bytes of the blob before allocating, then every entry
 * (each signature within its width and in a bucket it may occupy, no key
 * twice in a level, the counts and cursors consistent). The structure it
 * makes holds at most the blob's size plus 1 MiB (the fixed part and each
 * table's alignment): a hostile blob gets a status, never a crash or a
 * larger allocation.
 *
 * @param[in]  buf     the blob.
 * @param[in]  len     its length in bytes.
 * @param[in]  options a ::tf_deserialize_options initialized with
 *                     ::TF_DESERIALIZE_OPTIONS_INIT, or NULL for the
 *                     defaults; `max_memory` caps what
 *                     tf_recency_window_memory() of the new structure may
 *                     report.
 * @param[out] out     receives the new structure, owned by the caller
 *                     (tf_recency_window_free()).
 * @retval TF_OK                      success.
 * @retval TF_ERR_NULL                buf or out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT    options->size is not initialized, or
 *                                    options sets a field this library does
 *                                    not know.
 * @retval TF_ERR_TOO_LARGE           the structure would hold more than
 *                                    options->max_memory bytes (nothing is
 *                                    allocated).
 * @retval TF_ERR_TRUNCATED           the blob is shorter than its header says.
 * @retval TF_ERR_BAD_MAGIC           the blob does not start with "TFLT".
 * @retval TF_ERR_UNSUPPORTED_VERSION the format version is unknown.
 * @retval TF_ERR_WRONG_KIND          the blob holds another structure.
 * @retval TF_ERR_CHECKSUM            the checksum does not match.
 * @retval TF_ERR_CORRUPT             a field breaks the structure's
 *                                    invariants, or the blob sets an
 *                                    unknown flag bit.
 * @retval TF_ERR_OUT_OF_MEMORY       an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_window_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                               tf_recency_window **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_RECENCY_WINDOW_H */
