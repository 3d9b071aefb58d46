package temporalfilters

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"
)

func mustRateLimiter(t *testing.T, limit, window, width uint64, flags RateLimiterFlags) *RateLimiter {
	t.Helper()
	return keep(t, res(NewRateLimiter(limit, window, width, WithFlags(flags))))
}

// wantKeys fails unless r tracks n keys (Stats().Keys); why says what
// another count would mean.
func wantKeys(t *testing.T, r *RateLimiter, n uint64, why ...string) {
	t.Helper()
	if st := res(r.Stats()).get(t); st.Keys != n {
		t.Fatalf("%s Stats = %+v, want %d keys", strings.Join(why, " "), st, n)
	}
}

func rlAcquire(t *testing.T, r *RateLimiter, key string, now, n uint64) Decision {
	t.Helper()
	return res(r.AcquireString(key, now, n)).get(t, "Acquire ", key, " at ", now, ", n ", n)
}

func rlPeek(t *testing.T, r *RateLimiter, key string, now, n uint64) Decision {
	t.Helper()
	return res(r.PeekString(key, now, n)).get(t, "Peek ", key, " at ", now, ", n ", n)
}

func wantDecision(t *testing.T, what string, got, want Decision) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %+v, want %+v", what, got, want)
	}
}

// pick is the exact mode's value or the bucketed mode's.
func pick(exact bool, exactValue, bucketedValue uint64) uint64 {
	if exact {
		return exactValue
	}
	return bucketedValue
}

func allowed(remaining uint64) Decision { return Decision{Allowed: true, Remaining: remaining} }

func denied(remaining, retryAt uint64) Decision {
	return Decision{Remaining: remaining, RetryAt: retryAt}
}

// rateMode is a mode of the rate limiter, for the tests that run in both.
type rateMode struct {
	name  string
	flags RateLimiterFlags
}

var bothRateModes = []rateMode{{"bucketed", 0}, {"exact", RateLimiterExact}}

// inBothRateModes runs f as a subtest in each mode.
func inBothRateModes(t *testing.T, f func(t *testing.T, mode rateMode)) {
	t.Helper()
	for _, mode := range bothRateModes {
		t.Run(mode.name, func(t *testing.T) { f(t, mode) })
	}
}

// The worked example of the Rate Limiter README (5 requests per second,
// 100 ms buckets, its timestamps in ms), with exactly its outcomes; in exact
// mode this traffic gets the same answers.
func TestRateLimiterReadmeExample(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 5, 1000, 100, mode.flags)
		const key = "client"
		steps := []struct {
			now  uint64
			want Decision
		}{
			{1592171101900, allowed(4)}, // the first bucket, 15921711019; total 1
			{1592171101950, allowed(3)}, // the same bucket; total 2
			{1592171102013, allowed(2)},
			{1592171102810, allowed(1)},
			{1592171102850, allowed(0)}, // total 5
			// total 5 = rps: denied, the queue unchanged. The oldest
			// bucket (15921711019) leaves at 1592171102900, which also is
			// 1592171101900 + 1000 in exact mode.
			{1592171102890, denied(0, 1592171102900)},
			// bucket 15921711019 is outdated: total 3, then 4
			{1592171102980, allowed(1)},
		}
		for _, s := range steps {
			wantDecision(t, fmt.Sprintf("Acquire at %d", s.now), rlAcquire(t, r, key, s.now, 1), s.want)
		}
		wantKeys(t, r, 1)
	})
	// The README's analysis: 1 request per second, 100 ms buckets; requests
	// at ...1990 and ...2930 are less than a second apart, yet the bucketed
	// limiter admits the second (its bucket already left); exact mode denies
	// it until the first is a second old.
	b := mustRateLimiter(t, 1, 1000, 100, 0)
	e := mustRateLimiter(t, 1, 1000, 0, RateLimiterExact)
	for _, r := range []*RateLimiter{b, e} {
		wantDecision(t, "first", rlAcquire(t, r, "u", 1592171101990, 1), allowed(0))
	}
	wantDecision(t, "bucketed second", rlAcquire(t, b, "u", 1592171102930, 1), allowed(0))
	d := rlAcquire(t, e, "u", 1592171102930, 1)
	wantDecision(t, "exact second", d, denied(0, 1592171102990))
	if got := d.RetryAfter(1592171102930); got != 60 {
		t.Fatalf("RetryAfter = %d, want 60", got)
	}
}

func TestDecisionHelpers(t *testing.T) {
	cases := []struct {
		d          Decision
		now, after uint64
		str        string
	}{
		{allowed(3), 100, 0, "allowed (remaining 3)"},
		{allowed(0), math.MaxUint64, 0, "allowed (remaining 0)"},
		{denied(0, 150), 100, 50, "denied (remaining 0, retry at 150)"},
		{denied(1, 150), 149, 1, "denied (remaining 1, retry at 150)"},
		{denied(0, 150), 150, 0, "denied (remaining 0, retry at 150)"},
		{denied(0, 150), 200, 0, "denied (remaining 0, retry at 150)"},
		{denied(2, RetryNever), 100, RetryNever, "denied (remaining 2, never)"},
		{denied(0, RetryNever), math.MaxUint64, RetryNever, "denied (remaining 0, never)"},
	}
	for _, c := range cases {
		if got := c.d.RetryAfter(c.now); got != c.after {
			t.Errorf("%+v.RetryAfter(%d) = %d, want %d", c.d, c.now, got, c.after)
		}
		if got := c.d.String(); got != c.str {
			t.Errorf("String = %q, want %q", got, c.str)
		}
	}
	if RetryNever != math.MaxUint64 || RateLimiterExact != 1 || RateLimiterFullAllow != 2 {
		t.Fatal("constants")
	}
}

// ---- the property tests against a reference model ---------------------

// refWindow is the reference state of one sliding window.
type refWindow struct {
	times  []uint64          // exact: grant times, oldest first (one per permit)
	counts map[uint64]uint64 // bucketed: permits per bucket index
}

// refLimiter is a straightforward model of the documented decisions, for a
// clock that never goes backwards: exact mode counts the grants in
// (t-window, t]; bucketed mode the buckets b with b > t/width - nb. With a
// global limit every decision, peek or acquire, granted or not, asks the
// global window too (combineDecisions). With time only moving forward,
// neither the per-key clamping of times nor the reclaim horizon changes a
// decision (a reclaimed key's horizon, its latest time + window, is at most
// the time of the request that reclaimed it), and no bound on keys is set:
// TestRateLimiterBackwardsClock, TestRateLimiterReclaimKeepsExactness and
// TestRateLimiterMaxKeys cover those.
type refLimiter struct {
	exact                bool
	window, width, nb    uint64
	limit, globalLimit   uint64
	overrides            map[string]uint64
	keys                 map[string]*refWindow
	global               refWindow
	grants               map[string][]uint64 // every key's grant times
	allGrants            []uint64
	takes, denials, full int
	// denials of the key that the global window made stricter (fewer
	// remaining or a later retry): the cases where asking the global
	// window only when the key allows would answer otherwise
	globalShaped int
}

func newRefLimiter(exact bool, limit, window, width, globalLimit uint64) *refLimiter {
	m := &refLimiter{exact: exact, window: window, width: width, limit: limit, globalLimit: globalLimit,
		overrides: map[string]uint64{}, keys: map[string]*refWindow{}, grants: map[string][]uint64{}}
	if exact {
		m.width, m.nb = window, 1
	} else {
		m.nb = window / width
	}
	m.global.counts = map[uint64]uint64{}
	return m
}

func (m *refLimiter) win(key string) *refWindow {
	w := m.keys[key]
	if w == nil {
		w = &refWindow{counts: map[uint64]uint64{}}
		m.keys[key] = w
	}
	return w
}

