# frozen_string_literal: true

# The errors of TemporalFilters: one base class carrying the library's
# status, and one subclass per family of statuses a caller rescues
# (docs/conventions.md, "The bindings").

module TemporalFilters
  # The base class of every error raised by the library, and the class of
  # the statuses no family takes (TF_ERR_INTERNAL, a bug in the library;
  # TF_ERR_BUFFER_TOO_SMALL, which only the native layer can see; a status
  # this version does not know).
  #
  #   rescue TemporalFilters::BadBlobError => e
  #     e.status       # => -10
  #     e.status_name  # => "TF_ERR_CHECKSUM"
  #     e.message      # => the library's explanation
  class Error < StandardError
    # The status a subclass raised without one carries (the base class:
    # TF_ERR_INTERNAL).
    DEFAULT_STATUS = -13

    # The library's status code, a negative Integer (see common.h).
    attr_reader :status

    # message: the library's message (by default the status name); status:
    # the status code (by default the class's DEFAULT_STATUS).
    def initialize(message = nil, status = nil)
      @status = status || self.class::DEFAULT_STATUS
      super(message || status_name)
    end

    # The name of the status code, e.g. "TF_ERR_CHECKSUM"; "TF_ERR_UNKNOWN"
    # for a code this version does not know.
    def status_name
      TemporalFilters.status_name(@status)
    end

    # The Error subclass of a status code: its family, or Error itself.
    def self.class_for(status)
      FAMILIES.fetch(status, Error)
    end
  end

  # An argument the library refuses: a value outside its documented range,
  # an unknown flag, sizes beyond the library's limits (TF_ERR_NULL,
  # TF_ERR_INVALID_ARGUMENT, TF_ERR_TOO_LARGE). The binding's own range
  # checks raise it too: an Integer that does not fit the C type is refused,
  # never wrapped.
  class InvalidArgumentError < Error
    # The status this error carries when raised without one: -2 (TF_ERR_INVALID_ARGUMENT).
    DEFAULT_STATUS = -2
  end

  # A blob given to deserialize is not a valid serialization of the
  # structure asked for: TF_ERR_TRUNCATED, TF_ERR_BAD_MAGIC,
  # TF_ERR_UNSUPPORTED_VERSION, TF_ERR_WRONG_KIND (the blob of another
  # structure), TF_ERR_CHECKSUM, TF_ERR_CORRUPT.
  class BadBlobError < Error
    # The status this error carries when raised without one: -11 (TF_ERR_CORRUPT).
    DEFAULT_STATUS = -11
  end

  # Two structures that cannot be combined (merging sketches of different
  # shapes or seeds): TF_ERR_INCOMPATIBLE.
  class IncompatibleError < Error
    # The status this error carries when raised without one: -12 (TF_ERR_INCOMPATIBLE).
    DEFAULT_STATUS = -12
  end

  # The library could not allocate memory: TF_ERR_OUT_OF_MEMORY.
  class OutOfMemoryError < Error
    # The status this error carries when raised without one: -3 (TF_ERR_OUT_OF_MEMORY).
    DEFAULT_STATUS = -3
  end

  # A remote store (the Redis server of the Redis limiter) did not answer:
  # TF_ERR_TIMEOUT (no answer within the timeout given at creation) or
  # TF_ERR_UNAVAILABLE (it cannot be reached or cannot serve the request
  # now). A decision call has applied the fallback chosen at creation.
  class UnavailableError < Error
    # The status this error carries when raised without one: -15 (TF_ERR_UNAVAILABLE).
    DEFAULT_STATUS = -15

    # The fallback's decision when a RedisLimiter decision raised this
    # error (a RateLimiter::Decision, an Array of them for acquire_batch);
    # nil for the other calls.
    attr_reader :decision
  end

  # A call on an object after #close (its handle is gone: TF_ERR_NULL).
  class ClosedError < Error
    # The status this error carries when raised without one: -1 (TF_ERR_NULL).
    DEFAULT_STATUS = -1
  end

  # Status code => family (common.h pins the codes).
  FAMILIES = {
    -1 => InvalidArgumentError, # TF_ERR_NULL
    -2 => InvalidArgumentError, # TF_ERR_INVALID_ARGUMENT
    -3 => OutOfMemoryError,     # TF_ERR_OUT_OF_MEMORY
    -4 => InvalidArgumentError, # TF_ERR_TOO_LARGE
    -6 => BadBlobError,         # TF_ERR_TRUNCATED
    -7 => BadBlobError,         # TF_ERR_BAD_MAGIC
    -8 => BadBlobError,         # TF_ERR_UNSUPPORTED_VERSION
    -9 => BadBlobError,         # TF_ERR_WRONG_KIND
    -10 => BadBlobError,        # TF_ERR_CHECKSUM
    -11 => BadBlobError,        # TF_ERR_CORRUPT
    -12 => IncompatibleError,   # TF_ERR_INCOMPATIBLE
    -14 => UnavailableError,    # TF_ERR_TIMEOUT
    -15 => UnavailableError     # TF_ERR_UNAVAILABLE
  }.freeze
  private_constant :FAMILIES
end
