# frozen_string_literal: true

# The Redis limiter from a user's own project: `require "temporalfilters/redis"`
# and nothing else (run.sh runs it with plain `ruby` after `gem install
# --local`, whose second extension compiled against the system's
# libtemporalfilters-redis), against the redis-server run.sh started on
# PORT. Checks that the extension came from the installed gem and the
# companion library from outside TREE; exits non-zero on any failure.
#
#   ruby redis_consumer.rb TREE PORT

require "temporalfilters/redis"

tree = File.expand_path(ARGV.fetch(0))
port = Integer(ARGV.fetch(1))
failures = []
check = ->(what, ok) { failures << what unless ok }

spec = Gem.loaded_specs["temporalfilters"]
native = $LOADED_FEATURES.grep(/temporalfilters_redis_native\.so\z/)
check.call("the Redis extension from the gem: #{native}",
           spec && native.size == 1 && native.all? { |f| f.start_with?(spec.full_gem_path, spec.extension_dir) })
maps = File.readlines("/proc/self/maps").map { |l| l.split[5] }.compact.uniq
clib = maps.grep(%r{/libtemporalfilters-redis\.so})
check.call("libtemporalfilters-redis mapped once, outside the tree: #{clib}",
           clib.size == 1 && !clib[0].start_with?("#{tree}/"))

limiter = TemporalFilters::RedisLimiter.new(2, 60_000, 1_000, port: port, prefix: "installcheck:rb:#{Process.pid}:",
                                                              fallback: :allow)
embedded = TemporalFilters::RateLimiter.new(2, 60_000, 1_000)
(1..3).each do |t|
  got = limiter.acquire("client", t)
  want = embedded.acquire("client", t)
  check.call("acquire at #{t}: #{got.inspect}, embedded #{want.inspect}",
             [got.allowed?, got.remaining, got.retry_at] == [want.allowed?, want.remaining, want.retry_at])
end
check.call("peek after the limit", !limiter.peek("client", 4).allowed?)
check.call("batch", limiter.acquire_batch(%w[x x x], [5, 6, 7]).map(&:allowed?) == [true, true, false])
limiter.set_key_limit("client", 5)
check.call("the key's own limit", limiter.acquire("client", 8).allowed?)
stats = limiter.stats
check.call("stats #{stats.to_a}", stats.decisions == 8 && stats.script_loads == 1 && stats.fallback_allowed.zero?)
limiter.close
begin
  TemporalFilters::RedisLimiter.new(2, 60_000, 1_000, port: 1, connect_timeout_ms: 200)
  check.call("a limiter without a server", false)
rescue TemporalFilters::UnavailableError => e
  check.call("no decision at creation", e.decision.nil?)
end

if failures.empty?
  puts "ruby redis consumer ok: #{native[0]}, #{clib[0]}"
else
  failures.each { |f| warn "ruby redis consumer FAILED: #{f}" }
  exit 1
end
