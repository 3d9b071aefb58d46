package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/* AgeBloom, the count-window filter: its guarantees, sizing helpers, every
 * error path and the blob round trip (the golden blob is in GoldenTest). */
public class AgeBloomTest {
    private static final double LN2 = Math.log(2.0);

    @Test
    public void aKeyAddedIsContained() {
        try (AgeBloom f = new AgeBloom(3, 4, 200, 42)) {
            assertFalse(f.contains("alpha"));
            f.add("alpha");
            assertTrue(f.contains("alpha"));
            assertTrue(f.contains(utf8("alpha")));
            f.add(new byte[] {0, 1, 0});
            assertTrue(f.contains(new byte[] {0, 1, 0}));
            assertEquals(2, f.stats().inserts());
        }
    }

    @Test
    public void shapeFollowsTheConstructor() {
        try (AgeBloom f = new AgeBloom(3, 4, 200, 42)) {
            assertEquals(3, f.k());
            assertEquals(4, f.l());
            assertEquals(200, f.sliceBits());
            long g = (long) Math.floor(200 * LN2 / 3); // 46
            assertEquals(g, f.generation());
            assertEquals(4 * g, f.capacity()); // capacity = l * g
            assertEquals(42, f.seed());
            AgeBloom.Stats s = f.stats();
            assertEquals(7, s.slices());
            assertEquals(7 * 200, s.bits());
            assertEquals(7 * 200.0 / (4 * g), s.bitsPerElement(), 1e-12);
            assertEquals(0, s.inserts());
            assertEquals(0.0, s.fprNow(), 0.0);
            assertTrue(f.memory() >= 7 * 200 / 8);
            assertEquals("AgeBloom(k=3, l=4, sliceBits=200, capacity=184, seed=42)", f.toString());
        }
        try (AgeBloom f = new AgeBloom(1, 1, 64, 0xFFFF_FFFFL)) { // the smallest shape, the largest seed
            assertEquals(0xFFFF_FFFFL, f.seed());
            assertEquals(44, f.generation()); // floor(64 ln 2)
        }
    }

    /* The window guarantee against an exact record of the inserts: every key
     * among the last l * g inserts is contained, at every step of a stream. */
    @Test
    public void everyKeyOfTheWindowIsContained() {
        try (AgeBloom f = new AgeBloom(6, 10, 256, 7)) {
            long window = f.capacity();
            assertEquals(10 * 29, window); // g = floor(256 ln 2 / 6)
            double rate = AgeBloom.falsePositiveRate(6, 10); // about 0.07
            assertEquals(f.l() * f.generation(), window);
            int n = 2000;
            int absentHits = 0;
            int absentAsked = 0;
            for (int i = 0; i < n; i++) {
                f.add("stream-" + i);
                // the key added window - 1 inserts before this one: the oldest of the window
                if (i + 1 >= window) {
                    assertTrue("oldest of the window, at " + i, f.contains("stream-" + (i + 1 - window)));
                }
                if (i % 50 == 0) {
                    for (long j = Math.max(0, i + 1 - window); j <= i; j++) {
                        assertTrue("stream-" + j + " at insert " + i, f.contains("stream-" + j));
                    }
                }
                if (f.contains("never-" + i)) {
                    absentHits++;
                }
                absentAsked++;
            }
            // a filter that says "present" to everything would pass the above
            assertTrue("false positives " + absentHits + "/" + absentAsked, absentHits < 1.5 * rate * absentAsked + 20);
            assertEquals(n, f.stats().inserts());
            // long gone keys are mostly forgotten
            int old = 0;
            for (int j = 0; j < 500; j++) {
                old += f.contains("stream-" + j) ? 1 : 0;
            }
            assertTrue("old keys still present: " + old, old < 1.5 * rate * 500 + 20);
        }
    }

    @Test
    public void forTargetMeetsItsCapacityAndRate() {
        try (AgeBloom f = AgeBloom.forTarget(0.01, 1000, 5)) {
            assertEquals(12, f.k());
            assertEquals(87, f.l());
            assertEquals(5, f.seed());
            assertTrue(f.capacity() >= 1000);
            assertEquals(f.l() * f.generation(), f.capacity());
            for (int i = 0; i < 3000; i++) {
                f.add("k" + i);
            }
            for (int i = 3000 - 1000; i < 3000; i++) {
                assertTrue("k" + i, f.contains("k" + i));
            }
            int fp = 0;
            for (int i = 0; i < 4000; i++) {
                fp += f.contains("absent-" + i) ? 1 : 0;
            }
            assertTrue("false positives " + fp + " of 4000", fp <= 4000 * 0.01 * 3);
            double fpr = f.stats().fprNow();
            assertTrue("fprNow " + fpr, fpr > 0 && fpr <= 0.0101);
        }
    }

