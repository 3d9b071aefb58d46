package org.temporalfilters;

/**
 * "Was this key among the last N inserts?" in fixed memory: the count-window
 * age-partitioned Bloom filter of the native library
 * ({@code temporalfilters/age_bloom.h}, which states the guarantees in full).
 *
 * <p>{@code k + l} slices of {@code sliceBits} bits. An insert sets one bit in
 * each of the {@code k} newest slices; every {@link Info#generation()} inserts
 * the slices shift and the oldest is emptied. {@link #contains} is never wrong
 * about a key among the last {@link Info#capacity()} ({@code l * generation})
 * inserts: it reports it present. A key not inserted within the window is
 * reported present with a probability of at most
 * {@link #falsePositiveRate(int, int)} (the peak, just before a shift; keys
 * inserted between {@code l * g} and {@code (k + l) * g} inserts ago may still
 * read as present, fewer and fewer as their slices leave).
 *
 * <p><b>Layouts</b> are a flag. Without flags a filter has the classic layout,
 * one array per slice. With {@link #BLOCKED} it has the <em>blocked</em>
 * layout: the same window and the same guarantee (no false negatives among the
 * last {@link Info#capacity()} inserts), with {@code k + l <= 32} slices
 * stored as the 32-bit lanes of 64-byte lines, so a query reads one or two
 * cache lines instead of one per slice: several times faster, for more memory
 * (about 23 bits per element at 1e-2 and 35 at 1e-3, against 20 and 26; below
 * 1e-3 the classic layout is the better choice). Its sizing
 * ({@link #choose(double, int)} with {@link #BLOCKED}) uses a conservative
 * model of the blocking, so {@link #falsePositiveRate(int, int)} does not
 * apply to it; {@link Stats#fprNow()} reports the model's rate. Every method
 * works on both; {@link Info#flags()} tells which, and the blob records it.
 *
 * <p>Keys, numbers, errors and resources are as {@link TemporalFilters}
 * describes; sizes ({@code sliceBits}, {@code capacity}) are {@code long}s.
 *
 * <p><b>Threads</b>: a filter, of either layout, is not internally
 * synchronised. Calls that do not modify it ({@link #contains},
 * {@link #containsBatch}, {@link #stats}, {@link #info}, {@link #memory},
 * {@link #serialize}) may run concurrently with each other; {@link #add},
 * {@link #addIfAbsent}, their batches, {@link #clear} and {@link #close}
 * need exclusive access (lock around them when threads share a filter). The
 * static factories and sizing helpers are thread-safe.
 */
public final class AgeBloom extends NativeHandle<AgeBloomNative> {
    /** Flag: the blocked layout ({@code TF_AGE_BLOOM_BLOCKED}). */
    public static final int BLOCKED = (int) TemporalFiltersNative.TF_AGE_BLOOM_BLOCKED;

    /**
     * Flag of {@link #choose(double, int)} and {@link #forTarget(long, double, long, int)}
     * ({@code TF_AGE_BLOOM_MIN_MEMORY}), classic layout: the {@code (k, l)}
     * with the fewest bits per element, however long its queries (at 1e-2:
     * {@code (12, 87)}, 19.70 bits and 16.2 probes per absent key, against
     * the default {@code (10, 24)}, 20.44 bits and 5.8 probes). Not recorded
     * in the filter or its blob; refused with {@link #BLOCKED} and by the
     * constructor, where the caller gives {@code (k, l)}.
     */
    public static final int MIN_MEMORY = (int) TemporalFiltersNative.TF_AGE_BLOOM_MIN_MEMORY;

    /**
     * The default choice's bound on the slices a query for an absent key tests
     * in expectation, at the filter's worst moment
     * ({@code TF_AGE_BLOOM_PROBE_BUDGET}, 6.0): {@link #choose(double)} picks
     * the fewest bits per element among the pairs whose
     * {@link #expectedProbes(int, int)}{@code .absent()} is at most this.
     */
    public static final double PROBE_BUDGET = TemporalFiltersNative.TF_AGE_BLOOM_PROBE_BUDGET;

    /**
     * A sizing ({@code tf_age_bloom_choose}).
     *
     * @param k    hash functions (bits set per insert)
     * @param l    window slices (blocked: {@code k + l} is 16 or 32)
     * @param fill the fill ratio (set bits / slice bits) of a slice when it
     *             leaves the first {@code k}, in (0, 1); 1/2 for the classic
     *             layout
     */
    public record Parameters(int k, int l, double fill) {
    }

