package temporalfilters

import (
	"fmt"
	"strconv"
	"strings"

	"temporalfilters.org/go/temporalfilters/internal/native"
)

// Status is a status code of the C library (tf_status in
// temporalfilters/common.h). The values are part of the library's ABI.
//
// A Status other than StatusOK is also an error, and the sentinel of that
// status alone: errors.Is(err, StatusChecksum) is true for TF_ERR_CHECKSUM
// and for nothing else. The sentinels ErrNull ... ErrTimeout are these
// Status values, except ErrInvalidArgument and ErrUnavailable, which are
// families (below).
type Status int

// The status codes of the C library, in its order: 0, then -1 down to -15
// (TestStatusValues compares each with the C header's value).
const (
	StatusOK Status = -iota
	StatusNull
	StatusInvalidArgument
	StatusOutOfMemory
	StatusTooLarge
	StatusBufferTooSmall
	StatusTruncated
	StatusBadMagic
	StatusUnsupportedVersion
	StatusWrongKind
	StatusChecksum
	StatusCorrupt
	StatusIncompatible
	StatusInternal
	StatusTimeout
	StatusUnavailable
)

// Sentinel errors, one per failing status. Every error returned by this
// package is an *Error whose Is method matches the sentinel of its status:
//
//	if errors.Is(err, temporalfilters.ErrChecksum) { ... }
//
// Errors also come in families, the same in every language of the library
// (docs/conventions.md), for the callers who handle a kind of failure rather
// than one status: ErrInvalidArgument, ErrBadBlob, ErrIncompatible,
// ErrOutOfMemory, ErrUnavailable and ErrClosed. ErrInvalidArgument is the family of
// TF_ERR_NULL, TF_ERR_INVALID_ARGUMENT and TF_ERR_TOO_LARGE, and only a
// family: the sentinel of the status TF_ERR_INVALID_ARGUMENT alone is
// StatusInvalidArgument (errors.Is(err, StatusInvalidArgument) is false for a
// nil argument, which is ErrNull). ErrIncompatible and ErrOutOfMemory are
// families of one status each, so they are that status's sentinel too.
// ErrUnavailable is the family of TF_ERR_TIMEOUT and TF_ERR_UNAVAILABLE (a
// remote store did not answer); the sentinel of TF_ERR_UNAVAILABLE alone is
// StatusUnavailable. TF_ERR_INTERNAL and TF_ERR_BUFFER_TOO_SMALL belong to
// no family.
var (
	ErrNull               error = StatusNull               // a required argument was nil (a closed structure's calls: also ErrClosed)
	ErrOutOfMemory        error = StatusOutOfMemory        // an allocation failed (status and family)
	ErrTooLarge           error = StatusTooLarge           // sizes overflow or exceed the library's limits
	ErrBufferTooSmall     error = StatusBufferTooSmall     // an output buffer is too short
	ErrTruncated          error = StatusTruncated          // a blob is shorter than its header says
	ErrBadMagic           error = StatusBadMagic           // a blob does not start with "TFLT"
	ErrUnsupportedVersion error = StatusUnsupportedVersion // a blob's format version is unknown
	ErrWrongKind          error = StatusWrongKind          // a blob holds another kind of structure
	ErrChecksum           error = StatusChecksum           // a blob's checksum does not match its bytes
	ErrCorrupt            error = StatusCorrupt            // a blob's fields break the structure's invariants
	ErrIncompatible       error = StatusIncompatible       // two structures differ in shape or seed (status and family)
	ErrInternal           error = StatusInternal           // a bug in the library; please report it
	ErrTimeout            error = StatusTimeout            // a remote store did not answer within the timeout (also ErrUnavailable)
)

