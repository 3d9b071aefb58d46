package org.temporalfilters;

/**
 * "May this key make another request now?": the sliding-window rate limiter of
 * the native library ({@code temporalfilters/rate_limiter.h}, which states the
 * guarantees in full). Each key may take at most {@code limit} permits per
 * {@code window} time units.
 *
 * <p><b>Modes.</b> By default (bucketed, the algorithm of the Rate Limiter README) the window is
 * split into {@code window / bucketWidth} buckets and a key keeps a fixed ring
 * of bucket counts: constant memory and time per key. A bucket leaves the
 * window as a whole, so a request may be admitted up to
 * {@code bucketWidth - 1} time units early: no span of
 * {@code window - bucketWidth + 1} time units ever holds more than
 * {@code limit} grants, but a whole window can hold up to twice the limit
 * (a burst late in one bucket, another as soon as that bucket has left: the
 * README's own example). With {@link #EXACT} a key keeps the times of its last
 * {@code limit} grants and never gets more than {@code limit} permits in any
 * interval {@code (t - window, t]}.
 *
 * <p><b>Memory.</b> Bucketed, a key's record takes 47 bytes for 10 buckets
 * and keys of up to 16 bytes ({@code 25 + 2 * (buckets + 1)} in general;
 * longer keys are stored apart), in hash tables kept 76-85% full: 55-62 bytes
 * per key. Exact: a 33-byte record plus a ring of grant times of
 * {@code 24 + 4 * c} bytes ({@code 24 + 8 * c} for a window of more than
 * 2^31 time units) whose capacity {@code c} grows with the key's
 * grants in the window (from 4, doubling, at most the limit), whatever the
 * limit. {@link #memory()} reports the total.
 *
 * <p><b>Decisions</b> ({@link #acquire}, {@link #peek}) come back as a
 * {@link Decision}: allowed or not, the permits remaining in the window, and,
 * when denied, the earliest time at which the same request would be allowed
 * (for an HTTP {@code Retry-After}: {@link Decision#retryAfter(long)}), or
 * {@link TemporalFilters#RETRY_NEVER}. A {@linkplain #setGlobalLimit global limit} caps all keys
 * together, and then every decision (acquire and peek, whether the key allows
 * the request or not) asks both the key's window and the global one: allowed
 * when both allow, {@code remaining} the smaller of the two, {@code retryAt}
 * the later of the times at which each refusing window would allow (a window
 * that allows counts as 0, one that never can as {@link TemporalFilters#RETRY_NEVER}). A key with
 * its {@linkplain #setKeyLimit own limit} is still held to the global one.
 *
 * <p><b>Idle keys</b> are reclaimed: a key is idle once its last request is a
 * window old. Sweeps visit a few table slots at a time, never a full scan: 4
 * slots of the key's shard (of 64) when a new key is inserted, and 8 slots of
 * another shard, round robin, every 16th request of a shard. A reclaimed key
 * starts afresh; but since another key's later time may reclaim a key whose
 * own clock is behind, each shard remembers its <i>reclaim horizon</i>, the
 * latest time up to which a key it reclaimed could still hold permits, and a
 * key the limiter does not hold that asks before it is denied until then
 * ({@code remaining} 0, {@code retryAt} the horizon): a clock that runs behind
 * never earns a key extra permits.
 *
 * <p><b>The key bound.</b> {@link #setMaxKeys} bounds the number of keys
 * tracked. When it is reached, a new key first reclaims an idle key (16 slots
 * of its own shard, then 16 slots of every other shard whose lock is free);
 * when there is none, it is denied with {@code retryAt} {@link TemporalFilters#RETRY_NEVER} (the
 * default: fail closed) or, with {@link #FULL_ALLOW}, admitted without being
 * tracked ({@code remaining} 0; fail open), still held to and charged to the
 * global limit. {@link #stats()} counts both.
 *
 * <p>Keys, time, numbers, errors and resources are as {@link TemporalFilters}
 * describes; time is in the unit of {@code window} and {@code bucketWidth},
 * and a limit or a count is checked like a time. A retry time that never
 * comes is {@link TemporalFilters#RETRY_NEVER}. {@link #acquire} first brings
 * the key's window (and the global window) to {@code now}, granted or not,
 * so a later call with an earlier time is clamped to the latest time that
 * key (or the global window) has seen: nothing is forgotten early.
 * {@link #peek} changes nothing. A denial is not an error: it is a
 * {@link Decision} with {@code allowed() == false}.
 *
 * <p><b>Threads</b>: the limiter is internally synchronised (sharded locks):
 * every method may be called from any number of threads at once, and the
 * decisions on one key are linearizable. {@link #close} too may be called
 * while other threads' calls run: it waits for the calls in flight before it
 * frees the limiter, and every later call throws {@link ClosedException}.
 * {@link #serialize()} is a snapshot of one consistent
 * moment (the native library holds every lock while it writes).
 */
