#include "bloom/blocked.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TF_HAVE_X86 1
#endif

#include "bloom/choice_memo.hpp"
#include "common/coverage.hpp"
#include "common/hash.hpp"

namespace tf {
namespace bloom {

// The false-positive model is arithmetic on the measured fills: its
// functions are TF_NO_FUZZ_COVERAGE (common/coverage.hpp).

namespace detail {
// Probability of a run of k among independent bits with probabilities r[]:
// the dynamic program over the length of the current run, O(n k) (the
// reference: blocked_model_exact uses it).
TF_NO_FUZZ_COVERAGE double run_probability_dp(uint32_t k, const double *r, uint32_t n) {
    double run[kBlockedMaxSlices] = {1.0}, next[kBlockedMaxSlices];
    double hit = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        std::fill(next, next + k, 0.0);
        for (uint32_t j = 0; j < k; ++j) {
            if (run[j] == 0.0) continue;
            next[0] += run[j] * (1.0 - r[i]);
            if (j + 1 == k)
                hit += run[j] * r[i];
            else
                next[j + 1] += run[j] * r[i];
        }
        std::copy(next, next + k, run);
    }
    return hit;
}

// The same probability in O(n), summed over where the first run ends: it
// ends at bit i when bits i-k+1..i are set (their product w, kept as a
// sliding product of the nonzero probabilities and a count of the zero
// ones), bit i-k is clear, and bits 0..i-k-1 hold no run (none[i-k], with
// none[m] = 1 for m < k, none[m] = none[m-1] - first[m-1]). Agrees with
// the dynamic program to rounding (a few ulps per bit; test_internals).
TF_NO_FUZZ_COVERAGE double run_probability(uint32_t k, const double *r, uint32_t n) {
    // none[m]: no run among bits 0..m-1
    double none[kBlockedMaxSlices + 1];
    none[0] = 1.0;
    double w = 1.0, hit = 0.0;
    uint32_t zeros = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (r[i] == 0.0)
            ++zeros;
        else
            w *= r[i];
        if (i >= k) {
            if (r[i - k] == 0.0)
                --zeros;
            else
                w /= r[i - k];
        }
        double first = 0.0;  // the first run ends at bit i
        if (i + 1 >= k && zeros == 0) first = i + 1 == k ? w : w * (1.0 - r[i - k]) * none[i - k];
        none[i + 1] = none[i] - first;
        hit += first;
    }
    return hit;
}

}  // namespace detail

namespace {
constexpr double kMinFill = 0.1;
// Loads at or above this fill a lane (1 - (31/32)^700 = 1 - 2e-10): such a
// slot is taken as always set.
constexpr double kFullLoad = 700.0;
// The model stops when the probability left is below this; what is left is
// counted as a sure false positive (conservative).
constexpr double kTail = 1e-18;

// The survival function of Poisson(lambda), sf[x] = P(X > x), from x = 0
// while it is at least kTail (summed from the far tail down, so that small
// values keep their precision), appended to *sf.
TF_NO_FUZZ_COVERAGE void poisson_survival(double lambda, std::vector<double> *sf) {
    if (lambda <= 0.0) {
        sf->push_back(0.0);
        return;
    }
    const size_t top = size_t(lambda + 14.0 * std::sqrt(lambda) + 60.0);
    static thread_local std::vector<double> pmf;
    pmf.resize(top + 1);
    pmf[0] = std::exp(-lambda);  // lambda < kFullLoad: no underflow
    for (size_t x = 1; x <= top; ++x) pmf[x] = pmf[x - 1] * lambda / double(x);
    // P(X > x) for x = top down to 0, summed from the far tail (the mass
    // beyond top is below 1e-30)
    static thread_local std::vector<double> tail;
    tail.resize(top + 1);
    double acc = 0.0;
    for (size_t x = top + 1; x-- > 0;) {
        tail[x] = acc;
        acc += pmf[x];
    }
    for (size_t x = 0; x <= top; ++x) {
        sf->push_back(tail[x]);
        if (tail[x] < kTail) break;
    }
}

// 1 - (31/32)^x: the fill of a lane that x keys set bits in.
TF_NO_FUZZ_COVERAGE double lane_fill(size_t x) {
    static const std::vector<double> table = [] {
        std::vector<double> t(4096);
        for (size_t i = 0; i < t.size(); ++i) t[i] = 1.0 - std::pow(1.0 - 1.0 / kLaneBits, double(i));
        return t;
    }();
    return x < table.size() ? table[x] : 1.0 - std::pow(1.0 - 1.0 / kLaneBits, double(x));
}

// The slots' Poisson loads as the two sums below walk them: slots with
// equal loads form a group and share their steps; each group has its
// survival function (sf(g), count(g) values, all groups in one buffer kept
// by the thread, so that a call allocates nothing once the buffer is
// large enough), its current step x (the load) and that load's lane fill.
// A group whose load fills a lane (kFullLoad) is always set: one step, at
// no probability.
struct LoadSteps {
    uint32_t groups = 0;
    double loads[kBlockedMaxSlices];
    uint32_t group[kBlockedMaxSlices];
    size_t begin[kBlockedMaxSlices + 1];
    size_t x[kBlockedMaxSlices] = {0};
    size_t at[kBlockedMaxSlices] = {0};  // the load of the fast sum's step
    double fill[kBlockedMaxSlices] = {0.0};
    std::vector<double> &buf;