    /**
     * What a query of a classic filter costs ({@code tf_age_bloom_expected_probes}):
     * the slices it tests in expectation at the filter's worst moment (just
     * before a shift), each one random memory read.
     *
     * @param absent  for a key not in the filter
     * @param present for a key of uniformly random age within the window (at
     *                least {@code k})
     */
    public record Probes(double absent, double present) {
    }

    /**
     * What a filter was created with ({@code tf_age_bloom_info}).
     *
     * @param k          hash functions, bits set per insert (1..64)
     * @param l          window slices (1..1024; blocked: {@code k + l <= 32})
     * @param sliceBits  bits per slice (blocked: a multiple of 32)
     * @param generation inserts per generation: the slices shift every this many inserts
     * @param capacity   the window in inserts, {@code l * generation}: every key
     *                   among the last this many inserts is contained
     * @param seed       the hash seed, 0 .. 2^32-1
     * @param flags      the creation flags ({@link #BLOCKED} or 0; {@link #MIN_MEMORY} is
     *                   not recorded)
     */
    public record Info(int k, int l, long sliceBits, long generation, long capacity, long seed, int flags) {
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

    /**
     * Creates an empty filter of {@code k + l} slices of {@code sliceBits} bits
     * ({@code tf_age_bloom_new}). The generation is
     * {@code max(1, floor(sliceBits * ln 2 / k))} inserts (blocked: of
     * {@code sliceBits} rounded up to a multiple of 32) and the capacity
     * {@code l} generations. Blocked, the memory is {@code ceil((k + l) / 16)}
     * lines of 64 bytes per 32 bits of slice (unused lanes included).
     *
     * @param k         hash functions, 1..64 (blocked: {@code k + l <= 32})
     * @param l         window slices, 1..1024
     * @param sliceBits bits per slice, 64 .. 2^40 (blocked: 32 .. 2^40)
     * @param seed      hash seed, 0 .. 2^32-1
     * @param flags     0 or {@link #BLOCKED} ({@link #MIN_MEMORY} is refused:
     *                  the caller chose {@code (k, l)})
     * @throws InvalidArgumentException k, l or sliceBits out of range, a
     *         negative number, a seed outside 32 bits, an unknown flag or
     *         {@link #MIN_MEMORY} ({@link Status#INVALID_ARGUMENT}); sliceBits above 2^40
     *         ({@link Status#TOO_LARGE})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public AgeBloom(int k, int l, long sliceBits, long seed, int flags) {
        this(new AgeBloomNative(k, l, sliceBits, seed, flags));
    }

    /** An empty classic filter with seed 0: {@code AgeBloom(k, l, sliceBits, 0, 0)}. */
    public AgeBloom(int k, int l, long sliceBits) {
        this(k, l, sliceBits, 0, 0);
    }

    private AgeBloom(AgeBloomNative handle) {
        super(handle, false);
    }

    /**
     * Creates a filter that remembers at least the last {@code capacity}
     * inserts with a false-positive rate of at most {@code errorRate}
     * ({@code tf_age_bloom_new_for}): {@code (k, l)} from {@link #choose},
     * generation {@code ceil(capacity / l)} (blocked: slices of
     * {@code k * generation / -ln(1 - fill)} bits rounded up to a multiple of 32).
     *
     * @param capacity  window length in inserts, &gt;= 1
     * @param errorRate target false-positive rate, in (0, 1) (blocked: (0, 0.2];
     *                  above, the blocked model is not conservative)
     * @param seed      hash seed, 0 .. 2^32-1
     * @param flags     0, {@link #MIN_MEMORY} or {@link #BLOCKED}
     * @throws InvalidArgumentException a rate outside its range or NaN,
     *         capacity &lt;= 0, a seed outside 32 bits, an unknown flag or
     *         {@code MIN_MEMORY | BLOCKED}
     *         ({@link Status#INVALID_ARGUMENT}); no {@code (k, l)} meets the
     *         rate, or slices over 2^40 bits ({@link Status#TOO_LARGE})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public static AgeBloom forTarget(long capacity, double errorRate, long seed, int flags) {
        return new AgeBloom(AgeBloomNative.new_for(capacity, errorRate, seed, flags));
    }

    /** {@link #forTarget(long, double, long, int)} with seed 0, classic layout. */
    public static AgeBloom forTarget(long capacity, double errorRate) {
        return forTarget(capacity, errorRate, 0, 0);
    }

