package temporalfilters

import "temporalfilters.org/go/temporalfilters/internal/native"

// The six structures and what they all have: their native kinds, Close,
// Memory, serialization (Serialize, MarshalBinary, UnmarshalBinary,
// Deserialize<Name>), each a line over the shared code of handle.go. A new
// structure adds its kind and these methods here.

// The SWIG classes of the structures.
type (
	rsNative = native.SwigcptrRecencySketchNative
	abNative = native.SwigcptrAgeBloomNative
	tbNative = native.SwigcptrTimeBloomNative
	rlNative = native.SwigcptrRateLimiterNative
	rcNative = native.SwigcptrRotatingCuckooNative
	rwNative = native.SwigcptrRecencyWindowNative
)

// The kinds of the structures: name, destructor, deserialize factory, and
// the probe of a new object: its creation-time Info, which the plain
// getters return (the sketch's Width, ..., the filters' Capacity and Span,
// the cuckoo filter's options;
// none for the limiter, whose Info has limits that SetGlobalLimit and
// SetMaxKeys change), and whether its calls may overlap (then Close waits
// for those in flight, see handle): always for the limiter, for a sketch
// created with RecencySketchConcurrent, never for the Bloom filters and the
// cuckoo filter.
var (
	recencySketchKind = newKind[rsNative]("RecencySketch", native.DeleteRecencySketchNative,
		native.RecencySketchNativeDeserialize, probeSketch)
	ageBloomKind = newKind[abNative]("AgeBloom", native.DeleteAgeBloomNative,
		native.AgeBloomNativeDeserialize, func(p abNative) (any, bool) { return readAgeBloomInfo(p), false })
	timeBloomKind = newKind[tbNative]("TimeBloom", native.DeleteTimeBloomNative,
		native.TimeBloomNativeDeserialize, func(p tbNative) (any, bool) { return readTimeBloomInfo(p), false })
	rateLimiterKind = newKind[rlNative]("RateLimiter", native.DeleteRateLimiterNative,
		native.RateLimiterNativeDeserialize, func(rlNative) (any, bool) { return nil, true })
	rotatingCuckooKind = newKind[rcNative]("RotatingCuckoo", native.DeleteRotatingCuckooNative,
		native.RotatingCuckooNativeDeserialize, func(p rcNative) (any, bool) { return readRotatingCuckooInfo(p), false })
	recencyWindowKind = newKind[rwNative]("RecencyWindow", native.DeleteRecencyWindowNative,
		native.RecencyWindowNativeDeserialize, func(p rwNative) (any, bool) { return readRecencyWindowInfo(p), false })
)

// probeSketch reads a new sketch's Info; it is concurrent when created
// with RecencySketchConcurrent (read back, since a blob says so too).
func probeSketch(p rsNative) (any, bool) {
	info := readRecencySketchInfo(p)
	return info, info.Flags&RecencySketchConcurrent != 0
}

// The Info and Stats methods: the native struct each reads (fromNative);
// and the reads of the Info structs the probes cache.
var (
	readRecencySketchInfo  = readNative[RecencySketchInfo](rsNative.Info, native.DeleteRecencySketchInfoNative)
	readAgeBloomInfo       = readNative[AgeBloomInfo](abNative.Info, native.DeleteAgeBloomInfoNative)
	readTimeBloomInfo      = readNative[TimeBloomInfo](tbNative.Info, native.DeleteTimeBloomInfoNative)
	readRotatingCuckooInfo = readNative[RotatingCuckooInfo](rcNative.Info, native.DeleteRotatingCuckooInfoNative)
	readRecencyWindowInfo  = readNative[RecencyWindowInfo](rwNative.Info, native.DeleteRecencyWindowInfoNative)

	recencySketchInfo  = nativeStructOf[RecencySketchInfo](rsNative.Info, native.DeleteRecencySketchInfoNative)
	ageBloomStats      = nativeStructOf[AgeBloomStats](abNative.Stats, native.DeleteAgeBloomStatsNative)
	ageBloomInfo       = nativeStructOf[AgeBloomInfo](abNative.Info, native.DeleteAgeBloomInfoNative)
	timeBloomInfo      = nativeStructOf[TimeBloomInfo](tbNative.Info, native.DeleteTimeBloomInfoNative)
	rateLimiterStats   = nativeStructOf[RateLimiterStats](rlNative.Stats, native.DeleteRateLimiterStatsNative)
	rateLimiterInfo    = nativeStructOf[RateLimiterInfo](rlNative.Info, native.DeleteRateLimiterInfoNative)
	rotatingCuckooInfo = nativeStructOf[RotatingCuckooInfo](rcNative.Info, native.DeleteRotatingCuckooInfoNative)
	recencyWindowInfo  = nativeStructOf[RecencyWindowInfo](rwNative.Info, native.DeleteRecencyWindowInfoNative)
	recencyWindowStats = nativeStructOf[RecencyWindowStats](rwNative.Stats, native.DeleteRecencyWindowStatsNative)
)

