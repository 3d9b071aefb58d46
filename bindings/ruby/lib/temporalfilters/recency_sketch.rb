# frozen_string_literal: true

# TemporalFilters::RecencySketch (include/temporalfilters/recency_sketch.h).

module TemporalFilters
  # "When did I last see this key?" in fixed memory: depth rows of width
  # 64-bit timestamp cells. A query never answers older than the key's true
  # last update; it may answer newer, with the probability the sizing helper
  # targets (see include/temporalfilters/recency_sketch.h).
  #
  # Thread safety follows the C library: created with CONCURRENT, update,
  # query, pace, ttl_insert, ttl_maybe_live?, error_estimate, memory, the
  # getters, serialize, merge-as-source and merge-into (each cell takes the
  # maximum atomically) may run from many threads at once; clear and close
  # need exclusive access. Without CONCURRENT, no call may overlap a
  # modifying one (merge-into included). (Ruby's global VM lock serializes the
  # calls of Ruby threads anyway, but not those of other native threads.)
  class RecencySketch
    include NativeHandle

    # Creation flag: lock-free mode, safe from many threads.
    CONCURRENT = Native::TF_RECENCY_SKETCH_CONCURRENT
    # Creation flag: all of a key's cells in one cache line (depth <= 8).
    BLOCKED = Native::TF_RECENCY_SKETCH_BLOCKED

    # The result of #pace: granted (true/false) and next_allowed, the earliest
    # time the key may be granted again (now + interval after a grant, the
    # last grant + interval after a denial; saturating at RETRY_NEVER).
    PaceResult = Struct.new(:granted, :next_allowed) do
      alias_method :granted?, :granted
    end

    # What was fixed at creation, from #info (frozen): width (cells per row)
    # and depth (rows) as given, the hash seed, the creation flags
    # (CONCURRENT, BLOCKED) and cells, the number of timestamp cells
    # allocated. Each member has a reader of its own (#width, ...).
    Info = Struct.new(:width, :depth, :seed, :flags, :cells)
    snapshot_readers :info, Info
    flag_predicates concurrent: CONCURRENT, blocked: BLOCKED

    # An empty sketch of depth rows of width cells (width >= 1; depth 1..32,
    # 1..8 with BLOCKED); seed: the hash seed (sketches merge only with equal
    # seeds); flags: 0 or CONCURRENT | BLOCKED.
    # Raises InvalidArgumentError, OutOfMemoryError.
    def initialize(width, depth, seed: 0, flags: 0)
      @native = NATIVE.new(width, depth, seed, flags)
    end

    # The smallest sketch whose probability of a too-new answer, with
    # expected_keys distinct keys updated within the horizon queried about,
    # is at most too_new_probability (in (0, 1)).
    # Raises InvalidArgumentError.
    def self.for_target(expected_keys, too_new_probability, seed: 0, flags: 0)
      adopt(NATIVE.new_for(expected_keys, too_new_probability, seed, flags))
    end

    # The dimensions for_target would choose: [width, depth].
    def self.dimensions(expected_keys, too_new_probability, flags: 0)
      [NATIVE.dimensions_width(expected_keys, too_new_probability, flags),
       NATIVE.dimensions_depth(expected_keys, too_new_probability, flags)]
    end

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
    # faster. Both Arrays must have the same length (else InvalidArgumentError);
    # nothing changes when any argument is invalid.
    def update_batch(keys, times)
      @native.update_batch(keys, times)
      self
    end

    # query for every key of the Array keys, as an Array of Integers.
    def query_batch(keys)
      @native.query_batch(key_array(keys), keys.size)
    end

    # Merges other into self by cell-wise maximum (self then answers as if it
    # had seen both streams). Raises IncompatibleError when width, depth,
    # layout or seed differ, ClosedError when either is closed.
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

    private

    def inspect_fields
      i = info
      "width=#{i.width} depth=#{i.depth} seed=#{i.seed} flags=#{i.flags}"
    end

    protected

    # The native handle (TemporalFilters::Native::RecencySketchNative), which
    # #merge reads from the other sketch.
    attr_reader :native
  end
end
