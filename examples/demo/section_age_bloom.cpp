// section_age_bloom.cpp - the age-partitioned Bloom filter (count window)
// part of tf-demo.
//
// "Was this key among the last N events?" For every event the filter is
// asked, then the event is inserted; an exact map of key -> number of its
// last insert gives the true answer. The window N is the mean number of
// events per horizon (one minute of the synthetic stream), and the filter
// is sized with tf_age_bloom_new_for() for it and for --target.
//
// Measured: memory and time next to the map; misses of keys within the
// window (the hard promise: none); false positives on the stream's keys
// that left the window long enough ago that none of their bits can be
// left, and on never-seen probe keys next to the filter's own estimate
// (stats' fpr_now); bits per element; a serialization round trip.
//
// Then the same stream, window, target and seed through the blocked layout
// (tf_age_bloom_new_for() with TF_AGE_BLOOM_BLOCKED), replayed and judged the same way: its
// shape, memory, bits per element and times next to the classic filter's,
// misses in the window, false positives, and a round trip that stays
// blocked.
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
constexpr int kPresentProbes = 1000;  // keys of the window asked per checkpoint
constexpr uint64_t kMaxCheckpoints = 400;

struct FilterDeleter {
    void operator()(tf_age_bloom *f) const { tf_age_bloom_free(f); }
};
using Filter = std::unique_ptr<tf_age_bloom, FilterDeleter>;

// Never-seen keys: a prefix no stream key has, and a serial.
class ProbeKeys {
   public:
    // Fills `keys` with the next n probe keys (n separate strings).
    void next(size_t n, std::vector<std::string> *keys) {
        keys->resize(n);
        char buf[40];
        for (size_t i = 0; i < n; ++i) {
            const int len = std::snprintf(buf, sizeof buf, "\x01probe:%llu", (unsigned long long)serial_++);
            (*keys)[i].assign(buf, size_t(len));
        }
    }

   private:
    uint64_t serial_ = 0;
};

// The false-positive rate of a query that needs k consecutive matches among
// slices whose bits are set with probabilities r[0..n): a dynamic program
// over the length of the current run of matches.
double run_of_k(uint32_t k, const std::vector<double> &r) {
    std::vector<double> run(k, 0.0), next(k);  // run[j]: no k yet, last j slices matched
    run[0] = 1.0;
    double hit = 0.0;
    for (double p : r) {
        std::fill(next.begin(), next.end(), 0.0);
        for (uint32_t j = 0; j < k; ++j) {
            next[0] += run[j] * (1.0 - p);
            if (j + 1 == k)
                hit += run[j] * p;
            else
                next[j + 1] += run[j] * p;
        }
        run.swap(next);
    }
    return hit;
}

// The rate the filter has, by the same model, with the fill ratios the
// distinct keys each slice holds would give (a repeated key sets bits that
// are already set): a check of fpr_now, which reads the measured fill. After n inserts, with
// generation g, the slice at position p was the newest during generation
// G - p (G = (n - 1) / g, the current one) and took the inserts of
// generations G - p .. G - p + k - 1 (those that have happened).
class DistinctModel {
   public:
    DistinctModel(const Stream &s, uint32_t k, uint32_t l, uint64_t g, uint64_t m)
        : s_(s), k_(k), l_(l), g_(g), m_(m), in_(s.keys.count(), 0) {}

    double rate(uint64_t n) {
        if (n == 0) return 0.0;
        const int64_t G = int64_t((n - 1) / g_);
        std::vector<double> r;
        uint64_t distinct = 0;
        int64_t lo = G + 1, hi = G;  // generations [lo, hi] are counted in in_
        for (uint32_t p = 0; p < k_ + l_; ++p) {
            const int64_t a = G - int64_t(p), b = std::min<int64_t>(G, a + k_ - 1);
            for (; lo > std::max<int64_t>(a, 0); --lo) distinct += change(lo - 1, n, +1);
            for (; hi > b && hi >= lo; --hi) distinct -= change(hi, n, -1);
            const double d = b < 0 || b < lo ? 0.0 : double(distinct);
            r.push_back(-std::expm1(d * std::log1p(-1.0 / double(m_))));
        }
        for (; hi >= lo; --hi) change(hi, n, -1);  // leave in_ all zero
        return run_of_k(k_, r);
    }

