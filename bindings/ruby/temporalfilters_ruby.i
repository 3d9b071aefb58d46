/*
 * bindings/ruby/temporalfilters_ruby.i - the Ruby side of the SWIG bindings.
 *
 * Builds the extension temporalfilters_native.so (swig -ruby -initname
 * temporalfilters_native), which defines the module TemporalFilters::Native
 * holding the raw handle classes of bindings/temporalfilters.i. Ruby code
 * should not use it directly: lib/temporalfilters/*.rb put the idiomatic
 * classes (TemporalFilters::RecencySketch, AgeBloom, TimeBloom, RateLimiter,
 * RotatingCuckoo, RecencyWindow; TemporalFilters::RedisLimiter over the
 * Redis module, TF_BINDING_REDIS, below) on top.
 *
 * What this file adds to the shared interface:
 *  - typemaps for its argument patterns: keys and blobs are Strings taken as
 *    raw bytes (any encoding, NUL bytes included); batches are Arrays;
 *    timestamps and sizes are Integers checked against the C type's range,
 *    never wrapped: a negative value or one too large for the C type raises
 *    TemporalFilters::InvalidArgumentError, a value of another class TypeError;
 *  - the closed check of every handle class: a call on a closed object raises
 *    TemporalFilters::ClosedError before anything else;
 *  - an %exception block that turns the pending status of the shared error
 *    slot into the TemporalFilters::Error subclass of that status, raised
 *    right here in C (TemporalFilters::Error.class_for(status) picks it).
 *
 * Memory: nothing here is malloc'ed. Raising from a wrapper unwinds with
 * longjmp, past SWIG's cleanup code, so every temporary buffer is either on
 * the stack or owned by Ruby's GC (ALLOCV, Ruby Strings).
 */
/* The core's module, or with the SWIG symbol TF_BINDING_REDIS (swig
 * -DTF_BINDING_REDIS) the Redis limiter's, an extension of its own
 * (temporalfilters_redis_native.so, required by temporalfilters/redis.rb):
 * the same typemaps over temporalfilters_redis.i. */
#ifdef TF_BINDING_REDIS
%module "TemporalFilters::RedisNative"
#else
%module "TemporalFilters::Native"
#endif