    @Test
    public void addIfAbsentReturnsWhetherTheKeyWasPresent() {
        try (AgeBloom f = new AgeBloom(4, 8, 1024, 3)) {
            assertFalse(f.addIfAbsent("click-1"));
            assertTrue(f.addIfAbsent("click-1"));
            assertTrue(f.addIfAbsent(utf8("click-1")));
            assertTrue(f.contains("click-1"));
            assertEquals("a present key is not inserted again", 1, f.stats().inserts());
            assertFalse(f.addIfAbsent(new byte[] {0}));
            assertTrue(f.addIfAbsent(new byte[] {0}));
            assertEquals(2, f.stats().inserts());
        }
    }

    @Test
    public void stringKeysAreTheirUtf8BytesAndBinaryKeysAreDistinct() {
        try (AgeBloom f = new AgeBloom(4, 8, 1 << 14, 3)) {
            String key = "h\u00e9llo \u4e16\u754c \ud83d\ude00";
            f.add(key);
            assertTrue(f.contains(utf8(key)));
            f.add("a\u0000b");
            assertTrue(f.contains(new byte[] {'a', 0, 'b'}));
            byte[][] keys = {{}, {0}, {0, 0}, {0, 'a'}, {'a', 0}, {(byte) 0xff, 0, (byte) 0x80}};
            for (byte[] k : keys) {
                f.add(k);
            }
            for (byte[] k : keys) {
                assertTrue(Arrays.toString(k), f.contains(k));
            }
            assertTrue(f.contains(""));
            int fp = 0;
            for (byte[] k : new byte[][] {{0, 0, 0}, {0, 'b'}, {'b', 0}, {1}, {0, 0, 0, 0}}) {
                fp += f.contains(k) ? 1 : 0;
            }
            assertTrue(fp <= 1);
        }
    }

    @Test
    public void clearForgetsEverything() {
        try (AgeBloom f = new AgeBloom(3, 4, 256, 1)) {
            for (int i = 0; i < 100; i++) {
                f.add("k" + i);
            }
            assertTrue(f.stats().fprNow() > 0);
            f.clear();
            assertEquals(0, f.stats().inserts());
            assertEquals(0.0, f.stats().fprNow(), 0.0);
            for (int i = 0; i < 100; i++) {
                assertFalse(f.contains("k" + i));
            }
            f.add("again");
            assertTrue(f.contains("again"));
            assertEquals(1, f.stats().inserts());
        }
    }

    @Test
    public void sizingHelpers() {
        AgeBloom.Parameters p = AgeBloom.choose(0.01);
        assertEquals(new AgeBloom.Parameters(12, 87), p); // as the C library chooses
        double rate = AgeBloom.falsePositiveRate(12, 87);
        assertTrue("rate " + rate, rate > 0 && rate <= 0.01);
        assertEquals((12 + 87) * 12 / (87 * LN2), AgeBloom.bitsPerElement(12, 87), 1e-9);
        assertEquals((3 + 4) * 3 / (4 * LN2), AgeBloom.bitsPerElement(3, 4), 1e-9);
        // a stricter target: more hash functions, a lower rate, more bits
        AgeBloom.Parameters strict = AgeBloom.choose(0.0001);
        assertTrue(strict.k() > p.k());
        assertTrue(AgeBloom.falsePositiveRate(strict.k(), strict.l()) <= 0.0001);
        assertTrue(AgeBloom.bitsPerElement(strict.k(), strict.l()) > AgeBloom.bitsPerElement(12, 87));
        assertTrue(AgeBloom.falsePositiveRate(1, 1) > AgeBloom.falsePositiveRate(12, 87));
    }

