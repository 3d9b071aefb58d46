# frozen_string_literal: true

# TemporalFilters::RateLimiter#acquire_batch (tf_rate_limiter_acquire_batch):
# the same decisions, in order, and the same state afterwards as the same
# #acquire calls on a twin limiter (both modes, a global limit and an
# override, a key bound failing closed and open, empty, inline and
# out-of-line keys, clocks going back, batches across the native layer's
# 64-key chunks); every bad argument refused before any decision; the empty
# batch; a closed limiter; the native layer's checks.

require_relative "helper"

class TestRateLimiterBatch < Minitest::Test
  def allowed(remaining)
    RL::Decision.new(true, remaining, 0)
  end

  def denied(remaining, retry_at)
    RL::Decision.new(false, remaining, retry_at)
  end

  # A small batch with known answers: the third request of "a" waits for
  # its first permit to leave (with its bucket at 1000, or at 10 + 1000 in
  # exact mode); a key may come several times in one batch.
  def test_a_batch_answers_in_the_order_of_its_keys
    [0, RL::EXACT].each do |flags|
      exact = flags == RL::EXACT
      rl = RL.new(2, 1000, 100, flags: flags)
      assert_equal [allowed(1), allowed(0), denied(0, exact ? 1010 : 1000), allowed(1)],
                   rl.acquire_batch(%w[a a a b], [10, 20, 30, 40])
      # n for every key; binary Strings are the same keys
      assert_equal [denied(1, exact ? 1040 : 1000), allowed(0)],
                   rl.acquire_batch(["b".b, "c"], [50, 50], 2)
      assert_equal [allowed(1), allowed(1)], rl.acquire_batch(%w[a b], [2000, 2000])
      assert_equal [allowed(0), allowed(0)], rl.acquire_batch(%w[a b], [2001, 2001], 1)
      d = rl.acquire_batch(%w[a b], [2002, 2002])
      assert_equal [denied(0, 3000), denied(0, 3000)], d
      assert d.all?(&:denied?)
      assert_equal 3, rl.tracked_keys
    end
  end

  # The twin of the C suite's test_acquire_batch_equals_single_calls: random
  # traffic over 500 keys (one empty, every seventh longer than 16 bytes,
  # stored out of line), batches of 1 to 200 keys, n 1 or 2, times that
  # mostly go forward and sometimes back by up to 500. One limiter takes
  # the batches, its twin the same requests one by one: every answer and,
  # at the end, the counters and the serialized bytes are equal.
  def test_a_batch_decides_as_the_same_single_calls_in_order
    nk = 500
    names = Array.new(nk) do |k|
      if k.zero? then ""
      elsif k % 7 == 3 then "a longer key, out of line, #{k}"
      else "k#{k}"
      end
    end
    [[0, 0], [RL::EXACT, 0], [0, 120], [RL::EXACT, 120],
     [RL::FULL_ALLOW, 120], [RL::EXACT | RL::FULL_ALLOW, 120]].each do |flags, max_keys|
      what = "flags #{flags}, max keys #{max_keys}"
      single = RL.new(4, 1000, 100, flags: flags)
      batch = RL.new(4, 1000, 100, flags: flags)
      [single, batch].each do |r|
        r.set_global_limit(300).set_key_limit("k7", 9).set_max_keys(max_keys)
      end
      rng = Random.new(31 + flags + max_keys)
      now = 1
      granted = refused = largest = done = 0
      batches = 0
      while done < 25_000
        count = 1 + rng.rand(200)
        n = 1 + rng.rand(2)
        keys = Array.new(count) { names[rng.rand(nk)] }
        times = Array.new(count) do
          now += rng.rand(5)
          rng.rand(10).zero? && now > 500 ? now - rng.rand(500) : now
        end
        got = batch.acquire_batch(keys, times, n)
        assert_equal count, got.size
        keys.each_with_index do |k, i|
          want = single.acquire(k, times[i], n)
          assert_equal want, got[i], "#{what}: batch #{batches}, entry #{i} (#{k.inspect} at #{times[i]}, n #{n})"
          if want.allowed?
            granted += 1
          else
            refused += 1
          end
        end
        largest = count if count > largest
        done += count
        batches += 1
      end
      assert_operator granted, :>, 1000, what
      assert_operator refused, :>, 1000, what
      assert_operator largest, :>, 64, "batches beyond the native layer's 64-key chunks"
      stats = batch.stats
      assert_equal single.stats.to_a[0, 4], stats.to_a[0, 4], what
      assert_operator stats.denied_full + stats.allowed_full, :>, 0, what unless max_keys.zero?
      assert_equal single.serialize, batch.serialize, what
    end
  end

  # Every bad argument is refused before any decision: no key created, no
  # clock moved, the same bytes.
  def test_bad_arguments_change_nothing
    [0, RL::EXACT].each do |flags|
      rl = RL.new(2, 100, 10, flags: flags)
      rl.set_global_limit(50)
      assert_equal allowed(1), rl.acquire("x", 5)
      before = rl.serialize
      xyz = %w[x y z]
      {
        "fewer times" => [-> { rl.acquire_batch(xyz, [6, 7]) }, /one timestamp per key/],
        "more times" => [-> { rl.acquire_batch(xyz, [6, 7, 8, 9]) }, /one timestamp per key/],
        "no times" => [-> { rl.acquire_batch(xyz, []) }, /one timestamp per key/],
        "times without keys" => [-> { rl.acquire_batch([], [6]) }, /one timestamp per key/],
        "a zero time" => [-> { rl.acquire_batch(xyz, [6, 7, 0]) }, /times\[2\]/],
        "a negative time" => [-> { rl.acquire_batch(xyz, [6, -7, 8]) }, /times\[1\]/],
        "a time past 2**64" => [-> { rl.acquire_batch(xyz, [6, 7, 2**64]) }, /times\[2\]/],
        "n 0" => [-> { rl.acquire_batch(xyz, [6, 7, 8], 0) }, /n must be/],
        "n 0, no keys" => [-> { rl.acquire_batch([], [], 0) }, /n must be/],
        "a negative n" => [-> { rl.acquire_batch(xyz, [6, 7, 8], -1) }, /\bn\b/]
      }.each do |what, (call, pattern)|
        e = assert_tf_error(:INVALID_ARGUMENT, pattern) { call.call }
        assert e, what
      end
      {
        "keys not an Array" => -> { rl.acquire_batch("x", [6]) },
        "keys nil" => -> { rl.acquire_batch(nil, [6]) },
        "a key not a String" => -> { rl.acquire_batch(["x", 7], [6, 7]) },
        "times not an Array" => -> { rl.acquire_batch(xyz, 6) },
        "a time not an Integer" => -> { rl.acquire_batch(xyz, [6, 7.5, 8]) },
        "n not an Integer" => -> { rl.acquire_batch(xyz, [6, 7, 8], "1") }
      }.each do |what, call|
        assert_raises(TypeError, what) { call.call }
      end
      assert_equal before, rl.serialize
      assert_equal 1, rl.tracked_keys
      # a huge n is an answer, not an error: never, and nothing taken
      assert_equal [denied(1, RETRY_NEVER), denied(2, RETRY_NEVER), denied(2, RETRY_NEVER)],
                   rl.acquire_batch(xyz, [6, 7, 8], 2**64 - 1)
      assert_equal 1, rl.tracked_keys
      # and a failure does not stick
      assert_equal [allowed(0), allowed(1)], rl.acquire_batch(%w[x y], [9, 9])
    end
  end

  def test_an_empty_batch_changes_nothing
    rl = RL.new(2, 100, 10)
    rl.acquire("x", 5)
    before = rl.serialize
    assert_equal [], rl.acquire_batch([], [])
    assert_equal [], rl.acquire_batch([], [], 3)
    assert_equal before, rl.serialize
  end

  def test_a_closed_limiter_refuses_batches
    rl = RL.new(2, 100, 10)
    rl.close
    assert_closed(/RateLimiter is closed/) { rl.acquire_batch(["k"], [5]) }
    assert_closed(/RateLimiter is closed/) { rl.acquire_batch([], []) }
  end

  # The native layer checks what #acquire_batch always gets right: outputs
  # of one entry per key. Its answer: the number granted, then the Arrays.
  def test_the_native_layer_checks_its_batch_arguments
    native = TF::Native::RateLimiterNative.new(2, 100, 10, 0, 0)
    xyz = %w[x y z]
    [[2, 3, 3], [3, 4, 3], [3, 3, 0]].each do |counts|
      assert_tf_error(:INVALID_ARGUMENT, /every output/) { native.acquire_batch(xyz, [6, 7, 8], 1, *counts) }
    end
    assert_equal 0, native.stats.keys
    assert_equal [3, [true, true, true], [0, 0, 0], [0, 0, 0]],
                 native.acquire_batch(["x", "yz", ""], [6, 7, 8], 2, 3, 3, 3)
    assert_equal [2, [false, true, true], [0, 1, 1], [100, 0, 0]],
                 native.acquire_batch(xyz, [6, 7, 8], 1, 3, 3, 3)
    assert_equal [0, [], [], []], native.acquire_batch([], [], 1, 0, 0, 0)
  end
end
