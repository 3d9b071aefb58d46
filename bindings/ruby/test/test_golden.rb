# frozen_string_literal: true

# The cross-language check: the golden blobs of tests/data (written by the C
# library: recency sketches, age_bloom_v1, age_bloom_blocked_v1,
# time_bloom_v1, rate_limiter_v1 and rate_limiter_exact_v1) read back with
# every expected answer, and the same structures rebuilt through this
# binding from the operations of tests/util/golden.h serialize to exactly those
# bytes. Every binding runs the same check, so a
# blob written by one language is read by all the others.

require_relative "helper"

class TestGolden < Minitest::Test
  GOLDEN = {
    "recency_sketch_v1" => { flags: 0, width: 256 },
    "recency_sketch_blocked_v1" => { flags: RS::BLOCKED | RS::CONCURRENT, width: 96 }
  }.freeze

  GOLDEN.each do |name, shape|
    define_method("test_read_#{name}") do
      blob, expected = H.golden(name)
      assert_equal 251, expected.size, "250 text keys and the binary key"
      assert_includes expected.map(&:first), H::GOLDEN_BINARY_KEY
      s = RS.deserialize(blob)
      assert_equal [shape[:width], 3, 42, shape[:flags]], [s.width, s.depth, s.seed, s.flags]
      expected.each { |key, answer| assert_equal answer, s.query(key), key.inspect }
      keys = expected.map(&:first)
      assert_equal expected.map(&:last), s.query_batch(keys)
      assert_equal 123_456_789, s.query(H::GOLDEN_BINARY_KEY)
      assert_equal blob, s.serialize, "read and written back unchanged"
    end

    define_method("test_write_#{name}") do
      assert_writes_golden(name, H.golden_sketch(shape[:flags]))
    end

    define_method("test_checksum_helper_on_#{name}") do
      assert_checksum_helper_agrees(H.read_golden("#{name}.tfb"))
    end
  end

  # ---- the Bloom filters (age_bloom_v1, time_bloom_v1) -------------------
  #
  # The answers and bytes come from the files only (the owner regenerates
  # them when the hashing changes); what is checked beside them holds for any
  # hash: the shape, and no false negatives for the keys certainly in the
  # window.

  # The two count-window filters: the operations of tests/util/golden.h on each
  # layout. The shape: [k, l, slice_bits, generation, capacity, seed]
  # (blocked: 200-bit slices round up to 224, generation floor(224 ln 2 / 3)).
  AGE_BLOOMS = {
    "age_bloom_v1" => { blocked: false, shape: [3, 4, 200, 46, 184, 42] },
    "age_bloom_blocked_v1" => { blocked: true, shape: [3, 4, 224, 51, 204, 42] }
  }.freeze

  AGE_BLOOMS.each do |name, golden|
    define_method("test_read_#{name}") do
      blob, expected = H.golden(name)
      assert_equal 351, expected.size, "350 text keys and the binary key"
      assert_equal Array.new(350) { |i| "key-#{i}" } + [H::GOLDEN_BINARY_KEY], expected.map(&:first)
      assert(expected.all? { |row| row.size == 2 && [0, 1].include?(row[1]) })
      assert_includes expected.map(&:last), 0, "a file of only \"present\" proves nothing"
      f = TemporalFilters::AgeBloom.deserialize(blob)
      assert_equal golden[:blocked], f.blocked?
      assert_equal golden[:shape], [f.k, f.l, f.slice_bits, f.generation, f.capacity, f.seed]
      assert_equal 7, f.slices
      assert_operator f.inserts, :>=, 301
      assert_operator f.inserts, :<=, 321
      expected.each { |key, answer| assert_equal answer == 1, f.contains?(key), key.inspect }
      # at most 321 inserts: keys (321 - capacity) .. 299 and the binary key
      # are in the window
      ((321 - f.capacity)...300).each do |i|
        assert_equal ["key-#{i}", 1], expected[i], "no false negative in the file"
      end
      assert_equal 1, expected.last[1]
      assert_equal blob, f.serialize, "read and written back unchanged"
    end

    define_method("test_write_#{name}") do
      built = H.golden_age_bloom(blocked: golden[:blocked])
      assert_equal golden[:blocked], built.blocked?
      assert_writes_golden(name, built)
    end
  end

  def test_read_time_bloom_v1
    blob, expected = H.golden("time_bloom_v1")
    keys = Array.new(260) { |i| "key-#{i}" } + [H::GOLDEN_BINARY_KEY]
    assert_equal 2 * 261, expected.size, "260 text keys and the binary key at two times"
    assert_equal keys + keys, expected.map(&:first)
    assert_equal [3000] * 261 + [3400] * 261, expected.map { |row| row[1] }
    assert(expected.all? { |row| row.size == 3 && [0, 1].include?(row[2]) })
    f = TemporalFilters::TimeBloom.deserialize(blob)
    assert_equal [3, 4, 1000, 42], [f.k, f.l, f.span, f.seed]
    assert_operator f.slices, :>=, 7
    assert_operator f.inserts, :>=, 246
    assert_operator f.inserts, :<=, 256
    expected.each do |key, now, answer|
      assert_equal answer == 1, f.contains?(key, now), "#{key.inspect} at #{now}"
    end
    # added at 1000 + 10 i (i < 200) or at 3000 (200 .. 244, clamped; the
    # binary key): present while within the span (245 .. 249 were added only
    # unless a false positive said present, so they prove nothing)
    expected.each_with_index do |(key, now, answer), row|
      i = row % 261
      next unless i == 260 || (i < 245 && (i >= 200 || 1000 + 10 * i >= now - 1000))

      assert_equal 1, answer, "#{key.inspect} at #{now}: no false negative in the file"
    end
    assert_equal blob, f.serialize, "read and written back unchanged (contains? changes nothing)"
  end

  def test_write_time_bloom_v1
    assert_writes_golden("time_bloom_v1", H.golden_time_bloom)
  end

  def test_checksum_helper_on_the_bloom_blobs
    %w[age_bloom_v1 age_bloom_blocked_v1 time_bloom_v1].each do |name|
      assert_checksum_helper_agrees(H.read_golden("#{name}.tfb"), name)
    end
  end

  def test_golden_blobs_are_of_their_kind_only
    age = H.read_golden("age_bloom_v1.tfb")
    time = H.read_golden("time_bloom_v1.tfb")
    blocked = H.read_golden("age_bloom_blocked_v1.tfb")
    assert_tf_error(:WRONG_KIND) { TemporalFilters::TimeBloom.deserialize(blocked) }
    assert_tf_error(:WRONG_KIND) { RS.deserialize(blocked) }
    assert_tf_error(:WRONG_KIND) { TemporalFilters::TimeBloom.deserialize(age) }
    assert_tf_error(:WRONG_KIND) { TemporalFilters::AgeBloom.deserialize(time) }
    assert_tf_error(:WRONG_KIND) { RS.deserialize(age) }
    assert_tf_error(:WRONG_KIND) do
      TemporalFilters::AgeBloom.deserialize(H.read_golden("recency_sketch_v1.tfb"))
    end
  end

  # ---- the rotating cuckoo filter (rotating_cuckoo_v1, _three_way_v1) ----
  #
  # The .expected files list contains?(key, now) for "key-0" .. "key-89" and
  # the binary key at now = 1800 and then 3600.

  ROTATING_CUCKOOS = { "rotating_cuckoo_v1" => 0, "rotating_cuckoo_three_way_v1" => RC::THREE_WAY }.freeze

  ROTATING_CUCKOOS.each do |name, flags|
    define_method("test_read_#{name}") do
      blob, expected = H.golden(name)
      keys = Array.new(90) { |i| "key-#{i}" } + [H::GOLDEN_BINARY_KEY]
      assert_equal keys + keys, expected.map(&:first)
      assert_equal [1800] * 91 + [3600] * 91, expected.map { |row| row[1] }
      assert(expected.all? { |row| row.size == 3 && [0, 1].include?(row[2]) })
      f = RC.deserialize(blob)
      assert_equal [16, 2000, 4, 42, flags, flags.zero? ? 2 : 3], [f.table_slots, f.ttl, f.max_tables, f.seed,
                                                                   f.flags, f.ways]
      assert_equal !flags.zero?, f.three_way?
      expected.each do |key, now, answer|
        assert_equal answer == 1, f.contains?(key, now), "#{key.inspect} at #{now}"
      end
      # whatever the hashing: removed keys absent, the last adds present,
      # keys never added absent (no false positive in the file)
      assert_equal 0, expected[0][2], "key-0 was removed"
      assert_equal 1, expected[84][2], "key-84 was added last"
      assert_equal 1, expected[90][2], "the binary key was added last"
      (85...90).each { |i| assert_equal 0, expected[i][2], "key-#{i} was never added" }
      assert_equal blob, f.serialize, "read and written back unchanged (contains? changes nothing)"
    end

    define_method("test_write_#{name}") do
      assert_writes_golden(name, H.golden_rotating_cuckoo(flags))
    end
  end

  def test_rotating_cuckoo_blobs_are_of_their_kind_only
    ROTATING_CUCKOOS.each_key do |name|
      blob = H.read_golden("#{name}.tfb")
      assert_checksum_helper_agrees(blob, name)
      [RS, AB, TB, RL].each { |klass| assert_tf_error(:WRONG_KIND) { klass.deserialize(blob) } }
    end
    assert_tf_error(:WRONG_KIND) { RC.deserialize(H.read_golden("time_bloom_v1.tfb")) }
    assert_tf_error(:WRONG_KIND) { RC.deserialize(H.read_golden("rate_limiter_v1.tfb")) }
  end

  # ---- the recency window (recency_window_v1, _approx_v1, _exact_v1,
  # _optimal_sm_v1) ------------------------------------------------------
  #
  # The .expected files list query(key) for "key-0" .. "key-109" and the
  # binary key: the recency, or 2**64 - 1 (TF_RECENCY_WINDOW_NOT_IN_WINDOW),
  # which this binding answers as nil.

  RECENCY_WINDOWS = { "recency_window_v1" => [:historical, 0.0], "recency_window_approx_v1" => [:historical, 0.01],
                      "recency_window_exact_v1" => [:exact, 0.0],
                      "recency_window_optimal_sm_v1" => [:optimal_sm, 0.0] }.freeze

  RECENCY_WINDOWS.each do |name, (mode, delta)|
    define_method("test_read_#{name}") do
      blob, expected = H.golden(name)
      assert_equal Array.new(110) { |i| "key-#{i}" } + [H::GOLDEN_BINARY_KEY], expected.map(&:first)
      assert(expected.all? { |row| row.size == 2 })
      want = expected.map { |_, r| r == 2**64 - 1 ? nil : r }
      w = RW.deserialize(blob)
      assert_equal [64, 4, 42, mode, delta], [w.window, w.inv_eps, w.seed, w.mode, w.delta]
      expected.zip(want).each { |(key, _), answer| assert_equal [answer], [w.query(key)], key.inspect }
      assert_equal want, w.query_batch(expected.map(&:first))
      # whatever the hashing: the keys inserted again lately are in the
      # window, those never inserted out of it, the binary key last
      (0...100).step(5) { |i| refute_nil want[i], "key-#{i} was inserted again lately" }
      (100...110).each { |i| assert_nil want[i], "key-#{i} was never inserted" }
      assert_equal 0, want[110]
      assert_equal 20, want[0], "key-0 in exact mode" if mode == :exact
      assert_equal blob, w.serialize, "read and written back unchanged (query changes nothing)"
    end

    define_method("test_write_#{name}") do
      assert_writes_golden(name, H.golden_recency_window(mode, delta))
      assert_writes_golden(name, H.golden_recency_window(mode, delta, batch: true))
    end
  end

  def test_recency_window_blobs_are_of_their_kind_only
    RECENCY_WINDOWS.each_key do |name|
      blob = H.read_golden("#{name}.tfb")
      assert_checksum_helper_agrees(blob, name)
      [RS, AB, TB, RL, RC].each { |klass| assert_tf_error(:WRONG_KIND) { klass.deserialize(blob) } }
    end
    assert_tf_error(:WRONG_KIND) { RW.deserialize(H.read_golden("rotating_cuckoo_v1.tfb")) }
  end

  # ---- the rate limiter (rate_limiter_v1, rate_limiter_exact_v1) ----------
  #
  # The .expected files list peek(key, now = 3000, n = 1) for "key-0" ..
  # "key-39" and the binary key: "<key hex> <allowed> <remaining> <retry_at>".

  RATE_LIMITERS = { "rate_limiter_v1" => false, "rate_limiter_exact_v1" => true }.freeze

  RATE_LIMITERS.each do |name, exact|
    define_method("test_read_#{name}") do
      blob, expected = H.golden(name)
      assert_equal Array.new(40) { |i| "key-#{i}" } + [H::GOLDEN_BINARY_KEY], expected.map(&:first)
      assert(expected.all? { |row| row.size == 4 && [0, 1].include?(row[1]) })
      assert_equal (exact ? 1 : 0), blob.byteslice(H::OFF_FLAGS, 4).unpack1("L<")
      rl = TemporalFilters::RateLimiter.deserialize(blob)
      assert_equal 31, rl.tracked_keys, "key-0 .. key-29 and the binary key"
      assert_equal blob, rl.serialize, "read and written back unchanged"
      expected.each do |key, allowed, remaining, retry_at|
        d = rl.peek(key, 3000)
        assert_equal [allowed == 1, remaining, retry_at], [d.allowed?, d.remaining, d.retry_at], key.inspect
      end
      # what holds beside the file: keys never requested have their whole
      # limit (bounded by the global window), denials say when
      (30...40).each { |i| assert_equal [1, 4], expected[i][1, 2] }
      expected.each { |_, allowed, _, retry_at| assert_operator retry_at, :>, 3000 if allowed.zero? }
      assert_equal 31, rl.tracked_keys, "peeks create no key"
      assert_equal blob, rl.serialize, "peeks change nothing (no clock moved)"
    end

    define_method("test_write_#{name}") do
      assert_writes_golden(name, H.golden_rate_limiter(exact))
    end
  end

  def test_rate_limiter_blobs_are_of_their_kind_only
    RATE_LIMITERS.each_key do |name|
      blob = H.read_golden("#{name}.tfb")
      assert_checksum_helper_agrees(blob, name)
      assert_tf_error(:WRONG_KIND) { RS.deserialize(blob) }
      assert_tf_error(:WRONG_KIND) { TemporalFilters::AgeBloom.deserialize(blob) }
    end
    assert_tf_error(:WRONG_KIND) do
      TemporalFilters::RateLimiter.deserialize(H.read_golden("time_bloom_v1.tfb"))
    end
  end

  def test_batch_rebuild_matches_the_golden_blob
    ops = []
    200.times { |i| ops << ["key-#{i}", 1000 + 7 * i] }
    (0...200).step(3) { |i| ops << ["key-#{i}", i.odd? ? 5000 + i : 500 + i] }
    ops << [H::GOLDEN_BINARY_KEY, 123_456_789]
    s = RS.new(256, 3, seed: 42)
    s.update_batch(ops.map(&:first), ops.map(&:last))
    assert_equal H.read_golden("recency_sketch_v1.tfb"), s.serialize
  end
end
