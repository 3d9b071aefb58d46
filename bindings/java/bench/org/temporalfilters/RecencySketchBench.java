package org.temporalfilters;

import java.util.Arrays;

/**
 * The cost of the Java binding: update and query ns/op through the idiomatic
 * layer, one key per call and in batches, beside the C library's own loop
 * (tf_binding_c_loop_ns, the same sketch and keys, measured in the same run),
 * printed as ratios binding / C. Medians over several passes, after a warm-up
 * pass that lets the JIT compile the Java loops.
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
            Pass cUpdate = t0 -> s.cLoopNs(flat, KEY_LEN, 0, t0);
            Pass cQuery = t0 -> s.cLoopNs(flat, KEY_LEN, 1, t0);
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
            boolean[] isUpdate = {true, false, true, false, true, false};

            double[][] javaNs = new double[java.length][reps];
            double[][] cNs = new double[java.length][reps];
            long t = 1;
            // warm-up pass (not counted), then the measured passes; the C loop
            // runs right before each Java pass on the same keys
            for (int rep = -1; rep < reps; rep++) {
                for (int op = 0; op < java.length; op++) {
                    double c = (isUpdate[op] ? cUpdate : cQuery).run(t);
                    t += nKeys;
                    double j = java[op].run(t);
                    t += nKeys;
                    if (rep >= 0) {
                        cNs[op][rep] = c;
                        javaNs[op][rep] = j;
                    }
                }
            }

            System.out.printf("Java binding benchmark: RecencySketch %d x %d (%d cells, %d MiB)%s, %d-byte keys,%n",
                    s.info().width(), s.info().depth(), s.info().cells(), s.memory() >> 20,
                    flags != 0 ? ", CONCURRENT" : "", KEY_LEN);
            System.out.printf("%d keys per pass, median of %d passes; C = tf_binding_c_loop_ns (one C call per key)%s%n",
                    nKeys, reps, quick ? " [--quick: not a measurement]" : "");
            System.out.printf("%-30s %10s %10s %8s%n", "operation", "Java ns/op", "C ns/op", "Java/C");
            for (int op = 0; op < java.length; op++) {
                double j = median(javaNs[op]);
                double c = median(cNs[op]);
                System.out.printf("%-30s %10.1f %10.1f %8.2f%n", names[op], j, c, j / c);
            }
            System.out.println("(sink " + (sink & 1) + ")");
        }
    }
}