// obj is the structure's native object, through which every method works.
func (s *RecencySketch) obj() object[rsNative] {
	return object[rsNative]{(*holder)(s), recencySketchKind}
}
func (f *AgeBloom) obj() object[abNative]    { return object[abNative]{(*holder)(f), ageBloomKind} }
func (f *TimeBloom) obj() object[tbNative]   { return object[tbNative]{(*holder)(f), timeBloomKind} }
func (r *RateLimiter) obj() object[rlNative] { return object[rlNative]{(*holder)(r), rateLimiterKind} }
func (f *RotatingCuckoo) obj() object[rcNative] {
	return object[rcNative]{(*holder)(f), rotatingCuckooKind}
}
func (w *RecencyWindow) obj() object[rwNative] {
	return object[rwNative]{(*holder)(w), recencyWindowKind}
}

// DeserializeRecencySketch creates a sketch from a blob written by
// Serialize (in any language). The blob is checked completely first.
// Option: WithMaxMemory (a cap on the memory it may take).
// Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
// ErrChecksum, ErrCorrupt (ErrBadBlob), ErrTooLarge (over WithMaxMemory),
// ErrOutOfMemory.
func DeserializeRecencySketch(blob []byte, opts ...Option) (*RecencySketch, error) {
	return deserializeAs[RecencySketch, RecencySketchFlags](recencySketchKind, blob, opts)
}

// DeserializeAgeBloom creates a filter from a blob written by Serialize (in
// any language), of either layout (the blob says which). The blob is checked
// completely first. Option: WithMaxMemory (a cap on the memory it may take).
// Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
// ErrChecksum, ErrCorrupt (ErrBadBlob), ErrTooLarge (over WithMaxMemory),
// ErrOutOfMemory.
func DeserializeAgeBloom(blob []byte, opts ...Option) (*AgeBloom, error) {
	return deserializeAs[AgeBloom, AgeBloomFlags](ageBloomKind, blob, opts)
}

// DeserializeTimeBloom creates a filter from a blob written by Serialize (in
// any language). The blob is checked completely first. Option:
// WithMaxMemory (a cap on the memory it may take).
// Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
// ErrChecksum, ErrCorrupt (ErrBadBlob), ErrTooLarge (over WithMaxMemory),
// ErrOutOfMemory.
func DeserializeTimeBloom(blob []byte, opts ...Option) (*TimeBloom, error) {
	return deserializeAs[TimeBloom, TimeBloomFlags](timeBloomKind, blob, opts)
}

// DeserializeRateLimiter creates a limiter from a blob written by Serialize
// (in any language): its parameters, global window, overrides, max keys,
// counters, reclaim horizon and every tracked key's state. The blob is
// checked completely first. Option: WithMaxMemory (a cap on the memory it
// may take). Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion,
// ErrWrongKind, ErrChecksum, ErrCorrupt (ErrBadBlob), ErrTooLarge (over
// WithMaxMemory), ErrOutOfMemory.
func DeserializeRateLimiter(blob []byte, opts ...Option) (*RateLimiter, error) {
	return deserializeAs[RateLimiter, RateLimiterFlags](rateLimiterKind, blob, opts)
}

