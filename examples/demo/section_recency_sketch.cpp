// section_recency_sketch.cpp - the RecencySketch part of tf-demo.
//
// Three uses of the sketch, each replayed over the whole stream next to an
// exact reference (an std::unordered_map keyed by the key bytes):
//  (a) last-seen: for every event, "when did I last see this key?", then an
//      update; once in the standard and once in the blocked layout;
//  (b) pacing: every event is a request, granted at most once per interval;
//  (c) TTL prefilter: every event is a cache read; a miss fills the cache.
// The structure and the reference run in turns on blocks of events, each
// timed on its own, and are compared after every block.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "demo.hpp"

namespace demo {

namespace {

constexpr size_t kBlock = 4096;  // events per timed block
constexpr int kProbesPerCheckpoint = 2000;

struct SketchDeleter {
    void operator()(tf_recency_sketch *s) const { tf_recency_sketch_free(s); }
};
using Sketch = std::unique_ptr<tf_recency_sketch, SketchDeleter>;

struct Sized {
    Sketch sketch;
    uint64_t width = 0, cells = 0;
    uint32_t depth = 0;
    size_t memory = 0;
};

bool make_sketch(uint64_t keys, double target, uint32_t seed, uint32_t flags, Sized *out) {
    tf_recency_sketch *s = nullptr;
    if (!check(tf_recency_sketch_new_for(keys, target, seed, flags, &s), "tf_recency_sketch_new_for")) return false;
    out->sketch.reset(s);
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    if (!check(tf_recency_sketch_get_info(s, &info), "tf_recency_sketch_get_info")) return false;
    out->width = info.width;
    out->depth = info.depth;
    out->cells = info.cells;
    return check(tf_recency_sketch_memory(s, &out->memory), "tf_recency_sketch_memory");
}

std::string sizing_line(const Sized &z, uint64_t keys, double target, uint64_t per, const Stream &s) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "new_for(%s keys per %s, p %.4g) -> %s x %u", count(keys).c_str(),
                  span(s, per).c_str(), target, count(z.width).c_str(), unsigned(z.depth));
    return buf;
}

// The choice of the keys a sketch is sized for.
void print_capacity(const Context &ctx, uint64_t n, uint64_t per, const char *window) {
    print_choice("capacity " + count(n) + " keys", "--capacity", ctx.options.capacity != 0,
                 "the most distinct keys in any " + span(ctx.stream, per) + " (" + window + ")");
}

// Memory and time of the sketch next to the exact reference. "Pruned" is
// the reference holding only the keys of the busiest window, which is the
// least an exact structure must keep to answer the same questions.
void print_cost(const Sized &z, const Exact &x, uint64_t window_keys, double sketch_ns, double exact_ns,
                const char *per) {
    const size_t exact = x.memory();
    const double per_entry = x.map.empty() ? 0.0 : double(exact) / double(x.map.size());
    print_columns("", "sketch", "exact map", "exact, pruned");
    print_columns("memory", bytes(z.memory), bytes(exact), bytes(size_t(per_entry * double(window_keys))));
    print_columns(std::string("time per ") + per, nanos(sketch_ns), nanos(exact_ns), "");
}

// Walks the stream in timed blocks and calls `checkpoint(now)` every
// ctx.checkpoint_every units of stream time (after the block that crosses it).
template <class Block, class Checkpoint>
bool replay(const Context &ctx, const char *what, Block block, Checkpoint checkpoint) {
    const Stream &s = ctx.stream;
    uint64_t now = 0, next_checkpoint = s.first + ctx.checkpoint_every;
    for (size_t begin = 0, end = 0; begin < s.events(); begin = end) {
        // A block ends early at the event that reaches the next checkpoint.
        while (end < s.events() && end - begin < kBlock) {
            now = std::max(now, s.time[end++]);
            if (now >= next_checkpoint) break;
        }
        ctx.progress->at(what, begin, s.events());
        if (!block(begin, end)) return false;
        if (now >= next_checkpoint) {
            if (!checkpoint(now, end)) return false;
            next_checkpoint = now + ctx.checkpoint_every;
        }
    }
    ctx.progress->clear();
    return true;
}

// ---------------------------------------------------------------------------
// (a) last-seen queries

