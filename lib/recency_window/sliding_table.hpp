// The hash table of one sliding dictionary of the recency window (one level
// of HistoricalMembership, or all of ExactCuckoo and OptimalSM): entries
// (signature, class ID) in a two-way cuckoo table of 4-slot buckets whose
// slots are packed to the entry's width (cuckoo/packed_table.hpp), with the
// signature stored quotiented.
//
// Quotienting: with 2^k buckets, a signature s (sig_bits bits) has primary
// bucket s mod 2^k and remainder s >> k; the alternate bucket is
// alt_bucket(primary, remainder), an involution, so an entry stores only
//
//   bits:  | remainder (sig_bits - k) | way (1) | class ID + 1 (class_bits) |
//
// and the full signature is rebuilt from the slot's bucket, the way bit
// (0: in its primary bucket) and the remainder: the representation is
// invertible, which is what lets an expired entry met anywhere move to
// another table. A stored class field of 0 marks an empty slot. An entry
// wider than 64 bits (exact 64-bit signatures in a small table) is split
// over two packed planes, the low 64 bits and the rest.
//
// Lazy expiry: the owner says which class IDs are stale (a predicate). An
// insert reuses a slot holding a stale entry as if it were free and hands
// that entry back; scan() visits a given number of cells from where the
// last scan stopped and hands back the stale entries it removes. A kick
// chain that fails is undone and the entry goes to a small stash (searched
// by find, emptied by the scans); only a full stash fails an insert.
#ifndef TF_LIB_RECENCY_WINDOW_SLIDING_TABLE_HPP
#define TF_LIB_RECENCY_WINDOW_SLIDING_TABLE_HPP

#include <cstddef>
#include <cstdint>

#include "common/hash.hpp"
#include "cuckoo/packed_table.hpp"

namespace tf {
namespace recency {

// A (signature, class ID) pair handed back by an insert or a scan.
struct Entry {
    uint64_t sig;
    uint64_t cls;
};

// Slots per bucket of every sliding table.
constexpr unsigned kPerBucket = 4;

// The shape of a table: what it holds and how many slots.
struct TableShape {
    uint64_t slots = 0;       // a power of two, at least 2 buckets
    unsigned sig_bits = 64;   // 1 to 64
    unsigned class_bits = 1;  // the class field; class IDs in [0, 2^class_bits - 1)

    unsigned bucket_bits() const {
        unsigned k = 0;
        while ((uint64_t(kPerBucket) << k) < slots) ++k;
        return k;
    }
    unsigned remainder_bits() const { return sig_bits > bucket_bits() ? sig_bits - bucket_bits() : 0; }
    unsigned entry_bits() const { return remainder_bits() + 1 + class_bits; }
};

class SlidingTable {
   public:
    static constexpr unsigned kMaxKicks = 256;
    static constexpr unsigned kStash = 16;
    static constexpr uint64_t kNone = UINT64_MAX;

    // The shape for at most `capacity` live entries at most `load` full
    // (slots rounded up to a power of two, at least 8).
    static TableShape shape_for(uint64_t capacity, double load, unsigned sig_bits, unsigned class_bits) {
        TableShape s;
        s.sig_bits = sig_bits;
        s.class_bits = class_bits;
        const double want = double(capacity) / load;
        uint64_t slots = 2 * kPerBucket;
        while (double(slots) < want) slots <<= 1;
        s.slots = slots;
        return s;
    }
    // The memory of a table of this shape, before allocating it.
    static size_t bytes_for(const TableShape &s) {
        const unsigned w = s.entry_bits();
        size_t b = cuckoo::RuntimeSlots::bytes_for(s.slots, w > 64 ? 64 : w);
        if (w > 64) b += cuckoo::RuntimeSlots::bytes_for(s.slots, w - 64);
        return b;
    }

