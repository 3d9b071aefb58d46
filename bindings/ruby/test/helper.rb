# frozen_string_literal: true

# Shared by the Ruby suites: minitest, the binding, the names they use
# (Names), the assertions of what every structure promises (Assertions:
# error families, closing, serialization, broken blobs, bad times, memory
# given back, threads), the golden data (and the operations of
# tests/util/golden.h behind it) and a MurmurHash3 used to forge blobs with valid
# checksums.
#
# Run one suite by hand from the repository root:
#   ruby -Ibindings/ruby/lib -I<build>/bindings/ruby bindings/ruby/test/test_errors.rb

require "minitest/autorun"
require "temporalfilters"

module TestHelper
  # The names every suite uses (with Assertions, in every Minitest::Test).
  module Names
    TF = TemporalFilters
    RS = TF::RecencySketch
    AB = TF::AgeBloom
    TB = TF::TimeBloom
    RL = TF::RateLimiter
    RC = TF::RotatingCuckoo
    RW = TF::RecencyWindow
    H = TestHelper
    RETRY_NEVER = TF::RETRY_NEVER
    MAX_U32 = 2**32 - 1
    MAX_U64 = 2**64 - 1
  end

  include Names

  # The family of every status (docs/conventions.md, "The bindings"), by
  # the status's name without TF_ERR_.
  FAMILY = {
    NULL: TF::InvalidArgumentError,
    INVALID_ARGUMENT: TF::InvalidArgumentError,
    OUT_OF_MEMORY: TF::OutOfMemoryError,
    TOO_LARGE: TF::InvalidArgumentError,
    BUFFER_TOO_SMALL: TF::Error,
    TRUNCATED: TF::BadBlobError,
    BAD_MAGIC: TF::BadBlobError,
    UNSUPPORTED_VERSION: TF::BadBlobError,
    WRONG_KIND: TF::BadBlobError,
    CHECKSUM: TF::BadBlobError,
    CORRUPT: TF::BadBlobError,
    INCOMPATIBLE: TF::IncompatibleError,
    INTERNAL: TF::Error,
    TIMEOUT: TF::UnavailableError,
    UNAVAILABLE: TF::UnavailableError
  }.freeze

  # Assertions every suite uses (included into Minitest::Test below).
  module Assertions
    include Names

    # Asserts that `error` is exactly the family of `status` (a key of
    # FAMILY, e.g. :TOO_LARGE) and carries that status and its name.
    def assert_tf_status(status, error, msg = nil)
      assert_instance_of FAMILY.fetch(status), error, msg
      assert_equal TF::Native.const_get(:"TF_ERR_#{status}"), error.status, msg
      assert_equal "TF_ERR_#{status}", error.status_name, msg
    end

    # Asserts that the block raises the family of `status` with that status,
    # its name and a message (matching `pattern` when given); returns the
    # error.
    def assert_tf_error(status, pattern = nil, msg = nil, &block)
      e = assert_raises(TF::Error, msg, &block)
      assert_tf_status(status, e, msg)
      refute_empty e.message
      assert_match pattern, e.message, msg if pattern
      e
    end

    # Asserts that the block raises ClosedError (status TF_ERR_NULL) with a
    # message matching `pattern`; returns the error.
    def assert_closed(pattern = /closed/, msg = nil, &block)
      e = assert_raises(TF::ClosedError, msg, &block)
      assert_instance_of TF::ClosedError, e, msg
      assert_equal [TF::Native::TF_ERR_NULL, "TF_ERR_NULL"], [e.status, e.status_name], msg
      assert_match pattern, e.message, msg
      e
    end

    # ---- what every structure promises ----------------------------------

    # The public methods of our classes that answer on a closed object, each
    # for a reason (assert_closes checks what they answer): every other
    # public method must raise ClosedError.
    WORK_WHEN_CLOSED = {
      close: "idempotent: closing again is a no-op",
      closed?: "the question a caller asks before any other call",
      inspect: "shows \"#<Class closed>\" (irb and error messages call it on any object)"
    }.freeze

    # The public instance methods of obj's class that our code defines (the
    # class and the modules of ours it includes, e.g. NativeHandle and
    # Membership; not Object's nor Kernel's).
    def own_public_methods(klass)
      klass.ancestors.select { |mod| mod.name&.start_with?("TemporalFilters::") }
           .flat_map { |mod| mod.public_instance_methods(false) }.uniq
    end

    # Closes obj (open) and asserts the life cycle every class shares:
    # closed?, close returning nil and idempotent, inspect, and ClosedError
    # ("the <Class> is closed") from every call afterwards: `calls` (method
    # name => its arguments) and those of every class (dup, clone; the
    # structures' serialize, memory, _dump and Marshal; info and the reader
    # of each Info member; stats and the readers of its members when stats
    # takes no argument).
    # Every public method of the class (own_public_methods) must be among
    # them or in WORK_WHEN_CLOSED: a method added later and forgotten in
    # `calls` fails here, by name.
    def assert_closes(obj, calls = {})
      klass = obj.class
      label = /\bthe #{klass.name.split("::").last} is closed/
      refute obj.closed?
      assert_nil obj.close
      assert obj.closed?
      assert_nil obj.close, "close again is a no-op"
      assert obj.closed?
      assert_equal "#<#{klass} closed>", obj.inspect
      every = {}
      %i[serialize memory].each { |name| every[name] = [] if obj.respond_to?(name) }
      every[:_dump] = [-1] if obj.respond_to?(:_dump)
      [[:Info, :info], [:Stats, :stats]].each do |struct, source|
        next unless klass.const_defined?(struct, false) && klass.instance_method(source).arity.zero?

        every[source] = []
        klass.const_get(struct).members.each { |m| every[m] = [] if obj.respond_to?(m) }
      end
      every = every.merge(calls)
      missing = own_public_methods(klass) - every.keys - WORK_WHEN_CLOSED.keys
      assert_empty missing.sort, "public methods of #{klass} never called on a closed object: add them to the calls"
      every.each do |name, args|
        assert_closed(label, name.to_s) { obj.public_send(name, *args) }
      end
      %i[dup clone].each { |copy| assert_closed(label, copy.to_s) { obj.public_send(copy) } }
      assert_closed(label, "Marshal.dump") { Marshal.dump(obj) } if obj.respond_to?(:_dump)
    end

    # Asserts what serialization promises for obj: a binary String, which
    # deserialize (also from the same bytes labelled UTF-8) turns into an
    # object of obj's class with the same info writing the same bytes; dup,
    # clone and Marshal give copies writing the same bytes. Returns [blob,
    # the deserialized copy].
    def assert_round_trip(obj)
      klass = obj.class
      blob = obj.serialize
      assert_equal Encoding::BINARY, blob.encoding
      copy = klass.deserialize(blob)
      assert_instance_of klass, copy
      assert_equal obj.info, copy.info if obj.respond_to?(:info)
      assert_equal blob, copy.serialize, "read and written back unchanged"
      assert_equal blob, klass.deserialize(blob.dup.force_encoding("UTF-8")).serialize, "any String of those bytes"
      { dup: obj.dup, clone: obj.clone, marshal: Marshal.load(Marshal.dump(obj)) }.each do |how, other|
        assert_instance_of klass, other, how.to_s
        refute_same obj, other
        assert_equal blob, other.serialize, how.to_s
      end
      [blob, copy]
    end

    # Asserts that value is a frozen `struct` (an Info or Stats) with the
    # members `expected` (a Hash), and that obj's reader of each member (if
    # it has one) answers the same.
    def assert_frozen_struct(struct, expected, value, obj = nil)
      assert_instance_of struct, value
      assert_predicate value, :frozen?
      assert_raises(FrozenError) { value[0] = value[0] }
      assert_equal expected, value.to_h
      struct.members.each { |m| assert_equal value[m], obj.public_send(m), m if obj&.respond_to?(m) }
    end

    # The native layer's serialize_into takes a buffer size of at least
    # serialized_size and returns [bytes written, buffer]: a shorter one is
    # BUFFER_TOO_SMALL, a status of no family; a longer one holds the blob
    # in its first serialized_size bytes (serialize's retry with room to
    # spare relies on it).
    def assert_native_buffer_checks(obj)
      native = obj.instance_variable_get(:@native)
      size = native.serialized_size
      [size - 1, 0].each do |wrong|
        assert_tf_error(:BUFFER_TOO_SMALL) { native.serialize_into(wrong) }
      end
      assert_equal [size, obj.serialize], native.serialize_into(size)
      written, longer = native.serialize_into(size + 100)
      assert_equal size, written
      assert_equal size + 100, longer.bytesize
      assert_equal obj.serialize, longer.byteslice(0, written)
    end

    # Asserts that klass.deserialize refuses blob (a valid blob of klass)
    # cut short: the usual cuts (TRUNCATED) and every prefix, `step` apart
    # (BadBlobError; the sanitized build checks the reads too).
    def assert_refuses_truncated(klass, blob, step: 1)
      ["", "TFLT", blob.byteslice(0, 27), blob.byteslice(0, blob.bytesize - 1), blob.byteslice(0, blob.bytesize - 9),
       blob.byteslice(0, blob.bytesize / 2)].each do |cut|
        assert_tf_error(:TRUNCATED, nil, "#{cut.bytesize} bytes") { klass.deserialize(cut) }
      end
      (0...blob.bytesize).step(step) do |n|
        assert_raises(TF::BadBlobError, "#{n} bytes") { klass.deserialize(blob.byteslice(0, n)) }
      end
    end

    # Asserts that klass.deserialize refuses blob (a valid blob of klass)
    # broken in its envelope: the magic (BAD_MAGIC), the version 0 or 2
    # (UNSUPPORTED_VERSION), the kind 999 (WRONG_KIND), a flipped bit at
    # `flip_at` or in the checksum (CHECKSUM), a byte behind the checksum
    # (CORRUPT).
    def assert_refuses_broken_envelope(klass, blob, flip_at:)
      assert_tf_error(:BAD_MAGIC) { klass.deserialize("X" + blob.byteslice(1..)) }
      assert_tf_error(:BAD_MAGIC) { klass.deserialize("\x00".b * blob.bytesize) }
      [0, 2].each do |version|
        patched = TestHelper.patch_blob(blob, OFF_VERSION, [version].pack("S<"))
        assert_tf_error(:UNSUPPORTED_VERSION) { klass.deserialize(patched) }
      end
      assert_tf_error(:WRONG_KIND) { klass.deserialize(TestHelper.patch_blob(blob, OFF_KIND, [999].pack("S<"))) }
      [flip_at, blob.bytesize - 1].each do |at|
        flipped = blob.dup
        flipped.setbyte(at, flipped.getbyte(at) ^ 0x10)
        assert_tf_error(:CHECKSUM, nil, "bit 4 of byte #{at}") { klass.deserialize(flipped) }
      end
      assert_tf_error(:CORRUPT) { klass.deserialize(blob + "\x00".b) }
    end

    # Asserts that every call of `calls` (name => a lambda taking now)
    # refuses now = 0 (the library: NEVER is no time) and Integers outside
    # 0...2**64 (the binding: never wrapped) with InvalidArgumentError.
    def assert_refuses_bad_times(calls)
      calls.each do |name, call|
        e = assert_tf_error(:INVALID_ARGUMENT, nil, name.to_s) { call.call(0) }
        refute_match(/out of range/, e.message, "#{name}: 0 is refused by the library, not by the binding")
        [-1, -1000, -(2**63), 2**64, 2**70].each do |bad|
          assert_tf_error(:INVALID_ARGUMENT, /now is out of range/, "#{name}(#{bad})") { call.call(bad) }
        end
      end
    end

    # Asserts that each failing call (a lambda raising InvalidArgumentError)
    # leaves no error behind: the block, run after each, answers normally.
    # (The binding takes the pending status of every call right after it.)
    def assert_failures_do_not_stick(*failing)
      failing.each do |call|
        assert_tf_error(:INVALID_ARGUMENT) { call.call }
        yield
      end
    end

    # Asserts that obj, built through this binding by the operations of
    # tests/util/golden.h, serializes to exactly the bytes of <name>.tfb.
    def assert_writes_golden(name, obj)
      blob = TestHelper.read_golden("#{name}.tfb")
      mine = obj.serialize
      assert_equal blob.bytesize, mine.bytesize
      assert_equal blob, mine, "this binding writes the golden bytes of #{name}"
    end

    # Asserts that the blob's checksum (its last 8 bytes) is what
    # TestHelper.murmur3_x64_128_low computes: the helper forges blobs the
    # library accepts.
    def assert_checksum_helper_agrees(blob, msg = nil)
      body = blob.byteslice(0, blob.bytesize - 8)
      assert_equal blob.byteslice(-8, 8).unpack1("Q<"), TestHelper.murmur3_x64_128_low(body), msg
    end

    # How many MiB the process grew by while the block ran `times` times
    # (called with the index), with a full GC every `gc_every` runs and
    # after: objects the block drops must have been freed by then.
    def rss_growth_mib(times, gc_every: 10)
      GC.start
      base = TestHelper.rss_mib
      times.times do |i|
        yield i
        GC.start if i % gc_every == gc_every - 1
      end
      GC.start
      TestHelper.rss_mib - base
    end

    # Runs the block in `count` threads at once, each with its index and its
    # own Random (seeded seed + index); returns the blocks' values in order
    # (an exception in a thread is raised here).
    def in_threads(count, seed: 0)
      Array.new(count) { |t| Thread.new { yield t, Random.new(seed + t) } }.map(&:value)
    end
  end

  GOLDEN_DIR = ENV.fetch("TF_GOLDEN_DIR") { File.expand_path("../../../tests/data", __dir__) }

  # The process's resident memory in MiB, for the tests that check that
  # the garbage collector frees native handles. Read from /proc: the project
  # targets Linux, where a missing /proc is an error, not a reason to skip.
  def self.rss_mib
    File.read("/proc/self/status")[/^VmRSS:\s+(\d+)/, 1].to_i / 1024
  end

  # The operations of tests/util/golden.h, through this binding.
  GOLDEN_BINARY_KEY = [0x00, 0x62, 0x69, 0x6e, 0x00, 0xff, 0x7f].pack("C*")

  def self.golden_sketch(flags)
    width = (flags & RS::BLOCKED).zero? ? 256 : 96
    s = RS.new(width, 3, seed: 42, flags: flags)
    200.times { |i| s.update("key-#{i}", 1000 + 7 * i) }
    (0...200).step(3) { |i| s.update("key-#{i}", i.odd? ? 5000 + i : 500 + i) }
    s.update(GOLDEN_BINARY_KEY, 123_456_789)
    s
  end

  # golden_age_bloom(0) of tests/util/golden.h: age_bloom_v1.tfb; with
  # blocked, golden_age_bloom(TF_AGE_BLOOM_BLOCKED): the same operations on
  # the blocked layout, age_bloom_blocked_v1.tfb.
  def self.golden_age_bloom(blocked: false)
    f = AB.new(3, 4, 200, seed: 42, flags: blocked ? AB::BLOCKED : 0)
    300.times { |i| f.add("key-#{i}") }
    (290...320).each { |i| f.add_if_absent("key-#{i}") }
    f.add(GOLDEN_BINARY_KEY)
    f
  end

  # golden_time_bloom(0) of tests/util/golden.h: time_bloom_v1.tfb.
  def self.golden_time_bloom
    f = TemporalFilters::TimeBloom.new(3, 4, 128, 1000, seed: 42)
    245.times do |i|
      now = if i < 200 then 1000 + 10 * i
            elsif i < 240 then 3000 # a burst at one timestamp
            else 2500 # a clock that went backwards
            end
      f.add("key-#{i}", now)
    end
    [*195..199, *245..249].each { |i| f.add_if_absent("key-#{i}", 3000) }
    f.add(GOLDEN_BINARY_KEY, 3000)
    f
  end

  # golden_rotating_cuckoo(flags) of tests/util/golden.h:
  # rotating_cuckoo_v1.tfb (flags 0) and rotating_cuckoo_three_way_v1.tfb
  # (THREE_WAY).
  def self.golden_rotating_cuckoo(flags)
    f = TemporalFilters::RotatingCuckoo.new(table_slots: 16, ttl: 2000, max_tables: 4, seed: 42, flags: flags)
    80.times { |i| f.add_if_absent("key-#{i}", 1000 + 10 * i) }
    (0...80).step(7) { |i| f.remove("key-#{i}", 1800) }
    (75...85).each { |i| f.add("key-#{i}", 1500) } # a clock that went backwards
    f.add(GOLDEN_BINARY_KEY, 1800)
    f
  end

  # golden_recency_window(flags) of tests/util/golden.h: window 64, inv_eps
  # 4, seed 42, the mode (and delta: 0.01 for recency_window_approx_v1.tfb);
  # "key-i" inserted for i = 0 .. 99, insert_report of "key-i" for i = 0, 5,
  # .. 95, the binary key inserted. batch: the same through the batch calls.
  def self.golden_recency_window(mode, delta, batch: false)
    w = TemporalFilters::RecencyWindow.new(window: 64, inv_eps: 4, seed: 42, mode: mode, delta: delta)
    first = Array.new(100) { |i| "key-#{i}" }
    again = (0...100).step(5).map { |i| "key-#{i}" }
    if batch
      w.insert_batch(first)
      w.insert_report_batch(again)
      w.insert_batch([GOLDEN_BINARY_KEY])
    else
      first.each { |k| w.insert(k) }
      again.each { |k| w.insert_report(k) }
      w.insert(GOLDEN_BINARY_KEY)
    end
    w
  end

  # golden_rate_limiter(flags) of tests/util/golden.h: rate_limiter_v1.tfb
  # (exact = false, flags 0) and rate_limiter_exact_v1.tfb (exact = true,
  # TF_RATE_LIMITER_EXACT).
  def self.golden_rate_limiter(exact)
    rl = TemporalFilters::RateLimiter.new(5, 1000, 100, flags: exact ? TemporalFilters::RateLimiter::EXACT : 0)
    rl.set_global_limit(120)
    rl.set_key_limit("key-7", 9)
    300.times { |i| rl.acquire("key-#{i % 30}", 1000 + 7 * i, (i % 3).zero? ? 2 : 1) }
    rl.refund("key-3", 3000, 1)
    rl.acquire(GOLDEN_BINARY_KEY, 2990, 2)
    rl
  end

  def self.read_golden(name)
    File.binread(File.join(GOLDEN_DIR, name))
  end

  # The golden blob <name>.tfb and the rows of <name>.expected.
  def self.golden(name)
    [read_golden("#{name}.tfb"), read_expected_rows("#{name}.expected")]
  end

  # The rows of a .expected file: the key (a binary String) and the other
  # columns as Integers, e.g. [[key, answer], ...] for a sketch's,
  # [[key, now, present], ...] for time_bloom_v1.expected.
  def self.read_expected_rows(name)
    File.readlines(File.join(GOLDEN_DIR, name), chomp: true).filter_map do |line|
      next if line.start_with?("#") || line.strip.empty?

      hex, *numbers = line.split
      [[hex].pack("H*"), *numbers.map { |n| Integer(n, 10) }]
    end
  end

  # ---- blobs ------------------------------------------------------------

  MASK64 = (1 << 64) - 1

  def self.rotl64(x, r)
    ((x << r) | (x >> (64 - r))) & MASK64
  end

  def self.fmix64(k)
    k ^= k >> 33
    k = (k * 0xff51afd7ed558ccd) & MASK64
    k ^= k >> 33
    k = (k * 0xc4ceb9fe1a85ec53) & MASK64
    k ^ (k >> 33)
  end

  C1 = 0x87c37b91114253d5
  C2 = 0x4cf5ad432745937f

  def self.mix_k1(k1)
    (rotl64((k1 * C1) & MASK64, 31) * C2) & MASK64
  end

  def self.mix_k2(k2)
    (rotl64((k2 * C2) & MASK64, 33) * C1) & MASK64
  end

  # The low 64 bits of MurmurHash3 x64_128 of data with seed 0: the blob
  # checksum of the wire format (README "Wire format").
  def self.murmur3_x64_128_low(data)
    bytes = data.b
    h1 = 0
    h2 = 0
    nblocks = bytes.bytesize / 16
    nblocks.times do |b|
      k1, k2 = bytes.byteslice(16 * b, 16).unpack("Q<Q<")
      h1 ^= mix_k1(k1)
      h1 = (rotl64(h1, 27) + h2) & MASK64
      h1 = (h1 * 5 + 0x52dce729) & MASK64
      h2 ^= mix_k2(k2)
      h2 = (rotl64(h2, 31) + h1) & MASK64
      h2 = (h2 * 5 + 0x38495ab5) & MASK64
    end
    tail = bytes.byteslice(16 * nblocks, bytes.bytesize % 16).bytes
    if tail.size > 8
      k2 = 0
      tail[8..].each_with_index { |byte, i| k2 |= byte << (8 * i) }
      h2 ^= mix_k2(k2)
    end
    unless tail.empty?
      k1 = 0
      tail[0, 8].each_with_index { |byte, i| k1 |= byte << (8 * i) }
      h1 ^= mix_k1(k1)
    end
    h1 ^= bytes.bytesize
    h2 ^= bytes.bytesize
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1 = fmix64(h1)
    h2 = fmix64(h2)
    (h1 + h2) & MASK64
  end

  # blob with `bytes` written at `offset` and its checksum made valid again.
  def self.patch_blob(blob, offset, bytes)
    b = blob.b.dup
    b[offset, bytes.bytesize] = bytes.b
    body = b.byteslice(0, b.bytesize - 8)
    body + [murmur3_x64_128_low(body)].pack("Q<")
  end

  # Offsets of the wire format (README "Wire format").
  OFF_VERSION = 4
  OFF_KIND = 6
  OFF_FLAGS = 8
  OFF_PAYLOAD_LEN = 12
  OFF_WIDTH = 20
  OFF_DEPTH = 28
  OFF_SEED = 32
  OFF_CELL_COUNT = 36
  OFF_CELLS = 44
  # The payload of both Bloom filters starts with u32 k, u32 l, u32 seed,
  # u32 slice count (lib/bloom/age_partitioned.cpp, write_payload).
  OFF_BLOOM_K = 20
  OFF_BLOOM_L = 24
  OFF_BLOOM_SEED = 28
  OFF_BLOOM_SLICES = 32
  # The rate limiter's payload starts with u64 limit, window, bucket width,
  # max_keys, global limit (lib/rate_limiter/rate_limiter.cpp, "wire format").
  OFF_RL_LIMIT = 20
  OFF_RL_WINDOW = 28
  OFF_RL_WIDTH = 36
  OFF_RL_MAX_KEYS = 44
  OFF_RL_GLOBAL = 52
end

Minitest::Test.include(TestHelper::Assertions)
