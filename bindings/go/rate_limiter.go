package temporalfilters

import (
	"fmt"
	"runtime"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/internal/native"
)

// The creation flags of a RateLimiter (WithFlags), the C library's
// TF_RATE_LIMITER_* values.
const (
	// RateLimiterExact keeps the times of each key's last Limit grants:
	// never more than Limit grants in any window of length Window (no
	// over-admission).
	RateLimiterExact RateLimiterFlags = RateLimiterFlags(native.TF_RATE_LIMITER_EXACT)
	// RateLimiterFullAllow admits the requests of new keys without tracking
	// them when the table holds SetMaxKeys keys and none is idle (fail
	// open): allowed with Remaining 0, yet still held to the global limit
	// and charged to it. Without it they are denied with RetryAt =
	// RetryNever (fail closed).
	RateLimiterFullAllow RateLimiterFlags = RateLimiterFlags(native.TF_RATE_LIMITER_FULL_ALLOW)
)

// The ranges of a RateLimiter's limits (temporalfilters/rate_limiter.h).
// RateLimiterMaxExactGlobal is a literal: the header states 2^24 in the
// documentation of tf_rate_limiter_set_global_limit, with no macro.
const (
	RateLimiterMaxKeyLimit    uint64 = uint64(native.TF_RATE_LIMITER_MAX_KEY_LIMIT)   // per-key limit, bucketed mode
	RateLimiterMaxExactLimit  uint64 = uint64(native.TF_RATE_LIMITER_MAX_EXACT_LIMIT) // per-key limit, Exact mode
	RateLimiterMaxBuckets     uint64 = uint64(native.TF_RATE_LIMITER_MAX_BUCKETS)     // Window / BucketWidth, bucketed mode
	RateLimiterMaxExactGlobal uint64 = 1 << 24                                        // global limit, Exact mode
)

// Decision is the answer of RateLimiter.Acquire and RateLimiter.Peek.
//
// With a global limit set (SetGlobalLimit), every decision asks both the
// key's window and the global window, whether the key allows or not:
// Allowed when both allow, Remaining the smaller of the two, RetryAt the
// later of the two windows' retry times (a window that allows contributes
// 0, one that never can RetryNever).
type Decision struct {
	// Allowed is true when the n permits were granted (Acquire took them).
	Allowed bool
	// Remaining is the number of permits the key has left in the window
	// after the decision (after a denial: what it has now), bounded by the
	// global window's when a global limit is set, granted or not (0 for a
	// new key admitted untracked by RateLimiterFullAllow, and for a key a reclaim
	// horizon denies).
	Remaining uint64
	// RetryAt is 0 when allowed; otherwise the earliest time at which the
	// same request would be granted if nothing else happened (a key not
	// tracked that asks before its shard's reclaim horizon: the horizon),
	// or RetryNever when it never can be.
	RetryAt uint64
}

// RetryAfter is how long to wait from now before retrying (an HTTP
// Retry-After, in the caller's time unit): 0 when allowed (or when RetryAt
// has already come), RetryNever when the request can never be granted,
// RetryAt-now otherwise.
func (d Decision) RetryAfter(now uint64) uint64 {
	switch {
	case d.Allowed:
		return 0
	case d.RetryAt == RetryNever:
		return RetryNever
	case d.RetryAt <= now:
		return 0
	}
	return d.RetryAt - now
}

// String formats every field of the decision, e.g. "allowed (remaining 3)",
// "denied (remaining 0, retry at 1900)" or "denied (remaining 2, never)".
func (d Decision) String() string {
	switch {
	case d.Allowed:
		return fmt.Sprintf("allowed (remaining %d)", d.Remaining)
	case d.RetryAt == RetryNever:
		return fmt.Sprintf("denied (remaining %d, never)", d.Remaining)
	}
	return fmt.Sprintf("denied (remaining %d, retry at %d)", d.Remaining, d.RetryAt)
}

