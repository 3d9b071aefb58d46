// Redis limiter benchmark (issue 15, item 6): decisions per second and
// per-call latency (p50, p99) of tf_redis_limiter through one redis-server
// and through a three-master Redis Cluster, single acquire calls and
// acquire_batch pipelines of several sizes, from 1 and 4 client threads, in
// bucketed and exact mode, beside the embedded tf_rate_limiter and the
// floor of a Redis round trip, all measured in the same run. Then the
// failure path: how long a call takes to return TF_ERR_UNAVAILABLE (or
// TF_ERR_TIMEOUT) once the server is gone or paused, and what the fallback's
// decision costs.
//
// It runs only where redis-server (and redis-cli, which creates the
// cluster) is installed: without them it prints "skipped: no redis-server"
// and exits 0. scripts/test.sh always installs them, so CI's smoke run
// (--quick, suite bench-smoke) really runs.
//
// Servers: the program starts its own (tests/redis/redis_server.c): one
// redis-server and a cluster of three masters on free loopback ports, plus
// one more server for the failure measurements, each in its own temporary
// directory; all are stopped by PID at the end (and on exit or SIGINT,
// SIGTERM).
//
// Workload (the same as bench_rate_limiter's, smaller):
//  - K distinct random 16-byte keys (default 10,000; --quick 500), each
//    limited to kLimit = 10 requests per window of W = 2 * 10 * K ticks of
//    the caller's clock (TF_REDIS_TIME_CALLER; bucketed: 10 buckets). The
//    clock advances one tick per request (all threads together), so each
//    key is offered about twice its limit per window and about half of the
//    decisions deny. Before timing, every limiter (embedded, server,
//    cluster; each mode under its own prefix) gets kLimit requests per key
//    spread over a window, as in the steady state.
//  - Decision = acquire(n = 1) with remaining and retry_at asked for;
//    batch = acquire_batch of B requests, each with its own time (one
//    pipeline on a single server; on a cluster a pipeline per master and per
//    phase: keys, then the global window).
//  - Threads: a tf_redis_limiter is not thread-safe and takes no lock
//    (redis.h: "one handle per thread (or a pool of handles, one borrowed
//    per call)"; lib/redis/capi.cpp and connection.cpp hold no mutex), so
//    each client thread has its own handle, hence its own connection(s):
//    that is how the 4-thread cases run. For comparison, "shared" cases run
//    4 threads on one handle behind a std::mutex (a pool of one handle):
//    every call waits for the others' round trips. The embedded limiter is
//    thread-safe and is shared by the threads. Thread t's i-th request is at
//    tick base + threads * i + t (the clocks interleave; skew is clamped per
//    key by the library).
//  - Floors, from the same number of threads, each on its own hiredis
//    connection, measured in the same run against the same servers: PING,
//    and EVALSHA of the trivial script `return 1` (one round trip, one
//    script call), single and pipelined in batches of the same sizes. A
//    cluster case's floor is the same command on one of its masters. A
//    single server's decision is one EVALSHA (the key's window and the
//    global window in one script), so its ideal ratio is 1; a cluster's is
//    two (the key's slot, then the global window's slot: redis.h,
//    "Cluster"), so its ideal ratio is 2.
//  - Timing: every case runs once untimed (warm-up), then `reps` rounds run
//    every case once each, interleaved (bench_util.hpp's Bench); decisions
//    per second = all threads' decisions / wall time (median over rounds).
//    The wall clock is the only honest clock here: the time goes to waiting
//    for another process. Latency: every call is timed by
//    clock_gettime(CLOCK_MONOTONIC) before and after (the timed rounds'
//    samples of all threads pooled); p50 and p99 are nearest-rank
//    percentiles of those samples, never averages. For a batch the latency
//    is the whole batch call's.
//
// The program reports; it never fails on speed. Exit status 1: a library
// call failed in a timed case, or the servers could not be started.
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "temporalfilters/rate_limiter.h"
#include "temporalfilters/redis.h"

extern "C" {
#include "redis_server.h"
}

