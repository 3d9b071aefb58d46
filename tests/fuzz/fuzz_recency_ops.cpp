// Fuzz target: random operation sequences on a RecencySketch, checked
// against an exact reference.
//
// The input is a small program (see "Input format" below). The target keeps,
// for the sketch under test, the largest value ever written for each key
// since the last clear (update times, granted pace times, TTL expiries:
// every one of them is stored as a cell-wise maximum), and aborts when
//   - a query or TTL lookup returns something older than that truth, or
//     newer than anything written since the last clear;
//   - pace grants a key again within its interval, grants or denies against
//     its own documented rule, or a denial changes the sketch;
//   - the whole sketch grants more than `cells` requests with the same
//     interval within one interval;
//   - a failed call (invalid argument, NULL pointer, incompatible merge, short
//     buffer) returns another status than documented, leaves no message,
//     writes an out-parameter, or changes the sketch (serialized bytes are
//     compared before and after);
//   - a serialize/deserialize round trip changes anything;
//   - merge, clear or error_estimate break their documented properties.
// Only the public C API is used.
//
// Input format
//   4 header bytes:
//     h0  bits 0-1: flags (CONCURRENT, BLOCKED); bit 2: the second sketch
//         (the merge source) toggles CONCURRENT
//     h1  width = 1 + h1 % 64
//     h2  depth = 1 + h2 % 32 (% 8 when blocked); width is then reduced so
//         that width * depth <= 256 cells
//     h3  seed = h3 * 0x01010101
//   then operations, one opcode byte (% kOpCount) each followed by operands:
//     key   1 byte: < 0xC0 picks one of 32 pool keys (byte % 32; pool key 0
//           is the empty key); otherwise (byte & 0x3F) % 17 literal key
//           bytes follow
//     time  1 byte: 00xxxxxx clock += x; 01xxxxxx clock -= x (stays >= 1);
//           10------ clock = next 8 bytes (little-endian; 0 becomes 1);
//           110xxxxx now = UINT64_MAX - x (clock unchanged);
//           111xxxxx clock += x << 20
//     span  1 byte: 0xFF next 8 bytes (0 becomes 1); 0xFE UINT64_MAX;
//           otherwise 1 + byte
//   Missing bytes read as 0. Opcodes and their operands, in input order:
//      0 update key time           10 clear the merge source
//      1 query key                 11 serialize/deserialize round trip
//      2 pace key time span        12 error_estimate m [time if m != 0]
//      3 ttl_insert key time span  13 invalid call: sub key [byte if sub%24 == 13]
//      4 ttl_maybe_live key time   14 check every key of the reference
//      5 update the merge source:  15 info/memory checks
//        key time b [span if b even: ttl_insert]
//      6 merge source into sketch  16 deserialize a damaged blob: how hi lo
//      7 merge sketch into itself  17 dimensions/new_for: n prob flags (2 per input)
//      8 incompatible merge: how   18 update with a long key: n (17+4n bytes) time
//      9 clear, then query key     19 pace 2-4 times at once: key time span count
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_common.hpp"

namespace {

constexpr size_t kMaxOps = 400;
constexpr uint64_t kMaxCells = 256;
constexpr uint32_t kKnownFlags = TF_RECENCY_SKETCH_CONCURRENT | TF_RECENCY_SKETCH_BLOCKED;
tf_recency_sketch *const kUntouched = reinterpret_cast<tf_recency_sketch *>(uintptr_t(0x5eed));

enum Op {
    kUpdate,
    kQuery,
    kPace,
    kTtlInsert,
    kTtlLive,
    kUpdateSecond,
    kMerge,
    kMergeSelf,
    kMergeIncompatible,
    kClear,
    kClearSecond,
    kRoundTrip,
    kErrorEstimate,
    kInvalid,
    kSweep,
    kInfo,
    kDamagedBlob,
    kDimensions,
    kLongKey,
    kPaceBurst,
    kOpCount
};

using Input = FuzzInput;

std::string pool_key(unsigned i) {
    if (i == 0) return std::string();
    std::string k = "k";
    k.push_back(char('a' + i % 26));
    for (unsigned j = 0; j < i % 5; ++j) k.push_back(char(i * 37 + j));  // may contain NUL
    if (i >= 26) k += "-long-key-suffix";
    return k;
}

// One sketch and what is exactly known about it.
struct Tracked {
    tf_recency_sketch *s = nullptr;
    uint64_t width = 0, cells = 0;
    uint32_t depth = 0, seed = 0, flags = 0;
    std::map<std::string, uint64_t> truth;              // largest value written per key since clear
    uint64_t max_written = 0;                           // largest value written since clear
    std::vector<std::pair<uint64_t, uint64_t>> grants;  // (now, interval) since clear

