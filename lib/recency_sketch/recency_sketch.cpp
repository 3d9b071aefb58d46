#include "recency_sketch/recency_sketch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

// locate() fills ptrs[0..depth) and depth <= kMaxDepth is an invariant of
// the object, which GCC cannot see; zero-filling 32 pointers per operation
// to silence it would cost more than the rest of an update.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace tf {

namespace {

// Cell access, plain in single-threaded mode and atomic (relaxed) in
// concurrent mode. Relaxed order is enough: each cell is an independent
// monotonic maximum, and no other memory is published through it.
template <bool Atomic>
inline uint64_t load(const uint64_t *c) {
    if (Atomic) return __atomic_load_n(c, __ATOMIC_RELAXED);
    return *c;
}

template <bool Atomic>
inline void store_max(uint64_t *c, uint64_t v) {
    if (Atomic) {
        uint64_t cur = __atomic_load_n(c, __ATOMIC_RELAXED);
        while (cur < v && !__atomic_compare_exchange_n(c, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        }
    } else if (*c < v) {
        *c = v;
    }
}

// A key last granted at `est` (0: never) may be granted at `now` when
// est + interval <= now, computed without overflow.
inline bool due(uint64_t est, uint64_t now, uint64_t interval) {
    return est == 0 || (now >= est && now - est >= interval);
}

template <bool Atomic>
inline void store(uint64_t *c, uint64_t v) {
    if (Atomic)
        __atomic_store_n(c, v, __ATOMIC_RELAXED);
    else
        *c = v;
}

double binomial(unsigned n, unsigned k) {
    if (k > n) return 0.0;
    double r = 1.0;
    for (unsigned i = 1; i <= k; ++i) r = r * double(n - k + i) / double(i);
    return r;
}

// Blocked layout error model: keys land in lines as Poisson(lambda); each
// key marks a uniformly random `depth`-subset of the line's 8 cells; a
// query is too new when its own `depth`-subset is entirely marked.
double blocked_probability(double lambda, uint32_t depth) {
    const unsigned L = RecencySketch::kLineCells;
    if (lambda > 2000.0) return 1.0;
    // e^-lambda underflows to 0 above about 745: every Poisson weight below
    // is then 0, and the loop would return its conservative 1.0 after
    // lambda iterations (the same answer, at once).
    if (std::exp(-lambda) == 0.0) return 1.0;
    const double total = binomial(L, depth);
    // P(all of a random depth-subset is occupied | j occupied)
    double cover[L + 1];
    for (unsigned j = 0; j <= L; ++j) cover[j] = binomial(j, depth) / total;
    // transition[j][j'] for one key
    double trans[L + 1][L + 1] = {};
    for (unsigned j = 0; j <= L; ++j)
        for (unsigned m = 0; m <= depth && m <= L - j; ++m) {
            if (depth - m > j) continue;
            trans[j][j + m] += binomial(L - j, m) * binomial(j, depth - m) / total;
        }
    double dist[L + 1] = {1.0};
    const unsigned kmax = unsigned(lambda + 12.0 * std::sqrt(lambda) + 40.0);
    double pk = std::exp(-lambda);  // Poisson(k = 0)
    double p = 0.0, mass = 0.0;
    for (unsigned k = 0; k <= kmax; ++k) {
        double c = 0.0;
        for (unsigned j = 0; j <= L; ++j) c += dist[j] * cover[j];
        p += pk * c;
        mass += pk;
        double next[L + 1] = {};
        for (unsigned j = 0; j <= L; ++j)
            if (dist[j] != 0.0)
                // one key adds at most `depth` cells: the rest of the row is 0
                for (unsigned j2 = j; j2 <= L && j2 <= j + depth; ++j2) next[j2] += dist[j] * trans[j][j2];
        std::copy(next, next + L + 1, dist);
        pk *= lambda / double(k + 1);
    }
    // Mass beyond kmax (negligible) counted as certain error: conservative.
    return std::min(1.0, p + std::max(0.0, 1.0 - mass));
}

}  // namespace

tf_status RecencySketch::check_shape(uint64_t width, uint32_t depth, uint32_t flags, size_t *cells) {
    if (tf_status st = check_flags(flags, kKnownFlags); st != TF_OK) return st;
    if (width == 0) return fail(TF_ERR_INVALID_ARGUMENT, "width must be >= 1");
    if (depth == 0) return fail(TF_ERR_INVALID_ARGUMENT, "depth must be >= 1");
    const bool blocked = (flags & kBlocked) != 0;
    const uint32_t max_depth = blocked ? kMaxBlockedDepth : kMaxDepth;
    if (depth > max_depth)
        return fail(TF_ERR_INVALID_ARGUMENT, "depth %u exceeds the maximum of %u%s", unsigned(depth),
                    unsigned(max_depth), blocked ? " for the blocked layout" : "");
    size_t n;
    if (width > SIZE_MAX || mul_overflows(size_t(width), depth, &n))
        return fail(TF_ERR_TOO_LARGE, "width %llu x depth %u overflows", (unsigned long long)width, unsigned(depth));
    if (blocked) n = n / kLineCells + (n % kLineCells != 0 ? 1 : 0), n *= kLineCells;
    // Keep bytes, the alignment slack and the serialized size representable.
    if (n > (SIZE_MAX / 2) / sizeof(uint64_t))
        return fail(TF_ERR_TOO_LARGE, "a table of %zu cells exceeds the address space", n);
    *cells = n;
    return TF_OK;
}

double RecencySketch::model_probability(uint64_t n, uint64_t width, uint32_t depth, uint32_t flags) {
    if (n == 0) return 0.0;
    if (flags & kBlocked) {
        size_t cells = size_t(width) * depth;
        double lines = double(cells / kLineCells + (cells % kLineCells != 0));
        return blocked_probability(double(n) / lines, depth);
    }
    // P(a given cell of a row is hit by none of n keys) = (1 - 1/width)^n
    double empty = std::exp(double(n) * std::log1p(-1.0 / double(width)));
    return std::pow(1.0 - empty, double(depth));
}

tf_status RecencySketch::dimensions(uint64_t n, double p, uint32_t flags, uint64_t *width_out, uint32_t *depth_out) {
    if (tf_status st = check_flags(flags, kKnownFlags); st != TF_OK) return st;
    if (n == 0) return fail(TF_ERR_INVALID_ARGUMENT, "expected_keys must be >= 1");
    if (!(p > 0.0 && p < 1.0)) return fail(TF_ERR_INVALID_ARGUMENT, "too_new_probability must be in (0, 1), got %g", p);
    const double limit = double((SIZE_MAX / 2) / sizeof(uint64_t));
    double best_cells = INFINITY;
    uint64_t best_w = 0;
    uint32_t best_d = 0;
    if (!(flags & kBlocked)) {
        for (uint32_t d = 1; d <= kMaxDepth; ++d) {
            // Each row must be hit with probability f = p^(1/d) at most:
            // 1 - (1 - 1/w)^n <= f  <=>  w >= 1 / (1 - (1 - f)^(1/n)).
            double f = std::pow(p, 1.0 / double(d));
            double denom = -std::expm1(std::log1p(-f) / double(n));
            if (!(denom > 0.0)) continue;
            double w = std::ceil(1.0 / denom);
            if (w < 1.0) w = 1.0;
            // guard against rounding: step up until the model agrees
            for (int tries = 0; tries < 8 && w * d < limit && model_probability(n, uint64_t(w), d, flags) > p; ++tries)
                w = std::ceil(w * (1.0 + 1e-12)) + 1.0;
            if (!(w * d < limit)) continue;  // too large (and not representable as uint64_t)
            if (w * d < best_cells) best_cells = w * d, best_w = uint64_t(w), best_d = d;
        }
    } else {
        for (uint32_t d = 1; d <= kMaxBlockedDepth; ++d) {
            // The smallest number of lines that keeps the target: doubling,
            // then bisection over integers (in doubles, above 2^53 lines a
            // midpoint can round onto an end and the bisection never ends:
            // 21,523,360 keys at 1e-9 took depth 8 there).
            auto ok = [&](uint64_t lines) { return blocked_probability(double(n) / double(lines), d) <= p; };
            uint64_t hi = 1;
            while (!ok(hi) && double(hi) * kLineCells < limit) hi *= 2;
            if (!ok(hi)) continue;
            uint64_t lo = hi / 2;  // fails (or 0)
            while (hi - lo > 1) {
                const uint64_t mid = lo + (hi - lo) / 2;
                (ok(mid) ? hi : lo) = mid;
            }
            double cells = double(hi) * kLineCells;
            if (cells < best_cells) {
                best_cells = cells;
                best_d = d;
                best_w = uint64_t(std::ceil(cells / double(d)));
            }
        }
    }
    if (best_d == 0 || best_cells >= limit)
        return fail(TF_ERR_TOO_LARGE, "no table within the limits keeps %llu keys under probability %g",
                    (unsigned long long)n, p);
    if (width_out) *width_out = best_w;
    if (depth_out) *depth_out = best_d;
    return TF_OK;
}

RecencySketch::RecencySketch(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags, size_t cells)
    : width_(width),
      depth_(depth),
      seed_(seed),
      flags_(flags),
      nblocks_(cells / kLineCells),
      nsubsets_(0),
      subsets_{},
      cells_(cells) {
    if (blocked()) {
        for (unsigned mask = 0; mask < 256; ++mask)
            if (unsigned(__builtin_popcount(mask)) == depth_) subsets_[nsubsets_++] = uint8_t(mask);
    }
}

inline void RecencySketch::locate(const void *key, size_t len, uint64_t **ptrs) const {
    const Hash128 h = key_hash(key, len, seed_);
    uint64_t *base = const_cast<uint64_t *>(cells_.data());
    if (!blocked()) {
        IndexSequence seq(h);
        for (uint32_t i = 0; i < depth_; ++i) ptrs[i] = base + i * width_ + seq.next(width_);
    } else {
        uint64_t *line = base + reduce(h.h1, nblocks_) * kLineCells;
        unsigned mask = subsets_[reduce(h.h2, nsubsets_)];
        for (uint32_t i = 0; i < depth_; ++i) {
            ptrs[i] = line + __builtin_ctz(mask);
            mask &= mask - 1;
        }
    }
}

void RecencySketch::update(const void *key, size_t len, uint64_t ts) {
    uint64_t *ptrs[kMaxDepth];
    locate(key, len, ptrs);
    if (concurrent())
        for (uint32_t i = 0; i < depth_; ++i) store_max<true>(ptrs[i], ts);
    else
        for (uint32_t i = 0; i < depth_; ++i) store_max<false>(ptrs[i], ts);
}

uint64_t RecencySketch::query(const void *key, size_t len) const {
    uint64_t *ptrs[kMaxDepth];
    locate(key, len, ptrs);
    uint64_t m = UINT64_MAX;
    if (concurrent())
        for (uint32_t i = 0; i < depth_; ++i) m = std::min(m, load<true>(ptrs[i]));
    else
        for (uint32_t i = 0; i < depth_; ++i) m = std::min(m, load<false>(ptrs[i]));
    return m;
}

template <class Op>
void RecencySketch::for_each_located(const void *const *keys, const size_t *lens, size_t count, Op &&op) const {
    uint64_t *ptrs[kBatchGroup][kMaxDepth];
    // In the blocked layout all of a key's cells share one line.
    const uint32_t prefetches = blocked() ? 1 : depth_;
    for (size_t base = 0; base < count; base += kBatchGroup) {
        const size_t g = std::min(kBatchGroup, count - base);
        for (size_t i = 0; i < g; ++i) {
            locate(keys[base + i], lens[base + i], ptrs[i]);
            for (uint32_t j = 0; j < prefetches; ++j) prefetch_write(ptrs[i][j]);
        }
        for (size_t i = 0; i < g; ++i) op(base + i, ptrs[i]);
    }
}

void RecencySketch::update_batch(const void *const *keys, const size_t *lens, size_t count, const uint64_t *times) {
    if (concurrent())
        for_each_located(keys, lens, count, [&](size_t i, uint64_t **ptrs) {
            for (uint32_t j = 0; j < depth_; ++j) store_max<true>(ptrs[j], times[i]);
        });
    else
        for_each_located(keys, lens, count, [&](size_t i, uint64_t **ptrs) {
            for (uint32_t j = 0; j < depth_; ++j) store_max<false>(ptrs[j], times[i]);
        });
}

void RecencySketch::query_batch(const void *const *keys, const size_t *lens, size_t count, uint64_t *out) const {
    const bool atomic = concurrent();
    for_each_located(keys, lens, count, [&](size_t i, uint64_t **ptrs) {
        uint64_t m = UINT64_MAX;
        if (atomic)
            for (uint32_t j = 0; j < depth_; ++j) m = std::min(m, load<true>(ptrs[j]));
        else
            for (uint32_t j = 0; j < depth_; ++j) m = std::min(m, load<false>(ptrs[j]));
        out[i] = m;
    });
}

template <bool Atomic>
bool RecencySketch::pace_impl(uint64_t **ptrs, uint64_t now, uint64_t interval, uint64_t *next) {
    if (!Atomic) {
        uint64_t est = UINT64_MAX;
        for (uint32_t i = 0; i < depth_; ++i) est = std::min(est, *ptrs[i]);
        if (!due(est, now, interval)) {
            *next = sat_add(est, interval);
            return false;
        }
        for (uint32_t i = 0; i < depth_; ++i) store_max<false>(ptrs[i], now);
        *next = sat_add(now, interval);
        return true;
    }
    // Concurrent mode. A grant claims the key's oldest cell c with one
    // compare-and-swap from its old value (<= now - interval) to now, after
    // first raising every other cell of the key to now. All accesses are
    // sequentially consistent, so of two requests for the same key, the one
    // whose claim comes later in that order finds the cell it wants to claim
    // already raised by the other and fails, unless the two are at least
    // `interval` apart: the same key is never granted twice within an
    // interval. A failed claim re-reads and decides again (another thread
    // made progress). Its raises stay: they can only delay the key (a denial
    // the single-threaded mode would not give, under a race), never grant.
    // Each successful claim still moves one cell forward by >= interval, so
    // the bound of width*depth grants per interval holds.
    for (;;) {
        uint32_t oldest = 0;
        uint64_t est = __atomic_load_n(ptrs[0], __ATOMIC_SEQ_CST);
        for (uint32_t i = 1; i < depth_; ++i) {
            uint64_t v = __atomic_load_n(ptrs[i], __ATOMIC_SEQ_CST);
            if (v < est) est = v, oldest = i;
        }
        if (!due(est, now, interval)) {
            *next = sat_add(est, interval);
            return false;
        }
        for (uint32_t i = 0; i < depth_; ++i) {
            if (i == oldest) continue;
            uint64_t cur = __atomic_load_n(ptrs[i], __ATOMIC_SEQ_CST);
            while (cur < now &&
                   !__atomic_compare_exchange_n(ptrs[i], &cur, now, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            }
        }
        uint64_t expected = est;
        if (__atomic_compare_exchange_n(ptrs[oldest], &expected, now, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            *next = sat_add(now, interval);
            return true;
        }
    }
}

bool RecencySketch::pace(const void *key, size_t len, uint64_t now, uint64_t interval, uint64_t *next) {
    uint64_t *ptrs[kMaxDepth];
    locate(key, len, ptrs);
    return concurrent() ? pace_impl<true>(ptrs, now, interval, next) : pace_impl<false>(ptrs, now, interval, next);
}

void RecencySketch::merge_from(const RecencySketch &src) {
    if (&src == this) return;  // max(x, x) = x
    uint64_t *d = cells_.data();
    const uint64_t *s = src.cells_.data();
    const size_t n = cells_.size();
    const bool sa = src.concurrent();
    if (concurrent()) {
        for (size_t i = 0; i < n; ++i) store_max<true>(&d[i], sa ? load<true>(&s[i]) : s[i]);
    } else {
        for (size_t i = 0; i < n; ++i) {
            uint64_t v = sa ? load<true>(&s[i]) : s[i];
            if (d[i] < v) d[i] = v;
        }
    }
}

void RecencySketch::clear() {
    uint64_t *d = cells_.data();
    if (concurrent())
        for (size_t i = 0; i < cells_.size(); ++i) store<true>(&d[i], 0);
    else
        std::fill(d, d + cells_.size(), uint64_t(0));
}

double RecencySketch::error_estimate(uint64_t since) const {
    const uint64_t *c = cells_.data();
    const bool atomic = concurrent();
    auto newer = [&](size_t i) { return (atomic ? load<true>(&c[i]) : c[i]) > since; };
    if (!blocked()) {
        double p = 1.0;
        for (uint32_t r = 0; r < depth_; ++r) {
            size_t hit = 0;
            for (uint64_t j = 0; j < width_; ++j) hit += newer(r * width_ + j);
            p *= double(hit) / double(width_);
        }
        return p;
    }
    // A key picks a random line and a random depth-subset of it.
    double cover[kLineCells + 1];
    const double total = binomial(kLineCells, depth_);
    for (unsigned j = 0; j <= kLineCells; ++j) cover[j] = binomial(j, depth_) / total;
    double sum = 0.0;
    for (uint64_t b = 0; b < nblocks_; ++b) {
        unsigned j = 0;
        for (unsigned k = 0; k < kLineCells; ++k) j += newer(b * kLineCells + k);
        sum += cover[j];
    }
    return sum / double(nblocks_);
}

void RecencySketch::write_payload(wire::Writer &w) const {
    w.u64(width_);
    w.u32(depth_);
    w.u32(seed_);
    w.u64(cells_.size());
    w.u64_array(cells_.data(), cells_.size(), concurrent());
}

tf_status RecencySketch::read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                              std::unique_ptr<RecencySketch> *out) {
    const uint64_t width = r.u64();
    const uint32_t depth = r.u32();
    const uint32_t seed = r.u32();
    const uint64_t ncells = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "recency sketch payload too short for its header");
    size_t cells;
    if (check_shape(width, depth, flags, &cells) != TF_OK)
        return fail_as(TF_ERR_CORRUPT, "recency sketch blob has an invalid shape");
    if (ncells != cells)
        return fail(TF_ERR_CORRUPT, "recency sketch blob says %llu cells, its shape needs %zu",
                    (unsigned long long)ncells, cells);
    // Validate the payload length before allocating anything.
    if (r.remaining() / 8 != cells || r.remaining() % 8 != 0)
        return fail(TF_ERR_CORRUPT, "recency sketch blob carries %zu payload bytes for %zu cells", r.remaining(),
                    cells);
    tf_status st = limits.check_memory(memory_for(cells));
    if (st != TF_OK) return st;
    std::unique_ptr<RecencySketch> s(new RecencySketch(width, depth, seed, flags, cells));
    r.u64_array(s->cells_.data(), cells);
    if (!r.done()) return fail(TF_ERR_INTERNAL, "recency sketch payload read failed");
    *out = std::move(s);
    return TF_OK;
}

}  // namespace tf
