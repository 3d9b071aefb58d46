# frozen_string_literal: true

# Ruby bindings of libtemporalfilters: time-aware probabilistic data
# structures.
#
#   require "temporalfilters"
#
#   sketch = TemporalFilters::RecencySketch.for_target(100_000, 0.01)
#   sketch.update("user-42", now_ms)
#   sketch.query("user-42")          # => a time >= the true last update, NEVER (0) = never
#   sketch.pace("user-42", now_ms, 1000).granted?
#
#   seen = TemporalFilters::AgeBloom.for_target(100_000, 0.01)   # the last 100k inserts
#   seen.add_if_absent("click-1")    # => false (was absent, now added)
#   seen.contains?("click-1")        # => true
#   fast = TemporalFilters::AgeBloom.for_target(100_000, 0.01, flags: TemporalFilters::AgeBloom::BLOCKED)
#
#   recent = TemporalFilters::TimeBloom.for_target(10_000, 0.01, 60_000)  # the last minute (ms)
#   recent.add("ip-1", now_ms)
#   recent.contains?("ip-1", now_ms + 59_000)   # => true
#
#   limiter = TemporalFilters::RateLimiter.new(100, 60_000, 1_000)  # 100 per minute, 1 s buckets
#   d = limiter.acquire("client-7", now_ms)
#   d.allowed?                       # => true
#   d.retry_after(now_ms)            # => 0 when allowed, else the wait (nil: never)
#
#   recent = TemporalFilters::RecencyWindow.new(window: 100_000)  # the last 100k inserts
#   recent.insert_report("object-7")   # => nil: not within the window
#   recent.insert_report("object-7")   # => 0: the previous insert was this key
#
# Conventions, for every structure (docs/conventions.md):
# - Positional arguments are those of the C call, in its order (the sizing
#   helpers for_target: how many, how wrong, over what time); the hash seed
#   and the creation flags are the keywords seed: and flags: (default 0).
# - Keys are Strings taken as raw bytes, whatever their encoding; NUL bytes
#   are fine. "é" in UTF-8 and the same two bytes in ASCII-8BIT are the same
#   key. A key of another class raises TypeError.
# - Timestamps, intervals and TTLs are Integers in the caller's unit, in
#   0...2**64 (the C type is uint64_t). A value outside that range raises
#   TemporalFilters::InvalidArgumentError: it is never wrapped. 0 means
#   "never" and is refused as a "now" by the library itself (also
#   InvalidArgumentError).
# - Every failure of the library raises a TemporalFilters::Error carrying
#   the library's status code (#status), its name (#status_name) and the
#   library's message (#message); its class is the family a caller rescues:
#   InvalidArgumentError, BadBlobError, IncompatibleError, OutOfMemoryError,
#   UnavailableError, ClosedError (lib/temporalfilters/errors.rb).
# - TemporalFilters::NEVER (0) is "never" (a key never seen);
#   TemporalFilters::RETRY_NEVER (2**64 - 1) a retry time that never comes,
#   and where results that would overflow saturate.
# - #info (what was fixed at creation) and #stats (the current state) are
#   frozen Structs (the class's Info and Stats); each member of an Info also
#   has a reader of its own, and so do some members of a Stats (README.md,
#   "Conventions", says which).
# - Memory is freed by the garbage collector; #close frees it at once. Any
#   call on a closed object raises TemporalFilters::ClosedError.
#
# The classes here (one file per structure under temporalfilters/) are a
# thin layer over the SWIG extension temporalfilters_native (module
# TemporalFilters::Native), generated from bindings/temporalfilters.i, which
# raises the errors directly from C.

require_relative "temporalfilters/errors"
require "temporalfilters_native"
require_relative "temporalfilters/common"
require_relative "temporalfilters/native_handle"
require_relative "temporalfilters/membership"
require_relative "temporalfilters/recency_sketch"
require_relative "temporalfilters/age_bloom"
require_relative "temporalfilters/time_bloom"
require_relative "temporalfilters/rate_limiter"
require_relative "temporalfilters/rotating_cuckoo"
require_relative "temporalfilters/recency_window"
