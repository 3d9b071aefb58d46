// Shared helpers for the benchmarks in tests/bench.
//
// Every benchmark of this library follows the same recipe (TESTING.md,
// "Benchmarks"; docs/performance.md): measure the structure, an exact baseline and the
// physical floor (one MurmurHash3 of the key plus one random cache-line read)
// in the same run, and report the result as ratios rather than as absolute
// machine-dependent times. This header holds the parts that do not depend on
// the structure:
//
//   Options / parse_options     the common command line (--quick, --ops, --reps,
//                               --seed, --sizes, --pages)
//   Rng, mix64                  a fixed-seed generator (SplitMix64)
//   KeyArray, make_distinct_keys, make_stream
//                               distinct random keys and the op stream visiting
//                               them in random order
//   do_not_optimize, now_ns, median
//   run_threads                 run a body on N threads that start together;
//                               wall time plus each thread's own time
//   Bench / Case                interleaved repetitions with a warm-up, median
//                               ns/op per case (wall clock, or per-thread CPU
//                               time for single-threaded cases)
//   FloorBuffer, floor_pass     the physical floor, with the packaged
//                               lmmh_x64_128 and the inline tf::murmur3_x64_128
//   floor_pass_lines            the floor of a structure that reads N lines
//   floor_pass_dependent        the latency floor: floor_pass with each read's
//                               line depending on the previous read
//   heap_in_use, CountingAllocator
//                               bytes per key of the exact baselines
//   Table, print_environment    output helpers
//   start_benchmark, given_or   the start of a main: options, --help, defaults
//   run_cases, print_csv        a round of cases (a failed call ends it), the
//                               CSV block and the total time at the end
//   require_ok, Owned           calls into the library: exit with its message
//                               on failure; handles freed at scope exit
//
// It is header-only (everything inline) so that each benchmark stays a
// single translation unit. It needs the lib/ include directory (for
// common/hash.hpp) and libmurmurhash.
#ifndef TF_TESTS_BENCH_UTIL_HPP
#define TF_TESTS_BENCH_UTIL_HPP

#include <murmurhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "common/hash.hpp"
#include "common/memory.hpp"
#include "temporalfilters/common.h"

