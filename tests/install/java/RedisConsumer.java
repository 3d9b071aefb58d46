// The Redis limiter from a user's own project: built and run by run.sh
// against the installed jar, with the Redis limiter's JNI library
// (libtemporalfilters_redis_jni.so) found by the jar's loader itself, and the
// redis-server run.sh started on PORT. Exits non-zero on any wrong answer.
//
//   java RedisConsumer PORT
import org.temporalfilters.RateLimiter;
import org.temporalfilters.RedisLimiter;
import org.temporalfilters.Status;
import org.temporalfilters.UnavailableException;

public final class RedisConsumer {
    private RedisConsumer() {
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("redis consumer: " + what);
        }
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        String prefix = "installcheck:java:" + ProcessHandle.current().pid() + ":";
        try (RedisLimiter l = RedisLimiter.builder(2, 60_000, 1_000).port(port).prefix(prefix)
                 .fallback(RedisLimiter.Fallback.ALLOW).build();
             RateLimiter embedded = new RateLimiter(2, 60_000, 1_000)) {
            for (long t = 1; t <= 3; t++) {
                RateLimiter.Decision d = l.acquire("client", t);
                check(d.equals(embedded.acquire("client", t)), "acquire at " + t + ": " + d);
            }
            check(!l.peek("client", 4).allowed(), "peek after the limit");
            RateLimiter.Decision[] ds = l.acquireBatch(new String[] {"x", "x", "x"}, new long[] {5, 6, 7}, 1);
            check(ds[0].allowed() && ds[1].allowed() && !ds[2].allowed(), "batch");
            l.setKeyLimit("client", 5);
            check(l.acquire("client", 8).allowed(), "the key's own limit");
            RedisLimiter.Stats s = l.stats();
            check(s.decisions() == 8 && s.scriptLoads() == 1 && s.fallbackAllowed() == 0, "stats " + s);
        }
        // a port where nothing listens: the limiter cannot be created
        try {
            RedisLimiter.builder(2, 60_000, 1_000).port(1).connectTimeoutMillis(200).build().close();
            check(false, "a limiter without a server");
        } catch (UnavailableException e) {
            check(e.status() == Status.UNAVAILABLE || e.status() == Status.TIMEOUT, "status " + e.status());
        }
        System.out.println("java redis consumer ok");
    }
}