    @Test
    public void serializeRoundTrip() {
        try (AgeBloom f = new AgeBloom(5, 6, 640, 123)) {
            for (int i = 0; i < 700; i++) {
                f.add("key-" + i);
            }
            f.add(new byte[] {0, 1, 0});
            byte[] blob = f.serialize();
            assertEquals('T', blob[0]);
            assertEquals('F', blob[1]);
            assertEquals('L', blob[2]);
            assertEquals('T', blob[3]);
            try (AgeBloom g = AgeBloom.deserialize(blob)) {
                assertEquals(f.k(), g.k());
                assertEquals(f.l(), g.l());
                assertEquals(f.sliceBits(), g.sliceBits());
                assertEquals(f.generation(), g.generation());
                assertEquals(f.capacity(), g.capacity());
                assertEquals(f.seed(), g.seed());
                assertEquals(f.stats(), g.stats());
                for (int i = 0; i < 800; i++) {
                    assertEquals("key-" + i, f.contains("key-" + i), g.contains("key-" + i));
                }
                assertTrue(g.contains(new byte[] {0, 1, 0}));
                assertArrayEquals(blob, g.serialize());
                // the copy is independent and goes on the same way
                f.add("next");
                g.add("next");
                assertArrayEquals(f.serialize(), g.serialize());
                g.add("only-in-g");
                assertFalse(Arrays.equals(f.serialize(), g.serialize()));
            }
        }
    }

    /* ---- errors ---------------------------------------------------------- */

