/*
 * bindings/java/temporalfilters_java.i - the Java side of the SWIG bindings.
 *
 * Generates the package-private JNI layer of org.temporalfilters (classes
 * TemporalFiltersNative, TemporalFiltersJNI, NativeStatus, one
 * <Name>Native per handle and <Name>InfoNative / <Name>StatsNative per
 * versioned struct); the public API is the hand-written idiomatic layer in
 * src/org/temporalfilters (RecencySketch, AgeBloom, TimeBloom, RateLimiter,
 * RotatingCuckoo, RecencyWindow on their common base NativeHandle, the
 * RedisLimiter of the Redis module (TF_BINDING_REDIS, below),
 * TemporalFiltersException and its families, ...).
 *
 * Type mapping:
 *   uint64_t             Java long. A negative argument is rejected with
 *                        TF_ERR_INVALID_ARGUMENT before the C call, never
 *                        wrapped. A result keeps its value, except that
 *                        TF_RETRY_NEVER (UINT64_MAX) keeps its 64 bits (-1L,
 *                        TemporalFilters.RETRY_NEVER) and any other result
 *                        above Long.MAX_VALUE (a saturated time) is clamped
 *                        to Long.MAX_VALUE (tf_java_clamp).
 *   uint32_t             Java long, checked to be within 0 .. 2^32-1.
 *   byte patterns        byte[] (binary-safe, copied into the call's own
 *                        buffer: on the stack when small); int[] key lengths;
 *                        long[] timestamps in and out; int[] answers out
 *                        (the rate limiter's batch).
 * Errors: every failure, whether found by the library, by the shared
 * interface or by a typemap here, is recorded with tf_binding_fail/check and
 * raised by the %exception block as the org.temporalfilters.TemporalFiltersException
 * subclass of its status's family (TemporalFiltersException.of(status, status
 * name, message): InvalidArgumentException, BadBlobException, ...). A typemap that rejects an argument records
 * the failure and lets the wrapper run on: the call itself is skipped, and the
 * cleanup code of every argument still runs, so nothing leaks.
 */
/* The core's module, or with the SWIG symbol TF_BINDING_REDIS (swig
 * -DTF_BINDING_REDIS) the Redis limiter's: its own JNI library
 * (libtemporalfilters_redis_jni.so, linked with libtemporalfilters-redis)
 * and its own package-private classes (TemporalFiltersRedisNative,
 * TemporalFiltersRedisJNI, RedisLimiterNative, RedisLimiterStatsNative,
 * TemporalFiltersRedisNativeConstants) over temporalfilters_redis.i, with
 * the same typemaps. The class RedisLimiter loads that library the first
 * time it is used, so that a program without Redis never needs it. */
#ifdef TF_BINDING_REDIS
%module(jniclassname = "TemporalFiltersRedisJNI") TemporalFiltersRedisNative
#else
%module(jniclassname = "TemporalFiltersJNI") TemporalFiltersNative
#endif

/* The generated classes are package-private: users see the idiomatic layer. */
%pragma(java) moduleclassmodifiers = "final class"
%pragma(java) jniclassclassmodifiers = "final class"
%typemap(javaclassmodifiers) struct RecencySketchNative, struct AgeBloomNative, struct TimeBloomNative,
    struct RateLimiterNative, struct tf_recency_sketch_info, struct tf_age_bloom_info, struct tf_age_bloom_stats,
    struct tf_time_bloom_info, struct tf_time_bloom_stats, struct tf_rate_limiter_info,
    struct tf_rate_limiter_stats, struct RotatingCuckooNative, struct tf_rotating_cuckoo_info,
    struct tf_rotating_cuckoo_stats, struct tf_rotating_cuckoo_table, struct RecencyWindowNative,
    struct tf_recency_window_info, struct tf_recency_window_stats, struct tf_recency_window_level,
    struct RedisLimiterNative, struct tf_redis_limiter_stats, enum tf_status "final class"