Outcome last_seen(const Context &ctx, uint32_t flags) {
    const Stream &s = ctx.stream;
    const uint64_t H = ctx.horizon;
    const uint64_t n = ctx.options.capacity ? ctx.options.capacity : std::max<uint64_t>(1, ctx.keys_per_horizon.max);
    const double target = ctx.options.target;
    Sized z;
    if (!make_sketch(n, target, uint32_t(ctx.options.seed * 2654435761u + 1), flags, &z)) return Outcome::api_error;
    tf_recency_sketch *sk = z.sketch.get();
    Exact exact;

    std::vector<uint64_t> truth(s.keys.count(), 0);  // true last-seen time per key
    std::vector<uint32_t> seen;                      // keys in order of first sight
    std::vector<uint64_t> est(kBlock), ref(kBlock);
    Stopwatch sketch_time, exact_time;
    uint64_t older = 0, newer = 0, idle_queries = 0, idle_too_new = 0, reference_mismatch = 0;
    uint64_t probes = 0, probes_too_new = 0;
    DistinctKeys idle_keys(s.keys.count()), probed_keys(s.keys.count());
    EstimateMean estimate;
    Rng rng(ctx.options.seed ^ 0xA5A5A5A5u);

    auto block = [&](size_t begin, size_t end) {
        sketch_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t k = s.key[i];
            tf_status st = tf_recency_sketch_query(sk, s.keys.data(k), s.keys.size(k), &est[i - begin]);
            if (st == TF_OK) st = tf_recency_sketch_update(sk, s.keys.data(k), s.keys.size(k), s.time[i]);
            if (st != TF_OK) {
                sketch_time.stop();
                return check(st, "tf_recency_sketch_query/update");
            }
        }
        sketch_time.stop();
        exact_time.start();
        for (size_t i = begin; i < end; ++i) {
            auto it = exact.map.try_emplace(exact.k(s, s.key[i]), s.time[i]);
            ref[i - begin] = it.second ? TF_NEVER : it.first->second;
            if (!it.second && it.first->second < s.time[i]) it.first->second = s.time[i];
        }
        exact_time.stop();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t k = s.key[i];
            const uint64_t t = s.time[i], e = est[i - begin], tr = truth[k];
            if (ref[i - begin] != tr) ++reference_mismatch;
            if (e < tr) {
                if (++older <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL: key \"%.*s\" at %llu read as last seen %llu, truly %llu\n",
                                 int(s.keys.size(k)), s.keys.data(k), (unsigned long long)t, (unsigned long long)e,
                                 (unsigned long long)tr);
            } else if (e > tr) {
                ++newer;
            }
            // A key idle for at least the horizon (or never seen) should not
            // read as seen within the horizon.
            if (t > H && tr <= t - H) {
                ++idle_queries;
                idle_keys.add(k);
                if (e > t - H) ++idle_too_new;
            }
            if (tr == TF_NEVER) seen.push_back(k);
            truth[k] = std::max(tr, t);
        }
        return true;
    };

    // At each checkpoint: probe random keys idle for at least the horizon,
    // next to the sketch's own estimate for that horizon.
    Series *series = flags & TF_RECENCY_SKETCH_BLOCKED
                         ? nullptr
                         : ctx.recorder->open("recency_sketch", "RecencySketch (tf_recency_sketch), last-seen",
                                              "too-new answers of keys idle >= the horizon",
                                              "A last-seen answer is never older than the truth, and a key idle for "
                                              "the horizon reads as seen within it with probability at most the "
                                              "target error, when the sketch is sized for the keys per horizon.",
                                              false, "target error");
    auto checkpoint = [&](uint64_t now, size_t replayed) {
        if (series)
            series->add(double(replayed), ratio(idle_too_new, idle_queries), target, double(z.memory),
                        double(exact.memory()));
        if (now <= H || seen.empty()) return true;
        const uint64_t h = now - H;
        uint64_t stale = 0;
        for (int j = 0; j < kProbesPerCheckpoint; ++j) {
            const uint32_t k = seen[rng.below(seen.size())];
            if (truth[k] > h) continue;
            uint64_t e;
            if (!check(tf_recency_sketch_query(sk, s.keys.data(k), s.keys.size(k), &e), "tf_recency_sketch_query"))
                return false;
            ++stale;
            probed_keys.add(k);
            if (e > h) ++probes_too_new;
        }
        double p;
        if (!check(tf_recency_sketch_error_estimate(sk, h, &p), "tf_recency_sketch_error_estimate")) return false;
        estimate.add(p, double(stale));
        probes += stale;
        return true;
    };

    if (!replay(ctx, flags & TF_RECENCY_SKETCH_BLOCKED ? "sketch (a), blocked" : "sketch (a)", block, checkpoint))
        return Outcome::api_error;

    // The sketch survives a serialization round trip unchanged.
    size_t blob_size = 0, written = 0;
    bool round_trip = false;
    if (!check(tf_recency_sketch_serialized_size(sk, &blob_size), "tf_recency_sketch_serialized_size"))
        return Outcome::api_error;
    {
        std::vector<unsigned char> blob(blob_size);
        tf_recency_sketch *copy = nullptr;
        if (!check(tf_recency_sketch_serialize(sk, blob.data(), blob.size(), &written),
                   "tf_recency_sketch_serialize") ||
            !check(tf_recency_sketch_deserialize(blob.data(), written, nullptr, &copy),
                   "tf_recency_sketch_deserialize"))
            return Outcome::api_error;
        Sketch owned(copy);
        round_trip = true;
        for (size_t j = 0; j < seen.size(); j += 1 + seen.size() / 10000) {
            const uint32_t k = seen[j];
            uint64_t a = 0, b = 0;
            if (!check(tf_recency_sketch_query(sk, s.keys.data(k), s.keys.size(k), &a), "tf_recency_sketch_query") ||
                !check(tf_recency_sketch_query(copy, s.keys.data(k), s.keys.size(k), &b), "tf_recency_sketch_query"))
                return Outcome::api_error;
            round_trip = round_trip && a == b;
        }
    }

    const uint64_t q = s.events();
    const double idle_rate = ratio(idle_too_new, idle_queries), probe_rate = ratio(probes_too_new, probes);
    print_subtitle(
        flags & TF_RECENCY_SKETCH_BLOCKED ? "(a) last-seen, blocked layout:" : "(a) last-seen, standard layout:",
        "query, then update, per event");
    print_row("sized", sizing_line(z, n, target, H, s));
    print_capacity(ctx, n, H, "the horizon");
    print_cost(z, exact, n, sketch_time.per(q), exact_time.per(q), "event");
    print_verdict("older than truth", count(older) + " of " + count(q) + " answers (must be 0)", hard(older == 0));
    print_row("exact answers", percent(1.0 - ratio(newer, q)) + "; the rest read newer than the truth");
    print_verdict("too new @ horizon",
                  percent(idle_rate) + " of " + count(idle_queries) + " answers, key idle >= " + span(s, H),
                  soft(idle_rate, target, idle_keys.count()));
    if (probes > 0)
        print_verdict(
            "  sampled",
            percent(probe_rate) + " of " + count(probes) + " probes; error_estimate " + percent(estimate.mean()),
            soft(probe_rate, target, probed_keys.count()));
    else
        print_row("  sampled", "none: the stream is shorter than the horizon");
    print_row("  promised", "<= " + percent(target) + " with <= " + count(n) + " keys per horizon");
    print_verdict("serialized", bytes(written) + " blob; the copy answers identically", hard(round_trip));
    if (reference_mismatch != 0) {
        std::fprintf(stderr, "tf-demo: internal error: the exact map disagrees with the truth %llu times\n",
                     (unsigned long long)reference_mismatch);
        return Outcome::api_error;
    }
    return older == 0 && round_trip ? Outcome::ok : Outcome::promise_broken;
}

