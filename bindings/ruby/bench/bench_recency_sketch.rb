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
# for those keys (present) and for as many others (absent). Then, the same
# way (Native.rate_limiter_c_loop_ns, rotating_cuckoo_c_loop_ns,
# recency_window_c_loop_ns), the rate limiter's acquire and acquire_batch
# (bucketed, every key tracked and granted), the rotating cuckoo filter's
# contains? (present and absent keys) and add_if_absent (of keys present,
# which changes nothing) and their batches, on one table filled with the
# keys, and the recency window's insert and query (of keys within the
# window) and their batches, the keys inserted over and over in the same
# order; each section is followed by its checks (the batches answer as the
# single calls; the C loop acts on the same structure, keys and times).
# Each table also times the bare crossing, an empty Ruby C method
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
# --quick is the smoke run of the test suite: small sizes, and it also checks
# that the sketch's and the age filter's batch calls answer like the single
# ones and that every median is a positive number. The numbers mean something
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

# ns per key of the block, run over n keys
def time_per_key(n)
  a = now_ns
  yield
  (now_ns - a).fdiv(n)
end

# The tables after the sketch's: rows [op, keys, ruby, c], where ruby and c
# are lambdas that run the same calls over the n keys (the Ruby method, and
# the same C call through a Native.*_c_loop_ns) and return ns per key. Runs
# every row once as a warm-up, then reps times, C then Ruby for each row in
# turn and the bare crossing once a repetition; returns
# [[op, keys, Ruby median, C median], ...] and the median bare crossing.
def measure_rows(rows, reps, n)
  rows.each { |_, _, ruby, c| ruby.call && c.call } # warm-up
  bare = []
  runs = Array.new(reps) do
    row = rows.map { |_, _, ruby, c| [c.call, ruby.call] }
    bare << bare_crossing_ns(n)
    row
  end
  medians = rows.each_with_index.map do |(op, kind, _, _), i|
    [op, kind, median(runs.map { |r| r[i][1] }), median(runs.map { |r| r[i][0] })]
  end
  bad = medians.reject { |_, _, ruby, c| [ruby, c].all? { |v| v.finite? && v.positive? } }
  raise "bad measurements: #{bad}" unless bad.empty?

  [medians, median(bare)]
end

# Prints what measure_rows returned: a row per op, the note on batches and
# the goals (a row is a batch when its op ends with "_batch").
def print_rows((medians, bare), batch)
  kw = [8, *medians.map { |_, kind, _, _| kind.size }].max
  puts format("%-20s %-*s %10s %10s %8s", "op", kw, "keys", "ns/op", "C ns/op", "ratio")
  medians.each do |op, kind, ruby, c|
    puts format("%-20s %-*s %10.1f %10.1f %7.2fx", op, kw, kind, ruby, c, ruby / c)
  end
  puts "C = the same call in C, one per key or 64 keys per batch call; the Ruby batches take #{batch} keys"
  print_goals(medians.map { |op, kind, ruby, c| ["#{op} #{kind}".strip, ruby, c, op.end_with?("_batch")] }, bare, 35)
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

age_c = ->(data, op) { -> { TemporalFilters::Native.age_bloom_c_loop_ns(age_native, data, KEY_LEN, op) } }
time_c = ->(data, op) { -> { TemporalFilters::Native.time_bloom_c_loop_ns(tb_native, data, KEY_LEN, op, bloom_now) } }
bloom_rows = [
  ["age contains?", "present", -> { time_per_key(n) { keys.each { |k| age.contains?(k) } } }, age_c.call(keys_data, 0)],
  ["age contains_batch", "present", -> { time_per_key(n) { key_batches.each { |ks| age.contains_batch(ks) } } },
   age_c.call(keys_data, 2)],
  ["age contains?", "absent", -> { time_per_key(n) { absent_keys.each { |k| age.contains?(k) } } },
   age_c.call(absent_data, 0)],
  ["age contains_batch", "absent", -> { time_per_key(n) { absent_batches.each { |ks| age.contains_batch(ks) } } },
   age_c.call(absent_data, 2)],
  ["age add", "", -> { time_per_key(n) { keys.each { |k| age.add(k) } } }, age_c.call(keys_data, 1)],
  ["age add_batch", "", -> { time_per_key(n) { key_batches.each { |ks| age.add_batch(ks) } } },
   age_c.call(keys_data, 3)],
  ["time contains?", "absent", -> { time_per_key(n) { absent_keys.each { |k| tbf.contains?(k, bloom_now) } } },
   time_c.call(absent_data, 0)],
  ["time contains_batch", "absent",
   -> { time_per_key(n) { absent_batches.each { |ks| tbf.contains_batch(ks, bloom_now) } } },
   time_c.call(absent_data, 2)]
]
bloom_measured = measure_rows(bloom_rows, opts[:reps], n)
puts
puts format("The Bloom filters through the Ruby binding: %s and %s, sized for %d keys at 1e-3, median of %d runs",
            age.inspect, tbf.inspect, n, opts[:reps])
