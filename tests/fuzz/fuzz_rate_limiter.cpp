// Fuzz target for the sliding-window rate limiter, through the public C API
// only (plus libmurmurhash to reseal blobs).
//
// The first input byte (% 4) picks what the rest is:
//   0  a blob for tf_rate_limiter_deserialize, as given;
//   1  the same with the payload length and checksum repaired, so that
//      mutations reach the structural checks behind the checksum;
//   2  an operation program on a bucketed limiter, against a reference that
//      keeps every key's bucket counts in an ordered map;
//   3  an operation program on an exact-mode limiter, against a reference
//      that keeps every key's grant times.
// Any violated invariant aborts (that is how a fuzzer reports a finding).
//
// A blob that loads must take at most 16 times its size plus 64 KiB of
// memory (rate_limiter.h), serialize to the same bytes (keys and overrides are
// written in increasing byte order, so equal states give equal bytes; the
// bucket width an exact-mode blob carries is ignored and written back as the
// window), load again into a limiter that answers every peek alike, and
// keep the rules that need no reference: a peek changes nothing, and the
// acquire that follows a peek with the same arguments decides the same.
//
// The references follow include/temporalfilters/rate_limiter.h and the
// model of tests/rate_limiter/limiter_model.c (ref_op):
//   - a key's decision on n permits against its limit L at its time
//     t = max(now, the key's latest time): granted when used + n <= L, then
//     remaining = L - used - n; otherwise remaining = L - used (0 if above),
//     retry_at = the time at which used + n - L permits have left the
//     window, UINT64_MAX when n > L. A key not tracked has an empty window
//     and t = now;
//   - with a global limit EVERY decision (peek and acquire, whether the key
//     allows or not) also asks the global window at max(t, its latest time):
//     granted when both grant, remaining = the smaller of the two answers'
//     remaining, retry_at = the later of the two retry times (a window that
//     grants contributes 0);
//   - bucketed: bucket index = time / B, a bucket leaves when the index of
//     the window's clock reaches its own + W / B; exact: a grant at g leaves
//     at g + W;
//   - acquire first brings the key's window (tracked keys only: a request
//     that is denied creates nothing) and the global window to their times,
//     granted or not; a granted request records n permits in both at those
//     times. peek changes nothing at all (the serialized bytes are checked);
//   - refund (tracked keys only) brings the key's and the global window to
//     their times, gives back the key's newest permits, and takes the same
//     buckets (exact: grant times) out of the global window where they
//     still are; reset forgets the key (not its override, not the global
//     window); an exact-mode key given another limit keeps its newest grants
//     that fit;
//   - idle keys (now - latest >= W) may be reclaimed by any acquire at
//     `now` (sweeps the caller cannot see). Whether some were is read from
//     the `reclaimed` counter after every request, and which from the
//     serialized state when some were (the blob lists the tracked keys; the
//     reference checks that each one that went away was idle, and that the
//     counter counted it). Each reclaimed key raises its
//     shard's reclaim horizon to its latest + W; the shard of a key is not
//     visible, so a key not tracked that asks (and that its limit allows)
//     may be denied with remaining 0 and retry_at = h for any horizon h a
//     shard can have (> now), and must be when now is below every shard's
//     horizon (after a round trip every shard starts at the blob's horizon,
//     the largest). The blob's horizon field is checked exactly (the largest
//     of them);
//   - a full table (max_keys): a new key whose limit allows it takes the
//     place of an idle key, or else FULL_DENY denies it (remaining 0,
//     retry_at UINT64_MAX, denied_full + 1) and FULL_ALLOW admits it
//     untracked (remaining 0, allowed_full + 1), still held to and charged
//     to the global limit. Room can be found only when some tracked key is
//     idle at `now`. Until the first fruitless search (from creation or a
//     round trip on) it must be then: the search covers every shard, and
//     the tables here never exceed the 16 slots it looks at. After one, the
//     next 63 requests look only at their own shard, which the caller
//     cannot see, so both outcomes are accepted, for peek as for acquire,
//     and the serialized state says which happened.
//     A FULL_DENY acquire still brings the global window to its time.
//   - peek answers what acquire would: a peek followed by the acquire with
//     the same arguments must decide alike (op 2; also on loaded blobs).
// The whole serialized state (parameters, counters, horizon, global window,
// overrides, every tracked key's clock and window) must equal the
// reference's: compared after every request that reclaimed keys, before a
// round trip, at the end, and otherwise after at most kFullCheckEvery
// operations (below); answers and counters after every operation.
//
// A full table makes room for a new key when enough idle keys can be
// reclaimed to go under its bound: one, or more when max_keys was lowered
// below the keys tracked (peek and acquire count alike).
//
// Input format of a program (missing bytes read as 0):
//   header: f0 (bit 0: TF_RATE_LIMITER_FULL_ALLOW; bit 1: a seed, not 0,
//           made from f0 >> 1, else seed 0), limit = 1 + b % 8,
//           buckets nb = 1 + b % 12, width B = 1 + u16 % 400 (W = nb * B;
//           exact mode passes the next byte as the ignored bucket width),
//           global g: b % 4 == 0 ? none : 1 + b / 4 % 24, max_keys m:
//           b % 4 == 0 ? 1 + b / 4 % 6 : none, start time 1 + u16
//   ops: opcode byte % 12, key byte (% 12: one of 12 keys: empty, short,
//        16-byte inline, 17- and 40-byte out-of-line), then operands:
//      0-1 acquire n-byte          6 reset
//      2   peek, then acquire the same (n-byte): both must decide alike
//      3   peek n-byte             7 set_key_limit b: b % 8 == 7 ? a limit
//      4   clock b                   above the maximum (refused) : b % 11
//      5   refund b % 4 permits    8 serialize, deserialize, go on with the copy
//      9   stats                  10 set_max_keys b % 3 == 0 ? 0 : b % 8
//     11   invalid calls, b % 10 picks which
//   n-byte: b % 16 == 15 ? a huge n : b % 16 == 14 ? limit + 1 : 1 + b % 4
//   clock: b < 96 forward b; < 160 forward (b - 95) buckets; < 200 forward
//          (b - 159) windows; < 240 back (b - 199) buckets; < 252 back
//          (b - 239); else near the end of time (UINT64_MAX - k windows).
// Times go backwards freely: the reference is exact for them too.
//
// Environment: TF_FUZZ_RATE_LIMITER_TRACE=1 prints every operation of a
// program and its answer to stderr.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <murmurhash.h>

#include "fuzz_common.hpp"

