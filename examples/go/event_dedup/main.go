// Command event_dedup processes events exactly once (or nearly so) with the
// rotating cuckoo filter of libtemporalfilters, through the Go binding.
//
// A payment consumer reads an at-least-once queue: after a timeout or a
// crash the queue delivers a batch again, up to a few minutes later.
// Charging a card twice is the failure to avoid, and skipping a payment
// never processed is worse. The consumer keeps one RotatingCuckoo of the
// event IDs it processed within the last 10 minutes and asks
// AddIfAbsentBatchStrings about every batch it receives:
//
//   - true (present): the event was processed; the delivery is skipped. A
//     wrong true (a false positive) would lose a payment: its probability
//     is below 2^-48 per delivery (about 2^-55 with the default options);
//   - false (absent): the event is processed and its ID remembered. A wrong
//     false (a false negative) only repeats an event, and happens only when
//     the memory cap dropped a table early (Stats().ForgottenMemory).
//
// The program replays 20 simulated minutes of batches of 50 events, 4% of
// the batches redelivered within 5 minutes and single events redelivered
// too, with a consumer restart halfway (the filter saved with MarshalBinary
// and restored with UnmarshalBinary), and judges every decision against an
// exact record of the processed IDs. It exits with status 1 if a new event
// was skipped, or if a redelivery was processed again while the filter
// reports no early loss.
//
// Build and run it from a Meson build directory (-Dexamples=true, the
// default):
//
//	ninja -C build go-examples && build/bindings/go/go_event_dedup
//
// meson test --suite examples runs it too.
package main

import (
	"fmt"
	"math/rand"
	"os"
	"sort"

	"temporalfilters.org/go/temporalfilters"
)

const (
	ttlMS         = uint64(10 * 60_000)       // IDs remembered for 10 minutes
	redeliverMS   = uint64(5 * 60_000)        // a redelivery comes within 5 minutes
	batchSize     = 50                        // events per delivery
	batchEveryMS  = uint64(100)               // one new batch every 100 ms: 500 events/s
	duration      = uint64(20 * 60_000)       // simulated time
	t0            = uint64(1_700_000_000_000) // ms since the Unix epoch
	maxMemory     = uint64(16 << 20)          // the filter's cap: room for 10 minutes of IDs
	batchRedelive = 0.04                      // share of batches delivered again
	eventRedelive = 0.01                      // share of single events delivered again
)

// delivery is a batch of event IDs due at a time.
type delivery struct {
	due uint64
	ids []uint64
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "event_dedup:", err)
		os.Exit(1)
	}
}

func run() error {
	seen, err := temporalfilters.NewRotatingCuckoo(temporalfilters.WithTTL(ttlMS),
		temporalfilters.WithMaxMemory(maxMemory), temporalfilters.WithSeed(3))
	if err != nil {
		return err
	}
	defer func() { seen.Close() }()

	rng := rand.New(rand.NewSource(13))
	processedAt := map[uint64]uint64{} // the exact record: ID -> time processed
	var pending []delivery             // redeliveries, ordered by due time
	var next uint64                    // the next new event ID
	var processed, skipped, repeated, wronglySkipped int
	restarted := false

	for now := t0; now < t0+duration; now += batchEveryMS {
		if !restarted && now >= t0+duration/2 {
			if seen, err = restart(seen); err != nil {
				return err
			}
			restarted = true
			fmt.Printf("restart at %d s: the filter was saved and restored\n", (now-t0)/1000)
		}
		// The deliveries due now: redeliveries first, then a new batch.
		var due []delivery
		for len(pending) > 0 && pending[0].due <= now {
			due, pending = append(due, pending[0]), pending[1:]
		}
		fresh := delivery{now, make([]uint64, batchSize)}
		for i := range fresh.ids {
			fresh.ids[i] = next
			next++
		}
		due = append(due, fresh)

		for _, d := range due {
			keys := make([]string, len(d.ids))
			for i, id := range d.ids {
				keys[i] = fmt.Sprintf("payment-%d", id)
			}
			present, err := seen.AddIfAbsentBatchStrings(keys, now)
			if err != nil {
				return err
			}
			for i, id := range d.ids {
				_, done := processedAt[id]
				switch {
				case present[i] && !done:
					wronglySkipped++ // a false positive: a payment lost
				case present[i]:
					skipped++ // a duplicate delivery, skipped
				default:
					if done {
						repeated++ // processed twice
					}
					processedAt[id] = now
					processed++
				}
			}
		}

		// Some batches, and some single events, will come again.
		if rng.Float64() < batchRedelive {
			pending = append(pending, delivery{now + 1 + uint64(rng.Int63n(int64(redeliverMS))), fresh.ids})
		}
		for _, id := range fresh.ids {
			if rng.Float64() < eventRedelive {
				pending = append(pending, delivery{now + 1 + uint64(rng.Int63n(int64(redeliverMS))), []uint64{id}})
			}
		}
		sort.SliceStable(pending, func(i, j int) bool { return pending[i].due < pending[j].due })
	}

	end := t0 + duration
	st, err := seen.Stats(end)
	if err != nil {
		return err
	}
	fmt.Printf("%d deliveries: %d processed, %d redeliveries skipped\n", processed+skipped+wronglySkipped,
		processed, skipped)
	fmt.Printf("processed twice: %d (forgotten early for memory: %d keys); new events skipped: %d\n",
		repeated, st.ForgottenMemory, wronglySkipped)
	fmt.Printf("filter: %d tables, %d IDs, %.1f bits per ID, %d bytes (cap %d)\n", st.Tables, st.Items,
		st.BitsPerItem, st.Memory, maxMemory)
	if wronglySkipped != 0 {
		return fmt.Errorf("%d new events were skipped", wronglySkipped)
	}
	if repeated != 0 && st.ForgottenMemory == 0 {
		return fmt.Errorf("%d redeliveries within the ttl were processed again", repeated)
	}
	if skipped == 0 {
		return fmt.Errorf("no redelivery was skipped")
	}
	return nil
}

// restart saves the filter and restores it into a new value, as a consumer
// would across a restart (here through memory; a file would do the same).
func restart(seen *temporalfilters.RotatingCuckoo) (*temporalfilters.RotatingCuckoo, error) {
	blob, err := seen.MarshalBinary()
	if err != nil {
		return nil, err
	}
	seen.Close()
	restored := new(temporalfilters.RotatingCuckoo)
	if err := restored.UnmarshalBinary(blob); err != nil {
		return nil, err
	}
	return restored, nil
}
