package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

/* RecencyWindow: each mode's promise against an exact map of last inserts,
 * the batches against the single calls, the options, every error path and
 * the blob round trip (the golden blobs are in GoldenTest). */
public class RecencyWindowTest {
    private static final long W = 2000;
    private static final long INV_EPS = 4;

    /* Checks one answer e for a key of true recency r (-1: never inserted)
     * against the mode's promise (temporalfilters/recency_window.h). */
    private static void checkAnswer(String what, RecencyWindow.Mode mode, RecencyWindow.Info info, long r, long e) {
        long slack = info.slack();
        if (r < 0 || r >= info.window() + slack - 1) {
            assertEquals(what + " r=" + r + ": out of the window", RecencyWindow.NOT_IN_WINDOW, e);
            return;
        }
        if (r >= info.window()) {
            return; // within the slack: either answer may come
        }
        assertTrue(what + " r=" + r + " answered not in window", RecencyWindow.inWindow(e));
        assertTrue(what + " r=" + r + " e=" + e + ": never too large", e <= r);
        switch (mode) {
        case HISTORICAL:
            // r <= (1 + 1/invEps) e, in integers
            assertTrue(what + " r=" + r + " e=" + e + ": within (1 + eps)",
                    r * info.invEps() <= e * (info.invEps() + 1));
            break;
        case EXACT:
            assertEquals(what, r, e);
            break;
        case OPTIMAL_SM:
            assertTrue(what + " r=" + r + " e=" + e + ": within D - 1", r <= e + info.block() - 1);
            break;
        default:
            throw new AssertionError(mode);
        }
    }

    /* insertReport against the exact previous recency at every insert of a
     * skewed stream (a few hot keys, many cold ones: recencies from 0 to well
     * beyond W), and queries of a sample of keys at checkpoints. */
    private static void checkAgainstExactMap(RecencyWindow.Mode mode) {
        try (RecencyWindow w = RecencyWindow.builder().window(W).invEps(INV_EPS).mode(mode).seed(3).build()) {
            RecencyWindow.Info info = w.info();
            assertEquals(mode, info.mode());
            Map<String, Long> last = new HashMap<>();
            TestSupport.Rng rng = new TestSupport.Rng(17);
            long n = 0;
            for (int i = 0; i < 30_000; i++) {
                long pick = rng.below(100);
                String key = pick < 60 ? "hot-" + rng.below(50) : "cold-" + rng.below(6000);
                Long prev = last.get(key);
                long r = prev == null ? -1 : n - 1 - prev;
                checkAnswer(mode + " insertReport", mode, info, r, w.insertReport(key));
                last.put(key, n++);
                if (i % 5000 == 4999) {
                    for (int k = 0; k < 200; k++) {
                        String q = k % 2 == 0 ? "hot-" + k % 50 : "cold-" + rng.below(6000);
                        Long p = last.get(q);
                        checkAnswer(mode + " query", mode, info, p == null ? -1 : n - 1 - p, w.query(q));
                    }
                    assertEquals(RecencyWindow.NOT_IN_WINDOW, w.query("never-" + i));
                }
            }
            RecencyWindow.Stats s = w.stats();
            assertEquals(n, s.inserts());
            assertEquals(W, s.windowItems());
            assertEquals(info.levels(), s.levels());
            assertEquals(w.memory(), s.memory());
            assertEquals(0, s.lost());
        }
    }

    @Test
    public void historicalWithinOnePlusEps() {
        checkAgainstExactMap(RecencyWindow.Mode.HISTORICAL);
    }

    @Test
    public void exactCuckooIsExact() {
        checkAgainstExactMap(RecencyWindow.Mode.EXACT);
    }

    @Test
    public void optimalSmWithinBlock() {
        checkAgainstExactMap(RecencyWindow.Mode.OPTIMAL_SM);
    }

    @Test
    public void notInWindowIsMinusOne() {
        try (RecencyWindow w = RecencyWindow.builder().window(16).mode(RecencyWindow.Mode.EXACT).build()) {
            assertEquals(-1L, w.query("a"));
            assertFalse(RecencyWindow.inWindow(w.query("a")));
            assertEquals(-1L, w.insertReport("a"));
            assertEquals(0, w.query("a"));
            assertEquals(0, w.query(utf8("a")));
            w.insert("b");
            assertEquals(1, w.query("a"));
            assertEquals(1, w.insertReport(utf8("a")));
            assertEquals(-1L, w.insertReport(new byte[0])); // the empty key is a key: first seen
            assertEquals(0, w.query(new byte[0]));
            for (int i = 0; i < 40; i++) {
                w.insert("filler-" + i);
            }
            assertEquals(RecencyWindow.NOT_IN_WINDOW, w.query("a"));
            assertTrue(RecencyWindow.inWindow(w.query("filler-39")));
        }
    }

