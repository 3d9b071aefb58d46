# frozen_string_literal: true

# TemporalFilters::RecencyWindow: each mode's promise against an exact map
# of last inserts, the keyword options and modes, bad input, the batches,
# serialization and the life cycle (the golden blobs are in
# test_golden.rb).

require_relative "helper"

class TestRecencyWindow < Minitest::Test
  # Checks one answer e (nil: not in the window) for a key of true recency
  # r (nil: never inserted) against the mode's promise
  # (temporalfilters/recency_window.h).
  def check_answer(what, info, r, e)
    if r.nil? || r >= info.window + info.slack - 1
      assert_nil e, "#{what}: r=#{r.inspect} must be out of the window"
      return
    end
    return if r >= info.window # within the slack: either answer may come

    refute_nil e, "#{what}: r=#{r} answered not in the window"
    assert_operator e, :<=, r, "#{what}: never too large"
    case info.mode
    when :historical
      assert_operator r * info.inv_eps, :<=, e * (info.inv_eps + 1), "#{what}: r=#{r} e=#{e} within (1 + eps)"
    when :exact
      assert_equal r, e, what
    when :optimal_sm
      assert_operator r, :<=, e + info.block - 1, "#{what}: r=#{r} e=#{e} within D - 1"
    else
      flunk "mode #{info.mode.inspect}"
    end
  end

  # insert_report against the exact previous recency at every insert of a
  # skewed stream (hot keys and cold ones: recencies from 0 to well beyond
  # W), and query of a sample of keys at checkpoints, in every mode.
  def test_every_mode_against_an_exact_map
    RW::MODES.each_key do |mode|
      w = RW.new(window: 2000, inv_eps: 4, mode: mode, seed: 3)
      info = w.info
      assert_equal mode, info.mode
      assert_equal mode, w.mode
      last = {}
      rng = Random.new(17)
      n = 0
      20_000.times do |i|
        key = rng.rand(100) < 60 ? "hot-#{rng.rand(50)}" : "cold-#{rng.rand(6000)}"
        prev = last[key]
        check_answer("#{mode} insert_report #{key}", info, prev && n - 1 - prev, w.insert_report(key))
        last[key] = n
        n += 1
        next unless i % 5000 == 4999

        200.times do |k|
          q = k.even? ? "hot-#{k % 50}" : "cold-#{rng.rand(6000)}"
          p = last[q]
          check_answer("#{mode} query #{q}", info, p && n - 1 - p, w.query(q))
        end
        assert_nil w.query("never-#{i}")
      end
      s = w.stats
      assert_equal [n, 2000, info.levels, w.memory, 0], [s.inserts, s.window_items, s.levels, s.memory, s.lost]
    end
  end

  def test_defaults_info_and_not_in_window
    w = RW.new
    i = w.info
    assert_equal [65_536, 8, 0, 0, 0.0, :historical, 0, 0, 64], i.to_a.first(9)
    assert_operator i.levels, :>, 1
    assert_predicate i, :frozen?
    assert_equal i.slack, w.slack
    assert_equal w.memory, RW.memory_for
    assert_match(/\A#<TemporalFilters::RecencyWindow window=65536 inv_eps=8 mode=historical signature_bits=64 seed=0>\z/,
                 w.inspect)
    e = RW.new(window: 16, mode: :exact)
    assert_nil e.query("a")
    assert_nil e.insert_report("a")
    assert_equal 0, e.query("a")
    assert_same e, e.insert("b")
    e << "c"
    assert_equal 2, e.query("a")
    assert_equal 2, e.insert_report("a".b)
    assert_nil e.insert_report(""), "the empty key is a key"
    assert_equal 0, e.query("")
    assert_nil e.insert_report("\x00bin\x00".b)
    assert_equal 0, e.query("\x00bin\x00".b)
    40.times { |k| e.insert("filler-#{k}") }
    assert_nil e.query("a")
    assert_equal [nil, 0], e.query_batch(%w[a filler-39])
    assert_equal [1, 1 << 40, 1 << 20], [RW::MODES[:exact], RW::MAX_WINDOW, RW::MAX_INV_EPS]
    assert_equal({ historical: 0, exact: 1, optimal_sm: 2 }, RW::MODES)
  end

  def test_stats_and_levels
    w = RW.new(window: 4096, inv_eps: 8, seed: 11)
    assert_in_delta 0.0, w.stats.bits_per_window_item, 0.0
    10_000.times { |k| w.insert("k-#{k}") }
    s = w.stats
    assert_predicate s, :frozen?
    assert_equal [10_000, 4096], [s.inserts, s.window_items]
    assert_operator s.promotions, :>, 0
    assert_operator s.bits_per_window_item, :>, 0
    items = (0...s.levels).sum do |l|
      level = w.level(l)
      assert_instance_of RW::Level, level
      assert_predicate level, :frozen?
      assert_equal 1 << l, level.block_width
      assert_equal 0, level.slots % 8 # an even number of 4-slot buckets
      assert_operator level.entry_bits, :>, level.class_bits
      level.items
    end
    assert_equal s.items, items
    assert_tf_error(:INVALID_ARGUMENT) { w.level(s.levels) }
    assert_same w, w.clear
    assert_equal [0, s.memory], [w.stats.inserts, w.stats.memory]
    assert_nil w.query("k-9999")
    o = RW.new(mode: :optimal_sm, window: 1000, inv_eps: 10)
    assert_equal [100, 1], [o.block, o.levels]
    d = RW.new(window: 1000, delta: 0.01)
    assert_operator d.signature_bits, :<, 64
    assert_in_delta 0.01, d.delta, 0.0
  end

  def test_bad_options
    { { window: 0 } => :INVALID_ARGUMENT, { window: RW::MAX_WINDOW + 1 } => :TOO_LARGE,
      { inv_eps: 0 } => :INVALID_ARGUMENT, { inv_eps: RW::MAX_INV_EPS + 1 } => :INVALID_ARGUMENT,
      { block: 4 } => :INVALID_ARGUMENT, { mode: :optimal_sm, window: 10, block: 11 } => :INVALID_ARGUMENT,
      { mode: :fast } => :INVALID_ARGUMENT, { mode: 1 } => :INVALID_ARGUMENT,
      { delta: 1.0 } => :INVALID_ARGUMENT, { delta: -0.5 } => :INVALID_ARGUMENT,
      { delta: Float::NAN } => :INVALID_ARGUMENT, { flags: 1 } => :INVALID_ARGUMENT,
      { seed: 2**32 } => :INVALID_ARGUMENT, { seed: -1 } => :INVALID_ARGUMENT, { window: -1 } => :INVALID_ARGUMENT,
      { window: 1 << 20, max_memory: 1024 } => :TOO_LARGE }.each do |opts, status|
      assert_tf_error(status, nil, opts.inspect) { RW.new(**opts) }
      assert_tf_error(status, nil, "memory_for #{opts.inspect}") { RW.memory_for(**opts) } unless opts[:max_memory]
    end
    assert_raises(ArgumentError) { RW.new(ttl: 5) }
    assert_raises(TypeError) { RW.new(window: "big") }
    assert_raises(TypeError) { RW.new(delta: "small") }
    need = RW.memory_for(window: 1 << 16)
    assert_equal need, RW.new(window: 1 << 16, max_memory: need).memory
    w = RW.new(window: 100)
    w.insert("k")
    before = w.serialize
    assert_raises(TypeError) { w.insert(nil) }
    assert_raises(TypeError) { w.query(5) }
    assert_raises(TypeError) { w.insert_report(:k) }
    assert_raises(TypeError) { w.insert_batch("k") }
    assert_raises(TypeError) { w.insert_report_batch(["k", nil]) }
    assert_raises(TypeError) { w.query_batch([1]) }
    assert_tf_error(:INVALID_ARGUMENT) { w.level(-1) }
    assert_equal before, w.serialize, "a failed call changes nothing"
    assert_equal 0, w.query("k")
  end

  # The batches give the same answers and leave the same window as the
  # single calls.
  def test_batches_match_single_calls
    RW::MODES.each_key do |mode|
      a = RW.new(window: 500, mode: mode, seed: 7)
      b = RW.new(window: 500, mode: mode, seed: 7)
      rng = Random.new(5)
      20.times do |round|
        keys = Array.new(100) { "k-#{rng.rand(300)}" }
        single = keys.map { |k| a.insert_report(k) }
        assert_equal single, b.insert_report_batch(keys), "#{mode} round #{round}"
        assert_equal keys.map { |k| a.query(k) }, b.query_batch(keys)
        a.insert(keys[0])
        assert_same b, b.insert_batch([keys[0]])
      end
      binary = ["\x00\x01".b, "", "\xff".b]
      binary.each { |k| a.insert(k) }
      b.insert_batch(binary)
      assert_equal [], b.query_batch([])
      b.insert_batch([])
      assert_equal a.serialize, b.serialize, mode.to_s
    end
  end

  def test_round_trip_goes_on_as_the_original
    RW::MODES.each_key do |mode|
      w = RW.new(window: 300, inv_eps: 2, mode: mode, seed: 9)
      1000.times { |i| w.insert("k-#{i * 7919 % 400}") }
      blob, copy = assert_round_trip(w)
      assert_equal 6, blob.byteslice(6, 2).unpack1("S<")
      assert_equal w.stats, copy.stats
      1100.times do |i|
        k = "k-#{i * 31 % 450}"
        assert_equal [w.insert_report(k)], [copy.insert_report(k)], "#{mode} #{k}"
      end
      assert_equal w.serialize, copy.serialize
      assert_tf_error(:TOO_LARGE) { RW.deserialize(blob, max_memory: 64) }
      assert_equal w.memory, RW.deserialize(w.serialize, max_memory: w.memory).memory
      assert_refuses_truncated(RW, blob, step: 97)
      assert_refuses_broken_envelope(RW, blob, flip_at: 40)
      assert_native_buffer_checks(w)
    end
  end

  def test_close
    w = RW.new(window: 64)
    w.insert("k")
    assert_closes(w, insert: ["k"], query: ["k"], insert_report: ["k"], insert_batch: [["k"]],
                     query_batch: [["k"]], insert_report_batch: [["k"]], clear: [], level: [0], "<<": ["k"])
  end
end