namespace {

using namespace tfbench;

constexpr size_t kKeyLen = 16;
constexpr uint64_t kLimit = 10;    // requests per window and key
constexpr uint64_t kBuckets = 10;  // buckets per window (bucketed mode)
constexpr uint64_t kOffered = 2;   // requests offered per key and window / the limit
constexpr uint64_t kIdleMs = 3600000;
constexpr unsigned kMaxThreads = 4;
constexpr uint32_t kTimeoutMs = 5000;  // a shared machine: no spurious timeouts

// ---------------------------------------------------------------------------
// The servers: stopped by PID however the program ends
// ---------------------------------------------------------------------------

rs_server g_single, g_fault;
rs_cluster g_cluster;

void stop_servers() {
    rs_stop(&g_single);
    rs_stop(&g_fault);
    rs_cluster_stop(&g_cluster);
}

void on_signal(int sig) {
    // only async-signal-safe calls: kill the servers, then die of the signal
    const rs_server *all[] = {&g_single, &g_fault, &g_cluster.node[0], &g_cluster.node[1], &g_cluster.node[2]};
    for (const rs_server *s : all)
        if (s->pid > 0) {
            kill(s->pid, SIGCONT);
            kill(s->pid, SIGKILL);
        }
    signal(sig, SIG_DFL);
    raise(sig);
}

// Whether `name` is an executable file in a directory of PATH.
bool in_path(const char *name) {
    const char *path = std::getenv("PATH");
    std::string all = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t at = 0;
    for (;;) {
        const size_t colon = all.find(':', at);
        std::string dir = all.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
        if (dir.empty()) dir = ".";
        const std::string file = dir + "/" + name;
        struct stat st;
        if (stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(file.c_str(), X_OK) == 0) return true;
        if (colon == std::string::npos) return false;
        at = colon + 1;
    }
}

std::string load_average() {
    std::string s = read_first_line("/proc/loadavg");
    // "0.94 1.27 1.75 2/345 6789": the three averages
    size_t cut = 0;
    for (int i = 0; i < 3 && cut != std::string::npos; ++i) cut = s.find(' ', cut + 1);
    return cut == std::string::npos ? s : s.substr(0, cut);
}

// A label as one CSV field (no commas).
std::string csv_field(std::string s) {
    std::replace(s.begin(), s.end(), ',', ';');
    return s;
}

// A ratio for the CSV block: empty when it does not apply.
std::string csv_ratio(double x) { return std::isfinite(x) ? fmt("%.3f", x) : std::string(); }

// ---------------------------------------------------------------------------
// Per-call latency
// ---------------------------------------------------------------------------

inline uint64_t mono_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Nearest-rank percentile (p in (0, 1]) of `v`, sorted in place; 0 when empty.
double percentile(std::vector<uint64_t> &v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t rank = size_t(std::ceil(p * double(v.size())));
    rank = std::min(std::max<size_t>(rank, 1), v.size());
    return double(v[rank - 1]);
}

struct Percentiles {
    double p50 = 0, p99 = 0, max = 0;
    size_t samples = 0;
};

Percentiles percentiles(std::vector<uint64_t> v) {
    Percentiles r;
    r.samples = v.size();
    r.p50 = percentile(v, 0.50);
    r.p99 = percentile(v, 0.99);
    r.max = v.empty() ? 0 : double(v.back());
    return r;
}

// ---------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------

enum class Kind { decision, floor };

// What a case is, beside its Case in the Bench: its latency samples and the
// grants it saw.
struct Meta {
    std::string id, target, mode, call;  // call: "single", "batch", "PING", "EVALSHA"...
    Kind kind = Kind::decision;
    unsigned batch = 1, threads = 1;
    uint64_t ops = 0;       // decisions (or commands) per thread per run
    std::string floor_id;   // the floor of the same shape
    std::string ping_id;    // PING from as many threads
    std::string single_id;  // decisions: the single-call EVALSHA floor (batches: per command)
    std::string embedded_id;
    std::vector<std::vector<uint64_t>> lat;  // [thread]: ns per call, timed rounds only
    std::atomic<uint64_t> granted{0}, asked{0};
    const Case *bench_case = nullptr;
    double ns() const { return bench_case ? bench_case->median_ns() : NAN; }
    std::vector<uint64_t> samples() const {
        std::vector<uint64_t> all;
        for (const auto &v : lat) all.insert(all.end(), v.begin(), v.end());
        return all;
    }
};

// The ticks of one limiter's state: the cases sharing it take consecutive
// ranges of each round, so its clock only moves forward.
struct Timeline {
    uint64_t origin = 0, span = 0;  // span: ticks of one round of all its cases
    uint64_t add(uint64_t ticks) {
        const uint64_t off = span;
        span += ticks;
        return off;
    }
    uint64_t base(uint64_t run, uint64_t off) const { return origin + run * span + off; }
};

using RedisLimiter = Owned<tf_redis_limiter, tf_redis_limiter_free>;
using Limiter = Owned<tf_rate_limiter, tf_rate_limiter_free>;

struct Config {
    uint64_t keys = 0, window = 0, width = 0, ops = 0;
    unsigned reps = 0;
    std::vector<unsigned> batches;
    uint64_t batch_ops(unsigned b) const {
        // at least 40 batch calls per thread and run, whole batches
        uint64_t o = std::max<uint64_t>(ops, 40 * uint64_t(b));
        return (o + b - 1) / b * b;
    }
};

tf_redis_options redis_options(int port, bool cluster, const char *prefix) {
    tf_redis_options o = TF_REDIS_OPTIONS_INIT;
    o.port = uint32_t(port);
    o.mode = cluster ? TF_REDIS_MODE_CLUSTER : TF_REDIS_MODE_SERVER;
    o.prefix = prefix;
    o.idle_expiry_ms = kIdleMs;
    o.connect_timeout_ms = kTimeoutMs;
    o.command_timeout_ms = kTimeoutMs;
    return o;
}

RedisLimiter make_redis(const Config &c, bool exact, const tf_redis_options &o) {
    tf_redis_limiter *r = nullptr;
    require_ok(tf_redis_limiter_new(kLimit, c.window, exact ? 0 : c.width, exact ? TF_RATE_LIMITER_EXACT : 0, &o, &r),
               "tf_redis_limiter_new");
    return RedisLimiter(r);
}

Limiter make_embedded(const Config &c, bool exact) {
    tf_rate_limiter *r = nullptr;
    require_ok(tf_rate_limiter_new(kLimit, c.window, exact ? 0 : c.width, 0, exact ? TF_RATE_LIMITER_EXACT : 0, &r),
               "tf_rate_limiter_new");
    return Limiter(r);
}

// A batch call's arguments: B requests of 16-byte keys read from a stream.
struct BatchArgs {
    std::vector<const void *> keys;
    std::vector<size_t> lens;
    std::vector<uint64_t> times, remaining, retry_at;
    std::vector<int> allowed;
    explicit BatchArgs(size_t b) : keys(b), lens(b, kKeyLen), times(b), remaining(b), retry_at(b), allowed(b) {}
};

// Fills a limiter state: kLimit passes over the keys, pass p at ticks
// 1 + p W / kLimit + i (key i), so that at the origin (W + 1) every key
// holds about kLimit grants spread over its window. `batch` decides a batch.
using BatchFn = std::function<tf_status(BatchArgs &, size_t)>;

void fill(const Config &c, const KeyArray &keys, const BatchFn &batch, const char *what) {
    BatchArgs a(512);
    for (uint64_t pass = 0; pass < kLimit; ++pass)
        for (uint64_t i = 0; i < c.keys; i += 512) {
            const size_t m = size_t(std::min<uint64_t>(512, c.keys - i));
            for (size_t j = 0; j < m; ++j) {
                a.keys[j] = keys[size_t(i + j)];
                a.times[j] = 1 + pass * (c.window / kLimit) + i + j;
            }
            require_ok(batch(a, m), what);
        }
}

// One client connection of the floors (hiredis, blocking, with timeouts).
struct Raw {
    redisContext *ctx = nullptr;
    ~Raw() {
        if (ctx) redisFree(ctx);
    }
};

redisContext *raw_connect(int port) {
    timeval tv{kTimeoutMs / 1000, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == nullptr || c->err) {
        std::fprintf(stderr, "%s: cannot connect to 127.0.0.1:%d: %s\n", program_name().c_str(), port,
                     c ? c->errstr : "out of memory");
        std::exit(1);
    }
    redisSetTimeout(c, tv);
    return c;
}

// Loads `return 1` on the server of `c`; returns its SHA1.
std::string load_trivial_script(redisContext *c) {
    redisReply *r = static_cast<redisReply *>(redisCommand(c, "SCRIPT LOAD %s", "return 1"));
    if (r == nullptr || r->type != REDIS_REPLY_STRING) {
        std::fprintf(stderr, "%s: SCRIPT LOAD failed\n", program_name().c_str());
        std::exit(1);
    }
    std::string sha(r->str, r->len);
    freeReplyObject(r);
    return sha;
}

// One reply read; false on an I/O failure or an error reply.
bool reply_ok(void *r) {
    if (r == nullptr) return false;
    redisReply *rr = static_cast<redisReply *>(r);
    const bool ok = rr->type != REDIS_REPLY_ERROR;
    freeReplyObject(rr);
    return ok;
}

// ---------------------------------------------------------------------------
// The failure path
// ---------------------------------------------------------------------------

struct FaultRow {
    explicit FaultRow(std::string w) : what(std::move(w)) {}
    std::string what;
    Percentiles p;
    uint64_t ok = 0, timeout = 0, unavailable = 0, other = 0;
    void count(tf_status st) {
        if (st == TF_OK)
            ++ok;
        else if (st == TF_ERR_TIMEOUT)
            ++timeout;
        else if (st == TF_ERR_UNAVAILABLE)
            ++unavailable;
        else
            ++other;
    }
};

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    int exit_code = 0;
    if (!start_benchmark(argc, argv,
                         "Redis limiter: decisions/s and p50/p99 latency through one server and a cluster, beside the "
                         "embedded limiter and the floor of a Redis round trip (EVALSHA of `return 1`, PING)",
                         "  --sizes sets the batch sizes (default 8,64,512; --quick 8,64).\n"
                         "  --ops N is the number of single calls per thread per run (default 20000; --quick 200);\n"
                         "  a batch case makes at least 40 batch calls per thread per run.\n"
                         "  Starts its own redis-server processes on free loopback ports; without redis-server\n"
                         "  (or redis-cli) it prints \"skipped: no redis-server\" and exits 0.\n",
                         &opt, &exit_code))
        return exit_code;
    const uint64_t t_start = now_ns();
    if (!in_path("redis-server") || !in_path("redis-cli")) {
        std::printf(
            "Redis limiter benchmark: skipped: no redis-server (redis-server and redis-cli not both in PATH)\n");
        return 0;
    }

