package temporalfilters

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"testing"
)

func mustRotatingCuckoo(t *testing.T, opts ...Option) *RotatingCuckoo {
	t.Helper()
	return keep(t, res(NewRotatingCuckoo(opts...)))
}

func rcContains(t *testing.T, f *RotatingCuckoo, key string, now uint64) bool {
	t.Helper()
	return res(f.ContainsString(key, now)).get(t, "Contains ", key, " at ", now)
}

// Against an exact set over a stream with repeats, the tables rotating by
// fill many times within the memory cap: a key never added is never
// reported present, AddIfAbsent answers as the set does, and while no
// table was dropped every key added is present.
func TestRotatingCuckooAgainstAnExactSet(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(256), WithSeed(5))
	exact := map[string]bool{}
	rng := rand.New(rand.NewSource(11))
	now := uint64(1)
	for i := 0; i < 20000; i++ {
		key := fmt.Sprintf("k-%d", rng.Intn(12000))
		now += uint64(rng.Intn(2))
		was := res(f.AddIfAbsentString(key, now)).get(t)
		if was != exact[key] {
			t.Fatalf("AddIfAbsent(%s) = %v, the exact set says %v", key, was, exact[key])
		}
		exact[key] = true
		if rcContains(t, f, fmt.Sprintf("absent-%d", i), now) {
			t.Fatalf("a key never added is present (absent-%d)", i)
		}
	}
	s := res(f.Stats(now)).get(t)
	if s.ForgottenMemory != 0 || s.ForgottenAge != 0 || s.Inserts != uint64(len(exact)) || s.Tables < 2 ||
		s.Tables != s.FillRotations+s.KickRotations+1 {
		t.Fatalf("Stats = %+v with %d keys", s, len(exact))
	}
	for k := range exact {
		if !rcContains(t, f, k, now) {
			t.Fatalf("%s was added and is absent", k)
		}
	}
}

func TestRotatingCuckooBasics(t *testing.T) {
	f := mustRotatingCuckoo(t)
	if info := res(f.Info()).get(t); info != (RotatingCuckooInfo{TableSlots: 16384, MaxMemory: 64 << 20,
		MaxOccupancy: 0.92, SlotsPerBucket: 4, MaxKicks: 500, MaxTables: 64, Ways: 2}) {
		t.Fatalf("defaults: %+v", info)
	}
	if f.TableSlots() != 16384 || f.TTL() != 0 || f.MaxMemory() != 64<<20 {
		t.Fatalf("getters %d %d %d", f.TableSlots(), f.TTL(), f.MaxMemory())
	}
	if got := f.String(); got != "RotatingCuckoo(16384 slots x 4, 2 ways, ttl 0, seed 0)" {
		t.Fatalf("String = %q", got)
	}
	// de-duplication, binary and empty keys
	for i, c := range []struct {
		key  []byte
		want bool
	}{{[]byte("e1"), false}, {[]byte("e1"), true}, {[]byte{0, 1, 0}, false}, {[]byte{0, 1, 0}, true},
		{nil, false}, {[]byte{}, true}} {
		if got := res(f.AddIfAbsent(c.key, 10+uint64(i))).get(t); got != c.want {
			t.Fatalf("AddIfAbsent(%q) = %v, want %v", c.key, got, c.want)
		}
	}
	// remove, then re-add
	if removed := res(f.RemoveString("never", 20)).get(t); removed {
		t.Fatal("removing a key never added removed something")
	}
	must(t, f.AddString("k", 20))
	if !res(f.RemoveString("k", 21)).get(t) || rcContains(t, f, "k", 21) || res(f.Remove([]byte("k"), 21)).get(t) {
		t.Fatal("remove")
	}
	if res(f.AddIfAbsentString("k", 22)).get(t) || !rcContains(t, f, "k", 22) {
		t.Fatal("re-add")
	}
	s := res(f.Stats(22)).get(t)
	if s.Inserts != 5 || s.Removes != 1 || s.Items != 4 || s.Tables != 1 || s.LiveTables != 1 {
		t.Fatalf("Stats = %+v", s)
	}
	if m := res(f.Memory()).get(t); m != s.Memory {
		t.Fatalf("Memory %d, Stats.Memory %d", m, s.Memory)
	}
	tab := res(f.Table(0, 22)).get(t)
	if tab.Slots != 16384 || tab.Items != 4 || tab.Last != 22 || tab.Expired {
		t.Fatalf("Table(0) = %+v", tab)
	}
	must(t, f.Clear())
	if rcContains(t, f, "k", 22) || res(f.Stats(22)).get(t).Inserts != 0 {
		t.Fatal("Clear")
	}
}

