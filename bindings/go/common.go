package temporalfilters

import (
	"math"

	"temporalfilters.org/go/temporalfilters/internal/native"
)

// What the structures share with the C library's common.h: the times that
// mean "never", the library's version and a clock.

// Never is the timestamp that means "never" (TF_NEVER): the last-seen time
// of a key a RecencySketch never saw. It is not a valid input time (now
// must be >= 1).
const Never uint64 = 0

// RetryNever is the time that never comes (TF_RETRY_NEVER): the RetryAt of
// a RateLimiter denial that waiting cannot turn into a grant (n above the
// key's or the global limit, or a full table that denies new keys), and
// what saturating results stop at. It is math.MaxUint64, the C library's
// UINT64_MAX, which Go represents as it is.
const RetryNever uint64 = math.MaxUint64

// Version returns the version of the C library loaded, "MAJOR.MINOR.PATCH".
func Version() string {
	return native.Tf_version_string()
}

// NowMillis reads the system's real-time clock in milliseconds since the
// Unix epoch (always >= 1), a convenient now for the methods that take one.
func NowMillis() uint64 {
	return native.Tf_clock_now_ms()
}