    SlidingTable() = default;
    // Throws std::bad_alloc.
    explicit SlidingTable(const TableShape &s)
        : shape_(s),
          lo_(s.slots, s.entry_bits() > 64 ? 64 : s.entry_bits()),
          hi_(s.entry_bits() > 64 ? s.slots : 0, s.entry_bits() > 64 ? s.entry_bits() - 64 : 1),
          mask_((s.slots / kPerBucket) - 1),
          kbits_(s.bucket_bits()),
          cbits_(s.class_bits),
          wide_(s.entry_bits() > 64) {}

    const TableShape &shape() const { return shape_; }
    uint64_t slots() const { return shape_.slots; }
    uint64_t items() const { return items_ + stash_n_; }
    unsigned stashed() const { return stash_n_; }
    size_t bytes() const { return lo_.bytes() + (wide_ ? hi_.bytes() : 0); }
    uint64_t cursor() const { return cursor_; }
    void set_cursor(uint64_t c) { cursor_ = c % (shape_.slots + 1); }
    uint64_t sig_mask() const { return shape_.sig_bits == 64 ? ~uint64_t(0) : (uint64_t(1) << shape_.sig_bits) - 1; }

    // The slot holding sig, or kNone; stash entry i is reported as
    // slots() + i.
    uint64_t find(uint64_t sig) const {
        const uint64_t b0 = sig & mask_, rem = sig >> kbits_;
        const uint64_t b1 = cuckoo::packed::alt_bucket(b0, rem, mask_);
        const uint64_t s0 = lookup(b0, key_part(rem, 0));
        if (s0 != kNone) return s0;
        const uint64_t s1 = lookup(b1, key_part(rem, 1));
        if (s1 != kNone) return s1;
        for (unsigned i = 0; i < stash_n_; ++i)
            if (stash_[i].sig == sig) return shape_.slots + i;
        return kNone;
    }
    void prefetch(uint64_t sig) const {
        const uint64_t b0 = sig & mask_;
        __builtin_prefetch(lo_.address(b0 * kPerBucket));
        __builtin_prefetch(lo_.address(cuckoo::packed::alt_bucket(b0, sig >> kbits_, mask_) * kPerBucket));
    }
    // The class ID in a slot find() returned.
    uint64_t class_at(uint64_t slot) const {
        if (slot >= shape_.slots) return stash_[slot - shape_.slots].cls;
        return (lo_.get(slot) & cmask()) - 1;
    }
    void set_class_at(uint64_t slot, uint64_t cls) {
        if (slot >= shape_.slots) {
            stash_[slot - shape_.slots].cls = cls;
            return;
        }
        lo_.set(slot, (lo_.get(slot) & ~cmask()) | (cls + 1));
    }
    // Removes the entry in a slot find() returned.
    void erase_at(uint64_t slot) {
        if (slot >= shape_.slots) {
            stash_[slot - shape_.slots] = stash_[--stash_n_];
            return;
        }
        write(slot, 0);
        items_--;
    }

