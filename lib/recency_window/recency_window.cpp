#include "recency_window/recency_window.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include "common/memory.hpp"

namespace tf {
namespace recency {

namespace {

constexpr uint64_t kMaxWindow = uint64_t(1) << 40;
constexpr uint64_t kMaxInvEps = uint64_t(1) << 20;
// Tables of fewer entries are sized half full (a small table's kick chains
// fail more often), larger ones 90% (two-way cuckoo of 4-slot buckets
// holds about 98%).
constexpr uint64_t kSmallTable = 512;

int64_t floor_div(int64_t a, uint64_t w) {
    const int64_t d = int64_t(w);
    int64_t q = a / d;
    if ((a % d) != 0 && a < 0) --q;
    return q;
}
uint64_t floor_mod(int64_t a, uint64_t n) {
    const int64_t m = a % int64_t(n);
    return uint64_t(m < 0 ? m + int64_t(n) : m);
}

// The bits of the class field for `live` blocks: 2^c - 1 >= 2 live + 1.
unsigned class_bits_for(uint64_t live) {
    unsigned c = 1;
    while ((uint64_t(1) << c) - 1 < 2 * live + 1) ++c;
    return c;
}

}  // namespace

const char *RecencyWindow::invalid(const Config &c) {
    if (c.window < 1 || c.window > kMaxWindow) return "window must be in [1, 2^40]";
    switch (c.mode) {
        case Mode::Historical:
            if (c.inv_eps < 1 || c.inv_eps > kMaxInvEps) return "inv_eps (1/eps) must be in [1, 2^20]";
            break;
        case Mode::ExactCuckoo:
            break;
        case Mode::OptimalSM:
            if (c.block < 1 || c.block > c.window) return "block (the slack D) must be in [1, window]";
            break;
        default:
            return "unknown mode";
    }
    if (!(c.delta == 0.0 || (c.delta > 0.0 && c.delta < 1.0))) return "delta must be 0 (exact) or in (0, 1)";
    return nullptr;
}

std::vector<Level> RecencyWindow::plan(const Config &c) {
    std::vector<Level> out;
    const uint64_t W = c.window;
    auto add = [&](unsigned shift, uint64_t width, int64_t lag, uint64_t live, uint64_t capacity) {
        Level l;
        l.shift = shift;
        l.width = width;
        l.lag = lag;
        l.live = live;
        l.capacity = capacity;
        out.push_back(std::move(l));
    };
    if (c.mode == Mode::Historical) {
        const uint64_t K = c.inv_eps;
        unsigned L = 0;
        while ((K << (L + 2)) <= W) ++L;  // the largest L with K 2^(L+1) <= W
        for (unsigned l = 0; l < L; ++l)
            add(l, uint64_t(1) << l, int64_t(K * ((uint64_t(1) << l) - 1)), K + 1, (K + 1) << l);
        // the top level, extended by the excess: blocks whose front is in
        // [K (2^L - 1), W)
        const uint64_t lag = K * ((uint64_t(1) << L) - 1);
        const uint64_t w = uint64_t(1) << L;
        const uint64_t live = (W - lag + w - 1) / w + 1;
        add(L, w, int64_t(lag), live, std::min(live * w, W + w));
    } else if (c.mode == Mode::ExactCuckoo) {
        add(0, 1, 0, W + 1, W);
    } else {
        const uint64_t D = c.block;
        add(0, D, 1 - int64_t(D), (W + D - 1) / D + 2, W + D);
    }
    const unsigned sig_bits = signature_bits(c);
    for (Level &l : out) {
        const unsigned cb = class_bits_for(l.live);
        l.field = (uint64_t(1) << cb) - 1;
        const double load = l.capacity < kSmallTable ? 0.5 : 0.9;
        l.shape = SlidingTable::shape_for(l.capacity, load, sig_bits, cb);
        // Every cell visited before a lapsed class ID can wrap around the
        // field: it lapses at most `live` blocks behind the newest and
        // wraps `field` blocks behind.
        const uint64_t leeway = (l.field - l.live - 1) * l.width;
        l.scan = (l.shape.slots + 1 + leeway - 1) / leeway + 1;
    }
    return out;
}

unsigned RecencyWindow::signature_bits(const Config &c) {
    if (c.delta == 0.0) return 64;
    // Corollary 12: signatures from a universe of (entries held) / delta,
    // so that a key out of the window matches one of them with
    // probability at most delta.
    uint64_t held = 0;
    const uint64_t W = c.window;
    if (c.mode == Mode::Historical)
        held = W + 3 * (W / std::max<uint64_t>(c.inv_eps, 1)) / 2 + 1;
    else
        held = W + (c.mode == Mode::OptimalSM ? c.block : 0);
    const double bits = std::ceil(std::log2(double(held) / c.delta));
    return unsigned(std::min(64.0, std::max(1.0, bits)));
}

size_t RecencyWindow::memory_for(const Config &c) {
    const std::vector<Level> levels = plan(c);
    size_t bytes = sizeof(RecencyWindow) + levels.size() * sizeof(Level);
    uint64_t scratch = 0;
    for (const Level &l : levels) {
        bytes += SlidingTable::bytes_for(l.shape);
        scratch = std::max<uint64_t>(scratch, l.scan + SlidingTable::kStash);
    }
    return bytes + scratch * sizeof(Entry);
}

RecencyWindow::RecencyWindow(const Config &c) : cfg_(c) {
    std::vector<Level> levels = plan(c);
    uint64_t scratch = 0;
    for (Level &l : levels) {
        if (allocation_refused()) throw std::bad_alloc();
        l.table = SlidingTable(l.shape);
        scratch = std::max<uint64_t>(scratch, l.scan + SlidingTable::kStash);
    }
    scratch_.resize(scratch);
    scratch_.shrink_to_fit();
    levels_ = std::move(levels);
    levels_.shrink_to_fit();
    const unsigned bits = signature_bits(c);
    sig_mask_ = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    expiry_width_ = levels_.back().width;
}

size_t RecencyWindow::memory() const {
    size_t bytes = sizeof(RecencyWindow) + levels_.capacity() * sizeof(Level) + scratch_.capacity() * sizeof(Entry);
    for (const Level &l : levels_) bytes += l.table.bytes();
    return bytes;
}

uint64_t RecencyWindow::items() const {
    uint64_t n = 0;
    for (const Level &l : levels_) n += l.table.items();
    return n;
}

void RecencyWindow::clear() {
    for (Level &l : levels_) l.table.clear();
    t_ = 0;
    stats_ = Stats();
}

int64_t RecencyWindow::top(size_t l) const {
    const Level &v = levels_[l];
    return floor_div(int64_t(t_) - v.lag, v.width) - 1;
}

int64_t RecencyWindow::resolve(size_t l, uint64_t cls) const {
    const int64_t tp = top(l);
    return tp - int64_t(floor_mod(tp - int64_t(cls), levels_[l].field));
}

uint64_t RecencyWindow::class_of(size_t l, int64_t b) const { return floor_mod(b, levels_[l].field); }

bool RecencyWindow::expired(size_t l, int64_t b) const {
    // the front of the expiry block (the top level's) holding block b
    const int64_t eb = floor_div(b * int64_t(levels_[l].width), expiry_width_);
    return (eb + 1) * int64_t(expiry_width_) + int64_t(cfg_.window) <= int64_t(t_);
}

bool RecencyWindow::lapsed(size_t l, int64_t b) const {
    return l + 1 < levels_.size() && floor_div(b, 2) <= top(l + 1);
}

void RecencyWindow::leave(size_t l, uint64_t sig, int64_t b) {
    if (l + 1 >= levels_.size() || expired(l, b)) {
        stats_.expired++;
        return;
    }
    stats_.promotions++;
    put(l + 1, sig, floor_div(b, 2));
}

void RecencyWindow::put(size_t l, uint64_t sig, int64_t b) {
    if (expired(l, b)) {
        stats_.expired++;
        return;
    }
    SlidingTable &t = levels_[l].table;
    const uint64_t slot = t.find(sig);
    if (slot != SlidingTable::kNone) {
        stats_.merged++;
        b = std::max(b, resolve(l, t.class_at(slot)));
        if (lapsed(l, b)) {
            t.erase_at(slot);
            leave(l, sig, b);
        } else {
            t.set_class_at(slot, class_of(l, b));
        }
        return;
    }
    if (lapsed(l, b)) {
        leave(l, sig, b);
        return;
    }
    auto stale = [this, l](uint64_t cls) {
        const int64_t e = resolve(l, cls);
        return expired(l, e) || lapsed(l, e);
    };
    Entry ev;
    bool has = false;
    if (!t.insert(sig, class_of(l, b), stale, &ev, &has)) {
        stats_.lost++;
        return;
    }
    if (has) leave(l, ev.sig, resolve(l, ev.cls));
}

void RecencyWindow::insert(uint64_t sig) {
    t_++;
    stats_.inserts++;
    put(0, sig, floor_div(int64_t(t_ - 1), levels_[0].width));
    for (size_t l = 0; l < levels_.size(); ++l) {
        auto stale = [this, l](uint64_t cls) {
            const int64_t e = resolve(l, cls);
            return expired(l, e) || lapsed(l, e);
        };
        const unsigned n = levels_[l].table.scan(levels_[l].scan, stale, scratch_.data());
        for (unsigned i = 0; i < n; ++i) {
            const Entry e = scratch_[i];
            leave(l, e.sig, resolve(l, e.cls));
        }
    }
}

int64_t RecencyWindow::query(uint64_t sig) const {
    for (size_t l = 0; l < levels_.size(); ++l) {
        const SlidingTable &t = levels_[l].table;
        const uint64_t slot = t.find(sig);
        if (slot == SlidingTable::kNone) continue;
        const int64_t b = resolve(l, t.class_at(slot));
        if (expired(l, b)) return kNotInWindow;
        const int64_t est = int64_t(t_) - (b + 1) * int64_t(levels_[l].width);
        return est < 0 ? 0 : est;
    }
    return kNotInWindow;
}

}  // namespace recency
}  // namespace tf
