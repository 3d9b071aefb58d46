// Command installcheck uses the Go binding as a user's project does: its
// go.mod requires temporalfilters.org/go/temporalfilters and replaces it
// with a copy of the module directory, and the C library comes from the
// system through pkg-config. It uses every structure and round-trips each
// through a blob, and exits with status 1 on the first broken promise.
//
//	installcheck [VERSION]
//
// With VERSION (pkg-config --modversion temporalfilters), the library
// loaded must be that version.
package main

import (
	"bytes"
	"fmt"
	"os"

	"temporalfilters.org/go/temporalfilters"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "installcheck: "+format+"\n", args...)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

// roundTrip serializes s, reads the blob back with deserialize and checks
// that the copy serializes to the same bytes.
func roundTrip[S interface {
	Serialize() ([]byte, error)
	Close() error
}](name string, s S, deserialize func([]byte, ...temporalfilters.Option) (S, error)) S {
	blob, err := s.Serialize()
	check(err, name+".Serialize")
	c, err := deserialize(blob)
	check(err, "Deserialize"+name)
	again, err := c.Serialize()
	check(err, name+".Serialize of the copy")
	if !bytes.Equal(blob, again) {
		fail("%s: the deserialized copy serializes to other bytes", name)
	}
	fmt.Printf("%s: blob round trip of %d bytes\n", name, len(blob))
	return c
}