/* (The types must be named as SWIG declared them, `struct ...` and `enum
 * tf_status`; a typemap on another spelling matches nothing, silently.
 * VocabularyTest checks that every generated class is non-public and final.) */

/* Every handle's proxy implements NativeProxy (delete, memory,
 * serialized_size, serialize_into), through which the idiomatic classes'
 * common base NativeHandle frees, measures and serializes any of them. After
 * delete() the proxy's pointer is 0, and NativeHandle refuses every later
 * call itself (ClosedException); a 0 that still reached C would fail
 * cleanly there (TF_ERR_NULL). */
%typemap(javainterfaces) struct RecencySketchNative, struct AgeBloomNative, struct TimeBloomNative,
    struct RateLimiterNative, struct RotatingCuckooNative, struct RecencyWindowNative "NativeProxy"
/* The Redis limiter's proxy has no memory or blob: it implements
 * NativeResource (delete), through which NativeObject frees it. */
%typemap(javainterfaces) struct RedisLimiterNative "NativeResource"

/* The versioned structs' proxies (info, stats: copies Java owns) implement
 * NativeValue, through which NativeHandle.value() frees each once read. */
%typemap(javainterfaces) struct tf_recency_sketch_info, struct tf_age_bloom_info, struct tf_age_bloom_stats,
    struct tf_time_bloom_info, struct tf_time_bloom_stats, struct tf_rate_limiter_info,
    struct tf_rate_limiter_stats, struct tf_rotating_cuckoo_info, struct tf_rotating_cuckoo_stats,
    struct tf_rotating_cuckoo_table, struct tf_recency_window_info, struct tf_recency_window_stats,
    struct tf_recency_window_level, struct tf_redis_limiter_stats "NativeValue"

/* The JNI library is loaded with the class that declares the native methods,
 * by NativeLibrary (src/): -Dorg.temporalfilters.jni=FILE-OR-DIRECTORY, else
 * java.library.path, the jni directories of the jar's install prefix and
 * /usr/lib/<triplet>/jni, /usr/lib/jni. The Redis module's is found the
 * same way (NativeLibrary.loadRedis). */
#ifdef TF_BINDING_REDIS
%pragma(java) jniclasscode = %{
  static {
    NativeLibrary.loadRedis();
  }
%}
#else
%pragma(java) jniclasscode = %{
  static {
    NativeLibrary.load();
  }
%}
#endif

/* No finalizer anywhere: the idiomatic classes free their handles in close()
 * and through a java.lang.ref.Cleaner. */
%typemap(javafinalize) SWIGTYPE ""

/* The status codes as int constants read from the C header at class-load
 * time (class NativeStatus); the idiomatic class Status is checked against
 * them. The other constants of the shared interface (TF_NEVER,
 * TF_RETRY_NEVER, the flags and limits) are read the same way, through the
 * constants interface TemporalFiltersNativeConstants, which the build makes
 * package-private (SWIG writes it public; see meson.build); the idiomatic
 * classes define theirs from them (TemporalFilters.NEVER, RecencySketch.BLOCKED,
 * ...). */
%include "enumtypeunsafe.swg"
%rename(NativeStatus) tf_status;

/* ---- exceptions ------------------------------------------------------- */

/* The call runs only when no argument was rejected; any failure is raised
 * right after it. When the call is skipped, the wrapper's C result (if it has
 * one) is zeroed so that nothing reads an uninitialized value:
 * TF_JAVA_SKIPPED($null) does that, since $null is "0" in a wrapper that
 * returns a value and empty in a void one. Output typemaps below write back
 * only when no exception is pending (ExceptionCheck), as JNI requires. */
%exception {
    if (!tf_java_pending()) {
        $action
    } else {
        TF_JAVA_SKIPPED($null)
    }
    tf_java_raise_pending(jenv);
}