   private:
    // Adds (+1) or removes (-1) the keys of generation `gen`; returns how
    // many keys entered or left the set.
    uint64_t change(int64_t gen, uint64_t n, int d) {
        uint64_t moved = 0;
        const uint64_t from = uint64_t(gen) * g_, to = std::min<uint64_t>(n, from + g_);
        for (uint64_t i = from; i < to; ++i) {
            uint32_t &c = in_[s_.key[size_t(i)]];
            if (d > 0)
                moved += c++ == 0;
            else
                moved += --c == 0;
        }
        return moved;
    }

    const Stream &s_;
    uint32_t k_, l_;
    uint64_t g_, m_;
    std::vector<uint32_t> in_;  // per key: inserts of the counted generations
};

// The largest number of distinct keys among `window` consecutive events:
// the least an exact structure must hold to answer for the window.
uint64_t distinct_per_count_window(const Stream &s, uint64_t window) {
    std::vector<uint32_t> in_window(s.keys.count(), 0);
    uint64_t distinct = 0, best = 0;
    for (size_t i = 0; i < s.events(); ++i) {
        if (in_window[s.key[i]]++ == 0) ++distinct;
        if (i >= window && --in_window[s.key[i - window]] == 0) --distinct;
        best = std::max(best, distinct);
    }
    return best;
}

// A filter's shape (tf_age_bloom_get_info) and what follows from it.
struct Shape {
    uint32_t k = 0, l = 0, flags = 0;
    uint64_t slice_bits = 0, g = 0, window = 0;
    // A key whose last insert is (k + l) g or more inserts ago has no bit
    // left in any slice: it is as absent as a key never seen. Between l g
    // and (k + l) g it may still be found (partly by its own bits), which
    // is allowed and not counted as a false positive here.
    uint64_t gone() const { return uint64_t(k + l) * g; }
};

bool shape_of(const tf_age_bloom *f, Shape *z) {
    tf_age_bloom_info info = TF_AGE_BLOOM_INFO_INIT;
    if (!check(tf_age_bloom_get_info(f, &info), "tf_age_bloom_get_info")) return false;
    z->k = info.k;
    z->l = info.l;
    z->flags = info.flags;
    z->slice_bits = info.slice_bits;
    z->g = info.generation;
    z->window = info.capacity;
    return true;
}

// The current state (tf_age_bloom_get_stats); false on an API error.
bool stats_of(const tf_age_bloom *f, tf_age_bloom_stats *st) {
    *st = TF_AGE_BLOOM_STATS_INIT;
    return check(tf_age_bloom_get_stats(f, st), "tf_age_bloom_get_stats");
}

// What one replay of the stream through a filter measured.
struct Replay {
    Exact exact;  // key -> number of its last insert (1-based)
    ProbeKeys probe_keys;
    Stopwatch filter_time, exact_time, absent_time, present_time;
    uint64_t misses = 0, in_window = 0, out_answers = 0, out_present = 0;
    uint64_t out_keys = 0;  // distinct keys behind out_answers
    uint64_t absent_probes = 0, absent_present = 0, present_probes = 0, present_missed = 0;
    EstimateMean estimate, distinct_estimate;  // fpr_now; the distinct-key model

    uint64_t missed() const { return misses + present_missed; }
    uint64_t asked() const { return in_window + present_probes; }  // keys of the window asked
};

