package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.temporalfilters.TestSupport.utf8;

import java.util.Arrays;

import org.junit.Test;

/* The batch calls give exactly the results of the single-key calls. */
public class BatchTest {

    /* Keys of assorted lengths (empty, with NUL bytes, longer than the JNI
     * layer's stack buffer) and times in any order. */
    private static byte[][] keys(TestSupport.Rng rng, int n) {
        byte[][] keys = new byte[n][];
        for (int i = 0; i < n; i++) {
            int len = i % 97 == 5 ? 3000 : rng.below(24);
            keys[i] = rng.bytes(len);
            if (len > 2) {
                keys[i][1] = 0;
            }
        }
        return keys;
    }

    private static long[] times(TestSupport.Rng rng, int n) {
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            t[i] = 1 + rng.below(1_000_000);
        }
        return t;
    }

    @Test
    public void batchEqualsSingleCalls() {
        TestSupport.Rng rng = new TestSupport.Rng(21);
        // 0 keys, fewer than the shared interface's 64-key stack arrays, more
        // than that, and more than the JNI stack buffers hold
        for (int n : new int[] {0, 1, 7, 64, 65, 300, 5000}) {
            for (int flags : new int[] {0, RecencySketch.BLOCKED | RecencySketch.CONCURRENT}) {
                byte[][] keys = keys(rng, n);
                long[] times = times(rng, n);
                try (RecencySketch batch = new RecencySketch(512, 3, 8, flags);
                     RecencySketch single = new RecencySketch(512, 3, 8, flags)) {
                    batch.updateBatch(keys, times);
                    for (int i = 0; i < n; i++) {
                        single.update(keys[i], times[i]);
                    }
                    assertArrayEquals("n = " + n, single.serialize(), batch.serialize());
                    byte[][] probe = keys(rng, n);
                    System.arraycopy(keys, 0, probe, 0, n / 2); // half known, half fresh
                    long[] got = batch.queryBatch(probe);
                    assertEquals(n, got.length);
                    for (int i = 0; i < n; i++) {
                        assertEquals("n = " + n + ", key " + i, single.query(probe[i]), got[i]);
                    }
                }
            }
        }
    }

    @Test
    public void stringBatchesAreUtf8Batches() {
        String[] keys = {"a", "", "\u00e9t\u00e9", "\u4e16\u754c", "nul\u0000inside", "\ud83d\ude00"};
        long[] times = {10, 20, 30, 40, 50, 60};
        try (RecencySketch s = new RecencySketch(4096, 4, 1, 0);
             RecencySketch t = new RecencySketch(4096, 4, 1, 0)) {
            s.updateBatch(keys, times);
            byte[][] bytes = new byte[keys.length][];
            for (int i = 0; i < keys.length; i++) {
                bytes[i] = utf8(keys[i]);
            }
            t.updateBatch(KeyBatch.of(bytes), times);
            assertArrayEquals(s.serialize(), t.serialize());
            assertArrayEquals(times, s.queryBatch(keys));
            assertArrayEquals(times, s.queryBatch(bytes));
            for (int i = 0; i < keys.length; i++) {
                assertEquals(times[i], s.query(keys[i]));
            }
        }
    }

    @Test
    public void aPackedBatchIsReusable() {
        KeyBatch keys = KeyBatch.of("x", "y", "z");
        assertEquals(3, keys.size());
        try (RecencySketch s = new RecencySketch(4096, 4, 1, 0)) {
            long[] out = new long[3];
            assertArrayEquals(new long[] {0, 0, 0}, s.queryBatch(keys, out));
            s.updateBatch(keys, new long[] {5, 6, 7});
            long[] same = s.queryBatch(keys, out);
            assertEquals(out, same); // filled in place
            assertArrayEquals(new long[] {5, 6, 7}, out);
            s.updateBatch(keys, new long[] {1, 9, 1}); // older times change nothing
            assertArrayEquals(new long[] {5, 9, 7}, s.queryBatch(keys));
            // the same key twice in a batch: the later time wins only if larger
            s.updateBatch(new String[] {"w", "w"}, new long[] {30, 20});
            assertEquals(30, s.query("w"));
        }
        assertEquals(0, KeyBatch.of(new byte[0][]).size());
    }

    /* Keys already packed (end to end with their lengths, or of one length)
     * make the same batch as the same keys one by one; the arrays are copied,
     * and bad arrays are refused with their reason. */
    @Test
    public void packedKeysAreTheSameBatch() {
        TestSupport.Rng rng = new TestSupport.Rng(23);
        byte[][] keys = keys(rng, 300);
        int total = 0;
        int[] lens = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            lens[i] = keys[i].length;
            total += lens[i];
        }
        byte[] data = new byte[total];
        for (int i = 0, off = 0; i < keys.length; off += lens[i], i++) {
            System.arraycopy(keys[i], 0, data, off, lens[i]);
        }
        long[] times = times(rng, keys.length);
        KeyBatch packed = KeyBatch.ofPacked(data, lens);
        Arrays.fill(data, (byte) 0); // the batch holds its own copy
        lens[0] = 99;
        assertEquals(keys.length, packed.size());
        try (RecencySketch a = new RecencySketch(4096, 4, 1, 0);
             RecencySketch b = new RecencySketch(4096, 4, 1, 0)) {
            a.updateBatch(KeyBatch.of(keys), times);
            b.updateBatch(packed, times);
            assertArrayEquals(a.serialize(), b.serialize());
            assertArrayEquals(a.queryBatch(KeyBatch.of(keys)), b.queryBatch(packed));
        }
        // sixteen-byte identifiers end to end
        byte[] ids = rng.bytes(16 * 50);
        byte[][] split = new byte[50][];
        for (int i = 0; i < 50; i++) {
            split[i] = Arrays.copyOfRange(ids, 16 * i, 16 * (i + 1));
        }
        try (RecencySketch a = new RecencySketch(4096, 4, 1, 0);
             RecencySketch b = new RecencySketch(4096, 4, 1, 0)) {
            long[] t = times(rng, 50);
            a.updateBatch(split, t);
            KeyBatch fixed = KeyBatch.ofFixed(ids, 16);
            Arrays.fill(ids, (byte) 0); // the batch holds its own copy
            b.updateBatch(fixed, t);
            assertArrayEquals(a.serialize(), b.serialize());
        }
        assertEquals(0, KeyBatch.ofPacked(new byte[0], new int[0]).size());
        assertEquals(0, KeyBatch.ofFixed(new byte[0], 16).size());
        assertEquals(3, KeyBatch.ofPacked(new byte[0], new int[3]).size()); // three empty keys
        TestSupport.expectStatus(Status.NULL, "data", () -> KeyBatch.ofPacked(null, new int[0]));
        TestSupport.expectStatus(Status.NULL, "lengths", () -> KeyBatch.ofPacked(new byte[0], null));
        TestSupport.expectStatus(Status.INVALID_ARGUMENT, "add up to 3", () -> KeyBatch.ofPacked(new byte[4], new int[] {2, 1}));
        TestSupport.expectStatus(Status.INVALID_ARGUMENT, "lengths[1]", () -> KeyBatch.ofPacked(new byte[4], new int[] {5, -1}));
        TestSupport.expectStatus(Status.NULL, "data", () -> KeyBatch.ofFixed(null, 16));
        TestSupport.expectStatus(Status.INVALID_ARGUMENT, "keyLength is 0", () -> KeyBatch.ofFixed(new byte[32], 0));
        TestSupport.expectStatus(Status.INVALID_ARGUMENT, "keyLength is -16", () -> KeyBatch.ofFixed(new byte[32], -16));
        TestSupport.expectStatus(Status.INVALID_ARGUMENT, "33 bytes", () -> KeyBatch.ofFixed(new byte[33], 16));
    }

    @Test
    public void timesAboveLongMaxComeBackClamped() {
        // a blob whose cells hold 2^64 - 1 (written by a binding with unsigned
        // times, here produced by a saturated TTL expiry through the C library)
        try (RecencySketch s = new RecencySketch(64, 2, 1, 0)) {
            s.ttlInsert("k", Long.MAX_VALUE, Long.MAX_VALUE); // 2^64 - 2 in C
            assertEquals(Long.MAX_VALUE, s.query("k"));
            assertArrayEquals(new long[] {Long.MAX_VALUE, 0}, s.queryBatch(new String[] {"k", "absent"}));
        }
    }
}
