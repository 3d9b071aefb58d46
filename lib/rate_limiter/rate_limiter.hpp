// The rate limiter (the Rate Limiter README's algorithm with its defects
// fixed; docs/rate-limiter.md): per-key sliding windows in a sharded hash
// table, a global window, per-key overrides, idle reclamation, a bound on
// the number of keys. The decisions themselves are in window.hpp.
#ifndef TF_LIB_RATE_LIMITER_RATE_LIMITER_HPP
#define TF_LIB_RATE_LIMITER_RATE_LIMITER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/coverage.hpp"
#include "common/hash.hpp"
#include "common/memory.hpp"
#include "common/status.hpp"
#include "common/versioned.hpp"
#include "common/wire.hpp"
#include "rate_limiter/window.hpp"
#include "temporalfilters/rate_limiter.h"

namespace tf {
namespace rate {

constexpr uint32_t kShards = 64;
constexpr size_t kInlineKey = 16;

// The limiter's small blocks (out-of-line keys, grant rings) come from
// here: nullptr when memory runs out (the test hook asked first). Table
// slots are ZeroedBlocks (lib/common/memory.hpp), which ask the same hook.
void *allocate(size_t bytes) noexcept;

// Exact mode: the times of the grants in a window, oldest first (slot
// (start + i) % cap), in one heap block, this header followed by `cap`
// slots: u32 offsets from `base` (narrow) when the limiter's window is at
// most 2^31 time units, else the u64 times (wide; ExactTimes); a ring read
// from a blob is wide too when its grants do not fit 32 bits from its
// oldest (wide_for). The base starts at 0 and moves to the oldest grant
// held when a new time does not fit 32 bits above it (ExactView::set):
// with a window of at most 2^31 that happens at most once per 2^31 time
// units, after every grant held at the previous move has left, so each
// grant is rewritten at most once (a window just under 2^32 would move it
// on nearly every grant of a full ring). It grows
// on demand (doubling, capped at its limit) when a grant needs room, so
// its memory follows the grants the window holds, never the limit alone:
// at most twice the most it has held (or kMinCapacity), never more than
// the largest limit it had; a ring read from a blob is exactly as large as
// the grants the blob holds. A key's ring carries the key's limit, the
// global window's the global limit. It shrinks by being freed: a key reset
// or reclaimed, or the global limit set again.
struct alignas(8) GrantRing {
    uint64_t base;  // narrow: the time the offsets count from
    uint32_t cap, start, count;
    uint32_t limit : 31;  // at most 2^24 (exact mode)
    uint32_t wide : 1;

