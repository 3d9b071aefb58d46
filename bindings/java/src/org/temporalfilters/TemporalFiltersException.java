package org.temporalfilters;

/**
 * The one exception type of the library: a call that did not succeed.
 *
 * <p>It carries the C status code ({@link #status()}, one of the {@link Status}
 * constants), the status's name as {@code tf_status_string()} gives it (e.g.
 * {@code "TF_ERR_CHECKSUM"}) and the library's one-sentence explanation. It is
 * unchecked: most statuses are programming errors (a bad argument, a closed
 * object); those worth handling, such as a corrupt blob, are documented on the
 * methods that raise them.
 */
public final class TemporalFiltersException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String statusName;
    private final String detail;

    /**
     * Creates an exception for {@code status} with the library's explanation
     * {@code detail}; the status name is {@link Status#name(int)}.
     */
    public TemporalFiltersException(int status, String detail) {
        this(status, Status.name(status), detail);
    }

    /* Called by the JNI layer with the name from tf_status_string(). */
    TemporalFiltersException(int status, String statusName, String detail) {
        super(statusName + ": " + detail);
        this.status = status;
        this.statusName = statusName;
        this.detail = detail;
    }

    /** The C status code: a negative {@link Status} constant. */
    public int status() {
        return status;
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
