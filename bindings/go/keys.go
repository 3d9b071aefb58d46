package temporalfilters

import (
	"math"
	"reflect"
	"unsafe"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
)

// Keys: every method taking a key has a []byte form and a string form; the
// batch methods lay their keys end to end for the native layer. This file
// holds what they share.

// stringBytes views a string as a byte slice without copying. The C library
// only reads keys, so the bytes are never written. The view reaches the
// native layer as an address (internal/bridge.Key), which must be heap or
// static memory: escape analysis follows the reflect.StringHeader view to
// the result (go build -gcflags=-m: "leaking param: s to result"), so the
// escape that bridge.Key forces on the view reaches s too.
func stringBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	hdr := (*reflect.StringHeader)(unsafe.Pointer(&s))
	return unsafe.Slice((*byte)(unsafe.Pointer(hdr.Data)), len(s))
}

// key is the element type of the batch methods' keys.
type key interface{ []byte | string }

// pack lays keys end to end (internal/bridge.PackKeys, which the Redis
// package shares); a key longer than the native layer's int32 lengths allow
// is an ErrInvalidArgument. Release the result once the call is made.
func pack[K key](keys []K) (*bridge.PackedKeys, error) {
	pk, bad := bridge.PackKeys(keys)
	if bad >= 0 {
		return nil, invalidArgument("keys[%d] is %d bytes long; batch keys are limited to %d bytes", bad,
			len(keys[bad]), math.MaxInt32)
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
	defer pk.Release()
	return call(o, func(p P) T { return op(p, pk.Data, pk.Lens) })
}

// presentBatch is the body of the batch methods with a yes/no answer per
// key (the contains and add-if-absent batches): op fills present with one
// 1/0 per key (its count of 1s is not needed here).
func presentBatch[P nativeObject, K key](o object[P], keys []K,
	op func(p P, data []byte, lens []int32, present []int32)) ([]bool, error) {
	return batch(o, keys, func(p P, data []byte, lens []int32) []bool {
		present := make([]int32, len(lens))
		op(p, data, lens, present)
		out := make([]bool, len(present))
		for i, v := range present {
			out[i] = v != 0
		}
		return out
	})
}

// presentBatchAt is presentBatch for the batches at one time now (the
// RotatingCuckoo's and the TimeBloom's), op being the native method.
func presentBatchAt[P nativeObject, K key](o object[P], keys []K,
	op func(p P, data []byte, lens []int32, now uint64, present []int32) uint64, now uint64) ([]bool, error) {
	return presentBatch(o, keys, func(p P, data []byte, lens []int32, present []int32) {
		op(p, data, lens, now, present)
	})
}
