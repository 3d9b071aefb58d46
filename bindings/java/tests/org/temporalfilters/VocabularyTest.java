package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;

import org.junit.Test;

/* The names every binding shares (docs/conventions.md, "The bindings"): the
 * two "never" values as the C header defines them, the flags, and the short
 * overloads with the default seed (0) and flags (0). */
public class VocabularyTest {

    @Test
    public void neverAndRetryNeverAreTheCValues() {
        assertEquals(0L, TemporalFilters.NEVER);
        assertEquals(TemporalFiltersNative.tf_java_never(), TemporalFilters.NEVER);
        // TF_RETRY_NEVER is UINT64_MAX: the same 64 bits as -1L
        assertEquals(-1L, TemporalFilters.RETRY_NEVER);
        assertEquals(TemporalFiltersNative.tf_java_retry_never(), TemporalFilters.RETRY_NEVER);
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
        assertEquals(TemporalFiltersNative.tf_java_recency_sketch_concurrent(), RecencySketch.CONCURRENT);
        assertEquals(2, RecencySketch.BLOCKED);
        assertEquals(TemporalFiltersNative.tf_java_recency_sketch_blocked(), RecencySketch.BLOCKED);
        assertEquals(1, AgeBloom.BLOCKED);
        assertEquals(TemporalFiltersNative.tf_java_age_bloom_blocked(), AgeBloom.BLOCKED);
        assertEquals(1, RateLimiter.EXACT);
        assertEquals(TemporalFiltersNative.tf_java_rate_limiter_exact(), RateLimiter.EXACT);
        assertEquals(2, RateLimiter.FULL_ALLOW);
        assertEquals(TemporalFiltersNative.tf_java_rate_limiter_full_allow(), RateLimiter.FULL_ALLOW);
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
        try (RateLimiter r = new RateLimiter(5, 1000, 100); RateLimiter q = new RateLimiter(5, 1000, 100, 0)) {
            assertEquals(0, r.info().flags());
            r.acquire("k", 5);
            q.acquire("k", 5);
            assertArrayEquals(q.serialize(), r.serialize());
        }
    }
}
