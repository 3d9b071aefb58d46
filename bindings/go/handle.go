package temporalfilters

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"temporalfilters.org/go/temporalfilters/internal/native"
)

// This file is the one mechanism behind the six structures (RecencySketch,
// AgeBloom, TimeBloom, RateLimiter, RotatingCuckoo, RecencyWindow): the
// lifetime of their native object, the closed checks, the recovery of
// failed native calls into errors, and serialization. Each structure adds
// only its kind (name, destructor, deserializer) and one line per method.
// The lifetime part also serves the sub-packages' native objects (the
// redis package's RedisLimiter) through internal/bridge (Adopt).

// handle owns one native object: the address of its SWIG handle (a
// *AgeBloomNative, ...), freed by Close or, as a safety net, by the
// finalizer. It is a separate allocation so that the finalizer can be set
// on it even when the structure value lives inside another value (as
// os.File does), and copies of a structure value share it.
//
// Closing while calls run: a structure whose calls may overlap (a
// RateLimiter, a RecencySketch created with RecencySketchConcurrent: a
// concurrent handle) counts the calls in flight, and Close waits for them
// before it frees the native object: a call that started before Close
// finishes on a live object, and every call that starts after it returns
// ErrClosed. A call registers (calls.Add(1)) before it loads p, and Close
// zeroes p before it reads calls: with Go's sequentially consistent atomics
// either the call sees p == 0 or Close sees the call. The count costs one
// atomic add and subtract per call, on concurrent handles only (the binding
// benchmark's -tf.bench.concurrent run measures a concurrent sketch); the other structures need Close to have them
// to itself, like every call that modifies them.
//
// params holds what the structure's plain getters return (a sketch's Width,
// a filter's Capacity, ...): its Info struct, read once when the native
// object is adopted (created, deserialized or unmarshaled) and fixed from
// then on, so those getters never call C and cannot fail. It stays after
// Close: the parameters describe what was created.
type handle struct {
	p          atomic.Uintptr // the native object; 0 once freed
	kind       *kind
	concurrent bool         // calls may overlap: free waits for those in flight
	calls      atomic.Int64 // the calls in flight (concurrent handles only)
	params     any          // the creation-time Info (kind.probe); nil for a kind without one
}

// kind describes the native class of one structure.
type kind struct {
	name        string                                        // "AgeBloom": for the messages
	del         func(p uintptr)                               // frees the native object (the SWIG destructor)
	deserialize func(blob []byte, maxMemory uint64) uintptr   // the native deserialize (0 after a failure, which panics first)
	probe       func(p uintptr) (params any, concurrent bool) // a new object's creation-time Info (the handle's params) and whether its calls may overlap
}

// structure is what every structure of the package implements.
type structure interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
	io.Closer
	fmt.Stringer
	Memory() (uint64, error)
	Serialize() ([]byte, error)
}

var _ = []structure{(*RecencySketch)(nil), (*AgeBloom)(nil), (*TimeBloom)(nil), (*RateLimiter)(nil),
	(*RotatingCuckoo)(nil), (*RecencyWindow)(nil)}

// newKind describes the structure called name whose SWIG class is P, with
// the class's destructor and deserialize factory (with a memory limit; I is
// the class's Go interface, which P implements), and probe, which reads
// from a new object its creation-time Info (the plain getters' values, nil
// for none) and whether its calls may overlap.
func newKind[P nativeObject, I interface{ Swigcptr() uintptr }](name string, del func(I),
	deserialize func([]byte, uint64) I, probe func(P) (any, bool)) *kind {
	return &kind{
		name:        name,
		probe:       func(p uintptr) (any, bool) { return probe(P(p)) },
		del:         func(p uintptr) { del(any(P(p)).(I)) },
		deserialize: func(blob []byte, maxMemory uint64) uintptr { return deserialize(blob, maxMemory).Swigcptr() },
	}
}