    TF_NO_FUZZ_COVERAGE LoadSteps(const double *load, uint32_t slices) : buf(buffer()) {
        for (uint32_t i = 0; i < slices; ++i) {
            const double l = std::max(0.0, load[i]);
            uint32_t g = 0;
            while (g < groups && loads[g] != l) ++g;
            if (g == groups) loads[groups++] = l;
            group[i] = g;
        }
        buf.clear();
        for (uint32_t g = 0; g < groups; ++g) {
            begin[g] = buf.size();
            if (full(g)) {
                buf.push_back(0.0);
                fill[g] = 1.0;
            } else {
                poisson_survival(loads[g], &buf);
            }
        }
        begin[groups] = buf.size();
    }
    static std::vector<double> &buffer() {
        static thread_local std::vector<double> b;
        return b;
    }
    bool full(uint32_t g) const { return loads[g] >= kFullLoad; }
    const double *sf(uint32_t g) const { return buf.data() + begin[g]; }
    size_t count(uint32_t g) const { return begin[g + 1] - begin[g]; }
    // r[i]: the fill of slot i at the current steps
    TF_NO_FUZZ_COVERAGE void fills(uint32_t slices, double *r) const {
        for (uint32_t i = 0; i < slices; ++i) r[i] = fill[group[i]];
    }
};

// Arguments the model answers 0 for: no slices, k out of range, no keys.
TF_NO_FUZZ_COVERAGE bool no_model(uint32_t k, const double *load, uint32_t slices) {
    return k == 0 || slices == 0 || slices > kBlockedMaxSlices || k > slices ||
           std::all_of(load, load + slices, [](double l) { return !(l > 0.0); });
}
}  // namespace

namespace detail {
TF_NO_FUZZ_COVERAGE double blocked_model_exact(uint32_t k, const double *load, uint32_t slices) {
    // E_U[P(run of k | X_i = F_i^-1(U))]: every slot's load is the same
    // quantile U of its own Poisson law (perfect correlation). The loads
    // are step functions of U, so the expectation is a finite sum over the
    // intervals between their steps, walked here in v = 1 - U from 1 down:
    // on (v_next, v], slot i has load x_i, the least x with P(X_i > x) <= v.
    if (no_model(k, load, slices)) return 0.0;
    LoadSteps st(load, slices);
    double v = 1.0, sum = 0.0, r[kBlockedMaxSlices];
    while (v > kTail) {
        // the interval (v_next, v]: the largest survival value not yet passed
        double v_next = 0.0;
        for (uint32_t g = 0; g < st.groups; ++g)
            if (st.x[g] < st.count(g)) v_next = std::max(v_next, st.sf(g)[st.x[g]]);
        st.fills(slices, r);
        sum += (v - v_next) * run_probability_dp(k, r, slices);
        v = v_next;
        if (v_next == 0.0) break;
        // the groups whose step is at v_next move to their next load
        for (uint32_t g = 0; g < st.groups; ++g)
            if (!st.full(g) && st.x[g] < st.count(g) && st.sf(g)[st.x[g]] == v_next) st.fill[g] = lane_fill(++st.x[g]);
    }
    return std::min(1.0, sum + v);  // what is left: counted as positives
}
}  // namespace detail

