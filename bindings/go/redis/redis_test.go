package redis

// The Redis limiter against a redis-server and a three-master Redis Cluster
// started by tests/redis/redis_fixture (TF_REDIS_FIXTURE, set by the Meson
// build): the decisions equal the embedded RateLimiter's on the same
// request sequence (both modes, overrides, the global limit, batches,
// refunds, resets) on both; the fallback on a stopped server (the error,
// its family, the fallback's decision, the counters, each error's message
// its own call's); closed limiters; bad arguments; the finalizer of an
// unclosed limiter. Skips, saying why, only when redis-server is not
// installed.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	tf "temporalfilters.org/go/temporalfilters"
	"temporalfilters.org/go/temporalfilters/internal/bridge"
)

type fixture struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	server  int
	cluster []int
}

func startFixture(t *testing.T, what ...string) *fixture {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (Debian: apt-get install redis-server): the Redis tests need it")
	}
	path := os.Getenv("TF_REDIS_FIXTURE")
	if path == "" {
		t.Fatal("TF_REDIS_FIXTURE must name tests/redis/redis_fixture (meson test go_redis sets it)")
	}
	f := &fixture{cmd: exec.Command(path, what...)}
	f.cmd.Stderr = os.Stderr
	var err error
	if f.in, err = f.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err = f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.in.Close(); f.cmd.Wait() })
	f.out = bufio.NewReader(stdout)
	for {
		line, err := f.out.ReadString('\n')
		if err != nil {
			t.Fatalf("redis_fixture did not start its servers: %v", err)
		}
		words := strings.Fields(line)
		switch words[0] {
		case "server":
			f.server, _ = strconv.Atoi(words[1])
		case "cluster":
			for _, w := range words[1:] {
				p, _ := strconv.Atoi(w)
				f.cluster = append(f.cluster, p)
			}
		case "ready":
			return f
		}
	}
}

func (f *fixture) command(t *testing.T, word string) string {
	t.Helper()
	fmt.Fprintln(f.in, word)
	line, err := f.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

var prefixSeq int

func prefix(t *testing.T) string {
	prefixSeq++
	return fmt.Sprintf("test:go:%d:%s:%d:", os.Getpid(), t.Name(), prefixSeq)
}

var keys = []string{"alice", "bob", "carol", "vip", "low", "", "k{x}y", "bin\x00ary"}

// must is v, or a panic (which fails the test) with err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runSequence is the C suite's sequence (tests/redis/test_redis_limiter.c).
func runSequence(t *testing.T, e *tf.RateLimiter, r *RedisLimiter, seed int64, global bool) {
	rng := rand.New(rand.NewSource(seed))
	now := uint64(1000)
	ok(t, e.SetKeyLimitString("vip", 9))
	ok(t, r.SetKeyLimit([]byte("vip"), 9))
	ok(t, e.SetKeyLimitString("low", 1))
	ok(t, r.SetKeyLimit([]byte("low"), 1))
	if global {
		ok(t, e.SetGlobalLimit(12))
		ok(t, r.SetGlobalLimit(12))
	}
	granted, denied := 0, 0
	for step := 0; step < 600; step++ {
		if rng.Intn(4) == 0 {
			now += uint64(rng.Intn(400))
		} else {
			now += uint64(rng.Intn(30))
		}
		k := keys[rng.Intn(len(keys))]
		n := uint64(1 + rng.Intn(2))
		if rng.Intn(20) == 0 {
			n = uint64(1 + rng.Intn(12))
		}
		switch op := rng.Intn(100); {
		case op < 70:
			a := must(e.AcquireString(k, now, n))
			b := must(r.AcquireString(k, now, n))
			if a != b {
				t.Fatalf("step %d: acquire %q: embedded %v, redis %v", step, k, a, b)
			}
			if a.Allowed {
				granted++
			} else {
				denied++
			}
		case op < 80:
			a := must(e.PeekString(k, now, n))
			b := must(r.PeekString(k, now, n))
			if a != b {
				t.Fatalf("step %d: peek %q: embedded %v, redis %v", step, k, a, b)
			}
		case op < 88:
			ks := make([]string, 4)
			times := make([]uint64, 4)
			for i := range ks {
				ks[i] = keys[rng.Intn(len(keys))]
				times[i] = now + uint64(i)
			}
			now += 3
			a := must(e.AcquireBatchStrings(ks, times, n))
			b := must(r.AcquireBatchStrings(ks, times, n))
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("step %d: batch %d: embedded %v, redis %v", step, i, a[i], b[i])
				}
			}
		case op < 94:
			ok(t, e.RefundString(k, now, n))
			ok(t, r.Refund([]byte(k), now, n))
		case op < 96:
			ok(t, e.ResetString(k))
			ok(t, r.Reset([]byte(k)))
		case op < 98:
			lim := uint64(rng.Intn(6))
			ok(t, e.SetKeyLimitString(k, lim))
			ok(t, r.SetKeyLimit([]byte(k), lim))
		case global && op < 99:
			lim := uint64(8 + rng.Intn(10))
			ok(t, e.SetGlobalLimit(lim))
			ok(t, r.SetGlobalLimit(lim))
			// On the caller's clock the new global window may answer
			// otherwise in the bucket it was set in (redis.h,
			// tf_redis_limiter_set_global_limit): the C suite moves to
			// the next bucket (of 100), and so does this one.
			now = (now/100 + 1) * 100
		}
	}
	if granted < 40 || denied < 40 {
		t.Fatalf("the sequence granted %d and denied %d", granted, denied)
	}
}

