package temporalfilters

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// RateLimiter.AcquireBatch (tf_rate_limiter_acquire_batch): the same
// decisions, in order, and the same state afterwards as the same Acquire
// calls on a twin limiter; every bad argument refused before any decision;
// the empty batch; a closed limiter; the checks of the native layer.

func rlAcquireBatch(t *testing.T, r *RateLimiter, keys []string, times []uint64, n uint64) []Decision {
	t.Helper()
	ds, err := r.AcquireBatchStrings(keys, times, n)
	if err != nil {
		t.Fatalf("AcquireBatchStrings(%q, %v, %d): %v", keys, times, n, err)
	}
	if len(ds) != len(keys) {
		t.Fatalf("AcquireBatchStrings: %d decisions for %d keys", len(ds), len(keys))
	}
	return ds
}

func wantDecisions(t *testing.T, what string, got, want []Decision) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// A small batch with known answers: the third request of "a" waits for its
// first permit to leave (with its bucket at 1000, or at 10 + 1000 in Exact
// mode); a key may come several times in one batch.
func TestRateLimiterBatchAnswersInOrder(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		exact := mode.flags&RateLimiterExact != 0
		r := mustRateLimiter(t, 2, 1000, 100, mode.flags)
		wantDecisions(t, "a, a, a, b", rlAcquireBatch(t, r, []string{"a", "a", "a", "b"}, []uint64{10, 20, 30, 40}, 1),
			[]Decision{allowed(1), allowed(0), denied(0, pick(exact, 1010, 1000)), allowed(1)})
		// n for every key; []byte keys are the same keys
		ds, err := r.AcquireBatch([][]byte{[]byte("b"), []byte("c")}, []uint64{50, 50}, 2)
		must(t, err)
		wantDecisions(t, "b, c with n = 2", ds, []Decision{denied(1, pick(exact, 1040, 1000)), allowed(0)})
		wantDecisions(t, "later", rlAcquireBatch(t, r, []string{"a", "b"}, []uint64{2000, 2000}, 1),
			[]Decision{allowed(1), allowed(1)})
		wantDecisions(t, "later", rlAcquireBatch(t, r, []string{"a", "b"}, []uint64{2001, 2001}, 1),
			[]Decision{allowed(0), allowed(0)})
		wantDecisions(t, "later", rlAcquireBatch(t, r, []string{"a", "b"}, []uint64{2002, 2002}, 1),
			[]Decision{denied(0, 3000), denied(0, 3000)})
		wantKeys(t, r, 3)
	})
}

// The twin of the C suite's test_acquire_batch_equals_single_calls: random
// traffic over 500 keys (one empty, every seventh longer than 16 bytes,
// stored out of line), batches of 1 to 200 keys, n 1 or 2, times that
// mostly go forward and sometimes back by up to 500, with a global limit,
// an override and, in some runs, a key bound failing closed or open. One
// limiter takes the batches, its twin the same requests one by one: every
// answer and, at the end, the counters and the serialized bytes are equal.
func TestRateLimiterBatchEqualsSingleCalls(t *testing.T) {
	const nk, maxBatch, total = 500, 200, 40000
	names := make([][]byte, nk)
	for k := range names {
		switch {
		case k == 0:
			names[k] = nil
		case k%7 == 3:
			names[k] = []byte(fmt.Sprintf("a longer key, out of line, %d", k))
		default:
			names[k] = []byte(fmt.Sprintf("k%d", k))
		}
	}
	for _, c := range []struct {
		flags   RateLimiterFlags
		maxKeys uint64
	}{{0, 0}, {RateLimiterExact, 0}, {0, 120}, {RateLimiterExact, 120}, {RateLimiterFullAllow, 120}, {RateLimiterExact | RateLimiterFullAllow, 120}} {
		c := c
		t.Run(fmt.Sprintf("flags %d, max keys %d", c.flags, c.maxKeys), func(t *testing.T) {
			single := mustRateLimiter(t, 4, 1000, 100, c.flags)
			batch := mustRateLimiter(t, 4, 1000, 100, c.flags)
			for _, r := range []*RateLimiter{single, batch} {
				must(t, r.SetGlobalLimit(300))
				must(t, r.SetKeyLimitString("k7", 9))
				must(t, r.SetMaxKeys(c.maxKeys))
			}
			rng := rand.New(rand.NewSource(int64(31 + uint32(c.flags) + uint32(c.maxKeys))))
			now := uint64(1)
			var granted, refused, largest int
			for done, b := 0, 0; done < total; b++ {
				count := 1 + rng.Intn(maxBatch)
				n := uint64(1 + rng.Intn(2))
				keys := make([][]byte, count)
				times := make([]uint64, count)
				for i := range keys {
					keys[i] = names[rng.Intn(nk)]
					now += uint64(rng.Intn(5))
					times[i] = now
					if rng.Intn(10) == 0 && now > 500 {
						times[i] = now - uint64(rng.Intn(500))
					}
				}
				got, err := batch.AcquireBatch(keys, times, n)
				must(t, err)
				if len(got) != count {
					t.Fatalf("batch %d: %d decisions for %d keys", b, len(got), count)
				}
				for i := range keys {
					want, err := single.Acquire(keys[i], times[i], n)
					must(t, err)
					if got[i] != want {
						t.Fatalf("batch %d entry %d (%q at %d, n %d): batch %v, single call %v", b, i, keys[i], times[i], n, got[i], want)
					}
					if want.Allowed {
						granted++
					} else {
						refused++
					}
				}
				if count > largest {
					largest = count
				}
				done += count
			}
			if granted < 1000 || refused < 1000 {
				t.Fatalf("%d granted, %d denied: the traffic does not test both", granted, refused)
			}
			if largest <= 64 {
				t.Fatalf("no batch beyond the native layer's 64-key chunks (largest %d)", largest)
			}
			st := res(batch.Stats()).get(t)
			if want := res(single.Stats()).get(t); st != want {
				t.Fatalf("Stats: batch %+v, single calls %+v", st, want)
			}
			if c.maxKeys != 0 && st.DeniedFull+st.AllowedFull == 0 {
				t.Fatalf("the key bound was never reached: %+v", st)
			}
			if a, b := res(single.Serialize()).get(t), res(batch.Serialize()).get(t); !bytes.Equal(a, b) {
				t.Fatalf("the twins serialize differently (%d and %d bytes, first difference at %d)", len(a), len(b), firstDiff(a, b))
			}
		})
	}
}

