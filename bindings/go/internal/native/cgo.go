// Package native is the SWIG-generated layer of the Go binding: the go tool
// runs SWIG on native.swig (generated from the interface shared with the
// Java and Ruby bindings, see bindings/go/gen_swig.py in the project) and
// compiles its C wrapper with cgo. Only the package
// temporalfilters.org/go/temporalfilters uses it.
//
// The C library comes from pkg-config: its compiler flags (also the -I that
// SWIG reads the headers through) and its linker flags.
package native

// #cgo pkg-config: temporalfilters
import "C"