    static constexpr uint32_t kMinCapacity = 4;
    static size_t slot_bytes(bool wide) { return wide ? 8 : 4; }
    static size_t bytes(uint64_t cap, bool wide) { return sizeof(GrantRing) + slot_bytes(wide) * size_t(cap); }
    // Whether a ring of a limiter of this window holding grants from
    // `first` to `last` (a blob's) stores u64 times: when the window is
    // above 2^31, or the grants do not fit 32 bits from one base.
    static constexpr uint64_t kNarrowWindow = uint64_t(1) << 31;
    static bool wide_for(uint64_t window, uint64_t first, uint64_t last) {
        return window > kNarrowWindow || last < first || last - first > UINT32_MAX;
    }
    size_t size() const { return bytes(cap, wide); }
    void *slots() { return this + 1; }
    const void *slots() const { return this + 1; }
    // the i-th oldest grant time
    uint64_t at(uint32_t i) const { return read().at(i); }
    ExactTimes read() const { return ExactTimes{slots(), base, cap, start, count, wide != 0}; }
    ExactView view(uint64_t *latest) { return ExactView{slots(), &base, cap, &start, &count, latest, wide != 0}; }
    // A new empty ring of `cap` slots; throws std::bad_alloc.
    static GrantRing *make(uint32_t cap, uint32_t limit, bool wide);
    // The capacity a ring of `cap` slots grows to when it must hold `need`
    // grants (cap < need <= limit): doubled until it holds them, at least
    // kMinCapacity, at most the limit.
    static uint32_t grown_capacity(uint32_t cap, uint64_t need, uint32_t limit);
    // A copy of the ring (the same grants, oldest at slot 0) with room for
    // `need` grants (cap < need <= limit); nullptr when memory runs out
    // (the ring is unchanged). The caller frees the old ring.
    GrantRing *grown(uint64_t need) const noexcept;
};

static_assert(sizeof(GrantRing) == 24, "the ring's header is what the memory figure counts: 24 bytes");

struct FreeRing {
    void operator()(GrantRing *g) const { std::free(g); }
};

// One shard's open-addressing table: linear probing from
// reduce(hash, capacity) (any capacity, so that it can grow by 1/8 at
// a time from kMinCapacity and stay between 76% and 85% full),
// backward-shift deletion. It also shrinks (shrink(), called by the
// limiter after the calls that remove records): a table of more than
// kMinCapacity slots left less than 68% full is rebuilt 3/4 full (at
// least kMinCapacity slots), so that it holds at most 1/0.68 = 1.47 slots
// a record (or kMinCapacity) whatever its past. The thresholds keep it
// from thrashing: a table must lose about 1/10 of its records after a
// growth, or 1/11 after a shrink, before it shrinks, and gain about 1/8
// after a shrink before it grows. A rebuild moves every record, so the
// rebuilds move at most about 11 records per record added or removed
// (growth alone, as before tables shrank: about 8).
// Records are packed, `stride` bytes, no padding (fields are read with
// memcpy):
//   u64 latest | u8 code | 16 bytes key | state
// code: 0 = empty slot; low 5 bits = key length + 1 (1..17) for a key
// stored inline, or kOutOfLine (the 16 bytes hold a heap pointer and the
// length); bit kOverride = the key has its own limit.
// state: bucketed: u16 total, u16 counts[nb] (47 bytes for 10 buckets);
// exact: a pointer to the key's ring of grant times (33 bytes).
class Table {
   public:
    static constexpr uint8_t kOutOfLine = 18;
    static constexpr uint8_t kLenMask = 0x1F;
    static constexpr uint8_t kOverride = 0x80;
    static constexpr uint8_t kDoomed = 0x40;  // marked by sweep() for removal; never left set
    static constexpr size_t kStateOffset = 25;
    static constexpr uint64_t kMaxLoadNum = 17, kMaxLoadDen = 20;  // 85%
    static constexpr uint64_t kMinLoadNum = 17, kMinLoadDen = 25;  // 68%: below it, shrink
    static constexpr size_t kMinCapacity = 16;                     // the first table; none shrinks below it

    struct Rec {
        uint8_t *p;
        uint64_t latest() const {
            uint64_t v;
            std::memcpy(&v, p, 8);
            return v;
        }
        void set_latest(uint64_t v) const { std::memcpy(p, &v, 8); }
        uint8_t code() const { return p[8]; }
        bool empty() const { return p[8] == 0; }
        bool overridden() const { return (p[8] & kOverride) != 0; }
        void set_overridden(bool on) const { p[8] = uint8_t(on ? p[8] | kOverride : p[8] & ~kOverride); }
        uint8_t *state() const { return p + kStateOffset; }
        const uint8_t *key() const;
        size_t key_len() const;
    };

    Table() = default;
    ~Table();
    Table(const Table &) = delete;
    Table &operator=(const Table &) = delete;

    // An empty table made `cap` slots large at once (deserialize, which
    // knows how many records each table gets: the capacity growth would
    // reach, Table::capacity_for). Throws std::bad_alloc with nothing
    // changed.
    void reserve(size_t cap);
    // Records of `stride` bytes; keys hashed with `seed` (key_hash).
    void init(size_t stride, bool exact, uint32_t seed) {
        stride_ = stride;
        exact_ = exact;
        seed_ = seed;
    }
    size_t size() const { return count_; }
    // The bytes of the records' keys, added up (inline and out of line).
    size_t key_bytes() const { return key_bytes_; }
    // The memory the table holds: its slots, out-of-line keys and exact
    // rings. Readable without the shard's lock: a relaxed atomic that
    // each change (under that lock) sets, so that a reader without the
    // lock sees the figure of some moment of this table.
    size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    // The capacity of a table that grew to hold `count` records (the same
    // steps as insert), before creating it.
    static size_t capacity_for(size_t count);
    // The memory a table of `cap` slots of `stride` bytes holds (its
    // block's footprint; none for no slots).
    static size_t slot_bytes(size_t cap, size_t stride) {
        return cap == 0 ? 0 : ZeroedBlock::footprint_for(cap * stride);
    }

