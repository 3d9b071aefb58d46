# frozen_string_literal: true

# Semantics of TemporalFilters::TimeBloom (the time-limited Bloom filter)
# through the Ruby binding: add/contains at a time now, the span, no false
# negatives over a stream with rate changes, bursts, idle gaps and a clock
# going backwards, add_if_absent, clear, stats(now), slice_bits, info,
# binary and string keys, serialization, close, copies. The error paths are
# in test_bloom_errors.rb.

require_relative "helper"

class TestTimeBloom < Minitest::Test
  def test_shape_and_info
    f = TB.new(3, 4, 128, 1000, seed: 42)
    assert_equal [3, 4, 1000, 42], [f.k, f.l, f.span, f.seed]
    assert_equal [7, 7 * 128, 0], [f.slices, f.bits, f.inserts]
    assert_equal [128] * 7, Array.new(7) { |i| f.slice_bits(i) }
    assert_equal 0.0, f.bits_per_element(1), "no insert within the span"
    assert_equal 0.0, f.fpr_now(1)
    assert_operator f.memory, :>=, 7 * 2 * 8, "7 slices of 2 words"
    assert_operator f.memory, :<, 7 * 2 * 8 + 4096
    assert_equal 0, TB.new(3, 4, 128, 1000).seed, "the seed defaults to 0"
    assert_equal 1, TB.new(1, 1, 64, 1).span, "span may equal l"
    assert_match(/k=3 l=4 span=1000 slices=7 seed=42/, f.inspect)
  end

  def test_info_is_a_frozen_struct_and_seed_a_keyword
    f = TB.new(3, 4, 128, 1000, seed: 42)
    assert_frozen_struct(TB::Info, { k: 3, l: 4, span: 1000, seed: 42, flags: 0 }, f.info, f)
    assert_equal 7, TB.for_target(100, 0.1, 1000, seed: 7).seed
    assert_raises(ArgumentError) { TB.new(3, 4, 128, 1000, 42) }
    assert_raises(ArgumentError) { TB.for_target(100, 0.1, 1000, 7) }
  end

  def test_for_target_uses_choose
    f = TB.for_target(10_000, 0.01, 60_000, seed: 5)
    assert_equal [*AB.choose(0.01).first(2), 60_000, 5], [f.k, f.l, f.span, f.seed]
    assert_equal f.k + f.l, f.slices
    # slices of ceil(k * ceil(C / l) / ln 2) bits
    assert_equal (10 * (10_000 / 24.0).ceil / Math.log(2)).ceil, f.slice_bits(0)
    assert_equal 0, TB.for_target(10, 0.1, 1000).seed
    # MIN_MEMORY: AgeBloom's memory-minimal pair; the flag is not recorded
    f = TB.for_target(10_000, 0.01, 60_000, seed: 5, flags: TB::MIN_MEMORY)
    assert_equal [12, 87, 0], [f.k, f.l, f.flags]
    assert_equal AB.choose(0.01, flags: AB::MIN_MEMORY).first(2), [f.k, f.l]
    assert_equal (12 * (10_000 / 87.0).ceil / Math.log(2)).ceil, f.slice_bits(0)
  end

  # The batches give the answers and the filter of the single calls on the
  # same keys at the same times, across shifts and retired slices; a bad
  # time or key list changes nothing.
  def test_batches_equal_single_calls
    f = TB.for_target(200, 0.01, 1000, seed: 3)
    g = TB.for_target(200, 0.01, 1000, seed: 3)
    probe = Array.new(400) { |i| i.even? ? "t-#{i}" : "absent-#{i}" }
    (1...5000).step(97) do |now|
      keys = Array.new(150) { |i| "t-#{(now + 7 * i) % 400}" } # repeats within and across batches
      assert_equal keys.map { |k| g.add_if_absent(k, now) }, f.add_if_absent_batch(keys, now), "at #{now}"
      assert_same f, f.add_batch(keys, now + 1)
      keys.each { |k| g.add(k, now + 1) }
      assert_equal probe.map { |k| g.contains?(k, now + 2) }, f.contains_batch(probe, now + 2), "at #{now}"
      assert_equal g.serialize, f.serialize
    end
    before = f.serialize
    assert_tf_error(:INVALID_ARGUMENT) { f.add_batch(["z"], 0) }
    assert_tf_error(:INVALID_ARGUMENT) { f.contains_batch(["z"], 0) }
    assert_tf_error(:INVALID_ARGUMENT) { f.add_if_absent_batch(["z"], 0) }
    assert_tf_error(:INVALID_ARGUMENT) { f.add_batch(["z"], -1) }
    assert_raises(TypeError) { f.add_if_absent_batch("z", 5000) }
    assert_raises(TypeError) { f.add_batch(["a", nil], 5000) }
    assert_raises(ArgumentError) { f.contains_batch(["z"]) } # a time is needed
    assert_equal before, f.serialize
    binary = ["\x00".b, "\x00\x00".b, ""]
    f.add_batch(binary, 6000)
    assert_equal [true] * 3, f.contains_batch(binary, 6000)
    assert_equal [true] * 3, f.add_if_absent_batch(binary, 6000)
    assert_equal [], f.contains_batch([], 6000)
  end

  def test_add_and_contains
    f = TB.new(4, 8, 1024, 100, seed: 1)
    refute f.contains?("a", 10)
    assert_same f, f.add("a", 10)
    assert f.contains?("a", 10)
    assert f.contains("a", 50), "the cross-language name"
    refute f.contains?("b", 10)
    assert_equal 1, f.inserts
  end

  def test_contained_until_t_plus_span
    f = TB.new(3, 4, 256, 1000, seed: 7)
    f.add("k", 5000)
    [5000, 5500, 5999, 6000].each { |now| assert f.contains?("k", now), "at #{now}" }
    refute f.contains?("k", 6001), "older than the span (and alone: no false positive)"
    refute f.contains?("k", MAX_U64)
    assert f.contains?("k", 6000), "contains? changes nothing"
  end

  def test_a_clock_going_backwards_is_clamped
    f = TB.new(3, 4, 256, 1000, seed: 7)
    f.add("now", 2000)
    f.add("late", 1500) # recorded at 2000, the highest time seen
    assert f.contains?("late", 3000), "clamped: within the span of 2000"
    refute f.contains?("late", 3001)
    assert f.contains?("now", 1), "a query in the past sees what was added"
  end

  def test_no_false_negatives_over_a_stream
    span = 1000
    f = TB.for_target(300, 0.01, span, seed: 11)
    initial_bits = f.bits
    rng = Random.new(2024)
    added = [] # [key, the time the filter recorded (the clock clamped)]
    high = 0
    clock = 1
    sweep = lambda do |now|
      added.reverse_each do |key, t|
        break if t < now - span

        assert f.contains?(key, now), "#{key} added at #{t}, absent at #{now}"
      end
    end
    insert = lambda do |now|
      key = "s-#{added.size}"
      f.add(key, now)
      high = [high, now].max
      added << [key, high]
      sweep.call(high) if (added.size % 100).zero?
    end
    # steady, about 0.3 per unit
    900.times { insert.call(clock += rng.rand(1..6)) }
    # ten times faster, with some requests arriving late (clock backwards)
    1200.times { insert.call((clock += rng.rand(0..1)) - rng.rand(0..30)) }
    # a burst of 400 at one timestamp
    400.times { insert.call(clock) }
    burst_bits = f.bits
    # idle for half a span, then for more than a span
    clock += span / 2
    300.times { insert.call(clock += rng.rand(1..4)) }
    clock += 3 * span
    800.times { insert.call(clock += rng.rand(1..6)) }
    assert_operator added.size, :>=, 3000
    assert_equal added.size, f.inserts
    sweep.call(high)
    sweep.call(high + span) # the last keys at their boundary
    assert_operator burst_bits, :>, initial_bits, "the slices grew with the rate"
    assert_operator f.slices, :>=, f.k + f.l
    # keys never added: false positives near the target at a steady rate
    probes = Array.new(2000) { |i| "never-#{i}" }
    false_positives = probes.count { |k| f.contains?(k, high) }
    assert_operator false_positives, :<=, 100, "about 1% expected"
    # everything before the idle gap is gone
    old = added.first(900).map(&:first)
    assert_operator old.count { |k| f.contains?(k, high) }, :<=, 50
  end

  def test_add_if_absent
    f = TB.new(3, 4, 512, 1000, seed: 5)
    assert_equal false, f.add_if_absent("dedup", 100)
    assert_equal 1, f.inserts
    assert_equal true, f.add_if_absent("dedup", 600)
    assert_equal 1, f.inserts, "a present key is not inserted again"
    assert_equal true, f.add_if_absent("dedup", 1100)
    assert_equal false, f.add_if_absent("dedup", 1101), "expired: added again"
    assert_equal 2, f.inserts
    assert f.contains?("dedup", 2101)
  end

  def test_add_if_absent_equals_contains_then_add
    a = TB.new(3, 4, 256, 500, seed: 7)
    b = TB.new(3, 4, 256, 500, seed: 7)
    rng = Random.new(6)
    now = 1
    800.times do
      now += rng.rand(0..3)
      key = "k#{rng.rand(300)}"
      was = b.contains?(key, now)
      b.add(key, now) unless was
      assert_equal was, a.add_if_absent(key, now), key
    end
    assert_equal b.serialize, a.serialize
  end

  def test_clear
    f = TB.new(3, 4, 256, 1000, seed: 42)
    100.times { |i| f.add("c#{i}", 10 + i) }
    assert_operator f.fpr_now(200), :>, 0.0
    assert_same f, f.clear
    assert_equal 0, f.inserts
    assert_equal 0.0, f.fpr_now(200)
    assert(100.times.none? { |i| f.contains?("c#{i}", 200) }, "every key forgotten")
    assert_equal [3, 4, 1000, 42], [f.k, f.l, f.span, f.seed]
    assert f.add("c1", 300).contains?("c1", 300)
  end

  def test_stats
    f = TB.new(4, 6, 1000, 100, seed: 3)
    s = f.stats(1)
    assert_frozen_struct(TB::Stats, { slices: 10, bits: 10_000, bits_per_element: 0.0, inserts: 0, fpr_now: 0.0 }, s)
    50.times { |i| f.add("x#{i}", 10) }
    s = f.stats(10)
    assert_equal [10, 10_000, 50], [s.slices, s.bits, s.inserts]
    assert_in_delta 10_000.0 / 50, s.bits_per_element, 1e-9, "bits / inserts within the span"
    assert_operator s.fpr_now, :>, 0.0
    assert_equal s, f.stats(10), "a Struct: equal by value"
    later = f.stats(111)
    assert_equal 0.0, later.bits_per_element, "nothing within the span any more"
    assert_equal 0.0, later.fpr_now, "slices older than the span count as empty"
    assert_equal 50, later.inserts
    assert_equal [f.bits_per_element(10), f.fpr_now(10)], [s.bits_per_element, s.fpr_now]
  end

  def test_slices_follow_the_rate
    f = TB.new(2, 3, 64, 100, seed: 1)
    500.times { |i| f.add("b#{i}", 50) } # a burst far beyond 64-bit slices
    assert_operator f.slices, :>=, 5
    sizes = Array.new(f.slices) { |i| f.slice_bits(i) }
    assert(sizes.all? { |m| m >= 64 })
    assert_operator sizes.first, :>, 64, "the newest slice grew with the burst"
    assert_equal f.bits, sizes.sum
    assert(500.times.all? { |i| f.contains?("b#{i}", 150) }, "no false negative in a burst")
  end

  # ---- keys ---------------------------------------------------------------

  def test_binary_and_string_keys
    f = TB.new(4, 4, 4096, 1000, seed: 2)
    keys = ["\x00a\x00".b, "\x00b\x00".b, "", "\xff\xfe\x00\x80".b, "été"]
    keys.each { |k| f.add(k, 7) }
    keys.each { |k| assert f.contains?(k, 7), k.inspect }
    refute f.contains?("\x00".b, 7), "a NUL prefix is not the key"
    assert f.contains?("été".b, 7), "the same bytes in another encoding"
    refute f.contains?("été".encode("ISO-8859-1"), 7), "other bytes, other key"
  end

  def test_timestamps_span_the_whole_uint64_range
    f = TB.new(3, 4, 256, MAX_U64, seed: 9)
    f.add("end", MAX_U64)
    assert f.contains?("end", MAX_U64)
    assert f.contains?("end", 1)
    g = TB.new(3, 4, 256, 1000, seed: 9)
    g.add("a", 2**63)
    assert g.contains?("a", 2**63 + 1000)
    refute g.contains?("a", 2**63 + 1001)
  end

  # ---- serialization, copies, life cycle -------------------------------------

  def test_serialize_round_trip
    f = TB.for_target(100, 0.01, 500, seed: 1234)
    keys = Array.new(600) { |i| "key #{i}\x00#{i * 3}" }
    keys.each_with_index { |k, i| f.add(k, 1 + i) }
    _blob, g = assert_round_trip(f)
    assert_equal Array.new(f.slices) { |i| f.slice_bits(i) }, Array.new(g.slices) { |i| g.slice_bits(i) }
    assert_equal keys.map { |k| f.contains?(k, 600) }, keys.map { |k| g.contains?(k, 600) }
    assert_equal f.stats(600), g.stats(600)
    # both go on alike: times, counters and the measured rate travel too
    200.times do |i|
      f.add("more-#{i}", 600 + 3 * i)
      g.add("more-#{i}", 600 + 3 * i)
    end
    assert_equal f.serialize, g.serialize
  end

  def test_dup_and_marshal
    f = TB.new(3, 4, 512, 100, seed: 8)
    f.add("a", 5)
    c = f.dup
    c.add("b", 6)
    assert c.contains?("a", 6)
    refute f.contains?("b", 6)
    m = Marshal.load(Marshal.dump(c))
    assert_instance_of TB, m
    assert_equal c.serialize, m.serialize
    f.close
    assert c.clone.contains?("b", 6), "closing the original leaves the copies alive"
  end

  def test_close
    f = TB.new(3, 4, 512, 100, seed: 8).add("k", 5)
    assert_closes(f, add: ["a", 1], contains?: ["k", 5], contains: ["k", 5], add_if_absent: ["a", 1], clear: [],
                     stats: [1], slices: [], bits: [], bits_per_element: [1], inserts: [], fpr_now: [1],
                     slice_bits: [0], add_batch: [["a"], 1], contains_batch: [["k"], 5],
                     add_if_absent_batch: [["a"], 1])
  end

  def test_garbage_collector_frees_filters
    200.times do |i|
      f = (i % 10).nonzero? ? TB.new(4, 8, 4096, 100, seed: i) : TB.for_target(1000, 0.01, 1000, seed: i)
      50.times { |j| f.add("x#{j}", 1 + j * 10) } # shifts allocate slices
      f.close if (i % 4).zero?
      TB.deserialize(f.serialize) if i.odd?
    end
    GC.start
    GC.start
    assert TB.new(2, 2, 64, 10).add("k", 1).contains?("k", 2)
  end

  def test_garbage_collector_frees_filters_of_the_factories
    # 2 MiB filters from deserialize and for_target, dropped without close:
    # 800 MiB if the objects of the factories did not own their handles.
    # (Under ASan up to 256 MiB of freed memory stays in its quarantine.)
    blob = TB.new(1, 1, 1 << 23, 100).add("x", 5).serialize # 2 slices of 1 MiB
    growth = rss_growth_mib(400) do |i|
      # (for_target is slow in a debug build: it searches every k)
      f = (i % 40) == 5 ? TB.for_target(800_000, 0.01, 1000) : TB.deserialize(blob)
      assert f.contains?("x", 5) if i.zero?
    end
    assert_operator growth, :<, 450, "memory of dropped filters came back"
  end
end