// Replays the stream through `f`: per event contains, then add, and the
// same operations on the exact map, both timed; every answer is judged
// against the truth. At checkpoints (every half window) asks never-seen
// keys and keys of the window, next to the filter's fpr_now and, when
// `model` is given, the rate from the distinct keys of each slice.
// `layout` names the filter in failure messages. False on an API error
// (already reported).
bool replay(const Context &ctx, tf_age_bloom *f, const Shape &z, DistinctModel *model, const char *layout, Replay *r,
            Series *series) {
    const Stream &s = ctx.stream;
    const uint64_t events = s.events(), window = z.window, gone = z.gone();
    std::vector<uint64_t> truth(s.keys.count(), 0);
    std::vector<int> present(kBlock);
    std::vector<uint64_t> ref(kBlock);
    std::vector<std::string> probes;
    uint64_t reference_mismatch = 0;
    DistinctKeys out_keys(s.keys.count());
    Rng rng(ctx.options.seed ^ 0xA9E5B100u);
    // Checkpoints every half window, at most kMaxCheckpoints of them.
    const uint64_t checkpoint_every = std::max<uint64_t>({1, window / 2, events / kMaxCheckpoints});
    uint64_t next_checkpoint = checkpoint_every;

    for (size_t begin = 0, end = 0; begin < events; begin = end) {
        end = size_t(std::min<uint64_t>({events, begin + kBlock, next_checkpoint}));
        ctx.progress->at(model ? "age Bloom" : "age Bloom, blocked", begin, events);
        r->filter_time.start();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            tf_status st = tf_age_bloom_contains(f, s.keys.data(key), s.keys.size(key), &present[i - begin]);
            if (st == TF_OK) st = tf_age_bloom_add(f, s.keys.data(key), s.keys.size(key));
            if (st != TF_OK) {
                r->filter_time.stop();
                return check(st, "tf_age_bloom_contains/add");
            }
        }
        r->filter_time.stop();
        r->exact_time.start();
        for (size_t i = begin; i < end; ++i) {
            auto it = r->exact.map.try_emplace(r->exact.k(s, s.key[i]), 0);
            ref[i - begin] = it.first->second;
            it.first->second = i + 1;
        }
        r->exact_time.stop();
        for (size_t i = begin; i < end; ++i) {
            const uint32_t key = s.key[i];
            const uint64_t last = truth[key];  // i inserts made so far; age = i - last
            if (ref[i - begin] != last) ++reference_mismatch;
            if (last != 0 && i - last < window) {
                ++r->in_window;
                if (!present[i - begin] && ++r->misses <= 5)
                    std::fprintf(stderr, "tf-demo: FAIL%s: key \"%.*s\" inserted %llu events ago reads absent\n",
                                 layout, int(s.keys.size(key)), s.keys.data(key), (unsigned long long)(i - last));
            } else if (last == 0 || i - last >= gone) {
                ++r->out_answers;
                out_keys.add(key);
                r->out_present += present[i - begin] != 0;
            }
            truth[key] = i + 1;
        }

        // Checkpoint: never-seen keys and keys of the window, next to the
        // filter's own estimate for its current fill.
        const uint64_t n = end;
        if (n < next_checkpoint && end != events) continue;
        next_checkpoint = n + checkpoint_every;
        tf_age_bloom_stats now_stats;
        if (!stats_of(f, &now_stats)) return false;
        const double fpr_now = now_stats.fpr_now;
        r->probe_keys.next(kAbsentProbes, &probes);
        uint64_t hits = 0;
        r->absent_time.start();
        tf_status st = TF_OK;
        for (const std::string &p : probes) {
            int yes = 0;
            st = tf_age_bloom_contains(f, p.data(), p.size(), &yes);
            if (st != TF_OK) break;
            hits += uint64_t(yes);
        }
        r->absent_time.stop();
        if (!check(st, "tf_age_bloom_contains")) return false;
        r->absent_probes += probes.size();
        r->absent_present += hits;
        r->estimate.add(fpr_now, double(probes.size()));
        if (model) r->distinct_estimate.add(model->rate(n), double(probes.size()));
        // Keys of the last min(window, n) events: all must be found. They
        // are copied out of the key table first, as the never-seen keys
        // are made first: only the filter's calls are timed.
        const uint64_t span_events = std::min<uint64_t>(window, n);
        probes.resize(kPresentProbes);
        for (std::string &p : probes) {
            const uint32_t key = s.key[size_t(n - 1 - rng.below(span_events))];
            p.assign(s.keys.data(key), s.keys.size(key));
        }
        uint64_t found = 0;
        r->present_time.start();
        for (const std::string &p : probes) {
            int yes = 0;
            st = tf_age_bloom_contains(f, p.data(), p.size(), &yes);
            if (st != TF_OK) break;
            found += uint64_t(yes);
        }
        r->present_time.stop();
        if (!check(st, "tf_age_bloom_contains")) return false;
        r->present_probes += probes.size();
        r->present_missed += probes.size() - found;
        if (series) {
            size_t mem = 0;
            if (!check(tf_age_bloom_memory(f, &mem), "tf_age_bloom_memory")) return false;
            series->add(double(n), ratio(r->absent_present, r->absent_probes), ctx.options.target, double(mem),
                        double(r->exact.memory()));
        }
    }
    ctx.progress->clear();
    r->out_keys = out_keys.count();
    if (reference_mismatch != 0) {
        std::fprintf(stderr, "tf-demo: internal error: the exact map disagrees with the truth %llu times\n",
                     (unsigned long long)reference_mismatch);
        return false;
    }
    return true;
}

