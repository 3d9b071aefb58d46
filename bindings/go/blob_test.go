package temporalfilters

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// What every structure's blob tests share: the broken blobs every
// deserializer refuses (the envelope's checks), the loop that runs a table
// of them through Deserialize<Name> and UnmarshalBinary, and the golden blobs
// of every kind, each refused by the other kinds' deserializers.

// envelopeHeader is the size of the envelope's header: the payload starts
// after it.
const envelopeHeader = 20

// blobCase is a blob deserialize must refuse, and the status it refuses it
// with.
type blobCase struct {
	name string
	blob []byte
	want error
}

// edited returns a copy of blob edited by f.
func edited(blob []byte, f func(b []byte) []byte) []byte {
	return f(append([]byte(nil), blob...))
}

// resealedWith returns a copy of blob with the payload field at off (from
// the payload's start) set by put, and its checksum recomputed: a blob only
// its content makes invalid.
func resealedWith(blob []byte, off int, put func(b []byte)) []byte {
	return edited(blob, func(b []byte) []byte {
		put(b[envelopeHeader+off:])
		return reseal(b)
	})
}

// putU32 and putU64 are the put functions of resealedWith.
func putU32(v uint32) func(b []byte) { return func(b []byte) { binary.LittleEndian.PutUint32(b, v) } }
func putU64(v uint64) func(b []byte) { return func(b []byte) { binary.LittleEndian.PutUint64(b, v) } }

// goldenKinds are the golden blobs of tests/data, a blob of each layout of
// each structure, with the kind in their envelope.
var goldenKinds = []struct {
	name string
	kind uint16
}{
	{"recency_sketch_v1", 1},
	{"recency_sketch_blocked_v1", 1},
	{"age_bloom_v1", 2},
	{"age_bloom_blocked_v1", 2},
	{"time_bloom_v1", 3},
	{"rate_limiter_v1", 4},
	{"rate_limiter_exact_v1", 4},
	{"rotating_cuckoo_v1", 5},
	{"rotating_cuckoo_three_way_v1", 5},
	{"recency_window_v1", 6},
	{"recency_window_approx_v1", 6},
	{"recency_window_exact_v1", 6},
	{"recency_window_optimal_sm_v1", 6},
}

// envelopeCases are the broken blobs every structure refuses, made from
// own, a valid blob of its kind: too short, truncated, another magic,
// version or kind (every other kind, and 0), a flipped bit, a flipped
// checksum, a trailing byte, an undefined flag bit; and the golden blob of
// every other structure.
func envelopeCases(t *testing.T, own []byte) []blobCase {
	t.Helper()
	kind := binary.LittleEndian.Uint16(own[6:])
	cases := []blobCase{
		{"nil", nil, ErrTruncated},
		{"empty", []byte{}, ErrTruncated},
		{"short", []byte("TFLT"), ErrTruncated},
		{"truncated by one", edited(own, func(b []byte) []byte { return b[:len(b)-1] }), ErrTruncated},
		{"truncated to half", edited(own, func(b []byte) []byte { return b[:len(b)/2] }), ErrTruncated},
		{"truncated to the header", edited(own, func(b []byte) []byte { return b[:28] }), ErrTruncated},
		{"bad magic", edited(own, func(b []byte) []byte { b[0] = 'X'; return b }), ErrBadMagic},
		{"version 2", edited(own, func(b []byte) []byte { b[4] = 2; return b }), ErrUnsupportedVersion},
		{"a bit flipped", edited(own, func(b []byte) []byte { b[len(b)-20] ^= 1; return b }), ErrChecksum},
		{"checksum bit flipped", edited(own, func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), ErrChecksum},
		{"trailing byte", edited(own, func(b []byte) []byte { return append(b, 0) }), ErrCorrupt},
		{"undefined flag bit (resealed)", edited(own, func(b []byte) []byte { b[8] |= 0x10; return reseal(b) }),
			ErrCorrupt},
	}
	for k := byte(0); k <= 5; k++ {
		if uint16(k) != kind {
			cases = append(cases, blobCase{fmt.Sprintf("kind %d", k),
				edited(own, func(b []byte) []byte { b[6] = k; return b }), ErrWrongKind})
		}
	}
	for _, g := range goldenKinds {
		if g.kind != kind {
			cases = append(cases, blobCase{"the golden " + g.name, readGoldenBlob(t, g.name), ErrWrongKind})
		}
	}
	return cases
}

