package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.utf8;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.Test;

/* Semantics of RecencySketch through the Java layer. */
public class RecencySketchTest {

    @Test
    public void gettersReportTheCreationParameters() {
        try (RecencySketch s = new RecencySketch(1000, 4, 4_000_000_000L, RecencySketch.CONCURRENT)) {
            assertEquals(1000, s.info().width());
            assertEquals(4, s.info().depth());
            assertEquals(4_000_000_000L, s.info().seed()); // above Integer.MAX_VALUE: no sign trouble
            assertEquals(RecencySketch.CONCURRENT, s.info().flags());
            assertEquals(4000, s.info().cells());
            assertTrue("memory " + s.memory(), s.memory() >= 4000 * 8 && s.memory() < 4000 * 8 + 4096);
            assertEquals("RecencySketch(width=1000, depth=4, seed=4000000000, flags=1)", s.toString());
        }
        // the blocked layout rounds the table up to whole cache lines of 8 cells
        try (RecencySketch s = new RecencySketch(10, 3, 0, RecencySketch.BLOCKED)) {
            assertEquals(32, s.info().cells());
            assertEquals(RecencySketch.BLOCKED, s.info().flags());
            assertEquals(0, s.info().seed());
        }
    }

    @Test
    public void updateAndQuery() {
        try (RecencySketch s = new RecencySketch(4096, 4, 7, 0)) {
            byte[] a = utf8("alpha");
            assertEquals(TemporalFilters.NEVER, s.query(a));
            assertEquals(OptionalLong.empty(), s.lastSeen(a));
            s.update(a, 100);
            assertEquals(100, s.query(a));
            assertEquals(OptionalLong.of(100), s.lastSeen(a));
            s.update(a, 50); // older: no effect
            assertEquals(100, s.query(a));
            s.update(a, 250);
            assertEquals(250, s.query(a));
            assertEquals(0, s.query(utf8("beta")));
            // the largest timestamp a Java long holds goes through unchanged
            s.update("max", Long.MAX_VALUE);
            assertEquals(Long.MAX_VALUE, s.query("max"));
            s.update("one", 1);
            assertEquals(1, s.query("one"));
        }
    }

    @Test
    public void stringKeysAreTheirUtf8Bytes() {
        try (RecencySketch s = new RecencySketch(4096, 4, 1, 0)) {
            String key = "h\u00e9llo \u4e16\u754c \ud83d\ude00"; // 2-, 3- and 4-byte UTF-8
            s.update(key, 10);
            assertEquals(10, s.query(utf8(key)));
            s.update(utf8(key), 20);
            assertEquals(20, s.query(key));
            assertEquals(OptionalLong.of(20), s.lastSeen(key));
            assertEquals(0, s.query("hello"));
            // a String with a NUL character is a key with a NUL byte
            s.update("a\u0000b", 30);
            assertEquals(30, s.query(new byte[] {'a', 0, 'b'}));
            assertEquals(0, s.query("a"));
        }
    }

    @Test
    public void binaryKeysWithNulBytesAreDistinct() {
        try (RecencySketch s = new RecencySketch(1 << 16, 4, 3, 0)) {
            byte[][] keys = {
                {}, {0}, {0, 0}, {0, 0, 0}, {0, 'a'}, {0, 'b'}, {'a', 0}, {(byte) 0xff, 0, (byte) 0x80},
                {0, 'b', 'i', 'n', 0, (byte) 0xff, 0x7f},
            };
            for (int i = 0; i < keys.length; i++) {
                s.update(keys[i], 1000 + i);
            }
            for (int i = 0; i < keys.length; i++) {
                assertEquals("key " + i, 1000 + i, s.query(keys[i]));
            }
            assertEquals(0, s.query(new byte[] {0, 'c'}));
            assertEquals(0, s.query(new byte[] {0, 0, 0, 0}));
            assertEquals(1000, s.query(""));
        }
    }

    /* The one-sided guarantee against an exact map, on a table small enough
     * that collisions happen: never older than the truth, sometimes newer. */
    @Test
    public void neverOlderThanTheTruth() {
        Map<String, Long> truth = new HashMap<>();
        TestSupport.Rng rng = new TestSupport.Rng(11);
        int newer = 0;
        for (int flags : new int[] {0, RecencySketch.BLOCKED, RecencySketch.CONCURRENT}) {
            truth.clear();
            try (RecencySketch s = new RecencySketch(64, 3, 5, flags)) {
                for (long t = 1; t <= 3000; t++) {
                    String k = "k" + rng.below(500);
                    long when = Math.max(1, t + rng.below(40) - 20); // out of order
                    s.update(k, when);
                    truth.merge(k, when, Math::max);
                }
                for (int i = 0; i < 600; i++) {
                    String k = "k" + i;
                    long got = s.query(k);
                    long want = truth.getOrDefault(k, 0L);
                    assertTrue(k + ": " + got + " < " + want, got >= want);
                    if (got > want) {
                        newer++;
                    }
                }
            }
        }
        assertTrue("a 64x3 table with 500 keys must show some too-new answers", newer > 0);
    }

