package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.AfterClass;
import org.junit.Assume;
import org.junit.BeforeClass;
import org.junit.Test;
import org.junit.function.ThrowingRunnable;

/*
 * RedisLimiter against a redis-server and a three-master Redis Cluster
 * started by tests/redis/redis_fixture (TF_REDIS_FIXTURE, set by the Meson
 * build; test java_redis): the decisions equal the embedded RateLimiter's
 * on the C suite's request sequence (both modes, overrides, the global
 * limit, batches, refunds, resets) on both; the failure policy on a killed
 * server (the exception, its status and the fallback's decision, the
 * counters) for each fallback, and on a paused one (the timeout honoured);
 * a restart resumes by itself; the server's clock; closed limiters; bad
 * arguments; the JNI library loaded on first use. Skips, saying why, only
 * when redis-server is not installed.
 */
public class RedisLimiterTest {
    private static final String[] KEYS = {"alice", "bob", "carol", "vip", "low", "", "k{x}y", "bin\0ary"};

    /* The servers of one redis_fixture process: its ports, and its commands
     * (kill, restart, pause, resume). Stopped when its stdin closes. */
    static final class Fixture implements AutoCloseable {
        private final Process process;
        private final Writer in;
        private final BufferedReader out;
        int server;
        final List<Integer> cluster = new ArrayList<>();

        Fixture(String... what) throws IOException {
            List<String> cmd = new ArrayList<>();
            cmd.add(System.getenv("TF_REDIS_FIXTURE"));
            cmd.addAll(List.of(what));
            process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            for (String line; (line = out.readLine()) != null;) {
                String[] words = line.trim().split("\\s+");
                switch (words[0]) {
                    case "server":
                        server = Integer.parseInt(words[1]);
                        break;
                    case "cluster":
                        for (int i = 1; i < words.length; i++) {
                            cluster.add(Integer.parseInt(words[i]));
                        }
                        break;
                    case "ready":
                        return;
                    default:
                        break;
                }
            }
            throw new IOException("redis_fixture did not start its servers");
        }

        String command(String word) throws IOException {
            in.write(word + "\n");
            in.flush();
            String line = out.readLine();
            return line == null ? "" : line.trim();
        }

