package org.temporalfilters;

import java.util.Arrays;

/**
 * The sliding-window rate limiter of {@link RateLimiter} with its state in
 * Redis (one server or a Redis Cluster), shared by every process that uses
 * the same server and prefix: the same configuration (limit, window, bucket
 * width, {@link #EXACT}, per-key limits, a global limit) and the same
 * decisions as {@link RateLimiter} on the same request sequence (one
 * exception on the caller's clock: see {@link #setGlobalLimit}), each
 * decision one Lua script on the server (the native
 * {@code temporalfilters/redis.h}, in the companion library
 * {@code libtemporalfilters-redis}, states the guarantees in full).
 *
 * <p><b>Native library.</b> The class has a JNI library of its own,
 * {@code libtemporalfilters_redis_jni.so} (built when temporalfilters is
 * configured with its {@code redis} option, installed beside the core's),
 * loaded the first time the class is used and found the way the core's is
 * (the property {@code org.temporalfilters.jni}, {@code java.library.path},
 * the jni directories of the jar's prefix and of {@code /usr}); a program
 * that never uses this class needs neither it nor Redis's client library.
 * When it cannot be loaded, the first use throws the
 * {@link UnsatisfiedLinkError} that names every place tried.
 *
 * <p><b>Creation.</b> {@link #builder(long, long, long)} takes the limits
 * (as {@link RateLimiter#RateLimiter(long, long, long, long, int)}) and sets
 * the options by name: the server's address or a cluster's seed node, the
 * timeouts, the time source, the fallback, the reconnection backoff, the
 * idle expiry and the key prefix;
 * {@code RedisLimiter.builder(100, 60_000, 1000).port(6379).fallback(Fallback.LOCAL).build()}.
 *
 * <p><b>Decisions</b> ({@link #acquire}, {@link #peek}, {@link #acquireBatch})
 * are {@link RateLimiter.Decision} values, equal to the embedded limiter's.
 * Times are the caller's ({@link TimeSource#CALLER}, the default: any unit,
 * but the keys' idle expiry counts them as milliseconds unless
 * {@link Builder#idleExpiryMillis} is set) or the server's clock in
 * milliseconds ({@link TimeSource#SERVER}: pass {@code now} = 0, and
 * {@code times} empty to {@link #acquireBatch}).
 *
 * <p><b>When Redis cannot answer</b> (a stopped server, a timeout), a
 * decision throws {@link UnavailableException} ({@link Status#TIMEOUT} or
 * {@link Status#UNAVAILABLE}), each connect, read and write bounded by the
 * timeout (a call may need several), carrying the decision of
 * the fallback chosen at creation ({@link UnavailableException#decision()},
 * or {@link UnavailableException#decisions()} for a batch):
 * {@link Fallback#DENY} (the default), {@link Fallback#ALLOW} or
 * {@link Fallback#LOCAL} (an embedded limiter of the same limits, one per
 * limiter, not per process, whose grants are not replayed into Redis when it is back).
 * {@link #stats()} counts each. The other calls throw the exception without
 * a decision. The connection is re-established by itself after a backoff.
 *
 * <p>Keys, numbers, errors and resources are as {@link TemporalFilters}
 * describes.
 *
 * <p><b>Threads</b>: the limiter holds its connections, and its calls are
 * serialized (one at a time, in the order they take its lock): it may be
 * shared by threads, but for parallel decisions use one limiter per thread
 * (or a pool). {@link #close} waits for the call in flight. Limiters of the
 * same prefix share the state in Redis.
 */
public final class RedisLimiter extends NativeObject<RedisLimiterNative> {
    /** Flag: exact mode, as {@link RateLimiter#EXACT}. */
    public static final int EXACT = RateLimiter.EXACT;

    /** Whose clock a decision uses ({@link Builder#timeSource}). */
    public enum TimeSource {
        /** The caller's {@code now} (the default; {@code TF_REDIS_TIME_CALLER}). */
        CALLER,
        /** The server's {@code TIME} in milliseconds: pass {@code now} = 0 ({@code TF_REDIS_TIME_SERVER}). */
        SERVER;

        /* The C value. */
        long code() {
            return this == CALLER ? TemporalFiltersRedisNative.TF_REDIS_TIME_CALLER
                                  : TemporalFiltersRedisNative.TF_REDIS_TIME_SERVER;
        }
    }

