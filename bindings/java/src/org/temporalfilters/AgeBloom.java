package org.temporalfilters;

import java.lang.ref.Cleaner;
import java.lang.ref.Reference;

/**
 * "Was this key among the last N inserts?" in fixed memory: the count-window
 * age-partitioned Bloom filter of the native library
 * ({@code temporalfilters/age_bloom.h}, which states the guarantees in full).
 *
 * <p>{@code k + l} slices of {@code sliceBits} bits. An insert sets one bit in
 * each of the {@code k} newest slices; every {@link #generation()} inserts the
 * slices shift and the oldest is emptied. {@link #contains} is never wrong
 * about a key among the last {@link #capacity()} ({@code l * generation})
 * inserts: it reports it present. A key not inserted within the window is
 * reported present with a probability of at most
 * {@link #falsePositiveRate(int, int)} (the peak, just before a shift; keys
 * inserted between {@code l * g} and {@code (l + 1) * g} inserts ago may still
 * read as present).
 *
 * <p><b>Layouts</b>: the constructor and {@link #forTarget} give the classic
 * layout, one array per slice. {@link #blocked} and {@link #blockedForTarget}
 * give the <em>blocked</em> layout: the same window and the same guarantee
 * (no false negatives among the last {@link #capacity()} inserts), with
 * {@code k + l <= 32} slices stored as the 32-bit lanes of 64-byte lines, so a
 * query reads one or two cache lines instead of one per slice: several times
 * faster, for more memory (about 23 bits per element at 1e-2 and 35 at 1e-3,
 * against 20 and 26; below 1e-3 the classic layout is the better choice). Its
 * sizing ({@link #chooseBlocked}) uses a conservative model of the blocking,
 * so {@link #falsePositiveRate(int, int)} does not apply to it;
 * {@link Stats#fprNow()} reports the model's rate. Every method works on both;
 * {@link #isBlocked()} tells which, and the blob records it.
 *
 * <p><b>Keys</b> are byte strings: {@code byte[]} (binary-safe, NUL bytes
 * included) or {@code String}, which stands for its UTF-8 bytes.
 *
 * <p><b>Numbers</b>: the native library counts in unsigned integers. Sizes
 * ({@code sliceBits}, {@code capacity}) are {@code long}s and a negative one is
 * rejected with {@link Status#ERR_INVALID_ARGUMENT}, never reinterpreted; the
 * seed is a {@code long} within 0 .. 2^32-1.
 *
 * <p><b>Errors</b>: every failure is a {@link TemporalFiltersException} carrying
 * the C status.
 *
 * <p><b>Resources</b>: the native memory is freed by {@link #close()}; use
 * try-with-resources. A filter that is never closed is freed by a
 * {@link Cleaner} after it becomes unreachable. Any call on a closed filter
 * fails with {@link Status#ERR_NULL} ("the AgeBloom is closed").
 *
 * <p><b>Threads</b>: a filter, of either layout, is not internally
 * synchronised. Calls that do not modify it ({@link #contains},
 * {@link #stats}, the getters, {@link #isBlocked}, {@link #memory},
 * {@link #serialize}) may run concurrently with each other; {@link #add},
 * {@link #addIfAbsent}, {@link #clear} and {@link #close} need exclusive
 * access (lock around them when threads share a filter). The static
 * factories and sizing helpers are thread-safe.
 */
public final class AgeBloom implements AutoCloseable {

    /** A {@code (k, l)} pair: hash functions (bits set per insert) and window slices. */
    public record Parameters(int k, int l) {
    }

    /**
     * The sizing of the blocked layout ({@code tf_age_bloom_choose_blocked}).
     *
     * @param k    hash functions (bits set per insert)
     * @param l    window slices; {@code k + l} is 16 or 32
     * @param fill the fill ratio (set bits / slice bits) of a slice when it
     *             leaves the first {@code k}, in (0, 1)
     */
    public record BlockedParameters(int k, int l, double fill) {
    }

