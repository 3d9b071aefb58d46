package temporalfilters

import (
	"fmt"
	"runtime"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/internal/native"
)

// RotatingCuckoo is the rotating cuckoo filter: "have I seen this key
// recently?" with no false positives in practice, in bounded memory, for
// de-duplicating streams (a false positive would silently drop a real
// event; a false negative only repeats one).
//
// A ring of cuckoo tables of 64-bit fingerprints. Inserts go to the newest
// table; when it reaches its maximum occupancy, or a kick chain exceeds its
// limit, a new table starts, sized from the recent insertion rate, within a
// memory cap; when the cap (or the table limit) would be exceeded the
// oldest table is dropped and its keys are forgotten (counted in
// Stats.ForgottenMemory).
//
// Guarantee: a key never added is reported present with a probability
// below 2^-48 (about 2^-55 with the default options). With a ttl, a key added at t is reported present until at
// least t + TTL, unless the memory cap dropped its table first; after that
// it may be forgotten. See temporalfilters/rotating_cuckoo.h.
//
// Timestamps are uint64 in the caller's own unit; 0 is rejected
// (ErrInvalidArgument). A clock that goes backwards is clamped to the
// highest time seen.
//
// Create one with NewRotatingCuckoo or DeserializeRotatingCuckoo, or decode
// into a zero RotatingCuckoo with UnmarshalBinary. Call Close when done.
// Copies of a RotatingCuckoo value share the same C filter.
//
// Thread safety follows the C library: Contains, ContainsBatch, Stats,
// Table, Info and the getters, Memory and Serialize may run concurrently
// with each other; Add, AddIfAbsent, AddIfAbsentBatch, Remove, Clear,
// UnmarshalBinary and Close need exclusive use.
type RotatingCuckoo struct {
	h *handle
}

// RotatingCuckoo's flags (TF_ROTATING_CUCKOO_*) and limits.
const (
	// RotatingCuckooThreeWay gives every key three candidate buckets instead
	// of two: tables fill further before kick chains fail, for a third
	// bucket read per query of a table.
	RotatingCuckooThreeWay RotatingCuckooFlags = RotatingCuckooFlags(native.TF_ROTATING_CUCKOO_THREE_WAY)
	// RotatingCuckooMaxTables is the most tables a filter may keep
	// (WithMaxTables).
	RotatingCuckooMaxTables uint32 = uint32(native.TF_ROTATING_CUCKOO_MAX_TABLES)
	// RotatingCuckooMaxKicks is the longest kick chain (WithMaxKicks).
	RotatingCuckooMaxKicks uint32 = uint32(native.TF_ROTATING_CUCKOO_MAX_KICKS)
)

// RotatingCuckooInfo holds what a RotatingCuckoo was created with, the
// defaults resolved.
type RotatingCuckooInfo struct {
	TableSlots     uint64              // slots of the first table (a power of two)
	MaxMemory      uint64              // the memory cap in bytes
	TTL            uint64              // the time to live in the caller's unit (0: none)
	MaxOccupancy   float64             // the fill at which a table stops taking inserts
	SlotsPerBucket uint32              // 1, 2, 4 or 8
	MaxKicks       uint32              // the kick chain limit
	MaxTables      uint32              // the most tables kept
	Seed           uint32              // hash seed
	Flags          RotatingCuckooFlags // the creation flags
	Ways           uint32              // candidate buckets per key: 2, or 3 with RotatingCuckooThreeWay
}

// RotatingCuckooStats is the state of a RotatingCuckoo at a time now.
type RotatingCuckooStats struct {
	Tables          uint64  // tables held (those older than the ttl included until a modifying call drops them)
	LiveTables      uint64  // tables a query at now may find
	Slots           uint64  // slots of every table held
	Items           uint64  // fingerprints stored in the live tables
	Load            float64 // Items / the live tables' slots (0 when none)
	NewestLoad      float64 // the newest table's fill
	Memory          uint64  // what Memory reports, in bytes
	BitsPerItem     float64 // bits of table memory per stored fingerprint in the live tables
	Inserts         uint64  // keys stored since creation or Clear
	Removes         uint64  // keys removed by Remove
	ForgottenMemory uint64  // keys forgotten because the memory cap or the table limit dropped their table
	ForgottenAge    uint64  // keys forgotten because their table grew older than the ttl
	KickRotations   uint64  // rotations caused by a kick chain exceeding its limit (nothing forgotten)
	FillRotations   uint64  // rotations caused by the newest table reaching its maximum occupancy
}

// RotatingCuckooTable is one table of a RotatingCuckoo at a time now.
type RotatingCuckooTable struct {
	Slots   uint64  // its slots (a power of two)
	Items   uint64  // fingerprints stored in it
	Load    float64 // Items / Slots
	Last    uint64  // the time of its newest entry (0: none yet)
	Serial  uint64  // its creation number (the newest has the highest)
	Expired bool    // a query at now ignores it (older than the ttl)
}

