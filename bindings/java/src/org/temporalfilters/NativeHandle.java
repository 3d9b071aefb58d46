package org.temporalfilters;

import java.util.Arrays;

/**
 * What every structure of the library has in common as a Java object: a
 * {@link NativeObject} whose native handle also reports its memory and
 * writes its blob ({@link #memory()}, {@link #serialize()}).
 *
 * @param <N> the SWIG proxy class of the native handle
 */
abstract class NativeHandle<N extends NativeProxy> extends NativeObject<N> {
    /* serialize(): how many times the two native calls are tried, the same in
     * every language (bindings/temporalfilters.i says why 8). */
    private static final int SERIALIZE_ATTEMPTS = TemporalFiltersNative.TF_BINDING_SERIALIZE_ATTEMPTS;

    /* Takes ownership of a new proxy (NativeObject). */
    NativeHandle(N proxy, boolean concurrent) {
        super(proxy, concurrent);
    }

    /* A native batch call over packed keys with a 1/0 answer per key in
     * `present` (the contains and add-if-absent batches). */
    interface PresentBatch<N> {
        void call(N h, byte[] data, int[] lens, int[] present);
    }

    /* The body of the batches with a yes/no answer per key: the keys checked
     * (closed first, then null), one native call, one answer per key. */
    final boolean[] presentBatch(KeyBatch keys, PresentBatch<N> op) {
        open();
        Native.notNull(keys, "keys");
        int[] present = new int[keys.size()];
        run(h -> op.call(h, keys.data, keys.lens, present));
        boolean[] out = new boolean[present.length];
        for (int i = 0; i < present.length; i++) {
            out[i] = present[i] != 0;
        }
        return out;
    }

    /* A native batch call over packed keys without answers. */
    interface KeysBatch<N> {
        void call(N h, byte[] data, int[] lens);
    }

    /* The body of the batches without answers (the keys checked as above). */
    final void keysBatch(KeyBatch keys, KeysBatch<N> op) {
        open();
        Native.notNull(keys, "keys");
        run(h -> op.call(h, keys.data, keys.lens));
    }

    /** Bytes of native memory held. */
    public long memory() {
        return callLong(NativeProxy::memory);
    }

    /**
     * The structure as a blob (the library's wire format: the structure's
     * parameters and state, little-endian, with a checksum). Every binding and
     * the C API read it back with their {@code deserialize}.
     *
     * @throws InvalidArgumentException the blob exceeds the largest Java array
     *         ({@link Status#TOO_LARGE})
     */
    public byte[] serialize() {
        return call(p -> {
            // the size, then the bytes: two native calls, between which other
            // threads may grow a structure that allows concurrent calls (the
            // rate limiter); the second then fails and both are tried again,
            // with a quarter more room than measured
            for (int attempt = 1;; attempt++) {
                long size = p.serialized_size();
                if (size > Native.MAX_ARRAY) {
                    throw TemporalFiltersException.of(Status.TOO_LARGE,
                            "the " + name() + "'s blob (" + size + " bytes) does not fit in a Java byte[]");
                }
                long room = attempt == 1 ? size : Math.min(size + size / 4 + 64, Native.MAX_ARRAY);
                byte[] blob = new byte[(int) room];
                try {
                    long written = p.serialize_into(blob);
                    return written == room ? blob : Arrays.copyOf(blob, (int) written);
                } catch (TemporalFiltersException e) {
                    if (e.status() != Status.BUFFER_TOO_SMALL || attempt >= SERIALIZE_ATTEMPTS) {
                        throw e;
                    }
                }
            }
        });
    }
}