// The filter survives a serialization round trip: the copy reports the
// same state and answers every question as the original does (new probe
// keys and a sample of the stream's keys). `copy_blocked` receives the
// copy's layout. False on an API error (already reported).
bool round_trip(const Stream &s, const tf_age_bloom *f, ProbeKeys *probe_keys, size_t *written, bool *same,
                int *copy_blocked) {
    size_t blob_size = 0;
    tf_age_bloom_stats before;
    if (!stats_of(f, &before) || !check(tf_age_bloom_serialized_size(f, &blob_size), "tf_age_bloom_serialized_size"))
        return false;
    std::vector<unsigned char> blob(blob_size);
    tf_age_bloom *copy_raw = nullptr;
    if (!check(tf_age_bloom_serialize(f, blob.data(), blob.size(), written), "tf_age_bloom_serialize") ||
        !check(tf_age_bloom_deserialize(blob.data(), *written, nullptr, &copy_raw), "tf_age_bloom_deserialize"))
        return false;
    Filter copy(copy_raw);
    tf_age_bloom_stats after;
    Shape copy_shape;
    if (!stats_of(copy_raw, &after) || !shape_of(copy_raw, &copy_shape)) return false;
    *copy_blocked = (copy_shape.flags & TF_AGE_BLOOM_BLOCKED) ? 1 : 0;
    *same = after.inserts == before.inserts && after.fpr_now == before.fpr_now;
    std::vector<std::string> probes;
    probe_keys->next(5000, &probes);
    for (uint32_t key = 0; key < s.keys.count(); key += 1 + s.keys.count() / 5000)
        probes.emplace_back(s.keys.data(key), s.keys.size(key));
    for (const std::string &p : probes) {
        int a = 0, b = 0;
        if (!check(tf_age_bloom_contains(f, p.data(), p.size(), &a), "tf_age_bloom_contains") ||
            !check(tf_age_bloom_contains(copy_raw, p.data(), p.size(), &b), "tf_age_bloom_contains"))
            return false;
        *same = *same && a == b;
    }
    return true;
}

// The figures the blocked layout is compared on.
struct Figures {
    size_t memory = 0;
    double bits_per_element = 0.0, per_event = 0.0, per_absent = 0.0, per_present = 0.0;
};