    @Test
    public void paceGrantsOncePerInterval() {
        try (RecencySketch s = new RecencySketch(4096, 4, 9, 0)) {
            RecencySketch.PaceResult r = s.pace("client", 1000, 250);
            assertTrue(r.granted());
            assertEquals(1250, r.nextAllowed());
            r = s.pace("client", 1100, 250);
            assertFalse(r.granted());
            assertEquals(1250, r.nextAllowed());
            r = s.pace("client", 1249, 250);
            assertFalse(r.granted());
            assertEquals(1250, r.nextAllowed());
            // a denial records nothing: the grant at 1000 is still the last one
            assertEquals(1000, s.query("client"));
            r = s.pace(utf8("client"), 1250, 250);
            assertTrue(r.granted());
            assertEquals(1500, r.nextAllowed());
            assertEquals(new RecencySketch.PaceResult(true, 1001), s.pace("other", 1000, 1));
        }
    }

    /* next-allowed saturates at UINT64_MAX in C; Java gets Long.MAX_VALUE. */
    @Test
    public void paceNextAllowedClampsToLongMax() {
        try (RecencySketch s = new RecencySketch(256, 2, 9, 0)) {
            RecencySketch.PaceResult r = s.pace("k", Long.MAX_VALUE - 5, Long.MAX_VALUE);
            assertTrue(r.granted());
            assertEquals(Long.MAX_VALUE, r.nextAllowed());
            r = s.pace("k", Long.MAX_VALUE, Long.MAX_VALUE);
            assertFalse(r.granted());
            assertEquals(Long.MAX_VALUE, r.nextAllowed());
            r = s.pace("j", 10, 100);
            assertEquals(110, r.nextAllowed());
        }
    }

    @Test
    public void ttlPrefilter() {
        try (RecencySketch s = new RecencySketch(4096, 4, 9, 0)) {
            assertFalse(s.ttlMaybeLive("session", 1));
            s.ttlInsert("session", 100, 50);
            assertTrue(s.ttlMaybeLive("session", 100));
            assertTrue(s.ttlMaybeLive(utf8("session"), 149));
            assertFalse(s.ttlMaybeLive("session", 150)); // live while now < t + ttl
            assertEquals(150, s.query("session"));
            s.ttlInsert(utf8("session"), 120, 10); // an earlier expiry does not shorten it
            assertEquals(150, s.query("session"));
            assertFalse(s.ttlMaybeLive("other", 100));
            // an expiry beyond Long.MAX_VALUE (now + ttl in unsigned 64 bits) reads as Long.MAX_VALUE
            s.ttlInsert("forever", 10, Long.MAX_VALUE);
            assertEquals(Long.MAX_VALUE, s.query("forever"));
            assertTrue(s.ttlMaybeLive("forever", Long.MAX_VALUE));
        }
    }

    @Test
    public void mergeTakesTheCellWiseMaximum() {
        try (RecencySketch a = new RecencySketch(2048, 3, 77, 0);
             RecencySketch b = new RecencySketch(2048, 3, 77, RecencySketch.CONCURRENT)) {
            a.update("x", 10);
            a.update("y", 40);
            b.update("y", 20);
            b.update("z", 30);
            a.merge(b);
            assertEquals(10, a.query("x"));
            assertEquals(40, a.query("y"));
            assertEquals(30, a.query("z"));
            assertEquals(0, b.query("x")); // the source is unchanged
            byte[] before = a.serialize();
            a.merge(a); // idempotent
            assertArrayEquals(before, a.serialize());
        }
    }

    @Test
    public void clearForgetsEverything() {
        try (RecencySketch s = new RecencySketch(512, 3, 1, 0)) {
            for (int i = 0; i < 100; i++) {
                s.update("k" + i, 1 + i);
            }
            assertTrue(s.errorEstimate(0) > 0);
            s.clear();
            for (int i = 0; i < 100; i++) {
                assertEquals(0, s.query("k" + i));
            }
            assertEquals(0.0, s.errorEstimate(0), 0.0);
            try (RecencySketch fresh = new RecencySketch(512, 3, 1, 0)) {
                assertArrayEquals(fresh.serialize(), s.serialize());
            }
        }
    }

