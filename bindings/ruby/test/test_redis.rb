# frozen_string_literal: true

# TemporalFilters::RedisLimiter (require "temporalfilters/redis") against a
# redis-server and a three-master Redis Cluster started by
# tests/redis/redis_fixture (TF_REDIS_FIXTURE, set by the Meson build):
# the decisions equal the embedded RateLimiter's on the same request
# sequence (both modes, overrides, the global limit, batches, refunds,
# resets) on both; the failure policy on a stopped server (the exception,
# its status and fallback decision, the counters) for deny, allow and the
# embedded fallback; the server's clock; closed limiters; bad arguments.
# Skips, saying why, only when redis-server is not installed.

require_relative "helper"
require "open3"
require "temporalfilters/redis"

# The servers of one redis_fixture process: its ports, and its commands
# (kill, restart) for the fault tests. Stopped when its stdin closes.
class RedisFixture
  attr_reader :server_port, :cluster_ports

  def self.available?
    system("command -v redis-server >/dev/null 2>&1")
  end

  def initialize(*what)
    fixture = ENV["TF_REDIS_FIXTURE"]
    raise "TF_REDIS_FIXTURE must name tests/redis/redis_fixture (meson test ruby_redis sets it)" unless fixture

    @stdin, @stdout, @wait = Open3.popen2(fixture, *what)
    while (line = @stdout.gets)
      words = line.split
      case words.first
      when "server" then @server_port = Integer(words[1])
      when "cluster" then @cluster_ports = words[1..].map { |w| Integer(w) }
      when "ready" then return
      end
    end
    raise "redis_fixture did not start its servers (exit #{@wait.value.exitstatus})"
  end

  def command(word)
    @stdin.puts(word)
    @stdin.flush
    @stdout.gets.chomp
  end

  def stop
    @stdin.close
    @wait.value
  end
end

