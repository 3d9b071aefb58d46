// The decision logic of the rate limiter (docs/rate-limiter.md), separate
// from where the state lives: functions over a small state interface, so
// that the same logic runs over the in-process hash table today and over
// another store (e.g. Redis) later.
//
// Bucketed window (the algorithm of the Rate Limiter README): the window of
// `window` time units is split into nb = window / width buckets; bucket
// index = time / width. A state is a ring of nb counts (bucket j in slot
// j mod nb), their total, and `latest`, the latest time at which the state
// was advanced (its bucket is the ring's head; 0 = never). At time t the
// buckets with index <= t / width - nb have left the window (the README's
// "ts <= (now - 1000) / 100").
//
// Exact window: the times of the grants in the window (at most `limit`),
// oldest first; a grant at g leaves the window at g + window. Where they are
// kept, and how that storage grows, is the caller's (rate_limiter.hpp).
//
// Every decide function is read-only: a peek, and an acquire that is
// denied, change nothing (the README: "queue remains unchanged"). Only a
// grant advances the state (advance, then take).
#ifndef TF_LIB_RATE_LIMITER_WINDOW_HPP
#define TF_LIB_RATE_LIMITER_WINDOW_HPP

#include <algorithm>
#include <cstdint>

#include "common/fastdiv.hpp"
#include "temporalfilters/common.h"

namespace tf {
namespace rate {

// A retry time that never comes (also the saturated result of a time sum).
constexpr uint64_t kRetryNever = TF_RETRY_NEVER;

struct Decision {
    bool allowed = false;
    uint64_t remaining = 0;
    uint64_t retry_at = 0;  // 0 when allowed; kRetryNever when it never can be
};

// Both windows' answers to a request of n permits together: granted when
// both grant; the fewer remaining after the decision (when it is denied,
// nothing is taken, so a window that would have granted keeps its n); and
// the later of the two retry times (each window only frees permits as time
// passes, so at the later time both grant).
inline Decision combine(const Decision &a, const Decision &b, uint64_t n) {
    Decision d;
    d.allowed = a.allowed && b.allowed;
    if (d.allowed) {
        d.remaining = std::min(a.remaining, b.remaining);
    } else {
        const uint64_t ra = a.allowed ? a.remaining + n : a.remaining, rb = b.allowed ? b.remaining + n : b.remaining;
        d.remaining = std::min(ra, rb);
    }
    d.retry_at = d.allowed ? 0 : std::max(a.allowed ? 0 : a.retry_at, b.allowed ? 0 : b.retry_at);
    return d;
}

// ---- bucketed ------------------------------------------------------------

struct BucketSpec {
    uint64_t width = 1;  // bucket width
    uint32_t nb = 1;     // buckets per window
    Divider by_width, by_nb;

