package temporalfilters

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"temporalfilters.org/go/temporalfilters/internal/native"
)

// TestMain runs the suite, then checks that every native sketch and filter
// was freed and, in the sanitized build, that LeakSanitizer finds no leak in
// the C code (Go 1.19 does not run LeakSanitizer's exit-time check itself).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if n := waitFreed(0, 10*time.Second); n != 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d native sketches or filters were never freed\n", n)
			code = 1
		}
		switch native.Tf_go_leak_check() {
		case 1:
			fmt.Fprintln(os.Stderr, "FAIL: LeakSanitizer found leaks (above)")
			code = 1
		case 0:
			fmt.Println("LeakSanitizer: no leaks")
		}
	}
	os.Exit(code)
}

// waitFreed runs the collector until at most want native sketches are left
// (finalizers free the ones nobody closed) or the time is up; it returns
// how many are left.
func waitFreed(want int64, limit time.Duration) int64 {
	deadline := time.Now().Add(limit)
	for {
		n := atomic.LoadInt64(&liveObjects)
		if n <= want || time.Now().After(deadline) {
			return n
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// settleFinalizers collects the garbage of earlier tests and waits until
// the count of live native objects stops moving (their finalizers ran), at
// most about 2 s.
func settleFinalizers() {
	runtime.GC()
	last := atomic.LoadInt64(&liveObjects)
	for i := 0; i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
		n := atomic.LoadInt64(&liveObjects)
		if n == last {
			return
		}
		last = n
	}
}

func TestFinalizerFreesUnclosedSketches(t *testing.T) {
	// The sketches below are garbage as soon as the loop drops them, so a
	// collection during the loop would free some before they are counted
	// (seen once in the sanitized build: 13 live of the 51 made). No
	// collection runs until they are counted, and earlier tests' garbage is
	// collected and finalized first, so that its finalizers do not lower
	// the count either.
	settleFinalizers()
	gcPercent := debug.SetGCPercent(-1) // returns with no collection running
	defer debug.SetGCPercent(gcPercent)
	before := atomic.LoadInt64(&liveObjects)
	func() {
		for i := 0; i < 50; i++ {
			s, err := NewRecencySketch(1024, 4, WithSeed(uint32(i)), WithFlags(RecencySketchConcurrent))
			must(t, err)
			must(t, s.Update([]byte("k"), 1))
			// dropped without Close
		}
		var z RecencySketch
		blob := res(mustNew(t, 8, 1, 0, 0).Serialize()).get(t)
		must(t, z.UnmarshalBinary(blob))
		// z dropped without Close too
	}()
	if got := atomic.LoadInt64(&liveObjects); got < before+51 {
		t.Fatalf("%d live sketches, want at least %d", got, before+51)
	}
	debug.SetGCPercent(gcPercent)
	if left := waitFreed(before+1, 10*time.Second); left > before+1 { // +1: mustNew's, closed at cleanup
		t.Fatalf("the finalizers left %d sketches, want %d", left, before+1)
	}
}
