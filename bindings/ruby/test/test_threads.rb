# frozen_string_literal: true

# A CONCURRENT sketch shared by many Ruby threads. Ruby's global VM lock
# serializes the calls, but the threads still interleave between calls, and
# the library's promises must hold under any interleaving: afterwards no key
# reads older than the latest time any thread wrote for it, and pacing never
# granted one key twice within its interval.

require_relative "helper"

class TestThreads < Minitest::Test
  RS = TemporalFilters::RecencySketch
  THREADS = 8
  KEYS = Array.new(300) { |i| "shared-#{i}\x00#{i % 7}" }

  def test_updates_never_older_than_truth
    s = RS.new(128, 4, 17, RS::CONCURRENT) # small: many collisions
    written = Array.new(THREADS)
    threads = Array.new(THREADS) do |t|
      Thread.new do
        rng = Random.new(t)
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
        written[t] = max
      end
    end
    threads.each(&:join)
    truth = Hash.new(0)
    written.each { |max| max.each { |k, v| truth[k] = v if v > truth[k] } }
    refute_empty truth
    truth.each { |k, t| assert_operator s.query(k), :>=, t, k.inspect }
    assert_equal truth.keys.map { |k| s.query(k) }, s.query_batch(truth.keys)
  end

  def test_pace_never_grants_twice_within_the_interval
    s = RS.new(64, 3, 5, RS::CONCURRENT | RS::BLOCKED)
    interval = 50
    clock = 0
    clock_lock = Mutex.new
    grants = Array.new(THREADS)
    threads = Array.new(THREADS) do |t|
      Thread.new do
        rng = Random.new(100 + t)
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
        grants[t] = mine
      end
    end
    threads.each(&:join)
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

  def test_threads_on_separate_sketches
    results = Array.new(4) do |t|
      Thread.new do
        s = RS.new(256, 2, t)
        200.times { |i| s.update("k#{i}", t * 1000 + i + 1) }
        s.query("k199")
      end
    end.map(&:value)
    assert_equal [200, 1200, 2200, 3200], results
  end
end
