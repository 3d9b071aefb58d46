// section_rate_limiter.cpp - the sliding-window rate limiter part of tf-demo.
//
// Every event of the stream is a request by its key, answered by
// tf_rate_limiter_acquire() at the stream's clock (clamped where it goes
// backwards, as a server's clock would be). The window is the pacing
// interval (1 s for the synthetic stream), cut into buckets of a tenth of
// it, and a key may make 5 requests per window: the Rate Limiter README's setting.
//
//  (a) per-key limit: the bucketed limiter (the Rate Limiter README's algorithm) and the
//      exact mode, next to an exact sliding log (an std::unordered_map of
//      std::deque of grant times, idle keys pruned at every checkpoint).
//      Exact mode must answer exactly as the log does (allowed, remaining,
//      retry time) and never grant more than the limit in any window; the
//      bucketed limiter never more than the limit in any window of
//      W - B + 1, so never more than twice the limit in a window of W, and
//      never denies a request that the exact rule would admit. Measured:
//      memory, time per decision, and how much more the bucketed limiter
//      admits than the exact one.
//  (b) a global cap over all keys, with overrides for the busiest keys,
//      which stay held to the cap: the same promises per key (with its own
//      limit) and for all keys together; exact mode against the log again.
//  (c) one key under random and adversarial traffic: the bucketed
//      limiter's over-admission beside the README's estimate (B / 2W).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "demo.hpp"

namespace demo {

namespace {

constexpr size_t kBlock = 4096;           // events per timed block
constexpr uint64_t kLimit = 5;            // requests per key and window (the README's 5 per second)
constexpr uint64_t kTargetBuckets = 10;   // buckets per window (the README's 100 ms of 1 s)
constexpr size_t kOverrides = 3;          // (b): the busiest keys get their own limit ...
constexpr uint64_t kOverrideFactor = 10;  // ... of 10 times the default
constexpr size_t kRoundTripProbes = 20000;

struct LimiterDeleter {
    void operator()(tf_rate_limiter *r) const { tf_rate_limiter_free(r); }
};
using Limiter = std::unique_ptr<tf_rate_limiter, LimiterDeleter>;

struct Answer {
    int allowed = 0;
    uint64_t remaining = 0, retry_at = 0;
};

struct Config {
    uint64_t window = 0, width = 0, limit = kLimit;
    uint64_t global = 0;               // 0: no global cap
    std::vector<uint32_t> overridden;  // keys with their own limit
    uint64_t override_limit = 0;
};

// The bucket width: the divisor of the window closest to kTargetBuckets
// buckets (the library needs one that divides the window).
uint64_t choose_width(uint64_t window) {
    for (uint64_t d = 0; d < TF_RATE_LIMITER_MAX_BUCKETS; ++d) {
        for (uint64_t nb : {kTargetBuckets + d, kTargetBuckets - d}) {
            if (nb >= 1 && nb <= TF_RATE_LIMITER_MAX_BUCKETS && nb <= window && window % nb == 0) return window / nb;
        }
        if (d >= kTargetBuckets) break;
    }
    return window;  // one bucket
}

bool make_limiter(const Config &c, uint32_t flags, const Stream &s, Limiter *out) {
    tf_rate_limiter *r = nullptr;
    if (!check(tf_rate_limiter_new(c.limit, c.window, c.width, 0, flags, &r), "tf_rate_limiter_new")) return false;
    out->reset(r);
    if (c.global != 0 && !check(tf_rate_limiter_set_global_limit(r, c.global), "tf_rate_limiter_set_global_limit"))
        return false;
    for (uint32_t k : c.overridden)
        if (!check(tf_rate_limiter_set_key_limit(r, s.keys.data(k), s.keys.size(k), c.override_limit),
                   "tf_rate_limiter_set_key_limit"))
            return false;
    return true;
}

// ---------------------------------------------------------------------------
// The exact reference: a sliding log of grant times per key (the straightforward
// std::unordered_map<std::string, std::deque<uint64_t>>), heap counted, and
// one for all keys together when there is a global cap. It answers as the
// header documents: allowed when the key and the cap both have room;
// remaining bounded by both; the retry time is when both will have room.
class SlidingLog {
   public:
    using Times = std::deque<uint64_t, CountingAllocator<uint64_t>>;
    using Value = std::pair<const std::string, Times>;
    using Map = std::unordered_map<std::string, Times, std::hash<std::string>, std::equal_to<std::string>,
                                   CountingAllocator<Value>>;

