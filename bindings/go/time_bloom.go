package temporalfilters

import (
	"encoding"
	"fmt"
	"io"
	"math"
	"runtime"

	"temporalfilters/internal/native"
)

// TimeBloom is the time-limited Bloom filter: "was this key inserted within
// the last Span time units?" Its slices have sizes that follow the measured
// insertion rate and the time of their last insert; slices older than the
// span retire (never below K+L slices) and a query ignores them.
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
// Thread safety follows the C library: Contains, Stats, SliceBits, Info and
// the getters, Memory and Serialize may run concurrently with each other;
// Add, AddIfAbsent, Clear, UnmarshalBinary and Close need exclusive use.
type TimeBloom struct {
	h *handle
}

// TimeBloomInfo holds the parameters of a TimeBloom.
type TimeBloomInfo struct {
	K    uint32 // hash functions: bits set per insert, slices a query must match in a row
	L    uint32 // the minimum number of slices beyond the first K
	Span uint64 // the window, in the caller's time unit
	Seed uint32 // hash seed
}

// TimeBloomStats is the state of a TimeBloom at a time now.
type TimeBloomStats struct {
	Slices         uint64  // current number of slices (>= K+L)
	Bits           uint64  // total bits of all slices
	BitsPerElement float64 // Bits / inserts within the span (0 when none)
	Inserts        uint64  // inserts since creation or Clear
	FPRNow         float64 // false-positive rate for the measured fill, slices older than the span counting as empty
}

var timeBloomKind = &handleKind{
	name: "TimeBloom",
	del:  func(p uintptr) { native.DeleteTimeBloomNative(native.SwigcptrTimeBloomNative(p)) },
}

var (
	_ encoding.BinaryMarshaler   = (*TimeBloom)(nil)
	_ encoding.BinaryUnmarshaler = (*TimeBloom)(nil)
	_ io.Closer                  = (*TimeBloom)(nil)
	_ fmt.Stringer               = (*TimeBloom)(nil)
)

func newTimeBloom(n native.TimeBloomNative) (*TimeBloom, error) {
	h, err := adopt(timeBloomKind, n.Swigcptr())
	if err != nil {
		return nil, err
	}
	return &TimeBloom{h: h}, nil
}

// NewTimeBloom is the low-level constructor: K+L initial slices of
// sliceBits bits each.
//
// k is 1..64, l is 1..1024, sliceBits is 64..2^40, span >= l; seed is the
// hash seed. Errors: ErrInvalidArgument (a parameter out of range;
// sliceBits above 2^40 is ErrTooLarge), ErrOutOfMemory.
func NewTimeBloom(k, l uint32, sliceBits, span uint64, seed uint32) (f *TimeBloom, err error) {
	defer catch(&err)
	return newTimeBloom(native.NewTimeBloomNative(uint(k), uint(l), sliceBits, span, uint(seed), 0))
}

// NewTimeBloomFor creates a filter for the keys of the last span time units
// with a false-positive rate of at most errorRate, in (0, 1), at a steady
// rate: (k, l) from AgeBloomChoose, and K+L initial slices sized for
// initialCapacity (>= 1) inserts per span (the sizes adapt from the first
// shift on). span must be >= the chosen l: use a finer time unit (e.g.
// milliseconds) for short spans.
// Errors: ErrInvalidArgument, ErrTooLarge, ErrOutOfMemory.
func NewTimeBloomFor(errorRate float64, span, initialCapacity uint64, seed uint32) (f *TimeBloom, err error) {
	defer catch(&err)
	return newTimeBloom(native.TimeBloomNativeNew_for(initialCapacity, errorRate, span, uint(seed), 0))
}

// DeserializeTimeBloom creates a filter from a blob written by Serialize (in
// any language). The blob is checked completely first.
// Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
// ErrChecksum, ErrCorrupt, ErrOutOfMemory.
func DeserializeTimeBloom(blob []byte) (f *TimeBloom, err error) {
	defer catch(&err)
	return newTimeBloom(native.TimeBloomNativeDeserialize(blobArg(blob)))
}

// ptr returns the native handle, 0 when the filter is closed, zero or nil.
func (f *TimeBloom) ptr() native.SwigcptrTimeBloomNative {
	if f == nil {
		return 0
	}
	return native.SwigcptrTimeBloomNative(f.h.ptr())
}

func timeBloomClosed() error { return closedErrorOf("TimeBloom") }

// Close frees the filter's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error wrapping ErrNull. Close must
// not run concurrently with other calls on the same filter.
func (f *TimeBloom) Close() error {
	if f != nil {
		closeHandle(f.h)
	}
	return nil
}

// Add inserts key at time now (>= 1). A shift may allocate a new slice; if
// that fails the filter is unchanged (ErrOutOfMemory, or ErrTooLarge past
// 4096 slices, which a clock that never advances can cause). Needs
// exclusive use. Errors: ErrInvalidArgument (now == 0), ErrNull (closed).
func (f *TimeBloom) Add(key []byte, now uint64) (err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return timeBloomClosed()
	}
	p.Add(key, now)
	runtime.KeepAlive(f)
	return nil
}

// AddString is Add with a string key (its bytes, e.g. UTF-8).
func (f *TimeBloom) AddString(key string, now uint64) error {
	return f.Add(stringBytes(key), now)
}

