/**
 * @file temporalfilters/rate_limiter.h
 * @brief Sliding-window rate limiter: "may this key make another request now?"
 *
 * Each key may make at most `limit` requests per `window` time units. Two
 * modes:
 *
 *  - **Bucketed** (the default; the algorithm of the Rate Limiter README):
 *    the window is split into window / bucket_width buckets; a key's state
 *    is a fixed ring of bucket counts plus a running total. A bucket leaves
 *    the window when floor(now / bucket_width) - window / bucket_width
 *    reaches it, so a permit may leave up to bucket_width - 1 time units
 *    early. The promise: never more than `limit` grants in any interval of
 *    length window - bucket_width + 1; in an interval of the full window
 *    length up to 2 * limit under adversarial traffic (a burst at the end of
 *    a bucket and another as it leaves). On random traffic the excess over
 *    the exact mode is a few percent with 10 buckets (docs/rate-limiter.md
 *    has the measured figures; the Rate Limiter README estimates buckets / 2
 *    percent false positives). Memory: 47 bytes per record for 10 buckets
 *    and keys of up to 16 bytes (25 + 2 * (buckets + 1) in general; longer
 *    keys are stored apart), in tables that grow 76-85% full: 55-62 bytes
 *    per key from about 10,000 keys up (below that the 64 shards' smallest
 *    tables have more spare room: 73 at 1,000).
 *  - **Exact** (::TF_RATE_LIMITER_EXACT): a key keeps the times of its
 *    grants still in the window (at most `limit`); never more than `limit`
 *    grants in any half-open interval (t - window, t]. Memory: a 33-byte
 *    record plus 24 + 4 * c bytes for its ring of grant times (each kept
 *    as a 32-bit offset from a base at or below the ring's oldest grant;
 *    24 + 8 * c, each time kept whole, when the window is more than 2^31
 *    time units, or for a ring read from a blob whose grants span 2^32 or
 *    more), whose
 *    capacity c grows on demand (doubling from 4, capped at the limit): at
 *    most twice the most grants the key has held in its window (at least 4,
 *    or the limit when smaller), whatever its limit. The ring is freed when
 *    the key is reset or reclaimed.
 *
 * Decisions report allowed/denied, the permits remaining in the window, and
 * the earliest time at which the same request would be allowed (for a
 * Retry-After header). A **global limit** can cap all keys together; a key
 * with its own limit (an override) is still held to the global limit.
 *
 * **Keys** live in a hash table keyed by their bytes (sharded: 64 shards,
 * each with its own lock), hashed with MurmurHash3 and the limiter's seed.
 * The keys of a rate limiter usually come from its clients (addresses, user
 * names, tokens): with a seed they can guess (0, the default of many
 * callers, or any published value) a client can compute keys that all fall
 * into one shard and one probe run, and make every request of that shard
 * slow. When keys come from untrusted clients, create the limiter with a
 * random secret seed (read from the system's random source at start-up).
 * The seed changes where keys are stored, not the decisions, but for the
 * two places where a shard's own state shows: which idle keys a full table
 * finds to reclaim (below), and the reclaim horizon a key meets when its
 * clock runs behind. A key is idle once a full window has passed since its
 * latest request, granted, denied or refunded (every permit it took has then
 * left the window); idle keys are reclaimed by
 * sweeps that visit a few slots at a time, never a full scan: 4 slots of the
 * key's shard when a new key is inserted, and 8 slots of a shard picked
 * round robin every 16th acquire of a shard (when that shard's lock is
 * free). A sweep reclaims every idle key of the slots it visits. A reclaimed key starts
 * afresh; since another key's newer time may reclaim it while its own clock
 * is behind, each shard remembers the latest time up to which a key it
 * reclaimed could still hold permits (its reclaim horizon): a key not
 * tracked that asks before that time is denied until then (retry_at = the
 * horizon), so a key's clock running behind never earns it extra permits.
 *
 * An optional **maximum number of tracked keys** bounds the keys tracked and,
 * with them, memory. A shard's table also shrinks: when a call that
 * removes keys (a sweep, a reclaim for a full table, a reset) leaves it
 * less than 68% full, it is rebuilt 3/4 full (never below 16 records), so
 * each table holds at most 1/0.68 = 1.47 records' room per key it tracks
 * (or 16 records), whatever its past. Under max_keys the memory is
 * therefore at most that of the empty limiter plus max_keys * 1.47
 * records plus 64 * (16 records + 64 bytes) (one smallest table per
 * shard), plus the exact mode's rings and long keys: for 47-byte records,
 * 69.2 bytes per key of the bound plus 51 KiB (72 bytes per key from
 * about 18,200 keys of the bound up), however the keys move between
 * shards (tests/rate_limiter/test_memory.c moves them all every cycle).
 * A shrink allocates the smaller table first; when that fails, the bigger
 * table is kept and the call is unaffected. When the maximum is
 * reached, a new key that would be granted first reclaims the idle keys of
 * its shard's next 16 slots, then, while too few are found, of 16 slots of
 * each other shard in turn whose lock is free. It needs one, or more when
 * the bound was lowered below the keys tracked (lowering it evicts nothing:
 * a new key then needs keys - max_keys + 1 reclaimed by one search). When
 * too few are found it is denied (the default: fail closed, retry_at =
 * ::TF_RETRY_NEVER) or, with ::TF_RATE_LIMITER_FULL_ALLOW, admitted without
 * being tracked (fail open, remaining 0, still held to the global limit);
 * counters say how often. After a search that found too few, the next 63
 * searches of the limiter whose own shard yields too few look only at
 * their own shard (tf_rate_limiter_peek() looks as the next acquire would,
 * without using one up).
 *
 * **Time.** `now` is in the caller's unit (window and bucket_width in the
 * same unit), >= 1. A clock that goes backwards is clamped per key (and for
 * the global window) to the latest time that key has seen: nothing is
 * forgotten early and nothing is corrupted.
 *
 * **Thread safety.** The limiter locks internally: every function may be
 * called concurrently from any number of threads on the same limiter, except
 * tf_rate_limiter_free() (exclusive). Decisions on the same key are
 * linearizable.
 *
 * The algorithm, its promises and the wire format: docs/rate-limiter.md and
 * docs/wire-format.md.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_RATE_LIMITER_H
#define TEMPORALFILTERS_RATE_LIMITER_H

#include "temporalfilters/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A rate limiter (opaque handle).
 *
 * Created by tf_rate_limiter_new() or tf_rate_limiter_deserialize();
 * destroyed by tf_rate_limiter_free().
 * @since 0.1.0
 */
