package org.temporalfilters;

/**
 * "How many inserts ago was this key last seen?" over the last {@code W}
 * inserts of a stream, within a relative error {@code (1 + eps)}, or "not
 * within the window": the recency window of the native library
 * ({@code temporalfilters/recency_window.h}, which states the guarantees in
 * full), after Holland, Wirth and Zobel, "Recency Queries with Succinct
 * Representation" (ISAAC 2020).
 *
 * <p>The stream is the sequence of inserts ({@link #insert}, and every key of
 * the other insert forms); there is no clock. The <i>recency</i> of a key is
 * the number of inserts made since its last insert: 0 when the newest insert
 * was that key. A key inserted {@code r < W} inserts ago is never reported out
 * of the window; a key whose last insert is at least {@code W + slack - 1}
 * inserts ago ({@link Info#slack()}), or one never inserted, always is.
 *
 * <p><b>Modes</b> ({@link Mode}, chosen at creation), for a key of true
 * recency {@code r < W} answered {@code e}:
 * <ul>
 * <li>{@link Mode#HISTORICAL} (the default), HistoricalMembership:
 * {@code e <= r <= (1 + eps) e}, {@code eps = 1 / invEps}; about
 * {@code (1 + eps)(log2(2^64 / W) + log2(1 / eps))} bits per window item;</li>
 * <li>{@link Mode#EXACT}, ExactCuckoo: {@code e == r};</li>
 * <li>{@link Mode#OPTIMAL_SM}, OptimalSM: {@code e <= r <= e + block - 1}.</li>
 * </ul>
 *
 * <p><b>"Not in the window"</b> is the answer {@link #NOT_IN_WINDOW}
 * ({@code -1L}, the C {@code TF_RECENCY_WINDOW_NOT_IN_WINDOW}, 2^64 - 1, as
 * {@link TemporalFilters#RETRY_NEVER}): every estimate is {@code >= 0}, so
 * {@code recency >= 0} (or {@link #inWindow(long)}) tells the two apart, in the
 * single calls and in the batches' arrays alike, without boxing on the hot
 * path of a cache-admission policy.
 *
 * <p><b>Options</b>: {@link #RecencyWindow()} has every default of
 * {@code TF_RECENCY_WINDOW_OPTIONS_INIT} (a window of 65536 inserts,
 * {@code invEps} 8, HistoricalMembership, exact signatures); {@link #builder()}
 * sets the others by name
 * ({@code RecencyWindow.builder().window(1_000_000).invEps(16).build()}).
 *
 * <p>Keys, numbers, errors and resources are as {@link TemporalFilters}
 * describes.
 *
 * <p><b>Threads</b>: not internally synchronised. Calls that do not modify it
 * ({@link #query}, {@link #queryBatch}, {@link #info}, {@link #stats},
 * {@link #level}, {@link #memory}, {@link #serialize}) may run concurrently with
 * each other; {@link #insert}, {@link #insertReport}, their batches,
 * {@link #clear} and {@link #close} need exclusive access.
 */
public final class RecencyWindow extends NativeHandle<RecencyWindowNative> {
    /**
     * The answer for a key that is not within the window ({@code -1L}: C's
     * {@code TF_RECENCY_WINDOW_NOT_IN_WINDOW}, {@code UINT64_MAX}).
     */
    public static final long NOT_IN_WINDOW = TemporalFiltersNative.TF_RECENCY_WINDOW_NOT_IN_WINDOW;
    /** The largest window, in inserts ({@code TF_RECENCY_WINDOW_MAX_WINDOW}, 2^40). */
    public static final long MAX_WINDOW = TemporalFiltersNative.TF_RECENCY_WINDOW_MAX_WINDOW;
    /** The largest inverse error 1/eps ({@code TF_RECENCY_WINDOW_MAX_INV_EPS}, 2^20). */
    public static final long MAX_INV_EPS = TemporalFiltersNative.TF_RECENCY_WINDOW_MAX_INV_EPS;

    /** The three structures of one recency window, chosen at creation. */
    public enum Mode {
        /** HistoricalMembership: answers within (1 + eps), never too large ({@code TF_RECENCY_WINDOW_HISTORICAL}). */
        HISTORICAL((int) TemporalFiltersNative.TF_RECENCY_WINDOW_HISTORICAL),
        /** ExactCuckoo: exact answers ({@code TF_RECENCY_WINDOW_EXACT}). */
        EXACT((int) TemporalFiltersNative.TF_RECENCY_WINDOW_EXACT),
        /** OptimalSM: answers at most block - 1 too small ({@code TF_RECENCY_WINDOW_OPTIMAL_SM}). */
        OPTIMAL_SM((int) TemporalFiltersNative.TF_RECENCY_WINDOW_OPTIMAL_SM);

        private final int code;

        Mode(int code) {
            this.code = code;
        }