    // What inserting one record allocates, made by prepare_insert before
    // anything changes; what the insert does not use is freed with it.
    struct Room {
        ZeroedBlock slots;       // the grown table, when the table is full for one more record
        size_t cap = 0;          // its capacity
        uint8_t *key = nullptr;  // the copy of a key stored out of line
        Room() = default;
        ~Room() {
            if (key) std::free(key);
        }
        Room(const Room &) = delete;
        Room &operator=(const Room &) = delete;
    };

    // The record of `key` (hash h), or {nullptr}.
    Rec find(const void *key, size_t len, const Hash128 &h) const;
    // Makes in *room what inserting `key` needs while the table holds its
    // records (fewer records later need no more). Throws std::bad_alloc
    // with nothing changed.
    void prepare_insert(const void *key, size_t len, Room *room) const;
    // Inserts a zeroed record for a key that is not there and returns it,
    // taking what it needs from `room` (prepare_insert, no record added
    // since); cannot fail.
    Rec insert(const void *key, size_t len, const Hash128 &h, Room *room) noexcept;
    // Both: throws std::bad_alloc with nothing changed.
    Rec insert(const void *key, size_t len, const Hash128 &h) {
        Room room;
        prepare_insert(key, len, &room);
        return insert(key, len, h, &room);
    }
    // Removes the record (frees its out-of-line key and exact ring).
    void erase(Rec r);
    // When the table is sparse (more than kMinCapacity slots, less than
    // kMinLoad full), moves its records into a table 3/4 full (at least
    // kMinCapacity slots) and returns true. The new table is allocated
    // first: when that fails, the table stays as it was (valid, only
    // bigger) and it returns false. Invalidates every Rec; not between
    // prepare_insert and insert (a shrunk table still has room for one
    // more record, but the Room was made for the old one).
    bool shrink() noexcept;
    // Whether shrink() would rebuild the table.
    bool sparse() const { return cap_ > kMinCapacity && count_ * kMinLoadDen < cap_ * kMinLoadNum; }
    // The capacity shrink() gives a table of `count` records.
    static size_t shrunk_capacity(size_t count);
    // Starts loading the lines where `h`'s record would be, without the
    // shard's lock (a hint: it reads the table's address through relaxed
    // atomics and a prefetch never faults).
    void prefetch(const Hash128 &h) const {
        const uint8_t *s = hint_slots_.load(std::memory_order_relaxed);
        const size_t cap = hint_cap_.load(std::memory_order_relaxed);
        if (cap == 0) return;
        const uint8_t *p = s + size_t(reduce(h.h2, cap)) * stride_;
        prefetch_write(p);
        prefetch_write(p + 64);
    }
    // Accounts for memory a record owns outside the table (exact rings).
    void add_extra(size_t add, size_t sub) { add_bytes(add, sub); }
    // Removes the records `idle(rec)` accepts among the next `slots` slots
    // after the sweep cursor (at most the capacity: each slot once), and
    // moves the cursor past them. Returns how many: exactly what count()
    // returns for the same arguments (peek answers as acquire decides).
    template <class F>
    size_t sweep(size_t slots, F &&idle);
    // How many of the next `slots` slots hold a record `idle` accepts.
    template <class F>
    size_t count(size_t slots, F &&idle) const;
    template <class F>
    void for_each(F &&f) const {
        for (size_t i = 0; i < cap_; ++i)
            if (!at(i).empty()) f(at(i));
    }

