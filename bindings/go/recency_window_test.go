package temporalfilters

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"temporalfilters.org/go/temporalfilters/internal/native"
)

func mustRecencyWindow(t *testing.T, opts ...Option) *RecencyWindow {
	t.Helper()
	return keep(t, res(NewRecencyWindow(opts...)))
}

// checkRecency checks one answer (e, in) for a key of true recency r (-1:
// never inserted) against the mode's promise
// (temporalfilters/recency_window.h).
func checkRecency(t *testing.T, what string, info RecencyWindowInfo, r int64, e uint64, in bool) {
	t.Helper()
	if r < 0 || uint64(r) >= info.Window+uint64(info.Slack)-1 {
		if in {
			t.Fatalf("%s: r=%d answered %d, want not in the window", what, r, e)
		}
		return
	}
	if uint64(r) >= info.Window {
		return // within the slack: either answer may come
	}
	ur := uint64(r)
	if !in {
		t.Fatalf("%s: r=%d answered not in the window", what, r)
	}
	if e > ur {
		t.Fatalf("%s: r=%d answered %d: too large", what, r, e)
	}
	switch info.Mode {
	case RecencyWindowHistorical:
		if ur*info.InvEps > e*(info.InvEps+1) { // r <= (1 + 1/invEps) e
			t.Fatalf("%s: r=%d answered %d: beyond (1 + 1/%d)", what, r, e, info.InvEps)
		}
	case RecencyWindowExact:
		if e != ur {
			t.Fatalf("%s: r=%d answered %d: not exact", what, r, e)
		}
	case RecencyWindowOptimalSM:
		if ur > e+info.Block-1 {
			t.Fatalf("%s: r=%d answered %d: beyond D - 1 = %d", what, r, e, info.Block-1)
		}
	default:
		t.Fatalf("mode %v", info.Mode)
	}
}

// InsertReport against the exact previous recency at every insert of a
// skewed stream (hot keys and cold ones: recencies from 0 to well beyond
// W), and Query of a sample of keys at checkpoints, in every mode.
func TestRecencyWindowAgainstAnExactMap(t *testing.T) {
	for _, mode := range []RecencyWindowMode{RecencyWindowHistorical, RecencyWindowExact, RecencyWindowOptimalSM} {
		t.Run(mode.String(), func(t *testing.T) {
			w := mustRecencyWindow(t, WithWindow(2000), WithInvEps(4), WithMode(mode), WithSeed(3))
			info := res(w.Info()).get(t)
			if info.Mode != mode || w.Mode() != mode || w.Window() != 2000 || w.InvEps() != 4 {
				t.Fatalf("Info = %+v", info)
			}
			last := map[string]int64{}
			rng := rand.New(rand.NewSource(17))
			recency := func(key string, n int64) int64 {
				if p, ok := last[key]; ok {
					return n - 1 - p
				}
				return -1
			}
			n := int64(0)
			for i := 0; i < 30000; i++ {
				key := fmt.Sprintf("cold-%d", rng.Intn(6000))
				if rng.Intn(100) < 60 {
					key = fmt.Sprintf("hot-%d", rng.Intn(50))
				}
				e, in, err := w.InsertReportString(key)
				must(t, err)
				checkRecency(t, "InsertReport "+key, info, recency(key, n), e, in)
				last[key] = n
				n++
				if i%5000 == 4999 {
					for k := 0; k < 200; k++ {
						q := fmt.Sprintf("cold-%d", rng.Intn(6000))
						if k%2 == 0 {
							q = fmt.Sprintf("hot-%d", k%50)
						}
						e, in, err := w.QueryString(q)
						must(t, err)
						checkRecency(t, "Query "+q, info, recency(q, n), e, in)
					}
					if _, in, err := w.QueryString(fmt.Sprintf("never-%d", i)); err != nil || in {
						t.Fatalf("a key never inserted: %v %v", in, err)
					}
				}
			}
			s := res(w.Stats()).get(t)
			if s.Inserts != uint64(n) || s.WindowItems != 2000 || s.Levels != uint64(info.Levels) ||
				s.Memory != res(w.Memory()).get(t) || s.Lost != 0 {
				t.Fatalf("Stats = %+v", s)
			}
		})
	}
}

