// main.cpp - tf-demo: replays an event stream through every structure of
// libtemporalfilters next to an exact reference and reports memory, speed
// and measured error against each structure's promise.
//
//   tf-demo [--events N] [--seed S] [--horizon T] [--interval T] [--ttl T]
//           [--target P] [FILE.csv]
//
// Exit status: 0 when every hard promise held, 1 when one was broken,
// 2 on bad arguments or input, 3 when a library call failed.
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
    "usage: tf-demo [options] [FILE.csv]\n"
    "\n"
    "Replays a stream of (timestamp, key) events through every structure of\n"
    "libtemporalfilters and compares each with an exact reference.\n"
    "Without FILE, a synthetic stream is generated (timestamps in ms).\n"
    "FILE holds `timestamp,key` lines (unsigned integer timestamps in any\n"
    "unit; a header line is skipped).\n"
    "\n"
    "options:\n"
    "  --events N     events to generate, or the most to read (default 4000000)\n"
    "  --seed S       seed of the synthetic stream and the sketches (default 1)\n"
    "  --horizon T    how far back last-seen queries look (default 60000 ms;\n"
    "                 CSV: 1/60 of the stream's time span)\n"
    "  --interval T   pacing: one grant per key per T (default horizon/60)\n"
    "  --ttl T        TTL prefilter: cache entries live for T (default horizon/2)\n"
    "  --target P     too-new probability the sketches are sized for (default 0.01)\n"
    "  -h, --help     this text\n";

bool parse_u64(const char *text, uint64_t *out) {
    if (text == nullptr || *text < '0' || *text > '9') return false;
    errno = 0;
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = v;
    return true;
}

// Returns 0 to go on, or an exit status.
int parse_args(int argc, char **argv, demo::Options *o) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i], value;
        const bool has_value = arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos;
        if (has_value) value = arg.substr(arg.find('=') + 1), arg = arg.substr(0, arg.find('='));
        auto take = [&](const char *name) -> const char * {
            if (has_value) return argv[i] + std::strlen(name) + 1;
            if (i + 1 >= argc) return nullptr;
            return argv[++i];
        };
        auto number = [&](const char *name, uint64_t *dst, bool positive) {
            const char *v = take(name);
            if (!parse_u64(v, dst) || (positive && *dst == 0)) {
                std::fprintf(stderr, "tf-demo: %s needs a%s integer, got \"%s\"\n", name,
                             positive ? " positive" : "n unsigned", v ? v : "");
                return false;
            }
            return true;
        };
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            return -1;
        } else if (arg == "--events") {
            if (!number("--events", &o->events, true)) return 2;
            o->events_given = true;
        } else if (arg == "--seed") {
            if (!number("--seed", &o->seed, false)) return 2;
        } else if (arg == "--horizon") {
            if (!number("--horizon", &o->horizon, true)) return 2;
        } else if (arg == "--interval") {
            if (!number("--interval", &o->interval, true)) return 2;
        } else if (arg == "--ttl") {
            if (!number("--ttl", &o->ttl, true)) return 2;
        } else if (arg == "--target") {
            const char *v = take("--target");
            char *end = nullptr;
            o->target = v ? std::strtod(v, &end) : NAN;
            if (v == nullptr || *end != '\0' || !(o->target > 0.0 && o->target <= 0.5)) {
                std::fprintf(stderr, "tf-demo: --target needs a probability in (0, 0.5], got \"%s\"\n", v ? v : "");
                return 2;
            }
        } else if (arg.size() > 1 && arg[0] == '-') {
            std::fprintf(stderr, "tf-demo: unknown option %s\n\n%s", arg.c_str(), kUsage);
            return 2;
        } else if (o->csv_path.empty()) {
            o->csv_path = arg;
        } else {
            std::fprintf(stderr, "tf-demo: one CSV file at most (got %s and %s)\n", o->csv_path.c_str(), arg.c_str());
            return 2;
        }
    }
    return 0;
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

    Stream stream;
    if (opt.csv_path.empty()) {
        stream = make_synthetic_stream(opt.events, opt.seed);
    } else if (!load_csv_stream(opt.csv_path, opt.events_given ? opt.events : UINT64_MAX, &stream)) {
        return 2;
    }
    const double load_seconds = seconds_since(t0);

    // Time scales: given, or the synthetic defaults, or fractions of the CSV's span.
    const uint64_t time_span = stream.last - stream.first;
    const uint64_t horizon = opt.horizon            ? opt.horizon
                             : opt.csv_path.empty() ? 60000
                                                    : std::max<uint64_t>(1, time_span / 60);
    Context ctx{stream,
                opt,
                horizon,
                opt.interval ? opt.interval : std::max<uint64_t>(1, horizon / 60),
                opt.ttl ? opt.ttl : std::max<uint64_t>(1, horizon / 2),
                {},
                {},
                {},
                std::max<uint64_t>(1, horizon / 2)};
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
        if (o == Outcome::promise_broken) ++broken;
        outcome = worst(outcome, o);
        if (o == Outcome::api_error) break;
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