// checkRefusedBlobs runs every case through deserialize (which must give
// nothing and the case's error) and through UnmarshalBinary into a zero
// structure (the same error, and the structure stays closed: checkClosed).
func checkRefusedBlobs[T any, P interface {
	*T
	structure
}](t *testing.T, cases []blobCase, deserialize func([]byte, ...Option) (P, error), checkClosed func(*testing.T, P)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := deserialize(c.blob)
			if s != nil {
				s.Close()
				t.Fatal("a structure came back with the error")
			}
			wantStatus(t, err, c.want)
			z := P(new(T))
			wantStatus(t, z.UnmarshalBinary(c.blob), c.want)
			checkClosed(t, z)
		})
	}
}

// Every golden blob is read by its own structure's deserializer (also
// resealed: the tests' checksum is the library's) and refused by every
// other one with ErrWrongKind.
func TestBlobKinds(t *testing.T) {
	deserializers := map[uint16]func([]byte) (structure, error){
		1: func(b []byte) (structure, error) { return DeserializeRecencySketch(b) },
		2: func(b []byte) (structure, error) { return DeserializeAgeBloom(b) },
		3: func(b []byte) (structure, error) { return DeserializeTimeBloom(b) },
		4: func(b []byte) (structure, error) { return DeserializeRateLimiter(b) },
		5: func(b []byte) (structure, error) { return DeserializeRotatingCuckoo(b) },
		6: func(b []byte) (structure, error) { return DeserializeRecencyWindow(b) },
	}
	for _, g := range goldenKinds {
		blob := readGoldenBlob(t, g.name)
		if got := reseal(append([]byte(nil), blob...)); !bytes.Equal(got, blob) {
			t.Errorf("%s: the checksum differs from MurmurHash3 of the bytes before it", g.name)
		}
		if kind := binary.LittleEndian.Uint16(blob[6:]); kind != g.kind {
			t.Errorf("%s: kind %d, want %d", g.name, kind, g.kind)
		}
		for kind, deserialize := range deserializers {
			s, err := deserialize(blob)
			if kind == g.kind {
				must(t, err)
				must(t, s.Close())
				continue
			}
			wantStatus(t, err, ErrWrongKind)
		}
	}
}

