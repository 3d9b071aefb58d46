package temporalfilters

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"temporalfilters.org/go/temporalfilters/internal/native"
)

func TestStatusValues(t *testing.T) {
	pairs := []struct {
		goStatus Status
		native   native.Enum_SS_tf_status
		name     string
	}{
		{StatusOK, native.TF_OK, "TF_OK"},
		{StatusNull, native.TF_ERR_NULL, "TF_ERR_NULL"},
		{StatusInvalidArgument, native.TF_ERR_INVALID_ARGUMENT, "TF_ERR_INVALID_ARGUMENT"},
		{StatusOutOfMemory, native.TF_ERR_OUT_OF_MEMORY, "TF_ERR_OUT_OF_MEMORY"},
		{StatusTooLarge, native.TF_ERR_TOO_LARGE, "TF_ERR_TOO_LARGE"},
		{StatusBufferTooSmall, native.TF_ERR_BUFFER_TOO_SMALL, "TF_ERR_BUFFER_TOO_SMALL"},
		{StatusTruncated, native.TF_ERR_TRUNCATED, "TF_ERR_TRUNCATED"},
		{StatusBadMagic, native.TF_ERR_BAD_MAGIC, "TF_ERR_BAD_MAGIC"},
		{StatusUnsupportedVersion, native.TF_ERR_UNSUPPORTED_VERSION, "TF_ERR_UNSUPPORTED_VERSION"},
		{StatusWrongKind, native.TF_ERR_WRONG_KIND, "TF_ERR_WRONG_KIND"},
		{StatusChecksum, native.TF_ERR_CHECKSUM, "TF_ERR_CHECKSUM"},
		{StatusCorrupt, native.TF_ERR_CORRUPT, "TF_ERR_CORRUPT"},
		{StatusIncompatible, native.TF_ERR_INCOMPATIBLE, "TF_ERR_INCOMPATIBLE"},
		{StatusInternal, native.TF_ERR_INTERNAL, "TF_ERR_INTERNAL"},
		{StatusTimeout, native.TF_ERR_TIMEOUT, "TF_ERR_TIMEOUT"},
		{StatusUnavailable, native.TF_ERR_UNAVAILABLE, "TF_ERR_UNAVAILABLE"},
	}
	for i, p := range pairs {
		if int(p.goStatus) != int(p.native) || int(p.goStatus) != -i {
			t.Errorf("%s: Go %d, C %d", p.name, p.goStatus, p.native)
		}
		if p.goStatus.String() != p.name {
			t.Errorf("Status(%d).String() = %q, want %q", p.goStatus, p.goStatus.String(), p.name)
		}
		if i > 0 && allSentinels[i-1] != error(p.goStatus) {
			t.Errorf("sentinel %d is %v, want %v", i-1, allSentinels[i-1], p.goStatus)
		}
	}
	if got := Status(-99).String(); got != "TF_ERR_UNKNOWN" {
		t.Errorf("Status(-99) = %q", got)
	}
	// the flags are the C header's (through the native package): these are
	// the values the documentation gives
	if RecencySketchConcurrent != 1 || RecencySketchBlocked != 2 {
		t.Errorf("RecencySketchConcurrent = %d, RecencySketchBlocked = %d", RecencySketchConcurrent, RecencySketchBlocked)
	}
	if ErrChecksum.Error() != "temporalfilters: TF_ERR_CHECKSUM" {
		t.Errorf("ErrChecksum.Error() = %q", ErrChecksum.Error())
	}
}

