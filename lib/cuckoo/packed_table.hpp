// A cuckoo table of fingerprints packed `Bits` bits to a slot ("Cuckoo
// Filter: Practically Better Than Bloom", Fan, Andersen, Kaminsky,
// Mitzenmacher, CoNEXT 2014), generic over the slot's width so that a
// structure storing wider or narrower entries (a fingerprint with a class
// ID beside it) uses the same table. Slots are packed, not padded to words:
// slot i holds bits [i * Bits, (i + 1) * Bits) of a little-endian array of
// 64-bit words (a slot may straddle two words).
//
// The table has a power-of-two number of buckets of `per_bucket` slots (1,
// 2, 4 or 8; bucket b owns slots [b * per_bucket, (b + 1) * per_bucket)).
// A stored value of 0 marks an empty slot, so a fingerprint of 0 is stored
// as 1. A key may live in `ways` candidate buckets, each computable from
// any other and the fingerprint alone, which is what lets a kick move a
// fingerprint without its key:
//
//   two ways    alt(b, f) = b XOR d(f), d(f) = mix(f) mod buckets (1 when
//               that is 0): an involution, alt(alt(b, f), f) = b, on every
//               power-of-two size (the README's (b XOR f) mod size is not
//               one when the size is not a power of two, and loses moved
//               fingerprints);
//   three ways  a permutation of order 3: the bucket's low 2k bits (4^k <=
//               buckets) read as a vector over GF(4), two bits per
//               element, and next(b, f) = w (b XOR c) XOR c with c =
//               mix'(f) and w the multiplication by a generator of GF(4)*
//               (order 3), element-wise: (h, l) -> (h XOR l, h). Its cube is
//               the identity, so the three buckets b, next(b),
//               next(next(b)) map onto each other from (bucket, f) alone;
//               the bits above the 2k (one, when log2 buckets is odd) stay.
//
// insert() places a fingerprint in an empty slot of its buckets or kicks:
// a victim moves to another of its buckets, up to max_kicks times. A chain
// that fails is undone along its recorded path, so the table is exactly as
// before and nothing is lost (the caller stores the fingerprint elsewhere).
#ifndef TF_LIB_CUCKOO_PACKED_TABLE_HPP
#define TF_LIB_CUCKOO_PACKED_TABLE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "common/coverage.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"

