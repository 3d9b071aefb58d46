/*
 * bindings/temporalfilters_slot.i - what every SWIG module of the bindings
 * shares: the error slot (the failure a wrapper records for the language's
 * %exception block to raise), the split of keys laid end to end for the
 * batch calls, and the one-line method bodies (TF_BINDING_RETURN,
 * TF_BINDING_GET_STRUCT). %included by the shared interface of the core
 * (temporalfilters.i) and by that of the Redis limiter
 * (temporalfilters_redis.i), each of which is its own native module: the
 * slot is per module and per thread, and each module's %exception block
 * takes what its own wrappers recorded.
 */

%{
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "temporalfilters/common.h"

/* ---- errors ---------------------------------------------------------- */

static __thread int tf_binding_status_;
static __thread char tf_binding_message_[512];

/* Records a failure of the current call; returns st. */
static int tf_binding_check(tf_status st) {
    if (st != TF_OK) {
        tf_binding_status_ = st;
        snprintf(tf_binding_message_, sizeof tf_binding_message_, "%s", tf_last_error_message());
    }
    return st;
}

/* A failure found by the binding layer itself (not by the library). */
static void tf_binding_fail(tf_status st, const char *msg) {
    tf_binding_status_ = st;
    snprintf(tf_binding_message_, sizeof tf_binding_message_, "%s", msg);
}

/* Whether the current call has recorded a failure (without taking it). */
static __attribute__((unused)) int tf_binding_pending(void) { return tf_binding_status_ != 0; }

/* "the <Name> is closed", the message of a call on a closed handle of the
 * class `name` (e.g. "RecencySketchNative", "struct RecencySketchNative" or
 * "TemporalFilters::Native::RecencySketchNative": the last part, without
 * "struct " and "Native"). */
static __attribute__((unused)) void tf_binding_closed_message(const char *name, char *buf, size_t cap) {
    const char *colon = strrchr(name, ':'), *space = strrchr(name, ' ');
    if (colon) name = colon + 1;
    if (space && space + 1 > name) name = space + 1;
    size_t len = strlen(name);
    if (len > 6 && strcmp(name + len - 6, "Native") == 0) len -= 6;
    snprintf(buf, cap, "the %.*s is closed", (int)len, name);
}

/* Records that the call was made on a closed handle of the class `name`
 * (TF_ERR_NULL, tf_binding_closed_message). */
static __attribute__((unused)) void tf_binding_fail_closed(const char *name) {
    char msg[128];
    tf_binding_closed_message(name, msg, sizeof msg);
    tf_binding_fail(TF_ERR_NULL, msg);
}

/* Takes the pending failure, if any: returns its status (0 when none) and
 * points *msg at its message (valid until the next call on this thread). */
static int tf_binding_take_error(const char **msg) {
    int st = tf_binding_status_;
    tf_binding_status_ = 0;
    *msg = tf_binding_message_;
    return st;
}

/* Splits keys laid end to end in `data` (lens[i] bytes each) into the
 * pointer and length arrays of the C batch calls. Uses the caller's arrays
 * when count <= cap, malloc'ed ones otherwise (free them with
 * tf_binding_free_split). Returns 0, or -1 with the failure recorded. */
static int tf_binding_split_keys(const void *data, size_t data_len, const int32_t *lens, size_t count,
                                 const void **small_ptrs, size_t *small_lens, size_t cap,
                                 const void ***ptrs_out, size_t **lens_out) {
    const void **ptrs = small_ptrs;
    size_t *szs = small_lens;
    if (count > cap) {
        ptrs = (const void **)malloc(count * sizeof *ptrs);
        szs = (size_t *)malloc(count * sizeof *szs);
        if (!ptrs || !szs) {
            free((void *)ptrs);
            free(szs);
            tf_binding_fail(TF_ERR_OUT_OF_MEMORY, "out of memory splitting a batch of keys");
            return -1;
        }
    }
    size_t off = 0;
    for (size_t i = 0; i < count; ++i) {
        if (lens[i] < 0 || (size_t)lens[i] > data_len - off) {
            off = data_len + 1;
            break;
        }
        ptrs[i] = (const char *)data + off;
        szs[i] = (size_t)lens[i];
        off += (size_t)lens[i];
    }
    if (off != data_len) {
        if (ptrs != small_ptrs) {
            free((void *)ptrs);
            free(szs);
        }
        tf_binding_fail(TF_ERR_INVALID_ARGUMENT, "batch key lengths do not match the key bytes");
        return -1;
    }
    *ptrs_out = ptrs;
    *lens_out = szs;
    return 0;
}

static void tf_binding_free_split(const void **ptrs, size_t *lens, const void **small_ptrs) {
    if (ptrs != small_ptrs) {
        free((void *)ptrs);
        free(lens);
    }
}

#define TF_BINDING_SMALL_BATCH 64

/* ---- method bodies ------------------------------------------------------ */

/* The body of a method returning what `call` writes to the local `v` (of
 * `type`, 0 before the call), the status recorded: one line per method. */
#define TF_BINDING_RETURN(type, call) \
    type v = 0;                       \
    tf_binding_check(call);           \
    return v

/* The versioned info and stats structs are returned as a malloc'ed copy that
 * the language owns (%newobject: Ruby's GC frees it; Java and Go call
 * delete() / Delete...() once they have read it), or NULL with the failure
 * recorded: TF_BINDING_GET_STRUCT(type, call, INIT) is the body of every
 * info() and stats(), `call` filling the local `v` (INIT comes last: SWIG
 * expands it into a braced list, commas and all). */
static void *tf_binding_result_copy(tf_status st, const void *filled, size_t n) {
    if (tf_binding_check(st) != TF_OK) return NULL;
    void *copy = malloc(n);
    if (!copy) {
        tf_binding_fail(TF_ERR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    memcpy(copy, filled, n);
    return copy;
}
#define TF_BINDING_GET_STRUCT(type, call, ...) \
    type v = __VA_ARGS__;                      \
    return (type *)tf_binding_result_copy((call), &v, sizeof v)
%}