typedef struct tf_rate_limiter tf_rate_limiter;

/**
 * @brief Creation flag: the exact mode (a ring of grant times per key; no
 * over-admission).
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_EXACT 0x1u

/**
 * @brief Creation flag: when the key bound is reached and no idle key can be
 * reclaimed, admit new keys without tracking them (fail open) instead of
 * denying them (fail closed).
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_FULL_ALLOW 0x2u

/**
 * @brief The largest per-key limit of the bucketed mode (requests per window).
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_MAX_KEY_LIMIT 65535u

/**
 * @brief The largest per-key limit of the exact mode (2^20 requests per window).
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_MAX_EXACT_LIMIT 1048576u

/**
 * @brief The most buckets per window (window / bucket_width) of the bucketed mode.
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_MAX_BUCKETS 4096u

/**
 * @brief How a limiter was configured, from tf_rate_limiter_get_info().
 *
 * A versioned struct (docs/conventions.md): initialize it with
 * ::TF_RATE_LIMITER_INFO_INIT before the call.
 * @since 0.1.0
 */
typedef struct tf_rate_limiter_info {
    /** sizeof(tf_rate_limiter_info) as the caller was compiled; set by
     *  ::TF_RATE_LIMITER_INFO_INIT. @since 0.1.0 */
    size_t size;
    /** The default limit: requests per window and key. @since 0.1.0 */
    uint64_t limit;
    /** The window's length, in the caller's time unit. @since 0.1.0 */
    uint64_t window;
    /** The width of a bucket (bucketed mode); 0 in exact mode. @since 0.1.0 */
    uint64_t bucket_width;
    /** The global limit over all keys together; 0 when none is set
     *  (tf_rate_limiter_set_global_limit()). @since 0.1.0 */
    uint64_t global_limit;
    /** The most keys tracked at once; 0 for no bound
     *  (tf_rate_limiter_set_max_keys()). @since 0.1.0 */
    uint64_t max_keys;
    /** The hash seed. @since 0.1.0 */
    uint32_t seed;
    /** The creation flags (`TF_RATE_LIMITER_*`). @since 0.1.0 */
    uint32_t flags;
} tf_rate_limiter_info;

