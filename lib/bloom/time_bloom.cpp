#include "bloom/time_bloom.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

namespace tf {
namespace bloom {

namespace {
// Bits for a slice of capacity c (fill ratio 1/2 when full, equation 8).
uint64_t bits_for_capacity(double c) {
    double m = std::ceil(c / kLn2);
    if (!(m >= 64.0)) m = 64.0;
    if (m > double(kMaxSliceBits)) m = double(kMaxSliceBits);
    return uint64_t(m);
}
}  // namespace

TimeBloom::TimeBloom(uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t span, uint32_t seed)
    : shape_{k, l, seed, span, 0}, ring_(Rotation::Rate, 0, span, l) {
    ring_.reserve(size_t(k) + l);
    for (uint32_t i = 0; i < k + l; ++i) ring_.open(make_slice(slice_bits, ring_.next_serial(), k));  // oldest first
    ring_.set_budget(next_generation());
}

bool TimeBloom::retirable(size_t age, uint64_t now) const {
    // Equation 3: a slice whose last insert is older than the span holds
    // nothing a query may still find, so it goes, down to the k slices an
    // insert needs (the paper keeps k + l; its conclusion notes k would do,
    // and keeping stale slices would hold the memory of a past burst for
    // ever). The initial slices that never received an insert go too, but
    // only down to k + l, the filter's steady shape.
    const SliceGen &s = ring_[age];
    if (age < shape_.k) return false;
    if (ring_.expired(s, now)) return true;
    return s.last == 0 && age >= size_t(shape_.k) + shape_.l;
}

uint64_t TimeBloom::next_generation() const {
    // Equations 4-5: slice i (< k) can take m_i ln 2 - n_i more inserts
    // over its k - i remaining generations.
    const uint64_t now = ring_.clock();
    double g = std::numeric_limits<double>::infinity();
    for (uint32_t i = 0; i < shape_.k && i < ring_.size(); ++i) {
        const SliceGen &s = ring_[i];
        const double n = ring_.expired(s, now) ? 0.0 : double(s.received);
        const double u = std::floor((double(s.m) * kLn2 - n) / double(shape_.k - i));
        g = std::min(g, u);
    }
    // A slice already at capacity still lets one insert through per
    // generation: the rotations then move it out of the first k quickly.
    if (!(g >= 1.0)) g = 1.0;
    return uint64_t(std::min(g, 1e18));
}

double TimeBloom::new_slice_capacity(double tg, uint64_t now) const {
    // Equation 7, generalised: the new s_0 takes one generation at each of
    // positions 0..k-1. While an old slice (now at position p = 1..k-1,
    // with u_p inserts per remaining generation, equation 4) is still among
    // the first k, generations are at most u_p; otherwise they are the
    // target tg. With a single limiting slice s_j this is exactly
    // c_0 = count + j * tg (count = the inserts s_j can still take). u_p is
    // not rounded down here: the floors of equation 4 only spread a slice's
    // capacity unevenly over its generations, and summing floored shares
    // would shrink every new slice by up to k inserts, a bias that keeps
    // small slices small for ever.
    // Fixed arrays (k <= kMaxK): nothing here allocates, so add() cannot
    // fail after it has begun to change the filter.
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::array<double, kMaxK> u;
    u.fill(kInf);
    for (uint32_t p = 1; p < shape_.k; ++p) {
        const SliceGen &s = ring_[p - 1];  // before the rotation, s_{p-1}
        const double n = ring_.expired(s, now) ? 0.0 : double(s.received);
        u[p] = std::max(0.0, (double(s.m) * kLn2 - n) / double(shape_.k - p));
    }
    // prefix_min[q] = min(u_1..u_q)
    double c0 = 0.0, prefix = kInf;
    std::array<double, kMaxK> prefix_min;
    prefix_min.fill(kInf);
    for (uint32_t q = 1; q < shape_.k; ++q) prefix_min[q] = prefix = std::min(prefix, u[q]);
    for (uint32_t t = 0; t < shape_.k; ++t) {
        // at position t, the old slices still in the first k are p <= k-1-t
        const uint32_t q = shape_.k - 1 - t;
        c0 += std::min(tg, q >= 1 ? prefix_min[q] : kInf);
    }
    return c0;
}

uint64_t TimeBloom::max_new_slice_bits() const {
    // A new slice is at most kMaxGrowth times the largest slice present, so
    // one rotation never allocates more than a bounded multiple of what the
    // filter already holds (a jump in rate is followed over a few rotations).
    uint64_t largest = 64;
    for (const SliceGen &old : ring_) largest = std::max(largest, old.m);
    return std::min<uint64_t>(kMaxSliceBits, largest * kMaxGrowth);
}

tf_status TimeBloom::rotate(uint64_t now) {
    // Equation 6: the generation the current rate brings in one target
    // period (the ring measures it over at least one period); equation 7:
    // what the new slice must hold.
    const double c0 = new_slice_capacity(ring_.inserts_per_period(now, kMaxExtrapolation), now);
    // The limit counts the slices that remain once the stale ones retire.
    size_t remaining = ring_.size();
    while (remaining > 0 && retirable(remaining - 1, now)) --remaining;
    if (remaining >= kMaxSlices)
        return fail(TF_ERR_TOO_LARGE, "time-limited filter reached %u slices within its span", kMaxSlices);
    try {  // allocate before changing anything; rotate changes nothing if it throws
        const uint64_t bits = std::min(bits_for_capacity(c0), max_new_slice_bits());  // equation 8
        ring_.rotate(make_slice(bits, ring_.next_serial(), shape_.k), now);
    } catch (const std::bad_alloc &) {
        return fail(TF_ERR_OUT_OF_MEMORY, "out of memory for a new slice of the time-limited filter");
    }
    // Equation 3: retire what is older than the span.
    while (retirable(ring_.size() - 1, now)) ring_.retire_oldest();
    ring_.set_budget(next_generation());
    return TF_OK;
}

tf_status TimeBloom::add(const void *key, size_t len, uint64_t now) {
    KeyHashes h;
    key_hashes(shape_.k, shape_.seed, key, len, &h);
    return add_hashed(h, now);
}

tf_status TimeBloom::add_hashed(const KeyHashes &h, uint64_t now) {
    now = ring_.clamp(now);
    // The clock starts at the first insert. Equations 4-5 rotate when the
    // newest slices have taken their share; a generation also ends once it
    // has lasted a target period (span / l) with at least one insert:
    // otherwise slices sized for a past burst would take their share only
    // after many spans, staying in the first k (never stale, never retired)
    // and holding the burst's memory.
    const RingCounters before = ring_.observe(now);
    if (ring_.due(now)) {
        tf_status st = rotate(now);
        if (st != TF_OK) {  // nothing changed but the clock
            ring_.undo(before);
            return st;
        }
    }
    // Equation 3 between rotations too (one comparison): the oldest slice
    // leaves as soon as it is stale rather than at the next rotation.
    if (retirable(ring_.size() - 1, now)) ring_.retire_oldest();
    insert_bits(ring_, shape_.k, h, now, Live{&ring_, now});
    ring_.record_insert();
    return TF_OK;
}

bool TimeBloom::contains(const void *key, size_t len, uint64_t now) const {
    KeyHashes h;
    key_hashes(shape_.k, shape_.seed, key, len, &h);
    return query_single(ring_, shape_.k, h, Live{&ring_, ring_.clamp(now)});
}

tf_status TimeBloom::add_batch(const void *const *keys, const size_t *lens, size_t n, uint64_t now, size_t *done) {
    tf_status st = TF_OK;
    *done = 0;
    // A failed add stops the batch; the groups already hashed are dropped.
    batch_groups(ring_, shape_.k, shape_.seed, keys, lens, n, [&](size_t i, const KeyHashes &h) {
        if (st != TF_OK) return;
        st = add_hashed(h, now);
        if (st == TF_OK) *done = i + 1;
    });
    return st;
}

void TimeBloom::contains_batch(const void *const *keys, const size_t *lens, size_t n, uint64_t now, int *out) const {
    const Live live{&ring_, ring_.clamp(now)};
    batch_groups(ring_, shape_.k, shape_.seed, keys, lens, n,
                 [&](size_t i, const KeyHashes &h) { out[i] = query_bits(ring_, shape_.k, h, live); });
}

tf_status TimeBloom::add_if_absent_batch(const void *const *keys, const size_t *lens, size_t n, uint64_t now, int *out,
                                         size_t *done) {
    tf_status st = TF_OK;
    *done = 0;
    batch_groups(ring_, shape_.k, shape_.seed, keys, lens, n, [&](size_t i, const KeyHashes &h) {
        if (st != TF_OK) return;
        if (query_bits(ring_, shape_.k, h, Live{&ring_, ring_.clamp(now)})) {
            out[i] = 1;
            *done = i + 1;
            return;
        }
        st = add_hashed(h, now);
        if (st == TF_OK) {
            out[i] = 0;
            *done = i + 1;
        }
    });
    return st;
}

void TimeBloom::clear() {
    for (SliceGen &s : ring_) s.reset();
    ring_.clear();
    ring_.set_budget(next_generation());
}

void TimeBloom::write_payload(wire::Writer &w) const { write_slices_payload(shape_, ring_, w); }

tf_status TimeBloom::read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, TimeBloom *out) {
    return read_slices_payload(true, r, limits, overhead, &out->shape_, &out->ring_);
}

}  // namespace bloom
}  // namespace tf