namespace {

constexpr size_t kHeader = kFuzzHeader;
constexpr size_t kOverhead = kFuzzOverhead;
constexpr uint64_t kNever = UINT64_MAX;

// TF_FUZZ_RATE_LIMITER_TRACE=1: programs print every operation to stderr.
bool tracing() {
    static const bool on = [] {
        const char *e = std::getenv("TF_FUZZ_RATE_LIMITER_TRACE");
        return e != nullptr && e[0] != '\0' && std::strcmp(e, "0") != 0;
    }();
    return on;
}

#define TRACE(...)                                        \
    do {                                                  \
        if (tracing()) std::fprintf(stderr, __VA_ARGS__); \
    } while (0)

void put_le64(uint8_t *p, uint64_t v) { fuzz_put_le64(p, v); }
uint64_t get_le(const uint8_t *p, int bytes) { return fuzz_get_le(p, bytes); }
std::vector<uint8_t> seal(std::vector<uint8_t> blob) { return fuzz_seal(std::move(blob)); }

uint64_t sat_add(uint64_t a, uint64_t b) { return fuzz_sat_add(a, b); }
uint64_t sat_mul(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? kNever : a * b; }

struct LimiterDeleter {
    void operator()(tf_rate_limiter *r) const { tf_rate_limiter_free(r); }
};
using Limiter = std::unique_ptr<tf_rate_limiter, LimiterDeleter>;

std::vector<uint8_t> snapshot(const tf_rate_limiter *r) {
    return fuzz_blob_of(r, tf_rate_limiter_serialized_size, tf_rate_limiter_serialize);
}

uint64_t memory_of(const tf_rate_limiter *r) {
    tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT;
    FUZZ_CHECK(tf_rate_limiter_get_stats(r, &st) == TF_OK);
    FUZZ_CHECK(st.memory > 0);
    return st.memory;
}

// Loads a blob that must load, checking deserialize's max_memory on the
// way: the limiter's own memory is enough, a byte less is refused.
Limiter reload(const std::vector<uint8_t> &blob) {
    tf_rate_limiter *r = nullptr;
    FUZZ_CHECK(tf_rate_limiter_deserialize(blob.data(), blob.size(), nullptr, &r) == TF_OK);
    FUZZ_CHECK(r != nullptr);
    Limiter loaded(r);
    const uint64_t need = memory_of(r);
    tf_deserialize_options opts = TF_DESERIALIZE_OPTIONS_INIT;
    opts.max_memory = need - 1;
    tf_rate_limiter *capped = nullptr;
    const tf_status st = tf_rate_limiter_deserialize(blob.data(), blob.size(), &opts, &capped);
    FUZZ_CHECK(st == TF_ERR_TOO_LARGE && capped == nullptr);
    fuzz_check_failure(st);
    opts.max_memory = need;
    FUZZ_CHECK(tf_rate_limiter_deserialize(blob.data(), blob.size(), &opts, &capped) == TF_OK);
    FUZZ_CHECK(memory_of(capped) == need);
    tf_rate_limiter_free(capped);
    return loaded;
}

struct Answer {
    int allowed = -1;
    uint64_t remaining = 0, retry_at = 0;
    bool operator==(const Answer &o) const {
        return allowed == o.allowed && remaining == o.remaining && retry_at == o.retry_at;
    }
    bool operator!=(const Answer &o) const { return !(*this == o); }
};

struct Counters {
    uint64_t keys = 0, reclaimed = 0, denied_full = 0, allowed_full = 0;
};

Counters counters(const tf_rate_limiter *r, bool bytes_too = false) {
    tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT;
    FUZZ_CHECK(tf_rate_limiter_get_stats(r, &st) == TF_OK);
    if (bytes_too) FUZZ_CHECK(st.memory > 0);
    Counters c;
    c.keys = st.keys, c.reclaimed = st.reclaimed, c.denied_full = st.denied_full, c.allowed_full = st.allowed_full;
    return c;
}

Answer ask(tf_rate_limiter *r, bool take, const void *key, size_t len, uint64_t now, uint64_t n) {
    Answer a;
    a.remaining = 0xDEAD, a.retry_at = 0xBEEF;
    const tf_status st = take ? tf_rate_limiter_acquire(r, key, len, now, n, &a.allowed, &a.remaining, &a.retry_at)
                              : tf_rate_limiter_peek(r, key, len, now, n, &a.allowed, &a.remaining, &a.retry_at);
    if (st != TF_OK) {  // a table that cannot grow; nothing else may fail here
        fuzz_check_failure(st);
        FUZZ_CHECK(st == TF_ERR_OUT_OF_MEMORY);
        a.allowed = -2;
        return a;
    }
    FUZZ_CHECK(a.allowed == 0 || a.allowed == 1);
    FUZZ_CHECK(!a.allowed || a.retry_at == 0);
    FUZZ_CHECK(a.allowed || a.retry_at > now || a.retry_at == kNever);
    return a;
}

// ---------------------------------------------------------------------------
// The serialized state (wire format kind 4, as lib/rate_limiter writes it):
//   u64 limit, window, bucket width, max_keys, global limit, reclaimed,
//   denied_full, allowed_full, horizon, global latest;
//   with a global limit: bucketed u64 counts[nb] (bucket j in slot j % nb),
//   exact u32 count + u64 times[count];
//   u64 override count, each u32 limit, u32 key length, key bytes;
//   u64 key count, each u32 key length, key bytes, u64 latest, then
//   bucketed u16 counts[nb] (slot order), exact u32 count + u64 times[count].

struct ParsedKey {
    std::string key;
    uint64_t latest = 0;
    std::vector<uint64_t> slots;  // bucketed
    std::vector<uint64_t> times;  // exact
};

struct Parsed {
    uint32_t flags = 0;  // the envelope's: the creation flags, bit 2 with a seed
    uint32_t seed = 0;
    uint64_t limit = 0, window = 0, width = 0, max_keys = 0, global_limit = 0;
    uint64_t reclaimed = 0, denied_full = 0, allowed_full = 0, horizon = 0, global_latest = 0;
    std::vector<uint64_t> global_slots, global_times;
    std::vector<std::pair<std::string, uint64_t>> overrides;
    std::vector<ParsedKey> keys;

