package temporalfilters

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"
)

func mustAgeBloom(t *testing.T, k, l uint32, sliceBits uint64, seed uint32) *AgeBloom {
	t.Helper()
	return keep(t, res(NewAgeBloom(k, l, sliceBits, WithSeed(seed))))
}

func mustAgeBloomFor(t *testing.T, rate float64, capacity uint64, seed uint32) *AgeBloom {
	t.Helper()
	return keep(t, res(NewAgeBloomFor(capacity, rate, WithSeed(seed))))
}

func mustBlockedAgeBloom(t *testing.T, k, l uint32, sliceBits uint64, seed uint32) *AgeBloom {
	t.Helper()
	return keep(t, res(NewAgeBloom(k, l, sliceBits, WithSeed(seed), WithFlags(AgeBloomBlocked))))
}

func mustBlockedAgeBloomFor(t *testing.T, rate float64, capacity uint64, seed uint32) *AgeBloom {
	t.Helper()
	return keep(t, res(NewAgeBloomFor(capacity, rate, WithSeed(seed), WithFlags(AgeBloomBlocked))))
}

func abIsBlocked(t *testing.T, f *AgeBloom) bool {
	t.Helper()
	return res(f.Info()).get(t).Flags&AgeBloomBlocked != 0
}

func abContains(t *testing.T, f *AgeBloom, key []byte) bool {
	t.Helper()
	return res(f.Contains(key)).get(t, "Contains ", key)
}

// idKey is the i-th key of a stream, with a tag per stream and a NUL byte
// inside.
func idKey(tag byte, i int) []byte {
	k := make([]byte, 10)
	k[0] = tag
	k[1] = 0
	binary.LittleEndian.PutUint64(k[2:], uint64(i))
	return k
}

func TestAgeBloomBasics(t *testing.T) {
	f := mustAgeBloom(t, 4, 6, 1000, 1)
	for _, k := range []string{"a", "b", ""} {
		if abContains(t, f, []byte(k)) {
			t.Fatalf("an empty filter contains %q", k)
		}
	}
	must(t, f.Add([]byte("a")))
	if !abContains(t, f, []byte("a")) {
		t.Fatal("a key added is not contained")
	}
	// string and byte forms are the same key
	must(t, f.AddString("héllo wörld"))
	if !abContains(t, f, []byte("héllo wörld")) {
		t.Fatal("AddString: the UTF-8 bytes are not contained")
	}
	if p, err := f.ContainsString("a"); err != nil || !p {
		t.Fatalf("ContainsString(a) = %v, %v", p, err)
	}
	// a substring is exactly its own bytes (no copy is made)
	big := "prefix-middle-suffix"
	must(t, f.AddString(big[7:13]))
	if !abContains(t, f, []byte("middle")) {
		t.Fatal("substring key not contained")
	}
	// binary keys: NUL bytes count; the empty key is a key
	must(t, f.Add([]byte{'x', 0, 'y'}))
	if !abContains(t, f, []byte{'x', 0, 'y'}) {
		t.Fatal("binary key not contained")
	}
	if p, err := f.ContainsString("x\x00y"); err != nil || !p {
		t.Fatalf("ContainsString(x NUL y) = %v, %v", p, err)
	}
	must(t, f.Add(nil))
	for _, k := range [][]byte{nil, {}} {
		if !abContains(t, f, k) {
			t.Fatalf("empty key %#v not contained", k)
		}
	}
	if p, err := f.ContainsString(""); err != nil || !p {
		t.Fatalf(`ContainsString("") = %v, %v`, p, err)
	}
	if st := res(f.Stats()).get(t); st.Inserts != 5 {
		t.Fatalf("Inserts = %d, want 5", st.Inserts)
	}
}

func TestAgeBloomAddIfAbsent(t *testing.T) {
	f := mustAgeBloom(t, 4, 6, 1000, 2)
	was, err := f.AddIfAbsent([]byte("click-1"))
	if err != nil || was {
		t.Fatalf("first AddIfAbsent = %v, %v; want false", was, err)
	}
	was, err = f.AddIfAbsent([]byte("click-1"))
	if err != nil || !was {
		t.Fatalf("second AddIfAbsent = %v, %v; want true", was, err)
	}
	if was, err := f.AddIfAbsentString("click-1"); err != nil || !was {
		t.Fatalf("AddIfAbsentString of the same key = %v, %v; want true", was, err)
	}
	if was, err := f.AddIfAbsentString("click-2"); err != nil || was {
		t.Fatalf("AddIfAbsentString(click-2) = %v, %v; want false", was, err)
	}
	// a duplicate is not inserted again
	if st := res(f.Stats()).get(t); st.Inserts != 2 {
		t.Fatalf("Inserts = %d, want 2 (the duplicates are not inserted)", st.Inserts)
	}
	if !abContains(t, f, []byte("click-2")) {
		t.Fatal("AddIfAbsent did not insert")
	}
}

