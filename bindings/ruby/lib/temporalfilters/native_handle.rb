# frozen_string_literal: true

# TemporalFilters::NativeHandle: what the class of every structure shares.

module TemporalFilters
  # What RecencySketch, AgeBloom, TimeBloom, RateLimiter, RotatingCuckoo and
  # RecencyWindow share, written once: a native handle owned by the Ruby
  # object (freed by the GC, or at once by #close; every call on a closed
  # object raises), the wire format
  # (#serialize, .deserialize, Marshal), copies (dup, clone), #inspect, and
  # the argument checks of the Ruby layer. Including it sets the class's
  # NATIVE to its SWIG handle class, named by the shared interface's rule
  # (TemporalFilters::Native::<Name>Native for TemporalFilters::<Name>);
  # each class lists what #inspect shows in inspect_fields. Not meant for
  # use on its own.
  module NativeHandle # :nodoc:
    # value, which must be an Integer (else TypeError naming it `name`).
    def self.check_integer(value, name)
      raise TypeError, "#{name} must be an Integer, not #{value.class}" unless value.is_a?(Integer)

      value
    end

    def self.included(base)
      base.const_set(:NATIVE, Native.const_get(:"#{base.name.split("::").last}Native"))
      base.extend(ClassMethods)
      # Every object comes from new, a factory, deserialize or a copy.
      base.private_class_method :allocate
    end

    module ClassMethods # :nodoc:
      # An object from a blob written by #serialize (in any language).
      # max_memory: the most bytes the object may take (#memory); a blob
      # describing a larger one is refused with InvalidArgumentError
      # (TF_ERR_TOO_LARGE) before anything is allocated; 0, the default, sets
      # no limit beyond the library's own. Raises BadBlobError for an invalid
      # blob (its status says why: TF_ERR_TRUNCATED .. TF_ERR_CORRUPT),
      # TF_ERR_WRONG_KIND in particular for the blob of another structure.
      def deserialize(blob, max_memory: 0)
        adopt(self::NATIVE.deserialize(blob, max_memory))
      end

      # Marshal support, through the wire format.
      def _load(blob)
        deserialize(blob)
      end

      private

      # Defines the method `source` (:info, or :stats when it takes no
      # argument), which returns `struct` (the class's Info or Stats) filled
      # from the native method of the same name, frozen; and a reader for
      # every member of `struct` but those in `except`, which returns that
      # member of a new snapshot.
      def snapshot_readers(source, struct, except: [])
        define_method(source) { snapshot(struct, @native.public_send(source)) }
        (struct.members - except).each do |name|
          define_method(name) { public_send(source).public_send(name) }
        end
      end

      # Defines <name>? for each creation flag (name => its bit): true when
      # the object was created with it (#flags, from #info).
      def flag_predicates(**bits)
        bits.each { |name, bit| define_method(:"#{name}?") { (flags & bit) != 0 } }
      end

      # A new object owning the handle `native` (from a factory of NATIVE).
      def adopt(native)
        obj = allocate
        obj.instance_variable_set(:@native, native)
        obj
      end
    end

    # Bytes of memory held.
    def memory
      @native.memory
    end

    # The object as a binary String (Encoding::BINARY), readable by
    # deserialize in every language binding.
    #
    # The size and the bytes are two native calls, between which another
    # thread may grow a structure that allows concurrent calls (the rate
    # limiter): the second then fails with TF_ERR_BUFFER_TOO_SMALL and both
    # are tried again (SERIALIZE_ATTEMPTS times at most), with a quarter more
    # room than measured.
    def serialize
      attempt = 0
      begin
        attempt += 1
        size = @native.serialized_size
        written, blob = @native.serialize_into(attempt == 1 ? size : size + size / 4 + 64)
        written == blob.bytesize ? blob : blob.byteslice(0, written)
      rescue Error => e
        raise unless e.status == Native::TF_ERR_BUFFER_TOO_SMALL && attempt < SERIALIZE_ATTEMPTS

        retry
      end
    end

    # How many times #serialize tries when the size keeps changing: the same
    # number in every language (bindings/temporalfilters.i says why 8).
    SERIALIZE_ATTEMPTS = Native::TF_BINDING_SERIALIZE_ATTEMPTS

    # Frees the memory now (the GC does it otherwise). Idempotent; any later
    # call raises ClosedError.
    def close
      @native.close
      nil
    end

    def closed?
      @native.is_closed
    end

    # dup and clone give an independent copy.
    def initialize_copy(source)
      super
      @native = self.class::NATIVE.deserialize(source.serialize, 0)
    end

    # Marshal support, through the wire format.
    def _dump(_level)
      serialize
    end

    def inspect
      return "#<#{self.class} closed>" if closed?

      "#<#{self.class} #{inspect_fields}>"
    end

    private

    # `struct` (the class's Info or Stats) holding the fields of the same
    # names of `native` (the native layer's value object), frozen.
    def snapshot(struct, native)
      struct.new(*struct.members.map { |name| native.public_send(name) }).freeze
    end

    # keys, checked to be an Array (the keys of a batch call; the native
    # layer checks each element).
    def key_array(keys)
      raise TypeError, "keys must be an Array, not #{keys.class}" unless keys.is_a?(Array)

      keys
    end
  end
end
