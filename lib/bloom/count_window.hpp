// The count-window age-partitioned Bloom filter ("was this key among the
// last N inserts?", section 5 of "Time-limited Bloom Filter", Rodrigues,
// Shtul, Baquero, Almeida, ACM SAC 2023) over a storage policy:
//
//   ClassicLayout (age_partitioned.hpp)  one bit array per slice;
//   BlockedLayout (blocked.hpp)          the slices as the lanes of 64-byte
//                                        lines, one block per key.
//
// The filter is k + l slices in a GenerationRing rotating by count: every g
// inserts (a generation) the oldest slice is emptied and becomes the newest.
// The ring keeps the generations and counters; the layout keeps the bits and
// answers for them. A layout provides (see either for the details):
//
//   using Slot, Ring;  kFlags (TF_AGE_BLOOM_*), kWireFlags (kind 2 flags)
//   static check_params(k, l, slice_bits), round_bits(slice_bits),
//          choose(error_rate, &k, &l, &fill), slice_bits_for(k, g, fill)
//   Layout(k, l, slice_bits, seed, &ring)   the k + l generations' storage
//   add, contains, add_if_absent, clear     over the ring
//   k, l, seed, slice_bits, total_bits, expected_fpr, memory
//   payload_size, write_payload, static read(r, limits, overhead, &layout, &ring)
#ifndef TF_LIB_BLOOM_COUNT_WINDOW_HPP
#define TF_LIB_BLOOM_COUNT_WINDOW_HPP

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "bloom/age_partitioned.hpp"
#include "bloom/blocked.hpp"
#include "common/generation_ring.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"

namespace tf {
namespace bloom {

// The shape of a count-window filter.
struct CountShape {
    uint32_t k = 0, l = 0;
    uint64_t slice_bits = 0;  // as the layout stores them
    uint64_t generation = 0;  // g, inserts per generation
};

template <class Layout>
class CountWindowBloom {
   public:
    using Ring = typename Layout::Ring;

    // (k, l) and the fill ratio of a slice leaving the first k that the
    // layout chooses for `error_rate`, within `probe_budget` expected probes
    // per absent query where the layout's query cost depends on its shape
    // (the classic layout; infinity: the memory-minimal choice).
    static tf_status choose(double error_rate, double probe_budget, uint32_t *k, uint32_t *l, double *fill) {
        return Layout::choose(error_rate, probe_budget, k, l, fill);
    }

    // The shape for a window of `capacity` inserts at `error_rate`: (k, l)
    // and the fill from the layout's choice, g = ceil(capacity / l), slices
    // for k generations of g inserts.
    static tf_status shape_for(uint64_t capacity, double error_rate, double probe_budget, CountShape *out) {
        if (capacity == 0) return fail(TF_ERR_INVALID_ARGUMENT, "capacity must be >= 1");
        CountShape s;
        double fill = 0.0;
        tf_status st = Layout::choose(error_rate, probe_budget, &s.k, &s.l, &fill);
        if (st != TF_OK) return st;
        s.generation = capacity / s.l + (capacity % s.l != 0);  // ceil, without overflow
        s.slice_bits = Layout::slice_bits_for(s.k, s.generation, fill);
        if (s.slice_bits == 0)
            return fail(TF_ERR_TOO_LARGE, "capacity %llu needs slices over 2^40 bits", (unsigned long long)capacity);
        *out = s;
        return TF_OK;
    }

    // The shape of k + l slices of slice_bits bits (as the layout rounds
    // them): g = max(1, floor(bits ln 2 / k)), a fill ratio of 1/2 when a
    // slice leaves the first k.
    static tf_status shape_of(uint32_t k, uint32_t l, uint64_t slice_bits, CountShape *out) {
        tf_status st = Layout::check_params(k, l, slice_bits);
        if (st != TF_OK) return st;
        CountShape s;
        s.k = k;
        s.l = l;
        s.slice_bits = Layout::round_bits(slice_bits);
        s.generation = uint64_t(std::floor(double(s.slice_bits) * kLn2 / double(k)));
        if (s.generation == 0) s.generation = 1;
        *out = s;
        return TF_OK;
    }

    CountWindowBloom() = default;
    // Throws std::bad_alloc.
    CountWindowBloom(const CountShape &s, uint32_t seed)
        : ring_(Rotation::Count, s.generation, 0, 1), layout_(s.k, s.l, s.slice_bits, seed, &ring_) {}

    void add(const void *key, size_t len) { layout_.add(ring_, key, len); }
    bool contains(const void *key, size_t len) const { return layout_.contains(ring_, key, len); }
    bool add_if_absent(const void *key, size_t len) { return layout_.add_if_absent(ring_, key, len); }
    void add_batch(const void *const *keys, const size_t *lens, size_t n) { layout_.add_batch(ring_, keys, lens, n); }
    void contains_batch(const void *const *keys, const size_t *lens, size_t n, int *out) const {
        layout_.contains_batch(ring_, keys, lens, n, out);
    }
    void add_if_absent_batch(const void *const *keys, const size_t *lens, size_t n, int *out) {
        layout_.add_if_absent_batch(ring_, keys, lens, n, out);
    }
    void clear() { layout_.clear(ring_); }

    uint32_t k() const { return layout_.k(); }
    uint32_t l() const { return layout_.l(); }
    uint32_t seed() const { return layout_.seed(); }
    uint32_t flags() const { return Layout::kFlags; }
    uint64_t slices() const { return ring_.size(); }
    uint64_t slice_bits() const { return layout_.slice_bits(ring_); }
    uint64_t generation() const { return ring_.period(); }
    // Every key among the last capacity() = l g inserts is found.
    uint64_t capacity() const { return uint64_t(l()) * generation(); }
    uint64_t total_bits() const { return layout_.total_bits(ring_); }
    uint64_t inserts() const { return ring_.inserts(); }
    double expected_fpr() const { return layout_.expected_fpr(ring_); }
    // The memory held besides the object itself.
    size_t memory() const { return layout_.memory(ring_); }

    // Wire payload (kind 2 with the layout's flags).
    uint32_t wire_flags() const { return Layout::kWireFlags; }
    size_t payload_size() const { return layout_.payload_size(ring_); }
    void write_payload(wire::Writer &w) const { layout_.write_payload(ring_, w); }
    // memory() plus `overhead` is checked against the caller's limit before
    // the slices are allocated.
    static tf_status read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, CountWindowBloom *out) {
        return Layout::read(r, limits, overhead, &out->layout_, &out->ring_);
    }

   private:
    Ring ring_;
    Layout layout_;
};

using ClassicAgeBloom = CountWindowBloom<ClassicLayout>;
using BlockedAgeBloom = CountWindowBloom<BlockedLayout>;

}  // namespace bloom
}  // namespace tf

#endif
