package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.Test;

/*
 * RateLimiter over many requests, against a reference written here from the
 * definitions (rate_limiter.h; its decision rules are those of ref_op() in
 * tests/rate_limiter/limiter_model.c):
 *  - a window (a key's or the global one) holds the permits granted in it;
 *    a permit granted at t leaves at t + window (exact) or when its bucket
 *    leaves, t / width * width + window (bucketed, the Rate Limiter README's queue of
 *    buckets); n permits are allowed when they fit under the limit among the
 *    permits still in the window;
 *  - with a global limit every decision (acquire and peek, whether the key
 *    allows or not) asks both windows: allowed when both allow, remaining
 *    the smaller after the decision (a denial takes nothing: a window that
 *    would have granted keeps its n), retry time the later of those of the
 *    windows that refuse;
 *  - acquire first brings the key's window (when the limiter holds the key)
 *    and the global window to its time, granted or not; an earlier time is
 *    clamped to it; a denied request takes nothing; peek changes nothing;
 *  - refund gives the key's newest permits back, to the global window too
 *    (the same buckets, or grant times, if they are still in it);
 * and the reference gives every decision (allowed, remaining, retry time).
 * Exact mode: the grants never exceed the limit in any window, per key and
 * globally; bucketed mode: they obey the bucketed bound. Many threads on
 * one limiter: the same bounds, checked afterwards. Each key's clock moves
 * forward at its own skew (so the global window sees a clock that goes back
 * and forth and is clamped), and now and then a key asks at a time before
 * its latest (clamped).
 */
public class RateLimiterPropertyTest {
    private static final long NEVER = TemporalFilters.RETRY_NEVER;

    /* ---- the reference ------------------------------------------------------ */

    /* One sliding window: when each of its permits leaves, oldest first. */
    private static final class Window {
        private final ArrayList<Long> leaves = new ArrayList<>();

        /* The index of the first permit still in the window at t. */
        private int firstLive(long t) {
            int i = 0;
            while (i < leaves.size() && leaves.get(i) <= t) {
                i++;
            }
            return i;
        }

        long used(long t) {
            return leaves.size() - firstLive(t);
        }

        /* The decision for n permits against `limit` at t; changes nothing. */
        RateLimiter.Decision decide(long t, long limit, long n) {
            int first = firstLive(t);
            long used = leaves.size() - first;
            if (n <= limit && used <= limit - n) {
                return new RateLimiter.Decision(true, limit - used - n, 0);
            }
            long remaining = used >= limit ? 0 : limit - used;
            // the (used + n - limit)-th oldest permit still in it must leave
            long retryAt = n > limit ? NEVER : leaves.get((int) (first + used + n - limit - 1));
            return new RateLimiter.Decision(false, remaining, retryAt);
        }

        /* Forgets the permits that left by t. */
        void advance(long t) {
            leaves.subList(0, firstLive(t)).clear();
        }

        void take(long leavesAt, long n) {
            for (long i = 0; i < n; i++) {
                leaves.add(leavesAt);
            }
        }

        boolean isEmpty() {
            return leaves.isEmpty();
        }

        /* Takes the newest permit out; returns when it would have left. */
        long popNewest() {
            return leaves.remove(leaves.size() - 1);
        }

        /* Takes out one permit leaving at `leavesAt`, if there is one. */
        boolean removeOne(long leavesAt) {
            int i = leaves.lastIndexOf(leavesAt);
            if (i < 0) {
                return false;
            }
            leaves.remove(i);
            return true;
        }

        void clear() {
            leaves.clear();
        }
    }

    /* Both windows' answers to a request of n permits: granted when both
     * grant; the fewer remaining after the decision (a denial takes nothing,
     * so a window that would have granted keeps its n); the later retry time
     * of the windows that refuse (compared as C compares them, unsigned: a
     * NEVER, -1L, is later than any time). */
    private static RateLimiter.Decision combine(RateLimiter.Decision a, RateLimiter.Decision b, long n) {
        boolean allowed = a.allowed() && b.allowed();
        long ta = a.allowed() ? 0 : a.retryAt();
        long tb = b.allowed() ? 0 : b.retryAt();
        long retryAt = allowed ? 0 : Long.compareUnsigned(ta, tb) >= 0 ? ta : tb;
        long ra = !allowed && a.allowed() ? a.remaining() + n : a.remaining();
        long rb = !allowed && b.allowed() ? b.remaining() + n : b.remaining();
        return new RateLimiter.Decision(allowed, Math.min(ra, rb), retryAt);
    }

