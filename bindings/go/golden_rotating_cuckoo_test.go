package temporalfilters

import (
	"bytes"
	"testing"
)

// The golden rotating cuckoo filter blobs of tests/data
// (rotating_cuckoo_v1.tfb, rotating_cuckoo_three_way_v1.tfb) and their
// .expected answers, written by the C library (tests/make_golden.c) from
// golden_rotating_cuckoo(flags) of tests/util/golden.h. This suite reads
// both blobs and gets every listed answer, and replays the same operations
// through this package and gets the blobs byte for byte.

// buildGoldenRotatingCuckoo replays golden_rotating_cuckoo(flags).
func buildGoldenRotatingCuckoo(t *testing.T, flags RotatingCuckooFlags) *RotatingCuckoo {
	t.Helper()
	f := mustRotatingCuckoo(t, WithTableSlots(16), WithTTL(2000), WithMaxTables(4), WithSeed(42), WithFlags(flags))
	for i := 0; i < 80; i++ {
		_, err := f.AddIfAbsent(goldenKeyBytes(i), 1000+10*uint64(i))
		must(t, err)
	}
	for i := 0; i < 80; i += 7 {
		_, err := f.Remove(goldenKeyBytes(i), 1800)
		must(t, err)
	}
	for i := 75; i < 85; i++ {
		must(t, f.Add(goldenKeyBytes(i), 1500))
	}
	must(t, f.Add(goldenBinaryKey, 1800))
	return f
}

var goldenRotatingCuckoos = []struct {
	name  string
	flags RotatingCuckooFlags
	ways  uint32
}{
	{"rotating_cuckoo_v1", 0, 2},
	{"rotating_cuckoo_three_way_v1", RotatingCuckooThreeWay, 3},
}

func TestGoldenRotatingCuckooRead(t *testing.T) {
	for _, c := range goldenRotatingCuckoos {
		t.Run(c.name, func(t *testing.T) {
			blob := readGoldenBlob(t, c.name)
			answers := readBloomExpected(t, c.name, true)
			checkGoldenAnswers(t, c.name, answers, 2*(90+1)) // two times x (GOLDEN_RC_KEYS + the binary key)
			times := map[uint64]int{}
			for _, a := range answers {
				times[a.now]++
			}
			if len(times) != 2 || times[1800] != 91 || times[3600] != 91 {
				t.Fatalf("answers per time %v, want 91 at 1800 and at 3600", times)
			}
			// removed keys are absent, the last adds present, keys never
			// added absent, whatever the hashing
			if answers[0].present || !answers[84].present || !answers[90].present {
				t.Fatalf("key-0 %v, key-84 %v, binary key %v", answers[0].present, answers[84].present,
					answers[90].present)
			}
			for i := 85; i < 90; i++ {
				if answers[i].present {
					t.Fatalf("key-%d was never added and is listed present", i)
				}
			}
			f := keep(t, res(DeserializeRotatingCuckoo(blob)))
			info := res(f.Info()).get(t)
			if info.TableSlots != 16 || info.TTL != 2000 || info.MaxTables != 4 || info.Seed != 42 ||
				info.Flags != c.flags || info.Ways != c.ways {
				t.Fatalf("Info = %+v", info)
			}
			for _, a := range answers {
				got, err := f.Contains(a.key, a.now)
				must(t, err)
				if got != a.present {
					t.Errorf("Contains(%q, %d) = %v, want %v", a.key, a.now, got, a.present)
				}
			}
			if !bytes.Equal(res(f.Serialize()).get(t), blob) {
				t.Error("the deserialized golden filter serializes to other bytes")
			}
		})
	}
}

func TestGoldenRotatingCuckooWrite(t *testing.T) {
	for _, c := range goldenRotatingCuckoos {
		t.Run(c.name, func(t *testing.T) {
			checkGoldenBytes(t, buildGoldenRotatingCuckoo(t, c.flags), c.name)
		})
	}
}
