package org.temporalfilters;

/**
 * "Have I seen this key recently?" with no false positives in practice, in
 * bounded memory: the rotating cuckoo filter of the native library
 * ({@code temporalfilters/rotating_cuckoo.h}, which states the guarantees in
 * full). For de-duplicating streams, where a false positive would silently
 * drop a real event and a false negative only repeats one.
 *
 * <p>A ring of cuckoo tables of 64-bit fingerprints. Inserts go to the newest
 * table; when it reaches its maximum occupancy, or a kick chain exceeds its
 * limit, a new table starts, sized from the recent insertion rate, within a
 * memory cap; when the cap (or the table limit) would be exceeded the oldest
 * table is dropped and its keys are forgotten ({@link Stats#forgottenMemory()}
 * counts them). With a ttl, a key added at {@code t} is reported present until
 * at least {@code t + ttl} unless the memory cap dropped its table first.
 * A key never added is reported present with a probability below 2^-48
 * (about 2^-55 with the default options).
 *
 * <p><b>Options</b>: {@link #RotatingCuckoo()} has every default of
 * {@code TF_ROTATING_CUCKOO_OPTIONS_INIT}; {@link #builder()} sets the others
 * by name ({@code RotatingCuckoo.builder().ttl(60_000).seed(7).build()}).
 *
 * <p>Keys, time, numbers, errors and resources are as {@link TemporalFilters}
 * describes. A clock that goes backwards is clamped to the highest time seen.
 *
 * <p><b>Threads</b>: the filter is not internally synchronised. Calls that do
 * not modify it ({@link #contains}, {@link #containsBatch}, {@link #stats},
 * {@link #table}, {@link #info}, {@link #memory}, {@link #serialize}) may run
 * concurrently with each other; {@link #add}, {@link #addIfAbsent},
 * {@link #addIfAbsentBatch}, {@link #remove}, {@link #clear} and
 * {@link #close} need exclusive access (lock around them when threads share a
 * filter).
 */
public final class RotatingCuckoo extends NativeHandle<RotatingCuckooNative> {
    /** Flag: three candidate buckets per key instead of two ({@code TF_ROTATING_CUCKOO_THREE_WAY}). */
    public static final int THREE_WAY = (int) TemporalFiltersNative.TF_ROTATING_CUCKOO_THREE_WAY;
    /** The most tables a filter may keep ({@code TF_ROTATING_CUCKOO_MAX_TABLES}). */
    public static final int MAX_TABLES = (int) TemporalFiltersNative.TF_ROTATING_CUCKOO_MAX_TABLES;
    /** The longest kick chain a filter may be configured with ({@code TF_ROTATING_CUCKOO_MAX_KICKS}). */
    public static final int MAX_KICKS = (int) TemporalFiltersNative.TF_ROTATING_CUCKOO_MAX_KICKS;

    /**
     * What a filter was created with, defaults resolved ({@code tf_rotating_cuckoo_info}).
     *
     * @param tableSlots     slots of the first table (a power of two)
     * @param maxMemory      the memory cap in bytes
     * @param ttl            the time to live in the caller's unit (0: none)
     * @param maxOccupancy   the fill at which a table stops taking inserts
     * @param slotsPerBucket slots per bucket: 1, 2, 4 or 8
     * @param maxKicks       the kick chain limit
     * @param maxTables      the most tables kept
     * @param seed           the hash seed, 0 .. 2^32-1
     * @param flags          the creation flags ({@link #THREE_WAY} or 0)
     * @param ways           candidate buckets per key: 2, or 3 with {@link #THREE_WAY}
     */
    public record Info(long tableSlots, long maxMemory, long ttl, double maxOccupancy, int slotsPerBucket,
            int maxKicks, int maxTables, long seed, int flags, int ways) {
    }

    /**
     * The filter's state at a time {@code now} ({@code tf_rotating_cuckoo_stats}).
     *
     * @param tables          tables held (expired ones included until a modifying call drops them)
     * @param liveTables      tables a query at now may find
     * @param slots           slots of every table held
     * @param items           fingerprints stored in the live tables
     * @param load            items / the live tables' slots (0 when none)
     * @param newestLoad      the newest table's fill
     * @param memory          what {@link #memory()} reports, in bytes
     * @param bitsPerItem     bits of table memory per stored fingerprint in the live tables
     * @param inserts         keys stored since creation or {@link #clear()}
     * @param removes         keys removed by {@link #remove}
     * @param forgottenMemory keys forgotten because the memory cap or the table limit dropped their table
     * @param forgottenAge    keys forgotten because their table grew older than the ttl
     * @param kickRotations   rotations caused by a kick chain exceeding its limit (nothing forgotten)
     * @param fillRotations   rotations caused by the newest table reaching its maximum occupancy
     */
    public record Stats(long tables, long liveTables, long slots, long items, double load, double newestLoad,
            long memory, double bitsPerItem, long inserts, long removes, long forgottenMemory, long forgottenAge,
            long kickRotations, long fillRotations) {
    }