func (m *refLimiter) decideWin(w *refWindow, now, limit, n uint64) Decision {
	var used uint64
	var buckets []uint64
	if m.exact {
		i := 0
		for i < len(w.times) && w.times[i]+m.window <= now {
			i++
		}
		w.times = w.times[i:]
		used = uint64(len(w.times))
	} else {
		head := now / m.width
		for b, c := range w.counts {
			if b+m.nb <= head {
				delete(w.counts, b)
			} else {
				used += c
				buckets = append(buckets, b)
			}
		}
	}
	if n <= limit && used+n <= limit {
		return allowed(limit - used - n)
	}
	var d Decision
	if used < limit {
		d.Remaining = limit - used
	}
	if n > limit {
		d.RetryAt = RetryNever
		return d
	}
	need := used + n - limit
	if m.exact {
		d.RetryAt = w.times[need-1] + m.window
		return d
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i] < buckets[j] })
	var freed uint64
	for _, b := range buckets {
		if freed += w.counts[b]; freed >= need {
			d.RetryAt = (b + m.nb) * m.width
			return d
		}
	}
	panic("unreachable: the window holds more than it counts")
}

func (m *refWindow) take(exact bool, now, width, n uint64) {
	for i := uint64(0); i < n; i++ {
		if exact {
			m.times = append(m.times, now)
		}
	}
	if !exact {
		m.counts[now/width] += n
	}
}

// combineDecisions is the documented rule when a global limit is set, for
// a request of n permits: allowed when both windows allow; the fewer
// remaining permits after the decision (a denial takes nothing, so a window
// that would have granted keeps its n); and, when denied, the later of the
// two retry times (a window that allows contributes 0, one that never can
// RetryNever).
func combineDecisions(key, global Decision, n uint64) Decision {
	d := Decision{Allowed: key.Allowed && global.Allowed}
	kr, gr := key.Remaining, global.Remaining
	if !d.Allowed && key.Allowed {
		kr += n
	}
	if !d.Allowed && global.Allowed {
		gr += n
	}
	d.Remaining = kr
	if gr < d.Remaining {
		d.Remaining = gr
	}
	if !d.Allowed {
		d.RetryAt = key.RetryAt // 0 when the key allows
		if global.RetryAt > d.RetryAt {
			d.RetryAt = global.RetryAt
		}
	}
	return d
}

func (m *refLimiter) decide(key string, now, n uint64, take bool) Decision {
	limit := m.limit
	if o, ok := m.overrides[key]; ok {
		limit = o
	}
	w := m.win(key)
	d := m.decideWin(w, now, limit, n)
	if m.globalLimit != 0 {
		// every decision asks both windows, whether the key allows or not
		kd := d
		d = combineDecisions(kd, m.decideWin(&m.global, now, m.globalLimit, n), n)
		if !kd.Allowed && d != kd {
			m.globalShaped++
		}
	}
	if d.Allowed && take {
		w.take(m.exact, now, m.width, n)
		if m.globalLimit != 0 {
			m.global.take(m.exact, now, m.width, n)
		}
		for i := uint64(0); i < n; i++ {
			m.grants[key] = append(m.grants[key], now)
			m.allGrants = append(m.allGrants, now)
		}
	}
	return d
}

// maxInSpan is the largest number of times (sorted) within any half-open
// interval (t-span, t].
func maxInSpan(times []uint64, span uint64) int {
	best, lo := 0, 0
	for hi := range times {
		for times[lo]+span <= times[hi] {
			lo++
		}
		if hi-lo+1 > best {
			best = hi - lo + 1
		}
	}
	return best
}

// The model test: random traffic of many keys (n of 1 to 3 permits, now and
// then an impossible n, peeks among the acquires, overrides above and below
// the default, a global limit that binds at times), a clock that stands
// still or moves on. Every decision must equal the model's, and the grant
// log must keep the promises: exact mode never more than the limit in any
// window (per key and globally); bucketed mode never more than the limit in
// any window of length window-width+1 and never more than twice the limit
// in any window.
func TestRateLimiterMatchesModel(t *testing.T) {
	const (
		window, width = 1000, 100
		limit         = 6
		globalLimit   = 250
		nkeys         = 400
		requests      = 40000
	)
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, limit, window, width, mode.flags)
		must(t, r.SetGlobalLimit(globalLimit))
		m := newRefLimiter(exact, limit, window, width, globalLimit)
		rng := rand.New(rand.NewSource(23))
		keys := make([]string, nkeys)
		for i := range keys {
			keys[i] = fmt.Sprintf("%d:", i) + string(randomKeys(rng, 1)[0]) // up to 28 bytes: inline and out of line
		}
		for i := 0; i < nkeys; i += 10 {
			o := uint64(1 + rng.Intn(2*limit))
			must(t, r.SetKeyLimitString(keys[i], o))
			m.overrides[keys[i]] = o
		}
		now := uint64(1 + rng.Intn(5000))
		for i := 0; i < requests; i++ {
			if rng.Intn(3) == 0 {
				now += uint64(rng.Intn(25)) // about 250 requests per window: the global limit binds at times
			}
			// a few hot keys, a long tail
			k := keys[rng.Intn(nkeys)]
			if rng.Intn(2) == 0 {
				k = keys[rng.Intn(12)]
			}
			n := uint64(1 + rng.Intn(3))
			if rng.Intn(200) == 0 {
				n = uint64(limit*2 + 1 + rng.Intn(1000)) // above every limit
			}
			take := rng.Intn(5) != 0
			var got Decision
			if take {
				got = rlAcquire(t, r, k, now, n)
			} else {
				got = rlPeek(t, r, k, now, n)
			}
			want := m.decide(k, now, n, take)
			if got != want {
				t.Fatalf("request %d: %s(%q, now %d, n %d) = %+v, the model says %+v",
					i, map[bool]string{true: "Acquire", false: "Peek"}[take], k, now, n, got, want)
			}
			if take && !got.Allowed {
				m.denials++
			}
		}
		// the promises, from the grant log alone
		worst := 0.0 // the most grants of one key within one window, over its limit
		for k, times := range m.grants {
			lim := uint64(limit)
			if o, ok := m.overrides[k]; ok {
				lim = o
			}
			inWindow := maxInSpan(times, window)
			if ratio := float64(inWindow) / float64(lim); ratio > worst {
				worst = ratio
			}
			if exact && uint64(inWindow) > lim {
				t.Fatalf("key %q: %d grants within one window, limit %d", k, inWindow, lim)
			}
			if !exact {
				if got := maxInSpan(times, window-width+1); uint64(got) > lim {
					t.Fatalf("key %q: %d grants within window-width+1, limit %d", k, got, lim)
				}
				if uint64(inWindow) > 2*lim {
					t.Fatalf("key %q: %d grants within one window, more than twice the limit %d", k, inWindow, lim)
				}
			}
		}
		g := maxInSpan(m.allGrants, window)
		if exact && g > globalLimit || !exact && maxInSpan(m.allGrants, window-width+1) > globalLimit {
			t.Fatalf("%d grants of all keys within one window, global limit %d", g, globalLimit)
		}
		t.Logf("%d requests of %d keys: %d permits granted, %d acquires denied (%d key denials shaped by the global window); most grants of one key within a window: %.2f x its limit; of all keys: %d (global limit %d)",
			requests, nkeys, len(m.allGrants), m.denials, m.globalShaped, worst, g, globalLimit)
		// the test is only meaningful if both limits bound often, also
		// together (the key denies and the global window answers fewer
		// remaining permits or a later retry)
		if m.denials < requests/20 || g < globalLimit*9/10 || m.globalShaped < requests/200 {
			t.Fatalf("too few denials (%d), the global limit never reached (%d of %d) or too few key denials shaped by it (%d)",
				m.denials, g, globalLimit, m.globalShaped)
		}
		st := res(r.Stats()).get(t)
		if st.Keys == 0 || st.Keys > nkeys || st.DeniedFull != 0 || st.AllowedFull != 0 {
			t.Fatalf("Stats = %+v", st)
		}
	})
}