/**
 * @brief Initializer of ::tf_rate_limiter_info: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_INFO_INIT \
    { sizeof(tf_rate_limiter_info), 0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief A limiter's counters, from tf_rate_limiter_get_stats().
 *
 * A versioned struct (docs/conventions.md): initialize it with
 * ::TF_RATE_LIMITER_STATS_INIT before the call.
 * @since 0.1.0
 */
typedef struct tf_rate_limiter_stats {
    /** sizeof(tf_rate_limiter_stats) as the caller was compiled; set by
     *  ::TF_RATE_LIMITER_STATS_INIT. @since 0.1.0 */
    size_t size;
    /** Keys tracked now. @since 0.1.0 */
    uint64_t keys;
    /** Idle keys reclaimed so far. @since 0.1.0 */
    uint64_t reclaimed;
    /** Requests of new keys denied because the table was full. @since 0.1.0 */
    uint64_t denied_full;
    /** Requests of new keys admitted untracked because the table was full
     *  (::TF_RATE_LIMITER_FULL_ALLOW). @since 0.1.0 */
    uint64_t allowed_full;
    /** Bytes of memory held: the limiter object itself, the tables,
     *  out-of-line keys, exact rings, the global window and the overrides
     *  (tf_rate_limiter_memory()). @since 0.1.0 */
    uint64_t memory;
} tf_rate_limiter_stats;

