// Fuzz target for the rotating cuckoo filter, through the public C API only
// (plus libmurmurhash to reseal blobs, fuzz_common.hpp).
//
// The first input byte picks what the rest is:
//   0   a blob for tf_rotating_cuckoo_deserialize, as given;
//   1   the same, with the payload length and checksum repaired so that
//       mutations reach the structural checks behind the checksum;
//   2   an operation program on a small filter, checked against an exact
//       record of what was added when: the header's promise (no false
//       positive; a key added at t present until t + ttl unless the memory
//       cap or the table limit dropped a table since) and its calls'
//       contracts (batches equal to single calls, invalid calls changing
//       nothing, round trips byte for byte).
// Program: options (table slots 2^(1..12) at least two buckets, slots per
// bucket 1/2/4/8, two or three ways, ttl 0 or 1..1023, max_kicks 1..64,
// max_tables 1..16, a memory cap from tight to roomy), then operations of
// one opcode byte and a 16-bit key each (see run_program).
// A blob that deserializes must serialize back to the same bytes, load
// under a max_memory of exactly its filter's memory and no less, hold at
// most its size plus 256 KiB, and keep working. Any violated invariant
// aborts (that is how a fuzzer reports a finding).
#include <cstring>
#include <map>
#include <vector>

#include "fuzz_common.hpp"