/* A proxy whose handle is gone (delete() zeroes its pointer) is refused
 * before the call, as a handle passed to merge: TF_ERR_NULL, "the
 * RecencySketch is closed". NativeHandle never makes such a call (it throws
 * ClosedException first), but the proxies are reachable in the package. */
%typemap(check) SWIGTYPE *self, RecencySketchNative *other %{
    if (!$1) tf_binding_fail_closed("$1_basetype");
%}

/* ---- scalars ----------------------------------------------------------- */

%typemap(jni) uint64_t "jlong"
%typemap(jtype) uint64_t "long"
%typemap(jstype) uint64_t "long"
%typemap(javain) uint64_t "$javainput"
%typemap(javaout) uint64_t {
    return $jnicall;
  }
%typemap(in) uint64_t %{
    $1 = 0;
    if ($input < 0)
        tf_java_reject(TF_ERR_INVALID_ARGUMENT, "$1_name", "is negative (Java long timestamps and sizes must be >= 0)");
    else
        $1 = (uint64_t)$input;
%}
%typemap(out) uint64_t %{ $result = tf_java_clamp($1); %}

%typemap(jni) uint32_t "jlong"
%typemap(jtype) uint32_t "long"
%typemap(jstype) uint32_t "long"
%typemap(javain) uint32_t "$javainput"
%typemap(javaout) uint32_t {
    return $jnicall;
  }
%typemap(in) uint32_t %{
    $1 = 0;
    if ($input < 0 || $input > (jlong)UINT32_MAX)
        tf_java_reject(TF_ERR_INVALID_ARGUMENT, "$1_name", "is outside 0 .. 4294967295");
    else
        $1 = (uint32_t)$input;
%}
%typemap(out) uint32_t %{ $result = (jlong)$1; %}

/* ---- byte strings: keys, blobs, keys laid end to end ------------------------ */

%define TF_JAVA_BYTES_IN(NAME, LEN)
%typemap(jni) (const void *NAME, size_t LEN) "jbyteArray"
%typemap(jtype) (const void *NAME, size_t LEN) "byte[]"
%typemap(jstype) (const void *NAME, size_t LEN) "byte[]"
%typemap(javain) (const void *NAME, size_t LEN) "$javainput"
%typemap(in) (const void *NAME, size_t LEN) (jlong stack[TF_JAVA_STACK_BYTES / sizeof(jlong)], void *heap = NULL) %{
    $1 = tf_java_copy_in(jenv, $input, 1, stack, sizeof stack, &heap, &$2, "$1_name");
%}
%typemap(freearg) (const void *NAME, size_t LEN) %{ free(heap$argnum); %}
%enddef

TF_JAVA_BYTES_IN(key, key_len)
TF_JAVA_BYTES_IN(blob, blob_len)
TF_JAVA_BYTES_IN(keys_data, keys_data_len)

/* serialize_into: a byte[] the Java side allocated, its first `written` bytes
 * filled on success. */
%typemap(jni) (void *out_buf, size_t out_cap) "jbyteArray"
%typemap(jtype) (void *out_buf, size_t out_cap) "byte[]"
%typemap(jstype) (void *out_buf, size_t out_cap) "byte[]"
%typemap(javain) (void *out_buf, size_t out_cap) "$javainput"
%typemap(in) (void *out_buf, size_t out_cap) (jlong stack[TF_JAVA_STACK_BYTES / sizeof(jlong)], void *heap = NULL) %{
    $1 = tf_java_buffer(jenv, $input, 1, stack, sizeof stack, &heap, &$2, "$1_name");
%}
%typemap(argout) (void *out_buf, size_t out_cap) %{
    /* result: the bytes written (0 after a failure); the rest of the array
     * is left as it was */
    if ($1 && !(*jenv)->ExceptionCheck(jenv) && result <= $2)
        (*jenv)->SetByteArrayRegion(jenv, $input, 0, (jsize)result, (const jbyte *)$1);
%}
%typemap(freearg) (void *out_buf, size_t out_cap) %{ free(heap$argnum); %}

