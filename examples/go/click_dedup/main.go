// Command click_dedup de-duplicates a click stream with the two Bloom
// filters of libtemporalfilters, through the Go binding.
//
// An ad server bills one click per (user, ad) pair per minute: a repeat of
// a pair within 60 s of its counted click is a duplicate and is dropped.
// Instead of a map of every pair, it keeps one TimeBloom with a span of
// 60,000 ms and calls AddIfAbsent for every click. "Absent" is always
// right, so a duplicate is never billed; "present" is wrong with a small
// probability (the error rate the filter was sized for), so now and then a
// click that should count is dropped.
//
// Beside it an AgeBloom remembers the last 20,000 billed pairs whatever
// their time, for a fraud check that does not look at the clock ("was this
// pair among the last 20,000 billed?").
//
// The program simulates four minutes of clicks (steady traffic, a burst on
// one ad in the second minute, a click bot, a silent minute), judges every
// decision against an exact map of the last counted time of every pair, and
// halfway "restarts" the server: both filters are saved with MarshalBinary
// and restored with UnmarshalBinary. It exits with status 1 if a duplicate
// was billed or a pair the filters must remember was forgotten.
//
// Build and run it from a Meson build directory (-Dexamples=true, the
// default):
//
//	ninja -C build go-examples && build/bindings/go/go_click_dedup
//
// meson test --suite examples runs it too.
package main

import (
	"fmt"
	"math/rand"
	"os"

	"temporalfilters.org/go/temporalfilters"
)

const (
	spanMS    = 60_000                      // duplicates within a minute are dropped
	errorRate = 0.01                        // probability of dropping a click that should count
	recentN   = 20_000                      // the AgeBloom's window, in billed clicks
	t0        = uint64(1_700_000_000_000)   // start of the stream, ms since the Unix epoch
	duration  = uint64(4 * spanMS)          // simulated time
	restartAt = t0 + duration/2             // the simulated restart
	quietFrom = t0 + uint64(2.5*spanMS)     // no traffic from here...
	quietTo   = t0 + uint64(3.5*spanMS)     // ...to here
	burstFrom = t0 + spanMS                 // one ad goes viral...
	burstTo   = t0 + 2*spanMS               // ...for a minute
	capacity0 = uint64(150 * spanMS / 1000) // the expected clicks per span at the base rate
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "click_dedup:", err)
		os.Exit(1)
	}
}

func run() error {
	minute, err := temporalfilters.NewTimeBloomFor(capacity0, errorRate, spanMS, temporalfilters.WithSeed(1))
	if err != nil {
		return err
	}
	defer minute.Close()
	recent, err := temporalfilters.NewAgeBloomFor(recentN, errorRate, temporalfilters.WithSeed(2))
	if err != nil {
		return err
	}
	defer recent.Close()
	mi, _ := minute.Info()
	ri, _ := recent.Info()
	mm, _ := minute.Memory()
	rm, _ := recent.Memory()
	fmt.Printf("TimeBloom: k=%d l=%d span=%d ms, %d bytes\n", mi.K, mi.L, mi.Span, mm)
	fmt.Printf("AgeBloom:  k=%d l=%d capacity=%d, %d bytes\n", ri.K, ri.L, ri.Capacity, rm)

	rng := rand.New(rand.NewSource(11))
	lastCounted := map[string]uint64{} // the exact answer: pair -> time of its counted click
	var billed []string                // pairs in billing order
	var counted, duplicates, wronglyDropped int
	restarted := false

	now := t0
	for now < t0+duration {
		// 150 clicks/s, 10x in the burst minute, none in the quiet one
		perSecond := 150.0
		if now >= burstFrom && now < burstTo {
			perSecond = 1500
		}
		now += uint64(rng.ExpFloat64() * 1000 / perSecond)
		if now >= quietFrom && now < quietTo {
			now = quietTo
		}

		var pair string
		switch r := rng.Float64(); {
		case r < 0.03:
			pair = "bot-1:ad-7" // a bot clicking the same ad again and again
		case now >= burstFrom && now < burstTo && r < 0.8:
			pair = fmt.Sprintf("user-%d:ad-viral", rng.Intn(30_000))
		default:
			pair = fmt.Sprintf("user-%d:ad-%d", rng.Intn(100_000), rng.Intn(300))
		}

		last, seen := lastCounted[pair]
		isDuplicate := seen && now-last <= spanMS
		dropped, err := minute.AddIfAbsentString(pair, now)
		if err != nil {
			return err
		}
		switch {
		case dropped && isDuplicate:
			duplicates++
		case dropped:
			wronglyDropped++ // a false positive: under-billing, never over-billing
		case isDuplicate:
			return fmt.Errorf("%s was billed again %d ms after its counted click", pair, now-last)
		default:
			counted++
			lastCounted[pair] = now
			billed = append(billed, pair)
			if err := recent.AddString(pair); err != nil {
				return err
			}
		}

		if !restarted && now >= restartAt {
			if err := restart(minute, recent); err != nil {
				return err
			}
			restarted = true
			fmt.Printf("restarted at t=%d s: both filters restored from their blobs\n", (now-t0)/1000)
		}
		if len(billed) > 4*recentN {
			billed = append([]string(nil), billed[len(billed)-recentN:]...)
		}
		// now and then: every pair counted within the span is remembered
		if !dropped && counted%5000 == 0 {
			if err := checkMinute(minute, lastCounted, now); err != nil {
				return err
			}
		}
	}

	end := now // the time of the last click
	if err := checkMinute(minute, lastCounted, end); err != nil {
		return err
	}
	// the last recentN billed pairs are all in the AgeBloom
	if len(billed) > recentN {
		billed = billed[len(billed)-recentN:]
	}
	for _, pair := range billed {
		if ok, err := recent.ContainsString(pair); err != nil || !ok {
			return fmt.Errorf("%s, among the last %d billed, is forgotten (%v)", pair, recentN, err)
		}
	}

	st, err := minute.Stats(end)
	if err != nil {
		return err
	}
	total := counted + duplicates + wronglyDropped
	fmt.Printf("%d clicks: %d billed, %d duplicates dropped, %d dropped by a false positive (%.3f%% of the new ones)\n",
		total, counted, duplicates, wronglyDropped, 100*float64(wronglyDropped)/float64(counted+wronglyDropped))
	fmt.Printf("TimeBloom at the end: %d slices, %d bits, %.1f bits per click in the span, estimated fpr %.4f\n",
		st.Slices, st.Bits, st.BitsPerElement, st.FPRNow)
	fmt.Printf("no duplicate billed; the last minute's pairs and the last %d billed all remembered\n", recentN)
	return nil
}

// checkMinute wants every pair counted within the span before now in the
// TimeBloom.
func checkMinute(minute *temporalfilters.TimeBloom, lastCounted map[string]uint64, now uint64) error {
	for pair, at := range lastCounted {
		if at+spanMS < now {
			continue
		}
		ok, err := minute.ContainsString(pair, now)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s, counted %d ms before %d, is forgotten", pair, now-at, now)
		}
	}
	return nil
}

// restart saves both filters and restores them into the same values, as a
// server would across a restart (here through memory; a file or a database
// would do the same).
func restart(minute *temporalfilters.TimeBloom, recent *temporalfilters.AgeBloom) error {
	mb, err := minute.MarshalBinary()
	if err != nil {
		return err
	}
	rb, err := recent.MarshalBinary()
	if err != nil {
		return err
	}
	minute.Close()
	recent.Close()
	if err := minute.UnmarshalBinary(mb); err != nil {
		return err
	}
	return recent.UnmarshalBinary(rb)
}