   private:
    uint8_t *slots() const { return static_cast<uint8_t *>(block_.data()); }
    TF_NO_FUZZ_COVERAGE Rec at(size_t i) const { return Rec{slots() + i * stride_}; }
    size_t home(const Hash128 &h) const { return size_t(reduce(h.h2, cap_)); }
    size_t next(size_t i) const { return i + 1 == cap_ ? 0 : i + 1; }
    // Whether a table of `cap` slots needs to grow before its `count`-th record.
    static bool full_for(size_t count, size_t cap) { return count * kMaxLoadDen > cap * kMaxLoadNum; }
    static size_t next_capacity(size_t cap);
    // Moves the records into `block` (`ncap` zeroed slots, from
    // prepare_insert or shrink, with room for them all), which becomes the
    // table's; the sweep goes on after slot `ncursor`.
    void rebuild_into(ZeroedBlock &block, size_t ncap, size_t ncursor) noexcept;
    void release(Rec r);  // frees what a record owns outside the table
    // bytes() += add - sub (the writer holds the shard's lock: no
    // read-modify-write needed)
    void add_bytes(size_t add, size_t sub) {
        bytes_.store(bytes_.load(std::memory_order_relaxed) + add - sub, std::memory_order_relaxed);
    }

    // The slots: a ZeroedBlock (lib/common/memory.hpp), so that a table of
    // 4 MiB or more is mapped on huge pages like the other structures'.
    ZeroedBlock block_;
    size_t cap_ = 0, count_ = 0, stride_ = 0, cursor_ = 0;
    size_t key_bytes_ = 0;                              // key_bytes()
    std::atomic<const uint8_t *> hint_slots_{nullptr};  // slots() and cap_ for prefetch()
    std::atomic<size_t> hint_cap_{0};
    std::atomic<size_t> bytes_{0};  // bytes()
    bool exact_ = false;
    uint32_t seed_ = 0;
};

// A shard's lock: its critical sections are short (a lookup and a
// decision), so a test-and-test-and-set lock whose unlock is a plain store
// costs less than a mutex; a waiter that spins long yields its CPU (the
// holder may be growing the table, or descheduled).
class ShardLock {
   public:
    // Not instrumented for fuzzing (common/coverage.hpp): its spin loop
    // gives a single-threaded fuzz program nothing to steer by.
    TF_NO_FUZZ_COVERAGE void lock() {
        for (unsigned spins = 0; held_.exchange(true, std::memory_order_acquire); ++spins) {
            while (held_.load(std::memory_order_relaxed)) {
                if (++spins < 64)
                    cpu_relax();
                else
                    std::this_thread::yield();
            }
        }
    }
    bool try_lock() {
        return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
    }
    void unlock() { held_.store(false, std::memory_order_release); }

   private:
    static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
        __asm__ __volatile__("yield");
#endif
    }
    std::atomic<bool> held_{false};
};

struct alignas(64) Shard {
    mutable ShardLock mu;  // also taken by the read-only calls (peek, stats, serialize)
    Table table;
    // A key absent from the table may still have had grants up to this
    // time minus a window: records reclaimed here were last used at most
    // horizon - window. A new key asking before the horizon is refused
    // until then (its past cannot be known).
    uint64_t horizon = 0;
    // Acquires decided here; every 16th sweeps another shard (a per-shard
    // count, so that the same calls reclaim the same keys).
    uint64_t ops = 0;
};

class RateLimiter {
   public:
    // The creation flags.
    static constexpr uint32_t kCreationFlags = TF_RATE_LIMITER_EXACT | TF_RATE_LIMITER_FULL_ALLOW;
    // Envelope flag of kind 4 (not a creation flag): the payload carries a
    // u32 seed after its header. Set exactly when the seed is not 0, so that
    // a limiter of seed 0 writes the blobs it wrote before seeds existed.
    static constexpr uint32_t kSeedWireFlag = 0x4;
    // The envelope flags a blob of kind 4 may set (wire::deserialize).
    static constexpr uint32_t kKnownFlags = kCreationFlags | kSeedWireFlag;
    static tf_status check(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags);
    RateLimiter(uint64_t limit, uint64_t window, uint64_t width, uint32_t seed, uint32_t flags);
    ~RateLimiter() = default;