    const ParsedKey *find(const std::string &k) const {
        for (const ParsedKey &p : keys)
            if (p.key == k) return &p;
        return nullptr;
    }
};

struct Reader {
    const uint8_t *p;
    size_t n, pos = 0;
    uint64_t le(int bytes) {
        FUZZ_CHECK(n - pos >= size_t(bytes));
        const uint64_t v = get_le(p + pos, bytes);
        pos += size_t(bytes);
        return v;
    }
    std::string str(uint64_t len) {
        FUZZ_CHECK(len <= n - pos);
        std::string s(reinterpret_cast<const char *>(p + pos), size_t(len));
        pos += size_t(len);
        return s;
    }
};

bool bytes_less(const std::string &a, const std::string &b) {
    const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
    return c != 0 ? c < 0 : a.size() < b.size();
}

// Parses a blob the library wrote (any inconsistency is a finding).
Parsed parse(const std::vector<uint8_t> &blob) {
    FUZZ_CHECK(blob.size() >= kOverhead);
    FUZZ_CHECK(std::memcmp(blob.data(), "TFLT", 4) == 0);
    FUZZ_CHECK(get_le(blob.data() + 12, 8) == blob.size() - kOverhead);
    Parsed s;
    s.flags = uint32_t(get_le(blob.data() + 8, 4));
    const bool exact = (s.flags & TF_RATE_LIMITER_EXACT) != 0;
    Reader r{blob.data() + kHeader, blob.size() - kOverhead};
    s.limit = r.le(8), s.window = r.le(8), s.width = r.le(8), s.max_keys = r.le(8), s.global_limit = r.le(8);
    s.reclaimed = r.le(8), s.denied_full = r.le(8), s.allowed_full = r.le(8), s.horizon = r.le(8);
    s.global_latest = r.le(8);
    if (s.flags & 0x4) {  // the seed field, never 0
        s.seed = uint32_t(r.le(4));
        FUZZ_CHECK(s.seed != 0);
    }
    FUZZ_CHECK(s.window != 0 && s.width != 0 && s.window % s.width == 0);
    const uint64_t nb = exact ? 1 : s.window / s.width;
    if (s.global_limit != 0) {
        if (exact) {
            const uint64_t count = r.le(4);
            for (uint64_t i = 0; i < count; ++i) s.global_times.push_back(r.le(8));
        } else {
            for (uint64_t i = 0; i < nb; ++i) s.global_slots.push_back(r.le(8));
        }
    }
    const uint64_t n_over = r.le(8);
    for (uint64_t i = 0; i < n_over; ++i) {
        const uint64_t lim = r.le(4), len = r.le(4);
        s.overrides.emplace_back(r.str(len), lim);
        if (i > 0) FUZZ_CHECK(bytes_less(s.overrides[i - 1].first, s.overrides[i].first));
    }
    const uint64_t n_keys = r.le(8);
    for (uint64_t i = 0; i < n_keys; ++i) {
        ParsedKey k;
        k.key = r.str(r.le(4));
        k.latest = r.le(8);
        if (exact) {
            const uint64_t count = r.le(4);
            for (uint64_t j = 0; j < count; ++j) k.times.push_back(r.le(8));
        } else {
            for (uint64_t j = 0; j < nb; ++j) k.slots.push_back(r.le(2));
        }
        if (i > 0) FUZZ_CHECK(bytes_less(s.keys.back().key, k.key));
        s.keys.push_back(std::move(k));
    }
    FUZZ_CHECK(r.pos == r.n);
    return s;
}

// ---------------------------------------------------------------------------
// Blobs

// A blob that loads must serialize to the same bytes, load again, and the
// two copies must answer every peek alike; then the rules that need no
// reference are checked on one of them.
void check_blob(const uint8_t *data, size_t size) {
    tf_rate_limiter *raw = nullptr;
    tf_clear_last_error();
    const tf_status st = tf_rate_limiter_deserialize(data, size, nullptr, &raw);
    if (st != TF_OK) {
        fuzz_check_failure(st);
        FUZZ_CHECK(fuzz_is_deserialize_error(st));
        FUZZ_CHECK(st != TF_ERR_OUT_OF_MEMORY);
        FUZZ_CHECK(raw == nullptr);
        return;
    }
    FUZZ_CHECK(raw != nullptr);
    Limiter a(raw);
    // the bound of tf_rate_limiter_deserialize, whatever limits the blob
    // declares: at most 16 times its size plus 64 KiB
    FUZZ_CHECK(memory_of(a.get()) <= 16 * uint64_t(size) + 65536);
    const std::vector<uint8_t> blob = snapshot(a.get());
    {
        // the same bytes, but for the bucket width of an exact-mode blob
        // (ignored; written back as the window)
        std::vector<uint8_t> want(data, data + size);
        if (size >= kHeader + 24 && (get_le(data + 8, 4) & TF_RATE_LIMITER_EXACT)) {
            put_le64(want.data() + kHeader + 16, get_le(data + kHeader + 8, 8));
            want = seal(std::move(want));
        }
        FUZZ_CHECK(blob == want);
    }
    {  // a buffer one byte short is refused
        std::vector<uint8_t> small(blob.size() - 1);
        size_t written = 0;
        FUZZ_CHECK(tf_rate_limiter_serialize(a.get(), small.data(), small.size(), &written) == TF_ERR_BUFFER_TOO_SMALL);
    }
    Limiter b = reload(blob);
    FUZZ_CHECK(snapshot(b.get()) == blob);
    const Parsed p = parse(blob);
    const Counters ca = counters(a.get(), true), cb = counters(b.get(), true);
    FUZZ_CHECK(ca.keys == p.keys.size() && cb.keys == ca.keys);
    FUZZ_CHECK(ca.reclaimed == p.reclaimed && cb.reclaimed == ca.reclaimed);
    FUZZ_CHECK(ca.denied_full == p.denied_full && cb.denied_full == ca.denied_full);
    FUZZ_CHECK(ca.allowed_full == p.allowed_full && cb.allowed_full == ca.allowed_full);

    // Keys: those of the blob and its overrides, and new ones. Times: near
    // the keys' clocks, the global clock, the horizon and a time taken from
    // the blob.
    std::vector<std::string> keys;
    for (const ParsedKey &k : p.keys) keys.push_back(k.key);
    for (const auto &o : p.overrides) keys.push_back(o.first);
    keys.emplace_back("fresh-1");
    keys.emplace_back();
    std::vector<uint64_t> bases = {p.global_latest, p.horizon};
    for (const ParsedKey &k : p.keys) bases.push_back(k.latest);
    uint64_t mix = 1;
    for (size_t i = 0; i < 16 && kHeader + i < size; ++i) mix = mix * 131 + data[kHeader + i];
    bases.push_back(mix % (uint64_t(1) << 40) + 1);
    const uint64_t W = p.window, B = (p.flags & TF_RATE_LIMITER_EXACT) ? p.window : p.width;
    const uint64_t offsets[] = {0, 1, B, W - 1, W, sat_add(W, W)};
    auto time_of = [&](size_t i) {
        const uint64_t base = bases[(i * 7) % bases.size()];
        const uint64_t off = offsets[(i / 3) % 6];
        const uint64_t t = (i % 3 == 2) ? (base > off ? base - off : 1) : sat_add(base, off);
        return t == 0 ? uint64_t(1) : t;
    };

    // Peeks: both copies alike, and nothing changes.
    for (size_t i = 0; i < 24; ++i) {
        const std::string &k = keys[i % keys.size()];
        const uint64_t t = time_of(i), n = 1 + uint64_t(i % 3);
        const Answer pa = ask(a.get(), false, k.data(), k.size(), t, n);
        FUZZ_CHECK(pa == ask(b.get(), false, k.data(), k.size(), t, n));
    }
    FUZZ_CHECK(snapshot(a.get()) == blob);

    // Then requests on one copy: a peek, then the acquire it predicts.
    for (size_t i = 0; i < 24; ++i) {
        const std::string &k = keys[(i * 5 + 1) % keys.size()];
        const uint64_t t = time_of(i + 24), n = 1 + uint64_t(i % 2);
        if (i % 6 == 5) {
            FUZZ_CHECK(tf_rate_limiter_refund(a.get(), k.data(), k.size(), t, 1) == TF_OK);
            continue;
        }
        const std::vector<uint8_t> before = snapshot(a.get());
        const Answer pa = ask(a.get(), false, k.data(), k.size(), t, n);
        FUZZ_CHECK(snapshot(a.get()) == before);
        const Answer aa = ask(a.get(), true, k.data(), k.size(), t, n);
        if (pa != aa) {
            std::fprintf(stderr,
                         "fuzz_rate_limiter: peek then acquire (n %llu at %llu) decided differently: "
                         "(%d, %llu, %llu) then (%d, %llu, %llu)\n",
                         (unsigned long long)n, (unsigned long long)t, pa.allowed, (unsigned long long)pa.remaining,
                         (unsigned long long)pa.retry_at, aa.allowed, (unsigned long long)aa.remaining,
                         (unsigned long long)aa.retry_at);
            FUZZ_CHECK(pa == aa);
        }
    }
    const Counters da = counters(a.get(), true);
    FUZZ_CHECK(da.denied_full >= ca.denied_full && da.allowed_full >= ca.allowed_full && da.reclaimed >= ca.reclaimed);
    const std::vector<uint8_t> end = snapshot(a.get());
    FUZZ_CHECK(da.keys == parse(end).keys.size());
    FUZZ_CHECK(snapshot(reload(end).get()) == end);
}

// ---------------------------------------------------------------------------
// The reference

struct Spec {
    bool exact = false;
    uint64_t width = 1, nb = 1, window = 1;  // window = nb * width
};

// A bucketed window: bucket index -> count, and the window's clock.
struct Buckets {
    std::map<uint64_t, uint64_t> count;
    uint64_t latest = 0;
};

// An exact window: grant times, oldest first, and the window's clock.
struct Times {
    std::deque<uint64_t> at;
    uint64_t latest = 0;
};

// The window's state seen from time t (t >= its clock), without changing
// it: the permits in it, and when they leave.
struct View {
    uint64_t used = 0;
    std::vector<std::pair<uint64_t, uint64_t>> leave;  // (time it leaves, permits), oldest first

