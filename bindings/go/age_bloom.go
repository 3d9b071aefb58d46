package temporalfilters

import (
	"encoding"
	"fmt"
	"io"
	"math"
	"runtime"

	"temporalfilters/internal/native"
)

// AgeBloom is the count-window age-partitioned Bloom filter: "was this key
// among the last N inserts?" It is a sequence of K+L slices of SliceBits
// bits; an insert sets one bit in each of the K newest slices, and every
// Generation inserts the slices shift (the oldest is emptied and becomes
// the newest).
//
// Guarantee: no false negatives within the window. Every key among the last
// Capacity = L*Generation inserts is reported present; any other key is
// reported present with probability at most AgeBloomFalsePositiveRate(K, L).
// Keys inserted between L*Generation and (L+1)*Generation inserts ago may
// still be reported present. See temporalfilters/age_bloom.h.
//
// Two layouts share this type. The classic one (NewAgeBloom,
// NewAgeBloomFor) keeps each slice in its own array. The blocked one
// (NewBlockedAgeBloom, NewBlockedAgeBloomFor) has the same window and the
// same guarantee with K+L <= 32 slices stored as the 32-bit lanes of 64-byte
// lines, so a query reads one or two cache lines instead of one per slice:
// several times faster, for more memory (about 23 bits per element at 1e-2
// and 35 at 1e-3, against 20 and 26; below 1e-3 the classic layout is the
// better choice). Its sizing (AgeBloomChooseBlocked) uses a conservative
// model of the blocking, which AgeBloomFalsePositiveRate does not describe;
// Stats().FPRNow reports the model's rate. Every method works on both
// layouts; IsBlocked (and Info().Blocked) tells which, and the blob records
// it.
//
// Create one with NewAgeBloom, NewAgeBloomFor, NewBlockedAgeBloom,
// NewBlockedAgeBloomFor or DeserializeAgeBloom, or decode into a zero
// AgeBloom with UnmarshalBinary. Call Close when done. Copies of an AgeBloom
// value share the same C filter.
//
// Thread safety follows the C library, for either layout: Contains, Stats,
// Info and the getters (IsBlocked among them), Memory and Serialize may run
// concurrently with each other; Add, AddIfAbsent, Clear, UnmarshalBinary and
// Close need exclusive use. The constructors and sizing helpers are safe
// from any goroutine.
type AgeBloom struct {
	h *handle
}

// AgeBloomInfo holds the parameters of an AgeBloom.
type AgeBloomInfo struct {
	K          uint32 // hash functions: bits set per insert, slices a query must match in a row
	L          uint32 // slices beyond the first K: the window is L generations
	SliceBits  uint64 // bits per slice (blocked: a multiple of 32)
	Generation uint64 // inserts between two shifts
	Capacity   uint64 // the guaranteed window, L*Generation inserts
	Seed       uint32 // hash seed
	Blocked    bool   // the blocked layout (false: the classic one)
}

// AgeBloomStats is the current state of an AgeBloom.
type AgeBloomStats struct {
	Slices         uint64  // K+L
	Bits           uint64  // total bits of all slices (blocked: of all 64-byte lines, unused lanes included)
	BitsPerElement float64 // Bits / Capacity
	Inserts        uint64  // inserts since creation or Clear
	FPRNow         float64 // false-positive rate for the measured fill of every slice (blocked: the layout's conservative model)
}

var ageBloomKind = &handleKind{
	name: "AgeBloom",
	del:  func(p uintptr) { native.DeleteAgeBloomNative(native.SwigcptrAgeBloomNative(p)) },
}

var (
	_ encoding.BinaryMarshaler   = (*AgeBloom)(nil)
	_ encoding.BinaryUnmarshaler = (*AgeBloom)(nil)
	_ io.Closer                  = (*AgeBloom)(nil)
	_ fmt.Stringer               = (*AgeBloom)(nil)
)

func newAgeBloom(n native.AgeBloomNative) (*AgeBloom, error) {
	h, err := adopt(ageBloomKind, n.Swigcptr())
	if err != nil {
		return nil, err
	}
	return &AgeBloom{h: h}, nil
}

