// Age-partitioned Bloom filters ("Time-limited Bloom Filter", Rodrigues,
// Shtul, Baquero, Almeida, ACM SAC 2023): the false-positive model, and the
// slices of the classic layout, which the count window of section 5
// (ClassicLayout, a storage policy of CountWindowBloom) and the time-limited
// filter of section 6 (TimeBloom) share.
//
// A filter is a sequence of slices s_0 (newest) .. s_{S-1} (oldest), each a
// bit array of m_i bits, one per generation of a GenerationRing
// (lib/common/generation_ring.hpp), which keeps their accounting and
// rotates them. An insert sets one bit in each of s_0..s_{k-1}; a query
// looks for k consecutive slices holding the key's bit (section 5.3,
// Algorithm 1). Slices that are k apart share a hash function: the slice of
// serial number `serial` uses hash function serial mod k, so any k
// consecutive slices use k different functions and an operation computes
// only k hash values, all from one 128-bit MurmurHash3.
//
// Count window: S = k + l slices of equal size, a rotation every g inserts
// recycles the oldest slice; the last l*g inserts are always found. Time
// window: slice sizes follow the insertion rate (equations 4-8), slices
// older than the span retire (equation 3), and queries ignore slices older
// than the span; every key inserted within the span is always found.
#ifndef TF_LIB_BLOOM_AGE_PARTITIONED_HPP
#define TF_LIB_BLOOM_AGE_PARTITIONED_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/generation_ring.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"

namespace tf {
namespace bloom {

// ln 2: a slice of m bits takes m ln 2 inserts to fill to 1/2.
inline const double kLn2 = std::log(2.0);

constexpr uint32_t kMaxK = 64;
constexpr uint32_t kMaxL = 1024;
// No slice larger than 2^40 bits (128 GiB); keeps every size computation
// far from overflow.
constexpr uint64_t kMaxSliceBits = uint64_t(1) << 40;
// At most this many slices in a time-limited filter (a guard against
// degenerate rates; the adaptation keeps it near k + l).
constexpr uint32_t kMaxSlices = 4 * kMaxL;
// A shift creates a slice of at most kMaxGrowth times the largest slice.
constexpr uint64_t kMaxGrowth = 16;
// Equation 6 extrapolates a rate measured over less than a target period at
// most this many times.
constexpr double kMaxExtrapolation = 4.0;

// ---- the false-positive model ---------------------------------------------

// Exact false-positive probability of a query that needs k consecutive
// matches among slices with independent fill ratios r[0..S) (0 for slices a
// query ignores): a dynamic program over (slice, length of the current run).
double false_positive_rate(uint32_t k, const double *r, size_t slices);

// The steady-state rate of a count-window filter with parameters (k, l):
// the worst moment, just before a shift, when r_i = 1 - 2^-((i+1)/k) for
// i < k and 1/2 beyond (equation 2). The time-averaged rate is lower.
double steady_false_positive_rate(uint32_t k, uint32_t l);

// Expected number of slices a query for an absent key tests (Algorithm 1,
// query_bits below) when slice i holds a random key's bit with independent
// probability r[i]: a dynamic program over (start of the current window,
// matches carried from the window above). Algorithm 1 tests each slice at
// most once, so the tests are independent draws and the expectation is
// exact under the fills r. A present key is the same with the fills of its
// own k slices set to 1.
double expected_probes(uint32_t k, const double *r, size_t slices);

// The expected probes of a query at steady state, at the same worst moment
// as steady_false_positive_rate: for an absent key, and for a present key
// whose k slices are equally likely to be any of the l + 1 runs of k
// consecutive slices a key within the window occupies.
double steady_absent_probes(uint32_t k, uint32_t l);
double steady_present_probes(uint32_t k, uint32_t l);

// The default cost bound of the chooser: at most this many expected probes
// per absent query at steady state. 6 keeps bits per element within 1.15x
// of the memory-minimal choice at every target from 1e-1 to 1e-6 (a budget
// of 5 costs up to 1.23x at 1e-5; docs/age-bloom.md has the table).
constexpr double kDefaultProbeBudget = 6.0;

// The (k, l) pair whose steady-state rate is <= target and whose absent
// queries test at most `probe_budget` slices in expectation (infinity: no
// bound, the memory-minimal choice) with the fewest bits per element of
// capacity, (k + l) k / (l ln 2); ties go to the smaller l (shorter
// queries). l is capped at kMaxL / 4 to bound query cost. For each k the
// rate and the probes both grow with l, so the best l of a k is the largest
// that meets both. Answers are remembered (choice_memo.hpp).
// Fails with TF_ERR_INVALID_ARGUMENT for a target outside (0, 1) or a
// budget below 1 (NaN included), and TF_ERR_TOO_LARGE when no pair within
// the limits meets them.
tf_status choose_kl(double target, double probe_budget, uint32_t *k, uint32_t *l);

// Bits per element of capacity at steady state: (k + l) k / (l ln 2).
double steady_bits_per_element(uint32_t k, uint32_t l);

// k in 1..kMaxK, l in 1..kMaxL, 64 <= slice_bits <= 2^40.
tf_status check_classic_params(uint32_t k, uint32_t l, uint64_t slice_bits);

// Bits of a classic slice that takes k generations of g inserts to fill to
// 1/2: ceil(k g / ln 2), at least 64; 0 when over 2^40.
uint64_t classic_slice_bits(uint32_t k, double generation);

// ---- the slices -------------------------------------------------------------

// A generation's bit array (the slot of a SliceRing). Its words are a
// zeroed block (common/memory.hpp): fresh pages from calloc or mmap, not
// written at creation, so a large filter costs no time or resident memory
// until its slices are used, and slices of 4 MiB or more take huge pages.
struct Slice {
    AlignedArray<uint64_t> words;  // m bits, rounded up to whole words
    uint64_t m = 0;                // bits
    uint32_t hidx = 0;             // hash function: serial mod k (not serialized)