    uint64_t retry(uint64_t need) const {
        uint64_t freed = 0;
        for (const auto &e : leave)
            if ((freed += e.second) >= need) return e.first;
        FUZZ_CHECK(false);  // the caller asks only for permits in the window
        return kNever;
    }
};

uint64_t leaves_at(const Spec &s, uint64_t j) {
    const uint64_t k = j + s.nb;
    return k < j || k > kNever / s.width ? kNever : k * s.width;
}

// Whether bucket j (<= head) is still in the window whose head is `head`
// (j + nb > head, without overflow at the end of time).
bool live(const Spec &s, uint64_t j, uint64_t head) { return head - j < s.nb; }

View view(const Spec &s, const Buckets &b, uint64_t t) {
    View v;
    const uint64_t head = t / s.width;
    for (const auto &e : b.count) {
        FUZZ_CHECK(e.first <= head);
        if (e.second == 0 || !live(s, e.first, head)) continue;  // left the window
        v.used += e.second;
        v.leave.emplace_back(leaves_at(s, e.first), e.second);
    }
    return v;
}

View view(const Spec &s, const Times &w, uint64_t t) {
    View v;
    for (uint64_t g : w.at) {
        if (t >= s.window && g <= t - s.window) continue;  // left the window
        ++v.used;
        v.leave.emplace_back(sat_add(g, s.window), 1);
    }
    return v;
}

// Brings a window to time t: drops what left it.
void advance(const Spec &s, Buckets &b, uint64_t t) {
    b.latest = std::max(b.latest, t);
    const uint64_t head = b.latest / s.width;
    for (auto it = b.count.begin(); it != b.count.end();)
        it = !live(s, it->first, head) ? b.count.erase(it) : std::next(it);
}

void advance(const Spec &s, Times &w, uint64_t t) {
    w.latest = std::max(w.latest, t);
    while (!w.at.empty() && w.latest >= s.window && w.at.front() <= w.latest - s.window) w.at.pop_front();
}

// Records n permits at the window's clock (advanced before).
void take(const Spec &s, Buckets &b, uint64_t n) { b.count[b.latest / s.width] += n; }
void take(const Spec &, Times &w, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) w.at.push_back(w.latest);
}

// Gives back up to n permits, newest first; `back(bucket or time, permits)`
// hears of each.
template <class F>
void give_back(Buckets &b, uint64_t n, F &&back) {
    uint64_t done = 0;
    for (auto it = b.count.rbegin(); it != b.count.rend() && done < n; ++it) {
        const uint64_t k = std::min(it->second, n - done);
        if (k == 0) continue;
        it->second -= k;
        done += k;
        back(it->first, k);
    }
}

template <class F>
void give_back(Times &w, uint64_t n, F &&back) {
    for (uint64_t done = 0; done < n && !w.at.empty(); ++done) {
        back(w.at.back(), 1);
        w.at.pop_back();
    }
}

// The global window's side of a refund: up to k permits out of bucket j if
// it is still in the window; exact: the newest grant at time g, if any.
void take_out(Buckets &b, uint64_t j, uint64_t k) {
    auto it = b.count.find(j);
    if (it != b.count.end()) it->second -= std::min(it->second, k);
}

void take_out(Times &w, uint64_t g, uint64_t) {
    for (size_t i = w.at.size(); i > 0; --i) {
        if (w.at[i - 1] < g) return;
        if (w.at[i - 1] == g) {
            w.at.erase(w.at.begin() + long(i - 1));
            return;
        }
    }
}

// A key given another limit: an exact-mode record keeps its newest grants
// that fit; a bucketed one keeps its counts.
void keep_newest(Buckets &, uint64_t) {}
void keep_newest(Times &w, uint64_t limit) {
    while (w.at.size() > limit) w.at.pop_front();
}

// What the serialized state holds of a window.
bool same_window(const Spec &s, const Buckets &b, const std::vector<uint64_t> &slots, const std::vector<uint64_t> &) {
    std::vector<uint64_t> want(s.nb, 0);
    for (const auto &e : b.count)
        if (live(s, e.first, b.latest / s.width)) want[e.first % s.nb] += e.second;
    return want == slots;
}

bool same_window(const Spec &, const Times &w, const std::vector<uint64_t> &, const std::vector<uint64_t> &times) {
    return std::vector<uint64_t>(w.at.begin(), w.at.end()) == times;
}

void print_window(const char *who, const Buckets &b, const std::vector<uint64_t> &slots,
                  const std::vector<uint64_t> &) {
    std::fprintf(stderr, "  %s: reference clock %llu, buckets", who, (unsigned long long)b.latest);
    for (const auto &e : b.count)
        std::fprintf(stderr, " %llu:%llu", (unsigned long long)e.first, (unsigned long long)e.second);
    std::fprintf(stderr, "; serialized slots");
    for (uint64_t c : slots) std::fprintf(stderr, " %llu", (unsigned long long)c);
    std::fprintf(stderr, "\n");
}

void print_window(const char *who, const Times &w, const std::vector<uint64_t> &, const std::vector<uint64_t> &times) {
    std::fprintf(stderr, "  %s: reference clock %llu, grants", who, (unsigned long long)w.latest);
    for (uint64_t g : w.at) std::fprintf(stderr, " %llu", (unsigned long long)g);
    std::fprintf(stderr, "; serialized");
    for (uint64_t g : times) std::fprintf(stderr, " %llu", (unsigned long long)g);
    std::fprintf(stderr, "\n");
}

struct Decision {
    bool allowed = false;
    uint64_t remaining = 0, retry_at = 0;
};

Answer answer(const Decision &d) {
    Answer a;
    a.allowed = d.allowed ? 1 : 0;
    a.remaining = d.remaining;
    a.retry_at = d.retry_at;
    return a;
}

// One window's decision on n permits against `limit`.
Decision decide(const View &v, uint64_t limit, uint64_t n) {
    Decision d;
    if (n <= limit && v.used <= limit - n) {
        d.allowed = true;
        d.remaining = limit - v.used - n;
        return d;
    }
    d.remaining = v.used >= limit ? 0 : limit - v.used;
    d.retry_at = n > limit ? kNever : v.retry(v.used + n - limit);
    return d;
}

// The key's and the global window's decisions on n permits together (a
// denial takes nothing: a window that would have granted keeps its n).
Decision combine(const Decision &k, const Decision &g, uint64_t n) {
    Decision d;
    d.allowed = k.allowed && g.allowed;
    const uint64_t rk = !d.allowed && k.allowed ? k.remaining + n : k.remaining;
    const uint64_t rg = !d.allowed && g.allowed ? g.remaining + n : g.remaining;
    d.remaining = std::min(rk, rg);
    d.retry_at = d.allowed ? 0 : std::max(k.allowed ? 0 : k.retry_at, g.allowed ? 0 : g.retry_at);
    return d;
}

template <class Window>
struct RefKey {
    bool tracked = false;  // the limiter holds a record of the key
    Window w;
    uint64_t override_limit = 0;  // 0: the default
};

constexpr int kKeys = 12;

const std::string &pool_key(uint8_t i) {
    static const std::string keys[kKeys] = {
        std::string(),
        std::string("a"),
        std::string("b"),
        std::string("ab"),
        std::string("key-3"),
        std::string("\x00\x01", 2),
        std::string("\xff"),
        std::string("user:0000007"),
        std::string("0123456789abcdef"),
        std::string("0123456789abcdeX"),
        std::string("0123456789abcdef+"),
        std::string("a key that is stored outside the table, 40"),
    };
    return keys[i % kKeys];
}

using Input = FuzzInput;

// How a request was decided (which of the documented outcomes).
enum class Outcome { tracked, too_many, horizon, normal, no_room };

