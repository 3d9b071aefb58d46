// Hashing shared by every structure: one 128-bit MurmurHash3 (x64_128) per
// key, and every index derived from its two halves.
//
// murmur3_x64_128() below is a header-inline implementation of Austin
// Appleby's MurmurHash3_x64_128 that takes a size_t length; the library
// depends on no hashing package. tests/internals/test_internals.cpp checks
// that it produces the same output as Debian's libmurmurhash (lmmh_x64_128,
// the reference, which only the tests link) on many inputs; for keys of
// 4 GiB and more (which the package cannot hash: it takes an `unsigned int`
// length) the length is mixed in as 64 bits, the natural extension of the
// same function.
#ifndef TF_LIB_COMMON_HASH_HPP
#define TF_LIB_COMMON_HASH_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include "common/coverage.hpp"

namespace tf {

struct Hash128 {
    uint64_t h1;
    uint64_t h2;
};

namespace detail {
inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t fmix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}
// The little-endian number of sizeof(U) bytes at p (U: uint32_t or uint64_t).
template <class U>
inline uint64_t load_le(const unsigned char *p) {
    U v;
    std::memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = sizeof v == 8 ? U(__builtin_bswap64(v)) : U(__builtin_bswap32(uint32_t(v)));
#endif
    return v;
}
inline uint64_t load_le64(const unsigned char *p) { return load_le<uint64_t>(p); }
inline uint64_t load_le32(const unsigned char *p) { return load_le<uint32_t>(p); }
// The n bytes at p (1 <= n <= 8) as a little-endian number, reading no
// byte outside them: two overlapping words for 4 to 8 bytes, the first,
// middle and last byte for 1 to 3 (overlapping bytes land on the same
// position, so OR-ing them changes nothing). Not instrumented for fuzzing,
// like the hash that calls it (common/coverage.hpp).
TF_NO_FUZZ_COVERAGE inline uint64_t load_tail(const unsigned char *p, size_t n) {
    if (n >= 4) return load_le32(p) | (load_le32(p + n - 4) << (8 * (n - 4)));
    return uint64_t(p[0]) | (uint64_t(p[n / 2]) << (8 * (n / 2))) | (uint64_t(p[n - 1]) << (8 * (n - 1)));
}
}  // namespace detail

// MurmurHash3_x64_128 of `len` bytes at `data` with `seed`; {h1, h2} are
// the two 64-bit words the reference writes to out[0] and out[1].
TF_NO_FUZZ_COVERAGE inline Hash128 murmur3_x64_128(const void *data, size_t len, uint32_t seed) {
    using detail::rotl64;
    const unsigned char *p = static_cast<const unsigned char *>(data);
    const uint64_t c1 = 0x87c37b91114253d5ULL;
    const uint64_t c2 = 0x4cf5ad432745937fULL;
    uint64_t h1 = seed, h2 = seed;
    const size_t nblocks = len / 16;
    for (size_t i = 0; i < nblocks; ++i, p += 16) {
        uint64_t k1 = detail::load_le64(p);
        uint64_t k2 = detail::load_le64(p + 8);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
        h1 = rotl64(h1, 27);
        h1 += h2;
        h1 = h1 * 5 + 0x52dce729;
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
        h2 = rotl64(h2, 31);
        h2 += h1;
        h2 = h2 * 5 + 0x38495ab5;
    }
    // The tail's 1 to 15 bytes: k1 takes the first 8 of them, k2 the rest,
    // little-endian, read a word at a time (load_tail) rather than a byte
    // at a time as the reference does; the same values.
    const size_t tail = len & 15;
    if (tail > 8) {
        uint64_t k2 = detail::load_tail(p + 8, tail - 8);
        k2 *= c2;
        k2 = rotl64(k2, 33);
        k2 *= c1;
        h2 ^= k2;
    }
    if (tail > 0) {
        uint64_t k1 = tail >= 8 ? detail::load_le64(p) : detail::load_tail(p, tail);
        k1 *= c1;
        k1 = rotl64(k1, 31);
        k1 *= c2;
        h1 ^= k1;
    }
    h1 ^= uint64_t(len);
    h2 ^= uint64_t(len);
    h1 += h2;
    h2 += h1;
    h1 = detail::fmix64(h1);
    h2 = detail::fmix64(h2);
    h1 += h2;
    h2 += h1;
    return Hash128{h1, h2};
}

// The hash of a key, from which every structure derives all its indices.
//
// MurmurHash3's two output words are not independent in one corner. Both
// lanes start at the seed. A key of under 16 bytes (no block) whose bytes
// past the 8th are absent or zero (lengths 0..8, or 9..15 with those bytes
// 0) leaves the second lane untouched: its tail word k2 is absent or 0. With
// a seed equal to the key's length, h2 ^ len is then 0 in the finalisation,
// so h1 += h2; h2 += h1 makes both lanes equal, fmix64 gives both the same
// F, and the last h1 += h2; h2 += h1 yields h1 = 2F, h2 = 3F: 2 h2 = 3 h1
// (mod 2^64). (A longer key gets there only when its blocks leave the
// second lane equal to its length, for a random key a 2^-64 chance.)
// Indices taken from h1 and h2 then move together (a blocked sketch lost
// half its distinct cells in a test). h2 is therefore passed through one
// more non-linear mix; h1 stays the plain MurmurHash3 value.
inline Hash128 key_hash(const void *key, size_t len, uint32_t seed) {
    Hash128 h = murmur3_x64_128(key, len, seed);
    h.h2 = detail::fmix64(h.h2 ^ 0x9e3779b97f4a7c15ULL);
    return h;
}

// Maps a uniform 64-bit value onto [0, n) without division (Lemire's
// multiply-shift); uses the high bits of x.
__extension__ typedef unsigned __int128 uint128_t;
inline uint64_t reduce(uint64_t x, uint64_t n) { return static_cast<uint64_t>((static_cast<uint128_t>(x) * n) >> 64); }

// Seeded enhanced double hashing (Dillinger & Manolios): the i-th index is
// reduce(h1 + i*h2 + (i^3 - i)/6, n), computed incrementally. The key's one
// 128-bit hash (already seeded) supplies h1 and h2, so no further hashing
// is needed however many indices a structure takes.
class IndexSequence {
   public:
    explicit IndexSequence(Hash128 h) : x_(h.h1), y_(h.h2), i_(0) {}
    // Next index in [0, n).
    uint64_t next(uint64_t n) { return reduce(next_raw(), n); }
    // Next 64-bit value h1 + i*h2 + (i^3 - i)/6, for callers that reduce it
    // to several sizes later.
    uint64_t next_raw() {
        uint64_t r = x_;
        x_ += y_;
        y_ += ++i_;
        return r;
    }

   private:
    uint64_t x_, y_, i_;
};

// The checksum of the wire format: the low 64 bits (h1) of MurmurHash3
// x64_128 with seed 0.
inline uint64_t checksum64(const void *data, size_t len) { return murmur3_x64_128(data, len, 0).h1; }

}  // namespace tf

#endif
