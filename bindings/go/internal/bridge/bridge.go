// Package bridge hands the root package's error machinery and the
// ownership of native objects (Adopt) to the binding's sub-packages
// (temporalfilters.org/go/temporalfilters/redis), which have native modules
// of their own: the root package sets these functions in its init, which
// runs before any importer's code. It also holds the packing of batch keys
// that every package's batch calls share (PackKeys). Nothing outside the
// module can import it.
package bridge

import (
	"math"
	"sync"
	"unsafe"
)

// PackedKeys are keys laid end to end, the batch format of every native
// layer of the binding: their bytes (Data) and lengths (Lens). The buffers
// are reused through a pool: a batch call allocates nothing of its own once
// the pool is warm.
type PackedKeys struct {
	Data []byte
	Lens []int32
}

var packPool = sync.Pool{New: func() interface{} { return new(PackedKeys) }}

// maxPooledBytes bounds the buffers kept for reuse.
const maxPooledBytes = 1 << 20

// Release gives the buffers back to the pool once the call that used them
// is made.
func (pk *PackedKeys) Release() {
	if cap(pk.Data) <= maxPooledBytes && cap(pk.Lens) <= maxPooledBytes/4 {
		packPool.Put(pk)
	}
}

// PackKeys lays keys end to end. It returns the packed keys and -1, or nil
// and the index of the first key longer than the native layers' int32
// lengths allow (the caller makes its ErrInvalidArgument).
func PackKeys[K []byte | string](keys []K) (*PackedKeys, int) {
	pk := packPool.Get().(*PackedKeys)
	pk.Data, pk.Lens = pk.Data[:0], pk.Lens[:0]
	for i, k := range keys {
		if len(k) > math.MaxInt32 {
			pk.Release()
			return nil, i
		}
		pk.Data = append(pk.Data, k...)
		pk.Lens = append(pk.Lens, int32(len(k)))
	}
	return pk, -1
}

var (
	// Error is the *temporalfilters.Error of a status and message.
	Error func(status int, message string) error
	// Closed is the error of a call on a closed object of the class
	// called name (family ErrClosed).
	Closed func(name string) error
	// FromPanic turns the panic of a failed native call ("tf:<status>:<message>",
	// raised by every SWIG module of the binding) into its error; false
	// for any other panic.
	FromPanic func(r any) (error, bool)
	// Adopt takes ownership of p, a native object of the class called
	// name just created, which free frees: the root package's handle of
	// its structures, with its finalizer (free runs when the Handle is
	// garbage collected without Free) and its count of live objects.
	Adopt func(name string, p uintptr, free func(p uintptr)) Handle
	// LiveObjects is the number of native objects not yet freed, of the
	// root package's structures and of every adopted object (for the
	// tests).
	LiveObjects func() int64
)

// Handle owns one native object (Adopt). Its owner keeps it in a field,
// calls no method of the object once Free has run (Ptr then returns 0) and
// serializes its own calls with Free.
type Handle interface {
	// Ptr returns the native object, 0 once freed.
	Ptr() uintptr
	// Free frees the native object now (once; later calls do nothing) and
	// disarms the finalizer.
	Free()
}

// Key hands one key to a native call as two scalars, the address of its
// first byte and its length (0 and 0 for an empty key; the C functions
// accept a NULL key of length 0). The native layers take a single key this
// way rather than as a slice because Go 1.19's cgo makes the arguments of
// a call escape when any of them holds a pointer: the key's slice header
// was allocated on the heap on every call (24 bytes), with the pointer
// checks beside it about a third of a cached call's time.
//
// An address passed as an integer is safe only while the memory can
// neither move nor be freed, which the callers ensure:
//   - Key makes its argument escape, so the compiler places every byte
//     slice that reaches it on the heap, never on a goroutine's stack
//     (which moves when it grows); Go's heap does not move its objects.
//   - the caller holds the key until the native call has returned, with
//     runtime.KeepAlive(key) after it (the C library keeps no reference
//     to a key after the call).
//
// A string's bytes reach it through a slice viewing them (stringBytes):
// they are either static (literals) or heap memory.
//
// That heap objects do not move is how Go's collector works, not a promise
// of the language (cgo's pointer rules are written so that it could
// change). TestStackKeyIsMovedToTheHeap guards the escape; once the
// module's minimum Go version is 1.21 or later, runtime.Pinner (or cgo's
// noescape directive, Go 1.22) is the documented way to the same end.
func Key(key []byte) (uintptr, int) {
	if len(key) == 0 {
		return 0, 0
	}
	if escapeAlwaysFalse {
		escapeSink = key
	}
	return uintptr(unsafe.Pointer(&key[0])), len(key)
}

// escapeAlwaysFalse is false; the store under it makes Key's argument
// escape without ever running.
var (
	escapeAlwaysFalse bool
	escapeSink        []byte
)
