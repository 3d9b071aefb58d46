# frozen_string_literal: true

# The errors of TemporalFilters: one class per family of tf_status.

module TemporalFilters
  # The base class of every error raised by the library.
  #
  #   rescue TemporalFilters::Error => e
  #     e.status       # => -2
  #     e.status_name  # => "TF_ERR_INVALID_ARGUMENT"
  #     e.message      # => the library's explanation
  class Error < StandardError
    # The status code of the subclass (nil for Error itself).
    STATUS = nil

    # The library's status code, a negative Integer (see common.h).
    attr_reader :status

    # message: the library's message; status: the status code, by default
    # the one of the class.
    def initialize(message = nil, status = nil)
      @status = status || self.class::STATUS
      super(message || (@status ? TemporalFilters.status_name(@status) : "temporalfilters error"))
    end

    # The name of the status code, e.g. "TF_ERR_CHECKSUM".
    def status_name
      @status ? TemporalFilters.status_name(@status) : "TF_ERR_UNKNOWN"
    end

    # The Error subclass for a status code; Error itself for a code this
    # version does not know.
    def self.class_for(status)
      BY_STATUS.fetch(status, Error)
    end
  end

  # A blob given to deserialize is not a valid serialization. Its subclasses
  # say why: Truncated, BadMagic, UnsupportedVersion, WrongKind,
  # ChecksumError, Corrupt.
  class BlobError < Error; end

  # Status code => Error subclass. One class per status of common.h:
  #
  #   NullError          TF_ERR_NULL                 (-1)  the object is closed
  #   InvalidArgument    TF_ERR_INVALID_ARGUMENT     (-2)  a value out of its range
  #   OutOfMemory        TF_ERR_OUT_OF_MEMORY        (-3)
  #   TooLarge           TF_ERR_TOO_LARGE            (-4)  sizes beyond the library's limits
  #   BufferTooSmall     TF_ERR_BUFFER_TOO_SMALL     (-5)
  #   Truncated          TF_ERR_TRUNCATED            (-6)  BlobError
  #   BadMagic           TF_ERR_BAD_MAGIC            (-7)  BlobError
  #   UnsupportedVersion TF_ERR_UNSUPPORTED_VERSION  (-8)  BlobError
  #   WrongKind          TF_ERR_WRONG_KIND           (-9)  BlobError
  #   ChecksumError      TF_ERR_CHECKSUM             (-10) BlobError
  #   Corrupt            TF_ERR_CORRUPT              (-11) BlobError
  #   Incompatible       TF_ERR_INCOMPATIBLE         (-12) merging different shapes/seeds
  #   InternalError      TF_ERR_INTERNAL             (-13) a bug in the library
  BY_STATUS = {}

  {
    NullError: [-1, Error],
    InvalidArgument: [-2, Error],
    OutOfMemory: [-3, Error],
    TooLarge: [-4, Error],
    BufferTooSmall: [-5, Error],
    Truncated: [-6, BlobError],
    BadMagic: [-7, BlobError],
    UnsupportedVersion: [-8, BlobError],
    WrongKind: [-9, BlobError],
    ChecksumError: [-10, BlobError],
    Corrupt: [-11, BlobError],
    Incompatible: [-12, Error],
    InternalError: [-13, Error]
  }.each do |name, (status, parent)|
    klass = Class.new(parent)
    klass.const_set(:STATUS, status)
    const_set(name, klass)
    BY_STATUS[status] = klass
  end
  BY_STATUS.freeze
end