    BucketSpec() = default;
    BucketSpec(uint64_t w, uint32_t n) : width(w), nb(n), by_width(w), by_nb(n) {}
    uint64_t bucket(uint64_t t) const { return by_width.div(t); }
    uint32_t slot(uint64_t j) const { return uint32_t(by_nb.mod(j)); }
    // the time at which bucket j leaves the window (saturating)
    uint64_t leaves_at(uint64_t j) const {
        const uint64_t k = j + nb;
        return k < j || k > kRetryNever / width ? kRetryNever : k * width;
    }
};

// A bucketed state S provides:
//   uint64_t latest() const;          void set_latest(uint64_t);
//   uint64_t total() const;           void set_total(uint64_t);
//   uint64_t count(uint32_t slot) const;  void set_count(uint32_t slot, uint64_t);

// The permits of the state still in the window at t (t >= latest).
template <class S>
inline uint64_t bucket_used(const BucketSpec &s, const S &st, uint64_t t) {
    if (st.latest() == 0) return 0;
    if (st.latest() == t) return st.total();  // just advanced: no division
    const uint64_t head = s.bucket(st.latest()), now = s.bucket(t);
    if (now == head) return st.total();
    if (now - head >= s.nb) return 0;
    uint64_t gone = 0;
    uint32_t slot = s.slot(head + 1);
    for (uint64_t i = 0; i < now - head; ++i) {
        gone += st.count(slot);
        if (++slot == s.nb) slot = 0;
    }
    return st.total() - gone;
}

// The earliest time at or after t at which `need` of the permits in the
// window at t have left it.
template <class S>
inline uint64_t bucket_retry_at(const BucketSpec &s, const S &st, uint64_t t, uint64_t need) {
    if (need == 0) return t;
    const uint64_t head = s.bucket(st.latest()), now = s.bucket(t);
    // live buckets: (now - nb, head]
    uint64_t j = now >= s.nb - 1 ? now - (s.nb - 1) : 0;
    uint64_t freed = 0;
    for (uint32_t slot = s.slot(j); j <= head; ++j) {
        freed += st.count(slot);
        if (freed >= need) return s.leaves_at(j);
        if (++slot == s.nb) slot = 0;
    }
    return kRetryNever;
}

// The decision for n permits against `limit` at t (t >= latest); read-only.
template <class S>
inline Decision bucket_decide(const BucketSpec &s, const S &st, uint64_t t, uint64_t limit, uint64_t n) {
    Decision d;
    const uint64_t used = bucket_used(s, st, t);
    if (n <= limit && used <= limit - n) {
        d.allowed = true;
        d.remaining = limit - used - n;
        return d;
    }
    d.remaining = used >= limit ? 0 : limit - used;
    d.retry_at = n > limit ? kRetryNever : bucket_retry_at(s, st, t, used + n - limit);
    return d;
}

// Brings the ring to time t (t >= latest: the caller clamps): empties the
// buckets that left the window.
template <class S>
inline void bucket_advance(const BucketSpec &s, S &st, uint64_t t) {
    const uint64_t head = s.bucket(st.latest()), now = s.bucket(t);
    if (st.latest() == 0 || now - head >= s.nb) {
        for (uint32_t i = 0; i < s.nb; ++i) st.set_count(i, 0);
        st.set_total(0);
    } else if (now > head) {
        uint64_t total = st.total();
        uint32_t slot = s.slot(head + 1);
        for (uint64_t i = 0; i < now - head; ++i) {
            total -= st.count(slot);
            st.set_count(slot, 0);
            if (++slot == s.nb) slot = 0;
        }
        st.set_total(total);
    }
    st.set_latest(std::max(st.latest(), t));
}

// Records n permits in the head bucket (advanced to t before).
template <class S>
inline void bucket_take(const BucketSpec &s, S &st, uint64_t n) {
    const uint32_t slot = s.slot(s.bucket(st.latest()));
    st.set_count(slot, st.count(slot) + n);
    st.set_total(st.total() + n);
}

// Gives back up to n permits, newest bucket first (advanced before);
// reports each (bucket index, permits) given back to `back`. Returns the
// permits given back.
template <class S, class F>
inline uint64_t bucket_refund(const BucketSpec &s, S &st, uint64_t n, F &&back) {
    const uint64_t head = s.bucket(st.latest());
    uint64_t done = 0;
    for (uint64_t i = 0; i < s.nb && i <= head && done < n; ++i) {
        const uint32_t slot = s.slot(head - i);
        const uint64_t c = st.count(slot), b = std::min(c, n - done);
        if (b == 0) continue;
        st.set_count(slot, c - b);
        st.set_total(st.total() - b);
        back(head - i, b);
        done += b;
    }
    return done;
}

// Takes up to n permits out of bucket j if it is still in the window
// (the global window's side of a key's refund).
template <class S>
inline void bucket_remove(const BucketSpec &s, S &st, uint64_t j, uint64_t n) {
    if (st.latest() == 0) return;
    const uint64_t head = s.bucket(st.latest());
    if (j > head || head - j >= s.nb) return;
    const uint32_t slot = s.slot(j);
    const uint64_t b = std::min(st.count(slot), n);
    st.set_count(slot, st.count(slot) - b);
    st.set_total(st.total() - b);
}

// ---- exact ----------------------------------------------------------------

// The slot of a ring of cap slots at k = start + i, which is below 2 cap
// (start < cap, i <= cap): k mod cap without a division.
inline uint32_t ring_slot(uint64_t k, uint32_t cap) { return uint32_t(k >= cap ? k - cap : k); }

// A ring of grant times, oldest first: the i-th oldest in slot
// (start + i) % cap, read-only. A wide ring's slots are the times
// themselves (u64); a narrow ring's are u32 offsets from `base`, which is
// what halves the ring when every time it must hold fits in 32 bits from
// one base: a window of at most 2^31 time units (ExactView::set moves the
// base to the oldest grant when needed; GrantRing).
struct ExactTimes {
    const void *slots;
    uint64_t base;
    uint32_t cap, start, count;
    bool wide;