    SlidingLog(uint64_t window, uint64_t global) : window_(window), global_(global) {}

    Answer acquire(const std::string &key, uint64_t limit, uint64_t now) {
        Times &log = map_.try_emplace(key, CountingAllocator<uint64_t>(&heap_)).first->second;
        expire(log, now);
        expire(all_, now);
        Answer a;
        const uint64_t used = log.size();
        const bool key_room = used < limit;
        const bool global_room = global_ == 0 || all_.size() < global_;
        a.allowed = key_room && global_room;
        uint64_t remaining = used >= limit ? 0 : limit - used;
        if (global_ != 0) remaining = std::min<uint64_t>(remaining, all_.size() >= global_ ? 0 : global_ - all_.size());
        if (a.allowed) {
            a.remaining = remaining - 1;
            log.push_back(now);
            if (global_ != 0) all_.push_back(now);
        } else {
            a.remaining = remaining;
            // The (used + 1 - limit)-th oldest grant must leave the window.
            if (!key_room) a.retry_at = log[size_t(used - limit)] + window_;
            if (!global_room) a.retry_at = std::max(a.retry_at, all_[size_t(all_.size() - global_)] + window_);
        }
        return a;
    }

    // Drops the keys with nothing in the window (what the limiter reclaims).
    void prune(uint64_t now) {
        for (auto it = map_.begin(); it != map_.end();) {
            expire(it->second, now);
            it = it->second.empty() ? map_.erase(it) : std::next(it);
        }
    }

    size_t keys() const { return map_.size(); }
    size_t memory() const {
        size_t n = heap_.bytes + sizeof map_;
        for (const auto &e : map_)
            if (e.first.capacity() > 15) n += malloc_chunk(e.first.capacity() + 1);
        return n;
    }

   private:
    template <class D>
    void expire(D &log, uint64_t now) const {
        while (!log.empty() && log.front() + window_ <= now) log.pop_front();
    }

