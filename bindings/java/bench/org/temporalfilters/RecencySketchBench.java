package org.temporalfilters;

import java.util.Arrays;

/**
 * The cost of the Java binding: update and query ns/op through the idiomatic
 * layer, one key per call and in batches, beside the C library's own loop
 * (tf_binding_c_loop_ns, the same sketch and keys, measured in the same run),
 * printed as ratios binding / C; then the same for the Bloom filters'
 * contains and add, single and batch (tf_binding_age_bloom_c_loop_ns,
 * tf_binding_time_bloom_c_loop_ns), the rate limiter's acquire
 * (tf_binding_rate_limiter_c_loop_ns), the rotating cuckoo filter's contains
 * and addIfAbsent (tf_binding_rotating_cuckoo_c_loop_ns) and the recency
 * window's insert and query (tf_binding_recency_window_c_loop_ns), each
 * single and batch. Medians over several passes, after a warm-up
 * pass that lets the JIT compile the Java loops. Each table also times the
 * bare crossing, an empty JNI call (TemporalFiltersNative.bare_crossing, the
 * shared interface's tf_binding_bare_crossing), in the same passes, and
 * prints issue 16's goal for every row: a single call within the C time +
 * 1.3 x the bare crossing, a batch within 1.3 x the C time per key, "met" or
 * "not met" (reported, never asserted). After its rows, each table but the
 * sketch's checks that its batch calls answer as the single calls (and
 * that its structure is in the state the rows assume) and throws if not, so
 * that a benchmark wired wrong fails rather than reports.
 *
 * <pre>
 *   java -Djava.library.path=... -cp ... org.temporalfilters.RecencySketchBench [--quick]
 * </pre>
 * --quick: a few small passes, to check that the benchmark runs (suite
 * bench-smoke). --width W --depth D: another sketch (default 262144 x 4, 1 Mi
 * cells; the other tables do not change); a small one (e.g. --width 1024) shows the per-call overhead alone.
 * --concurrent: a sketch created with {@link RecencySketch#CONCURRENT}, whose
 * calls may overlap (and which {@code close()} waits for: the cost of that
 * guard is the difference from a run without it).
 * --buildtype=T: the native build's type (meson passes it), to warn when the
 * numbers cannot mean much. The numbers mean something only with an optimized native
 * library (-Dbuildtype=release or debugoptimized).
 */
public final class RecencySketchBench {
    private static final int KEY_LEN = 16;
    private static final int BATCH = 64;

    private RecencySketchBench() {
    }

    private static long sink;

    private interface Pass {
        /* Runs one pass over the keys starting at time t0; returns ns per key. */
        double run(long t0);
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    public static void main(String[] args) {
        boolean quick = Arrays.asList(args).contains("--quick");
        final int flags = Arrays.asList(args).contains("--concurrent") ? RecencySketch.CONCURRENT : 0;
        for (String a : args) {
            // meson passes the native build's type: warn when it is not optimized
            if (a.startsWith("--buildtype=") && !a.endsWith("=release") && !a.endsWith("=debugoptimized")) {
                System.out.println("warning: the native library is a " + a.substring(12)
                        + " build; measure with -Dbuildtype=release");
            }
        }
        final int nKeys = quick ? 1 << 14 : 1 << 20;
        final int reps = quick ? 2 : 9;
        long w = 1 << 18; // 1 Mi cells (8 MiB) by default
        int d = 4;
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--width")) {
                w = Long.parseLong(args[i + 1]);
            } else if (args[i].equals("--depth")) {
                d = Integer.parseInt(args[i + 1]);
            }
        }
        final long width = w;
        final int depth = d;

        // 16-byte pseudo-random keys (splitmix64), as separate arrays for the
        // single-key calls and laid end to end for the C loop
        byte[][] keys = new byte[nKeys][KEY_LEN];
        byte[] flat = new byte[nKeys * KEY_LEN];
        long x = 0x1234_5678_9abc_def0L;
        for (int i = 0; i < nKeys; i++) {
            for (int j = 0; j < KEY_LEN; j++) {
                x += 0x9E3779B97F4A7C15L;
                long z = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
                z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
                keys[i][j] = (byte) (z ^ (z >>> 31));
            }
            System.arraycopy(keys[i], 0, flat, i * KEY_LEN, KEY_LEN);
        }
        int nBatches = nKeys / BATCH;
        KeyBatch[] packed = new KeyBatch[nBatches];
        for (int b = 0; b < nBatches; b++) {
            packed[b] = KeyBatch.of(Arrays.copyOfRange(keys, b * BATCH, (b + 1) * BATCH));
        }

