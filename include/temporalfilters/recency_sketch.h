/*
 * temporalfilters/recency_sketch.h - RecencySketch: "when did I last see this
 * key?" in fixed memory.
 *
 * A RecencySketch holds `depth` rows of `width` 64-bit timestamp cells, all 0
 * ("empty") at creation. Each key is hashed once (128-bit MurmurHash3) and
 * mapped to one cell per row. An update stores the maximum of the cell and
 * the new timestamp in each of the key's cells; a query returns the minimum
 * over the key's cells.
 *
 * ERROR GUARANTEE (one-sided): a query never returns a time older than the
 * key's true last update. It may return a newer time, when every one of the
 * key's cells was also written later by other keys. A key that was never
 * updated reads as TF_NEVER (0) unless all its cells are taken by other keys,
 * in which case it reads as the oldest of those times.
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
 * LAYOUTS. The standard layout keeps each row contiguous, so one key touches
 * `depth` cache lines. The blocked layout (TF_RECENCY_SKETCH_BLOCKED) puts all
 * of a key's cells in one 64-byte cache line: the table is split into lines of
 * 8 cells, a key picks one line and `depth` distinct cells inside it (depth
 * <= 8). It is faster when the table does not fit in cache, at the price of
 * a higher error for the same memory, because lines fill unevenly: sized for
 * the same target, a blocked sketch needs about 1.3x (p = 0.1), 3x
 * (p = 0.01) and 11x (p = 0.001) the cells of a standard one, so it suits
 * targets of about 1% and looser. README.md gives the measured error of
 * both, and tf_recency_sketch_dimensions() sizes each for its own error
 * model.
 *
 * TIME. Timestamps are in the caller's unit; 0 means never and is rejected as
 * an input. A clock that goes backwards is harmless: cells only ever grow, so
 * an older timestamp never erases a newer one, and pacing/TTL decisions stay
 * on the safe side.
 *
 * THREAD SAFETY. By default a sketch is single-threaded: no two calls on the
 * same sketch may overlap if either of them modifies it (concurrent queries,
 * serialize and the read-only getters are fine). Created with
 * TF_RECENCY_SKETCH_CONCURRENT, update, query, pace, ttl_insert,
 * ttl_maybe_live, error_estimate, memory, info, serialize and merge-as-source
 * may all be called concurrently from any number of threads without locks
 * (cells are updated with atomic compare-and-swap max). clear, merge-into and
 * free still need exclusive access. Different sketches are always independent.
 */
#ifndef TEMPORALFILTERS_RECENCY_SKETCH_H
#define TEMPORALFILTERS_RECENCY_SKETCH_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle. */
typedef struct tf_recency_sketch tf_recency_sketch;

/* Creation flags (bitwise OR). Any other bit is rejected. */
#define TF_RECENCY_SKETCH_CONCURRENT 0x1u /* lock-free, many-thread safe mode */
#define TF_RECENCY_SKETCH_BLOCKED 0x2u    /* one cache line per key (depth <= 8) */

/* Largest depth accepted: 32 rows in the standard layout, 8 when blocked. */
#define TF_RECENCY_SKETCH_MAX_DEPTH 32u
#define TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH 8u

/*
 * Creates an empty sketch of `depth` rows of `width` cells.
 *
 *  width  cells per row, >= 1. In the blocked layout the table holds
 *         width*depth cells rounded up to a multiple of 8.
 *  depth  rows (hash functions), 1..32; 1..8 with TF_RECENCY_SKETCH_BLOCKED.
 *  seed   hash seed; sketches merge only when their seeds are equal.
 *  flags  0 or an OR of TF_RECENCY_SKETCH_* flags.
 *  out    receives the new sketch, owned by the caller (tf_recency_sketch_free).
 *
 * Memory: 8 bytes per cell (width*depth*8 bytes) plus a small header.
 * Errors: TF_ERR_NULL (out), TF_ERR_INVALID_ARGUMENT (width or depth 0, depth
 * too large, unknown flag), TF_ERR_TOO_LARGE (width*depth*8 overflows the
 * address space), TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_recency_sketch_new(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags,
                                       tf_recency_sketch **out);

/*
 * Sizing helper: the smallest table (width, depth) whose probability of a
 * too-new answer, with `expected_keys` distinct keys updated within the
 * horizon you query about, is at most `too_new_probability` (see the formula
 * above; for the blocked layout the exact model of uneven lines is used).
 *
 *  expected_keys          distinct keys per horizon, >= 1.
 *  too_new_probability    target, in (0, 1).
 *  flags                  the flags the sketch will be created with (only
 *                         TF_RECENCY_SKETCH_BLOCKED changes the answer).
 *  width, depth           receive the dimensions; either may be NULL.
 *
 * Errors: TF_ERR_INVALID_ARGUMENT (0 keys, probability NaN/outside range,
 * unknown flag), TF_ERR_TOO_LARGE (no table within the limits meets the
 * target). Thread-safe.
 */
