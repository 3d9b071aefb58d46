package org.temporalfilters;

/**
 * A remote store (the Redis server of the Redis limiter) that did not
 * answer: {@link Status#TIMEOUT} (no answer within the timeout given at
 * creation) or {@link Status#UNAVAILABLE} (it cannot be reached or cannot
 * serve the request now). The call may be retried later; a decision call
 * has applied the fallback chosen at creation.
 */
public final class UnavailableException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    UnavailableException(int code, String statusName, String detail) {
        super(code, statusName, detail);
    }
}
