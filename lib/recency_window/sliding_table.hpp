// The hash table of one sliding dictionary of the recency window (one level
// of HistoricalMembership, or all of ExactCuckoo and OptimalSM): entries
// (signature, class ID) in a two-way cuckoo table of 4-slot buckets whose
// slots are packed to the entry's width (cuckoo/packed_table.hpp), with the
// signature stored quotiented.
//
// Any even number B of buckets (the table is sized close to its target
// load, not rounded up to a power of two). Quotienting in mixed radix: a
// signature s (sig_bits bits) has primary bucket s mod B and remainder
// s div B (one multiplication by a reciprocal, common/fastdiv.hpp), so
// s = remainder x B + primary. The alternate bucket of a bucket b is
//
//   alt(b, rem) = (c - b) mod B,  c = 2 reduce(mix(rem), B / 2) + 1 (odd),
//
// an involution on [0, B) (alt(alt(b)) = c - (c - b) = b) without a fixed
// point (b + alt(b) = c is odd, B even: the two buckets always differ), so
// an entry stores only
//
//   bits:  | remainder (bit length of (2^sig_bits - 1) div B) | way (1) |
//          | class ID + 1 (class_bits) |
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
#include <algorithm>
#include <cstdint>

#include "common/coverage.hpp"
#include "common/fastdiv.hpp"
#include "common/hash.hpp"
#include "cuckoo/packed_table.hpp"

// The reader's pass over every slot of a table (SlidingTable::audit) is
// TF_NO_FUZZ_COVERAGE (common/coverage.hpp): RecencyWindow::read branches
// on its verdict under the instrumentation, so a fuzzer still sees each
// outcome, while the tracing of the per-slot comparisons steers nothing.

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
    uint64_t slots = 0;       // kPerBucket x an even number of buckets, at least 2 (valid())
    unsigned sig_bits = 64;   // 1 to 64
    unsigned class_bits = 1;  // the class field; class IDs in [0, 2^class_bits - 1)

    // Whether slots is a count this table takes.
    static bool valid_slots(uint64_t slots) { return slots >= 2 * kPerBucket && slots % (2 * kPerBucket) == 0; }
    uint64_t buckets() const { return slots / kPerBucket; }
    // sig_max, max_remainder and Quotient::alt are arithmetic asked on
    // every operation: not instrumented for fuzzing (common/coverage.hpp;
    // remainder_bits is inlined wherever it is called).
    TF_NO_FUZZ_COVERAGE uint64_t sig_max() const {
        return sig_bits == 64 ? ~uint64_t(0) : (uint64_t(1) << sig_bits) - 1;
    }
    // The largest remainder a signature of sig_bits bits has.
    TF_NO_FUZZ_COVERAGE uint64_t max_remainder() const { return sig_max() / buckets(); }
    unsigned remainder_bits() const {
        const uint64_t r = max_remainder();
        return r == 0 ? 0 : 64 - unsigned(__builtin_clzll(r));
    }
    unsigned entry_bits() const { return remainder_bits() + 1 + class_bits; }
};

// The mixed-radix quotienting of signatures over B buckets (B even, at
// least 2): the primary bucket and remainder of a signature, the signature
// of a (remainder, primary bucket), and the alternate bucket of b for a
// remainder (an involution without a fixed point).
class Quotient {
   public:
    Quotient() = default;
    explicit Quotient(uint64_t buckets) : div_(buckets), buckets_(buckets) {}
    uint64_t buckets() const { return buckets_; }
    uint64_t remainder(uint64_t sig) const { return div_.div(sig); }
    uint64_t primary(uint64_t sig, uint64_t rem) const { return sig - rem * buckets_; }
    uint64_t join(uint64_t rem, uint64_t bucket) const { return rem * buckets_ + bucket; }
    TF_NO_FUZZ_COVERAGE uint64_t alt(uint64_t b, uint64_t rem) const {
        const uint64_t c = 2 * reduce(detail::fmix64(rem * 0x9e3779b97f4a7c15ULL), buckets_ / 2) + 1;
        return c >= b ? c - b : c + buckets_ - b;
    }

   private:
    Divider div_;
    uint64_t buckets_ = 2;
};

class SlidingTable {
   public:
    static constexpr unsigned kMaxKicks = 256;
    static constexpr unsigned kStash = 16;
    static constexpr uint64_t kNone = UINT64_MAX;