// NewAgeBloom is the low-level constructor: K+L slices of sliceBits bits,
// generation max(1, floor(sliceBits*ln 2/k)), capacity l*generation.
//
// k is 1..64, l is 1..1024, sliceBits is 64..2^40; seed is the hash seed.
// Errors: ErrInvalidArgument (k, l or sliceBits out of range; sliceBits
// above 2^40 is ErrTooLarge), ErrOutOfMemory.
func NewAgeBloom(k, l uint32, sliceBits uint64, seed uint32) (f *AgeBloom, err error) {
	defer catch(&err)
	return newAgeBloom(native.NewAgeBloomNative(uint(k), uint(l), sliceBits, uint(seed), 0))
}

// NewAgeBloomFor creates a filter that remembers at least the last capacity
// (>= 1) inserts with a false-positive rate of at most errorRate, in (0, 1):
// (k, l) from AgeBloomChoose, generation ceil(capacity/l).
// Errors: ErrInvalidArgument, ErrTooLarge (errorRate too small to meet, or
// slices over 2^40 bits), ErrOutOfMemory.
func NewAgeBloomFor(errorRate float64, capacity uint64, seed uint32) (f *AgeBloom, err error) {
	defer catch(&err)
	return newAgeBloom(native.AgeBloomNativeNew_for(capacity, errorRate, uint(seed), 0))
}

// NewBlockedAgeBloom is the low-level constructor of the blocked layout:
// K+L slices of sliceBits bits rounded up to a multiple of 32, generation
// max(1, floor(roundedBits*ln 2/k)), capacity l*generation. Memory:
// ceil((k+l)/16) lines of 64 bytes per 32 bits of slice (unused lanes
// included).
//
// k >= 1 and l >= 1 with k+l <= 32, sliceBits is 32..2^40; seed is the hash
// seed. Errors: ErrInvalidArgument (k or l of 0, k+l > 32, sliceBits below
// 32; sliceBits above 2^40 is ErrTooLarge), ErrOutOfMemory.
func NewBlockedAgeBloom(k, l uint32, sliceBits uint64, seed uint32) (f *AgeBloom, err error) {
	defer catch(&err)
	return newAgeBloom(native.NewAgeBloomNative(uint(k), uint(l), sliceBits, uint(seed), ageBloomBlockedFlag))
}

// NewBlockedAgeBloomFor creates a filter of the blocked layout that
// remembers at least the last capacity (>= 1) inserts with a false-positive
// rate of at most errorRate, in (0, 0.2]: (k, l) and the fill from
// AgeBloomChooseBlocked, generation ceil(capacity/l), slices of
// k*generation / -ln(1-fill) bits rounded up to a multiple of 32.
// Errors: ErrInvalidArgument, ErrTooLarge (errorRate too small to meet, or
// slices over 2^40 bits), ErrOutOfMemory.
func NewBlockedAgeBloomFor(errorRate float64, capacity uint64, seed uint32) (f *AgeBloom, err error) {
	defer catch(&err)
	return newAgeBloom(native.AgeBloomNativeNew_for(capacity, errorRate, uint(seed), ageBloomBlockedFlag))
}

// DeserializeAgeBloom creates a filter from a blob written by Serialize (in
// any language), of either layout (the blob says which). The blob is checked
// completely first.
// Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
// ErrChecksum, ErrCorrupt, ErrOutOfMemory.
func DeserializeAgeBloom(blob []byte) (f *AgeBloom, err error) {
	defer catch(&err)
	return newAgeBloom(native.AgeBloomNativeDeserialize(blobArg(blob)))
}

// AgeBloomChoose is the sizing helper shared by both Bloom filters: the
// (k, l) pair whose steady-state false-positive rate is at most errorRate,
// in (0, 1), with the fewest bits per element (l is capped at 256).
// Errors: ErrInvalidArgument (errorRate NaN or outside (0, 1)), ErrTooLarge
// (no pair with k <= 64 meets it).
func AgeBloomChoose(errorRate float64) (k, l uint32, err error) {
	defer catch(&err)
	k = uint32(native.AgeBloomNativeChoose_k(errorRate, 0))
	l = uint32(native.AgeBloomNativeChoose_l(errorRate, 0))
	return k, l, nil
}

