package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/*
 * The golden blobs of tests/data (RecencySketch and AgeBloom in both layouts,
 * TimeBloom, RateLimiter in both modes), shared by the C suite and every
 * binding:
 * each blob reads back with the answers recorded in its .expected file, and
 * the operations of tests/util/golden.h, replayed through this binding, serialize
 * to exactly the golden bytes. Since every language writes those same bytes
 * and reads them, a blob written by one is read by the others.
 */
public class GoldenTest {
    private static final byte[] BINARY_KEY = {0x00, 'b', 'i', 'n', 0x00, (byte) 0xff, 0x7f};

    private static Path dataDir() {
        String dir = System.getProperty("tf.golden.dir");
        assertNotNull("run with -Dtf.golden.dir=<repo>/tests/data", dir);
        return Paths.get(dir);
    }

    /* tests/util/golden.h, golden_recency_sketch(flags). */
    private static RecencySketch rebuild(int flags) {
        long width = (flags & RecencySketch.BLOCKED) != 0 ? 96 : 256;
        RecencySketch s = new RecencySketch(width, 3, 42, flags);
        for (int i = 0; i < 200; i++) {
            s.update("key-" + i, 1000 + 7L * i);
        }
        for (int i = 0; i < 200; i += 3) {
            s.update("key-" + i, (i % 2 != 0) ? 5000 + i : 500 + i);
        }
        s.update(BINARY_KEY, 123456789);
        return s;
    }

    private static void check(String name, int flags) throws IOException {
        Golden golden = Golden.read(name, 2);
        try (RecencySketch built = rebuild(flags)) {
            golden.assertWrittenBy(built, "rebuilt sketch");
        }

        try (RecencySketch s = RecencySketch.deserialize(golden.blob)) {
            assertEquals(flags, s.info().flags());
            assertEquals(42, s.info().seed());
            assertEquals(3, s.info().depth());
            int never = 0;
            byte[][] keys = new byte[golden.rows.size()][];
            long[] want = new long[golden.rows.size()];
            for (int i = 0; i < keys.length; i++) {
                String[] row = golden.rows.get(i);
                keys[i] = TestSupport.hex(row[0]);
                want[i] = Long.parseLong(row[1]);
                assertEquals(name + " " + row[0], want[i], s.query(keys[i]));
                never += want[i] == 0 ? 1 : 0;
            }
            assertEquals(251, keys.length); // key-0 .. key-249 and the binary key
            assertTrue(never > 0 && never <= 50);
            assertEquals(123456789, s.query(BINARY_KEY));
            // the batch call gives the same answers
            assertArrayEquals(want, s.queryBatch(keys));
            golden.assertWrittenBy(s, "the blob read back");
        }
    }

    /* A golden blob (tests/data/<name>.tfb) and the rows of its .expected
     * file (its non-comment lines, split into `fields` fields each). */
    private static final class Golden {
        final String name;
        final byte[] blob;
        final List<String[]> rows = new ArrayList<>();

        private Golden(String name, byte[] blob) {
            this.name = name;
            this.blob = blob;
        }

