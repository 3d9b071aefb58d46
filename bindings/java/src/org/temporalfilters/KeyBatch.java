package org.temporalfilters;

import java.util.Arrays;

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

    /**
     * Keys already laid end to end: key {@code i} is the {@code lengths[i]}
     * bytes of {@code data} after the keys before it (a network buffer, a
     * column read from a file). Both arrays are copied, so the batch stays
     * immutable; no key is copied one by one.
     *
     * @param data    the keys' bytes, end to end; exactly the sum of the lengths
     * @param lengths each key's length in bytes (0 allowed)
     * @throws InvalidArgumentException {@link Status#NULL} when an array is
     *         null; {@link Status#INVALID_ARGUMENT} when a length is negative
     *         or the lengths do not add up to {@code data.length}
     */
    public static KeyBatch ofPacked(byte[] data, int[] lengths) {
        Native.notNull(data, "data");
        Native.notNull(lengths, "lengths");
        // the copies are checked: another thread changing the caller's
        // arrays meanwhile cannot make a batch whose lengths do not fit
        final byte[] bytes = data.clone();
        final int[] lens = lengths.clone();
        long total = 0;
        for (int i = 0; i < lens.length; i++) {
            if (lens[i] < 0) {
                throw TemporalFiltersException.of(Status.INVALID_ARGUMENT, "lengths[" + i + "] is negative");
            }
            total += lens[i];
        }
        if (total != bytes.length) {
            throw TemporalFiltersException.of(Status.INVALID_ARGUMENT,
                    "the lengths add up to " + total + " bytes, the data holds " + bytes.length);
        }
        return new KeyBatch(bytes, lens);
    }

    /**
     * Keys of one length laid end to end (16-byte identifiers, say): key
     * {@code i} is bytes {@code [i * keyLength, (i + 1) * keyLength)} of
     * {@code data}, which is copied.
     *
     * @param data      the keys' bytes; a multiple of {@code keyLength}
     * @param keyLength every key's length in bytes, at least 1
     * @throws InvalidArgumentException {@link Status#NULL} when data is null;
     *         {@link Status#INVALID_ARGUMENT} when keyLength is below 1 or
     *         does not divide {@code data.length}
     */
    public static KeyBatch ofFixed(byte[] data, int keyLength) {
        Native.notNull(data, "data");
        if (keyLength < 1 || data.length % keyLength != 0) {
            throw TemporalFiltersException.of(Status.INVALID_ARGUMENT,
                    "keyLength is " + keyLength + "; it must be at least 1 and divide the data's "
                            + data.length + " bytes");
        }
        int[] lens = new int[data.length / keyLength];
        Arrays.fill(lens, keyLength);
        return new KeyBatch(data.clone(), lens);
    }

    /** The number of keys. */
    public int size() {
        return lens.length;
    }
}
