package temporalfilters

import (
	"bytes"
	"testing"
)

// The golden rate limiter blobs of tests/data (rate_limiter_v1.tfb,
// bucketed, and rate_limiter_exact_v1.tfb) and their .expected answers,
// written by the C library (tests/make_golden.c) from the operations of
// golden_rate_limiter(flags) in tests/util/golden.h. This suite (a) reads both blobs
// and gets every listed answer, and (b) replays the same operations through
// this package and gets the blobs byte for byte. Nothing here is hard-coded
// from the files: when they are regenerated, these tests follow them.

const (
	goldenRLKeys   = 40   // GOLDEN_RL_KEYS: "key-0" .. "key-39" are peeked
	goldenRLPeekAt = 3000 // GOLDEN_RL_PEEK_AT: the answers are peeks at this time, n = 1
)

var goldenRateCases = []struct {
	name  string
	flags RateLimiterFlags
}{
	{"rate_limiter_v1", 0},
	{"rate_limiter_exact_v1", RateLimiterExact},
}

// readRateExpected reads a rate limiter's answers: "<key hex> <allowed>
// <remaining> <retry_at>", the decision of a peek.
func readRateExpected(t *testing.T, name string) []goldenAnswer[Decision] {
	t.Helper()
	out := readAnswers(t, name, "<key hex> <allowed> <remaining> <retry_at>", func(l expectedLine) Decision {
		return Decision{Allowed: l.bit(1), Remaining: l.uint(2), RetryAt: l.uint(3)}
	})
	// "key-0" .. "key-39" in order, then the binary key; both answers among
	// them: a file that cannot tell a broken limiter from a working one
	// proves nothing.
	if len(out) != goldenRLKeys+1 {
		t.Fatalf("%s.expected: %d answers, want %d", name, len(out), goldenRLKeys+1)
	}
	grants := 0
	for i, a := range out {
		want := goldenBinaryKey
		if i < goldenRLKeys {
			want = goldenKeyBytes(i)
		}
		if !bytes.Equal(a.key, want) {
			t.Fatalf("%s.expected: answer %d is for %q, want %q", name, i, a.key, want)
		}
		if a.want.Allowed {
			grants++
		}
	}
	if grants == 0 || grants == len(out) {
		t.Fatalf("%s.expected: %d of %d allowed; want both answers", name, grants, len(out))
	}
	return out
}

// buildGoldenRateLimiter replays golden_rate_limiter(flags) of tests/util/golden.h.
func buildGoldenRateLimiter(t *testing.T, flags RateLimiterFlags) *RateLimiter {
	t.Helper()
	r := mustRateLimiter(t, 5, 1000, 100, flags)
	must(t, r.SetGlobalLimit(120))
	must(t, r.SetKeyLimitString("key-7", 9))
	for i := 0; i < 300; i++ {
		n := uint64(1)
		if i%3 == 0 {
			n = 2
		}
		if _, err := r.Acquire(goldenKeyBytes(i%30), 1000+7*uint64(i), n); err != nil {
			t.Fatal(err)
		}
	}
	must(t, r.RefundString("key-3", 3000, 1))
	if _, err := r.Acquire(goldenBinaryKey, 2990, 2); err != nil {
		t.Fatal(err)
	}
	return r
}

func checkGoldenRateAnswers(t *testing.T, r *RateLimiter, answers []goldenAnswer[Decision]) {
	t.Helper()
	for i, a := range answers {
		var got Decision
		var err error
		if i%2 == 0 { // the string form asks the same question
			got, err = r.Peek(a.key, goldenRLPeekAt, 1)
		} else {
			got, err = r.PeekString(string(a.key), goldenRLPeekAt, 1)
		}
		must(t, err)
		if got != a.want {
			t.Errorf("Peek(%q, %d, 1) = %+v, want %+v", a.key, goldenRLPeekAt, got, a.want)
		}
	}
}

func TestGoldenRateLimiterRead(t *testing.T) {
	for _, c := range goldenRateCases {
		t.Run(c.name, func(t *testing.T) {
			blob := readGoldenBlob(t, c.name)
			answers := readRateExpected(t, c.name)
			r, err := DeserializeRateLimiter(blob)
			must(t, err)
			defer r.Close()
			// the flags are in the envelope: exact mode or not
			if got := RateLimiterFlags(blob[8]); got != c.flags {
				t.Fatalf("envelope flags %d, want %d", got, c.flags)
			}
			again := res(r.Serialize()).get(t)
			if !bytes.Equal(again, blob) {
				t.Fatalf("the deserialized golden limiter serializes to other bytes (%d, the blob %d; first difference at %d)",
					len(again), len(blob), firstDiff(again, blob))
			}
			st := res(r.Stats()).get(t)
			// 30 keys requested, plus the binary key; each tracked unless idle
			if st.Keys == 0 || st.Keys > 31 || st.DeniedFull != 0 || st.AllowedFull != 0 {
				t.Fatalf("Stats = %+v", st)
			}
			checkGoldenRateAnswers(t, r, answers)
			// Whatever the hashing: keys never requested see their full
			// limit, bounded by the global window; peeks create no key.
			for i := 30; i < goldenRLKeys; i++ {
				a := answers[i]
				if !a.want.Allowed || a.want.Remaining > 4 || a.want.RetryAt != 0 {
					t.Errorf("key-%d (never requested) answers %+v", i, a.want)
				}
			}
			if got := res(r.Stats()).get(t); got.Keys != st.Keys {
				t.Fatalf("peeks changed the keys: %+v, before %+v", got, st)
			}
		})
	}
}

func TestGoldenRateLimiterWrite(t *testing.T) {
	for _, c := range goldenRateCases {
		t.Run(c.name, func(t *testing.T) {
			r := buildGoldenRateLimiter(t, c.flags)
			checkGoldenBytes(t, r, c.name)
			// and the rebuilt limiter gives the recorded answers itself
			checkGoldenRateAnswers(t, r, readRateExpected(t, c.name))
		})
	}
}
