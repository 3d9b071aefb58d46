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
  # (also include?), add_if_absent(key), their batches add_batch(keys),
  # contains_batch(keys) and add_if_absent_batch(keys), and clear
  # (Membership).
  #
  # Two layouts, chosen by the flags at creation: the classic one (flags 0,
  # an array per slice) and BLOCKED, with the same window and guarantee and
  # k + l <= 32 slices stored as the 32-bit lanes of 64-byte lines, so that
  # a query reads one or two cache lines instead of one per slice: several
  # times faster, for more memory (about 23 bits per element at 1e-2 and 35
  # at 1e-3, against 20 and 26; below 1e-3 the classic layout is the better
  # choice). Its sizing (AgeBloom.choose(rate, flags: BLOCKED)) uses a
  # conservative model of the blocking, not false_positive_rate; fpr_now
  # reports the model's rate. Every method works on both; blocked? tells
  # which, and the blob records it.
  #
  # Not internally synchronised (either layout): contains?, contains_batch,
  # info, stats, their readers, memory and serialize may overlap each other
  # (from native threads); add, add_if_absent, their batches, clear and
  # close need exclusive access. The
  # constructors and sizing helpers are thread-safe.
  class AgeBloom
    include NativeHandle
    include Membership
    alias include? contains?

    # Creation flag (TF_AGE_BLOOM_BLOCKED): the blocked layout.
    BLOCKED = Native::TF_AGE_BLOOM_BLOCKED
    # Flag of choose and for_target (TF_AGE_BLOOM_MIN_MEMORY), classic
    # layout: the (k, l) with the fewest bits per element, however long its
    # queries (at 1e-2: [12, 87], 19.70 bits and 16.2 slices tested per
    # absent key, against the default [10, 24], 20.44 bits and 5.8). Not
    # recorded in the filter or its blob; refused with BLOCKED and by new.
    MIN_MEMORY = Native::TF_AGE_BLOOM_MIN_MEMORY
    # The default choice's bound on the slices a query for an absent key
    # tests in expectation, at the filter's worst moment
    # (TF_AGE_BLOOM_PROBE_BUDGET, 6.0): choose picks the fewest bits per
    # element among the pairs whose expected_probes(k, l).absent is at most
    # this.
    PROBE_BUDGET = Native::TF_AGE_BLOOM_PROBE_BUDGET

    # What a query of a classic filter costs, from
    # AgeBloom.expected_probes(k, l) (frozen): the slices it tests in
    # expectation at the filter's worst moment (just before a shift), each
    # one random memory read: absent for a key not in the filter, present
    # for a key of uniformly random age within the window (at least k).
    Probes = Struct.new(:absent, :present)

    # What was fixed at creation, from #info (frozen): k (hash functions:
    # bits set per insert, slices a key must match), l (slices beyond the
    # first k: the window spans l generations), slice_bits (bits per slice;
    # blocked: a multiple of 32), generation (inserts between two shifts),
    # capacity (the window in inserts: l * generation), the hash seed and the
    # creation flags (BLOCKED or 0). Each member has a reader of its own
    # (#k, ...).
    Info = Struct.new(:k, :l, :slice_bits, :generation, :capacity, :seed, :flags)
    snapshot_readers :info, Info
    # blocked?: true for the blocked layout (created with BLOCKED, or the
    # blob of one), false for the classic one.
    flag_predicates blocked: BLOCKED

    # The state of a filter at one moment, from #stats (frozen): slices (k +
    # l), bits (of all slices; blocked: of all 64-byte lines, unused lanes
    # included), bits_per_element (bits / capacity), inserts (since creation
    # or clear) and fpr_now (the false-positive rate for the measured fill of
    # every slice; blocked: under the layout's conservative model; it scans
    # every slice: O(bits / 64)). Each member has a reader of its own
    # (#slices, ...), which takes the whole snapshot.
    Stats = Struct.new(:slices, :bits, :bits_per_element, :inserts, :fpr_now)
    snapshot_readers :stats, Stats

    # Low level: k + l slices of slice_bits bits; the generation is
    # max(1, floor(slice_bits * ln 2 / k)) inserts and the capacity l times
    # that. Classic: k in 1..64, l in 1..1024, slice_bits in 64..2**40.
    # BLOCKED: k >= 1 and l >= 1 with k + l <= 32, slice_bits in 32..2**40
    # rounded up to a multiple of 32, and ceil((k + l) / 16) lines of 64
    # bytes per 32 bits of slice (unused lanes included). seed: the hash
    # seed; flags: 0 or BLOCKED (MIN_MEMORY is refused: the caller chose k
    # and l). Raises InvalidArgumentError (TF_ERR_TOO_LARGE for slice_bits
    # over 2**40), OutOfMemoryError.
    def initialize(k, l, slice_bits, seed: 0, flags: 0)
      @native = NATIVE.new(k, l, slice_bits, seed, flags)
    end

    # A filter that remembers at least the last capacity (>= 1) inserts with
    # a false-positive rate of at most error_rate: k, l and the fill from
    # AgeBloom.choose(error_rate, flags:), generation ceil(capacity / l).
    # Classic: error_rate in (0, 1), slices of ceil(k * generation / ln 2)
    # bits. BLOCKED: error_rate in (0, 0.2], slices of k * generation /
    # -ln(1 - fill) bits rounded up to a multiple of 32. flags: 0,
    # MIN_MEMORY or BLOCKED. Raises InvalidArgumentError, OutOfMemoryError.
    def self.for_target(capacity, error_rate, seed: 0, flags: 0)
      adopt(NATIVE.new_for(capacity, error_rate, seed, flags))
    end

    # The [k, l, fill] for_target picks for error_rate with these flags:
    # the triple that meets error_rate with the fewest bits per element,
    # fill being the fill ratio of a slice leaving the first k. Classic:
    # error_rate in (0, 1), the steady false-positive rate of (k, l) at most
    # error_rate, fill 0.5, and absent queries testing at most PROBE_BUDGET
    # slices in expectation ([10, 24, 0.5] at 1e-2, [14, 36, 0.5] at 1e-3);
    # with MIN_MEMORY, the fewest bits however long the queries ([12, 87,
    # 0.5] and [16, 139, 0.5]). BLOCKED: error_rate in (0, 0.2], k + l is 16
    # or 32, under the layout's conservative model. Shared by TimeBloom.
    # Raises InvalidArgumentError (MIN_MEMORY with BLOCKED; TF_ERR_TOO_LARGE
    # when no pair meets
    # it: with k <= 64, or a blocked target far below 1e-3, where the
    # classic layout is the better choice anyway).
    def self.choose(error_rate, flags: 0)
      [NATIVE.choose_k(error_rate, flags), NATIVE.choose_l(error_rate, flags), NATIVE.choose_fill(error_rate, flags)]
    end

    # The exact steady-state false-positive rate of (k, l) in the classic
    # layout, at its peak just before a shift. Raises InvalidArgumentError
    # for k or l out of range.
    def self.false_positive_rate(k, l)
      NATIVE.false_positive_rate(k, l)
    end

    # Bits per element of capacity at steady state, (k + l) k / (l ln 2).
    # Raises InvalidArgumentError for k or l out of range.
    def self.bits_per_element(k, l)
      NATIVE.steady_bits_per_element(k, l)
    end

    # A Probes of (k, l) in the classic layout, computed exactly
    # (tf_age_bloom_expected_probes). Raises InvalidArgumentError for k or l
    # out of range.
    def self.expected_probes(k, l)
      Probes.new(NATIVE.expected_probes_absent(k, l), NATIVE.expected_probes_present(k, l)).freeze
    end

    private

    def inspect_fields
      i = info
      layout = (i.flags & BLOCKED).zero? ? "" : "blocked "
      "#{layout}k=#{i.k} l=#{i.l} slice_bits=#{i.slice_bits} capacity=#{i.capacity} seed=#{i.seed}"
    end
  end
end
