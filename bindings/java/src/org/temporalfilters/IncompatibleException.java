package org.temporalfilters;

/**
 * Two structures that cannot be combined, such as sketches of
 * different shapes or seeds given to {@code merge} ({@link Status#INCOMPATIBLE}).
 * The target is unchanged.
 */
public final class IncompatibleException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    IncompatibleException(int code, String statusName, String detail) {
        super(code, statusName, detail);
    }
}
