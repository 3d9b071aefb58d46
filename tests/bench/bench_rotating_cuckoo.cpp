// Rotating cuckoo filter benchmark: add_if_absent (new keys and
// duplicates), contains (hit and miss) and their batch forms, ns/op, at
// 1e6 and 1e7 keys of 16 bytes, for four layouts side by side (1 slot per
// bucket, as the Time-Rotated Cache Filter README has it; 4 slots of 8
// bytes, the default; 8 slots, one 64-byte line; 4 slots with three
// ways), beside the exact baseline, std::unordered_set<uint64_t> of the
// same 64-bit fingerprints (the key's hash computed the same way), and the
// physical floor (one inline MurmurHash3 x64_128 of the key plus one random
// cache-line read from a buffer of the table's size), all in the same run,
// printed as ratios. Also bits per key once the table is filled to its
// configured occupancy, against 64 / occupancy.
//
// Goals (issue 13; reported, never asserted): contains within 2x of the
// floor per table probed (one table here), add_if_absent within 3x; batch
// calls at least 3x the exact baseline's speed at 1e7 keys; bits per key
// within 1.1x of 64 / occupancy.
//
// Method: per size N and layout, one filter of one table whose slots are
// the smallest power of two with occupancy x slots >= 1.1 N (no ttl, a
// memory cap far above it) receives N present keys; the timed cases read
// op streams over the present keys (hit), N absent keys (miss, never
// added) and a pool of fresh keys (add_if_absent new: 0.1 N keys over all
// rounds, so the table never rotates); batches are of 64 keys. The set
// holds the fingerprints of the same N present keys; its "add_if_absent"
// is insert() of fresh fingerprints. Each layout's cases run interleaved
// with the floor and the set cases (Bench: a warm-up, then `reps` rounds,
// median ns/op, thread CPU time).
#include <cinttypes>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench_util.hpp"
#include "temporalfilters.h"

using namespace tfbench;

namespace {

constexpr uint32_t kSeed = 17;
constexpr size_t kKeyLen = 16;
constexpr size_t kBatch = 64;

struct Layout {
    const char *name;
    uint32_t spb;
    uint32_t flags;
};
const Layout kLayouts[] = {{"1-slot", 1, 0}, {"4-slot", 4, 0}, {"8-slot", 8, 0}, {"3-way 4-slot", 4, 1}};

using Filter = Owned<tf_rotating_cuckoo, tf_rotating_cuckoo_free>;

uint64_t fp_of(const uint8_t *k) {
    const tf::Hash128 h = tf::key_hash(k, kKeyLen, kSeed);
    return h.h2 != 0 ? h.h2 : 1;
}

// Calls the batch function over `stream[first, first + count)` in batches.
template <class Fn>
void batched(const KeyArray &stream, size_t count, Fn &&fn) {
    const void *ptrs[kBatch];
    size_t lens[kBatch];
    int out[kBatch];
    for (size_t i = 0; i < kBatch; ++i) lens[i] = kKeyLen;
    for (size_t base = 0; base < count; base += kBatch) {
        const size_t n = std::min(kBatch, count - base);
        for (size_t i = 0; i < n; ++i) ptrs[i] = stream[base + i];
        fn(ptrs, lens, n, out);
        do_not_optimize(out[0]);
    }
}

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    int exit_code = 0;
    if (!start_benchmark(argc, argv,
                         "rotating cuckoo filter: add_if_absent and contains ns/op, 4 layouts, beside "
                         "std::unordered_set and the floor; bits per key",
                         "  --sizes sets the key counts (default 1M,10M; --quick 10k).\n", &opt, &exit_code))
        return exit_code;
    const uint64_t t_start = now_ns();
    const std::vector<uint64_t> sizes =
        sizes_or(opt, {10000}, {1000000, 10000000}, 1000, uint64_t(1) << 27, "key counts", "1000..2^27");
    const unsigned reps = unsigned(given_or(opt.reps, opt, 2, 3));
    std::printf("Rotating cuckoo filter benchmark%s: 16-byte keys, %u timed rounds (median ns/op), batches of %zu\n",
                opt.quick ? " (--quick smoke run)" : "", reps, kBatch);
    print_environment(stdout);
    std::vector<std::string> csv;
    std::atomic<uint64_t> failures{0};
    const auto check = [&](tf_status st) {
        if (st != TF_OK) failures++;
    };