func TestAgeBloomShape(t *testing.T) {
	f := mustAgeBloom(t, 3, 4, 200, 42)
	info := res(f.Info()).get(t)
	// generation floor(200 ln 2 / 3) = 46, capacity l * g
	want := AgeBloomInfo{K: 3, L: 4, SliceBits: 200, Generation: 46, Capacity: 184, Seed: 42}
	if info != want {
		t.Fatalf("Info = %+v, want %+v", info, want)
	}
	if c := f.Capacity(); c != 184 {
		t.Fatalf("Capacity = %d", c)
	}
	st := res(f.Stats()).get(t)
	if st.Slices != 7 || st.Bits != 1400 || st.Inserts != 0 || st.FPRNow != 0 ||
		math.Abs(st.BitsPerElement-1400.0/184) > 1e-9 {
		t.Fatalf("Stats of an empty filter = %+v", st)
	}
	mem, err := f.Memory()
	if err != nil || mem < 1400/8 || mem > 1400/8+4096 {
		t.Fatalf("Memory = %d, %v", mem, err)
	}
	if got := f.String(); got != "AgeBloom(k=3, l=4, 200-bit slices, capacity 184, seed 42)" {
		t.Fatalf("String = %q", got)
	}
	for i := 0; i < 100; i++ {
		must(t, f.Add(idKey('s', i)))
	}
	st = res(f.Stats()).get(t)
	if st.Inserts != 100 || !(st.FPRNow > 0 && st.FPRNow < 1) {
		t.Fatalf("Stats after 100 inserts = %+v", st)
	}
	// the smallest generation: one insert per shift
	g1 := mustAgeBloom(t, 64, 2, 64, 0)
	if info := res(g1.Info()).get(t); info.Generation != 1 || info.Capacity != 2 {
		t.Fatalf("k=64, 64-bit slices: %+v, want generation 1", info)
	}
}

func TestAgeBloomSizing(t *testing.T) {
	// the same pairs as the C library's sizing: the default within the
	// probe budget, the memory-minimal pair with AgeBloomMinMemory
	for _, c := range []struct {
		rate  float64
		flags AgeBloomFlags
		k, l  uint32
	}{{0.01, 0, 10, 24}, {0.01, AgeBloomMinMemory, 12, 87}, {0.001, 0, 14, 36}, {0.001, AgeBloomMinMemory, 16, 139}} {
		k, l, fill, err := AgeBloomChoose(c.rate, WithFlags(c.flags))
		if err != nil || k != c.k || l != c.l || fill != 0.5 {
			t.Fatalf("AgeBloomChoose(%g, flags %d) = %d, %d, %g, %v; want %d, %d, 0.5", c.rate, c.flags, k, l, fill,
				err, c.k, c.l)
		}
	}
	r, err := AgeBloomFalsePositiveRate(10, 24)
	if err != nil || !(r > 0 && r <= 0.01) {
		t.Fatalf("AgeBloomFalsePositiveRate(10, 24) = %g, %v; want in (0, 0.01]", r, err)
	}
	r, err = AgeBloomFalsePositiveRate(12, 87)
	if err != nil || !(r > 0 && r <= 0.01) {
		t.Fatalf("AgeBloomFalsePositiveRate(12, 87) = %g, %v; want in (0, 0.01]", r, err)
	}
	b, err := AgeBloomBitsPerElement(12, 87)
	if want := float64(12+87) * 12 / (87 * math.Ln2); err != nil || math.Abs(b-want) > 1e-9 {
		t.Fatalf("AgeBloomBitsPerElement(12, 87) = %g, %v; want %g", b, err, want)
	}
	prevBits := 0.0
	for _, rate := range []float64{0.5, 0.1, 0.01, 0.001, 1e-4, 1e-6} {
		k, l, fill, err := AgeBloomChoose(rate)
		if err != nil || k < 1 || k > 64 || l < 1 || l > 256 || fill != 0.5 {
			t.Fatalf("AgeBloomChoose(%g) = %d, %d, %g, %v", rate, k, l, fill, err)
		}
		r, err := AgeBloomFalsePositiveRate(k, l)
		if err != nil || r > rate {
			t.Fatalf("AgeBloomChoose(%g) = (%d, %d) whose rate is %g, %v", rate, k, l, r, err)
		}
		b, err := AgeBloomBitsPerElement(k, l)
		must(t, err)
		if b <= prevBits {
			t.Fatalf("rate %g needs %g bits per element, no more than a larger rate (%g)", rate, b, prevBits)
		}
		prevBits = b
		// the factory uses the same pair
		f, err := NewAgeBloomFor(1000, rate, WithSeed(1))
		must(t, err)
		info := res(f.Info()).get(t)
		f.Close()
		if info.K != k || info.L != l || info.Capacity < 1000 || info.Capacity != uint64(info.L)*info.Generation {
			t.Fatalf("NewAgeBloomFor(1000, %g): %+v, want k %d l %d capacity >= 1000", rate, info, k, l)
		}
		// within the probe budget; the memory-minimal pair takes no more bits,
		// its factory the same pair, its flag not recorded
		absent, present, err := AgeBloomExpectedProbes(k, l)
		if err != nil || absent > AgeBloomProbeBudget || present < float64(k) {
			t.Fatalf("(%d, %d): %g probes absent, %g present", k, l, absent, present)
		}
		mk, ml, _, err := AgeBloomChoose(rate, WithFlags(AgeBloomMinMemory))
		must(t, err)
		if mb := res(AgeBloomBitsPerElement(mk, ml)).get(t); mb > b {
			t.Fatalf("rate %g: MinMemory's (%d, %d) takes %g bits, the default %g", rate, mk, ml, mb, b)
		}
		f, err = NewAgeBloomFor(1000, rate, WithFlags(AgeBloomMinMemory))
		must(t, err)
		info = res(f.Info()).get(t)
		f.Close()
		if info.K != mk || info.L != ml || info.Flags != 0 {
			t.Fatalf("NewAgeBloomFor(1000, %g, MinMemory): %+v, want k %d l %d flags 0", rate, info, mk, ml)
		}
	}
	// the rate grows with l and falls with k
	r1, _ := AgeBloomFalsePositiveRate(12, 10)
	r2, _ := AgeBloomFalsePositiveRate(12, 100)
	r3, _ := AgeBloomFalsePositiveRate(16, 100)
	if !(r1 < r2 && r3 < r2) {
		t.Fatalf("rates (12,10) %g, (12,100) %g, (16,100) %g", r1, r2, r3)
	}
	// the limits are fine
	if r, err := AgeBloomFalsePositiveRate(64, 1024); err != nil || !(r > 0 && r < 1) {
		t.Fatalf("AgeBloomFalsePositiveRate(64, 1024) = %g, %v", r, err)
	}
	if _, err := AgeBloomBitsPerElement(1, 1); err != nil {
		t.Fatal(err)
	}
}

