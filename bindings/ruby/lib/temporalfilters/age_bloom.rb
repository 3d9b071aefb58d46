# frozen_string_literal: true

# TemporalFilters::AgeBloom (include/temporalfilters/age_bloom.h).

module TemporalFilters
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
  # add(key) (shifting first when the generation is full), contains?(key)
  # (also include?), add_if_absent(key) and clear (Membership).
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
    include NativeHandle
    include Membership
    alias include? contains?

    # What was fixed at creation, from #info (frozen): k (hash functions:
    # bits set per insert, slices a key must match), l (slices beyond the
    # first k: the window spans l generations), slice_bits (bits per slice;
    # blocked: a multiple of 32), generation (inserts between two shifts),
    # capacity (the window in inserts: l * generation) and the hash seed.
    # Each member has a reader of its own (#k, ...).
    Info = Struct.new(:k, :l, :slice_bits, :generation, :capacity, :seed)
    struct_readers Info, :info

    # The state of a filter at one moment, from #stats (frozen): slices (k +
    # l), bits (of all slices; blocked: of all 64-byte lines, unused lanes
    # included), bits_per_element (bits / capacity), inserts (since creation
    # or clear) and fpr_now (the false-positive rate for the measured fill of
    # every slice; blocked: under the layout's conservative model). Each
    # member has a reader of its own (#slices, ...), which takes the whole
    # snapshot.
    Stats = Struct.new(:slices, :bits, :bits_per_element, :inserts, :fpr_now)
    struct_readers Stats, :stats

    # Low level: k + l slices of slice_bits bits; the generation is
    # max(1, floor(slice_bits * ln 2 / k)) inserts and the capacity l times
    # that. k in 1..64, l in 1..1024, slice_bits in 64..2**40; seed: the hash
    # seed. Raises InvalidArgumentError (TF_ERR_TOO_LARGE
    # for slice_bits over 2**40), OutOfMemoryError.
    def initialize(k, l, slice_bits, seed: 0)
      @native = NATIVE.new(k, l, slice_bits, seed)
    end

    # A filter that remembers at least the last capacity (>= 1) inserts with
    # a false-positive rate of at most error_rate (in (0, 1)): (k, l) from
    # AgeBloom.choose. Raises InvalidArgumentError, OutOfMemoryError.
    def self.for_target(capacity, error_rate, seed: 0)
      adopt(NATIVE.new_for(error_rate, capacity, seed))
    end

    # Low level, blocked layout: k + l slices of slice_bits bits rounded up
    # to a multiple of 32; the generation is max(1, floor(rounded bits *
    # ln 2 / k)) inserts and the capacity l times that. Memory: ceil((k + l)
    # / 16) lines of 64 bytes per 32 bits of slice (unused lanes included).
    # k >= 1 and l >= 1 with k + l <= 32, slice_bits in 32..2**40; seed: the
    # hash seed. Raises InvalidArgumentError (TF_ERR_TOO_LARGE
    # for slice_bits over 2**40), OutOfMemoryError.
    def self.blocked(k, l, slice_bits, seed: 0)
      adopt(NATIVE.new_blocked(k, l, slice_bits, seed))
    end

    # A blocked-layout filter that remembers at least the last capacity
    # (>= 1) inserts with a false-positive rate of at most error_rate (in
    # (0, 0.2]): k, l and the fill from AgeBloom.choose_blocked, generation
    # ceil(capacity / l), slices of k * generation / -ln(1 - fill) bits
    # rounded up to a multiple of 32. Raises InvalidArgumentError,
    # OutOfMemoryError.
    def self.blocked_for_target(capacity, error_rate, seed: 0)
      adopt(NATIVE.new_blocked_for(error_rate, capacity, seed))
    end

    # The [k, l, fill] blocked_for_target picks for error_rate (in (0, 0.2]):
    # k + l is 16 or 32, fill (in (0, 1)) the fill ratio of a slice leaving
    # the first k; the triple that meets error_rate under the blocked
    # layout's conservative model with the fewest bits per element. Raises
    # InvalidArgumentError (TF_ERR_TOO_LARGE when no blocked pair meets it: a target far
    # below 1e-3, where the classic layout is the better choice anyway).
    def self.choose_blocked(error_rate)
      [NATIVE.choose_blocked_k(error_rate), NATIVE.choose_blocked_l(error_rate),
       NATIVE.choose_blocked_fill(error_rate)]
    end

    # The [k, l] for_target picks for error_rate (in (0, 1)): the pair whose
    # steady false-positive rate is at most error_rate with the fewest bits
    # per element. Shared by TimeBloom. Raises InvalidArgumentError
    # (TF_ERR_TOO_LARGE when no pair with k <= 64 meets it).
    def self.choose(error_rate)
      [NATIVE.choose_k(error_rate), NATIVE.choose_l(error_rate)]
    end

    # The exact steady-state false-positive rate of (k, l) in the classic
    # layout, at its peak just before a shift. Raises InvalidArgumentError for k
    # or l out of range.
    def self.false_positive_rate(k, l)
      NATIVE.false_positive_rate(k, l)
    end

    # Bits per element of capacity at steady state, (k + l) k / (l ln 2).
    # Raises InvalidArgumentError for k or l out of range.
    def self.bits_per_element(k, l)
      NATIVE.steady_bits_per_element(k, l)
    end

    # An Info: the shape and the seed.
    def info
      Info.new(@native.k, @native.l, @native.slice_bits, @native.generation, @native.capacity,
               @native.seed).freeze
    end

    # A Stats snapshot (fpr_now scans every slice: O(bits / 64)).
    def stats
      Stats.new(@native.slices, @native.bits, @native.bits_per_element, @native.inserts, @native.fpr_now).freeze
    end

    # True for the blocked layout (AgeBloom.blocked, blocked_for_target or
    # the blob of one), false for the classic one.
    def blocked?
      @native.is_blocked == 1
    end

    private

    def inspect_fields
      i = info
      layout = blocked? ? "blocked " : ""
      "#{layout}k=#{i.k} l=#{i.l} slice_bits=#{i.slice_bits} capacity=#{i.capacity} seed=#{i.seed}"
    end
  end
end
