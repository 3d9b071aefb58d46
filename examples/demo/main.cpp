// main.cpp - tf-demo: replays an event stream through every structure of
// libtemporalfilters next to an exact reference and reports memory, speed
// and measured error against each structure's promise.
//
//   tf-demo [options] [FILE.csv | -]
//
// Exit status: 0 when every hard promise held, 1 when one was broken,
// 2 on bad arguments or input, 3 when a library call failed.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "demo.hpp"

namespace {

const char kUsage[] =
    "usage: tf-demo [options] [FILE.csv | -]\n"
    "\n"
    "Replays a stream of (timestamp, key) events through every structure of\n"
    "libtemporalfilters and compares each with an exact reference.\n"
    "Without FILE, a synthetic stream is generated (timestamps in ms); with -,\n"
    "the stream is read from standard input. FILE holds `timestamp,key` lines\n"
    "(unsigned integer timestamps in any unit; a header line is skipped).\n"
    "Every parameter not given is chosen from the stream; the report prints\n"
    "each choice and why (lines starting with \"chose\").\n"
    "\n"
    "the stream:\n"
    "  --events N        events to generate, or the most to read (default 4000000)\n"
    "  --seed S          seed of the synthetic stream and the sketches (default 1)\n"
    "time scales (in the stream's unit):\n"
    "  --horizon T       how far back last-seen queries look; also the filters'\n"
    "                    window and the cuckoo filter's ttl (default 60000 ms;\n"
    "                    CSV: 1/60 of the stream's time span)\n"
    "  --interval T      sketch pacing: one grant per key per T (default horizon/60)\n"
    "  --ttl T           sketch TTL prefilter: entries live for T (default horizon/2)\n"
    "sizing:\n"
    "  --target P        error the sketches and Bloom filters are sized for,\n"
    "                    in (0, 0.5] (default 0.01)\n"
    "  --capacity N      keys (items) every sized structure is built for: the\n"
    "                    sketches, both Bloom filters, the cuckoo filter's first\n"
    "                    table (default: the most distinct keys in a window, or\n"
    "                    the mean events per window for the Bloom filters)\n"
    "rate limiter (tf_rate_limiter):\n"
    "  --limit N         requests per key per window (default 5)\n"
    "  --window T        its window W (default: the pacing interval)\n"
    "  --buckets N       buckets per window; must divide W, at most 4096\n"
    "                    (default: the divisor of W nearest 10)\n"
    "  --global-limit N  the cap over all keys of part (b) (default 0.8 x the\n"
    "                    mean events per window)\n"
    "rotating cuckoo filter (tf_rotating_cuckoo):\n"
    "  --max-memory B    the memory cap of part (a), in bytes (default 4x what\n"
    "                    a horizon's keys need)\n"
    "recency window (tf_recency_window):\n"
    "  --count-window N  its window W, in events (default a quarter of the\n"
    "                    stream, between 1,024 and 2^20)\n"
    "  --eps E           relative error bound, 1/n for an integer n: 0.125 or\n"
    "                    1/8 (default 1/8)\n"
    "  --delta D         false-match probability of part (b), in (0, 1)\n"
    "                    (default 0.001)\n"
    "output:\n"
    "  --out DIR         write plots of each structure's error and memory over\n"
    "                    the stream beside its promise (SVG, by gnuplot) and\n"
    "                    DIR/index.html showing them\n"
    "  --progress        show progress on stderr (default: when it is a terminal)\n"
    "  --no-progress     never show progress\n"
    "  -h, --help        this text\n";

bool parse_u64(const char *text, uint64_t *out) {
    if (text == nullptr || *text < '0' || *text > '9') return false;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = v;
    return true;
}

// A probability-like number in (lo, hi] (or (lo, hi) when `open`).
bool parse_fraction(const char *text, double lo, double hi, bool open, double *out) {
    if (text == nullptr || *text == '\0') return false;
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (errno != 0 || *end != '\0' || !(v > lo) || !(open ? v < hi : v <= hi)) return false;
    *out = v;
    return true;
}

// eps as "1/n" or a decimal whose inverse is an integer n >= 1.
bool parse_eps(const char *text, uint64_t *inv) {
    if (text == nullptr) return false;
    if (std::strncmp(text, "1/", 2) == 0) return parse_u64(text + 2, inv) && *inv >= 1;
    double e = 0.0;
    if (!parse_fraction(text, 0.0, 1.0, false, &e)) return false;
    const double n = std::round(1.0 / e);
    if (n < 1.0 || n > 1e18 || std::fabs(1.0 / n - e) > 1e-9 * e) return false;
    *inv = uint64_t(n);
    return true;
}

// Returns 0 to go on, or an exit status.
int parse_args(int argc, char **argv, demo::Options *o) {
    bool have_file = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        const bool has_value = arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos;
        if (has_value) arg = arg.substr(0, arg.find('='));
        auto take = [&](const char *name) -> const char * {
            if (has_value) return argv[i] + std::strlen(name) + 1;
            if (i + 1 >= argc) return nullptr;
            return argv[++i];
        };
        auto number = [&](const char *name, uint64_t *dst, bool positive) {
            const char *v = take(name);
            if (!parse_u64(v, dst) || (positive && *dst == 0)) {
                if (v == nullptr)
                    std::fprintf(stderr, "tf-demo: %s needs a value\n", name);
                else
                    std::fprintf(stderr, "tf-demo: %s needs a%s integer, got \"%s\"\n", name,
                                 positive ? " positive" : "n unsigned", v);
                return false;
            }
            return true;
        };
        struct Positive {
            const char *name;
            uint64_t *dst;
        };
        const Positive positives[] = {{"--horizon", &o->horizon},
                                      {"--interval", &o->interval},
                                      {"--ttl", &o->ttl},
                                      {"--capacity", &o->capacity},
                                      {"--limit", &o->limit},
                                      {"--window", &o->window},
                                      {"--buckets", &o->buckets},
                                      {"--global-limit", &o->global_limit},
                                      {"--max-memory", &o->max_memory},
                                      {"--count-window", &o->count_window}};
        const Positive *positive = nullptr;
        for (const Positive &p : positives)
            if (arg == p.name) positive = &p;
        if (has_value && (arg == "-h" || arg == "--help" || arg == "--progress" || arg == "--no-progress")) {
            std::fprintf(stderr, "tf-demo: %s takes no value\n", arg.c_str());
            return 2;
        }
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            return -1;
        } else if (positive != nullptr) {
            if (!number(positive->name, positive->dst, true)) return 2;
        } else if (arg == "--events") {
            if (!number("--events", &o->events, true)) return 2;
            o->events_given = true;
        } else if (arg == "--seed") {
            if (!number("--seed", &o->seed, false)) return 2;
        } else if (arg == "--target") {
            const char *v = take("--target");
            if (!parse_fraction(v, 0.0, 0.5, false, &o->target)) {
                std::fprintf(stderr, "tf-demo: --target needs a probability in (0, 0.5], got \"%s\"\n", v ? v : "");
                return 2;
            }
            o->target_given = true;
        } else if (arg == "--delta") {
            const char *v = take("--delta");
            if (!parse_fraction(v, 0.0, 1.0, true, &o->delta)) {
                std::fprintf(stderr, "tf-demo: --delta needs a probability in (0, 1), got \"%s\"\n", v ? v : "");
                return 2;
            }
        } else if (arg == "--eps") {
            const char *v = take("--eps");
            if (!parse_eps(v, &o->inv_eps) || o->inv_eps > TF_RECENCY_WINDOW_MAX_INV_EPS) {
                std::fprintf(stderr,
                             "tf-demo: --eps needs 1/n for an integer n from 1 to %llu (e.g. 0.125 or 1/8), got "
                             "\"%s\"\n",
                             (unsigned long long)TF_RECENCY_WINDOW_MAX_INV_EPS, v ? v : "");
                return 2;
            }
        } else if (arg == "--out") {
            const char *v = take("--out");
            if (v == nullptr || *v == '\0') {
                std::fprintf(stderr, "tf-demo: --out needs a directory\n");
                return 2;
            }
            o->out_dir = v;
        } else if (arg == "--progress") {
            o->progress = 1;
        } else if (arg == "--no-progress") {
            o->progress = 0;
        } else if (arg.size() > 1 && arg[0] == '-') {
            std::fprintf(stderr, "tf-demo: unknown option %s\n\n%s", arg.c_str(), kUsage);
            return 2;
        } else if (!have_file) {
            o->csv_path = arg;
            have_file = true;
        } else {
            std::fprintf(stderr, "tf-demo: one CSV file at most (got %s and %s)\n", o->csv_path.c_str(), arg.c_str());
            return 2;
        }
    }
    return 0;
}

