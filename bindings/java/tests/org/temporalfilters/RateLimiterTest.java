package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.expectClosed;
import static org.temporalfilters.TestSupport.expectStatus;
import static org.temporalfilters.TestSupport.utf8;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/* RateLimiter: the Rate Limiter README's worked example, decisions with n permits, peek,
 * refund, reset, the global limit (asked on every decision) and overrides,
 * the key bound, idle reclamation and the reclaim horizon, a clock that goes
 * back, memory per key, the blob round trip and its canonical bytes, and
 * every error path. The properties over many requests and threads are in
 * RateLimiterPropertyTest, the golden blobs in GoldenTest. */
public class RateLimiterTest {
    /* The counters of a stats() snapshot, and a memory that is there. */
    private static void assertCounters(RateLimiter.Stats s, long keys, long reclaimed, long deniedFull,
            long allowedFull) {
        assertEquals("keys", keys, s.keys());
        assertEquals("reclaimed", reclaimed, s.reclaimed());
        assertEquals("deniedFull", deniedFull, s.deniedFull());
        assertEquals("allowedFull", allowedFull, s.allowedFull());
        assertTrue("memory", s.memory() > 0);
    }

    private static final long NEVER = TemporalFilters.RETRY_NEVER;

    /* The keys a native limiter tracks (its stats, freed at once). */
    static long keysOf(RateLimiterNative h) {
        RateLimiterStatsNative stats = h.stats();
        try {
            return stats.getKeys();
        } finally {
            stats.delete();
        }
    }

    /* The body of a test that runs in both modes: a new limiter, its flags
     * and the mode's name ("bucketed" or "exact") for the messages. */
    interface InMode {
        void run(RateLimiter rl, int flags, String mode);
    }

    /* Runs body on a new limiter (limit, window, bucketWidth) in the bucketed
     * mode (flags 0), then on another in the exact mode. */
    static void inBothModes(long limit, long window, long bucketWidth, InMode body) {
        for (int flags : new int[] {0, RateLimiter.EXACT}) {
            try (RateLimiter rl = new RateLimiter(limit, window, bucketWidth, 0, flags)) {
                body.run(rl, flags, flags == 0 ? "bucketed" : "exact");
            }
        }
    }

    private static void assertDecision(String what, boolean allowed, long remaining, long retryAt,
            RateLimiter.Decision d) {
        assertEquals(what, new RateLimiter.Decision(allowed, remaining, retryAt), d);
    }

    /* The Rate Limiter README: 5 requests per second, 100 ms buckets, its
     * timestamps in milliseconds and its outcomes (the total after each
     * request is 5 - remaining). The exact mode gives the same outcomes on
     * this sequence. */
    @Test
    public void theReadmesWorkedExample() {
        inBothModes(5, 1000, 100, (rl, flags, m) -> {
            // bucket 15921711019: total 1, then 2
            assertDecision(m + " 1592171101900", true, 4, 0, rl.acquire("client", 1592171101900L));
            assertDecision(m + " 1592171101950", true, 3, 0, rl.acquire("client", 1592171101950L));
            // 1592171102013, 1592171102810, 1592171102850: total 5
            assertDecision(m + " 1592171102013", true, 2, 0, rl.acquire("client", 1592171102013L));
            assertDecision(m + " 1592171102810", true, 1, 0, rl.acquire("client", 1592171102810L));
            assertDecision(m + " 1592171102850", true, 0, 0, rl.acquire("client", 1592171102850L));
            // 1592171102890: total = 5 = rps, denied; the queue is unchanged. The
            // bucket of 1592171101900 leaves the window at 1592171102900
            // (bucketed), the grant of 1592171101900 at 1592171102900 (exact).
            RateLimiter.Decision peeked = rl.peek("client", 1592171102890L);
            RateLimiter.Decision d = rl.acquire("client", 1592171102890L);
            assertDecision(m + " 1592171102890", false, 0, 1592171102900L, d);
            assertEquals(peeked, d);
            assertEquals(10, d.retryAfter(1592171102890L));
            // 1592171102980: bucket 15921711019 (two requests) is outdated,
            // total 3 < 5: allowed, total 4
            assertDecision(m + " 1592171102980", true, 1, 0, rl.acquire("client", 1592171102980L));
            assertEquals(1, rl.stats().keys());
        });
    }

    /* The README's analysis: 1 rps with 100 ms buckets admits requests at
     * 1592171101990 and 1592171102930 although they are less than a second
     * apart (the first bucket counts as outdated). The exact mode denies the
     * second and says when it may come. */
    @Test
    public void theReadmesOverAdmissionExampleAndTheExactMode() {
        try (RateLimiter bucketed = new RateLimiter(1, 1000, 100, 0, 0);
                RateLimiter exact = new RateLimiter(1, 1000, 0, 0, RateLimiter.EXACT)) {
            assertTrue(bucketed.acquire("u", 1592171101990L).allowed());
            assertTrue("the README's false positive", bucketed.acquire("u", 1592171102930L).allowed());
            assertTrue(exact.acquire("u", 1592171101990L).allowed());
            RateLimiter.Decision d = exact.acquire("u", 1592171102930L);
            assertDecision("exact", false, 0, 1592171102990L, d);
            assertEquals(60, d.retryAfter(1592171102930L));
            assertTrue(exact.acquire("u", 1592171102990L).allowed());
        }
    }

    @Test
    public void retryAfter() {
        assertEquals(0, new RateLimiter.Decision(true, 3, 0).retryAfter(5));
        assertEquals(60, new RateLimiter.Decision(false, 0, 100).retryAfter(40));
        assertEquals(0, new RateLimiter.Decision(false, 0, 100).retryAfter(150));
        assertEquals(NEVER, new RateLimiter.Decision(false, 2, NEVER).retryAfter(1));
        assertEquals(-1L, NEVER);
        assertEquals(NEVER, new RateLimiter.Decision(false, 0, NEVER).retryAfter(Long.MAX_VALUE));
        assertEquals(1, RateLimiter.EXACT);
        assertEquals(2, RateLimiter.FULL_ALLOW);
        // the C header's limits (each checked against the library in
        // overridesAreValidated and badConstructorArguments)
        assertEquals(65535, RateLimiter.MAX_KEY_LIMIT);
        assertEquals(1 << 20, RateLimiter.MAX_EXACT_LIMIT);
        assertEquals(4096, RateLimiter.MAX_BUCKETS);
        assertEquals(1 << 24, RateLimiter.MAX_EXACT_GLOBAL_LIMIT);
    }