// AgeBloomChooseBlocked is the sizing helper of the blocked layout: the
// (k, l), with k+l of 16 or 32, and the fill ratio of a slice leaving the
// first k (in (0, 1)) that meet errorRate, in (0, 0.2], with the fewest bits
// per element under the layout's conservative model.
// Errors: ErrInvalidArgument (errorRate NaN or outside (0, 0.2]: above, the
// model is not conservative; use the classic layout), ErrTooLarge (no
// blocked pair meets it: below about 1e-18; far below 1e-3 the classic
// layout is the better choice anyway).
func AgeBloomChooseBlocked(errorRate float64) (k, l uint32, fill float64, err error) {
	defer catch(&err)
	k = uint32(native.AgeBloomNativeChoose_k(errorRate, ageBloomBlockedFlag))
	l = uint32(native.AgeBloomNativeChoose_l(errorRate, ageBloomBlockedFlag))
	fill = native.AgeBloomNativeChoose_fill(errorRate, ageBloomBlockedFlag)
	return k, l, fill, nil
}

// AgeBloomFalsePositiveRate is the exact steady-state false-positive rate of
// a filter of the classic layout with parameters (k, l), at its peak just
// before a shift; also the worst case of a TimeBloom at a steady rate.
// Errors: ErrInvalidArgument (k not in 1..64 or l not in 1..1024).
func AgeBloomFalsePositiveRate(k, l uint32) (rate float64, err error) {
	defer catch(&err)
	return native.AgeBloomNativeFalse_positive_rate(uint(k), uint(l)), nil
}

// AgeBloomBitsPerElement is the memory of a filter with parameters (k, l) in
// bits per element of capacity at steady state, (k+l)k / (l ln 2).
// Errors: ErrInvalidArgument (k or l out of range).
func AgeBloomBitsPerElement(k, l uint32) (bits float64, err error) {
	defer catch(&err)
	return native.AgeBloomNativeSteady_bits_per_element(uint(k), uint(l)), nil
}

// ptr returns the native handle, 0 when the filter is closed, zero or nil.
func (f *AgeBloom) ptr() native.SwigcptrAgeBloomNative {
	if f == nil {
		return 0
	}
	return native.SwigcptrAgeBloomNative(f.h.ptr())
}

func ageBloomClosed() error { return closedErrorOf("AgeBloom") }

// Close frees the filter's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error wrapping ErrNull. Close must
// not run concurrently with other calls on the same filter.
func (f *AgeBloom) Close() error {
	if f != nil {
		closeHandle(f.h)
	}
	return nil
}

// Add inserts key (shifting the slices first when the generation is full).
// Needs exclusive use. Errors: ErrNull (closed).
func (f *AgeBloom) Add(key []byte) (err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return ageBloomClosed()
	}
	p.Add(key)
	runtime.KeepAlive(f)
	return nil
}

// AddString is Add with a string key (its bytes, e.g. UTF-8).
func (f *AgeBloom) AddString(key string) error {
	return f.Add(stringBytes(key))
}

// Contains reports whether key is (probably) among the last inserts: false
// means it is certainly not among the last Capacity inserts.
// Errors: ErrNull (closed).
func (f *AgeBloom) Contains(key []byte) (present bool, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return false, ageBloomClosed()
	}
	present = p.Contains(key) != 0
	runtime.KeepAlive(f)
	return present, nil
}

// ContainsString is Contains with a string key.
func (f *AgeBloom) ContainsString(key string) (bool, error) {
	return f.Contains(stringBytes(key))
}

// AddIfAbsent is de-duplication in one call: it returns what Contains would
// have said, and inserts key only when it was absent. wasPresent true means
// a (probable) duplicate. Needs exclusive use. Errors: ErrNull (closed).
func (f *AgeBloom) AddIfAbsent(key []byte) (wasPresent bool, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return false, ageBloomClosed()
	}
	wasPresent = p.Add_if_absent(key) != 0
	runtime.KeepAlive(f)
	return wasPresent, nil
}

// AddIfAbsentString is AddIfAbsent with a string key.
func (f *AgeBloom) AddIfAbsentString(key string) (bool, error) {
	return f.AddIfAbsent(stringBytes(key))
}

// Clear forgets every key (the shape stays; Inserts restarts at 0). Needs
// exclusive use. Errors: ErrNull (closed).
func (f *AgeBloom) Clear() (err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return ageBloomClosed()
	}
	p.Clear()
	runtime.KeepAlive(f)
	return nil
}

