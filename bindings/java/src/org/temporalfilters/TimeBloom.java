package org.temporalfilters;

/**
 * "Was this key inserted within the last {@code span} time units?": the
 * time-limited Bloom filter of the native library
 * ({@code temporalfilters/time_bloom.h}, which states the guarantees in full).
 *
 * <p>Age-partitioned slices with timestamps; the newest slices grow or shrink
 * with the measured insertion rate and slices older than the span retire
 * (down to the {@code k} newest; {@code k + l} in steady state). {@link #contains} is never wrong about a
 * key inserted at a time {@code t} with {@code now - span <= t}: it reports it
 * present. At a steady insertion rate the false-positive rate is at most the
 * target given to {@link #forTarget} (its peak is
 * {@link AgeBloom#falsePositiveRate(int, int)}); while the rate changes it may
 * rise above it for about one span. {@link #stats(long)} gives the exact rate
 * for the current slices.
 *
 * <p>Keys, time, numbers, errors and resources are as {@link TemporalFilters}
 * describes. The time unit must be fine enough that {@code span >= l}
 * (milliseconds rather than seconds for short spans). A clock that goes
 * backwards is clamped to the highest time seen, so it never causes a false
 * negative.
 *
 * <p><b>Threads</b>: the filter is not internally synchronised. Calls that do
 * not modify it ({@link #contains}, {@link #containsBatch}, {@link #stats},
 * {@link #sliceBits}, {@link #info}, {@link #memory}, {@link #serialize}) may
 * run concurrently with each other; {@link #add}, {@link #addIfAbsent}, their
 * batches, {@link #clear} and {@link #close} need exclusive access (lock
 * around them when threads share a filter).
 */
public final class TimeBloom extends NativeHandle<TimeBloomNative> {
    /**
     * Flag of {@link #forTarget(long, double, long, long, int)}
     * ({@code TF_TIME_BLOOM_MIN_MEMORY}): the {@code (k, l)} with the fewest
     * bits per element, however long its queries, as
     * {@link AgeBloom#MIN_MEMORY} (without it, absent queries test at most
     * {@link AgeBloom#PROBE_BUDGET} slices in expectation). Not recorded in
     * the filter or its blob; refused by the constructor.
     */
    public static final int MIN_MEMORY = (int) TemporalFiltersNative.TF_TIME_BLOOM_MIN_MEMORY;

    /**
     * What a filter was created with ({@code tf_time_bloom_info}).
     *
     * @param k     hash functions, bits set per insert (1..64)
     * @param l     window slices (1..1024): the filter has {@code k + l}
     *              slices in steady state (fewer, down to {@code k}, after
     *              slices older than the span retire)
     * @param span  the window, in the caller's time unit
     * @param seed  the hash seed, 0 .. 2^32-1
     * @param flags the creation flags: 0 ({@link #MIN_MEMORY} is not recorded)
     */
    public record Info(int k, int l, long span, long seed, int flags) {
    }