namespace {

using Input = FuzzInput;

std::vector<uint8_t> snapshot(const tf_rotating_cuckoo *f) {
    return fuzz_blob_of(f, tf_rotating_cuckoo_serialized_size, tf_rotating_cuckoo_serialize);
}

size_t memory_of(const tf_rotating_cuckoo *f) {
    size_t bytes = 0;
    FUZZ_CHECK(tf_rotating_cuckoo_memory(f, &bytes) == TF_OK);
    return bytes;
}

bool contains(const tf_rotating_cuckoo *f, const void *k, size_t n, uint64_t now) {
    int p = -1;
    FUZZ_CHECK(tf_rotating_cuckoo_contains(f, k, n, now, &p) == TF_OK);
    FUZZ_CHECK(p == 0 || p == 1);
    return p == 1;
}

// The stats and every table at `now`, against each other and the info.
tf_rotating_cuckoo_stats check_stats(const tf_rotating_cuckoo *f, uint64_t now) {
    tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
    FUZZ_CHECK(tf_rotating_cuckoo_get_info(f, &info) == TF_OK);
    tf_rotating_cuckoo_stats st = TF_ROTATING_CUCKOO_STATS_INIT;
    FUZZ_CHECK(tf_rotating_cuckoo_get_stats(f, now, &st) == TF_OK);
    FUZZ_CHECK(st.tables >= 1 && st.tables <= info.max_tables);
    FUZZ_CHECK(st.live_tables <= st.tables);
    FUZZ_CHECK(st.memory == memory_of(f) && st.memory <= info.max_memory);
    FUZZ_CHECK(st.load >= 0.0 && st.load <= 1.0 && st.newest_load >= 0.0 && st.newest_load <= 1.0);
    uint64_t slots = 0, live_items = 0, prev_serial = 0;
    for (uint64_t i = 0; i < st.tables; ++i) {
        tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
        FUZZ_CHECK(tf_rotating_cuckoo_get_table(f, i, now, &t) == TF_OK);
        FUZZ_CHECK(t.slots >= 2 * uint64_t(info.slots_per_bucket) && (t.slots & (t.slots - 1)) == 0);
        FUZZ_CHECK(t.items <= t.slots);
        FUZZ_CHECK(t.expired == 0 || t.expired == 1);
        FUZZ_CHECK(i == 0 || t.serial + 1 == prev_serial);  // newest first, consecutive
        prev_serial = t.serial;
        slots += t.slots;
        if (!t.expired) live_items += t.items;
    }
    tf_rotating_cuckoo_table past = TF_ROTATING_CUCKOO_TABLE_INIT;
    FUZZ_CHECK(tf_rotating_cuckoo_get_table(f, st.tables, now, &past) == TF_ERR_INVALID_ARGUMENT);
    FUZZ_CHECK(st.slots == slots && st.items == live_items);
    return st;
}

// A blob that loads must round-trip exactly, respect its memory bounds and
// keep its promise for keys added right after.
void check_blob(const uint8_t *data, size_t size) {
    tf_rotating_cuckoo *f = nullptr;
    tf_clear_last_error();
    const tf_status st = tf_rotating_cuckoo_deserialize(data, size, nullptr, &f);
    if (st != TF_OK) {
        fuzz_check_refused_blob(st, f);
        return;
    }
    FUZZ_CHECK(f != nullptr);
    FUZZ_CHECK(snapshot(f) == std::vector<uint8_t>(data, data + size));
    const size_t need = memory_of(f);
    FUZZ_CHECK(need <= size + (size_t(256) << 10));
    fuzz_check_max_memory(tf_rotating_cuckoo_deserialize, tf_rotating_cuckoo_free, data, size, need);
    uint64_t now = 1;
    for (size_t i = 0; i < 24 && i + 20 < size; ++i) now = now * 31 + data[20 + i];
    now = now % (uint64_t(1) << 62) + 1;
    check_stats(f, now);
    for (int i = 0; i < 4; ++i) {
        const uint64_t key = 0xfeed0000u + uint64_t(i);
        int was = -1;
        const tf_status ast = tf_rotating_cuckoo_add_if_absent(f, &key, sizeof key, now + uint64_t(i), &was);
        if (ast != TF_OK) {
            fuzz_check_failure(ast);
            FUZZ_CHECK(ast == TF_ERR_OUT_OF_MEMORY);
            continue;
        }
        FUZZ_CHECK(was == 0);  // never added: a hit would be a false positive
        FUZZ_CHECK(contains(f, &key, sizeof key, now + uint64_t(i)));
        FUZZ_CHECK(tf_rotating_cuckoo_add_if_absent(f, &key, sizeof key, now + uint64_t(i), &was) == TF_OK);
        FUZZ_CHECK(was == 1);
    }
    check_stats(f, now + 4);
    tf_rotating_cuckoo_free(f);
}

void sealed_blob(const uint8_t *data, size_t size) { fuzz_check_sealed(data, size, check_blob); }

// What the program knows of a key it added: until when it must be found
// (UINT64_MAX: no ttl) and the memory losses counted when it was added.
struct Known {
    uint64_t until;
    uint64_t forgotten_memory;
};

// Operations per program: enough to fill, rotate and drop the tables of the
// small filters a program makes (512 keys, clock moves of many terms per
// operation); the bound keeps an input's cost to milliseconds under ASan, so
// that 1e7 executions fit in hours (docs/reliability.md, "Fuzzing").
constexpr int kCuckooSteps = 1024;

void run_program(const uint8_t *data, size_t size) {
    Input in{data, size};
    static const uint32_t spbs[] = {1, 2, 4, 8};
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.slots_per_bucket = spbs[in.byte() % 4];
    o.table_slots = uint64_t(2 * o.slots_per_bucket) << (in.byte() % 11);
    o.flags = in.byte() % 2 ? TF_ROTATING_CUCKOO_THREE_WAY : 0;
    const uint8_t ttl = in.byte();
    o.ttl = ttl < 64 ? 0 : uint64_t(ttl) * 4;
    o.max_kicks = 1 + in.byte() % 64;
    o.max_tables = 1 + in.byte() % 16;
    o.seed = in.byte();
    const uint8_t occ = in.byte();
    o.max_occupancy = occ < 128 ? 0.0 : double(occ - 127) / 128.0;
    tf_rotating_cuckoo *f = nullptr;
    FUZZ_CHECK(tf_rotating_cuckoo_new(&o, &f) == TF_OK);  // default memory: learn the fixed part
    const size_t first = memory_of(f);
    tf_rotating_cuckoo_free(f);
    f = nullptr;
    // from just the first table to about eight times its size
    o.max_memory = first + uint64_t(in.byte() % 8) * (o.table_slots * 8 + 64);
    FUZZ_CHECK(tf_rotating_cuckoo_new(&o, &f) == TF_OK);

    std::map<uint16_t, Known> known;  // keys that must be found, with their terms
    std::vector<bool> ever(512, false);
    uint64_t now = 1, high = 1;
    const auto losses = [&] { return check_stats(f, high).forgotten_memory; };
    // A key must be found at `now` (clamped to the highest time seen, as
    // the library does) while its term lasts and no table was dropped for
    // memory since it was added (`lost`: the losses counted now).
    const auto must_given = [&](uint16_t key, uint64_t lost) {
        auto it = known.find(key);
        const uint64_t at = now > high ? now : high;
        return it != known.end() && at <= it->second.until && lost == it->second.forgotten_memory;
    };
    const auto must = [&](uint16_t key) { return must_given(key, losses()); };
    // `lost`: the losses counted once the key was stored (before a batch
    // that stored it: a drop within the batch may have been its table).
    const auto remember = [&](uint16_t key, uint64_t lost) {
        known[key] = Known{o.ttl == 0 ? UINT64_MAX : high + o.ttl, lost};
        ever[key] = true;
    };
    int steps = 0;
    while (in.more() && steps++ < kCuckooSteps) {
        const uint8_t op = in.byte() % 12;
        const uint16_t key = in.u16() % 512;
        switch (op) {
            case 0:
            case 1: {  // the de-duplication call
                const uint64_t lost = losses();
                const bool was_must = must_given(key, lost);
                int was = -1;
                const tf_status st = tf_rotating_cuckoo_add_if_absent(f, &key, sizeof key, now, &was);
                FUZZ_CHECK(st == TF_OK);  // small tables: memory does not run out
                if (now > high) high = now;
                FUZZ_CHECK(was == 0 || was == 1);
                if (was_must) FUZZ_CHECK(was == 1);
                if (!ever[key]) FUZZ_CHECK(was == 0);
                // a hit does not refresh; a table this call dropped was not the key's
                if (was == 0) remember(key, losses());
                FUZZ_CHECK(contains(f, &key, sizeof key, now));
                break;
            }
            case 2: {  // add: stores or refreshes
                FUZZ_CHECK(tf_rotating_cuckoo_add(f, &key, sizeof key, now) == TF_OK);
                if (now > high) high = now;
                remember(key, losses());
                FUZZ_CHECK(contains(f, &key, sizeof key, now));
                break;
            }
            case 3: {  // query: never a false negative, never a false positive
                const bool got = contains(f, &key, sizeof key, now);
                if (must(key)) FUZZ_CHECK(got);
                if (!ever[key]) FUZZ_CHECK(!got);
                const uint8_t absent[3] = {uint8_t(key), uint8_t(key >> 8), 0xA5};  // never added: 3 bytes
                FUZZ_CHECK(!contains(f, absent, sizeof absent, now));
                break;
            }
            case 4: {  // remove: the newest copy; a key not present is a no-op that says so
                const bool was_must = must(key);
                int removed = -1;
                FUZZ_CHECK(tf_rotating_cuckoo_remove(f, &key, sizeof key, now, &removed) == TF_OK);
                if (now > high) high = now;
                if (was_must) FUZZ_CHECK(removed == 1);
                if (!ever[key]) FUZZ_CHECK(removed == 0);
                if (removed == 0) FUZZ_CHECK(!contains(f, &key, sizeof key, now));
                known.erase(key);  // an older copy may remain: nothing promised either way
                break;
            }
            case 5:  // the clock moves: forwards a little, a lot, not at all, or back
                now = fuzz_move_clock(now, in.byte(), 20);
                break;
            case 6: {  // serialize, deserialize, continue on the copy
                const std::vector<uint8_t> blob = snapshot(f);
                tf_rotating_cuckoo *copy = nullptr;
                FUZZ_CHECK(tf_rotating_cuckoo_deserialize(blob.data(), blob.size(), nullptr, &copy) == TF_OK);
                FUZZ_CHECK(snapshot(copy) == blob);
                tf_rotating_cuckoo_free(f);
                f = copy;
                break;
            }
            case 7:
                check_stats(f, now);
                break;
            case 8: {  // a batch equals the single calls, on a copy
                const size_t n = 1 + in.byte() % 24;
                std::vector<uint16_t> keys(n);
                std::vector<const void *> ptrs(n);
                std::vector<size_t> lens(n, sizeof(uint16_t));
                for (size_t i = 0; i < n; ++i) {
                    keys[i] = uint16_t(i == 0 ? key : in.u16() % 512);
                    ptrs[i] = &keys[i];
                }
                const uint64_t lost = losses();  // a drop within the batch voids its keys' terms
                const std::vector<uint8_t> blob = snapshot(f);
                tf_rotating_cuckoo *copy = nullptr;
                FUZZ_CHECK(tf_rotating_cuckoo_deserialize(blob.data(), blob.size(), nullptr, &copy) == TF_OK);
                std::vector<int> was(n, -1);
                FUZZ_CHECK(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs.data(), lens.data(), n, now, was.data()) ==
                           TF_OK);
                if (now > high) high = now;
                for (size_t i = 0; i < n; ++i) {
                    int single = -1;
                    FUZZ_CHECK(tf_rotating_cuckoo_add_if_absent(copy, &keys[i], sizeof keys[i], now, &single) == TF_OK);
                    FUZZ_CHECK(was[i] == single);
                    if (was[i] == 0) remember(keys[i], lost);
                }
                FUZZ_CHECK(snapshot(copy) == snapshot(f));
                tf_rotating_cuckoo_free(copy);
                std::vector<int> present(n, -1);
                FUZZ_CHECK(tf_rotating_cuckoo_contains_batch(f, ptrs.data(), lens.data(), n, now, present.data()) ==
                           TF_OK);
                for (size_t i = 0; i < n; ++i) FUZZ_CHECK(present[i] == int(contains(f, &keys[i], 2, now)));
                break;
            }
            case 9: {  // a sweep of every key that must be found
                const uint64_t lost = losses();
                for (const auto &k : known)
                    if (must_given(k.first, lost)) FUZZ_CHECK(contains(f, &k.first, sizeof k.first, now));
                break;
            }
            case 10: {  // invalid calls change nothing
                const std::vector<uint8_t> before = snapshot(f);
                int p = 0;
                FUZZ_CHECK(tf_rotating_cuckoo_add(f, nullptr, 3, now) == TF_ERR_NULL);
                FUZZ_CHECK(tf_rotating_cuckoo_add(f, &key, sizeof key, 0) == TF_ERR_INVALID_ARGUMENT);
                FUZZ_CHECK(tf_rotating_cuckoo_add_if_absent(f, &key, sizeof key, now, nullptr) == TF_ERR_NULL);
                FUZZ_CHECK(tf_rotating_cuckoo_remove(f, &key, sizeof key, 0, &p) == TF_ERR_INVALID_ARGUMENT);
                FUZZ_CHECK(tf_rotating_cuckoo_contains(f, &key, sizeof key, 0, &p) == TF_ERR_INVALID_ARGUMENT);
                const void *bad[2] = {&key, nullptr};
                const size_t bad_lens[2] = {sizeof key, 1};
                int out[2] = {-1, -1};
                FUZZ_CHECK(tf_rotating_cuckoo_add_if_absent_batch(f, bad, bad_lens, 2, now, out) == TF_ERR_NULL);
                FUZZ_CHECK(out[0] == -1 && out[1] == -1);
                FUZZ_CHECK(snapshot(f) == before);
                break;
            }
            case 11: {  // clear: rarely (only with the key's low bits zero)
                if (key % 16 != 0) break;
                FUZZ_CHECK(tf_rotating_cuckoo_clear(f) == TF_OK);
                const tf_rotating_cuckoo_stats st = check_stats(f, now);
                FUZZ_CHECK(st.items == 0 && st.tables == 1 && st.forgotten_memory == 0);
                for (const auto &k : known) FUZZ_CHECK(!contains(f, &k.first, sizeof k.first, now));
                known.clear();
                break;
            }
        }
    }
    check_stats(f, now);
    tf_rotating_cuckoo_free(f);
}

const FuzzMode kModes[] = {check_blob, sealed_blob, run_program};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_by_first_byte(data, size, kModes);
    return 0;
}
