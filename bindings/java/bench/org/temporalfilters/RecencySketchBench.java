package org.temporalfilters;

import java.util.Arrays;

/**
 * The cost of the Java binding: update and query ns/op through the idiomatic
 * layer, one key per call and in batches, beside the C library's own loop
 * (tf_binding_c_loop_ns, the same sketch and keys, measured in the same run),
 * printed as ratios binding / C; then the same for the Bloom filters'
 * contains and add, single and batch (tf_binding_age_bloom_c_loop_ns,
 * tf_binding_time_bloom_c_loop_ns). Medians over several passes, after a warm-up
 * pass that lets the JIT compile the Java loops. Each table also times the
 * bare crossing, an empty JNI call (TemporalFiltersNative.bare_crossing, the
 * shared interface's tf_binding_bare_crossing), in the same passes, and
 * prints issue 16's goal for every row: a single call within the C time +
 * 1.3 x the bare crossing, a batch within 1.3 x the C time per key, "met" or
 * "not met" (reported, never asserted).
 *
 * <pre>
 *   java -Djava.library.path=... -cp ... org.temporalfilters.RecencySketchBench [--quick]
 * </pre>
 * --quick: a few small passes, to check that the benchmark runs (suite
 * bench-smoke). --width W --depth D: another table (default 262144 x 4, 1 Mi
 * cells); a small one (e.g. --width 1024) shows the per-call overhead alone.
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
        bloom(keys, flat, packed, reps, quick);
    }

    /* A row of the Bloom table: the Java pass and the C loop's op on the same
     * filter and keys. */
    private record BloomRow(String name, Pass java, Pass c, boolean batch) {
        BloomRow(String name, Pass java, Pass c) {
            this(name, java, c, name.contains("_batch"));
        }
    }

    /* The Bloom filters' single and batch calls beside the C loops
     * (tf_binding_age_bloom_c_loop_ns, tf_binding_time_bloom_c_loop_ns: the
     * same calls in C, one per key or 64 keys per call) on the same filter
     * and keys: a classic AgeBloom and a TimeBloom sized for the keys at 1e-3
     * (the default (k, l), 14 and 36) and filled with them; contains asks for
     * those keys (present) and for as many others (absent). The batches take
     * keys packed once (KeyBatch). */
    private static void bloom(byte[][] keys, byte[] flat, KeyBatch[] packed, int reps, boolean quick) {
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
        final long span = 1000;
        try (AgeBloom f = AgeBloom.forTarget(nKeys, 1e-3); TimeBloom tb = TimeBloom.forTarget(nKeys, 1e-3, span)) {
            for (int b = 0; b < packed.length; b++) {
                f.addBatch(packed[b]);
                tb.addBatch(packed[b], 1 + b * span / packed.length);
            }
            final long now = span;
            BloomRow[] rows = {
                new BloomRow("age contains (present)", t -> containsNs(keys, f::contains),
                        t -> f.cLoopNs(flat, KEY_LEN, 0)),
                new BloomRow("age contains_batch (present)", t -> batchNs(packed, kb -> f.containsBatch(kb)),
                        t -> f.cLoopNs(flat, KEY_LEN, 2)),
                new BloomRow("age contains (absent)", t -> containsNs(absent, f::contains),
                        t -> f.cLoopNs(absentFlat, KEY_LEN, 0)),
                new BloomRow("age contains_batch (absent)", t -> batchNs(absentPacked, kb -> f.containsBatch(kb)),
                        t -> f.cLoopNs(absentFlat, KEY_LEN, 2)),
                new BloomRow("age add", t -> {
                    long a = System.nanoTime();
                    for (byte[] k : keys) {
                        f.add(k);
                    }
                    return (double) (System.nanoTime() - a) / nKeys;
                }, t -> f.cLoopNs(flat, KEY_LEN, 1)),
                new BloomRow("age add_batch", t -> batchNs(packed, kb -> {
                    f.addBatch(kb);
                    return null;
                }), t -> f.cLoopNs(flat, KEY_LEN, 3)),
                new BloomRow("time contains (absent)", t -> containsNs(absent, k -> tb.contains(k, now)),
                        t -> tb.cLoopNs(absentFlat, KEY_LEN, 0, now)),
                new BloomRow("time contains_batch (absent)",
                        t -> batchNs(absentPacked, kb -> tb.containsBatch(kb, now)),
                        t -> tb.cLoopNs(absentFlat, KEY_LEN, 2, now)),
            };
            double[][] javaNs = new double[rows.length][reps];
            double[][] cNs = new double[rows.length][reps];
            double[] bareNs = new double[reps];
            // warm-up pass (not counted), then the measured passes, the C loop
            // right before each Java pass
            for (int rep = -1; rep < reps; rep++) {
                for (int r = 0; r < rows.length; r++) {
                    double c = rows[r].c().run(0);
                    double j = rows[r].java().run(0);
                    if (rep >= 0) {
                        cNs[r][rep] = c;
                        javaNs[r][rep] = j;
                    }
                }
                double b = bareNs(nKeys);
                if (rep >= 0) {
                    bareNs[rep] = b;
                }
            }
            System.out.printf("%nJava binding benchmark: AgeBloom %s and TimeBloom %s, sized for %d keys at 1e-3,%n",
                    f, tb, nKeys);
            System.out.printf("median of %d passes; C = tf_binding_{age,time}_bloom_c_loop_ns (the same call in C: one"
                    + " per key, batches of %d)%s%n", reps, BATCH, quick ? " [--quick: not a measurement]" : "");
            String[] names = new String[rows.length];
            boolean[] isBatch = new boolean[rows.length];
            for (int r = 0; r < rows.length; r++) {
                names[r] = rows[r].name();
                isBatch[r] = rows[r].batch();
            }
            printTable(names, javaNs, cNs, isBatch, bareNs);
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
     * 1.3 x the crossing, a batch within 1.3 x C per key. */
    private static void printTable(String[] names, double[][] javaNs, double[][] cNs, boolean[] isBatch,
            double[] bareNs) {
        System.out.printf("%-30s %10s %10s %8s%n", "operation", "Java ns/op", "C ns/op", "Java/C");
        for (int r = 0; r < names.length; r++) {
            double j = median(javaNs[r]);
            double c = median(cNs[r]);
            System.out.printf("%-30s %10.1f %10.1f %8.2f%n", names[r], j, c, j / c);
        }
        double bare = median(bareNs);
        System.out.printf("%-30s %10.1f%n", "bare crossing (empty JNI call)", bare);
        System.out.println("goal (issue 16): single call <= C + 1.3 x bare crossing; batch <= 1.3 x C per key");
        System.out.printf("%-30s %10s %10s %8s%n", "operation", "Java ns/op", "goal ns/op", "goal");
        for (int r = 0; r < names.length; r++) {
            double j = median(javaNs[r]);
            double c = median(cNs[r]);
            double bound = isBatch[r] ? 1.3 * c : c + 1.3 * bare;
            System.out.printf("%-30s %10.1f %10.1f %8s%n", names[r], j, bound, j <= bound ? "met" : "not met");
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