bool figures_of(const tf_age_bloom *f, const Replay &r, uint64_t events, Figures *out) {
    tf_age_bloom_stats st;
    if (!check(tf_age_bloom_memory(f, &out->memory), "tf_age_bloom_memory") || !stats_of(f, &st)) return false;
    out->bits_per_element = st.bits_per_element;
    out->per_event = r.filter_time.per(events);
    out->per_absent = r.absent_time.per(r.absent_probes);
    out->per_present = r.present_time.per(r.present_probes);
    return true;
}

// The classic layout, sized with tf_age_bloom_new_for(); its figures go to
// `classic` for the blocked layout's comparison.
// The verdicts both layouts share: misses within the window (the hard
// promise), false positives on keys new or long gone, and on never-seen
// probe keys next to the filter's fpr_now.
void print_replay_verdicts(const Replay &r, uint64_t window, uint64_t gone, double target) {
    const double out_rate = ratio(r.out_present, r.out_answers), probe_rate = ratio(r.absent_present, r.absent_probes);
    print_verdict(
        "missed in window",
        count(r.missed()) + " of " + count(r.asked()) + " keys of the last " + count(window) + " events (must be 0)",
        hard(r.missed() == 0));
    print_verdict("false positives",
                  percent(out_rate) + " of " + count(r.out_answers) + " keys new or " + count(gone) + "+ events back",
                  soft(out_rate, target, r.out_keys));
    print_verdict(
        "  never-seen keys",
        percent(probe_rate) + " of " + count(r.absent_probes) + " probes; fpr_now " + percent(r.estimate.mean()),
        soft(probe_rate, target, r.absent_probes));
}

Outcome classic_count_window(const Context &ctx, uint64_t want, uint32_t seed, Figures *classic) {
    const Stream &s = ctx.stream;
    const double target = ctx.options.target;
    const uint64_t events = s.events();

    tf_age_bloom *raw = nullptr;
    if (!check(tf_age_bloom_new_for(want, target, seed, 0, &raw), "tf_age_bloom_new_for")) return Outcome::api_error;
    Filter filter(raw);
    tf_age_bloom *f = raw;
    Shape z;
    double peak = 0.0, steady_bpe = 0.0;
    if (!shape_of(f, &z) ||
        !check(tf_age_bloom_false_positive_rate(z.k, z.l, &peak), "tf_age_bloom_false_positive_rate") ||
        !check(tf_age_bloom_bits_per_element(z.k, z.l, &steady_bpe), "tf_age_bloom_bits_per_element"))
        return Outcome::api_error;
    const uint32_t k = z.k, l = z.l;
    const uint64_t slice_bits = z.slice_bits, g = z.g, window = z.window, gone = z.gone();

    Replay r;
    DistinctModel model(s, k, l, g, slice_bits);
    Series *series = ctx.recorder->open(
        "age_bloom", "Age-partitioned Bloom filter (tf_age_bloom), count window", "never-seen keys read as present",
        "A key among the last N events (the window) is always found, and a key never seen (or gone from every "
        "slice) reads as present with probability at most the target error.",
        false, "target error");
    if (!replay(ctx, f, z, &model, "", &r, series)) return Outcome::api_error;

    size_t written = 0;
    bool round_trip_ok = false;
    int copy_blocked = 1;
    if (!figures_of(f, r, events, classic) || !round_trip(s, f, &r.probe_keys, &written, &round_trip_ok, &copy_blocked))
        return Outcome::api_error;
    round_trip_ok = round_trip_ok && copy_blocked == 0;

    // The report.
    const uint64_t window_keys = distinct_per_count_window(s, window);
    const size_t exact_bytes = r.exact.memory();
    const double per_entry = r.exact.map.empty() ? 0.0 : double(exact_bytes) / double(r.exact.map.size());
    char buf[240];
    print_subtitle("count window:", "was the key among the last N events? contains, then add, per event");
    std::snprintf(buf, sizeof buf, "new_for(N = %s events, the mean per %s, p %.4g) -> k = %u, l = %u",
                  count(want).c_str(), span(s, ctx.horizon).c_str(), target, unsigned(k), unsigned(l));
    print_row("sized", buf);
    std::snprintf(buf, sizeof buf, "%u slices of %s bits, generation g = %s; window l g = %s events", unsigned(k + l),
                  count(slice_bits).c_str(), count(g).c_str(), count(window).c_str());
    print_row("", buf);
    print_columns("", "filter", "exact map", "exact, pruned");
    print_columns("memory", bytes(classic->memory), bytes(exact_bytes), bytes(size_t(per_entry * double(window_keys))));
    print_columns("time per event", nanos(classic->per_event), nanos(r.exact_time.per(events)), "");
    print_row("time per contains",
              nanos(classic->per_absent) + " never-seen key, " + nanos(classic->per_present) + " key of the window");
    print_replay_verdicts(r, window, gone, target);
    std::snprintf(buf, sizeof buf, "<= %s; at its peak, just before a shift, %s (exact)", percent(target).c_str(),
                  percent(peak).c_str());
    print_row("  promised", buf);
    // A key repeated within a slice's generations sets no new bit: fpr_now
    // reads each slice's measured fill, which the distinct keys predict.
    std::snprintf(buf, sizeof buf, "%.0f%% of the inserts repeat a key of the window: fill ratios from the",
                  100.0 * ratio(r.in_window, events));
    print_row("  repeats", buf);
    print_row("", "distinct keys of each slice give " + percent(r.distinct_estimate.mean()) +
                      " (fpr_now reads the measured fill)");
    std::snprintf(buf, sizeof buf, "%.1f (stats); (k + l) k / (l ln 2) = %.1f", classic->bits_per_element, steady_bpe);
    print_row("bits per element", buf);
    print_verdict("serialized", bytes(written) + " blob; the copy answers identically", hard(round_trip_ok));
    return r.missed() == 0 && round_trip_ok ? Outcome::ok : Outcome::promise_broken;
}