print_rows(bloom_measured, batch)

# The checks of the sections below, each run after its section's
# measurements: the batch calls answer like the single ones, and the C loop
# works on the same structure, keys and times as the Ruby rows.
probe = keys.first(1000).freeze
probe_data = probe.join.b.freeze
absent_probe = absent_keys.first(1000).freeze

# ---- the rate limiter ----------------------------------------------------

# Bucketed (the default mode), LIMIT permits per window of 8 buckets, the
# window at least twice as many time units as keys (as the Go benchmark's).
# Each pass over the keys (Ruby's or C's, single or batch) asks for one
# permit per key, key i at time t + i, and the next pass starts n time
# units later: every key stays tracked, asks once per n time units, so
# that its window holds its last two or three grants and every request is
# granted, and the window slides as it would under steady traffic; every
# pass does the same work. (With a window shorter than a pass, every key
# would be idle again at its next request, and each request would
# reclaim and re-insert keys instead: another path of the library.)
LIMIT = 10
LIMIT_BUCKETS = 8
limiter_bucket = (2 * n + LIMIT_BUCKETS - 1) / LIMIT_BUCKETS
limiter_window = LIMIT_BUCKETS * limiter_bucket
limiter = TemporalFilters::RateLimiter.new(LIMIT, limiter_window, limiter_bucket, seed: 7)
limiter_native = limiter.instance_variable_get(:@native)
limiter_clock = 1
limiter_pass = lambda do
  t = limiter_clock
  limiter_clock += n
  t
end
limiter_c = lambda do |op|
  -> { TemporalFilters::Native.rate_limiter_c_loop_ns(limiter_native, keys_data, KEY_LEN, op, limiter_pass.call) }
end
limiter_rows = [
  ["acquire", "", lambda do
    t = limiter_pass.call
    time_per_key(n) do
      i = 0
      while i < n
        limiter.acquire(keys[i], t + i)
        i += 1
      end
    end
  end, limiter_c.call(0)],
  ["acquire_batch", "", lambda do
    t = limiter_pass.call
    times = key_batches.each_index.map { |b| Array.new(key_batches[b].size) { |j| t + b * batch + j } }
    time_per_key(n) { key_batches.each_with_index { |ks, b| limiter.acquire_batch(ks, times[b]) } }
  end, limiter_c.call(1)]
]
key_batches.each_with_index do |ks, b| # track every key before the runs
  limiter.acquire_batch(ks, Array.new(ks.size) { |j| limiter_clock + b * batch + j })
end
limiter_clock += n
limiter_measured = measure_rows(limiter_rows, opts[:reps], n)
puts
puts format("The rate limiter through the Ruby binding: %s, bucketed, %d permits per %d time units in %d " \
            "buckets, each of the %d keys asking 1 permit once per %d time units (granted), median of %d runs",
            limiter.inspect, LIMIT, limiter_window, LIMIT_BUCKETS, n, n, opts[:reps])
print_rows(limiter_measured, batch)

raise "the limiter does not track every key" unless limiter.tracked_keys == n

t = limiter_pass.call
raise "a request was denied" unless probe.each_with_index.all? { |k, i| limiter.acquire(k, t + i).allowed? }

