// Package redis is the rate limiter of temporalfilters with its state in
// Redis (a server or a Redis Cluster), shared by every process that uses the
// same server and prefix: the configuration, the results and the decisions
// of temporalfilters.RateLimiter on the same request sequence (one
// exception on the caller's clock: see SetGlobalLimit), each decision one
// Lua script on the server (include/temporalfilters/redis.h, docs/redis.md
// in the project).
//
// A package of its own with its own native module, linked with
// libtemporalfilters-redis (#cgo pkg-config: temporalfilters-redis), so that
// the package temporalfilters needs neither that library nor hiredis.
//
// Failures of Redis: when Redis cannot answer (a stopped server, a timeout)
// Acquire, Peek and AcquireBatch return the fallback's decision chosen at
// creation (WithFallback: deny, allow or an embedded limiter) together with
// an error of the family temporalfilters.ErrUnavailable (status
// StatusTimeout or StatusUnavailable); Stats counts both. The other methods
// return the error alone. The connection comes back by itself after a
// backoff.
//
// Thread safety: a RedisLimiter holds its connections and serializes its
// calls with a mutex; for parallel decisions use one RedisLimiter per
// goroutine (or a pool). Limiters of the same prefix share the state in
// Redis.
package redis

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"sync"

	tf "temporalfilters.org/go/temporalfilters"
	"temporalfilters.org/go/temporalfilters/internal/bridge"
	"temporalfilters.org/go/temporalfilters/redis/internal/redisnative"
)

// TimeSource says whose clock a decision uses (WithTimeSource).
type TimeSource uint32

// Fallback is what a decision answers when Redis cannot (WithFallback).
type Fallback uint32

const (
	// TimeCaller: the caller's now (the default; the idle expiry counts it
	// as milliseconds unless WithIdleExpiry says otherwise).
	TimeCaller = TimeSource(redisnative.TF_REDIS_TIME_CALLER)
	// TimeServer: the server's TIME in milliseconds; pass now = 0.
	TimeServer = TimeSource(redisnative.TF_REDIS_TIME_SERVER)

	// FallbackDeny denies (fail closed; the default).
	FallbackDeny = Fallback(redisnative.TF_REDIS_FALLBACK_DENY)
	// FallbackAllow allows (fail open).
	FallbackAllow = Fallback(redisnative.TF_REDIS_FALLBACK_ALLOW)
	// FallbackLocal decides with an embedded RateLimiter of the same
	// limits, one per RedisLimiter (per handle, not per process); its
	// grants are not replayed into Redis.
	FallbackLocal = Fallback(redisnative.TF_REDIS_FALLBACK_LOCAL)
)

// Stats holds the counters of a RedisLimiter.
type Stats struct {
	Decisions       uint64 // decisions Redis made
	Timeouts        uint64 // calls that failed with StatusTimeout
	Unavailable     uint64 // calls that failed with StatusUnavailable
	FallbackDenied  uint64 // decisions FallbackDeny made
	FallbackAllowed uint64 // decisions FallbackAllow made
	FallbackLocal   uint64 // decisions the embedded fallback made
	Reconnects      uint64 // connections re-established after a failure
	ScriptLoads     uint64 // SCRIPT LOADs (at creation, on every master, and after NOSCRIPT)
	Redirects       uint64 // cluster: MOVED and ASK redirections followed
	GlobalUndos     uint64 // cluster: a key's permits given back when the global window denied
}

// Option configures NewRedisLimiter.
type Option func(*options)

type options struct {
	flags                      tf.RateLimiterFlags
	host, prefix, seeds        string
	port, connectMs, commandMs uint32
	time                       TimeSource
	fallback                   Fallback
	reconnectMin, reconnectMax uint32
	idleExpiryMs               uint64
	cluster                    bool
	badPort                    bool
}

// WithFlags sets the creation flags: 0 or temporalfilters.RateLimiterExact.
func WithFlags(flags tf.RateLimiterFlags) Option { return func(o *options) { o.flags = flags } }

