#include "rate_limiter/rate_limiter.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "common/memory.hpp"

namespace tf {
namespace rate {

void *allocate(size_t bytes) noexcept {
    if (allocation_refused(bytes)) return nullptr;
    return std::malloc(bytes);
}

GrantRing *GrantRing::make(uint32_t cap, uint32_t limit, bool wide) {
    GrantRing *g = static_cast<GrantRing *>(allocate(bytes(cap, wide)));
    if (!g) throw std::bad_alloc();
    g->base = 0;
    g->cap = cap;
    g->start = g->count = 0;
    g->limit = limit;
    g->wide = wide;
    return g;
}

uint32_t GrantRing::grown_capacity(uint32_t cap, uint64_t need, uint32_t limit) {
    uint64_t c = std::max<uint64_t>(2 * uint64_t(cap), kMinCapacity);
    while (c < need) c *= 2;
    return uint32_t(std::min<uint64_t>(c, std::max<uint64_t>(limit, need)));
}

GrantRing *GrantRing::grown(uint64_t need) const noexcept {
    const uint32_t ncap = grown_capacity(cap, need, limit);
    GrantRing *g = static_cast<GrantRing *>(allocate(bytes(ncap, wide)));
    if (!g) return nullptr;
    g->base = base;
    g->cap = ncap;
    g->start = 0;
    g->count = count;
    g->limit = limit;
    g->wide = wide;
    // the grants in order: the run from start to the end, then the wrapped part
    const size_t w = slot_bytes(wide);
    const uint32_t first = std::min(count, cap - start);
    const uint8_t *from = static_cast<const uint8_t *>(slots());
    uint8_t *to = static_cast<uint8_t *>(g->slots());
    std::memcpy(to, from + w * start, w * size_t(first));
    std::memcpy(to + w * first, from, w * size_t(count - first));
    return g;
}

namespace {

// Exact mode: a record's state is a pointer to its key's ring.
GrantRing *ring_of(Table::Rec r) {
    GrantRing *g;
    std::memcpy(&g, r.state(), sizeof g);
    return g;
}
void set_ring(Table::Rec r, GrantRing *g) { std::memcpy(r.state(), &g, sizeof g); }

uint16_t ld16(const uint8_t *p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
void st16(uint8_t *p, uint64_t v) {
    const uint16_t x = uint16_t(v);
    std::memcpy(p, &x, 2);
}

// A key's bucketed state inside its record (window.hpp's state interface).
struct KeyBuckets {
    Table::Rec r;
    uint64_t latest() const { return r.latest(); }
    void set_latest(uint64_t v) { r.set_latest(v); }
    uint64_t total() const { return ld16(r.state()); }
    void set_total(uint64_t v) { st16(r.state(), v); }
    uint64_t count(uint32_t i) const { return ld16(r.state() + 2 + 2 * size_t(i)); }
    void set_count(uint32_t i, uint64_t v) { st16(r.state() + 2 + 2 * size_t(i), v); }
};

// The global bucketed window.
struct GlobalBuckets {
    uint64_t *counts, *total_, *latest_;
    uint64_t latest() const { return *latest_; }
    void set_latest(uint64_t v) { *latest_ = v; }
    uint64_t total() const { return *total_; }
    void set_total(uint64_t v) { *total_ = v; }
    uint64_t count(uint32_t i) const { return counts[i]; }
    void set_count(uint32_t i, uint64_t v) { counts[i] = v; }
};

// The same, read-only (global_decide).
struct GlobalBucketsRead {
    const uint64_t *counts;
    uint64_t total_, latest_;
    uint64_t latest() const { return latest_; }
    uint64_t total() const { return total_; }
    uint64_t count(uint32_t i) const { return counts[i]; }
};

// A fresh key's window is empty.
Decision empty_decide(uint64_t limit, uint64_t n) {
    Decision d;
    d.allowed = n <= limit;
    d.remaining = d.allowed ? limit - n : limit;
    d.retry_at = d.allowed ? 0 : kRetryNever;
    return d;
}

Decision deny_never() {
    Decision d;
    d.retry_at = kRetryNever;
    return d;
}

bool key_less(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    const int c = std::memcmp(a, b, std::min(na, nb));
    return c != 0 ? c < 0 : na < nb;
}

}  // namespace

// ---- the table -------------------------------------------------------------

// The table's accessors, its destructor's and capacity_for's loops and the
// limiter's per-shard setup are not instrumented for fuzzing
// (common/coverage.hpp): called on every operation, they give a fuzzer
// nothing to steer by that their callers' branches do not.
TF_NO_FUZZ_COVERAGE const uint8_t *Table::Rec::key() const {
    if ((code() & kLenMask) == kOutOfLine) {
        const uint8_t *q;
        std::memcpy(&q, p + 9, sizeof q);
        return q;
    }
    return p + 9;
}

TF_NO_FUZZ_COVERAGE size_t Table::Rec::key_len() const {
    const uint8_t c = code() & kLenMask;
    if (c == kOutOfLine) {
        uint64_t n;
        std::memcpy(&n, p + 17, 8);
        return size_t(n);
    }
    return size_t(c - 1);
}

TF_NO_FUZZ_COVERAGE Table::~Table() {
    for (size_t i = 0; i < cap_; ++i)
        if (!at(i).empty()) release(at(i));
}

void Table::reserve(size_t cap) {
    if (cap == 0 || cap_ != 0) return;
    size_t bytes;
    if (mul_overflows(cap, stride_, &bytes)) throw std::bad_alloc();
    ZeroedBlock block(bytes);  // throws std::bad_alloc
    rebuild_into(block, cap, 0);
}

void Table::release(Rec r) {
    key_bytes_ -= r.key_len();
    if ((r.code() & kLenMask) == kOutOfLine) {
        add_bytes(0, r.key_len());
        std::free(const_cast<uint8_t *>(r.key()));
    }
    if (exact_) {
        GrantRing *g = ring_of(r);
        if (g) {
            add_bytes(0, g->size());
            std::free(g);
        }
    }
}

Table::Rec Table::find(const void *key, size_t len, const Hash128 &h) const {
    if (count_ == 0) return Rec{nullptr};
    if (len <= kInlineKey) {
        // an inline key is zero-padded to 16 bytes: two word compares
        uint64_t k[2] = {0, 0};
        if (len) std::memcpy(k, key, len);
        const uint8_t code = uint8_t(len + 1);
        for (size_t i = home(h);; i = next(i)) {
            Rec r = at(i);
            const uint8_t c = r.code();
            if (c == 0) return Rec{nullptr};
            if ((c & kLenMask) != code) continue;
            uint64_t w[2];
            std::memcpy(w, r.p + 9, 16);
            if (w[0] == k[0] && w[1] == k[1]) return r;
        }
    }
    for (size_t i = home(h);; i = next(i)) {
        Rec r = at(i);
        if (r.empty()) return Rec{nullptr};
        if ((r.code() & kLenMask) == kOutOfLine && r.key_len() == len && std::memcmp(r.key(), key, len) == 0) return r;
    }
}

// grow by 1/8 from kMinCapacity: the load stays within 85% / 1.125 = 76%
// and 85% (small tables used to grow by 1/4, down to 68% full: too close
// to the threshold of shrink())
size_t Table::next_capacity(size_t cap) { return cap < kMinCapacity ? kMinCapacity : cap + cap / 8; }

// Each insert grows the table at most once, and one step is always enough
// (every step adds room for at least one more record), so a table filled
// with `count` records from empty has the first capacity of the sequence
// 0, 16, 18, 20, 22, 24, 27, ... that is not full for `count`.
TF_NO_FUZZ_COVERAGE size_t Table::capacity_for(size_t count) {
    size_t cap = 0;
    while (full_for(count, cap)) cap = next_capacity(cap);
    return cap;
}

void Table::prepare_insert(const void *key, size_t len, Room *room) const {
    if (full_for(count_ + 1, cap_)) {
        const size_t ncap = next_capacity(cap_);
        size_t bytes;
        if (mul_overflows(ncap, stride_, &bytes)) throw std::bad_alloc();
        room->slots = ZeroedBlock(bytes);  // throws std::bad_alloc (also when the test hook refuses it)
        room->cap = ncap;
    }
    if (len > kInlineKey) {
        room->key = static_cast<uint8_t *>(allocate(len));
        if (!room->key) throw std::bad_alloc();
        std::memcpy(room->key, key, len);
    }
}

void Table::rebuild_into(ZeroedBlock &block, size_t ncap, size_t ncursor) noexcept {
    uint8_t *nslots = static_cast<uint8_t *>(block.data());
    for (size_t i = 0; i < cap_; ++i) {
        Rec r = at(i);
        if (r.empty()) continue;
        const Hash128 h = key_hash(r.key(), r.key_len(), seed_);
        size_t j = size_t(reduce(h.h2, ncap));
        while (nslots[j * stride_ + 8] != 0) j = j + 1 == ncap ? 0 : j + 1;
        std::memcpy(nslots + j * stride_, r.p, stride_);
    }
    block_.swap(block);  // the old slots are freed with `block`
    add_bytes(slot_bytes(ncap, stride_), slot_bytes(cap_, stride_));
    cap_ = ncap;
    cursor_ = ncursor;
    hint_cap_.store(0, std::memory_order_relaxed);
    hint_slots_.store(nslots, std::memory_order_relaxed);
    hint_cap_.store(cap_, std::memory_order_relaxed);
}

// Records were only removed since prepare_insert: the table grows (with the
// room's slots) exactly when it was full then and still is.
Table::Rec Table::insert(const void *key, size_t len, const Hash128 &h, Room *room) noexcept {
    if (full_for(count_ + 1, cap_)) {
        rebuild_into(room->slots, room->cap, 0);
    }
    uint8_t *copy = nullptr;
    if (len > kInlineKey) std::swap(copy, room->key);
    size_t i = home(h);
    while (!at(i).empty()) i = next(i);
    Rec r = at(i);
    std::memset(r.p, 0, stride_);
    if (copy) {
        r.p[8] = kOutOfLine;
        const uint64_t n = len;
        std::memcpy(r.p + 9, &copy, sizeof copy);
        std::memcpy(r.p + 17, &n, 8);
        add_bytes(len, 0);
    } else {
        r.p[8] = uint8_t(len + 1);
        if (len) std::memcpy(r.p + 9, key, len);
    }
    ++count_;
    key_bytes_ += len;
    return r;
}

// 3/4 full, and with room for 1/8 more records plus one before it grows
// (so that an insert right after a shrink does not grow, and tables of a
// few dozen slots, where 3/4 and 85% are a record or two apart, keep some
// hysteresis too).
size_t Table::shrunk_capacity(size_t count) {
    size_t cap = std::max(kMinCapacity, (count * 4 + 2) / 3);
    while (full_for(count + count / 8 + 1, cap)) ++cap;
    return cap;
}

bool Table::shrink() noexcept {
    if (!sparse()) return false;
    const size_t ncap = shrunk_capacity(count_);
    if (ncap >= cap_) return false;
    // smaller than the table: no overflow; on failure the bigger table stays
    ZeroedBlock block;
    try {
        block = ZeroedBlock(ncap * stride_);
    } catch (const std::bad_alloc &) {
        return false;
    }
    // The sweep goes on from the same place in hash order (a record's home
    // is monotonic in its hash): the records left are mostly those the
    // sweep has not reached, and a cursor back at 0 would walk through the
    // emptied part first (a full table's search for idle keys would find
    // none there).
    rebuild_into(block, ncap, size_t(uint64_t(cursor_) * ncap / cap_));
    return true;
}

void Table::erase(Rec r) {
    release(r);
    size_t i = size_t(r.p - slots()) / stride_;
    // backward-shift deletion: pull later records of the same run back
    for (size_t j = next(i);; j = next(j)) {
        Rec q = at(j);
        if (q.empty()) break;
        const size_t want = home(key_hash(q.key(), q.key_len(), seed_));
        // q may move to i when its home is not cyclically in (i, j]
        const bool in_between = i <= j ? (want > i && want <= j) : (want > i || want <= j);
        if (!in_between) {
            std::memcpy(at(i).p, q.p, stride_);
            i = j;
        }
    }
    std::memset(at(i).p, 0, stride_);
    --count_;
}

// Two passes, so that the records removed are those the slots held when
// the sweep began (the ones count() counts): the first marks them, the
// second erases them. An erase pulls later records of the run back by
// backward shift, towards the slot it empties and never past it, so the
// second pass, looking again at a slot after each erase, meets every
// marked record before the end of the slots. (A sweep that erased as it
// went lost a step at each erase, looking at the same slot again, so it
// could leave an idle record of its slots that count() had counted, and
// tf_rate_limiter_peek could promise a full table room that the acquire
// then did not make.)
template <class F>
size_t Table::sweep(size_t slots, F &&idle) {
    if (count_ == 0) return 0;
    if (slots > cap_) slots = cap_;
    size_t marked = 0, c = cursor_;
    for (size_t s = 0; s < slots; ++s) {
        c = next(c);
        Rec r = at(c);
        if (!r.empty() && idle(r)) {
            r.p[8] = uint8_t(r.p[8] | kDoomed);
            ++marked;
        }
    }
    const size_t end = c;  // the last slot looked at: where the next sweep goes on
    c = cursor_;
    for (size_t left = marked; left > 0;) {
        c = next(c);
        while ((at(c).code() & kDoomed) != 0) {
            erase(at(c));
            --left;
        }
    }
    cursor_ = end;
    return marked;
}

template <class F>
size_t Table::count(size_t slots, F &&idle) const {
    if (count_ == 0) return 0;
    if (slots > cap_) slots = cap_;
    size_t c = cursor_, n = 0;
    for (size_t s = 0; s < slots; ++s) {
        c = next(c);
        if (!at(c).empty() && idle(at(c))) ++n;
    }
    return n;
}

// ---- the limiter -------------------------------------------------------------

tf_status RateLimiter::check(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags) {
    if (tf_status st = check_flags(flags, kCreationFlags); st != TF_OK) return st;
    const bool exact = flags & TF_RATE_LIMITER_EXACT;
    if (limit == 0) return fail(TF_ERR_INVALID_ARGUMENT, "limit must be >= 1");
    const uint64_t max = exact ? TF_RATE_LIMITER_MAX_EXACT_LIMIT : TF_RATE_LIMITER_MAX_KEY_LIMIT;
    if (limit > max)
        return fail(TF_ERR_INVALID_ARGUMENT, "limit %llu exceeds the %s mode's maximum of %llu",
                    (unsigned long long)limit, exact ? "exact" : "bucketed", (unsigned long long)max);
    if (window == 0) return fail(TF_ERR_INVALID_ARGUMENT, "window must be >= 1");
    if (!exact) {
        if (width == 0) return fail(TF_ERR_INVALID_ARGUMENT, "bucket_width must be >= 1");
        if (window % width != 0)
            return fail(TF_ERR_INVALID_ARGUMENT, "bucket_width %llu does not divide window %llu",
                        (unsigned long long)width, (unsigned long long)window);
        if (window / width > TF_RATE_LIMITER_MAX_BUCKETS)
            return fail(TF_ERR_INVALID_ARGUMENT, "window / bucket_width = %llu buckets, more than %u",
                        (unsigned long long)(window / width), TF_RATE_LIMITER_MAX_BUCKETS);
    }
    return TF_OK;
}

TF_NO_FUZZ_COVERAGE RateLimiter::RateLimiter(uint64_t limit, uint64_t window, uint64_t width, uint32_t seed,
                                             uint32_t flags)
    : limit_(limit), window_(window), seed_(seed), flags_(flags) {
    const bool ex = exact();
    spec_ = ex ? BucketSpec(window, 1) : BucketSpec(width, uint32_t(window / width));
    for (Shard &s : shards_) s.table.init(record_stride(ex, spec_.nb), ex, seed);
}

uint32_t RateLimiter::override_of(const void *key, size_t len) const {
    if (!has_overrides_.load(std::memory_order_acquire)) return 0;  // no lock for the common case
    std::shared_lock<std::shared_mutex> lock(overrides_mu_);
    auto it = overrides_.find(std::string(static_cast<const char *>(key), len));
    return it == overrides_.end() ? 0 : it->second;
}

uint64_t RateLimiter::limit_of(Table::Rec r) const {
    if (exact()) return ring_of(r)->limit;
    if (r.overridden()) {
        const uint32_t o = override_of(r.key(), r.key_len());
        if (o) return o;
    }
    return limit_;
}

Decision RateLimiter::key_decide(Table::Rec r, uint64_t t, uint64_t limit, uint64_t n) const {
    if (exact()) return exact_decide(ring_of(r)->read(), window_, t, limit, n);
    return bucket_decide(spec_, KeyBuckets{r}, t, limit, n);
}

void RateLimiter::key_advance(Table::Rec r, uint64_t t) {
    if (exact()) {
        uint64_t latest = r.latest();
        exact_advance(ring_of(r)->view(&latest), window_, t);
        r.set_latest(latest);
    } else {
        KeyBuckets st{r};
        bucket_advance(spec_, st, t);
    }
}

// Records n permits at t (the state was advanced to t; an exact ring has
// room, reserve_ring).
void RateLimiter::key_take(Table::Rec r, uint64_t t, uint64_t n) {
    if (exact()) {
        uint64_t latest = r.latest();
        exact_take(ring_of(r)->view(&latest), t, n);
    } else {
        KeyBuckets st{r};
        bucket_take(spec_, st, n);
    }
}

void RateLimiter::reserve_ring(Shard &sh, Table::Rec r, uint64_t need) {
    GrantRing *g = ring_of(r);
    if (need <= g->cap) return;
    GrantRing *bigger = g->grown(need);
    if (!bigger) throw std::bad_alloc();
    sh.table.add_extra(bigger->size(), g->size());
    std::free(g);
    set_ring(r, bigger);
}

void RateLimiter::global_advance(uint64_t t) {
    if (exact()) {
        exact_advance(global_ring_->view(&global_latest_), window_, t);
    } else {
        GlobalBuckets st{global_counts_.data(), &global_total_, &global_latest_};
        bucket_advance(spec_, st, t);
    }
}

Decision RateLimiter::global_decide(uint64_t t, uint64_t n) const {
    if (exact()) return exact_decide(global_ring_->read(), window_, t, global_limit_, n);
    return bucket_decide(spec_, GlobalBucketsRead{global_counts_.data(), global_total_, global_latest_}, t,
                         global_limit_, n);
}

void RateLimiter::global_take(uint64_t t, uint64_t n) {
    if (exact()) {
        ExactView v = global_ring_->view(&global_latest_);
        exact_advance(v, window_, t);
        exact_take(v, t, n);
    } else {
        GlobalBuckets st{global_counts_.data(), &global_total_, &global_latest_};
        bucket_advance(spec_, st, t);
        bucket_take(spec_, st, n);
    }
}

bool RateLimiter::reserve_key() {
    const uint64_t max = max_keys_.load();
    uint64_t cur = keys_.load();
    do {
        if (max != 0 && cur >= max) return false;
    } while (!keys_.compare_exchange_weak(cur, cur + 1));
    return true;
}

size_t RateLimiter::sweep_shard(Shard &sh, size_t slots, uint64_t now) {
    const size_t gone = sh.table.sweep(slots, [&](Table::Rec r) {
        if (!idle(r, now)) return false;
        sh.horizon = std::max(sh.horizon, sat_add(r.latest(), window_));
        return true;
    });
    if (gone) keys_ -= gone, reclaimed_ += gone;
    return gone;
}

// Room for new keys in a full table: `need` idle records (more than one
// when the bound was lowered below the keys tracked), from the caller's
// shard, then from each other shard whose lock is free, 16 slots each, so
// that idle keys are found wherever they are without a full scan. Returns
// how many were reclaimed (peek: found). After a search that found too few,
// the next 63 full-table requests only look at their own shard (a flood of
// new keys into a full table of busy keys costs little).
template <class Visit>
size_t RateLimiter::search_room(size_t own, uint64_t need, bool look_only, Visit &&visit) const {
    size_t found = visit(own);
    if (found >= need) return found;
    const uint32_t skip = room_skip_.load(std::memory_order_relaxed);
    if (skip > 0) {  // peek answers as acquire would, without counting
        if (!look_only) room_skip_.store(skip - 1, std::memory_order_relaxed);
        return found;
    }
    for (size_t i = 1; i < kShards && found < need; ++i) {
        const size_t other = (own + i) % kShards;
        const Shard &o = shards_[other];
        if (!o.mu.try_lock()) continue;
        found += visit(other);
        o.mu.unlock();
    }
    if (found < need && !look_only) room_skip_.store(63, std::memory_order_relaxed);
    return found;
}

constexpr size_t kRoomSlots = 16;  // slots of each shard a search for room looks at

// Another shard that gave up keys is shrunk when it became sparse (the
// caller's own shard, which holds a Room for the new key, after the
// insert: acquire_hashed).
size_t RateLimiter::make_room(Shard &own, uint64_t now, uint64_t need) {
    const size_t mine = size_t(&own - shards_);
    return search_room(mine, need, false, [&](size_t i) {
        const size_t gone = sweep_shard(shards_[i], kRoomSlots, now);
        if (i != mine) shards_[i].table.shrink();
        return gone;
    });
}

size_t RateLimiter::count_room(const Shard &own, uint64_t now, uint64_t need) const {
    return search_room(size_t(&own - shards_), need, true, [&](size_t i) {
        return shards_[i].table.count(kRoomSlots, [&](Table::Rec r) { return idle(r, now); });
    });
}

// Keys that go idle where no new key arrives are reclaimed too: every 16th
// acquire of a shard sweeps 8 slots of another shard (round robin; one
// sequential run of memory), when its lock is free.
void RateLimiter::background_sweep(size_t shard, uint64_t now) {
    Shard &o = shards_[shard];
    if (!o.mu.try_lock()) return;
    sweep_shard(o, 8, now);
    o.table.shrink();
    o.mu.unlock();
}

tf_status RateLimiter::set_global_limit(uint64_t limit) {
    if (exact() && limit > (uint64_t(1) << 24))
        return fail(TF_ERR_INVALID_ARGUMENT, "an exact global limit must be <= 2^24, got %llu",
                    (unsigned long long)limit);
    std::vector<uint64_t> counts;
    std::unique_ptr<GrantRing, FreeRing> ring;
    if (limit != 0) {  // may throw: nothing changed yet
        if (exact())
            ring.reset(GrantRing::make(0, uint32_t(limit), wide_rings()));  // grows with the grants
        else
            counts.assign(spec_.nb, 0);
    }
    // Every lock: no acquire that saw the old limit is still deciding, and
    // every key's latest time is known.
    AllLocked all(*this);
    global_counts_.swap(counts);
    global_ring_.swap(ring);
    global_limit_ = limit;
    global_latest_ = limit != 0 ? global_start() : 0;
    global_total_ = 0;
    publish_global();
    return TF_OK;
}

// The clock of a new global window: past every time a key has seen (in
// bucketed mode, at the start of the next bucket). The permits the keys
// took before are not in the new window, and a refund gives a key's
// permits back to the global window by their times (or buckets), so the
// window's grants must not share a time (or a bucket) with them: a refund
// of an older permit would take away one of another key's grants, and the
// global limit would be exceeded. 0 when no key has seen a time. At the
// very end of time (a key at 2^64 - 1, or its bucket the last) the window
// starts there, and only a permit taken at that time (or in that bucket)
// before the limit was set could be refunded to it.
uint64_t RateLimiter::global_start() const {
    uint64_t latest = 0;
    for (const Shard &s : shards_) s.table.for_each([&](Table::Rec r) { latest = std::max(latest, r.latest()); });
    if (latest == 0) return 0;
    if (exact()) return sat_add(latest, 1);
    const uint64_t j = spec_.bucket(latest);  // the next bucket starts at (j + 1) width
    return j >= UINT64_MAX / spec_.width ? UINT64_MAX : (j + 1) * spec_.width;
}

tf_status RateLimiter::set_key_limit(const void *key, size_t len, uint64_t limit) {
    const uint64_t max = exact() ? TF_RATE_LIMITER_MAX_EXACT_LIMIT : TF_RATE_LIMITER_MAX_KEY_LIMIT;
    if (limit > max)
        return fail(TF_ERR_INVALID_ARGUMENT, "limit %llu exceeds the maximum of %llu", (unsigned long long)limit,
                    (unsigned long long)max);
    const Hash128 h = key_hash(key, len, seed_);
    Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    {  // may throw: nothing changed yet
        std::unique_lock<std::shared_mutex> olock(overrides_mu_);
        std::string k(static_cast<const char *>(key), len);
        if (limit) {
            if (overrides_.insert_or_assign(k, uint32_t(limit)).second)
                override_bytes_now_.fetch_add(override_bytes(len), std::memory_order_relaxed);
        } else if (overrides_.erase(k)) {
            override_bytes_now_.fetch_sub(override_bytes(len), std::memory_order_relaxed);
        }
        has_overrides_.store(!overrides_.empty(), std::memory_order_release);
    }
    Table::Rec r = sh.table.find(key, len, h);
    if (!r.p) return TF_OK;
    r.set_overridden(limit != 0);
    if (exact()) {  // the ring carries the key's limit and keeps the newest grants that fit
        GrantRing *g = ring_of(r);
        g->limit = uint32_t(limit ? limit : limit_);
        if (g->count > g->limit) {
            g->start = ring_slot(uint64_t(g->start) + (g->count - g->limit), g->cap);
            g->count = g->limit;
        }
    }
    return TF_OK;
}

size_t RateLimiter::acquire_batch(const void *const *keys, const size_t *lens, size_t count, const uint64_t *times,
                                  uint64_t n, Decision *out) {
    // A decision waits for its record's cache line; one call per key cannot
    // overlap that wait with the next key's. Here the hashes run kAhead keys
    // ahead and their lines are prefetched, so the misses overlap.
    constexpr size_t kAhead = 8;
    Hash128 hs[kAhead];
    const size_t first = std::min(count, kAhead);
    for (size_t i = 0; i < first; ++i) {
        hs[i] = key_hash(keys[i], lens[i], seed_);
        shard_of(hs[i]).table.prefetch(hs[i]);
    }
    for (size_t i = 0; i < count; ++i) {
        const Hash128 h = hs[i % kAhead];
        if (i + kAhead < count) {
            Hash128 &a = hs[i % kAhead];
            a = key_hash(keys[i + kAhead], lens[i + kAhead], seed_);
            shard_of(a).table.prefetch(a);
        }
        try {
            acquire_hashed(keys[i], lens[i], h, times[i], n, &out[i]);
        } catch (const std::bad_alloc &) {
            return i;
        }
    }
    return count;
}

// A tracked key: its window is brought to its clock (the README's step 1,
// granted or not), which never goes back. An exact ring is advanced in
// commit, once every allocation the grant needs has succeeded: here the
// decision is made on it as it is (reserve_key_state then makes it hold
// the grants, used + n, that is limit - remaining). A bucketed window is
// advanced here: that mode allocates nothing after this (its limit, which
// may copy a long key to find its override, is read first).
__attribute__((always_inline)) inline void RateLimiter::acquire_tracked(Request &q, uint64_t now, uint64_t n) {
    q.t = std::max(now, q.rec.latest());
    if (exact()) {
        q.d = key_decide(q.rec, q.t, ring_of(q.rec)->limit, n);
        return;
    }
    const uint64_t limit = limit_of(q.rec);
    key_advance(q.rec, q.t);
    q.d = key_decide(q.rec, q.t, limit, n);
}

Decision RateLimiter::decide_new(const Shard &sh, const void *key, size_t len, uint64_t now, uint64_t n,
                                 uint32_t *override_limit) const {
    const uint32_t o = override_of(key, len);
    *override_limit = o;
    Decision d = empty_decide(o ? o : limit_, n);
    if (d.allowed && now < sh.horizon) {  // it may still hold permits until then
        d.allowed = false;
        d.remaining = 0;
        d.retry_at = sh.horizon;
    }
    return d;
}

void RateLimiter::not_tracked(Admission a, Request &q) {
    if (a == Admission::kUntracked) {  // fail open
        q.untracked = true;
        q.d.remaining = 0;
    } else if (a == Admission::kDenied) {  // fail closed; the global window's clock still moves
        q.d = deny_never();
    }
}

// A key without a record: its window is empty, but a key this shard
// reclaimed may have had grants until the shard's horizon. Granted, it
// needs a place in the table (prepare_new, then place_new).
__attribute__((always_inline)) inline void RateLimiter::acquire_new(const Shard &sh, const void *key, size_t len,
                                                                    uint64_t now, uint64_t n, Request &q,
                                                                    NewKey *fresh) {
    q.fresh = true;
    q.t = now;
    q.d = decide_new(sh, key, len, now, n, &fresh->override_limit);
}

__attribute__((always_inline)) inline void RateLimiter::reserve_key_state(Shard &sh, Request &q, const void *key,
                                                                          size_t len, uint64_t n, NewKey *fresh) {
    if (!q.d.allowed) return;
    if (q.fresh)
        prepare_new(sh, key, len, n, fresh);
    else if (exact())
        reserve_ring(sh, q.rec, ring_of(q.rec)->limit - q.d.remaining);
}

// A new key's exact ring, sized for its first n grants, and its room in
// the table, made before anything changes: place_new may reclaim idle keys
// (admit, insert_new), and nothing can fail after that.
void RateLimiter::prepare_new(const Shard &sh, const void *key, size_t len, uint64_t n, NewKey *fresh) const {
    if (exact()) {
        const uint32_t limit = uint32_t(fresh->override_limit ? fresh->override_limit : limit_);
        fresh->ring.reset(GrantRing::make(GrantRing::grown_capacity(0, n, limit), limit, wide_rings()));
    }
    sh.table.prepare_insert(key, len, &fresh->room);
}

void RateLimiter::place_new(Shard &sh, const void *key, size_t len, const Hash128 &h, uint64_t now, Request &q,
                            NewKey *fresh) {
    const Admission a = admit(sh, now);
    if (a == Admission::kTracked)
        q.rec = insert_new(sh, key, len, h, now, fresh);
    else
        not_tracked(a, q);
}

// Room for a new key under the key bound: a key slot, reclaiming idle keys
// of a full table first. Without room the table is full: the key is
// admitted untracked with TF_RATE_LIMITER_FULL_ALLOW (fail open), denied
// for good otherwise (fail closed, counted).
RateLimiter::Admission RateLimiter::admit(Shard &sh, uint64_t now) {
    if (reserve_key()) return Admission::kTracked;
    const uint64_t max = max_keys_.load(), k = keys_.load();
    if (make_room(sh, now, k >= max ? k - max + 1 : 1) > 0 && reserve_key()) return Admission::kTracked;
    const Admission a = no_room();
    if (a == Admission::kDenied) denied_full_++;
    return a;
}

RateLimiter::Admission RateLimiter::admission(const Shard &sh, uint64_t now) const {
    const uint64_t max = max_keys_.load(), k = keys_.load();
    if (max == 0 || k < max || count_room(sh, now, k - max + 1) >= k - max + 1) return Admission::kTracked;
    return no_room();
}

// Inserts the record of a new key that holds a key slot, with the ring
// and room prepare_new made for it: a little of its shard is reclaimed
// first.
Table::Rec RateLimiter::insert_new(Shard &sh, const void *key, size_t len, const Hash128 &h, uint64_t now,
                                   NewKey *fresh) noexcept {
    sweep_shard(sh, 4, now);
    Table::Rec rec = sh.table.insert(key, len, h, &fresh->room);
    if (fresh->override_limit) rec.set_overridden(true);
    if (exact()) {
        GrantRing *ring = fresh->ring.release();
        set_ring(rec, ring);
        sh.table.add_extra(ring->size(), 0);
    }
    return rec;
}

// Exact mode: a grant takes a place in the global window's ring, which is
// grown (a copy, put in place by acquire_global) before the request
// changes anything. The lock is held from here to acquire_global, so that
// the window is then as it was here. The bucketed window allocates
// nothing: acquire_global takes its lock.
__attribute__((always_inline)) inline void RateLimiter::reserve_global(const Request &q, uint64_t n, GlobalHold *gh) {
    if (!exact() || !q.d.allowed) return;
    gh->looked = true;
    if (global_limit_.load(std::memory_order_acquire) != 0) grow_global(q, n, gh);
}

void RateLimiter::grow_global(const Request &q, uint64_t n, GlobalHold *gh) {
    gh->lock = std::unique_lock<std::mutex>(global_mu_);
    const uint64_t limit = global_limit_;
    if (limit == 0) return;
    const Decision gd = global_decide(std::max(q.t, global_latest_), n);
    if (gd.allowed && limit - gd.remaining > global_ring_->cap) {
        gh->grown.reset(global_ring_->grown(limit - gd.remaining));
        if (!gh->grown) throw std::bad_alloc();
    }
}

// The global window's say in an acquire, when a global limit is set: its
// clock moves with every acquire (granted or not), and a grant takes its
// permits there too. A request reserve_global looked at is decided with
// the limit it saw (none: no lock taken).
__attribute__((always_inline)) inline void RateLimiter::acquire_global(Request &q, uint64_t n, GlobalHold *gh) {
    if (!gh->lock.owns_lock()) {
        if (gh->looked || global_limit_.load(std::memory_order_acquire) == 0) return;
        gh->lock = std::unique_lock<std::mutex>(global_mu_);
    }
    const uint64_t limit = global_limit_;
    if (limit == 0) return;
    const uint64_t gt = std::max(q.t, global_latest_);
    if (exact()) {
        const Decision gd = global_decide(gt, n);
        const Decision d = combine(q.d, gd, n);
        // granted now, so granted in reserve_global (the key's part only
        // turns to a denial since), which grew the ring if it had to
        if (d.allowed && limit - gd.remaining > global_ring_->cap) {
            global_ring_.swap(gh->grown);
            publish_global();
        }
        global_advance(gt);
        q.d = d;
    } else {
        global_advance(gt);
        q.d = combine(q.d, global_decide(gt, n), n);
    }
    if (q.d.allowed) global_take(gt, n);
}

// An acquire's outcome in the key's record: a grant takes the permits (a
// new record starts its clock first; an exact ring is brought to the
// key's clock here, granted or not); a denied new key leaves nothing
// behind.
__attribute__((always_inline)) inline void RateLimiter::commit(Shard &sh, Request &q, uint64_t n) {
    if (q.d.allowed) {
        if (q.untracked) {
            allowed_full_++;
            return;
        }
        if (q.fresh || exact()) key_advance(q.rec, q.t);
        key_take(q.rec, q.t, n);
    } else if (q.fresh) {
        forget_new(sh, q);  // a denied new key leaves nothing behind
    } else if (exact()) {
        key_advance(q.rec, q.t);
    }
}

void RateLimiter::forget_new(Shard &sh, Request &q) {
    if (!q.fresh || !q.rec.p) return;
    sh.table.erase(q.rec);
    keys_--;
}

// One acquire, under its shard's lock, in two phases. First the decisions
// and every allocation the request may need, nothing changed yet (running
// out of memory leaves the limiter as it was): the key's own window
// (acquire_tracked, or acquire_new for a key without a record), the global
// window's exact ring (reserve_global), the key's exact ring or a new
// key's record (reserve_key_state). Then the changes, none of which can
// fail: a granted new key's place in the table (place_new, where idle keys
// are reclaimed), the global window (acquire_global), the permits taken or
// a new record undone (commit). Every 16th acquire of a shard sweeps
// another shard afterwards.
void RateLimiter::acquire_hashed(const void *key, size_t len, const Hash128 &h, uint64_t now, uint64_t n,
                                 Decision *out) {
    Shard &sh = shard_of(h);
    size_t sweep = kShards;  // the shard to sweep afterwards, if any
    NewKey fresh;            // what it holds when not used is freed after the lock
    sh.table.prefetch(h);    // the record's line loads while the lock is taken
    {
        std::lock_guard<ShardLock> lock(sh.mu);
        Request q{sh.table.find(key, len, h), false, false, now, *out};
        GlobalHold gh;
        if (q.rec.p)
            acquire_tracked(q, now, n);
        else
            acquire_new(sh, key, len, now, n, q, &fresh);
        reserve_global(q, n, &gh);
        reserve_key_state(sh, q, key, len, n, &fresh);
        if (q.fresh && q.d.allowed) place_new(sh, key, len, h, now, q, &fresh);
        acquire_global(q, n, &gh);
        if (gh.lock.owns_lock()) gh.lock.unlock();
        commit(sh, q, n);
        // a new key's insert swept its shard (and a full table may have
        // reclaimed there): the table shrinks when that left it sparse
        if (q.fresh) sh.table.shrink();
        if ((++sh.ops & 15) == 0) sweep = size_t(&sh - shards_ + (sh.ops >> 4)) % kShards;
    }
    if (sweep < kShards) background_sweep(sweep, now);
}

// The decision acquire_hashed would make, in the same steps, changing
// nothing: no clock moves, no record is made, a full table is only looked
// at.
void RateLimiter::peek_hashed(const void *key, size_t len, const Hash128 &h, uint64_t now, uint64_t n,
                              Decision *out) const {
    const Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    Request q{sh.table.find(key, len, h), false, false, now, *out};
    if (q.rec.p) {
        q.t = std::max(now, q.rec.latest());
        q.d = key_decide(q.rec, q.t, limit_of(q.rec), n);
    } else {
        uint32_t o;
        q.d = decide_new(sh, key, len, now, n, &o);
        if (q.d.allowed) not_tracked(admission(sh, now), q);
    }
    if (global_limit_.load(std::memory_order_acquire) == 0) return;
    std::lock_guard<std::mutex> g(global_mu_);
    if (global_limit_ == 0) return;
    q.d = combine(q.d, global_decide(std::max(q.t, global_latest_), n), n);
}

void RateLimiter::refund(const void *key, size_t len, uint64_t now, uint64_t n) {
    const Hash128 h = key_hash(key, len, seed_);
    Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    if (!r.p) return;
    const uint64_t t = std::max(now, r.latest());
    std::unique_lock<std::mutex> g(global_mu_, std::defer_lock);
    const bool global = global_limit_.load(std::memory_order_acquire) != 0;
    if (global) g.lock();
    // the global window gives back the same permits: the key's buckets, or
    // its grant times. Its state is read only under its lock: without a
    // global limit seen, a set_global_limit and an acquire may be changing
    // it meanwhile.
    const bool to_global = global && global_limit_ != 0;
    const uint64_t gt = to_global ? std::max(t, global_latest_) : t;
    if (exact()) {
        uint64_t latest = r.latest();
        ExactView v = ring_of(r)->view(&latest);
        exact_advance(v, window_, t);
        if (to_global) exact_advance(global_ring_->view(&global_latest_), window_, gt);
        exact_refund(v, n, [&](uint64_t time) {
            if (to_global) exact_remove(global_ring_->view(&global_latest_), time);
        });
        r.set_latest(latest);
    } else {
        KeyBuckets st{r};
        bucket_advance(spec_, st, t);
        GlobalBuckets gs{to_global ? global_counts_.data() : nullptr, &global_total_, &global_latest_};
        if (to_global) bucket_advance(spec_, gs, gt);
        bucket_refund(spec_, st, n, [&](uint64_t j, uint64_t b) {
            if (to_global) bucket_remove(spec_, gs, j, b);
        });
    }
}

void RateLimiter::reset(const void *key, size_t len) {
    const Hash128 h = key_hash(key, len, seed_);
    Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    if (r.p) {
        sh.table.erase(r);
        keys_--;
        sh.table.shrink();
    }
}

// The capacity of a std::string made from `key_len` bytes: its inline
// buffer, or exactly the bytes (as std::string(ptr, len) and its copies
// allocate them), plus what a node of the map costs.
size_t RateLimiter::override_bytes(size_t key_len) {
    static const size_t inline_capacity = std::string().capacity();
    return std::max(key_len, inline_capacity) + 48;
}

TF_NO_FUZZ_COVERAGE void RateLimiter::stats(tf_rate_limiter_stats *out) const {
    out->keys = keys_.load();
    out->reclaimed = reclaimed_.load();
    out->denied_full = denied_full_.load();
    out->allowed_full = allowed_full_.load();
    out->memory = memory();
}

// Without any lock: each part as of its last change (the header's
// thread-safety note says what a concurrent call sees).
TF_NO_FUZZ_COVERAGE size_t RateLimiter::memory() const {
    size_t b = sizeof(*this);
    for (const Shard &s : shards_) b += s.table.bytes();
    b += global_bytes_now_.load(std::memory_order_relaxed);
    b += override_bytes_now_.load(std::memory_order_relaxed);
    return b;
}

void RateLimiter::info(tf_rate_limiter_info *out) const {
    out->limit = limit_;
    out->window = window_;
    out->bucket_width = exact() ? 0 : spec_.width;
    out->global_limit = global_limit_.load(std::memory_order_acquire);
    out->max_keys = max_keys_.load();
    out->seed = seed_;
    out->flags = flags_;
}

// ---- wire format ---------------------------------------------------------
//
// Payload of kind 4 (docs/wire-format.md), little-endian, field by field;
// the envelope's flags are the creation flags, and kSeedWireFlag (bit 2)
// when the seed is not 0. nb = window / bucket width (bucketed mode), G =
// global limit.
//
//   size        field
//   8           limit (u64): the default per-key limit
//   8           window (u64)
//   8           bucket width (u64); the window itself in exact mode
//   8           max_keys (u64), 0 for no bound
//   8           G (u64), 0 for none
//   8           reclaimed (u64)
//   8           denied_full (u64)
//   8           allowed_full (u64)
//   8           horizon (u64): the latest of the shards' reclaim horizons
//   8           global latest (u64): the global window's clock, 0 when G = 0
//   4           seed (u32), only with flag bit 2; never 0 (a seed of 0 is
//               written by leaving the field out)
//   global window, only when G != 0:
//     bucketed: 8 * nb    counts (u64), bucket j in slot j mod nb
//     exact:    4         count c (u32), c <= G
//               8 * c     grant times (u64), oldest first
//   8           override count o (u64), then o times:
//     4           limit (u32), 1 .. the mode's maximum
//     4           key length k (u32)
//     k           key bytes
//   8           key count n (u64), then n times:
//     4           key length k (u32)
//     k           key bytes
//     8           latest (u64): the key's clock, >= 1
//     bucketed: 2 * nb    counts (u16), slot order (their sum fits a u16)
//     exact:    4         count c (u32), c <= the key's limit
//               8 * c     grant times (u64), oldest first, <= latest
//
// Overrides and keys are in increasing order of their bytes (shorter first
// on a common prefix), so equal states give equal blobs whatever the
// tables' history.

TF_NO_FUZZ_COVERAGE void RateLimiter::lock_all() const {
    for (const Shard &s : shards_) s.mu.lock();
    global_mu_.lock();
    overrides_mu_.lock_shared();
}

TF_NO_FUZZ_COVERAGE void RateLimiter::unlock_all() const {
    overrides_mu_.unlock_shared();
    global_mu_.unlock();
    for (const Shard &s : shards_) s.mu.unlock();
}

// Bucketed records are all the same size but for their keys: the size
// comes from the tables' counts and key bytes, without visiting a record
// (serialized_size); exact ones hold their rings' grants, so they are
// visited, once (serialize gathers them for write_payload in that pass).
TF_NO_FUZZ_COVERAGE size_t RateLimiter::payload_size(std::vector<Table::Rec> *recs) const {
    size_t n = 9 * 8 + 8 + (seed_ != 0 ? 4 : 0);
    if (global_limit_) n += exact() ? 4 + 8 * size_t(global_ring_->count) : 8 * size_t(spec_.nb);
    n += 8;
    for (const auto &kv : overrides_) n += 8 + kv.first.size();
    n += 8;
    if (recs) {
        size_t total = 0;
        for (const Shard &s : shards_) total += s.table.size();
        recs->reserve(total);
    }
    const size_t fixed = 4 + 8 + (exact() ? 4 : 2 * size_t(spec_.nb));
    for (const Shard &s : shards_) {
        n += s.table.size() * fixed + s.table.key_bytes();
        if (exact() || recs)
            s.table.for_each([&](Table::Rec r) {
                if (exact()) n += 8 * size_t(ring_of(r)->count);
                if (recs) recs->push_back(r);
            });
    }
    return n;
}

TF_NO_FUZZ_COVERAGE void RateLimiter::write_payload(wire::Writer &w, std::vector<Table::Rec> &recs) const {
    uint64_t horizon = 0;
    for (const Shard &s : shards_) horizon = std::max(horizon, s.horizon);
    for (uint64_t v : {limit_, window_, spec_.width, max_keys_.load(), global_limit_.load(), reclaimed_.load(),
                       denied_full_.load(), allowed_full_.load(), horizon})
        w.u64(v);
    w.u64(global_latest_);
    if (seed_ != 0) w.u32(seed_);
    if (global_limit_) {
        if (exact()) {
            const GrantRing &g = *global_ring_;
            w.u32(g.count);
            for (uint32_t i = 0; i < g.count; ++i) w.u64(g.at(i));
        } else {
            for (uint64_t c : global_counts_) w.u64(c);
        }
    }
    std::vector<const std::pair<const std::string, uint32_t> *> over;
    over.reserve(overrides_.size());
    for (const auto &kv : overrides_) over.push_back(&kv);
    std::sort(over.begin(), over.end(), [](auto *a, auto *b) {
        return key_less(reinterpret_cast<const uint8_t *>(a->first.data()), a->first.size(),
                        reinterpret_cast<const uint8_t *>(b->first.data()), b->first.size());
    });
    w.u64(over.size());
    for (auto *kv : over) {
        w.u32(kv->second);
        w.u32(uint32_t(kv->first.size()));
        w.bytes(kv->first.data(), kv->first.size());
    }
    std::sort(recs.begin(), recs.end(),
              [](Table::Rec a, Table::Rec b) { return key_less(a.key(), a.key_len(), b.key(), b.key_len()); });
    w.u64(recs.size());
    for (Table::Rec r : recs) {
        w.u32(uint32_t(r.key_len()));
        w.bytes(r.key(), r.key_len());
        w.u64(r.latest());
        if (exact()) {
            const GrantRing *g = ring_of(r);
            w.u32(g->count);
            for (uint32_t i = 0; i < g->count; ++i) w.u64(g->at(i));
        } else {
            for (uint32_t i = 0; i < spec_.nb; ++i) w.u16(ld16(r.state() + 2 + 2 * size_t(i)));
        }
    }
}

namespace {

const char *const kWhat = "rate limiter blob";

// The fields that open a payload, with what follows from them.
struct PayloadHeader {
    uint64_t limit, window, width, max_keys, global_limit;
    uint64_t reclaimed, denied_full, allowed_full, horizon, global_latest;
    uint32_t seed;
    uint32_t flags;  // the creation flags
    bool exact;
    uint32_t nb;       // buckets per window (1 in exact mode)
    uint64_t key_max;  // the mode's largest per-key limit
};

// The global window of a payload (when a global limit is set); `data`
// points into the blob.
struct PayloadGlobal {
    const uint8_t *data = nullptr;  // exact: `count` u64 times; bucketed: nb u64 counts
    uint32_t count = 0;             // exact: grants held
    uint64_t total = 0;             // bucketed: their sum
};

// One tracked key of a payload; the pointers point into the blob.
struct PayloadKey {
    const uint8_t *key;
    uint32_t len;
    uint64_t latest;
    uint64_t limit;  // its override, or the default limit
    bool overridden;
    const uint8_t *state;  // exact: `count` u64 times; bucketed: nb u16 counts
    uint32_t count;        // exact: grants held
    uint64_t total;        // bucketed: their sum
};

// Checks that `count` u64 times at `p` are ordered, nonzero and <= latest.
bool times_ordered(const uint8_t *p, uint32_t count, uint64_t latest) {
    wire::Reader r(p, 8 * size_t(count));
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t t = r.u64();
        if (t < prev || t > latest || t == 0) return false;
        prev = t;
    }
    return true;
}

tf_status read_header(wire::Reader &r, uint32_t flags, PayloadHeader *h) {
    // the ten fields in the order write_payload writes them
    for (uint64_t *field : {&h->limit, &h->window, &h->width, &h->max_keys, &h->global_limit, &h->reclaimed,
                            &h->denied_full, &h->allowed_full, &h->horizon, &h->global_latest})
        *field = r.u64();
    h->seed = (flags & RateLimiter::kSeedWireFlag) ? r.u32() : 0;
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s: payload too short for its header", kWhat);
    if ((flags & RateLimiter::kSeedWireFlag) && h->seed == 0)
        return fail(TF_ERR_CORRUPT, "%s: a seed field of 0 (a seed of 0 is written without the field)", kWhat);
    h->flags = flags & RateLimiter::kCreationFlags;
    if (RateLimiter::check(h->limit, h->window, h->width, h->flags) != TF_OK)
        return fail_as(TF_ERR_CORRUPT, "rate limiter blob has invalid parameters");
    h->exact = flags & TF_RATE_LIMITER_EXACT;
    h->nb = h->exact ? 1 : uint32_t(h->window / h->width);
    h->key_max = h->exact ? TF_RATE_LIMITER_MAX_EXACT_LIMIT : TF_RATE_LIMITER_MAX_KEY_LIMIT;
    if (h->exact && h->global_limit > (uint64_t(1) << 24))
        return fail(TF_ERR_CORRUPT, "%s: global limit too large", kWhat);
    return TF_OK;
}

tf_status read_global(wire::Reader &r, const PayloadHeader &h, PayloadGlobal *g) {
    const uint64_t glimit = h.global_limit;
    if (glimit == 0) {
        if (h.global_latest != 0) return fail(TF_ERR_CORRUPT, "%s: a global clock without a global limit", kWhat);
        return TF_OK;
    }
    if (h.exact) {
        const uint32_t count = r.u32();
        if (!r.ok() || count > glimit || count > r.remaining() / 8)
            return fail(TF_ERR_CORRUPT, "%s: global window holds %u grants", kWhat, count);
        g->count = count;
        g->data = r.view(8 * size_t(count));
        if (!times_ordered(g->data, count, h.global_latest))
            return fail(TF_ERR_CORRUPT, "%s: global grant times out of order", kWhat);
        return TF_OK;
    }
    if (r.remaining() / 8 < h.nb) return fail(TF_ERR_CORRUPT, "%s: global window truncated", kWhat);
    g->data = r.view(8 * size_t(h.nb));
    wire::Reader counts(g->data, 8 * size_t(h.nb));
    uint64_t total = 0;
    for (uint32_t i = 0; i < h.nb; ++i) {
        const uint64_t c = counts.u64();
        if (c > glimit || total > glimit) return fail(TF_ERR_CORRUPT, "%s: global window over its limit", kWhat);
        total += c;
    }
    if (total > glimit) return fail(TF_ERR_CORRUPT, "%s: global window over its limit", kWhat);
    if (total > 0 && h.global_latest == 0) return fail(TF_ERR_CORRUPT, "%s: global grants without a clock", kWhat);
    g->total = total;
    return TF_OK;
}

// The overrides of a payload: validated once by check(), then walked in
// step with the keys (both are in increasing order of their bytes), so that
// each key's limit is found without building a map.
class Overrides {
   public:
    // Reads and validates the override list at r, leaving r after it.
    tf_status check(wire::Reader &r, uint64_t key_max) {
        count_ = r.u64();
        if (!r.ok() || count_ > r.remaining() / 8)
            return fail(TF_ERR_CORRUPT, "%s: %llu overrides", kWhat, (unsigned long long)count_);
        const size_t start = r.remaining();
        wire::Reader list = r;
        const uint8_t *prev = nullptr;
        uint32_t prev_len = 0;
        for (uint64_t i = 0; i < count_; ++i) {
            const uint32_t lim = r.u32(), klen = r.u32();
            const uint8_t *k = r.view(klen);
            if (!k || lim == 0 || lim > key_max)
                return fail(TF_ERR_CORRUPT, "%s: override %llu is invalid", kWhat, (unsigned long long)i);
            if (prev && !key_less(prev, prev_len, k, klen))
                return fail(TF_ERR_CORRUPT, "%s: overrides out of order or repeated", kWhat);
            prev = k, prev_len = klen;
        }
        list_ = wire::Reader(list.view(start - r.remaining()), start - r.remaining());
        rewind();
        return TF_OK;
    }
    // Calls f(key, len, limit) for each override, in order.
    template <class F>
    void for_each(F &&f) {
        for (rewind(); left_ > 0; next()) f(key_, len_, limit_);
        rewind();
    }
    // The override of `key` (0: none). Successive calls must ask for keys
    // in increasing order.
    uint32_t find(const uint8_t *key, uint32_t len) {
        while (left_ > 0 && key_less(key_, len_, key, len)) next();
        return left_ > 0 && len_ == len && std::memcmp(key_, key, len) == 0 ? limit_ : 0;
    }

