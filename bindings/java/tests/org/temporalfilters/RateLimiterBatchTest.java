package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/* RateLimiter.acquireBatch (tf_rate_limiter_acquire_batch): the same
 * decisions, in order, and the same state afterwards as the same acquire
 * calls on a twin limiter (both modes, a global limit and an override, a key
 * bound failing closed and open, empty, inline and out-of-line keys, clocks
 * going back, batches across the native layer's 64-key chunks); every bad
 * argument refused before any decision; the empty batch; a closed limiter. */
public class RateLimiterBatchTest {
    private static final long NEVER = TemporalFilters.RETRY_NEVER;

    private static RateLimiter.Decision allowed(long remaining) {
        return new RateLimiter.Decision(true, remaining, 0);
    }

    private static RateLimiter.Decision denied(long remaining, long retryAt) {
        return new RateLimiter.Decision(false, remaining, retryAt);
    }

    /* A small batch with known answers: the third request of "a" waits for
     * its first permit to leave (with its bucket at 1000, or at 10 + 1000 in
     * exact mode); a key may come several times in one batch. */
    @Test
    public void aBatchAnswersInTheOrderOfItsKeys() {
        RateLimiterTest.inBothModes(2, 1000, 100, (rl, flags, m) -> {
            RateLimiter.Decision[] d = rl.acquireBatch(new String[] {"a", "a", "a", "b"},
                    new long[] {10, 20, 30, 40}, 1);
            long retry = flags == 0 ? 1000 : 1010;
            assertArrayEquals(new RateLimiter.Decision[] {allowed(1), allowed(0), denied(0, retry), allowed(1)}, d);
            // n for every key; byte[] keys are the same keys
            d = rl.acquireBatch(new byte[][] {utf8("b"), utf8("c")}, new long[] {50, 50}, 2);
            assertArrayEquals(new RateLimiter.Decision[] {denied(1, flags == 0 ? 1000 : 1040), allowed(0)}, d);
            // one permit by default, with a KeyBatch packed once and reused
            KeyBatch ab = KeyBatch.of("a", "b");
            assertArrayEquals(new RateLimiter.Decision[] {allowed(1), allowed(1)},
                    rl.acquireBatch(ab, new long[] {2000, 2000}));
            assertArrayEquals(new RateLimiter.Decision[] {allowed(0), allowed(0)},
                    rl.acquireBatch(ab, new long[] {2001, 2001}));
            assertArrayEquals(new RateLimiter.Decision[] {denied(0, 3000), denied(0, 3000)},
                    rl.acquireBatch(ab, new long[] {2002, 2002}));
            assertEquals(3, rl.stats().keys());
        });
    }

    /* The twin of the C suite's test_acquire_batch_equals_single_calls:
     * random traffic over 500 keys (one empty, every seventh longer than 16
     * bytes, stored out of line), batches of 1 to 200 keys, n 1 or 2, times
     * that mostly go forward and sometimes back by up to 500. One limiter
     * takes the batches, its twin the same requests one by one: every answer
     * and, at the end, the counters and the serialized bytes must be equal. */
    @Test
    public void aBatchDecidesAsTheSameSingleCallsInOrder() {
        final int nk = 500;
        final int maxBatch = 200;
        byte[][] names = new byte[nk][];
        for (int k = 0; k < nk; k++) {
            names[k] = utf8(k == 0 ? "" : k % 7 == 3 ? "a longer key, out of line, " + k : "k" + k);
        }
        int[][] configs = { // flags, max keys
            {0, 0}, {RateLimiter.EXACT, 0},
            {0, 120}, {RateLimiter.EXACT, 120},
            {RateLimiter.FULL_ALLOW, 120}, {RateLimiter.EXACT | RateLimiter.FULL_ALLOW, 120},
        };
        for (int[] config : configs) {
            String what = "flags " + config[0] + ", max keys " + config[1];
            try (RateLimiter single = new RateLimiter(4, 1000, 100, 0, config[0]);
                    RateLimiter batch = new RateLimiter(4, 1000, 100, 0, config[0])) {
                for (RateLimiter r : new RateLimiter[] {single, batch}) {
                    r.setGlobalLimit(300);
                    r.setKeyLimit("k7", 9);
                    r.setMaxKeys(config[1]);
                }
                TestSupport.Rng g = new TestSupport.Rng(31 + config[0] + config[1]);
                long now = 1;
                long granted = 0;
                long denied = 0;
                int largest = 0;
                for (int done = 0, b = 0; done < 40000; b++) {
                    int count = 1 + g.below(maxBatch);
                    long n = 1 + g.below(2);
                    byte[][] keys = new byte[count][];
                    long[] times = new long[count];
                    for (int i = 0; i < count; i++) {
                        keys[i] = names[g.below(nk)];
                        now += g.below(5);
                        times[i] = g.below(10) == 0 && now > 500 ? now - g.below(500) : now;
                    }
                    RateLimiter.Decision[] got = batch.acquireBatch(keys, times, n);
                    assertEquals(count, got.length);
                    for (int i = 0; i < count; i++) {
                        RateLimiter.Decision want = single.acquire(keys[i], times[i], n);
                        assertEquals(what + ": batch " + b + ", entry " + i, want, got[i]);
                        if (want.allowed()) {
                            granted++;
                        } else {
                            denied++;
                        }
                    }
                    largest = Math.max(largest, count);
                    done += count;
                }
                assertTrue(what + ": " + granted + " granted", granted > 1000);
                assertTrue(what + ": " + denied + " denied", denied > 1000);
                assertTrue("batches beyond the native layer's 64-key chunks", largest > 64);
                RateLimiter.Stats s = batch.stats();
                assertEquals(what, single.stats(), s);
                if (config[1] != 0) {
                    assertTrue(what + ": the key bound was reached: " + s, s.deniedFull() + s.allowedFull() > 0);
                }
                assertArrayEquals(what, single.serialize(), batch.serialize());
            }
        }
    }

