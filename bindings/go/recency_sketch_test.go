package temporalfilters

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

func mustNew(t *testing.T, width uint64, depth, seed uint32, flags RecencySketchFlags) *RecencySketch {
	t.Helper()
	return keep(t, res(NewRecencySketch(width, depth, WithSeed(seed), WithFlags(flags))))
}

func mustQuery(t *testing.T, s *RecencySketch, key []byte) uint64 {
	t.Helper()
	return res(s.Query(key)).get(t, "Query ", key)
}

// A sketch big enough that a handful of keys never collide in every row:
// its answers are exact.
func exactSketch(t *testing.T, flags RecencySketchFlags) *RecencySketch {
	return mustNew(t, 1<<14, 4, 7, flags)
}

var allModes = []RecencySketchFlags{0, RecencySketchConcurrent, RecencySketchBlocked, RecencySketchBlocked | RecencySketchConcurrent}

func TestUpdateQuery(t *testing.T) {
	for _, mode := range allModes {
		t.Run(fmt.Sprintf("flags=%d", mode), func(t *testing.T) {
			s := exactSketch(t, mode)
			if got := mustQuery(t, s, []byte("a")); got != Never {
				t.Fatalf("fresh sketch: Query = %d, want Never", got)
			}
			if _, seen, err := s.LastSeen([]byte("a")); err != nil || seen {
				t.Fatalf("fresh sketch: LastSeen seen = %v, err = %v", seen, err)
			}
			must(t, s.Update([]byte("a"), 100))
			if got := mustQuery(t, s, []byte("a")); got != 100 {
				t.Fatalf("Query = %d, want 100", got)
			}
			// older times change nothing, newer ones win
			must(t, s.Update([]byte("a"), 50))
			if got := mustQuery(t, s, []byte("a")); got != 100 {
				t.Fatalf("after an older update: Query = %d, want 100", got)
			}
			must(t, s.Update([]byte("a"), 250))
			last, seen, err := s.LastSeen([]byte("a"))
			if err != nil || !seen || last != 250 {
				t.Fatalf("LastSeen = %d, %v, %v; want 250, true, nil", last, seen, err)
			}
			if got := mustQuery(t, s, []byte("b")); got != Never {
				t.Fatalf("other key: Query = %d, want Never", got)
			}
			// the largest timestamp is a timestamp like any other
			must(t, s.Update([]byte("max"), math.MaxUint64))
			if got := mustQuery(t, s, []byte("max")); got != math.MaxUint64 {
				t.Fatalf("Query = %d, want MaxUint64", got)
			}
		})
	}
}

func TestStringKeys(t *testing.T) {
	s := exactSketch(t, 0)
	must(t, s.UpdateString("héllo wörld", 42))
	if got := mustQuery(t, s, []byte("héllo wörld")); got != 42 {
		t.Fatalf("string key read as bytes: %d, want 42", got)
	}
	must(t, s.Update([]byte("bytes"), 43))
	if got, err := s.QueryString("bytes"); err != nil || got != 43 {
		t.Fatalf("QueryString = %d, %v; want 43", got, err)
	}
	if last, seen, err := s.LastSeenString("héllo wörld"); err != nil || !seen || last != 42 {
		t.Fatalf("LastSeenString = %d, %v, %v", last, seen, err)
	}
	if _, seen, err := s.LastSeenString("nope"); err != nil || seen {
		t.Fatalf("LastSeenString(unseen) seen = %v, %v", seen, err)
	}
	// The string's bytes are passed without a copy: a string sliced out of
	// a larger one must still be exactly its own bytes.
	big := "prefix-middle-suffix"
	must(t, s.UpdateString(big[7:13], 44))
	if got := mustQuery(t, s, []byte("middle")); got != 44 {
		t.Fatalf("substring key: %d, want 44", got)
	}
	if got := mustQuery(t, s, []byte("middle-suffix")); got != Never {
		t.Fatalf("substring key leaked its tail: %d", got)
	}
}