        try (RecencySketch s = new RecencySketch(width, depth, 1, flags)) {
            long[] times = new long[BATCH];
            long[] out = new long[BATCH];
            String[] names = {
                "update", "query", "update_batch(64)", "query_batch(64)",
                "update_batch(64, packed once)", "query_batch(64, packed once)",
            };
            Pass[] java = {
                t0 -> {
                    long a = System.nanoTime();
                    for (int i = 0; i < nKeys; i++) {
                        s.update(keys[i], t0 + i);
                    }
                    return (double) (System.nanoTime() - a) / nKeys;
                },
                t0 -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int i = 0; i < nKeys; i++) {
                        acc += s.query(keys[i]);
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / nKeys;
                },
                t0 -> {
                    long a = System.nanoTime();
                    for (int b = 0; b < nBatches; b++) {
                        for (int i = 0; i < BATCH; i++) {
                            times[i] = t0 + (long) b * BATCH + i;
                        }
                        s.updateBatch(Arrays.copyOfRange(keys, b * BATCH, (b + 1) * BATCH), times);
                    }
                    return (double) (System.nanoTime() - a) / (nBatches * BATCH);
                },
                t0 -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int b = 0; b < nBatches; b++) {
                        long[] r = s.queryBatch(Arrays.copyOfRange(keys, b * BATCH, (b + 1) * BATCH));
                        acc += r[0];
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / (nBatches * BATCH);
                },
                t0 -> {
                    long a = System.nanoTime();
                    for (int b = 0; b < nBatches; b++) {
                        for (int i = 0; i < BATCH; i++) {
                            times[i] = t0 + (long) b * BATCH + i;
                        }
                        s.updateBatch(packed[b], times);
                    }
                    return (double) (System.nanoTime() - a) / (nBatches * BATCH);
                },
                t0 -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int b = 0; b < nBatches; b++) {
                        acc += s.queryBatch(packed[b], out)[BATCH - 1];
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / (nBatches * BATCH);
                },
            };
            // the C loop's op per row: the same call in C (one per key, or
            // update_batch / query_batch of 64 keys)
            int[] cOp = {0, 1, 2, 3, 2, 3};
            boolean[] isBatch = {false, false, true, true, true, true};

            double[][] javaNs = new double[java.length][reps];
            double[][] cNs = new double[java.length][reps];
            double[] bareNs = new double[reps];
            long t = 1;
            // warm-up pass (not counted), then the measured passes; the C loop
            // runs right before each Java pass on the same keys
            for (int rep = -1; rep < reps; rep++) {
                for (int op = 0; op < java.length; op++) {
                    double c = s.cLoopNs(flat, KEY_LEN, cOp[op], t);
                    t += nKeys;
                    double j = java[op].run(t);
                    t += nKeys;
                    if (rep >= 0) {
                        cNs[op][rep] = c;
                        javaNs[op][rep] = j;
                    }
                }
                double b = bareNs(nKeys);
                if (rep >= 0) {
                    bareNs[rep] = b;
                }
            }

            System.out.printf("Java binding benchmark: RecencySketch %d x %d (%d cells, %d MiB)%s, %d-byte keys,%n",
                    s.info().width(), s.info().depth(), s.info().cells(), s.memory() >> 20,
                    flags != 0 ? ", CONCURRENT" : "", KEY_LEN);
            System.out.printf("%d keys per pass, median of %d passes; C = tf_binding_c_loop_ns (the same call in C: one"
                    + " per key, batches of %d)%s%n",
                    nKeys, reps, BATCH, quick ? " [--quick: not a measurement]" : "");
            printTable(names, javaNs, cNs, isBatch, bareNs);
            System.out.println("(sink " + (sink & 1) + ")");
        }
        Keys ks = Keys.of(keys, flat, packed);
        bloom(ks, reps, quick);
        rateLimiter(ks, reps, quick);
        rotatingCuckoo(ks, reps, quick);
        recencyWindow(ks, reps, quick);
    }

    /* The keys of every section: `keys` (also laid end to end in `flat`
     * for the C loops, and packed once, 64 per KeyBatch, in `packed`), and
     * as many `absent` keys of the same length (each a key with its first
     * and last bytes flipped), likewise laid out. */
    private record Keys(byte[][] keys, byte[] flat, KeyBatch[] packed, byte[][] absent, byte[] absentFlat,
            KeyBatch[] absentPacked) {
        static Keys of(byte[][] keys, byte[] flat, KeyBatch[] packed) {
            int nKeys = keys.length;
            byte[][] absent = new byte[nKeys][];
            byte[] absentFlat = new byte[flat.length];
            KeyBatch[] absentPacked = new KeyBatch[packed.length];
            for (int i = 0; i < nKeys; i++) {
                absent[i] = keys[i].clone();
                absent[i][0] ^= (byte) 0x5A; // another key of the same length
                absent[i][KEY_LEN - 1] ^= (byte) 0xA5;
                System.arraycopy(absent[i], 0, absentFlat, i * KEY_LEN, KEY_LEN);
            }
            for (int b = 0; b < packed.length; b++) {
                absentPacked[b] = KeyBatch.of(Arrays.copyOfRange(absent, b * BATCH, (b + 1) * BATCH));
            }
            return new Keys(keys, flat, packed, absent, absentFlat, absentPacked);
        }
    }

    /* A row of a table: the Java pass and the C loop's pass doing the same
     * calls on the same structure and keys; a batch row when its name says
     * "_batch". */
    private record Row(String name, Pass java, Pass c, boolean batch) {
        Row(String name, Pass java, Pass c) {
            this(name, java, c, name.contains("_batch"));
        }
    }

    /* The passes of a table: ns per key of each row's Java and C passes and
     * of the bare crossing, one column per measured pass. */
    private record Passes(double[][] javaNs, double[][] cNs, double[] bareNs) {
    }

    /* Runs the rows: a warm-up pass (not counted), then `reps` measured
     * passes; in each, every row's C loop runs right before its Java pass,
     * and the bare crossing after the rows. The passes get times t0, t0 +
     * nKeys, t0 + 2 nKeys, ... (each C or Java pass the next), which the
     * structures without a clock ignore. */
    private static Passes measure(Row[] rows, int reps, int nKeys, long t0) {
        Passes p = new Passes(new double[rows.length][reps], new double[rows.length][reps], new double[reps]);
        long t = t0;
        for (int rep = -1; rep < reps; rep++) {
            for (int r = 0; r < rows.length; r++) {
                double c = rows[r].c().run(t);
                t += nKeys;
                double j = rows[r].java().run(t);
                t += nKeys;
                if (rep >= 0) {
                    p.cNs()[r][rep] = c;
                    p.javaNs()[r][rep] = j;
                }
            }
            double b = bareNs(nKeys);
            if (rep >= 0) {
                p.bareNs()[rep] = b;
            }
        }
        return p;
    }

    /* printTable of measured rows. */
    private static void printRows(Row[] rows, Passes p) {
        String[] names = new String[rows.length];
        boolean[] isBatch = new boolean[rows.length];
        for (int r = 0; r < rows.length; r++) {
            names[r] = rows[r].name();
            isBatch[r] = rows[r].batch();
        }
        printTable(names, p.javaNs(), p.cNs(), isBatch, p.bareNs());
    }

    /* The Bloom filters' single and batch calls beside the C loops
     * (tf_binding_age_bloom_c_loop_ns, tf_binding_time_bloom_c_loop_ns: the
     * same calls in C, one per key or 64 keys per call) on the same filter
     * and keys: a classic AgeBloom and a TimeBloom sized for the keys at 1e-3
     * (the default (k, l), 14 and 36) and filled with them; contains asks for
     * those keys (present) and for as many others (absent). The batches take
     * keys packed once (KeyBatch). */
    private static void bloom(Keys ks, int reps, boolean quick) {
        byte[][] keys = ks.keys();
        byte[] flat = ks.flat();
        KeyBatch[] packed = ks.packed();
        byte[][] absent = ks.absent();
        byte[] absentFlat = ks.absentFlat();
        KeyBatch[] absentPacked = ks.absentPacked();
        int nKeys = keys.length;
        final long span = 1000;
        try (AgeBloom f = AgeBloom.forTarget(nKeys, 1e-3); TimeBloom tb = TimeBloom.forTarget(nKeys, 1e-3, span)) {
            for (int b = 0; b < packed.length; b++) {
                f.addBatch(packed[b]);
                tb.addBatch(packed[b], 1 + b * span / packed.length);
            }
            final long now = span;
            Row[] rows = {
                new Row("age contains (present)", t -> containsNs(keys, f::contains),
                        t -> f.cLoopNs(flat, KEY_LEN, 0)),
                new Row("age contains_batch (present)", t -> batchNs(packed, kb -> f.containsBatch(kb)),
                        t -> f.cLoopNs(flat, KEY_LEN, 2)),
                new Row("age contains (absent)", t -> containsNs(absent, f::contains),
                        t -> f.cLoopNs(absentFlat, KEY_LEN, 0)),
                new Row("age contains_batch (absent)", t -> batchNs(absentPacked, kb -> f.containsBatch(kb)),
                        t -> f.cLoopNs(absentFlat, KEY_LEN, 2)),
                new Row("age add", t -> {
                    long a = System.nanoTime();
                    for (byte[] k : keys) {
                        f.add(k);
                    }
                    return (double) (System.nanoTime() - a) / nKeys;
                }, t -> f.cLoopNs(flat, KEY_LEN, 1)),
                new Row("age add_batch", t -> batchNs(packed, kb -> {
                    f.addBatch(kb);
                    return null;
                }), t -> f.cLoopNs(flat, KEY_LEN, 3)),
                new Row("time contains (absent)", t -> containsNs(absent, k -> tb.contains(k, now)),
                        t -> tb.cLoopNs(absentFlat, KEY_LEN, 0, now)),
                new Row("time contains_batch (absent)",
                        t -> batchNs(absentPacked, kb -> tb.containsBatch(kb, now)),
                        t -> tb.cLoopNs(absentFlat, KEY_LEN, 2, now)),
            };
            Passes p = measure(rows, reps, nKeys, 1);
            System.out.printf("%nJava binding benchmark: AgeBloom %s and TimeBloom %s, sized for %d keys at 1e-3,%n",
                    f, tb, nKeys);
            System.out.printf("median of %d passes; C = tf_binding_{age,time}_bloom_c_loop_ns (the same call in C: one"
                    + " per key, batches of %d)%s%n", reps, BATCH, quick ? " [--quick: not a measurement]" : "");
            printRows(rows, p);
            // the batches answer as the single calls
            boolean[] batch = f.containsBatch(absentPacked[0]);
            for (int i = 0; i < BATCH; i++) {
                if (batch[i] != f.contains(absent[i])) {
                    throw new IllegalStateException("containsBatch differs from contains at key " + i);
                }
            }
            System.out.println("(sink " + (sink & 1) + ")");
        }
    }

    /* The rate limiter's acquire, one call per key and in batches of 64 keys
     * packed once, beside tf_binding_rate_limiter_c_loop_ns (the same calls
     * in C) on the same limiter and keys, one permit per call. Key i of a
     * pass asks at t0 + i and every pass starts nKeys time units after the
     * one before (t0 a multiple of nKeys), so each key asks once per nKeys
     * time units, once per bucket: the limiter is bucketed (the default
     * mode), limit 10 per window of 20 buckets of nKeys time units, so every
     * key is offered twice its limit, as in bench_rate_limiter, and stays
     * tracked (it is never a window old). A key asking at that steady rate
     * is allowed 10 passes, then denied 10, and so on; before the measured
     * passes, 20 passes in which each key starts asking at a pass of its own
     * (0 to 19, from its bytes) spread those phases over the keys, so that
     * every pass finds about half the keys allowed and half denied, in no
     * order a branch predictor learns, and the same mix from one pass to the
     * next (checked at the end). */
    private static void rateLimiter(Keys ks, int reps, boolean quick) {
        byte[][] keys = ks.keys();
        byte[] flat = ks.flat();
        KeyBatch[] packed = ks.packed();
        int nKeys = keys.length;
        final long limit = 10;
        final int phases = 2 * (int) limit;
        final long bucketWidth = nKeys;
        final long window = phases * bucketWidth;
        try (RateLimiter l = new RateLimiter(limit, window, bucketWidth)) {
            long[] times = new long[BATCH];
            int[] start = new int[nKeys];
            for (int i = 0; i < nKeys; i++) {
                long v = 0;
                for (int j = 0; j < 8; j++) {
                    v = v << 8 | (keys[i][j] & 0xFF);
                }
                start[i] = (int) Long.remainderUnsigned(v, phases);
            }
            long t = nKeys;
            byte[][] chunk = new byte[BATCH][];
            for (int q = 0; q < phases; q++, t += nKeys) {
                int m = 0;
                for (int i = 0; i < nKeys; i++) {
                    if (start[i] <= q) {
                        chunk[m] = keys[i];
                        times[m++] = t + i;
                        if (m == BATCH) {
                            l.acquireBatch(KeyBatch.of(chunk), times);
                            m = 0;
                        }
                    }
                }
                if (m > 0) {
                    l.acquireBatch(KeyBatch.of(Arrays.copyOf(chunk, m)), Arrays.copyOf(times, m));
                }
            }
            Row[] rows = {
                new Row("acquire", t0 -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int i = 0; i < nKeys; i++) {
                        RateLimiter.Decision d = l.acquire(keys[i], t0 + i);
                        acc += (d.allowed() ? 1 : 0) + d.remaining();
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / nKeys;
                }, t0 -> l.cLoopNs(flat, KEY_LEN, 0, t0)),
                new Row("acquire_batch(64, packed once)", t0 -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int b = 0; b < packed.length; b++) {
                        for (int i = 0; i < BATCH; i++) {
                            times[i] = t0 + (long) b * BATCH + i;
                        }
                        RateLimiter.Decision[] d = l.acquireBatch(packed[b], times);
                        acc += (d[0].allowed() ? 1 : 0) + d[0].remaining();
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / ((long) packed.length * BATCH);
                }, t0 -> l.cLoopNs(flat, KEY_LEN, 1, t0)),
            };
            Passes p = measure(rows, reps, nKeys, t);
            t += (reps + 1L) * rows.length * 2 * nKeys;
            // one more pass, counted: the share of requests allowed
            int allowed = 0;
            for (int b = 0; b < packed.length; b++) {
                for (int i = 0; i < BATCH; i++) {
                    times[i] = t + (long) b * BATCH + i;
                }
                for (RateLimiter.Decision d : l.acquireBatch(packed[b], times)) {
                    allowed += d.allowed() ? 1 : 0;
                }
            }
            double share = (double) allowed / nKeys;
            System.out.printf("%nJava binding benchmark: %s, %d keys each asking 1 permit once per %d time units"
                    + " (%.1f%% allowed),%n", l, nKeys, nKeys, 100 * share);
            System.out.printf("median of %d passes; C = tf_binding_rate_limiter_c_loop_ns (the same call in C: one"
                    + " per key, batches of %d)%s%n", reps, BATCH, quick ? " [--quick: not a measurement]" : "");
            printRows(rows, p);
            // the batches decide as the single calls: two new limiters, the
            // same 64 keys asking 11 times at the same times, single calls in
            // one and batches in the other (the 11th round is denied)
            try (RateLimiter single = new RateLimiter(limit, window, bucketWidth);
                    RateLimiter batched = new RateLimiter(limit, window, bucketWidth)) {
                for (int round = 0; round <= limit; round++) {
                    Arrays.fill(times, 1 + round);
                    RateLimiter.Decision[] d = batched.acquireBatch(packed[0], times);
                    for (int i = 0; i < BATCH; i++) {
                        RateLimiter.Decision e = single.acquire(keys[i], 1 + round);
                        if (!d[i].equals(e) || d[i].allowed() != (round < limit)) {
                            throw new IllegalStateException("acquireBatch differs from acquire at round " + round
                                    + ", key " + i + ": " + d[i] + " != " + e);
                        }
                    }
                }
            }
            if (share < 0.45 || share > 0.55 || l.stats().keys() != nKeys) {
                throw new IllegalStateException("not the steady state described: " + 100 * share + "% allowed, "
                        + l.stats().keys() + " keys tracked");
            }
            System.out.println("(sink " + (sink & 1) + ")");
        }
    }

    /* The rotating cuckoo filter's contains and addIfAbsent, one call per key
     * and in batches of 64 keys packed once, beside
     * tf_binding_rotating_cuckoo_c_loop_ns (the same calls in C) on the same
     * filter and keys: the default options (4 slots per bucket, 2 ways, no
     * ttl) with a first table sized for the keys (the smallest power of two
     * holding them at 90% fill; so one table, never rotated), filled with
     * them at time 1; every call is at time 1. contains asks for those keys
     * (present) and for as many others (absent); addIfAbsent gives it the
     * keys again (duplicates: nothing is written, the filter does not change
     * from one pass to the next). */
    private static void rotatingCuckoo(Keys ks, int reps, boolean quick) {
        byte[][] keys = ks.keys();
        byte[] flat = ks.flat();
        KeyBatch[] packed = ks.packed();
        byte[][] absent = ks.absent();
        byte[] absentFlat = ks.absentFlat();
        KeyBatch[] absentPacked = ks.absentPacked();
        int nKeys = keys.length;
        final long now = 1;
        long slots = Long.highestOneBit((long) Math.ceil(nKeys / 0.9) - 1) << 1;
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(slots).build()) {
            for (KeyBatch kb : packed) {
                f.addIfAbsentBatch(kb, now);
            }
            RotatingCuckoo.Stats st = f.stats(now);
            if (st.tables() != 1 || st.items() != nKeys || st.kickRotations() != 0 || st.fillRotations() != 0) {
                throw new IllegalStateException("the filter is not one table holding the " + nKeys + " keys: " + st);
            }
            Row[] rows = {
                new Row("contains (present)", t -> {
                    long a = System.nanoTime();
                    int hits = 0;
                    for (int i = 0; i < nKeys; i++) {
                        hits += f.contains(keys[i], now) ? 1 : 0;
                    }
                    long ns = System.nanoTime() - a;
                    sink += hits;
                    return (double) ns / nKeys;
                }, t -> f.cLoopNs(flat, KEY_LEN, 0, now)),
                new Row("contains_batch(64, packed once) (present)", t -> {
                    long a = System.nanoTime();
                    int hits = 0;
                    for (int b = 0; b < packed.length; b++) {
                        hits += f.containsBatch(packed[b], now)[0] ? 1 : 0;
                    }
                    long ns = System.nanoTime() - a;
                    sink += hits;
                    return (double) ns / ((long) packed.length * BATCH);
                }, t -> f.cLoopNs(flat, KEY_LEN, 2, now)),
                new Row("contains (absent)", t -> {
                    long a = System.nanoTime();
                    int hits = 0;
                    for (int i = 0; i < nKeys; i++) {
                        hits += f.contains(absent[i], now) ? 1 : 0;
                    }
                    long ns = System.nanoTime() - a;
                    sink += hits;
                    return (double) ns / nKeys;
                }, t -> f.cLoopNs(absentFlat, KEY_LEN, 0, now)),
                new Row("contains_batch(64, packed once) (absent)", t -> {
                    long a = System.nanoTime();
                    int hits = 0;
                    for (int b = 0; b < absentPacked.length; b++) {
                        hits += f.containsBatch(absentPacked[b], now)[0] ? 1 : 0;
                    }
                    long ns = System.nanoTime() - a;
                    sink += hits;
                    return (double) ns / ((long) absentPacked.length * BATCH);
                }, t -> f.cLoopNs(absentFlat, KEY_LEN, 2, now)),
                new Row("add_if_absent (duplicate)", t -> {
                    long a = System.nanoTime();
                    int hits = 0;
                    for (int i = 0; i < nKeys; i++) {
                        hits += f.addIfAbsent(keys[i], now) ? 1 : 0;
                    }
                    long ns = System.nanoTime() - a;
                    sink += hits;
                    return (double) ns / nKeys;
                }, t -> f.cLoopNs(flat, KEY_LEN, 1, now)),
                new Row("add_if_absent_batch(64, packed once) (duplicate)", t -> {
                    long a = System.nanoTime();
                    int hits = 0;
                    for (int b = 0; b < packed.length; b++) {
                        hits += f.addIfAbsentBatch(packed[b], now)[0] ? 1 : 0;
                    }
                    long ns = System.nanoTime() - a;
                    sink += hits;
                    return (double) ns / ((long) packed.length * BATCH);
                }, t -> f.cLoopNs(flat, KEY_LEN, 3, now)),
            };
            Passes p = measure(rows, reps, nKeys, 1);
            System.out.printf("%nJava binding benchmark: %s, %d MiB, holding %d keys (load %.2f),%n", f,
                    f.memory() >> 20, nKeys, f.stats(now).load());
            System.out.printf("median of %d passes; C = tf_binding_rotating_cuckoo_c_loop_ns (the same call in C: one"
                    + " per key, batches of %d)%s%n", reps, BATCH, quick ? " [--quick: not a measurement]" : "");
            printRows(rows, p);
            // the batches answer as the single calls, and the filter is
            // unchanged: every key still present, no other key
            boolean[] present = f.containsBatch(packed[0], now);
            boolean[] missing = f.containsBatch(absentPacked[0], now);
            boolean[] again = f.addIfAbsentBatch(packed[0], now);
            for (int i = 0; i < BATCH; i++) {
                if (!present[i] || !f.contains(keys[i], now) || missing[i] || f.contains(absent[i], now) || !again[i]
                        || !f.addIfAbsent(keys[i], now)) {
                    throw new IllegalStateException("the batches differ from the single calls at key " + i);
                }
            }
            st = f.stats(now);
            if (st.tables() != 1 || st.items() != nKeys) {
                throw new IllegalStateException("the filter changed: " + st);
            }
            System.out.println("(sink " + (sink & 1) + ")");
        }
    }

    /* The recency window's insert and query, one call per key and in batches
     * of 64 keys packed once, beside tf_binding_recency_window_c_loop_ns (the
     * same calls in C) on the same window and keys: the default mode
     * (HistoricalMembership, invEps 8, exact signatures) with a window of
     * nKeys inserts (a power of two), filled by inserting the keys. Every
     * insert pass inserts the keys again in the same order, so the window
     * holds them all, key i last inserted nKeys - 1 - i inserts ago after each
     * pass, and a query finds every key (present). */
    private static void recencyWindow(Keys ks, int reps, boolean quick) {
        byte[][] keys = ks.keys();
        byte[] flat = ks.flat();
        KeyBatch[] packed = ks.packed();
        int nKeys = keys.length;
        try (RecencyWindow w = RecencyWindow.builder().window(nKeys).build()) {
            for (KeyBatch kb : packed) {
                w.insertBatch(kb);
            }
            Row[] rows = {
                new Row("insert", t -> {
                    long a = System.nanoTime();
                    for (int i = 0; i < nKeys; i++) {
                        w.insert(keys[i]);
                    }
                    return (double) (System.nanoTime() - a) / nKeys;
                }, t -> w.cLoopNs(flat, KEY_LEN, 0)),
                new Row("query (present)", t -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int i = 0; i < nKeys; i++) {
                        acc += w.query(keys[i]);
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / nKeys;
                }, t -> w.cLoopNs(flat, KEY_LEN, 1)),
                new Row("insert_batch(64, packed once)", t -> {
                    long a = System.nanoTime();
                    for (int b = 0; b < packed.length; b++) {
                        w.insertBatch(packed[b]);
                    }
                    return (double) (System.nanoTime() - a) / ((long) packed.length * BATCH);
                }, t -> w.cLoopNs(flat, KEY_LEN, 2)),
                new Row("query_batch(64, packed once) (present)", t -> {
                    long a = System.nanoTime();
                    long acc = 0;
                    for (int b = 0; b < packed.length; b++) {
                        acc += w.queryBatch(packed[b])[0];
                    }
                    long ns = System.nanoTime() - a;
                    sink += acc;
                    return (double) ns / ((long) packed.length * BATCH);
                }, t -> w.cLoopNs(flat, KEY_LEN, 3)),
            };
            Passes p = measure(rows, reps, nKeys, 1);
            System.out.printf("%nJava binding benchmark: %s, %d MiB, holding %d keys,%n", w, w.memory() >> 20, nKeys);
            System.out.printf("median of %d passes; C = tf_binding_recency_window_c_loop_ns (the same call in C: one"
                    + " per key, batches of %d)%s%n", reps, BATCH, quick ? " [--quick: not a measurement]" : "");
            printRows(rows, p);
            // the batches answer as the single calls, and every key is in
            // the window (the last pass inserted them all)
            long[] batch = w.queryBatch(packed[0]);
            for (int i = 0; i < BATCH; i++) {
                if (batch[i] != w.query(keys[i]) || !RecencyWindow.inWindow(batch[i])) {
                    throw new IllegalStateException("queryBatch differs from query, or a key is out of the window,"
                            + " at key " + i + ": " + batch[i] + ", " + w.query(keys[i]));
                }
            }
            System.out.println("(sink " + (sink & 1) + ")");
        }
    }

    /* ns per call of n empty JNI calls (TemporalFiltersNative.bare_crossing:
     * the wrapper of a C function that returns 0, with no error check). */
    private static double bareNs(int n) {
        long a = System.nanoTime();
        long acc = 0;
        for (int i = 0; i < n; i++) {
            acc += TemporalFiltersNative.bare_crossing();
        }
        long ns = System.nanoTime() - a;
        sink += acc;
        return (double) ns / n;
    }

    /* Prints the medians and their ratio, then the bare crossing (the median
     * of bareNs) and issue 16's goal for each row: a single call within C +
     * 1.3 x the crossing, a batch within 1.3 x C per key. The first column is
     * as wide as the longest row name (30 characters at least). */
    private static void printTable(String[] names, double[][] javaNs, double[][] cNs, boolean[] isBatch,
            double[] bareNs) {
        int width = 30;
        for (String n : names) {
            width = Math.max(width, n.length());
        }
        String row = "%-" + width + "s %10s %10s %8s%n";
        System.out.printf(row, "operation", "Java ns/op", "C ns/op", "Java/C");
        for (int r = 0; r < names.length; r++) {
            double j = median(javaNs[r]);
            double c = median(cNs[r]);
            System.out.printf("%-" + width + "s %10.1f %10.1f %8.2f%n", names[r], j, c, j / c);
        }
        double bare = median(bareNs);
        System.out.printf("%-" + width + "s %10.1f%n", "bare crossing (empty JNI call)", bare);
        System.out.println("goal (issue 16): single call <= C + 1.3 x bare crossing; batch <= 1.3 x C per key");
        System.out.printf(row, "operation", "Java ns/op", "goal ns/op", "goal");
        for (int r = 0; r < names.length; r++) {
            double j = median(javaNs[r]);
            double c = median(cNs[r]);
            double bound = isBatch[r] ? 1.3 * c : c + 1.3 * bare;
            System.out.printf("%-" + width + "s %10.1f %10.1f %8s%n", names[r], j, bound,
                    j <= bound ? "met" : "not met");
        }
    }

    /* ns per key of `contains` over every key, one call each. */
    private static double containsNs(byte[][] keys, java.util.function.Predicate<byte[]> contains) {
        long a = System.nanoTime();
        int hits = 0;
        for (byte[] k : keys) {
            hits += contains.test(k) ? 1 : 0;
        }
        long ns = System.nanoTime() - a;
        sink += hits;
        return (double) ns / keys.length;
    }

    /* ns per key of `op` over every packed batch. */
    private static double batchNs(KeyBatch[] batches, java.util.function.Function<KeyBatch, Object> op) {
        long a = System.nanoTime();
        long acc = 0;
        for (KeyBatch kb : batches) {
            acc += op.apply(kb) == null ? 0 : 1;
        }
        long ns = System.nanoTime() - a;
        sink += acc;
        return (double) ns / ((long) batches.length * BATCH);
    }
}
