package temporalfilters

import "temporalfilters.org/go/temporalfilters/internal/bridge"

// The error machinery of this package, for the sub-packages with native
// modules of their own (internal/bridge): one kind of error in the whole
// binding.
func init() {
	bridge.Error = func(status int, message string) error { return newError(Status(status), message) }
	bridge.Closed = func(name string) error {
		e := newError(StatusNull, "the "+name+" is closed")
		e.closed = true
		return e
	}
	bridge.FromPanic = func(r any) (error, bool) {
		e, ok := parsePanic(r)
		if !ok {
			return nil, false
		}
		return e, true
	}
}
