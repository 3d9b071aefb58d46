#include "cuckoo/rotating_cuckoo.hpp"

#include <algorithm>
#include <cmath>
#include <new>

namespace tf {
namespace cuckoo {

namespace {
using Table = CuckooTable<64>;

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
}  // namespace

double RotatingCuckoo::default_occupancy(uint32_t slots_per_bucket, unsigned ways) {
    // A little below the fill where kick chains of 500 start failing, as
    // measured over every layout by `bench_rotating_cuckoo --load`
    // (tests/bench/bench_rotating_cuckoo.cpp; the table is in
    // docs/rotating-cuckoo.md).
    switch (slots_per_bucket) {
        case 1:
            return ways == 3 ? 0.85 : 0.45;
        case 2:
            return ways == 3 ? 0.94 : 0.80;
        case 4:
            return ways == 3 ? 0.97 : 0.92;
        default:
            return ways == 3 ? 0.98 : 0.95;
    }
}

size_t RotatingCuckoo::fixed_memory(const Config &c) {
    return sizeof(RotatingCuckoo) + size_t(c.max_tables) * sizeof(Gen) + size_t(c.max_kicks) * sizeof(uint64_t);
}

tf_status RotatingCuckoo::check(const tf_rotating_cuckoo_options &o, Config *out) {
    Config c;
    if ((o.flags & ~kKnownFlags) != 0) return check_flags(o.flags, kKnownFlags);
    if (o.slots_per_bucket != 1 && o.slots_per_bucket != 2 && o.slots_per_bucket != 4 && o.slots_per_bucket != 8)
        return fail(TF_ERR_INVALID_ARGUMENT, "slots_per_bucket is %u; it must be 1, 2, 4 or 8", o.slots_per_bucket);
    if (o.table_slots > TF_ROTATING_CUCKOO_MAX_TABLE_SLOTS)
        return fail(TF_ERR_TOO_LARGE, "table_slots is %llu, above the limit of 2^36",
                    (unsigned long long)o.table_slots);
    if (!power_of_two(o.table_slots) || o.table_slots < 2 * uint64_t(o.slots_per_bucket))
        return fail(TF_ERR_INVALID_ARGUMENT,
                    "table_slots is %llu; it must be a power of two of at least 2 x slots_per_bucket (%u)",
                    (unsigned long long)o.table_slots, 2 * o.slots_per_bucket);
    if (!(o.max_occupancy == 0.0 || (o.max_occupancy > 0.0 && o.max_occupancy <= 1.0)))
        return fail(TF_ERR_INVALID_ARGUMENT, "max_occupancy is %g; it must be 0 (the default) or in (0, 1]",
                    o.max_occupancy);
    if (o.max_kicks == 0 || o.max_kicks > TF_ROTATING_CUCKOO_MAX_KICKS)
        return fail(TF_ERR_INVALID_ARGUMENT, "max_kicks is %u; it must be in 1..%u", o.max_kicks,
                    TF_ROTATING_CUCKOO_MAX_KICKS);
    if (o.max_tables == 0 || o.max_tables > TF_ROTATING_CUCKOO_MAX_TABLES)
        return fail(TF_ERR_INVALID_ARGUMENT, "max_tables is %u; it must be in 1..%u", o.max_tables,
                    TF_ROTATING_CUCKOO_MAX_TABLES);
    c.table_slots = o.table_slots;
    c.max_memory = o.max_memory;
    c.ttl = o.ttl;
    c.slots_per_bucket = o.slots_per_bucket;
    c.max_kicks = o.max_kicks;
    c.max_tables = o.max_tables;
    c.seed = o.seed;
    c.flags = o.flags;
    c.max_occupancy = o.max_occupancy != 0.0 ? o.max_occupancy : default_occupancy(o.slots_per_bucket, c.ways());
    const uint64_t need = uint64_t(fixed_memory(c)) + table_memory(c.table_slots);
    if (need > c.max_memory)
        return fail(TF_ERR_TOO_LARGE,
                    "max_memory is %llu bytes; the first table needs %llu with the filter's fixed part",
                    (unsigned long long)c.max_memory, (unsigned long long)need);
    *out = c;
    return TF_OK;
}

RotatingCuckoo::RotatingCuckoo(const Config &c) : cfg_(c), ring_(Rotation::Fill, 0, c.ttl, 1), path_(c.max_kicks) {
    ring_.reserve(c.max_tables);
    TableSlot slot;
    if (new_table(c.table_slots, c, &slot) != TF_OK) throw std::bad_alloc();
    ring_.open(std::move(slot));
}

size_t RotatingCuckoo::tables_memory() const {
    size_t n = 0;
    for (const Gen &g : ring_) n += g.table.bytes();
    return n;
}

size_t RotatingCuckoo::memory() const { return fixed_memory(cfg_) + tables_memory(); }

uint64_t RotatingCuckoo::occupancy_limit(const Table &t) const {
    const double limit = std::floor(cfg_.max_occupancy * double(t.slots()));
    return limit < 1.0 ? 1 : uint64_t(limit);
}

uint64_t RotatingCuckoo::table_cap_slots() const {
    // The largest power of two whose table is at most 1/kCapShare of the
    // room the cap leaves beside the fixed part, never below the first
    // table (which check() made sure fits).
    const uint64_t room = cfg_.max_memory - fixed_memory(cfg_);
    uint64_t s = cfg_.table_slots;
    while (s < TF_ROTATING_CUCKOO_MAX_TABLE_SLOTS && table_memory(s * 2) <= room / kCapShare) s *= 2;
    return s;
}

uint64_t RotatingCuckoo::next_table_slots(uint64_t now) const {
    // Sized from the recent insertion rate (with a ttl) or the growth of
    // the tables (without one: twice the newest), and the room under the
    // memory cap (the README's "growth in filter size and active use ...
    // up to a maximum allotted memory space"), in floating point so that
    // nothing wraps, then clamped: at most twice or half the newest table,
    // at least two buckets, at most table_cap_slots() (a quarter of the
    // room under the cap, never below the first table).
    const Table &cur = ring_.newest().table;
    const double cur_slots = double(cur.slots());
    double want = 2.0 * cur_slots;  // no ttl: grow until the cap
    const uint64_t elapsed = now - ring_.opened_at();
    if (cfg_.ttl != 0 && ring_.opened_at() != 0 && elapsed > 0) {
        // The inserts one ttl brings at the newest table's rate, spread over
        // kTablesPerTtl tables at the configured occupancy.
        const double per_ttl = double(ring_.current()) * double(cfg_.ttl) / double(elapsed);
        want = per_ttl / (kTablesPerTtl * cfg_.max_occupancy);
    }
    want = std::min(std::max(want, cur_slots / 2.0), cur_slots * 2.0);
    const double lo = double(2 * cfg_.slots_per_bucket), hi = double(table_cap_slots());
    want = std::min(std::max(want, lo), hi);
    uint64_t s = uint64_t(lo);
    while (double(s) < want && double(s) < hi) s *= 2;  // the power of two at or above
    return s;
}

tf_status RotatingCuckoo::new_table(uint64_t slots, const Config &c, TableSlot *out) {
    try {
        out->table = Table(slots, c.slots_per_bucket, c.ways());
    } catch (const std::bad_alloc &) {
        return fail(TF_ERR_OUT_OF_MEMORY, "out of memory for a new table of %llu slots", (unsigned long long)slots);
    }
    return TF_OK;
}

void RotatingCuckoo::rotate(TableSlot &&slot, uint64_t now, Cause cause) {
    // Room for the new table: the oldest go while the cap or the table
    // limit would be exceeded (the newest too, if it must).
    const size_t fixed = fixed_memory(cfg_), add = slot.table.bytes();
    size_t tables = tables_memory();
    while (ring_.size() > 0 && (ring_.size() >= cfg_.max_tables || fixed + tables + add > cfg_.max_memory)) {
        const Gen &old = ring_.oldest();
        loss_.forgotten_memory += old.table.items();
        tables -= old.table.bytes();
        ring_.retire_oldest();
    }
    ring_.rotate(std::move(slot), now);  // capacity reserved: never throws
    ring_.set_budget(CuckooRing::kUnlimited);
    (cause == Cause::Fill ? loss_.fill_rotations : loss_.kick_rotations)++;
}

RotatingCuckoo::Plan RotatingCuckoo::plan(uint64_t now) const {
    Plan p{ring_.clamp(now), 0, false};
    // Tables older than the ttl: the oldest first (last times grow with
    // the serial), never the newest while it is the only one.
    while (ring_.size() - p.expired > 1 && ring_.expired(ring_[ring_.size() - 1 - p.expired], p.now)) p.expired++;
    const Gen &g = ring_.newest();
    // Every key of the only table left is older than the ttl: it is
    // emptied and starts again as a new generation.
    p.recycle = ring_.size() - p.expired == 1 && g.table.items() > 0 && ring_.expired(g, p.now);
    return p;
}

void RotatingCuckoo::commit(const Plan &p) {
    ring_.observe(p.now);
    for (size_t i = 0; i < p.expired; ++i) {
        loss_.forgotten_age += ring_.oldest().table.items();
        ring_.retire_oldest();
    }
    if (p.recycle) {
        Gen &g = ring_.newest();
        loss_.forgotten_age += g.table.items();
        g.table.clear();
        ring_.recycle(p.now, CuckooRing::kUnlimited);
    }
}

tf_status RotatingCuckoo::insert(Key k, const Plan &p) {
    Cause cause = Cause::Fill;
    if (p.recycle) {
        commit(p);  // the newest table is emptied: the key goes there
    } else {
        Table &t = ring_.newest().table;
        if (t.items() < occupancy_limit(t)) {
            // A failed chain is undone: the table is as it was.
            if (t.insert(t.bucket_of(k.bucket_hash), k.fp, cfg_.max_kicks, path_.data())) {
                commit(p);  // drops older tables only: the newest stays
                ring_.newest().last = p.now;
                ring_.record_insert();
                return TF_OK;
            }
            cause = Cause::Kick;  // the key goes to a new table (the README's stash)
        }
        // A new table, allocated before anything changes.
        TableSlot slot;
        tf_status st = new_table(next_table_slots(p.now), cfg_, &slot);
        if (st != TF_OK) return st;
        commit(p);
        rotate(std::move(slot), p.now, cause);
    }
    Gen &g = ring_.newest();  // empty: the fingerprint finds a free slot
    if (!g.table.insert(g.table.bucket_of(k.bucket_hash), k.fp, cfg_.max_kicks, path_.data()))
        return fail(TF_ERR_INTERNAL, "an empty table refused a fingerprint");
    g.last = p.now;
    ring_.record_insert();
    return TF_OK;
}

tf_status RotatingCuckoo::add(Hash128 h, uint64_t now) {
    const Plan p = plan(now);
    const Key k = split(h);
    const Table &t = ring_.newest().table;
    if (!p.recycle && t.contains(t.bucket_of(k.bucket_hash), k.fp)) {
        commit(p);
        ring_.newest().last = p.now;  // refreshed: its table lives until now + ttl
        return TF_OK;
    }
    return insert(k, p);
}

bool RotatingCuckoo::contains_ring(Hash128 h, uint64_t now) const {
    now = ring_.clamp(now);
    const Key k = split(h);
    for (size_t age = 0; age < ring_.size(); ++age) {
        const Gen &g = ring_[age];
        if (ring_.expired(g, now)) continue;
        if (g.table.contains(g.table.bucket_of(k.bucket_hash), k.fp)) return true;
    }
    return false;
}

bool RotatingCuckoo::remove(Hash128 h, uint64_t now) {
    const Plan p = plan(now);
    commit(p);  // removing allocates nothing: it cannot fail
    const Key k = split(h);
    for (size_t age = 0; age < ring_.size(); ++age) {
        Gen &g = ring_[age];
        if (ring_.expired(g, p.now)) continue;
        if (g.table.remove(g.table.bucket_of(k.bucket_hash), k.fp)) {
            loss_.removes++;
            return true;
        }
    }
    return false;
}

tf_status RotatingCuckoo::add_if_absent(Hash128 h, uint64_t now, bool *was_present) {
    const Key k = split(h);
    Plan p;
    bool present;
    const uint64_t t = ring_.clamp(now);
    if (ring_.size() == 1 && !ring_.expired(ring_.newest(), t)) {
        // One live table: nothing to drop or empty (what plan() would find
        // after its walk), and one probe.
        p = Plan{t, 0, false};
        const Table &t = ring_.newest().table;
        present = t.contains(t.bucket_of(k.bucket_hash), k.fp);
    } else {
        p = plan(now);
        // The tables a query at p.now ignores are the ones p drops or empties.
        present = contains_ring(h, p.now);
    }
    if (present) {
        commit(p);
        *was_present = true;
        return TF_OK;
    }
    tf_status st = insert(k, p);
    if (st != TF_OK) return st;
    *was_present = false;
    return TF_OK;
}

void RotatingCuckoo::contains_batch(const void *const *keys, const size_t *lens, size_t count, uint64_t now,
                                    int *out) const {
    Hash128 h[kBatchGroup];
    for (size_t base = 0; base < count; base += kBatchGroup) {
        const size_t n = std::min(kBatchGroup, count - base);
        const Table &t = ring_.newest().table;
        for (size_t i = 0; i < n; ++i) {
            h[i] = hash(keys[base + i], lens[base + i]);
            const Key k = split(h[i]);
            t.prefetch(t.bucket_of(k.bucket_hash), k.fp);
        }
        for (size_t i = 0; i < n; ++i) out[base + i] = contains(h[i], now) ? 1 : 0;
    }
}

tf_status RotatingCuckoo::add_if_absent_batch(const void *const *keys, const size_t *lens, size_t count, uint64_t now,
                                              int *out, size_t *done) {
    Hash128 h[kBatchGroup];
    for (size_t base = 0; base < count; base += kBatchGroup) {
        const size_t n = std::min(kBatchGroup, count - base);
        for (size_t i = 0; i < n; ++i) {
            h[i] = hash(keys[base + i], lens[base + i]);
            const Key k = split(h[i]);
            for (size_t age = 0; age < ring_.size() && age < 2; ++age) {
                const Table &t = ring_[age].table;
                t.prefetch(t.bucket_of(k.bucket_hash), k.fp);
            }
        }
        for (size_t i = 0; i < n; ++i) {
            bool present = false;
            tf_status st = add_if_absent(h[i], now, &present);
            if (st != TF_OK) {
                *done = base + i;
                return st;
            }
            out[base + i] = present ? 1 : 0;
        }
    }
    *done = count;
    return TF_OK;
}

tf_status RotatingCuckoo::clear() {
    // One empty table of the first size remains.
    Gen &newest = ring_.newest();
    if (newest.table.slots() != cfg_.table_slots) {
        TableSlot slot;
        tf_status st = new_table(cfg_.table_slots, cfg_, &slot);
        if (st != TF_OK) return st;
        while (ring_.size() > 0) ring_.retire_oldest();
        ring_.open(std::move(slot));
    } else {
        newest.table.clear();
        while (ring_.size() > 1) ring_.retire_oldest();
    }
    ring_.clear();
    loss_ = LossCounters();
    return TF_OK;
}

// ---- wire format ----------------------------------------------------------
//
// Payload of kind 5 (docs/wire-format.md), little-endian; the envelope's
// flags are the creation flags (TF_ROTATING_CUCKOO_THREE_WAY):
//
//   offset  size  field
//   0       8     table_slots: the first table's slots (a power of two,
//                 2 x slots_per_bucket .. 2^36)
//   8       8     max_memory: the cap (>= the fixed part + the first table,
//                 >= what the tables below hold)
//   16      8     ttl (0: none)
//   24      8     max_occupancy (f64, in (0, 1], resolved)
//   32      4     slots_per_bucket (1, 2, 4, 8)
//   36      4     max_kicks (1..4096)
//   40      4     max_tables (1..1024)
//   44      4     seed
//   48      8     clock: the highest time seen
//   56      8     opened_at: when the newest table opened (<= clock)
//   64      8     current: inserts into the newest table (= its owned)
//   72      8     inserts since creation or clear (>= every owned summed)
//   80      8     next_serial (= the newest table's serial + 1)
//   88      8     removes
//   96      8     forgotten_memory
//   104     8     forgotten_age
//   112     8     kick_rotations
//   120     8     fill_rotations
//   128     4     t: tables (1..max_tables)
//   132     4     reserved, 0
//   136     ...   t tables, oldest first, each:
//           8       serial (consecutive, the last = next_serial - 1)
//           8       slots s (a power of two, 2 x slots_per_bucket .. 2^36)
//           8       items: its non-zero slots, counted
//           8       last: its newest entry's time (<= clock)
//           8       owned: inserts made while it was the newest
//           8       ended: when it stopped being the newest (<= clock, not
//                   below the previous table's; 0 for the newest)
//           8 * s   its slots (u64 fingerprints, 0 = empty), bucket b at
//                   [b * slots_per_bucket, (b + 1) * slots_per_bucket)
namespace {
constexpr size_t kHeaderBytes = 136;
constexpr size_t kTableHeaderBytes = 48;
}  // namespace

size_t RotatingCuckoo::payload_size() const {
    size_t n = kHeaderBytes;
    for (const Gen &g : ring_) n += kTableHeaderBytes + size_t(g.table.slots()) * 8;
    return n;
}

void RotatingCuckoo::write_payload(wire::Writer &w) const {
    const RingCounters &c = ring_.counters();
    w.u64(cfg_.table_slots);
    w.u64(cfg_.max_memory);
    w.u64(cfg_.ttl);
    w.f64(cfg_.max_occupancy);
    w.u32(cfg_.slots_per_bucket);
    w.u32(cfg_.max_kicks);
    w.u32(cfg_.max_tables);
    w.u32(cfg_.seed);
    w.u64(c.clock);
    w.u64(c.opened_at);
    w.u64(c.current);
    w.u64(c.inserts);
    w.u64(c.next_serial);
    w.u64(loss_.removes);
    w.u64(loss_.forgotten_memory);
    w.u64(loss_.forgotten_age);
    w.u64(loss_.kick_rotations);
    w.u64(loss_.fill_rotations);
    w.u32(uint32_t(ring_.size()));
    w.u32(0);
    for (const Gen &g : ring_) {  // oldest first
        w.u64(g.serial);
        w.u64(g.table.slots());
        w.u64(g.table.items());
        w.u64(g.last);
        w.u64(g.owned);
        w.u64(g.ended);
        w.u64_array(g.table.raw().words(), size_t(g.table.slots()));
    }
}

tf_status RotatingCuckoo::read(wire::Reader &r, uint32_t flags, const DeserializeLimits &limits,
                               std::unique_ptr<RotatingCuckoo> *out) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.table_slots = r.u64();
    o.max_memory = r.u64();
    o.ttl = r.u64();
    o.max_occupancy = r.f64();
    o.slots_per_bucket = r.u32();
    o.max_kicks = r.u32();
    o.max_tables = r.u32();
    o.seed = r.u32();
    o.flags = flags;
    RingCounters c;
    c.clock = r.u64();
    c.opened_at = r.u64();
    c.current = r.u64();
    c.inserts = r.u64();
    c.next_serial = r.u64();
    LossCounters loss;
    loss.removes = r.u64();
    loss.forgotten_memory = r.u64();
    loss.forgotten_age = r.u64();
    loss.kick_rotations = r.u64();
    loss.fill_rotations = r.u64();
    const uint32_t tables = r.u32();
    const uint32_t reserved = r.u32();
    if (!r.ok()) return fail(TF_ERR_CORRUPT, "the payload is shorter than its header");
    if (!(o.max_occupancy > 0.0 && o.max_occupancy <= 1.0))
        return fail(TF_ERR_CORRUPT, "max_occupancy is %g, not in (0, 1]", o.max_occupancy);
    Config cfg;
    if (check(o, &cfg) != TF_OK) return fail_as(TF_ERR_CORRUPT, "rotating cuckoo blob");
    if (reserved != 0) return fail(TF_ERR_CORRUPT, "reserved field is %u, not 0", reserved);
    if (tables == 0 || tables > cfg.max_tables)
        return fail(TF_ERR_CORRUPT, "the blob holds %u tables; a filter has 1..max_tables (%u)", tables,
                    cfg.max_tables);
    if (c.opened_at > c.clock) return fail(TF_ERR_CORRUPT, "opened_at is after the clock");
    if (c.next_serial < tables) return fail(TF_ERR_CORRUPT, "next_serial is below the number of tables");
    if (c.current > c.inserts) return fail(TF_ERR_CORRUPT, "current exceeds inserts");