// RateLimiterInfo holds the parameters of a RateLimiter.
type RateLimiterInfo struct {
	Limit       uint64           // the default limit: requests per window and key
	Window      uint64           // the window's length, in the caller's time unit
	BucketWidth uint64           // the width of a bucket (bucketed mode); 0 with RateLimiterExact
	Flags       RateLimiterFlags // the creation flags
	GlobalLimit uint64           // the global limit over all keys (SetGlobalLimit); 0 when none
	MaxKeys     uint64           // the most keys tracked at once (SetMaxKeys); 0 for no bound
	Seed        uint32           // the hash seed (WithSeed)
}

// RateLimiterStats holds the counters of a RateLimiter and its memory.
type RateLimiterStats struct {
	Keys        uint64 // keys tracked now
	Reclaimed   uint64 // idle keys reclaimed so far
	DeniedFull  uint64 // requests of new keys denied because the table was full
	AllowedFull uint64 // requests of new keys admitted untracked because it was full (RateLimiterFullAllow)
	Memory      uint64 // bytes of C memory held (as Memory)
}

// RateLimiter is the sliding-window rate limiter: "may this key make another
// request now?" Each key may make at most Limit requests per Window time
// units (the caller's unit). Two modes:
//
//   - bucketed (flags 0; the algorithm of the Rate Limiter README): the window
//     is split into Window/BucketWidth buckets, a key's state is a fixed ring
//     of bucket counts. A bucket leaves the window as a whole, so a request
//     may be admitted up to BucketWidth-1 time units early: a key never gets
//     more than Limit grants within any Window-BucketWidth+1 time units, and
//     so at most 2*Limit within a window of length Window (a burst at the end
//     of a bucket and another the moment that bucket leaves; random traffic
//     gets far less). Memory: a 47-byte record per key for 10 buckets and keys
//     of up to 16 bytes (25 + 2*(buckets+1) in general; longer keys are stored
//     apart), in a table kept 76-85% full: 55-62 bytes per key (Memory reports
//     the total).
//   - RateLimiterExact: a key keeps the times of its last Limit grants; never
//     more than Limit grants in any half-open interval (t-Window, t]. Memory:
//     a 33-byte record per key in the same table and a ring of grant times
//     that grows with the key's grants, at most 24 + 4*Limit bytes (24 +
//     8*Limit for a Window of more than 2^31 time units).
//
// A global limit (SetGlobalLimit) caps all keys together in the same window;
// a key with its own limit (SetKeyLimit) is still held to it, and so is a
// new key admitted untracked by RateLimiterFullAllow. With a global limit
// set, every decision consults both windows (see Decision).
//
// A key is idle once a whole window has passed since its latest request.
// Idle keys are reclaimed a few slots at a time, never by a full scan: 4
// slots of the key's shard when a new key is inserted, and 8 slots of
// another shard (round robin) every 16th request of a shard. A reclaimed key
// starts afresh; since another key's later time may reclaim a key whose own
// clock runs behind, each shard remembers its reclaim horizon (the latest
// time + Window of any key it reclaimed), and a key it does not track that
// asks before the horizon is denied until then (RetryAt = the horizon,
// Remaining 0): a lagging clock never earns a key extra permits. SetMaxKeys
// bounds the number of tracked keys (see there; Stats counts the new keys
// denied or admitted untracked).
//
// Timestamps are uint64 in the caller's unit, >= 1 (0 is rejected with
// ErrInvalidArgument). Acquire first brings the key's window, and the global
// window, to its now, granted or not; a clock that goes backwards is
// clamped, per key and for the global window, to the latest time seen, so
// nothing is forgotten early. Peek moves no clock. RetryAt values are
// timestamps too; RetryNever (math.MaxUint64) means the request can never be
// granted.
//
// Thread safety: every method may be called from any number of goroutines at
// once (the C limiter has 64 sharded locks; decisions on one key are
// linearizable), Close included: it waits for the calls in flight, and the
// calls after it return ErrClosed. UnmarshalBinary needs exclusive use.
// Serialize takes a consistent snapshot under load (see there).
//
// Create one with NewRateLimiter or DeserializeRateLimiter, or decode into a
// zero RateLimiter with UnmarshalBinary. Call Close when done. Copies of a
// RateLimiter value share the same C limiter.
type RateLimiter struct {
	h *handle
}

