#include "bloom/age_partitioned.hpp"

#include "bloom/choice_memo.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

namespace tf {
namespace bloom {

namespace {
uint64_t words_for(uint64_t bits) { return (bits + 63) / 64; }
// The words of a slice of m bits, or std::bad_alloc when they do not fit a
// size_t (a 32-bit build; slices go up to 2^40 bits).
AlignedArray<uint64_t> slice_words(uint64_t m) {
    const uint64_t words = words_for(m);
    if (words > SIZE_MAX / sizeof(uint64_t)) throw std::bad_alloc();
    return AlignedArray<uint64_t>(size_t(words));
}
}  // namespace

double false_positive_rate(uint32_t k, const double *r, size_t slices) {
    // run[j]: probability that the scan so far ends with a run of exactly j
    // matching slices (j < k) and has not yet seen k in a row.
    std::vector<double> run(k, 0.0), next(k, 0.0);
    run[0] = 1.0;
    double hit = 0.0;
    for (size_t i = 0; i < slices; ++i) {
        std::fill(next.begin(), next.end(), 0.0);
        const double p = r[i];
        for (uint32_t j = 0; j < k; ++j) {
            if (run[j] == 0.0) continue;
            next[0] += run[j] * (1.0 - p);
            if (j + 1 == k)
                hit += run[j] * p;
            else
                next[j + 1] += run[j] * p;
        }
        run.swap(next);
    }
    return hit;
}

namespace {
// The fills at the worst moment, just before a shift (equation 2).
std::vector<double> steady_fills(uint32_t k, uint32_t l) {
    std::vector<double> r(k + l);
    for (uint32_t i = 0; i < k + l; ++i) r[i] = i < k ? 1.0 - std::exp2(-double(i + 1) / double(k)) : 0.5;
    return r;
}
}  // namespace

double steady_false_positive_rate(uint32_t k, uint32_t l) {
    const std::vector<double> r = steady_fills(k, l);
    return false_positive_rate(k, r.data(), r.size());
}

double steady_bits_per_element(uint32_t k, uint32_t l) { return double(k + l) * double(k) / (double(l) * kLn2); }

namespace {
// Algorithm 1 as a flow of probability: a query starts with mass 1 at the
// window of the oldest k slices (start S - k, no matches carried); a window
// starting at j with p matches carried tests j, j + 1, ... while they
// match, and a miss at j + c sends the mass on to the window starting at
// j + c - k carrying c (none when it would start below 0); k matches in
// all end the query. Jumps only go down, so the windows are settled from
// the top. Each slice is tested at most once per query, so the tests are
// independent draws and the expected count is exact for the fills.
class ProbeFlow {
   public:
    ProbeFlow(uint32_t k, size_t slices) : k_(k), windows_(slices - k + 1), mass_(windows_ * k, 0.0) {
        mass_[(windows_ - 1) * k_] = 1.0;
    }
    size_t windows() const { return windows_; }
    double tests() const { return tests_; }
    // Settles window j with the fills fill(i).
    template <class Fill>
    void settle(size_t j, Fill &&fill) {
        for (uint32_t p = 0; p < k_; ++p) {
            double reach = mass_[j * k_ + p];
            if (reach == 0.0) continue;
            for (uint32_t c = 0; c + p < k_; ++c) {
                tests_ += reach;
                const double q = fill(j + c);
                if (j + c >= k_) mass_[(j + c - k_) * k_ + c] += reach * (1.0 - q);
                reach *= q;
                if (reach == 0.0) break;
            }
        }
    }
    // A copy that holds only the windows below `top` (the ones not yet
    // settled), for a branch of the computation.
    ProbeFlow below(size_t top) const { return ProbeFlow(*this, top); }