    /* The whole limiter: key windows and clocks, overrides, the global window
     * (whose clock is clamped to the latest time it has seen), and, for the
     * invariants, the log of the permits each key holds (per reset epoch) and
     * of those the global window holds.
     *
     * Which keys the limiter still holds is not visible from here: an idle
     * key (a window after its latest time) may be reclaimed by any call that
     * comes that late, and a key not held that asks before its shard's
     * reclaim horizon is denied until then. So the reference knows a key's
     * record only while it is sure(): it took permits since its last reset,
     * and no call so far came a window after its latest time. Every other key
     * has an empty window from `newest` (the latest time of any call so far)
     * on, held or not, and no shard's horizon is after `newest`; such a key
     * is only asked at `newest` or later (replay), where its answers do not
     * depend on whether the limiter still holds it. */
    private static final class Model {
        final boolean exact;
        final long window;
        final long width;
        final long limit;
        final long globalLimit;
        final long[] overrides;
        final Window[] keys;
        final long[] latest;
        final boolean[] known; // the reference tracks the key's record (see sure())
        final boolean[] mayBeHeld; // granted since its last reset: the limiter may hold it
        final Window global = new Window();
        long globalLatest;
        long newest;
        final List<List<List<Long>>> keyLog = new ArrayList<>(); // key -> epochs -> held grant times
        final List<Long> globalLog = new ArrayList<>(); // held global grant times
        long reclaimed; // idle keys the limiter reclaimed meanwhile

        Model(boolean exact, long window, long width, long limit, long globalLimit, long[] overrides) {
            this.exact = exact;
            this.window = window;
            this.width = width;
            this.limit = limit;
            this.globalLimit = globalLimit;
            this.overrides = overrides;
            int n = overrides.length;
            this.keys = new Window[n];
            this.latest = new long[n];
            this.known = new boolean[n];
            this.mayBeHeld = new boolean[n];
            for (int k = 0; k < n; k++) {
                keys[k] = new Window();
                keyLog.add(new ArrayList<>());
                keyLog.get(k).add(new ArrayList<>());
            }
        }

        long limitOf(int k) {
            return overrides[k] != 0 ? overrides[k] : limit;
        }

        /* When a permit granted at t leaves the window. */
        long leavesAt(long t) {
            return exact ? t + window : t / width * width + window;
        }

        boolean sure(int k) {
            return known[k] && newest < latest[k] + window;
        }

        /* A key that may have been reclaimed: everything it held has left by
         * `newest` (latest + window <= newest), so the reference forgets it. */
        private void settle(int k) {
            if (known[k] && !sure(k)) {
                known[k] = false;
                keys[k].clear();
            }
        }

        private void seen(long now) {
            newest = Math.max(newest, now);
        }

        /* acquire (take) or peek of n permits for key k at now. */
        RateLimiter.Decision request(int k, long now, long n, boolean take) {
            settle(k);
            long t = known[k] ? Math.max(now, latest[k]) : now;
            RateLimiter.Decision d = keys[k].decide(t, limitOf(k), n);
            long gt = 0;
            if (globalLimit != 0) {
                gt = Math.max(t, globalLatest);
                d = combine(d, global.decide(gt, globalLimit, n), n);
            }
            if (take) {
                if (known[k]) { // the README's step 1, granted or not
                    latest[k] = t;
                    keys[k].advance(t);
                }
                if (globalLimit != 0) {
                    globalLatest = gt;
                    global.advance(gt);
                }
                if (d.allowed()) {
                    keys[k].take(leavesAt(t), n);
                    known[k] = true;
                    mayBeHeld[k] = true;
                    latest[k] = t;
                    List<Long> log = epoch(k);
                    for (long i = 0; i < n; i++) {
                        log.add(t);
                    }
                    if (globalLimit != 0) {
                        global.take(leavesAt(gt), n);
                        for (long i = 0; i < n; i++) {
                            globalLog.add(gt);
                        }
                    }
                }
            }
            seen(now);
            return d;
        }