func checkSameDecisions(t *testing.T, f *fixture, cluster bool) {
	for _, flags := range []tf.RateLimiterFlags{0, tf.RateLimiterExact} {
		for _, global := range []bool{false, true} {
			e := must(tf.NewRateLimiter(5, 1000, 100, tf.WithFlags(flags)))
			opts := []Option{WithFlags(flags), WithPrefix(prefix(t)), WithIdleExpiry(600000)}
			if cluster {
				opts = append(opts, WithAddress("127.0.0.1", f.cluster[0]), WithCluster(""))
			} else {
				opts = append(opts, WithAddress("127.0.0.1", f.server))
			}
			r := must(NewRedisLimiter(5, 1000, 100, opts...))
			seed := int64(42 + 2*int(flags))
			if global {
				seed++
			}
			runSequence(t, e, r, seed, global)
			s := must(r.Stats())
			if s.Decisions < 400 || s.Timeouts+s.Unavailable+s.FallbackDenied+s.FallbackAllowed+s.FallbackLocal != 0 {
				t.Fatalf("stats %+v", s)
			}
			if want := map[bool]uint64{false: 1, true: 3}[cluster]; s.ScriptLoads != want {
				t.Fatalf("script loads %d, want %d", s.ScriptLoads, want)
			}
			if cluster && global && s.GlobalUndos == 0 {
				t.Fatal("no global undo on the cluster")
			}
			ok(t, r.Close())
			ok(t, e.Close())
		}
	}
}

func TestSameDecisionsAsEmbedded(t *testing.T) {
	f := startFixture(t, "server", "cluster")
	t.Run("server", func(t *testing.T) { checkSameDecisions(t, f, false) })
	t.Run("cluster", func(t *testing.T) { checkSameDecisions(t, f, true) })
}

func TestServerClock(t *testing.T) {
	f := startFixture(t, "server")
	r := must(NewRedisLimiter(2, 60000, 1000, WithAddress("", f.server), WithPrefix(prefix(t)),
		WithTimeSource(TimeServer)))
	defer r.Close()
	for i := 0; i < 2; i++ {
		if d := must(r.AcquireString("k", 0, 1)); !d.Allowed {
			t.Fatal(d)
		}
	}
	d := must(r.AcquireString("k", 0, 1))
	if d.Allowed || d.RetryAt < 1600000000000 {
		t.Fatalf("%v: want a denial until a time of the server's clock in milliseconds", d)
	}
	b := must(r.AcquireBatchStrings([]string{"x", "y"}, nil, 1))
	if !b[0].Allowed || !b[1].Allowed {
		t.Fatal(b)
	}
	if _, err := r.AcquireString("k", 5, 1); !errors.Is(err, tf.ErrInvalidArgument) {
		t.Fatalf("a time with the server's clock: %v", err)
	}
}

