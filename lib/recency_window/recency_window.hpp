// The recency window (Holland, Wirth, Zobel, "Recency Queries with Succinct
// Representation", ISAAC 2020): "how many inserts ago was this key last
// seen?" over the last W inserts of a stream, in one of three modes, all
// made of sliding dictionaries (sliding_table.hpp) of (signature, class ID):
//
//   HistoricalMembership  levels 0..L, L = max(0, floor(log2(W eps)) - 1);
//       level l keeps classes (blocks) of 2^l consecutive inserts, at most
//       1/eps + 1 of them, the top level extended by the excess of relation
//       (3); an estimate within (1 +/- eps) of the true recency;
//   ExactCuckoo  one table of timestamps (blocks of one insert): exact;
//   OptimalSM    one table of blocks of D inserts: at most D - 1 too small.
//
// Blocks are aligned to absolute insert positions: block b of level l holds
// the positions [b 2^l, (b + 1) 2^l) (position p is the (p + 1)-th insert),
// so two adjacent blocks 2b, 2b + 1 of level l make block b of level l + 1
// (the merge of section 3.2), and a class ID is the block number on a
// circular field of n = 2^c - 1 values, n >= 2 (live blocks) + 1 (section 4's
// circular field; one value of the c-bit field marks an empty slot). With
// t inserts made, level l accepts block b once every insert of it is at least
// K (2^l - 1) inserts old (K = 1/eps):
//
//   top_l(t) = floor((t - K (2^l - 1)) / 2^l) - 1      the newest such block,
//
// and a level-l entry of block b (l < L) is due for promotion (lapsed) once
// block floor(b / 2) is accepted by level l + 1. The estimate of an entry
// of block b at level l is the recency of the block's newest insert (its
// front), t - (b + 1) 2^l: equation (5)'s local estimate plus the distance
// of the level from the front of the stream, the distance computed from the
// absolute block rather than summed over the levels below. As the front is
// at least K (2^l - 1) old and the block 2^l wide, the error is at most
// eps times the estimate (Lemma 5). An entry whose top-level block's front
// is at least W old is out of the window (removed, or answered "not in
// window"): keys older than W + 2^L - 1 always are, keys younger than W
// never.
//
// Lazy promotion: a lapsed entry met by an insert (a slot it holds is
// wanted) or by the scan (a fixed number of cells per insert per level,
// resuming where it stopped, enough to visit every cell before a lapsed
// class ID could wrap around the field) moves up one level into the block
// floor(b / 2) (the external class-ID assignment of section 4); an entry
// out of the window is dropped. A key has at most one entry per level (an
// insert or promotion meeting the key's entry keeps the newer block), and
// its newest entry is at the lowest level holding it, so a query probes the
// levels from 0 up and answers from the first hit.
#ifndef TF_LIB_RECENCY_WINDOW_RECENCY_WINDOW_HPP
#define TF_LIB_RECENCY_WINDOW_RECENCY_WINDOW_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/hash.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "recency_window/sliding_table.hpp"

namespace tf {
namespace recency {

enum class Mode : uint32_t { Historical = 0, ExactCuckoo = 1, OptimalSM = 2 };

// The creation parameters.
struct Config {
    Mode mode = Mode::Historical;
    uint64_t window = 0;   // W >= 1
    uint64_t inv_eps = 0;  // Historical: 1/eps >= 1
    uint64_t block = 0;    // OptimalSM: D in [1, W]
    double delta = 0.0;    // 0: exact 64-bit signatures; (0, 1): approximate
    uint32_t seed = 0;
    uint64_t max_memory = 0;  // the caller's cap (0: none), kept for info and the blob
    uint32_t flags = 0;       // none defined: 0
};

// One sliding dictionary and its place in the structure.
struct Level {
    SlidingTable table;  // allocated by the constructor, of `shape`
    TableShape shape;
    unsigned shift = 0;     // blocks of 2^shift inserts (OptimalSM: width)
    uint64_t width = 1;     // inserts per block
    int64_t lag = 0;        // K (2^l - 1); single-level modes: 1 - D
    uint64_t field = 0;     // class IDs are block numbers mod field
    uint64_t live = 0;      // most blocks not lapsed at once
    uint64_t capacity = 0;  // most live entries
    uint64_t scan = 0;      // cells scanned per insert
};

struct Stats {
    uint64_t inserts = 0;
    uint64_t promotions = 0;  // entries moved up a level
    uint64_t expired = 0;     // entries dropped out of the window
    uint64_t merged = 0;      // entries met by a newer entry of the key
    uint64_t lost = 0;        // entries dropped for want of room (never seen)
};

class RecencyWindow {
   public:
    static constexpr int64_t kNotInWindow = -1;
    // The envelope flags of its blobs (none defined).
    static constexpr uint32_t kKnownFlags = 0;
    // The largest stream position a blob may carry.
    static constexpr uint64_t kMaxInserts = uint64_t(1) << 62;