    /** What a decision answers when Redis cannot ({@link Builder#fallback}). */
    public enum Fallback {
        /** Deny (fail closed; the default; {@code TF_REDIS_FALLBACK_DENY}). */
        DENY,
        /** Allow (fail open; {@code TF_REDIS_FALLBACK_ALLOW}). */
        ALLOW,
        /**
         * Decide with an embedded {@link RateLimiter} of the same limits, one
         * per limiter ({@code TF_REDIS_FALLBACK_LOCAL}); its grants are not
         * replayed into Redis once it is back, so for one window after an
         * outage a key may get up to its limit from each.
         */
        LOCAL;

        /* The C value. */
        long code() {
            switch (this) {
                case DENY:
                    return TemporalFiltersRedisNative.TF_REDIS_FALLBACK_DENY;
                case ALLOW:
                    return TemporalFiltersRedisNative.TF_REDIS_FALLBACK_ALLOW;
                default:
                    return TemporalFiltersRedisNative.TF_REDIS_FALLBACK_LOCAL;
            }
        }
    }

    /**
     * The limiter's counters ({@code tf_redis_limiter_stats}).
     *
     * @param decisions       decisions Redis made (acquire, peek, each request of a batch)
     * @param timeouts        calls that failed with {@link Status#TIMEOUT}
     * @param unavailable     calls that failed with {@link Status#UNAVAILABLE}
     * @param fallbackDenied  decisions {@link Fallback#DENY} made
     * @param fallbackAllowed decisions {@link Fallback#ALLOW} made
     * @param fallbackLocal   decisions the embedded fallback ({@link Fallback#LOCAL}) made, granted or not
     * @param reconnects      connections re-established after a failure
     * @param scriptLoads     times the script was loaded: at creation (on every
     *                        master of a cluster) and after a server answered
     *                        that it did not have it (restarted or flushed)
     * @param redirects       cluster: MOVED and ASK redirections followed
     * @param globalUndos     cluster: requests whose key allowed and whose global
     *                        window denied (or could not answer), whose key's
     *                        permits were given back
     */
    public record Stats(long decisions, long timeouts, long unavailable, long fallbackDenied, long fallbackAllowed,
            long fallbackLocal, long reconnects, long scriptLoads, long redirects, long globalUndos) {
    }

    /**
     * The options of a new limiter, each named, every one defaulting to
     * {@code TF_REDIS_OPTIONS_INIT}'s value; {@link #build()} connects and
     * creates it ({@code tf_redis_limiter_new}). A builder may be reused; it
     * is not thread-safe.
     */
    public static final class Builder {
        private final long limit;
        private final long window;
        private final long bucketWidth;
        private int flags;
        private String host;
        private long port = TemporalFiltersRedisNative.TF_BINDING_REDIS_PORT;
        private boolean cluster;
        private String clusterSeeds;
        private long connectTimeoutMillis = TemporalFiltersRedisNative.TF_BINDING_REDIS_CONNECT_TIMEOUT_MS;
        private long commandTimeoutMillis = TemporalFiltersRedisNative.TF_BINDING_REDIS_COMMAND_TIMEOUT_MS;
        private TimeSource timeSource = TimeSource.CALLER;
        private Fallback fallback = Fallback.DENY;
        private long reconnectMinMillis;
        private long reconnectMaxMillis;
        private long idleExpiryMillis;
        private String prefix;

        private Builder(long limit, long window, long bucketWidth) {
            this.limit = limit;
            this.window = window;
            this.bucketWidth = bucketWidth;
        }

        /** The creation flags: 0 (the default) or {@link #EXACT}. */
        public Builder flags(int flags) {
            this.flags = flags;
            return this;
        }

        /** The server's host name or address (default {@code "127.0.0.1"}; null for the default). */
        public Builder host(String host) {
            this.host = host;
            return this;
        }

        /** The server's TCP port, 1 .. 65535 (default 6379); a seed node's with {@link #cluster}. */
        public Builder port(long port) {
            this.port = port;
            return this;
        }

        /**
         * The address is a seed node of a Redis Cluster; {@code seeds} are
         * more of them, {@code "host:port[,host:port...]"}, asked for the slot
         * table when it does not answer (null or empty for none).
         */
        public Builder cluster(String seeds) {
            this.cluster = true;
            this.clusterSeeds = seeds;
            return this;
        }

        /** The connect timeout in milliseconds, &gt;= 1 (default 1000). */
        public Builder connectTimeoutMillis(long millis) {
            this.connectTimeoutMillis = millis;
            return this;
        }

        /** The command timeout in milliseconds, &gt;= 1 (default 1000). */
        public Builder commandTimeoutMillis(long millis) {
            this.commandTimeoutMillis = millis;
            return this;
        }

        /** Whose clock decides (default {@link TimeSource#CALLER}). */
        public Builder timeSource(TimeSource source) {
            this.timeSource = Native.notNull(source, "timeSource");
            return this;
        }

