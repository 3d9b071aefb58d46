package temporalfilters

import (
	"fmt"
	"runtime"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/internal/native"
)

// The creation flags of a RecencySketch (WithFlags), the C library's
// TF_RECENCY_SKETCH_* values.
const (
	// RecencySketchConcurrent makes the sketch safe for many goroutines at
	// once, without locks (cells are updated with atomic compare-and-swap).
	RecencySketchConcurrent RecencySketchFlags = RecencySketchFlags(native.TF_RECENCY_SKETCH_CONCURRENT)
	// RecencySketchBlocked puts all cells of a key in one 64-byte cache line
	// (depth <= 8): faster on large tables, at a higher error for the same
	// memory.
	RecencySketchBlocked RecencySketchFlags = RecencySketchFlags(native.TF_RECENCY_SKETCH_BLOCKED)
)

// PaceResult is the answer of RecencySketch.Pace.
type PaceResult struct {
	// Granted is true when the request is allowed; the grant is recorded.
	Granted bool
	// NextAllowed is the earliest time the key may be granted again:
	// now+interval after a grant, last+interval after a denial (saturating
	// at math.MaxUint64).
	NextAllowed uint64
}

// RecencySketchInfo holds the parameters of a RecencySketch.
type RecencySketchInfo struct {
	Width uint64             // cells per row
	Depth uint32             // rows
	Seed  uint32             // hash seed
	Flags RecencySketchFlags // RecencySketchConcurrent | RecencySketchBlocked
	Cells uint64             // timestamp cells actually allocated
}

// RecencySketch answers "when did I last see this key?" in fixed memory:
// depth rows of width 64-bit timestamp cells. A query never returns a time
// older than the key's true last update; it may return a newer one when all
// of the key's cells were also written later by other keys. See
// temporalfilters/recency_sketch.h for the guarantees and the sizing
// formula.
//
// Create one with NewRecencySketch, NewRecencySketchFor or
// DeserializeRecencySketch, or decode into a zero RecencySketch with
// UnmarshalBinary. Call Close when done. Copies of a RecencySketch value
// share the same C sketch.
type RecencySketch struct {
	h *handle
}

// NewRecencySketch creates an empty sketch of depth rows of width cells.
//
// width is >= 1 (in the RecencySketchBlocked layout the table holds
// width*depth cells rounded up to a multiple of 8); depth is 1..32, 1..8
// when blocked. Options: WithSeed (the hash seed, default 0: sketches merge
// only when their seeds are equal), WithFlags (RecencySketchConcurrent,
// RecencySketchBlocked; default 0). Memory: 8 bytes per cell.
// Errors: ErrInvalidArgument, ErrTooLarge, ErrOutOfMemory.
func NewRecencySketch(width uint64, depth uint32, opts ...Option) (*RecencySketch, error) {
	return build[RecencySketch](recencySketchKind, "NewRecencySketch", optSeed|optFlags, opts,
		func(seed uint32, flags RecencySketchFlags) uintptr {
			return native.NewRecencySketchNative(width, uint(depth), uint(seed), uint(flags)).Swigcptr()
		})
}

// NewRecencySketchFor creates the smallest sketch whose probability of a
// too-new answer, with expectedKeys distinct keys updated within the horizon
// you query about, is at most tooNewProbability (see
// RecencySketchDimensions). Options: WithSeed, WithFlags (as
// NewRecencySketch). Errors: ErrInvalidArgument, ErrTooLarge,
// ErrOutOfMemory.
func NewRecencySketchFor(expectedKeys uint64, tooNewProbability float64, opts ...Option) (*RecencySketch, error) {
	return build[RecencySketch](recencySketchKind, "NewRecencySketchFor", optSeed|optFlags, opts,
		func(seed uint32, flags RecencySketchFlags) uintptr {
			return native.RecencySketchNativeNew_for(expectedKeys, tooNewProbability, uint(seed), uint(flags)).Swigcptr()
		})
}

// RecencySketchDimensions is the sizing helper: the smallest (width, depth)
// whose probability of a too-new answer with expectedKeys (>= 1) distinct keys
// is at most tooNewProbability, in (0, 1). Option: WithFlags (only
// RecencySketchBlocked changes the answer).
// Errors: ErrInvalidArgument, ErrTooLarge.
func RecencySketchDimensions(expectedKeys uint64, tooNewProbability float64, opts ...Option) (width uint64, depth uint32, err error) {
	_, flags, err := configure[RecencySketchFlags]("RecencySketchDimensions", optFlags, opts)
	if err != nil {
		return 0, 0, err
	}
	defer catch(&err)
	width = native.RecencySketchNativeDimensions_width(expectedKeys, tooNewProbability, uint(flags))
	depth = uint32(native.RecencySketchNativeDimensions_depth(expectedKeys, tooNewProbability, uint(flags)))
	return width, depth, nil
}