func TestBinaryKeys(t *testing.T) {
	s := exactSketch(t, 0)
	keys := [][]byte{
		{0x00},
		{0x00, 0x00},
		{'a', 0x00, 'b'},
		{'a', 0x00, 'c'},
		{'a'},
		{0xff, 0x00, 0x7f, 0x80},
	}
	for i, k := range keys {
		must(t, s.Update(k, uint64(10+i)))
	}
	for i, k := range keys {
		if got := mustQuery(t, s, k); got != uint64(10+i) {
			t.Errorf("Query(%q) = %d, want %d", k, got, 10+i)
		}
	}
	if got, err := s.QueryString("a\x00b"); err != nil || got != 12 {
		t.Errorf("QueryString(a NUL b) = %d, %v; want 12", got, err)
	}
	// The empty key is a key: nil and []byte{} and "" are the same one.
	if got := mustQuery(t, s, nil); got != Never {
		t.Fatalf("empty key before update: %d", got)
	}
	must(t, s.Update(nil, 77))
	for _, k := range [][]byte{nil, {}} {
		if got := mustQuery(t, s, k); got != 77 {
			t.Errorf("empty key %#v: %d, want 77", k, got)
		}
	}
	if got, err := s.QueryString(""); err != nil || got != 77 {
		t.Errorf(`QueryString("") = %d, %v; want 77`, got, err)
	}
}

func TestPace(t *testing.T) {
	s := exactSketch(t, 0)
	key := []byte("client")
	steps := []struct {
		now     uint64
		granted bool
		next    uint64
	}{
		{100, true, 110},
		{100, false, 110},
		{105, false, 110},
		{109, false, 110},
		{110, true, 120},
		{125, true, 135},
		{90, false, 135}, // a clock that goes backwards is denied, never double-granted
	}
	for _, st := range steps {
		res, err := s.Pace(key, st.now, 10)
		if err != nil {
			t.Fatal(err)
		}
		if res.Granted != st.granted || res.NextAllowed != st.next {
			t.Fatalf("Pace(now=%d) = %+v, want granted=%v next=%d", st.now, res, st.granted, st.next)
		}
	}
	// A grant is recorded as an update at now.
	if got := mustQuery(t, s, key); got != 125 {
		t.Fatalf("Query after grants = %d, want 125", got)
	}
	// Other keys are paced independently; the string form is the same key.
	if res, err := s.PaceString("other", 126, 10); err != nil || !res.Granted {
		t.Fatalf("PaceString(other) = %+v, %v", res, err)
	}
	if res, err := s.PaceString("client", 130, 10); err != nil || res.Granted || res.NextAllowed != 135 {
		t.Fatalf("PaceString(client) = %+v, %v; want denied until 135", res, err)
	}
	// next-allowed saturates at the end of time
	res, err := s.Pace([]byte("late"), math.MaxUint64-5, 10)
	if err != nil || !res.Granted || res.NextAllowed != math.MaxUint64 {
		t.Fatalf("Pace near MaxUint64 = %+v, %v; want granted, next MaxUint64", res, err)
	}
	res, err = s.Pace([]byte("late"), math.MaxUint64, 10)
	if err != nil || res.Granted || res.NextAllowed != math.MaxUint64 {
		t.Fatalf("Pace at MaxUint64 = %+v, %v; want denied, next MaxUint64", res, err)
	}
}

