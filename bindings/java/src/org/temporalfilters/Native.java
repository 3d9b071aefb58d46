package org.temporalfilters;

import java.lang.ref.Cleaner;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/* Shared plumbing of the idiomatic classes. */
final class Native {
    /* One cleaner thread for every handle of the library: it frees the native
     * memory of objects that were never closed. */
    static final Cleaner CLEANER = Cleaner.create();

    /* The largest byte[] the JVM reliably allocates. */
    static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

    private Native() {
    }

    /* A String key as UTF-8 bytes; null is TF_ERR_NULL, like a null byte[]. */
    static byte[] utf8(String key, String name) {
        if (key == null) {
            throw new TemporalFiltersException(Status.ERR_NULL, name + " is null");
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    /* The second step of a two-step serialization: a byte[] of `size` bytes
     * (serialized_size() of the native object) filled by `into`
     * (serialize_into). `what` names the object in the error message. */
    static byte[] serialize(long size, String what, Consumer<byte[]> into) {
        if (size > MAX_ARRAY) {
            throw new TemporalFiltersException(Status.ERR_TOO_LARGE,
                    "the " + what + "'s blob (" + size + " bytes) does not fit in a Java byte[]");
        }
        byte[] blob = new byte[(int) size];
        into.accept(blob);
        return blob;
    }

    static <T> T notNull(T value, String name) {
        if (value == null) {
            throw new TemporalFiltersException(Status.ERR_NULL, name + " is null");
        }
        return value;
    }
}