    /* Every bad argument is refused before any decision: no key created, no
     * clock moved, the same bytes. */
    @Test
    public void badArgumentsChangeNothing() {
        RateLimiterTest.inBothModes(2, 100, 10, (rl, flags, m) -> {
            rl.setGlobalLimit(50);
            assertEquals(allowed(1), rl.acquire("x", 5));
            byte[] before = rl.serialize();
            KeyBatch xyz = KeyBatch.of("x", "y", "z");
            KeyBatch none = KeyBatch.of(new String[0]);
            List<ThrowingRunnable> invalid = new ArrayList<>(List.of(
                () -> rl.acquireBatch(xyz, new long[] {6, 7}, 1),
                () -> rl.acquireBatch(xyz, new long[] {6, 7, 8, 9}, 1),
                () -> rl.acquireBatch(xyz, new long[0], 1),
                () -> rl.acquireBatch(none, new long[] {6}, 1),
                () -> rl.acquireBatch(xyz, new long[] {6, 7, 0}, 1),
                () -> rl.acquireBatch(xyz, new long[] {6, -7, 8}, 1),
                () -> rl.acquireBatch(xyz, new long[] {Long.MIN_VALUE, 7, 8}, 1),
                () -> rl.acquireBatch(xyz, new long[] {6, 7, 8}, 0),
                () -> rl.acquireBatch(xyz, new long[] {6, 7, 8}, -1),
                () -> rl.acquireBatch(none, new long[0], 0),
                () -> rl.acquireBatch(new String[] {"x", "y"}, new long[] {6}, 1)));
            for (ThrowingRunnable call : invalid) {
                expectStatus(Status.INVALID_ARGUMENT, call);
            }
            expectStatus(Status.INVALID_ARGUMENT, "one timestamp per key",
                () -> rl.acquireBatch(xyz, new long[] {6, 7}, 1));
            expectStatus(Status.INVALID_ARGUMENT, "times[2]", () -> rl.acquireBatch(xyz, new long[] {6, 7, 0}, 1));
            expectStatus(Status.INVALID_ARGUMENT, "[1] is negative",
                () -> rl.acquireBatch(xyz, new long[] {6, -7, 8}, 1));
            expectStatus(Status.INVALID_ARGUMENT, "n must be",
                () -> rl.acquireBatch(xyz, new long[] {6, 7, 8}, 0));
            expectStatus(Status.INVALID_ARGUMENT, "n is negative",
                () -> rl.acquireBatch(xyz, new long[] {6, 7, 8}, -1));
            List<ThrowingRunnable> nulls = List.of(
                () -> rl.acquireBatch((KeyBatch) null, new long[] {6}, 1),
                () -> rl.acquireBatch((byte[][]) null, new long[] {6}, 1),
                () -> rl.acquireBatch((String[]) null, new long[] {6}, 1),
                () -> rl.acquireBatch(new byte[][] {utf8("x"), null}, new long[] {6, 7}, 1),
                () -> rl.acquireBatch(new String[] {null}, new long[] {6}, 1),
                () -> rl.acquireBatch(xyz, null, 1),
                () -> rl.acquireBatch(xyz, null));
            for (ThrowingRunnable call : nulls) {
                expectStatus(Status.NULL, call);
            }
            assertArrayEquals(before, rl.serialize());
            assertEquals(1, rl.stats().keys());
            // a huge n is an answer, not an error: never, and nothing taken
            RateLimiter.Decision[] d = rl.acquireBatch(xyz, new long[] {6, 7, 8}, Long.MAX_VALUE);
            assertArrayEquals(new RateLimiter.Decision[] {denied(1, NEVER), denied(2, NEVER), denied(2, NEVER)}, d);
            assertEquals(1, rl.stats().keys());
            // and a failure does not stick
            assertArrayEquals(new RateLimiter.Decision[] {allowed(0), allowed(1)},
                    rl.acquireBatch(new String[] {"x", "y"}, new long[] {9, 9}, 1));
        });
    }