// The bucketed mode's worst case: a burst at the last instant of a bucket
// and another at the first instant that bucket has left the window give
// twice the limit within less than one window (the over-admission of the
// Rate Limiter README's algorithm at its most adversarial); exact mode
// admits the limit.
func TestRateLimiterBucketedWorstCase(t *testing.T) {
	const limit, window, width = 5, 1000, 100
	for _, mode := range bothRateModes {
		r := mustRateLimiter(t, limit, window, width, mode.flags)
		var grants []uint64
		for _, now := range []uint64{1099, 2000} { // bucket 10 ends at 1099; it leaves at 2000
			for i := 0; i < 2*limit; i++ {
				if d := rlAcquire(t, r, "adversary", now, 1); d.Allowed {
					grants = append(grants, now)
				}
			}
		}
		got := maxInSpan(grants, window)
		want := limit
		if mode.flags&RateLimiterExact == 0 {
			want = 2 * limit
		}
		t.Logf("%s: %d grants within %d time units (limit %d per window %d)", mode.name, got, 2000-1099+1, limit, window)
		if got != want {
			t.Fatalf("%s: %d grants within one window, want %d", mode.name, got, want)
		}
	}
}

// A clock that goes backwards is clamped per key to the latest time that
// key has seen: nothing is forgotten early.
func TestRateLimiterBackwardsClock(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 3, 1000, 100, mode.flags)
		for i := 0; i < 3; i++ {
			rlAcquire(t, r, "k", 5000, 1)
		}
		// earlier times read as 5000: the window is still full
		for _, now := range []uint64{4999, 4000, 1} {
			wantDecision(t, fmt.Sprintf("Acquire at %d", now), rlAcquire(t, r, "k", now, 1), denied(0, 6000))
			wantDecision(t, fmt.Sprintf("Peek at %d", now), rlPeek(t, r, "k", now, 1), denied(0, 6000))
		}
		wantDecision(t, "at 6000", rlAcquire(t, r, "k", 6000, 1), allowed(2))
		// the key's clock is now 6000: a grant "at 5500" counts from 6000
		wantDecision(t, "at 5500", rlAcquire(t, r, "k", 5500, 2), allowed(0))
		wantDecision(t, "at 6999", rlAcquire(t, r, "k", 6999, 1), denied(0, 7000))
		wantDecision(t, "at 7000", rlAcquire(t, r, "k", 7000, 3), allowed(0))
		// another key has its own clock
		wantDecision(t, "other key at 10", rlAcquire(t, r, "other", 10, 1), allowed(2))
	})
}

// Requests of different keys reach the limiter slightly out of order (each
// thread reads its clock before the call). A key whose own times only move
// forward must still never get more than its limit within one window, even
// when another key's later request found it idle and reclaimed it: the
// shard's reclaim horizon (the reclaimed key's latest time + window) denies
// a key it does not track until then, with retry_at the horizon.
func TestRateLimiterReclaimKeepsExactness(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 1, 100, 10, mode.flags)
		wantDecision(t, "k at 1000", rlAcquire(t, r, "k", 1000, 1), allowed(0))
		// other keys' requests stamped 1100 (k's window is empty then):
		// their sweeps reclaim k
		for i := 0; i < 2000; i++ {
			rlAcquire(t, r, fmt.Sprintf("o%d", i), 1100, 1)
		}
		if st := res(r.Stats()).get(t); st.Reclaimed != 1 || st.Keys != 2000 {
			t.Fatalf("Stats = %+v: k was not reclaimed, the test proves nothing", st)
		}
		// k's next request, stamped 1050 (after k's own 1000): its grant
		// at 1000 is within the window (950, 1050]; peek and acquire
		// agree, and neither tracks k
		wantDecision(t, "peek k at 1050", rlPeek(t, r, "k", 1050, 1), denied(0, 1100))
		wantDecision(t, "k at 1050", rlAcquire(t, r, "k", 1050, 1), denied(0, 1100))
		wantDecision(t, "k at 1099", rlAcquire(t, r, "k", 1099, 1), denied(0, 1100))
		wantKeys(t, r, 2000, "a key denied by the horizon is tracked")
		// from the horizon on, k starts afresh
		wantDecision(t, "k at 1100", rlAcquire(t, r, "k", 1100, 1), allowed(0))
		wantDecision(t, "k again at 1100", rlAcquire(t, r, "k", 1100, 1), denied(0, 1200))
	})
}

// ---- global limit and per-key overrides ------------------------------

func TestRateLimiterGlobalAndOverrides(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, 5, 1000, 100, mode.flags)
		must(t, r.SetGlobalLimit(8))
		// a key with its own, higher limit is still held to the global
		// limit (the original let it bypass)
		must(t, r.SetKeyLimitString("vip", 20))
		for i := uint64(0); i < 6; i++ {
			// remaining: min(20-1-i, 8-1-i)
			wantDecision(t, "vip", rlAcquire(t, r, "vip", 100+i, 1), allowed(7-i))
		}
		// b: its own limit 5 left, the global one only 2
		wantDecision(t, "peek b", rlPeek(t, r, "b", 200, 1), allowed(1))
		wantDecision(t, "b 1", rlAcquire(t, r, "b", 200, 1), allowed(1))
		wantDecision(t, "b 2", rlAcquire(t, r, "b", 200, 1), allowed(0))
		// the global window is full: denied by it, retry when its oldest
		// permit leaves (vip's at 100: bucket 1 leaves at 1100; exact 1100)
		wantDecision(t, "b 3", rlAcquire(t, r, "b", 300, 1), denied(0, 1100))
		wantDecision(t, "vip 7", rlAcquire(t, r, "vip", 300, 1), denied(0, 1100))
		wantDecision(t, "new key", rlAcquire(t, r, "c", 300, 1), denied(0, 1100))
		wantKeys(t, r, 2, "a new key denied by the global limit is tracked")
		// n above the global limit can never be granted
		wantDecision(t, "vip 9 at once", rlAcquire(t, r, "vip", 2000, 9), denied(8, RetryNever))
		// later everything left the window
		wantDecision(t, "vip later", rlAcquire(t, r, "vip", 2000, 8), allowed(0))
		// removing the global limit: vip has its own 20
		must(t, r.SetGlobalLimit(0))
		wantDecision(t, "vip unbounded", rlAcquire(t, r, "vip", 2001, 12), allowed(0))
		wantDecision(t, "vip over", rlAcquire(t, r, "vip", 2001, 1), denied(0, 3000))
		// a lower override applies to a tracked key at once
		wantDecision(t, "d", rlAcquire(t, r, "d", 2001, 2), allowed(3))
		must(t, r.SetKeyLimitString("d", 2))
		// (its permits at 2001: bucket 20 leaves at 3000; exact: at 3001)
		wantDecision(t, "d capped", rlPeek(t, r, "d", 2001, 1), denied(0, pick(exact, 3001, 3000)))
		// and removing it gives the default back
		must(t, r.SetKeyLimit([]byte("d"), 0))
		wantDecision(t, "d default", rlPeek(t, r, "d", 2001, 1), allowed(2))
		// an override persists across Reset and reclamation
		must(t, r.SetKeyLimitString("e", 1))
		wantDecision(t, "e", rlAcquire(t, r, "e", 2001, 1), allowed(0))
		must(t, r.ResetString("e"))
		wantDecision(t, "e after reset", rlAcquire(t, r, "e", 2002, 2), denied(1, RetryNever))
		wantDecision(t, "e long after", rlAcquire(t, r, "e", 90000, 1), allowed(0))
		// binary keys are keys
		bin := []byte{0, 'x', 0, 0xff}
		must(t, r.SetKeyLimit(bin, 1))
		if d, err := r.Acquire(bin, 90000, 1); err != nil || d != allowed(0) {
			t.Fatalf("binary key: %+v, %v", d, err)
		}
		wantDecision(t, "binary key prefix", rlAcquire(t, r, "\x00x", 90000, 1), allowed(4))
	})
}