TF_NO_FUZZ_COVERAGE double blocked_false_positive_model(uint32_t k, const double *load, uint32_t slices) {
    // The sum of detail::blocked_model_exact, bounded from above with fewer
    // terms: v = 1 - U falls by 2^(1/16) per step, each step is charged the
    // run probability at its low end (the highest loads of the step; the
    // probability grows with the loads), and the walk stops once what is
    // left (at most v) is under 1/1000 of the sum, charging v. So the
    // result is at or above the exact value, and within a few percent of it
    // (test_internals).
    if (no_model(k, load, slices)) return 0.0;
    // The last arguments and answer of this thread: a get_stats on a filter
    // that has not changed since the last one (the same fills) costs no sum.
    static thread_local struct {
        uint32_t k = 0, slices = 0;
        double load[kBlockedMaxSlices];
        double rate = 0.0;
    } last;
    if (last.k == k && last.slices == slices && std::memcmp(last.load, load, slices * sizeof *load) == 0)
        return last.rate;
    LoadSteps st(load, slices);
    const double step = std::exp2(-1.0 / 16.0);
    double v = 1.0, sum = 0.0, run = 0.0, r[kBlockedMaxSlices];
    // next: the highest survival value at which some group's load steps
    // (its sf at its current load); while lo stays at or above it no load
    // moves and the step reuses the run probability without looking.
    double next = 2.0;
    while (v > kTail && v > 1e-3 * sum) {
        const double lo = v * step;
        if (lo < next) {
            // loads at lo: the least x with P(X > x) <= lo
            next = 0.0;
            bool changed = false;
            for (uint32_t g = 0; g < st.groups; ++g) {
                if (st.full(g)) continue;
                const double *sf = st.sf(g);
                const size_t n = st.count(g);
                size_t &x = st.x[g];
                while (x + 1 < n && sf[x] > lo) ++x;
                // past the end of the list the survival is below kTail <= lo
                const size_t at = sf[x] > lo ? x + 1 : x;
                if (at < n) next = std::max(next, sf[at]);
                if (at != st.at[g]) {  // the fill grows with the load
                    st.at[g] = at;
                    st.fill[g] = lane_fill(at);
                    changed = true;
                }
            }
            // (the first step always computes: next starts above 1)
            if (changed || run == 0.0) {
                st.fills(slices, r);
                run = detail::run_probability(k, r, slices);
            }
        }
        sum += (v - lo) * run;
        v = lo;
    }
    last.k = k;
    last.slices = slices;
    std::memcpy(last.load, load, slices * sizeof *load);
    last.rate = std::min(1.0, sum + v);
    return last.rate;
}

double blocked_steady_false_positive_model(uint32_t k, uint32_t l, double rho) {
    const uint32_t s = k + l;
    if (k == 0 || l == 0 || s > kBlockedMaxSlices || !(rho > 0.0 && rho < 1.0)) return 1.0;
    const double full = -double(kLaneBits) * std::log1p(-rho);
    double load[kBlockedMaxSlices];
    for (uint32_t i = 0; i < s; ++i) load[i] = full * double(std::min(i + 1, k)) / double(k);
    return blocked_false_positive_model(k, load, s);
}

namespace {
// A (k, l, rho) the blocked sizing chose for a target.
struct BlockedChoice {
    double target;
    uint32_t k, l;
    double rho;
};

ChoiceMemo<double, BlockedChoice> &choice_memo() {
    static ChoiceMemo<double, BlockedChoice> memo;
    return memo;
}

// Bits per element of capacity of a blocked filter of s = k + l slots
// (whole lines) whose slices leave the first k at fill rho.
double blocked_bits(uint32_t s, uint32_t k, uint32_t l, double rho) {
    return double(s) * k / (double(l) * -std::log1p(-rho));
}

// The fill of the fullest slices with which (k, s - k) meets the target
// under the model, or 0 when even slices 10% full do not, or when no fill
// could cost fewer bits than `best`. The rate rises with the fill: a
// bisection, given up as soon as even the fullest fill still possible
// would cost more bits than the best so far. Fills below 10% would cost
// over 7x the classic layout's memory: such targets are for the classic
// layout.
double fullest_fill(uint32_t s, uint32_t k, double target, double best) {
    const uint32_t l = s - k;
    double lo = kMinFill, hi = 0.9;
    if (blocked_bits(s, k, l, hi) >= best) return 0.0;
    if (blocked_steady_false_positive_model(k, l, lo) > target) return 0.0;
    for (int it = 0; it < 14 && blocked_bits(s, k, l, hi) < best; ++it) {
        const double mid = 0.5 * (lo + hi);
        (blocked_steady_false_positive_model(k, l, mid) <= target ? lo : hi) = mid;
    }
    return lo;
}

// Every k with k + l in {32, 16}: the (k, l, fill) with the fewest bits per
// element. False when none meets the target.
bool search_blocked(double target, BlockedChoice *out) {
    double best = std::numeric_limits<double>::infinity();
    BlockedChoice c = {target, 0, 0, 0.0};
    for (uint32_t s : {2 * kLanes, kLanes}) {
        for (uint32_t k = 1; k < s; ++k) {
            const double rho = fullest_fill(s, k, target, best);
            if (rho == 0.0) continue;
            const double bpe = blocked_bits(s, k, s - k, rho);
            if (bpe < best - 1e-9) best = bpe, c.k = k, c.l = s - k, c.rho = rho;
        }
    }
    *out = c;
    return c.k != 0;
}
}  // namespace

