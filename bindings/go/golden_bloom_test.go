package temporalfilters

import (
	"bytes"
	"fmt"
	"testing"
)

// The golden Bloom filter blobs of tests/data (age_bloom_v1.tfb,
// age_bloom_blocked_v1.tfb, time_bloom_v1.tfb) and their .expected answers,
// written by the C library (tests/make_golden.c) from the operations of
// tests/util/golden.h (golden_age_bloom(0), golden_age_bloom(TF_AGE_BLOOM_BLOCKED),
// golden_time_bloom(0)). As for the recency sketches, this
// suite (a) reads both blobs and gets every listed answer, and (b) replays
// the same operations through this package and gets the blobs byte for
// byte. Nothing here is hard-coded from the files: they may be regenerated
// (a hashing change), and then these tests follow them.

// goldenBloomAnswer is one line of a Bloom filter's .expected file:
// "<key hex> <0|1>" (age) or "<key hex> <now> <0|1>" (time).
type goldenBloomAnswer struct {
	key     []byte
	now     uint64 // 0 for the count-window filter
	present bool
}

func readBloomExpected(t *testing.T, name string, withNow bool) []goldenBloomAnswer {
	t.Helper()
	form := "<hex key> <0|1>"
	if withNow {
		form = "<hex key> <now> <0|1>"
	}
	var out []goldenBloomAnswer
	for _, l := range readExpectedLines(t, name, form) {
		a := goldenBloomAnswer{key: l.key(), present: l.bit(len(l.fields) - 1)}
		if withNow {
			a.now = l.uint(1)
		}
		out = append(out, a)
	}
	return out
}

// checkGoldenAnswers wants both answers among the list and the binary key
// with NUL bytes in it: a file that cannot tell a broken filter from a
// working one proves nothing.
func checkGoldenAnswers(t *testing.T, name string, answers []goldenBloomAnswer, wantLines int) {
	t.Helper()
	if len(answers) != wantLines {
		t.Fatalf("%s.expected: %d answers, want %d", name, len(answers), wantLines)
	}
	present, binaryKey := 0, false
	for _, a := range answers {
		if a.present {
			present++
		}
		binaryKey = binaryKey || bytes.Equal(a.key, goldenBinaryKey)
	}
	if present == 0 || present == len(answers) || !binaryKey {
		t.Fatalf("%s.expected: %d of %d present, binary key listed: %v; want both answers and the binary key",
			name, present, len(answers), binaryKey)
	}
}

func goldenKeyBytes(i int) []byte {
	return []byte(fmt.Sprintf("key-%d", i))
}