    void forget() {
        truth.clear();
        max_written = 0;
        grants.clear();
    }
    void wrote(const std::string &key, uint64_t v) {
        uint64_t &t = truth[key];
        t = std::max(t, v);
        max_written = std::max(max_written, v);
    }
    uint64_t truth_of(const std::string &key) const {
        auto it = truth.find(key);
        return it == truth.end() ? 0 : it->second;
    }
};

void create(Tracked &t, uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags) {
    FUZZ_CHECK(tf_recency_sketch_new(width, depth, seed, flags, &t.s) == TF_OK);
    FUZZ_CHECK(t.s != nullptr);
    t.width = width;
    t.depth = depth;
    t.seed = seed;
    t.flags = flags;
    t.cells = fuzz_expected_cells(width, depth, flags);
    t.forget();
}

uint64_t query(const Tracked &t, const std::string &key) {
    uint64_t v = 777;
    FUZZ_CHECK(tf_recency_sketch_query(t.s, key.data(), key.size(), &v) == TF_OK);
    return v;
}

// The core promise, plus the bounds that follow from cells only ever holding
// values that were written.
void check_key(const Tracked &t, const std::string &key) {
    const uint64_t q = query(t, key);
    const uint64_t truth = t.truth_of(key);
    FUZZ_CHECK(q >= truth);          // never older than the truth
    FUZZ_CHECK(q <= t.max_written);  // nothing newer than what was written
    if (t.max_written == 0) FUZZ_CHECK(q == TF_NEVER);
    // With a single key written since clear, every one of its cells holds
    // exactly its largest value.
    if (t.truth.size() == 1 && truth != 0) FUZZ_CHECK(q == truth);
}

void sweep(const Tracked &t) {
    for (const auto &kv : t.truth) check_key(t, kv.first);
}

double estimate(const Tracked &t, uint64_t since) {
    double p = -1.0;
    FUZZ_CHECK(tf_recency_sketch_error_estimate(t.s, since, &p) == TF_OK);
    FUZZ_CHECK(p >= 0.0 && p <= 1.0);                  // also rejects NaN
    if (since >= t.max_written) FUZZ_CHECK(p == 0.0);  // no cell is newer than `since`
    return p;
}

// At most `cells` grants with the same interval fall in any window
// [T, T + interval): each grant moves a distinct cell into the window.
void check_grant_budget(const Tracked &t, uint64_t interval) {
    std::vector<uint64_t> times;
    for (const auto &g : t.grants)
        if (g.second == interval) times.push_back(g.first);
    if (times.size() <= t.cells) return;
    std::sort(times.begin(), times.end());
    size_t lo = 0;
    for (size_t hi = 0; hi < times.size(); ++hi) {
        while (times[hi] - times[lo] >= interval) ++lo;  // sorted: no wrap
        FUZZ_CHECK(hi - lo + 1 <= t.cells);
    }
}

void pace(Tracked &t, const std::string &key, uint64_t now, uint64_t interval) {
    const uint64_t truth = t.truth_of(key);
    const uint64_t q = query(t, key);
    const std::vector<uint8_t> before = fuzz_snapshot(t.s);
    int granted = -1;
    uint64_t next = 0;
    FUZZ_CHECK(tf_recency_sketch_pace(t.s, key.data(), key.size(), now, interval, &granted, &next) == TF_OK);
    FUZZ_CHECK(granted == 0 || granted == 1);
    // Never twice within the interval (whatever the clock did meanwhile).
    if (!fuzz_pace_due(truth, now, interval)) FUZZ_CHECK(granted == 0);
    // The documented rule, with the query as the estimate.
    FUZZ_CHECK(granted == (fuzz_pace_due(q, now, interval) ? 1 : 0));
    if (granted) {
        FUZZ_CHECK(next == fuzz_sat_add(now, interval));
        t.wrote(key, now);
        t.grants.emplace_back(now, interval);
        check_key(t, key);
        FUZZ_CHECK(query(t, key) >= now);
        check_grant_budget(t, interval);
    } else {
        FUZZ_CHECK(next == fuzz_sat_add(q, interval));
        FUZZ_CHECK(next > now || next == UINT64_MAX);
        FUZZ_CHECK(fuzz_snapshot(t.s) == before);  // a denial records nothing
    }
}

// Runs a call that must fail with `want`, leave a message, and leave the
// sketch byte-for-byte unchanged.
template <class F>
void expect_failure(const Tracked &t, tf_status want, F &&call) {
    const std::vector<uint8_t> before = fuzz_snapshot(t.s);
    tf_clear_last_error();
    const tf_status st = call();
    if (st != want) std::fprintf(stderr, "got status %d (%s), want %d\n", int(st), tf_status_string(st), int(want));
    FUZZ_CHECK(st == want);
    fuzz_check_failure(st);
    FUZZ_CHECK(fuzz_snapshot(t.s) == before);
}

// A sketch that cannot be merged with `t` (one of width, depth, seed or
// layout differs).
tf_recency_sketch *incompatible_with(const Tracked &t, uint8_t how) {
    uint64_t w = t.width;
    uint32_t d = t.depth, seed = t.seed, flags = t.flags;
    switch (how % 4) {
        case 0:
            w = w < 64 ? w + 1 : w - 1;
            break;
        case 1:
            d = d > 1 ? d - 1 : 2;
            break;
        case 2:
            seed ^= 1u + how;
            break;
        default:
            if (d <= TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH)
                flags ^= TF_RECENCY_SKETCH_BLOCKED;
            else
                seed ^= 0x80000000u;
            break;
    }
    flags ^= (how >> 4) & TF_RECENCY_SKETCH_CONCURRENT;  // the mode may differ either way
    tf_recency_sketch *o = nullptr;
    FUZZ_CHECK(tf_recency_sketch_new(w, d, seed, flags, &o) == TF_OK);
    return o;
}

void invalid_call(Tracked &t, uint8_t sub, Input &in, const std::string &key) {
    tf_recency_sketch *s = t.s;
    const size_t bad_len = 1 + sub % 8;
    uint64_t u = 0;
    int flag = 0;
    double p = 0;
    size_t z = 0;
    tf_recency_sketch_info ri = TF_RECENCY_SKETCH_INFO_INIT;
    switch (sub % 24) {
        case 0:
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_update(s, key.data(), key.size(), 0); });
            break;
        case 1:
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_update(s, nullptr, bad_len, 5); });
            break;
        case 2:
            expect_failure(t, TF_ERR_NULL,
                           [&] { return tf_recency_sketch_update(nullptr, key.data(), key.size(), 5); });
            break;
        case 3:
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_query(s, nullptr, bad_len, &u); });
            FUZZ_CHECK(u == 0);
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_query(s, key.data(), key.size(), nullptr); });
            break;
        case 4:
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_pace(s, key.data(), key.size(), 0, 10, &flag, &u); });
            FUZZ_CHECK(flag == 0 && u == 0);
            break;
        case 5:
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_pace(s, key.data(), key.size(), 5, 0, &flag, &u); });
            FUZZ_CHECK(flag == 0 && u == 0);
            break;
        case 6:
            expect_failure(t, TF_ERR_NULL,
                           [&] { return tf_recency_sketch_pace(s, key.data(), key.size(), 5, 10, nullptr, &u); });
            FUZZ_CHECK(u == 0);
            break;
        case 7:
            expect_failure(t, TF_ERR_NULL,
                           [&] { return tf_recency_sketch_pace(s, nullptr, bad_len, 5, 10, &flag, nullptr); });
            break;
        case 8:
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_ttl_insert(s, key.data(), key.size(), 0, 10); });
            break;
        case 9:
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_ttl_insert(s, key.data(), key.size(), 5, 0); });
            break;
        case 10:
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_ttl_insert(s, nullptr, bad_len, 5, 10); });
            break;
        case 11:
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_ttl_maybe_live(s, key.data(), key.size(), 0, &flag, &u); });
            expect_failure(t, TF_ERR_NULL,
                           [&] { return tf_recency_sketch_ttl_maybe_live(s, key.data(), key.size(), 5, nullptr, &u); });
            expect_failure(t, TF_ERR_NULL,
                           [&] { return tf_recency_sketch_ttl_maybe_live(s, nullptr, bad_len, 5, &flag, &u); });
            FUZZ_CHECK(flag == 0 && u == 0);
            break;
        case 12:
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_error_estimate(s, 0, nullptr); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_error_estimate(nullptr, 0, &p); });
            FUZZ_CHECK(p == 0);
            break;
        case 13: {
            // A short buffer: the needed size comes back, nothing is written.
            size_t need = 0;
            FUZZ_CHECK(tf_recency_sketch_serialized_size(s, &need) == TF_OK);
            const size_t cap = in.byte() % need;
            std::vector<uint8_t> buf(cap + 1, 0xA5);
            size_t written = 0;
            expect_failure(t, TF_ERR_BUFFER_TOO_SMALL,
                           [&] { return tf_recency_sketch_serialize(s, buf.data(), cap, &written); });
            FUZZ_CHECK(written == need);
            for (uint8_t b : buf) FUZZ_CHECK(b == 0xA5);
            written = 0;
            expect_failure(t, TF_ERR_BUFFER_TOO_SMALL,
                           [&] { return tf_recency_sketch_serialize(s, nullptr, 0, &written); });
            FUZZ_CHECK(written == need);
            break;
        }
        case 14: {
            size_t need = 0;
            FUZZ_CHECK(tf_recency_sketch_serialized_size(s, &need) == TF_OK);
            std::vector<uint8_t> buf(need, 0xA5);
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_serialize(s, buf.data(), need, nullptr); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_serialize(nullptr, buf.data(), need, &z); });
            FUZZ_CHECK(z == 0);
            for (uint8_t b : buf) FUZZ_CHECK(b == 0xA5);
            break;
        }
        case 15:
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_serialized_size(s, nullptr); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_serialized_size(nullptr, &z); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_memory(s, nullptr); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_memory(nullptr, &z); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_get_info(nullptr, &ri); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_get_info(s, nullptr); });
            ri.size = 0;  // not initialized: refused, nothing written
            expect_failure(t, TF_ERR_INVALID_ARGUMENT, [&] { return tf_recency_sketch_get_info(s, &ri); });
            FUZZ_CHECK(z == 0 && ri.width == 0 && ri.cells == 0);
            break;
        case 16:
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_merge(s, nullptr); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_merge(nullptr, s); });
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_clear(nullptr); });
            break;
        case 17: {
            // Shapes that tf_recency_sketch_new refuses; `out` stays as it was.
            struct Bad {
                uint64_t width;
                uint32_t depth, flags;
                tf_status want;
            };
            static const Bad bad[] = {
                {0, 1, 0, TF_ERR_INVALID_ARGUMENT},
                {4, 0, 0, TF_ERR_INVALID_ARGUMENT},
                {4, TF_RECENCY_SKETCH_MAX_DEPTH + 1, 0, TF_ERR_INVALID_ARGUMENT},
                {4, TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH + 1, TF_RECENCY_SKETCH_BLOCKED, TF_ERR_INVALID_ARGUMENT},
                {4, 2, 0x4, TF_ERR_INVALID_ARGUMENT},
                {4, 2, 0x80000000u | TF_RECENCY_SKETCH_CONCURRENT, TF_ERR_INVALID_ARGUMENT},
                {UINT64_MAX, 1, 0, TF_ERR_TOO_LARGE},
                {UINT64_MAX, 3, TF_RECENCY_SKETCH_BLOCKED, TF_ERR_TOO_LARGE},
                {uint64_t(1) << 61, 1, 0, TF_ERR_TOO_LARGE},
                {uint64_t(1) << 62, 4, TF_RECENCY_SKETCH_CONCURRENT, TF_ERR_TOO_LARGE},
            };
            const Bad &b = bad[(sub / 24u) % (sizeof bad / sizeof bad[0])];
            tf_recency_sketch *out = kUntouched;
            expect_failure(t, b.want, [&] { return tf_recency_sketch_new(b.width, b.depth, 1, b.flags, &out); });
            FUZZ_CHECK(out == kUntouched);
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_new(4, 2, 1, 0, nullptr); });
            break;
        }
        case 18: {
            tf_recency_sketch *out = kUntouched;
            expect_failure(t, TF_ERR_NULL, [&] { return tf_recency_sketch_deserialize(nullptr, 40, nullptr, &out); });
            FUZZ_CHECK(out == kUntouched);
            const std::vector<uint8_t> blob = fuzz_snapshot(s);
            expect_failure(t, TF_ERR_NULL,
                           [&] { return tf_recency_sketch_deserialize(blob.data(), blob.size(), nullptr, nullptr); });
            break;
        }
        case 19: {
            // Arguments tf_recency_sketch_dimensions refuses.
            uint64_t w = 99;
            uint32_t d = 99;
            const double nan = std::nan("");
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_dimensions(0, 0.01, 0, &w, &d); });
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_dimensions(100, nan, 0, &w, &d); });
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_dimensions(100, 0.0, 0, &w, &d); });
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_dimensions(100, -0.1, 0, &w, &d); });
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_dimensions(100, 1.0, 0, &w, &d); });
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_dimensions(100, 0.01, 0x4, &w, &d); });
            FUZZ_CHECK(w == 99 && d == 99);
            break;
        }
        case 20: {
            // A timestamp of 0 does not count as an update either.
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_update(s, key.data(), key.size(), 0); });
            expect_failure(t, TF_ERR_INVALID_ARGUMENT,
                           [&] { return tf_recency_sketch_pace(s, key.data(), key.size(), 0, 0, &flag, nullptr); });
            break;
        }
        default:
            // NULL key with length 0 is the empty key: fine everywhere.
            FUZZ_CHECK(tf_recency_sketch_query(s, nullptr, 0, &u) == TF_OK);
            FUZZ_CHECK(u == query(t, std::string()));
            check_key(t, std::string());
            break;
    }
}