    tf_status set_global_limit(uint64_t limit);
    tf_status set_key_limit(const void *key, size_t len, uint64_t limit);
    void set_max_keys(uint64_t n) { max_keys_.store(n); }
    // Takes n permits for the key when they are allowed. Throws
    // std::bad_alloc with nothing changed.
    void acquire(const void *key, size_t len, uint64_t now, uint64_t n, Decision *out) {
        acquire_hashed(key, len, key_hash(key, len, seed_), now, n, out);
    }
    // The decision acquire would make, changing nothing.
    void peek(const void *key, size_t len, uint64_t now, uint64_t n, Decision *out) const {
        peek_hashed(key, len, key_hash(key, len, seed_), now, n, out);
    }
    // acquire of each key in turn (times[i], the same n), the records of
    // the next keys prefetched while one is decided. Returns how many were
    // decided: `count`, or the index of a request that ran out of memory
    // (it changed nothing; the decisions before it stand, in out).
    size_t acquire_batch(const void *const *keys, const size_t *lens, size_t count, const uint64_t *times, uint64_t n,
                         Decision *out);
    void refund(const void *key, size_t len, uint64_t now, uint64_t n);
    void reset(const void *key, size_t len);
    // Every field of the C API's stats and info structs (`size` aside).
    void stats(tf_rate_limiter_stats *out) const;
    void info(tf_rate_limiter_info *out) const;
    // The bytes held: the tables, out-of-line keys, exact rings, the global
    // window and the overrides (the stats' `memory`).
    size_t memory() const;

    // Wire payload (kind 4; the layout is in rate_limiter.cpp); the caller
    // holds every lock (lock_all).
    void lock_all() const;
    void unlock_all() const;
    // Every lock of the limiter, held while it lives: one consistent moment.
    class AllLocked {
       public:
        explicit AllLocked(const RateLimiter &rl) : rl_(rl) { rl_.lock_all(); }
        ~AllLocked() { rl_.unlock_all(); }
        AllLocked(const AllLocked &) = delete;
        AllLocked &operator=(const AllLocked &) = delete;

       private:
        const RateLimiter &rl_;
    };
    // The payload's size; the records, when `recs` is given, gathered
    // (unordered) for write_payload in the same pass.
    size_t payload_size(std::vector<Table::Rec> *recs = nullptr) const;
    // Writes the payload of the records payload_size gathered (sorted here).
    void write_payload(wire::Writer &w, std::vector<Table::Rec> &recs) const;
    // Validates the whole payload and checks the memory the limiter will
    // hold against `limits`, then builds it.
    static tf_status read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                          std::unique_ptr<RateLimiter> *out);

    uint32_t flags() const { return flags_; }
    uint32_t seed() const { return seed_; }
    // The shard a key falls into under `seed` (for tests that aim keys at
    // shards).
    static size_t shard_of_key(const void *key, size_t len, uint32_t seed) {
        return shard_index(key_hash(key, len, seed));
    }
    // The envelope flags of its blob: the creation flags, and
    // kSeedWireFlag when the seed is not 0.
    uint32_t wire_flags() const { return flags_ | (seed_ != 0 ? kSeedWireFlag : 0); }
    bool exact() const { return (flags_ & TF_RATE_LIMITER_EXACT) != 0; }

