// The rotating cuckoo filter (the Time-Rotated Cache Filter README, with its
// defects fixed; docs/rotating-cuckoo.md): cuckoo tables of 64-bit
// fingerprints (packed_table.hpp) as the generations of a GenerationRing
// rotating by fill. Inserts go to the newest table; a new one starts when it
// reaches its occupancy or a kick chain fails (the chain is undone and the
// key goes to the new table), sized from the insertion rate within the
// memory cap; the oldest tables go when the cap or the table limit would be
// exceeded (their keys counted as forgotten for memory) and when their
// newest entry is older than the ttl (forgotten for age).
#ifndef TF_LIB_CUCKOO_ROTATING_CUCKOO_HPP
#define TF_LIB_CUCKOO_ROTATING_CUCKOO_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/generation_ring.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "cuckoo/packed_table.hpp"
#include "temporalfilters/rotating_cuckoo.h"

namespace tf {
namespace cuckoo {

// The fingerprint table of one generation.
struct TableSlot {
    CuckooTable<64> table;
};
using CuckooRing = GenerationRing<TableSlot>;

// The options, defaults resolved and checked.
struct Config {
    uint64_t table_slots = 0;
    uint64_t max_memory = 0;
    uint64_t ttl = 0;
    double max_occupancy = 0.0;
    uint32_t slots_per_bucket = 0;
    uint32_t max_kicks = 0;
    uint32_t max_tables = 0;
    uint32_t seed = 0;
    uint32_t flags = 0;
    unsigned ways() const { return (flags & TF_ROTATING_CUCKOO_THREE_WAY) ? 3 : 2; }
};

// Counters kept beside the ring's (stats).
struct LossCounters {
    uint64_t removes = 0;
    uint64_t forgotten_memory = 0;
    uint64_t forgotten_age = 0;
    uint64_t kick_rotations = 0;
    uint64_t fill_rotations = 0;
};

class RotatingCuckoo {
   public:
    static constexpr uint32_t kKnownFlags = TF_ROTATING_CUCKOO_THREE_WAY;
    // Tables per ttl the rate-based sizing aims at.
    static constexpr unsigned kTablesPerTtl = 4;
    // A table is at most this fraction of the memory cap (so a rotation at
    // the cap forgets about a quarter of what the filter holds).
    static constexpr unsigned kCapShare = 4;

    // The default occupancy of a layout (measured: docs/rotating-cuckoo.md).
    static double default_occupancy(uint32_t slots_per_bucket, unsigned ways);
    // Validates the options and resolves the defaults. `status` is the
    // status of a bad value (TF_ERR_INVALID_ARGUMENT from the caller,
    // TF_ERR_CORRUPT from a blob; TF_ERR_TOO_LARGE stays).
    static tf_status check(const tf_rotating_cuckoo_options &o, Config *out);
    // The memory of everything but the tables.
    static size_t fixed_memory(const Config &c);
    static size_t table_memory(uint64_t slots) { return CuckooTable<64>::bytes_for(slots); }

    // A valid config (check()). Throws std::bad_alloc.
    explicit RotatingCuckoo(const Config &c);

    // The key's hash, for the calls below.
    Hash128 hash(const void *key, size_t len) const { return key_hash(key, len, cfg_.seed); }
    // now >= 1, clamped here. The mutating calls may fail with
    // TF_ERR_OUT_OF_MEMORY when a rotation cannot allocate its table; the
    // filter is then exactly as before (the new table is allocated before
    // any table is dropped, for age or for memory).
    tf_status add(Hash128 h, uint64_t now);
    // Inline, with the ring of one table (no rotation yet, or a cap of one
    // table) answered by its probe alone: no walk over the ring. Against the
    // walk, at 2^24 slots (docs/rotating-cuckoo.md, "Benchmark").
    bool contains(Hash128 h, uint64_t now) const {
        if (ring_.size() == 1) {
            const Gen &g = ring_.newest();
            const Key k = split(h);
            return !ring_.expired(g, ring_.clamp(now)) && g.table.contains(g.table.bucket_of(k.bucket_hash), k.fp);
        }
        return contains_ring(h, now);
    }
    bool remove(Hash128 h, uint64_t now);
    tf_status add_if_absent(Hash128 h, uint64_t now, bool *was_present);
    static constexpr size_t kBatchGroup = 16;
    void contains_batch(const void *const *keys, const size_t *lens, size_t count, uint64_t now, int *out) const;
    // On failure, *done receives the keys processed.
    tf_status add_if_absent_batch(const void *const *keys, const size_t *lens, size_t count, uint64_t now, int *out,
                                  size_t *done);
    tf_status clear();

    const Config &config() const { return cfg_; }
    const CuckooRing &ring() const { return ring_; }
    const LossCounters &losses() const { return loss_; }
    bool expired(size_t age, uint64_t now) const { return ring_.expired(ring_[age], ring_.clamp(now)); }
    size_t memory() const;

    // Wire payload (kind 5; the envelope's flags are the creation flags).
    uint32_t wire_flags() const { return cfg_.flags; }
    size_t payload_size() const;
    void write_payload(wire::Writer &w) const;
    static tf_status read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                          std::unique_ptr<RotatingCuckoo> *out);

   private:
    using Gen = CuckooRing::Gen;
    RotatingCuckoo() = default;
    // contains() over a ring of several tables, the newest first.
    bool contains_ring(Hash128 h, uint64_t now) const;
    struct Key {
        uint64_t bucket_hash, fp;
    };
    static Key split(Hash128 h) { return Key{h.h1, CuckooTable<64>::fingerprint(h.h2)}; }
    // What a modifying call at `now` drops, decided before anything
    // changes: `expired` oldest tables older than the ttl (never the
    // newest while it is the only one), and whether the newest, the only
    // table left, is older than the ttl and is emptied (`recycle`).
    struct Plan {
        uint64_t now;  // clamped
        size_t expired;
        bool recycle;
    };
    Plan plan(uint64_t now) const;
    // Starts the clock at p.now and makes the drops of p. Never allocates,
    // never fails: a modifying call commits only once nothing can fail
    // any more, so that a failed call leaves the filter as it was.
    void commit(const Plan &p);
    // Stores a key absent from the newest table (rotating when needed) and
    // commits p; on failure nothing changed.
    tf_status insert(Key k, const Plan &p);
    enum class Cause { Fill, Kick };
    // A new empty table of `slots` slots (the allocation-failure hook).
    static tf_status new_table(uint64_t slots, const Config &c, TableSlot *out);
    // Makes `slot` the newest table, dropping the oldest while the cap or
    // the table limit would be exceeded. Never fails.
    void rotate(TableSlot &&slot, uint64_t now, Cause cause);
    uint64_t next_table_slots(uint64_t now) const;
    uint64_t table_cap_slots() const;
    uint64_t occupancy_limit(const CuckooTable<64> &t) const;
    size_t tables_memory() const;

    Config cfg_;
    CuckooRing ring_;  // age 0: the newest table
    LossCounters loss_;
    std::vector<uint64_t> path_;  // a kick chain's slots (max_kicks)
};

}  // namespace cuckoo
}  // namespace tf

#endif
