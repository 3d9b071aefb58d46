# frozen_string_literal: true

# TemporalFilters::RateLimiter (include/temporalfilters/rate_limiter.h).

module TemporalFilters
  # "May this key make another request now?": the sliding-window rate
  # limiter of include/temporalfilters/rate_limiter.h (the algorithm of the
  # Rate Limiter README, with its defects fixed: docs/rate-limiter.md). Each
  # key may make at most `limit` requests per `window` time units.
  #
  # Two modes, chosen at creation:
  # - bucketed (the default): the window is split into window / bucket_width
  #   buckets of counts; constant memory per key (a 47-byte record for 10
  #   buckets and keys of up to 16 bytes, 25 + 2 * (buckets + 1) in
  #   general, in a table kept 76-85% full: 55-62 bytes per key). A grant
  #   may leave the window up to bucket_width - 1 time units early: at most
  #   `limit` grants in any window / bucket_width consecutive buckets (so
  #   in any interval of length window - bucket_width + 1), up to 2 * limit
  #   in a real window against bursts at bucket edges (bounded
  #   over-admission);
  # - EXACT: a key keeps the times of its last `limit` grants (a 33-byte
  #   record and a ring of grant times that grows with the key's grants,
  #   at most 24 + 4 * limit bytes, 24 + 8 * limit for a window of more
  #   than 2^31 time units); never more than `limit` grants in
  #   any interval (t - window, t].
  #
  # A global limit (#set_global_limit) caps all keys together, and a key may
  # have its own limit (#set_key_limit) but is still held to the global one.
  # With a global limit every decision, #acquire and #peek alike and
  # whether the key allows or not, asks both windows: allowed when both
  # allow, remaining the smaller of the two, retry_at the later of the two
  # windows' retry times (a window that allows counts 0, one that never can
  # RETRY_NEVER).
  #
  # Idle keys (every permit they took has left the window) are reclaimed a
  # few slots at a time, never by a full scan: 4 slots of the key's shard
  # when a new key is inserted, 8 slots of another shard (round robin) every
  # 16th request of a shard. Each shard remembers its reclaim horizon (the
  # latest time + window of the keys it reclaimed): a key that is not
  # tracked and asks before it is denied until then (remaining 0, retry_at
  # the horizon), so a key whose clock runs behind the others' never gets
  # permits early after being reclaimed.
  #
  # #set_max_keys bounds the number of keys tracked: when it is reached, a
  # new key first reclaims an idle key (16 slots of its own shard, then 16
  # of every other shard whose lock is free; after a search that found
  # nothing, the next 63 new keys look at their own shard only); when there
  # is none it is denied (the default, fail closed: remaining 0,
  # RETRY_NEVER) or, created with FULL_ALLOW, admitted untracked (fail
  # open: remaining 0), still held to and charged to the global limit;
  # #stats counts both.
  #
  # Every decision is a Decision: allowed?, remaining (permits left in the
  # window after it) and retry_at, the earliest time at which the same
  # request would be granted (RETRY_NEVER when it never can be: n above the
  # key's limit, or a full table that denies new keys); #retry_after(now)
  # gives the wait for a Retry-After header.
  #
  # Times are Integers in the caller's unit, the same as window and
  # bucket_width: now in 1...2**64 (0 and values outside 0...2**64 raise
  # InvalidArgumentError). A clock that goes backwards is clamped per key (and
  # for the global window) to the latest time that key has seen, through
  # #acquire and #refund (a #peek moves no clock). Ruby's Integers hold
  # 2**64 - 1, so RETRY_NEVER comes back as it is, never clamped.
  #
  # Thread safety: internally synchronised (sharded locks); every call may
  # run from many threads at once, except #close (exclusive). #serialize
  # (and so #dup and Marshal) may run meanwhile: the library takes every
  # lock of the limiter while it writes, so the blob is one consistent
  # moment; when the limiter grows between measuring the size and writing,
  # #serialize measures and writes again. (Ruby's global VM lock serializes
  # the calls of Ruby threads anyway, but not those of other native
  # threads.)
  class RateLimiter
    include NativeHandle

    # Creation flag: exact mode (no over-admission; bucket_width ignored).
    EXACT = Native::TF_RATE_LIMITER_EXACT
    # Creation flag: when #set_max_keys is reached, admit new keys untracked
    # instead of denying them.
    FULL_ALLOW = Native::TF_RATE_LIMITER_FULL_ALLOW

    # The library's bounds (rate_limiter.h). The largest per-key limit in
    # bucketed mode (65535).
    MAX_KEY_LIMIT = Native::TF_RATE_LIMITER_MAX_KEY_LIMIT
    # The largest per-key limit in EXACT mode (2**20).
    MAX_EXACT_LIMIT = Native::TF_RATE_LIMITER_MAX_EXACT_LIMIT
    # The most buckets a window holds (window / bucket_width, 4096).
    MAX_BUCKETS = Native::TF_RATE_LIMITER_MAX_BUCKETS
    # The largest exact global limit (2**24; a literal: rate_limiter.h states
    # it in the documentation of tf_rate_limiter_set_global_limit, with no
    # macro).
    MAX_EXACT_GLOBAL_LIMIT = 1 << 24

    # The answer of #acquire and #peek: allowed (true/false); remaining, the
    # permits left to the key in the window after the decision (the smaller
    # of the key's and the global window's when a global limit is set, on
    # every decision; 0 for a key admitted untracked by a full FULL_ALLOW
    # table); retry_at, 0 when allowed, else the earliest time at which the
    # same request would be granted if nothing else happened (the later of
    # the key's and the global window's), or RETRY_NEVER.
    Decision = Struct.new(:allowed, :remaining, :retry_at) do
      alias_method :allowed?, :allowed

      def denied?
        !allowed
      end

      # True when the request can never be granted (retry_at is RETRY_NEVER).
      def never?
        !allowed && retry_at == RETRY_NEVER
      end

      # The wait before retrying, for a Retry-After header: 0 when allowed,
      # retry_at - now (at least 0) when denied, nil when never? (the
      # request can never be granted as it is).
      def retry_after(now)
        NativeHandle.check_integer(now, "now")
        return 0 if allowed
        return nil if retry_at == RETRY_NEVER

        retry_at > now ? retry_at - now : 0
      end
    end

    # The settings, from #info (frozen): limit (a key's default limit),
    # window, bucket_width (0 with EXACT), the creation flags
    # (EXACT, FULL_ALLOW), global_limit (0: none) and max_keys (0: no
    # bound), as #set_global_limit and #set_max_keys last set them, and the
    # hash seed. Each
    # member has a reader of its own (#limit, ...).
    Info = Struct.new(:limit, :window, :bucket_width, :flags, :global_limit, :max_keys, :seed)
    snapshot_readers :info, Info
    flag_predicates exact: EXACT, full_allow: FULL_ALLOW

    # The counters of #stats (frozen): keys (tracked now; #tracked_keys),
    # reclaimed (idle keys reclaimed so far), denied_full (requests of new
    # keys denied because the table was full; peeks are not counted),
    # allowed_full (admitted untracked because it was full, with FULL_ALLOW;
    # one refused by the global limit is not counted) and memory (bytes
    # held; it walks every shard). The counters have a reader of their own
    # (#reclaimed, ...), which takes the whole snapshot.
    Stats = Struct.new(:keys, :reclaimed, :denied_full, :allowed_full, :memory)
    snapshot_readers :stats, Stats, except: %i[keys memory]

    # Each key at most limit (>= 1; at most MAX_KEY_LIMIT, or
    # MAX_EXACT_LIMIT with EXACT) requests per window (>= 1) time units.
    # bucket_width: the width of a bucket, dividing window, with at most
    # MAX_BUCKETS buckets per window; ignored (may be 0) with EXACT. seed:
    # the hash seed (any 32-bit value; when keys come from clients, a random
    # secret one, so that nobody can choose keys that crowd one shard).
    # flags: 0 or EXACT | FULL_ALLOW. Raises InvalidArgumentError,
    # OutOfMemoryError.
    def initialize(limit, window, bucket_width, seed: 0, flags: 0)
      @native = NATIVE.new(limit, window, bucket_width, seed, flags)
    end

    # An exact-mode limiter: new(limit, window, 0, seed:, flags: EXACT | flags).
    def self.exact(limit, window, seed: 0, flags: 0)
      adopt(NATIVE.new(limit, window, 0, seed, NativeHandle.check_integer(flags, "flags") | EXACT))
    end

    # Asks for n (>= 1) permits for key at now and takes them when allowed.
    # As in the Rate Limiter README, the key's window (and the global one)
    # is first brought to now, granted or not: a later call with an earlier
    # now is judged at this now (the clock is clamped per key); a denial
    # takes nothing. Returns a Decision. Raises InvalidArgumentError for
    # now == 0 or n == 0; n above the key's limit is a denial that never?
    # can be granted.
    def acquire(key, now, n = 1)
      allowed, remaining, retry_at = @native.acquire(key, now, n)
      Decision.new(allowed == 1, remaining, retry_at)
    end

    # acquire(keys[i], times[i], n) for every key of the Array keys, in
    # order, in one native call: an Array of one Decision per key, and the
    # same state afterwards as those single calls. The library fetches the
    # table lines of the next keys while it decides one, so their cache
    # misses overlap (about twice the throughput of single calls on a limiter
    # of a million keys, larger than the CPU's caches), and the cost of a
    # call into C is paid once: for requests that arrive together (a server
    # gathering one event-loop tick's requests, a queue admitted at once).
    # Not atomic: other threads' calls may come between its keys. times
    # holds one Integer (>= 1) per key. Every argument is checked before any
    # decision, so a refused call changes nothing: InvalidArgumentError when
    # times.size != keys.size, a time is 0 or n is 0 (even for an empty
    # batch), TypeError for a key that is not a String.
    def acquire_batch(keys, times, n = 1)
      count = key_array(keys).size
      _granted, allowed, remaining, retry_at = @native.acquire_batch(keys, times, n, count, count, count)
      Array.new(count) { |i| Decision.new(allowed[i], remaining[i], retry_at[i]) }
    end

    # The Decision #acquire would make at now, without changing anything: no
    # permit taken, no clock moved, no key created or reclaimed (#serialize
    # gives the same bytes before and after). A new key meeting a full table
    # gets acquire's answer too: the table is looked at for idle keys, not
    # swept.
    def peek(key, now, n = 1)
      allowed, remaining, retry_at = @native.peek(key, now, n)
      Decision.new(allowed == 1, remaining, retry_at)
    end

    # acquire(key, now, n).allowed?
    def allow?(key, now, n = 1)
      @native.acquire(key, now, n)[0] == 1
    end

    # Gives back up to n permits key took (the most recent first), to the
    # global window too: the same buckets (or grant times) as the key's, if
    # they are still in it. A key not tracked is a no-op. Returns self.
    def refund(key, now, n = 1)
      @native.refund(key, now, n)
      self
    end

    # Forgets key's requests (its own limit stays). Returns self.
    def reset(key)
      @native.reset(key)
      self
    end

    # A limit over all keys together, in the same window (0 removes it;
    # with EXACT at most MAX_EXACT_GLOBAL_LIMIT): a request is then granted
    # only when both the key's and the global window allow it, and every
    # decision reports the smaller remaining and the later retry_at.
    # Setting it starts the global window afresh (the keys' own windows are
    # kept), its clock just past the latest time any key has seen, so that
    # a refund of a permit taken before goes back to its key only. Returns
    # self.
    def set_global_limit(limit)
      @native.set_global_limit(limit)
      self
    end

    # Gives key its own limit (0 removes it, back to the default); it stays
    # while the key is idle or reclaimed, and the key is still held to the
    # global limit. Returns self.
    def set_key_limit(key, limit)
      @native.set_key_limit(key, limit)
      self
    end

    # At most max_keys keys tracked at once (0: no bound). When the table is
    # full a new key first takes the place of an idle key; with none, it is
    # denied (RETRY_NEVER, #denied_full) or, with FULL_ALLOW, admitted
    # untracked (remaining 0, #allowed_full) within the global limit.
    # Returns self.
    def set_max_keys(max_keys)
      @native.set_max_keys(max_keys)
      self
    end

    # The number of keys tracked now (stats.keys).
    def tracked_keys
      stats.keys
    end

    private

    def inspect_fields
      "keys=#{tracked_keys}"
    end
  end
end