   private:
    void rewind() {
        at_ = list_;
        left_ = count_ + 1;
        next();
    }
    void next() {
        if (--left_ == 0) return;
        limit_ = at_.u32();
        len_ = at_.u32();
        key_ = at_.view(len_);
    }
    wire::Reader list_, at_;
    uint64_t count_ = 0, left_ = 0;
    const uint8_t *key_ = nullptr;
    uint32_t len_ = 0, limit_ = 0;
};

// Reads key `i` at r (after `prev`, the key before it, if any).
tf_status read_key(wire::Reader &r, const PayloadHeader &h, uint64_t i, const PayloadKey *prev, Overrides &ov,
                   PayloadKey *k) {
    const unsigned long long at = i;
    k->len = r.u32();
    k->key = r.view(k->len);
    k->latest = r.u64();
    if (!r.ok() || !k->key) return fail(TF_ERR_CORRUPT, "%s: key %llu truncated", kWhat, at);
    if (k->latest == 0) return fail(TF_ERR_CORRUPT, "%s: key %llu has no clock", kWhat, at);
    if (prev && !key_less(prev->key, prev->len, k->key, k->len))
        return fail(TF_ERR_CORRUPT, "%s: keys out of order or repeated at key %llu", kWhat, at);
    const uint32_t o = ov.find(k->key, k->len);
    k->overridden = o != 0;
    k->limit = o ? o : h.limit;
    if (h.exact) {
        k->count = r.u32();
        if (!r.ok() || k->count > k->limit || k->count > r.remaining() / 8)
            return fail(TF_ERR_CORRUPT, "%s: key %llu holds %u grants (limit %llu)", kWhat, at, k->count,
                        (unsigned long long)k->limit);
        k->state = r.view(8 * size_t(k->count));
        if (!times_ordered(k->state, k->count, k->latest))
            return fail(TF_ERR_CORRUPT, "%s: key %llu's grant times are out of order", kWhat, at);
        return TF_OK;
    }
    if (r.remaining() / 2 < h.nb) return fail(TF_ERR_CORRUPT, "%s: key %llu truncated", kWhat, at);
    k->state = r.view(2 * size_t(h.nb));
    k->total = 0;
    wire::Reader counts(k->state, 2 * size_t(h.nb));  // little-endian, whatever the host
    for (uint32_t j = 0; j < h.nb; ++j) k->total += counts.u16();
    // a lowered override may leave a key above its limit; the running
    // total must fit its 16 bits
    if (k->total > TF_RATE_LIMITER_MAX_KEY_LIMIT)
        return fail(TF_ERR_CORRUPT, "%s: key %llu holds %llu permits", kWhat, at, (unsigned long long)k->total);
    return TF_OK;
}

// Validates a whole payload, handing each part to `sink` as it goes:
// begin(header, global), add_override(key, len, limit) for each override,
// key(PayloadKey) for each key, then end().
template <class Sink>
tf_status parse_payload(wire::Reader r, uint32_t flags, Sink &sink) {
    PayloadHeader h;
    tf_status st = read_header(r, flags, &h);
    if (st != TF_OK) return st;
    PayloadGlobal g;
    if ((st = read_global(r, h, &g)) != TF_OK) return st;
    sink.begin(h, g);
    Overrides ov;
    if ((st = ov.check(r, h.key_max)) != TF_OK) return st;
    ov.for_each([&](const uint8_t *k, uint32_t len, uint32_t lim) { sink.add_override(k, len, lim); });
    const uint64_t n_keys = r.u64();
    if (!r.ok() || n_keys > r.remaining() / 12)
        return fail(TF_ERR_CORRUPT, "%s: %llu keys", kWhat, (unsigned long long)n_keys);
    PayloadKey prev{}, cur{};
    for (uint64_t i = 0; i < n_keys; ++i) {
        if ((st = read_key(r, h, i, i ? &prev : nullptr, ov, &cur)) != TF_OK) return st;
        sink.key(cur);
        prev = cur;
    }
    if (!r.done()) return fail(TF_ERR_CORRUPT, "%s has %zu trailing payload bytes", kWhat, r.remaining());
    sink.end();
    return TF_OK;
}

// Whether the ring read from `count` grant times at `data` (little-endian
// u64, oldest first, in a blob) stores them wide (GrantRing::wide_for).
bool blob_ring_wide(uint64_t window, const uint8_t *data, uint32_t count) {
    if (count == 0) return GrantRing::wide_for(window, 0, 0);
    wire::Reader first(data, 8), last(data + 8 * size_t(count - 1), 8);
    return GrantRing::wide_for(window, first.u64(), last.u64());
}

}  // namespace

// Pass 1 of read(): the memory stats() will report for the limiter a
// payload describes, computed without allocating anything.
struct RateLimiter::Measure {
    bool exact = false;
    uint32_t seed = 0;
    uint64_t window = 0;
    size_t stride = 0;
    uint64_t shard_keys[kShards] = {};
    uint64_t bytes = sizeof(RateLimiter);