namespace tfbench {

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

struct Options {
    bool quick = false;           // fast smoke run (CI): small sizes, few ops
    uint64_t ops = 0;             // ops per thread per timed run; 0 = benchmark default
    unsigned reps = 0;            // timed repetitions; 0 = benchmark default
    uint64_t seed = 0x7f4a7c15u;  // seed of every generated key set
    std::vector<uint64_t> sizes;  // structure sizes (cells, slots...); empty = default
    bool small_pages = false;     // --pages 4k: no transparent huge pages in this process
    bool help = false;
};

// --pages 4k: transparent huge pages off for the whole process
// (prctl(PR_SET_THP_DISABLE)), so that the library's tables of 4 MiB and
// more, which it maps on 2 MiB pages (common/memory.hpp), and the floor's
// buffer, allocated the same way, both take 4 KiB pages: the same
// structures beside the same floor, with every access paying the TLB's
// price. False (with errno set) where the kernel refuses or is not Linux.
inline bool disable_huge_pages() {
#if defined(__linux__) && defined(PR_SET_THP_DISABLE)
    return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0;
#else
    return false;
#endif
}

// The anonymous memory of this process on transparent huge pages, in bytes
// (/proc/self/smaps_rollup's AnonHugePages), or -1 where it cannot be read.
inline long long huge_page_bytes() {
    FILE *f = std::fopen("/proc/self/smaps_rollup", "r");
    if (f == nullptr) return -1;
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr)
        if (std::sscanf(line, "AnonHugePages: %lld kB", &kib) == 1) break;
    std::fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

// Parses "123", "64Ki", "16Mi", "2Gi", "10k", "4M" (k/M/G are powers of
// 1000, Ki/Mi/Gi powers of 1024). Returns false on anything else.
inline bool parse_count(const char *s, uint64_t *out) {
    if (s == nullptr || *s < '0' || *s > '9') return false;
    char *end = nullptr;
    unsigned long long v = std::strtoull(s, &end, 10);
    uint64_t mult = 1;
    std::string suffix(end);
    if (suffix.empty())
        mult = 1;
    else if (suffix == "k" || suffix == "K")
        mult = 1000ull;
    else if (suffix == "M")
        mult = 1000000ull;
    else if (suffix == "G")
        mult = 1000000000ull;
    else if (suffix == "Ki")
        mult = 1ull << 10;
    else if (suffix == "Mi")
        mult = 1ull << 20;
    else if (suffix == "Gi")
        mult = 1ull << 30;
    else
        return false;
    if (v > UINT64_MAX / mult) return false;
    *out = uint64_t(v) * mult;
    return true;
}

inline void print_usage(const char *prog, const char *what, FILE *f = stdout) {
    std::fprintf(f,
                 "usage: %s [--quick] [--ops N] [--reps N] [--seed N] [--sizes A,B,...] [--pages 4k|2m]\n"
                 "  %s\n"
                 "  --quick        smoke run: small sizes, few ops (a few seconds)\n"
                 "  --ops N        operations per thread per timed run (suffixes k, M, Ki, Mi)\n"
                 "  --reps N       timed repetitions per case (the median is reported; >= 1)\n"
                 "  --seed N       seed of the generated keys (default fixed)\n"
                 "  --sizes A,B    structure sizes to measure, replacing the defaults\n"
                 "  --pages 4k|2m  4k: no transparent huge pages in this process (structures and floors\n"
                 "                 on 4 KiB pages); 2m (default): tables of 4 MiB and more on 2 MiB pages\n"
                 "The program reports; it never fails on speed. Exit status 1 means a\n"
                 "library call failed or an argument was wrong.\n",
                 prog, what);
}

// Returns false (with a message in *err) on an unknown or malformed argument.
// The benchmark's name in its messages (parse_options sets it from argv[0]).
inline std::string &program_name() {
    static std::string name = "bench";
    return name;
}

inline bool parse_options(int argc, char **argv, Options *o, std::string *err) {
    if (argc > 0) {
        const char *slash = std::strrchr(argv[0], '/');
        program_name() = slash ? slash + 1 : argv[0];
    }
    auto bad = [err](const std::string &why) {
        *err = why;
        return false;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](uint64_t *v) {
            if (i + 1 >= argc || !parse_count(argv[i + 1], v)) return bad("option " + a + " needs a number");
            ++i;
            return true;
        };
        uint64_t v = 0;
        if (a == "--quick") {
            o->quick = true;
        } else if (a == "--help" || a == "-h") {
            o->help = true;
        } else if (a == "--ops") {
            if (!value(&v)) return false;
            if (v == 0) return bad("--ops must be >= 1");
            o->ops = v;
        } else if (a == "--reps") {
            if (!value(&v)) return false;
            if (v == 0 || v > 1000) return bad("--reps must be in 1..1000");
            o->reps = unsigned(v);
        } else if (a == "--seed") {
            if (!value(&v)) return false;
            o->seed = v;
        } else if (a == "--pages") {
            if (i + 1 >= argc) return bad("--pages needs 4k or 2m");
            const std::string p = argv[++i];
            if (p == "4k")
                o->small_pages = true;
            else if (p == "2m")
                o->small_pages = false;
            else
                return bad("--pages takes 4k or 2m, not '" + p + "'");
        } else if (a == "--sizes") {
            if (i + 1 >= argc) return bad("--sizes needs a list");
            std::string list = argv[++i];
            o->sizes.clear();
            size_t pos = 0;
            while (pos <= list.size()) {
                size_t comma = list.find(',', pos);
                if (comma == std::string::npos) comma = list.size();
                std::string item = list.substr(pos, comma - pos);
                if (!parse_count(item.c_str(), &v) || v == 0) return bad("bad size '" + item + "' in --sizes");
                o->sizes.push_back(v);
                pos = comma + 1;
            }
        } else {
            return bad("unknown argument '" + a + "'");
        }
    }
    return true;
}

// The start of a benchmark's main: parses the command line. Returns false
// when main must return *exit_code at once: 1 after the usage on stderr (a
// bad argument), 0 after the usage and `more` (may be NULL) on stdout
// (--help). `what` says what the benchmark measures.
inline bool start_benchmark(int argc, char **argv, const char *what, const char *more, Options *opt, int *exit_code) {
    std::string err;
    if (!parse_options(argc, argv, opt, &err)) {
        std::fprintf(stderr, "%s: %s\n", program_name().c_str(), err.c_str());
        print_usage(argv[0], what, stderr);
        *exit_code = 1;
        return false;
    }
    if (opt->help) {
        print_usage(argv[0], what);
        if (more) std::printf("%s", more);
        *exit_code = 0;
        return false;
    }
    if (opt->small_pages && !disable_huge_pages()) {
        std::fprintf(stderr, "%s: --pages 4k: prctl(PR_SET_THP_DISABLE) failed: %s\n", program_name().c_str(),
                     std::strerror(errno));
        *exit_code = 1;
        return false;
    }
    return true;
}