    /**
     * The filter's state ({@code tf_age_bloom_stats}).
     *
     * @param slices         number of slices, {@code k + l}
     * @param bits           total bits of all slices (blocked: of all 64-byte
     *                       lines, unused lanes included)
     * @param bitsPerElement {@code bits / capacity}
     * @param inserts        inserts since creation or {@link #clear()}
     * @param fprNow         the false-positive rate for the measured fill of every slice
     *                       (blocked: under the layout's conservative model)
     */
    public record Stats(long slices, long bits, double bitsPerElement, long inserts, double fprNow) {
    }

    private final AgeBloomNative handle;
    private final Cleaner.Cleanable cleanable;
    private volatile boolean closed;

    /* The cleaning action holds the native proxy only, never the filter. */
    private static final class Release implements Runnable {
        private final AgeBloomNative handle;

        Release(AgeBloomNative handle) {
            this.handle = handle;
        }

        @Override
        public void run() {
            handle.delete();
        }
    }

    /**
     * Creates an empty filter of {@code k + l} slices of {@code sliceBits} bits
     * ({@code tf_age_bloom_new}). The generation is
     * {@code max(1, floor(sliceBits * ln 2 / k))} inserts and the capacity
     * {@code l} generations.
     *
     * @param k         hash functions, 1..64
     * @param l         window slices, 1..1024
     * @param sliceBits bits per slice, 64 .. 2^40
     * @param seed      hash seed, 0 .. 2^32-1
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (k, l
     *         or sliceBits out of range, a negative number, a seed outside 32
     *         bits), {@link Status#ERR_TOO_LARGE} (sliceBits above 2^40),
     *         {@link Status#ERR_OUT_OF_MEMORY}
     */
    public AgeBloom(int k, int l, long sliceBits, long seed) {
        this(new AgeBloomNative(k, l, sliceBits, seed, 0));
    }

    private AgeBloom(AgeBloomNative handle) {
        if (handle == null) {
            throw new TemporalFiltersException(Status.ERR_INTERNAL, "the native layer returned no handle");
        }
        this.handle = handle;
        this.cleanable = Native.CLEANER.register(this, new Release(handle));
    }

    /**
     * Creates a filter that remembers at least the last {@code capacity}
     * inserts with a false-positive rate of at most {@code errorRate}
     * ({@code tf_age_bloom_new_for}): {@code (k, l)} from {@link #choose},
     * generation {@code ceil(capacity / l)}.
     *
     * @param errorRate target false-positive rate, in (0, 1)
     * @param capacity  window length in inserts, &gt;= 1
     * @param seed      hash seed, 0 .. 2^32-1
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (a rate
     *         outside (0, 1) or NaN, capacity &lt;= 0, a seed outside 32 bits),
     *         {@link Status#ERR_TOO_LARGE} (no {@code k <= 64} meets the rate, or
     *         slices over 2^40 bits), {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static AgeBloom forTarget(double errorRate, long capacity, long seed) {
        return new AgeBloom(AgeBloomNative.new_for(capacity, errorRate, seed, 0));
    }

    /**
     * Creates an empty filter of the blocked layout that remembers at least the
     * last {@code capacity} inserts with a false-positive rate of at most
     * {@code errorRate} ({@code tf_age_bloom_new_blocked_for}): {@code (k, l)}
     * and the fill from {@link #chooseBlocked}, generation
     * {@code ceil(capacity / l)}, slices of
     * {@code k * generation / -ln(1 - fill)} bits rounded up to a multiple of 32.
     *
     * @param errorRate target false-positive rate, in (0, 0.2] (above, the
     *                  blocked model is not conservative: use the classic layout)
     * @param capacity  window length in inserts, &gt;= 1
     * @param seed      hash seed, 0 .. 2^32-1
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (a rate
     *         outside (0, 0.2] or NaN, capacity &lt;= 0, a seed outside 32 bits),
     *         {@link Status#ERR_TOO_LARGE} (no blocked {@code (k, l)} meets the
     *         rate, or slices over 2^40 bits), {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static AgeBloom blockedForTarget(double errorRate, long capacity, long seed) {
        return new AgeBloom(AgeBloomNative.new_for(capacity, errorRate, seed, BLOCKED_FLAG));
    }

    /**
     * Creates an empty filter of the blocked layout with {@code k + l} slices of
     * {@code sliceBits} bits rounded up to a multiple of 32
     * ({@code tf_age_bloom_new_blocked}). The generation is
     * {@code max(1, floor(roundedBits * ln 2 / k))} inserts and the capacity
     * {@code l} generations. Memory: {@code ceil((k + l) / 16)} lines of 64
     * bytes per 32 bits of slice (unused lanes included).
     *
     * @param k         hash functions, &gt;= 1
     * @param l         window slices, &gt;= 1, with {@code k + l <= 32}
     * @param sliceBits bits per slice, 32 .. 2^40
     * @param seed      hash seed, 0 .. 2^32-1
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (k or
     *         l of 0, {@code k + l > 32}, sliceBits below 32, a negative number,
     *         a seed outside 32 bits), {@link Status#ERR_TOO_LARGE} (sliceBits
     *         above 2^40), {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static AgeBloom blocked(int k, int l, long sliceBits, long seed) {
        return new AgeBloom(new AgeBloomNative(k, l, sliceBits, seed, BLOCKED_FLAG));
    }

    /**
     * Reads a filter from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 2), of either layout (the
     * blob says which).
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null blob),
     *         {@link Status#ERR_TRUNCATED}, {@link Status#ERR_BAD_MAGIC},
     *         {@link Status#ERR_UNSUPPORTED_VERSION}, {@link Status#ERR_WRONG_KIND}
     *         (a blob of another structure), {@link Status#ERR_CHECKSUM},
     *         {@link Status#ERR_CORRUPT}, {@link Status#ERR_OUT_OF_MEMORY}
     */
    public static AgeBloom deserialize(byte[] blob) {
        return new AgeBloom(AgeBloomNative.deserialize(blob));
    }