    /**
     * The filter's state at a time {@code now} ({@code tf_time_bloom_stats}).
     *
     * @param slices         current number of slices, at least {@code k} ({@code k + l} in steady state)
     * @param bits           total bits of all slices
     * @param bitsPerElement {@code bits} / inserts within the span before now (0 when none)
     * @param inserts        inserts since creation or {@link #clear()}
     * @param fprNow         the false-positive rate at now for the measured fill of every
     *                       slice, slices older than the span counting as empty
     */
    public record Stats(long slices, long bits, double bitsPerElement, long inserts, double fprNow) {
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
     * @param flags     0 ({@link #MIN_MEMORY} is refused: the caller chose {@code (k, l)})
     * @throws InvalidArgumentException k, l, sliceBits or span out of range, a
     *         negative number, a seed outside 32 bits, a flag
     *         ({@link Status#INVALID_ARGUMENT}); sliceBits above 2^40
     *         ({@link Status#TOO_LARGE})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public TimeBloom(int k, int l, long sliceBits, long span, long seed, int flags) {
        this(new TimeBloomNative(k, l, sliceBits, span, seed, flags));
    }

    /** An empty filter with seed 0: {@code TimeBloom(k, l, sliceBits, span, 0, 0)}. */
    public TimeBloom(int k, int l, long sliceBits, long span) {
        this(k, l, sliceBits, span, 0, 0);
    }

    private TimeBloom(TimeBloomNative handle) {
        super(handle, false);
    }

    /**
     * Creates a filter for the keys of the last {@code span} time units with a
     * false-positive rate of at most {@code errorRate} at a steady insertion
     * rate ({@code tf_time_bloom_new_for}): {@code (k, l)} from
     * {@link AgeBloom#choose(double)} (with {@link #MIN_MEMORY}, from
     * {@code AgeBloom.choose(errorRate, AgeBloom.MIN_MEMORY)}), initial slices sized for
     * {@code initialCapacity} inserts per span (the size adapts from the first
     * shift).
     *
     * @param initialCapacity expected inserts per span, &gt;= 1
     * @param errorRate       target false-positive rate, in (0, 1)
     * @param span            the window, &gt;= l of the chosen pair
     * @param seed            hash seed, 0 .. 2^32-1
     * @param flags           0 or {@link #MIN_MEMORY}
     * @throws InvalidArgumentException a rate outside (0, 1) or NaN, span &lt;
     *         l, initialCapacity &lt;= 0, a negative number, a seed outside 32
     *         bits, an unknown flag ({@link Status#INVALID_ARGUMENT}); no
     *         {@code k <= 64} meets the rate, or slices over 2^40 bits
     *         ({@link Status#TOO_LARGE})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public static TimeBloom forTarget(long initialCapacity, double errorRate, long span, long seed, int flags) {
        return new TimeBloom(TimeBloomNative.new_for(initialCapacity, errorRate, span, seed, flags));
    }

    /** {@link #forTarget(long, double, long, long, int)} with seed 0 and no flags. */
    public static TimeBloom forTarget(long initialCapacity, double errorRate, long span) {
        return forTarget(initialCapacity, errorRate, span, 0, 0);
    }

    /**
     * Reads a filter from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 3).
     *
     * @throws InvalidArgumentException a null blob ({@link Status#NULL})
     * @throws BadBlobException a blob that is not a whole, intact time-limited
     *         Bloom filter ({@link Status#TRUNCATED} .. {@link Status#CORRUPT})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public static TimeBloom deserialize(byte[] blob) {
        return deserialize(blob, 0);
    }

    /**
     * {@link #deserialize(byte[])}, refusing a blob that would make a filter
     * of more than {@code maxMemory} bytes ({@link #memory()}) with
     * {@link Status#TOO_LARGE} before allocating anything; 0 sets no limit.
     */
    public static TimeBloom deserialize(byte[] blob, long maxMemory) {
        return new TimeBloom(TimeBloomNative.deserialize(blob, maxMemory));
    }

    /**
     * Inserts {@code key} at time {@code now} (&gt;= 1). A shift may allocate a
     * new slice; when that fails the filter is unchanged. Needs exclusive access.
     *
     * @throws InvalidArgumentException a null key, now &lt;= 0; past 4096
     *         slices, a clock that never advances ({@link Status#TOO_LARGE})
     * @throws NativeOutOfMemoryException a new slice does not fit in memory
     */
    public void add(byte[] key, long now) {
        run(h -> h.add(key, now));
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
     * @throws InvalidArgumentException a null key, now &lt;= 0
     */
    public boolean contains(byte[] key, long now) {
        return callLong(h -> h.contains(key, now)) != 0;
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
     * @throws InvalidArgumentException as {@link #add(byte[], long)}
     * @throws NativeOutOfMemoryException as {@link #add(byte[], long)}
     */
    public boolean addIfAbsent(byte[] key, long now) {
        return callLong(h -> h.add_if_absent(key, now)) != 0;
    }

    /** {@link #addIfAbsent(byte[], long)} with the key's UTF-8 bytes. */
    public boolean addIfAbsent(String key, long now) {
        return addIfAbsent(Native.utf8(key, "key"), now);
    }

    /**
     * {@link #add(byte[], long) add}{@code (keys[i], now)} for every key, in
     * order, in one native call that overlaps the keys' memory reads: the same
     * filter as those single calls. Every argument is checked before anything
     * changes. Needs exclusive access.
     *
     * @throws InvalidArgumentException a null argument, now &lt;= 0 (nothing
     *         added); past 4096 slices ({@link Status#TOO_LARGE}: the keys
     *         before the failing one were added)
     * @throws NativeOutOfMemoryException a new slice did not fit in memory: the
     *         keys before the failing one were added
     */
    public void addBatch(KeyBatch keys, long now) {
        keysBatch(keys, (h, data, lens) -> h.add_batch(data, lens, now));
    }

    /** {@link #addBatch(KeyBatch, long)} of binary keys. */
    public void addBatch(byte[][] keys, long now) {
        addBatch(KeyBatch.of(keys), now);
    }

    /** {@link #addBatch(KeyBatch, long)} of string keys (UTF-8). */
    public void addBatch(String[] keys, long now) {
        addBatch(KeyBatch.of(keys), now);
    }

    /**
     * {@link #contains(byte[], long) contains}{@code (keys[i], now)} for every
     * key, in one native call that overlaps the keys' memory reads.
     *
     * @return one answer per key, in the order of the keys
     * @throws InvalidArgumentException a null argument, now &lt;= 0
     */
    public boolean[] containsBatch(KeyBatch keys, long now) {
        return presentBatch(keys, (h, data, lens, present) -> h.contains_batch(data, lens, now, present));
    }

    /** {@link #containsBatch(KeyBatch, long)} of binary keys. */
    public boolean[] containsBatch(byte[][] keys, long now) {
        return containsBatch(KeyBatch.of(keys), now);
    }

    /** {@link #containsBatch(KeyBatch, long)} of string keys (UTF-8). */
    public boolean[] containsBatch(String[] keys, long now) {
        return containsBatch(KeyBatch.of(keys), now);
    }

    /**
     * {@link #addIfAbsent(byte[], long) addIfAbsent}{@code (keys[i], now)} for
     * every key, in order, in one native call: the same answers and the same
     * filter as those single calls (a key repeated within the batch is present
     * from its second occurrence on). Every argument is checked before
     * anything changes. Needs exclusive access.
     *
     * @return one answer per key, in the order of the keys
     * @throws InvalidArgumentException as {@link #addBatch(KeyBatch, long)}
     * @throws NativeOutOfMemoryException a new slice did not fit in memory: the
     *         keys before the failing one were processed, and their answers
     *         are not returned
     */
    public boolean[] addIfAbsentBatch(KeyBatch keys, long now) {
        return presentBatch(keys, (h, data, lens, present) -> h.add_if_absent_batch(data, lens, now, present));
    }

    /** {@link #addIfAbsentBatch(KeyBatch, long)} of binary keys. */
    public boolean[] addIfAbsentBatch(byte[][] keys, long now) {
        return addIfAbsentBatch(KeyBatch.of(keys), now);
    }

    /** {@link #addIfAbsentBatch(KeyBatch, long)} of string keys (UTF-8). */
    public boolean[] addIfAbsentBatch(String[] keys, long now) {
        return addIfAbsentBatch(KeyBatch.of(keys), now);
    }

    /** Forgets every key and resets the insert count (slices keep their sizes). Needs exclusive access. */
    public void clear() {
        run(h -> h.clear());
    }

    /** What the filter was created with ({@code tf_time_bloom_get_info}): O(1). */
    public Info info() {
        return value(h -> h.info(), i -> new Info((int) i.getK(), (int) i.getL(), i.getSpan(), i.getSeed(),
                (int) i.getFlags()));
    }

    /**
     * The state at time {@code now} (&gt;= 1) ({@code tf_time_bloom_get_stats}).
     * {@link Stats#fprNow()} scans every slice (O(bits / 64)).
     *
     * @throws InvalidArgumentException now &lt;= 0
     */
    public Stats stats(long now) {
        return value(h -> h.stats(now), s -> new Stats(s.getSlices(), s.getBits(), s.getBits_per_element(),
                s.getInserts(), s.getFpr_now()));
    }

    /**
     * The size of slice {@code i} in bits (0 = the newest; {@code i} below
     * {@link Stats#slices()}).
     *
     * @throws InvalidArgumentException no such slice, i &lt; 0
     */
    public long sliceBits(long i) {
        return callLong(h -> h.slice_bits(i));
    }

    /* The C loop of the benchmarks (tf_binding_time_bloom_c_loop_ns), as
     * AgeBloom.cLoopNs, at time now. */
    double cLoopNs(byte[] keysData, int keyLen, int op, long now) {
        return call(h -> TemporalFiltersNative.time_bloom_c_loop_ns(h, keysData, keyLen, op, now));
    }

    @Override
    String describe() {
        Info i = info();
        return "k=" + i.k() + ", l=" + i.l() + ", span=" + i.span() + ", seed=" + i.seed();
    }
}