/**
 * @brief Initializer of ::tf_rate_limiter_stats: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_RATE_LIMITER_STATS_INIT \
    { sizeof(tf_rate_limiter_stats), 0, 0, 0, 0, 0 }

/**
 * @brief Creates a limiter: each key at most `limit` requests per `window`.
 *
 * @param[in]  limit         requests per window and key, >= 1; at most
 *                           ::TF_RATE_LIMITER_MAX_KEY_LIMIT (bucketed) or
 *                           ::TF_RATE_LIMITER_MAX_EXACT_LIMIT (exact).
 * @param[in]  window        the window's length in the caller's time unit, >= 1.
 * @param[in]  bucket_width  bucketed mode: the width of a bucket; must divide
 *                           window, with window / bucket_width <=
 *                           ::TF_RATE_LIMITER_MAX_BUCKETS. Ignored (may be 0)
 *                           in exact mode.
 * @param[in]  seed          the hash seed of the key table: any value. It
 *                           decides where keys are stored (see the file's
 *                           description); when keys come from untrusted
 *                           clients, pass a random secret value.
 * @param[in]  flags         0 or a bitwise OR of ::TF_RATE_LIMITER_EXACT and
 *                           ::TF_RATE_LIMITER_FULL_ALLOW.
 * @param[out] out           receives the limiter, owned by the caller (free
 *                           it with tf_rate_limiter_free()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT limit or window is 0, the bucket width is 0
 *                                 or does not divide the window, too many
 *                                 buckets, the limit is too large, or flags
 *                                 has an unknown bit.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_new(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t seed,
                                     uint32_t flags, tf_rate_limiter **out);

/**
 * @brief Destroys a limiter and frees its memory.
 * @param[in] limiter  the limiter; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_rate_limiter_free(tf_rate_limiter *limiter);

/**
 * @brief Sets a global limit over all keys together, in the same window.
 *
 * At most `limit` permits are then granted in total per window. Requests are
 * granted only when both the key and the global window allow them; the
 * remaining count is the smaller of the two, and retry_at the later. Setting
 * it starts an empty global window (the keys' own windows are kept) whose
 * clock starts just past the latest time any key has seen (in bucketed
 * mode, at the start of the next bucket), so that the permits the keys took
 * before stay out of it: a refund gives them back to their keys only. (A
 * key's clock at 2^64 - 1, or in the last bucket, is the one exception:
 * its permits of that time could be refunded to the new window.) The cost
 * is on the safe side: a request at a time below that start is recorded
 * in the global window at the start, so a refund of a permit taken after
 * the set at such a time (in exact mode the latest time seen; in bucketed
 * mode the rest of its bucket) gives it back to its key only, and the
 * global window counts it until it leaves. A key whose clock is far ahead
 * (a request in the wrong unit) holds every new global window's clock
 * with it until it is reset. O(keys tracked), with every lock of the
 * limiter held. In
 * exact mode the global window keeps the times of its grants in the window,
 * 4 bytes each (8 for a window of more than 2^31 time units), in a ring that
 * grows on demand as a key's does.
 *
 * @param[in,out] limiter  the limiter.
 * @param[in]     limit    permits per window over all keys; 0 removes the
 *                         global limit; at most 2^24 in exact mode.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT an exact-mode limit above 2^24.
 * @retval TF_ERR_OUT_OF_MEMORY    the global window could not be allocated
 *                                 (nothing changed).
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_set_global_limit(tf_rate_limiter *limiter, uint64_t limit);

/**
 * @brief Gives `key` its own limit (an override of the default).
 *
 * Overrides persist while the key is idle or reclaimed. A key with an
 * override is still held to the global limit. Lowering a key's limit below
 * what it holds denies it until enough permits leave (exact mode keeps its
 * newest grants that fit). A bucketed key with an override costs a lookup in
 * the override map on each request.
 *
 * @param[in,out] limiter  the limiter.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length in bytes.
 * @param[in]     limit    the key's requests per window; 0 removes the override.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL, or key is NULL with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT limit is above the mode's maximum.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed (nothing changed).
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_set_key_limit(tf_rate_limiter *limiter, const void *key, size_t key_len,
                                               uint64_t limit);

/**
 * @brief Bounds the number of keys tracked at once.
 *
 * Evicts nothing: with more keys tracked than the new bound, a new key is
 * tracked only when one search reclaims enough idle keys to go under it
 * (keys - max_keys + 1), and the keys tracked go down as sweeps reclaim
 * them once idle.
 *
 * @param[in,out] limiter   the limiter.
 * @param[in]     max_keys  the most keys tracked; 0 for no bound.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL limiter is NULL.
 * @note Thread-safe (takes no lock: an atomic store, seen by the requests
 *       that start after it).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_set_max_keys(tf_rate_limiter *limiter, uint64_t max_keys);

/**
 * @brief Asks for `n` permits for `key` at `now` and takes them when allowed.
 *
 * As in the Rate Limiter README, the key's window is first brought to `now`
 * (granted or not: a later call with an earlier time is clamped to it); a
 * denied request takes nothing.
 *
 * @param[in,out] limiter    the limiter.
 * @param[in]     key        the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len    the key's length in bytes.
 * @param[in]     now        the time of the request, >= 1.
 * @param[in]     n          the permits asked for, >= 1.
 * @param[out]    allowed    receives 1 when granted, 0 when denied (nothing taken).
 * @param[out]    remaining  receives the permits left to the key in the window
 *                           after the decision, bounded by what is left in the
 *                           global window when one is set; may be NULL.
 * @param[out]    retry_at   receives 0 when granted; otherwise the earliest
 *                           time at which the same request would be granted
 *                           if nothing else happened (a Retry-After of
 *                           retry_at - now), or ::TF_RETRY_NEVER when it never
 *                           can (n above the key's limit or the global limit,
 *                           a full table that denies new keys, or a retry
 *                           time past 2^64 - 1); may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter or allowed is NULL, or key is NULL
 *                                 with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now or n is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation the request needs failed: the
 *                                 table's growth, a new key's copy (keys of
 *                                 more than 16 bytes), the key's or the
 *                                 global window's exact-mode ring of grant
 *                                 times, or the lookup of a key's override
 *                                 (nothing changed).
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_acquire(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                         uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/**
 * @brief Batch form of tf_rate_limiter_acquire().
 *
 * The same as `count` calls of tf_rate_limiter_acquire(keys[i], key_lens[i],
 * times[i], n, &allowed[i], &remaining[i], &retry_at[i]) in order, but the
 * table lines of the next keys are fetched while one key is decided, so that
 * their cache misses overlap: for a server that gathers the requests of one
 * event-loop tick, several times the throughput of single calls on tables
 * larger than the CPU's caches (docs/performance.md). Arguments are checked
 * before any decision, so a refused call changes nothing; count == 0 does
 * nothing (n is still checked). The batch is not atomic: other threads'
 * calls may interleave between its keys.
 *
 * @param[in,out] limiter    the limiter.
 * @param[in]     keys       `count` key pointers; keys[i] may be NULL only
 *                           when key_lens[i] is 0.
 * @param[in]     key_lens   `count` key lengths in bytes.
 * @param[in]     count      the number of requests.
 * @param[in]     times      `count` request times, each >= 1.
 * @param[in]     n          the permits each request asks for, >= 1.
 * @param[out]    allowed    receives `count` answers, 1 granted or 0 denied.
 * @param[out]    remaining  receives `count` remaining counts; may be NULL.
 * @param[out]    retry_at   receives `count` retry times; may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter, keys, key_lens, times or allowed is
 *                                 NULL, or a NULL key has a length.
 * @retval TF_ERR_INVALID_ARGUMENT a time is 0, or n is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation request i needs failed (as
 *                                 tf_rate_limiter_acquire(); i is named in
 *                                 the message): the decisions before it
 *                                 stand and are written to allowed,
 *                                 remaining and retry_at; request i changed
 *                                 nothing, it and those after it are not
 *                                 decided and their entries are left as they
 *                                 were.
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_acquire_batch(tf_rate_limiter *limiter, const void *const *keys,
                                               const size_t *key_lens, size_t count, const uint64_t *times, uint64_t n,
                                               int *allowed, uint64_t *remaining, uint64_t *retry_at);

/**
 * @brief The decision tf_rate_limiter_acquire() would make now, without
 * changing anything.
 *
 * No permit is taken, no clock moved, no key created or reclaimed (a full
 * table is looked at, not swept). Same arguments as
 * tf_rate_limiter_acquire(); it allocates nothing but the copy of the key
 * that looks up its override, when overrides are set.
 *
 * @param[in]  limiter    the limiter.
 * @param[in]  key        the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len    the key's length in bytes.
 * @param[in]  now        the time of the request, >= 1.
 * @param[in]  n          the permits asked for, >= 1.
 * @param[out] allowed    receives 1 when acquire would grant, else 0.
 * @param[out] remaining  receives the permits left after such a decision; may be NULL.
 * @param[out] retry_at   receives 0, a retry time, or ::TF_RETRY_NEVER, as
 *                        tf_rate_limiter_acquire(); may be NULL.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter or allowed is NULL, or key is NULL
 *                                 with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now or n is 0.
 * @retval TF_ERR_OUT_OF_MEMORY    the lookup of the key's override could
 *                                 not copy the key (nothing changed).
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_peek(const tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                      uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/**
 * @brief Gives back up to `n` permits the key took, the most recent first.
 *
 * The global window gets them back too (the same buckets, or grant times, as
 * the key's, if they are still in it). The key's window, and the global
 * window's when a global limit is set, is first brought to `now`, as by an
 * acquire (so a refund counts as a request for idleness). A key not tracked
 * is a no-op.
 *
 * @param[in,out] limiter  the limiter.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length in bytes.
 * @param[in]     now      the time of the refund, >= 1.
 * @param[in]     n        the permits to give back.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL, or key is NULL with key_len > 0.
 * @retval TF_ERR_INVALID_ARGUMENT now is 0.
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_refund(tf_rate_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                        uint64_t n);

/**
 * @brief Forgets the key's requests (its override stays).
 *
 * The key may take its full limit again at once. The global window keeps
 * the permits the key took (they leave it with time), and the shard's
 * reclaim horizon is not raised (a reset is the caller's decision, not a
 * reclaim).
 *
 * @param[in,out] limiter  the limiter.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length in bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL limiter is NULL, or key is NULL with key_len > 0.
 * @note Thread-safe (the limiter locks internally).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_reset(tf_rate_limiter *limiter, const void *key, size_t key_len);

/**
 * @brief The limiter's counters: keys tracked, reclaimed, denied or admitted
 * on a full table, and the memory held.
 *
 * Takes no lock: O(shards) atomic reads. Each counter, and the memory of
 * each shard's table, of the global window and of the overrides, is the
 * value after some completed change (every change updates it under its own
 * lock); when other threads are deciding meanwhile, the parts are read at
 * slightly different moments, so the sum may mix moments (it is exact once
 * they stop, and never a torn or half-made figure). Writes only the first
 * stats->size bytes (docs/conventions.md, "Versioned structs"); nothing on
 * failure.
 *
 * @param[in]     limiter  the limiter.
 * @param[in,out] stats    initialized with ::TF_RATE_LIMITER_STATS_INIT;
 *                         receives the counters.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT stats->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Thread-safe (takes no lock: atomic reads).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_get_stats(const tf_rate_limiter *limiter, tf_rate_limiter_stats *stats);

/**
 * @brief Reports the bytes of memory the limiter holds: the handle, the
 * tables, out-of-line keys, the exact mode's rings of grant times, the
 * global window and the overrides (the `memory` of
 * tf_rate_limiter_get_stats()).
 *
 * Takes no lock (O(shards)); what a concurrent call sees: as
 * tf_rate_limiter_get_stats().
 *
 * @param[in]  limiter  the limiter.
 * @param[out] bytes    receives the number of bytes.
 * @retval TF_OK       success.
 * @retval TF_ERR_NULL limiter or bytes is NULL.
 * @note Thread-safe (takes no lock: atomic reads).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_memory(const tf_rate_limiter *limiter, size_t *bytes);

/**
 * @brief How the limiter is configured: limit, window, bucket width, global
 * limit, key bound, seed and flags. O(1).
 *
 * Writes only the first info->size bytes; nothing on failure.
 *
 * @param[in]     limiter  the limiter.
 * @param[in,out] info     initialized with ::TF_RATE_LIMITER_INFO_INIT;
 *                         receives the fields.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter or info is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT info->size is below the struct's first
 *                                 version or above 4096 (not initialized).
 * @note Thread-safe (takes no lock: atomic reads).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_get_info(const tf_rate_limiter *limiter, tf_rate_limiter_info *info);

/**
 * @brief The exact size of the limiter's serialization at this moment.
 *
 * The size may change before tf_rate_limiter_serialize() runs, when other
 * threads make requests meanwhile; serialize then reports the new size.
 * O(shards + overrides) in bucketed mode (from each table's record count
 * and key bytes); exact mode also visits every record for its grant count.
 *
 * @param[in]  limiter  the limiter.
 * @param[out] size     receives the blob's size in bytes.
 * @retval TF_OK            success.
 * @retval TF_ERR_NULL      limiter or size is NULL.
 * @retval TF_ERR_TOO_LARGE the size overflows size_t.
 * @note Thread-safe (takes every lock of the limiter for a moment).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_serialized_size(const tf_rate_limiter *limiter, size_t *size);

/**
 * @brief Serializes the limiter (wire format kind 4, docs/wire-format.md).
 *
 * The blob holds the parameters and the seed, the global window, the
 * overrides and every tracked key's state, so a restarted service forgets
 * nobody who is limited. (The seed is in the blob: keep blobs as secret as
 * the seed when it protects against chosen keys.)
 * Serialize takes every lock of the limiter, so the snapshot is one
 * consistent moment (other threads' calls wait meanwhile). Keys and overrides
 * are written in increasing order of their bytes: equal states give equal
 * blobs.
 *
 * @param[in]  limiter   the limiter.
 * @param[out] buf       receives the blob; may be NULL when capacity is 0.
 * @param[in]  capacity  the size of buf in bytes.
 * @param[out] written   receives the blob's length; when capacity is too
 *                       small, the size needed (which may differ from an
 *                       earlier tf_rate_limiter_serialized_size()).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter or written is NULL, or buf is NULL
 *                                 with enough capacity.
 * @retval TF_ERR_BUFFER_TOO_SMALL capacity is too small: nothing is written
 *                                 into buf and the needed size is stored in
 *                                 written.
 * @retval TF_ERR_TOO_LARGE        the size overflows size_t.
 * @retval TF_ERR_OUT_OF_MEMORY    the records or overrides could not be
 *                                 gathered for sorting (the limiter is
 *                                 unchanged; buf's contents are then
 *                                 unspecified).
 * @note Thread-safe (takes every lock of the limiter).
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_serialize(const tf_rate_limiter *limiter, void *buf, size_t capacity, size_t *written);

/**
 * @brief Creates a limiter from a blob written by tf_rate_limiter_serialize().
 *
 * Checks the length, magic, version, kind, checksum, flags and every
 * invariant of every field before allocating anything, then creates a new
 * limiter owned by the caller. The limiter's memory (as
 * tf_rate_limiter_get_stats() will report it in `memory`) is computed from
 * the validated blob first and refused above options->max_memory. Without
 * that limit, the memory is bounded by the blob's size: at most 16 times
 * its size plus 64 KiB, whatever limits it declares (the exact mode's rings
 * are made as large as the grant times the blob carries, and grow later
 * with new grants).
 *
 * @param[in]  buf      the blob.
 * @param[in]  len      its length in bytes.
 * @param[in]  options  a ::tf_deserialize_options initialized with
 *                      ::TF_DESERIALIZE_OPTIONS_INIT, or NULL for the defaults.
 * @param[out] out      receives the new limiter, owned by the caller.
 * @retval TF_OK                      success.
 * @retval TF_ERR_NULL                buf or out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT    options->size is below the struct's
 *                                    first version or above 4096 (not
 *                                    initialized), or options sets a field
 *                                    this library version does not know
 *                                    (a newer caller's option not left at
 *                                    its default).
 * @retval TF_ERR_TOO_LARGE           the limiter would hold more than
 *                                    options->max_memory bytes.
 * @retval TF_ERR_TRUNCATED           the blob is shorter than its envelope says.
 * @retval TF_ERR_BAD_MAGIC           the blob does not start with "TFLT".
 * @retval TF_ERR_UNSUPPORTED_VERSION the format version is unknown.
 * @retval TF_ERR_WRONG_KIND          the blob holds another structure.
 * @retval TF_ERR_CHECKSUM            the checksum does not match.
 * @retval TF_ERR_CORRUPT             a field breaks the limiter's invariants.
 * @retval TF_ERR_OUT_OF_MEMORY       an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_rate_limiter_deserialize(const void *buf, size_t len, const tf_deserialize_options *options,
                                             tf_rate_limiter **out);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_RATE_LIMITER_H */