    /**
     * Reads a filter from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 2), of either layout (the
     * blob says which).
     *
     * @throws InvalidArgumentException a null blob ({@link Status#NULL})
     * @throws BadBlobException a blob that is not a whole, intact age Bloom
     *         filter ({@link Status#TRUNCATED} .. {@link Status#CORRUPT})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public static AgeBloom deserialize(byte[] blob) {
        return deserialize(blob, 0);
    }

    /**
     * {@link #deserialize(byte[])}, refusing a blob that would make a filter
     * of more than {@code maxMemory} bytes ({@link #memory()}) with
     * {@link Status#TOO_LARGE} before allocating anything; 0 sets no limit.
     */
    public static AgeBloom deserialize(byte[] blob, long maxMemory) {
        return new AgeBloom(AgeBloomNative.deserialize(blob, maxMemory));
    }

    /**
     * The {@code (k, l)} pair, and the fill, whose steady-state false-positive
     * rate is at most {@code errorRate} with the fewest bits per element in
     * the layout {@code flags} chooses ({@code tf_age_bloom_choose}; classic:
     * l is at most 256, and absent queries test at most
     * {@link #PROBE_BUDGET} slices in expectation, or any number with
     * {@link #MIN_MEMORY}; blocked: {@code k + l} is 16 or 32, under the
     * layout's conservative model). {@link #forTarget} and
     * {@link TimeBloom#forTarget} use it. At 1e-2 it gives {@code (10, 24)},
     * with {@link #MIN_MEMORY} {@code (12, 87)}; at 1e-3 {@code (14, 36)} and
     * {@code (16, 139)}.
     *
     * @param flags 0, {@link #MIN_MEMORY} or {@link #BLOCKED}
     * @throws InvalidArgumentException a rate outside (0, 1) (blocked: (0, 0.2])
     *         or NaN, an unknown flag or {@code MIN_MEMORY | BLOCKED}
     *         ({@link Status#INVALID_ARGUMENT}); no pair
     *         meets it ({@link Status#TOO_LARGE}: classic, none with
     *         {@code k <= 64}; blocked, below about 1e-18)
     */
    public static Parameters choose(double errorRate, int flags) {
        return new Parameters((int) AgeBloomNative.choose_k(errorRate, flags),
                (int) AgeBloomNative.choose_l(errorRate, flags), AgeBloomNative.choose_fill(errorRate, flags));
    }

    /** {@link #choose(double, int)} for the classic layout. */
    public static Parameters choose(double errorRate) {
        return choose(errorRate, 0);
    }

    /**
     * The exact steady-state false-positive rate of a filter with parameters
     * {@code (k, l)}, at its peak just before a shift
     * ({@code tf_age_bloom_false_positive_rate}). For the classic layout; the
     * blocked layout errs more at the same {@code (k, l)} and fill.
     *
     * @throws InvalidArgumentException k outside 1..64, l outside 1..1024
     */
    public static double falsePositiveRate(int k, int l) {
        return AgeBloomNative.false_positive_rate(k, l);
    }

    /**
     * Bits per element of capacity at steady state, {@code (k + l) k / (l ln 2)}
     * ({@code tf_age_bloom_bits_per_element}).
     *
     * @throws InvalidArgumentException k outside 1..64, l outside 1..1024
     */
    public static double bitsPerElement(int k, int l) {
        return AgeBloomNative.steady_bits_per_element(k, l);
    }

    /**
     * The slices a query of a classic filter with parameters {@code (k, l)}
     * tests in expectation, for an absent and for a present key, at its worst
     * moment ({@code tf_age_bloom_expected_probes}, computed exactly). The
     * blocked layout reads one or two lines whatever the key.
     *
     * @throws InvalidArgumentException k outside 1..64, l outside 1..1024
     */
    public static Probes expectedProbes(int k, int l) {
        return new Probes(AgeBloomNative.expected_probes_absent(k, l), AgeBloomNative.expected_probes_present(k, l));
    }

    /**
     * Inserts {@code key} (shifting the slices first when the generation is
     * full). Needs exclusive access.
     *
     * @throws InvalidArgumentException a null key
     */
    public void add(byte[] key) {
        run(h -> h.add(key));
    }

    /** {@link #add(byte[])} with the key's UTF-8 bytes. */
    public void add(String key) {
        add(Native.utf8(key, "key"));
    }

