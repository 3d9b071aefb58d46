// The recency window's core (lib/recency_window/) against an exact
// reference, a map key -> position of its last insert:
//
// - the sliding table: find, class updates, erase, stale reuse and the scan
//   against an exact map, at packed (<= 64-bit) and split (> 64-bit) entry
//   widths, and bucket counts of every kind (powers of two and even counts
//   with odd factors);
// - the mixed-radix quotienting for every bucket count a table may have
//   (even, from 2 to above 2^40) and every signature width: invertible,
//   and the alternate bucket an involution without a fixed point; shape_for
//   the smallest shape at the load asked for;
// - the blob keeps the planned slot counts: a wrong count is rejected, and
//   so is a remainder past the largest;
// - ExactCuckoo answers every recency exactly, and "not in window" from W;
// - OptimalSM is at most D - 1 too small, and "not in window" from W + D - 1;
// - HistoricalMembership with exact signatures: at every insert-then-report
//   and at checkpoint queries of a sample of keys, a key of recency r < W
//   gets an estimate e with |e - r| <= eps r (and e <= r), a key of recency
//   r >= W + 2^L - 1 gets "not in window", over 1e6 inserts of a skewed
//   stream and of an adversarial one whose keys recur at the level
//   boundaries (fewer inserts under the sanitizers);
// - the memory bound of Lemma 11: memory / ((1 + eps)(B + W log2(1/eps)))
//   for W = 1e5 and 1e6 and eps = 1/2 .. 1/16 (B = log2 binomial(2^64, W)),
//   printed and held under a constant;
// - the approximate mode: the rate at which keys never inserted match,
//   against delta;
// - clear, memory_for() == memory(), and the allocation failure hook.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <unordered_map>
#include <vector>

// The library's headers come before cmocka's, which defines a fail() macro.
#include "common/memory.hpp"
#include "recency_window/recency_window.hpp"
#include "recency_window/sliding_table.hpp"

extern "C" {
#include <cmocka.h>

#include "test_util.h"  // TU_REDUCED
}

#define RW_SANITIZED TU_REDUCED /* test_util.h */