const char *outcome_name(Outcome o) {
    switch (o) {
        case Outcome::tracked:
            return "tracked key";
        case Outcome::too_many:
            return "n above the key's limit";
        case Outcome::horizon:
            return "reclaim horizon";
        case Outcome::normal:
            return "new key";
        case Outcome::no_room:
            return "full table, no room";
    }
    return "?";
}

// Operations per program: 12 keys, tables of at most 6, windows of at most
// 12 buckets and clock moves of up to 40 windows reach every state in far
// fewer; the bound keeps an input's cost to milliseconds under ASan, so that
// 1e7 executions fit in hours (docs/reliability.md, "Fuzzing").
constexpr int kProgramSteps = 384;
// Every answer is compared with the reference's when it is given, and the
// counters (tf_rate_limiter_get_stats) after every request; the whole
// serialized state (a serialize and a parse: the costly part, a sort of the
// keys and a lock of each of the 64 shards, twice) is compared with the
// reference after every request that reclaimed keys (only the state says
// which), before a round trip, at the end, and otherwise after at most this
// many operations that changed it (or had to leave it as it was). A
// divergence that some later operation would hide again within that many
// is the only kind this can miss.
constexpr int kFullCheckEvery = 8;

template <class Window>
class Program {
   public:
    Program(Input in, bool exact) : in_(in) {
        spec_.exact = exact;
        const uint8_t f0 = in_.byte();
        flags_ = (exact ? TF_RATE_LIMITER_EXACT : 0u) | ((f0 & 1) ? TF_RATE_LIMITER_FULL_ALLOW : 0u);
        seed_ = (f0 & 2) ? 0x9e3779b9u * uint32_t(f0 >> 1) : 0u;  // odd times odd: never 0
        limit_ = 1 + in_.byte() % 8;
        spec_.nb = 1 + in_.byte() % 12;
        spec_.width = 1 + in_.u16() % 400;
        spec_.window = spec_.nb * spec_.width;
        uint64_t width_arg = spec_.width;
        if (exact) {
            width_arg = in_.byte();  // ignored in exact mode
            spec_.width = spec_.window, spec_.nb = 1;
        }
        const uint8_t g = in_.byte();
        const uint8_t m = in_.byte();
        global_limit_ = g % 4 == 0 ? 0 : 1 + g / 4 % 24;
        max_keys_ = m % 4 == 0 ? 1 + m / 4 % 6 : 0;
        now_ = 1 + uint64_t(in_.u16());

        tf_rate_limiter *raw = nullptr;
        FUZZ_CHECK(tf_rate_limiter_new(limit_, spec_.window, width_arg, seed_, flags_, &raw) == TF_OK);
        lim_.reset(raw);
        if (global_limit_) FUZZ_CHECK(tf_rate_limiter_set_global_limit(raw, global_limit_) == TF_OK);
        if (max_keys_) FUZZ_CHECK(tf_rate_limiter_set_max_keys(raw, max_keys_) == TF_OK);
        TRACE("new(limit %llu, window %llu, width %llu, seed %u, flags %u) global %llu max_keys %llu now %llu\n",
              (unsigned long long)limit_, (unsigned long long)spec_.window, (unsigned long long)width_arg,
              unsigned(seed_), unsigned(flags_), (unsigned long long)global_limit_, (unsigned long long)max_keys_,
              (unsigned long long)now_);
        blob_ = snapshot(raw);
        parsed_ = parse(blob_);
        check_state(parsed_);
    }

    void run() {
        int steps = 0;
        while (in_.more() && steps++ < kProgramSteps) {
            const uint8_t op = in_.byte() % 12;
            const uint8_t k = in_.byte() % kKeys;
            switch (op) {
                case 0:
                case 1:
                    request(k, true, amount(in_.byte()));
                    break;
                case 2:
                    peek_then_acquire(k, amount(in_.byte()));
                    break;
                case 3:
                    request(k, false, amount(in_.byte()));
                    break;
                case 4:
                    clock(in_.byte());
                    break;
                case 5:
                    refund(k, in_.byte() % 4);
                    break;
                case 6:
                    reset(k);
                    break;
                case 7:
                    set_key_limit(k, in_.byte());
                    break;
                case 8:
                    round_trip();
                    break;
                case 9:
                    stats();
                    break;
                case 10: {
                    const uint8_t b = in_.byte();
                    max_keys_ = b % 3 == 0 ? 0 : b % 8;
                    FUZZ_CHECK(tf_rate_limiter_set_max_keys(lim_.get(), max_keys_) == TF_OK);
                    TRACE("set_max_keys %llu\n", (unsigned long long)max_keys_);
                    changed();
                    break;
                }
                case 11:
                    invalid(k, in_.byte());
                    break;
            }
            if (stale_ && ++unchecked_ >= kFullCheckEvery) sync();
        }
        stats();
        round_trip();
    }

   private:
    struct Result {
        Answer got;
        Outcome how = Outcome::tracked;
    };

    uint64_t amount(uint8_t b) const {
        if (b % 16 == 15) return b >= 128 ? kNever : (uint64_t(1) << 32) + b;
        if (b % 16 == 14) return limit_ + 1;
        return 1 + b % 4;
    }

    uint64_t key_limit(const RefKey<Window> &key) const { return key.override_limit ? key.override_limit : limit_; }

    size_t tracked_count() const {
        size_t n = 0;
        for (const auto &key : keys_) n += key.tracked;
        return n;
    }

    bool idle(const RefKey<Window> &key, uint64_t now) const {
        return key.tracked && now >= key.w.latest && now - key.w.latest >= spec_.window;
    }

    // The largest reclaim horizon of any shard (the blob's field).
    uint64_t horizon_max() const {
        uint64_t h = base_;
        for (uint64_t c : reclaimed_at_) h = std::max(h, c);
        return h;
    }

    // Compares the serialized state with the reference.
    void check_state(const Parsed &p) {
        bool ok = true;
        auto expect = [&](bool cond, const char *what, uint64_t got, uint64_t want) {
            if (cond) return;
            std::fprintf(stderr, "fuzz_rate_limiter: serialized %s is %llu, the reference says %llu\n", what,
                         (unsigned long long)got, (unsigned long long)want);
            ok = false;
        };
        const uint32_t wire_flags = flags_ | (seed_ != 0 ? 0x4u : 0u);
        expect(p.flags == wire_flags, "flags", p.flags, wire_flags);
        expect(p.seed == seed_, "seed", p.seed, seed_);
        expect(p.limit == limit_, "limit", p.limit, limit_);
        expect(p.window == spec_.window, "window", p.window, spec_.window);
        expect(p.width == spec_.width, "bucket width", p.width, spec_.width);
        expect(p.max_keys == max_keys_, "max_keys", p.max_keys, max_keys_);
        expect(p.global_limit == global_limit_, "global limit", p.global_limit, global_limit_);
        expect(p.reclaimed == reclaimed_, "reclaimed", p.reclaimed, reclaimed_);
        expect(p.denied_full == denied_full_, "denied_full", p.denied_full, denied_full_);
        expect(p.allowed_full == allowed_full_, "allowed_full", p.allowed_full, allowed_full_);
        expect(p.horizon == horizon_max(), "horizon", p.horizon, horizon_max());
        expect(p.global_latest == global_.latest, "global clock", p.global_latest, global_.latest);
        if (global_limit_ && !same_window(spec_, global_, p.global_slots, p.global_times)) {
            std::fprintf(stderr, "fuzz_rate_limiter: the global window differs from the reference's\n");
            print_window("global", global_, p.global_slots, p.global_times);
            ok = false;
        }
        std::vector<std::pair<std::string, uint64_t>> over;
        for (int i = 0; i < kKeys; ++i)
            if (keys_[i].override_limit) over.emplace_back(pool_key(uint8_t(i)), keys_[i].override_limit);
        std::sort(over.begin(), over.end(), [](const auto &x, const auto &y) { return bytes_less(x.first, y.first); });
        expect(over == p.overrides, "overrides (equal)", 0, 1);
        expect(p.keys.size() == tracked_count(), "number of keys", p.keys.size(), tracked_count());
        for (int i = 0; i < kKeys; ++i) {
            const RefKey<Window> &key = keys_[i];
            const ParsedKey *pk = p.find(pool_key(uint8_t(i)));
            if (!key.tracked) {
                if (pk) std::fprintf(stderr, "fuzz_rate_limiter: key %d is tracked, the reference has none\n", i);
                ok = ok && !pk;
                continue;
            }
            if (!pk) {
                std::fprintf(stderr, "fuzz_rate_limiter: key %d is not tracked, the reference has it\n", i);
                ok = false;
                continue;
            }
            expect(pk->latest == key.w.latest, "key clock", pk->latest, key.w.latest);
            if (!same_window(spec_, key.w, pk->slots, pk->times)) {
                std::fprintf(stderr, "fuzz_rate_limiter: key %d's window differs from the reference's\n", i);
                print_window("key", key.w, pk->slots, pk->times);
                ok = false;
            }
        }
        const Counters c = counters(lim_.get());
        expect(c.keys == tracked_count(), "stats keys", c.keys, tracked_count());
        expect(c.reclaimed == reclaimed_ && c.denied_full == denied_full_ && c.allowed_full == allowed_full_,
               "stats counters (equal)", 0, 1);
        FUZZ_CHECK(ok);
    }