    // Stores (sig, cls), sig absent. A stale entry (stale(class) true) in
    // the way is replaced and returned in *evicted (*has_evicted true).
    // False only when the chain failed and the stash is full: the table is
    // then as it was.
    template <class Stale>
    bool insert(uint64_t sig, uint64_t cls, Stale &&stale, Entry *evicted, bool *has_evicted) {
        *has_evicted = false;
        const uint64_t b0 = sig & mask_, rem = sig >> kbits_;
        const uint64_t b1 = cuckoo::packed::alt_bucket(b0, rem, mask_);
        if (place(b0, rem, 0, cls) || place(b1, rem, 1, cls)) return true;
        if (take_stale(b0, rem, 0, cls, stale, evicted) || take_stale(b1, rem, 1, cls, stale, evicted)) {
            *has_evicted = true;
            return true;
        }
        // Kick: the moving entry goes into a slot of `bucket`, its victim
        // to the victim's other bucket; path[] keeps each slot and what it
        // held, for the undo.
        uint64_t path[kMaxKicks];
        uint128_t held[kMaxKicks];
        uint64_t cur_rem = rem, cur_cls = cls, bucket = (detail::fmix64(sig) & 1) ? b1 : b0;
        unsigned cur_way = bucket == b0 ? 0 : 1;
        unsigned k = 0;
        for (; k < kMaxKicks; ++k) {
            const uint64_t s = bucket * kPerBucket + (detail::fmix64(cur_rem + k) & (kPerBucket - 1));
            uint64_t v_rem, v_cls;
            unsigned v_way;
            path[k] = s;
            held[k] = read(s);
            decode(s, &v_rem, &v_way, &v_cls);
            put(s, cur_rem, cur_way, cur_cls);
            if (stale(v_cls)) {  // the victim leaves: one entry in, one out
                const uint64_t home = v_way == 0 ? bucket : cuckoo::packed::alt_bucket(bucket, v_rem, mask_);
                *evicted = Entry{(v_rem << kbits_) | home, v_cls};
                *has_evicted = true;
                return true;
            }
            cur_rem = v_rem;
            cur_cls = v_cls;
            cur_way = v_way ^ 1;
            bucket = cuckoo::packed::alt_bucket(bucket, cur_rem, mask_);
            if (place(bucket, cur_rem, cur_way, cur_cls)) return true;
        }
        // Undo: every slot of the path gets back what it held.
        for (unsigned j = k; j-- > 0;) write(path[j], held[j]);
        if (stash_n_ == kStash) return false;
        stash_[stash_n_++] = Entry{sig, cls};
        return true;
    }

    // Visits up to `cells` slots from the cursor (and, when the cursor
    // wraps, the stash), removing the stale entries into out[] (room for
    // cells + kStash); returns how many.
    template <class Stale>
    unsigned scan(uint64_t cells, Stale &&stale, Entry *out) {
        unsigned n = 0;
        for (uint64_t i = 0; i < cells; ++i) {
            if (cursor_ == shape_.slots) {
                for (unsigned j = 0; j < stash_n_;) {
                    if (stale(stash_[j].cls)) {
                        out[n++] = stash_[j];
                        stash_[j] = stash_[--stash_n_];
                    } else {
                        ++j;
                    }
                }
                cursor_ = 0;
                continue;
            }
            const uint64_t s = cursor_++;
            const uint64_t v = lo_.get(s);
            if ((v & cmask()) == 0) continue;
            uint64_t r;
            unsigned w;
            uint64_t c;
            decode(s, &r, &w, &c);
            if (!stale(c)) continue;
            const uint64_t b = s / kPerBucket;
            const uint64_t home = w == 0 ? b : cuckoo::packed::alt_bucket(b, r, mask_);
            out[n++] = Entry{(r << kbits_) | home, c};
            write(s, 0);
            items_--;
        }
        return n;
    }

    // Every entry (for serialization and tests): f(sig, cls).
    template <class F>
    void for_each(F &&f) const {
        for (uint64_t s = 0; s < shape_.slots; ++s) {
            if ((lo_.get(s) & cmask()) == 0) continue;
            uint64_t r;
            unsigned w;
            uint64_t c;
            decode(s, &r, &w, &c);
            const uint64_t b = s / kPerBucket;
            f(((r << kbits_) | (w == 0 ? b : cuckoo::packed::alt_bucket(b, r, mask_))), c);
        }
        for (unsigned i = 0; i < stash_n_; ++i) f(stash_[i].sig, stash_[i].cls);
    }

    // Serialization (recency_window.cpp): the packed planes (`hi` only
    // when wide(): entries wider than 64 bits), the stash, and the
    // restoring of the counts after the planes were filled from a blob.
    bool wide() const { return wide_; }
    const cuckoo::RuntimeSlots &plane(unsigned i) const { return i == 0 ? lo_ : hi_; }
    cuckoo::RuntimeSlots &plane(unsigned i) { return i == 0 ? lo_ : hi_; }
    const Entry *stash() const { return stash_; }
    // Whether slot s is empty.
    bool empty_at(uint64_t s) const { return (lo_.get(s) & cmask()) == 0; }
    // The signature held in the occupied slot s, rebuilt from its bucket,
    // way bit and remainder.
    uint64_t sig_at(uint64_t s) const {
        uint64_t r, c;
        unsigned w;
        decode(s, &r, &w, &c);
        const uint64_t b = s / kPerBucket;
        return (r << kbits_) | (w == 0 ? b : cuckoo::packed::alt_bucket(b, r, mask_));
    }
    // Whether every bit of slot s is 0.
    bool zero_at(uint64_t s) const { return read(s) == 0; }
    // Sets the counts after the planes were filled: `items` occupied
    // slots (the caller counted them), the stash, the cursor (<= slots).
    void restore(uint64_t items, const Entry *stash, unsigned n, uint64_t cursor) {
        items_ = items;
        stash_n_ = n;
        for (unsigned i = 0; i < n; ++i) stash_[i] = stash[i];
        cursor_ = cursor;
    }