// WithAddress sets the server's host and port (default 127.0.0.1:6379);
// with WithCluster, a seed node's.
func WithAddress(host string, port int) Option {
	return func(o *options) {
		o.host = host
		o.badPort = port < 0 || port > math.MaxUint32
		o.port = uint32(port)
	}
}

// WithCluster makes the address a seed node of a Redis Cluster; seeds are
// more of them ("host:port,host:port"), asked when it does not answer.
func WithCluster(seeds string) Option {
	return func(o *options) { o.cluster, o.seeds = true, seeds }
}

// WithTimeouts sets the connect and command timeouts in milliseconds
// (default 1000 each).
func WithTimeouts(connectMs, commandMs uint32) Option {
	return func(o *options) { o.connectMs, o.commandMs = connectMs, commandMs }
}

// WithTimeSource chooses the caller's clock (the default) or the server's.
func WithTimeSource(t TimeSource) Option { return func(o *options) { o.time = t } }

// WithFallback chooses the decision when Redis cannot answer.
func WithFallback(f Fallback) Option { return func(o *options) { o.fallback = f } }

// WithReconnect sets the backoff before reconnecting, doubling from minMs
// to maxMs (0: 100 and 5000).
func WithReconnect(minMs, maxMs uint32) Option {
	return func(o *options) { o.reconnectMin, o.reconnectMax = minMs, maxMs }
}

// WithIdleExpiry sets how long an idle key's window stays in Redis, in
// milliseconds (0: one window, the caller's unit taken as milliseconds).
func WithIdleExpiry(ms uint64) Option { return func(o *options) { o.idleExpiryMs = ms } }

// WithPrefix sets the prefix of every Redis key (default "tf:rl:"; no '{'
// or '}'). Limiters of the same prefix share their state.
func WithPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// RedisLimiter is the rate limiter on Redis. The zero value and a closed
// limiter return errors of the family temporalfilters.ErrClosed.
//
// Close it when done: a limiter dropped without Close is freed, with its
// connections, only when the garbage collector finds it unreachable (a
// finalizer, as for the package temporalfilters's structures), which may
// be late or, should the program exit first, never.
type RedisLimiter struct {
	mu sync.Mutex
	// h owns the native limiter (its finalizer frees it when the limiter
	// is dropped without Close); nil in the zero value.
	h bridge.Handle
	// failure is the output of the decisions (a Redis failure's status and
	// message, redisnative.Failure), used under mu. An allocation of its
	// own: the memory cgo is handed must hold no Go pointers.
	failure *redisnative.Failure
}

const name = "RedisLimiter"

// catch turns the panic of a failed native call into *err (deferred
// directly).
func catch(err *error) {
	if r := recover(); r != nil {
		e, ok := bridge.FromPanic(r)
		if !ok {
			panic(r)
		}
		*err = e
	}
}