// Contains reports whether key was (probably) inserted within the span
// before now (>= 1): false means it certainly was not.
// Errors: ErrInvalidArgument (now == 0), ErrNull (closed).
func (f *TimeBloom) Contains(key []byte, now uint64) (present bool, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return false, timeBloomClosed()
	}
	present = p.Contains(key, now) != 0
	runtime.KeepAlive(f)
	return present, nil
}

// ContainsString is Contains with a string key.
func (f *TimeBloom) ContainsString(key string, now uint64) (bool, error) {
	return f.Contains(stringBytes(key), now)
}

// AddIfAbsent is Contains then Add when absent, in one call: wasPresent is
// Contains's answer (a probable duplicate within the span). Needs exclusive
// use. Errors: as Add.
func (f *TimeBloom) AddIfAbsent(key []byte, now uint64) (wasPresent bool, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return false, timeBloomClosed()
	}
	wasPresent = p.Add_if_absent(key, now) != 0
	runtime.KeepAlive(f)
	return wasPresent, nil
}

// AddIfAbsentString is AddIfAbsent with a string key.
func (f *TimeBloom) AddIfAbsentString(key string, now uint64) (bool, error) {
	return f.AddIfAbsent(stringBytes(key), now)
}

// Clear forgets every key (slices keep their sizes; Inserts restarts at 0).
// Needs exclusive use. Errors: ErrNull (closed).
func (f *TimeBloom) Clear() (err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return timeBloomClosed()
	}
	p.Clear()
	runtime.KeepAlive(f)
	return nil
}

// Stats returns the state at time now (>= 1). FPRNow scans every slice
// (O(Bits/64)). Errors: ErrInvalidArgument (now == 0), ErrNull (closed).
func (f *TimeBloom) Stats(now uint64) (st TimeBloomStats, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return TimeBloomStats{}, timeBloomClosed()
	}
	s := p.Stats(now)
	defer native.DeleteTimeBloomStatsNative(s)
	st.BitsPerElement = s.GetBits_per_element()
	st.FPRNow = s.GetFpr_now()
	st.Slices = s.GetSlices()
	st.Bits = s.GetBits()
	st.Inserts = s.GetInserts()
	runtime.KeepAlive(f)
	return st, nil
}

// SliceBits returns the size in bits of slice i (0 = the newest; i below
// Stats(now).Slices). Errors: ErrInvalidArgument (no slice i), ErrNull.
func (f *TimeBloom) SliceBits(i uint64) (bits uint64, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return 0, timeBloomClosed()
	}
	bits = p.Slice_bits(i)
	runtime.KeepAlive(f)
	return bits, nil
}

// Info returns the filter's parameters. Errors: ErrNull (closed).
func (f *TimeBloom) Info() (info TimeBloomInfo, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return TimeBloomInfo{}, timeBloomClosed()
	}
	i := p.Info()
	defer native.DeleteTimeBloomInfoNative(i)
	info = TimeBloomInfo{
		K:    uint32(i.GetK()),
		L:    uint32(i.GetL()),
		Span: i.GetSpan(),
		Seed: uint32(i.GetSeed()),
	}
	runtime.KeepAlive(f)
	return info, nil
}

// Span returns the window in the caller's time unit. Errors: ErrNull.
func (f *TimeBloom) Span() (uint64, error) {
	info, err := f.Info()
	return info.Span, err
}

// Memory returns the bytes of C memory held by the filter. Errors: ErrNull.
func (f *TimeBloom) Memory() (bytes uint64, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return 0, timeBloomClosed()
	}
	bytes = p.Memory()
	runtime.KeepAlive(f)
	return bytes, nil
}

// Serialize writes the filter in the library's portable wire format (kind
// 3: every slice, size, timestamp and counter), readable by
// DeserializeTimeBloom and by the other languages' bindings.
// Errors: ErrNull (closed).
func (f *TimeBloom) Serialize() (blob []byte, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return nil, timeBloomClosed()
	}
	size := p.Serialized_size()
	if size > math.MaxInt {
		return nil, newError(StatusTooLarge, "the serialized TimeBloom does not fit in a Go slice")
	}
	blob = make([]byte, int(size))
	p.Serialize_into(blob)
	runtime.KeepAlive(f)
	return blob, nil
}

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (f *TimeBloom) MarshalBinary() ([]byte, error) {
	return f.Serialize()
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of f (zero, open or closed) with the filter in data, which it does
// not retain. On error f is unchanged. Needs exclusive use of f.
func (f *TimeBloom) UnmarshalBinary(data []byte) (err error) {
	defer catch(&err)
	if f == nil {
		return newError(StatusNull, "UnmarshalBinary into a nil *TimeBloom")
	}
	n := native.TimeBloomNativeDeserialize(blobArg(data))
	return replaceHandle(&f.h, timeBloomKind, n.Swigcptr())
}

// String describes the filter, e.g. "TimeBloom(k=3, l=4, span 1000, seed 42)".
func (f *TimeBloom) String() string {
	info, err := f.Info()
	if err != nil {
		return "TimeBloom(closed)"
	}
	return fmt.Sprintf("TimeBloom(k=%d, l=%d, span %d, seed %d)", info.K, info.L, info.Span, info.Seed)
}