    Config cfg;
    cfg.keys = opt.quick ? 500 : 10000;
    cfg.window = kOffered * kLimit * cfg.keys;
    cfg.width = cfg.window / kBuckets;
    cfg.ops = given_or(opt.ops, opt, 200, 20000);
    cfg.reps = unsigned(given_or(opt.reps, opt, 1, 5));
    for (uint64_t b : sizes_or(opt, {8, 64}, {8, 64, 512}, 2, 4096, "batch sizes", "2..4096"))
        cfg.batches.push_back(unsigned(b));
    const unsigned fault_samples = opt.quick ? 10 : 200;
    const uint64_t fast_calls = opt.quick ? 2000 : 100000;

    std::atexit(stop_servers);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    const std::string load_start = load_average();

    std::printf("Redis limiter benchmark%s: %" PRIu64 " keys of 16 bytes, limit %" PRIu64 " per window of %" PRIu64
                " ticks (bucketed: %" PRIu64 " buckets), acquire(n = 1); %u timed rounds (median), %" PRIu64
                " single calls per thread per round\n",
                opt.quick ? " (--quick smoke run)" : "", cfg.keys, kLimit, cfg.window, kBuckets, cfg.reps, cfg.ops);
    print_environment(stdout);
    {
        FILE *p = popen("redis-server --version 2>/dev/null", "r");
        char line[256] = "";
        if (p) {
            if (!std::fgets(line, sizeof line, p)) line[0] = '\0';
            pclose(p);
        }
        line[std::strcspn(line, "\n")] = '\0';
        std::printf("%s; hiredis %d.%d.%d\n", line[0] ? line : "redis-server: version unknown", HIREDIS_MAJOR,
                    HIREDIS_MINOR, HIREDIS_PATCH);
    }
    std::printf("load average at start: %s\n", load_start.c_str());
    std::printf(
        "timing: wall clock per run (median of the rounds); latency per call by CLOCK_MONOTONIC, p50/p99 of the\n"
        "timed rounds' calls of all threads\n");

    std::fprintf(stderr, "starting redis-server and a 3-master cluster...\n");
    if (rs_start(&g_single) != 0 || rs_cluster_start(&g_cluster) != 0) {
        std::fprintf(stderr, "%s: could not start the Redis servers\n", program_name().c_str());
        return 1;
    }
    std::printf("servers: redis-server on 127.0.0.1:%d; cluster masters on ports %d, %d, %d\n", g_single.port,
                g_cluster.node[0].port, g_cluster.node[1].port, g_cluster.node[2].port);

    // ---- keys, streams, limiters ----
    const KeyArray keys = make_distinct_keys(size_t(cfg.keys), kKeyLen, opt.seed ^ mix64(cfg.keys));
    uint64_t max_ops = cfg.ops;
    for (unsigned b : cfg.batches) max_ops = std::max(max_ops, cfg.batch_ops(b));
    std::vector<KeyArray> streams;
    for (unsigned t = 0; t < kMaxThreads; ++t) streams.push_back(make_stream(keys, size_t(max_ops), opt.seed + 1 + t));

    const char *targets[] = {"embedded", "server", "cluster"};
    const char *modes[] = {"bucketed", "exact"};
    // [target][mode]: the embedded limiter, or a handle per thread plus a shared one
    Limiter embedded[2];
    std::vector<RedisLimiter> handles[3][2];
    RedisLimiter shared[3][2];
    Timeline timeline[3][2];
    for (int m = 0; m < 2; ++m) {
        const bool exact = m == 1;
        embedded[m] = make_embedded(cfg, exact);
        for (int tg = 1; tg <= 2; ++tg) {
            const bool cluster = tg == 2;
            const std::string prefix = std::string("tfb:") + (exact ? "e" : "b") + ":";
            const tf_redis_options o =
                redis_options(cluster ? g_cluster.node[0].port : g_single.port, cluster, prefix.c_str());
            for (unsigned t = 0; t < kMaxThreads; ++t) handles[tg][m].push_back(make_redis(cfg, exact, o));
            shared[tg][m] = make_redis(cfg, exact, o);
        }
    }
    std::fprintf(stderr, "filling the limiters (%" PRIu64 " requests each)...\n", kLimit * cfg.keys);
    for (int m = 0; m < 2; ++m) {
        tf_rate_limiter *e = embedded[m].get();
        fill(
            cfg, keys,
            [e](BatchArgs &a, size_t n) {
                return tf_rate_limiter_acquire_batch(e, a.keys.data(), a.lens.data(), n, a.times.data(), 1,
                                                     a.allowed.data(), a.remaining.data(), a.retry_at.data());
            },
            "tf_rate_limiter_acquire_batch (fill)");
        for (int tg = 1; tg <= 2; ++tg) {
            tf_redis_limiter *h = handles[tg][m][0].get();
            fill(
                cfg, keys,
                [h](BatchArgs &a, size_t n) {
                    return tf_redis_limiter_acquire_batch(h, a.keys.data(), a.lens.data(), n, a.times.data(), 1,
                                                          a.allowed.data(), a.remaining.data(), a.retry_at.data());
                },
                "tf_redis_limiter_acquire_batch (fill)");
        }
        for (int tg = 0; tg < 3; ++tg) timeline[tg][m].origin = cfg.window + 1;
    }