    @Test
    public void parameters() {
        try (RateLimiter b = new RateLimiter(7, 60_000, 1_000, 0, RateLimiter.FULL_ALLOW);
                RateLimiter e = new RateLimiter(9, 500, 300, 0, RateLimiter.EXACT)) {
            assertEquals(new RateLimiter.Info(7, 60_000, 1_000, RateLimiter.FULL_ALLOW, 0, 0, 0), b.info());
            assertEquals("exact mode has no buckets", new RateLimiter.Info(9, 500, 0, RateLimiter.EXACT, 0, 0, 0),
                    e.info());
            // the settings are part of the info
            b.setGlobalLimit(70);
            b.setMaxKeys(1000);
            assertEquals(new RateLimiter.Info(7, 60_000, 1_000, RateLimiter.FULL_ALLOW, 70, 1000, 0), b.info());
            // a seed is kept, through a blob too, and decides nothing
            try (RateLimiter s = new RateLimiter(7, 60_000, 1_000, 0xFFFF_FFFFL, RateLimiter.FULL_ALLOW);
                    RateLimiter plain = new RateLimiter(7, 60_000, 1_000)) {
                assertEquals(0xFFFF_FFFFL, s.info().seed());
                for (int i = 0; i < 9; i++) {
                    assertEquals(plain.acquire("k", 10 + i), s.acquire("k", 10 + i));
                }
                try (RateLimiter back = RateLimiter.deserialize(s.serialize())) {
                    assertEquals(s.info(), back.info());
                }
            }
            expectStatus(Status.INVALID_ARGUMENT, () -> new RateLimiter(7, 60_000, 1_000, 1L << 32, 0));
            assertEquals("RateLimiter(limit=7, window=60000, bucketWidth=1000, flags=2, keys=0)", b.toString());
            // and read back from a blob
            for (RateLimiter r : new RateLimiter[] {b, e}) {
                try (RateLimiter back = RateLimiter.deserialize(r.serialize())) {
                    assertEquals(r.toString(), back.toString());
                }
            }
        }
    }

    /* acquire(key, now, n): all or nothing; more than the limit never. */
    @Test
    public void severalPermitsAtOnce() {
        inBothModes(10, 1000, 100, (rl, flags, m) -> {
            assertDecision(m, true, 6, 0, rl.acquire("k", 50, 4));
            assertDecision(m, true, 1, 0, rl.acquire(utf8("k"), 150, 5));
            // 9 + 3 > 10: two permits must leave first, both taken at 50
            // (bucket 0, which leaves at 1000; the grants leave at 1050)
            long when = flags == 0 ? 1000 : 1050;
            assertDecision(m, false, 1, when, rl.acquire("k", 250, 3));
            assertDecision(m, false, 1, when, rl.peek("k", 250, 3));
            assertDecision(m, true, 0, 0, rl.acquire("k", 250, 1)); // the denial took nothing
            assertDecision(m, false, 0, NEVER, rl.acquire("k", 300, 11));
            assertDecision(m, false, 0, NEVER, rl.acquire("k", 300, Long.MAX_VALUE));
            assertDecision(m, false, 10, NEVER, rl.peek("other", 300, 11));
            assertEquals(NEVER, rl.peek("other", 300, 11).retryAfter(300));
            // the four permits of 50 have left: 6 + 3 of 10
            assertDecision(m, true, 1, 0, rl.acquire("k", when, 3));
        });
    }

    /* rate_limiter.h: peek is "the decision acquire() would make now,
     * without changing anything: no permit taken, no clock moved, no key
     * created or reclaimed". */
    @Test
    public void peekChangesNothing() {
        try (RateLimiter rl = new RateLimiter(3, 100, 0, 0, RateLimiter.EXACT)) {
            byte[] empty = rl.serialize();
            for (int i = 0; i < 10; i++) {
                assertDecision("unknown key", true, 2, 0, rl.peek("k", 10));
                assertDecision("unknown key, n = 3", true, 0, 0, rl.peek(utf8("k"), 10, 3));
            }
            assertEquals(0, rl.stats().keys());
            assertArrayEquals(empty, rl.serialize());
            assertDecision("", true, 0, 0, rl.acquire("k", 10, 3));
            byte[] before = rl.serialize();
            for (int i = 0; i < 10; i++) {
                assertDecision("full", false, 0, 110, rl.peek("k", 10 + i));
            }
            assertDecision("", false, 0, NEVER, rl.peek("k", 20, 4));
            assertEquals(1, rl.stats().keys());
            // a peek later than the key's clock (and than anything) moves no clock
            assertDecision("", true, 2, 0, rl.peek("k", 110));
            assertDecision("", true, 2, 0, rl.peek("k", 1_000_000));
            assertArrayEquals("peeks changed the state", before, rl.serialize());
            // so a later request at an earlier time is decided at that time:
            // the permits of 10 still count at 50
            assertDecision("", false, 0, 110, rl.acquire("k", 50));
            assertDecision("", true, 2, 0, rl.acquire("k", 110));
        }
        // nor the global window's clock
        try (RateLimiter rl = new RateLimiter(3, 100, 10, 0, 0)) {
            rl.setGlobalLimit(2);
            assertDecision("", true, 0, 0, rl.acquire("a", 50, 2));
            byte[] before = rl.serialize();
            assertDecision("global full", false, 0, 150, rl.peek("b", 60));
            assertDecision("the global window empty then", true, 1, 0, rl.peek("b", 150));
            assertArrayEquals(before, rl.serialize());
            assertDecision("global full at 60", false, 0, 150, rl.acquire("b", 60));
        }
    }

    @Test
    public void refundGivesPermitsBack() {
        inBothModes(3, 100, 10, (rl, flags, m) -> {
            assertDecision(m, true, 0, 0, rl.acquire("k", 10, 3));
            assertFalse(rl.peek("k", 20).allowed());
            rl.refund("k", 20, 1);
            assertDecision(m, true, 0, 0, rl.peek("k", 20));
            rl.refund(utf8("k"), 20, 100); // more than it holds: all of it
            assertDecision(m, true, 2, 0, rl.peek("k", 20));
            rl.refund("k", 20, 0); // nothing
            rl.refund("never-seen", 20, 5); // not tracked: nothing
            assertEquals(1, rl.stats().keys());
            assertDecision(m, true, 0, 0, rl.acquire("k", 30, 3));
            assertFalse(rl.acquire("k", 30).allowed());
        });
        // the global window gets the permits back too
        try (RateLimiter rl = new RateLimiter(3, 100, 0, 0, RateLimiter.EXACT)) {
            rl.setGlobalLimit(4);
            assertTrue(rl.acquire("a", 1, 3).allowed());
            assertDecision("global remaining", true, 0, 0, rl.acquire("b", 1));
            assertDecision("global full", false, 0, 101, rl.acquire("c", 2));
            rl.refund("a", 2, 2);
            assertDecision("after the refund", true, 1, 0, rl.acquire("c", 2));
        }
    }

