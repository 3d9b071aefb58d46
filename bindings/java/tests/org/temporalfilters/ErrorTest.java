package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import java.util.List;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/* Every error path: each becomes a TemporalFiltersException with its status. */
public class ErrorTest {

    @Test
    public void statusCodesAndNamesMatchTheCLibrary() {
        int[] c = { // read from the C header by the generated JNI class
            NativeStatus.TF_OK, NativeStatus.TF_ERR_NULL, NativeStatus.TF_ERR_INVALID_ARGUMENT,
            NativeStatus.TF_ERR_OUT_OF_MEMORY, NativeStatus.TF_ERR_TOO_LARGE, NativeStatus.TF_ERR_BUFFER_TOO_SMALL,
            NativeStatus.TF_ERR_TRUNCATED, NativeStatus.TF_ERR_BAD_MAGIC, NativeStatus.TF_ERR_UNSUPPORTED_VERSION,
            NativeStatus.TF_ERR_WRONG_KIND, NativeStatus.TF_ERR_CHECKSUM, NativeStatus.TF_ERR_CORRUPT,
            NativeStatus.TF_ERR_INCOMPATIBLE, NativeStatus.TF_ERR_INTERNAL, NativeStatus.TF_ERR_TIMEOUT,
            NativeStatus.TF_ERR_UNAVAILABLE,
        };
        Status[] java = Status.values();
        assertEquals(c.length, java.length);
        for (int i = 0; i < java.length; i++) {
            assertEquals(java[i].toString(), c[i], java[i].code());
            assertEquals(-i, java[i].code());
            assertEquals(java[i], Status.fromCode(c[i]));
        }
        for (int code = -20; code <= 3; code++) {
            String cName = TemporalFiltersNative.tf_status_string(code);
            if (code <= 0 && code >= -15) {
                assertEquals("code " + code, cName, Status.fromCode(code).cName());
            } else {
                assertEquals("code " + code, "TF_ERR_UNKNOWN", cName);
                int unknown = code;
                assertThrows(IllegalArgumentException.class, () -> Status.fromCode(unknown));
            }
        }
        assertEquals("TF_ERR_CHECKSUM", Status.CHECKSUM.cName());
        assertEquals("TF_OK", Status.OK.cName());
        TemporalFiltersException e = TemporalFiltersException.of(Status.CORRUPT, "bad");
        assertEquals("TF_ERR_CORRUPT: bad", e.getMessage());
        assertEquals(Status.CORRUPT, e.status());
        assertEquals(-11, e.code());
        assertEquals("bad", e.detail());
    }

    /* The one factory makes the exception of each status's family, for every
     * code, also one this version does not know. */
    @Test
    public void everyStatusHasItsFamily() {
        for (Status s : Status.values()) {
            TemporalFiltersException e = TemporalFiltersException.of(s.code(), s.cName(), "what");
            assertEquals(s.toString(), TestSupport.family(s), e.getClass());
            assertEquals(s, e.status());
            TestSupport.checkConsistent(e);
        }
        assertTrue(TemporalFiltersException.of(Status.TOO_LARGE, "x") instanceof InvalidArgumentException);
        assertTrue(TemporalFiltersException.of(Status.WRONG_KIND, "x") instanceof BadBlobException);
        assertEquals(TemporalFiltersException.class, TemporalFiltersException.of(Status.INTERNAL, "x").getClass());
        assertEquals(TemporalFiltersException.class,
                TemporalFiltersException.of(Status.BUFFER_TOO_SMALL, "x").getClass());
        assertTrue(TemporalFiltersException.of(Status.TIMEOUT, "x") instanceof UnavailableException);
        assertTrue(TemporalFiltersException.of(Status.UNAVAILABLE, "x") instanceof UnavailableException);
        // a code from a newer library: the base class, status INTERNAL, its own code and name
        TemporalFiltersException later = TemporalFiltersException.of(-16, "TF_ERR_UNKNOWN", "newer");
        assertEquals(TemporalFiltersException.class, later.getClass());
        assertEquals(Status.INTERNAL, later.status());
        assertEquals(-16, later.code());
        assertEquals("TF_ERR_UNKNOWN: newer", later.getMessage());
        // a caller catches a family without looking at statuses
        try {
            RecencySketch.deserialize(new byte[] {'T', 'F'});
            fail("a two-byte blob was read");
        } catch (BadBlobException expected) {
            assertEquals(Status.TRUNCATED, expected.status());
        }
        try (RecencySketch a = new RecencySketch(64, 2, 1, 0); RecencySketch b = new RecencySketch(64, 2, 2, 0)) {
            a.merge(b);
            fail("sketches of different seeds merged");
        } catch (IncompatibleException expected) {
            assertEquals(Status.INCOMPATIBLE, expected.status());
        }
        try {
            new RecencySketch(0, 2, 1, 0).close();
            fail("a sketch of width 0");
        } catch (InvalidArgumentException expected) {
            assertEquals(Status.INVALID_ARGUMENT, expected.status());
        }
    }

