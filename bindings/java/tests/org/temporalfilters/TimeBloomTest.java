package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/* TimeBloom, the time-window filter: its guarantees, adaptation, every error
 * path and the blob round trip (the golden blob is in GoldenTest). */
public class TimeBloomTest {

    @Test
    public void aKeyAddedIsContainedForTheWholeSpan() {
        try (TimeBloom f = TimeBloom.forTarget(500, 0.01, 1000, 42, 0)) {
            assertFalse(f.contains("alpha", 100));
            f.add("alpha", 100);
            assertTrue(f.contains("alpha", 100));
            assertTrue(f.contains(utf8("alpha"), 600));
            assertTrue("still contained at t + span", f.contains("alpha", 100 + 1000));
            f.add(new byte[] {0, 1, 0}, 200);
            assertTrue(f.contains(new byte[] {0, 1, 0}, 1200));
            for (int i = 0; i < 100; i++) {
                f.add("old-" + i, 300);
            }
            // long after the span, with other keys moving the filter on, they are
            // gone (but for the odd false positive)
            for (long t = 1400; t < 6000; t += 10) {
                f.add("filler-" + t, t);
            }
            int still = 0;
            for (int i = 0; i < 100; i++) {
                still += f.contains("old-" + i, 6000) ? 1 : 0;
            }
            assertTrue("old keys still present: " + still, still < 10);
            assertEquals(102 + (6000 - 1400) / 10, f.stats(6000).inserts());
        }
    }

    @Test
    public void shapeFollowsTheConstructor() {
        try (TimeBloom f = new TimeBloom(3, 4, 256, 1000, 42, 0)) {
            assertEquals(3, f.info().k());
            assertEquals(4, f.info().l());
            assertEquals(1000, f.info().span());
            assertEquals(42, f.info().seed());
            TimeBloom.Stats s = f.stats(1);
            assertEquals(7, s.slices());
            assertEquals(7 * 256, s.bits());
            assertEquals(0.0, s.bitsPerElement(), 0.0); // no insert within the span
            assertEquals(0, s.inserts());
            assertEquals(0.0, s.fprNow(), 0.0);
            for (int i = 0; i < 7; i++) {
                assertEquals(256, f.sliceBits(i));
            }
            assertTrue(f.memory() >= 7 * 256 / 8);
            assertEquals("TimeBloom(k=3, l=4, span=1000, seed=42)", f.toString());
            f.add("x", 10);
            f.add("y", 20);
            s = f.stats(20);
            assertEquals(2, s.inserts());
            assertEquals(7 * 256 / 2.0, s.bitsPerElement(), 1e-9);
            assertTrue(s.fprNow() >= 0 && s.fprNow() < 0.01);
        }
        try (TimeBloom f = new TimeBloom(1, 1, 64, 1, 0xFFFF_FFFFL, 0)) { // span = l is allowed
            assertEquals(0xFFFF_FFFFL, f.info().seed());
        }
    }

    /* The span guarantee against an exact record of the inserts, over a stream
     * of a few thousand keys whose rate changes (bursts, quiet stretches, many
     * keys at one timestamp, a clock that steps back): a key inserted within
     * the span before now is never reported absent. */
    @Test
    public void neverAbsentWithinTheSpan() {
        final long span = 1000;
        try (TimeBloom f = TimeBloom.forTarget(200, 0.01, span, 77, 0)) {
            TestSupport.Rng rng = new TestSupport.Rng(5);
            int n = 4000;
            long[] at = new long[n]; // when key i was inserted (clamped clock)
            long now = 1;
            long high = 0;
            int oldest = 0; // the first key inserted within the span before high
            int fp = 0;
            int asked = 0;
            for (int i = 0; i < n; i++) {
                int phase = (i / 500) % 4;
                long step = phase == 0 ? 1 + rng.below(5) : phase == 1 ? rng.below(2) : phase == 2 ? 5 + rng.below(30) : 1;
                now += step;
                long t = now;
                if (i % 97 == 13) {
                    t = Math.max(1, now - 50); // a clock that went backwards: clamped to the highest seen
                }
                f.add("s-" + i, t);
                high = Math.max(high, t);
                at[i] = high;
                // the oldest key still within the span, and a sample of the others
                while (at[oldest] < high - span) {
                    oldest++;
                }
                assertTrue("oldest s-" + oldest + " (at " + at[oldest] + ") absent at " + high,
                        f.contains("s-" + oldest, high));
                for (int j = i; j > oldest; j -= 1 + rng.below(40)) {
                    assertTrue("s-" + j + " (at " + at[j] + ") absent at " + high, f.contains("s-" + j, high));
                }
                asked++;
                fp += f.contains("never-" + i, high) ? 1 : 0;
            }
            // at the end, every key of the span, also queried a full span later
            for (int j = 0; j < n; j++) {
                if (at[j] >= high - span) {
                    assertTrue("s-" + j, f.contains("s-" + j, high));
                    assertTrue("s-" + j + " at t + span", f.contains("s-" + j, at[j] + span));
                }
            }
            // a filter that says "present" to everything would pass the above;
            // the target is 1% at a steady rate, rising for a while after a change
            assertTrue("false positives " + fp + " of " + asked, fp < asked / 10);
            TimeBloom.Stats s = f.stats(high);
            assertEquals(n, s.inserts());
            assertTrue(s.slices() >= f.info().k()); // stale slices retire, down to k
            long bits = 0;
            for (int i = 0; i < s.slices(); i++) {
                bits += f.sliceBits(i);
            }
            assertEquals(s.bits(), bits);
        }
    }

