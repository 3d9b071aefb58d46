// section_rotating_cuckoo.cpp - the rotating cuckoo filter part of tf-demo.
//
// De-duplication, exactly-once-ish: every event is one
// tf_rotating_cuckoo_add_if_absent(key, now) on a filter whose ttl is T
// (the horizon). "Present" skips the event as a duplicate, "absent"
// processes it and remembers the key. Beside it, an exact set does the
// same: key -> time it was last processed, a key counting as a duplicate
// when it was processed less than T ago, entries older than T erased at
// every checkpoint (the exact record of the keys seen within T).
//
// Measured, for an ample memory cap and for a cap too small for T: memory
// and time per event next to the exact set; false negatives (a duplicate
// within T processed again) with their causes, from the filter's stats
// (keys forgotten by the memory cap, by age); false positives (an event of
// a key never seen before skipped, and never-seen keys probed at every
// checkpoint): the hard promise, must be 0. A false negative within the
// ttl of the filter's own add is allowed only when the memory cap dropped
// tables (stats' forgotten_memory); otherwise it is a broken promise.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "demo.hpp"

namespace demo {

namespace {

constexpr size_t kBlock = 4096;      // events per timed block
constexpr int kAbsentProbes = 2000;  // never-seen keys asked per checkpoint
constexpr uint64_t kMaxCheckpoints = 400;

struct FilterDeleter {
    void operator()(tf_rotating_cuckoo *f) const { tf_rotating_cuckoo_free(f); }
};
using Filter = std::unique_ptr<tf_rotating_cuckoo, FilterDeleter>;

uint64_t pow2_at_least(uint64_t n) {
    uint64_t p = 1;
    while (p < n) p <<= 1;
    return p;
}

// Replays the stream once with memory cap `cap`; prints its rows.
Outcome dedup(const Context &ctx, const char *name, uint64_t first_slots, uint64_t cap, Series *series) {
    const Stream &s = ctx.stream;
    const size_t events = s.events();
    const uint64_t T = ctx.horizon;
    char buf[240];

    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.table_slots = first_slots;
    o.max_memory = cap;
    o.ttl = T;
    o.seed = uint32_t(ctx.options.seed * 2654435761u + 13);
    tf_rotating_cuckoo *raw = nullptr;
    if (!check(tf_rotating_cuckoo_new(&o, &raw), "tf_rotating_cuckoo_new")) return Outcome::api_error;
    Filter filter(raw);
    tf_rotating_cuckoo *f = raw;

    // The stream's clock, clamped where it goes backwards (as the filter
    // clamps it).
    std::vector<uint64_t> clock(events);
    for (size_t i = 0, high = 0; i < events; ++i) clock[i] = high = std::max<uint64_t>(high, s.time[i]);

    Exact exact;                                     // key -> time last processed, within T
    std::vector<uint64_t> added(s.keys.count(), 0);  // time the filter last added the key (0: never)
    std::vector<int> present(kBlock), exact_dup(kBlock);
    Stopwatch filter_time, exact_time;
    uint64_t duplicates = 0, processed = 0, fn_promised = 0, fn_after = 0, fp = 0, late = 0;
    uint64_t absent_probes = 0, absent_present = 0, probe_serial = 0;
    size_t peak_memory = 0, peak_exact = 0;
    const uint64_t time_span = s.last - s.first;
    const uint64_t checkpoint_every = std::max<uint64_t>(ctx.checkpoint_every, time_span / kMaxCheckpoints);
    uint64_t next_checkpoint = events == 0 ? 0 : clock[0] + checkpoint_every;

    for (size_t begin = 0, end = 0; begin < events; begin = end) {
        ctx.progress->at(series ? "cuckoo (a)" : "cuckoo (b)", begin, events);
        while (end < events && end - begin < kBlock)
            if (clock[end++] >= next_checkpoint) break;
        filter_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            const tf_status st =
                tf_rotating_cuckoo_add_if_absent(f, s.keys.data(key), s.keys.size(key), clock[i], &present[i - begin]);
            if (st != TF_OK) {
                filter_time.stop();
                check(st, "tf_rotating_cuckoo_add_if_absent");
                return Outcome::api_error;
            }
        }
        filter_time.stop();
        exact_time.start();
        for (size_t i = begin; i < end; ++i) {
            auto it = exact.map.try_emplace(exact.k(s, s.key[i]), clock[i]);
            const bool dup = !it.second && clock[i] - it.first->second < T;
            if (!it.second && !dup) it.first->second = clock[i];
            exact_dup[i - begin] = dup;
        }
        exact_time.stop();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            const uint64_t now = clock[i];
            const bool got = present[i - begin] != 0, want = exact_dup[i - begin] != 0;
            duplicates += want;
            processed += !got;
            if (got && added[key] == 0) {
                if (++fp <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL: key \"%.*s\", never seen before, reads present\n",
                                 int(s.keys.size(key)), s.keys.data(key));
            } else if (got && !want) {
                ++late;  // remembered past T: its table lives until its newest entry is T old
            } else if (!got && want) {
                // Within the ttl of the filter's own add only the memory
                // cap may forget a key; after it, age may.
                if (now - added[key] <= T)
                    ++fn_promised;
                else
                    ++fn_after;
            }
            if (!got) added[key] = now;
        }

