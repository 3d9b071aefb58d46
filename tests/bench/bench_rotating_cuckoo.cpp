// Rotating cuckoo filter benchmark: add_if_absent (new keys and
// duplicates), contains (hit and miss) and their batch forms, ns/op, at
// 1e6 and 1e7 keys of 16 bytes, for four layouts side by side (1 slot per
// bucket, as the Time-Rotated Cache Filter README has it; 4 slots of 8
// bytes, the default; 8 slots, one 64-byte line; 4 slots with three
// ways), beside the exact baseline, std::unordered_set<uint64_t> of the
// same 64-bit fingerprints (the key's hash computed the same way), and the
// physical floor (one inline MurmurHash3 x64_128 of the key plus one random
// cache-line read from a buffer of the table's size), all in the same run,
// printed as ratios; beside it the floor of one probe, a hash and the two
// (three-way: three) random lines a probe reads, overlapping, which is
// what the memory traffic of a contains costs by itself; and the table's
// probe alone (the library's table class of the same shape and contents,
// probed by a bare loop, single and in prefetched groups of 16: no C call,
// no ring), which says how much of a call's time above the floor is the
// table's own and how much the filter's around it. Also bits per key once
// the table is filled to its configured occupancy, against 64 / occupancy.
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
//
// Two other modes measure fill and forgetting rather than speed:
//
// --load: where kick chains start failing. Per layout (1, 2, 4 or 8
// slots per bucket, two and three ways) and seed, one filter whose first
// table has --sizes slots (default 2^20), max_occupancy 1 and chains of 500
// kicks, a memory cap far above it, receives distinct random keys (random
// fingerprints) until the first insert whose kick chain fails (the filter
// starts a second table: kick_rotations becomes 1); the table's fill just
// before it is recorded. --reps seeds (default 5); mean and min per layout.
// RotatingCuckoo::default_occupancy is set a little below the minimum.
//
// --fn: false negatives against the memory cap. Per cap of n = 2, 4, 8
// and 16 tables' worth of the first table (--sizes slots, default 2^16; the
// default layout, no ttl), a stream of 8 H distinct keys, H = n x slots x
// occupancy being what the cap holds; at 256 checkpoints, one at a random
// place in each 256th of the stream's last 3 H, keys inserted a ago are
// probed for a = k x H (k from 0.25 to 4; 256 consecutive keys per k and
// checkpoint), and ages drawn uniformly from [0, H) (1024 per checkpoint).
// Reports the fraction forgotten per k, the uniform average, and the
// stats' counts by cause.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench_util.hpp"
#include "cuckoo/packed_table.hpp"
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

