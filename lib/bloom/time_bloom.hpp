// The time-limited Bloom filter (section 6 of "Time-limited Bloom Filter",
// Rodrigues, Shtul, Baquero, Almeida, ACM SAC 2023): the classic layout's
// slices (age_partitioned.hpp) in a GenerationRing that rotates by rate.
//
// Slice sizes follow the insertion rate: a generation ends when the newest
// slices have taken their share of inserts (equations 4-5) or once it has
// lasted a target period (span / l) with at least one insert; the new slice
// is sized for the rate the ring measures (equations 6-8), slices whose last
// insert is older than the span retire (equation 3) and queries ignore
// them. Every key inserted within the span is always found.
#ifndef TF_LIB_BLOOM_TIME_BLOOM_HPP
#define TF_LIB_BLOOM_TIME_BLOOM_HPP

#include <cstddef>
#include <cstdint>

#include "bloom/age_partitioned.hpp"

namespace tf {
namespace bloom {

class TimeBloom {
   public:
    TimeBloom() = default;
    // k + l slices of slice_bits bits at the start, span in the caller's
    // unit. Arguments must be valid (check_classic_params, span >= l);
    // throws std::bad_alloc.
    TimeBloom(uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t span, uint32_t seed);

    // now is clamped to the highest time seen. add may fail with
    // TF_ERR_OUT_OF_MEMORY or TF_ERR_TOO_LARGE when a rotation cannot create
    // its slice; the filter is then unchanged.
    tf_status add(const void *key, size_t len, uint64_t now);
    bool contains(const void *key, size_t len, uint64_t now) const;
    // The batch forms: the same answers and filter as the single calls in
    // order at the same `now`, each group's lines prefetched together.
    // add_batch and add_if_absent_batch stop at the first key whose add
    // fails (a rotation that cannot allocate): *done receives the keys
    // processed, whose effects and answers stand.
    tf_status add_batch(const void *const *keys, const size_t *lens, size_t n, uint64_t now, size_t *done);
    void contains_batch(const void *const *keys, const size_t *lens, size_t n, uint64_t now, int *out) const;
    tf_status add_if_absent_batch(const void *const *keys, const size_t *lens, size_t n, uint64_t now, int *out,
                                  size_t *done);
    void clear();

    uint32_t k() const { return shape_.k; }
    uint32_t l() const { return shape_.l; }
    uint32_t seed() const { return shape_.seed; }
    uint64_t span() const { return shape_.span; }
    size_t slices() const { return ring_.size(); }
    uint64_t slice_bits(size_t i) const { return ring_[i].m; }
    uint64_t total_bits() const { return slices_total_bits(ring_); }
    uint64_t inserts() const { return ring_.inserts(); }
    // Inserts within the span before now (from the generations' times).
    uint64_t window_elements(uint64_t now) const { return ring_.inserts_within(now); }
    // Exact rate for the current fill ratios (expired slices count as empty).
    double expected_fpr(uint64_t now) const { return slices_fpr(ring_, shape_.k, Live{&ring_, ring_.clamp(now)}); }
    // The memory held besides the object itself.
    size_t memory() const { return slices_memory(ring_); }

    // Wire payload (kind 3, no flags).
    uint32_t wire_flags() const { return 0; }
    size_t payload_size() const { return slices_payload_size(ring_); }
    void write_payload(wire::Writer &w) const;
    // memory() plus `overhead` is checked against the caller's limit before
    // the slices are allocated.
    static tf_status read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, TimeBloom *out);

   private:
    // A slice counts until its last insert is older than the span.
    struct Live {
        const SliceRing *ring;
        uint64_t now;
        bool operator()(const SliceGen &g) const { return !ring->expired(g, now); }
    };
    bool retirable(size_t age, uint64_t now) const;
    // add() after hashing.
    tf_status add_hashed(const KeyHashes &h, uint64_t now);
    // Equations 3 and 6-8 (see the .cpp); may fail.
    tf_status rotate(uint64_t now);
    // Equation 7: the inserts the new s_0 must hold when the rate brings tg
    // per target period.
    double new_slice_capacity(double tg, uint64_t now) const;
    // The most bits one rotation may give a new slice.
    uint64_t max_new_slice_bits() const;
    // Equations 4-5: inserts until the next rotation.
    uint64_t next_generation() const;

    // k, l, seed and span, and the payload's generation field, which a time
    // window does not use (0 when created here): kept as read, so that a
    // blob reads and writes back byte for byte.
    SliceShape shape_;
    SliceRing ring_;  // index 0: s_0, the newest
};

}  // namespace bloom
}  // namespace tf

#endif
