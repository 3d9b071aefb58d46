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
 *    request may be admitted up to bucket_width - 1 time units early: in any
 *    real window of length `window` a key can get up to about
 *    limit * (1 + 1 / buckets) requests in the worst case (README.md gives
 *    the measured over-admission on random and adversarial traffic). Memory:
 *    56 bytes per key for 10 buckets and keys of up to 16 bytes, 64 with the
 *    table's spare room.
 *  - EXACT (TF_RATE_LIMITER_EXACT): a key keeps the times of its last
 *    `limit` grants; never more than `limit` grants in any half-open interval
 *    (t - window, t]. Memory: 8 * limit + 40 bytes per key.
 *
 * Decisions report allowed/denied, the permits remaining in the window, and
 * the earliest time at which the same request would be allowed (for a
 * Retry-After header). A GLOBAL limit can cap all keys together; a key with
 * its own limit (an override) is still held to the global limit.
 *
 * Keys live in a hash table keyed by their bytes (sharded: 64 shards, each
 * with its own lock). Keys whose window is empty (idle) are reclaimed by an
 * incremental sweep that visits a few slots per request, never a full scan.
 * An optional maximum number of tracked keys bounds memory; when it is
 * reached and no idle key can be reclaimed, new keys are denied
 * (TF_RATE_LIMITER_FULL_DENY, the default: fail closed) or admitted without
 * being tracked (TF_RATE_LIMITER_FULL_ALLOW: fail open); counters say how
 * often.
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
 * granted only when both the key and the global window allow them.
 * In exact mode the global window keeps `limit` timestamps (8 bytes each,
 * limit <= 2^24). Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT,
 * TF_ERR_OUT_OF_MEMORY.
 */
TF_API tf_status tf_rate_limiter_set_global_limit(tf_rate_limiter *limiter, uint64_t limit);

/*
 * Gives `key` its own limit (an override of the default; 0 removes the
 * override). Overrides persist while the key is idle or reclaimed. A key
 * with an override is still held to the global limit.
 * Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT (limit above the mode's
 * maximum), TF_ERR_OUT_OF_MEMORY.
 */
TF_API tf_status tf_rate_limiter_set_key_limit(tf_rate_limiter *limiter, const void *key, size_t key_len,
                                               uint64_t limit);

/* At most `max_keys` keys tracked at once (0: no bound). Errors: TF_ERR_NULL. */
TF_API tf_status tf_rate_limiter_set_max_keys(tf_rate_limiter *limiter, uint64_t max_keys);

/*
 * Asks for `n` permits for `key` at `now` (>= 1) and takes them when allowed.
 *  allowed     receives 1 when granted, 0 when denied (nothing taken).
 *  remaining   (may be NULL) permits left to the key in the window after the
 *              decision (bounded by the global window's when one is set).
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

/* The decision acquire() would make now, without taking anything or
 * creating the key. Same arguments and errors. */
TF_API tf_status tf_rate_limiter_peek(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                      uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/* Gives back up to `n` permits the key took (the most recent first), also
 * to the global window. Errors: TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT
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
 * nobody who is limited. The limiter must not be modified concurrently
 * while it is serialized (the snapshot would mix moments); the size may
 * change between serialized_size and serialize, in which case serialize
 * returns TF_ERR_BUFFER_TOO_SMALL with the new size. Same contract as the
 * other structures otherwise.
 */
TF_API tf_status tf_rate_limiter_serialized_size(tf_rate_limiter *limiter, size_t *size);
TF_API tf_status tf_rate_limiter_serialize(tf_rate_limiter *limiter, void *buf, size_t capacity, size_t *written);
TF_API tf_status tf_rate_limiter_deserialize(const void *buf, size_t len, tf_rate_limiter **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_RATE_LIMITER_H */
