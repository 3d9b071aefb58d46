// RecencySketch (the structure the RecencySketch README describes, with its
// defects fixed; docs/recency-sketch.md): a count-min-shaped table of uint64
// timestamps; update stores the max in each of a key's cells, query returns
// the min.
#ifndef TF_LIB_RECENCY_SKETCH_HPP
#define TF_LIB_RECENCY_SKETCH_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/hash.hpp"
#include "common/memory.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "temporalfilters/recency_sketch.h"

namespace tf {

class RecencySketch {
   public:
    static constexpr uint32_t kConcurrent = TF_RECENCY_SKETCH_CONCURRENT;
    static constexpr uint32_t kBlocked = TF_RECENCY_SKETCH_BLOCKED;
    static constexpr uint32_t kKnownFlags = kConcurrent | kBlocked;
    static constexpr uint32_t kMaxDepth = TF_RECENCY_SKETCH_MAX_DEPTH;
    static constexpr uint32_t kMaxBlockedDepth = TF_RECENCY_SKETCH_MAX_BLOCKED_DEPTH;
    static constexpr unsigned kLineCells = kCacheLine / sizeof(uint64_t);  // 8

    // Validates a shape; on success gives the number of cells to allocate.
    // Failures carry TF_ERR_INVALID_ARGUMENT or TF_ERR_TOO_LARGE and a message.
    static tf_status check_shape(uint64_t width, uint32_t depth, uint32_t flags, size_t *cells);

    // Sizing: the smallest (width, depth) meeting the target (see header).
    static tf_status dimensions(uint64_t expected_keys, double p, uint32_t flags, uint64_t *width, uint32_t *depth);
    // The model's too-new probability for n keys updated after the horizon.
    static double model_probability(uint64_t n, uint64_t width, uint32_t depth, uint32_t flags);

    // Allocates a zeroed table. The shape must have passed check_shape().
    // Throws std::bad_alloc.
    RecencySketch(uint64_t width, uint32_t depth, uint32_t seed, uint32_t flags, size_t cells);

    void update(const void *key, size_t len, uint64_t ts);
    uint64_t query(const void *key, size_t len) const;
    // Batches: the same results as one call per key in order; the cells of
    // each group of kBatchGroup keys are located and prefetched first so
    // that their cache misses overlap. Arguments are checked by the caller.
    static constexpr size_t kBatchGroup = 16;
    void update_batch(const void *const *keys, const size_t *lens, size_t count, const uint64_t *times);
    void query_batch(const void *const *keys, const size_t *lens, size_t count, uint64_t *out) const;
    // Returns true when granted; *next receives the next allowed time.
    bool pace(const void *key, size_t len, uint64_t now, uint64_t interval, uint64_t *next);

    bool compatible(const RecencySketch &o) const {
        return width_ == o.width_ && depth_ == o.depth_ && seed_ == o.seed_ &&
               (flags_ & kBlocked) == (o.flags_ & kBlocked);
    }
    void merge_from(const RecencySketch &src);
    void clear();
    double error_estimate(uint64_t since) const;
    size_t memory() const { return sizeof(*this) + cells_.bytes(); }
    // memory() of a sketch of `cells` cells, before creating it.
    static size_t memory_for(size_t cells) { return sizeof(RecencySketch) + AlignedArray<uint64_t>::bytes_for(cells); }

    uint64_t width() const { return width_; }
    uint32_t depth() const { return depth_; }
    uint32_t seed() const { return seed_; }
    uint32_t flags() const { return flags_; }
    size_t cells() const { return cells_.size(); }
    bool concurrent() const { return (flags_ & kConcurrent) != 0; }
    bool blocked() const { return (flags_ & kBlocked) != 0; }

    // Wire format payload (kind 1; docs/wire-format.md), little-endian; the
    // envelope's flags are the creation flags:
    //
    //   offset  size    field
    //   0       8       width (u64), >= 1
    //   8       4       depth (u32), 1..32 (1..8 blocked)
    //   12      4       seed (u32)
    //   16      8       cell count c (u64): width * depth, rounded up to a
    //                   multiple of 8 in the blocked layout
    //   24      8 * c   cells (u64 each): row r's cells at [r * width,
    //                   (r + 1) * width) (standard); line b's 8 cells at
    //                   [8b, 8b + 8) (blocked)
    size_t payload_size() const { return 24 + cells_.size() * 8; }
    void write_payload(wire::Writer &w) const;
    // Validates the payload, checks the memory it needs against `limits`,
    // then allocates.
    static tf_status read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                          std::unique_ptr<RecencySketch> *out);

   private:
    // Fills ptrs[0..depth) with the key's cells.
    void locate(const void *key, size_t len, uint64_t **ptrs) const;
    template <class Op>
    void for_each_located(const void *const *keys, const size_t *lens, size_t count, Op &&op) const;
    template <bool Atomic>
    bool pace_impl(uint64_t **ptrs, uint64_t now, uint64_t interval, uint64_t *next);

    uint64_t width_;
    uint32_t depth_;
    uint32_t seed_;
    uint32_t flags_;
    uint64_t nblocks_;                 // blocked layout: number of 8-cell lines
    uint32_t nsubsets_;                // blocked layout: C(8, depth)
    std::array<uint8_t, 70> subsets_;  // blocked layout: the depth-subsets of a line, as bit masks
    AlignedArray<uint64_t> cells_;
};

}  // namespace tf

#endif
