// section_recency_window.cpp - the recency window part of tf-demo.
//
// "How many events ago was this key last seen?": every event is one
// tf_recency_window_insert_report(key), which answers the key's previous
// recency (events since its last occurrence, 0 for the event just before)
// within (1 + eps), or "not in the last W events", and then appends the
// key. Beside it, the exact answer: key -> index of its last event, entries
// older than W erased at every checkpoint.
//
// Measured, for exact (64-bit) signatures and for approximate ones of
// false-match probability delta: memory and time per event next to the
// exact map; the distribution of the relative error over every answer of
// a key seen within W. Hard promises (exact signatures): every answer e of
// a key last seen r events ago (r < W) has e <= r <= (1 + eps) e, and a key
// last seen W + S - 1 or more events ago (S the slack the structure
// reports), or never, reads "not in the window". With approximate
// signatures a key may match another key's entry with probability about
// delta: a key outside the window then gets an estimate, a key within it
// too small an estimate (a newer key's). Those false matches are counted
// against delta (statistical verdicts); an answer too large, or "not in
// the window" for a key within W, stays a hard failure in both modes.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "demo.hpp"

namespace demo {

namespace {

constexpr size_t kBlock = 4096;  // events per timed block
constexpr uint64_t kNot = TF_RECENCY_WINDOW_NOT_IN_WINDOW;
constexpr uint64_t kInvEps = 8;  // eps = 1/8 unless --eps
constexpr double kDelta = 1e-3;  // (b) unless --delta

struct WindowDeleter {
    void operator()(tf_recency_window *w) const { tf_recency_window_free(w); }
};
using Window = std::unique_ptr<tf_recency_window, WindowDeleter>;

constexpr size_t kMaxErrorClasses = 5;

Outcome replay(const Context &ctx, const char *name, uint64_t W, uint64_t inv_eps, double delta, Series *series) {
    // Relative error classes of the report: 0, then up to eps in four steps
    // (those at or above eps dropped).
    std::vector<double> edges;
    for (double e : {0.0, 0.01, 0.05, 0.10})
        if (e < 1.0 / double(inv_eps)) edges.push_back(e);
    edges.push_back(1.0 / double(inv_eps));
    const size_t n_classes = edges.size();
    const Stream &s = ctx.stream;
    const size_t events = s.events();
    char buf[240];

    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.window = W;
    o.inv_eps = inv_eps;
    o.delta = delta;
    o.seed = uint32_t(ctx.options.seed * 2654435761u + 29);
    tf_recency_window *raw = nullptr;
    if (!check(tf_recency_window_new(&o, &raw), "tf_recency_window_new")) return Outcome::api_error;
    Window window(raw);
    tf_recency_window_info info = TF_RECENCY_WINDOW_INFO_INIT;
    if (!check(tf_recency_window_get_info(raw, &info), "tf_recency_window_get_info")) return Outcome::api_error;
    const uint64_t slack = info.slack;

    Exact exact;  // key -> index of its last event, within W (the exact structure, timed)
    // every key's last event (the truth, untimed: the map forgets keys
    // older than W, whose recency the slack rule still needs)
    std::vector<uint64_t> last(s.keys.count(), kNot);
    std::vector<uint64_t> answer(kBlock), truth(kBlock);
    Stopwatch window_time, exact_time;
    uint64_t within = 0, beyond = 0, broken_bound = 0, broken_out = 0, false_match = 0, out_of_window = 0;
    uint64_t matched_within = 0;  // approximate: answers too small by a false match
    uint64_t classes[kMaxErrorClasses + 1] = {0};
    volatile uint64_t answer_sink = 0;     // keeps the exact map's answers computed
    double worst = 0.0, worst_seen = 0.0;  // worst_seen: broken answers too
    size_t peak_exact = 0, mem = 0;
    const uint64_t checkpoint_events = std::max<uint64_t>(W, 4096);
    uint64_t next_checkpoint = checkpoint_events;
    // The plot's points: about 200 over the stream (the exact map is pruned
    // only at the checkpoints above).
    const uint64_t point_events = std::max<uint64_t>(64, events / 200);
    uint64_t next_point = point_events;

    for (size_t begin = 0, end = 0; begin < events; begin = end) {
        end = size_t(std::min<uint64_t>({events, begin + kBlock, next_checkpoint, series ? next_point : events}));
        ctx.progress->at(series ? "recency window (a)" : "recency window (b)", begin, events);
        window_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            const tf_status st =
                tf_recency_window_insert_report(raw, s.keys.data(key), s.keys.size(key), &answer[i - begin]);
            if (st != TF_OK) {
                window_time.stop();
                check(st, "tf_recency_window_insert_report");
                return Outcome::api_error;
            }
        }
        window_time.stop();
        exact_time.start();
        uint64_t sum = 0;
        for (size_t i = begin; i < end; ++i) {
            auto it = exact.map.try_emplace(exact.k(s, s.key[i]), uint64_t(i));
            sum += it.second ? kNot : uint64_t(i) - 1 - it.first->second;  // the exact answer
            it.first->second = uint64_t(i);
        }
        exact_time.stop();
        answer_sink = answer_sink + sum;
        for (size_t i = begin; i < end; ++i) {
            uint64_t &l = last[s.key[i]];
            truth[i - begin] = l == kNot ? kNot : uint64_t(i) - 1 - l;
            l = uint64_t(i);
        }
        for (size_t i = begin; i < end; ++i) {
            const uint64_t r = truth[i - begin], e = answer[i - begin];
            if (r != kNot && r < W) {
                ++within;
                // never too large nor "not in the window", in either mode
                const bool too_large = e == kNot || e > r;
                const bool too_small = !too_large && double(r) > double(e) * (1.0 + 1.0 / double(inv_eps));
                if (too_small && delta > 0.0) {
                    // approximate signatures: a newer key's entry with the
                    // same signature answered (probability about delta)
                    ++matched_within;
                    continue;
                }
                if (too_large || too_small) {
                    // for the plot: past the bound (a too-large answer counts as error 1)
                    worst_seen = std::max(worst_seen, too_large ? 1.0 : double(r - e) / double(r));
                    if (++broken_bound <= 5)
                        std::fprintf(stderr, "tf-demo: FAIL: event %zu, last seen %llu events ago, reads %s\n", i,
                                     (unsigned long long)r, e == kNot ? "not in window" : std::to_string(e).c_str());
                    continue;
                }
                const double rel = r == 0 ? 0.0 : double(r - e) / double(r);
                worst = std::max(worst, rel);
                worst_seen = std::max(worst_seen, rel);
                size_t c = 0;
                while (c < n_classes && rel > edges[c]) ++c;
                classes[c]++;
            } else if (r == kNot || r >= W + slack - 1) {
                ++beyond;
                if (e != kNot) {
                    // a key out of the window read as in it: a false match of
                    // approximate signatures, or a broken promise when exact
                    if (delta > 0.0)
                        ++false_match;
                    else if (++broken_out <= 5)
                        std::fprintf(stderr, "tf-demo: FAIL: event %zu, out of the window, reads %llu\n", i,
                                     (unsigned long long)e);
                }
            } else {
                ++out_of_window;  // in the slack: either answer keeps the promise
            }
        }
        if (series && (end >= next_point || end == events)) {
            next_point = end + point_events;
            if (!check(tf_recency_window_memory(raw, &mem), "tf_recency_window_memory")) return Outcome::api_error;
            series->add(double(end), worst_seen, 1.0 / double(inv_eps + 1), double(mem), double(exact.memory()));
        }
        if (end < next_checkpoint && end != events) continue;
        next_checkpoint = end + checkpoint_events;
        if (!check(tf_recency_window_memory(raw, &mem), "tf_recency_window_memory")) return Outcome::api_error;
        // The exact map keeps only the keys seen within W events.
        exact_time.start();
        for (auto it = exact.map.begin(); it != exact.map.end();)
            it = uint64_t(end) - 1 - it->second >= W ? exact.map.erase(it) : std::next(it);
        exact_time.stop();
        peak_exact = std::max(peak_exact, exact.memory());
    }

