// section_time_bloom.cpp - the time-limited Bloom filter part of tf-demo.
//
// "Was this key seen within the last T?" with T the horizon (one minute of
// the synthetic stream). For every event the filter is asked at the event's
// time, then the event is inserted; an exact map of key -> last time seen
// gives the true answer. The filter is sized with tf_time_bloom_new_for()
// for --target and for the mean number of events per span as its initial
// capacity; from its first shift on it follows the stream's rate (flash
// crowds, scans and idle gaps make it add slices and shrink them again).
//
// Measured: memory and time next to the map; misses of keys seen within the
// span (the hard promise: none); false positives on the stream's keys idle
// for two spans or more and on never-seen probe keys next to the filter's
// own estimate (stats' fpr_now); and, at every checkpoint, the slices, the
// size of the newest slice, the memory and the bits per element of the span.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "demo.hpp"

namespace demo {

namespace {

constexpr size_t kBlock = 4096;       // events per timed block
constexpr int kAbsentProbes = 2000;   // never-seen keys asked per checkpoint
constexpr int kPresentProbes = 1000;  // keys of the span asked per checkpoint
constexpr size_t kTimelineRows = 12;  // checkpoints shown in the report
constexpr uint64_t kMaxCheckpoints = 400;

struct FilterDeleter {
    void operator()(tf_time_bloom *f) const { tf_time_bloom_free(f); }
};
using Filter = std::unique_ptr<tf_time_bloom, FilterDeleter>;

// The state of the filter at one checkpoint.
struct Checkpoint {
    uint64_t at = 0;           // stream time (unscaled) since the first event
    uint64_t span_events = 0;  // events within the span
    uint64_t slices = 0, s0_bits = 0, bits = 0;
    size_t memory = 0;
    double bits_per_element = 0.0, fpr_now = 0.0;
    uint64_t probes = 0, probe_hits = 0;  // never-seen keys asked, found
};

template <class T>
T percentile(std::vector<T> v, double q) {
    if (v.empty()) return T();
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size() - 1) + 0.5))];
}