    uint64_t slot(uint64_t k) const {
        return wide ? static_cast<const uint64_t *>(slots)[k] : base + static_cast<const uint32_t *>(slots)[k];
    }
    uint64_t at(uint32_t i) const { return slot(ring_slot(uint64_t(start) + i, cap)); }
};

// The same ring, writable, with its clock.
struct ExactView {
    void *slots;
    uint64_t *base;
    uint32_t cap;
    uint32_t *start;
    uint32_t *count;
    uint64_t *latest;
    bool wide;

    ExactTimes read() const { return ExactTimes{slots, *base, cap, *start, *count, wide}; }
    uint64_t at(uint32_t i) const { return read().at(i); }
    // Stores time v as the i-th oldest grant (i < cap). A narrow ring whose
    // base v does not fit under is rebased first: the base becomes the
    // smallest of v and the grants held, and every held grant is rewritten
    // from it. Every time of a narrow ring then lies within 2^32 - 1 of
    // its base, which holds when the ring holds only grants still in a
    // window of at most 2^31 (take after advance) and v is the present.
    void set(uint32_t i, uint64_t v) const {
        const uint32_t k = ring_slot(uint64_t(*start) + i, cap);
        if (wide) {
            static_cast<uint64_t *>(slots)[k] = v;
            return;
        }
        uint32_t *s = static_cast<uint32_t *>(slots);
        if (v < *base || v - *base > UINT32_MAX) rebase(v);
        s[k] = uint32_t(v - *base);
    }

   private:
    void rebase(uint64_t v) const {
        const ExactTimes old = read();
        uint64_t nb = v;
        for (uint32_t j = 0; j < old.count; ++j) nb = std::min(nb, old.at(j));
        uint32_t *s = static_cast<uint32_t *>(slots);
        for (uint32_t j = 0; j < old.count; ++j) {
            const uint32_t k = ring_slot(uint64_t(old.start) + j, cap);
            s[k] = uint32_t(old.slot(k) - nb);  // each slot read before it is written
        }
        *base = nb;
    }
};

// The number of grants that have left the window at t (time <= t - window):
// a binary search, the times being sorted.
inline uint32_t exact_expired(const ExactTimes &v, uint64_t window, uint64_t t) {
    if (t < window) return 0;
    const uint64_t cutoff = t - window;
    uint32_t lo = 0, hi = v.count;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (v.at(mid) <= cutoff)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

inline Decision exact_decide(const ExactTimes &v, uint64_t window, uint64_t t, uint64_t limit, uint64_t n) {
    Decision d;
    const uint32_t gone = exact_expired(v, window, t);
    const uint64_t used = v.count - gone;
    if (n <= limit && used <= limit - n) {
        d.allowed = true;
        d.remaining = limit - used - n;
        return d;
    }
    d.remaining = used >= limit ? 0 : limit - used;
    if (n > limit) {
        d.retry_at = kRetryNever;
    } else {
        // the (used + n - limit)-th oldest live grant must leave
        const uint64_t g = v.at(uint32_t(gone + used + n - limit - 1));
        d.retry_at = g > kRetryNever - window ? kRetryNever : g + window;
    }
    return d;
}

// Drops the grants that left the window at t (start + gone < 2 cap: no
// division; a ring of no slots holds nothing to drop).
inline void exact_advance(ExactView v, uint64_t window, uint64_t t) {
    const uint32_t gone = exact_expired(v.read(), window, t);
    *v.start = ring_slot(uint64_t(*v.start) + gone, v.cap);
    *v.count -= gone;
    *v.latest = std::max(*v.latest, t);
}

// Records n grants at t (the caller made room: count + n <= cap).
inline void exact_take(ExactView v, uint64_t t, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
        v.set(*v.count, t);  // before it counts: a rebase reads only the grants held
        ++*v.count;
    }
}

// Gives back up to n grants, newest first, reporting each grant's time.
template <class F>
inline uint64_t exact_refund(ExactView v, uint64_t n, F &&back) {
    const uint64_t take = std::min<uint64_t>(n, *v.count);
    for (uint64_t done = 0; done < take; ++done) {
        back(v.at(*v.count - 1));
        --*v.count;
    }
    return take;
}

// Removes one grant at time g, the newest such, if there is one (the global
// window's side of a key's refund): the later grants move down by one.
inline void exact_remove(ExactView v, uint64_t g) {
    uint32_t i = *v.count;
    while (i > 0 && v.at(i - 1) > g) --i;
    if (i == 0 || v.at(i - 1) != g) return;
    for (uint32_t j = i; j < *v.count; ++j) v.set(j - 1, v.at(j));
    --*v.count;
}

}  // namespace rate
}  // namespace tf

#endif