    @Test
    public void forTargetUsesTheChosenParameters() {
        AgeBloom.Parameters p = AgeBloom.choose(0.01);
        try (TimeBloom f = TimeBloom.forTarget(10_000, 0.01, 60_000, 9, 0)) {
            assertEquals(p.k(), f.info().k());
            assertEquals(p.l(), f.info().l());
            assertEquals(60_000, f.info().span());
            assertEquals(9, f.info().seed());
            assertEquals(p.k() + p.l(), f.stats(1).slices());
        }
        // MIN_MEMORY: AgeBloom's memory-minimal pair, the flag not recorded
        AgeBloom.Parameters m = AgeBloom.choose(0.01, AgeBloom.MIN_MEMORY);
        assertEquals(new AgeBloom.Parameters(12, 87, 0.5), m);
        try (TimeBloom f = TimeBloom.forTarget(10_000, 0.01, 60_000, 9, TimeBloom.MIN_MEMORY)) {
            assertEquals(m.k(), f.info().k());
            assertEquals(m.l(), f.info().l());
            assertEquals(0, f.info().flags());
            assertEquals(m.k() + m.l(), f.stats(1).slices());
        }
    }

    /* A burst of many generations at one timestamp grows the slices; the
     * filter keeps every key of the span meanwhile. */
    @Test
    public void adaptsToABurst() {
        try (TimeBloom f = new TimeBloom(3, 4, 128, 1000, 1, 0)) {
            long base = f.stats(1).bits();
            assertEquals(7 * 128, base);
            for (int i = 0; i < 3000; i++) {
                f.add("b-" + i, 5000); // all at one timestamp
            }
            // the slices grow with the burst, and memory stays linear in it
            long bits = f.stats(5000).bits();
            assertTrue(bits > 20 * base);
            assertTrue(bits < 64L * 3000);
            for (int i = 0; i < 3000; i++) {
                assertTrue("b-" + i, f.contains("b-" + i, 6000));
            }
        }
    }

    @Test
    public void addIfAbsentReturnsWhetherTheKeyWasPresent() {
        try (TimeBloom f = new TimeBloom(4, 8, 1024, 100, 3, 0)) {
            assertFalse(f.addIfAbsent("click-1", 10));
            assertTrue(f.addIfAbsent("click-1", 20));
            assertTrue(f.addIfAbsent(utf8("click-1"), 110));
            assertEquals("a present key is not inserted again", 1, f.stats(110).inserts());
            assertFalse(f.addIfAbsent(new byte[] {0}, 110));
            assertTrue(f.addIfAbsent(new byte[] {0}, 111));
            assertEquals(2, f.stats(111).inserts());
        }
    }

    @Test
    public void clearForgetsEverything() {
        try (TimeBloom f = new TimeBloom(3, 4, 256, 1000, 1, 0)) {
            for (int i = 0; i < 100; i++) {
                f.add("k" + i, 10 + i);
            }
            assertTrue(f.stats(200).fprNow() > 0);
            f.clear();
            assertEquals(0, f.stats(200).inserts());
            for (int i = 0; i < 100; i++) {
                assertFalse(f.contains("k" + i, 200));
            }
            f.add("again", 300);
            assertTrue(f.contains("again", 300));
        }
    }