%{
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "temporalfilters/common.h"

/* Raises `message` as an error of `family` (the name of a subclass of
 * TemporalFilters::Error, e.g. "ClosedError"), or when family is NULL of the
 * class TemporalFilters::Error.class_for(status) picks
 * (lib/temporalfilters/errors.rb), carrying `status`. When the extension is
 * loaded without that file, a RuntimeError is raised. */
static void tf_rb_raise_as(const char *family, int status, const char *message) {
    VALUE mod = rb_const_get(rb_cObject, rb_intern("TemporalFilters"));
    ID error_id = rb_intern("Error");
    if (rb_const_defined_at(mod, error_id)) {
        VALUE base = rb_const_get_at(mod, error_id);
        VALUE klass = family ? rb_const_get_at(mod, rb_intern(family))
                             : rb_funcall(base, rb_intern("class_for"), 1, INT2NUM(status));
        VALUE args[2];
        args[0] = rb_utf8_str_new_cstr(message);
        args[1] = INT2NUM(status);
        rb_exc_raise(rb_class_new_instance(2, args, klass));
    }
    rb_raise(rb_eRuntimeError, "%s: %s", tf_status_string(status), message);
}

/* Raises the TemporalFilters error of `status` with `message`. */
static void tf_rb_raise(int status, const char *message) { tf_rb_raise_as(NULL, status, message); }

/* Raises the failure the current call recorded (tf_binding_take_error), if
 * any. Defined after the shared interface's error slot, which it reads. */
static void tf_rb_raise_pending(void);

/* Raises ClosedError for a call on an object of the SWIG class `klass`
 * (TemporalFilters::Native::<Name>Native) whose handle is gone: "the <Name>
 * is closed", status TF_ERR_NULL. */
static void tf_rb_raise_closed(VALUE klass); /* after the shared interface */

/* An Integer in 0..max as uint64_t. `what` names the argument in messages,
 * followed by "[index]" when index >= 0 (an element of an Array). */
static uint64_t tf_rb_to_u64_at(VALUE v, const char *what, long index, uint64_t max) {
    uint64_t out = 0;
    int sign;
    if (RB_FIXNUM_P(v)) {
        long l = FIX2LONG(v);
        sign = l < 0 ? -1 : 1;
        out = (uint64_t)l;
    } else if (RB_TYPE_P(v, T_BIGNUM)) {
        sign = rb_integer_pack(v, &out, 1, sizeof out, 0, INTEGER_PACK_LSWORD_FIRST | INTEGER_PACK_NATIVE_BYTE_ORDER);
    } else {
        if (index >= 0)
            rb_raise(rb_eTypeError, "%s[%ld] must be an Integer, not %s", what, index, rb_obj_classname(v));
        rb_raise(rb_eTypeError, "%s must be an Integer, not %s", what, rb_obj_classname(v));
    }
    if (sign < 0 || sign > 1 || out > max) {
        char name[64];
        char msg[160];
        if (index >= 0)
            snprintf(name, sizeof name, "%s[%ld]", what, index);
        else
            snprintf(name, sizeof name, "%s", what);
        snprintf(msg, sizeof msg, "%s is out of range: it must be an Integer in 0..%llu", name,
                 (unsigned long long)max);
        tf_rb_raise(TF_ERR_INVALID_ARGUMENT, msg);
    }
    return out;
}

static uint64_t tf_rb_to_u64(VALUE v, const char *what, uint64_t max) {
    return tf_rb_to_u64_at(v, what, -1, max);
}

/* The C object behind `obj`, an instance of the SWIG class `klass` (or of a
 * subclass): NULL when it has none (a handle closed by close(), or an object
 * made by `allocate`). SWIG's own check (SWIG_ConvertPtr) looks the type up
 * by name on every call, which costs more than the whole library call; this
 * is the same check made with the class object. */
static void *tf_rb_data_ptr(VALUE obj, VALUE klass) {
    if (!RB_TYPE_P(obj, T_DATA) || RTYPEDDATA_P(obj) ||
        (rb_obj_class(obj) != klass && !RTEST(rb_obj_is_kind_of(obj, klass))))
        rb_raise(rb_eTypeError, "expected an instance of %s, not %s", rb_class2name(klass),
                 rb_obj_classname(obj));
    return DATA_PTR(obj);
}

/* tf_rb_data_ptr for the value classes (info, stats), which are never
 * closed: an object without its struct raises ClosedError. */
static void *tf_rb_self_ptr(VALUE obj, VALUE klass) {
    void *p = tf_rb_data_ptr(obj, klass);
    if (!p) tf_rb_raise_as("ClosedError", TF_ERR_NULL, "the object has no native handle");
    return p;
}

/* The Array `v`, or TypeError. */
static long tf_rb_array_len(VALUE v, const char *what) {
    if (!RB_TYPE_P(v, T_ARRAY))
        rb_raise(rb_eTypeError, "%s must be an Array, not %s", what, rb_obj_classname(v));
    return RARRAY_LEN(v);
}

/* Element i of the Array of keys `ary`, which must be a String. */
static VALUE tf_rb_key_at(VALUE ary, long i) {
    VALUE k = RARRAY_AREF(ary, i);
    if (!RB_TYPE_P(k, T_STRING))
        rb_raise(rb_eTypeError, "keys[%ld] must be a String, not %s", i, rb_obj_classname(k));
    return k;
}
%}

/* ---- scalars --------------------------------------------------------- */

%typemap(in) uint64_t "$1 = tf_rb_to_u64($input, \"$1_name\", UINT64_MAX);"
%typemap(in) uint32_t "$1 = (uint32_t)tf_rb_to_u64($input, \"$1_name\", UINT32_MAX);"
%typemap(in) double "$1 = NUM2DBL($input);"
%typemap(in) int "$1 = NUM2INT($input);"
%typemap(out) uint64_t "$result = ULL2NUM($1);"
%typemap(out) uint32_t "$result = UINT2NUM($1);"
%typemap(out) double "$result = DBL2NUM($1);"
%typemap(out) int "$result = INT2NUM($1);"
%typemap(out) bool "$result = $1 ? Qtrue : Qfalse;"
%typemap(out) const char * "$result = $1 ? rb_utf8_str_new_cstr($1) : Qnil;"

/* ---- the handle of a method ------------------------------------------ */

/* For the value classes of the shared interface: the fast type check. */
%typemap(in) SWIGTYPE *self
    "$1 = ($1_ltype)tf_rb_self_ptr($input, ((swig_class *)$1_descriptor->clientdata)->klass);"

/* For the handle classes, whose objects point at the C handle itself: a call
 * on a closed handle (DATA_PTR NULL) raises ClosedError here, before the
 * method runs, except is_closed and close. close takes the handle out of the
 * object before it frees it, so that nothing (the GC included) can reach
 * the freed memory. A handle passed as an argument (merge's other) must be
 * open too. */
