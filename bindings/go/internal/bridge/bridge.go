// Package bridge hands the root package's error machinery to the binding's
// sub-packages (temporalfilters.org/go/temporalfilters/redis), which have
// native modules of their own: the root package sets these functions in
// its init, which runs before any importer's code. Nothing outside the
// module can import it.
package bridge

var (
	// Error is the *temporalfilters.Error of a status and message.
	Error func(status int, message string) error
	// Closed is the error of a call on a closed object of the class
	// called name (family ErrClosed).
	Closed func(name string) error
	// FromPanic turns the panic of a failed native call ("tf:<status>:<message>",
	// raised by every SWIG module of the binding) into its error; false
	// for any other panic.
	FromPanic func(r any) (error, bool)
)