    /* rate_limiter.h: a refund gives the key's permits back "also to the
     * global window (the same buckets, or grant times, as the key's, if they
     * are still in it)": not the global window's newest permits, which are
     * another key's. */
    @Test
    public void aRefundGivesTheKeysOwnPermitsBackToTheGlobalWindow() {
        for (int flags : new int[] {0, RateLimiter.EXACT}) {
            String m = flags == 0 ? "bucketed" : "exact";
            try (RateLimiter rl = new RateLimiter(10, 100, 10, 0, flags)) {
                rl.setGlobalLimit(2);
                assertDecision(m, true, 1, 0, rl.acquire("A", 10));
                assertDecision(m, true, 0, 0, rl.acquire("B", 50));
                rl.refund("A", 60, 1); // A's permit of 10 goes back, B's of 50 stays
                assertDecision(m, true, 0, 0, rl.peek("C", 60)); // one global permit left
                // B's permit counts until 150 (its bucket, 50 .. 59, leaves at 150)
                assertDecision(m, true, 0, 0, rl.acquire("C", 111));
                assertDecision(m, false, 0, 150, rl.acquire("D", 111));
            }
            // a permit that has left the global window (whose clock is ahead
            // of the key's) is not taken out of it: the others' permits stay
            try (RateLimiter rl = new RateLimiter(10, 100, 10, 0, flags)) {
                rl.setGlobalLimit(2);
                assertDecision(m, true, 1, 0, rl.acquire("A", 10));
                assertDecision(m, true, 1, 0, rl.acquire("B", 200)); // A's permit has left globally
                assertDecision(m, true, 0, 0, rl.acquire("C", 200));
                rl.refund("A", 50, 1); // still in A's window at 50, not in the global one
                assertDecision(m, false, 0, 300, rl.acquire("D", 200));
                assertDecision(m, false, 0, 300, rl.acquire("A", 60));
            }
        }
    }