// With a global limit every decision asks the global window too, also when
// the key itself denies: remaining is the smaller of the two windows', and
// retry_at the later of their retry times (a window that allows contributes
// 0, one that never can RetryNever). The tests of the original binding
// encoded the old rule (the global window asked only when the key allows,
// so a key's denial reported the key's own remaining and retry time);
// these cases tell the two rules apart.
func TestRateLimiterGlobalOnEveryDecision(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		both := func(what string, r *RateLimiter, key string, now, n uint64, want Decision) {
			t.Helper()
			wantDecision(t, "peek "+what, rlPeek(t, r, key, now, n), want)
			wantDecision(t, what, rlAcquire(t, r, key, now, n), want)
		}
		// both deny, the global window later: A alone could retry at
		// 105 with 1 remaining; the global window has no room until 110
		r := mustRateLimiter(t, 2, 100, 5, mode.flags)
		must(t, r.SetGlobalLimit(2))
		wantDecision(t, "A", rlAcquire(t, r, "A", 5, 1), allowed(1))
		wantDecision(t, "B", rlAcquire(t, r, "B", 10, 1), allowed(0))
		both("A 2", r, "A", 15, 2, denied(0, 110))
		// n above the key's limit: never; the global window's 0 remaining
		both("A 3", r, "A", 15, 3, denied(0, RetryNever))
		// at 110 both windows are empty enough
		wantDecision(t, "A 2 at 110", rlAcquire(t, r, "A", 110, 2), allowed(0))

		// both deny, the key later: its own permits leave at 150, the
		// global window's first at 110
		r = mustRateLimiter(t, 2, 100, 10, mode.flags)
		must(t, r.SetGlobalLimit(3))
		wantDecision(t, "B", rlAcquire(t, r, "B", 10, 1), allowed(1))
		wantDecision(t, "A", rlAcquire(t, r, "A", 50, 2), allowed(0))
		both("A over", r, "A", 60, 1, denied(0, 150))
		// B: its key allows (1 left), the global window denies
		both("B", r, "B", 60, 1, denied(0, 110))

		// the key denies, the global window would allow: A keeps 1
		// permit of its own; the global window would have none left
		// after this request, but a denial takes nothing, so it keeps
		// its 2 and the key's 1 is the fewer
		r = mustRateLimiter(t, 5, 100, 10, mode.flags)
		must(t, r.SetGlobalLimit(10))
		wantDecision(t, "A", rlAcquire(t, r, "A", 1, 4), allowed(1))
		wantDecision(t, "B", rlAcquire(t, r, "B", 2, 4), allowed(1))
		both("A 2", r, "A", 3, 2, denied(1, pick(exact, 101, 100)))
		// the key never can (6 above its 5): never, whatever the global
		// window's retry time (101 or 100); the key's 1 remaining is
		// fewer than the global window's 2
		both("A 6", r, "A", 3, 6, denied(1, RetryNever))
		wantDecision(t, "A 1", rlAcquire(t, r, "A", 3, 1), allowed(0))
		wantKeys(t, r, 2)
	})
}

// Acquire brings the key's window and the global window to its time first,
// granted or not (step 1 of the Rate Limiter README), so that a later call with an earlier
// time is clamped to it; Peek moves no clock and changes no byte.
func TestRateLimiterDeniedAcquireMovesClocks(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		// the key's clock: permits at 10, 60 and 70 leave at 110, 160
		// and 170 (bucketed: the same, the buckets are 10 wide)
		r := mustRateLimiter(t, 3, 100, 10, mode.flags)
		for _, now := range []uint64{10, 60, 70} {
			rlAcquire(t, r, "k", now, 1)
		}
		before := res(r.Serialize()).get(t)
		// at 115 the permit of 10 has left: 1 remaining, 2 wanted
		wantDecision(t, "peek at 115", rlPeek(t, r, "k", 115, 2), denied(1, 160))
		if !bytes.Equal(res(r.Serialize()).get(t), before) {
			t.Fatal("a peek changed the limiter")
		}
		// the peek moved nothing: at 50 the key's clock is still 70
		wantDecision(t, "at 50 after the peek", rlAcquire(t, r, "k", 50, 2), denied(0, 160))
		// a denied acquire at 115 moves it: at 50 reads as 115
		wantDecision(t, "at 115", rlAcquire(t, r, "k", 115, 2), denied(1, 160))
		wantDecision(t, "at 50 after the acquire", rlAcquire(t, r, "k", 50, 2), denied(1, 160))
		wantDecision(t, "peek at 50", rlPeek(t, r, "k", 50, 1), allowed(0))

		// the global window's clock: A's permit at 10 leaves at 110, B's
		// at 20 at 120
		r = mustRateLimiter(t, 10, 100, 10, mode.flags)
		must(t, r.SetGlobalLimit(2))
		wantDecision(t, "A", rlAcquire(t, r, "A", 10, 1), allowed(1))
		wantDecision(t, "B", rlAcquire(t, r, "B", 20, 1), allowed(0))
		wantDecision(t, "peek D at 115", rlPeek(t, r, "D", 115, 2), denied(1, 120))
		// the peek left the global clock at 20: both permits count at 50
		wantDecision(t, "E at 50 after the peek", rlAcquire(t, r, "E", 50, 1), denied(0, 110))
		// a denied acquire at 115 brings the global window to 115
		wantDecision(t, "D at 115", rlAcquire(t, r, "D", 115, 2), denied(1, 120))
		wantDecision(t, "E at 50 after the acquire", rlAcquire(t, r, "E", 50, 1), allowed(0))
		wantKeys(t, r, 3, "want A, B and E tracked (D was denied)")
	})
}

// A full table that admits new keys untracked (FullAllow) still holds them
// to the global limit and charges their permits to it; one that denies them
// (the default) answers never and charges nothing. Peek answers the same.
func TestRateLimiterFullTableAndGlobal(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, 5, 100, 10, mode.flags|RateLimiterFullAllow)
		must(t, r.SetGlobalLimit(3))
		must(t, r.SetMaxKeys(1))
		wantDecision(t, "A", rlAcquire(t, r, "A", 5, 1), allowed(2))
		wantDecision(t, "peek B", rlPeek(t, r, "B", 6, 1), allowed(0))
		wantDecision(t, "B (untracked)", rlAcquire(t, r, "B", 6, 1), allowed(0))
		wantDecision(t, "C (untracked)", rlAcquire(t, r, "C", 6, 1), allowed(0))
		// the untracked keys' permits filled the global window
		wantDecision(t, "peek D", rlPeek(t, r, "D", 7, 1), denied(0, pick(exact, 105, 100)))
		wantDecision(t, "D (untracked)", rlAcquire(t, r, "D", 7, 1), denied(0, pick(exact, 105, 100)))
		wantDecision(t, "A", rlAcquire(t, r, "A", 8, 1), denied(0, pick(exact, 105, 100)))
		want := RateLimiterStats{Keys: 1, AllowedFull: 2, Memory: res(r.Memory()).get(t)}
		if st := res(r.Stats()).get(t); st != want {
			t.Fatalf("Stats = %+v, want %+v", st, want)
		}
		// once A's permit has left the global window (bucketed: all
		// three, in bucket 0)
		wantDecision(t, "D later", rlAcquire(t, r, "D", pick(exact, 105, 100), 1), allowed(0))

		r = mustRateLimiter(t, 5, 100, 10, mode.flags)
		must(t, r.SetGlobalLimit(3))
		must(t, r.SetMaxKeys(1))
		wantDecision(t, "A", rlAcquire(t, r, "A", 5, 1), allowed(2))
		wantDecision(t, "peek B", rlPeek(t, r, "B", 6, 1), denied(0, RetryNever))
		wantDecision(t, "B (full)", rlAcquire(t, r, "B", 6, 1), denied(0, RetryNever))
		// B's refusal took nothing from the global window
		wantDecision(t, "A 2", rlAcquire(t, r, "A", 7, 2), allowed(0))
		want = RateLimiterStats{Keys: 1, DeniedFull: 1, Memory: res(r.Memory()).get(t)}
		if st := res(r.Stats()).get(t); st != want {
			t.Fatalf("Stats = %+v, want %+v", st, want)
		}
	})
}