namespace {

using tf::recency::Config;
using tf::recency::Entry;
using tf::recency::Mode;
using tf::recency::RecencyWindow;
using tf::recency::SlidingTable;
using tf::recency::TableShape;

// The stream lengths: 1e6 in the plain build.
const uint64_t kLong = RW_SANITIZED ? 100000 : 1000000;

uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// ---------------------------------------------------------------- table

void check_table(unsigned sig_bits, uint64_t capacity) {
    const TableShape shape = SlidingTable::shape_for(capacity, 0.9, sig_bits, 5);
    SlidingTable t(shape);
    const uint64_t mask = sig_bits == 64 ? ~uint64_t(0) : (uint64_t(1) << sig_bits) - 1;
    std::unordered_map<uint64_t, uint64_t> ref;
    uint64_t s = sig_bits * 1000 + capacity;
    // classes 0..29; those below `floor` are stale
    uint64_t floor = 0;
    auto stale = [&floor](uint64_t c) { return c < floor; };
    for (uint64_t k = 0; k < 20 * capacity; ++k) {
        const uint64_t op = splitmix(s) % 8;
        if (op == 0) {
            floor = splitmix(s) % 4;
            Entry out[4096];
            const unsigned n = t.scan(splitmix(s) % 64, stale, out);
            for (unsigned i = 0; i < n; ++i) {
                assert_true(ref.count(out[i].sig) == 1);
                assert_int_equal(ref[out[i].sig], out[i].cls);
                assert_true(out[i].cls < floor);
                ref.erase(out[i].sig);
            }
            continue;
        }
        const uint64_t sig = splitmix(s) & mask & (op == 1 ? 0xff : ~uint64_t(0));
        const uint64_t cls = 4 + splitmix(s) % 26;
        const uint64_t slot = t.find(sig);
        assert_int_equal(slot != SlidingTable::kNone, ref.count(sig));
        if (slot != SlidingTable::kNone) {
            assert_int_equal(t.class_at(slot), ref[sig]);
            if (op == 2) {
                t.erase_at(slot);
                ref.erase(sig);
            } else {
                t.set_class_at(slot, cls);
                ref[sig] = cls;
            }
            continue;
        }
        if (ref.size() >= capacity) continue;
        Entry ev;
        bool has = false;
        floor = splitmix(s) % 3;
        assert_true(t.insert(sig, cls, stale, &ev, &has));
        if (has) {
            assert_true(ref.count(ev.sig) == 1);
            assert_int_equal(ref[ev.sig], ev.cls);
            assert_true(ev.cls < floor);
            ref.erase(ev.sig);
        }
        ref[sig] = cls;
        assert_int_equal(t.items(), ref.size());
    }
    uint64_t seen = 0;
    t.for_each([&](uint64_t sig, uint64_t cls) {
        assert_true(ref.count(sig) == 1);
        assert_int_equal(ref[sig], cls);
        ++seen;
    });
    assert_int_equal(seen, ref.size());
    t.clear();
    assert_int_equal(t.items(), 0);
    for (const auto &kv : ref) assert_int_equal(t.find(kv.first), SlidingTable::kNone);
}

void test_sliding_table(void **) {
    // capacities giving bucket counts of every kind: powers of two, even
    // numbers with odd factors (3, 5, 7, 11, 13, 625, ...), the smallest
    for (unsigned bits : {64u, 40u, 20u, 12u})
        for (uint64_t cap : {6u, 14u, 100u, 1000u, 5000u, 7001u, 29491u}) check_table(bits, cap);
    // exact signatures in a table of 8 buckets: 64 - 3 + 1 + 5 = 67 bits,
    // split over two planes
    assert_true(SlidingTable::shape_for(6, 0.9, 64, 5).entry_bits() > 64);
}

// Every bucket count a table may have (an even number, at least 2): the
// quotienting is invertible (signature = remainder x B + primary bucket,
// the remainder within remainder_bits()), and the alternate bucket is an
// involution on [0, B) without a fixed point, for small and large B and
// every signature width, at random and at the edges (0, the largest
// signature, the multiples of B around them).
void check_quotient(uint64_t B, unsigned sig_bits, uint64_t &seed) {
    using tf::recency::Quotient;
    TableShape shape;
    shape.slots = B * tf::recency::kPerBucket;
    shape.sig_bits = sig_bits;
    assert_true(TableShape::valid_slots(shape.slots));
    const Quotient q(B);
    const uint64_t max = shape.sig_max();
    const unsigned rbits = shape.remainder_bits();
    assert_true(rbits == 64 || (shape.max_remainder() >> rbits) == 0);
    assert_true(rbits == 0 || (shape.max_remainder() >> (rbits - 1)) == 1);
    std::vector<uint64_t> sigs = {0, 1, max, max - 1, B - 1, B, B + 1, max / B * B, max / B * B - 1};
    if (max >= B) sigs.push_back(max - B);
    for (int i = 0; i < 2000; ++i) sigs.push_back(splitmix(seed) & max);
    for (uint64_t sig : sigs) {
        if (sig > max) continue;
        const uint64_t rem = q.remainder(sig), b = q.primary(sig, rem);
        assert_true(b < B);
        assert_true(rem <= shape.max_remainder());
        assert_true(rem == sig / B && b == sig % B);
        assert_int_equal(q.join(rem, b), sig);
        const uint64_t a = q.alt(b, rem);
        assert_true(a < B);
        assert_true(a != b);
        assert_int_equal(q.alt(a, rem), b);
    }
    // the involution for every bucket of a small table
    if (B <= 4096)
        for (uint64_t b = 0; b < B; ++b) {
            const uint64_t rem = splitmix(seed) & shape.max_remainder();
            const uint64_t a = q.alt(b, rem);
            assert_true(a < B && a != b);
            assert_int_equal(q.alt(a, rem), b);
        }
}

void test_quotient_shapes(void **) {
    uint64_t seed = 11;
    std::vector<uint64_t> counts;
    for (uint64_t B = 2; B <= 300; B += 2) counts.push_back(B);
    for (unsigned k = 9; k <= 40; ++k) {
        const uint64_t p = uint64_t(1) << k;
        for (uint64_t B :
             {p, p - 2, p + 2, 3 * (p / 2), 5 * (p / 4), 7 * (p / 4), 13 * (p / 8), 2 * (p / 2 - 1) / 3 * 3})
            if (B >= 2 && B % 2 == 0) counts.push_back(B);
    }
    counts.push_back(218454);                    // W = 1e6, eps = 1/8: the top level
    counts.push_back((uint64_t(1) << 62) - 2);   // larger than any table
    counts.push_back(~uint64_t(0) / 4 / 2 * 2);  // the largest a 64-bit slot count allows
    for (uint64_t B : counts)
        for (unsigned bits : {64u, 63u, 40u, 20u, 12u, 1u}) check_quotient(B, bits, seed);
    // shape_for: an even bucket count, at the load asked for or below,
    // and no smaller shape is
    for (uint64_t cap = 1; cap < 100000; cap = cap * 5 / 4 + 1)
        for (double load : {0.5, 0.9, 0.95}) {
            const TableShape s = SlidingTable::shape_for(cap, load, 64, 5);
            assert_true(TableShape::valid_slots(s.slots));
            assert_true(double(cap) <= load * double(s.slots) + 1e-9);
            if (s.slots > 2 * tf::recency::kPerBucket)
                assert_true(double(cap) > load * double(s.slots - 2 * tf::recency::kPerBucket));
        }
}

// ---------------------------------------------------------------- streams

// The reference: position of each key's last insert.
struct Exact {
    std::unordered_map<uint64_t, uint64_t> last;
    uint64_t t = 0;
    // The recency the next insert of key has before it (or -1), then
    // records it.
    int64_t insert(uint64_t key) {
        auto it = last.find(key);
        const int64_t r = it == last.end() ? -1 : int64_t(t - 1 - it->second);
        last[key] = t++;
        return r;
    }
    int64_t recency(uint64_t key) const {
        auto it = last.find(key);
        return it == last.end() ? -1 : int64_t(t - 1 - it->second);
    }
};

// A skewed stream: key ranges of every scale, a key from [0, 2^k) with k
// uniform in [0, 26), so small keys recur at every recency.
struct Skewed {
    uint64_t s;
    explicit Skewed(uint64_t seed) : s(seed) {}
    uint64_t next() {
        const unsigned k = unsigned(splitmix(s) % 26);
        return (splitmix(s) & ((uint64_t(1) << k) - 1)) | (uint64_t(k) << 32);
    }
};

// An adversarial stream: every other insert repeats the key inserted
// exactly g earlier, g cycling through the level boundaries of (W, K):
// K (2^l - 1) + {-1, 0, 1}, the block widths 2^l + {-1, 0, 1}, and W + {-1,
// 0, 1}, W + 2^L - 1 + {-1, 0, 1}; the others are fresh keys.
struct Adversarial {
    std::vector<uint64_t> gaps, keys;
    uint64_t fresh = uint64_t(1) << 50;
    Adversarial(uint64_t W, uint64_t K, unsigned L) {
        for (unsigned l = 0; l <= L + 1; ++l)
            for (int d = -1; d <= 1; ++d) {
                const int64_t a = int64_t(K * ((uint64_t(1) << l) - 1)) + d;
                const int64_t b = int64_t(uint64_t(1) << l) + d;
                if (a > 0) gaps.push_back(uint64_t(a));
                if (b > 0) gaps.push_back(uint64_t(b));
            }
        for (int d = -1; d <= 1; ++d) {
            // a gap is at least 1 (0 would repeat the key being inserted:
            // W = 1 gives W - 1 = 0)
            const int64_t a = int64_t(W) + d, b = int64_t(W + (uint64_t(1) << L) - 1) + d;
            if (a > 0) gaps.push_back(uint64_t(a));
            if (b > 0) gaps.push_back(uint64_t(b));
        }
    }
    uint64_t next() {
        const uint64_t p = keys.size();
        uint64_t key = fresh++;
        if (p % 2 == 0) {
            const uint64_t g = gaps[(p / 2) % gaps.size()];
            if (p >= g) key = keys[p - g];
        }
        keys.push_back(key);
        return key;
    }
};

// The window's L (its top level): levels() - 1 in Historical mode.
unsigned top_level(const RecencyWindow &w) { return unsigned(w.levels() - 1); }

// Checks one answer against the truth r (-1: never inserted).
struct Checker {
    uint64_t W, slack;  // estimates owed below W, "not in window" from W + slack
    double eps;         // relative error allowed (0: exact)
    uint64_t abs;       // absolute error allowed (OptimalSM: D - 1)
    double worst = 0.0;
    uint64_t checked = 0;
    void check(int64_t r, int64_t e) {
        ++checked;
        if (r < 0 || uint64_t(r) >= W + slack) {
            if (e != RecencyWindow::kNotInWindow) {
                std::fprintf(stderr, "recency %lld answered %lld, expected not in window\n", (long long)r,
                             (long long)e);
                fail();
            }
            return;
        }
        if (uint64_t(r) >= W && e == RecencyWindow::kNotInWindow) return;  // the slack
        if (e < 0) {
            std::fprintf(stderr, "recency %lld (W %llu) answered not in window\n", (long long)r, (unsigned long long)W);
            fail();
        }
        assert_true(e <= r);
        const double err = double(r - e);
        if (r > 0) worst = std::max(worst, err / double(r));
        if (err > eps * double(r) + double(abs)) {
            std::fprintf(stderr, "recency %lld answered %lld (eps %g, abs %llu)\n", (long long)r, (long long)e, eps,
                         (unsigned long long)abs);
            fail();
        }
    }
};

// Runs `n` inserts of `next` through insert_report, checking every report
// and, every `every` inserts, queries of 2000 keys of the recent past.
template <class Next>
Checker run(RecencyWindow &w, Checker c, uint64_t n, Next &&next, uint64_t every) {
    Exact ref;
    std::vector<uint64_t> recent;
    uint64_t s = 7;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t key = next();
        recent.push_back(key);
        const uint64_t sig = w.signature(&key, sizeof key);
        c.check(ref.insert(key), w.insert_report(sig));
        if ((i + 1) % every == 0) {
            // keys of every age up to twice the window
            const uint64_t span = std::min<uint64_t>(recent.size(), 2 * (c.W + c.slack) + 10);
            for (int q = 0; q < 2000; ++q) {
                const uint64_t k = recent[recent.size() - 1 - splitmix(s) % span];
                c.check(ref.recency(k), w.query(w.signature(&k, sizeof k)));
            }
            const uint64_t absent = (uint64_t(1) << 62) + i;
            c.check(-1, w.query(w.signature(&absent, sizeof absent)));
        }
        if (recent.size() > 8 * (c.W + c.slack) + 100)
            recent.erase(recent.begin(), recent.begin() + long(recent.size() / 2));
    }
    assert_int_equal(w.stats().lost, 0);
    return c;
}