// NewRateLimiter creates a limiter that grants each key at most limit
// requests per window time units.
//
// limit is >= 1 (at most RateLimiterMaxKeyLimit, RateLimiterMaxExactLimit
// with RateLimiterExact); window >= 1; bucketWidth (bucketed mode) divides
// window, with window/bucketWidth <= RateLimiterMaxBuckets; with
// RateLimiterExact it is ignored and may be 0. Options: WithSeed (the hash
// seed, default 0: when keys come from clients, use a random secret seed,
// so that nobody can choose keys that crowd one shard) and WithFlags
// (RateLimiterExact, RateLimiterFullAllow; default 0).
// Errors: ErrInvalidArgument, ErrOutOfMemory.
func NewRateLimiter(limit, window, bucketWidth uint64, opts ...Option) (*RateLimiter, error) {
	return build[RateLimiter](rateLimiterKind, "NewRateLimiter", optSeed|optFlags, opts,
		func(seed uint32, flags RateLimiterFlags) uintptr {
			return native.NewRateLimiterNative(limit, window, bucketWidth, uint(seed), uint(flags)).Swigcptr()
		})
}

// SetGlobalLimit caps all keys together at limit permits per window (0
// removes the cap). Every decision then consults the global window too,
// whether the key allows or not: a request is granted only when both the
// key and the global window allow it, Remaining is the smaller of the two
// and RetryAt the later (see Decision). A key with its own limit, and a new
// key admitted untracked by RateLimiterFullAllow, are held to it too. Setting it
// starts the global window empty (the keys' own windows are kept), its
// clock just past the latest time any key has seen, so that a refund of a
// permit taken before goes back to its key only. In RateLimiterExact
// mode the global window keeps the times of its grants in the window (4 bytes
// each, 8 for a Window of more than 2^31 time units), in a ring that grows
// with them (limit at most RateLimiterMaxExactGlobal). Errors: ErrInvalidArgument, ErrOutOfMemory
// (nothing changed), ErrClosed.
func (r *RateLimiter) SetGlobalLimit(limit uint64) error {
	return run(r.obj(), func(p rlNative) { p.Set_global_limit(limit) })
}

// SetKeyLimit gives key its own limit instead of the default (0 removes the
// override). The override persists while the key is idle or reclaimed, and
// the key is still held to the global limit. Lowering the limit of a key
// below what it holds denies it until enough permits leave (Exact mode
// keeps its newest grants that fit). Errors: ErrInvalidArgument (limit
// above the mode's maximum), ErrOutOfMemory, ErrClosed.
func (r *RateLimiter) SetKeyLimit(key []byte, limit uint64) error {
	return run(r.obj(), func(p rlNative) {
		k, kn := bridge.Key(key)
		p.Set_key_limit(k, kn, limit)
		runtime.KeepAlive(key)
	})
}

// SetKeyLimitString is SetKeyLimit with a string key (its bytes, e.g. UTF-8).
func (r *RateLimiter) SetKeyLimitString(key string, limit uint64) error {
	return r.SetKeyLimit(stringBytes(key), limit)
}

// SetMaxKeys bounds the number of keys tracked at once (0: no bound). When
// the bound is reached, a new key first reclaims an idle key (16 slots of
// its own shard, then 16 slots of every other shard whose lock is free; after
// a search that found nothing, the next 63 new keys look at their own shard
// only). When none is found its request is denied with Remaining 0 and
// RetryAt = RetryNever (counted in RateLimiterStats.DeniedFull), or with
// RateLimiterFullAllow admitted without being tracked: allowed with Remaining 0, still
// held to the global limit and charged to it (counted in AllowedFull when
// granted). Peek answers a new key the same way, looking for an idle key
// without reclaiming it and counting nothing. Keys already tracked are not
// affected, and a bound below the keys tracked now evicts nobody.
// Errors: ErrClosed.
func (r *RateLimiter) SetMaxKeys(maxKeys uint64) error {
	return run(r.obj(), func(p rlNative) { p.Set_max_keys(maxKeys) })
}