        /** The decision when Redis cannot answer (default {@link Fallback#DENY}). */
        public Builder fallback(Fallback fallback) {
            this.fallback = Native.notNull(fallback, "fallback");
            return this;
        }

        /**
         * The backoff before reconnecting after a failure, doubling from
         * {@code minMillis} to {@code maxMillis} (0 each: 100 and 5000).
         */
        public Builder reconnectMillis(long minMillis, long maxMillis) {
            this.reconnectMinMillis = minMillis;
            this.reconnectMaxMillis = maxMillis;
            return this;
        }

        /**
         * How long an idle key's window stays in Redis after its last
         * request, in milliseconds (0, the default: one window, the caller's
         * unit taken as milliseconds). At least the window in real time, or
         * keys are forgotten while they still hold permits.
         */
        public Builder idleExpiryMillis(long millis) {
            this.idleExpiryMillis = millis;
            return this;
        }

        /**
         * The prefix of every Redis key the limiter uses (default
         * {@code "tf:rl:"}; null for the default): at most 256 bytes, without
         * '{' or '}'. Limiters of the same prefix share their state.
         */
        public Builder prefix(String prefix) {
            this.prefix = prefix;
            return this;
        }

        /**
         * Connects, loads the limiter's script and creates the limiter. The
         * per-key limits and the global limit already stored under the
         * prefix apply at once.
         *
         * @throws InvalidArgumentException a limit, window or width
         *         {@link RateLimiter} refuses, a window of 2^51 or more, a flag
         *         other than {@link #EXACT}, an option out of range, a negative
         *         number
         * @throws UnavailableException the server cannot be reached, refused
         *         the script, or did not answer in time (without a decision)
         * @throws NativeOutOfMemoryException the limiter does not fit in memory
         * @throws UnsatisfiedLinkError the Redis limiter's JNI library cannot
         *         be loaded (the message names every place tried)
         */
        public RedisLimiter build() {
            long mode = cluster ? TemporalFiltersRedisNative.TF_REDIS_MODE_CLUSTER
                                : TemporalFiltersRedisNative.TF_REDIS_MODE_SERVER;
            return new RedisLimiter(new RedisLimiterNative(limit, window, bucketWidth, flags, host, port,
                    connectTimeoutMillis, commandTimeoutMillis, timeSource.code(), fallback.code(), reconnectMinMillis,
                    reconnectMaxMillis, idleExpiryMillis, prefix, mode, clusterSeeds));
        }
    }

    /**
     * A new {@link Builder}: each key at most {@code limit} permits per
     * {@code window}, in buckets of {@code bucketWidth} (ignored, may be 0,
     * with {@link #EXACT}), as {@link RateLimiter#RateLimiter(long, long, long)};
     * every option at its default.
     */
    public static Builder builder(long limit, long window, long bucketWidth) {
        return new Builder(limit, window, bucketWidth);
    }

    /* Serializes the calls (the handle holds its connections). */
    private final Object lock = new Object();

    private RedisLimiter(RedisLimiterNative handle) {
        super(handle, true);
    }

    /* acquire or peek of the native proxy. */
    private interface NativeDecision {
        int decide(RedisLimiterNative h, byte[] key, long now, long n, long[] remaining, long[] retryAt,
                long[] unavailable);
    }

    private RateLimiter.Decision decide(NativeDecision op, byte[] key, long now, long n) {
        long[] remaining = new long[1];
        long[] retryAt = new long[1];
        long[] unavailable = new long[1];
        int allowed = serialized(h -> op.decide(h, key, now, n, remaining, retryAt, unavailable));
        RateLimiter.Decision d = new RateLimiter.Decision(allowed != 0, remaining[0], retryAt[0]);
        if (unavailable[0] != 0) {
            throw failure(unavailable[0]).withDecision(d);
        }
        return d;
    }

    /* One native call under the lock. */
    private <R> R serialized(java.util.function.Function<RedisLimiterNative, R> op) {
        return call(h -> {
            synchronized (lock) {
                return op.apply(h);
            }
        });
    }

    /* The exception of a decision Redis could not make (its status negated
     * in u), with the message the native layer kept. */
    private static UnavailableException failure(long u) {
        TemporalFiltersException e = TemporalFiltersException.of((int) -u, statusName((int) -u),
                RedisLimiterNative.failure_message());
        if (!(e instanceof UnavailableException)) {
            throw TemporalFiltersException.of(Status.INTERNAL, "unexpected status " + -u + ": " + e.getMessage());
        }
        return (UnavailableException) e;
    }