// DeserializeRotatingCuckoo creates a filter from a blob written by
// Serialize (in any language): its options, counters, clock, tables and
// fingerprints (a table older than the ttl stays expired). The blob is
// checked completely first. Option: WithMaxMemory (a cap on the memory it
// may take). Errors: ErrTruncated, ErrBadMagic, ErrUnsupportedVersion,
// ErrWrongKind, ErrChecksum, ErrCorrupt (ErrBadBlob), ErrTooLarge (over
// WithMaxMemory), ErrOutOfMemory.
func DeserializeRotatingCuckoo(blob []byte, opts ...Option) (*RotatingCuckoo, error) {
	return deserializeAs[RotatingCuckoo, RotatingCuckooFlags](rotatingCuckooKind, blob, opts)
}

// DeserializeRecencyWindow creates a window from a blob written by
// Serialize (in any language): its options, stream position, counters and
// every level's table, so that it answers and goes on exactly as the
// original. The blob is checked completely first. Option: WithMaxMemory (a
// cap on the memory it may take). Errors: ErrTruncated, ErrBadMagic,
// ErrUnsupportedVersion, ErrWrongKind, ErrChecksum, ErrCorrupt
// (ErrBadBlob), ErrTooLarge (over WithMaxMemory), ErrOutOfMemory.
func DeserializeRecencyWindow(blob []byte, opts ...Option) (*RecencyWindow, error) {
	return deserializeAs[RecencyWindow, RecencyWindowFlags](recencyWindowKind, blob, opts)
}

// Close frees the sketch's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error matching ErrClosed. On a
// sketch created with RecencySketchConcurrent, Close may run while other
// goroutines call it: it waits for the calls in flight before freeing the
// memory. Without RecencySketchConcurrent, Close must not run concurrently
// with other calls on the same sketch (it would free the memory under them).
func (s *RecencySketch) Close() error { return s.obj().close() }

// Close frees the filter's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error matching ErrClosed. Close must
// not run concurrently with other calls on the same filter (it would free
// the memory under them).
func (f *AgeBloom) Close() error { return f.obj().close() }

// Close frees the filter's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error matching ErrClosed. Close must
// not run concurrently with other calls on the same filter (it would free
// the memory under them).
func (f *TimeBloom) Close() error { return f.obj().close() }

// Close frees the limiter's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error matching ErrClosed. It may
// run while other goroutines call the limiter: it waits for the calls in
// flight before freeing the memory.
func (r *RateLimiter) Close() error { return r.obj().close() }

// Close frees the filter's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error matching ErrClosed. Close must
// not run concurrently with other calls on the same filter (it would free
// the memory under them).
func (f *RotatingCuckoo) Close() error { return f.obj().close() }

// Memory returns the bytes of C memory held by the sketch. Errors: ErrClosed.
func (s *RecencySketch) Memory() (bytes uint64, err error) { return s.obj().memory() }

// Memory returns the bytes of C memory held by the filter. Errors: ErrClosed.
func (f *AgeBloom) Memory() (bytes uint64, err error) { return f.obj().memory() }

// Memory returns the bytes of C memory held by the filter. Errors: ErrClosed.
func (f *TimeBloom) Memory() (bytes uint64, err error) { return f.obj().memory() }

// Memory returns the bytes of C memory held by the limiter: its tables,
// the exact mode's rings, the global window and the overrides (no lock:
// under concurrent calls, each part as of some recent moment). Errors:
// ErrClosed.
func (r *RateLimiter) Memory() (bytes uint64, err error) { return r.obj().memory() }

// Memory returns the bytes of C memory held by the filter (its tables and
// their bookkeeping; at most its memory cap between calls). Errors: ErrClosed.
func (f *RotatingCuckoo) Memory() (bytes uint64, err error) { return f.obj().memory() }

