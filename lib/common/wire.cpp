#include "common/wire.hpp"

#include "common/hash.hpp"

namespace tf {
namespace wire {

namespace {
constexpr bool kLittleEndianHost =
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    false;
#else
    true;
#endif
}  // namespace

const char *kind_name(uint16_t kind) {
    switch (kind) {
        case 1:
            return "recency sketch";
        case 2:
            return "age-partitioned Bloom filter";
        case 3:
            return "time-limited Bloom filter";
        case 4:
            return "rate limiter";
        case 5:
            return "rotating cuckoo filter";
        case 6:
            return "recency window";
        default:
            return "unknown kind";
    }
}

void Writer::u64_array(const uint64_t *src, size_t n, bool atomic) {
    if (!ok_ || n > (cap_ - pos_) / 8) {
        ok_ = false;
        return;
    }
    uint8_t *dst = p_ + pos_;
    if (kLittleEndianHost && !atomic) {
        std::memcpy(dst, src, n * 8);
    } else {
        for (size_t i = 0; i < n; ++i) {
            uint64_t v = atomic ? __atomic_load_n(&src[i], __ATOMIC_RELAXED) : src[i];
            for (int b = 0; b < 8; ++b) dst[i * 8 + b] = uint8_t(v >> (8 * b));
        }
    }
    pos_ += n * 8;
}

void Reader::u64_array(uint64_t *dst, size_t n) {
    if (!ok_ || n > (len_ - pos_) / 8) {
        ok_ = false;
        return;
    }
    const uint8_t *src = p_ + pos_;
    if (kLittleEndianHost) {
        std::memcpy(dst, src, n * 8);
    } else {
        for (size_t i = 0; i < n; ++i) {
            uint64_t v = 0;
            for (int b = 7; b >= 0; --b) v = (v << 8) | src[i * 8 + b];
            dst[i] = v;
        }
    }
    pos_ += n * 8;
}

bool blob_size(size_t payload_size, size_t *total) {
    if (payload_size > SIZE_MAX - kOverhead) return false;
    *total = payload_size + kOverhead;
    return true;
}

tf_status open(const void *buf, size_t len, Kind kind, uint32_t allowed_flags, uint32_t *flags, Reader *payload) {
    if (buf == nullptr && len != 0) return fail(TF_ERR_NULL, "buf is NULL but len is %zu", len);
    if (len < kOverhead)
        return fail(TF_ERR_TRUNCATED, "blob of %zu bytes is shorter than the %zu-byte envelope", len, kOverhead);
    Reader r(buf, len);
    const uint8_t *magic = r.view(4);
    if (std::memcmp(magic, "TFLT", 4) != 0)
        return fail(TF_ERR_BAD_MAGIC, "blob does not start with the magic \"TFLT\"");
    uint16_t version = r.u16();
    if (version != kFormatVersion)
        return fail(TF_ERR_UNSUPPORTED_VERSION,
                    "blob format version %u is not supported (this library reads version %u)", unsigned(version),
                    unsigned(kFormatVersion));
    uint16_t got_kind = r.u16();
    if (got_kind != static_cast<uint16_t>(kind))
        return fail(TF_ERR_WRONG_KIND, "blob holds a %s (kind %u), expected a %s (kind %u)", kind_name(got_kind),
                    unsigned(got_kind), kind_name(static_cast<uint16_t>(kind)), unsigned(kind));
    uint32_t got_flags = r.u32();
    uint64_t n = r.u64();
    if (n > len - kOverhead)
        return fail(TF_ERR_TRUNCATED, "blob of %zu bytes is shorter than its payload length %llu says", len,
                    (unsigned long long)n);
    if (n < len - kOverhead)
        return fail(TF_ERR_CORRUPT, "blob has %zu bytes after its checksum", size_t(len - kOverhead - n));
    const uint8_t *bytes = static_cast<const uint8_t *>(buf);
    Reader tail(bytes + kHeaderSize + n, kTrailerSize);
    uint64_t stored = tail.u64();
    uint64_t computed = checksum64(buf, kHeaderSize + size_t(n));
    if (stored != computed) return fail(TF_ERR_CHECKSUM, "blob checksum mismatch (damaged or truncated blob)");
    if ((got_flags & ~allowed_flags) != 0)
        return fail(TF_ERR_CORRUPT, "blob sets undefined flag bits 0x%x", unsigned(got_flags & ~allowed_flags));
    if (flags) *flags = got_flags;
    *payload = Reader(bytes + kHeaderSize, size_t(n));
    return TF_OK;
}

tf_status open_for_deserialize(const void *buf, size_t len, const tf_deserialize_options *options, Kind kind,
                               uint32_t allowed_flags, DeserializeLimits *limits, uint32_t *flags, Reader *payload) {
    TF_REQUIRE_NONNULL(buf, "buf");
    tf_status st = read_deserialize_options(options, limits);
    if (st != TF_OK) return st;
    return open(buf, len, kind, allowed_flags, flags, payload);
}

tf_status serialized_size(size_t payload_size, size_t *size) {
    TF_REQUIRE_NONNULL(size, "size");
    if (!blob_size(payload_size, size)) return fail(TF_ERR_TOO_LARGE, "blob size overflows size_t");
    return TF_OK;
}

}  // namespace wire
}  // namespace tf
