// Fuzz target: tf_recency_sketch_deserialize on arbitrary bytes.
//
// Every input is tried three ways: as given; with the envelope's payload
// length and checksum repaired (so that mutations reach the structural
// checks behind the checksum instead of dying at it); and as a compact shape
// description from which a consistent blob is built (see
// check_structured: every shape tf_recency_sketch_new accepts must load,
// every other must be refused as corrupt). A blob that is
// rejected must give a documented error status and a message; a blob that is
// accepted must behave like a sketch: it re-serializes to exactly the same
// bytes, survives a second round trip, answers queries consistently and
// follows the documented rules of pace, TTL, merge, clear and
// error_estimate. Anything else aborts, which is how a fuzzer reports it.
//
// Only the public C API is used (plus libmurmurhash to repair checksums, as
// docs/wire-format.md defines the checksum as MurmurHash3 x64_128, seed 0,
// low half).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <murmurhash.h>

#include "fuzz_common.hpp"

namespace {

constexpr size_t kHeaderSize = kFuzzHeader;
constexpr size_t kOverhead = kFuzzOverhead;

// Anything that is not a valid handle, to see that a failed call leaves the
// out-parameter alone.
tf_recency_sketch *const kUntouched = reinterpret_cast<tf_recency_sketch *>(uintptr_t(0x5eed));

void put_le64(uint8_t *p, uint64_t v) { fuzz_put_le64(p, v); }
uint64_t get_le64(const uint8_t *p) { return fuzz_get_le(p, 8); }
uint32_t get_le32(const uint8_t *p) { return uint32_t(fuzz_get_le(p, 4)); }

uint64_t query(const tf_recency_sketch *s, const std::string &key) {
    uint64_t t = 12345;
    FUZZ_CHECK(tf_recency_sketch_query(s, key.data(), key.size(), &t) == TF_OK);
    return t;
}

double estimate(const tf_recency_sketch *s, uint64_t since) {
    double p = -1.0;
    FUZZ_CHECK(tf_recency_sketch_error_estimate(s, since, &p) == TF_OK);
    FUZZ_CHECK(p >= 0.0 && p <= 1.0);  // also rejects NaN
    return p;
}

// Keys to probe an accepted sketch with: fixed ones plus slices of the blob,
// so that the fuzzer can steer which cells are looked at.
std::vector<std::string> probe_keys(const uint8_t *data, size_t size) {
    std::vector<std::string> keys = {std::string(), "a", "key", std::string("\0\0\0\0", 4), "user:42"};
    for (size_t off = kHeaderSize; off < size && keys.size() < 12; off += 13)
        keys.emplace_back(reinterpret_cast<const char *>(data + off), std::min<size_t>(4 + off % 9, size - off));
    return keys;
}

void exercise(const uint8_t *data, size_t size, tf_recency_sketch *s) {
    // Shape: what was accepted must be a shape tf_recency_sketch_new accepts,
    // and the blob must carry every cell (no allocation beyond the blob).
    tf_recency_sketch_info info = TF_RECENCY_SKETCH_INFO_INIT;
    FUZZ_CHECK(tf_recency_sketch_get_info(s, &info) == TF_OK);
    const uint64_t width = info.width, cells = info.cells;
    const uint32_t depth = info.depth, seed = info.seed, flags = info.flags;
    FUZZ_CHECK((flags & ~(TF_RECENCY_SKETCH_CONCURRENT | TF_RECENCY_SKETCH_BLOCKED)) == 0);
    FUZZ_CHECK(width >= 1 && depth >= 1);
    FUZZ_CHECK(depth <= ((flags & TF_RECENCY_SKETCH_BLOCKED) ? TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH
                                                             : TF_RECENCY_SKETCH_MAX_DEPTH));
    FUZZ_CHECK(width <= size);  // width*depth cells of 8 bytes each are in the blob
    FUZZ_CHECK(cells == fuzz_expected_cells(width, depth, flags));
    FUZZ_CHECK(cells <= size / 8);
    size_t mem = 0;
    FUZZ_CHECK(tf_recency_sketch_memory(s, &mem) == TF_OK);
    FUZZ_CHECK(mem >= cells * 8);

    // The envelope (docs/wire-format.md) was validated.
    FUZZ_CHECK(size >= kOverhead);
    FUZZ_CHECK(std::memcmp(data, "TFLT", 4) == 0);
    FUZZ_CHECK(data[4] == 1 && data[5] == 0);  // version 1
    FUZZ_CHECK(data[6] == 1 && data[7] == 0);  // kind 1
    FUZZ_CHECK(get_le32(data + 8) == flags);
    FUZZ_CHECK(get_le64(data + 12) == size - kOverhead);

    // Re-serializing gives back exactly the input.
    size_t need = 0;
    FUZZ_CHECK(tf_recency_sketch_serialized_size(s, &need) == TF_OK);
    FUZZ_CHECK(need == size);
    std::vector<uint8_t> again = fuzz_snapshot(s);
    FUZZ_CHECK(again.size() == size && std::memcmp(again.data(), data, size) == 0);

    // A short buffer: BUFFER_TOO_SMALL, the needed size, nothing written.
    {
        std::vector<uint8_t> small(size - 1, 0xA5);
        size_t written = 0;
        tf_clear_last_error();
        tf_status st = tf_recency_sketch_serialize(s, small.data(), small.size(), &written);
        FUZZ_CHECK(st == TF_ERR_BUFFER_TOO_SMALL);
        fuzz_check_failure(st);
        FUZZ_CHECK(written == size);
        for (uint8_t b : small) FUZZ_CHECK(b == 0xA5);
    }

    // Second round trip.
    tf_recency_sketch *copy = nullptr;
    FUZZ_CHECK(tf_recency_sketch_deserialize(again.data(), again.size(), nullptr, &copy) == TF_OK);
    FUZZ_CHECK(copy != nullptr);
    FUZZ_CHECK(fuzz_snapshot(copy) == again);
    {
        tf_recency_sketch_info i2 = TF_RECENCY_SKETCH_INFO_INIT;
        FUZZ_CHECK(tf_recency_sketch_get_info(copy, &i2) == TF_OK);
        FUZZ_CHECK(i2.width == width && i2.depth == depth && i2.seed == info.seed && i2.flags == flags &&
                   i2.cells == cells);
    }
    // max_memory: the sketch's own memory is enough, a byte less is refused
    // before anything is allocated.
    {
        tf_deserialize_options opts = TF_DESERIALIZE_OPTIONS_INIT;
        opts.max_memory = mem;
        tf_recency_sketch *capped = nullptr;
        FUZZ_CHECK(tf_recency_sketch_deserialize(data, size, &opts, &capped) == TF_OK);
        tf_recency_sketch_free(capped);
        capped = nullptr;
        opts.max_memory = mem - 1;
        const tf_status st = tf_recency_sketch_deserialize(data, size, &opts, &capped);
        FUZZ_CHECK(st == TF_ERR_TOO_LARGE && capped == nullptr);
        fuzz_check_failure(st);
    }

    // Queries: both copies agree; TTL lookups agree with queries; the error
    // estimate is a probability, non-increasing in `since`, and 0 when no
    // cell can be newer than `since`.
    const std::vector<std::string> keys = probe_keys(data, size);
    uint64_t qmax = 0;
    double prev = estimate(s, 0);
    for (const std::string &k : keys) {
        const uint64_t q = query(s, k);
        FUZZ_CHECK(query(copy, k) == q);
        if (q > qmax) qmax = q;
        const uint64_t nows[3] = {q > 1 ? q - 1 : 1, q ? q : 1, fuzz_sat_add(q, 1)};
        for (uint64_t now : nows) {
            int live = -1;
            uint64_t exp = 1;
            FUZZ_CHECK(tf_recency_sketch_ttl_maybe_live(s, k.data(), k.size(), now, &live, &exp) == TF_OK);
            FUZZ_CHECK(exp == q);
            FUZZ_CHECK(live == (q > now ? 1 : 0));
        }
    }
    FUZZ_CHECK(estimate(s, qmax) <= prev);
    prev = estimate(s, qmax);
    FUZZ_CHECK(estimate(s, UINT64_MAX) <= prev);
    FUZZ_CHECK(estimate(s, UINT64_MAX) == 0.0);

    // Merging an identical sketch, or the sketch itself, changes nothing;
    // an incompatible one is refused and changes nothing either.
    FUZZ_CHECK(tf_recency_sketch_merge(s, copy) == TF_OK);
    FUZZ_CHECK(fuzz_snapshot(s) == again);
    FUZZ_CHECK(tf_recency_sketch_merge(s, s) == TF_OK);
    FUZZ_CHECK(fuzz_snapshot(s) == again);
    {
        tf_recency_sketch *other = nullptr;
        const uint64_t ow = width < 64 ? width + 1 : 1;
        FUZZ_CHECK(tf_recency_sketch_new(ow, depth, seed, flags, &other) == TF_OK);
        tf_clear_last_error();
        tf_status st = tf_recency_sketch_merge(s, other);
        FUZZ_CHECK(st == TF_ERR_INCOMPATIBLE);
        fuzz_check_failure(st);
        FUZZ_CHECK(fuzz_snapshot(s) == again);
        tf_recency_sketch_free(other);
        FUZZ_CHECK(tf_recency_sketch_new(width, depth, seed ^ 1u, flags, &other) == TF_OK);
        tf_clear_last_error();
        st = tf_recency_sketch_merge(s, other);
        FUZZ_CHECK(st == TF_ERR_INCOMPATIBLE);
        fuzz_check_failure(st);
        FUZZ_CHECK(fuzz_snapshot(s) == again);
        tf_recency_sketch_free(other);
    }

    // Mutations on the copy: pace follows its rule exactly (the estimate is
    // the query), an update is never lost, clear forgets everything.
    for (size_t i = 0; i < keys.size(); ++i) {
        const std::string &k = keys[i];
        const uint64_t q = query(copy, k);
        const uint64_t interval = 1 + (i * 7) % 50;
        const uint64_t now = (i % 3 == 0) ? fuzz_sat_add(q, interval) : (q > 5 ? q - 5 : 1 + i);
        int granted = -1;
        uint64_t next = 0;
        const std::vector<uint8_t> before = (i % 4 == 0) ? fuzz_snapshot(copy) : std::vector<uint8_t>();
        FUZZ_CHECK(tf_recency_sketch_pace(copy, k.data(), k.size(), now, interval, &granted, &next) == TF_OK);
        const bool expect = fuzz_pace_due(q, now, interval);
        FUZZ_CHECK(granted == (expect ? 1 : 0));
        if (granted) {
            FUZZ_CHECK(next == fuzz_sat_add(now, interval));
            FUZZ_CHECK(query(copy, k) >= now);
        } else {
            FUZZ_CHECK(next == fuzz_sat_add(q, interval));
            FUZZ_CHECK(query(copy, k) == q);
            if (!before.empty()) FUZZ_CHECK(fuzz_snapshot(copy) == before);
        }
        const uint64_t t = (i % 2) ? fuzz_sat_add(q, 1) : 1 + i * 1000;
        FUZZ_CHECK(tf_recency_sketch_update(copy, k.data(), k.size(), t) == TF_OK);
        FUZZ_CHECK(query(copy, k) >= t);
    }
    FUZZ_CHECK(tf_recency_sketch_clear(copy) == TF_OK);
    FUZZ_CHECK(estimate(copy, 0) == 0.0);
    for (const std::string &k : keys) FUZZ_CHECK(query(copy, k) == TF_NEVER);

    tf_recency_sketch_free(copy);
}

tf_status check_blob(const uint8_t *data, size_t size) {
    tf_recency_sketch *s = kUntouched;
    tf_clear_last_error();
    const tf_status st = tf_recency_sketch_deserialize(data, size, nullptr, &s);
    if (st != TF_OK) {
        FUZZ_CHECK(fuzz_is_deserialize_error(st));
        fuzz_check_failure(st);
        FUZZ_CHECK(s == kUntouched);
        // NULL only for a NULL buffer; never out of memory: a blob cannot
        // make the library allocate more than its own size.
        FUZZ_CHECK(st != TF_ERR_NULL || data == nullptr);
        FUZZ_CHECK(st != TF_ERR_OUT_OF_MEMORY);
        // Anything shorter than the envelope is truncated.
        if (size < kOverhead) FUZZ_CHECK(st == TF_ERR_TRUNCATED || data == nullptr);
        return st;
    }
    FUZZ_CHECK(s != nullptr && s != kUntouched);
    exercise(data, size, s);
    tf_recency_sketch_free(s);
    return st;
}

std::vector<uint8_t> seal(std::vector<uint8_t> blob) { return fuzz_seal(std::move(blob)); }

// Structured variant. The recency sketch payload of this format version is
//   width u64, depth u32, seed u32, cell count u64, cells u64[count]
// (not part of the public API, so it is checked once against a blob the
// library writes; if it ever changes, this variant is simply skipped).
constexpr size_t kPayloadFixed = 24;

bool payload_layout_known() {
    static const bool known = [] {
        tf_recency_sketch *s = nullptr;
        if (tf_recency_sketch_new(3, 2, 0xA1B2C3D4u, TF_RECENCY_SKETCH_BLOCKED, &s) != TF_OK) return false;
        tf_recency_sketch_update(s, "k", 1, 0x0102030405060708ull);
        const std::vector<uint8_t> b = fuzz_snapshot(s);
        tf_recency_sketch_free(s);
        if (b.size() != kOverhead + kPayloadFixed + 8 * 8) return false;
        if (get_le64(b.data() + 20) != 3 || get_le32(b.data() + 28) != 2 || get_le32(b.data() + 32) != 0xA1B2C3D4u ||
            get_le64(b.data() + 36) != 8)
            return false;
        unsigned hits = 0;  // depth 2: two cells hold the update
        for (size_t i = 0; i < 8; ++i) hits += get_le64(b.data() + 44 + 8 * i) == 0x0102030405060708ull;
        return hits == 2;
    }();
    return known;
}

// Builds a blob from a compact description taken from the input, with the
// cell count and every length consistent, so that the fuzzer can vary the
// shape freely:
//   byte 0    flags: bits 0-1 CONCURRENT/BLOCKED; bit 7 also sets flag bit
//             (byte0 >> 2) & 31, usually an undefined one
//   bytes 1-2 width (little-endian): w & 0x7FFF if bit 15 is set, else w & 0xFF
//   byte 3    depth (low 6 bits: 0..63)
//   bytes 4-7 seed
//   rest      cell values, repeated or zero-padded to the cell count
// A shape tf_recency_sketch_new accepts must be accepted; any other must be
// refused as corrupt.
void check_structured(const uint8_t *data, size_t size) {
    if (size < 8 || !payload_layout_known()) return;
    uint32_t flags = data[0] & (TF_RECENCY_SKETCH_CONCURRENT | TF_RECENCY_SKETCH_BLOCKED);
    if (data[0] & 0x80) flags |= 1u << ((data[0] >> 2) & 31);
    const uint64_t w16 = uint64_t(data[1]) | uint64_t(data[2]) << 8;
    const uint64_t width = (w16 & 0x8000) ? (w16 & 0x7FFF) : (w16 & 0xFF);
    const uint32_t depth = data[3] & 0x3F;
    const uint32_t seed = get_le32(data + 4);
    const bool blocked = (flags & TF_RECENCY_SKETCH_BLOCKED) != 0;
    const bool valid = width >= 1 && depth >= 1 &&
                       depth <= (blocked ? TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH : TF_RECENCY_SKETCH_MAX_DEPTH) &&
                       (flags & ~(TF_RECENCY_SKETCH_CONCURRENT | TF_RECENCY_SKETCH_BLOCKED)) == 0;
    const uint64_t cells = fuzz_expected_cells(width, depth, flags);
    if (cells > 1024) return;  // keep inputs cheap

    std::vector<uint8_t> blob(kOverhead + kPayloadFixed + 8 * cells);
    std::memcpy(blob.data(), "TFLT", 4);
    blob[4] = 1;  // version 1
    blob[6] = 1;  // kind 1
    for (int i = 0; i < 4; ++i) blob[8 + i] = uint8_t(flags >> (8 * i));
    put_le64(blob.data() + 20, width);
    for (int i = 0; i < 4; ++i) blob[28 + i] = uint8_t(depth >> (8 * i));
    for (int i = 0; i < 4; ++i) blob[32 + i] = uint8_t(seed >> (8 * i));
    put_le64(blob.data() + 36, cells);
    const size_t avail = size - 8;
    for (size_t i = 0; i < 8 * cells && avail > 0 && i < 4 * avail; ++i) blob[44 + i] = data[8 + i % avail];
    blob = seal(std::move(blob));

    const tf_status st = check_blob(blob.data(), blob.size());
    if (valid) {
        if (st != TF_OK)
            std::fprintf(stderr, "valid shape %llux%u flags 0x%x refused: %s\n", (unsigned long long)width,
                         unsigned(depth), unsigned(flags), tf_status_string(st));
        FUZZ_CHECK(st == TF_OK);
    } else {
        FUZZ_CHECK(st == TF_ERR_CORRUPT);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check_blob(data, size);

    // The same bytes with a consistent payload length and checksum.
    fuzz_check_sealed(data, size, [&](const uint8_t *sealed, size_t n) {
        if (std::memcmp(sealed, data, n) != 0) check_blob(sealed, n);
    });

    // A blob built from a shape description in the input.
    if (size <= UINT_MAX / 8) check_structured(data, size);

    // A NULL handle pointer is refused without touching anything.
    if (size > 0 && data[0] == 'T') {
        tf_clear_last_error();
        const tf_status st = tf_recency_sketch_deserialize(data, size, nullptr, nullptr);
        FUZZ_CHECK(st == TF_ERR_NULL);
        fuzz_check_failure(st);
    }
    return 0;
}
