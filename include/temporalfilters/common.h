/**
 * @file temporalfilters/common.h
 * @brief Status codes, errors, versions, options and the clock shared by every
 * structure of libtemporalfilters.
 *
 * The conventions below hold for the whole library; docs/conventions.md
 * gives them in full.
 *
 *  - Every structure is an opaque handle created by `tf_<noun>_new*()` or
 *    `tf_<noun>_deserialize()` and destroyed by `tf_<noun>_free()`; passing
 *    NULL to `_free` is a no-op. The caller owns every handle it receives.
 *  - Every fallible function returns a ::tf_status: ::TF_OK (0) on success or
 *    a negative error code. Results come back through out-parameters, which
 *    are written only on success unless the function says otherwise. A call
 *    that fails leaves the structure exactly as it was.
 *  - tf_last_error_message() explains the last failure on the calling thread
 *    in one English sentence.
 *  - Keys are byte strings `(const void *key, size_t key_len)`; they may
 *    contain NUL bytes. `key` may be NULL only when `key_len` is 0.
 *  - Time is always an argument: `uint64_t now` in the caller's own unit
 *    (milliseconds, seconds, ticks...). Spans, intervals and TTLs are given in
 *    that same unit. The value ::TF_NEVER (0) means "never" and is not a
 *    valid `now`.
 *  - Layouts and modes are chosen by a `flags` argument of the constructors
 *    (`TF_<NOUN>_<FLAG>` bits; unknown bits are refused).
 *  - Results with many fields (info, stats) and options come in versioned
 *    structs whose first field is their `size`, set by a `TF_<NAME>_INIT`
 *    macro, so that fields can be added without breaking callers.
 *  - No function aborts, asserts or exits on anything a caller can pass, and
 *    no C++ exception ever crosses this API.
 *
 * @since 0.1.0
 */
#ifndef TEMPORALFILTERS_COMMON_H
#define TEMPORALFILTERS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @def TF_API
 * @brief Marks the functions the shared library exports.
 *
 * Empty when SWIG reads these headers (it cannot parse attributes).
 * @since 0.1.0
 */
#if defined(SWIG) || defined(TF_DOXYGEN)
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

/**
 * @brief Status codes returned by every fallible function.
 *
 * The numeric values are part of the ABI and never change; new codes are only
 * ever added below the last one.
 * @since 0.1.0
 */
typedef enum tf_status {
    /** Success. @since 0.1.0 */
    TF_OK = 0,
    /** A required pointer argument was NULL. @since 0.1.0 */
    TF_ERR_NULL = -1,
    /** An argument is out of its documented range. @since 0.1.0 */
    TF_ERR_INVALID_ARGUMENT = -2,
    /** An allocation failed. @since 0.1.0 */
    TF_ERR_OUT_OF_MEMORY = -3,
    /** Requested sizes overflow or exceed the library's (or the caller's) limits. @since 0.1.0 */
    TF_ERR_TOO_LARGE = -4,
    /** The output buffer is shorter than needed. @since 0.1.0 */
    TF_ERR_BUFFER_TOO_SMALL = -5,
    /** A blob is shorter than its header says. @since 0.1.0 */
    TF_ERR_TRUNCATED = -6,
    /** A blob does not start with "TFLT". @since 0.1.0 */
    TF_ERR_BAD_MAGIC = -7,
    /** A blob's format version is unknown. @since 0.1.0 */
    TF_ERR_UNSUPPORTED_VERSION = -8,
    /** A blob holds another kind of structure. @since 0.1.0 */
    TF_ERR_WRONG_KIND = -9,
    /** A blob's checksum does not match its bytes. @since 0.1.0 */
    TF_ERR_CHECKSUM = -10,
    /** A blob's fields break the structure's invariants. @since 0.1.0 */
    TF_ERR_CORRUPT = -11,
    /** Two structures differ in shape or seed. @since 0.1.0 */
    TF_ERR_INCOMPATIBLE = -12,
    /** A bug in the library; please report it. @since 0.1.0 */
    TF_ERR_INTERNAL = -13,
    /** A remote store (e.g. the Redis server of libtemporalfilters-redis)
     *  did not answer within the timeout given at creation. @since 0.1.0 */
    TF_ERR_TIMEOUT = -14,
    /** A remote store cannot be reached or cannot serve the request now
     *  (connection refused or lost, reconnection pending, the server
     *  answered with an error). @since 0.1.0 */
    TF_ERR_UNAVAILABLE = -15
} tf_status;

/**
 * @brief The lowest status value defined by this version of the library.
 * @since 0.1.0
 */