public final class RateLimiter extends NativeHandle<RateLimiterNative> {
    /** Flag: exact mode, no over-admission ({@code TF_RATE_LIMITER_EXACT}). */
    public static final int EXACT = (int) TemporalFiltersNative.TF_RATE_LIMITER_EXACT;
    /**
     * Flag: when {@link #setMaxKeys the key bound} is reached, admit new keys
     * without tracking them (fail open) instead of denying them (fail closed,
     * the default) ({@code TF_RATE_LIMITER_FULL_ALLOW}).
     */
    public static final int FULL_ALLOW = (int) TemporalFiltersNative.TF_RATE_LIMITER_FULL_ALLOW;
    /** The largest per-key limit in bucketed mode ({@code TF_RATE_LIMITER_MAX_KEY_LIMIT}). */
    public static final long MAX_KEY_LIMIT = TemporalFiltersNative.TF_RATE_LIMITER_MAX_KEY_LIMIT;
    /** The largest per-key limit with {@link #EXACT} ({@code TF_RATE_LIMITER_MAX_EXACT_LIMIT}). */
    public static final long MAX_EXACT_LIMIT = TemporalFiltersNative.TF_RATE_LIMITER_MAX_EXACT_LIMIT;
    /** The most buckets per window, {@code window / bucketWidth} ({@code TF_RATE_LIMITER_MAX_BUCKETS}). */
    public static final long MAX_BUCKETS = TemporalFiltersNative.TF_RATE_LIMITER_MAX_BUCKETS;
    /**
     * The largest {@linkplain #setGlobalLimit global limit} with {@link #EXACT}, 2^24 (a literal:
     * {@code rate_limiter.h} states it in the documentation of {@code tf_rate_limiter_set_global_limit},
     * with no macro).
     */
    public static final long MAX_EXACT_GLOBAL_LIMIT = 1L << 24;
    /**
     * The answer of {@link #acquire} and {@link #peek}: a value (equal decisions
     * are {@code equals}).
     *
     * @param allowed   whether the permits were (for {@link #peek}: would be)
     *                  granted; with a global limit, whether both the key's and
     *                  the global window allow them
     * @param remaining permits left to the key in the window after the decision
     *                  (after a denial: before it, nothing being taken); with a
     *                  global limit the smaller of the key's and the global
     *                  window's, whether the request was allowed or not; 0 for a
     *                  new key admitted untracked ({@link RateLimiter#FULL_ALLOW}),
     *                  denied by a full table, or denied until its shard's
     *                  reclaim horizon
     * @param retryAt   0 when allowed; otherwise the earliest time at which the
     *                  same request would be allowed if nothing else happened
     *                  (with a global limit the later of the two windows'
     *                  times), or {@link TemporalFilters#RETRY_NEVER} (-1, C's
     *                  {@code UINT64_MAX}) when it never can be: more permits
     *                  than the key's or the global limit, or a new key denied
     *                  because the limiter tracks as many keys as it may and
     *                  none is idle (fail closed)
     */
    public record Decision(boolean allowed, long remaining, long retryAt) {
        /**
         * How long to wait from {@code now} before retrying, in the caller's
         * time unit (the value of a {@code Retry-After} header when the unit is
         * the second; round up for a coarser unit): 0 when allowed,
         * {@code retryAt - now} (at least 0) when denied,
         * {@link TemporalFilters#RETRY_NEVER} when the request never can be
         * allowed.
         */
        public long retryAfter(long now) {
            if (allowed) {
                return 0;
            }
            if (retryAt == TemporalFilters.RETRY_NEVER) {
                return TemporalFilters.RETRY_NEVER;
            }
            return Math.max(0, retryAt - now);
        }
    }