// decide is Acquire (take) or Peek.
func (r *RateLimiter) decide(key []byte, now, n uint64, take bool) (Decision, error) {
	return call(r.obj(), func(p rlNative) (d Decision) {
		decide := p.Peek
		if take {
			decide = p.Acquire
		}
		k, kn := bridge.Key(key)
		d.Allowed = decide(k, kn, now, n, &d.Remaining, &d.RetryAt) != 0
		runtime.KeepAlive(key)
		return d
	})
}

// Acquire asks for n (>= 1) permits for key at time now (>= 1) and takes
// them when allowed; a denial takes nothing. Granted or not, it first
// brings the key's window (and the global window) to now, like step 1 of
// the Rate Limiter README: a later call with an earlier time is clamped to
// it. n above the
// key's limit (or the global limit) is denied with RetryAt = RetryNever;
// so is a new key when the table is full (SetMaxKeys) without RateLimiterFullAllow.
// With a global limit, see Decision for how both windows decide.
// Errors: ErrInvalidArgument (now or n is 0), ErrOutOfMemory (the table
// could not grow; nothing changed), ErrClosed.
func (r *RateLimiter) Acquire(key []byte, now, n uint64) (Decision, error) {
	return r.decide(key, now, n, true)
}

// AcquireString is Acquire with a string key.
func (r *RateLimiter) AcquireString(key string, now, n uint64) (Decision, error) {
	return r.decide(stringBytes(key), now, n, true)
}

// Allow is Acquire of one permit, reduced to its answer.
func (r *RateLimiter) Allow(key []byte, now uint64) (bool, error) {
	d, err := r.decide(key, now, 1, true)
	return d.Allowed, err
}

// AllowString is Allow with a string key.
func (r *RateLimiter) AllowString(key string, now uint64) (bool, error) {
	d, err := r.decide(stringBytes(key), now, 1, true)
	return d.Allowed, err
}

// AcquireBatch is Acquire(keys[i], times[i], n) for every key, in order, in
// one call into C: the same decisions, in the order of the keys, and the
// same state afterwards as those single calls, but the C library fetches
// the table lines of the next keys while it decides one, so their cache
// misses overlap (about twice the throughput of single calls on a limiter
// of a million keys, whose table outgrows the CPU's caches), and the cost of
// a cgo call is paid once. Use it where requests arrive together: a server
// that gathers the requests of one event-loop tick, a gateway admitting a
// queue. The batch is not atomic: other goroutines' calls may come between
// its keys.
//
// Every argument is checked before any decision, so a refused call changes
// nothing. Errors: ErrInvalidArgument (len(times) != len(keys), a zero
// time, n is 0, even for an empty batch), ErrOutOfMemory (a key could not
// be tracked; the decisions before it stand but are not returned), ErrClosed.
func (r *RateLimiter) AcquireBatch(keys [][]byte, times []uint64, n uint64) ([]Decision, error) {
	return acquireBatch(r, keys, times, n)
}

// AcquireBatchStrings is AcquireBatch with string keys.
func (r *RateLimiter) AcquireBatchStrings(keys []string, times []uint64, n uint64) ([]Decision, error) {
	return acquireBatch(r, keys, times, n)
}