/* ---- batches ------------------------------------------------------------ */

%typemap(jni) (const int32_t *key_lens, size_t key_count) "jintArray"
%typemap(jtype) (const int32_t *key_lens, size_t key_count) "int[]"
%typemap(jstype) (const int32_t *key_lens, size_t key_count) "int[]"
%typemap(javain) (const int32_t *key_lens, size_t key_count) "$javainput"
%typemap(in) (const int32_t *key_lens, size_t key_count)
    (jlong stack[TF_JAVA_STACK_BYTES / sizeof(jlong)], void *heap = NULL) %{
    $1 = ($1_ltype)tf_java_copy_in(jenv, $input, 4, stack, sizeof stack, &heap, &$2,
                                          "$1_name");
%}
%typemap(freearg) (const int32_t *key_lens, size_t key_count) %{ free(heap$argnum); %}

/* Timestamps in: each must be >= 0 as a Java long (the C call rejects 0). */
%typemap(jni) (const uint64_t *times, size_t time_count) "jlongArray"
%typemap(jtype) (const uint64_t *times, size_t time_count) "long[]"
%typemap(jstype) (const uint64_t *times, size_t time_count) "long[]"
%typemap(javain) (const uint64_t *times, size_t time_count) "$javainput"
%typemap(in) (const uint64_t *times, size_t time_count)
    (jlong stack[TF_JAVA_STACK_BYTES / sizeof(jlong)], void *heap = NULL) %{
    {
        const jlong *t = (const jlong *)tf_java_copy_in(jenv, $input, 8, stack, sizeof stack, &heap, &$2,
                                                        "$1_name");
        size_t i;
        for (i = 0; t && i < $2; ++i) {
            if (t[i] < 0) {
                char what[64];
                snprintf(what, sizeof what, "[%zu] is negative", i);
                tf_java_reject(TF_ERR_INVALID_ARGUMENT, "$1_name", what);
                break;
            }
        }
        $1 = ($1_ltype)t;
    }
%}
%typemap(freearg) (const uint64_t *times, size_t time_count) %{ free(heap$argnum); %}

/* Timestamps out: one per key, mapped by tf_java_clamp. */
%typemap(jni) (uint64_t *out_times, size_t out_count) "jlongArray"
%typemap(jtype) (uint64_t *out_times, size_t out_count) "long[]"
%typemap(jstype) (uint64_t *out_times, size_t out_count) "long[]"
%typemap(javain) (uint64_t *out_times, size_t out_count) "$javainput"
%typemap(in) (uint64_t *out_times, size_t out_count)
    (jlong stack[TF_JAVA_STACK_BYTES / sizeof(jlong)], void *heap = NULL) %{
    $1 = ($1_ltype)tf_java_buffer(jenv, $input, 8, stack, sizeof stack, &heap, &$2,
                                        "$1_name");
%}
%typemap(argout) (uint64_t *out_times, size_t out_count) %{
    if ($1 && !(*jenv)->ExceptionCheck(jenv)) {
        size_t i;
        for (i = 0; i < $2; ++i) ((jlong *)$1)[i] = tf_java_clamp($1[i]);
        (*jenv)->SetLongArrayRegion(jenv, $input, 0, (jsize)$2, (const jlong *)$1);
    }
%}
%typemap(freearg) (uint64_t *out_times, size_t out_count) %{ free(heap$argnum); %}

/* The rate limiter batch's answers: one int (1 granted, 0 denied) per key,
 * written into an int[] the Java side allocated. */
