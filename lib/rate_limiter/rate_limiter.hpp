// The rate limiter (seed 002): per-key sliding windows in a sharded hash
// table, a global window, per-key overrides, idle reclamation, a bound on
// the number of keys. The decisions themselves are in window.hpp.
#ifndef TF_LIB_RATE_LIMITER_RATE_LIMITER_HPP
#define TF_LIB_RATE_LIMITER_RATE_LIMITER_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/hash.hpp"
#include "common/status.hpp"
#include "common/wire.hpp"
#include "rate_limiter/window.hpp"
#include "temporalfilters/rate_limiter.h"

namespace tf {
namespace rate {

constexpr uint32_t kShards = 64;
constexpr size_t kInlineKey = 16;

// One shard's open-addressing table (linear probing, backward-shift
// deletion). A record is `stride` bytes:
//   u64 latest | u32 limit | u16 key code | u16 pad | 16 bytes key |
//   state (bucketed: u16 total, u16 counts[nb]; exact: pointer to a ring)
// The key code is its length (0..16, stored inline), kOutOfLine (the 16
// bytes hold a heap pointer and a length) or kEmpty.
class Table {
   public:
    static constexpr uint16_t kEmpty = 0xFFFF;
    static constexpr uint16_t kOutOfLine = 0xFFFE;
    static constexpr size_t kHeader = 32;

    struct Rec {
        uint8_t *p;
        uint64_t &latest() const { return *reinterpret_cast<uint64_t *>(p); }
        uint32_t &limit() const { return *reinterpret_cast<uint32_t *>(p + 8); }
        uint16_t &code() const { return *reinterpret_cast<uint16_t *>(p + 12); }
        uint8_t *state() const { return p + kHeader; }
        const uint8_t *key() const;
        size_t key_len() const;
    };

    Table() = default;
    ~Table();
    Table(const Table &) = delete;
    Table &operator=(const Table &) = delete;

    void init(size_t stride, bool exact) {
        stride_ = stride;
        exact_ = exact;
    }
    size_t size() const { return count_; }
    size_t capacity() const { return cap_; }
    size_t bytes() const;

    // The record of `key` (hash h), or {nullptr}.
    Rec find(const void *key, size_t len, const Hash128 &h) const;
    // Inserts an empty record for a key that is not there; may grow the
    // table (throws std::bad_alloc, nothing changed). The state is zeroed.
    Rec insert(const void *key, size_t len, const Hash128 &h);
    // Removes the record (frees its out-of-line key and exact ring).
    void erase(Rec r);
    // Visits up to `slots` slots from the sweep cursor; `idle` decides.
    template <class F>
    size_t sweep(size_t slots, F &&idle);
    // Every record, in slot order.
    template <class F>
    void for_each(F &&f) const {
        for (size_t i = 0; i < cap_; ++i) {
            Rec r{slots_ + i * stride_};
            if (r.code() != kEmpty) f(r);
        }
    }

   private:
    Rec at(size_t i) const { return Rec{slots_ + i * stride_}; }
    size_t home(const Hash128 &h) const { return size_t(h.h2) & (cap_ - 1); }
    void grow();
    void release(Rec r);  // frees what a record owns outside the table

    uint8_t *slots_ = nullptr;
    size_t cap_ = 0, count_ = 0, stride_ = 0, cursor_ = 0;
    bool exact_ = false;
};

struct Shard {
    std::mutex mu;
    Table table;
};

class RateLimiter {
   public:
    static tf_status check(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags);
    RateLimiter(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags);
    ~RateLimiter() = default;

    tf_status set_global_limit(uint64_t limit);
    tf_status set_key_limit(const void *key, size_t len, uint64_t limit);
    void set_max_keys(uint64_t n) { max_keys_.store(n); }
    // acquire (take = true) or peek (take = false)
    tf_status decide(const void *key, size_t len, uint64_t now, uint64_t n, bool take, Decision *out);
    void refund(const void *key, size_t len, uint64_t now, uint64_t n);
    void reset(const void *key, size_t len);
    void stats(uint64_t *keys, uint64_t *reclaimed, uint64_t *denied_full, uint64_t *allowed_full,
               size_t *bytes);

    // Wire payload (kind 4); the caller holds every lock (lock_all).
    void lock_all();
    void unlock_all();
    size_t payload_size() const;
    void write_payload(wire::Writer &w) const;
    static tf_status read(wire::Reader &r, uint32_t flags, std::unique_ptr<RateLimiter> *out);

    uint32_t flags() const { return flags_; }
    bool exact() const { return (flags_ & TF_RATE_LIMITER_EXACT) != 0; }

   private:
    // Counts a new key, unless max_keys is reached.
    bool reserve_key();
    // The key's limit: its override, else the default.
    uint32_t limit_for(const void *key, size_t len) const;
    Decision key_decide(Table::Rec r, uint64_t now, uint64_t n);
    void key_take(Table::Rec r, uint64_t now, uint64_t n);
    bool idle(Table::Rec r, uint64_t now) const { return r.latest() != 0 && now >= r.latest() && now - r.latest() >= window_; }
    // The global window (caller holds global_mu_).
    Decision global_decide(uint64_t now, uint64_t n);
    void global_take(uint64_t now, uint64_t n);
    Shard &shard_of(const Hash128 &h) { return shards_[h.h1 >> 58]; }
    size_t state_bytes() const { return exact() ? sizeof(void *) : 2 + 2 * size_t(spec_.nb); }

    uint64_t limit_, window_;
    BucketSpec spec_;
    uint32_t flags_;
    Shard shards_[kShards];

    std::mutex global_mu_;
    std::atomic<uint64_t> global_limit_{0};  // written under global_mu_
    uint64_t global_latest_ = 0, global_total_ = 0;
    std::vector<uint64_t> global_counts_;  // bucketed: nb
    std::vector<uint64_t> global_ring_;    // exact: global_limit_ slots
    uint32_t global_start_ = 0, global_count_ = 0;

    mutable std::shared_mutex overrides_mu_;
    std::unordered_map<std::string, uint32_t> overrides_;
    std::atomic<bool> has_overrides_{false};

    std::atomic<uint64_t> max_keys_{0};
    std::atomic<uint64_t> keys_{0}, reclaimed_{0}, denied_full_{0}, allowed_full_{0};
};

}  // namespace rate
}  // namespace tf

#endif
