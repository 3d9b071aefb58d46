/**
 * @file temporalfilters/redis.h
 * @brief The sliding-window rate limiter on Redis (libtemporalfilters-redis):
 * the decisions of ::tf_rate_limiter, shared by every process that talks to
 * the same Redis server; and RecencySketches shared between processes
 * through Redis (::tf_redis_sketch_share, at the end of this file).
 *
 * A companion library: link it with `pkg-config --libs
 * temporalfilters-redis` (it links libtemporalfilters and hiredis). Its
 * statuses and its last error message are the core's
 * (temporalfilters/common.h): tf_last_error_message() explains a failure of
 * either library.
 *
 * **Decisions.** Same configuration (limit, window, bucket width, bucketed or
 * exact mode, per-key overrides, a global limit) and same results (allowed,
 * remaining, retry_at) as tf_rate_limiter_acquire() on the same request
 * sequence: the algorithm of temporalfilters/rate_limiter.h, run by one Lua
 * script on the server, so that each decision (the key's window and the
 * global window together) is atomic. One exception: on the caller's clock
 * a new global window starts at 0, not past the keys' latest time as the
 * embedded limiter's (tf_redis_limiter_set_global_limit()), so the requests
 * of the bucket (exact mode: the time) in which it was set may get other
 * answers. The embedded limiter's key bound (tf_rate_limiter_set_max_keys(),
 * ::TF_RATE_LIMITER_FULL_ALLOW) has no counterpart: Redis's own `maxmemory`
 * bounds memory.
 *
 * **Cost.** Each decision loads the key's window (and the global window)
 * from its hash, unpacks it (cmsgpack), scans it and packs it again: about
 * 20 us of server time with small windows (docs/redis-numbers.md). A
 * bucketed window holds at most two numbers per bucket; an exact one holds
 * the time of each grant in it, up to the key's limit (2^20) and, for the
 * global window, up to the global limit (2^24), so in exact mode the
 * server time of every decision grows with those limits.
 *
 * **Redis version.** 5.0 or later (the suites run 7.0): the scripts set
 * several hash fields in one HSET (Redis 4.0) and write after reading TIME
 * (the server's clock, and every call of the sketch share), which needs
 * the script effects replication that Redis 5.0 made the default.
 *
 * **State in Redis.** Under the prefix P of the options: a key K's window
 * is the hash `P{k:K}s` and its override the string `P{k:K}o` (one hash tag,
 * so both stay on one cluster slot); the global limit and window are the
 * hash `P{g}`. A key's window expires (PEXPIRE) once all its permits have
 * left the window: ::tf_redis_options.idle_expiry_ms after its last
 * request, one window by default, which counts the caller's unit as
 * milliseconds (Redis expiry counts in milliseconds). Overrides and the
 * global limit never expire: every client of the same prefix sees them.
 *
 * **Time.** Either the caller's `now` (::TF_REDIS_TIME_CALLER, the
 * default: any unit, but the idle expiry assumes milliseconds unless set),
 * or the server's `TIME` in milliseconds (::TF_REDIS_TIME_SERVER: pass
 * `now` = 0). The caller's clock lets a program choose its time (tests,
 * replays) but every client's clock must agree: a client whose clock runs
 * behind is clamped to the latest time a key has seen (it gets nothing
 * extra), one whose clock runs ahead moves windows early for everyone. The
 * server's clock is one source of truth for all clients, at the price of
 * depending on the server for time too. Times and windows must stay below
 * 2^51 (the script's numbers are doubles, exact to 2^53).
 *
 * **Failures.** The connect and command timeouts are given at creation:
 * each connect, and each read or write on a connection, waits at most its
 * timeout. A call may need several of them (a reconnection; the script
 * loaded again after NOSCRIPT; on a cluster a refresh of the slot table,
 * CLUSTER SLOTS asked of one known node after another, up to 5 hops of
 * redirections and TRYAGAIN waits, and a decision's two steps and undo), so
 * a failing call may take a few timeouts. When Redis cannot answer
 * (connection refused or lost, a server that does not answer in time, an
 * error reply), a decision returns ::TF_ERR_TIMEOUT or ::TF_ERR_UNAVAILABLE
 * and still writes a decision: the fallback chosen at creation, counted in
 * ::tf_redis_limiter_stats. ::TF_REDIS_FALLBACK_DENY writes allowed 0,
 * remaining 0 and retry_at ::TF_RETRY_NEVER (when Redis answers again is
 * unknown); ::TF_REDIS_FALLBACK_ALLOW allowed 1, remaining 0 and retry_at
 * 0; ::TF_REDIS_FALLBACK_LOCAL the decision of an embedded ::tf_rate_limiter
 * (or DENY's, should that fail).
 *
 * The embedded limiter is the handle's own. It has the limits given at
 * creation, the global limit stored in Redis at creation, and this
 * handle's own tf_redis_limiter_set_key_limit() and
 * tf_redis_limiter_set_global_limit() calls: not the overrides stored in
 * Redis, nor another handle's changes. With ::TF_REDIS_TIME_SERVER it
 * decides on this machine's clock (tf_clock_now_ms()), and its retry_at is
 * in that clock. Its grants are not replayed into Redis when it is back,
 * and every handle has its own: during an outage a key may get up to its
 * limit from the embedded limiter of each handle (with one handle per
 * thread, from each thread), and in the window after it its limit from
 * Redis as well.
 *
 * After an I/O failure or a timeout the connection is dropped and
 * re-established by the next call due after a backoff (doubling from
 * reconnect_min_ms to reconnect_max_ms); calls before that fail fast with
 * ::TF_ERR_UNAVAILABLE and the fallback. An error reply leaves the
 * connection in use. A command that failed after it was sent (a timeout,
 * a connection lost before the reply) may have been carried out by Redis:
 * a decision the fallback answered may have taken its permits there too,
 * and a refund, reset or setter that failed may or may not have been done.
 *
 * **Cluster** (::TF_REDIS_MODE_CLUSTER). The library routes itself
 * (hiredis 0.14 has no cluster API): the slot of a Redis key is the
 * CRC16-XMODEM of its hash tag (the part between the first '{' and the next
 * '}' when not empty, else the whole key) modulo 16384; the slot table comes
 * from CLUSTER SLOTS, asked of the seeds; one connection per master. A MOVED
 * reply updates the table (refreshed before the next call) and the command
 * is sent again to the new owner; an ASK reply sends ASKING then the
 * command to the node named; a TRYAGAIN reply (a slot being migrated) is
 * retried after a wait (10 ms, 20 ms, ...); a NOSCRIPT reply loads the
 * script on that node and sends the command again. At most 5 such hops per
 * command, all kinds together (redirections counted in
 * ::tf_redis_limiter_stats.redirects). The script is loaded on every master
 * (once each) at creation; a cluster whose CLUSTER SLOTS lists no slot
 * range fails creation with ::TF_ERR_UNAVAILABLE.
 *
 * A key's window and override share one slot, but the global window `P{g}`
 * sits on its own, so no script can see both: a decision on a cluster is
 * two calls, the key first (it takes its permits when it allows), then the
 * global window (it takes them only when the key allowed and it allows
 * too); when the global window denies, the key's permits are given back at
 * once (an undo, counted in ::tf_redis_limiter_stats.global_undos): exactly
 * the ones its step took, at its time, never another client's. The
 * decisions equal the embedded limiter's (and the single server's) on one
 * client's sequence. What a cluster does not promise is atomicity across
 * the two windows: between the key's step and its undo (one round trip)
 * the key's permits are taken, so a concurrent request on the same key from
 * another client may be denied that the single server would have granted
 * (never the other way round: no request is granted beyond either limit);
 * if the undo itself fails (the key's node died in between), or the key's
 * step took its permits and its reply was lost (no undo is sent then),
 * those permits stay taken until they leave the window. A refund is
 * likewise two calls (the key, then the global window; when the second
 * fails the global window keeps the permits). Every decision of a cluster
 * costs two round trips; a batch is pipelined per node and per phase
 * (keys, global window, undos), in segments of distinct keys. The global
 * window is one slot: every decision passes through its master.
 *
 * **Thread safety.** A handle holds its connections (one, or one per
 * cluster master) and is not shared by threads: use one handle per thread
 * (or a pool of handles, one borrowed per call). Different handles may be
 * used concurrently; they share the state in Redis, and on a single server
 * their decisions on one key are linearizable (each is one script; on a
 * cluster, see above).
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_REDIS_H
#define TEMPORALFILTERS_REDIS_H

#include "temporalfilters/common.h"
#include "temporalfilters/rate_limiter.h"
#include "temporalfilters/recency_sketch.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief A rate limiter whose state lives in Redis (opaque handle).
 *
 * Created by tf_redis_limiter_new(); destroyed by tf_redis_limiter_free().
 * @since 0.1.0
 */