func TestTTL(t *testing.T) {
	s := exactSketch(t, 0)
	must(t, s.TTLInsert([]byte("entry"), 100, 50))
	cases := []struct {
		now  uint64
		live bool
	}{{100, true}, {149, true}, {150, false}, {1000, false}}
	for _, c := range cases {
		live, err := s.TTLMaybeLive([]byte("entry"), c.now)
		if err != nil || live != c.live {
			t.Errorf("TTLMaybeLive(now=%d) = %v, %v; want %v", c.now, live, err, c.live)
		}
	}
	if got := mustQuery(t, s, []byte("entry")); got != 150 {
		t.Errorf("estimated expiry = %d, want 150", got)
	}
	if live, err := s.TTLMaybeLive([]byte("never inserted"), 1); err != nil || live {
		t.Errorf("TTLMaybeLive(never inserted) = %v, %v", live, err)
	}
	must(t, s.TTLInsertString("str", 10, 5))
	if live, err := s.TTLMaybeLiveString("str", 14); err != nil || !live {
		t.Errorf("TTLMaybeLiveString(14) = %v, %v", live, err)
	}
	if live, err := s.TTLMaybeLiveString("str", 15); err != nil || live {
		t.Errorf("TTLMaybeLiveString(15) = %v, %v", live, err)
	}
	// the expiry saturates instead of wrapping around
	must(t, s.TTLInsert([]byte("forever"), math.MaxUint64-1, 10))
	if got := mustQuery(t, s, []byte("forever")); got != math.MaxUint64 {
		t.Errorf("saturated expiry = %d, want MaxUint64", got)
	}
}

func TestMerge(t *testing.T) {
	for _, mode := range allModes {
		t.Run(fmt.Sprintf("flags=%d", mode), func(t *testing.T) {
			a := exactSketch(t, mode)
			b := exactSketch(t, mode&^RecencySketchConcurrent) // the concurrency mode may differ
			must(t, a.Update([]byte("x"), 10))
			must(t, a.Update([]byte("both"), 30))
			must(t, b.Update([]byte("y"), 20))
			must(t, b.Update([]byte("both"), 25))
			bBefore := res(b.Serialize()).get(t)
			must(t, a.Merge(b))
			for k, want := range map[string]uint64{"x": 10, "y": 20, "both": 30, "none": Never} {
				if got := mustQuery(t, a, []byte(k)); got != want {
					t.Errorf("merged Query(%s) = %d, want %d", k, got, want)
				}
			}
			if !bytes.Equal(res(b.Serialize()).get(t), bBefore) {
				t.Error("Merge changed its source")
			}
			// idempotent, also with itself
			aBefore := res(a.Serialize()).get(t)
			must(t, a.Merge(b))
			must(t, a.Merge(a))
			if !bytes.Equal(res(a.Serialize()).get(t), aBefore) {
				t.Error("merging again changed the sketch")
			}
		})
	}
}

func TestMergeIncompatible(t *testing.T) {
	dst := mustNew(t, 1024, 4, 1, 0)
	must(t, dst.Update([]byte("k"), 5))
	before := res(dst.Serialize()).get(t)
	others := []*RecencySketch{
		mustNew(t, 1023, 4, 1, 0), // width
		mustNew(t, 1024, 3, 1, 0), // depth
		mustNew(t, 1024, 4, 2, 0), // seed
		mustNew(t, 1024, 4, 1, RecencySketchBlocked),
	}
	for i, o := range others {
		must(t, o.Update([]byte("k"), 99))
		err := dst.Merge(o)
		wantStatus(t, err, ErrIncompatible)
		if !bytes.Equal(res(dst.Serialize()).get(t), before) {
			t.Fatalf("case %d: a failed Merge changed the sketch", i)
		}
	}
}

func TestClear(t *testing.T) {
	s := exactSketch(t, RecencySketchConcurrent)
	for i := 0; i < 100; i++ {
		must(t, s.UpdateString(fmt.Sprint("k", i), uint64(i+1)))
	}
	if p, err := s.ErrorEstimate(Never); err != nil || p <= 0 {
		t.Fatalf("ErrorEstimate before Clear = %v, %v; want > 0", p, err)
	}
	must(t, s.Clear())
	for i := 0; i < 100; i++ {
		if got, _ := s.QueryString(fmt.Sprint("k", i)); got != Never {
			t.Fatalf("after Clear: k%d reads %d", i, got)
		}
	}
	if p, err := s.ErrorEstimate(Never); err != nil || p != 0 {
		t.Fatalf("ErrorEstimate after Clear = %v, %v; want 0", p, err)
	}
}