// AgeBloomExpectedProbes returns the C library's values (printed by a C
// program with %.17g) and its constants are C's.
func TestAgeBloomExpectedProbes(t *testing.T) {
	if AgeBloomProbeBudget != 6 || AgeBloomMinMemory != 2 || TimeBloomMinMemory != 1 {
		t.Fatalf("constants %g, %d, %d; want 6, 2, 1", AgeBloomProbeBudget, AgeBloomMinMemory, TimeBloomMinMemory)
	}
	for _, c := range []struct {
		k, l            uint32
		absent, present float64
	}{
		{10, 24, 5.7835982453353605, 12.25791969537735},
		{12, 87, 16.239311717094822, 19.435517987032494},
		{14, 36, 5.9149538933696872, 16.512729020440414},
		{16, 139, 19.147471685834415, 24.958225753062184},
		{1, 1, 1.5, 1.25}, // by hand: the oldest slice, then the newest on a miss
		{64, 1, 1.0221436478963601, 64.25},
		{64, 1024, 33.207227944769777, 80.186345919342898},
	} {
		absent, present, err := AgeBloomExpectedProbes(c.k, c.l)
		if err != nil || math.Abs(absent-c.absent) > 1e-9*c.absent || math.Abs(present-c.present) > 1e-9*c.present {
			t.Fatalf("AgeBloomExpectedProbes(%d, %d) = %.17g, %.17g, %v; want %.17g, %.17g", c.k, c.l, absent,
				present, err, c.absent, c.present)
		}
	}
	for _, kl := range [][2]uint32{{0, 5}, {65, 5}, {math.MaxUint32, 5}, {5, 0}, {5, 1025}, {5, math.MaxUint32}} {
		absent, present, err := AgeBloomExpectedProbes(kl[0], kl[1])
		wantStatus(t, err, StatusInvalidArgument)
		if absent != 0 || present != 0 {
			t.Errorf("(%d, %d): failed with %g, %g", kl[0], kl[1], absent, present)
		}
	}
}

// The batches give the answers and the filter of the single calls on the
// same keys, in both layouts, across shifts (a window of about 200
// inserts, 600 keys per batch).
func TestAgeBloomBatches(t *testing.T) {
	for _, flags := range []AgeBloomFlags{0, AgeBloomBlocked} {
		f := keep(t, res(NewAgeBloomFor(200, 0.01, WithSeed(3), WithFlags(flags))))
		g := keep(t, res(NewAgeBloomFor(200, 0.01, WithSeed(3), WithFlags(flags))))
		keys := make([]string, 600)
		for i := range keys {
			keys[i] = fmt.Sprintf("b-%d", i%400) // repeats within the batch
		}
		got := res(f.AddIfAbsentBatchStrings(keys)).get(t)
		for i, k := range keys {
			if single := res(g.AddIfAbsentString(k)).get(t); got[i] != single {
				t.Fatalf("flags %d: batch[%d] (%s) = %v, single %v", flags, i, k, got[i], single)
			}
		}
		sameBlobs(t, f, g)
		probe := make([][]byte, 1000)
		for i := range probe {
			probe[i] = []byte(fmt.Sprintf("b-%d", i/2))
			if i%2 == 1 {
				probe[i] = []byte(fmt.Sprintf("absent-%d", i))
			}
		}
		present := res(f.ContainsBatch(probe)).get(t)
		for i, k := range probe {
			if single := res(g.Contains(k)).get(t); present[i] != single {
				t.Fatalf("flags %d: contains batch[%d] (%s) = %v, single %v", flags, i, k, present[i], single)
			}
		}
		if !present[2*399] {
			t.Fatal("the last insert is not contained")
		}
		must(t, f.AddBatchStrings(keys))
		for _, k := range keys {
			must(t, g.AddString(k))
		}
		sameBlobs(t, f, g)
		binary := [][]byte{{0}, {0, 0}, {}}
		must(t, f.AddBatch(binary))
		if a := res(f.ContainsBatch(binary)).get(t); fmt.Sprint(a) != "[true true true]" {
			t.Fatalf("ContainsBatch = %v", a)
		}
		if a := res(f.AddIfAbsentBatch(binary)).get(t); fmt.Sprint(a) != "[true true true]" {
			t.Fatalf("AddIfAbsentBatch = %v", a)
		}
		if a := res(f.ContainsBatchStrings(nil)).get(t); len(a) != 0 {
			t.Fatal("empty batch")
		}
		before := res(f.Serialize()).get(t)
		must(t, f.AddBatch(nil))
		if !bytes.Equal(before, res(f.Serialize()).get(t)) {
			t.Fatal("an empty batch changed the filter")
		}
	}
}