void damaged_blob(Tracked &t, Input &in) {
    const std::vector<uint8_t> blob = fuzz_snapshot(t.s);
    std::vector<uint8_t> bad = blob;
    const uint8_t how = in.byte();
    const size_t hi = in.byte();
    const size_t where = (hi << 8 | in.byte()) % blob.size();
    switch (how % 4) {
        case 0:
            bad.resize(where);
            break;  // truncated
        case 1:
            bad[where] ^= uint8_t(1u << (how >> 5));
            break;  // one bit flipped
        case 2:
            bad.push_back(how);
            break;  // trailing byte
        default:
            bad[6] = uint8_t(2 + how % 5);
            break;  // another kind
    }
    tf_recency_sketch *out = kUntouched;
    tf_clear_last_error();
    const tf_status st = tf_recency_sketch_deserialize(bad.data(), bad.size(), nullptr, &out);
    FUZZ_CHECK(st != TF_OK);
    FUZZ_CHECK(fuzz_is_deserialize_error(st));
    fuzz_check_failure(st);
    FUZZ_CHECK(out == kUntouched);
    if (how % 4 == 0) FUZZ_CHECK(st == TF_ERR_TRUNCATED);
    if (how % 4 == 3) FUZZ_CHECK(st == TF_ERR_WRONG_KIND);
    FUZZ_CHECK(fuzz_snapshot(t.s) == blob);
}