TF_API tf_status tf_recency_sketch_dimensions(uint64_t expected_keys, double too_new_probability, uint32_t flags,
                                              uint64_t *width, uint32_t *depth);

/* tf_recency_sketch_dimensions() followed by tf_recency_sketch_new(). */
TF_API tf_status tf_recency_sketch_new_for(uint64_t expected_keys, double too_new_probability, uint32_t seed,
                                           uint32_t flags, tf_recency_sketch **out);

/* Destroys a sketch. NULL is a no-op. Needs exclusive access. */
TF_API void tf_recency_sketch_free(tf_recency_sketch *sketch);

/*
 * Records that `key` was seen at time `now` (>= 1): every cell of the key
 * becomes max(cell, now). Older timestamps than already recorded are fine
 * (out-of-order streams); they never make a cell older.
 * Errors: TF_ERR_NULL (sketch, or key with key_len > 0),
 * TF_ERR_INVALID_ARGUMENT (now == 0).
 */
TF_API tf_status tf_recency_sketch_update(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now);

/*
 * Estimates the last time `key` was updated.
 *
 *  last_seen  receives the estimate: TF_NEVER (0) when the key was never
 *             updated (and no other key filled all its cells); otherwise a
 *             time >= the key's true last update (never older).
 *
 * Errors: TF_ERR_NULL (sketch, last_seen, or key with key_len > 0).
 */
TF_API tf_status tf_recency_sketch_query(const tf_recency_sketch *sketch, const void *key, size_t key_len,
                                         uint64_t *last_seen);

/*
 * Batch forms of update and query: the same results as calling
 * tf_recency_sketch_update / tf_recency_sketch_query for keys[0..count) in
 * order, but faster on large tables and across language bindings: the cells
 * of each group of keys are located and prefetched together, so that their
 * cache misses overlap, and the per-call overhead is paid once.
 *
 *  keys       array of `count` key pointers; keys[i] may be NULL only when
 *             key_lens[i] is 0.
 *  key_lens   array of `count` key lengths in bytes.
 *  times      (update) array of `count` timestamps, each >= 1.
 *  last_seen  (query) array that receives `count` estimates, as in
 *             tf_recency_sketch_query.
 *
 * Every argument is checked before any cell changes, so a failed batch
 * changes nothing. count == 0 is a no-op (the arrays may then be NULL).
 * Errors: TF_ERR_NULL (sketch, an array, or keys[i] with key_lens[i] > 0),
 * TF_ERR_INVALID_ARGUMENT (a zero timestamp); the message names the index.
 * Thread safety as for the single-key calls.
 */
TF_API tf_status tf_recency_sketch_update_batch(tf_recency_sketch *sketch, const void *const *keys,
                                                const size_t *key_lens, size_t count, const uint64_t *times);
TF_API tf_status tf_recency_sketch_query_batch(const tf_recency_sketch *sketch, const void *const *keys,
                                               const size_t *key_lens, size_t count, uint64_t *last_seen);

/*
 * Request pacing: grants `key` at time `now` when no grant is recorded for it
 * within the last `interval` time units (as estimated), i.e. when
 * last + interval <= now, and records the grant at `now`. A denied request
 * records nothing.
 *
 *  granted        receives 1 when granted, 0 when denied.
 *  next_allowed   (may be NULL) receives the earliest time the key may be
 *                 granted again: now + interval after a grant, last + interval
 *                 after a denial (saturating at UINT64_MAX).
 *
 * Because the estimate is never older than the truth, a key is never granted
 * twice within `interval`. A key can be denied too long when other keys fill
 * its cells. Each grant moves at least one cell from a time <= now - interval
 * to `now`, so every cell enables at most one grant per `interval`: whatever
 * the number of keys, the whole sketch grants at most width*depth requests
 * in any period of length `interval` (also in concurrent mode, where the
 * claim is a compare-and-swap). Size the sketch to keep that under your
 * service's capacity.
 *
 * In concurrent mode both promises hold under any interleaving: two racing
 * requests for the same key are never both granted within `interval`. A
 * request that races with another thread's write to the same cells may be
 * denied where some serial order would have granted it (never the reverse).
 *
 * Errors: TF_ERR_NULL (sketch, granted, or key with key_len > 0),
 * TF_ERR_INVALID_ARGUMENT (now == 0 or interval == 0).
 */
TF_API tf_status tf_recency_sketch_pace(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now,
                                        uint64_t interval, int *granted, uint64_t *next_allowed);

