package temporalfilters

import (
	"fmt"
	"math"
	"runtime"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/internal/native"
)

// RecencyWindow answers "how many inserts ago was this key last seen?" over
// the last W inserts of a stream, within a relative error (1 + eps), or "not
// within the window": the structures of Holland, Wirth and Zobel, "Recency
// Queries with Succinct Representation" (ISAAC 2020), in one type with three
// modes (RecencyWindowMode). See temporalfilters/recency_window.h.
//
// The stream is the sequence of inserts (Insert, and every key of the other
// insert forms); there is no clock. The recency of a key is the number of
// inserts made since its last insert: 0 when the newest insert was that key.
// A key inserted r < W inserts ago is never reported out of the window; a
// key whose last insert is at least W + Slack - 1 inserts ago
// (RecencyWindowInfo.Slack), or one never inserted, always is.
//
// For a key of true recency r < W answered e: RecencyWindowHistorical
// (HistoricalMembership, the default) promises e <= r <= (1 + 1/invEps) e;
// RecencyWindowExact (ExactCuckoo) e == r; RecencyWindowOptimalSM
// (OptimalSM) e <= r <= e + Block - 1.
//
// "Not in the window": Query and InsertReport return (recency, true) for an
// estimate and (0, false) for a key out of the window; the batch methods,
// which return one []uint64, put RecencyWindowNotInWindow
// (TF_RECENCY_WINDOW_NOT_IN_WINDOW, math.MaxUint64) in its place.
//
// Create one with NewRecencyWindow or DeserializeRecencyWindow, or decode
// into a zero RecencyWindow with UnmarshalBinary. Call Close when done.
// Copies of a RecencyWindow value share the same C structure.
//
// Thread safety follows the C library: Query, QueryBatch, Info and the
// getters, Stats, Level, Memory and Serialize may run concurrently with each
// other; Insert, InsertReport, their batches, Clear, UnmarshalBinary and
// Close need exclusive use.
type RecencyWindow struct {
	h *handle
}

// RecencyWindowMode is the structure of a RecencyWindow, chosen at creation
// (WithMode): the C values TF_RECENCY_WINDOW_*.
type RecencyWindowMode uint32

// The modes of a RecencyWindow.
const (
	// RecencyWindowHistorical is HistoricalMembership (the default):
	// answers within (1 + eps), never too large, in about (1 + eps)(log2(2^64
	// / W) + log2(1/eps)) bits per window item with exact signatures.
	RecencyWindowHistorical = RecencyWindowMode(native.TF_RECENCY_WINDOW_HISTORICAL)
	// RecencyWindowExact is ExactCuckoo: exact answers.
	RecencyWindowExact = RecencyWindowMode(native.TF_RECENCY_WINDOW_EXACT)
	// RecencyWindowOptimalSM is OptimalSM: answers at most Block - 1 too
	// small.
	RecencyWindowOptimalSM = RecencyWindowMode(native.TF_RECENCY_WINDOW_OPTIMAL_SM)
)

// String returns the mode's name: "Historical", "Exact", "OptimalSM", or
// "RecencyWindowMode(<n>)" for a value that is none of them.
func (m RecencyWindowMode) String() string {
	switch m {
	case RecencyWindowHistorical:
		return "Historical"
	case RecencyWindowExact:
		return "Exact"
	case RecencyWindowOptimalSM:
		return "OptimalSM"
	}
	return fmt.Sprintf("RecencyWindowMode(%d)", uint32(m))
}

// RecencyWindow's limits and its "not in the window" in the batches. The C
// headers write them as expressions, which SWIG gives Go as variables: they
// are typed here as constants, and the tests check them against those
// variables (as RetryNever).
const (
	// RecencyWindowNotInWindow is the batch methods' answer for a key that
	// is not within the window (TF_RECENCY_WINDOW_NOT_IN_WINDOW,
	// math.MaxUint64).
	RecencyWindowNotInWindow uint64 = math.MaxUint64
	// RecencyWindowMaxWindow is the largest window, in inserts (2^40).
	RecencyWindowMaxWindow uint64 = 1 << 40
	// RecencyWindowMaxInvEps is the largest inverse error 1/eps (2^20).
	RecencyWindowMaxInvEps uint64 = 1 << 20
)

