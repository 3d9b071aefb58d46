/*
 * bindings/temporalfilters_redis.i - the SWIG interface of the Redis limiter
 * (temporalfilters/redis.h, libtemporalfilters-redis), shared by the Java,
 * Go and Ruby bindings.
 *
 * A module of its own in every language, next to the core's
 * (temporalfilters.i): the core bindings never link the companion library,
 * so a program without Redis needs neither it nor hiredis, and only a
 * program that uses the Redis limiter loads this module (Java: the JNI
 * library temporalfilters_redis_jni, loaded by the class RedisLimiter; Go:
 * the package temporalfilters.org/go/temporalfilters/redis; Ruby: require
 * "temporalfilters/redis"). Each language runs its own
 * bindings/<lang>/temporalfilters_<lang>.i (its typemaps and %exception
 * block) with the SWIG symbol TF_BINDING_REDIS defined, which %includes
 * this file in place of temporalfilters.i.
 *
 * Class: RedisLimiterNative (the C handle tf_redis_limiter itself, as in
 * temporalfilters.i) and the read-only value class RedisLimiterStatsNative.
 * Constants: the header's TF_REDIS_* values and the defaults of
 * tf_redis_options (TF_BINDING_REDIS_*), read by the C compiler.
 *
 * Failures of Redis: a decision (acquire, peek, acquire_batch) that gets
 * TF_ERR_TIMEOUT or TF_ERR_UNAVAILABLE still writes the fallback's decision
 * (redis.h, "Failures"), which the language must hand to its caller with
 * the error. These calls therefore do not record those two statuses in the
 * error slot (an exception raised by the %exception block would drop the
 * outputs); they return the decision as usual and write the status, negated
 * (14 or 15), to the output `unavailable` (0 when Redis decided), and the
 * library's message to a thread-local copy. Java reads it with
 * failure_message() next, on the same thread (a Java thread, virtual ones
 * included, stays on its carrier thread between two calls that do not
 * block). Go's goroutines and Ruby's threads under an M:N scheduler may
 * change threads between two calls, so their wrappers copy the message in
 * the same call (typemaps of `unavailable` in temporalfilters_go.i and
 * temporalfilters_ruby.i). The
 * language layer then raises its "unavailable" family error carrying the
 * fallback's decision. Every other failure, and every failure of the other
 * methods, goes through the error slot like everywhere else.
 */

%include "temporalfilters_slot.i"

%{
#include "temporalfilters/redis.h"

/* The handle class is the C type itself (see temporalfilters.i). */
#define RedisLimiterNative tf_redis_limiter

/* The message of the last TF_ERR_TIMEOUT / TF_ERR_UNAVAILABLE a decision
 * returned on this thread (see above). */
static __thread char tf_binding_redis_failure_[512];

/* What a decision's status becomes: TF_OK -> 0; the two statuses of Redis
 * failures -> their negation in *unavailable, the message kept, nothing
 * recorded; anything else recorded in the error slot. */
static void tf_binding_redis_status(tf_status st, uint64_t *unavailable) {
    *unavailable = 0;
    if (st == TF_ERR_TIMEOUT || st == TF_ERR_UNAVAILABLE) {
        *unavailable = (uint64_t)(-(int64_t)st);
        snprintf(tf_binding_redis_failure_, sizeof tf_binding_redis_failure_, "%s", tf_last_error_message());
    } else {
        tf_binding_check(st);
    }
}

/* The defaults of tf_redis_options (the constants TF_BINDING_REDIS_*). */
static tf_redis_options tf_binding_redis_defaults(void) {
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    return o;
}
#define TF_BINDING_REDIS_PORT_ (tf_binding_redis_defaults().port)
#define TF_BINDING_REDIS_CONNECT_TIMEOUT_MS_ (tf_binding_redis_defaults().connect_timeout_ms)
#define TF_BINDING_REDIS_COMMAND_TIMEOUT_MS_ (tf_binding_redis_defaults().command_timeout_ms)

/* A string option: NULL and "" both mean the library's default (Go passes
 * "" for none). */
static const char *tf_binding_redis_str(const char *s) { return s && *s ? s : NULL; }
%}

%rename("$ignore", %$isfunction, regextarget=1) "^tf_redis_limiter_";
%rename("$ignore", %$isvariable, regextarget=1, fullname=1) "^tf_[a-z_]+::size$";
%ignore tf_redis_options;
%rename(RedisLimiterStatsNative) tf_redis_limiter_stats;
/* (temporalfilters/common.h, whose TF_API the declarations carry, belongs
 * to the core's module: SWIG only needs the macro.) */
#define TF_API
%nodefaultctor;
%immutable;
%include "temporalfilters/redis.h"
%mutable;
%clearnodefaultctor;

%constant uint32_t TF_BINDING_REDIS_PORT = TF_BINDING_REDIS_PORT_;
%constant uint32_t TF_BINDING_REDIS_CONNECT_TIMEOUT_MS = TF_BINDING_REDIS_CONNECT_TIMEOUT_MS_;
%constant uint32_t TF_BINDING_REDIS_COMMAND_TIMEOUT_MS = TF_BINDING_REDIS_COMMAND_TIMEOUT_MS_;

/* The decisions' per-key outputs use the core's patterns (see
 * temporalfilters.i). */
%apply (uint64_t *out_times, size_t out_count) {
    (uint64_t *out_remaining, size_t remaining_count),
    (uint64_t *out_retry_at, size_t retry_at_count)
};

