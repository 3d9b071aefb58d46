// The wire codec: one envelope for every structure (docs/wire-format.md).
//
//   offset size field
//   0      4    magic "TFLT"
//   4      2    format version (1)
//   6      2    kind
//   8      4    flags (kind-specific; undefined bits must be 0)
//   12     8    payload length n
//   20     n    payload
//   20+n   8    checksum: low 64 bits of MurmurHash3 x64_128 (seed 0) of [0, 20+n)
//
// All integers little-endian, written field by field. Writer and Reader are
// bounds-checked: a write past the end or a read past the end sets a sticky
// failure flag instead of touching memory.
#ifndef TF_LIB_COMMON_WIRE_HPP
#define TF_LIB_COMMON_WIRE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "common/coverage.hpp"
#include "common/hash.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"

namespace tf {
namespace wire {

constexpr size_t kHeaderSize = 20;
constexpr size_t kTrailerSize = 8;
constexpr size_t kOverhead = kHeaderSize + kTrailerSize;
constexpr uint16_t kFormatVersion = 1;

enum class Kind : uint16_t {
    RecencySketch = 1,
    AgeBloom = 2,
    TimeBloom = 3,
    RateLimiter = 4,
    RotatingCuckoo = 5,
    RecencyWindow = 6,
};

const char *kind_name(uint16_t kind);

class Writer {
   public:
    Writer(void *buf, size_t cap) : p_(static_cast<uint8_t *>(buf)), cap_(cap), pos_(0), ok_(true) {}
    void u8(uint8_t v) { put(&v, 1); }
    void u16(uint16_t v) {
        uint8_t b[2] = {uint8_t(v), uint8_t(v >> 8)};
        put(b, 2);
    }
    void u32(uint32_t v) {
        uint8_t b[4];
        for (int i = 0; i < 4; ++i) b[i] = uint8_t(v >> (8 * i));
        put(b, 4);
    }
    void u64(uint64_t v) {
        uint8_t b[8];
        for (int i = 0; i < 8; ++i) b[i] = uint8_t(v >> (8 * i));
        put(b, 8);
    }
    void f64(double v) {
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        u64(bits);
    }
    void bytes(const void *src, size_t n) { put(src, n); }
    // An array of uint64 values; `atomic` reads each with a relaxed atomic
    // load (for structures written concurrently while they are serialized).
    void u64_array(const uint64_t *src, size_t n, bool atomic = false);
    size_t pos() const { return pos_; }
    bool ok() const { return ok_; }
    uint8_t *data() { return p_; }

   private:
    // Not instrumented for fuzzing (common/coverage.hpp), like the
    // reader's get and view: a short buffer clears ok_, which the callers
    // branch on.
    TF_NO_FUZZ_COVERAGE void put(const void *src, size_t n) {
        if (!ok_ || n > cap_ - pos_) {
            ok_ = false;
            return;
        }
        if (n) std::memcpy(p_ + pos_, src, n);
        pos_ += n;
    }
    uint8_t *p_;
    size_t cap_, pos_;
    bool ok_;
};

class Reader {
   public:
    Reader() : p_(nullptr), len_(0), pos_(0), ok_(true) {}
    Reader(const void *buf, size_t len) : p_(static_cast<const uint8_t *>(buf)), len_(len), pos_(0), ok_(true) {}
    uint8_t u8() {
        uint8_t b = 0;
        get(&b, 1);
        return b;
    }
    uint16_t u16() {
        uint8_t b[2] = {0, 0};
        get(b, 2);
        return uint16_t(b[0] | (b[1] << 8));
    }
    uint32_t u32() {
        uint8_t b[4] = {0, 0, 0, 0};
        get(b, 4);
        uint32_t v = 0;
        for (int i = 3; i >= 0; --i) v = (v << 8) | b[i];
        return v;
    }
    uint64_t u64() {
        uint8_t b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        get(b, 8);
        uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
        return v;
    }
    double f64() {
        uint64_t bits = u64();
        double v;
        std::memcpy(&v, &bits, 8);
        return v;
    }
    // Fills dst[0..n) from the stream; fails (and leaves dst alone) when
    // fewer than n*8 bytes remain.
    void u64_array(uint64_t *dst, size_t n);
    // A view of the next n bytes, or nullptr when fewer remain.
    TF_NO_FUZZ_COVERAGE const uint8_t *view(size_t n) {
        if (!ok_ || n > len_ - pos_) {
            ok_ = false;
            return nullptr;
        }
        const uint8_t *v = p_ + pos_;
        pos_ += n;
        return v;
    }
    size_t remaining() const { return ok_ ? len_ - pos_ : 0; }
    bool ok() const { return ok_; }
    // True when every byte was consumed and no read failed.
    bool done() const { return ok_ && pos_ == len_; }