   private:
    // The steps of one decision (rate_limiter.cpp) and what they found out
    // so far.
    struct Request {
        Table::Rec rec;  // the key's record (null: none)
        bool fresh;      // the key had no record before this request
        bool untracked;  // admitted by a full FULL_ALLOW table without a record
        uint64_t t;      // the key's clock for this decision
        Decision &d;     // the decision, written into the caller's result as it is made
    };
    // What a granted new key's record needs (its exact ring, its room in
    // the table), allocated before anything changes (prepare_new); what
    // is not used is freed with it.
    struct NewKey {
        std::unique_ptr<GrantRing, FreeRing> ring;
        Table::Room room;
        uint32_t override_limit = 0;  // its override, 0: none
    };
    // The global window's part of an acquire: its lock, when taken before
    // the key's changes (exact mode, reserve_global), and the ring grown
    // to hold the grant.
    struct GlobalHold {
        std::unique_lock<std::mutex> lock;
        bool looked = false;  // reserve_global looked: no lock held means no global limit
        std::unique_ptr<GrantRing, FreeRing> grown;
    };
    void acquire_hashed(const void *key, size_t len, const Hash128 &h, uint64_t now, uint64_t n, Decision *out);
    void peek_hashed(const void *key, size_t len, const Hash128 &h, uint64_t now, uint64_t n, Decision *out) const;
    // The steps on every acquire's path are inlined into acquire_hashed:
    // the split is for the reader and costs the hot path nothing (admit
    // and insert_new run for new keys only).
    __attribute__((always_inline)) inline void acquire_tracked(Request &q, uint64_t now, uint64_t n);
    __attribute__((always_inline)) inline void acquire_new(const Shard &sh, const void *key, size_t len, uint64_t now,
                                                           uint64_t n, Request &q, NewKey *fresh);
    // The allocations of a granted request, before any change: the
    // tracked key's exact ring grown, or what a new key's record needs.
    // Throws std::bad_alloc with nothing changed.
    __attribute__((always_inline)) inline void reserve_key_state(Shard &sh, Request &q, const void *key, size_t len,
                                                                 uint64_t n, NewKey *fresh);
    void prepare_new(const Shard &sh, const void *key, size_t len, uint64_t n, NewKey *fresh) const;
    // A granted new key's place: admitted into the table (idle keys
    // reclaimed for it when full) and inserted, or not tracked; cannot
    // fail (everything it needs is in *fresh).
    void place_new(Shard &sh, const void *key, size_t len, const Hash128 &h, uint64_t now, Request &q, NewKey *fresh);
    // A key without a record: the decision on its empty window, the shard's
    // horizon considered; its override (0: none) in *override_limit.
    Decision decide_new(const Shard &sh, const void *key, size_t len, uint64_t now, uint64_t n,
                        uint32_t *override_limit) const;
    enum class Admission { kTracked, kUntracked, kDenied };
    Admission admit(Shard &sh, uint64_t now);
    // What admit would answer, changing nothing (peek).
    Admission admission(const Shard &sh, uint64_t now) const;
    // A new key without room: admitted untracked (FULL_ALLOW) or denied.
    Admission no_room() const {
        return (flags_ & TF_RATE_LIMITER_FULL_ALLOW) ? Admission::kUntracked : Admission::kDenied;
    }
    // The decision of a new key the table cannot track.
    static void not_tracked(Admission a, Request &q);
    Table::Rec insert_new(Shard &sh, const void *key, size_t len, const Hash128 &h, uint64_t now,
                          NewKey *fresh) noexcept;
    // Exact mode, a request granted so far, a global limit set: takes the
    // global window's lock and grows a copy of its ring to hold the grant
    // (throws std::bad_alloc with nothing changed); reserve_global is the
    // test on every acquire's path, grow_global the rest.
    __attribute__((always_inline)) inline void reserve_global(const Request &q, uint64_t n, GlobalHold *gh);
    void grow_global(const Request &q, uint64_t n, GlobalHold *gh);
    // The global window's part of an acquire; cannot fail (an exact ring
    // that must grow was grown by reserve_global).
    __attribute__((always_inline)) inline void acquire_global(Request &q, uint64_t n, GlobalHold *gh);
    __attribute__((always_inline)) inline void commit(Shard &sh, Request &q, uint64_t n);
    // Undoes the record an acquire of a new key inserted (if any).
    void forget_new(Shard &sh, Request &q);
    bool reserve_key();
    // The override of a key, 0 if none (overrides_mu_ not held).
    uint32_t override_of(const void *key, size_t len) const;
    uint64_t limit_of(Table::Rec r) const;
    Decision key_decide(Table::Rec r, uint64_t t, uint64_t limit, uint64_t n) const;
    void key_advance(Table::Rec r, uint64_t t);
    void key_take(Table::Rec r, uint64_t t, uint64_t n);
    // Exact mode: makes the key's ring hold `need` grants (throws
    // std::bad_alloc with nothing changed).
    void reserve_ring(Shard &sh, Table::Rec r, uint64_t need);
    void global_advance(uint64_t t);
    // The global window's decision at t (caller holds global_mu_, limit set).
    Decision global_decide(uint64_t t, uint64_t n) const;
    void global_take(uint64_t t, uint64_t n);
    // Reclaims the idle records among the next `slots` slots.
    size_t sweep_shard(Shard &sh, size_t slots, uint64_t now);
    // Idle: every permit of the record has left the window by `now`.
    bool idle(Table::Rec r, uint64_t now) const {
        const uint64_t l = r.latest();
        return now >= l && now - l >= window_;
    }
    // Makes room for one key in a full table: reclaims `need` idle records
    // from any shard (own shard locked by the caller, others tried);
    // count_room only counts them (peek). Both search through search_room.
    size_t make_room(Shard &own, uint64_t now, uint64_t need);
    size_t count_room(const Shard &own, uint64_t now, uint64_t need) const;
    template <class Visit>
    size_t search_room(size_t own, uint64_t need, bool look_only, Visit &&visit) const;
    void background_sweep(size_t shard, uint64_t now);
    // The clock a new global window starts at (set_global_limit; every lock held).
    uint64_t global_start() const;
    static size_t shard_index(const Hash128 &h) { return size_t(h.h1 >> 58); }
    Shard &shard_of(const Hash128 &h) { return shards_[shard_index(h)]; }
    const Shard &shard_of(const Hash128 &h) const { return shards_[shard_index(h)]; }
    // Bytes of a table record: the fixed part, then the state (exact: a
    // pointer to the ring; bucketed: the total and nb counts, u16 each).
    static size_t record_stride(bool exact, uint32_t nb) {
        return Table::kStateOffset + (exact ? sizeof(void *) : 2 + 2 * size_t(nb));
    }
    // What the memory figure counts for the global window: its ring of
    // grant times, `ring_bytes` (exact), or its nb counts.
    static size_t global_bytes(bool exact, uint64_t global_limit, uint32_t nb, size_t ring_bytes) {
        return global_limit == 0 ? 0 : exact ? ring_bytes : 8 * size_t(nb);
    }
    // Whether this limiter's new rings store u64 times (GrantRing).
    bool wide_rings() const { return GrantRing::wide_for(window_, 0, 0); }
    static size_t override_bytes(size_t key_len);