# The batch decides as the single calls: two new limiters, the probe keys
# asking LIMIT + 1 times at the same times (the last round denied), single
# calls in one and batches in the other.
single_limiter = TemporalFilters::RateLimiter.new(LIMIT, limiter_window, limiter_bucket, seed: 7)
batch_limiter = TemporalFilters::RateLimiter.new(LIMIT, limiter_window, limiter_bucket, seed: 7)
(0..LIMIT).each do |round|
  single = probe.map { |k| single_limiter.acquire(k, 1 + round) }
  batched = probe.each_slice(batch).flat_map { |ks| batch_limiter.acquire_batch(ks, Array.new(ks.size, 1 + round)) }
  raise "acquire_batch differs from acquire in round #{round}" unless batched == single
  raise "round #{round}: a decision is not the expected one" unless single.all? { |d| d.allowed? == (round < LIMIT) }
end
[single_limiter, batch_limiter].each(&:close)

# The C loops take their permits from this limiter, for these keys at these
# times: after them, a request at the same time has one permit fewer left.
[0, 1].each do |op|
  t = limiter_pass.call
  before = probe.each_with_index.map { |k, i| limiter.peek(k, t + i).remaining }
  TemporalFilters::Native.rate_limiter_c_loop_ns(limiter_native, probe_data, KEY_LEN, op, t)
  after = probe.each_with_index.map { |k, i| limiter.peek(k, t + i).remaining }
  raise "rate_limiter_c_loop_ns op #{op} did not take the permits" unless after == before.map { |r| r - 1 }
end

# ---- the rotating cuckoo filter ------------------------------------------

# One table sized for the keys (at most 85% full, below the 4-slot layout's
# 0.92 occupancy, so that filling it starts no second table), filled with
# them at time cuckoo_now; every call is at that time. add_if_absent meets
# keys already present (duplicates), so the filter does not change between
# runs.
cuckoo_slots = 16
cuckoo_slots <<= 1 while cuckoo_slots * 0.85 < n
cuckoo = TemporalFilters::RotatingCuckoo.new(table_slots: cuckoo_slots, seed: 7)
cuckoo_now = 1
key_batches.each { |ks| cuckoo.add_if_absent_batch(ks, cuckoo_now) }
cuckoo_native = cuckoo.instance_variable_get(:@native)
cuckoo_filled = cuckoo.stats(cuckoo_now)
raise "the filter did not take the keys in one table: #{cuckoo_filled}" unless
  cuckoo_filled.tables == 1 && cuckoo_filled.items == n

cuckoo_c = lambda do |data, op|
  -> { TemporalFilters::Native.rotating_cuckoo_c_loop_ns(cuckoo_native, data, KEY_LEN, op, cuckoo_now) }
end
cuckoo_rows = [
  ["contains?", "present", -> { time_per_key(n) { keys.each { |k| cuckoo.contains?(k, cuckoo_now) } } },
   cuckoo_c.call(keys_data, 0)],
  ["contains_batch", "present",
   -> { time_per_key(n) { key_batches.each { |ks| cuckoo.contains_batch(ks, cuckoo_now) } } },
   cuckoo_c.call(keys_data, 2)],
  ["contains?", "absent", -> { time_per_key(n) { absent_keys.each { |k| cuckoo.contains?(k, cuckoo_now) } } },
   cuckoo_c.call(absent_data, 0)],
  ["contains_batch", "absent",
   -> { time_per_key(n) { absent_batches.each { |ks| cuckoo.contains_batch(ks, cuckoo_now) } } },
   cuckoo_c.call(absent_data, 2)],
  ["add_if_absent", "duplicate", -> { time_per_key(n) { keys.each { |k| cuckoo.add_if_absent(k, cuckoo_now) } } },
   cuckoo_c.call(keys_data, 1)],
  ["add_if_absent_batch", "duplicate",
   -> { time_per_key(n) { key_batches.each { |ks| cuckoo.add_if_absent_batch(ks, cuckoo_now) } } },
   cuckoo_c.call(keys_data, 3)]
]
cuckoo_measured = measure_rows(cuckoo_rows, opts[:reps], n)
puts
puts format("The rotating cuckoo filter through the Ruby binding: %s, one table of %d slots holding the %d keys " \
            "(load %.2f), every call at the same time, median of %d runs",
            cuckoo.inspect, cuckoo_slots, n, cuckoo_filled.load, opts[:reps])