tf_status choose_blocked(double target, uint32_t *k_out, uint32_t *l_out, double *rho_out) {
    if (!(target > 0.0 && target <= kBlockedMaxErrorRate))
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "the blocked layout takes error rates in (0, %g], got %g (above, use the classic layout)",
                    kBlockedMaxErrorRate, target);
    BlockedChoice c;
    if (!choice_memo().find(target, &c)) {
        if (!search_blocked(target, &c))
            return fail(TF_ERR_TOO_LARGE,
                        "no blocked (k, l) with k + l <= 32 and slices at least %g full meets error rate %g", kMinFill,
                        target);
        choice_memo().remember(target, c);
    }
    *k_out = c.k;
    *l_out = c.l;
    *rho_out = c.rho;
    return TF_OK;
}

namespace detail {

namespace {
// Byte s of the little-endian pair (lo, hi): lane s's bit position.
inline uint32_t pos_of(uint64_t lo, uint64_t hi, uint32_t s) {
    return uint32_t((s < 8 ? lo >> (8 * s) : hi >> (8 * (s - 8))) & 0xff);
}
}  // namespace

uint32_t lane_bits_scalar(const uint32_t *line, uint64_t pos_lo, uint64_t pos_hi) {
    uint32_t m = 0;
    for (uint32_t s = 0; s < kLanes; ++s) m |= ((line[s] >> pos_of(pos_lo, pos_hi, s)) & 1u) << s;
    return m;
}

void lane_set_scalar(uint32_t *line, uint64_t pos_lo, uint64_t pos_hi, uint32_t select) {
    for (uint32_t s = 0; s < kLanes; ++s)
        if (select >> s & 1) line[s] |= uint32_t(1) << pos_of(pos_lo, pos_hi, s);
}

void run_shifts(uint32_t k, uint8_t shifts[kRunSteps]) {
    // Runs of 1, 2, 4, ... by doubling, then the rest; unused steps shift
    // by 0, which changes nothing.
    uint32_t len = 1, i = 0;
    for (uint32_t j = 0; j < kRunSteps; ++j) shifts[j] = 0;
    while (2 * len <= k) {
        shifts[i++] = uint8_t(len);
        len *= 2;
    }
    if (len < k) shifts[i] = uint8_t(k - len);
}

uint64_t run_starts(uint32_t slots, uint32_t k, uint32_t top) {
    const uint32_t oldest = top + 1 == slots ? 0 : top + 1;
    return ((uint64_t(1) << (slots - k + 1)) - 1) << oldest;
}

bool ring_has_run(uint64_t slot_mask, uint32_t slots, const uint8_t shifts[kRunSteps], uint64_t starts) {
    // The slots in increasing order (mod S) from the oldest (top + 1) are
    // the slices from oldest to newest. In the ring written out twice, bit
    // j + S = bit j, every run of k slices is a run of k bits that starts
    // at a bit of `starts` (top + 1 .. top + 1 + S - k): no run that wraps
    // from the newest slice to the oldest. Bit j of x after the shifts: the
    // k bits from j up are set.
    uint64_t x = slot_mask | (slot_mask << slots);
    for (uint32_t i = 0; i < kRunSteps; ++i) x &= x >> shifts[i];
    return (x & starts) != 0;
}

#ifdef TF_HAVE_X86
// The positions come as two 64-bit words of bytes (in registers: building
// them in memory and loading 16 bytes would stall on store forwarding).
__attribute__((target("avx2"), always_inline)) inline uint32_t gather_avx2(const uint32_t *line, uint64_t pos_lo,
                                                                           uint64_t pos_hi) {
    const __m128i p8 = _mm_set_epi64x(int64_t(pos_hi), int64_t(pos_lo));
    const __m256i c31 = _mm256_set1_epi32(31);
    // Shift each lane left so that its bit pos lands in the sign bit, then
    // collect the sign bits.
    const __m256i sh0 = _mm256_sub_epi32(c31, _mm256_cvtepu8_epi32(p8));
    const __m256i sh1 = _mm256_sub_epi32(c31, _mm256_cvtepu8_epi32(_mm_srli_si128(p8, 8)));
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(line));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(line + 8));
    const uint32_t lo = uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_sllv_epi32(w0, sh0))));
    const uint32_t hi = uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_sllv_epi32(w1, sh1))));
    return lo | (hi << 8);
}
__attribute__((target("avx2"))) uint32_t lane_bits_avx2(const uint32_t *line, uint64_t pos_lo, uint64_t pos_hi) {
    return gather_avx2(line, pos_lo, pos_hi);
}
__attribute__((target("avx2"), always_inline)) inline void scatter_avx2(uint32_t *line, uint64_t pos_lo,
                                                                        uint64_t pos_hi, uint32_t select) {
    const __m128i p8 = _mm_set_epi64x(int64_t(pos_hi), int64_t(pos_lo));
    const __m256i one = _mm256_set1_epi32(1);
    // Lane i is selected when bit i of `select` is set.
    const __m256i bit_lo = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i bit_hi = _mm256_slli_epi32(bit_lo, 8);
    const __m256i sel = _mm256_set1_epi32(int(select));
    const __m256i on0 = _mm256_cmpeq_epi32(_mm256_and_si256(sel, bit_lo), bit_lo);
    const __m256i on1 = _mm256_cmpeq_epi32(_mm256_and_si256(sel, bit_hi), bit_hi);
    const __m256i b0 = _mm256_and_si256(_mm256_sllv_epi32(one, _mm256_cvtepu8_epi32(p8)), on0);
    const __m256i b1 = _mm256_and_si256(_mm256_sllv_epi32(one, _mm256_cvtepu8_epi32(_mm_srli_si128(p8, 8))), on1);
    __m256i *w = reinterpret_cast<__m256i *>(line);
    _mm256_storeu_si256(w, _mm256_or_si256(_mm256_loadu_si256(w), b0));
    _mm256_storeu_si256(w + 1, _mm256_or_si256(_mm256_loadu_si256(w + 1), b1));
}
__attribute__((target("avx2"))) void lane_set_avx2(uint32_t *line, uint64_t pos_lo, uint64_t pos_hi, uint32_t select) {
    scatter_avx2(line, pos_lo, pos_hi, select);
}
bool cpu_has_avx2() {
    // Decided once per process. TF_NO_AVX2=1 in the environment selects the
    // portable code (the tests run both; the answers and blobs are the same).
    static const bool has = [] {
        const char *off = std::getenv("TF_NO_AVX2");
        if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }();
    return has;
}
#else
uint32_t lane_bits_avx2(const uint32_t *line, uint64_t pos_lo, uint64_t pos_hi) {
    return lane_bits_scalar(line, pos_lo, pos_hi);
}
void lane_set_avx2(uint32_t *line, uint64_t pos_lo, uint64_t pos_hi, uint32_t select) {
    lane_set_scalar(line, pos_lo, pos_hi, select);
}
bool cpu_has_avx2() { return false; }
#endif

}  // namespace detail