func TestClosed(t *testing.T) {
	f := startFixture(t, "server")
	r := must(NewRedisLimiter(2, 1000, 100, WithAddress("", f.server), WithPrefix(prefix(t))))
	ok(t, r.Close())
	ok(t, r.Close())
	var zero RedisLimiter
	var nilLimiter *RedisLimiter
	for _, l := range []*RedisLimiter{r, &zero, nilLimiter} {
		_, e1 := l.AcquireString("k", 1, 1)
		_, e2 := l.PeekString("k", 1, 1)
		_, e3 := l.AcquireBatchStrings([]string{"k"}, []uint64{1}, 1)
		_, e4 := l.Stats()
		for i, err := range []error{e1, e2, e3, e4, l.Refund(nil, 1, 1), l.Reset(nil), l.SetKeyLimit(nil, 1),
			l.SetGlobalLimit(1)} {
			if !errors.Is(err, tf.ErrClosed) || !strings.Contains(err.Error(), "RedisLimiter is closed") {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	}
}

func TestBadArguments(t *testing.T) {
	f := startFixture(t, "server")
	addr := WithAddress("", f.server)
	for i, opts := range [][]Option{{addr, WithFlags(tf.RateLimiterFullAllow)}, {WithAddress("", 0)},
		{WithAddress("", -1)}, {addr, WithPrefix("a{b")}, {addr, WithFallback(7)}, {addr, WithTimeSource(9)},
		{addr, WithTimeouts(0, 1)}} {
		if _, err := NewRedisLimiter(5, 1000, 100, opts...); !errors.Is(err, tf.ErrInvalidArgument) {
			t.Fatalf("options %d: %v", i, err)
		}
	}
	for i, lim := range [][3]uint64{{0, 1000, 100}, {5, 1000, 300}, {5, 0, 100}} {
		if _, err := NewRedisLimiter(lim[0], lim[1], lim[2], addr); !errors.Is(err, tf.ErrInvalidArgument) {
			t.Fatalf("limits %d: %v", i, err)
		}
	}
	r := must(NewRedisLimiter(5, 1000, 100, addr, WithPrefix(prefix(t))))
	defer r.Close()
	bad := []error{}
	_, err := r.AcquireString("k", 0, 1)
	bad = append(bad, err)
	_, err = r.AcquireString("k", 10, 0)
	bad = append(bad, err)
	_, err = r.PeekString("k", 10, 0)
	bad = append(bad, err)
	_, err = r.Acquire(make([]byte, 65537), 10, 1)
	bad = append(bad, err)
	_, err = r.AcquireBatchStrings([]string{"a", "b"}, []uint64{1}, 1)
	bad = append(bad, err)
	_, err = r.AcquireBatchStrings([]string{"a", "b"}, []uint64{1, 2}, 0)
	bad = append(bad, err)
	_, err = r.AcquireBatchStrings([]string{"a", "b"}, []uint64{1, 0}, 1)
	bad = append(bad, err)
	bad = append(bad, r.SetKeyLimit([]byte("k"), 70000), r.Refund([]byte("k"), 0, 1))
	for i, err := range bad {
		if !errors.Is(err, tf.ErrInvalidArgument) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if s := must(r.Stats()); s.Decisions != 0 {
		t.Fatalf("decided %d", s.Decisions)
	}
	if d := must(r.AcquireString("k", 10, 1)); !d.Allowed || d.Remaining != 4 {
		t.Fatalf("something was taken: %v", d)
	}
}

func TestUnreachableAtCreation(t *testing.T) {
	f := startFixture(t, "server")
	_, err := NewRedisLimiter(5, 1000, 100, WithAddress("", f.server+1), WithTimeouts(200, 200))
	if !errors.Is(err, tf.ErrUnavailable) {
		t.Fatal(err)
	}
}

// A server killed under three limiters (deny, allow, the embedded
// fallback): every decision returns the fallback's decision with an
// ErrUnavailable error, counted; restarted, Redis decides again by itself.
func TestFallbackOnStoppedServer(t *testing.T) {
	f := startFixture(t, "server")
	common := []Option{WithAddress("", f.server), WithPrefix(prefix(t)), WithIdleExpiry(600000),
		WithTimeouts(300, 300), WithReconnect(10, 20)}
	deny := must(NewRedisLimiter(2, 1000, 100, common...))
	allow := must(NewRedisLimiter(2, 1000, 100, append(common, WithFallback(FallbackAllow))...))
	local := must(NewRedisLimiter(2, 1000, 100, append(common, WithFallback(FallbackLocal))...))
	embedded := must(tf.NewRateLimiter(2, 1000, 100))
	defer func() { deny.Close(); allow.Close(); local.Close(); embedded.Close() }()
	if d := must(deny.AcquireString("k", 10, 1)); !d.Allowed {
		t.Fatal(d)
	}
	if got := f.command(t, "kill"); got != "killed" {
		t.Fatal(got)
	}
	d, err := deny.AcquireString("k", 20, 1)
	var te *tf.Error
	if !errors.Is(err, tf.ErrUnavailable) || !errors.As(err, &te) || err.Error() == "" ||
		(te.Status != tf.StatusTimeout && te.Status != tf.StatusUnavailable) || d.Allowed {
		t.Fatalf("%v %v", d, err)
	}
	if d, err := allow.AcquireString("k", 20, 1); !errors.Is(err, tf.ErrUnavailable) || !d.Allowed {
		t.Fatalf("%v %v", d, err)
	}
	b, err := deny.AcquireBatchStrings([]string{"a", "b"}, []uint64{21, 22}, 1)
	if !errors.Is(err, tf.ErrUnavailable) || len(b) != 2 || b[0].Allowed || b[1].Allowed {
		t.Fatalf("%v %v", b, err)
	}
	if err := deny.Reset([]byte("k")); !errors.Is(err, tf.ErrUnavailable) {
		t.Fatal(err)
	}
	for i := uint64(0); i < 5; i++ {
		want := must(embedded.AcquireString("e", 30+i, 1))
		got, err := local.AcquireString("e", 30+i, 1)
		if !errors.Is(err, tf.ErrUnavailable) || got != want {
			t.Fatalf("step %d: embedded fallback %v (%v), embedded limiter %v", i, got, err, want)
		}
	}
	s := must(deny.Stats())
	if s.Timeouts+s.Unavailable != 3 || s.FallbackDenied != 3 || s.FallbackAllowed+s.FallbackLocal != 0 {
		t.Fatalf("deny: %+v", s)
	}
	if s := must(allow.Stats()); s.FallbackAllowed != 1 {
		t.Fatalf("allow: %+v", s)
	}
	if s := must(local.Stats()); s.FallbackLocal != 5 {
		t.Fatalf("local: %+v", s)
	}
	if got := f.command(t, "restart"); got != "restarted" {
		t.Fatal(got)
	}
	for i := 0; ; i++ {
		if _, err := deny.AcquireString("k", 40, 1); err == nil {
			break
		} else if i == 50 {
			t.Fatalf("Redis did not come back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := must(deny.Stats()); s.Reconnects < 1 {
		t.Fatalf("%+v", s)
	}
}

// The message of a fallback's error belongs to the call that failed: it is
// taken on the OS thread of that call, in the same native call. Two paused
// servers (so that each decision waits out its command timeout, long enough
// for the Go scheduler to move goroutines between threads) under limiters
// on several goroutines: every error names the port of its own limiter's
// server.
func TestFallbackMessageIsTheCallsOwn(t *testing.T) {
	fixtures := []*fixture{startFixture(t, "server"), startFixture(t, "server")}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var limiters []*RedisLimiter
	for _, f := range fixtures {
		for i := 0; i < 3; i++ {
			l := must(NewRedisLimiter(2, 1000, 100, WithAddress("127.0.0.1", f.server), WithPrefix(prefix(t)),
				WithTimeouts(200, 15), WithReconnect(1, 2)))
			defer l.Close()
			limiters = append(limiters, l)
		}
		if got := f.command(t, "pause"); got != "paused" {
			t.Fatal(got)
		}
		defer f.command(t, "resume")
	}
	errs := make(chan error, len(limiters))
	for i, l := range limiters {
		own := fmt.Sprintf("127.0.0.1:%d", fixtures[i/3].server)
		other := fmt.Sprintf("127.0.0.1:%d", fixtures[1-i/3].server)
		go func(l *RedisLimiter) {
			for j := uint64(1); j <= 30; j++ {
				_, err := l.AcquireString("k", j, 1)
				if !errors.Is(err, tf.ErrUnavailable) || !strings.Contains(err.Error(), own) ||
					strings.Contains(err.Error(), other) {
					errs <- fmt.Errorf("a limiter of %s, call %d: %v", own, j, err)
					return
				}
			}
			errs <- nil
		}(l)
	}
	for range limiters {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestMain runs the suite, then checks that every native limiter (and
// embedded RateLimiter) was freed: closed, or finalized once dropped.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if n := waitFreed(0, 10*time.Second); n != 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d native limiters were never freed\n", n)
			code = 1
		}
	}
	os.Exit(code)
}

// waitFreed runs the collector until at most want native objects are left
// (finalizers free the ones nobody closed) or the time is up; it returns
// how many are left.
func waitFreed(want int64, limit time.Duration) int64 {
	deadline := time.Now().Add(limit)
	for {
		n := bridge.LiveObjects()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// clientCounter asks a server how many clients are connected (INFO
// clients), on a connection of its own, counted among them.
type clientCounter struct {
	conn net.Conn
	in   *bufio.Reader
}

func newClientCounter(t *testing.T, port int) *clientCounter {
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &clientCounter{conn, bufio.NewReader(conn)}
}

func (c *clientCounter) count(t *testing.T) int {
	t.Helper()
	if _, err := io.WriteString(c.conn, "INFO clients\r\n"); err != nil {
		t.Fatal(err)
	}
	head, err := c.in.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO clients: %q %v", head, err)
	}
	size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, size+2)
	if _, err := io.ReadFull(c.in, body); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\r\n") {
		if strings.HasPrefix(line, "connected_clients:") {
			n, err := strconv.Atoi(strings.TrimPrefix(line, "connected_clients:"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO clients without connected_clients: %q", body)
	return 0
}

// A limiter dropped without Close is freed by its finalizer, and with it
// its connections.
func TestFinalizerFreesUnclosed(t *testing.T) {
	f := startFixture(t, "server")
	clients := newClientCounter(t, f.server)
	before := waitFreed(0, 5*time.Second)
	connected := clients.count(t)
	// No collection until the dropped limiters are counted (one during
	// the loop could free some first).
	gcPercent := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(gcPercent)
	func() {
		for i := 0; i < 10; i++ {
			l := must(NewRedisLimiter(5, 1000, 100, WithAddress("127.0.0.1", f.server), WithPrefix(prefix(t))))
			if d := must(l.AcquireString("k", 1, 1)); !d.Allowed {
				t.Fatal(d)
			}
			// dropped without Close
		}
	}()
	if got := bridge.LiveObjects(); got < before+10 {
		t.Fatalf("%d live native objects, want at least %d", got, before+10)
	}
	if got := clients.count(t); got < connected+10 {
		t.Fatalf("%d clients connected, want at least %d", got, connected+10)
	}
	debug.SetGCPercent(gcPercent)
	if left := waitFreed(before, 10*time.Second); left > before {
		t.Fatalf("the finalizers left %d native objects, want %d", left, before)
	}
	for i := 0; ; i++ {
		got := clients.count(t)
		if got <= connected {
			break
		}
		if i == 100 {
			t.Fatalf("%d clients still connected, want %d", got, connected)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
