// Age-partitioned Bloom filters ("Time-limited Bloom Filter", Rodrigues,
// Shtul, Baquero, Almeida, ACM SAC 2023): the count-window APBF of section 5
// and the time-limited filter of section 6 share this core.
//
// A filter is a sequence of slices s_0 (newest) .. s_{S-1} (oldest), each a
// bit array of m_i bits. An insert sets one bit in each of s_0..s_{k-1}; a
// query looks for k consecutive slices holding the key's bit (section 5.3,
// Algorithm 1). Slices that are k apart share a hash function: slice number
// `serial` (counting every slice ever created) uses hash function serial mod
// k, so any k consecutive slices use k different functions and an operation
// computes only k hash values, all from one 128-bit MurmurHash3.
//
// Count window (AgeBloom): S = k + l slices of equal size, a shift every g
// inserts drops the oldest slice; the last l*g inserts are always found.
// Time window (TimeBloom): slice sizes follow the insertion rate (equations
// 4-8), slices older than the span retire at shift time (equation 3), and
// queries ignore slices older than the span; every key inserted within the
// span is always found.
#ifndef TF_LIB_BLOOM_AGE_PARTITIONED_HPP
#define TF_LIB_BLOOM_AGE_PARTITIONED_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/hash.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"

namespace tf {
namespace bloom {

constexpr uint32_t kMaxK = 64;
constexpr uint32_t kMaxL = 1024;
// No slice larger than 2^40 bits (128 GiB); keeps every size computation
// far from overflow.
constexpr uint64_t kMaxSliceBits = uint64_t(1) << 40;
// At most this many slices in a time-limited filter (a guard against
// degenerate rates; the adaptation keeps it near k + l).
constexpr uint32_t kMaxSlices = 4 * kMaxL;
// A shift creates a slice of at most kMaxGrowth times the largest slice.
constexpr uint64_t kMaxGrowth = 16;
// Equation 6 extrapolates a rate measured over less than a target period at
// most this many times.
constexpr double kMaxExtrapolation = 4.0;

struct Slice {
    std::vector<uint64_t> words;  // m bits, rounded up to whole words
    uint64_t m = 0;               // bits
    uint64_t n = 0;               // inserts received
    uint64_t t = 0;               // time of the last insert (time window; 0 = never)
    uint64_t serial = 0;          // creation number; hash function = serial mod k
    uint32_t hidx = 0;            // serial mod k (not serialized)
    uint64_t owned = 0;           // inserts made while this slice was s_0 (its generation)
    uint64_t own_end = 0;         // time its generation ended (time window)

    bool test(uint64_t bit) const { return (words[bit >> 6] >> (bit & 63)) & 1u; }
    void set(uint64_t bit) { words[bit >> 6] |= uint64_t(1) << (bit & 63); }
    double fill() const;  // measured fill ratio: set bits / m
};

// The slices, indexed s_0 (newest) first, stored oldest first: a shift
// appends, a retirement erases the first element, and indexing costs no
// division (std::deque's does).
class SliceSeq {
   public:
    size_t size() const { return v_.size(); }
    Slice &operator[](size_t i) { return v_[v_.size() - 1 - i]; }
    const Slice &operator[](size_t i) const { return v_[v_.size() - 1 - i]; }
    Slice &front() { return v_.back(); }              // s_0
    const Slice &back() const { return v_.front(); }  // the oldest
    // Strong guarantee: on bad_alloc nothing changes.
    void push_front(Slice &&s) { v_.push_back(std::move(s)); }
    void pop_back() { v_.erase(v_.begin()); }
    Slice take_back() {
        Slice s = std::move(v_.front());
        v_.erase(v_.begin());
        return s;
    }
    // Unordered iteration (oldest first).
    std::vector<Slice>::iterator begin() { return v_.begin(); }
    std::vector<Slice>::iterator end() { return v_.end(); }
    std::vector<Slice>::const_iterator begin() const { return v_.begin(); }
    std::vector<Slice>::const_iterator end() const { return v_.end(); }

