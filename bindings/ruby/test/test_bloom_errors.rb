# frozen_string_literal: true

# Every error path of AgeBloom and TimeBloom through the Ruby binding: closed
# objects, arguments refused by the library (as include/temporalfilters/
# age_bloom.h and time_bloom.h document) and by the binding's range checks,
# timestamps, arguments of the wrong class, invalid blobs (truncated, wrong
# kind, ...), the native layer's checks. A failing call must leave the
# filter unchanged.

require_relative "helper"

class TestBloomErrors < Minitest::Test
  AB = TemporalFilters::AgeBloom
  TB = TemporalFilters::TimeBloom
  RS = TemporalFilters::RecencySketch
  TF = TemporalFilters
  H = TestHelper
  MAX_U64 = 2**64 - 1
  MAX_U32 = 2**32 - 1
  BAD_RATES = [0.0, 1.0, -0.5, 1.5, Float::NAN, Float::INFINITY, -Float::INFINITY].freeze

  # Asserts that the block raises exactly `klass`, with its status, the
  # status name and a message from the library; returns the error.
  def assert_tf_error(klass, &block)
    e = assert_raises(TF::Error, &block)
    assert_instance_of klass, e
    assert_equal klass::STATUS, e.status
    assert_equal TF.status_name(klass::STATUS), e.status_name
    refute_empty e.message
    e
  end

  def age
    AB.new(3, 4, 256, 5).add("k")
  end

  def time
    TB.new(3, 4, 256, 1000, 5).add("k", 100)
  end

  # ---- closed objects -------------------------------------------------------

  def test_closed_age_bloom
    f = age
    f.close
    calls = {
      add: -> { f.add("a") },
      contains: -> { f.contains?("a") },
      add_if_absent: -> { f.add_if_absent("a") },
      clear: -> { f.clear },
      stats: -> { f.stats },
      slices: -> { f.slices },
      bits: -> { f.bits },
      bits_per_element: -> { f.bits_per_element },
      inserts: -> { f.inserts },
      fpr_now: -> { f.fpr_now },
      k: -> { f.k },
      l: -> { f.l },
      slice_bits: -> { f.slice_bits },
      generation: -> { f.generation },
      capacity: -> { f.capacity },
      seed: -> { f.seed },
      memory: -> { f.memory },
      serialize: -> { f.serialize },
      dup: -> { f.dup },
      marshal: -> { Marshal.dump(f) },
      blocked?: -> { f.blocked? }
    }
    calls.each do |name, call|
      e = assert_tf_error(TF::NullError) { call.call }
      assert_match(/AgeBloom is closed/, e.message, name.to_s)
    end
    assert f.closed?
    b = AB.blocked(3, 4, 256, 5).add("k")
    b.close
    assert b.closed?
    assert_equal "#<TemporalFilters::AgeBloom closed>", b.inspect
    %i[blocked? k capacity serialize].each do |name|
      e = assert_tf_error(TF::NullError) { b.public_send(name) }
      assert_match(/AgeBloom is closed/, e.message, name.to_s)
    end
    assert_tf_error(TF::NullError) { b.contains?("k") }
  end

  def test_closed_time_bloom
    f = time
    f.close
    calls = {
      add: -> { f.add("a", 1) },
      contains: -> { f.contains?("a", 1) },
      add_if_absent: -> { f.add_if_absent("a", 1) },
      clear: -> { f.clear },
      stats: -> { f.stats(1) },
      slices: -> { f.slices },
      bits: -> { f.bits },
      bits_per_element: -> { f.bits_per_element(1) },
      inserts: -> { f.inserts },
      fpr_now: -> { f.fpr_now(1) },
      slice_bits: -> { f.slice_bits(0) },
      k: -> { f.k },
      l: -> { f.l },
      span: -> { f.span },
      seed: -> { f.seed },
      memory: -> { f.memory },
      serialize: -> { f.serialize },
      dup: -> { f.dup },
      marshal: -> { Marshal.dump(f) }
    }
    calls.each do |name, call|
      e = assert_tf_error(TF::NullError) { call.call }
      assert_match(/TimeBloom is closed/, e.message, name.to_s)
    end
  end

  def test_objects_without_a_handle
    [TF::Native::AgeBloomNative, TF::Native::TimeBloomNative].each do |native|
      raw = native.allocate
      e = assert_tf_error(TF::NullError) { raw.info }
      assert_match(/no native handle/, e.message)
    end
    assert_raises(NoMethodError) { AB.allocate }
    assert_raises(NoMethodError) { TB.allocate }
    # a handle of another class is refused, not misread
    time_native = time.instance_variable_get(:@native)
    assert_raises(TypeError) { TF::Native::AgeBloomNative.instance_method(:info).bind_call(time_native) }
  end

  # ---- constructors -----------------------------------------------------------

  def test_age_bloom_new_refused_by_the_library
    assert_tf_error(TF::InvalidArgument) { AB.new(0, 4, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.new(65, 4, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.new(3, 0, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.new(3, 1025, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.new(3, 4, 63) }
    assert_tf_error(TF::InvalidArgument) { AB.new(3, 4, 0) }
    e = assert_tf_error(TF::TooLarge) { AB.new(3, 4, 2**40 + 1) }
    assert_match(/slice_bits/, e.message)
    assert_tf_error(TF::TooLarge) { AB.new(3, 4, MAX_U64) }
    # the limits themselves are fine
    assert_equal [64, 1, 64], AB.new(64, 1, 64).then { |f| [f.k, f.l, f.slice_bits] }
    assert_equal 1024, AB.new(1, 1024, 64).l
  end

  def test_age_bloom_for_target_refused_by_the_library
    BAD_RATES.each do |rate|
      assert_tf_error(TF::InvalidArgument) { AB.for_target(rate, 100) }
    end
    assert_tf_error(TF::TooLarge) { AB.for_target(1e-300, 100) }
    e = assert_tf_error(TF::InvalidArgument) { AB.for_target(0.01, 0) }
    assert_match(/capacity/, e.message)
    assert_tf_error(TF::TooLarge) { AB.for_target(0.01, MAX_U64) }
    assert_tf_error(TF::TooLarge) { AB.for_target(0.01, 2**50) }
  end

  def test_age_bloom_blocked_refused_by_the_library
    # k >= 1, l >= 1, k + l <= 32, 32 <= slice_bits <= 2**40 (age_bloom.h)
    e = assert_tf_error(TF::InvalidArgument) { AB.blocked(30, 3, 256) }
    assert_match(/k \+ l <= 32/, e.message)
    assert_tf_error(TF::InvalidArgument) { AB.blocked(1, 32, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(16, 17, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(3, 0, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(0, 4, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(64, 4, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(MAX_U32, 1, 256) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(3, 4, 31) }
    assert_tf_error(TF::InvalidArgument) { AB.blocked(3, 4, 0) }
    e = assert_tf_error(TF::TooLarge) { AB.blocked(3, 4, 2**40 + 1) }
    assert_match(/slice_bits/, e.message)
    assert_tf_error(TF::TooLarge) { AB.blocked(3, 4, MAX_U64) }
    # the binding's range checks: refused, never wrapped (2**32 + 3 would be 3)
    [-1, 2**32, 2**32 + 3].each do |bad|
      e = assert_tf_error(TF::InvalidArgument) { AB.blocked(bad, 4, 256) }
      assert_match(/k is out of range/, e.message)
      assert_tf_error(TF::InvalidArgument) { AB.blocked(3, bad, 256) }
      assert_tf_error(TF::InvalidArgument) { AB.blocked(3, 4, 256, bad) }
      assert_tf_error(TF::InvalidArgument) { AB.blocked_for_target(0.01, 100, bad) }
    end
    [-1, 2**64, 2**64 + 256].each do |bad|
      assert_tf_error(TF::InvalidArgument) { AB.blocked(3, 4, bad) }
      assert_tf_error(TF::InvalidArgument) { AB.blocked_for_target(0.01, bad) }
    end
    assert_raises(TypeError) { AB.blocked(3.0, 4, 256) }
    assert_raises(TypeError) { AB.blocked_for_target("0.01", 100) }
    assert_raises(TypeError) { AB.choose_blocked(nil) }
    # the limits themselves are fine
    assert_equal [31, 1, 32], AB.blocked(31, 1, 32).then { |f| [f.k, f.l, f.slice_bits] }
    assert_equal [1, 31], AB.blocked(1, 31, 32).then { |f| [f.k, f.l] }
  end

  def test_age_bloom_blocked_for_target_refused_by_the_library
    # the blocked sizing takes rates up to 0.2
    (BAD_RATES + [0.5]).each do |rate|
      assert_tf_error(TF::InvalidArgument) { AB.blocked_for_target(rate, 100) }
      assert_tf_error(TF::InvalidArgument) { AB.choose_blocked(rate) }
    end
    assert_tf_error(TF::TooLarge) { AB.blocked_for_target(1e-300, 100) }
    assert_tf_error(TF::TooLarge) { AB.choose_blocked(1e-300) }
    e = assert_tf_error(TF::InvalidArgument) { AB.blocked_for_target(0.01, 0) }
    assert_match(/capacity/, e.message)
    assert_tf_error(TF::TooLarge) { AB.blocked_for_target(0.01, MAX_U64) }
    assert_tf_error(TF::TooLarge) { AB.blocked_for_target(0.01, 2**50) }
  end

  def test_time_bloom_new_refused_by_the_library
    assert_tf_error(TF::InvalidArgument) { TB.new(0, 3, 1000, 100) }
    assert_tf_error(TF::InvalidArgument) { TB.new(65, 3, 1000, 100) }
    assert_tf_error(TF::InvalidArgument) { TB.new(3, 0, 1000, 100) }
    assert_tf_error(TF::InvalidArgument) { TB.new(3, 1025, 1000, 2000) }
    assert_tf_error(TF::InvalidArgument) { TB.new(3, 3, 63, 100) }
    assert_tf_error(TF::InvalidArgument) { TB.new(3, 3, 0, 100) }
    assert_tf_error(TF::TooLarge) { TB.new(3, 3, 2**40 + 1, 100) }
    assert_tf_error(TF::TooLarge) { TB.new(3, 3, MAX_U64, 100) }
    e = assert_tf_error(TF::InvalidArgument) { TB.new(3, 5, 1000, 4) }
    assert_match(/span/, e.message)
    assert_tf_error(TF::InvalidArgument) { TB.new(3, 5, 1000, 0) }
    assert_equal 5, TB.new(3, 5, 1000, 5).span, "span = l is fine"
  end

  def test_time_bloom_for_target_refused_by_the_library
    BAD_RATES.each do |rate|
      assert_tf_error(TF::InvalidArgument) { TB.for_target(rate, 1000, 100) }
    end
    assert_tf_error(TF::TooLarge) { TB.for_target(1e-300, 1000, 100) }
    assert_tf_error(TF::InvalidArgument) { TB.for_target(0.01, 1000, 0) }
    # choose(0.01) gives l = 87: the span must be at least that
    assert_tf_error(TF::InvalidArgument) { TB.for_target(0.01, 86, 100) }
    assert_tf_error(TF::InvalidArgument) { TB.for_target(0.01, 0, 100) }
    assert_equal 87, TB.for_target(0.01, 87, 100).span
    assert_tf_error(TF::TooLarge) { TB.for_target(0.01, 1000, MAX_U64) }
    assert_tf_error(TF::TooLarge) { TB.for_target(0.01, 1000, 2**50) }
  end

  def test_sizing_helpers_refused_by_the_library
    BAD_RATES.each { |rate| assert_tf_error(TF::InvalidArgument) { AB.choose(rate) } }
    e = assert_tf_error(TF::TooLarge) { AB.choose(1e-300) }
    assert_match(/k <= 64/, e.message)
    [[0, 1], [65, 1], [1, 0], [1, 1025]].each do |k, l|
      assert_tf_error(TF::InvalidArgument) { AB.false_positive_rate(k, l) }
      assert_tf_error(TF::InvalidArgument) { AB.bits_per_element(k, l) }
    end
  end

  def test_integers_out_of_range_are_refused_not_wrapped
    # uint32_t: 2**32 + 3 would wrap to 3, a valid k
    [-1, 2**32, 2**32 + 3].each do |bad|
      e = assert_tf_error(TF::InvalidArgument) { AB.new(bad, 4, 256) }
      assert_match(/k is out of range/, e.message)
      assert_tf_error(TF::InvalidArgument) { AB.new(3, bad, 256) }
      assert_tf_error(TF::InvalidArgument) { AB.new(3, 4, 256, bad) }
      assert_tf_error(TF::InvalidArgument) { TB.new(bad, 4, 256, 100) }
      assert_tf_error(TF::InvalidArgument) { TB.new(3, 4, 256, 100, bad) }
      assert_tf_error(TF::InvalidArgument) { AB.false_positive_rate(bad, 4) }
      assert_tf_error(TF::InvalidArgument) { AB.bits_per_element(3, bad) }
      assert_tf_error(TF::InvalidArgument) { AB.for_target(0.01, 100, bad) }
    end
    # uint64_t: 2**64 + 256 would wrap to 256, a valid slice size
    [-1, 2**64, 2**64 + 256, -(2**63)].each do |bad|
      e = assert_tf_error(TF::InvalidArgument) { AB.new(3, 4, bad) }
      assert_match(/slice_bits is out of range/, e.message)
      assert_tf_error(TF::InvalidArgument) { TB.new(3, 4, bad, 100) }
      assert_tf_error(TF::InvalidArgument) { TB.new(3, 4, 256, bad) }
      assert_tf_error(TF::InvalidArgument) { AB.for_target(0.01, bad) }
      assert_tf_error(TF::InvalidArgument) { TB.for_target(0.01, bad, 100) }
      assert_tf_error(TF::InvalidArgument) { TB.for_target(0.01, 1000, bad) }
    end
    assert_equal MAX_U32, AB.new(3, 4, 256, MAX_U32).seed
    assert_equal MAX_U32, TB.new(3, 4, 256, 100, MAX_U32).seed
  end

  def test_arguments_of_the_wrong_class
    assert_raises(TypeError) { AB.new(3.0, 4, 256) }
    assert_raises(TypeError) { AB.new("3", 4, 256) }
    assert_raises(TypeError) { AB.new(3, 4, nil) }
    assert_raises(TypeError) { AB.for_target("0.01", 100) }
    assert_raises(TypeError) { AB.choose(nil) }
    assert_raises(TypeError) { TB.new(3, 4, 256, 100.0) }
    assert_raises(TypeError) { TB.for_target(0.01, "1000", 100) }
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
    calls.each do |name, call|
      e = assert_tf_error(TF::InvalidArgument) { call.call(0) }
      refute_match(/out of range/, e.message, "#{name}: 0 is refused by the library, not by the binding")
      [-1, -1000, -(2**63), 2**64, 2**70].each do |bad|
        e = assert_tf_error(TF::InvalidArgument) { call.call(bad) }
        assert_match(/now is out of range/, e.message, name.to_s)
      end
    end
    assert_equal before, f.serialize, "failed calls change nothing"
    assert f.contains?("k", 100)
  end

  def test_time_bloom_slice_index
    f = time
    n = f.slices
    e = assert_tf_error(TF::InvalidArgument) { f.slice_bits(n) }
    assert_match(/slice #{n} does not exist/, e.message)
    assert_tf_error(TF::InvalidArgument) { f.slice_bits(MAX_U64) }
    e = assert_tf_error(TF::InvalidArgument) { f.slice_bits(-1) }
    assert_match(/i is out of range/, e.message)
    assert_equal 256, f.slice_bits(n - 1)
  end

  def test_errors_do_not_leak_into_later_calls
    f = time
    assert_raises(TF::InvalidArgument) { f.add("k", 0) }
    assert f.contains?("k", 100)
    assert_raises(TF::InvalidArgument) { AB.new(0, 1, 64) }
    assert age.contains?("k")
  end

  def test_buffer_too_small_in_the_native_layer
    [age, time].each do |f|
      native = f.instance_variable_get(:@native)
      size = native.serialized_size
      assert_tf_error(TF::BufferTooSmall) { native.serialize_into(size - 1) }
      assert_tf_error(TF::BufferTooSmall) { native.serialize_into(size + 1) }
      assert_tf_error(TF::BufferTooSmall) { native.serialize_into(0) }
      assert_equal f.serialize, native.serialize_into(size)
    end
  end

  # ---- blobs --------------------------------------------------------------------

  def blobs
    @blobs ||= { AB => age.serialize, TB => time.serialize }
  end

  def test_wrong_kind
    rs_blob = RS.new(16, 2, 3).update("b", 42).serialize
    [AB, TB].each do |klass|
      e = assert_tf_error(TF::WrongKind) { klass.deserialize(rs_blob) }
      assert_match(/kind 1/, e.message)
      assert_kind_of TF::BlobError, e
      assert_tf_error(TF::WrongKind) { RS.deserialize(blobs[klass]) }
      assert_tf_error(TF::WrongKind) { klass.deserialize(H.patch_blob(blobs[klass], H::OFF_KIND, [999].pack("S<"))) }
    end
    assert_tf_error(TF::WrongKind) { AB.deserialize(blobs[TB]) }
    assert_tf_error(TF::WrongKind) { TB.deserialize(blobs[AB]) }
    # the kind field alone: an age blob relabelled as a time blob is refused
    # by the payload checks, not read as one
    assert_raises(TF::BlobError) { TB.deserialize(H.patch_blob(blobs[AB], H::OFF_KIND, [3].pack("S<"))) }
  end

  def test_truncated
    [AB, TB].each do |klass|
      blob = blobs[klass]
      assert_tf_error(TF::Truncated) { klass.deserialize("") }
      assert_tf_error(TF::Truncated) { klass.deserialize("TFLT") }
      assert_tf_error(TF::Truncated) { klass.deserialize(blob.byteslice(0, 27)) }
      assert_tf_error(TF::Truncated) { klass.deserialize(blob.byteslice(0, blob.bytesize - 1)) }
      assert_tf_error(TF::Truncated) { klass.deserialize(blob.byteslice(0, blob.bytesize / 2)) }
      # every prefix is refused (the sanitized build checks the reads too)
      (0...blob.bytesize).step(7) do |n|
        assert_raises(TF::BlobError) { klass.deserialize(blob.byteslice(0, n)) }
      end
    end
  end

  def test_bad_magic_version_checksum
    [AB, TB].each do |klass|
      blob = blobs[klass]
      assert_tf_error(TF::BadMagic) { klass.deserialize("X" + blob.byteslice(1..)) }
      assert_tf_error(TF::UnsupportedVersion) { klass.deserialize(H.patch_blob(blob, H::OFF_VERSION, [2].pack("S<"))) }
      flipped = blob.dup
      flipped.setbyte(H::OFF_BLOOM_SLICES + 40, flipped.getbyte(H::OFF_BLOOM_SLICES + 40) ^ 0x04)
      assert_tf_error(TF::ChecksumError) { klass.deserialize(flipped) }
    end
  end

  def test_corrupt
    [AB, TB].each do |klass|
      blob = blobs[klass]
      # forged with a valid checksum: the seed is free, k and l are not
      assert_equal 6, klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_SEED, [6].pack("L<"))).seed
      assert_tf_error(TF::Corrupt) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_K, [0].pack("L<"))) }
      assert_tf_error(TF::Corrupt) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_K, [65].pack("L<"))) }
      assert_tf_error(TF::Corrupt) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_L, [0].pack("L<"))) }
      assert_tf_error(TF::Corrupt) { klass.deserialize(H.patch_blob(blob, H::OFF_BLOOM_SLICES, [MAX_U32].pack("L<"))) }
      assert_tf_error(TF::Corrupt) { klass.deserialize(blob + "\x00".b) }
    end
  end
end
