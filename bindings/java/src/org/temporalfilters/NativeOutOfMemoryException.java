package org.temporalfilters;

/**
 * The native library could not allocate memory
 * ({@link Status#OUT_OF_MEMORY}). Unlike {@link OutOfMemoryError}, the Java heap
 * is not concerned, and the structure is as it was before the call.
 */
public final class NativeOutOfMemoryException extends TemporalFiltersException {
    private static final long serialVersionUID = 1L;

    NativeOutOfMemoryException(int code, String statusName, String detail) {
        super(code, statusName, detail);
    }
}
