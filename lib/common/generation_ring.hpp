// The generations of a structure that forgets by age: the age-partitioned
// Bloom filters (classic and blocked layouts: a count window; the
// time-limited filter: a time window) and the rotating cuckoo filter to
// come, whose tables rotate the same way.
//
// A structure that forgets by age keeps its keys in generations: inserts go
// to the newest, and a rotation closes the newest, opens a new one and
// retires the oldest (or, in a time window, whatever grew older than the
// window). The ring does that bookkeeping once for all of them: the
// generations in age order, their accounting (serial number, inserts
// received and made, times), the counters of the current generation, the
// clock, when a rotation is due, and what was retired. It knows nothing of
// bits, slices or tables: each generation carries a `Slot`, the storage's
// own part (a bit array, a table, or nothing when the storage keeps its
// slots elsewhere and finds them with slot_of()), and a rotation tells the
// storage which slot to empty or which one is new.
//
// Rotation, by what a structure configures:
//   Count  every `period` inserts (a count window: the age-partitioned
//          filter of section 5 of "Time-limited Bloom Filter", Rodrigues,
//          Shtul, Baquero, Almeida, ACM SAC 2023, g inserts per generation);
//   Time   every `span / per_span` time units (a window of `span` units in
//          `per_span` generations, with a catch-up after an idle gap);
//   Rate   when the generation's budget of inserts, which the structure
//          sets from the measured insertion rate (inserts_per_period(),
//          equation 6 of the paper), is spent, or once it has lasted a
//          period with at least one insert (section 6);
//   Fill   when the structure says so (the rotating cuckoo filter: its
//          newest table reached its occupancy, or a kick chain failed);
//          the span, if any, is the time after which a generation whose
//          last insert is older expires (expired()).
// A fixed ring (Count, Time) recycles its oldest generation as the newest;
// a growing ring (Rate, Fill) opens a new generation with its own slot and
// retires the old ones the structure says have expired.
//
// Retirement accounting: generations have consecutive serial numbers, so
// the retired ones are those below the oldest live serial
// (retired_generations()), and the inserts they held are the ones the live
// generations do not (retired_inserts()). A count rotation closes every
// generation after exactly `period` inserts, so its per-generation inserts
// follow from the counters and are not recorded (the count-window blobs
// carry 0 there); the other rotations record them (`owned`).
//
// Times are the caller's unit; 0 means "never". Not thread-safe (the
// structure's own rules apply). Operations that allocate give the strong
// guarantee: on std::bad_alloc nothing changed.
#ifndef TF_LIB_COMMON_GENERATION_RING_HPP
#define TF_LIB_COMMON_GENERATION_RING_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tf {

// The slot of a storage that keeps its generations' data itself (indexed by
// GenerationRing::slot_of).
struct NoSlot {};

// One generation: the storage's slot and the ring's accounting.
template <class Slot>
struct Generation : Slot {
    uint64_t serial = 0;    // creation number: consecutive, the newest has the highest
    uint64_t received = 0;  // inserts it received (an age-partitioned insert goes to the k newest)
    uint64_t last = 0;      // time of the last insert it received (0: none)
    uint64_t owned = 0;     // inserts made while it was the newest (not recorded by a count rotation)
    uint64_t ended = 0;     // time it stopped being the newest (0: not yet, or a count rotation)
};

// How a ring rotates (see above).
enum class Rotation : uint8_t { Count, Time, Rate, Fill };

// The counters of a ring, as a blob carries them (a structure validates
// them, then restores them with GenerationRing::restore).
struct RingCounters {
    uint64_t budget = 0;       // inserts left in the current generation
    uint64_t current = 0;      // inserts made in the current generation
    uint64_t opened_at = 0;    // time the current generation opened (0: no insert yet)
    uint64_t clock = 0;        // highest time seen
    uint64_t inserts = 0;      // since creation or clear
    uint64_t next_serial = 0;  // serial of the next generation to open
};

template <class Slot = NoSlot>
class GenerationRing {
   public:
    using Gen = Generation<Slot>;
    // The budget of a Time ring's generations, which end by time alone.
    static constexpr uint64_t kUnlimited = UINT64_MAX;

