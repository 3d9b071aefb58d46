/**
 * @file temporalfilters/recency_sketch.h
 * @brief RecencySketch: "when did I last see this key?" in fixed memory.
 *
 * A RecencySketch holds `depth` rows of `width` 64-bit timestamp cells, all 0
 * ("empty") at creation. Each key is hashed once (128-bit MurmurHash3) and
 * mapped to one cell per row. An update stores the maximum of the cell and
 * the new timestamp in each of the key's cells; a query returns the minimum
 * over the key's cells.
 *
 * **Error guarantee (one-sided).** A query never returns a time older than
 * the key's true last update: cells only grow, so nothing the sketch does
 * makes an answer older. It may return a newer time, when every one of the
 * key's cells was also written later by other keys (in concurrent mode, a
 * pace request that was denied after losing a race may also have raised
 * some cells; see tf_recency_sketch_pace()). A key that was never updated
 * reads as ::TF_NEVER (0) unless all its cells are taken by other keys, in
 * which case it reads as the oldest of those times.
 *
 * The probability that a key whose true last update is at or before time `h`
 * reads as newer than `h` is, for the standard layout with n distinct keys
 * updated after `h`,
 *
 *     P(too new) = (1 - (1 - 1/width)^n)^depth  ~=  (1 - e^(-n/width))^depth
 *
 * tf_recency_sketch_dimensions() inverts this for a target probability, and
 * tf_recency_sketch_error_estimate() measures it from the sketch's occupancy.
 *
 * **Layouts.** The standard layout keeps each row contiguous, so one key
 * touches `depth` cache lines. The blocked layout (::TF_RECENCY_SKETCH_BLOCKED)
 * puts all of a key's cells in one 64-byte cache line: the table is split
 * into lines of 8 cells, a key picks one line and `depth` distinct cells
 * inside it (depth <= 8). It is faster when the table does not fit in cache,
 * at the price of a higher error for the same memory, because lines fill
 * unevenly: sized for the same target, a blocked sketch needs about 1.3x
 * (p = 0.1), 3x (p = 0.01) and 11x (p = 0.001) the cells of a standard one,
 * so it suits targets of about 1% and looser. docs/recency-sketch.md gives
 * the measured error of both, and tf_recency_sketch_dimensions() sizes each
 * for its own error model.
 *
 * **Time.** Timestamps are in the caller's unit; 0 means never and is
 * rejected as an input. A clock that goes backwards is harmless: cells only
 * ever grow, so an older timestamp never erases a newer one, and pacing/TTL
 * decisions stay on the safe side.
 *
 * **Thread safety.** By default a sketch is single-threaded: no two calls on
 * the same sketch may overlap if either of them modifies it. The calls that
 * only read it (query, query_batch, ttl_maybe_live, error_estimate, memory,
 * get_info, serialized_size, serialize, and being the source of a merge)
 * may overlap each other. Created with ::TF_RECENCY_SKETCH_CONCURRENT,
 * update, query (and their batches), pace, ttl_insert, ttl_maybe_live,
 * error_estimate, memory, get_info, serialized_size, serialize, being the
 * source of a merge and being its destination may all be called
 * concurrently from any number of threads without locks (each cell takes
 * its maximum with an atomic compare-and-swap; a merge into a concurrent
 * sketch does so cell by cell, so a concurrent query may see some cells
 * merged and others not yet). clear and free still need exclusive access.
 * Different sketches are always independent.
 *
 * The algorithm, its error model and the wire format: docs/recency-sketch.md
 * and docs/wire-format.md.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_RECENCY_SKETCH_H
#define TEMPORALFILTERS_RECENCY_SKETCH_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A RecencySketch (opaque handle).
 *
 * Created by tf_recency_sketch_new(), tf_recency_sketch_new_for() or
 * tf_recency_sketch_deserialize(); destroyed by tf_recency_sketch_free().
 * @since 0.1.0
 */
typedef struct tf_recency_sketch tf_recency_sketch;