// holder is the shape of every structure type (RecencySketch, AgeBloom,
// TimeBloom, RateLimiter, RotatingCuckoo and RecencyWindow are each a
// struct{ h *handle }), so that a *AgeBloom converts to a *holder and the
// code below serves all six.
type holder struct {
	h *handle
}

// liveObjects counts the native objects not yet freed, of every structure
// and every object a sub-package adopted (for the tests).
var liveObjects int64

// free frees the native object (once: p is taken atomically), after the
// calls in flight on a concurrent handle have returned.
func (h *handle) free() {
	if p := h.p.Swap(0); p != 0 {
		h.drain()
		h.kind.del(p)
		atomic.AddInt64(&liveObjects, -1)
	}
}

// drain waits until no call is in flight on a concurrent handle (its p was
// replaced first, so no new call reaches the old object). Calls are short
// (one native call, or a serialize's few); a long one is waited for without
// spinning.
func (h *handle) drain() {
	if !h.concurrent {
		return
	}
	for spins := 0; h.calls.Load() != 0; spins++ {
		if spins < 100 {
			runtime.Gosched()
		} else {
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// arm counts h as live and sets its finalizer.
func (h *handle) arm() {
	atomic.AddInt64(&liveObjects, 1)
	runtime.SetFinalizer(h, (*handle).free)
}

// nativeObject is what every SWIG class of the structures has: it is a
// pointer-sized handle with the methods the shared code calls.
type nativeObject interface {
	~uintptr
	Memory() uint64
	Serialized_size() uint64
	Serialize_into([]byte) uint64
}

// object is one structure value (nil, zero, open or closed) with its kind:
// what every method of the structure works through. P is the SWIG class.
type object[P nativeObject] struct {
	x *holder // nil for a nil structure pointer
	k *kind
}

// ptr returns the native object, 0 when the structure is nil, zero or
// closed.
func (o object[P]) ptr() P {
	if o.x == nil || o.x.h == nil {
		return 0
	}
	return P(o.x.h.p.Load())
}

// closed is the error of every call on a closed (or zero, or nil)
// structure: status TF_ERR_NULL, family ErrClosed, and the message the
// native layer gives, "the <Name> is closed".
func (o object[P]) closed() error {
	e := newError(StatusNull, "the "+o.k.name+" is closed")
	e.closed = true
	return e
}

// call runs op on the native object of o: the closed error when there is
// none, the *Error of a failed native call (recovered from its panic),
// else op's result. It is the body of nearly every method. On a concurrent
// handle the call is counted in flight (registered before p is loaded), so
// that Close waits for it.
func call[P nativeObject, T any](o object[P], op func(p P) T) (v T, err error) {
	defer catch(&err)
	if o.x == nil || o.x.h == nil {
		return v, o.closed()
	}
	h := o.x.h
	if h.concurrent {
		h.calls.Add(1)
		defer h.calls.Add(-1)
	}
	p := P(h.p.Load())
	if p == 0 {
		return v, o.closed()
	}
	v = op(p)
	runtime.KeepAlive(h)
	return v, nil
}

// run is call for an op without a result.
func run[P nativeObject](o object[P], op func(p P)) error {
	_, err := call(o, func(p P) struct{} {
		op(p)
		return struct{}{}
	})
	return err
}

// Free frees the native object now and disarms the finalizer; it is
// idempotent.
func (h *handle) Free() {
	h.free()
	runtime.SetFinalizer(h, nil)
}

// Ptr returns the native object, 0 once freed. With Free, it makes a
// *handle the bridge.Handle of a sub-package's native object (bridge.Adopt).
func (h *handle) Ptr() uintptr { return h.p.Load() }

// close frees the native object now and disarms the finalizer; it is
// idempotent and accepts nil and zero structures. It always returns nil.
func (o object[P]) close() error {
	if o.x != nil && o.x.h != nil {
		o.x.h.Free()
	}
	return nil
}

// memory is the Memory method of every structure.
func (o object[P]) memory() (uint64, error) {
	return call(o, func(p P) uint64 { return p.Memory() })
}

// serializeAttempts bounds the retries of serialize when other goroutines
// keep growing a structure that allows concurrent calls: the same number in
// every language (bindings/temporalfilters.i says why 8).
const serializeAttempts = native.TF_BINDING_SERIALIZE_ATTEMPTS

// serialize is the Serialize method of every structure: the size, then the
// bytes. The two are separate native calls, between which other goroutines
// may grow a structure that allows concurrent calls (the rate limiter): the
// second then fails with ErrBufferTooSmall and both are tried again, with a
// quarter more room than measured.
func (o object[P]) serialize() ([]byte, error) {
	for attempt := 1; ; attempt++ {
		size, err := call(o, func(p P) uint64 { return p.Serialized_size() })
		if err != nil {
			return nil, err
		}
		if size > math.MaxInt {
			return nil, newError(StatusTooLarge, "the serialized "+o.k.name+" does not fit in a Go slice")
		}
		room := size
		if attempt > 1 && size <= (math.MaxInt-64)/5*4 {
			room = size + size/4 + 64
		}
		blob := make([]byte, int(room))
		written, err := call(o, func(p P) uint64 { return p.Serialize_into(blob) })
		if err == nil {
			return blob[:written], nil
		}
		if !errors.Is(err, ErrBufferTooSmall) || attempt >= serializeAttempts {
			return nil, err
		}
	}
}

// adopt takes ownership of the native object at p, just returned by a
// constructor or factory of the native layer, and arms the finalizer.
func adopt(k *kind, p uintptr) (*handle, error) {
	if p == 0 {
		return nil, noObject(k)
	}
	params, concurrent := probe(k, p)
	h := &handle{kind: k, concurrent: concurrent, params: params}
	h.p.Store(p)
	h.arm()
	return h, nil
}

// probe reads the creation-time Info of p, a new native object of kind k,
// and whether its calls may overlap (k.probe). Should asking fail (its
// panic goes on), p is freed first, since nothing owns it yet.
func probe(k *kind, p uintptr) (params any, concurrent bool) {
	asked := false
	defer func() {
		if !asked {
			k.del(p)
		}
	}()
	params, concurrent = k.probe(p)
	asked = true
	return params, concurrent
}

// cached is the body of every plain getter: the structure's creation-time
// Info T (handle.params), the zero T for a nil or zero structure. It never
// calls C, and a closed structure keeps what it was created with.
func cached[T any, P nativeObject](o object[P]) T {
	if o.x != nil && o.x.h != nil {
		if v, ok := o.x.h.params.(T); ok {
			return v
		}
	}
	var zero T
	return zero
}

// noObject is the error of a native layer that returned nothing without
// reporting a failure (it always reports one before returning NULL).
func noObject(k *kind) error {
	return newError(StatusInternal, "the native layer returned no "+k.name+" and no error")
}

// create runs a native constructor or factory and takes its result:
// create(k, func() uintptr { return native.NewAgeBloomNative(...).Swigcptr() }).
func create(k *kind, ctor func() uintptr) (h *handle, err error) {
	defer catch(&err)
	return adopt(k, ctor())
}

// unmarshal is the UnmarshalBinary method of every structure: it replaces
// the native object of the structure (zero, open or closed) with the one in
// data. A zero structure gets a handle, an open one frees its old object, a
// closed one is open again (with its finalizer armed again). On error the
// structure is unchanged.
func (o object[P]) unmarshal(data []byte) (err error) {
	if o.x == nil {
		return newError(StatusNull, "UnmarshalBinary into a nil *"+o.k.name)
	}
	defer catch(&err)
	p := o.k.deserialize(blobArg(data), 0)
	if o.x.h == nil {
		o.x.h, err = adopt(o.k, p)
		return err
	}
	if p == 0 {
		return noObject(o.k)
	}
	h := o.x.h
	params, concurrent := probe(o.k, p)
	old := h.p.Swap(p)
	if old == 0 {
		h.arm() // it was closed, so its finalizer was cleared
	} else {
		h.drain() // (UnmarshalBinary needs exclusive use; this is cheap)
		o.k.del(old)
	}
	h.concurrent = concurrent
	h.params = params
	return nil
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

// construct runs a native constructor or factory of the structure T
// (kind k) and wraps the new object in a *T.
func construct[T ~struct{ h *handle }](k *kind, ctor func() uintptr) (*T, error) {
	h, err := create(k, ctor)
	if err != nil {
		return nil, err
	}
	t := T(holder{h})
	return &t, nil
}

// deserializeAs is the Deserialize<Name> function of the structure T (kind
// k, flags F), which takes the option WithMaxMemory.
func deserializeAs[T ~struct{ h *handle }, F Flags](k *kind, blob []byte, opts []Option) (*T, error) {
	o, _, err := configure[F]("Deserialize"+k.name, optMaxMemory, opts)
	if err != nil {
		return nil, err
	}
	return construct[T](k, func() uintptr { return k.deserialize(blobArg(blob), o.maxMemory) })
}

// nativeStruct is the body of the Info and Stats methods: get returns the
// native struct, which becomes a T (fromNative).
func nativeStruct[T any, P nativeObject, N any](o object[P], get func(P) N, del func(N)) (T, error) {
	return call(o, func(p P) T { return fromNative[T](get(p), del) })
}

// nativeStructOf is nativeStruct as a function of the structure, for the
// methods without arguments.
func nativeStructOf[T any, P nativeObject, N any](get func(P) N, del func(N)) func(object[P]) (T, error) {
	return func(o object[P]) (T, error) { return nativeStruct[T](o, get, del) }
}

// readNative is fromNative of get's result, as a function of a native
// object (for the probes, which hold the object's pointer, not a
// structure).
func readNative[T any, P nativeObject, N any](get func(P) N, del func(N)) func(P) T {
	return func(p P) T { return fromNative[T](get(p), del) }
}

// fromNative converts n, an info or stats struct the native layer returned
// (a copy the caller owns, freed here with del), into T, the Go struct of
// the same fields: each field of T takes the value of n's getter of the same
// name (FPRNow from GetFpr_now: names compared without case and
// underscores), converted to the field's type. A field without a getter is
// a bug of this package (TestInfoStatsFields checks every struct).
func fromNative[T any, N any](n N, del func(N)) (v T) {
	defer del(n)
	out := reflect.ValueOf(&v).Elem()
	in := reflect.ValueOf(n)
	for i, m := range nativeFields(out.Type(), in.Type()) {
		out.Field(i).Set(in.Method(m).Call(nil)[0].Convert(out.Field(i).Type()))
	}
	return v
}

// nativeFields maps the fields of the Go struct to the getters of the SWIG
// struct: for each field, the index of its getter among the methods. The
// plans are computed once per pair of types.
func nativeFields(goType, nativeType reflect.Type) []int {
	type pair struct{ goType, nativeType reflect.Type }
	key := pair{goType, nativeType}
	if plan, ok := fieldPlans.Load(key); ok {
		return plan.([]int)
	}
	getters := map[string]int{}
	for m := 0; m < nativeType.NumMethod(); m++ {
		if name := nativeType.Method(m).Name; strings.HasPrefix(name, "Get") {
			getters[fieldKey(name[len("Get"):])] = m
		}
	}
	plan := make([]int, goType.NumField())
	for i := range plan {
		m, ok := getters[fieldKey(goType.Field(i).Name)]
		if !ok {
			panic("temporalfilters: " + nativeType.String() + " has no getter of " + goType.Name() + "." +
				goType.Field(i).Name)
		}
		plan[i] = m
	}
	fieldPlans.Store(key, plan)
	return plan
}

var fieldPlans sync.Map

// fieldKey is a field's name without case and underscores.
func fieldKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", ""))
}

// describe is the String method of every structure: "<name>(<what format
// says of what get returns>)", or "<name>(closed)".
func describe[S any](name string, get func() (S, error), format func(S) string) string {
	s, err := get()
	if err != nil {
		return name + "(closed)"
	}
	return name + "(" + format(s) + ")"
}