// Every bad argument is refused before any decision: no key created, no
// clock moved, the same bytes.
func TestRateLimiterBatchBadArguments(t *testing.T) {
	inBothRateModes(t, func(t *testing.T, mode rateMode) {
		r := mustRateLimiter(t, 2, 100, 10, mode.flags)
		must(t, r.SetGlobalLimit(50))
		wantDecision(t, "x", rlAcquire(t, r, "x", 5, 1), allowed(1))
		before := res(r.Serialize()).get(t)
		xyz := []string{"x", "y", "z"}
		for _, c := range []struct {
			what  string
			keys  []string
			times []uint64
			n     uint64
			msg   string
		}{
			{"fewer times", xyz, []uint64{6, 7}, 1, "one timestamp per key"},
			{"more times", xyz, []uint64{6, 7, 8, 9}, 1, "one timestamp per key"},
			{"no times", xyz, nil, 1, "one timestamp per key"},
			{"times without keys", nil, []uint64{6}, 1, "one timestamp per key"},
			{"a zero time", xyz, []uint64{6, 7, 0}, 1, "times[2]"},
			{"n 0", xyz, []uint64{6, 7, 8}, 0, "n must be"},
			{"n 0, no keys", nil, nil, 0, "n must be"},
		} {
			ds, err := r.AcquireBatchStrings(c.keys, c.times, c.n)
			wantStatus(t, err, StatusInvalidArgument)
			if ds != nil {
				t.Errorf("%s: decisions %v with the error", c.what, ds)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s: message %q lacks %q", c.what, err, c.msg)
			}
			bkeys := make([][]byte, len(c.keys))
			for i, k := range c.keys {
				bkeys[i] = []byte(k)
			}
			_, err = r.AcquireBatch(bkeys, c.times, c.n)
			wantStatus(t, err, StatusInvalidArgument)
		}
		if !bytes.Equal(res(r.Serialize()).get(t), before) {
			t.Fatal("a refused batch changed the limiter")
		}
		wantKeys(t, r, 1)
		// a huge n is an answer, not an error: never, and nothing taken
		wantDecisions(t, "n = MaxUint64", rlAcquireBatch(t, r, xyz, []uint64{6, 7, 8}, math.MaxUint64),
			[]Decision{denied(1, RetryNever), denied(2, RetryNever), denied(2, RetryNever)})
		wantKeys(t, r, 1)
		// and a failure does not stick
		wantDecisions(t, "x, y", rlAcquireBatch(t, r, []string{"x", "y"}, []uint64{9, 9}, 1),
			[]Decision{allowed(0), allowed(1)})
	})
}

