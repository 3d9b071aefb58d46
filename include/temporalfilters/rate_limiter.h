/*
 * temporalfilters/rate_limiter.h - sliding-window rate limiter: "may this
 * key make another request now?"
 *
 * Each key may make at most `limit` requests per `window` time units. Two
 * modes:
 *
 *  - BUCKETED (default; the seed's algorithm): the window is split into
 *    window / bucket_width buckets; a key's state is a fixed ring of bucket
 *    counts plus a running total. A bucket leaves the window when
 *    floor(now / bucket_width) - window / bucket_width reaches it, so a
 *    permit may leave up to bucket_width - 1 time units early. The promise:
 *    never more than `limit` grants in any interval of length
 *    window - bucket_width + 1; in an interval of the full window length up
 *    to 2 * limit under adversarial traffic (a burst at the end of a bucket
 *    and another as it leaves). On random traffic the excess over the exact
 *    mode is a few percent with 10 buckets (README.md has the measured
 *    figures; the seed estimates buckets / 2 percent false positives).
 *    Memory: 47 bytes per record for 10 buckets and keys of up to 16 bytes
 *    (25 + 2 * (buckets + 1) in general; longer keys are stored apart), in
 *    a table kept 76-85% full: 55-62 bytes per key from about 10,000 keys
 *    up (below that the small tables have more spare room: 72 at 1,000).
 *  - EXACT (TF_RATE_LIMITER_EXACT): a key keeps the times of its last
 *    `limit` grants; never more than `limit` grants in any half-open interval
 *    (t - window, t]. Memory: a 33-byte record plus 8 * limit + 16 bytes
 *    for its ring of grant times.
 *
 * Decisions report allowed/denied, the permits remaining in the window, and
 * the earliest time at which the same request would be allowed (for a
 * Retry-After header). A GLOBAL limit can cap all keys together; a key with
 * its own limit (an override) is still held to the global limit.
 *
 * Keys live in a hash table keyed by their bytes (sharded: 64 shards, each
 * with its own lock). A key is idle once every permit it took has left the
 * window (its last request is a window old); idle keys are reclaimed by
 * sweeps that visit a few slots at a time, never a full scan: 4 slots of
 * the key's shard when a new key is inserted, and 8 slots of another shard
 * (round robin) every 16th request of a shard. A reclaimed key starts
 * afresh; since another key's newer time may reclaim it while its own
 * clock is behind, each shard remembers the latest time up to which a key
 * it reclaimed could still hold permits (its reclaim horizon): a key not
 * tracked that asks before that time is denied until then (retry_at = the
 * horizon), so a key's clock running behind never earns it extra permits.
 *
 * An optional maximum number of tracked keys bounds memory. When it is
 * reached, a new key first reclaims an idle key (its shard's next 16 slots,
 * then 16 slots of every other shard whose lock is free); when none is
 * found it is denied (TF_RATE_LIMITER_FULL_DENY, the default: fail closed,
 * retry_at = UINT64_MAX) or admitted without being tracked
 * (TF_RATE_LIMITER_FULL_ALLOW: fail open, still held to the global limit);
 * counters say how often. After a search that found nothing, the next 63
 * new keys only look at their own shard.
 *
 * TIME: `now` in the caller's unit (window and bucket_width in the same
 * unit), >= 1. A clock that goes backwards is clamped per key (and for the
 * global window) to the latest time that key has seen: nothing is forgotten
 * early and nothing is corrupted.
 *
 * THREAD SAFETY: every function may be called concurrently from any number
 * of threads on the same limiter, except _free (exclusive). Decisions on
 * the same key are linearizable.
 */
#ifndef TEMPORALFILTERS_RATE_LIMITER_H
#define TEMPORALFILTERS_RATE_LIMITER_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_rate_limiter tf_rate_limiter;

/* Creation flags. */
#define TF_RATE_LIMITER_EXACT 0x1u      /* exact mode (no over-admission) */
#define TF_RATE_LIMITER_FULL_ALLOW 0x2u /* admit untracked new keys when full */

/* Limits: per-key limits up to 65535 requests per window in bucketed mode
 * (2^20 in exact mode); at most 4096 buckets per window. */
#define TF_RATE_LIMITER_MAX_KEY_LIMIT 65535u
#define TF_RATE_LIMITER_MAX_EXACT_LIMIT 1048576u
#define TF_RATE_LIMITER_MAX_BUCKETS 4096u

/*
 * Creates a limiter: each key at most `limit` requests per `window`.
 *  limit         requests per window and key, >= 1 (see the limits above).
 *  window        length of the window in the caller's time unit, >= 1.
 *  bucket_width  bucketed mode: width of a bucket; must divide window, and
 *                window / bucket_width <= 4096. Ignored (may be 0) in
 *                exact mode.
 *  flags         0 or TF_RATE_LIMITER_EXACT | TF_RATE_LIMITER_FULL_ALLOW.
 *  out           receives the limiter, owned by the caller.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (zero limit or window,
 * bucket width 0 or not dividing the window, too many buckets, limit too
 * large, unknown flag), TF_ERR_OUT_OF_MEMORY. Thread-safe.
 */
TF_API tf_status tf_rate_limiter_new(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t flags,
                                     tf_rate_limiter **out);

/* Destroys a limiter; NULL is a no-op. Needs exclusive access. */
TF_API void tf_rate_limiter_free(tf_rate_limiter *limiter);

/*
 * A global limit over all keys together, in the same window: at most
 * `limit` permits granted in total (0 removes it). Requests are then
 * granted only when both the key and the global window allow them; the
 * remaining count is the smaller of the two, and retry_at the later.
 * Setting it starts an empty global window (the keys' own windows are
 * kept). In exact mode the global window keeps `limit` timestamps (8 bytes
 * each, limit <= 2^24). Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT,
 * TF_ERR_OUT_OF_MEMORY (nothing changed).
 */
