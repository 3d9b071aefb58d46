// The rotating cuckoo filter's packed table (lib/cuckoo/packed_table.hpp)
// at several slot widths (13, 37 and 64 bits; the packed slots also at 1,
// 7 and 63): slots read back what was written without touching their
// neighbours, the two-way alternate bucket is an involution and the
// three-way next bucket a permutation of order 3 for every power-of-two
// bucket count from 2 to 2^20 (every bucket up to 4096, random ones above)
// and random fingerprints, and insert, find and remove agree with an exact
// multiset of entries, a failed kick chain leaving the table bit for bit as
// it was. The run-time width slots (RuntimeSlots, the recency window's
// planes) share the reader and writer: every width 1 to 64, the same words
// as the compile-time slots.
#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

// The library's headers come before cmocka's, which defines a fail() macro.
#include "cuckoo/packed_table.hpp"

extern "C" {
#include <cmocka.h>

#include "test_util.h"  // TU_REDUCED
}

namespace {

using tf::cuckoo::CuckooTable;
using tf::cuckoo::PackedSlots;
using tf::cuckoo::RuntimeSlots;

uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// Random writes against a plain array: every slot reads back its last
// value, whatever its neighbours (sharing or straddling a word) received.
template <unsigned Bits>
void check_packed_slots() {
    uint64_t s = Bits;
    for (uint64_t n : {1u, 2u, 3u, 63u, 64u, 65u, 1000u, 4099u}) {
        PackedSlots<Bits> slots(n);
        assert_int_equal(slots.word_count(), (n * Bits + 63) / 64);
        std::vector<uint64_t> ref(n, 0);
        for (uint64_t i = 0; i < n; ++i) assert_int_equal(slots.get(i), 0);
        for (uint64_t k = 0; k < 8 * n; ++k) {
            const uint64_t i = splitmix(s) % n;
            // all ones and zero often: they reveal a mask that leaks
            const uint64_t r = splitmix(s);
            const uint64_t v = (r & 3) == 0 ? PackedSlots<Bits>::kMask : (r & 3) == 1 ? 0 : splitmix(s);
            slots.set(i, v);
            ref[i] = v & PackedSlots<Bits>::kMask;
            if (k % 97 == 0 || k + 1 == 8 * n)
                for (uint64_t j = 0; j < n; ++j) assert_int_equal(slots.get(j), ref[j]);
        }
        // no bit beyond the last slot is ever set
        const uint64_t used = n * Bits % 64;
        if (used != 0) assert_int_equal(slots.words()[slots.word_count() - 1] >> used, 0);
        slots.clear();
        for (uint64_t i = 0; i < n; ++i) assert_int_equal(slots.get(i), 0);
    }
}

void test_packed_slots(void **) {
    check_packed_slots<1>();
    check_packed_slots<7>();
    check_packed_slots<13>();
    check_packed_slots<37>();
    check_packed_slots<63>();
    check_packed_slots<64>();
}

// The run-time width (RuntimeSlots, the recency window's planes) through
// the same reader and writer: for every width 1 to 64 and sizes whose
// last slot ends inside, at the end of, or one bit short of a word, random
// writes read back against a plain array; the words are those of a
// compile-time array of that width given the same writes (one layout, the
// one the blobs hold), and the last word's slots read right though the
// reader never looks past it (its clamp).
template <unsigned Bits>
void check_same_words(uint64_t n, uint64_t seed) {
    PackedSlots<Bits> fixed(n);
    RuntimeSlots run(n, Bits);
    assert_int_equal(run.width(), Bits);
    assert_int_equal(run.word_count(), fixed.word_count());
    assert_int_equal(RuntimeSlots::bytes_for(n, Bits), PackedSlots<Bits>::bytes_for(n));
    uint64_t s = seed;
    for (uint64_t k = 0; k < 4 * n; ++k) {
        const uint64_t i = splitmix(s) % n, v = splitmix(s);
        fixed.set(i, v);
        run.set(i, v);
    }
    assert_memory_equal(fixed.words(), run.words(), fixed.word_count() * 8);
    for (uint64_t i = 0; i < n; ++i) assert_int_equal(run.get(i), fixed.get(i));
}

void test_runtime_slots(void **) {
    uint64_t s = 99;
    for (unsigned bits = 1; bits <= 64; ++bits) {
        const uint64_t mask = tf::cuckoo::packed::mask_of(bits);
        // n: one slot, a word's worth and its neighbours, slots ending one
        // bit short of a word boundary, and a larger random array
        for (uint64_t n : {uint64_t(1), uint64_t(2), uint64_t(64 / bits), uint64_t(64 / bits + 1), uint64_t(63),
                           uint64_t(64), uint64_t(65), uint64_t(1000 + bits)}) {
            RuntimeSlots slots(n, bits);
            assert_int_equal(slots.word_count(), (n * bits + 63) / 64);
            assert_int_equal(slots.view().last, slots.word_count() - 1);
            std::vector<uint64_t> ref(n, 0);
            for (uint64_t k = 0; k < 8 * n; ++k) {
                const uint64_t i = (k & 7) == 0 ? n - 1 : splitmix(s) % n;  // the last slot often
                const uint64_t r = splitmix(s);
                const uint64_t v = (r & 3) == 0 ? mask : (r & 3) == 1 ? 0 : splitmix(s);
                slots.set(i, v);
                ref[i] = v & mask;
                assert_int_equal(slots.get(i), ref[i]);
                if (i > 0) assert_int_equal(slots.get(i - 1), ref[i - 1]);
                if (i + 1 < n) assert_int_equal(slots.get(i + 1), ref[i + 1]);
            }
            for (uint64_t j = 0; j < n; ++j) assert_int_equal(slots.get(j), ref[j]);
            const uint64_t used = n * bits % 64;
            if (used != 0) assert_int_equal(slots.words()[slots.word_count() - 1] >> used, 0);
            slots.clear();
            for (uint64_t j = 0; j < n; ++j) assert_int_equal(slots.get(j), 0);
        }
    }
    for (uint64_t n : {1u, 5u, 63u, 64u, 65u, 777u}) {
        check_same_words<1>(n, n);
        check_same_words<7>(n, n);
        check_same_words<13>(n, n);
        check_same_words<37>(n, n);
        check_same_words<63>(n, n);
        check_same_words<64>(n, n);
    }
    // whole-word slots take no room beside the block and the count (the
    // rotating cuckoo filter's memory figures count the table objects)
    static_assert(sizeof(PackedSlots<64>) == sizeof(tf::ZeroedBlock) + sizeof(uint64_t),
                  "64-bit slots hold no geometry");
}

// The buckets of (b, f) per the table's ways, checked: two ways, an
// involution with two distinct buckets; three ways, a permutation of order
// 3 whose orbit is b alone (a fixed point) or three distinct buckets, the
// same candidate set from each of them. Returns whether b was a fixed point.
template <unsigned Bits>
bool check_orbit(const CuckooTable<Bits> &t, uint64_t b, uint64_t f) {
    const uint64_t buckets = t.buckets();
    uint64_t c[3];
    if (t.ways() == 2) {
        const uint64_t a = t.alt(b, f);
        assert_true(a < buckets);
        assert_true(a != b);
        assert_int_equal(t.alt(a, f), b);
        assert_int_equal(t.candidates(b, f, c), 2);
        assert_int_equal(c[0], b);
        assert_int_equal(c[1], a);
        return false;
    }
    const uint64_t n1 = t.next3(b, f), n2 = t.next3(n1, f);
    assert_true(n1 < buckets && n2 < buckets);
    assert_int_equal(t.next3(n2, f), b);
    assert_int_equal(t.candidates(b, f, c), 3);
    assert_int_equal(c[1], n1);
    assert_int_equal(c[2], n2);
    if (n1 == b) {
        assert_int_equal(n2, b);
        return true;
    }
    assert_true(n2 != b && n2 != n1);
    // the same set from the other two buckets, rotated
    uint64_t d[3] = {0, 0, 0};
    assert_int_equal(t.candidates(n1, f, d), 3);
    assert_true(d[0] == n1 && d[1] == n2 && d[2] == b);
    // the bits above the pairs (the top bit of an odd log2) stay
    unsigned log2 = 0;
    while ((uint64_t(1) << log2) < buckets) ++log2;
    if (log2 % 2 == 1) assert_int_equal(n1 >> (log2 - 1), b >> (log2 - 1));
    return false;
}

// Tables up to 2^20 buckets for the orbits, 4096 buckets for the models
// (each insert of a model compares the whole table bit for bit after an
// undone chain: quadratic in the size); 2^16 and 1024 where counts are
// reduced (TU_REDUCED, test_util.h: sanitizers, emulation).
constexpr unsigned kOrbitLog2 = TU_REDUCED ? 16 : 20;
constexpr uint64_t kModelBuckets = TU_REDUCED ? 1024 : 4096;

template <unsigned Bits>
void check_orbits(unsigned ways) {
    uint64_t s = 1000 + Bits + ways;
    for (unsigned log2 = 1; log2 <= kOrbitLog2; ++log2) {
        const uint64_t buckets = uint64_t(1) << log2;
        const CuckooTable<Bits> t(buckets, 1, ways);  // one slot per bucket: the smallest table
        assert_int_equal(t.buckets(), buckets);
        uint64_t fixed = 0, tried = 0;
        const auto one = [&](uint64_t b) {
            const uint64_t f = CuckooTable<Bits>::fingerprint(splitmix(s));
            fixed += check_orbit(t, b, f);
            tried++;
        };
        if (buckets <= 4096) {
            for (uint64_t b = 0; b < buckets; ++b)
                for (int k = 0; k < 16; ++k) one(b);
        } else {
            for (int k = 0; k < 65536; ++k) one(splitmix(s) & (buckets - 1));
        }
        if (ways == 3) {
            // a fixed point needs the pairs of b to equal those of the mix:
            // 1 in 4^(log2 / 2) (every bucket with 2 buckets, no pair)
            const double expect = 1.0 / double(uint64_t(1) << (2 * (log2 / 2)));
            const double got = double(fixed) / double(tried);
            if (log2 == 1)
                assert_int_equal(fixed, tried);
            else
                assert_true(got < 2.0 * expect + 0.002);
        }
    }
}

void test_two_way_involution(void **) {
    check_orbits<13>(2);
    check_orbits<37>(2);
    check_orbits<64>(2);
}

void test_three_way_order_three(void **) {
    check_orbits<13>(3);
    check_orbits<37>(3);
    check_orbits<64>(3);
}

// An entry's identity: its fingerprint and the smallest of its buckets
// (the same from every bucket of the orbit).
template <unsigned Bits>
std::pair<uint64_t, uint64_t> entry_of(const CuckooTable<Bits> &t, uint64_t b, uint64_t f) {
    uint64_t c[3];
    const unsigned n = t.candidates(b, f, c);
    return {*std::min_element(c, c + n), f};
}

// Every stored value sits in one of its own buckets, and the stored
// entries are exactly the reference multiset.
template <unsigned Bits>
void check_against(const CuckooTable<Bits> &t, const std::map<std::pair<uint64_t, uint64_t>, uint64_t> &ref) {
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> seen;
    uint64_t items = 0;
    for (uint64_t slot = 0; slot < t.slots(); ++slot) {
        const uint64_t v = t.raw().get(slot);
        if (v == 0) continue;
        items++;
        seen[entry_of(t, slot / t.per_bucket(), v)]++;
    }
    assert_int_equal(items, t.items());
    assert_true(seen == ref);
}

template <unsigned Bits>
void check_model(uint64_t buckets, unsigned per_bucket, unsigned ways, uint64_t &s) {
    CuckooTable<Bits> t(buckets * per_bucket, per_bucket, ways);
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> ref;
    std::vector<std::pair<uint64_t, uint64_t>> keys;  // (primary bucket, fingerprint) stored
    std::vector<uint64_t> path(64);
    const uint64_t slots = t.slots();
    uint64_t failures = 0;
    for (uint64_t op = 0; op < std::max<uint64_t>(3 * slots, 256); ++op) {
        const uint64_t r = splitmix(s) % 8;
        if (r < 6) {  // insert a random key
            const uint64_t b = t.bucket_of(splitmix(s)), f = CuckooTable<Bits>::fingerprint(splitmix(s));
            const std::vector<uint64_t> before(t.raw().words(), t.raw().words() + t.raw().word_count());
            const uint64_t items = t.items();
            if (t.insert(b, f, 64, path.data())) {
                ref[entry_of(t, b, f)]++;
                keys.emplace_back(b, f);
                assert_int_equal(t.items(), items + 1);
            } else {  // undone: bit for bit as before
                failures++;
                assert_int_equal(t.items(), items);
                assert_true(std::equal(before.begin(), before.end(), t.raw().words()));
            }
        } else if (r == 6 && !keys.empty()) {  // remove a stored key
            const size_t i = size_t(splitmix(s) % keys.size());
            const auto k = keys[i];
            assert_true(t.contains(k.first, k.second));
            assert_true(t.remove(k.first, k.second));
            auto it = ref.find(entry_of(t, k.first, k.second));
            assert_true(it != ref.end());
            if (--it->second == 0) ref.erase(it);
            keys[i] = keys.back();
            keys.pop_back();
        } else {  // remove a key most likely absent: false exactly when absent
            const uint64_t b = t.bucket_of(splitmix(s)), f = CuckooTable<Bits>::fingerprint(splitmix(s));
            const auto e = entry_of(t, b, f);
            const bool present = ref.count(e) != 0;
            assert_int_equal(t.contains(b, f), present);
            assert_int_equal(t.remove(b, f), present);
            if (present) {
                if (--ref[e] == 0) ref.erase(e);
                keys.erase(std::find_if(keys.begin(), keys.end(), [&](const std::pair<uint64_t, uint64_t> &k) {
                    return entry_of(t, k.first, k.second) == e;
                }));
            }
        }
        if (op % 1024 == 0) check_against(t, ref);
    }
    check_against(t, ref);
    for (const auto &k : keys) assert_true(t.contains(k.first, k.second));
    // the table was driven past full: chains failed, and each was undone
    assert_true(failures > 0);
    t.clear();
    assert_int_equal(t.items(), 0);
    for (const auto &k : keys) assert_false(t.contains(k.first, k.second));
}

template <unsigned Bits>
void check_models() {
    uint64_t s = 77 + Bits;
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (unsigned per_bucket : {1u, 2u, 4u, 8u})
            for (uint64_t buckets = 2; buckets <= kModelBuckets; buckets *= 2)
                check_model<Bits>(buckets, per_bucket, ways, s);
}

// The probes of whole-word slots compare every slot of the buckets at
// once (a probe that compared 32-bit halves, as SIMD code may, would have
// to combine them per slot): a slot that equals f in one 32-bit half
// only, in any position of any of its buckets, is not f; f in any one
// position is found. Two ways and three, every bucket size.
void test_half_matches(void **) {
    uint64_t s = 5;
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (unsigned per_bucket : {1u, 2u, 4u, 8u}) {
            CuckooTable<64> t(64 * per_bucket, per_bucket, ways);
            for (int round = 0; round < 200; ++round) {
                const uint64_t f = CuckooTable<64>::fingerprint(splitmix(s)), b = t.bucket_of(splitmix(s));
                uint64_t c[3];
                const unsigned n = t.candidates(b, f, c);
                const uint64_t lo = f & 0xffffffffULL, hi = f & ~0xffffffffULL;
                const uint64_t d = splitmix(s) | 0x0000000100000001ULL;  // nonzero in each half
                t.clear();
                for (unsigned w = 0; w < n; ++w)
                    for (unsigned j = 0; j < per_bucket; ++j) {
                        // alternately f's high half with another low half, and the reverse
                        const bool keep_high = (j + w + unsigned(round)) % 2 != 0;
                        const uint64_t v =
                            keep_high ? hi | (lo ^ (d & 0xffffffffULL)) : lo | (hi ^ (d & ~0xffffffffULL));
                        assert_true(v != f && v != 0);
                        t.raw().set(c[w] * per_bucket + j, v);
                    }
                for (unsigned w = 0; w < n; ++w) assert_false(t.contains(c[w], f));
                const unsigned w = unsigned(splitmix(s) % n), j = unsigned(splitmix(s) % per_bucket);
                t.raw().set(c[w] * per_bucket + j, f);
                for (unsigned k = 0; k < n; ++k) assert_true(t.contains(c[k], f));
            }
        }
}

void test_model_13(void **) { check_models<13>(); }
void test_model_37(void **) { check_models<37>(); }
void test_model_64(void **) { check_models<64>(); }

}  // namespace

int main() {
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_packed_slots),       cmocka_unit_test(test_runtime_slots),
        cmocka_unit_test(test_two_way_involution), cmocka_unit_test(test_three_way_order_three),
        cmocka_unit_test(test_half_matches),       cmocka_unit_test(test_model_13),
        cmocka_unit_test(test_model_37),           cmocka_unit_test(test_model_64),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