namespace {

// Key i of a stream: 16 bytes whose first 8 are a bijective mix of i, so
// distinct keys for distinct i, rebuilt from i when probed.
void stream_key(uint64_t i, uint64_t salt, uint8_t *out) {
    const uint64_t a = mix64(i ^ salt), b = mix64(a + 0x9e3779b97f4a7c15ULL);
    std::memcpy(out, &a, 8);
    std::memcpy(out + 8, &b, 8);
}

tf_rotating_cuckoo_stats stats_of(const tf_rotating_cuckoo *f) {
    tf_rotating_cuckoo_stats st = TF_ROTATING_CUCKOO_STATS_INIT;
    require_ok(tf_rotating_cuckoo_get_stats(f, 1, &st), "get_stats");
    return st;
}

// The memory of a new filter with options `o`, and its one table's share
// of it (from the stats' bits per item with one key in it).
void memory_of(const tf_rotating_cuckoo_options &o, size_t *total, size_t *table) {
    tf_rotating_cuckoo *raw = nullptr;
    require_ok(tf_rotating_cuckoo_new(&o, &raw), "tf_rotating_cuckoo_new");
    Filter f(raw);
    require_ok(tf_rotating_cuckoo_memory(f.get(), total), "memory");
    const uint8_t key[kKeyLen] = {1};
    require_ok(tf_rotating_cuckoo_add(f.get(), key, kKeyLen, 1), "add");
    const tf_rotating_cuckoo_stats st = stats_of(f.get());
    *table = size_t(std::llround(st.bits_per_item * double(st.items) / 8.0));
}

// --load: the fill at the first failed kick chain, per layout, over seeds.
int run_load(const Options &opt) {
    const std::vector<uint64_t> sizes =
        sizes_or(opt, {uint64_t(1) << 14}, {uint64_t(1) << 20}, 16, uint64_t(1) << 26, "table slots", "16..2^26");
    const unsigned seeds = unsigned(given_or(opt.reps, opt, 2, 5));
    std::printf(
        "Rotating cuckoo filter, --load: fill of one table at the first failed chain of 500 kicks, "
        "%u seeds\n",
        seeds);
    std::vector<std::string> csv;
    const uint64_t t_start = now_ns();
    for (const uint64_t slots : sizes) {
        std::printf("\n== table of %s slots ==\n", fmt_size(slots).c_str());
        Table table({"ways", "slots/bucket", "mean fill", "min fill", "max fill", "default occupancy"}, 1);
        for (const uint32_t flags : {0u, uint32_t(TF_ROTATING_CUCKOO_THREE_WAY)}) {
            for (const uint32_t spb : {1u, 2u, 4u, 8u}) {
                double sum = 0, lo = 2, hi = 0, def = 0;
                for (unsigned s = 0; s < seeds; ++s) {
                    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
                    o.table_slots = slots;
                    o.slots_per_bucket = spb;
                    o.flags = flags;
                    o.seed = uint32_t(opt.seed + s);
                    o.max_kicks = 500;
                    o.max_tables = 4;
                    o.max_memory = uint64_t(1) << 40;
                    {
                        tf_rotating_cuckoo_options d = o;
                        tf_rotating_cuckoo *raw = nullptr;
                        require_ok(tf_rotating_cuckoo_new(&d, &raw), "tf_rotating_cuckoo_new");
                        Filter df(raw);
                        tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
                        require_ok(tf_rotating_cuckoo_get_info(df.get(), &info), "get_info");
                        def = info.max_occupancy;
                    }
                    o.max_occupancy = 1.0;
                    tf_rotating_cuckoo *raw = nullptr;
                    require_ok(tf_rotating_cuckoo_new(&o, &raw), "tf_rotating_cuckoo_new");
                    Filter f(raw);
                    const uint64_t salt = mix64(opt.seed * 1000003 + s);
                    uint8_t key[kKeyLen];
                    uint64_t before = 0;  // items in the first table before the failing insert
                    for (uint64_t i = 0;; ++i) {
                        stream_key(i, salt, key);
                        require_ok(tf_rotating_cuckoo_add(f.get(), key, kKeyLen, 1), "add");
                        const tf_rotating_cuckoo_stats st = stats_of(f.get());
                        if (st.tables > 1) {
                            if (st.kick_rotations != 1 || st.fill_rotations != 0) {
                                std::fprintf(stderr, "--load: the first rotation was not a failed kick chain\n");
                                return 1;
                            }
                            before = st.items - 1;
                            break;
                        }
                    }
                    const double fill = double(before) / double(slots);
                    sum += fill;
                    lo = std::min(lo, fill);
                    hi = std::max(hi, fill);
                }
                const char *ways = flags ? "three" : "two";
                table.row(
                    {ways, fmt_u(spb), fmt("%.4f", sum / seeds), fmt("%.4f", lo), fmt("%.4f", hi), fmt("%.2f", def)});
                csv.push_back(fmt_u(slots) + "," + ways + "," + fmt_u(spb) + "," + fmt("%.5f", sum / seeds) + "," +
                              fmt("%.5f", lo) + "," + fmt("%.5f", hi) + "," + fmt("%.2f", def));
            }
        }
        table.print(stdout);
    }
    print_csv({"#table_slots,ways,slots_per_bucket,mean_fill,min_fill,max_fill,default_occupancy"}, csv, t_start);
    return 0;
}

// --fn: the fraction of keys forgotten against their age, per memory cap.
int run_fn(const Options &opt) {
    const std::vector<uint64_t> sizes =
        sizes_or(opt, {uint64_t(1) << 10}, {uint64_t(1) << 16}, 64, uint64_t(1) << 22, "table slots", "64..2^22");
    const std::vector<double> ks = {0.25, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9, 1.0, 1.5, 2.0, 4.0};
    const unsigned checkpoints = 256, per_k = 256, uniform = 1024;
    std::printf(
        "Rotating cuckoo filter, --fn: keys forgotten against their age, per memory cap (4 slots per "
        "bucket, two ways, no ttl)\n");
    std::vector<std::string> csv;
    const uint64_t t_start = now_ns();
    for (const uint64_t slots : sizes) {
        tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
        o.table_slots = slots;
        o.seed = uint32_t(opt.seed);
        o.max_tables = TF_ROTATING_CUCKOO_MAX_TABLES;
        o.max_memory = uint64_t(1) << 40;
        size_t m1 = 0, table_bytes = 0;
        memory_of(o, &m1, &table_bytes);
        const size_t fixed = m1 - table_bytes;
        std::printf("\n== first table %s slots (%zu bytes), fixed part %zu bytes; H = n x slots x occupancy ==\n",
                    fmt_size(slots).c_str(), table_bytes, fixed);
        std::vector<std::string> head = {"cap n", "H keys", "tables x slots at end"};
        for (double k : ks) head.push_back(fmt("a=%gH", k));
        head.push_back("uniform [0,H)");
        head.push_back("forgotten_memory");
        head.push_back("forgotten_age");
        head.push_back("kick_rotations");
        head.push_back("fill_rotations");
        Table table(head, 1);
        for (const uint64_t n : {2u, 4u, 8u, 16u}) {
            o.max_memory = fixed + n * table_bytes;
            tf_rotating_cuckoo *raw = nullptr;
            require_ok(tf_rotating_cuckoo_new(&o, &raw), "tf_rotating_cuckoo_new");
            Filter f(raw);
            tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
            require_ok(tf_rotating_cuckoo_get_info(f.get(), &info), "get_info");
            const uint64_t H = uint64_t(double(n * slots) * info.max_occupancy);
            const uint64_t total = 8 * H, first_cp = 5 * H;
            const uint64_t salt = mix64(opt.seed ^ (n << 32));
            std::vector<uint64_t> gone(ks.size(), 0);
            uint64_t gone_uniform = 0, probes_uniform = 0;
            Rng rng(opt.seed + n);
            uint8_t key[kKeyLen];
            const uint64_t step = (total - first_cp) / checkpoints;
            uint64_t next_cp = first_cp + rng.below(step);
            unsigned cp = 0;
            for (uint64_t i = 0; i < total; ++i) {
                stream_key(i, salt, key);
                int was = 0;
                require_ok(tf_rotating_cuckoo_add_if_absent(f.get(), key, kKeyLen, 1, &was), "add_if_absent");
                if (was != 0) {
                    std::fprintf(stderr, "--fn: a new key was reported present (a false positive)\n");
                    return 1;
                }
                if (i + 1 != next_cp || cp == checkpoints) continue;
                // i + 1 keys inserted: the key of age a (a >= 1) is key i + 1 - a
                for (size_t j = 0; j < ks.size(); ++j) {
                    const uint64_t a = std::max<uint64_t>(1, uint64_t(ks[j] * double(H)));
                    for (unsigned q = 0; q < per_k; ++q) {
                        stream_key(i + 1 - (a + q), salt, key);
                        int p = 0;
                        require_ok(tf_rotating_cuckoo_contains(f.get(), key, kKeyLen, 1, &p), "contains");
                        gone[j] += p == 0;
                    }
                }
                for (unsigned q = 0; q < uniform; ++q) {
                    stream_key(i - rng.below(H), salt, key);
                    int p = 0;
                    require_ok(tf_rotating_cuckoo_contains(f.get(), key, kKeyLen, 1, &p), "contains");
                    gone_uniform += p == 0;
                    probes_uniform++;
                }
                ++cp;
                next_cp = first_cp + cp * step + rng.below(step);  // a random phase against the rotations
            }
            const tf_rotating_cuckoo_stats st = stats_of(f.get());
            tf_rotating_cuckoo_table tb = TF_ROTATING_CUCKOO_TABLE_INIT;
            require_ok(tf_rotating_cuckoo_get_table(f.get(), 0, 1, &tb), "get_table");
            std::vector<std::string> row = {fmt_u(n), fmt_u(H), fmt_u(st.tables) + " x " + fmt_size(tb.slots)};
            std::string line =
                fmt_u(slots) + "," + fmt_u(n) + "," + fmt_u(H) + "," + fmt_u(st.tables) + "," + fmt_u(tb.slots);
            for (size_t j = 0; j < ks.size(); ++j) {
                const double frac = double(gone[j]) / double(uint64_t(checkpoints) * per_k);
                row.push_back(fmt("%.3f", frac));
                line += "," + fmt("%.4f", frac);
            }
            const double fu = double(gone_uniform) / double(probes_uniform);
            row.push_back(fmt("%.3f", fu));
            row.push_back(fmt_u(st.forgotten_memory));
            row.push_back(fmt_u(st.forgotten_age));
            row.push_back(fmt_u(st.kick_rotations));
            row.push_back(fmt_u(st.fill_rotations));
            line += "," + fmt("%.4f", fu) + "," + fmt_u(st.forgotten_memory) + "," + fmt_u(st.forgotten_age) + "," +
                    fmt_u(st.kick_rotations) + "," + fmt_u(st.fill_rotations);
            table.row(row);
            csv.push_back(line);
        }
        table.print(stdout);
    }
    print_csv({"#first_table_slots,cap_tables,H,tables_at_end,newest_table_slots,forgotten_at_0.25H,0.5H,0.6H,0.7H,"
               "0.75H,0.8H,0.9H,1H,1.5H,2H,4H,forgotten_uniform_0_H,forgotten_memory,forgotten_age,kick_rotations,"
               "fill_rotations"},
              csv, t_start);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    int exit_code = 0;
    // --load and --fn select a mode; the other arguments are the shared ones.
    bool load = false, fn = false;
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (i > 0 && std::strcmp(argv[i], "--load") == 0)
            load = true;
        else if (i > 0 && std::strcmp(argv[i], "--fn") == 0)
            fn = true;
        else
            args.push_back(argv[i]);
    }
    if (!start_benchmark(int(args.size()), args.data(),
                         "rotating cuckoo filter: add_if_absent and contains ns/op, 4 layouts, beside "
                         "std::unordered_set and the floor; bits per key",
                         "  --sizes sets the key counts (default 1M,10M; --quick 10k).\n"
                         "  --load: the fill at the first failed chain of 500 kicks per layout; --sizes sets the\n"
                         "          table's slots (default 2^20), --reps the number of seeds (default 5).\n"
                         "  --fn:   the fraction of keys forgotten against their age for memory caps of 2, 4, 8\n"
                         "          and 16 tables' worth; --sizes sets the first table's slots (default 2^16).\n",
                         &opt, &exit_code))
        return exit_code;
    if (load && fn) {
        std::fprintf(stderr, "%s: --load and --fn are separate runs\n", program_name().c_str());
        return 1;
    }
    if (load) return run_load(opt);
    if (fn) return run_fn(opt);
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
            // The table's probe alone: the library's own table class
            // (lib/cuckoo/packed_table.hpp) of the same shape, holding the
            // same fingerprints, probed by a loop with nothing around it
            // (no C call, no ring, no clamp of the time): how close a
            // contains could come to the floor on this machine if the
            // filter added nothing to its table.
            const unsigned ways = lay.flags != 0 ? 3 : 2;
            tf::cuckoo::CuckooTable<64> bare(slots, lay.spb, ways);
            std::vector<uint64_t> kick_path(o.max_kicks);  // the filter's own chain limit
            {
                for (size_t i = 0; i < n; ++i) {
                    const tf::Hash128 h = tf::key_hash(present[i], kKeyLen, kSeed);
                    if (!bare.insert(bare.bucket_of(h.h1), bare.fingerprint(h.h2), unsigned(kick_path.size()),
                                     kick_path.data()))
                        break;  // a failed chain: the probe still measures the table it has
                }
            }
            FloorBuffer floor_buf(size_t(slots) * 8, opt.seed + 9);
            std::unordered_set<uint64_t> set_add;  // the set's inserts of fresh keys, per round
            Bench bench;
            bench.set_clock(BenchClock::thread_cpu);  // a shared machine: time waiting for a CPU is not counted
            const std::string L = lay.name;
            bench.add({"floor", "floor: inline murmur3 + 1 line", 1, ops, [&](unsigned, uint64_t) {
                           do_not_optimize(floor_pass(floor_buf, miss_stream, 0, ops, kSeed, FloorHash::inlined));
                       }});
            // The memory traffic of one probe alone: a hash and the `ways`
            // random lines of its candidate buckets, overlapping.
            bench.add({"floor_probe", "floor: inline murmur3 + " + std::to_string(ways) + " lines", 1, ops,
                       [&](unsigned, uint64_t) {
                           do_not_optimize(floor_pass_lines(floor_buf, miss_stream, 0, ops, kSeed, ways));
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
            bench.add({"table_hit", L + ": the table's probe alone, hit", 1, ops, [&](unsigned, uint64_t) {
                           size_t c = 0;
                           for (size_t i = 0; i < ops; ++i) {
                               const tf::Hash128 h = tf::key_hash(hit_stream[i], kKeyLen, kSeed);
                               c += bare.contains(bare.bucket_of(h.h1), bare.fingerprint(h.h2));
                           }
                           do_not_optimize(c);
                       }});
            bench.add({"table_batch_hit", L + ": the table's probe alone, groups of 16 prefetched, hit", 1, ops,
                       [&](unsigned, uint64_t) {
                           constexpr size_t kGroup = 16;
                           size_t c = 0;
                           for (size_t base = 0; base < ops; base += kGroup) {
                               const size_t g = std::min(kGroup, size_t(ops) - base);
                               uint64_t b[kGroup], fp[kGroup];
                               for (size_t j = 0; j < g; ++j) {
                                   const tf::Hash128 h = tf::key_hash(hit_stream[base + j], kKeyLen, kSeed);
                                   b[j] = bare.bucket_of(h.h1);
                                   fp[j] = bare.fingerprint(h.h2);
                                   bare.prefetch(b[j], fp[j]);
                               }
                               for (size_t j = 0; j < g; ++j) c += bare.contains(b[j], fp[j]);
                           }
                           do_not_optimize(c);
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
            bench.add({"table_aia_new", L + ": the table alone, contains then insert, new", 1, fresh_per_run / 2,
                       [&](unsigned, uint64_t run) {
                           size_t c = 0;
                           for (size_t i = 0; i < fresh_per_run / 2; ++i) {
                               const tf::Hash128 h = tf::key_hash(fresh[run * fresh_per_run + i], kKeyLen, kSeed);
                               const uint64_t b = bare.bucket_of(h.h1), fp = bare.fingerprint(h.h2);
                               if (!bare.contains(b, fp))
                                   c += bare.insert(b, fp, unsigned(kick_path.size()), kick_path.data());
                           }
                           do_not_optimize(c);
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
            row("table_hit", "set_hit", "(the table alone)");
            row("table_batch_hit", "set_hit", "(the table alone)");
            row("table_aia_new", "set_insert", "(the table alone)");
            table.row({L, "floor", fmt("%.1f", floor_ns), "1.00", "", ""});
            table.row({L, "floor of a probe (" + std::to_string(ways) + " lines)", fmt("%.1f", m.get("floor_probe")),
                       fmt("%.2f", m.get("floor_probe") / floor_ns), "", ""});
            csv.push_back(fmt_u(n) + "," + L + ",floor_probe," + fmt("%.2f", m.get("floor_probe")) + "," +
                          fmt("%.3f", m.get("floor_probe") / floor_ns) + ",," + fmt("%.2f", bits) + "," +
                          fmt("%.3f", o.max_occupancy));
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