    // The shape for at most `capacity` live entries at most `load` full:
    // the fewest even number of buckets (at least 2) holding them.
    static TableShape shape_for(uint64_t capacity, double load, unsigned sig_bits, unsigned class_bits) {
        TableShape s;
        s.sig_bits = sig_bits;
        s.class_bits = class_bits;
        const double want = double(capacity) / load / double(2 * kPerBucket);
        uint64_t pairs = uint64_t(want);
        if (double(pairs) < want) ++pairs;
        s.slots = std::max<uint64_t>(pairs, 1) * 2 * kPerBucket;
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
          q_(s.buckets()),
          cbits_(s.class_bits),
          wide_(s.entry_bits() > 64) {}

    const TableShape &shape() const { return shape_; }
    uint64_t slots() const { return shape_.slots; }
    uint64_t items() const { return items_ + stash_n_; }
    unsigned stashed() const { return stash_n_; }
    size_t bytes() const { return lo_.bytes() + (wide_ ? hi_.bytes() : 0); }
    uint64_t cursor() const { return cursor_; }
    void set_cursor(uint64_t c) { cursor_ = c % (shape_.slots + 1); }
    uint64_t sig_mask() const { return shape_.sig_max(); }
    const Quotient &quotient() const { return q_; }

    // A signature's two buckets and what their slots hold, read once for a
    // find() and the insert() that may follow it (valid until the table
    // changes).
    struct Probe {
        uint64_t rem, b[2];
        uint64_t lo[2][kPerBucket];  // the low 64 bits of each slot
        uint64_t hi[2][kPerBucket];  // the rest (wide tables only)
    };
    void probe(uint64_t sig, Probe *p) const {
        p->rem = q_.remainder(sig);
        p->b[0] = q_.primary(sig, p->rem);
        p->b[1] = q_.alt(p->b[0], p->rem);
        if (wide_)
            load_buckets<true>(p);
        else
            load_buckets<false>(p);
    }

    // The slot holding sig, or kNone; stash entry i is reported as
    // slots() + i.
    uint64_t find(uint64_t sig) const {
        // a bucket at a time, the first match ending it (a query's key is
        // often in its primary bucket: its alternate is not read)
        const uint64_t rem = q_.remainder(sig), b0 = q_.primary(sig, rem);
        const uint64_t s0 = lookup(b0, key_part(rem, 0));
        if (s0 != kNone) return s0;
        const uint64_t s1 = lookup(q_.alt(b0, rem), key_part(rem, 1));
        if (s1 != kNone) return s1;
        for (unsigned i = 0; i < stash_n_; ++i)
            if (stash_[i].sig == sig) return shape_.slots + i;
        return kNone;
    }
    // find() of the signature p was made for.
    uint64_t find(const Probe &p, uint64_t sig) const {
        const uint64_t cm = cmask();
        if (wide_) {
            for (unsigned way = 0; way < 2; ++way) {
                const uint128_t key = key_part(p.rem, way);
                for (unsigned j = 0; j < kPerBucket; ++j) {
                    const uint128_t v = (uint128_t(p.hi[way][j]) << 64) | p.lo[way][j];
                    if ((uint64_t(v) & cm) != 0 && (v >> cbits_) == key) return p.b[way] * kPerBucket + j;
                }
            }
        } else {  // every value below 2^64
            for (unsigned way = 0; way < 2; ++way) {
                const uint64_t key = (p.rem << 1) | way;
                for (unsigned j = 0; j < kPerBucket; ++j) {
                    const uint64_t v = p.lo[way][j];
                    if ((v & cm) != 0 && (v >> cbits_) == key) return p.b[way] * kPerBucket + j;
                }
            }
        }
        for (unsigned i = 0; i < stash_n_; ++i)
            if (stash_[i].sig == sig) return shape_.slots + i;
        return kNone;
    }
    void prefetch(uint64_t sig) const {
        const uint64_t rem = q_.remainder(sig), b0 = q_.primary(sig, rem);
        prefetch_read(lo_.address(b0 * kPerBucket));
        prefetch_read(lo_.address(q_.alt(b0, rem) * kPerBucket));
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
        Probe p;
        probe(sig, &p);
        return insert(p, sig, cls, stale, evicted, has_evicted);
    }
    // insert() of the signature p was made for (nothing changed since).
    template <class Stale>
    bool insert(const Probe &p, uint64_t sig, uint64_t cls, Stale &&stale, Entry *evicted, bool *has_evicted) {
        *has_evicted = false;
        const uint64_t rem = p.rem, b0 = p.b[0], b1 = p.b[1];
        const uint64_t cm = cmask();
        // the first empty slot of b0, then of b1
        for (unsigned way = 0; way < 2; ++way)
            for (unsigned j = 0; j < kPerBucket; ++j)
                if ((p.lo[way][j] & cm) == 0) {
                    put(p.b[way] * kPerBucket + j, rem, way, cls);
                    items_++;
                    return true;
                }
        // the first stale entry of b0, then of b1: it leaves
        for (unsigned way = 0; way < 2; ++way)
            for (unsigned j = 0; j < kPerBucket; ++j) {
                const uint64_t c = (p.lo[way][j] & cm) - 1;
                if (!stale(c)) continue;
                const uint128_t v = (wide_ ? uint128_t(p.hi[way][j]) << 64 : 0) | p.lo[way][j];
                const uint128_t k = v >> cbits_;
                const uint64_t r = uint64_t(k >> 1), bucket = p.b[way];
                *evicted = Entry{q_.join(r, (k & 1) == 0 ? bucket : q_.alt(bucket, r)), c};
                put(bucket * kPerBucket + j, rem, way, cls);
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
                *evicted = Entry{q_.join(v_rem, v_way == 0 ? bucket : q_.alt(bucket, v_rem)), v_cls};
                *has_evicted = true;
                return true;
            }
            cur_rem = v_rem;
            cur_cls = v_cls;
            cur_way = v_way ^ 1;
            bucket = q_.alt(bucket, cur_rem);
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
            const uint64_t v = get_lo(s);
            if ((v & cmask()) == 0) continue;
            const uint64_t c = (v & cmask()) - 1;
            if (!stale(c)) continue;
            uint64_t r, cls;
            unsigned w;
            decode(s, &r, &w, &cls);
            const uint64_t b = s / kPerBucket;
            out[n++] = Entry{q_.join(r, w == 0 ? b : q_.alt(b, r)), cls};
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
            f(q_.join(r, w == 0 ? b : q_.alt(b, r)), c);
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
    // The signature held in the occupied slot s, rebuilt from its bucket,
    // way bit and remainder into *sig; false when it is not a signature of
    // sig_bits bits (a remainder field holds values past the largest
    // remainder: only a corrupt blob stores one).
    bool sig_at(uint64_t s, uint64_t *sig) const {
        uint64_t r, c;
        unsigned w;
        decode(s, &r, &w, &c);
        const uint64_t b = s / kPerBucket, home = w == 0 ? b : q_.alt(b, r);
        if (uint128_t(r) * q_.buckets() + home > shape_.sig_max()) return false;
        *sig = q_.join(r, home);
        return true;
    }

    // The checks of a table whose planes were filled from a blob, as a
    // reader makes them (recency_window.cpp, RecencyWindow::read), in one
    // pass over the slots, each read once.
    enum class Flaw { kNone, kWide, kTwice };
    struct Audit {
        uint64_t occupied = 0;       // slots whose class field is not 0
        uint64_t bad_empty = kNone;  // the first empty slot (class field 0) with other bits set
        Flaw flaw = Flaw::kNone;     // the first flawed entry of the slots (below)
        uint64_t flaw_at = 0;        // its slot
    };
    // Before restore(). With bad_empty kNone: the occupied slots, and the
    // first slot, in order, whose signature is wider than sig_bits (kWide:
    // a remainder past the largest, which sig_at() refuses) or which
    // find() of its signature would not reach (kTwice: a copy of it comes
    // first in find()'s order). The same verdict and slot as checking
    // sig_at() and find(sig) == s slot by slot, for less: find() looks in
    // the signature's primary bucket, then in its alternate, so a copy found
    // before slot s of bucket b holding (remainder r, way w) is an earlier
    // slot of b with the same stored key (r, w) or, when b is the alternate
    // bucket (w = 1), a slot of the primary bucket alt(b, r) holding (r, 0).
    TF_NO_FUZZ_COVERAGE Audit audit() const { return wide_ ? audit<true>() : audit<false>(); }
    // After restore(): the first stash entry i (*at = slots() + i) whose
    // signature has bits above sig_bits (kWide) or is held in the table or
    // earlier in the stash (kTwice: find() does not reach it).
    Flaw stash_flaw(uint64_t *at) const {
        for (unsigned i = 0; i < stash_n_; ++i) {
            *at = shape_.slots + i;
            if ((stash_[i].sig & ~shape_.sig_max()) != 0) return Flaw::kWide;
            if (find(stash_[i].sig) != shape_.slots + i) return Flaw::kTwice;
        }
        return Flaw::kNone;
    }
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
    // Slot s's bits through a copy of the low plane's geometry.
    template <bool Wide>
    TF_NO_FUZZ_COVERAGE __attribute__((flatten)) uint128_t read_with(const uint64_t *lo, const cuckoo::packed::View &lv,
                                                                     uint64_t s) const {
        uint128_t v = cuckoo::packed::get(lo, s, lv.bits, lv.mask, lv.last);
        if constexpr (Wide) v |= uint128_t(get_hi(s)) << 64;
        return v;
    }
    // (flatten: the packed reads inlined, so that they too are built
    // without the tracing)
    template <bool Wide>
    TF_NO_FUZZ_COVERAGE __attribute__((flatten)) Audit audit() const {
        const uint64_t *lo = lo_.words();
        const cuckoo::packed::View lv = lo_.view();
        const uint64_t cm = cmask(), buckets = shape_.buckets(), sig_max = shape_.sig_max();
        Audit a;
        for (uint64_t b = 0; b < buckets; ++b) {
            const uint64_t base = b * kPerBucket;
            uint128_t key[kPerBucket];
            bool used[kPerBucket];
            for (unsigned j = 0; j < kPerBucket; ++j) {
                const uint128_t v = read_with<Wide>(lo, lv, base + j);
                used[j] = (uint64_t(v) & cm) != 0;
                key[j] = v >> cbits_;
                if (used[j]) {
                    a.occupied++;
                } else if (v != 0) {
                    a.bad_empty = base + j;
                    return a;
                }
            }
            if (a.flaw != Flaw::kNone) continue;
            for (unsigned j = 0; j < kPerBucket && a.flaw == Flaw::kNone; ++j) {
                if (!used[j]) continue;
                a.flaw_at = base + j;
                const uint64_t r = uint64_t(key[j] >> 1);
                const bool alternate = (key[j] & 1) != 0;
                const uint64_t home = alternate ? q_.alt(b, r) : b;
                if (uint128_t(r) * buckets + home > sig_max) {
                    a.flaw = Flaw::kWide;
                    break;
                }
                for (unsigned i = 0; i < j; ++i)
                    if (used[i] && key[i] == key[j]) a.flaw = Flaw::kTwice;
                if (alternate) {
                    const uint128_t primary_key = key_part(r, 0);
                    for (unsigned i = 0; i < kPerBucket; ++i) {
                        const uint128_t v = read_with<Wide>(lo, lv, home * kPerBucket + i);
                        if ((uint64_t(v) & cm) != 0 && (v >> cbits_) == primary_key) a.flaw = Flaw::kTwice;
                    }
                }
            }
        }
        return a;
    }
    uint64_t get_lo(uint64_t s) const { return lo_.get(s); }
    uint64_t get_hi(uint64_t s) const { return hi_.get(s); }
    template <bool Wide>
    void load_buckets(Probe *p) const {
        // the low plane's geometry copied once: the loop loads only words
        const uint64_t *lo = lo_.words();
        const cuckoo::packed::View lv = lo_.view();
        for (unsigned way = 0; way < 2; ++way) {
            const uint64_t base = p->b[way] * kPerBucket;
            for (unsigned j = 0; j < kPerBucket; ++j) {
                p->lo[way][j] = lv.get(lo, base + j);
                if constexpr (Wide) p->hi[way][j] = get_hi(base + j);
            }
        }
    }
    // The stored bits above the class field: remainder and way.
    static uint128_t key_part(uint64_t rem, unsigned way) { return (uint128_t(rem) << 1) | way; }
    uint128_t read(uint64_t s) const {
        uint128_t v = get_lo(s);
        if (wide_) v |= uint128_t(get_hi(s)) << 64;
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
    TableShape shape_;
    cuckoo::RuntimeSlots lo_, hi_;
    Quotient q_;
    unsigned cbits_ = 1;
    bool wide_ = false;
    uint64_t items_ = 0;
    uint64_t cursor_ = 0;  // the next slot a scan visits (slots(): the stash)
    Entry stash_[kStash] = {};
    unsigned stash_n_ = 0;
};

}  // namespace recency
}  // namespace tf

#endif
