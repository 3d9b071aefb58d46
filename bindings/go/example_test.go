package temporalfilters_test

import (
	"errors"
	"fmt"
	"log"

	"temporalfilters.org/go/temporalfilters"
)

func Example() {
	// Sized for 10,000 distinct keys with at most 1% too-new answers.
	s, err := temporalfilters.NewRecencySketchFor(10000, 0.01, temporalfilters.WithSeed(42))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	if err := s.UpdateString("alice", 1700000000); err != nil {
		log.Fatal(err)
	}
	last, seen, err := s.LastSeenString("alice")
	fmt.Println(last, seen, err)
	_, seen, _ = s.LastSeenString("bob")
	fmt.Println("bob seen:", seen)
	// Output:
	// 1700000000 true <nil>
	// bob seen: false
}

func ExampleRecencySketch_Pace() {
	s, err := temporalfilters.NewRecencySketch(4096, 4, temporalfilters.WithSeed(1),
		temporalfilters.WithFlags(temporalfilters.RecencySketchConcurrent))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	// at most one request per client per 100 ms
	for _, now := range []uint64{1000, 1040, 1100} {
		res, err := s.PaceString("client-7", now, 100)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("t=%d granted=%v next=%d\n", now, res.Granted, res.NextAllowed)
	}
	// Output:
	// t=1000 granted=true next=1100
	// t=1040 granted=false next=1100
	// t=1100 granted=true next=1200
}

func ExampleDeserializeRecencySketch() {
	s, _ := temporalfilters.NewRecencySketch(64, 2)
	defer s.Close()
	blob, _ := s.MarshalBinary()

	blob[len(blob)-1] ^= 1 // damage the checksum
	_, err := temporalfilters.DeserializeRecencySketch(blob)
	fmt.Println(errors.Is(err, temporalfilters.ErrChecksum))
	var e *temporalfilters.Error
	if errors.As(err, &e) {
		fmt.Println(int(e.Status), e.Name)
	}
	// Output:
	// true
	// -10 TF_ERR_CHECKSUM
}

func ExampleAgeBloom() {
	// De-duplication over the last 100,000 events, at most 1% false positives.
	f, err := temporalfilters.NewAgeBloomFor(100000, 0.01, temporalfilters.WithSeed(42))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	for _, click := range []string{"ad-1/user-9", "ad-2/user-9", "ad-1/user-9"} {
		dup, err := f.AddIfAbsentString(click)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(click, "duplicate:", dup)
	}
	info, _ := f.Info()
	fmt.Println(info.K, info.L, info.Capacity >= 100000)
	// Output:
	// ad-1/user-9 duplicate: false
	// ad-2/user-9 duplicate: false
	// ad-1/user-9 duplicate: true
	// 10 24 true
}

func ExampleTimeBloom() {
	// Keys of the last 60,000 ms, at most 1% false positives at a steady rate.
	f, err := temporalfilters.NewTimeBloomFor(10000, 0.01, 60000, temporalfilters.WithSeed(42))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()

	if err := f.AddString("session-7", 1000); err != nil {
		log.Fatal(err)
	}
	for _, now := range []uint64{1000, 61000, 61001} {
		seen, _ := f.ContainsString("session-7", now)
		fmt.Printf("t=%d seen=%v\n", now, seen)
	}
	_, err = f.ContainsString("session-7", 0)
	fmt.Println(errors.Is(err, temporalfilters.ErrInvalidArgument))
	// Output:
	// t=1000 seen=true
	// t=61000 seen=true
	// t=61001 seen=false
	// true
}

func ExampleRateLimiter() {
	// The worked example of the rate limiter's README: at most 5 requests
	// per second (1000 ms), in 100 ms buckets; times in ms.
	rl, err := temporalfilters.NewRateLimiter(5, 1000, 100)
	if err != nil {
		log.Fatal(err)
	}
	defer rl.Close()

	for _, now := range []uint64{1592171101900, 1592171101950, 1592171102013, 1592171102810,
		1592171102850, 1592171102890, 1592171102980} {
		d, err := rl.AcquireString("client-7", now, 1)
		if err != nil {
			log.Fatal(err)
		}
		if d.Allowed {
			fmt.Printf("t=%d allowed, %d left\n", now, d.Remaining)
		} else {
			fmt.Printf("t=%d 429 Too Many Requests, Retry-After %d ms\n", now, d.RetryAfter(now))
		}
	}
	// Output:
	// t=1592171101900 allowed, 4 left
	// t=1592171101950 allowed, 3 left
	// t=1592171102013 allowed, 2 left
	// t=1592171102810 allowed, 1 left
	// t=1592171102850 allowed, 0 left
	// t=1592171102890 429 Too Many Requests, Retry-After 10 ms
	// t=1592171102980 allowed, 1 left
}

func ExampleRateLimiter_exact() {
	// Exact mode: never more than 1 request per 1000 ms in any window. A
	// global limit of 100 per window caps all keys together, also a key with
	// its own higher limit.
	rl, err := temporalfilters.NewRateLimiter(1, 1000, 0, temporalfilters.WithFlags(temporalfilters.RateLimiterExact))
	if err != nil {
		log.Fatal(err)
	}
	defer rl.Close()
	if err := rl.SetGlobalLimit(100); err != nil {
		log.Fatal(err)
	}
	if err := rl.SetKeyLimitString("batch-job", 500); err != nil {
		log.Fatal(err)
	}

	d, _ := rl.AcquireString("u", 1990, 1)
	fmt.Println(d)
	d, _ = rl.AcquireString("u", 2930, 1) // the bucketed mode would admit it
	fmt.Println(d, d.RetryAfter(2930))
	// above the global limit: never; remaining is the smaller of the key's
	// (500) and the global window's (100, u's permit has left it)
	d, _ = rl.AcquireString("batch-job", 3000, 200)
	fmt.Println(d, d.RetryAt == temporalfilters.RetryNever)
	d, _ = rl.AcquireString("batch-job", 3000, 99)
	fmt.Println(d)
	// Output:
	// allowed (remaining 0)
	// denied (remaining 0, retry at 2990) 60
	// denied (remaining 100, never) true
	// allowed (remaining 1)
}
