// Long streams (issue 17, point 5): one driver, one mode per structure.
//
//   soak MODE [--events N] [--seed S] [--print-every C]
//
// MODE is one of the names soak --help lists (every structure; both layouts
// of the age-partitioned filter, both modes of the rate limiter, the three
// modes of the recency window). The driver feeds one stream to the
// structure: time in milliseconds, about 1,650 events a second (an event
// every 0.6 ms on average), so that 1e9 events span about a week, in
// cycles of 500,000 events:
//
//   [0, 200k)     steady
//   [200k, 260k)  a burst: the first 10,000 events at one timestamp, the
//                 rest about 100x the steady rate, keys drawn from the
//                 whole key space (mostly new keys)
//   [260k, 300k)  steady; at 300k the clock steps back half a window
//   [300k, 340k)  steady; at 340k it steps back two windows
//   [340k, 380k)  steady; at 380k an idle gap of 3 windows + 1 ms, longer
//                 than every window of every structure here
//   [380k, 500k)  steady (72 s: 3.6 windows, so that the time-limited
//                 filter has settled after the gap), then a checkpoint
//
// Keys: 2^20 ids; 30% of events come from 4,096 hot ids, the rest are
// uniform. The exact reference follows only the sampled ids (1 in 64, by
// a hash of the id independent of the library's), so that it stays small
// however long the stream. Every event of a sampled id is checked against
// the reference before it is applied; at every checkpoint all sampled ids,
// and 4,096 ids never inserted, are checked again, and:
//   (1) the structure's memory figure (tf_<noun>_memory) is within the
//       bound its header states, and the process's RSS has not grown after
//       warm-up (the first checkpoint) beyond what that bound allows plus
//       a fixed slack (a leak would show here);
//   (2) the structure's error promise, as its header states it, holds for
//       every sampled id.
// Any failure exits non-zero with a message naming the event, the time,
// the id and what was expected. Speed (events per second between
// checkpoints) is printed, not asserted.
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

extern "C" {
#include "rw_util.h"
#include "test_util.h"
}

namespace {

// ---- failures ---------------------------------------------------------------

const char *g_mode = "?";
uint64_t g_event = 0, g_now = 0, g_checks = 0;

[[noreturn]] void fail(const char *fmt, ...) {
    std::fprintf(stderr, "soak %s: FAIL at event %llu (now %llu ms): ", g_mode, (unsigned long long)g_event,
                 (unsigned long long)g_now);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "\n");
    std::fflush(stdout);
    // _Exit: the structure is not freed, and LeakSanitizer's report of
    // what it holds would only bury the message above.
    std::_Exit(1);
}

#define CHECK(cond, ...)                \
    do {                                \
        ++g_checks;                     \
        if (!(cond)) fail(__VA_ARGS__); \
    } while (0)