    @Test
    public void badConstructorArguments() {
        // ranges documented in age_bloom.h
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> new AgeBloom(0, 4, 200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> new AgeBloom(65, 4, 200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> new AgeBloom(3, 0, 200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> new AgeBloom(3, 1025, 200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> new AgeBloom(3, 4, 63, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> new AgeBloom(3, 4, 0, 1));
        expectStatus(Status.ERR_TOO_LARGE, () -> new AgeBloom(3, 4, (1L << 40) + 1, 1));
        expectStatus(Status.ERR_TOO_LARGE, () -> new AgeBloom(3, 4, Long.MAX_VALUE, 1));
        // Java-side ranges: rejected, never wrapped
        expectStatus(Status.ERR_INVALID_ARGUMENT, "k", () -> new AgeBloom(-3, 4, 200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "l", () -> new AgeBloom(3, -4, 200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "slice_bits", () -> new AgeBloom(3, 4, -200, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "seed", () -> new AgeBloom(3, 4, 200, -1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "seed", () -> new AgeBloom(3, 4, 200, 1L << 32));
        // the limits themselves are fine
        try (AgeBloom f = new AgeBloom(64, 1024, 64, 0)) {
            assertEquals(64, f.k());
            assertEquals(1024, f.l());
        }
    }

    @Test
    public void badSizingArguments() {
        for (double r : new double[] {0.0, 1.0, -0.5, 1.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.choose(r));
            expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.forTarget(r, 1000, 1));
        }
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.choose(1e-300));
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.forTarget(1e-300, 1000, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.forTarget(0.01, 0, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "capacity", () -> AgeBloom.forTarget(0.01, -1, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "seed", () -> AgeBloom.forTarget(0.01, 10, -1));
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.forTarget(0.01, Long.MAX_VALUE, 1));
        for (int[] kl : new int[][] {{0, 1}, {65, 1}, {1, 0}, {1, 1025}}) {
            expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.falsePositiveRate(kl[0], kl[1]));
            expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.bitsPerElement(kl[0], kl[1]));
        }
        expectStatus(Status.ERR_INVALID_ARGUMENT, "k", () -> AgeBloom.falsePositiveRate(-1, 4));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "l", () -> AgeBloom.bitsPerElement(3, -4));
    }

    @Test
    public void nullArguments() {
        try (AgeBloom f = new AgeBloom(3, 4, 200, 1)) {
            expectStatus(Status.ERR_NULL, "key", () -> f.add((byte[]) null));
            expectStatus(Status.ERR_NULL, "key", () -> f.add((String) null));
            expectStatus(Status.ERR_NULL, "key", () -> f.contains((byte[]) null));
            expectStatus(Status.ERR_NULL, "key", () -> f.contains((String) null));
            expectStatus(Status.ERR_NULL, "key", () -> f.addIfAbsent((byte[]) null));
            expectStatus(Status.ERR_NULL, "key", () -> f.addIfAbsent((String) null));
            expectStatus(Status.ERR_NULL, "blob", () -> AgeBloom.deserialize(null));
            assertEquals(0, f.stats().inserts());
        }
    }

    @Test
    public void everyCallOnAClosedFilterFailsCleanly() {
        AgeBloom kept;
        try (AgeBloom f = new AgeBloom(3, 4, 200, 1)) {
            kept = f;
            f.add("k");
            assertFalse(f.isClosed());
        }
        AgeBloom f = kept;
        assertTrue(f.isClosed());
        assertEquals("AgeBloom(closed)", f.toString());
        ThrowingRunnable[] calls = {
            () -> f.add("k"), () -> f.add(utf8("k")), () -> f.contains("k"), () -> f.contains(utf8("k")),
            () -> f.addIfAbsent("k"), () -> f.addIfAbsent(utf8("k")), () -> f.clear(), () -> f.stats(),
            () -> f.k(), () -> f.l(), () -> f.sliceBits(), () -> f.generation(), () -> f.capacity(),
            () -> f.seed(), () -> f.memory(), () -> f.serialize(),
        };
        for (ThrowingRunnable call : calls) {
            expectStatus(Status.ERR_NULL, "AgeBloom is closed", call);
        }
        f.close(); // idempotent
        assertTrue(f.isClosed());
    }

    @Test
    public void hostileBlobs() {
        byte[] blob;
        try (AgeBloom f = new AgeBloom(3, 4, 200, 9)) {
            f.add("k");
            blob = f.serialize();
        }
        for (int n : new int[] {0, 1, 4, 19, 20, 27, blob.length / 2, blob.length - 1}) {
            byte[] cut = Arrays.copyOf(blob, n);
            expectStatus(Status.ERR_TRUNCATED, () -> AgeBloom.deserialize(cut));
        }
        byte[] b = blob.clone();
        b[0] = 'X';
        expectStatus(Status.ERR_BAD_MAGIC, () -> AgeBloom.deserialize(b));
        for (int at : new int[] {20, 40, blob.length - 20, blob.length - 1}) {
            byte[] c = blob.clone();
            c[at] ^= 0x10;
            expectStatus(Status.ERR_CHECKSUM, () -> AgeBloom.deserialize(c));
        }
        // blobs of the other structures
        byte[] recency;
        try (RecencySketch s = new RecencySketch(64, 3, 9, 0)) {
            s.update("k", 5);
            recency = s.serialize();
        }
        byte[] time;
        try (TimeBloom t = new TimeBloom(3, 4, 200, 100, 9)) {
            t.add("k", 5);
            time = t.serialize();
        }
        expectStatus(Status.ERR_WRONG_KIND, () -> AgeBloom.deserialize(recency));
        expectStatus(Status.ERR_WRONG_KIND, () -> AgeBloom.deserialize(time));
        expectStatus(Status.ERR_WRONG_KIND, () -> RecencySketch.deserialize(blob));
        expectStatus(Status.ERR_WRONG_KIND, () -> TimeBloom.deserialize(blob));
        // random garbage is rejected with some blob status, never a crash
        TestSupport.Rng rng = new TestSupport.Rng(4);
        for (int i = 0; i < 200; i++) {
            byte[] g = rng.bytes(rng.below(120));
            if (i % 2 == 0 && g.length >= 4) {
                g[0] = 'T';
                g[1] = 'F';
                g[2] = 'L';
                g[3] = 'T';
            }
            TemporalFiltersException e = org.junit.Assert.assertThrows(TemporalFiltersException.class,
                    () -> AgeBloom.deserialize(g));
            assertTrue(e.getMessage(), e.status() <= Status.ERR_TRUNCATED && e.status() >= Status.ERR_CORRUPT);
        }
        try (AgeBloom f = AgeBloom.deserialize(blob)) {
            assertTrue(f.contains("k"));
        }
    }

    @Test
    public void theNativeLayerChecksItsBuffer() {
        AgeBloomNative h = new AgeBloomNative(3, 4, 200, 1);
        try {
            expectStatus(Status.ERR_NULL, "out_buf", () -> h.serialize_into(null));
            expectStatus(Status.ERR_BUFFER_TOO_SMALL, () -> h.serialize_into(new byte[10]));
            expectStatus(Status.ERR_BUFFER_TOO_SMALL, () -> h.serialize_into(new byte[(int) h.serialized_size() + 1]));
        } finally {
            h.delete();
        }
    }

    /* Filters that are never closed are freed by the Cleaner. */
    @Test
    public void unclosedFiltersAreCleanedUp() throws InterruptedException {
        try (AgeBloom live = new AgeBloom(3, 4, 200, 1)) {
            live.add("live");
            List<Long> sizes = new ArrayList<>();
            for (int round = 0; round < 20; round++) {
                for (int i = 0; i < 50; i++) {
                    AgeBloom dropped = new AgeBloom(4, 8, 1 << 12, i);
                    dropped.add("k");
                    sizes.add(dropped.memory());
                }
                System.gc();
                Thread.sleep(5);
            }
            assertTrue(live.contains("live"));
            assertEquals(1000, sizes.size());
        }
    }
}
