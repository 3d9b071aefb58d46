# frozen_string_literal: true

# Every error path of AgeBloom and TimeBloom through the Ruby binding: closed
# objects, arguments refused by the library (as include/temporalfilters/
# age_bloom.h and time_bloom.h document) and by the binding's range checks,
# timestamps, arguments of the wrong class, invalid blobs (truncated, wrong
# kind, ...), the native layer's checks. A failing call must leave the
# filter unchanged.

require_relative "helper"

class TestBloomErrors < Minitest::Test
  BAD_RATES = [0.0, 1.0, -0.5, 1.5, Float::NAN, Float::INFINITY, -Float::INFINITY].freeze

  def age
    AB.new(3, 4, 256, seed: 5).add("k")
  end

  def time
    TB.new(3, 4, 256, 1000, seed: 5).add("k", 100)
  end

  # ---- closed objects -------------------------------------------------------

  # Both layouts; the getters, snapshots and blobs fail alike on a closed
  # filter (test_age_bloom.rb#test_close: the calls of the classic layout).
  def test_closed_age_bloom
    f = AB.new(3, 4, 256, seed: 5, flags: AB::BLOCKED).add("k")
    assert_closes(f, add: ["a"], contains?: ["k"], contains: ["k"], include?: ["k"], add_if_absent: ["a"], clear: [],
                     blocked?: [],
                     add_batch: [["a"]], contains_batch: [["k"]], add_if_absent_batch: [["a"]])
    g = age
    g.close
    %i[blocked? k capacity serialize stats fpr_now].each do |name|
      assert_closed(/AgeBloom is closed/, name.to_s) { g.public_send(name) }
    end
    assert_closed(/AgeBloom is closed/) { g.contains?("k") }
  end

  def test_closed_time_bloom
    f = time
    f.close
    %i[slices bits inserts k span info serialize].each do |name|
      assert_closed(/TimeBloom is closed/, name.to_s) { f.public_send(name) }
    end
    { contains?: ["k", 100], stats: [1], fpr_now: [100], slice_bits: [0], add: ["k", 100],
      add_batch: [["k"], 100], contains_batch: [["k"], 100], add_if_absent_batch: [["k"], 100] }.each do |name, args|
      assert_closed(/TimeBloom is closed/, name.to_s) { f.public_send(name, *args) }
    end
  end

  def test_objects_without_a_handle
    # an object made by allocate has no handle: it reads as closed
    { TF::Native::AgeBloomNative => /the AgeBloom is closed/,
      TF::Native::TimeBloomNative => /the TimeBloom is closed/ }.each do |native, closed|
      raw = native.allocate
      assert_closed(closed) { raw.info }
      assert raw.is_closed
    end
    assert_raises(NoMethodError) { AB.allocate }
    assert_raises(NoMethodError) { TB.allocate }
    # a handle of another class is refused, not misread
    time_native = time.instance_variable_get(:@native)
    assert_raises(TypeError) { TF::Native::AgeBloomNative.instance_method(:info).bind_call(time_native) }
  end

  # ---- constructors -----------------------------------------------------------

  def test_age_bloom_new_refused_by_the_library
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(0, 4, 256) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(65, 4, 256) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 0, 256) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 1025, 256) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, 63) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, 0) }
    e = assert_tf_error(:TOO_LARGE) { AB.new(3, 4, 2**40 + 1) }
    assert_match(/slice_bits/, e.message)
    assert_tf_error(:TOO_LARGE) { AB.new(3, 4, MAX_U64) }
    # the limits themselves are fine
    assert_equal [64, 1, 64], AB.new(64, 1, 64).then { |f| [f.k, f.l, f.slice_bits] }
    assert_equal 1024, AB.new(1, 1024, 64).l
  end

  # Both layouts refuse the same targets (the blocked one also rates above
  # 0.2: test_age_bloom_flags_refused_by_the_library).
  def test_age_bloom_for_target_refused_by_the_library
    [0, AB::BLOCKED].each do |flags|
      BAD_RATES.each do |rate|
        assert_tf_error(:INVALID_ARGUMENT) { AB.for_target(100, rate, flags: flags) }
        assert_tf_error(:INVALID_ARGUMENT) { AB.choose(rate, flags: flags) }
      end
      assert_tf_error(:TOO_LARGE) { AB.for_target(100, 1e-300, flags: flags) }
      assert_tf_error(:TOO_LARGE) { AB.choose(1e-300, flags: flags) }
      assert_tf_error(:INVALID_ARGUMENT, /capacity/) { AB.for_target(0, 0.01, flags: flags) }
      assert_tf_error(:TOO_LARGE) { AB.for_target(MAX_U64, 0.01, flags: flags) }
      assert_tf_error(:TOO_LARGE) { AB.for_target(2**50, 0.01, flags: flags) }
    end
  end

  def test_age_bloom_blocked_refused_by_the_library
    # k >= 1, l >= 1, k + l <= 32, 32 <= slice_bits <= 2**40 (age_bloom.h)
    e = assert_tf_error(:INVALID_ARGUMENT) { AB.new(30, 3, 256, flags: AB::BLOCKED) }
    assert_match(/k \+ l <= 32/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(1, 32, 256, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(16, 17, 256, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 0, 256, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(0, 4, 256, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(64, 4, 256, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(MAX_U32, 1, 256, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, 31, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, 0, flags: AB::BLOCKED) }
    e = assert_tf_error(:TOO_LARGE) { AB.new(3, 4, 2**40 + 1, flags: AB::BLOCKED) }
    assert_match(/slice_bits/, e.message)
    assert_tf_error(:TOO_LARGE) { AB.new(3, 4, MAX_U64, flags: AB::BLOCKED) }
    # the binding's range checks: refused, never wrapped (2**32 + 3 would be 3)
    [-1, 2**32, 2**32 + 3].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { AB.new(bad, 4, 256, flags: AB::BLOCKED) }
      assert_match(/k is out of range/, e.message)
      assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, bad, 256, flags: AB::BLOCKED) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, 256, seed: bad, flags: AB::BLOCKED) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.for_target(100, 0.01, seed: bad, flags: AB::BLOCKED) }
    end
    [-1, 2**64, 2**64 + 256].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, bad, flags: AB::BLOCKED) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.for_target(bad, 0.01, flags: AB::BLOCKED) }
    end
    assert_raises(TypeError) { AB.new(3.0, 4, 256, flags: AB::BLOCKED) }
    assert_raises(TypeError) { AB.for_target(100, "0.01", flags: AB::BLOCKED) }
    assert_raises(TypeError) { AB.choose(nil, flags: AB::BLOCKED) }
    # the limits themselves are fine
    assert_equal [31, 1, 32], AB.new(31, 1, 32, flags: AB::BLOCKED).then { |f| [f.k, f.l, f.slice_bits] }
    assert_equal [1, 31], AB.new(1, 31, 32, flags: AB::BLOCKED).then { |f| [f.k, f.l] }
  end

  # The flags: BLOCKED and MIN_MEMORY for the age filter (whose blocked
  # sizing takes rates up to 0.2), MIN_MEMORY for the time filter; an
  # unknown bit is refused, so that a later version may give it a meaning.
  # MIN_MEMORY is for the sizing helpers of the classic layout only.
  def test_age_bloom_flags_refused_by_the_library
    assert_tf_error(:INVALID_ARGUMENT, /0\.2/) { AB.for_target(100, 0.5, flags: AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT, /0\.2/) { AB.choose(0.5, flags: AB::BLOCKED) }
    assert_equal 0.5, AB.choose(0.5)[2], "the classic layout takes it"
    [4, AB::BLOCKED | 4, 0x8000_0000].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT, /flags has unknown bits/) { AB.new(3, 4, 256, flags: bad) }
      assert_tf_error(:INVALID_ARGUMENT, /flags/) { AB.for_target(100, 0.01, flags: bad) }
      assert_tf_error(:INVALID_ARGUMENT, /flags/) { AB.choose(0.01, flags: bad) }
    end
    [AB::MIN_MEMORY, AB::MIN_MEMORY | AB::BLOCKED].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT, /MIN_MEMORY/) { AB.new(3, 4, 256, flags: bad) }
    end
    assert_tf_error(:INVALID_ARGUMENT, /MIN_MEMORY/) { AB.for_target(100, 0.01, flags: AB::MIN_MEMORY | AB::BLOCKED) }
    assert_tf_error(:INVALID_ARGUMENT, /MIN_MEMORY/) { AB.choose(0.01, flags: AB::MIN_MEMORY | AB::BLOCKED) }
    [2, 4, 0x8000_0000].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT, /flags has unknown bits/) { TB.new(3, 4, 256, 100, flags: bad) }
      assert_tf_error(:INVALID_ARGUMENT, /flags/) { TB.for_target(100, 0.01, 1000, flags: bad) }
    end
    assert_tf_error(:INVALID_ARGUMENT, /MIN_MEMORY/) { TB.new(3, 4, 256, 100, flags: TB::MIN_MEMORY) }
    assert_equal [2, 1], [AB::MIN_MEMORY, TB::MIN_MEMORY]
    [-1, 2**32].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT, /flags is out of range/) { AB.new(3, 4, 256, flags: bad) }
      assert_tf_error(:INVALID_ARGUMENT, /flags is out of range/) { TB.new(3, 4, 256, 100, flags: bad) }
    end
    assert_raises(TypeError) { AB.new(3, 4, 256, flags: nil) }
    assert_raises(TypeError) { TB.for_target(100, 0.01, 1000, flags: 1.0) }
    assert_equal [0, AB::BLOCKED], [AB.new(3, 4, 256).flags, AB.new(3, 4, 256, flags: AB::BLOCKED).flags]
    assert_equal 0, TB.new(3, 4, 256, 100, flags: 0).flags
  end

  def test_time_bloom_new_refused_by_the_library
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(0, 3, 1000, 100) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(65, 3, 1000, 100) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 0, 1000, 100) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 1025, 1000, 2000) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 3, 63, 100) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 3, 0, 100) }
    assert_tf_error(:TOO_LARGE) { TB.new(3, 3, 2**40 + 1, 100) }
    assert_tf_error(:TOO_LARGE) { TB.new(3, 3, MAX_U64, 100) }
    e = assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 5, 1000, 4) }
    assert_match(/span/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 5, 1000, 0) }
    assert_equal 5, TB.new(3, 5, 1000, 5).span, "span = l is fine"
  end

  def test_time_bloom_for_target_refused_by_the_library
    BAD_RATES.each do |rate|
      assert_tf_error(:INVALID_ARGUMENT) { TB.for_target(100, rate, 1000) }
    end
    assert_tf_error(:TOO_LARGE) { TB.for_target(100, 1e-300, 1000) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.for_target(0, 0.01, 1000) }
    # choose(0.01) gives l = 24: the span must be at least that
    assert_tf_error(:INVALID_ARGUMENT) { TB.for_target(100, 0.01, 23) }
    assert_tf_error(:INVALID_ARGUMENT) { TB.for_target(100, 0.01, 0) }
    assert_equal 24, TB.for_target(100, 0.01, 24).span
    # with MIN_MEMORY, l = 87
    assert_tf_error(:INVALID_ARGUMENT, /span/) { TB.for_target(100, 0.01, 86, flags: TB::MIN_MEMORY) }
    assert_equal [87, 87], TB.for_target(100, 0.01, 87, flags: TB::MIN_MEMORY).then { |f| [f.l, f.span] }
    assert_tf_error(:TOO_LARGE) { TB.for_target(MAX_U64, 0.01, 1000) }
    assert_tf_error(:TOO_LARGE) { TB.for_target(2**50, 0.01, 1000) }
  end

  def test_sizing_helpers_refused_by_the_library
    BAD_RATES.each { |rate| assert_tf_error(:INVALID_ARGUMENT) { AB.choose(rate) } }
    e = assert_tf_error(:TOO_LARGE) { AB.choose(1e-300) }
    assert_match(/k <= 64/, e.message)
    [[0, 1], [65, 1], [1, 0], [1, 1025]].each do |k, l|
      assert_tf_error(:INVALID_ARGUMENT) { AB.false_positive_rate(k, l) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.bits_per_element(k, l) }
    end
  end

  def test_integers_out_of_range_are_refused_not_wrapped
    # uint32_t: 2**32 + 3 would wrap to 3, a valid k
    [-1, 2**32, 2**32 + 3].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { AB.new(bad, 4, 256) }
      assert_match(/k is out of range/, e.message)
      assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, bad, 256) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, 256, seed: bad) }
      assert_tf_error(:INVALID_ARGUMENT) { TB.new(bad, 4, 256, 100) }
      assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 4, 256, 100, seed: bad) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.false_positive_rate(bad, 4) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.bits_per_element(3, bad) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.for_target(100, 0.01, seed: bad) }
    end
    # uint64_t: 2**64 + 256 would wrap to 256, a valid slice size
    [-1, 2**64, 2**64 + 256, -(2**63)].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { AB.new(3, 4, bad) }
      assert_match(/slice_bits is out of range/, e.message)
      assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 4, bad, 100) }
      assert_tf_error(:INVALID_ARGUMENT) { TB.new(3, 4, 256, bad) }
      assert_tf_error(:INVALID_ARGUMENT) { AB.for_target(bad, 0.01) }
      assert_tf_error(:INVALID_ARGUMENT) { TB.for_target(100, 0.01, bad) }
      assert_tf_error(:INVALID_ARGUMENT) { TB.for_target(bad, 0.01, 1000) }
    end
    assert_equal MAX_U32, AB.new(3, 4, 256, seed: MAX_U32).seed
    assert_equal MAX_U32, TB.new(3, 4, 256, 100, seed: MAX_U32).seed
  end

  def test_arguments_of_the_wrong_class
    assert_raises(TypeError) { AB.new(3.0, 4, 256) }
    assert_raises(TypeError) { AB.new("3", 4, 256) }
    assert_raises(TypeError) { AB.new(3, 4, nil) }
    assert_raises(TypeError) { AB.for_target(100, "0.01") }
    assert_raises(TypeError) { AB.choose(nil) }
    assert_raises(TypeError) { TB.new(3, 4, 256, 100.0) }
    assert_raises(TypeError) { TB.for_target(100, 0.01, "1000") }
    assert_raises(TypeError) { AB.deserialize(nil) }
    assert_raises(TypeError) { TB.deserialize(42) }
    f = age
    g = time
    before = [f.serialize, g.serialize]
    [:k, nil, 42].each do |bad|
      assert_raises(TypeError) { f.add(bad) }
      assert_raises(TypeError) { f.contains?(bad) }
      assert_raises(TypeError) { f.add_if_absent(bad) }
      assert_raises(TypeError) { g.add(bad, 1) }
      assert_raises(TypeError) { g.contains?(bad, 1) }
      assert_raises(TypeError) { g.add_if_absent(bad, 1) }
    end
    [1.5, "1", nil].each do |bad|
      assert_raises(TypeError) { g.add("k", bad) }
      assert_raises(TypeError) { g.contains?("k", bad) }
      assert_raises(TypeError) { g.stats(bad) }
      assert_raises(TypeError) { g.slice_bits(bad) }
    end
    assert_raises(ArgumentError) { g.add("k") }
    assert_raises(ArgumentError) { g.contains?("k") }
    assert_raises(ArgumentError) { f.add("k", 1) }
    assert_equal before, [f.serialize, g.serialize], "nothing changed"
  end

  # ---- timestamps and calls ----------------------------------------------------

  def test_time_bloom_timestamps
    f = time
    before = f.serialize
    calls = {
      add: ->(now) { f.add("x", now) },
      contains: ->(now) { f.contains?("k", now) },
      add_if_absent: ->(now) { f.add_if_absent("x", now) },
      stats: ->(now) { f.stats(now) },
      bits_per_element: ->(now) { f.bits_per_element(now) },
      fpr_now: ->(now) { f.fpr_now(now) }
    }
    assert_refuses_bad_times(calls)
    assert_equal before, f.serialize, "failed calls change nothing"
    assert f.contains?("k", 100)
  end

  def test_time_bloom_slice_index
    f = time
    n = f.slices
    e = assert_tf_error(:INVALID_ARGUMENT) { f.slice_bits(n) }
    assert_match(/slice #{n} does not exist/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { f.slice_bits(MAX_U64) }
    e = assert_tf_error(:INVALID_ARGUMENT) { f.slice_bits(-1) }
    assert_match(/i is out of range/, e.message)
    assert_equal 256, f.slice_bits(n - 1)
  end

  def test_errors_do_not_leak_into_later_calls
    f = time
    g = age
    assert_failures_do_not_stick(-> { f.add("k", 0) }, -> { AB.new(0, 1, 64) }) do
      assert f.contains?("k", 100)
      assert g.contains?("k")
    end
  end

  def test_buffer_too_small_in_the_native_layer
    [age, time].each { |f| assert_native_buffer_checks(f) }
  end

  # ---- blobs --------------------------------------------------------------------

  def blobs
    @blobs ||= { AB => age.serialize, TB => time.serialize }
  end

  def test_wrong_kind
    rs_blob = RS.new(16, 2, seed: 3).update("b", 42).serialize
    [AB, TB].each do |klass|
      e = assert_tf_error(:WRONG_KIND) { klass.deserialize(rs_blob) }
      assert_match(/kind 1/, e.message)
      assert_kind_of TF::BadBlobError, e
      assert_tf_error(:WRONG_KIND) { RS.deserialize(blobs[klass]) }
      assert_tf_error(:WRONG_KIND) { klass.deserialize(H.patch_blob(blobs[klass], H::OFF_KIND, [999].pack("S<"))) }
    end
    assert_tf_error(:WRONG_KIND) { AB.deserialize(blobs[TB]) }
    assert_tf_error(:WRONG_KIND) { TB.deserialize(blobs[AB]) }
    # the kind field alone: an age blob relabelled as a time blob is refused
    # by the payload checks, not read as one
    assert_raises(TF::BadBlobError) { TB.deserialize(H.patch_blob(blobs[AB], H::OFF_KIND, [3].pack("S<"))) }
  end

  def test_truncated
    [AB, TB].each { |klass| assert_refuses_truncated(klass, blobs[klass], step: 7) }
  end

  def test_bad_magic_version_checksum
    [AB, TB].each { |klass| assert_refuses_broken_envelope(klass, blobs[klass], flip_at: H::OFF_BLOOM_SLICES + 40) }
  end

  def test_corrupt
    [AB, TB].each do |klass|
      blob = blobs[klass]
      # forged with a valid checksum: the seed is free, k and l are not
      assert_equal 6, klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_SEED, [6].pack("L<"))).seed
      assert_tf_error(:CORRUPT) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_K, [0].pack("L<"))) }
      assert_tf_error(:CORRUPT) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_K, [65].pack("L<"))) }
      assert_tf_error(:CORRUPT) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_L, [0].pack("L<"))) }
      assert_tf_error(:CORRUPT) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_SLICES, [MAX_U32].pack("L<"))) }
      assert_tf_error(:CORRUPT) { klass.deserialize(blob + "\x00".b) }
    end
  end
end
