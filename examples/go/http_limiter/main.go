// Command http_limiter rate-limits an HTTP API with the RateLimiter of
// libtemporalfilters, through the Go binding, and prints its 429 decisions
// with their Retry-After.
//
// The API is an ordinary net/http handler behind a middleware that asks the
// limiter for every request: each API key may make 5 requests per second
// (exact mode: never more, in any window of 1000 ms), and the whole API
// serves at most 30 per second. A partner key has its own limit of 50, yet
// it is still held to the API's 30 (when it bursts, everyone feels the
// API's limit). A request of the bulk endpoint costs 3 permits at once, one
// of the export endpoint 10. A refused request gets "429 Too Many Requests"
// with a Retry-After header (whole seconds, rounded up, as HTTP wants them;
// the exact time in ms is in X-Retry-At-Ms and in the log); a request that
// costs more than the key may ever have gets 429 without one. Every
// decision consults both the key's window and the API's, whether the key
// allows or not: X-RateLimit-Remaining is the smaller of the two and the
// retry time of a refusal the later. A request the handler fails to serve
// (500) gives its permits back (Refund), to the API's window too.
//
// Seven simulated clients call the API for 6 s of simulated time (ms),
// through httptest: no network is used. The first 429 of every run of them
// is printed. Halfway the server "restarts": the limiter is saved with
// MarshalBinary and restored with UnmarshalBinary. The program checks its
// own promises: no key and not the API above its limit in any window, the
// restored limiter writes the very bytes it was saved as, and the restart
// forgot nobody: the same traffic without a restart gets exactly the same
// decisions. It exits with status 1 if one is broken.
//
// Build and run it from a Meson build directory (-Dexamples=true, the
// default):
//
//	ninja -C build go-examples && build/bindings/go/go_http_limiter
//
// meson test --suite examples runs it too.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"

	"temporalfilters.org/go/temporalfilters"
)

const (
	window      = 1000 // ms
	keyLimit    = 5    // requests per key per window
	partner     = 50   // the partner key's own limit (above the API's)
	globalLimit = 30   // the whole API per window
	bulkCost    = 3    // permits of one request to /bulk
	exportCost  = 10   // permits of one request to /export: more than a key may have
	duration    = 6000 // simulated ms
	restartAt   = 3000
	printUntil  = 4500 // print the 429s until then, afterwards only count
)

// server is the API with its limiter and a simulated clock.
type server struct {
	rl      *temporalfilters.RateLimiter
	now     uint64 // the simulated time, ms
	verbose bool   // print the first 429 of every run (until printUntil)
	grants  map[string][]uint64
	all     []uint64
	refused int
	printed int
	limited map[string]bool // whether the key's last response was a 429
}

