package temporalfilters

import (
	"bytes"
	"testing"
)

// The golden recency window blobs of tests/data (recency_window_v1.tfb,
// recency_window_approx_v1.tfb, recency_window_exact_v1.tfb,
// recency_window_optimal_sm_v1.tfb) and their .expected answers, written by
// the C library (tests/make_golden.c) from golden_recency_window(flags) of
// tests/util/golden.h. This suite reads every blob and gets every listed
// answer (one by one and in a batch), and replays the same operations
// through this package and gets the blobs byte for byte.

var goldenRecencyWindows = []struct {
	name  string
	mode  RecencyWindowMode
	delta float64
}{
	{"recency_window_v1", RecencyWindowHistorical, 0},
	{"recency_window_approx_v1", RecencyWindowHistorical, 0.01},
	{"recency_window_exact_v1", RecencyWindowExact, 0},
	{"recency_window_optimal_sm_v1", RecencyWindowOptimalSM, 0},
}

// buildGoldenRecencyWindow replays golden_recency_window(flags): window 64,
// inv_eps 4, seed 42, the mode (and delta); "key-i" inserted for i = 0 ..
// 99, then InsertReport of "key-i" for i = 0, 5, .. 95, then the binary key
// inserted. batch: the same operations through the batch calls.
func buildGoldenRecencyWindow(t *testing.T, mode RecencyWindowMode, delta float64, batch bool) *RecencyWindow {
	t.Helper()
	opts := []Option{WithWindow(64), WithInvEps(4), WithSeed(42), WithMode(mode)}
	if delta != 0 {
		opts = append(opts, WithDelta(delta))
	}
	w := mustRecencyWindow(t, opts...)
	var first, again [][]byte
	for i := 0; i < 100; i++ {
		first = append(first, goldenKeyBytes(i))
	}
	for i := 0; i < 100; i += 5 {
		again = append(again, goldenKeyBytes(i))
	}
	if batch {
		must(t, w.InsertBatch(first))
		res(w.InsertReportBatch(again)).get(t)
		must(t, w.InsertBatch([][]byte{goldenBinaryKey}))
		return w
	}
	for _, k := range first {
		must(t, w.Insert(k))
	}
	for _, k := range again {
		_, _, err := w.InsertReport(k)
		must(t, err)
	}
	must(t, w.Insert(goldenBinaryKey))
	return w
}

func TestGoldenRecencyWindowRead(t *testing.T) {
	for _, c := range goldenRecencyWindows {
		t.Run(c.name, func(t *testing.T) {
			blob := readGoldenBlob(t, c.name)
			answers := readAnswers(t, c.name, "<hex key> <recency>", func(l expectedLine) uint64 { return l.uint(1) })
			// GOLDEN_RW_KEYS string keys (key-100 .. key-109 never inserted)
			// and the binary key, inserted last
			if len(answers) != 111 {
				t.Fatalf("%s.expected: %d answers, want 111", c.name, len(answers))
			}
			if !bytes.Equal(answers[110].key, goldenBinaryKey) || answers[110].want != 0 {
				t.Fatalf("the binary key: %x %d", answers[110].key, answers[110].want)
			}
			in := 0
			for i, a := range answers[:110] {
				if a.want != RecencyWindowNotInWindow {
					in++
				} else if i < 100 && i%5 == 0 {
					t.Fatalf("key-%d was inserted again at most 21 inserts ago and is listed out of the window", i)
				}
			}
			for _, a := range answers[100:110] {
				if a.want != RecencyWindowNotInWindow {
					t.Fatalf("%s was never inserted and is listed in the window", a.key)
				}
			}
			if c.mode == RecencyWindowExact && answers[0].want != 20 {
				t.Fatalf("key-0, inserted again 20 inserts before the last: listed %d in exact mode", answers[0].want)
			}
			if in < 20 || in > 100 {
				t.Fatalf("%d keys listed in the window", in)
			}
			w := keep(t, res(DeserializeRecencyWindow(blob)))
			info := res(w.Info()).get(t)
			if info.Window != 64 || info.InvEps != 4 || info.Seed != 42 || info.Mode != c.mode || info.Delta != c.delta {
				t.Fatalf("Info = %+v", info)
			}
			keys := make([][]byte, len(answers))
			for i, a := range answers {
				keys[i] = a.key
				got, ok, err := w.Query(a.key)
				must(t, err)
				if (ok && got != a.want) || (!ok && a.want != RecencyWindowNotInWindow) {
					t.Errorf("Query(%q) = %d %v, want %d", a.key, got, ok, a.want)
				}
			}
			batch := res(w.QueryBatch(keys)).get(t)
			for i, a := range answers {
				if batch[i] != a.want {
					t.Errorf("QueryBatch[%d] (%q) = %d, want %d", i, a.key, batch[i], a.want)
				}
			}
			if !bytes.Equal(res(w.Serialize()).get(t), blob) {
				t.Error("the deserialized golden window serializes to other bytes")
			}
		})
	}
}

func TestGoldenRecencyWindowWrite(t *testing.T) {
	for _, c := range goldenRecencyWindows {
		t.Run(c.name, func(t *testing.T) {
			checkGoldenBytes(t, buildGoldenRecencyWindow(t, c.mode, c.delta, false), c.name)
			checkGoldenBytes(t, buildGoldenRecencyWindow(t, c.mode, c.delta, true), c.name)
		})
	}
}