    @Test
    public void resetForgetsTheKeyButNotItsOverrideNorTheGlobalWindow() {
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            rl.setKeyLimit("v", 1);
            assertDecision("", true, 0, 0, rl.acquire("v", 1));
            assertFalse(rl.acquire("v", 2).allowed());
            rl.reset("v");
            assertEquals(0, rl.stats().keys());
            assertDecision("the override stays", true, 0, 0, rl.acquire("v", 3));
            rl.reset(utf8("v"));
            rl.reset("never-seen");
            assertEquals(0, rl.stats().keys());
        }
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            rl.setGlobalLimit(2);
            assertTrue(rl.acquire("a", 1).allowed());
            rl.reset("a");
            assertDecision("", true, 0, 0, rl.acquire("b", 2));
            assertDecision("a's permit still counts globally", false, 0, 1000, rl.acquire("c", 3));
        }
    }

    /* The global limit caps every key, including one with its own higher
     * limit: an override never bypasses the global limit. */
    @Test
    public void aKeyWithAnOverrideIsStillHeldToTheGlobalLimit() {
        try (RateLimiter rl = new RateLimiter(2, 1000, 100, 0, 0)) {
            rl.setGlobalLimit(5);
            rl.setKeyLimit("vip", 100);
            for (int i = 0; i < 5; i++) {
                assertDecision("vip " + i, true, 4 - i, 0, rl.acquire("vip", 10 + i));
            }
            // the global window is full: bucket 0 (all five) leaves at 1000
            assertDecision("vip over the global limit", false, 0, 1000, rl.acquire("vip", 15));
            assertDecision("a over the global limit", false, 0, 1000, rl.acquire("a", 20));
            assertDecision("peek", false, 0, 1000, rl.peek("b", 20));
            assertDecision("a: its own limit bounds remaining", true, 1, 0, rl.acquire("a", 1000));
            assertDecision("vip: the global window bounds remaining", true, 3, 0, rl.acquire("vip", 1000));
            // without the override vip has the default limit of 2 (one used)
            rl.setKeyLimit("vip", 0);
            assertDecision("vip back to 2", true, 0, 0, rl.acquire("vip", 1001));
            assertDecision("vip over its limit", false, 0, 2000, rl.acquire("vip", 1002));
            assertDecision("z takes the last two", true, 0, 0, rl.acquire("z", 1003, 2));
            assertDecision("y over the global limit", false, 0, 2000, rl.acquire("y", 1004));
            // without the global limit only the keys' own limits apply
            rl.setGlobalLimit(0);
            rl.setKeyLimit(utf8("vip"), 50);
            for (int i = 0; i < 48; i++) {
                assertTrue("vip " + i, rl.acquire("vip", 1100).allowed());
            }
            assertFalse(rl.acquire("vip", 1100).allowed());
        }
        // the same in exact mode: grants leave one by one
        try (RateLimiter rl = new RateLimiter(3, 100, 0, 0, RateLimiter.EXACT)) {
            rl.setGlobalLimit(5);
            rl.setKeyLimit("vip", 10);
            for (int t = 1; t <= 5; t++) {
                assertDecision("vip " + t, true, 5 - t, 0, rl.acquire("vip", t));
            }
            assertDecision("vip over the global limit", false, 0, 101, rl.acquire("vip", 6));
            assertDecision("a over the global limit", false, 0, 101, rl.acquire("a", 6));
            assertDecision("a after the first grant left", true, 0, 0, rl.acquire("a", 101));
            assertDecision("", false, 0, 102, rl.acquire("a", 101));
            assertDecision("a at its own limit", true, 0, 0, rl.acquire("a", 103, 2));
            assertDecision("", false, 0, 201, rl.acquire("a", 104));
        }
    }

    /* rate_limiter.h: with a global limit "requests are then granted only
     * when both the key and the global window allow them; the remaining count
     * is the smaller of the two, and retry_at the later", on every decision,
     * including one the key itself refuses. */
    @Test
    public void theGlobalWindowIsAskedOnEveryDecision() {
        for (int flags : new int[] {0, RateLimiter.EXACT}) {
            String m = flags == 0 ? "bucketed" : "exact";
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, flags)) {
                rl.setGlobalLimit(2);
                assertDecision(m, true, 1, 0, rl.acquire("A", 5));
                assertDecision(m, true, 0, 0, rl.acquire("B", 6));
                // more than A's limit: never; and no room left globally
                assertDecision(m, false, 0, NEVER, rl.acquire("A", 7, 10));
                // within A's limit but above the global one: never either
                assertDecision(m, false, 0, NEVER, rl.peek("A", 7, 3));
                assertDecision(m, false, 0, NEVER, rl.acquire("A", 7, 3));
                assertDecision(m, false, 0, NEVER, rl.peek("new", 7, 3));
                // A has room, the global window has none until the permit of 5 leaves
                long first = flags == 0 ? 100 : 105; // bucket 0, or the grant of 5
                assertDecision(m, false, 0, first, rl.acquire("A", 8));
                assertDecision(m, true, flags == 0 ? 1 : 0, 0, rl.acquire("A", first));
            }
            // both refuse: the later of the two times, at which both grant
            try (RateLimiter rl = new RateLimiter(2, 100, 5, 0, flags)) {
                rl.setGlobalLimit(2);
                assertDecision(m, true, 1, 0, rl.acquire("A", 5));
                assertDecision(m, true, 0, 0, rl.acquire("B", 10));
                // A needs its permit of 5 gone (105), the global window both (110)
                assertDecision(m, false, 0, 110, rl.peek("A", 15, 2));
                assertDecision(m, false, 0, 110, rl.acquire("A", 15, 2));
                // at 109 A's own window would grant (its permit of 5 has left),
                // the global window has 1 permit until 110: denied, nothing
                // taken, so A keeps its 2 and the global window's 1 is the fewer
                assertDecision(m, false, 1, 110, rl.acquire("A", 109, 2));
                assertDecision(m, true, 0, 0, rl.acquire("A", 110, 2));
            }
            // the key refuses, the global window would grant: the key's time,
            // and the fewer remaining: the global window would have none left
            // after the request, but a denial takes nothing, so it keeps its
            // 2 and the key's 1 is the fewer
            try (RateLimiter rl = new RateLimiter(2, 100, 5, 0, flags)) {
                rl.setGlobalLimit(5);
                assertDecision(m, true, 1, 0, rl.acquire("A", 5));
                assertDecision(m, true, 0, 0, rl.acquire("B", 6, 2));
                assertDecision(m, false, 1, 105, rl.acquire("A", 7, 2)); // A alone: 1 remaining
                assertDecision(m, true, 0, 0, rl.acquire("A", 7));
            }
        }
    }

    @Test
    public void overridesAreValidated() {
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            rl.setKeyLimit("k", RateLimiter.MAX_KEY_LIMIT);
            expectStatus(Status.INVALID_ARGUMENT, () -> rl.setKeyLimit("k", RateLimiter.MAX_KEY_LIMIT + 1));
            expectStatus(Status.INVALID_ARGUMENT, "limit", () -> rl.setKeyLimit("k", -1));
            rl.setGlobalLimit(Long.MAX_VALUE); // no bound in bucketed mode
        }
        try (RateLimiter rl = new RateLimiter(5, 1000, 0, 0, RateLimiter.EXACT)) {
            rl.setKeyLimit("k", RateLimiter.MAX_EXACT_LIMIT);
            expectStatus(Status.INVALID_ARGUMENT, () -> rl.setKeyLimit("k", RateLimiter.MAX_EXACT_LIMIT + 1));
            rl.setGlobalLimit(RateLimiter.MAX_EXACT_GLOBAL_LIMIT);
            expectStatus(Status.INVALID_ARGUMENT,
                    () -> rl.setGlobalLimit(RateLimiter.MAX_EXACT_GLOBAL_LIMIT + 1));
            expectStatus(Status.INVALID_ARGUMENT, "limit", () -> rl.setGlobalLimit(-1));
            rl.setGlobalLimit(0);
        }
    }

    /* The key bound: new keys are denied (default) or admitted untracked
     * (FULL_ALLOW) while the tracked keys are served; counters say how often. */
    @Test
    public void maxKeysDeniesOrAdmitsNewKeys() {
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            rl.setMaxKeys(2);
            assertTrue(rl.acquire("a", 10).allowed());
            assertTrue(rl.acquire("b", 10).allowed());
            assertDecision("c: full, fail closed", false, 0, NEVER, rl.acquire("c", 10));
            assertDecision("a is tracked", true, 3, 0, rl.acquire("a", 11));
            assertCounters(rl.stats(), 2, 0, 1, 0);
            rl.reset("a");
            assertDecision("room again", true, 4, 0, rl.acquire("c", 12));
            assertDecision("d: full", false, 0, NEVER, rl.acquire("d", 12));
            rl.setMaxKeys(0);
            assertTrue(rl.acquire("d", 13).allowed());
            assertCounters(rl.stats(), 3, 0, 2, 0);
            expectStatus(Status.INVALID_ARGUMENT, "max_keys", () -> rl.setMaxKeys(-1));
        }
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, RateLimiter.FULL_ALLOW)) {
            rl.setMaxKeys(2);
            assertTrue(rl.acquire("a", 10).allowed());
            assertTrue(rl.acquire("b", 10).allowed());
            for (int i = 0; i < 10; i++) { // untracked: never limited
                assertDecision("c: full, fail open", true, 0, 0, rl.acquire("c", 10));
            }
            assertCounters(rl.stats(), 2, 0, 0, 10);
            assertTrue(rl.acquire("a", 11, 4).allowed());
            assertFalse("a is still limited", rl.acquire("a", 11).allowed());
        }
    }

    /* rate_limiter.h: when the bound is reached, "a new key first reclaims
     * an idle key" (its own shard's next slots, then those of every other
     * shard); only when none is found is it denied. Once every tracked key is
     * idle, a new key must therefore get in, and peek says so beforehand
     * without reclaiming anything. */
    @Test
    public void maxKeysMakesRoomByReclaimingIdleKeys() {
        inBothModes(5, 1000, 100, (rl, flags, m) -> {
            rl.setMaxKeys(2);
            assertTrue(rl.acquire("a", 10).allowed());
            assertTrue(rl.acquire("b", 10).allowed());
            assertDecision("full", false, 0, NEVER, rl.peek("c", 1009));
            // a window after their last request: a and b are idle
            byte[] before = rl.serialize();
            assertDecision("peek", true, 4, 0, rl.peek("c", 1010));
            assertArrayEquals("peek reclaimed a key", before, rl.serialize());
            RateLimiter.Decision d = rl.acquire("c", 1010);
            assertEquals("a new key denied although every tracked key is idle: " + d + ", " + rl.stats(),
                    new RateLimiter.Decision(true, 4, 0), d);
            RateLimiter.Stats s = rl.stats();
            assertEquals(0, s.deniedFull());
            assertTrue(s.toString(), s.reclaimed() >= 1 && s.keys() + s.reclaimed() == 3);
            assertDecision("and another", true, 4, 0, rl.acquire("d", 1010));
            assertCounters(rl.stats(), 2, 2, 0, 0);
            assertDecision("c and d are busy", false, 0, NEVER, rl.acquire("e", 1011));
        });
    }

    /* rate_limiter.h: peek "answers the same as acquire would" on a full
     * table (it looks for idle keys without removing them), in both policies;
     * only acquire counts. */
    @Test
    public void aFullTableAnswersPeekAsAcquire() {
        for (int flags : new int[] {0, RateLimiter.FULL_ALLOW, RateLimiter.EXACT,
                RateLimiter.EXACT | RateLimiter.FULL_ALLOW}) {
            boolean open = (flags & RateLimiter.FULL_ALLOW) != 0;
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, flags)) {
                rl.setMaxKeys(1);
                assertDecision("", true, 4, 0, rl.acquire("A", 5));
                byte[] before = rl.serialize();
                RateLimiter.Decision p = rl.peek("Z", 6);
                assertArrayEquals(before, rl.serialize());
                assertCounters(rl.stats(), 1, 0, 0, 0);
                RateLimiter.Decision a = rl.acquire("Z", 6);
                assertEquals(p, a);
                assertEquals(open ? new RateLimiter.Decision(true, 0, 0) : new RateLimiter.Decision(false, 0, NEVER),
                        a);
                assertCounters(rl.stats(), 1, 0, open ? 0 : 1, open ? 1 : 0);
                // more than the limit: never, whatever the policy
                assertEquals(rl.peek("Z", 7, 6), rl.acquire("Z", 7, 6));
                assertDecision("", false, 5, NEVER, rl.acquire("Z", 7, 6));
            }
        }
        // after a search for room that found nothing, "the next 63 new keys
        // only look at their own shard": peek too. Once A is idle, a new key
        // of A's shard takes its place, the others are denied (until a later
        // search looks at every shard again); peek says which.
        try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, 0)) {
            rl.setMaxKeys(1);
            assertDecision("", true, 4, 0, rl.acquire("A", 10));
            assertDecision("A busy", false, 0, NEVER, rl.acquire("X", 105));
            int admitted = 0;
            for (int i = 0; i < 100 && admitted == 0; i++) {
                RateLimiter.Decision p = rl.peek("Y" + i, 110);
                RateLimiter.Decision a = rl.acquire("Y" + i, 110);
                assertEquals("Y" + i, p, a);
                admitted += a.allowed() ? 1 : 0;
            }
            assertEquals(1, admitted);
        }
    }

    /* rate_limiter.h: a new key admitted untracked on a full table
     * (FULL_ALLOW, fail open) is "still held to the global limit", and
     * charged to it; fail closed denies it for good whatever the global
     * window's room. */
    @Test
    public void failOpenIsStillHeldToTheGlobalLimit() {
        for (int mode : new int[] {0, RateLimiter.EXACT}) {
            String m = mode == 0 ? "bucketed" : "exact";
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, mode | RateLimiter.FULL_ALLOW)) {
                rl.setGlobalLimit(3);
                rl.setMaxKeys(1);
                assertDecision(m, true, 1, 0, rl.acquire("A", 5, 2));
                assertDecision(m + ": untracked, charged globally", true, 0, 0, rl.acquire("B", 6));
                long leaves = mode == 0 ? 100 : 105; // bucket 0, or A's grants of 5
                assertDecision(m + ": the global window is full", false, 0, leaves, rl.peek("C", 7));
                assertDecision(m + ": the global window is full", false, 0, leaves, rl.acquire("C", 7));
                assertDecision(m + ": A too", false, 0, leaves, rl.acquire("A", 8));
                assertDecision(m + ": above the global limit", false, 0, NEVER, rl.acquire("C", 9, 4));
                assertCounters(rl.stats(), 1, 0, 0, 1);
                assertDecision(m, true, 0, 0, rl.acquire("C", leaves));
                assertCounters(rl.stats(), 1, 0, 0, 2);
            }
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, mode)) {
                rl.setGlobalLimit(3);
                rl.setMaxKeys(1);
                assertDecision(m, true, 2, 0, rl.acquire("A", 5));
                assertDecision(m + ": fail closed", false, 0, NEVER, rl.peek("B", 6));
                assertDecision(m + ": fail closed", false, 0, NEVER, rl.acquire("B", 6));
                assertDecision(m + ": the global window took nothing", true, 1, 0, rl.acquire("A", 7));
                assertCounters(rl.stats(), 1, 0, 1, 0);
            }
            // a new key denied by the full table still brings the global window to its time
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, mode)) {
                rl.setGlobalLimit(1);
                rl.setMaxKeys(1);
                assertDecision(m, true, 0, 0, rl.acquire("A", 10));
                assertDecision(m, false, 0, 110, rl.acquire("A", 95)); // A busy until 195
                assertDecision(m + ": fail closed", false, 0, NEVER, rl.acquire("B", 150));
                assertDecision(m + ": the global window at 150", true, 0, 0, rl.acquire("A", 100));
            }
        }
    }

    /* rate_limiter.h: a key is idle once its last request is a window old;
     * idle keys are reclaimed by sweeps of a few slots, never a full scan (4
     * slots of the key's shard when a new key is inserted, 8 slots of another
     * shard every 16th request of a shard), so by the requests that come in. */
    @Test
    public void idleKeysAreReclaimed() {
        try (RateLimiter rl = new RateLimiter(100, 1000, 100, 0, 0)) {
            for (int i = 0; i < 1000; i++) {
                assertTrue(rl.acquire("old-" + i, 10).allowed());
            }
            assertEquals(1000, rl.stats().keys());
            long before = rl.memory();
            // 2000 other keys, each every ~67 time units: never idle; the old
            // ones have been idle since 1010. 30 000 requests sweep every
            // shard's table many times over.
            for (int i = 0; i < 30_000; i++) {
                rl.acquire("new-" + (i % 2000), 2000 + i / 30);
            }
            RateLimiter.Stats s = rl.stats();
            assertCounters(s, 2000, 1000, 0, 0);
            assertEquals("stats().memory() is memory()", rl.memory(), s.memory());
            assertTrue(rl.memory() >= before);
            // a reclaimed key starts afresh
            assertDecision("", true, 99, 0, rl.peek("old-1", 3000));
        }
    }

    /* rate_limiter.h: a reclaimed key starts afresh, but a key the limiter
     * does not hold that asks before its shard's reclaim horizon (the latest
     * time up to which a key reclaimed there could still hold permits) is
     * denied until then, with remaining 0: a key whose clock runs behind the
     * others' earns nothing by being reclaimed. */
    @Test
    public void aReclaimedKeyBehindTheReclaimHorizonWaitsForIt() {
        inBothModes(1, 100, 10, (rl, flags, m) -> {
            rl.setKeyLimit("a", 2);
            assertDecision(m, true, 1, 0, rl.acquire("a", 1000));
            // other keys at 1200 (their clocks run ahead), until a, idle
            // for them, is reclaimed (it is the only idle key)
            for (int i = 0; rl.stats().reclaimed() == 0; i++) {
                assertTrue(m + ": a never reclaimed", i < 100_000);
                assertTrue(rl.acquire("other-" + i, 1200).allowed());
            }
            long keys = rl.stats().keys();
            byte[] blob = rl.serialize();
            // held, a would have a permit left at 1050 (one of two taken
            // at 1000); reclaimed, it must wait for the horizon 1000 + 100
            assertDecision(m, false, 0, 1100, rl.peek("a", 1050));
            assertDecision(m, false, 0, 1100, rl.acquire("a", 1050));
            assertDecision(m, false, 0, 1100, rl.acquire("a", 1099));
            assertDecision(m + ": above its limit", false, 2, NEVER, rl.acquire("a", 1099, 3));
            assertEquals(m + ": a denied new key leaves nothing", keys, rl.stats().keys());
            assertDecision(m, true, 1, 0, rl.acquire("a", 1100));
            // the blob keeps the horizon (the latest of the shards'): every
            // new key of the limiter read back waits for it
            try (RateLimiter back = RateLimiter.deserialize(blob)) {
                assertDecision(m, false, 0, 1100, back.acquire("never-seen", 1099));
                assertDecision(m, true, 0, 0, back.acquire("never-seen", 1100));
                assertDecision(m, true, 0, 0, back.acquire("other-0", 1201 + 100)); // held: as usual
            }
        });
    }

    /* A clock that goes backwards is clamped per key to the latest time that
     * key has seen: nothing is forgotten early. */
    @Test
    public void aClockThatGoesBackIsClamped() {
        try (RateLimiter rl = new RateLimiter(2, 100, 0, 0, RateLimiter.EXACT)) {
            assertTrue(rl.acquire("k", 100).allowed());
            assertTrue(rl.acquire("k", 150).allowed());
            assertDecision("at 50, read as 150", false, 0, 200, rl.acquire("k", 50));
            assertDecision("", false, 0, 200, rl.acquire("k", 199));
            assertDecision("the grant of 100 left", true, 0, 0, rl.acquire("k", 200));
            // another key has its own clock
            assertDecision("", true, 1, 0, rl.acquire("j", 60));
            assertDecision("", true, 0, 0, rl.acquire("j", 70));
            assertDecision("", false, 0, 160, rl.acquire("j", 80));
        }
        try (RateLimiter rl = new RateLimiter(2, 1000, 100, 0, 0)) {
            assertTrue(rl.acquire("k", 5000, 2).allowed());
            assertDecision("at 1, read as 5000", false, 0, 6000, rl.acquire("k", 1));
            assertDecision("", true, 1, 0, rl.acquire("k", 6000));
        }
    }

    /* rate_limiter.h: acquire first brings the key's window (and the global
     * window) to its time, "granted or not: a later call with an earlier time
     * is clamped to it"; a peek moves nothing. */
    @Test
    public void aDeniedAcquireMovesTheClocksAPeekDoesNot() {
        for (int flags : new int[] {0, RateLimiter.EXACT}) {
            String m = flags == 0 ? "bucketed" : "exact";
            try (RateLimiter rl = new RateLimiter(2, 100, 10, 0, flags)) {
                assertTrue(rl.acquire("k", 10).allowed());
                assertTrue(rl.acquire("k", 50).allowed());
                assertTrue(rl.acquire("j", 10).allowed());
                assertTrue(rl.acquire("j", 50).allowed());
                // at 115 the permit of 10 has left, that of 50 not: two do not fit
                assertDecision(m, false, 1, 150, rl.acquire("k", 115, 2));
                assertDecision(m, false, 1, 150, rl.peek("j", 115, 2));
                // k's clock is at 115, j's still at 50
                assertDecision(m + ": k at 60, read as 115", true, 0, 0, rl.acquire("k", 60));
                assertDecision(m + ": j at 60", false, 0, 110, rl.acquire("j", 60));
            }
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, flags)) {
                rl.setGlobalLimit(1);
                assertDecision(m, true, 0, 0, rl.acquire("A", 10));
                // denied (more than the key's limit), but the global window moves to 200
                assertDecision(m, false, 1, NEVER, rl.acquire("B", 200, 6));
                assertDecision(m + ": C at 50, the global window at 200", true, 0, 0, rl.acquire("C", 50));
            }
            try (RateLimiter rl = new RateLimiter(5, 100, 10, 0, flags)) {
                rl.setGlobalLimit(1);
                assertDecision(m, true, 0, 0, rl.acquire("A", 10));
                assertDecision(m, true, 0, 0, rl.peek("B", 200));
                assertDecision(m + ": the peek moved nothing", false, 0, 110, rl.acquire("C", 50));
            }
        }
    }

    /* Keys are bytes: the String form is its UTF-8; NUL bytes, the empty key
     * and long keys are keys like any other. */
    @Test
    public void keysAreBytes() {
        try (RateLimiter rl = new RateLimiter(1, 1000, 100, 0, 0)) {
            byte[][] keys = {
                {}, {0}, {0, 0}, {0, 'b', 'i', 'n', 0, (byte) 0xff, 0x7f}, utf8("héllo"), new byte[17], new byte[3000],
            };
            keys[6][2999] = 1;
            for (byte[] k : keys) {
                assertTrue(Arrays.toString(Arrays.copyOf(k, 8)), rl.acquire(k, 1).allowed());
            }
            for (byte[] k : keys) {
                assertFalse(rl.peek(k, 2).allowed());
            }
            assertFalse(rl.acquire("héllo", 2).allowed());
            assertFalse(rl.acquire("", 2).allowed());
            assertTrue(rl.acquire("hello", 2).allowed());
            assertEquals(keys.length + 1, rl.stats().keys());
        }
    }

    /* rate_limiter.h: bucketed, a 47-byte record for 10 buckets and keys of
     * up to 16 bytes (25 + 2 * (buckets + 1)), in tables kept 76-85% full
     * (grown by 1/8 once large): 55-62 bytes per key. Exact: a 33-byte record
     * plus a ring of grant times as large as the key's grants: 24 + 4 * 4
     * bytes for its first one (a window of at most 2^31 time units: 32-bit
     * offsets). 100 000 keys make every shard's table large. */
    @Test
    public void memoryPerKey() {
        final int n = 100_000;
        final double lowLoad = 0.85 / 1.125;
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            long empty = rl.memory();
            for (int i = 0; i < n; i++) {
                rl.acquire("k" + i, 1);
            }
            double perKey = (rl.memory() - empty) / (double) n;
            assertTrue("bucketed: bytes per key " + perKey, perKey >= 47 / 0.85 && perKey <= 47 / lowLoad);
            assertTrue("bucketed: bytes per key " + perKey, perKey >= 55 && perKey < 62.5);
        }
        try (RateLimiter rl = new RateLimiter(10, 1000, 0, 0, RateLimiter.EXACT)) {
            long empty = rl.memory();
            for (int i = 0; i < n; i++) {
                rl.acquire("k" + i, 1);
            }
            double perKey = (rl.memory() - empty) / (double) n;
            double ring = 24 + 4 * 4;
            assertTrue("exact: bytes per key " + perKey, perKey >= ring + 33 / 0.85 && perKey <= ring + 33 / lowLoad);
        }
    }

    /* ---- serialization ------------------------------------------------------ */

    /* Fills a limiter with some of everything the blob carries. */
    private static void fill(RateLimiter rl) {
        rl.setGlobalLimit(500);
        rl.setKeyLimit("vip", 9);
        rl.setKeyLimit(new byte[] {0, 1}, 1);
        rl.setMaxKeys(250);
        TestSupport.Rng rng = new TestSupport.Rng(8);
        for (int i = 0; i < 3000; i++) {
            int k = rng.below(300);
            String key = k == 0 ? "vip" : "key-" + k;
            rl.acquire(key, 1000 + i / 3, 1 + rng.below(2));
        }
        rl.acquire(new byte[] {0, 1}, 2000);
        rl.refund("key-5", 2000, 1);
    }

    @Test
    public void serializeRoundTrip() {
        for (int flags : new int[] {0, RateLimiter.EXACT, RateLimiter.FULL_ALLOW,
                RateLimiter.EXACT | RateLimiter.FULL_ALLOW}) {
            try (RateLimiter rl = new RateLimiter(4, 1000, 100, 0, flags)) {
                fill(rl);
                byte[] blob = rl.serialize();
                TestSupport.assertEnvelope(blob, 4, flags); // the envelope flags are the creation flags
                try (RateLimiter back = RateLimiter.deserialize(blob)) {
                    // the same counters (the memory follows the tables' sizes,
                    // which a deserialized limiter chooses for its keys)
                    RateLimiter.Stats st = rl.stats();
                    assertCounters(back.stats(), st.keys(), st.reclaimed(), st.deniedFull(), st.allowedFull());
                    // the same state, so the same bytes (keys and overrides in
                    // increasing byte order, whatever the tables' layout)
                    assertArrayEquals(blob, back.serialize());
                    // the same answers for every key, at a few times; a key that
                    // is limited stays limited after a restart
                    int limited = 0;
                    for (long now : new long[] {2000, 2500, 2999}) {
                        for (int k = 0; k < 320; k++) {
                            String key = k == 0 ? "vip" : "key-" + k;
                            RateLimiter.Decision want = rl.peek(key, now, 1 + k % 2);
                            assertEquals(key + " at " + now, want, back.peek(key, now, 1 + k % 2));
                            limited += want.allowed() ? 0 : 1;
                        }
                        assertEquals(rl.peek(new byte[] {0, 1}, now), back.peek(new byte[] {0, 1}, now));
                    }
                    assertTrue("limited " + limited, limited > 0);
                    // peeks changed nothing on either side
                    assertArrayEquals(blob, rl.serialize());
                    assertArrayEquals(blob, back.serialize());
                    // and they go on alike: overrides, key bound, global window
                    for (int i = 0; i < 500; i++) {
                        String key = i % 7 == 0 ? "vip" : "later-" + (i % 300);
                        assertEquals(key, rl.acquire(key, 3000 + i), back.acquire(key, 3000 + i));
                    }
                    RateLimiter.Stats after = rl.stats(); // the memory follows each side's table sizes
                    assertCounters(back.stats(), after.keys(), after.reclaimed(), after.deniedFull(),
                            after.allowedFull());
                    assertEquals(rl.serialize().length, back.serialize().length);
                }
            }
        }
    }

    /* rate_limiter.h: keys and overrides are written in increasing order of
     * their bytes, "so equal states give equal blobs whatever the tables'
     * history": here the same keys come in opposite orders, and one limiter
     * has then tracked and forgotten many others (its tables, grown for
     * them, stay larger: a table is rebuilt smaller only when it is left
     * under 68% full, and then 3/4 full, where the other's grew to about
     * 90%). The global limit comes after, so the forgotten keys' permits
     * are not in its window. */
    @Test
    public void equalStatesGiveEqualBlobs() {
        for (int flags : new int[] {0, RateLimiter.EXACT}) {
            try (RateLimiter a = new RateLimiter(4, 1000, 100, 0, flags);
                    RateLimiter b = new RateLimiter(4, 1000, 100, 0, flags)) {
                for (int i = 0; i < 300; i++) {
                    int j = 299 - i;
                    a.setKeyLimit("key-" + i, 1 + i % 7);
                    b.setKeyLimit("key-" + j, 1 + j % 7);
                }
                for (int i = 0; i < 600; i++) {
                    int j = 599 - i;
                    a.acquire("key-" + i, 20, 1 + i % 3);
                    b.acquire("key-" + j, 20, 1 + j % 3);
                }
                for (int i = 0; i < 3000; i++) {
                    b.acquire("gone-" + i, 20);
                }
                for (int i = 0; i < 3000; i++) {
                    b.reset("gone-" + i);
                }
                for (RateLimiter r : new RateLimiter[] {a, b}) {
                    r.setGlobalLimit(10_000);
                    r.setMaxKeys(5000);
                }
                a.acquire(new byte[] {0, 1, 2}, 20);
                b.acquire(new byte[] {0, 1, 2}, 20);
                assertEquals(a.stats().keys(), b.stats().keys());
                assertTrue(b.memory() > a.memory());
                byte[] blob = a.serialize();
                assertArrayEquals(blob, b.serialize());
                try (RateLimiter back = RateLimiter.deserialize(blob)) {
                    assertArrayEquals(blob, back.serialize());
                }
            }
        }
    }

    @Test
    public void anEmptyLimiterRoundTrips() {
        try (RateLimiter rl = new RateLimiter(1, 1, 1, 0, 0)) {
            byte[] blob = rl.serialize();
            try (RateLimiter back = RateLimiter.deserialize(blob)) {
                assertArrayEquals(blob, back.serialize());
                assertCounters(back.stats(), 0, 0, 0, 0);
                assertTrue(back.memory() > 0);
                assertDecision("", true, 0, 0, back.acquire("x", 1));
                assertDecision("", false, 0, 2, back.acquire("x", 1));
            }
        }
    }

    @Test
    public void hostileBlobs() {
        byte[] blob;
        try (RateLimiter rl = new RateLimiter(4, 1000, 100, 0, 0)) {
            fill(rl);
            blob = rl.serialize();
        }
        try (RateLimiter rl = TestSupport.checkHostileBlobs(blob, RateLimiter::deserialize, 4)) {
            assertArrayEquals(blob, rl.serialize());
        }
        TestSupport.checkMaxMemory(blob, RateLimiter::deserialize);
        expectStatus(Status.NULL, "blob", () -> RateLimiter.deserialize(null));
    }

    /* ---- errors ---------------------------------------------------------- */

    @Test
    public void badConstructorArguments() {
        expectStatus(Status.INVALID_ARGUMENT, "limit", () -> new RateLimiter(0, 1000, 100, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "limit", () -> new RateLimiter(0, 1000, 0, 0, RateLimiter.EXACT));
        expectStatus(Status.INVALID_ARGUMENT, "window", () -> new RateLimiter(5, 0, 100, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "window", () -> new RateLimiter(5, 0, 0, 0, RateLimiter.EXACT));
        expectStatus(Status.INVALID_ARGUMENT, "bucket_width", () -> new RateLimiter(5, 1000, 0, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "divide", () -> new RateLimiter(5, 1000, 300, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "divide", () -> new RateLimiter(5, 1000, 2000, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "buckets",
                () -> new RateLimiter(5, RateLimiter.MAX_BUCKETS + 1, 1, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, () -> new RateLimiter(RateLimiter.MAX_KEY_LIMIT + 1, 1000, 100, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT,
                () -> new RateLimiter(RateLimiter.MAX_EXACT_LIMIT + 1, 1000, 0, 0, RateLimiter.EXACT));
        expectStatus(Status.INVALID_ARGUMENT, "flag", () -> new RateLimiter(5, 1000, 100, 0, 4));
        // Java-side ranges: rejected, never wrapped
        expectStatus(Status.INVALID_ARGUMENT, "limit", () -> new RateLimiter(-5, 1000, 100, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "window", () -> new RateLimiter(5, -1000, 100, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "bucket_width", () -> new RateLimiter(5, 1000, -100, 0, 0));
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> new RateLimiter(5, 1000, 100, 0, -1));
        expectStatus(Status.INVALID_ARGUMENT, "flags", () -> new RateLimiter(5, 1000, 100, 0, Integer.MIN_VALUE));
        // the limits themselves are fine; exact mode ignores the bucket width
        new RateLimiter(RateLimiter.MAX_KEY_LIMIT, RateLimiter.MAX_BUCKETS, 1, 0, 0).close();
        new RateLimiter(RateLimiter.MAX_EXACT_LIMIT, 1000, 0, 0, RateLimiter.EXACT).close();
        new RateLimiter(5, 1000, 300, 0, RateLimiter.EXACT).close();
        new RateLimiter(1, Long.MAX_VALUE, Long.MAX_VALUE, 0, 0).close(); // one bucket
    }

    /* Timestamps and permit counts are unsigned in C: negative Java longs are
     * rejected before the call, zero by the library; nothing changes. */
    @Test
    public void badTimesAndCounts() {
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            assertTrue(rl.acquire("k", 5).allowed());
            byte[] before = rl.serialize();
            for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                String part = bad < 0 ? "now" : "now must be";
                expectStatus(Status.INVALID_ARGUMENT, part, () -> rl.acquire("k", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> rl.acquire(utf8("k"), bad, 1));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> rl.peek("k", bad));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> rl.peek("new", bad, 2));
                expectStatus(Status.INVALID_ARGUMENT, part, () -> rl.refund("k", bad, 1));
                String npart = bad < 0 ? "n is negative" : "n must be";
                expectStatus(Status.INVALID_ARGUMENT, npart, () -> rl.acquire("k", 5, bad));
                expectStatus(Status.INVALID_ARGUMENT, npart, () -> rl.peek("k", 5, bad));
                if (bad < 0) {
                    expectStatus(Status.INVALID_ARGUMENT, "n", () -> rl.refund("k", 5, bad));
                }
            }
            assertArrayEquals(before, rl.serialize());
            // huge n is no error: it never fits, so it is denied for good
            assertDecision("", false, 4, NEVER, rl.acquire("k", 5, Long.MAX_VALUE));
            assertDecision("", false, 5, NEVER, rl.acquire("fresh", 5, 1L << 40));
            assertEquals(1, rl.stats().keys());
            rl.refund("k", 5, Long.MAX_VALUE);
            assertDecision("", true, 4, 0, rl.peek("k", 5));
        }
    }

    @Test
    public void nullArguments() {
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            List<ThrowingRunnable> calls = new ArrayList<>(List.of(
                () -> rl.acquire((byte[]) null, 5), () -> rl.acquire((String) null, 5),
                () -> rl.acquire((byte[]) null, 5, 1), () -> rl.acquire((String) null, 5, 1),
                () -> rl.peek((byte[]) null, 5), () -> rl.peek((String) null, 5, 1),
                () -> rl.refund((byte[]) null, 5, 1), () -> rl.refund((String) null, 5, 1),
                () -> rl.reset((byte[]) null), () -> rl.reset((String) null),
                () -> rl.setKeyLimit((byte[]) null, 1), () -> rl.setKeyLimit((String) null, 1)));
            for (ThrowingRunnable call : calls) {
                expectStatus(Status.NULL, "key", call);
            }
            assertEquals(0, rl.stats().keys());
        }
    }

    @Test
    public void everyCallOnAClosedLimiterFailsCleanly() {
        RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0);
        rl.acquire("k", 5);
        assertEquals("RateLimiter(limit=5, window=1000, bucketWidth=100, flags=0, keys=1)", rl.toString());
        rl.close();
        assertTrue(rl.isClosed());
        assertEquals("RateLimiter(closed)", rl.toString());
        ThrowingRunnable[] calls = {
            () -> rl.acquire("k", 5), () -> rl.acquire(utf8("k"), 5), () -> rl.acquire("k", 5, 2),
            () -> rl.acquire(utf8("k"), 5, 2), () -> rl.peek("k", 5), () -> rl.peek(utf8("k"), 5),
            () -> rl.peek("k", 5, 2), () -> rl.peek(utf8("k"), 5, 2), () -> rl.refund("k", 5, 1),
            () -> rl.refund(utf8("k"), 5, 1), () -> rl.reset("k"), () -> rl.reset(utf8("k")),
            () -> rl.setGlobalLimit(5), () -> rl.setKeyLimit("k", 5), () -> rl.setKeyLimit(utf8("k"), 5),
            () -> rl.setMaxKeys(5), () -> rl.stats(), () -> rl.memory(), () -> rl.serialize(),
            () -> rl.info(),
        };
        for (ThrowingRunnable call : calls) {
            expectClosed("RateLimiter", call);
        }
        rl.close(); // idempotent
    }

    /* The native layer checks its output arrays and its buffer. */
    @Test
    public void theNativeLayerChecksItsArguments() {
        RateLimiterNative h = new RateLimiterNative(5, 1000, 100, 0, 0);
        try {
            byte[] k = {1};
            expectStatus(Status.NULL, "remaining", () -> h.acquire(k, 5, 1, null, new long[1]));
            expectStatus(Status.NULL, "retry_at", () -> h.peek(k, 5, 1, new long[1], null));
            expectStatus(Status.INVALID_ARGUMENT, "remaining", () -> h.acquire(k, 5, 1, new long[0], new long[1]));
            expectStatus(Status.INVALID_ARGUMENT, "retry_at", () -> h.peek(k, 5, 1, new long[1], new long[0]));
            assertEquals("nothing was taken", 0, keysOf(h));
            long[] remaining = {-7, -7};
            long[] retryAt = {-7, -7};
            assertEquals(1, h.acquire(k, 5, 1, remaining, retryAt));
            assertArrayEquals(new long[] {4, -7}, remaining);
            assertArrayEquals(new long[] {0, -7}, retryAt);
            assertEquals(0, h.acquire(k, 5, 6, remaining, retryAt));
            assertArrayEquals(new long[] {4, -7}, remaining);
            assertArrayEquals(new long[] {TemporalFilters.RETRY_NEVER, -7}, retryAt); // UINT64_MAX, its 64 bits
            TestSupport.checkSerializeInto(h);
        } finally {
            h.delete();
        }
        expectStatus(Status.NULL, "closed", () -> keysOf(h));
    }

    /* A failure is raised once: the next successful call does not see it. */
    @Test
    public void errorsDoNotLeakIntoLaterCalls() {
        try (RateLimiter rl = new RateLimiter(5, 1000, 100, 0, 0)) {
            expectStatus(Status.INVALID_ARGUMENT, () -> rl.acquire("k", 0));
            assertDecision("", true, 4, 0, rl.acquire("k", 3));
            expectStatus(Status.INVALID_ARGUMENT, () -> rl.acquire("k", 3, -3));
            assertDecision("", true, 3, 0, rl.peek("k", 3));
        }
    }

    @Test
    public void unclosedLimitersAreCleanedUp() throws InterruptedException {
        try (RateLimiter live = new RateLimiter(5, 1000, 100, 0, 0)) {
            live.acquire("live", 5);
            TestSupport.dropUnclosed(i -> {
                RateLimiter dropped = new RateLimiter(5, 1000, 0, 0, RateLimiter.EXACT);
                for (int k = 0; k < 20; k++) {
                    dropped.acquire("k" + k, 1 + i);
                }
                return dropped;
            });
            assertDecision("", true, 3, 0, live.acquire("live", 6));
            assertNotEquals(0, live.stats().keys());
        }
    }
}
