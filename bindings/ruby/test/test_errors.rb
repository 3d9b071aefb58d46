# frozen_string_literal: true

# Every error path of the Ruby binding: the error classes, bad arguments
# (from the library and from the binding's range checks), closed objects
# (test_recency_sketch.rb), invalid blobs, batch arrays of different lengths.
# A failing call must leave the sketch unchanged.

require_relative "helper"

class TestErrors < Minitest::Test
  RS = TemporalFilters::RecencySketch
  TF = TemporalFilters
  H = TestHelper
  MAX_U64 = 2**64 - 1

  STATUS_CLASSES = {
    -1 => [TF::NullError, "TF_ERR_NULL"],
    -2 => [TF::InvalidArgument, "TF_ERR_INVALID_ARGUMENT"],
    -3 => [TF::OutOfMemory, "TF_ERR_OUT_OF_MEMORY"],
    -4 => [TF::TooLarge, "TF_ERR_TOO_LARGE"],
    -5 => [TF::BufferTooSmall, "TF_ERR_BUFFER_TOO_SMALL"],
    -6 => [TF::Truncated, "TF_ERR_TRUNCATED"],
    -7 => [TF::BadMagic, "TF_ERR_BAD_MAGIC"],
    -8 => [TF::UnsupportedVersion, "TF_ERR_UNSUPPORTED_VERSION"],
    -9 => [TF::WrongKind, "TF_ERR_WRONG_KIND"],
    -10 => [TF::ChecksumError, "TF_ERR_CHECKSUM"],
    -11 => [TF::Corrupt, "TF_ERR_CORRUPT"],
    -12 => [TF::Incompatible, "TF_ERR_INCOMPATIBLE"],
    -13 => [TF::InternalError, "TF_ERR_INTERNAL"]
  }.freeze

  # Asserts that the block raises exactly `klass`, with the status, its name
  # and a message from the library; returns the error.
  def assert_tf_error(klass, &block)
    e = assert_raises(TF::Error, &block)
    assert_instance_of klass, e
    assert_equal klass::STATUS, e.status
    assert_equal STATUS_CLASSES.fetch(klass::STATUS)[1], e.status_name
    refute_empty e.message
    e
  end

  def sketch
    s = RS.new(64, 3, 5)
    s.update("k", 100)
    s
  end

  # ---- the classes --------------------------------------------------------

  def test_one_class_per_status
    STATUS_CLASSES.each do |status, (klass, name)|
      assert_same klass, TF::Error.class_for(status)
      assert_equal status, klass::STATUS
      assert_operator klass, :<, TF::Error
      assert_operator klass, :<, StandardError
      assert_equal name, TF.status_name(status)
      e = klass.new("boom")
      assert_equal [status, name, "boom"], [e.status, e.status_name, e.message]
      assert_equal name, klass.new.message, "default message: the status name"
      assert_equal status, TF::Native.const_get(name), "the constants of the shared interface agree"
    end
    assert_equal STATUS_CLASSES.size, STATUS_CLASSES.values.map(&:first).uniq.size
    assert_same TF::Error, TF::Error.class_for(-99)
    assert_same TF::Error, TF::Error.class_for(0)
    e = TF::Error.new("x", -99)
    assert_equal [-99, "TF_ERR_UNKNOWN"], [e.status, e.status_name]
    blob_errors = [TF::Truncated, TF::BadMagic, TF::UnsupportedVersion, TF::WrongKind, TF::ChecksumError, TF::Corrupt]
    STATUS_CLASSES.each_value do |klass, _|
      assert_equal blob_errors.include?(klass), (klass < TF::BlobError) == true, klass.name
    end
  end

  # ---- constructors and sizing -------------------------------------------

  def test_constructor_arguments_refused_by_the_library
    assert_tf_error(TF::InvalidArgument) { RS.new(0, 2) }
    assert_tf_error(TF::InvalidArgument) { RS.new(8, 0) }
    assert_tf_error(TF::InvalidArgument) { RS.new(8, 33) }
    assert_tf_error(TF::InvalidArgument) { RS.new(8, 9, 0, RS::BLOCKED) }
    e = assert_tf_error(TF::InvalidArgument) { RS.new(8, 2, 0, 4) }
    assert_match(/flag/i, e.message)
    assert_tf_error(TF::InvalidArgument) { RS.new(8, 2, 0, 0x8000_0000) }
    assert_tf_error(TF::TooLarge) { RS.new(MAX_U64, 2) }
    assert_tf_error(TF::TooLarge) { RS.new(1 << 62, 4) }
    assert_equal 32, RS.new(1, 32).depth
    assert_equal 8, RS.new(1, 8, 0, RS::BLOCKED).depth
  end

  def test_integers_out_of_range_are_refused_not_wrapped
    # uint64_t arguments
    [-1, -(2**64), 2**64, 2**64 + 1, 2**100].each do |bad|
      e = assert_tf_error(TF::InvalidArgument) { RS.new(bad, 2) }
      assert_match(/width is out of range/, e.message)
    end
    # uint32_t arguments: 2**32 would wrap to 0, 2**32 + 3 to 3
    [-1, 2**32, 2**32 + 3].each do |bad|
      assert_tf_error(TF::InvalidArgument) { RS.new(8, bad) }
      assert_tf_error(TF::InvalidArgument) { RS.new(8, 2, bad) }
      assert_tf_error(TF::InvalidArgument) { RS.new(8, 2, 0, bad) }
    end
    assert_equal 2**32 - 1, RS.new(8, 2, 2**32 - 1).seed
    assert_tf_error(TF::InvalidArgument) { RS.for_target(-5, 0.1) }
    assert_tf_error(TF::InvalidArgument) { RS.dimensions(2**64, 0.1) }
  end

  def test_arguments_of_the_wrong_class
    assert_raises(TypeError) { RS.new(8.0, 2) }
    assert_raises(TypeError) { RS.new("8", 2) }
    assert_raises(TypeError) { RS.new(nil, 2) }
    assert_raises(TypeError) { RS.for_target(100, "0.1") }
    s = sketch
    assert_raises(TypeError) { s.update(:k, 1) }
    assert_raises(TypeError) { s.update(nil, 1) }
    assert_raises(TypeError) { s.update(42, 1) }
    assert_raises(TypeError) { s.query(nil) }
    assert_raises(TypeError) { s.update("k", 1.5) }
    assert_raises(TypeError) { s.update("k", "1") }
    assert_raises(TypeError) { s.pace("k", nil, 1) }
    assert_raises(TypeError) { RS.deserialize(nil) }
    assert_raises(TypeError) { s.update_batch("k", [1]) }
    assert_raises(TypeError) { s.update_batch(["k"], 1) }
    assert_raises(TypeError) { s.update_batch(["k", 2], [1, 1]) }
    assert_raises(TypeError) { s.update_batch(["k"], [1.0]) }
    assert_raises(TypeError) { s.query_batch("k") }
    assert_raises(TypeError) { s.query_batch([nil]) }
    assert_raises(ArgumentError) { s.update("k") }
    assert_equal 100, s.query("k"), "nothing changed"
  end

  def test_sizing_errors
    assert_tf_error(TF::InvalidArgument) { RS.for_target(0, 0.1) }
    [0.0, 1.0, -0.5, 1.5, Float::NAN].each do |p|
      assert_tf_error(TF::InvalidArgument) { RS.for_target(100, p) }
      assert_tf_error(TF::InvalidArgument) { RS.dimensions(100, p) }
    end
    assert_tf_error(TF::InvalidArgument) { RS.dimensions(100, 0.1, 4) }
    assert_tf_error(TF::TooLarge) { RS.dimensions(MAX_U64, 1e-300) }
    assert_tf_error(TF::TooLarge) { RS.for_target(MAX_U64, 1e-300) }
  end

  # ---- operations ---------------------------------------------------------

  def test_timestamps
    s = sketch
    before = s.serialize
    e = assert_tf_error(TF::InvalidArgument) { s.update("k", 0) }
    refute_match(/out of range/, e.message, "0 is refused by the library, not by the binding")
    [-1, 2**64, -(2**63)].each do |bad|
      e = assert_tf_error(TF::InvalidArgument) { s.update("k", bad) }
      assert_match(/now is out of range/, e.message)
    end
    assert_tf_error(TF::InvalidArgument) { s.pace("k", 0, 10) }
    assert_tf_error(TF::InvalidArgument) { s.pace("k", 10, 0) }
    assert_tf_error(TF::InvalidArgument) { s.pace("k", -10, 5) }
    assert_tf_error(TF::InvalidArgument) { s.pace("k", 10, 2**64) }
    assert_tf_error(TF::InvalidArgument) { s.ttl_insert("k", 0, 10) }
    assert_tf_error(TF::InvalidArgument) { s.ttl_insert("k", 10, 0) }
    assert_tf_error(TF::InvalidArgument) { s.ttl_insert("k", 10, -1) }
    assert_tf_error(TF::InvalidArgument) { s.ttl_maybe_live?("k", 0) }
    assert_tf_error(TF::InvalidArgument) { s.ttl_maybe_live?("k", 2**64) }
    assert_tf_error(TF::InvalidArgument) { s.error_estimate(-1) }
    assert_equal before, s.serialize, "failed calls change nothing"
    s.update("k", MAX_U64) # the largest value is fine
    assert_equal MAX_U64, s.query("k")
  end

  def test_batch_errors_change_nothing
    s = sketch
    before = s.serialize
    e = assert_tf_error(TF::InvalidArgument) { s.update_batch(%w[a b c], [1, 2]) }
    assert_match(/one timestamp per key/, e.message)
    assert_tf_error(TF::InvalidArgument) { s.update_batch(%w[a], [1, 2]) }
    assert_tf_error(TF::InvalidArgument) { s.update_batch([], [1]) }
    # a zero timestamp in the middle: refused by the library, naming the index
    e = assert_tf_error(TF::InvalidArgument) { s.update_batch(%w[a b c], [5, 0, 7]) }
    assert_match(/times\[1\]/, e.message)
    # out of range in the middle: refused by the binding
    e = assert_tf_error(TF::InvalidArgument) { s.update_batch(%w[a b c], [5, 6, -7]) }
    assert_match(/times\[2\]/, e.message)
    keys = Array.new(100) { |i| "k#{i}" }
    times = Array.new(100) { |i| i + 1 }
    times[99] = 0
    assert_tf_error(TF::InvalidArgument) { s.update_batch(keys, times) } # the malloc'ed path
    assert_equal before, s.serialize
    assert_equal [0, 0, 0], s.query_batch(%w[a b c])
  end

  def test_query_batch_count_mismatch_in_the_native_layer
    native = sketch.instance_variable_get(:@native)
    e = assert_tf_error(TF::InvalidArgument) { native.query_batch(%w[a b], 3) }
    assert_match(/one timestamp per key/, e.message)
    assert_equal [100, 0], native.query_batch(%w[k x], 2)
  end

  def test_buffer_too_small_in_the_native_layer
    native = sketch.instance_variable_get(:@native)
    size = native.serialized_size
    assert_tf_error(TF::BufferTooSmall) { native.serialize_into(size - 1) }
    assert_tf_error(TF::BufferTooSmall) { native.serialize_into(size + 1) }
    assert_equal sketch.serialize, native.serialize_into(size)
  end

  def test_objects_without_a_handle
    raw = TF::Native::RecencySketchNative.allocate
    e = assert_tf_error(TF::NullError) { raw.query("a") }
    assert_match(/no native handle/, e.message)
    assert_raises(NoMethodError) { RS.allocate }
  end

  def test_errors_do_not_leak_into_later_calls
    s = sketch
    assert_raises(TF::InvalidArgument) { s.update("k", 0) }
    assert_equal 100, s.query("k")
    s.update("k", 200)
    assert_equal 200, s.query("k")
  end

  # ---- blobs --------------------------------------------------------------

  def blob
    @blob ||= RS.new(16, 2, 3, RS::CONCURRENT).update("b", 42).serialize
  end

  def test_forged_blobs_are_valid_when_untouched
    assert_equal blob, H.patch_blob(blob, H::OFF_SEED, [3].pack("L<")), "same bytes, same checksum"
    t = RS.deserialize(H.patch_blob(blob, H::OFF_SEED, [4].pack("L<")))
    assert_equal 4, t.seed, "a blob forged with a recomputed checksum is accepted"
  end

  def test_truncated
    assert_tf_error(TF::Truncated) { RS.deserialize("") }
    assert_tf_error(TF::Truncated) { RS.deserialize("TFLT") }
    assert_tf_error(TF::Truncated) { RS.deserialize(blob.byteslice(0, 27)) }
    assert_tf_error(TF::Truncated) { RS.deserialize(blob.byteslice(0, blob.bytesize - 1)) }
    assert_tf_error(TF::Truncated) { RS.deserialize(blob.byteslice(0, blob.bytesize - 9)) }
  end

  def test_bad_magic
    assert_tf_error(TF::BadMagic) { RS.deserialize("X" + blob.byteslice(1..)) }
    assert_tf_error(TF::BadMagic) { RS.deserialize("\x00".b * blob.bytesize) }
  end

  def test_unsupported_version
    assert_tf_error(TF::UnsupportedVersion) { RS.deserialize(H.patch_blob(blob, H::OFF_VERSION, [2].pack("S<"))) }
    assert_tf_error(TF::UnsupportedVersion) { RS.deserialize(H.patch_blob(blob, H::OFF_VERSION, [0].pack("S<"))) }
  end

  def test_wrong_kind
    assert_tf_error(TF::WrongKind) { RS.deserialize(H.patch_blob(blob, H::OFF_KIND, [2].pack("S<"))) }
    assert_tf_error(TF::WrongKind) { RS.deserialize(H.patch_blob(blob, H::OFF_KIND, [999].pack("S<"))) }
  end

  def test_checksum
    flipped = blob.dup
    flipped.setbyte(H::OFF_CELLS + 3, flipped.getbyte(H::OFF_CELLS + 3) ^ 0x10)
    assert_tf_error(TF::ChecksumError) { RS.deserialize(flipped) }
    flipped = blob.dup
    flipped.setbyte(flipped.bytesize - 1, flipped.getbyte(flipped.bytesize - 1) ^ 0x80)
    assert_tf_error(TF::ChecksumError) { RS.deserialize(flipped) }
  end

  def test_corrupt
    assert_tf_error(TF::Corrupt) { RS.deserialize(H.patch_blob(blob, H::OFF_DEPTH, [0].pack("L<"))) }
    assert_tf_error(TF::Corrupt) { RS.deserialize(H.patch_blob(blob, H::OFF_WIDTH, [17].pack("Q<"))) }
    assert_tf_error(TF::Corrupt) { RS.deserialize(H.patch_blob(blob, H::OFF_FLAGS, [4 | 1].pack("L<"))) }
    assert_tf_error(TF::Corrupt) { RS.deserialize(H.patch_blob(blob, H::OFF_CELL_COUNT, [MAX_U64 / 8].pack("Q<"))) }
    assert_tf_error(TF::Corrupt) { RS.deserialize(H.patch_blob(blob, H::OFF_DEPTH, [33].pack("L<"))) }
    # a trailing byte behind a valid checksum
    assert_tf_error(TF::Corrupt) { RS.deserialize(blob + "\x00".b) }
  end

  def test_every_blob_error_is_a_blob_error
    [
      "",
      "X" + blob.byteslice(1..),
      H.patch_blob(blob, H::OFF_KIND, [2].pack("S<")),
      H.patch_blob(blob, H::OFF_DEPTH, [0].pack("L<"))
    ].each do |bad|
      assert_raises(TF::BlobError) { RS.deserialize(bad) }
    end
  end
end