    /* The batches give the same answers and the same window as the single calls. */
    @Test
    public void batchesMatchSingleCalls() {
        for (RecencyWindow.Mode mode : RecencyWindow.Mode.values()) {
            try (RecencyWindow a = RecencyWindow.builder().window(500).mode(mode).seed(7).build();
                    RecencyWindow b = RecencyWindow.builder().window(500).mode(mode).seed(7).build()) {
                TestSupport.Rng rng = new TestSupport.Rng(5);
                for (int round = 0; round < 20; round++) {
                    String[] keys = new String[100];
                    for (int i = 0; i < keys.length; i++) {
                        keys[i] = "k-" + rng.below(300);
                    }
                    long[] single = new long[keys.length];
                    for (int i = 0; i < keys.length; i++) {
                        single[i] = a.insertReport(keys[i]);
                    }
                    assertArrayEquals(mode + " round " + round, single, b.insertReportBatch(keys));
                    long[] queried = new long[keys.length];
                    for (int i = 0; i < keys.length; i++) {
                        queried[i] = a.query(keys[i]);
                    }
                    assertArrayEquals(queried, b.queryBatch(KeyBatch.of(keys)));
                    a.insert(keys[0]);
                    b.insertBatch(new String[] {keys[0]});
                }
                byte[][] bin = {{0, 1}, {}, {(byte) 0xff}};
                for (byte[] k : bin) {
                    a.insert(k);
                }
                b.insertBatch(bin);
                assertArrayEquals(a.serialize(), b.serialize());
                assertEquals(0, b.queryBatch(new String[0]).length);
                b.insertBatch(new byte[0][]);
                assertArrayEquals(a.serialize(), b.serialize());
            }
        }
    }

    @Test
    public void infoStatsAndLevels() {
        try (RecencyWindow w = RecencyWindow.builder().window(4096).invEps(8).seed(11).build()) {
            RecencyWindow.Info i = w.info();
            assertEquals(4096, i.window());
            assertEquals(8, i.invEps());
            assertEquals(11, i.seed());
            assertEquals(64, i.signatureBits());
            assertTrue("levels " + i.levels(), i.levels() > 1);
            assertEquals(0, w.stats().inserts());
            assertEquals(0.0, w.stats().bitsPerWindowItem(), 0.0);
            for (int k = 0; k < 10_000; k++) {
                w.insert("k-" + k);
            }
            RecencyWindow.Stats s = w.stats();
            assertEquals(10_000, s.inserts());
            assertEquals(4096, s.windowItems());
            assertTrue(s.promotions() > 0);
            assertTrue(s.bitsPerWindowItem() > 0);
            long items = 0;
            for (long l = 0; l < s.levels(); l++) {
                RecencyWindow.Level level = w.level(l);
                assertEquals(1L << l, level.blockWidth());
                assertEquals(0, level.slots() % 8); // an even number of 4-slot buckets
                assertTrue(level.entryBits() > level.classBits());
                items += level.items();
            }
            assertEquals(s.items(), items);
            expectStatus(Status.INVALID_ARGUMENT, () -> w.level(s.levels()));
            expectStatus(Status.INVALID_ARGUMENT, () -> w.level(-1));
            w.clear();
            assertEquals(0, w.stats().inserts());
            assertEquals(RecencyWindow.NOT_IN_WINDOW, w.query("k-9999"));
            assertEquals(s.memory(), w.memory());
        }
        try (RecencyWindow e = RecencyWindow.builder().mode(RecencyWindow.Mode.OPTIMAL_SM).window(1000).invEps(10)
                        .build();
                RecencyWindow d = RecencyWindow.builder().window(1000).delta(0.01).build()) {
            assertEquals("the default block is window / invEps", 100, e.info().block());
            assertEquals(1, e.info().levels());
            assertTrue(d.info().signatureBits() < 64);
            assertEquals(0.01, d.info().delta(), 0.0);
            assertTrue(d.toString(), d.toString().startsWith("RecencyWindow(window=1000"));
        }
    }