// The families that are not a status of their own.
var (
	// ErrInvalidArgument is the family of the arguments a call refuses:
	// ErrNull (a nil argument; not a closed structure's calls),
	// StatusInvalidArgument (a value out of its documented range, an
	// unknown flag) and ErrTooLarge (sizes that overflow or pass a limit).
	// For TF_ERR_INVALID_ARGUMENT alone, use StatusInvalidArgument.
	ErrInvalidArgument error = family("invalid argument")
	// ErrBadBlob is the family of the blobs deserialize refuses:
	// ErrTruncated, ErrBadMagic, ErrUnsupportedVersion, ErrWrongKind,
	// ErrChecksum and ErrCorrupt.
	ErrBadBlob error = family("bad blob")
	// ErrUnavailable is the family of a remote store (the Redis server of
	// the Redis limiter) that did not answer: ErrTimeout (no answer within
	// the timeout given at creation) and StatusUnavailable (it cannot be
	// reached or cannot serve the request now). For TF_ERR_UNAVAILABLE
	// alone, use StatusUnavailable.
	ErrUnavailable error = family("unavailable")
	// ErrClosed is the family of the calls on a closed structure (or a
	// zero or nil one): any method after Close. Their status is
	// TF_ERR_NULL (they match ErrNull too, not ErrInvalidArgument).
	ErrClosed error = family("closed")
)

// family is the type of the family sentinels that are no Status.
type family string

func (f family) Error() string { return "temporalfilters: " + string(f) }

// String returns the C name of the status, e.g. "TF_ERR_CHECKSUM"
// (tf_status_string), or "TF_ERR_UNKNOWN" for a code the library does not
// define.
func (s Status) String() string {
	return native.Tf_status_string(int(s))
}

// Error returns the status name, so that a Status can serve as a sentinel
// error.
func (s Status) Error() string {
	return "temporalfilters: " + s.String()
}

// Error is the error returned for every failing call: the status code, its
// name and the library's message explaining this failure.
type Error struct {
	Status  Status // the failing status, never StatusOK
	Name    string // the status name, e.g. "TF_ERR_CHECKSUM"
	Message string // the library's message, e.g. "blob checksum mismatch (...)"

	closed bool // a call on a closed structure (family ErrClosed)
}

// Error formats the error as "temporalfilters: <name>: <message>".
func (e *Error) Error() string {
	if e.Message == "" {
		return "temporalfilters: " + e.Name
	}
	return "temporalfilters: " + e.Name + ": " + e.Message
}

// Is reports whether target is the sentinel of e's status (a Status:
// ErrNull, StatusInvalidArgument, ...), the sentinel of its family
// (ErrInvalidArgument, ErrBadBlob, ErrIncompatible, ErrOutOfMemory,
// ErrUnavailable, ErrClosed) or an *Error with the same status.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Status:
		return t == e.Status
	case family:
		return t == ErrClosed && e.closed || t == ErrBadBlob && e.isBadBlob() ||
			t == ErrInvalidArgument && e.isInvalidArgument() ||
			t == ErrUnavailable && (e.Status == StatusTimeout || e.Status == StatusUnavailable)
	case *Error:
		return t != nil && t.Status == e.Status
	}
	return false
}

// isInvalidArgument: e is of the invalid argument family.
func (e *Error) isInvalidArgument() bool {
	switch e.Status {
	case StatusNull, StatusInvalidArgument, StatusTooLarge:
		return !e.closed
	}
	return false
}

// isBadBlob: e is of the bad blob family.
func (e *Error) isBadBlob() bool {
	return e.Status <= StatusTruncated && e.Status >= StatusCorrupt
}

func newError(status Status, message string) *Error {
	return &Error{Status: status, Name: status.String(), Message: message}
}

// panicPrefix starts the panic message of a failed native call (see
// temporalfilters_go.i): "tf:<status>:<message>".
const panicPrefix = "tf:"

// catch turns the panic of a failed native call into *err. It must be
// deferred directly (recover only works there). Any other panic is not ours
// and goes on.
func catch(err *error) {
	if r := recover(); r != nil {
		e, ok := parsePanic(r)
		if !ok {
			panic(r)
		}
		*err = e
	}
}

// parsePanic decodes "tf:<status>:<message>".
func parsePanic(r interface{}) (*Error, bool) {
	msg, ok := r.(string)
	if !ok || !strings.HasPrefix(msg, panicPrefix) {
		return nil, false
	}
	rest := msg[len(panicPrefix):]
	colon := strings.IndexByte(rest, ':')
	if colon < 0 {
		return nil, false
	}
	code, err := strconv.Atoi(rest[:colon])
	if err != nil || code >= 0 {
		return nil, false
	}
	return newError(Status(code), rest[colon+1:]), true
}

// invalidArgument is an error found by this layer before calling C.
func invalidArgument(format string, args ...interface{}) error {
	return newError(StatusInvalidArgument, fmt.Sprintf(format, args...))
}