func TestRotatingCuckooOptions(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(1024), WithMaxMemory(1<<20), WithTTL(500), WithMaxOccupancy(0.5),
		WithSlotsPerBucket(8), WithMaxKicks(100), WithMaxTables(7), WithSeed(math.MaxUint32),
		WithFlags(RotatingCuckooThreeWay))
	want := RotatingCuckooInfo{TableSlots: 1024, MaxMemory: 1 << 20, TTL: 500, MaxOccupancy: 0.5, SlotsPerBucket: 8,
		MaxKicks: 100, MaxTables: 7, Seed: math.MaxUint32, Flags: RotatingCuckooThreeWay, Ways: 3}
	if info := res(f.Info()).get(t); info != want {
		t.Fatalf("Info = %+v, want %+v", info, want)
	}
	if f.TTL() != 500 || f.MaxMemory() != 1<<20 || f.TableSlots() != 1024 {
		t.Fatal("getters")
	}
	// the seed's one-slot layout
	g := mustRotatingCuckoo(t, WithTableSlots(16), WithSlotsPerBucket(1))
	if res(g.Info()).get(t).MaxOccupancy != 0.45 {
		t.Fatal("one slot: the default occupancy")
	}
	for i := 0; i < 100; i++ {
		must(t, g.AddString(fmt.Sprintf("k%d", i), uint64(1+i)))
	}
	for i := 0; i < 100; i++ {
		if !rcContains(t, g, fmt.Sprintf("k%d", i), 100) {
			t.Fatalf("k%d", i)
		}
	}
}

func TestRotatingCuckooBadOptions(t *testing.T) {
	for _, c := range []struct {
		what string
		opts []Option
		want error
	}{
		{"0 slots", []Option{WithTableSlots(0)}, StatusInvalidArgument},
		{"slots not a power of two", []Option{WithTableSlots(1000)}, StatusInvalidArgument},
		{"slots below 2 buckets", []Option{WithTableSlots(4)}, StatusInvalidArgument},
		{"slots above 2^36", []Option{WithTableSlots(1 << 37)}, ErrTooLarge},
		{"a first table over the cap", []Option{WithTableSlots(1 << 20), WithMaxMemory(1 << 20)}, ErrTooLarge},
		{"3 slots per bucket", []Option{WithSlotsPerBucket(3)}, StatusInvalidArgument},
		{"occupancy above 1", []Option{WithMaxOccupancy(1.5)}, StatusInvalidArgument},
		{"occupancy NaN", []Option{WithMaxOccupancy(math.NaN())}, StatusInvalidArgument},
		{"0 kicks", []Option{WithMaxKicks(0)}, StatusInvalidArgument},
		{"too many kicks", []Option{WithMaxKicks(RotatingCuckooMaxKicks + 1)}, StatusInvalidArgument},
		{"0 tables", []Option{WithMaxTables(0)}, StatusInvalidArgument},
		{"too many tables", []Option{WithMaxTables(RotatingCuckooMaxTables + 1)}, StatusInvalidArgument},
		{"an unknown flag", []Option{WithFlags(RotatingCuckooFlags(4))}, StatusInvalidArgument},
	} {
		f, err := NewRotatingCuckoo(c.opts...)
		wantRefused(t, c.what, f, err, c.want)
	}
}

// Zero times and NULL-like inputs are refused, and nothing changes.
func TestRotatingCuckooBadInput(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(64))
	must(t, f.AddString("k", 5))
	before := res(f.Serialize()).get(t)
	_, err := f.ContainsString("k", 0)
	wantStatus(t, err, StatusInvalidArgument)
	wantStatus(t, f.AddString("k2", 0), StatusInvalidArgument)
	_, err = f.RemoveString("k", 0)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = f.AddIfAbsentString("k2", 0)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = f.AddIfAbsentBatchStrings([]string{"k2"}, 0)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = f.ContainsBatch([][]byte{[]byte("k")}, 0)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = f.Stats(0)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = f.Table(1, 5) // one table: 0
	wantStatus(t, err, StatusInvalidArgument)
	_, err = f.Table(0, 0)
	wantStatus(t, err, StatusInvalidArgument)
	if after := res(f.Serialize()).get(t); !bytes.Equal(before, after) {
		t.Fatal("a refused call changed the filter")
	}
}

func TestRotatingCuckooBatches(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(64), WithSeed(3))
	g := mustRotatingCuckoo(t, WithTableSlots(64), WithSeed(3))
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("b-%d", i%200) // repeats within the batch
	}
	got := res(f.AddIfAbsentBatchStrings(keys, 100)).get(t)
	for i, k := range keys {
		if single := res(g.AddIfAbsentString(k, 100)).get(t); got[i] != single || got[i] != (i >= 200) {
			t.Fatalf("batch[%d] (%s) = %v, single %v", i, k, got[i], single)
		}
	}
	if !bytes.Equal(res(f.Serialize()).get(t), res(g.Serialize()).get(t)) {
		t.Fatal("the batch left another filter than the single calls")
	}
	present := res(f.ContainsBatchStrings([]string{"b-0", "nope", "b-199", "b-200"}, 100)).get(t)
	if fmt.Sprint(present) != "[true false true false]" {
		t.Fatalf("ContainsBatch = %v", present)
	}
	binary := [][]byte{{0}, {0, 0}, {}}
	if a := res(f.AddIfAbsentBatch(binary, 101)).get(t); fmt.Sprint(a) != "[false false false]" {
		t.Fatalf("AddIfAbsentBatch = %v", a)
	}
	if a := res(f.ContainsBatch(binary, 101)).get(t); fmt.Sprint(a) != "[true true true]" {
		t.Fatalf("ContainsBatch = %v", a)
	}
	if a := res(f.ContainsBatch(nil, 101)).get(t); len(a) != 0 {
		t.Fatal("empty batch")
	}
}