print_rows(cuckoo_measured, batch)

single = probe.map { |k| cuckoo.contains?(k, cuckoo_now) }
raise "contains_batch differs from contains?" unless cuckoo.contains_batch(probe, cuckoo_now) == single
raise "a key added reads as absent" unless single.all?
single = absent_probe.map { |k| cuckoo.contains?(k, cuckoo_now) }
raise "contains_batch differs from contains? (absent)" unless
  cuckoo.contains_batch(absent_probe, cuckoo_now) == single
raise "a key never added reads as present" if single.any?
raise "add_if_absent_batch differs from add_if_absent" unless
  cuckoo.add_if_absent_batch(probe, cuckoo_now) == probe.map { |k| cuckoo.add_if_absent(k, cuckoo_now) }
# Nothing was inserted since the fill: every add_if_absent, Ruby's and C's,
# met a duplicate.
raise "the add_if_absent rows changed the filter" unless cuckoo.stats(cuckoo_now).inserts == cuckoo_filled.inserts

# The C loops work on this filter: the absent keys they add read as present.
[[1, absent_probe.first(500)], [3, absent_probe.drop(500)]].each do |op, ks|
  TemporalFilters::Native.rotating_cuckoo_c_loop_ns(cuckoo_native, ks.join.b, KEY_LEN, op, cuckoo_now)
  raise "rotating_cuckoo_c_loop_ns op #{op} did not add the keys" unless ks.all? { |k| cuckoo.contains?(k, cuckoo_now) }
end

# ---- the recency window --------------------------------------------------

# A window of the smallest power of two >= the number of keys, the default
# mode (historical), filled by inserting the keys; each insert pass inserts
# them again in the same order, so every key stays within the window and
# the state repeats from pass to pass; query asks for keys present.
rw_window = 1
rw_window <<= 1 while rw_window < n
recency = TemporalFilters::RecencyWindow.new(window: rw_window, seed: 7)
keys.each { |k| recency.insert(k) }
recency_native = recency.instance_variable_get(:@native)

recency_c = ->(op) { -> { TemporalFilters::Native.recency_window_c_loop_ns(recency_native, keys_data, KEY_LEN, op) } }
recency_rows = [
  ["insert", "", -> { time_per_key(n) { keys.each { |k| recency.insert(k) } } }, recency_c.call(0)],
  ["insert_batch", "", -> { time_per_key(n) { key_batches.each { |ks| recency.insert_batch(ks) } } },
   recency_c.call(2)],
  ["query", "present", -> { time_per_key(n) { keys.each { |k| recency.query(k) } } }, recency_c.call(1)],
  ["query_batch", "present", -> { time_per_key(n) { key_batches.each { |ks| recency.query_batch(ks) } } },
   recency_c.call(3)]
]
recency_measured = measure_rows(recency_rows, opts[:reps], n)
puts
puts format("The recency window through the Ruby binding: %s, %d keys inserted over and over in the same order " \
            "(every one within the window), median of %d runs",
            recency.inspect, n, opts[:reps])
print_rows(recency_measured, batch)

single = probe.map { |k| recency.query(k) }
raise "query_batch differs from query" unless recency.query_batch(probe) == single
raise "a key inserted reads as out of the window" if single.include?(nil)

# The C loops insert into this window: after them, the last key they
# inserted is the newest insert.
[0, 2].each do |op|
  recency.insert(probe.last).insert(absent_keys.first)
  raise "the window lost the order of inserts" unless recency.query(probe.last) == 1

  TemporalFilters::Native.recency_window_c_loop_ns(recency_native, probe_data, KEY_LEN, op)
  raise "recency_window_c_loop_ns op #{op} did not insert the keys" unless recency.query(probe.last).zero?
end
puts
puts "the rate limiter, rotating cuckoo and recency window checks: ok"

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
