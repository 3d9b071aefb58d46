// Internal shared pieces: the inline MurmurHash3 against Debian's
// libmurmurhash, index derivation, and the bounds-checked wire codec.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <cstring>
#include <vector>

#include <murmurhash.h>

// The library's headers come before cmocka's, which defines a fail() macro.
#include "bloom/age_partitioned.hpp"
#include "bloom/blocked.hpp"
#include "common/fastdiv.hpp"
#include "common/generation_ring.hpp"
#include "common/hash.hpp"
#include "common/wire.hpp"

extern "C" {
#include <cmocka.h>
}

namespace {

uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Same output as the package for every length 0..1024 (every tail case and
// many blocks), many seeds, and unaligned start addresses.
void test_inline_matches_package(void **) {
    uint64_t s = 1;
    std::vector<unsigned char> buf(1024 + 16);
    unsigned compared = 0;
    for (int round = 0; round < 40; ++round) {
        for (auto &c : buf) c = static_cast<unsigned char>(splitmix(s));
        for (size_t len = 0; len <= 1024; ++len) {
            const size_t align = len % 8;
            const uint32_t seed = static_cast<uint32_t>(splitmix(s));
            uint64_t ref[2];
            lmmh_x64_128(buf.data() + align, static_cast<unsigned>(len), seed, ref);
            tf::Hash128 h = tf::murmur3_x64_128(buf.data() + align, len, seed);
            if (h.h1 != ref[0] || h.h2 != ref[1]) fail_msg("mismatch at length %zu seed %u", len, seed);
            compared++;
        }
    }
    assert_int_equal(compared, 40 * 1025);
    // the checksum is the low word with seed 0
    uint64_t ref[2];
    lmmh_x64_128("TFLT", 4, 0, ref);
    assert_true(tf::checksum64("TFLT", 4) == ref[0]);
}

void test_index_sequence(void **) {
    uint64_t s = 7;
    for (int i = 0; i < 100000; ++i) {
        tf::Hash128 h{splitmix(s), splitmix(s)};
        uint64_t n = 1 + splitmix(s) % 1000003;
        tf::IndexSequence seq(h);
        for (int k = 0; k < 32; ++k) assert_true(seq.next(n) < n);
        // the formula h1 + i*h2 + (i^3 - i)/6
        tf::IndexSequence seq2(h);
        for (uint64_t k = 0; k < 8; ++k) {
            uint64_t x = h.h1 + k * h.h2 + (k * k * k - k) / 6;
            assert_true(seq2.next(UINT64_MAX) == tf::reduce(x, UINT64_MAX));
        }
    }
    // reduce is uniform over small n: each bucket within 5% of its share
    const uint64_t n = 10;
    uint64_t counts[10] = {};
    for (int i = 0; i < 200000; ++i) counts[tf::reduce(splitmix(s), n)]++;
    for (uint64_t c : counts) assert_true(c > 19000 && c < 21000);
}

// Indices from h1 and h2 must be independent even in MurmurHash3's corner
// case (seed == key length, short keys: raw h2 = 1.5 * h1).
void test_key_hash_lanes_independent(void **) {
    for (uint32_t len = 1; len <= 9; ++len) {
        std::vector<uint64_t> raw_pairs, mixed_pairs;
        for (uint64_t i = 0; i < 16384; ++i) {
            unsigned char key[9] = {};
            uint64_t id = 10000000 + i;
            // the id's low bytes, little-endian on every host (the same
            // keys on a big-endian one)
            for (uint32_t b = 0; b < (len < 8 ? len : 8); ++b) key[b] = static_cast<unsigned char>(id >> (8 * b));
            tf::Hash128 r = tf::murmur3_x64_128(key, len, len);
            tf::Hash128 m = tf::key_hash(key, len, len);
            assert_true(m.h1 == r.h1);
            raw_pairs.push_back(tf::reduce(r.h1, 4096) * 70 + tf::reduce(r.h2, 70));
            mixed_pairs.push_back(tf::reduce(m.h1, 4096) * 70 + tf::reduce(m.h2, 70));
        }
        auto distinct = [](std::vector<uint64_t> v) {
            std::sort(v.begin(), v.end());
            return size_t(std::unique(v.begin(), v.end()) - v.begin());
        };
        // 16384 keys in 286720 (line, subset) bins: about 15920 distinct
        // expected; short keys (len < 3) have fewer than 16384 distinct keys.
        const size_t keys = len >= 3 ? 16384 : (len == 1 ? 256 : 16384);
        const size_t expect_min = keys == 16384 ? 15500 : keys - 16;
        if (len >= 2) {
            size_t d = distinct(mixed_pairs);
            if (d < expect_min) fail_msg("len %u: %zu distinct index pairs", len, d);
        }
        // the raw lanes really are dependent here: that is why h2 is mixed
        if (len >= 3) assert_true(distinct(raw_pairs) < 12000);
    }
}

void test_writer_bounds(void **) {
    unsigned char buf[16];
    std::memset(buf, 0xEE, sizeof buf);
    tf::wire::Writer w(buf, 10);
    w.u64(0x0102030405060708ULL);
    assert_true(w.ok());
    assert_int_equal(buf[0], 0x08);  // little-endian
    assert_int_equal(buf[7], 0x01);
    w.u32(1);  // does not fit: sticky failure, nothing written
    assert_false(w.ok());
    assert_int_equal(buf[8], 0xEE);
    w.u8(1);  // still failed
    assert_false(w.ok());
    assert_int_equal(w.pos(), 8u);
    uint64_t arr[2] = {1, 2};
    tf::wire::Writer w2(buf, 15);
    w2.u64_array(arr, 2);
    assert_false(w2.ok());
}

void test_reader_bounds(void **) {
    const unsigned char data[6] = {1, 0, 2, 0, 0, 0};
    tf::wire::Reader r(data, sizeof data);
    assert_int_equal(r.u16(), 1);
    assert_int_equal(r.u32(), 2);
    assert_true(r.done());
    assert_int_equal(r.u8(), 0);  // past the end: zero, sticky failure
    assert_false(r.ok());
    assert_int_equal(r.remaining(), 0u);
    tf::wire::Reader r2(data, sizeof data);
    uint64_t out[1] = {99};
    r2.u64_array(out, 1);
    assert_false(r2.ok());
    assert_true(out[0] == 99);  // untouched
    tf::wire::Reader r3(data, sizeof data);
    assert_null(r3.view(7));
    assert_false(r3.ok());
}

void test_envelope(void **) {
    unsigned char buf[64];
    size_t written = 0;
    auto payload = [](tf::wire::Writer &w) { w.u32(0xAABBCCDD); };
    assert_int_equal(tf::wire::encode(tf::wire::Kind::AgeBloom, 3, 4, buf, sizeof buf, &written, payload), TF_OK);
    assert_int_equal(written, 32u);
    uint32_t flags = 0;
    tf::wire::Reader r;
    assert_int_equal(tf::wire::open(buf, written, tf::wire::Kind::AgeBloom, 3, &flags, &r), TF_OK);
    assert_int_equal(flags, 3u);
    assert_int_equal(r.u32(), 0xAABBCCDDu);
    assert_true(r.done());
    assert_int_equal(tf::wire::open(buf, written, tf::wire::Kind::TimeBloom, 3, &flags, &r), TF_ERR_WRONG_KIND);
    assert_int_equal(tf::wire::open(buf, written, tf::wire::Kind::AgeBloom, 1, &flags, &r), TF_ERR_CORRUPT);
    // a payload writer that writes the wrong amount is an internal error
    auto short_payload = [](tf::wire::Writer &w) { w.u16(1); };
    assert_int_equal(tf::wire::encode(tf::wire::Kind::AgeBloom, 0, 4, buf, sizeof buf, &written, short_payload),
                     TF_ERR_INTERNAL);
    size_t total = 0;
    assert_false(tf::wire::blob_size(SIZE_MAX - 10, &total));
}

}  // namespace

// tf::Divider (division by a run-time constant without a divide) equals the
// divide instruction for every kind of divisor and numerator: powers of two,
// their neighbours, small and huge divisors, numerators at the ends of the
// range and random ones.
static void test_divider_matches_division(void **) {
    std::vector<uint64_t> ds = {1,
                                2,
                                3,
                                5,
                                7,
                                10,
                                60,
                                100,
                                1000,
                                4096,
                                4095,
                                4097,
                                1000000007ULL,
                                UINT64_MAX,
                                UINT64_MAX - 1,
                                UINT64_MAX / 2,
                                (uint64_t(1) << 63) + 1};
    for (int b = 0; b < 64; ++b) {
        ds.push_back(uint64_t(1) << b);
        ds.push_back((uint64_t(1) << b) + 1);
        if (b > 1) ds.push_back((uint64_t(1) << b) - 1);
    }
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    for (int i = 0; i < 200; ++i) ds.push_back(next() >> (next() % 64));
    for (uint64_t d : ds) {
        if (d == 0) continue;
        const tf::Divider div(d);
        std::vector<uint64_t> ns = {0,
                                    1,
                                    d - 1,
                                    d,
                                    d + 1,
                                    2 * d - 1,
                                    2 * d,
                                    UINT64_MAX,
                                    UINT64_MAX - 1,
                                    UINT64_MAX - d,
                                    UINT64_MAX / d * d,
                                    UINT64_MAX / d * d - 1};
        for (int i = 0; i < 2000; ++i) ns.push_back(i % 2 ? next() : next() >> (next() % 64));
        for (uint64_t n : ns) {
            if (div.div(n) != n / d || div.mod(n) != n % d)
                fail_msg("%llu / %llu: got %llu rem %llu", (unsigned long long)n, (unsigned long long)d,
                         (unsigned long long)div.div(n), (unsigned long long)div.mod(n));
        }
    }
}

namespace {
uint64_t xorshift(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}
}  // namespace

// The blocked Bloom layout gathers a key's bit from each of 16 lanes and
// sets it in the selected ones: the scalar and the AVX2 versions equal a
// plain bit test and a plain bit set, lane by lane.
static void test_blocked_lane_bits(void **) {
    namespace d = tf::bloom::detail;
    const bool avx2 = d::cpu_has_avx2();
    print_message("# AVX2 %s: %s\n", avx2 ? "present" : "absent",
                  avx2 ? "both versions checked" : "the scalar version checked (the AVX2 one cannot run here)");
    uint64_t x = 0x2545F4914F6CDD1DULL;
    alignas(64) uint32_t line[16];
    uint8_t pos[16];
    for (int it = 0; it < 100000; ++it) {
        const int kind = it % 4;  // random, all ones, all zeros, one bit per lane
        for (int i = 0; i < 16; ++i) {
            const uint32_t r = uint32_t(xorshift(&x));
            line[i] = kind == 0 ? r : kind == 1 ? ~0u : kind == 2 ? 0u : (1u << (r % 32));
            pos[i] = uint8_t(xorshift(&x) % 32);
        }
        uint64_t lo = 0, hi = 0;
        for (int i = 0; i < 8; ++i) {
            lo |= uint64_t(pos[i]) << (8 * i);
            hi |= uint64_t(pos[8 + i]) << (8 * i);
        }
        uint32_t want = 0;
        for (int i = 0; i < 16; ++i)
            if (line[i] & (uint32_t(1) << pos[i])) want |= uint32_t(1) << i;
        const uint32_t got = d::lane_bits_scalar(line, lo, hi);
        if (got != want) fail_msg("scalar gather: got %#x, want %#x", got, want);
        if (avx2 && d::lane_bits_avx2(line, lo, hi) != want)
            fail_msg("AVX2 gather: got %#x, want %#x", d::lane_bits_avx2(line, lo, hi), want);
        const uint32_t select = uint32_t(xorshift(&x)) & 0xffffu;
        alignas(64) uint32_t a[16], b[16], c[16];
        for (int i = 0; i < 16; ++i) {
            a[i] = b[i] = line[i];
            c[i] = line[i] | ((select >> i & 1) ? uint32_t(1) << pos[i] : 0u);
        }
        d::lane_set_scalar(a, lo, hi, select);
        if (std::memcmp(a, c, sizeof c) != 0) fail_msg("scalar scatter differs (select %#x)", select);
        if (avx2) {
            d::lane_set_avx2(b, lo, hi, select);
            if (std::memcmp(b, c, sizeof c) != 0) fail_msg("AVX2 scatter differs (select %#x)", select);
        }
    }
}

// The run test of the blocked layout (a ring of S slots, the newest slice
// in slot top, slot top - i holding the slice of age i) finds k
// consecutive slices exactly when a scan over the ages does: every S in
// 1..32, every k <= S, every top, random and dense masks.
static void test_blocked_ring_runs(void **) {
    namespace d = tf::bloom::detail;
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    uint64_t checked = 0;
    for (uint32_t slots = 1; slots <= 32; ++slots) {
        for (uint32_t k = 1; k <= slots; ++k) {
            uint8_t shifts[d::kRunSteps];
            d::run_shifts(k, shifts);
            for (uint32_t top = 0; top < slots; ++top) {
                const uint64_t starts = d::run_starts(slots, k, top);
                for (int it = 0; it < 60; ++it) {
                    uint64_t m = xorshift(&x);
                    if (it % 3 == 1) m |= xorshift(&x);
                    if (it % 3 == 2) m |= xorshift(&x) | xorshift(&x);
                    if (it == 0) m = ~uint64_t(0);
                    m &= slots == 64 ? ~uint64_t(0) : (uint64_t(1) << slots) - 1;
                    uint32_t run = 0, best = 0;
                    for (uint32_t age = 0; age < slots; ++age) {
                        const uint32_t slot = (top + slots - age) % slots;
                        run = (m >> slot) & 1 ? run + 1 : 0;
                        best = std::max(best, run);
                    }
                    if (d::ring_has_run(m, slots, shifts, starts) != (best >= k))
                        fail_msg("S %u, k %u, top %u, mask %#llx: longest run %u", slots, k, top, (unsigned long long)m,
                                 best);
                    ++checked;
                }
            }
        }
    }
    print_message("# %llu masks checked\n", (unsigned long long)checked);
}

// The blocked layout's model: no keys, no false positives; one slice is
// the expected fill of a Poisson load; the fast sum is at or above the
// exact one and within 5% of it (from 1e-1 down to 1e-12); and dependence
// only raises the rate of a run above the independent slices' exact rate
// (same mean fills). (At rates near 1 the union of many windows makes
// dependence lower the rate instead: the blocked sizing stops at 0.2.)
static void test_blocked_model(void **) {
    namespace b = tf::bloom;
    double zero[32] = {0};
    assert_true(b::blocked_false_positive_model(4, zero, 20) == 0.0);
    for (double lambda : {1.0, 10.0, 22.2, 40.0}) {
        const double want = 1.0 - std::exp(-lambda / 32.0);  // E[1 - (31/32)^X], X ~ Poisson
        const double exact = b::detail::blocked_model_exact(1, &lambda, 1);
        const double got = b::blocked_false_positive_model(1, &lambda, 1);
        if (std::fabs(exact - want) > 1e-12) fail_msg("lambda %g: exact sum %.15g, want %.15g", lambda, exact, want);
        if (!(got >= want && got <= 1.05 * want)) fail_msg("lambda %g: model %g, want %g", lambda, got, want);
    }
    const struct {
        uint32_t k, s;
        double fill;
    } shapes[] = {{3, 16, 0.12},  {5, 16, 0.4},   {5, 32, 0.3},   {8, 32, 0.37}, {11, 32, 0.38},
                  {12, 32, 0.32}, {15, 32, 0.26}, {20, 32, 0.24}, {23, 32, 0.19}};
    for (auto sh : shapes) {
        double load[32], r[32];
        for (uint32_t i = 0; i < sh.s; ++i) {
            load[i] = -32.0 * std::log1p(-sh.fill) * std::min(i + 1, sh.k) / sh.k;
            r[i] = 1.0 - std::exp(-load[i] / 32.0);
        }
        const double model = b::blocked_false_positive_model(sh.k, load, sh.s);
        const double exact = b::detail::blocked_model_exact(sh.k, load, sh.s);
        const double indep = b::false_positive_rate(sh.k, r, sh.s);
        print_message("# k %u, %u slices, fill %.2f: model %.4g, exact sum %.4g (%.3fx), independent slices %.4g\n",
                      sh.k, sh.s, sh.fill, model, exact, model / exact, indep);
        assert_true(exact < 0.2 && exact > 1e-13);
        if (!(model >= exact && model <= 1.05 * exact)) fail_msg("model %g, exact %g", model, exact);
        if (!(exact >= 0.98 * indep)) fail_msg("model %g below the independent rate %g", exact, indep);
    }
}
// The run probability of the fast model (O(n), the sum over where the first
// run ends, with a sliding product) agrees with the dynamic program within
// 1e-12 relative, at every n and k, with fills of 0 and 1 among them, at
// lane fills, and at fills small enough that runs are rare (1e-3 to 0.05).
static void test_blocked_run_probability(void **) {
    namespace b = tf::bloom;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    auto next = [&x] {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        return double(x >> 11) / double(uint64_t(1) << 53);
    };
    unsigned checked = 0;
    for (int round = 0; round < 200; ++round) {
        double r[32];
        const int kind = round % 4;
        for (double &v : r) {
            const double u = next();
            v = kind == 0 ? u : kind == 1 ? 1e-3 + u * 0.05 : (u < 0.15 ? 0.0 : u > 0.85 ? 1.0 : u);
            if (kind == 3) v = 1.0 - std::exp(-double(int(u * 40)) / 32.0);  // lane fills
        }
        for (uint32_t n = 1; n <= 32; ++n)
            for (uint32_t k = 1; k <= n; ++k) {
                const double want = b::detail::run_probability_dp(k, r, n);
                const double got = b::detail::run_probability(k, r, n);
                if (!(std::fabs(got - want) <= 1e-12 * want))
                    fail_msg("round %d, n %u, k %u: %.17g, the dynamic program %.17g", round, n, k, got, want);
                ++checked;
            }
    }
    print_message("# %u run probabilities checked\n", checked);
}

// ---- the generation ring (lib/common/generation_ring.hpp) -----------------

// A slot that remembers which generation it was made for, to check that a
// rotation hands the storage the right one.
struct TagSlot {
    int tag = -1;
};

// Count: the budget is the period; a full generation rotates; the oldest
// slot is recycled as the newest with the next serial; a fixed ring's slot
// follows the serial; the counters and what was retired add up.
static void test_ring_rotation_by_count(void **) {
    tf::GenerationRing<TagSlot> ring(tf::Rotation::Count, 3, 0, 1);
    for (int i = 0; i < 4; ++i) ring.open(TagSlot{i});
    assert_int_equal(ring.size(), 4);
    assert_int_equal(ring.next_serial(), 4);
    assert_int_equal(ring[0].serial, 3);
    assert_int_equal(ring[0].tag, 3);
    assert_int_equal(ring.oldest().tag, 0);
    assert_int_equal(ring.budget(), 3);
    assert_int_equal(ring.retired_generations(), 0);
    uint64_t inserts = 0;
    for (int round = 0; round < 10; ++round) {
        for (int j = 0; j < 3; ++j) {
            assert_false(ring.full());
            assert_false(ring.due(0));
            ring.count_insert();
            inserts++;
        }
        assert_true(ring.full() && ring.due(0));
        const int oldest_tag = ring.oldest().tag;
        tf::Generation<TagSlot> &g = ring.recycle(0, ring.period());
        // the slot that was oldest is the newest now, and nothing was
        // recorded against it
        assert_int_equal(g.tag, oldest_tag);
        assert_int_equal(&g - &ring[0], 0);
        assert_true(g.serial == ring.next_serial() - 1 && g.received == 0 && g.owned == 0);
        assert_int_equal(ring.budget(), 3);
        assert_int_equal(ring.current(), 0);
        assert_int_equal(ring.slot_of(0), g.serial % 4);
        for (size_t age = 0; age < 4; ++age) assert_int_equal(ring[age].serial, ring.next_serial() - 1 - age);
        // retired: every serial below the oldest, and each took 3 inserts
        assert_int_equal(ring.retired_generations(), uint64_t(round + 1));
        assert_int_equal(ring.inserts(), inserts);
        assert_int_equal(ring.live_inserts(), std::min<uint64_t>(inserts, 3 * 3));
        // the four slots first held empty generations: the inserts retire
        // from the fourth rotation on, 3 at a time
        assert_int_equal(ring.retired_inserts(), uint64_t(3 * (round >= 3 ? round - 2 : 0)));
    }
    // a partial generation counts as it is
    ring.record_insert();
    assert_int_equal(ring.live_inserts(), 10);
    assert_int_equal(ring.inserts_within(12345), 10);  // a count ring keeps no times
    // clear: the inserts go, the generations and serials stay
    const uint64_t serial = ring.next_serial();
    ring.clear();
    assert_true(ring.inserts() == 0 && ring.current() == 0 && ring.budget() == 3);
    assert_int_equal(ring.next_serial(), serial);
    assert_int_equal(ring.live_inserts(), 0);
}

// Time: a generation lasts a period (span / per_span time units); after an
// idle gap one rotation per whole period is due, at most the ring's size; a
// rotation records when the generation ended and what it took.
static void test_ring_rotation_by_time(void **) {
    tf::GenerationRing<> ring(tf::Rotation::Time, 0, 100, 4);  // periods of 25
    for (int i = 0; i < 4; ++i) ring.open(tf::NoSlot());
    assert_int_equal(ring.period(), 25);
    assert_false(ring.due(1000));  // no insert yet: the clock has not started
    assert_int_equal(ring.rotations_due(1000), 0);
    ring.observe(ring.clamp(10));
    assert_int_equal(ring.opened_at(), 10);
    assert_int_equal(ring.clock(), 10);
    ring.record_insert();
    ring.receive(0, 10);
    assert_int_equal(ring[0].owned, 1);
    assert_int_equal(ring[0].last, 10);
    assert_false(ring.due(34));
    assert_true(ring.due(35));
    assert_int_equal(ring.rotations_due(35), 1);
    assert_int_equal(ring.rotations_due(10 + 25 * 3 + 24), 3);
    assert_int_equal(ring.rotations_due(10 + 25 * 1000), 4);  // a gap longer than the window
    // a clock that goes backwards is clamped
    assert_int_equal(ring.clamp(5), 10);
    ring.observe(ring.clamp(35));
    ring.recycle(35, ring.kUnlimited);
    assert_int_equal(ring[1].ended, 35);  // the generation that took the insert ended at 35
    assert_int_equal(ring[1].owned, 1);
    assert_int_equal(ring.opened_at(), 35);
    assert_false(ring.due(59));
    assert_true(ring.due(60));
    // three inserts in the new generation, then the window moves on: the
    // inserts within the span follow the generations' times
    for (int i = 0; i < 3; ++i) {
        ring.observe(ring.clamp(40));
        ring.record_insert();
        ring.receive(0, 40);
    }
    assert_int_equal(ring.budget(), ring.kUnlimited - 3);  // a Time ring counts no budget down to 0
    assert_int_equal(ring.inserts_within(40), 4);
    // each generation's inserts taken as spread over its time: the first
    // (10 .. 35) is within the span at 135, the three of 35 .. 40 are 4/5
    // within it at 136 (2.4, rounded) and gone at 141
    assert_int_equal(ring.inserts_within(135), 4);
    assert_int_equal(ring.inserts_within(136), 2);
    assert_int_equal(ring.inserts_within(141), 0);
    assert_false(ring.expired(ring[0], 140));  // last insert at 40, span 100
    assert_true(ring.expired(ring[0], 141));
    // the gap: every generation is rotated out, and with it every insert
    const size_t n = ring.rotations_due(10000);
    assert_int_equal(n, 4);
    ring.observe(ring.clamp(10000));
    for (size_t i = 0; i < n; ++i) ring.recycle(10000, ring.kUnlimited);
    assert_int_equal(ring.live_inserts(), 0);
    assert_int_equal(ring.retired_inserts(), 4);
    assert_int_equal(ring.retired_generations(), 5);
    assert_false(ring.due(10000));
}

// Rate: the structure sets a budget; a generation ends when it is spent, or
// once it lasted a period with at least one insert. The ring measures the
// inserts one period brings over the latest generations covering a period,
// extrapolating a shorter history at most max_extrapolation times.
static void test_ring_rotation_by_rate(void **) {
    tf::GenerationRing<TagSlot> ring(tf::Rotation::Rate, 0, 100, 4);  // target periods of 25
    ring.open(TagSlot{0});
    ring.open(TagSlot{1});
    ring.set_budget(2);
    ring.observe(ring.clamp(1));
    assert_false(ring.due(1));
    ring.record_insert();
    assert_false(ring.due(25));  // 24 units: the period is not over
    assert_true(ring.due(26));   // one insert and a whole period
    ring.record_insert();
    assert_true(ring.full() && ring.due(2));  // the budget is spent
    // a steady rate: one insert per time unit, one generation per period
    uint64_t now = 1;
    for (int gen = 0; gen < 8; ++gen) {
        while (!ring.due(now + 1)) {
            ++now;
            ring.observe(ring.clamp(now));
            ring.record_insert();
        }
        ++now;
        ring.observe(ring.clamp(now));
        ring.rotate(TagSlot{gen + 2}, now);
        assert_int_equal(ring[0].tag, gen + 2);
        assert_int_equal(ring[1].ended, now);
        assert_int_equal(ring.current(), 0);
        ring.set_budget(1000);
        if (ring.size() > 4) ring.retire_oldest();
    }
    const double steady = ring.inserts_per_period(now, 4.0);
    if (!(steady >= 24.0 && steady <= 26.0)) fail_msg("steady rate: %g inserts per period, want 25", steady);
    // a burst within one time unit: counted once, extrapolated at most 4x
    ring.rotate(TagSlot{100}, now);
    for (int i = 0; i < 500; ++i) ring.record_insert();
    const double burst = ring.inserts_per_period(now, 4.0);
    if (!(burst >= 500.0 && burst <= 4.0 * (500 + 25 * 4))) fail_msg("burst: %g inserts per period", burst);
    // no history longer than a period: extrapolated at most 4x
    tf::GenerationRing<> fresh(tf::Rotation::Rate, 0, 100, 4);
    fresh.open(tf::NoSlot());
    fresh.set_budget(5000);
    fresh.observe(fresh.clamp(5));
    for (int i = 0; i < 1000; ++i) fresh.record_insert();
    assert_true(fresh.inserts_per_period(5, 4.0) == 4000.0);
    assert_true(fresh.inserts_per_period(5, 2.0) == 2000.0);
    assert_true(fresh.inserts_per_period(15, 4.0) == 2500.0);  // 1000 in 10 units: 2500 per 25
    tf::GenerationRing<> idle(tf::Rotation::Rate, 0, 100, 4);
    idle.open(tf::NoSlot());
    assert_true(idle.inserts_per_period(1, 4.0) == 1.0);  // at least one insert
}

// Retirement accounting of a growing ring: generations retire oldest first;
// the retired ones are the serials below the oldest and the inserts the
// live generations do not hold.
static void test_ring_retirement_accounting(void **) {
    tf::GenerationRing<TagSlot> ring(tf::Rotation::Rate, 0, 50, 5);
    ring.open(TagSlot{0});
    uint64_t now = 1, total = 0;
    const uint64_t per_gen[] = {5, 0, 7, 1, 9, 2};
    for (int g = 0; g < 6; ++g) {
        ring.observe(ring.clamp(now));
        for (uint64_t i = 0; i < per_gen[g]; ++i) {
            ring.record_insert();
            ring.receive(0, now);
            total++;
        }
        now += 10;
        ring.observe(ring.clamp(now));
        ring.rotate(TagSlot{g + 1}, now);
    }
    assert_int_equal(ring.size(), 7);
    assert_int_equal(ring.inserts(), total);
    assert_int_equal(ring.live_inserts(), total);
    assert_int_equal(ring.retired_inserts(), 0);
    assert_int_equal(ring.retired_generations(), 0);
    uint64_t retired = 0;
    for (int g = 0; g < 4; ++g) {
        retired += ring.oldest().owned;
        assert_int_equal(ring.oldest().tag, g);
        ring.retire_oldest();
        assert_int_equal(ring.retired_generations(), uint64_t(g + 1));
        assert_int_equal(ring.retired_inserts(), retired);
        assert_int_equal(ring.live_inserts(), total - retired);  // what the live generations hold
    }
    assert_int_equal(retired, 5 + 0 + 7 + 1);
    assert_int_equal(ring.oldest().serial, 4);
    // what a generation ended with stays with it
    assert_int_equal(ring[2].owned, 9);
    assert_int_equal(ring[2].ended, 51);
    assert_int_equal(ring[2].last, 41);
}
int main() {
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_inline_matches_package),
        cmocka_unit_test(test_index_sequence),
        cmocka_unit_test(test_key_hash_lanes_independent),
        cmocka_unit_test(test_writer_bounds),
        cmocka_unit_test(test_reader_bounds),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_divider_matches_division),
        cmocka_unit_test(test_blocked_lane_bits),
        cmocka_unit_test(test_blocked_ring_runs),
        cmocka_unit_test(test_blocked_model),
        cmocka_unit_test(test_blocked_run_probability),
        cmocka_unit_test(test_ring_rotation_by_count),
        cmocka_unit_test(test_ring_rotation_by_time),
        cmocka_unit_test(test_ring_rotation_by_rate),
        cmocka_unit_test(test_ring_retirement_accounting),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
