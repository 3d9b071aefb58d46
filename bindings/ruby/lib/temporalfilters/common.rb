# frozen_string_literal: true

# What include/temporalfilters/common.h holds for every structure: the
# version, the shared constants, status names, the clock.

module TemporalFilters
  # The version of the library loaded, "MAJOR.MINOR.PATCH".
  VERSION = Native.tf_version_string.freeze

  # The timestamp meaning "never seen".
  NEVER = 0

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
