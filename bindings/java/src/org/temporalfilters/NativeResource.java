package org.temporalfilters;

/*
 * A SWIG proxy that owns a native object Java must free: every handle's
 * proxy (through NativeProxy) and the Redis limiter's (RedisLimiterNative),
 * which temporalfilters_java.i makes implement it, so that NativeObject can
 * free any of them.
 */
interface NativeResource {
    /* Frees the native object; idempotent (SWIG's proxy sets its pointer to 0). */
    void delete();
}