typedef struct tf_redis_limiter tf_redis_limiter;

/** @brief Time source: the caller's `now` (the default). @since 0.1.0 */
#define TF_REDIS_TIME_CALLER 0u
/** @brief Time source: the server's TIME in milliseconds; `now` must be 0. @since 0.1.0 */
#define TF_REDIS_TIME_SERVER 1u

/** @brief Mode: one Redis server (the default). @since 0.1.0 */
#define TF_REDIS_MODE_SERVER 0u
/** @brief Mode: a Redis Cluster, reached through its seed nodes; see "Cluster" above. @since 0.1.0 */
#define TF_REDIS_MODE_CLUSTER 1u

/** @brief Fallback when Redis cannot answer: deny (the default; fail closed). @since 0.1.0 */
#define TF_REDIS_FALLBACK_DENY 0u
/** @brief Fallback when Redis cannot answer: allow (fail open). @since 0.1.0 */
#define TF_REDIS_FALLBACK_ALLOW 1u
/** @brief Fallback when Redis cannot answer: decide with an embedded
 * ::tf_rate_limiter, one per handle, of the limits this handle knows (see
 * "Failures" above). @since 0.1.0 */
#define TF_REDIS_FALLBACK_LOCAL 2u

/**
 * @brief Where the server is and how to talk to it: the options of
 * tf_redis_limiter_new().
 *
 * A versioned struct (docs/conventions.md): initialize it with
 * ::TF_REDIS_OPTIONS_INIT, then set the fields you need.
 * @since 0.1.0
 */
