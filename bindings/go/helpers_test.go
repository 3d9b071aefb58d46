package temporalfilters

import (
	"errors"
	"fmt"
	"reflect"
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

// allSentinels are the status sentinels, in the order of the statuses
// (TF_ERR_INVALID_ARGUMENT's is StatusInvalidArgument: ErrInvalidArgument is
// its family; TF_ERR_UNAVAILABLE's is StatusUnavailable: ErrUnavailable is
// its family).
var allSentinels = []error{
	ErrNull, StatusInvalidArgument, ErrOutOfMemory, ErrTooLarge, ErrBufferTooSmall, ErrTruncated,
	ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind, ErrChecksum, ErrCorrupt, ErrIncompatible,
	ErrInternal, ErrTimeout, StatusUnavailable,
}

// allFamilies are the family sentinels of docs/conventions.md, and
// familyOf the family of each status (none for the others): the table the
// errors must follow, written out here rather than taken from the package.
var (
	allFamilies = []error{ErrInvalidArgument, ErrBadBlob, ErrIncompatible, ErrOutOfMemory, ErrUnavailable, ErrClosed}
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
		StatusTimeout:            ErrUnavailable,
		StatusUnavailable:        ErrUnavailable,
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
		// each status sentinel matches its own status and no other
		is := other == error(want)
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

// checkEveryMethodClosed calls every method of s, a closed (or zero, or
// nil) structure called name, that returns an error, with arguments that
// would be valid on an open one, and wants from each the closed error and
// zero values for its other results. It calls every plain getter too (no
// argument, one result that is not an error: Width, Capacity, ...), which
// must not fail: they return the creation-time values, zeros for a zero or
// nil structure (its String says so: "<name>(closed)" from a structure
// that was never open). The methods listed in want (separated by spaces)
// must be among them. Then String must say "<name>(closed)" and Close must
// be a no-op.
func checkEveryMethodClosed(t *testing.T, name string, s structure, want string) {
	t.Helper()
	v := reflect.ValueOf(s)
	called := map[string]bool{}
	for i := 0; i < v.NumMethod(); i++ {
		method := v.Type().Method(i).Name
		fn := v.Method(i)
		ft := fn.Type()
		if ft.NumIn() == 0 && ft.NumOut() == 1 && method != "String" &&
			ft.Out(0) != reflect.TypeOf((*error)(nil)).Elem() {
			// a plain getter: never fails; zero unless the structure was
			// ever open
			out := fn.Call(nil)[0]
			if never := v.IsNil() || v.Elem().Field(0).IsNil(); never && !out.IsZero() {
				t.Errorf("%s of a zero or nil %s = %v, want zero", method, name, out)
			}
			called[method] = true
			continue
		}
		if ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != reflect.TypeOf((*error)(nil)).Elem() ||
			method == "Close" || method == "UnmarshalBinary" { // (UnmarshalBinary opens it again)
			continue
		}
		args := make([]reflect.Value, ft.NumIn())
		for j := range args {
			args[j] = argumentFor(t, ft.In(j))
		}
		out := fn.Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		wantClosed(t, method, name, err)
		for _, o := range out[:len(out)-1] {
			if !o.IsZero() {
				t.Errorf("%s on a closed %s returned %v with the error", method, name, o)
			}
		}
		called[method] = true
	}
	for _, m := range strings.Fields(want) {
		if !called[m] {
			t.Errorf("%s.%s was not called", name, m)
		}
	}
	if got := s.String(); got != name+"(closed)" {
		t.Errorf("String = %q", got)
	}
	must(t, s.Close()) // idempotent
}

// everyMethodClosed is checkEveryMethodClosed for one structure type (its
// name, and the methods that must be called): the check of a closed
// structure that checkClosedStates and checkRefusedBlobs take.
func everyMethodClosed[P structure](name, want string) func(*testing.T, P) {
	return func(t *testing.T, s P) {
		t.Helper()
		checkEveryMethodClosed(t, name, s, want)
	}
}

// argumentFor is a valid argument of type ty: key "k", time 1, one key, an
// open RecencySketch to merge.
func argumentFor(t *testing.T, ty reflect.Type) reflect.Value {
	t.Helper()
	var v interface{}
	switch ty {
	case reflect.TypeOf([]byte(nil)):
		v = []byte("k")
	case reflect.TypeOf(""):
		v = "k"
	case reflect.TypeOf(uint64(0)):
		v = uint64(1)
	case reflect.TypeOf(uint32(0)):
		v = uint32(1)
	case reflect.TypeOf([][]byte(nil)):
		v = [][]byte{[]byte("k")}
	case reflect.TypeOf([]string(nil)):
		v = []string{"k"}
	case reflect.TypeOf([]uint64(nil)):
		v = []uint64{1}
	case reflect.TypeOf((*RecencySketch)(nil)):
		v = mustNew(t, 16, 2, 0, 0)
	default:
		t.Fatalf("no argument of type %v: add one", ty)
	}
	return reflect.ValueOf(v)
}

// checkClosedStates checks with checkClosed every way a structure T is
// closed: each of open closed (twice), a copy of its value taken before
// (it shares the closed structure), a zero T and a nil *T.
func checkClosedStates[T any, P interface {
	*T
	structure
}](t *testing.T, checkClosed func(*testing.T, P), open ...P) {
	t.Helper()
	for _, s := range open {
		cp := *s
		must(t, s.Close())
		must(t, s.Close())
		checkClosed(t, s)
		checkClosed(t, &cp)
	}
	var zero T
	checkClosed(t, &zero)
	var nilP P
	checkClosed(t, nilP)
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

// result is a value with the error of the call that gave it:
// res(f.Info()).get(t) is the info, or fails t.
type result[T any] struct {
	v   T
	err error
}

func res[T any](v T, err error) result[T] { return result[T]{v, err} }

// get returns the value, or fails t with the error (after what, the call,
// when given).
func (r result[T]) get(t *testing.T, what ...interface{}) T {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v", fmt.Sprint(what...), r.err)
	}
	return r.v
}

// keep takes what a constructor returned: it fails t on an error, closes
// the structure at t's cleanup and returns it:
// keep(t, res(NewAgeBloom(3, 4, 200))).
func keep[T any, P interface {
	*T
	structure
}](t *testing.T, r result[P]) P {
	t.Helper()
	s := r.get(t)
	t.Cleanup(func() { s.Close() })
	return s
}