Config historical(uint64_t W, uint64_t K) {
    Config c;
    c.mode = Mode::Historical;
    c.window = W;
    c.inv_eps = K;
    return c;
}

Checker historical_checker(const RecencyWindow &w, uint64_t K) {
    Checker c;
    c.W = w.config().window;
    c.slack = (uint64_t(1) << top_level(w)) - 1;
    c.eps = 1.0 / double(K);
    c.abs = 0;
    return c;
}

void test_exact_cuckoo(void **) {
    for (uint64_t W : {1u, 2u, 1000u, 50000u}) {
        Config c;
        c.mode = Mode::ExactCuckoo;
        c.window = W;
        RecencyWindow w(c);
        Checker k{W, 0, 0.0, 0};
        Skewed sk(W);
        k = run(
            w, k, W == 50000 ? kLong / 2 : 100000, [&] { return sk.next(); }, 5000);
        assert_true(k.worst == 0.0);
        Adversarial adv(W, 1, 0);
        RecencyWindow w2(c);
        run(
            w2, k, 100000, [&] { return adv.next(); }, 5000);
    }
}

void test_optimal_sm(void **) {
    for (uint64_t D : {1u, 7u, 64u, 1000u}) {
        Config c;
        c.mode = Mode::OptimalSM;
        c.window = 1000;
        c.block = D;
        RecencyWindow w(c);
        Checker k{1000, D - 1, 0.0, D - 1};
        Skewed sk(D);
        run(
            w, k, 200000, [&] { return sk.next(); }, 5000);
        Adversarial adv(1000, 1, 0);
        RecencyWindow w2(c);
        run(
            w2, k, 100000, [&] { return adv.next(); }, 5000);
    }
}

