package org.temporalfilters;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * "Was this key inserted within the last {@code span} time units?": the
 * time-limited Bloom filter of the native library
 * ({@code temporalfilters/time_bloom.h}, which states the guarantees in full).
 *
 * <p>Age-partitioned slices with timestamps; the newest slices grow or shrink
 * with the measured insertion rate and slices older than the span retire
 * (never fewer than {@code k + l}). {@link #contains} is never wrong about a
 * key inserted at a time {@code t} with {@code now - span <= t}: it reports it
 * present. At a steady insertion rate the false-positive rate is at most the
 * target given to {@link #forTarget} (its peak is
 * {@link AgeBloom#falsePositiveRate(int, int)}); while the rate changes it may
 * rise above it for about one span. {@link #stats(long)} gives the exact rate
 * for the current slices.
 *
 * <p><b>Keys</b> are byte strings: {@code byte[]} (binary-safe, NUL bytes
 * included) or {@code String}, which stands for its UTF-8 bytes.
 *
 * <p><b>Time</b> is always an argument, a {@code long} in the caller's own unit,
 * fine enough that {@code span >= l} (milliseconds rather than seconds for
 * short spans). {@code now} must be &gt;= 1. The native library counts time in
 * unsigned 64-bit integers; Java has no such type, so a negative argument is
 * rejected with {@link Status#ERR_INVALID_ARGUMENT} (never reinterpreted). A
 * clock that goes backwards is clamped to the highest time seen, so it never
 * causes a false negative.
 *
 * <p><b>Errors</b>: every failure is a {@link TemporalFiltersException} carrying
 * the C status.
 *
 * <p><b>Resources</b>: the native memory is freed by {@link #close()}; use
 * try-with-resources. A filter that is never closed is freed by a
 * {@link Cleaner} after it becomes unreachable. Any call on a closed filter
 * fails with {@link Status#ERR_NULL} ("the TimeBloom is closed").
 *
 * <p><b>Threads</b>: the filter is not internally synchronised. Calls that do
 * not modify it ({@link #contains}, {@link #stats}, {@link #sliceBits}, the
 * getters, {@link #memory}, {@link #serialize}) may run concurrently with each
 * other; {@link #add}, {@link #addIfAbsent}, {@link #clear} and {@link #close}
 * need exclusive access (lock around them when threads share a filter).
 */
public final class TimeBloom implements AutoCloseable {

    /**
     * The filter's state at a time {@code now} ({@code tf_time_bloom_stats}).
     *
     * @param slices         current number of slices, at least {@code k + l}
     * @param bits           total bits of all slices
     * @param bitsPerElement {@code bits} / inserts within the span before now (0 when none)
     * @param inserts        inserts since creation or {@link #clear()}
     * @param fprNow         the false-positive rate at now for the measured fill of every
     *                       slice, slices older than the span counting as empty
     */
    public record Stats(long slices, long bits, double bitsPerElement, long inserts, double fprNow) {
    }

    private final TimeBloomNative handle;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    /* The cleaning action holds the native proxy only, never the filter. */
    private static final class Release implements Runnable {
        private final TimeBloomNative handle;

        Release(TimeBloomNative handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            handle.delete();
        }
    }

    /**
     * Creates an empty filter of {@code k + l} initial slices of
     * {@code sliceBits} bits ({@code tf_time_bloom_new}).
     *
     * @param k         hash functions, 1..64
     * @param l         window slices, 1..1024
     * @param sliceBits bits per initial slice, 64 .. 2^40
     * @param span      the window, in the caller's time unit, &gt;= l
     * @param seed      hash seed, 0 .. 2^32-1
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (k, l,
     *         sliceBits or span out of range, a negative number, a seed outside
     *         32 bits), {@link Status#ERR_TOO_LARGE} (sliceBits above 2^40),
     *         {@link Status#ERR_OUT_OF_MEMORY}
     */
    public TimeBloom(int k, int l, long sliceBits, long span, long seed) {
        this(new TimeBloomNative(k, l, sliceBits, span, seed, 0));
    }

    private TimeBloom(TimeBloomNative handle) {
        if (handle == null) {
            throw new TemporalFiltersException(Status.ERR_INTERNAL, "the native layer returned no handle");
        }
        this.handle = handle;
        this.cleanable = Native.CLEANER.register(this, new Release(handle));
    }

    /**
     * Creates a filter for the keys of the last {@code span} time units with a
     * false-positive rate of at most {@code errorRate} at a steady insertion
     * rate ({@code tf_time_bloom_new_for}): {@code (k, l)} from
     * {@link AgeBloom#choose}, initial slices sized for {@code initialCapacity}
     * inserts per span (the size adapts from the first shift).
     *
     * @param errorRate       target false-positive rate, in (0, 1)
     * @param span            the window, &gt;= l of the chosen pair
     * @param initialCapacity expected inserts per span, &gt;= 1
     * @param seed            hash seed, 0 .. 2^32-1
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (a rate
     *         outside (0, 1) or NaN, span &lt; l, initialCapacity &lt;= 0, a
     *         negative number, a seed outside 32 bits), {@link Status#ERR_TOO_LARGE}
     *         (no {@code k <= 64} meets the rate, or slices over 2^40 bits),
     *         {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static TimeBloom forTarget(double errorRate, long span, long initialCapacity, long seed) {
        return new TimeBloom(TimeBloomNative.new_for(initialCapacity, errorRate, span, seed, 0));
    }

    /**
     * Reads a filter from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 3).
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null blob),
     *         {@link Status#ERR_TRUNCATED}, {@link Status#ERR_BAD_MAGIC},
     *         {@link Status#ERR_UNSUPPORTED_VERSION}, {@link Status#ERR_WRONG_KIND}
     *         (a blob of another structure), {@link Status#ERR_CHECKSUM},
     *         {@link Status#ERR_CORRUPT}, {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static TimeBloom deserialize(byte[] blob) {
        return new TimeBloom(TimeBloomNative.deserialize(blob));
    }

    /**
     * Frees the native memory now. Idempotent; afterwards every call fails with
     * {@link Status#ERR_NULL}. Needs exclusive access.
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
     * Inserts {@code key} at time {@code now} (&gt;= 1). A shift may allocate a
     * new slice; when that fails the filter is unchanged. Needs exclusive access.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now &lt;= 0),
     *         {@link Status#ERR_OUT_OF_MEMORY}, {@link Status#ERR_TOO_LARGE}
     *         (past 4096 slices: a clock that never advances)
     */
    public void add(byte[] key, long now) {
        try {
            handle.add(key, now);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #add(byte[], long)} with the key's UTF-8 bytes. */
    public void add(String key, long now) {
        add(Native.utf8(key, "key"), now);
    }

    /**
     * Whether {@code key} was (probably) inserted within the span before
     * {@code now}: always true for a key inserted at a time {@code t} with
     * {@code now - span <= t}; false means certainly not.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now &lt;= 0)
     */
    public boolean contains(byte[] key, long now) {
        try {
            return handle.contains(key, now) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #contains(byte[], long)} with the key's UTF-8 bytes. */
    public boolean contains(String key, long now) {
        return contains(Native.utf8(key, "key"), now);
    }

    /**
     * De-duplication in one call: returns what {@link #contains(byte[], long)}
     * would have said, and inserts the key at {@code now} only when it was
     * absent. So {@code false} means "new: recorded now", {@code true} "seen
     * within the span: not inserted again". Needs exclusive access.
     *
     * @throws TemporalFiltersException as {@link #add(byte[], long)}
     */
    public boolean addIfAbsent(byte[] key, long now) {
        try {
            return handle.add_if_absent(key, now) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #addIfAbsent(byte[], long)} with the key's UTF-8 bytes. */
    public boolean addIfAbsent(String key, long now) {
        return addIfAbsent(Native.utf8(key, "key"), now);
    }

    /** Forgets every key and resets the insert count (slices keep their sizes). Needs exclusive access. */
    public void clear() {
        try {
            handle.clear();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The state at time {@code now} (&gt;= 1). {@link Stats#fprNow()} scans
     * every slice (O(bits / 64)).
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (now &lt;= 0)
     */
    public Stats stats(long now) {
        try {
            TimeBloomStatsNative s = handle.stats(now);
            try {
                return new Stats(s.getSlices(), s.getBits(), s.getBits_per_element(), s.getInserts(), s.getFpr_now());
            } finally {
                s.delete();
            }
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The size of slice {@code i} in bits (0 = the newest; {@code i} below
     * {@link Stats#slices()}).
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (closed),
     *         {@link Status#ERR_INVALID_ARGUMENT} (no such slice, i &lt; 0)
     */
    public long sliceBits(long i) {
        try {
            return handle.slice_bits(i);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Hash functions, bits set per insert (1..64). */
    public int k() {
        try {
            return (int) info(TimeBloomInfoNative::getK);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Window slices (1..1024): the filter never has fewer than {@code k + l} slices. */
    public int l() {
        try {
            return (int) info(TimeBloomInfoNative::getL);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The window, in the caller's time unit. */
    public long span() {
        try {
            return info(TimeBloomInfoNative::getSpan);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The hash seed, 0 .. 2^32-1. */
    public long seed() {
        try {
            return info(TimeBloomInfoNative::getSeed);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /* One field of tf_time_bloom_get_info; the native copy is freed once read. */
    private long info(java.util.function.ToLongFunction<TimeBloomInfoNative> field) {
        TimeBloomInfoNative info = handle.info();
        try {
            return field.applyAsLong(info);
        } finally {
            info.delete();
        }
    }

    /** Bytes of native memory held. */
    public long memory() {
        try {
            return handle.memory();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The filter as a blob (wire format kind 3): parameters, counters, every
     * slice with its size and timestamp, little-endian, with a checksum. Any
     * binding reads it back with its deserialize.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (closed),
     *         {@link Status#ERR_TOO_LARGE} (the blob exceeds the largest Java array)
     */
    public byte[] serialize() {
        try {
            return Native.serialize(handle.serialized_size(), "filter", handle::serialize_into);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    @Override
    public String toString() {
        if (closed) {
            return "TimeBloom(closed)";
        }
        return "TimeBloom(k=" + k() + ", l=" + l() + ", span=" + span() + ", seed=" + seed() + ")";
    }
}