    // The full comparison: the serialized state against the reference,
    // every field (check_state); blob_ and parsed_ become the current state.
    void sync() {
        std::vector<uint8_t> bytes = snapshot(lim_.get());
        Parsed fresh;
        const Parsed &p = parsed(bytes, fresh);
        adopt(std::move(bytes), p);
    }

    // The parse of a snapshot: the one kept with blob_ when the bytes are
    // the same (parse is a function of the bytes; most operations change
    // nothing), else a new one in `fresh`.
    const Parsed &parsed(const std::vector<uint8_t> &bytes, Parsed &fresh) const {
        if (bytes == blob_) return parsed_;
        fresh = parse(bytes);
        return fresh;
    }

    // The same with a snapshot taken since the operation: every field of the
    // state is checked against the reference, changed or not.
    void adopt(std::vector<uint8_t> bytes, const Parsed &p) {
        check_state(p);
        if (&p != &parsed_) parsed_ = p;
        blob_.swap(bytes);
        stale_ = false;
        unchecked_ = 0;
    }

    // After an operation whose effect on the state the reference knows
    // (whatever it was, the reference has been updated for it; one that must
    // change nothing left the reference as it was): the full comparison
    // waits for the next operation that needs the serialized state, at most
    // kFullCheckEvery operations (and the end of the program).
    void changed() { stale_ = true; }

    Result request(uint8_t k, bool acquire, uint64_t n) {
        const std::string &name = pool_key(k);
        RefKey<Window> &key = keys_[k];
        const uint64_t now = now_;
        const size_t tracked_before = tracked_count();
        peak_tracked_ = std::max(peak_tracked_, tracked_before);
        // a full table makes room for a new key when it can reclaim enough
        // idle keys to go under its bound (more than one when the bound was
        // lowered below the keys tracked)
        size_t idle_count = 0;
        for (const auto &other : keys_) idle_count += idle(other, now) ? 1 : 0;
        const size_t need = max_keys_ != 0 && tracked_before >= max_keys_ ? tracked_before - max_keys_ + 1 : 0;
        const bool enough_idle = idle_count >= need;

        Result res;
        res.got = ask(lim_.get(), acquire, name.data(), name.size(), now, n);
        TRACE("%s key %u n %llu at %llu -> (%d, %llu, %llu)\n", acquire ? "acquire" : "peek", unsigned(k),
              (unsigned long long)n, (unsigned long long)now, res.got.allowed, (unsigned long long)res.got.remaining,
              (unsigned long long)res.got.retry_at);
        const Answer &got = res.got;
        FUZZ_CHECK(got.allowed != -2);  // the tables here are tiny
        // What the request did beyond its answer, from the counters (a lock
        // of each shard): keys tracked, reclaimed, denied or allowed on a full
        // table. Which keys a reclaim took only the serialized state tells:
        // then it is read, and compared in full below.
        const Counters c = counters(lim_.get());
        std::vector<uint8_t> bytes;
        Parsed fresh;
        const Parsed *p = nullptr;
        if (c.reclaimed != reclaimed_) {
            bytes = snapshot(lim_.get());
            p = &parsed(bytes, fresh);
        }

        // Keys reclaimed meanwhile: they were idle at `now`.
        uint64_t gone = 0;
        for (int i = 0; p && i < kKeys; ++i) {
            RefKey<Window> &other = keys_[i];
            if (i == k || !other.tracked || p->find(pool_key(uint8_t(i)))) continue;
            FUZZ_CHECK(acquire);
            if (!idle(other, now)) {
                std::fprintf(stderr, "fuzz_rate_limiter: key %d (latest %llu) reclaimed at %llu, window %llu\n", i,
                             (unsigned long long)other.w.latest, (unsigned long long)now,
                             (unsigned long long)spec_.window);
                FUZZ_CHECK(idle(other, now));
            }
            reclaimed_at_.push_back(sat_add(other.w.latest, spec_.window));
            other.tracked = false;
            other.w = Window();
            ++gone;
        }
        reclaimed_ += gone;
        FUZZ_CHECK(c.reclaimed == reclaimed_);  // the counter counts the keys that went
        // the key is tracked now: the keys the reference still tracks, plus
        // this one when it was not among them
        const uint64_t others = tracked_count() - (key.tracked ? 1 : 0);
        FUZZ_CHECK(c.keys == others || c.keys == others + 1);
        if (p) FUZZ_CHECK((p->find(name) != nullptr) == (c.keys == others + 1));
        const bool present = c.keys == others + 1;
        const uint64_t d_denied = c.denied_full - denied_full_, d_allowed = c.allowed_full - allowed_full_;
        FUZZ_CHECK(d_denied <= 1 && d_allowed <= 1);

        if (key.tracked) {
            FUZZ_CHECK(present && d_denied == 0 && d_allowed == 0);
            const uint64_t t = std::max(now, key.w.latest);
            if (acquire) advance(spec_, key.w, t);
            Decision d = decide(view(spec_, key.w, t), key_limit(key), n);
            if (global_limit_) {
                const uint64_t gt = std::max(t, global_.latest);
                const Decision gd = decide(view(spec_, global_, gt), global_limit_, n);
                if (acquire) advance(spec_, global_, gt);
                d = combine(d, gd, n);
                if (d.allowed && acquire) take(spec_, global_, n);
            }
            if (d.allowed && acquire) take(spec_, key.w, n);
            if (got != answer(d)) report(k, acquire, n, now, got, {answer(d)}, {Outcome::tracked});
            settle(std::move(bytes), p);
            return res;
        }

        // A key the limiter does not track: the documented outcomes.
        struct Cand {
            Outcome how;
            Decision d;
            bool tracked_after = false, denied_full = false, allowed_full = false;
            bool advance_global = false, take_global = false, reclaims = false;
        };
        std::vector<Cand> cands;
        const uint64_t klimit = key_limit(key);
        Decision kd;
        kd.allowed = n <= klimit;
        kd.remaining = kd.allowed ? klimit - n : klimit;
        kd.retry_at = kd.allowed ? 0 : kNever;
        const uint64_t gt = std::max(now, global_.latest);
        Decision gd;
        if (global_limit_) gd = decide(view(spec_, global_, gt), global_limit_, n);
        auto with_global = [&](const Decision &d) { return global_limit_ ? combine(d, gd, n) : d; };
        auto add = [&](Outcome how, const Decision &d0, bool room) {
            Cand c;
            c.how = how;
            c.d = with_global(d0);
            c.advance_global = acquire && global_limit_ != 0;
            c.take_global = acquire && c.d.allowed && global_limit_ != 0;
            c.tracked_after = acquire && c.d.allowed && how == Outcome::normal;
            c.reclaims = room;
            cands.push_back(c);
        };
        if (!kd.allowed) {
            add(Outcome::too_many, kd, false);
        } else {
            const bool full = max_keys_ != 0 && tracked_before >= max_keys_;
            // room is certain while every search looks at every shard and
            // every shard's table is small enough for the search's 16 slots
            // to be the whole table (peak_tracked_): a sweep then reclaims
            // every idle key its shard holds, however many are needed (the
            // bound lowered below the keys tracked). Before the sweep marked
            // its keys first, an erase cost it a step and a shard could keep
            // one (regress-search-misses-idle-key, which now fails against a
            // library with that sweep)
            const bool room_certain = full && enough_idle && search_all_ && peak_tracked_ <= kSmallTableKeys;
            if (base_ <= now) {  // some shard's horizon may be <= now
                if (!full || enough_idle) add(Outcome::normal, kd, full && acquire);
                if (full && !room_certain) {
                    if (flags_ & TF_RATE_LIMITER_FULL_ALLOW) {
                        Decision d0 = kd;
                        d0.remaining = 0;
                        add(Outcome::no_room, d0, false);
                        cands.back().allowed_full = acquire && cands.back().d.allowed;
                    } else {
                        Decision never;
                        never.retry_at = kNever;
                        add(Outcome::no_room, never, false);
                        cands.back().denied_full = acquire;
                    }
                }
            }
            // a reclaim horizon of the key's shard above now
            std::vector<uint64_t> hs = {base_};
            for (uint64_t c : reclaimed_at_)
                if (c > base_) hs.push_back(c);
            for (uint64_t h : hs) {
                if (h <= now) continue;
                Decision d0;
                d0.retry_at = h;
                add(Outcome::horizon, d0, false);
            }
        }
        const Cand *match = nullptr;
        for (const Cand &c : cands) {
            if (got == answer(c.d) && c.tracked_after == present && c.denied_full == (d_denied == 1) &&
                c.allowed_full == (d_allowed == 1) && (!c.reclaims || gone > 0)) {
                match = &c;
                break;
            }
        }
        if (!match) {
            std::vector<Answer> want;
            std::vector<Outcome> how;
            for (const Cand &c : cands) want.push_back(answer(c.d)), how.push_back(c.how);
            std::fprintf(stderr,
                         "  (new key; tracked after: %d, denied_full +%llu, allowed_full +%llu, %llu reclaimed, "
                         "%zu keys of at most %llu, idle ones: %d)\n",
                         int(present), (unsigned long long)d_denied, (unsigned long long)d_allowed,
                         (unsigned long long)gone, tracked_before, (unsigned long long)max_keys_, int(idle_count));
            report(k, acquire, n, now, got, want, how);
        }
        res.how = match->how;
        TRACE("  new key: %s%s\n", outcome_name(match->how), match->reclaims ? " (room made)" : "");
        // a search that found too few: the next 63 look only at their own
        // shard (also when the reference counted enough idle keys: the
        // search may miss some, see room_certain)
        if (acquire && match->how == Outcome::no_room) search_all_ = false;
        if (match->advance_global) advance(spec_, global_, gt);
        if (match->take_global) take(spec_, global_, n);
        if (match->tracked_after) {
            key.tracked = true;
            key.w = Window();
            advance(spec_, key.w, now);
            take(spec_, key.w, n);
        }
        denied_full_ += match->denied_full;
        allowed_full_ += match->allowed_full;
        settle(std::move(bytes), p);
        return res;
    }