typedef struct tf_redis_options {
    /** sizeof(tf_redis_options) as the caller was compiled; set by
     *  ::TF_REDIS_OPTIONS_INIT. @since 0.1.0 */
    size_t size;
    /** The server's host name or address; NULL means "127.0.0.1". @since 0.1.0 */
    const char *host;
    /** The server's TCP port, 1..65535 (default 6379). @since 0.1.0 */
    uint32_t port;
    /** Connect timeout in milliseconds, >= 1 (default 1000). @since 0.1.0 */
    uint32_t connect_timeout_ms;
    /** Command timeout in milliseconds, >= 1 (default 1000). @since 0.1.0 */
    uint32_t command_timeout_ms;
    /** ::TF_REDIS_TIME_CALLER or ::TF_REDIS_TIME_SERVER. @since 0.1.0 */
    uint32_t time_source;
    /** ::TF_REDIS_FALLBACK_DENY, ::TF_REDIS_FALLBACK_ALLOW or
     *  ::TF_REDIS_FALLBACK_LOCAL. @since 0.1.0 */
    uint32_t fallback;
    /** The first wait before reconnecting after a failure, in
     *  milliseconds (0: 100). @since 0.1.0 */
    uint32_t reconnect_min_ms;
    /** The longest wait before reconnecting, in milliseconds (0: 5000;
     *  at least reconnect_min_ms). @since 0.1.0 */
    uint32_t reconnect_max_ms;
    /** How long an idle key's window stays in Redis after its last
     *  request, in milliseconds (0: one window, the caller's unit taken as
     *  milliseconds). Must be at least the window in real time, or keys
     *  are forgotten while they still hold permits. @since 0.1.0 */
    uint64_t idle_expiry_ms;
    /** The prefix of every Redis key the limiter uses; NULL means "tf:rl:"
     *  (a ::tf_redis_sketch_share's: "tf:share:").
     *  At most 256 bytes, without '{' or '}' (the hash tags are the
     *  limiter's). Limiters with the same prefix share their state. @since 0.1.0 */
    const char *prefix;
    /** ::TF_REDIS_MODE_SERVER (host and port are the server) or
     *  ::TF_REDIS_MODE_CLUSTER (host and port are a seed node of a Redis
     *  Cluster). @since 0.1.0 */
    uint32_t mode;
    /** Cluster mode only: more seed nodes, "host:port[,host:port...]",
     *  asked for the slot table (CLUSTER SLOTS) after host:port when it
     *  does not answer; NULL for none. @since 0.1.0 */
    const char *cluster_seeds;
} tf_redis_options;

/**
 * @brief Initializer of ::tf_redis_options: every option at its default.
 * @since 0.1.0
 */
#define TF_REDIS_OPTIONS_INIT                                                                                          \
    {                                                                                                                  \
        sizeof(tf_redis_options), NULL, 6379, 1000, 1000, TF_REDIS_TIME_CALLER, TF_REDIS_FALLBACK_DENY, 0, 0, 0, NULL, \
            TF_REDIS_MODE_SERVER, NULL                                                                                 \
    }

/**
 * @brief A Redis limiter's counters, from tf_redis_limiter_get_stats().
 *
 * A versioned struct: initialize it with ::TF_REDIS_LIMITER_STATS_INIT.
 * @since 0.1.0
 */
typedef struct tf_redis_limiter_stats {
    /** sizeof(tf_redis_limiter_stats) as the caller was compiled. @since 0.1.0 */
    size_t size;
    /** Decisions Redis made (acquire, peek, each request of a batch). @since 0.1.0 */
    uint64_t decisions;
    /** Redis commands that failed with ::TF_ERR_TIMEOUT: failed commands,
     *  not calls (a pipeline that failed on a node counts once for all its
     *  commands; a batch may count several; a cluster's failed undo counts
     *  even when its call returns ::TF_OK). @since 0.1.0 */
    uint64_t timeouts;
    /** Redis commands that failed otherwise, counted as timeouts are:
     *  ::TF_ERR_UNAVAILABLE, an error or unexpected reply, and a connection
     *  that could not be allocated (::TF_ERR_OUT_OF_MEMORY). @since 0.1.0 */
    uint64_t unavailable;
    /** Decisions the fallback denied (::TF_REDIS_FALLBACK_DENY). @since 0.1.0 */
    uint64_t fallback_denied;
    /** Decisions the fallback allowed (::TF_REDIS_FALLBACK_ALLOW). @since 0.1.0 */
    uint64_t fallback_allowed;
    /** Decisions the embedded limiter made (::TF_REDIS_FALLBACK_LOCAL),
     *  granted or not. @since 0.1.0 */
    uint64_t fallback_local;
    /** Connections re-established after a failure. @since 0.1.0 */
    uint64_t reconnects;
    /** Times the script was loaded (SCRIPT LOAD): at creation (on every
     *  master of a cluster) and after a NOSCRIPT reply (a restarted or
     *  flushed server). @since 0.1.0 */
    uint64_t script_loads;
    /** Cluster: MOVED and ASK redirections followed. @since 0.1.0 */
    uint64_t redirects;
    /** Cluster: requests whose key allowed and whose global window denied
     *  (or could not answer), whose key's permits were given back. @since 0.1.0 */
    uint64_t global_undos;
} tf_redis_limiter_stats;

/**
 * @brief Initializer of ::tf_redis_limiter_stats: `size` set, every other field 0.
 * @since 0.1.0
 */
