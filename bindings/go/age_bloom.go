package temporalfilters

import (
	"fmt"
	"runtime"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/internal/native"
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
// Keys inserted between L*Generation and (K+L)*Generation inserts ago may
// still be reported present, fewer and fewer as their slices leave. See
// temporalfilters/age_bloom.h.
//
// Two layouts share this type, chosen by a flag. The classic one (flags 0)
// keeps each slice in its own array. The blocked one
// (WithFlags(AgeBloomBlocked)) has the same window and the same guarantee
// with K+L <= 32 slices stored as the 32-bit lanes of 64-byte lines, so a
// query reads one or two cache lines instead of one per slice: several
// times faster, for more memory (about 23 bits per element at 1e-2 and 35
// at 1e-3, against 20 and 26; below 1e-3 the classic layout is the better
// choice). Its sizing (AgeBloomChoose with the flag) uses a conservative
// model of the blocking, which AgeBloomFalsePositiveRate does not describe;
// Stats().FPRNow reports the model's rate. Every method works on both
// layouts; Info().Flags tells which, and the blob records it.
//
// Create one with NewAgeBloom, NewAgeBloomFor or DeserializeAgeBloom, or
// decode into a zero AgeBloom with UnmarshalBinary. Call Close when done.
// Copies of an AgeBloom value share the same C filter.
//
// Thread safety follows the C library, for either layout: Contains,
// ContainsBatch, Stats, Info and the getters, Memory and Serialize may run
// concurrently with each other; Add, AddIfAbsent, their batches, Clear,
// UnmarshalBinary and Close need exclusive use. The constructors and sizing helpers are safe
// from any goroutine.
type AgeBloom struct {
	h *handle
}

// AgeBloomInfo holds the parameters of an AgeBloom.
type AgeBloomInfo struct {
	K          uint32        // hash functions: bits set per insert, slices a query must match in a row
	L          uint32        // slices beyond the first K: the window is L generations
	SliceBits  uint64        // bits per slice (blocked: a multiple of 32)
	Generation uint64        // inserts between two shifts
	Capacity   uint64        // the guaranteed window, L*Generation inserts
	Seed       uint32        // hash seed
	Flags      AgeBloomFlags // AgeBloomBlocked (the blocked layout) or 0; AgeBloomMinMemory is not recorded
}

// AgeBloomStats is the current state of an AgeBloom.
type AgeBloomStats struct {
	Slices         uint64  // K+L
	Bits           uint64  // total bits of all slices (blocked: of all 64-byte lines, unused lanes included)
	BitsPerElement float64 // Bits / Capacity
	Inserts        uint64  // inserts since creation or Clear
	FPRNow         float64 // false-positive rate for the measured fill of every slice (blocked: the layout's conservative model)
}

// The creation flags of an AgeBloom (WithFlags), the C library's
// TF_AGE_BLOOM_* values.
const (
	// AgeBloomBlocked selects the blocked layout: K+L <= 32 slices as the
	// 32-bit lanes of 64-byte lines (see AgeBloom).
	AgeBloomBlocked AgeBloomFlags = AgeBloomFlags(native.TF_AGE_BLOOM_BLOCKED)
	// AgeBloomMinMemory makes AgeBloomChoose and NewAgeBloomFor (classic
	// layout) choose the (k, l) with the fewest bits per element, however
	// long its queries: at 1e-2 (12, 87), 19.70 bits and 16.2 slices tested
	// per absent key, against the default (10, 24), 20.44 bits and 5.8. It
	// is not recorded in the filter or its blob; it is refused with
	// AgeBloomBlocked and by NewAgeBloom (the caller gives (k, l)).
	AgeBloomMinMemory AgeBloomFlags = AgeBloomFlags(native.TF_AGE_BLOOM_MIN_MEMORY)
)

// AgeBloomProbeBudget is the default choice's bound on the slices a query
// for an absent key tests in expectation, at the filter's worst moment
// (TF_AGE_BLOOM_PROBE_BUDGET, 6): AgeBloomChoose picks the fewest bits per
// element among the pairs whose AgeBloomExpectedProbes absent count is at
// most this.
const AgeBloomProbeBudget float64 = native.TF_AGE_BLOOM_PROBE_BUDGET

// NewAgeBloom is the low-level constructor: K+L slices of sliceBits bits,
// generation max(1, floor(sliceBits*ln 2/k)), capacity l*generation.
//
// Classic layout: k is 1..64, l is 1..1024, sliceBits is 64..2^40. Blocked
// layout (WithFlags(AgeBloomBlocked)): k >= 1 and l >= 1 with k+l <= 32,
// sliceBits is 32..2^40, rounded up to a multiple of 32; memory
// ceil((k+l)/16) lines of 64 bytes per 32 bits of slice (unused lanes
// included). Options: WithSeed (the hash seed, default 0), WithFlags
// (AgeBloomBlocked; default 0, the classic layout; AgeBloomMinMemory is
// refused: it is for the sizing helpers).
// Errors: ErrInvalidArgument (k, l or sliceBits out of range; sliceBits
// above 2^40 is ErrTooLarge), ErrOutOfMemory.
func NewAgeBloom(k, l uint32, sliceBits uint64, opts ...Option) (*AgeBloom, error) {
	return build[AgeBloom](ageBloomKind, "NewAgeBloom", optSeed|optFlags, opts,
		func(seed uint32, flags AgeBloomFlags) uintptr {
			return native.NewAgeBloomNative(uint(k), uint(l), sliceBits, uint(seed), uint(flags)).Swigcptr()
		})
}

// NewAgeBloomFor creates a filter that remembers at least the last capacity
// (>= 1) inserts with a false-positive rate of at most errorRate: (k, l)
// (and the fill) from AgeBloomChoose with the same flags, generation
// ceil(capacity/l); blocked, slices of k*generation / -ln(1-fill) bits
// rounded up to a multiple of 32. errorRate is in (0, 1), (0, 0.2] for the
// blocked layout. Options: WithSeed, WithFlags (AgeBloomBlocked or
// AgeBloomMinMemory, as AgeBloomChoose).
// Errors: ErrInvalidArgument, ErrTooLarge (errorRate too small to meet, or
// slices over 2^40 bits), ErrOutOfMemory.
func NewAgeBloomFor(capacity uint64, errorRate float64, opts ...Option) (*AgeBloom, error) {
	return build[AgeBloom](ageBloomKind, "NewAgeBloomFor", optSeed|optFlags, opts,
		func(seed uint32, flags AgeBloomFlags) uintptr {
			return native.AgeBloomNativeNew_for(capacity, errorRate, uint(seed), uint(flags)).Swigcptr()
		})
}

// AgeBloomChoose is the sizing helper of both Bloom filters: the (k, l)
// pair whose steady-state false-positive rate is at most errorRate with the
// fewest bits per element, and fill, the fill ratio of a slice leaving the
// first k.
//
// Classic layout (flags 0; the TimeBloom's sizing too): errorRate in
// (0, 1), l capped at 256, fill 1/2, and absent queries testing at most
// AgeBloomProbeBudget slices in expectation (AgeBloomExpectedProbes): at
// 1e-2 (10, 24), at 1e-3 (14, 36). WithFlags(AgeBloomMinMemory) drops that
// bound: (12, 87) and (16, 139), 4-9% less memory for about three times
// the probes. Blocked layout
// (WithFlags(AgeBloomBlocked)): errorRate in (0, 0.2], k+l of 16 or 32 and
// the fill in (0, 1) that meet it under the layout's conservative model.
// Errors: ErrInvalidArgument (errorRate NaN or out of range; above 0.2 the
// blocked model is not conservative: use the classic layout; both
// AgeBloomMinMemory and AgeBloomBlocked), ErrTooLarge
// (no pair meets it: classic with k <= 64; blocked below about 1e-18, and
// far below 1e-3 the classic layout is the better choice anyway).
func AgeBloomChoose(errorRate float64, opts ...Option) (k, l uint32, fill float64, err error) {
	_, flags, err := configure[AgeBloomFlags]("AgeBloomChoose", optFlags, opts)
	if err != nil {
		return 0, 0, 0, err
	}
	defer catch(&err)
	k = uint32(native.AgeBloomNativeChoose_k(errorRate, uint(flags)))
	l = uint32(native.AgeBloomNativeChoose_l(errorRate, uint(flags)))
	return k, l, native.AgeBloomNativeChoose_fill(errorRate, uint(flags)), nil
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

// AgeBloomExpectedProbes is what a query of a classic filter with
// parameters (k, l) costs: the slices it tests in expectation at the
// filter's worst moment (just before a shift), each one random memory read,
// for an absent key and for a present key of uniformly random age within
// the window (at least k), computed exactly
// (tf_age_bloom_expected_probes). Errors: ErrInvalidArgument (k not in
// 1..64 or l not in 1..1024).
func AgeBloomExpectedProbes(k, l uint32) (absent, present float64, err error) {
	defer catch(&err)
	absent = native.AgeBloomNativeExpected_probes_absent(uint(k), uint(l))
	return absent, native.AgeBloomNativeExpected_probes_present(uint(k), uint(l)), nil
}

// Add inserts key (shifting the slices first when the generation is full).
// Needs exclusive use. Errors: ErrClosed.
func (f *AgeBloom) Add(key []byte) error {
	return run(f.obj(), func(p abNative) {
		k, kn := bridge.Key(key)
		p.Add(k, kn)
		runtime.KeepAlive(key)
	})
}

// AddString is Add with a string key (its bytes, e.g. UTF-8).
func (f *AgeBloom) AddString(key string) error {
	return f.Add(stringBytes(key))
}

// Contains reports whether key is (probably) among the last inserts: false
// means it is certainly not among the last Capacity inserts.
// Errors: ErrClosed.
func (f *AgeBloom) Contains(key []byte) (present bool, err error) {
	return call(f.obj(), func(p abNative) bool {
		k, kn := bridge.Key(key)
		v := p.Contains(k, kn) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// ContainsString is Contains with a string key.
func (f *AgeBloom) ContainsString(key string) (bool, error) {
	return f.Contains(stringBytes(key))
}

// AddIfAbsent is de-duplication in one call: it returns what Contains would
// have said, and inserts key only when it was absent. wasPresent true means
// a (probable) duplicate. Needs exclusive use. Errors: ErrClosed.
func (f *AgeBloom) AddIfAbsent(key []byte) (wasPresent bool, err error) {
	return call(f.obj(), func(p abNative) bool {
		k, kn := bridge.Key(key)
		v := p.Add_if_absent(k, kn) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// AddIfAbsentString is AddIfAbsent with a string key.
func (f *AgeBloom) AddIfAbsentString(key string) (bool, error) {
	return f.AddIfAbsent(stringBytes(key))
}

// AddBatch is Add(keys[i]) for every key, in order, in one call into C
// that overlaps the keys' memory reads: the same filter as those single
// calls. Needs exclusive use. Errors: ErrClosed.
func (f *AgeBloom) AddBatch(keys [][]byte) error {
	_, err := batch(f.obj(), keys, ageBloomAdd)
	return err
}

// AddBatchStrings is AddBatch with string keys.
func (f *AgeBloom) AddBatchStrings(keys []string) error {
	_, err := batch(f.obj(), keys, ageBloomAdd)
	return err
}

func ageBloomAdd(p abNative, data []byte, lens []int32) struct{} {
	p.Add_batch(data, lens)
	return struct{}{}
}

// ContainsBatch is Contains(keys[i]) for every key, in one call into C
// that overlaps the keys' memory reads. Errors: ErrClosed.
func (f *AgeBloom) ContainsBatch(keys [][]byte) ([]bool, error) {
	return presentBatch(f.obj(), keys, ageBloomContains)
}

// ContainsBatchStrings is ContainsBatch with string keys.
func (f *AgeBloom) ContainsBatchStrings(keys []string) ([]bool, error) {
	return presentBatch(f.obj(), keys, ageBloomContains)
}

func ageBloomContains(p abNative, data []byte, lens []int32, present []int32) {
	p.Contains_batch(data, lens, present)
}

// AddIfAbsentBatch is AddIfAbsent(keys[i]) for every key, in order, in one
// call into C: the same answers and the same filter as those single calls
// (a key repeated within the batch is present from its second occurrence
// on). Needs exclusive use. Errors: ErrClosed.
func (f *AgeBloom) AddIfAbsentBatch(keys [][]byte) ([]bool, error) {
	return presentBatch(f.obj(), keys, ageBloomAddIfAbsent)
}

// AddIfAbsentBatchStrings is AddIfAbsentBatch with string keys.
func (f *AgeBloom) AddIfAbsentBatchStrings(keys []string) ([]bool, error) {
	return presentBatch(f.obj(), keys, ageBloomAddIfAbsent)
}

func ageBloomAddIfAbsent(p abNative, data []byte, lens []int32, present []int32) {
	p.Add_if_absent_batch(data, lens, present)
}

// Clear forgets every key (the shape stays; Inserts restarts at 0). Needs
// exclusive use. Errors: ErrClosed.
func (f *AgeBloom) Clear() error {
	return run(f.obj(), abNative.Clear)
}

// Stats returns the current state. FPRNow scans every slice (O(Bits/64)).
// Errors: ErrClosed.
func (f *AgeBloom) Stats() (AgeBloomStats, error) { return ageBloomStats(f.obj()) }

// Info returns the filter's parameters. Errors: ErrClosed.
func (f *AgeBloom) Info() (AgeBloomInfo, error) { return ageBloomInfo(f.obj()) }

// Capacity returns the guaranteed window in inserts, L*Generation. It is
// Info's field, read once when the filter was created, deserialized or
// unmarshaled: it never calls C and cannot fail (a closed filter keeps it; a
// zero or nil one returns 0).
func (f *AgeBloom) Capacity() uint64 { return cached[AgeBloomInfo](f.obj()).Capacity }

// String describes the filter, e.g. "AgeBloom(k=3, l=4, 200-bit slices,
// capacity 184, seed 42)", or "AgeBloom(blocked, k=3, ...)" for the blocked
// layout.
func (f *AgeBloom) String() string {
	return describe("AgeBloom", f.Info, func(i AgeBloomInfo) string {
		layout := ""
		if i.Flags&AgeBloomBlocked != 0 {
			layout = "blocked, "
		}
		return fmt.Sprintf("%sk=%d, l=%d, %d-bit slices, capacity %d, seed %d", layout, i.K, i.L, i.SliceBits,
			i.Capacity, i.Seed)
	})
}
