// Package bridge hands the root package's error machinery to the binding's
// sub-packages (temporalfilters.org/go/temporalfilters/redis), which have
// native modules of their own: the root package sets these functions in
// its init, which runs before any importer's code. It also holds the
// packing of batch keys that every package's batch calls share
// (PackKeys). Nothing outside the module can import it.
package bridge

import (
	"math"
	"sync"
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
)
