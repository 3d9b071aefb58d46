package temporalfilters

// Go has no overloads and no default arguments, so the choices the
// structures share (the hash seed, the flags, a memory cap for deserialize)
// are trailing functional options:
//
//	f, err := NewAgeBloomFor(100_000, 0.01)                                  // seed 0, flags 0
//	f, err := NewAgeBloomFor(100_000, 0.01, WithSeed(42), WithFlags(AgeBloomBlocked))
//
// A call without them is the short form with the C library's defaults (seed
// 0, flags 0, no cap); the options name what they set, so a seed and flags
// (both integers) cannot be swapped, and a later choice (a speed-or-memory
// preference, ...) is one more option rather than another constructor. An
// option the call does not take (flags of another structure, a seed or
// flags for a deserializer, which reads them from the blob) is refused
// with ErrInvalidArgument.

// Option is a choice given to a constructor, a sizing helper or a
// deserializer: WithSeed, WithFlags or WithMaxMemory, and the options of
// a RotatingCuckoo (WithTableSlots, WithTTL, WithMaxOccupancy,
// WithSlotsPerBucket, WithMaxKicks, WithMaxTables) and of a RecencyWindow
// (WithWindow, WithInvEps, WithBlock, WithDelta, WithMode). A nil Option is
// ignored.
type Option func(*options)

// options holds the choices of one call.
type options struct {
	given     optionSet
	seed      uint32
	flags     interface{} // the typed flags given (RecencySketchFlags, ...)
	maxMemory uint64
	// the fields of tf_rotating_cuckoo_options
	tableSlots     uint64
	ttl            uint64
	maxOccupancy   float64
	slotsPerBucket uint32
	maxKicks       uint32
	maxTables      uint32
	// the fields of tf_recency_window_options
	window uint64
	invEps uint64
	block  uint64
	delta  float64
	rwMode RecencyWindowMode
}

// optionSet says which options a call was given or takes.
type optionSet uint16

const (
	optSeed optionSet = 1 << iota
	optFlags
	optMaxMemory
	optTableSlots
	optTTL
	optMaxOccupancy
	optSlotsPerBucket
	optMaxKicks
	optMaxTables
	optWindow
	optInvEps
	optBlock
	optDelta
	optMode
)

// WithSeed sets the hash seed (default 0). Structures merge and compare
// only with equal seeds.
func WithSeed(seed uint32) Option {
	return func(o *options) { o.given |= optSeed; o.seed = seed }
}

// WithFlags sets the creation flags (default 0): a bitwise OR of one
// structure's flags, e.g. WithFlags(RecencySketchConcurrent |
// RecencySketchBlocked). Flags of another structure are refused.
func WithFlags[F Flags](flags F) Option {
	return func(o *options) { o.given |= optFlags; o.flags = flags }
}

// WithMaxMemory caps the memory a deserialized structure may take, in bytes
// (default 0: the library's own bound, which follows the blob's size; for
// a RateLimiter at most 16 times the blob plus 64 KiB): a blob of a larger
// structure is refused with ErrTooLarge before anything is allocated. For Deserialize<Name>; UnmarshalBinary has the default.
func WithMaxMemory(bytes uint64) Option {
	return func(o *options) { o.given |= optMaxMemory; o.maxMemory = bytes }
}

// WithTableSlots sets a RotatingCuckoo's first table size in slots: a power
// of two, at least 2 x its slots per bucket (default 16384).
func WithTableSlots(slots uint64) Option {
	return func(o *options) { o.given |= optTableSlots; o.tableSlots = slots }
}

// WithTTL sets a RotatingCuckoo's time to live, in the caller's time unit
// (default 0: none, tables go only for memory).
func WithTTL(ttl uint64) Option {
	return func(o *options) { o.given |= optTTL; o.ttl = ttl }
}

// WithMaxOccupancy sets the fill, in (0, 1], at which a RotatingCuckoo's
// newest table stops taking inserts (default 0: the layout's measured one).
func WithMaxOccupancy(occupancy float64) Option {
	return func(o *options) { o.given |= optMaxOccupancy; o.maxOccupancy = occupancy }
}

// WithSlotsPerBucket sets a RotatingCuckoo's slots per bucket: 1, 2, 4 (the
// default) or 8.
func WithSlotsPerBucket(slots uint32) Option {
	return func(o *options) { o.given |= optSlotsPerBucket; o.slotsPerBucket = slots }
}

// WithMaxKicks sets a RotatingCuckoo's longest kick chain,
// 1..RotatingCuckooMaxKicks (default 500).
func WithMaxKicks(kicks uint32) Option {
	return func(o *options) { o.given |= optMaxKicks; o.maxKicks = kicks }
}