    // ---- the floors' connections: [0] the server, [1] cluster master 0 ----
    const int floor_port[2] = {g_single.port, g_cluster.node[0].port};
    const char *floor_target[2] = {"server", "cluster"};
    Raw raw[2][kMaxThreads];
    std::string trivial_sha[2];
    for (int f = 0; f < 2; ++f) {
        for (unsigned t = 0; t < kMaxThreads; ++t) raw[f][t].ctx = raw_connect(floor_port[f]);
        trivial_sha[f] = load_trivial_script(raw[f][0].ctx);
    }

    // ---- the cases ----
    Bench bench;  // wall clock
    std::deque<Meta> metas;
    std::atomic<uint64_t> failures{0};
    auto stream_of = [&](unsigned t) -> const KeyArray & { return streams[t]; };
    auto new_meta = [&](const std::string &id, const std::string &target, const std::string &mode,
                        const std::string &call, Kind kind, unsigned batch, unsigned threads, uint64_t ops) -> Meta & {
        metas.emplace_back();
        Meta &m = metas.back();
        m.id = id;
        m.target = target;
        m.mode = mode;
        m.call = call;
        m.kind = kind;
        m.batch = batch;
        m.threads = threads;
        m.ops = ops;
        m.lat.assign(threads, {});
        for (auto &v : m.lat) v.reserve(size_t(cfg.reps * (ops / batch + 1)));
        return m;
    };
    auto tname = [](unsigned th) { return std::to_string(th) + "t"; };

    // Floors: PING, EVALSHA of `return 1`, and that EVALSHA pipelined B at a time.
    for (int f = 0; f < 2; ++f)
        for (unsigned th : {1u, kMaxThreads}) {
            const std::string tgt = floor_target[f];
            Meta &ping = new_meta("floor_ping_" + tgt + "_" + tname(th), tgt, "-", "PING", Kind::floor, 1, th, cfg.ops);
            Meta &eval = new_meta("floor_evalsha_" + tgt + "_" + tname(th), tgt, "-", "EVALSHA return 1", Kind::floor,
                                  1, th, cfg.ops);
            for (Meta *mp : {&ping, &eval}) {
                const bool is_ping = mp == &ping;
                const std::string sha = trivial_sha[f];
                mp->bench_case = &bench.add(
                    {mp->id, mp->call, th, mp->ops, [&, mp, f, is_ping, sha](unsigned t, uint64_t run) {
                         redisContext *c = raw[f][t].ctx;
                         std::vector<uint64_t> *lat = run ? &mp->lat[t] : nullptr;
                         uint64_t bad = 0;
                         for (uint64_t i = 0; i < mp->ops; ++i) {
                             const uint64_t t0 = mono_ns();
                             void *r = is_ping ? redisCommand(c, "PING") : redisCommand(c, "EVALSHA %s 0", sha.c_str());
                             const uint64_t t1 = mono_ns();
                             bad += !reply_ok(r);
                             if (lat) lat->push_back(t1 - t0);
                         }
                         if (bad) failures += bad;
                     }});
            }
            for (unsigned b : cfg.batches) {
                Meta &pipe = new_meta("floor_evalsha_" + tgt + "_batch" + std::to_string(b) + "_" + tname(th), tgt, "-",
                                      "EVALSHA return 1 x" + std::to_string(b), Kind::floor, b, th, cfg.batch_ops(b));
                Meta *mp = &pipe;
                const std::string sha = trivial_sha[f];
                mp->bench_case =
                    &bench.add({mp->id, mp->call, th, mp->ops, [&, mp, f, b, sha](unsigned t, uint64_t run) {
                                    redisContext *c = raw[f][t].ctx;
                                    std::vector<uint64_t> *lat = run ? &mp->lat[t] : nullptr;
                                    uint64_t bad = 0;
                                    for (uint64_t i = 0; i < mp->ops; i += b) {
                                        const uint64_t t0 = mono_ns();
                                        for (unsigned j = 0; j < b; ++j)
                                            redisAppendCommand(c, "EVALSHA %s 0", sha.c_str());
                                        for (unsigned j = 0; j < b; ++j) {
                                            void *r = nullptr;
                                            if (redisGetReply(c, &r) != REDIS_OK) r = nullptr;
                                            bad += !reply_ok(r);
                                        }
                                        const uint64_t t1 = mono_ns();
                                        if (lat) lat->push_back(t1 - t0);
                                    }
                                    if (bad) failures += bad;
                                }});
            }
        }