func main() {
	version := temporalfilters.Version()
	if len(os.Args) > 1 && os.Args[1] != version {
		fail("the library loaded is %s, pkg-config says %s", version, os.Args[1])
	}
	fmt.Printf("libtemporalfilters %s\n", version)

	// RecencySketch: last-seen times, pacing.
	s, err := temporalfilters.NewRecencySketchFor(1000, 0.01, temporalfilters.WithSeed(7))
	check(err, "NewRecencySketchFor")
	defer s.Close()
	check(s.UpdateString("alice", 42), "Update")
	if t, err := s.QueryString("alice"); err != nil || t != 42 {
		fail("Query = %d, %v; want 42", t, err)
	}
	if r, err := s.PaceString("bob", 100, 10); err != nil || !r.Granted || r.NextAllowed != 110 {
		fail("Pace = %+v, %v", r, err)
	}
	if s.Width() == 0 || s.Depth() == 0 || s.Seed() != 7 {
		fail("RecencySketch getters %d %d %d", s.Width(), s.Depth(), s.Seed())
	}
	s2 := roundTrip("RecencySketch", s, temporalfilters.DeserializeRecencySketch)
	defer s2.Close()
	if t, err := s2.QueryString("alice"); err != nil || t != 42 || s2.Width() != s.Width() {
		fail("the sketch's copy: Query = %d, %v, Width %d", t, err, s2.Width())
	}

	// AgeBloom: the last N inserts.
	a, err := temporalfilters.NewAgeBloomFor(1000, 0.01)
	check(err, "NewAgeBloomFor")
	defer a.Close()
	check(a.AddString("click-1"), "AgeBloom.Add")
	if ok, err := a.ContainsString("click-1"); err != nil || !ok {
		fail("AgeBloom.Contains = %v, %v", ok, err)
	}
	if a.Capacity() < 1000 {
		fail("AgeBloom.Capacity = %d", a.Capacity())
	}
	a2 := roundTrip("AgeBloom", a, temporalfilters.DeserializeAgeBloom)
	defer a2.Close()
	if ok, err := a2.ContainsString("click-1"); err != nil || !ok {
		fail("the AgeBloom's copy: Contains = %v, %v", ok, err)
	}

	// TimeBloom: inserts of the last span time units.
	b, err := temporalfilters.NewTimeBloomFor(1000, 0.01, 60000)
	check(err, "NewTimeBloomFor")
	defer b.Close()
	check(b.AddString("session-1", 1000), "TimeBloom.Add")
	if ok, err := b.ContainsString("session-1", 2000); err != nil || !ok {
		fail("TimeBloom.Contains = %v, %v", ok, err)
	}
	if b.Span() != 60000 {
		fail("TimeBloom.Span = %d", b.Span())
	}
	b2 := roundTrip("TimeBloom", b, temporalfilters.DeserializeTimeBloom)
	defer b2.Close()
	if ok, err := b2.ContainsString("session-1", 2000); err != nil || !ok {
		fail("the TimeBloom's copy: Contains = %v, %v", ok, err)
	}

	// RateLimiter: 2 requests per 1000 time units and key, one by one and
	// in a batch.
	r, err := temporalfilters.NewRateLimiter(2, 1000, 100, temporalfilters.WithSeed(3))
	check(err, "NewRateLimiter")
	defer r.Close()
	ds, err := r.AcquireBatchStrings([]string{"k", "k", "k"}, []uint64{1, 2, 3}, 1)
	check(err, "AcquireBatchStrings")
	if !ds[0].Allowed || !ds[1].Allowed || ds[2].Allowed || ds[2].RetryAt == 0 {
		fail("AcquireBatchStrings = %+v", ds)
	}
	r2 := roundTrip("RateLimiter", r, temporalfilters.DeserializeRateLimiter)
	defer r2.Close()
	if d, err := r2.AcquireString("k", 4, 1); err != nil || d.Allowed {
		fail("the limiter's copy forgot the key: Acquire = %+v, %v", d, err)
	}
	// RotatingCuckoo: de-duplication with a ttl, one by one and in a batch.
	c, err := temporalfilters.NewRotatingCuckoo(temporalfilters.WithTableSlots(64), temporalfilters.WithTTL(60000))
	check(err, "NewRotatingCuckoo")
	defer c.Close()
	if seen, err := c.AddIfAbsentString("event-1", 1000); err != nil || seen {
		fail("RotatingCuckoo.AddIfAbsent = %v, %v", seen, err)
	}
	if seen, err := c.AddIfAbsentBatchStrings([]string{"event-1", "event-2", "event-2"}, 2000); err != nil ||
		!seen[0] || seen[1] || !seen[2] {
		fail("RotatingCuckoo.AddIfAbsentBatch = %v, %v", seen, err)
	}
	if c.TTL() != 60000 {
		fail("RotatingCuckoo.TTL = %d", c.TTL())
	}
	c2 := roundTrip("RotatingCuckoo", c, temporalfilters.DeserializeRotatingCuckoo)
	defer c2.Close()
	if ok, err := c2.ContainsString("event-2", 2000); err != nil || !ok {
		fail("the RotatingCuckoo's copy: Contains = %v, %v", ok, err)
	}
	// RecencyWindow: how many inserts ago, one by one and in a batch.
	w, err := temporalfilters.NewRecencyWindow(temporalfilters.WithWindow(100),
		temporalfilters.WithMode(temporalfilters.RecencyWindowExact))
	check(err, "NewRecencyWindow")
	defer w.Close()
	if r, in, err := w.InsertReportString("object-1"); err != nil || in {
		fail("RecencyWindow.InsertReport of a new key = %d, %v, %v", r, in, err)
	}
	check(w.InsertString("object-2"), "RecencyWindow.Insert")
	if r, in, err := w.InsertReportString("object-1"); err != nil || !in || r != 1 {
		fail("RecencyWindow.InsertReport = %d, %v, %v", r, in, err)
	}
	if got, err := w.InsertReportBatchStrings([]string{"object-2", "object-3"}); err != nil || got[0] != 1 ||
		got[1] != temporalfilters.RecencyWindowNotInWindow {
		fail("RecencyWindow.InsertReportBatch = %v, %v", got, err)
	}
	w2 := roundTrip("RecencyWindow", w, temporalfilters.DeserializeRecencyWindow)
	defer w2.Close()
	if r, in, err := w2.QueryString("object-1"); err != nil || !in || r != 2 {
		fail("the RecencyWindow's copy: Query = %d, %v, %v", r, in, err)
	}
	fmt.Println("installcheck: ok")
}