    uint64_t window_, global_;
    HeapCounter heap_;
    Map map_{CountingAllocator<Value>(&heap_)};
    std::deque<uint64_t> all_;
};

// ---------------------------------------------------------------------------
// Window checks over the grants of one run.

// The events of each key, in stream order (a counting sort by key).
struct ByKey {
    std::vector<uint32_t> begin;  // key k's events are order[begin[k] .. begin[k + 1])
    std::vector<uint32_t> order;
};

ByKey group_by_key(const Stream &s) {
    ByKey g;
    g.begin.assign(size_t(s.keys.count()) + 1, 0);
    for (uint32_t k : s.key) ++g.begin[k + 1];
    for (size_t k = 1; k < g.begin.size(); ++k) g.begin[k] += g.begin[k - 1];
    g.order.resize(s.events());
    std::vector<uint32_t> next(g.begin.begin(), g.begin.end() - 1);
    for (size_t i = 0; i < s.events(); ++i) g.order[next[s.key[i]]++] = uint32_t(i);
    return g;
}

struct WindowStats {
    uint64_t grants = 0;
    uint64_t over_in_window = 0;                 // keys with more than their limit in some window W
    uint64_t over_in_short = 0;                  // ... in some window W - B + 1
    uint64_t over_twice = 0;                     // ... more than twice their limit in some window W
    uint64_t worst_window = 0, worst_limit = 1;  // the key with the highest max / limit in W
    uint64_t worst_short = 0, worst_short_limit = 1;
    uint64_t over_admitted = 0;                     // grants with more than the key's limit in their window W
    uint64_t denied_with_room = 0;                  // denials with fewer than the limit granted in the window W
    uint64_t global_max = 0, global_max_short = 0;  // all keys, most grants in any W / W - B + 1
};

// The most grants within any window (t - length, t] of sorted times.
uint64_t max_in_window(const std::vector<uint64_t> &t, uint64_t length) {
    uint64_t best = 0;
    for (size_t lo = 0, hi = 0; hi < t.size(); ++hi) {
        while (t[lo] + length <= t[hi]) ++lo;
        best = std::max<uint64_t>(best, hi - lo + 1);
    }
    return best;
}

WindowStats check_windows(const ByKey &g, const std::vector<uint64_t> &clock, const std::vector<char> &allowed,
                          const std::vector<uint64_t> &key_limit, uint64_t window, uint64_t short_window) {
    WindowStats w;
    std::vector<uint64_t> times;
    for (size_t k = 0; k + 1 < g.begin.size(); ++k) {
        times.clear();
        const uint64_t limit = key_limit[k];
        size_t lo = 0;
        for (uint32_t j = g.begin[k]; j < g.begin[k + 1]; ++j) {
            const uint32_t i = g.order[j];
            const uint64_t t = clock[i];
            while (lo < times.size() && times[lo] + window <= t) ++lo;
            const uint64_t before = times.size() - lo;  // granted within (t - W, t) so far
            if (allowed[i]) {
                times.push_back(t);
                if (before + 1 > limit) ++w.over_admitted;
            } else if (before < limit) {
                ++w.denied_with_room;
            }
        }
        if (times.empty()) continue;
        w.grants += times.size();
        const uint64_t in_w = max_in_window(times, window), in_short = max_in_window(times, short_window);
        w.over_in_window += in_w > limit;
        w.over_in_short += in_short > limit;
        w.over_twice += in_w > 2 * limit;
        if (in_w * w.worst_limit > w.worst_window * limit) w.worst_window = in_w, w.worst_limit = limit;
        if (in_short * w.worst_short_limit > w.worst_short * limit)
            w.worst_short = in_short, w.worst_short_limit = limit;
    }
    times.clear();
    for (size_t i = 0; i < clock.size(); ++i)
        if (allowed[i]) times.push_back(clock[i]);
    w.global_max = max_in_window(times, window);
    w.global_max_short = max_in_window(times, short_window);
    return w;
}

std::string ratio_text(uint64_t a, uint64_t b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s/%s", count(a).c_str(), count(b).c_str());
    return buf;
}

// ---------------------------------------------------------------------------
// One replay of the stream through a bucketed and an exact-mode limiter and
// the sliding log, with the checks above.

struct Side {
    const char *name;
    uint32_t flags;
    Limiter limiter;
    Stopwatch time;
    std::vector<char> allowed;
    std::vector<Answer> answers;
    size_t empty = 0;  // memory of the limiter before its first key
    size_t memory = 0, peak_memory = 0;
    uint64_t keys = 0, peak_keys = 0, reclaimed = 0;
};

// The limiter's counters, or false (with the error printed).
bool stats_of(const tf_rate_limiter *r, tf_rate_limiter_stats *st) {
    *st = TF_RATE_LIMITER_STATS_INIT;
    return check(tf_rate_limiter_get_stats(r, st), "tf_rate_limiter_get_stats");
}

bool measure(Side &side) {
    tf_rate_limiter_stats st;
    if (!stats_of(side.limiter.get(), &st)) return false;
    side.memory = size_t(st.memory), side.keys = st.keys, side.reclaimed = st.reclaimed;
    side.peak_memory = std::max(side.peak_memory, side.memory);
    side.peak_keys = std::max(side.peak_keys, st.keys);
    return true;
}

// Serializes the limiter, reads it back and asks both the same questions
// (peek, at the same time, for a sample of the keys): the copy must answer
// identically and count the same keys.
bool round_trip(const Stream &s, tf_rate_limiter *r, uint64_t now, size_t *blob_bytes, bool *same) {
    size_t size = 0, written = 0;
    if (!check(tf_rate_limiter_serialized_size(r, &size), "tf_rate_limiter_serialized_size")) return false;
    std::vector<unsigned char> blob(size);
    tf_rate_limiter *raw = nullptr;
    if (!check(tf_rate_limiter_serialize(r, blob.data(), blob.size(), &written), "tf_rate_limiter_serialize") ||
        !check(tf_rate_limiter_deserialize(blob.data(), written, nullptr, &raw), "tf_rate_limiter_deserialize"))
        return false;
    Limiter copy(raw);
    *blob_bytes = written;
    tf_rate_limiter_stats a_stats, b_stats;
    if (!stats_of(r, &a_stats) || !stats_of(raw, &b_stats)) return false;
    *same = a_stats.keys == b_stats.keys;
    const uint32_t n = s.keys.count();
    for (uint32_t k = 0; k < n; k += 1 + n / uint32_t(kRoundTripProbes)) {
        Answer a, b;
        if (!check(
                tf_rate_limiter_peek(r, s.keys.data(k), s.keys.size(k), now, 1, &a.allowed, &a.remaining, &a.retry_at),
                "tf_rate_limiter_peek") ||
            !check(tf_rate_limiter_peek(raw, s.keys.data(k), s.keys.size(k), now, 1, &b.allowed, &b.remaining,
                                        &b.retry_at),
                   "tf_rate_limiter_peek"))
            return false;
        *same = *same && a.allowed == b.allowed && a.remaining == b.remaining && a.retry_at == b.retry_at;
    }
    return true;
}

Outcome replay(const Context &ctx, const std::vector<uint64_t> &clock, const ByKey &by_key, const Config &cfg,
               const std::vector<uint64_t> &key_limit, bool with_global) {
    const Stream &s = ctx.stream;
    const size_t events = s.events();
    const uint64_t W = cfg.window, B = cfg.width, short_window = W - B + 1;
    Side sides[2] = {{"bucketed", 0, {}, {}, {}, {}, 0, 0, 0, 0, 0, 0},
                     {"exact mode", TF_RATE_LIMITER_EXACT, {}, {}, {}, {}, 0, 0, 0, 0, 0, 0}};
    for (Side &side : sides) {
        if (!make_limiter(cfg, side.flags, s, &side.limiter)) return Outcome::api_error;
        tf_rate_limiter_stats st;
        if (!stats_of(side.limiter.get(), &st)) return Outcome::api_error;
        side.empty = size_t(st.memory);
        side.allowed.assign(events, 0);
        side.answers.resize(kBlock);
    }
    SlidingLog log(W, cfg.global);
    Exact names;  // reused key buffer
    std::vector<Answer> ref(kBlock);
    Stopwatch log_time;
    uint64_t log_grants = 0, differ_allowed = 0, differ_detail = 0, bad_retry = 0;
    size_t log_memory = 0, log_peak = 0, log_keys = 0;
    uint64_t next_checkpoint = events == 0 ? 0 : clock[0] + ctx.checkpoint_every;
    Series *series = with_global ? nullptr
                                 : ctx.recorder->open("rate_limiter", "Rate limiter (tf_rate_limiter), exact mode",
                                                      "decisions differing from the exact sliding log",
                                                      "In exact mode every decision (allowed, remaining, retry time) "
                                                      "is the one an exact sliding log of grants makes: none differs.",
                                                      true, "promise: 0");
    const char *what = with_global ? "rate limiter (b)" : "rate limiter (a)";

    for (size_t begin = 0, end = 0; begin < events; begin = end) {
        // A block ends early at the event that reaches the next checkpoint.
        while (end < events && end - begin < kBlock)
            if (clock[end++] >= next_checkpoint) break;
        ctx.progress->at(what, begin, events);
        for (Side &side : sides) {
            tf_rate_limiter *r = side.limiter.get();
            tf_status st = TF_OK;
            side.time.start();
            for (size_t i = begin; i < end && st == TF_OK; ++i) {
                Answer &a = side.answers[i - begin];
                const uint32_t k = s.key[i];
                st = tf_rate_limiter_acquire(r, s.keys.data(k), s.keys.size(k), clock[i], 1, &a.allowed, &a.remaining,
                                             &a.retry_at);
            }
            side.time.stop();
            if (!check(st, "tf_rate_limiter_acquire")) return Outcome::api_error;
            for (size_t i = begin; i < end; ++i) {
                const Answer &a = side.answers[i - begin];
                side.allowed[i] = char(a.allowed);
                // A denial names a later time, within one window.
                if (!a.allowed && (a.retry_at <= clock[i] || a.retry_at > clock[i] + W) && ++bad_retry <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL: %s denial at %llu names retry time %llu\n", side.name,
                                 (unsigned long long)clock[i], (unsigned long long)a.retry_at);
            }
        }
        log_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t k = s.key[i];
            ref[i - begin] = log.acquire(names.k(s, k), key_limit[k], clock[i]);
        }
        log_time.stop();
        for (size_t i = begin; i < end; ++i) {
            const Answer &a = sides[1].answers[i - begin], &b = ref[i - begin];
            log_grants += uint64_t(b.allowed);
            if (a.allowed != b.allowed) {
                if (++differ_allowed <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL: exact mode %s key \"%.*s\" at %llu; the sliding log %s it\n",
                                 a.allowed ? "granted" : "denied", int(s.keys.size(s.key[i])), s.keys.data(s.key[i]),
                                 (unsigned long long)clock[i], b.allowed ? "grants" : "denies");
            } else if (a.remaining != b.remaining || a.retry_at != b.retry_at) {
                if (++differ_detail <= 5)
                    std::fprintf(stderr,
                                 "tf-demo: FAIL: exact mode, key \"%.*s\" at %llu (%s): remaining %llu, retry at %llu; "
                                 "the sliding log says %llu, %llu\n",
                                 int(s.keys.size(s.key[i])), s.keys.data(s.key[i]), (unsigned long long)clock[i],
                                 a.allowed ? "granted" : "denied", (unsigned long long)a.remaining,
                                 (unsigned long long)a.retry_at, (unsigned long long)b.remaining,
                                 (unsigned long long)b.retry_at);
            }
        }
        const uint64_t now = clock[end - 1];
        if (now >= next_checkpoint || end == events) {
            next_checkpoint = now + ctx.checkpoint_every;
            for (Side &side : sides)
                if (!measure(side)) return Outcome::api_error;
            log.prune(now);
            log_memory = log.memory();
            log_keys = log.keys();
            log_peak = std::max(log_peak, log_memory);
            if (series)
                series->add(double(end), double(differ_allowed + differ_detail), 0.0, double(sides[1].memory),
                            double(log_memory));
        }
    }