// The sizes to measure: the command line's, else the defaults of a --quick
// run or a full one. A size outside [lo, hi] ends the benchmark with a
// message that names the sizes `what` and their range `range`.
inline std::vector<uint64_t> sizes_or(const Options &opt, std::vector<uint64_t> quick, std::vector<uint64_t> full,
                                      uint64_t lo, uint64_t hi, const char *what, const char *range) {
    std::vector<uint64_t> sizes = opt.sizes.empty() ? (opt.quick ? quick : full) : opt.sizes;
    for (uint64_t s : sizes)
        if (s < lo || s > hi) {
            std::fprintf(stderr, "%s: %s must be in %s\n", program_name().c_str(), what, range);
            std::exit(1);
        }
    return sizes;
}

// A count the command line gave (non-zero), else the benchmark's default
// for a --quick run or a full one.
inline uint64_t given_or(uint64_t given, const Options &opt, uint64_t quick, uint64_t full) {
    return given ? given : (opt.quick ? quick : full);
}

// ---------------------------------------------------------------------------
// Random numbers and keys
// ---------------------------------------------------------------------------

// The SplitMix64 finalizer: a bijection on 64-bit values.
inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

// SplitMix64: small, fast and fully determined by its seed.
class Rng {
   public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next() { return mix64(s_ += 0x9e3779b97f4a7c15ULL); }
    // Uniform in [0, n) (multiply-shift; the bias is below 2^-40 for the
    // sizes used here).
    uint64_t below(uint64_t n) { return tf::reduce(next(), n); }
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

   private:
    uint64_t s_;
};

// `count` keys of `len` bytes each, stored back to back.
class KeyArray {
   public:
    KeyArray() = default;
    KeyArray(size_t count, size_t len) : bytes_(count * len), count_(count), len_(len) {}
    size_t count() const { return count_; }
    size_t len() const { return len_; }
    size_t bytes() const { return bytes_.size(); }
    const uint8_t *operator[](size_t i) const { return bytes_.data() + i * len_; }
    uint8_t *operator[](size_t i) { return bytes_.data() + i * len_; }
    const uint8_t *data() const { return bytes_.data(); }

   private:
    std::vector<uint8_t> bytes_;
    size_t count_ = 0;
    size_t len_ = 0;
};

// `count` distinct random keys of `len` >= 8 bytes. The first 8 bytes are a
// bijective mix of (index, seed), which makes the keys distinct by
// construction; the rest are random. All bytes look uniformly random.
inline KeyArray make_distinct_keys(size_t count, size_t len, uint64_t seed) {
    if (len < 8) len = 8;
    KeyArray k(count, len);
    Rng rng(seed ^ 0x243f6a8885a308d3ULL);
    const uint64_t salt = mix64(seed);
    for (size_t i = 0; i < count; ++i) {
        uint8_t *p = k[i];
        uint64_t head = mix64(uint64_t(i) ^ salt);
        std::memcpy(p, &head, 8);
        for (size_t off = 8; off < len; off += 8) {
            uint64_t r = rng.next();
            std::memcpy(p + off, &r, std::min<size_t>(8, len - off));
        }
    }
    return k;
}

