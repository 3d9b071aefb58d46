package org.temporalfilters;

import java.nio.charset.StandardCharsets;

/* Shared plumbing of the idiomatic classes. */
final class Native {
    /* The largest byte[] the JVM reliably allocates. */
    static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

    private Native() {
    }

    /* A String key as UTF-8 bytes; null is TF_ERR_NULL, like a null byte[]. */
    static byte[] utf8(String key, String name) {
        if (key == null) {
            throw TemporalFiltersException.of(Status.NULL, name + " is null");
        }
        return key.getBytes(StandardCharsets.UTF_8);
    }

    static <T> T notNull(T value, String name) {
        if (value == null) {
            throw TemporalFiltersException.of(Status.NULL, name + " is null");
        }
        return value;
    }
}