    /* Every bad option is refused with its status, and a failing call leaves the window as it was. */
    @Test
    public void badInput() {
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().window(0).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().window(-1).build());
        expectStatus(Status.TOO_LARGE, () -> RecencyWindow.builder().window(RecencyWindow.MAX_WINDOW + 1).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().invEps(0).build());
        expectStatus(Status.INVALID_ARGUMENT,
                () -> RecencyWindow.builder().invEps(RecencyWindow.MAX_INV_EPS + 1).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().block(4).build());
        expectStatus(Status.INVALID_ARGUMENT,
                () -> RecencyWindow.builder().mode(RecencyWindow.Mode.OPTIMAL_SM).window(10).block(11).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().delta(1.0).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().delta(-0.5).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().delta(Double.NaN).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().flags(1).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().seed(1L << 32).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().seed(-1).build());
        expectStatus(Status.NULL, () -> RecencyWindow.builder().mode(null));
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.Mode.of(3));
        expectStatus(Status.TOO_LARGE, () -> RecencyWindow.builder().window(1 << 20).maxMemory(1024).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencyWindow.builder().invEps(0).memoryFor());
        long need = RecencyWindow.builder().window(1 << 16).memoryFor();
        try (RecencyWindow w = RecencyWindow.builder().window(1 << 16).maxMemory(need).build()) {
            assertEquals(need, w.memory());
        }
        try (RecencyWindow w = RecencyWindow.builder().window(100).build()) {
            w.insert("k");
            byte[] before = w.serialize();
            expectStatus(Status.NULL, () -> w.insert((byte[]) null));
            expectStatus(Status.NULL, () -> w.insert((String) null));
            expectStatus(Status.NULL, () -> w.query((byte[]) null));
            expectStatus(Status.NULL, () -> w.insertReport((byte[]) null));
            expectStatus(Status.NULL, () -> w.insertBatch((KeyBatch) null));
            expectStatus(Status.NULL, () -> w.insertReportBatch(new byte[][] {{1}, null}));
            expectStatus(Status.NULL, () -> w.queryBatch((String[]) null));
            assertArrayEquals("a failed call changes nothing", before, w.serialize());
            assertEquals(0, w.query("k"));
        }
    }

    @Test
    public void roundTripGoesOnAsTheOriginal() {
        for (RecencyWindow.Mode mode : RecencyWindow.Mode.values()) {
            try (RecencyWindow w = RecencyWindow.builder().window(300).invEps(2).mode(mode).seed(9).build()) {
                for (int i = 0; i < 1000; i++) {
                    w.insert("k-" + (i * 7919 % 400));
                }
                byte[] blob = w.serialize();
                TestSupport.assertEnvelope(blob, 6, 0);
                try (RecencyWindow c = RecencyWindow.deserialize(blob)) {
                    assertEquals(w.info(), c.info());
                    assertEquals(w.stats(), c.stats());
                    for (int i = 0; i < 1100; i++) {
                        String k = "k-" + (i * 31 % 450);
                        assertEquals(mode + " " + k, w.insertReport(k), c.insertReport(k));
                    }
                    assertArrayEquals(w.serialize(), c.serialize());
                }
                expectStatus(Status.TOO_LARGE, () -> RecencyWindow.deserialize(blob, 64));
                try (RecencyWindow t = TestSupport.checkHostileBlobs(blob, RecencyWindow::deserialize, 6)) {
                    assertEquals(w.info(), t.info());
                }
                TestSupport.checkMaxMemory(blob, RecencyWindow::deserialize);
            }
        }
    }

    @Test
    public void closeIsFinal() {
        RecencyWindow w = new RecencyWindow();
        w.insert("k");
        w.close();
        w.close();
        assertTrue(w.isClosed());
        assertEquals("RecencyWindow(closed)", w.toString());
        expectClosed("RecencyWindow", () -> w.insert("k"));
        expectClosed("RecencyWindow", () -> w.query("k"));
        expectClosed("RecencyWindow", () -> w.insertReport("k"));
        expectClosed("RecencyWindow", () -> w.insertBatch(new String[] {"k"}));
        expectClosed("RecencyWindow", () -> w.queryBatch(new String[] {"k"}));
        expectClosed("RecencyWindow", () -> w.insertReportBatch(new String[] {"k"}));
        expectClosed("RecencyWindow", w::clear);
        expectClosed("RecencyWindow", w::info);
        expectClosed("RecencyWindow", w::stats);
        expectClosed("RecencyWindow", () -> w.level(0));
        expectClosed("RecencyWindow", w::memory);
        expectClosed("RecencyWindow", w::serialize);
    }
}