        const uint64_t now = clock[end - 1];
        if (now < next_checkpoint && end != events) continue;
        next_checkpoint = now + checkpoint_every;
        size_t mem = 0;
        if (!check(tf_rotating_cuckoo_memory(f, &mem), "tf_rotating_cuckoo_memory")) return Outcome::api_error;
        peak_memory = std::max(peak_memory, mem);
        // The exact record keeps only the keys seen within T.
        exact_time.start();
        for (auto it = exact.map.begin(); it != exact.map.end();)
            it = now - it->second >= T ? exact.map.erase(it) : std::next(it);
        exact_time.stop();
        peak_exact = std::max(peak_exact, exact.memory());
        for (int p = 0; p < kAbsentProbes; ++p) {
            const int len = std::snprintf(buf, sizeof buf, "\x02never:%llu", (unsigned long long)probe_serial++);
            int yes = 0;
            if (!check(tf_rotating_cuckoo_contains(f, buf, size_t(len), now, &yes), "tf_rotating_cuckoo_contains"))
                return Outcome::api_error;
            absent_present += uint64_t(yes);
            ++absent_probes;
        }
        if (series) series->add(double(end), double(mem), double(cap), double(mem), double(exact.memory()));
    }

    ctx.progress->clear();
    const uint64_t end_time = events == 0 ? 1 : clock[events - 1];
    tf_rotating_cuckoo_stats st = TF_ROTATING_CUCKOO_STATS_INIT;
    if (!check(tf_rotating_cuckoo_get_stats(f, end_time, &st), "tf_rotating_cuckoo_get_stats"))
        return Outcome::api_error;
    peak_memory = std::max<size_t>(peak_memory, st.memory);
    // A false negative within the ttl of the add needs a table dropped by
    // the memory cap (or the table limit); without one it breaks the promise.
    const bool fn_ok = fn_promised == 0 || st.forgotten_memory > 0;
    const bool fp_ok = fp == 0 && absent_present == 0;
    const bool cap_ok = peak_memory <= cap;

    print_subtitle(name, "");
    std::snprintf(buf, sizeof buf, "ttl T = %s, first table %s slots, memory cap %s", span(s, T).c_str(),
                  count(first_slots).c_str(), bytes(size_t(cap)).c_str());
    print_row("filter", buf);
    print_columns("", "filter", "exact set", "");
    print_columns("memory, at most", bytes(peak_memory), bytes(peak_exact), "");
    print_columns("time per event", nanos(filter_time.per(events)), nanos(exact_time.per(events)), "");
    print_verdict("memory cap", bytes(peak_memory) + " of " + bytes(size_t(cap)) + " at most", hard(cap_ok));
    std::snprintf(buf, sizeof buf, "%s processed, %s skipped (exact: %s duplicates)", count(processed).c_str(),
                  count(events - processed).c_str(), count(duplicates).c_str());
    print_row("events", buf);
    print_verdict(
        "false positives",
        count(fp) + " new keys, " + count(absent_present) + " of " + count(absent_probes) + " never-seen probes",
        hard(fp_ok));
    print_verdict("false negatives",
                  count(fn_promised + fn_after) + " of " + count(duplicates) + " duplicates (" +
                      percent(ratio(fn_promised + fn_after, duplicates)) + ")",
                  hard(fn_ok));
    print_row("  within ttl of add", count(fn_promised) + " (added <= T ago: only the memory cap forgets these)");
    print_row("  after ttl of add", count(fn_after) + " (added > T ago, kept past T, then forgotten)");
    print_row("  forgotten (stats)",
              "memory cap " + count(st.forgotten_memory) + " keys, age " + count(st.forgotten_age) + " keys");
    print_row("rotations", count(st.fill_rotations) + " by fill, " + count(st.kick_rotations) + " by kick chain");
    print_row("remembered past T", count(late) + " skipped, processed > T ago (tables outlive T)");
    std::snprintf(buf, sizeof buf, "%llu tables (%llu live), load %.2f, %.1f bits per item",
                  (unsigned long long)st.tables, (unsigned long long)st.live_tables, st.load, st.bits_per_item);
    print_row("at the end", buf);
    return fp_ok && fn_ok && cap_ok ? Outcome::ok : Outcome::promise_broken;
}

