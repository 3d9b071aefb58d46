package temporalfilters

import (
	"fmt"
	"runtime"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/internal/native"
)

// TimeBloom is the time-limited Bloom filter: "was this key inserted within
// the last Span time units?" Its slices have sizes that follow the measured
// insertion rate and the time of their last insert; slices older than the
// span retire (down to the K newest; K+L in steady state) and a query
// ignores them.
//
// Guarantee: no false negatives within the span: a key added at time t is
// reported present at every now with now-Span <= t. At a steady insertion
// rate the false-positive rate is at most the target given to
// NewTimeBloomFor (its peak is AgeBloomFalsePositiveRate(K, L)); while the
// rate changes it may rise above it for about one span. See
// temporalfilters/time_bloom.h.
//
// Timestamps are uint64 in the caller's own unit, which must be fine enough
// that Span >= L; 0 is rejected (ErrInvalidArgument). A clock that goes
// backwards is clamped to the highest time seen.
//
// Create one with NewTimeBloom, NewTimeBloomFor or DeserializeTimeBloom, or
// decode into a zero TimeBloom with UnmarshalBinary. Call Close when done.
// Copies of a TimeBloom value share the same C filter.
//
// Thread safety follows the C library: Contains, ContainsBatch, Stats,
// SliceBits, Info and the getters, Memory and Serialize may run
// concurrently with each other; Add, AddIfAbsent, their batches, Clear,
// UnmarshalBinary and Close need exclusive use.
type TimeBloom struct {
	h *handle
}

// TimeBloomInfo holds the parameters of a TimeBloom.
type TimeBloomInfo struct {
	K     uint32         // hash functions: bits set per insert, slices a query must match in a row
	L     uint32         // the minimum number of slices beyond the first K
	Span  uint64         // the window, in the caller's time unit
	Seed  uint32         // hash seed
	Flags TimeBloomFlags // the creation flags: 0 (TimeBloomMinMemory is not recorded)
}

// TimeBloomStats is the state of a TimeBloom at a time now.
type TimeBloomStats struct {
	Slices         uint64  // current number of slices (>= K; K+L in steady state)
	Bits           uint64  // total bits of all slices
	BitsPerElement float64 // Bits / inserts within the span (0 when none)
	Inserts        uint64  // inserts since creation or Clear
	FPRNow         float64 // false-positive rate for the measured fill, slices older than the span counting as empty
}

// TimeBloomMinMemory makes NewTimeBloomFor choose the (k, l) with the
// fewest bits per element, however long its queries, as AgeBloomMinMemory
// does for AgeBloomChoose (without it, absent queries test at most
// AgeBloomProbeBudget slices in expectation). It is not recorded in the
// filter or its blob; NewTimeBloom refuses it.
const TimeBloomMinMemory TimeBloomFlags = TimeBloomFlags(native.TF_TIME_BLOOM_MIN_MEMORY)

// NewTimeBloom is the low-level constructor: K+L initial slices of
// sliceBits bits each.
//
// k is 1..64, l is 1..1024, sliceBits is 64..2^40, span >= l. Options:
// WithSeed (the hash seed, default 0), WithFlags (0: TimeBloomMinMemory is
// for NewTimeBloomFor). Errors: ErrInvalidArgument (a parameter out of range;
// sliceBits above 2^40 is ErrTooLarge), ErrOutOfMemory.
func NewTimeBloom(k, l uint32, sliceBits, span uint64, opts ...Option) (*TimeBloom, error) {
	return build[TimeBloom](timeBloomKind, "NewTimeBloom", optSeed|optFlags, opts,
		func(seed uint32, flags TimeBloomFlags) uintptr {
			return native.NewTimeBloomNative(uint(k), uint(l), sliceBits, span, uint(seed), uint(flags)).Swigcptr()
		})
}

// NewTimeBloomFor creates a filter for the keys of the last span time units
// with a false-positive rate of at most errorRate, in (0, 1), at a steady
// rate: (k, l) from AgeBloomChoose (with WithFlags(TimeBloomMinMemory),
// from AgeBloomChoose with AgeBloomMinMemory), and K+L initial slices sized for
// initialCapacity (>= 1) inserts per span (the sizes adapt from the first
// shift on). span must be >= the chosen l: use a finer time unit (e.g.
// milliseconds) for short spans. Options: WithSeed, WithFlags
// (TimeBloomMinMemory). Errors: ErrInvalidArgument, ErrTooLarge, ErrOutOfMemory.
func NewTimeBloomFor(initialCapacity uint64, errorRate float64, span uint64, opts ...Option) (*TimeBloom, error) {
	return build[TimeBloom](timeBloomKind, "NewTimeBloomFor", optSeed|optFlags, opts,
		func(seed uint32, flags TimeBloomFlags) uintptr {
			return native.TimeBloomNativeNew_for(initialCapacity, errorRate, span, uint(seed), uint(flags)).Swigcptr()
		})
}

// Add inserts key at time now (>= 1). A shift may allocate a new slice; if
// that fails the filter is unchanged (ErrOutOfMemory, or ErrTooLarge past
// 4096 slices, which a clock that never advances can cause). Needs
// exclusive use. Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (f *TimeBloom) Add(key []byte, now uint64) error {
	return run(f.obj(), func(p tbNative) {
		k, kn := bridge.Key(key)
		p.Add(k, kn, now)
		runtime.KeepAlive(key)
	})
}

