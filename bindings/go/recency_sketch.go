package temporalfilters

import (
	"encoding"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"temporalfilters/internal/native"
)

// Creation flags of a RecencySketch (bitwise OR); any other bit is rejected.
const (
	// Concurrent makes the sketch safe for many goroutines at once, without
	// locks (cells are updated with atomic compare-and-swap).
	Concurrent uint32 = 1
	// Blocked puts all cells of a key in one 64-byte cache line (depth <= 8):
	// faster on large tables, at a higher error for the same memory.
	Blocked uint32 = 2
)

// Never is the timestamp that means "never seen". It is not a valid input
// time.
const Never uint64 = 0

// PaceResult is the answer of RecencySketch.Pace.
type PaceResult struct {
	// Granted is true when the request is allowed; the grant is recorded.
	Granted bool
	// NextAllowed is the earliest time the key may be granted again:
	// now+interval after a grant, last+interval after a denial (saturating
	// at math.MaxUint64).
	NextAllowed uint64
}

// SketchInfo holds the parameters of a RecencySketch.
type SketchInfo struct {
	Width uint64 // cells per row
	Depth uint32 // rows
	Seed  uint32 // hash seed
	Flags uint32 // Concurrent | Blocked
	Cells uint64 // timestamp cells actually allocated
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
	r *rsHandle
}

// rsHandle owns the native handle. It is a separate allocation so that the
// finalizer can be set on it even when the RecencySketch itself lives inside
// another value (as os.File does).
type rsHandle struct {
	p native.SwigcptrRecencySketchNative
}

// liveSketches counts the native objects not yet freed, sketches and Bloom
// filters alike (for the tests).
var liveSketches int64

func (h *rsHandle) free() {
	if h.p != 0 {
		native.DeleteRecencySketchNative(h.p)
		h.p = 0
		atomic.AddInt64(&liveSketches, -1)
	}
}

var (
	_ encoding.BinaryMarshaler   = (*RecencySketch)(nil)
	_ encoding.BinaryUnmarshaler = (*RecencySketch)(nil)
	_ io.Closer                  = (*RecencySketch)(nil)
	_ fmt.Stringer               = (*RecencySketch)(nil)
)

// newHandle takes ownership of a native sketch and arms the finalizer.
func newHandle(n native.RecencySketchNative) (*rsHandle, error) {
	p := native.SwigcptrRecencySketchNative(n.Swigcptr())
	if p == 0 {
		// The native layer reports every failure before returning NULL.
		return nil, newError(StatusInternal, "the native layer returned no sketch and no error")
	}
	h := &rsHandle{p: p}
	atomic.AddInt64(&liveSketches, 1)
	runtime.SetFinalizer(h, (*rsHandle).free)
	return h, nil
}

func newSketch(n native.RecencySketchNative) (*RecencySketch, error) {
	h, err := newHandle(n)
	if err != nil {
		return nil, err
	}
	return &RecencySketch{r: h}, nil
}

// NewRecencySketch creates an empty sketch of depth rows of width cells.
//
// width is >= 1 (in the Blocked layout the table holds width*depth cells
// rounded up to a multiple of 8); depth is 1..32, 1..8 when Blocked; seed is
// the hash seed (sketches merge only when their seeds are equal); flags is 0
// or an OR of Concurrent and Blocked. Memory: 8 bytes per cell.
// Errors: ErrInvalidArgument, ErrTooLarge, ErrOutOfMemory.
func NewRecencySketch(width uint64, depth, seed, flags uint32) (s *RecencySketch, err error) {
	defer catch(&err)
	return newSketch(native.NewRecencySketchNative(width, uint(depth), uint(seed), uint(flags)))
}