namespace tf {
namespace cuckoo {

namespace packed {
// The low-bits mask of a slot of `bits` bits (1 to 64).
constexpr uint64_t mask_of(unsigned bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }
// Words for n slots of `bits` bits (n <= 2^48: no overflow).
inline size_t words_for(uint64_t n, unsigned bits) { return size_t((n * bits + 63) / 64); }

// The one reader of every packed slot array (PackedSlots, RuntimeSlots and
// through them the recency window's sliding tables): slot i of `bits` bits
// (mask = mask_of(bits)) in a little-endian array of 64-bit words whose
// last word is w[last], a slot possibly straddling two words. No branch on
// the straddle: the second word's index is clamped to the last word, and
// its bits are shifted in by (64 - off) in two steps (a shift by 64 is
// undefined); when the slot does not straddle, what they bring lies above
// the slot's width and the mask drops it. Measured against the branch on
// the straddle (docs/recency-window.md, "The tables"): the branch
// mispredicts on most widths, whose slots straddle at no regular step.
TF_NO_FUZZ_COVERAGE inline uint64_t get(const uint64_t *w, uint64_t i, unsigned bits, uint64_t mask, size_t last) {
    const uint64_t bit = i * bits;
    const size_t k = size_t(bit >> 6);
    const unsigned off = unsigned(bit & 63);
    const uint64_t hi = (w[k + 1 <= last ? k + 1 : last] << 1) << (63 - off);
    return ((w[k] >> off) | hi) & mask;
}
// The one writer: v's low `bits` bits into slot i, its neighbours kept.
// No branch on the straddle either: the second word (clamped like get's)
// is always rewritten, under the mask of the slot's bits that spill into
// it, which is 0 (the word unchanged) when the slot does not straddle.
TF_NO_FUZZ_COVERAGE inline void set(uint64_t *w, uint64_t i, unsigned bits, uint64_t mask, size_t last, uint64_t v) {
    const uint64_t bit = i * bits;
    const size_t k = size_t(bit >> 6);
    const unsigned off = unsigned(bit & 63);
    v &= mask;
    w[k] = (w[k] & ~(mask << off)) | (v << off);
    const size_t k1 = k + 1 <= last ? k + 1 : last;
    const uint64_t spill = (mask >> 1) >> (63 - off);
    w[k1] = (w[k1] & ~spill) | ((v >> 1) >> (63 - off));
}

// What get() and set() need beside the words, held once per array: the
// width, its mask and the index of the last word. `View` has the width
// chosen at run time (the recency window: entries of a quotiented
// signature and a class ID, widths known at creation; a hot loop copies it
// and then loads nothing but the words); `Fixed<Bits>` has it known at
// compile time (the rotating cuckoo filter), and whole-word slots
// (Fixed<64>) hold nothing at all.
struct View {
    View() = default;
    // bits in [1, 64].
    View(uint64_t n, unsigned bits_) : last(last_word(n, bits_)), mask(mask_of(bits_)), bits(bits_) {}
    static size_t last_word(uint64_t n, unsigned bits_) {
        const size_t words = words_for(n, bits_);
        return words == 0 ? 0 : words - 1;
    }
    unsigned width() const { return bits; }
    uint64_t get(const uint64_t *w, uint64_t i) const { return packed::get(w, i, bits, mask, last); }
    void set(uint64_t *w, uint64_t i, uint64_t v) const { packed::set(w, i, bits, mask, last, v); }

    size_t last = 0;
    uint64_t mask = 1;
    unsigned bits = 1;
};
template <unsigned Bits>
struct Fixed {
    static_assert(Bits >= 1 && Bits < 64, "a packed slot holds 1 to 63 bits (64: Fixed<64>)");
    static constexpr uint64_t kMask = mask_of(Bits);
    Fixed() = default;
    Fixed(uint64_t n, unsigned) : last(View::last_word(n, Bits)) {}
    static constexpr unsigned width() { return Bits; }
    uint64_t get(const uint64_t *w, uint64_t i) const { return packed::get(w, i, Bits, kMask, last); }
    void set(uint64_t *w, uint64_t i, uint64_t v) const { packed::set(w, i, Bits, kMask, last, v); }

    size_t last = 0;
};
template <>
struct Fixed<64> {
    static constexpr uint64_t kMask = ~uint64_t(0);
    Fixed() = default;
    Fixed(uint64_t, unsigned) {}
    static constexpr unsigned width() { return 64; }
    static uint64_t get(const uint64_t *w, uint64_t i) { return w[i]; }
    static void set(uint64_t *w, uint64_t i, uint64_t v) { w[i] = v; }
};

// The two-way alternate bucket of fingerprint f from bucket b among
// mask + 1 (a power of two, at least 2) buckets: b XOR d(f), an involution
// (CuckooTable::alt; the recency window's tables, of any even bucket count,
// use their own, recency_window/sliding_table.hpp).
inline uint64_t alt_bucket(uint64_t b, uint64_t f, uint64_t mask) {
    uint64_t d = tf::detail::fmix64(f * 0x9e3779b97f4a7c15ULL) & mask;
    if (d == 0) d = 1;  // mask >= 1: the two buckets always differ
    return b ^ d;
}
}  // namespace packed

// n slots packed into 64-bit words, zeroed at creation, read and written
// through the geometry G (packed::View or packed::Fixed<Bits>; a base, so
// that Fixed<64> takes no room). PackedSlots<Bits> and RuntimeSlots below.
template <class G>
class SlotArray : private G {
   public:
    // Words for n slots (n <= 2^48: no overflow); `bits`: the width (a
    // compile-time width needs none).
    static size_t words_for(uint64_t n, unsigned bits = G::width()) { return packed::words_for(n, bits); }
    // The memory an array of n slots holds, before allocating it.
    static size_t bytes_for(uint64_t n, unsigned bits = G::width()) {
        return ZeroedBlock::footprint_for(words_for(n, bits) * 8);
    }