// Small windows and every eps: the corner cases of L and of the excess.
void test_historical_small(void **) {
    for (uint64_t K : {1u, 2u, 3u, 8u, 16u})
        for (uint64_t W : {1u, 2u, 3u, 5u, 17u, 64u, 100u, 1000u, 4099u}) {
            RecencyWindow w(historical(W, K));
            Skewed sk(W * 31 + K);
            run(
                w, historical_checker(w, K), 30000, [&] { return sk.next(); }, 3000);
            RecencyWindow w2(historical(W, K));
            Adversarial adv(W, K, top_level(w2));
            run(
                w2, historical_checker(w2, K), 30000, [&] { return adv.next(); }, 3000);
        }
}

void long_run(uint64_t W, uint64_t K, bool adversarial) {
    RecencyWindow w(historical(W, K));
    Checker c = historical_checker(w, K);
    if (adversarial) {
        Adversarial adv(W, K, top_level(w));
        c = run(
            w, c, kLong, [&] { return adv.next(); }, 50000);
    } else {
        Skewed sk(W + K);
        c = run(
            w, c, kLong, [&] { return sk.next(); }, 50000);
    }
    std::printf(
        "# historical W=%llu eps=1/%llu L=%u %s: %llu answers, worst relative error %.5f, "
        "promotions %llu, items %llu\n",
        (unsigned long long)W, (unsigned long long)K, top_level(w), adversarial ? "adversarial" : "skewed",
        (unsigned long long)c.checked, c.worst, (unsigned long long)w.stats().promotions,
        (unsigned long long)w.items());
}

