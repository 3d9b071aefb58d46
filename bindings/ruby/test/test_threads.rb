# frozen_string_literal: true

# A CONCURRENT sketch and a rate limiter shared by many Ruby threads. Ruby's
# global VM lock serializes the calls, but the threads still interleave
# between calls, and the library's promises must hold under any
# interleaving: afterwards no key reads older than the latest time any
# thread wrote for it, pacing never granted one key twice within its
# interval, and the rate limiter never granted a key (or all keys together)
# more than its limit within a window.

require_relative "helper"
require_relative "rate_limiter_model"

class TestThreads < Minitest::Test
  THREADS = 8
  KEYS = Array.new(300) { |i| "shared-#{i}\x00#{i % 7}" }

  def test_updates_never_older_than_truth
    s = RS.new(128, 4, seed: 17, flags: RS::CONCURRENT) # small: many collisions
    written = in_threads(THREADS) do |_t, rng|
      max = {}
      4000.times do |i|
        k = KEYS[rng.rand(KEYS.size)]
        now = 1 + rng.rand(1_000_000)
        if i.even?
          s.update(k, now)
        else
          s.update_batch([k, KEYS[i % KEYS.size]], [now, now + 1])
          max[KEYS[i % KEYS.size]] = [max.fetch(KEYS[i % KEYS.size], 0), now + 1].max
        end
        max[k] = [max.fetch(k, 0), now].max
        s.query(k) # readers interleave with writers
        Thread.pass if (i % 64).zero?
      end
      max
    end
    truth = Hash.new(0)
    written.each { |max| max.each { |k, v| truth[k] = v if v > truth[k] } }
    refute_empty truth
    truth.each { |k, t| assert_operator s.query(k), :>=, t, k.inspect }
    assert_equal truth.keys.map { |k| s.query(k) }, s.query_batch(truth.keys)
  end

  def test_pace_never_grants_twice_within_the_interval
    s = RS.new(64, 3, seed: 5, flags: RS::CONCURRENT | RS::BLOCKED)
    interval = 50
    clock = 0
    clock_lock = Mutex.new
    grants = in_threads(THREADS, seed: 100) do |_t, rng|
      mine = []
      3000.times do |i|
        now = clock_lock.synchronize { clock += 1 + rng.rand(3) }
        now -= rng.rand(20) if now > 20 # some requests arrive late
        k = KEYS[rng.rand(20)]
        r = s.pace(k, now, interval)
        if r.granted?
          mine << [k, now]
          raise "next_allowed #{r.next_allowed} after a grant at #{now}" unless r.next_allowed == now + interval
        elsif r.next_allowed <= now
          raise "denied at #{now} but next_allowed is #{r.next_allowed}"
        end
        Thread.pass if (i % 32).zero?
      end
      mine
    end
    by_key = grants.flatten(1).group_by(&:first)
    assert_operator by_key.size, :>, 1
    total = 0
    by_key.each do |k, list|
      times = list.map(&:last).sort
      total += times.size
      times.each_cons(2) do |a, b|
        assert_operator b - a, :>=, interval, "#{k.inspect} granted at #{a} and #{b}"
      end
    end
    assert_operator total, :>, 20, "pacing granted something"
  end

  # Many threads on one limiter, in phases: in each phase every thread makes
  # a few requests at the same `now` (so that no key's clock goes backwards,
  # whatever the interleaving), then waits for the others; the phases step
  # by less than the window, so each window spans many of them. Afterwards:
  # exact mode, never more than a key's limit in any (t - window, t] and
  # never more than the global limit over all keys; bucketed mode, never
  # more than the limit in any `buckets` consecutive buckets.
  def run_limiter_threads(rl, exact:, limit:, window:, width:, global:, vip_limit:)
    keys = KEYS.first(12)
    inboxes = Array.new(THREADS) { Queue.new }
    done = Queue.new
    clock = Thread.new do
      60.times do |phase|
        now = 1000 + phase * (window / 7)
        inboxes.each { |q| q << now }
        THREADS.times { done.pop }
      end
      inboxes.each(&:close)
    end
    results = in_threads(THREADS, seed: 500) do |t, rng|
      grants = []
      errors = 0
      while (now = inboxes[t].pop)
        12.times do |i|
          k = keys[rng.rand(keys.size)]
          n = 1 + rng.rand(2)
          d = i.even? ? rl.acquire(k, now, n) : rl.peek(k, now, n)
          raise "remaining #{d.remaining} after #{k.inspect}" if d.remaining > vip_limit
          raise "denied without a retry time" if d.denied? && d.retry_at <= now
          n.times { grants << [k, now] } if i.even? && d.allowed?
          if (i % 5).zero? # an error on this thread never reaches another
            begin
              rl.acquire(k, now, 0)
            rescue TemporalFilters::InvalidArgumentError
              errors += 1
            end
          end
          Thread.pass
        end
        done << t
      end
      [grants, errors]
    end
    clock.join
    assert_equal [60 * 3] * THREADS, results.map(&:last)
    all = results.map(&:first).flatten(1)
    by_key = all.group_by(&:first).transform_values { |list| list.map(&:last).sort }
    assert_operator by_key.size, :>, 6
    reached = 0
    by_key.each do |k, times|
      own = k == keys[0] ? vip_limit : limit
      if exact
        most = RateLimiterModel.max_in_window(times, window)
        assert_operator most, :<=, own, k.inspect
        reached += 1 if most == own
      else
        counts = times.group_by { |x| x / width }.transform_values(&:size)
        counts.each_key do |b|
          assert_operator (b...b + window / width).sum { |j| counts.fetch(j, 0) }, :<=, own, k.inspect
        end
      end
    end
    return unless exact

    if global
      # some 70 permits are asked for in every phase, 30 free up per window
      assert_equal global, RateLimiterModel.max_in_window(all.map(&:last).sort, window),
                   "the global limit was reached, never passed"
    else
      # some 9 permits per key and phase: the keys reach their limit
      assert_operator reached, :>, by_key.size / 2, "the traffic pushed the keys to their limit"
    end
  end

  def test_rate_limiter_exact_never_over_the_limit
    rl = TemporalFilters::RateLimiter.exact(4, 140).set_key_limit(KEYS[0], 9)
    run_limiter_threads(rl, exact: true, limit: 4, window: 140, width: nil, global: nil, vip_limit: 9)
  end

  def test_rate_limiter_exact_never_over_the_global_limit
    rl = TemporalFilters::RateLimiter.exact(4, 140).set_global_limit(30).set_key_limit(KEYS[0], 9)
    run_limiter_threads(rl, exact: true, limit: 4, window: 140, width: nil, global: 30, vip_limit: 9)
  end

  def test_rate_limiter_bucketed_never_over_the_limit_per_bucket_window
    rl = TemporalFilters::RateLimiter.new(4, 140, 20).set_key_limit(KEYS[0], 9)
    run_limiter_threads(rl, exact: false, limit: 4, window: 140, width: 20, global: nil, vip_limit: 9)
  end

  def test_threads_on_separate_sketches
    results = in_threads(4) do |t, _rng|
      s = RS.new(256, 2, seed: t)
      200.times { |i| s.update("k#{i}", t * 1000 + i + 1) }
      s.query("k199")
    end
    assert_equal [200, 1200, 2200, 3200], results
  end
end