// A key added at t is present until t + TTL, then its table goes (counted);
// a clock going backwards is clamped.
func TestRotatingCuckooTTL(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(64), WithTTL(100))
	must(t, f.AddString("old", 1000))
	must(t, f.AddString("x", 900)) // clamped to 1000
	if !rcContains(t, f, "old", 1100) || !rcContains(t, f, "x", 1100) {
		t.Fatal("absent before t + ttl")
	}
	if rcContains(t, f, "old", 1101) || rcContains(t, f, "x", 1101) {
		t.Fatal("present after t + ttl")
	}
	must(t, f.AddString("new", 1200))
	if s := res(f.Stats(1200)).get(t); s.ForgottenAge != 2 || s.ForgottenMemory != 0 {
		t.Fatalf("Stats = %+v", s)
	}
	if !rcContains(t, f, "new", 1300) || rcContains(t, f, "old", 1300) {
		t.Fatal("after the drop")
	}
}

// The table limit drops the oldest table and counts its keys.
func TestRotatingCuckooForgetsTheOldestCounted(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(64), WithMaxTables(2))
	for i := 0; i < 1000; i++ {
		if res(f.AddIfAbsentString(fmt.Sprintf("m-%d", i), uint64(1+i))).get(t) {
			t.Fatalf("m-%d present before it was added", i)
		}
	}
	s := res(f.Stats(1000)).get(t)
	if s.Tables != 2 || s.ForgottenMemory == 0 || s.Inserts != 1000 || s.Items != 1000-s.ForgottenMemory {
		t.Fatalf("Stats = %+v", s)
	}
}

func TestRotatingCuckooSerializeRoundTrip(t *testing.T) {
	f := mustRotatingCuckoo(t, WithTableSlots(32), WithTTL(5000), WithSeed(123))
	for i := 0; i < 500; i++ {
		_, err := f.AddIfAbsentString(fmt.Sprintf("key-%d", i), uint64(1+i))
		must(t, err)
	}
	must(t, f.Add([]byte{0, 1, 0}, 500))
	blob := res(f.Serialize()).get(t)
	g := keep(t, res(DeserializeRotatingCuckoo(blob)))
	if res(f.Info()).get(t) != res(g.Info()).get(t) || res(f.Stats(500)).get(t) != res(g.Stats(500)).get(t) {
		t.Fatal("Info or Stats differ after the round trip")
	}
	if g.TTL() != 5000 || g.TableSlots() != 32 {
		t.Fatal("getters of the deserialized filter")
	}
	for i := uint64(0); i < res(f.Stats(500)).get(t).Tables; i++ {
		if res(f.Table(i, 500)).get(t) != res(g.Table(i, 500)).get(t) {
			t.Fatalf("table %d differs", i)
		}
	}
	for i := 0; i < 600; i++ {
		k := fmt.Sprintf("key-%d", i)
		if rcContains(t, f, k, 500) != rcContains(t, g, k, 500) {
			t.Fatalf("%s differs", k)
		}
	}
	if !bytes.Equal(blob, res(g.Serialize()).get(t)) {
		t.Fatal("the blob read back serializes to other bytes")
	}
	var h RotatingCuckoo
	must(t, h.UnmarshalBinary(blob))
	defer h.Close()
	if h.TTL() != 5000 || !rcContains(t, &h, "key-499", 500) {
		t.Fatal("UnmarshalBinary")
	}
}

var checkRotatingCuckooClosed = everyMethodClosed[*RotatingCuckoo]("RotatingCuckoo",
	"Add AddString Contains ContainsString Remove RemoveString AddIfAbsent AddIfAbsentString ContainsBatch "+
		"ContainsBatchStrings AddIfAbsentBatch AddIfAbsentBatchStrings Clear Stats Table Info TableSlots TTL "+
		"MaxMemory Memory Serialize MarshalBinary")

func TestRotatingCuckooClosed(t *testing.T) {
	f, err := NewRotatingCuckoo()
	must(t, err)
	must(t, f.AddString("k", 5))
	f2, err := NewRotatingCuckoo(WithTTL(10))
	must(t, err)
	checkClosedStates(t, checkRotatingCuckooClosed, f, f2)
}

func TestRotatingCuckooDeserializeErrors(t *testing.T) {
	checkRefusedBlobs(t, envelopeCases(t, readGoldenBlob(t, "rotating_cuckoo_v1")), DeserializeRotatingCuckoo,
		checkRotatingCuckooClosed)
}