        /* Whether a refund's effect is known: the limiter holds the key for
         * sure, certainly does not, or nothing else it does is seen (without
         * a global limit; with one, a refund of a key the limiter holds moves
         * the global clock). */
        boolean refundIsKnown(int k) {
            return sure(k) || !mayBeHeld[k] || globalLimit == 0;
        }

        void refund(int k, long now, long n) {
            settle(k);
            seen(now);
            if (!known[k]) {
                return; // a key not held: nothing
            }
            long t = Math.max(now, latest[k]);
            latest[k] = t;
            keys[k].advance(t);
            if (globalLimit != 0) {
                globalLatest = Math.max(t, globalLatest);
                global.advance(globalLatest);
            }
            List<Long> log = epoch(k);
            for (long i = 0; i < n && !keys[k].isEmpty(); i++) {
                long leaves = keys[k].popNewest();
                log.remove(log.size() - 1);
                // the global window gives back the same permit: its bucket,
                // or its grant time, if it is still there
                if (globalLimit != 0 && global.removeOne(leaves)) {
                    for (int j = globalLog.size() - 1;; j--) {
                        if (leavesAt(globalLog.get(j)) == leaves) {
                            globalLog.remove(j);
                            break;
                        }
                    }
                }
            }
        }

        void reset(int k) {
            keys[k].clear();
            known[k] = false;
            mayBeHeld[k] = false;
            keyLog.get(k).add(new ArrayList<>());
        }

        private List<Long> epoch(int k) {
            List<List<Long>> epochs = keyLog.get(k);
            return epochs.get(epochs.size() - 1);
        }
    }