func TestErrorType(t *testing.T) {
	_, err := NewRecencySketch(0, 4)
	wantStatus(t, err, StatusInvalidArgument)
	var e *Error
	errors.As(err, &e)
	if !strings.HasPrefix(err.Error(), "temporalfilters: TF_ERR_INVALID_ARGUMENT: ") ||
		!strings.Contains(err.Error(), e.Message) {
		t.Errorf("Error() = %q", err.Error())
	}
	// wrapping keeps errors.Is and errors.As working
	wrapped := fmt.Errorf("loading: %w", err)
	if !errors.Is(wrapped, ErrInvalidArgument) || errors.Is(wrapped, ErrNull) {
		t.Error("errors.Is through %w")
	}
	// an *Error matches another *Error of the same status
	if !errors.Is(err, &Error{Status: StatusInvalidArgument}) || errors.Is(err, &Error{Status: StatusNull}) {
		t.Error("*Error.Is(*Error)")
	}
}

// Every status is in the family of docs/conventions.md, and only in it; a
// closed structure's error is in ErrClosed alone.
func TestErrorFamilies(t *testing.T) {
	for _, sentinel := range allSentinels {
		st := sentinel.(Status)
		wantStatus(t, newError(st, "a message"), sentinel)
		wantStatus(t, fmt.Errorf("wrapped: %w", newError(st, "a message")), sentinel)
	}
	wantStatus(t, newError(StatusBufferTooSmall, "no family"), ErrBufferTooSmall)
	if familyOf[StatusBufferTooSmall] != nil || familyOf[StatusInternal] != nil {
		t.Error("TF_ERR_BUFFER_TOO_SMALL and TF_ERR_INTERNAL belong to no family")
	}
	var s *RecencySketch
	_, err := s.Query([]byte("k"))
	wantClosed(t, "Query", "RecencySketch", err)
	if !errors.Is(err, ErrNull) || errors.Is(err, ErrInvalidArgument) || !errors.Is(err, ErrClosed) {
		t.Errorf("closed: errors.Is ErrNull %v, ErrInvalidArgument %v, ErrClosed %v",
			errors.Is(err, ErrNull), errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrClosed))
	}
	// a nil argument is an invalid argument, not a closed structure
	err = s.UnmarshalBinary(nil)
	wantStatus(t, err, ErrNull)
	if !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrClosed) {
		t.Errorf("nil argument: %v", err)
	}
	for _, c := range []struct {
		family error
		text   string
	}{{ErrBadBlob, "temporalfilters: bad blob"}, {ErrClosed, "temporalfilters: closed"},
		{ErrInvalidArgument, "temporalfilters: invalid argument"}, {ErrUnavailable, "temporalfilters: unavailable"}} {
		if c.family.Error() != c.text {
			t.Errorf("%q, want %q", c.family.Error(), c.text)
		}
	}
}