#define OK(call)                                                                                             \
    do {                                                                                                     \
        const tf_status st_ = (call);                                                                        \
        if (st_ != TF_OK) fail("%s returned %s: %s", #call, tf_status_string(st_), tf_last_error_message()); \
    } while (0)

typedef unsigned long long ull;

// ---- the stream ---------------------------------------------------------------

constexpr uint64_t kCycle = 500000;
constexpr uint64_t kWindowMs = 20000;  // the longest window of any structure here
constexpr uint64_t kGapMs = 3 * kWindowMs + 1;
constexpr uint64_t kIds = uint64_t(1) << 20;
constexpr uint64_t kHotIds = 4096;
constexpr uint64_t kProbeIds = 4096;     // never inserted: kIds .. kIds + kProbeIds
constexpr uint64_t kStart = 1000000000;  // ms; backward steps never reach 0

uint64_t mix(uint64_t x) {  // not the library's hash: sampling stays independent of it
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}
bool sampled(uint64_t id) { return (mix(id ^ 0x5a17) & 63) == 0; }

struct Stream {
    tu_rng rng;
    uint64_t now = kStart, i = 0;
    explicit Stream(uint64_t seed) { rng.s = seed; }
    // The next event: its id, and the time it happens at (g_now).
    uint64_t next() {
        const uint64_t c = i % kCycle;
        if (c == 300000) now = now > kWindowMs / 2 ? now - kWindowMs / 2 : 1;
        if (c == 340000) now = now > 2 * kWindowMs ? now - 2 * kWindowMs : 1;
        if (c == 380000) now += kGapMs;
        const bool burst = c >= 200000 && c < 260000;
        if (burst) {
            if (c >= 210000 && tu_below(&rng, 160) == 0) ++now;
        } else if (tu_below(&rng, 10) < 6) {
            ++now;
        }
        const uint64_t id = !burst && tu_below(&rng, 10) < 3 ? tu_below(&rng, kHotIds) : tu_below(&rng, kIds);
        ++i;
        return id;
    }
};

tu_key key_of(uint64_t id) { return tu_make_key('S', id); }

// ---- the exact reference of one sampled id -------------------------------------

constexpr int kRing = 16;  // the limiter's limit is below this
struct Ref {
    uint64_t max_time = 0;        // newest time it was given (the sketch's truth)
    uint64_t eff = 0;             // the clamped time of its last insert (filters)
    uint64_t idx = 0;             // the index of its last insert (count windows)
    uint64_t mark = 0;            // the cuckoo's forgotten_memory after its last add
    uint64_t latest = 0;          // the limiter's clamped clock for the key
    uint64_t grants[kRing] = {};  // its newest grant times (clamped), a ring
    int ngrants = 0, head = 0;
};
typedef std::unordered_map<uint64_t, Ref> RefMap;

// ---- memory ---------------------------------------------------------------------

// The process's own peak (VmHWM: getrusage's ru_maxrss would also count
// the parent's peak before exec, e.g. meson's).
uint64_t peak_rss_bytes() {
    FILE *f = std::fopen("/proc/self/status", "r");
    if (!f) fail("cannot read /proc/self/status");
    char line[256];
    unsigned long long kb = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::sscanf(line, "VmHWM: %llu kB", &kb) == 1) break;
    std::fclose(f);
    return kb * 1024;
}

// ---- one structure behind one interface -----------------------------------------

struct Soak {
    const tu_structure *st;
    void *obj = nullptr;
    uint64_t inserts = 0;  // events applied so far (the count windows' clock)
    uint64_t hi = 0;       // the highest time given (the filters clamp to it)
    explicit Soak(const tu_structure *s) : st(s) {}
    virtual ~Soak() { st->free(obj); }
    // Applies one event; for a sampled id `ref` is its reference (checked
    // first, updated after), else NULL.
    virtual void event(uint64_t id, uint64_t now, Ref *ref) = 0;
    // Checks one sampled id at a checkpoint (its event count or time as now).
    virtual void check(uint64_t id, const Ref &ref, uint64_t now) = 0;
    // Checks an id never inserted.
    virtual void probe(uint64_t id, uint64_t now) = 0;
    // The bound the header states for the memory figure now.
    virtual uint64_t bound() = 0;
    // Further figures for the checkpoint line (and their own checks).
    virtual std::string extra(uint64_t now) {
        (void)now;
        return "";
    }
    // One answer of a read-only call of the shape (handle, key, key_len, out).
    template <typename Handle, typename Out>
    Out ask(tf_status (*call)(const Handle *, const void *, size_t, Out *), uint64_t id) const {
        const tu_key k = key_of(id);
        Out out{};
        OK(call(static_cast<const Handle *>(obj), k.b, sizeof k.b, &out));
        return out;
    }
    // The event of a count-window structure: a sampled key is checked,
    // then inserted; its reference takes the index of the insert.
    template <typename Handle>
    void insert_counted(tf_status (*insert)(Handle *, const void *, size_t), uint64_t id, uint64_t now, Ref *ref) {
        if (ref && ref->eff) check(id, *ref, now);
        const tu_key k = key_of(id);
        OK(insert(static_cast<Handle *>(obj), k.b, sizeof k.b));
        if (ref) ref->idx = inserts, ref->eff = 1;
        ++inserts;
    }
    uint64_t memory() const {
        uint64_t b = 0;
        OK(st->memory(obj, &b));
        return b;
    }
    uint64_t clamp(uint64_t now) {
        hi = std::max(hi, now);
        return hi;
    }
};

