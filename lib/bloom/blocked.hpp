// The blocked count-window age-partitioned Bloom filter: the filter of
// section 5 (k + l slices, a shift every g inserts, a query needs the key's
// bit in k consecutive slices) with a layout built for speed.
//
// The classic layout keeps every slice in its own array, so a query reads
// one cache line per slice it probes (19 at 1e-3) and each probe decides
// where the next goes. Here the S = k + l <= 32 slices are the 32-bit lanes
// of 64-byte lines: slot s (a slice's place, reused when the slice is
// recycled) is lane s of a block of one line (S <= 16) or two adjacent
// lines (a 128-byte block), and a key owns one block, chosen by its hash,
// plus one bit position per slot within its lane. A query fetches its
// block (the two lines together), gathers the key's S bits into a mask
// (AVX2 where the CPU has it) and looks for a run of k set bits in age
// order with a few shifts: no branch per slice.
//
// The price is the blocking: the keys that share a block share it in every
// slot, so a block that drew more keys than average is fuller in all the
// slots a query checks, and the k matches are no longer independent. The
// sizing therefore uses a model in which the number of keys per lane is
// Poisson and perfectly correlated across all slots (one quantile U per
// key): a block's load per slot is the U-quantile of Poisson(lambda_s),
// each slot's bit is set with probability 1 - (31/32)^load, and the dynamic
// program over runs of k is averaged over U, summed over the steps of the
// loads down to the far tail (which decides the rate at small targets).
// Full correlation overstates the dependence (slots more than k apart
// share no keys), so the model is conservative for rates up to 0.2 (near
// 1, overlapping windows make dependence lower the rate). To meet a target
// the blocked filter keeps its slices less full than the classic 1/2 and
// costs about 1.17x (1e-2) to 1.36x (1e-3) the classic layout's bits per
// element (more below, where the classic layout is the better choice).
#ifndef TF_LIB_BLOOM_BLOCKED_HPP
#define TF_LIB_BLOOM_BLOCKED_HPP

#include <cstddef>
#include <cstdint>

#include "common/generation_ring.hpp"
#include "common/memory.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"

namespace tf {
namespace bloom {

constexpr uint32_t kBlockedMaxSlices = 32;  // k + l
constexpr uint32_t kLanes = 16;             // 32-bit lanes per 64-byte line
constexpr uint32_t kLaneBits = 32;
// Slices of at most 2^40 bits, as in the classic layout.
constexpr uint64_t kBlockedMaxBlocks = (uint64_t(1) << 40) / kLaneBits;
// The model is conservative for rates up to this (not near 1, where runs in
// different windows overlap); the blocked sizing takes no larger targets.
constexpr double kBlockedMaxErrorRate = 0.2;
// Wire flag of kind 2 (age_bloom) marking the blocked layout.
constexpr uint32_t kBlockedWireFlag = 1;

// The model's false-positive rate (see above) for a query over S slices in
// age order whose lanes carry on average load[i] keys (i = 0 newest).
double blocked_false_positive_model(uint32_t k, const double *load, uint32_t slices);

// At steady state, just before a shift, with slices at fill ratio rho when
// they leave the first k (lane load -32 ln(1 - rho) * min(i + 1, k) / k).
double blocked_steady_false_positive_model(uint32_t k, uint32_t l, double rho);

// The (k, l, rho) with k + l in {16, 32} that meets `target` under the model
// with the fewest bits per element of capacity, 16 ceil(S / 16) k /
// (l (-ln(1 - rho))). Fails with TF_ERR_INVALID_ARGUMENT for a target outside
// (0, 0.2] and TF_ERR_TOO_LARGE when no triple with rho >= 0.1 meets it.
tf_status choose_blocked(double target, uint32_t *k, uint32_t *l, double *rho);

namespace detail {
// The model summed exactly over every step of the loads (slow: the
// reference of blocked_false_positive_model in the tests).
double blocked_model_exact(uint32_t k, const double *load, uint32_t slices);
// The probability of a run of k set bits among n independent bits set with
// probabilities r[0..n-1]: the dynamic program over the current run's
// length (O(n k), the reference) and the sum over where the first run ends
// (O(n), what blocked_false_positive_model uses). They agree to rounding.
double run_probability_dp(uint32_t k, const double *r, uint32_t n);
double run_probability(uint32_t k, const double *r, uint32_t n);
// Lane s's bit position is byte s (0..31) of the little-endian pair
// (pos_lo, pos_hi). lane_bits: bit s of the result is that bit of lane s.
// lane_set: sets it in every lane s whose bit in `select` is set. The
// scalar and AVX2 versions give the same results; the AVX2 ones need a CPU
// that has it (cpu_has_avx2(), decided once per process; TF_NO_AVX2=1 in
// the environment says no).
uint32_t lane_bits_scalar(const uint32_t *line, uint64_t pos_lo, uint64_t pos_hi);
uint32_t lane_bits_avx2(const uint32_t *line, uint64_t pos_lo, uint64_t pos_hi);
void lane_set_scalar(uint32_t *line, uint64_t pos_lo, uint64_t pos_hi, uint32_t select);
void lane_set_avx2(uint32_t *line, uint64_t pos_lo, uint64_t pos_hi, uint32_t select);
bool cpu_has_avx2();
// Runs of k slices in a ring of `slots` slots whose newest slice is in slot
// `top`: run_shifts and run_starts prepare, ring_has_run answers whether
// the slots set in slot_mask hold k consecutive slices (never wrapping from
// the newest to the oldest).
constexpr uint32_t kRunSteps = 6;
void run_shifts(uint32_t k, uint8_t shifts[kRunSteps]);
uint64_t run_starts(uint32_t slots, uint32_t k, uint32_t top);
bool ring_has_run(uint64_t slot_mask, uint32_t slots, const uint8_t shifts[kRunSteps], uint64_t starts);
}  // namespace detail

// The storage policy of CountWindowBloom (count_window.hpp) that keeps the
// k + l <= 32 slices as the lanes of 64-byte lines (see above). The ring's
// generations carry no slot: generation `age` is lane slot_of(age) of every
// block.
class BlockedLayout {
   public:
    using Slot = NoSlot;
    using Ring = GenerationRing<NoSlot>;
    static constexpr uint32_t kFlags = 1;  // TF_AGE_BLOOM_BLOCKED
    static constexpr uint32_t kWireFlags = kBlockedWireFlag;
    static constexpr const char *kName = "blocked age-partitioned Bloom filter";