    @Test
    public void serializeRoundTrip() {
        try (TimeBloom f = new TimeBloom(3, 5, 300, 500, 123, 0)) {
            for (int i = 0; i < 1500; i++) {
                f.add("key-" + i, 1 + i);
            }
            f.add(new byte[] {0, 1, 0}, 1500);
            byte[] blob = f.serialize();
            TestSupport.assertEnvelope(blob, 3, 0);
            try (TimeBloom g = TimeBloom.deserialize(blob)) {
                assertEquals(f.info(), g.info());
                assertEquals(f.stats(1500), g.stats(1500));
                for (int i = 0; i < f.stats(1500).slices(); i++) {
                    assertEquals(f.sliceBits(i), g.sliceBits(i));
                }
                for (int i = 0; i < 1600; i++) {
                    assertEquals("key-" + i, f.contains("key-" + i, 1500), g.contains("key-" + i, 1500));
                }
                assertTrue(g.contains(new byte[] {0, 1, 0}, 1500));
                assertArrayEquals(blob, g.serialize());
                f.add("next", 1600);
                g.add("next", 1600);
                assertArrayEquals(f.serialize(), g.serialize());
            }
        }
    }

    /* ---- errors ---------------------------------------------------------- */

    @Test
    public void badConstructorArguments() {
        expectStatus(Status.INVALID_ARGUMENT, () -> new TimeBloom(0, 4, 200, 100, 1, 0));
        // MIN_MEMORY is the only flag; every other bit is refused
        for (int flags : new int[] {2, 4, 1 << 31}) {
            expectStatus(Status.INVALID_ARGUMENT, "flags", () -> new TimeBloom(3, 4, 200, 100, 1, flags));
            expectStatus(Status.INVALID_ARGUMENT, "flags", () -> TimeBloom.forTarget(100, 0.01, 1000, 1, flags));
        }
        // a negative int is outside 0 .. 2^32-1: refused before the call
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> new TimeBloom(3, 4, 200, 100, 1, -1));
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> TimeBloom.forTarget(100, 0.01, 1000, 1, -1));
        // MIN_MEMORY only where the library chooses (k, l)
        assertEquals(1, TimeBloom.MIN_MEMORY);
        assertEquals(TemporalFiltersNative.TF_TIME_BLOOM_MIN_MEMORY, TimeBloom.MIN_MEMORY);
        expectStatus(Status.INVALID_ARGUMENT, "MIN_MEMORY",
                () -> new TimeBloom(3, 4, 200, 100, 1, TimeBloom.MIN_MEMORY));
        expectStatus(Status.INVALID_ARGUMENT, "MIN_MEMORY",
                () -> new TimeBloom(3, 4, 200, 100, 1, TimeBloom.MIN_MEMORY | 2));
        expectStatus(Status.INVALID_ARGUMENT, () -> new TimeBloom(65, 4, 200, 100, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new TimeBloom(3, 0, 200, 100, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new TimeBloom(3, 1025, 200, 2000, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new TimeBloom(3, 4, 63, 100, 1, 0));
        expectStatus(Status.TOO_LARGE, () -> new TimeBloom(3, 4, (1L << 40) + 1, 100, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "span", () -> new TimeBloom(3, 4, 200, 3, 1, 0)); // span < l
        expectStatus(Status.INVALID_ARGUMENT, "span", () -> new TimeBloom(3, 4, 200, 0, 1, 0));
        // Java-side ranges
        expectStatus(Status.INVALID_ARGUMENT, "k", () -> new TimeBloom(-1, 4, 200, 100, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "slice_bits", () -> new TimeBloom(3, 4, -1, 100, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "span", () -> new TimeBloom(3, 4, 200, -100, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> new TimeBloom(3, 4, 200, 100, -1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> new TimeBloom(3, 4, 200, 100, 1L << 32, 0));
    }

    @Test
    public void badSizingArguments() {
        for (double r : new double[] {0.0, 1.0, -0.5, 1.5, Double.NaN, Double.NEGATIVE_INFINITY}) {
            expectStatus(Status.INVALID_ARGUMENT, () -> TimeBloom.forTarget(100, r, 1000, 1, 0));
        }
        expectStatus(Status.TOO_LARGE, () -> TimeBloom.forTarget(100, 1e-300, 1000, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "span", () -> TimeBloom.forTarget(100, 0.01, 10, 1, 0)); // l = 24
        expectStatus(Status.INVALID_ARGUMENT, "span", () -> TimeBloom.forTarget(100, 0.01, 23, 1, 0));
        try (TimeBloom f = TimeBloom.forTarget(100, 0.01, 24, 1, 0)) {
            assertEquals(24, f.info().l());
        }
        // the memory-minimal pair (12, 87) needs a longer span
        expectStatus(Status.INVALID_ARGUMENT, "span",
                () -> TimeBloom.forTarget(100, 0.01, 86, 1, TimeBloom.MIN_MEMORY)); // l = 87
        expectStatus(Status.INVALID_ARGUMENT, "span", () -> TimeBloom.forTarget(100, 0.01, -1000, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> TimeBloom.forTarget(0, 0.01, 1000, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "initial_capacity", () -> TimeBloom.forTarget(-5, 0.01, 1000, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> TimeBloom.forTarget(100, 0.01, 1000, -1, 0));
        expectStatus(Status.TOO_LARGE, () -> TimeBloom.forTarget(Long.MAX_VALUE, 0.01, 1000, 1, 0));
    }

    /* Timestamps are unsigned in C: negative Java longs are rejected before the
     * call, zero by the library; nothing changes. */
    @Test
    public void outOfRangeTimestamps() {
        try (TimeBloom f = new TimeBloom(3, 4, 200, 100, 1, 0)) {
            f.add("k", 5);
            byte[] before = f.serialize();
            for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                String part = bad < 0 ? "now" : "";
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.add("k2", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.add(utf8("k2"), bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.contains("k", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.addIfAbsent("k2", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.stats(bad));
            }
            expectStatus(Status.INVALID_ARGUMENT, () -> f.sliceBits(7)); // 7 slices: 0..6
            expectStatus(Status.INVALID_ARGUMENT, () -> f.sliceBits(-1));
            assertArrayEquals(before, f.serialize());
            assertTrue(f.contains("k", 5));
            assertEquals(1, f.stats(5).inserts());
        }
    }

    @Test
    public void nullArguments() {
        try (TimeBloom f = new TimeBloom(3, 4, 200, 100, 1, 0)) {
            expectStatus(Status.NULL, "key", () -> f.add((byte[]) null, 5));
            expectStatus(Status.NULL, "key", () -> f.add((String) null, 5));
            expectStatus(Status.NULL, "key", () -> f.contains((byte[]) null, 5));
            expectStatus(Status.NULL, "key", () -> f.contains((String) null, 5));
            expectStatus(Status.NULL, "key", () -> f.addIfAbsent((byte[]) null, 5));
            expectStatus(Status.NULL, "key", () -> f.addIfAbsent((String) null, 5));
            expectStatus(Status.NULL, "blob", () -> TimeBloom.deserialize(null));
            assertEquals(0, f.stats(5).inserts());
        }
    }

    /* The batches give the answers and the filter of the single calls on the
     * same keys at the same times, across shifts and retired slices. */
    @Test
    public void batchesEqualSingleCalls() {
        try (TimeBloom f = TimeBloom.forTarget(200, 0.01, 1000, 3, 0);
                TimeBloom g = TimeBloom.forTarget(200, 0.01, 1000, 3, 0)) {
            String[] probe = new String[400];
            for (int i = 0; i < probe.length; i++) {
                probe[i] = i % 2 == 0 ? "t-" + i : "absent-" + i;
            }
            for (long now = 1; now < 5000; now += 97) {
                String[] keys = new String[150];
                for (int i = 0; i < keys.length; i++) {
                    keys[i] = "t-" + ((now + 7 * i) % 400); // repeats within and across batches
                }
                boolean[] batch = f.addIfAbsentBatch(keys, now);
                for (int i = 0; i < keys.length; i++) {
                    assertEquals(keys[i] + " at " + now, g.addIfAbsent(keys[i], now), batch[i]);
                }
                f.addBatch(KeyBatch.of(keys), now + 1);
                for (String k : keys) {
                    g.add(k, now + 1);
                }
                boolean[] present = f.containsBatch(probe, now + 2);
                for (int i = 0; i < probe.length; i++) {
                    assertEquals(probe[i] + " at " + now, g.contains(probe[i], now + 2), present[i]);
                }
                assertTrue(f.containsBatch(keys, now + 2)[0]);
                assertArrayEquals(g.serialize(), f.serialize());
            }
            byte[][] binary = {{0}, {0, 0}, {}};
            f.addBatch(binary, 6000);
            assertArrayEquals(new boolean[] {true, true, true}, f.containsBatch(KeyBatch.of(binary), 6000));
            assertArrayEquals(new boolean[] {true, true, true}, f.addIfAbsentBatch(binary, 6000));
            assertEquals(0, f.containsBatch(new String[0], 6000).length);
            assertEquals(0, f.addIfAbsentBatch(new byte[0][], 6000).length);
        }
    }

    /* Bad arguments of the batches: refused before anything changes. */
    @Test
    public void badBatchArguments() {
        try (TimeBloom f = new TimeBloom(3, 4, 200, 100, 1, 0)) {
            f.add("k", 5);
            byte[] before = f.serialize();
            for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                String part = bad < 0 ? "now" : "";
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.addBatch(new String[] {"k2"}, bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.containsBatch(new String[] {"k"}, bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.addIfAbsentBatch(new String[] {"k2"}, bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.addBatch(new String[0], bad));
            }
            expectStatus(Status.NULL, "keys", () -> f.addBatch((KeyBatch) null, 5));
            expectStatus(Status.NULL, "keys", () -> f.containsBatch((String[]) null, 5));
            expectStatus(Status.NULL, "keys", () -> f.addIfAbsentBatch((byte[][]) null, 5));
            expectStatus(Status.NULL, "keys[1]", () -> f.addBatch(new String[] {"a", null}, 5));
            expectStatus(Status.NULL, "keys[1]", () -> f.addIfAbsentBatch(new byte[][] {{1}, null}, 5));
            assertArrayEquals(before, f.serialize());
            assertEquals(1, f.stats(5).inserts());
        }
    }

    @Test
    public void everyCallOnAClosedFilterFailsCleanly() {
        TimeBloom f = new TimeBloom(3, 4, 200, 100, 1, 0);
        f.add("k", 5);
        f.close();
        assertTrue(f.isClosed());
        assertEquals("TimeBloom(closed)", f.toString());
        ThrowingRunnable[] calls = {
            () -> f.add("k", 5), () -> f.add(utf8("k"), 5), () -> f.contains("k", 5), () -> f.contains(utf8("k"), 5),
            () -> f.addIfAbsent("k", 5), () -> f.addIfAbsent(utf8("k"), 5), () -> f.clear(), () -> f.stats(5),
            () -> f.sliceBits(0), () -> f.info(), () -> f.memory(), () -> f.serialize(),
            () -> f.addBatch(new String[] {"k"}, 5), () -> f.containsBatch(new String[] {"k"}, 5),
            () -> f.addIfAbsentBatch(KeyBatch.of("k"), 5), () -> f.containsBatch((KeyBatch) null, 0),
        };
        for (ThrowingRunnable call : calls) {
            expectClosed("TimeBloom", call);
        }
        f.close(); // idempotent
    }

    @Test
    public void hostileBlobs() {
        byte[] blob;
        try (TimeBloom f = new TimeBloom(3, 4, 200, 100, 9, 0)) {
            f.add("k", 5);
            blob = f.serialize();
        }
        try (TimeBloom f = TestSupport.checkHostileBlobs(blob, TimeBloom::deserialize, 6)) {
            assertTrue(f.contains("k", 5));
        }
        assertTrue(TestSupport.checkMaxMemory(blob, TimeBloom::deserialize) >= 7 * 200 / 8);
    }

    @Test
    public void theNativeLayerChecksItsBuffer() {
        TimeBloomNative h = new TimeBloomNative(3, 4, 200, 100, 1, 0);
        try {
            TestSupport.checkSerializeInto(h);
        } finally {
            h.delete();
        }
    }

    /* A failure is raised once: the next successful call does not see it. */
    @Test
    public void errorsDoNotLeakIntoLaterCalls() {
        try (TimeBloom f = new TimeBloom(3, 4, 200, 100, 1, 0)) {
            expectStatus(Status.INVALID_ARGUMENT, () -> f.add("k", 0));
            f.add("k", 3);
            assertTrue(f.contains("k", 3));
            expectStatus(Status.INVALID_ARGUMENT, () -> f.contains("k", -3));
            assertTrue(f.contains("k", 3));
        }
    }

    @Test
    public void unclosedFiltersAreCleanedUp() throws InterruptedException {
        try (TimeBloom live = new TimeBloom(3, 4, 200, 100, 1, 0)) {
            live.add("live", 5);
            TestSupport.dropUnclosed(i -> {
                TimeBloom dropped = new TimeBloom(4, 8, 1 << 12, 1000, i, 0);
                dropped.add("k", 1 + i);
                return dropped;
            });
            assertTrue(live.contains("live", 5));
        }
    }
}