    void begin(const PayloadHeader &h, const PayloadGlobal &g) {
        exact = h.exact;
        seed = h.seed;
        window = h.window;
        stride = record_stride(h.exact, h.nb);
        bytes += global_bytes(h.exact, h.global_limit, h.nb,
                              GrantRing::bytes(g.count, blob_ring_wide(h.window, g.data, g.count)));
    }
    void add_override(const uint8_t *, uint32_t len, uint32_t) { bytes += override_bytes(len); }
    void key(const PayloadKey &k) {
        ++shard_keys[shard_index(key_hash(k.key, k.len, seed))];
        if (k.len > kInlineKey) bytes += k.len;  // an out-of-line key
        if (exact)
            bytes += GrantRing::bytes(k.count, blob_ring_wide(window, k.state, k.count));  // as large as its grants
    }
    TF_NO_FUZZ_COVERAGE void end() {
        for (uint64_t n : shard_keys) bytes += Table::slot_bytes(Table::capacity_for(size_t(n)), stride);
    }
};

// Pass 2 of read(): creates the limiter from a payload pass 1 validated.
// Throws std::bad_alloc (what was built is freed).
struct RateLimiter::Build {
    std::unique_ptr<RateLimiter> rl;
    const uint64_t *shard_keys = nullptr;  // pass 1's count of each shard's keys

