package org.temporalfilters;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * "When did I last see this key?" in fixed memory: a RecencySketch of the
 * native library ({@code temporalfilters/recency_sketch.h}, which states the
 * guarantees in full).
 *
 * <p>{@code depth} rows of {@code width} timestamp cells; each key maps to one
 * cell per row. {@link #update} raises the key's cells to {@code now},
 * {@link #query} returns the smallest of them. A query never returns a time
 * older than the key's true last update; it may return a newer one when other
 * keys filled all of the key's cells (see {@link #errorEstimate}).
 *
 * <p><b>Keys</b> are byte strings: {@code byte[]} (binary-safe, NUL bytes
 * included) or {@code String}, which stands for its UTF-8 bytes.
 *
 * <p><b>Time</b> is always an argument, a {@code long} in the caller's own unit
 * (milliseconds, seconds, ticks...). 0 means "never" and is not a valid
 * {@code now}. The native library counts time in unsigned 64-bit integers;
 * Java has no such type, so a negative argument is rejected with
 * {@link Status#ERR_INVALID_ARGUMENT} (never reinterpreted), and a result above
 * {@link Long#MAX_VALUE} (only saturated times, e.g. the next-allowed time of a
 * pacing decision near the end of time, or cells of a blob written by a
 * program that used such times) is returned as {@link Long#MAX_VALUE}.
 *
 * <p><b>Errors</b>: every failure is a {@link TemporalFiltersException} carrying
 * the C status.
 *
 * <p><b>Resources</b>: the native memory is freed by {@link #close()}; use
 * try-with-resources. A sketch that is never closed is freed by a
 * {@link Cleaner} after it becomes unreachable. Any call on a closed sketch
 * fails with {@link Status#ERR_NULL} ("the RecencySketch is closed").
 *
 * <p><b>Threads</b>: without {@link #CONCURRENT}, calls that modify the sketch
 * must not overlap any other call on it (concurrent reads are fine). Created
 * with {@link #CONCURRENT}, update, query, pace, the TTL calls, the batch
 * calls, errorEstimate, memory, the getters, serialize and use as the source
 * of a merge may be called from any number of threads at once. {@link #clear},
 * {@link #merge} into this sketch (unless it is concurrent) and {@link #close}
 * always need exclusive access.
 */
public final class RecencySketch implements AutoCloseable {
    /** Flag: lock-free mode, safe to use from many threads at once. */
    public static final int CONCURRENT = 1;
    /** Flag: blocked layout, all of a key's cells in one cache line (depth &lt;= 8). */
    public static final int BLOCKED = 2;
    /** The timestamp that means "never seen". */
    public static final long NEVER = 0L;

    /** Table dimensions, as computed by {@link #dimensions}. */
    public record Dimensions(long width, int depth) {
    }

    /**
     * The answer of {@link #pace}: whether the request was granted, and the
     * earliest time the key may be granted again ({@code now + interval} after
     * a grant, {@code last + interval} after a denial; clamped to
     * {@link Long#MAX_VALUE}).
     */
    public record PaceResult(boolean granted, long nextAllowed) {
    }

    private final RecencySketchNative handle;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    /* The cleaning action holds the native proxy only, never the sketch. */
    private static final class Release implements Runnable {
        private final RecencySketchNative handle;

        Release(RecencySketchNative handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            handle.delete();
        }
    }

    /**
     * Creates an empty sketch ({@code tf_recency_sketch_new}).
     *
     * @param width cells per row, &gt;= 1
     * @param depth rows, 1..32 (1..8 with {@link #BLOCKED})
     * @param seed  hash seed, 0 .. 2^32-1; sketches merge only when their seeds are equal
     * @param flags 0 or an OR of {@link #CONCURRENT} and {@link #BLOCKED}
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (a
     *         parameter out of range, an unknown flag), {@link Status#ERR_TOO_LARGE},
     *         {@link Status#ERR_OUT_OF_MEMORY}
     */
    public RecencySketch(long width, int depth, long seed, int flags) {
        this(new RecencySketchNative(width, depth, seed, flags));
    }

    private RecencySketch(RecencySketchNative handle) {
        if (handle == null) {
            throw new TemporalFiltersException(Status.ERR_INTERNAL, "the native layer returned no handle");
        }
        this.handle = handle;
        this.cleanable = Native.CLEANER.register(this, new Release(handle));
    }

    /**
     * Creates a sketch sized for a target ({@code tf_recency_sketch_new_for}):
     * the smallest table whose probability of a too-new answer, with
     * {@code expectedKeys} distinct keys updated within the horizon you query
     * about, is at most {@code tooNewProbability}.
     *
     * @throws TemporalFiltersException as {@link #dimensions} and the constructor
     */
    public static RecencySketch forTarget(long expectedKeys, double tooNewProbability, long seed, int flags) {
        return new RecencySketch(RecencySketchNative.new_for(expectedKeys, tooNewProbability, seed, flags));
    }

    /**
     * The dimensions {@link #forTarget} would choose
     * ({@code tf_recency_sketch_dimensions}); only {@link #BLOCKED} among the
     * flags changes the answer.
     *
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (no
     *         keys, a probability outside (0, 1), an unknown flag),
     *         {@link Status#ERR_TOO_LARGE} (no table within the limits meets the target)
     */
    public static Dimensions dimensions(long expectedKeys, double tooNewProbability, int flags) {
        long width = RecencySketchNative.dimensions_width(expectedKeys, tooNewProbability, flags);
        long depth = RecencySketchNative.dimensions_depth(expectedKeys, tooNewProbability, flags);
        return new Dimensions(width, (int) depth);
    }

    /**
     * Reads a sketch from a blob written by {@link #serialize()} here or by
     * any other binding or the C API.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null blob),
     *         {@link Status#ERR_TRUNCATED}, {@link Status#ERR_BAD_MAGIC},
     *         {@link Status#ERR_UNSUPPORTED_VERSION}, {@link Status#ERR_WRONG_KIND},
     *         {@link Status#ERR_CHECKSUM}, {@link Status#ERR_CORRUPT},
     *         {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static RecencySketch deserialize(byte[] blob) {
        return new RecencySketch(RecencySketchNative.deserialize(blob));
    }

    /**
     * Frees the native memory now. Idempotent; afterwards every call fails with
     * {@link Status#ERR_NULL}. Needs exclusive access: no other thread may be
     * using the sketch.
     */
    @Override
    public void close() {
        closed = true;
        cleanable.clean();
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Records that {@code key} was seen at {@code now} (&gt;= 1): its cells
     * become max(cell, now). Older times than already recorded are harmless.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now &lt;= 0)
     */
    public void update(byte[] key, long now) {
        try {
            handle.update(key, now);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #update(byte[], long)} with the key's UTF-8 bytes. */
    public void update(String key, long now) {
        update(Native.utf8(key, "key"), now);
    }

    /**
     * The estimated last time {@code key} was updated: {@link #NEVER} (0) when
     * never seen (and no other key filled all its cells), otherwise a time at
     * or after its true last update.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed)
     */
    public long query(byte[] key) {
        try {
            return handle.query(key);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #query(byte[])} with the key's UTF-8 bytes. */
    public long query(String key) {
        return query(Native.utf8(key, "key"));
    }

    /**
     * {@link #query(byte[])} as an {@link OptionalLong}: empty when the key
     * reads as never seen.
     */
    public OptionalLong lastSeen(byte[] key) {
        long t = query(key);
        return t == NEVER ? OptionalLong.empty() : OptionalLong.of(t);
    }

    /** {@link #lastSeen(byte[])} with the key's UTF-8 bytes. */
    public OptionalLong lastSeen(String key) {
        return lastSeen(Native.utf8(key, "key"));
    }

    /**
     * Request pacing: grants {@code key} at {@code now} when no grant is
     * recorded for it within the last {@code interval} time units, and records
     * the grant. A key is never granted twice within {@code interval}, also
     * under concurrent calls on a {@link #CONCURRENT} sketch.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now or interval &lt;= 0)
     */
    public PaceResult pace(byte[] key, long now, long interval) {
        long[] next = new long[1];
        try {
            boolean granted = handle.pace(key, now, interval, next) != 0;
            return new PaceResult(granted, next[0]);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #pace(byte[], long, long)} with the key's UTF-8 bytes. */
    public PaceResult pace(String key, long now, long interval) {
        return pace(Native.utf8(key, "key"), now, interval);
    }

    /**
     * TTL prefilter, insert side: records that {@code key} was stored at
     * {@code now} with time-to-live {@code ttl} (its cells hold expiry times;
     * use a sketch for either TTLs or last-seen times, not both).
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now or ttl &lt;= 0)
     */
    public void ttlInsert(byte[] key, long now, long ttl) {
        try {
            handle.ttl_insert(key, now, ttl);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #ttlInsert(byte[], long, long)} with the key's UTF-8 bytes. */
    public void ttlInsert(String key, long now, long ttl) {
        ttlInsert(Native.utf8(key, "key"), now, ttl);
    }

    /**
     * TTL prefilter, lookup side: false when {@code key} is certainly expired
     * at {@code now} or was never inserted (never wrong); true when it may be
     * live. Its estimated expiry time is {@link #query(byte[])}.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now &lt;= 0)
     */
    public boolean ttlMaybeLive(byte[] key, long now) {
        try {
            return handle.ttl_maybe_live(key, now) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #ttlMaybeLive(byte[], long)} with the key's UTF-8 bytes. */
    public boolean ttlMaybeLive(String key, long now) {
        return ttlMaybeLive(Native.utf8(key, "key"), now);
    }

    /**
     * Merges {@code other} into this sketch by cell-wise maximum, so that it
     * answers as if it had seen both streams.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null or closed),
     *         {@link Status#ERR_INCOMPATIBLE} (width, depth, layout or seed differ;
     *         this sketch is left unchanged)
     */
    public void merge(RecencySketch other) {
        Native.notNull(other, "other");
        try {
            handle.merge(other.handle);
        } finally {
            Reference.reachabilityFence(this);
            Reference.reachabilityFence(other);
        }
    }

    /** Empties every cell. Needs exclusive access. */
    public void clear() {
        try {
            handle.clear();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The estimated probability that a key whose true last update is at or
     * before {@code since} reads as newer than {@code since} (since = 0: that
     * a never-seen key reads as seen). Scans the whole table.
     */
    public double errorEstimate(long since) {
        try {
            return handle.error_estimate(since);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Bytes of native memory held (table and header). */
    public long memory() {
        try {
            return handle.memory();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Reads the native info (a copy, freed at once). */
    private <T> T info(Function<RecencySketchInfoNative, T> field) {
        try {
            RecencySketchInfoNative info = handle.info();
            try {
                return field.apply(info);
            } finally {
                info.delete();
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Cells per row, as given at creation. */
    public long width() {
        return info(RecencySketchInfoNative::getWidth);
    }

    /** Rows, as given at creation. */
    public int depth() {
        return info(i -> (int) i.getDepth());
    }

    /** The hash seed, 0 .. 2^32-1. */
    public long seed() {
        return info(RecencySketchInfoNative::getSeed);
    }

    /** The creation flags ({@link #CONCURRENT}, {@link #BLOCKED}). */
    public int flags() {
        return info(i -> (int) i.getFlags());
    }

    /** The number of timestamp cells actually allocated. */
    public long cells() {
        return info(RecencySketchInfoNative::getCells);
    }

    /**
     * The sketch as a blob (wire format kind 1): parameters, seed, flags and
     * every cell, little-endian, with a checksum. Any binding reads it back
     * with its deserialize.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (closed),
     *         {@link Status#ERR_TOO_LARGE} (the blob exceeds the largest Java array)
     */
    public byte[] serialize() {
        try {
            return Native.serialize(handle.serialized_size(), "sketch", handle::serialize_into);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Updates many keys in one native call: the same result as
     * {@code update(keys[i], times[i])} for every i in order, faster because
     * the per-call cost is paid once and the cells of the keys are fetched
     * together. The whole batch is checked first: a failed batch changes
     * nothing.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null array or key,
     *         closed), {@link Status#ERR_INVALID_ARGUMENT} (a time &lt;= 0, or
     *         not one time per key; the message names the index)
     */
    public void updateBatch(KeyBatch keys, long[] times) {
        Native.notNull(keys, "keys");
        try {
            handle.update_batch(keys.data, keys.lens, times);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #updateBatch(KeyBatch, long[])} of binary keys. */
    public void updateBatch(byte[][] keys, long[] times) {
        updateBatch(KeyBatch.of(keys), times);
    }

    /** {@link #updateBatch(KeyBatch, long[])} of string keys (UTF-8). */
    public void updateBatch(String[] keys, long[] times) {
        updateBatch(KeyBatch.of(keys), times);
    }

    /**
     * Queries many keys in one native call into {@code out}, which must have
     * one element per key; returns {@code out}. The same answers as
     * {@link #query(byte[])} for each key.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null argument,
     *         closed), {@link Status#ERR_INVALID_ARGUMENT} (out's length differs
     *         from the number of keys)
     */
    public long[] queryBatch(KeyBatch keys, long[] out) {
        Native.notNull(keys, "keys");
        try {
            handle.query_batch(keys.data, keys.lens, out);
            return out;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Queries many keys in one native call; one answer per key. */
    public long[] queryBatch(KeyBatch keys) {
        Native.notNull(keys, "keys");
        return queryBatch(keys, new long[keys.size()]);
    }

    /** {@link #queryBatch(KeyBatch)} of binary keys. */
    public long[] queryBatch(byte[][] keys) {
        return queryBatch(KeyBatch.of(keys));
    }

    /** {@link #queryBatch(KeyBatch)} of string keys (UTF-8). */
    public long[] queryBatch(String[] keys) {
        return queryBatch(KeyBatch.of(keys));
    }

    /* The C loop of the benchmarks (tf_binding_c_loop_ns), on this sketch:
     * op 0 updates, 1 queries the keys of keyLen bytes laid end to end in
     * keysData, with times t0, t0+1, ...; returns ns per operation. */
    double cLoopNs(byte[] keysData, int keyLen, int op, long t0) {
        try {
            return TemporalFiltersNative.c_loop_ns(handle, keysData, keyLen, op, t0);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        if (closed) {
            return "RecencySketch(closed)";
        }
        return "RecencySketch(width=" + width() + ", depth=" + depth() + ", seed=" + seed() + ", flags=" + flags()
                + ")";
    }
}
