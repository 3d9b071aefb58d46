package org.temporalfilters;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;

/* A CONCURRENT sketch used from many Java threads at once, without locks. */
public class ConcurrencyTest {
    private static final int THREADS = 8;
    private static final int KEYS = 1000;

    /* Writers update (single and batch calls) while readers query: afterwards
     * every key reads at least the largest time any thread wrote for it, and
     * during the run a reader never sees a key's time go backwards. */
    @Test
    public void neverOlderThanAnyThreadWrote() throws Exception {
        int writers = THREADS - 2;
        long[][] wrote = new long[writers][KEYS];
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong reads = new AtomicLong();
        for (int flags : new int[] {RecencySketch.CONCURRENT, RecencySketch.CONCURRENT | RecencySketch.BLOCKED}) {
            try (RecencySketch s = new RecencySketch(2048, 3, 17, flags)) {
                writing.set(true);
                for (long[] w : wrote) {
                    java.util.Arrays.fill(w, 0);
                }
                java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
                TestSupport.onThreads(THREADS, t -> {
                    if (t >= writers) { // reader
                        long[] seen = new long[KEYS];
                        TestSupport.Rng rng = new TestSupport.Rng(1000 + t);
                        while (writing.get()) {
                            int k = rng.below(KEYS);
                            long got = s.query("key-" + k);
                            assertTrue("key-" + k + " went back from " + seen[k] + " to " + got, got >= seen[k]);
                            seen[k] = got;
                            reads.incrementAndGet();
                        }
                        return;
                    }
                    TestSupport.Rng rng = new TestSupport.Rng(t);
                    long now = 1 + t;
                    for (int round = 0; round < 2000; round++) {
                        if (round % 4 == 0) {
                            String[] keys = new String[32];
                            long[] times = new long[32];
                            for (int i = 0; i < 32; i++) {
                                int k = rng.below(KEYS);
                                keys[i] = "key-" + k;
                                times[i] = now + rng.below(100); // out of order within the batch
                                wrote[t][k] = Math.max(wrote[t][k], times[i]);
                            }
                            s.updateBatch(keys, times);
                        } else {
                            for (int i = 0; i < 32; i++) {
                                int k = rng.below(KEYS);
                                long when = now + rng.below(100);
                                s.update("key-" + k, when);
                                wrote[t][k] = Math.max(wrote[t][k], when);
                            }
                        }
                        now += 1 + rng.below(20);
                    }
                    if (done.incrementAndGet() == writers) {
                        writing.set(false);
                    }
                });
                long[] all = new long[KEYS];
                String[] names = new String[KEYS];
                for (int k = 0; k < KEYS; k++) {
                    names[k] = "key-" + k;
                    for (int t = 0; t < writers; t++) {
                        all[k] = Math.max(all[k], wrote[t][k]);
                    }
                }
                long[] got = s.queryBatch(names);
                int exact = 0;
                for (int k = 0; k < KEYS; k++) {
                    assertTrue(names[k] + ": " + got[k] + " < " + all[k], got[k] >= all[k]);
                    assertTrue(all[k] > 0);
                    exact += got[k] == all[k] ? 1 : 0;
                }
                assertTrue("only " + exact + " exact answers", exact > KEYS / 2);
            }
        }
        assertTrue(reads.get() > 0);
    }

    /* Many threads pace the same few keys on a shared clock: no key is ever
     * granted twice within the interval, whatever the interleaving. */
    @Test
    public void paceNeverGrantsTwiceWithinTheInterval() throws Exception {
        final int keys = 16;
        final long interval = 40;
        AtomicLong clock = new AtomicLong();
        ConcurrentLinkedQueue<long[]> grants = new ConcurrentLinkedQueue<>();
        AtomicLong denied = new AtomicLong();
        try (RecencySketch s = new RecencySketch(4096, 4, 3, RecencySketch.CONCURRENT)) {
            TestSupport.onThreads(THREADS, t -> {
                TestSupport.Rng rng = new TestSupport.Rng(50 + t);
                for (int i = 0; i < 20000; i++) {
                    int k = rng.below(keys);
                    long now = clock.incrementAndGet();
                    RecencySketch.PaceResult r = s.pace("client-" + k, now, interval);
                    if (r.granted()) {
                        grants.add(new long[] {k, now});
                        assertEquals(now + interval, r.nextAllowed());
                    } else {
                        denied.incrementAndGet();
                        assertTrue(r.nextAllowed() > now);
                    }
                }
            });
        }
        List<List<Long>> byKey = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            byKey.add(new ArrayList<>());
        }
        for (long[] g : grants) {
            byKey.get((int) g[0]).add(g[1]);
        }
        long total = clock.get();
        for (int k = 0; k < keys; k++) {
            List<Long> times = byKey.get(k);
            times.sort(null);
            for (int i = 1; i < times.size(); i++) {
                long gap = times.get(i) - times.get(i - 1);
                assertTrue("client-" + k + " granted at " + times.get(i - 1) + " and " + times.get(i), gap >= interval);
            }
            // each key is asked about every 16 ticks on average: it must be
            // granted most of the times it is allowed to be
            assertTrue("client-" + k + ": " + times.size() + " grants", times.size() > total / interval / 2);
        }
        assertTrue(denied.get() > 0);
    }

    /* close() while other threads call a structure whose calls may overlap
     * (a CONCURRENT sketch, a rate limiter): the calls in flight finish on a
     * live object (close waits for them), every later one throws
     * ClosedException, and nothing else happens (no crash, no other error).
     * Each round closes after the workers have made some calls, mid-stream. */
    @Test
    public void closeWaitsForTheCallsInFlight() throws Exception {
        for (int round = 0; round < 20; round++) {
            boolean limiter = round % 2 == 0;
            NativeHandle<?> h = limiter ? new RateLimiter(1000, 100, 10)
                    : new RecencySketch(4096, 4, 5, RecencySketch.CONCURRENT);
            AtomicLong ok = new AtomicLong();
            AtomicLong closedSeen = new AtomicLong();
            TestSupport.onThreads(4, t -> {
                if (t == 0) { // the closer
                    while (ok.get() < 2000) {
                        Thread.onSpinWait();
                    }
                    h.close();
                    assertTrue(h.isClosed());
                    return;
                }
                try {
                    for (long i = 1;; i++) {
                        String key = "key-" + (i % 300);
                        if (i % 97 == 0) {
                            assertTrue(h.serialize().length > 0); // a longer call
                        } else if (limiter) {
                            ((RateLimiter) h).acquire(key, i);
                        } else {
                            ((RecencySketch) h).update(key, i);
                            ((RecencySketch) h).query(key);
                        }
                        ok.incrementAndGet();
                    }
                } catch (ClosedException e) {
                    closedSeen.incrementAndGet();
                }
            });
            assertEquals("every worker ends with ClosedException", 3, closedSeen.get());
            assertTrue(ok.get() >= 2000);
        }
    }
}
