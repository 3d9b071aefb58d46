# frozen_string_literal: true

# What include/temporalfilters/common.h holds for every structure: the
# version, the shared constants, status names, the clock.

module TemporalFilters
  # The version of the library loaded, "MAJOR.MINOR.PATCH".
  VERSION = Native.tf_version_string.freeze

  # TF_NEVER: the time meaning "never" (a key never seen; not a valid now).
  NEVER = Native::TF_NEVER

  # TF_RETRY_NEVER (2**64 - 1): the retry time of a request that can never
  # be granted, and where results that would overflow saturate.
  RETRY_NEVER = Native::TF_RETRY_NEVER

  # The name of a status code, e.g. status_name(-10) => "TF_ERR_CHECKSUM".
  def self.status_name(status)
    Native.tf_status_string(status)
  end

  # The system's real-time clock in milliseconds since the Unix epoch (>= 1):
  # a convenient "now" when the caller's unit is the millisecond.
  def self.clock_now_ms
    Native.tf_clock_now_ms
  end
end
