#include "recency_window/recency_window.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include "common/memory.hpp"
#include "common/status.hpp"

namespace tf {
namespace recency {

namespace {

constexpr uint64_t kMaxWindow = uint64_t(1) << 40;
constexpr uint64_t kMaxInvEps = uint64_t(1) << 20;
// Tables of fewer entries are sized half full (a small table's kick chains
// fail more often), larger ones kLoad full of live entries (two-way cuckoo
// of 4-slot buckets holds about 98%; entries lapsed but not yet met sit
// above that, but an insert may take their slots). Measured with 256
// kicks and the 16-entry stash, a table kept at its capacity of live
// entries (FIFO classes, 3 to 24 live, the plan's scan) for 3 to 4 times
// its capacity of inserts: at 0.92 no stash entry for 3e3 to 7e6 entries;
// at 0.93 up to 8 stashed at 7e6 (the stash fills in proportion to the
// capacity); at 0.95 the stash overflowed at 1e5.
constexpr uint64_t kSmallTable = 512;
constexpr double kLoad = 0.92;

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

// The bits of the class field for `live` blocks: 2^c - 1 >= 2 live + 1
// (one more value of the c bits marks an empty slot). The field - live - 1
// blocks past the live ones are the scan's leeway (plan()); a narrower
// field, live + 1 + ceil(live / 4), saved a bit per entry at most levels
// (about 2% of the memory) but scanned twice the cells, and cost 25% more
// per insert (3000 against 2420 ns at W = 1e5, eps = 1/8).
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

tf_status RecencyWindow::check(const Config &c) {
    if (c.window > kMaxWindow)
        return fail(TF_ERR_TOO_LARGE, "window is %llu, above the largest window (2^40)", (unsigned long long)c.window);
    if (c.inv_eps < 1 || c.inv_eps > kMaxInvEps)
        return fail(TF_ERR_INVALID_ARGUMENT, "inv_eps (1/eps) is %llu, not in [1, 2^20]",
                    (unsigned long long)c.inv_eps);
    if (c.mode != Mode::OptimalSM && c.block != 0)
        return fail(TF_ERR_INVALID_ARGUMENT, "block is %llu: only OptimalSM has a block (leave it 0)",
                    (unsigned long long)c.block);
    tf_status st = check_flags(c.flags, kKnownFlags);
    if (st != TF_OK) return st;
    if (const char *why = invalid(c)) return fail(TF_ERR_INVALID_ARGUMENT, "%s", why);
    return TF_OK;
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
        out.reserve(L + 1);               // one allocation (a reader's plan is counted against its limits)
        for (unsigned l = 0; l < L; ++l)
            add(l, uint64_t(1) << l, int64_t(K * ((uint64_t(1) << l) - 1)), K + 1, (K + 1) << l);
        // the top level, extended by the excess: blocks whose front is in
        // [K (2^L - 1), W)
        const uint64_t lag = K * ((uint64_t(1) << L) - 1);
        const uint64_t w = uint64_t(1) << L;
        // at most ceil((W - lag) / w) blocks are live at once: with top =
        // floor((t - lag) / w) - 1 and the newest expired block floor((t -
        // W) / w) - 1, their difference is at most ceil((W - lag) / w)
        const uint64_t live = (W - lag + w - 1) / w;
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
        const double load = l.capacity < kSmallTable ? 0.5 : kLoad;
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

size_t RecencyWindow::memory_for(const Config &c) { return memory_of(plan(c)); }

size_t RecencyWindow::memory_of(const std::vector<Level> &levels) {
    size_t bytes = sizeof(RecencyWindow) + levels.size() * sizeof(Level);
    uint64_t scratch = 0;
    for (const Level &l : levels) {
        bytes += SlidingTable::bytes_for(l.shape);
        scratch = std::max<uint64_t>(scratch, l.scan + SlidingTable::kStash);
    }
    return bytes + scratch * sizeof(Entry);
}

RecencyWindow::RecencyWindow(const Config &c) : RecencyWindow(c, plan(c)) {}

RecencyWindow::RecencyWindow(const Config &c, std::vector<Level> levels) : cfg_(c) {
    uint64_t scratch = 0;
    for (Level &l : levels) {
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
    expiry_shift_.resize(levels_.size());
    for (size_t l = 0; l < levels_.size(); ++l) {
        unsigned sh = 0;  // every width divides the expiry width by a power of two
        while ((levels_[l].width << sh) < expiry_width_) ++sh;
        expiry_shift_[l] = sh;
    }
    clock_.resize(levels_.size());
    sync_all();
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
    sync_all();
}

// The block arithmetic. Level l's newest accepted block is
//
//   top_l(t) = floor((t - lag_l) / width_l) - 1,
//
// a block b of level l is out of the window when the front of the expiry
// block (the top level's) holding it is at least W old,
//
//   (floor(b width_l / E) + 1) E + W <= t   <=>   b <= (q + 1) 2^s_l - 1,
//   q = floor((t - W) / E) - 1, E / width_l = 2^s_l,
//
// and lapsed (due at level l + 1) when floor(b / 2) <= top_{l+1}(t), that
// is b <= 2 top_{l+1} + 1. Both tests are monotone in b, so an entry d
// classes behind top (b = top - d) is stale iff d >= stale_from =
// min(top - expired_max, top - lapsed_max).
void RecencyWindow::sync_all() {
    for (size_t l = 0; l < levels_.size(); ++l) {
        const Level &v = levels_[l];
        clock_[l].top = floor_div(int64_t(t_) - v.lag, v.width) - 1;
        clock_[l].top_cls = floor_mod(clock_[l].top, v.field);
    }
    sync_thresholds();
}

void RecencyWindow::sync_next() {
    for (size_t l = 0; l < levels_.size(); ++l) {
        const Level &v = levels_[l];
        Clock &c = clock_[l];
        // t grew by one: top grows by one when t - lag reaches a multiple
        // of the width
        const int64_t x = int64_t(t_) - v.lag;
        const bool step = (v.width & (v.width - 1)) == 0 ? (x & int64_t(v.width - 1)) == 0 : floor_mod(x, v.width) == 0;
        if (step) {
            c.top++;
            if (++c.top_cls == v.field) c.top_cls = 0;
        }
    }
    sync_thresholds();
}

void RecencyWindow::sync_thresholds() {
    const int64_t E = int64_t(expiry_width_);
    const int64_t q = floor_div(int64_t(t_) - int64_t(cfg_.window), uint64_t(E)) - 1;
    const size_t n = levels_.size();
    for (size_t l = 0; l < n; ++l) {
        Clock &c = clock_[l];
        c.expired_max = (q + 1) * (int64_t(1) << expiry_shift_[l]) - 1;
        c.lapsed_max = l + 1 < n ? 2 * clock_[l + 1].top + 1 : INT64_MIN;
        c.stale_from = c.top - std::max(c.expired_max, c.lapsed_max);
    }
}

uint64_t RecencyWindow::class_of(size_t l, int64_t b) const {
    const int64_t d = clock_[l].top - b;
    const int64_t field = int64_t(levels_[l].field);
    if (d < 0 || d >= field) return floor_mod(b, levels_[l].field);
    const int64_t c = int64_t(clock_[l].top_cls) - d;
    return uint64_t(c < 0 ? c + field : c);
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
    SlidingTable::Probe p;  // the two buckets, read once for the find and the insert
    t.probe(sig, &p);
    const uint64_t slot = t.find(p, sig);
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
    auto stale = [this, l](uint64_t cls) { return this->stale(l, cls); };
    Entry ev;
    bool has = false;
    if (!t.insert(p, sig, class_of(l, b), stale, &ev, &has)) {
        stats_.lost++;
        return;
    }
    if (has) leave(l, ev.sig, resolve(l, ev.cls));
}

void RecencyWindow::insert(uint64_t sig) {
    t_++;
    stats_.inserts++;
    sync_next();
    put(0, sig, floor_div(int64_t(t_ - 1), levels_[0].width));
    for (size_t l = 0; l < levels_.size(); ++l) {
        auto stale = [this, l](uint64_t cls) { return this->stale(l, cls); };
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

// The payload of wire kind 6 (little-endian, field by field):
//
//   offset size field
//   0      8    window W (1 .. 2^40)
//   8      8    inv_eps (1 .. 2^20)
//   16     8    block D (OptimalSM: 1 .. W; otherwise 0)
//   24     8    max_memory (0: none; else at least the structure's memory)
//   32     8    delta (f64: 0, or in (0, 1))
//   40     4    mode (0 Historical, 1 ExactCuckoo, 2 OptimalSM)
//   44     4    seed
//   48     4    signature bits (as the config gives them)
//   52     4    levels n (as the config gives them)
//   56     8    t: inserts made (< 2^62)
//   64     8    promotions
//   72     8    expired
//   80     8    merged
//   88     8    lost
//   96          n levels, each:
//     +0   8    slots (as the config gives them)
//     +8   4    entry bits (as the config gives them)
//     +12  4    stash entries s (0 .. 16)
//     +16  8    occupied slots (the slots whose class field is not 0)
//     +24  8    scan cursor (0 .. slots; slots: the stash is next)
//     +32       the packed slots: ceil(slots x min(entry bits, 64) / 64)
//               words of 8 bytes, then, for entries wider than 64 bits,
//               ceil(slots x (entry bits - 64) / 64) words of their high
//               bits (sliding_table.hpp); an empty slot is all 0 bits, the
//               bits past the last slot are 0
//     then s stash entries of (signature u64, class ID u64)
//
// Every slot's signature, rebuilt from its bucket, way bit and remainder,
// fits the signature width; no signature is held twice in a level (table
// and stash); a stash class ID is below the level's field.
namespace {
constexpr size_t kHeaderBytes = 96;
constexpr size_t kLevelHeaderBytes = 32;

size_t plane_words(const TableShape &s, unsigned plane) {
    const unsigned w = s.entry_bits();
    if (plane == 0) return cuckoo::RuntimeSlots::words_for(s.slots, w > 64 ? 64 : w);
    return w > 64 ? cuckoo::RuntimeSlots::words_for(s.slots, w - 64) : 0;
}
// The bits of the last word of a plane past its last slot.
uint64_t tail_mask(uint64_t slots, unsigned bits) {
    const unsigned used = unsigned((slots * bits) % 64);
    return used == 0 ? 0 : ~uint64_t(0) << used;
}
}  // namespace

size_t RecencyWindow::payload_size() const {
    size_t n = kHeaderBytes;
    for (const Level &l : levels_)
        n += kLevelHeaderBytes + 8 * (plane_words(l.shape, 0) + plane_words(l.shape, 1)) +
             16 * size_t(l.table.stashed());
    return n;
}

void RecencyWindow::write_payload(wire::Writer &w) const {
    w.u64(cfg_.window);
    w.u64(cfg_.inv_eps);
    w.u64(cfg_.block);
    w.u64(cfg_.max_memory);
    w.f64(cfg_.delta);
    w.u32(uint32_t(cfg_.mode));
    w.u32(cfg_.seed);
    w.u32(signature_bits(cfg_));
    w.u32(uint32_t(levels_.size()));
    w.u64(t_);
    w.u64(stats_.promotions);
    w.u64(stats_.expired);
    w.u64(stats_.merged);
    w.u64(stats_.lost);
    for (const Level &l : levels_) {
        const SlidingTable &t = l.table;
        w.u64(t.slots());
        w.u32(l.shape.entry_bits());
        w.u32(t.stashed());
        w.u64(t.items() - t.stashed());
        w.u64(t.cursor());
        for (unsigned p = 0; p < 2; ++p)
            if (plane_words(l.shape, p) != 0) w.u64_array(t.plane(p).words(), plane_words(l.shape, p));
        for (unsigned i = 0; i < t.stashed(); ++i) {
            w.u64(t.stash()[i].sig);
            w.u64(t.stash()[i].cls);
        }
    }
}

tf_status RecencyWindow::read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                              std::unique_ptr<RecencyWindow> *out) {
    Config c;
    c.window = r.u64();
    c.inv_eps = r.u64();
    c.block = r.u64();
    c.max_memory = r.u64();
    c.delta = r.f64();
    const uint32_t mode = r.u32();
    c.seed = r.u32();
    const uint32_t sig_bits = r.u32();
    const uint32_t nlevels = r.u32();
    const uint64_t t = r.u64();
    Stats st;
    st.promotions = r.u64();
    st.expired = r.u64();
    st.merged = r.u64();
    st.lost = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "the payload is shorter than its header");
    if (mode > uint32_t(Mode::OptimalSM)) return fail(TF_ERR_CORRUPT, "mode is %u, not 0, 1 or 2", mode);
    c.mode = Mode(mode);
    c.flags = flags;
    if (check(c) != TF_OK) return fail_as(TF_ERR_CORRUPT, "recency window blob");
    if (sig_bits != signature_bits(c))
        return fail(TF_ERR_CORRUPT, "signature bits are %u; the options give %u", sig_bits, signature_bits(c));
    if (t >= kMaxInserts) return fail(TF_ERR_CORRUPT, "%llu inserts, not below 2^62", (unsigned long long)t);
    std::vector<Level> plan_levels = plan(c);
    if (nlevels != plan_levels.size())
        return fail(TF_ERR_CORRUPT, "the blob holds %u levels; the options give %zu", nlevels, plan_levels.size());
    const size_t memory = memory_of(plan_levels);
    if (c.max_memory != 0 && memory > c.max_memory)
        return fail(TF_ERR_CORRUPT, "max_memory (%llu bytes) is below the structure's %zu bytes",
                    (unsigned long long)c.max_memory, memory);

    // First pass: every level's header and the bytes it needs, without
    // allocating.
    struct LevelHead {
        uint64_t items, cursor;
        unsigned stash;
        const uint8_t *words[2];
        const uint8_t *stash_bytes;
    };
    tf_status ms = limits.check_memory(memory);  // before the list of heads
    if (ms != TF_OK) return ms;
    std::vector<LevelHead> heads(nlevels);  // at most 42 small entries
    for (uint32_t i = 0; i < nlevels; ++i) {
        const TableShape &s = plan_levels[i].shape;
        LevelHead &h = heads[i];
        const uint64_t slots = r.u64();
        const uint32_t bits = r.u32();
        h.stash = r.u32();
        h.items = r.u64();
        h.cursor = r.u64();
        if (!r.ok()) return fail(TF_ERR_CORRUPT, "level %u's header runs past the payload", i);
        if (slots != s.slots || bits != s.entry_bits())
            return fail(TF_ERR_CORRUPT, "level %u has %llu slots of %u bits; the options give %llu of %u", i,
                        (unsigned long long)slots, bits, (unsigned long long)s.slots, s.entry_bits());
        if (h.stash > SlidingTable::kStash)
            return fail(TF_ERR_CORRUPT, "level %u's stash holds %u entries, above %u", i, h.stash,
                        SlidingTable::kStash);
        if (h.items > slots)
            return fail(TF_ERR_CORRUPT, "level %u holds %llu entries in %llu slots", i, (unsigned long long)h.items,
                        (unsigned long long)slots);
        if (h.cursor > slots)
            return fail(TF_ERR_CORRUPT, "level %u's scan cursor %llu is past its %llu slots", i,
                        (unsigned long long)h.cursor, (unsigned long long)slots);
        for (unsigned p = 0; p < 2; ++p) {
            const size_t words = plane_words(s, p);
            if (words > r.remaining() / 8) return fail(TF_ERR_CORRUPT, "level %u's slots run past the payload", i);
            h.words[p] = r.view(words * 8);
        }
        if (h.stash > r.remaining() / 16) return fail(TF_ERR_CORRUPT, "level %u's stash runs past the payload", i);
        h.stash_bytes = r.view(size_t(h.stash) * 16);
    }
    if (!r.done()) return fail(TF_ERR_CORRUPT, "%zu bytes after the last level", r.remaining());

    // the plan made above (its tables not allocated yet) becomes the
    // structure's levels: nothing planned twice
    std::unique_ptr<RecencyWindow> w(new RecencyWindow(c, std::move(plan_levels)));
    w->t_ = t;
    w->sync_all();
    st.inserts = t;
    w->stats_ = st;
    for (uint32_t i = 0; i < nlevels; ++i) {
        Level &l = w->levels_[i];
        SlidingTable &tab = l.table;
        const LevelHead &h = heads[i];
        for (unsigned p = 0; p < 2; ++p) {
            const size_t words = plane_words(l.shape, p);
            if (words == 0) continue;
            wire::Reader pr(h.words[p], words * 8);
            pr.u64_array(tab.plane(p).words(), words);
            if (tab.plane(p).words()[words - 1] & tail_mask(l.shape.slots, tab.plane(p).width()))
                return fail(TF_ERR_CORRUPT, "level %u has bits set past its last slot", i);
        }
        Entry stash[SlidingTable::kStash];
        wire::Reader sr(h.stash_bytes, size_t(h.stash) * 16);
        for (unsigned j = 0; j < h.stash; ++j) {
            stash[j].sig = sr.u64();
            stash[j].cls = sr.u64();
            if (stash[j].cls >= l.field)
                return fail(TF_ERR_CORRUPT, "level %u's stash entry %u has class ID %llu, outside its field of %llu", i,
                            j, (unsigned long long)stash[j].cls, (unsigned long long)l.field);
        }
        // one pass over the slots: the empty ones all 0 bits, the count of
        // the others, and the first entry whose signature is wider than
        // its width (its remainder above the largest, so in a bucket it
        // may not occupy) or held twice in the level (find() would not
        // reach it), reported in this order, then the stash's entries
        const SlidingTable::Audit a = tab.audit();
        if (a.bad_empty != SlidingTable::kNone)
            return fail(TF_ERR_CORRUPT, "level %u's empty slot %llu has bits set", i, (unsigned long long)a.bad_empty);
        if (a.occupied != h.items)
            return fail(TF_ERR_CORRUPT, "level %u says %llu entries; its slots hold %llu", i,
                        (unsigned long long)h.items, (unsigned long long)a.occupied);
        tab.restore(a.occupied, stash, h.stash, h.cursor);
        uint64_t at = a.flaw_at;
        const SlidingTable::Flaw flaw = a.flaw != SlidingTable::Flaw::kNone ? a.flaw : tab.stash_flaw(&at);
        if (flaw == SlidingTable::Flaw::kWide)
            return fail(TF_ERR_CORRUPT,
                        "level %u's entry %llu has a signature wider than %u bits (a bucket it may not occupy)", i,
                        (unsigned long long)at, l.shape.sig_bits);
        if (flaw == SlidingTable::Flaw::kTwice)
            return fail(TF_ERR_CORRUPT, "level %u holds the signature of entry %llu twice", i, (unsigned long long)at);
    }
    *out = std::move(w);
    return TF_OK;
}

}  // namespace recency
}  // namespace tf
