// Fuzz target for the recency window, through the public C API only (plus
// libmurmurhash to reseal blobs, fuzz_common.hpp).
//
// The first input byte picks what the rest is:
//   0   a blob for tf_recency_window_deserialize, as given;
//   1   the same, with the payload length and checksum repaired so that
//       mutations reach the structural checks behind the checksum;
//   2   an operation program on a small structure, checked against an exact
//       record of the stream: with exact signatures every answer keeps the
//       mode's promise (HistoricalMembership e <= r <= (1 + eps) e,
//       ExactCuckoo exact, OptimalSM within D - 1, "not in window" for keys
//       never inserted or W + slack - 1 old, never for keys younger than
//       W), and the calls' contracts hold (batches equal to single calls,
//       invalid calls changing nothing, round trips byte for byte).
// Program: options (mode, window 1..600, 1/eps 1..16, block, exact or
// approximate signatures, seed), then operations of one opcode byte and a
// 16-bit key each (see run_program).
// A blob that deserializes must serialize back to the same bytes, load
// under a max_memory of exactly its memory and no less, hold at most its
// size plus 1 MiB, and keep working. Any violated invariant aborts.
#include <cstring>
#include <vector>

#include "fuzz_common.hpp"

namespace {

using Input = FuzzInput;

std::vector<uint8_t> snapshot(const tf_recency_window *w) {
    return fuzz_blob_of(w, tf_recency_window_serialized_size, tf_recency_window_serialize);
}

size_t memory_of(const tf_recency_window *w) {
    size_t bytes = 0;
    FUZZ_CHECK(tf_recency_window_memory(w, &bytes) == TF_OK);
    return bytes;
}

uint64_t query(const tf_recency_window *w, const void *k, size_t n) {
    uint64_t r = 0;
    FUZZ_CHECK(tf_recency_window_query(w, k, n, &r) == TF_OK);
    return r;
}

tf_recency_window_info info_of(const tf_recency_window *w) {
    tf_recency_window_info info = TF_RECENCY_WINDOW_INFO_INIT;
    FUZZ_CHECK(tf_recency_window_get_info(w, &info) == TF_OK);
    return info;
}

// The stats and every level, against each other and the info.
tf_recency_window_stats check_stats(const tf_recency_window *w) {
    const tf_recency_window_info info = info_of(w);
    tf_recency_window_stats st = TF_RECENCY_WINDOW_STATS_INIT;
    FUZZ_CHECK(tf_recency_window_get_stats(w, &st) == TF_OK);
    FUZZ_CHECK(st.levels == info.levels && st.levels >= 1);
    FUZZ_CHECK(st.memory == memory_of(w));
    FUZZ_CHECK(st.window_items == (st.inserts < info.window ? st.inserts : info.window));
    uint64_t items = 0, stashed = 0;
    for (uint64_t l = 0; l < st.levels; ++l) {
        tf_recency_window_level v = TF_RECENCY_WINDOW_LEVEL_INIT;
        FUZZ_CHECK(tf_recency_window_get_level(w, l, &v) == TF_OK);
        FUZZ_CHECK(v.items <= v.slots + 16 && v.stashed <= 16);
        items += v.items;
        stashed += v.stashed;
    }
    FUZZ_CHECK(items == st.items && stashed == st.stashed);
    return st;
}

// The promise of the header for a key of true recency r (UINT64_MAX:
// never inserted) answered e.
bool keeps_promise(const tf_recency_window_info &info, uint64_t r, uint64_t e) {
    const uint64_t W = info.window;
    if (r == UINT64_MAX || r >= W + info.slack - 1) return e == TF_RECENCY_WINDOW_NOT_IN_WINDOW;
    if (e == TF_RECENCY_WINDOW_NOT_IN_WINDOW) return r >= W;
    if (e > r) return false;
    if (info.mode == TF_RECENCY_WINDOW_HISTORICAL) return r * info.inv_eps <= e * (info.inv_eps + 1);
    if (info.mode == TF_RECENCY_WINDOW_EXACT) return e == r;
    return r <= e + info.block - 1;
}

// The options of a caller compiled against a newer library (a struct 16
// bytes longer): with the bytes this library does not know left 0 its
// max_memory is read (one byte below the structure's memory: refused as
// too large, before anything is allocated); a byte set there is refused as
// an unknown option. Neither makes a handle.
void check_newer_options(const uint8_t *data, size_t size, size_t need) {
    struct Newer {
        tf_deserialize_options o;
        unsigned char more[16];
    } newer;
    std::memset(&newer, 0, sizeof newer);
    newer.o.size = sizeof newer;
    newer.o.max_memory = need - 1;
    tf_recency_window *w = nullptr;
    FUZZ_CHECK(tf_recency_window_deserialize(data, size, &newer.o, &w) == TF_ERR_TOO_LARGE && w == nullptr);
    newer.o.max_memory = need;
    newer.more[size % 16] = 1;
    FUZZ_CHECK(tf_recency_window_deserialize(data, size, &newer.o, &w) == TF_ERR_INVALID_ARGUMENT && w == nullptr);
}

void check_blob(const uint8_t *data, size_t size) {
    tf_recency_window *w = nullptr;
    tf_clear_last_error();
    const tf_status st = tf_recency_window_deserialize(data, size, nullptr, &w);
    if (st != TF_OK) {
        fuzz_check_refused_blob(st, w);
        return;
    }
    FUZZ_CHECK(w != nullptr);
    FUZZ_CHECK(snapshot(w) == std::vector<uint8_t>(data, data + size));
    const size_t need = memory_of(w);
    FUZZ_CHECK(need <= size + (size_t(1) << 20));
    fuzz_check_max_memory(tf_recency_window_deserialize, tf_recency_window_free, data, size, need);
    check_newer_options(data, size, need);
    check_stats(w);
    // it keeps working: a key inserted now is answered within the promise
    const tf_recency_window_info info = info_of(w);
    for (uint64_t i = 0; i < 4; ++i) {
        const uint64_t key = 0xfeed0000u + i;
        uint64_t prev = 0;
        FUZZ_CHECK(tf_recency_window_insert_report(w, &key, sizeof key, &prev) == TF_OK);
        if (info.signature_bits == 64) FUZZ_CHECK(keeps_promise(info, 0, query(w, &key, sizeof key)));
    }
    check_stats(w);
    tf_recency_window_free(w);
}

void sealed_blob(const uint8_t *data, size_t size) { fuzz_check_sealed(data, size, check_blob); }

// The twin: a second window made with the same options that is given every
// insert the program makes, one key at a time. A batch is checked against
// it (the same keys inserted one by one there: the same answers and the
// same serialized state after), as it was against a copy made by a round
// trip before the batch, which cost a serialize and a deserialize of the
// whole window per batch (the round trip is still made by operation 5).
// Every single insert is made on both, with the same answer: so the twin
// also checks that a window continued after a round trip answers as the
// one that never made it.
//
// Operations per program: with batches of up to 24 keys, 1024 operations
// insert well over twice the largest window (600), so every program can wrap
// its window; the bound keeps an input's cost to milliseconds under ASan, so
// that 1e7 executions fit in hours (docs/reliability.md, "Fuzzing").
constexpr int kWindowSteps = 1024;

void run_program(const uint8_t *data, size_t size) {
    Input in{data, size};
    tf_recency_window_options o = TF_RECENCY_WINDOW_OPTIONS_INIT;
    o.mode = in.byte() % 3;
    o.window = 1 + in.u16() % 600;
    o.inv_eps = 1 + in.byte() % 16;
    const uint8_t b = in.byte();
    if (o.mode == TF_RECENCY_WINDOW_OPTIMAL_SM && b != 0) o.block = 1 + b % o.window;
    o.delta = (in.byte() & 1) ? 0.05 : 0.0;
    o.seed = in.byte();
    tf_recency_window *w = nullptr, *twin = nullptr;
    FUZZ_CHECK(tf_recency_window_new(&o, &w) == TF_OK);
    FUZZ_CHECK(tf_recency_window_new(&o, &twin) == TF_OK);
    const tf_recency_window_info info = info_of(w);
    const bool exact = info.signature_bits == 64;
    std::vector<uint64_t> last(512, UINT64_MAX);  // the exact record
    uint64_t t = 0;
    auto recency = [&](uint16_t k) { return last[k] == UINT64_MAX ? UINT64_MAX : t - 1 - last[k]; };
    int steps = 0;
    while (in.more() && steps++ < kWindowSteps) {
        const uint8_t op = in.byte() % 10;
        const uint16_t key = in.u16() % 512;
        switch (op) {
            case 0:
            case 1:
            case 2: {  // insert-then-report
                uint64_t prev = 0, twin_prev = 1;
                FUZZ_CHECK(tf_recency_window_insert_report(w, &key, sizeof key, &prev) == TF_OK);
                if (exact) FUZZ_CHECK(keeps_promise(info, recency(key), prev));
                FUZZ_CHECK(tf_recency_window_insert_report(twin, &key, sizeof key, &twin_prev) == TF_OK);
                FUZZ_CHECK(twin_prev == prev);
                last[key] = t++;
                break;
            }
            case 3:  // insert
                FUZZ_CHECK(tf_recency_window_insert(w, &key, sizeof key) == TF_OK);
                FUZZ_CHECK(tf_recency_window_insert(twin, &key, sizeof key) == TF_OK);
                last[key] = t++;
                break;
            case 4: {  // query, and a key never inserted (3 bytes)
                const uint64_t e = query(w, &key, sizeof key);
                if (exact) FUZZ_CHECK(keeps_promise(info, recency(key), e));
                const uint8_t absent[3] = {uint8_t(key), uint8_t(key >> 8), 0xA5};
                if (exact) FUZZ_CHECK(query(w, absent, sizeof absent) == TF_RECENCY_WINDOW_NOT_IN_WINDOW);
                break;
            }
            case 5: {  // serialize, deserialize, continue on the copy
                const std::vector<uint8_t> blob = snapshot(w);
                tf_recency_window *copy = nullptr;
                FUZZ_CHECK(tf_recency_window_deserialize(blob.data(), blob.size(), nullptr, &copy) == TF_OK);
                FUZZ_CHECK(snapshot(copy) == blob);
                tf_recency_window_free(w);
                w = copy;
                break;
            }
            case 6: {  // a batch equals the single calls, on the twin
                const size_t n = 1 + in.byte() % 24;
                std::vector<uint16_t> keys(n);
                std::vector<const void *> ptrs(n);
                std::vector<size_t> lens(n, sizeof(uint16_t));
                for (size_t i = 0; i < n; ++i) {
                    keys[i] = uint16_t(i == 0 ? key : in.u16() % 512);
                    ptrs[i] = &keys[i];
                }
                std::vector<uint64_t> got(n, 7), single(n, 7);
                FUZZ_CHECK(tf_recency_window_query_batch(w, ptrs.data(), lens.data(), n, got.data()) == TF_OK);
                for (size_t i = 0; i < n; ++i) FUZZ_CHECK(got[i] == query(w, &keys[i], sizeof keys[i]));
                const bool report = key % 2 == 0;
                if (report)
                    FUZZ_CHECK(tf_recency_window_insert_report_batch(w, ptrs.data(), lens.data(), n, got.data()) ==
                               TF_OK);
                else
                    FUZZ_CHECK(tf_recency_window_insert_batch(w, ptrs.data(), lens.data(), n) == TF_OK);
                for (size_t i = 0; i < n; ++i) {
                    FUZZ_CHECK(tf_recency_window_insert_report(twin, &keys[i], sizeof keys[i], &single[i]) == TF_OK);
                    if (report) FUZZ_CHECK(got[i] == single[i]);
                    if (exact) FUZZ_CHECK(keeps_promise(info, recency(keys[i]), single[i]));
                    last[keys[i]] = t++;
                }
                FUZZ_CHECK(snapshot(twin) == snapshot(w));
                break;
            }
            case 7:
                FUZZ_CHECK(check_stats(w).inserts == t);
                break;
            case 8: {  // invalid calls change nothing
                const std::vector<uint8_t> before = snapshot(w);
                uint64_t r = 99;
                FUZZ_CHECK(tf_recency_window_insert(w, nullptr, 3) == TF_ERR_NULL);
                FUZZ_CHECK(tf_recency_window_insert_report(w, &key, sizeof key, nullptr) == TF_ERR_NULL);
                FUZZ_CHECK(tf_recency_window_insert_report(w, nullptr, 1, &r) == TF_ERR_NULL);
                FUZZ_CHECK(tf_recency_window_query(w, &key, sizeof key, nullptr) == TF_ERR_NULL);
                const void *bad[2] = {&key, nullptr};
                const size_t bad_lens[2] = {sizeof key, 1};
                uint64_t out[2] = {7, 7};
                FUZZ_CHECK(tf_recency_window_insert_report_batch(w, bad, bad_lens, 2, out) == TF_ERR_NULL);
                FUZZ_CHECK(tf_recency_window_insert_batch(w, bad, bad_lens, 2) == TF_ERR_NULL);
                FUZZ_CHECK(out[0] == 7 && out[1] == 7 && r == 99);
                FUZZ_CHECK(snapshot(w) == before);
                break;
            }
            case 9: {  // clear: rarely (only with the key's low bits zero)
                if (key % 16 != 0) break;
                FUZZ_CHECK(tf_recency_window_clear(w) == TF_OK);
                FUZZ_CHECK(tf_recency_window_clear(twin) == TF_OK);
                const tf_recency_window_stats st = check_stats(w);
                FUZZ_CHECK(st.items == 0 && st.inserts == 0);
                for (uint16_t k = 0; k < 512; ++k)
                    if (last[k] != UINT64_MAX) FUZZ_CHECK(query(w, &k, sizeof k) == TF_RECENCY_WINDOW_NOT_IN_WINDOW);
                last.assign(512, UINT64_MAX);
                t = 0;
                break;
            }
        }
    }
    FUZZ_CHECK(check_stats(w).inserts == t);
    FUZZ_CHECK(snapshot(twin) == snapshot(w));
    tf_recency_window_free(twin);
    tf_recency_window_free(w);
}

const FuzzMode kModes[] = {check_blob, sealed_blob, run_program};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_by_first_byte(data, size, kModes);
    return 0;
}
