package org.temporalfilters;

/*
 * What every SWIG proxy of a native handle (RecencySketchNative, AgeBloomNative,
 * TimeBloomNative, RateLimiterNative) has in common: temporalfilters_java.i
 * makes each of them implement this interface, so that NativeHandle can free,
 * measure and serialize any of them.
 */
interface NativeProxy extends NativeResource {
    /* Bytes of native memory held. */
    long memory();

    /* The size of the blob serialize_into writes. */
    long serialized_size();

    /* Writes the blob into a buffer of at least its size; returns the bytes written. */
    long serialize_into(byte[] buffer);
}
