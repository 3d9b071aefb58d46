# frozen_string_literal: true

# TemporalFilters::RecencyWindow (include/temporalfilters/recency_window.h).

module TemporalFilters
  # "How many inserts ago was this key last seen?" over the last W inserts
  # of a stream, within a relative error (1 + eps), or "not within the
  # window": the recency window (include/temporalfilters/recency_window.h),
  # after Holland, Wirth and Zobel, "Recency Queries with Succinct
  # Representation" (ISAAC 2020).
  #
  # The stream is the sequence of inserts (#insert, and every key of the
  # other insert forms); there is no clock. The recency of a key is the
  # number of inserts made since its last insert: 0 when the newest insert
  # was that key. A key inserted r < W inserts ago is never reported out of
  # the window; a key whose last insert is at least W + slack - 1 inserts
  # ago (#slack), or one never inserted, always is: the answer is then nil,
  # in the single calls and in the batches' Arrays alike.
  #
  # Three modes, chosen at creation with mode: (MODES), for a key of true
  # recency r < W answered e: :historical (HistoricalMembership, the
  # default) e <= r <= (1 + 1/inv_eps) e; :exact (ExactCuckoo) e == r;
  # :optimal_sm (OptimalSM) e <= r <= e + block - 1.
  #
  # The options are keyword arguments of new, each defaulting to
  # TF_RECENCY_WINDOW_OPTIONS_INIT's value:
  #
  #   window = TemporalFilters::RecencyWindow.new(window: 100_000, inv_eps: 16)
  #   window.insert_report("object-7")  # => nil: not seen within the window
  #   window.insert_report("object-7")  # => 0: the previous insert
  #   window.query("object-7")          # => 0
  #
  # Not internally synchronised: query, query_batch, the getters, info,
  # stats, level, memory and serialize may overlap each other (from native
  # threads); insert, insert_report, their batches, clear and close need
  # exclusive access.
  class RecencyWindow
    include NativeHandle

    # The modes by name: :historical (TF_RECENCY_WINDOW_HISTORICAL), :exact
    # (TF_RECENCY_WINDOW_EXACT) and :optimal_sm
    # (TF_RECENCY_WINDOW_OPTIMAL_SM).
    MODES = { historical: Native::TF_RECENCY_WINDOW_HISTORICAL, exact: Native::TF_RECENCY_WINDOW_EXACT,
              optimal_sm: Native::TF_RECENCY_WINDOW_OPTIMAL_SM }.freeze
    # The largest window, in inserts (TF_RECENCY_WINDOW_MAX_WINDOW, 2**40).
    MAX_WINDOW = Native::TF_RECENCY_WINDOW_MAX_WINDOW
    # The largest inverse error 1/eps (TF_RECENCY_WINDOW_MAX_INV_EPS, 2**20).
    MAX_INV_EPS = Native::TF_RECENCY_WINDOW_MAX_INV_EPS

    # What was fixed at creation, from #info (frozen), the defaults
    # resolved: window (W, in inserts), inv_eps (1/eps), block (OptimalSM's
    # D; 0 in the other modes), max_memory (the cap in bytes, 0: none),
    # delta (0: exact signatures), mode (a Symbol of MODES), the hash seed,
    # the creation flags, signature_bits (64 when exact), levels and slack.
    # Each member has a reader of its own (#window, ...).
    Info = Struct.new(:window, :inv_eps, :block, :max_memory, :delta, :mode, :seed, :flags, :signature_bits,
                      :levels, :slack)

    # The current state, from #stats (frozen): inserts (since creation or
    # #clear), window_items (min(inserts, W)), levels, items (entries held),
    # memory, bits_per_window_item, promotions (entries moved up a level),
    # expired (dropped out of the window), merged (met by a newer entry of
    # their key), lost (dropped for want of room: never observed) and
    # stashed.
    Stats = Struct.new(:inserts, :window_items, :levels, :items, :memory, :bits_per_window_item, :promotions,
                       :expired, :merged, :lost, :stashed)
    snapshot_readers :stats, Stats, except: Stats.members

    # One level (a sliding dictionary), from #level(i) (frozen): slots,
    # items, capacity, block_width (inserts per class: 2**l for level l of
    # :historical), load, entry_bits, class_bits and stashed.
    Level = Struct.new(:slots, :items, :capacity, :block_width, :load, :entry_bits, :class_bits, :stashed)

    # The native value of a mode Symbol (InvalidArgumentError for another).
    def self.mode_code(mode)
      MODES.fetch(mode) do
        raise InvalidArgumentError.new("mode must be one of #{MODES.keys.map(&:inspect).join(", ")}, " \
                                       "not #{mode.inspect}", Native::TF_ERR_INVALID_ARGUMENT)
      end
    end

    # The arguments of the native constructor and memory_for, in the order
    # of tf_recency_window_options.
    def self.native_options(window, inv_eps, block, max_memory, delta, mode, seed, flags)
      [window, inv_eps, block, max_memory, delta, mode_code(mode), seed, flags]
    end
    private_class_method :native_options

    # An empty window. Every option defaults to
    # TF_RECENCY_WINDOW_OPTIONS_INIT's: window (W in inserts,
    # 1..MAX_WINDOW; 65536), inv_eps (1/eps, 1..MAX_INV_EPS; 8), mode
    # (:historical, :exact or :optimal_sm; :historical), block (OptimalSM's
    # D in inserts, 1..window; 0: max(1, window / inv_eps)), delta (the
    # target false-match probability in (0, 1) of approximate signatures;
    # 0: exact), max_memory (a cap in bytes; 0: none), seed (0) and flags
    # (none is defined: 0). Raises InvalidArgumentError (an option out of
    # range, an unknown mode; TF_ERR_TOO_LARGE for a window above MAX_WINDOW
    # or a structure over max_memory), OutOfMemoryError.
    def initialize(window: Native::TF_BINDING_RECENCY_WINDOW_WINDOW,
                   inv_eps: Native::TF_BINDING_RECENCY_WINDOW_INV_EPS,
                   block: Native::TF_BINDING_RECENCY_WINDOW_BLOCK,
                   max_memory: Native::TF_BINDING_RECENCY_WINDOW_MAX_MEMORY,
                   delta: Native::TF_BINDING_RECENCY_WINDOW_DELTA,
                   mode: MODES.key(Native::TF_BINDING_RECENCY_WINDOW_MODE), seed: 0, flags: 0)
      @native = NATIVE.new(*self.class.send(:native_options, window, inv_eps, block, max_memory, delta, mode, seed,
                                            flags))
    end

    # The bytes a window of these options (new's keywords and defaults)
    # would hold (what its #memory reports), without creating it;
    # max_memory is not applied. Raises as new.
    def self.memory_for(window: Native::TF_BINDING_RECENCY_WINDOW_WINDOW,
                        inv_eps: Native::TF_BINDING_RECENCY_WINDOW_INV_EPS,
                        block: Native::TF_BINDING_RECENCY_WINDOW_BLOCK,
                        max_memory: Native::TF_BINDING_RECENCY_WINDOW_MAX_MEMORY,
                        delta: Native::TF_BINDING_RECENCY_WINDOW_DELTA,
                        mode: MODES.key(Native::TF_BINDING_RECENCY_WINDOW_MODE), seed: 0, flags: 0)
      NATIVE.memory_for(*native_options(window, inv_eps, block, max_memory, delta, mode, seed, flags))
    end

    # Appends key to the stream (the next insert). Returns self.
    def insert(key)
      @native.insert(key)
      self
    end
    alias << insert

    # How many inserts ago key was last inserted (an Integer, within the
    # mode's promise), or nil when it is not within the window.
    def query(key)
      answer(@native.query(key))
    end

    # Insert-then-report, the call of a cache-admission policy: what #query
    # answered just before this insert (the key's previous recency, or nil),
    # then key appended to the stream, with one hash.
    def insert_report(key)
      answer(@native.insert_report(key))
    end

    # insert(keys[i]) for every key (an Array of Strings), in order, in one
    # native call whose bucket reads overlap. Returns self.
    def insert_batch(keys)
      @native.insert_batch(key_array(keys))
      self
    end

    # query(keys[i]) for every key, in one native call: an Array of
    # Integers and nils.
    def query_batch(keys)
      @native.query_batch(keys, key_array(keys).size).map { |v| answer(v) }
    end

    # insert_report(keys[i]) for every key, in order, in one native call:
    # the same answers and the same window as those single calls (a key
    # repeated within the batch reports its earlier occurrence in it), an
    # Array of Integers and nils. Every argument is checked before anything
    # changes.
    def insert_report_batch(keys)
      @native.insert_report_batch(keys, key_array(keys).size).map { |v| answer(v) }
    end

    # Forgets every key and restarts the stream: the tables stay allocated
    # and empty, the counters restart at 0. Returns self.
    def clear
      @native.clear
      self
    end

    # An Info snapshot (frozen), the mode as a Symbol.
    def info
      i = @native.info
      Info.new(i.window, i.inv_eps, i.block, i.max_memory, i.delta, MODES.key(i.mode), i.seed, i.flags,
               i.signature_bits, i.levels, i.slack).freeze
    end
    Info.members.each { |name| define_method(name) { info.public_send(name) } }

    # Level i (0 the newest inserts, stats.levels - 1 the oldest);
    # InvalidArgumentError when there is no level i.
    def level(i)
      snapshot(Level, @native.level(i))
    end

    private

    # nil for TF_RECENCY_WINDOW_NOT_IN_WINDOW, else the recency.
    def answer(value)
      value == Native::TF_RECENCY_WINDOW_NOT_IN_WINDOW ? nil : value
    end

    def inspect_fields
      i = info
      "window=#{i.window} inv_eps=#{i.inv_eps} mode=#{i.mode} signature_bits=#{i.signature_bits} seed=#{i.seed}"
    end
  end
end