class RotatingCuckooSection : public Section {
   public:
    const char *title() const override { return "Rotating cuckoo filter (tf_rotating_cuckoo)"; }
    Outcome run(const Context &ctx) override {
        print_subtitle("de-duplication:", "skip a key processed within T; add_if_absent per event");
        // What T holds: the most distinct keys in any window of the horizon,
        // 8 bytes each at the default fill of 0.92; the tables of a ring
        // live until their newest key is T old, so about twice that.
        const uint64_t window_keys = std::max<uint64_t>(1, ctx.keys_per_horizon.max);
        const uint64_t needed = uint64_t(double(window_keys) * 8.0 / 0.92) * 2;
        const uint64_t first = std::max<uint64_t>(64, pow2_at_least(window_keys / 16));
        const Options &opt = ctx.options;
        const uint64_t slots = opt.capacity ? pow2_at_least(opt.capacity) : first;
        // The least cap: the handle, its bookkeeping and the first table.
        tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
        o.table_slots = slots;
        tf_rotating_cuckoo *raw = nullptr;
        size_t base = 0;
        if (!check(tf_rotating_cuckoo_new(&o, &raw), "tf_rotating_cuckoo_new")) return Outcome::api_error;
        Filter probe(raw);
        if (!check(tf_rotating_cuckoo_memory(raw, &base), "tf_rotating_cuckoo_memory")) return Outcome::api_error;
        print_choice("ttl " + span(ctx.stream, ctx.horizon), "--horizon", opt.horizon != 0, "the horizon");
        print_choice("first table " + count(slots) + " slots", "--capacity", opt.capacity != 0,
                     "a power of two >= 1/16 of the most distinct keys per horizon, at least 64");
        const uint64_t ample = opt.max_memory ? opt.max_memory : base + 4 * needed;
        print_choice("memory cap of (a) " + bytes(size_t(ample)), "--max-memory", opt.max_memory != 0,
                     "4 x (8 bytes per key of the busiest horizon / 0.92 fill x 2 tables alive)");
        if (ample < base) {
            std::fprintf(stderr,
                         "tf-demo: --max-memory %llu is below the %llu bytes of the handle and its first table\n",
                         (unsigned long long)ample, (unsigned long long)base);
            return Outcome::api_error;
        }
        Series *series = ctx.recorder->open(
            "rotating_cuckoo", "Rotating cuckoo filter (tf_rotating_cuckoo), memory cap",
            "memory, bytes (the cap bounds it)",
            "The filter's memory never exceeds its cap, a key never added never reads as present, and a key added "
            "within the ttl is found unless the memory cap forced its table out.",
            true, "memory cap");
        Outcome a = dedup(ctx, opt.max_memory ? "(a) memory cap from --max-memory" : "(a) ample memory cap", slots,
                          ample, series);
        if (a == Outcome::api_error) return a;
        std::printf("\n");
        Outcome b = dedup(ctx, "(b) memory cap below what T holds", slots, base + needed / 4, nullptr);
        return worst(a, b);
    }
};

}  // namespace

std::unique_ptr<Section> make_rotating_cuckoo_section() { return std::make_unique<RotatingCuckooSection>(); }

}  // namespace demo
