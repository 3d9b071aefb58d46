# frozen_string_literal: true

# TemporalFilters::Membership: the operations both Bloom filters share.

module TemporalFilters
  # add, contains?, add_if_absent, their batches and clear of AgeBloom and
  # TimeBloom, written once. A TimeBloom's window is a span of time: its calls take the
  # time now after the key (add(key, now), contains?(key, now), ...); an
  # AgeBloom's window is counted in inserts: they take the key alone. The
  # native layer checks the number of arguments (ArgumentError). Included
  # with NativeHandle; not meant for use on its own.
  #
  # The time is an optional argument whose default (NO_TIME) means "not
  # given", not a splat (*now): a splat builds an Array on every call, which
  # measured about 70 ns of a single contains? (210-260 ns against 145-177
  # ns with the time as a plain argument, Ruby 3.1).
  module Membership # :nodoc:
    NO_TIME = Object.new.freeze
    private_constant :NO_TIME

    # Inserts key (TimeBloom: at time now), present or not. Returns self.
    def add(key, now = NO_TIME)
      NO_TIME.equal?(now) ? @native.add(key) : @native.add(key, now)
      self
    end

    # True when key is (probably) in the window (TimeBloom: was added within
    # the span before now); false when it certainly is not.
    def contains?(key, now = NO_TIME)
      (NO_TIME.equal?(now) ? @native.contains(key) : @native.contains(key, now)) == 1
    end
    alias contains contains?

    # De-duplication in one call, contains? then add when absent: returns
    # true when key was present (and then does not insert it), false when it
    # was absent and is now added.
    def add_if_absent(key, now = NO_TIME)
      (NO_TIME.equal?(now) ? @native.add_if_absent(key) : @native.add_if_absent(key, now)) == 1
    end

    # add(keys[i]) (TimeBloom: at time now) for every key (an Array of
    # Strings), in order, in one native call that overlaps the keys' memory
    # reads: the same filter as those single calls. Every argument is
    # checked before anything changes. Returns self.
    def add_batch(keys, now = NO_TIME)
      NO_TIME.equal?(now) ? @native.add_batch(key_array(keys)) : @native.add_batch(key_array(keys), now)
      self
    end

    # contains?(keys[i]) (TimeBloom: at time now) for every key, in one
    # native call that overlaps the keys' memory reads: an Array of true and
    # false.
    def contains_batch(keys, now = NO_TIME)
      n = key_array(keys).size
      (NO_TIME.equal?(now) ? @native.contains_batch(keys, n) : @native.contains_batch(keys, now, n))[1]
    end

    # add_if_absent(keys[i]) (TimeBloom: at time now) for every key, in
    # order, in one native call: the same answers and the same filter as
    # those single calls (a key repeated within the batch is present from
    # its second occurrence on), an Array of true and false.
    def add_if_absent_batch(keys, now = NO_TIME)
      n = key_array(keys).size
      (NO_TIME.equal?(now) ? @native.add_if_absent_batch(keys, n) : @native.add_if_absent_batch(keys, now, n))[1]
    end

    # Forgets every key (the shape stays: a TimeBloom's slices keep their
    # sizes). Returns self.
    def clear
      @native.clear
      self
    end
  end
end