class TestRedisLimiter < Minitest::Test
  RRL = TF::RedisLimiter
  KEYS = ["alice", "bob", "carol", "vip", "low", "", "k{x}y", "bin\0ary"].freeze

  @fixture = nil
  class << self
    attr_accessor :fixture
  end

  Minitest.after_run { TestRedisLimiter.fixture&.stop }

  def setup
    skip "redis-server is not installed (Debian: apt-get install redis-server): the Redis tests need it" \
      unless RedisFixture.available?
    self.class.fixture ||= RedisFixture.new("server", "cluster")
    @seq = (@seq || 0) + 1
  end

  def fixture
    self.class.fixture
  end

  def prefix
    "test:rb:#{Process.pid}:#{name}:#{@seq += 1}:"
  end

  def server_limiter(*args, **opts)
    RRL.new(*args, port: fixture.server_port, prefix: prefix, idle_expiry_ms: 600_000, **opts)
  end

  def cluster_limiter(*args, **opts)
    RRL.new(*args, port: fixture.cluster_ports[0], cluster: true, prefix: prefix, idle_expiry_ms: 600_000, **opts)
  end

  def triple(d)
    [d.allowed?, d.remaining, d.retry_at]
  end

  # The C suite's sequence (tests/redis/test_redis_limiter.c): random keys,
  # permits and steps of time, acquires, peeks, batches, refunds, resets,
  # overrides and the global limit, on both limiters.
  def run_sequence(embedded, redis, seed, global)
    rng = Random.new(seed)
    now = 1000
    [embedded, redis].each do |l|
      l.set_key_limit("vip", 9).set_key_limit("low", 1)
      l.set_global_limit(12) if global
    end
    granted = denied = 0
    600.times do |step|
      now += rng.rand(4).zero? ? rng.rand(400) : rng.rand(30)
      key = KEYS[rng.rand(KEYS.size)]
      n = rng.rand(20).zero? ? 1 + rng.rand(12) : 1 + rng.rand(2)
      op = rng.rand(100)
      if op < 70
        a = embedded.acquire(key, now, n)
        assert_equal triple(a), triple(redis.acquire(key, now, n)), "step #{step}: acquire #{key.inspect}"
        a.allowed? ? granted += 1 : denied += 1
      elsif op < 80
        assert_equal triple(embedded.peek(key, now, n)), triple(redis.peek(key, now, n)), "step #{step}: peek"
      elsif op < 88
        keys = Array.new(4) { KEYS[rng.rand(KEYS.size)] }
        times = Array.new(4) { |i| now + i }
        now += 3
        assert_equal embedded.acquire_batch(keys, times, n).map { |d| triple(d) },
                     redis.acquire_batch(keys, times, n).map { |d| triple(d) }, "step #{step}: batch"
      elsif op < 94
        [embedded, redis].each { |l| l.refund(key, now, n) }
      elsif op < 96
        [embedded, redis].each { |l| l.reset(key) }
      elsif op < 98
        limit = rng.rand(6)
        [embedded, redis].each { |l| l.set_key_limit(key, limit) }
      elsif global && op < 99
        limit = 8 + rng.rand(10)
        [embedded, redis].each { |l| l.set_global_limit(limit) }
        # On the caller's clock the new global window may answer otherwise
        # in the bucket it was set in (redis.h,
        # tf_redis_limiter_set_global_limit): the C suite moves to the next
        # bucket (of 100), and so does this one.
        now = (now / 100 + 1) * 100
      end
    end
    assert_operator granted, :>, 40
    assert_operator denied, :>, 40
  end

  def check_same_decisions(cluster)
    [0, RL::EXACT].each do |flags|
      [false, true].each do |global|
        embedded = RL.new(5, 1000, 100, flags: flags)
        redis = cluster ? cluster_limiter(5, 1000, 100, flags: flags) : server_limiter(5, 1000, 100, flags: flags)
        run_sequence(embedded, redis, 42 + flags * 2 + (global ? 1 : 0), global)
        s = redis.stats
        assert_operator s.decisions, :>, 400
        assert_equal [0, 0, 0, 0, 0],
                     [s.timeouts, s.unavailable, s.fallback_denied, s.fallback_allowed, s.fallback_local]
        assert_equal cluster ? 3 : 1, s.script_loads
        assert_operator s.global_undos, :>, 0 if cluster && global
        redis.close
        embedded.close
      end
    end
  end

  def test_same_decisions_as_embedded_on_a_server
    check_same_decisions(false)
  end

  def test_same_decisions_as_embedded_on_a_cluster
    check_same_decisions(true)
  end

  def test_limiters_of_one_prefix_share_the_state
    p = prefix
    a = RRL.new(2, 1000, 100, port: fixture.server_port, prefix: p, idle_expiry_ms: 600_000)
    b = RRL.new(2, 1000, 100, port: fixture.server_port, prefix: p, idle_expiry_ms: 600_000)
    assert a.acquire("k", 10).allowed?
    assert b.acquire("k", 11).allowed?
    d = a.acquire("k", 12)
    assert_equal [false, 0, 1000], triple(d)
    b.set_key_limit("k", 3)
    assert a.acquire("k", 13).allowed?, "the override is in Redis"
    [a, b].each(&:close)
  end

  def test_server_clock
    l = server_limiter(2, 60_000, 1000, time: :server)
    assert l.acquire("k", 0).allowed?
    assert l.acquire("k", 0).allowed?
    d = l.acquire("k", 0)
    refute d.allowed?
    assert_operator d.retry_at, :>, 1_600_000_000_000, "a time of the server's clock, in milliseconds"
    assert_equal 3, l.acquire_batch(%w[x y z], nil).count(&:allowed?)
    assert_raises(TF::InvalidArgumentError) { l.acquire("k", 5) }
    l.close
  end

  def test_closed
    l = server_limiter(2, 1000, 100)
    # no copy shares its connections (calls on them must not overlap)
    %i[dup clone].each do |copy|
      assert_raises(TypeError, copy.to_s) { l.public_send(copy) }
    end
    assert l.acquire("k", 1).allowed?, "the limiter still works"
    # the life cycle of every structure (helper.rb), and every public method
    # raising ClosedError
    assert_closes(l, acquire: ["k", 1], peek: ["k", 1], allow?: ["k", 1], acquire_batch: [["k"], [1]],
                     refund: ["k", 1], reset: ["k"], set_key_limit: ["k", 1], set_global_limit: [1])
  end

  def test_bad_arguments
    port = fixture.server_port
    assert_raises(TF::InvalidArgumentError) { RRL.new(0, 1000, 100, port: port) }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, 1000, 300, port: port) }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, 1000, 100, port: port, flags: RL::FULL_ALLOW) }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, 1000, 100, port: 0) }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, 1000, 100, port: port, prefix: "a{b") }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, 1000, 100, port: port, fallback: :maybe) }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, 1000, 100, port: port, time: :sundial) }
    assert_raises(TF::InvalidArgumentError) { RRL.new(5, -1, 100, port: port) }
    assert_raises(TypeError) { RRL.new(5, 1000, 100, port: "6379") }
    l = server_limiter(5, 1000, 100)
    assert_raises(TF::InvalidArgumentError) { l.acquire("k", 0) }
    assert_raises(TF::InvalidArgumentError) { l.acquire("k", 10, 0) }
    assert_raises(TF::InvalidArgumentError) { l.peek("k", 10, 0) }
    assert_raises(TF::InvalidArgumentError) { l.acquire("k" * 65_537, 10) }
    assert_raises(TF::InvalidArgumentError) { l.acquire_batch(%w[a b], [1], 1) }
    assert_raises(TF::InvalidArgumentError) { l.acquire_batch(%w[a b], [1, 2], 0) }
    assert_raises(TF::InvalidArgumentError) { l.acquire_batch(%w[a b], [1, 0], 1) }
    assert_raises(TypeError) { l.acquire_batch(["a", 1], [1, 2], 1) }
    assert_raises(TypeError) { l.acquire_batch("a", [1], 1) }
    assert_raises(TF::InvalidArgumentError) { l.set_key_limit("k", 70_000) }
    assert_raises(TF::InvalidArgumentError) { l.refund("k", 0) }
    assert_equal 0, l.stats.decisions, "nothing was decided"
    assert_equal [true, 4, 0], triple(l.acquire("k", 10)), "nothing was taken"
    l.close
  end

  def test_unreachable_server_at_creation
    port = fixture.server_port + 1
    e = assert_raises(TF::UnavailableError) { RRL.new(5, 1000, 100, port: port, connect_timeout_ms: 200) }
    assert_includes [-14, -15], e.status
    assert_nil e.decision
  end

  # The message of a fallback's error belongs to the call that failed: the
  # native decision returns it with the status, copied in the same call (a
  # second call to read it could run on another Ruby thread's native thread
  # under an M:N scheduler, Ruby 3.3's RUBY_MN_THREADS=1, and read that
  # thread's message). Two paused servers, so that every decision waits out
  # its command timeout, under limiters on several threads: every error
  # names the port of its own limiter's server, and so does every batch's.
  def test_fallback_message_is_the_calls_own
    fixtures = [RedisFixture.new("server"), RedisFixture.new("server")]
    limiters = []
    begin
      fixtures.each_with_index do |f, which|
        3.times do
          limiters << [RRL.new(2, 1000, 100, host: "127.0.0.1", port: f.server_port, prefix: prefix,
                                             connect_timeout_ms: 200, command_timeout_ms: 15,
                                             reconnect_min_ms: 1, reconnect_max_ms: 2), which]
        end
        assert_equal "paused", f.command("pause")
      end
      threads = limiters.map do |limiter, which|
        own = "127.0.0.1:#{fixtures[which].server_port}"
        other = "127.0.0.1:#{fixtures[1 - which].server_port}"
        Thread.new do
          (1..20).filter_map do |j|
            begin
              j.odd? ? limiter.acquire("k", j) : limiter.acquire_batch(%w[a b], [j, j])
              "a limiter of #{own}, call #{j}: no error"
            rescue TF::UnavailableError => e
              next nil if e.message.include?(own) && !e.message.include?(other)

              "a limiter of #{own}, call #{j}: #{e.message.inspect}"
            end
          end
        end
      end
      assert_equal [], threads.flat_map(&:value)
    ensure
      limiters.each { |limiter, _| limiter.close }
      fixtures.each do |f|
        f.command("resume")
        f.stop
      end
    end
  end

  # The native decisions' last two outputs: 0 and nil when Redis decided.
  def test_native_decision_without_failure_has_no_message
    rn = TF::RedisNative
    native = rn::RedisLimiterNative.new(2, 1000, 100, 0, nil, fixture.server_port, 1000, 1000,
                                        rn::TF_REDIS_TIME_CALLER, rn::TF_REDIS_FALLBACK_DENY, 0, 0, 600_000, prefix,
                                        rn::TF_REDIS_MODE_SERVER, nil)
    assert_equal [1, 1, 0, 0, nil], native.acquire("k", 10, 1)
  ensure
    native&.close
  end

  # A server of its own, killed: every decision raises UnavailableError
  # with the fallback's decision, counted in the stats; restarted, Redis
  # decides again by itself.
  def test_fallback_on_a_stopped_server
    own = RedisFixture.new("server")
    begin
      opts = { port: own.server_port, prefix: prefix, idle_expiry_ms: 600_000, command_timeout_ms: 300,
               connect_timeout_ms: 300, reconnect_min_ms: 10, reconnect_max_ms: 20 }
      deny = RRL.new(2, 1000, 100, **opts)
      allow = RRL.new(2, 1000, 100, fallback: :allow, **opts)
      local = RRL.new(2, 1000, 100, fallback: :local, **opts)
      embedded = RL.new(2, 1000, 100)
      assert deny.acquire("k", 10).allowed?
      assert_equal "killed", own.command("kill")

      e = assert_raises(TF::UnavailableError) { deny.acquire("k", 20) }
      assert_includes [-14, -15], e.status
      assert_equal [false, 0], [e.decision.allowed?, e.decision.remaining]
      refute_empty e.message
      e = assert_raises(TF::UnavailableError) { allow.acquire("k", 20) }
      assert e.decision.allowed?
      e = assert_raises(TF::UnavailableError) { deny.acquire_batch(%w[a b], [21, 22]) }
      assert_equal [false, false], e.decision.map(&:allowed?)
      refute deny.allow?("k", 23), "allow? answers the fallback's decision"
      assert_raises(TF::UnavailableError) { deny.reset("k") }
      assert_raises(TF::UnavailableError) { deny.set_global_limit(3) }

      # the embedded fallback decides as an embedded limiter of the same limits
      5.times do |i|
        want = embedded.acquire("e", 30 + i)
        e = assert_raises(TF::UnavailableError) { local.acquire("e", 30 + i) }
        assert_equal triple(want), triple(e.decision), "step #{i}"
      end

      s = deny.stats
      assert_equal 5, s.timeouts + s.unavailable, "acquire, the batch, allow?, reset, set_global_limit"
      assert_equal 4, s.fallback_denied, "the acquire, the batch's two, allow?"
      assert_equal [0, 0], [s.fallback_allowed, s.fallback_local]
      assert_equal 1, allow.stats.fallback_allowed
      assert_equal 5, local.stats.fallback_local

      assert_equal "restarted", own.command("restart")
      sleep 0.05
      d = nil
      50.times do
        d = deny.acquire("k", 40)
        break
      rescue TF::UnavailableError
        sleep 0.05
      end
      refute_nil d, "Redis decides again after the restart"
      assert_operator deny.stats.reconnects, :>=, 1
      [deny, allow, local, embedded].each(&:close)
    ensure
      own.stop
    end
  end
end
