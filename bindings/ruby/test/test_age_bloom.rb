# frozen_string_literal: true

# Semantics of TemporalFilters::AgeBloom (the count-window age-partitioned
# Bloom filter) through the Ruby binding: add/contains, the window of
# capacity = l * generation inserts, add_if_absent, clear, stats and info,
# the sizing helpers, binary and string keys, serialization, close, copies.
# The error paths are in test_bloom_errors.rb.

require_relative "helper"

class TestAgeBloom < Minitest::Test
  AB = TemporalFilters::AgeBloom

  def test_shape_and_info
    f = AB.new(3, 4, 200, 42)
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
    f = AB.new(4, 8, 1024, 1)
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
    f = AB.for_target(0.01, 500, 3)
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
      f = AB.new(k, l, bits, 9)
      g = [(bits * Math.log(2) / k).floor, 1].max
      assert_equal [g, l * g], [f.generation, f.capacity], [k, l, bits].inspect
      f.add("first")
      (f.capacity - 1).times { |i| f.add("other-#{i}") }
      assert f.contains?("first"), "a key added l * g - 1 inserts before the last is in the window"
      assert_equal f.capacity, f.inserts
    end
  end

  def test_add_if_absent
    f = AB.new(3, 4, 512, 5)
    assert_equal false, f.add_if_absent("dedup")
    assert_equal 1, f.inserts
    assert_equal true, f.add_if_absent("dedup")
    assert_equal 1, f.inserts, "a present key is not inserted again"
    assert f.contains?("dedup")
    assert_equal false, f.add_if_absent("other")
    assert_equal 2, f.inserts
  end

  def test_add_if_absent_equals_contains_then_add
    a = AB.new(3, 4, 256, 7)
    b = AB.new(3, 4, 256, 7)
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
    f = AB.new(3, 4, 200, 42)
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
    f = AB.new(5, 10, 1000, 3)
    s = f.stats
    assert_instance_of AB::Stats, s
    assert_equal [15, 15_000, 0, 0.0], [s.slices, s.bits, s.inserts, s.fpr_now]
    assert_in_delta 15_000.0 / f.capacity, s.bits_per_element, 1e-12
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

  # ---- sizing -------------------------------------------------------------

  def test_choose_matches_the_c_library
    assert_equal [12, 87], AB.choose(0.01)
    rate = AB.false_positive_rate(12, 87)
    assert_operator rate, :<=, 0.01
    assert_operator rate, :>, 0.001
    k, l = AB.choose(0.001)
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
    f = AB.for_target(0.01, 1000, 77)
    assert_equal [12, 87, 77], [f.k, f.l, f.seed]
    assert_equal (1000 + 86) / 87, f.generation, "g = ceil(capacity / l)"
    assert_operator f.capacity, :>=, 1000
    assert_equal (12 * f.generation / Math.log(2)).ceil, f.slice_bits
    assert_equal 0, AB.for_target(0.1, 10).seed
  end

  # ---- keys ---------------------------------------------------------------

  def test_binary_keys_with_nul_bytes
    f = AB.new(4, 4, 4096, 2)
    ["\x00a\x00".b, "\x00b\x00".b, "", "\xff\xfe\x00\x80".b].each { |k| f.add(k) }
    ["\x00a\x00".b, "\x00b\x00".b, "", "\xff\xfe\x00\x80".b].each { |k| assert f.contains?(k), k.inspect }
    refute f.contains?("\x00".b), "a NUL prefix is not the key"
    refute f.contains?("\x00a".b)
  end

  def test_keys_are_bytes_whatever_the_encoding
    f = AB.new(4, 4, 4096, 2)
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

  # ---- serialization, copies, life cycle -------------------------------------

  def test_serialize_round_trip
    f = AB.for_target(0.01, 300, 1234)
    keys = Array.new(500) { |i| "key #{i}\x00#{i * 3}" }
    keys.each { |k| f.add(k) }
    blob = f.serialize
    assert_equal Encoding::BINARY, blob.encoding
    g = AB.deserialize(blob)
    assert_instance_of AB, g
    assert_equal [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed, f.inserts],
                 [g.k, g.l, g.slice_bits, g.generation, g.capacity, g.seed, g.inserts]
    assert_equal keys.map { |k| f.contains?(k) }, keys.map { |k| g.contains?(k) }
    assert_equal f.fpr_now, g.fpr_now
    assert_equal blob, g.serialize
    assert_equal blob, AB.deserialize(blob.dup.force_encoding("UTF-8")).serialize
    # both go on alike: the generation counter travels too
    100.times do |i|
      f.add("more-#{i}")
      g.add("more-#{i}")
    end
    assert_equal f.serialize, g.serialize
  end

  def test_dup_is_an_independent_copy
    f = AB.new(3, 4, 512, 8)
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
    f = AB.new(3, 4, 512, 8)
    f.add("m")
    g = Marshal.load(Marshal.dump(f))
    assert_instance_of AB, g
    assert g.contains?("m")
    assert_equal f.serialize, g.serialize
  end

  def test_close
    f = AB.new(3, 4, 512, 8)
    refute f.closed?
    assert_nil f.close
    assert f.closed?
    f.close # idempotent
    assert_equal "#<TemporalFilters::AgeBloom closed>", f.inspect
  end

  def test_garbage_collector_frees_filters
    # Filters dropped without close are freed by the GC; closed ones too.
    # (ASan, in the sanitized build, checks these frees.)
    200.times do |i|
      f = (i % 10).nonzero? ? AB.new(4, 8, 4096, i) : AB.for_target(0.01, 1000, i)
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
    GC.start
    base = TestHelper.rss_mib
    400.times do |i|
      # (for_target is slow in a debug build: it searches every k)
      f = (i % 40) == 5 ? AB.for_target(0.01, 800_000) : AB.deserialize(blob)
      assert f.contains?("x") if i.zero?
      GC.start if i % 10 == 9
    end
    GC.start
    assert_operator TestHelper.rss_mib - base, :<, 450, "memory of dropped filters came back"
  end
end