    for (const uint64_t n : sizes) {
        const uint64_t ops = given_or(opt.ops, opt, n, std::min<uint64_t>(n, 2000000));
        const uint64_t fresh_per_run = std::max<uint64_t>(1, n / 10 / (reps + 1));
        const KeyArray present = make_distinct_keys(n, kKeyLen, opt.seed);
        const KeyArray absent = make_distinct_keys(n, kKeyLen, opt.seed + 1);
        const KeyArray fresh = make_distinct_keys(fresh_per_run * (reps + 1), kKeyLen, opt.seed + 2);
        const KeyArray hit_stream = make_stream(present, ops, opt.seed + 3);
        const KeyArray miss_stream = make_stream(absent, ops, opt.seed + 4);
        std::unordered_set<uint64_t> set;
        set.reserve(n);
        for (size_t i = 0; i < n; ++i) set.insert(fp_of(present[i]));
        std::printf("\n== %s keys (timed: %" PRIu64 " queries, %" PRIu64 " new keys per round) ==\n",
                    fmt_size(n).c_str(), ops, fresh_per_run);
        Table table({"layout", "case", "ns/op", "x floor", "x set", "goal"}, 2);
        for (const Layout &lay : kLayouts) {
            tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
            o.slots_per_bucket = lay.spb;
            o.flags = lay.flags;
            o.seed = kSeed;
            o.max_memory = uint64_t(1) << 40;
            o.max_tables = 4;
            {  // the layout's default occupancy
                tf_rotating_cuckoo *probe = nullptr;
                require_ok(tf_rotating_cuckoo_new(&o, &probe), "tf_rotating_cuckoo_new");
                tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
                require_ok(tf_rotating_cuckoo_get_info(probe, &info), "get_info");
                o.max_occupancy = info.max_occupancy;
                tf_rotating_cuckoo_free(probe);
            }
            uint64_t slots = 2 * uint64_t(lay.spb);
            while (o.max_occupancy * double(slots) < 1.1 * double(n)) slots *= 2;
            o.table_slots = slots;
            tf_rotating_cuckoo *raw = nullptr;
            require_ok(tf_rotating_cuckoo_new(&o, &raw), "tf_rotating_cuckoo_new");
            Filter f(raw);
            int was = 0;
            for (size_t i = 0; i < n; ++i)
                require_ok(tf_rotating_cuckoo_add_if_absent(f.get(), present[i], kKeyLen, 1, &was), "add_if_absent");
            FloorBuffer floor_buf(size_t(slots) * 8, opt.seed + 9);
            std::unordered_set<uint64_t> set_add;  // the set's inserts of fresh keys, per round
            Bench bench;
            const std::string L = lay.name;
            bench.add({"floor", "floor: inline murmur3 + 1 line", 1, ops, [&](unsigned, uint64_t) {
                           do_not_optimize(floor_pass(floor_buf, miss_stream, 0, ops, kSeed, FloorHash::inlined));
                       }});
            bench.add({"set_hit", "unordered_set: find, hit", 1, ops, [&](unsigned, uint64_t) {
                           size_t c = 0;
                           for (size_t i = 0; i < ops; ++i) c += set.count(fp_of(hit_stream[i]));
                           do_not_optimize(c);
                       }});
            bench.add({"set_miss", "unordered_set: find, miss", 1, ops, [&](unsigned, uint64_t) {
                           size_t c = 0;
                           for (size_t i = 0; i < ops; ++i) c += set.count(fp_of(miss_stream[i]));
                           do_not_optimize(c);
                       }});
            bench.add({"set_insert", "unordered_set: insert new", 1, fresh_per_run, [&](unsigned, uint64_t run) {
                           size_t c = 0;
                           for (size_t i = 0; i < fresh_per_run; ++i)
                               c += set.insert(fp_of(fresh[run * fresh_per_run + i])).second;
                           do_not_optimize(c);
                       }});
            bench.add({"contains_hit", L + ": contains, hit", 1, ops, [&](unsigned, uint64_t) {
                           int p = 0, c = 0;
                           for (size_t i = 0; i < ops; ++i) {
                               check(tf_rotating_cuckoo_contains(f.get(), hit_stream[i], kKeyLen, 1, &p));
                               c += p;
                           }
                           if (uint64_t(c) != ops) failures++;
                       }});
            bench.add({"contains_miss", L + ": contains, miss", 1, ops, [&](unsigned, uint64_t) {
                           int p = 0, c = 0;
                           for (size_t i = 0; i < ops; ++i) {
                               check(tf_rotating_cuckoo_contains(f.get(), miss_stream[i], kKeyLen, 1, &p));
                               c += p;
                           }
                           if (c != 0) failures++;
                       }});
            bench.add({"contains_batch_hit", L + ": contains_batch, hit", 1, ops, [&](unsigned, uint64_t) {
                           batched(hit_stream, ops, [&](const void *const *k, const size_t *l, size_t m, int *out) {
                               check(tf_rotating_cuckoo_contains_batch(f.get(), k, l, m, 1, out));
                           });
                       }});
            bench.add({"contains_batch_miss", L + ": contains_batch, miss", 1, ops, [&](unsigned, uint64_t) {
                           batched(miss_stream, ops, [&](const void *const *k, const size_t *l, size_t m, int *out) {
                               check(tf_rotating_cuckoo_contains_batch(f.get(), k, l, m, 1, out));
                           });
                       }});
            bench.add({"aia_dup", L + ": add_if_absent, duplicate", 1, ops, [&](unsigned, uint64_t) {
                           int w = 0;
                           for (size_t i = 0; i < ops; ++i)
                               check(tf_rotating_cuckoo_add_if_absent(f.get(), hit_stream[i], kKeyLen, 1, &w));
                       }});
            bench.add({"aia_batch_dup", L + ": add_if_absent_batch, duplicate", 1, ops, [&](unsigned, uint64_t) {
                           batched(hit_stream, ops, [&](const void *const *k, const size_t *l, size_t m, int *out) {
                               check(tf_rotating_cuckoo_add_if_absent_batch(f.get(), k, l, m, 1, out));
                           });
                       }});
            // New keys: even rounds single calls, odd rounds batches would
            // mix; both use their own half of each round's fresh keys.
            bench.add({"aia_new", L + ": add_if_absent, new", 1, fresh_per_run / 2, [&](unsigned, uint64_t run) {
                           int w = 0;
                           for (size_t i = 0; i < fresh_per_run / 2; ++i)
                               check(tf_rotating_cuckoo_add_if_absent(f.get(), fresh[run * fresh_per_run + i], kKeyLen,
                                                                      1, &w));
                       }});
            bench.add({"aia_batch_new", L + ": add_if_absent_batch, new", 1, fresh_per_run - fresh_per_run / 2,
                       [&](unsigned, uint64_t run) {
                           KeyArray part(fresh_per_run - fresh_per_run / 2, kKeyLen);
                           std::memcpy(part[0], fresh[run * fresh_per_run + fresh_per_run / 2], part.bytes());
                           batched(part, part.count(), [&](const void *const *k, const size_t *l, size_t m, int *out) {
                               check(tf_rotating_cuckoo_add_if_absent_batch(f.get(), k, l, m, 1, out));
                           });
                       }});
            run_cases(bench, fmt_size(n) + " " + L, reps, ops, "ops", failures);
            // set_insert grew the set: back to the present keys for the next layout
            for (size_t i = 0; i < fresh.count(); ++i) set.erase(fp_of(fresh[i]));

            // bits per key at the configured occupancy: fill the table to it
            tf_rotating_cuckoo_stats st = TF_ROTATING_CUCKOO_STATS_INIT;
            require_ok(tf_rotating_cuckoo_get_stats(f.get(), 1, &st), "get_stats");
            const uint64_t limit = uint64_t(o.max_occupancy * double(slots));
            const KeyArray filler = make_distinct_keys(limit > st.items ? limit - st.items : 0, kKeyLen, opt.seed + 5);
            for (size_t i = 0; i < filler.count(); ++i)
                require_ok(tf_rotating_cuckoo_add_if_absent(f.get(), filler[i], kKeyLen, 1, &was), "fill");
            require_ok(tf_rotating_cuckoo_get_stats(f.get(), 1, &st), "get_stats");
            const double bits = st.bits_per_item, ideal = 64.0 / o.max_occupancy;

            MedianTable m;
            for (const auto &c : bench.cases()) m.push_back({c->id, c->median_ns()});
            const double floor_ns = m.get("floor");
            const auto row = [&](const std::string &id, const char *set_id, const char *goal) {
                const double ns = m.get(id);
                const double xs = set_id ? m.get(set_id) / ns : NAN;  // > 1: faster than the set
                table.row({L, id, fmt("%.1f", ns), fmt("%.2f", ns / floor_ns),
                           set_id ? fmt("%.2f", xs) + "x faster" : "", goal});
                csv.push_back(fmt_u(n) + "," + L + "," + id + "," + fmt("%.2f", ns) + "," + fmt("%.3f", ns / floor_ns) +
                              "," + (set_id ? fmt("%.3f", xs) : "") + "," + fmt("%.2f", bits) + "," +
                              fmt("%.3f", o.max_occupancy));
            };
            row("contains_hit", "set_hit", "<= 2x floor");
            row("contains_miss", "set_miss", "<= 2x floor");
            row("contains_batch_hit", "set_hit", ">= 3x set at 1e7");
            row("contains_batch_miss", "set_miss", ">= 3x set at 1e7");
            row("aia_dup", "set_hit", "<= 3x floor");
            row("aia_batch_dup", "set_hit", ">= 3x set at 1e7");
            row("aia_new", "set_insert", "<= 3x floor");
            row("aia_batch_new", "set_insert", ">= 3x set at 1e7");
            table.row({L, "floor", fmt("%.1f", floor_ns), "1.00", "", ""});
            table.row({L, "set find hit / miss / insert",
                       fmt("%.1f", m.get("set_hit")) + " / " + fmt("%.1f", m.get("set_miss")) + " / " +
                           fmt("%.1f", m.get("set_insert")),
                       "", "", ""});
            table.row({L, "bits/key at occupancy " + fmt("%.2f", o.max_occupancy), fmt("%.2f", bits),
                       fmt("%.3f", bits / ideal) + " x 64/occ", fmt("tables %.0f", double(st.tables)), "<= 1.1x"});
            table.separator();
        }
        table.print(stdout);
    }
    print_csv({"#keys,layout,case,ns_per_op_median,x_floor,x_faster_than_set,bits_per_key_at_occupancy,occupancy"}, csv,
              t_start);
    return 0;
}