// The op stream: `ops` keys copied back to back from `keys`, as successive
// random permutations of the whole key set (every key is visited once per
// pass, in a fresh random order each pass). The stream is read
// sequentially, so fetching the next key costs next to nothing and the
// measured time is the structure's own; the key set may be far larger than
// the caches.
inline KeyArray make_stream(const KeyArray &keys, size_t ops, uint64_t seed) {
    KeyArray s(ops, keys.len());
    const size_t n = keys.count();
    if (n == 0) return s;
    std::vector<uint32_t> perm(n);
    for (size_t i = 0; i < n; ++i) perm[i] = uint32_t(i);
    Rng rng(seed ^ 0x13198a2e03707344ULL);
    size_t out = 0;
    while (out < ops) {
        for (size_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
        for (size_t i = 0; i < n && out < ops; ++i, ++out) std::memcpy(s[out], keys[perm[i]], keys.len());
    }
    return s;
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

// Makes the compiler believe `v` is used, so that the work producing it
// cannot be removed.
template <class T>
inline void do_not_optimize(const T &v) {
    asm volatile("" : : "r,m"(v) : "memory");
}

inline uint64_t now_ns() {
    return uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

// CPU time consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID): unlike
// the wall clock it does not count the time the thread waited for a CPU,
// which on a shared machine can dominate the spread of the results.
inline uint64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct ThreadTimes {
    double wall_ns = 0;             // first start to last end
    std::vector<double> thread_ns;  // each thread's own start to end
};

// Runs body(t) for t in [0, threads). One thread runs on the caller; more
// threads are created first and released together by a flag, so creation
// is not timed.
template <class Body>
inline ThreadTimes run_threads(unsigned threads, Body &&body) {
    ThreadTimes r;
    r.thread_ns.assign(threads, 0.0);
    if (threads <= 1) {
        const uint64_t t0 = now_ns();
        body(0u);
        const uint64_t t1 = now_ns();
        r.wall_ns = r.thread_ns[0] = double(t1 - t0);
        return r;
    }
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::vector<uint64_t> start(threads), end(threads);
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            start[t] = now_ns();
            body(t);
            end[t] = now_ns();
        });
    }
    while (ready.load() != threads) std::this_thread::yield();
    go.store(true, std::memory_order_release);
    for (auto &th : pool) th.join();
    const uint64_t first = *std::min_element(start.begin(), start.end());
    const uint64_t last = *std::max_element(end.begin(), end.end());
    r.wall_ns = double(last - first);
    for (unsigned t = 0; t < threads; ++t) r.thread_ns[t] = double(end[t] - start[t]);
    return r;
}

// One measured case: `body(thread, run)` performs `ops_per_thread`
// operations on thread `thread`; `run` counts the calls (0 is the warm-up)
// so that timestamps can keep increasing from run to run.
struct Case {
    using Body = std::function<void(unsigned thread, uint64_t run)>;
    Case(std::string id_, std::string label_, unsigned threads_, uint64_t ops_per_thread_, Body body_)
        : id(std::move(id_)),
          label(std::move(label_)),
          threads(std::max(1u, threads_)),
          ops_per_thread(std::max<uint64_t>(1, ops_per_thread_)),
          body(std::move(body_)) {}

    std::string id;     // short machine-readable name, e.g. "update_standard_1t"
    std::string label;  // human-readable name
    unsigned threads;
    uint64_t ops_per_thread;
    Body body;

    // Filled by Bench::run.
    std::vector<double> ns_per_op;                      // per timed run: wall / total ops
    std::vector<std::vector<double>> thread_ns_per_op;  // [thread][run]: own time / own ops

    uint64_t total_ops() const { return ops_per_thread * threads; }
    double median_ns() const { return median(ns_per_op); }
    double min_ns() const { return ns_per_op.empty() ? 0 : *std::min_element(ns_per_op.begin(), ns_per_op.end()); }
    double max_ns() const { return ns_per_op.empty() ? 0 : *std::max_element(ns_per_op.begin(), ns_per_op.end()); }
    double median_thread_ns(unsigned t) const { return median(thread_ns_per_op.at(t)); }
};

// How Bench times a run.
enum class BenchClock {
    wall,        // steady_clock from the first thread's start to the last one's end (default)
    thread_cpu,  // single-threaded cases only: the thread's CPU time (thread_cpu_ns);
                 // cases with more threads still use the wall clock
};