    /**
     * The {@code (k, l)} pair whose steady-state false-positive rate is at most
     * {@code errorRate} with the fewest bits per element ({@code tf_age_bloom_choose};
     * l is at most 256). {@link #forTarget} and {@link TimeBloom#forTarget} use it.
     *
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (a rate
     *         outside (0, 1) or NaN), {@link Status#ERR_TOO_LARGE} (no pair with
     *         {@code k <= 64} meets it)
     */
    public static Parameters choose(double errorRate) {
        long k = AgeBloomNative.choose_k(errorRate, 0);
        long l = AgeBloomNative.choose_l(errorRate, 0);
        return new Parameters((int) k, (int) l);
    }

    /**
     * The {@code (k, l)} with {@code k + l} of 16 or 32 and the fill ratio that
     * meet {@code errorRate} with the fewest bits per element in the blocked
     * layout, under its conservative model ({@code tf_age_bloom_choose_blocked}).
     * {@link #blockedForTarget} uses it.
     *
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (a rate
     *         outside (0, 0.2] or NaN), {@link Status#ERR_TOO_LARGE} (no blocked
     *         pair meets it: below about 1e-18; far below 1e-3 the classic
     *         layout is the better choice anyway)
     */
    public static BlockedParameters chooseBlocked(double errorRate) {
        long k = AgeBloomNative.choose_k(errorRate, BLOCKED_FLAG);
        long l = AgeBloomNative.choose_l(errorRate, BLOCKED_FLAG);
        double fill = AgeBloomNative.choose_fill(errorRate, BLOCKED_FLAG);
        return new BlockedParameters((int) k, (int) l, fill);
    }

    /**
     * The exact steady-state false-positive rate of a filter with parameters
     * {@code (k, l)}, at its peak just before a shift
     * ({@code tf_age_bloom_false_positive_rate}). For the classic layout; the
     * blocked layout errs more at the same {@code (k, l)} and fill.
     *
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (k
     *         outside 1..64, l outside 1..1024)
     */
    public static double falsePositiveRate(int k, int l) {
        return AgeBloomNative.false_positive_rate(k, l);
    }