/**
 * @brief Creation flag: the lock-free mode, safe for many threads at once.
 *
 * Cells are read and written with atomic operations; see the file's thread
 * safety notes for which calls may then overlap.
 * @since 0.1.0
 */
#define TF_RECENCY_SKETCH_CONCURRENT 0x1u

/**
 * @brief Creation flag: the blocked layout, all of a key's cells in one
 * 64-byte cache line (depth <= ::TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH).
 * @since 0.1.0
 */
#define TF_RECENCY_SKETCH_BLOCKED 0x2u

/**
 * @brief The largest depth (rows) of the standard layout.
 * @since 0.1.0
 */
#define TF_RECENCY_SKETCH_MAX_DEPTH 32u

/**
 * @brief The largest depth of the blocked layout (the cells of a cache line).
 * @since 0.1.0
 */
#define TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH 8u

/**
 * @brief What a sketch was created with, from tf_recency_sketch_get_info().
 *
 * A versioned struct (docs/conventions.md): initialize it with
 * ::TF_RECENCY_SKETCH_INFO_INIT before the call.
 * @since 0.1.0
 */
typedef struct tf_recency_sketch_info {
    /** sizeof(tf_recency_sketch_info) as the caller was compiled; set by
     *  ::TF_RECENCY_SKETCH_INFO_INIT. @since 0.1.0 */
    size_t size;
    /** Cells per row, as given at creation. @since 0.1.0 */
    uint64_t width;
    /** Timestamp cells actually allocated: width * depth, rounded up to a
     *  multiple of 8 in the blocked layout. @since 0.1.0 */
    uint64_t cells;
    /** Rows (cells per key), as given at creation. @since 0.1.0 */
    uint32_t depth;
    /** The hash seed. @since 0.1.0 */
    uint32_t seed;
    /** The creation flags (`TF_RECENCY_SKETCH_*`). @since 0.1.0 */
    uint32_t flags;
} tf_recency_sketch_info;

/**
 * @brief Initializer of ::tf_recency_sketch_info: `size` set, every other
 * field 0.
 * @since 0.1.0
 */
#define TF_RECENCY_SKETCH_INFO_INIT \
    { sizeof(tf_recency_sketch_info), 0, 0, 0, 0, 0 }