Outcome time_window(const Context &ctx) {
    const Stream &s = ctx.stream;
    const double target = ctx.options.target;
    const size_t events = s.events();
    char buf[240];
    print_subtitle("time window:", "was the key seen within the last T? contains, then add, per event");

    // The filter needs a span of at least l time units (a generation lasts
    // about span / l). A coarse clock (a CSV file in seconds, say) is made
    // finer by multiplying every timestamp, which changes no answer.
    uint32_t k = 0, l = 0;
    if (!check(tf_age_bloom_choose(target, 0, &k, &l, nullptr), "tf_age_bloom_choose")) return Outcome::api_error;
    const uint64_t scale = ctx.horizon >= l ? 1 : (l + ctx.horizon - 1) / ctx.horizon;
    if (scale > 1 && s.last > UINT64_MAX / scale) {
        print_row("skipped", "the timestamps are too large to refine the clock to l = " + count(l) + " units per span");
        return Outcome::ok;
    }
    const uint64_t span_units = ctx.horizon * scale;

    // Initial capacity: the mean number of events per span.
    const uint64_t time_span = s.last - s.first;
    const double per_span = time_span == 0 ? double(events) : double(events) * double(ctx.horizon) / double(time_span);
    const uint64_t initial =
        ctx.options.capacity ? ctx.options.capacity : uint64_t(std::max(1.0, std::round(per_span)));
    print_choice("initial capacity " + count(initial) + " keys", "--capacity", ctx.options.capacity != 0,
                 "the mean events per horizon (" + span(s, ctx.horizon) + ")");

    tf_time_bloom *raw = nullptr;
    if (!check(
            tf_time_bloom_new_for(initial, target, span_units, uint32_t(ctx.options.seed * 2654435761u + 5), 0, &raw),
            "tf_time_bloom_new_for"))
        return Outcome::api_error;
    Filter filter(raw);
    tf_time_bloom *f = raw;
    uint64_t initial_bits = 0;
    double peak = 0.0, steady_bpe = 0.0;
    if (!check(tf_time_bloom_slice_bits(f, 0, &initial_bits), "tf_time_bloom_slice_bits") ||
        !check(tf_age_bloom_false_positive_rate(k, l, &peak), "tf_age_bloom_false_positive_rate") ||
        !check(tf_age_bloom_bits_per_element(k, l, &steady_bpe), "tf_age_bloom_bits_per_element"))
        return Outcome::api_error;

    // The stream's clock as the filter sees it: scaled, and clamped where it
    // goes backwards (a CSV file out of order).
    std::vector<uint64_t> clock(events);
    for (size_t i = 0, high = 0; i < events; ++i) clock[i] = high = std::max<uint64_t>(high, s.time[i] * scale);

    Exact exact;                                     // key -> last time seen
    std::vector<uint64_t> truth(s.keys.count(), 0);  // the same, for the checks
    std::vector<int> present(kBlock);
    std::vector<uint64_t> ref(kBlock);
    std::vector<std::string> probes;
    uint64_t probe_serial = 0;
    std::vector<Checkpoint> timeline;
    Stopwatch filter_time, exact_time, absent_time, present_time;
    uint64_t misses = 0, in_span = 0, out_answers = 0, out_present = 0, reference_mismatch = 0;
    uint64_t absent_probes = 0, absent_present = 0, present_probes = 0, present_missed = 0;
    DistinctKeys out_keys(s.keys.count());
    EstimateMean estimate;
    Rng rng(ctx.options.seed ^ 0x7B100Du);
    // Checkpoints every half span (ctx.checkpoint_every), at most
    // kMaxCheckpoints of them.
    const uint64_t checkpoint_every = std::max<uint64_t>(ctx.checkpoint_every, time_span / kMaxCheckpoints) * scale;
    uint64_t next_checkpoint = events == 0 ? 0 : clock[0] + checkpoint_every;
    size_t oldest = 0;  // first event within the span of the last checkpoint

    Series *series = ctx.recorder->open(
        "time_bloom", "Time-limited Bloom filter (tf_time_bloom), time window", "never-seen keys read as present",
        "A key seen within the span T is always found, and a key never seen (or idle for two spans) reads as "
        "present with probability at most the target error, however the rate of new keys changes.",
        false, "target error");
    for (size_t begin = 0, end = 0; begin < events; begin = end) {
        ctx.progress->at("time Bloom", begin, events);
        // A block ends early at the event that reaches the next checkpoint.
        while (end < events && end - begin < kBlock)
            if (clock[end++] >= next_checkpoint) break;
        filter_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            const uint64_t t = s.time[i] * scale;
            tf_status st = tf_time_bloom_contains(f, s.keys.data(key), s.keys.size(key), t, &present[i - begin]);
            if (st == TF_OK) st = tf_time_bloom_add(f, s.keys.data(key), s.keys.size(key), t);
            if (st != TF_OK) {
                filter_time.stop();
                check(st, "tf_time_bloom_contains/add");
                return Outcome::api_error;
            }
        }
        filter_time.stop();
        exact_time.start();
        for (size_t i = begin; i < end; ++i) {
            auto it = exact.map.try_emplace(exact.k(s, s.key[i]), 0);
            ref[i - begin] = it.first->second;
            it.first->second = clock[i];
        }
        exact_time.stop();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            const uint64_t now = clock[i], last = truth[key];
            if (ref[i - begin] != last) ++reference_mismatch;
            if (last != 0 && now - last <= span_units) {
                ++in_span;
                if (!present[i - begin] && ++misses <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL: key \"%.*s\" seen %s ago reads absent\n",
                                 int(s.keys.size(key)), s.keys.data(key), span(s, (now - last) / scale).c_str());
            } else if (last == 0 || now - last >= 2 * span_units) {
                // Idle for two spans: every slice that held the key has
                // gone stale (a generation lasts about span / l).
                ++out_answers;
                out_keys.add(key);
                out_present += present[i - begin] != 0;
            }
            truth[key] = now;
        }

        const uint64_t now = clock[end - 1];
        if (now < next_checkpoint && end != events) continue;
        next_checkpoint = now + checkpoint_every;
        Checkpoint c;
        c.at = (now - clock[0]) / scale;
        while (oldest < end && now > span_units && clock[oldest] < now - span_units) ++oldest;
        c.span_events = end - oldest;
        tf_time_bloom_stats now_stats = TF_TIME_BLOOM_STATS_INIT;
        if (!check(tf_time_bloom_get_stats(f, now, &now_stats), "tf_time_bloom_get_stats") ||
            !check(tf_time_bloom_slice_bits(f, 0, &c.s0_bits), "tf_time_bloom_slice_bits") ||
            !check(tf_time_bloom_memory(f, &c.memory), "tf_time_bloom_memory"))
            return Outcome::api_error;
        c.slices = now_stats.slices;
        c.bits = now_stats.bits;
        c.bits_per_element = now_stats.bits_per_element;
        c.fpr_now = now_stats.fpr_now;

        // Never-seen keys, next to the filter's own estimate.
        probes.resize(kAbsentProbes);
        for (std::string &p : probes) {
            const int len = std::snprintf(buf, sizeof buf, "\x01probe:%llu", (unsigned long long)probe_serial++);
            p.assign(buf, size_t(len));
        }
        tf_status st = TF_OK;
        absent_time.start();
        for (const std::string &p : probes) {
            int yes = 0;
            st = tf_time_bloom_contains(f, p.data(), p.size(), now, &yes);
            if (st != TF_OK) break;
            c.probe_hits += uint64_t(yes);
        }
        absent_time.stop();
        if (!check(st, "tf_time_bloom_contains")) return Outcome::api_error;
        c.probes = probes.size();
        absent_probes += c.probes;
        absent_present += c.probe_hits;
        estimate.add(c.fpr_now, double(c.probes));

        // Keys of events within the span: all must be found.
        std::vector<uint32_t> recent(kPresentProbes);
        for (uint32_t &r : recent) r = s.key[oldest + size_t(rng.below(end - oldest))];
        uint64_t found = 0;
        present_time.start();
        for (uint32_t key : recent) {
            int yes = 0;
            st = tf_time_bloom_contains(f, s.keys.data(key), s.keys.size(key), now, &yes);
            if (st != TF_OK) break;
            found += uint64_t(yes);
        }
        present_time.stop();
        if (!check(st, "tf_time_bloom_contains")) return Outcome::api_error;
        present_probes += recent.size();
        present_missed += recent.size() - found;
        timeline.push_back(c);
        series->add(double(end), ratio(absent_present, absent_probes), target, double(c.memory),
                    double(exact.memory()));
    }
    ctx.progress->clear();
    if (reference_mismatch != 0) {
        std::fprintf(stderr, "tf-demo: internal error: the exact map disagrees with the truth %llu times\n",
                     (unsigned long long)reference_mismatch);
        return Outcome::api_error;
    }

    // The filter survives a serialization round trip: the copy answers as
    // the original does and reports the same state.
    const uint64_t end_time = events == 0 ? 1 : clock[events - 1];
    size_t blob_size = 0, written = 0;
    bool round_trip = true;
    if (!check(tf_time_bloom_serialized_size(f, &blob_size), "tf_time_bloom_serialized_size"))
        return Outcome::api_error;
    {
        std::vector<unsigned char> blob(blob_size);
        tf_time_bloom *copy_raw = nullptr;
        if (!check(tf_time_bloom_serialize(f, blob.data(), blob.size(), &written), "tf_time_bloom_serialize") ||
            !check(tf_time_bloom_deserialize(blob.data(), written, nullptr, &copy_raw), "tf_time_bloom_deserialize"))
            return Outcome::api_error;
        Filter copy(copy_raw);
        tf_time_bloom_stats sa = TF_TIME_BLOOM_STATS_INIT, sb = TF_TIME_BLOOM_STATS_INIT;
        if (!check(tf_time_bloom_get_stats(f, end_time, &sa), "tf_time_bloom_get_stats") ||
            !check(tf_time_bloom_get_stats(copy_raw, end_time, &sb), "tf_time_bloom_get_stats"))
            return Outcome::api_error;
        round_trip = sa.slices == sb.slices && sa.inserts == sb.inserts && sa.fpr_now == sb.fpr_now;
        for (uint32_t key = 0; key < s.keys.count(); key += 1 + s.keys.count() / 10000) {
            int a = 0, b = 0;
            if (!check(tf_time_bloom_contains(f, s.keys.data(key), s.keys.size(key), end_time, &a),
                       "tf_time_bloom_contains") ||
                !check(tf_time_bloom_contains(copy_raw, s.keys.data(key), s.keys.size(key), end_time, &b),
                       "tf_time_bloom_contains"))
                return Outcome::api_error;
            round_trip = round_trip && a == b;
        }
    }

    // The report.
    const uint64_t window_keys = std::max<uint64_t>(1, ctx.keys_per_horizon.max);
    const size_t exact_bytes = exact.memory();
    const double per_entry = exact.map.empty() ? 0.0 : double(exact_bytes) / double(exact.map.size());
    const double out_rate = ratio(out_present, out_answers), probe_rate = ratio(absent_present, absent_probes);
    std::vector<uint64_t> slices;
    std::vector<double> bpe;
    size_t peak_memory = 0, busiest = 0;
    for (size_t i = 0; i < timeline.size(); ++i) {
        const Checkpoint &c = timeline[i];
        slices.push_back(c.slices);
        if (c.span_events > 0) bpe.push_back(c.bits_per_element);
        peak_memory = std::max(peak_memory, c.memory);
        if (c.slices > timeline[busiest].slices) busiest = i;
    }

    std::snprintf(buf, sizeof buf, "new_for(%s events per T (the mean), p %.4g, T = %s) -> k = %u, l = %u",
                  count(initial).c_str(), target, span(s, ctx.horizon).c_str(), unsigned(k), unsigned(l));
    print_row("sized", buf);
    std::snprintf(buf, sizeof buf, "%u slices of %s bits at the start%s", unsigned(k + l), count(initial_bits).c_str(),
                  scale == 1 ? "" : ("; clock refined x" + count(scale) + " so that T >= l units").c_str());
    print_row("", buf);
    print_columns("", "filter", "exact map", "exact, pruned");
    print_columns("memory", bytes(timeline.empty() ? 0 : timeline.back().memory), bytes(exact_bytes),
                  bytes(size_t(per_entry * double(window_keys))));
    print_columns("  at most", bytes(peak_memory), "", "");
    print_columns("time per event", nanos(filter_time.per(events)), nanos(exact_time.per(events)), "");
    print_row("time per contains", nanos(absent_time.per(absent_probes)) + " never-seen key, " +
                                       nanos(present_time.per(present_probes)) + " key of the span");
    print_verdict("missed in span",
                  count(misses + present_missed) + " of " + count(in_span + present_probes) + " keys seen within " +
                      span(s, ctx.horizon) + " (must be 0)",
                  hard(misses + present_missed == 0));
    print_verdict("false positives",
                  percent(out_rate) + " of " + count(out_answers) + " keys new or idle >= " + span(s, 2 * ctx.horizon),
                  soft(out_rate, target, out_keys.count()));
    print_verdict("  never-seen keys",
                  percent(probe_rate) + " of " + count(absent_probes) + " probes; fpr_now " + percent(estimate.mean()),
                  soft(probe_rate, target, absent_probes));
    std::snprintf(buf, sizeof buf, "<= %s at a steady rate (peak %s); above it for about T after the rate jumps",
                  percent(target).c_str(), percent(peak).c_str());
    print_row("  promised", buf);
    // A key repeated within a slice's generations sets no new bit; fpr_now
    // reads each slice's measured fill, so it follows what the repeats save.
    std::snprintf(buf, sizeof buf, "%.0f%% of the inserts repeat a key of the span and set no new bit;",
                  100.0 * ratio(in_span, events));
    print_row("  repeats", buf);
    print_row("", "fpr_now reads the measured fill of every slice, so it counts them once");
    std::snprintf(buf, sizeof buf, "median %.1f, 90th percentile %.1f; steady state (k + l) k / (l ln 2) = %.1f",
                  percentile(bpe, 0.5), percentile(bpe, 0.9), steady_bpe);
    print_row("bits per element", buf);
    if (!timeline.empty()) {
        std::snprintf(buf, sizeof buf, "k + l = %u; median %llu, max %llu (at %s)", unsigned(k + l),
                      (unsigned long long)percentile(slices, 0.5), (unsigned long long)timeline[busiest].slices,
                      span(s, timeline[busiest].at).c_str());
        print_row("slices", buf);
    }
    print_verdict("serialized", bytes(written) + " blob; the copy answers identically", hard(round_trip));

    // Slices over time: evenly spaced checkpoints, and the busiest one.
    if (!timeline.empty()) {
        std::vector<size_t> rows;
        const size_t n = timeline.size();
        for (size_t r = 0; r < std::min(n, kTimelineRows); ++r)
            rows.push_back(kTimelineRows >= n ? r : r * (n - 1) / (kTimelineRows - 1));
        rows.push_back(busiest);
        std::sort(rows.begin(), rows.end());
        rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
        std::printf("  %-20s %10s %7s %11s %10s %8s %8s %8s\n", "over time", "events/T", "slices", "s0 bits", "memory",
                    "bits/elt", "fpr_now", "probes");
        for (size_t r : rows) {
            const Checkpoint &c = timeline[r];
            std::printf("  %-20s %10s %7llu %11s %10s %8.1f %8s %8s\n", ("  " + span(s, c.at)).c_str(),
                        count(c.span_events).c_str(), (unsigned long long)c.slices, count(c.s0_bits).c_str(),
                        bytes(c.memory).c_str(), c.bits_per_element, percent(c.fpr_now).c_str(),
                        percent(ratio(c.probe_hits, c.probes)).c_str());
        }
    }
    return misses + present_missed == 0 && round_trip ? Outcome::ok : Outcome::promise_broken;
}

class TimeBloomSection : public Section {
   public:
    const char *title() const override { return "Time-limited Bloom filter (tf_time_bloom)"; }
    Outcome run(const Context &ctx) override { return time_window(ctx); }
};

}  // namespace

std::unique_ptr<Section> make_time_bloom_section() { return std::make_unique<TimeBloomSection>(); }

}  // namespace demo
