// stream.cpp - the event streams of tf-demo: a synthetic one (Zipf keys,
// bursts, key scans, idle gaps) and `timestamp,key` CSV files.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "demo.hpp"

namespace demo {

namespace {

// Zipf(s) over ranks 0..n-1 by inversion of the cumulative distribution.
class Zipf {
   public:
    Zipf(uint32_t n, double s) : cdf_(n) {
        double sum = 0.0;
        for (uint32_t i = 0; i < n; ++i) cdf_[i] = (sum += std::pow(double(i) + 1.0, -s));
        for (double &c : cdf_) c /= sum;
    }
    uint32_t operator()(Rng &rng) const {
        auto it = std::upper_bound(cdf_.begin(), cdf_.end(), rng.uniform());
        return uint32_t(std::min<size_t>(size_t(it - cdf_.begin()), cdf_.size() - 1));
    }

   private:
    std::vector<double> cdf_;
};

double exponential(Rng &rng, double mean) { return -mean * std::log1p(-rng.uniform()); }
double between(Rng &rng, double lo, double hi) { return lo + (hi - lo) * rng.uniform(); }

}  // namespace

// The synthetic stream, in milliseconds since the Unix epoch:
//  - background traffic: Poisson arrivals at ~1000 events/s, keys Zipf(1.0)
//    over a million users;
//  - flash crowds: every ~7 min on average, 10-40 s at 4x the rate;
//  - hot-key bursts: every ~2 min, one user hammers for 2-10 s, one request
//    every 2-20 ms (pacing has something to deny);
//  - scans: every ~15 min, 20,000-50,000 never-seen keys within 10-30 s
//    (distinct keys spike, the sketch fills up);
//  - idle gaps: every ~10 min, 1-4 min without any event (entries expire).
Stream make_synthetic_stream(uint64_t events, uint64_t seed) {
    const uint32_t universe = 1000000;
    const double zipf_s = 1.0, base_rate = 1.0;  // events per ms
    const double min = 60000.0;
    Rng rng(seed);
    Zipf zipf(universe, zipf_s);

    Stream s;
    char desc[200];
    std::snprintf(desc, sizeof desc, "synthetic, seed %llu, timestamps in ms", (unsigned long long)seed);
    s.description = desc;
    std::snprintf(desc, sizeof desc, "Zipf(%.1f) over %s users; flash crowds, hot keys, scans, idle gaps", zipf_s,
                  count(universe).c_str());
    s.detail = desc;
    s.unit = "ms";
    s.time.reserve(events);
    s.key.reserve(events);

    std::vector<uint32_t> index_of_user(universe, UINT32_MAX);  // key index, assigned at first use
    auto user_key = [&](uint32_t rank) {
        // Spread the popular users over the id space so that ids say nothing.
        const uint32_t id = uint32_t((uint64_t(rank) * 2654435761ull) % universe);
        if (index_of_user[id] == UINT32_MAX) {
            char name[32];
            int n = std::snprintf(name, sizeof name, "user:%u", id);
            index_of_user[id] = s.keys.add(name, size_t(n));
        }
        return index_of_user[id];
    };
    uint32_t scan_serial = 0;
    auto scan_key = [&]() {
        char name[32];
        int n = std::snprintf(name, sizeof name, "scan:%u", scan_serial++);
        return s.keys.add(name, size_t(n));
    };

    const double inf = std::numeric_limits<double>::infinity();
    double t = 1.7e12;  // mid-November 2023, in ms
    double next_idle = t + exponential(rng, 10 * min), next_flash = t + exponential(rng, 7 * min);
    double next_hot = t + exponential(rng, 2 * min), next_scan = t + exponential(rng, 15 * min);
    double flash_end = 0.0;
    double hot_at = inf, hot_end = 0.0, hot_period = 0.0;
    uint32_t hot_key = 0;
    double scan_at = inf, scan_period = 0.0;
    uint32_t scan_left = 0;

    while (s.time.size() < events) {
        const double rate = base_rate * (t < flash_end ? 4.0 : 1.0);
        const double base_at = t + exponential(rng, 1.0 / rate);
        const double first = std::min({base_at, hot_at, scan_at, next_idle, next_flash, next_hot, next_scan});
        if (first == next_idle) {  // silence; bursts in progress stop
            t = next_idle + between(rng, 1 * min, 4 * min);
            next_idle = t + exponential(rng, 10 * min);
            hot_at = scan_at = inf;
            flash_end = 0.0;
            continue;
        }
        t = first;
        if (first == next_flash) {
            flash_end = t + between(rng, 10000, 40000);
            next_flash = t + exponential(rng, 7 * min);
            continue;
        }
        if (first == next_hot) {
            hot_key = user_key(uint32_t(rng.below(universe)));
            hot_at = t;
            hot_end = t + between(rng, 2000, 10000);
            hot_period = between(rng, 2, 20);
            next_hot = t + exponential(rng, 2 * min);
            continue;
        }
        if (first == next_scan) {
            scan_left = uint32_t(between(rng, 20000, 50000));
            scan_period = between(rng, 10000, 30000) / scan_left;
            scan_at = t;
            next_scan = t + exponential(rng, 15 * min);
            continue;
        }
        uint32_t key;
        if (first == hot_at) {
            key = hot_key;
            hot_at += hot_period * between(rng, 0.8, 1.2);
            if (hot_at > hot_end) hot_at = inf;
        } else if (first == scan_at) {
            key = scan_key();
            scan_at = --scan_left == 0 ? inf : scan_at + scan_period;
        } else {
            key = user_key(zipf(rng));
        }
        s.time.push_back(uint64_t(t));
        s.key.push_back(key);
    }
    if (!s.time.empty()) s.first = s.time.front(), s.last = s.time.back();
    return s;
}

// ---------------------------------------------------------------------------
// CSV

namespace {

bool parse_timestamp(const char *p, size_t n, uint64_t *out) {
    if (n == 0 || n > 20) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        if (p[i] < '0' || p[i] > '9') return false;
        const uint64_t d = uint64_t(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

void trim(const char **p, size_t *n) {
    while (*n > 0 && (**p == ' ' || **p == '\t')) ++*p, --*n;
    while (*n > 0 && ((*p)[*n - 1] == ' ' || (*p)[*n - 1] == '\t')) --*n;
}

}  // namespace

bool load_csv_stream(const std::string &path, uint64_t max_events, Stream *out) {
    const bool from_stdin = path == "-";
    const std::string name = from_stdin ? std::string("<stdin>") : path;
    std::FILE *f = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        std::fprintf(stderr, "tf-demo: cannot open %s: %s\n", name.c_str(), std::strerror(errno));
        return false;
    }
    std::string text;
    char buf[1 << 16];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
    const bool read_error = std::ferror(f) != 0;
    if (!from_stdin) std::fclose(f);
    if (read_error) {
        std::fprintf(stderr, "tf-demo: error reading %s\n", name.c_str());
        return false;
    }

    Stream s;
    s.unit = "units";
    std::unordered_map<std::string, uint32_t> index;
    uint64_t line_no = 0, bad = 0;
    bool zero_seen = false, first_content = true;
    size_t pos = 0;
    auto complain = [&](const char *why, const char *line, size_t len) {
        if (++bad <= 10)
            std::fprintf(stderr, "%s:%llu: %s: \"%.*s\"\n", name.c_str(), (unsigned long long)line_no, why,
                         int(std::min<size_t>(len, 60)), line);
    };
    while (pos < text.size() && s.time.size() < max_events) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        const char *line = text.data() + pos;
        size_t len = end - pos;
        pos = end + 1;
        ++line_no;
        if (len > 0 && line[len - 1] == '\r') --len;
        const char *tp = line;
        size_t tn = len;
        trim(&tp, &tn);
        if (tn == 0) continue;  // blank line
        const bool may_be_header = first_content;
        first_content = false;
        const char *comma = static_cast<const char *>(std::memchr(line, ',', len));
        if (comma == nullptr) {
            complain("expected \"timestamp,key\" (no comma)", line, len);
            continue;
        }
        tp = line;
        tn = size_t(comma - line);
        trim(&tp, &tn);
        const char *kp = comma + 1;
        size_t kn = size_t(line + len - kp);
        trim(&kp, &kn);
        if (kn >= 2 && kp[0] == '"' && kp[kn - 1] == '"') ++kp, kn -= 2;
        uint64_t ts;
        if (!parse_timestamp(tp, tn, &ts)) {
            if (may_be_header) continue;  // a header line such as "timestamp,key"
            complain("timestamp is not an unsigned 64-bit integer", line, len);
            continue;
        }
        if (kn == 0) {
            complain("empty key", line, len);
            continue;
        }
        if (ts == 0) zero_seen = true;
        auto it = index.try_emplace(std::string(kp, kn), 0u);
        if (it.second) it.first->second = s.keys.add(kp, kn);
        s.time.push_back(ts);
        s.key.push_back(it.first->second);
    }
    if (bad > 0) {
        std::fprintf(stderr, "tf-demo: %s: %llu malformed line%s%s\n", name.c_str(), (unsigned long long)bad,
                     bad == 1 ? "" : "s", bad > 10 ? " (first 10 shown)" : "");
        return false;
    }
    if (s.time.empty()) {
        std::fprintf(stderr, "tf-demo: %s holds no events\n", name.c_str());
        return false;
    }
    std::string note;
    if (zero_seen) {
        // The library reserves 0 for "never": shift every timestamp by one.
        for (uint64_t &t : s.time) {
            if (t == UINT64_MAX) {
                std::fprintf(stderr, "tf-demo: %s: timestamps span the whole 64-bit range\n", name.c_str());
                return false;
            }
            ++t;
        }
        note = "; timestamps shifted by +1 (0 means never)";
    }
    s.first = *std::min_element(s.time.begin(), s.time.end());
    s.last = *std::max_element(s.time.begin(), s.time.end());
    s.sorted = std::is_sorted(s.time.begin(), s.time.end());
    s.description = from_stdin ? std::string("CSV from standard input") : "CSV " + path;
    s.detail = std::string(s.sorted ? "in time order" : "not in time order") + note;
    *out = std::move(s);
    return true;
}

// ---------------------------------------------------------------------------

WindowStats distinct_per_window(const Stream &s, uint64_t width) {
    WindowStats w;
    w.width = width;
    const size_t n = s.events();
    if (n == 0) return w;
    // Walk the events in time order (a permutation when the file was not sorted).
    std::vector<uint32_t> order;
    if (!s.sorted) {
        order.resize(n);
        for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return s.time[a] < s.time[b]; });
    }
    auto at = [&](size_t i) { return s.sorted ? i : size_t(order[i]); };
    std::vector<uint32_t> in_window(s.keys.count(), 0);
    uint64_t distinct = 0;
    double sum = 0.0;
    size_t left = 0;
    for (size_t right = 0; right < n; ++right) {
        const uint64_t t = s.time[at(right)];
        if (in_window[s.key[at(right)]]++ == 0) ++distinct;
        while (t >= width && s.time[at(left)] <= t - width)
            if (--in_window[s.key[at(left++)]] == 0) --distinct;
        w.max = std::max(w.max, distinct);
        sum += double(distinct);
    }
    w.mean = sum / double(n);
    return w;
}

}  // namespace demo