// sameBlobs wants two structures with the same blob.
func sameBlobs(t *testing.T, a, b interface{ Serialize() ([]byte, error) }) {
	t.Helper()
	if !bytes.Equal(res(a.Serialize()).get(t), res(b.Serialize()).get(t)) {
		t.Fatal("the batches left another structure than the single calls")
	}
}

func TestAgeBloomSizingErrors(t *testing.T) {
	for _, rate := range []float64{0, 1, -0.1, 1.5, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)} {
		k, l, fill, err := AgeBloomChoose(rate)
		wantStatus(t, err, StatusInvalidArgument)
		if k != 0 || l != 0 || fill != 0 {
			t.Errorf("AgeBloomChoose(%g) failed with %d, %d, %g", rate, k, l, fill)
		}
	}
	_, _, _, err := AgeBloomChoose(1e-300)
	wantStatus(t, err, ErrTooLarge)
	// AgeBloomMinMemory is for the classic layout
	_, _, _, err = AgeBloomChoose(0.01, WithFlags(AgeBloomMinMemory|AgeBloomBlocked))
	wantStatus(t, err, StatusInvalidArgument)
	f, err := NewAgeBloomFor(1000, 0.01, WithFlags(AgeBloomMinMemory|AgeBloomBlocked))
	wantRefused(t, "NewAgeBloomFor(MinMemory|Blocked)", f, err, StatusInvalidArgument)
	for _, kl := range [][2]uint32{{0, 5}, {65, 5}, {math.MaxUint32, 5}, {5, 0}, {5, 1025}, {5, math.MaxUint32}} {
		r, err := AgeBloomFalsePositiveRate(kl[0], kl[1])
		wantStatus(t, err, StatusInvalidArgument)
		b, err2 := AgeBloomBitsPerElement(kl[0], kl[1])
		wantStatus(t, err2, StatusInvalidArgument)
		if r != 0 || b != 0 {
			t.Errorf("(%d, %d): failed with %g, %g", kl[0], kl[1], r, b)
		}
	}
}

// ageBloomShape and ageBloomTarget are arguments of NewAgeBloom and
// NewAgeBloomFor with the error they get.
type ageBloomShape struct {
	k, l      uint32
	sliceBits uint64
	want      error
}

type ageBloomTarget struct {
	rate     float64
	capacity uint64
	want     error
}

// checkAgeBloomRefused wants every shape and target refused with its error
// in the layout of flags.
func checkAgeBloomRefused(t *testing.T, flags AgeBloomFlags, shapes []ageBloomShape, targets []ageBloomTarget) {
	t.Helper()
	for _, c := range shapes {
		f, err := NewAgeBloom(c.k, c.l, c.sliceBits, WithFlags(flags))
		wantRefused(t, fmt.Sprintf("NewAgeBloom(%d, %d, %d, flags %d)", c.k, c.l, c.sliceBits, flags), f, err, c.want)
	}
	for _, c := range targets {
		f, err := NewAgeBloomFor(c.capacity, c.rate, WithFlags(flags))
		wantRefused(t, fmt.Sprintf("NewAgeBloomFor(%d, %g, flags %d)", c.capacity, c.rate, flags), f, err, c.want)
	}
}

func TestAgeBloomConstructorErrors(t *testing.T) {
	shapes := []ageBloomShape{
		{0, 3, 1000, StatusInvalidArgument},
		{65, 3, 1000, StatusInvalidArgument},
		{math.MaxUint32, 3, 1000, StatusInvalidArgument},
		{3, 0, 1000, StatusInvalidArgument},
		{3, 1025, 1000, StatusInvalidArgument},
		{3, 3, 0, StatusInvalidArgument},
		{3, 3, 63, StatusInvalidArgument},
		{3, 3, 1<<40 + 1, ErrTooLarge},
		{3, 3, math.MaxUint64, ErrTooLarge},
	}
	targets := []ageBloomTarget{
		{0.01, 0, StatusInvalidArgument},
		{0, 1000, StatusInvalidArgument},
		{1, 1000, StatusInvalidArgument},
		{-0.5, 1000, StatusInvalidArgument},
		{math.NaN(), 1000, StatusInvalidArgument},
		{math.Inf(1), 1000, StatusInvalidArgument},
		{1e-300, 1000, ErrTooLarge},
		{0.01, 1 << 50, ErrTooLarge},
		{0.01, math.MaxUint64 / 2, ErrTooLarge},
		{0.01, math.MaxUint64, ErrTooLarge}, // ceil(capacity / l) must not wrap around
		{0.01, math.MaxUint64 - 5, ErrTooLarge},
	}
	checkAgeBloomRefused(t, 0, shapes, targets)
	// the smallest filters are fine
	for _, mk := range []func() (*AgeBloom, error){
		func() (*AgeBloom, error) { return NewAgeBloom(1, 1, 64) },
		func() (*AgeBloom, error) { return NewAgeBloom(64, 1024, 64) },
		func() (*AgeBloom, error) { return NewAgeBloomFor(1, 0.999) },
	} {
		f, err := mk()
		must(t, err)
		f.Close()
	}
}

