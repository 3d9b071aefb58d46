// Status handling shared by every structure: the thread-local last-error
// message, and the guard that keeps C++ exceptions from crossing the C API.
//
// fail() and fail_as() (common/error.cpp, in the internal static library
// temporalfilters_common) format a message and store it through
// tf_set_last_error_message(), the core's: the core library and its
// companions (libtemporalfilters-redis) link the same code and share the
// core's one thread-local message.
#ifndef TF_LIB_COMMON_STATUS_HPP
#define TF_LIB_COMMON_STATUS_HPP

#include <cstddef>
#include <cstdint>
#include <new>
#include <exception>

#include "temporalfilters/common.h"

namespace tf {

// The bytes of the thread-local last-error message, its NUL included.
constexpr size_t kLastErrorCapacity = 512;

// Records a printf-style message for tf_last_error_message() and returns
// `status`, so that a failure reads `return fail(TF_ERR_NULL, "...")`.
tf_status fail(tf_status status, const char *fmt, ...) noexcept __attribute__((format(printf, 2, 3)));

// Turns the calling thread's last failure into one of `status`, its
// message behind `prefix` ("<prefix>: <message>"): a blob whose fields a
// check refused is TF_ERR_CORRUPT, with the check's reason.
tf_status fail_as(tf_status status, const char *prefix) noexcept;

// The one check of a creation call's flags against the bits a structure
// knows: any other bit is TF_ERR_INVALID_ARGUMENT (docs/conventions.md),
// never ignored, so that a later version can give it a meaning.
inline tf_status check_flags(uint32_t flags, uint32_t known) noexcept {
    if ((flags & ~known) != 0) return fail(TF_ERR_INVALID_ARGUMENT, "flags has unknown bits 0x%x", flags & ~known);
    return TF_OK;
}

// Runs `body` (returning tf_status) and turns any escaping exception into a
// status: std::bad_alloc -> TF_ERR_OUT_OF_MEMORY, anything else ->
// TF_ERR_INTERNAL. Zero cost when nothing throws.
template <class F>
inline tf_status guard(F &&body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc &) {
        return fail(TF_ERR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception &e) {
        return fail(TF_ERR_INTERNAL, "internal error: %s", e.what());
    } catch (...) {
        return fail(TF_ERR_INTERNAL, "internal error: unknown exception");
    }
}

// Argument checks common to every C entry point.
#define TF_REQUIRE_NONNULL(ptr, what)                                                        \
    do {                                                                                     \
        if ((ptr) == nullptr) return ::tf::fail(TF_ERR_NULL, "%s must not be NULL", (what)); \
    } while (0)

#define TF_REQUIRE_KEY(key, len)                                                             \
    do {                                                                                     \
        if ((key) == nullptr && (len) != 0)                                                  \
            return ::tf::fail(TF_ERR_NULL, "key is NULL but key_len is %zu", (size_t)(len)); \
    } while (0)

#define TF_REQUIRE_TIME(now)                                                                            \
    do {                                                                                                \
        if ((now) == 0) return ::tf::fail(TF_ERR_INVALID_ARGUMENT, "now must be >= 1 (0 means never)"); \
    } while (0)

// Checks the key arrays of a batch call: keys[i] may be NULL only when its
// length is 0.
inline tf_status check_key_batch(const void *const *keys, const size_t *key_lens, size_t count) {
    if (count == 0) return TF_OK;
    TF_REQUIRE_NONNULL(keys, "keys");
    TF_REQUIRE_NONNULL(key_lens, "key_lens");
    for (size_t i = 0; i < count; ++i)
        if (keys[i] == nullptr && key_lens[i] != 0)
            return fail(TF_ERR_NULL, "keys[%zu] is NULL but key_lens[%zu] is %zu", i, i, key_lens[i]);
    return TF_OK;
}

// The checks of a batch call over `count` keys, in the order every batch
// call makes them: the handle, the key arrays, `now` when the call takes a
// time (kNoTime when it does not), then, for count > 0, the answers array
// (out_name; nullptr when the call has none).
constexpr uint64_t kNoTime = ~uint64_t(0);
inline tf_status check_batch_call(const void *handle, const void *const *keys, const size_t *key_lens, size_t count,
                                  uint64_t now, const void *out, const char *out_name) {
    TF_REQUIRE_NONNULL(handle, "filter");
    tf_status st = check_key_batch(keys, key_lens, count);
    if (st != TF_OK) return st;
    if (now != kNoTime) TF_REQUIRE_TIME(now);
    if (count != 0 && out_name != nullptr) TF_REQUIRE_NONNULL(out, out_name);
    return TF_OK;
}

// A batch whose key `done` failed with `st` (the keys before it were
// processed): the status, with the key's index before its message.
inline tf_status batch_failed(tf_status st, size_t done) {
    return fail(st, "key %zu of the batch: %s", done, tf_last_error_message());
}

}  // namespace tf

#endif