// Runs every case once untimed (warm-up: caches, page faults, first
// inserts), then `reps` rounds in which every case runs once, in order.
// Interleaving the cases spreads the machine's noise over all of them, which
// keeps the ratios between cases stable even when absolute times drift.
class Bench {
   public:
    void set_clock(BenchClock c) { clock_ = c; }
    BenchClock clock() const { return clock_; }
    Case &add(Case c) {
        cases_.push_back(std::make_unique<Case>(std::move(c)));
        return *cases_.back();
    }
    void run(unsigned reps, FILE *progress = stderr) {
        for (unsigned round = 0; round <= reps; ++round) {
            if (progress) {
                if (round == 0)
                    std::fprintf(progress, "  warm-up...\n");
                else
                    std::fprintf(progress, "  round %u/%u...\n", round, reps);
                std::fflush(progress);
            }
            for (auto &c : cases_) {
                Case &k = *c;
                ThreadTimes t;
                if (clock_ == BenchClock::thread_cpu && k.threads == 1) {
                    const uint64_t t0 = thread_cpu_ns();
                    k.body(0u, round);
                    t.wall_ns = double(thread_cpu_ns() - t0);
                    t.thread_ns.assign(1, t.wall_ns);
                } else {
                    t = run_threads(k.threads, [&](unsigned th) { k.body(th, round); });
                }
                if (round == 0) {
                    k.thread_ns_per_op.assign(k.threads, {});
                    continue;
                }
                k.ns_per_op.push_back(t.wall_ns / double(k.total_ops()));
                for (unsigned th = 0; th < k.threads; ++th)
                    k.thread_ns_per_op[th].push_back(t.thread_ns[th] / double(k.ops_per_thread));
            }
        }
    }
    const Case *find(const std::string &id) const {
        for (auto &c : cases_)
            if (c->id == id) return c.get();
        return nullptr;
    }
    const std::vector<std::unique_ptr<Case>> &cases() const { return cases_; }

   private:
    std::vector<std::unique_ptr<Case>> cases_;
    BenchClock clock_ = BenchClock::wall;
};

// ---------------------------------------------------------------------------
// The physical floor: one MurmurHash3 x64_128 of the key, one random
// cache-line read from a buffer of the structure's size.
// ---------------------------------------------------------------------------

// A buffer of `bytes` (rounded up to whole lines), allocated exactly as
// the library allocates its tables (tf::ZeroedBlock: 64-byte aligned, huge
// pages for large tables), every page written with random non-zero words,
// so that reads hit real memory rather than the kernel's shared zero page.
class FloorBuffer {
   public:
    explicit FloorBuffer(size_t bytes, uint64_t seed = 1)
        : lines_(std::max<size_t>(1, (bytes + 63) / 64)), block_(lines_ * 64) {
        words_ = static_cast<uint64_t *>(block_.data());
        Rng rng(seed);
        for (size_t i = 0; i < lines_ * 8; ++i) words_[i] = rng.next() | 1;
    }
    size_t lines() const { return lines_; }
    size_t bytes() const { return lines_ * 64; }
    const uint64_t *line(size_t i) const { return words_ + i * 8; }

   private:
    size_t lines_ = 0;
    tf::ZeroedBlock block_;
    uint64_t *words_ = nullptr;
};

enum class FloorHash {
    packaged,  // lmmh_x64_128 from libmurmurhash (a call into a shared library)
    inlined,   // tf::murmur3_x64_128, the header-inline copy the library uses
};

inline const char *floor_hash_name(FloorHash h) {
    return h == FloorHash::packaged ? "lmmh_x64_128" : "tf::murmur3 inline";
}

// One floor operation per key of `stream` in [first, first + count): hash,
// pick a line from the hash's high word, read one word of it. Returns the
// folded reads (the caller passes it to do_not_optimize).
inline uint64_t floor_pass(const FloorBuffer &buf, const KeyArray &stream, size_t first, size_t count, uint32_t seed,
                           FloorHash which) {
    const size_t len = stream.len();
    const uint8_t *p = stream[first];
    const uint64_t lines = buf.lines();
    uint64_t sink = 0;
    if (which == FloorHash::packaged) {
        for (size_t i = 0; i < count; ++i, p += len) {
            uint64_t h[2];
            lmmh_x64_128(p, unsigned(len), seed, h);
            sink += buf.line(tf::reduce(h[0], lines))[0] ^ h[1];
        }
    } else {
        for (size_t i = 0; i < count; ++i, p += len) {
            const tf::Hash128 h = tf::murmur3_x64_128(p, len, seed);
            sink += buf.line(tf::reduce(h.h1, lines))[0] ^ h.h2;
        }
    }
    return sink;
}