    GenerationRing() = default;
    // Count: `period` inserts per generation. Time and Rate: a window of
    // `span` time units in `per_span` generations (period span / per_span).
    GenerationRing(Rotation rotation, uint64_t period, uint64_t span, uint32_t per_span)
        : rotation_(rotation), period_(period), span_(span), per_span_(per_span) {
        c_.budget = initial_budget();
    }

    Rotation rotation() const { return rotation_; }
    // Count: inserts per generation; otherwise the whole time units of a period.
    uint64_t period() const { return rotation_ == Rotation::Count ? period_ : span_ / per_span_; }
    uint64_t span() const { return span_; }

    // ---- the generations, age 0 (the newest) first -----------------------
    // Stored oldest first: opening appends, retiring the oldest erases the
    // first element, and indexing by age costs no division: it counts back
    // from the end (g_[size() - 1 - age] divides the vector's byte length
    // by sizeof(Gen), which GCC 12 left in the Bloom filters' insert loop
    // when that size was 96: 20% of a time-limited filter's add).
    size_t size() const { return g_.size(); }
    Gen &operator[](size_t age) { return *(g_.end() - 1 - std::ptrdiff_t(age)); }
    const Gen &operator[](size_t age) const { return *(g_.end() - 1 - std::ptrdiff_t(age)); }
    Gen &newest() { return g_.back(); }
    const Gen &newest() const { return g_.back(); }
    const Gen &oldest() const { return g_.front(); }
    // A fixed ring's slot of the generation of this age, for a storage that
    // keeps its slots itself: serials are consecutive, so a generation
    // takes the slot its serial leaves modulo the ring's size.
    size_t slot_of(size_t age) const { return size_t((c_.next_serial - 1 - age) % g_.size()); }
    // In no particular order (oldest first).
    typename std::vector<Gen>::iterator begin() { return g_.begin(); }
    typename std::vector<Gen>::iterator end() { return g_.end(); }
    typename std::vector<Gen>::const_iterator begin() const { return g_.begin(); }
    typename std::vector<Gen>::const_iterator end() const { return g_.end(); }

    // ---- counters ---------------------------------------------------------
    const RingCounters &counters() const { return c_; }
    uint64_t budget() const { return c_.budget; }
    uint64_t current() const { return c_.current; }
    uint64_t inserts() const { return c_.inserts; }
    uint64_t next_serial() const { return c_.next_serial; }
    uint64_t clock() const { return c_.clock; }
    uint64_t opened_at() const { return c_.opened_at; }
    // The budget of the current generation (a Rate ring's structure sets it
    // after each rotation and clear; a Time ring's is kUnlimited).
    void set_budget(uint64_t budget) { c_.budget = budget; }

    // ---- building ---------------------------------------------------------
    // Appends a generation as the newest, with the next serial. Strong
    // guarantee.
    Gen &open(Slot &&slot) {
        Gen g;
        static_cast<Slot &>(g) = std::move(slot);
        g.serial = c_.next_serial;
        g_.push_back(std::move(g));  // may throw: nothing changed
        c_.next_serial++;
        return g_.back();
    }
    // The generations and counters read from a blob, oldest first, as they
    // were.
    void restore_generations(std::vector<Gen> &&oldest_first, const RingCounters &c) {
        g_ = std::move(oldest_first);
        c_ = c;
    }
    // A ring read from a blob that carries only its counters: `count`
    // generations with empty slots and no recorded accounting, serials up
    // to c.next_serial - 1 (c.next_serial >= count).
    void restore_fixed(size_t count, const RingCounters &c) {
        g_.assign(count, Gen());
        for (size_t i = 0; i < count; ++i) g_[i].serial = c.next_serial - count + i;
        c_ = c;
    }
    void reserve(size_t n) { g_.reserve(n); }

    // ---- time -------------------------------------------------------------
    // `now`, never below the highest time seen (a clock that goes backwards
    // is clamped).
    uint64_t clamp(uint64_t now) const { return now > c_.clock ? now : c_.clock; }
    // Takes `now` (clamped) as the clock; the current generation's period
    // starts at the first insert. Returns what undo() needs.
    RingCounters observe(uint64_t now) {
        const RingCounters before = c_;
        c_.clock = now;
        if (c_.opened_at == 0) c_.opened_at = now;
        return before;
    }
    // Undoes observe() when the operation it began failed.
    void undo(const RingCounters &before) {
        c_.clock = before.clock;
        c_.opened_at = before.opened_at;
    }
    // A generation whose last insert is older than the span at `now`: it
    // holds nothing a query of the window may find (equation 3).
    bool expired(const Gen &g, uint64_t now) const { return span_ != 0 && now > span_ && g.last < now - span_; }

