# frozen_string_literal: true

# Benchmark of the Ruby binding: RecencySketch update and query through
# TemporalFilters::RecencySketch, one key per call and in batches, beside
# the same loop in C (TemporalFilters::Native.c_loop_ns, from the shared SWIG
# interface) on the same sketch and keys in the same run. Prints ns/op and
# the ratio binding / C, medians over several repetitions. Then the same for
# the Bloom filters' contains and add, single and in batches
# (Native.age_bloom_c_loop_ns, Native.time_bloom_c_loop_ns: the same calls
# in C, one per key or 64 keys per batch call), on a classic AgeBloom and a
# TimeBloom sized for the keys at 1e-3 and filled with them; contains asks
# for those keys (present) and for as many others (absent). Each table also
# times the bare crossing, an empty Ruby C method
# (TemporalFilters::Native.bare_crossing, the shared interface's
# tf_binding_bare_crossing), in the same runs, and prints issue 16's goal for
# every row: a single call within the C time + 1.3 x the bare crossing, a
# batch within 1.3 x the C time per key, "met" or "not met" (reported, never
# asserted).
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

# ns per call of n empty Ruby C method calls (Native.bare_crossing: the
# wrapper of a C function that returns 0, with no error check)
def bare_crossing_ns(n)
  a = now_ns
  i = 0
  while i < n
    TemporalFilters::Native.bare_crossing
    i += 1
  end
  (now_ns - a).fdiv(n)
end

# Prints the bare crossing and issue 16's goal for each row
# [label, ns/op, C ns/op, batch?]: a single call within C + 1.3 x the
# crossing, a batch within 1.3 x C per key.
def print_goals(rows, bare, width)
  puts format("%-*s %10.1f", width, "bare crossing (empty Ruby C method)", bare)
  puts "goal (issue 16): single call <= C + 1.3 x bare crossing; batch <= 1.3 x C per key"
  puts format("%-*s %10s %10s %8s", width, "op", "ns/op", "goal ns/op", "goal")
  rows.each do |label, ns, c, batch|
    bound = batch ? 1.3 * c : c + 1.3 * bare
    puts format("%-*s %10.1f %10.1f %8s", width, label, ns, bound, ns <= bound ? "met" : "not met")
  end
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
  r[:c_update_batch] = TemporalFilters::Native.c_loop_ns(native, keys_data, KEY_LEN, 2, t0 + n)

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
  r[:c_query_batch] = TemporalFilters::Native.c_loop_ns(native, keys_data, KEY_LEN, 3, t0)
  r[:bare] = bare_crossing_ns(n)
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
sketch_rows = [[:update, "single", :update, :c_update],
               [:update, "batch of #{batch}", :update_batch, :c_update_batch],
               [:query, "single", :query, :c_query],
               [:query, "batch of #{batch}", :query_batch, :c_query_batch]]
sketch_rows.each do |op, calls, key, c_key|
  puts format("%-7s %-14s %10.1f %10.1f %7.2fx", op, calls, med[key], med[c_key], med[key] / med[c_key])
end
puts
puts "ratio = ns/op through TemporalFilters::RecencySketch / ns/op of the same loop in C " \
     "(batch rows: the batch call in C, 64 keys per call)"
print_goals(sketch_rows.map { |op, calls, key, c_key| ["#{op} #{calls}", med[key], med[c_key], calls != "single"] },
            med[:bare], 35)

# ---- the Bloom filters ---------------------------------------------------

SPAN = 1000
absent_keys = keys.map { |k| (k.b.tap { |x| x.setbyte(0, x.getbyte(0) ^ 0x5A) }).freeze }.freeze
absent_data = absent_keys.join.b.freeze
absent_batches = absent_keys.each_slice(batch).to_a
age = TemporalFilters::AgeBloom.for_target(n, 1e-3)
tbf = TemporalFilters::TimeBloom.for_target(n, 1e-3, SPAN)
key_batches.each_with_index do |ks, b|
  age.add_batch(ks)
  tbf.add_batch(ks, 1 + (b * SPAN / key_batches.size))