tf_status BlockedLayout::check_params(uint32_t k, uint32_t l, uint64_t slice_bits) {
    if (k == 0 || l == 0 || uint64_t(k) + l > kBlockedMaxSlices)
        return fail(TF_ERR_INVALID_ARGUMENT, "blocked layout needs k >= 1, l >= 1 and k + l <= %u, got k = %u, l = %u",
                    kBlockedMaxSlices, k, l);
    if (slice_bits < kLaneBits)
        return fail(TF_ERR_INVALID_ARGUMENT, "slice_bits must be >= %u, got %llu", kLaneBits,
                    (unsigned long long)slice_bits);
    if (slice_bits > kBlockedMaxBlocks * kLaneBits)
        return fail(TF_ERR_TOO_LARGE, "slice_bits must be <= 2^40, got %llu", (unsigned long long)slice_bits);
    return TF_OK;
}

uint64_t BlockedLayout::slice_bits_for(uint32_t k, uint64_t generation, double fill) {
    // k generations of g inserts leave a slice at fill rho.
    const double bits = std::ceil(double(k) * double(generation) / -std::log1p(-fill));
    const double blocks = std::ceil(bits / kLaneBits);
    return blocks > double(kBlockedMaxBlocks) ? 0 : uint64_t(blocks) * kLaneBits;
}

namespace {
// The bytes allocated for `lines` lines: one more line, so that a two-line
// block can start on a 128-byte boundary (the CPU's adjacent-line prefetch
// then brings its second line with the first). lines <= 2 * 2^35: no
// overflow in 64 bits; std::bad_alloc when the bytes do not fit a size_t
// (a 32-bit build), as the classic layout's slices.
size_t lines_allocation(uint64_t lines) {
    const uint64_t bytes = lines * kCacheLine + kCacheLine;
    if (uint64_t(size_t(bytes)) != bytes) throw std::bad_alloc();  // beyond a 32-bit build's size_t
    return size_t(bytes);
}

}  // namespace

void BlockedLayout::allocate() {
    slots_ = k_ + l_;
    bands_ = (slots_ + kLanes - 1) / kLanes;
    stride_ = bands_ * kLanes;
    ZeroedBlock block(lines_allocation(uint64_t(bands_) * blocks_));
    mem_.swap(block);
    const uintptr_t at = reinterpret_cast<uintptr_t>(mem_.data());
    words_ = reinterpret_cast<uint32_t *>((at + 2 * kCacheLine - 1) & ~uintptr_t(2 * kCacheLine - 1));
    avx2_ = detail::cpu_has_avx2();
    detail::run_shifts(k_, run_shift_);
}

BlockedLayout::BlockedLayout(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, Ring *ring)
    : k_(k), l_(l), seed_(seed), blocks_(slice_bits / kLaneBits) {
    allocate();
    // slices 0 .. S-1 in slots 0 .. S-1; s_0 is the last
    ring->reserve(slots_);
    for (uint32_t s = 0; s < slots_; ++s) ring->open(NoSlot());
    set_top(uint32_t(ring->slot_of(0)));
}