    // Decisions: single calls and batches, per target, mode and thread count.
    // `single(t, key, now, &allowed, &remaining, &retry_at)` and
    // `batch(t, args, m)` are the calls of thread t.
    using SingleFn = std::function<tf_status(unsigned, const void *, uint64_t, int *, uint64_t *, uint64_t *)>;
    using ThreadBatchFn = std::function<tf_status(unsigned, BatchArgs &, size_t)>;
    auto single_case = [&](Meta &meta, Timeline &tl, SingleFn call) {
        Meta *mp = &meta;
        Timeline *tlp = &tl;
        const uint64_t off = tl.add(meta.ops * meta.threads);
        meta.bench_case =
            &bench.add({meta.id, meta.call, meta.threads, meta.ops, [&, mp, tlp, off, call](unsigned t, uint64_t run) {
                            const unsigned th = mp->threads;
                            const uint8_t *p = stream_of(t).data();
                            const uint64_t base = tlp->base(run, off) + t;
                            std::vector<uint64_t> *lat = run ? &mp->lat[t] : nullptr;
                            uint64_t bad = 0, granted = 0, sink = 0;
                            for (uint64_t i = 0; i < mp->ops; ++i, p += kKeyLen) {
                                int allowed = 0;
                                uint64_t remaining = 0, retry_at = 0;
                                const uint64_t t0 = mono_ns();
                                bad += call(t, p, base + i * th, &allowed, &remaining, &retry_at) != TF_OK;
                                const uint64_t t1 = mono_ns();
                                if (lat) lat->push_back(t1 - t0);
                                granted += unsigned(allowed);
                                sink += remaining ^ retry_at;
                            }
                            do_not_optimize(sink);
                            if (bad) failures += bad;
                            if (run > 0) {
                                mp->granted += granted;
                                mp->asked += mp->ops;
                            }
                        }});
    };
    auto batch_case = [&](Meta &meta, Timeline &tl, ThreadBatchFn call) {
        Meta *mp = &meta;
        Timeline *tlp = &tl;
        const uint64_t off = tl.add(meta.ops * meta.threads);
        meta.bench_case =
            &bench.add({meta.id, meta.call, meta.threads, meta.ops, [&, mp, tlp, off, call](unsigned t, uint64_t run) {
                            const unsigned th = mp->threads, b = mp->batch;
                            const uint8_t *p = stream_of(t).data();
                            const uint64_t base = tlp->base(run, off) + t;
                            std::vector<uint64_t> *lat = run ? &mp->lat[t] : nullptr;
                            BatchArgs a(b);
                            uint64_t bad = 0, granted = 0, sink = 0;
                            for (uint64_t i = 0; i < mp->ops; i += b) {
                                const size_t m = size_t(std::min<uint64_t>(b, mp->ops - i));
                                for (size_t j = 0; j < m; ++j, p += kKeyLen) {
                                    a.keys[j] = p;
                                    a.times[j] = base + (i + j) * th;
                                }
                                const uint64_t t0 = mono_ns();
                                bad += call(t, a, m) != TF_OK;
                                const uint64_t t1 = mono_ns();
                                if (lat) lat->push_back(t1 - t0);
                                for (size_t j = 0; j < m; ++j) {
                                    granted += unsigned(a.allowed[j]);
                                    sink += a.remaining[j] ^ a.retry_at[j];
                                }
                            }
                            do_not_optimize(sink);
                            if (bad) failures += bad;
                            if (run > 0) {
                                mp->granted += granted;
                                mp->asked += mp->ops;
                            }
                        }});
    };

    std::mutex shared_lock[3][2];
    for (int tg = 0; tg < 3; ++tg)
        for (int m = 0; m < 2; ++m)
            for (unsigned th : {1u, kMaxThreads}) {
                const std::string tgt = targets[tg], mode = modes[m];
                const std::string stem = tgt + "_" + mode;
                const std::string floor_tgt = tg == 2 ? "cluster" : "server";
                auto link = [&](Meta &x, const std::string &floor_id) {
                    if (tg > 0) {
                        x.floor_id = floor_id;
                        x.ping_id = "floor_ping_" + floor_tgt + "_" + tname(th);
                        x.single_id = "floor_evalsha_" + floor_tgt + "_" + tname(th);
                        x.embedded_id =
                            "embedded_" + mode + "_" +
                            (x.batch > 1 ? "batch" + std::to_string(x.batch) + "_" : std::string("single_")) +
                            tname(th);
                    }
                };
                // single calls
                Meta &s = new_meta(stem + "_single_" + tname(th), tgt, mode, "acquire", Kind::decision, 1, th, cfg.ops);
                link(s, "floor_evalsha_" + floor_tgt + "_" + tname(th));
                if (tg == 0) {
                    tf_rate_limiter *e = embedded[m].get();
                    single_case(s, timeline[tg][m],
                                [e](unsigned, const void *k, uint64_t now, int *a, uint64_t *r, uint64_t *rt) {
                                    return tf_rate_limiter_acquire(e, k, kKeyLen, now, 1, a, r, rt);
                                });
                } else {
                    std::vector<RedisLimiter> *hs = &handles[tg][m];
                    single_case(s, timeline[tg][m],
                                [hs](unsigned t, const void *k, uint64_t now, int *a, uint64_t *r, uint64_t *rt) {
                                    return tf_redis_limiter_acquire((*hs)[t].get(), k, kKeyLen, now, 1, a, r, rt);
                                });
                }
                // batches
                for (unsigned b : cfg.batches) {
                    Meta &x = new_meta(stem + "_batch" + std::to_string(b) + "_" + tname(th), tgt, mode,
                                       "acquire_batch x" + std::to_string(b), Kind::decision, b, th, cfg.batch_ops(b));
                    link(x, "floor_evalsha_" + floor_tgt + "_batch" + std::to_string(b) + "_" + tname(th));
                    if (tg == 0) {
                        tf_rate_limiter *e = embedded[m].get();
                        batch_case(x, timeline[tg][m], [e](unsigned, BatchArgs &a, size_t n) {
                            return tf_rate_limiter_acquire_batch(e, a.keys.data(), a.lens.data(), n, a.times.data(), 1,
                                                                 a.allowed.data(), a.remaining.data(),
                                                                 a.retry_at.data());
                        });
                    } else {
                        std::vector<RedisLimiter> *hs = &handles[tg][m];
                        batch_case(x, timeline[tg][m], [hs](unsigned t, BatchArgs &a, size_t n) {
                            return tf_redis_limiter_acquire_batch((*hs)[t].get(), a.keys.data(), a.lens.data(), n,
                                                                  a.times.data(), 1, a.allowed.data(),
                                                                  a.remaining.data(), a.retry_at.data());
                        });
                    }
                }
                // 4 threads on one handle behind a mutex (bucketed mode; single
                // calls and the middle batch size): what sharing a handle costs
                if (tg > 0 && m == 0 && th == kMaxThreads) {
                    tf_redis_limiter *h = shared[tg][m].get();
                    std::mutex *lk = &shared_lock[tg][m];
                    Meta &ss = new_meta(stem + "_single_shared_" + tname(th), tgt, mode, "acquire, 1 shared handle",
                                        Kind::decision, 1, th, cfg.ops);
                    link(ss, s.floor_id);
                    single_case(ss, timeline[tg][m],
                                [h, lk](unsigned, const void *k, uint64_t now, int *a, uint64_t *r, uint64_t *rt) {
                                    std::lock_guard<std::mutex> g(*lk);
                                    return tf_redis_limiter_acquire(h, k, kKeyLen, now, 1, a, r, rt);
                                });
                    const unsigned b = cfg.batches[cfg.batches.size() / 2];
                    Meta &sb = new_meta(stem + "_batch" + std::to_string(b) + "_shared_" + tname(th), tgt, mode,
                                        "acquire_batch x" + std::to_string(b) + ", 1 shared handle", Kind::decision, b,
                                        th, cfg.batch_ops(b));
                    link(sb, "floor_evalsha_" + floor_tgt + "_batch" + std::to_string(b) + "_" + tname(th));
                    batch_case(sb, timeline[tg][m], [h, lk](unsigned, BatchArgs &a, size_t n) {
                        std::lock_guard<std::mutex> g(*lk);
                        return tf_redis_limiter_acquire_batch(h, a.keys.data(), a.lens.data(), n, a.times.data(), 1,
                                                              a.allowed.data(), a.remaining.data(), a.retry_at.data());
                    });
                }
            }

