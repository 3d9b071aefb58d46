# frozen_string_literal: true

# Benchmark of the Ruby binding: RecencySketch update and query through
# TemporalFilters::RecencySketch, one key per call and in batches, beside
# the same loop in C (TemporalFilters::Native.c_loop_ns, from the shared SWIG
# interface) on the same sketch and keys in the same run. Prints ns/op and
# the ratio binding / C, medians over several repetitions.
#
#   ruby -I<src>/bindings/ruby/lib -I<build>/bindings/ruby bench_recency_sketch.rb
#        [--quick] [--concurrent] [--keys N] [--reps N] [--batch N] [--buildtype T]
#
# --concurrent measures a sketch created with RecencySketch::CONCURRENT.
# --quick is the smoke run of the test suite: small sizes, and it checks that
# the batch calls answer like the single ones. The numbers mean something
# only in an optimized build of the library (meson -Dbuildtype=release).

require "optparse"
require "temporalfilters"

RS = TemporalFilters::RecencySketch

opts = { quick: false, concurrent: false, keys: 200_000, reps: 5, batch: 64, width: 1 << 18, depth: 4, buildtype: nil }
OptionParser.new do |o|
  o.on("--quick") { opts[:quick] = true }
  o.on("--concurrent") { opts[:concurrent] = true }
  o.on("--keys N", Integer) { |v| opts[:keys] = v }
  o.on("--reps N", Integer) { |v| opts[:reps] = v }
  o.on("--batch N", Integer) { |v| opts[:batch] = v }
  o.on("--buildtype T", String) { |v| opts[:buildtype] = v }
end.parse!
opts.merge!(keys: 20_000, reps: 2, width: 1 << 14) if opts[:quick]

KEY_LEN = 16
n = opts[:keys]
batch = opts[:batch]
rng = Random.new(2024)
keys = Array.new(n) { rng.bytes(KEY_LEN).freeze }.freeze
keys_data = keys.join.b.freeze
key_batches = keys.each_slice(batch).to_a
time_batches = []
t_base = 1
key_batches.each { |ks| time_batches << Array.new(ks.size) { |j| t_base + j } }

sketch = RS.new(opts[:width], opts[:depth], seed: 7, flags: opts[:concurrent] ? RS::CONCURRENT : 0)
native = sketch.instance_variable_get(:@native)

def now_ns
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

def median(values)
  s = values.sort
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

# One repetition of every measurement; returns {name => ns/op}.
run = lambda do |rep|
  t0 = 1 + rep * 4 * n
  r = {}
  r[:c_update] = TemporalFilters::Native.c_loop_ns(native, keys_data, KEY_LEN, 0, t0)
  a = now_ns
  i = 0
  while i < n
    sketch.update(keys[i], t0 + i)
    i += 1
  end
  r[:update] = (now_ns - a).fdiv(n)
  a = now_ns
  key_batches.each_with_index { |ks, b| sketch.update_batch(ks, time_batches[b]) }
  r[:update_batch] = (now_ns - a).fdiv(n)

  r[:c_query] = TemporalFilters::Native.c_loop_ns(native, keys_data, KEY_LEN, 1, t0)
  sink = 0
  a = now_ns
  i = 0
  while i < n
    sink += sketch.query(keys[i])
    i += 1
  end
  r[:query] = (now_ns - a).fdiv(n)
  a = now_ns
  key_batches.each { |ks| sink += sketch.query_batch(ks).sum }
  r[:query_batch] = (now_ns - a).fdiv(n)
  raise "queries returned nothing" if sink.zero?

  r
end

run.call(0) # warm-up: page in the table, settle the VM
results = Array.new(opts[:reps]) { |rep| run.call(rep + 1) }
med = results.first.keys.to_h { |k| [k, median(results.map { |r| r[k] })] }

mib = sketch.cells * 8 / 1048576.0
puts format("RecencySketch through the Ruby binding (ruby %s, library %s)", RUBY_VERSION, TemporalFilters::VERSION)
puts format("%d x %d cells (%.1f MiB)%s, %d keys of %d bytes, batches of %d, median of %d runs",
            sketch.width, sketch.depth, mib, opts[:concurrent] ? ", CONCURRENT" : "", n, KEY_LEN, batch, opts[:reps])
if opts[:buildtype] && !%w[release debugoptimized plain].include?(opts[:buildtype])
  puts "warning: the library is built with buildtype=#{opts[:buildtype]}; use -Dbuildtype=release for real numbers"
end
puts
puts format("%-7s %-14s %10s %10s %8s", "op", "calls", "ns/op", "C ns/op", "ratio")
[[:update, "single", :update, :c_update],
 [:update, "batch of #{batch}", :update_batch, :c_update],
 [:query, "single", :query, :c_query],
 [:query, "batch of #{batch}", :query_batch, :c_query]].each do |op, calls, key, c_key|
  puts format("%-7s %-14s %10.1f %10.1f %7.2fx", op, calls, med[key], med[c_key], med[key] / med[c_key])
end
puts
puts "ratio = ns/op through TemporalFilters::RecencySketch / ns/op of the same loop in C"

if opts[:quick]
  # The smoke run also checks that the numbers and the answers make sense.
  probe = keys.first(1000)
  single = probe.map { |k| sketch.query(k) }
  raise "query_batch differs from query" unless sketch.query_batch(probe) == single
  raise "a key reads as never seen" if single.include?(0)
  bad = med.reject { |_, v| v.is_a?(Float) && v.finite? && v.positive? }
  raise "bad measurements: #{bad}" unless bad.empty?

  puts "smoke run: ok"
end