// The sketch's info is what `t` was created with.
void check_info(const tf_recency_sketch *s, const Tracked &t) {
    tf_recency_sketch_info i = TF_RECENCY_SKETCH_INFO_INIT;
    FUZZ_CHECK(tf_recency_sketch_get_info(s, &i) == TF_OK);
    FUZZ_CHECK(i.width == t.width && i.depth == t.depth && i.seed == t.seed && i.flags == t.flags &&
               i.cells == t.cells);
}

void round_trip(Tracked &t) {
    const std::vector<uint8_t> blob = fuzz_snapshot(t.s);
    tf_recency_sketch *copy = nullptr;
    FUZZ_CHECK(tf_recency_sketch_deserialize(blob.data(), blob.size(), nullptr, &copy) == TF_OK);
    FUZZ_CHECK(copy != nullptr);
    FUZZ_CHECK(fuzz_snapshot(copy) == blob);
    check_info(copy, t);
    for (const auto &kv : t.truth) {
        uint64_t q = 0;
        FUZZ_CHECK(tf_recency_sketch_query(copy, kv.first.data(), kv.first.size(), &q) == TF_OK);
        FUZZ_CHECK(q == query(t, kv.first));
    }
    // Continue with the copy: it must be indistinguishable.
    tf_recency_sketch_free(t.s);
    t.s = copy;
    sweep(t);
}