    @Test
    public void errorEstimateFollowsOccupancy() {
        try (RecencySketch s = new RecencySketch(1000, 2, 1, 0)) {
            assertEquals(0.0, s.errorEstimate(0), 0.0);
            for (int i = 0; i < 1000; i++) {
                s.update("k" + i, 100 + i);
            }
            double all = s.errorEstimate(0);
            // 1000 keys in 1000 cells per row: (1 - e^-1)^2 = 0.40, measured from the table
            assertTrue("estimate " + all, all > 0.3 && all < 0.5);
            double recent = s.errorEstimate(1000); // only keys after t = 1000 count
            assertTrue("estimate " + recent, recent > 0 && recent < all);
            assertEquals(0.0, s.errorEstimate(Long.MAX_VALUE), 0.0);
        }
    }

    @Test
    public void sizingHelperAndFactoryAgree() {
        RecencySketch.Dimensions d = RecencySketch.dimensions(100_000, 0.01, 0);
        assertTrue(d.width() > 0 && d.depth() >= 1 && d.depth() <= 32);
        // the model: (1 - e^(-n/w))^d <= p
        double p = Math.pow(1 - Math.exp(-100_000.0 / d.width()), d.depth());
        assertTrue("p " + p, p <= 0.0101);
        try (RecencySketch s = RecencySketch.forTarget(100_000, 0.01, 5, 0)) {
            assertEquals(d.width(), s.info().width());
            assertEquals(d.depth(), s.info().depth());
            assertEquals(5, s.info().seed());
        }
        RecencySketch.Dimensions blocked = RecencySketch.dimensions(100_000, 0.01, RecencySketch.BLOCKED);
        assertTrue(blocked.depth() <= 8);
        assertTrue("the blocked layout needs more cells at p = 0.01",
                blocked.width() * blocked.depth() > d.width() * d.depth());
        // CONCURRENT does not change the answer
        assertEquals(d, RecencySketch.dimensions(100_000, 0.01, RecencySketch.CONCURRENT));
        try (RecencySketch s = RecencySketch.forTarget(1000, 0.001, 42, RecencySketch.BLOCKED | RecencySketch.CONCURRENT)) {
            assertEquals(RecencySketch.BLOCKED | RecencySketch.CONCURRENT, s.info().flags());
        }
    }

    @Test
    public void serializeRoundTrip() {
        for (int flags : new int[] {0, RecencySketch.BLOCKED, RecencySketch.CONCURRENT,
                                    RecencySketch.BLOCKED | RecencySketch.CONCURRENT}) {
            try (RecencySketch s = new RecencySketch(300, 4, 123, flags)) {
                for (int i = 0; i < 200; i++) {
                    s.update("key-" + i, 10 + 3L * i);
                }
                s.update(new byte[] {0, 1, 0}, Long.MAX_VALUE);
                byte[] blob = s.serialize();
                TestSupport.assertEnvelope(blob, 1, flags);
                try (RecencySketch t = RecencySketch.deserialize(blob)) {
                    assertEquals(s.info(), t.info());
                    assertEquals(new RecencySketch.Info(300, 4, 123, flags, t.info().cells()), t.info());
                    for (int i = 0; i < 250; i++) {
                        assertEquals(s.query("key-" + i), t.query("key-" + i));
                    }
                    assertEquals(Long.MAX_VALUE, t.query(new byte[] {0, 1, 0}));
                    assertArrayEquals(blob, t.serialize());
                    // the copy is independent
                    t.update("key-0", 99999);
                    assertNotEquals(99999, s.query("key-0"));
                }
            }
        }
    }

    @Test
    public void closeIsIdempotentAndTryWithResourcesCloses() {
        RecencySketch kept;
        try (RecencySketch s = new RecencySketch(64, 2, 1, 0)) {
            kept = s;
            assertFalse(s.isClosed());
        }
        assertTrue(kept.isClosed());
        kept.close();
        assertTrue(kept.isClosed());
        assertEquals("RecencySketch(closed)", kept.toString());
        expectClosed("RecencySketch", () -> kept.query("k"));
    }

    /* Sketches that are never closed are freed by the Cleaner; dropping many
     * must neither crash nor disturb the sketches still in use. */
    @Test
    public void unclosedSketchesAreCleanedUp() throws InterruptedException {
        try (RecencySketch live = new RecencySketch(1024, 3, 1, 0)) {
            live.update("live", 5);
            TestSupport.dropUnclosed(i -> {
                RecencySketch dropped = new RecencySketch(4096, 4, i, 0);
                dropped.update("k", 1 + i);
                return dropped;
            });
            assertEquals(5, live.query("live"));
        }
    }

    @Test
    public void versionAndClock() {
        assertTrue(TemporalFilters.version(), TemporalFilters.version().matches("\\d+\\.\\d+\\.\\d+"));
        long now = TemporalFilters.clockNowMs();
        long wall = System.currentTimeMillis();
        assertTrue("clock " + now, Math.abs(now - wall) < 60_000);
    }
}