    /**
     * One table at a time {@code now} ({@code tf_rotating_cuckoo_table}).
     *
     * @param slots   its slots (a power of two)
     * @param items   fingerprints stored in it
     * @param load    items / slots
     * @param last    the time of its newest entry (0: none yet)
     * @param serial  its creation number (the newest has the highest)
     * @param expired whether a query at now ignores it (older than the ttl)
     */
    public record Table(long slots, long items, double load, long last, long serial, boolean expired) {
    }

    /**
     * The options of a new filter, each named, every one defaulting to
     * {@code TF_ROTATING_CUCKOO_OPTIONS_INIT}'s value; {@link #build()}
     * creates the filter ({@code tf_rotating_cuckoo_new}). A builder may be
     * reused; it is not thread-safe.
     */
    public static final class Builder {
        private long tableSlots = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_TABLE_SLOTS;
        private long maxMemory = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_MAX_MEMORY;
        private long ttl = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_TTL;
        private double maxOccupancy = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_MAX_OCCUPANCY;
        private long slotsPerBucket = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_SLOTS_PER_BUCKET;
        private long maxKicks = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_MAX_KICKS;
        private long maxTables = TemporalFiltersNative.TF_BINDING_ROTATING_CUCKOO_MAX_TABLES;
        private long seed;
        private int flags;

        private Builder() {
        }

        /** Slots of the first table: a power of two, at least 2 x slotsPerBucket, at most 2^36 (default 16384). */
        public Builder tableSlots(long slots) {
            this.tableSlots = slots;
            return this;
        }

        /** The memory cap in bytes; it must hold the first table (default 64 MiB). */
        public Builder maxMemory(long bytes) {
            this.maxMemory = bytes;
            return this;
        }

        /** The time to live in the caller's unit; 0 (the default): tables go only for memory. */
        public Builder ttl(long ttl) {
            this.ttl = ttl;
            return this;
        }

        /** The fill at which a table stops taking inserts, in (0, 1]; 0 (the default): the layout's measured one. */
        public Builder maxOccupancy(double occupancy) {
            this.maxOccupancy = occupancy;
            return this;
        }

        /** Slots per bucket: 1, 2, 4 (the default) or 8. */
        public Builder slotsPerBucket(int slots) {
            this.slotsPerBucket = slots;
            return this;
        }

        /** The longest kick chain: 1 .. {@link #MAX_KICKS} (default 500). */
        public Builder maxKicks(int kicks) {
            this.maxKicks = kicks;
            return this;
        }

        /** The most tables kept: 1 .. {@link #MAX_TABLES} (default 64). */
        public Builder maxTables(int tables) {
            this.maxTables = tables;
            return this;
        }

        /** The hash seed, 0 .. 2^32-1 (default 0). */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** The flags: {@link #THREE_WAY} or 0 (the default). */
        public Builder flags(int flags) {
            this.flags = flags;
            return this;
        }

        /**
         * Creates the filter.
         *
         * @throws InvalidArgumentException an option out of range, a negative
         *         number, a seed outside 32 bits, an unknown flag
         *         ({@link Status#INVALID_ARGUMENT}); tableSlots above 2^36 or
         *         a first table that does not fit in maxMemory
         *         ({@link Status#TOO_LARGE})
         * @throws NativeOutOfMemoryException the first table does not fit in memory
         */
        public RotatingCuckoo build() {
            return new RotatingCuckoo(make());
        }

        RotatingCuckooNative make() {
            return new RotatingCuckooNative(tableSlots, maxMemory, ttl, maxOccupancy, slotsPerBucket, maxKicks,
                    maxTables, seed, flags);
        }
    }

    /** A new {@link Builder}, every option at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** An empty filter with every default option: {@code builder().build()}. */
    public RotatingCuckoo() {
        this(builder().make());
    }

    private RotatingCuckoo(RotatingCuckooNative handle) {
        super(handle, false);
    }

    /**
     * Reads a filter from a blob written by {@link #serialize()} here or by any
     * other binding or the C API (wire format kind 5).
     *
     * @throws InvalidArgumentException a null blob ({@link Status#NULL})
     * @throws BadBlobException a blob that is not a whole, intact rotating
     *         cuckoo filter ({@link Status#TRUNCATED} .. {@link Status#CORRUPT})
     * @throws NativeOutOfMemoryException the filter does not fit in memory
     */
    public static RotatingCuckoo deserialize(byte[] blob) {
        return deserialize(blob, 0);
    }

    /**
     * {@link #deserialize(byte[])}, refusing a blob that would make a filter
     * of more than {@code maxMemory} bytes ({@link #memory()}) with
     * {@link Status#TOO_LARGE} before allocating anything; 0 sets no limit.
     */
    public static RotatingCuckoo deserialize(byte[] blob, long maxMemory) {
        return new RotatingCuckoo(RotatingCuckooNative.deserialize(blob, maxMemory));
    }

