package org.temporalfilters;

/**
 * Library-wide names and facts: the two "never" values, the version of the
 * native library loaded, and its clock; and what every structure of the
 * library ({@link RecencySketch}, {@link AgeBloom}, {@link TimeBloom},
 * {@link RateLimiter}) has in common.
 *
 * <p><b>Keys</b> are byte strings: {@code byte[]} (binary-safe, NUL bytes
 * included) or {@code String}, which stands for its UTF-8 bytes.
 *
 * <p><b>Errors.</b> A call that fails throws the unchecked
 * {@link TemporalFiltersException} of its family, carrying the C status:
 * {@link InvalidArgumentException} for an argument the library refuses (a
 * null key or array, a value outside its documented range, an unknown flag,
 * a size too large), {@link BadBlobException} for a blob {@code deserialize}
 * cannot read, {@link IncompatibleException} for structures that cannot be
 * combined, {@link NativeOutOfMemoryException} when the native library cannot
 * allocate, {@link UnavailableException} when a remote store (Redis) does not
 * answer, and {@link ClosedException} for any call after {@code close()}.
 * A call that fails leaves the structure as it was.
 *
 * <p><b>Resources.</b> Every structure owns native memory: free it with
 * {@code close()} (they are {@link AutoCloseable}: use try-with-resources). One
 * that is never closed is freed by a {@link java.lang.ref.Cleaner} once it
 * becomes unreachable; there is no finalizer.
 *
 * <p><b>Time and numbers.</b> Time is always an argument: a {@code long} in the
 * caller's own unit (milliseconds, seconds, ticks), and spans, windows and
 * TTLs are in the same unit. The library never reads a clock. {@link #NEVER}
 * (0) means "never" and is not a valid {@code now}. The native library counts
 * times, sizes and counts in unsigned 64-bit integers; Java has no such type,
 * so a negative argument is refused with {@link InvalidArgumentException}
 * ({@link Status#INVALID_ARGUMENT}), never reinterpreted, and a seed is a
 * {@code long} within 0 .. 2^32-1. A result is the C value, except that one
 * above {@link Long#MAX_VALUE} (a saturated time, or a cell of a blob written
 * by a program with such times) comes back as {@link Long#MAX_VALUE}, and the
 * C {@code TF_RETRY_NEVER} comes back as {@link #RETRY_NEVER}, which has the
 * same 64 bits.
 */
public final class TemporalFilters {
    /**
     * "Never" ({@code TF_NEVER}, 0): the answer of a RecencySketch for a key it
     * has never seen; not a valid {@code now}.
     */
    public static final long NEVER = TemporalFiltersNative.TF_NEVER;

    /**
     * A time that never comes ({@code TF_RETRY_NEVER}, C's {@code UINT64_MAX}):
     * the retry time of a request that can never be allowed as it stands. It is
     * {@code -1L}, the same 64 bits as the unsigned 2^64 - 1
     * ({@code Long.toUnsignedString(RETRY_NEVER)} is "18446744073709551615");
     * compare with {@code ==}, never with {@code <} or {@code >}.
     */
    public static final long RETRY_NEVER = TemporalFiltersNative.TF_RETRY_NEVER;

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
