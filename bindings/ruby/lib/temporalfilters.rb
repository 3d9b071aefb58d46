# frozen_string_literal: true

# Ruby bindings of libtemporalfilters: time-aware probabilistic data
# structures.
#
#   require "temporalfilters"
#
#   sketch = TemporalFilters::RecencySketch.for_target(100_000, 0.01)
#   sketch.update("user-42", now_ms)
#   sketch.query("user-42")          # => a time >= the true last update, 0 = never
#   sketch.pace("user-42", now_ms, 1000).granted?
#
#   seen = TemporalFilters::AgeBloom.for_target(0.01, 100_000)   # the last 100k inserts
#   seen.add_if_absent("click-1")    # => false (was absent, now added)
#   seen.contains?("click-1")        # => true
#   fast = TemporalFilters::AgeBloom.blocked_for_target(0.01, 100_000)  # same window, faster queries
#
#   recent = TemporalFilters::TimeBloom.for_target(0.01, 60_000, 10_000)  # the last minute (ms)
#   recent.add("ip-1", now_ms)
#   recent.contains?("ip-1", now_ms + 59_000)   # => true
#
#   limiter = TemporalFilters::RateLimiter.new(100, 60_000, 1_000)  # 100 per minute, 1 s buckets
#   d = limiter.acquire("client-7", now_ms)
#   d.allowed?                       # => true
#   d.retry_after(now_ms)            # => 0 when allowed, else the wait (nil: never)
#
# Conventions, for every structure:
# - Keys are Strings taken as raw bytes, whatever their encoding; NUL bytes
#   are fine. "é" in UTF-8 and the same two bytes in ASCII-8BIT are the same
#   key. A key of another class raises TypeError.
# - Timestamps, intervals and TTLs are Integers in the caller's unit, in
#   0...2**64 (the C type is uint64_t). A value outside that range raises
#   TemporalFilters::InvalidArgument: it is never wrapped. 0 means "never" and
#   is refused as a "now" by the library itself (also InvalidArgument).
# - Every failure of the library raises a subclass of TemporalFilters::Error
#   carrying the library's status code (#status), its name (#status_name) and
#   the library's message (#message).
# - Memory is freed by the garbage collector; #close frees it at once. Any
#   call on a closed object raises TemporalFilters::NullError.
#
# The classes here are a thin layer over the SWIG extension
# temporalfilters_native (module TemporalFilters::Native), generated from
# bindings/temporalfilters.i, which raises the errors directly from C.

module TemporalFilters
  # The base class of every error raised by the library.
  #
  #   rescue TemporalFilters::Error => e
  #     e.status       # => -2
  #     e.status_name  # => "TF_ERR_INVALID_ARGUMENT"
  #     e.message      # => the library's explanation
  class Error < StandardError
    # The status code of the subclass (nil for Error itself).
    STATUS = nil

    # The library's status code, a negative Integer (see common.h).
    attr_reader :status

    # message: the library's message; status: the status code, by default
    # the one of the class.
    def initialize(message = nil, status = nil)
      @status = status || self.class::STATUS
      super(message || (@status ? TemporalFilters.status_name(@status) : "temporalfilters error"))
    end

    # The name of the status code, e.g. "TF_ERR_CHECKSUM".
    def status_name
      @status ? TemporalFilters.status_name(@status) : "TF_ERR_UNKNOWN"
    end

    # The Error subclass for a status code; Error itself for a code this
    # version does not know.
    def self.class_for(status)
      BY_STATUS.fetch(status, Error)
    end
  end

  # A blob given to deserialize is not a valid serialization. Its subclasses
  # say why: Truncated, BadMagic, UnsupportedVersion, WrongKind,
  # ChecksumError, Corrupt.
  class BlobError < Error; end

  # Status code => Error subclass. One class per status of common.h:
  #
  #   NullError          TF_ERR_NULL                 (-1)  the object is closed
  #   InvalidArgument    TF_ERR_INVALID_ARGUMENT     (-2)  a value out of its range
  #   OutOfMemory        TF_ERR_OUT_OF_MEMORY        (-3)
  #   TooLarge           TF_ERR_TOO_LARGE            (-4)  sizes beyond the library's limits
  #   BufferTooSmall     TF_ERR_BUFFER_TOO_SMALL     (-5)
  #   Truncated          TF_ERR_TRUNCATED            (-6)  BlobError
  #   BadMagic           TF_ERR_BAD_MAGIC            (-7)  BlobError
  #   UnsupportedVersion TF_ERR_UNSUPPORTED_VERSION  (-8)  BlobError
  #   WrongKind          TF_ERR_WRONG_KIND           (-9)  BlobError
  #   ChecksumError      TF_ERR_CHECKSUM             (-10) BlobError
  #   Corrupt            TF_ERR_CORRUPT              (-11) BlobError
  #   Incompatible       TF_ERR_INCOMPATIBLE         (-12) merging different shapes/seeds
  #   InternalError      TF_ERR_INTERNAL             (-13) a bug in the library
  BY_STATUS = {}

  {
    NullError: [-1, Error],
    InvalidArgument: [-2, Error],
    OutOfMemory: [-3, Error],
    TooLarge: [-4, Error],
    BufferTooSmall: [-5, Error],
    Truncated: [-6, BlobError],
    BadMagic: [-7, BlobError],
    UnsupportedVersion: [-8, BlobError],
    WrongKind: [-9, BlobError],
    ChecksumError: [-10, BlobError],
    Corrupt: [-11, BlobError],
    Incompatible: [-12, Error],
    InternalError: [-13, Error]
  }.each do |name, (status, parent)|
    klass = Class.new(parent)
    klass.const_set(:STATUS, status)
    const_set(name, klass)
    BY_STATUS[status] = klass
  end
  BY_STATUS.freeze