// Serialize writes the filter in the library's portable wire format (kind
// 5: every option, counter, table and fingerprint, and the clock), readable
// by DeserializeRotatingCuckoo and by the other languages' bindings.
// Errors: ErrClosed.
func (f *RotatingCuckoo) Serialize() ([]byte, error) { return f.obj().serialize() }

// Serialize writes the sketch in the library's portable wire format
// (little-endian, checksummed), readable by DeserializeRecencySketch and by
// the other languages' bindings. Errors: ErrClosed.
func (s *RecencySketch) Serialize() ([]byte, error) { return s.obj().serialize() }

// Serialize writes the filter in the library's portable wire format (kind
// 2: little-endian, checksummed), readable by DeserializeAgeBloom and by the
// other languages' bindings. Errors: ErrClosed.
func (f *AgeBloom) Serialize() ([]byte, error) { return f.obj().serialize() }

// Serialize writes the filter in the library's portable wire format (kind
// 3: every slice, size, timestamp and counter), readable by
// DeserializeTimeBloom and by the other languages' bindings.
// Errors: ErrClosed.
func (f *TimeBloom) Serialize() ([]byte, error) { return f.obj().serialize() }

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (s *RecencySketch) MarshalBinary() ([]byte, error) { return s.Serialize() }

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (f *AgeBloom) MarshalBinary() ([]byte, error) { return f.Serialize() }

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (f *TimeBloom) MarshalBinary() ([]byte, error) { return f.Serialize() }

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (r *RateLimiter) MarshalBinary() ([]byte, error) { return r.Serialize() }

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (f *RotatingCuckoo) MarshalBinary() ([]byte, error) { return f.Serialize() }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of s (zero, open or closed) with the sketch in data, which it does
// not retain. On error s is unchanged. Needs exclusive use of s.
func (s *RecencySketch) UnmarshalBinary(data []byte) error { return s.obj().unmarshal(data) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of f (zero, open or closed) with the filter in data, which it does
// not retain. On error f is unchanged. Needs exclusive use of f.
func (f *AgeBloom) UnmarshalBinary(data []byte) error { return f.obj().unmarshal(data) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of f (zero, open or closed) with the filter in data, which it does
// not retain. On error f is unchanged. Needs exclusive use of f.
func (f *TimeBloom) UnmarshalBinary(data []byte) error { return f.obj().unmarshal(data) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of r (zero, open or closed) with the limiter in data, which it does
// not retain. On error r is unchanged. Needs exclusive use of r.
func (r *RateLimiter) UnmarshalBinary(data []byte) error { return r.obj().unmarshal(data) }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of f (zero, open or closed) with the filter in data, which it does
// not retain. On error f is unchanged. Needs exclusive use of f.
func (f *RotatingCuckoo) UnmarshalBinary(data []byte) error { return f.obj().unmarshal(data) }

// Close frees the window's C memory. It is idempotent and always returns
// nil; afterwards every method returns an error matching ErrClosed. Close
// must not run concurrently with other calls on the same window (it would
// free the memory under them).
func (w *RecencyWindow) Close() error { return w.obj().close() }

// Memory returns the bytes of C memory held by the window (its levels'
// tables and the scan's scratch space; fixed at creation). Errors: ErrClosed.
func (w *RecencyWindow) Memory() (bytes uint64, err error) { return w.obj().memory() }

// Serialize writes the window in the library's portable wire format (kind
// 6: the options, the stream position, the counters and every level's
// table), readable by DeserializeRecencyWindow and by the other languages'
// bindings. Errors: ErrClosed.
func (w *RecencyWindow) Serialize() ([]byte, error) { return w.obj().serialize() }

// MarshalBinary implements encoding.BinaryMarshaler; it is Serialize.
func (w *RecencyWindow) MarshalBinary() ([]byte, error) { return w.Serialize() }

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it replaces the
// state of w (zero, open or closed) with the window in data, which it does
// not retain. On error w is unchanged. Needs exclusive use of w.
func (w *RecencyWindow) UnmarshalBinary(data []byte) error { return w.obj().unmarshal(data) }