func TestInfo(t *testing.T) {
	s := mustNew(t, 1000, 4, 7, RecencySketchConcurrent)
	info, err := s.Info()
	if err != nil {
		t.Fatal(err)
	}
	want := RecencySketchInfo{Width: 1000, Depth: 4, Seed: 7, Flags: RecencySketchConcurrent, Cells: 4000}
	if info != want {
		t.Fatalf("Info = %+v, want %+v", info, want)
	}
	if w, d, seed, flags, cells := s.Width(), s.Depth(), s.Seed(), s.Flags(), s.Cells(); w != 1000 || d != 4 ||
		seed != 7 || flags != RecencySketchConcurrent || cells != 4000 {
		t.Fatalf("getters = %d %d %d %d %d", w, d, seed, flags, cells)
	}
	mem, err := s.Memory()
	if err != nil || mem < 4000*8 || mem > 4000*8+4096 {
		t.Fatalf("Memory = %d, %v; want about 32000", mem, err)
	}
	if got := s.String(); got != "RecencySketch(1000x4, seed 7, flags 1)" {
		t.Fatalf("String = %q", got)
	}
	// Blocked: width*depth rounded up to whole cache lines of 8 cells.
	b := mustNew(t, 10, 3, 0, RecencySketchBlocked)
	if cells := b.Cells(); cells != 32 {
		t.Fatalf("blocked Cells = %d; want 32", cells)
	}
}

// The plain getters return the parameters read when the sketch was created,
// deserialized or unmarshaled: they follow UnmarshalBinary, and a closed
// sketch keeps them (a zero or nil one has zeros: checkClosed).
func TestPlainGettersFollowTheObject(t *testing.T) {
	s := mustNew(t, 1000, 4, 7, RecencySketchConcurrent)
	blob := res(mustNew(t, 64, 2, 9, RecencySketchBlocked).Serialize()).get(t)
	must(t, s.UnmarshalBinary(blob))
	want := res(s.Info()).get(t)
	if want != (RecencySketchInfo{Width: 64, Depth: 2, Seed: 9, Flags: RecencySketchBlocked, Cells: 128}) {
		t.Fatalf("Info after UnmarshalBinary = %+v", want)
	}
	got := RecencySketchInfo{Width: s.Width(), Depth: s.Depth(), Seed: s.Seed(), Flags: s.Flags(), Cells: s.Cells()}
	if got != want {
		t.Fatalf("getters after UnmarshalBinary = %+v, want %+v", got, want)
	}
	d := res(DeserializeRecencySketch(blob)).get(t)
	defer d.Close()
	if d.Width() != 64 || d.Depth() != 2 || d.Seed() != 9 || d.Flags() != RecencySketchBlocked || d.Cells() != 128 {
		t.Fatalf("getters of the deserialized sketch = %d %d %d %d %d", d.Width(), d.Depth(), d.Seed(), d.Flags(),
			d.Cells())
	}
	must(t, s.Close())
	got = RecencySketchInfo{Width: s.Width(), Depth: s.Depth(), Seed: s.Seed(), Flags: s.Flags(), Cells: s.Cells()}
	if got != want {
		t.Fatalf("getters after Close = %+v, want %+v", got, want)
	}
	if _, err := s.Info(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Info after Close: %v, want ErrClosed", err)
	}
}