// AddString is Add with a string key (its bytes, e.g. UTF-8).
func (f *TimeBloom) AddString(key string, now uint64) error {
	return f.Add(stringBytes(key), now)
}

// Contains reports whether key was (probably) inserted within the span
// before now (>= 1): false means it certainly was not.
// Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (f *TimeBloom) Contains(key []byte, now uint64) (present bool, err error) {
	return call(f.obj(), func(p tbNative) bool {
		k, kn := bridge.Key(key)
		v := p.Contains(k, kn, now) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// ContainsString is Contains with a string key.
func (f *TimeBloom) ContainsString(key string, now uint64) (bool, error) {
	return f.Contains(stringBytes(key), now)
}

// AddIfAbsent is Contains then Add when absent, in one call: wasPresent is
// Contains's answer (a probable duplicate within the span). Needs exclusive
// use. Errors: as Add.
func (f *TimeBloom) AddIfAbsent(key []byte, now uint64) (wasPresent bool, err error) {
	return call(f.obj(), func(p tbNative) bool {
		k, kn := bridge.Key(key)
		v := p.Add_if_absent(k, kn, now) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// AddIfAbsentString is AddIfAbsent with a string key.
func (f *TimeBloom) AddIfAbsentString(key string, now uint64) (bool, error) {
	return f.AddIfAbsent(stringBytes(key), now)
}

// AddBatch is Add(keys[i], now) for every key, in order, in one call into
// C that overlaps the keys' memory reads: the same filter as those single
// calls. Every argument is checked before anything changes. Needs
// exclusive use. Errors: ErrInvalidArgument (now == 0), ErrOutOfMemory or
// ErrTooLarge (as Add: the keys before the failing one were added),
// ErrClosed.
func (f *TimeBloom) AddBatch(keys [][]byte, now uint64) error {
	return timeBloomAddBatch(f, keys, now)
}

// AddBatchStrings is AddBatch with string keys.
func (f *TimeBloom) AddBatchStrings(keys []string, now uint64) error {
	return timeBloomAddBatch(f, keys, now)
}

func timeBloomAddBatch[K key](f *TimeBloom, keys []K, now uint64) error {
	_, err := batch(f.obj(), keys, func(p tbNative, data []byte, lens []int32) struct{} {
		p.Add_batch(data, lens, now)
		return struct{}{}
	})
	return err
}

// ContainsBatch is Contains(keys[i], now) for every key, in one call into
// C that overlaps the keys' memory reads. Errors: ErrInvalidArgument
// (now == 0), ErrClosed.
func (f *TimeBloom) ContainsBatch(keys [][]byte, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, tbNative.Contains_batch, now)
}

// ContainsBatchStrings is ContainsBatch with string keys.
func (f *TimeBloom) ContainsBatchStrings(keys []string, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, tbNative.Contains_batch, now)
}

// AddIfAbsentBatch is AddIfAbsent(keys[i], now) for every key, in order,
// in one call into C: the same answers and the same filter as those single
// calls (a key repeated within the batch is present from its second
// occurrence on). Needs exclusive use. Errors: as AddBatch (after
// ErrOutOfMemory or ErrTooLarge the answers are not returned).
func (f *TimeBloom) AddIfAbsentBatch(keys [][]byte, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, tbNative.Add_if_absent_batch, now)
}

// AddIfAbsentBatchStrings is AddIfAbsentBatch with string keys.
func (f *TimeBloom) AddIfAbsentBatchStrings(keys []string, now uint64) ([]bool, error) {
	return presentBatchAt(f.obj(), keys, tbNative.Add_if_absent_batch, now)
}

// Clear forgets every key (slices keep their sizes; Inserts restarts at 0).
// Needs exclusive use. Errors: ErrClosed.
func (f *TimeBloom) Clear() error {
	return run(f.obj(), tbNative.Clear)
}

// Stats returns the state at time now (>= 1). FPRNow scans every slice
// (O(Bits/64)). Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (f *TimeBloom) Stats(now uint64) (TimeBloomStats, error) {
	stats := func(p tbNative) native.TimeBloomStatsNative { return p.Stats(now) }
	return nativeStruct[TimeBloomStats](f.obj(), stats, native.DeleteTimeBloomStatsNative)
}

// SliceBits returns the size in bits of slice i (0 = the newest; i below
// Stats(now).Slices). Errors: ErrInvalidArgument (no slice i), ErrClosed.
func (f *TimeBloom) SliceBits(i uint64) (bits uint64, err error) {
	return call(f.obj(), func(p tbNative) uint64 { return p.Slice_bits(i) })
}

// Info returns the filter's parameters. Errors: ErrClosed.
func (f *TimeBloom) Info() (TimeBloomInfo, error) { return timeBloomInfo(f.obj()) }

// Span returns the window in the caller's time unit. It is Info's field,
// read once when the filter was created, deserialized or unmarshaled: it
// never calls C and cannot fail (a closed filter keeps it; a zero or nil one
// returns 0).
func (f *TimeBloom) Span() uint64 { return cached[TimeBloomInfo](f.obj()).Span }

// String describes the filter, e.g. "TimeBloom(k=3, l=4, span 1000, seed 42)".
func (f *TimeBloom) String() string {
	return describe("TimeBloom", f.Info, func(i TimeBloomInfo) string {
		return fmt.Sprintf("k=%d, l=%d, span %d, seed %d", i.K, i.L, i.Span, i.Seed)
	})
}