/*
 * TTL prefilter, insert side: records that `key` was stored in a cache at
 * `now` with time-to-live `ttl`, by storing its expiry time now + ttl
 * (saturating). Use a sketch either for TTL expiries or for last-seen times,
 * not both: the two kinds of value would mix.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (now == 0 or ttl == 0).
 */
TF_API tf_status tf_recency_sketch_ttl_insert(tf_recency_sketch *sketch, const void *key, size_t key_len, uint64_t now,
                                              uint64_t ttl);

/*
 * TTL prefilter, lookup side: may `key` still be live at `now`?
 *
 *  maybe_live  receives 0 when the key is certainly expired or was never
 *              inserted (skip the cache), 1 when it may be live (ask the
 *              cache). An answer of 0 is never wrong; 1 can be wrong when
 *              other keys with later expiries share all of the key's cells.
 *  expires_at  (may be NULL) receives the estimated expiry time, >= the true
 *              one, or TF_NEVER for a key never inserted.
 *
 * An entry inserted at t with ttl is live while now < t + ttl.
 * Errors: TF_ERR_NULL (sketch, maybe_live, or key), TF_ERR_INVALID_ARGUMENT
 * (now == 0).
 */
TF_API tf_status tf_recency_sketch_ttl_maybe_live(const tf_recency_sketch *sketch, const void *key, size_t key_len,
                                                  uint64_t now, int *maybe_live, uint64_t *expires_at);

/*
 * Merges `src` into `dst` by cell-wise maximum, so that `dst` answers as if
 * it had seen both streams. Commutative, associative and idempotent
 * (merging a sketch into itself changes nothing).
 * Errors: TF_ERR_NULL, TF_ERR_INCOMPATIBLE (width, depth, layout or seed
 * differ; `dst` is left unchanged). The concurrency mode may differ.
 * Needs exclusive access to `dst` unless it is concurrent; `src` may be read
 * concurrently.
 */
TF_API tf_status tf_recency_sketch_merge(tf_recency_sketch *dst, const tf_recency_sketch *src);

/* Empties every cell (all keys read as never seen). Errors: TF_ERR_NULL.
 * Needs exclusive access. */
TF_API tf_status tf_recency_sketch_clear(tf_recency_sketch *sketch);

/*
 * Estimated probability that a key whose true last update is at or before
 * `since` reads as newer than `since`, measured from the fraction of cells
 * newer than `since` (since = 0: the probability that a never-seen key reads
 * as seen). Scans the whole table: O(width*depth).
 * Errors: TF_ERR_NULL.
 */
TF_API tf_status tf_recency_sketch_error_estimate(const tf_recency_sketch *sketch, uint64_t since, double *probability);

/* Bytes of memory held by the sketch (table and header). Errors: TF_ERR_NULL. */
TF_API tf_status tf_recency_sketch_memory(const tf_recency_sketch *sketch, size_t *bytes);

/*
 * The sketch's parameters, as given at creation; any out-parameter may be
 * NULL. `cells` receives the number of timestamp cells actually allocated.
 * Errors: TF_ERR_NULL (sketch).
 */
TF_API tf_status tf_recency_sketch_info(const tf_recency_sketch *sketch, uint64_t *width, uint32_t *depth,
                                        uint32_t *seed, uint32_t *flags, uint64_t *cells);

/*
 * Serialization (wire format kind 1; see README.md "Wire format"). The blob
 * holds the parameters, seed, flags and every cell, little-endian, with a
 * checksum.
 *
 * tf_recency_sketch_serialized_size: receives the exact blob size in `size`.
 * tf_recency_sketch_serialize: writes the blob into `buf` of `capacity` bytes
 *   and its length into `written`. When `capacity` is too small it returns
 *   TF_ERR_BUFFER_TOO_SMALL, writes nothing into `buf`, and stores the needed
 *   size in `written`.
 * tf_recency_sketch_deserialize: checks length, magic, version, kind, flags,
 *   checksum and every invariant before allocating, then creates a new sketch
 *   owned by the caller. Errors: TF_ERR_NULL, TF_ERR_TRUNCATED,
 *   TF_ERR_BAD_MAGIC, TF_ERR_UNSUPPORTED_VERSION, TF_ERR_WRONG_KIND,
 *   TF_ERR_CHECKSUM, TF_ERR_CORRUPT, TF_ERR_OUT_OF_MEMORY. Never allocates
 *   more than the blob's own size plus a constant.
 */
TF_API tf_status tf_recency_sketch_serialized_size(const tf_recency_sketch *sketch, size_t *size);
TF_API tf_status tf_recency_sketch_serialize(const tf_recency_sketch *sketch, void *buf, size_t capacity,
                                             size_t *written);
TF_API tf_status tf_recency_sketch_deserialize(const void *buf, size_t len, tf_recency_sketch **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_RECENCY_SKETCH_H */