    SlotArray() = default;
    // bits in [1, 64] (a compile-time width: ignored). Throws std::bad_alloc.
    explicit SlotArray(uint64_t n, unsigned bits = G::width()) : G(n, bits), block_(words_for(n, bits) * 8), n_(n) {}

    uint64_t size() const { return n_; }
    unsigned width() const { return G::width(); }
    // The geometry, for a hot loop to copy once.
    const G &view() const { return *this; }
    size_t word_count() const { return words_for(n_, width()); }
    size_t bytes() const { return block_.footprint(); }
    uint64_t *words() { return static_cast<uint64_t *>(block_.data()); }
    const uint64_t *words() const { return static_cast<const uint64_t *>(block_.data()); }

    uint64_t get(uint64_t i) const { return G::get(words(), i); }
    void set(uint64_t i, uint64_t v) { G::set(words(), i, v); }
    // The word holding the first bit of slot i (for prefetching).
    const void *address(uint64_t i) const { return words() + size_t((i * width()) >> 6); }
    void clear() {
        if (n_ != 0) std::memset(words(), 0, word_count() * 8);
    }

   private:
    ZeroedBlock block_;
    uint64_t n_ = 0;
};

// n slots of Bits bits (1 to 64).
template <unsigned Bits>
class PackedSlots : public SlotArray<packed::Fixed<Bits>> {
   public:
    static constexpr uint64_t kMask = packed::Fixed<Bits>::kMask;
    PackedSlots() = default;
    // Throws std::bad_alloc.
    explicit PackedSlots(uint64_t n) : SlotArray<packed::Fixed<Bits>>(n) {}
};

// The same with the width chosen at run time (1 to 64 bits): n slots of
// width() bits (the recency window's planes).
using RuntimeSlots = SlotArray<packed::View>;

template <unsigned Bits>
class CuckooTable {
   public:
    using Slots = PackedSlots<Bits>;
    static constexpr uint64_t kMask = Slots::kMask;

    // A stored value from a hash half: its low Bits bits, 0 remapped to 1.
    static uint64_t fingerprint(uint64_t h) {
        const uint64_t f = h & kMask;
        return f != 0 ? f : 1;
    }
    // Whether (slots, per_bucket) is a table this class accepts: per_bucket
    // 1, 2, 4 or 8, slots a power of two of at least 2 buckets.
    static bool valid_shape(uint64_t slots, unsigned per_bucket) {
        if (per_bucket != 1 && per_bucket != 2 && per_bucket != 4 && per_bucket != 8) return false;
        return slots >= 2 * uint64_t(per_bucket) && (slots & (slots - 1)) == 0;
    }
    static size_t bytes_for(uint64_t slots) { return Slots::bytes_for(slots); }

    CuckooTable() = default;
    // A valid shape (valid_shape); ways 2 or 3. Throws std::bad_alloc.
    CuckooTable(uint64_t slots, unsigned per_bucket, unsigned ways)
        : slots_(slots), per_bucket_(per_bucket), ways_(ways) {
        shift_ = 0;
        while ((1u << shift_) < per_bucket) ++shift_;
        mask_ = (slots >> shift_) - 1;
        unsigned log2 = 0;
        while ((uint64_t(1) << log2) <= mask_) ++log2;
        const unsigned pairs = log2 / 2;
        pair_mask_ = pairs == 0 ? 0 : (pairs >= 32 ? ~uint64_t(0) : (uint64_t(1) << (2 * pairs)) - 1);
    }