// The floor of a structure that reads `lines` cache lines per key: one
// inline MurmurHash3 x64_128 of the key, then `lines` random line reads at
// indices derived from the hash by double hashing (tf::IndexSequence). The
// reads do not depend on one another and no branch decides between them, so
// the processor can overlap them: this is the cost of the memory traffic
// alone. With lines = 1 it reads a line chosen like floor_pass's, not the
// same one.
inline uint64_t floor_pass_lines(const FloorBuffer &buf, const KeyArray &stream, size_t first, size_t count,
                                 uint32_t seed, unsigned lines) {
    const size_t len = stream.len();
    const uint8_t *p = stream[first];
    const uint64_t n = buf.lines();
    uint64_t sink = 0;
    for (size_t i = 0; i < count; ++i, p += len) {
        tf::IndexSequence s(tf::murmur3_x64_128(p, len, seed));
        for (unsigned j = 0; j < lines; ++j) sink += buf.line(s.next(n))[0];
    }
    return sink;
}

// The LATENCY floor of a single call: floor_pass's operation (one inline
// MurmurHash3 x64_128 of the key, one random line of `buf`), but each
// operation's line index also depends on the word the previous operation
// read (through a zero the compiler cannot see), so the reads form a chain,
// as in a pointer chase: a miss cannot start before the previous one has
// ended, and the time per operation is one full memory latency plus the
// hash. floor_pass instead lets the processor overlap the independent
// misses of consecutive operations, which a batch call can do and a single
// call that waits for its own line cannot. The hashes do not depend on the
// reads and may still overlap them, as the next call's hash may in a
// program. Returns the folded reads (for do_not_optimize).
inline uint64_t floor_pass_dependent(const FloorBuffer &buf, const KeyArray &stream, size_t first, size_t count,
                                     uint32_t seed) {
    const size_t len = stream.len();
    const uint8_t *p = stream[first];
    const uint64_t lines = buf.lines();
    uint64_t zero = 0;
    asm volatile("" : "+r"(zero));  // 0, unknown to the compiler: the chain below stays a chain
    uint64_t w = 0, sink = 0;
    for (size_t i = 0; i < count; ++i, p += len) {
        const tf::Hash128 h = tf::murmur3_x64_128(p, len, seed);
        w = buf.line(tf::reduce(h.h1 ^ (w & zero), lines))[0];
        sink += w ^ h.h2;
    }
    return sink;
}

// ---------------------------------------------------------------------------
// Memory of the exact baselines
// ---------------------------------------------------------------------------

// Bytes the C heap holds for the program (glibc mallinfo2: small blocks in
// use plus mmapped blocks, malloc's own headers included), or -1 when it
// cannot be measured (another libc, or a sanitizer's allocator, which glibc
// does not see: the difference of two readings is then 0).
inline long long heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    return (long long)(mi.uordblks + mi.hblkhd);
#else
    return -1;
#endif
}

// Allocation totals of a CountingAllocator (requested bytes, no malloc
// overhead).
struct AllocCounter {
    size_t live_bytes = 0;
    size_t peak_bytes = 0;
    size_t allocations = 0;
};

// A std::allocator that adds every request to an AllocCounter, for a
// container's exact requested memory (nodes, bucket arrays...).
template <class T>
class CountingAllocator {
   public:
    using value_type = T;
    explicit CountingAllocator(AllocCounter *c) noexcept : c_(c) {}
    template <class U>
    CountingAllocator(const CountingAllocator<U> &o) noexcept : c_(o.counter()) {}
    T *allocate(size_t n) {
        T *p = std::allocator<T>().allocate(n);
        c_->live_bytes += n * sizeof(T);
        c_->peak_bytes = std::max(c_->peak_bytes, c_->live_bytes);
        ++c_->allocations;
        return p;
    }
    void deallocate(T *p, size_t n) noexcept {
        std::allocator<T>().deallocate(p, n);
        c_->live_bytes -= n * sizeof(T);
    }
    AllocCounter *counter() const noexcept { return c_; }
    template <class U>
    bool operator==(const CountingAllocator<U> &o) const noexcept {
        return c_ == o.counter();
    }
    template <class U>
    bool operator!=(const CountingAllocator<U> &o) const noexcept {
        return c_ != o.counter();
    }

   private:
    AllocCounter *c_;
};

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