    // A ring holding the `count` grant times at `data` (in the blob),
    // exactly as large as they are.
    GrantRing *ring_from(const uint8_t *data, uint32_t count, uint32_t limit) const {
        GrantRing *g = GrantRing::make(count, limit, blob_ring_wide(rl->window_, data, count));
        wire::Reader times(data, 8 * size_t(count));
        uint64_t latest = 0;
        const ExactView v = g->view(&latest);
        for (uint32_t i = 0; i < count; ++i) {
            v.set(i, times.u64());  // they fit 32 bits from the first (blob_ring_wide): at most one rebase
            g->count = i + 1;
        }
        return g;
    }

    void begin(const PayloadHeader &h, const PayloadGlobal &g) {
        rl.reset(new RateLimiter(h.limit, h.window, h.width, h.seed, h.flags));
        rl->max_keys_ = h.max_keys;
        rl->reclaimed_ = h.reclaimed;
        rl->denied_full_ = h.denied_full;
        rl->allowed_full_ = h.allowed_full;
        for (size_t i = 0; i < kShards; ++i) {
            Shard &s = rl->shards_[i];
            s.horizon = h.horizon;
            // the table as large as inserting its keys one by one would
            // make it (what pass 1 counted): one allocation, no rebuild
            s.table.reserve(Table::capacity_for(size_t(shard_keys[i])));
        }
        if (h.global_limit == 0) return;
        if (h.exact) {
            rl->global_ring_.reset(ring_from(g.data, g.count, uint32_t(h.global_limit)));
        } else {
            rl->global_counts_.assign(h.nb, 0);
            wire::Reader counts(g.data, 8 * size_t(h.nb));
            for (uint32_t i = 0; i < h.nb; ++i) rl->global_counts_[i] = counts.u64();
            rl->global_total_ = g.total;
        }
        rl->global_limit_.store(h.global_limit);
        rl->global_latest_ = h.global_latest;
        rl->publish_global();
    }
    void add_override(const uint8_t *k, uint32_t len, uint32_t lim) {
        rl->overrides_.emplace(std::string(reinterpret_cast<const char *>(k), len), lim);
        rl->override_bytes_now_ += override_bytes(len);
    }
    void key(const PayloadKey &k) {
        const Hash128 h = key_hash(k.key, k.len, rl->seed_);
        Table &table = rl->shard_of(h).table;
        Table::Rec rec;
        if (rl->exact()) {
            GrantRing *g = ring_from(k.state, k.count, uint32_t(k.limit));
            try {
                rec = table.insert(k.key, k.len, h);
            } catch (...) {
                std::free(g);
                throw;
            }
            set_ring(rec, g);
            table.add_extra(g->size(), 0);
        } else {
            rec = table.insert(k.key, k.len, h);
            st16(rec.state(), k.total);
            // the blob's counts are little-endian, the record's host-order
            wire::Reader counts(k.state, 2 * size_t(rl->spec_.nb));
            for (uint32_t i = 0; i < rl->spec_.nb; ++i) st16(rec.state() + 2 + 2 * size_t(i), counts.u16());
        }
        rec.set_latest(k.latest);
        if (k.overridden) rec.set_overridden(true);
        rl->keys_++;
    }
    void end() { rl->has_overrides_ = !rl->overrides_.empty(); }
};

tf_status RateLimiter::read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                            std::unique_ptr<RateLimiter> *out) {
    Measure need;
    tf_status st = parse_payload(r, flags, need);
    if (st != TF_OK) return st;
    if ((st = limits.check_memory(need.bytes)) != TF_OK) return st;
    Build build;
    build.shard_keys = need.shard_keys;
    if ((st = parse_payload(r, flags, build)) != TF_OK) return st;
    *out = std::move(build.rl);
    return TF_OK;
}

}  // namespace rate
}  // namespace tf