    /**
     * Whether {@code key} is (probably) among the last inserts: always true for
     * a key among the last {@link Info#capacity()} inserts; false means
     * certainly not among them.
     *
     * @throws InvalidArgumentException a null key
     */
    public boolean contains(byte[] key) {
        return callLong(h -> h.contains(key)) != 0;
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
     * @throws InvalidArgumentException a null key
     */
    public boolean addIfAbsent(byte[] key) {
        return callLong(h -> h.add_if_absent(key)) != 0;
    }

    /** {@link #addIfAbsent(byte[])} with the key's UTF-8 bytes. */
    public boolean addIfAbsent(String key) {
        return addIfAbsent(Native.utf8(key, "key"));
    }

    /**
     * {@link #add(byte[]) add}{@code (keys[i])} for every key, in order, in one
     * native call that overlaps the keys' memory reads: the same filter as
     * those single calls. Every argument is checked before anything changes.
     * Needs exclusive access.
     *
     * @throws InvalidArgumentException a null argument (nothing added)
     */
    public void addBatch(KeyBatch keys) {
        keysBatch(keys, (h, data, lens) -> h.add_batch(data, lens));
    }

    /** {@link #addBatch(KeyBatch)} of binary keys. */
    public void addBatch(byte[][] keys) {
        addBatch(KeyBatch.of(keys));
    }

    /** {@link #addBatch(KeyBatch)} of string keys (UTF-8). */
    public void addBatch(String[] keys) {
        addBatch(KeyBatch.of(keys));
    }

    /**
     * {@link #contains(byte[]) contains}{@code (keys[i])} for every key, in one
     * native call that overlaps the keys' memory reads.
     *
     * @return one answer per key, in the order of the keys
     * @throws InvalidArgumentException a null argument
     */
    public boolean[] containsBatch(KeyBatch keys) {
        return presentBatch(keys, (h, data, lens, present) -> h.contains_batch(data, lens, present));
    }

    /** {@link #containsBatch(KeyBatch)} of binary keys. */
    public boolean[] containsBatch(byte[][] keys) {
        return containsBatch(KeyBatch.of(keys));
    }

    /** {@link #containsBatch(KeyBatch)} of string keys (UTF-8). */
    public boolean[] containsBatch(String[] keys) {
        return containsBatch(KeyBatch.of(keys));
    }

    /**
     * {@link #addIfAbsent(byte[]) addIfAbsent}{@code (keys[i])} for every key,
     * in order, in one native call: the same answers and the same filter as
     * those single calls (a key repeated within the batch is present from its
     * second occurrence on). Every argument is checked before anything
     * changes. Needs exclusive access.
     *
     * @return one answer per key, in the order of the keys
     * @throws InvalidArgumentException a null argument (nothing added)
     */
    public boolean[] addIfAbsentBatch(KeyBatch keys) {
        return presentBatch(keys, (h, data, lens, present) -> h.add_if_absent_batch(data, lens, present));
    }

    /** {@link #addIfAbsentBatch(KeyBatch)} of binary keys. */
    public boolean[] addIfAbsentBatch(byte[][] keys) {
        return addIfAbsentBatch(KeyBatch.of(keys));
    }

    /** {@link #addIfAbsentBatch(KeyBatch)} of string keys (UTF-8). */
    public boolean[] addIfAbsentBatch(String[] keys) {
        return addIfAbsentBatch(KeyBatch.of(keys));
    }

    /** Forgets every key and resets the insert count (the shape stays). Needs exclusive access. */
    public void clear() {
        run(h -> h.clear());
    }

    /** What the filter was created with ({@code tf_age_bloom_get_info}): O(1). */
    public Info info() {
        return value(h -> h.info(), i -> new Info((int) i.getK(), (int) i.getL(), i.getSlice_bits(),
                i.getGeneration(), i.getCapacity(), i.getSeed(), (int) i.getFlags()));
    }

    /**
     * The current state ({@code tf_age_bloom_get_stats}). {@link Stats#fprNow()}
     * scans every slice (O(bits / 64)).
     */
    public Stats stats() {
        return value(h -> h.stats(), s -> new Stats(s.getSlices(), s.getBits(), s.getBits_per_element(),
                s.getInserts(), s.getFpr_now()));
    }

    /* The C loop of the benchmarks (tf_binding_age_bloom_c_loop_ns), on this
     * filter: op 0 contains, 1 add, 2 contains_batch, 3 add_batch (64 keys
     * per call) of the keys of keyLen bytes laid end to end in keysData;
     * returns ns per key. */
    double cLoopNs(byte[] keysData, int keyLen, int op) {
        return call(h -> TemporalFiltersNative.age_bloom_c_loop_ns(h, keysData, keyLen, op));
    }

    @Override
    String describe() {
        Info i = info();
        return ((i.flags() & BLOCKED) != 0 ? "blocked, " : "") + "k=" + i.k() + ", l=" + i.l() + ", sliceBits="
                + i.sliceBits() + ", capacity=" + i.capacity() + ", seed=" + i.seed();
    }
}
