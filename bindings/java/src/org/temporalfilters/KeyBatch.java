package org.temporalfilters;

/**
 * Keys packed for the batch calls ({@link RecencySketch#updateBatch},
 * {@link RecencySketch#queryBatch}, {@link RateLimiter#acquireBatch},
 * {@link RotatingCuckoo#containsBatch}, {@link RotatingCuckoo#addIfAbsentBatch},
 * {@link AgeBloom#addBatch}, {@link AgeBloom#containsBatch}, {@link AgeBloom#addIfAbsentBatch},
 * {@link TimeBloom#addBatch}, {@link TimeBloom#containsBatch}, {@link TimeBloom#addIfAbsentBatch},
 * {@link RecencyWindow#insertBatch}, {@link RecencyWindow#queryBatch},
 * {@link RecencyWindow#insertReportBatch}): their
 * bytes laid end to end plus their lengths, which is what crosses into the
 * native library in one call. Packing costs a copy of the keys; a batch that
 * is used many times (say, the same set of clients asked about on every
 * tick) can be packed once and reused.
 * Immutable, hence safe to share between threads.
 */
public final class KeyBatch {
    final byte[] data;
    final int[] lens;

    private KeyBatch(byte[] data, int[] lens) {
        this.data = data;
        this.lens = lens;
    }

    /**
     * Packs binary keys (any bytes, NUL included).
     *
     * @throws InvalidArgumentException {@link Status#NULL} when the array or
     *         one of its keys is null; {@link Status#TOO_LARGE} when the keys
     *         together exceed the largest Java array
     */
    public static KeyBatch of(byte[]... keys) {
        Native.notNull(keys, "keys");
        long total = 0;
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] == null) {
                throw TemporalFiltersException.of(Status.NULL, "keys[" + i + "] is null");
            }
            total += keys[i].length;
        }
        if (total > Native.MAX_ARRAY) {
            throw TemporalFiltersException.of(Status.TOO_LARGE,
                    "the keys of a batch total " + total + " bytes, more than a Java array holds");
        }
        byte[] data = new byte[(int) total];
        int[] lens = new int[keys.length];
        int off = 0;
        for (int i = 0; i < keys.length; i++) {
            System.arraycopy(keys[i], 0, data, off, keys[i].length);
            lens[i] = keys[i].length;
            off += lens[i];
        }
        return new KeyBatch(data, lens);
    }

    /**
     * Packs string keys, each encoded as UTF-8 (the same bytes as the String
     * forms of the single-key calls).
     *
     * @throws InvalidArgumentException as {@link #of(byte[]...)}
     */
    public static KeyBatch of(String... keys) {
        Native.notNull(keys, "keys");
        byte[][] bytes = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            bytes[i] = Native.utf8(keys[i], "keys[" + i + "]");
        }
        return of(bytes);
    }

    /** The number of keys. */
    public int size() {
        return lens.length;
    }
}