bool make_out_dir(const std::string &dir) {
    if (mkdir(dir.c_str(), 0777) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && access(dir.c_str(), W_OK) == 0) return true;
        std::fprintf(stderr, "tf-demo: --out %s is not a writable directory\n", dir.c_str());
        return false;
    }
    std::fprintf(stderr, "tf-demo: --out: cannot create %s: %s\n", dir.c_str(), std::strerror(errno));
    return false;
}

bool in_path(const char *program) {
    const char *path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t pos = 0;
    while (pos <= dirs.size()) {
        size_t end = dirs.find(':', pos);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(pos, end - pos);
        if (dir.empty()) dir = ".";
        if (access((dir + "/" + program).c_str(), X_OK) == 0) return true;
        pos = end + 1;
    }
    return false;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char **argv) {
    using namespace demo;
    const auto t0 = std::chrono::steady_clock::now();
    Options opt;
    if (int rc = parse_args(argc, argv, &opt)) return rc < 0 ? 0 : rc;

    std::printf("tf-demo: libtemporalfilters %s (headers %s)\n", tf_version_string(), TF_VERSION_STRING);
    if (std::strcmp(tf_version_string(), TF_VERSION_STRING) != 0)
        std::printf("warning: the library loaded is not the one the demo was compiled against\n");

    // Fail early on an output folder that cannot be made or a missing gnuplot.
    if (!opt.out_dir.empty()) {
        if (!make_out_dir(opt.out_dir)) return 2;
        if (!in_path("gnuplot")) {
            std::fprintf(stderr,
                         "tf-demo: --out needs gnuplot, which is not in PATH (Debian: apt-get install gnuplot-nox)\n");
            return 2;
        }
    }

    Stream stream;
    if (opt.csv_path.empty()) {
        stream = make_synthetic_stream(opt.events, opt.seed);
    } else if (!load_csv_stream(opt.csv_path, opt.events_given ? opt.events : UINT64_MAX, &stream)) {
        return 2;
    }
    const double load_seconds = seconds_since(t0);

    // Time scales: given, or the synthetic defaults, or fractions of the CSV's span.
    const uint64_t time_span = stream.last - stream.first;
    const bool synthetic = opt.csv_path.empty();
    const uint64_t horizon = opt.horizon ? opt.horizon : synthetic ? 60000 : std::max<uint64_t>(1, time_span / 60);
    const uint64_t interval = opt.interval ? opt.interval : std::max<uint64_t>(1, horizon / 60);
    const uint64_t rate_window = opt.window ? opt.window : interval;
    if (opt.buckets != 0 &&
        (opt.buckets > TF_RATE_LIMITER_MAX_BUCKETS || opt.buckets > rate_window || rate_window % opt.buckets != 0)) {
        std::fprintf(stderr, "tf-demo: --buckets %llu must divide the rate limiter's window (%llu) and be at most %u\n",
                     (unsigned long long)opt.buckets, (unsigned long long)rate_window, TF_RATE_LIMITER_MAX_BUCKETS);
        return 2;
    }
    Recorder recorder;
    Progress progress(opt.progress == 1 || (opt.progress < 0 && isatty(2)), isatty(2) != 0);
    Context ctx{stream,      opt,      horizon, interval, opt.ttl ? opt.ttl : std::max<uint64_t>(1, horizon / 2),
                rate_window, {},       {},      {},       std::max<uint64_t>(1, horizon / 2),
                &recorder,   &progress};
    ctx.keys_per_horizon = distinct_per_window(stream, ctx.horizon);
    ctx.keys_per_interval = distinct_per_window(stream, ctx.interval);
    ctx.keys_per_ttl = distinct_per_window(stream, ctx.ttl);

    char buf[256];
    print_row("stream", stream.description);
    if (!stream.detail.empty()) print_row("", stream.detail);
    std::snprintf(buf, sizeof buf, "%s events, %s distinct keys, over %s (%.1f s to %s)",
                  count(stream.events()).c_str(), count(stream.keys.count()).c_str(), span(stream, time_span).c_str(),
                  load_seconds, opt.csv_path.empty() ? "generate" : "load");
    print_row("", buf);
    std::snprintf(buf, sizeof buf, "horizon %s, pacing interval %s, TTL %s; target p %.4g",
                  span(stream, ctx.horizon).c_str(), span(stream, ctx.interval).c_str(), span(stream, ctx.ttl).c_str(),
                  opt.target);
    print_row("time scales", buf);
    print_choice("horizon " + span(stream, horizon), "--horizon", opt.horizon != 0,
                 synthetic ? "the synthetic stream's default" : "1/60 of the stream's span");
    print_choice("pacing interval " + span(stream, interval), "--interval", opt.interval != 0, "1/60 of the horizon");
    print_choice("TTL " + span(stream, ctx.ttl), "--ttl", opt.ttl != 0, "half the horizon");
    std::snprintf(buf, sizeof buf, "target error %.4g", opt.target);
    print_choice(buf, "--target", opt.target_given, "the default");
    const struct {
        const char *label;
        const WindowStats &w;
    } windows[] = {{"horizon", ctx.keys_per_horizon}, {"interval", ctx.keys_per_interval}, {"TTL", ctx.keys_per_ttl}};
    for (const auto &w : windows) {
        std::snprintf(buf, sizeof buf, "per %-8s max %10s   avg %12s", w.label, count(w.w.max).c_str(),
                      count(uint64_t(std::llround(w.w.mean))).c_str());
        print_row(&w == windows ? "distinct keys" : "", buf);
    }

    print_row("exact map", "std::unordered_map<std::string, uint64_t>, heap bytes counted;");
    print_row("", "pruned: the same holding only the keys of the busiest window");

    Outcome outcome = Outcome::ok;
    size_t broken = 0;
    for (SectionFactory make : all_sections()) {
        std::unique_ptr<Section> section = make();
        print_title(section->title());
        const Outcome o = section->run(ctx);
        progress.clear();
        if (o == Outcome::promise_broken) ++broken;
        outcome = worst(outcome, o);
        if (o == Outcome::api_error) break;
    }

    if (!opt.out_dir.empty() && outcome != Outcome::api_error) {
        if (!write_report(opt.out_dir, recorder, stream, printed_choices())) return 2;
        std::printf("\nplots of error and memory over the stream: %s/index.html\n", opt.out_dir.c_str());
    }
    // A hard promise broken at a checkpoint (the plots' figures) is broken.
    for (const auto &series : recorder.all()) {
        if (series->hard && !series_held(*series)) {
            std::printf("FAIL: %s: the measured error exceeds the promise at a checkpoint\n", series->title.c_str());
            outcome = worst(outcome, Outcome::promise_broken);
        }
    }

    std::printf("\n");
    switch (outcome) {
        case Outcome::ok:
            std::printf("all hard promises held (%zu structure%s, %.1f s)\n", all_sections().size(),
                        all_sections().size() == 1 ? "" : "s", seconds_since(t0));
            return 0;
        case Outcome::promise_broken:
            std::printf("FAIL: %zu structure%s broke a hard promise (see FAIL lines above)\n", broken,
                        broken == 1 ? "" : "s");
            return 1;
        case Outcome::api_error:
            std::printf("FAIL: a library call failed (see the message above)\n");
            return 3;
    }
    return 3;
}