    /**
     * Adds {@code key} at time {@code now} (&gt;= 1), or refreshes it: a key
     * already in the newest table only refreshes that table's time. A rotation
     * may allocate a new table; when that fails the filter is unchanged. Needs
     * exclusive access.
     *
     * @throws InvalidArgumentException a null key, now &lt;= 0
     * @throws NativeOutOfMemoryException a new table does not fit in memory
     */
    public void add(byte[] key, long now) {
        run(h -> h.add(key, now));
    }

    /** {@link #add(byte[], long)} with the key's UTF-8 bytes. */
    public void add(String key, long now) {
        add(Native.utf8(key, "key"), now);
    }

    /**
     * Whether {@code key} was added and not yet forgotten, at {@code now}
     * (&gt;= 1). True for a key never added has a probability below 2^-48.
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
     * Removes the newest copy of {@code key}: true when a copy was removed,
     * false when the key was not present (nothing changed). A key refreshed by
     * {@link #add} after a rotation has an older copy too, which stays until it
     * is removed as well or forgotten. Needs exclusive access.
     *
     * @throws InvalidArgumentException a null key, now &lt;= 0
     */
    public boolean remove(byte[] key, long now) {
        return callLong(h -> h.remove(key, now)) != 0;
    }

    /** {@link #remove(byte[], long)} with the key's UTF-8 bytes. */
    public boolean remove(String key, long now) {
        return remove(Native.utf8(key, "key"), now);
    }

    /**
     * The de-duplication call: returns whether {@code key} was present, and
     * adds it at {@code now} only when it was not. So {@code false} means "new:
     * recorded now", {@code true} "a duplicate: nothing written" (a hit does not
     * refresh the key; {@link #add} does). Needs exclusive access.
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
     * {@link #contains(byte[], long) contains}{@code (keys[i], now)} for every
     * key, in one native call whose bucket reads overlap.
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
     * @throws InvalidArgumentException a null argument, now &lt;= 0 (nothing changed)
     * @throws NativeOutOfMemoryException a new table did not fit in memory: the
     *         keys before the failing one were added, and their answers are not
     *         returned
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

    /**
     * Forgets every key: one empty table of the first table's size remains,
     * the counters restart, the clock keeps its time. Needs exclusive access.
     *
     * @throws NativeOutOfMemoryException the first table could not be allocated anew (nothing changed)
     */
    public void clear() {
        run(h -> h.clear());
    }

    /** What the filter was created with, defaults resolved ({@code tf_rotating_cuckoo_get_info}): O(1). */
    public Info info() {
        return value(h -> h.info(), i -> new Info(i.getTable_slots(), i.getMax_memory(), i.getTtl(),
                i.getMax_occupancy(), (int) i.getSlots_per_bucket(), (int) i.getMax_kicks(),
                (int) i.getMax_tables(), i.getSeed(), (int) i.getFlags(), (int) i.getWays()));
    }

    /**
     * The state at time {@code now} (&gt;= 1) ({@code tf_rotating_cuckoo_get_stats}): O(tables).
     *
     * @throws InvalidArgumentException now &lt;= 0
     */
    public Stats stats(long now) {
        return value(h -> h.stats(now), s -> new Stats(s.getTables(), s.getLive_tables(), s.getSlots(),
                s.getItems(), s.getLoad(), s.getNewest_load(), s.getMemory(), s.getBits_per_item(), s.getInserts(),
                s.getRemoves(), s.getForgotten_memory(), s.getForgotten_age(), s.getKick_rotations(),
                s.getFill_rotations()));
    }

    /**
     * Table {@code i} at time {@code now} (0 the newest, {@link Stats#tables()}
     * - 1 the oldest) ({@code tf_rotating_cuckoo_get_table}).
     *
     * @throws InvalidArgumentException no such table, i &lt; 0, now &lt;= 0
     */
    public Table table(long i, long now) {
        return value(h -> h.table(i, now), t -> new Table(t.getSlots(), t.getItems(), t.getLoad(), t.getLast(),
                t.getSerial(), t.getExpired() != 0));
    }

    /* The C loop of the benchmarks (tf_binding_rotating_cuckoo_c_loop_ns), on
     * this filter: op 0 contains, 1 addIfAbsent, one call per key, 2
     * contains_batch, 3 add_if_absent_batch (64 keys per call), all at time
     * now, of the keys of keyLen bytes laid end to end in keysData; returns
     * ns per key. */
    double cLoopNs(byte[] keysData, int keyLen, int op, long now) {
        return call(h -> TemporalFiltersNative.rotating_cuckoo_c_loop_ns(h, keysData, keyLen, op, now));
    }

    @Override
    String describe() {
        Info i = info();
        return "tableSlots=" + i.tableSlots() + ", slotsPerBucket=" + i.slotsPerBucket() + ", ways=" + i.ways()
                + ", ttl=" + i.ttl() + ", seed=" + i.seed();
    }
}
