package org.temporalfilters;

/**
 * The status codes of the C API ({@code tf_status} in
 * {@code temporalfilters/common.h}), as carried by
 * {@link TemporalFiltersException#status()}. The values are part of the C ABI
 * and never change.
 */
public final class Status {
    /** Success (never carried by an exception). */
    public static final int OK = 0;
    /** A required argument was null, or the object is closed. */
    public static final int ERR_NULL = -1;
    /** An argument is out of its documented range (for example a negative timestamp). */
    public static final int ERR_INVALID_ARGUMENT = -2;
    /** An allocation failed. */
    public static final int ERR_OUT_OF_MEMORY = -3;
    /** Requested sizes overflow or exceed the library's limits. */
    public static final int ERR_TOO_LARGE = -4;
    /** An output buffer is shorter than needed. */
    public static final int ERR_BUFFER_TOO_SMALL = -5;
    /** A blob is shorter than its header says. */
    public static final int ERR_TRUNCATED = -6;
    /** A blob does not start with "TFLT". */
    public static final int ERR_BAD_MAGIC = -7;
    /** A blob's format version is unknown. */
    public static final int ERR_UNSUPPORTED_VERSION = -8;
    /** A blob holds another kind of structure. */
    public static final int ERR_WRONG_KIND = -9;
    /** A blob's checksum does not match its bytes. */
    public static final int ERR_CHECKSUM = -10;
    /** A blob's fields break the structure's invariants. */
    public static final int ERR_CORRUPT = -11;
    /** Two structures differ in shape or seed. */
    public static final int ERR_INCOMPATIBLE = -12;
    /** A bug in the library; please report it. */
    public static final int ERR_INTERNAL = -13;

    private static final String[] NAMES = {
        "TF_OK", "TF_ERR_NULL", "TF_ERR_INVALID_ARGUMENT", "TF_ERR_OUT_OF_MEMORY", "TF_ERR_TOO_LARGE",
        "TF_ERR_BUFFER_TOO_SMALL", "TF_ERR_TRUNCATED", "TF_ERR_BAD_MAGIC", "TF_ERR_UNSUPPORTED_VERSION",
        "TF_ERR_WRONG_KIND", "TF_ERR_CHECKSUM", "TF_ERR_CORRUPT", "TF_ERR_INCOMPATIBLE", "TF_ERR_INTERNAL",
    };

    private Status() {
    }

    /**
     * The C name of a status code, the same as {@code tf_status_string()}:
     * e.g. {@code "TF_ERR_CHECKSUM"}; {@code "TF_ERR_UNKNOWN"} for a code this
     * version does not define.
     */
    public static String name(int status) {
        return status <= 0 && status > -NAMES.length ? NAMES[-status] : "TF_ERR_UNKNOWN";
    }
}
