// A program of a user's own project: built and run by run.sh against the
// installed jar (/usr/share/java/temporalfilters.jar) and the JNI library the
// jar's loader finds by itself. Uses every structure, the batch calls and a
// blob round trip of each structure; exits non-zero on any wrong answer.
import java.util.Arrays;
import org.temporalfilters.AgeBloom;
import org.temporalfilters.BadBlobException;
import org.temporalfilters.RateLimiter;
import org.temporalfilters.RecencySketch;
import org.temporalfilters.TemporalFilters;
import org.temporalfilters.RecencyWindow;
import org.temporalfilters.RotatingCuckoo;
import org.temporalfilters.TimeBloom;

public final class Consumer {
    private Consumer() {
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("consumer: " + what);
        }
    }

    public static void main(String[] args) {
        // the jar and the native library are the same release
        String version = TemporalFilters.version();
        String jarVersion = TemporalFilters.class.getPackage().getImplementationVersion();
        check(version.equals(jarVersion), "native " + version + " but jar " + jarVersion);

        byte[] blob;
        try (RecencySketch s = RecencySketch.forTarget(10_000, 0.01, 7, RecencySketch.CONCURRENT)) {
            s.update("user:17", 42);
            s.updateBatch(new String[] {"a", "b"}, new long[] {10, 20});
            check(s.query("user:17") >= 42, "sketch query");
            long[] last = s.queryBatch(new String[] {"a", "b"});
            check(last[0] >= 10 && last[1] >= 20, "sketch batch");
            blob = s.serialize();
            try (RecencySketch r = RecencySketch.deserialize(blob)) {
                check(Arrays.equals(r.serialize(), blob), "sketch blob round trip");
                check(r.query("user:17") == s.query("user:17"), "sketch restored answer");
            }
        }
        try (AgeBloom f = AgeBloom.forTarget(1_000, 0.01)) {
            check(!f.addIfAbsent("click:1"), "age bloom new key");
            check(f.contains("click:1"), "age bloom contains");
            byte[] b = f.serialize();
            try (AgeBloom r = AgeBloom.deserialize(b)) {
                check(Arrays.equals(r.serialize(), b) && r.contains("click:1"), "age bloom blob round trip");
            }
        }
        try (TimeBloom f = TimeBloom.forTarget(1_000, 0.01, 60_000)) {
            f.add("req:9", 1_000);
            check(f.contains("req:9", 61_000), "time bloom within span");
            byte[] b = f.serialize();
            try (TimeBloom r = TimeBloom.deserialize(b)) {
                check(Arrays.equals(r.serialize(), b) && r.contains("req:9", 1_000), "time bloom blob round trip");
            }
        }
        try (RateLimiter l = new RateLimiter(2, 1_000, 100)) {
            check(l.acquire("client", 1).allowed() && l.acquire("client", 2).allowed(), "limiter grants");
            RateLimiter.Decision d = l.acquire("client", 3);
            check(!d.allowed() && d.retryAt() > 3, "limiter denies the third");
            RateLimiter.Decision[] ds = l.acquireBatch(new String[] {"x", "x", "x"}, new long[] {5, 6, 7}, 1);
            check(ds[0].allowed() && ds[1].allowed() && !ds[2].allowed(), "limiter batch");
            byte[] b = l.serialize();
            try (RateLimiter r = RateLimiter.deserialize(b)) {
                check(Arrays.equals(r.serialize(), b) && !r.peek("client", 4).allowed(), "limiter blob round trip");
            }
        }
        try (RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(64).ttl(60_000).build()) {
            check(!f.addIfAbsent("event:1", 1_000) && f.addIfAbsent("event:1", 2_000), "cuckoo de-duplicates");
            boolean[] batch = f.addIfAbsentBatch(new String[] {"event:1", "event:2", "event:2"}, 3_000);
            check(batch[0] && !batch[1] && batch[2], "cuckoo batch");
            byte[] b = f.serialize();
            try (RotatingCuckoo r = RotatingCuckoo.deserialize(b)) {
                check(Arrays.equals(r.serialize(), b) && r.contains("event:2", 3_000) && !r.contains("x", 3_000),
                        "cuckoo blob round trip");
            }
        }
        try (RecencyWindow w = RecencyWindow.builder().window(100).mode(RecencyWindow.Mode.EXACT).build()) {
            check(w.insertReport("object:1") == RecencyWindow.NOT_IN_WINDOW, "window: a new key");
            w.insert("object:2");
            check(w.insertReport("object:1") == 1, "window: recency of object:1");
            long[] batch = w.insertReportBatch(new String[] {"object:2", "object:3"});
            check(batch[0] == 1 && batch[1] == RecencyWindow.NOT_IN_WINDOW, "window batch");
            byte[] b = w.serialize();
            try (RecencyWindow r = RecencyWindow.deserialize(b)) {
                check(Arrays.equals(r.serialize(), b) && r.query("object:1") == 2, "window blob round trip");
            }
        }
        // a damaged blob is an error, not a crash
        blob[blob.length - 1] ^= 1;
        try {
            RecencySketch.deserialize(blob).close();
            check(false, "a damaged blob was read");
        } catch (BadBlobException e) {
            check(e.status().cName().startsWith("TF_ERR_"), "bad blob status");
        }
        System.out.println("java consumer ok: temporalfilters " + version);
    }
}
