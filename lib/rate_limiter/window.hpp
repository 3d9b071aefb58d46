// The decision logic of the rate limiter (seed 002), separate from where the
// state lives: pure functions over a small state view, so that the same
// logic can run over the in-process hash table today and over another store
// (e.g. Redis) later.
//
// Bucketed window (the seed): the window of `window` time units is split
// into nb = window / width buckets; bucket index = time / width. A state is
// a ring of nb counts, their total, and `latest`, the latest time seen (its
// bucket is the ring's head). Buckets with index <= head - nb have left the
// window (the seed's "ts <= (now - 1000) / 100").
//
// Exact window: the times of the last `limit` grants, oldest first; a grant
// at t leaves the window at t + window.
#ifndef TF_LIB_RATE_LIMITER_WINDOW_HPP
#define TF_LIB_RATE_LIMITER_WINDOW_HPP

#include <algorithm>
#include <cstdint>

namespace tf {
namespace rate {

constexpr uint64_t kNever = UINT64_MAX;

struct Decision {
    bool allowed = false;
    uint64_t remaining = 0;
    uint64_t retry_at = 0;  // 0 when allowed; kNever when it never can be
};

// ---- bucketed ------------------------------------------------------------

struct BucketSpec {
    uint64_t width;  // bucket width
    uint32_t nb;     // buckets per window
};

// A view over one bucketed state. C is the count type (uint16_t per key,
// uint64_t for the global window).
template <class C>
struct BucketView {
    C *counts;         // nb counts; slot = bucket index mod nb
    C *total;          // sum of counts
    uint64_t *latest;  // latest time seen, 0 = never
};

// Brings the ring to time t (t >= *latest: the caller clamps): empties the
// buckets that left the window.
template <class C>
inline void advance(const BucketSpec &s, BucketView<C> v, uint64_t t) {
    if (*v.latest == 0) {
        std::fill(v.counts, v.counts + s.nb, C(0));
        *v.total = 0;
        *v.latest = t;
        return;
    }
    const uint64_t head = *v.latest / s.width, now = t / s.width;
    if (now > head) {
        const uint64_t steps = std::min<uint64_t>(now - head, s.nb);
        for (uint64_t i = 1; i <= steps; ++i) {
            C &c = v.counts[(head + i) % s.nb];
            *v.total = C(*v.total - c);
            c = 0;
        }
    }
    *v.latest = std::max(*v.latest, t);
}

// The earliest time at which `need` of the current permits have left the
// window: walk the ring from its oldest bucket.
template <class C>
inline uint64_t bucket_retry_at(const BucketSpec &s, BucketView<C> v, uint64_t need) {
    const uint64_t head = *v.latest / s.width;
    uint64_t freed = 0;
    for (uint64_t j = head >= s.nb - 1 ? head - (s.nb - 1) : 0; j <= head; ++j) {
        freed += v.counts[j % s.nb];
        // bucket j leaves the window when time / width reaches j + nb
        if (freed >= need) return (j + s.nb) > kNever / s.width ? kNever : (j + s.nb) * s.width;
    }
    return kNever;
}

// Decides n permits against `limit` (the state already advanced).
template <class C>
inline Decision bucket_decide(const BucketSpec &s, BucketView<C> v, uint64_t limit, uint64_t n) {
    Decision d;
    const uint64_t used = *v.total;
    if (n <= limit && used <= limit - n) {
        d.allowed = true;
        d.remaining = limit - used - n;
        return d;
    }
    d.remaining = used >= limit ? 0 : limit - used;
    d.retry_at = n > limit ? kNever : bucket_retry_at(s, v, used + n - limit);
    return d;
}

template <class C>
inline void bucket_take(const BucketSpec &s, BucketView<C> v, uint64_t n) {
    C &c = v.counts[(*v.latest / s.width) % s.nb];
    c = C(c + n);
    *v.total = C(*v.total + n);
}

// Gives back up to n permits, newest bucket first.
template <class C>
inline void bucket_refund(const BucketSpec &s, BucketView<C> v, uint64_t n) {
    const uint64_t head = *v.latest / s.width;
    for (uint64_t i = 0; i < s.nb && i <= head && n > 0; ++i) {
        C &c = v.counts[(head - i) % s.nb];
        const uint64_t back = std::min<uint64_t>(c, n);
        c = C(c - back);
        *v.total = C(*v.total - back);
        n -= back;
    }
}

// ---- exact ----------------------------------------------------------------

// A ring of grant times, oldest first: times[(start + i) % cap].
struct ExactView {
    uint64_t *times;
    uint32_t cap;
    uint32_t *start;
    uint32_t *count;
    uint64_t *latest;
};

inline uint64_t &exact_at(ExactView v, uint32_t i) { return v.times[(*v.start + i) % v.cap]; }

// Drops the grants that left the window (t + window <= now).
inline void exact_advance(ExactView v, uint64_t window, uint64_t now) {
    if (now >= window) {  // before that nothing can have left the window
        const uint64_t cutoff = now - window;
        while (*v.count > 0 && exact_at(v, 0) <= cutoff) {
            *v.start = (*v.start + 1) % v.cap;
            --*v.count;
        }
    }
    *v.latest = std::max(*v.latest, now);
}

inline Decision exact_decide(ExactView v, uint64_t window, uint64_t limit, uint64_t n) {
    Decision d;
    const uint64_t used = *v.count;
    if (n <= limit && used <= limit - n) {
        d.allowed = true;
        d.remaining = limit - used - n;
        return d;
    }
    d.remaining = used >= limit ? 0 : limit - used;
    if (n > limit) {
        d.retry_at = kNever;
    } else {
        // the (used + n - limit)-th oldest grant must leave
        const uint64_t t = exact_at(v, uint32_t(used + n - limit - 1));
        d.retry_at = t > kNever - window ? kNever : t + window;
    }
    return d;
}

// Records n grants at `now` (the caller checked count + n <= cap).
inline void exact_take(ExactView v, uint64_t now, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
        v.times[(*v.start + *v.count) % v.cap] = now;
        ++*v.count;
    }
}

inline void exact_refund(ExactView v, uint64_t n) { *v.count -= uint32_t(std::min<uint64_t>(n, *v.count)); }

}  // namespace rate
}  // namespace tf

#endif
