package temporalfilters

import (
	"sync/atomic"

	"temporalfilters.org/go/temporalfilters/internal/bridge"
)

// The error machinery of this package and its handles, for the
// sub-packages with native modules of their own (internal/bridge): one kind
// of error and one ownership of native objects in the whole binding.
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
	bridge.Adopt = func(name string, p uintptr, free func(uintptr)) bridge.Handle {
		h := &handle{kind: &kind{name: name, del: free}}
		h.p.Store(p)
		h.arm()
		return h
	}
	bridge.LiveObjects = func() int64 { return atomic.LoadInt64(&liveObjects) }
}
