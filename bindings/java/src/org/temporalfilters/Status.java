package org.temporalfilters;

/**
 * The status codes of the C API ({@code tf_status} in
 * {@code temporalfilters/common.h}), as carried by
 * {@link TemporalFiltersException#status()}. The codes are part of the C ABI
 * and never change; a later library may add codes below {@link #UNAVAILABLE}.
 *
 * <p>A caller rarely needs the status itself: the exception's class says which
 * family of failure it is ({@link InvalidArgumentException},
 * {@link BadBlobException}, {@link IncompatibleException},
 * {@link NativeOutOfMemoryException}, {@link UnavailableException},
 * {@link ClosedException}).
 */
public enum Status {
    /** Success ({@code TF_OK}; never carried by an exception). */
    OK(0),
    /** A required argument was null ({@code TF_ERR_NULL}); also the status of a call on a closed object. */
    NULL(-1),
    /** An argument is out of its documented range, for example a negative timestamp ({@code TF_ERR_INVALID_ARGUMENT}). */
    INVALID_ARGUMENT(-2),
    /** An allocation failed ({@code TF_ERR_OUT_OF_MEMORY}). */
    OUT_OF_MEMORY(-3),
    /** Requested sizes overflow or exceed a limit ({@code TF_ERR_TOO_LARGE}). */
    TOO_LARGE(-4),
    /** An output buffer is shorter than needed ({@code TF_ERR_BUFFER_TOO_SMALL}). */
    BUFFER_TOO_SMALL(-5),
    /** A blob is shorter than its header says ({@code TF_ERR_TRUNCATED}). */
    TRUNCATED(-6),
    /** A blob does not start with "TFLT" ({@code TF_ERR_BAD_MAGIC}). */
    BAD_MAGIC(-7),
    /** A blob's format version is unknown ({@code TF_ERR_UNSUPPORTED_VERSION}). */
    UNSUPPORTED_VERSION(-8),
    /** A blob holds another kind of structure ({@code TF_ERR_WRONG_KIND}). */
    WRONG_KIND(-9),
    /** A blob's checksum does not match its bytes ({@code TF_ERR_CHECKSUM}). */
    CHECKSUM(-10),
    /** A blob's fields break the structure's invariants ({@code TF_ERR_CORRUPT}). */
    CORRUPT(-11),
    /** Two structures differ in shape or seed ({@code TF_ERR_INCOMPATIBLE}). */
    INCOMPATIBLE(-12),
    /** A bug in the library; please report it ({@code TF_ERR_INTERNAL}). */
    INTERNAL(-13),
    /** A remote store (the Redis server of the Redis limiter) did not answer
     *  within the timeout given at creation ({@code TF_ERR_TIMEOUT}). */
    TIMEOUT(-14),
    /** A remote store cannot be reached or cannot serve the request now
     *  ({@code TF_ERR_UNAVAILABLE}). */
    UNAVAILABLE(-15);

    private static final Status[] BY_CODE = values(); // in the order of -code

    private final int code;

    Status(int code) {
        this.code = code;
    }

    /** The C status code: 0 or negative. */
    public int code() {
        return code;
    }

    /**
     * The C name, the same as {@code tf_status_string()}: e.g.
     * {@code "TF_ERR_CHECKSUM"}, {@code "TF_OK"}.
     */
    public String cName() {
        return this == OK ? "TF_OK" : "TF_ERR_" + name();
    }

    /* The status of a code, or null for a code this version does not define. */
    static Status lookup(int code) {
        return code <= 0 && code > -BY_CODE.length ? BY_CODE[-code] : null;
    }

    /**
     * The status of a C code.
     *
     * @throws IllegalArgumentException for a code this version does not define
     */
    public static Status fromCode(int code) {
        Status s = lookup(code);
        if (s == null) {
            throw new IllegalArgumentException("no tf_status has the code " + code);
        }
        return s;
    }
}
