package temporalfilters

import (
	"runtime"
	"sync/atomic"
)

// handle owns one native object of the Bloom filters (AgeBloom, TimeBloom):
// the address of its SWIG handle (a *AgeBloomNative, ...), freed by Close
// or, as a safety net, by the finalizer. It is a separate allocation so that
// the finalizer can be set on it even when the filter value lives inside
// another value (as os.File does), and copies of a filter value share it.
// RecencySketch has its own rsHandle, the same thing for its type.
type handle struct {
	p    uintptr // 0 once freed
	kind *handleKind
}

// handleKind describes one native class.
type handleKind struct {
	name string          // "AgeBloom": for the messages
	del  func(p uintptr) // frees the native object (the SWIG destructor)
}

func (h *handle) free() {
	if h.p != 0 {
		h.kind.del(h.p)
		h.p = 0
		atomic.AddInt64(&liveSketches, -1)
	}
}

// ptr returns the native address, 0 when h is nil or freed.
func (h *handle) ptr() uintptr {
	if h == nil {
		return 0
	}
	return h.p
}

// closeHandle frees the native object now and disarms the finalizer; it is
// idempotent and accepts nil.
func closeHandle(h *handle) {
	if h != nil {
		h.free()
		runtime.SetFinalizer(h, nil)
	}
}

// adopt takes ownership of the native object at p, just returned by a
// constructor or factory of the native layer, and arms the finalizer.
func adopt(kind *handleKind, p uintptr) (*handle, error) {
	if p == 0 {
		// The native layer reports every failure before returning NULL.
		return nil, newError(StatusInternal, "the native layer returned no "+kind.name+" and no error")
	}
	h := &handle{p: p, kind: kind}
	atomic.AddInt64(&liveSketches, 1)
	runtime.SetFinalizer(h, (*handle).free)
	return h, nil
}

// replaceHandle installs the new native object p in *hp, for
// UnmarshalBinary: a zero filter gets a handle, an open one frees its old
// object, a closed one is open again (with its finalizer armed again).
func replaceHandle(hp **handle, kind *handleKind, p uintptr) error {
	if *hp == nil {
		h, err := adopt(kind, p)
		if err != nil {
			return err
		}
		*hp = h
		return nil
	}
	if p == 0 {
		return newError(StatusInternal, "the native layer returned no "+kind.name+" and no error")
	}
	h := *hp
	old := h.p
	h.p = p
	if old == 0 {
		// It was closed, so its finalizer was cleared: arm it again.
		atomic.AddInt64(&liveSketches, 1)
		runtime.SetFinalizer(h, (*handle).free)
	} else {
		kind.del(old)
	}
	return nil
}
