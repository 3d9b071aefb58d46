// Benchmark of the recency window (tf_recency_window): "how many inserts
// ago was this key last seen?" within (1 +/- eps), or "not in the last W".
//
// Per window W (--sizes, default 1e5, 1e6, 1e7) and eps = 1/2, 1/4, 1/8,
// 1/16 (--inv-eps to choose), in HistoricalMembership mode with exact
// (64-bit) signatures: a structure receives 2 W inserts of 16-byte keys
// drawn uniformly from a universe of W keys (so that recencies spread over
// the whole window), then two rounds of timed cases, each interleaved with
// the floor (one MurmurHash3 of the key plus one random line of a buffer of
// the structure's size) and the exact baseline in the same run:
//
//   queries (the structure unchanged): keys of small recency (among the
//     last 1/eps inserts: level 0), keys of recency in [W/4, W/2) (several
//     levels probed), keys never inserted (every level probed), single calls
//     and batches of 64; beside std::unordered_map<uint64_t, uint64_t> (the
//     key's 64-bit hash to its last insert index) finds of the same keys;
//   inserts (the stream goes on): insert, insert_report and insert_batch of
//     the next keys of the stream; beside the exact baseline's insert: the
//     map updated plus a ring of the last W inserts whose oldest entry is
//     erased from the map (the expiry that keeps it to W keys).
//
// "x floor" is the ratio to the floor's ns/op; "per level" divides it by the
// levels a query probes (HistoricalMembership answers from the first level
// holding the key: a key of recency r is found at level about
// log2(r eps + 1); an absent key probes all L + 1). Bits per window item are
// 8 x tf_recency_window_memory() / W, beside the leading term of the bound:
// (1 + eps)(log2(N / W) + log2(1 / eps)) bits with N = 2^64 for exact
// signatures, and for approximate signatures of false-match probability
// delta (1 + eps) log2(1 / (eps delta)), from tf_recency_window_memory_for()
// (the tables are allocated whole at creation: memory does not depend on
// the stream).
//
// Then the measured Table 1 (--sizes' 1e6 entry, or the first size; eps =
// 1/8): HistoricalMembership, ExactCuckoo and OptimalSM (block W eps) side
// by side: bits per window item, insert and query ns/op, and the largest
// relative and absolute error of insert_report over the timed inserts
// against the exact baseline's answers.
//
// Timing: the thread's CPU time (a shared machine), median of --reps
// rounds (default 3). Nothing is asserted: the program reports, and exits 1
// only when a library call fails or an answer breaks the error promise.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_util.hpp"
#include "temporalfilters.h"

using namespace tfbench;

namespace {

constexpr uint32_t kSeed = 23;
constexpr size_t kKeyLen = 16;
constexpr size_t kBatch = 64;
constexpr uint64_t kNot = TF_RECENCY_WINDOW_NOT_IN_WINDOW;

using Window = Owned<tf_recency_window, tf_recency_window_free>;

// The exact baseline's key: the key's 64-bit hash (exact but for 2^-64
// collisions, as the structure's exact signatures).
uint64_t fp_of(const uint8_t *k) { return tf::key_hash(k, kKeyLen, kSeed).h1; }

// The exact recency window: the last insert index of every key of the last
// W inserts, kept to W keys by a ring of the last W inserts.
class ExactWindow {
   public:
    explicit ExactWindow(uint64_t w) : w_(w), ring_(size_t(w)) { map_.reserve(size_t(w)); }
    // The key's recency before this insert (kNot beyond W), then the insert.
    uint64_t insert_report(uint64_t fp) {
        uint64_t prev = kNot;
        auto it = map_.find(fp);
        if (it != map_.end()) {
            prev = t_ - 1 - it->second;
            it->second = t_;
        } else {
            map_.emplace(fp, t_);
        }
        if (t_ >= w_) {  // the insert W ago leaves the window
            const uint64_t old = ring_[size_t(t_ % w_)];
            auto o = map_.find(old);
            if (o != map_.end() && o->second == t_ - w_) map_.erase(o);
        }
        ring_[size_t(t_ % w_)] = fp;
        t_++;
        return prev;
    }
    uint64_t query(uint64_t fp) const {
        auto it = map_.find(fp);
        return it == map_.end() ? kNot : t_ - 1 - it->second;
    }
    uint64_t now() const { return t_; }