void test_historical_skewed(void **) {
    long_run(100000, 8, false);
    long_run(20000, 2, false);
    long_run(50000, 16, false);
}

void test_historical_adversarial(void **) {
    long_run(100000, 8, true);
    long_run(4096, 1, true);
    long_run(30000, 4, true);
}

// The payload (wire kind 6) keeps each level's slot count as the plan
// gives it: a blob whose count differs (another even bucket count, the
// power of two the tables used to round up to) is rejected, and a slot
// whose remainder is past the largest is too.
void test_blob_shapes(void **) {
    RecencyWindow w(historical(50000, 8));
    for (uint64_t k = 0; k < 60000; ++k) w.insert(w.signature(&k, sizeof k));
    std::vector<uint8_t> buf(w.payload_size());
    tf::wire::Writer wr(buf.data(), buf.size());
    w.write_payload(wr);
    auto read = [&](const std::vector<uint8_t> &b) {
        tf::wire::Reader r(b.data(), b.size());
        std::unique_ptr<RecencyWindow> out;
        return RecencyWindow::read(r, 0, tf::DeserializeLimits(), &out);
    };
    assert_int_equal(read(buf), TF_OK);
    const size_t at = 96;  // level 0's slot count
    uint64_t slots = 0;    // little-endian, whatever the host
    for (int b = 7; b >= 0; --b) slots = (slots << 8) | buf[at + b];
    assert_int_equal(slots, w.level(0).shape.slots);
    uint64_t pow2 = 1;
    while (pow2 < slots) pow2 <<= 1;
    for (uint64_t wrong : {slots + 8, slots - 8, pow2 == slots ? 2 * slots : pow2, uint64_t(0), slots + 4}) {
        std::vector<uint8_t> bad = buf;
        for (int b = 0; b < 8; ++b) bad[at + b] = uint8_t(wrong >> (8 * b));
        assert_int_equal(read(bad), TF_ERR_CORRUPT);
    }
    // the top level's shape is not a power of two
    const TableShape top = w.level(w.levels() - 1).shape;
    assert_true((top.slots & (top.slots - 1)) != 0);

    // a remainder field past the largest remainder: sig_at says so
    TableShape s = SlidingTable::shape_for(1000, 0.9, 40, 5);
    assert_true((s.buckets() & (s.buckets() - 1)) != 0);
    SlidingTable t(s);
    Entry ev;
    bool has = false;
    assert_true(t.insert(
        12345, 3, [](uint64_t) { return false; }, &ev, &has));
    const uint64_t slot = t.find(12345);
    uint64_t sig = 0;
    assert_true(slot < s.slots && t.sig_at(slot, &sig) && sig == 12345);
    const uint64_t v = t.plane(0).get(slot);
    t.plane(0).set(slot, v | (((uint64_t(1) << s.remainder_bits()) - 1) << (1 + s.class_bits)));
    assert_false(t.sig_at(slot, &sig));
}