        /** The C value ({@code TF_RECENCY_WINDOW_*}). */
        public int code() {
            return code;
        }

        /**
         * The mode of a C value.
         *
         * @throws InvalidArgumentException no mode has that value
         */
        public static Mode of(long code) {
            for (Mode m : values()) {
                if (m.code == code) {
                    return m;
                }
            }
            throw TemporalFiltersException.of(Status.INVALID_ARGUMENT, "no recency window mode is " + code);
        }
    }

    /**
     * What a window was created with, defaults resolved ({@code tf_recency_window_info}).
     *
     * @param window        the window W, in inserts
     * @param invEps        the inverse relative error 1/eps
     * @param block         OptimalSM's block D (0 in the other modes)
     * @param maxMemory     the memory cap in bytes (0: none)
     * @param delta         the target false-match probability (0: exact signatures)
     * @param mode          the mode
     * @param seed          the hash seed, 0 .. 2^32-1
     * @param flags         the creation flags (none is defined yet: 0)
     * @param signatureBits bits of a signature (64 when exact)
     * @param levels        levels: L + 1 for HistoricalMembership, 1 otherwise
     * @param slack         the slack S: a key last inserted W + S - 1 or more inserts ago is out of the window
     */
    public record Info(long window, long invEps, long block, long maxMemory, double delta, Mode mode, long seed,
            int flags, int signatureBits, int levels, long slack) {
    }

    /**
     * The current state ({@code tf_recency_window_stats}).
     *
     * @param inserts           inserts since creation or {@link #clear()}
     * @param windowItems       inserts the window covers: min(inserts, W)
     * @param levels            levels ({@link #level} reads each)
     * @param items             entries held over every level
     * @param memory            what {@link #memory()} reports, in bytes
     * @param bitsPerWindowItem 8 memory / windowItems (0 before the first insert)
     * @param promotions        entries moved up a level
     * @param expired           entries dropped out of the window
     * @param merged            entries met by a newer entry of their key
     * @param lost              entries dropped for want of room (never observed)
     * @param stashed           entries in the tables' stashes
     */
    public record Stats(long inserts, long windowItems, long levels, long items, long memory,
            double bitsPerWindowItem, long promotions, long expired, long merged, long lost, long stashed) {
    }

    /**
     * One level, a sliding dictionary ({@code tf_recency_window_level}).
     *
     * @param slots      slots of its table (4 per bucket, an even number of buckets)
     * @param items      entries it holds (stash included)
     * @param capacity   the most live entries it was sized for
     * @param blockWidth inserts per class: 2^l for level l of HistoricalMembership, 1 for ExactCuckoo, D for OptimalSM
     * @param load       items / slots
     * @param entryBits  bits of one packed entry
     * @param classBits  bits of the class field
     * @param stashed    entries in its stash
     */
    public record Level(long slots, long items, long capacity, long blockWidth, double load, int entryBits,
            int classBits, int stashed) {
    }

    /**
     * The options of a new window, each named, every one defaulting to
     * {@code TF_RECENCY_WINDOW_OPTIONS_INIT}'s value; {@link #build()} creates
     * it ({@code tf_recency_window_new}) and {@link #memoryFor()} says how
     * much memory it would hold. A builder may be reused; it is not
     * thread-safe.
     */
    public static final class Builder {
        private long window = TemporalFiltersNative.TF_BINDING_RECENCY_WINDOW_WINDOW;
        private long invEps = TemporalFiltersNative.TF_BINDING_RECENCY_WINDOW_INV_EPS;
        private long block = TemporalFiltersNative.TF_BINDING_RECENCY_WINDOW_BLOCK;
        private long maxMemory = TemporalFiltersNative.TF_BINDING_RECENCY_WINDOW_MAX_MEMORY;
        private double delta = TemporalFiltersNative.TF_BINDING_RECENCY_WINDOW_DELTA;
        private Mode mode = Mode.of(TemporalFiltersNative.TF_BINDING_RECENCY_WINDOW_MODE);
        private long seed;
        private int flags;

        private Builder() {
        }

        /** The window W in inserts: 1 .. {@link #MAX_WINDOW} (default 65536). */
        public Builder window(long inserts) {
            this.window = inserts;
            return this;
        }

        /** The inverse relative error 1/eps: 1 .. {@link #MAX_INV_EPS} (default 8). */
        public Builder invEps(long invEps) {
            this.invEps = invEps;
            return this;
        }

        /** OptimalSM's block D in inserts, 1 .. window; 0 (the default): max(1, window / invEps). */
        public Builder block(long inserts) {
            this.block = inserts;
            return this;
        }

        /** A cap in bytes on {@link #memory()}: a larger window is refused; 0 (the default): none. */
        public Builder maxMemory(long bytes) {
            this.maxMemory = bytes;
            return this;
        }

