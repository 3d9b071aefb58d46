# frozen_string_literal: true

# Every error path of the Ruby binding: the error classes, bad arguments
# (from the library and from the binding's range checks), closed objects
# (test_recency_sketch.rb), invalid blobs, batch arrays of different lengths.
# A failing call must leave the sketch unchanged.

require_relative "helper"

class TestErrors < Minitest::Test
  def sketch
    s = RS.new(64, 3, seed: 5)
    s.update("k", 100)
    s
  end

  # ---- the classes --------------------------------------------------------

  # Every status of common.h, its name, and the family a caller rescues
  # (docs/conventions.md): the classes raised from C are those.
  def test_one_family_per_status
    assert_equal (-15..-1).to_a, H::FAMILY.keys.map { |name| TF::Native.const_get(:"TF_ERR_#{name}") }.sort
    H::FAMILY.each do |name, family|
      status = TF::Native.const_get(:"TF_ERR_#{name}")
      assert_same family, TF::Error.class_for(status), name
      assert_operator family, :<=, TF::Error
      assert_operator family, :<, StandardError
      assert_equal "TF_ERR_#{name}", TF.status_name(status)
      e = family.new("boom", status)
      assert_equal [status, "TF_ERR_#{name}", "boom"], [e.status, e.status_name, e.message]
      assert_tf_status(name, e)
      assert_equal "TF_ERR_#{name}", family.new(nil, status).message, "default message: the status name"
    end
    families = [TF::InvalidArgumentError, TF::BadBlobError, TF::IncompatibleError, TF::OutOfMemoryError,
                TF::UnavailableError, TF::ClosedError]
    assert_equal families.size + 1, (H::FAMILY.values + [TF::ClosedError]).uniq.size, "each family is its own class"
    families.each { |family| assert_equal TF::Error, family.superclass, family.name }
    # raised without a status, each family carries its usual one
    defaults = { TF::Error => "TF_ERR_INTERNAL", TF::InvalidArgumentError => "TF_ERR_INVALID_ARGUMENT",
                 TF::BadBlobError => "TF_ERR_CORRUPT", TF::IncompatibleError => "TF_ERR_INCOMPATIBLE",
                 TF::OutOfMemoryError => "TF_ERR_OUT_OF_MEMORY", TF::UnavailableError => "TF_ERR_UNAVAILABLE",
                 TF::ClosedError => "TF_ERR_NULL" }
    defaults.each do |family, name|
      e = family.new
      assert_equal [name, name], [e.status_name, e.message], family.name
      assert_equal TF::Native.const_get(name), e.status
    end
    assert_same TF::Error, TF::Error.class_for(-99)
    assert_same TF::Error, TF::Error.class_for(0)
    e = TF::Error.new("x", -99)
    assert_equal [-99, "TF_ERR_UNKNOWN"], [e.status, e.status_name]
    # the families of the statuses only; no class per status any more
    %i[NullError InvalidArgument TooLarge BlobError Truncated Corrupt Incompatible InternalError].each do |old|
      refute TF.const_defined?(old, false), old
    end
  end

  # ---- constructors and sizing -------------------------------------------

  def test_constructor_arguments_refused_by_the_library
    assert_tf_error(:INVALID_ARGUMENT) { RS.new(0, 2) }
    assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 0) }
    assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 33) }
    assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 9, seed: 0, flags: RS::BLOCKED) }
    e = assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 2, seed: 0, flags: 4) }
    assert_match(/flag/i, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 2, seed: 0, flags: 0x8000_0000) }
    assert_tf_error(:TOO_LARGE) { RS.new(MAX_U64, 2) }
    assert_tf_error(:TOO_LARGE) { RS.new(1 << 62, 4) }
    assert_equal 32, RS.new(1, 32).depth
    assert_equal 8, RS.new(1, 8, seed: 0, flags: RS::BLOCKED).depth
  end

  def test_integers_out_of_range_are_refused_not_wrapped
    # uint64_t arguments
    [-1, -(2**64), 2**64, 2**64 + 1, 2**100].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { RS.new(bad, 2) }
      assert_match(/width is out of range/, e.message)
    end
    # uint32_t arguments: 2**32 would wrap to 0, 2**32 + 3 to 3
    [-1, 2**32, 2**32 + 3].each do |bad|
      assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, bad) }
      assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 2, seed: bad) }
      assert_tf_error(:INVALID_ARGUMENT) { RS.new(8, 2, seed: 0, flags: bad) }
    end
    assert_equal 2**32 - 1, RS.new(8, 2, seed: 2**32 - 1).seed
    assert_tf_error(:INVALID_ARGUMENT) { RS.for_target(-5, 0.1) }
    assert_tf_error(:INVALID_ARGUMENT) { RS.dimensions(2**64, 0.1) }
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
    assert_tf_error(:INVALID_ARGUMENT) { RS.for_target(0, 0.1) }
    [0.0, 1.0, -0.5, 1.5, Float::NAN].each do |p|
      assert_tf_error(:INVALID_ARGUMENT) { RS.for_target(100, p) }
      assert_tf_error(:INVALID_ARGUMENT) { RS.dimensions(100, p) }
    end
    assert_tf_error(:INVALID_ARGUMENT) { RS.dimensions(100, 0.1, flags: 4) }
    assert_tf_error(:TOO_LARGE) { RS.dimensions(MAX_U64, 1e-300) }
    assert_tf_error(:TOO_LARGE) { RS.for_target(MAX_U64, 1e-300) }
  end

  # ---- operations ---------------------------------------------------------

  def test_timestamps
    s = sketch
    before = s.serialize
    e = assert_tf_error(:INVALID_ARGUMENT) { s.update("k", 0) }
    refute_match(/out of range/, e.message, "0 is refused by the library, not by the binding")
    [-1, 2**64, -(2**63)].each do |bad|
      e = assert_tf_error(:INVALID_ARGUMENT) { s.update("k", bad) }
      assert_match(/now is out of range/, e.message)
    end
    assert_tf_error(:INVALID_ARGUMENT) { s.pace("k", 0, 10) }
    assert_tf_error(:INVALID_ARGUMENT) { s.pace("k", 10, 0) }
    assert_tf_error(:INVALID_ARGUMENT) { s.pace("k", -10, 5) }
    assert_tf_error(:INVALID_ARGUMENT) { s.pace("k", 10, 2**64) }
    assert_tf_error(:INVALID_ARGUMENT) { s.ttl_insert("k", 0, 10) }
    assert_tf_error(:INVALID_ARGUMENT) { s.ttl_insert("k", 10, 0) }
    assert_tf_error(:INVALID_ARGUMENT) { s.ttl_insert("k", 10, -1) }
    assert_tf_error(:INVALID_ARGUMENT) { s.ttl_maybe_live?("k", 0) }
    assert_tf_error(:INVALID_ARGUMENT) { s.ttl_maybe_live?("k", 2**64) }
    assert_tf_error(:INVALID_ARGUMENT) { s.error_estimate(-1) }
    assert_equal before, s.serialize, "failed calls change nothing"
    s.update("k", MAX_U64) # the largest value is fine
    assert_equal MAX_U64, s.query("k")
  end

  def test_batch_errors_change_nothing
    s = sketch
    before = s.serialize
    e = assert_tf_error(:INVALID_ARGUMENT) { s.update_batch(%w[a b c], [1, 2]) }
    assert_match(/one timestamp per key/, e.message)
    assert_tf_error(:INVALID_ARGUMENT) { s.update_batch(%w[a], [1, 2]) }
    assert_tf_error(:INVALID_ARGUMENT) { s.update_batch([], [1]) }
    # a zero timestamp in the middle: refused by the library, naming the index
    e = assert_tf_error(:INVALID_ARGUMENT) { s.update_batch(%w[a b c], [5, 0, 7]) }
    assert_match(/times\[1\]/, e.message)
    # out of range in the middle: refused by the binding
    e = assert_tf_error(:INVALID_ARGUMENT) { s.update_batch(%w[a b c], [5, 6, -7]) }
    assert_match(/times\[2\]/, e.message)
    keys = Array.new(100) { |i| "k#{i}" }
    times = Array.new(100) { |i| i + 1 }
    times[99] = 0
    assert_tf_error(:INVALID_ARGUMENT) { s.update_batch(keys, times) } # the malloc'ed path
    assert_equal before, s.serialize
    assert_equal [0, 0, 0], s.query_batch(%w[a b c])
  end

  def test_query_batch_count_mismatch_in_the_native_layer
    native = sketch.instance_variable_get(:@native)
    e = assert_tf_error(:INVALID_ARGUMENT) { native.query_batch(%w[a b], 3) }
    assert_match(/one timestamp per key/, e.message)
    assert_equal [100, 0], native.query_batch(%w[k x], 2)
  end

  def test_buffer_too_small_in_the_native_layer
    assert_native_buffer_checks(sketch)
  end

  def test_objects_without_a_handle
    # an object made by allocate has no handle: it reads as closed
    raw = TF::Native::RecencySketchNative.allocate
    assert_closed(/the RecencySketch is closed/) { raw.query("a") }
    assert raw.is_closed
    assert_raises(NoMethodError) { RS.allocate }
  end

  # Where each structure's closed object is checked by assert_closes, which
  # fails when a public method of the class is not called on it: a new
  # structure class fails here until it has such a test.
  CLOSED_CHECKS = {
    "AgeBloom" => %w[test_age_bloom.rb test_bloom_errors.rb],
    "RateLimiter" => %w[test_rate_limiter.rb test_rate_limiter_errors.rb],
    "RecencySketch" => %w[test_recency_sketch.rb],
    "RecencyWindow" => %w[test_recency_window.rb],
    "RotatingCuckoo" => %w[test_rotating_cuckoo.rb],
    "TimeBloom" => %w[test_time_bloom.rb]
  }.freeze

  def test_every_structure_is_checked_closed
    structures = TF.constants.map { |c| TF.const_get(c) }.select { |c| c.is_a?(Class) && c.include?(TF::NativeHandle) }
    assert_equal CLOSED_CHECKS.keys, structures.map { |c| c.name.split("::").last }.sort
    CLOSED_CHECKS.each do |name, files|
      files.each do |file|
        assert_match(/assert_closes\(/, File.read(File.join(__dir__, file)), "#{file} checks a closed #{name}")
      end
    end
  end

  def test_errors_do_not_leak_into_later_calls
    s = sketch
    assert_failures_do_not_stick(-> { s.update("k", 0) }, -> { RS.new(0, 1) }) do
      assert_equal 100, s.query("k")
    end
    s.update("k", 200)
    assert_equal 200, s.query("k")
  end

  # ---- blobs --------------------------------------------------------------

  def blob
    @blob ||= RS.new(16, 2, seed: 3, flags: RS::CONCURRENT).update("b", 42).serialize
  end

  def test_forged_blobs_are_valid_when_untouched
    assert_equal blob, H.patch_blob(blob, H::OFF_SEED, [3].pack("L<")), "same bytes, same checksum"
    t = RS.deserialize(H.patch_blob(blob, H::OFF_SEED, [4].pack("L<")))
    assert_equal 4, t.seed, "a blob forged with a recomputed checksum is accepted"
  end

  def test_truncated
    assert_refuses_truncated(RS, blob)
  end

  def test_bad_magic
    assert_tf_error(:BAD_MAGIC) { RS.deserialize("X" + blob.byteslice(1..)) }
    assert_tf_error(:BAD_MAGIC) { RS.deserialize("\x00".b * blob.bytesize) }
  end

  def test_broken_envelope
    assert_refuses_broken_envelope(RS, blob, flip_at: H::OFF_CELLS + 3)
  end

  def test_unsupported_version
    assert_tf_error(:UNSUPPORTED_VERSION) { RS.deserialize(H.patch_blob(blob, H::OFF_VERSION, [2].pack("S<"))) }
    assert_tf_error(:UNSUPPORTED_VERSION) { RS.deserialize(H.patch_blob(blob, H::OFF_VERSION, [0].pack("S<"))) }
  end

  def test_wrong_kind
    assert_tf_error(:WRONG_KIND) { RS.deserialize(H.patch_blob(blob, H::OFF_KIND, [2].pack("S<"))) }
    assert_tf_error(:WRONG_KIND) { RS.deserialize(H.patch_blob(blob, H::OFF_KIND, [999].pack("S<"))) }
  end

  def test_checksum
    flipped = blob.dup
    flipped.setbyte(H::OFF_CELLS + 3, flipped.getbyte(H::OFF_CELLS + 3) ^ 0x10)
    assert_tf_error(:CHECKSUM) { RS.deserialize(flipped) }
    flipped = blob.dup
    flipped.setbyte(flipped.bytesize - 1, flipped.getbyte(flipped.bytesize - 1) ^ 0x80)
    assert_tf_error(:CHECKSUM) { RS.deserialize(flipped) }
  end

  def test_corrupt
    assert_tf_error(:CORRUPT) { RS.deserialize(H.patch_blob(blob, H::OFF_DEPTH, [0].pack("L<"))) }
    assert_tf_error(:CORRUPT) { RS.deserialize(H.patch_blob(blob, H::OFF_WIDTH, [17].pack("Q<"))) }
    assert_tf_error(:CORRUPT) { RS.deserialize(H.patch_blob(blob, H::OFF_FLAGS, [4 | 1].pack("L<"))) }
    assert_tf_error(:CORRUPT) { RS.deserialize(H.patch_blob(blob, H::OFF_CELL_COUNT, [MAX_U64 / 8].pack("Q<"))) }
    assert_tf_error(:CORRUPT) { RS.deserialize(H.patch_blob(blob, H::OFF_DEPTH, [33].pack("L<"))) }
    # a trailing byte behind a valid checksum
    assert_tf_error(:CORRUPT) { RS.deserialize(blob + "\x00".b) }
  end

  # deserialize(blob, max_memory:) for every structure: the object is made
  # when it fits (its #memory bytes, or 0 for no limit) and refused one byte
  # below with TF_ERR_TOO_LARGE, before anything is allocated.
  def test_deserialize_with_max_memory
    rl = RL.new(5, 1000, 100).set_global_limit(50)
    ex = RL.exact(5, 1000).set_key_limit("vip", 3)
    20.times { |i| [rl, ex].each { |l| l.acquire("key-#{i}", 10 + i) } }
    structures = [RS.new(64, 3, seed: 5).update("k", 9), AB.new(3, 4, 256).add("k"),
                  AB.for_target(100, 0.01, flags: AB::BLOCKED).add("k"), TB.new(3, 4, 256, 100).add("k", 5), rl, ex]
    structures.each do |obj|
      klass = obj.class
      blob = obj.serialize
      memory = klass.deserialize(blob).memory
      assert_operator memory, :>, 0
      [0, memory, memory + 1, MAX_U64].each do |max|
        copy = klass.deserialize(blob, max_memory: max)
        assert_equal [blob, memory], [copy.serialize, copy.memory], "#{klass} within #{max} bytes"
      end
      [memory - 1, 1].each do |max|
        assert_tf_error(:TOO_LARGE, /max_memory/, "#{klass} in #{max} bytes") { klass.deserialize(blob, max_memory: max) }
      end
      [-1, 2**64].each do |bad|
        assert_tf_error(:INVALID_ARGUMENT, /max_memory is out of range/) { klass.deserialize(blob, max_memory: bad) }
      end
      assert_raises(TypeError) { klass.deserialize(blob, max_memory: nil) }
      assert_raises(ArgumentError) { klass.deserialize(blob, memory) }
    end
  end

  def test_every_blob_error_is_a_blob_error
    [
      "",
      "X" + blob.byteslice(1..),
      H.patch_blob(blob, H::OFF_KIND, [2].pack("S<")),
      H.patch_blob(blob, H::OFF_DEPTH, [0].pack("L<"))
    ].each do |bad|
      assert_raises(TF::BadBlobError) { RS.deserialize(bad) }
    end
  end
end
