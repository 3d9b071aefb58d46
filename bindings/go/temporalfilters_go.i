/*
 * bindings/go/temporalfilters_go.i - the Go side of the shared SWIG interface.
 *
 * Not read by SWIG itself: bindings/go/gen_swig.py inlines the shared
 * interface (the %include below) into the module's own SWIG input,
 * internal/native/native.swig, which the go tool runs through SWIG
 * (swig -go -cgo -module native) when it builds the internal package
 * temporalfilters.org/go/temporalfilters/internal/native; the idiomatic
 * package (bindings/go/*.go) is the only user of it. The compiler and
 * linker flags, and the -I of the C headers that SWIG reads, come from
 * pkg-config (#cgo pkg-config: temporalfilters, internal/native/cgo.go).
 *
 * Typemaps: every (pointer, length) pair of the shared interface but a single
 * key becomes one Go slice, passed to C without copying (cgo allows it: the
 * memory of a []byte, []int32 or []uint64 holds no Go pointers, and C keeps
 * no reference after the call). A single key (const void *key, size_t
 * key_len) is two scalars instead, its address as a uintptr and its length
 * as an int (internal/bridge.Key says why and what keeps it safe). uint64_t maps to uint64 and uint32_t to uint (64 bits
 * here), which the idiomatic layer only ever fills from uint32 values, so no
 * value is wrapped. uint64_t *next_allowed is a *uint64 the caller owns.
 *
 * Errors: Go has no exceptions. After each wrapped call the %exception block
 * takes the failure the shared layer recorded (tf_binding_take_error) and
 * panics with "tf:<status>:<message>" through SWIG's _swig_gopanic; the
 * idiomatic layer recovers exactly those panics into error values.
 */
%module native

/* LP64 (what -intgosize 64 targets): uint64_t is unsigned long, as in C. */
#define SWIGWORDSIZE64
%include <stdint.i>

/* (pointer, length) pairs as Go slices. */
%typemap(gotype) (const void *blob, size_t blob_len),
                 (void *out_buf, size_t out_cap), (const void *keys_data, size_t keys_data_len) "[]byte"
%typemap(gotype) (const int32_t *key_lens, size_t key_count), (int32_t *out_allowed, size_t allowed_count) "[]int32"
%typemap(gotype) (const uint64_t *times, size_t time_count), (uint64_t *out_times, size_t out_count) "[]uint64"
%typemap(in) (const void *blob, size_t blob_len),
             (void *out_buf, size_t out_cap), (const void *keys_data, size_t keys_data_len),
             (const int32_t *key_lens, size_t key_count), (int32_t *out_allowed, size_t allowed_count),
             (const uint64_t *times, size_t time_count), (uint64_t *out_times, size_t out_count) %{
  $1 = ($1_ltype)$input.array;
  $2 = (size_t)$input.len;
%}

/* One key: its address as a uintptr and its length, two scalars, so that
 * the call has no argument holding a pointer, which Go 1.19's cgo would move
 * to the heap on every call (internal/bridge.Key says why and what keeps it
 * safe). */
%typemap(gotype) const void *key "uintptr"
%typemap(in) const void *key %{
  $1 = ($1_ltype)$input;
%}
%typemap(gotype) size_t key_len "int"
%typemap(in) size_t key_len %{
  $1 = (size_t)$input;
%}

/* A Go string as a C string. SWIG's own typemap copies it with
 * memcpy($1, $input.p, $input.n), and an empty Go string has no data
 * pointer: memcpy from NULL is undefined even for 0 bytes (UBSan stops on
 * it; the Redis limiter's options pass "" for "the default"). The same
 * copy, without the call for an empty string; SWIG's freearg frees it. */
%typemap(in) char *, char[ANY], char[] %{
  $1 = ($1_ltype)malloc($input.n + 1);
  if ($input.n > 0) memcpy($1, $input.p, $input.n);
  $1[$input.n] = '\0';
%}

/* An output timestamp: the caller passes a *uint64 (never nil). */
%typemap(gotype) uint64_t *next_allowed "*uint64"
%typemap(in) uint64_t *next_allowed %{
  $1 = (uint64_t *)$input;
%}