// Equal states give equal blobs, whatever the history of the tables: keys
// and overrides are written in increasing byte order. (The original
// binding's tests could only compare sizes: the old format followed the
// tables' order.)
func TestRateLimiterCanonicalBlob(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	keys := make([][]byte, 300)
	for i, k := range randomKeys(rng, len(keys)) {
		keys[i] = append([]byte(fmt.Sprintf("%d/", i)), k...) // distinct, inline and out of line
	}
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		build := func(order []int, churn bool) []byte {
			r := mustRateLimiter(t, 5, 1000, 100, mode.flags)
			must(t, r.SetGlobalLimit(2000))
			for _, i := range order {
				if i%5 == 0 {
					must(t, r.SetKeyLimit(keys[i], uint64(1+i%7)))
				}
				if churn { // keys and overrides that come and go
					must(t, r.SetKeyLimitString(fmt.Sprintf("gone-%d", i), 3))
					rlAcquire(t, r, fmt.Sprintf("gone-%d", i), 10, 1)
				}
			}
			for _, i := range order {
				if _, err := r.Acquire(keys[i], 10, uint64(1+i%3)); err != nil {
					t.Fatal(err)
				}
				if churn { // the refund gives its permit back to the global window too
					must(t, r.RefundString(fmt.Sprintf("gone-%d", i), 10, 1))
					must(t, r.ResetString(fmt.Sprintf("gone-%d", i)))
					must(t, r.SetKeyLimitString(fmt.Sprintf("gone-%d", i), 0))
				}
			}
			return res(r.Serialize()).get(t)
		}
		order := rng.Perm(len(keys))
		reversed := make([]int, len(order))
		for i, v := range order {
			reversed[len(order)-1-i] = v
		}
		a, b := build(order, false), build(reversed, true)
		if !bytes.Equal(a, b) {
			t.Fatalf("the same state built in another order: %d bytes and %d, first difference at %d", len(a), len(b), firstDiff(a, b))
		}
		// and a blob read back writes the same bytes
		c, err := DeserializeRateLimiter(a)
		must(t, err)
		defer c.Close()
		if again := res(c.Serialize()).get(t); !bytes.Equal(again, a) {
			t.Fatalf("a deserialized blob serializes to other bytes (first difference at %d)", firstDiff(again, a))
		}
	})
}

// ---- peek, refund, reset ------------------------------------------------

func TestRateLimiterPeekRefundReset(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, 4, 100, 10, mode.flags)
		// peeks take nothing and create no key
		for i := 0; i < 10; i++ {
			wantDecision(t, "peek", rlPeek(t, r, "k", 5, 1), allowed(3))
		}
		wantDecision(t, "peek 4", rlPeek(t, r, "k", 5, 4), allowed(0))
		wantDecision(t, "peek 5", rlPeek(t, r, "k", 5, 5), denied(4, RetryNever))
		wantKeys(t, r, 0, "peeks created a key")
		wantDecision(t, "acquire 3", rlAcquire(t, r, "k", 5, 3), allowed(1))
		// the permits taken at 5 leave at 105 (exact), with bucket 0 at 100
		wantDecision(t, "peek 2", rlPeek(t, r, "k", 6, 2), denied(1, pick(exact, 105, 100)))
		wantDecision(t, "peek 1", rlPeek(t, r, "k", 6, 1), allowed(0))
		if ok, err := r.AllowString("k", 15); err != nil || !ok {
			t.Fatalf("Allow = %v, %v", ok, err)
		}
		wantDecision(t, "full", rlAcquire(t, r, "k", 15, 1), denied(0, pick(exact, 105, 100)))
		// refund gives back the most recent permits first
		must(t, r.RefundString("k", 16, 1))
		wantDecision(t, "after refund 1", rlPeek(t, r, "k", 16, 1), allowed(0))
		// more than it took: only what it holds
		must(t, r.Refund([]byte("k"), 16, 100))
		wantDecision(t, "after refund all", rlPeek(t, r, "k", 16, 4), allowed(0))
		wantDecision(t, "take 4", rlAcquire(t, r, "k", 20, 4), allowed(0))
		// an unknown key: a no-op; n = 0: a no-op
		must(t, r.RefundString("nobody", 20, 3))
		must(t, r.RefundString("k", 20, 0))
		wantDecision(t, "still full", rlPeek(t, r, "k", 20, 1), denied(0, 120))
		wantKeys(t, r, 1, "Refund of an unknown key created it")
		// reset forgets the key
		must(t, r.ResetString("k"))
		wantKeys(t, r, 0, "Reset left the key")
		wantDecision(t, "after reset", rlAcquire(t, r, "k", 21, 4), allowed(0))
		must(t, r.ResetString("nobody")) // no-op
		must(t, r.Reset(nil))            // the empty key, untracked
		// the empty key is a key like any other
		if d, err := r.Acquire(nil, 21, 1); err != nil || d != allowed(3) {
			t.Fatalf("empty key: %+v, %v", d, err)
		}
		wantDecision(t, "empty key as string", rlPeek(t, r, "", 21, 1), allowed(2))
	})
	// a refund goes back to the global window too: the key's own permits
	// (its buckets, or its grant times), not the global window's newest
	for _, mode := range bothRateModes {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, 10, 100, 10, mode.flags)
		must(t, r.SetGlobalLimit(3))
		wantDecision(t, mode.name+": a", rlAcquire(t, r, "a", 1, 2), allowed(1))
		wantDecision(t, mode.name+": c", rlAcquire(t, r, "c", 50, 1), allowed(0))
		wantDecision(t, mode.name+": b denied by the global limit", rlAcquire(t, r, "b", 55, 1), denied(0, pick(exact, 101, 100)))
		must(t, r.RefundString("a", 60, 1))
		wantDecision(t, mode.name+": b after a's refund", rlAcquire(t, r, "b", 60, 1), allowed(0))
		// the global window holds a's permit of 1, c's of 50 and b's of 60:
		// 2 more permits need c's gone too (had the refund taken c's, 101)
		wantDecision(t, mode.name+": b 2 more", rlAcquire(t, r, "b", 61, 2), denied(0, 150))
		// reset does not give back: a's permit stays in the global window
		must(t, r.ResetString("a"))
		wantDecision(t, mode.name+": a after reset", rlAcquire(t, r, "a", 62, 1), denied(0, pick(exact, 101, 100)))
		wantDecision(t, mode.name+": a once it left", rlAcquire(t, r, "a", pick(exact, 101, 100), 1), allowed(0))
	}
}

// ---- reclamation and the bound on keys -----------------------------------

// Idle keys (a whole window since their latest request) are reclaimed by
// the requests of other keys, a few slots at a time: 4 slots of the key's
// shard when a new key is inserted, and 8 slots of another shard (round
// robin) every 16th request of a shard.
func TestRateLimiterIdleReclamation(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 5, 100, 10, mode.flags)
		// (the sweep visits the shard of the key requested: every one of
		// the 64 shards must see requests, so many distinct keys)
		const idle, active = 1000, 2000
		for i := 0; i < idle; i++ {
			rlAcquire(t, r, fmt.Sprintf("idle-%d", i), 1+uint64(i%50), 1)
		}
		if st := res(r.Stats()).get(t); st.Keys != idle || st.Reclaimed != 0 {
			t.Fatalf("Stats = %+v, want %d keys", st, idle)
		}
		memIdle, err := r.Memory()
		must(t, err)
		// one window later: 20000 requests of 2000 other keys. Their
		// 2000 insertions, at least ~20 per shard (64 shards: a binomial
		// of mean 31, sd 5.5), sweep >= 80 slots of each shard, and the
		// 18000 requests that follow sweep ~2250 times 4 slots round
		// robin (~140 per shard), in tables of about 64 slots: every
		// slot is visited more than twice
		for i := 0; i < 20000; i++ {
			rlAcquire(t, r, fmt.Sprintf("active-%d", i%active), 200+uint64(i/1000), 1)
		}
		st := res(r.Stats()).get(t)
		if st.Reclaimed != idle || st.Keys != active {
			t.Fatalf("Stats = %+v, want %d reclaimed and %d keys", st, idle, active)
		}
		// a reclaimed key starts afresh
		wantDecision(t, "reclaimed key", rlPeek(t, r, "idle-7", 300, 5), allowed(0))
		memActive, err := r.Memory()
		must(t, err)
		t.Logf("memory: %d bytes with %d keys, %d bytes with %d keys", memIdle, idle, memActive, active)
		// at least a record per key (47 bytes for 1 + 10 buckets, 33 +
		// 24 + 4 * 5 in exact mode: a ring of 32-bit offsets)
		record := uint64(pick(mode.flags&RateLimiterExact != 0, 33+24+4*5, 47))
		if memIdle < idle*record || memActive < active*record {
			t.Fatalf("Memory = %d, %d: less than a %d-byte record per key", memIdle, memActive, record)
		}
	})
}

