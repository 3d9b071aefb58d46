package temporalfilters

import (
	"math"
	"reflect"
	"sync"
	"unsafe"
)

// Keys: every method taking a key has a []byte form and a string form; the
// batch methods lay their keys end to end for the native layer. This file
// holds what they share.

// stringBytes views a string as a byte slice without copying. The C library
// only reads keys, so the bytes are never written.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	hdr := (*reflect.StringHeader)(unsafe.Pointer(&s))
	return unsafe.Slice((*byte)(unsafe.Pointer(hdr.Data)), len(s))
}

// key is the element type of the batch methods' keys.
type key interface{ []byte | string }

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

// pack lays keys end to end; a key longer than the native layer's int32
// lengths allow is an ErrInvalidArgument.
func pack[K key](keys []K) (*packedKeys, error) {
	pk := packPool.Get().(*packedKeys)
	pk.data, pk.lens = pk.data[:0], pk.lens[:0]
	for i, k := range keys {
		if len(k) > math.MaxInt32 {
			pk.release()
			return nil, invalidArgument("keys[%d] is %d bytes long; batch keys are limited to %d bytes", i,
				len(k), math.MaxInt32)
		}
		pk.data = append(pk.data, k...)
		pk.lens = append(pk.lens, int32(len(k)))
	}
	return pk, nil
}

// batch is the body of every batch method: a closed structure is reported
// before anything else, then keys are packed and op runs on the native
// object with them (as call does).
func batch[P nativeObject, K key, T any](o object[P], keys []K, op func(p P, data []byte, lens []int32) T) (v T, err error) {
	if o.ptr() == 0 {
		return v, o.closed()
	}
	pk, err := pack(keys)
	if err != nil {
		return v, err
	}
	defer pk.release()
	return call(o, func(p P) T { return op(p, pk.data, pk.lens) })
}
