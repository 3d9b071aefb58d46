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

    /* ---- the blocked layout ------------------------------------------------ */

    @Test
    public void blockedShapeFollowsTheFactory() {
        try (AgeBloom f = AgeBloom.blocked(3, 4, 200, 42)) {
            assertTrue(f.isBlocked());
            assertEquals(3, f.k());
            assertEquals(4, f.l());
            assertEquals(224, f.sliceBits()); // 200 rounded up to a multiple of 32
            long g = (long) Math.floor(224 * LN2 / 3); // 51
            assertEquals(g, f.generation());
            assertEquals(4 * g, f.capacity());
            assertEquals(42, f.seed());
            AgeBloom.Stats s = f.stats();
            assertEquals(7, s.slices());
            // one band of 16 lanes (k + l <= 16): 7 lines of 64 bytes, unused lanes included
            assertEquals(7 * 512, s.bits());
            assertEquals(7 * 512.0 / (4 * g), s.bitsPerElement(), 1e-12);
            assertEquals(0, s.inserts());
            assertEquals(0.0, s.fprNow(), 0.0);
            assertTrue(f.memory() >= 7 * 64);
            assertEquals("AgeBloom(blocked, k=3, l=4, sliceBits=224, capacity=204, seed=42)", f.toString());
        }
        try (AgeBloom f = new AgeBloom(3, 4, 200, 42); AgeBloom g = AgeBloom.forTarget(0.01, 100, 1)) {
            assertFalse(f.isBlocked());
            assertFalse(g.isBlocked());
        }
        // k + l = 32 takes two bands of lanes; the limits of k and l are fine
        try (AgeBloom f = AgeBloom.blocked(6, 26, 1000, 7)) {
            assertEquals(1024, f.sliceBits());
            assertEquals(32, f.stats().slices());
            assertEquals(2 * 32 * 512, f.stats().bits());
        }
        for (int[] kl : new int[][] {{1, 1}, {1, 31}, {31, 1}, {16, 16}}) {
            try (AgeBloom f = AgeBloom.blocked(kl[0], kl[1], 32, 0xFFFF_FFFFL)) {
                assertTrue(f.isBlocked());
                assertEquals(kl[0], f.k());
                assertEquals(kl[1], f.l());
                assertEquals(32, f.sliceBits());
                assertEquals(0xFFFF_FFFFL, f.seed());
                assertEquals(Math.max(1, (long) Math.floor(32 * LN2 / kl[0])), f.generation());
            }
        }
    }

    /* The window guarantee of the blocked layout, against an exact record of
     * the stream: after several windows of inserts, every key among the last
     * capacity inserts is contained, at every step. */
    @Test
    public void blockedKeepsEveryKeyOfTheWindow() {
        // sized for a target (k + l is 16 or 32), and low-level with two bands
        AgeBloom[] filters = {AgeBloom.blockedForTarget(0.01, 1000, 5), AgeBloom.blocked(6, 26, 1024, 7)};
        for (AgeBloom f : filters) {
            try (f) {
                assertTrue(f.isBlocked());
                long window = f.capacity();
                assertEquals(f.l() * f.generation(), window);
                int n = (int) (6 * window + 123); // six windows and some
                for (int i = 0; i < n; i++) {
                    f.add("stream-" + i);
                    if (i + 1 >= window) { // the oldest key of the window
                        assertTrue(f + ": oldest of the window, at " + i, f.contains("stream-" + (i + 1 - window)));
                    }
                    if (i % 500 == 0 || i == n - 1) {
                        for (long j = Math.max(0, i + 1 - window); j <= i; j++) {
                            assertTrue(f + ": stream-" + j + " at insert " + i, f.contains("stream-" + j));
                        }
                    }
                }
                assertEquals(n, f.stats().inserts());
                // a filter that says "present" to everything would pass the above
                int fp = 0;
                for (int i = 0; i < 4000; i++) {
                    fp += f.contains("absent-" + i) ? 1 : 0;
                }
                double fpr = f.stats().fprNow();
                assertTrue(f + ": fprNow " + fpr, fpr > 0 && fpr < 1);
                assertTrue(f + ": false positives " + fp + " of 4000, model " + fpr, fp <= 4000 * 2 * fpr + 20);
            }
        }
        try (AgeBloom f = AgeBloom.blockedForTarget(0.01, 1000, 5)) {
            assertTrue(f.capacity() >= 1000);
            for (int i = 0; i < 5000; i++) {
                f.add("k" + i);
            }
            // the last `capacity` inserts asked for
            for (int i = 5000 - 1000; i < 5000; i++) {
                assertTrue("k" + i, f.contains("k" + i));
            }
            int fp = 0;
            for (int i = 0; i < 4000; i++) {
                fp += f.contains("absent-" + i) ? 1 : 0;
            }
            // the model is conservative: the measured rate stays at or under the target
            assertTrue("false positives " + fp + " of 4000", fp <= 4000 * 0.01 * 2);
            double fpr = f.stats().fprNow();
            assertTrue("fprNow " + fpr, fpr > 0 && fpr <= 0.0101);
        }
    }

    @Test
    public void blockedAddIfAbsentAndClear() {
        try (AgeBloom f = AgeBloom.blocked(4, 12, 1024, 3)) {
            assertFalse(f.addIfAbsent("click-1"));
            assertTrue(f.addIfAbsent("click-1"));
            assertTrue(f.addIfAbsent(utf8("click-1")));
            assertEquals("a present key is not inserted again", 1, f.stats().inserts());
            f.add(new byte[] {0, 1, 0});
            assertTrue(f.contains(new byte[] {0, 1, 0}));
            assertFalse(f.contains(new byte[] {0, 1}));
            f.clear();
            assertTrue(f.isBlocked());
            assertEquals(0, f.stats().inserts());
            assertEquals(0.0, f.stats().fprNow(), 0.0);
            assertFalse(f.contains("click-1"));
        }
    }

    @Test
    public void chooseBlockedSizesBlockedFilters() {
        for (double rate : new double[] {0.2, 0.1, 0.01, 0.001}) {
            AgeBloom.BlockedParameters p = AgeBloom.chooseBlocked(rate);
            assertTrue(p.toString(), p.k() >= 1 && p.l() >= 1);
            assertTrue(p.toString(), p.k() + p.l() == 16 || p.k() + p.l() == 32);
            assertTrue(p.toString(), p.fill() > 0 && p.fill() < 1);
            assertEquals(p, AgeBloom.chooseBlocked(rate));
            // the factory uses the same triple
            try (AgeBloom f = AgeBloom.blockedForTarget(rate, 1000, 1)) {
                assertEquals(p.k(), f.k());
                assertEquals(p.l(), f.l());
                long g = (1000 + p.l() - 1) / p.l();
                assertEquals(g, f.generation());
                assertTrue(f.capacity() >= 1000);
                assertEquals(0, f.sliceBits() % 32);
                // k generations of g inserts leave a slice at the chosen fill
                double bits = Math.ceil(p.k() * (double) g / -Math.log1p(-p.fill()));
                assertEquals((long) Math.ceil(bits / 32) * 32, f.sliceBits());
            }
        }
        // a stricter target costs memory
        try (AgeBloom loose = AgeBloom.blockedForTarget(0.01, 10_000, 1);
                AgeBloom strict = AgeBloom.blockedForTarget(0.001, 10_000, 1)) {
            assertTrue(loose.stats() + " " + strict.stats(),
                    strict.stats().bitsPerElement() > loose.stats().bitsPerElement());
        }
    }

    @Test
    public void blockedSerializeRoundTrip() {
        try (AgeBloom f = AgeBloom.blockedForTarget(0.01, 300, 123)) {
            for (int i = 0; i < 1000; i++) {
                f.add("key-" + i);
            }
            f.add(new byte[] {0, 1, 0});
            byte[] blob = f.serialize();
            assertEquals('T', blob[0]);
            assertEquals(2, blob[6] | (blob[7] << 8)); // kind 2, as the classic layout
            assertTrue("the blocked flag", (blob[8] | blob[9] | blob[10] | blob[11]) != 0);
            try (AgeBloom g = AgeBloom.deserialize(blob)) {
                assertTrue(g.isBlocked());
                assertEquals(f.k(), g.k());
                assertEquals(f.l(), g.l());
                assertEquals(f.sliceBits(), g.sliceBits());
                assertEquals(f.generation(), g.generation());
                assertEquals(f.capacity(), g.capacity());
                assertEquals(f.seed(), g.seed());
                assertEquals(f.stats(), g.stats());
                assertEquals(f.toString(), g.toString());
                for (int i = 0; i < 1200; i++) {
                    assertEquals("key-" + i, f.contains("key-" + i), g.contains("key-" + i));
                }
                for (int i = 0; i < 2000; i++) {
                    assertEquals("absent-" + i, f.contains("absent-" + i), g.contains("absent-" + i));
                }
                assertTrue(g.contains(new byte[] {0, 1, 0}));
                assertArrayEquals(blob, g.serialize());
                // the copy is independent and goes on the same way (the generation counter travels too)
                for (int i = 0; i < 500; i++) {
                    f.add("next-" + i);
                    g.add("next-" + i);
                }
                assertArrayEquals(f.serialize(), g.serialize());
                g.add("only-in-g");
                assertFalse(Arrays.equals(f.serialize(), g.serialize()));
            }
        }
        // the classic layout's blob has no flag and reads back classic
        try (AgeBloom c = new AgeBloom(3, 4, 200, 1)) {
            byte[] blob = c.serialize();
            assertEquals(0, blob[8] | blob[9] | blob[10] | blob[11]);
            try (AgeBloom d = AgeBloom.deserialize(blob)) {
                assertFalse(d.isBlocked());
            }
        }
    }

    @Test
    public void badBlockedArguments() {
        // ranges documented in age_bloom.h: k >= 1, l >= 1, k + l <= 32, 32 <= sliceBits <= 2^40
        expectStatus(Status.ERR_INVALID_ARGUMENT, "k + l", () -> AgeBloom.blocked(30, 3, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blocked(1, 32, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blocked(3, 0, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blocked(0, 4, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blocked(64, 4, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blocked(3, 4, 31, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blocked(3, 4, 0, 1));
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.blocked(3, 4, (1L << 40) + 1, 1));
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.blocked(3, 4, Long.MAX_VALUE, 1));
        // Java-side ranges: rejected, never wrapped
        expectStatus(Status.ERR_INVALID_ARGUMENT, "k", () -> AgeBloom.blocked(-3, 4, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "l", () -> AgeBloom.blocked(3, -4, 256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "slice_bits", () -> AgeBloom.blocked(3, 4, -256, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "seed", () -> AgeBloom.blocked(3, 4, 256, -1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "seed", () -> AgeBloom.blocked(3, 4, 256, 1L << 32));
        // sizing (the blocked layout takes rates up to 0.2)
        for (double r : new double[] {0.0, 1.0, -0.5, 1.5, 0.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.chooseBlocked(r));
            expectStatus(Status.ERR_INVALID_ARGUMENT, () -> AgeBloom.blockedForTarget(r, 1000, 1));
        }
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.chooseBlocked(1e-300));
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.blockedForTarget(1e-300, 1000, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "capacity", () -> AgeBloom.blockedForTarget(0.01, 0, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "capacity", () -> AgeBloom.blockedForTarget(0.01, -1, 1));
        expectStatus(Status.ERR_INVALID_ARGUMENT, "seed", () -> AgeBloom.blockedForTarget(0.01, 10, -1));
        expectStatus(Status.ERR_TOO_LARGE, () -> AgeBloom.blockedForTarget(0.01, Long.MAX_VALUE, 1));
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
        AgeBloom b = AgeBloom.blocked(3, 4, 200, 1);
        b.close();
        assertEquals("AgeBloom(closed)", b.toString());
        expectStatus(Status.ERR_NULL, "AgeBloom is closed", () -> b.isBlocked());
        expectStatus(Status.ERR_NULL, "AgeBloom is closed", () -> b.contains("k"));
        ThrowingRunnable[] calls = {
            () -> f.add("k"), () -> f.add(utf8("k")), () -> f.contains("k"), () -> f.contains(utf8("k")),
            () -> f.addIfAbsent("k"), () -> f.addIfAbsent(utf8("k")), () -> f.clear(), () -> f.stats(),
            () -> f.k(), () -> f.l(), () -> f.sliceBits(), () -> f.generation(), () -> f.capacity(),
            () -> f.seed(), () -> f.memory(), () -> f.serialize(), () -> f.isBlocked(),
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
        AgeBloomNative h = new AgeBloomNative(3, 4, 200, 1, 0);
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
