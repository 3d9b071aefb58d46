# frozen_string_literal: true

# pacing.rb - request pacing with TemporalFilters::RecencySketch, in Ruby.
#
# An API gateway lets each client through at most once per INTERVAL
# milliseconds. It keeps no per-client table: one fixed-size RecencySketch
# answers every request with RecencySketch#pace, which grants or denies and
# says when the client may retry. The sketch never grants one client twice
# within the interval, whatever the number of clients.
#
# Four simulated clients send requests at different rates over two seconds of
# simulated time; one of them ("patient") always waits for the retry time it
# was given, so it is never denied. Halfway through, the gateway "restarts":
# it saves the sketch with #serialize and loads it back with .deserialize, and
# the limits carry on. At the end the example checks the promise itself and
# exits non-zero if it was broken.
#
# Run from a build directory (see bindings/ruby/meson.build):
#   ruby -I<src>/bindings/ruby/lib -I<build>/bindings/ruby <src>/examples/ruby/pacing.rb

require "temporalfilters"

INTERVAL = 200     # ms: one granted request per client per 200 ms
DURATION = 2_000   # ms of simulated time
SHOW_UNTIL = 500   # print every decision up to this time, then only the totals

Client = Struct.new(:name, :every, :patient, :next_request, :grants, :denied) do
  def requests
    grants.size + denied
  end
end

clients = [
  Client.new("eager", 50, false),      # 20 requests/s: mostly denied
  Client.new("steady", 120, false),    # a little faster than the limit
  Client.new("patient", 70, true),     # wants 14/s, but retries only when told
  Client.new("slow", 350, false),      # slower than the limit: always let through
  # Keys are bytes: a client id may hold NUL bytes or any encoding.
  Client.new("bot\x00#7".b, 30, false)
]
clients.each_with_index do |c, i|
  c.next_request = 1 + 3 * i # timestamps start at 1: 0 means "never"
  c.grants = []
  c.denied = 0
end

# Sized for 10,000 distinct clients per interval with at most a 0.1% chance
# that a client who waited long enough is denied all the same.
gateway = TemporalFilters::RecencySketch.for_target(10_000, 0.001, seed: 2024)
puts "libtemporalfilters #{TemporalFilters::VERSION}: request pacing from Ruby"
puts format("sketch: %d x %d cells, %d bytes; limit: one request per client per %d ms",
            gateway.width, gateway.depth, gateway.memory, INTERVAL)
puts
puts "   time  client     decision"

(1..DURATION).each do |now|
  if now == DURATION / 2
    blob = gateway.serialize
    gateway.close
    gateway = TemporalFilters::RecencySketch.deserialize(blob)
    puts format("%7d  -- gateway restarted from a %d-byte snapshot --", now, blob.bytesize)
  end
  clients.each do |c|
    next unless c.next_request == now

    r = gateway.pace(c.name, now, INTERVAL)
    if r.granted?
      c.grants << now
      decision = "granted, next from #{r.next_allowed}"
    else
      c.denied += 1
      decision = "denied, retry in #{r.next_allowed - now} ms (at #{r.next_allowed})"
    end
    puts format("%7d  %-9s  %s", now, c.name.inspect.delete('"'), decision) if now <= SHOW_UNTIL
    c.next_request = c.patient ? [now + c.every, r.next_allowed].max : now + c.every
  end
  puts format("    ...  (decisions after %d ms not shown)", SHOW_UNTIL) if now == SHOW_UNTIL
end

puts
puts format("%-9s %9s %8s %7s", "client", "requests", "granted", "denied")
broken = 0
clients.each do |c|
  puts format("%-9s %9d %8d %7d", c.name.inspect.delete('"'), c.requests, c.grants.size, c.denied)
  c.grants.each_cons(2) { |a, b| broken += 1 if b - a < INTERVAL }
end
max_grants = DURATION / INTERVAL + 1
if broken.positive? || clients.any? { |c| c.grants.size > max_grants }
  warn "pacing.rb: a client was granted twice within #{INTERVAL} ms"
  exit 1
end
if clients.find { |c| c.patient }.denied.positive?
  warn "pacing.rb: the patient client was denied"
  exit 1
end
puts
puts "no client was granted twice within #{INTERVAL} ms; the patient client was never denied"
