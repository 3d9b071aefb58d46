package org.temporalfilters;

/**
 * A call on an object after its {@code close()}: "the RecencySketch is
 * closed". Its status is {@link Status#NULL} (the native handle is gone).
 */
public final class ClosedException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    ClosedException(String detail) {
        super(Status.NULL.code(), Status.NULL.cName(), detail);
    }
}
