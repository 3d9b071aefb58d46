# frozen_string_literal: true

# TemporalFilters::RedisLimiter (include/temporalfilters/redis.h): the rate
# limiter on Redis. Loaded by require "temporalfilters/redis" only, with its
# own extension (temporalfilters_redis_native, linked with
# libtemporalfilters-redis and hiredis), so that require "temporalfilters"
# needs neither.

require_relative "../temporalfilters"
begin
  require "temporalfilters_redis_native"
rescue LoadError => e
  raise LoadError, "TemporalFilters::RedisLimiter needs the extension temporalfilters_redis_native, built with " \
                   "the companion library libtemporalfilters-redis (and hiredis): by meson with the redis option, " \
                   "or by the gem's install where pkg-config finds temporalfilters-redis.pc (Debian: install " \
                   "libtemporalfilters-redis-dev, then reinstall the gem): #{e.message}"
end

module TemporalFilters
  # The sliding-window rate limiter of RateLimiter with its state in Redis
  # (a server or a Redis Cluster), shared by every process that uses the
  # same server and prefix: the same configuration (limit, window,
  # bucket_width, EXACT, per-key limits, a global limit) and the same
  # decisions as RateLimiter on the same request sequence (one exception on
  # the caller's clock: see #set_global_limit), each decision one Lua
  # script on the server (docs/redis.md).
  #
  # Decisions are RateLimiter::Decision values. Times are the caller's
  # (time: :caller, the default: Integers >= 1 in any unit; the keys' idle
  # expiry counts them as milliseconds unless idle_expiry_ms is given), or
  # the server's clock in milliseconds (time: :server: pass now = 0).
  #
  # When Redis cannot answer (a stopped server, a timeout), a decision
  # (#acquire, #peek, #acquire_batch) raises UnavailableError (status
  # TF_ERR_TIMEOUT or TF_ERR_UNAVAILABLE) whose #decision is the
  # fallback's decision, chosen at creation: fallback: :deny (the default),
  # :allow, or :local (an embedded RateLimiter of the same limits, one per
  # limiter, not per process); #stats counts each. The connection comes back by itself after
  # a backoff. The other calls raise UnavailableError without a decision.
  #
  # Not thread-safe: a limiter holds its connections; use one per thread
  # (or a pool). Limiters of the same prefix share the state in Redis.
  class RedisLimiter
    # Creation flag: exact mode (RateLimiter::EXACT).
    EXACT = RateLimiter::EXACT

    # The counters of #stats (frozen): decisions (Redis made), timeouts and
    # unavailable (calls that failed with each status), fallback_denied,
    # fallback_allowed and fallback_local (the fallback's decisions by
    # kind), reconnects, script_loads, redirects (cluster: MOVED and ASK
    # followed) and global_undos (cluster: a key's permits given back when
    # the global window denied).
    Stats = Struct.new(:decisions, :timeouts, :unavailable, :fallback_denied, :fallback_allowed, :fallback_local,
                       :reconnects, :script_loads, :redirects, :global_undos)

    TIME_SOURCES = { caller: RedisNative::TF_REDIS_TIME_CALLER, server: RedisNative::TF_REDIS_TIME_SERVER }.freeze
    FALLBACKS = { deny: RedisNative::TF_REDIS_FALLBACK_DENY, allow: RedisNative::TF_REDIS_FALLBACK_ALLOW,
                  local: RedisNative::TF_REDIS_FALLBACK_LOCAL }.freeze
    MODES = { server: RedisNative::TF_REDIS_MODE_SERVER, cluster: RedisNative::TF_REDIS_MODE_CLUSTER }.freeze
    private_constant :TIME_SOURCES, :FALLBACKS, :MODES

    # Each key at most limit requests per window, in buckets of
    # bucket_width (ignored, may be 0, with flags: EXACT), as RateLimiter.new;
    # connects and loads the script. The keywords are the options of
    # redis.h: host ("127.0.0.1"), port (6379; with cluster: true, a seed
    # node's), cluster: (true for a Redis Cluster), cluster_seeds ("h:p,h:p"
    # more seeds), connect_timeout_ms and command_timeout_ms (1000 each),
    # time: (:caller or :server), fallback: (:deny, :allow or :local),
    # reconnect_min_ms and reconnect_max_ms (0: 100 and 5000),
    # idle_expiry_ms (0: one window), prefix ("tf:rl:"). Raises
    # InvalidArgumentError, UnavailableError (no server, or a timeout).
    def initialize(limit, window, bucket_width, flags: 0, host: nil, port: RedisNative::TF_BINDING_REDIS_PORT,
                   cluster: false, cluster_seeds: nil,
                   connect_timeout_ms: RedisNative::TF_BINDING_REDIS_CONNECT_TIMEOUT_MS,
                   command_timeout_ms: RedisNative::TF_BINDING_REDIS_COMMAND_TIMEOUT_MS,
                   time: :caller, fallback: :deny, reconnect_min_ms: 0, reconnect_max_ms: 0, idle_expiry_ms: 0,
                   prefix: nil)
      @native = RedisNative::RedisLimiterNative.new(
        limit, window, bucket_width, flags, host, port, connect_timeout_ms, command_timeout_ms,
        choice(TIME_SOURCES, time, "time"), choice(FALLBACKS, fallback, "fallback"), reconnect_min_ms,
        reconnect_max_ms, idle_expiry_ms, prefix, cluster ? MODES[:cluster] : MODES[:server], cluster_seeds
      )
    end

    # Asks for n (>= 1) permits for key at now (0 with time: :server) and
    # takes them when allowed: a RateLimiter::Decision. Raises
    # UnavailableError carrying the fallback's #decision when Redis cannot
    # answer.
    def acquire(key, now, n = 1)
      decided(*@native.acquire(key, now, n))
    end

    # The Decision #acquire would make now, changing nothing.
    def peek(key, now, n = 1)
      decided(*@native.peek(key, now, n))
    end

    # acquire(keys[i], times[i], n) for every key, sent as one pipeline (on
    # a cluster, one per node and phase): an
    # Array of Decisions. times: one Integer per key, or nil with
    # time: :server. Raises UnavailableError whose #decision is the Array
    # (Redis's decisions for the answers that arrived, the fallback's for
    # the others).
    def acquire_batch(keys, times, n = 1)
      raise TypeError, "keys must be an Array, not #{keys.class}" unless keys.is_a?(Array)

      count = keys.size
      _granted, allowed, remaining, retry_at, unavailable, message =
        @native.acquire_batch(keys, times || [], n, count, count, count)
      decisions = Array.new(count) { |i| RateLimiter::Decision.new(allowed[i], remaining[i], retry_at[i]) }
      unavailable.zero? ? decisions : raise(failure(unavailable, message, decisions))
    end

    # acquire(key, now, n).allowed?, the fallback's answer when Redis cannot
    # answer (no error raised).
    def allow?(key, now, n = 1)
      @native.acquire(key, now, n)[0] == 1
    end

    # Gives back up to n permits key took (the most recent first), to the
    # global window too. Returns self.
    def refund(key, now, n = 1)
      @native.refund(key, now, n)
      self
    end

    # Forgets key's requests in Redis (its own limit stays). Returns self.
    def reset(key)
      @native.reset(key)
      self
    end

    # Gives key its own limit (0 removes it), stored in Redis for every
    # client of the prefix. Returns self.
    def set_key_limit(key, limit)
      @native.set_key_limit(key, limit)
      self
    end

    # The limit over all keys of the prefix (0 removes it; at most
    # RateLimiter::MAX_EXACT_GLOBAL_LIMIT with EXACT, below 2**51 bucketed),
    # stored in Redis; starts an empty global window. With time: :server the
    # new window starts past the server's time, as the embedded limiter's
    # starts past every key's; on the caller's clock it starts at its first
    # request's time, so the answers in the bucket (exact mode: at the time)
    # in which it was set may differ from the embedded limiter's, and a
    # refund of a permit taken before may take out the window's grants
    # there: set it before the traffic. Returns self.
    def set_global_limit(limit)
      @native.set_global_limit(limit)
      self
    end

    # The counters (a frozen Stats).
    def stats
      native = @native.stats
      Stats.new(*Stats.members.map { |name| native.public_send(name) }).freeze
    end

    # Closes the connections (the state in Redis stays). Later calls raise
    # ClosedError.
    def close
      @native.close
      nil
    end

    # True after #close.
    def closed?
      @native.is_closed
    end

    # A limiter owns its connections, on which calls must never overlap
    # (see "Not thread-safe"), so dup and clone raise (TypeError; ClosedError
    # once closed) rather than give a second object on the same connections,
    # which a copy per thread would use at once. Make another with new.
    def initialize_copy(source)
      raise ClosedError, "the RedisLimiter is closed" if source.closed?

      raise TypeError, "a RedisLimiter cannot be copied (it owns its connections): make another with new"
    end

    def inspect # :nodoc:
      closed? ? "#<#{self.class} closed>" : "#<#{self.class} decisions=#{stats.decisions}>"
    end

    private

    def choice(table, value, name)
      table.fetch(value) do
        raise InvalidArgumentError.new("#{name} must be one of #{table.keys.map(&:inspect).join(", ")}, " \
                                       "not #{value.inspect}", -2)
      end
    end

    # The native decisions end with the failure's status (0: Redis decided)
    # and its message, taken in the same native call.
    def decided(allowed, remaining, retry_at, unavailable, message)
      decision = RateLimiter::Decision.new(allowed == 1, remaining, retry_at)
      unavailable.zero? ? decision : raise(failure(unavailable, message, decision))
    end

    def failure(unavailable, message, decision)
      status = -unavailable
      error = Error.class_for(status).new(message, status)
      error.instance_variable_set(:@decision, decision)
      error
    end
  end
end
