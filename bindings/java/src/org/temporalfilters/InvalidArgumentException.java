package org.temporalfilters;

/**
 * An argument the library refuses: a required one that is null
 * ({@link Status#NULL}), a value outside its documented range or an unknown
 * flag ({@link Status#INVALID_ARGUMENT}), sizes that overflow or pass a limit
 * ({@link Status#TOO_LARGE}). The call changed nothing.
 */
public final class InvalidArgumentException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    InvalidArgumentException(int code, String statusName, String detail) {
        super(code, statusName, detail);
    }
}
