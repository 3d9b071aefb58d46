package org.temporalfilters;

import java.util.List;

/**
 * A remote store (the Redis server of the {@link RedisLimiter}) that did not
 * answer: {@link Status#TIMEOUT} (no answer within the timeout given at
 * creation) or {@link Status#UNAVAILABLE} (it cannot be reached or cannot
 * serve the request now). The call may be retried later.
 *
 * <p>A decision call ({@link RedisLimiter#acquire}, {@link RedisLimiter#peek},
 * {@link RedisLimiter#acquireBatch}) has applied the fallback chosen at
 * creation, and its decision travels with the exception:
 * {@link #decision()} for a single request, {@link #decisions()} for a
 * batch. Any other call carries none.
 */
public final class UnavailableException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    /* The fallback's decision of a single request, or null. */
    private transient RateLimiter.Decision decision;
    /* The decisions of a batch (Redis's and the fallback's), or empty. */
    private transient List<RateLimiter.Decision> decisions = List.of();

    UnavailableException(int code, String statusName, String detail) {
        super(code, statusName, detail);
    }

    /* Attaches a single request's fallback decision; returns this. */
    UnavailableException withDecision(RateLimiter.Decision d) {
        this.decision = d;
        return this;
    }

    /* Attaches a batch's decisions; returns this. */
    UnavailableException withDecisions(List<RateLimiter.Decision> ds) {
        this.decisions = List.copyOf(ds);
        return this;
    }

    /**
     * The decision the fallback made for the request ({@link RedisLimiter#acquire}
     * or {@link RedisLimiter#peek}): denied by {@link RedisLimiter.Fallback#DENY},
     * allowed by {@link RedisLimiter.Fallback#ALLOW}, the embedded limiter's with
     * {@link RedisLimiter.Fallback#LOCAL}; null when the call was not a single
     * decision (a batch: {@link #decisions()}; creation, refund, reset, the
     * limits) or the exception was deserialized.
     */
    public RateLimiter.Decision decision() {
        return decision;
    }

    /**
     * The decisions of a batch ({@link RedisLimiter#acquireBatch}), one per
     * key in order: Redis's for the answers that arrived, the fallback's for
     * the others. Empty (never null) for any other call, or when the exception
     * was deserialized. Unmodifiable.
     */
    public List<RateLimiter.Decision> decisions() {
        return decisions == null ? List.of() : decisions;
    }
}