    void clear() {
        lo_.clear();
        if (wide_) hi_.clear();
        items_ = 0;
        stash_n_ = 0;
        cursor_ = 0;
    }

   private:
    uint64_t cmask() const { return (uint64_t(1) << cbits_) - 1; }
    // The stored bits above the class field: remainder and way.
    static uint128_t key_part(uint64_t rem, unsigned way) { return (uint128_t(rem) << 1) | way; }
    uint128_t read(uint64_t s) const {
        uint128_t v = lo_.get(s);
        if (wide_) v |= uint128_t(hi_.get(s)) << 64;
        return v;
    }
    void put(uint64_t s, uint64_t rem, unsigned way, uint64_t cls) {
        write(s, (key_part(rem, way) << cbits_) | (cls + 1));
    }
    void write(uint64_t s, uint128_t v) {
        lo_.set(s, uint64_t(v));
        if (wide_) hi_.set(s, uint64_t(v >> 64));
    }
    void decode(uint64_t s, uint64_t *rem, unsigned *way, uint64_t *cls) const {
        const uint128_t v = read(s);
        *cls = (uint64_t(v) & cmask()) - 1;
        const uint128_t k = v >> cbits_;
        *way = unsigned(k & 1);
        *rem = uint64_t(k >> 1);
    }
    uint64_t lookup(uint64_t bucket, uint128_t key) const {
        const uint64_t base = bucket * kPerBucket;
        for (unsigned j = 0; j < kPerBucket; ++j) {
            const uint128_t v = read(base + j);
            if ((uint64_t(v) & cmask()) != 0 && (v >> cbits_) == key) return base + j;
        }
        return kNone;
    }
    bool place(uint64_t bucket, uint64_t rem, unsigned way, uint64_t cls) {
        const uint64_t base = bucket * kPerBucket;
        for (unsigned j = 0; j < kPerBucket; ++j)
            if ((lo_.get(base + j) & cmask()) == 0) {
                put(base + j, rem, way, cls);
                items_++;
                return true;
            }
        return false;
    }
    template <class Stale>
    bool take_stale(uint64_t bucket, uint64_t rem, unsigned way, uint64_t cls, Stale &stale, Entry *evicted) {
        const uint64_t base = bucket * kPerBucket;
        for (unsigned j = 0; j < kPerBucket; ++j) {
            uint64_t r, c;
            unsigned w;
            if ((lo_.get(base + j) & cmask()) == 0) continue;
            decode(base + j, &r, &w, &c);
            if (!stale(c)) continue;
            const uint64_t home = w == 0 ? bucket : cuckoo::packed::alt_bucket(bucket, r, mask_);
            *evicted = Entry{(r << kbits_) | home, c};
            put(base + j, rem, way, cls);
            return true;
        }
        return false;
    }

    TableShape shape_;
    cuckoo::RuntimeSlots lo_, hi_;
    uint64_t mask_ = 0;  // buckets - 1
    unsigned kbits_ = 0, cbits_ = 1;
    bool wide_ = false;
    uint64_t items_ = 0;
    uint64_t cursor_ = 0;  // the next slot a scan visits (slots(): the stash)
    Entry stash_[kStash] = {};
    unsigned stash_n_ = 0;
};

}  // namespace recency
}  // namespace tf

#endif
