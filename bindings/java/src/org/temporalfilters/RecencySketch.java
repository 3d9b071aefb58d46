package org.temporalfilters;

import java.util.OptionalLong;

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
 * <p>Keys, time, numbers, errors and resources are as {@link TemporalFilters}
 * describes: a key never seen reads as {@link TemporalFilters#NEVER}, and a
 * result above {@link Long#MAX_VALUE} (a saturated time, such as the
 * next-allowed time of a pacing decision near the end of time) is returned
 * as {@link Long#MAX_VALUE}.
 *
 * <p><b>Threads</b>: without {@link #CONCURRENT}, calls that modify the sketch
 * must not overlap any other call on it (concurrent reads are fine). Created
 * with {@link #CONCURRENT}, update, query, pace, the TTL calls, the batch
 * calls, errorEstimate, memory, info, serialize and use as the source
 * of a merge may be called from any number of threads at once, and
 * {@link #close} waits for the calls in flight (it may run while they do;
 * later calls throw {@link ClosedException}). {@link #clear} always needs
 * exclusive access, and so does {@link #merge} into a sketch that is not
 * concurrent, and {@link #close} of a sketch created without
 * {@link #CONCURRENT}: closing it while another thread uses it frees the
 * memory under that call.
 */
public final class RecencySketch extends NativeHandle<RecencySketchNative> {
    /** Flag: lock-free mode, safe to use from many threads at once ({@code TF_RECENCY_SKETCH_CONCURRENT}). */
    public static final int CONCURRENT = (int) TemporalFiltersNative.TF_RECENCY_SKETCH_CONCURRENT;
    /**
     * Flag: blocked layout, all of a key's cells in one cache line (depth &lt;= 8)
     * ({@code TF_RECENCY_SKETCH_BLOCKED}).
     */
    public static final int BLOCKED = (int) TemporalFiltersNative.TF_RECENCY_SKETCH_BLOCKED;

    /** Table dimensions, as computed by {@link #dimensions}. */
    public record Dimensions(long width, int depth) {
    }

    /**
     * What a sketch was created with ({@code tf_recency_sketch_info}).
     *
     * @param width cells per row, as given at creation
     * @param depth rows, as given at creation
     * @param seed  the hash seed, 0 .. 2^32-1
     * @param flags the creation flags ({@link #CONCURRENT}, {@link #BLOCKED})
     * @param cells the number of timestamp cells actually allocated (the blocked
     *              layout rounds the table up to whole cache lines of 8 cells)
     */
    public record Info(long width, int depth, long seed, int flags, long cells) {
    }

    /**
     * The answer of {@link #pace}: whether the request was granted, and the
     * earliest time the key may be granted again ({@code now + interval} after
     * a grant, {@code last + interval} after a denial; clamped to
     * {@link Long#MAX_VALUE}).
     */
    public record PaceResult(boolean granted, long nextAllowed) {
    }

    /**
     * Creates an empty sketch ({@code tf_recency_sketch_new}).
     *
     * @param width cells per row, &gt;= 1
     * @param depth rows, 1..32 (1..8 with {@link #BLOCKED})
     * @param seed  hash seed, 0 .. 2^32-1; sketches merge only when their seeds are equal
     * @param flags 0 or an OR of {@link #CONCURRENT} and {@link #BLOCKED}
     * @throws InvalidArgumentException a parameter out of range, a negative
     *         number, an unknown flag ({@link Status#INVALID_ARGUMENT}); a table
     *         too large ({@link Status#TOO_LARGE})
     * @throws NativeOutOfMemoryException the table does not fit in memory
     */
    public RecencySketch(long width, int depth, long seed, int flags) {
        this(new RecencySketchNative(width, depth, seed, flags));
    }

    /** An empty sketch with seed 0 and no flags: {@code RecencySketch(width, depth, 0, 0)}. */
    public RecencySketch(long width, int depth) {
        this(width, depth, 0, 0);
    }

    private RecencySketch(RecencySketchNative handle) {
        super(handle, concurrent(handle));
    }

    /* Whether the new handle's sketch was created with CONCURRENT, so that its
     * calls may overlap and close() waits for them (NativeHandle). The blob
     * of deserialize says, so the flags are read back. */
    private static boolean concurrent(RecencySketchNative handle) {
        if (handle == null) {
            return false;
        }
        try {
            RecencySketchInfoNative info = handle.info();
            try {
                return (info.getFlags() & CONCURRENT) != 0;
            } finally {
                info.delete();
            }
        } catch (RuntimeException e) {
            handle.delete(); // not owned by anything yet
            throw e;
        }
    }

    /**
     * Creates a sketch sized for a target ({@code tf_recency_sketch_new_for}):
     * the smallest table whose probability of a too-new answer, with
     * {@code expectedKeys} distinct keys updated within the horizon you query
     * about, is at most {@code tooNewProbability}.
     *
     * @throws InvalidArgumentException as {@link #dimensions} and the constructor
     * @throws NativeOutOfMemoryException the table does not fit in memory
     */
    public static RecencySketch forTarget(long expectedKeys, double tooNewProbability, long seed, int flags) {
        return new RecencySketch(RecencySketchNative.new_for(expectedKeys, tooNewProbability, seed, flags));
    }

    /** {@link #forTarget(long, double, long, int)} with seed 0 and no flags. */
    public static RecencySketch forTarget(long expectedKeys, double tooNewProbability) {
        return forTarget(expectedKeys, tooNewProbability, 0, 0);
    }

    /**
     * The dimensions {@link #forTarget} would choose
     * ({@code tf_recency_sketch_dimensions}); only {@link #BLOCKED} among the
     * flags changes the answer.
     *
     * @throws InvalidArgumentException {@link Status#INVALID_ARGUMENT} (no
     *         keys, a probability outside (0, 1), an unknown flag),
     *         {@link Status#TOO_LARGE} (no table within the limits meets the target)
     */
    public static Dimensions dimensions(long expectedKeys, double tooNewProbability, int flags) {
        long width = RecencySketchNative.dimensions_width(expectedKeys, tooNewProbability, flags);
        long depth = RecencySketchNative.dimensions_depth(expectedKeys, tooNewProbability, flags);
        return new Dimensions(width, (int) depth);
    }

    /** {@link #dimensions(long, double, int)} without flags. */
    public static Dimensions dimensions(long expectedKeys, double tooNewProbability) {
        return dimensions(expectedKeys, tooNewProbability, 0);
    }

    /**
     * Reads a sketch from a blob written by {@link #serialize()} here or by
     * any other binding or the C API.
     *
     * @throws InvalidArgumentException a null blob ({@link Status#NULL})
     * @throws BadBlobException a blob that is not a whole, intact sketch
     *         ({@link Status#TRUNCATED} .. {@link Status#CORRUPT})
     * @throws NativeOutOfMemoryException the sketch does not fit in memory
     */
    public static RecencySketch deserialize(byte[] blob) {
        return deserialize(blob, 0);
    }

    /**
     * {@link #deserialize(byte[])}, refusing a blob that would make a sketch
     * of more than {@code maxMemory} bytes ({@link #memory()}) with
     * {@link Status#TOO_LARGE} before allocating anything; 0 sets no limit.
     */
    public static RecencySketch deserialize(byte[] blob, long maxMemory) {
        return new RecencySketch(RecencySketchNative.deserialize(blob, maxMemory));
    }

    /**
     * Records that {@code key} was seen at {@code now} (&gt;= 1): its cells
     * become max(cell, now). Older times than already recorded are harmless.
     *
     * @throws InvalidArgumentException a null key, now &lt;= 0
     */
    public void update(byte[] key, long now) {
        run(h -> h.update(key, now));
    }

    /** {@link #update(byte[], long)} with the key's UTF-8 bytes. */
    public void update(String key, long now) {
        update(Native.utf8(key, "key"), now);
    }

    /**
     * The estimated last time {@code key} was updated: {@link TemporalFilters#NEVER} (0) when
     * never seen (and no other key filled all its cells), otherwise a time at
     * or after its true last update.
     *
     * @throws InvalidArgumentException a null key
     */
    public long query(byte[] key) {
        return callLong(h -> h.query(key));
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
        return t == TemporalFilters.NEVER ? OptionalLong.empty() : OptionalLong.of(t);
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
     * @throws InvalidArgumentException a null key, now or interval &lt;= 0
     */
    public PaceResult pace(byte[] key, long now, long interval) {
        long[] next = new long[1];
        boolean granted = callLong(h -> h.pace(key, now, interval, next)) != 0;
        return new PaceResult(granted, next[0]);
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
     * @throws InvalidArgumentException a null key, now or ttl &lt;= 0
     */
    public void ttlInsert(byte[] key, long now, long ttl) {
        run(h -> h.ttl_insert(key, now, ttl));
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
     * @throws InvalidArgumentException a null key, now &lt;= 0
     */
    public boolean ttlMaybeLive(byte[] key, long now) {
        return callLong(h -> h.ttl_maybe_live(key, now)) != 0;
    }

    /** {@link #ttlMaybeLive(byte[], long)} with the key's UTF-8 bytes. */
    public boolean ttlMaybeLive(String key, long now) {
        return ttlMaybeLive(Native.utf8(key, "key"), now);
    }

    /**
     * Merges {@code other} into this sketch by cell-wise maximum, so that it
     * answers as if it had seen both streams.
     *
     * @throws InvalidArgumentException a null sketch
     * @throws ClosedException either sketch is closed
     * @throws IncompatibleException width, depth, layout or seed differ ({@link Status#INCOMPATIBLE};
     *         this sketch is left unchanged)
     */
    public void merge(RecencySketch other) {
        Native.notNull(other, "other");
        run(h -> other.run(o -> h.merge(o)));
    }

    /** Empties every cell. Needs exclusive access. */
    public void clear() {
        run(h -> h.clear());
    }

    /**
     * The estimated probability that a key whose true last update is at or
     * before {@code since} reads as newer than {@code since} (since = 0: that
     * a never-seen key reads as seen). Scans the whole table.
     */
    public double errorEstimate(long since) {
        return call(h -> h.error_estimate(since));
    }

    /** What the sketch was created with ({@code tf_recency_sketch_get_info}). */
    public Info info() {
        return value(h -> h.info(), i -> new Info(i.getWidth(), (int) i.getDepth(), i.getSeed(), (int) i.getFlags(),
                i.getCells()));
    }

    /**
     * Updates many keys in one native call: the same result as
     * {@code update(keys[i], times[i])} for every i in order, faster because
     * the per-call cost is paid once and the cells of the keys are fetched
     * together. The whole batch is checked first: a failed batch changes
     * nothing.
     *
     * @throws InvalidArgumentException a null array or key ({@link Status#NULL}),
     *         a time &lt;= 0, or
     *         not one time per key; the message names the index)
     */
    public void updateBatch(KeyBatch keys, long[] times) {
        Native.notNull(keys, "keys");
        run(h -> h.update_batch(keys.data, keys.lens, times));
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
     * @throws InvalidArgumentException a null argument ({@link Status#NULL}),
     *         out's length differs
     *         from the number of keys)
     */
    public long[] queryBatch(KeyBatch keys, long[] out) {
        Native.notNull(keys, "keys");
        run(h -> h.query_batch(keys.data, keys.lens, out));
        return out;
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
        return call(h -> TemporalFiltersNative.c_loop_ns(h, keysData, keyLen, op, t0));
    }

    @Override
    String describe() {
        Info i = info();
        return "width=" + i.width() + ", depth=" + i.depth() + ", seed=" + i.seed() + ", flags=" + i.flags();
    }
}