        /** The target false-match probability of approximate signatures, in (0, 1); 0 (the default): exact. */
        public Builder delta(double delta) {
            this.delta = delta;
            return this;
        }

        /** The mode (default {@link Mode#HISTORICAL}). */
        public Builder mode(Mode mode) {
            this.mode = Native.notNull(mode, "mode");
            return this;
        }

        /** The hash seed, 0 .. 2^32-1 (default 0). */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** The flags: none is defined yet, 0 (the default). */
        public Builder flags(int flags) {
            this.flags = flags;
            return this;
        }

        /**
         * Creates the window.
         *
         * @throws InvalidArgumentException an option out of range, a negative
         *         number, a seed outside 32 bits, a flag
         *         ({@link Status#INVALID_ARGUMENT}); a window above
         *         {@link #MAX_WINDOW} or more memory than maxMemory
         *         ({@link Status#TOO_LARGE})
         * @throws NativeOutOfMemoryException the window does not fit in memory
         */
        public RecencyWindow build() {
            return new RecencyWindow(make());
        }

        /**
         * The bytes a window of these options would hold (what its
         * {@link #memory()} reports), without creating it
         * ({@code tf_recency_window_memory_for}; maxMemory is not applied).
         *
         * @throws InvalidArgumentException as {@link #build()}
         */
        public long memoryFor() {
            return RecencyWindowNative.memory_for(window, invEps, block, maxMemory, delta, mode.code(), seed, flags);
        }

        RecencyWindowNative make() {
            return new RecencyWindowNative(window, invEps, block, maxMemory, delta, mode.code(), seed, flags);
        }
    }

    /** A new {@link Builder}, every option at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** An empty window with every default option: {@code builder().build()}. */
    public RecencyWindow() {
        this(builder().make());
    }

    private RecencyWindow(RecencyWindowNative handle) {
        super(handle, false);
    }

    /**
     * Reads a window from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 6): the copy answers and
     * goes on exactly as the original.
     *
     * @throws InvalidArgumentException a null blob ({@link Status#NULL})
     * @throws BadBlobException a blob that is not a whole, intact recency
     *         window ({@link Status#TRUNCATED} .. {@link Status#CORRUPT})
     * @throws NativeOutOfMemoryException the window does not fit in memory
     */
    public static RecencyWindow deserialize(byte[] blob) {
        return deserialize(blob, 0);
    }

    /**
     * {@link #deserialize(byte[])}, refusing a blob that would make a window of
     * more than {@code maxMemory} bytes ({@link #memory()}) with
     * {@link Status#TOO_LARGE} before allocating anything; 0 sets no limit.
     */
    public static RecencyWindow deserialize(byte[] blob, long maxMemory) {
        return new RecencyWindow(RecencyWindowNative.deserialize(blob, maxMemory));
    }

    /** Whether {@code recency}, an answer of this class, is an estimate rather than {@link #NOT_IN_WINDOW}. */
    public static boolean inWindow(long recency) {
        return recency != NOT_IN_WINDOW;
    }

    /**
     * Appends {@code key} to the stream (the next insert). Needs exclusive
     * access.
     *
     * @throws InvalidArgumentException a null key
     */
    public void insert(byte[] key) {
        run(h -> h.insert(key));
    }

    /** {@link #insert(byte[])} with the key's UTF-8 bytes. */
    public void insert(String key) {
        insert(Native.utf8(key, "key"));
    }

    /**
     * How many inserts ago {@code key} was last inserted, within the mode's
     * promise (the class's documentation), or {@link #NOT_IN_WINDOW}.
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
     * Insert-then-report, the call of a cache-admission policy: what
     * {@link #query} answered just before this insert (the key's previous
     * recency, or {@link #NOT_IN_WINDOW}), then the key appended to the stream,
     * with one hash. Needs exclusive access.
     *
     * @throws InvalidArgumentException a null key (nothing inserted)
     */
    public long insertReport(byte[] key) {
        return callLong(h -> h.insert_report(key));
    }

    /** {@link #insertReport(byte[])} with the key's UTF-8 bytes. */
    public long insertReport(String key) {
        return insertReport(Native.utf8(key, "key"));
    }

    /**
     * {@link #insert(byte[]) insert}{@code (keys[i])} for every key, in order,
     * in one native call whose bucket reads overlap. Needs exclusive access.
     *
     * @throws InvalidArgumentException a null argument (nothing inserted)
     */
    public void insertBatch(KeyBatch keys) {
        open();
        Native.notNull(keys, "keys");
        run(h -> h.insert_batch(keys.data, keys.lens));
    }

    /** {@link #insertBatch(KeyBatch)} of binary keys. */
    public void insertBatch(byte[][] keys) {
        insertBatch(KeyBatch.of(keys));
    }