// NewRotatingCuckoo creates an empty filter of one table. Every option has
// the default of TF_ROTATING_CUCKOO_OPTIONS_INIT: WithTableSlots (16384),
// WithMaxMemory (the memory cap, 64 MiB), WithTTL (0: none),
// WithMaxOccupancy (0: the layout's measured one), WithSlotsPerBucket (4),
// WithMaxKicks (500), WithMaxTables (64), WithSeed (0), WithFlags
// (RotatingCuckooThreeWay or 0). Errors: ErrInvalidArgument (an option out
// of range; table slots above 2^36, or a first table that does not fit in
// the memory cap, is ErrTooLarge), ErrOutOfMemory.
func NewRotatingCuckoo(opts ...Option) (*RotatingCuckoo, error) {
	const what = "NewRotatingCuckoo"
	o := options{
		maxMemory:      native.TF_BINDING_ROTATING_CUCKOO_MAX_MEMORY,
		tableSlots:     native.TF_BINDING_ROTATING_CUCKOO_TABLE_SLOTS,
		ttl:            native.TF_BINDING_ROTATING_CUCKOO_TTL,
		maxOccupancy:   native.TF_BINDING_ROTATING_CUCKOO_MAX_OCCUPANCY,
		slotsPerBucket: uint32(native.TF_BINDING_ROTATING_CUCKOO_SLOTS_PER_BUCKET),
		maxKicks:       uint32(native.TF_BINDING_ROTATING_CUCKOO_MAX_KICKS),
		maxTables:      uint32(native.TF_BINDING_ROTATING_CUCKOO_MAX_TABLES),
	}
	given, flags, err := configure[RotatingCuckooFlags](what, optSeed|optFlags|optMaxMemory|optTableSlots|optTTL|
		optMaxOccupancy|optSlotsPerBucket|optMaxKicks|optMaxTables, opts)
	if err != nil {
		return nil, err
	}
	// the options given replace the defaults
	for _, c := range []struct {
		opt optionSet
		set func()
	}{
		{optMaxMemory, func() { o.maxMemory = given.maxMemory }},
		{optTableSlots, func() { o.tableSlots = given.tableSlots }},
		{optTTL, func() { o.ttl = given.ttl }},
		{optMaxOccupancy, func() { o.maxOccupancy = given.maxOccupancy }},
		{optSlotsPerBucket, func() { o.slotsPerBucket = given.slotsPerBucket }},
		{optMaxKicks, func() { o.maxKicks = given.maxKicks }},
		{optMaxTables, func() { o.maxTables = given.maxTables }},
	} {
		if given.given&c.opt != 0 {
			c.set()
		}
	}
	return construct[RotatingCuckoo](rotatingCuckooKind, func() uintptr {
		return native.NewRotatingCuckooNative(o.tableSlots, o.maxMemory, o.ttl, o.maxOccupancy,
			uint(o.slotsPerBucket), uint(o.maxKicks), uint(o.maxTables), uint(given.seed), uint(flags)).Swigcptr()
	})
}

// Add inserts key at time now (>= 1), or refreshes it: a key already in
// the newest table only refreshes that table's time. A rotation may
// allocate a new table; if that fails the filter is unchanged
// (ErrOutOfMemory). Needs exclusive use. Errors: ErrInvalidArgument (now ==
// 0), ErrClosed.
func (f *RotatingCuckoo) Add(key []byte, now uint64) error {
	return run(f.obj(), func(p rcNative) {
		k, kn := bridge.Key(key)
		p.Add(k, kn, now)
		runtime.KeepAlive(key)
	})
}

// AddString is Add with a string key (its bytes, e.g. UTF-8).
func (f *RotatingCuckoo) AddString(key string, now uint64) error {
	return f.Add(stringBytes(key), now)
}