func TestRecencyWindowBasics(t *testing.T) {
	w := mustRecencyWindow(t)
	if info := res(w.Info()).get(t); info != (RecencyWindowInfo{Window: 65536, InvEps: 8, Mode: RecencyWindowHistorical,
		SignatureBits: 64, Levels: info.Levels, Slack: info.Slack}) || info.Levels < 2 {
		t.Fatalf("defaults: %+v", info)
	}
	if got := w.String(); got != "RecencyWindow(window 65536, 1/eps 8, Historical, 64-bit signatures, seed 0)" {
		t.Fatalf("String = %q", got)
	}
	if m := res(RecencyWindowMemoryFor()).get(t); m != res(w.Memory()).get(t) {
		t.Fatalf("RecencyWindowMemoryFor = %d, Memory = %d", m, res(w.Memory()).get(t))
	}
	e := mustRecencyWindow(t, WithWindow(16), WithMode(RecencyWindowExact))
	if r, in, err := e.QueryString("a"); err != nil || in || r != 0 {
		t.Fatalf("Query of a key never inserted = %d, %v, %v", r, in, err)
	}
	if _, in, _ := e.InsertReportString("a"); in {
		t.Fatal("InsertReport of a new key is in the window")
	}
	must(t, e.Insert([]byte("b")))
	if r, in, err := e.Query([]byte("a")); r != 1 || !in || err != nil {
		t.Fatalf("Query(a) = %d, %v, %v", r, in, err)
	}
	if r, in, _ := e.InsertReport(nil); in || r != 0 { // the empty key is a key
		t.Fatal("the empty key")
	}
	if r, in, _ := e.Query([]byte{}); !in || r != 0 {
		t.Fatal("the empty key was inserted")
	}
	for i := 0; i < 40; i++ {
		must(t, e.InsertString(fmt.Sprintf("filler-%d", i)))
	}
	if _, in, _ := e.QueryString("a"); in {
		t.Fatal("a key 40 inserts old is in a window of 16")
	}
	if got := res(e.QueryBatchStrings([]string{"a", "filler-39"})).get(t); got[0] != RecencyWindowNotInWindow ||
		got[1] != 0 || RecencyWindowNotInWindow != math.MaxUint64 {
		t.Fatalf("QueryBatch = %v", got)
	}
	if RecencyWindowNotInWindow != native.TF_RECENCY_WINDOW_NOT_IN_WINDOW ||
		RecencyWindowMaxWindow != native.TF_RECENCY_WINDOW_MAX_WINDOW ||
		RecencyWindowMaxInvEps != native.TF_RECENCY_WINDOW_MAX_INV_EPS || RecencyWindowMaxWindow != 1<<40 || RecencyWindowMaxInvEps != 1<<20 || RecencyWindowHistorical != 0 ||
		RecencyWindowExact != 1 || RecencyWindowOptimalSM != 2 || RecencyWindowMode(7).String() != "RecencyWindowMode(7)" {
		t.Fatal("the constants")
	}
}

func TestRecencyWindowStatsAndLevels(t *testing.T) {
	w := mustRecencyWindow(t, WithWindow(4096), WithInvEps(8), WithSeed(11))
	for i := 0; i < 10000; i++ {
		must(t, w.InsertString(fmt.Sprintf("k-%d", i)))
	}
	s := res(w.Stats()).get(t)
	if s.Inserts != 10000 || s.WindowItems != 4096 || s.Promotions == 0 || s.BitsPerWindowItem <= 0 {
		t.Fatalf("Stats = %+v", s)
	}
	items := uint64(0)
	for l := uint64(0); l < s.Levels; l++ {
		level := res(w.Level(l)).get(t)
		if level.BlockWidth != 1<<l || level.Slots%8 != 0 || level.EntryBits <= level.ClassBits {
			t.Fatalf("Level(%d) = %+v", l, level)
		}
		items += level.Items
	}
	if items != s.Items {
		t.Fatalf("the levels hold %d items, Stats says %d", items, s.Items)
	}
	_, err := w.Level(s.Levels)
	wantStatus(t, err, StatusInvalidArgument)
	must(t, w.Clear())
	if c := res(w.Stats()).get(t); c.Inserts != 0 || c.Memory != s.Memory {
		t.Fatalf("after Clear: %+v", c)
	}
	if _, in, _ := w.QueryString("k-9999"); in {
		t.Fatal("Clear forgot nothing")
	}
	o := mustRecencyWindow(t, WithMode(RecencyWindowOptimalSM), WithWindow(1000), WithInvEps(10))
	if info := res(o.Info()).get(t); info.Block != 100 || info.Levels != 1 {
		t.Fatalf("OptimalSM's default block: %+v", info)
	}
	d := mustRecencyWindow(t, WithWindow(1000), WithDelta(0.01))
	if info := res(d.Info()).get(t); info.SignatureBits >= 64 || info.Delta != 0.01 {
		t.Fatalf("approximate signatures: %+v", info)
	}
}