        static Golden read(String name, int fields) throws IOException {
            Golden g = new Golden(name, Files.readAllBytes(dataDir().resolve(name + ".tfb")));
            for (String line : Files.readAllLines(dataDir().resolve(name + ".expected"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                assertEquals(name + ": " + line, fields, f.length);
                g.rows.add(f);
            }
            return g;
        }

        /* `h` serializes to exactly the golden bytes. */
        void assertWrittenBy(NativeHandle<?> h, String what) {
            assertArrayEquals(name + ": " + what + " differs from the golden blob", blob, h.serialize());
        }
    }

    private static boolean bit(String field) {
        assertTrue("0 or 1: " + field, field.equals("0") || field.equals("1"));
        return field.equals("1");
    }

    /* tests/util/golden.h, golden_age_bloom(0) (classic) and golden_age_bloom(TF_AGE_BLOOM_BLOCKED). */
    private static AgeBloom rebuildAgeBloom(boolean blocked) {
        AgeBloom f = blocked ? new AgeBloom(3, 4, 200, 42, AgeBloom.BLOCKED) : new AgeBloom(3, 4, 200, 42, 0);
        for (int i = 0; i < 300; i++) {
            f.add("key-" + i);
        }
        for (int i = 290; i < 320; i++) {
            f.addIfAbsent("key-" + i);
        }
        f.add(BINARY_KEY);
        return f;
    }

    /* tests/util/golden.h, golden_time_bloom(0). */
    private static TimeBloom rebuildTimeBloom() {
        TimeBloom f = new TimeBloom(3, 4, 128, 1000, 42, 0);
        for (int i = 0; i < 245; i++) {
            long now = i < 200 ? 1000 + 10L * i : i < 240 ? 3000 : 2500;
            f.add("key-" + i, now);
        }
        for (int j = 0; j < 10; j++) {
            f.addIfAbsent("key-" + (j < 5 ? 195 + j : 240 + j), 3000);
        }
        f.add(BINARY_KEY, 3000);
        return f;
    }

    /* Checks one golden count-window filter: the rebuilt filter writes the
     * golden bytes, and the blob reads back with every answer of its .expected
     * file. sliceBits and capacity are those of golden.h's shape. */
    private static void checkAgeBloom(String name, boolean blocked, long sliceBits, long capacity)
            throws IOException {
        Golden golden = Golden.read(name, 2);
        List<String[]> rows = golden.rows;
        try (AgeBloom built = rebuildAgeBloom(blocked)) {
            assertEquals(blocked ? AgeBloom.BLOCKED : 0, built.info().flags());
            golden.assertWrittenBy(built, "rebuilt filter");
        }

        try (AgeBloom f = AgeBloom.deserialize(golden.blob)) {
            assertEquals(name, blocked ? AgeBloom.BLOCKED : 0, f.info().flags());
            assertEquals(3, f.info().k());
            assertEquals(4, f.info().l());
            assertEquals(sliceBits, f.info().sliceBits());
            assertEquals(42, f.info().seed());
            assertEquals(capacity, f.info().capacity());
            int present = 0;
            for (String[] row : rows) {
                boolean want = bit(row[1]);
                assertEquals(name + " " + row[0], want, f.contains(TestSupport.hex(row[0])));
                present += want ? 1 : 0;
            }
            assertEquals(351, rows.size()); // key-0 .. key-349 and the binary key
            assertEquals("key-0", new String(TestSupport.hex(rows.get(0)[0]), StandardCharsets.US_ASCII));
            assertArrayEquals(BINARY_KEY, TestSupport.hex(rows.get(350)[0]));
            assertTrue(f.contains(BINARY_KEY)); // the last insert
            assertTrue(f.contains("key-299"));
            assertTrue("present " + present, present >= capacity); // at least the window
            assertTrue("absent " + (rows.size() - present), present < rows.size());
            // at most 321 inserts: key-(321 - capacity) .. key-299 are in the window, whatever the hashing
            for (int i = 321 - (int) capacity; i < 300; i++) {
                assertEquals(name + ": no false negative in the file", "1", rows.get(i)[1]);
            }
            golden.assertWrittenBy(f, "the blob read back");
        }
    }

    @Test
    public void ageBloom() throws IOException {
        checkAgeBloom("age_bloom_v1", false, 200, 184); // 4 generations of floor(200 ln 2 / 3) = 46
    }

    @Test
    public void ageBloomBlocked() throws IOException {
        // slices of 224 bits (200 rounded up to 32), 4 generations of floor(224 ln 2 / 3) = 51
        checkAgeBloom("age_bloom_blocked_v1", true, 224, 204);
    }

    @Test
    public void timeBloom() throws IOException {
        String name = "time_bloom_v1";
        Golden golden = Golden.read(name, 3);
        List<String[]> rows = golden.rows;
        try (TimeBloom built = rebuildTimeBloom()) {
            golden.assertWrittenBy(built, "rebuilt filter");
        }

        try (TimeBloom f = TimeBloom.deserialize(golden.blob)) {
            assertEquals(3, f.info().k());
            assertEquals(4, f.info().l());
            assertEquals(1000, f.info().span());
            assertEquals(42, f.info().seed());
            int at3000 = 0;
            int at3400 = 0;
            for (String[] row : rows) {
                long now = Long.parseLong(row[1]);
                boolean want = bit(row[2]);
                assertEquals(name + " " + row[0] + " at " + now, want, f.contains(TestSupport.hex(row[0]), now));
                at3000 += now == 3000 ? 1 : 0;
                at3400 += now == 3400 ? 1 : 0;
            }
            // key-0 .. key-259 and the binary key, at now = 3000 and at 3400
            assertEquals(261, at3000);
            assertEquals(261, at3400);
            assertEquals(522, rows.size());
            // within the span at both times: the burst at 3000 and the binary key
            assertTrue(f.contains(BINARY_KEY, 3400));
            assertTrue(f.contains("key-239", 3400));
            golden.assertWrittenBy(f, "the blob read back");
        }
    }

    /* tests/util/golden.h, golden_rotating_cuckoo(flags): the same calls, in order. */
    private static RotatingCuckoo rebuildRotatingCuckoo(int flags) {
        RotatingCuckoo f = RotatingCuckoo.builder().tableSlots(16).ttl(2000).maxTables(4).seed(42).flags(flags).build();
        for (int i = 0; i < 80; i++) {
            f.addIfAbsent("key-" + i, 1000 + 10L * i);
        }
        for (int i = 0; i < 80; i += 7) {
            f.remove("key-" + i, 1800);
        }
        for (int i = 75; i < 85; i++) {
            f.add("key-" + i, 1500);
        }
        f.add(BINARY_KEY, 1800);
        return f;
    }

    /* Checks one golden rotating cuckoo filter: the rebuilt filter writes the
     * golden bytes, and the blob reads back with every answer of its .expected
     * file (at now = 1800 and 3600). */
    private static void checkRotatingCuckoo(String name, int flags) throws IOException {
        Golden golden = Golden.read(name, 3);
        List<String[]> rows = golden.rows;
        try (RotatingCuckoo built = rebuildRotatingCuckoo(flags)) {
            golden.assertWrittenBy(built, "rebuilt filter");
        }
        try (RotatingCuckoo f = RotatingCuckoo.deserialize(golden.blob)) {
            RotatingCuckoo.Info info = f.info();
            assertEquals(16, info.tableSlots());
            assertEquals(2000, info.ttl());
            assertEquals(4, info.maxTables());
            assertEquals(42, info.seed());
            assertEquals(flags, info.flags());
            assertEquals(flags == 0 ? 2 : 3, info.ways());
            int at1800 = 0;
            int at3600 = 0;
            int present1800 = 0;
            for (String[] row : rows) {
                long now = Long.parseLong(row[1]);
                boolean want = bit(row[2]);
                assertEquals(name + " " + row[0] + " at " + now, want, f.contains(TestSupport.hex(row[0]), now));
                at1800 += now == 1800 ? 1 : 0;
                at3600 += now == 3600 ? 1 : 0;
                present1800 += now == 1800 && want ? 1 : 0;
            }
            // key-0 .. key-89 and the binary key, at both times
            assertEquals(91, at1800);
            assertEquals(91, at3600);
            assertEquals(182, rows.size());
            assertArrayEquals(BINARY_KEY, TestSupport.hex(rows.get(90)[0]));
            // the removed keys are absent, the last adds present; never a key not added
            assertEquals("0", rows.get(0)[2]);
            assertEquals("1", rows.get(84)[2]);
            assertEquals("1", rows.get(90)[2]);
            for (int i = 85; i < 90; i++) {
                assertEquals(name + ": key-" + i + " was never added", "0", rows.get(i)[2]);
            }
            assertTrue("present at 1800: " + present1800, present1800 > 0 && present1800 < 91);
            golden.assertWrittenBy(f, "the blob read back");
        }
    }

    @Test
    public void rotatingCuckoo() throws IOException {
        checkRotatingCuckoo("rotating_cuckoo_v1", 0);
    }

    @Test
    public void rotatingCuckooThreeWay() throws IOException {
        checkRotatingCuckoo("rotating_cuckoo_three_way_v1", RotatingCuckoo.THREE_WAY);
    }

    /* tests/util/golden.h, golden_recency_window(flags): window 64, invEps 4,
     * seed 42, the mode (delta 0.01 for the approximate blob); "key-i"
     * inserted for i = 0 .. 99, insertReport of "key-i" for i = 0, 5, .. 95,
     * the binary key inserted. batch: the same through the batch calls. */
    private static RecencyWindow rebuildRecencyWindow(RecencyWindow.Mode mode, double delta, boolean batch) {
        RecencyWindow w = RecencyWindow.builder().window(64).invEps(4).seed(42).mode(mode).delta(delta).build();
        String[] first = new String[100];
        String[] again = new String[20];
        for (int i = 0; i < 100; i++) {
            first[i] = "key-" + i;
        }
        for (int i = 0; i < 100; i += 5) {
            again[i / 5] = "key-" + i;
        }
        if (batch) {
            w.insertBatch(first);
            w.insertReportBatch(again);
            w.insertBatch(new byte[][] {BINARY_KEY});
            return w;
        }
        for (String k : first) {
            w.insert(k);
        }
        for (String k : again) {
            w.insertReport(k);
        }
        w.insert(BINARY_KEY);
        return w;
    }

    /* Checks one golden recency window: the rebuilt window (single calls and
     * batches) writes the golden bytes, and the blob reads back with every
     * answer of its .expected file, one by one and in a batch. */
    private static void checkRecencyWindow(String name, RecencyWindow.Mode mode, double delta) throws IOException {
        Golden golden = Golden.read(name, 2);
        for (boolean batch : new boolean[] {false, true}) {
            try (RecencyWindow built = rebuildRecencyWindow(mode, delta, batch)) {
                golden.assertWrittenBy(built, batch ? "rebuilt window (batches)" : "rebuilt window");
            }
        }
        List<String[]> rows = golden.rows;
        // key-0 .. key-109 (key-100 and later never inserted) and the binary key, inserted last
        assertEquals(111, rows.size());
        assertArrayEquals(BINARY_KEY, TestSupport.hex(rows.get(110)[0]));
        assertEquals("0", rows.get(110)[1]);
        try (RecencyWindow w = RecencyWindow.deserialize(golden.blob)) {
            RecencyWindow.Info info = w.info();
            assertEquals(64, info.window());
            assertEquals(4, info.invEps());
            assertEquals(42, info.seed());
            assertEquals(mode, info.mode());
            assertEquals(delta, info.delta(), 0.0);
            byte[][] keys = new byte[rows.size()][];
            long[] want = new long[rows.size()];
            int in = 0;
            for (int i = 0; i < keys.length; i++) {
                keys[i] = TestSupport.hex(rows.get(i)[0]);
                want[i] = Long.parseUnsignedLong(rows.get(i)[1]);
                assertEquals(name + " " + rows.get(i)[0], want[i], w.query(keys[i]));
                in += RecencyWindow.inWindow(want[i]) ? 1 : 0;
                if (i < 100 && i % 5 == 0) {
                    assertTrue(name + ": key-" + i + " was inserted again lately", RecencyWindow.inWindow(want[i]));
                }
                if (i >= 100 && i < 110) {
                    assertEquals(name + ": key-" + i + " was never inserted", RecencyWindow.NOT_IN_WINDOW, want[i]);
                }
            }
            assertTrue("in the window: " + in, in >= 21 && in <= 101);
            if (mode == RecencyWindow.Mode.EXACT) {
                assertEquals("key-0: inserted again 20 inserts before the last", 20, want[0]);
            }
            assertArrayEquals(want, w.queryBatch(keys));
            golden.assertWrittenBy(w, "the blob read back");
        }
    }

    @Test
    public void recencyWindow() throws IOException {
        checkRecencyWindow("recency_window_v1", RecencyWindow.Mode.HISTORICAL, 0);
    }

    @Test
    public void recencyWindowApprox() throws IOException {
        checkRecencyWindow("recency_window_approx_v1", RecencyWindow.Mode.HISTORICAL, 0.01);
    }

    @Test
    public void recencyWindowExact() throws IOException {
        checkRecencyWindow("recency_window_exact_v1", RecencyWindow.Mode.EXACT, 0);
    }

    @Test
    public void recencyWindowOptimalSm() throws IOException {
        checkRecencyWindow("recency_window_optimal_sm_v1", RecencyWindow.Mode.OPTIMAL_SM, 0);
    }

    /* tests/util/golden.h, golden_rate_limiter(flags): the same calls, in order. */
    private static RateLimiter rebuildRateLimiter(boolean exact) {
        RateLimiter r = new RateLimiter(5, 1000, 100, 0, exact ? RateLimiter.EXACT : 0);
        r.setGlobalLimit(120);
        r.setKeyLimit("key-7", 9);
        for (int i = 0; i < 300; i++) {
            r.acquire("key-" + (i % 30), 1000 + 7L * i, 1 + (i % 3 == 0 ? 1 : 0));
        }
        r.refund("key-3", 3000, 1);
        r.acquire(BINARY_KEY, 2990, 2);
        return r;
    }

    private static void checkRateLimiter(String name, boolean exact) throws IOException {
        Golden golden = Golden.read(name, 4);
        List<String[]> rows = golden.rows;
        assertEquals(exact ? RateLimiter.EXACT : 0, golden.blob[8]); // the envelope flags
        assertEquals(41, rows.size()); // key-0 .. key-39 and the binary key
        assertEquals("key-0", new String(TestSupport.hex(rows.get(0)[0]), StandardCharsets.US_ASCII));
        assertArrayEquals(BINARY_KEY, TestSupport.hex(rows.get(40)[0]));

        // replayed here, the calls give the golden bytes exactly (keys and
        // overrides in byte order: equal states, equal blobs), and the answers
        try (RateLimiter built = rebuildRateLimiter(exact)) {
            golden.assertWrittenBy(built, "rebuilt limiter");
            checkPeeks(name + " (rebuilt)", built, rows);
            golden.assertWrittenBy(built, "the rebuilt limiter after peeks");
        }

        try (RateLimiter r = RateLimiter.deserialize(golden.blob)) {
            assertEquals(new RateLimiter.Info(5, 1000, exact ? 0 : 100, exact ? RateLimiter.EXACT : 0, 120, 0, 0),
                    r.info());
            golden.assertWrittenBy(r, "the blob read back");
            assertEquals(31, r.stats().keys()); // key-0 .. key-29 and the binary key
            checkPeeks(name, r, rows);
            // peeks change nothing (no clock moved, no key created): still the golden bytes
            assertEquals(31, r.stats().keys());
            golden.assertWrittenBy(r, "the limiter after peeks");
        }
    }

    /* The .expected answers: peek(key, 3000, 1). */
    private static void checkPeeks(String name, RateLimiter r, List<String[]> rows) {
        int allowed = 0;
        for (String[] row : rows) {
            RateLimiter.Decision want = new RateLimiter.Decision(bit(row[1]), Long.parseLong(row[2]),
                    Long.parseLong(row[3]));
            assertEquals(name + " " + row[0], want, r.peek(TestSupport.hex(row[0]), 3000, 1));
            allowed += want.allowed() ? 1 : 0;
        }
        assertTrue("allowed " + allowed, allowed > 0 && allowed < rows.size());
    }

    @Test
    public void rateLimiterBucketed() throws IOException {
        checkRateLimiter("rate_limiter_v1", false);
    }

    @Test
    public void rateLimiterExact() throws IOException {
        checkRateLimiter("rate_limiter_exact_v1", true);
    }

    @Test
    public void standardLayout() throws IOException {
        check("recency_sketch_v1", 0);
    }

    @Test
    public void blockedConcurrentLayout() throws IOException {
        check("recency_sketch_blocked_v1", RecencySketch.BLOCKED | RecencySketch.CONCURRENT);
    }
}