func TestDimensions(t *testing.T) {
	w, d, err := RecencySketchDimensions(1000, 0.01)
	if err != nil || w == 0 || d == 0 {
		t.Fatalf("RecencySketchDimensions = %d, %d, %v", w, d, err)
	}
	// the formula of recency_sketch.h: (1 - (1 - 1/w)^n)^d <= p
	if p := math.Pow(1-math.Pow(1-1/float64(w), 1000), float64(d)); p > 0.01 {
		t.Fatalf("%dx%d gives P(too new) = %g > 0.01", w, d, p)
	}
	bw, bd, err := RecencySketchDimensions(1000, 0.01, WithFlags(RecencySketchBlocked))
	if err != nil || bd > 8 || bw*uint64(bd) <= w*uint64(d) {
		t.Fatalf("blocked dimensions %dx%d (%v) should need more cells than %dx%d", bw, bd, err, w, d)
	}
	s, err := NewRecencySketchFor(1000, 0.01, WithSeed(9), WithFlags(RecencySketchConcurrent))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info, err := s.Info()
	if err != nil || info.Width != w || info.Depth != d || info.Seed != 9 || info.Flags != RecencySketchConcurrent {
		t.Fatalf("NewRecencySketchFor: %+v, %v; want %dx%d seed 9", info, err, w, d)
	}
}

func TestErrorEstimate(t *testing.T) {
	s := mustNew(t, 64, 2, 1, 0)
	if p, err := s.ErrorEstimate(Never); err != nil || p != 0 {
		t.Fatalf("empty: %v, %v", p, err)
	}
	for i := 0; i < 1000; i++ {
		must(t, s.UpdateString(fmt.Sprint(i), uint64(100+i)))
	}
	p, err := s.ErrorEstimate(Never)
	if err != nil || p < 0.9 || p > 1 {
		t.Fatalf("full sketch: ErrorEstimate(Never) = %v, %v; want close to 1", p, err)
	}
	if p2, err := s.ErrorEstimate(math.MaxUint64); err != nil || p2 != 0 {
		t.Fatalf("ErrorEstimate(MaxUint64) = %v, %v; want 0", p2, err)
	}
}

func TestSerializeRoundTrip(t *testing.T) {
	for _, mode := range allModes {
		t.Run(fmt.Sprintf("flags=%d", mode), func(t *testing.T) {
			s := mustNew(t, 300, 4, 11, mode)
			rng := rand.New(rand.NewSource(int64(mode) + 1))
			keys := randomKeys(rng, 500)
			for _, k := range keys {
				must(t, s.Update(k, 1+uint64(rng.Intn(1e6))))
			}
			blob := res(s.Serialize()).get(t)
			c := keep(t, res(DeserializeRecencySketch(blob)))
			for _, k := range keys {
				if a, b := mustQuery(t, s, k), mustQuery(t, c, k); a != b {
					t.Fatalf("copy answers %d for %q, original %d", b, k, a)
				}
			}
			if !bytes.Equal(res(c.Serialize()).get(t), blob) {
				t.Fatal("the copy serializes differently")
			}
			ci, _ := c.Info()
			si, _ := s.Info()
			if ci != si {
				t.Fatalf("copy info %+v, original %+v", ci, si)
			}
			// the copy is independent
			must(t, c.Update([]byte("only in copy"), 5))
			if got := mustQuery(t, s, []byte("only in copy")); got == 5 {
				t.Fatal("an update of the copy reached the original")
			}
		})
	}
}

func TestBinaryMarshaler(t *testing.T) {
	src := exactSketch(t, 0)
	must(t, src.Update([]byte("k"), 123))
	other := mustNew(t, 8, 1, 99, RecencySketchBlocked)
	must(t, other.Update([]byte("old"), 5))
	checkBinaryMarshaler(t, src, other, func(t *testing.T, s *RecencySketch) string {
		k, old := mustQuery(t, s, []byte("k")), mustQuery(t, s, []byte("old"))
		if k != 123 || old != Never {
			t.Fatalf("Query: k %d, old %d; want 123 and never", k, old)
		}
		return fmt.Sprint(res(s.Info()).get(t), k, old)
	})
}

func randomKeys(rng *rand.Rand, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, rng.Intn(24))
		rng.Read(k)
		if len(k) > 2 && i%3 == 0 {
			k[1] = 0 // NUL bytes inside keys
		}
		keys[i] = k
	}
	return keys
}

