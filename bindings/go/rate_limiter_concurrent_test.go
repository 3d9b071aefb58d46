package temporalfilters

import (
	"fmt"
	"math/rand"
	"sort"
	"sync/atomic"
	"testing"
)

// A RateLimiter is used from many goroutines at once (they run on many OS
// threads: every cgo call may move to another one).

// rlGrant is one granted request seen by a goroutine.
type rlGrant struct {
	key int
	at  uint64
	n   uint64
}

// The limiter under contention, in phases: in phase p every goroutine asks
// for every key twice at time 1 + p*step (its own order of keys, so that
// goroutines meet on the same key), and phases are separated by a barrier,
// so that the requests' times reach the limiter in order. Meanwhile another
// goroutine serializes (and reads back), peeks and reads the counters.
// Checked afterwards from the goroutines' own logs: never more than the
// limit in any window per key (and globally), and, since every phase asks
// for more than the limit, each window is filled: the limit exactly when
// every request wants 1 permit, at least the limit - 1 when they want 1 or 2.
func TestRateLimiterConcurrentExact(t *testing.T) {
	const (
		limit, window, step = 5, 100, 17
		nkeys, goroutines   = 32, 8
		phases              = 60
	)
	for _, global := range []uint64{0, 40} {
		t.Run(fmt.Sprintf("global=%d", global), func(t *testing.T) {
			r := mustRateLimiter(t, limit, window, 0, RateLimiterExact)
			if global != 0 {
				must(t, r.SetGlobalLimit(global))
			}
			keys := make([][]byte, nkeys)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("tenant-%d\x00/api", i))
			}
			// odd keys ask for 1 or 2 permits (without a global limit)
			mixed := func(k int) bool { return global == 0 && k%2 == 1 }
			logs := make([][]rlGrant, goroutines)
			stop := inBackground(t, func(i int) error {
				blob, err := r.Serialize()
				if err != nil {
					return fmt.Errorf("Serialize: %w", err)
				}
				c, err := DeserializeRateLimiter(blob)
				if err != nil {
					return fmt.Errorf("reading a snapshot back: %w", err)
				}
				c.Close()
				if _, err := r.Stats(); err != nil {
					return err
				}
				_, err = r.Peek(keys[(i+1)%nkeys], 1, 1)
				return err
			})
			for p := 0; p < phases; p++ {
				now := uint64(1 + p*step)
				inParallel(t, goroutines, func(g int) error {
					rng := rand.New(rand.NewSource(int64(p*goroutines + g)))
					for rep := 0; rep < 2; rep++ {
						for j := 0; j < nkeys; j++ {
							k := (j + g*4) % nkeys
							n := uint64(1)
							if mixed(k) {
								n = uint64(1 + rng.Intn(2))
							}
							d, err := r.Acquire(keys[k], now, n)
							if err != nil {
								return err
							}
							if d.Allowed {
								logs[g] = append(logs[g], rlGrant{k, now, n})
							} else if d.RetryAt <= now {
								return fmt.Errorf("denied at %d with retry at %d", now, d.RetryAt)
							}
						}
					}
					return nil
				})
			}
			if stop() == 0 {
				t.Fatal("the reader never serialized")
			}
			perKey := make([][]uint64, nkeys)
			var all []uint64
			for _, log := range logs {
				for _, gr := range log {
					for i := uint64(0); i < gr.n; i++ {
						perKey[gr.key] = append(perKey[gr.key], gr.at)
						all = append(all, gr.at)
					}
				}
			}
			inWindow := func(times []uint64, now uint64) int {
				c := 0
				for _, at := range times {
					if at <= now && at+window > now {
						c++
					}
				}
				return c
			}
			for k, times := range perKey {
				sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
				if got := maxInSpan(times, window); got > limit {
					t.Fatalf("key %d: %d grants within one window, limit %d", k, got, limit)
				}
			}
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			if global != 0 {
				if got := maxInSpan(all, window); uint64(got) > global {
					t.Fatalf("%d grants of all keys within one window, global limit %d", got, global)
				}
			}
			for p := 0; p < phases; p++ {
				now := uint64(1 + p*step)
				if global != 0 {
					if got := inWindow(all, now); uint64(got) != global {
						t.Fatalf("phase %d: %d permits of all keys in the window, want the global limit %d", p, got, global)
					}
					continue
				}
				for k, times := range perKey {
					got := inWindow(times, now)
					if got > limit || got < limit-1 || !mixed(k) && got != limit {
						t.Fatalf("phase %d: key %d holds %d permits in the window (limit %d; mixed n: %v)", p, k, got, limit, mixed(k))
					}
				}
			}
			t.Logf("%d permits granted to %d keys over %d phases by %d goroutines", len(all), nkeys, phases, goroutines)
		})
	}
}

// Free-running: every request takes the next tick of a shared clock, so
// requests reach the limiter slightly out of order (the key's clock is then
// clamped). Whatever the interleaving, a key never gets more than the limit
// per window of its own; counted over the whole run and loosely, since the
// goroutines' ticks are not the times the limiter used. The bucketed mode
// too, with its bound of twice the limit per window.
func TestRateLimiterConcurrentFreeRunning(t *testing.T) {
	const (
		limit, window, width = 4, 400, 40
		nkeys, goroutines    = 16, 8
		ops                  = 6000
	)
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, limit, window, width, mode.flags)
		var clock uint64
		granted := make([][nkeys]uint64, goroutines)
		inParallel(t, goroutines, func(g int) error {
			rng := rand.New(rand.NewSource(int64(1000 + g)))
			for i := 0; i < ops; i++ {
				now := atomic.AddUint64(&clock, 1)
				k := rng.Intn(nkeys)
				d, err := r.AcquireString(fmt.Sprintf("k%d", k), now, 1)
				if err != nil {
					return err
				}
				if d.Allowed {
					granted[g][k]++
				}
			}
			return nil
		})
		// the run lasted `clock` ticks: at most ceil(clock/window)+1
		// windows' worth of permits per key (twice that when bucketed)
		windows := (clock+window-1)/window + 1
		bound := limit * windows
		if mode.flags&RateLimiterExact == 0 {
			bound *= 2
		}
		total := uint64(0)
		for k := 0; k < nkeys; k++ {
			var n uint64
			for g := range granted {
				n += granted[g][k]
			}
			total += n
			if n > bound {
				t.Fatalf("key %d: %d grants over %d ticks, bound %d", k, n, clock, bound)
			}
			// every key was asked for ~3000 times, far more than it may
			// get: it should have been granted most windows' worth
			if n < limit*(windows-2)/2 {
				t.Fatalf("key %d: only %d grants over %d ticks (limit %d per %d)", k, n, clock, limit, window)
			}
		}
		t.Logf("%d grants over %d ticks to %d keys (at most %d each)", total, clock, nkeys, bound)
	})
}