// NewRecencySketchFor creates the smallest sketch whose probability of a
// too-new answer, with expectedKeys distinct keys updated within the horizon
// you query about, is at most tooNewProbability (see
// RecencySketchDimensions).
// Errors: ErrInvalidArgument, ErrTooLarge, ErrOutOfMemory.
func NewRecencySketchFor(expectedKeys uint64, tooNewProbability float64, seed, flags uint32) (s *RecencySketch, err error) {
	defer catch(&err)
	return newSketch(native.RecencySketchNativeNew_for(expectedKeys, tooNewProbability, uint(seed), uint(flags)))
}

// RecencySketchDimensions is the sizing helper: the smallest (width, depth)
// whose probability of a too-new answer with expectedKeys (>= 1) distinct keys
// is at most tooNewProbability, in (0, 1). Only the Blocked flag changes the
// answer. Errors: ErrInvalidArgument, ErrTooLarge.
func RecencySketchDimensions(expectedKeys uint64, tooNewProbability float64, flags uint32) (width uint64, depth uint32, err error) {
	defer catch(&err)
	width = native.RecencySketchNativeDimensions_width(expectedKeys, tooNewProbability, uint(flags))
	depth = uint32(native.RecencySketchNativeDimensions_depth(expectedKeys, tooNewProbability, uint(flags)))
	return width, depth, nil
}

// noBytes stands for an empty blob: the C library rejects a NULL blob
// pointer (TF_ERR_NULL), but in Go a nil and an empty slice are the same
// blob, which is too short (ErrTruncated).
var noBytes = make([]byte, 0, 1)

func blobArg(b []byte) []byte {
	if len(b) == 0 {
		return noBytes
	}
	return b
}

// DeserializeRecencySketch creates a sketch from a blob written by
// Serialize (in any language). The blob is checked completely first.
// Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
// ErrChecksum, ErrCorrupt, ErrOutOfMemory.
func DeserializeRecencySketch(blob []byte) (s *RecencySketch, err error) {
	defer catch(&err)
	return newSketch(native.RecencySketchNativeDeserialize(blobArg(blob)))
}

// ptr returns the native handle, 0 when the sketch is closed, zero or nil.
func (s *RecencySketch) ptr() native.SwigcptrRecencySketchNative {
	if s == nil || s.r == nil {
		return 0
	}
	return s.r.p
}

// Close frees the sketch's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error wrapping ErrNull. Close must
// not run concurrently with other calls on the same sketch.
func (s *RecencySketch) Close() error {
	if s != nil && s.r != nil {
		s.r.free()
		runtime.SetFinalizer(s.r, nil)
	}
	return nil
}

// stringBytes views a string as a byte slice without copying. The C library
// only reads keys, so the bytes are never written.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	hdr := (*reflect.StringHeader)(unsafe.Pointer(&s))
	return unsafe.Slice((*byte)(unsafe.Pointer(hdr.Data)), len(s))
}

// Update records that key was seen at time now (>= 1): every cell of the key
// becomes max(cell, now). Older times than already recorded are fine (they
// change nothing). Errors: ErrInvalidArgument (now == 0), ErrNull (closed).
func (s *RecencySketch) Update(key []byte, now uint64) (err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return closedError()
	}
	p.Update(key, now)
	runtime.KeepAlive(s)
	return nil
}

// UpdateString is Update with a string key (its bytes, e.g. UTF-8).
func (s *RecencySketch) UpdateString(key string, now uint64) error {
	return s.Update(stringBytes(key), now)
}

// Query estimates the last time key was updated: Never (0) when it was never
// updated (and no other keys filled all its cells), otherwise a time >= the
// true last update. Errors: ErrNull (closed).
func (s *RecencySketch) Query(key []byte) (t uint64, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return 0, closedError()
	}
	t = p.Query(key)
	runtime.KeepAlive(s)
	return t, nil
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
// ErrNull (closed).
func (s *RecencySketch) Pace(key []byte, now, interval uint64) (res PaceResult, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return PaceResult{}, closedError()
	}
	var next uint64
	granted := p.Pace(key, now, interval, &next)
	runtime.KeepAlive(s)
	return PaceResult{Granted: granted != 0, NextAllowed: next}, nil
}

