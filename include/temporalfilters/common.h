/*
 * temporalfilters/common.h - status codes, errors, versions and clock shared
 * by every structure of libtemporalfilters.
 *
 * Conventions that hold for the whole library (see README.md):
 *
 *  - Every structure is an opaque handle created by `tf_<noun>_new*()` or
 *    `tf_<noun>_deserialize()` and destroyed by `tf_<noun>_free()`; passing
 *    NULL to `_free` is a no-op. The caller owns every handle it receives.
 *  - Every fallible function returns a `tf_status`: `TF_OK` (0) on success or
 *    a negative error code. Results come back through out-parameters, which
 *    are written only on success unless the function says otherwise.
 *    A call that fails leaves the structure exactly as it was.
 *  - `tf_last_error_message()` explains the last failure on the calling
 *    thread in one English sentence.
 *  - Keys are byte strings `(const void *key, size_t key_len)`; they may
 *    contain NUL bytes. `key` may be NULL only when `key_len` is 0.
 *  - Time is always an argument: `uint64_t now` in the caller's own unit
 *    (milliseconds, seconds, ticks...). Spans, intervals and TTLs are given in
 *    that same unit. The value 0 means "never" and is not a valid `now`.
 *  - No function aborts, asserts or exits on anything a caller can pass, and
 *    no C++ exception ever crosses this API.
 */
#ifndef TEMPORALFILTERS_COMMON_H
#define TEMPORALFILTERS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TF_API marks the exported functions. SWIG cannot parse attributes, so the
 * macro is empty when SWIG reads these headers. */
#if defined(SWIG)
#define TF_API
#elif defined(_WIN32)
#if defined(TF_BUILDING_LIBRARY)
#define TF_API __declspec(dllexport)
#else
#define TF_API
#endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#define TF_API __attribute__((visibility("default")))
#else
#define TF_API
#endif

/*
 * Status codes. The numeric values are part of the ABI and never change;
 * new codes are only ever added below the last one.
 */
typedef enum tf_status {
    TF_OK = 0,                       /* success */
    TF_ERR_NULL = -1,                /* a required pointer argument was NULL */
    TF_ERR_INVALID_ARGUMENT = -2,    /* an argument is out of its documented range */
    TF_ERR_OUT_OF_MEMORY = -3,       /* an allocation failed */
    TF_ERR_TOO_LARGE = -4,           /* requested sizes overflow or exceed the library's limits */
    TF_ERR_BUFFER_TOO_SMALL = -5,    /* the output buffer is shorter than needed */
    TF_ERR_TRUNCATED = -6,           /* a blob is shorter than its header says */
    TF_ERR_BAD_MAGIC = -7,           /* a blob does not start with "TFLT" */
    TF_ERR_UNSUPPORTED_VERSION = -8, /* a blob's format version is unknown */
    TF_ERR_WRONG_KIND = -9,          /* a blob holds another kind of structure */
    TF_ERR_CHECKSUM = -10,           /* a blob's checksum does not match its bytes */
    TF_ERR_CORRUPT = -11,            /* a blob's fields break the structure's invariants */
    TF_ERR_INCOMPATIBLE = -12,       /* two structures differ in shape or seed */
    TF_ERR_INTERNAL = -13            /* a bug in the library; please report it */
} tf_status;

/* The lowest status value defined by this version of the library. */
#define TF_STATUS_MIN (-13)

/* The timestamp value that means "never seen". */
#define TF_NEVER ((uint64_t)0)

/*
 * Returns a static, NUL-terminated name for a status code, e.g.
 * "TF_ERR_CHECKSUM". Unknown codes give "TF_ERR_UNKNOWN". Never NULL.
 * Thread-safe.
 */
TF_API const char *tf_status_string(int status);

/*
 * Returns a message describing the most recent failure of a library call on
 * the calling thread, or "" if no call has failed on this thread. Successful
 * calls do not clear it. The string is owned by the library and stays valid
 * until the next failing call on the same thread. Thread-safe (the message is
 * thread-local).
 */
TF_API const char *tf_last_error_message(void);

/* Clears the calling thread's last error message. Thread-safe. */
TF_API void tf_clear_last_error(void);

/*
 * Returns the library's version as "MAJOR.MINOR.PATCH", matching the
 * TF_VERSION_* macros of the headers it was built with. Compare it with
 * TF_VERSION_STRING to detect a header/library mismatch. Thread-safe.
 */
TF_API const char *tf_version_string(void);

/* Returns TF_VERSION_NUMBER of the library actually loaded. Thread-safe. */
TF_API uint32_t tf_version_number(void);

/*
 * Reads the system's real-time clock, in milliseconds since the Unix epoch.
 * A convenience for callers that want wall-clock milliseconds as `now`;
 * the library itself never reads a clock. Always >= 1. Thread-safe.
 */
TF_API uint64_t tf_clock_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_COMMON_H */
