// demo.hpp - shared pieces of tf-demo: the event stream, the options, the
// section interface every structure implements, timing, memory accounting
// for the exact references, and report formatting.
//
// The demo uses only the public C API of libtemporalfilters.
#ifndef TF_DEMO_DEMO_HPP
#define TF_DEMO_DEMO_HPP

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <temporalfilters.h>

namespace demo {

// ---------------------------------------------------------------------------
// The stream

// Every distinct key of the stream, stored once in one contiguous buffer.
class KeyTable {
   public:
    uint32_t add(const char *bytes, size_t len) {
        bytes_.append(bytes, len);
        end_.push_back(bytes_.size());
        return uint32_t(end_.size() - 2);
    }
    const char *data(uint32_t k) const { return bytes_.data() + end_[k]; }
    size_t size(uint32_t k) const { return size_t(end_[k + 1] - end_[k]); }
    uint32_t count() const { return uint32_t(end_.size() - 1); }

   private:
    std::string bytes_;
    std::vector<uint64_t> end_{0};  // key k spans [end_[k], end_[k + 1])
};

struct Stream {
    std::string description;     // what the stream is, for the report
    std::string detail;          // a second line of it (may be empty)
    std::string unit;            // "ms" for the synthetic stream, "units" for CSV
    std::vector<uint64_t> time;  // event timestamps (>= 1), in stream order
    std::vector<uint32_t> key;   // event keys, indexes into `keys`
    KeyTable keys;
    uint64_t first = 0, last = 0;  // smallest and largest timestamp
    bool sorted = true;            // timestamps never decrease

    size_t events() const { return time.size(); }
};

struct Options {
    uint64_t events = 4000000;  // synthetic stream length, or CSV line limit
    bool events_given = false;
    uint64_t seed = 1;
    std::string csv_path;                         // empty: synthetic stream; "-": standard input
    uint64_t horizon = 0, interval = 0, ttl = 0;  // 0: default
    double target = 0.01;                         // too-new probability to size for
    bool target_given = false;
    // The structures' own parameters; 0 (or a negative delta): chosen from
    // the stream, and the report says how.
    uint64_t capacity = 0;      // keys (or items) every sized structure is built for
    uint64_t limit = 0;         // rate limiter: requests per key per window
    uint64_t window = 0;        // rate limiter: its window W
    uint64_t buckets = 0;       // rate limiter: buckets per window
    uint64_t global_limit = 0;  // rate limiter (b): the cap over all keys
    uint64_t max_memory = 0;    // rotating cuckoo (a): its memory cap in bytes
    uint64_t count_window = 0;  // recency window: W, in events
    uint64_t inv_eps = 0;       // recency window: eps = 1 / inv_eps
    double delta = -1.0;        // recency window (b): false-match probability
    std::string out_dir;        // where plots and index.html go (empty: none)
    int progress = -1;          // -1: when stderr is a terminal; 0: never; 1: always
};

// Prints one parameter the demo chose: `what` (e.g. "window 60 s"), and
// either that `option` set it or why it was chosen (`why`), e.g.
//   chose   window 60 s: 1/10 of the stream's span, since --window was not given
void print_choice(const std::string &what, const char *option, bool given, const std::string &why);

// ---------------------------------------------------------------------------
// Measurements over the stream, for the plots (report.cpp): each structure
// records its measured error and memory at its checkpoints, beside its promise.

struct SeriesPoint {
    double x;         // events replayed so far
    double measured;  // the error measured so far
    double bound;     // what the promise allows
    double memory;    // the structure's memory, bytes
    double exact;     // the exact reference's memory, bytes
};

struct Series {
    std::string name;         // file stem, e.g. "rate_limiter"
    std::string title;        // "Rate limiter (tf_rate_limiter), exact mode"
    std::string error_label;  // what `measured` is
    std::string promise;      // the promise, in one sentence
    bool hard = true;         // hard: measured <= bound at every point; else a statistical target
    std::string bound_label;  // legend of the bound line
    std::vector<SeriesPoint> points;
    void add(double x, double measured, double bound, double memory, double exact) {
        points.push_back({x, measured, bound, memory, exact});
    }
};

class Recorder {
   public:
    Series *open(const std::string &name, const std::string &title, const std::string &error_label,
                 const std::string &promise, bool hard, const std::string &bound_label) {
        all_.push_back(std::unique_ptr<Series>(new Series{name, title, error_label, promise, hard, bound_label, {}}));
        return all_.back().get();
    }
    const std::vector<std::unique_ptr<Series>> &all() const { return all_; }

