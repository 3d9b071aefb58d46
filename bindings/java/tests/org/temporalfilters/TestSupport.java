package org.temporalfilters;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import org.junit.function.ThrowingRunnable;

/* Helpers shared by the test classes. */
final class TestSupport {
    private TestSupport() {
    }

    /* The exception class of each status's family (docs/conventions.md,
     * "The bindings"); the base class for the others. */
    private static final Map<Status, Class<? extends TemporalFiltersException>> FAMILY = new EnumMap<>(Status.class);

    static {
        for (Status s : EnumSet.of(Status.NULL, Status.INVALID_ARGUMENT, Status.TOO_LARGE)) {
            FAMILY.put(s, InvalidArgumentException.class);
        }
        for (Status s : EnumSet.range(Status.TRUNCATED, Status.CORRUPT)) {
            FAMILY.put(s, BadBlobException.class);
        }
        FAMILY.put(Status.INCOMPATIBLE, IncompatibleException.class);
        FAMILY.put(Status.OUT_OF_MEMORY, NativeOutOfMemoryException.class);
    }

    static Class<? extends TemporalFiltersException> family(Status status) {
        return FAMILY.getOrDefault(status, TemporalFiltersException.class);
    }

    /* Checks that e's status, name, message and class are consistent. */
    static void checkConsistent(TemporalFiltersException e) {
        assertEquals(e.status().code(), e.code());
        assertEquals(e.status().cName(), e.statusName());
        assertFalse("empty detail", e.detail().isEmpty());
        assertEquals(e.statusName() + ": " + e.detail(), e.getMessage());
        if (!(e instanceof ClosedException)) {
            assertEquals("class of: " + e.getMessage(), family(e.status()), e.getClass());
        }
    }

    /* Runs `call`, which must fail with `status` and the exception of its
     * family; returns the exception after checking that its name and message
     * are consistent. */
    static TemporalFiltersException expectStatus(Status status, ThrowingRunnable call) {
        TemporalFiltersException e = assertThrows(TemporalFiltersException.class, call);
        assertEquals("status of: " + e.getMessage(), status, e.status());
        checkConsistent(e);
        return e;
    }

    /* As expectStatus, and the message must contain `part`. */
    static TemporalFiltersException expectStatus(Status status, String part, ThrowingRunnable call) {
        TemporalFiltersException e = expectStatus(status, call);
        assertTrue("message \"" + e.getMessage() + "\" lacks \"" + part + "\"", e.getMessage().contains(part));
        return e;
    }

    /* Runs `call` on an object closed before: a ClosedException ("the <name>
     * is closed", status NULL). */
    static ClosedException expectClosed(String name, ThrowingRunnable call) {
        ClosedException e = assertThrows(ClosedException.class, call);
        assertEquals(Status.NULL, e.status());
        checkConsistent(e);
        assertEquals("the " + name + " is closed", e.detail());
        return e;
    }

    /* Runs `call`, a deserialize of a bad blob: a BadBlobException with one
     * of the blob statuses. */
    static BadBlobException expectBadBlob(ThrowingRunnable call) {
        BadBlobException e = assertThrows(BadBlobException.class, call);
        int code = e.status().code();
        assertTrue(e.getMessage(), code <= Status.TRUNCATED.code() && code >= Status.CORRUPT.code());
        checkConsistent(e);
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
