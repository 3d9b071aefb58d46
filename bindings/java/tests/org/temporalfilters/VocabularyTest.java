package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;

import java.lang.reflect.Modifier;
import org.junit.Test;

/* The names every binding shares (docs/conventions.md, "The bindings"): the
 * two "never" values as the C header defines them, the flags, and the short
 * overloads with the default seed (0) and flags (0). */
public class VocabularyTest {

    @Test
    public void neverAndRetryNeverAreTheCValues() {
        assertEquals(0L, TemporalFilters.NEVER);
        assertEquals(TemporalFiltersNative.TF_NEVER, TemporalFilters.NEVER);
        // TF_RETRY_NEVER is UINT64_MAX: the same 64 bits as -1L
        assertEquals(-1L, TemporalFilters.RETRY_NEVER);
        assertEquals(TemporalFiltersNative.TF_RETRY_NEVER, TemporalFilters.RETRY_NEVER);
        assertEquals("18446744073709551615", Long.toUnsignedString(TemporalFilters.RETRY_NEVER));
        // a retry that never comes, from the library
        try (RateLimiter rl = new RateLimiter(2, 100, 10)) {
            assertEquals(TemporalFilters.RETRY_NEVER, rl.acquire("k", 5, 3).retryAt());
            assertEquals(TemporalFilters.RETRY_NEVER, rl.peek("k", 5, 3).retryAfter(5));
        }
        try (RecencySketch s = new RecencySketch(64, 2)) {
            assertEquals(TemporalFilters.NEVER, s.query("absent"));
        }
    }

    @Test
    public void flagsHaveTheirCValues() {
        assertEquals(1, RecencySketch.CONCURRENT);
        assertEquals(TemporalFiltersNative.TF_RECENCY_SKETCH_CONCURRENT, RecencySketch.CONCURRENT);
        assertEquals(2, RecencySketch.BLOCKED);
        assertEquals(TemporalFiltersNative.TF_RECENCY_SKETCH_BLOCKED, RecencySketch.BLOCKED);
        assertEquals(1, AgeBloom.BLOCKED);
        assertEquals(TemporalFiltersNative.TF_AGE_BLOOM_BLOCKED, AgeBloom.BLOCKED);
        assertEquals(2, AgeBloom.MIN_MEMORY);
        assertEquals(TemporalFiltersNative.TF_AGE_BLOOM_MIN_MEMORY, AgeBloom.MIN_MEMORY);
        assertEquals(6.0, AgeBloom.PROBE_BUDGET, 0.0);
        assertEquals(1, TimeBloom.MIN_MEMORY);
        assertEquals(TemporalFiltersNative.TF_TIME_BLOOM_MIN_MEMORY, TimeBloom.MIN_MEMORY);
        assertEquals(1, RateLimiter.EXACT);
        assertEquals(TemporalFiltersNative.TF_RATE_LIMITER_EXACT, RateLimiter.EXACT);
        assertEquals(2, RateLimiter.FULL_ALLOW);
        assertEquals(TemporalFiltersNative.TF_RATE_LIMITER_FULL_ALLOW, RateLimiter.FULL_ALLOW);
        assertEquals(1, RotatingCuckoo.THREE_WAY);
        assertEquals(TemporalFiltersNative.TF_ROTATING_CUCKOO_THREE_WAY, RotatingCuckoo.THREE_WAY);
        assertEquals(TemporalFiltersNative.TF_ROTATING_CUCKOO_MAX_TABLES, RotatingCuckoo.MAX_TABLES);
        assertEquals(TemporalFiltersNative.TF_ROTATING_CUCKOO_MAX_KICKS, RotatingCuckoo.MAX_KICKS);
        // the recency window's modes, limits and its "not in the window"
        assertEquals(0, RecencyWindow.Mode.HISTORICAL.code());
        assertEquals(TemporalFiltersNative.TF_RECENCY_WINDOW_HISTORICAL, RecencyWindow.Mode.HISTORICAL.code());
        assertEquals(1, RecencyWindow.Mode.EXACT.code());
        assertEquals(TemporalFiltersNative.TF_RECENCY_WINDOW_EXACT, RecencyWindow.Mode.EXACT.code());
        assertEquals(2, RecencyWindow.Mode.OPTIMAL_SM.code());
        assertEquals(TemporalFiltersNative.TF_RECENCY_WINDOW_OPTIMAL_SM, RecencyWindow.Mode.OPTIMAL_SM.code());
        assertEquals(-1L, RecencyWindow.NOT_IN_WINDOW);
        assertEquals(TemporalFilters.RETRY_NEVER, RecencyWindow.NOT_IN_WINDOW); // both are UINT64_MAX
        assertEquals(1L << 40, RecencyWindow.MAX_WINDOW);
        assertEquals(1L << 20, RecencyWindow.MAX_INV_EPS);
    }

