package org.temporalfilters;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * What every object of the library that owns native memory has in common (the
 * structures, through {@link NativeHandle}, and the {@link RedisLimiter}): it owns
 * one native handle (the SWIG proxy {@code N}), frees it in {@link #close()} or,
 * when it is never closed, through a {@link Cleaner} once it becomes
 * unreachable, refuses every call after {@code close()}, and keeps itself
 * reachable for the length of each native call (so that the Cleaner cannot free
 * the handle under a running call). The subclasses make every native call
 * through {@link #call} (or its forms {@link #run} and {@link #callLong}).
 *
 * <p><b>Closing while calls run.</b> A structure whose calls may overlap
 * (the {@link RateLimiter}, a {@link RecencySketch} created with
 * {@link RecencySketch#CONCURRENT}: a <i>concurrent</i> handle) counts the
 * calls in flight, and {@link #close()} waits for them before it frees the
 * native object: a call that started before {@code close()} finishes on a
 * live object, and every call that starts after it throws
 * {@link ClosedException}. The count is one atomic increment and decrement
 * per call, taken only by concurrent handles (the binding benchmark's
 * {@code --concurrent} run measures a concurrent sketch). The other structures need exclusive access for
 * {@code close()}, as for every call that modifies them: closing one while
 * another thread uses it is a race in the caller's code, which this class
 * does not detect.
 *
 * @param <N> the SWIG proxy class of the native object
 */
abstract class NativeObject<N extends NativeResource> implements AutoCloseable {
    /* One cleaner thread for every handle of the library. */
    private static final Cleaner CLEANER = Cleaner.create();

    /* The calls in flight on a concurrent handle, for close(). */
    private static final VarHandle CALLS;

    static {
        try {
            CALLS = MethodHandles.lookup().findVarHandle(NativeObject.class, "calls", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final N proxy;
    private final Cleaner.Cleanable cleanable;
    /* Calls may overlap: close() waits for those in flight (see the class). */
    private final boolean concurrent;
    private volatile boolean closed;
    /* The calls in flight (concurrent handles only; through CALLS). */
    private volatile int calls;

    /* Takes ownership of a new proxy; null (a factory of the native layer that
     * returned nothing without raising) is a bug. concurrent: the structure
     * allows overlapping calls, so close() must wait for those in flight. */
    NativeObject(N proxy, boolean concurrent) {
        if (proxy == null) {
            throw TemporalFiltersException.of(Status.INTERNAL, "the native layer returned no handle");
        }
        this.proxy = proxy;
        this.concurrent = concurrent;
        this.cleanable = CLEANER.register(this, release(proxy));
    }

    /* The cleaning action holds the proxy only, never this object (static, so
     * that it cannot capture `this`). */
    private static Runnable release(NativeResource proxy) {
        return proxy::delete;
    }

    /* The class's name in messages: "RecencySketch", "AgeBloom", ... */
    final String name() {
        return getClass().getSimpleName();
    }

    /**
     * Frees the native memory now. Idempotent; afterwards every other call
     * fails with {@link ClosedException}. On a structure whose calls may
     * overlap (a {@link RateLimiter}, a {@link RecencySketch#CONCURRENT}
     * sketch) it first waits for the calls other threads have in flight, so
     * it may be called while they run; on the others it needs exclusive
     * access, like every call that modifies them.
     */
    @Override
    public final void close() {
        closed = true;
        if (concurrent) {
            awaitCalls();
        }
        cleanable.clean();
    }

    /* Waits until no call is in flight. closed is set first: a call either
     * registered before close() read the count (and is waited for), or reads
     * closed == true after registering (and backs out), since both sides
     * write one volatile then read the other's. Calls are short (a native
     * call, or a serialize's few); a long one (serialize of a large limiter)
     * is waited for without spinning. */
    private void awaitCalls() {
        for (int spins = 0; calls != 0; spins++) {
            if (spins < 64) {
                Thread.onSpinWait();
            } else if (spins < 128) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(50_000);
            }
        }
    }

    /** Whether {@link #close()} was called. */
    public final boolean isClosed() {
        return closed;
    }

    /* The proxy, or ClosedException. */
    final N open() {
        if (closed) {
            throw new ClosedException("the " + name() + " is closed");
        }
        return proxy;
    }

    /* One native call (or a few, read together) with its result: the only
     * place that reaches the proxy, so that every call is checked and fenced,
     * and counted on a concurrent handle. */
    final <R> R call(Function<N, R> op) {
        if (concurrent) {
            return counted(op);
        }
        N p = open();
        try {
            return op.apply(p);
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /* call() on a concurrent handle: registered in `calls` before the closed
     * check, so that close() waits for it (see awaitCalls). */
    private <R> R counted(Function<N, R> op) {
        CALLS.getAndAdd(this, 1);
        try {
            return op.apply(open());
        } finally {
            CALLS.getAndAdd(this, -1);
            Reference.reachabilityFence(this);
        }
    }

    /* One native call without a result. */
    final void run(Consumer<N> op) {
        call(h -> {
            op.accept(h);
            return null;
        });
    }

    /* One native call with an integer result. Neither the lambdas nor the
     * Long box escape: once the JIT has compiled a loop of update() and
     * query() calls, they allocate nothing (measured with
     * ThreadMXBean.getThreadAllocatedBytes: 0 bytes per call). */
    final long callLong(ToLongFunction<N> op) {
        return call(h -> op.applyAsLong(h));
    }

    /* A versioned struct (info, stats) that the native layer returns as a
     * copy Java owns: converted to a value by `convert`, then freed. */
    final <S extends NativeValue, R> R value(Function<N, S> get, Function<S, R> convert) {
        return call(h -> {
            S copy = get.apply(h);
            try {
                return convert.apply(copy);
            } finally {
                copy.delete();
            }
        });
    }

    /* The fields of toString(), without the class name and parentheses. */
    abstract String describe();

    /** The class's name and its parameters, or {@code "Name(closed)"}. */
    @Override
    public final String toString() {
        return name() + "(" + (closed ? "closed" : describe()) + ")";
    }
}
