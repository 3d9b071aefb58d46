# frozen_string_literal: true

# TemporalFilters::RotatingCuckoo (include/temporalfilters/rotating_cuckoo.h).

module TemporalFilters
  # "Have I seen this key recently?" with no false positives in practice, in
  # bounded memory: the rotating cuckoo filter
  # (include/temporalfilters/rotating_cuckoo.h), for de-duplicating streams,
  # where a false positive would silently drop a real event and a false
  # negative only repeats one.
  #
  # A ring of cuckoo tables of 64-bit fingerprints. Inserts go to the newest
  # table; when it reaches its maximum occupancy, or a kick chain exceeds its
  # limit, a new table starts, sized from the recent insertion rate, within
  # a memory cap; when the cap (or the table limit) would be exceeded the
  # oldest table is dropped and its keys are forgotten (counted in
  # forgotten_memory). A key never added is reported present with a
  # probability below 2**-48 (about 2**-55 with the default options).
  # With a ttl, a key added at t is reported
  # present until at least t + ttl unless the memory cap dropped its table
  # first. Times are Integers in the caller's unit, in 1...2**64 for now; a
  # clock that goes backwards is clamped to the highest time seen.
  #
  # The options are keyword arguments of new, each defaulting to
  # TF_ROTATING_CUCKOO_OPTIONS_INIT's value:
  #
  #   filter = TemporalFilters::RotatingCuckoo.new(ttl: 60_000, seed: 7)
  #   filter.add_if_absent("event-1", now)  # => false: new, recorded
  #   filter.add_if_absent("event-1", now)  # => true: a duplicate
  #
  # Not internally synchronised: contains?, contains_batch, the getters,
  # stats, table, memory and serialize may overlap each other (from native
  # threads); add, add_if_absent, add_if_absent_batch, remove, clear and
  # close need exclusive access.
  class RotatingCuckoo
    include NativeHandle

    # Flag: three candidate buckets per key instead of two
    # (TF_ROTATING_CUCKOO_THREE_WAY).
    THREE_WAY = Native::TF_ROTATING_CUCKOO_THREE_WAY
    # The most tables a filter may keep (TF_ROTATING_CUCKOO_MAX_TABLES).
    MAX_TABLES = Native::TF_ROTATING_CUCKOO_MAX_TABLES
    # The longest kick chain (TF_ROTATING_CUCKOO_MAX_KICKS).
    MAX_KICKS = Native::TF_ROTATING_CUCKOO_MAX_KICKS

    # What was fixed at creation, from #info (frozen), the defaults
    # resolved: table_slots (of the first table), max_memory (the cap in
    # bytes), ttl (0: none), max_occupancy, slots_per_bucket, max_kicks,
    # max_tables, the hash seed, the creation flags and ways (candidate
    # buckets per key: 2, or 3 with THREE_WAY). Each member has a reader of
    # its own (#ttl, ...).
    Info = Struct.new(:table_slots, :max_memory, :ttl, :max_occupancy, :slots_per_bucket, :max_kicks,
                      :max_tables, :seed, :flags, :ways)
    snapshot_readers :info, Info
    flag_predicates three_way: THREE_WAY

    # The state of a filter at a time now, from #stats(now) (frozen): tables
    # (held), live_tables (a query at now may find), slots, items (stored in
    # the live tables), load, newest_load, memory, bits_per_item, inserts,
    # removes, forgotten_memory (keys lost to the memory cap or the table
    # limit), forgotten_age (keys lost to the ttl), kick_rotations and
    # fill_rotations (rotations by cause).
    Stats = Struct.new(:tables, :live_tables, :slots, :items, :load, :newest_load, :memory, :bits_per_item,
                       :inserts, :removes, :forgotten_memory, :forgotten_age, :kick_rotations, :fill_rotations)

    # One table at a time now, from #table(i, now) (frozen): slots, items,
    # load, last (the time of its newest entry, 0 when none), serial (its
    # creation number) and expired (true when a query at now ignores it).
    Table = Struct.new(:slots, :items, :load, :last, :serial, :expired)

    # An empty filter of one table. Every option defaults to
    # TF_ROTATING_CUCKOO_OPTIONS_INIT's: table_slots (of the first table, a
    # power of two, at least 2 x slots_per_bucket; 16384), max_memory (the
    # cap in bytes; 64 MiB), ttl (0: none), max_occupancy (in (0, 1]; 0: the
    # layout's measured one), slots_per_bucket (1, 2, 4 or 8; 4), max_kicks
    # (1..MAX_KICKS; 500), max_tables (1..MAX_TABLES; 64), seed (0) and
    # flags (THREE_WAY or 0). Raises InvalidArgumentError (an option out of
    # range; TF_ERR_TOO_LARGE for table_slots above 2**36 or a first table
    # over max_memory), OutOfMemoryError.
    def initialize(table_slots: Native::TF_BINDING_ROTATING_CUCKOO_TABLE_SLOTS,
                   max_memory: Native::TF_BINDING_ROTATING_CUCKOO_MAX_MEMORY,
                   ttl: Native::TF_BINDING_ROTATING_CUCKOO_TTL,
                   max_occupancy: Native::TF_BINDING_ROTATING_CUCKOO_MAX_OCCUPANCY,
                   slots_per_bucket: Native::TF_BINDING_ROTATING_CUCKOO_SLOTS_PER_BUCKET,
                   max_kicks: Native::TF_BINDING_ROTATING_CUCKOO_MAX_KICKS,
                   max_tables: Native::TF_BINDING_ROTATING_CUCKOO_MAX_TABLES, seed: 0, flags: 0)
      @native = NATIVE.new(table_slots, max_memory, ttl, max_occupancy, slots_per_bucket, max_kicks, max_tables,
                           seed, flags)
    end

    # Adds key at time now, or refreshes it (a key already in the newest
    # table only refreshes that table's time). Returns self.
    def add(key, now)
      @native.add(key, now)
      self
    end

    # True when key was added and not yet forgotten at now.
    def contains?(key, now)
      @native.contains(key, now) == 1
    end
    alias contains contains?

    # Removes the newest copy of key: true when a copy was removed, false
    # when the key was not present (nothing changed).
    def remove(key, now)
      @native.remove(key, now) == 1
    end

    # The de-duplication call: true when key was present (nothing written:
    # a hit does not refresh the key), false when it was absent and is now
    # added at now.
    def add_if_absent(key, now)
      @native.add_if_absent(key, now) == 1
    end

    # contains?(keys[i], now) for every key (an Array of Strings), in one
    # native call whose bucket reads overlap: an Array of true and false.
    def contains_batch(keys, now)
      count = key_array(keys).size
      @native.contains_batch(keys, now, count)[1]
    end

    # add_if_absent(keys[i], now) for every key, in order, in one native
    # call: the same answers and the same filter as those single calls (a
    # key repeated within the batch is present from its second occurrence
    # on). Every argument is checked before anything changes.
    def add_if_absent_batch(keys, now)
      count = key_array(keys).size
      @native.add_if_absent_batch(keys, now, count)[1]
    end

    # Forgets every key: one empty table of the first table's size remains,
    # the counters restart, the clock keeps its time. Returns self.
    def clear
      @native.clear
      self
    end

    # A Stats snapshot at time now (O(tables)).
    def stats(now)
      snapshot(Stats, @native.stats(now))
    end

    # Table i at time now (0 the newest, stats(now).tables - 1 the oldest);
    # InvalidArgumentError when there is no table i.
    def table(i, now)
      t = @native.table(i, now)
      Table.new(t.slots, t.items, t.load, t.last, t.serial, t.expired != 0).freeze
    end

    private

    def inspect_fields
      i = info
      "table_slots=#{i.table_slots} slots_per_bucket=#{i.slots_per_bucket} ways=#{i.ways} ttl=#{i.ttl} seed=#{i.seed}"
    end
  end
end
