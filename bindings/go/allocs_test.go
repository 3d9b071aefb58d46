//go:build !asan

// Allocation counts are the plain (and race) build's: under go -asan, which
// the sanitized build uses, the compiler instruments memory accesses and
// keeps other values on the heap (the string forms below measured 1
// allocation a call there), so these tests are left out of that build by
// its build tag.

package temporalfilters

import "testing"

// A single-key call allocates nothing on Go's heap: its key reaches C as an
// address and a length (internal/bridge.Key), so cgo has no pointer
// argument to move to the heap. (Pace, Acquire and Peek still pass Go
// pointers for their outputs, and allocate once per call.)
func TestSingleKeyCallsDoNotAllocate(t *testing.T) {
	key := []byte("a key of sixteen")
	const skey = "a string key"
	var now uint64 = 1
	tick := func() uint64 { now++; return now }

	s, err := NewRecencySketch(1<<10, 4)
	must(t, err)
	defer s.Close()
	ab, err := NewAgeBloomFor(1000, 0.01)
	must(t, err)
	defer ab.Close()
	tb, err := NewTimeBloomFor(1000, 0.01, 100)
	must(t, err)
	defer tb.Close()
	rc, err := NewRotatingCuckoo()
	must(t, err)
	defer rc.Close()
	rw, err := NewRecencyWindow()
	must(t, err)
	defer rw.Close()
	rl, err := NewRateLimiter(10, 100, 10)
	must(t, err)
	defer rl.Close()

	calls := []struct {
		name string
		f    func()
	}{
		{"RecencySketch.Update", func() { must(t, s.Update(key, tick())) }},
		{"RecencySketch.UpdateString", func() { must(t, s.UpdateString(skey, tick())) }},
		{"RecencySketch.Query", func() { _, err := s.Query(key); must(t, err) }},
		{"RecencySketch.TTLInsert", func() { must(t, s.TTLInsert(key, tick(), 10)) }},
		{"RecencySketch.TTLMaybeLive", func() { _, err := s.TTLMaybeLive(key, now); must(t, err) }},
		{"AgeBloom.Add", func() { must(t, ab.Add(key)) }},
		{"AgeBloom.Contains", func() { _, err := ab.Contains(key); must(t, err) }},
		{"AgeBloom.AddIfAbsentString", func() { _, err := ab.AddIfAbsentString(skey); must(t, err) }},
		{"TimeBloom.Add", func() { must(t, tb.Add(key, tick())) }},
		{"TimeBloom.Contains", func() { _, err := tb.Contains(key, now); must(t, err) }},
		{"TimeBloom.AddIfAbsent", func() { _, err := tb.AddIfAbsent(key, tick()); must(t, err) }},
		{"RotatingCuckoo.Add", func() { must(t, rc.Add(key, tick())) }},
		{"RotatingCuckoo.Contains", func() { _, err := rc.Contains(key, now); must(t, err) }},
		{"RotatingCuckoo.AddIfAbsent", func() { _, err := rc.AddIfAbsent(key, tick()); must(t, err) }},
		{"RotatingCuckoo.Remove", func() { _, err := rc.Remove(key, now); must(t, err) }},
		{"RecencyWindow.Insert", func() { must(t, rw.Insert(key)) }},
		{"RecencyWindow.Query", func() { _, _, err := rw.Query(key); must(t, err) }},
		{"RecencyWindow.InsertReport", func() { _, _, err := rw.InsertReport(key); must(t, err) }},
		{"RateLimiter.Refund", func() { must(t, rl.Refund(key, tick(), 1)) }},
		{"RateLimiter.Reset", func() { must(t, rl.Reset(key)) }},
		{"RateLimiter.SetKeyLimit", func() { must(t, rl.SetKeyLimit(key, 5)) }},
		// the string forms
		{"RecencySketch.QueryString", func() { _, err := s.QueryString(skey); must(t, err) }},
		{"AgeBloom.ContainsString", func() { _, err := ab.ContainsString(skey); must(t, err) }},
		{"TimeBloom.AddIfAbsentString", func() { _, err := tb.AddIfAbsentString(skey, tick()); must(t, err) }},
		{"RotatingCuckoo.ContainsString", func() { _, err := rc.ContainsString(skey, now); must(t, err) }},
		{"RecencyWindow.InsertReportString", func() { _, _, err := rw.InsertReportString(skey); must(t, err) }},
		{"RateLimiter.ResetString", func() { must(t, rl.ResetString(skey)) }},
	}
	for _, c := range calls {
		c.f() // warm: any one-time allocation is not the call's
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.name, n)
		}
	}
}

// The other half of what makes passing a key's address safe: a key that
// would have lived on the caller's stack is moved to the heap (one
// allocation, the array itself), because a goroutine's stack moves when it
// grows, and the address must stay valid until the C call returns
// (internal/bridge.Key makes its argument escape). Were the key left on
// the stack, this call would allocate nothing.
func TestStackKeyIsMovedToTheHeap(t *testing.T) {
	s, err := NewRecencySketch(1<<10, 4)
	must(t, err)
	defer s.Close()
	var now uint64
	n := testing.AllocsPerRun(100, func() {
		var a [8]byte
		a[0] = byte(now)
		now++
		if err := s.Update(a[:], now); err != nil {
			t.Fatal(err)
		}
	})
	if n != 1 {
		t.Errorf("a key in a local array: %v allocations per call, want 1 (the array moved to the heap)", n)
	}
}