// Update records that key was seen at time now (>= 1): every cell of the key
// becomes max(cell, now). Older times than already recorded are fine (they
// change nothing). Errors: ErrInvalidArgument (now == 0), ErrClosed.
func (s *RecencySketch) Update(key []byte, now uint64) error {
	return run(s.obj(), func(p rsNative) {
		k, kn := bridge.Key(key)
		p.Update(k, kn, now)
		runtime.KeepAlive(key)
	})
}

// UpdateString is Update with a string key (its bytes, e.g. UTF-8).
func (s *RecencySketch) UpdateString(key string, now uint64) error {
	return s.Update(stringBytes(key), now)
}

// Query estimates the last time key was updated: Never (0) when it was never
// updated (and no other keys filled all its cells), otherwise a time >= the
// true last update. Errors: ErrClosed.
func (s *RecencySketch) Query(key []byte) (t uint64, err error) {
	return call(s.obj(), func(p rsNative) uint64 {
		k, kn := bridge.Key(key)
		v := p.Query(k, kn)
		runtime.KeepAlive(key)
		return v
	})
}

// QueryString is Query with a string key.
func (s *RecencySketch) QueryString(key string) (uint64, error) {
	return s.Query(stringBytes(key))
}

// LastSeen is Query in the comma-ok form: seen is false when the key reads
// as never seen.
func (s *RecencySketch) LastSeen(key []byte) (t uint64, seen bool, err error) {
	t, err = s.Query(key)
	return t, err == nil && t != Never, err
}

// LastSeenString is LastSeen with a string key.
func (s *RecencySketch) LastSeenString(key string) (uint64, bool, error) {
	return s.LastSeen(stringBytes(key))
}

// Pace is request pacing: it grants key at time now when no grant is
// recorded for it within the last interval time units (as estimated), and
// then records the grant. A key is never granted twice within interval, also
// under concurrent use. Errors: ErrInvalidArgument (now or interval 0),
// ErrClosed.
func (s *RecencySketch) Pace(key []byte, now, interval uint64) (PaceResult, error) {
	return call(s.obj(), func(p rsNative) (res PaceResult) {
		k, kn := bridge.Key(key)
		res.Granted = p.Pace(k, kn, now, interval, &res.NextAllowed) != 0
		runtime.KeepAlive(key)
		return res
	})
}

// PaceString is Pace with a string key.
func (s *RecencySketch) PaceString(key string, now, interval uint64) (PaceResult, error) {
	return s.Pace(stringBytes(key), now, interval)
}

// TTLInsert is the insert side of the TTL prefilter: key was stored in a
// cache at now with time-to-live ttl; its expiry now+ttl (saturating) is
// recorded. Use a sketch either for expiries or for last-seen times, not
// both. Errors: ErrInvalidArgument (now or ttl 0), ErrClosed.
func (s *RecencySketch) TTLInsert(key []byte, now, ttl uint64) error {
	return run(s.obj(), func(p rsNative) {
		k, kn := bridge.Key(key)
		p.Ttl_insert(k, kn, now, ttl)
		runtime.KeepAlive(key)
	})
}

// TTLInsertString is TTLInsert with a string key.
func (s *RecencySketch) TTLInsertString(key string, now, ttl uint64) error {
	return s.TTLInsert(stringBytes(key), now, ttl)
}

// TTLMaybeLive is the lookup side of the TTL prefilter: false when key is
// certainly expired at now or was never inserted (skip the cache); true when
// it may be live. False is never wrong. The estimated expiry time is
// Query(key). Errors: ErrInvalidArgument (now 0), ErrClosed.
func (s *RecencySketch) TTLMaybeLive(key []byte, now uint64) (live bool, err error) {
	return call(s.obj(), func(p rsNative) bool {
		k, kn := bridge.Key(key)
		v := p.Ttl_maybe_live(k, kn, now) != 0
		runtime.KeepAlive(key)
		return v
	})
}

// TTLMaybeLiveString is TTLMaybeLive with a string key.
func (s *RecencySketch) TTLMaybeLiveString(key string, now uint64) (bool, error) {
	return s.TTLMaybeLive(stringBytes(key), now)
}

// UpdateBatch is Update for many keys in one call: keys[i] at times[i]. It
// gives the same result as calling Update in order, faster: the per-call
// cost is paid once and the cache misses of the keys overlap. Every argument
// is checked before any cell changes, so a failed batch changes nothing.
// Errors: ErrInvalidArgument (len(times) != len(keys), a zero time),
// ErrClosed.
func (s *RecencySketch) UpdateBatch(keys [][]byte, times []uint64) error {
	return updateBatch(s, keys, times)
}