    /**
     * Bits per element of capacity at steady state, {@code (k + l) k / (l ln 2)}
     * ({@code tf_age_bloom_bits_per_element}).
     *
     * @throws TemporalFiltersException {@link Status#ERR_INVALID_ARGUMENT} (k
     *         outside 1..64, l outside 1..1024)
     */
    public static double bitsPerElement(int k, int l) {
        return AgeBloomNative.steady_bits_per_element(k, l);
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
     * Inserts {@code key} (shifting the slices first when the generation is
     * full). Needs exclusive access.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed)
     */
    public void add(byte[] key) {
        try {
            handle.add(key);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #add(byte[])} with the key's UTF-8 bytes. */
    public void add(String key) {
        add(Native.utf8(key, "key"));
    }

    /**
     * Whether {@code key} is (probably) among the last inserts: always true for
     * a key among the last {@link #capacity()} inserts; false means certainly
     * not among them.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed)
     */
    public boolean contains(byte[] key) {
        try {
            return handle.contains(key) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #contains(byte[])} with the key's UTF-8 bytes. */
    public boolean contains(String key) {
        return contains(Native.utf8(key, "key"));
    }

    /**
     * De-duplication in one call: returns what {@link #contains(byte[])} would
     * have said, and inserts the key only when it was absent. So {@code false}
     * means "new: recorded now", {@code true} "seen within the window: not
     * inserted again". Needs exclusive access.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (null key, closed)
     */
    public boolean addIfAbsent(byte[] key) {
        try {
            return handle.add_if_absent(key) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** {@link #addIfAbsent(byte[])} with the key's UTF-8 bytes. */
    public boolean addIfAbsent(String key) {
        return addIfAbsent(Native.utf8(key, "key"));
    }

    /** Forgets every key and resets the insert count (the shape stays). Needs exclusive access. */
    public void clear() {
        try {
            handle.clear();
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * The current state. {@link Stats#fprNow()} scans every slice
     * (O(bits / 64)).
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (closed)
     */
    public Stats stats() {
        try {
            AgeBloomStatsNative s = handle.stats();
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
     * Whether the filter has the blocked layout ({@link #blocked},
     * {@link #blockedForTarget}, or a blob of one); false for the classic one.
     *
     * @throws TemporalFiltersException {@link Status#ERR_NULL} (closed)
     */
    public boolean isBlocked() {
        try {
            return (info(AgeBloomInfoNative::getFlags) & BLOCKED_FLAG) != 0;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Hash functions, bits set per insert (1..64). */
    public int k() {
        try {
            return (int) info(AgeBloomInfoNative::getK);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Window slices (1..1024; blocked: {@code k + l <= 32}). */
    public int l() {
        try {
            return (int) info(AgeBloomInfoNative::getL);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Bits per slice (blocked: a multiple of 32). */
    public long sliceBits() {
        try {
            return info(AgeBloomInfoNative::getSlice_bits);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** Inserts per generation: the slices shift every this many inserts. */
    public long generation() {
        try {
            return info(AgeBloomInfoNative::getGeneration);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The window in inserts, {@code l * generation}: every key among the last this many inserts is contained. */
    public long capacity() {
        try {
            return info(AgeBloomInfoNative::getCapacity);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /** The hash seed, 0 .. 2^32-1. */
    public long seed() {
        try {
            return info(AgeBloomInfoNative::getSeed);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /* TF_AGE_BLOOM_BLOCKED */
    private static final long BLOCKED_FLAG = 1;

    /* One field of tf_age_bloom_get_info; the native copy is freed once read. */
    private long info(java.util.function.ToLongFunction<AgeBloomInfoNative> field) {
        AgeBloomInfoNative info = handle.info();
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
     * The filter as a blob (wire format kind 2): parameters, counters and every
     * slice, little-endian, with a checksum. Any binding reads it back with its
     * deserialize.
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
            return "AgeBloom(closed)";
        }
        return "AgeBloom(" + (isBlocked() ? "blocked, " : "") + "k=" + k() + ", l=" + l() + ", sliceBits=" + sliceBits() + ", capacity=" + capacity()
                + ", seed=" + seed() + ")";
    }
}