// The documented memory per key: bucketed with 10 buckets and keys of up to
// 16 bytes, a 47-byte record in a table kept 76-85% full, 55-62 bytes per
// key; exact, a 33-byte record in the same table plus a ring of grant times
// as large as the key's grants: 24 + 4 * 4 bytes for its first one (a
// window of at most 2^31 time units: 32-bit offsets).
func TestRateLimiterMemoryPerKey(t *testing.T) {
	const n, limit = 100000, 10
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, limit, 1000, 100, mode.flags)
		empty, err := r.Memory()
		must(t, err)
		for i := 0; i < n; i++ {
			rlAcquire(t, r, fmt.Sprintf("key-%d", i), 5, 1)
		}
		wantKeys(t, r, uint64(n))
		full, err := r.Memory()
		must(t, err)
		perKey := float64(full-empty) / n
		ring := pick(exact, 24+4*4, 0)
		lo, hi := 55.0, 62.0
		if exact {
			lo, hi = 33/0.85+float64(ring), 33/0.76+float64(ring)
		}
		t.Logf("%.1f bytes per key (%d keys; documented %.1f to %.1f)", perKey, n, lo, hi)
		if perKey < lo-1 || perKey > hi+1 {
			t.Fatalf("%.1f bytes per key, documented %.1f to %.1f", perKey, lo, hi)
		}
	})
}

func TestRateLimiterMaxKeys(t *testing.T) {
	for _, flags := range []RateLimiterFlags{0, RateLimiterExact, RateLimiterFullAllow, RateLimiterExact | RateLimiterFullAllow} {
		t.Run(fmt.Sprintf("flags=%d", flags), func(t *testing.T) {
			r := mustRateLimiter(t, 2, 100, 10, flags)
			must(t, r.SetMaxKeys(3))
			for _, k := range []string{"a", "b", "c"} {
				wantDecision(t, k, rlAcquire(t, r, k, 10, 1), allowed(1))
			}
			d := rlAcquire(t, r, "d", 11, 1)
			failOpen := flags&RateLimiterFullAllow != 0
			if failOpen {
				wantDecision(t, "d (fail open)", d, allowed(0))
			} else {
				wantDecision(t, "d (fail closed)", d, denied(0, RetryNever))
			}
			// tracked keys go on as before
			wantDecision(t, "a", rlAcquire(t, r, "a", 11, 1), allowed(0))
			wantDecision(t, "a over", rlAcquire(t, r, "a", 11, 1), denied(0, 110))
			// the untracked key is not limited (fail open) or never admitted
			for i := 0; i < 5; i++ {
				d := rlAcquire(t, r, "d", 12, 1)
				if d.Allowed != failOpen {
					t.Fatalf("d again: %+v", d)
				}
			}
			st := res(r.Stats()).get(t)
			want := RateLimiterStats{Keys: 3, Memory: res(r.Memory()).get(t)}
			if failOpen {
				want.AllowedFull = 6
			} else {
				want.DeniedFull = 6
			}
			if st != want {
				t.Fatalf("Stats = %+v, want %+v", st, want)
			}
			// a peek at a new key answers what Acquire would (the table is
			// full and no key is idle), without counting it or changing
			// anything
			before := res(r.Serialize()).get(t)
			for _, k := range []string{"d", "never-seen"} {
				if failOpen {
					wantDecision(t, "peek "+k, rlPeek(t, r, k, 12, 1), allowed(0))
				} else {
					wantDecision(t, "peek "+k, rlPeek(t, r, k, 12, 1), denied(0, RetryNever))
				}
			}
			if st2 := res(r.Stats()).get(t); st2 != st {
				t.Fatalf("a peek changed the counters: %+v", st2)
			}
			if !bytes.Equal(res(r.Serialize()).get(t), before) {
				t.Fatal("a peek at a full table changed the limiter")
			}
			// n above the limit: never, full table or not (and not counted)
			wantDecision(t, "peek d, n 3", rlPeek(t, r, "d", 12, 3), denied(2, RetryNever))
			wantDecision(t, "d, n 3", rlAcquire(t, r, "d", 12, 3), denied(2, RetryNever))
			if st2 := res(r.Stats()).get(t); st2 != st {
				t.Fatalf("a request above the limit counted as a full-table request: %+v", st2)
			}
			// Reset frees a place
			must(t, r.ResetString("b"))
			wantDecision(t, "d after reset", rlAcquire(t, r, "d", 13, 1), allowed(1))
			wantKeys(t, r, 3)
			// raising or removing the bound admits new keys
			must(t, r.SetMaxKeys(0))
			wantDecision(t, "e", rlAcquire(t, r, "e", 14, 1), allowed(1))
			wantKeys(t, r, 4)
		})
	}
}

// When the table is full, an idle key is reclaimed to make room for a new
// one ("when it is reached and no idle key can be reclaimed, new keys are
// denied"): here every tracked key is idle.
func TestRateLimiterMaxKeysReclaimsIdle(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 2, 100, 10, mode.flags)
		must(t, r.SetMaxKeys(3))
		for _, k := range []string{"a", "b", "c"} {
			rlAcquire(t, r, k, 10, 1)
		}
		// a window later all three are idle: a peek sees the room (and
		// reclaims nothing)
		wantDecision(t, "peek late-0", rlPeek(t, r, "late-0", 1000, 1), allowed(1))
		if st := res(r.Stats()).get(t); st.Keys != 3 || st.Reclaimed != 0 {
			t.Fatalf("a peek reclaimed: %+v", st)
		}
		for i := 0; i < 3; i++ {
			k := fmt.Sprintf("late-%d", i)
			if d := rlAcquire(t, r, k, 1000, 1); !d.Allowed {
				st := res(r.Stats()).get(t)
				t.Fatalf("%s at 1000 denied (%+v) although every tracked key is idle: %+v", k, d, st)
			}
		}
		if st := res(r.Stats()).get(t); st.Keys != 3 || st.Reclaimed != 3 || st.DeniedFull != 0 {
			t.Fatalf("Stats = %+v", st)
		}
	})
}

// ---- errors ------------------------------------------------------------

func TestRateLimiterConstructorErrors(t *testing.T) {
	bad := []struct {
		limit, window, width uint64
		flags                RateLimiterFlags
	}{
		{0, 1000, 100, 0},
		{0, 1000, 0, RateLimiterExact},
		{5, 0, 100, 0},
		{5, 0, 0, RateLimiterExact},
		{5, 1000, 0, 0},    // no bucket width
		{5, 1000, 300, 0},  // does not divide the window
		{5, 1000, 2000, 0}, // wider than the window
		{5, 4097, 1, 0},    // 4097 buckets
		{RateLimiterMaxKeyLimit + 1, 1000, 100, 0},
		{RateLimiterMaxExactLimit + 1, 1000, 0, RateLimiterExact},
		{math.MaxUint64, 1000, 100, 0},
		{5, 1000, 100, 4},          // an unknown flag
		{5, 1000, 100, 0x80000000}, // an unknown flag
	}
	for _, c := range bad {
		r, err := NewRateLimiter(c.limit, c.window, c.width, WithFlags(c.flags))
		wantRefused(t, fmt.Sprintf("NewRateLimiter(%d, %d, %d, %d)", c.limit, c.window, c.width, c.flags), r, err,
			StatusInvalidArgument)
	}
	// the extremes that are accepted
	good := []struct {
		limit, window, width uint64
		flags                RateLimiterFlags
	}{
		{1, 1, 1, 0},
		{RateLimiterMaxKeyLimit, 4096, 1, RateLimiterFullAllow},
		{RateLimiterMaxExactLimit, math.MaxUint64, 0, RateLimiterExact | RateLimiterFullAllow},
		{5, math.MaxUint64, math.MaxUint64, 0}, // one bucket
		{5, 1000, 7777, RateLimiterExact},      // the width is ignored in exact mode
	}
	for _, c := range good {
		r, err := NewRateLimiter(c.limit, c.window, c.width, WithFlags(c.flags))
		if err != nil {
			t.Fatalf("NewRateLimiter(%d, %d, %d, %d): %v", c.limit, c.window, c.width, c.flags, err)
		}
		d, err := r.AcquireString("k", math.MaxUint64, 1)
		if err != nil || !d.Allowed {
			t.Fatalf("NewRateLimiter(%d, %d, %d, %d): Acquire at MaxUint64 = %+v, %v", c.limit, c.window, c.width, c.flags, d, err)
		}
		r.Close()
	}
}