    // A null message when c is valid, else what is wrong.
    static const char *invalid(const Config &c);
    // The whole check of a config from the C API or a blob: invalid(),
    // inv_eps in range in every mode, block 0 outside OptimalSM, flags 0,
    // a window above 2^40 TF_ERR_TOO_LARGE; a status with its message.
    static tf_status check(const Config &c);
    // The levels a valid config builds (tables not allocated).
    static std::vector<Level> plan(const Config &c);
    // The signature width of a valid config (64 when exact).
    static unsigned signature_bits(const Config &c);
    // The memory a valid config's structure holds.
    static size_t memory_for(const Config &c);
    // The same, of levels plan() gave.
    static size_t memory_of(const std::vector<Level> &levels);

    // A valid config. Throws std::bad_alloc (also when the allocation
    // failure hook tf::allocation_refused() says so).
    explicit RecencyWindow(const Config &c);

    const Config &config() const { return cfg_; }
    // The signature of a key (its hash, cut to the signature width).
    uint64_t signature(const void *key, size_t len) const { return key_hash(key, len, cfg_.seed).h1 & sig_mask_; }

    // Appends the key to the stream. Never fails (an entry that finds no
    // room is counted in stats().lost).
    void insert(uint64_t sig);
    // The estimated recency (inserts since the key's last insert: 0 for the
    // newest), or kNotInWindow.
    int64_t query(uint64_t sig) const;
    // query() then insert(): the key's previous recency.
    int64_t insert_report(uint64_t sig) {
        const int64_t r = query(sig);
        insert(sig);
        return r;
    }
    void prefetch(uint64_t sig) const {
        for (const Level &l : levels_) l.table.prefetch(sig);
    }
    void clear();

    uint64_t now() const { return t_; }
    size_t levels() const { return levels_.size(); }
    const Level &level(size_t l) const { return levels_[l]; }
    const Stats &stats() const { return stats_; }
    size_t memory() const;
    // Entries held (lapsed ones not yet met included).
    uint64_t items() const;
    // The slack S: keys W + S - 1 or more inserts old are always out of
    // the window (the top level's block width).
    uint64_t slack() const { return expiry_width_; }

    // Wire format kind 6 (docs/wire-format.md; the layout is in
    // recency_window.cpp beside write_payload).
    size_t payload_size() const;
    void write_payload(wire::Writer &w) const;
    // Validates a payload (every field before allocating, every entry
    // after) and makes the structure.
    static tf_status read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                          std::unique_ptr<RecencyWindow> *out);

   private:
    // The same with its levels planned (plan(c), tables not allocated):
    // read() passes the plan it checked the blob against.
    RecencyWindow(const Config &c, std::vector<Level> levels);

    // Per level, what the block arithmetic needs at the current stream
    // position, set by sync() after every change of t_: the hot paths
    // (the scans' stale tests, finds, promotions) then take no division.
    struct Clock {
        int64_t top = 0;          // the newest block level l accepts (top_l(t))
        uint64_t top_cls = 0;     // its class ID: top mod field
        int64_t expired_max = 0;  // blocks b <= this are out of the window
        int64_t lapsed_max = 0;   // blocks b <= this belong to level l + 1
        int64_t stale_from = 0;   // an entry d classes behind top is stale iff d >= this
    };
    // Recomputes every level's Clock from t_ (divisions; creation, clear,
    // deserialization).
    void sync_all();
    // After t_++: updates the Clocks (one division per insert at most).
    void sync_next();
    void sync_thresholds();
    int64_t top(size_t l) const { return clock_[l].top; }
    // How many classes the class ID `cls` is behind level l's top.
    int64_t behind(size_t l, uint64_t cls) const {
        int64_t d = int64_t(clock_[l].top_cls) - int64_t(cls);
        if (d < 0) d += int64_t(levels_[l].field);
        return d;
    }
    int64_t resolve(size_t l, uint64_t cls) const { return clock_[l].top - behind(l, cls); }
    bool stale(size_t l, uint64_t cls) const { return behind(l, cls) >= clock_[l].stale_from; }
    bool expired(size_t l, int64_t b) const { return b <= clock_[l].expired_max; }
    bool lapsed(size_t l, int64_t b) const { return b <= clock_[l].lapsed_max; }
    uint64_t class_of(size_t l, int64_t b) const;
    // Stores (sig, block b of level l) or moves it on.
    void put(size_t l, uint64_t sig, int64_t b);
    // An entry leaving level l (block b there).
    void leave(size_t l, uint64_t sig, int64_t b);

    Config cfg_;
    std::vector<Level> levels_;
    uint64_t sig_mask_ = ~uint64_t(0);
    uint64_t t_ = 0;                      // inserts made
    uint64_t expiry_width_ = 1;           // inserts per expiry block
    std::vector<Clock> clock_;            // one per level
    std::vector<unsigned> expiry_shift_;  // per level: log2(expiry width / its width)
    Stats stats_;
    std::vector<Entry> scratch_;  // a scan's stale entries
};

}  // namespace recency
}  // namespace tf

#endif