    bool test(uint64_t bit) const { return (words[bit >> 6] >> (bit & 63)) & 1u; }
    void set(uint64_t bit) { words[bit >> 6] |= uint64_t(1) << (bit & 63); }
    void reset() { std::memset(words.data(), 0, words.size() * sizeof(uint64_t)); }
};

using SliceRing = GenerationRing<Slice>;
using SliceGen = SliceRing::Gen;

// A zeroed slice of m bits for the generation of serial number `serial`.
// Throws std::bad_alloc.
Slice make_slice(uint64_t m, uint64_t serial, uint32_t k);

// Measured fill ratio: set bits / m (counting inserts instead would
// overstate it whenever keys repeat, since a repeat sets no new bit).
double measured_fill(const SliceGen &g);

// The k hash values of a key (not yet reduced to a slice size).
struct KeyHashes {
    uint64_t v[kMaxK];
};

// The k values come from enhanced double hashing, each passed through one
// more non-linear mix (see the .cpp).
void key_hashes(uint32_t k, uint32_t seed, const void *key, size_t len, KeyHashes *h);

inline uint64_t bit_for(const Slice &s, const KeyHashes &h) { return reduce(h.v[s.hidx], s.m); }

// A query's and an insert's view of a slice: `live(g)` is false for a slice
// a query must ignore (a time window's expired slice); a count window's are
// all live.
struct AllLive {
    bool operator()(const SliceGen &) const { return true; }
};

// Sets the key's bit in each of the k newest slices, which receive the
// insert at `now`. A slice that is not live holds nothing a query may still
// find: it is emptied first rather than mix old bits into a live slice.
template <class Live>
inline void insert_bits(SliceRing &ring, uint32_t k, const KeyHashes &h, uint64_t now, Live live) {
    for (uint32_t i = 0; i < k; ++i) {
        SliceGen &s = ring[i];
        if (!live(s)) {
            s.reset();
            s.received = 0;
        }
        s.set(bit_for(s, h));
        ring.receive(i, now);
    }
}

// Section 5.3 / Algorithm 1: from slice S-k upwards count consecutive
// matches c; on a miss at i, a run of k can only end below i: jump to
// i - k, keeping the p = c matches just below i.
template <class Live>
inline bool query_bits(const SliceRing &ring, uint32_t k, const KeyHashes &h, Live live) {
    const long S = long(ring.size());
    long i = S - long(k);
    uint32_t p = 0, c = 0;
    while (i >= 0) {
        const SliceGen &s = ring[size_t(i)];
        if (live(s) && s.test(bit_for(s, h))) {
            ++c;
            ++i;
            if (p + c == k) return true;
        } else {
            i -= long(k);
            p = c;
            c = 0;
        }
    }
    return false;
}

// Prefetches the lines a query of these hashes is likeliest to test: the
// first two slices of each window Algorithm 1 starts from when the first
// slice of every window misses or the second does (S - k, S - k + 1,
// S - 2k, S - 2k + 1, ...), at most kPathPrefetch lines. An absent key
// tests about two slices per window, so these are most of its probes; they
// are loaded in parallel instead of one after another.
constexpr unsigned kPathPrefetch = 8;
inline void prefetch_path(const SliceRing &ring, uint32_t k, const KeyHashes &h) {
    const long S = long(ring.size());
    unsigned n = 0;
    for (long start = S - long(k); start >= 0 && n < kPathPrefetch; start -= long(k))
        for (long i = start; i < start + 2 && i < S && n < kPathPrefetch; ++i, ++n) {
            const SliceGen &s = ring[size_t(i)];
            if (s.m != 0) prefetch_read(s.words.data() + (bit_for(s, h) >> 6));
        }
}

// A single key's query: the lines it is likeliest to test are prefetched
// together (prefetch_path) before Algorithm 1 tests the first, as the batch
// calls do for each key of a group.
template <class Live>
inline bool query_single(const SliceRing &ring, uint32_t k, const KeyHashes &h, Live live) {
    prefetch_path(ring, k, h);
    return query_bits(ring, k, h, live);
}

// The batch calls' group: the keys of a group are hashed and their paths
// prefetched before the first of them is answered, so the misses of up to
// kBatchGroup keys overlap.
constexpr size_t kBatchGroup = 8;

// Runs answer(i, hashes) for keys[0 .. n) in order, hashing and
// prefetching each group of kBatchGroup keys first.
template <class Answer>
inline void batch_groups(const SliceRing &ring, uint32_t k, uint32_t seed, const void *const *keys, const size_t *lens,
                         size_t n, Answer &&answer) {
    KeyHashes h[kBatchGroup];
    for (size_t base = 0; base < n; base += kBatchGroup) {
        const size_t g = n - base < kBatchGroup ? n - base : kBatchGroup;
        for (size_t j = 0; j < g; ++j) {
            key_hashes(k, seed, keys[base + j], lens[base + j], &h[j]);
            prefetch_path(ring, k, h[j]);
        }
        for (size_t j = 0; j < g; ++j) answer(base + j, h[j]);
    }
}

// The exact rate for the measured fill of every slice (slices that are not
// live count as empty).
template <class Live>
double slices_fpr(const SliceRing &ring, uint32_t k, Live live) {
    std::vector<double> r(ring.size());
    for (size_t i = 0; i < ring.size(); ++i) r[i] = live(ring[i]) ? measured_fill(ring[i]) : 0.0;
    return false_positive_rate(k, r.data(), r.size());
}

uint64_t slices_total_bits(const SliceRing &ring);
// The bytes the slices hold (their records and words).
size_t slices_memory(const SliceRing &ring);

// ---- the payload of kinds 2 (classic layout) and 3 ------------------------

// What a payload holds besides the ring.
struct SliceShape {
    uint32_t k = 0, l = 0, seed = 0;
    uint64_t span = 0;        // time window (0: count window)
    uint64_t generation = 0;  // count window: g (0: time window)
};

size_t slices_payload_size(const SliceRing &ring);
void write_slices_payload(const SliceShape &shape, const SliceRing &ring, wire::Writer &w);

// Reads and validates a payload of the count window (time_window false,
// kind 2) or of the time window (kind 3) into `shape` and `ring` (built with
// the rotation the shape implies). Refuses (TF_ERR_TOO_LARGE) a filter whose
// slices plus `overhead` bytes exceed the caller's limit before allocating
// them.
tf_status read_slices_payload(bool time_window, wire::Reader &r, const DeserializeLimits &limits, size_t overhead,
                              SliceShape *shape, SliceRing *ring);

// ---- the count window's classic layout --------------------------------------

// The storage policy of CountWindowBloom (count_window.hpp) that keeps every
// slice in its own array: a query reads one cache line per slice it probes.
class ClassicLayout {
   public:
    using Slot = Slice;
    using Ring = SliceRing;
    static constexpr uint32_t kFlags = 0;  // the C API's TF_AGE_BLOOM_* flags
    static constexpr uint32_t kWireFlags = 0;
    static constexpr const char *kName = "age-partitioned Bloom filter";

