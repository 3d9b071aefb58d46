# frozen_string_literal: true

# Semantics of TemporalFilters::AgeBloom (the count-window age-partitioned
# Bloom filter) through the Ruby binding: add/contains, the window of
# capacity = l * generation inserts, add_if_absent, clear, stats and info,
# the sizing helpers, binary and string keys, serialization, close, copies;
# the same for the blocked layout (flags: AgeBloom::BLOCKED, blocked?). The error paths are in test_bloom_errors.rb.

require_relative "helper"

class TestAgeBloom < Minitest::Test
  def test_shape_and_info
    f = AB.new(3, 4, 200, seed: 42)
    # generation floor(200 ln 2 / 3) = 46, capacity l * g
    assert_equal [3, 4, 200, 46, 184, 42], [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed]
    assert_equal 4 * f.generation, f.capacity
    assert_equal [7, 1400, 0], [f.slices, f.bits, f.inserts]
    assert_in_delta 1400.0 / 184, f.bits_per_element, 1e-12
    assert_equal 0.0, f.fpr_now, "an empty filter has no false positives"
    assert_operator f.memory, :>=, 7 * 4 * 8, "7 slices of 4 words"
    assert_operator f.memory, :<, 7 * 4 * 8 + 4096
    assert_equal 0, AB.new(3, 4, 200).seed, "the seed defaults to 0"
    assert_equal 1, AB.new(64, 1, 64).generation, "at least one insert per generation"
    assert_match(/k=3 l=4 slice_bits=200 capacity=184 seed=42/, f.inspect)
  end

  def test_add_and_contains
    f = AB.new(4, 8, 1024, seed: 1)
    refute f.contains?("a")
    assert_same f, f.add("a")
    assert f.contains?("a")
    assert f.contains("a"), "the cross-language name"
    assert f.include?("a")
    refute f.contains?("b")
    assert_equal 1, f.inserts
    f.add("a")
    assert_equal 2, f.inserts, "add inserts again, present or not"
  end

  def test_no_false_negatives_within_the_window
    f = AB.for_target(500, 0.01, seed: 3)
    cap = f.capacity
    assert_equal f.l * f.generation, cap
    assert_operator cap, :>=, 500
    keys = Array.new(4000) { |i| "stream-#{i}" }
    keys.each_with_index do |key, i|
      f.add(key)
      # the key added capacity - 1 inserts before this one is still in the window
      oldest = i - cap + 1
      assert f.contains?(keys[oldest]), "#{keys[oldest]} at insert #{i}" if oldest >= 0
      next unless (i % 250) == 249

      (([oldest, 0].max)..i).each { |j| assert f.contains?(keys[j]), "#{keys[j]} at insert #{i}" }
    end
    # keys older than l + 2 generations (a key's last slice is recycled
    # l + 1 shifts after its insert) are forgotten but for false positives
    old = keys.first(4000 - cap - 2 * f.generation)
    false_positives = old.count { |k| f.contains?(k) }
    assert_operator false_positives, :<=, (old.size * 0.03).ceil, "about 1% expected (1.5% measured)"
    never = Array.new(3000) { |i| "never-#{i}" }.count { |k| f.contains?(k) }
    assert_operator never, :<=, 90, "about 1% expected"
  end

  def test_the_window_is_counted_in_inserts
    [[2, 3, 64], [3, 4, 200], [12, 87, 1000], [1, 1, 64]].each do |k, l, bits|
      f = AB.new(k, l, bits, seed: 9)
      g = [(bits * Math.log(2) / k).floor, 1].max
      assert_equal [g, l * g], [f.generation, f.capacity], [k, l, bits].inspect
      f.add("first")
      (f.capacity - 1).times { |i| f.add("other-#{i}") }
      assert f.contains?("first"), "a key added l * g - 1 inserts before the last is in the window"
      assert_equal f.capacity, f.inserts
    end
  end

  def test_add_if_absent
    f = AB.new(3, 4, 512, seed: 5)
    assert_equal false, f.add_if_absent("dedup")
    assert_equal 1, f.inserts
    assert_equal true, f.add_if_absent("dedup")
    assert_equal 1, f.inserts, "a present key is not inserted again"
    assert f.contains?("dedup")
    assert_equal false, f.add_if_absent("other")
    assert_equal 2, f.inserts
  end

  def test_add_if_absent_equals_contains_then_add
    a = AB.new(3, 4, 256, seed: 7)
    b = AB.new(3, 4, 256, seed: 7)
    rng = Random.new(5)
    600.times do
      key = "k#{rng.rand(300)}"
      was = b.contains?(key)
      b.add(key) unless was
      assert_equal was, a.add_if_absent(key), key
    end
    assert_equal b.serialize, a.serialize
  end

  def test_clear
    f = AB.new(3, 4, 200, seed: 42)
    100.times { |i| f.add("c#{i}") }
    assert_operator f.fpr_now, :>, 0.0
    before = [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed, f.slices, f.bits]
    assert_same f, f.clear
    assert_equal 0, f.inserts
    assert_equal 0.0, f.fpr_now
    refute f.contains?("c99")
    assert_equal before, [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed, f.slices, f.bits]
    assert(100.times.none? { |i| f.contains?("c#{i}") }, "every key forgotten")
    assert f.add("c1").contains?("c1")
  end

  def test_stats
    f = AB.new(5, 10, 1000, seed: 3)
    s = f.stats
    assert_frozen_struct(AB::Stats, { slices: 15, bits: 15_000, bits_per_element: 15_000.0 / f.capacity, inserts: 0,
                                      fpr_now: 0.0 }, s, f)
    fprs = [0.0]
    3.times do |round|
      f.capacity.times { |i| f.add("r#{round}-#{i}") }
      fprs << f.fpr_now
    end
    assert_operator fprs[1], :>, 0.0
    assert_operator fprs.max, :<=, AB.false_positive_rate(5, 10) * 1.5, fprs.inspect
    s = f.stats
    assert_equal [3 * f.capacity, f.fpr_now], [s.inserts, s.fpr_now]
    assert_equal s, f.stats, "a Struct: equal by value"
  end

  def test_blocked_is_a_flag
    assert_equal 1, AB::BLOCKED
    assert_equal TF::Native::TF_AGE_BLOOM_BLOCKED, AB::BLOCKED
    f = AB.new(3, 4, 200, seed: 42, flags: AB::BLOCKED)
    assert_equal [AB::BLOCKED, true], [f.info.flags, f.blocked?]
    refute AB.new(3, 4, 200).blocked?
    assert AB.for_target(1000, 0.01, flags: AB::BLOCKED).blocked?
    refute_respond_to AB, :blocked
    refute_respond_to AB, :blocked_for_target
    refute_respond_to AB, :choose_blocked
  end

  def test_info_is_a_frozen_struct_and_seed_a_keyword
    f = AB.new(3, 4, 200, seed: 42)
    info = f.info
    assert_frozen_struct(AB::Info, { k: 3, l: 4, slice_bits: 200, generation: 46, capacity: 184, seed: 42, flags: 0 },
                         info, f)
    assert_equal info, AB.new(3, 4, 200, seed: 42).info
    assert_equal 7, AB.for_target(100, 0.1, seed: 7).seed
    assert_raises(ArgumentError) { AB.new(3, 4, 200, 42) }
    assert_raises(ArgumentError) { AB.for_target(100, 0.1, 7) }
  end

  # ---- sizing -------------------------------------------------------------

  def test_choose_matches_the_c_library
    assert_equal [10, 24, 0.5], AB.choose(0.01), "the classic layout's fill is 1/2"
    assert_equal [12, 87, 0.5], AB.choose(0.01, flags: AB::MIN_MEMORY), "the memory-minimal pair"
    assert_equal [[14, 36, 0.5], [16, 139, 0.5]], [AB.choose(0.001), AB.choose(0.001, flags: AB::MIN_MEMORY)]
    rate = AB.false_positive_rate(12, 87)
    assert_operator rate, :<=, 0.01
    assert_operator rate, :>, 0.001
    rate = AB.false_positive_rate(10, 24)
    assert_operator rate, :<=, 0.01
    assert_operator rate, :>, 0.001
    assert_operator AB.bits_per_element(10, 24), :>, AB.bits_per_element(12, 87), "the default costs some memory"
    assert_operator AB.bits_per_element(10, 24), :<, 1.15 * AB.bits_per_element(12, 87)
    k, l, = AB.choose(0.001)
    assert_operator AB.false_positive_rate(k, l), :<=, 0.001
    assert_operator AB.bits_per_element(k, l), :>, AB.bits_per_element(12, 87), "a tighter target costs memory"
    assert_equal AB.choose(0.5), AB.choose(1r / 2), "any Numeric rate"
  end

  def test_bits_per_element_formula
    [[12, 87], [3, 4], [1, 1], [64, 1024]].each do |k, l|
      assert_in_delta (k + l) * k / (l * Math.log(2)), AB.bits_per_element(k, l), 1e-9
    end
  end

  def test_false_positive_rate_grows_with_l_and_falls_with_k
    assert_operator AB.false_positive_rate(4, 20), :>, AB.false_positive_rate(4, 10)
    assert_operator AB.false_positive_rate(8, 10), :<, AB.false_positive_rate(4, 10)
    assert_operator AB.false_positive_rate(1, 1), :<, 1.0
  end

  def test_for_target_uses_choose
    f = AB.for_target(1000, 0.01, seed: 77)
    assert_equal [10, 24, 77], [f.k, f.l, f.seed]
    assert_equal (1000 + 23) / 24, f.generation, "g = ceil(capacity / l)"
    assert_operator f.capacity, :>=, 1000
    assert_equal (10 * f.generation / Math.log(2)).ceil, f.slice_bits
    assert_equal 0, AB.for_target(10, 0.1).seed
    # the memory-minimal pair on request; the flag is not recorded
    f = AB.for_target(1000, 0.01, seed: 77, flags: AB::MIN_MEMORY)
    assert_equal [12, 87, 77, 0], [f.k, f.l, f.seed, f.flags]
    assert_equal (1000 + 86) / 87, f.generation, "g = ceil(capacity / l)"
    assert_operator f.capacity, :>=, 1000
    assert_equal (12 * f.generation / Math.log(2)).ceil, f.slice_bits
  end

  # expected_probes: the C library's values (printed by a C program with
  # %.17g), a frozen Probes; the default choice within PROBE_BUDGET.
  def test_expected_probes
    assert_equal 6.0, AB::PROBE_BUDGET
    {
      [10, 24] => [5.7835982453353605, 12.25791969537735],
      [12, 87] => [16.239311717094822, 19.435517987032494],
      [14, 36] => [5.9149538933696872, 16.512729020440414],
      [16, 139] => [19.147471685834415, 24.958225753062184],
      [64, 1] => [1.0221436478963601, 64.25],
      [64, 1024] => [33.207227944769777, 80.186345919342898]
    }.each do |(k, l), (absent, present)|
      p = AB.expected_probes(k, l)
      assert_in_delta absent, p.absent, 1e-9 * absent, [k, l].inspect
      assert_in_delta present, p.present, 1e-9 * present, [k, l].inspect
    end
    # by hand: the oldest slice, then the newest on a miss
    assert_frozen_struct(AB::Probes, { absent: 1.5, present: 1.25 }, AB.expected_probes(1, 1), nil)
    [0.1, 0.01, 0.001, 1e-4, 1e-6].each do |rate|
      k, l, = AB.choose(rate)
      p = AB.expected_probes(k, l)
      assert_operator p.absent, :<=, AB::PROBE_BUDGET, rate.to_s
      assert_operator p.present, :>=, k, rate.to_s
    end
    assert_operator AB.expected_probes(12, 87).absent, :>, AB::PROBE_BUDGET
  end

  # The batches give the answers and the filter of the single calls on the
  # same keys, in both layouts, across shifts (a window of about 200
  # inserts, 600 keys per batch).
  def test_batches_equal_single_calls
    [0, AB::BLOCKED].each do |flags|
      f = AB.for_target(200, 0.01, seed: 3, flags: flags)
      g = AB.for_target(200, 0.01, seed: 3, flags: flags)
      keys = Array.new(600) { |i| "b-#{i % 400}" } # repeats within the batch
      assert_equal keys.map { |k| g.add_if_absent(k) }, f.add_if_absent_batch(keys)
      assert_equal g.serialize, f.serialize
      probe = Array.new(1000) { |i| i.even? ? "b-#{i / 2}" : "absent-#{i}" }
      present = f.contains_batch(probe)
      assert_equal probe.map { |k| g.contains?(k) }, present
      assert present[2 * 399], "the last insert is in the window"
      assert_same f, f.add_batch(keys)
      keys.each { |k| g.add(k) }
      assert_equal g.serialize, f.serialize
      binary = ["\x00".b, "\x00\x00".b, ""]
      f.add_batch(binary)
      assert_equal [true] * 3, f.contains_batch(binary)
      assert_equal [true] * 3, f.add_if_absent_batch(binary)
      assert_equal [], f.contains_batch([])
      assert_equal [], f.add_if_absent_batch([])
      before = f.serialize
      f.add_batch([])
      assert_equal before, f.serialize
    end
  end

  def test_bad_batch_arguments
    f = AB.new(3, 4, 256, seed: 1).add("k")
    before = f.serialize
    assert_raises(TypeError) { f.add_batch("k") }
    assert_raises(TypeError) { f.contains_batch(nil) }
    assert_raises(TypeError) { f.add_if_absent_batch(["a", nil]) }
    assert_raises(TypeError) { f.add_batch(["a", 1]) }
    assert_raises(ArgumentError) { f.contains_batch(["k"], 5) } # no time for a count window
    assert_equal before, f.serialize
  end

  # ---- keys ---------------------------------------------------------------

  def test_binary_keys_with_nul_bytes
    f = AB.new(4, 4, 4096, seed: 2)
    ["\x00a\x00".b, "\x00b\x00".b, "", "\xff\xfe\x00\x80".b].each { |k| f.add(k) }
    ["\x00a\x00".b, "\x00b\x00".b, "", "\xff\xfe\x00\x80".b].each { |k| assert f.contains?(k), k.inspect }
    refute f.contains?("\x00".b), "a NUL prefix is not the key"
    refute f.contains?("\x00a".b)
  end

  def test_keys_are_bytes_whatever_the_encoding
    f = AB.new(4, 4, 4096, seed: 2)
    f.add("été")
    assert f.contains?("été".b)
    assert f.contains?("été".dup.force_encoding("ISO-8859-1"))
    refute f.contains?("été".encode("ISO-8859-1")), "other bytes, other key"
    bad = "\xC3\x28".dup.force_encoding("UTF-8")
    refute bad.valid_encoding?
    f.add(bad)
    assert f.contains?("\xC3\x28".b)
    key = Object.new
    def key.to_str
      "été"
    end
    assert f.contains?(key), "an object with to_str"
  end

  # ---- the blocked layout ---------------------------------------------------

  def test_blocked_shape_and_info
    f = AB.new(3, 4, 200, seed: 42, flags: AB::BLOCKED)
    assert_instance_of AB, f
    assert f.blocked?
    # slices of 200 bits rounded up to 224; generation floor(224 ln 2 / 3) = 51
    assert_equal [3, 4, 224, 51, 204, 42], [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed]
    # one band of 16 lanes (k + l <= 16): 7 lines of 512 bits, unused lanes included
    assert_equal [7, 7 * 512, 0], [f.slices, f.bits, f.inserts]
    assert_in_delta 7 * 512.0 / 204, f.bits_per_element, 1e-12
    assert_equal 0.0, f.fpr_now
    assert_operator f.memory, :>=, 7 * 64
    assert_match(/AgeBloom blocked k=3 l=4 slice_bits=224 capacity=204 seed=42/, f.inspect)
    assert_equal 0, AB.new(3, 4, 200, flags: AB::BLOCKED).seed, "the seed defaults to 0"
    refute AB.new(3, 4, 200, seed: 42).blocked?
    refute AB.for_target(100, 0.01).blocked?
    refute_match(/blocked/, AB.new(3, 4, 200, seed: 42).inspect)
    # k + l = 32 takes two bands; the limits of k and l are fine
    two = AB.new(6, 26, 1000, seed: 7, flags: AB::BLOCKED)
    assert_equal [1024, 32, 2 * 32 * 512], [two.slice_bits, two.slices, two.bits]
    [[1, 1], [1, 31], [31, 1], [16, 16]].each do |k, l|
      g = [(32 * Math.log(2) / k).floor, 1].max
      f = AB.new(k, l, 32, seed: 2**32 - 1, flags: AB::BLOCKED)
      assert_equal [true, k, l, 32, g, 2**32 - 1], [f.blocked?, f.k, f.l, f.slice_bits, f.generation, f.seed]
    end
  end

  def test_blocked_no_false_negatives_within_the_window
    # sized for a target (k + l is 16 or 32), and low level with two bands
    [AB.for_target(500, 0.01, seed: 3, flags: AB::BLOCKED), AB.new(6, 26, 512, seed: 4, flags: AB::BLOCKED)].each do |f|
      assert f.blocked?
      cap = f.capacity
      assert_equal f.l * f.generation, cap
      n = 6 * cap + 77 # several windows
      keys = Array.new(n) { |i| "stream-#{i}" }
      keys.each_with_index do |key, i|
        f.add(key)
        oldest = i - cap + 1
        assert f.contains?(keys[oldest]), "#{f.inspect}: #{keys[oldest]} at insert #{i}" if oldest >= 0
        next unless (i % (cap / 2 + 1)).zero? || i == n - 1

        (([oldest, 0].max)..i).each { |j| assert f.contains?(keys[j]), "#{f.inspect}: #{keys[j]} at insert #{i}" }
      end
      assert_equal n, f.inserts
      model = f.fpr_now
      assert_operator model, :>, 0.0
      never = Array.new(3000) { |i| "never-#{i}" }.count { |k| f.contains?(k) }
      assert_operator never, :<=, (3000 * 2 * model).ceil + 20, "#{f.inspect}: model #{model}"
    end
    # the last `capacity` inserts asked for, and the target met
    f = AB.for_target(1000, 0.01, seed: 5, flags: AB::BLOCKED)
    assert_operator f.capacity, :>=, 1000
    5000.times { |i| f.add("k#{i}") }
    (4000...5000).each { |i| assert f.contains?("k#{i}"), "k#{i}" }
    never = Array.new(4000) { |i| "absent-#{i}" }.count { |k| f.contains?(k) }
    assert_operator never, :<=, 80, "about 1% or less expected (the model is conservative)"
    assert_operator f.fpr_now, :<=, 0.0101
  end

  def test_blocked_add_if_absent_and_clear
    f = AB.new(4, 12, 1024, seed: 3, flags: AB::BLOCKED)
    assert_equal false, f.add_if_absent("dedup")
    assert_equal true, f.add_if_absent("dedup")
    assert_equal 1, f.inserts, "a present key is not inserted again"
    f.add("\x00a\x00".b)
    assert f.contains?("\x00a\x00".b)
    refute f.contains?("\x00a".b)
    before = [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed, f.slices, f.bits]
    assert_same f, f.clear
    assert f.blocked?
    assert_equal [0, 0.0], [f.inserts, f.fpr_now]
    refute f.contains?("dedup")
    assert_equal before, [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed, f.slices, f.bits]
  end

  def test_choose_blocked_sizes_for_target_blocked
    bits_per_element = [0.2, 0.1, 0.01, 0.001].map do |rate|
      k, l, fill = AB.choose(rate, flags: AB::BLOCKED)
      assert_operator k, :>=, 1
      assert_operator l, :>=, 1
      assert_includes [16, 32], k + l
      assert_kind_of Float, fill
      assert(fill.positive? && fill < 1, fill.to_s)
      assert_equal [k, l, fill], AB.choose(rate, flags: AB::BLOCKED)
      # the factory uses the same triple: g = ceil(capacity / l), slices of
      # k g / -ln(1 - fill) bits rounded up to a multiple of 32
      f = AB.for_target(10_000, rate, seed: 1, flags: AB::BLOCKED)
      g = (10_000 + l - 1) / l
      bits = (k * g / -Math.log(1 - fill)).ceil
      assert_equal [true, k, l, g], [f.blocked?, f.k, f.l, f.generation]
      assert_equal (bits / 32.0).ceil * 32, f.slice_bits
      assert_operator f.capacity, :>=, 10_000
      f.bits_per_element
    end
    assert_equal bits_per_element.sort, bits_per_element, "a stricter target costs memory"
    assert_equal AB.choose(0.125, flags: AB::BLOCKED), AB.choose(1r / 8, flags: AB::BLOCKED), "any Numeric rate"
  end

  # The blob of the blocked layout: kind 2, as the classic one, with the
  # blocked flag; what is read from it, copies and Marshal keep the layout.
  def test_blocked_serialize_round_trip
    blob = AB.for_target(300, 0.01, seed: 1234, flags: AB::BLOCKED).add("k").serialize
    assert_equal 2, blob.byteslice(6, 2).unpack1("S<"), "kind 2, as the classic layout"
    refute_equal 0, blob.byteslice(8, 4).unpack1("L<"), "the blocked flag"
    assert_equal 0, AB.new(3, 4, 200).serialize.byteslice(8, 4).unpack1("L<"), "no flag for the classic layout"
    f = AB.deserialize(blob)
    assert f.blocked?
    [f.dup, f.clone, Marshal.load(Marshal.dump(f))].each { |copy| assert copy.blocked? }
  end

  # ---- serialization, copies, life cycle -------------------------------------

  # Both layouts: the shape, the answers, the window and the generation
  # counter survive the round trip.
  def test_serialize_round_trip
    [AB.for_target(300, 0.01, seed: 1234), AB.for_target(300, 0.01, seed: 1234, flags: AB::BLOCKED)].each do |f|
      keys = Array.new(1000) { |i| "key #{i}\x00#{i * 3}" }
      keys.each { |k| f.add(k) }
      _blob, g = assert_round_trip(f)
      assert_equal [f.blocked?, f.stats, f.inspect], [g.blocked?, g.stats, g.inspect]
      probes = keys + Array.new(2000) { |i| "absent-#{i}" }
      assert_equal probes.map { |k| f.contains?(k) }, probes.map { |k| g.contains?(k) }
      assert(keys.last(f.capacity).all? { |k| g.contains?(k) }, "the window survives the round trip")
      # both go on alike: the generation counter travels too
      500.times { |i| [f, g].each { |x| x.add("more-#{i}") } }
      assert_equal f.serialize, g.serialize
    end
  end

  def test_dup_is_an_independent_copy
    f = AB.new(3, 4, 512, seed: 8)
    f.add("a")
    c = f.dup
    c.add("b")
    assert c.contains?("a")
    refute f.contains?("b")
    f.close
    assert c.contains?("b"), "closing the original leaves the copy alive"
    assert c.clone.contains?("a")
  end

  def test_marshal
    f = AB.new(3, 4, 512, seed: 8)
    f.add("m")
    g = Marshal.load(Marshal.dump(f))
    assert_instance_of AB, g
    assert g.contains?("m")
    assert_equal f.serialize, g.serialize
  end

  def test_close
    f = AB.new(3, 4, 512, seed: 8).add("k")
    assert_closes(f, add: ["a"], contains?: ["k"], include?: ["k"], contains: ["k"], add_if_absent: ["a"],
                     clear: [], blocked?: [], add_batch: [["a"]], contains_batch: [["k"]], add_if_absent_batch: [["a"]])
  end

  def test_garbage_collector_frees_filters
    # Filters dropped without close are freed by the GC; closed ones too.
    # (ASan, in the sanitized build, checks these frees.)
    200.times do |i|
      f = (i % 10).nonzero? ? AB.new(4, 8, 4096, seed: i) : AB.for_target(1000, 0.01, seed: i)
      f.add("x")
      f.close if (i % 4).zero?
      AB.deserialize(f.serialize) if i.odd?
    end
    GC.start
    GC.start
    assert AB.new(2, 2, 64).add("k").contains?("k")
  end

  def test_garbage_collector_frees_filters_of_the_factories
    # 2 MiB filters from deserialize and for_target, dropped without close:
    # 800 MiB if the objects of the factories did not own their handles.
    # (Under ASan up to 256 MiB of freed memory stays in its quarantine.)
    blob = AB.new(1, 1, 1 << 23).add("x").serialize # 2 slices of 1 MiB
    growth = rss_growth_mib(400) do |i|
      # (for_target is slow in a debug build: it searches every k)
      f = (i % 40) == 5 ? AB.for_target(800_000, 0.01) : AB.deserialize(blob)
      assert f.contains?("x") if i.zero?
    end
    assert_operator growth, :<, 450, "memory of dropped filters came back"
  end
end