void merge(Tracked &dst, const Tracked &src) {
    std::map<std::string, uint64_t> before;
    for (const auto &kv : src.truth) before[kv.first] = query(dst, kv.first);
    FUZZ_CHECK(tf_recency_sketch_merge(dst.s, src.s) == TF_OK);
    for (const auto &kv : src.truth) {
        dst.wrote(kv.first, kv.second);
        // cell-wise max: at least what either side answered before
        FUZZ_CHECK(query(dst, kv.first) >= std::max(before[kv.first], query(src, kv.first)));
    }
    dst.max_written = std::max(dst.max_written, src.max_written);
    sweep(dst);
    // Idempotent: merging the same source again changes nothing.
    const std::vector<uint8_t> after = fuzz_snapshot(dst.s);
    FUZZ_CHECK(tf_recency_sketch_merge(dst.s, src.s) == TF_OK);
    FUZZ_CHECK(fuzz_snapshot(dst.s) == after);
}

void info(const Tracked &t) {
    check_info(t.s, t);
    size_t mem = 0, size = 0;
    FUZZ_CHECK(tf_recency_sketch_memory(t.s, &mem) == TF_OK);
    FUZZ_CHECK(mem >= t.cells * 8);
    FUZZ_CHECK(tf_recency_sketch_serialized_size(t.s, &size) == TF_OK);
    FUZZ_CHECK(size >= t.cells * 8 + 28);
}

