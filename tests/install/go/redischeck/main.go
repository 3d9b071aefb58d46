// Command redischeck uses the Go binding's Redis limiter as a user's project
// does (the package temporalfilters.org/go/temporalfilters/redis, its C
// library libtemporalfilters-redis from the system through pkg-config)
// against the redis-server run.sh started on PORT: the decisions of the
// embedded limiter, a batch, a key's own limit, the counters, and a port
// where nothing listens. Exits with status 1 on the first broken promise.
//
//	redischeck PORT
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"temporalfilters.org/go/temporalfilters"
	"temporalfilters.org/go/temporalfilters/redis"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "redischeck: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: redischeck PORT")
	}
	port, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fail("port %q: %v", os.Args[1], err)
	}
	l, err := redis.NewRedisLimiter(2, 60000, 1000, redis.WithAddress("127.0.0.1", port),
		redis.WithPrefix(fmt.Sprintf("installcheck:go:%d:", os.Getpid())), redis.WithFallback(redis.FallbackAllow))
	if err != nil {
		fail("NewRedisLimiter: %v", err)
	}
	defer l.Close()
	e, err := temporalfilters.NewRateLimiter(2, 60000, 1000)
	if err != nil {
		fail("NewRateLimiter: %v", err)
	}
	defer e.Close()
	for t := uint64(1); t <= 3; t++ {
		got, err := l.AcquireString("client", t, 1)
		want, _ := e.AcquireString("client", t, 1)
		if err != nil || got != want {
			fail("Acquire at %d = %+v, %v; the embedded limiter %+v", t, got, err, want)
		}
	}
	if d, err := l.PeekString("client", 4, 1); err != nil || d.Allowed {
		fail("Peek after the limit = %+v, %v", d, err)
	}
	ds, err := l.AcquireBatchStrings([]string{"x", "x", "x"}, []uint64{5, 6, 7}, 1)
	if err != nil || !ds[0].Allowed || !ds[1].Allowed || ds[2].Allowed {
		fail("AcquireBatch = %+v, %v", ds, err)
	}
	if err := l.SetKeyLimit([]byte("client"), 5); err != nil {
		fail("SetKeyLimit: %v", err)
	}
	if d, err := l.AcquireString("client", 8, 1); err != nil || !d.Allowed {
		fail("Acquire under the key's own limit = %+v, %v", d, err)
	}
	if s, err := l.Stats(); err != nil || s.Decisions != 8 || s.ScriptLoads != 1 || s.FallbackAllowed != 0 {
		fail("Stats = %+v, %v", s, err)
	}
	if _, err := redis.NewRedisLimiter(2, 60000, 1000, redis.WithAddress("127.0.0.1", 1),
		redis.WithTimeouts(200, 200)); !errors.Is(err, temporalfilters.ErrUnavailable) {
		fail("a limiter without a server: %v", err)
	}
	fmt.Println("redischeck: ok")
}