        @Override
        public void close() throws IOException {
            in.close();
            try {
                process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Fixture shared;
    private static int seq;

    private static boolean redisServerInstalled() {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "" : path).split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "redis-server"))) {
                return true;
            }
        }
        return false;
    }

    @BeforeClass
    public static void startServers() throws IOException {
        if (!redisServerInstalled()) {
            System.err.println("RedisLimiterTest skipped: redis-server is not installed (Debian: apt-get install "
                               + "redis-server): the Redis tests need it");
        }
        Assume.assumeTrue("redis-server is not installed (Debian: apt-get install redis-server)",
                          redisServerInstalled());
        String fixture = System.getenv("TF_REDIS_FIXTURE");
        assertTrue("TF_REDIS_FIXTURE names tests/redis/redis_fixture (meson test java_redis sets it)",
                   fixture != null && Files.isExecutable(Path.of(fixture)));
        shared = new Fixture("server", "cluster");
    }

    @AfterClass
    public static void stopServers() throws IOException {
        if (shared != null) {
            shared.close();
        }
    }

    private static String prefix() {
        return "test:java:" + ProcessHandle.current().pid() + ":" + (++seq) + ":";
    }

    private static RedisLimiter.Builder onServer(long limit, long window, long width) {
        return RedisLimiter.builder(limit, window, width).port(shared.server).prefix(prefix())
            .idleExpiryMillis(600_000);
    }

    private static RedisLimiter.Builder onCluster(long limit, long window, long width) {
        return RedisLimiter.builder(limit, window, width).port(shared.cluster.get(0)).cluster(null)
            .prefix(prefix()).idleExpiryMillis(600_000);
    }

    /* Both limiters, the same call. */
    private static void both(RateLimiter e, RedisLimiter r, Consumer<RateLimiter> onE, Consumer<RedisLimiter> onR) {
        onE.accept(e);
        onR.accept(r);
    }

    /* The C suite's sequence (tests/redis/test_redis_limiter.c, as the Go and
     * Ruby tests run it): random keys, permits and steps of time; acquires,
     * peeks, batches, refunds, resets, overrides and the global limit. */
    private static void runSequence(RateLimiter e, RedisLimiter r, long seed, boolean global) {
        Random rng = new Random(seed);
        long now = 1000;
        both(e, r, l -> l.setKeyLimit("vip", 9), l -> l.setKeyLimit("vip", 9));
        both(e, r, l -> l.setKeyLimit("low", 1), l -> l.setKeyLimit("low", 1));
        if (global) {
            both(e, r, l -> l.setGlobalLimit(12), l -> l.setGlobalLimit(12));
        }
        int granted = 0;
        int denied = 0;
        for (int step = 0; step < 600; step++) {
            now += rng.nextInt(4) == 0 ? rng.nextInt(400) : rng.nextInt(30);
            String k = KEYS[rng.nextInt(KEYS.length)];
            long n = rng.nextInt(20) == 0 ? 1 + rng.nextInt(12) : 1 + rng.nextInt(2);
            int op = rng.nextInt(100);
            final long t = now;
            if (op < 70) {
                RateLimiter.Decision a = e.acquire(k, t, n);
                assertEquals("step " + step + ": acquire " + k, a, r.acquire(k, t, n));
                if (a.allowed()) {
                    granted++;
                } else {
                    denied++;
                }
            } else if (op < 80) {
                assertEquals("step " + step + ": peek " + k, e.peek(k, t, n), r.peek(k, t, n));
            } else if (op < 88) {
                String[] ks = new String[4];
                long[] times = new long[4];
                for (int i = 0; i < 4; i++) {
                    ks[i] = KEYS[rng.nextInt(KEYS.length)];
                    times[i] = now + i;
                }
                now += 3;
                assertArrayEquals("step " + step + ": batch", e.acquireBatch(ks, times, n),
                                  r.acquireBatch(ks, times, n));
            } else if (op < 94) {
                both(e, r, l -> l.refund(k, t, n), l -> l.refund(k, t, n));
            } else if (op < 96) {
                both(e, r, l -> l.reset(k), l -> l.reset(k));
            } else if (op < 98) {
                long lim = rng.nextInt(6);
                both(e, r, l -> l.setKeyLimit(k, lim), l -> l.setKeyLimit(k, lim));
            } else if (global && op < 99) {
                long lim = 8 + rng.nextInt(10);
                both(e, r, l -> l.setGlobalLimit(lim), l -> l.setGlobalLimit(lim));
                /* On the caller's clock the new global window may answer
                 * otherwise in the bucket it was set in (redis.h,
                 * tf_redis_limiter_set_global_limit): the C suite moves to
                 * the next bucket (of 100), and so does this one. */
                now = (now / 100 + 1) * 100;
            }
        }
        assertTrue("the sequence granted " + granted + " and denied " + denied, granted > 40 && denied > 40);
    }

    private static void checkSameDecisions(boolean cluster) {
        for (int flags : new int[] {0, RateLimiter.EXACT}) {
            for (boolean global : new boolean[] {false, true}) {
                try (RateLimiter e = new RateLimiter(5, 1000, 100, 0, flags);
                     RedisLimiter r = (cluster ? onCluster(5, 1000, 100) : onServer(5, 1000, 100)).flags(flags)
                         .build()) {
                    runSequence(e, r, 42 + 2L * flags + (global ? 1 : 0), global);
                    RedisLimiter.Stats s = r.stats();
                    assertTrue(s.toString(), s.decisions() > 400);
                    assertEquals(s.toString(), 0, s.timeouts() + s.unavailable() + s.fallbackDenied()
                                                      + s.fallbackAllowed() + s.fallbackLocal());
                    assertEquals(s.toString(), cluster ? 3 : 1, s.scriptLoads());
                    if (cluster && global) {
                        assertTrue("a global undo on the cluster: " + s, s.globalUndos() > 0);
                    }
                }
            }
        }
    }

    @Test
    public void sameDecisionsAsEmbeddedOnAServer() {
        checkSameDecisions(false);
    }

    @Test
    public void sameDecisionsAsEmbeddedOnACluster() {
        checkSameDecisions(true);
    }

    @Test
    public void limitersOfOnePrefixShareTheState() {
        String p = prefix();
        try (RedisLimiter a = RedisLimiter.builder(2, 1000, 100).port(shared.server).prefix(p).build();
             RedisLimiter b = RedisLimiter.builder(2, 1000, 100).port(shared.server).prefix(p).build()) {
            assertTrue(a.acquire("k", 10).allowed());
            assertTrue(b.acquire("k", 11).allowed());
            assertEquals(new RateLimiter.Decision(false, 0, 1000), a.acquire("k", 12));
            b.setKeyLimit("k", 3);
            assertTrue("the override is in Redis", a.acquire("k", 13).allowed());
        }
    }

    @Test
    public void serverClock() {
        try (RedisLimiter l = onServer(2, 60_000, 1000).timeSource(RedisLimiter.TimeSource.SERVER).build()) {
            assertTrue(l.acquire("k", 0).allowed());
            assertTrue(l.acquire("k", 0).allowed());
            RateLimiter.Decision d = l.acquire("k", 0);
            assertFalse(d.allowed());
            assertTrue("a time of the server's clock, in milliseconds: " + d, d.retryAt() > 1_600_000_000_000L);
            RateLimiter.Decision[] b = l.acquireBatch(new String[] {"x", "y", "z"}, new long[0], 1);
            assertEquals(3, b.length);
            for (RateLimiter.Decision x : b) {
                assertTrue(x.allowed());
            }
            assertThrows(InvalidArgumentException.class, () -> l.acquire("k", 5));
            assertThrows(InvalidArgumentException.class,
                         () -> l.acquireBatch(new String[] {"x"}, new long[] {5}, 1));
        }
    }

    @Test
    public void closed() throws Exception {
        RedisLimiter l = onServer(2, 1000, 100).build();
        assertFalse(l.isClosed());
        assertTrue(l.toString(), l.toString().startsWith("RedisLimiter(decisions=0"));
        l.close();
        assertTrue(l.isClosed());
        l.close(); // closing twice is harmless
        assertEquals("RedisLimiter(closed)", l.toString());
        List<ThrowingRunnable> calls = List.of(() -> l.acquire("k", 1), () -> l.peek("k", 1),
            () -> l.acquireBatch(new String[] {"k"}, new long[] {1}, 1), () -> l.refund("k", 1, 1),
            () -> l.reset("k"), () -> l.setKeyLimit("k", 1), () -> l.setGlobalLimit(1), l::stats);
        for (ThrowingRunnable call : calls) {
            ClosedException e = assertThrows(ClosedException.class, call);
            assertEquals("the RedisLimiter is closed", e.detail());
        }
        // every public method, found by reflection (ClosedHandleTest does
        // the structures), and the deleted native proxy
        List<String> want = List.of("acquire", "peek", "acquireBatch", "refund", "reset", "setKeyLimit",
                                    "setGlobalLimit", "stats");
        assertTrue(TestSupport.checkEveryMethodClosed(l).containsAll(want));
    }

    private static void assertInvalid(ThrowingRunnable call) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
        TestSupport.checkConsistent(e);
        assertFalse(e.detail().isEmpty());
    }

    @Test
    public void badArguments() {
        int port = shared.server;
        assertInvalid(() -> RedisLimiter.builder(0, 1000, 100).port(port).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 300).port(port).build());
        assertInvalid(() -> RedisLimiter.builder(5, 0, 100).port(port).build());
        assertInvalid(() -> RedisLimiter.builder(5, -1, 100).port(port).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1L << 51, 1L << 50).port(port).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).port(port).flags(RateLimiter.FULL_ALLOW).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).port(0).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).port(70_000).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).port(port).prefix("a{b").build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).port(port).connectTimeoutMillis(0).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).port(port).commandTimeoutMillis(-5).build());
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).fallback(null));
        assertInvalid(() -> RedisLimiter.builder(5, 1000, 100).timeSource(null));
        try (RedisLimiter l = onServer(5, 1000, 100).build()) {
            assertInvalid(() -> l.acquire("k", 0));
            assertInvalid(() -> l.acquire("k", -3));
            assertInvalid(() -> l.acquire("k", 10, 0));
            assertInvalid(() -> l.acquire((String) null, 10));
            assertInvalid(() -> l.acquire((byte[]) null, 10));
            assertInvalid(() -> l.peek("k", 10, 0));
            assertInvalid(() -> l.acquire(new byte[65_537], 10));
            assertInvalid(() -> l.acquireBatch(new String[] {"a", "b"}, new long[] {1}, 1));
            assertInvalid(() -> l.acquireBatch(new String[] {"a", "b"}, new long[] {1, 2}, 0));
            assertInvalid(() -> l.acquireBatch(new String[] {"a", "b"}, new long[] {1, 0}, 1));
            assertInvalid(() -> l.acquireBatch(new String[] {"a", "b"}, null, 1));
            assertInvalid(() -> l.acquireBatch((KeyBatch) null, new long[] {1}, 1));
            assertInvalid(() -> l.acquireBatch(new String[] {"a", null}, new long[] {1, 2}, 1));
            assertInvalid(() -> l.setKeyLimit("k", 70_000));
            assertInvalid(() -> l.setKeyLimit("k", -1));
            assertInvalid(() -> l.setGlobalLimit(-1));
            assertInvalid(() -> l.refund("k", 0, 1));
            assertInvalid(() -> l.reset((String) null));
            assertEquals("nothing was decided", 0, l.stats().decisions());
            assertEquals("nothing was taken", new RateLimiter.Decision(true, 4, 0), l.acquire("k", 10));
        }
    }

    @Test
    public void unreachableServerAtCreation() {
        UnavailableException e = assertThrows(UnavailableException.class,
            () -> RedisLimiter.builder(5, 1000, 100).port(shared.server + 1).connectTimeoutMillis(200).build());
        assertTrue(e.toString(), e.status() == Status.TIMEOUT || e.status() == Status.UNAVAILABLE);
        TestSupport.checkConsistent(e);
        assertNull(e.decision());
        assertEquals(List.of(), e.decisions());
    }

    private static UnavailableException unavailable(ThrowingRunnable call) {
        UnavailableException e = assertThrows(UnavailableException.class, call);
        assertTrue(e.toString(), e.status() == Status.TIMEOUT || e.status() == Status.UNAVAILABLE);
        TestSupport.checkConsistent(e);
        assertFalse(e.detail().isEmpty());
        return e;
    }

    /* Redis's decision on key at t once it answers again (the limiter
     * reconnects by itself after its backoff), or null after 50 tries 50 ms
     * apart. */
    private static RateLimiter.Decision decidesAgain(RedisLimiter l, String key, long t) throws InterruptedException {
        for (int i = 0; i < 50; i++) {
            try {
                return l.acquire(key, t);
            } catch (UnavailableException again) {
                Thread.sleep(50);
            }
        }
        return null;
    }

    /* A server of its own, killed under three limiters (deny, allow, the
     * embedded fallback): every decision throws UnavailableException with
     * the fallback's decision, counted; restarted, Redis decides again by
     * itself. */
    @Test
    public void fallbackOnAStoppedServer() throws IOException, InterruptedException {
        try (Fixture own = new Fixture("server")) {
            RedisLimiter.Builder b = RedisLimiter.builder(2, 1000, 100).port(own.server).prefix(prefix())
                .idleExpiryMillis(600_000).connectTimeoutMillis(300).commandTimeoutMillis(300).reconnectMillis(10, 20);
            try (RedisLimiter deny = b.build();
                 RedisLimiter allow = b.fallback(RedisLimiter.Fallback.ALLOW).build();
                 RedisLimiter local = b.fallback(RedisLimiter.Fallback.LOCAL).build();
                 RateLimiter embedded = new RateLimiter(2, 1000, 100)) {
                assertTrue(deny.acquire("k", 10).allowed());
                assertEquals("killed", own.command("kill"));

                UnavailableException e = unavailable(() -> deny.acquire("k", 20));
                assertEquals(new RateLimiter.Decision(false, 0, e.decision().retryAt()), e.decision());
                assertEquals(List.of(), e.decisions());
                e = unavailable(() -> allow.acquire("k", 20));
                assertTrue(e.decision().allowed());
                e = unavailable(() -> allow.peek("k", 21));
                assertTrue(e.decision().allowed());
                e = unavailable(() -> deny.acquireBatch(new String[] {"a", "b"}, new long[] {21, 22}, 1));
                assertNull(e.decision());
                assertEquals(2, e.decisions().size());
                assertFalse(e.decisions().get(0).allowed());
                assertFalse(e.decisions().get(1).allowed());
                e = unavailable(() -> deny.reset("k"));
                assertNull("no decision: " + e, e.decision());
                e = unavailable(() -> deny.setGlobalLimit(3));
                assertNull(e.decision());

                // the embedded fallback decides as an embedded limiter of the same limits
                for (int i = 0; i < 5; i++) {
                    RateLimiter.Decision want = embedded.acquire("e", 30 + i);
                    final long t = 30 + i;
                    assertEquals("step " + i, want, unavailable(() -> local.acquire("e", t)).decision());
                }

                RedisLimiter.Stats s = deny.stats();
                assertEquals(s.toString(), 4, s.timeouts() + s.unavailable()); // acquire, batch, reset, set_global_limit
                assertEquals(s.toString(), 3, s.fallbackDenied()); // the acquire, the batch's two
                assertEquals(s.toString(), 0, s.fallbackAllowed() + s.fallbackLocal());
                s = allow.stats();
                assertEquals(s.toString(), 2, s.fallbackAllowed()); // acquire and peek
                assertEquals(s.toString(), 0, s.fallbackDenied() + s.fallbackLocal());
                s = local.stats();
                assertEquals(s.toString(), 5, s.fallbackLocal());
                assertEquals(s.toString(), 0, s.fallbackDenied() + s.fallbackAllowed());

                assertEquals("restarted", own.command("restart"));
                assertNotNull("Redis decides again after the restart", decidesAgain(deny, "k", 40));
                assertTrue(deny.stats().toString(), deny.stats().reconnects() >= 1);
                assertTrue(deny.stats().toString(), deny.stats().scriptLoads() >= 2); // the restarted server's
            }
        }
    }

    /* A server paused with SIGSTOP: a decision throws within about the
     * command timeout ({@link Status#TIMEOUT}), with the fallback's decision;
     * resumed, Redis decides again. */
    @Test
    public void aPausedServerTimesOut() throws IOException, InterruptedException {
        try (Fixture own = new Fixture("server");
             RedisLimiter l = RedisLimiter.builder(2, 1000, 100).port(own.server).prefix(prefix())
                 .idleExpiryMillis(600_000).connectTimeoutMillis(300).commandTimeoutMillis(300)
                 .reconnectMillis(10, 20).fallback(RedisLimiter.Fallback.ALLOW).build()) {
            assertTrue(l.acquire("k", 10).allowed());
            assertEquals("paused", own.command("pause"));
            long start = System.nanoTime();
            UnavailableException e = unavailable(() -> l.acquire("k", 20));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(e.toString(), Status.TIMEOUT, e.status());
            assertTrue(e.decision().allowed());
            // 300 ms, plus a loaded machine's scheduling: never the JUnit timeout
            assertTrue("answered after " + ms + " ms", ms >= 250 && ms < 3000);
            assertEquals("resumed", own.command("resume"));
            assertNotNull("Redis decides again once resumed", decidesAgain(l, "k", 40));
            assertTrue(l.stats().toString(), l.stats().timeouts() >= 1);
        }
    }

    /* The classes SWIG generates for the Redis module are package-private and
     * final; the enums' codes are the header's; the JNI library came from the
     * build, loaded by the class's first use. */
    @Test
    public void vocabularyAndLibrary() throws ClassNotFoundException {
        for (String name : new String[] {"TemporalFiltersRedisNative", "TemporalFiltersRedisJNI",
                                         "TemporalFiltersRedisNativeConstants", "RedisLimiterNative",
                                         "RedisLimiterStatsNative"}) {
            Class<?> c = Class.forName("org.temporalfilters." + name);
            assertFalse(name + " is public", Modifier.isPublic(c.getModifiers()));
            assertTrue(name + " is final or an interface",
                       Modifier.isFinal(c.getModifiers()) || c.isInterface());
        }
        assertEquals(TemporalFiltersRedisNative.TF_REDIS_TIME_CALLER, RedisLimiter.TimeSource.CALLER.code());
        assertEquals(TemporalFiltersRedisNative.TF_REDIS_TIME_SERVER, RedisLimiter.TimeSource.SERVER.code());
        assertEquals(TemporalFiltersRedisNative.TF_REDIS_FALLBACK_DENY, RedisLimiter.Fallback.DENY.code());
        assertEquals(TemporalFiltersRedisNative.TF_REDIS_FALLBACK_ALLOW, RedisLimiter.Fallback.ALLOW.code());
        assertEquals(TemporalFiltersRedisNative.TF_REDIS_FALLBACK_LOCAL, RedisLimiter.Fallback.LOCAL.code());
        assertEquals(RateLimiter.EXACT, RedisLimiter.EXACT);
        onServer(1, 10, 1).build().close();
        Path want = Path.of(System.getProperty("java.library.path")).resolve(NativeLibrary.REDIS_FILE_NAME);
        assertEquals(want, NativeLibrary.redisLoadedFrom());
        assertNotNull(NativeLibrary.loadedFrom());
        assertEquals(NativeLibrary.loadedFrom().getParent(), NativeLibrary.redisLoadedFrom().getParent());
    }
}