func TestRecencyWindowBadOptions(t *testing.T) {
	for _, c := range []struct {
		what string
		opts []Option
		want error
	}{
		{"window 0", []Option{WithWindow(0)}, StatusInvalidArgument},
		{"window above the largest", []Option{WithWindow(RecencyWindowMaxWindow + 1)}, ErrTooLarge},
		{"invEps 0", []Option{WithInvEps(0)}, StatusInvalidArgument},
		{"invEps above the largest", []Option{WithInvEps(RecencyWindowMaxInvEps + 1)}, StatusInvalidArgument},
		{"a block outside OptimalSM", []Option{WithBlock(4)}, StatusInvalidArgument},
		{"a block above the window", []Option{WithMode(RecencyWindowOptimalSM), WithWindow(10), WithBlock(11)},
			StatusInvalidArgument},
		{"an unknown mode", []Option{WithMode(RecencyWindowMode(3))}, StatusInvalidArgument},
		{"delta 1", []Option{WithDelta(1)}, StatusInvalidArgument},
		{"delta below 0", []Option{WithDelta(-0.5)}, StatusInvalidArgument},
		{"delta NaN", []Option{WithDelta(math.NaN())}, StatusInvalidArgument},
		{"a window over the cap", []Option{WithWindow(1 << 20), WithMaxMemory(1024)}, ErrTooLarge},
		{"an option of another structure", []Option{WithTableSlots(64)}, StatusInvalidArgument},
	} {
		w, err := NewRecencyWindow(c.opts...)
		wantRefused(t, c.what, w, err, c.want)
		if c.want == StatusInvalidArgument {
			_, err := RecencyWindowMemoryFor(c.opts...)
			wantStatus(t, err, c.want)
		}
	}
	need := res(RecencyWindowMemoryFor(WithWindow(1 << 16))).get(t)
	w := mustRecencyWindow(t, WithWindow(1<<16), WithMaxMemory(need))
	if res(w.Memory()).get(t) != need {
		t.Fatal("RecencyWindowMemoryFor differs from Memory")
	}
	// a refused call changes nothing
	must(t, w.InsertString("k"))
	before := res(w.Serialize()).get(t)
	_, err := w.Level(1 << 40)
	wantStatus(t, err, StatusInvalidArgument)
	if !bytes.Equal(before, res(w.Serialize()).get(t)) {
		t.Fatal("a refused call changed the window")
	}
}

