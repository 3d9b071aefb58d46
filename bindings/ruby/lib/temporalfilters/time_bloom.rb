# frozen_string_literal: true

# TemporalFilters::TimeBloom (include/temporalfilters/time_bloom.h).

module TemporalFilters
  # "Was this key inserted within the last span time units?": the
  # time-limited Bloom filter (include/temporalfilters/time_bloom.h). Slices
  # of varying size with timestamps; new slices follow the measured insertion
  # rate and slices older than the span retire.
  #
  # No false negatives within the span: a key added at t is reported present
  # at every now with now - span <= t. At a steady rate the false-positive
  # rate is at most the target given to for_target. Times are Integers in
  # the caller's unit, in 1...2**64 for now (0 and values outside 0...2**64
  # raise InvalidArgumentError); the unit must be fine enough that span >=
  # l. A clock that goes backwards is clamped to the highest time seen.
  #
  # add(key, now), contains?(key, now), add_if_absent(key, now), their
  # batches add_batch(keys, now), contains_batch(keys, now) and
  # add_if_absent_batch(keys, now), and clear (Membership). An add may shift and add a slice: OutOfMemoryError, or
  # InvalidArgumentError (TF_ERR_TOO_LARGE) past 4096 slices, leave the
  # filter unchanged.
  #
  # Not internally synchronised: contains?, contains_batch, the getters,
  # stats, memory and serialize may overlap each other (from native
  # threads); add, add_if_absent, their batches, clear and close need
  # exclusive access.
  class TimeBloom
    include NativeHandle
    include Membership

    # Flag of for_target (TF_TIME_BLOOM_MIN_MEMORY): the (k, l) with the
    # fewest bits per element, however long its queries, as
    # AgeBloom::MIN_MEMORY (without it absent queries test at most
    # AgeBloom::PROBE_BUDGET slices in expectation). Not recorded in the
    # filter or its blob; refused by new.
    MIN_MEMORY = Native::TF_TIME_BLOOM_MIN_MEMORY

    # What was fixed at creation, from #info (frozen): k (hash functions:
    # bits set per insert, slices a key must match), l (the minimum number
    # of slices beyond the first k), span (the window, in the caller's time
    # unit), the hash seed and the creation flags (0: MIN_MEMORY is not
    # recorded).
    # Each member has a reader of its own (#k, ...).
    Info = Struct.new(:k, :l, :span, :seed, :flags)
    snapshot_readers :info, Info

    # The state of a filter at a time now, from #stats(now) (frozen): slices
    # (>= k; k + l in steady state), bits (of all slices), bits_per_element (bits / inserts
    # within the span, 0.0 when none), inserts (since creation or clear) and
    # fpr_now (the false-positive rate for the measured fill, slices older
    # than the span counting as empty).
    Stats = Struct.new(:slices, :bits, :bits_per_element, :inserts, :fpr_now)

    # Low level: k + l initial slices of slice_bits bits; k in 1..64, l in
    # 1..1024, slice_bits in 64..2**40, span >= l. flags: 0 (MIN_MEMORY is
    # for for_target: here the caller chose k and l). Raises
    # InvalidArgumentError, OutOfMemoryError.
    def initialize(k, l, slice_bits, span, seed: 0, flags: 0)
      @native = NATIVE.new(k, l, slice_bits, span, seed, flags)
    end

    # A filter for the keys of the last span time units with a
    # false-positive rate of at most error_rate (in (0, 1)) at a steady rate:
    # (k, l) from AgeBloom.choose (flags MIN_MEMORY: from AgeBloom.choose
    # with AgeBloom::MIN_MEMORY), initial slices sized for initial_capacity
    # (>= 1) inserts per span; the sizes adapt from the first shift. span
    # must be >= the chosen l. Raises InvalidArgumentError, OutOfMemoryError.
    def self.for_target(initial_capacity, error_rate, span, seed: 0, flags: 0)
      adopt(NATIVE.new_for(initial_capacity, error_rate, span, seed, flags))
    end

    # A Stats snapshot at time now (fpr_now scans every slice).
    def stats(now)
      snapshot(Stats, @native.stats(now))
    end

    # The members of Stats that do not depend on the time (read at the
    # earliest one, 1): the current number of slices (>= k), the total
    # bits of all slices, the inserts since creation or clear.
    %i[slices bits inserts].each do |name|
      define_method(name) { stats(1).public_send(name) }
    end

    # The members of Stats at time now: bits / inserts within the span
    # before now (0.0 when none); the false-positive rate at now for the
    # measured fill of every slice.
    %i[bits_per_element fpr_now].each do |name|
      define_method(name) { |now| stats(now).public_send(name) }
    end

    # The size of slice i (0 = the newest) in bits; InvalidArgumentError when
    # there is no slice i.
    def slice_bits(i)
      @native.slice_bits(i)
    end

    private

    def inspect_fields
      i = info
      "k=#{i.k} l=#{i.l} span=#{i.span} slices=#{slices} seed=#{i.seed}"
    end
  end
end