    @Test
    public void badConstructorArguments() {
        expectStatus(Status.INVALID_ARGUMENT, () -> new RecencySketch(0, 3, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new RecencySketch(10, 0, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new RecencySketch(10, 33, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new RecencySketch(10, 9, 1, RecencySketch.BLOCKED));
        expectStatus(Status.INVALID_ARGUMENT, () -> new RecencySketch(10, 3, 1, 4));
        // Java-side ranges: rejected, never wrapped
        expectStatus(Status.INVALID_ARGUMENT, "width", () -> new RecencySketch(-1, 3, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "depth", () -> new RecencySketch(10, -3, 1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> new RecencySketch(10, 3, -1, 0));
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> new RecencySketch(10, 3, 1L << 32, 0));
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> new RecencySketch(10, 3, 1, -1));
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> new RecencySketch(10, 3, 1, Integer.MIN_VALUE));
        // the largest seed is fine
        try (RecencySketch s = new RecencySketch(10, 3, 0xFFFF_FFFFL, 0)) {
            assertEquals(0xFFFF_FFFFL, s.info().seed());
        }
        expectStatus(Status.TOO_LARGE, () -> new RecencySketch(Long.MAX_VALUE, 32, 1, 0));
    }

    @Test
    public void badSizingArguments() {
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencySketch.dimensions(0, 0.01, 0));
        expectStatus(Status.INVALID_ARGUMENT, "expected_keys", () -> RecencySketch.dimensions(-5, 0.01, 0));
        for (double p : new double[] {0.0, 1.0, -0.5, 1.5, Double.NaN, Double.POSITIVE_INFINITY}) {
            expectStatus(Status.INVALID_ARGUMENT, () -> RecencySketch.dimensions(100, p, 0));
            expectStatus(Status.INVALID_ARGUMENT, () -> RecencySketch.forTarget(100, p, 1, 0));
        }
        expectStatus(Status.INVALID_ARGUMENT, () -> RecencySketch.dimensions(100, 0.01, 8));
        expectStatus(Status.INVALID_ARGUMENT, "seed", () -> RecencySketch.forTarget(100, 0.01, -2, 0));
        expectStatus(Status.TOO_LARGE, () -> RecencySketch.dimensions(Long.MAX_VALUE, 1e-9, 0));
        expectStatus(Status.TOO_LARGE, () -> RecencySketch.forTarget(Long.MAX_VALUE, 1e-9, 1, 0));
    }

    /* Timestamps are unsigned in C: negative Java longs are rejected before the
     * call, zero ("never") by the library. */
    @Test
    public void outOfRangeTimestamps() {
        try (RecencySketch s = new RecencySketch(256, 3, 1, 0)) {
            s.update("k", 5);
            expectStatus(Status.INVALID_ARGUMENT, "now", () -> s.update("k", -1));
            expectStatus(Status.INVALID_ARGUMENT, "now", () -> s.update("k", Long.MIN_VALUE));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.update("k", 0));
            expectStatus(Status.INVALID_ARGUMENT, "now", () -> s.pace("k", -1, 10));
            expectStatus(Status.INVALID_ARGUMENT, "interval", () -> s.pace("k", 10, -1));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.pace("k", 0, 10));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.pace("k", 10, 0));
            expectStatus(Status.INVALID_ARGUMENT, "ttl", () -> s.ttlInsert("k", 10, -1));
            expectStatus(Status.INVALID_ARGUMENT, "now", () -> s.ttlInsert("k", -10, 1));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.ttlInsert("k", 10, 0));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.ttlInsert("k", 0, 10));
            expectStatus(Status.INVALID_ARGUMENT, "now", () -> s.ttlMaybeLive("k", -1));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.ttlMaybeLive("k", 0));
            expectStatus(Status.INVALID_ARGUMENT, "since", () -> s.errorEstimate(-1));
            // nothing changed
            assertEquals(5, s.query("k"));
        }
    }

    @Test
    public void nullArguments() {
        try (RecencySketch s = new RecencySketch(256, 3, 1, 0)) {
            expectStatus(Status.NULL, "key", () -> s.update((byte[]) null, 5));
            expectStatus(Status.NULL, "key", () -> s.update((String) null, 5));
            expectStatus(Status.NULL, "key", () -> s.query((byte[]) null));
            expectStatus(Status.NULL, "key", () -> s.query((String) null));
            expectStatus(Status.NULL, "key", () -> s.lastSeen((String) null));
            expectStatus(Status.NULL, "key", () -> s.pace((byte[]) null, 5, 5));
            expectStatus(Status.NULL, "key", () -> s.pace((String) null, 5, 5));
            expectStatus(Status.NULL, "key", () -> s.ttlInsert((byte[]) null, 5, 5));
            expectStatus(Status.NULL, "key", () -> s.ttlMaybeLive((String) null, 5));
            expectStatus(Status.NULL, "other", () -> s.merge(null));
            expectStatus(Status.NULL, "blob", () -> RecencySketch.deserialize(null));
            expectStatus(Status.NULL, "keys", () -> s.updateBatch((byte[][]) null, new long[0]));
            expectStatus(Status.NULL, "keys", () -> s.updateBatch((KeyBatch) null, new long[0]));
            expectStatus(Status.NULL, "times", () -> s.updateBatch(new String[] {"a"}, null));
            expectStatus(Status.NULL, "keys[1]", () -> s.updateBatch(new byte[][] {{1}, null}, new long[2]));
            expectStatus(Status.NULL, "keys[0]", () -> s.queryBatch(new String[] {null}));
            expectStatus(Status.NULL, "keys", () -> s.queryBatch((String[]) null));
            expectStatus(Status.NULL, "out_times", () -> s.queryBatch(KeyBatch.of("a"), null));
        }
    }

    @Test
    public void batchesOfMismatchedLengthsChangeNothing() {
        try (RecencySketch s = new RecencySketch(256, 3, 1, 0)) {
            String[] keys = {"a", "b", "c"};
            expectStatus(Status.INVALID_ARGUMENT, "timestamp", () -> s.updateBatch(keys, new long[] {1, 2}));
            expectStatus(Status.INVALID_ARGUMENT, "timestamp", () -> s.updateBatch(keys, new long[] {1, 2, 3, 4}));
            expectStatus(Status.INVALID_ARGUMENT, "timestamp", () -> s.queryBatch(KeyBatch.of(keys), new long[2]));
            expectStatus(Status.INVALID_ARGUMENT, "timestamp", () -> s.queryBatch(KeyBatch.of(keys), new long[4]));
            // a bad time anywhere rejects the whole batch, naming its index
            expectStatus(Status.INVALID_ARGUMENT, "[2]", () -> s.updateBatch(keys, new long[] {1, 2, -3}));
            expectStatus(Status.INVALID_ARGUMENT, "2", () -> s.updateBatch(keys, new long[] {1, 2, 0}));
            long[] out = {7, 7, 7};
            expectStatus(Status.INVALID_ARGUMENT, () -> s.queryBatch(KeyBatch.of("x", "y"), out));
            assertArrayEquals("a failed query leaves the output alone", new long[] {7, 7, 7}, out);
            assertArrayEquals(new long[] {0, 0, 0}, s.queryBatch(keys));
            // the same through the native layer directly: key lengths that do not
            // match the key bytes
            RecencySketchNative h = new RecencySketchNative(64, 2, 1, 0);
            try {
                expectStatus(Status.INVALID_ARGUMENT, "lengths",
                        () -> h.update_batch(new byte[] {1, 2, 3}, new int[] {1, 1}, new long[] {1, 1}));
                expectStatus(Status.INVALID_ARGUMENT, "lengths",
                        () -> h.update_batch(new byte[] {1, 2, 3}, new int[] {2, 2}, new long[] {1, 1}));
                expectStatus(Status.INVALID_ARGUMENT, "lengths",
                        () -> h.query_batch(new byte[] {1, 2, 3}, new int[] {-1, 4}, new long[2]));
                expectStatus(Status.NULL, "next_allowed", () -> h.pace(new byte[] {1}, 5, 5, null));
                expectStatus(Status.INVALID_ARGUMENT, "next_allowed", () -> h.pace(new byte[] {1}, 5, 5, new long[0]));
                TestSupport.checkSerializeInto(h);
            } finally {
                h.delete();
            }
        }
    }

    @Test
    public void everyCallOnAClosedSketchFailsCleanly() {
        RecencySketch s = new RecencySketch(256, 3, 1, 0);
        RecencySketch open = new RecencySketch(256, 3, 1, 0);
        s.update("k", 5);
        s.close();
        ThrowingRunnable[] calls = {
            () -> s.update("k", 5), () -> s.update(utf8("k"), 5), () -> s.query("k"), () -> s.query(utf8("k")),
            () -> s.lastSeen("k"), () -> s.pace("k", 5, 5), () -> s.ttlInsert("k", 5, 5),
            () -> s.ttlMaybeLive("k", 5), () -> s.merge(open), () -> open.merge(s), () -> s.clear(),
            () -> s.errorEstimate(0), () -> s.memory(), () -> s.info(), () -> s.serialize(),
            () -> s.updateBatch(new String[] {"k"}, new long[] {5}),
            () -> s.queryBatch(new String[] {"k"}), () -> s.cLoopNs(new byte[16], 16, 1, 1),
        };
        for (ThrowingRunnable call : calls) {
            expectClosed("RecencySketch", call);
        }
        s.close(); // idempotent
        open.close();
    }

    @Test
    public void incompatibleMergeLeavesTheTargetUnchanged() {
        try (RecencySketch a = new RecencySketch(256, 3, 1, 0)) {
            a.update("k", 5);
            byte[] before = a.serialize();
            long[][] shapes = {{256, 3, 2, 0}, {255, 3, 1, 0}, {256, 4, 1, 0}, {256, 3, 1, RecencySketch.BLOCKED}};
            for (long[] sh : shapes) {
                try (RecencySketch b = new RecencySketch(sh[0], (int) sh[1], sh[2], (int) sh[3])) {
                    b.update("k", 50);
                    expectStatus(Status.INCOMPATIBLE, () -> a.merge(b));
                }
            }
            assertArrayEquals(before, a.serialize());
        }
    }

    @Test
    public void hostileBlobs() {
        byte[] blob;
        try (RecencySketch s = new RecencySketch(64, 3, 9, 0)) {
            s.update("k", 5);
            blob = s.serialize();
        }
        try (RecencySketch t = TestSupport.checkHostileBlobs(blob, RecencySketch::deserialize, 3)) {
            assertEquals(5, t.query("k")); // the untouched blob is fine
        }
        // 64 x 3 cells of 8 bytes and the header
        long need = TestSupport.checkMaxMemory(blob, RecencySketch::deserialize);
        assertTrue("memory " + need, need >= 64 * 3 * 8);
    }

    /* Every structure's deserialize reads its own kind and refuses the blob
     * of every other kind (and of the other layout's or mode's, never). */
    @Test
    public void everyDeserializeRefusesTheOtherKinds() {
        byte[][] blobs = new byte[6][];
        try (RecencySketch s = new RecencySketch(64, 3, 9, 0); AgeBloom a = new AgeBloom(3, 4, 200, 9, 0);
                TimeBloom t = new TimeBloom(3, 4, 200, 100, 9, 0); RateLimiter r = new RateLimiter(4, 1000, 100, 0, 0);
                RotatingCuckoo c = RotatingCuckoo.builder().tableSlots(64).seed(9).build();
                RecencyWindow w = RecencyWindow.builder().window(64).seed(9).build()) {
            s.update("k", 5);
            a.add("k");
            t.add("k", 5);
            r.acquire("k", 5);
            c.add("k", 5);
            w.insert("k");
            blobs[0] = s.serialize();
            blobs[1] = a.serialize();
            blobs[2] = t.serialize();
            blobs[3] = r.serialize();
            blobs[4] = c.serialize();
            blobs[5] = w.serialize();
        }
        List<TestSupport.Reader<?>> readers = List.of(RecencySketch::deserialize, AgeBloom::deserialize,
                TimeBloom::deserialize, RateLimiter::deserialize, RotatingCuckoo::deserialize,
                RecencyWindow::deserialize);
        for (int kind = 0; kind < blobs.length; kind++) {
            assertEquals("kind", kind + 1, blobs[kind][6]);
            for (int reader = 0; reader < readers.size(); reader++) {
                TestSupport.Reader<?> read = readers.get(reader);
                byte[] blob = blobs[kind];
                if (reader == kind) {
                    read.read(blob).close();
                } else {
                    expectStatus(Status.WRONG_KIND, "kind", () -> read.read(blob));
                }
            }
        }
    }

    /* A failure is raised once: the next successful call does not see it. */
    @Test
    public void errorsDoNotLeakIntoLaterCalls() {
        try (RecencySketch s = new RecencySketch(256, 3, 1, 0)) {
            expectStatus(Status.INVALID_ARGUMENT, () -> s.update("k", 0));
            s.update("k", 3);
            assertEquals(3, s.query("k"));
            expectStatus(Status.INVALID_ARGUMENT, () -> s.update("k", -3));
            assertEquals(3, s.query("k"));
        }
    }
}