TF_API tf_status tf_rate_limiter_set_global_limit(tf_rate_limiter *limiter, uint64_t limit);

/*
 * Gives `key` its own limit (an override of the default; 0 removes the
 * override). Overrides persist while the key is idle or reclaimed. A key
 * with an override is still held to the global limit. Lowering a key's
 * limit below what it holds denies it until enough permits leave (exact
 * mode keeps its newest grants that fit). A bucketed key with an override
 * costs a lookup in the override map on each request.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (limit above the mode's
 * maximum), TF_ERR_OUT_OF_MEMORY.
 */
TF_API tf_status tf_rate_limiter_set_key_limit(tf_rate_limiter *limiter, const void *key, size_t key_len,
                                               uint64_t limit);

/* At most `max_keys` keys tracked at once (0: no bound). Errors: TF_ERR_NULL. */
TF_API tf_status tf_rate_limiter_set_max_keys(tf_rate_limiter *limiter, uint64_t max_keys);

/*
 * Asks for `n` permits for `key` at `now` (>= 1) and takes them when allowed.
 * Like the seed, the key's window is first brought to `now` (granted or
 * not: a later call with an earlier time is clamped to it); a denied
 * request takes nothing.
 *  allowed     receives 1 when granted, 0 when denied (nothing taken).
 *  remaining   (may be NULL) permits left to the key in the window after the
 *              decision (a denied request takes nothing), bounded by what
 *              is left in the global window when one is set.
 *  retry_at    (may be NULL) 0 when granted; otherwise the earliest time at
 *              which the same request would be granted if nothing else
 *              happened (a Retry-After of retry_at - now), or UINT64_MAX
 *              when it never can (n above the key's limit, or a full table
 *              that denies new keys).
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (now == 0, n == 0),
 * TF_ERR_OUT_OF_MEMORY (the table could not grow; nothing changed).
 */
TF_API tf_status tf_rate_limiter_acquire(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                         uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/*
 * The same as `count` calls of tf_rate_limiter_acquire(keys[i], key_lens[i],
 * times[i], n, &allowed[i], &remaining[i], &retry_at[i]) in order, but the
 * table lines of the next keys are fetched while one key is decided, so
 * that their cache misses overlap: for a server that gathers the requests
 * of one event-loop tick, several times the throughput of single calls on
 * tables larger than the CPU's caches (README.md). `remaining` and
 * `retry_at` may be NULL; otherwise every array holds `count` entries.
 * keys[i] may be NULL only when key_lens[i] is 0.
 * Errors (checked before any decision, so a failed call changes nothing):
 * TF_ERR_NULL (limiter, keys, key_lens, times or allowed NULL, or a NULL
 * key with a length), TF_ERR_INVALID_ARGUMENT (a time of 0, n == 0),
 * TF_ERR_OUT_OF_MEMORY (decisions before the failing key stand). count 0
 * does nothing. Thread-safe like acquire; the batch is not atomic (other
 * threads' calls may interleave between its keys).
 */
TF_API tf_status tf_rate_limiter_acquire_batch(tf_rate_limiter *limiter, const void *const *keys,
                                               const size_t *key_lens, size_t count, const uint64_t *times, uint64_t n,
                                               int *allowed, uint64_t *remaining, uint64_t *retry_at);

/* The decision acquire() would make now, without changing anything: no
 * permit taken, no clock moved, no key created or reclaimed (a full table
 * is looked at, not swept). Same arguments and errors. */
TF_API tf_status tf_rate_limiter_peek(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                      uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/* Gives back up to `n` permits the key took (the most recent first), also
 * to the global window (the same buckets, or grant times, as the key's, if
 * they are still in it). Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT
 * (now == 0). A key not tracked is a no-op. */
TF_API tf_status tf_rate_limiter_refund(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                        uint64_t n);

/* Forgets the key's requests (its override stays). Errors: TF_ERR_NULL. */
TF_API tf_status tf_rate_limiter_reset(tf_rate_limiter *limiter, const void *key, size_t key_len);

/*
 * Counters; any out-parameter may be NULL.
 *  keys            keys tracked now.
 *  reclaimed       idle keys reclaimed so far.
 *  denied_full     requests of new keys denied because the table was full.
 *  allowed_full    requests of new keys admitted untracked because it was full.
 *  bytes           memory held.
 * Errors: TF_ERR_NULL.
 */
TF_API tf_status tf_rate_limiter_stats(tf_rate_limiter *limiter, uint64_t *keys, uint64_t *reclaimed,
                                       uint64_t *denied_full, uint64_t *allowed_full, size_t *bytes);

/*
 * Serialization (wire format kind 4): the parameters, global window,
 * overrides and every tracked key's state, so a restarted service forgets
 * nobody who is limited. serialize takes every lock of the limiter, so the
 * snapshot is one consistent moment (other threads' calls wait meanwhile);
 * the size may change between serialized_size and serialize, in which case
 * serialize returns TF_ERR_BUFFER_TOO_SMALL with the new size. Keys and
 * overrides are written in increasing order of their bytes: equal states
 * give equal blobs. Same contract as the other structures otherwise.
 */
TF_API tf_status tf_rate_limiter_serialized_size(tf_rate_limiter *limiter, size_t *size);
TF_API tf_status tf_rate_limiter_serialize(tf_rate_limiter *limiter, void *buf, size_t capacity, size_t *written);
TF_API tf_status tf_rate_limiter_deserialize(const void *buf, size_t len, tf_rate_limiter **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_RATE_LIMITER_H */