    /* The most permits of `times` (ascending) within any span of `span` time
     * units: max over grants g of #{times in (g - span, g]}. */
    private static int maxWithin(List<Long> times, long span) {
        int most = 0;
        int from = 0;
        for (int to = 0; to < times.size(); to++) {
            assertTrue("times out of order", to == 0 || times.get(to) >= times.get(to - 1));
            while (times.get(from) <= times.get(to) - span) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most;
    }

    /* Keys of assorted shapes: short, with NUL bytes, longer than the inline
     * 16 bytes, longer than the JNI layer's stack buffer. */
    private static byte[][] keys(int n) {
        TestSupport.Rng rng = new TestSupport.Rng(99);
        byte[][] keys = new byte[n][];
        for (int k = 0; k < n; k++) {
            byte[] tail = rng.bytes(k % 10 == 3 ? 40 : k % 10 == 7 ? 2500 : k % 4);
            byte[] head = ("key-" + k + "/").getBytes(java.nio.charset.StandardCharsets.UTF_8);
            keys[k] = Arrays.copyOf(head, head.length + tail.length);
            System.arraycopy(tail, 0, keys[k], head.length, tail.length);
        }
        keys[1] = new byte[] {0}; // and two tiny ones
        keys[2] = new byte[0];
        return keys;
    }

    /* Random traffic through the limiter and the model side by side: every
     * decision equal. Each key's clock runs `maxSkew` time units at most
     * ahead of a common one (0: one clock for all); a key the reference does
     * not know for sure is asked no earlier than any call so far (see Model).
     * Returns the model, for the invariants of the mode. */
    private static Model replay(boolean exact, long requests, int nKeys, long globalLimit, int maxSkew, long seed) {
        final long window = 1000;
        final long width = 100;
        final long limit = 5;
        long[] overrides = new long[nKeys];
        overrides[0] = 1;
        overrides[5] = 12;
        overrides[6] = 200;
        byte[][] keys = keys(nKeys);
        Model m = new Model(exact, window, width, limit, globalLimit, overrides);
        TestSupport.Rng rng = new TestSupport.Rng(seed);
        long[] skew = new long[nKeys];
        long[] last = new long[nKeys];
        for (int k = 0; k < nKeys; k++) {
            skew[k] = maxSkew == 0 ? 0 : rng.below(maxSkew);
        }
        long base = 1;
        long allowed = 0;
        long denied = 0;
        long never = 0;
        long backwards = 0;
        long refunds = 0;
        long peeks = 0;
        try (RateLimiter rl = new RateLimiter(limit, window, exact ? 0 : width, 0, exact ? RateLimiter.EXACT : 0)) {
            if (globalLimit != 0) {
                rl.setGlobalLimit(globalLimit);
            }
            for (int k = 0; k < nKeys; k++) {
                if (overrides[k] != 0) {
                    rl.setKeyLimit(keys[k], overrides[k]);
                }
            }
            for (long i = 0; i < requests; i++) {
                base += rng.below(4);
                int k = rng.below(nKeys);
                long t = Math.max(last[k], base + skew[k]); // each key's clock moves forward
                if (!m.sure(k)) {
                    t = Math.max(t, m.newest);
                }
                last[k] = t;
                if (m.sure(k) && rng.below(20) == 0) { // and now and then goes back: clamped
                    t = Math.max(1, m.latest[k] - rng.below((int) window));
                    backwards += t < m.latest[k] ? 1 : 0;
                }
                int op = rng.below(100);
                long n = op < 70 ? 1 : op < 85 ? 2 + rng.below(3) : op < 87 ? m.limitOf(k) + 1 : 1 + rng.below(4);
                if (op >= 96 && op < 99 && !m.refundIsKnown(k)) {
                    op = 90; // a peek instead
                }
                String what = "request " + i + ": key " + k + " at " + t + " n " + n;
                if (op < 88) {
                    RateLimiter.Decision want = m.request(k, t, n, true);
                    RateLimiter.Decision got = rl.acquire(keys[k], t, n);
                    assertEquals("acquire, " + what, want, got);
                    allowed += got.allowed() ? 1 : 0;
                    denied += got.allowed() ? 0 : 1;
                    never += got.retryAt() == NEVER ? 1 : 0;
                } else if (op < 96) {
                    // peek changes nothing, not even the clocks: now and then
                    // the whole state is compared byte for byte
                    byte[] before = peeks % 101 == 0 ? rl.serialize() : null;
                    assertEquals("peek, " + what, m.request(k, t, n, false), rl.peek(keys[k], t, n));
                    if (before != null) {
                        assertArrayEquals("peek changed the state, " + what, before, rl.serialize());
                    }
                    peeks++;
                } else if (op < 99) {
                    m.refund(k, t, n);
                    rl.refund(keys[k], t, n);
                    refunds++;
                } else if (rng.below(4) == 0) {
                    m.reset(k);
                    rl.reset(keys[k]);
                }
            }
            m.reclaimed = rl.stats().reclaimed();
        }
        assertTrue("allowed " + allowed, allowed > requests / 10);
        assertTrue("denied " + denied, denied > requests / 10);
        assertTrue("never " + never, never > 0);
        assertTrue("backwards " + backwards, backwards > requests / 100);
        assertTrue("refunds " + refunds, refunds > requests / 100);
        assertTrue("peeks " + peeks, peeks > requests / 20);
        return m;
    }

    /* Exact mode: 1e5 requests of 40 keys (overrides among them), each with
     * its own clock, and a global limit that binds part of the time (its
     * clock goes back and forth): every decision as the reference, and never
     * more than a key's limit in any window, nor more than the global limit. */
    @Test
    public void exactModeNeverExceedsTheLimitInAnyWindow() {
        Model m = replay(true, 100_000, 40, 120, 300, 1);
        int worst = 0;
        for (int k = 0; k < m.keys.length; k++) {
            for (List<Long> epoch : m.keyLog.get(k)) {
                int most = maxWithin(epoch, m.window);
                assertTrue("key " + k + ": " + most + " grants within a window", most <= m.limitOf(k));
                worst = Math.max(worst, most);
            }
        }
        int global = maxWithin(m.globalLog, m.window);
        assertTrue("global: " + global + " grants within a window", global <= m.globalLimit);
        assertEquals("the global limit binds", m.globalLimit, global);
        int key5 = 0;
        for (List<Long> epoch : m.keyLog.get(5)) {
            key5 = Math.max(key5, maxWithin(epoch, m.window));
        }
        assertEquals("key 5 reaches its override", 12, key5);
    }

    /* Exact mode without a global limit, more keys, some idle long enough to
     * be reclaimed, one clock. */
    @Test
    public void exactModeWithoutAGlobalLimit() {
        Model m = replay(true, 60_000, 200, 0, 0, 2);
        for (int k = 0; k < m.keys.length; k++) {
            for (List<Long> epoch : m.keyLog.get(k)) {
                assertTrue("key " + k, maxWithin(epoch, m.window) <= m.limitOf(k));
            }
        }
        assertTrue("reclaimed " + m.reclaimed, m.reclaimed > 0);
    }

    /* rate_limiter.h: a clock that goes backwards is clamped per key, "nothing
     * is forgotten early"; exact mode: "never more than `limit` grants in any
     * half-open interval (t - window, t]". Here each key's own clock only
     * moves forward, but the requests of other keys carry later times (as
     * requests of other threads do when they read the clock later and call
     * sooner). A key's grant must count for a whole window of its own time,
     * whether the limiter still holds the key (its own window) or reclaimed it
     * (the reclaim horizon: RateLimiterTest tells the two apart). */
    @Test
    public void aKeyIsNotForgottenByTheClockOfOtherKeys() {
        try (RateLimiter rl = new RateLimiter(1, 1000, 0, 0, RateLimiter.EXACT)) {
            assertTrue(rl.acquire("a", 1000).allowed());
            for (int i = 0; i < 5000; i++) {
                rl.acquire("other-" + i, 2000);
            }
            RateLimiter.Decision d = rl.acquire("a", 1500);
            assertEquals("a second grant of \"a\" within 500 time units, limit 1 per 1000 (" + rl.stats() + ")",
                    new RateLimiter.Decision(false, 0, 2000), d);
        }
        // the same with random traffic: 200 keys, some idle for a while (and
        // reclaimed), each up to 300 time units ahead of the others
        Model m = replay(true, 60_000, 200, 0, 300, 2);
        assertTrue("reclaimed " + m.reclaimed, m.reclaimed > 0);
        for (int k = 0; k < m.keys.length; k++) {
            for (List<Long> epoch : m.keyLog.get(k)) {
                assertTrue("key " + k, maxWithin(epoch, m.window) <= m.limitOf(k));
            }
        }
    }

    /* Bucketed mode: every decision as the Rate Limiter README's queue, and the bucketed
     * bound: a request is admitted when the buckets of the last
     * window / width bucket indexes hold room for it, and those always cover
     * the last window - width + 1 time units, so no span of that length ever
     * holds more than the limit, and a whole window at most twice the limit
     * (reached by the README's own example, see RateLimiterTest). */
    @Test
    public void bucketedModeFollowsTheReadmesQueueAndItsBound() {
        for (long global : new long[] {0, 120}) {
            Model m = replay(false, 100_000, 40, global, 300, 3 + global);
            boolean over = false;
            for (int k = 0; k < m.keys.length; k++) {
                for (List<Long> epoch : m.keyLog.get(k)) {
                    long lim = m.limitOf(k);
                    int inSpan = maxWithin(epoch, m.window - m.width + 1);
                    assertTrue("key " + k + ": " + inSpan + " grants within window - width + 1", inSpan <= lim);
                    int inWindow = maxWithin(epoch, m.window);
                    assertTrue("key " + k + ": " + inWindow + " grants within a window", inWindow <= 2 * lim);
                    over |= inWindow > lim;
                }
            }
            if (global != 0) {
                assertTrue(maxWithin(m.globalLog, m.window - m.width + 1) <= global);
                assertTrue(maxWithin(m.globalLog, m.window) <= 2 * global);
            }
            assertTrue("the bucketed mode over-admits within some window", over);
        }
    }

    /* ---- many threads ------------------------------------------------------- */

    /* THREADS threads hammer a few hot keys of one limiter (a global limit
     * too), in rounds: all requests of a round happen at one time and a
     * barrier separates the rounds, so whatever the interleaving, in each
     * round a key is granted exactly min(requests, room) single permits when
     * the global window has room for all of them, and the round's grants are
     * min(sum of those, global room) otherwise. Checked against the
     * reference round by round, and afterwards no key and not the whole
     * exceeded its limit within any window (exact mode) or the bucketed
     * bound. Peeks, stats and memory run meanwhile. */
    @Test
    public void manyThreadsNeverExceedTheLimits() throws Exception {
        final int threads = 8;
        final int hot = 16;
        final int rounds = 150;
        final int perRound = 30;
        for (boolean exact : new boolean[] {true, false}) {
            long[] overrides = new long[hot];
            overrides[3] = 9;
            Model m = new Model(exact, 1000, 100, 5, 40, overrides);
            long[] times = new long[rounds];
            TestSupport.Rng clock = new TestSupport.Rng(11);
            times[0] = 1;
            for (int r = 1; r < rounds; r++) {
                times[r] = times[r - 1] + 1 + clock.below(150);
            }
            AtomicLongArray asked = new AtomicLongArray(rounds * hot);
            AtomicLongArray granted = new AtomicLongArray(rounds * hot);
            AtomicLong peeks = new AtomicLong();
            try (RateLimiter rl = new RateLimiter(5, 1000, exact ? 0 : 100, 0, exact ? RateLimiter.EXACT : 0)) {
                rl.setGlobalLimit(40);
                rl.setKeyLimit("hot-3", 9);
                CyclicBarrier barrier = new CyclicBarrier(threads);
                TestSupport.onThreads(threads, id -> {
                    TestSupport.Rng rng = new TestSupport.Rng(100 + id);
                    for (int r = 0; r < rounds; r++) {
                        barrier.await();
                        for (int i = 0; i < perRound; i++) {
                            int k = rng.below(hot);
                            if (id == 0 && i % 10 == 0) {
                                assertTrue(rl.stats().keys() <= hot);
                                assertTrue(rl.memory() > 0);
                            }
                            if (rng.below(5) == 0) {
                                RateLimiter.Decision p = rl.peek("hot-" + k, times[r]);
                                assertTrue(p.allowed() || Long.compareUnsigned(p.retryAt(), times[r]) > 0);
                                peeks.incrementAndGet();
                                continue;
                            }
                            RateLimiter.Decision d = rl.acquire("hot-" + k, times[r]);
                            asked.incrementAndGet(r * hot + k);
                            if (d.allowed()) {
                                granted.incrementAndGet(r * hot + k);
                            } else {
                                assertTrue(d.retryAt() > times[r] && d.retryAt() != NEVER);
                            }
                        }
                    }
                });
            }
            long total = 0;
            for (int r = 0; r < rounds; r++) {
                long t = times[r];
                long room = 0;
                long roundGrants = 0;
                long gRoom = m.globalLimit - m.global.used(Math.max(t, m.globalLatest));
                for (int k = 0; k < hot; k++) {
                    long keyRoom = m.limitOf(k) - m.keys[k].used(t);
                    long want = Math.min(asked.get(r * hot + k), keyRoom);
                    long got = granted.get(r * hot + k);
                    String what = (exact ? "exact" : "bucketed") + " round " + r + " key " + k;
                    assertTrue(what + ": " + got + " of " + want, got <= want);
                    room += want;
                    roundGrants += got;
                }
                assertEquals("round " + r + " grants", Math.min(room, gRoom), roundGrants);
                if (room <= gRoom) { // the global window did not bind: each key got all it could
                    for (int k = 0; k < hot; k++) {
                        long keyRoom = m.limitOf(k) - m.keys[k].used(t);
                        assertEquals("round " + r + " key " + k, Math.min(asked.get(r * hot + k), keyRoom),
                                granted.get(r * hot + k));
                    }
                }
                for (int k = 0; k < hot; k++) {
                    long got = granted.get(r * hot + k);
                    if (got > 0) { // the grants of the round, into the reference
                        assertTrue(m.request(k, t, got, true).allowed());
                    }
                }
                total += roundGrants;
            }
            for (int k = 0; k < hot; k++) {
                List<Long> log = m.keyLog.get(k).get(0);
                long lim = m.limitOf(k);
                if (exact) {
                    assertTrue("key " + k, maxWithin(log, 1000) <= lim);
                } else {
                    assertTrue("key " + k, maxWithin(log, 1000 - 100 + 1) <= lim);
                }
            }
            assertTrue(maxWithin(m.globalLog, exact ? 1000 : 901) <= 40);
            // the global limit binds (16 keys x 5 > 40): most of its room is used
            long windows = times[rounds - 1] / 1000;
            assertTrue("grants " + total + " in " + windows + " windows", total >= windows * 40 / 2);
            assertTrue(peeks.get() > 0);
        }
    }
}