// PaceString is Pace with a string key.
func (s *RecencySketch) PaceString(key string, now, interval uint64) (PaceResult, error) {
	return s.Pace(stringBytes(key), now, interval)
}

// TTLInsert is the insert side of the TTL prefilter: key was stored in a
// cache at now with time-to-live ttl; its expiry now+ttl (saturating) is
// recorded. Use a sketch either for expiries or for last-seen times, not
// both. Errors: ErrInvalidArgument (now or ttl 0), ErrNull (closed).
func (s *RecencySketch) TTLInsert(key []byte, now, ttl uint64) (err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return closedError()
	}
	p.Ttl_insert(key, now, ttl)
	runtime.KeepAlive(s)
	return nil
}

// TTLInsertString is TTLInsert with a string key.
func (s *RecencySketch) TTLInsertString(key string, now, ttl uint64) error {
	return s.TTLInsert(stringBytes(key), now, ttl)
}

// TTLMaybeLive is the lookup side of the TTL prefilter: false when key is
// certainly expired at now or was never inserted (skip the cache); true when
// it may be live. False is never wrong. The estimated expiry time is
// Query(key). Errors: ErrInvalidArgument (now 0), ErrNull (closed).
func (s *RecencySketch) TTLMaybeLive(key []byte, now uint64) (live bool, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return false, closedError()
	}
	live = p.Ttl_maybe_live(key, now) != 0
	runtime.KeepAlive(s)
	return live, nil
}

// TTLMaybeLiveString is TTLMaybeLive with a string key.
func (s *RecencySketch) TTLMaybeLiveString(key string, now uint64) (bool, error) {
	return s.TTLMaybeLive(stringBytes(key), now)
}

// packedKeys lays keys end to end, the batch format of the native layer.
// The buffers are reused through a pool: a batch call allocates nothing of
// its own once the pool is warm.
type packedKeys struct {
	data []byte
	lens []int32
}

var packPool = sync.Pool{New: func() interface{} { return new(packedKeys) }}

// maxPooledBytes bounds the buffers kept for reuse.
const maxPooledBytes = 1 << 20

func (pk *packedKeys) release() {
	if cap(pk.data) <= maxPooledBytes && cap(pk.lens) <= maxPooledBytes/4 {
		packPool.Put(pk)
	}
}

func tooLongKey(i, n int) error {
	return invalidArgument("keys[%d] is %d bytes long; batch keys are limited to %d bytes", i, n, math.MaxInt32)
}

func packBytes(keys [][]byte) (*packedKeys, error) {
	pk := packPool.Get().(*packedKeys)
	pk.data, pk.lens = pk.data[:0], pk.lens[:0]
	for i, k := range keys {
		if len(k) > math.MaxInt32 {
			pk.release()
			return nil, tooLongKey(i, len(k))
		}
		pk.data = append(pk.data, k...)
		pk.lens = append(pk.lens, int32(len(k)))
	}
	return pk, nil
}

func packStrings(keys []string) (*packedKeys, error) {
	pk := packPool.Get().(*packedKeys)
	pk.data, pk.lens = pk.data[:0], pk.lens[:0]
	for i, k := range keys {
		if len(k) > math.MaxInt32 {
			pk.release()
			return nil, tooLongKey(i, len(k))
		}
		pk.data = append(pk.data, k...)
		pk.lens = append(pk.lens, int32(len(k)))
	}
	return pk, nil
}

func (s *RecencySketch) updatePacked(pk *packedKeys, times []uint64) (err error) {
	defer pk.release()
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return closedError()
	}
	p.Update_batch(pk.data, pk.lens, times)
	runtime.KeepAlive(s)
	return nil
}

func (s *RecencySketch) queryPacked(out []uint64, pk *packedKeys) (err error) {
	defer pk.release()
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return closedError()
	}
	p.Query_batch(pk.data, pk.lens, out)
	runtime.KeepAlive(s)
	return nil
}