// Stats returns the current state. FPRNow scans every slice (O(Bits/64)).
// Errors: ErrNull (closed).
func (f *AgeBloom) Stats() (st AgeBloomStats, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return AgeBloomStats{}, ageBloomClosed()
	}
	s := p.Stats()
	defer native.DeleteAgeBloomStatsNative(s)
	st = AgeBloomStats{
		Slices:         s.GetSlices(),
		Bits:           s.GetBits(),
		BitsPerElement: s.GetBits_per_element(),
		Inserts:        s.GetInserts(),
		FPRNow:         s.GetFpr_now(),
	}
	runtime.KeepAlive(f)
	return st, nil
}

// Info returns the filter's parameters. Errors: ErrNull (closed).
func (f *AgeBloom) Info() (info AgeBloomInfo, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return AgeBloomInfo{}, ageBloomClosed()
	}
	i := p.Info()
	defer native.DeleteAgeBloomInfoNative(i)
	info = AgeBloomInfo{
		K:          uint32(i.GetK()),
		L:          uint32(i.GetL()),
		SliceBits:  i.GetSlice_bits(),
		Generation: i.GetGeneration(),
		Capacity:   i.GetCapacity(),
		Seed:       uint32(i.GetSeed()),
		Blocked:    i.GetFlags()&ageBloomBlockedFlag != 0,
	}
	runtime.KeepAlive(f)
	return info, nil
}

// IsBlocked reports whether the filter has the blocked layout
// (NewBlockedAgeBloom, NewBlockedAgeBloomFor, or a blob of one).
// Errors: ErrNull (closed).
func (f *AgeBloom) IsBlocked() (blocked bool, err error) {
	info, err := f.Info()
	return info.Blocked, err
}

// TF_AGE_BLOOM_BLOCKED
const ageBloomBlockedFlag = 1

// Capacity returns the guaranteed window in inserts, L*Generation.
// Errors: ErrNull (closed).
func (f *AgeBloom) Capacity() (uint64, error) {
	info, err := f.Info()
	return info.Capacity, err
}

// Memory returns the bytes of C memory held by the filter. Errors: ErrNull.
func (f *AgeBloom) Memory() (bytes uint64, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return 0, ageBloomClosed()
	}
	bytes = p.Memory()
	runtime.KeepAlive(f)
	return bytes, nil
}

// Serialize writes the filter in the library's portable wire format (kind
// 2: little-endian, checksummed), readable by DeserializeAgeBloom and by the
// other languages' bindings. Errors: ErrNull (closed).
func (f *AgeBloom) Serialize() (blob []byte, err error) {
	defer catch(&err)
	p := f.ptr()
	if p == 0 {
		return nil, ageBloomClosed()
	}
	size := p.Serialized_size()
	if size > math.MaxInt {
		return nil, newError(StatusTooLarge, "the serialized AgeBloom does not fit in a Go slice")
	}
	blob = make([]byte, int(size))
	p.Serialize_into(blob)
	runtime.KeepAlive(f)
	return blob, nil
}

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (f *AgeBloom) MarshalBinary() ([]byte, error) {
	return f.Serialize()
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of f (zero, open or closed) with the filter in data, which it does
// not retain. On error f is unchanged. Needs exclusive use of f.
func (f *AgeBloom) UnmarshalBinary(data []byte) (err error) {
	defer catch(&err)
	if f == nil {
		return newError(StatusNull, "UnmarshalBinary into a nil *AgeBloom")
	}
	n := native.AgeBloomNativeDeserialize(blobArg(data))
	return replaceHandle(&f.h, ageBloomKind, n.Swigcptr())
}

// String describes the filter, e.g. "AgeBloom(k=3, l=4, 200-bit slices,
// capacity 184, seed 42)", or "AgeBloom(blocked, k=3, ...)" for the blocked
// layout.
func (f *AgeBloom) String() string {
	info, err := f.Info()
	if err != nil {
		return "AgeBloom(closed)"
	}
	layout := ""
	if info.Blocked {
		layout = "blocked, "
	}
	return fmt.Sprintf("AgeBloom(%sk=%d, l=%d, %d-bit slices, capacity %d, seed %d)",
		layout, info.K, info.L, info.SliceBits, info.Capacity, info.Seed)
}