// "1.19x": a figure of the blocked layout over the classic one's.
std::string times(double blocked, double classic) {
    if (classic <= 0.0) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", blocked / classic);
    return buf;
}

// The blocked layout, sized with tf_age_bloom_new_for(TF_AGE_BLOOM_BLOCKED) for the
// same window, target and seed, replayed the same way, next to the classic
// filter's figures.
Outcome blocked_count_window(const Context &ctx, uint64_t want, uint32_t seed, const Figures &classic) {
    const Stream &s = ctx.stream;
    const double target = ctx.options.target;
    const uint64_t events = s.events();

    uint32_t chosen_k = 0, chosen_l = 0;
    double fill = 0.0;
    if (!check(tf_age_bloom_choose(target, TF_AGE_BLOOM_BLOCKED, &chosen_k, &chosen_l, &fill), "tf_age_bloom_choose"))
        return Outcome::api_error;
    tf_age_bloom *raw = nullptr;
    if (!check(tf_age_bloom_new_for(want, target, seed, TF_AGE_BLOOM_BLOCKED, &raw), "tf_age_bloom_new_for"))
        return Outcome::api_error;
    Filter filter(raw);
    tf_age_bloom *f = raw;
    Shape z;
    tf_age_bloom_stats st;
    if (!shape_of(f, &z) || !stats_of(f, &st)) return Outcome::api_error;
    const bool is_blocked = (z.flags & TF_AGE_BLOOM_BLOCKED) != 0;
    const uint64_t slices = st.slices;
    if (!is_blocked || z.k != chosen_k || z.l != chosen_l || slices != uint64_t(z.k + z.l)) {
        std::fprintf(stderr,
                     "tf-demo: internal error: new_for(BLOCKED) gave a %s filter with k = %u, l = %u, %llu slices; "
                     "choose(BLOCKED) says k = %u, l = %u\n",
                     is_blocked ? "blocked" : "classic", unsigned(z.k), unsigned(z.l), (unsigned long long)slices,
                     unsigned(chosen_k), unsigned(chosen_l));
        return Outcome::api_error;
    }

    Replay r;
    Figures b;
    size_t written = 0;
    bool round_trip_ok = false;
    int copy_blocked = 0;
    if (!replay(ctx, f, z, nullptr, " (blocked layout)", &r, nullptr) || !figures_of(f, r, events, &b) ||
        !round_trip(s, f, &r.probe_keys, &written, &round_trip_ok, &copy_blocked))
        return Outcome::api_error;
    round_trip_ok = round_trip_ok && copy_blocked == 1;

    char buf[240];
    std::printf("\n");
    print_subtitle("count window, blocked layout:", "the same stream, N, p and seed; contains, then add");
    std::snprintf(buf, sizeof buf, "new_for(N = %s events, p %.4g, BLOCKED) -> k = %u, l = %u, fill %.3f",
                  count(want).c_str(), target, unsigned(z.k), unsigned(z.l), fill);
    print_row("sized", buf);
    std::snprintf(buf, sizeof buf, "%llu slices of %s bits, generation g = %s; window l g = %s events",
                  (unsigned long long)slices, count(z.slice_bits).c_str(), count(z.g).c_str(), count(z.window).c_str());
    print_row("", buf);
    print_columns("", "blocked", "classic", "blocked / classic");
    print_columns("memory", bytes(b.memory), bytes(classic.memory), times(double(b.memory), double(classic.memory)));
    char bpe[2][32];
    std::snprintf(bpe[0], sizeof bpe[0], "%.1f", b.bits_per_element);
    std::snprintf(bpe[1], sizeof bpe[1], "%.1f", classic.bits_per_element);
    print_columns("bits per element", bpe[0], bpe[1], times(b.bits_per_element, classic.bits_per_element));
    print_columns("time per event", nanos(b.per_event), nanos(classic.per_event),
                  times(b.per_event, classic.per_event));
    print_columns("contains, never-seen", nanos(b.per_absent), nanos(classic.per_absent),
                  times(b.per_absent, classic.per_absent));
    print_columns("contains, in window", nanos(b.per_present), nanos(classic.per_present),
                  times(b.per_present, classic.per_present));
    print_replay_verdicts(r, z.window, z.gone(), target);
    print_row("  promised", "<= " + percent(target) + " under a conservative model of the blocking (fpr_now)");
    print_verdict("serialized", bytes(written) + " blob, still blocked; the copy answers identically",
                  hard(round_trip_ok));
    return r.missed() == 0 && round_trip_ok ? Outcome::ok : Outcome::promise_broken;
}

