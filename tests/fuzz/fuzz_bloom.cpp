// Fuzz target for the age-partitioned (count window) and time-limited Bloom
// filters, through the public C API only (plus libmurmurhash to reseal
// blobs, fuzz_common.hpp).
//
// The first input byte picks what the rest is:
//   0 / 1   a blob for tf_age_bloom_deserialize / tf_time_bloom_deserialize,
//           as given;
//   2 / 3   the same, with the payload length and checksum repaired so that
//           mutations reach the structural checks behind the checksum;
//   4 / 5   an operation program on a small count-window / time filter,
//           checked against an exact record of what was inserted when;
//   6       the same program on a count-window filter of the blocked layout.
// A blob that deserializes must serialize back to the same bytes, load
// under a max_memory of exactly its filter's memory and no less, keep
// working, and never lose a key it has just been given. Any violated
// invariant aborts (that is how a fuzzer reports a finding).
#include <climits>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fuzz_common.hpp"

namespace {

bool answer(tf_status st, int present) {
    FUZZ_CHECK(st == TF_OK);
    FUZZ_CHECK(present == 0 || present == 1);
    return present == 1;
}

// The stats of either filter: a rate, and whole slices of at least 64 bits.
template <class Stats>
void check_stats(const Stats &st) {
    FUZZ_CHECK(st.fpr_now >= 0.0 && st.fpr_now <= 1.0);
    FUZZ_CHECK(st.bits >= 64 * st.slices);
}

// One interface over the two filters, so that every check is written once:
// what comes from the C calls alone here, the rest in Age and Time.
template <class Handle, tf_status (*Deserialize)(const void *, size_t, const tf_deserialize_options *, Handle **),
          tf_status (*SerializedSize)(const Handle *, size_t *),
          tf_status (*Serialize)(const Handle *, void *, size_t, size_t *),
          tf_status (*Memory)(const Handle *, size_t *), void (*Free)(Handle *)>
struct Filter {
    using H = Handle;
    static tf_status deserialize(const void *b, size_t n, const tf_deserialize_options *o, H **out) {
        return Deserialize(b, n, o, out);
    }
    static std::vector<uint8_t> snapshot(const H *f) { return fuzz_blob_of(f, SerializedSize, Serialize); }
    static size_t memory(const H *f) {
        size_t bytes = 0;
        FUZZ_CHECK(Memory(f, &bytes) == TF_OK);
        return bytes;
    }
    static void free(H *f) { Free(f); }
};

struct Age : Filter<tf_age_bloom, tf_age_bloom_deserialize, tf_age_bloom_serialized_size, tf_age_bloom_serialize,
                    tf_age_bloom_memory, tf_age_bloom_free> {
    static tf_status add(H *f, const void *k, size_t n, uint64_t) { return tf_age_bloom_add(f, k, n); }
    static bool contains(const H *f, const void *k, size_t n, uint64_t) {
        int p = -1;
        const tf_status st = tf_age_bloom_contains(f, k, n, &p);
        return answer(st, p);
    }
    static void stats(const H *f, uint64_t) {
        tf_age_bloom_stats st = TF_AGE_BLOOM_STATS_INIT;
        st.fpr_now = -1;
        FUZZ_CHECK(tf_age_bloom_get_stats(f, &st) == TF_OK);
        check_stats(st);
    }
};

struct Time : Filter<tf_time_bloom, tf_time_bloom_deserialize, tf_time_bloom_serialized_size, tf_time_bloom_serialize,
                     tf_time_bloom_memory, tf_time_bloom_free> {
    static tf_status add(H *f, const void *k, size_t n, uint64_t now) { return tf_time_bloom_add(f, k, n, now); }
    static bool contains(const H *f, const void *k, size_t n, uint64_t now) {
        int p = -1;
        const tf_status st = tf_time_bloom_contains(f, k, n, now, &p);
        return answer(st, p);
    }
    static void stats(const H *f, uint64_t now) {
        tf_time_bloom_stats st = TF_TIME_BLOOM_STATS_INIT;
        st.fpr_now = -1;
        FUZZ_CHECK(tf_time_bloom_get_stats(f, now, &st) == TF_OK);
        check_stats(st);
        uint64_t s0 = 0;
        FUZZ_CHECK(tf_time_bloom_slice_bits(f, 0, &s0) == TF_OK && s0 >= 64);
        FUZZ_CHECK(tf_time_bloom_slice_bits(f, st.slices, &s0) == TF_ERR_INVALID_ARGUMENT);
    }
};

// max_memory on a blob that loads into a filter of `need` bytes: exactly
// that much is enough, a byte less is refused before anything is allocated.
template <class F>
void check_max_memory(const uint8_t *data, size_t size, size_t need) {
    tf_deserialize_options opts = TF_DESERIALIZE_OPTIONS_INIT;
    opts.max_memory = need;
    typename F::H *f = nullptr;
    FUZZ_CHECK(F::deserialize(data, size, &opts, &f) == TF_OK && f != nullptr);
    FUZZ_CHECK(F::memory(f) <= need);
    F::free(f);
    f = nullptr;
    opts.max_memory = need - 1;
    FUZZ_CHECK(F::deserialize(data, size, &opts, &f) == TF_ERR_TOO_LARGE && f == nullptr);
}

// A blob that loads must round-trip exactly and keep its promise for a key
// added right after.
template <class F>
void check_blob(const uint8_t *data, size_t size) {
    typename F::H *f = nullptr;
    tf_clear_last_error();
    const tf_status st = F::deserialize(data, size, nullptr, &f);
    if (st != TF_OK) {
        fuzz_check_failure(st);
        FUZZ_CHECK(fuzz_is_deserialize_error(st));
        FUZZ_CHECK(st != TF_ERR_OUT_OF_MEMORY);  // never more than the blob's own size
        FUZZ_CHECK(f == nullptr);
        return;
    }
    FUZZ_CHECK(f != nullptr);
    const std::vector<uint8_t> again = F::snapshot(f);
    FUZZ_CHECK(again.size() == size && std::memcmp(again.data(), data, size) == 0);
    check_max_memory<F>(data, size, F::memory(f));
    // Use it: stats, then a few inserts at increasing times, each found.
    uint64_t now = 1;
    for (size_t i = 0; i < 24 && i + 20 < size; ++i) now = now * 31 + data[20 + i];
    now = now % (uint64_t(1) << 62) + 1;
    F::stats(f, now);
    for (int i = 0; i < 4; ++i) {
        const uint64_t key = 0xfeed0000u + uint64_t(i);
        const tf_status ast = F::add(f, &key, sizeof key, now + uint64_t(i));
        if (ast != TF_OK) {
            fuzz_check_failure(ast);
            FUZZ_CHECK(ast == TF_ERR_OUT_OF_MEMORY || ast == TF_ERR_TOO_LARGE);
            continue;
        }
        FUZZ_CHECK(F::contains(f, &key, sizeof key, now + uint64_t(i)));
    }
    F::stats(f, now + 4);
    F::free(f);
}

using Input = FuzzInput;

// Operations per program (about 256 inserts): enough to rotate the slices
// of the smaller filters a program can make (bits is the program's choice)
// and to move the clock across many windows, few enough that an input costs
// milliseconds under ASan (1e7 executions in hours;
// docs/reliability.md, "Fuzzing").
constexpr int kBloomSteps = 1024;

// Operation programs. Count window: every key among the last l * g inserts
// must be found. Time window: every key inserted at t >= now - span must
// be found, with now clamped to the highest insert time (as the library
// does).
template <class F>
void run_program(Input in, bool time_mode, bool blocked = false) {
    // (the blocked layout: up to 32 slices, so that blocks of two lines
    // occur too)
    const uint32_t k = 1 + in.byte() % (blocked ? 16 : 8), l = 1 + in.byte() % (blocked ? 16 : 8);
    const uint64_t bits = 64 + uint64_t(in.u16() % 2048);
    const uint64_t span = l + in.u16() % 2000;
    typename F::H *f = nullptr;
    uint64_t capacity = 0;  // count window: l * g
    if constexpr (std::is_same<F, Time>::value) {
        FUZZ_CHECK(tf_time_bloom_new(k, l, bits, span, in.byte(), 0, &f) == TF_OK);
    } else {
        FUZZ_CHECK(tf_age_bloom_new(k, l, bits, in.byte(), blocked ? TF_AGE_BLOOM_BLOCKED : 0, &f) == TF_OK);
        tf_age_bloom_info info = TF_AGE_BLOOM_INFO_INIT;
        FUZZ_CHECK(tf_age_bloom_get_info(f, &info) == TF_OK);
        capacity = info.capacity;
    }
    // The exact record, per key (512 of them): its newest insert, as an
    // index into the sequence of inserts and the clamped time it was made
    // at. The newest insert of a key is the one most likely to be promised
    // (the youngest and latest), so "some insert of the key must be found"
    // is "its newest must be", and a query or a sweep costs one look per
    // key instead of one per insert. As before, only the last kRecent
    // inserts are held to the promise.
    constexpr uint64_t kRecent = 2048;
    constexpr uint64_t kNone = UINT64_MAX;
    std::vector<uint64_t> newest(512, kNone), newest_t(512, 0);
    uint64_t inserts = 0;
    uint64_t now = 1, high = 0;
    int steps = 0;
    // The library clamps a query's time to the highest time it has seen.
    auto must_hold = [&](uint16_t key) {
        if (newest[key] == kNone) return false;
        const uint64_t age = inserts - 1 - newest[key];
        if (age >= kRecent) return false;
        const uint64_t at = now > high ? now : high;
        if (time_mode) return at < span || newest_t[key] >= at - span;
        return age < capacity;
    };
    while (in.more() && steps++ < kBloomSteps) {
        const uint8_t op = in.byte() % 8;
        const uint16_t key = in.u16() % 512;
        switch (op) {
            case 0:
            case 1: {  // insert (time moves by the program's choice, also backwards)
                const tf_status st = F::add(f, &key, sizeof key, now);
                if (st != TF_OK) {
                    fuzz_check_failure(st);
                    FUZZ_CHECK(st == TF_ERR_TOO_LARGE || st == TF_ERR_OUT_OF_MEMORY);
                    break;
                }
                if (now > high) high = now;
                newest[key] = inserts++;
                newest_t[key] = time_mode ? high : 0;  // the clock is clamped
                break;
            }
            case 2: {  // query a key: never a false negative
                const bool must = must_hold(key);
                const bool got = F::contains(f, &key, sizeof key, now);
                FUZZ_CHECK(got || !must);
                break;
            }
            case 3:  // the clock moves: forwards a lot, a little, not at all, or back
                now = fuzz_move_clock(now, in.byte(), 50);
                break;
            case 4: {  // full sweep of the keys whose newest insert is promised
                for (uint16_t k2 = 0; k2 < 512; ++k2)
                    if (must_hold(k2)) FUZZ_CHECK(F::contains(f, &k2, sizeof k2, now));
                break;
            }
            case 5: {  // serialize, deserialize, continue on the copy
                const std::vector<uint8_t> blob = F::snapshot(f);
                typename F::H *copy = nullptr;
                FUZZ_CHECK(F::deserialize(blob.data(), blob.size(), nullptr, &copy) == TF_OK);
                FUZZ_CHECK(F::snapshot(copy) == blob);
                F::free(f);
                f = copy;
                break;
            }
            case 6:
                F::stats(f, now);
                break;
            case 7: {  // invalid calls change nothing
                const std::vector<uint8_t> before = F::snapshot(f);
                int p = 0;
                if constexpr (std::is_same<F, Time>::value) {
                    FUZZ_CHECK(tf_time_bloom_add(f, nullptr, 3, now) == TF_ERR_NULL);
                    FUZZ_CHECK(tf_time_bloom_add(f, &key, sizeof key, 0) == TF_ERR_INVALID_ARGUMENT);
                    FUZZ_CHECK(tf_time_bloom_contains(f, &key, sizeof key, 0, &p) == TF_ERR_INVALID_ARGUMENT);
                    FUZZ_CHECK(tf_time_bloom_add_if_absent(f, &key, sizeof key, now, nullptr) == TF_ERR_NULL);
                } else {
                    FUZZ_CHECK(tf_age_bloom_add(f, nullptr, 3) == TF_ERR_NULL);
                    FUZZ_CHECK(tf_age_bloom_contains(f, &key, sizeof key, nullptr) == TF_ERR_NULL);
                    FUZZ_CHECK(tf_age_bloom_add_if_absent(f, nullptr, 1, &p) == TF_ERR_NULL);
                }
                FUZZ_CHECK(F::snapshot(f) == before);
                break;
            }
        }
    }
    F::free(f);
}

// The first input byte picks what the rest is (see the top of this file).
template <class F>
void sealed_blob(const uint8_t *data, size_t size) {
    fuzz_check_sealed(data, size, check_blob<F>);
}
template <class F, bool time_mode, bool blocked>
void program(const uint8_t *data, size_t size) {
    run_program<F>(Input{data, size}, time_mode, blocked);
}
const FuzzMode kModes[] = {check_blob<Age>,          check_blob<Time>,           sealed_blob<Age>,
                           sealed_blob<Time>,        program<Age, false, false>, program<Time, true, false>,
                           program<Age, false, true>};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_by_first_byte(data, size, kModes);
    return 0;
}
