package temporalfilters

import (
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
)

// A Concurrent sketch is used from many goroutines at once (they run on
// many OS threads: every cgo call may move to another one).

func TestConcurrentUpdatesNeverOlderThanTruth(t *testing.T) {
	for _, flags := range []RecencySketchFlags{RecencySketchConcurrent, RecencySketchConcurrent | RecencySketchBlocked} {
		t.Run(fmt.Sprintf("flags=%d", flags), func(t *testing.T) {
			// small enough that keys share cells across goroutines
			s := mustNew(t, 512, 4, 3, flags)
			const goroutines, ops, nkeys = 8, 20000, 300
			keys := make([]string, nkeys)
			for i := range keys {
				keys[i] = fmt.Sprintf("user-%d\x00%d", i, i*7)
			}
			maxTime := make([][]uint64, goroutines) // per goroutine, per key: the largest time it wrote
			for g := range maxTime {
				maxTime[g] = make([]uint64, nkeys)
			}
			// a reader of the whole sketch meanwhile (allowed in concurrent mode)
			stop := inBackground(t, func(int) error {
				if _, err := s.Serialize(); err != nil {
					return err
				}
				_, err := s.ErrorEstimate(1000)
				return err
			})
			inParallel(t, goroutines, func(g int) error {
				rng := rand.New(rand.NewSource(int64(g)))
				mine := maxTime[g]
				now := uint64(1)
				for i := 0; i < ops; i++ {
					now += uint64(rng.Intn(3)) // also equal and (below) older times
					k := rng.Intn(nkeys)
					ts := now
					if rng.Intn(10) == 0 && now > 100 {
						ts = now - 100
					}
					switch rng.Intn(4) {
					case 0, 1:
						if err := s.UpdateString(keys[k], ts); err != nil {
							return err
						}
					case 2:
						k2 := rng.Intn(nkeys)
						if err := s.UpdateBatchStrings([]string{keys[k], keys[k2]}, []uint64{ts, ts}); err != nil {
							return err
						}
						if ts > mine[k2] {
							mine[k2] = ts
						}
					case 3:
						if err := s.Update([]byte(keys[k]), ts); err != nil {
							return err
						}
					}
					if ts > mine[k] {
						mine[k] = ts
					}
					// Cells only grow: this goroutine's own writes are visible at once.
					got, err := s.QueryString(keys[k])
					if err != nil {
						return err
					}
					if got < mine[k] {
						return fmt.Errorf("goroutine %d: key %d reads %d after it wrote %d", g, k, got, mine[k])
					}
				}
				return nil
			})
			stop()
			for k := range keys {
				var truth uint64
				for g := range maxTime {
					if maxTime[g][k] > truth {
						truth = maxTime[g][k]
					}
				}
				got := mustQuery(t, s, []byte(keys[k]))
				if got < truth {
					t.Fatalf("key %d reads %d, older than its last update %d", k, got, truth)
				}
			}
		})
	}
}

func TestConcurrentPaceNeverDoubleGrants(t *testing.T) {
	for _, flags := range []RecencySketchFlags{RecencySketchConcurrent, RecencySketchConcurrent | RecencySketchBlocked} {
		t.Run(fmt.Sprintf("flags=%d", flags), func(t *testing.T) {
			s := mustNew(t, 4096, 4, 11, flags)
			const goroutines, ops, nkeys, interval = 8, 20000, 16, 50
			var clock uint64 // shared time: every request takes the next tick
			type grant struct {
				key int
				at  uint64
			}
			grants := make([][]grant, goroutines)
			inParallel(t, goroutines, func(g int) error {
				rng := rand.New(rand.NewSource(int64(100 + g)))
				key := make([]byte, 9)
				for i := 0; i < ops; i++ {
					now := atomic.AddUint64(&clock, 1)
					k := rng.Intn(nkeys)
					copy(key, "client-\x00")
					key[8] = byte(k)
					res, err := s.Pace(key, now, interval)
					if err != nil {
						return err
					}
					if res.Granted {
						if res.NextAllowed != now+interval {
							return fmt.Errorf("granted at %d with next allowed %d", now, res.NextAllowed)
						}
						grants[g] = append(grants[g], grant{k, now})
					} else if res.NextAllowed <= now {
						return fmt.Errorf("denied at %d although next allowed is %d", now, res.NextAllowed)
					}
				}
				return nil
			})
			perKey := make([][]uint64, nkeys)
			total := 0
			for _, gs := range grants {
				for _, gr := range gs {
					perKey[gr.key] = append(perKey[gr.key], gr.at)
					total++
				}
			}
			for k, times := range perKey {
				sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
				for i := 1; i < len(times); i++ {
					if times[i]-times[i-1] < interval {
						t.Fatalf("key %d granted at %d and again at %d, within the interval %d", k, times[i-1], times[i], interval)
					}
				}
			}
			// Every key had goroutines ops*goroutines/interval chances: the test
			// is only meaningful when many grants happened.
			if min := nkeys * (goroutines * ops / interval) / 4; total < min {
				t.Fatalf("only %d grants (want at least %d): pacing denied far too much", total, min)
			}
		})
	}
}

// Close while other goroutines call a structure whose calls may overlap (a
// RecencySketchConcurrent sketch, a RateLimiter): the calls in flight finish
// on a live object (Close waits for them), every later call returns
// ErrClosed, and nothing else happens. Each round closes mid-stream, after
// the workers have made some calls; serializations are the longer calls.
func TestCloseWaitsForTheCallsInFlight(t *testing.T) {
	for round := 0; round < 20; round++ {
		limiter := round%2 == 0
		var s structure
		var op func(i uint64) error
		if limiter {
			r, err := NewRateLimiter(1000, 100, 10)
			must(t, err)
			s, op = r, func(i uint64) error {
				_, err := r.AcquireString(fmt.Sprint("key-", i%300), i, 1)
				return err
			}
		} else {
			sk, err := NewRecencySketch(4096, 4, WithFlags(RecencySketchConcurrent))
			must(t, err)
			s, op = sk, func(i uint64) error {
				if err := sk.UpdateString(fmt.Sprint("key-", i%300), i); err != nil {
					return err
				}
				_, err := sk.QueryString(fmt.Sprint("key-", i%300))
				return err
			}
		}
		const workers = 3
		var ok int64
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			go func() {
				for i := uint64(1); ; i++ {
					var err error
					if i%97 == 0 {
						_, err = s.Serialize()
					} else {
						err = op(i)
					}
					if err != nil {
						errs <- err
						return
					}
					atomic.AddInt64(&ok, 1)
				}
			}()
		}
		for atomic.LoadInt64(&ok) < 2000 {
			runtime.Gosched()
		}
		must(t, s.Close())
		for w := 0; w < workers; w++ {
			err := <-errs
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("round %d: a worker ended with %v, want ErrClosed", round, err)
			}
		}
	}
}