   private:
    TF_NO_FUZZ_COVERAGE void get(void *dst, size_t n) {
        if (!ok_ || n > len_ - pos_) {
            ok_ = false;
            return;
        }
        std::memcpy(dst, p_ + pos_, n);
        pos_ += n;
    }
    const uint8_t *p_;
    size_t len_, pos_;
    bool ok_;
};

// Total blob size for a payload of `payload_size` bytes; false on overflow.
bool blob_size(size_t payload_size, size_t *total);

// Serializes a structure: checks `buf`/`written`, reports the needed size
// when `cap` is short (TF_ERR_BUFFER_TOO_SMALL, nothing written to buf),
// writes header, lets `write_payload(Writer&)` write exactly `payload_size`
// bytes, then the checksum.
template <class F>
tf_status encode(Kind kind, uint32_t flags, size_t payload_size, void *buf, size_t cap, size_t *written,
                 F &&write_payload) {
    TF_REQUIRE_NONNULL(written, "written");
    size_t total;
    if (!blob_size(payload_size, &total)) return fail(TF_ERR_TOO_LARGE, "blob size overflows size_t");
    if (cap < total) {
        *written = total;
        return fail(TF_ERR_BUFFER_TOO_SMALL, "buffer holds %zu bytes, the blob needs %zu", cap, total);
    }
    TF_REQUIRE_NONNULL(buf, "buf");
    Writer w(buf, cap);
    w.bytes("TFLT", 4);
    w.u16(kFormatVersion);
    w.u16(static_cast<uint16_t>(kind));
    w.u32(flags);
    w.u64(payload_size);
    write_payload(w);
    if (!w.ok() || w.pos() != kHeaderSize + payload_size)
        return fail(TF_ERR_INTERNAL, "payload writer wrote %zu bytes, expected %zu", w.pos() - kHeaderSize,
                    payload_size);
    w.u64(checksum64(buf, kHeaderSize + payload_size));
    if (!w.ok()) return fail(TF_ERR_INTERNAL, "checksum did not fit");
    *written = total;
    return TF_OK;
}

// Opens a blob: validates, in this order, the length (under the 28-byte
// envelope: TF_ERR_TRUNCATED), magic, version, kind, payload length (longer
// than the blob holds: TF_ERR_TRUNCATED; bytes after the checksum:
// TF_ERR_CORRUPT), checksum, and last the flags (bits outside
// `allowed_flags`: TF_ERR_CORRUPT, so a damaged blob reports
// TF_ERR_CHECKSUM first); on success gives the flags and a Reader over the
// payload.
tf_status open(const void *buf, size_t len, Kind kind, uint32_t allowed_flags, uint32_t *flags, Reader *payload);

// The first steps of every tf_<noun>_deserialize after its `out` check: buf
// must not be NULL, the caller's options (NULL: the defaults) give the
// limits the structure's reader checks before allocating, then open().
tf_status open_for_deserialize(const void *buf, size_t len, const tf_deserialize_options *options, Kind kind,
                               uint32_t allowed_flags, DeserializeLimits *limits, uint32_t *flags, Reader *payload);

// The whole of a tf_<noun>_deserialize, for a structure T with
//   static constexpr uint32_t kKnownFlags;  (the envelope flags its blobs may set)
//   static tf_status read(Reader &, uint32_t flags, const DeserializeLimits &, std::unique_ptr<T> *);
// (read validates the payload and checks the limits before allocating);
// `adopt(std::unique_ptr<T>)` returns the caller's new handle.
template <class T, class Handle, class Adopt>
tf_status deserialize(const void *buf, size_t len, const tf_deserialize_options *options, Kind kind, Handle **out,
                      Adopt &&adopt) {
    return guard([&] {
        TF_REQUIRE_NONNULL(out, "out");
        DeserializeLimits limits;
        uint32_t flags;
        Reader payload;
        tf_status st = open_for_deserialize(buf, len, options, kind, T::kKnownFlags, &limits, &flags, &payload);
        if (st != TF_OK) return st;
        std::unique_ptr<T> made;
        st = T::read(payload, flags, limits, &made);
        if (st != TF_OK) return st;
        *out = adopt(std::move(made));
        return TF_OK;
    });
}

// tf_<noun>_serialized_size: the size of the blob around a payload of
// `payload_size` bytes, into *size (TF_ERR_NULL, TF_ERR_TOO_LARGE).
tf_status serialized_size(size_t payload_size, size_t *size);

}  // namespace wire
}  // namespace tf

#endif