    run_cases(bench, "redis limiter", cfg.reps, cfg.ops, "single calls (or >= 40 batches) per thread", failures);
    const std::string load_after_cases = load_average();

    // ---- where a server's time goes: its own time per script call ----
    // INFO commandstats' usec_per_call of EVALSHA (the time the server spent
    // executing the command, without the round trip), after CONFIG
    // RESETSTAT, for the limiter's script (1 thread, single calls, at ticks
    // after the timed rounds') and for `return 1`.
    struct ServerTime {
        std::string what;
        double usec_per_call = NAN;
        uint64_t calls = 0;
    };
    std::vector<ServerTime> server_time;
    {
        redisContext *c = raw[0][0].ctx;
        auto reset = [&] {
            if (!reply_ok(redisCommand(c, "CONFIG RESETSTAT"))) failures += 1;
        };
        auto read_stat = [&](const char *what) {
            ServerTime r;
            r.what = what;
            redisReply *rep = static_cast<redisReply *>(redisCommand(c, "INFO commandstats"));
            if (rep && rep->type == REDIS_REPLY_STRING) {
                const std::string info(rep->str, rep->len);
                const size_t at = info.find("cmdstat_evalsha:");
                unsigned long long calls = 0;
                double usec = 0, per = 0;
                if (at != std::string::npos &&
                    std::sscanf(info.c_str() + at, "cmdstat_evalsha:calls=%llu,usec=%lf,usec_per_call=%lf", &calls,
                                &usec, &per) == 3) {
                    r.calls = calls;
                    r.usec_per_call = per;
                }
            }
            if (rep) freeReplyObject(rep);
            server_time.push_back(r);
        };
        const uint64_t calls = opt.quick ? 200 : 5000;
        for (int m = 0; m < 2; ++m) {
            tf_redis_limiter *h = handles[1][m][0].get();
            const uint64_t base = timeline[1][m].base(cfg.reps + 1, 0);
            const uint8_t *p = streams[0].data();
            reset();
            for (uint64_t i = 0; i < calls; ++i, p += kKeyLen) {
                int allowed = 0;
                if (tf_redis_limiter_acquire(h, p, kKeyLen, base + i, 1, &allowed, nullptr, nullptr) != TF_OK)
                    failures += 1;
            }
            read_stat(m == 0 ? "the limiter's script, bucketed" : "the limiter's script, exact");
        }
        reset();
        for (uint64_t i = 0; i < calls; ++i)
            if (!reply_ok(redisCommand(c, "EVALSHA %s 0", trivial_sha[0].c_str()))) failures += 1;
        read_stat("return 1");
        if (failures.load() != 0) {
            std::fprintf(stderr, "%s: the server-time calls failed (%s)\n", program_name().c_str(),
                         tf_last_error_message());
            return 1;
        }
    }

    // ---- the report ----
    auto find = [&](const std::string &id) -> const Meta * {
        for (const Meta &m : metas)
            if (m.id == id) return &m;
        return nullptr;
    };
    auto ns_of = [&](const std::string &id) {
        const Meta *m = find(id);
        return m ? m->ns() : NAN;
    };
    auto us = [](double ns) { return fmt("%.1f", ns / 1000.0); };
    auto ratio = [](double a, double b) { return std::isfinite(a) && std::isfinite(b) && b > 0 ? a / b : NAN; };
    auto fx = [](double x) { return std::isfinite(x) ? fmt("%.2f", x) : std::string("-"); };
    std::vector<std::string> csv;

    std::printf("\n=== floors: one round trip on loopback (each thread its own hiredis connection) ===\n");
    std::printf(
        "ns/command = wall time / commands of all threads (a pipeline of B commands counts B); latency = one\n"
        "call (a whole pipeline of B).\n");
    Table ft({"floor", "target", "threads", "commands/s", "ns/command", "p50 us", "p99 us"}, 2);
    for (const Meta &m : metas) {
        if (m.kind != Kind::floor) continue;
        Percentiles p = percentiles(m.samples());
        const double ns = m.ns();
        ft.row({m.call, m.target, fmt_u(m.threads), fmt("%.0f", 1e9 / ns), fmt("%.0f", ns), us(p.p50), us(p.p99)});
        char line[512];
        std::snprintf(line, sizeof line, "floor,%s,%s,%s,%u,%u,%" PRIu64 ",%u,%.1f,%.0f,%.2f,%.2f", m.id.c_str(),
                      m.target.c_str(), csv_field(m.call).c_str(), m.batch, m.threads, m.ops, cfg.reps, ns, 1e9 / ns,
                      p.p50 / 1000.0, p.p99 / 1000.0);
        csv.push_back(line);
    }
    ft.print(stdout);

