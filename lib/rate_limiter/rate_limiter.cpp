#include "rate_limiter/rate_limiter.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace tf {
namespace rate {

namespace {

// Exact mode: a key's grant times live in a heap ring.
struct Ring {
    uint32_t cap, start, count, pad;
    uint64_t times[1];
};

Ring *&ring_of(Table::Rec r) { return *reinterpret_cast<Ring **>(r.state()); }

Ring *new_ring(uint32_t cap) {
    void *p = std::calloc(1, sizeof(Ring) + sizeof(uint64_t) * (cap ? cap - 1 : 0));
    if (!p) throw std::bad_alloc();
    Ring *g = static_cast<Ring *>(p);
    g->cap = cap;
    return g;
}

ExactView view_of(Ring *g, uint64_t *latest) { return ExactView{g->times, g->cap, &g->start, &g->count, latest}; }

BucketView<uint16_t> view_of(Table::Rec r, uint32_t nb) {
    uint16_t *total = reinterpret_cast<uint16_t *>(r.state());
    (void)nb;
    return BucketView<uint16_t>{total + 1, total, &r.latest()};
}

}  // namespace

// ---- the table -------------------------------------------------------------

const uint8_t *Table::Rec::key() const {
    if (code() == kOutOfLine) {
        const uint8_t *q;
        std::memcpy(&q, p + 16, sizeof q);
        return q;
    }
    return p + 16;
}

size_t Table::Rec::key_len() const {
    if (code() == kOutOfLine) {
        uint64_t n;
        std::memcpy(&n, p + 24, 8);
        return size_t(n);
    }
    return code();
}

Table::~Table() {
    for (size_t i = 0; i < cap_; ++i)
        if (at(i).code() != kEmpty) release(at(i));
    std::free(slots_);
}

size_t Table::bytes() const {
    size_t b = cap_ * stride_;
    for (size_t i = 0; i < cap_; ++i) {
        Rec r = at(i);
        if (r.code() == kEmpty) continue;
        if (r.code() == kOutOfLine) b += r.key_len();
        if (exact_) b += sizeof(Ring) + 8 * size_t(ring_of(r)->cap);
    }
    return b;
}

void Table::release(Rec r) {
    if (r.code() == kOutOfLine) std::free(const_cast<uint8_t *>(r.key()));
    if (exact_) std::free(ring_of(r));
}

Table::Rec Table::find(const void *key, size_t len, const Hash128 &h) const {
    if (cap_ == 0) return Rec{nullptr};
    for (size_t i = home(h);; i = (i + 1) & (cap_ - 1)) {
        Rec r = at(i);
        if (r.code() == kEmpty) return Rec{nullptr};
        if (r.key_len() == len && (len == 0 || std::memcmp(r.key(), key, len) == 0)) return r;
    }
}

void Table::grow() {
    const size_t ncap = cap_ ? cap_ * 2 : 16;
    uint8_t *nslots = static_cast<uint8_t *>(std::malloc(ncap * stride_));
    if (!nslots) throw std::bad_alloc();
    for (size_t i = 0; i < ncap; ++i) Rec{nslots + i * stride_}.code() = kEmpty;
    for (size_t i = 0; i < cap_; ++i) {
        Rec r = at(i);
        if (r.code() == kEmpty) continue;
        const Hash128 h = key_hash(r.key(), r.key_len(), 0);
        size_t j = size_t(h.h2) & (ncap - 1);
        while (Rec{nslots + j * stride_}.code() != kEmpty) j = (j + 1) & (ncap - 1);
        std::memcpy(nslots + j * stride_, r.p, stride_);
    }
    std::free(slots_);
    slots_ = nslots;
    cap_ = ncap;
    cursor_ = 0;
}

Table::Rec Table::insert(const void *key, size_t len, const Hash128 &h) {
    if ((count_ + 1) * 8 > cap_ * 7) grow();  // load <= 7/8
    uint8_t *copy = nullptr;
    if (len > kInlineKey) {
        copy = static_cast<uint8_t *>(std::malloc(len));
        if (!copy) throw std::bad_alloc();
        std::memcpy(copy, key, len);
    }
    size_t i = home(h);
    while (at(i).code() != kEmpty) i = (i + 1) & (cap_ - 1);
    Rec r = at(i);
    std::memset(r.p, 0, stride_);
    if (copy) {
        r.code() = kOutOfLine;
        const uint64_t n = len;
        std::memcpy(r.p + 16, &copy, sizeof copy);
        std::memcpy(r.p + 24, &n, 8);
    } else {
        r.code() = uint16_t(len);
        if (len) std::memcpy(r.p + 16, key, len);
    }
    ++count_;
    return r;
}

void Table::erase(Rec r) {
    release(r);
    size_t i = size_t(r.p - slots_) / stride_;
    // backward-shift deletion: pull later records of the same run back
    for (size_t j = (i + 1) & (cap_ - 1);; j = (j + 1) & (cap_ - 1)) {
        Rec q = at(j);
        if (q.code() == kEmpty) break;
        const size_t want = home(key_hash(q.key(), q.key_len(), 0));
        // q may move to i when its home is not cyclically in (i, j]
        const bool in_between = i <= j ? (want > i && want <= j) : (want > i || want <= j);
        if (!in_between) {
            std::memcpy(at(i).p, q.p, stride_);
            i = j;
        }
    }
    at(i).code() = kEmpty;
    --count_;
}

template <class F>
size_t Table::sweep(size_t slots, F &&idle) {
    size_t removed = 0;
    for (size_t s = 0; s < slots && cap_ > 0 && count_ > 0; ++s) {
        cursor_ = (cursor_ + 1) & (cap_ - 1);
        Rec r = at(cursor_);
        if (r.code() != kEmpty && idle(r)) {
            erase(r);
            ++removed;
            // a record shifted into the cursor's slot is looked at next time
            cursor_ = (cursor_ - 1) & (cap_ - 1);
        }
    }
    return removed;
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
    spec_ = BucketSpec{ex ? window : width, ex ? 1u : uint32_t(window / width)};
    size_t stride = Table::kHeader + state_bytes();
    stride = (stride + 7) & ~size_t(7);
    for (Shard &s : shards_) s.table.init(stride, ex);
}

uint32_t RateLimiter::limit_for(const void *key, size_t len) const {
    if (has_overrides_.load(std::memory_order_acquire)) {
        std::shared_lock<std::shared_mutex> lock(overrides_mu_);
        auto it = overrides_.find(std::string(static_cast<const char *>(key), len));
        if (it != overrides_.end()) return it->second;
    }
    return uint32_t(limit_);
}

Decision RateLimiter::key_decide(Table::Rec r, uint64_t now, uint64_t n) {
    if (exact()) {
        Ring *g = ring_of(r);
        ExactView v = view_of(g, &r.latest());
        exact_advance(v, window_, now);
        return exact_decide(v, window_, r.limit(), n);
    }
    BucketView<uint16_t> v = view_of(r, spec_.nb);
    advance(spec_, v, now);
    return bucket_decide(spec_, v, r.limit(), n);
}

void RateLimiter::key_take(Table::Rec r, uint64_t now, uint64_t n) {
    if (exact())
        exact_take(view_of(ring_of(r), &r.latest()), now, n);
    else
        bucket_take(spec_, view_of(r, spec_.nb), n);
}

Decision RateLimiter::global_decide(uint64_t now, uint64_t n) {
    if (exact()) {
        ExactView v{global_ring_.data(), uint32_t(global_ring_.size()), &global_start_, &global_count_,
                    &global_latest_};
        exact_advance(v, window_, now);
        return exact_decide(v, window_, global_limit_, n);
    }
    BucketView<uint64_t> v{global_counts_.data(), &global_total_, &global_latest_};
    advance(spec_, v, now);
    return bucket_decide(spec_, v, global_limit_, n);
}

void RateLimiter::global_take(uint64_t now, uint64_t n) {
    if (exact())
        exact_take(ExactView{global_ring_.data(), uint32_t(global_ring_.size()), &global_start_, &global_count_,
                             &global_latest_},
                   now, n);
    else
        bucket_take(spec_, BucketView<uint64_t>{global_counts_.data(), &global_total_, &global_latest_}, n);
}

bool RateLimiter::reserve_key() {
    const uint64_t max = max_keys_.load();
    uint64_t cur = keys_.load();
    do {
        if (max != 0 && cur >= max) return false;
    } while (!keys_.compare_exchange_weak(cur, cur + 1));
    return true;
}

tf_status RateLimiter::set_global_limit(uint64_t limit) {
    if (exact() && limit > (uint64_t(1) << 24))
        return fail(TF_ERR_INVALID_ARGUMENT, "an exact global limit must be <= 2^24, got %llu",
                    (unsigned long long)limit);
    std::lock_guard<std::mutex> lock(global_mu_);
    std::vector<uint64_t> counts, ring;
    if (limit != 0) {
        if (exact())
            ring.assign(size_t(limit), 0);  // may throw: nothing changed yet
        else
            counts.assign(spec_.nb, 0);
    }
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
    std::lock_guard<std::mutex> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    const uint32_t effective = uint32_t(limit ? limit : limit_);
    Ring *fresh = nullptr;
    if (r.p && exact() && ring_of(r)->cap != effective) fresh = new_ring(effective);  // before any change
    {
        std::unique_lock<std::shared_mutex> olock(overrides_mu_);
        std::string k(static_cast<const char *>(key), len);
        if (limit)
            overrides_[k] = uint32_t(limit);
        else
            overrides_.erase(k);
        has_overrides_.store(!overrides_.empty(), std::memory_order_release);
    }
    if (r.p) {
        r.limit() = effective;
        if (fresh) {  // keep the newest grants that fit
            Ring *old = ring_of(r);
            const uint32_t keep = std::min(old->count, fresh->cap);
            for (uint32_t i = 0; i < keep; ++i)
                fresh->times[i] = old->times[(old->start + old->count - keep + i) % old->cap];
            fresh->count = keep;
            std::free(old);
            ring_of(r) = fresh;
        }
    }
    return TF_OK;
}

tf_status RateLimiter::decide(const void *key, size_t len, uint64_t now, uint64_t n, bool take, Decision *out) {
    const Hash128 h = key_hash(key, len, 0);
    Shard &sh = shard_of(h);
    std::lock_guard<std::mutex> lock(sh.mu);
    // idle reclamation: a few slots per request, never a full scan
    if (take) {
        const size_t gone = sh.table.sweep(2, [&](Table::Rec r) { return idle(r, now); });
        if (gone) keys_ -= gone, reclaimed_ += gone;
    }
    Table::Rec r = sh.table.find(key, len, h);
    const bool fresh_key = r.p == nullptr;
    if (fresh_key) {
        const uint32_t limit = limit_for(key, len);
        if (!take) {  // a peek at a key never seen: its window is empty
            Decision d;
            d.allowed = n <= limit;
            d.remaining = d.allowed ? limit - n : limit;
            d.retry_at = d.allowed ? 0 : kNever;
            if (d.allowed && global_limit_ != 0) {
                std::lock_guard<std::mutex> g(global_mu_);
                const Decision gd = global_decide(std::max(now, global_latest_), n);
                if (!gd.allowed) d = gd;
                d.remaining = std::min(d.remaining, gd.remaining);
            }
            *out = d;
            return TF_OK;
        }
        if (n > limit) {  // never grantable: nothing to track
            Decision d;
            d.remaining = limit;
            d.retry_at = kNever;
            *out = d;
            return TF_OK;
        }
        // Reserve the key's place in the count first, so that concurrent
        // shards never pass max_keys together.
        if (!reserve_key()) {
            const size_t gone = sh.table.sweep(64, [&](Table::Rec q) { return idle(q, now); });
            if (gone) keys_ -= gone, reclaimed_ += gone;
            if (!reserve_key()) {
                Decision d;
                if (flags_ & TF_RATE_LIMITER_FULL_ALLOW) {
                    allowed_full_++;
                    d.allowed = true;
                    d.remaining = 0;
                } else {
                    denied_full_++;
                    d.retry_at = kNever;
                }
                *out = d;
                return TF_OK;
            }
        }
        Ring *ring = nullptr;
        try {  // nothing changes if an allocation fails
            if (exact()) ring = new_ring(limit);
            r = sh.table.insert(key, len, h);
        } catch (...) {
            std::free(ring);
            keys_--;
            throw;
        }
        r.limit() = limit;
        if (ring) ring_of(r) = ring;
    }
    // the key's own clock never goes back
    const uint64_t t = std::max(now, r.latest());
    Decision d = key_decide(r, t, n);
    if (d.allowed && global_limit_ != 0) {
        std::lock_guard<std::mutex> g(global_mu_);
        const Decision gd = global_decide(std::max(t, global_latest_), n);
        if (!gd.allowed) {
            d = gd;
        } else {
            d.remaining = std::min(d.remaining, gd.remaining);
            if (take) global_take(std::max(t, global_latest_), n);
        }
    }
    if (d.allowed && take) key_take(r, t, n);
    if (fresh_key && !d.allowed) {  // a denied first request leaves nothing behind
        sh.table.erase(r);
        keys_--;
    }
    *out = d;
    return TF_OK;
}

void RateLimiter::refund(const void *key, size_t len, uint64_t now, uint64_t n) {
    const Hash128 h = key_hash(key, len, 0);
    Shard &sh = shard_of(h);
    std::lock_guard<std::mutex> lock(sh.mu);
    Table::Rec r = sh.table.find(key, len, h);
    if (!r.p) return;
    const uint64_t t = std::max(now, r.latest());
    uint64_t back = 0;
    if (exact()) {
        ExactView v = view_of(ring_of(r), &r.latest());
        exact_advance(v, window_, t);
        back = std::min<uint64_t>(n, *v.count);
        exact_refund(v, back);
    } else {
        BucketView<uint16_t> v = view_of(r, spec_.nb);
        advance(spec_, v, t);
        back = std::min<uint64_t>(n, *v.total);
        bucket_refund(spec_, v, back);
    }
    if (back && global_limit_ != 0) {
        std::lock_guard<std::mutex> g(global_mu_);
        const uint64_t gt = std::max(t, global_latest_);
        if (exact()) {
            ExactView v{global_ring_.data(), uint32_t(global_ring_.size()), &global_start_, &global_count_,
                        &global_latest_};
            exact_advance(v, window_, gt);
            exact_refund(v, back);
        } else {
            BucketView<uint64_t> v{global_counts_.data(), &global_total_, &global_latest_};
            advance(spec_, v, gt);
            bucket_refund(spec_, v, back);
        }
    }
}

void RateLimiter::reset(const void *key, size_t len) {
    const Hash128 h = key_hash(key, len, 0);
    Shard &sh = shard_of(h);
    std::lock_guard<std::mutex> lock(sh.mu);
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
            std::lock_guard<std::mutex> lock(s.mu);
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
//   u64 reclaimed, u64 denied_full, u64 allowed_full,
//   global window: u64 latest, then bucketed: u64 counts[nb] (when a global
//     limit is set), exact: u32 count, u64 times[count] oldest first,
//   u64 override count, each: u32 limit, u32 key length, key bytes,
//   u64 key count, each: u32 key length, key bytes, u64 latest, u32 limit,
//     then bucketed: u16 counts[nb]; exact: u32 count, u64 times[count].

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
    size_t n = 8 * 8 + 8;
    if (global_limit_) n += exact() ? 4 + 8 * size_t(global_count_) : 8 * size_t(spec_.nb);
    n += 8;
    for (const auto &kv : overrides_) n += 8 + kv.first.size();
    n += 8;
    for (const Shard &s : shards_)
        s.table.for_each([&](Table::Rec r) {
            n += 4 + r.key_len() + 8 + 4;
            n += exact() ? 4 + 8 * size_t(ring_of(r)->count) : 2 * size_t(spec_.nb);
        });
    return n;
}

void RateLimiter::write_payload(wire::Writer &w) const {
    for (uint64_t v : {limit_, window_, spec_.width, max_keys_.load(), global_limit_.load(), reclaimed_.load(),
                       denied_full_.load(), allowed_full_.load()})
        w.u64(v);
    w.u64(global_latest_);
    if (global_limit_) {
        if (exact()) {
            w.u32(global_count_);
            for (uint32_t i = 0; i < global_count_; ++i)
                w.u64(global_ring_[(global_start_ + i) % global_ring_.size()]);
        } else {
            for (uint64_t c : global_counts_) w.u64(c);
        }
    }
    w.u64(overrides_.size());
    for (const auto &kv : overrides_) {
        w.u32(kv.second);
        w.u32(uint32_t(kv.first.size()));
        w.bytes(kv.first.data(), kv.first.size());
    }
    uint64_t count = 0;
    for (const Shard &s : shards_) count += s.table.size();
    w.u64(count);
    for (const Shard &s : shards_)
        s.table.for_each([&](Table::Rec r) {
            w.u32(uint32_t(r.key_len()));
            w.bytes(r.key(), r.key_len());
            w.u64(r.latest());
            w.u32(r.limit());
            if (exact()) {
                const Ring *g = ring_of(r);
                w.u32(g->count);
                for (uint32_t i = 0; i < g->count; ++i) w.u64(g->times[(g->start + i) % g->cap]);
            } else {
                const uint16_t *c = reinterpret_cast<const uint16_t *>(r.state()) + 1;
                for (uint32_t i = 0; i < spec_.nb; ++i) w.u16(c[i]);
            }
        });
}

tf_status RateLimiter::read(wire::Reader &r, uint32_t flags, std::unique_ptr<RateLimiter> *out) {
    const char *what = "rate limiter blob";
    const uint64_t limit = r.u64(), window = r.u64(), width = r.u64(), max_keys = r.u64(), glimit = r.u64();
    const uint64_t reclaimed = r.u64(), denied = r.u64(), allowed = r.u64(), glatest = r.u64();
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
    if (glimit) {
        if (exact) {
            const uint32_t count = r.u32();
            if (count > glimit || count > r.remaining() / 8)
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
            rl->global_total_ = total;
        }
        rl->global_limit_.store(glimit);
        rl->global_latest_ = glatest;
    } else if (glatest != 0) {
        return fail(TF_ERR_CORRUPT, "%s: a global clock without a global limit", what);
    }
    const uint64_t n_over = r.u64();
    if (!r.ok() || n_over > r.remaining() / 8) return fail(TF_ERR_CORRUPT, "%s: %llu overrides", what, (unsigned long long)n_over);
    for (uint64_t i = 0; i < n_over; ++i) {
        const uint32_t lim = r.u32(), klen = r.u32();
        const uint8_t *k = r.view(klen);
        if (!k || lim == 0 || lim > key_max) return fail(TF_ERR_CORRUPT, "%s: override %llu is invalid", what, (unsigned long long)i);
        if (!rl->overrides_.emplace(std::string(reinterpret_cast<const char *>(k), klen), lim).second)
            return fail(TF_ERR_CORRUPT, "%s: a key is overridden twice", what);
    }
    rl->has_overrides_ = !rl->overrides_.empty();
    const uint64_t n_keys = r.u64();
    if (!r.ok() || n_keys > r.remaining() / 16) return fail(TF_ERR_CORRUPT, "%s: %llu keys", what, (unsigned long long)n_keys);
    for (uint64_t i = 0; i < n_keys; ++i) {
        const uint32_t klen = r.u32();
        const uint8_t *k = r.view(klen);
        const uint64_t latest = r.u64();
        const uint32_t lim = r.u32();
        if (!r.ok() || !k) return fail(TF_ERR_CORRUPT, "%s: key %llu truncated", what, (unsigned long long)i);
        if (lim == 0 || lim > key_max || latest == 0)
            return fail(TF_ERR_CORRUPT, "%s: key %llu has limit %u, time %llu", what, (unsigned long long)i, lim,
                        (unsigned long long)latest);
        const Hash128 h = key_hash(k, klen, 0);
        Shard &sh = rl->shard_of(h);
        if (sh.table.find(k, klen, h).p) return fail(TF_ERR_CORRUPT, "%s: key %llu appears twice", what, (unsigned long long)i);
        if (exact) {
            const uint32_t count = r.u32();
            if (!r.ok() || count > lim || count > r.remaining() / 8)
                return fail(TF_ERR_CORRUPT, "%s: key %llu holds %u grants", what, (unsigned long long)i, count);
            Ring *g = new_ring(lim);
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
            rec.latest() = latest;
            rec.limit() = lim;
            ring_of(rec) = g;
        } else {
            if (r.remaining() / 2 < nb) return fail(TF_ERR_CORRUPT, "%s: key %llu truncated", what, (unsigned long long)i);
            uint16_t counts[TF_RATE_LIMITER_MAX_BUCKETS];
            uint64_t total = 0;
            for (uint32_t j = 0; j < nb; ++j) total += counts[j] = r.u16();
            if (total > lim) return fail(TF_ERR_CORRUPT, "%s: key %llu is over its limit", what, (unsigned long long)i);
            Table::Rec rec = sh.table.insert(k, klen, h);
            rec.latest() = latest;
            rec.limit() = lim;
            uint16_t *st = reinterpret_cast<uint16_t *>(rec.state());
            st[0] = uint16_t(total);
            std::memcpy(st + 1, counts, 2 * size_t(nb));
        }
        rl->keys_++;
    }
    if (!r.done()) return fail(TF_ERR_CORRUPT, "%s has %zu trailing payload bytes", what, r.remaining());
    *out = std::move(rl);
    return TF_OK;
}

}  // namespace rate
}  // namespace tf