// UpdateBatch is Update for many keys in one call: keys[i] at times[i]. It
// gives the same result as calling Update in order, faster: the per-call
// cost is paid once and the cache misses of the keys overlap. Every argument
// is checked before any cell changes, so a failed batch changes nothing.
// Errors: ErrInvalidArgument (len(times) != len(keys), a zero time),
// ErrNull (closed).
func (s *RecencySketch) UpdateBatch(keys [][]byte, times []uint64) error {
	if s.ptr() == 0 {
		return closedError()
	}
	pk, err := packBytes(keys)
	if err != nil {
		return err
	}
	return s.updatePacked(pk, times)
}

// UpdateBatchStrings is UpdateBatch with string keys.
func (s *RecencySketch) UpdateBatchStrings(keys []string, times []uint64) error {
	if s.ptr() == 0 {
		return closedError()
	}
	pk, err := packStrings(keys)
	if err != nil {
		return err
	}
	return s.updatePacked(pk, times)
}

// QueryBatch is Query for many keys in one call; the answers are in the
// order of the keys. Errors: ErrNull (closed).
func (s *RecencySketch) QueryBatch(keys [][]byte) ([]uint64, error) {
	out := make([]uint64, len(keys))
	if err := s.QueryBatchInto(out, keys); err != nil {
		return nil, err
	}
	return out, nil
}

// QueryBatchInto is QueryBatch writing into out, which must have
// len(keys) elements (ErrInvalidArgument otherwise).
func (s *RecencySketch) QueryBatchInto(out []uint64, keys [][]byte) error {
	if s.ptr() == 0 {
		return closedError()
	}
	pk, err := packBytes(keys)
	if err != nil {
		return err
	}
	return s.queryPacked(out, pk)
}

// QueryBatchStrings is QueryBatch with string keys.
func (s *RecencySketch) QueryBatchStrings(keys []string) ([]uint64, error) {
	out := make([]uint64, len(keys))
	if err := s.QueryBatchStringsInto(out, keys); err != nil {
		return nil, err
	}
	return out, nil
}

// QueryBatchStringsInto is QueryBatchInto with string keys.
func (s *RecencySketch) QueryBatchStringsInto(out []uint64, keys []string) error {
	if s.ptr() == 0 {
		return closedError()
	}
	pk, err := packStrings(keys)
	if err != nil {
		return err
	}
	return s.queryPacked(out, pk)
}

// Merge merges other into s by cell-wise maximum, so that s answers as if it
// had seen both streams. other is unchanged. Errors: ErrIncompatible (width,
// depth, layout or seed differ; s is unchanged), ErrNull (either closed).
func (s *RecencySketch) Merge(other *RecencySketch) (err error) {
	defer catch(&err)
	p, o := s.ptr(), other.ptr()
	if p == 0 || o == 0 {
		return closedError()
	}
	p.Merge(o)
	runtime.KeepAlive(s)
	runtime.KeepAlive(other)
	return nil
}

// Clear empties every cell: all keys read as never seen. Needs exclusive
// use. Errors: ErrNull (closed).
func (s *RecencySketch) Clear() (err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return closedError()
	}
	p.Clear()
	runtime.KeepAlive(s)
	return nil
}

// ErrorEstimate is the estimated probability that a key whose true last
// update is at or before since reads as newer than since, measured from the
// fraction of cells newer than since (since = Never: the probability that a
// never-seen key reads as seen). Scans the whole table. Errors: ErrNull.
func (s *RecencySketch) ErrorEstimate(since uint64) (prob float64, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return 0, closedError()
	}
	prob = p.Error_estimate(since)
	runtime.KeepAlive(s)
	return prob, nil
}

// Memory returns the bytes of C memory held by the sketch. Errors: ErrNull.
func (s *RecencySketch) Memory() (bytes uint64, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return 0, closedError()
	}
	bytes = p.Memory()
	runtime.KeepAlive(s)
	return bytes, nil
}