// An empty batch decides nothing and changes nothing.
func TestRateLimiterBatchEmpty(t *testing.T) {
	r := mustRateLimiter(t, 2, 100, 10, 0)
	rlAcquire(t, r, "x", 5, 1)
	before := res(r.Serialize()).get(t)
	for _, keys := range [][][]byte{nil, {}} {
		ds, err := r.AcquireBatch(keys, nil, 1)
		must(t, err)
		if len(ds) != 0 {
			t.Fatalf("AcquireBatch(%v) = %v", keys, ds)
		}
	}
	ds, err := r.AcquireBatchStrings([]string{}, []uint64{}, 3)
	must(t, err)
	if len(ds) != 0 {
		t.Fatalf("AcquireBatchStrings([]) = %v", ds)
	}
	if !bytes.Equal(res(r.Serialize()).get(t), before) {
		t.Fatal("an empty batch changed the limiter")
	}
}

func TestRateLimiterBatchClosed(t *testing.T) {
	r, err := NewRateLimiter(2, 100, 10)
	must(t, err)
	must(t, r.Close())
	var zero RateLimiter
	var nilLimiter *RateLimiter
	for _, r := range []*RateLimiter{r, &zero, nilLimiter} {
		for _, keys := range []int{1, 0} {
			ds, err := r.AcquireBatch(make([][]byte, keys), make([]uint64, keys), 1)
			wantClosed(t, "AcquireBatch", "RateLimiter", err)
			if ds != nil {
				t.Fatalf("AcquireBatch on a closed limiter: %v, %v", ds, err)
			}
			_, err = r.AcquireBatchStrings(make([]string, keys), make([]uint64, keys), 1)
			wantClosed(t, "AcquireBatchStrings", "RateLimiter", err)
		}
	}
}

// nativeCall runs f, which calls the native layer, and returns its failure.
func nativeCall(f func()) (err error) {
	defer catch(&err)
	f()
	return nil
}

// The native layer checks what AcquireBatch always gets right: outputs of
// one entry per key and key lengths that match the bytes.
func TestRateLimiterBatchNativeChecks(t *testing.T) {
	r := mustRateLimiter(t, 2, 100, 10, 0)
	p := r.obj().ptr()
	data := []byte("xyz")
	lens := []int32{1, 1, 1}
	times := []uint64{6, 7, 8}
	call := func(lens []int32, times []uint64, n uint64, allowed []int32, remaining, retryAt []uint64) (granted uint64, err error) {
		err = nativeCall(func() { granted = p.Acquire_batch(data, lens, times, n, allowed, remaining, retryAt) })
		runtime.KeepAlive(r)
		return granted, err
	}
	for _, c := range []struct {
		what     string
		lens     []int32
		allowed  []int32
		outs     [2]int
		fragment string
	}{
		{"short allowed", lens, make([]int32, 2), [2]int{3, 3}, "every output"},
		{"long remaining", lens, make([]int32, 3), [2]int{4, 3}, "every output"},
		{"no retry at", lens, make([]int32, 3), [2]int{3, 0}, "every output"},
		{"lengths past the bytes", []int32{1, 1, 2}, make([]int32, 3), [2]int{3, 3}, "key lengths"},
		{"a negative length", []int32{1, -1, 3}, make([]int32, 3), [2]int{3, 3}, "key lengths"},
		{"lengths short of the bytes", []int32{1, 1, 0}, make([]int32, 3), [2]int{3, 3}, "key lengths"},
	} {
		_, err := call(c.lens, times, 1, c.allowed, make([]uint64, c.outs[0]), make([]uint64, c.outs[1]))
		wantStatus(t, err, StatusInvalidArgument)
		if !strings.Contains(err.Error(), c.fragment) {
			t.Errorf("%s: message %q lacks %q", c.what, err, c.fragment)
		}
	}
	wantKeys(t, r, 0, "a refused call created keys")
	allowedOut := make([]int32, 3)
	remaining, retryAt := make([]uint64, 3), make([]uint64, 3)
	granted, err := call([]int32{1, 2, 0}, times, 2, allowedOut, remaining, retryAt)
	must(t, err)
	if granted != 3 || !reflect.DeepEqual(allowedOut, []int32{1, 1, 1}) || !reflect.DeepEqual(remaining, []uint64{0, 0, 0}) {
		t.Fatalf("x, yz, \"\": granted %d, %v %v %v", granted, allowedOut, remaining, retryAt)
	}
	granted, err = call(lens, times, 1, allowedOut, remaining, retryAt)
	must(t, err)
	if granted != 2 || !reflect.DeepEqual(allowedOut, []int32{0, 1, 1}) || !reflect.DeepEqual(remaining, []uint64{0, 1, 1}) ||
		!reflect.DeepEqual(retryAt, []uint64{100, 0, 0}) {
		t.Fatalf("x, y, z: granted %d, %v %v %v", granted, allowedOut, remaining, retryAt)
	}
}