#define TF_STATUS_MIN (-15)

/**
 * @brief The timestamp that means "never": a key never seen reads as this.
 * @since 0.1.0
 */
#define TF_NEVER ((uint64_t)0)

/**
 * @brief A time that never comes: the `retry_at` of a request that can never
 * be granted, and the saturated result of any time computation that would
 * overflow.
 * @since 0.1.0
 */
#define TF_RETRY_NEVER UINT64_MAX

/**
 * @brief Options of every `tf_<noun>_deserialize()`.
 *
 * A versioned struct: initialize it with ::TF_DESERIALIZE_OPTIONS_INIT, then
 * set the fields you need. Passing NULL instead of a pointer to it means
 * "all defaults". Options added by a later version are refused
 * (::TF_ERR_INVALID_ARGUMENT) by a library that does not know them, unless
 * they are left at their defaults: an option is never silently ignored.
 * @since 0.1.0
 */
typedef struct tf_deserialize_options {
    /** sizeof(tf_deserialize_options) as the caller was compiled; set by
     *  ::TF_DESERIALIZE_OPTIONS_INIT. @since 0.1.0 */
    size_t size;
    /** The most memory, in bytes, the new structure may hold (as its
     *  `tf_<noun>_memory()` reports it). A blob describing a larger structure
     *  is refused with ::TF_ERR_TOO_LARGE before anything is allocated.
     *  0 (the default, and what NULL options mean) sets no limit beyond the
     *  library's own: whatever sizes a blob declares, deserialize asks for
     *  at most a fixed multiple of the blob's length plus a constant, which
     *  each structure's `tf_<noun>_deserialize()` states (the rate
     *  limiter's, 16 times the blob plus 64 KiB, has the largest multiple;
     *  the rotating cuckoo filter's and the recency window's, the blob plus
     *  256 KiB and 1 MiB, the largest constants; SECURITY.md lists them
     *  all). Set it to lower the
     *  bound for one call, e.g. for blobs from an untrusted source.
     *  @since 0.1.0 */
    uint64_t max_memory;
} tf_deserialize_options;

/**
 * @brief Initializer of ::tf_deserialize_options: every option at its default.
 * @since 0.1.0
 */
#define TF_DESERIALIZE_OPTIONS_INIT \
    { sizeof(tf_deserialize_options), 0 }

/**
 * @brief Names a status code.
 * @param status any value, known or not.
 * @return a static, NUL-terminated name such as "TF_ERR_CHECKSUM";
 *         "TF_ERR_UNKNOWN" for a code this version does not define. Never NULL.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API const char *tf_status_string(int status);

/**
 * @brief Says what exactly went wrong in the calling thread's last failed call.
 *
 * Successful calls do not clear it.
 * @return a message owned by the library, valid until the next failing call
 *         on the same thread; "" when no call has failed on this thread.
 * @note Thread-safe (the message is thread-local).
 * @since 0.1.0
 */
TF_API const char *tf_last_error_message(void);

/**
 * @brief Records `message` as the calling thread's last error message.
 *
 * For companion libraries (libtemporalfilters-redis) and bindings that
 * report their own failures through tf_last_error_message(), so that a
 * program has one error state whichever library failed. The message is
 * copied (at most 511 bytes are kept); NULL clears it, as
 * tf_clear_last_error() does.
 * @param[in] message  a NUL-terminated message, or NULL.
 * @note Thread-safe (the message is thread-local).
 * @since 0.1.0
 */
TF_API void tf_set_last_error_message(const char *message);

/**
 * @brief Clears the calling thread's last error message.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API void tf_clear_last_error(void);

/**
 * @brief The version of the library actually loaded.
 *
 * Compare it with ::TF_VERSION_STRING to detect a header/library mismatch.
 * @return "MAJOR.MINOR.PATCH", a static string.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API const char *tf_version_string(void);

/**
 * @brief ::TF_VERSION_NUMBER of the library actually loaded.
 * @return MAJOR * 10000 + MINOR * 100 + PATCH.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API uint32_t tf_version_number(void);

/**
 * @brief Reads the system's real-time clock.
 *
 * A convenience for callers that want wall-clock milliseconds as `now`; the
 * structures themselves never read a clock (the Redis companion's limiter
 * on the server's clock reads this one for its embedded fallback while Redis
 * cannot answer).
 * @return milliseconds since the Unix epoch, always >= 1.
 * @note Thread-safe.
 * @since 0.1.0
 */
TF_API uint64_t tf_clock_now_ms(void);

#ifdef __cplusplus
}
#endif

#endif /* TEMPORALFILTERS_COMMON_H */