    @Test
    public void shortOverloadsTakeSeedZeroAndNoFlags() {
        try (RecencySketch s = new RecencySketch(100, 3); RecencySketch t = new RecencySketch(100, 3, 0, 0)) {
            assertEquals(0, s.info().seed());
            assertEquals(0, s.info().flags());
            s.update("k", 5);
            t.update("k", 5);
            assertArrayEquals(t.serialize(), s.serialize());
        }
        assertEquals(RecencySketch.dimensions(1000, 0.01, 0), RecencySketch.dimensions(1000, 0.01));
        try (RecencySketch s = RecencySketch.forTarget(1000, 0.01);
                RecencySketch t = RecencySketch.forTarget(1000, 0.01, 0, 0)) {
            assertArrayEquals(t.serialize(), s.serialize());
        }
        try (AgeBloom f = new AgeBloom(3, 4, 200); AgeBloom g = new AgeBloom(3, 4, 200, 0, 0)) {
            assertEquals(0, f.info().seed());
            f.add("k");
            g.add("k");
            assertArrayEquals(g.serialize(), f.serialize());
        }
        try (TimeBloom f = new TimeBloom(3, 4, 200, 100); TimeBloom g = new TimeBloom(3, 4, 200, 100, 0, 0)) {
            assertEquals(0, f.info().seed());
            f.add("k", 5);
            g.add("k", 5);
            assertArrayEquals(g.serialize(), f.serialize());
        }
        // the options left out are TF_ROTATING_CUCKOO_OPTIONS_INIT's
        try (RotatingCuckoo c = new RotatingCuckoo(); RotatingCuckoo d = RotatingCuckoo.builder().build()) {
            assertEquals(new RotatingCuckoo.Info(16384, 64L << 20, 0, 0.92, 4, 500, 64, 0, 0, 2), c.info());
            c.add("k", 5);
            d.add("k", 5);
            assertArrayEquals(d.serialize(), c.serialize());
        }
        // and TF_RECENCY_WINDOW_OPTIONS_INIT's (block 0 resolves to 0 outside OptimalSM)
        try (RecencyWindow w = new RecencyWindow(); RecencyWindow x = RecencyWindow.builder().build()) {
            RecencyWindow.Info i = w.info();
            assertEquals(65536, i.window());
            assertEquals(8, i.invEps());
            assertEquals(0, i.block());
            assertEquals(0, i.maxMemory());
            assertEquals(0.0, i.delta(), 0.0);
            assertEquals(RecencyWindow.Mode.HISTORICAL, i.mode());
            assertEquals(0, i.seed());
            assertEquals(0, i.flags());
            assertEquals(64, i.signatureBits());
            assertEquals(i, x.info());
            w.insert("k");
            x.insert("k");
            assertArrayEquals(x.serialize(), w.serialize());
            assertEquals(RecencyWindow.builder().memoryFor(), w.memory());
        }
        try (RateLimiter r = new RateLimiter(5, 1000, 100); RateLimiter q = new RateLimiter(5, 1000, 100, 0, 0)) {
            assertEquals(0, r.info().flags());
            r.acquire("k", 5);
            q.acquire("k", 5);
            assertArrayEquals(q.serialize(), r.serialize());
        }
    }

    /* Every class SWIG generates is package-private and final: the users see
     * the idiomatic layer only. (A class-modifier typemap that does not match
     * its type changes nothing without a word, and SWIG writes the constants
     * interface public unless the build fixes it.) */
    @Test
    public void generatedClassesAreNotPublic() throws ClassNotFoundException {
        String[] generated = {"TemporalFiltersNative", "TemporalFiltersJNI", "TemporalFiltersNativeConstants",
            "NativeStatus", "RecencySketchNative", "AgeBloomNative", "TimeBloomNative", "RateLimiterNative",
            "RecencySketchInfoNative", "AgeBloomInfoNative", "AgeBloomStatsNative", "TimeBloomInfoNative",
            "TimeBloomStatsNative", "RateLimiterInfoNative", "RateLimiterStatsNative", "RotatingCuckooNative",
            "RotatingCuckooInfoNative", "RotatingCuckooStatsNative", "RotatingCuckooTableNative", "RecencyWindowNative",
            "RecencyWindowInfoNative", "RecencyWindowStatsNative", "RecencyWindowLevelNative"};
        for (String name : generated) {
            Class<?> c = Class.forName("org.temporalfilters." + name);
            assertFalse(name + " is public", Modifier.isPublic(c.getModifiers()));
            assertEquals(name + " is final", !c.isInterface(), Modifier.isFinal(c.getModifiers()));
        }
    }
}
