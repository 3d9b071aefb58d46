// Versioned structs of the C API: the info and stats results and the
// options every structure takes (docs/conventions.md, "Versioned structs").
//
// Their first field is `size_t size`, the struct's size as the caller was
// compiled (set by the struct's _INIT macro). The library writes only the
// bytes both sides know: a caller built against an older, shorter version is
// never written past its `size`, and one built against a newer, longer
// version keeps its own values in the fields this library does not know.
// Options are read the same way, but a newer caller's options this library
// does not know must be at their default (zero bytes): anything else is
// refused (TF_ERR_INVALID_ARGUMENT), never silently ignored. A size below
// the first version's, or above 4096 bytes, is a struct that was never
// initialized: TF_ERR_INVALID_ARGUMENT.
#ifndef TF_LIB_COMMON_VERSIONED_HPP
#define TF_LIB_COMMON_VERSIONED_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/status.hpp"
#include "temporalfilters/common.h"

// The size of a versioned struct's first version: sizeof the struct as it
// was then, the end of the last field it had rounded up to the struct's
// alignment (its tail padding included, as every caller's `size` of that
// version). Written once per struct, beside the fields of 0.1.0, and never
// changed when fields are added after it.
#define TF_VERSIONED_END(T, last_field) \
    (::tf::round_up(offsetof(T, last_field) + sizeof(((T *)nullptr)->last_field), alignof(T)))

namespace tf {

constexpr size_t round_up(size_t n, size_t align) { return (n + align - 1) / align * align; }

// The most bytes any version of a versioned struct may have: a larger
// `size` is a struct that was never initialized.
constexpr size_t kMaxVersionedSize = 4096;

// The one check of a caller's `size` (`what` names the argument): below the
// first version's or above kMaxVersionedSize, the struct was never
// initialized with its _INIT macro.
inline tf_status check_versioned_size(size_t size, size_t first_version_size, const char *what) noexcept {
    if (size < first_version_size)
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "%s->size is %zu, below the %zu bytes of its first version: initialize it with its _INIT macro",
                    what, size, first_version_size);
    if (size > kMaxVersionedSize)
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "%s->size is %zu, above the %zu bytes any version may have: initialize it with its _INIT macro",
                    what, size, kMaxVersionedSize);
    return TF_OK;
}

// Fills the caller's struct `out` of out->size bytes: `fill(T &full)` sets
// every field this library knows in a local struct whose bytes are all
// zero first (padding included), then the bytes both sides know are copied
// (`size` stays the caller's; fields of a newer version are left as the
// caller has them). No byte of the library's stack ever reaches the caller.
// `what` names the argument in the error message; nothing is written on
// failure.
template <class T, class Fill>
tf_status put_versioned(T *out, size_t first_version_size, const char *what, Fill &&fill) {
    static_assert(std::is_standard_layout<T>::value && offsetof(T, size) == 0, "size must be the first field");
    TF_REQUIRE_NONNULL(out, what);
    tf_status st = check_versioned_size(out->size, first_version_size, what);
    if (st != TF_OK) return st;
    T full;
    std::memset(static_cast<void *>(&full), 0, sizeof full);
    fill(full);
    const size_t n = out->size < sizeof(T) ? out->size : sizeof(T);
    std::memcpy(reinterpret_cast<char *>(out) + sizeof(size_t), reinterpret_cast<const char *>(&full) + sizeof(size_t),
                n - sizeof(size_t));
    return TF_OK;
}

// Reads the caller's options `in` (NULL: all defaults) over `*out`, which
// holds the defaults on entry. A caller built against a newer header may
// pass a longer struct: its fields beyond this library's must be 0 (their
// defaults, as its _INIT macro leaves them); an option this library does
// not know is refused, never ignored.
template <class T>
tf_status get_versioned(const T *in, T *out, size_t first_version_size, const char *what) noexcept {
    static_assert(std::is_standard_layout<T>::value && offsetof(T, size) == 0, "size must be the first field");
    out->size = sizeof(T);
    if (in == nullptr) return TF_OK;
    tf_status st = check_versioned_size(in->size, first_version_size, what);
    if (st != TF_OK) return st;
    const char *bytes = reinterpret_cast<const char *>(in);
    for (size_t i = sizeof(T); i < in->size; ++i)
        if (bytes[i] != 0)
            return fail(TF_ERR_INVALID_ARGUMENT,
                        "%s sets byte %zu of its %zu, a field unknown to this library version (%s, which knows "
                        "%zu bytes): leave it at its default or use a newer library",
                        what, i, in->size, TF_VERSION_STRING, sizeof(T));
    const size_t n = in->size < sizeof(T) ? in->size : sizeof(T);
    std::memcpy(reinterpret_cast<char *>(out) + sizeof(size_t), bytes + sizeof(size_t), n - sizeof(size_t));
    return TF_OK;
}

// The options of every tf_<noun>_deserialize, read once at its start.
struct DeserializeLimits {
    uint64_t max_memory = 0;  // 0: no limit of the caller's

    // TF_ERR_TOO_LARGE when a structure of `bytes` (what its _memory()
    // would report) exceeds the caller's limit. Call it before allocating.
    tf_status check_memory(uint64_t bytes) const noexcept {
        if (max_memory != 0 && bytes > max_memory)
            return fail(TF_ERR_TOO_LARGE,
                        "the blob describes a structure of %llu bytes, above options->max_memory (%llu bytes)",
                        (unsigned long long)bytes, (unsigned long long)max_memory);
        return TF_OK;
    }
};

inline tf_status read_deserialize_options(const tf_deserialize_options *in, DeserializeLimits *out) noexcept {
    tf_deserialize_options o = TF_DESERIALIZE_OPTIONS_INIT;
    tf_status st = get_versioned(in, &o, TF_VERSIONED_END(tf_deserialize_options, max_memory), "options");
    if (st != TF_OK) return st;
    out->max_memory = o.max_memory;
    return TF_OK;
}

}  // namespace tf

#endif