// ---------------------------------------------------------------------------
// (b) pacing

Outcome pacing(const Context &ctx) {
    const Stream &s = ctx.stream;
    const uint64_t L = ctx.interval;
    const uint64_t n = ctx.options.capacity ? ctx.options.capacity : std::max<uint64_t>(1, ctx.keys_per_interval.max);
    const double target = ctx.options.target;
    Sized z;
    if (!make_sketch(n, target, uint32_t(ctx.options.seed * 2654435761u + 2), 0, &z)) return Outcome::api_error;
    tf_recency_sketch *sk = z.sketch.get();
    Exact exact;  // an exact pacer: key -> last grant

    // The sketch's own grant history, to judge each of its decisions.
    std::vector<uint64_t> last_grant(s.keys.count(), 0);
    std::vector<int> granted(kBlock);
    std::vector<uint64_t> next_allowed(kBlock);
    std::vector<uint64_t> grant_times;
    Stopwatch sketch_time, exact_time;
    uint64_t grants = 0, exact_grants = 0, double_grants = 0, eligible = 0, over_denied = 0, bad_retry = 0;
    double extra_wait = 0.0;
    DistinctKeys allowed_keys(s.keys.count());
    EstimateMean estimate;

    auto block = [&](size_t begin, size_t end) {
        sketch_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t k = s.key[i];
            const tf_status st = tf_recency_sketch_pace(sk, s.keys.data(k), s.keys.size(k), s.time[i], L,
                                                        &granted[i - begin], &next_allowed[i - begin]);
            if (st != TF_OK) {
                sketch_time.stop();
                return check(st, "tf_recency_sketch_pace");
            }
        }
        sketch_time.stop();
        exact_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint64_t t = s.time[i];
            auto it = exact.map.try_emplace(exact.k(s, s.key[i]), t);
            if (it.second) {
                ++exact_grants;
            } else if (t >= it.first->second && t - it.first->second >= L) {
                ++exact_grants;
                it.first->second = t;
            }
        }
        exact_time.stop();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t k = s.key[i];
            const uint64_t t = s.time[i], last = last_grant[k];
            const bool allowed = last == 0 || (t >= last && t - last >= L);
            eligible += allowed;
            if (allowed) allowed_keys.add(k);
            if (granted[i - begin]) {
                ++grants;
                if (!allowed && ++double_grants <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL: key \"%.*s\" granted at %llu, last grant %llu\n",
                                 int(s.keys.size(k)), s.keys.data(k), (unsigned long long)t, (unsigned long long)last);
                last_grant[k] = std::max(last, t);
                grant_times.push_back(t);
            } else {
                // A denial names a retry time no earlier than the true one.
                if (last != 0 && next_allowed[i - begin] < last + L) ++bad_retry;
                if (allowed) {
                    ++over_denied;
                    extra_wait += double(next_allowed[i - begin] - t);
                }
            }
        }
        return true;
    };
    auto checkpoint = [&](uint64_t now, size_t) {
        if (now <= L) return true;
        double p;
        if (!check(tf_recency_sketch_error_estimate(sk, now - L, &p), "tf_recency_sketch_error_estimate")) return false;
        estimate.add(p, 1.0);
        return true;
    };
    if (!replay(ctx, "sketch (b)", block, checkpoint)) return Outcome::api_error;

    // The whole sketch grants at most width*depth requests per interval.
    std::sort(grant_times.begin(), grant_times.end());
    uint64_t busiest = 0;
    for (size_t lo = 0, hi = 0; hi < grant_times.size(); ++hi) {
        while (grant_times[lo] + L <= grant_times[hi]) ++lo;
        busiest = std::max<uint64_t>(busiest, hi - lo + 1);
    }

    const uint64_t q = s.events();
    const double rate = ratio(over_denied, eligible);
    char buf[200];
    print_subtitle("(b) pacing:", "every event is a request; one grant per key per " + span(s, L));
    print_row("sized", sizing_line(z, n, target, L, s));
    print_capacity(ctx, n, L, "the pacing interval");
    print_cost(z, exact, n, sketch_time.per(q), exact_time.per(q), "request");
    std::snprintf(buf, sizeof buf, "%s = %.2f%% of the exact pacer's %s", count(grants).c_str(),
                  100.0 * ratio(grants, exact_grants), count(exact_grants).c_str());
    print_row("grants", buf);
    print_verdict("granted twice", count(double_grants) + " within one interval (must be 0)", hard(double_grants == 0));
    print_verdict("retry times", count(bad_retry) + " earlier than the truth (must be 0)", hard(bad_retry == 0));
    print_verdict("over-denied", percent(rate) + " of " + count(eligible) + " allowed requests",
                  soft(rate, target, allowed_keys.count()));
    print_row("  estimate", "error_estimate " + percent(estimate.mean()) + "; promised <= " + percent(target));
    if (over_denied > 0) print_row("  extra wait", span(s, uint64_t(extra_wait / double(over_denied))) + " on average");
    print_verdict("busiest interval", count(busiest) + " grants; bound width x depth = " + count(z.cells),
                  hard(busiest <= z.cells));
    return double_grants == 0 && bad_retry == 0 && busiest <= z.cells ? Outcome::ok : Outcome::promise_broken;
}