// The count window: every key among the last Capacity inserts is contained
// (also the one with exactly Capacity inserts after it), checked against an
// exact record of the stream; keys long gone are absent but for false
// positives, and the false-positive rate of keys never added meets the
// target.
func TestAgeBloomWindow(t *testing.T) {
	for _, c := range []struct {
		rate     float64
		capacity uint64
		n        int
	}{
		{0.01, 1000, 12000},
		{0.1, 300, 5000},
	} {
		t.Run(fmt.Sprintf("rate=%g/capacity=%d", c.rate, c.capacity), func(t *testing.T) {
			f := mustAgeBloomFor(t, c.rate, c.capacity, 7)
			info := res(f.Info()).get(t)
			W := int(info.Capacity)
			if info.Capacity != uint64(info.L)*info.Generation || W < int(c.capacity) {
				t.Fatalf("Info = %+v: capacity is not l*g >= %d", info, c.capacity)
			}
			checked := 0
			for i := 0; i < c.n; i++ {
				must(t, f.Add(idKey('w', i)))
				// the key with exactly W inserts after it
				if i >= W && !abContains(t, f, idKey('w', i-W)) {
					t.Fatalf("after insert %d: the key added %d inserts before (the window) is not contained", i, W)
				}
				// now and then the whole window
				if i%997 == 0 || i == c.n-1 {
					for j := i; j >= 0 && j >= i-W; j-- {
						if !abContains(t, f, idKey('w', j)) {
							t.Fatalf("after insert %d: key %d (%d inserts ago) is not contained", i, j, i-j)
						}
						checked++
					}
				}
			}
			if checked < 5*W {
				t.Fatalf("only %d window keys checked", checked)
			}
			// never added: the false-positive rate (its peak is the target)
			fp := 0
			const probes = 20000
			for i := 0; i < probes; i++ {
				if abContains(t, f, idKey('n', i)) {
					fp++
				}
			}
			t.Logf("%+v: %d window keys checked; false positives %d of %d (%.4g, target %g)",
				info, checked, fp, probes, float64(fp)/probes, c.rate)
			if got := float64(fp) / probes; got > 2*c.rate {
				t.Fatalf("false-positive rate %g, target %g", got, c.rate)
			}
			// long gone (many windows ago): absent but for false positives
			old := 0
			for i := 0; i < W; i++ {
				if abContains(t, f, idKey('w', i)) {
					old++
				}
			}
			if got := float64(old) / float64(W); got > 2*c.rate+0.01 {
				t.Fatalf("%d of the first %d keys still contained (%g)", old, W, got)
			}
			if st := res(f.Stats()).get(t); st.Inserts != uint64(c.n) || st.FPRNow > 1.5*c.rate || st.FPRNow <= 0 {
				t.Fatalf("Stats = %+v after %d inserts, target rate %g", st, c.n, c.rate)
			}
		})
	}
}

func TestAgeBloomClear(t *testing.T) {
	f := mustAgeBloom(t, 4, 4, 500, 3)
	for i := 0; i < 200; i++ {
		must(t, f.Add(idKey('c', i)))
	}
	before := res(f.Info()).get(t)
	must(t, f.Clear())
	for i := 0; i < 200; i++ {
		if abContains(t, f, idKey('c', i)) {
			t.Fatalf("after Clear: key %d is contained", i)
		}
	}
	st := res(f.Stats()).get(t)
	if st.Inserts != 0 || st.FPRNow != 0 {
		t.Fatalf("Stats after Clear = %+v", st)
	}
	if res(f.Info()).get(t) != before {
		t.Fatal("Clear changed the shape")
	}
	must(t, f.Add([]byte("again")))
	if !abContains(t, f, []byte("again")) {
		t.Fatal("a cleared filter does not take keys")
	}
}

// checkAgeBloomClosed calls every method of a filter and wants a clean ErrNull.
var checkAgeBloomClosed = everyMethodClosed[*AgeBloom]("AgeBloom",
	"Add AddString Contains ContainsString AddIfAbsent AddIfAbsentString "+
		"AddBatch AddBatchStrings ContainsBatch ContainsBatchStrings AddIfAbsentBatch AddIfAbsentBatchStrings "+
		"Clear Stats Info Capacity Memory Serialize MarshalBinary")

func TestAgeBloomClosed(t *testing.T) {
	f, err := NewAgeBloom(3, 4, 200)
	must(t, err)
	must(t, f.Add([]byte("k")))
	// the blocked layout closes alike
	b, err := NewAgeBloom(3, 4, 200, WithFlags(AgeBloomBlocked))
	must(t, err)
	must(t, b.Add([]byte("k")))
	f2, err := NewAgeBloomFor(100, 0.01)
	must(t, err)
	checkClosedStates(t, checkAgeBloomClosed, f, b, f2)
}

func TestAgeBloomDeserializeErrors(t *testing.T) {
	// both layouts' blobs, broken alike
	for _, name := range []string{"age_bloom_v1", "age_bloom_blocked_v1"} {
		t.Run(name, func(t *testing.T) {
			checkRefusedBlobs(t, envelopeCases(t, readGoldenBlob(t, name)), DeserializeAgeBloom, checkAgeBloomClosed)
		})
	}
}