    private static String statusName(int code) {
        Status s = Status.lookup(code);
        return s == null ? "TF_ERR_" + code : s.cName();
    }

    /**
     * Asks for {@code n} permits for {@code key} at {@code now} and takes
     * them when allowed, as {@link RateLimiter#acquire(byte[], long, long)}
     * (the key's window and the global one, in one script on the server).
     *
     * @param now the current time, &gt;= 1, below 2^51 ({@link TimeSource#CALLER}),
     *            or 0 ({@link TimeSource#SERVER})
     * @param n   permits, &gt;= 1
     * @throws InvalidArgumentException a null key, a key over 65536 bytes,
     *         n &lt;= 0, a time out of range for the time source (nothing decided)
     * @throws UnavailableException Redis did not answer in time
     *         ({@link Status#TIMEOUT}) or cannot answer
     *         ({@link Status#UNAVAILABLE}); its {@link UnavailableException#decision()}
     *         is the fallback's
     */
    public RateLimiter.Decision acquire(byte[] key, long now, long n) {
        return decide(RedisLimiterNative::acquire, key, now, n);
    }

    /** {@link #acquire(byte[], long, long)} with the key's UTF-8 bytes. */
    public RateLimiter.Decision acquire(String key, long now, long n) {
        return acquire(Native.utf8(key, "key"), now, n);
    }

    /** One permit: {@link #acquire(byte[], long, long) acquire(key, now, 1)}. */
    public RateLimiter.Decision acquire(byte[] key, long now) {
        return acquire(key, now, 1);
    }

    /** One permit, with the key's UTF-8 bytes. */
    public RateLimiter.Decision acquire(String key, long now) {
        return acquire(Native.utf8(key, "key"), now, 1);
    }

    /**
     * The decision {@link #acquire(byte[], long, long)} would make at
     * {@code now}, changing nothing.
     *
     * @throws InvalidArgumentException as {@code acquire}
     * @throws UnavailableException as {@code acquire}, with the fallback's answer
     */
    public RateLimiter.Decision peek(byte[] key, long now, long n) {
        return decide(RedisLimiterNative::peek, key, now, n);
    }

    /** {@link #peek(byte[], long, long)} with the key's UTF-8 bytes. */
    public RateLimiter.Decision peek(String key, long now, long n) {
        return peek(Native.utf8(key, "key"), now, n);
    }

    /** One permit: {@link #peek(byte[], long, long) peek(key, now, 1)}. */
    public RateLimiter.Decision peek(byte[] key, long now) {
        return peek(key, now, 1);
    }

    /** One permit, with the key's UTF-8 bytes. */
    public RateLimiter.Decision peek(String key, long now) {
        return peek(Native.utf8(key, "key"), now, 1);
    }

    /**
     * {@link #acquire(byte[], long, long) acquire}{@code (keys[i], times[i], n)}
     * for every key of the batch, in order, sent as one pipeline (one round
     * trip; on a cluster, one per node and phase). Each decision is atomic,
     * the batch is not: other clients' calls may come between its keys.
     * Every argument is checked before anything is sent.
     *
     * @param keys  the keys (a {@link KeyBatch} can be packed once and reused)
     * @param times one time per key ({@link TimeSource#CALLER}), or an empty
     *              array ({@link TimeSource#SERVER})
     * @param n     permits per key, &gt;= 1
     * @return one {@link RateLimiter.Decision} per key, in the order of the keys
     * @throws InvalidArgumentException a null argument, a times array of
     *         another length, a time out of range, n &lt;= 0, a key over 65536
     *         bytes (nothing decided)
     * @throws UnavailableException Redis failed during the batch: its
     *         {@link UnavailableException#decisions()} are Redis's for the
     *         answers that arrived and the fallback's for the others (a
     *         request whose answer was lost may have been taken on the server
     *         too)
     */
    public RateLimiter.Decision[] acquireBatch(KeyBatch keys, long[] times, long n) {
        open();
        Native.notNull(keys, "keys");
        int count = keys.size();
        int[] allowed = new int[count];
        long[] remaining = new long[count];
        long[] retryAt = new long[count];
        long[] unavailable = new long[1];
        serialized(h -> h.acquire_batch(keys.data, keys.lens, times, n, allowed, remaining, retryAt, unavailable));
        RateLimiter.Decision[] out = new RateLimiter.Decision[count];
        for (int i = 0; i < count; i++) {
            out[i] = new RateLimiter.Decision(allowed[i] != 0, remaining[i], retryAt[i]);
        }
        if (unavailable[0] != 0) {
            throw failure(unavailable[0]).withDecisions(Arrays.asList(out.clone()));
        }
        return out;
    }