    /**
     * What a limiter was created with, and its settings
     * ({@code tf_rate_limiter_info}).
     *
     * @param limit       the default limit: permits per window and key
     * @param window      the window's length, in the caller's time unit
     * @param bucketWidth the width of a bucket (bucketed mode); 0 with {@link #EXACT}
     * @param flags       the creation flags ({@link #EXACT}, {@link #FULL_ALLOW})
     * @param globalLimit the {@linkplain #setGlobalLimit global limit}; 0 when none is set
     * @param maxKeys     the {@linkplain #setMaxKeys key bound}; 0 for none
     * @param seed        the hash seed
     */
    public record Info(long limit, long window, long bucketWidth, int flags, long globalLimit, long maxKeys,
            long seed) {
    }

    /**
     * The limiter's counters ({@code tf_rate_limiter_stats}); under concurrent
     * use each is exact at the moment it was read.
     *
     * @param keys        keys tracked now
     * @param reclaimed   idle keys reclaimed so far
     * @param deniedFull  requests of new keys denied because the key bound was reached
     * @param allowedFull requests of new keys admitted untracked because the key
     *                    bound was reached ({@link #FULL_ALLOW})
     * @param memory      bytes of native memory held, as {@link #memory()}
     */
    public record Stats(long keys, long reclaimed, long deniedFull, long allowedFull, long memory) {
    }


    /**
     * Creates a limiter: each key at most {@code limit} permits per
     * {@code window} ({@code tf_rate_limiter_new}).
     *
     * @param limit       permits per window and key, 1 .. {@link #MAX_KEY_LIMIT}
     *                    (1 .. {@link #MAX_EXACT_LIMIT} with {@link #EXACT})
     * @param window      the window's length in the caller's time unit, &gt;= 1
     * @param bucketWidth bucketed mode: the width of a bucket, which must divide
     *                    {@code window}, with at most {@link #MAX_BUCKETS}
     *                    buckets per window;
     *                    ignored (may be 0) with {@link #EXACT}
     * @param seed        the hash seed, 0 .. 2<sup>32</sup>-1: it places keys in
     *                    shards, never changes a decision; when keys come from
     *                    clients, use a random secret seed, so that nobody can
     *                    choose keys that crowd one shard
     * @param flags       0 or an OR of {@link #EXACT} and {@link #FULL_ALLOW}
     * @throws InvalidArgumentException a zero limit or window, a bucket width of
     *         0 or not dividing the window, too many buckets, a limit above the
     *         mode's maximum, an unknown flag, a negative number
     * @throws NativeOutOfMemoryException the limiter does not fit in memory
     */
    public RateLimiter(long limit, long window, long bucketWidth, long seed, int flags) {
        this(new RateLimiterNative(limit, window, bucketWidth, seed, flags));
    }

    /**
     * A limiter in the default mode (bucketed, fail closed) with seed 0:
     * {@code RateLimiter(limit, window, bucketWidth, 0, 0)}.
     */
    public RateLimiter(long limit, long window, long bucketWidth) {
        this(limit, window, bucketWidth, 0, 0);
    }

    private RateLimiter(RateLimiterNative handle) {
        super(handle, true);
    }

    /**
     * Reads a limiter from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 4): its parameters, global
     * window, overrides, key bound, counters, reclaim horizon (every shard of
     * the new limiter takes the blob's) and every tracked key's state.
     *
     * @throws InvalidArgumentException a null blob ({@link Status#NULL})
     * @throws BadBlobException a blob that is not a whole, intact limiter
     *         ({@link Status#TRUNCATED} .. {@link Status#CORRUPT})
     * @throws NativeOutOfMemoryException the limiter does not fit in memory
     */
    public static RateLimiter deserialize(byte[] blob) {
        return deserialize(blob, 0);
    }

    /**
     * {@link #deserialize(byte[])}, refusing a blob that would make a limiter
     * of more than {@code maxMemory} bytes ({@link #memory()}) with
     * {@link Status#TOO_LARGE} before allocating anything; 0 sets no limit.
     */
    public static RateLimiter deserialize(byte[] blob, long maxMemory) {
        return new RateLimiter(RateLimiterNative.deserialize(blob, maxMemory));
    }