    std::printf("\n=== decisions: the embedded limiter, one redis-server, a 3-master cluster ===\n");
    std::printf(
        "x floor = ns per decision / ns per command of the floor of the same shape, target and threads (single:\n"
        "EVALSHA of `return 1`; batch of B: that EVALSHA pipelined B at a time); ideal 1 on a server, 2 on a\n"
        "cluster (two round trips). x floor p50 = the same for the p50 latencies. x PING = ns per decision / one\n"
        "PING from as many threads. x embedded = ns per decision / the embedded limiter's, same call, mode and\n"
        "threads. latency = one call (a whole batch). allowed = granted / asked.\n");
    Table dt({"case", "mode", "threads", "decisions/s", "ns/decision", "p50 us", "p99 us", "x floor", "x floor p50",
              "x PING", "x embedded", "allowed"},
             2);
    std::string last;
    for (const Meta &m : metas) {
        if (m.kind != Kind::decision) continue;
        if (!last.empty() && last != m.target) dt.separator();
        last = m.target;
        Percentiles p = percentiles(m.samples());
        const double ns = m.ns();
        double xf = NAN, xf50 = NAN, xp = NAN, xe = NAN;
        if (!m.floor_id.empty()) {
            const Meta *f = find(m.floor_id);
            xf = ratio(ns, f ? f->ns() : NAN);
            if (f) {
                Percentiles fp = percentiles(f->samples());
                xf50 = ratio(p.p50, fp.p50);
            }
            xp = ratio(ns, ns_of(m.ping_id));
            xe = ratio(ns, ns_of(m.embedded_id));
        }
        const double allowed = m.asked ? double(m.granted.load()) / double(m.asked.load()) : 0.0;
        const std::string label = m.target + " " + m.call;
        dt.row({label, m.mode, fmt_u(m.threads), fmt("%.0f", 1e9 / ns), fmt("%.0f", ns),
                p.p50 < 10000 ? fmt("%.2f", p.p50 / 1000.0) : us(p.p50),
                p.p99 < 10000 ? fmt("%.2f", p.p99 / 1000.0) : us(p.p99), fx(xf), fx(xf50), fx(xp), fx(xe),
                fmt("%.3f", allowed)});
        char line[640];
        std::snprintf(line, sizeof line,
                      "case,%s,%s,%s,%s,%u,%u,%" PRIu64 ",%u,%.1f,%.0f,%.3f,%.3f,%s,%s,%s,%s,%s,%.4f", m.id.c_str(),
                      m.target.c_str(), m.mode.c_str(), csv_field(m.call).c_str(), m.batch, m.threads, m.ops, cfg.reps,
                      ns, 1e9 / ns, p.p50 / 1000.0, p.p99 / 1000.0, m.floor_id.c_str(), csv_ratio(xf).c_str(),
                      csv_ratio(xf50).c_str(), csv_ratio(xp).c_str(), csv_ratio(xe).c_str(), allowed);
        csv.push_back(line);
    }
    dt.print(stdout);

    std::printf("\n=== the server's own time per EVALSHA (INFO commandstats, one server, 1 thread) ===\n");
    for (const ServerTime &st : server_time) {
        std::printf("  %-34s %8.2f us per call (%" PRIu64 " calls)\n", st.what.c_str(), st.usec_per_call, st.calls);
        csv.push_back("servertime," + csv_field(st.what) + "," + fmt("%.3f", st.usec_per_call) + "," + fmt_u(st.calls));
    }
    std::printf("  the rest of a call's latency is the round trip and the client (hiredis, the library)\n");

    // The summary a user needs.
    {
        const double s1 = ns_of("server_bucketed_single_1t"), s4 = ns_of("server_bucketed_single_4t");
        const double sh = ns_of("server_bucketed_single_shared_4t");
        const double c1 = ns_of("cluster_bucketed_single_1t"), c4 = ns_of("cluster_bucketed_single_4t");
        const unsigned bmax = cfg.batches.back();
        const std::string bs = std::to_string(bmax);
        const double sb1 = ns_of("server_bucketed_batch" + bs + "_1t"),
                     sb4 = ns_of("server_bucketed_batch" + bs + "_4t");
        const double cb4 = ns_of("cluster_bucketed_batch" + bs + "_4t");
        const double e1 = ns_of("embedded_bucketed_single_1t");
        std::printf("\nsummary (bucketed mode):\n");
        std::printf(
            "  one server: %.0f decisions/s from 1 thread (single calls), %.0f from 4 threads with a handle\n"
            "    each, %.0f from 4 threads sharing one handle behind a mutex; in batches of %u: %.0f (1 thread),\n"
            "    %.0f (4 threads)\n",
            1e9 / s1, 1e9 / s4, 1e9 / sh, bmax, 1e9 / sb1, 1e9 / sb4);
        std::printf(
            "  the cluster: %.0f decisions/s from 1 thread, %.0f from 4 threads; in batches of %u from 4\n"
            "    threads: %.0f\n",
            1e9 / c1, 1e9 / c4, bmax, 1e9 / cb4);
        std::printf("  the embedded limiter: %.0f decisions/s from 1 thread: a single Redis decision costs %.0fx it\n",
                    1e9 / e1, s1 / e1);
        std::printf(
            "  threads: a handle is not thread-safe (redis.h) and holds no lock; 4 threads with a handle each\n"
            "    give %.2fx the throughput of 4 threads sharing one handle behind a lock (%.2fx one thread):\n"
            "    one handle per thread (or a pool) is the right use.\n",
            sh / s4, s1 / s4);
    }

