package temporalfilters

import (
	"encoding/binary"
	"math/bits"
)

// The blob checksum of the wire format is the low 64 bits of MurmurHash3
// x64_128 (seed 0) over everything before it. The tests compute it to craft
// blobs that pass the checksum but break an invariant; golden_test.go checks
// this implementation against the committed golden blobs.

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

func murmur3x64Low(data []byte, seed uint32) uint64 {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	h1, h2 := uint64(seed), uint64(seed)
	n := len(data)
	body := n - n%16
	for i := 0; i < body; i += 16 {
		k1 := binary.LittleEndian.Uint64(data[i:])
		k2 := binary.LittleEndian.Uint64(data[i+8:])
		k1 = bits.RotateLeft64(k1*c1, 31) * c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27) + h2
		h1 = h1*5 + 0x52dce729
		k2 = bits.RotateLeft64(k2*c2, 33) * c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31) + h1
		h2 = h2*5 + 0x38495ab5
	}
	tail := data[body:]
	var k1, k2 uint64
	for i := len(tail) - 1; i >= 8; i-- {
		k2 ^= uint64(tail[i]) << (8 * uint(i-8))
	}
	if len(tail) > 8 {
		h2 ^= bits.RotateLeft64(k2*c2, 33) * c1
	}
	for i := min(len(tail), 8) - 1; i >= 0; i-- {
		k1 ^= uint64(tail[i]) << (8 * uint(i))
	}
	if len(tail) > 0 {
		h1 ^= bits.RotateLeft64(k1*c1, 31) * c2
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	h1 += h2
	return h1
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// reseal recomputes the checksum of a blob whose bytes were edited.
func reseal(blob []byte) []byte {
	n := len(blob) - 8
	binary.LittleEndian.PutUint64(blob[n:], murmur3x64Low(blob[:n], 0))
	return blob
}