end
age_native = age.instance_variable_get(:@native)
tb_native = tbf.instance_variable_get(:@native)
bloom_now = SPAN

# ns per key of the block, run over n keys
time_per_key = lambda do |&blk|
  a = now_ns
  blk.call
  (now_ns - a).fdiv(n)
end
age_c = ->(data, op) { -> { TemporalFilters::Native.age_bloom_c_loop_ns(age_native, data, KEY_LEN, op) } }
time_c = ->(data, op) { -> { TemporalFilters::Native.time_bloom_c_loop_ns(tb_native, data, KEY_LEN, op, bloom_now) } }
bloom_rows = [
  ["age contains?", "present", -> { time_per_key.call { keys.each { |k| age.contains?(k) } } }, age_c.call(keys_data, 0)],
  ["age contains_batch", "present", -> { time_per_key.call { key_batches.each { |ks| age.contains_batch(ks) } } },
   age_c.call(keys_data, 2)],
  ["age contains?", "absent", -> { time_per_key.call { absent_keys.each { |k| age.contains?(k) } } },
   age_c.call(absent_data, 0)],
  ["age contains_batch", "absent", -> { time_per_key.call { absent_batches.each { |ks| age.contains_batch(ks) } } },
   age_c.call(absent_data, 2)],
  ["age add", "", -> { time_per_key.call { keys.each { |k| age.add(k) } } }, age_c.call(keys_data, 1)],
  ["age add_batch", "", -> { time_per_key.call { key_batches.each { |ks| age.add_batch(ks) } } },
   age_c.call(keys_data, 3)],
  ["time contains?", "absent", -> { time_per_key.call { absent_keys.each { |k| tbf.contains?(k, bloom_now) } } },
   time_c.call(absent_data, 0)],
  ["time contains_batch", "absent",
   -> { time_per_key.call { absent_batches.each { |ks| tbf.contains_batch(ks, bloom_now) } } },
   time_c.call(absent_data, 2)]
]
bloom_rows.each { |_, _, ruby, c| ruby.call && c.call } # warm-up
bloom_bare = []
bloom_runs = Array.new(opts[:reps]) do
  row = bloom_rows.map { |_, _, ruby, c| [c.call, ruby.call] }
  bloom_bare << bare_crossing_ns(n)
  row
end
puts
puts format("The Bloom filters through the Ruby binding: %s and %s, sized for %d keys at 1e-3, median of %d runs",
            age.inspect, tbf.inspect, n, opts[:reps])
puts format("%-20s %-8s %10s %10s %8s", "op", "keys", "ns/op", "C ns/op", "ratio")
bloom_goals = bloom_rows.each_with_index.map do |(op, kind, _, _), i|
  c = median(bloom_runs.map { |r| r[i][0] })
  ruby = median(bloom_runs.map { |r| r[i][1] })
  puts format("%-20s %-8s %10.1f %10.1f %7.2fx", op, kind, ruby, c, ruby / c)
  ["#{op} #{kind}".strip, ruby, c, op.end_with?("_batch")]
end
puts "C = the same call in C, one per key or 64 keys per batch call; the Ruby batches take #{batch} keys"
print_goals(bloom_goals, median(bloom_bare), 35)

if opts[:quick]
  # The smoke run also checks that the numbers and the answers make sense.
  probe = keys.first(1000)
  single = probe.map { |k| sketch.query(k) }
  raise "query_batch differs from query" unless sketch.query_batch(probe) == single
  raise "a key reads as never seen" if single.include?(0)
  raise "contains_batch differs from contains?" unless age.contains_batch(absent_keys.first(1000)) ==
                                                        absent_keys.first(1000).map { |k| age.contains?(k) }
  bad = med.reject { |_, v| v.is_a?(Float) && v.finite? && v.positive? }
  raise "bad measurements: #{bad}" unless bad.empty?

  puts "smoke run: ok"
end