   private:
    ProbeFlow(const ProbeFlow &o, size_t top)
        : k_(o.k_), windows_(o.windows_), mass_(o.windows_ * o.k_, 0.0), tests_(o.tests_) {
        std::copy(o.mass_.begin(), o.mass_.begin() + std::min(top, windows_) * k_, mass_.begin());
    }
    uint32_t k_;
    size_t windows_;
    std::vector<double> mass_;  // by window start, then matches carried
    double tests_ = 0.0;
};
}  // namespace

double expected_probes(uint32_t k, const double *r, size_t slices) {
    if (k == 0 || slices < k) return 0.0;
    ProbeFlow flow(k, slices);
    for (size_t j = flow.windows(); j-- > 0;) flow.settle(j, [r](size_t i) { return r[i]; });
    return flow.tests();
}

double steady_absent_probes(uint32_t k, uint32_t l) {
    const std::vector<double> r = steady_fills(k, l);
    return expected_probes(k, r.data(), r.size());
}

double steady_present_probes(uint32_t k, uint32_t l) {
    // A key whose k slices are a..a+k-1 (fill 1). The windows starting at
    // a + k or above test none of them: they flow as for an absent key, so
    // one pass over the unforced fills serves every a, and each a branches
    // off it just before its first affected window and settles the rest
    // with its own fills (only windows down to a - k + 1 receive any mass:
    // the query ends on the key's run at the latest).
    const std::vector<double> r = steady_fills(k, l);
    const size_t S = r.size();
    ProbeFlow flow(k, S);
    double total = 0.0;
    auto finish = [&](uint32_t a, const ProbeFlow &from, size_t top) {
        ProbeFlow own = from.below(top);
        auto fill = [&](size_t i) { return i >= a && i < size_t(a) + k ? 1.0 : r[i]; };
        for (size_t j = top; j-- > 0;) own.settle(j, fill);
        total += own.tests();
    };
    // Settle the shared pass from the top, branching each a off at its
    // first affected window a + k - 1 (or at the start when that is the
    // starting window or above).
    uint32_t next_a = l;  // the a to branch next, from the highest
    const size_t W = flow.windows();
    while (next_a != UINT32_MAX && size_t(next_a) + k >= W) {
        finish(next_a, flow, W);
        next_a = next_a == 0 ? UINT32_MAX : next_a - 1;
    }
    for (size_t j = W; j-- > 0;) {
        flow.settle(j, [&](size_t i) { return r[i]; });
        // windows >= j settled: branch the a with a + k == j
        while (next_a != UINT32_MAX && size_t(next_a) + k == j) {
            finish(next_a, flow, j);
            next_a = next_a == 0 ? UINT32_MAX : next_a - 1;
        }
    }
    return total / double(l + 1);
}

namespace {
struct ClassicQuestion {
    double target, budget;
    bool operator==(const ClassicQuestion &o) const { return target == o.target && budget == o.budget; }
};
struct ClassicChoice {
    uint32_t k, l;
};
ChoiceMemo<ClassicQuestion, ClassicChoice> &classic_memo() {
    static ChoiceMemo<ClassicQuestion, ClassicChoice> memo;
    return memo;
}

// The largest l in [1, hi] with pred(l), given pred(1) and pred falling
// from true to false as l grows.
template <class Pred>
uint32_t largest_l(uint32_t hi, Pred pred) {
    uint32_t lo = 1;
    if (pred(hi)) return hi;
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        (pred(mid) ? lo : hi) = mid;
    }
    return lo;
}

ClassicChoice search_classic(double target, double budget) {
    const uint32_t lmax = kMaxL / 4;
    double best = std::numeric_limits<double>::infinity();
    ClassicChoice c = {0, 0};
    for (uint32_t k = 1; k <= kMaxK; ++k) {
        // bits per element exceed k / ln 2 for every l: no larger k wins.
        if (double(k) / kLn2 >= best) break;
        if (steady_false_positive_rate(k, 1) > target) continue;
        uint32_t l = largest_l(lmax, [&](uint32_t m) { return steady_false_positive_rate(k, m) <= target; });
        if (budget < std::numeric_limits<double>::infinity() && steady_absent_probes(k, l) > budget) {
            if (steady_absent_probes(k, 1) > budget) continue;
            l = largest_l(l, [&](uint32_t m) { return steady_absent_probes(k, m) <= budget; });
        }
        const double bpe = steady_bits_per_element(k, l);
        if (bpe < best - 1e-12) best = bpe, c = {k, l};
    }
    return c;
}
}  // namespace

tf_status choose_kl(double target, double probe_budget, uint32_t *k_out, uint32_t *l_out) {
    if (!(target > 0.0 && target < 1.0))
        return fail(TF_ERR_INVALID_ARGUMENT, "error rate must be in (0, 1), got %g", target);
    if (!(probe_budget >= 1.0))
        return fail(TF_ERR_INVALID_ARGUMENT, "the probe budget must be >= 1, got %g", probe_budget);
    const ClassicQuestion q = {target, probe_budget};
    ClassicChoice c;
    if (!classic_memo().find(q, &c)) {
        c = search_classic(target, probe_budget);
        if (c.k == 0) {
            if (probe_budget < std::numeric_limits<double>::infinity())
                return fail(TF_ERR_TOO_LARGE, "no (k, l) with k <= %u meets error rate %g within %g expected probes",
                            kMaxK, target, probe_budget);
            return fail(TF_ERR_TOO_LARGE, "no (k, l) with k <= %u meets error rate %g", kMaxK, target);
        }
        classic_memo().remember(q, c);
    }
    *k_out = c.k;
    *l_out = c.l;
    return TF_OK;
}

tf_status check_classic_params(uint32_t k, uint32_t l, uint64_t slice_bits) {
    if (k == 0 || k > kMaxK) return fail(TF_ERR_INVALID_ARGUMENT, "k must be in 1..%u, got %u", kMaxK, k);
    if (l == 0 || l > kMaxL) return fail(TF_ERR_INVALID_ARGUMENT, "l must be in 1..%u, got %u", kMaxL, l);
    if (slice_bits < 64)
        return fail(TF_ERR_INVALID_ARGUMENT, "slice_bits must be >= 64, got %llu", (unsigned long long)slice_bits);
    if (slice_bits > kMaxSliceBits)
        return fail(TF_ERR_TOO_LARGE, "slice_bits must be <= 2^40, got %llu", (unsigned long long)slice_bits);
    // (k + l) slices of at most 2^40 bits: at most 2^51 bits, no overflow.
    return TF_OK;
}

// ---- the slices -------------------------------------------------------------

Slice make_slice(uint64_t m, uint64_t serial, uint32_t k) {
    Slice s;
    s.m = m;
    s.words = slice_words(m);
    s.hidx = uint32_t(serial % k);
    return s;
}

double measured_fill(const SliceGen &g) {
    if (g.received == 0 || g.m == 0) return 0.0;
    uint64_t set = 0;
    for (size_t i = 0; i < g.words.size(); ++i) set += uint64_t(__builtin_popcountll(g.words[i]));
    return double(set) / double(g.m);
}

void key_hashes(uint32_t k, uint32_t seed, const void *key, size_t len, KeyHashes *h) {
    // Enhanced double hashing, each value passed through one more
    // non-linear mix. Reduced straight to a small slice, the plain sequence
    // h1 + j h2 + ... puts two keys whose (h1, h2) are close in the high
    // bits at the same position of every slice at once, which adds about
    // n / m^2 to the false-positive rate (measured: 1.16% for a 1% target
    // with slices of a few hundred bits); mixed, the slices' bits are
    // independent.
    IndexSequence seq(key_hash(key, len, seed));
    for (uint32_t j = 0; j < k; ++j) h->v[j] = detail::fmix64(seq.next_raw());
}

uint64_t slices_total_bits(const SliceRing &ring) {
    uint64_t b = 0;
    for (const SliceGen &s : ring) b += s.m;
    return b;
}

size_t slices_memory(const SliceRing &ring) {
    size_t b = 0;
    for (const SliceGen &s : ring) b += sizeof(SliceGen) + s.words.bytes();
    return b;
}

// ---- the payload of kinds 2 (classic layout) and 3 ------------------------
//
// Little-endian, field by field (docs/wire-format.md):
//
//   offset      size  field
//   0           4     k
//   4           4     l
//   8           4     seed
//   12          4     S, the number of slices
//   16          8     span (kind 2: 0)
//   24          8     generation g (kind 3: 0)
//   32          8     until_shift: inserts left in the current generation
//   40          8     gen_inserts: inserts made in the current generation
//   48          8     last_shift: time the current generation began (kind 2: 0)
//   56          8     high_water: the highest time seen (kind 2: 0)
//   64          8     inserts since creation or clear
//   72          8     next_serial: serial of the next slice
//   80          ...   S slices, s_0 (the newest) first, each:
//     +0        8       m, its bits
//     +8        8       n, inserts it received
//     +16       8       t, time of its last insert (kind 2: 0)
//     +24       8       serial (s_0: next_serial - 1, then one less per slice)
//     +32       8       owned: inserts made while it was s_0 (kind 2: 0)
//     +40       8       own_end: time its generation ended (kind 2: 0)
//     +48       8 w     words, w = ceil(m / 64), bit i of the slice in word
//                       i / 64, bit i mod 64; the bits past m are 0
namespace {
constexpr size_t kHeaderBytes = 4 * 4 + 8 * 8;
constexpr size_t kSliceHeaderBytes = 6 * 8;
}  // namespace

size_t slices_payload_size(const SliceRing &ring) {
    size_t n = kHeaderBytes;
    for (const SliceGen &s : ring) n += kSliceHeaderBytes + s.words.size() * 8;
    return n;
}

void write_slices_payload(const SliceShape &shape, const SliceRing &ring, wire::Writer &w) {
    const RingCounters &c = ring.counters();
    w.u32(shape.k);
    w.u32(shape.l);
    w.u32(shape.seed);
    w.u32(uint32_t(ring.size()));
    for (uint64_t v :
         {shape.span, shape.generation, c.budget, c.current, c.opened_at, c.clock, c.inserts, c.next_serial})
        w.u64(v);
    for (size_t i = 0; i < ring.size(); ++i) {  // s_0 first
        const SliceGen &s = ring[i];
        for (uint64_t v : {s.m, s.received, s.last, s.serial, s.owned, s.ended}) w.u64(v);
        w.u64_array(s.words.data(), s.words.size());
    }
}

namespace {
const char *what_of(bool time_window) {
    return time_window ? "time-limited Bloom filter" : "age-partitioned Bloom filter";
}

// The header (offsets 0-79), validated for the window's kind.
tf_status read_slices_header(bool time_window, wire::Reader &r, SliceShape *shape, RingCounters *c, uint32_t *count) {
    const char *what = what_of(time_window);
    shape->k = r.u32();
    shape->l = r.u32();
    shape->seed = r.u32();
    *count = r.u32();
    for (uint64_t *v : {&shape->span, &shape->generation, &c->budget, &c->current, &c->opened_at, &c->clock,
                        &c->inserts, &c->next_serial})
        *v = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s payload too short for its header", what);
    if (shape->k == 0 || shape->k > kMaxK || shape->l == 0 || shape->l > kMaxL)
        return fail(TF_ERR_CORRUPT, "%s blob has k = %u, l = %u", what, shape->k, shape->l);
    if (c->current > c->inserts)
        return fail(TF_ERR_CORRUPT, "%s blob has a generation counter above its insert count", what);
    const size_t base = size_t(shape->k) + shape->l;
    if (!time_window) {
        if (*count != base) return fail(TF_ERR_CORRUPT, "%s blob has %u slices, k + l = %zu", what, *count, base);
        if (shape->generation == 0 || c->budget > shape->generation || shape->span != 0 || c->clock != 0 ||
            c->opened_at != 0)
            return fail(TF_ERR_CORRUPT, "%s blob has an invalid generation or clock", what);
    } else {
        if (*count < shape->k || *count > kMaxSlices)
            return fail(TF_ERR_CORRUPT, "%s blob has %u slices (k = %u)", what, *count, shape->k);
        if (shape->span < shape->l) return fail(TF_ERR_CORRUPT, "%s blob has a span shorter than l", what);
        if (c->opened_at > c->clock) return fail(TF_ERR_CORRUPT, "%s blob has its last shift in the future", what);
    }
    return TF_OK;
}

// Every slice header and the payload's size, validated without allocating
// (on a copy of the reader); *need += the bytes the slices will hold.
tf_status check_slices(bool time_window, wire::Reader r, const SliceShape &shape, const RingCounters &c, uint32_t count,
                       uint64_t *need) {
    const char *what = what_of(time_window);
    uint64_t prev_serial = 0, first_m = 0;
    *need += uint64_t(count) * sizeof(SliceGen);
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t m = r.u64(), n = r.u64(), t = r.u64(), serial = r.u64();
        const uint64_t owned = r.u64(), own_end = r.u64();
        if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s blob ends inside slice %u", what, i);
        if (m < 64 || m > kMaxSliceBits)
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u has %llu bits", what, i, (unsigned long long)m);
        if (t > c.clock) return fail(TF_ERR_CORRUPT, "%s blob: slice %u is newer than the clock", what, i);
        // s_0 has the highest serial and serials fall by one per slice
        if (serial >= c.next_serial || (i > 0 && serial + 1 != prev_serial))
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u has serial %llu out of order", what, i,
                        (unsigned long long)serial);
        if (n > c.inserts || owned > c.inserts)
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u counts more inserts than the filter", what, i);
        if (own_end > c.clock || (!time_window && (t != 0 || own_end != 0)))
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u has an invalid time", what, i);
        if (i == 0) first_m = m;
        if (!time_window && m != first_m) return fail(TF_ERR_CORRUPT, "%s blob: slices differ in size", what);
        prev_serial = serial;
        const uint64_t words = words_for(m);
        if (words > r.remaining() / 8)
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u needs %llu bytes, %zu left", what, i,
                        (unsigned long long)(words * 8), r.remaining());
        r.view(size_t(words * 8));
        *need += AlignedArray<uint64_t>::bytes_for(size_t(words));
    }
    if (!r.done()) return fail(TF_ERR_CORRUPT, "%s blob has %zu trailing payload bytes", what, r.remaining());
    if (!time_window && shape.generation > uint64_t(double(first_m) * kLn2 / shape.k) + 1)
        return fail(TF_ERR_CORRUPT, "%s blob: generation too large for its slices", what);
    return TF_OK;
}