    // The two passes of read(): Measure adds up the memory of the limiter a
    // payload describes, Build creates it (rate_limiter.cpp).
    struct Measure;
    struct Build;

    uint64_t limit_, window_;
    BucketSpec spec_;
    uint32_t seed_, flags_;
    Shard shards_[kShards];

    mutable std::mutex global_mu_;
    std::atomic<uint64_t> global_limit_{0};  // written under global_mu_
    uint64_t global_latest_ = 0, global_total_ = 0;
    std::vector<uint64_t> global_counts_;               // bucketed: nb
    std::unique_ptr<GrantRing, FreeRing> global_ring_;  // exact: the grants in the global window

    mutable std::shared_mutex overrides_mu_;
    std::unordered_map<std::string, uint32_t> overrides_;
    std::atomic<bool> has_overrides_{false};  // overrides_ is not empty

    // The memory figure's parts outside the tables, as of their last
    // change (written under global_mu_ and overrides_mu_, read by
    // memory() without them): global_bytes() of the global window, and
    // override_bytes() of every override.
    std::atomic<size_t> global_bytes_now_{0}, override_bytes_now_{0};
    void publish_global() {
        global_bytes_now_.store(global_bytes(exact(), global_limit_.load(std::memory_order_relaxed), spec_.nb,
                                             global_ring_ ? global_ring_->size() : 0),
                                std::memory_order_relaxed);
    }

    std::atomic<uint64_t> max_keys_{0};
    // After a fruitless search for room, how many more new keys only look
    // at their own shard (see search_room; a hint, so peek may read it).
    mutable std::atomic<uint32_t> room_skip_{0};
    std::atomic<uint64_t> keys_{0}, reclaimed_{0}, denied_full_{0}, allowed_full_{0};
};

}  // namespace rate
}  // namespace tf

#endif