   private:
    uint64_t w_;
    uint64_t t_ = 0;
    std::vector<uint64_t> ring_;
    std::unordered_map<uint64_t, uint64_t> map_;
};

// Calls the batch function over stream[first, first + count) in batches.
template <class Fn>
void batched(const KeyArray &stream, size_t first, size_t count, Fn &&fn) {
    const void *ptrs[kBatch];
    size_t lens[kBatch];
    uint64_t out[kBatch];
    for (size_t i = 0; i < kBatch; ++i) lens[i] = kKeyLen;
    for (size_t base = 0; base < count; base += kBatch) {
        const size_t n = std::min(kBatch, count - base);
        for (size_t i = 0; i < n; ++i) ptrs[i] = stream[first + base + i];
        fn(ptrs, lens, n, out);
        do_not_optimize(out[0]);
    }
}

// The stream's keys: key j of the universe of u keys (16 bytes, the first 8
// a bijective mix of j), so that a stream of indices needs no key table.
void key_of(uint64_t j, uint64_t salt, uint8_t *out) {
    const uint64_t a = mix64(j ^ salt), b = mix64(a + 0x9e3779b97f4a7c15ULL);
    std::memcpy(out, &a, 8);
    std::memcpy(out + 8, &b, 8);
}

double leading_exact(uint64_t w, uint64_t k) {
    return (1.0 + 1.0 / double(k)) * (64.0 - std::log2(double(w)) + std::log2(double(k)));
}
double leading_approx(uint64_t k, double delta) { return (1.0 + 1.0 / double(k)) * std::log2(double(k) / delta); }

tf_recency_window_options options_for(uint32_t mode, uint64_t w, uint64_t k, double delta) {
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.mode = mode;
    o.window = w;
    o.inv_eps = k;
    o.delta = delta;
    o.seed = kSeed;
    return o;
}

const char *mode_name(uint32_t mode) {
    switch (mode) {
        case TF_RECENCY_WINDOW_HISTORICAL:
            return "HistoricalMembership";
        case TF_RECENCY_WINDOW_EXACT:
            return "ExactCuckoo";
        default:
            return "OptimalSM";
    }
}

// One measured structure: its speeds, error and memory.
struct Result {
    double insert_ns = NAN, insert_report_ns = NAN, insert_batch_ns = NAN, map_insert_ns = NAN;
    double q_recent_ns = NAN, q_mid_ns = NAN, q_absent_ns = NAN, q_mid_batch_ns = NAN, q_absent_batch_ns = NAN;
    double map_find_ns = NAN, floor_q_ns = NAN, floor_i_ns = NAN;
    double levels_mid = NAN;             // mean levels probed by the mid queries
    double promotions_per_insert = NAN;  // entries moved up a level, per insert
    uint32_t levels = 0;
    double bits_per_item = NAN;
    double max_rel = 0, max_abs = 0;
    uint64_t errors_checked = 0, promise_broken = 0;
};

// Builds one structure, warms it with 2 W inserts of the stream, and times
// its cases beside the floor and the exact baseline.
Result measure(const tf_recency_window_options &o, const Options &opt, unsigned reps, uint64_t ops,
               std::atomic<uint64_t> &failures) {
    Result r;
    const uint64_t w = o.window, k = o.inv_eps;
    const uint64_t universe = w;
    const uint64_t salt = mix64(opt.seed);
    Rng rng(opt.seed ^ (w * 31 + k));
    tf_recency_window *raw = nullptr;
    require_ok(tf_recency_window_new(&o, &raw), "tf_recency_window_new");
    Window rw(raw);
    ExactWindow exact(w);
    std::vector<uint64_t> history;  // the index of every insert's key
    history.reserve(size_t(2 * w + (reps + 1) * ops * 3));
    uint8_t key[kKeyLen];
    for (uint64_t i = 0; i < 2 * w; ++i) {
        const uint64_t j = rng.below(universe);
        key_of(j, salt, key);
        require_ok(tf_recency_window_insert(rw.get(), key, kKeyLen), "insert");
        exact.insert_report(fp_of(key));
        history.push_back(j);
    }
    tf_recency_window_info info = TF_RECENCY_WINDOW_INFO_INIT;
    require_ok(tf_recency_window_get_info(rw.get(), &info), "get_info");
    r.levels = info.levels;
    size_t mem = 0;
    require_ok(tf_recency_window_memory(rw.get(), &mem), "memory");
    r.bits_per_item = 8.0 * double(mem) / double(w);

    // query streams: recent keys (among the last k inserts), keys of
    // recency in [W/4, W/2) not inserted since, and keys never inserted
    const uint64_t t = exact.now();
    KeyArray recent(ops, kKeyLen), mid(ops, kKeyLen), absent(ops, kKeyLen);
    double level_sum = 0;
    for (size_t i = 0; i < ops; ++i) {
        key_of(history[size_t(t - 1 - rng.below(std::min(k, t)))], salt, recent[i]);
        for (;;) {
            const uint64_t age = w / 4 + rng.below(std::max<uint64_t>(1, w / 4));
            key_of(history[size_t(t - 1 - age)], salt, mid[i]);
            const uint64_t truth = exact.query(fp_of(mid[i]));
            if (truth == age) {  // not inserted since
                level_sum += std::floor(std::log2(double(truth) / double(k) + 1.0)) + 1.0;
                break;
            }
        }
        key_of(universe + rng.next() % (uint64_t(1) << 40), salt, absent[i]);
    }
    r.levels_mid = std::min(level_sum / double(ops), double(r.levels));
    FloorBuffer floor_buf(mem, opt.seed + 9);
    {
        Bench bench;
        bench.set_clock(BenchClock::thread_cpu);
        bench.add({"floor", "floor", 1, ops, [&](unsigned, uint64_t) {
                       do_not_optimize(floor_pass(floor_buf, mid, 0, ops, kSeed, FloorHash::inlined));
                   }});
        const auto single = [&](const char *id, const KeyArray &keys) {
            bench.add({id, id, 1, ops, [&](unsigned, uint64_t) {
                           uint64_t sum = 0, rec = 0;
                           for (size_t i = 0; i < ops; ++i) {
                               if (tf_recency_window_query(rw.get(), keys[i], kKeyLen, &rec) != TF_OK) failures++;
                               sum += rec;
                           }
                           do_not_optimize(sum);
                       }});
        };
        single("q_recent", recent);
        single("q_mid", mid);
        single("q_absent", absent);
        const auto batch = [&](const char *id, const KeyArray &keys) {
            bench.add({id, id, 1, ops, [&](unsigned, uint64_t) {
                           batched(keys, 0, ops, [&](const void *const *p, const size_t *l, size_t n, uint64_t *out) {
                               if (tf_recency_window_query_batch(rw.get(), p, l, n, out) != TF_OK) failures++;
                           });
                       }});
        };
        batch("q_mid_batch", mid);
        batch("q_absent_batch", absent);
        bench.add({"map_find", "exact map find (mid)", 1, ops, [&](unsigned, uint64_t) {
                       uint64_t sum = 0;
                       for (size_t i = 0; i < ops; ++i) sum += exact.query(fp_of(mid[i]));
                       do_not_optimize(sum);
                   }});
        run_cases(bench, std::string(mode_name(o.mode)) + " W=" + fmt_u(w) + " 1/eps=" + fmt_u(k) + " queries", reps,
                  ops, "queries", failures);
        r.floor_q_ns = bench.find("floor")->median_ns();
        r.q_recent_ns = bench.find("q_recent")->median_ns();
        r.q_mid_ns = bench.find("q_mid")->median_ns();
        r.q_absent_ns = bench.find("q_absent")->median_ns();
        r.q_mid_batch_ns = bench.find("q_mid_batch")->median_ns();
        r.q_absent_batch_ns = bench.find("q_absent_batch")->median_ns();
        r.map_find_ns = bench.find("map_find")->median_ns();
    }

    // inserts: the stream goes on, every round in 4 parts of `ops` keys,
    // one per case; the structure and the exact window must see the same
    // stream, so each takes the parts the other's cases timed untimed,
    // right after them (the rounds are driven here rather than by Bench
    // for that reason; same warm-up, interleaving and median)
    const size_t parts = 4;
    KeyArray next(size_t((reps + 1) * parts * ops), kKeyLen);
    for (size_t i = 0; i < next.count(); ++i) key_of(rng.below(universe), salt, next[i]);
    const double eps = 1.0 / double(k);
    std::vector<uint64_t> answers(ops);
    const auto part = [&](uint64_t run, size_t p) { return size_t((run * parts + p) * ops); };
    const auto feed_structure = [&](size_t f) {
        for (size_t i = 0; i < ops; ++i)
            if (tf_recency_window_insert(rw.get(), next[f + i], kKeyLen) != TF_OK) failures++;
    };
    const auto feed_exact = [&](size_t f) {
        for (size_t i = 0; i < ops; ++i) exact.insert_report(fp_of(next[f + i]));
    };
    struct InsertCase {
        const char *id;
        std::function<void(uint64_t run)> timed, untimed;
        std::vector<double> ns;
    };
    std::vector<InsertCase> cases;
    cases.push_back({"floor",
                     [&](uint64_t run) {
                         do_not_optimize(floor_pass(floor_buf, next, part(run, 0), ops, kSeed, FloorHash::inlined));
                     },
                     [](uint64_t) {},
                     {}});
    cases.push_back({"map_insert",
                     [&](uint64_t run) {
                         const size_t f = part(run, 0);
                         uint64_t sum = 0;
                         for (size_t i = 0; i < ops; ++i) sum += exact.insert_report(fp_of(next[f + i]));
                         do_not_optimize(sum);
                     },
                     [&](uint64_t run) { feed_structure(part(run, 0)); },
                     {}});
    cases.push_back({"insert",
                     [&](uint64_t run) { feed_structure(part(run, 1)); },
                     [&](uint64_t run) { feed_exact(part(run, 1)); },
                     {}});
    cases.push_back({"insert_report",
                     [&](uint64_t run) {
                         const size_t f = part(run, 2);
                         uint64_t prev = 0;
                         for (size_t i = 0; i < ops; ++i) {
                             if (tf_recency_window_insert_report(rw.get(), next[f + i], kKeyLen, &prev) != TF_OK)
                                 failures++;
                             answers[i] = prev;
                         }
                     },
                     [&](uint64_t run) {
                         // every answer against the exact window's
                         const size_t f = part(run, 2);
                         for (size_t i = 0; i < ops; ++i) {
                             const uint64_t want = exact.insert_report(fp_of(next[f + i])), got = answers[i];
                             r.errors_checked++;
                             if (want == kNot) continue;  // beyond W: the slack may still answer
                             if (got == kNot) {
                                 r.promise_broken++;
                                 continue;
                             }
                             const double d = std::fabs(double(got) - double(want));
                             r.max_abs = std::max(r.max_abs, d);
                             if (want > 0) r.max_rel = std::max(r.max_rel, d / double(want));
                             if (o.mode == TF_RECENCY_WINDOW_HISTORICAL && d > eps * double(want) + 1e-9)
                                 r.promise_broken++;
                             if (o.mode == TF_RECENCY_WINDOW_EXACT && d != 0) r.promise_broken++;
                             if (o.mode == TF_RECENCY_WINDOW_OPTIMAL_SM && d >= double(info.block)) r.promise_broken++;
                         }
                     },
                     {}});
    cases.push_back({"insert_batch",
                     [&](uint64_t run) {
                         batched(next, part(run, 3), ops,
                                 [&](const void *const *p, const size_t *l, size_t n, uint64_t *) {
                                     if (tf_recency_window_insert_batch(rw.get(), p, l, n) != TF_OK) failures++;
                                 });
                     },
                     [&](uint64_t run) { feed_exact(part(run, 3)); },
                     {}});
    std::fprintf(stderr,
                 "[%s W=%" PRIu64 " 1/eps=%" PRIu64 " inserts] %zu cases x (1 warm-up + %u rounds) of %" PRIu64
                 " inserts\n",
                 mode_name(o.mode), w, k, cases.size(), reps, ops);
    for (unsigned round = 0; round <= reps; ++round) {
        for (InsertCase &c : cases) {
            const uint64_t t0 = thread_cpu_ns();
            c.timed(round);
            const double ns = double(thread_cpu_ns() - t0) / double(ops);
            if (round > 0) c.ns.push_back(ns);
            c.untimed(round);
        }
    }
    if (failures.load() != 0) require_ok(TF_ERR_INTERNAL, "a timed call");
    r.floor_i_ns = median(cases[0].ns);
    r.map_insert_ns = median(cases[1].ns);
    r.insert_ns = median(cases[2].ns);
    r.insert_report_ns = median(cases[3].ns);
    r.insert_batch_ns = median(cases[4].ns);
    tf_recency_window_stats st = TF_RECENCY_WINDOW_STATS_INIT;
    require_ok(tf_recency_window_get_stats(rw.get(), &st), "get_stats");
    r.promotions_per_insert = double(st.promotions) / double(st.inserts);
    return r;
}

// This benchmark's own options, taken out of argv before the common ones
// are parsed: --inv-eps K,K,... (the 1/eps values; default 2,4,8,16) and
// --no-table1 (skip the three modes' table: an A/B run of one mode).
bool take_own_options(int *argc, char **argv, std::vector<uint64_t> *inv_eps, bool *table1) {
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        const std::string a = argv[i];
        if (a == "--no-table1") {
            *table1 = false;
        } else if (a == "--inv-eps" && i + 1 < *argc) {
            inv_eps->clear();
            const std::string list = argv[++i];
            size_t at = 0;
            while (at <= list.size()) {
                const size_t comma = std::min(list.find(',', at), list.size());
                const std::string item = list.substr(at, comma - at);
                char *end = nullptr;
                const unsigned long long k = std::strtoull(item.c_str(), &end, 10);
                if (item.empty() || *end != '\0' || k < 1 || k > (1u << 20)) {
                    std::fprintf(stderr, "%s: --inv-eps takes integers in [1, 2^20] separated by commas\n",
                                 program_name().c_str());
                    return false;
                }
                inv_eps->push_back(k);
                at = comma + 1;
            }
        } else {
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    int exit_code = 0;
    std::vector<uint64_t> own_inv_eps;
    bool table1 = true;
    if (!take_own_options(&argc, argv, &own_inv_eps, &table1)) return 1;
    if (!start_benchmark(argc, argv,
                         "recency window: insert and query ns/op (HistoricalMembership, exact signatures) per W and "
                         "eps beside an exact map with expiry and the floor; bits per window item against the "
                         "leading terms; the measured Table 1 of the three modes",
                         "  --sizes sets the windows W (default 100k,1M,10M; --quick 10k).\n"
                         "  --inv-eps K,K,...  the 1/eps values (default 2,4,8,16; --quick 8)\n"
                         "  --no-table1        skip the measured Table 1 of the three modes\n",
                         &opt, &exit_code))
        return exit_code;
    const uint64_t t_start = now_ns();
    const std::vector<uint64_t> sizes =
        sizes_or(opt, {10000}, {100000, 1000000, 10000000}, 64, uint64_t(1) << 27, "windows", "64..2^27");
    const std::vector<uint64_t> inv_eps = !own_inv_eps.empty() ? own_inv_eps
                                          : opt.quick          ? std::vector<uint64_t>{8}
                                                               : std::vector<uint64_t>{2, 4, 8, 16};
    const unsigned reps = unsigned(given_or(opt.reps, opt, 1, 3));
    std::printf("Recency window benchmark%s: 16-byte keys, %u timed rounds (median ns/op, thread CPU time)\n",
                opt.quick ? " (--quick smoke run)" : "", reps);
    print_environment(stdout);
    std::atomic<uint64_t> failures{0};
    std::vector<std::string> csv;
    uint64_t broken = 0;

    Table speed({"W", "1/eps", "case", "ns/op", "x floor", "per level", "x map", "goal"}, 3);
    Table memory({"W", "1/eps", "signatures", "bits/item", "leading term", "ratio", "goal"}, 3);
    for (const uint64_t w : sizes) {
        const uint64_t ops = given_or(opt.ops, opt, std::min<uint64_t>(w, 20000), std::min<uint64_t>(w, 1000000));
        for (const uint64_t k : inv_eps) {
            const tf_recency_window_options o = options_for(TF_RECENCY_WINDOW_HISTORICAL, w, k, 0.0);
            const Result r = measure(o, opt, reps, ops, failures);
            broken += r.promise_broken;
            const std::string W = fmt_u(w), K = fmt_u(k);
            const auto row = [&](const char *id, double ns, double floor_ns, double levels, double map_ns,
                                 const char *goal) {
                speed.row({W, K, id, fmt("%.1f", ns), fmt("%.2f", ns / floor_ns),
                           std::isnan(levels) ? "" : fmt("%.2f", ns / floor_ns / levels),
                           std::isnan(map_ns) ? "" : fmt("%.2fx faster", map_ns / ns), goal});
                csv.push_back(W + "," + K + "," + id + "," + fmt("%.2f", ns) + "," + fmt("%.3f", ns / floor_ns) + "," +
                              (std::isnan(levels) ? "" : fmt("%.3f", ns / floor_ns / levels)) + "," +
                              fmt("%.2f", r.bits_per_item) + "," + fmt_u(r.levels));
            };
            row("query recent", r.q_recent_ns, r.floor_q_ns, 1.0, r.map_find_ns, "<= 4x floor");
            row("query mid", r.q_mid_ns, r.floor_q_ns, r.levels_mid, r.map_find_ns, "<= 2x floor per level");
            row("query absent", r.q_absent_ns, r.floor_q_ns, double(r.levels), NAN, "<= 2x floor per level");
            row("query_batch mid", r.q_mid_batch_ns, r.floor_q_ns, r.levels_mid, r.map_find_ns, "");
            row("query_batch absent", r.q_absent_batch_ns, r.floor_q_ns, double(r.levels), NAN, "");
            row("insert", r.insert_ns, r.floor_i_ns, NAN, r.map_insert_ns, "<= 4x floor amortized");
            row("insert_report", r.insert_report_ns, r.floor_i_ns, NAN, r.map_insert_ns, "");
            row("insert_batch", r.insert_batch_ns, r.floor_i_ns, NAN, r.map_insert_ns, "");
            speed.row({W, K, "floor (queries / inserts)", fmt("%.1f", r.floor_q_ns) + " / " + fmt("%.1f", r.floor_i_ns),
                       "", "", "", ""});
            speed.row({W, K, "exact map find / insert",
                       fmt("%.1f", r.map_find_ns) + " / " + fmt("%.1f", r.map_insert_ns), "", "", "", ""});
            speed.row({W, K, "levels; promotions per insert",
                       fmt_u(r.levels) + "; " + fmt("%.2f", r.promotions_per_insert), "", "", "", ""});
            speed.row(
                {W, K, "max relative error", fmt("%.4f", r.max_rel), "", "", "", fmt("<= %.4f", 1.0 / double(k))});
            speed.separator();
            const double lead = leading_exact(w, k);
            memory.row({W, K, "exact (64 bits)", fmt("%.1f", r.bits_per_item), fmt("%.1f", lead),
                        fmt("%.2f", r.bits_per_item / lead), "<= 1.5x"});
            for (const double delta : {1e-2, 1e-3, 1e-4}) {
                const tf_recency_window_options a = options_for(TF_RECENCY_WINDOW_HISTORICAL, w, k, delta);
                size_t bytes = 0;
                require_ok(tf_recency_window_memory_for(&a, &bytes), "memory_for");
                const double bits = 8.0 * double(bytes) / double(w), la = leading_approx(k, delta);
                memory.row({W, K, "delta " + fmt("%g", delta), fmt("%.1f", bits), fmt("%.1f", la),
                            fmt("%.2f", bits / la), "<= 1.5x"});
            }
        }
        memory.separator();
    }
    std::printf("\n== speed (HistoricalMembership, exact signatures) ==\n");
    speed.print(stdout);
    std::printf("\n== memory: bits per window item against the leading term of the bound ==\n");
    memory.print(stdout);

    // Table 1: the three modes at W = 1e6 (or the first size), eps = 1/8
    if (!table1) {
        print_csv({"#W,inv_eps,case,ns_per_op_median,x_floor,x_floor_per_level,bits_per_window_item,levels"}, csv,
                  t_start);
        if (broken != 0) {
            std::fprintf(stderr, "%s: %" PRIu64 " answers broke the error promise\n", program_name().c_str(), broken);
            return 1;
        }
        return 0;
    }
    uint64_t w1 = sizes.front();
    for (uint64_t w : sizes)
        if (w == 1000000) w1 = w;
    const uint64_t k1 = 8;
    const uint64_t ops1 = given_or(opt.ops, opt, std::min<uint64_t>(w1, 20000), std::min<uint64_t>(w1, 1000000));
    Table t1({"structure", "bits/item", "insert ns", "query ns (mid)", "max rel error", "max abs error", "answers"}, 1);
    for (const uint32_t mode : {TF_RECENCY_WINDOW_HISTORICAL, TF_RECENCY_WINDOW_EXACT, TF_RECENCY_WINDOW_OPTIMAL_SM}) {
        const tf_recency_window_options o = options_for(mode, w1, k1, 0.0);
        const Result r = measure(o, opt, reps, ops1, failures);
        broken += r.promise_broken;
        t1.row({mode_name(mode), fmt("%.1f", r.bits_per_item), fmt("%.1f", r.insert_ns), fmt("%.1f", r.q_mid_ns),
                fmt("%.4f", r.max_rel), fmt("%.0f", r.max_abs), fmt_u(r.errors_checked)});
        csv.push_back("table1," + std::string(mode_name(mode)) + "," + fmt_u(w1) + "," + fmt("%.2f", r.bits_per_item) +
                      "," + fmt("%.2f", r.insert_ns) + "," + fmt("%.2f", r.q_mid_ns) + "," + fmt("%.5f", r.max_rel) +
                      "," + fmt("%.0f", r.max_abs));
    }
    std::printf("\n== Table 1, measured: W = %" PRIu64 ", eps = 1/8 (OptimalSM: block W/8) ==\n", w1);
    t1.print(stdout);
    print_csv({"#W,inv_eps,case,ns_per_op_median,x_floor,x_floor_per_level,bits_per_window_item,levels",
               "#table1,structure,W,bits_per_window_item,insert_ns,query_mid_ns,max_rel_error,max_abs_error"},
              csv, t_start);
    if (broken != 0) {
        std::fprintf(stderr, "%s: %" PRIu64 " answers broke the error promise\n", program_name().c_str(), broken);
        return 1;
    }
    return 0;
}