    // ---- rotation ---------------------------------------------------------
    // Count: the current generation is full.
    bool full() const { return c_.budget == 0; }
    // The current generation has lasted a whole period with at least one
    // insert.
    bool period_over(uint64_t now) const { return c_.current > 0 && now - c_.opened_at >= period(); }
    // Whether an insert at `now` must rotate first.
    bool due(uint64_t now) const {
        switch (rotation_) {
            case Rotation::Count:
                return full();
            case Rotation::Time:
                return c_.opened_at != 0 && now - c_.opened_at >= period();
            case Rotation::Rate:
                return full() || period_over(now);
            case Rotation::Fill:
                return false;  // the structure decides
        }
        return false;
    }
    // Time: the rotations an insert at `now` needs, one per whole period
    // since the current generation opened, at most size() (a gap longer
    // than the window empties every generation).
    size_t rotations_due(uint64_t now) const {
        if (rotation_ != Rotation::Time || c_.opened_at == 0 || now <= c_.opened_at) return 0;
        const uint64_t n = (now - c_.opened_at) / period();
        return n < g_.size() ? size_t(n) : g_.size();
    }
    // A fixed ring's rotation: the oldest generation is retired and its slot
    // becomes the newest generation, with the next serial and a budget of
    // `budget` inserts (Count: period(); Time: kUnlimited). Returns it, for
    // the storage to empty its slot. Never allocates.
    Gen &recycle(uint64_t now, uint64_t budget) {
        close_current(now);
        std::rotate(g_.begin(), g_.begin() + 1, g_.end());
        Gen &g = g_.back();
        g.serial = c_.next_serial++;
        g.received = g.last = g.owned = g.ended = 0;
        c_.opened_at = now;
        c_.budget = budget;
        return g;
    }
    // A growing ring's rotation: a new newest generation with its own slot
    // (strong guarantee). The structure then retires what expired
    // (retire_oldest) and sets the new budget.
    Gen &rotate(Slot &&slot, uint64_t now) {
        Gen &g = open(std::move(slot));  // may throw: nothing changed
        if (g_.size() > 1) g_[g_.size() - 2].ended = now;
        c_.opened_at = now;
        c_.current = 0;
        return g;
    }
    // Retires the oldest generation; its slot goes with it.
    void retire_oldest() { g_.erase(g_.begin()); }

    // ---- inserts ----------------------------------------------------------
    // The generation of this age received an insert at `now`.
    void receive(size_t age, uint64_t now) {
        Gen &g = (*this)[age];
        g.received++;
        g.last = now;
    }
    // One insert made, in the newest generation. A count rotation closes
    // every generation after `period` inserts, so it records no
    // per-generation count (count_insert: the counters alone, the hot path
    // of the count windows); the others record it (record_insert).
    void count_insert() {
        c_.budget--;
        c_.current++;
        c_.inserts++;
    }
    void record_insert() {
        count_insert();
        g_.back().owned++;
    }

    // Forgets every insert: the generations keep their slots and serials,
    // the clock keeps its time, the current generation starts again
    // (budget: period() for Count, kUnlimited for Time, 0 for a Rate ring's
    // structure to set).
    void clear() {
        for (Gen &g : g_) g.received = g.last = g.owned = g.ended = 0;
        c_.inserts = c_.current = 0;
        c_.opened_at = 0;
        c_.budget = initial_budget();
    }

    // ---- accounting -------------------------------------------------------
    // Generations retired since creation: those below the oldest serial.
    uint64_t retired_generations() const { return g_.empty() ? c_.next_serial : g_.front().serial; }
    // The inserts the live generations hold.
    uint64_t live_inserts() const {
        if (rotation_ == Rotation::Count) {
            // every closed generation took exactly `period` inserts
            const uint64_t closed = c_.inserts - c_.current, room = uint64_t(g_.size() - 1) * period_;
            return c_.current + std::min(closed, room);
        }
        uint64_t n = 0;
        for (const Gen &g : g_) n += g.owned;
        return n;
    }
    // The inserts that left with the retired generations.
    uint64_t retired_inserts() const { return c_.inserts - live_inserts(); }