// SlidingTable::audit, the reader's one pass over the slots, gives the
// verdict and slot of the checks it replaced, made slot by slot: the first
// empty slot with bits set, else the count and the first slot whose
// sig_at() fails (kWide) or whose find(sig) is another slot (kTwice), on
// tables (narrow and wider than 64 bits) with slots copied into either
// bucket of their signature, random bits set and remainders widened.
void test_audit_matches_slot_checks(void **) {
    using tf::recency::SlidingTable;
    using Flaw = SlidingTable::Flaw;
    using tf::uint128_t;
    uint64_t rng = 0x5eed;
    auto next = [&rng]() { return tf::detail::fmix64(rng += 0x9e3779b97f4a7c15ULL); };
    int seen[3] = {0, 0, 0};
    for (const TableShape s : {SlidingTable::shape_for(300, 0.9, 40, 5), SlidingTable::shape_for(40, 0.5, 64, 4)}) {
        const bool wide = s.entry_bits() > 64;
        const uint64_t cm = (uint64_t(1) << s.class_bits) - 1;
        for (int round = 0; round < 400; ++round) {
            SlidingTable t(s);
            Entry ev;
            bool has = false;
            for (uint64_t i = 0; i < s.slots * 3 / 4; ++i)
                t.insert(
                    next() & s.sig_max(), i % 7, [](uint64_t) { return false; }, &ev, &has);
            auto raw = [&](uint64_t slot) {
                uint128_t v = t.plane(0).get(slot);
                if (wide) v |= uint128_t(t.plane(1).get(slot)) << 64;
                return v;
            };
            auto put = [&](uint64_t slot, uint128_t v) {
                t.plane(0).set(slot, uint64_t(v));
                if (wide) t.plane(1).set(slot, uint64_t(v >> 64));
            };
            for (int k = 0; k < 1 + round % 3; ++k) {
                const uint64_t slot = next() % s.slots;
                uint64_t sig = 0;
                const unsigned what = unsigned(next() % 4);
                if (what <= 1 && (raw(slot) & cm) != 0 && t.sig_at(slot, &sig)) {
                    // a copy of the entry into a slot of either of its buckets
                    const auto &q = t.quotient();
                    const uint64_t rem = q.remainder(sig), b0 = q.primary(sig, rem);
                    const unsigned way = unsigned(next() & 1);
                    const uint64_t b = way == 0 ? b0 : q.alt(b0, rem);
                    const uint128_t key = (uint128_t(rem) << 1) | way;
                    put(b * tf::recency::kPerBucket + next() % tf::recency::kPerBucket,
                        (key << s.class_bits) | (raw(slot) & cm));
                } else if (what == 2) {  // random bits
                    put(slot, raw(slot) ^ (uint128_t(1) << (next() % s.entry_bits())));
                } else {  // the remainder field at its largest value
                    const uint128_t top = (uint128_t(1) << s.remainder_bits()) - 1;
                    put(slot, raw(slot) | (top << (1 + s.class_bits)) | 1);
                }
            }
            // the checks slot by slot
            uint64_t bad_empty = SlidingTable::kNone, occupied = 0;
            for (uint64_t i = 0; i < s.slots && bad_empty == SlidingTable::kNone; ++i) {
                if ((raw(i) & cm) != 0)
                    ++occupied;
                else if (raw(i) != 0)
                    bad_empty = i;
            }
            Flaw flaw = Flaw::kNone;
            uint64_t at = 0;
            for (uint64_t i = 0; i < s.slots && flaw == Flaw::kNone; ++i) {
                if ((raw(i) & cm) == 0) continue;
                uint64_t sig = 0;
                at = i;
                if (!t.sig_at(i, &sig))
                    flaw = Flaw::kWide;
                else if (t.find(sig) != i)
                    flaw = Flaw::kTwice;
            }
            const SlidingTable::Audit a = t.audit();
            assert_int_equal(a.bad_empty, bad_empty);
            if (bad_empty != SlidingTable::kNone) {
                seen[0]++;
                continue;
            }
            assert_int_equal(a.occupied, occupied);
            assert_int_equal(int(a.flaw), int(flaw));
            if (flaw != Flaw::kNone) {
                assert_int_equal(a.flaw_at, at);
                seen[int(flaw)]++;
            }
        }
    }
    // every verdict was met
    assert_true(seen[0] > 10 && seen[1] > 10 && seen[2] > 10);
}