    ctx.progress->clear();
    // Serialization round trips at the end.
    const uint64_t end_time = events == 0 ? 1 : clock[events - 1];
    size_t blob[2] = {0, 0};
    bool same[2] = {true, true};
    for (int j = 0; j < 2; ++j)
        if (!round_trip(s, sides[j].limiter.get(), end_time, &blob[j], &same[j])) return Outcome::api_error;

    const WindowStats wb = check_windows(by_key, clock, sides[0].allowed, key_limit, W, short_window);
    const WindowStats we = check_windows(by_key, clock, sides[1].allowed, key_limit, W, short_window);
    uint64_t live = 0;  // keys with a grant in the last window (bucketed run)
    {
        std::vector<char> seen(s.keys.count(), 0);
        for (size_t i = events; i-- > 0 && clock[i] + W > end_time;)
            if (sides[0].allowed[i] && !seen[s.key[i]]) seen[s.key[i]] = 1, ++live;
    }

    // The report.
    char buf[240];
    print_columns("", "bucketed", "exact mode", "exact log");
    print_columns("memory", bytes(sides[0].memory), bytes(sides[1].memory), bytes(log_memory));
    print_columns("  at most", bytes(sides[0].peak_memory), bytes(sides[1].peak_memory), bytes(log_peak));
    print_columns("keys tracked", count(sides[0].keys), count(sides[1].keys), count(log_keys));
    // Per key: the memory beyond that of an empty limiter (its 64 shards).
    std::string per_key[3];
    for (int j = 0; j < 2; ++j) {
        const Side &d = sides[j];
        std::snprintf(
            buf, sizeof buf, "%.1f",
            d.peak_keys ? double(d.peak_memory - std::min(d.peak_memory, d.empty)) / double(d.peak_keys) : 0.0);
        per_key[j] = buf;
    }
    std::snprintf(buf, sizeof buf, "%.1f", log_keys ? double(log_memory) / double(log_keys) : 0.0);
    per_key[2] = buf;
    print_columns("bytes per key", per_key[0], per_key[1], per_key[2]);
    print_columns("time per decision", nanos(sides[0].time.per(events)), nanos(sides[1].time.per(events)),
                  nanos(log_time.per(events)));
    print_columns("granted", count(wb.grants), count(we.grants), count(log_grants));
    std::snprintf(buf, sizeof buf, "%s idle keys by the bucketed limiter (%s with a grant in the last %s)",
                  count(sides[0].reclaimed).c_str(), count(live).c_str(), span(s, W).c_str());
    print_row("reclaimed", buf);