// buildGoldenAgeBloom replays golden_age_bloom(flags) of tests/util/golden.h:
// flags 0, or TF_AGE_BLOOM_BLOCKED when blocked (the same operations on the
// blocked layout).
func buildGoldenAgeBloom(t *testing.T, blocked bool) *AgeBloom {
	t.Helper()
	var f *AgeBloom
	if blocked {
		f = mustBlockedAgeBloom(t, 3, 4, 200, 42)
	} else {
		f = mustAgeBloom(t, 3, 4, 200, 42)
	}
	for i := 0; i < 300; i++ {
		must(t, f.Add(goldenKeyBytes(i)))
	}
	for i := 290; i < 320; i++ {
		if _, err := f.AddIfAbsentString(fmt.Sprintf("key-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	must(t, f.Add(goldenBinaryKey))
	return f
}

// buildGoldenTimeBloom replays golden_time_bloom(0) of tests/util/golden.h.
func buildGoldenTimeBloom(t *testing.T) *TimeBloom {
	t.Helper()
	f := mustTimeBloom(t, 3, 4, 128, 1000, 42)
	for i := 0; i < 245; i++ {
		now := uint64(1000 + 10*i)
		if i >= 240 {
			now = 2500 // a clock that went backwards: clamped to 3000
		} else if i >= 200 {
			now = 3000 // a burst at one timestamp
		}
		must(t, f.Add(goldenKeyBytes(i), now))
	}
	for j := 0; j < 10; j++ {
		i := 240 + j
		if j < 5 {
			i = 195 + j
		}
		if _, err := f.AddIfAbsent(goldenKeyBytes(i), 3000); err != nil {
			t.Fatal(err)
		}
	}
	must(t, f.Add(goldenBinaryKey, 3000))
	return f
}

// goldenAgeBlooms are the two golden count-window filters: the same
// operations on each layout (tests/util/golden.h).
var goldenAgeBlooms = []struct {
	name    string
	blocked bool
	info    AgeBloomInfo
}{
	{"age_bloom_v1", false, AgeBloomInfo{K: 3, L: 4, SliceBits: 200, Generation: 46, Capacity: 184, Seed: 42}},
	// slices of 200 bits rounded up to 224, generation floor(224 ln 2 / 3)
	{"age_bloom_blocked_v1", true,
		AgeBloomInfo{K: 3, L: 4, SliceBits: 224, Generation: 51, Capacity: 204, Seed: 42, Flags: AgeBloomBlocked}},
}

func TestGoldenAgeBloomRead(t *testing.T) {
	for _, c := range goldenAgeBlooms {
		t.Run(c.name, func(t *testing.T) {
			blob := readGoldenBlob(t, c.name)
			answers := readBloomExpected(t, c.name, false)
			checkGoldenAnswers(t, c.name, answers, 350+1) // GOLDEN_AB_KEYS string keys and the binary key
			f := keep(t, res(DeserializeAgeBloom(blob)))
			info := res(f.Info()).get(t)
			if info != c.info {
				t.Fatalf("Info = %+v, want %+v", info, c.info)
			}
			if blocked := info.Flags&AgeBloomBlocked != 0; blocked != c.blocked {
				t.Fatalf("blocked layout = %v; want %v", blocked, c.blocked)
			}
			for _, a := range answers {
				got, err := f.Contains(a.key)
				must(t, err)
				if got != a.present {
					t.Errorf("Contains(%q) = %v, want %v", a.key, got, a.present)
				}
			}
			// The string form asks the same question.
			for _, a := range answers[:20] {
				if got, err := f.ContainsString(string(a.key)); err != nil || got != a.present {
					t.Errorf("ContainsString(%q) = %v, %v; want %v", a.key, got, err, a.present)
				}
			}
			// The last window is all there, whatever the hashing: of at
			// most 321 inserts (key-0 .. key-299, at most 20 of key-300 ..
			// key-319, the binary key), the last Capacity hold key-(321 -
			// Capacity) .. key-299.
			for i := 321 - int(c.info.Capacity); i < 300; i++ {
				if got, err := f.Contains(goldenKeyBytes(i)); err != nil || !got {
					t.Errorf("key-%d of the last window: Contains = %v, %v", i, got, err)
				}
				if !answers[i].present || !bytes.Equal(answers[i].key, goldenKeyBytes(i)) {
					t.Errorf("%s.expected: line of key-%d is %q %v; want it present", c.name, i, answers[i].key,
						answers[i].present)
				}
			}
			again, err := f.Serialize()
			must(t, err)
			if !bytes.Equal(again, blob) {
				t.Error("the deserialized golden filter serializes to other bytes")
			}
		})
	}
}

func TestGoldenTimeBloomRead(t *testing.T) {
	const name = "time_bloom_v1"
	blob := readGoldenBlob(t, name)
	answers := readBloomExpected(t, name, true)
	checkGoldenAnswers(t, name, answers, 2*(260+1)) // two times x (GOLDEN_TB_KEYS + the binary key)
	times := map[uint64]int{}
	for _, a := range answers {
		times[a.now]++
	}
	if len(times) != 2 || times[3000] != 261 || times[3400] != 261 {
		t.Fatalf("time_bloom_v1.expected: answers per time %v, want 261 at 3000 and at 3400", times)
	}
	f := keep(t, res(DeserializeTimeBloom(blob)))
	info := res(f.Info()).get(t)
	if want := (TimeBloomInfo{K: 3, L: 4, Span: 1000, Seed: 42}); info != want {
		t.Fatalf("Info = %+v, want %+v", info, want)
	}
	for _, a := range answers {
		got, err := f.Contains(a.key, a.now)
		must(t, err)
		if got != a.present {
			t.Errorf("Contains(%q, %d) = %v, want %v", a.key, a.now, got, a.present)
		}
	}
	for _, a := range answers[:20] {
		if got, err := f.ContainsString(string(a.key), a.now); err != nil || got != a.present {
			t.Errorf("ContainsString(%q, %d) = %v, %v; want %v", a.key, a.now, got, err, a.present)
		}
	}
	// Within the span, whatever the hashing: at 3000 every key added at
	// 2000 or later (key-100 on) and the burst; the binary key at both times.
	for i := 100; i < 245; i++ {
		if got, err := f.Contains(goldenKeyBytes(i), 3000); err != nil || !got {
			t.Errorf("key-%d at 3000: Contains = %v, %v", i, got, err)
		}
	}
	for _, now := range []uint64{3000, 3400, 4000} {
		if got, err := f.Contains(goldenBinaryKey, now); err != nil || !got {
			t.Errorf("the binary key at %d: Contains = %v, %v", now, got, err)
		}
	}
	again, err := f.Serialize()
	must(t, err)
	if !bytes.Equal(again, blob) {
		t.Error("the deserialized golden filter serializes to other bytes")
	}
}

func TestGoldenAgeBloomWrite(t *testing.T) {
	for _, c := range goldenAgeBlooms {
		t.Run(c.name, func(t *testing.T) {
			f := buildGoldenAgeBloom(t, c.blocked)
			if info, err := f.Info(); err != nil || info != c.info {
				t.Fatalf("rebuilt filter: Info = %+v, %v; want %+v", info, err, c.info)
			}
			checkGoldenBytes(t, f, c.name)
			// and the rebuilt filter gives the recorded answers itself
			for _, a := range readBloomExpected(t, c.name, false) {
				if p, err := f.Contains(a.key); err != nil || p != a.present {
					t.Fatalf("rebuilt filter: Contains(%q) = %v, %v; want %v", a.key, p, err, a.present)
				}
			}
		})
	}
}

func TestGoldenTimeBloomWrite(t *testing.T) {
	f := buildGoldenTimeBloom(t)
	checkGoldenBytes(t, f, "time_bloom_v1")
	for _, a := range readBloomExpected(t, "time_bloom_v1", true) {
		if p, err := f.Contains(a.key, a.now); err != nil || p != a.present {
			t.Fatalf("rebuilt filter: Contains(%q, %d) = %v, %v; want %v", a.key, a.now, p, err, a.present)
		}
	}
}