// Lemma 11: memory within a constant of (1 + eps)(B + W log2(1/eps)).
void test_lemma11(void **) {
    double worst = 0.0;
    for (uint64_t W : {100000u, 1000000u})
        for (uint64_t K : {2u, 4u, 8u, 16u}) {
            const Config c = historical(W, K);
            const double bits = 8.0 * double(RecencyWindow::memory_for(c));
            // B = log2 binomial(2^64, W)
            const double N = std::ldexp(1.0, 64);
            const double B =
                (std::lgamma(N + 1) - std::lgamma(double(W) + 1) - std::lgamma(N - double(W) + 1)) / std::log(2.0);
            const double eps = 1.0 / double(K);
            const double bound = (1 + eps) * (B + double(W) * std::log2(double(K)));
            const double ratio = bits / bound;
            worst = std::max(worst, ratio);
            std::printf("# lemma 11: W=%llu eps=1/%llu: %.2f bits per window item, %.3f x (1+eps)(B + W log2 1/eps)\n",
                        (unsigned long long)W, (unsigned long long)K, bits / double(W), ratio);
        }
    std::printf("# lemma 11: constant reached %.3f\n", worst);
    assert_true(worst < 2.5);
}

// Approximate signatures: keys never inserted match at a rate <= delta.
void test_approximate(void **) {
    for (double delta : {0.01, 0.001}) {
        Config c = historical(100000, 8);
        c.delta = delta;
        RecencyWindow w(c);
        assert_true(RecencyWindow::signature_bits(c) < 64);
        for (uint64_t k = 0; k < 300000; ++k) w.insert(w.signature(&k, sizeof k));
        const uint64_t probes = RW_SANITIZED ? 200000 : 2000000;
        uint64_t hits = 0;
        for (uint64_t k = 0; k < probes; ++k) {
            const uint64_t key = (uint64_t(1) << 60) + k;
            if (w.query(w.signature(&key, sizeof key)) != RecencyWindow::kNotInWindow) ++hits;
        }
        const double rate = double(hits) / double(probes);
        std::printf(
            "# approximate: delta %g, %u-bit signatures, false-match rate %.6f (%.2f x delta), "
            "%.2f bits per window item\n",
            delta, RecencyWindow::signature_bits(c), rate, rate / delta, 8.0 * double(w.memory()) / double(c.window));
        assert_true(rate <= delta);
        // and the keys in the window are still answered within eps, but
        // for a rate <= delta of them (a colliding newer key)
        Exact ref;
        Skewed sk(3);
        uint64_t bad = 0, n = 0;
        RecencyWindow w2(c);
        for (uint64_t i = 0; i < 300000; ++i) {
            const uint64_t key = sk.next();
            const int64_t r = ref.insert(key), e = w2.insert_report(w2.signature(&key, sizeof key));
            if (r >= 0 && uint64_t(r) < c.window) {
                ++n;
                if (e < 0 || e > r || double(r - e) > double(r) / 8.0) ++bad;
            }
        }
        assert_true(double(bad) <= delta * double(n) + 10);
    }
}