    /**
     * What the limiter was created with and its settings
     * ({@code tf_rate_limiter_get_info}).
     */
    public Info info() {
        return value(h -> h.info(), i -> new Info(i.getLimit(), i.getWindow(), i.getBucket_width(), (int) i.getFlags(),
                i.getGlobal_limit(), i.getMax_keys(), i.getSeed()));
    }

    /**
     * Caps all keys together: at most {@code limit} permits granted in total
     * per window (0 removes the cap), in the same window. Every decision then
     * asks the global window too: a request is granted only when both its key
     * and the global window allow it, {@code remaining} is the smaller of the
     * two and {@code retryAt} the later. Setting it starts an empty global
     * window (the keys' own windows are kept), its clock just past the latest
     * time any key has seen, so that a refund of a permit taken before goes
     * back to its key only. In exact mode the global window
     * keeps the times of its grants in the window (4 bytes each, 8 for a window
     * of more than 2^31 time units), in a ring that grows with them.
     *
     * @param limit 0 or the global permits per window (at most
     *              {@link #MAX_EXACT_GLOBAL_LIMIT} with {@link #EXACT})
     * @throws InvalidArgumentException negative, or too large for exact mode
     * @throws NativeOutOfMemoryException the exact global window does not fit in memory
     */
    public void setGlobalLimit(long limit) {
        run(h -> h.set_global_limit(limit));
    }

    /**
     * Gives {@code key} its own limit instead of the default (0 removes the
     * override). The override persists while the key is idle or reclaimed; the
     * key is still held to the global limit. Lowering a key's limit below what
     * it holds denies it until enough permits leave (exact mode keeps its
     * newest grants that fit).
     *
     * @param limit 0, or 1 .. {@link #MAX_KEY_LIMIT} ({@link #MAX_EXACT_LIMIT}
     *              with {@link #EXACT})
     * @throws InvalidArgumentException a null key; a limit that is negative, or
     *         above the mode's maximum
     * @throws NativeOutOfMemoryException the override does not fit in memory
     */
    public void setKeyLimit(byte[] key, long limit) {
        run(h -> h.set_key_limit(key, limit));
    }

    /** {@link #setKeyLimit(byte[], long)} with the key's UTF-8 bytes. */
    public void setKeyLimit(String key, long limit) {
        setKeyLimit(Native.utf8(key, "key"), limit);
    }

    /**
     * Tracks at most {@code maxKeys} keys at once (0: no bound). When the bound
     * is reached, a new key first reclaims an idle key (16 slots of its own
     * shard, then 16 slots of every other shard whose lock is free); when none
     * is found, its requests are denied with {@link Decision#retryAt()}
     * {@link TemporalFilters#RETRY_NEVER} (fail closed) or, with {@link #FULL_ALLOW}, admitted
     * without being tracked (fail open: {@code remaining} 0, and still held to
     * and charged to the global limit); {@link #stats()} counts each (peeks are
     * not counted). After a search that found nothing, the next 63 new keys
     * only look at their own shard. Keys already tracked are served as usual.
     *
     * @throws InvalidArgumentException a negative bound
     */
    public void setMaxKeys(long maxKeys) {
        run(h -> h.set_max_keys(maxKeys));
    }

    /**
     * Asks for {@code n} permits for {@code key} at {@code now} and takes them
     * when allowed, from the key's window and the global one (all or nothing:
     * a denied request takes nothing). As in the Rate Limiter README, the key's window (and
     * the global window) is first brought to {@code now}, granted or not: a
     * later call with an earlier time is clamped to it. A new key is tracked
     * from its first granted request on (a denied first request leaves nothing
     * behind); one the limiter does not hold that asks before its shard's
     * reclaim horizon is denied until then.
     *
     * @param now the current time, &gt;= 1
     * @param n   permits, &gt;= 1; more than the key's (or the global) limit is
     *            denied with {@link TemporalFilters#RETRY_NEVER}
     * @throws InvalidArgumentException a null key, now or n &lt;= 0
     * @throws NativeOutOfMemoryException the key could not be tracked (nothing
     *         changed)
     */
    public Decision acquire(byte[] key, long now, long n) {
        return decide(RateLimiterNative::acquire, key, now, n);
    }

    /** {@link #acquire(byte[], long, long)} with the key's UTF-8 bytes. */
    public Decision acquire(String key, long now, long n) {
        return acquire(Native.utf8(key, "key"), now, n);
    }

