# frozen_string_literal: true

# Every error path of TemporalFilters::RateLimiter through the Ruby binding:
# closed objects, arguments refused by the library (as
# include/temporalfilters/rate_limiter.h documents) and by the binding's
# range checks, timestamps and n, arguments of the wrong class, invalid
# blobs (wrong kind, truncated, forged), the native layer's checks. A
# failing call must leave the limiter unchanged.

require_relative "helper"

class TestRateLimiterErrors < Minitest::Test
  def limiter(flags = 0)
    rl = RL.new(5, 1000, 100, flags: flags)
    rl.acquire("k", 100, 2)
    rl
  end

  # ---- closed objects -------------------------------------------------------

  def test_closed_limiter
    assert_closes(limiter, acquire: ["a", 1], peek: ["a", 1], allow?: ["a", 1], refund: ["a", 1], reset: ["a"],
                           set_global_limit: [1], set_key_limit: ["a", 1], set_max_keys: [1], tracked_keys: [],
                           acquire_batch: [["a"], [1]], exact?: [], full_allow?: [])
  end

  def test_objects_without_a_handle
    # an object made by allocate has no handle: it reads as closed
    raw = TF::Native::RateLimiterNative.allocate
    assert_closed(/the RateLimiter is closed/) { raw.stats }
    assert_closed(/the RateLimiter is closed/) { raw.acquire("a", 1, 1) }
    assert raw.is_closed
    assert_raises(NoMethodError) { RL.allocate }
    # a handle of another class is refused, not misread
    sketch_native = RS.new(8, 2).instance_variable_get(:@native)
    assert_raises(TypeError) { TF::Native::RateLimiterNative.instance_method(:stats).bind_call(sketch_native) }
  end

  # ---- constructors ---------------------------------------------------------

  def test_constructor_arguments_refused_by_the_library
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(0, 1000, 100) }
    assert_match(/limit must be >= 1/, e.message)
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 0, 100) }
    assert_match(/window/, e.message)
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, 0) }
    assert_match(/bucket_width/, e.message)
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, 300) }
    assert_match(/does not divide/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, 1001) }
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 4097, 1) }
    assert_match(/buckets/, e.message)
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(RL::MAX_KEY_LIMIT + 1, 1000, 100) }
    assert_match(/bucketed mode's maximum/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { RL.exact(RL::MAX_EXACT_LIMIT + 1, 1000) }
    assert_tf_error(:INVALID_ARGUMENT) { RL.exact(0, 1000) }
    assert_tf_error(:INVALID_ARGUMENT) { RL.exact(5, 0) }
    e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, 100, flags: 4) }
    assert_match(/flag/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, 100, flags: 0x8000_0000) }
    assert_tf_error(:INVALID_ARGUMENT) { RL.exact(5, 1000, flags: 4) }
    # the limits themselves are fine; the bucket width is ignored when exact
    refute_nil RL.new(RL::MAX_KEY_LIMIT, 4096, 1)
    refute_nil RL.exact(RL::MAX_EXACT_LIMIT, 1)
    refute_nil RL.new(5, 1000, 7, flags: RL::EXACT)
    refute_nil RL.new(5, 1000, 0, flags: RL::EXACT | RL::FULL_ALLOW)
    refute_nil RL.new(1, MAX_U64, MAX_U64)
  end

  def test_integers_out_of_range_are_refused_not_wrapped
    # uint64_t: 2**64 + 5 would wrap to 5, a valid limit
    [-1, 2**64, 2**64 + 5, -(2**63), 2**100].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(bad, 1000, 100) }
      assert_match(/limit is out of range/, e.message)
      e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, bad, 100) }
      assert_match(/window is out of range/, e.message)
      e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, bad) }
      assert_match(/bucket_width is out of range/, e.message)
      assert_tf_error(:INVALID_ARGUMENT) { RL.exact(bad, 1000) }
    end
    # uint32_t flags: 2**32 + 1 would wrap to EXACT
    [-1, 2**32, 2**32 + 1].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { RL.new(5, 1000, 100, flags: bad) }
      assert_match(/flags is out of range/, e.message)
    end
    assert_tf_error(:INVALID_ARGUMENT) { RL.exact(5, 1000, flags: -2) }
  end

  def test_arguments_of_the_wrong_class
    assert_raises(TypeError) { RL.new(5.0, 1000, 100) }
    assert_raises(TypeError) { RL.new("5", 1000, 100) }
    assert_raises(TypeError) { RL.new(5, nil, 100) }
    assert_raises(TypeError) { RL.new(5, 1000, 100, flags: nil) }
    assert_raises(TypeError) { RL.exact(5, 1000, flags: "1") }
    assert_raises(TypeError) { RL.exact(5, 1000, flags: 1.0) }
    assert_raises(TypeError) { RL.deserialize(nil) }
    assert_raises(TypeError) { RL.deserialize(42) }
    assert_raises(ArgumentError) { RL.new(5, 1000) }
    rl = limiter
    before = rl.serialize
    [:k, nil, 42, ["k"]].each do |bad|
      assert_raises(TypeError) { rl.acquire(bad, 200) }
      assert_raises(TypeError) { rl.peek(bad, 200) }
      assert_raises(TypeError) { rl.allow?(bad, 200) }
      assert_raises(TypeError) { rl.refund(bad, 200) }
      assert_raises(TypeError) { rl.reset(bad) }
      assert_raises(TypeError) { rl.set_key_limit(bad, 3) }
    end
    [1.5, "1", nil, 2r].each do |bad|
      assert_raises(TypeError) { rl.acquire("k", bad) }
      assert_raises(TypeError) { rl.acquire("k", 200, bad) }
      assert_raises(TypeError) { rl.peek("k", bad) }
      assert_raises(TypeError) { rl.refund("k", 200, bad) }
      assert_raises(TypeError) { rl.set_global_limit(bad) }
      assert_raises(TypeError) { rl.set_key_limit("k", bad) }
      assert_raises(TypeError) { rl.set_max_keys(bad) }
    end
    assert_raises(ArgumentError) { rl.acquire("k") }
    assert_raises(ArgumentError) { rl.set_key_limit("k") }
    assert_equal before, rl.serialize, "nothing changed"
  end

  # ---- timestamps, n, limits --------------------------------------------------

  def test_timestamps
    rl = limiter(RL::EXACT)
    before = rl.serialize
    calls = {
      acquire: ->(now) { rl.acquire("k", now) },
      peek: ->(now) { rl.peek("k", now) },
      allow: ->(now) { rl.allow?("k", now) },
      refund: ->(now) { rl.refund("k", now) }
    }
    assert_refuses_bad_times(calls)
    assert_equal before, rl.serialize, "failed calls change nothing"
  end

  def test_n
    rl = limiter
    before = rl.serialize
    e = assert_tf_error(:INVALID_ARGUMENT) { rl.acquire("k", 200, 0) }
    assert_match(/n must be >= 1/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { rl.peek("k", 200, 0) }
    assert_tf_error(:INVALID_ARGUMENT) { rl.acquire("new", 200, 0) }
    [-1, 2**64, 2**64 + 1].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { rl.acquire("k", 200, bad) }
      assert_match(/n is out of range/, e.message)
      assert_tf_error(:INVALID_ARGUMENT) { rl.peek("k", 200, bad) }
      assert_tf_error(:INVALID_ARGUMENT) { rl.refund("k", 200, bad) }
    end
    assert_equal before, rl.serialize, "failed calls change nothing"
    # a huge n is no error: a denial that can never be granted, taking nothing
    [6, 2**32 + 1, MAX_U64].each do |n|
      d = rl.acquire("k", 100, n)
      assert_equal [false, 3, TemporalFilters::RETRY_NEVER], [d.allowed?, d.remaining, d.retry_at], "n = #{n}"
      assert d.never?
      d = rl.acquire("huge-#{n}", 100, n)
      assert_equal [false, 5, TemporalFilters::RETRY_NEVER], [d.allowed?, d.remaining, d.retry_at]
    end
    assert_equal 1, rl.tracked_keys, "a request that can never be granted creates no key"
    assert_equal before, rl.serialize
    rl.refund("k", 100, MAX_U64) # gives back what there is
    assert_equal 4, rl.peek("k", 100).remaining
  end

  def test_limits_refused_by_the_library
    rl = limiter
    e = assert_tf_error(:INVALID_ARGUMENT) { rl.set_key_limit("k", RL::MAX_KEY_LIMIT + 1) }
    assert_match(/exceeds the maximum/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { rl.set_key_limit("k", MAX_U64) }
    assert_same rl, rl.set_key_limit("k", RL::MAX_KEY_LIMIT)
    assert_same rl, rl.set_global_limit(MAX_U64), "a bucketed global limit is a count"
    assert_same rl, rl.set_max_keys(MAX_U64)
    ex = limiter(RL::EXACT)
    before = ex.serialize
    e = assert_tf_error(:INVALID_ARGUMENT) { ex.set_global_limit(RL::MAX_EXACT_GLOBAL_LIMIT + 1) }
    assert_match(/2\^24/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { ex.set_key_limit("k", RL::MAX_EXACT_LIMIT + 1) }
    assert_equal before, ex.serialize, "failed calls change nothing"
    ex.set_key_limit("k", RL::MAX_EXACT_LIMIT)
    [-1, 2**64].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT) { rl.set_global_limit(bad) }
      assert_tf_error(:INVALID_ARGUMENT) { rl.set_key_limit("k", bad) }
      assert_tf_error(:INVALID_ARGUMENT) { rl.set_max_keys(bad) }
    end
  end

  def test_errors_do_not_leak_into_later_calls
    rl = limiter
    assert_failures_do_not_stick(-> { rl.acquire("k", 0) }, -> { RL.new(0, 1, 1) }) do
      assert rl.peek("k", 200).allowed?
      assert_equal 1, rl.tracked_keys
    end
    assert rl.allow?("k", 200)
  end

  def test_buffer_too_small_in_the_native_layer
    assert_native_buffer_checks(limiter)
  end

  # ---- blobs --------------------------------------------------------------------

  def blob(flags = 0)
    rl = limiter(flags)
    rl.set_global_limit(50).set_key_limit("vip", 7)
    rl.acquire("vip", 150, 3)
    rl.serialize
  end

  def test_wrong_kind
    rs_blob = RS.new(16, 2, seed: 3).update("b", 42).serialize
    e = assert_tf_error(:WRONG_KIND) { RL.deserialize(rs_blob) }
    assert_match(/kind 1/, e.message)
    assert_kind_of TF::BadBlobError, e
    assert_tf_error(:WRONG_KIND) { RL.deserialize(TF::AgeBloom.new(3, 4, 64).serialize) }
    assert_tf_error(:WRONG_KIND) { RL.deserialize(TF::TimeBloom.new(3, 4, 64, 100).serialize) }
    [blob, blob(RL::EXACT)].each do |b|
      assert_tf_error(:WRONG_KIND) { RS.deserialize(b) }
      assert_tf_error(:WRONG_KIND) { TF::AgeBloom.deserialize(b) }
      assert_tf_error(:WRONG_KIND) { TF::TimeBloom.deserialize(b) }
      assert_tf_error(:WRONG_KIND) { RL.deserialize(H.patch_blob(b, H::OFF_KIND, [999].pack("S<"))) }
    end
    # a sketch relabelled as a limiter is refused by the payload checks
    assert_raises(TF::BadBlobError) { RL.deserialize(H.patch_blob(rs_blob, H::OFF_KIND, [4].pack("S<"))) }
  end

  def test_truncated
    [blob, blob(RL::EXACT)].each { |b| assert_refuses_truncated(RL, b) }
  end

  def test_bad_magic_version_checksum
    [blob, blob(RL::EXACT)].each do |b|
      assert_refuses_broken_envelope(RL, b, flip_at: H::OFF_RL_WINDOW)
      flipped = b.dup
      flipped.setbyte(b.bytesize - 20, flipped.getbyte(b.bytesize - 20) ^ 0x80)
      assert_tf_error(:CHECKSUM) { RL.deserialize(flipped) }
    end
  end

  def test_corrupt
    b = blob
    # forged with a valid checksum: an untouched blob reads, the limits do not
    assert_equal b, RL.deserialize(H.patch_blob(b, H::OFF_RL_LIMIT, [5].pack("Q<"))).serialize
    forged = RL.deserialize(H.patch_blob(b, H::OFF_RL_MAX_KEYS, [2].pack("Q<")))
    refute forged.allow?("other", 200), "max_keys 2 from the blob: k and vip fill the table"
    assert_equal 1, forged.denied_full
    corrupt = {
      "limit 0" => [H::OFF_RL_LIMIT, [0].pack("Q<")],
      "limit too large" => [H::OFF_RL_LIMIT, [RL::MAX_KEY_LIMIT + 1].pack("Q<")],
      "window 0" => [H::OFF_RL_WINDOW, [0].pack("Q<")],
      "width not dividing" => [H::OFF_RL_WIDTH, [300].pack("Q<")],
      "width 0" => [H::OFF_RL_WIDTH, [0].pack("Q<")],
      "unknown flag" => [H::OFF_FLAGS, [4].pack("L<")],
      "another bucket count" => [H::OFF_RL_WIDTH, [50].pack("Q<")],
      "global limit removed" => [H::OFF_RL_GLOBAL, [0].pack("Q<")],
      "global limit below its count" => [H::OFF_RL_GLOBAL, [2].pack("Q<")]
    }
    corrupt.each do |name, (offset, bytes)|
      e = assert_raises(TF::BadBlobError, name) { RL.deserialize(H.patch_blob(b, offset, bytes)) }
      assert_tf_status(:CORRUPT, e, name)
    end
    assert_tf_error(:CORRUPT) { RL.deserialize(b + "\x00".b) }
    ex = blob(RL::EXACT)
    e = assert_tf_error(:CORRUPT) do
      RL.deserialize(H.patch_blob(ex, H::OFF_RL_GLOBAL, [RL::MAX_EXACT_GLOBAL_LIMIT + 1].pack("Q<")))
    end
    assert_match(/global limit/, e.message)
    assert_tf_error(:CORRUPT) { RL.deserialize(H.patch_blob(ex, H::OFF_RL_LIMIT, [RL::MAX_EXACT_LIMIT + 1].pack("Q<"))) }
    # the exact flag on a bucketed payload: its layout does not fit
    assert_raises(TF::BadBlobError) { RL.deserialize(H.patch_blob(b, H::OFF_FLAGS, [RL::EXACT].pack("L<"))) }
    assert_raises(TF::BadBlobError) { RL.deserialize(H.patch_blob(ex, H::OFF_FLAGS, [0].pack("L<"))) }
  end

  def test_random_bytes_with_a_valid_envelope
    # a hostile payload behind a valid header and checksum: an error, never a crash
    rng = Random.new(11)
    b = blob(RL::EXACT)
    300.times do
      forged = b.dup
      3.times do
        at = H::OFF_RL_LIMIT + rng.rand(b.bytesize - 8 - H::OFF_RL_LIMIT)
        forged.setbyte(at, rng.rand(256))
      end
      body = forged.byteslice(0, forged.bytesize - 8)
      forged = body + [H.murmur3_x64_128_low(body)].pack("Q<")
      begin
        RL.deserialize(forged).tap { |rl| rl.acquire("vip", 1000) }.close
      rescue TF::BadBlobError => e
        assert_tf_status(:CORRUPT, e)
      end
    end
  end
end