    print_verdict("exact mode = log", count(differ_allowed) + " of " + count(events) + " decisions differ (must be 0)",
                  hard(differ_allowed == 0));
    print_verdict("  remaining, retry", count(differ_detail) + " answers differ from the log's (must be 0)",
                  hard(differ_detail == 0));
    print_verdict("exact: N per W",
                  "max " + ratio_text(we.worst_window, we.worst_limit) + " of a key's limit in any " + span(s, W) +
                      "; " + count(we.over_in_window) + " keys over",
                  hard(we.over_in_window == 0));
    print_verdict("bucketed: W - B + 1",
                  "max " + ratio_text(wb.worst_short, wb.worst_short_limit) + " in any " + span(s, short_window) +
                      "; " + count(wb.over_in_short) + " keys over",
                  hard(wb.over_in_short == 0));
    print_verdict("bucketed: W",
                  "max " + ratio_text(wb.worst_window, wb.worst_limit) + " in any " + span(s, W) + " (bound 2N); " +
                      count(wb.over_twice) + " keys over",
                  hard(wb.over_twice == 0));
    bool room_ok = true;
    if (!with_global) {
        room_ok = wb.denied_with_room == 0 && we.denied_with_room == 0;
        print_verdict("denied with room",
                      count(wb.denied_with_room + we.denied_with_room) + " denials with < N granted in " + span(s, W) +
                          " (must be 0)",
                      hard(room_ok));
    }
    print_verdict("retry times", count(bad_retry) + " not in (now, now + W] (must be 0)", hard(bad_retry == 0));
    bool global_ok = true;
    if (with_global) {
        global_ok = we.global_max <= cfg.global && wb.global_max_short <= cfg.global && wb.global_max <= 2 * cfg.global;
        print_verdict("cap, exact",
                      "max " + count(we.global_max) + " in any " + span(s, W) + " (cap " + count(cfg.global) + ")",
                      hard(we.global_max <= cfg.global));
        print_verdict("cap, bucketed",
                      "max " + count(wb.global_max_short) + " in any " + span(s, short_window) + ", " +
                          count(wb.global_max) + " in any " + span(s, W),
                      hard(wb.global_max_short <= cfg.global && wb.global_max <= 2 * cfg.global));
    }
    std::snprintf(buf, sizeof buf, "bucketed grants %+.2f%% vs exact mode; %s of them early",
                  100.0 * (ratio(wb.grants, we.grants) - 1.0), percent(ratio(wb.over_admitted, wb.grants)).c_str());
    print_row("over-admission", buf);
    std::snprintf(buf, sizeof buf, "(early: over N in the real %s window ending at the grant)", span(s, W).c_str());
    print_row("", buf);
    print_verdict("serialized", bytes(blob[0]) + " + " + bytes(blob[1]) + " blobs; the copies answer identically",
                  hard(same[0] && same[1]));

