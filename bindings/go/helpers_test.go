package temporalfilters

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The helpers every suite of this package shares: failures, statuses and
// families of errors, closed structures.

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// allSentinels are the status sentinels, in the order of the statuses.
var allSentinels = []error{
	ErrNull, ErrInvalidArgument, ErrOutOfMemory, ErrTooLarge, ErrBufferTooSmall, ErrTruncated,
	ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind, ErrChecksum, ErrCorrupt, ErrIncompatible,
	ErrInternal,
}

// allFamilies are the family sentinels of docs/conventions.md, and
// familyOf the family of each status (none for the others): the table the
// errors must follow, written out here rather than taken from the package.
var (
	allFamilies = []error{ErrInvalidArgument, ErrBadBlob, ErrIncompatible, ErrOutOfMemory, ErrClosed}
	familyOf    = map[Status]error{
		StatusNull:               ErrInvalidArgument,
		StatusInvalidArgument:    ErrInvalidArgument,
		StatusTooLarge:           ErrInvalidArgument,
		StatusTruncated:          ErrBadBlob,
		StatusBadMagic:           ErrBadBlob,
		StatusUnsupportedVersion: ErrBadBlob,
		StatusWrongKind:          ErrBadBlob,
		StatusChecksum:           ErrBadBlob,
		StatusCorrupt:            ErrBadBlob,
		StatusIncompatible:       ErrIncompatible,
		StatusOutOfMemory:        ErrOutOfMemory,
	}
)

// wantStatus checks that err is an *Error of the sentinel's status (and of
// no other), with the status name and a message, of the status's family
// (and of no other), and not a closed structure's.
func wantStatus(t *testing.T, err error, sentinel error) {
	t.Helper()
	wantError(t, err, sentinel.(Status), familyOf[sentinel.(Status)])
}

// wantClosed checks that err is the error of a call (what) on a closed
// structure called name: status TF_ERR_NULL, family ErrClosed only, and a
// message that says "the <name> is closed".
func wantClosed(t *testing.T, what, name string, err error) {
	t.Helper()
	wantError(t, err, StatusNull, ErrClosed)
	if !strings.Contains(err.Error(), "the "+name+" is closed") {
		t.Errorf("%s: message %q does not say the %s is closed", what, err, name)
	}
}

// wantError checks the status, name, message and family of err.
func wantError(t *testing.T, err error, want Status, family error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if e.Status != want || e.Name != want.String() {
		t.Fatalf("error %v: status %d (%s), want %d (%s)", err, e.Status, e.Name, want, want.String())
	}
	if e.Message == "" {
		t.Fatalf("error %v has no message", err)
	}
	for _, other := range allSentinels {
		// ErrInvalidArgument is a status and a family
		is := other == error(want) || other == ErrInvalidArgument && family == ErrInvalidArgument
		if errors.Is(err, other) != is {
			t.Fatalf("errors.Is(%v, %v) = %v", err, other, !is)
		}
	}
	for _, f := range allFamilies {
		if errors.Is(err, f) != (f == family) {
			t.Fatalf("errors.Is(%v, family %v) = %v, the family is %v", err, f, f != family, family)
		}
	}
}

// checkClosedStructure calls the methods every structure has on s, closed
// (or zero, or nil), and wants the closed error of name from each; String
// says "<name>(closed)" and Close is a no-op.
func checkClosedStructure(t *testing.T, name string, s structure) {
	t.Helper()
	_, err := s.Memory()
	wantClosed(t, "Memory", name, err)
	_, err = s.Serialize()
	wantClosed(t, "Serialize", name, err)
	_, err = s.MarshalBinary()
	wantClosed(t, "MarshalBinary", name, err)
	if got := s.String(); got != name+"(closed)" {
		t.Errorf("String = %q", got)
	}
	must(t, s.Close()) // idempotent
}

// wantRefused checks that a constructor (what, for the messages) refused:
// no structure (one that came back anyway is closed) and the error want.
func wantRefused[T any, P interface {
	*T
	structure
}](t *testing.T, what string, s P, err, want error) {
	t.Helper()
	if s != nil {
		s.Close()
		t.Errorf("%s returned a structure with the error", what)
	}
	wantStatus(t, err, want)
}

// inParallel runs work(g) for every g below n, each in its own goroutine,
// all at once, and waits for them; the error of any fails t.
func inParallel(t *testing.T, n int, work func(g int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			errs[g] = work(g)
		}(g)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// inBackground runs step(0), step(1), ... in a goroutine until the
// returned stop is called or a step fails. stop waits for it, fails t with
// the step's error and returns the number of steps run. It is also stopped
// at t's cleanup (before the structures made earlier are closed), so that a
// test that fails meanwhile never leaves it running.
func inBackground(t *testing.T, step func(i int) error) (stop func() int) {
	quit, done := make(chan struct{}), make(chan struct{})
	var n int
	var err error
	go func() {
		defer close(done)
		for ; ; n++ {
			select {
			case <-quit:
				return
			default:
			}
			if err = step(n); err != nil {
				return
			}
			runtime.Gosched()
		}
	}()
	var once sync.Once
	halt := func() {
		once.Do(func() { close(quit) })
		<-done
	}
	t.Cleanup(halt)
	return func() int {
		t.Helper()
		halt()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}