// The slices (checked by check_slices), oldest first, as a ring holds them.
tf_status read_slices(bool time_window, wire::Reader &r, uint32_t k, uint32_t count, std::vector<SliceGen> *out) {
    std::vector<SliceGen> newest_first;
    newest_first.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        SliceGen s;
        for (uint64_t *v : {&s.m, &s.received, &s.last, &s.serial, &s.owned, &s.ended}) *v = r.u64();
        s.words = slice_words(s.m);
        r.u64_array(s.words.data(), s.words.size());
        // bits beyond m in the last word must be clear
        if (s.m % 64 != 0 && (s.words[s.words.size() - 1] >> (s.m % 64)) != 0)
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u sets bits beyond its size", what_of(time_window), i);
        s.hidx = uint32_t(s.serial % k);
        newest_first.push_back(std::move(s));
    }
    if (!r.done()) return fail(TF_ERR_INTERNAL, "%s payload read failed", what_of(time_window));
    out->clear();
    out->reserve(count);
    for (size_t i = newest_first.size(); i-- > 0;) out->push_back(std::move(newest_first[i]));
    return TF_OK;
}
}  // namespace

tf_status read_slices_payload(bool time_window, wire::Reader &r, const DeserializeLimits &limits, size_t overhead,
                              SliceShape *shape_out, SliceRing *ring_out) {
    SliceShape shape;
    RingCounters c;
    uint32_t count = 0;
    tf_status st = read_slices_header(time_window, r, &shape, &c, &count);
    if (st != TF_OK) return st;
    uint64_t need = overhead;
    st = check_slices(time_window, r, shape, c, count, &need);
    if (st != TF_OK) return st;
    st = limits.check_memory(need);
    if (st != TF_OK) return st;
    std::vector<SliceGen> oldest_first;
    st = read_slices(time_window, r, shape.k, count, &oldest_first);
    if (st != TF_OK) return st;
    SliceRing ring = time_window ? SliceRing(Rotation::Rate, 0, shape.span, shape.l)
                                 : SliceRing(Rotation::Count, shape.generation, 0, 1);
    ring.restore_generations(std::move(oldest_first), c);
    *shape_out = shape;
    *ring_out = std::move(ring);
    return TF_OK;
}

