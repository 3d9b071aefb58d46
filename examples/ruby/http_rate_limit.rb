# frozen_string_literal: true

# http_rate_limit.rb - an HTTP-style rate limiter with
# TemporalFilters::RateLimiter, in Ruby.
#
# An API server lets each client make at most 10 requests per second
# ("premium" has its own limit of 30), and all clients together at most 80
# per second (the global limit, which holds premium too).
# A request either goes through (200, with X-RateLimit-Remaining) or is
# refused with "429 Too Many Requests" and a Retry-After header computed
# from the decision's retry time. Every decision asks both the client's and
# the global window: X-RateLimit-Remaining is the smaller of the two, and a
# refusal's retry time the later of the two (when the client and the
# global window both allow again). A batch call costs 4 permits at once; a
# batch larger than any limit can never be granted and is refused with 413
# and no Retry-After.
#
# The limiter runs in exact mode (the times of each client's last grants: a
# 33-byte record and a ring of grant times that grows with them, per
# client), so "never more than
# 10 in any second" holds exactly; the default bucketed mode would use
# 55-62 bytes per client and may admit a little more (see the C header). Six simulated clients send
# requests for three seconds of simulated time; "polite" waits for the
# Retry-After it was given. The first refusal of each run of refusals is
# printed, with its headers. Halfway the server restarts from a snapshot
# (#serialize, .deserialize): the clients limited before are still limited
# after. The example checks the limits against its own log and exits
# non-zero if one was passed.
#
# Run from a build directory (see bindings/ruby/meson.build):
#   ruby -I<src>/bindings/ruby/lib -I<build>/bindings/ruby <src>/examples/ruby/http_rate_limit.rb

require "temporalfilters"

PER_CLIENT = 10     # requests per client per WINDOW
PREMIUM = 30        # premium's own limit
GLOBAL = 80         # all clients together per WINDOW
WINDOW = 1_000      # ms
BATCH = 4           # permits per batch call
T0 = 1_700_000_000_000 # ms since the Unix epoch
DURATION = 3_000    # ms of simulated time
SHOW = 20           # refusals printed in full (the first of each run)

Client = Struct.new(:name, :every, :polite, :burst, :next_at, :log, :codes) do
  def count(code)
    codes.count(code)
  end
end

clients = [
  Client.new("alice", 125, false, 1),    # 8/s: always under the limit
  Client.new("bob", 1_000, false, 25),   # a burst of 25 once a second
  Client.new("scraper", 25, false, 1),   # 40/s: mostly refused
  Client.new("polite", 30, true, 1),     # 33/s, but waits for Retry-After
  Client.new("premium", 40, false, 1),   # 25/s within its own 30
  Client.new("batcher", 300, false, 1)   # BATCH permits every 300 ms
]
clients.each_with_index do |c, i|
  c.next_at = T0 + 1 + 7 * i
  c.log = []   # [time, permits] of every granted request
  c.codes = []
end

def new_limiter
  # Keys come from clients: a random secret seed, so that nobody can choose
  # keys that crowd one shard (the decisions do not depend on it).
  TemporalFilters::RateLimiter.exact(PER_CLIENT, WINDOW, seed: Random.new_seed & 0xFFFF_FFFF)
                              .set_global_limit(GLOBAL)
                              .set_key_limit("premium", PREMIUM)
end

limiter = new_limiter
puts "libtemporalfilters #{TemporalFilters::VERSION}: an HTTP rate limiter from Ruby"
puts "#{PER_CLIENT} requests per client per #{WINDOW} ms (premium: #{PREMIUM}), #{GLOBAL} for everyone together"
puts
shown = 0
restarted = false
limited_at_restart = []

(T0 + 1..T0 + DURATION).each do |now|
  if !restarted && now >= T0 + DURATION / 2
    blob = limiter.serialize
    limited_at_restart = clients.map(&:name).reject { |name| limiter.peek(name, now).allowed? }
    limiter.close
    limiter = TemporalFilters::RateLimiter.deserialize(blob)
    still = limited_at_restart.reject { |name| limiter.peek(name, now).allowed? }
    abort "a restart forgot #{(limited_at_restart - still).join(', ')}" unless still == limited_at_restart
    puts format("  +%4d ms  -- server restarted from a %d-byte snapshot; still limited: %s --",
                now - T0, blob.bytesize, still.empty? ? "nobody" : still.join(", "))
    restarted = true
  end
  clients.each do |c|
    next unless c.next_at == now

    retry_at = nil
    c.burst.times do |b|
      batch = c.name == "batcher"
      permits = batch ? (now - T0 > 2_500 ? 3 * BATCH : BATCH) : 1 # one oversized batch at the end
      path = batch ? "POST /api/batch" : "GET /api/items/#{b}"
      d = limiter.acquire(c.name, now, permits)
      if d.allowed?
        c.log << [now, permits]
        c.codes << 200
        next
      end
      first_of_run = c.codes.last == 200 || c.codes.empty?
      wait = d.retry_after(now)
      if wait.nil?
        c.codes << 413
        line = "413 Content Too Large  (#{permits} permits: more than the limit ever allows)"
      else
        c.codes << 429
        retry_at = d.retry_at
        line = format("429 Too Many Requests  Retry-After: %d  X-RateLimit-Remaining: %d  (retry at +%d ms)",
                      (wait + 999) / 1000, d.remaining, d.retry_at - T0)
      end
      next unless shown < SHOW && (first_of_run || wait.nil?)

      shown += 1
      puts format("  +%4d ms  %-8s %-18s -> %s", now - T0, c.name, path, line)
      puts "  ...      (further refusals not shown)" if shown == SHOW
    end
    c.next_at = c.polite && retry_at ? [now + c.every, retry_at].max : now + c.every
  end
end

# The promise, checked on the log: in any window (t - WINDOW, t] a client
# got at most its limit, and everyone together at most GLOBAL.
def most_in_window(log)
  times = log.flat_map { |t, permits| [t] * permits }.sort
  best = 0
  first = 0
  times.each_with_index do |t, i|
    first += 1 while times[first] + WINDOW <= t
    best = [best, i - first + 1].max
  end
  best
end

puts
puts format("%-8s %9s %5s %5s %5s %18s", "client", "requests", "200", "429", "413", "most in any window")
broken = []
clients.each do |c|
  limit = c.name == "premium" ? PREMIUM : PER_CLIENT
  most = most_in_window(c.log)
  puts format("%-8s %9d %5d %5d %5d %12d of %d", c.name, c.codes.size, c.count(200), c.count(429),
              c.count(413), most, limit)
  broken << c.name if most > limit
end
everyone = most_in_window(clients.flat_map(&:log))
puts format("%-8s %40d of %d", "all", everyone, GLOBAL)
s = limiter.stats
puts "limiter: #{s.keys} clients tracked, #{s.memory} bytes"
broken << "the global limit" if everyone > GLOBAL
unless broken.empty?
  warn "http_rate_limit.rb: limit passed for #{broken.join(', ')}"
  exit 1
end
if clients.find { |c| c.name == "alice" }.count(429).positive?
  warn "http_rate_limit.rb: alice stayed under her limit but was refused"
  exit 1
end
puts
puts "no client passed its limit in any #{WINDOW} ms window, nor everyone together the global #{GLOBAL}"