    ctx.progress->clear();
    tf_recency_window_stats st = TF_RECENCY_WINDOW_STATS_INIT;
    if (!check(tf_recency_window_get_stats(raw, &st), "tf_recency_window_get_stats")) return Outcome::api_error;
    const bool bound_ok = broken_bound == 0, out_ok = broken_out == 0;

    print_subtitle(name, "");
    const std::string sigs =
        delta > 0.0 ? "approximate (" + std::to_string(info.signature_bits) + " bits)" : std::string("exact");
    std::snprintf(buf, sizeof buf, "W = %s events, eps = 1/%llu, %s signatures, %u levels, slack %s events",
                  count(W).c_str(), (unsigned long long)inv_eps, sigs.c_str(), info.levels, count(slack).c_str());
    print_row("window", buf);
    print_columns("", "window", "exact map", "");
    print_columns("memory", bytes(mem), bytes(peak_exact), "");
    print_columns("time per event", nanos(window_time.per(events)), nanos(exact_time.per(events)), "");
    std::snprintf(buf, sizeof buf, "%.1f bits per window item", st.bits_per_window_item);
    print_row("", buf);
    print_verdict("error bound",
                  count(broken_bound) + " of " + count(within) + " answers of keys seen within W outside e <= r <= " +
                      (delta > 0.0 ? "(1 + eps) e (false matches apart)" : "(1 + eps) e"),
                  hard(bound_ok));
    std::string dist;
    for (size_t c = 0; c < n_classes; ++c) {
        if (c == 0) {
            dist = "exact " + percent(ratio(classes[0], within));
            continue;
        }
        std::snprintf(buf, sizeof buf, ", <= %g%% %s", edges[c] * 100.0, percent(ratio(classes[c], within)).c_str());
        dist += buf;
    }
    print_row("  relative error", dist);
    std::snprintf(buf, sizeof buf, "%.4f (eps = %.4f)", worst, 1.0 / double(inv_eps));
    print_row("  worst", buf);
    if (delta > 0.0) {
        print_verdict("false matches",
                      count(false_match) + " of " + count(beyond) + " keys out of the window or new (" +
                          percent(ratio(false_match, beyond)) + ", delta " + percent(delta) + ")",
                      soft(ratio(false_match, beyond), delta, beyond));
        print_verdict("  too small",
                      count(matched_within) + " of " + count(within) + " answers within W (" +
                          percent(ratio(matched_within, within)) + ": a newer key's equal signature)",
                      soft(ratio(matched_within, within), delta, within));
    } else {
        print_verdict("out of the window", count(broken_out) + " of " + count(beyond) + " keys read as in it",
                      hard(out_ok));
    }
    print_row("  in the slack", count(out_of_window) + " answers (W <= r < W + S - 1: either answer is right)");
    std::snprintf(buf, sizeof buf, "%s promotions, %s expired, %s merged, %s lost", count(st.promotions).c_str(),
                  count(st.expired).c_str(), count(st.merged).c_str(), count(st.lost).c_str());
    print_row("entries", buf);
    return bound_ok && out_ok ? Outcome::ok : Outcome::promise_broken;
}

class RecencyWindowSection : public Section {
   public:
    const char *title() const override { return "Recency window (tf_recency_window)"; }
    Outcome run(const Context &ctx) override {
        print_subtitle("how many events ago:", "insert_report per event, beside the exact answer");
        const Options &opt = ctx.options;
        // W: a quarter of the stream, between 1,024 and 2^20 events.
        const uint64_t W =
            opt.count_window ? opt.count_window
                             : std::max<uint64_t>(1024, std::min<uint64_t>(uint64_t(1) << 20, ctx.stream.events() / 4));
        const uint64_t inv_eps = opt.inv_eps ? opt.inv_eps : kInvEps;
        const double delta = opt.delta > 0.0 ? opt.delta : kDelta;
        print_choice("W = " + count(W) + " events", "--count-window", opt.count_window != 0,
                     "a quarter of the stream, between 1,024 and 2^20 events");
        print_choice("eps = 1/" + count(inv_eps), "--eps", opt.inv_eps != 0, "the library's default");
        char buf[96];
        std::snprintf(buf, sizeof buf, "delta = %g for (b)", delta);
        print_choice(buf, "--delta", opt.delta > 0.0, "the default");
        Series *series = ctx.recorder->open(
            "recency_window", "Recency window (tf_recency_window), exact signatures",
            "worst relative error so far, (r - e) / r",
            "For a key last seen r < W events ago the answer e satisfies e <= r <= (1 + eps) e, and a key out of "
            "the window (beyond its slack) reads as not in it.",
            true, "promise: eps / (1 + eps)");
        Outcome a = replay(ctx, "(a) exact signatures", W, inv_eps, 0.0, series);
        if (a == Outcome::api_error) return a;
        std::printf("\n");
        if (opt.delta > 0.0)
            std::snprintf(buf, sizeof buf, "(b) approximate signatures, delta = %g", delta);
        else
            std::snprintf(buf, sizeof buf, "(b) approximate signatures, delta = 1e-3");
        Outcome b = replay(ctx, buf, W, inv_eps, delta, nullptr);
        return worst(a, b);
    }
};

}  // namespace

std::unique_ptr<Section> make_recency_window_section() { return std::make_unique<RecencyWindowSection>(); }

}  // namespace demo
