// Command pacing paces requests with a RecencySketch, through the Go
// binding of libtemporalfilters.
//
// An API lets each client through at most once per interval. Instead of a
// map of every client it has ever seen (which grows without bound), it keeps
// one fixed-size sketch and asks Pace for every request: the sketch never
// grants a client twice within the interval, and when it refuses it says
// when the client may retry.
//
// Five simulated clients call at different rates for 1.5 s of simulated time
// (milliseconds). One of them, "dashboard", honours the retry time it is
// given, so it is never refused. Halfway through, the service "restarts":
// the sketch is saved with MarshalBinary and restored with UnmarshalBinary,
// and pacing goes on where it was. The program checks its own promises and
// exits with status 1 if one is broken.
//
// Build and run it from a Meson build directory (-Dexamples=true, the
// default):
//
//	ninja -C build go-examples && build/bindings/go/go_pacing
//
// meson test --suite examples runs it too.
package main

import (
	"fmt"
	"os"

	"temporalfilters.org/go/temporalfilters"
)

const (
	interval   = 200  // at most one granted request per client per 200 ms
	duration   = 1500 // simulated run time, ms
	restartAt  = 750  // the simulated restart
	printUntil = 450  // print every decision until then, afterwards only count
)

type client struct {
	name        string
	every       uint64 // sends a request every `every` ms...
	honorsRetry bool   // ...but never before the retry time it was given
	next        uint64 // time of its next request
	lastGrant   uint64 // for the self-check (0: never granted)
	sent        int
	granted     int
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pacing:", err)
		os.Exit(1)
	}
}

func run() error {
	clients := []*client{
		{name: "crawler", every: 35},                      // ~29 requests/s: mostly refused
		{name: "mobile-app", every: 120},                  // ~8/s
		{name: "dashboard", every: 80, honorsRetry: true}, // would send 12/s, waits as told
		{name: "batch-job", every: 450},                   // slower than the limit: always let through
		{name: "webhook", every: 200},                     // exactly at the limit
	}
	for i, c := range clients {
		c.next = 1 + uint64(3*i) // timestamps start at 1: 0 means "never"
	}

	// Sized for 500 distinct clients per interval: a client that waited long
	// enough is wrongly refused with probability at most 0.1%.
	sketch, err := temporalfilters.NewRecencySketchFor(500, 0.001, temporalfilters.WithSeed(7))
	if err != nil {
		return err
	}
	defer func() { sketch.Close() }()
	info, err := sketch.Info()
	if err != nil {
		return err
	}
	mem, err := sketch.Memory()
	if err != nil {
		return err
	}
	fmt.Printf("libtemporalfilters %s (Go binding): request pacing\n", temporalfilters.Version())
	fmt.Printf("sketch %d x %d cells (%d bytes) for any number of clients; limit: 1 request per client per %d ms\n\n",
		info.Width, info.Depth, mem, interval)
	fmt.Println("   time  client      decision")

	doubleGrants := 0
	for now := uint64(1); now <= duration; now++ {
		if now == restartAt {
			if sketch, err = restart(sketch); err != nil {
				return err
			}
		}
		for _, c := range clients {
			if now < c.next {
				continue
			}
			res, err := sketch.PaceString(c.name, now, interval)
			if err != nil {
				return fmt.Errorf("Pace(%s, %d): %w", c.name, now, err)
			}
			c.sent++
			if res.Granted {
				c.granted++
				if c.lastGrant != 0 && now-c.lastGrant < interval {
					doubleGrants++
				}
				c.lastGrant = now
			}
			if now <= printUntil {
				if res.Granted {
					fmt.Printf("%4d ms  %-10s  granted\n", now, c.name)
				} else {
					fmt.Printf("%4d ms  %-10s  refused, retry at %d ms (in %d ms)\n", now, c.name,
						res.NextAllowed, res.NextAllowed-now)
				}
			}
			c.next = now + c.every
			if c.honorsRetry && c.next < res.NextAllowed {
				c.next = res.NextAllowed
			}
		}
		if now == printUntil {
			fmt.Printf("    ...  (later decisions are only counted)\n")
		}
	}

	fmt.Printf("\nafter %d ms (at most %d grants per client):\n", duration, (duration+interval-1)/interval)
	fmt.Printf("  %-10s  %4s  %7s  %7s\n", "client", "sent", "granted", "refused")
	for _, c := range clients {
		fmt.Printf("  %-10s  %4d  %7d  %7d\n", c.name, c.sent, c.granted, c.sent-c.granted)
	}

	// The promises: never two grants within the interval; a client that
	// waits as told is never refused; one slower than the limit neither.
	if doubleGrants != 0 {
		return fmt.Errorf("%d grants came within %d ms of the previous one", doubleGrants, interval)
	}
	for _, c := range clients {
		if (c.honorsRetry || c.every >= interval) && c.granted != c.sent {
			return fmt.Errorf("%s was refused %d times although it kept to the limit", c.name, c.sent-c.granted)
		}
	}
	fmt.Println("\nok: no client was let through twice within the interval; the patient ones were never refused")
	return nil
}

// restart saves the sketch and restores it into a new one, as a service
// would across a restart (the blob is portable: any binding reads it).
func restart(old *temporalfilters.RecencySketch) (*temporalfilters.RecencySketch, error) {
	blob, err := old.MarshalBinary()
	if err != nil {
		return nil, err
	}
	old.Close()
	var restored temporalfilters.RecencySketch
	if err := restored.UnmarshalBinary(blob); err != nil {
		return nil, err
	}
	fmt.Printf("  -- %d ms: restart; the sketch was saved (%d bytes) and restored --\n", restartAt, len(blob))
	return &restored, nil
}