// WithMaxTables sets the most tables a RotatingCuckoo keeps,
// 1..RotatingCuckooMaxTables (default 64).
func WithMaxTables(tables uint32) Option {
	return func(o *options) { o.given |= optMaxTables; o.maxTables = tables }
}

// WithWindow sets a RecencyWindow's window W in inserts,
// 1..RecencyWindowMaxWindow (default 65536).
func WithWindow(inserts uint64) Option {
	return func(o *options) { o.given |= optWindow; o.window = inserts }
}

// WithInvEps sets a RecencyWindow's inverse relative error 1/eps,
// 1..RecencyWindowMaxInvEps (default 8).
func WithInvEps(invEps uint64) Option {
	return func(o *options) { o.given |= optInvEps; o.invEps = invEps }
}

// WithBlock sets the block D of a RecencyWindow in RecencyWindowOptimalSM
// mode, 1..window (default 0: max(1, window / invEps)); any other mode
// takes only 0.
func WithBlock(inserts uint64) Option {
	return func(o *options) { o.given |= optBlock; o.block = inserts }
}

// WithDelta sets the target false-match probability, in (0, 1), of a
// RecencyWindow's approximate signatures (default 0: exact 64-bit
// signatures).
func WithDelta(delta float64) Option {
	return func(o *options) { o.given |= optDelta; o.delta = delta }
}

// WithMode sets a RecencyWindow's mode: RecencyWindowHistorical (the
// default), RecencyWindowExact or RecencyWindowOptimalSM.
func WithMode(mode RecencyWindowMode) Option {
	return func(o *options) { o.given |= optMode; o.rwMode = mode }
}

// Flags are the creation flags of the structures, one type per structure.
type Flags interface {
	RecencySketchFlags | AgeBloomFlags | TimeBloomFlags | RateLimiterFlags | RotatingCuckooFlags |
		RecencyWindowFlags
}

// RecencySketchFlags are the creation flags of a RecencySketch
// (TF_RECENCY_SKETCH_*); any other bit is refused.
type RecencySketchFlags uint32

// AgeBloomFlags are the creation flags of an AgeBloom (TF_AGE_BLOOM_*); any
// other bit is refused.
type AgeBloomFlags uint32

// TimeBloomFlags are the creation flags of a TimeBloom
// (TF_TIME_BLOOM_*: TimeBloomMinMemory, for NewTimeBloomFor); any other bit
// is refused.
type TimeBloomFlags uint32

// RateLimiterFlags are the creation flags of a RateLimiter
// (TF_RATE_LIMITER_*); any other bit is refused.
type RateLimiterFlags uint32

// RotatingCuckooFlags are the creation flags of a RotatingCuckoo
// (TF_ROTATING_CUCKOO_*); any other bit is refused.
type RotatingCuckooFlags uint32

// RecencyWindowFlags are the creation flags of a RecencyWindow. None is
// defined yet: only 0 is accepted.
type RecencyWindowFlags uint32

// configure reads the options of the call what (for the messages), which
// takes the options in allowed and the flags of type F.
func configure[F Flags](what string, allowed optionSet, opts []Option) (o options, flags F, err error) {
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	for _, c := range []struct {
		opt  optionSet
		name string
	}{{optSeed, "WithSeed"}, {optFlags, "WithFlags"}, {optMaxMemory, "WithMaxMemory"},
		{optTableSlots, "WithTableSlots"}, {optTTL, "WithTTL"}, {optMaxOccupancy, "WithMaxOccupancy"},
		{optSlotsPerBucket, "WithSlotsPerBucket"}, {optMaxKicks, "WithMaxKicks"}, {optMaxTables, "WithMaxTables"},
		{optWindow, "WithWindow"}, {optInvEps, "WithInvEps"}, {optBlock, "WithBlock"}, {optDelta, "WithDelta"},
		{optMode, "WithMode"}} {
		if o.given&c.opt != 0 && allowed&c.opt == 0 {
			return o, 0, invalidArgument("%s takes no %s option", what, c.name)
		}
	}
	if o.flags != nil {
		f, ok := o.flags.(F)
		if !ok {
			return o, 0, invalidArgument("%s takes %T, not %T", what, flags, o.flags)
		}
		flags = f
	}
	return o, flags, nil
}

// build is the body of every constructor: it reads opts (those in allowed,
// flags of type F) for the call what, then creates the structure T (of
// kind k) with ctor.
func build[T ~struct{ h *handle }, F Flags](k *kind, what string, allowed optionSet, opts []Option,
	ctor func(seed uint32, flags F) uintptr) (*T, error) {
	o, flags, err := configure[F](what, allowed, opts)
	if err != nil {
		return nil, err
	}
	return construct[T](k, func() uintptr { return ctor(o.seed, flags) })
}