func TestAgeBloomSerializeRoundTrip(t *testing.T) {
	f := mustAgeBloom(t, 5, 8, 3000, 11)
	rng := rand.New(rand.NewSource(5))
	keys := randomKeys(rng, 3000)
	for _, k := range keys {
		must(t, f.Add(k))
	}
	blob := res(f.Serialize()).get(t)
	c, err := DeserializeAgeBloom(blob)
	must(t, err)
	defer c.Close()
	probe := append(randomKeys(rng, 2000), keys...)
	for _, k := range probe {
		if a, b := abContains(t, f, k), abContains(t, c, k); a != b {
			t.Fatalf("copy answers %v for %q, original %v", b, k, a)
		}
	}
	if !bytes.Equal(res(c.Serialize()).get(t), blob) {
		t.Fatal("the copy serializes differently")
	}
	if res(c.Info()).get(t) != res(f.Info()).get(t) || res(c.Stats()).get(t) != res(f.Stats()).get(t) {
		t.Fatalf("copy %+v %+v, original %+v %+v", res(c.Info()).get(t), res(c.Stats()).get(t), res(f.Info()).get(t), res(f.Stats()).get(t))
	}
	// the copy goes on exactly as the original would, independently
	must(t, c.Add([]byte("next")))
	must(t, f.Add([]byte("next")))
	if !bytes.Equal(res(c.Serialize()).get(t), res(f.Serialize()).get(t)) {
		t.Fatal("the same insert into the copy and the original gives other bytes")
	}
	must(t, f.Clear())
	if !abContains(t, c, keys[len(keys)-1]) {
		t.Fatal("clearing the original cleared the copy")
	}
}

func TestAgeBloomBinaryMarshaler(t *testing.T) {
	src := mustAgeBloom(t, 4, 6, 1000, 9)
	must(t, src.Add([]byte("k")))
	other := mustAgeBloom(t, 2, 2, 64, 1)
	must(t, other.Add([]byte("old")))
	checkBinaryMarshaler(t, src, other, func(t *testing.T, f *AgeBloom) string {
		k, old := abContains(t, f, []byte("k")), abContains(t, f, []byte("old"))
		if !k || old {
			t.Fatalf("Contains: k %v, old %v; want true and false", k, old)
		}
		return fmt.Sprint(res(f.Info()).get(t), k, old)
	})
}

// ---- the blocked layout ----------------------------------------------------

func TestBlockedAgeBloomShape(t *testing.T) {
	f := mustBlockedAgeBloom(t, 3, 4, 200, 42)
	if !abIsBlocked(t, f) {
		t.Fatal("NewAgeBloom(blocked): Info().Flags lacks AgeBloomBlocked")
	}
	// slices of 200 bits rounded up to 224, generation floor(224 ln 2 / 3) = 51
	want := AgeBloomInfo{K: 3, L: 4, SliceBits: 224, Generation: 51, Capacity: 204, Seed: 42, Flags: AgeBloomBlocked}
	if info := res(f.Info()).get(t); info != want {
		t.Fatalf("Info = %+v, want %+v", info, want)
	}
	// one band of 16 lanes (k+l <= 16): 7 lines of 512 bits, unused lanes included
	st := res(f.Stats()).get(t)
	if st.Slices != 7 || st.Bits != 7*512 || st.Inserts != 0 || st.FPRNow != 0 ||
		math.Abs(st.BitsPerElement-7*512.0/204) > 1e-9 {
		t.Fatalf("Stats of an empty blocked filter = %+v", st)
	}
	if mem, err := f.Memory(); err != nil || mem < 7*64 || mem > 7*64+4096 {
		t.Fatalf("Memory = %d, %v", mem, err)
	}
	if got := f.String(); got != "AgeBloom(blocked, k=3, l=4, 224-bit slices, capacity 204, seed 42)" {
		t.Fatalf("String = %q", got)
	}
	// the classic layout says so too
	for _, c := range []*AgeBloom{mustAgeBloom(t, 3, 4, 200, 42), mustAgeBloomFor(t, 0.01, 100, 1)} {
		if abIsBlocked(t, c) || res(c.Info()).get(t).Flags != 0 {
			t.Fatalf("%v: a classic filter reports the blocked layout", c)
		}
	}
	// k+l = 32 takes two bands; the limits of k and l are fine
	two := mustBlockedAgeBloom(t, 6, 26, 1000, 7)
	if info, st := res(two.Info()).get(t), res(two.Stats()).get(t); info.SliceBits != 1024 || st.Slices != 32 || st.Bits != 2*32*512 {
		t.Fatalf("k=6, l=26: %+v %+v", info, st)
	}
	for _, kl := range [][2]uint32{{1, 1}, {1, 31}, {31, 1}, {16, 16}} {
		f := mustBlockedAgeBloom(t, kl[0], kl[1], 32, math.MaxUint32)
		g := uint64(math.Max(1, math.Floor(32*math.Ln2/float64(kl[0]))))
		info := res(f.Info()).get(t)
		if info.K != kl[0] || info.L != kl[1] || info.SliceBits != 32 || info.Generation != g ||
			info.Seed != math.MaxUint32 || info.Flags != AgeBloomBlocked {
			t.Fatalf("NewAgeBloom(%d, %d, 32, blocked): %+v", kl[0], kl[1], info)
		}
	}
}