// The sizing helper and new_for. The blocked model costs about a millisecond
// per call, so blocked sizes use few keys (and the run limits the calls).
void dimensions(Input &in) {
    static const double probs[] = {0.5, 0.25, 0.1, 0.05, 0.01, 0.001};
    uint64_t n = 1 + in.byte();
    const double p = probs[in.byte() % (sizeof probs / sizeof probs[0])];
    const uint32_t flags = in.byte() & kKnownFlags;
    if (flags & TF_RECENCY_SKETCH_BLOCKED) n = 1 + n % 8;
    uint64_t w = 0;
    uint32_t d = 0;
    FUZZ_CHECK(tf_recency_sketch_dimensions(n, p, flags, &w, &d) == TF_OK);
    FUZZ_CHECK(w >= 1 && d >= 1);
    FUZZ_CHECK(
        d <= ((flags & TF_RECENCY_SKETCH_BLOCKED) ? TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH : TF_RECENCY_SKETCH_MAX_DEPTH));
    FUZZ_CHECK(w * d <= (uint64_t(1) << 20));  // a sane size for <= 256 keys
    FUZZ_CHECK(tf_recency_sketch_dimensions(n, p, flags, nullptr, nullptr) == TF_OK);
    tf_recency_sketch *s = nullptr;
    FUZZ_CHECK(tf_recency_sketch_new_for(n, p, 7, flags, &s) == TF_OK);
    tf_recency_sketch_info i = TF_RECENCY_SKETCH_INFO_INIT;
    FUZZ_CHECK(tf_recency_sketch_get_info(s, &i) == TF_OK);
    FUZZ_CHECK(i.width == w && i.depth == d && i.flags == flags);
    tf_recency_sketch_free(s);
}

