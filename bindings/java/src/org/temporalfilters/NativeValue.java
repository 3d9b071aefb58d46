package org.temporalfilters;

/*
 * The SWIG proxy of a versioned struct (RecencySketchInfo, RateLimiterInfo,
 * RateLimiterStats, ...): the native layer returns a copy that Java owns, and
 * NativeHandle.value() frees it with delete() once it has read it.
 * temporalfilters_java.i makes each such proxy implement this interface.
 */
interface NativeValue {
    /* Frees the copy; idempotent. */
    void delete();
}
