# frozen_string_literal: true

# The cross-language check: the golden blobs of tests/data (written by the C
# library) read back with every expected answer, and the same sketches
# rebuilt through this binding from the operations of tests/golden.h
# serialize to exactly those bytes. Every binding runs the same check, so a
# blob written by one language is read by all the others.

require_relative "helper"

class TestGolden < Minitest::Test
  RS = TemporalFilters::RecencySketch
  H = TestHelper

  GOLDEN = {
    "recency_sketch_v1" => { flags: 0, width: 256 },
    "recency_sketch_blocked_v1" => { flags: RS::BLOCKED | RS::CONCURRENT, width: 96 }
  }.freeze

  GOLDEN.each do |name, shape|
    define_method("test_read_#{name}") do
      blob = H.read_golden("#{name}.tfb")
      expected = H.read_expected("#{name}.expected")
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
      blob = H.read_golden("#{name}.tfb")
      mine = H.golden_sketch(shape[:flags]).serialize
      assert_equal blob.bytesize, mine.bytesize
      assert_equal blob, mine, "this binding writes the golden bytes"
    end

    define_method("test_checksum_helper_on_#{name}") do
      blob = H.read_golden("#{name}.tfb")
      body = blob.byteslice(0, blob.bytesize - 8)
      assert_equal blob.byteslice(-8, 8).unpack1("Q<"), H.murmur3_x64_128_low(body)
    end
  end

  def test_batch_rebuild_matches_the_golden_blob
    ops = []
    200.times { |i| ops << ["key-#{i}", 1000 + 7 * i] }
    (0...200).step(3) { |i| ops << ["key-#{i}", i.odd? ? 5000 + i : 500 + i] }
    ops << [H::GOLDEN_BINARY_KEY, 123_456_789]
    s = RS.new(256, 3, 42)
    s.update_batch(ops.map(&:first), ops.map(&:last))
    assert_equal H.read_golden("recency_sketch_v1.tfb"), s.serialize
  end
end