// limit is the middleware: one decision per request, before the handler.
func (s *server) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-API-Key")
		cost := uint64(1)
		switch r.URL.Path {
		case "/bulk":
			cost = bulkCost
		case "/export":
			cost = exportCost
		}
		d, err := s.rl.AcquireString(key, s.now, cost)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		// the smaller of the key's and the API's (global) remaining
		// permits, whether the request is allowed or not
		w.Header().Set("X-RateLimit-Remaining", strconv.FormatUint(d.Remaining, 10))
		if !d.Allowed {
			s.refused++
			wait := d.RetryAfter(s.now)
			if d.RetryAt != temporalfilters.RetryNever {
				// whole seconds, rounded up: the client must not come early
				w.Header().Set("Retry-After", strconv.FormatUint((wait+999)/1000, 10))
				w.Header().Set("X-Retry-At-Ms", strconv.FormatUint(d.RetryAt, 10))
			}
			if s.verbose && s.now <= printUntil && !s.limited[key] {
				s.printed++
				if d.RetryAt == temporalfilters.RetryNever {
					fmt.Printf("%5d ms  %-8s %-6s 429 Too Many Requests (costs %d, more than the key may ever have)\n",
						s.now, key, r.URL.Path, cost)
				} else {
					fmt.Printf("%5d ms  %-8s %-6s 429 Too Many Requests  Retry-After: %s  (retry at %d ms, in %d ms)\n",
						s.now, key, r.URL.Path, w.Header().Get("Retry-After"), d.RetryAt, wait)
				}
			}
			s.limited[key] = true
			http.Error(w, "rate limited", http.StatusTooManyRequests)
			return
		}
		s.limited[key] = false
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			// not served after all: the permits go back to the key (and
			// to the API's global window)
			if err := s.rl.RefundString(key, s.now, cost); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		} else {
			for i := uint64(0); i < cost; i++ {
				s.grants[key] = append(s.grants[key], s.now)
				s.all = append(s.all, s.now)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// api is the handler being protected; every 7th request to /flaky fails.
func api() http.Handler {
	n := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/bulk", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok, many") })
	mux.HandleFunc("/export", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok, everything") })
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		n++
		if n%7 == 0 {
			http.Error(w, "backend down", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

type client struct {
	key, path   string
	every       uint64 // a request every `every` ms...
	burstEvery  uint64 // ...or every `burstEvery` ms from burstFrom to burstTo...
	burstFrom   uint64
	burstTo     uint64
	honorsRetry bool // ...but not before the time a 429 gave it
	next        uint64
	sent, ok    int
	refused     int
}

// interval is the time to the client's next request.
func (c *client) interval(now uint64) uint64 {
	if c.burstEvery != 0 && now >= c.burstFrom && now < c.burstTo {
		return c.burstEvery
	}
	return c.every
}

func newClients() []*client {
	clients := []*client{
		{key: "alice", path: "/items", every: 250},                    // 4/s: under her limit
		{key: "scraper", path: "/items", every: 40},                   // 25/s: mostly refused
		{key: "polite", path: "/items", every: 90, honorsRetry: true}, // would send 11/s, waits as told
		{key: "partner", path: "/items", every: 100, // 10/s; 50/s from 2 s to 4 s
			burstEvery: 20, burstFrom: 2000, burstTo: 4000},
		{key: "etl", path: "/bulk", every: 300},           // 3 permits per request
		{key: "flaky", path: "/flaky", every: 150},        // some fail and are refunded
		{key: "exporter", path: "/export", every: 100000}, // one request that can never pass
	}
	for i, c := range clients {
		c.next = 1 + uint64(5*i) // times start at 1: 0 is no time
	}
	clients[len(clients)-1].next = 2500
	return clients
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "http_limiter:", err)
		os.Exit(1)
	}
}

func newLimiter() (*temporalfilters.RateLimiter, error) {
	// Keys come from clients: a random secret seed, so that nobody can choose
	// keys that crowd one shard (the decisions do not depend on it).
	var seed [4]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, err
	}
	rl, err := temporalfilters.NewRateLimiter(keyLimit, window, 0,
		temporalfilters.WithSeed(binary.LittleEndian.Uint32(seed[:])),
		temporalfilters.WithFlags(temporalfilters.RateLimiterExact))
	if err != nil {
		return nil, err
	}
	if err := rl.SetGlobalLimit(globalLimit); err != nil {
		rl.Close()
		return nil, err
	}
	if err := rl.SetKeyLimitString("partner", partner); err != nil {
		rl.Close()
		return nil, err
	}
	return rl, nil
}

// simulate runs the traffic, restarting the server halfway or not, and
// returns every response as "<time> <key> <status> <Retry-After>".
func simulate(restart, verbose bool) (*server, []*client, []string, error) {
	rl, err := newLimiter()
	if err != nil {
		return nil, nil, nil, err
	}
	s := &server{rl: rl, verbose: verbose, grants: map[string][]uint64{}, limited: map[string]bool{}}
	defer func() { s.rl.Close() }()
	handler := s.limit(api())
	clients := newClients()
	var log []string
	for s.now = 1; s.now <= duration; s.now++ {
		if restart && s.now == restartAt {
			if err := s.restart(); err != nil {
				return nil, nil, nil, err
			}
		}
		for _, c := range clients {
			if s.now < c.next {
				continue
			}
			req := httptest.NewRequest(http.MethodGet, c.path, nil)
			req.Header.Set("X-API-Key", c.key)
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			c.sent++
			c.next = s.now + c.interval(s.now)
			log = append(log, fmt.Sprintf("%d %s %d %s", s.now, c.key, rec.Code, rec.Header().Get("X-Retry-At-Ms")))
			switch rec.Code {
			case http.StatusOK, http.StatusInternalServerError:
				c.ok++
			case http.StatusTooManyRequests:
				c.refused++
				if c.honorsRetry && rec.Header().Get("X-Retry-At-Ms") != "" {
					at, err := strconv.ParseUint(rec.Header().Get("X-Retry-At-Ms"), 10, 64)
					if err != nil {
						return nil, nil, nil, err
					}
					c.next = at
				}
			default:
				return nil, nil, nil, fmt.Errorf("%s %s: status %d: %s", c.key, c.path, rec.Code, rec.Body.String())
			}
		}
		if verbose && s.now == printUntil {
			fmt.Printf("  ...  (later 429s are only counted)\n")
		}
		if verbose && s.now == 2000 {
			fmt.Printf("  -- 2000 ms: the partner bursts to 50 requests/s until 4000 ms --\n")
		}
	}
	return s, clients, log, nil
}