Outcome count_window(const Context &ctx) {
    const Stream &s = ctx.stream;
    const uint64_t events = s.events();

    // The window: the mean number of events per horizon.
    const uint64_t time_span = s.last - s.first;
    double per_horizon = time_span == 0 ? double(events) : double(events) * double(ctx.horizon) / double(time_span);
    const uint64_t want = ctx.options.capacity
                              ? ctx.options.capacity
                              : uint64_t(std::max(1.0, std::min(double(events), std::round(per_horizon))));
    print_choice("count window N = " + count(want) + " events", "--capacity", ctx.options.capacity != 0,
                 "the mean events per horizon (" + span(s, ctx.horizon) + ")");
    const uint32_t seed = uint32_t(ctx.options.seed * 2654435761u + 4);

    Figures classic;
    const Outcome o = classic_count_window(ctx, want, seed, &classic);
    if (o == Outcome::api_error) return o;
    return worst(o, blocked_count_window(ctx, want, seed, classic));
}

class AgeBloomSection : public Section {
   public:
    const char *title() const override { return "Age-partitioned Bloom filter (tf_age_bloom)"; }
    Outcome run(const Context &ctx) override { return count_window(ctx); }
};

}  // namespace

std::unique_ptr<Section> make_age_bloom_section() { return std::make_unique<AgeBloomSection>(); }

}  // namespace demo
