// Small helpers shared by the fuzz targets (header-only, test code only).
//
// A fuzz target reports a finding by aborting, so every check here prints
// what went wrong (file, line, condition) to stderr and calls abort().
#ifndef TF_TESTS_FUZZ_COMMON_HPP
#define TF_TESTS_FUZZ_COMMON_HPP

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <murmurhash.h>
#include <temporalfilters.h>

#define FUZZ_CHECK(cond)                                   \
    do {                                                   \
        if (!(cond)) fuzz_fail(__FILE__, __LINE__, #cond); \
    } while (0)

[[noreturn]] inline void fuzz_fail(const char *file, int line, const char *what) {
    std::fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n", file, line, what);
    std::fprintf(stderr, "  last library error message: \"%s\"\n", tf_last_error_message());
    std::fflush(stderr);
    std::abort();
}

// The envelope of every blob (docs/wire-format.md): a 20-byte header
// (magic, version, kind, flags, payload length at offset 12) and an 8-byte
// checksum, MurmurHash3 x64_128 (seed 0, low half) of everything before it.
constexpr size_t kFuzzHeader = 20;
constexpr size_t kFuzzOverhead = 28;

inline void fuzz_put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}

inline uint64_t fuzz_get_le(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// `blob` (at least kFuzzOverhead bytes) with its payload length and
// checksum made consistent, so that mutations reach the checks behind them.
inline std::vector<uint8_t> fuzz_seal(std::vector<uint8_t> blob) {
    fuzz_put_le64(blob.data() + 12, uint64_t(blob.size() - kFuzzOverhead));
    uint64_t h[2];
    lmmh_x64_128(blob.data(), unsigned(blob.size() - 8), 0, h);
    fuzz_put_le64(blob.data() + blob.size() - 8, h[0]);
    return blob;
}

// Runs check(blob, size) on the input sealed, when it can hold an envelope.
template <class F>
inline void fuzz_check_sealed(const uint8_t *data, size_t size, F &&check) {
    if (size < kFuzzOverhead || size > UINT_MAX) return;
    const std::vector<uint8_t> sealed = fuzz_seal(std::vector<uint8_t>(data, data + size));
    check(sealed.data(), sealed.size());
}

// A failed call must return a negative status that the library defines and
// leave an explanation in the thread's last-error message.
inline void fuzz_check_failure(tf_status st) {
    FUZZ_CHECK(st < 0);
    FUZZ_CHECK(int(st) >= TF_STATUS_MIN);
    const char *msg = tf_last_error_message();
    FUZZ_CHECK(msg != nullptr && msg[0] != '\0');
}

// The failure codes tf_recency_sketch_deserialize documents.
inline bool fuzz_is_deserialize_error(tf_status st) {
    switch (st) {
        case TF_ERR_NULL:
        case TF_ERR_TRUNCATED:
        case TF_ERR_BAD_MAGIC:
        case TF_ERR_UNSUPPORTED_VERSION:
        case TF_ERR_WRONG_KIND:
        case TF_ERR_CHECKSUM:
        case TF_ERR_CORRUPT:
        case TF_ERR_OUT_OF_MEMORY:
            return true;
        default:
            return false;
    }
}

// The clock of an operation program after one move chosen by `how`: forwards
// a little (how < 64), a lot (how * step, how < 128), back by up to 63 but
// never below 1 (how < 192), or not at all. Shared by the time-aware targets.
inline uint64_t fuzz_move_clock(uint64_t now, uint8_t how, uint64_t step) {
    if (how < 64) return now + how;
    if (how < 128) return now + uint64_t(how) * step;
    if (how < 192) return now > 100 ? now - (how - 128) : 1;
    return now;
}

inline uint64_t fuzz_sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// The pacing rule of the header: a key last granted at `last` (0: never)
// may be granted at `now` when last + interval <= now (exact arithmetic).
inline bool fuzz_pace_due(uint64_t last, uint64_t now, uint64_t interval) {
    return last == 0 || (now >= last && now - last >= interval);
}

// A structure's blob through the public API (its serialized_size, then its
// serialize into exactly that many bytes).
template <class H>
inline std::vector<uint8_t> fuzz_blob_of(const H *h, tf_status (*serialized_size)(const H *, size_t *),
                                         tf_status (*serialize)(const H *, void *, size_t, size_t *)) {
    size_t size = 0, written = 0;
    FUZZ_CHECK(serialized_size(h, &size) == TF_OK);
    FUZZ_CHECK(size >= kFuzzOverhead);
    std::vector<uint8_t> blob(size);
    FUZZ_CHECK(serialize(h, blob.data(), blob.size(), &written) == TF_OK);
    FUZZ_CHECK(written == size);
    return blob;
}

// A deserialize of a fuzzed blob that failed: a status deserialize
// documents, with its message, never TF_ERR_OUT_OF_MEMORY (a structure holds
// at most its blob's size plus a constant), and nothing made.
inline void fuzz_check_refused_blob(tf_status st, const void *made) {
    fuzz_check_failure(st);
    FUZZ_CHECK(fuzz_is_deserialize_error(st));
    FUZZ_CHECK(st != TF_ERR_OUT_OF_MEMORY);
    FUZZ_CHECK(made == nullptr);
}

// The max_memory contract of a blob that loads, whose structure holds
// `need` bytes: a limit of exactly that loads it, one byte less is
// TF_ERR_TOO_LARGE and makes nothing.
template <class H>
inline void fuzz_check_max_memory(tf_status (*deserialize)(const void *, size_t, const tf_deserialize_options *, H **),
                                  void (*free_fn)(H *), const uint8_t *data, size_t size, size_t need) {
    tf_deserialize_options opts = TF_DESERIALIZE_OPTIONS_INIT;
    opts.max_memory = need;
    H *h = nullptr;
    FUZZ_CHECK(deserialize(data, size, &opts, &h) == TF_OK && h != nullptr);
    free_fn(h);
    h = nullptr;
    opts.max_memory = need - 1;
    FUZZ_CHECK(deserialize(data, size, &opts, &h) == TF_ERR_TOO_LARGE && h == nullptr);
}

// The sketch's blob.
inline std::vector<uint8_t> fuzz_snapshot(const tf_recency_sketch *s) {
    return fuzz_blob_of(s, tf_recency_sketch_serialized_size, tf_recency_sketch_serialize);
}

// A little reader over a program's bytes: a byte past the end reads as 0;
// numbers are little-endian, their bytes read in order.
struct FuzzInput {
    const uint8_t *p;
    size_t n;
    size_t pos = 0;
    FuzzInput(const uint8_t *data, size_t size) : p(data), n(size) {}
    bool more() const { return pos < n; }
    uint8_t byte() { return pos < n ? p[pos++] : 0; }
    uint16_t u16() {
        const uint16_t lo = byte();
        return uint16_t(lo | (byte() << 8));
    }
    uint64_t u64() {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v |= uint64_t(byte()) << (8 * i);
        return v;
    }
    std::string bytes(size_t k) {
        std::string s;
        for (size_t i = 0; i < k; ++i) s.push_back(char(byte()));
        return s;
    }
};

// A target whose first input byte picks what the rest of the input is:
// modes[data[0] % N](the rest).
using FuzzMode = void (*)(const uint8_t *data, size_t size);
template <size_t N>
inline void fuzz_by_first_byte(const uint8_t *data, size_t size, const FuzzMode (&modes)[N]) {
    if (size > 0) modes[data[0] % N](data + 1, size - 1);
}

// The number of cells a sketch of this shape holds (blocked tables are
// rounded up to whole 8-cell lines), as documented in the header.
inline uint64_t fuzz_expected_cells(uint64_t width, uint32_t depth, uint32_t flags) {
    uint64_t n = width * depth;
    if (flags & TF_RECENCY_SKETCH_BLOCKED) n = (n + 7) / 8 * 8;
    return n;
}

#endif