    ClassicLayout() = default;
    // k + l slices of slice_bits bits as the generations of `ring`.
    // Arguments must be valid (check_params); throws std::bad_alloc.
    ClassicLayout(uint32_t k, uint32_t l, uint64_t slice_bits, uint32_t seed, Ring *ring);
    static tf_status check_params(uint32_t k, uint32_t l, uint64_t slice_bits) {
        return check_classic_params(k, l, slice_bits);
    }
    static uint64_t round_bits(uint64_t slice_bits) { return slice_bits; }
    // (k, l) from choose_kl within the probe budget; slices leave the
    // first k half full.
    static tf_status choose(double error_rate, double probe_budget, uint32_t *k, uint32_t *l, double *fill);
    // Slices for k generations of g inserts at fill 1/2 (at least 64 bits);
    // 0 when they would pass 2^40 bits.
    static uint64_t slice_bits_for(uint32_t k, uint64_t generation, double fill);

    void add(Ring &ring, const void *key, size_t len) {
        KeyHashes h;
        key_hashes(shape_.k, shape_.seed, key, len, &h);
        if (ring.full()) rotate(ring);
        insert_bits(ring, shape_.k, h, 0, AllLive());
        ring.count_insert();
    }
    bool contains(const Ring &ring, const void *key, size_t len) const {
        KeyHashes h;
        key_hashes(shape_.k, shape_.seed, key, len, &h);
        return query_single(ring, shape_.k, h, AllLive());
    }
    // The batch forms: the same answers and filter as the single calls in
    // order, with each group's lines prefetched together. A key repeated
    // in a batch of add_if_absent is present from its second occurrence on,
    // as with single calls: the group's hashes are computed ahead, the bits
    // are set in order.
    void add_batch(Ring &ring, const void *const *keys, const size_t *lens, size_t n) {
        batch_groups(ring, shape_.k, shape_.seed, keys, lens, n, [&](size_t, const KeyHashes &h) {
            if (ring.full()) rotate(ring);
            insert_bits(ring, shape_.k, h, 0, AllLive());
            ring.count_insert();
        });
    }
    void contains_batch(const Ring &ring, const void *const *keys, const size_t *lens, size_t n, int *out) const {
        batch_groups(ring, shape_.k, shape_.seed, keys, lens, n,
                     [&](size_t i, const KeyHashes &h) { out[i] = query_bits(ring, shape_.k, h, AllLive()); });
    }
    void add_if_absent_batch(Ring &ring, const void *const *keys, const size_t *lens, size_t n, int *out) {
        batch_groups(ring, shape_.k, shape_.seed, keys, lens, n, [&](size_t i, const KeyHashes &h) {
            if (query_bits(ring, shape_.k, h, AllLive())) {
                out[i] = 1;
                return;
            }
            out[i] = 0;
            if (ring.full()) rotate(ring);
            insert_bits(ring, shape_.k, h, 0, AllLive());
            ring.count_insert();
        });
    }
    bool add_if_absent(Ring &ring, const void *key, size_t len) {
        KeyHashes h;
        key_hashes(shape_.k, shape_.seed, key, len, &h);
        if (query_single(ring, shape_.k, h, AllLive())) return true;
        if (ring.full()) rotate(ring);
        insert_bits(ring, shape_.k, h, 0, AllLive());
        ring.count_insert();
        return false;
    }
    void clear(Ring &ring);

    uint32_t k() const { return shape_.k; }
    uint32_t l() const { return shape_.l; }
    uint32_t seed() const { return shape_.seed; }
    uint64_t slice_bits(const Ring &ring) const { return ring[0].m; }
    uint64_t total_bits(const Ring &ring) const { return slices_total_bits(ring); }
    double expected_fpr(const Ring &ring) const { return slices_fpr(ring, shape_.k, AllLive()); }
    size_t memory(const Ring &ring) const { return slices_memory(ring); }

    size_t payload_size(const Ring &ring) const { return slices_payload_size(ring); }
    void write_payload(const Ring &ring, wire::Writer &w) const;
    // Reads a kind 2 payload without the blocked flag (memory: its slices
    // plus `overhead` bytes).
    static tf_status read(wire::Reader &r, const DeserializeLimits &limits, size_t overhead, ClassicLayout *out,
                          Ring *ring);

   private:
    // The oldest slice, emptied, becomes the newest.
    void rotate(Ring &ring) {
        SliceGen &s = ring.recycle(0, ring.period());
        s.reset();
        s.hidx = uint32_t(s.serial % shape_.k);
    }

    SliceShape shape_;  // what the payload holds besides the ring
};

}  // namespace bloom
}  // namespace tf

#endif