// ---------------------------------------------------------------------------
// (c) TTL prefilter

Outcome ttl_prefilter(const Context &ctx) {
    const Stream &s = ctx.stream;
    const uint64_t T = ctx.ttl;
    const uint64_t n = ctx.options.capacity ? ctx.options.capacity : std::max<uint64_t>(1, ctx.keys_per_ttl.max);
    const double target = ctx.options.target;
    Sized z;
    if (!make_sketch(n, target, uint32_t(ctx.options.seed * 2654435761u + 3), 0, &z)) return Outcome::api_error;
    tf_recency_sketch *sk = z.sketch.get();
    Exact exact;  // the cache's index: key -> expiry

    std::vector<char> live(kBlock);
    std::vector<int> maybe(kBlock);
    Stopwatch sketch_time, exact_time;
    uint64_t live_reads = 0, dead_reads = 0, live_skipped = 0, false_maybe = 0;
    DistinctKeys dead_keys(s.keys.count());
    EstimateMean estimate;

    auto block = [&](size_t begin, size_t end) {
        // The cache decides hit or miss; a miss fills the cache for T.
        exact_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint64_t t = s.time[i];
            auto it = exact.map.try_emplace(exact.k(s, s.key[i]), 0);
            live[i - begin] = t < it.first->second;
            if (!live[i - begin]) it.first->second = t > UINT64_MAX - T ? UINT64_MAX : t + T;
        }
        exact_time.stop();
        // The prefilter is asked first; it learns the expiry of every fill.
        sketch_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t k = s.key[i];
            tf_status st = tf_recency_sketch_ttl_maybe_live(sk, s.keys.data(k), s.keys.size(k), s.time[i],
                                                            &maybe[i - begin], nullptr);
            if (st == TF_OK && !live[i - begin])
                st = tf_recency_sketch_ttl_insert(sk, s.keys.data(k), s.keys.size(k), s.time[i], T);
            if (st != TF_OK) {
                sketch_time.stop();
                return check(st, "tf_recency_sketch_ttl_maybe_live/insert");
            }
        }
        sketch_time.stop();
        for (size_t i = begin; i < end; ++i) {
            if (live[i - begin]) {
                ++live_reads;
                if (!maybe[i - begin]) ++live_skipped;
            } else {
                ++dead_reads;
                dead_keys.add(s.key[i]);
                if (maybe[i - begin]) ++false_maybe;
            }
        }
        return true;
    };
    auto checkpoint = [&](uint64_t now, size_t) {
        double p;
        if (!check(tf_recency_sketch_error_estimate(sk, now, &p), "tf_recency_sketch_error_estimate")) return false;
        estimate.add(p, 1.0);
        return true;
    };
    if (!replay(ctx, "sketch (c)", block, checkpoint)) return Outcome::api_error;

    const uint64_t q = s.events();
    const double rate = ratio(false_maybe, dead_reads);
    char buf[200];
    print_subtitle("(c) TTL prefilter:", "every event is a cache read; a miss caches the key for " + span(s, T));
    print_row("sized", sizing_line(z, n, target, T, s));
    print_capacity(ctx, n, T, "the TTL");
    print_cost(z, exact, n, sketch_time.per(q), exact_time.per(q), "read");
    std::snprintf(buf, sizeof buf, "%s of %s reads (%.1f%%)", count(dead_reads - false_maybe).c_str(), count(q).c_str(),
                  100.0 * ratio(dead_reads - false_maybe, q));
    print_row("lookups avoided", buf);
    print_verdict("live read expired", count(live_skipped) + " of " + count(live_reads) + " live reads (must be 0)",
                  hard(live_skipped == 0));
    print_verdict("expired maybe-live", percent(rate) + " of " + count(dead_reads) + " misses",
                  soft(rate, target, dead_keys.count()));
    print_row("  estimate", "error_estimate " + percent(estimate.mean()) + "; promised <= " + percent(target));
    return live_skipped == 0 ? Outcome::ok : Outcome::promise_broken;
}

class RecencySketchSection : public Section {
   public:
    const char *title() const override { return "RecencySketch (tf_recency_sketch)"; }
    Outcome run(const Context &ctx) override {
        Outcome o = last_seen(ctx, 0);
        if (o == Outcome::api_error) return o;
        std::printf("\n");
        o = worst(o, last_seen(ctx, TF_RECENCY_SKETCH_BLOCKED));
        if (o == Outcome::api_error) return o;
        std::printf("\n");
        o = worst(o, pacing(ctx));
        if (o == Outcome::api_error) return o;
        std::printf("\n");
        return worst(o, ttl_prefilter(ctx));
    }
};

}  // namespace

std::unique_ptr<Section> make_recency_sketch_section() { return std::make_unique<RecencySketchSection>(); }

}  // namespace demo