func TestRateLimiterArgumentErrors(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 5, 1000, 100, mode.flags)
		rlAcquire(t, r, "k", 10, 2)
		before := res(r.Serialize()).get(t)
		k := []byte("k")
		for _, c := range []struct {
			what string
			now  uint64
			n    uint64
		}{{"now 0", 0, 1}, {"n 0", 10, 0}, {"both 0", 0, 0}} {
			d, err := r.Acquire(k, c.now, c.n)
			wantStatus(t, err, StatusInvalidArgument)
			if d != (Decision{}) {
				t.Errorf("Acquire with %s returned %+v", c.what, d)
			}
			_, err = r.AcquireString("k", c.now, c.n)
			wantStatus(t, err, StatusInvalidArgument)
			_, err = r.Peek(k, c.now, c.n)
			wantStatus(t, err, StatusInvalidArgument)
			_, err = r.PeekString("new", c.now, c.n)
			wantStatus(t, err, StatusInvalidArgument)
		}
		_, err := r.Allow(k, 0)
		wantStatus(t, err, StatusInvalidArgument)
		_, err = r.AllowString("k", 0)
		wantStatus(t, err, StatusInvalidArgument)
		wantStatus(t, r.Refund(k, 0, 1), StatusInvalidArgument)
		wantStatus(t, r.RefundString("k", 0, 1), StatusInvalidArgument)
		// limits above the mode's maximum
		max := RateLimiterMaxKeyLimit
		if mode.flags&RateLimiterExact != 0 {
			max = RateLimiterMaxExactLimit
			wantStatus(t, r.SetGlobalLimit(RateLimiterMaxExactGlobal+1), StatusInvalidArgument)
		}
		wantStatus(t, r.SetKeyLimit(k, max+1), StatusInvalidArgument)
		wantStatus(t, r.SetKeyLimitString("k", math.MaxUint64), StatusInvalidArgument)
		// none of them changed anything
		if !bytes.Equal(res(r.Serialize()).get(t), before) {
			t.Fatal("a failed call changed the limiter")
		}
		// huge n: denied for ever, nothing taken, nothing created
		for _, n := range []uint64{6, 1 << 32, math.MaxUint64} {
			wantDecision(t, fmt.Sprintf("n = %d", n), rlAcquire(t, r, "k", 11, n), denied(3, RetryNever))
			wantDecision(t, fmt.Sprintf("new key, n = %d", n), rlAcquire(t, r, "fresh", 11, n), denied(5, RetryNever))
			wantDecision(t, fmt.Sprintf("peek n = %d", n), rlPeek(t, r, "fresh", 11, n), denied(5, RetryNever))
		}
		wantKeys(t, r, 1)
		must(t, r.RefundString("k", 11, math.MaxUint64)) // gives back what it took
		wantDecision(t, "all refunded", rlAcquire(t, r, "k", 12, 5), allowed(0))
		// a failure does not stick; the largest limit is fine
		must(t, r.SetKeyLimit(k, max))
		wantDecision(t, "k at its maximum", rlAcquire(t, r, "k", 13, max-5), allowed(0))
		wantDecision(t, "k over its maximum", rlPeek(t, r, "k", 13, 1), denied(0, pick(mode.flags&RateLimiterExact != 0, 1012, 1000)))
		big := uint64(math.MaxUint64)
		if mode.flags&RateLimiterExact != 0 {
			big = 1 << 16 // (the largest, 2^24, would hold 128 MiB)
		}
		must(t, r.SetGlobalLimit(big))
		wantDecision(t, "after a large global limit", rlAcquire(t, r, "x", 14, 5), allowed(0))
	})
}

// checkRateLimiterClosed calls every method of a limiter and wants a clean ErrNull.
var checkRateLimiterClosed = everyMethodClosed[*RateLimiter]("RateLimiter",
	"SetGlobalLimit SetKeyLimit SetKeyLimitString SetMaxKeys Acquire "+
		"AcquireString Allow AllowString Peek PeekString Refund RefundString Reset ResetString Stats Keys Memory "+
		"Serialize MarshalBinary AcquireBatch AcquireBatchStrings")

func TestRateLimiterClosed(t *testing.T) {
	r, err := NewRateLimiter(5, 1000, 100)
	must(t, err)
	rlAcquire(t, r, "k", 5, 1)
	if got := r.String(); got != "RateLimiter(1 keys)" {
		t.Errorf("String = %q", got)
	}
	r2, err := NewRateLimiter(5, 1000, 0, WithFlags(RateLimiterExact))
	must(t, err)
	checkClosedStates(t, checkRateLimiterClosed, r, r2)
}

// ---- serialization ---------------------------------------------------------

// buildBusyLimiter fills a limiter with everything its blob holds: keys
// inline and out of line, overrides (of tracked and untracked keys), a
// global window, a bound on keys and non-zero counters.
func buildBusyLimiter(t *testing.T, flags RateLimiterFlags) (*RateLimiter, [][]byte, uint64) {
	t.Helper()
	r := mustRateLimiter(t, 7, 1000, 50, flags)
	must(t, r.SetGlobalLimit(5000)) // held in the blob; (almost) never binding
	rng := rand.New(rand.NewSource(31))
	keys := randomKeys(rng, 600)
	for i := 0; i < 600; i += 7 {
		must(t, r.SetKeyLimit(keys[i], uint64(1+i%11)))
	}
	must(t, r.SetKeyLimitString("never-seen", 3))
	now := uint64(10000)
	for i := 0; i < 5000; i++ {
		if _, err := r.Acquire(keys[rng.Intn(len(keys))], now, uint64(1+rng.Intn(2))); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			now++ // 500 time units in all: no key is idle at the end
		}
	}
	st := res(r.Stats()).get(t)
	must(t, r.SetMaxKeys(st.Keys+20)) // room for 20 more
	for i := 0; i < 50; i++ {
		if _, err := r.AcquireString(fmt.Sprintf("overflow-%d", i), now, 1); err != nil {
			t.Fatal(err)
		}
	}
	return r, keys, now
}