__attribute__((always_inline)) inline void BlockedLayout::locate(const void *key, size_t len, Probe *p) const {
    // One 128-bit MurmurHash3 (whose second word key_hash re-mixes): the
    // block from the high bits of h1, then a byte per slot whose low 5 bits
    // are the key's bit in that slot's lane, from h2 and, for more than 8
    // slots, from further mixes of the two.
    const Hash128 h = key_hash(key, len, seed_);
    p->line[0] = words_ + reduce(h.h1, blocks_) * stride_;
    p->line[1] = p->line[0] + kLanes;
    prefetch_read(p->line[0]);
    if (bands_ > 1) prefetch_read(p->line[1]);
    const uint64_t low5 = 0x1f1f1f1f1f1f1f1full;
    p->pos[0] = h.h2 & low5;
    p->pos[1] = tf::detail::fmix64(h.h1 ^ 0xc2b2ae3d27d4eb4full) & low5;
    p->pos[2] = p->pos[3] = 0;
    if (bands_ > 1) {
        p->pos[2] = tf::detail::fmix64(h.h2 ^ 0x165667b19e3779f9ull) & low5;
        p->pos[3] = tf::detail::fmix64(h.h1 + h.h2) & low5;
    }
}

uint32_t BlockedLayout::slot_bits(const Probe &p) const {
    uint32_t m = detail::lane_bits_scalar(p.line[0], p.pos[0], p.pos[1]);
    if (bands_ > 1) m |= detail::lane_bits_scalar(p.line[1], p.pos[2], p.pos[3]) << kLanes;
    return m;
}

#ifdef TF_HAVE_X86
// The AVX2 paths, in one function each so that the gathers and the hash
// inline together.
__attribute__((target("avx2"))) bool BlockedLayout::contains_avx2(const void *key, size_t len) const {
    Probe p;
    locate(key, len, &p);
    uint32_t m = detail::gather_avx2(p.line[0], p.pos[0], p.pos[1]);
    if (bands_ > 1) m |= detail::gather_avx2(p.line[1], p.pos[2], p.pos[3]) << kLanes;
    return in_age_order_has_run(m);
}

__attribute__((target("avx2"))) bool BlockedLayout::add_if_absent_avx2(Ring &ring, const void *key, size_t len) {
    Probe p;
    locate(key, len, &p);
    uint32_t m = detail::gather_avx2(p.line[0], p.pos[0], p.pos[1]);
    if (bands_ > 1) m |= detail::gather_avx2(p.line[1], p.pos[2], p.pos[3]) << kLanes;
    if (in_age_order_has_run(m)) return true;
    if (ring.full()) rotate(ring);
    detail::scatter_avx2(p.line[0], p.pos[0], p.pos[1], young_ & 0xffffu);
    if (bands_ > 1) detail::scatter_avx2(p.line[1], p.pos[2], p.pos[3], young_ >> kLanes);
    ring.count_insert();
    return false;
}
__attribute__((target("avx2"))) void BlockedLayout::add_avx2(Ring &ring, const void *key, size_t len) {
    Probe p;
    locate(key, len, &p);
    if (ring.full()) rotate(ring);
    detail::scatter_avx2(p.line[0], p.pos[0], p.pos[1], young_ & 0xffffu);
    if (bands_ > 1) detail::scatter_avx2(p.line[1], p.pos[2], p.pos[3], young_ >> kLanes);
    ring.count_insert();
}
#else
void BlockedLayout::add_avx2(Ring &ring, const void *key, size_t len) { add(ring, key, len); }
bool BlockedLayout::contains_avx2(const void *key, size_t len) const {
    Probe p;
    locate(key, len, &p);
    return in_age_order_has_run(slot_bits(p));
}
bool BlockedLayout::add_if_absent_avx2(Ring &ring, const void *key, size_t len) {
    return add_if_absent(ring, key, len);
}
#endif

bool BlockedLayout::in_age_order_has_run(uint64_t m) const {
    return detail::ring_has_run(m, slots_, run_shift_, valid_);
}

void BlockedLayout::set_top(uint32_t top) {
    young_ = 0;
    uint32_t s = top;
    for (uint32_t i = 0; i < k_; ++i) {
        young_ |= uint32_t(1) << s;
        s = s == 0 ? slots_ - 1 : s - 1;
    }
    valid_ = detail::run_starts(slots_, k_, top);
}

void BlockedLayout::insert(Ring &ring, const Probe &p) {
    // The k newest slices: slots top, top - 1, ... (mod S).
    detail::lane_set_scalar(p.line[0], p.pos[0], p.pos[1], young_ & 0xffffu);
    if (bands_ > 1) detail::lane_set_scalar(p.line[1], p.pos[2], p.pos[3], young_ >> kLanes);
    ring.count_insert();
}