// The batches give the same answers and leave the same window as the
// single calls.
func TestRecencyWindowBatches(t *testing.T) {
	for _, mode := range []RecencyWindowMode{RecencyWindowHistorical, RecencyWindowExact, RecencyWindowOptimalSM} {
		a := mustRecencyWindow(t, WithWindow(500), WithMode(mode), WithSeed(7))
		b := mustRecencyWindow(t, WithWindow(500), WithMode(mode), WithSeed(7))
		rng := rand.New(rand.NewSource(5))
		for round := 0; round < 20; round++ {
			keys := make([]string, 100)
			for i := range keys {
				keys[i] = fmt.Sprintf("k-%d", rng.Intn(300))
			}
			got := res(b.InsertReportBatchStrings(keys)).get(t)
			for i, k := range keys {
				e, in, err := a.InsertReportString(k)
				must(t, err)
				if (in && got[i] != e) || (!in && got[i] != RecencyWindowNotInWindow) {
					t.Fatalf("%v round %d: batch[%d] = %d, single %d %v", mode, round, i, got[i], e, in)
				}
			}
			queried := res(b.QueryBatch([][]byte{[]byte(keys[0]), []byte("never")})).get(t)
			e, _, _ := a.QueryString(keys[0])
			if queried[0] != e || queried[1] != RecencyWindowNotInWindow {
				t.Fatalf("QueryBatch = %v", queried)
			}
			must(t, a.InsertString(keys[1]))
			must(t, b.InsertBatchStrings(keys[1:2]))
		}
		binary := [][]byte{{0, 1}, {}, {0xff}}
		for _, k := range binary {
			must(t, a.Insert(k))
		}
		must(t, b.InsertBatch(binary))
		must(t, b.InsertBatch(nil))
		if got := res(b.QueryBatch(nil)).get(t); len(got) != 0 {
			t.Fatal("empty batch")
		}
		if !bytes.Equal(res(a.Serialize()).get(t), res(b.Serialize()).get(t)) {
			t.Fatalf("%v: the batches left another window than the single calls", mode)
		}
	}
}

func TestRecencyWindowSerializeRoundTrip(t *testing.T) {
	for _, mode := range []RecencyWindowMode{RecencyWindowHistorical, RecencyWindowExact, RecencyWindowOptimalSM} {
		w := mustRecencyWindow(t, WithWindow(300), WithInvEps(2), WithMode(mode), WithSeed(9))
		for i := 0; i < 1000; i++ {
			must(t, w.InsertString(fmt.Sprintf("k-%d", i*7919%400)))
		}
		blob := res(w.Serialize()).get(t)
		c := keep(t, res(DeserializeRecencyWindow(blob)))
		if res(w.Info()).get(t) != res(c.Info()).get(t) || res(w.Stats()).get(t) != res(c.Stats()).get(t) {
			t.Fatalf("%v: Info or Stats differ after the round trip", mode)
		}
		for i := 0; i < 1100; i++ {
			k := fmt.Sprintf("k-%d", i*31%450)
			e1, in1, err1 := w.InsertReportString(k)
			e2, in2, err2 := c.InsertReportString(k)
			if e1 != e2 || in1 != in2 || err1 != nil || err2 != nil {
				t.Fatalf("%v: %s answered %d %v and %d %v", mode, k, e1, in1, e2, in2)
			}
		}
		if !bytes.Equal(res(w.Serialize()).get(t), res(c.Serialize()).get(t)) {
			t.Fatalf("%v: the copy went on otherwise", mode)
		}
		_, err := DeserializeRecencyWindow(blob, WithMaxMemory(64))
		wantStatus(t, err, ErrTooLarge)
		checkRefusedBlobs(t, envelopeCases(t, blob), DeserializeRecencyWindow, checkRecencyWindowClosed)
	}
	src := mustRecencyWindow(t, WithWindow(100), WithSeed(1))
	must(t, src.InsertString("a"))
	must(t, src.InsertString("b"))
	other := mustRecencyWindow(t, WithWindow(50), WithMode(RecencyWindowExact))
	checkBinaryMarshaler(t, src, other, func(t *testing.T, w *RecencyWindow) string {
		a, inA, _ := w.QueryString("a")
		_, inC, _ := w.QueryString("c")
		return fmt.Sprint(a, inA, inC, w.Window())
	})
}

var checkRecencyWindowClosed = everyMethodClosed[*RecencyWindow]("RecencyWindow",
	"Insert InsertString Query QueryString InsertReport InsertReportString InsertBatch InsertBatchStrings "+
		"QueryBatch QueryBatchStrings InsertReportBatch InsertReportBatchStrings Clear Info Stats Level Window "+
		"InvEps Mode Memory Serialize MarshalBinary")

func TestRecencyWindowClosed(t *testing.T) {
	w, err := NewRecencyWindow()
	must(t, err)
	must(t, w.InsertString("k"))
	w2, err := NewRecencyWindow(WithMode(RecencyWindowExact), WithWindow(10))
	must(t, err)
	checkClosedStates(t, checkRecencyWindowClosed, w, w2)
}