// NewRedisLimiter connects and loads the script: each key at most limit
// requests per window, in buckets of bucketWidth (ignored, may be 0, with
// temporalfilters.RateLimiterExact), as temporalfilters.NewRateLimiter.
// Errors: ErrInvalidArgument, ErrUnavailable (no server, or a timeout).
func NewRedisLimiter(limit, window, bucketWidth uint64, opts ...Option) (l *RedisLimiter, err error) {
	o := options{
		port:      uint32(redisnative.TF_BINDING_REDIS_PORT),
		connectMs: uint32(redisnative.TF_BINDING_REDIS_CONNECT_TIMEOUT_MS),
		commandMs: uint32(redisnative.TF_BINDING_REDIS_COMMAND_TIMEOUT_MS),
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.badPort {
		return nil, bridge.Error(int(tf.StatusInvalidArgument), "the port is out of range 1..65535")
	}
	mode := uint(redisnative.TF_REDIS_MODE_SERVER)
	if o.cluster {
		mode = uint(redisnative.TF_REDIS_MODE_CLUSTER)
	}
	defer catch(&err)
	p := redisnative.NewRedisLimiterNative(limit, window, bucketWidth, uint(o.flags), o.host, uint(o.port),
		uint(o.connectMs), uint(o.commandMs), uint(o.time), uint(o.fallback), uint(o.reconnectMin),
		uint(o.reconnectMax), o.idleExpiryMs, o.prefix, mode, o.seeds)
	h := bridge.Adopt(name, p.Swigcptr(), func(p uintptr) {
		redisnative.DeleteRedisLimiterNative(redisnative.SwigcptrRedisLimiterNative(p))
	})
	return &RedisLimiter{h: h, failure: new(redisnative.Failure)}, nil
}

// call runs op on the open native limiter, under the mutex.
func (l *RedisLimiter) call(op func(p redisnative.RedisLimiterNative)) (err error) {
	if l == nil {
		return bridge.Closed(name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h == nil || l.h.Ptr() == 0 {
		return bridge.Closed(name)
	}
	defer catch(&err)
	op(redisnative.SwigcptrRedisLimiterNative(l.h.Ptr()))
	runtime.KeepAlive(l.h)
	return nil
}

// unavailable is the error of a decision Redis could not make (f, the
// decision's output, with its status negated and the message the native
// call copied), nil when Redis decided.
func unavailable(f *redisnative.Failure) error {
	if f.Status == 0 {
		return nil
	}
	msg := f.Message[:]
	if end := bytes.IndexByte(msg, 0); end >= 0 {
		msg = msg[:end]
	}
	return bridge.Error(-int(f.Status), string(msg))
}

// Acquire asks for n permits for key at now (0 with TimeServer) and takes
// them when allowed. When Redis cannot answer, the decision is the
// fallback's and the error matches temporalfilters.ErrUnavailable.
func (l *RedisLimiter) Acquire(key []byte, now, n uint64) (d tf.Decision, err error) {
	return l.decide(key, now, n, true)
}

// AcquireString is Acquire with a string key.
func (l *RedisLimiter) AcquireString(key string, now, n uint64) (tf.Decision, error) {
	return l.decide([]byte(key), now, n, true)
}

// Peek is the decision Acquire would make, changing nothing.
func (l *RedisLimiter) Peek(key []byte, now, n uint64) (tf.Decision, error) {
	return l.decide(key, now, n, false)
}

// PeekString is Peek with a string key.
func (l *RedisLimiter) PeekString(key string, now, n uint64) (tf.Decision, error) {
	return l.decide([]byte(key), now, n, false)
}

func (l *RedisLimiter) decide(key []byte, now, n uint64, take bool) (d tf.Decision, err error) {
	var failed error
	err = l.call(func(p redisnative.RedisLimiterNative) {
		var allowed int
		k, kn := bridge.Key(key)
		if take {
			allowed = p.Acquire(k, kn, now, n, &d.Remaining, &d.RetryAt, l.failure)
		} else {
			allowed = p.Peek(k, kn, now, n, &d.Remaining, &d.RetryAt, l.failure)
		}
		runtime.KeepAlive(key)
		d.Allowed = allowed == 1
		failed = unavailable(l.failure)
	})
	if err != nil {
		return tf.Decision{}, err
	}
	return d, failed
}

// AcquireBatch is Acquire(keys[i], times[i], n) for every key, sent as one
// pipeline (on a cluster, one per node and phase); times is nil with TimeServer. When Redis fails during the
// batch, the decisions are Redis's for the answers that arrived and the
// fallback's for the others, with an ErrUnavailable error.
func (l *RedisLimiter) AcquireBatch(keys [][]byte, times []uint64, n uint64) ([]tf.Decision, error) {
	return acquireBatch(l, keys, times, n)
}

// AcquireBatchStrings is AcquireBatch with string keys.
func (l *RedisLimiter) AcquireBatchStrings(keys []string, times []uint64, n uint64) ([]tf.Decision, error) {
	return acquireBatch(l, keys, times, n)
}

// acquireBatch packs the keys as the root package's batch calls do
// (bridge.PackKeys) and decides them in one native call.
func acquireBatch[K []byte | string](l *RedisLimiter, keys []K, times []uint64, n uint64) ([]tf.Decision, error) {
	pk, bad := bridge.PackKeys(keys)
	if bad >= 0 {
		return nil, bridge.Error(int(tf.StatusInvalidArgument),
			fmt.Sprintf("keys[%d] is %d bytes long; batch keys are limited to %d bytes", bad, len(keys[bad]),
				math.MaxInt32))
	}
	defer pk.Release()
	allowed := make([]int32, len(keys))
	remaining := make([]uint64, len(keys))
	retry := make([]uint64, len(keys))
	var failed error
	err := l.call(func(p redisnative.RedisLimiterNative) {
		p.Acquire_batch(pk.Data, pk.Lens, times, n, allowed, remaining, retry, l.failure)
		failed = unavailable(l.failure)
	})
	if err != nil {
		return nil, err
	}
	out := make([]tf.Decision, len(keys))
	for i := range out {
		out[i] = tf.Decision{Allowed: allowed[i] != 0, Remaining: remaining[i], RetryAt: retry[i]}
	}
	return out, failed
}

// Refund gives back up to n permits key took (the most recent first), to
// the global window too.
func (l *RedisLimiter) Refund(key []byte, now, n uint64) error {
	return l.call(func(p redisnative.RedisLimiterNative) {
		k, kn := bridge.Key(key)
		p.Refund(k, kn, now, n)
		runtime.KeepAlive(key)
	})
}

// Reset forgets key's requests in Redis (its own limit stays).
func (l *RedisLimiter) Reset(key []byte) error {
	return l.call(func(p redisnative.RedisLimiterNative) {
		k, kn := bridge.Key(key)
		p.Reset(k, kn)
		runtime.KeepAlive(key)
	})
}

// SetKeyLimit gives key its own limit (0 removes it), stored in Redis for
// every client of the prefix.
func (l *RedisLimiter) SetKeyLimit(key []byte, limit uint64) error {
	return l.call(func(p redisnative.RedisLimiterNative) {
		k, kn := bridge.Key(key)
		p.Set_key_limit(k, kn, limit)
		runtime.KeepAlive(key)
	})
}

// SetGlobalLimit sets the limit over all keys of the prefix (0 removes
// it; at most temporalfilters.RateLimiterMaxExactGlobal with
// temporalfilters.RateLimiterExact, below 2^51 bucketed), stored in Redis; it starts an empty global window. With
// TimeServer the new window starts past the server's time, as the embedded
// limiter's starts past every key's; on the caller's clock it starts at its
// first request's time, so the answers in the bucket (exact mode: at the
// time) in which it was set may differ from the embedded limiter's, and a
// refund of a permit taken before may take out the window's grants there
// (include/temporalfilters/redis.h): set it before the traffic.
func (l *RedisLimiter) SetGlobalLimit(limit uint64) error {
	return l.call(func(p redisnative.RedisLimiterNative) { p.Set_global_limit(limit) })
}

// Stats returns the counters.
func (l *RedisLimiter) Stats() (s Stats, err error) {
	err = l.call(func(p redisnative.RedisLimiterNative) {
		v := p.Stats()
		defer redisnative.DeleteRedisLimiterStatsNative(v)
		s = Stats{v.GetDecisions(), v.GetTimeouts(), v.GetUnavailable(), v.GetFallback_denied(),
			v.GetFallback_allowed(), v.GetFallback_local(), v.GetReconnects(), v.GetScript_loads(),
			v.GetRedirects(), v.GetGlobal_undos()}
	})
	return s, err
}

// Close closes the connections and frees the native limiter (the state in
// Redis stays). Closing twice is harmless; every later call returns an
// ErrClosed error. A limiter dropped without Close is freed by a finalizer,
// but only once the garbage collector runs: call Close.
func (l *RedisLimiter) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		l.h.Free()
	}
	return nil
}
