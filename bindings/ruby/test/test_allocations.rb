# frozen_string_literal: true

require_relative "helper"

# A single-key call of a membership or recency structure builds no Ruby
# object (no Array for its arguments, no result object): in a loop of
# calls, allocation is the cost that grows with the caller's garbage.
# (Calls that answer with an object, such as the rate limiter's Decision,
# allocate it.)
class TestAllocations < Minitest::Test
  CALLS = 1000

  def allocations
    before = GC.stat(:total_allocated_objects)
    yield
    GC.stat(:total_allocated_objects) - before
  end

  def assert_no_allocations(name, &call)
    call.call(0) # warm: any one-time allocation (a method cache) is not the call's
    n = allocations { CALLS.times { |i| call.call(i) } }
    # Integer#times itself allocates nothing per iteration. Measured: 0 for
    # every call here but AgeBloom#add, 2 in 1000 calls (once per
    # generation it starts, not per call); 5 are allowed, never one a call.
    assert_operator n, :<=, 5, "#{name}: #{n} objects for #{CALLS} calls"
  end

  def test_single_key_calls
    key = "a key of sixteen"
    ab = AB.for_target(1000, 0.01)
    tb = TB.for_target(1000, 0.01, 100)
    rs = RS.new(1024, 4)
    rc = RC.new
    rw = RW.new
    assert_no_allocations("AgeBloom#add") { ab.add(key) }
    assert_no_allocations("AgeBloom#contains?") { ab.contains?(key) }
    assert_no_allocations("AgeBloom#add_if_absent") { ab.add_if_absent(key) }
    assert_no_allocations("TimeBloom#add") { |i| tb.add(key, i + 1) }
    assert_no_allocations("TimeBloom#contains?") { |i| tb.contains?(key, i + 1) }
    assert_no_allocations("TimeBloom#add_if_absent") { |i| tb.add_if_absent(key, i + 1) }
    assert_no_allocations("RecencySketch#update") { |i| rs.update(key, i + 1) }
    assert_no_allocations("RecencySketch#query") { rs.query(key) }
    assert_no_allocations("RotatingCuckoo#add_if_absent") { |i| rc.add_if_absent(key, i + 1) }
    assert_no_allocations("RotatingCuckoo#contains?") { |i| rc.contains?(key, i + 1) }
    assert_no_allocations("RecencyWindow#insert") { rw.insert(key) }
    assert_no_allocations("RecencyWindow#query") { rw.query(key) }
  ensure
    [ab, tb, rs, rc, rw].each { |s| s&.close }
  end
end