// RecencyWindowInfo holds what a RecencyWindow was created with, the
// defaults resolved.
type RecencyWindowInfo struct {
	Window        uint64             // the window W, in inserts
	InvEps        uint64             // the inverse relative error 1/eps
	Block         uint64             // OptimalSM's block D (0 in the other modes)
	MaxMemory     uint64             // the memory cap in bytes (0: none)
	Delta         float64            // the target false-match probability (0: exact signatures)
	Mode          RecencyWindowMode  // the mode
	Seed          uint32             // hash seed
	Flags         RecencyWindowFlags // the creation flags (none is defined yet)
	SignatureBits uint32             // bits of a signature (64 when exact)
	Levels        uint32             // levels: L + 1 for HistoricalMembership, 1 otherwise
	Slack         uint32             // a key last inserted Window + Slack - 1 or more inserts ago is out of the window
}

// RecencyWindowStats is the state of a RecencyWindow.
type RecencyWindowStats struct {
	Inserts           uint64  // inserts since creation or Clear
	WindowItems       uint64  // inserts the window covers: min(Inserts, W)
	Levels            uint64  // levels (Level reads each)
	Items             uint64  // entries held over every level (stale ones not yet met by a scan included)
	Memory            uint64  // what Memory reports, in bytes
	BitsPerWindowItem float64 // 8 Memory / WindowItems (0 before the first insert)
	Promotions        uint64  // entries moved up a level
	Expired           uint64  // entries dropped out of the window
	Merged            uint64  // entries met by a newer entry of their key (the older dropped)
	Lost              uint64  // entries dropped for want of room (never observed)
	Stashed           uint64  // entries in the tables' stashes
}

// RecencyWindowLevel is one level (a sliding dictionary) of a RecencyWindow.
type RecencyWindowLevel struct {
	Slots      uint64  // slots of its table (4 per bucket, an even number of buckets)
	Items      uint64  // entries it holds (stash included)
	Capacity   uint64  // the most live entries it was sized for
	BlockWidth uint64  // inserts per class: 2^l for level l of HistoricalMembership, 1 for ExactCuckoo, D for OptimalSM
	Load       float64 // Items / Slots
	EntryBits  uint32  // bits of one packed entry
	ClassBits  uint32  // bits of the class field
	Stashed    uint32  // entries in its stash
}

// rwOptions reads the options of a RecencyWindow call (what, for the
// messages), every option not given at the default of
// TF_RECENCY_WINDOW_OPTIONS_INIT.
func rwOptions(what string, opts []Option) (options, RecencyWindowFlags, error) {
	given, flags, err := configure[RecencyWindowFlags](what, optSeed|optFlags|optMaxMemory|optWindow|optInvEps|
		optBlock|optDelta|optMode, opts)
	if err != nil {
		return given, 0, err
	}
	o := options{
		seed:      given.seed,
		window:    native.TF_BINDING_RECENCY_WINDOW_WINDOW,
		invEps:    native.TF_BINDING_RECENCY_WINDOW_INV_EPS,
		block:     native.TF_BINDING_RECENCY_WINDOW_BLOCK,
		maxMemory: native.TF_BINDING_RECENCY_WINDOW_MAX_MEMORY,
		delta:     native.TF_BINDING_RECENCY_WINDOW_DELTA,
		rwMode:    RecencyWindowMode(native.TF_BINDING_RECENCY_WINDOW_MODE),
	}
	// the options given replace the defaults
	for _, c := range []struct {
		opt optionSet
		set func()
	}{
		{optWindow, func() { o.window = given.window }},
		{optInvEps, func() { o.invEps = given.invEps }},
		{optBlock, func() { o.block = given.block }},
		{optMaxMemory, func() { o.maxMemory = given.maxMemory }},
		{optDelta, func() { o.delta = given.delta }},
		{optMode, func() { o.rwMode = given.rwMode }},
	} {
		if given.given&c.opt != 0 {
			c.set()
		}
	}
	return o, flags, nil
}

