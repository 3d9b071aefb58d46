package org.temporalfilters;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;

/* Helpers shared by the test classes. */
final class TestSupport {
    private TestSupport() {
    }

    /* Runs `call`, which must fail with `status`; returns the exception after
     * checking that its name and message are consistent. */
    static TemporalFiltersException expectStatus(int status, org.junit.function.ThrowingRunnable call) {
        TemporalFiltersException e = assertThrows(TemporalFiltersException.class, call);
        assertEquals("status of: " + e.getMessage(), status, e.status());
        assertEquals(Status.name(status), e.statusName());
        assertFalse("empty detail", e.detail().isEmpty());
        assertEquals(e.statusName() + ": " + e.detail(), e.getMessage());
        return e;
    }

    /* As expectStatus, and the message must contain `part`. */
    static TemporalFiltersException expectStatus(int status, String part, org.junit.function.ThrowingRunnable call) {
        TemporalFiltersException e = expectStatus(status, call);
        assertTrue("message \"" + e.getMessage() + "\" lacks \"" + part + "\"", e.getMessage().contains(part));
        return e;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] hex(String h) {
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    /* A deterministic pseudo-random generator (splitmix64), so that every run
     * tests the same keys. */
    static final class Rng {
        private long state;

        Rng(long seed) {
            state = seed;
        }

        long next() {
            long z = (state += 0x9E3779B97F4A7C15L);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        int below(int n) {
            return (int) Long.remainderUnsigned(next(), n);
        }

        byte[] bytes(int n) {
            byte[] b = new byte[n];
            for (int i = 0; i < n; i++) {
                b[i] = (byte) next();
            }
            return b;
        }
    }
}