func TestRateLimiterSerializeRoundTrip(t *testing.T) {
	for _, mode := range bothRateModes {
		for _, failOpen := range []RateLimiterFlags{0, RateLimiterFullAllow} {
			t.Run(fmt.Sprintf("%s/flags=%d", mode.name, mode.flags|failOpen), func(t *testing.T) {
				r, keys, now := buildBusyLimiter(t, mode.flags|failOpen)
				st := res(r.Stats()).get(t)
				if st.DeniedFull+st.AllowedFull == 0 {
					t.Fatalf("the table never filled: %+v", st)
				}
				blob := res(r.Serialize()).get(t)
				c, err := DeserializeRateLimiter(blob)
				must(t, err)
				defer c.Close()
				// the copy's memory may be less: its tables and exact rings
				// are as large as what the blob holds
				got := res(c.Stats()).get(t)
				counters, want := got, st
				counters.Memory, want.Memory = 0, 0
				if counters != want || got.Memory == 0 || got.Memory > st.Memory {
					t.Fatalf("copy Stats %+v, original %+v", got, st)
				}
				// The copy holds the same state, and equal states give equal
				// blobs (overrides and keys in increasing byte order,
				// whatever the tables' history): the same bytes. (The
				// original binding could only compare sizes: the old format
				// followed the tables' order.)
				again := res(c.Serialize()).get(t)
				if !bytes.Equal(again, blob) {
					t.Fatalf("the copy serializes to other bytes (%d, the original %d; first difference at %d)",
						len(again), len(blob), firstDiff(again, blob))
				}
				c2, err := DeserializeRateLimiter(again)
				must(t, err)
				if third := res(c2.Serialize()).get(t); !bytes.Equal(third, blob) {
					t.Fatalf("a second round trip gives other bytes (first difference at %d)", firstDiff(third, blob))
				}
				must(t, c2.Close())
				// and answers, and goes on, exactly as the original (without
				// the bound on keys: which idle keys are reclaimed first, and
				// so which new keys find room, is the table's business)
				must(t, r.SetMaxKeys(0))
				must(t, c.SetMaxKeys(0))
				probe := append([][]byte{[]byte("never-seen"), []byte("overflow-3"), []byte("overflow-49")}, keys...)
				rng := rand.New(rand.NewSource(77))
				for step := 0; step < 4000; step++ {
					k := probe[rng.Intn(len(probe))]
					n := uint64(1 + rng.Intn(3))
					if step%1000 == 0 {
						now += 300
					}
					a, err := r.Peek(k, now, n)
					must(t, err)
					b, err := c.Peek(k, now, n)
					must(t, err)
					if a != b {
						t.Fatalf("Peek(%q, %d, %d): copy %+v, original %+v", k, now, n, b, a)
					}
					a, err = r.Acquire(k, now, n)
					must(t, err)
					b, err = c.Acquire(k, now, n)
					must(t, err)
					if a != b {
						t.Fatalf("Acquire(%q, %d, %d): copy %+v, original %+v", k, now, n, b, a)
					}
				}
				// independent: resetting the original leaves the copy
				must(t, r.Reset(keys[0]))
				must(t, r.SetGlobalLimit(0))
				if res(c.Stats()).get(t).Keys == res(r.Stats()).get(t).Keys {
					t.Fatal("Reset of the original changed the copy")
				}
			})
		}
	}
}

// A restart forgets nobody who is limited: a key denied before is denied
// after, until the same time.
func TestRateLimiterRestartKeepsLimits(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 3, 60000, 1000, mode.flags)
		rlAcquire(t, r, "heavy", 1000, 3)
		before := rlAcquire(t, r, "heavy", 30000, 1)
		if before.Allowed {
			t.Fatal("not limited before the restart")
		}
		blob, err := r.MarshalBinary()
		must(t, err)
		must(t, r.Close())
		var restored RateLimiter
		must(t, restored.UnmarshalBinary(blob))
		defer restored.Close()
		wantDecision(t, "after restart", rlAcquire(t, &restored, "heavy", 30001, 1), before)
		wantDecision(t, "at retry", rlAcquire(t, &restored, "heavy", before.RetryAt, 3), allowed(0))
	})
}

func TestRateLimiterBinaryMarshaler(t *testing.T) {
	src := mustRateLimiter(t, 2, 100, 10, 0)
	rlAcquire(t, src, "k", 5, 2)
	other := mustRateLimiter(t, 9, 1000, 0, RateLimiterExact)
	rlAcquire(t, other, "old", 5, 1)
	checkBinaryMarshaler(t, src, other, func(t *testing.T, r *RateLimiter) string {
		k, old := rlPeek(t, r, "k", 6, 1), rlPeek(t, r, "old", 6, 1)
		wantDecision(t, "k", k, denied(0, 100))
		wantDecision(t, "old", old, allowed(1))
		return fmt.Sprint(k, old)
	})
}

func TestRateLimiterDeserializeErrors(t *testing.T) {
	own := readGoldenBlob(t, "rate_limiter_v1")
	cases := append(envelopeCases(t, own),
		blobCase{"limit 0 (resealed)", resealedWith(own, 0, putU64(0)), ErrCorrupt},
		blobCase{"window 0 (resealed)", resealedWith(own, 8, putU64(0)), ErrCorrupt},
		blobCase{"width not dividing (resealed)", resealedWith(own, 16, putU64(300)), ErrCorrupt},
		blobCase{"limit too large (resealed)", resealedWith(own, 0, putU64(RateLimiterMaxKeyLimit+1)), ErrCorrupt})
	checkRefusedBlobs(t, cases, DeserializeRateLimiter, checkRateLimiterClosed)
}

func TestRateLimiterFinalizerFreesUnclosed(t *testing.T) {
	before := waitFreed(0, 5*time.Second)
	func() {
		for i := 0; i < 20; i++ {
			r, err := NewRateLimiter(5, 1000, 100, WithFlags(RateLimiterFlags(i%2)))
			must(t, err)
			rlAcquire(t, r, "k", 1, 1)
			// dropped without Close
		}
		var z RateLimiter
		must(t, z.UnmarshalBinary(readGoldenBlob(t, "rate_limiter_exact_v1")))
		// dropped without Close too
	}()
	if left := waitFreed(before, 10*time.Second); left > before {
		t.Fatalf("the finalizers left %d native objects, want %d", left, before)
	}
}

// Info holds the parameters as created and as set since; Stats the memory
// Memory reports.
func TestRateLimiterInfo(t *testing.T) {
	r := mustRateLimiter(t, 5, 1000, 100, RateLimiterFullAllow)
	want := RateLimiterInfo{Limit: 5, Window: 1000, BucketWidth: 100, Flags: RateLimiterFullAllow}
	if got := res(r.Info()).get(t); got != want {
		t.Fatalf("Info = %+v, want %+v", got, want)
	}
	must(t, r.SetGlobalLimit(40))
	must(t, r.SetMaxKeys(100))
	want.GlobalLimit, want.MaxKeys = 40, 100
	if got := res(r.Info()).get(t); got != want {
		t.Fatalf("Info = %+v, want %+v", got, want)
	}
	e := mustRateLimiter(t, 7, 500, 77, RateLimiterExact)
	if got, want := res(e.Info()).get(t), (RateLimiterInfo{Limit: 7, Window: 500, Flags: RateLimiterExact}); got != want {
		t.Fatalf("exact: Info = %+v, want %+v (no bucket width)", got, want)
	}
	// a seed: kept, in Info and through a blob; the decisions are a seed's
	// business only through the shard a key lands in, never its answer
	seeded, err := NewRateLimiter(5, 1000, 100, WithSeed(0xC0FFEE), WithFlags(RateLimiterFullAllow))
	must(t, err)
	defer seeded.Close()
	want = RateLimiterInfo{Limit: 5, Window: 1000, BucketWidth: 100, Flags: RateLimiterFullAllow, Seed: 0xC0FFEE}
	if got := res(seeded.Info()).get(t); got != want {
		t.Fatalf("seeded: Info = %+v, want %+v", got, want)
	}
	plain := mustRateLimiter(t, 5, 1000, 100, RateLimiterFullAllow)
	for i := uint64(1); i <= 7; i++ {
		a, b := rlAcquire(t, plain, "s", 10+i, 1), rlAcquire(t, seeded, "s", 10+i, 1)
		if a != b {
			t.Fatalf("request %d: seed 0 decides %+v, seed 0xC0FFEE %+v", i, a, b)
		}
	}
	back, err := DeserializeRateLimiter(res(seeded.Serialize()).get(t))
	must(t, err)
	defer back.Close()
	if got := res(back.Info()).get(t); got != want {
		t.Fatalf("seeded, through a blob: Info = %+v, want %+v", got, want)
	}
	rlAcquire(t, r, "k", 1, 1)
	if st, mem := res(r.Stats()).get(t), res(r.Memory()).get(t); st.Memory != mem || mem == 0 || st.Keys != 1 {
		t.Fatalf("Stats = %+v, Memory = %d", st, mem)
	}
}