    /* An empty batch decides nothing and changes nothing. */
    @Test
    public void anEmptyBatch() {
        try (RateLimiter rl = new RateLimiter(2, 100, 10, 0, 0)) {
            rl.acquire("x", 5);
            byte[] before = rl.serialize();
            assertEquals(0, rl.acquireBatch(KeyBatch.of(new byte[0][]), new long[0], 1).length);
            assertEquals(0, rl.acquireBatch(new byte[0][], new long[0], 3).length);
            assertEquals(0, rl.acquireBatch(new String[0], new long[0], 1).length);
            assertEquals(0, rl.acquireBatch(KeyBatch.of(new String[0]), new long[0]).length);
            assertArrayEquals(before, rl.serialize());
        }
    }

    @Test
    public void aClosedLimiterRefusesBatches() {
        RateLimiter rl = new RateLimiter(2, 100, 10, 0, 0);
        KeyBatch k = KeyBatch.of("k");
        rl.close();
        ThrowingRunnable[] calls = {
            () -> rl.acquireBatch(k, new long[] {5}, 1), () -> rl.acquireBatch(k, new long[] {5}),
            () -> rl.acquireBatch(new byte[][] {utf8("k")}, new long[] {5}, 1),
            () -> rl.acquireBatch(new String[] {"k"}, new long[] {5}, 1),
            () -> rl.acquireBatch(KeyBatch.of(new String[0]), new long[0], 1),
        };
        for (ThrowingRunnable call : calls) {
            expectClosed("RateLimiter", call);
        }
    }

    /* The native layer checks what the idiomatic layer always gets right:
     * output arrays of one entry per key, key lengths that match the bytes;
     * outputs are written only on success. */
    @Test
    public void theNativeLayerChecksItsBatchArguments() {
        RateLimiterNative h = new RateLimiterNative(2, 100, 10, 0, 0);
        try {
            byte[] data = utf8("xyz");
            int[] lens = {1, 1, 1};
            long[] times = {6, 7, 8};
            expectStatus(Status.INVALID_ARGUMENT, "every output",
                () -> h.acquire_batch(data, lens, times, 1, new int[2], new long[3], new long[3]));
            expectStatus(Status.INVALID_ARGUMENT, "every output",
                () -> h.acquire_batch(data, lens, times, 1, new int[3], new long[4], new long[3]));
            expectStatus(Status.INVALID_ARGUMENT, "every output",
                () -> h.acquire_batch(data, lens, times, 1, new int[3], new long[3], new long[0]));
            expectStatus(Status.NULL, "out_allowed",
                () -> h.acquire_batch(data, lens, times, 1, null, new long[3], new long[3]));
            expectStatus(Status.NULL, "out_remaining",
                () -> h.acquire_batch(data, lens, times, 1, new int[3], null, new long[3]));
            expectStatus(Status.NULL, "out_retry_at",
                () -> h.acquire_batch(data, lens, times, 1, new int[3], new long[3], null));
            expectStatus(Status.INVALID_ARGUMENT, "key lengths",
                () -> h.acquire_batch(data, new int[] {1, 1, 2}, times, 1, new int[3], new long[3], new long[3]));
            expectStatus(Status.INVALID_ARGUMENT, "key lengths",
                () -> h.acquire_batch(data, new int[] {1, -1, 3}, times, 1, new int[3], new long[3], new long[3]));
            int[] allowed = {-7, -7, -7};
            long[] remaining = {-7, -7, -7};
            long[] retryAt = {-7, -7, -7};
            expectStatus(Status.INVALID_ARGUMENT,
                () -> h.acquire_batch(data, lens, new long[] {6, 0, 8}, 1, allowed, remaining, retryAt));
            assertArrayEquals("nothing written on failure", new int[] {-7, -7, -7}, allowed);
            assertArrayEquals(new long[] {-7, -7, -7}, remaining);
            assertEquals("nothing was taken", 0, RateLimiterTest.keysOf(h));
            assertEquals("granted count", 3, h.acquire_batch(data, new int[] {1, 2, 0}, new long[] {6, 7, 8}, 2,
                    allowed, remaining, retryAt));
            assertArrayEquals(new int[] {1, 1, 1}, allowed);
            assertArrayEquals(new long[] {0, 0, 0}, remaining);
            assertEquals(2, h.acquire_batch(data, lens, times, 1, allowed, remaining, retryAt));
            assertArrayEquals(new int[] {0, 1, 1}, allowed);
            assertArrayEquals(new long[] {0, 1, 1}, remaining);
            assertArrayEquals(new long[] {100, 0, 0}, retryAt);
        } finally {
            h.delete();
        }
        expectStatus(Status.NULL, "closed", () -> RateLimiterTest.keysOf(h));
    }
}