class Program {
   public:
    explicit Program(Input &in) : in_(in) {}

    std::string key() {
        const uint8_t b = in_.byte();
        if (b < 0xC0) return pool_key(b % 32);
        return in_.bytes((b & 0x3F) % 17);
    }
    uint64_t time() {
        const uint8_t b = in_.byte();
        const uint64_t x = b & 0x3F;
        switch (b >> 6) {
            case 0:
                clock_ = fuzz_sat_add(clock_, x);
                return clock_;
            case 1:
                clock_ = clock_ > x ? clock_ - x : 1;
                return clock_;
            case 2:
                clock_ = in_.u64();
                if (clock_ == 0) clock_ = 1;
                return clock_;
            default:
                if ((b & 0x20) == 0) return UINT64_MAX - (b & 0x1F);
                clock_ = fuzz_sat_add(clock_, uint64_t(b & 0x1F) << 20);
                return clock_;
        }
    }
    uint64_t span() {
        const uint8_t b = in_.byte();
        if (b == 0xFF) {
            const uint64_t v = in_.u64();
            return v ? v : 1;
        }
        if (b == 0xFE) return UINT64_MAX;
        return 1 + uint64_t(b);
    }

   private:
    Input &in_;
    uint64_t clock_ = 100;
};

void run(const uint8_t *data, size_t size) {
    Input in(data, size);
    const uint8_t h0 = in.byte(), h1 = in.byte(), h2 = in.byte(), h3 = in.byte();
    const uint32_t flags = h0 & kKnownFlags;
    const bool blocked = (flags & TF_RECENCY_SKETCH_BLOCKED) != 0;
    const uint32_t depth = 1 + h2 % (blocked ? TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH : TF_RECENCY_SKETCH_MAX_DEPTH);
    uint64_t width = 1 + h1 % 64;
    if (width * depth > kMaxCells) width = std::max<uint64_t>(1, kMaxCells / depth);
    const uint32_t seed = uint32_t(h3) * 0x01010101u;

    Tracked a, b;  // the sketch under test and a merge source of the same shape
    create(a, width, depth, seed, flags);
    create(b, width, depth, seed, flags ^ ((h0 >> 2) & TF_RECENCY_SKETCH_CONCURRENT));
    FUZZ_CHECK(estimate(a, 0) == 0.0);

    Program prog(in);
    unsigned dimension_calls = 0;
    for (size_t ops = 0; ops < kMaxOps && in.more(); ++ops) {
        switch (in.byte() % kOpCount) {
            case kUpdate: {
                const std::string k = prog.key();
                const uint64_t now = prog.time();
                FUZZ_CHECK(tf_recency_sketch_update(a.s, k.data(), k.size(), now) == TF_OK);
                a.wrote(k, now);
                check_key(a, k);
                break;
            }
            case kQuery:
                check_key(a, prog.key());
                break;
            case kPace: {
                const std::string k = prog.key();
                const uint64_t now = prog.time();
                pace(a, k, now, prog.span());
                break;
            }
            case kTtlInsert: {
                const std::string k = prog.key();
                const uint64_t now = prog.time();
                const uint64_t ttl = prog.span();
                FUZZ_CHECK(tf_recency_sketch_ttl_insert(a.s, k.data(), k.size(), now, ttl) == TF_OK);
                a.wrote(k, fuzz_sat_add(now, ttl));
                check_key(a, k);
                break;
            }
            case kTtlLive: {
                const std::string k = prog.key();
                const uint64_t now = prog.time();
                int live = -1;
                uint64_t exp = 0;
                FUZZ_CHECK(tf_recency_sketch_ttl_maybe_live(a.s, k.data(), k.size(), now, &live, nullptr) == TF_OK);
                FUZZ_CHECK(live == 0 || live == 1);
                const int live1 = live;
                FUZZ_CHECK(tf_recency_sketch_ttl_maybe_live(a.s, k.data(), k.size(), now, &live, &exp) == TF_OK);
                FUZZ_CHECK(live == live1);
                FUZZ_CHECK(exp == query(a, k));
                FUZZ_CHECK(live == (exp > now ? 1 : 0));
                if (a.truth_of(k) > now) FUZZ_CHECK(live == 1);  // "0 is never wrong"
                check_key(a, k);
                break;
            }
            case kUpdateSecond: {
                const std::string k = prog.key();
                const uint64_t now = prog.time();
                if (in.byte() & 1) {
                    FUZZ_CHECK(tf_recency_sketch_update(b.s, k.data(), k.size(), now) == TF_OK);
                    b.wrote(k, now);
                } else {
                    const uint64_t ttl = prog.span();
                    FUZZ_CHECK(tf_recency_sketch_ttl_insert(b.s, k.data(), k.size(), now, ttl) == TF_OK);
                    b.wrote(k, fuzz_sat_add(now, ttl));
                }
                check_key(b, k);
                break;
            }
            case kMerge:
                merge(a, b);
                break;
            case kMergeSelf: {
                const std::vector<uint8_t> before = fuzz_snapshot(a.s);
                FUZZ_CHECK(tf_recency_sketch_merge(a.s, a.s) == TF_OK);
                FUZZ_CHECK(fuzz_snapshot(a.s) == before);
                break;
            }
            case kMergeIncompatible: {
                tf_recency_sketch *o = incompatible_with(a, in.byte());
                FUZZ_CHECK(tf_recency_sketch_update(o, "x", 1, 1 + (uint64_t(1) << 62)) == TF_OK);
                expect_failure(a, TF_ERR_INCOMPATIBLE, [&] { return tf_recency_sketch_merge(a.s, o); });
                tf_recency_sketch_free(o);
                break;
            }
            case kClear:
                FUZZ_CHECK(tf_recency_sketch_clear(a.s) == TF_OK);
                a.forget();
                FUZZ_CHECK(estimate(a, 0) == 0.0);
                check_key(a, prog.key());
                break;
            case kClearSecond:
                FUZZ_CHECK(tf_recency_sketch_clear(b.s) == TF_OK);
                b.forget();
                break;
            case kRoundTrip:
                round_trip(a);
                break;
            case kErrorEstimate: {
                const uint8_t m = in.byte();
                const uint64_t since = m == 0 ? 0 : prog.time();
                const double p = estimate(a, since);
                FUZZ_CHECK(estimate(a, fuzz_sat_add(since, m)) <= p);  // non-increasing in `since`
                if (since > 0) FUZZ_CHECK(estimate(a, since - 1) >= p);
                break;
            }
            case kInvalid: {
                const uint8_t sub = in.byte();
                const std::string k = prog.key();
                invalid_call(a, sub, in, k);
                break;
            }
            case kSweep:
                sweep(a);
                sweep(b);
                break;
            case kInfo:
                info(a);
                info(b);
                break;
            case kDamagedBlob:
                damaged_blob(a, in);
                break;
            case kDimensions:
                if (dimension_calls++ < 2) dimensions(in);
                break;
            case kLongKey: {
                const std::string k = in.bytes(17 + size_t(in.byte()) * 4);
                const uint64_t now = prog.time();
                FUZZ_CHECK(tf_recency_sketch_update(a.s, k.data(), k.size(), now) == TF_OK);
                a.wrote(k, now);
                check_key(a, k);
                break;
            }
            case kPaceBurst: {
                const std::string k = prog.key();
                const uint64_t now = prog.time();
                const uint64_t interval = prog.span();
                const unsigned times = 2 + in.byte() % 3;
                const size_t grants = a.grants.size();
                for (unsigned i = 0; i < times; ++i) pace(a, k, now, interval);
                FUZZ_CHECK(a.grants.size() - grants <= 1);  // one grant per key and instant
                break;
            }
            default:
                break;
        }
    }
    sweep(a);
    sweep(b);
    info(a);
    tf_recency_sketch_free(a.s);
    tf_recency_sketch_free(b.s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    run(data, size);
    return 0;
}
