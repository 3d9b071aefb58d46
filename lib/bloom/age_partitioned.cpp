#include "bloom/age_partitioned.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

namespace tf {
namespace bloom {

namespace {
const double kLn2 = std::log(2.0);

uint64_t words_for(uint64_t bits) { return (bits + 63) / 64; }

// Bits for a slice of capacity c (fill ratio 1/2 when full, equation 8).
uint64_t bits_for_capacity(double c) {
    double m = std::ceil(c / kLn2);
    if (!(m >= 64.0)) m = 64.0;
    if (m > double(kMaxSliceBits)) m = double(kMaxSliceBits);
    return uint64_t(m);
}
}  // namespace

double Slice::fill() const {
    // The measured fill: set bits / m. (Counting inserts instead would
    // overstate it whenever keys repeat, since a repeat sets no new bit.)
    if (n == 0 || m == 0) return 0.0;
    uint64_t set = 0;
    for (uint64_t w : words) set += uint64_t(__builtin_popcountll(w));
    return double(set) / double(m);
}

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

double steady_false_positive_rate(uint32_t k, uint32_t l) {
    std::vector<double> r(k + l);
    for (uint32_t i = 0; i < k + l; ++i) r[i] = i < k ? 1.0 - std::exp2(-double(i + 1) / double(k)) : 0.5;
    return false_positive_rate(k, r.data(), r.size());
}

double steady_bits_per_element(uint32_t k, uint32_t l) { return double(k + l) * double(k) / (double(l) * kLn2); }

tf_status choose_kl(double target, uint32_t *k_out, uint32_t *l_out) {
    if (!(target > 0.0 && target < 1.0))
        return fail(TF_ERR_INVALID_ARGUMENT, "error rate must be in (0, 1), got %g", target);
    const uint32_t lmax = kMaxL / 4;
    double best = std::numeric_limits<double>::infinity();
    uint32_t bk = 0, bl = 0;
    for (uint32_t k = 1; k <= kMaxK; ++k) {
        // The rate grows with l (more windows of k slices to match in) and
        // the memory falls: the best l for this k is the largest that meets
        // the target.
        if (steady_false_positive_rate(k, 1) > target) continue;
        uint32_t lo = 1, hi = lmax;
        if (steady_false_positive_rate(k, hi) <= target) {
            lo = hi;
        } else {
            while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                (steady_false_positive_rate(k, mid) <= target ? lo : hi) = mid;
            }
        }
        const double bpe = steady_bits_per_element(k, lo);
        if (bpe < best - 1e-12) best = bpe, bk = k, bl = lo;
    }
    if (bk == 0) return fail(TF_ERR_TOO_LARGE, "no (k, l) with k <= %u meets error rate %g", kMaxK, target);
    *k_out = bk;
    *l_out = bl;
    return TF_OK;
}

tf_status AgePartitioned::check_params(uint32_t k, uint32_t l, uint64_t slice_bits) {
    if (k == 0 || k > kMaxK) return fail(TF_ERR_INVALID_ARGUMENT, "k must be in 1..%u, got %u", kMaxK, k);
    if (l == 0 || l > kMaxL) return fail(TF_ERR_INVALID_ARGUMENT, "l must be in 1..%u, got %u", kMaxL, l);
    if (slice_bits < 64)
        return fail(TF_ERR_INVALID_ARGUMENT, "slice_bits must be >= 64, got %llu", (unsigned long long)slice_bits);
    if (slice_bits > kMaxSliceBits)
        return fail(TF_ERR_TOO_LARGE, "slice_bits must be <= 2^40, got %llu", (unsigned long long)slice_bits);
    // (k + l) slices of at most 2^40 bits: at most 2^51 bits, no overflow.
    return TF_OK;
}

AgePartitioned::AgePartitioned(Mode mode, uint32_t k, uint32_t l, uint64_t slice_bits, uint64_t generation,
                               uint64_t span, uint32_t seed)
    : mode_(mode), k_(k), l_(l), seed_(seed), span_(span), generation_(generation) {
    for (uint32_t serial = 0; serial < k + l; ++serial) {  // the oldest first
        Slice s;
        s.m = slice_bits;
        s.words.assign(words_for(slice_bits), 0);
        s.serial = serial;
        s.hidx = serial % k;
        slices_.push_front(std::move(s));
    }
    next_serial_ = k + l;
    until_shift_ = mode == Mode::Count ? generation : next_generation();
}

void AgePartitioned::hashes(const void *key, size_t len, KeyHashes *h) const {
    // The k values come from enhanced double hashing, each passed through one
    // more non-linear mix. Reduced straight to a small slice, the plain
    // sequence h1 + j h2 + ... puts two keys whose (h1, h2) are close in the
    // high bits at the same position of every slice at once, which adds
    // about n / m^2 to the false-positive rate (measured: 1.16% for a 1%
    // target with slices of a few hundred bits); mixed, the slices' bits are
    // independent.
    IndexSequence seq(key_hash(key, len, seed_));
    for (uint32_t j = 0; j < k_; ++j) h->v[j] = detail::fmix64(seq.next_raw());
}

bool AgePartitioned::stale(const Slice &s, uint64_t now) const {
    // Equation 3: retired when t_i < now - t_span.
    return mode_ == Mode::Time && now > span_ && s.t < now - span_;
}

bool AgePartitioned::retirable(size_t i, uint64_t now) const {
    // Equation 3: a slice whose last insert is older than the span holds
    // nothing a query may still find, so it goes, down to the k slices an
    // insert needs (the paper keeps k + l; its conclusion notes k would do,
    // and keeping stale slices would hold the memory of a past burst for
    // ever). The initial slices that never received an insert go too, but
    // only down to k + l, the filter's steady shape.
    const Slice &s = slices_[i];
    if (i < k_) return false;
    if (stale(s, now)) return true;
    return s.t == 0 && i >= size_t(k_) + l_;
}

void AgePartitioned::insert_bits(const KeyHashes &h, uint64_t now) {
    for (uint32_t i = 0; i < k_; ++i) {
        Slice &s = slices_[i];
        if (stale(s, now)) {
            // Everything in a stale slice is older than the span: reuse it
            // empty rather than mix old bits into a live slice.
            std::fill(s.words.begin(), s.words.end(), uint64_t(0));
            s.n = 0;
        }
        s.set(bit_for(s, h));
        s.n++;
        s.t = now;
    }
}

bool AgePartitioned::query(const KeyHashes &h, uint64_t now) const {
    // Section 5.3 / Algorithm 1: from slice S-k upwards count consecutive
    // matches c; on a miss at i, a run of k can only end below i: jump to
    // i - k, keeping the p = c matches just below i.
    const long S = long(slices_.size());
    long i = S - long(k_);
    uint32_t p = 0, c = 0;
    while (i >= 0) {
        const Slice &s = slices_[size_t(i)];
        if (!stale(s, now) && s.test(bit_for(s, h))) {
            ++c;
            ++i;
            if (p + c == k_) return true;
        } else {
            i -= long(k_);
            p = c;
            c = 0;
        }
    }
    return false;
}

void AgePartitioned::add(const void *key, size_t len) {
    KeyHashes h;
    hashes(key, len, &h);
    if (until_shift_ == 0) shift_count();
    insert_bits(h, 0);
    until_shift_--;
    gen_inserts_++;
    inserts_++;
}

bool AgePartitioned::contains(const void *key, size_t len) const {
    KeyHashes h;
    hashes(key, len, &h);
    return query(h, 0);
}

void AgePartitioned::shift_count() {
    Slice s = slices_.take_back();
    std::fill(s.words.begin(), s.words.end(), uint64_t(0));
    s.n = 0;
    s.serial = next_serial_++;
    s.hidx = uint32_t(s.serial % k_);
    slices_.push_front(std::move(s));
    until_shift_ = generation_;
    gen_inserts_ = 0;
}

uint64_t AgePartitioned::next_generation() const {
    // Equations 4-5: slice i (< k) can take m_i ln 2 - n_i more inserts
    // over its k - i remaining generations.
    const uint64_t now = high_water_;
    double g = std::numeric_limits<double>::infinity();
    for (uint32_t i = 0; i < k_ && i < slices_.size(); ++i) {
        const Slice &s = slices_[i];
        const double n = stale(s, now) ? 0.0 : double(s.n);
        const double u = std::floor((double(s.m) * kLn2 - n) / double(k_ - i));
        g = std::min(g, u);
    }
    // A slice already at capacity still lets one insert through per
    // generation: the shifts then move it out of the first k quickly.
    if (!(g >= 1.0)) g = 1.0;
    return uint64_t(std::min(g, 1e18));
}

double AgePartitioned::target_generation(uint64_t now) const {
    // Equation 6: the target generation size tg is the number of inserts the
    // current rate brings in one target period t_span / l. The paper
    // measures the rate over the last generation alone (g inserts in t_s),
    // which divides by zero when a burst fills a generation within one time
    // unit, and reads a short burst as a rate sustained for a whole period
    // (a burst of B at one timestamp then sizes slices for B per unit, and
    // memory grows as B^2). Here the rate is measured over the most recent
    // completed generations that together cover at least one period:
    // tg = inserts / elapsed * period. At a steady rate this is exactly
    // equation 6; a burst counts once, spread over the period; a sustained
    // change is followed within one period. While the history is shorter
    // than a period (a filter's first inserts, or a burst within one time
    // unit) the rate is extrapolated at most kMaxExtrapolation times: slices
    // then grow geometrically with a burst (few slices, so the rate of false
    // positives stays moderate) while memory stays linear in the burst.
    const double period = double(span_) / double(l_);
    double n = double(gen_inserts_);
    uint64_t start = last_shift_;  // start of the generation being closed
    // slices_[i] (i >= 1) owns the generation that ended when slices_[i-1]'s
    // began; it began when slices_[i+1]'s generation ended.
    for (size_t i = 1; double(now - start) < period && i + 1 < slices_.size(); ++i) {
        const Slice &g = slices_[i], &before = slices_[i + 1];
        if (g.own_end == 0 || before.own_end == 0 || before.own_end > start) break;
        n += double(g.owned);
        start = before.own_end;
    }
    const double elapsed = double(now - start);
    const double tg = n * std::min(period / std::max(elapsed, 1.0), kMaxExtrapolation);
    // Generations are whole numbers of inserts: aim at the next whole
    // number, so that slices are sized for exactly that many and equation 4
    // does not round every generation down (at 21.6 inserts per period that
    // made generations of 21 and 4 more slices than l in every span).
    return std::max(std::ceil(tg - 1e-9), 1.0);
}

tf_status AgePartitioned::shift_time(uint64_t now) {
    const double tg = target_generation(now);

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
    std::vector<double> u(k_, std::numeric_limits<double>::infinity());
    for (uint32_t p = 1; p < k_; ++p) {
        const Slice &s = slices_[p - 1];  // before the shift, s_{p-1}
        const double n = stale(s, now) ? 0.0 : double(s.n);
        u[p] = std::max(0.0, (double(s.m) * kLn2 - n) / double(k_ - p));
    }
    // prefix_min[q] = min(u_1..u_q)
    double c0 = 0.0, prefix = std::numeric_limits<double>::infinity();
    std::vector<double> prefix_min(k_, std::numeric_limits<double>::infinity());
    for (uint32_t q = 1; q < k_; ++q) prefix_min[q] = prefix = std::min(prefix, u[q]);
    for (uint32_t t = 0; t < k_; ++t) {
        // at position t, the old slices still in the first k are p <= k-1-t
        const uint32_t q = k_ - 1 - t;
        c0 += std::min(tg, q >= 1 ? prefix_min[q] : std::numeric_limits<double>::infinity());
    }

    // The limit counts the slices that remain once the stale ones retire.
    size_t remaining = slices_.size();
    while (remaining > 0 && retirable(remaining - 1, now)) --remaining;
    if (remaining >= kMaxSlices)
        return fail(TF_ERR_TOO_LARGE, "time-limited filter reached %u slices within its span", kMaxSlices);
    // A new slice is at most kMaxGrowth times the largest slice present, so
    // one shift never allocates more than a bounded multiple of what the
    // filter already holds (a jump in rate is followed over a few shifts).
    uint64_t largest = 64;
    for (const Slice &old : slices_) largest = std::max(largest, old.m);
    const uint64_t cap = std::min<uint64_t>(kMaxSliceBits, largest * kMaxGrowth);
    try {  // allocate before changing anything; push_front changes nothing if it throws
        Slice s;
        s.m = std::min(bits_for_capacity(c0), cap);  // equation 8
        s.words.assign(words_for(s.m), 0);
        s.serial = next_serial_;
        s.hidx = uint32_t(next_serial_ % k_);
        slices_.push_front(std::move(s));
    } catch (const std::bad_alloc &) {
        return fail(TF_ERR_OUT_OF_MEMORY, "out of memory for a new slice of the time-limited filter");
    }
    slices_[1].own_end = now;
    next_serial_++;
    // Equation 3: retire what is older than the span.
    while (retirable(slices_.size() - 1, now)) slices_.pop_back();
    last_shift_ = now;
    gen_inserts_ = 0;
    until_shift_ = next_generation();
    return TF_OK;
}

tf_status AgePartitioned::add_at(const void *key, size_t len, uint64_t now) {
    now = clamp(now);
    KeyHashes h;
    hashes(key, len, &h);
    const uint64_t prev_high = high_water_, prev_last = last_shift_;
    high_water_ = now;
    if (last_shift_ == 0) last_shift_ = now;  // the clock starts at the first insert
    // Equations 4-5 shift when the newest slices have taken their share.
    // A generation also ends once it has lasted a target period (span / l)
    // with at least one insert: otherwise slices sized for a past burst
    // would take their share only after many spans, staying in the first k
    // (never stale, never retired) and holding the burst's memory.
    const bool period_over = gen_inserts_ > 0 && (now - last_shift_) >= span_ / l_;
    if (until_shift_ == 0 || period_over) {
        tf_status st = shift_time(now);
        if (st != TF_OK) {  // nothing changed but these
            high_water_ = prev_high;
            last_shift_ = prev_last;
            return st;
        }
    }
    // Equation 3 between shifts too (one comparison): the oldest slice
    // leaves as soon as it is stale rather than at the next shift.
    if (retirable(slices_.size() - 1, now)) slices_.pop_back();
    insert_bits(h, now);
    until_shift_--;
    gen_inserts_++;
    inserts_++;
    slices_.front().owned++;
    return TF_OK;
}

bool AgePartitioned::contains_at(const void *key, size_t len, uint64_t now) const {
    KeyHashes h;
    hashes(key, len, &h);
    return query(h, clamp(now));
}

void AgePartitioned::clear() {
    for (Slice &s : slices_) {
        std::fill(s.words.begin(), s.words.end(), uint64_t(0));
        s.n = s.t = s.owned = s.own_end = 0;
    }
    inserts_ = gen_inserts_ = 0;
    last_shift_ = 0;
    until_shift_ = mode_ == Mode::Count ? generation_ : next_generation();
}

uint64_t AgePartitioned::total_bits() const {
    uint64_t b = 0;
    for (const Slice &s : slices_) b += s.m;
    return b;
}

uint64_t AgePartitioned::window_elements(uint64_t now) const {
    if (mode_ == Mode::Count) return uint64_t(l_) * generation_;
    now = clamp(now);
    if (now <= span_) return inserts_;
    // Each generation's inserts are owned by the slice that was s_0 then,
    // between the end of the previous generation and its own end; the
    // inserts are taken as spread evenly over that interval, and counted in
    // the part of it that lies within the span.
    const double cutoff = double(now - span_);
    double n = 0.0;
    for (size_t i = 0; i < slices_.size(); ++i) {
        const Slice &s = slices_[i];
        if (s.owned == 0) continue;
        const double end = double(i == 0 ? high_water_ : s.own_end);
        const double start =
            i + 1 < slices_.size() && slices_[i + 1].own_end != 0 ? double(slices_[i + 1].own_end) : end;
        if (end < cutoff) continue;
        const double frac = end > start ? std::min(1.0, (end - cutoff) / (end - start)) : 1.0;
        n += frac * double(s.owned);
    }
    return uint64_t(std::llround(n));
}

double AgePartitioned::expected_fpr(uint64_t now) const {
    now = clamp(now);
    std::vector<double> r(slices_.size());
    for (size_t i = 0; i < slices_.size(); ++i) r[i] = stale(slices_[i], now) ? 0.0 : slices_[i].fill();
    return false_positive_rate(k_, r.data(), r.size());
}

size_t AgePartitioned::memory() const {
    size_t b = sizeof(*this);
    for (const Slice &s : slices_) b += sizeof(Slice) + s.words.capacity() * sizeof(uint64_t);
    return b;
}

// Payload (kinds 2 and 3), little-endian:
//   u32 k, u32 l, u32 seed, u32 slice count S,
//   u64 span, u64 generation, u64 until_shift, u64 gen_inserts,
//   u64 last_shift, u64 high_water, u64 inserts, u64 next_serial,
//   S times: u64 m, u64 n, u64 t, u64 serial, u64 owned, u64 own_end,
//            u64 words[ceil(m / 64)]
// (s_0 first).
namespace {
constexpr size_t kHeaderBytes = 4 * 4 + 8 * 8;
constexpr size_t kSliceHeaderBytes = 6 * 8;
}  // namespace

size_t AgePartitioned::payload_size() const {
    size_t n = kHeaderBytes;
    for (const Slice &s : slices_) n += kSliceHeaderBytes + s.words.size() * 8;
    return n;
}

void AgePartitioned::write_payload(wire::Writer &w) const {
    w.u32(k_);
    w.u32(l_);
    w.u32(seed_);
    w.u32(uint32_t(slices_.size()));
    for (uint64_t v :
         {span_, generation_, until_shift_, gen_inserts_, last_shift_, high_water_, inserts_, next_serial_})
        w.u64(v);
    for (size_t i = 0; i < slices_.size(); ++i) {  // s_0 first
        const Slice &s = slices_[i];
        for (uint64_t v : {s.m, s.n, s.t, s.serial, s.owned, s.own_end}) w.u64(v);
        w.u64_array(s.words.data(), s.words.size());
    }
}

tf_status AgePartitioned::read(Mode mode, wire::Reader &r, const DeserializeLimits &limits, size_t overhead,
                               std::unique_ptr<AgePartitioned> *out) {
    const char *what = mode == Mode::Count ? "age-partitioned Bloom filter" : "time-limited Bloom filter";
    std::unique_ptr<AgePartitioned> f(new AgePartitioned());
    f->mode_ = mode;
    f->k_ = r.u32();
    f->l_ = r.u32();
    f->seed_ = r.u32();
    const uint32_t count = r.u32();
    f->span_ = r.u64();
    f->generation_ = r.u64();
    f->until_shift_ = r.u64();
    f->gen_inserts_ = r.u64();
    f->last_shift_ = r.u64();
    f->high_water_ = r.u64();
    f->inserts_ = r.u64();
    f->next_serial_ = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s payload too short for its header", what);
    if (f->k_ == 0 || f->k_ > kMaxK || f->l_ == 0 || f->l_ > kMaxL)
        return fail(TF_ERR_CORRUPT, "%s blob has k = %u, l = %u", what, f->k_, f->l_);
    if (f->gen_inserts_ > f->inserts_)
        return fail(TF_ERR_CORRUPT, "%s blob has a generation counter above its insert count", what);
    const size_t base = size_t(f->k_) + f->l_;
    if (mode == Mode::Count) {
        if (count != base) return fail(TF_ERR_CORRUPT, "%s blob has %u slices, k + l = %zu", what, count, base);
        if (f->generation_ == 0 || f->until_shift_ > f->generation_ || f->span_ != 0 || f->high_water_ != 0 ||
            f->last_shift_ != 0)
            return fail(TF_ERR_CORRUPT, "%s blob has an invalid generation or clock", what);
    } else {
        if (count < f->k_ || count > kMaxSlices)
            return fail(TF_ERR_CORRUPT, "%s blob has %u slices (k = %u)", what, count, f->k_);
        if (f->span_ < f->l_) return fail(TF_ERR_CORRUPT, "%s blob has a span shorter than l", what);
        if (f->last_shift_ > f->high_water_)
            return fail(TF_ERR_CORRUPT, "%s blob has its last shift in the future", what);
    }
    // Validate every slice header and the total size before allocating.
    {
        // what memory() will report: the words of every slice, counted here
        uint64_t need = uint64_t(overhead) + sizeof(AgePartitioned) + uint64_t(count) * sizeof(Slice);
        wire::Reader probe = r;
        uint64_t prev_serial = 0;
        for (uint32_t i = 0; i < count; ++i) {
            const uint64_t m = probe.u64(), n = probe.u64(), t = probe.u64(), serial = probe.u64();
            const uint64_t probe_owned = probe.u64(), probe_own_end = probe.u64();
            if (!probe.ok()) return fail(TF_ERR_CORRUPT, "%s blob ends inside slice %u", what, i);
            if (m < 64 || m > kMaxSliceBits)
                return fail(TF_ERR_CORRUPT, "%s blob: slice %u has %llu bits", what, i, (unsigned long long)m);
            if (t > f->high_water_) return fail(TF_ERR_CORRUPT, "%s blob: slice %u is newer than the clock", what, i);
            // s_0 has the highest serial and serials fall by one per slice
            if (serial >= f->next_serial_ || (i > 0 && serial + 1 != prev_serial))
                return fail(TF_ERR_CORRUPT, "%s blob: slice %u has serial %llu out of order", what, i,
                            (unsigned long long)serial);
            const uint64_t owned = probe_owned, own_end = probe_own_end;
            if (n > f->inserts_ || owned > f->inserts_)
                return fail(TF_ERR_CORRUPT, "%s blob: slice %u counts more inserts than the filter", what, i);
            if (own_end > f->high_water_ || (mode == Mode::Count && (t != 0 || own_end != 0)))
                return fail(TF_ERR_CORRUPT, "%s blob: slice %u has an invalid time", what, i);
            prev_serial = serial;
            const uint64_t words = words_for(m);
            if (words > probe.remaining() / 8)
                return fail(TF_ERR_CORRUPT, "%s blob: slice %u needs %llu bytes, %zu left", what, i,
                            (unsigned long long)(words * 8), probe.remaining());
            probe.view(size_t(words * 8));
            need += words * 8;
        }
        if (!probe.done())
            return fail(TF_ERR_CORRUPT, "%s blob has %zu trailing payload bytes", what, probe.remaining());
        tf_status st = limits.check_memory(need);
        if (st != TF_OK) return st;
    }
    uint64_t first_m = 0;
    std::vector<Slice> newest_first;
    newest_first.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        Slice s;
        s.m = r.u64();
        s.n = r.u64();
        s.t = r.u64();
        s.serial = r.u64();
        s.owned = r.u64();
        s.own_end = r.u64();
        if (mode == Mode::Count) {
            if (i == 0) first_m = s.m;
            if (s.m != first_m) return fail(TF_ERR_CORRUPT, "%s blob: slices differ in size", what);
        }
        s.words.resize(words_for(s.m));
        r.u64_array(s.words.data(), s.words.size());
        // bits beyond m in the last word must be clear
        if (s.m % 64 != 0 && (s.words.back() >> (s.m % 64)) != 0)
            return fail(TF_ERR_CORRUPT, "%s blob: slice %u sets bits beyond its size", what, i);
        s.hidx = uint32_t(s.serial % f->k_);
        newest_first.push_back(std::move(s));
    }
    for (size_t i = newest_first.size(); i-- > 0;) f->slices_.push_front(std::move(newest_first[i]));
    if (!r.done()) return fail(TF_ERR_INTERNAL, "%s payload read failed", what);
    if (mode == Mode::Count && f->generation_ > uint64_t(double(first_m) * kLn2 / f->k_) + 1)
        return fail(TF_ERR_CORRUPT, "%s blob: generation too large for its slices", what);
    *out = std::move(f);
    return TF_OK;
}

}  // namespace bloom
}  // namespace tf