func run() error {
	fmt.Printf("libtemporalfilters %s (Go binding): an HTTP API limited to %d requests/s per key (partner: %d), %d/s in all\n\n",
		temporalfilters.Version(), keyLimit, partner, globalLimit)
	s, clients, log, err := simulate(true, true)
	if err != nil {
		return err
	}
	fmt.Printf("\nafter %d ms: %d requests refused (the first of each run shown: %d)\n", duration, s.refused, s.printed)
	fmt.Printf("  %-8s  %4s  %6s  %7s  %s\n", "key", "sent", "served", "refused", "most permits within 1000 ms")
	for _, c := range clients {
		fmt.Printf("  %-8s  %4d  %6d  %7d  %d\n", c.key, c.sent, c.ok, c.refused, mostInWindow(s.grants[c.key]))
	}
	fmt.Printf("  the whole API: at most %d permits within 1000 ms\n", mostInWindow(s.all))

	// The promises.
	for _, c := range clients {
		lim := keyLimit
		if c.key == "partner" {
			lim = globalLimit // its own 50 does not let it past the API's limit
		}
		if got := mostInWindow(s.grants[c.key]); got > lim {
			return fmt.Errorf("%s was served %d permits within one window, limit %d", c.key, got, lim)
		}
	}
	if got := mostInWindow(s.all); got > globalLimit {
		return fmt.Errorf("the API served %d permits within one window, limit %d", got, globalLimit)
	}
	_, _, same, err := simulate(false, false)
	if err != nil {
		return err
	}
	if len(same) != len(log) {
		return fmt.Errorf("the restart changed the traffic: %d responses, %d without it", len(log), len(same))
	}
	for i := range log {
		if log[i] != same[i] {
			return fmt.Errorf("the restart changed a decision: %q, without it %q", log[i], same[i])
		}
	}
	fmt.Println("\nok: no key and not the API above its limit in any window; the restart changed no decision")
	return nil
}

// restart saves the limiter and restores it, as a service would across a
// restart: whoever was limited stays limited.
func (s *server) restart() error {
	blob, err := s.rl.MarshalBinary()
	if err != nil {
		return err
	}
	s.rl.Close()
	var restored temporalfilters.RateLimiter
	if err := restored.UnmarshalBinary(blob); err != nil {
		return err
	}
	s.rl = &restored
	// equal states give equal blobs: the restored limiter writes the same
	// bytes
	again, err := s.rl.MarshalBinary()
	if err != nil {
		return err
	}
	if !bytes.Equal(again, blob) {
		return fmt.Errorf("the restored limiter serializes to other bytes (%d, saved %d)", len(again), len(blob))
	}
	fmt.Printf("  -- %d ms: restart; the limiter was saved (%d bytes) and restored --\n", s.now, len(blob))
	return nil
}

// mostInWindow is the largest number of times within any 1000 ms.
func mostInWindow(times []uint64) int {
	ts := append([]uint64(nil), times...)
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	best, lo := 0, 0
	for hi := range ts {
		for ts[lo]+window <= ts[hi] {
			lo++
		}
		if hi-lo+1 > best {
			best = hi - lo + 1
		}
	}
	return best
}