// ErrInvalidArgument is the family of three statuses; StatusInvalidArgument
// tells TF_ERR_INVALID_ARGUMENT apart from the other two.
func TestInvalidArgumentStatusAlone(t *testing.T) {
	s, err := NewRecencySketch(1024, 4)
	must(t, err)
	defer s.Close()
	_, tooLarge := NewAgeBloom(3, 3, math.MaxUint64)
	for _, c := range []struct {
		what   string
		err    error
		status Status
	}{
		{"a zero time", s.Update([]byte("k"), 0), StatusInvalidArgument},
		{"a nil sketch", (*RecencySketch)(nil).UnmarshalBinary([]byte("x")), StatusNull},
		{"a filter too large", tooLarge, StatusTooLarge},
		{"an empty blob", new(RecencySketch).UnmarshalBinary(nil), StatusTruncated},
	} {
		var e *Error
		if !errors.As(c.err, &e) || e.Status != c.status {
			t.Fatalf("%s: %v, want status %v", c.what, c.err, c.status)
		}
		alone := c.status == StatusInvalidArgument
		if errors.Is(c.err, StatusInvalidArgument) != alone {
			t.Errorf("%s: errors.Is(err, StatusInvalidArgument) = %v", c.what, !alone)
		}
		family := c.status != StatusTruncated
		if errors.Is(c.err, ErrInvalidArgument) != family {
			t.Errorf("%s: errors.Is(err, ErrInvalidArgument) = %v", c.what, !family)
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	bad := []struct {
		width       uint64
		depth, seed uint32
		flags       RecencySketchFlags
		want        error
	}{
		{0, 4, 0, 0, StatusInvalidArgument},
		{100, 0, 0, 0, StatusInvalidArgument},
		{100, 33, 0, 0, StatusInvalidArgument},
		{100, 9, 0, RecencySketchBlocked, StatusInvalidArgument},
		{100, 4, 0, 4, StatusInvalidArgument},
		{100, 4, 0, 0x80000000, StatusInvalidArgument},
		{math.MaxUint64, 2, 0, 0, ErrTooLarge},
		{1 << 62, 4, 0, 0, ErrTooLarge},
	}
	for _, c := range bad {
		s, err := NewRecencySketch(c.width, c.depth, WithSeed(c.seed), WithFlags(c.flags))
		wantRefused(t, fmt.Sprintf("NewRecencySketch(%d, %d, %d, %d)", c.width, c.depth, c.seed, c.flags), s, err, c.want)
	}
	// the largest depths are accepted
	for _, c := range []struct {
		depth uint32
		flags RecencySketchFlags
	}{{32, 0}, {8, RecencySketchBlocked}} {
		s, err := NewRecencySketch(3, c.depth, WithFlags(c.flags))
		must(t, err)
		s.Close()
	}

	badFor := []struct {
		n     uint64
		p     float64
		flags RecencySketchFlags
		want  error
	}{
		{0, 0.01, 0, StatusInvalidArgument},
		{10, 0, 0, StatusInvalidArgument},
		{10, 1, 0, StatusInvalidArgument},
		{10, -0.5, 0, StatusInvalidArgument},
		{10, math.NaN(), 0, StatusInvalidArgument},
		{10, math.Inf(1), 0, StatusInvalidArgument},
		{10, 0.01, 0x80, StatusInvalidArgument},
		{math.MaxUint64, 1e-300, 0, ErrTooLarge},
		{math.MaxUint64, 1e-12, RecencySketchBlocked, ErrTooLarge},
	}
	for _, c := range badFor {
		w, d, err := RecencySketchDimensions(c.n, c.p, WithFlags(c.flags))
		wantStatus(t, err, c.want)
		_ = w + uint64(d)
		s, err := NewRecencySketchFor(c.n, c.p, WithFlags(c.flags))
		wantRefused(t, fmt.Sprintf("NewRecencySketchFor(%d, %g)", c.n, c.p), s, err, c.want)
	}
}

func TestArgumentErrors(t *testing.T) {
	s := exactSketch(t, 0)
	k := []byte("k")
	wantStatus(t, s.Update(k, 0), StatusInvalidArgument)
	wantStatus(t, s.UpdateString("k", 0), StatusInvalidArgument)
	_, err := s.Pace(k, 0, 10)
	wantStatus(t, err, StatusInvalidArgument)
	_, err = s.Pace(k, 10, 0)
	wantStatus(t, err, StatusInvalidArgument)
	wantStatus(t, s.TTLInsert(k, 0, 10), StatusInvalidArgument)
	wantStatus(t, s.TTLInsert(k, 10, 0), StatusInvalidArgument)
	_, err = s.TTLMaybeLive(k, 0)
	wantStatus(t, err, StatusInvalidArgument)
	// none of them changed anything
	if got := mustQuery(t, s, k); got != Never {
		t.Fatalf("failed calls recorded %d", got)
	}
	// a failure does not stick: the next call succeeds
	must(t, s.Update(k, 1))
}

// checkClosed calls every method of s and wants a clean ErrNull.
func checkClosed(t *testing.T, s *RecencySketch) {
	t.Helper()
	checkEveryMethodClosed(t, "RecencySketch", s, "Update UpdateString Query QueryString LastSeen Pace TTLInsert "+
		"TTLMaybeLive UpdateBatch UpdateBatchStrings QueryBatch QueryBatchStrings Clear ErrorEstimate Info Width "+
		"Depth Seed Flags Cells Memory Serialize MarshalBinary Merge")
	open := mustNew(t, 16, 2, 0, 0)
	wantClosed(t, "Merge from closed", "RecencySketch", open.Merge(s))
}

func TestClosed(t *testing.T) {
	s, err := NewRecencySketch(64, 2, WithFlags(RecencySketchConcurrent))
	must(t, err)
	must(t, s.Update([]byte("k"), 5))
	s2, err := NewRecencySketch(64, 2)
	must(t, err)
	checkClosedStates(t, checkClosed, s, s2)
}

func TestZeroAndNilSketch(t *testing.T) {
	checkClosedStates(t, checkClosed)
}

func TestDeserializeErrors(t *testing.T) {
	own := readGoldenBlob(t, "recency_sketch_v1")
	cases := append(envelopeCases(t, own),
		blobCase{"depth 0 (resealed)", resealedWith(own, 8, putU32(0)), ErrCorrupt},
		blobCase{"depth 33 (resealed)", resealedWith(own, 8, putU32(33)), ErrCorrupt},
		blobCase{"cell count off by one (resealed)", resealedWith(own, 16, putU64(256*3+1)), ErrCorrupt},
		blobCase{"width doubled (resealed)", resealedWith(own, 0, putU64(512)), ErrCorrupt})
	checkRefusedBlobs(t, cases, DeserializeRecencySketch, checkClosed)
}

// The layer recovers only the panics of failed native calls.
func TestForeignPanicsPropagate(t *testing.T) {
	for _, v := range []interface{}{"boom", "tf:x:not a status", "tf:5:positive", "tf:-2", errors.New("tf:-2:an error value")} {
		func() {
			defer func() {
				if r := recover(); r != v {
					t.Errorf("panic(%v) recovered as %v", v, r)
				}
			}()
			_ = func() (err error) {
				defer catch(&err)
				panic(v)
			}()
			t.Errorf("panic(%v) was swallowed", v)
		}()
	}
	// and a well-formed one becomes the error
	err := func() (err error) {
		defer catch(&err)
		panic("tf:-10:bad sum: with a colon")
	}()
	wantStatus(t, err, ErrChecksum)
	if e := err.(*Error); e.Message != "bad sum: with a colon" {
		t.Errorf("message %q", e.Message)
	}
}

func TestVersionAndClock(t *testing.T) {
	v := Version()
	if parts := strings.Split(v, "."); len(parts) != 3 {
		t.Errorf("Version() = %q", v)
	}
	a := NowMillis()
	if a < 1600000000000 {
		t.Errorf("NowMillis() = %d, before 2020", a)
	}
}

// The options: defaults (seed 0, flags 0) when none is given, a nil one
// ignored, and the ones a call does not take refused before anything is
// created.
func TestOptions(t *testing.T) {
	s, err := NewRecencySketch(64, 2, nil)
	must(t, err)
	defer s.Close()
	if info, err := s.Info(); err != nil || info.Seed != 0 || info.Flags != 0 {
		t.Fatalf("defaults: %+v, %v", info, err)
	}
	s2, err := NewRecencySketch(64, 2, WithSeed(9), WithFlags(RecencySketchBlocked), WithSeed(10))
	must(t, err)
	defer s2.Close()
	if info, err := s2.Info(); err != nil || info.Seed != 10 || info.Flags != RecencySketchBlocked {
		t.Fatalf("the last WithSeed counts: %+v, %v", info, err)
	}
	refused := []struct {
		what string
		mk   func() (structure, error)
	}{
		{"a seed for DeserializeRateLimiter", func() (structure, error) { return DeserializeRateLimiter(nil, WithSeed(1)) }},
		{"a RecencySketch's flags for a RateLimiter", func() (structure, error) {
			return NewRateLimiter(5, 100, 10, WithFlags(RecencySketchConcurrent))
		}},
		{"a RateLimiter's flags for a RecencySketch", func() (structure, error) {
			return NewRecencySketch(64, 2, WithFlags(RateLimiterExact))
		}},
		{"an AgeBloom's flags for a TimeBloom", func() (structure, error) {
			return NewTimeBloomFor(100, 0.01, 1000, WithFlags(AgeBloomBlocked))
		}},
		{"a RateLimiter's flags for an AgeBloom", func() (structure, error) {
			return NewAgeBloomFor(100, 0.01, WithFlags(RateLimiterFullAllow))
		}},
		{"an unknown AgeBloom flag", func() (structure, error) { return NewAgeBloom(3, 4, 200, WithFlags(AgeBloomFlags(4))) }},
		{"AgeBloomMinMemory for NewAgeBloom", func() (structure, error) {
			return NewAgeBloom(3, 4, 200, WithFlags(AgeBloomMinMemory))
		}},
		{"an unknown TimeBloom flag", func() (structure, error) {
			return NewTimeBloomFor(100, 0.01, 1000, WithFlags(TimeBloomFlags(2)))
		}},
		{"TimeBloomMinMemory for NewTimeBloom", func() (structure, error) {
			return NewTimeBloom(3, 4, 200, 100, WithFlags(TimeBloomMinMemory))
		}},
		{"a RotatingCuckoo's options for a TimeBloom", func() (structure, error) {
			return NewTimeBloom(3, 4, 200, 100, WithTTL(5))
		}},
		{"a RotatingCuckoo's options for a deserializer", func() (structure, error) {
			return DeserializeRotatingCuckoo(nil, WithTableSlots(64))
		}},
		{"an AgeBloom's flags for a RotatingCuckoo", func() (structure, error) {
			return NewRotatingCuckoo(WithFlags(AgeBloomBlocked))
		}},
		{"an unknown RotatingCuckoo flag", func() (structure, error) {
			return NewRotatingCuckoo(WithFlags(RotatingCuckooFlags(2)))
		}},
		{"a RotatingCuckoo's options for a RecencyWindow", func() (structure, error) {
			return NewRecencyWindow(WithTTL(5))
		}},
		{"a RecencyWindow's options for a RotatingCuckoo", func() (structure, error) {
			return NewRotatingCuckoo(WithWindow(64))
		}},
		{"a RecencyWindow's options for a deserializer", func() (structure, error) {
			return DeserializeRecencyWindow(nil, WithMode(RecencyWindowExact))
		}},
		{"a RotatingCuckoo's flags for a RecencyWindow", func() (structure, error) {
			return NewRecencyWindow(WithFlags(RotatingCuckooThreeWay))
		}},
		{"a RecencyWindow flag", func() (structure, error) {
			return NewRecencyWindow(WithFlags(RecencyWindowFlags(1)))
		}},
	}
	before := atomic.LoadInt64(&liveObjects)
	for _, c := range refused {
		got, err := c.mk()
		wantStatus(t, err, StatusInvalidArgument)
		if !reflect.ValueOf(got).IsNil() {
			got.Close()
			t.Errorf("%s: a structure came back with the error", c.what)
		}
	}
	if _, _, err := RecencySketchDimensions(100, 0.01, WithSeed(1)); err == nil {
		t.Error("RecencySketchDimensions took a seed")
	} else {
		wantStatus(t, err, StatusInvalidArgument)
	}
	if _, _, _, err := AgeBloomChoose(0.01, WithFlags(RecencySketchBlocked)); err == nil {
		t.Error("AgeBloomChoose took a RecencySketch's flags")
	} else {
		wantStatus(t, err, StatusInvalidArgument)
	}
	if after := atomic.LoadInt64(&liveObjects); after > before { // (finalizers may free others meanwhile)
		t.Errorf("refused options left %d native objects", after-before)
	}
	// zero flags of the right type are the default
	f, err := NewTimeBloom(3, 4, 200, 100, WithFlags(TimeBloomFlags(0)))
	must(t, err)
	must(t, f.Close())
}

// Every field of the Info and Stats structs comes from the native struct's
// getter of the same name, and every getter goes to a field.
func TestInfoStatsFields(t *testing.T) {
	for _, c := range []struct{ goType, nativeType reflect.Type }{
		{reflect.TypeOf(RecencySketchInfo{}), reflect.TypeOf(native.SwigcptrRecencySketchInfoNative(0))},
		{reflect.TypeOf(RateLimiterInfo{}), reflect.TypeOf(native.SwigcptrRateLimiterInfoNative(0))},
		{reflect.TypeOf(RateLimiterStats{}), reflect.TypeOf(native.SwigcptrRateLimiterStatsNative(0))},
		{reflect.TypeOf(AgeBloomInfo{}), reflect.TypeOf(native.SwigcptrAgeBloomInfoNative(0))},
		{reflect.TypeOf(AgeBloomStats{}), reflect.TypeOf(native.SwigcptrAgeBloomStatsNative(0))},
		{reflect.TypeOf(TimeBloomInfo{}), reflect.TypeOf(native.SwigcptrTimeBloomInfoNative(0))},
		{reflect.TypeOf(TimeBloomStats{}), reflect.TypeOf(native.SwigcptrTimeBloomStatsNative(0))},
		{reflect.TypeOf(RotatingCuckooInfo{}), reflect.TypeOf(native.SwigcptrRotatingCuckooInfoNative(0))},
		{reflect.TypeOf(RotatingCuckooStats{}), reflect.TypeOf(native.SwigcptrRotatingCuckooStatsNative(0))},
		{reflect.TypeOf(RotatingCuckooTable{}), reflect.TypeOf(native.SwigcptrRotatingCuckooTableNative(0))},
		{reflect.TypeOf(RecencyWindowInfo{}), reflect.TypeOf(native.SwigcptrRecencyWindowInfoNative(0))},
		{reflect.TypeOf(RecencyWindowStats{}), reflect.TypeOf(native.SwigcptrRecencyWindowStatsNative(0))},
		{reflect.TypeOf(RecencyWindowLevel{}), reflect.TypeOf(native.SwigcptrRecencyWindowLevelNative(0))},
	} {
		used := map[int]bool{}
		for _, m := range nativeFields(c.goType, c.nativeType) { // (panics on a field without a getter)
			used[m] = true
		}
		for m := 0; m < c.nativeType.NumMethod(); m++ {
			if name := c.nativeType.Method(m).Name; strings.HasPrefix(name, "Get") && !used[m] {
				t.Errorf("%v has no field for %v.%s", c.goType, c.nativeType, name)
			}
		}
	}
}

// The shared vocabulary has the values of the C headers (docs/conventions.md).
func TestVocabularyValues(t *testing.T) {
	if Never != native.TF_NEVER || Never != 0 {
		t.Errorf("Never = %d, TF_NEVER = %d", Never, native.TF_NEVER)
	}
	if RetryNever != native.TF_RETRY_NEVER || RetryNever != math.MaxUint64 {
		t.Errorf("RetryNever = %d, TF_RETRY_NEVER = %d", RetryNever, native.TF_RETRY_NEVER)
	}
	if AgeBloomBlocked != 1 || RateLimiterMaxKeyLimit != 65535 || RateLimiterMaxExactLimit != 1<<20 ||
		RateLimiterMaxBuckets != 4096 || RotatingCuckooThreeWay != 1 || RotatingCuckooMaxTables != 1024 ||
		RotatingCuckooMaxKicks != 4096 {
		t.Errorf("AgeBloomBlocked = %d, RateLimiterMax* = %d, %d, %d, RotatingCuckoo* = %d, %d, %d", AgeBloomBlocked,
			RateLimiterMaxKeyLimit, RateLimiterMaxExactLimit, RateLimiterMaxBuckets, RotatingCuckooThreeWay,
			RotatingCuckooMaxTables, RotatingCuckooMaxKicks)
	}
}
