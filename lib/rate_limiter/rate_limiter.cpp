#include "rate_limiter/rate_limiter.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "common/memory.hpp"

namespace tf {
namespace rate {

namespace {

// Exact mode: a key's grant times live in a heap ring whose capacity is the
// key's limit.
struct Ring {
    uint32_t cap, start, count, pad;
    uint64_t times[1];
};

size_t ring_bytes(uint32_t cap) { return sizeof(Ring) + sizeof(uint64_t) * (cap ? cap - 1 : 0); }

Ring *ring_of(Table::Rec r) {
    Ring *g;
    std::memcpy(&g, r.state(), sizeof g);
    return g;
}
void set_ring(Table::Rec r, Ring *g) { std::memcpy(r.state(), &g, sizeof g); }

Ring *new_ring(uint32_t cap) {
    void *p = std::calloc(1, ring_bytes(cap));
    if (!p) throw std::bad_alloc();
    Ring *g = static_cast<Ring *>(p);
    g->cap = cap;
    return g;
}

ExactView view_of(Ring *g, uint64_t *latest) { return ExactView{g->times, g->cap, &g->start, &g->count, latest}; }

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

// A fresh key's window is empty.
Decision empty_decide(uint64_t limit, uint64_t n) {
    Decision d;
    d.allowed = n <= limit;
    d.remaining = d.allowed ? limit - n : limit;
    d.retry_at = d.allowed ? 0 : kNever;
    return d;
}

Decision deny_never() {
    Decision d;
    d.retry_at = kNever;
    return d;
}

bool key_less(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    const int c = std::memcmp(a, b, std::min(na, nb));
    return c != 0 ? c < 0 : na < nb;
}

}  // namespace

// ---- the table -------------------------------------------------------------

const uint8_t *Table::Rec::key() const {
    if ((code() & kLenMask) == kOutOfLine) {
        const uint8_t *q;
        std::memcpy(&q, p + 9, sizeof q);
        return q;
    }
    return p + 9;
}

size_t Table::Rec::key_len() const {
    const uint8_t c = code() & kLenMask;
    if (c == kOutOfLine) {
        uint64_t n;
        std::memcpy(&n, p + 17, 8);
        return size_t(n);
    }
    return size_t(c - 1);
}

Table::~Table() {
    for (size_t i = 0; i < cap_; ++i)
        if (!at(i).empty()) release(at(i));
    std::free(slots_);
}

size_t Table::bytes() const { return cap_ * stride_ + extra_; }

void Table::release(Rec r) {
    if ((r.code() & kLenMask) == kOutOfLine) {
        extra_ -= r.key_len();
        std::free(const_cast<uint8_t *>(r.key()));
    }
    if (exact_) {
        Ring *g = ring_of(r);
        if (g) {
            extra_ -= ring_bytes(g->cap);
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

void Table::reserve_one() {
    if ((count_ + 1) * kMaxLoadDen > cap_ * kMaxLoadNum) grow();
}

void Table::grow() {
    // grow by 1/8 (1/4 while small): the load stays within 85% / 1.125
    // = 76% and 85% once the table is large
    const size_t ncap = cap_ < 1024 ? std::max<size_t>(16, cap_ + cap_ / 4) : cap_ + cap_ / 8;
    size_t bytes;
    if (mul_overflows(ncap, stride_, &bytes)) throw std::bad_alloc();
    uint8_t *nslots = static_cast<uint8_t *>(std::calloc(ncap, stride_));
    if (!nslots) throw std::bad_alloc();
    for (size_t i = 0; i < cap_; ++i) {
        Rec r = at(i);
        if (r.empty()) continue;
        const Hash128 h = key_hash(r.key(), r.key_len(), 0);
        size_t j = size_t(reduce(h.h2, ncap));
        while (nslots[j * stride_ + 8] != 0) j = j + 1 == ncap ? 0 : j + 1;
        std::memcpy(nslots + j * stride_, r.p, stride_);
    }
    std::free(slots_);
    slots_ = nslots;
    cap_ = ncap;
    cursor_ = 0;
    hint_cap_.store(0, std::memory_order_relaxed);
    hint_slots_.store(slots_, std::memory_order_relaxed);
    hint_cap_.store(cap_, std::memory_order_relaxed);
}

Table::Rec Table::insert(const void *key, size_t len, const Hash128 &h) {
    reserve_one();
    uint8_t *copy = nullptr;
    if (len > kInlineKey) {
        copy = static_cast<uint8_t *>(std::malloc(len));
        if (!copy) throw std::bad_alloc();
        std::memcpy(copy, key, len);
    }
    size_t i = home(h);
    while (!at(i).empty()) i = next(i);
    Rec r = at(i);
    std::memset(r.p, 0, stride_);
    if (copy) {
        r.p[8] = kOutOfLine;
        const uint64_t n = len;
        std::memcpy(r.p + 9, &copy, sizeof copy);
        std::memcpy(r.p + 17, &n, 8);
        extra_ += len;
    } else {
        r.p[8] = uint8_t(len + 1);
        if (len) std::memcpy(r.p + 9, key, len);
    }
    ++count_;
    return r;
}

void Table::erase(Rec r) {
    release(r);
    size_t i = size_t(r.p - slots_) / stride_;
    // backward-shift deletion: pull later records of the same run back
    for (size_t j = next(i);; j = next(j)) {
        Rec q = at(j);
        if (q.empty()) break;
        const size_t want = home(key_hash(q.key(), q.key_len(), 0));
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

template <class F>
size_t Table::sweep(size_t slots, F &&idle) {
    size_t removed = 0;
    for (size_t s = 0; s < slots && count_ > 0; ++s) {
        cursor_ = next(cursor_);
        Rec r = at(cursor_);
        if (!r.empty() && idle(r)) {
            erase(r);
            ++removed;
            // a record shifted into the cursor's slot is looked at next
            cursor_ = cursor_ == 0 ? cap_ - 1 : cursor_ - 1;
        }
    }
    return removed;
}

template <class F>
size_t Table::count(size_t slots, F &&idle) const {
    size_t c = cursor_, n = 0;
    for (size_t s = 0; s < slots && count_ > 0; ++s) {
        c = next(c);
        if (!at(c).empty() && idle(at(c))) ++n;
    }
    return n;
}

// ---- the limiter -------------------------------------------------------------

tf_status RateLimiter::check(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags) {
    if (flags & ~uint32_t(TF_RATE_LIMITER_EXACT | TF_RATE_LIMITER_FULL_ALLOW))
        return fail(TF_ERR_INVALID_ARGUMENT, "unknown flag bits 0x%x", unsigned(flags));
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

RateLimiter::RateLimiter(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags)
    : limit_(limit), window_(window), flags_(flags) {
    const bool ex = exact();
    spec_ = ex ? BucketSpec(window, 1) : BucketSpec(width, uint32_t(window / width));
    for (Shard &s : shards_) s.table.init(Table::kStateOffset + state_bytes(), ex);
}

uint32_t RateLimiter::override_of(const void *key, size_t len) const {
    if (!has_overrides_.load(std::memory_order_acquire)) return 0;  // no lock for the common case
    std::shared_lock<std::shared_mutex> lock(overrides_mu_);
    auto it = overrides_.find(std::string(static_cast<const char *>(key), len));
    return it == overrides_.end() ? 0 : it->second;
}

uint64_t RateLimiter::limit_of(Table::Rec r) const {
    if (exact()) return ring_of(r)->cap;
    if (r.overridden()) {
        const uint32_t o = override_of(r.key(), r.key_len());
        if (o) return o;
    }
    return limit_;
}

Decision RateLimiter::key_decide(Table::Rec r, uint64_t t, uint64_t limit, uint64_t n) const {
    if (exact()) {
        Ring *g = ring_of(r);
        uint64_t latest = r.latest();
        return exact_decide(view_of(g, &latest), window_, t, limit, n);
    }
    return bucket_decide(spec_, KeyBuckets{r}, t, limit, n);
}

void RateLimiter::key_advance(Table::Rec r, uint64_t t) {
    if (exact()) {
        uint64_t latest = r.latest();
        exact_advance(view_of(ring_of(r), &latest), window_, t);
        r.set_latest(latest);
    } else {
        KeyBuckets st{r};
        bucket_advance(spec_, st, t);
    }
}

// Records n permits at t (the state was advanced to t).
void RateLimiter::key_take(Table::Rec r, uint64_t t, uint64_t n) {
    if (exact()) {
        uint64_t latest = r.latest();
        exact_take(view_of(ring_of(r), &latest), t, n);
    } else {
        KeyBuckets st{r};
        bucket_take(spec_, st, n);
    }
}

void RateLimiter::global_advance(uint64_t t) {
    if (exact())
        exact_advance(ExactView{global_ring_.data(), uint32_t(global_ring_.size()), &global_start_, &global_count_,
                                &global_latest_},
                      window_, t);
    else {
        GlobalBuckets st{global_counts_.data(), &global_total_, &global_latest_};
        bucket_advance(spec_, st, t);
    }
}

Decision RateLimiter::global_decide(uint64_t t, uint64_t n) const {
    if (exact()) {
        uint32_t start = global_start_, count = global_count_;
        uint64_t latest = global_latest_;
        ExactView v{const_cast<uint64_t *>(global_ring_.data()), uint32_t(global_ring_.size()), &start, &count,
                    &latest};
        return exact_decide(v, window_, t, global_limit_, n);
    }
    uint64_t total = global_total_, latest = global_latest_;
    return bucket_decide(spec_, GlobalBuckets{const_cast<uint64_t *>(global_counts_.data()), &total, &latest}, t,
                         global_limit_, n);
}

void RateLimiter::global_take(uint64_t t, uint64_t n) {
    if (exact()) {
        ExactView v{global_ring_.data(), uint32_t(global_ring_.size()), &global_start_, &global_count_,
                    &global_latest_};
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
size_t RateLimiter::make_room(Shard &own, uint64_t now, bool peek, uint64_t need) {
    constexpr size_t kSlots = 16;
    auto idle0 = [&](Table::Rec r) { return idle(r, now); };
    size_t found = peek ? own.table.count(kSlots, idle0) : sweep_shard(own, kSlots, now);
    if (found >= need) return found;
    const uint32_t skip = room_skip_.load(std::memory_order_relaxed);
    if (skip > 0) {  // peek answers as acquire would, without counting
        if (!peek) room_skip_.store(skip - 1, std::memory_order_relaxed);
        return found;
    }
    const size_t self = size_t(&own - shards_);
    for (size_t i = 1; i < kShards && found < need; ++i) {
        Shard &o = shards_[(self + i) % kShards];
        if (!o.mu.try_lock()) continue;
        found += peek ? o.table.count(kSlots, idle0) : sweep_shard(o, kSlots, now);
        o.mu.unlock();
    }
    if (found < need && !peek) room_skip_.store(63, std::memory_order_relaxed);
    return found;
}

// Keys that go idle where no new key arrives are reclaimed too: every 16th
// acquire of a shard sweeps 8 slots of another shard (round robin; one
// sequential run of memory), when its lock is free.
void RateLimiter::background_sweep(size_t shard, uint64_t now) {
    Shard &o = shards_[shard];
    if (!o.mu.try_lock()) return;
    sweep_shard(o, 8, now);
    o.mu.unlock();
}

tf_status RateLimiter::set_global_limit(uint64_t limit) {
    if (exact() && limit > (uint64_t(1) << 24))
        return fail(TF_ERR_INVALID_ARGUMENT, "an exact global limit must be <= 2^24, got %llu",
                    (unsigned long long)limit);
    std::vector<uint64_t> counts, ring;
    if (limit != 0) {  // may throw: nothing changed yet
        if (exact())
            ring.assign(size_t(limit), 0);
        else
            counts.assign(spec_.nb, 0);
    }
    std::lock_guard<std::mutex> lock(global_mu_);
    global_counts_.swap(counts);
    global_ring_.swap(ring);
    global_limit_ = limit;
    global_latest_ = global_total_ = 0;
    global_start_ = global_count_ = 0;
    return TF_OK;
}

tf_status RateLimiter::set_key_limit(const void *key, size_t len, uint64_t limit) {
    const uint64_t max = exact() ? TF_RATE_LIMITER_MAX_EXACT_LIMIT : TF_RATE_LIMITER_MAX_KEY_LIMIT;
    if (limit > max)
        return fail(TF_ERR_INVALID_ARGUMENT, "limit %llu exceeds the maximum of %llu", (unsigned long long)limit,
                    (unsigned long long)max);
    const Hash128 h = key_hash(key, len, 0);
    Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    const uint32_t effective = uint32_t(limit ? limit : limit_);
    Ring *fresh = nullptr;
    if (r.p && exact() && ring_of(r)->cap != effective) fresh = new_ring(effective);  // before any change
    try {
        std::unique_lock<std::shared_mutex> olock(overrides_mu_);
        std::string k(static_cast<const char *>(key), len);
        if (limit)
            overrides_[k] = uint32_t(limit);
        else
            overrides_.erase(k);
        has_overrides_.store(!overrides_.empty(), std::memory_order_release);
    } catch (...) {
        std::free(fresh);
        throw;
    }
    if (r.p) {
        r.set_overridden(limit != 0);
        if (fresh) {  // keep the newest grants that fit
            Ring *old = ring_of(r);
            const uint32_t keep = std::min(old->count, fresh->cap);
            for (uint32_t i = 0; i < keep; ++i)
                fresh->times[i] = old->times[(old->start + old->count - keep + i) % old->cap];
            fresh->count = keep;
            sh.table.add_extra(ring_bytes(fresh->cap), ring_bytes(old->cap));
            std::free(old);
            set_ring(r, fresh);
        }
    }
    return TF_OK;
}

void RateLimiter::acquire_batch(const void *const *keys, const size_t *lens, size_t count, const uint64_t *times,
                                uint64_t n, Decision *out) {
    // A decision waits for its record's cache line; one call per key cannot
    // overlap that wait with the next key's. Here the hashes run kAhead keys
    // ahead and their lines are prefetched, so the misses overlap.
    constexpr size_t kAhead = 8;
    Hash128 hs[kAhead];
    const size_t first = std::min(count, kAhead);
    for (size_t i = 0; i < first; ++i) {
        hs[i] = key_hash(keys[i], lens[i], 0);
        shard_of(hs[i]).table.prefetch(hs[i]);
    }
    for (size_t i = 0; i < count; ++i) {
        const Hash128 h = hs[i % kAhead];
        if (i + kAhead < count) {
            Hash128 &a = hs[i % kAhead];
            a = key_hash(keys[i + kAhead], lens[i + kAhead], 0);
            shard_of(a).table.prefetch(a);
        }
        decide_hashed(keys[i], lens[i], h, times[i], n, true, &out[i]);
    }
}

void RateLimiter::decide_hashed(const void *key, size_t len, const Hash128 &h, uint64_t now, uint64_t n, bool take,
                                Decision *out) {
    Shard &sh = shard_of(h);
    size_t sweep = kShards;  // the shard to sweep afterwards, if any
    sh.table.prefetch(h);    // the record's line loads while the lock is taken
    {
        std::lock_guard<ShardLock> lock(sh.mu);
        if (take && (++sh.ops & 15) == 0) sweep = size_t(&sh - shards_ + (sh.ops >> 4)) % kShards;
        Table::Rec r = sh.table.find(key, len, h);
        const bool fresh = r.p == nullptr;
        bool untracked = false;
        uint64_t t;
        Decision d;
        if (!fresh) {
            t = std::max(now, r.latest());  // the key's own clock never goes back
            if (take) key_advance(r, t);    // the seed's step 1, granted or not
            d = key_decide(r, t, limit_of(r), n);
        } else {
            t = now;
            const uint32_t o = override_of(key, len);
            const uint64_t key_limit = o ? o : limit_;
            d = empty_decide(key_limit, n);
            if (d.allowed && now < sh.horizon) {  // a reclaimed key may have had grants until then
                d.allowed = false;
                d.remaining = 0;
                d.retry_at = sh.horizon;
            }
            if (d.allowed) {
                const uint64_t max = max_keys_.load();
                if (!take) {
                    const uint64_t k = keys_.load();
                    if (max != 0 && k >= max && make_room(sh, now, true, k - max + 1) < k - max + 1) {
                        if (flags_ & TF_RATE_LIMITER_FULL_ALLOW)
                            d.remaining = 0;
                        else
                            d = deny_never();
                    }
                } else {
                    bool room = reserve_key();
                    if (!room) {
                        const uint64_t k = keys_.load();
                        room = make_room(sh, now, false, k >= max ? k - max + 1 : 1) > 0 && reserve_key();
                    }
                    if (!room) {
                        if (flags_ & TF_RATE_LIMITER_FULL_ALLOW) {
                            untracked = true;
                            d.remaining = 0;
                        } else {
                            denied_full_++;
                            d = deny_never();  // the global window's clock still moves, below
                        }
                    }
                    if (d.allowed && !untracked) {
                        // a new key: reclaim a little first, then insert
                        // (nothing changed if that fails)
                        sweep_shard(sh, 4, now);
                        Ring *ring = nullptr;
                        try {
                            if (exact()) ring = new_ring(uint32_t(key_limit));
                            r = sh.table.insert(key, len, h);
                        } catch (...) {
                            std::free(ring);
                            keys_--;
                            throw;
                        }
                        if (o) r.set_overridden(true);
                        if (ring) {
                            set_ring(r, ring);
                            sh.table.add_extra(ring_bytes(ring->cap), 0);
                        }
                    }
                }
            }
        }
        if (global_limit_.load(std::memory_order_acquire) != 0) {
            std::lock_guard<std::mutex> g(global_mu_);
            if (global_limit_ != 0) {
                const uint64_t gt = std::max(t, global_latest_);
                if (take) global_advance(gt);
                d = combine(d, global_decide(gt, n), n);
                if (d.allowed && take) global_take(gt, n);
            }
        }
        if (d.allowed && take) {
            if (untracked) {
                allowed_full_++;
            } else {
                if (fresh) key_advance(r, t);  // a new record starts its clock
                key_take(r, t, n);
            }
        } else if (fresh && r.p) {  // a denied first request leaves nothing behind
            sh.table.erase(r);
            keys_--;
        }
        *out = d;
    }
    if (sweep < kShards) background_sweep(sweep, now);
}

void RateLimiter::refund(const void *key, size_t len, uint64_t now, uint64_t n) {
    const Hash128 h = key_hash(key, len, 0);
    Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    if (!r.p) return;
    const uint64_t t = std::max(now, r.latest());
    std::unique_lock<std::mutex> g(global_mu_, std::defer_lock);
    const bool global = global_limit_.load(std::memory_order_acquire) != 0;
    if (global) g.lock();
    // the global window gives back the same permits: the key's buckets, or
    // its grant times
    const uint64_t gt = std::max(t, global_latest_);
    const bool to_global = global && global_limit_ != 0;
    if (exact()) {
        uint64_t latest = r.latest();
        ExactView v = view_of(ring_of(r), &latest);
        exact_advance(v, window_, t);
        ExactView gv{global_ring_.data(), uint32_t(global_ring_.size()), &global_start_, &global_count_,
                     &global_latest_};
        if (to_global) exact_advance(gv, window_, gt);
        exact_refund(v, n, [&](uint64_t time) {
            if (to_global) exact_remove(gv, time);
        });
        r.set_latest(latest);
    } else {
        KeyBuckets st{r};
        bucket_advance(spec_, st, t);
        GlobalBuckets gs{global_counts_.data(), &global_total_, &global_latest_};
        if (to_global) bucket_advance(spec_, gs, gt);
        bucket_refund(spec_, st, n, [&](uint64_t j, uint64_t b) {
            if (to_global) bucket_remove(spec_, gs, j, b);
        });
    }
}

void RateLimiter::reset(const void *key, size_t len) {
    const Hash128 h = key_hash(key, len, 0);
    Shard &sh = shard_of(h);
    std::lock_guard<ShardLock> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    if (r.p) {
        sh.table.erase(r);
        keys_--;
    }
}

void RateLimiter::stats(uint64_t *keys, uint64_t *reclaimed, uint64_t *denied_full, uint64_t *allowed_full,
                        size_t *bytes) {
    if (keys) *keys = keys_.load();
    if (reclaimed) *reclaimed = reclaimed_.load();
    if (denied_full) *denied_full = denied_full_.load();
    if (allowed_full) *allowed_full = allowed_full_.load();
    if (bytes) {
        size_t b = sizeof(*this);
        for (Shard &s : shards_) {
            std::lock_guard<ShardLock> lock(s.mu);
            b += s.table.bytes();
        }
        {
            std::lock_guard<std::mutex> g(global_mu_);
            b += 8 * (global_counts_.capacity() + global_ring_.capacity());
        }
        std::shared_lock<std::shared_mutex> o(overrides_mu_);
        for (const auto &kv : overrides_) b += kv.first.capacity() + 48;
        *bytes = b;
    }
}

// ---- wire format ---------------------------------------------------------
//
// Payload (kind 4; envelope flags = creation flags), little-endian:
//   u64 limit, u64 window, u64 bucket width, u64 max_keys, u64 global limit,
//   u64 reclaimed, u64 denied_full, u64 allowed_full, u64 horizon (the
//     latest of the shards' reclaim horizons),
//   global window: u64 latest, then, when a global limit is set,
//     bucketed: u64 counts[nb] (bucket j in slot j mod nb),
//     exact: u32 count, u64 times[count] oldest first,
//   u64 override count, each: u32 limit, u32 key length, key bytes,
//   u64 key count, each: u32 key length, key bytes, u64 latest,
//     then bucketed: u16 counts[nb] (slot order); exact: u32 count,
//     u64 times[count] oldest first.
// Overrides and keys are in increasing order of their bytes (shorter first
// on a common prefix), so equal states give equal blobs whatever the
// tables' history.

void RateLimiter::lock_all() {
    for (Shard &s : shards_) s.mu.lock();
    global_mu_.lock();
    overrides_mu_.lock_shared();
}

void RateLimiter::unlock_all() {
    overrides_mu_.unlock_shared();
    global_mu_.unlock();
    for (Shard &s : shards_) s.mu.unlock();
}

size_t RateLimiter::payload_size() const {
    size_t n = 9 * 8 + 8;
    if (global_limit_) n += exact() ? 4 + 8 * size_t(global_count_) : 8 * size_t(spec_.nb);
    n += 8;
    for (const auto &kv : overrides_) n += 8 + kv.first.size();
    n += 8;
    for (const Shard &s : shards_)
        s.table.for_each([&](Table::Rec r) {
            n += 4 + r.key_len() + 8;
            n += exact() ? 4 + 8 * size_t(ring_of(r)->count) : 2 * size_t(spec_.nb);
        });
    return n;
}

void RateLimiter::write_payload(wire::Writer &w) const {
    uint64_t horizon = 0;
    for (const Shard &s : shards_) horizon = std::max(horizon, s.horizon);
    for (uint64_t v : {limit_, window_, spec_.width, max_keys_.load(), global_limit_.load(), reclaimed_.load(),
                       denied_full_.load(), allowed_full_.load(), horizon})
        w.u64(v);
    w.u64(global_latest_);
    if (global_limit_) {
        if (exact()) {
            w.u32(global_count_);
            for (uint32_t i = 0; i < global_count_; ++i) w.u64(global_ring_[(global_start_ + i) % global_ring_.size()]);
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
    std::vector<Table::Rec> recs;
    for (const Shard &s : shards_) recs.reserve(recs.size() + s.table.size());
    for (const Shard &s : shards_) s.table.for_each([&](Table::Rec r) { recs.push_back(r); });
    std::sort(recs.begin(), recs.end(),
              [](Table::Rec a, Table::Rec b) { return key_less(a.key(), a.key_len(), b.key(), b.key_len()); });
    w.u64(recs.size());
    for (Table::Rec r : recs) {
        w.u32(uint32_t(r.key_len()));
        w.bytes(r.key(), r.key_len());
        w.u64(r.latest());
        if (exact()) {
            const Ring *g = ring_of(r);
            w.u32(g->count);
            for (uint32_t i = 0; i < g->count; ++i) w.u64(g->times[(g->start + i) % g->cap]);
        } else {
            for (uint32_t i = 0; i < spec_.nb; ++i) w.u16(ld16(r.state() + 2 + 2 * size_t(i)));
        }
    }
}

tf_status RateLimiter::read(wire::Reader &r, uint32_t flags, std::unique_ptr<RateLimiter> *out) {
    const char *what = "rate limiter blob";
    const uint64_t limit = r.u64(), window = r.u64(), width = r.u64(), max_keys = r.u64(), glimit = r.u64();
    const uint64_t reclaimed = r.u64(), denied = r.u64(), allowed = r.u64(), horizon = r.u64(), glatest = r.u64();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "%s: payload too short for its header", what);
    if (check(limit, window, width, flags) != TF_OK) {
        char why[256];
        std::snprintf(why, sizeof why, "%s", tf_last_error_message());
        return fail(TF_ERR_CORRUPT, "%s has invalid parameters: %s", what, why);
    }
    const bool exact = flags & TF_RATE_LIMITER_EXACT;
    const uint32_t nb = exact ? 1 : uint32_t(window / width);
    const uint64_t key_max = exact ? TF_RATE_LIMITER_MAX_EXACT_LIMIT : TF_RATE_LIMITER_MAX_KEY_LIMIT;
    if (exact && glimit > (uint64_t(1) << 24)) return fail(TF_ERR_CORRUPT, "%s: global limit too large", what);
    // Everything below is validated against the bytes present before it is
    // allocated: counts never exceed what the remaining payload can hold.
    std::unique_ptr<RateLimiter> rl(new RateLimiter(limit, window, width, flags));
    rl->max_keys_ = max_keys;
    rl->reclaimed_ = reclaimed;
    rl->denied_full_ = denied;
    rl->allowed_full_ = allowed;
    for (Shard &s : rl->shards_) s.horizon = horizon;
    if (glimit) {
        if (exact) {
            const uint32_t count = r.u32();
            if (!r.ok() || count > glimit || count > r.remaining() / 8)
                return fail(TF_ERR_CORRUPT, "%s: global window holds %u grants", what, count);
            rl->global_ring_.assign(size_t(glimit), 0);
            uint64_t prev = 0;
            for (uint32_t i = 0; i < count; ++i) {
                const uint64_t t = r.u64();
                if (t < prev || t > glatest || t == 0)
                    return fail(TF_ERR_CORRUPT, "%s: global grant times out of order", what);
                rl->global_ring_[i] = prev = t;
            }
            rl->global_count_ = count;
        } else {
            if (r.remaining() / 8 < nb) return fail(TF_ERR_CORRUPT, "%s: global window truncated", what);
            rl->global_counts_.assign(nb, 0);
            uint64_t total = 0;
            for (uint32_t i = 0; i < nb; ++i) {
                rl->global_counts_[i] = r.u64();
                if (rl->global_counts_[i] > glimit || total > glimit)
                    return fail(TF_ERR_CORRUPT, "%s: global window over its limit", what);
                total += rl->global_counts_[i];
            }
            if (total > glimit) return fail(TF_ERR_CORRUPT, "%s: global window over its limit", what);
            if (total > 0 && glatest == 0) return fail(TF_ERR_CORRUPT, "%s: global grants without a clock", what);
            rl->global_total_ = total;
        }
        rl->global_limit_.store(glimit);
        rl->global_latest_ = glatest;
    } else if (glatest != 0) {
        return fail(TF_ERR_CORRUPT, "%s: a global clock without a global limit", what);
    }
    const uint64_t n_over = r.u64();
    if (!r.ok() || n_over > r.remaining() / 8)
        return fail(TF_ERR_CORRUPT, "%s: %llu overrides", what, (unsigned long long)n_over);
    const uint8_t *prev_key = nullptr;
    size_t prev_len = 0;
    for (uint64_t i = 0; i < n_over; ++i) {
        const uint32_t lim = r.u32(), klen = r.u32();
        const uint8_t *k = r.view(klen);
        if (!k || lim == 0 || lim > key_max)
            return fail(TF_ERR_CORRUPT, "%s: override %llu is invalid", what, (unsigned long long)i);
        if (prev_key && !key_less(prev_key, prev_len, k, klen))
            return fail(TF_ERR_CORRUPT, "%s: overrides out of order or repeated", what);
        prev_key = k;
        prev_len = klen;
        rl->overrides_.emplace(std::string(reinterpret_cast<const char *>(k), klen), lim);
    }
    rl->has_overrides_ = !rl->overrides_.empty();
    const uint64_t n_keys = r.u64();
    if (!r.ok() || n_keys > r.remaining() / 12)
        return fail(TF_ERR_CORRUPT, "%s: %llu keys", what, (unsigned long long)n_keys);
    prev_key = nullptr;
    for (uint64_t i = 0; i < n_keys; ++i) {
        const uint32_t klen = r.u32();
        const uint8_t *k = r.view(klen);
        const uint64_t latest = r.u64();
        if (!r.ok() || !k) return fail(TF_ERR_CORRUPT, "%s: key %llu truncated", what, (unsigned long long)i);
        if (latest == 0) return fail(TF_ERR_CORRUPT, "%s: key %llu has no clock", what, (unsigned long long)i);
        if (prev_key && !key_less(prev_key, prev_len, k, klen))
            return fail(TF_ERR_CORRUPT, "%s: keys out of order or repeated at key %llu", what, (unsigned long long)i);
        prev_key = k;
        prev_len = klen;
        auto o = rl->overrides_.find(std::string(reinterpret_cast<const char *>(k), klen));
        const uint64_t lim = o == rl->overrides_.end() ? limit : o->second;
        const Hash128 h = key_hash(k, klen, 0);
        Shard &sh = rl->shard_of(h);
        if (exact) {
            const uint32_t count = r.u32();
            if (!r.ok() || count > lim || count > r.remaining() / 8)
                return fail(TF_ERR_CORRUPT, "%s: key %llu holds %u grants (limit %llu)", what, (unsigned long long)i,
                            count, (unsigned long long)lim);
            Ring *g = new_ring(uint32_t(lim));
            uint64_t prev = 0;
            bool ordered = true;
            for (uint32_t j = 0; j < count; ++j) {
                const uint64_t t = r.u64();
                ordered = ordered && t >= prev && t <= latest && t != 0;
                g->times[j] = prev = t;
            }
            g->count = count;
            if (!ordered) {
                std::free(g);
                return fail(TF_ERR_CORRUPT, "%s: key %llu's grant times are out of order", what, (unsigned long long)i);
            }
            Table::Rec rec;
            try {
                rec = sh.table.insert(k, klen, h);
            } catch (...) {
                std::free(g);
                throw;
            }
            rec.set_latest(latest);
            set_ring(rec, g);
            sh.table.add_extra(ring_bytes(g->cap), 0);
            if (o != rl->overrides_.end()) rec.set_overridden(true);
        } else {
            if (r.remaining() / 2 < nb)
                return fail(TF_ERR_CORRUPT, "%s: key %llu truncated", what, (unsigned long long)i);
            const uint8_t *counts = r.view(2 * size_t(nb));
            uint64_t total = 0;
            for (uint32_t j = 0; j < nb; ++j) total += ld16(counts + 2 * size_t(j));
            // a lowered override may leave a key above its limit; the
            // running total must fit its 16 bits
            if (total > TF_RATE_LIMITER_MAX_KEY_LIMIT)
                return fail(TF_ERR_CORRUPT, "%s: key %llu holds %llu permits", what, (unsigned long long)i,
                            (unsigned long long)total);
            Table::Rec rec = sh.table.insert(k, klen, h);
            rec.set_latest(latest);
            st16(rec.state(), total);
            std::memcpy(rec.state() + 2, counts, 2 * size_t(nb));
            if (o != rl->overrides_.end()) rec.set_overridden(true);
        }
        rl->keys_++;
    }
    if (!r.done()) return fail(TF_ERR_CORRUPT, "%s has %zu trailing payload bytes", what, r.remaining());
    *out = std::move(rl);
    return TF_OK;
}

}  // namespace rate
}  // namespace tf