%typemap(jni) (int32_t *out_allowed, size_t allowed_count) "jintArray"
%typemap(jtype) (int32_t *out_allowed, size_t allowed_count) "int[]"
%typemap(jstype) (int32_t *out_allowed, size_t allowed_count) "int[]"
%typemap(javain) (int32_t *out_allowed, size_t allowed_count) "$javainput"
%typemap(in) (int32_t *out_allowed, size_t allowed_count)
    (jlong stack[TF_JAVA_STACK_BYTES / sizeof(jlong)], void *heap = NULL) %{
    $1 = ($1_ltype)tf_java_buffer(jenv, $input, 4, stack, sizeof stack, &heap, &$2, "$1_name");
%}
%typemap(argout) (int32_t *out_allowed, size_t allowed_count) %{
    if ($1 && !(*jenv)->ExceptionCheck(jenv))
        (*jenv)->SetIntArrayRegion(jenv, $input, 0, (jsize)$2, (const jint *)$1);
%}
%typemap(freearg) (int32_t *out_allowed, size_t allowed_count) %{ free(heap$argnum); %}

/* pace's next_allowed: element 0 of a long[] of length >= 1. */
%typemap(jni) uint64_t *next_allowed "jlongArray"
%typemap(jtype) uint64_t *next_allowed "long[]"
%typemap(jstype) uint64_t *next_allowed "long[]"
%typemap(javain) uint64_t *next_allowed "$javainput"
%typemap(in) uint64_t *next_allowed (uint64_t value = 0) %{
    $1 = &value;
    if (!$input)
        tf_java_reject(TF_ERR_NULL, "$1_name", "is null");
    else if ((*jenv)->GetArrayLength(jenv, $input) < 1)
        tf_java_reject(TF_ERR_INVALID_ARGUMENT, "$1_name", "is empty");
%}
%typemap(argout) uint64_t *next_allowed %{
    if (!(*jenv)->ExceptionCheck(jenv)) {
        jlong v = tf_java_clamp(value$argnum);
        (*jenv)->SetLongArrayRegion(jenv, $input, 0, 1, &v);
    }
%}

/* The rate limiter's outputs (acquire and peek: remaining, retry_at) use
 * pace's typemap: a long[] of length >= 1, mapped by tf_java_clamp, so a
 * retry_at of TF_RETRY_NEVER reads as -1L (TemporalFilters.RETRY_NEVER). */
%apply uint64_t *next_allowed { uint64_t *remaining, uint64_t *retry_at, uint64_t *unavailable };
#ifdef TF_BINDING_REDIS
%include "temporalfilters_redis.i"
#else
%include "temporalfilters.i"
#endif

/* Helpers of the typemaps above. They use the shared interface's error slot
 * (tf_binding_status_, tf_binding_fail), so they come after it; the wrapper
 * functions that call them are emitted after every such block. */
%{
#include <limits.h>

/* Keys, blobs and arrays up to this many bytes are copied to the stack;
 * larger ones to the heap. */
#define TF_JAVA_STACK_BYTES 2048

/* A failure is already recorded for this call (by a typemap). */
#define tf_java_pending() (tf_binding_status_ != 0)

/* See %exception: zeroes `result` in wrappers that have one. */
#define TF_JAVA_SKIPPED(null_value) TF_JAVA_SKIPPED_##null_value
#define TF_JAVA_SKIPPED_
#define TF_JAVA_SKIPPED_0 memset(&result, 0, sizeof result);

/* A uint64_t result as a Java long (see "Type mapping" above). */
static jlong tf_java_clamp(uint64_t v) {
    if (v == TF_RETRY_NEVER) return (jlong)-1;
    return v > (uint64_t)INT64_MAX ? (jlong)INT64_MAX : (jlong)v;
}

/* Records a rejected argument: "<name> <what>". */
static void tf_java_reject(tf_status st, const char *name, const char *what) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s %s", name, what);
    tf_binding_fail(st, msg);
}

/* Throws the exception of the status's family, made by the one factory
 * org.temporalfilters.TemporalFiltersException.of(status, name, message)
 * (InvalidArgumentException, BadBlobException, ...). If the class or the
 * factory cannot be found, or the factory throws, the JVM's own error stays
 * pending. */