func TestBatchEqualsSingle(t *testing.T) {
	for _, mode := range allModes {
		for _, n := range []int{0, 1, 63, 64, 65, 1000} { // around the native layer's small-batch buffer
			t.Run(fmt.Sprintf("flags=%d/n=%d", mode, n), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(n)*10 + int64(mode)))
				keys := randomKeys(rng, n)
				times := make([]uint64, n)
				for i := range times {
					times[i] = 1 + uint64(rng.Intn(5000))
				}
				single := mustNew(t, 512, 3, 5, mode)
				batch := mustNew(t, 512, 3, 5, mode)
				strs := mustNew(t, 512, 3, 5, mode)
				for i, k := range keys {
					must(t, single.Update(k, times[i]))
				}
				must(t, batch.UpdateBatch(keys, times))
				skeys := make([]string, n)
				for i, k := range keys {
					skeys[i] = string(k)
				}
				must(t, strs.UpdateBatchStrings(skeys, times))
				want := res(single.Serialize()).get(t)
				if !bytes.Equal(res(batch.Serialize()).get(t), want) || !bytes.Equal(res(strs.Serialize()).get(t), want) {
					t.Fatal("batch updates give another sketch than single updates")
				}
				probe := append(randomKeys(rng, 50), keys...)
				got, err := batch.QueryBatch(probe)
				if err != nil {
					t.Fatal(err)
				}
				sprobe := make([]string, len(probe))
				for i, k := range probe {
					sprobe[i] = string(k)
				}
				gotS, err := batch.QueryBatchStrings(sprobe)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(probe) || len(gotS) != len(probe) {
					t.Fatalf("QueryBatch returned %d/%d answers for %d keys", len(got), len(gotS), len(probe))
				}
				for i, k := range probe {
					w := mustQuery(t, single, k)
					if got[i] != w || gotS[i] != w {
						t.Fatalf("key %d: QueryBatch %d, QueryBatchStrings %d, Query %d", i, got[i], gotS[i], w)
					}
				}
			})
		}
	}
}

func TestBatchErrors(t *testing.T) {
	s := exactSketch(t, 0)
	must(t, s.Update([]byte("a"), 1))
	before := res(s.Serialize()).get(t)
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}

	err := s.UpdateBatch(keys, []uint64{5, 6})
	wantStatus(t, err, StatusInvalidArgument)
	err = s.UpdateBatch(keys, []uint64{5, 6, 7, 8})
	wantStatus(t, err, StatusInvalidArgument)
	err = s.UpdateBatchStrings([]string{"a"}, nil)
	wantStatus(t, err, StatusInvalidArgument)
	// a zero time anywhere fails the whole batch, and nothing changes
	err = s.UpdateBatch(keys, []uint64{5, 0, 7})
	wantStatus(t, err, StatusInvalidArgument)
	if !strings.Contains(err.Error(), "[1]") {
		t.Errorf("the message should name the index: %v", err)
	}
	if !bytes.Equal(res(s.Serialize()).get(t), before) {
		t.Fatal("a failed batch changed the sketch")
	}
	err = s.QueryBatchInto(make([]uint64, 2), keys)
	wantStatus(t, err, StatusInvalidArgument)
	err = s.QueryBatchStringsInto(make([]uint64, 4), []string{"a", "b", "c"})
	wantStatus(t, err, StatusInvalidArgument)
	// empty batches are fine
	must(t, s.UpdateBatch(nil, nil))
	if got, err := s.QueryBatch(nil); err != nil || len(got) != 0 {
		t.Fatalf("empty QueryBatch = %v, %v", got, err)
	}
	out := []uint64{9, 9, 9}
	must(t, s.QueryBatchInto(out, keys))
	if out[0] != 1 || out[1] != Never || out[2] != Never {
		t.Fatalf("QueryBatchInto = %v", out)
	}
}