    uint64_t slots() const { return slots_.size(); }
    uint64_t buckets() const { return mask_ + 1; }
    unsigned per_bucket() const { return per_bucket_; }
    unsigned ways() const { return ways_; }
    uint64_t items() const { return items_; }
    size_t bytes() const { return slots_.bytes(); }
    const Slots &raw() const { return slots_; }
    Slots &raw() { return slots_; }
    // After the raw slots were filled from a blob: their count of stored
    // values.
    void set_items(uint64_t n) { items_ = n; }

    uint64_t bucket_of(uint64_t h) const { return h & mask_; }

    // Two ways: the other bucket (an involution).
    uint64_t alt(uint64_t b, uint64_t f) const { return packed::alt_bucket(b, f, mask_); }
    // Three ways: the next bucket (a permutation of order 3).
    uint64_t next3(uint64_t b, uint64_t f) const {
        const uint64_t c = detail::fmix64(f ^ 0xc2b2ae3d27d4eb4fULL);
        const uint64_t v = (b ^ c) & pair_mask_;
        const uint64_t hi = (v >> 1) & 0x5555555555555555ULL, lo = v & 0x5555555555555555ULL;
        const uint64_t w = ((hi ^ lo) << 1) | hi;
        return (b & ~pair_mask_) | ((w ^ c) & pair_mask_);
    }
    // The candidate buckets of f whose primary is b; returns their number.
    unsigned candidates(uint64_t b, uint64_t f, uint64_t *out) const {
        out[0] = b;
        if (ways_ == 2) {
            out[1] = alt(b, f);
            return 2;
        }
        out[1] = next3(b, f);
        out[2] = next3(out[1], f);
        return 3;
    }

    // The slot holding f among its buckets, or UINT64_MAX.
    uint64_t find(uint64_t b, uint64_t f) const {
        uint64_t c[3];
        const unsigned n = candidates(b, f, c);
        for (unsigned i = 0; i < n; ++i) {
            const uint64_t base = c[i] << shift_;
            for (unsigned j = 0; j < per_bucket_; ++j)
                if (slots_.get(base + j) == f) return base + j;
        }
        return UINT64_MAX;
    }
    // Whether f is among its buckets. Whole-word slots take a probe with
    // the bucket size known at compile time: every candidate bucket's words
    // are loaded before any comparison and every slot is compared, so the
    // only branch is the answer's (no early exit to mispredict, the other
    // lines' misses overlap the first's). Against the early-exit find, in
    // one process alternating the two over a table of 2^24 slots filled to
    // the layout's occupancy: 4 slots two ways 78 -> 55 ns, 8 slots two ways
    // 120 -> 95 ns, 4 slots three ways 120 -> 100 ns (hits and misses alike).
    __attribute__((always_inline)) bool contains(uint64_t b, uint64_t f) const {
        if constexpr (Bits == 64) {
            switch (per_bucket_) {
                case 1:
                    return probe_words<1>(b, f);
                case 2:
                    return probe_words<2>(b, f);
                case 4:
                    return probe_words<4>(b, f);
                default:
                    return probe_words<8>(b, f);
            }
        }
        return find(b, f) != UINT64_MAX;
    }
    // Removes one copy of f; false when there is none.
    bool remove(uint64_t b, uint64_t f) {
        const uint64_t s = find(b, f);
        if (s == UINT64_MAX) return false;
        slots_.set(s, 0);
        items_--;
        return true;
    }
    void prefetch(uint64_t b, uint64_t f) const {
        uint64_t c[3];
        const unsigned n = candidates(b, f, c);
        for (unsigned i = 0; i < n; ++i) prefetch_read(slots_.address(c[i] << shift_));
    }

