# frozen_string_literal: true

# A plain-Ruby model of the rate limiter's decisions
# (include/temporalfilters/rate_limiter.h; ref_op() of
# tests/rate_limiter/limiter_model.c states the same rules), for traffic whose clock
# never goes backwards: the tests run the same requests through
# TemporalFilters::RateLimiter and this model and compare every answer.
#
# Exact mode is a sliding log: a key's (and the global) grant times; a grant
# at t counts at every now < t + window. Bucketed mode is the Rate
# Limiter README's algorithm on a Hash of bucket index => count: at now the window holds the
# buckets with index > now / width - window / width; a request is allowed
# when those counts plus n stay within the limit, and a denied one may retry
# when enough of the oldest buckets have left, at (index + buckets) * width.
#
# With a global limit every decision (acquire and peek, whether the key
# allows or not) asks both windows: allowed when both allow, remaining the
# smaller of the two after the decision (a denial takes nothing, so a window
# that would have granted keeps its n), retry_at the later of the two
# windows' retry times (a window that allows counts 0, one that never can
# RETRY_NEVER). A refund
# gives the key's own permits (its newest buckets or grant times) back to
# the global window.
#
# Idle reclamation and the reclaim horizon are not modelled: with a clock
# that never goes backwards they change no decision (a key is reclaimed only
# once every permit it took has left the window, and a shard's horizon, the
# latest + window of the keys it reclaimed, is never after the time of the
# request that reclaimed them, hence never after a later request's time).
# Neither is max_keys (the tests using the model set none).
class RateLimiterModel
  RETRY_NEVER = (1 << 64) - 1

  # One window (a key's or the global one).
  class Window
    def initialize(exact, window, width)
      @exact = exact
      @window = window
      @width = width
      @nb = exact ? 1 : window / width
      @log = []        # exact: grant times, oldest first
      @counts = {}     # bucketed: bucket index => count
    end

    def advance(now)
      if @exact
        @log.shift while !@log.empty? && @log.first + @window <= now
      else
        head = now / @width
        @counts.delete_if { |index, _| index <= head - @nb }
      end
    end

    def used
      @exact ? @log.size : @counts.values.sum
    end

    # [allowed, remaining, retry_at] for n permits against limit at now.
    def decide(now, limit, n)
      advance(now)
      u = used
      return [true, limit - u - n, 0] if n <= limit && u + n <= limit

      remaining = u >= limit ? 0 : limit - u
      return [false, remaining, RETRY_NEVER] if n > limit

      need = u + n - limit
      if @exact
        [false, remaining, [@log[need - 1] + @window, RETRY_NEVER].min]
      else
        freed = 0
        @counts.keys.sort.each do |index|
          freed += @counts[index]
          return [false, remaining, (index + @nb) * @width] if freed >= need
        end
        [false, remaining, RETRY_NEVER]
      end
    end

    def take(now, n)
      if @exact
        n.times { @log << now }
      else
        index = now / @width
        @counts[index] = @counts.fetch(index, 0) + n
      end
    end

    # Gives back up to n of the newest permits; returns what was given back:
    # exact, the grant times; bucketed, [bucket index, count] pairs.
    def refund(now, n)
      advance(now)
      back = [n, used].min
      return @log.pop(back) if @exact

      given = []
      left = back
      @counts.keys.sort.reverse_each do |index|
        break if left.zero?

        take_back = [@counts[index], left].min
        @counts[index] -= take_back
        left -= take_back
        given << [index, take_back]
      end
      given
    end

    # Removes permits another window gave back (#refund's result), when
    # they are still here.
    def remove(given)
      if @exact
        given.each do |t|
          i = @log.index(t)
          @log.delete_at(i) if i
        end
      else
        given.each do |index, count|
          next unless @counts.key?(index)

          @counts[index] -= [count, @counts[index]].min
        end
      end
    end
  end

  # key => grant times since its last reset (one per permit), and the grant
  # times of keys before a reset, each list on its own (a reset forgets).
  attr_reader :grants, :forgotten

  def initialize(limit, window, width, exact)
    @limit = limit
    @window = window
    @width = width
    @exact = exact
    @keys = {}
    @overrides = {}
    @global_limit = 0
    @global = nil
    @grants = Hash.new { |h, k| h[k] = [] }
    @forgotten = []
  end

  def set_global_limit(limit)
    @global_limit = limit
    @global = limit.zero? ? nil : Window.new(@exact, @window, @width)
  end

  def set_key_limit(key, limit)
    limit.zero? ? @overrides.delete(key) : @overrides[key] = limit
  end

  # [allowed, remaining, retry_at] of acquire (take) or peek.
  def decide(key, now, n, take)
    limit = @overrides.fetch(key, @limit)
    w = @keys[key] || Window.new(@exact, @window, @width)
    allowed, remaining, retry_at = w.decide(now, limit, n)
    if @global
      # both windows, whatever the key's own answer
      g_allowed, g_remaining, g_retry_at = @global.decide(now, @global_limit, n)
      retry_at = [allowed ? 0 : retry_at, g_allowed ? 0 : g_retry_at].max
      both = allowed && g_allowed
      # the fewer remaining after the decision: a denial takes nothing, so a
      # window that would have granted keeps its n
      remaining += n if allowed && !both
      g_remaining += n if g_allowed && !both
      allowed = both
      remaining = [remaining, g_remaining].min
      retry_at = 0 if allowed
    end
    if allowed && take
      @keys[key] = w
      w.take(now, n)
      @global&.take(now, n)
      n.times { @grants[key] << now }
    end
    [allowed, remaining, retry_at]
  end

  def refund(key, now, n)
    w = @keys[key] or return
    given = w.refund(now, n)
    if @global
      @global.advance(now)
      @global.remove(given)
    end
    @grants[key].pop(@exact ? given.size : given.sum(&:last))
  end

  def reset(key)
    @keys.delete(key)
    @forgotten << @grants.delete(key) if @grants.key?(key)
  end

  # The largest number of grants of `times` (sorted) within any half-open
  # interval (t - window, t].
  def self.max_in_window(times, window)
    best = 0
    first = 0
    times.each_with_index do |t, i|
      first += 1 while times[first] + window <= t
      best = [best, i - first + 1].max
    end
    best
  end
end