/* Raise the failure of the call just made, if any, as a Go panic. */
%exception %{
  $action
  tf_go_raise_pending();
%}

/* The rate limiter's output timestamps use pace's typemap. */
%apply uint64_t *next_allowed { uint64_t *remaining, uint64_t *retry_at };

#ifdef TF_BINDING_REDIS
/* The Redis limiter's decisions (temporalfilters_redis.i) report a failure
 * of Redis in their output `unavailable` (the fallback's decision is still
 * their result, so it is no panic), and its message in a thread-local copy.
 * A second cgo call to read that copy could run on another OS thread (the
 * scheduler may move the goroutine between two calls) and read another
 * call's message, so the wrapper copies it in the same call, as the
 * %exception block does with the panic's message: the output is a
 * *Failure, whose first field is the status the C code writes, and whose
 * Message the argout code below fills when the status is not 0. */
%{
/* A Failure as C sees it (its Message: FailureMessageCap bytes). */
typedef struct {
    uint64_t status;
    char message[512];
} tf_go_redis_failure;
%}
%constant int FailureMessageCap = 512;
%insert(go_wrapper) %{
// Failure is the output of a decision of the Redis limiter: Status is 0
// when Redis decided; else it is the failing status negated (14 or 15) and
// Message holds the library's message, NUL-terminated, copied by the
// native call that failed. The Go memory it is in must hold no Go pointers
// (cgo's rules): allocate it on its own.
type Failure struct {
	Status  uint64
	Message [FailureMessageCap]byte
}
%}
%typemap(gotype) uint64_t *unavailable "*Failure"
%typemap(in) uint64_t *unavailable %{
  $1 = &((tf_go_redis_failure *)$input)->status;
%}
%typemap(argout) uint64_t *unavailable %{
  if (*$1 != 0) {
      tf_go_redis_failure *f = (tf_go_redis_failure *)$1;
      snprintf(f->message, sizeof f->message, "%s", tf_binding_redis_failure_);
  }
%}
#endif
%include "temporalfilters.i"

%{
/* The panic message; thread-local, not on the stack: the panic leaves this
 * C frame without returning, and the Go side copies the text first.
 *
 * Go unwinds the C frames of the failed call (this one, the wrapper, cgo's
 * export stub of the panic function) without running their epilogues.
 * Under AddressSanitizer the stack redzones of such frames would stay
 * poisoned and trip later calls on the same thread's stack, so the
 * sanitized build compiles the cgo code (this wrapper and cgo's stubs) with
 * --param=asan-stack=0 (see go_build.py); the library itself keeps its full
 * instrumentation, and its frames have all returned by then. */
static __thread char tf_go_panic_message_[640];

/* Panics with "tf:<status>:<message>" when the call just made failed. */
static void tf_go_raise_pending(void) {
    const char *msg = NULL;
    int st = tf_binding_take_error(&msg);
    if (st == 0) return;
    snprintf(tf_go_panic_message_, sizeof tf_go_panic_message_, "tf:%d:%s", st, msg);
    _swig_gopanic(tf_go_panic_message_);
}
%}

/* For the Go test suite under AddressSanitizer: runs LeakSanitizer now and
 * returns 1 when it found leaks (and printed them), 0 when none, -1 in a
 * build without it. Go 1.19 exits without running LeakSanitizer's exit-time
 * check, so the suite calls this at its end, after freeing everything. */
%{
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define TF_GO_ASAN 1
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#define TF_GO_ASAN 1
#endif
#endif
#ifdef TF_GO_ASAN
#include <sanitizer/lsan_interface.h>
#endif
%}
/* (Once per binary: the core's module has it, the Redis limiter's module,
 * built with TF_BINDING_REDIS, not.) */
#ifndef TF_BINDING_REDIS
%inline %{
int tf_go_leak_check(void) {
#ifdef TF_GO_ASAN
    return __lsan_do_recoverable_leak_check() ? 1 : 0;
#else
    return -1;
#endif
}
%}
#endif