// UpdateBatchStrings is UpdateBatch with string keys.
func (s *RecencySketch) UpdateBatchStrings(keys []string, times []uint64) error {
	return updateBatch(s, keys, times)
}

func updateBatch[K key](s *RecencySketch, keys []K, times []uint64) error {
	_, err := batch(s.obj(), keys, func(p rsNative, data []byte, lens []int32) bool {
		p.Update_batch(data, lens, times)
		return true
	})
	return err
}

// QueryBatch is Query for many keys in one call; the answers are in the
// order of the keys. Errors: ErrClosed.
func (s *RecencySketch) QueryBatch(keys [][]byte) ([]uint64, error) {
	return queryBatch(s, make([]uint64, len(keys)), keys)
}

// QueryBatchInto is QueryBatch writing into out, which must have
// len(keys) elements (ErrInvalidArgument otherwise).
func (s *RecencySketch) QueryBatchInto(out []uint64, keys [][]byte) error {
	_, err := queryBatch(s, out, keys)
	return err
}

// QueryBatchStrings is QueryBatch with string keys.
func (s *RecencySketch) QueryBatchStrings(keys []string) ([]uint64, error) {
	return queryBatch(s, make([]uint64, len(keys)), keys)
}

// QueryBatchStringsInto is QueryBatchInto with string keys.
func (s *RecencySketch) QueryBatchStringsInto(out []uint64, keys []string) error {
	_, err := queryBatch(s, out, keys)
	return err
}

// queryBatch returns out filled, or nil with the error.
func queryBatch[K key](s *RecencySketch, out []uint64, keys []K) ([]uint64, error) {
	out, err := batch(s.obj(), keys, func(p rsNative, data []byte, lens []int32) []uint64 {
		p.Query_batch(data, lens, out)
		return out
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Merge merges other into s by cell-wise maximum, so that s answers as if it
// had seen both streams. other is unchanged (only read). Needs exclusive use
// of s unless s is concurrent (RecencySketchConcurrent), whose cells take
// the maximum atomically while other goroutines use it. Errors:
// ErrIncompatible (width, depth, layout or seed differ; s is unchanged),
// ErrClosed (either closed).
func (s *RecencySketch) Merge(other *RecencySketch) error {
	var err error // other's call: closed, or the merge's own error
	if dst := run(s.obj(), func(p rsNative) {
		err = run(other.obj(), func(src rsNative) { p.Merge(src) })
	}); dst != nil {
		return dst
	}
	return err
}

// Clear empties every cell: all keys read as never seen. Needs exclusive
// use. Errors: ErrClosed.
func (s *RecencySketch) Clear() error {
	return run(s.obj(), rsNative.Clear)
}

// ErrorEstimate is the estimated probability that a key whose true last
// update is at or before since reads as newer than since, measured from the
// fraction of cells newer than since (since = Never: the probability that a
// never-seen key reads as seen). Scans the whole table. Errors: ErrClosed.
func (s *RecencySketch) ErrorEstimate(since uint64) (prob float64, err error) {
	return call(s.obj(), func(p rsNative) float64 { return p.Error_estimate(since) })
}

// Info returns the sketch's parameters. Errors: ErrClosed.
func (s *RecencySketch) Info() (RecencySketchInfo, error) { return recencySketchInfo(s.obj()) }

// The plain getters (Width, Depth, Seed, Flags, Cells) return the fields of
// Info, read once when the sketch was created, deserialized or unmarshaled:
// they never call C and cannot fail. A closed sketch keeps its values; a
// zero or nil one returns zeros.

// Width returns the number of cells per row.
func (s *RecencySketch) Width() uint64 { return s.params().Width }

// Depth returns the number of rows.
func (s *RecencySketch) Depth() uint32 { return s.params().Depth }

// Seed returns the hash seed.
func (s *RecencySketch) Seed() uint32 { return s.params().Seed }

// Flags returns the creation flags.
func (s *RecencySketch) Flags() RecencySketchFlags { return s.params().Flags }

// Cells returns the number of timestamp cells allocated.
func (s *RecencySketch) Cells() uint64 { return s.params().Cells }

func (s *RecencySketch) params() RecencySketchInfo { return cached[RecencySketchInfo](s.obj()) }

// String describes the sketch, e.g. "RecencySketch(256x3, seed 42, flags 0)".
func (s *RecencySketch) String() string {
	return describe("RecencySketch", s.Info, func(i RecencySketchInfo) string {
		return fmt.Sprintf("%dx%d, seed %d, flags %d", i.Width, i.Depth, i.Seed, i.Flags)
	})
}