    /** One permit: {@link #acquire(byte[], long, long) acquire(key, now, 1)}. */
    public Decision acquire(byte[] key, long now) {
        return acquire(key, now, 1);
    }

    /** One permit, with the key's UTF-8 bytes. */
    public Decision acquire(String key, long now) {
        return acquire(Native.utf8(key, "key"), now, 1);
    }

    /**
     * {@link #acquire(byte[], long, long) acquire}{@code (keys[i], times[i], n)}
     * for every key of the batch, in order, in one native call: the same
     * decisions and the same state afterwards as those single calls, but the
     * native library fetches the table lines of the next keys while it
     * decides one, so that their cache misses overlap (about twice the
     * throughput of single calls on a limiter of a million keys, whose table
     * is larger than the CPU's caches), and the cost of crossing into native
     * code is paid once. For a server that gathers the requests of one
     * event-loop tick, or a gateway that admits a queue of requests at once;
     * a few keys at a time gain little. The batch is not atomic: other
     * threads' calls may come between its keys.
     *
     * <p>Every argument is checked before any decision, so a refused call
     * changes nothing (no key created, no clock moved).
     *
     * @param keys  the keys (a {@link KeyBatch} can be packed once and reused)
     * @param times one time per key, each &gt;= 1 (they need not be in order;
     *              each key's clock is clamped as in {@code acquire})
     * @param n     permits per key, &gt;= 1 (even for an empty batch)
     * @return one {@link Decision} per key, in the order of the keys
     * @throws InvalidArgumentException a null argument; {@code times.length}
     *         differs from the number of keys, a time &lt;= 0, n &lt;= 0
     * @throws NativeOutOfMemoryException a key could not be tracked: the
     *         decisions before it stand, and are not returned
     */
    public Decision[] acquireBatch(KeyBatch keys, long[] times, long n) {
        open();
        Native.notNull(keys, "keys");
        int count = keys.size();
        int[] allowed = new int[count];
        long[] remaining = new long[count];
        long[] retryAt = new long[count];
        run(h -> h.acquire_batch(keys.data, keys.lens, times, n, allowed, remaining, retryAt));
        Decision[] out = new Decision[count];
        for (int i = 0; i < count; i++) {
            out[i] = new Decision(allowed[i] != 0, remaining[i], retryAt[i]);
        }
        return out;
    }

    /** {@link #acquireBatch(KeyBatch, long[], long)} of binary keys. */
    public Decision[] acquireBatch(byte[][] keys, long[] times, long n) {
        return acquireBatch(KeyBatch.of(keys), times, n);
    }

    /** {@link #acquireBatch(KeyBatch, long[], long)} of string keys (UTF-8). */
    public Decision[] acquireBatch(String[] keys, long[] times, long n) {
        return acquireBatch(KeyBatch.of(keys), times, n);
    }

    /** One permit per key: {@link #acquireBatch(KeyBatch, long[], long) acquireBatch(keys, times, 1)}. */
    public Decision[] acquireBatch(KeyBatch keys, long[] times) {
        return acquireBatch(keys, times, 1);
    }

    /**
     * The decision {@link #acquire(byte[], long, long)} would make at
     * {@code now}, without changing anything: no permit taken, no clock moved
     * (neither the key's nor the global window's), no key created or
     * reclaimed; {@link #serialize()} gives the same bytes before and after.
     * On a full table it looks for an idle key without removing it, so it
     * answers as {@code acquire} would.
     *
     * @throws InvalidArgumentException a null key, now or n &lt;= 0
     */
    public Decision peek(byte[] key, long now, long n) {
        return decide(RateLimiterNative::peek, key, now, n);
    }

    /** {@link #peek(byte[], long, long)} with the key's UTF-8 bytes. */
    public Decision peek(String key, long now, long n) {
        return peek(Native.utf8(key, "key"), now, n);
    }

    /** One permit: {@link #peek(byte[], long, long) peek(key, now, 1)}. */
    public Decision peek(byte[] key, long now) {
        return peek(key, now, 1);
    }

    /** One permit, with the key's UTF-8 bytes. */
    public Decision peek(String key, long now) {
        return peek(Native.utf8(key, "key"), now, 1);
    }