void test_clear_and_memory(void **) {
    Config cs[3];
    cs[0] = historical(5000, 4);
    cs[1].mode = Mode::ExactCuckoo;
    cs[1].window = 5000;
    cs[2].mode = Mode::OptimalSM;
    cs[2].window = 5000;
    cs[2].block = 100;
    for (const Config &c : cs) {
        assert_null(RecencyWindow::invalid(c));
        RecencyWindow w(c);
        assert_int_equal(w.memory(), RecencyWindow::memory_for(c));
        for (uint64_t k = 0; k < 20000; ++k) w.insert(w.signature(&k, sizeof k));
        const uint64_t k = 19999;
        assert_int_equal(w.query(w.signature(&k, sizeof k)), 0);
        const size_t mem = w.memory();
        w.clear();
        assert_int_equal(w.memory(), mem);
        assert_int_equal(w.items(), 0);
        assert_int_equal(w.now(), 0);
        assert_int_equal(w.query(w.signature(&k, sizeof k)), RecencyWindow::kNotInWindow);
    }
    Config bad = historical(0, 4);
    assert_non_null(RecencyWindow::invalid(bad));
    bad = historical(10, 0);
    assert_non_null(RecencyWindow::invalid(bad));
    bad = historical(10, 2);
    bad.delta = 1.0;
    assert_non_null(RecencyWindow::invalid(bad));
    bad.delta = -0.5;
    assert_non_null(RecencyWindow::invalid(bad));
    bad.delta = std::nan("");
    assert_non_null(RecencyWindow::invalid(bad));
    bad = cs[2];
    bad.block = 5001;
    assert_non_null(RecencyWindow::invalid(bad));
    bad.block = 0;
    assert_non_null(RecencyWindow::invalid(bad));
    bad.mode = Mode(7);
    assert_non_null(RecencyWindow::invalid(bad));
}

void test_allocation_failure(void **) {
    const Config c = historical(100000, 8);
    for (long k = 0; k < 40; ++k) {
        tf::testing::allocations_left.store(k);
        bool threw = false;
        try {
            RecencyWindow w(c);
        } catch (const std::bad_alloc &) {
            threw = true;
        }
        tf::testing::allocations_left.store(-1);
        const RecencyWindow probe(c);
        assert_int_equal(threw, uint64_t(k) < 2 * probe.levels());  // two packed arrays per level
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sliding_table),
        cmocka_unit_test(test_quotient_shapes),
        cmocka_unit_test(test_blob_shapes),
        cmocka_unit_test(test_exact_cuckoo),
        cmocka_unit_test(test_optimal_sm),
        cmocka_unit_test(test_historical_small),
        cmocka_unit_test(test_historical_skewed),
        cmocka_unit_test(test_historical_adversarial),
        cmocka_unit_test(test_lemma11),
        cmocka_unit_test(test_audit_matches_slot_checks),
        cmocka_unit_test(test_approximate),
        cmocka_unit_test(test_clear_and_memory),
        cmocka_unit_test(test_allocation_failure),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