   private:
    std::vector<std::unique_ptr<Series>> all_;
};

// Progress on stderr: "tf-demo: <what> 42%", at most a few times a second.
class Progress {
   public:
    explicit Progress(bool on, bool tty) : on_(on), tty_(tty) {}
    void at(const char *what, uint64_t done, uint64_t total);
    void clear();  // ends the progress line (on a terminal)
    bool on() const { return on_; }

   private:
    bool on_, tty_;
    bool dirty_ = false;
    int last_percent_ = -1;
    std::string last_what_;
    std::chrono::steady_clock::time_point last_{};
};

// Writes <dir>/<series>.dat, .gp and the -error.svg and -memory.svg plots
// (gnuplot, SVG terminal), and <dir>/index.html showing them. False (with
// the reason on stderr) when a file cannot be written or gnuplot fails.
bool write_report(const std::string &dir, const Recorder &rec, const Stream &stream,
                  const std::vector<std::string> &choices);
// Every choice print_choice() printed, for the report.
const std::vector<std::string> &printed_choices();
// Whether a hard series stayed within its bound at every point.
bool series_held(const Series &s);

// Builds the synthetic stream (deterministic for a given seed).
Stream make_synthetic_stream(uint64_t events, uint64_t seed);

// Loads `timestamp,key` lines. On malformed input prints the problems to
// stderr and returns false.
bool load_csv_stream(const std::string &path, uint64_t max_events, Stream *out);

// Distinct keys within any window (t - width, t] ending at an event.
struct WindowStats {
    uint64_t width = 0;
    uint64_t max = 0;   // largest count over all events
    double mean = 0.0;  // average count seen by the events
};
WindowStats distinct_per_window(const Stream &s, uint64_t width);

// What every section is given: the stream and the time scales to measure at.
struct Context {
    const Stream &stream;
    const Options &options;
    uint64_t horizon;   // last-seen queries look this far back
    uint64_t interval;  // pacing: one grant per key per interval
    uint64_t ttl;       // TTL prefilter: entries live this long
    uint64_t window;    // the rate limiter's window
    WindowStats keys_per_horizon, keys_per_interval, keys_per_ttl;
    uint64_t checkpoint_every;  // stream time between measurements of the state
    Recorder *recorder;         // measurements for the plots
    Progress *progress;         // progress on stderr
};

// ---------------------------------------------------------------------------
// Sections: one per structure of the library.

enum class Outcome { ok = 0, promise_broken = 1, api_error = 2 };

inline Outcome worst(Outcome a, Outcome b) { return int(a) > int(b) ? a : b; }

class Section {
   public:
    virtual ~Section() = default;
    virtual const char *title() const = 0;  // e.g. "RecencySketch (tf_recency_sketch)"
    // Replays the stream, prints its part of the report, and says whether
    // every hard promise held.
    virtual Outcome run(const Context &ctx) = 0;
};

using SectionFactory = std::unique_ptr<Section> (*)();

// All sections, in report order (sections.cpp).
const std::vector<SectionFactory> &all_sections();

// ---------------------------------------------------------------------------
// Helpers

// Prints a failed library call (status name and last error message) to
// stderr; returns true when `status` is TF_OK.
bool check(tf_status status, const char *what);

// Accumulates the wall time of the code it measures.
class Stopwatch {
   public:
    void start() { t0_ = std::chrono::steady_clock::now(); }
    void stop() {
        ns_ += double(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count());
    }
    double per(uint64_t ops) const { return ops == 0 ? 0.0 : ns_ / double(ops); }