/**
 * @brief Creates an empty sketch of `depth` rows of `width` cells.
 *
 * Memory (what tf_recency_sketch_memory() reports): the sketch object
 * (152 bytes in an x86-64 build of this version), plus 8 bytes per
 * allocated cell (info.cells: width * depth, rounded up to a multiple of 8
 * in the blocked layout), plus 64 bytes of alignment slack. When the cells
 * take 4 MiB or more, the table is mapped instead (on 2 MiB-aligned
 * transparent huge pages) and rounded up to whole 4 KiB pages, with no
 * slack.
 *
 * @param[in]  width  cells per row, >= 1. In the blocked layout the table
 *                    holds width * depth cells rounded up to a multiple of 8.
 * @param[in]  depth  rows (hash functions), 1 .. ::TF_RECENCY_SKETCH_MAX_DEPTH;
 *                    1 .. ::TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH with
 *                    ::TF_RECENCY_SKETCH_BLOCKED.
 * @param[in]  seed   hash seed; sketches merge only when their seeds are equal.
 * @param[in]  flags  0 or a bitwise OR of `TF_RECENCY_SKETCH_*` flags.
 * @param[out] out    receives the new sketch, owned by the caller (free it
 *                    with tf_recency_sketch_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT width or depth is 0, depth is too large,
 *                                 or flags has an unknown bit.
 * @retval TF_ERR_TOO_LARGE        the table would take more than SIZE_MAX / 2
 *                                 bytes: more than SIZE_MAX / 16 cells
 *                                 (width * depth, rounded up to a multiple
 *                                 of 8 in the blocked layout).
 * @retval TF_ERR_OUT_OF_MEMORY    the table could not be allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_new(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags,
                                       tf_recency_sketch **out);

/**
 * @brief Sizing helper: the smallest table meeting a target error.
 *
 * Gives the (width, depth) with the fewest cells whose probability of a
 * too-new answer, with `expected_keys` distinct keys updated within the
 * horizon you query about, is at most `too_new_probability` (the formula of
 * this file's description; for the blocked layout the exact model of uneven
 * lines is used). Nothing is allocated.
 *
 * @param[in]  expected_keys        distinct keys per horizon, >= 1.
 * @param[in]  too_new_probability  the target, in (0, 1).
 * @param[in]  flags                the flags the sketch will be created with
 *                                  (only ::TF_RECENCY_SKETCH_BLOCKED changes
 *                                  the answer).
 * @param[out] width                receives the cells per row; may be NULL.
 * @param[out] depth                receives the rows; may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_INVALID_ARGUMENT expected_keys is 0, the probability is NaN
 *                                 or outside (0, 1), or flags has an unknown bit.
 * @retval TF_ERR_TOO_LARGE        no table within the limits meets the target.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_dimensions(uint64_t expected_keys, double too_new_probability, uint32_t flags,
                                              uint64_t *width, uint32_t *depth);

/**
 * @brief Creates a sketch sized for a target error: tf_recency_sketch_dimensions()
 * followed by tf_recency_sketch_new().
 *
 * @param[in]  expected_keys        distinct keys per horizon, >= 1.
 * @param[in]  too_new_probability  the target probability of a too-new answer,
 *                                  in (0, 1).
 * @param[in]  seed                 hash seed.
 * @param[in]  flags                0 or a bitwise OR of `TF_RECENCY_SKETCH_*` flags.
 * @param[out] out                  receives the new sketch, owned by the caller.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT as for tf_recency_sketch_dimensions().
 * @retval TF_ERR_TOO_LARGE        no table within the limits meets the target.
 * @retval TF_ERR_OUT_OF_MEMORY    the table could not be allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_new_for(uint64_t expected_keys, double too_new_probability, uint32_t seed,
                                           uint32_t flags, tf_recency_sketch **out);

/**
 * @brief Destroys a sketch and frees its memory.
 * @param[in] sketch  the sketch; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_recency_sketch_free(tf_recency_sketch *sketch);

/**
 * @brief Records that `key` was seen at time `now`.
 *
 * Every cell of the key becomes max(cell, now). Timestamps older than those
 * already recorded are fine (out-of-order streams): they never make a cell
 * older.
 *
 * @param[in,out] sketch   the sketch.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length in bytes.
 * @param[in]     now      the time of the update, >= 1.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch is NULL, or key is NULL with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Exclusive; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_update(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now);

/**
 * @brief Estimates the last time `key` was updated.
 *
 * @param[in]  sketch     the sketch.
 * @param[in]  key        the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len    the key's length in bytes.
 * @param[out] last_seen  receives the estimate: ::TF_NEVER (0) when the key
 *                        was never updated (and no other key filled all its
 *                        cells); otherwise a time >= the key's true last
 *                        update (never older).
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL sketch or last_seen is NULL, or key is NULL with key_len > 0.
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_query(const tf_recency_sketch *sketch, const void *key, size_t key_len,
                                         uint64_t *last_seen);

/**
 * @brief Batch form of tf_recency_sketch_update().
 *
 * The same result as calling tf_recency_sketch_update() for keys[0 .. count)
 * in order, but faster on large tables and across language bindings: the
 * cells of each group of keys are located and prefetched together, so that
 * their cache misses overlap, and the per-call overhead is paid once.
 * Every argument is checked before any cell changes, so a failed batch
 * changes nothing; the error message names the failing index. count == 0 is
 * a no-op (the arrays may then be NULL).
 *
 * @param[in,out] sketch    the sketch.
 * @param[in]     keys      `count` key pointers; keys[i] may be NULL only when
 *                          key_lens[i] is 0.
 * @param[in]     key_lens  `count` key lengths in bytes.
 * @param[in]     count     the number of keys.
 * @param[in]     times     `count` timestamps, each >= 1.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch or an array is NULL, or keys[i] is
 *                                 NULL with key_lens[i] > 0.
 * @retval TF_ERR_INVALID_ARGUMENT a timestamp is 0.
 * @note As tf_recency_sketch_update().
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_update_batch(tf_recency_sketch *sketch, const void *const *keys,
                                                const size_t *key_lens, size_t count, const uint64_t *times);

/**
 * @brief Batch form of tf_recency_sketch_query().
 *
 * The same results as calling tf_recency_sketch_query() for keys[0 .. count)
 * in order, with the cache misses of several keys overlapped (see
 * tf_recency_sketch_update_batch()). Every argument is checked first.
 * count == 0 is a no-op (the arrays may then be NULL).
 *
 * @param[in]  sketch     the sketch.
 * @param[in]  keys       `count` key pointers; keys[i] may be NULL only when
 *                        key_lens[i] is 0.
 * @param[in]  key_lens   `count` key lengths in bytes.
 * @param[in]  count      the number of keys.
 * @param[out] last_seen  receives `count` estimates, as tf_recency_sketch_query().
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL sketch or an array is NULL, or keys[i] is NULL with
 *                     key_lens[i] > 0.
 * @note As tf_recency_sketch_query().
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_query_batch(const tf_recency_sketch *sketch, const void *const *keys,
                                               const size_t *key_lens, size_t count, uint64_t *last_seen);

/**
 * @brief Request pacing: grants `key` at most once per `interval`.
 *
 * With `last` the key's estimate (tf_recency_sketch_query()), the request
 * is granted when the key reads as never seen (last = ::TF_NEVER) or when
 * last + interval <= now; a grant is recorded at `now` (every cell of the
 * key becomes max(cell, now)). In the default mode a denied request records
 * nothing. In concurrent mode a request found due first raises the key's
 * cells other than its oldest to `now`, then claims the oldest; when the
 * claim loses a race and the key, read again, is no longer due, the
 * request is denied and the raised cells stay raised. That can only make
 * answers newer (this key's, and those of keys sharing the cells), never
 * older.
 *
 * Because the estimate is never older than the truth, a key is never granted
 * twice within `interval`. A key can be denied too long when other keys fill
 * its cells. Each grant moves at least one cell from a time <= now - interval
 * to `now`, so every cell enables at most one grant per `interval`: whatever
 * the number of keys, the whole sketch grants at most info.cells requests
 * (width * depth in the standard layout, rounded up to a multiple of 8 in
 * the blocked one; tf_recency_sketch_get_info()) in any period of length
 * `interval` (also in concurrent mode, where the claim is a
 * compare-and-swap). Size the sketch to keep that under your service's
 * capacity.
 *
 * In concurrent mode both promises hold under any interleaving: two racing
 * requests for the same key are never both granted within `interval`. A
 * request that races with another thread's write to the same cells may be
 * denied where some serial order would have granted it (never the reverse).
 *
 * @param[in,out] sketch        the sketch.
 * @param[in]     key           the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len       the key's length in bytes.
 * @param[in]     now           the time of the request, >= 1.
 * @param[in]     interval      the least time between two grants of a key, >= 1.
 * @param[out]    granted       receives 1 when granted, 0 when denied.
 * @param[out]    next_allowed  receives the earliest time the key may be
 *                              granted again: now + interval after a grant,
 *                              last + interval after a denial (saturating at
 *                              ::TF_RETRY_NEVER); may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch or granted is NULL, or key is NULL
 *                                 with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now or interval is 0.
 * @note Exclusive; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_pace(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now,
                                        uint64_t interval, int *granted, uint64_t *next_allowed);

/**
 * @brief TTL prefilter, insert side: records that `key` was stored in a cache
 * at `now` with time-to-live `ttl`.
 *
 * Stores the key's expiry time now + ttl (saturating at ::TF_RETRY_NEVER).
 * Use a sketch either for TTL expiries or for last-seen times, not both: the
 * two kinds of value would mix.
 *
 * @param[in,out] sketch   the sketch.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length in bytes.
 * @param[in]     now      the time of the insert, >= 1.
 * @param[in]     ttl      the entry's time-to-live, >= 1.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch is NULL, or key is NULL with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now or ttl is 0.
 * @note Exclusive; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_ttl_insert(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now,
                                              uint64_t ttl);

/**
 * @brief TTL prefilter, lookup side: may `key` still be live at `now`?
 *
 * An entry inserted at t with ttl is live while now < t + ttl.
 *
 * @param[in]  sketch      the sketch.
 * @param[in]  key         the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len     the key's length in bytes.
 * @param[in]  now         the time of the lookup, >= 1.
 * @param[out] maybe_live  receives 0 when the key is certainly expired or was
 *                         never inserted (skip the cache), 1 when it may be
 *                         live (ask the cache). An answer of 0 is never
 *                         wrong; 1 can be wrong when other keys with later
 *                         expiries share all of the key's cells, or when
 *                         an earlier insert of the same key had a later
 *                         expiry than its latest one (the sketch keeps the
 *                         latest expiry of any insert).
 * @param[out] expires_at  receives the estimated expiry time, >= the true
 *                         one; ::TF_NEVER for a key never inserted unless
 *                         other keys filled all its cells (then the oldest
 *                         of their expiries); may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch or maybe_live is NULL, or key is NULL
 *                                 with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_ttl_maybe_live(const tf_recency_sketch *sketch, const void *key, size_t key_len,
                                                  uint64_t now, int *maybe_live, uint64_t *expires_at);

/**
 * @brief Merges `src` into `dst` by cell-wise maximum.
 *
 * Afterwards `dst` answers as if it had seen both streams. Commutative,
 * associative and idempotent (merging a sketch into itself changes nothing).
 * The concurrency mode of the two may differ.
 *
 * @param[in,out] dst  the sketch merged into.
 * @param[in]     src  the sketch merged from; unchanged.
 * @retval TF_OK               success.
 * @retval TF_ERR_NULL         dst or src is NULL.
 * @retval TF_ERR_INCOMPATIBLE width, depth, layout or seed differ (`dst` is
 *                             left unchanged).
 * @note Exclusive on `dst` unless `dst` is concurrent (its cells then take
 *       the maximum with atomic compare-and-swap, and other threads may use
 *       it meanwhile); `src` is only read: it may be read concurrently, and
 *       written concurrently only when it is concurrent.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_merge(tf_recency_sketch *dst, const tf_recency_sketch *src);

/**
 * @brief Empties every cell: all keys read as never seen.
 * @param[in,out] sketch  the sketch.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL sketch is NULL.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_clear(tf_recency_sketch *sketch);

/**
 * @brief Measures the probability of a too-new answer.
 *
 * The estimated probability that a key whose true last update is at or
 * before `since` reads as newer than `since`, measured from the fraction of
 * cells newer than `since` (since = 0: the probability that a never-seen key
 * reads as seen). Scans the whole table: O(info.cells), i.e. width * depth
 * cells (rounded up to a multiple of 8 in the blocked layout).
 *
 * @param[in]  sketch       the sketch.
 * @param[in]  since        the horizon; 0 for never-seen keys.
 * @param[out] probability  receives the estimate, in [0, 1].
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL sketch or probability is NULL.
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_error_estimate(const tf_recency_sketch *sketch, uint64_t since, double *probability);

/**
 * @brief The memory the sketch holds (table, alignment and header).
 * @param[in]  sketch  the sketch.
 * @param[out] bytes   receives the size in bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL sketch or bytes is NULL.
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_memory(const tf_recency_sketch *sketch, size_t *bytes);

/**
 * @brief What the sketch was created with: width, the cells allocated,
 * depth, seed and flags. O(1).
 *
 * Writes only the first info->size bytes (docs/conventions.md, "Versioned
 * structs"); nothing on failure.
 *
 * @param[in]     sketch  the sketch.
 * @param[in,out] info    initialized with ::TF_RECENCY_SKETCH_INFO_INIT;
 *                        receives the fields.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch or info is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT info->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_get_info(const tf_recency_sketch *sketch, tf_recency_sketch_info *info);

/**
 * @brief The exact size of the sketch's serialization.
 * @param[in]  sketch  the sketch.
 * @param[out] size    receives the blob's size in bytes.
 * @retval TF_OK            success.
 * @retval TF_ERR_NULL      sketch or size is NULL.
 * @retval TF_ERR_TOO_LARGE the size overflows size_t; not expected for this
 *                          structure, whose table is kept under SIZE_MAX / 2
 *                          bytes at creation and deserialization.
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_serialized_size(const tf_recency_sketch *sketch, size_t *size);

/**
 * @brief Serializes the sketch (wire format kind 1, docs/wire-format.md).
 *
 * The blob holds the parameters, seed, flags and every cell, little-endian,
 * with a checksum; equal sketches give equal blobs.
 *
 * @param[in]  sketch    the sketch.
 * @param[out] buf       receives the blob; may be NULL when capacity is 0.
 * @param[in]  capacity  the size of buf in bytes.
 * @param[out] written   receives the blob's length; when capacity is too
 *                       small, the size needed.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             sketch or written is NULL, or buf is NULL
 *                                 with enough capacity.
 * @retval TF_ERR_BUFFER_TOO_SMALL capacity is too small: nothing is written
 *                                 into buf and the needed size is stored in
 *                                 written.
 * @retval TF_ERR_TOO_LARGE        the size overflows size_t; not expected
 *                                 for this structure (see
 *                                 tf_recency_sketch_serialized_size()).
 * @note Read-only; concurrent-safe with ::TF_RECENCY_SKETCH_CONCURRENT (the
 *       blob then holds each cell as it was at some moment of the call).
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_serialize(const tf_recency_sketch *sketch, void *buf, size_t capacity,
                                             size_t *written);

/**
 * @brief Creates a sketch from a blob written by tf_recency_sketch_serialize().
 *
 * Checks the length, magic, version, kind, payload length, checksum, flags
 * and every invariant, in that order, before allocating anything, then
 * creates a new sketch owned by the caller. Never allocates more than the
 * blob's own size plus 64 KiB (SECURITY.md), nor more than
 * options->max_memory: the
 * sketch's memory (as tf_recency_sketch_memory() will report it) is
 * computed from the blob's shape first.
 *
 * @param[in]  buf      the blob.
 * @param[in]  len      its length in bytes.
 * @param[in]  options  a ::tf_deserialize_options initialized with
 *                      ::TF_DESERIALIZE_OPTIONS_INIT, or NULL for the defaults.
 * @param[out] out      receives the new sketch, owned by the caller.
 * @retval TF_OK                      success.
 * @retval TF_ERR_NULL                buf or out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT    options->size is below the struct's
 *                                    first version or above 4096 (not
 *                                    initialized), or options sets a field
 *                                    this library version does not know
 *                                    (a newer caller's option not left at
 *                                    its default).
 * @retval TF_ERR_TOO_LARGE           the sketch would hold more than
 *                                    options->max_memory bytes.
 * @retval TF_ERR_TRUNCATED           the blob is shorter than the 28-byte
 *                                    envelope, or shorter than its payload
 *                                    length says.
 * @retval TF_ERR_BAD_MAGIC           the blob does not start with "TFLT".
 * @retval TF_ERR_UNSUPPORTED_VERSION the format version is unknown.
 * @retval TF_ERR_WRONG_KIND          the blob holds another structure.
 * @retval TF_ERR_CHECKSUM            the checksum does not match.
 * @retval TF_ERR_CORRUPT             bytes follow the checksum, the blob sets
 *                                    an unknown flag bit, or a field breaks
 *                                    the sketch's invariants.
 * @retval TF_ERR_OUT_OF_MEMORY       the table could not be allocated.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_recency_sketch_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                               tf_recency_sketch **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_RECENCY_SKETCH_H */