    // The end of a request: the full comparison when the state was read
    // (a reclaim), else later (changed(); a peek, which must change nothing,
    // too: the reference is as it was).
    void settle(std::vector<uint8_t> bytes, const Parsed *p) {
        if (p)
            adopt(std::move(bytes), *p);
        else
            changed();
    }

    [[noreturn]] void report(uint8_t k, bool acquire, uint64_t n, uint64_t now, const Answer &got,
                             const std::vector<Answer> &want, const std::vector<Outcome> &how) {
        std::fprintf(stderr,
                     "fuzz_rate_limiter: %s key %u n %llu at %llu (key clock %llu, global clock %llu, %s):\n"
                     "  got allowed %d remaining %llu retry_at %llu\n",
                     acquire ? "acquire" : "peek", unsigned(k), (unsigned long long)n, (unsigned long long)now,
                     (unsigned long long)keys_[k].w.latest, (unsigned long long)global_.latest,
                     keys_[k].tracked ? "tracked" : "not tracked", got.allowed, (unsigned long long)got.remaining,
                     (unsigned long long)got.retry_at);
        for (size_t i = 0; i < want.size(); ++i)
            std::fprintf(stderr, "  want allowed %d remaining %llu retry_at %llu (%s)\n", want[i].allowed,
                         (unsigned long long)want[i].remaining, (unsigned long long)want[i].retry_at,
                         outcome_name(how[i]));
        fuzz_fail(__FILE__, __LINE__, "the decision is one of those the documentation allows");
    }

    // A peek predicts the acquire that follows with the same arguments.
    void peek_then_acquire(uint8_t k, uint64_t n) {
        const Result p = request(k, false, n);
        const Result a = request(k, true, n);
        if (p.got == a.got) return;
        std::fprintf(stderr,
                     "fuzz_rate_limiter: peek then acquire of key %u (n %llu at %llu) decided differently: "
                     "(%d, %llu, %llu) [%s] then (%d, %llu, %llu) [%s]\n",
                     unsigned(k), (unsigned long long)n, (unsigned long long)now_, p.got.allowed,
                     (unsigned long long)p.got.remaining, (unsigned long long)p.got.retry_at, outcome_name(p.how),
                     a.got.allowed, (unsigned long long)a.got.remaining, (unsigned long long)a.got.retry_at,
                     outcome_name(a.how));
        FUZZ_CHECK(p.got == a.got);
    }

    void clock(uint8_t how) {
        if (how < 96)
            now_ = fuzz_sat_add(now_, how);
        else if (how < 160)
            now_ = fuzz_sat_add(now_, sat_mul(uint64_t(how - 95), spec_.width));
        else if (how < 200)
            now_ = fuzz_sat_add(now_, sat_mul(uint64_t(how - 159), spec_.window));
        else if (how < 240)
            now_ = now_ > uint64_t(how - 199) * spec_.width ? now_ - uint64_t(how - 199) * spec_.width : 1;
        else if (how < 252)
            now_ = now_ > uint64_t(how - 239) ? now_ - uint64_t(how - 239) : 1;
        else
            now_ = kNever - uint64_t(how - 252) * spec_.window;  // near the end of time
    }