static void tf_java_throw(JNIEnv *jenv, int status, const char *message) {
    char clean[512];
    size_t i;
    /* NewStringUTF wants modified UTF-8: keep the message to printable ASCII. */
    for (i = 0; message[i] != '\0' && i + 1 < sizeof clean; ++i) {
        unsigned char c = (unsigned char)message[i];
        clean[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    clean[i] = '\0';
    jclass cls = (*jenv)->FindClass(jenv, "org/temporalfilters/TemporalFiltersException");
    if (!cls) return;
    jmethodID of = (*jenv)->GetStaticMethodID(jenv, cls, "of",
                                              "(ILjava/lang/String;Ljava/lang/String;)"
                                              "Lorg/temporalfilters/TemporalFiltersException;");
    jstring jname = of ? (*jenv)->NewStringUTF(jenv, tf_status_string(status)) : NULL;
    jstring jmsg = jname ? (*jenv)->NewStringUTF(jenv, clean) : NULL;
    jobject ex = jmsg ? (*jenv)->CallStaticObjectMethod(jenv, cls, of, (jint)status, jname, jmsg) : NULL;
    if (ex && !(*jenv)->ExceptionCheck(jenv)) (*jenv)->Throw(jenv, (jthrowable)ex);
    if (ex) (*jenv)->DeleteLocalRef(jenv, ex);
    if (jmsg) (*jenv)->DeleteLocalRef(jenv, jmsg);
    if (jname) (*jenv)->DeleteLocalRef(jenv, jname);
    (*jenv)->DeleteLocalRef(jenv, cls);
}

/* Raises the call's pending failure, if any; returns 1 when it did. */
static int tf_java_raise_pending(JNIEnv *jenv) {
    const char *msg = NULL;
    int st = tf_binding_take_error(&msg);
    if (st == 0) return 0;
    tf_java_throw(jenv, st, msg);
    return 1;
}

/* An array's length (in *count) and a buffer for that many elements of elem
 * bytes: `stack` when it fits in cap bytes, else a heap block stored in *heap
 * for the caller to free. Returns NULL with a failure recorded when the array
 * is null or the block cannot be allocated. Nothing is copied. */
static void *tf_java_buffer(JNIEnv *jenv, jarray arr, size_t elem, void *stack, size_t cap, void **heap,
                            size_t *count, const char *name) {
    *count = 0;
    if (!arr) {
        tf_java_reject(TF_ERR_NULL, name, "is null");
        return NULL;
    }
    jsize n = (*jenv)->GetArrayLength(jenv, arr);
    void *p = stack;
    if ((size_t)n * elem > cap) {
        p = *heap = malloc((size_t)n * elem);
        if (!p) {
            tf_java_reject(TF_ERR_OUT_OF_MEMORY, name, "does not fit in memory");
            return NULL;
        }
    }
    *count = (size_t)n;
    return p;
}

/* An input array: tf_java_buffer, filled with a copy of the array (elem is
 * 1, 4 or 8: byte[], int[] or long[]). */
static void *tf_java_copy_in(JNIEnv *jenv, jarray arr, size_t elem, void *stack, size_t cap, void **heap,
                             size_t *count, const char *name) {
    void *p = tf_java_buffer(jenv, arr, elem, stack, cap, heap, count, name);
    if (!p) return NULL;
    jsize n = (jsize)*count;
    switch (elem) {
    case 1: (*jenv)->GetByteArrayRegion(jenv, (jbyteArray)arr, 0, n, (jbyte *)p); break;
    case 4: (*jenv)->GetIntArrayRegion(jenv, (jintArray)arr, 0, n, (jint *)p); break;
    default: (*jenv)->GetLongArrayRegion(jenv, (jlongArray)arr, 0, n, (jlong *)p); break;
    }
    return p;
}
%}