void BlockedLayout::rotate(Ring &ring) {
    // The oldest slice (slot top + 1) is recycled as the newest.
    ring.recycle(0, ring.period());
    const uint32_t top = uint32_t(ring.slot_of(0));
    set_top(top);
    for (uint64_t b = 0; b < blocks_; ++b) words_[b * stride_ + top] = 0;
}

void BlockedLayout::add(Ring &ring, const void *key, size_t len) {
    if (avx2_) return add_avx2(ring, key, len);
    Probe p;
    locate(key, len, &p);
    if (ring.full()) rotate(ring);
    insert(ring, p);
}

bool BlockedLayout::contains(const Ring &, const void *key, size_t len) const {
    if (avx2_) return contains_avx2(key, len);
    Probe p;
    locate(key, len, &p);
    return in_age_order_has_run(slot_bits(p));
}

bool BlockedLayout::add_if_absent(Ring &ring, const void *key, size_t len) {
    if (avx2_) return add_if_absent_avx2(ring, key, len);
    Probe p;
    locate(key, len, &p);
    if (in_age_order_has_run(slot_bits(p))) return true;
    if (ring.full()) rotate(ring);
    insert(ring, p);
    return false;
}

void BlockedLayout::clear(Ring &ring) {
    std::memset(words_, 0, size_t(uint64_t(bands_) * blocks_ * kCacheLine));
    ring.clear();
}

TF_NO_FUZZ_COVERAGE double BlockedLayout::expected_fpr(const Ring &ring) const {
    // Measured fill f of each slot; the lane load whose expected fill is f
    // is -32 ln(1 - f). A full slot (f = 1) has an unbounded load: it sets
    // every bit, so it is given a load at which the model's fill rounds to 1.
    uint64_t set[kBlockedMaxSlices] = {0};
    for (uint64_t j = 0; j < blocks_; ++j) {
        const uint32_t *block = words_ + j * stride_;
        for (uint32_t s = 0; s < slots_; ++s) set[s] += uint64_t(__builtin_popcount(block[s]));
    }
    double load[kBlockedMaxSlices];
    const double bits = double(blocks_) * kLaneBits;
    for (uint32_t i = 0; i < slots_; ++i) {
        const double f = double(set[ring.slot_of(i)]) / bits;  // age i
        load[i] = f >= 1.0 ? 4000.0 : -double(kLaneBits) * std::log1p(-f);
    }
    return blocked_false_positive_model(k_, load, slots_);
}

// Payload (kind 2 with flag kBlockedWireFlag), little-endian, field by field
// (docs/wire-format.md):
//
//   offset  size         field
//   0       4            k
//   4       4            l
//   8       4            seed
//   12      4            reserved, 0
//   16      8            blocks: 32-bit lanes per slice (slice bits / 32)
//   24      8            generation g
//   32      8            until_shift: inserts left in the current generation
//   40      8            gen_inserts: inserts made in it (until_shift +
//                        gen_inserts = g)
//   48      8            inserts since creation or clear
//   56      8            next_serial: the slices ever made; s_0, the newest,
//                        is slot (next_serial - 1) mod (k + l)
//   64      64 L         the L = blocks * ceil((k + l) / 16) lines: the
//                        blocks in order, each its bands' lines (one line
//                        for k + l <= 16, two otherwise) whose 16 lanes are
//                        slots 16 b .. 16 b + 15; each 64-bit word holds
//                        lanes 2i (low half) and 2i + 1 (high half); lanes
//                        of slots >= k + l are 0.
namespace {
constexpr size_t kBlockedHeader = 4 * 4 + 6 * 8;
}

size_t BlockedLayout::payload_size(const Ring &) const {
    return kBlockedHeader + size_t(uint64_t(bands_) * blocks_ * kCacheLine);
}

void BlockedLayout::write_payload(const Ring &ring, wire::Writer &w) const {
    const RingCounters &c = ring.counters();
    w.u32(k_);
    w.u32(l_);
    w.u32(seed_);
    w.u32(0);
    for (uint64_t v : {blocks_, ring.period(), c.budget, c.current, c.inserts, c.next_serial}) w.u64(v);
    const uint64_t lines = uint64_t(bands_) * blocks_;
    uint64_t buf[kLanes / 2];
    for (uint64_t i = 0; i < lines; ++i) {
        const uint32_t *line = words_ + i * kLanes;
        for (uint32_t j = 0; j < kLanes / 2; ++j) buf[j] = uint64_t(line[2 * j]) | (uint64_t(line[2 * j + 1]) << 32);
        w.u64_array(buf, kLanes / 2);
    }
}