    // ---- the failure path ----
    std::fprintf(stderr, "[fallback] measuring the failure path (%u samples)...\n", fault_samples);
    std::vector<FaultRow> faults;
    {
        if (rs_start(&g_fault) != 0) {
            std::fprintf(stderr, "%s: could not start the failure-path server\n", program_name().c_str());
            return 1;
        }
        auto opts = [&](uint32_t fallback, uint32_t rmin, uint32_t rmax, uint32_t cmd_ms) {
            tf_redis_options o = redis_options(g_fault.port, false, "tfb:f:");
            o.fallback = fallback;
            o.reconnect_min_ms = rmin;
            o.reconnect_max_ms = rmax;
            o.command_timeout_ms = cmd_ms;
            return o;
        };
        const KeyArray &st = streams[0];
        auto key = [&](uint64_t i) { return st[size_t(i % st.count())]; };
        uint64_t now = 1;
        auto one = [&](tf_redis_limiter *h, uint64_t i, tf_status *out) {
            int allowed = 0;
            uint64_t remaining = 0, retry_at = 0;
            const uint64_t t0 = mono_ns();
            *out = tf_redis_limiter_acquire(h, key(i), kKeyLen, ++now, 1, &allowed, &remaining, &retry_at);
            const uint64_t t1 = mono_ns();
            do_not_optimize(remaining ^ retry_at ^ uint64_t(allowed));
            return t1 - t0;
        };
        // connected handles: the first call after the server died
        std::vector<RedisLimiter> dying;
        for (unsigned i = 0; i < fault_samples; ++i) {
            dying.push_back(make_redis(cfg, false, opts(TF_REDIS_FALLBACK_DENY, 60000, 60000, kTimeoutMs)));
            tf_status s;
            one(dying.back().get(), i, &s);
            require_ok(s, "tf_redis_limiter_acquire (before the failure)");
        }
        RedisLimiter local = make_redis(cfg, false, opts(TF_REDIS_FALLBACK_LOCAL, 60000, 60000, kTimeoutMs));
        RedisLimiter refused = make_redis(cfg, false, opts(TF_REDIS_FALLBACK_DENY, 1, 1, kTimeoutMs));
        Limiter direct = make_embedded(cfg, false);
        rs_kill(&g_fault);

        FaultRow first{"first call after the server was killed (connection lost)"};
        std::vector<uint64_t> v;
        for (unsigned i = 0; i < fault_samples; ++i) {
            tf_status s;
            v.push_back(one(dying[i].get(), i, &s));
            first.count(s);
        }
        first.p = percentiles(v);
        faults.push_back(first);

        // `calls` calls on one handle, timed and counted as a row
        auto row_of = [&](const char *what, tf_redis_limiter *h, uint64_t calls) {
            FaultRow row{what};
            std::vector<uint64_t> lat;
            for (uint64_t i = 0; i < calls; ++i) {
                tf_status s;
                lat.push_back(one(h, i, &s));
                row.count(s);
            }
            row.p = percentiles(lat);
            faults.push_back(row);
        };
        row_of("later calls within the reconnect backoff, fallback deny", dying[0].get(), fast_calls);
        tf_status s0;
        one(local.get(), 0, &s0);  // its connection is lost: the backoff starts
        row_of("calls within the backoff, fallback local (embedded decides)", local.get(), fast_calls);

        FaultRow emb{"for comparison: tf_rate_limiter_acquire itself"};
        v.clear();
        for (uint64_t i = 0; i < fast_calls; ++i) {
            int allowed = 0;
            uint64_t remaining = 0, retry_at = 0;
            const uint64_t t0 = mono_ns();
            const tf_status s =
                tf_rate_limiter_acquire(direct.get(), key(i), kKeyLen, ++now, 1, &allowed, &remaining, &retry_at);
            v.push_back(mono_ns() - t0);
            do_not_optimize(remaining ^ retry_at ^ uint64_t(allowed));
            emb.count(s);
        }
        emb.p = percentiles(v);
        faults.push_back(emb);

        FaultRow ref{"reconnect attempt refused (backoff 1 ms elapsed)"};
        one(refused.get(), 0, &s0);  // connection lost
        v.clear();
        for (unsigned i = 0; i < fault_samples; ++i) {
            rs_sleep_ms(2);
            tf_status s;
            v.push_back(one(refused.get(), i, &s));
            ref.count(s);
        }
        ref.p = percentiles(v);
        faults.push_back(ref);
        dying.clear();

        // a paused server (SIGSTOP): the command timeout
        const uint32_t pause_ms = 50;
        const unsigned pause_samples = opt.quick ? 2 : 10;
        if (rs_restart(&g_fault) != 0) {
            std::fprintf(stderr, "%s: could not restart the failure-path server\n", program_name().c_str());
            return 1;
        }
        RedisLimiter paused = make_redis(cfg, false, opts(TF_REDIS_FALLBACK_DENY, 1, 1, pause_ms));
        tf_status s;
        one(paused.get(), 0, &s);
        require_ok(s, "tf_redis_limiter_acquire (before the pause)");
        rs_pause(&g_fault);
        FaultRow pz{"server paused (SIGSTOP), command timeout " + std::to_string(pause_ms) + " ms"};
        v.clear();
        for (unsigned i = 0; i < pause_samples; ++i) {
            rs_sleep_ms(2);
            v.push_back(one(paused.get(), i, &s));
            pz.count(s);
        }
        pz.p = percentiles(v);
        faults.push_back(pz);
        rs_resume(&g_fault);
        rs_stop(&g_fault);
    }
    std::printf("\n=== the failure path (a server of its own, killed, then restarted and paused) ===\n");
    std::printf(
        "Latency of one tf_redis_limiter_acquire (bucketed); statuses counted. Reconnect backoff 60 s in the\n"
        "first three rows (one connection attempt, then fail fast), 1 ms in the refused row.\n");
    Table flt({"what", "calls", "p50 us", "p99 us", "max us", "OK", "TIMEOUT", "UNAVAILABLE", "other"}, 1);
    for (const FaultRow &f : faults) {
        flt.row({f.what, fmt_u(f.p.samples), fmt("%.2f", f.p.p50 / 1000.0), fmt("%.2f", f.p.p99 / 1000.0),
                 fmt("%.2f", f.p.max / 1000.0), fmt_u(f.ok), fmt_u(f.timeout), fmt_u(f.unavailable), fmt_u(f.other)});
        char line[512];
        std::snprintf(line, sizeof line, "fallback,%s,%zu,%.3f,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
                      csv_field(f.what).c_str(), f.p.samples, f.p.p50 / 1000.0, f.p.p99 / 1000.0, f.p.max / 1000.0,
                      f.ok, f.timeout, f.unavailable, f.other);
        csv.push_back(line);
    }
    flt.print(stdout);
    if (faults.size() >= 4)
        std::printf(
            "the local fallback's decision: %.2f us at p50 beyond failing fast (%.2f us), against %.2f us for\n"
            "the embedded limiter called directly\n",
            (faults[2].p.p50 - faults[1].p.p50) / 1000.0, faults[1].p.p50 / 1000.0, faults[3].p.p50 / 1000.0);

    const std::string load_end = load_average();
    std::printf(
        "\nload average: %s at start, %s after the cases, %s at the end (a shared machine: %u hardware "
        "threads)\n",
        load_start.c_str(), load_after_cases.c_str(), load_end.c_str(), std::thread::hardware_concurrency());
    csv.push_back("env," + csv_field(load_start) + "," + csv_field(load_end) + "," + fmt_u(cfg.keys) + "," +
                  fmt_u(cfg.ops) + "," + fmt_u(cfg.reps));
    print_csv({"#case,id,target,mode,call,batch,threads,ops_per_thread,rounds,ns_per_decision_median,decisions_per_s,"
               "p50_us,p99_us,floor_id,x_floor,x_floor_p50,x_ping,x_embedded,allowed_fraction",
               "#floor,id,target,command,batch,threads,ops_per_thread,rounds,ns_per_command_median,commands_per_s,"
               "p50_us,p99_us",
               "#fallback,what,calls,p50_us,p99_us,max_us,ok,timeout,unavailable,other",
               "#servertime,script,usec_per_call,calls",
               "#env,loadavg_start,loadavg_end,keys,single_calls_per_thread,rounds"},
              csv, t_start);
    return 0;
}