// NewRecencyWindow creates an empty window. Every option has the default
// of TF_RECENCY_WINDOW_OPTIONS_INIT: WithWindow (65536 inserts), WithInvEps
// (8), WithMode (RecencyWindowHistorical), WithBlock (0: for OptimalSM,
// max(1, window / invEps)), WithDelta (0: exact signatures), WithMaxMemory
// (0: no cap), WithSeed (0), WithFlags (none is defined: 0). Errors:
// ErrInvalidArgument (an option out of range; a window above
// RecencyWindowMaxWindow, or a structure over WithMaxMemory, is
// ErrTooLarge), ErrOutOfMemory.
func NewRecencyWindow(opts ...Option) (*RecencyWindow, error) {
	o, flags, err := rwOptions("NewRecencyWindow", opts)
	if err != nil {
		return nil, err
	}
	return construct[RecencyWindow](recencyWindowKind, func() uintptr {
		return native.NewRecencyWindowNative(o.window, o.invEps, o.block, o.maxMemory, o.delta, uint(o.rwMode),
			uint(o.seed), uint(flags)).Swigcptr()
	})
}

// RecencyWindowMemoryFor returns the bytes a RecencyWindow of these options
// would hold (what its Memory reports), without creating it; WithMaxMemory
// is not applied. Errors: as NewRecencyWindow.
func RecencyWindowMemoryFor(opts ...Option) (bytes uint64, err error) {
	o, flags, err := rwOptions("RecencyWindowMemoryFor", opts)
	if err != nil {
		return 0, err
	}
	defer catch(&err)
	return native.RecencyWindowNativeMemory_for(o.window, o.invEps, o.block, o.maxMemory, o.delta, uint(o.rwMode),
		uint(o.seed), uint(flags)), nil
}

// answer is the (recency, inWindow) form of a native answer.
func answer(v uint64) (uint64, bool) {
	if v == RecencyWindowNotInWindow {
		return 0, false
	}
	return v, true
}

// Insert appends key to the stream (the next insert). Needs exclusive use.
// Errors: ErrClosed.
func (w *RecencyWindow) Insert(key []byte) error {
	return run(w.obj(), func(p rwNative) {
		k, kn := bridge.Key(key)
		p.Insert(k, kn)
		runtime.KeepAlive(key)
	})
}

// InsertString is Insert with a string key (its bytes, e.g. UTF-8).
func (w *RecencyWindow) InsertString(key string) error {
	return w.Insert(stringBytes(key))
}

// Query returns how many inserts ago key was last inserted, within the
// mode's promise, and inWindow true; or (0, false) when the key is not
// within the window. Errors: ErrClosed.
func (w *RecencyWindow) Query(key []byte) (recency uint64, inWindow bool, err error) {
	v, err := call(w.obj(), func(p rwNative) uint64 {
		k, kn := bridge.Key(key)
		v := p.Query(k, kn)
		runtime.KeepAlive(key)
		return v
	})
	recency, inWindow = answer(v)
	return recency, inWindow && err == nil, err
}

// QueryString is Query with a string key.
func (w *RecencyWindow) QueryString(key string) (recency uint64, inWindow bool, err error) {
	return w.Query(stringBytes(key))
}

// InsertReport is insert-then-report, the call of a cache-admission policy:
// what Query answered just before this insert (the key's previous recency
// and true, or (0, false) when it was not within the window), then key
// appended to the stream, with one hash. Needs exclusive use. Errors:
// ErrClosed.
func (w *RecencyWindow) InsertReport(key []byte) (previous uint64, inWindow bool, err error) {
	v, err := call(w.obj(), func(p rwNative) uint64 {
		k, kn := bridge.Key(key)
		v := p.Insert_report(k, kn)
		runtime.KeepAlive(key)
		return v
	})
	previous, inWindow = answer(v)
	return previous, inWindow && err == nil, err
}

// InsertReportString is InsertReport with a string key.
func (w *RecencyWindow) InsertReportString(key string) (previous uint64, inWindow bool, err error) {
	return w.InsertReport(stringBytes(key))
}

// InsertBatch is Insert(keys[i]) for every key, in order, in one call into
// C whose bucket reads overlap. Needs exclusive use. Errors: ErrClosed.
func (w *RecencyWindow) InsertBatch(keys [][]byte) error {
	return rwInsertBatch(w, keys)
}

// InsertBatchStrings is InsertBatch with string keys.
func (w *RecencyWindow) InsertBatchStrings(keys []string) error {
	return rwInsertBatch(w, keys)
}