inline std::string fmt(const char *f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

inline std::string fmt_u(uint64_t v) { return std::to_string(v); }

// "64Ki", "16Mi", or the plain number.
inline std::string fmt_size(uint64_t v) {
    if (v >= (1ull << 30) && v % (1ull << 30) == 0) return std::to_string(v >> 30) + "Gi";
    if (v >= (1ull << 20) && v % (1ull << 20) == 0) return std::to_string(v >> 20) + "Mi";
    if (v >= (1ull << 10) && v % (1ull << 10) == 0) return std::to_string(v >> 10) + "Ki";
    return std::to_string(v);
}

inline std::string fmt_bytes(double b) {
    if (b >= 1024.0 * 1024 * 1024) return fmt("%.1f GiB", b / (1024.0 * 1024 * 1024));
    if (b >= 1024.0 * 1024) return fmt("%.1f MiB", b / (1024.0 * 1024));
    if (b >= 1024.0) return fmt("%.1f KiB", b / 1024.0);
    return fmt("%.0f B", b);
}

// A text table: the first `left` columns left-aligned, the others
// right-aligned; a rule under the header.
class Table {
   public:
    explicit Table(std::vector<std::string> header, size_t left = 1) : header_(std::move(header)), left_(left) {}
    void row(std::vector<std::string> cells) {
        cells.resize(header_.size());
        rows_.push_back(std::move(cells));
    }
    void separator() { rows_.push_back({}); }
    void print(FILE *f) const {
        std::vector<size_t> w(header_.size());
        for (size_t i = 0; i < header_.size(); ++i) w[i] = header_[i].size();
        for (auto &r : rows_)
            for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
        auto line = [&](const std::vector<std::string> &r) {
            std::string s;
            for (size_t i = 0; i < header_.size(); ++i) {
                const std::string &c = r[i];
                std::string pad(w[i] - c.size(), ' ');
                s += i < left_ ? c + pad : pad + c;
                if (i + 1 < header_.size()) s += "  ";
            }
            while (!s.empty() && s.back() == ' ') s.pop_back();
            std::fprintf(f, "%s\n", s.c_str());
        };
        line(header_);
        size_t total = 0;
        for (size_t x : w) total += x + 2;
        const std::string rule(total - 2, '-');
        std::fprintf(f, "%s\n", rule.c_str());
        for (auto &r : rows_) {
            if (r.empty())
                std::fprintf(f, "\n");
            else
                line(r);
        }
    }

   private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
    size_t left_;
};

inline std::string read_first_line(const char *path) {
    std::string s;
    if (FILE *f = std::fopen(path, "r")) {
        char b[256];
        if (std::fgets(b, sizeof b, f)) s = b;
        std::fclose(f);
    }
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

inline std::string cpu_model() {
    std::string model = "unknown";
    if (FILE *f = std::fopen("/proc/cpuinfo", "r")) {
        char b[512];
        while (std::fgets(b, sizeof b, f)) {
            if (std::strncmp(b, "model name", 10) == 0) {
                const char *c = std::strchr(b, ':');
                if (c) {
                    model = c + 1;
                    while (!model.empty() && (model.front() == ' ' || model.front() == '\t')) model.erase(0, 1);
                    while (!model.empty() && (model.back() == '\n' || model.back() == ' ')) model.pop_back();
                }
                break;
            }
        }
        std::fclose(f);
    }
    return model;
}

// The size in bytes of CPU 0's data or unified cache of `level`, from the
// kernel's /sys/devices/system/cpu/cpu0/cache (what lscpu reads), or 0.
// glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) can be far off under a
// hypervisor (335544320 on a 32 MiB AMD EPYC VM), so sysfs comes first.
inline long sysfs_cache_bytes(int level) {
    for (int i = 0; i < 16; ++i) {
        const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        const std::string lv = read_first_line((dir + "level").c_str());
        if (lv.empty()) break;
        if (std::atoi(lv.c_str()) != level || read_first_line((dir + "type").c_str()) == "Instruction") continue;
        const std::string size = read_first_line((dir + "size").c_str());
        char *end = nullptr;
        const long n = std::strtol(size.c_str(), &end, 10);
        if (n <= 0 || end == nullptr) return 0;
        return *end == 'K' ? n << 10 : *end == 'M' ? n << 20 : *end == 'G' ? n << 30 : n;
    }
    return 0;
}

// What the numbers were measured on: CPU, caches, huge pages, build.
inline void print_environment(FILE *f) {
    std::fprintf(f, "cpu: %s, %u hardware threads\n", cpu_model().c_str(), std::thread::hardware_concurrency());
    // each level from sysfs, or from sysconf where sysfs has nothing
    long l2 = sysfs_cache_bytes(2), l3 = sysfs_cache_bytes(3);
    const char *from2 = "sysfs", *from3 = "sysfs";
#if defined(__GLIBC__) && defined(_SC_LEVEL3_CACHE_SIZE)
    if (l2 <= 0) l2 = sysconf(_SC_LEVEL2_CACHE_SIZE), from2 = "sysconf";
    if (l3 <= 0) l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), from3 = "sysconf";
#endif
    std::fprintf(f, "caches: L2 %s per core (%s), L3 %s (%s)\n", l2 > 0 ? fmt_bytes(double(l2)).c_str() : "?", from2,
                 l3 > 0 ? fmt_bytes(double(l3)).c_str() : "?", from3);
    const std::string thp = read_first_line("/sys/kernel/mm/transparent_hugepage/enabled");
    if (!thp.empty()) std::fprintf(f, "transparent huge pages: %s\n", thp.c_str());
#if defined(__linux__) && defined(PR_GET_THP_DISABLE)
    std::fprintf(f, "pages: %s\n",
                 prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1
                     ? "4 KiB only (--pages 4k: huge pages disabled for this process)"
                     : "tables of 4 MiB and more on 2 MiB pages where the kernel grants them (--pages 2m)");
#endif
    std::fprintf(f, "library %s, compiler %s\n", tf_version_string(), __VERSION__);
#if !defined(__OPTIMIZE__)
    std::fprintf(f,
                 "WARNING: this benchmark was compiled without optimization; build with\n"
                 "         -Dbuildtype=release for meaningful numbers.\n");
#endif
#if defined(__SANITIZE_ADDRESS__)
    std::fprintf(f, "WARNING: AddressSanitizer build; timings are not representative.\n");
#endif
}

// Median ns/op by case id, in the order the cases ran; get() is NAN for a
// case that did not run.
struct MedianTable : std::vector<std::pair<std::string, double>> {
    double get(const std::string &id) const {
        for (const auto &p : *this)
            if (p.first == id) return p.second;
        return NAN;
    }
};

// ---------------------------------------------------------------------------
// Calls into the library
// ---------------------------------------------------------------------------

// A benchmark has no use for a structure it could not make: a failed call
// ends it with the call's name, the status and the library's message.
inline void require_ok(tf_status st, const char *what) {
    if (st == TF_OK) return;
    std::fprintf(stderr, "%s: %s failed: %s (%s)\n", program_name().c_str(), what, tf_status_string(st),
                 tf_last_error_message());
    std::exit(1);
}

// Runs the cases of `bench` after a line on stderr that names the round
// ("[tag] N cases x (1 warm-up + reps rounds) of ops <unit>"); a library
// call that failed in any of them (the count in `failures`) ends the
// benchmark.
inline void run_cases(Bench &bench, const std::string &tag, unsigned reps, uint64_t ops, const char *unit,
                      const std::atomic<uint64_t> &failures) {
    const long long huge = huge_page_bytes();
    std::fprintf(stderr, "[%s] %zu cases x (1 warm-up + %u rounds) of %" PRIu64 " %s; %s on huge pages\n", tag.c_str(),
                 bench.cases().size(), reps, ops, unit, huge < 0 ? "? bytes" : fmt_bytes(double(huge)).c_str());
    bench.run(reps);
    if (failures.load() == 0) return;
    std::fprintf(stderr, "%s: %" PRIu64 " library calls failed (%s)\n", program_name().c_str(), failures.load(),
                 tf_last_error_message());
    std::exit(1);
}

// The end of a benchmark's report: the CSV block (its column lines, then
// the rows) and the total time since t_start.
inline void print_csv(std::initializer_list<const char *> columns, const std::vector<std::string> &rows,
                      uint64_t t_start) {
    std::printf("\nBEGIN CSV\n");
    for (const char *c : columns) std::printf("%s\n", c);
    for (const std::string &l : rows) std::printf("%s\n", l.c_str());
    std::printf("END CSV\n");
    std::printf("total time %.1f s\n", double(now_ns() - t_start) * 1e-9);
}

// A handle freed by `Free` at scope exit: Owned<tf_recency_sketch,
// tf_recency_sketch_free>.
template <class T, void (*Free)(T *)>
struct Freer {
    void operator()(T *p) const { Free(p); }
};
template <class T, void (*Free)(T *)>
using Owned = std::unique_ptr<T, Freer<T, Free>>;

}  // namespace tfbench

#endif