    /**
     * Gives back up to {@code n} permits that {@code key} took and still holds
     * in its window (the most recent first): for a request that was admitted
     * but not served. The global window gets the same permits back (the same
     * buckets, or grant times, as the key's, if they are still in it). Like
     * {@code acquire}, it first brings the key's window (and the global one)
     * to {@code now}. A key not tracked is left alone; {@code n} = 0 gives
     * nothing back.
     *
     * @throws InvalidArgumentException a null key, now &lt;= 0, n &lt; 0
     */
    public void refund(byte[] key, long now, long n) {
        run(h -> h.refund(key, now, n));
    }

    /** {@link #refund(byte[], long, long)} with the key's UTF-8 bytes. */
    public void refund(String key, long now, long n) {
        refund(Native.utf8(key, "key"), now, n);
    }

    /**
     * Forgets the key's requests: the limiter stops tracking it, and it starts
     * afresh (its override, if any, stays). Permits it took stay counted in
     * the global window.
     *
     * @throws InvalidArgumentException a null key
     */
    public void reset(byte[] key) {
        run(h -> h.reset(key));
    }

    /** {@link #reset(byte[])} with the key's UTF-8 bytes. */
    public void reset(String key) {
        reset(Native.utf8(key, "key"));
    }

    /**
     * The counters (keys tracked, idle keys reclaimed, new keys denied or
     * admitted untracked because of the key bound) and the memory, read in
     * one native call ({@code tf_rate_limiter_get_stats}, which walks every
     * shard).
     */
    public Stats stats() {
        return value(h -> h.stats(), st -> new Stats(st.getKeys(), st.getReclaimed(), st.getDenied_full(),
                st.getAllowed_full(), st.getMemory()));
    }

    /**
     * Bytes of native memory held: the key tables (fixed-size records, with
     * the tables' spare room), exact-mode rings, keys longer than 16 bytes
     * (stored apart), the global window and the overrides (the {@code memory}
     * of {@code tf_rate_limiter_stats}). Visits every shard.
     */
    @Override
    public long memory() {
        return super.memory();
    }

    /**
     * The whole state as a blob (wire format kind 4): parameters, flags, key
     * bound, counters, the reclaim horizon (the latest of the shards'), the
     * global window, the overrides and every tracked key's window, so that a
     * restarted service forgets nobody who is limited. Keys and overrides are
     * written in increasing order of their bytes, so equal states give equal
     * blobs, whatever the order in which keys came. Any binding reads it back
     * with its deserialize. The native library takes every lock of the
     * limiter while it writes, so the blob is one consistent moment (other
     * threads' calls wait meanwhile); if they change its size between the
     * native calls that size and fill it, this method starts again, up to a
     * few times.
     *
     * @throws InvalidArgumentException the blob exceeds the largest Java array
     *         ({@link Status#TOO_LARGE})
     * @throws TemporalFiltersException its size kept changing
     *         ({@link Status#BUFFER_TOO_SMALL})
     */
    @Override
    public byte[] serialize() {
        return super.serialize();
    }

    @Override
    String describe() {
        Info i = info();
        return "limit=" + i.limit() + ", window=" + i.window() + ", bucketWidth=" + i.bucketWidth() + ", flags="
                + i.flags() + ", keys=" + stats().keys();
    }

    /* The C loop of the benchmarks (tf_binding_rate_limiter_c_loop_ns), on
     * this limiter: op 0 acquire, one call per key, 1 acquire_batch (64 keys
     * per call), one permit each, key i at time t0 + i, of the keys of keyLen
     * bytes laid end to end in keysData; returns ns per key. */
    double cLoopNs(byte[] keysData, int keyLen, int op, long t0) {
        return call(h -> TemporalFiltersNative.rate_limiter_c_loop_ns(h, keysData, keyLen, op, t0));
    }

    /* The native acquire or peek: 1 when allowed, 0 when denied; remaining
     * and retry time in element 0 of the arrays. */
    private interface NativeDecision {
        long decide(RateLimiterNative h, byte[] key, long now, long n, long[] remaining, long[] retryAt);
    }

    private Decision decide(NativeDecision op, byte[] key, long now, long n) {
        long[] remaining = new long[1];
        long[] retryAt = new long[1];
        boolean allowed = callLong(h -> op.decide(h, key, now, n, remaining, retryAt)) != 0;
        return new Decision(allowed, remaining[0], retryAt[0]);
    }
}