    /** {@link #insertBatch(KeyBatch)} of string keys (UTF-8). */
    public void insertBatch(String[] keys) {
        insertBatch(KeyBatch.of(keys));
    }

    /**
     * {@link #query(byte[]) query}{@code (keys[i])} for every key, in one
     * native call whose bucket reads overlap.
     *
     * @return one answer per key, in the order of the keys ({@link #NOT_IN_WINDOW} for a key out of the window)
     * @throws InvalidArgumentException a null argument
     */
    public long[] queryBatch(KeyBatch keys) {
        return answers(keys, RecencyWindowNative::query_batch);
    }

    /** {@link #queryBatch(KeyBatch)} of binary keys. */
    public long[] queryBatch(byte[][] keys) {
        return queryBatch(KeyBatch.of(keys));
    }

    /** {@link #queryBatch(KeyBatch)} of string keys (UTF-8). */
    public long[] queryBatch(String[] keys) {
        return queryBatch(KeyBatch.of(keys));
    }

    /**
     * {@link #insertReport(byte[]) insertReport}{@code (keys[i])} for every
     * key, in order, in one native call: the same answers and the same window
     * as those single calls (a key repeated within the batch reports its
     * earlier occurrence in it). Every argument is checked before anything
     * changes. Needs exclusive access.
     *
     * @return one answer per key, in the order of the keys ({@link #NOT_IN_WINDOW} for a key out of the window)
     * @throws InvalidArgumentException a null argument (nothing inserted)
     */
    public long[] insertReportBatch(KeyBatch keys) {
        return answers(keys, RecencyWindowNative::insert_report_batch);
    }

    /* A native batch call with one answer per key. */
    private interface AnswerBatch {
        void call(RecencyWindowNative h, byte[] data, int[] lens, long[] out);
    }

    /* The body of queryBatch and insertReportBatch: one answer per key. */
    private long[] answers(KeyBatch keys, AnswerBatch op) {
        open();
        Native.notNull(keys, "keys");
        long[] out = new long[keys.size()];
        run(h -> op.call(h, keys.data, keys.lens, out));
        return out;
    }

    /** {@link #insertReportBatch(KeyBatch)} of binary keys. */
    public long[] insertReportBatch(byte[][] keys) {
        return insertReportBatch(KeyBatch.of(keys));
    }

    /** {@link #insertReportBatch(KeyBatch)} of string keys (UTF-8). */
    public long[] insertReportBatch(String[] keys) {
        return insertReportBatch(KeyBatch.of(keys));
    }

    /**
     * Forgets every key and restarts the stream: the tables stay allocated and
     * empty, the counters restart at 0. Needs exclusive access.
     */
    public void clear() {
        run(h -> h.clear());
    }

    /** What the window was created with, defaults resolved ({@code tf_recency_window_get_info}): O(1). */
    public Info info() {
        return value(h -> h.info(), i -> new Info(i.getWindow(), i.getInv_eps(), i.getBlock(), i.getMax_memory(),
                i.getDelta(), Mode.of(i.getMode()), i.getSeed(), (int) i.getFlags(), (int) i.getSignature_bits(),
                (int) i.getLevels(), i.getSlack()));
    }

    /** The current state ({@code tf_recency_window_get_stats}): O(levels). */
    public Stats stats() {
        return value(h -> h.stats(), s -> new Stats(s.getInserts(), s.getWindow_items(), s.getLevels(),
                s.getItems(), s.getMemory(), s.getBits_per_window_item(), s.getPromotions(), s.getExpired(),
                s.getMerged(), s.getLost(), s.getStashed()));
    }

    /**
     * Level {@code i} (0 the newest inserts, {@link Stats#levels()} - 1 the
     * oldest) ({@code tf_recency_window_get_level}): O(1).
     *
     * @throws InvalidArgumentException no such level, i &lt; 0
     */
    public Level level(long i) {
        return value(h -> h.level(i), l -> new Level(l.getSlots(), l.getItems(), l.getCapacity(),
                l.getBlock_width(), l.getLoad(), (int) l.getEntry_bits(), (int) l.getClass_bits(),
                (int) l.getStashed()));
    }

    /* The C loop of the benchmarks (tf_binding_recency_window_c_loop_ns), on
     * this window: op 0 insert, 1 query, one call per key, 2 insert_batch, 3
     * query_batch (64 keys per call), of the keys of keyLen bytes laid end to
     * end in keysData; returns ns per key. */
    double cLoopNs(byte[] keysData, int keyLen, int op) {
        return call(h -> TemporalFiltersNative.recency_window_c_loop_ns(h, keysData, keyLen, op));
    }

    @Override
    String describe() {
        Info i = info();
        return "window=" + i.window() + ", invEps=" + i.invEps() + ", mode=" + i.mode() + ", signatureBits="
                + i.signatureBits() + ", seed=" + i.seed();
    }
}