// checkBinaryMarshaler checks encoding.BinaryMarshaler and
// encoding.BinaryUnmarshaler of the structure T: the blob of src goes into
// a zero T inside another struct, into other (open, of another shape: its
// state is replaced), and into other again once closed (open again); a
// truncated blob and a blob of another kind are refused and leave other as
// it was; a nil *T refuses it with ErrNull. Each copy must serialize to the
// blob and give the answers of src (answers describes them, e.g. what it
// says about a key src holds and one other held).
func checkBinaryMarshaler[T any, P interface {
	*T
	structure
}](t *testing.T, src, other P, answers func(t *testing.T, s P) string) {
	t.Helper()
	var m encoding.BinaryMarshaler = src
	blob, err := m.MarshalBinary()
	must(t, err)
	want := answers(t, src)
	check := func(what string, s P) {
		t.Helper()
		if got := answers(t, s); got != want {
			t.Fatalf("%s answers %s; the original %s", what, got, want)
		}
		if !bytes.Equal(res(s.Serialize()).get(t), blob) {
			t.Fatalf("%s does not serialize to the blob", what)
		}
	}

	// into a zero value inside another struct
	var holder struct {
		n int
		s T
	}
	var u encoding.BinaryUnmarshaler = P(&holder.s)
	must(t, u.UnmarshalBinary(blob))
	defer P(&holder.s).Close()
	check("the unmarshaled zero value", &holder.s)
	if holder.n != 0 {
		t.Fatal("UnmarshalBinary wrote beside the structure")
	}

	// into an open structure of another shape: its state is replaced
	if bytes.Equal(res(other.Serialize()).get(t), blob) {
		t.Fatal("other must start with another state")
	}
	must(t, other.UnmarshalBinary(blob))
	check("the replaced structure", other)

	// a failed UnmarshalBinary leaves the structure as it was
	wantStatus(t, other.UnmarshalBinary(blob[:len(blob)-1]), ErrTruncated)
	for _, g := range goldenKinds {
		if g.kind != binary.LittleEndian.Uint16(blob[6:]) {
			wantStatus(t, other.UnmarshalBinary(readGoldenBlob(t, g.name)), ErrWrongKind)
			break
		}
	}
	check("the structure after a failed UnmarshalBinary", other)

	// into a closed structure: it is open again
	must(t, other.Close())
	must(t, other.UnmarshalBinary(blob))
	check("the reopened structure", other)

	var nilP P
	wantStatus(t, nilP.UnmarshalBinary(blob), ErrNull)
}

// WithMaxMemory: a blob is read with a cap of exactly the memory its
// structure takes, and refused (ErrTooLarge, before anything is allocated)
// with any less; 0 is the default; the deserializers take no other option.
func TestDeserializeMaxMemory(t *testing.T) {
	deserializers := map[uint16]func([]byte, ...Option) (structure, error){
		1: func(b []byte, o ...Option) (structure, error) { return DeserializeRecencySketch(b, o...) },
		2: func(b []byte, o ...Option) (structure, error) { return DeserializeAgeBloom(b, o...) },
		3: func(b []byte, o ...Option) (structure, error) { return DeserializeTimeBloom(b, o...) },
		4: func(b []byte, o ...Option) (structure, error) { return DeserializeRateLimiter(b, o...) },
		5: func(b []byte, o ...Option) (structure, error) { return DeserializeRotatingCuckoo(b, o...) },
		6: func(b []byte, o ...Option) (structure, error) { return DeserializeRecencyWindow(b, o...) },
	}
	before := atomic.LoadInt64(&liveObjects)
	for _, g := range goldenKinds {
		blob := readGoldenBlob(t, g.name)
		deserialize := deserializers[g.kind]
		memory := func(opts ...Option) uint64 {
			t.Helper()
			s := res(deserialize(blob, opts...)).get(t, g.name)
			defer s.Close()
			return res(s.Memory()).get(t)
		}
		need := memory()
		if got := memory(WithMaxMemory(0)); got != need {
			t.Fatalf("%s: %d bytes with WithMaxMemory(0), %d without", g.name, got, need)
		}
		if got := memory(WithMaxMemory(need)); got != need {
			t.Fatalf("%s: %d bytes with WithMaxMemory(%d)", g.name, got, need)
		}
		for _, limit := range []uint64{need - 1, need / 2, 1} {
			_, err := deserialize(blob, WithMaxMemory(limit))
			wantStatus(t, err, ErrTooLarge)
			if !strings.Contains(err.Error(), "max_memory") {
				t.Errorf("%s, WithMaxMemory(%d): %v does not name max_memory", g.name, limit, err)
			}
		}
		for _, opt := range []Option{WithSeed(1), WithFlags(RecencySketchBlocked), WithFlags(RateLimiterExact)} {
			_, err := deserialize(blob, opt)
			wantStatus(t, err, StatusInvalidArgument)
		}
	}
	if after := atomic.LoadInt64(&liveObjects); after > before { // (finalizers may free others meanwhile)
		t.Errorf("the refused blobs left %d native objects", after-before)
	}
}
