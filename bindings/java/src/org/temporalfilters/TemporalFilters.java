package org.temporalfilters;

/** Library-wide facts: the version of the native library loaded, and its clock. */
public final class TemporalFilters {
    private TemporalFilters() {
    }

    /** The native library's version, "MAJOR.MINOR.PATCH". */
    public static String version() {
        return TemporalFiltersNative.tf_version_string();
    }

    /**
     * The system's real-time clock in milliseconds since the Unix epoch (always
     * at least 1), a convenient {@code now} for callers that count in
     * wall-clock milliseconds. The library itself never reads a clock.
     */
    public static long clockNowMs() {
        return TemporalFiltersNative.tf_clock_now_ms();
    }
}