// Info returns the sketch's parameters. Errors: ErrNull (closed).
func (s *RecencySketch) Info() (info SketchInfo, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return SketchInfo{}, closedError()
	}
	ni := p.Info()
	defer native.DeleteRecencySketchInfoNative(ni)
	info = SketchInfo{
		Width: ni.GetWidth(),
		Depth: uint32(ni.GetDepth()),
		Seed:  uint32(ni.GetSeed()),
		Flags: uint32(ni.GetFlags()),
		Cells: ni.GetCells(),
	}
	runtime.KeepAlive(s)
	return info, nil
}

// Width returns the number of cells per row. Errors: ErrNull (closed).
func (s *RecencySketch) Width() (uint64, error) {
	info, err := s.Info()
	return info.Width, err
}

// Depth returns the number of rows. Errors: ErrNull (closed).
func (s *RecencySketch) Depth() (uint32, error) {
	info, err := s.Info()
	return info.Depth, err
}

// Seed returns the hash seed. Errors: ErrNull (closed).
func (s *RecencySketch) Seed() (uint32, error) {
	info, err := s.Info()
	return info.Seed, err
}

// Flags returns the creation flags. Errors: ErrNull (closed).
func (s *RecencySketch) Flags() (uint32, error) {
	info, err := s.Info()
	return info.Flags, err
}

// Cells returns the number of timestamp cells allocated. Errors: ErrNull.
func (s *RecencySketch) Cells() (uint64, error) {
	info, err := s.Info()
	return info.Cells, err
}

// Serialize writes the sketch in the library's portable wire format
// (little-endian, checksummed), readable by DeserializeRecencySketch and by
// the other languages' bindings. Errors: ErrNull (closed).
func (s *RecencySketch) Serialize() (blob []byte, err error) {
	defer catch(&err)
	p := s.ptr()
	if p == 0 {
		return nil, closedError()
	}
	size := p.Serialized_size()
	if size > math.MaxInt {
		return nil, newError(StatusTooLarge, "the serialized sketch does not fit in a Go slice")
	}
	blob = make([]byte, int(size))
	p.Serialize_into(blob)
	runtime.KeepAlive(s)
	return blob, nil
}

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (s *RecencySketch) MarshalBinary() ([]byte, error) {
	return s.Serialize()
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of s (zero, open or closed) with the sketch in data, which it does
// not retain. On error s is unchanged. Needs exclusive use of s.
func (s *RecencySketch) UnmarshalBinary(data []byte) (err error) {
	defer catch(&err)
	if s == nil {
		return newError(StatusNull, "UnmarshalBinary into a nil *RecencySketch")
	}
	n := native.RecencySketchNativeDeserialize(blobArg(data))
	if s.r == nil {
		h, herr := newHandle(n)
		if herr != nil {
			return herr
		}
		s.r = h
		return nil
	}
	p := native.SwigcptrRecencySketchNative(n.Swigcptr())
	if p == 0 {
		return newError(StatusInternal, "the native layer returned no sketch and no error")
	}
	old := s.r.p
	s.r.p = p
	if old == 0 {
		// It was closed, so its finalizer was cleared: arm it again.
		atomic.AddInt64(&liveSketches, 1)
		runtime.SetFinalizer(s.r, (*rsHandle).free)
	} else {
		native.DeleteRecencySketchNative(old)
	}
	return nil
}

// String describes the sketch, e.g. "RecencySketch(256x3, seed 42, flags 0)".
func (s *RecencySketch) String() string {
	info, err := s.Info()
	if err != nil {
		return "RecencySketch(closed)"
	}
	return fmt.Sprintf("RecencySketch(%dx%d, seed %d, flags %d)", info.Width, info.Depth, info.Seed, info.Flags)
}

// Version returns the version of the C library loaded, "MAJOR.MINOR.PATCH".
func Version() string {
	return native.Tf_version_string()
}

// NowMillis reads the system's real-time clock in milliseconds since the
// Unix epoch (always >= 1), a convenient now for the methods that take one.
func NowMillis() uint64 {
	return native.Tf_clock_now_ms()
}