// The window of the blocked layout against an exact record of the stream:
// after several windows of inserts, every key among the last Capacity
// inserts is contained (checked after every insert for the oldest, now and
// then for all); keys never added are false positives at about the rate the
// sizing promises.
func TestBlockedAgeBloomWindow(t *testing.T) {
	for _, c := range []struct {
		name string
		mk   func(t *testing.T) *AgeBloom
		rate float64 // the target, 0 when low-level
	}{
		{"for/0.01/1000", func(t *testing.T) *AgeBloom { return mustBlockedAgeBloomFor(t, 0.01, 1000, 7) }, 0.01},
		{"for/0.1/300", func(t *testing.T) *AgeBloom { return mustBlockedAgeBloomFor(t, 0.1, 300, 8) }, 0.1},
		{"k=6,l=26,1024", func(t *testing.T) *AgeBloom { return mustBlockedAgeBloom(t, 6, 26, 1024, 9) }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.mk(t)
			info := res(f.Info()).get(t)
			W := int(info.Capacity)
			if info.Flags != AgeBloomBlocked || info.Capacity != uint64(info.L)*info.Generation {
				t.Fatalf("Info = %+v", info)
			}
			n := 6*W + 123 // several windows
			checked := 0
			for i := 0; i < n; i++ {
				must(t, f.Add(idKey('b', i)))
				if i >= W-1 && !abContains(t, f, idKey('b', i-W+1)) {
					t.Fatalf("after insert %d: the oldest key of the window (%d inserts ago) is not contained", i, W-1)
				}
				if i%(W/2+1) == 0 || i == n-1 {
					for j := i; j >= 0 && j > i-W; j-- {
						if !abContains(t, f, idKey('b', j)) {
							t.Fatalf("after insert %d: key %d (%d inserts ago) is not contained", i, j, i-j)
						}
						checked++
					}
				}
			}
			if checked < 5*W {
				t.Fatalf("only %d window keys checked", checked)
			}
			st := res(f.Stats()).get(t)
			if st.Inserts != uint64(n) || !(st.FPRNow > 0 && st.FPRNow < 1) {
				t.Fatalf("Stats = %+v after %d inserts", st, n)
			}
			fp := 0
			const probes = 20000
			for i := 0; i < probes; i++ {
				if abContains(t, f, idKey('n', i)) {
					fp++
				}
			}
			got := float64(fp) / probes
			t.Logf("%+v: %d window keys checked; false positives %d of %d (%.4g, model %.4g, target %g)",
				info, checked, fp, probes, got, st.FPRNow, c.rate)
			// the model is conservative: measured at or under it
			if got > 1.5*st.FPRNow+0.002 {
				t.Fatalf("false-positive rate %g, model %g", got, st.FPRNow)
			}
			if c.rate > 0 && (got > 1.5*c.rate || st.FPRNow > 1.01*c.rate) {
				t.Fatalf("false-positive rate %g (model %g), target %g", got, st.FPRNow, c.rate)
			}
		})
	}
}

func TestBlockedAgeBloomAddIfAbsentAndClear(t *testing.T) {
	f := mustBlockedAgeBloom(t, 4, 12, 1024, 3)
	if was, err := f.AddIfAbsentString("click-1"); err != nil || was {
		t.Fatalf("first AddIfAbsent = %v, %v; want false", was, err)
	}
	if was, err := f.AddIfAbsent([]byte("click-1")); err != nil || !was {
		t.Fatalf("second AddIfAbsent = %v, %v; want true", was, err)
	}
	if st := res(f.Stats()).get(t); st.Inserts != 1 {
		t.Fatalf("Inserts = %d, want 1 (the duplicate is not inserted)", st.Inserts)
	}
	must(t, f.Add([]byte{'x', 0, 'y'}))
	if !abContains(t, f, []byte{'x', 0, 'y'}) || abContains(t, f, []byte{'x', 0}) {
		t.Fatal("binary keys: NUL bytes must count")
	}
	before := res(f.Info()).get(t)
	must(t, f.Clear())
	if st := res(f.Stats()).get(t); st.Inserts != 0 || st.FPRNow != 0 {
		t.Fatalf("Stats after Clear = %+v", st)
	}
	if res(f.Info()).get(t) != before || abContains(t, f, []byte("click-1")) {
		t.Fatal("Clear changed the shape or kept a key")
	}
}

func TestBlockedAgeBloomSizing(t *testing.T) {
	prevBits := 0.0
	for _, rate := range []float64{0.2, 0.1, 0.01, 0.001} {
		k, l, fill, err := AgeBloomChoose(rate, WithFlags(AgeBloomBlocked))
		if err != nil || k < 1 || l < 1 || (k+l != 16 && k+l != 32) || !(fill > 0 && fill < 1) {
			t.Fatalf("AgeBloomChoose(%g, blocked) = %d, %d, %g, %v", rate, k, l, fill, err)
		}
		// the factory uses the same triple: g = ceil(capacity / l), slices
		// of k g / -ln(1 - fill) bits rounded up to a multiple of 32
		f, err := NewAgeBloomFor(10000, rate, WithSeed(1), WithFlags(AgeBloomBlocked))
		must(t, err)
		info, st := res(f.Info()).get(t), res(f.Stats()).get(t)
		f.Close()
		g := (10000 + uint64(l) - 1) / uint64(l)
		bits := math.Ceil(float64(k) * float64(g) / -math.Log1p(-fill))
		if info.K != k || info.L != l || info.Generation != g || info.Flags != AgeBloomBlocked ||
			info.SliceBits != uint64(math.Ceil(bits/32))*32 || info.Capacity < 10000 {
			t.Fatalf("NewAgeBloomFor(10000, %g, blocked) = %+v; want k %d, l %d, g %d, %g bits", rate, info, k, l, g, bits)
		}
		// a stricter target costs memory
		if st.BitsPerElement <= prevBits {
			t.Fatalf("rate %g: %g bits per element, no more than a larger rate (%g)", rate, st.BitsPerElement, prevBits)
		}
		prevBits = st.BitsPerElement
	}
}

