# frozen_string_literal: true

# Semantics of TemporalFilters::RecencySketch through the Ruby binding:
# update/query, pacing, TTL, merge, clear, info, sizing, serialization,
# batches, binary and string keys, close, copies.

require_relative "helper"

class TestRecencySketch < Minitest::Test
  def big(flags = 0)
    RS.new(1 << 16, 4, seed: 7, flags: flags)
  end

  def test_constants_and_version
    assert_equal 1, RS::CONCURRENT
    assert_equal 2, RS::BLOCKED
    assert_equal 0, TemporalFilters::NEVER
    assert_equal 2**64 - 1, TemporalFilters::RETRY_NEVER
    assert_equal [TF::Native::TF_NEVER, TF::Native::TF_RETRY_NEVER], [TF::NEVER, TF::RETRY_NEVER], "the C header's"
    assert_match(/\A\d+\.\d+\.\d+\z/, TemporalFilters::VERSION)
    assert_operator TemporalFilters.clock_now_ms, :>, 1_600_000_000_000
    assert_equal "TF_ERR_CHECKSUM", TemporalFilters.status_name(-10)
    assert_equal "TF_OK", TemporalFilters.status_name(0)
  end

  def test_info_getters
    s = RS.new(1000, 5, seed: 99, flags: RS::CONCURRENT)
    assert_equal [1000, 5, 99, RS::CONCURRENT, 5000], [s.width, s.depth, s.seed, s.flags, s.cells]
    assert s.concurrent?
    refute s.blocked?
    assert_operator s.memory, :>=, 5000 * 8
    assert_operator s.memory, :<, 5000 * 8 + 4096

    # blocked: width*depth rounded up to whole cache lines of 8 cells
    b = RS.new(10, 3, seed: 1, flags: RS::BLOCKED)
    assert_equal 32, b.cells
    assert b.blocked?
    refute b.concurrent?
    assert_equal 3, b.depth

    # seed and flags default to 0
    d = RS.new(4, 2)
    assert_equal [0, 0], [d.seed, d.flags]
    assert_match(/width=4 depth=2 seed=0 flags=0/, d.inspect)
  end

  def test_info_is_a_frozen_struct
    s = RS.new(1000, 5, seed: 99, flags: RS::CONCURRENT)
    info = s.info
    assert_frozen_struct(RS::Info, { width: 1000, depth: 5, seed: 99, flags: RS::CONCURRENT, cells: 5000 }, info, s)
    assert_equal info, s.info, "a Struct: equal by value"
    assert_raises(FrozenError) { info.width = 1 }
  end

  # seed and flags are keywords (default 0) everywhere; the positional
  # arguments are those of the C call, in its order.
  def test_seed_and_flags_are_keywords
    assert_equal [0, 0], RS.new(8, 2).info.to_a.values_at(2, 3)
    assert_equal [7, RS::BLOCKED], RS.new(8, 2, seed: 7, flags: RS::BLOCKED).info.to_a.values_at(2, 3)
    assert_equal [7, 0], RS.for_target(100, 0.1, seed: 7).info.to_a.values_at(2, 3)
    assert_equal RS.dimensions(100, 0.1, flags: RS::BLOCKED), RS.for_target(100, 0.1, flags: RS::BLOCKED).info.to_a.first(2)
    assert_raises(ArgumentError) { RS.new(8, 2, 7) }
    assert_raises(ArgumentError) { RS.new(8, 2, 7, 0) }
    assert_raises(ArgumentError) { RS.for_target(100, 0.1, 7) }
    assert_raises(ArgumentError) { RS.dimensions(100, 0.1, RS::BLOCKED) }
    assert_raises(ArgumentError) { RS.new(8, 2, sed: 7) }
  end

  def test_update_and_query
    s = big
    assert_equal 0, s.query("a")
    assert s.never_seen?("a")
    assert_same s, s.update("a", 100)
    assert_equal 100, s.query("a")
    refute s.never_seen?("a")
    s.update("a", 50) # older: no effect
    assert_equal 100, s.query("a")
    s.update("a", 250)
    assert_equal 250, s.query("a")
    assert_equal 0, s.query("b")
    s.update("b", MAX_U64)
    assert_equal MAX_U64, s.query("b")
  end

  def test_never_older_than_truth_when_crowded
    s = RS.new(16, 2, seed: 3)
    truth = {}
    500.times do |i|
      k = "k#{i % 97}"
      t = 1 + (i * 7919) % 10_000
      s.update(k, t)
      truth[k] = [truth[k] || 0, t].max
    end
    truth.each { |k, t| assert_operator s.query(k), :>=, t, k }
  end

  def test_binary_keys_with_nul_bytes
    s = big
    k1 = "\x00a\x00".b
    k2 = "\x00b\x00".b
    s.update(k1, 10)
    s.update(k2, 20)
    s.update("", 30)
    assert_equal 10, s.query(k1)
    assert_equal 20, s.query(k2)
    assert_equal 30, s.query("")
    assert_equal 0, s.query("\x00".b), "a NUL prefix is not the key"
    assert_equal 0, s.query("\x00a".b)
    s.update("\xff\xfe\x00\x80".b, 40)
    assert_equal 40, s.query("\xff\xfe\x00\x80".b)
  end

  def test_keys_are_bytes_whatever_the_encoding
    s = big
    s.update("été", 77)
    assert_equal 77, s.query("été".b)
    assert_equal 77, s.query("été".dup.force_encoding("ISO-8859-1"))
    refute_equal 77, s.query("été".encode("ISO-8859-1")), "other bytes, other key"
    # invalid UTF-8 is just bytes
    bad = "\xC3\x28".dup.force_encoding("UTF-8")
    refute bad.valid_encoding?
    s.update(bad, 5)
    assert_equal 5, s.query("\xC3\x28".b)
    # a frozen String and an object with to_str work as keys
    s.update("frozen".freeze, 9)
    key = Object.new
    def key.to_str
      "frozen"
    end
    assert_equal 9, s.query(key)
  end

  def test_pace
    s = big
    r = s.pace("client", 1000, 100)
    assert_instance_of RS::PaceResult, r
    assert r.granted?
    assert_equal 1100, r.next_allowed
    r = s.pace("client", 1050, 100)
    refute r.granted?
    assert_equal false, r.granted
    assert_equal 1100, r.next_allowed
    r = s.pace("client", 1099, 100)
    refute r.granted?
    r = s.pace("client", 1100, 100)
    assert r.granted?
    assert_equal 1200, r.next_allowed
    assert_equal 1100, s.query("client"), "a grant records now"
    # another key is independent
    assert s.pace("other", 1101, 100).granted?
    # next_allowed saturates at RETRY_NEVER
    r = s.pace("late", MAX_U64 - 5, 100)
    assert r.granted?
    assert_equal TemporalFilters::RETRY_NEVER, r.next_allowed
    r = s.pace("late", MAX_U64 - 4, 100)
    refute r.granted?
    assert_equal TemporalFilters::RETRY_NEVER, r.next_allowed
  end

  def test_ttl
    s = big
    refute s.ttl_maybe_live?("never", 1)
    assert_same s, s.ttl_insert("x", 100, 50)
    assert s.ttl_maybe_live?("x", 100)
    assert s.ttl_maybe_live?("x", 149)
    refute s.ttl_maybe_live?("x", 150)
    refute s.ttl_maybe_live("x", 1000)
    assert_equal 150, s.query("x"), "the estimated expiry"
    s.ttl_insert("y", MAX_U64 - 1, 10) # expiry saturates
    assert_equal MAX_U64, s.query("y")
    assert s.ttl_maybe_live?("y", MAX_U64 - 1)
  end

  def test_merge
    a = RS.new(4096, 4, seed: 11)
    b = RS.new(4096, 4, seed: 11, flags: RS::CONCURRENT) # the concurrency mode may differ
    a.update("only-a", 10)
    a.update("both", 30)
    b.update("only-b", 20)
    b.update("both", 25)
    assert_same a, a.merge(b)
    assert_equal [10, 20, 30], %w[only-a only-b both].map { |k| a.query(k) }
    assert_equal 0, b.query("only-a"), "the source is unchanged"
    before = a.serialize
    a.merge(a)
    assert_equal before, a.serialize, "merging into itself changes nothing"
    a.merge(b)
    assert_equal before, a.serialize, "idempotent"
  end

  def test_merge_incompatible
    a = RS.new(64, 2, seed: 1)
    a.update("k", 5)
    before = a.serialize
    [RS.new(64, 2, seed: 2), RS.new(65, 2, seed: 1), RS.new(64, 3, seed: 1), RS.new(64, 2, seed: 1, flags: RS::BLOCKED)].each do |other|
      e = assert_tf_error(:INCOMPATIBLE) { a.merge(other) }
      assert_equal(-12, e.status)
      assert_equal "TF_ERR_INCOMPATIBLE", e.status_name
    end
    assert_equal before, a.serialize, "a failed merge leaves dst unchanged"
    assert_raises(TypeError) { a.merge("not a sketch") }
    assert_raises(TypeError) { a.merge(nil) }
  end

  def test_clear
    s = big
    s.update("a", 5)
    s.pace("p", 5, 10)
    assert_same s, s.clear
    assert_equal 0, s.query("a")
    assert_equal 0, s.query("p")
    assert_equal 0.0, s.error_estimate
    assert s.pace("p", 6, 10).granted?
  end

  def test_error_estimate
    s = RS.new(100, 2, seed: 5)
    assert_equal 0.0, s.error_estimate
    assert_equal 0.0, s.error_estimate(0)
    100.times { |i| s.update("k#{i}", 10 + i) }
    p0 = s.error_estimate
    assert_operator p0, :>, 0.1
    assert_operator p0, :<=, 1.0
    p_late = s.error_estimate(100)
    assert_operator p_late, :<, p0, "fewer cells are newer than a later time"
    assert_equal 0.0, s.error_estimate(MAX_U64)
  end

  def test_sizing
    w, d = RS.dimensions(10_000, 0.01)
    assert_operator w, :>, 0
    assert_operator d, :>, 0
    s = RS.for_target(10_000, 0.01, seed: 5)
    assert_equal [w, d, 5, 0], [s.width, s.depth, s.seed, s.flags]
    bw, bd = RS.dimensions(10_000, 0.01, flags: RS::BLOCKED)
    assert_operator bd, :<=, 8
    assert_operator bw * bd, :>, w * d, "blocked needs more cells for the same target"
    b = RS.for_target(10_000, 0.01, seed: 5, flags: RS::BLOCKED | RS::CONCURRENT)
    assert_equal [bw, bd, RS::BLOCKED | RS::CONCURRENT], [b.width, b.depth, b.flags]
    # a tighter target needs more cells
    w2, d2 = RS.dimensions(10_000, 0.001)
    assert_operator w2 * d2, :>, w * d
    # the probability may be given as any Numeric
    assert_equal RS.dimensions(10, 0.5), RS.dimensions(10, 1r / 2)
  end

  def test_serialize_round_trip
    [0, RS::CONCURRENT, RS::BLOCKED, RS::BLOCKED | RS::CONCURRENT].each do |flags|
      s = RS.new(300, 4, seed: 1234, flags: flags)
      keys = Array.new(150) { |i| "key #{i}\x00#{i * 3}" }
      keys.each_with_index { |k, i| s.update(k, 1 + i * 13) }
      assert_operator s.memory, :>, 0
      _blob, t = assert_round_trip(s)
      assert_equal [s.width, s.depth, s.seed, s.flags, s.cells], [t.width, t.depth, t.seed, t.flags, t.cells]
      assert_equal keys.map { |k| s.query(k) }, keys.map { |k| t.query(k) }
    end
  end

  def test_serialize_size_follows_the_table
    small = RS.new(8, 1).serialize.bytesize
    larger = RS.new(16, 1).serialize.bytesize
    assert_equal 8 * 8, larger - small
  end

  def test_batch_equals_single_calls
    rng = Random.new(42)
    [0, RS::BLOCKED | RS::CONCURRENT].each do |flags|
      a = RS.new(512, 3, seed: 9, flags: flags)
      b = RS.new(512, 3, seed: 9, flags: flags)
      # more than 64 keys (the shared layer's stack arrays), binary and empty keys
      keys = Array.new(300) { |i| i % 50 == 0 ? "" : rng.bytes(rng.rand(1..24)) }
      keys << "\x00".b << "utf-8 é"
      times = keys.map { rng.rand(1..1_000_000) }
      assert_same a, a.update_batch(keys, times)
      keys.zip(times) { |k, t| b.update(k, t) }
      assert_equal b.serialize, a.serialize
      probe = keys + Array.new(100) { rng.bytes(10) }
      assert_equal probe.map { |k| b.query(k) }, a.query_batch(probe)
      assert_equal probe.map { |k| a.query(k) }, a.query_batch(probe)
    end
  end

  def test_batch_small_and_empty
    s = big
    assert_equal [], s.query_batch([])
    before = s.serialize
    s.update_batch([], [])
    assert_equal before, s.serialize
    s.update_batch(["one"], [MAX_U64])
    assert_equal [MAX_U64, 0], s.query_batch(%w[one two])
  end

  def test_close
    s = big
    s.update("a", 1)
    other = big
    assert_closes(s, update: ["a", 1], query: ["a"], never_seen?: ["a"], pace: ["a", 1, 1], ttl_insert: ["a", 1, 1],
                     ttl_maybe_live?: ["a", 1], ttl_maybe_live: ["a", 1],
                     update_batch: [["a"], [1]], query_batch: [["a"]], merge: [other],
                     clear: [], error_estimate: [], concurrent?: [], blocked?: [])
    assert_closed(/RecencySketch is closed/, "merge from a closed sketch") { other.merge(s) }
    assert_equal 0, other.query("a"), "other unchanged"
  end

  def test_dup_is_an_independent_copy
    s = big
    s.update("a", 10)
    c = s.dup
    c.update("a", 20)
    c.update("b", 5)
    assert_equal 10, s.query("a")
    assert_equal 0, s.query("b")
    assert_equal 20, c.query("a")
    s.close
    assert_equal 20, c.query("a"), "closing the original leaves the copy alive"
    assert_equal 5, c.clone.query("b")
  end

  def test_marshal
    s = RS.new(128, 3, seed: 77, flags: RS::BLOCKED)
    s.update("m", 1234)
    t = Marshal.load(Marshal.dump(s))
    assert_instance_of RS, t
    assert_equal 1234, t.query("m")
    assert_equal s.serialize, t.serialize
  end

  def test_garbage_collector_frees_sketches
    # Sketches dropped without close are freed by the GC; closed ones too.
    # (ASan, in the sanitized build, checks these frees.)
    200.times do |i|
      s = RS.new(1024, 4, seed: i)
      s.update("x", i + 1)
      s.close if i.even?
      RS.deserialize(s.serialize) if i.odd?
    end
    GC.start
    GC.start
    assert_equal 3, RS.new(8, 1).update("k", 3).query("k")
  end

  def test_garbage_collector_frees_deserialized_sketches
    # 200 sketches of 8 MiB, dropped without close: 1600 MiB if the objects
    # made by the class factories did not own their handles.
    blob = RS.new(1 << 18, 4).update("x", 1).serialize
    growth = rss_growth_mib(200) do |i|
      s = RS.deserialize(blob)
      assert_equal 1, s.query("x") if i.zero?
    end
    assert_operator growth, :<, 700, "memory of dropped sketches came back"
  end
end