    /** {@link #acquireBatch(KeyBatch, long[], long)} of binary keys. */
    public RateLimiter.Decision[] acquireBatch(byte[][] keys, long[] times, long n) {
        return acquireBatch(KeyBatch.of(keys), times, n);
    }

    /** {@link #acquireBatch(KeyBatch, long[], long)} of string keys (UTF-8). */
    public RateLimiter.Decision[] acquireBatch(String[] keys, long[] times, long n) {
        return acquireBatch(KeyBatch.of(keys), times, n);
    }

    /** One permit per key: {@link #acquireBatch(KeyBatch, long[], long) acquireBatch(keys, times, 1)}. */
    public RateLimiter.Decision[] acquireBatch(KeyBatch keys, long[] times) {
        return acquireBatch(keys, times, 1);
    }

    /**
     * Gives back up to {@code n} permits {@code key} took (the most recent
     * first), to the global window too, as {@link RateLimiter#refund}; with
     * {@link Fallback#LOCAL}, to the embedded limiter as well.
     *
     * @throws InvalidArgumentException a null key, a time out of range, n &lt; 0
     * @throws UnavailableException Redis did not answer (the refund may or may not have been made there;
     *                              the embedded limiter has it)
     */
    public void refund(byte[] key, long now, long n) {
        serialized(h -> {
            h.refund(key, now, n);
            return null;
        });
    }

    /** {@link #refund(byte[], long, long)} with the key's UTF-8 bytes. */
    public void refund(String key, long now, long n) {
        refund(Native.utf8(key, "key"), now, n);
    }

    /**
     * Forgets the key's requests in Redis (its own limit stays), and in the
     * embedded fallback.
     *
     * @throws InvalidArgumentException a null key or one over 65536 bytes
     * @throws UnavailableException Redis did not answer
     */
    public void reset(byte[] key) {
        serialized(h -> {
            h.reset(key);
            return null;
        });
    }

    /** {@link #reset(byte[])} with the key's UTF-8 bytes. */
    public void reset(String key) {
        reset(Native.utf8(key, "key"));
    }

    /**
     * Gives {@code key} its own limit (0 removes it), stored in Redis for
     * every client of the prefix, as {@link RateLimiter#setKeyLimit}.
     *
     * @throws InvalidArgumentException a null key, a limit above the mode's
     *         maximum or negative
     * @throws UnavailableException Redis did not answer (the change may or may not have been made there;
     *                              the embedded limiter has it)
     */
    public void setKeyLimit(byte[] key, long limit) {
        serialized(h -> {
            h.set_key_limit(key, limit);
            return null;
        });
    }

    /** {@link #setKeyLimit(byte[], long)} with the key's UTF-8 bytes. */
    public void setKeyLimit(String key, long limit) {
        setKeyLimit(Native.utf8(key, "key"), limit);
    }

    /**
     * The limit over all keys of the prefix (0 removes it), stored in Redis;
     * it starts an empty global window, as {@link RateLimiter#setGlobalLimit}.
     * With {@link TimeSource#SERVER} the new window starts past the server's
     * time, as the embedded limiter's starts past every key's; on the
     * caller's clock it starts at its first request's time, so the answers in
     * the bucket (exact mode: at the time) in which it was set may differ from
     * the embedded limiter's, and a refund of a permit taken before may take
     * out the window's grants there: set it before the traffic.
     * On a cluster the global window sits on one slot and a decision asks it
     * after the key (the native header says what that promises).
     *
     * @throws InvalidArgumentException negative, above
     *         {@link RateLimiter#MAX_EXACT_GLOBAL_LIMIT} with {@link #EXACT}, or
     *         2^51 or more without it
     * @throws UnavailableException Redis did not answer (the change may or may not have been made there;
     *                              the embedded limiter has it)
     */
    public void setGlobalLimit(long limit) {
        serialized(h -> {
            h.set_global_limit(limit);
            return null;
        });
    }

    /** The limiter's counters ({@code tf_redis_limiter_get_stats}). */
    public Stats stats() {
        return serialized(h -> {
            RedisLimiterStatsNative s = h.stats();
            try {
                return new Stats(s.getDecisions(), s.getTimeouts(), s.getUnavailable(), s.getFallback_denied(),
                        s.getFallback_allowed(), s.getFallback_local(), s.getReconnects(), s.getScript_loads(),
                        s.getRedirects(), s.getGlobal_undos());
            } finally {
                s.delete();
            }
        });
    }

    @Override
    String describe() {
        return "decisions=" + stats().decisions();
    }
}