// Contains reports whether key was added and not yet forgotten, at now
// (>= 1); true for a key never added has a probability below 2^-48.
// Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (f *RotatingCuckoo) Contains(key []byte, now uint64) (present bool, err error) {
	return call(f.obj(), func(p rcNative) bool {
		k, kn := bridge.Key(key)
		v := p.Contains(k, kn, now) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// ContainsString is Contains with a string key.
func (f *RotatingCuckoo) ContainsString(key string, now uint64) (bool, error) {
	return f.Contains(stringBytes(key), now)
}

// Remove removes the newest copy of key: removed is false when the key was
// not present (nothing changed). A key refreshed by Add after a rotation has
// an older copy too, which stays until it is removed as well or forgotten.
// Needs exclusive use. Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (f *RotatingCuckoo) Remove(key []byte, now uint64) (removed bool, err error) {
	return call(f.obj(), func(p rcNative) bool {
		k, kn := bridge.Key(key)
		v := p.Remove(k, kn, now) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// RemoveString is Remove with a string key.
func (f *RotatingCuckoo) RemoveString(key string, now uint64) (bool, error) {
	return f.Remove(stringBytes(key), now)
}

// AddIfAbsent is the de-duplication call: wasPresent tells whether key was
// present, and the key is added at now only when it was not. A hit writes
// nothing (it does not refresh the key; Add does). Needs exclusive use.
// Errors: as Add.
func (f *RotatingCuckoo) AddIfAbsent(key []byte, now uint64) (wasPresent bool, err error) {
	return call(f.obj(), func(p rcNative) bool {
		k, kn := bridge.Key(key)
		v := p.Add_if_absent(k, kn, now) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// AddIfAbsentString is AddIfAbsent with a string key.
func (f *RotatingCuckoo) AddIfAbsentString(key string, now uint64) (bool, error) {
	return f.AddIfAbsent(stringBytes(key), now)
}

// ContainsBatch is Contains(keys[i], now) for every key, in one call into C
// whose bucket reads overlap. Errors: ErrInvalidArgument (now == 0),
// ErrClosed.
func (f *RotatingCuckoo) ContainsBatch(keys [][]byte, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, rcNative.Contains_batch, now)
}

// ContainsBatchStrings is ContainsBatch with string keys.
func (f *RotatingCuckoo) ContainsBatchStrings(keys []string, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, rcNative.Contains_batch, now)
}

// AddIfAbsentBatch is AddIfAbsent(keys[i], now) for every key, in order, in
// one call into C: the same answers and the same filter as those single
// calls (a key repeated within the batch is present from its second
// occurrence on). Every argument is checked before anything changes. Needs
// exclusive use. Errors: ErrInvalidArgument (now == 0), ErrOutOfMemory (a
// new table did not fit: the keys before the failing one were added, their
// answers are not returned), ErrClosed.
func (f *RotatingCuckoo) AddIfAbsentBatch(keys [][]byte, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, rcNative.Add_if_absent_batch, now)
}

// AddIfAbsentBatchStrings is AddIfAbsentBatch with string keys.
func (f *RotatingCuckoo) AddIfAbsentBatchStrings(keys []string, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, rcNative.Add_if_absent_batch, now)
}

// Clear forgets every key: one empty table of the first table's size
// remains, the counters restart, the clock keeps its time. Needs exclusive
// use. Errors: ErrOutOfMemory (nothing changed), ErrClosed.
func (f *RotatingCuckoo) Clear() error {
	return run(f.obj(), rcNative.Clear)
}

// Stats returns the state at time now (>= 1), in O(tables).
// Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (f *RotatingCuckoo) Stats(now uint64) (RotatingCuckooStats, error) {
	stats := func(p rcNative) native.RotatingCuckooStatsNative { return p.Stats(now) }
	return nativeStruct[RotatingCuckooStats](f.obj(), stats, native.DeleteRotatingCuckooStatsNative)
}

// Table returns table i at time now (0 the newest, Stats(now).Tables-1 the
// oldest). Errors: ErrInvalidArgument (no table i, now == 0), ErrClosed.
func (f *RotatingCuckoo) Table(i, now uint64) (RotatingCuckooTable, error) {
	return call(f.obj(), func(p rcNative) RotatingCuckooTable {
		t := p.Table(i, now)
		if t == nil || t.Swigcptr() == 0 {
			return RotatingCuckooTable{} // the failure is raised by call
		}
		defer native.DeleteRotatingCuckooTableNative(t)
		return RotatingCuckooTable{Slots: t.GetSlots(), Items: t.GetItems(), Load: t.GetLoad(), Last: t.GetLast(),
			Serial: t.GetSerial(), Expired: t.GetExpired() != 0}
	})
}

// Info returns the filter's options, defaults resolved. Errors: ErrClosed.
func (f *RotatingCuckoo) Info() (RotatingCuckooInfo, error) { return rotatingCuckooInfo(f.obj()) }

// TableSlots returns the first table's slots; TTL the time to live (0:
// none); MaxMemory the memory cap. They are Info's fields, read once when
// the filter was created, deserialized or unmarshaled: they never call C
// and cannot fail (a closed filter keeps them; a zero or nil one returns 0).
func (f *RotatingCuckoo) TableSlots() uint64 { return cached[RotatingCuckooInfo](f.obj()).TableSlots }

// TTL returns the time to live in the caller's unit (0: none); see TableSlots.
func (f *RotatingCuckoo) TTL() uint64 { return cached[RotatingCuckooInfo](f.obj()).TTL }

// MaxMemory returns the memory cap in bytes; see TableSlots.
func (f *RotatingCuckoo) MaxMemory() uint64 { return cached[RotatingCuckooInfo](f.obj()).MaxMemory }

// String describes the filter, e.g. "RotatingCuckoo(16384 slots x 4, 2
// ways, ttl 0, seed 0)".
func (f *RotatingCuckoo) String() string {
	return describe("RotatingCuckoo", f.Info, func(i RotatingCuckooInfo) string {
		return fmt.Sprintf("%d slots x %d, %d ways, ttl %d, seed %d", i.TableSlots, i.SlotsPerBucket, i.Ways, i.TTL,
			i.Seed)
	})
}