func acquireBatch[K key](r *RateLimiter, keys []K, times []uint64, n uint64) ([]Decision, error) {
	return batch(r.obj(), keys, func(p rlNative, data []byte, lens []int32) []Decision {
		count := len(lens)
		allowed := make([]int32, count)
		out := make([]uint64, 2*count) // remaining, then retry at
		p.Acquire_batch(data, lens, times, n, allowed, out[:count:count], out[count:])
		ds := make([]Decision, count)
		for i := range ds {
			ds[i] = Decision{Allowed: allowed[i] != 0, Remaining: out[i], RetryAt: out[count+i]}
		}
		return ds
	})
}

// Peek is the decision Acquire would make at now, without changing
// anything: no permit taken, no clock moved (neither the key's nor the
// global window's), no key created or reclaimed; on a full table it looks
// for an idle key without removing it, and it counts nothing in Stats. The
// serialized state is the same before and after. Errors: ErrInvalidArgument
// (now or n is 0), ErrClosed.
func (r *RateLimiter) Peek(key []byte, now, n uint64) (Decision, error) {
	return r.decide(key, now, n, false)
}

// PeekString is Peek with a string key.
func (r *RateLimiter) PeekString(key string, now, n uint64) (Decision, error) {
	return r.decide(stringBytes(key), now, n, false)
}

// Refund gives back up to n permits key took (the most recent first), e.g.
// for a request that was not served after all; they go back to the global
// window too (the same buckets, or grant times, as the key's, if they are
// still in it). A key not tracked is a no-op. Errors: ErrInvalidArgument
// (now is 0), ErrClosed.
func (r *RateLimiter) Refund(key []byte, now, n uint64) error {
	return run(r.obj(), func(p rlNative) {
		k, kn := bridge.Key(key)
		p.Refund(k, kn, now, n)
		runtime.KeepAlive(key)
	})
}

// RefundString is Refund with a string key.
func (r *RateLimiter) RefundString(key string, now, n uint64) error {
	return r.Refund(stringBytes(key), now, n)
}

// Reset forgets key's requests (its override, if any, stays). The permits
// it took stay counted in the global window. Errors: ErrClosed.
func (r *RateLimiter) Reset(key []byte) error {
	return run(r.obj(), func(p rlNative) {
		k, kn := bridge.Key(key)
		p.Reset(k, kn)
		runtime.KeepAlive(key)
	})
}

// ResetString is Reset with a string key.
func (r *RateLimiter) ResetString(key string) error {
	return r.Reset(stringBytes(key))
}

// Stats returns the counters and the memory. Each counter is read
// atomically, but under concurrent use they are not one snapshot; nor is
// the memory, which takes no lock (each part as of some recent moment).
// Errors: ErrClosed.
func (r *RateLimiter) Stats() (RateLimiterStats, error) { return rateLimiterStats(r.obj()) }

// Info returns the limiter's parameters: those it was created with, the
// global limit and the bound on keys. Errors: ErrClosed.
func (r *RateLimiter) Info() (RateLimiterInfo, error) { return rateLimiterInfo(r.obj()) }

// Keys returns the number of keys tracked now. Errors: ErrClosed.
func (r *RateLimiter) Keys() (uint64, error) { v, err := r.Stats(); return v.Keys, err }

// Serialize writes the whole state in the library's portable wire format
// (kind 4), readable by DeserializeRateLimiter and by the other languages'
// bindings, so that a restarted service forgets nobody who is limited.
// Equal states give equal bytes: keys and overrides are written in
// increasing byte order, whatever the history of the tables.
//
// Serialize may run while other goroutines use the limiter: the C library
// takes every lock of the limiter while it writes, so the blob is one
// consistent moment (their calls wait meanwhile). Measuring the size and
// writing are two calls; when the limiter grows between them, it is
// measured and written again with room to spare.
// Errors: ErrClosed, ErrBufferTooSmall (the size kept changing).
func (r *RateLimiter) Serialize() ([]byte, error) { return r.obj().serialize() }

// String describes the limiter, e.g. "RateLimiter(12 keys)".
func (r *RateLimiter) String() string {
	return describe("RateLimiter", r.Keys, func(n uint64) string { return fmt.Sprintf("%d keys", n) })
}