%typemap(in) struct RecencySketchNative *self, struct AgeBloomNative *self, struct TimeBloomNative *self,
             struct RateLimiterNative *self, struct RotatingCuckooNative *self,
             struct RecencyWindowNative *self, struct RedisLimiterNative *self {
    $1 = ($1_ltype)tf_rb_data_ptr($input, ((swig_class *)$1_descriptor->clientdata)->klass);
    if (strcmp("$symname", "close") == 0)
        DATA_PTR($input) = NULL;
    else if (!$1 && strcmp("$symname", "is_closed") != 0)
        tf_rb_raise_closed(((swig_class *)$1_descriptor->clientdata)->klass);
}
%typemap(in) RecencySketchNative *other, RecencySketchNative *s {
    $1 = ($1_ltype)tf_rb_data_ptr($input, ((swig_class *)$1_descriptor->clientdata)->klass);
    if (!$1) tf_rb_raise_closed(((swig_class *)$1_descriptor->clientdata)->klass);
}

/* ---- one key, one blob: a String's bytes ----------------------------- */

%typemap(in) (const void *key, size_t key_len), (const void *blob, size_t blob_len),
             (const void *keys_data, size_t keys_data_len) {
    StringValue($input);
    $1 = RSTRING_PTR($input);
    $2 = (size_t)RSTRING_LEN($input);
}

/* ---- batches: an Array of String keys, laid end to end here ---------- */

%typemap(in) (const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count)
             (VALUE tf_data_hold = 0, VALUE tf_lens_hold = 0) {
    long n = tf_rb_array_len($input, "keys");
    size_t total = 0;
    for (long i = 0; i < n; ++i) {
        long len = RSTRING_LEN(tf_rb_key_at($input, i));
        if (len > INT32_MAX) {
            char msg[96];
            snprintf(msg, sizeof msg, "keys[%ld] is too long for a batch (2 GiB at most)", i);
            tf_rb_raise(TF_ERR_INVALID_ARGUMENT, msg);
        }
        total += (size_t)len;
    }
    char *data = ALLOCV_N(char, tf_data_hold, total ? total : 1);
    int32_t *lens = ALLOCV_N(int32_t, tf_lens_hold, n ? n : 1);
    size_t off = 0;
    for (long i = 0; i < n; ++i) {
        VALUE k = RARRAY_AREF($input, i);
        lens[i] = (int32_t)RSTRING_LEN(k);
        memcpy(data + off, RSTRING_PTR(k), (size_t)lens[i]);
        off += (size_t)lens[i];
    }
    $1 = data;
    $2 = total;
    $3 = lens;
    $4 = (size_t)n;
}
%typemap(freearg) (const void *keys_data, size_t keys_data_len, const int32_t *key_lens, size_t key_count) {
    if (tf_data_hold$argnum) ALLOCV_END(tf_data_hold$argnum);
    if (tf_lens_hold$argnum) ALLOCV_END(tf_lens_hold$argnum);
}

/* One timestamp per key: an Array of Integers. */
%typemap(in) (const uint64_t *times, size_t time_count) (VALUE tf_times_hold = 0) {
    long n = tf_rb_array_len($input, "times");
    uint64_t *t = ALLOCV_N(uint64_t, tf_times_hold, n ? n : 1);
    for (long i = 0; i < n; ++i) t[i] = tf_rb_to_u64_at(RARRAY_AREF($input, i), "times", i, UINT64_MAX);
    $1 = t;
    $2 = (size_t)n;
}
%typemap(freearg) (const uint64_t *times, size_t time_count) {
    if (tf_times_hold$argnum) ALLOCV_END(tf_times_hold$argnum);
}

/* One result per key: the Ruby argument is the number of results; the
 * results come back as an Array of Integers. */
%typemap(in) (uint64_t *out_times, size_t out_count) (VALUE tf_out_hold = 0) {
    size_t n = (size_t)tf_rb_to_u64($input, "count", LONG_MAX / sizeof(uint64_t));
    $1 = ALLOCV_N(uint64_t, tf_out_hold, n ? n : 1);
    memset($1, 0, (n ? n : 1) * sizeof(uint64_t));
    $2 = n;
}
%typemap(argout) (uint64_t *out_times, size_t out_count) {
    VALUE ary = rb_ary_new_capa((long)$2);
    for (size_t i = 0; i < $2; ++i) rb_ary_push(ary, ULL2NUM($1[i]));
    $result = SWIG_Ruby_AppendOutput($result, ary);
}
%typemap(freearg) (uint64_t *out_times, size_t out_count) {
    if (tf_out_hold$argnum) ALLOCV_END(tf_out_hold$argnum);
}

/* The rate limiter batch's answers, one per key: the Ruby argument is their
 * number; they come back as an Array of true (granted) and false. */