    // Inserts made within the span before `now` (clamped): each
    // generation's inserts taken as spread evenly between the end of the
    // one before it and its own end, and counted for the part of that
    // interval inside the span. A count ring (no times) holds
    // live_inserts().
    uint64_t inserts_within(uint64_t now) const {
        if (rotation_ == Rotation::Count) return live_inserts();
        now = clamp(now);
        if (now <= span_) return c_.inserts;
        const double cutoff = double(now - span_);
        double n = 0.0;
        for (size_t i = 0; i < g_.size(); ++i) {
            const Gen &g = (*this)[i];
            if (g.owned == 0) continue;
            const double end = double(i == 0 ? c_.clock : g.ended);
            const double start = i + 1 < g_.size() && (*this)[i + 1].ended != 0 ? double((*this)[i + 1].ended) : end;
            if (end < cutoff) continue;
            const double frac = end > start ? std::min(1.0, (end - cutoff) / (end - start)) : 1.0;
            n += frac * double(g.owned);
        }
        return uint64_t(std::llround(n));
    }

    // Rate: the inserts the current rate brings in one period (span /
    // per_span, not rounded), rounded up to a whole number of inserts,
    // at least 1. Equation 6 of the paper measures the rate over the last
    // generation alone; here it is measured over the most recent closed
    // generations that together cover at least one period, so that a burst
    // within one time unit neither divides by zero nor counts as a rate
    // sustained over the whole period. While the history is shorter than a
    // period it is extrapolated at most `max_extrapolation` times.
    //
    // Idle time is not traffic: a pause longer than a period is left out
    // of the measure, or the first period after it would be measured at a
    // fraction of its rate (a generation spanning a pause of P periods
    // with its few inserts looks like a rate P times lower) and sized in
    // tiny slices, each of which then limits the next k generations
    // (equations 4 and 7). Two cases are known exactly:
    //   - the current generation's last insert is the newest generation's
    //     `last`: a pause from it to `now` longer than a period is dropped,
    //     and the rate is the one of the traffic before the pause;
    //   - a closed generation's inserts all lie within one period of its
    //     start (an insert after that rotates first), so one that lasted
    //     more than two periods held a pause longer than a period: the
    //     measure stops before it, at the traffic that followed the pause
    //     (extrapolated at most `max_extrapolation` times, as in a new
    //     filter).
    double inserts_per_period(uint64_t now, double max_extrapolation) const {
        const double period = double(span_) / double(per_span_);
        double n = double(c_.current);
        uint64_t start = c_.opened_at;  // start of the generation being closed
        const uint64_t last = g_.empty() ? 0 : g_.back().last;
        const uint64_t end = last >= start && last != 0 && double(now - last) > period ? last : now;
        double elapsed = double(end - start);
        // (*this)[i] (i >= 1) owns the generation that ended when
        // (*this)[i-1]'s began; it began when (*this)[i+1]'s ended.
        for (size_t i = 1; elapsed < period && i + 1 < g_.size(); ++i) {
            const Gen &g = (*this)[i], &before = (*this)[i + 1];
            if (g.ended == 0 || before.ended == 0 || before.ended > start) break;
            const double lasted = double(start - before.ended);
            if (lasted > 2 * period) break;
            n += double(g.owned);
            elapsed += lasted;
            start = before.ended;
        }
        const double tg = n * std::min(period / std::max(elapsed, 1.0), max_extrapolation);
        // Generations are whole numbers of inserts: aim at the next whole
        // number, so that slots sized for exactly that many are not rounded
        // down at every generation.
        return std::max(std::ceil(tg - 1e-9), 1.0);
    }

   private:
    uint64_t initial_budget() const {
        switch (rotation_) {
            case Rotation::Count:
                return period_;
            case Rotation::Time:
            case Rotation::Fill:
                return kUnlimited;
            case Rotation::Rate:
                break;
        }
        return 0;
    }
    // The current generation ends at `now`.
    void close_current(uint64_t now) {
        if (!g_.empty()) g_.back().ended = now;
        c_.current = 0;
    }

    Rotation rotation_ = Rotation::Count;
    uint64_t period_ = 0;    // Count: inserts per generation
    uint64_t span_ = 0;      // Time, Rate: the window
    uint32_t per_span_ = 1;  // Time, Rate: generations per span
    RingCounters c_;
    std::vector<Gen> g_;  // oldest first
};

}  // namespace tf

#endif