    const bool ok = differ_allowed == 0 && differ_detail == 0 && we.over_in_window == 0 && wb.over_in_short == 0 &&
                    wb.over_twice == 0 && room_ok && bad_retry == 0 && global_ok && same[0] && same[1];
    return ok ? Outcome::ok : Outcome::promise_broken;
}

// ---------------------------------------------------------------------------
// (c) one key under synthetic traffic

struct PatternResult {
    uint64_t requests = 0, grants[2] = {0, 0}, over[2] = {0, 0}, max_window[2] = {0, 0};
};

// Runs the request times through a bucketed and an exact limiter (one key)
// and measures the grants in every real window.
bool run_pattern(const std::vector<uint64_t> &times, uint64_t window, uint64_t width, uint64_t limit,
                 PatternResult *out) {
    out->requests = times.size();
    for (int j = 0; j < 2; ++j) {
        Limiter r;
        Config c;
        c.window = window, c.width = width, c.limit = limit;
        Stream none;
        if (!make_limiter(c, j ? TF_RATE_LIMITER_EXACT : 0, none, &r)) return false;
        std::vector<uint64_t> granted;
        for (uint64_t t : times) {
            int allowed = 0;
            if (!check(tf_rate_limiter_acquire(r.get(), "k", 1, t, 1, &allowed, nullptr, nullptr),
                       "tf_rate_limiter_acquire"))
                return false;
            if (!allowed) continue;
            granted.push_back(t);
        }
        out->grants[j] = granted.size();
        out->max_window[j] = max_in_window(granted, window);
        for (size_t lo = 0, hi = 0; hi < granted.size(); ++hi) {
            while (granted[lo] + window <= granted[hi]) ++lo;
            out->over[j] += hi - lo + 1 > limit;
        }
    }
    return true;
}

Outcome patterns(const Context &ctx, uint64_t window, uint64_t width, uint64_t limit) {
    const Stream &s = ctx.stream;
    const uint64_t windows = 2000;
    Rng rng(ctx.options.seed ^ 0x5EED0002u);
    struct Named {
        std::string name;
        std::vector<uint64_t> times;
    };
    std::vector<Named> list;
    for (double load : {0.8, 1.5, 4.0}) {  // Poisson arrivals at load x N per window
        Named p;
        char name[64];
        std::snprintf(name, sizeof name, "Poisson, %.1f N per W", load);
        p.name = name;
        const double mean_gap = double(window) / (load * double(limit));
        double t = 1.0;
        while (t < double(windows * window)) {
            t += -mean_gap * std::log1p(-rng.uniform());
            p.times.push_back(uint64_t(t) + 1);
        }
        list.push_back(std::move(p));
    }
    {  // the README's example: N requests at the end of a bucket, N more when it leaves
        Named p;
        p.name = "adversarial";
        for (uint64_t j = 1; j < windows; j += 2) {
            const uint64_t last = j * window - 1;  // last unit of a bucket
            for (uint64_t i = 0; i < limit; ++i) p.times.push_back(last);
            // that bucket (index last / width) leaves at (last / width + W / width) * width
            const uint64_t leaves = (last / width + window / width) * width;
            for (uint64_t i = 0; i < limit; ++i) p.times.push_back(leaves);
        }
        list.push_back(std::move(p));
    }
    std::printf("  %-21s %8s %8s %14s %7s %6s %6s\n", "traffic, one key", "requests", "exact", "bucketed", "early",
                "max/W", "max/W");
    bool ok = true;
    for (const Named &p : list) {
        PatternResult r;
        if (!run_pattern(p.times, window, width, limit, &r)) return Outcome::api_error;
        char more[32];
        std::snprintf(more, sizeof more, "%s %+.1f%%", count(r.grants[0]).c_str(),
                      100.0 * (ratio(r.grants[0], r.grants[1]) - 1.0));
        std::printf("  %-21s %8s %8s %14s %7s %6s %6s\n", p.name.c_str(), count(r.requests).c_str(),
                    count(r.grants[1]).c_str(), more, percent(ratio(r.over[0], r.grants[0])).c_str(),
                    count(r.max_window[1]).c_str(), count(r.max_window[0]).c_str());
        ok = ok && r.over[1] == 0 && r.max_window[1] <= limit && r.max_window[0] <= 2 * limit;
    }
    char buf[200];
    print_row("", "grants of each mode; early: bucketed grants with N others in their real W;");
    print_row("", "max/W: most grants in any window W, exact mode then bucketed");
    std::snprintf(buf, sizeof buf, "B / 2W = %s of the grants early (uniform traffic)",
                  percent(double(width) / (2.0 * double(window))).c_str());
    print_row("README's estimate", buf);
    print_verdict("exact mode", "never over N per W; bucketed never over 2N (all traffic above)", hard(ok));
    (void)s;
    return ok ? Outcome::ok : Outcome::promise_broken;
}

class RateLimiterSection : public Section {
   public:
    const char *title() const override { return "Rate limiter (tf_rate_limiter)"; }
    Outcome run(const Context &ctx) override {
        const Stream &s = ctx.stream;
        const Options &opt = ctx.options;
        Config cfg;
        cfg.window = ctx.window;
        cfg.limit = opt.limit ? opt.limit : kLimit;
        cfg.width = opt.buckets ? cfg.window / opt.buckets : choose_width(cfg.window);
        const uint64_t nb = cfg.window / cfg.width;

        // The limiter's clock: the stream's, clamped where it goes backwards.
        std::vector<uint64_t> clock(s.events());
        for (size_t i = 0, high = 0; i < s.events(); ++i) clock[i] = high = std::max<uint64_t>(high, s.time[i]);
        const ByKey by_key = group_by_key(s);

        char buf[240];
        std::snprintf(buf, sizeof buf, "%llu requests per key per %s (W), %llu buckets of %s (B)",
                      (unsigned long long)cfg.limit, span(s, cfg.window).c_str(), (unsigned long long)nb,
                      span(s, cfg.width).c_str());
        print_row("limit", buf);
        print_choice("limit " + count(cfg.limit) + " per key per window", "--limit", opt.limit != 0,
                     "the Rate Limiter README's 5 per second");
        print_choice("window " + span(s, cfg.window), "--window", opt.window != 0,
                     "the pacing interval (" + std::string(opt.interval ? "--interval" : "1/60 of the horizon") + ")");
        print_choice(count(nb) + " buckets of " + span(s, cfg.width), "--buckets", opt.buckets != 0,
                     "the divisor of the window nearest " + count(kTargetBuckets));
        print_row("", "every event is one request: acquire(key, now, 1)");
        print_row("exact log", "std::unordered_map<std::string, std::deque<uint64_t>>, heap counted,");
        print_row("", "keys with an empty window pruned at every checkpoint");

        std::printf("\n");
        print_subtitle("(a) per-key limit:", "bucketed (the seed) and exact mode");
        std::vector<uint64_t> key_limit(s.keys.count(), cfg.limit);
        Outcome o = replay(ctx, clock, by_key, cfg, key_limit, false);
        if (o == Outcome::api_error) return o;

        // (b): a cap at 0.8 times the mean number of events per window (it
        // binds whenever the traffic is above its mean), and overrides for
        // the busiest keys.
        Config g = cfg;
        const uint64_t time_span = s.last - s.first;
        const double per_window =
            time_span == 0 ? double(s.events()) : double(s.events()) * double(cfg.window) / double(time_span);
        g.global =
            opt.global_limit ? opt.global_limit : std::max<uint64_t>(1, uint64_t(std::llround(0.8 * per_window)));
        g.override_limit = cfg.limit * kOverrideFactor;
        std::vector<uint32_t> busiest(s.keys.count());
        for (uint32_t k = 0; k < s.keys.count(); ++k) busiest[k] = k;
        const size_t n_over = std::min(kOverrides, busiest.size());
        std::partial_sort(busiest.begin(), busiest.begin() + long(n_over), busiest.end(), [&](uint32_t a, uint32_t b) {
            const uint32_t na = by_key.begin[a + 1] - by_key.begin[a], nb2 = by_key.begin[b + 1] - by_key.begin[b];
            return na != nb2 ? na > nb2 : a < b;
        });
        g.overridden.assign(busiest.begin(), busiest.begin() + long(n_over));
        for (uint32_t k : g.overridden) key_limit[k] = g.override_limit;
        std::printf("\n");
        std::snprintf(buf, sizeof buf, "cap %s per %s over all keys; the %zu busiest keys may make %llu",
                      count(g.global).c_str(), span(s, g.window).c_str(), n_over, (unsigned long long)g.override_limit);
        print_subtitle("(b) global cap and overrides:", buf);
        print_choice("cap " + count(g.global) + " per window over all keys", "--global-limit", opt.global_limit != 0,
                     "0.8 x the mean events per window, so that it binds when traffic is above its mean");
        o = worst(o, replay(ctx, clock, by_key, g, key_limit, true));
        if (o == Outcome::api_error) return o;

        std::printf("\n");
        print_subtitle("(c) over-admission:", "one key, 2,000 windows of random and adversarial traffic");
        return worst(o, patterns(ctx, cfg.window, cfg.width, cfg.limit));
    }
};

}  // namespace

std::unique_ptr<Section> make_rate_limiter_section() { return std::make_unique<RateLimiterSection>(); }

}  // namespace demo