%nodefaultctor RedisLimiterNative;
%newobject RedisLimiterNative::stats;
typedef struct RedisLimiterNative {} RedisLimiterNative;
%extend RedisLimiterNative {
    /* tf_redis_limiter_new with every field of tf_redis_options in order
     * (host, prefix, cluster_seeds: NULL or "" for the default). */
    RedisLimiterNative(uint64_t limit, uint64_t window, uint64_t bucket_width, uint32_t flags, const char *host,
                       uint32_t port, uint32_t connect_timeout_ms, uint32_t command_timeout_ms, uint32_t time_source,
                       uint32_t fallback, uint32_t reconnect_min_ms, uint32_t reconnect_max_ms,
                       uint64_t idle_expiry_ms, const char *prefix, uint32_t mode, const char *cluster_seeds) {
        tf_redis_options o = TF_REDIS_OPTIONS_INIT;
        o.host = tf_binding_redis_str(host);
        o.port = port;
        o.connect_timeout_ms = connect_timeout_ms;
        o.command_timeout_ms = command_timeout_ms;
        o.time_source = time_source;
        o.fallback = fallback;
        o.reconnect_min_ms = reconnect_min_ms;
        o.reconnect_max_ms = reconnect_max_ms;
        o.idle_expiry_ms = idle_expiry_ms;
        o.prefix = tf_binding_redis_str(prefix);
        o.mode = mode;
        o.cluster_seeds = tf_binding_redis_str(cluster_seeds);
        TF_BINDING_RETURN(RedisLimiterNative *, tf_redis_limiter_new(limit, window, bucket_width, flags, &o, &v));
    }
    ~RedisLimiterNative() { tf_redis_limiter_free($self); }

    /* The message of the last Redis failure a decision reported on this
     * thread through `unavailable` (see above). */
    static const char *failure_message() { return tf_binding_redis_failure_; }

    /* Returns 1 when allowed, 0 when denied; *remaining, *retry_at as in C;
     * *unavailable 0, or 14 / 15 (-TF_ERR_TIMEOUT / -TF_ERR_UNAVAILABLE)
     * with the fallback's decision written. */
    int acquire(const void *key, size_t key_len, uint64_t now, uint64_t n, uint64_t *remaining, uint64_t *retry_at,
                uint64_t *unavailable) {
        int v = 0;
        *remaining = 0;
        *retry_at = 0;
        tf_binding_redis_status(tf_redis_limiter_acquire($self, key, key_len, now, n, &v, remaining, retry_at),
                                unavailable);
        return v;
    }
    int peek(const void *key, size_t key_len, uint64_t now, uint64_t n, uint64_t *remaining, uint64_t *retry_at,
             uint64_t *unavailable) {
        int v = 0;
        *remaining = 0;
        *retry_at = 0;
        tf_binding_redis_status(tf_redis_limiter_peek($self, key, key_len, now, n, &v, remaining, retry_at),
                                unavailable);
        return v;
    }

    /* tf_redis_limiter_acquire_batch, as RateLimiterNative's acquire_batch
     * (keys laid end to end, one answer per key in each output, every
     * length checked first; returns the number granted), with `times`
     * empty for the server's clock, and *unavailable as acquire's. */
    uint64_t acquire_batch(const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count,
                           const uint64_t *times, size_t time_count, uint64_t n, int32_t *out_allowed,
                           size_t allowed_count, uint64_t *out_remaining, size_t remaining_count,
                           uint64_t *out_retry_at, size_t retry_at_count, uint64_t *unavailable) {
        *unavailable = 0;
        if (time_count != key_count && time_count != 0) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT,
                            "acquire_batch: one timestamp per key is needed (none with the server's clock)");
            return 0;
        }
        if (allowed_count != key_count || remaining_count != key_count || retry_at_count != key_count) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "acquire_batch: every output must hold one entry per key");
            return 0;
        }
        if (n == 0) {
            tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "acquire_batch: n must be >= 1");
            return 0;
        }
        const void *small[TF_BINDING_SMALL_BATCH], **ptrs = NULL;
        size_t small_lens[TF_BINDING_SMALL_BATCH], *lens = NULL;
        if (tf_binding_split_keys(keys_data, keys_data_len, key_lens, key_count, small, small_lens,
                                  TF_BINDING_SMALL_BATCH, &ptrs, &lens) != 0)
            return 0;
        tf_status st = tf_redis_limiter_acquire_batch($self, ptrs, lens, key_count, time_count ? times : NULL, n,
                                                      (int *)out_allowed, out_remaining, out_retry_at);
        tf_binding_redis_status(st, unavailable);
        uint64_t granted = 0;
        if (st == TF_OK || *unavailable != 0) {
            for (size_t i = 0; i < key_count; ++i) granted += out_allowed[i] != 0;
        }
        tf_binding_free_split(ptrs, lens, small);
        return granted;
    }

    void refund(const void *key, size_t key_len, uint64_t now, uint64_t n) {
        tf_binding_check(tf_redis_limiter_refund($self, key, key_len, now, n));
    }
    void reset(const void *key, size_t key_len) { tf_binding_check(tf_redis_limiter_reset($self, key, key_len)); }
    void set_key_limit(const void *key, size_t key_len, uint64_t limit) {
        tf_binding_check(tf_redis_limiter_set_key_limit($self, key, key_len, limit));
    }
    void set_global_limit(uint64_t limit) { tf_binding_check(tf_redis_limiter_set_global_limit($self, limit)); }

    /* tf_redis_limiter_get_stats. */
    tf_redis_limiter_stats *stats() {
        TF_BINDING_GET_STRUCT(tf_redis_limiter_stats, tf_redis_limiter_get_stats($self, &v),
                              TF_REDIS_LIMITER_STATS_INIT);
    }
}
