package org.temporalfilters;

/**
 * A blob that {@code deserialize} cannot read: too short
 * ({@link Status#TRUNCATED}), not a blob of this library
 * ({@link Status#BAD_MAGIC}), of a format version this library does not know
 * ({@link Status#UNSUPPORTED_VERSION}), of another structure
 * ({@link Status#WRONG_KIND}), damaged ({@link Status#CHECKSUM}) or with fields
 * that break the structure's invariants ({@link Status#CORRUPT}).
 */
public final class BadBlobException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    BadBlobException(int code, String statusName, String detail) {
        super(code, statusName, detail);
    }
}