%typemap(in) (int32_t *out_allowed, size_t allowed_count) (VALUE tf_allowed_hold = 0) {
    size_t n = (size_t)tf_rb_to_u64($input, "count", LONG_MAX / sizeof(int32_t));
    $1 = ALLOCV_N(int32_t, tf_allowed_hold, n ? n : 1);
    memset($1, 0, (n ? n : 1) * sizeof(int32_t));
    $2 = n;
}
%typemap(argout) (int32_t *out_allowed, size_t allowed_count) {
    VALUE ary = rb_ary_new_capa((long)$2);
    for (size_t i = 0; i < $2; ++i) rb_ary_push(ary, $1[i] ? Qtrue : Qfalse);
    $result = SWIG_Ruby_AppendOutput($result, ary);
}
%typemap(freearg) (int32_t *out_allowed, size_t allowed_count) {
    if (tf_allowed_hold$argnum) ALLOCV_END(tf_allowed_hold$argnum);
}

/* A buffer filled by the call: the Ruby argument is its size; the call
 * returns it as a binary (ASCII-8BIT) String. */
%typemap(in) (void *out_buf, size_t out_cap) (VALUE tf_buf_str = Qnil) {
    size_t cap = (size_t)tf_rb_to_u64($input, "capacity", LONG_MAX);
    tf_buf_str = rb_str_new(NULL, (long)cap);
    $1 = RSTRING_PTR(tf_buf_str);
    $2 = cap;
}
%typemap(argout) (void *out_buf, size_t out_cap) {
    $result = SWIG_Ruby_AppendOutput($result, tf_buf_str$argnum);
}

/* pace's second result. */
%typemap(in, numinputs=0) uint64_t *next_allowed (uint64_t tf_next = 0) {
    $1 = &tf_next;
}
%typemap(argout) uint64_t *next_allowed {
    $result = SWIG_Ruby_AppendOutput($result, ULL2NUM(*$1));
}

/* ---- errors ---------------------------------------------------------- */

%exception {
    $action
    tf_rb_raise_pending();
}

/* Constants (the C headers' TF_NEVER, TF_RETRY_NEVER, flags and limits) as
 * Integers, 2**64 - 1 included. */
%typemap(constcode, noblock=1) uint64_t { %set_constant("$symname", ULL2NUM($value)); }
%typemap(constcode, noblock=1) uint32_t { %set_constant("$symname", UINT2NUM($value)); }

/* The rate limiter's outputs use pace's typemap: acquire and peek return
 * [allowed, remaining, retry_at] (retry_at up to 2**64 - 1, "never"). */
%apply uint64_t *next_allowed { uint64_t *remaining, uint64_t *retry_at };
#ifdef TF_BINDING_REDIS
/* The Redis limiter's decisions end with [..., unavailable, message]:
 * the status of a failure of Redis, negated (0 when Redis decided), and its
 * message (nil when Redis decided), copied in the same native call
 * (temporalfilters_redis.i). A second call to read it could run on the
 * thread of another Ruby thread's call under an M:N thread scheduler (Ruby
 * 3.3's RUBY_MN_THREADS), and read that call's message. */
%typemap(in, numinputs=0) uint64_t *unavailable (uint64_t tf_unavailable = 0) {
    $1 = &tf_unavailable;
}
%typemap(argout) uint64_t *unavailable {
    $result = SWIG_Ruby_AppendOutput($result, ULL2NUM(*$1));
    $result = SWIG_Ruby_AppendOutput($result, *$1 ? rb_utf8_str_new_cstr(tf_binding_redis_failure_) : Qnil);
}
%include "temporalfilters_redis.i"
#else
%include "temporalfilters.i"
#endif

%{
static void tf_rb_raise_pending(void) {
    const char *msg = NULL;
    int st = tf_binding_take_error(&msg);
    if (st != 0) tf_rb_raise(st, msg);
}

static void tf_rb_raise_closed(VALUE klass) {
    char msg[128];
    tf_binding_closed_message(rb_class2name(klass), msg, sizeof msg);
    tf_rb_raise_as("ClosedError", TF_ERR_NULL, msg);
}
%}

/* close() and is_closed(), which only Ruby's layer uses (Java and Go free a
 * handle with its destructor, and their objects forget it themselves): close
 * frees the handle the `self` typemap above has taken out of the object
 * (nothing when it was closed already). */
%define TF_RUBY_CLOSE(Native, noun)
%extend Native {
    void close() { tf_##noun##_free($self); }
    bool is_closed() { return $self == NULL; }
}
%enddef
#ifdef TF_BINDING_REDIS
TF_RUBY_CLOSE(RedisLimiterNative, redis_limiter)
#else
TF_RUBY_CLOSE(RecencySketchNative, recency_sketch)
TF_RUBY_CLOSE(AgeBloomNative, age_bloom)
TF_RUBY_CLOSE(TimeBloomNative, time_bloom)
TF_RUBY_CLOSE(RateLimiterNative, rate_limiter)
TF_RUBY_CLOSE(RotatingCuckooNative, rotating_cuckoo)
TF_RUBY_CLOSE(RecencyWindowNative, recency_window)
#endif