    void refund(uint8_t k, uint64_t n) {
        const std::string &name = pool_key(k);
        RefKey<Window> &key = keys_[k];
        FUZZ_CHECK(tf_rate_limiter_refund(lim_.get(), name.data(), name.size(), now_, n) == TF_OK);
        TRACE("refund key %u n %llu at %llu\n", unsigned(k), (unsigned long long)n, (unsigned long long)now_);
        if (!key.tracked) {  // a no-op: the reference is as it was
            changed();
            return;
        }
        const uint64_t t = std::max(now_, key.w.latest);
        advance(spec_, key.w, t);
        if (global_limit_) advance(spec_, global_, std::max(t, global_.latest));
        give_back(key.w, n, [&](uint64_t at, uint64_t k2) {
            if (global_limit_) take_out(global_, at, k2);
        });
        changed();
    }

    void reset(uint8_t k) {
        const std::string &name = pool_key(k);
        FUZZ_CHECK(tf_rate_limiter_reset(lim_.get(), name.data(), name.size()) == TF_OK);
        TRACE("reset key %u\n", unsigned(k));
        RefKey<Window> &key = keys_[k];
        key.tracked = false;
        key.w = Window();
        changed();
    }

    void set_key_limit(uint8_t k, uint8_t b) {
        const std::string &name = pool_key(k);
        RefKey<Window> &key = keys_[k];
        if (b % 8 == 7) {  // above the mode's maximum: refused, nothing changes
            const uint64_t huge = spec_.exact ? TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1 : TF_RATE_LIMITER_MAX_KEY_LIMIT + 1;
            tf_clear_last_error();
            const tf_status st = tf_rate_limiter_set_key_limit(lim_.get(), name.data(), name.size(), huge + b);
            FUZZ_CHECK(st == TF_ERR_INVALID_ARGUMENT);
            fuzz_check_failure(st);
            changed();  // nothing changed: the reference is as it was
            return;
        }
        const uint64_t lim = b % 11;  // 0 removes the override
        FUZZ_CHECK(tf_rate_limiter_set_key_limit(lim_.get(), name.data(), name.size(), lim) == TF_OK);
        TRACE("set_key_limit key %u %llu\n", unsigned(k), (unsigned long long)lim);
        key.override_limit = lim;
        keep_newest(key.w, key_limit(key));
        changed();
    }

    void round_trip() {
        TRACE("round trip\n");
        if (stale_) sync();  // blob_ is the state now
        Limiter copy = reload(blob_);
        FUZZ_CHECK(snapshot(copy.get()) == blob_);  // equal states, equal bytes
        const Counters before = counters(lim_.get()), after = counters(copy.get(), true);
        FUZZ_CHECK(after.keys == before.keys && after.reclaimed == before.reclaimed &&
                   after.denied_full == before.denied_full && after.allowed_full == before.allowed_full);
        lim_ = std::move(copy);
        search_all_ = true;
        peak_tracked_ = tracked_count();  // the copy's tables are sized for the keys they hold
        // every shard of the copy starts at the blob's horizon
        base_ = horizon_max();
        std::vector<uint64_t> keep;
        for (uint64_t c : reclaimed_at_)
            if (c > base_) keep.push_back(c);
        reclaimed_at_.swap(keep);
        sync();
    }

    void stats() {
        const Counters c = counters(lim_.get(), true);
        FUZZ_CHECK(c.keys == tracked_count());
        FUZZ_CHECK(c.reclaimed == reclaimed_ && c.denied_full == denied_full_ && c.allowed_full == allowed_full_);
    }

    // Failing calls return the documented status, explain it, and change nothing.
    void invalid(uint8_t k, uint8_t sub) {
        const std::string &name = pool_key(k);
        tf_rate_limiter *r = lim_.get();
        int allowed = 7;
        uint64_t remaining = 7, retry = 7;
        tf_status st = TF_OK, want = TF_ERR_INVALID_ARGUMENT;
        tf_clear_last_error();
        switch (sub % 10) {
            case 0:
                st = tf_rate_limiter_acquire(r, name.data(), name.size(), 0, 1, &allowed, &remaining, &retry);
                break;
            case 1:
                st = tf_rate_limiter_peek(r, name.data(), name.size(), 0, 1, &allowed, &remaining, &retry);
                break;
            case 2:
                st = tf_rate_limiter_acquire(r, name.data(), name.size(), now_, 0, &allowed, &remaining, &retry);
                break;
            case 3:
                st = tf_rate_limiter_acquire(r, name.data(), name.size(), now_, 1, nullptr, &remaining, &retry);
                want = TF_ERR_NULL;
                break;
            case 4:
                st = tf_rate_limiter_peek(r, nullptr, 1, now_, 1, &allowed, &remaining, &retry);
                want = TF_ERR_NULL;
                break;
            case 5:
                st = tf_rate_limiter_refund(r, name.data(), name.size(), 0, 1);
                break;
            case 6:
                st = tf_rate_limiter_acquire(nullptr, name.data(), name.size(), now_, 1, &allowed, &remaining, &retry);
                want = TF_ERR_NULL;
                break;
            case 7:
                st = tf_rate_limiter_reset(r, nullptr, 3);
                want = TF_ERR_NULL;
                break;
            case 8: {
                size_t written = 0;
                uint8_t small[kOverhead];
                st = tf_rate_limiter_serialize(r, small, sizeof small, &written);
                want = TF_ERR_BUFFER_TOO_SMALL;
                break;
            }
            case 9:
                if (!spec_.exact) return;
                st = tf_rate_limiter_set_global_limit(r, (uint64_t(1) << 24) + 1 + sub);
                break;
        }
        FUZZ_CHECK(st == want);
        fuzz_check_failure(st);
        FUZZ_CHECK(allowed == 7 && remaining == 7 && retry == 7);
        changed();  // nothing changed: the reference is as it was
    }

    Input in_;
    Spec spec_;
    uint32_t flags_ = 0, seed_ = 0;
    uint64_t limit_ = 1, global_limit_ = 0, max_keys_ = 0, now_ = 1;
    Limiter lim_;
    RefKey<Window> keys_[kKeys];
    Window global_;
    uint64_t reclaimed_ = 0, denied_full_ = 0, allowed_full_ = 0;
    // Reclaim horizons: every shard's is at least base_ (the blob's, after
    // a round trip) and is base_ or one of reclaimed_at_ (latest + window of
    // each key reclaimed since).
    uint64_t base_ = 0;
    std::vector<uint64_t> reclaimed_at_;
    // No search for room has been fruitless yet (since creation or the last
    // round trip): a new key of a full table looks at every shard.
    bool search_all_ = true;
    // The most keys tracked at once since creation or the last round trip
    // (a deserialize sizes each shard's table for its keys). A search for
    // room looks at 16 slots of each shard (the header: "its shard's next
    // 16 slots, then 16 slots of every other shard"), the whole of a table
    // of the first size; a shard's table grows past it only when it holds
    // more than 13 keys (85% of 16), so while no more than 13 were ever
    // tracked in all, a search that visits every shard sees every idle key.
    // Above that an idle key may sit outside the slots searched, and a full
    // table may answer as having no room although the reference counts
    // enough idle keys.
    static constexpr size_t kSmallTableKeys = 13;
    size_t peak_tracked_ = 0;
    std::vector<uint8_t> blob_;  // the serialized state at the last full comparison
    Parsed parsed_;              // and its parse
    // Operations since the last full comparison changed the state (as the
    // reference knows), unchecked_ of them.
    bool stale_ = false;
    int unchecked_ = 0;
};

// The first input byte picks what the rest is (see the top of this file).
void sealed_blob(const uint8_t *data, size_t size) { fuzz_check_sealed(data, size, check_blob); }
template <class Window, bool exact>
void program(const uint8_t *data, size_t size) {
    Program<Window>(Input{data, size}, exact).run();
}
const FuzzMode kModes[] = {check_blob, sealed_blob, program<Buckets, false>, program<Times, true>};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_by_first_byte(data, size, kModes);
    return 0;
}