   private:
    std::chrono::steady_clock::time_point t0_{};
    double ns_ = 0.0;
};

// Heap accounting for the exact references: bytes of the chunks malloc
// hands out (glibc x86-64: 8-byte header, 16-byte granules, 32 minimum).
inline size_t malloc_chunk(size_t n) {
    size_t c = (n + 8 + 15) & ~size_t(15);
    return c < 32 ? 32 : c;
}

struct HeapCounter {
    size_t bytes = 0;
};

template <class T>
struct CountingAllocator {
    using value_type = T;
    HeapCounter *counter;
    explicit CountingAllocator(HeapCounter *c) : counter(c) {}
    template <class U>
    CountingAllocator(const CountingAllocator<U> &o) : counter(o.counter) {}  // NOLINT: rebinding
    T *allocate(size_t n) {
        counter->bytes += malloc_chunk(n * sizeof(T));
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T *p, size_t n) {
        counter->bytes -= malloc_chunk(n * sizeof(T));
        std::allocator<T>().deallocate(p, n);
    }
    template <class U>
    bool operator==(const CountingAllocator<U> &o) const {
        return counter == o.counter;
    }
    template <class U>
    bool operator!=(const CountingAllocator<U> &o) const {
        return counter != o.counter;
    }
};

// The exact reference of a section: key bytes -> a number (a timestamp or
// an event index), with its heap counted.
using ExactValue = std::pair<const std::string, uint64_t>;
using ExactMap = std::unordered_map<std::string, uint64_t, std::hash<std::string>, std::equal_to<std::string>,
                                    CountingAllocator<ExactValue>>;

struct Exact {
    HeapCounter heap;
    ExactMap map{CountingAllocator<ExactValue>(&heap)};
    std::string key;         // reused lookup buffer: no allocation per lookup
    bool long_keys = false;  // a key too long for the string's inline buffer was looked up

    // Every key enters the map through this buffer.
    const std::string &k(const Stream &s, uint32_t i) {
        key.assign(s.keys.data(i), s.keys.size(i));
        long_keys = long_keys || key.size() > 15;
        return key;
    }
    // Heap bytes, including keys too long for the string's inline buffer
    // (only when there can be one: the walk over the map is what costs).
    size_t memory() const {
        size_t n = heap.bytes + sizeof map;
        if (long_keys)
            for (const auto &e : map)
                if (e.first.capacity() > 15) n += malloc_chunk(e.first.capacity() + 1);
        return n;
    }
};

// Verdicts. A hard promise: PASS or FAIL.
inline const char *hard(bool ok) { return ok ? "PASS" : "FAIL"; }

// A measured rate against its target: "ok" unless it exceeds the target by
// more than three standard errors of a sample of `n` independent keys.
inline const char *soft(double measured, double target, uint64_t n) {
    if (n == 0) return "";
    return measured <= target + 3.0 * std::sqrt(target * (1.0 - target) / double(n)) ? "ok" : "HIGH";
}

inline double ratio(uint64_t a, uint64_t b) { return b == 0 ? 0.0 : double(a) / double(b); }

// Counts the distinct keys behind a set of observations. Observations of one
// key are correlated (an idle key whose cells are covered stays covered), so
// statistical verdicts count keys, not observations.
class DistinctKeys {
   public:
    explicit DistinctKeys(size_t keys) : seen_(keys, 0) {}
    void add(uint32_t k) {
        if (!seen_[k]) seen_[k] = 1, ++n_;
    }
    uint64_t count() const { return n_; }

   private:
    std::vector<char> seen_;
    uint64_t n_ = 0;
};

// Samples of a structure's own error estimate, weighted by the number of
// measurements they stand next to.
struct EstimateMean {
    double sum = 0.0, weight = 0.0;
    void add(double p, double w) { sum += p * w, weight += w; }
    double mean() const { return weight == 0.0 ? 0.0 : sum / weight; }
};

// Deterministic pseudo-random numbers (SplitMix64).
class Rng {
   public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
    uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }

   private:
    uint64_t state_;
};

// Report formatting.
std::string count(uint64_t n);                  // 4,000,000
std::string bytes(size_t n);                    // 5.27 MiB
std::string percent(double fraction);           // 0.183%
std::string nanos(double ns);                   // 61.2 ns
std::string span(const Stream &s, uint64_t t);  // 1h 02m 03s for ms, else the number
void print_title(const std::string &title);     // == title =====
void print_subtitle(const std::string &title, const std::string &note);
void print_row(const std::string &label, const std::string &text);
// A row of three columns: the structure, its exact reference, and that
// reference pruned to what it would need to keep.
void print_columns(const std::string &label, const std::string &a, const std::string &b, const std::string &c);
// A row that ends in a verdict, right-aligned: PASS/FAIL for a hard
// promise, ok/HIGH for a statistical one.
void print_verdict(const std::string &label, const std::string &text, const char *verdict);

}  // namespace demo

#endif  // TF_DEMO_DEMO_HPP