   private:
    std::vector<Slice> v_;
};

// The k hash values of a key (not yet reduced to a slice size).
struct KeyHashes {
    uint64_t v[kMaxK];
};

// Exact false-positive probability of a query that needs k consecutive
// matches among slices with independent fill ratios r[0..S) (0 for slices a
// query ignores): a dynamic program over (slice, length of the current run).
double false_positive_rate(uint32_t k, const double *r, size_t slices);

// The steady-state rate of a count-window filter with parameters (k, l):
// the worst moment, just before a shift, when r_i = 1 - 2^-((i+1)/k) for
// i < k and 1/2 beyond (equation 2). The time-averaged rate is lower.
double steady_false_positive_rate(uint32_t k, uint32_t l);

// The (k, l) pair whose steady-state rate is <= target with the fewest bits
// per element of capacity, (k + l) k / (l ln 2); ties go to the smaller l
// (shorter queries). l is capped at kMaxL / 4 to bound query cost.
// Fails with TF_ERR_INVALID_ARGUMENT for a target outside (0, 1) and
// TF_ERR_TOO_LARGE when no pair within the limits meets it.
tf_status choose_kl(double target, uint32_t *k, uint32_t *l);

// Bits per element of capacity at steady state: (k + l) k / (l ln 2).
double steady_bits_per_element(uint32_t k, uint32_t l);

class AgePartitioned {
   public:
    enum class Mode : uint8_t { Count = 0, Time = 1 };

    // Count window: k + l slices of slice_bits bits; a shift every
    // generation inserts. Time window: k + l slices of slice_bits bits at
    // the start, span in the caller's unit. Arguments must be valid
    // (check_* below); throws std::bad_alloc.
    AgePartitioned(Mode mode, uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t generation, uint64_t span,
                   uint32_t seed);

    static tf_status check_params(uint32_t k, uint32_t l, uint64_t slice_bits);

    // Count window.
    void add(const void *key, size_t len);
    bool contains(const void *key, size_t len) const;
    // Time window (now clamped to the highest time seen). add may fail with
    // TF_ERR_OUT_OF_MEMORY or TF_ERR_TOO_LARGE when a shift cannot create
    // its slice; the filter is then unchanged.
    tf_status add_at(const void *key, size_t len, uint64_t now);
    bool contains_at(const void *key, size_t len, uint64_t now) const;

    void clear();

    Mode mode() const { return mode_; }
    uint32_t k() const { return k_; }
    uint32_t l() const { return l_; }
    uint32_t seed() const { return seed_; }
    uint64_t span() const { return span_; }
    uint64_t generation() const { return generation_; }
    size_t slices() const { return slices_.size(); }
    uint64_t slice_bits(size_t i) const { return slices_[i].m; }
    uint64_t total_bits() const;
    uint64_t inserts() const { return inserts_; }
    // Elements the window holds for sure: l * g (count); inserts within the
    // span (time; counted from the slices' timestamps).
    uint64_t window_elements(uint64_t now) const;
    // Exact rate for the current fill ratios (stale slices count as empty).
    double expected_fpr(uint64_t now) const;
    size_t memory() const;

    // Wire payload (kinds 2 and 3).
    size_t payload_size() const;
    void write_payload(wire::Writer &w) const;
    // Validates the payload, then refuses (TF_ERR_TOO_LARGE) a filter whose
    // memory() plus `overhead` (the handle around it) exceeds the caller's
    // limit, before allocating its slices.
    static tf_status read(Mode mode, wire::Reader &r, const DeserializeLimits &limits, size_t overhead,
                          std::unique_ptr<AgePartitioned> *out);

   private:
    AgePartitioned() = default;
    void hashes(const void *key, size_t len, KeyHashes *h) const;
    uint64_t bit_for(const Slice &s, const KeyHashes &h) const { return reduce(h.v[s.hidx], s.m); }
    void insert_bits(const KeyHashes &h, uint64_t now);
    bool query(const KeyHashes &h, uint64_t now) const;
    bool stale(const Slice &s, uint64_t now) const;
    bool retirable(size_t i, uint64_t now) const;
    uint64_t clamp(uint64_t now) const { return now > high_water_ ? now : high_water_; }
    // Count window: drop the oldest slice, reuse it as the newest.
    void shift_count();
    // Time window: equations 3 and 6-8 (see the .cpp); may fail.
    tf_status shift_time(uint64_t now);
    // Equation 6, measured over at least one target period.
    double target_generation(uint64_t now) const;
    // Equations 4-5: inserts until the next shift.
    uint64_t next_generation() const;

    Mode mode_ = Mode::Count;
    uint32_t k_ = 0, l_ = 0, seed_ = 0;
    uint64_t span_ = 0;         // time window
    uint64_t generation_ = 0;   // count window: g
    uint64_t until_shift_ = 0;  // inserts left in the current generation
    uint64_t gen_inserts_ = 0;  // inserts in the current generation
    uint64_t last_shift_ = 0;   // time of the last shift (0: none yet)
    uint64_t high_water_ = 0;   // highest time seen
    uint64_t inserts_ = 0;      // since creation or clear
    uint64_t next_serial_ = 0;
    SliceSeq slices_;  // index 0: s_0, the newest
};

}  // namespace bloom
}  // namespace tf

#endif