func TestBlockedAgeBloomErrors(t *testing.T) {
	shapes := []ageBloomShape{
		{30, 3, 256, StatusInvalidArgument}, // k + l > 32
		{1, 32, 256, StatusInvalidArgument},
		{16, 17, 256, StatusInvalidArgument},
		{3, 0, 256, StatusInvalidArgument},
		{0, 4, 256, StatusInvalidArgument},
		{64, 4, 256, StatusInvalidArgument},
		{math.MaxUint32, 1, 256, StatusInvalidArgument}, // k + l must not wrap around
		{1, math.MaxUint32, 256, StatusInvalidArgument},
		{3, 4, 31, StatusInvalidArgument},
		{3, 4, 0, StatusInvalidArgument},
		{3, 4, 1<<40 + 1, ErrTooLarge},
		{3, 4, math.MaxUint64, ErrTooLarge},
	}
	targets := []ageBloomTarget{
		{0.01, 0, StatusInvalidArgument},
		{0, 1000, StatusInvalidArgument},
		{1, 1000, StatusInvalidArgument},
		{1.5, 1000, StatusInvalidArgument},
		{0.5, 1000, StatusInvalidArgument}, // the blocked sizing stops at 0.2
		{-0.5, 1000, StatusInvalidArgument},
		{math.NaN(), 1000, StatusInvalidArgument},
		{math.Inf(1), 1000, StatusInvalidArgument},
		{1e-300, 1000, ErrTooLarge},
		{0.01, 1 << 50, ErrTooLarge},
		{0.01, math.MaxUint64, ErrTooLarge},
	}
	checkAgeBloomRefused(t, AgeBloomBlocked, shapes, targets)
	for _, rate := range []float64{0, 1, -0.1, 1.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		k, l, fill, err := AgeBloomChoose(rate, WithFlags(AgeBloomBlocked))
		wantStatus(t, err, StatusInvalidArgument)
		if k != 0 || l != 0 || fill != 0 {
			t.Errorf("AgeBloomChoose(%g, blocked) failed with %d, %d, %g", rate, k, l, fill)
		}
	}
	_, _, _, err := AgeBloomChoose(1e-300, WithFlags(AgeBloomBlocked))
	wantStatus(t, err, ErrTooLarge)
}

func TestBlockedAgeBloomSerializeRoundTrip(t *testing.T) {
	f := mustBlockedAgeBloomFor(t, 0.01, 500, 11)
	rng := rand.New(rand.NewSource(6))
	keys := randomKeys(rng, 3000)
	for _, k := range keys {
		must(t, f.Add(k))
	}
	blob := res(f.Serialize()).get(t)
	if kind, flags := binary.LittleEndian.Uint16(blob[6:]), binary.LittleEndian.Uint32(blob[8:]); kind != 2 || flags != uint32(AgeBloomBlocked) {
		t.Fatalf("blob kind %d, flags %#x; want kind 2 with the blocked flag (AgeBloomBlocked, TF_AGE_BLOOM_BLOCKED)", kind, flags)
	}
	if flags := binary.LittleEndian.Uint32(res(mustAgeBloom(t, 3, 4, 200, 1).Serialize()).get(t)[8:]); flags != 0 {
		t.Fatalf("classic blob flags %#x, want 0", flags)
	}
	c, err := DeserializeAgeBloom(blob)
	must(t, err)
	defer c.Close()
	if !abIsBlocked(t, c) {
		t.Fatal("the copy of a blocked filter is not blocked")
	}
	probe := append(randomKeys(rng, 3000), keys...)
	for _, k := range probe {
		if a, b := abContains(t, f, k), abContains(t, c, k); a != b {
			t.Fatalf("copy answers %v for %q, original %v", b, k, a)
		}
	}
	// no false negatives for the last Capacity keys, in the copy too
	capacity := int(res(c.Info()).get(t).Capacity)
	for _, k := range keys[len(keys)-capacity:] {
		if !abContains(t, c, k) {
			t.Fatalf("the copy lost %q of the window", k)
		}
	}
	if !bytes.Equal(res(c.Serialize()).get(t), blob) {
		t.Fatal("the copy serializes differently")
	}
	if res(c.Info()).get(t) != res(f.Info()).get(t) || res(c.Stats()).get(t) != res(f.Stats()).get(t) || c.String() != f.String() {
		t.Fatalf("copy %v %+v, original %v %+v", c, res(c.Stats()).get(t), f, res(f.Stats()).get(t))
	}
	// the copy goes on exactly as the original would (the generation
	// counter travels too), independently
	for i := 0; i < 700; i++ {
		must(t, c.Add(idKey('x', i)))
		must(t, f.Add(idKey('x', i)))
	}
	if !bytes.Equal(res(c.Serialize()).get(t), res(f.Serialize()).get(t)) {
		t.Fatal("the same inserts into the copy and the original give other bytes")
	}
	must(t, f.Clear())
	if !abContains(t, c, idKey('x', 699)) {
		t.Fatal("clearing the original cleared the copy")
	}
	// MarshalBinary / UnmarshalBinary across layouts: a classic filter
	// becomes blocked and back
	other := mustAgeBloom(t, 2, 2, 64, 1)
	must(t, other.UnmarshalBinary(blob))
	if !abIsBlocked(t, other) || res(other.Info()).get(t) != res(mustBlockedAgeBloomFor(t, 0.01, 500, 11).Info()).get(t) {
		t.Fatalf("UnmarshalBinary of a blocked blob: %v", other)
	}
	must(t, other.UnmarshalBinary(readGoldenBlob(t, "age_bloom_v1")))
	if abIsBlocked(t, other) {
		t.Fatal("UnmarshalBinary of a classic blob left the blocked layout")
	}
}