func rwInsertBatch[K key](w *RecencyWindow, keys []K) error {
	_, err := batch(w.obj(), keys, func(p rwNative, data []byte, lens []int32) struct{} {
		p.Insert_batch(data, lens)
		return struct{}{}
	})
	return err
}

// QueryBatch is Query(keys[i]) for every key, in one call into C whose
// bucket reads overlap: one recency per key, RecencyWindowNotInWindow for a
// key out of the window. Errors: ErrClosed.
func (w *RecencyWindow) QueryBatch(keys [][]byte) ([]uint64, error) {
	return rwBatch(w, keys, rwNative.Query_batch)
}

// QueryBatchStrings is QueryBatch with string keys.
func (w *RecencyWindow) QueryBatchStrings(keys []string) ([]uint64, error) {
	return rwBatch(w, keys, rwNative.Query_batch)
}

// InsertReportBatch is InsertReport(keys[i]) for every key, in order, in
// one call into C: the same answers and the same window as those single
// calls (a key repeated within the batch reports its earlier occurrence in
// it), RecencyWindowNotInWindow for a key that was out of the window. Every
// argument is checked before anything changes. Needs exclusive use. Errors:
// ErrClosed.
func (w *RecencyWindow) InsertReportBatch(keys [][]byte) ([]uint64, error) {
	return rwBatch(w, keys, rwNative.Insert_report_batch)
}

// InsertReportBatchStrings is InsertReportBatch with string keys.
func (w *RecencyWindow) InsertReportBatchStrings(keys []string) ([]uint64, error) {
	return rwBatch(w, keys, rwNative.Insert_report_batch)
}

func rwBatch[K key](w *RecencyWindow, keys []K, op func(p rwNative, data []byte, lens []int32, out []uint64)) (
	[]uint64, error) {
	return batch(w.obj(), keys, func(p rwNative, data []byte, lens []int32) []uint64 {
		out := make([]uint64, len(lens))
		op(p, data, lens, out)
		return out
	})
}

// Clear forgets every key and restarts the stream: the tables stay
// allocated and empty, the counters restart at 0. Needs exclusive use.
// Errors: ErrClosed.
func (w *RecencyWindow) Clear() error {
	return run(w.obj(), rwNative.Clear)
}

// Info returns the window's options, defaults resolved. Errors: ErrClosed.
func (w *RecencyWindow) Info() (RecencyWindowInfo, error) { return recencyWindowInfo(w.obj()) }

// Stats returns the current state, in O(levels). Errors: ErrClosed.
func (w *RecencyWindow) Stats() (RecencyWindowStats, error) { return recencyWindowStats(w.obj()) }

// Level returns level i (0 the newest inserts, Stats().Levels-1 the
// oldest). Errors: ErrInvalidArgument (no level i), ErrClosed.
func (w *RecencyWindow) Level(i uint64) (RecencyWindowLevel, error) {
	level := func(p rwNative) native.RecencyWindowLevelNative { return p.Level(i) }
	return nativeStruct[RecencyWindowLevel](w.obj(), level, native.DeleteRecencyWindowLevelNative)
}

// Window returns the window W in inserts; InvEps the inverse error; Mode
// the mode. They are Info's fields, read once when the window was created,
// deserialized or unmarshaled: they never call C and cannot fail (a closed
// window keeps them; a zero or nil one returns 0).
func (w *RecencyWindow) Window() uint64 { return cached[RecencyWindowInfo](w.obj()).Window }

// InvEps returns the inverse relative error 1/eps; see Window.
func (w *RecencyWindow) InvEps() uint64 { return cached[RecencyWindowInfo](w.obj()).InvEps }

// Mode returns the mode; see Window.
func (w *RecencyWindow) Mode() RecencyWindowMode { return cached[RecencyWindowInfo](w.obj()).Mode }

// String describes the window, e.g. "RecencyWindow(window 65536, 1/eps 8,
// Historical, 64-bit signatures, seed 0)".
func (w *RecencyWindow) String() string {
	return describe("RecencyWindow", w.Info, func(i RecencyWindowInfo) string {
		return fmt.Sprintf("window %d, 1/eps %d, %v, %d-bit signatures, seed %d", i.Window, i.InvEps, i.Mode,
			i.SignatureBits, i.Seed)
	})
}