    BlockedLayout() = default;
    BlockedLayout(const BlockedLayout &) = delete;
    BlockedLayout &operator=(const BlockedLayout &) = delete;
    BlockedLayout(BlockedLayout &&) = default;
    BlockedLayout &operator=(BlockedLayout &&) = default;
    // k + l <= 32 slices of slice_bits (a multiple of 32) bits as the
    // generations of `ring`. Arguments must be valid (check_params); throws
    // std::bad_alloc.
    BlockedLayout(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, Ring *ring);

    // k >= 1, l >= 1, k + l <= 32, 32 <= slice_bits <= 2^40.
    static tf_status check_params(uint32_t k, uint32_t l, uint64_t slice_bits);
    // slice_bits rounded up to whole lanes.
    static uint64_t round_bits(uint64_t slice_bits) { return (slice_bits + kLaneBits - 1) / kLaneBits * kLaneBits; }
    // The budget does not apply: a query reads the one or two lines of the
    // key's lanes whatever the shape.
    static tf_status choose(double error_rate, double /*probe_budget*/, uint32_t *k, uint32_t *l, double *fill) {
        return choose_blocked(error_rate, k, l, fill);
    }
    // Slices for k generations of g inserts at fill `fill`, in whole lanes;
    // 0 when they would pass 2^40 bits.
    static uint64_t slice_bits_for(uint32_t k, uint64_t generation, double fill);

    void add(Ring &ring, const void *key, size_t len);
    bool contains(const Ring &ring, const void *key, size_t len) const;
    // contains, then add when absent: one hash.
    bool add_if_absent(Ring &ring, const void *key, size_t len);
    // The batch forms: the single calls in order. A query reads the one or
    // two lines of its block, which the hashing already prefetches.
    void add_batch(Ring &ring, const void *const *keys, const size_t *lens, size_t n) {
        for (size_t i = 0; i < n; ++i) add(ring, keys[i], lens[i]);
    }
    void contains_batch(const Ring &ring, const void *const *keys, const size_t *lens, size_t n, int *out) const {
        for (size_t i = 0; i < n; ++i) out[i] = contains(ring, keys[i], lens[i]);
    }
    void add_if_absent_batch(Ring &ring, const void *const *keys, const size_t *lens, size_t n, int *out) {
        for (size_t i = 0; i < n; ++i) out[i] = add_if_absent(ring, keys[i], lens[i]);
    }
    void clear(Ring &ring);

    uint32_t k() const { return k_; }
    uint32_t l() const { return l_; }
    uint32_t seed() const { return seed_; }
    uint64_t slice_bits(const Ring &) const { return blocks_ * kLaneBits; }
    // Bits of memory the slices occupy (whole lines: unused lanes count).
    uint64_t total_bits(const Ring &) const { return uint64_t(bands_) * blocks_ * kLanes * kLaneBits; }
    // The model's rate for the measured fill of every slice. O(bits / 32).
    double expected_fpr(const Ring &ring) const;
    size_t memory(const Ring &ring) const { return ring.size() * sizeof(Ring::Gen) + mem_.footprint(); }

    size_t payload_size(const Ring &ring) const;
    void write_payload(const Ring &ring, wire::Writer &w) const;
    // Reads a kind 2 payload with the blocked flag (memory: its lines and
    // generations plus `overhead` bytes).
    static tf_status read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, BlockedLayout *out,
                          Ring *ring);

   private:
    struct Probe {
        uint32_t *line[2];
        uint64_t pos[kBlockedMaxSlices / 8];  // byte s: slot s's bit (0..31)
    };
    void allocate();
    void locate(const void *key, size_t len, Probe *p) const;
    uint32_t slot_bits(const Probe &p) const;  // scalar gather, slot order
    bool in_age_order_has_run(uint64_t slot_mask) const;
    bool contains_avx2(const void *key, size_t len) const;
    bool add_if_absent_avx2(Ring &ring, const void *key, size_t len);
    void add_avx2(Ring &ring, const void *key, size_t len);
    void insert(Ring &ring, const Probe &p);
    // The oldest slice, emptied, becomes the newest.
    void rotate(Ring &ring);
    void set_top(uint32_t top);  // s_0 in slot `top`: young_ and valid_ follow

    uint32_t k_ = 0, l_ = 0, slots_ = 0, bands_ = 0, stride_ = 0, seed_ = 0;  // stride_: lanes per block
    uint32_t young_ = 0;                          // bit s: slot s holds one of the k newest slices
    uint64_t valid_ = 0;                          // starts of runs of k slices in the doubled slot ring
    uint8_t run_shift_[detail::kRunSteps] = {0};  // for detail::ring_has_run
    bool avx2_ = false;
    uint64_t blocks_ = 0;
    ZeroedBlock mem_;
    uint32_t *words_ = nullptr;
};

}  // namespace bloom
}  // namespace tf

#endif
