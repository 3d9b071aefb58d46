// Command cache_admission admits an object into a cache only when it was
// asked for within the last K requests, with the recency window of
// libtemporalfilters, through the Go binding.
//
// A CDN node sees a request trace where a few objects are popular and most
// are asked for once ("one-hit wonders"). Admitting every miss fills the
// cache with objects never asked for again. The rule here admits an object
// on a miss only when it was requested within the last K requests before
// this one: InsertReportBatchStrings answers, for every request of a batch,
// the object's previous recency (requests since its last request) and
// records the request, in a few bytes per request of the window.
//
// The answer e is within (1 + eps) of the true recency r: e <= r <= (1 +
// eps) e. So an object asked for within the last K requests is always
// admitted (e <= r < K), and one last asked for r >= K requests ago only
// when r < (1 + eps) K. The program replays a synthetic trace (a Zipf-like
// catalogue and a stream of one-hit wonders) in batches of 64 requests,
// applies the rule with the window and with an exact record side by side,
// saves and restores the window halfway (MarshalBinary, UnmarshalBinary)
// as a restarted node would, and exits with status 1 if the window ever
// refused an object the exact rule admits or admitted one asked for
// (1 + eps) K or more requests ago.
//
// Build and run it from a Meson build directory (-Dexamples=true, the
// default):
//
//	ninja -C build go-examples && build/bindings/go/go_cache_admission
//
// meson test --suite examples runs it too.
package main

import (
	"fmt"
	"math"
	"math/rand"
	"os"

	"temporalfilters.org/go/temporalfilters"
)

const (
	requests  = 300_000
	catalogue = 50_000 // popular objects
	k         = 20_000 // admit when asked for within the last k requests
	invEps    = 16     // answers within (1 + 1/16)
	batch     = 64
	never     = math.MaxUint64
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cache_admission:", err)
		os.Exit(1)
	}
}

func run() error {
	w, err := temporalfilters.NewRecencyWindow(temporalfilters.WithWindow(k), temporalfilters.WithInvEps(invEps))
	if err != nil {
		return err
	}
	defer func() { w.Close() }() // the window in use at the end (restored halfway)

	rng := rand.New(rand.NewSource(42))
	zipf := rand.NewZipf(rng, 1.1, 1, catalogue-1)
	last := map[uint64]uint64{} // the exact record: object -> index of its last request
	nextWonder := uint64(catalogue)
	eps := 1.0 / invEps
	var admitted, exactAdmitted, wrongRefusals, beyondBound, extra int

	keys := make([]string, 0, batch)
	objs := make([]uint64, 0, batch)
	for i := 0; i < requests; i += batch {
		if i == requests/2 {
			// a restart: the window is saved and restored
			blob, err := w.MarshalBinary()
			if err != nil {
				return err
			}
			w.Close()
			w = new(temporalfilters.RecencyWindow)
			if err := w.UnmarshalBinary(blob); err != nil {
				return err
			}
		}
		keys, objs = keys[:0], objs[:0]
		for j := i; j < i+batch && j < requests; j++ {
			obj := zipf.Uint64()
			if rng.Intn(10) >= 7 { // 30% one-hit wonders
				obj = nextWonder
				nextWonder++
			}
			objs = append(objs, obj)
			keys = append(keys, fmt.Sprintf("/objects/%d", obj))
		}
		answers, err := w.InsertReportBatchStrings(keys)
		if err != nil {
			return err
		}
		for j, obj := range objs {
			idx := uint64(i + j)
			r := uint64(never)
			if p, ok := last[obj]; ok {
				r = idx - 1 - p
			}
			last[obj] = idx
			e := answers[j]
			admit := e != temporalfilters.RecencyWindowNotInWindow && e < k
			exact := r != never && r < k
			if admit {
				admitted++
			}
			if exact {
				exactAdmitted++
			}
			if exact && !admit {
				wrongRefusals++
			}
			if admit && !exact {
				extra++
				if r == never || float64(r) >= (1+eps)*k {
					beyondBound++
				}
			}
		}
	}

	st, err := w.Stats()
	if err != nil {
		return err
	}
	fmt.Printf("requests:            %d (%d one-hit wonders)\n", requests, nextWonder-catalogue)
	fmt.Printf("rule:                admit when asked for within the last %d requests (eps = 1/%d)\n", k, invEps)
	fmt.Printf("admitted (window):   %d\n", admitted)
	fmt.Printf("admitted (exact):    %d\n", exactAdmitted)
	fmt.Printf("extra admissions:    %d (asked for K to (1 + eps) K requests ago)\n", extra)
	fmt.Printf("wrong refusals:      %d (must be 0)\n", wrongRefusals)
	fmt.Printf("beyond (1 + eps) K:  %d (must be 0)\n", beyondBound)
	fmt.Printf("memory:              %d bytes, %.1f bits per request of the window\n", st.Memory, st.BitsPerWindowItem)
	if wrongRefusals != 0 || beyondBound != 0 {
		return fmt.Errorf("the admission rule broke its promise")
	}
	return nil
}