end

require "temporalfilters_native"

module TemporalFilters
  # The version of the library loaded, "MAJOR.MINOR.PATCH".
  VERSION = Native.tf_version_string.freeze

  # The timestamp meaning "never seen".
  NEVER = 0

  # The name of a status code, e.g. status_name(-10) => "TF_ERR_CHECKSUM".
  def self.status_name(status)
    Native.tf_status_string(status)
  end

  # The system's real-time clock in milliseconds since the Unix epoch (>= 1):
  # a convenient "now" when the caller's unit is the millisecond.
  def self.clock_now_ms
    Native.tf_clock_now_ms
  end

  # "When did I last see this key?" in fixed memory: depth rows of width
  # 64-bit timestamp cells. A query never answers older than the key's true
  # last update; it may answer newer, with the probability the sizing helper
  # targets (see include/temporalfilters/recency_sketch.h).
  #
  # Thread safety follows the C library: created with CONCURRENT, update,
  # query, pace, ttl_insert, ttl_maybe_live?, error_estimate, memory, the
  # getters, serialize and merge-as-source may run from many threads at once;
  # clear, merge-into and close need exclusive access. Without CONCURRENT, no
  # call may overlap a modifying one. (Ruby's global VM lock serializes the
  # calls of Ruby threads anyway, but not those of other native threads.)
  class RecencySketch
    # Creation flag: lock-free mode, safe from many threads.
    CONCURRENT = Native::TF_RECENCY_SKETCH_CONCURRENT
    # Creation flag: all of a key's cells in one cache line (depth <= 8).
    BLOCKED = Native::TF_RECENCY_SKETCH_BLOCKED

    # The result of #pace: granted (true/false) and next_allowed, the earliest
    # time the key may be granted again (now + interval after a grant, the
    # last grant + interval after a denial; saturating at 2**64 - 1).
    PaceResult = Struct.new(:granted, :next_allowed) do
      alias_method :granted?, :granted
    end

    # An empty sketch of depth rows of width cells (width >= 1; depth 1..32,
    # 1..8 with BLOCKED); seed: the hash seed (sketches merge only with equal
    # seeds); flags: 0 or CONCURRENT | BLOCKED.
    # Raises InvalidArgument, TooLarge, OutOfMemory.
    def initialize(width, depth, seed = 0, flags = 0)
      @native = Native::RecencySketchNative.new(width, depth, seed, flags)
    end

    # The smallest sketch whose probability of a too-new answer, with
    # expected_keys distinct keys updated within the horizon queried about,
    # is at most too_new_probability (in (0, 1)).
    # Raises InvalidArgument, TooLarge.
    def self.for_target(expected_keys, too_new_probability, seed = 0, flags = 0)
      adopt(Native::RecencySketchNative.new_for(expected_keys, too_new_probability, seed, flags))
    end

    # The dimensions for_target would choose: [width, depth].
    def self.dimensions(expected_keys, too_new_probability, flags = 0)
      [Native::RecencySketchNative.dimensions_width(expected_keys, too_new_probability, flags),
       Native::RecencySketchNative.dimensions_depth(expected_keys, too_new_probability, flags)]
    end

    # A sketch from a blob written by #serialize (in any language).
    # Raises a BlobError subclass (Truncated, BadMagic, UnsupportedVersion,
    # WrongKind, ChecksumError, Corrupt) for an invalid blob.
    def self.deserialize(blob)
      adopt(Native::RecencySketchNative.deserialize(blob))
    end

    def self.adopt(native)
      sketch = allocate
      sketch.instance_variable_set(:@native, native)
      sketch
    end
    private_class_method :adopt
    # Every sketch comes from new, for_target, deserialize or a copy.
    private_class_method :allocate

    # Records that key was seen at now (>= 1). Older times than already
    # recorded never make the answer older.
    def update(key, now)
      @native.update(key, now)
      self
    end

    # The estimated last time key was updated: >= the true one, or NEVER (0)
    # for a key never seen.
    def query(key)
      @native.query(key)
    end

    # True when query(key) is NEVER: the key was certainly never updated.
    def never_seen?(key)
      @native.query(key) == NEVER
    end

    # Request pacing: grants key at now when no grant is recorded within the
    # last interval, and records the grant. Never grants a key twice within
    # interval. Returns a PaceResult.
    def pace(key, now, interval)
      granted, next_allowed = @native.pace(key, now, interval)
      PaceResult.new(granted == 1, next_allowed)
    end

    # TTL prefilter: records that key was cached at now for ttl. Use a sketch
    # for TTLs or for last-seen times, not both.
    def ttl_insert(key, now, ttl)
      @native.ttl_insert(key, now, ttl)
      self
    end

    # False when key is certainly expired (or never inserted) at now; true
    # when it may still be live. Its estimated expiry is query(key).
    def ttl_maybe_live?(key, now)
      @native.ttl_maybe_live(key, now) == 1
    end
    alias ttl_maybe_live ttl_maybe_live?

    # Updates keys[i] at times[i] for every i: the same as single updates,
    # faster. Both Arrays must have the same length (else InvalidArgument);
    # nothing changes when any argument is invalid.
    def update_batch(keys, times)
      @native.update_batch(keys, times)
      self
    end

    # query for every key of the Array keys, as an Array of Integers.
    def query_batch(keys)
      raise TypeError, "keys must be an Array, not #{keys.class}" unless keys.is_a?(Array)

      @native.query_batch(keys, keys.size)
    end

    # Merges other into self by cell-wise maximum (self then answers as if it
    # had seen both streams). Raises Incompatible when width, depth, layout or
    # seed differ.
    def merge(other)
      raise TypeError, "cannot merge a #{other.class} into a RecencySketch" unless other.is_a?(RecencySketch)

      @native.merge(other.native)
      self
    end

    # Forgets every key.
    def clear
      @native.clear
      self
    end

    # Estimated probability that a key last updated at or before since reads
    # as newer than since (since = 0: that a never-seen key reads as seen).
    # Scans the whole table.
    def error_estimate(since = 0)
      @native.error_estimate(since)
    end

    # Bytes of memory held (table and header).
    def memory
      @native.memory
    end

    # Cells per row, as given at creation.
    def width
      @native.info.width
    end

    # Rows, as given at creation.
    def depth
      @native.info.depth
    end

    # The hash seed.
    def seed
      @native.info.seed
    end

    # The creation flags (CONCURRENT, BLOCKED).
    def flags
      @native.info.flags
    end

    # The number of timestamp cells allocated.
    def cells
      @native.info.cells
    end

    def concurrent?
      (flags & CONCURRENT) != 0
    end

    def blocked?
      (flags & BLOCKED) != 0
    end

    # The sketch as a binary String (Encoding::BINARY), readable by
    # deserialize in every language binding.
    def serialize
      @native.serialize_into(@native.serialized_size)
    end

    # Frees the memory now (the GC does it otherwise). Idempotent; any later
    # call raises NullError.
    def close
      @native.close
      nil
    end

    def closed?
      @native.is_closed
    end

    # dup and clone give an independent copy.
    def initialize_copy(source)
      super
      @native = Native::RecencySketchNative.deserialize(source.serialize)
    end

    # Marshal support, through the wire format.
    def _dump(_level)
      serialize
    end

    def self._load(blob)
      deserialize(blob)
    end

    def inspect
      return "#<#{self.class} closed>" if closed?

      "#<#{self.class} width=#{width} depth=#{depth} seed=#{seed} flags=#{flags}>"
    end

    protected

    attr_reader :native
  end

  # What AgeBloom, TimeBloom and RateLimiter share: a native handle owned by
  # the Ruby object (freed by the GC, or at once by #close), the wire format
  # (#serialize, .deserialize, Marshal) and copies (dup, clone). Each class
  # names its SWIG handle class as NATIVE. Not meant for use on its own.
  module NativeHandle # :nodoc:
    def self.included(base)
      base.extend(ClassMethods)
      # Every object comes from new, a factory, deserialize or a copy.
      base.private_class_method :allocate
    end

    module ClassMethods # :nodoc:
      # An object from a blob written by #serialize (in any language).
      # Raises a BlobError subclass (Truncated, BadMagic, UnsupportedVersion,
      # WrongKind, ChecksumError, Corrupt) for an invalid blob, WrongKind in
      # particular for the blob of another structure.
      def deserialize(blob)
        adopt(self::NATIVE.deserialize(blob))
      end

      # Marshal support, through the wire format.
      def _load(blob)
        deserialize(blob)
      end

      private

      def adopt(native)
        obj = allocate
        obj.instance_variable_set(:@native, native)
        obj
      end
    end

    # Bytes of memory held.
    def memory
      @native.memory
    end

    # The object as a binary String (Encoding::BINARY), readable by
    # deserialize in every language binding.
    def serialize
      @native.serialize_into(@native.serialized_size)
    end

    # Frees the memory now (the GC does it otherwise). Idempotent; any later
    # call raises NullError.
    def close
      @native.close
      nil
    end

    def closed?
      @native.is_closed
    end

    # dup and clone give an independent copy.
    def initialize_copy(source)
      super
      @native = self.class::NATIVE.deserialize(source.serialize)
    end

    # Marshal support, through the wire format.
    def _dump(_level)
      serialize
    end
  end

  # "Was this key among the last N inserts?": the count-window
  # age-partitioned Bloom filter (include/temporalfilters/age_bloom.h).
  # k + l slices of slice_bits bits; every generation of g inserts the oldest
  # slice is emptied and becomes the newest.
  #
  # No false negatives within the window: every key among the last
  # capacity (= l * generation) inserts is reported present. A key not
  # inserted in the window is reported present with probability at most
  # AgeBloom.false_positive_rate(k, l).
  #
  # Two layouts: new and for_target give the classic one (an array per
  # slice); AgeBloom.blocked and AgeBloom.blocked_for_target give the blocked
  # one, with the same window and guarantee and k + l <= 32 slices stored as
  # the 32-bit lanes of 64-byte lines, so that a query reads one or two cache
  # lines instead of one per slice: several times faster, for more memory
  # (about 23 bits per element at 1e-2 and 35 at 1e-3, against 20 and 26;
  # below 1e-3 the classic layout is the better choice). Its sizing
  # (AgeBloom.choose_blocked) uses a conservative model of the blocking, not
  # false_positive_rate; fpr_now reports the model's rate. Every method works
  # on both; blocked? tells which, and the blob records it.
  #
  # Not internally synchronised (either layout): contains?, the getters
  # (blocked? among them), stats, memory and serialize may overlap each other
  # (from native threads); add, add_if_absent, clear and close need exclusive
  # access. The factories and sizing helpers are thread-safe.
  class AgeBloom
    NATIVE = Native::AgeBloomNative
    include NativeHandle

    # The state of a filter at one moment, from #stats: slices (k + l), bits
    # (of all slices), bits_per_element (bits / capacity), inserts (since
    # creation or clear) and fpr_now (the false-positive rate for the measured
    # fill of every slice).
    Stats = Struct.new(:slices, :bits, :bits_per_element, :inserts, :fpr_now)

    # Low level: k + l slices of slice_bits bits; the generation is
    # max(1, floor(slice_bits * ln 2 / k)) inserts and the capacity l times
    # that. k in 1..64, l in 1..1024, slice_bits in 64..2**40; seed: the hash
    # seed. Raises InvalidArgument, TooLarge (slice_bits over 2**40),
    # OutOfMemory.
    def initialize(k, l, slice_bits, seed = 0)
      @native = NATIVE.new(k, l, slice_bits, seed, 0)
    end

    # TF_AGE_BLOOM_BLOCKED
    BLOCKED_FLAG = 1
    private_constant :BLOCKED_FLAG

    # A filter that remembers at least the last capacity (>= 1) inserts with
    # a false-positive rate of at most error_rate (in (0, 1)): (k, l) from
    # AgeBloom.choose. Raises InvalidArgument, TooLarge, OutOfMemory.
    def self.for_target(error_rate, capacity, seed = 0)
      adopt(NATIVE.new_for(capacity, error_rate, seed, 0))
    end

    # Low level, blocked layout: k + l slices of slice_bits bits rounded up
    # to a multiple of 32; the generation is max(1, floor(rounded bits *
    # ln 2 / k)) inserts and the capacity l times that. Memory: ceil((k + l)
    # / 16) lines of 64 bytes per 32 bits of slice (unused lanes included).
    # k >= 1 and l >= 1 with k + l <= 32, slice_bits in 32..2**40; seed: the
    # hash seed. Raises InvalidArgument, TooLarge (slice_bits over 2**40),
    # OutOfMemory.
    def self.blocked(k, l, slice_bits, seed = 0)
      adopt(NATIVE.new(k, l, slice_bits, seed, BLOCKED_FLAG))
    end

    # A blocked-layout filter that remembers at least the last capacity
    # (>= 1) inserts with a false-positive rate of at most error_rate (in
    # (0, 0.2]): k, l and the fill from AgeBloom.choose_blocked, generation
    # ceil(capacity / l), slices of k * generation / -ln(1 - fill) bits
    # rounded up to a multiple of 32. Raises InvalidArgument, TooLarge,
    # OutOfMemory.
    def self.blocked_for_target(error_rate, capacity, seed = 0)
      adopt(NATIVE.new_for(capacity, error_rate, seed, BLOCKED_FLAG))
    end

    # The [k, l, fill] blocked_for_target picks for error_rate (in (0, 0.2]):
    # k + l is 16 or 32, fill (in (0, 1)) the fill ratio of a slice leaving
    # the first k; the triple that meets error_rate under the blocked
    # layout's conservative model with the fewest bits per element. Raises
    # InvalidArgument, TooLarge (no blocked pair meets it: a target far
    # below 1e-3, where the classic layout is the better choice anyway).
    def self.choose_blocked(error_rate)
      [NATIVE.choose_k(error_rate, BLOCKED_FLAG), NATIVE.choose_l(error_rate, BLOCKED_FLAG),
       NATIVE.choose_fill(error_rate, BLOCKED_FLAG)]
    end

    # The [k, l] for_target picks for error_rate (in (0, 1)): the pair whose
    # steady false-positive rate is at most error_rate with the fewest bits
    # per element. Shared by TimeBloom. Raises InvalidArgument, TooLarge (no
    # pair with k <= 64 meets it).
    def self.choose(error_rate)
      [NATIVE.choose_k(error_rate, 0), NATIVE.choose_l(error_rate, 0)]
    end

    # The exact steady-state false-positive rate of (k, l) in the classic
    # layout, at its peak just before a shift. Raises InvalidArgument for k
    # or l out of range.
    def self.false_positive_rate(k, l)
      NATIVE.false_positive_rate(k, l)
    end

    # Bits per element of capacity at steady state, (k + l) k / (l ln 2).
    # Raises InvalidArgument for k or l out of range.
    def self.bits_per_element(k, l)
      NATIVE.steady_bits_per_element(k, l)
    end

    # Inserts key (shifting first when the generation is full). Returns self.
    def add(key)
      @native.add(key)
      self
    end

    # True when key is (probably) among the last inserts; false when it is
    # certainly not among the last capacity inserts.
    def contains?(key)
      @native.contains(key) == 1
    end
    alias contains contains?
    alias include? contains?

    # De-duplication in one call: returns true when key was present (and
    # then does not insert it), false when it was absent and is now added.
    def add_if_absent(key)
      @native.add_if_absent(key) == 1
    end

    # Forgets every key (the shape stays). Returns self.
    def clear
      @native.clear
      self
    end

    # A Stats snapshot (fpr_now scans every slice: O(bits / 64)).
    def stats
      s = @native.stats
      Stats.new(s.slices, s.bits, s.bits_per_element, s.inserts, s.fpr_now)
    end

    # The number of slices, k + l.
    def slices
      @native.stats.slices
    end

    # Total bits of all slices (blocked: of all 64-byte lines, unused lanes
    # included).
    def bits
      @native.stats.bits
    end

    # bits / capacity.
    def bits_per_element
      @native.stats.bits_per_element
    end

    # Inserts since creation or clear.
    def inserts
      @native.stats.inserts
    end

    # The false-positive rate for the measured fill of every slice (blocked:
    # under the layout's conservative model).
    def fpr_now
      @native.stats.fpr_now
    end

    # True for the blocked layout (AgeBloom.blocked, blocked_for_target or
    # the blob of one), false for the classic one.
    def blocked?
      (@native.info.flags & BLOCKED_FLAG) != 0
    end

    # Hash functions: bits set per insert, slices a key must match.
    def k
      @native.info.k
    end

    # Slices beyond the first k: the window spans l generations.
    def l
      @native.info.l
    end

    # Bits per slice (blocked: a multiple of 32).
    def slice_bits
      @native.info.slice_bits
    end

    # Inserts per generation (between two shifts).
    def generation
      @native.info.generation
    end

    # The window in inserts: l * generation.
    def capacity
      @native.info.capacity
    end

    # The hash seed.
    def seed
      @native.info.seed
    end

    def inspect
      return "#<#{self.class} closed>" if closed?

      layout = blocked? ? " blocked" : ""
      "#<#{self.class}#{layout} k=#{k} l=#{l} slice_bits=#{slice_bits} capacity=#{capacity} seed=#{seed}>"
    end
  end

  # "Was this key inserted within the last span time units?": the
  # time-limited Bloom filter (include/temporalfilters/time_bloom.h). Slices
  # of varying size with timestamps; new slices follow the measured insertion
  # rate and slices older than the span retire.
  #
  # No false negatives within the span: a key added at t is reported present
  # at every now with now - span <= t. At a steady rate the false-positive
  # rate is at most the target given to for_target. Times are Integers in
  # the caller's unit, in 1...2**64 for now (0 and values outside 0...2**64
  # raise InvalidArgument); the unit must be fine enough that span >= l. A
  # clock that goes backwards is clamped to the highest time seen.
  #
  # Not internally synchronised: contains?, the getters, stats, memory and
  # serialize may overlap each other (from native threads); add,
  # add_if_absent, clear and close need exclusive access.
  class TimeBloom
    NATIVE = Native::TimeBloomNative
    include NativeHandle

    # The state of a filter at a time now, from #stats(now): slices (>= k +
    # l), bits (of all slices), bits_per_element (bits / inserts within the
    # span, 0.0 when none), inserts (since creation or clear) and fpr_now (the
    # false-positive rate for the measured fill, slices older than the span
    # counting as empty).
    Stats = Struct.new(:slices, :bits, :bits_per_element, :inserts, :fpr_now)

    # Low level: k + l initial slices of slice_bits bits; k in 1..64, l in
    # 1..1024, slice_bits in 64..2**40, span >= l. Raises InvalidArgument,
    # TooLarge, OutOfMemory.
    def initialize(k, l, slice_bits, span, seed = 0)
      @native = NATIVE.new(k, l, slice_bits, span, seed, 0)
    end

    # A filter for the keys of the last span time units with a
    # false-positive rate of at most error_rate (in (0, 1)) at a steady rate:
    # (k, l) from AgeBloom.choose, initial slices sized for initial_capacity
    # (>= 1) inserts per span; the sizes adapt from the first shift. span
    # must be >= the chosen l. Raises InvalidArgument, TooLarge, OutOfMemory.
    def self.for_target(error_rate, span, initial_capacity, seed = 0)
      adopt(NATIVE.new_for(initial_capacity, error_rate, span, seed, 0))
    end

    # Inserts key at time now. A shift may add a slice: OutOfMemory, or
    # TooLarge past 4096 slices, leave the filter unchanged. Returns self.
    def add(key, now)
      @native.add(key, now)
      self
    end

    # True when key was (probably) added within the span before now; false
    # when it certainly was not.
    def contains?(key, now)
      @native.contains(key, now) == 1
    end
    alias contains contains?

    # contains? then add when absent: returns true when key was present
    # within the span (and then does not insert it), false when it is added.
    def add_if_absent(key, now)
      @native.add_if_absent(key, now) == 1
    end

    # Forgets every key (the slices keep their sizes). Returns self.
    def clear
      @native.clear
      self
    end

    # A Stats snapshot at time now (fpr_now scans every slice).
    def stats(now)
      s = @native.stats(now)
      Stats.new(s.slices, s.bits, s.bits_per_element, s.inserts, s.fpr_now)
    end

    # The current number of slices (>= k + l).
    def slices
      @native.stats(1).slices
    end

    # Total bits of all slices.
    def bits
      @native.stats(1).bits
    end

    # bits / inserts within the span before now (0.0 when none).
    def bits_per_element(now)
      @native.stats(now).bits_per_element
    end

    # Inserts since creation or clear.
    def inserts
      @native.stats(1).inserts
    end

    # The false-positive rate at now for the measured fill of every slice.
    def fpr_now(now)
      @native.stats(now).fpr_now
    end

    # The size of slice i (0 = the newest) in bits; InvalidArgument when
    # there is no slice i.
    def slice_bits(i)
      @native.slice_bits(i)
    end

    # Hash functions: bits set per insert, slices a key must match.
    def k
      @native.info.k
    end

    # The minimum number of slices beyond the first k.
    def l
      @native.info.l
    end

    # The window, in the caller's time unit.
    def span
      @native.info.span
    end

    # The hash seed.
    def seed
      @native.info.seed
    end

    def inspect
      return "#<#{self.class} closed>" if closed?

      "#<#{self.class} k=#{k} l=#{l} span=#{span} slices=#{slices} seed=#{seed}>"
    end
  end

  # "May this key make another request now?": the sliding-window rate
  # limiter of include/temporalfilters/rate_limiter.h (seed 002). Each key
  # may make at most `limit` requests per `window` time units.
  #
  # Two modes, chosen at creation:
  # - bucketed (the default): the window is split into window / bucket_width
  #   buckets of counts; constant memory per key (a 47-byte record for 10
  #   buckets and keys of up to 16 bytes, 25 + 2 * (buckets + 1) in
  #   general, in a table kept 76-85% full: 55-62 bytes per key). A grant
  #   may leave the window up to bucket_width - 1 time units early: at most
  #   `limit` grants in any window / bucket_width consecutive buckets (so
  #   in any interval of length window - bucket_width + 1), up to 2 * limit
  #   in a real window against bursts at bucket edges (bounded
  #   over-admission);
  # - EXACT: a key keeps the times of its last `limit` grants (a 33-byte
  #   record and 8 * limit + 16 bytes); never more than `limit` grants in
  #   any interval (t - window, t].
  #
  # A global limit (#set_global_limit) caps all keys together, and a key may
  # have its own limit (#set_key_limit) but is still held to the global one.
  # With a global limit every decision, #acquire and #peek alike and
  # whether the key allows or not, asks both windows: allowed when both
  # allow, remaining the smaller of the two, retry_at the later of the two
  # windows' retry times (a window that allows counts 0, one that never can
  # RETRY_NEVER).
  #
  # Idle keys (every permit they took has left the window) are reclaimed a
  # few slots at a time, never by a full scan: 4 slots of the key's shard
  # when a new key is inserted, 8 slots of another shard (round robin) every
  # 16th request of a shard. Each shard remembers its reclaim horizon (the
  # latest time + window of the keys it reclaimed): a key that is not
  # tracked and asks before it is denied until then (remaining 0, retry_at
  # the horizon), so a key whose clock runs behind the others' never gets
  # permits early after being reclaimed.
  #
  # #set_max_keys bounds the number of keys tracked: when it is reached, a
  # new key first reclaims an idle key (16 slots of its own shard, then 16
  # of every other shard whose lock is free; after a search that found
  # nothing, the next 63 new keys look at their own shard only); when there
  # is none it is denied (the default, fail closed: remaining 0,
  # RETRY_NEVER) or, created with FULL_ALLOW, admitted untracked (fail
  # open: remaining 0), still held to and charged to the global limit;
  # #stats counts both.
  #
  # Every decision is a Decision: allowed?, remaining (permits left in the
  # window after it) and retry_at, the earliest time at which the same
  # request would be granted (RETRY_NEVER when it never can be: n above the
  # key's limit, or a full table that denies new keys); #retry_after(now)
  # gives the wait for a Retry-After header.
  #
  # Times are Integers in the caller's unit, the same as window and
  # bucket_width: now in 1...2**64 (0 and values outside 0...2**64 raise
  # InvalidArgument). A clock that goes backwards is clamped per key (and
  # for the global window) to the latest time that key has seen, through
  # #acquire and #refund (a #peek moves no clock). Ruby's Integers hold
  # 2**64 - 1, so RETRY_NEVER comes back as it is, never clamped.
  #
  # Thread safety: internally synchronised (sharded locks); every call may
  # run from many threads at once, except #close (exclusive), and the
  # snapshot of #serialize, #dup and Marshal needs no concurrent
  # modification. (Ruby's global VM lock serializes the calls of Ruby
  # threads anyway, but not those of other native threads.)
  class RateLimiter
    NATIVE = Native::RateLimiterNative
    include NativeHandle

    # Creation flag: exact mode (no over-admission; bucket_width ignored).
    EXACT = Native::TF_RATE_LIMITER_EXACT
    # Creation flag: when #set_max_keys is reached, admit new keys untracked
    # instead of denying them.
    FULL_ALLOW = Native::TF_RATE_LIMITER_FULL_ALLOW

    # The library's bounds (rate_limiter.h): per-key limits in bucketed and
    # exact mode, buckets per window, an exact global limit.
    MAX_KEY_LIMIT = 65_535
    MAX_EXACT_LIMIT = 1 << 20
    MAX_BUCKETS = 4096
    MAX_EXACT_GLOBAL_LIMIT = 1 << 24

    # The retry_at of a request that can never be granted (2**64 - 1).
    RETRY_NEVER = (1 << 64) - 1

    # The answer of #acquire and #peek: allowed (true/false); remaining, the
    # permits left to the key in the window after the decision (the smaller
    # of the key's and the global window's when a global limit is set, on
    # every decision; 0 for a key admitted untracked by a full FULL_ALLOW
    # table); retry_at, 0 when allowed, else the earliest time at which the
    # same request would be granted if nothing else happened (the later of
    # the key's and the global window's), or RETRY_NEVER.
    Decision = Struct.new(:allowed, :remaining, :retry_at) do
      alias_method :allowed?, :allowed

      def denied?
        !allowed
      end

      # True when the request can never be granted (retry_at is RETRY_NEVER).
      def never?
        !allowed && retry_at == RETRY_NEVER
      end

      # The wait before retrying, for a Retry-After header: 0 when allowed,
      # retry_at - now (at least 0) when denied, nil when never? (the
      # request can never be granted as it is).
      def retry_after(now)
        raise TypeError, "now must be an Integer, not #{now.class}" unless now.is_a?(Integer)
        return 0 if allowed
        return nil if retry_at == RETRY_NEVER

        retry_at > now ? retry_at - now : 0
      end
    end

    # The counters of #stats: keys (tracked now), reclaimed (idle keys
    # reclaimed so far), denied_full (requests of new keys denied because
    # the table was full), allowed_full (admitted untracked because it was
    # full, with FULL_ALLOW) and memory (bytes held).
    Stats = Struct.new(:keys, :reclaimed, :denied_full, :allowed_full, :memory)

    # Each key at most limit (>= 1; at most MAX_KEY_LIMIT, or
    # MAX_EXACT_LIMIT with EXACT) requests per window (>= 1) time units.
    # bucket_width: the width of a bucket, dividing window, with at most
    # MAX_BUCKETS buckets per window; ignored (may be 0) with EXACT. flags: 0
    # or EXACT | FULL_ALLOW. Raises InvalidArgument, OutOfMemory.
    def initialize(limit, window, bucket_width, flags = 0)
      @native = NATIVE.new(limit, window, bucket_width, flags)
    end

    # An exact-mode limiter: new(limit, window, 0, EXACT | flags).
    def self.exact(limit, window, flags = 0)
      raise TypeError, "flags must be an Integer, not #{flags.class}" unless flags.is_a?(Integer)

      adopt(NATIVE.new(limit, window, 0, flags | EXACT))
    end

    # Asks for n (>= 1) permits for key at now and takes them when allowed.
    # Like the seed, the key's window (and the global one) is first brought
    # to now, granted or not: a later call with an earlier now is judged at
    # this now (the clock is clamped per key); a denial takes nothing.
    # Returns a Decision. Raises InvalidArgument for now == 0 or n == 0; n
    # above the key's limit is a denial that never? can be granted.
    def acquire(key, now, n = 1)
      allowed, remaining, retry_at = @native.acquire(key, now, n)
      Decision.new(allowed == 1, remaining, retry_at)
    end

    # acquire(keys[i], times[i], n) for every key of the Array keys, in
    # order, in one native call: an Array of one Decision per key, and the
    # same state afterwards as those single calls. The library fetches the
    # table lines of the next keys while it decides one, so their cache
    # misses overlap (about twice the throughput of single calls on a limiter
    # of a million keys, larger than the CPU's caches), and the cost of a
    # call into C is paid once: for requests that arrive together (a server
    # gathering one event-loop tick's requests, a queue admitted at once).
    # Not atomic: other threads' calls may come between its keys. times
    # holds one Integer (>= 1) per key. Every argument is checked before any
    # decision, so a refused call changes nothing: InvalidArgument when
    # times.size != keys.size, a time is 0 or n is 0 (even for an empty
    # batch), TypeError for a key that is not a String.
    def acquire_batch(keys, times, n = 1)
      raise TypeError, "keys must be an Array, not #{keys.class}" unless keys.is_a?(Array)

      count = keys.size
      _granted, allowed, remaining, retry_at = @native.acquire_batch(keys, times, n, count, count, count)
      Array.new(count) { |i| Decision.new(allowed[i], remaining[i], retry_at[i]) }
    end

    # The Decision #acquire would make at now, without changing anything: no
    # permit taken, no clock moved, no key created or reclaimed (#serialize
    # gives the same bytes before and after). A new key meeting a full table
    # gets acquire's answer too: the table is looked at for idle keys, not
    # swept.
    def peek(key, now, n = 1)
      allowed, remaining, retry_at = @native.peek(key, now, n)
      Decision.new(allowed == 1, remaining, retry_at)
    end

    # acquire(key, now, n).allowed?
    def allow?(key, now, n = 1)
      @native.acquire(key, now, n)[0] == 1
    end

    # Gives back up to n permits key took (the most recent first), to the
    # global window too: the same buckets (or grant times) as the key's, if
    # they are still in it. A key not tracked is a no-op. Returns self.
    def refund(key, now, n = 1)
      @native.refund(key, now, n)
      self
    end

    # Forgets key's requests (its own limit stays). Returns self.
    def reset(key)
      @native.reset(key)
      self
    end

    # A limit over all keys together, in the same window (0 removes it;
    # with EXACT at most MAX_EXACT_GLOBAL_LIMIT): a request is then granted
    # only when both the key's and the global window allow it, and every
    # decision reports the smaller remaining and the later retry_at.
    # Setting it starts the global window afresh (the keys' own windows are
    # kept). Returns self.
    def set_global_limit(limit)
      @native.set_global_limit(limit)
      self
    end

    # Gives key its own limit (0 removes it, back to the default); it stays
    # while the key is idle or reclaimed, and the key is still held to the
    # global limit. Returns self.
    def set_key_limit(key, limit)
      @native.set_key_limit(key, limit)
      self
    end

    # At most max_keys keys tracked at once (0: no bound). When the table is
    # full a new key first takes the place of an idle key; with none, it is
    # denied (RETRY_NEVER, #denied_full) or, with FULL_ALLOW, admitted
    # untracked (remaining 0, #allowed_full) within the global limit.
    # Returns self.
    def set_max_keys(max_keys)
      @native.set_max_keys(max_keys)
      self
    end

    # A Stats snapshot (memory walks every shard).
    def stats
      s = @native.stats
      Stats.new(s.keys, s.reclaimed, s.denied_full, s.allowed_full, s.memory)
    end

    # The number of keys tracked now.
    def tracked_keys
      @native.stats.keys
    end

    # Idle keys reclaimed so far.
    def reclaimed
      @native.stats.reclaimed
    end

    # Requests of new keys denied because the table was full (peeks are not
    # counted).
    def denied_full
      @native.stats.denied_full
    end

    # Requests of new keys admitted untracked because the table was full
    # (FULL_ALLOW; one refused by the global limit is not counted).
    def allowed_full
      @native.stats.allowed_full
    end

    def inspect
      return "#<#{self.class} closed>" if closed?

      "#<#{self.class} keys=#{tracked_keys}>"
    end
  end
end
