# frozen_string_literal: true

# TemporalFilters::RotatingCuckoo: the promise against an exact set, the
# keyword options, bad input, the batches, serialization and the life cycle
# (the golden blobs are in test_golden.rb).

require_relative "helper"

class TestRotatingCuckoo < Minitest::Test
  # Against an exact set over a stream with repeats, the tables rotating by
  # fill many times within the memory cap: a key never added is never
  # reported present, add_if_absent answers as the set does, and while no
  # table was dropped every key added is present.
  def test_no_false_positives_against_an_exact_set
    f = RC.new(table_slots: 256, seed: 5)
    exact = {}
    rng = Random.new(11)
    now = 1
    20_000.times do |i|
      key = "k-#{rng.rand(12_000)}"
      now += rng.rand(2)
      assert_equal exact.key?(key), f.add_if_absent(key, now), key
      exact[key] = true
      refute f.contains?("absent-#{i}", now), "a key never added is present"
    end
    s = f.stats(now)
    assert_equal [0, 0, exact.size], [s.forgotten_memory, s.forgotten_age, s.inserts]
    assert_operator s.tables, :>, 1
    assert_equal s.tables, s.fill_rotations + s.kick_rotations + 1
    exact.each_key { |k| assert f.contains?(k, now), k }
  end

  def test_defaults_and_info
    f = RC.new
    assert_frozen_struct(RC::Info, { table_slots: 16_384, max_memory: 64 << 20, ttl: 0, max_occupancy: 0.92,
                                     slots_per_bucket: 4, max_kicks: 500, max_tables: 64, seed: 0, flags: 0,
                                     ways: 2 }, f.info, f)
    refute f.three_way?
    assert_equal "#<TemporalFilters::RotatingCuckoo table_slots=16384 slots_per_bucket=4 ways=2 ttl=0 seed=0>",
                 f.inspect
    g = RC.new(table_slots: 1024, max_memory: 1 << 20, ttl: 500, max_occupancy: 0.5, slots_per_bucket: 8,
               max_kicks: 100, max_tables: 7, seed: MAX_U32, flags: RC::THREE_WAY)
    assert_equal [1024, 1 << 20, 500, 0.5, 8, 100, 7, MAX_U32, RC::THREE_WAY, 3], g.info.to_a
    assert g.three_way?
    s = g.stats(1)
    assert_equal [1, 1, 1024, 0], [s.tables, s.live_tables, s.slots, s.items]
    assert_equal g.memory, s.memory
    t = g.table(0, 1)
    assert_equal [1024, 0, 0.0, 0, false], [t.slots, t.items, t.load, t.last, t.expired]
    assert_predicate t, :frozen?
    # the seed's one-slot layout
    one = RC.new(table_slots: 16, slots_per_bucket: 1)
    assert_in_delta 0.45, one.max_occupancy, 0.0
    100.times { |i| one.add("k#{i}", 1 + i) }
    100.times { |i| assert one.contains?("k#{i}", 100) }
  end

  def test_de_duplication_remove_and_re_add
    f = RC.new
    refute f.add_if_absent("e1", 10)
    assert f.add_if_absent("e1", 11)
    refute f.add_if_absent("\x00\x01\x00".b, 12)
    assert f.add_if_absent("\x00\x01\x00".b, 13)
    refute f.add_if_absent("", 14), "the empty key is a key"
    assert f.add_if_absent("", 15)
    refute f.remove("never", 20), "removing a key never added is a no-op that says so"
    assert_same f, f.add("k", 20)
    assert f.remove("k", 21)
    refute f.contains?("k", 21)
    refute f.remove("k", 21)
    refute f.add_if_absent("k", 22)
    assert f.contains("k", 22)
    s = f.stats(22)
    assert_equal [5, 1, 4], [s.inserts, s.removes, s.items]
    assert_same f, f.clear
    refute f.contains?("k", 22)
    assert_equal 0, f.stats(22).inserts
  end

  def test_batches_equal_single_calls
    f = RC.new(table_slots: 64, seed: 3)
    g = RC.new(table_slots: 64, seed: 3)
    keys = Array.new(300) { |i| "b-#{i % 200}" } # repeats within the batch
    got = f.add_if_absent_batch(keys, 100)
    assert_equal keys.map { |k| g.add_if_absent(k, 100) }, got
    assert_equal Array.new(300) { |i| i >= 200 }, got
    assert_equal g.serialize, f.serialize
    assert_equal [true, false, true, false], f.contains_batch(%w[b-0 nope b-199 b-200], 100)
    binary = ["\x00".b, "\x00\x00".b, ""]
    assert_equal [false] * 3, f.add_if_absent_batch(binary, 101)
    assert_equal [true] * 3, f.contains_batch(binary, 101)
    assert_equal [], f.contains_batch([], 101)
    assert_equal [], f.add_if_absent_batch([], 101)
  end

  # A key added at t is present until t + ttl, then its table goes
  # (counted); a clock going backwards is clamped.
  def test_ttl
    f = RC.new(table_slots: 64, ttl: 100)
    f.add("old", 1000)
    f.add("x", 900) # clamped to 1000
    assert f.contains?("old", 1100)
    assert f.contains?("x", 1100)
    refute f.contains?("old", 1101)
    refute f.contains?("x", 1101)
    f.add("new", 1200)
    s = f.stats(1200)
    assert_equal [2, 0], [s.forgotten_age, s.forgotten_memory]
    assert f.contains?("new", 1300)
  end

  def test_table_limit_forgets_the_oldest_counted
    f = RC.new(table_slots: 64, max_tables: 2)
    1000.times { |i| refute f.add_if_absent("m-#{i}", 1 + i) }
    s = f.stats(1000)
    assert_equal 2, s.tables
    assert_operator s.forgotten_memory, :>, 0
    assert_equal 1000 - s.forgotten_memory, s.items
  end

  # ---- bad input ----------------------------------------------------------

  def test_bad_options
    { { table_slots: 0 } => :INVALID_ARGUMENT, { table_slots: 1000 } => :INVALID_ARGUMENT,
      { table_slots: 4 } => :INVALID_ARGUMENT, { table_slots: 2**37 } => :TOO_LARGE,
      { table_slots: 1 << 20, max_memory: 1 << 20 } => :TOO_LARGE, { slots_per_bucket: 3 } => :INVALID_ARGUMENT,
      { max_occupancy: 1.5 } => :INVALID_ARGUMENT, { max_occupancy: Float::NAN } => :INVALID_ARGUMENT,
      { max_kicks: 0 } => :INVALID_ARGUMENT, { max_kicks: RC::MAX_KICKS + 1 } => :INVALID_ARGUMENT,
      { max_tables: 0 } => :INVALID_ARGUMENT, { max_tables: RC::MAX_TABLES + 1 } => :INVALID_ARGUMENT,
      { flags: 2 } => :INVALID_ARGUMENT, { seed: -1 } => :INVALID_ARGUMENT, { seed: 2**32 } => :INVALID_ARGUMENT,
      { ttl: -1 } => :INVALID_ARGUMENT }.each do |options, status|
      assert_tf_error(status, nil, options.inspect) { RC.new(**options) }
    end
    assert_raises(ArgumentError) { RC.new(size: 5) }
    assert_raises(TypeError) { RC.new(table_slots: "64") }
  end

  def test_bad_input_changes_nothing
    f = RC.new(table_slots: 64)
    f.add("k", 5)
    before = f.serialize
    assert_refuses_bad_times(add: ->(t) { f.add("k2", t) }, contains?: ->(t) { f.contains?("k", t) },
                             remove: ->(t) { f.remove("k", t) }, add_if_absent: ->(t) { f.add_if_absent("k2", t) },
                             contains_batch: ->(t) { f.contains_batch(["k"], t) },
                             add_if_absent_batch: ->(t) { f.add_if_absent_batch(["k2"], t) },
                             stats: ->(t) { f.stats(t) }, table: ->(t) { f.table(0, t) })
    assert_tf_error(:INVALID_ARGUMENT) { f.table(1, 5) }
    assert_raises(TypeError) { f.add(nil, 5) }
    assert_raises(TypeError) { f.add_if_absent(5, 5) }
    assert_raises(TypeError) { f.contains_batch("k", 5) }
    assert_raises(TypeError) { f.add_if_absent_batch(["a", nil], 5) }
    assert_equal before, f.serialize
    assert f.contains?("k", 5)
    assert_failures_do_not_stick(-> { f.add("k", 0) }, -> { RC.new(table_slots: 0) }) do
      assert f.contains?("k", 5)
    end
  end

  # ---- serialization, copies, life cycle ----------------------------------

  def test_serialize_round_trip
    f = RC.new(table_slots: 32, ttl: 5000, seed: 123)
    keys = Array.new(500) { |i| "key #{i}\x00#{i * 3}" }
    keys.each_with_index { |k, i| f.add_if_absent(k, 1 + i) }
    _blob, g = assert_round_trip(f)
    assert_equal f.stats(500), g.stats(500)
    assert_equal Array.new(f.stats(500).tables) { |i| f.table(i, 500) },
                 Array.new(g.stats(500).tables) { |i| g.table(i, 500) }
    assert_equal keys.map { |k| f.contains?(k, 500) }, keys.map { |k| g.contains?(k, 500) }
    f.add("next", 600)
    g.add("next", 600)
    assert_equal f.serialize, g.serialize
  end

  def test_bad_blobs
    f = RC.new(table_slots: 64, seed: 9)
    f.add("k", 5)
    blob = f.serialize
    assert_native_buffer_checks(f)
    assert_refuses_truncated(RC, blob, step: 13)
    assert_refuses_broken_envelope(RC, blob, flip_at: H::OFF_PAYLOAD_LEN + 40)
    assert_tf_error(:TOO_LARGE) { RC.deserialize(blob, max_memory: 1) }
    assert RC.deserialize(blob, max_memory: f.memory).contains?("k", 5)
  end

  def test_close
    f = RC.new.add("k", 5)
    assert_closes(f, add: ["a", 1], contains?: ["k", 5], contains: ["k", 5], remove: ["k", 5],
                     add_if_absent: ["a", 1], contains_batch: [["k"], 5], add_if_absent_batch: [["a"], 5],
                     clear: [], stats: [1], table: [0, 1], three_way?: [])
  end
end