    // Stores f (primary bucket b), kicking at most max_kicks fingerprints
    // along; `path` has room for max_kicks slot indices. False when the
    // chain failed: it was undone, the table is as it was.
    bool insert(uint64_t b, uint64_t f, unsigned max_kicks, uint64_t *path) {
        uint64_t c[3];
        const unsigned n = candidates(b, f, c);
        for (unsigned i = 0; i < n; ++i)
            if (place(c[i], f)) return true;
        uint64_t cur = f, bucket = c[detail::fmix64(f) % n];
        for (unsigned k = 0; k < max_kicks; ++k) {
            const uint64_t mix = detail::fmix64(cur + k);
            const uint64_t s = (bucket << shift_) + (mix & (per_bucket_ - 1));
            const uint64_t victim = slots_.get(s);
            slots_.set(s, cur);
            path[k] = s;
            cur = victim;
            if (ways_ == 2) {
                bucket = alt(bucket, cur);
            } else {
                bucket = next3(bucket, cur);
                if ((mix >> 32) & 1) bucket = next3(bucket, cur);
            }
            if (place(bucket, cur)) return true;
        }
        // Undo: walking the path back puts every moved fingerprint home.
        for (unsigned k = max_kicks; k-- > 0;) {
            const uint64_t s = path[k], v = slots_.get(s);
            slots_.set(s, cur);
            cur = v;
        }
        return false;
    }

    void clear() {
        slots_.clear();
        items_ = 0;
    }

   private:
    // 1 when one of the N words at p equals f, else 0 (no branch). Every
    // word is loaded before any compare, written out rather than a loop:
    // gcc -O2 keeps a loop, and the loop measured about 1.4x the time of
    // the written-out loads at 2^24 slots (the second bucket's compares
    // waited for the first's).
    template <unsigned N>
    static unsigned holds(const uint64_t *p, uint64_t f) {
        static_assert(N == 1 || N == 2 || N == 4 || N == 8, "a bucket of 1, 2, 4 or 8 words");
        unsigned r = unsigned(p[0] == f);
        if constexpr (N >= 2) r |= unsigned(p[1] == f);
        if constexpr (N >= 4) {
            const uint64_t a2 = p[2], a3 = p[3];
            r |= unsigned(a2 == f) | unsigned(a3 == f);
        }
        if constexpr (N == 8) {
            const uint64_t a4 = p[4], a5 = p[5], a6 = p[6], a7 = p[7];
            r |= unsigned(a4 == f) | unsigned(a5 == f) | unsigned(a6 == f) | unsigned(a7 == f);
        }
        return r;
    }
    // contains() for whole-word slots, N per bucket, two or three ways.
    template <unsigned N>
    __attribute__((always_inline)) bool probe_words(uint64_t b, uint64_t f) const {
        const uint64_t *w = slots_.words();
        if (ways_ == 2) return (holds<N>(w + (b << shift_), f) | holds<N>(w + (alt(b, f) << shift_), f)) != 0;
        const uint64_t b1 = next3(b, f), b2 = next3(b1, f);
        return (holds<N>(w + (b << shift_), f) | holds<N>(w + (b1 << shift_), f) | holds<N>(w + (b2 << shift_), f)) !=
               0;
    }
    bool place(uint64_t bucket, uint64_t f) {
        const uint64_t base = bucket << shift_;
        for (unsigned j = 0; j < per_bucket_; ++j)
            if (slots_.get(base + j) == 0) {
                slots_.set(base + j, f);
                items_++;
                return true;
            }
        return false;
    }

    Slots slots_;
    uint64_t items_ = 0;
    uint64_t mask_ = 0;       // buckets - 1
    uint64_t pair_mask_ = 0;  // three ways: the low 2k bits of a bucket index
    unsigned shift_ = 0;      // log2(per_bucket)
    unsigned per_bucket_ = 1;
    unsigned ways_ = 2;
};

}  // namespace cuckoo
}  // namespace tf

#endif