// ---- the count window's classic layout --------------------------------------

ClassicLayout::ClassicLayout(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, Ring *ring)
    : shape_{k, l, seed, 0, ring->period()} {
    ring->reserve(size_t(k) + l);
    for (uint32_t i = 0; i < k + l; ++i) ring->open(make_slice(slice_bits, ring->next_serial(), k));  // oldest first
}

tf_status ClassicLayout::choose(double error_rate, double probe_budget, uint32_t *k, uint32_t *l, double *fill) {
    *fill = 0.5;
    return choose_kl(error_rate, probe_budget, k, l);
}

uint64_t classic_slice_bits(uint32_t k, double generation) {
    double m = std::ceil(double(k) * generation / kLn2);
    if (m < 64.0) m = 64.0;
    return m > double(kMaxSliceBits) ? 0 : uint64_t(m);
}

uint64_t ClassicLayout::slice_bits_for(uint32_t k, uint64_t generation, double) {
    return classic_slice_bits(k, double(generation));
}

void ClassicLayout::clear(Ring &ring) {
    for (SliceGen &s : ring) s.reset();
    ring.clear();
}

void ClassicLayout::write_payload(const Ring &ring, wire::Writer &w) const { write_slices_payload(shape_, ring, w); }

tf_status ClassicLayout::read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, ClassicLayout *out,
                              Ring *ring) {
    return read_slices_payload(false, r, limits, overhead, &out->shape_, ring);
}

}  // namespace bloom
}  // namespace tf
