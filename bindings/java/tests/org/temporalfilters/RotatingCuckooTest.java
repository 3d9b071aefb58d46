package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import java.util.HashSet;
import java.util.Set;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/* RotatingCuckoo, the de-duplication filter: its promise against an exact
 * set, the options, every error path and the blob round trip (the golden
 * blobs are in GoldenTest). */
public class RotatingCuckooTest {

    /* Against an exact set over a stream with repeats, the tables rotating
     * by fill many times within the memory cap: a key never added is never
     * reported present, and while no table was dropped every key added is. */
    @Test
    public void noFalsePositivesAgainstAnExactSet() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(256).seed(5).build()) {
            Set<String> exact = new HashSet<>();
            TestSupport.Rng rng = new TestSupport.Rng(11);
            long now = 1;
            for (int i = 0; i < 20_000; i++) {
                String key = "k-" + rng.below(12_000);
                now += rng.below(2);
                boolean was = f.addIfAbsent(key, now);
                assertEquals(key, exact.contains(key), was);
                exact.add(key);
                assertFalse("never added", f.contains("absent-" + i, now));
            }
            RotatingCuckoo.Stats s = f.stats(now);
            assertEquals(0, s.forgottenMemory());
            assertEquals(0, s.forgottenAge());
            assertEquals(exact.size(), s.inserts());
            assertTrue("rotated " + s.tables(), s.tables() > 1);
            assertEquals(s.tables(), s.fillRotations() + s.kickRotations() + 1);
            for (String k : exact) {
                assertTrue(k, f.contains(k, now));
            }
        }
    }

    @Test
    public void addIfAbsentDeDuplicates() {
        try (RotatingCuckoo f = new RotatingCuckoo()) {
            assertFalse(f.addIfAbsent("event-1", 10));
            assertTrue(f.addIfAbsent("event-1", 20));
            assertTrue(f.addIfAbsent(utf8("event-1"), 30));
            assertFalse(f.addIfAbsent(new byte[] {0, 1, 0}, 30));
            assertTrue(f.addIfAbsent(new byte[] {0, 1, 0}, 31));
            assertFalse(f.addIfAbsent(new byte[0], 31)); // the empty key is a key
            assertTrue(f.addIfAbsent(new byte[0], 32));
            assertEquals("a duplicate stores nothing", 3, f.stats(32).inserts());
            assertEquals(3, f.stats(32).items());
        }
    }

    @Test
    public void removeThenReAdd() {
        try (RotatingCuckoo f = new RotatingCuckoo()) {
            assertFalse("never added: a no-op that says so", f.remove("k", 5));
            f.add("k", 5);
            assertTrue(f.contains("k", 5));
            assertTrue(f.remove("k", 6));
            assertFalse(f.contains("k", 6));
            assertFalse(f.remove(utf8("k"), 6));
            assertFalse(f.addIfAbsent("k", 7));
            assertTrue(f.contains("k", 7));
            RotatingCuckoo.Stats s = f.stats(7);
            assertEquals(2, s.inserts());
            assertEquals(1, s.removes());
            assertEquals(1, s.items());
        }
    }

    @Test
    public void batchesEqualSingleCalls() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(64).seed(3).build();
                RotatingCuckoo g = RotatingCuckoo.builder().tableSlots(64).seed(3).build()) {
            String[] keys = new String[300];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = "b-" + (i % 200); // repeats within the batch
            }
            boolean[] batch = f.addIfAbsentBatch(keys, 100);
            for (int i = 0; i < keys.length; i++) {
                assertEquals(keys[i], g.addIfAbsent(keys[i], 100), batch[i]);
                assertEquals(keys[i], i >= 200, batch[i]);
            }
            assertArrayEquals(g.serialize(), f.serialize());
            String[] probe = {"b-0", "nope", "b-199", "b-200"};
            assertArrayEquals(new boolean[] {true, false, true, false}, f.containsBatch(probe, 100));
            byte[][] binary = {{0}, {0, 0}, {}};
            assertArrayEquals(new boolean[] {false, false, false}, f.addIfAbsentBatch(KeyBatch.of(binary), 101));
            assertArrayEquals(new boolean[] {true, true, true}, f.containsBatch(binary, 101));
            assertEquals(0, f.containsBatch(new String[0], 101).length);
            assertEquals(0, f.addIfAbsentBatch(new byte[0][], 101).length);
        }
    }

    @Test
    public void optionsAndInfo() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(1024).maxMemory(1 << 20).ttl(500)
                .maxOccupancy(0.5).slotsPerBucket(8).maxKicks(100).maxTables(7).seed(0xFFFF_FFFFL)
                .flags(RotatingCuckoo.THREE_WAY).build()) {
            assertEquals(new RotatingCuckoo.Info(1024, 1 << 20, 500, 0.5, 8, 100, 7, 0xFFFF_FFFFL,
                    RotatingCuckoo.THREE_WAY, 3), f.info());
            RotatingCuckoo.Stats s = f.stats(1);
            assertEquals(1, s.tables());
            assertEquals(1, s.liveTables());
            assertEquals(1024, s.slots());
            assertEquals(0, s.items());
            assertEquals(f.memory(), s.memory());
            assertTrue(f.memory() <= 1 << 20);
            RotatingCuckoo.Table t = f.table(0, 1);
            assertEquals(new RotatingCuckoo.Table(1024, 0, 0.0, 0, t.serial(), false), t);
            assertTrue(f.toString().startsWith("RotatingCuckoo(tableSlots=1024, slotsPerBucket=8, ways=3"));
        }
        // the one-slot layout of the seed
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(16).slotsPerBucket(1).build()) {
            assertEquals(0.45, f.info().maxOccupancy(), 0.0);
            for (int i = 0; i < 100; i++) {
                f.add("k" + i, 1 + i);
            }
            for (int i = 0; i < 100; i++) {
                assertTrue(f.contains("k" + i, 100));
            }
        }
    }

    /* A key added at t is present until at least t + ttl, then its table goes
     * (counted), and a clock going backwards is clamped. */
    @Test
    public void timeToLive() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(64).ttl(100).build()) {
            f.add("old", 1000);
            assertTrue(f.contains("old", 1100));
            f.add("x", 900); // backwards: clamped to 1000
            assertTrue(f.contains("x", 1100));
            assertFalse(f.contains("old", 1101)); // its table's newest entry is older than the ttl
            assertFalse(f.contains("x", 1101));
            f.add("new", 1200);
            RotatingCuckoo.Stats s = f.stats(1200);
            assertEquals(2, s.forgottenAge());
            assertEquals(0, s.forgottenMemory());
            assertTrue(f.contains("new", 1300));
            assertFalse(f.contains("old", 1300));
        }
    }

    /* The memory cap drops the oldest table and counts its keys. */
    @Test
    public void memoryCapForgetsTheOldestCounted() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(64).maxTables(2).build()) {
            for (int i = 0; i < 1000; i++) {
                assertFalse(f.addIfAbsent("m-" + i, 1 + i));
            }
            RotatingCuckoo.Stats s = f.stats(1000);
            assertEquals(2, s.tables());
            assertTrue(s.forgottenMemory() > 0);
            assertEquals(1000, s.inserts());
            assertEquals(1000 - s.forgottenMemory(), s.items());
            assertTrue(f.contains("m-999", 1000));
            f.clear();
            assertEquals(1, f.stats(1000).tables());
            assertEquals(0, f.stats(1000).inserts());
            assertFalse(f.contains("m-999", 1000));
        }
    }

    @Test
    public void serializeRoundTrip() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(32).ttl(5000).seed(123).build()) {
            for (int i = 0; i < 500; i++) {
                f.addIfAbsent("key-" + i, 1 + i);
            }
            f.add(new byte[] {0, 1, 0}, 500);
            byte[] blob = f.serialize();
            TestSupport.assertEnvelope(blob, 5, 0);
            try (RotatingCuckoo g = RotatingCuckoo.deserialize(blob)) {
                assertEquals(f.info(), g.info());
                assertEquals(f.stats(500), g.stats(500));
                for (long i = 0; i < f.stats(500).tables(); i++) {
                    assertEquals(f.table(i, 500), g.table(i, 500));
                }
                for (int i = 0; i < 600; i++) {
                    assertEquals("key-" + i, f.contains("key-" + i, 500), g.contains("key-" + i, 500));
                }
                assertTrue(g.contains(new byte[] {0, 1, 0}, 500));
                assertArrayEquals(blob, g.serialize());
                f.add("next", 600);
                g.add("next", 600);
                assertArrayEquals(f.serialize(), g.serialize());
            }
        }
    }

    /* ---- errors ---------------------------------------------------------- */

    @Test
    public void badOptions() {
        expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().tableSlots(0).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().tableSlots(1000).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().tableSlots(4).build()); // < 2 x 4
        expectStatus(Status.TOO_LARGE, () -> RotatingCuckoo.builder().tableSlots(1L << 37).build());
        expectStatus(Status.TOO_LARGE, () -> RotatingCuckoo.builder().tableSlots(1 << 20).maxMemory(1 << 20).build());
        for (int spb : new int[] {0, 3, 16}) {
            expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().slotsPerBucket(spb).build());
        }
        for (double occ : new double[] {-0.1, 1.5, Double.NaN}) {
            expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().maxOccupancy(occ).build());
        }
        expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().maxKicks(0).build());
        expectStatus(Status.INVALID_ARGUMENT,
                () -> RotatingCuckoo.builder().maxKicks(RotatingCuckoo.MAX_KICKS + 1).build());
        expectStatus(Status.INVALID_ARGUMENT, () -> RotatingCuckoo.builder().maxTables(0).build());
        expectStatus(Status.INVALID_ARGUMENT,
                () -> RotatingCuckoo.builder().maxTables(RotatingCuckoo.MAX_TABLES + 1).build());
        for (int flags : new int[] {2, 1 << 31}) {
            expectStatus(Status.INVALID_ARGUMENT, "flags", () -> RotatingCuckoo.builder().flags(flags).build());
        }
        // Java-side ranges
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> RotatingCuckoo.builder().flags(-1).build());
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> RotatingCuckoo.builder().seed(-1).build());
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> RotatingCuckoo.builder().seed(1L << 32).build());
        expectStatus(Status.INVALID_ARGUMENT, "table_slots", () -> RotatingCuckoo.builder().tableSlots(-1).build());
        expectStatus(Status.INVALID_ARGUMENT, "ttl", () -> RotatingCuckoo.builder().ttl(-1).build());
        expectStatus(Status.INVALID_ARGUMENT, "max_kicks", () -> RotatingCuckoo.builder().maxKicks(-1).build());
    }

    /* Zero or negative times are refused (the library, or the Java range
     * check), and nothing changes. */
    @Test
    public void badTimesAndKeysChangeNothing() {
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(64).build()) {
            f.add("k", 5);
            byte[] before = f.serialize();
            for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                String part = bad < 0 ? "now" : "";
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.add("k2", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.contains("k", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.remove("k", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.addIfAbsent("k2", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.addIfAbsentBatch(new String[] {"k2"}, bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.containsBatch(new String[] {"k"}, bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.stats(bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> f.table(0, bad));
            }
            expectStatus(Status.INVALID_ARGUMENT, () -> f.table(1, 5)); // one table: 0
            expectStatus(Status.INVALID_ARGUMENT, () -> f.table(-1, 5));
            expectStatus(Status.NULL, "key", () -> f.add((byte[]) null, 5));
            expectStatus(Status.NULL, "key", () -> f.add((String) null, 5));
            expectStatus(Status.NULL, "key", () -> f.contains((byte[]) null, 5));
            expectStatus(Status.NULL, "key", () -> f.remove((String) null, 5));
            expectStatus(Status.NULL, "key", () -> f.addIfAbsent((byte[]) null, 5));
            expectStatus(Status.NULL, "keys", () -> f.addIfAbsentBatch((KeyBatch) null, 5));
            expectStatus(Status.NULL, "keys", () -> f.containsBatch((String[]) null, 5));
            expectStatus(Status.NULL, "keys[1]", () -> f.addIfAbsentBatch(new String[] {"a", null}, 5));
            expectStatus(Status.NULL, "blob", () -> RotatingCuckoo.deserialize(null));
            assertArrayEquals(before, f.serialize());
            assertTrue(f.contains("k", 5));
            assertEquals(1, f.stats(5).inserts());
        }
    }

    @Test
    public void everyCallOnAClosedFilterFailsCleanly() {
        RotatingCuckoo f = new RotatingCuckoo();
        f.add("k", 5);
        f.close();
        assertTrue(f.isClosed());
        assertEquals("RotatingCuckoo(closed)", f.toString());
        String[] keys = {"k"};
        ThrowingRunnable[] calls = {
            () -> f.add("k", 5), () -> f.add(utf8("k"), 5), () -> f.contains("k", 5), () -> f.contains(utf8("k"), 5),
            () -> f.remove("k", 5), () -> f.addIfAbsent("k", 5), () -> f.addIfAbsent(utf8("k"), 5),
            () -> f.containsBatch(keys, 5), () -> f.addIfAbsentBatch(keys, 5), () -> f.clear(), () -> f.stats(5),
            () -> f.table(0, 5), () -> f.info(), () -> f.memory(), () -> f.serialize(),
        };
        for (ThrowingRunnable call : calls) {
            expectClosed("RotatingCuckoo", call);
        }
        f.close(); // idempotent
    }

    @Test
    public void hostileBlobs() {
        byte[] blob;
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(64).seed(9).build()) {
            f.add("k", 5);
            blob = f.serialize();
        }
        try (RotatingCuckoo f = TestSupport.checkHostileBlobs(blob, RotatingCuckoo::deserialize, 13)) {
            assertTrue(f.contains("k", 5));
        }
        assertTrue(TestSupport.checkMaxMemory(blob, RotatingCuckoo::deserialize) >= 64 * 8);
    }

    @Test
    public void theNativeLayerChecksItsBuffer() {
        RotatingCuckooNative h = new RotatingCuckooNative(64, 1 << 20, 0, 0.0, 4, 500, 64, 1, 0);
        try {
            TestSupport.checkSerializeInto(h);
        } finally {
            h.delete();
        }
    }

    @Test
    public void unclosedFiltersAreCleanedUp() throws InterruptedException {
        try (RotatingCuckoo live = new RotatingCuckoo()) {
            live.add("live", 5);
            TestSupport.dropUnclosed(i -> {
                RotatingCuckoo dropped = RotatingCuckoo.builder().tableSlots(1 << 12).seed(i).build();
                dropped.add("k", 1 + i);
                return dropped;
            });
            assertTrue(live.contains("live", 5));
        }
    }
}
