package org.temporalfilters;

/**
 * A call that did not succeed: the base of the library's exceptions.
 *
 * <p>It carries the C status ({@link #status()}; {@link #code()} and
 * {@link #statusName()} as the C library gives them) and the library's
 * one-sentence explanation ({@link #detail()}). It is unchecked: most failures
 * are programming errors (a bad argument, a closed object). Catch the subclass
 * of the family you can handle:
 *
 * <ul>
 * <li>{@link InvalidArgumentException}: {@link Status#NULL},
 *     {@link Status#INVALID_ARGUMENT}, {@link Status#TOO_LARGE};</li>
 * <li>{@link BadBlobException}: a blob that cannot be read,
 *     {@link Status#TRUNCATED} .. {@link Status#CORRUPT};</li>
 * <li>{@link IncompatibleException}: {@link Status#INCOMPATIBLE};</li>
 * <li>{@link NativeOutOfMemoryException}: {@link Status#OUT_OF_MEMORY};</li>
 * <li>{@link UnavailableException}: a remote store that did not answer,
 *     {@link Status#TIMEOUT}, {@link Status#UNAVAILABLE};</li>
 * <li>{@link ClosedException}: any call after {@code close()}.</li>
 * </ul>
 *
 * Anything else ({@link Status#INTERNAL}, {@link Status#BUFFER_TOO_SMALL}, a
 * code this version does not know) is this class itself.
 */
public class TemporalFiltersException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The C status code, such as -10 (its serialized form). */
    private final int code;
    /** The C status name, such as "TF_ERR_CHECKSUM" (its serialized form). */
    private final String statusName;
    /** The library's explanation (its serialized form). */
    private final String detail;

    /* The subclasses' constructor: the C code and name and the explanation. */
    TemporalFiltersException(int code, String statusName, String detail) {
        super(statusName + ": " + detail);
        this.code = code;
        this.statusName = statusName;
        this.detail = detail;
    }

    /*
     * The exception of the family of `code`: the one factory, called by the
     * JNI layer (temporalfilters_java.i) with the name from tf_status_string()
     * and the library's message, and by the Java layer through of(Status, ...).
     */
    static TemporalFiltersException of(int code, String statusName, String detail) {
        Status status = Status.lookup(code);
        if (status == null) {
            return new TemporalFiltersException(code, statusName, detail);
        }
        switch (status) {
            case NULL:
            case INVALID_ARGUMENT:
            case TOO_LARGE:
                return new InvalidArgumentException(code, statusName, detail);
            case TRUNCATED:
            case BAD_MAGIC:
            case UNSUPPORTED_VERSION:
            case WRONG_KIND:
            case CHECKSUM:
            case CORRUPT:
                return new BadBlobException(code, statusName, detail);
            case INCOMPATIBLE:
                return new IncompatibleException(code, statusName, detail);
            case OUT_OF_MEMORY:
                return new NativeOutOfMemoryException(code, statusName, detail);
            case TIMEOUT:
            case UNAVAILABLE:
                return new UnavailableException(code, statusName, detail);
            default:
                return new TemporalFiltersException(code, statusName, detail);
        }
    }

    /* A failure found by the Java layer itself. */
    static TemporalFiltersException of(Status status, String detail) {
        return of(status.code(), status.cName(), detail);
    }

    /**
     * The status; {@link Status#INTERNAL} for a code this version of the
     * binding does not know (a newer native library's: see {@link #code()}).
     */
    public Status status() {
        Status s = Status.lookup(code);
        return s == null ? Status.INTERNAL : s;
    }

    /** The C status code, negative. */
    public int code() {
        return code;
    }

    /** The status's C name, e.g. {@code "TF_ERR_INVALID_ARGUMENT"}. */
    public String statusName() {
        return statusName;
    }

    /** The library's explanation alone (the message without the status name). */
    public String detail() {
        return detail;
    }
}
