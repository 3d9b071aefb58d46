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

#include "common/hash.hpp"

namespace tf {
namespace bloom {

namespace {
// Quantiles per evaluation of the model: the U-average is a midpoint rule
// over this many strata of equal probability.
constexpr uint32_t kStrata = 48;
constexpr double kMinFill = 0.1;

// The midpoint quantiles of Poisson(lambda) for the kStrata strata.
void poisson_quantiles(double lambda, uint32_t *out) {
    double p = std::exp(-lambda), cdf = p;
    uint32_t x = 0;
    const uint32_t xmax = uint32_t(lambda * 10.0) + 200;
    for (uint32_t t = 0; t < kStrata; ++t) {
        const double u = (t + 0.5) / kStrata;
        while (cdf < u && x < xmax) {
            ++x;
            p *= lambda / x;
            cdf += p;
        }
        out[t] = x;
    }
}

// Probability of a run of k among independent bits with probabilities r[].
double run_probability(uint32_t k, const double *r, uint32_t n) {
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
}  // namespace

double blocked_false_positive_model(uint32_t k, const double *load, uint32_t slices) {
    if (k == 0 || slices == 0 || slices > kBlockedMaxSlices || k > slices) return 0.0;
    static thread_local uint32_t q[kBlockedMaxSlices][kStrata];
    for (uint32_t i = 0; i < slices; ++i) poisson_quantiles(std::max(0.0, load[i]), q[i]);
    const double miss = 1.0 - 1.0 / kLaneBits;
    double sum = 0.0, r[kBlockedMaxSlices];
    for (uint32_t t = 0; t < kStrata; ++t) {
        for (uint32_t i = 0; i < slices; ++i) r[i] = 1.0 - std::pow(miss, double(q[i][t]));
        sum += run_probability(k, r, slices);
    }
    return sum / kStrata;
}

double blocked_steady_false_positive_model(uint32_t k, uint32_t l, double rho) {
    const uint32_t s = k + l;
    if (k == 0 || l == 0 || s > kBlockedMaxSlices || !(rho > 0.0 && rho < 1.0)) return 1.0;
    const double full = -double(kLaneBits) * std::log1p(-rho);
    double load[kBlockedMaxSlices];
    for (uint32_t i = 0; i < s; ++i) load[i] = full * double(std::min(i + 1, k)) / double(k);
    return blocked_false_positive_model(k, load, s);
}

tf_status choose_blocked(double target, uint32_t *k_out, uint32_t *l_out, double *rho_out) {
    if (!(target > 0.0 && target < 1.0))
        return fail(TF_ERR_INVALID_ARGUMENT, "error rate must be in (0, 1), got %g", target);
    double best = std::numeric_limits<double>::infinity();
    uint32_t bk = 0, bl = 0;
    double brho = 0.0;
    for (uint32_t s : {kLanes, 2 * kLanes}) {
        for (uint32_t k = 1; k < s; ++k) {
            const uint32_t l = s - k;
            // The rate rises with rho: bisect for the fullest slices that
            // meet the target.
            // Fills below 10% would cost over 7x the classic layout's
            // memory: such targets are for the classic layout.
            double lo = kMinFill, hi = 0.9;
            if (blocked_steady_false_positive_model(k, l, lo) > target) continue;
            for (int it = 0; it < 20; ++it) {
                const double mid = 0.5 * (lo + hi);
                (blocked_steady_false_positive_model(k, l, mid) <= target ? lo : hi) = mid;
            }
            const double bpe = double(s) * k / (double(l) * -std::log1p(-lo));
            if (bpe < best - 1e-9) best = bpe, bk = k, bl = l, brho = lo;
        }
    }
    if (bk == 0) return fail(TF_ERR_TOO_LARGE, "no blocked (k, l) with k + l <= 32 meets error rate %g", target);
    *k_out = bk;
    *l_out = bl;
    *rho_out = brho;
    return TF_OK;
}

namespace detail {

uint32_t lane_bits_scalar(const uint32_t *line, const uint8_t *pos) {
    uint32_t m = 0;
    for (uint32_t s = 0; s < kLanes; ++s) m |= ((line[s] >> pos[s]) & 1u) << s;
    return m;
}

void lane_set_scalar(uint32_t *line, const uint8_t *pos, uint32_t select) {
    for (uint32_t s = 0; s < kLanes; ++s)
        if (select >> s & 1) line[s] |= uint32_t(1) << pos[s];
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
__attribute__((target("avx2"))) uint32_t lane_bits_avx2(const uint32_t *line, const uint8_t *pos) {
    uint64_t w[2];
    std::memcpy(w, pos, sizeof w);
    return gather_avx2(line, w[0], w[1]);
}
__attribute__((target("avx2"), always_inline)) inline void scatter_avx2(uint32_t *line, uint64_t pos_lo, uint64_t pos_hi,
                                                                       uint32_t select) {
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
__attribute__((target("avx2"))) void lane_set_avx2(uint32_t *line, const uint8_t *pos, uint32_t select) {
    uint64_t w[2];
    std::memcpy(w, pos, sizeof w);
    scatter_avx2(line, w[0], w[1], select);
}
bool cpu_has_avx2() {
    // TF_NO_AVX2=1 in the environment selects the portable code (the tests
    // run both; the answers and blobs are the same).
    const char *off = std::getenv("TF_NO_AVX2");
    if (off != nullptr && off[0] != '\0' && std::strcmp(off, "0") != 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
#else
uint32_t lane_bits_avx2(const uint32_t *line, const uint8_t *pos) { return lane_bits_scalar(line, pos); }
void lane_set_avx2(uint32_t *line, const uint8_t *pos, uint32_t select) { lane_set_scalar(line, pos, select); }
bool cpu_has_avx2() { return false; }
#endif

}  // namespace detail

tf_status BlockedAgeBloom::check_params(uint32_t k, uint32_t l, uint64_t slice_bits) {
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

void BlockedAgeBloom::allocate() {
    slots_ = k_ + l_;
    bands_ = (slots_ + kLanes - 1) / kLanes;
    stride_ = bands_ * kLanes;
    const uint64_t lines = uint64_t(bands_) * blocks_;  // <= 2 * 2^35: no overflow below
    // A two-line block starts on a 128-byte boundary, so that the CPU's
    // adjacent-line prefetch brings its second line with the first.
    ZeroedBlock block(size_t(lines * kCacheLine + kCacheLine));
    mem_.swap(block);
    const uintptr_t at = reinterpret_cast<uintptr_t>(mem_.data());
    words_ = reinterpret_cast<uint32_t *>((at + 2 * kCacheLine - 1) & ~uintptr_t(2 * kCacheLine - 1));
    avx2_ = detail::cpu_has_avx2();
    // A run of k: runs of 1, 2, 4, ... by doubling, then the rest (unused
    // steps shift by 0, which changes nothing).
    uint32_t len = 1, i = 0;
    for (uint8_t &sh : run_shift_) sh = 0;
    while (2 * len <= k_) {
        run_shift_[i++] = uint8_t(len);
        len *= 2;
    }
    if (len < k_) run_shift_[i] = uint8_t(k_ - len);
}

BlockedAgeBloom::BlockedAgeBloom(uint32_t k, uint32_t l, uint64_t blocks, uint64_t generation, uint32_t seed)
    : k_(k), l_(l), seed_(seed), blocks_(blocks), generation_(generation) {
    allocate();
    next_serial_ = slots_;  // slices 0 .. S-1 in slots 0 .. S-1; s_0 is the last
    set_top(slots_ - 1);
    until_shift_ = generation_;
}

__attribute__((always_inline)) inline void BlockedAgeBloom::locate(const void *key, size_t len, Probe *p) const {
    // One 128-bit MurmurHash3 (whose second word key_hash re-mixes): the
    // block from the high bits of h1, then a byte per slot whose low 5 bits
    // are the key's bit in that slot's lane, from h2 and, for more than 8
    // slots, from further mixes of the two.
    const Hash128 h = key_hash(key, len, seed_);
    p->line[0] = words_ + reduce(h.h1, blocks_) * stride_;
    p->line[1] = p->line[0] + kLanes;
    __builtin_prefetch(p->line[0]);
    if (bands_ > 1) __builtin_prefetch(p->line[1]);
    const uint64_t low5 = 0x1f1f1f1f1f1f1f1full;
    p->pos[0] = h.h2 & low5;
    p->pos[1] = tf::detail::fmix64(h.h1 ^ 0xc2b2ae3d27d4eb4full) & low5;
    p->pos[2] = p->pos[3] = 0;
    if (bands_ > 1) {
        p->pos[2] = tf::detail::fmix64(h.h2 ^ 0x165667b19e3779f9ull) & low5;
        p->pos[3] = tf::detail::fmix64(h.h1 + h.h2) & low5;
    }
}

namespace {
// Byte s of the little-endian words pos[] (slot s's bit position).
inline uint8_t pos_byte(const uint64_t *pos, uint32_t s) { return uint8_t(pos[s / 8] >> (8 * (s % 8))); }
}  // namespace

uint32_t BlockedAgeBloom::slot_bits(const Probe &p) const {
    uint32_t m = 0;
    for (uint32_t s = 0; s < slots_; ++s) m |= ((p.line[s / kLanes][s % kLanes] >> pos_byte(p.pos, s)) & 1u) << s;
    return m;
}

#ifdef TF_HAVE_X86
// The AVX2 paths, in one function each so that the gathers and the hash
// inline together.
__attribute__((target("avx2"))) bool BlockedAgeBloom::contains_avx2(const void *key, size_t len) const {
    Probe p;
    locate(key, len, &p);
    uint32_t m = detail::gather_avx2(p.line[0], p.pos[0], p.pos[1]);
    if (bands_ > 1) m |= detail::gather_avx2(p.line[1], p.pos[2], p.pos[3]) << kLanes;
    return in_age_order_has_run(m);
}

__attribute__((target("avx2"))) bool BlockedAgeBloom::add_if_absent_avx2(const void *key, size_t len) {
    Probe p;
    locate(key, len, &p);
    uint32_t m = detail::gather_avx2(p.line[0], p.pos[0], p.pos[1]);
    if (bands_ > 1) m |= detail::gather_avx2(p.line[1], p.pos[2], p.pos[3]) << kLanes;
    if (in_age_order_has_run(m)) return true;
    if (until_shift_ == 0) shift();
    detail::scatter_avx2(p.line[0], p.pos[0], p.pos[1], young_ & 0xffffu);
    if (bands_ > 1) detail::scatter_avx2(p.line[1], p.pos[2], p.pos[3], young_ >> kLanes);
    counted_insert();
    return false;
}
__attribute__((target("avx2"))) void BlockedAgeBloom::add_avx2(const void *key, size_t len) {
    Probe p;
    locate(key, len, &p);
    if (until_shift_ == 0) shift();
    detail::scatter_avx2(p.line[0], p.pos[0], p.pos[1], young_ & 0xffffu);
    if (bands_ > 1) detail::scatter_avx2(p.line[1], p.pos[2], p.pos[3], young_ >> kLanes);
    counted_insert();
}
#else
void BlockedAgeBloom::add_avx2(const void *key, size_t len) { add(key, len); }
bool BlockedAgeBloom::contains_avx2(const void *key, size_t len) const { return contains(key, len); }
bool BlockedAgeBloom::add_if_absent_avx2(const void *key, size_t len) { return add_if_absent(key, len); }
#endif

bool BlockedAgeBloom::in_age_order_has_run(uint64_t m) const {
    // The slots in increasing order (mod S) from the oldest (top + 1) are
    // the slices from oldest to newest. In the ring written out twice, bit
    // j + S = bit j, every run of k slices is a run of k bits that starts
    // at a bit of valid_ (top + 1 .. top + 1 + S - k): no run that wraps
    // from the newest slice to the oldest. Bit j of x after the shifts: the
    // k bits from j up are set.
    uint64_t x = m | (m << slots_);
    for (uint8_t sh : run_shift_) x &= x >> sh;
    return (x & valid_) != 0;
}

void BlockedAgeBloom::set_top(uint32_t top) {
    top_ = top;
    young_ = 0;
    uint32_t s = top;
    for (uint32_t i = 0; i < k_; ++i) {
        young_ |= uint32_t(1) << s;
        s = s == 0 ? slots_ - 1 : s - 1;
    }
    const uint32_t oldest = top + 1 == slots_ ? 0 : top + 1;
    valid_ = ((uint64_t(1) << (slots_ - k_ + 1)) - 1) << oldest;
}

void BlockedAgeBloom::insert(const Probe &p) {
    // The k newest slices: slots top, top - 1, ... (mod S).
    for (uint32_t s = 0; s < slots_; ++s)
        if (young_ >> s & 1) p.line[s / kLanes][s % kLanes] |= uint32_t(1) << pos_byte(p.pos, s);
    counted_insert();
}

void BlockedAgeBloom::counted_insert() {
    until_shift_--;
    gen_inserts_++;
    inserts_++;
}

void BlockedAgeBloom::shift() {
    // The oldest slice (slot top + 1) is recycled as the newest.
    set_top(top_ + 1 == slots_ ? 0 : top_ + 1);
    uint32_t *w = words_ + top_;
    for (uint64_t b = 0; b < blocks_; ++b, w += stride_) *w = 0;
    next_serial_++;
    until_shift_ = generation_;
    gen_inserts_ = 0;
}

void BlockedAgeBloom::add(const void *key, size_t len) {
    if (avx2_) return add_avx2(key, len);
    Probe p;
    locate(key, len, &p);
    if (until_shift_ == 0) shift();
    insert(p);
}

bool BlockedAgeBloom::contains(const void *key, size_t len) const {
    if (avx2_) return contains_avx2(key, len);
    Probe p;
    locate(key, len, &p);
    return in_age_order_has_run(slot_bits(p));
}

bool BlockedAgeBloom::add_if_absent(const void *key, size_t len) {
    if (avx2_) return add_if_absent_avx2(key, len);
    Probe p;
    locate(key, len, &p);
    if (in_age_order_has_run(slot_bits(p))) return true;
    if (until_shift_ == 0) shift();
    insert(p);
    return false;
}

void BlockedAgeBloom::clear() {
    std::memset(words_, 0, size_t(uint64_t(bands_) * blocks_ * kCacheLine));
    inserts_ = gen_inserts_ = 0;
    until_shift_ = generation_;
}

double BlockedAgeBloom::expected_fpr() const {
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
        const uint32_t s = (top_ + slots_ - i) % slots_;  // age i
        const double f = double(set[s]) / bits;
        load[i] = f >= 1.0 ? 4000.0 : -double(kLaneBits) * std::log1p(-f);
    }
    return blocked_false_positive_model(k_, load, slots_);
}

// Payload (kind 2 with flag kBlockedWireFlag), little-endian:
//   u32 k, u32 l, u32 seed, u32 reserved (0),
//   u64 blocks, u64 generation, u64 until_shift, u64 gen_inserts,
//   u64 inserts, u64 next_serial,
//   u64 words[blocks * bands * 8]: the blocks in order, each its bands'
//   lines (one line for k + l <= 16, two otherwise) whose 16 lanes are slots
//   16 b .. 16 b + 15; each 64-bit word holds lanes 2i (low half) and
//   2i + 1 (high half); lanes of slots >= k + l are 0.
namespace {
constexpr size_t kBlockedHeader = 4 * 4 + 6 * 8;
}

size_t BlockedAgeBloom::payload_size() const {
    return kBlockedHeader + size_t(uint64_t(bands_) * blocks_ * kCacheLine);
}

void BlockedAgeBloom::write_payload(wire::Writer &w) const {
    w.u32(k_);
    w.u32(l_);
    w.u32(seed_);
    w.u32(0);
    for (uint64_t v : {blocks_, generation_, until_shift_, gen_inserts_, inserts_, next_serial_}) w.u64(v);
    const uint64_t lines = uint64_t(bands_) * blocks_;
    uint64_t buf[kLanes / 2];
    for (uint64_t i = 0; i < lines; ++i) {
        const uint32_t *line = words_ + i * kLanes;
        for (uint32_t j = 0; j < kLanes / 2; ++j) buf[j] = uint64_t(line[2 * j]) | (uint64_t(line[2 * j + 1]) << 32);
        w.u64_array(buf, kLanes / 2);
    }
}

tf_status BlockedAgeBloom::read(wire::Reader &r, std::unique_ptr<BlockedAgeBloom> *out) {
    const char *what = "blocked age-partitioned Bloom filter";
    std::unique_ptr<BlockedAgeBloom> f(new BlockedAgeBloom());
    f->k_ = r.u32();
    f->l_ = r.u32();
    f->seed_ = r.u32();
    const uint32_t reserved = r.u32();
    f->blocks_ = r.u64();
    f->generation_ = r.u64();
    f->until_shift_ = r.u64();
    f->gen_inserts_ = r.u64();
    f->inserts_ = r.u64();
    f->next_serial_ = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s payload too short for its header", what);
    if (reserved != 0) return fail(TF_ERR_CORRUPT, "%s blob has a nonzero reserved field", what);
    if (f->k_ == 0 || f->l_ == 0 || uint64_t(f->k_) + f->l_ > kBlockedMaxSlices)
        return fail(TF_ERR_CORRUPT, "%s blob has k = %u, l = %u", what, f->k_, f->l_);
    if (f->blocks_ == 0 || f->blocks_ > kBlockedMaxBlocks)
        return fail(TF_ERR_CORRUPT, "%s blob has %llu blocks", what, (unsigned long long)f->blocks_);
    // A generation fills a slice's k generations to at most 90% (the
    // constructors stay below ln 2 * bits / k, or ln 10 * bits / k).
    const double max_gen = std::log(10.0) * double(f->blocks_) * kLaneBits / double(f->k_) + 1.0;
    if (f->generation_ == 0 || double(f->generation_) > max_gen || f->until_shift_ > f->generation_)
        return fail(TF_ERR_CORRUPT, "%s blob has an invalid generation", what);
    if (f->gen_inserts_ > f->inserts_ || f->gen_inserts_ + f->until_shift_ != f->generation_ ||
        f->next_serial_ < uint64_t(f->k_) + f->l_)
        return fail(TF_ERR_CORRUPT, "%s blob has inconsistent counters", what);
    const uint32_t slots = f->k_ + f->l_, bands = (slots + kLanes - 1) / kLanes;
    const uint64_t lines = uint64_t(bands) * f->blocks_;
    if (lines > r.remaining() / kCacheLine || r.remaining() != lines * kCacheLine)
        return fail(TF_ERR_CORRUPT, "%s blob holds %zu bytes of lines, needs %llu", what, r.remaining(),
                    (unsigned long long)(lines * kCacheLine));
    f->allocate();
    f->set_top(uint32_t((f->next_serial_ - 1) % slots));
    uint64_t buf[kLanes / 2];
    for (uint64_t i = 0; i < lines; ++i) {
        r.u64_array(buf, kLanes / 2);
        uint32_t *line = f->words_ + i * kLanes;
        const uint32_t band = uint32_t(i % bands);
        for (uint32_t j = 0; j < kLanes; ++j) {
            line[j] = uint32_t(buf[j / 2] >> (32 * (j % 2)));
            if (line[j] != 0 && band * kLanes + j >= slots)
                return fail(TF_ERR_CORRUPT, "%s blob sets bits in an unused lane", what);
        }
    }
    if (!r.done()) return fail(TF_ERR_INTERNAL, "%s payload read failed", what);
    *out = std::move(f);
    return TF_OK;
}

}  // namespace bloom
}  // namespace tf