namespace {
const char *const kBlockedWhat = "blocked age-partitioned Bloom filter";

// The payload's header (offsets 0-63), validated.
tf_status read_blocked_header(wire::Reader &r, uint32_t *k, uint32_t *l, uint32_t *seed, uint64_t *blocks,
                              uint64_t *generation, RingCounters *c) {
    const char *what = kBlockedWhat;
    *k = r.u32();
    *l = r.u32();
    *seed = r.u32();
    const uint32_t reserved = r.u32();
    for (uint64_t *v : {blocks, generation, &c->budget, &c->current, &c->inserts, &c->next_serial}) *v = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s payload too short for its header", what);
    if (reserved != 0) return fail(TF_ERR_CORRUPT, "%s blob has a nonzero reserved field", what);
    if (*k == 0 || *l == 0 || uint64_t(*k) + *l > kBlockedMaxSlices)
        return fail(TF_ERR_CORRUPT, "%s blob has k = %u, l = %u", what, *k, *l);
    if (*blocks == 0 || *blocks > kBlockedMaxBlocks)
        return fail(TF_ERR_CORRUPT, "%s blob has %llu blocks", what, (unsigned long long)*blocks);
    // A generation fills a slice's k generations to at most 90% (the
    // constructors stay below ln 2 * bits / k, or ln 10 * bits / k).
    const double max_gen = std::log(10.0) * double(*blocks) * kLaneBits / double(*k) + 1.0;
    if (*generation == 0 || double(*generation) > max_gen || c->budget > *generation)
        return fail(TF_ERR_CORRUPT, "%s blob has an invalid generation", what);
    // next_serial counts the slices ever made: at least k + l, and far from
    // wrapping (one rotation per insert would take 2^62 inserts).
    if (c->current > c->inserts || c->current + c->budget != *generation || c->next_serial < uint64_t(*k) + *l ||
        c->next_serial >= (uint64_t(1) << 62))
        return fail(TF_ERR_CORRUPT, "%s blob has inconsistent counters", what);
    return TF_OK;
}

// The lines that follow: exactly `lines` of them, and the lanes of slots
// >= k + l all 0 (read from a copy of the reader: nothing is allocated).
tf_status check_blocked_lines(wire::Reader r, uint32_t slots, uint32_t bands, uint64_t lines) {
    const char *what = kBlockedWhat;
    if (lines > r.remaining() / kCacheLine || r.remaining() != lines * kCacheLine)
        return fail(TF_ERR_CORRUPT, "%s blob holds %zu bytes of lines, needs %llu", what, r.remaining(),
                    (unsigned long long)(lines * kCacheLine));
    if (slots % kLanes == 0) return TF_OK;
    uint64_t buf[kLanes / 2];
    const uint32_t last_band = bands - 1, used = slots - last_band * kLanes;
    for (uint64_t i = 0; i < lines; ++i) {
        r.u64_array(buf, kLanes / 2);
        if (i % bands != last_band) continue;
        for (uint32_t j = used; j < kLanes; ++j)
            if (uint32_t(buf[j / 2] >> (32 * (j % 2))) != 0)
                return fail(TF_ERR_CORRUPT, "%s blob sets bits in an unused lane", what);
    }
    return TF_OK;
}
}  // namespace

tf_status BlockedLayout::read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, BlockedLayout *out,
                              Ring *ring) {
    BlockedLayout f;
    uint64_t generation = 0;
    RingCounters c;
    tf_status st = read_blocked_header(r, &f.k_, &f.l_, &f.seed_, &f.blocks_, &generation, &c);
    if (st != TF_OK) return st;
    const uint32_t slots = f.k_ + f.l_, bands = (slots + kLanes - 1) / kLanes;
    const uint64_t lines = uint64_t(bands) * f.blocks_;
    st = check_blocked_lines(r, slots, bands, lines);
    if (st != TF_OK) return st;
    st = limits.check_memory(uint64_t(overhead) + slots * sizeof(Ring::Gen) +
                             ZeroedBlock::footprint_for(lines_allocation(lines)));
    if (st != TF_OK) return st;
    Ring restored(Rotation::Count, generation, 0, 1);
    restored.restore_fixed(slots, c);
    f.allocate();
    f.set_top(uint32_t(restored.slot_of(0)));
    uint64_t buf[kLanes / 2];
    for (uint64_t i = 0; i < lines; ++i) {
        r.u64_array(buf, kLanes / 2);
        uint32_t *line = f.words_ + i * kLanes;
        for (uint32_t j = 0; j < kLanes; ++j) line[j] = uint32_t(buf[j / 2] >> (32 * (j % 2)));
    }
    if (!r.done()) return fail(TF_ERR_INTERNAL, "%s payload read failed", kBlockedWhat);
    *out = std::move(f);
    *ring = std::move(restored);
    return TF_OK;
}

}  // namespace bloom
}  // namespace tf