std::string fmt(const char *f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// A structure whose memory is fixed at creation: it must stay exactly what
// it was, which is at most `limit` (the header's formula).
struct FixedMemory {
    uint64_t at_creation = 0, limit = 0;
    uint64_t check(uint64_t now_bytes) const {
        CHECK(now_bytes == at_creation, "memory %llu B, fixed at creation at %llu B", (ull)now_bytes, (ull)at_creation);
        return limit;
    }
};

// RecencySketch: a query never answers older than the key's true last
// update (its newest timestamp, whatever order they came in).
struct SketchSoak : Soak {
    FixedMemory fixed;
    uint64_t too_new = 0, swept = 0, probes_seen = 0, probes = 0;
    SketchSoak() : Soak(&tu_recency_sketch) {
        tf_recency_sketch *s = nullptr;
        OK(tf_recency_sketch_new_for(kIds, 0.01, 17, 0, &s));
        obj = s;
        tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
        OK(tf_recency_sketch_get_info(s, &info));
        fixed.at_creation = memory();
        // "8 bytes per cell plus a small header" (taken as 4 KiB)
        fixed.limit = info.cells * 8 + 4096;
        CHECK(fixed.at_creation <= fixed.limit, "memory %llu B above 8 B x %llu cells + 4 KiB", (ull)fixed.at_creation,
              (ull)info.cells);
    }
    tf_recency_sketch *s() const { return static_cast<tf_recency_sketch *>(obj); }
    uint64_t query(uint64_t id) const { return ask(tf_recency_sketch_query, id); }
    void event(uint64_t id, uint64_t now, Ref *ref) override {
        const tu_key k = key_of(id);
        OK(tf_recency_sketch_update(s(), k.b, sizeof k.b, now));
        if (ref) {
            ref->max_time = std::max(ref->max_time, now);
            const uint64_t q = query(id);
            CHECK(q >= ref->max_time, "sketch: id %llu answered %llu, older than its last update %llu", (ull)id, (ull)q,
                  (ull)ref->max_time);
        }
    }
    void check(uint64_t id, const Ref &ref, uint64_t) override {
        const uint64_t q = query(id);
        CHECK(q >= ref.max_time, "sketch: id %llu answered %llu, older than its last update %llu", (ull)id, (ull)q,
              (ull)ref.max_time);
        ++swept;
        too_new += q > ref.max_time;
    }
    void probe(uint64_t id, uint64_t) override {
        ++probes;
        probes_seen += query(id) != TF_NEVER;
    }
    uint64_t bound() override { return fixed.check(memory()); }
    std::string extra(uint64_t) override {
        double p = 0;
        OK(tf_recency_sketch_error_estimate(s(), 0, &p));
        return fmt("too-new %.4f of sampled ids, never-seen ids seen %.4f (estimate %.4f)",
                   swept ? double(too_new) / swept : 0.0, probes ? double(probes_seen) / probes : 0.0, p);
    }
};

// Age-partitioned Bloom filter: no false negatives among the last
// l * g inserts (its capacity); memory fixed at creation.
struct AgeBloomSoak : Soak {
    FixedMemory fixed;
    tf_age_bloom_info info = TF_AGE_BLOOM_INFO_INIT;
    uint64_t fp = 0, probes = 0;
    explicit AgeBloomSoak(uint32_t flags) : Soak(&tu_age_bloom) {
        tf_age_bloom *f = nullptr;
        OK(tf_age_bloom_new_for(50000, 0.01, 17, flags, &f));
        obj = f;
        OK(tf_age_bloom_get_info(f, &info));
        tf_age_bloom_stats stats = TF_AGE_BLOOM_STATS_INIT;
        OK(tf_age_bloom_get_stats(f, &stats));
        fixed.at_creation = memory();
        // the bits of its slices (blocked: of its lines), 256 B for each
        // slice's record and its block's alignment, and the handle (4 KiB)
        fixed.limit = stats.bits / 8 + 256 * stats.slices + 4096;
        CHECK(fixed.at_creation <= fixed.limit,
              "memory %llu B above its %llu slice bits / 8 + 256 B x %llu slices + 4 KiB", (ull)fixed.at_creation,
              (ull)stats.bits, (ull)stats.slices);
    }
    tf_age_bloom *f() const { return static_cast<tf_age_bloom *>(obj); }
    int contains(uint64_t id) const { return ask(tf_age_bloom_contains, id); }
    void check(uint64_t id, const Ref &ref, uint64_t) override {
        // inserted `age` inserts ago (1: the latest insert)
        const uint64_t age = inserts - ref.idx;
        if (age <= info.capacity)
            CHECK(contains(id) == 1, "age_bloom: id %llu inserted %llu inserts ago (capacity %llu) reported absent",
                  (ull)id, (ull)age, (ull)info.capacity);
    }
    void event(uint64_t id, uint64_t now, Ref *ref) override { insert_counted(tf_age_bloom_add, id, now, ref); }
    void probe(uint64_t id, uint64_t) override {
        ++probes;
        fp += contains(id);
    }
    uint64_t bound() override { return fixed.check(memory()); }
    std::string extra(uint64_t) override {
        tf_age_bloom_stats stats = TF_AGE_BLOOM_STATS_INIT;
        OK(tf_age_bloom_get_stats(f(), &stats));
        return fmt("capacity %llu, false positives %.4f of never-inserted ids (fpr_now %.4f)", (ull)info.capacity,
                   probes ? double(fp) / probes : 0.0, stats.fpr_now);
    }
};

// The filters that answer at a time `now` (the time-limited Bloom filter,
// the rotating cuckoo filter): their contains and stats behind one shape.
template <typename Handle, typename Stats>
struct TimedFilter : Soak {
    typedef tf_status (*ContainsFn)(const Handle *, const void *, size_t, uint64_t, int *);
    typedef tf_status (*StatsFn)(const Handle *, uint64_t, Stats *);
    typedef tf_status (*AddFn)(Handle *, const void *, size_t, uint64_t);
    AddFn add_fn;
    ContainsFn contains_fn;
    StatsFn stats_fn;
    Stats init;
    TimedFilter(const tu_structure *s, AddFn a, ContainsFn c, StatsFn g, Stats i)
        : Soak(s), add_fn(a), contains_fn(c), stats_fn(g), init(i) {}
    Handle *f() const { return static_cast<Handle *>(obj); }
    Stats stats(uint64_t now) const {
        Stats s = init;
        OK(stats_fn(f(), now, &s));
        return s;
    }
    int contains(uint64_t id, uint64_t now) const {
        const tu_key k = key_of(id);
        int present = -1;
        OK(contains_fn(f(), k.b, sizeof k.b, now, &present));
        return present;
    }
    // A sampled key is checked, then added; its reference takes the
    // clamped time (and what added() keeps); every 1024 inserts, sample().
    void event(uint64_t id, uint64_t now, Ref *ref) override {
        if (ref && ref->eff) check(id, *ref, now);
        const tu_key k = key_of(id);
        OK(add_fn(f(), k.b, sizeof k.b, now));
        const uint64_t t = clamp(now);
        if (ref) {
            ref->eff = t;
            added(*ref, now);
        }
        if ((++inserts & 1023) == 0) sample(now);
    }
    virtual void added(Ref &, uint64_t) {}
    virtual void sample(uint64_t now) = 0;
};

// Time-limited Bloom filter: a key inserted at t (clamped to the highest
// time seen) is present at every now with now - span <= t. Memory: the
// header bounds the slices (4096) and says they return to k + l (+ 2 after
// a shift) once the rate settles: at every checkpoint (a second span of
// steady traffic) the slices are at most k + l + 2 and the memory at most
// twice that of the first checkpoint.
struct TimeBloomSoak : TimedFilter<tf_time_bloom, tf_time_bloom_stats> {
    static constexpr uint64_t kSpan = kWindowMs;
    tf_time_bloom_info info = TF_TIME_BLOOM_INFO_INIT;
    uint64_t steady = 0, peak = 0, peak_slices = 0, fp = 0, probes = 0;
    double peak_fpr = 0;
    TimeBloomSoak()
        : TimedFilter(&tu_time_bloom, tf_time_bloom_add, tf_time_bloom_contains, tf_time_bloom_get_stats,
                      TF_TIME_BLOOM_STATS_INIT) {
        tf_time_bloom *f = nullptr;
        OK(tf_time_bloom_new_for(34000, 0.01, kSpan, 17, 0, &f));
        obj = f;
        OK(tf_time_bloom_get_info(f, &info));
    }
    void check(uint64_t id, const Ref &ref, uint64_t now) override {
        const uint64_t t = std::max(now, hi);
        if (ref.eff + kSpan >= t)
            CHECK(contains(id, now) == 1, "time_bloom: id %llu inserted at %llu reported absent at %llu (span %llu)",
                  (ull)id, (ull)ref.eff, (ull)t, (ull)kSpan);
    }
    void sample(uint64_t now) override {
        const tf_time_bloom_stats s = stats(now);
        CHECK(s.slices <= 4096, "time_bloom: %llu slices", (ull)s.slices);
        peak = std::max(peak, memory());
        peak_slices = std::max(peak_slices, s.slices);
        peak_fpr = std::max(peak_fpr, s.fpr_now);
    }
    void probe(uint64_t id, uint64_t now) override {
        ++probes;
        fp += contains(id, now);
    }
    uint64_t bound() override {
        const tf_time_bloom_stats s = stats(hi);
        const uint64_t m = memory();
        CHECK(s.slices <= uint64_t(info.k) + info.l + 2, "time_bloom: %llu slices at steady rate, above k + l + 2 = %u",
              (ull)s.slices, info.k + info.l + 2);
        if (!steady) steady = m;
        return 2 * steady;
    }
    std::string extra(uint64_t now) override {
        const tf_time_bloom_stats s = stats(now);
        return fmt(
            "slices %llu (k + l = %u; peak %llu), peak memory %llu B, false positives %.4f (fpr_now %.4f, "
            "peak %.4f)",
            (ull)s.slices, info.k + info.l, (ull)peak_slices, (ull)peak, probes ? double(fp) / probes : 0.0, s.fpr_now,
            peak_fpr);
    }
};

// Sliding-window rate limiter, bounded to kMaxKeys keys: a sampled key is
// never granted more than `limit` permits in any interval of length
// window (exact) or window - bucket_width + 1 (bucketed), its clock clamped
// to the latest time it gave; every denial of a full table (retry_at
// TF_RETRY_NEVER for a request of 1 <= limit) is counted in denied_full,
// and no other.
struct LimiterSoak : Soak {
    static constexpr uint64_t kLimit = 5, kWindow = 10000, kWidth = 1000, kMaxKeys = 32768;
    const bool exact;
    uint64_t len, empty = 0, granted = 0, denied = 0, denied_never = 0, peak_keys = 0;
    explicit LimiterSoak(uint32_t flags) : Soak(&tu_rate_limiter), exact(flags & TF_RATE_LIMITER_EXACT) {
        tf_rate_limiter *r = nullptr;
        OK(tf_rate_limiter_new(kLimit, kWindow, kWidth, 17, flags, &r));
        obj = r;
        OK(tf_rate_limiter_set_max_keys(r, kMaxKeys));
        len = exact ? kWindow : kWindow - kWidth + 1;
        empty = memory();
    }
    tf_rate_limiter *r() const { return static_cast<tf_rate_limiter *>(obj); }
    void event(uint64_t id, uint64_t now, Ref *ref) override {
        const tu_key k = key_of(id);
        int allowed = -1;
        uint64_t remaining = 0, retry = 0;
        OK(tf_rate_limiter_acquire(r(), k.b, sizeof k.b, now, 1, &allowed, &remaining, &retry));
        if ((++inserts & 4095) == 0) keys();
        if (allowed) {
            ++granted;
            CHECK(retry == 0 && remaining < kLimit, "rate_limiter: grant with remaining %llu, retry_at %llu",
                  (ull)remaining, (ull)retry);
        } else {
            ++denied;
            denied_never += retry == TF_RETRY_NEVER;
            CHECK(retry > now || retry == TF_RETRY_NEVER, "rate_limiter: denial at %llu with retry_at %llu", (ull)now,
                  (ull)retry);
        }
        if (!ref) return;
        const uint64_t t = std::max(now, ref->latest);
        ref->latest = t;
        if (!allowed) return;
        // the kLimit-th newest grant must have left (t - len, t]
        if (ref->ngrants >= (int)kLimit) {
            const uint64_t old = ref->grants[(ref->head + kRing - kLimit) % kRing];
            CHECK(old + len <= t,
                  "rate_limiter (%s): id %llu granted at %llu with %llu grants since %llu, within %llu (limit %llu)",
                  exact ? "exact" : "bucketed", (ull)id, (ull)t, (ull)kLimit, (ull)old, (ull)len, (ull)kLimit);
        }
        ref->grants[ref->head] = t;
        ref->head = (ref->head + 1) % kRing;
        ref->ngrants = std::min(ref->ngrants + 1, kRing);
    }
    void check(uint64_t, const Ref &, uint64_t) override {}  // every grant is checked as it happens
    void probe(uint64_t, uint64_t) override {}
    // The keys tracked (at most max_keys), as the stats count them.
    tf_rate_limiter_stats keys() {
        tf_rate_limiter_stats s = TF_RATE_LIMITER_STATS_INIT;
        OK(tf_rate_limiter_get_stats(r(), &s));
        CHECK(s.keys <= kMaxKeys, "rate_limiter: %llu keys tracked, above max_keys %llu", (ull)s.keys, (ull)kMaxKeys);
        peak_keys = std::max(peak_keys, s.keys);
        return s;
    }
    uint64_t bound() override {
        const tf_rate_limiter_stats s = keys();
        CHECK(s.denied_full == denied_never, "rate_limiter: denied_full %llu, but %llu denials said never",
              (ull)s.denied_full, (ull)denied_never);
        CHECK(granted + denied == inserts, "rate_limiter: %llu decisions for %llu requests", (ull)(granted + denied),
              (ull)inserts);
        // The header: a record of 25 + 2 (buckets + 1) bytes (bucketed) or
        // 33 bytes plus a ring of 24 + 4 c bytes, c <= max(4, the limit)
        // (exact; a window of at most 2^31 time units: 32-bit offsets), in tables whose spare room costs at most 72
        // bytes a key for 47-byte records (its figure for small tables, the largest it gives; 55-62 from 10,000 keys
        // up), for at most max_keys keys.
        const uint64_t buckets = kWindow / kWidth;
        const double spare = 72.0 / 47.0;
        const double per_key =
            exact ? 33 * spare + 24 + 4 * std::max<uint64_t>(4, kLimit) : (25 + 2 * (buckets + 1)) * spare;
        return empty + uint64_t(kMaxKeys * per_key);
    }
    std::string extra(uint64_t) override {
        tf_rate_limiter_stats s = TF_RATE_LIMITER_STATS_INIT;
        OK(tf_rate_limiter_get_stats(r(), &s));
        return fmt("granted %llu, denied %llu (table full %llu), keys %llu (peak %llu, max %llu), reclaimed %llu",
                   (ull)granted, (ull)denied, (ull)s.denied_full, (ull)s.keys, (ull)peak_keys, (ull)kMaxKeys,
                   (ull)s.reclaimed);
    }
};

// Rotating cuckoo filter under a memory cap the bursts reach: no false
// positive (an id never added is absent), and a key added at t (clamped)
// is present until t + ttl unless the memory cap dropped tables since
// (forgotten_memory grew after its add); memory at most the cap.
struct CuckooSoak : TimedFilter<tf_rotating_cuckoo, tf_rotating_cuckoo_stats> {
    static constexpr uint64_t kTtl = kWindowMs, kCap = 512 << 10;
    uint64_t peak = 0;
    CuckooSoak()
        : TimedFilter(&tu_rotating_cuckoo, tf_rotating_cuckoo_add, tf_rotating_cuckoo_contains,
                      tf_rotating_cuckoo_get_stats, TF_ROTATING_CUCKOO_STATS_INIT) {
        tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
        o.ttl = kTtl;
        o.max_memory = kCap;
        o.seed = 17;
        tf_rotating_cuckoo *f = nullptr;
        OK(tf_rotating_cuckoo_new(&o, &f));
        obj = f;
    }
    void check(uint64_t id, const Ref &ref, uint64_t now) override {
        const uint64_t t = std::max(now, hi);
        if (t < ref.eff + kTtl && !contains(id, now)) {
            const uint64_t forgotten = stats(now).forgotten_memory;
            CHECK(forgotten > ref.mark,
                  "rotating_cuckoo: id %llu added at %llu absent at %llu (ttl %llu), no table dropped for memory since",
                  (ull)id, (ull)ref.eff, (ull)t, (ull)kTtl);
        }
    }
    void added(Ref &ref, uint64_t now) override { ref.mark = stats(now).forgotten_memory; }
    void sample(uint64_t) override {
        const uint64_t m = memory();
        CHECK(m <= kCap, "rotating_cuckoo: memory %llu B above its cap %llu B", (ull)m, (ull)kCap);
        peak = std::max(peak, m);
    }
    void probe(uint64_t id, uint64_t now) override {
        CHECK(contains(id, now) == 0, "rotating_cuckoo: id %llu never added reported present", (ull)id);
    }
    uint64_t bound() override { return kCap; }
    std::string extra(uint64_t now) override {
        const tf_rotating_cuckoo_stats s = stats(now);
        return fmt("tables %llu, items %llu, peak memory %llu B, forgotten for memory %llu / for age %llu",
                   (ull)s.tables, (ull)s.items, (ull)peak, (ull)s.forgotten_memory, (ull)s.forgotten_age);
    }
};

// Recency window: each mode's promise (rw_keeps_promise of the recency
// window's suites) for every sampled key and every id never inserted;
// memory fixed at creation, what tf_recency_window_memory_for() said.
struct WindowSoak : Soak {
    FixedMemory fixed;
    tf_recency_window_info info = TF_RECENCY_WINDOW_INFO_INIT;
    explicit WindowSoak(uint32_t mode) : Soak(&tu_recency_window) {
        tf_recency_window_options o = rw_options(mode, 65536, 8);
        tf_recency_window *w = nullptr;
        OK(tf_recency_window_new(&o, &w));
        obj = w;
        OK(tf_recency_window_get_info(w, &info));
        size_t promised = 0;
        OK(tf_recency_window_memory_for(&o, &promised));
        fixed.at_creation = memory();
        fixed.limit = promised;
        CHECK(fixed.at_creation == promised, "recency_window: memory %llu B, memory_for said %llu B",
              (ull)fixed.at_creation, (ull)promised);
    }
    tf_recency_window *w() const { return static_cast<tf_recency_window *>(obj); }
    uint64_t query(uint64_t id) const { return ask(tf_recency_window_query, id); }
    void answer(uint64_t id, uint64_t r) {
        const uint64_t e = query(id);
        CHECK(rw_keeps_promise(&info, r, e),
              "recency_window: id %llu of recency %lld answered %lld (window %llu, 1/eps %llu, slack %u)", (ull)id,
              r == UINT64_MAX ? -1LL : (long long)r, e == TF_RECENCY_WINDOW_NOT_IN_WINDOW ? -1LL : (long long)e,
              (ull)info.window, (ull)info.inv_eps, info.slack);
    }
    void check(uint64_t id, const Ref &ref, uint64_t) override { answer(id, inserts - 1 - ref.idx); }
    void event(uint64_t id, uint64_t now, Ref *ref) override { insert_counted(tf_recency_window_insert, id, now, ref); }
    void probe(uint64_t id, uint64_t) override { answer(id, UINT64_MAX); }
    uint64_t bound() override { return fixed.check(memory()); }
    std::string extra(uint64_t) override {
        tf_recency_window_stats s = TF_RECENCY_WINDOW_STATS_INIT;
        OK(tf_recency_window_get_stats(w(), &s));
        CHECK(s.lost == 0, "recency_window: %llu entries lost", (ull)s.lost);
        return fmt("levels %llu, items %llu, %.1f bits per window item, lost %llu", (ull)s.levels, (ull)s.items,
                   s.bits_per_window_item, (ull)s.lost);
    }
};

struct Mode {
    const char *name;
    std::unique_ptr<Soak> (*make)();
};
const Mode kModes[] = {
    {"recency_sketch", [] { return std::unique_ptr<Soak>(new SketchSoak()); }},
    {"age_bloom", [] { return std::unique_ptr<Soak>(new AgeBloomSoak(0)); }},
    {"age_bloom_blocked", [] { return std::unique_ptr<Soak>(new AgeBloomSoak(TF_AGE_BLOOM_BLOCKED)); }},
    {"time_bloom", [] { return std::unique_ptr<Soak>(new TimeBloomSoak()); }},
    {"rate_limiter", [] { return std::unique_ptr<Soak>(new LimiterSoak(0)); }},
    {"rate_limiter_exact", [] { return std::unique_ptr<Soak>(new LimiterSoak(TF_RATE_LIMITER_EXACT)); }},
    {"rotating_cuckoo", [] { return std::unique_ptr<Soak>(new CuckooSoak()); }},
    {"recency_window", [] { return std::unique_ptr<Soak>(new WindowSoak(TF_RECENCY_WINDOW_HISTORICAL)); }},
    {"recency_window_exact", [] { return std::unique_ptr<Soak>(new WindowSoak(TF_RECENCY_WINDOW_EXACT)); }},
    {"recency_window_optimal_sm", [] { return std::unique_ptr<Soak>(new WindowSoak(TF_RECENCY_WINDOW_OPTIMAL_SM)); }},
};

// What RSS may grow by after warm-up beyond what the structure's bound
// allows: the reference and the allocator's own slack. Under
// AddressSanitizer, add its quarantine (256 MiB by default), which keeps
// freed memory resident; LeakSanitizer checks for leaks there.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kRssSlack = uint64_t(32 + 256) << 20;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr uint64_t kRssSlack = uint64_t(32 + 256) << 20;
#else
constexpr uint64_t kRssSlack = uint64_t(32) << 20;
#endif
#else
constexpr uint64_t kRssSlack = uint64_t(32) << 20;
#endif

int usage(FILE *out) {
    std::fprintf(out, "usage: soak MODE [--events N] [--seed S] [--print-every C]\nmodes:");
    for (const Mode &m : kModes) std::fprintf(out, " %s", m.name);
    std::fprintf(out, "\n");
    return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    if (!std::strcmp(argv[1], "--help")) return usage(stdout);
    uint64_t events = 2000000, seed = 1, print_every = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        char *end = nullptr;
        const double v = std::strtod(argv[i + 1], &end);  // 1e9 as well as 1000000000
        if (*end || v < 1) return usage(stderr);
        if (!std::strcmp(argv[i], "--events"))
            events = (uint64_t)v;
        else if (!std::strcmp(argv[i], "--seed"))
            seed = (uint64_t)v;
        else if (!std::strcmp(argv[i], "--print-every"))
            print_every = (uint64_t)v;
        else
            return usage(stderr);
    }
    if (argc % 2) return usage(stderr);
    const Mode *mode = nullptr;
    for (const Mode &m : kModes)
        if (!std::strcmp(argv[1], m.name)) mode = &m;
    if (!mode) return usage(stderr);
    g_mode = mode->name;

    std::unique_ptr<Soak> soak = mode->make();
    RefMap refs;
    refs.reserve(kIds / 64 * 5 / 4);
    Stream stream(seed);
    uint64_t rss_warm = 0, mem_warm = 0, checkpoints = 0;
    double busy = 0;  // seconds spent applying events (checkpoints left out)
    uint64_t since = 0;
    std::printf("soak %s: %llu events, cycles of %llu, windows <= %llu ms, gaps %llu ms, %llu ids (1/64 sampled)\n",
                g_mode, (ull)events, (ull)kCycle, (ull)kWindowMs, (ull)kGapMs, (ull)kIds);
    auto t0 = std::chrono::steady_clock::now();
    while (g_event < events) {
        const uint64_t id = stream.next();
        g_now = stream.now;
        Ref *ref = nullptr;
        if (sampled(id)) ref = &refs[id];
        soak->event(id, g_now, ref);
        ++g_event;
        if (g_event % kCycle && g_event != events) continue;

        // ---- a checkpoint ----
        const auto t1 = std::chrono::steady_clock::now();
        const double dt = std::chrono::duration<double>(t1 - t0).count();
        busy += dt;
        for (const auto &kv : refs) soak->check(kv.first, kv.second, g_now);
        for (uint64_t p = 0; p < kProbeIds; ++p) soak->probe(kIds + p, g_now);
        const uint64_t mem = soak->memory();
        const uint64_t bound = soak->bound();
        CHECK(mem <= bound, "memory %llu B above its bound %llu B", (ull)mem, (ull)bound);
        const uint64_t rss = tu_resident_bytes();
        if (!checkpoints) rss_warm = rss, mem_warm = mem;
        const uint64_t rss_limit = rss_warm + (bound > mem_warm ? bound - mem_warm : 0) + kRssSlack;
        CHECK(rss <= rss_limit, "RSS %llu B above %llu B (warm-up %llu B + bound %llu B - memory then %llu B + %llu B)",
              (ull)rss, (ull)rss_limit, (ull)rss_warm, (ull)bound, (ull)mem_warm, (ull)kRssSlack);
        const std::string more = soak->extra(g_now);
        ++checkpoints;
        if (checkpoints % print_every == 0 || g_event == events) {
            std::printf(
                "soak %s: events %llu, simulated %.2f h, memory %llu B (bound %llu), RSS %.1f MiB (limit %.1f), "
                "sampled ids %zu, checks %llu, %.2f M events/s; %s\n",
                g_mode, (ull)g_event, double(g_now - kStart) / 3.6e6, (ull)mem, (ull)bound, rss / 1048576.0,
                rss_limit / 1048576.0, refs.size(), (ull)g_checks, double(g_event - since) / dt / 1e6, more.c_str());
            std::fflush(stdout);
        }
        since = g_event;
        t0 = std::chrono::steady_clock::now();
    }
    std::printf(
        "soak %s: PASS: %llu events, simulated %.2f h (%.2f days), %llu checkpoints, %llu checks, peak RSS %.1f MiB, "
        "%.2f M events/s overall\n",
        g_mode, (ull)g_event, double(g_now - kStart) / 3.6e6, double(g_now - kStart) / 8.64e7, (ull)checkpoints,
        (ull)g_checks, peak_rss_bytes() / 1048576.0, double(g_event) / busy / 1e6);
    return 0;
}