#define TF_REDIS_LIMITER_STATS_INIT \
    { sizeof(tf_redis_limiter_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief Creates a limiter on a Redis server: each key at most `limit`
 * requests per `window`.
 *
 * Checks the limits as tf_rate_limiter_new() does, connects to the server
 * and loads the limiter's script (SCRIPT LOAD). The overrides and the
 * global limit already stored under the prefix apply at once.
 *
 * @param[in]  limit         requests per window and key (as tf_rate_limiter_new()).
 * @param[in]  window        the window's length, >= 1, below 2^51.
 * @param[in]  bucket_width  bucketed mode: must divide the window (as
 *                           tf_rate_limiter_new()); ignored in exact mode.
 * @param[in]  flags         0 or ::TF_RATE_LIMITER_EXACT.
 * @param[in]  options       a ::tf_redis_options initialized with
 *                           ::TF_REDIS_OPTIONS_INIT, or NULL for the defaults.
 * @param[out] out           receives the limiter, owned by the caller.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT a limit, window or width tf_rate_limiter_new()
 *                                 refuses, a window of 2^51 or more, an
 *                                 unknown flag (::TF_RATE_LIMITER_FULL_ALLOW
 *                                 included), or an option out of range.
 * @retval TF_ERR_TIMEOUT          the server did not answer in time.
 * @retval TF_ERR_UNAVAILABLE      the server cannot be reached or refused the
 *                                 script, a cluster lists no slot range, or
 *                                 the global limit stored under the prefix is
 *                                 one this limiter cannot hold (not below
 *                                 2^51, above 2^24 in exact mode, not a number).
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_new(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t flags,
                                      const tf_redis_options *options, tf_redis_limiter **out);

/**
 * @brief Closes the connection and frees the limiter (the state in Redis stays).
 * @param[in] limiter  the limiter; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_redis_limiter_free(tf_redis_limiter *limiter);

/**
 * @brief Asks for `n` permits for `key` and takes them when allowed
 * (tf_rate_limiter_acquire() on the server, in one script).
 *
 * @param[in,out] limiter    the limiter.
 * @param[in]     key        the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len    the key's length, at most 65536 bytes.
 * @param[in]     now        caller's time: the time, >= 1, below 2^51;
 *                           server's time: 0.
 * @param[in]     n          the permits asked for, >= 1.
 * @param[out]    allowed    receives 1 when granted, 0 when denied.
 * @param[out]    remaining  receives the permits left (as
 *                           tf_rate_limiter_acquire()); may be NULL.
 * @param[out]    retry_at   receives 0 when granted, else the earliest time
 *                           the request could be granted, or
 *                           ::TF_RETRY_NEVER; may be NULL.
 * @retval TF_OK                   Redis decided.
 * @retval TF_ERR_NULL             limiter or allowed is NULL, or key is NULL
 *                                 with key_len > 0 (nothing decided).
 * @retval TF_ERR_INVALID_ARGUMENT n is 0, the key is too long, or now is
 *                                 out of range for the time source (nothing
 *                                 decided).
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time: the
 *                                 fallback's decision is written.
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: the fallback's
 *                                 decision is written.
 * @retval TF_ERR_OUT_OF_MEMORY    a connection could not be allocated (the
 *                                 fallback's decision is written), or another
 *                                 allocation failed (nothing is written).
 * @retval TF_ERR_INTERNAL         an unexpected exception, a bug (nothing is
 *                                 written).
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_acquire(tf_redis_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                          uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/**
 * @brief Batch form of tf_redis_limiter_acquire(), pipelined: on a single
 * server one pipeline (one round trip for the whole batch, unless the
 * script must be loaded again); on a cluster in segments of distinct keys,
 * each in up to three phases (the keys' steps, the global window's, the
 * undos), each phase one pipeline per node, the nodes one after another.
 *
 * The same decisions as `count` calls in order; each is atomic, the batch
 * is not (other clients' calls may interleave). Arguments are checked
 * before anything is sent. When Redis fails during the batch, the requests
 * whose answers arrived keep Redis's decisions and the others get the
 * fallback's (a request whose answer was lost may have been taken on the
 * server too).
 *
 * @param[in,out] limiter    the limiter.
 * @param[in]     keys       `count` key pointers; keys[i] may be NULL only
 *                           when key_lens[i] is 0.
 * @param[in]     key_lens   `count` key lengths.
 * @param[in]     count      the number of requests (0 does nothing).
 * @param[in]     times      `count` times (caller's time source), or NULL
 *                           with the server's time source.
 * @param[in]     n          the permits each request asks for, >= 1.
 * @param[out]    allowed    receives `count` answers.
 * @param[out]    remaining  receives `count` remaining counts; may be NULL.
 * @param[out]    retry_at   receives `count` retry times; may be NULL.
 * @retval TF_OK                   Redis decided every request.
 * @retval TF_ERR_NULL             a required array is NULL, or a NULL key
 *                                 has a length (nothing decided).
 * @retval TF_ERR_INVALID_ARGUMENT n is 0, a key is too long, or a time is
 *                                 out of range (nothing decided).
 * @retval TF_ERR_TIMEOUT          Redis stopped answering: see above.
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: see above.
 * @retval TF_ERR_OUT_OF_MEMORY    a connection could not be allocated (as
 *                                 above: the fallback's decisions), or another
 *                                 allocation failed (nothing is written;
 *                                 Redis may have decided some requests).
 * @retval TF_ERR_INTERNAL         an unexpected exception, a bug (as another
 *                                 allocation's failure).
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_acquire_batch(tf_redis_limiter *limiter, const void *const *keys,
                                                const size_t *key_lens, size_t count, const uint64_t *times, uint64_t n,
                                                int *allowed, uint64_t *remaining, uint64_t *retry_at);

/**
 * @brief The decision tf_redis_limiter_acquire() would make now, changing
 * nothing (tf_rate_limiter_peek()). Same arguments, statuses and fallback.
 *
 * @param[in]  limiter    the limiter.
 * @param[in]  key        the key's bytes; NULL only when key_len is 0.
 * @param[in]  key_len    the key's length, at most 65536 bytes.
 * @param[in]  now        the time (caller's source), or 0 (server's).
 * @param[in]  n          the permits asked for, >= 1.
 * @param[out] allowed    receives 1 when acquire would grant, else 0.
 * @param[out] remaining  receives the permits left after such a decision; may be NULL.
 * @param[out] retry_at   receives 0, a retry time, or ::TF_RETRY_NEVER; may be NULL.
 * @retval TF_OK                   Redis answered.
 * @retval TF_ERR_NULL             limiter or allowed is NULL, or a NULL key has a length.
 * @retval TF_ERR_INVALID_ARGUMENT n is 0, the key is too long, or now is out of range.
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time (fallback's answer written).
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer (fallback's answer written).
 * @retval TF_ERR_OUT_OF_MEMORY    as tf_redis_limiter_acquire().
 * @retval TF_ERR_INTERNAL         as tf_redis_limiter_acquire().
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_peek(tf_redis_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                       uint64_t n, int *allowed, uint64_t *remaining, uint64_t *retry_at);

/**
 * @brief Gives back up to `n` permits the key took, the most recent first,
 * to the global window too (tf_rate_limiter_refund()).
 *
 * With the embedded fallback, the embedded limiter gets the refund as well,
 * first, whatever Redis answers.
 *
 * The global window gets back the permits of the same buckets (exact mode:
 * times) as the key's. On the caller's clock a global window set after the
 * key took a permit may have grants in that permit's bucket (see
 * tf_redis_limiter_set_global_limit()): refunding the permit then takes one
 * of them out, and more than the global limit may be granted in that
 * window. Set the global limit before the traffic, or do not refund
 * permits taken before it was set.
 *
 * @param[in,out] limiter  the limiter.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length, at most 65536 bytes.
 * @param[in]     now      the time (caller's source), or 0 (server's).
 * @param[in]     n        the permits to give back.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL, or a NULL key has a length.
 * @retval TF_ERR_INVALID_ARGUMENT the key is too long or now is out of range.
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time: the refund
 *                                 may or may not have been made there (on a
 *                                 cluster, perhaps the key's part only).
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: not refunded there,
 *                                 unless the connection was lost after the
 *                                 command was sent (then as a timeout).
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed (as a timeout when it
 *                                 was after the key's part).
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_refund(tf_redis_limiter *limiter, const void *key, size_t key_len, uint64_t now,
                                         uint64_t n);

/**
 * @brief Forgets the key's requests in Redis (its override stays), and in
 * the embedded fallback.
 * @param[in,out] limiter  the limiter.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length, at most 65536 bytes.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL, or a NULL key has a length.
 * @retval TF_ERR_INVALID_ARGUMENT the key is too long.
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time: the key may
 *                                 or may not have been reset there; the
 *                                 embedded limiter's is.
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: not reset there unless
 *                                 the connection was lost after the command
 *                                 was sent; the embedded limiter's is.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed (the embedded limiter's
 *                                 key reset, Redis's not).
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_reset(tf_redis_limiter *limiter, const void *key, size_t key_len);

/**
 * @brief Gives `key` its own limit, stored in Redis for every client of the
 * prefix (tf_rate_limiter_set_key_limit(); exact mode keeps the key's
 * newest grants that fit).
 * @param[in,out] limiter  the limiter.
 * @param[in]     key      the key's bytes; NULL only when key_len is 0.
 * @param[in]     key_len  the key's length, at most 65536 bytes.
 * @param[in]     limit    the key's requests per window; 0 removes the override.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL, or a NULL key has a length.
 * @retval TF_ERR_INVALID_ARGUMENT limit above the mode's maximum, or the key
 *                                 too long (nothing changed).
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time: the override
 *                                 may or may not be stored; the embedded
 *                                 limiter has it.
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: not stored unless the
 *                                 connection was lost after the command was
 *                                 sent; the embedded limiter has it.
 * @retval TF_ERR_OUT_OF_MEMORY    the embedded limiter could not allocate
 *                                 (nothing changed), or the command or the
 *                                 connection could not be (the embedded
 *                                 limiter has it, Redis not).
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_set_key_limit(tf_redis_limiter *limiter, const void *key, size_t key_len,
                                                uint64_t limit);

/**
 * @brief Sets the global limit over all keys of the prefix, stored in Redis
 * (tf_rate_limiter_set_global_limit(): it starts an empty global window).
 *
 * The permits the keys took before are not in the new window, and a
 * refund gives a key's permits back to the global window by their buckets
 * (exact mode: times); the window's grants must not share one with them.
 * With ::TF_REDIS_TIME_SERVER the new window's clock starts just past the
 * server's time (in bucketed mode at the start of the next bucket), as the
 * embedded limiter's starts past every key's time: no permit taken before
 * is ever matched (unless the server's clock steps back, or on a cluster
 * the masters' clocks disagree). On the caller's clock the library cannot
 * know the keys' times, and the new window starts at 0, that is at its
 * first request's time: its grants in the bucket (exact mode: at the time)
 * of a permit a key took before may be taken out by that permit's refund
 * (tf_redis_limiter_refund()), and the answers in that bucket may differ
 * from the embedded limiter's. Set the global limit before the traffic, or
 * do not refund permits taken before it was set.
 *
 * @param[in,out] limiter  the limiter.
 * @param[in]     limit    permits per window over all keys; 0 removes it;
 *                         at most 2^24 in exact mode, below 2^51 in
 *                         bucketed mode (the script holds numbers as doubles).
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT an exact-mode limit above 2^24, a bucketed
 *                                 one of 2^51 or more (nothing changed).
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time: the limit may
 *                                 or may not be stored; the embedded limiter
 *                                 has it.
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: not stored unless the
 *                                 connection was lost after the command was
 *                                 sent; the embedded limiter has it.
 * @retval TF_ERR_OUT_OF_MEMORY    the embedded limiter could not allocate
 *                                 (nothing changed), or the command or the
 *                                 connection could not be (the embedded
 *                                 limiter has it, Redis not).
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_set_global_limit(tf_redis_limiter *limiter, uint64_t limit);

/**
 * @brief The limiter's counters: decisions, failed commands by status,
 * fallback decisions by kind, reconnections, script loads, and on a
 * cluster redirections and global undos.
 *
 * Writes only the first stats->size bytes; nothing on failure.
 * @param[in]     limiter  the limiter.
 * @param[in,out] stats    initialized with ::TF_REDIS_LIMITER_STATS_INIT.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             limiter or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT stats->size was not initialized.
 * @note Not thread-safe: one handle per thread.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_limiter_get_stats(const tf_redis_limiter *limiter, tf_redis_limiter_stats *stats);

/* ------------------------------------------------------------------------
 * Sketch sharing: RecencySketches published to Redis and merged back.
 * (Not wrapped by the bindings yet: SWIG, which reads this header for the
 * limiter, skips this section.)
 * ------------------------------------------------------------------------ */
#ifndef SWIG

/**
 * @brief A shared name in Redis under which processes publish their
 * RecencySketches and merge each other's (opaque handle).
 *
 * Several processes, each seeing part of a stream, keep one local
 * ::tf_recency_sketch each and call tf_redis_sketch_share_sync() now and
 * then: it merges every publisher's sketch into the local one, then
 * publishes the result. Cell-wise maximum (tf_recency_sketch_merge()) is a
 * join: commutative, associative and idempotent, so whatever the order of
 * the merges and however often a blob is merged twice, once every
 * publisher has published its part and merged the others', each local
 * sketch holds exactly the cells of one sketch that saw the whole stream
 * (docs/sketch-sharing.md).
 *
 * **State in Redis.** Under the prefix P of the options (default
 * "tf:share:") a shared name N is two keys of one hash tag, so they stay on
 * one cluster slot: the hash `P{s:N}b`, one field per publisher id holding
 * its sketch's blob (tf_recency_sketch_serialize()), and the sorted set
 * `P{s:N}t`, the time (the server's clock, in milliseconds) at which each
 * publisher's entry expires (+inf: never). A publisher only ever writes its
 * own field (HSET), so no concurrent update of another publisher is lost.
 * Each call is one Lua script (EVALSHA), atomic on the server.
 *
 * **Expiry.** A publisher that goes away stops refreshing its entry: the
 * entry expires `entry_ttl_ms` (given at creation; 0: never) after its last
 * publish, by the server's clock; merges remove expired entries
 * (::tf_redis_sketch_share_stats.expired) and never read them. Both keys
 * expire when the longest-lived entry would (PEXPIRE), unless an entry that
 * never expires was published: that publish removes their expiry
 * (PERSIST), and they keep none, even after that entry is removed, until
 * they are gone (every entry removed, or expired and removed by a merge);
 * until then an abandoned name stays in Redis. Nothing is lost by an
 * expiry once another publisher has merged the entry and published since:
 * its cells live on in that publisher's entry.
 *
 * **Untrusted blobs.** What Redis holds may have been written by anyone.
 * A merge accepts a blob only when it is at most the size of the local
 * sketch's own serialization (larger blobs are refused without being
 * transferred: ::TF_ERR_TOO_LARGE); it deserializes it with
 * ::tf_deserialize_options.max_memory set to the local sketch's memory
 * (plus 64 KiB), and merges it only when its width, depth, layout and seed
 * are the local sketch's (else ::TF_ERR_INCOMPATIBLE). A truncated,
 * corrupted or foreign blob gets deserialize's status (::TF_ERR_TRUNCATED,
 * ::TF_ERR_CHECKSUM, ::TF_ERR_BAD_MAGIC, ...). The message names the
 * refused publisher and how many entries were refused.
 *
 * **Failures.** A merge changes the local sketch only when it succeeds as a
 * whole: Redis unavailable (::TF_ERR_UNAVAILABLE), not answering in time
 * (::TF_ERR_TIMEOUT) or a refused blob (unless
 * ::TF_REDIS_SHARE_SKIP_REFUSED) leaves it as it was. A publish that fails
 * leaves the local sketch as it was too; when its reply was lost (a
 * timeout, or a connection lost after the command was sent) the entry may
 * or may not have been written, and publishing again is always safe (a
 * publish is idempotent); a remove likewise. Timeouts and reconnections
 * are the limiter's ("Failures" above: each connect, read or write waits
 * at most its timeout, and a call may need several); there is no
 * fallback: the options' time_source, fallback and idle_expiry_ms are the
 * limiter's and a share does not use them.
 *
 * **Consistency.** A merge reads every live entry in one atomic script, so
 * it sees each publisher's entry either before or after any one publish,
 * never half of one. While publishers are mid-way a merge gets a sketch
 * that saw a part of the stream: each answer (tf_recency_sketch_query())
 * is then at most the whole stream's answer and at least the answer of
 * every part that was published before the merge began.
 *
 * **Thread safety.** A share handle holds its connections and is not shared
 * by threads (one per thread, as the limiter's). The sketches passed to it
 * follow their own rules: publish only reads its sketch (other readers may
 * run at the same time, and updates too with ::TF_RECENCY_SKETCH_CONCURRENT);
 * merge needs its sketch to itself unless it is
 * ::TF_RECENCY_SKETCH_CONCURRENT (as tf_recency_sketch_merge(), which takes
 * each cell's maximum atomically then: updates, queries and other merges
 * may run meanwhile).
 *
 * @since 0.1.0
 */
typedef struct tf_redis_sketch_share tf_redis_sketch_share;

/**
 * @brief tf_redis_sketch_share_merge_into() flag: merge the entries that
 * are accepted, skip (and count) the refused ones, and succeed.
 *
 * Without it one refused entry fails the whole merge and nothing is
 * merged: a publisher with another shape or seed is an error to fix, and
 * skipping it silently would give answers that miss its part of the stream.
 * @since 0.1.0
 */
#define TF_REDIS_SHARE_SKIP_REFUSED 0x1u

/** @brief The longest entry_ttl_ms: 2^40 milliseconds (about 35 years). @since 0.1.0 */
#define TF_REDIS_SHARE_MAX_TTL_MS ((uint64_t)1 << 40)

/**
 * @brief A share's counters, from tf_redis_sketch_share_get_stats().
 *
 * A versioned struct: initialize it with ::TF_REDIS_SKETCH_SHARE_STATS_INIT.
 * @since 0.1.0
 */
typedef struct tf_redis_sketch_share_stats {
    /** sizeof(tf_redis_sketch_share_stats) as the caller was compiled. @since 0.1.0 */
    size_t size;
    /** Publishes Redis confirmed. @since 0.1.0 */
    uint64_t publishes;
    /** Merges that succeeded (the local sketch updated). @since 0.1.0 */
    uint64_t merges;
    /** Entries merged into a local sketch, over all merges. @since 0.1.0 */
    uint64_t entries_merged;
    /** Entries refused (too large, unreadable, another shape or seed),
     *  over all merges. @since 0.1.0 */
    uint64_t entries_refused;
    /** Expired entries this handle's merges removed from Redis. @since 0.1.0 */
    uint64_t expired;
    /** Calls that returned ::TF_ERR_TIMEOUT. @since 0.1.0 */
    uint64_t timeouts;
    /** Calls that returned ::TF_ERR_UNAVAILABLE. @since 0.1.0 */
    uint64_t unavailable;
    /** Connections re-established after a failure. @since 0.1.0 */
    uint64_t reconnects;
    /** Cluster: MOVED and ASK redirections followed. @since 0.1.0 */
    uint64_t redirects;
} tf_redis_sketch_share_stats;

/**
 * @brief Initializer of ::tf_redis_sketch_share_stats: `size` set, every
 * other field 0.
 * @since 0.1.0
 */
#define TF_REDIS_SKETCH_SHARE_STATS_INIT \
    { sizeof(tf_redis_sketch_share_stats), 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * @brief Opens the shared name `name` on a Redis server or cluster, as
 * publisher `publisher`, and loads the share's script (SCRIPT LOAD).
 *
 * @param[in]  name          the shared name: 1..256 bytes, NUL-terminated,
 *                           without '{' or '}' (it is the hash tag).
 *                           Handles of one prefix and name share their entries.
 * @param[in]  publisher     this handle's publisher id: 1..256 bytes,
 *                           NUL-terminated, unique among the processes that
 *                           publish under `name` (two handles of one id
 *                           overwrite each other's entry); NULL for a handle
 *                           that only merges. Reusing the id of a restarted
 *                           process lets it find its own entry again.
 * @param[in]  entry_ttl_ms  how long this publisher's entry stays after its
 *                           last publish, in milliseconds of the server's
 *                           clock, at most ::TF_REDIS_SHARE_MAX_TTL_MS;
 *                           0: it never expires.
 * @param[in]  options       a ::tf_redis_options initialized with
 *                           ::TF_REDIS_OPTIONS_INIT, or NULL for the
 *                           defaults (prefix NULL: "tf:share:").
 * @param[out] out           receives the share, owned by the caller.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             name or out is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT name or publisher empty, too long or (name)
 *                                 with a brace, entry_ttl_ms too large, or an
 *                                 option out of range.
 * @retval TF_ERR_TIMEOUT          the server did not answer in time.
 * @retval TF_ERR_UNAVAILABLE      the server cannot be reached or refused the script.
 * @retval TF_ERR_OUT_OF_MEMORY    an allocation failed.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_sketch_share_new(const char *name, const char *publisher, uint64_t entry_ttl_ms,
                                           const tf_redis_options *options, tf_redis_sketch_share **out);

/**
 * @brief Closes the connections and frees the share (its entry stays in
 * Redis until it expires or is removed).
 * @param[in] share  the share; NULL is a no-op.
 * @note Exclusive.
 * @since 0.1.0
 */
TF_API void tf_redis_sketch_share_free(tf_redis_sketch_share *share);

/**
 * @brief Publishes `sketch` as this publisher's entry (its blob replaces
 * the entry's previous one) and renews the entry's expiry.
 *
 * The entry is exactly the sketch: merge first (tf_redis_sketch_share_sync()
 * does both) so that the entry only ever grows, or a restarted publisher's
 * empty sketch would replace cells the others have not merged yet.
 *
 * @param[in,out] share   the share, created with a publisher id.
 * @param[in]     sketch  the sketch to publish; unchanged.
 * @retval TF_OK                   Redis stored the entry.
 * @retval TF_ERR_NULL             share or sketch is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT the share has no publisher id.
 * @retval TF_ERR_TOO_LARGE        the blob exceeds 512 MiB (Redis's largest string).
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time (the entry may
 *                                 or may not be written; publish again).
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: nothing written,
 *                                 unless the connection was lost after the
 *                                 command was sent (then as a timeout).
 * @retval TF_ERR_OUT_OF_MEMORY    the blob could not be allocated.
 * @note Exclusive on `share`; read-only on `sketch`.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_sketch_share_publish(tf_redis_sketch_share *share, const tf_recency_sketch *sketch);

/**
 * @brief Merges every live entry of the shared name (this publisher's
 * included) into `sketch`, by cell-wise maximum; removes expired entries.
 *
 * All or nothing: the entries are read in one atomic script, each is
 * checked (see "Untrusted blobs" above) and merged into a scratch sketch,
 * and `sketch` changes only when every entry was accepted (or with
 * ::TF_REDIS_SHARE_SKIP_REFUSED, the accepted ones). No entry (a name
 * nobody published under) is a success that changes nothing.
 *
 * @param[in,out] share    the share.
 * @param[in,out] sketch   the local sketch merged into.
 * @param[in]     flags    0 or ::TF_REDIS_SHARE_SKIP_REFUSED.
 * @param[out]    merged   receives the number of entries merged; may be NULL.
 * @param[out]    refused  receives the number of entries refused; may be NULL.
 *                         Both are written on success and on a refusal.
 * @retval TF_OK                      every entry merged (or the refused
 *                                    ones skipped, with the flag).
 * @retval TF_ERR_NULL                share or sketch is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT    an unknown flag.
 * @retval TF_ERR_INCOMPATIBLE        an entry of another width, depth,
 *                                    layout or seed (nothing merged).
 * @retval TF_ERR_TOO_LARGE           an entry larger than the local sketch's
 *                                    blob (nothing merged).
 * @retval TF_ERR_TRUNCATED           (and ::TF_ERR_BAD_MAGIC,
 *                                    ::TF_ERR_UNSUPPORTED_VERSION,
 *                                    ::TF_ERR_WRONG_KIND, ::TF_ERR_CHECKSUM,
 *                                    ::TF_ERR_CORRUPT) an unreadable entry,
 *                                    with deserialize's status (nothing merged).
 * @retval TF_ERR_TIMEOUT             Redis did not answer in time (nothing merged).
 * @retval TF_ERR_UNAVAILABLE         Redis cannot answer (nothing merged).
 * @retval TF_ERR_OUT_OF_MEMORY       an allocation failed (nothing merged).
 * @note Exclusive on `share`; exclusive on `sketch` unless it is
 *       ::TF_RECENCY_SKETCH_CONCURRENT (as tf_recency_sketch_merge()).
 * @since 0.1.0
 */
TF_API tf_status tf_redis_sketch_share_merge_into(tf_redis_sketch_share *share, tf_recency_sketch *sketch,
                                                  uint32_t flags, size_t *merged, size_t *refused);

/**
 * @brief tf_redis_sketch_share_merge_into() (flags 0) then
 * tf_redis_sketch_share_publish() of the result: the one call a publisher
 * makes now and then.
 *
 * When the merge fails nothing is published (and the sketch is unchanged);
 * when the publish fails the sketch keeps what the merge gave it.
 *
 * @param[in,out] share   the share, created with a publisher id.
 * @param[in,out] sketch  the local sketch.
 * @retval TF_OK  merged and published.
 * @retval other  the first failing step's status (see those two functions);
 *                ::TF_ERR_INVALID_ARGUMENT, before anything, when the share
 *                has no publisher id.
 * @note Exclusive on `share`; exclusive on `sketch` unless it is
 *       ::TF_RECENCY_SKETCH_CONCURRENT.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_sketch_share_sync(tf_redis_sketch_share *share, tf_recency_sketch *sketch);

/**
 * @brief Removes a publisher's entry from the shared name now (a publisher
 * leaving for good, or an operator removing an entry that merges refuse).
 *
 * @param[in,out] share      the share.
 * @param[in]     publisher  the id whose entry goes (1..256 bytes,
 *                           NUL-terminated); removing an absent entry succeeds.
 * @retval TF_OK                   the entry is gone.
 * @retval TF_ERR_NULL             share or publisher is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT publisher is empty or too long.
 * @retval TF_ERR_TIMEOUT          Redis did not answer in time (maybe not removed).
 * @retval TF_ERR_UNAVAILABLE      Redis cannot answer: not removed, unless the
 *                                 connection was lost after the command was
 *                                 sent (then maybe removed).
 * @note Exclusive on `share`.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_sketch_share_remove(tf_redis_sketch_share *share, const char *publisher);

/**
 * @brief The share's counters: publishes, merges, entries merged, refused
 * and expired, failures by status, reconnections and redirections.
 *
 * Writes only the first stats->size bytes; nothing on failure.
 * @param[in]     share  the share.
 * @param[in,out] stats  initialized with ::TF_REDIS_SKETCH_SHARE_STATS_INIT.
 * @retval TF_OK                   success.
 * @retval TF_ERR_NULL             share or stats is NULL.
 * @retval TF_ERR_INVALID_ARGUMENT stats->size was not initialized.
 * @note Read-only on `share`.
 * @since 0.1.0
 */
TF_API tf_status tf_redis_sketch_share_get_stats(const tf_redis_sketch_share *share,
                                                 tf_redis_sketch_share_stats *stats);

#endif /* SWIG */

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_REDIS_H */