    // First pass: every table's fields, without allocating (not even a list
    // of them: a blob refused for max_memory has allocated nothing); the
    // second pass reads them again from `tables_at`.
    struct TableHead {
        uint64_t serial, slots, items, last, owned, ended;
    };
    const auto read_head = [](wire::Reader &from, TableHead *t) {
        t->serial = from.u64();
        t->slots = from.u64();
        t->items = from.u64();
        t->last = from.u64();
        t->owned = from.u64();
        t->ended = from.u64();
    };
    const wire::Reader tables_at = r;
    uint64_t memory = fixed_memory(cfg), owned = 0, prev_ended = 0;
    for (uint32_t i = 0; i < tables; ++i) {
        TableHead t;
        read_head(r, &t);
        if (!r.ok()) return fail(TF_ERR_CORRUPT, "table %u's header runs past the payload", i);
        const bool newest = i + 1 == tables;
        if (t.serial != c.next_serial - tables + i)
            return fail(TF_ERR_CORRUPT, "table %u has serial %llu, not %llu", i, (unsigned long long)t.serial,
                        (unsigned long long)(c.next_serial - tables + i));
        if (t.slots > TF_ROTATING_CUCKOO_MAX_TABLE_SLOTS || !Table::valid_shape(t.slots, cfg.slots_per_bucket))
            return fail(TF_ERR_CORRUPT, "table %u has %llu slots, not a power of two of 2 x %u .. 2^36", i,
                        (unsigned long long)t.slots, cfg.slots_per_bucket);
        if (t.slots > r.remaining() / 8)
            return fail(TF_ERR_CORRUPT, "table %u's %llu slots run past the payload", i, (unsigned long long)t.slots);
        if (t.last > c.clock || t.ended > c.clock)
            return fail(TF_ERR_CORRUPT, "table %u has a time after the clock", i);
        if (newest ? t.ended != 0 : t.ended < prev_ended)
            return fail(TF_ERR_CORRUPT, "table %u's end time is out of order", i);
        if (newest && t.owned != c.current)
            return fail(TF_ERR_CORRUPT, "the newest table's inserts differ from the current count");
        prev_ended = t.ended;
        if (t.owned > c.inserts - owned) return fail(TF_ERR_CORRUPT, "the tables' inserts exceed the total");
        owned += t.owned;
        const uint8_t *bytes = r.view(size_t(t.slots) * 8);
        uint64_t stored = 0;
        for (uint64_t s = 0; s < t.slots; ++s) {
            uint64_t v;
            std::memcpy(&v, bytes + s * 8, 8);
            stored += v != 0;
        }
        if (stored != t.items)
            return fail(TF_ERR_CORRUPT, "table %u says %llu items but holds %llu", i, (unsigned long long)t.items,
                        (unsigned long long)stored);
        memory += table_memory(t.slots);
    }
    if (!r.done()) return fail(TF_ERR_CORRUPT, "%zu bytes follow the last table", r.remaining());
    if (memory > cfg.max_memory)
        return fail(TF_ERR_CORRUPT, "the tables hold %llu bytes, above the blob's max_memory %llu",
                    (unsigned long long)memory, (unsigned long long)cfg.max_memory);
    tf_status st = limits.check_memory(memory);
    if (st != TF_OK) return st;

    // Second pass: allocate and fill.
    std::unique_ptr<RotatingCuckoo> f(new RotatingCuckoo());
    f->cfg_ = cfg;
    f->loss_ = loss;
    f->path_.assign(cfg.max_kicks, 0);
    f->ring_ = CuckooRing(Rotation::Fill, 0, cfg.ttl, 1);
    std::vector<Gen> gens;
    gens.reserve(cfg.max_tables);
    wire::Reader again = tables_at;
    for (uint32_t i = 0; i < tables; ++i) {
        TableHead t;
        read_head(again, &t);
        Gen g;
        g.table = Table(t.slots, cfg.slots_per_bucket, cfg.ways());
        wire::Reader slots(again.view(size_t(t.slots) * 8), size_t(t.slots) * 8);
        slots.u64_array(g.table.raw().words(), size_t(t.slots));
        g.table.set_items(t.items);
        g.serial = t.serial;
        g.last = t.last;
        g.owned = t.owned;
        g.ended = t.ended;
        gens.push_back(std::move(g));
    }
    c.budget = CuckooRing::kUnlimited;
    f->ring_.restore_generations(std::move(gens), c);
    *out = std::move(f);
    return TF_OK;
}

}  // namespace cuckoo
}  // namespace tf
