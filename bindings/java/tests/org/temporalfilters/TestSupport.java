package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import org.junit.function.ThrowingRunnable;

/* Helpers shared by the test classes. */
final class TestSupport {
    private TestSupport() {
    }

    /* The exception class of each status's family (docs/conventions.md,
     * "The bindings"); the base class for the others. */
    private static final Map<Status, Class<? extends TemporalFiltersException>> FAMILY = new EnumMap<>(Status.class);

    static {
        for (Status s : EnumSet.of(Status.NULL, Status.INVALID_ARGUMENT, Status.TOO_LARGE)) {
            FAMILY.put(s, InvalidArgumentException.class);
        }
        for (Status s : EnumSet.range(Status.TRUNCATED, Status.CORRUPT)) {
            FAMILY.put(s, BadBlobException.class);
        }
        FAMILY.put(Status.INCOMPATIBLE, IncompatibleException.class);
        FAMILY.put(Status.OUT_OF_MEMORY, NativeOutOfMemoryException.class);
        FAMILY.put(Status.TIMEOUT, UnavailableException.class);
        FAMILY.put(Status.UNAVAILABLE, UnavailableException.class);
    }

    static Class<? extends TemporalFiltersException> family(Status status) {
        return FAMILY.getOrDefault(status, TemporalFiltersException.class);
    }

    /* Checks that e's status, name, message and class are consistent. */
    static void checkConsistent(TemporalFiltersException e) {
        assertEquals(e.status().code(), e.code());
        assertEquals(e.status().cName(), e.statusName());
        assertFalse("empty detail", e.detail().isEmpty());
        assertEquals(e.statusName() + ": " + e.detail(), e.getMessage());
        if (!(e instanceof ClosedException)) {
            assertEquals("class of: " + e.getMessage(), family(e.status()), e.getClass());
        }
    }

    /* Runs `call`, which must fail with `status` and the exception of its
     * family; returns the exception after checking that its name and message
     * are consistent. */
    static TemporalFiltersException expectStatus(Status status, ThrowingRunnable call) {
        TemporalFiltersException e = assertThrows(TemporalFiltersException.class, call);
        assertEquals("status of: " + e.getMessage(), status, e.status());
        checkConsistent(e);
        return e;
    }

    /* As expectStatus, and the message must contain `part`. */
    static TemporalFiltersException expectStatus(Status status, String part, ThrowingRunnable call) {
        TemporalFiltersException e = expectStatus(status, call);
        assertTrue("message \"" + e.getMessage() + "\" lacks \"" + part + "\"", e.getMessage().contains(part));
        return e;
    }

    /* Runs `call` on an object closed before: a ClosedException ("the <name>
     * is closed", status NULL). */
    static ClosedException expectClosed(String name, ThrowingRunnable call) {
        ClosedException e = assertThrows(ClosedException.class, call);
        assertEquals(Status.NULL, e.status());
        checkConsistent(e);
        assertEquals("the " + name + " is closed", e.detail());
        return e;
    }

    /* ---- closed objects, checked by reflection --------------------------- */

    /* The public methods of every object of the library that answer on a
     * closed object, each for a reason (checkEveryMethodClosed checks what
     * they answer): close() is idempotent; isClosed() is the question a caller
     * asks before any other call; toString() says "Name(closed)" (loggers,
     * debuggers and messages call it on any object). Every other public
     * instance method must throw ClosedException. */
    static final Set<String> WORK_WHEN_CLOSED = Set.of("close", "isClosed", "toString");

    /* An open object of every structure class, small (the argument of a
     * method that takes a structure, and the receiver of the check of a
     * closed argument). ClosedHandleTest checks that it names every
     * structure class of the library's jar. */
    static final Map<Class<?>, Supplier<NativeHandle<?>>> STRUCTURES = Map.of(
        RecencySketch.class, () -> new RecencySketch(64, 2),
        AgeBloom.class, () -> new AgeBloom(3, 4, 200),
        TimeBloom.class, () -> new TimeBloom(3, 4, 200, 100),
        RateLimiter.class, () -> new RateLimiter(5, 1000, 100),
        RotatingCuckoo.class, RotatingCuckoo::new,
        RecencyWindow.class, RecencyWindow::new);

    /* "name(Type, Type)" of a method, for messages. */
    static String signature(Method m) {
        StringBuilder b = new StringBuilder(m.getName()).append('(');
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            b.append(i == 0 ? "" : ", ").append(types[i].getSimpleName());
        }
        return b.append(')').toString();
    }

    /* A valid argument of type `type` (for an open object): key "k" (bytes or a
     * String), the time, count, limit or index 1, one key (an array of one, or
     * a KeyBatch; its length 1 in an int[]), one time, an open structure or
     * native proxy (made by `open`, which the caller closes). An unknown type
     * fails the test: add an argument for it here. */
    static Object argumentFor(Class<?> type, Function<Class<?>, Object> open) {
        if (type == byte[].class) {
            return utf8("k");
        } else if (type == String.class) {
            return "k";
        } else if (type == long.class) {
            return 1L;
        } else if (type == int.class) {
            return 1;
        } else if (type == double.class) {
            return 0.5;
        } else if (type == byte[][].class) {
            return new byte[][] {utf8("k")};
        } else if (type == String[].class) {
            return new String[] {"k"};
        } else if (type == long[].class) {
            return new long[] {1};
        } else if (type == int[].class) {
            return new int[] {1};
        } else if (type == KeyBatch.class) {
            return KeyBatch.of("k");
        } else if (NativeObject.class.isAssignableFrom(type) || NativeResource.class.isAssignableFrom(type)) {
            return open.apply(type);
        }
        throw new AssertionError("add an argument for " + type.getName() + " to TestSupport.argumentFor");
    }

    /* m invoked on target (null: static) with args; the exception it throws,
     * unwrapped from InvocationTargetException. */
    static Object invoke(Method m, Object target, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /* m invoked without arguments on target, which must answer: a checked
     * exception fails the test (unchecked ones pass through). */
    static Object answer(Method m, Object target) {
        try {
            return invoke(m, target, new Object[0]);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(signature(m) + " threw " + e, e);
        }
    }

    /* The public instance methods of cls that our classes declare (cls and
     * its superclasses of this package; not Object's), each signature once.
     * (The public methods a public class inherits from a package-private one,
     * NativeHandle's serialize() and memory(), are bridges in the class.) */
    static List<Method> ownPublicMethods(Class<?> cls) {
        Map<String, Method> out = new TreeMap<>();
        for (Method m : cls.getMethods()) {
            if (!Modifier.isStatic(m.getModifiers())
                    && m.getDeclaringClass().getPackageName().equals("org.temporalfilters")) {
                out.putIfAbsent(signature(m), m);
            }
        }
        return new ArrayList<>(out.values());
    }

    /* The open objects a check made for arguments (open(type)), closed at the
     * end by close(). */
    static final class Opened implements AutoCloseable {
        private final List<NativeObject<?>> objects = new ArrayList<>();

        /* A new open structure of `type`, or the native proxy of one when
         * `type` is a proxy class (RecencySketchNative for RecencySketch). */
        Object open(Class<?> type) {
            for (Map.Entry<Class<?>, Supplier<NativeHandle<?>>> e : STRUCTURES.entrySet()) {
                if (e.getKey() == type) {
                    NativeHandle<?> h = e.getValue().get();
                    objects.add(h);
                    return h;
                }
                if (type.getSimpleName().equals(e.getKey().getSimpleName() + "Native")) {
                    NativeHandle<?> h = e.getValue().get();
                    objects.add(h);
                    return proxyOf(h);
                }
            }
            throw new AssertionError("add " + type.getName() + " to TestSupport.STRUCTURES");
        }

        @Override
        public void close() {
            for (NativeObject<?> o : objects) {
                o.close();
            }
        }
    }

    /* The native proxy an object owns (NativeObject's private field): deleted
     * once the object is closed. */
    static Object proxyOf(NativeObject<?> obj) {
        try {
            Field f = NativeObject.class.getDeclaredField("proxy");
            f.setAccessible(true);
            return f.get(obj);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /* Checks `closed` (an object closed before) like Go's
     * checkEveryMethodClosed: every public instance method of its class that
     * our classes declare (ownPublicMethods), called with valid arguments
     * (argumentFor), throws ClosedException "the <Name> is closed": none
     * answers, crashes or throws another exception. Those of WORK_WHEN_CLOSED
     * answer as documented. Then every method of the class, static or not,
     * that takes a structure is called with a closed one (on an open object
     * of the class): ClosedException naming the argument's class. And the
     * native proxy the object owned, deleted by close(), refuses every call
     * with status NULL before it reaches the freed handle
     * (checkEveryProxyMethodDeleted). Returns the names of the methods
     * checked on the closed object. */
    static Set<String> checkEveryMethodClosed(NativeObject<?> closed) throws Exception {
        assertTrue(closed.isClosed());
        Class<?> cls = closed.getClass();
        String name = cls.getSimpleName();
        Set<String> checked = new TreeSet<>();
        try (Opened opened = new Opened()) {
            for (Method m : ownPublicMethods(cls)) {
                String sig = signature(m);
                if (WORK_WHEN_CLOSED.contains(m.getName())) {
                    assertEquals(sig, 0, m.getParameterCount());
                    Object answer = answer(m, closed);
                    if (m.getName().equals("isClosed")) {
                        assertEquals(sig, true, answer);
                    } else if (m.getName().equals("toString")) {
                        assertEquals(sig, name + "(closed)", answer);
                    } else {
                        assertTrue(sig + ": a no-op", closed.isClosed());
                    }
                    continue;
                }
                Object[] args = argumentsFor(m, opened::open);
                expectClosedCall(name, sig, () -> invoke(m, closed, args));
                checked.add(m.getName());
            }
            for (Method m : cls.getMethods()) { // static too
                checkClosedArguments(m, opened);
            }
        }
        checkEveryProxyMethodDeleted(proxyOf(closed), name);
        return checked;
    }

    /* The arguments of m: argumentFor each parameter. */
    static Object[] argumentsFor(Method m, Function<Class<?>, Object> open) {
        Class<?>[] types = m.getParameterTypes();
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            args[i] = argumentFor(types[i], open);
        }
        return args;
    }

    /* expectClosed, naming the method in a failure. */
    static void expectClosedCall(String name, String sig, ThrowingRunnable call) {
        try {
            expectClosed(name, call);
        } catch (AssertionError e) {
            throw new AssertionError(sig + " on a closed " + name + ": " + e.getMessage(), e);
        }
    }

    /* If m (of a class of the library) takes a structure: m called with a
     * closed one there (on an open object of m's class when m is not static)
     * throws ClosedException naming the closed argument's class. */
    static void checkClosedArguments(Method m, Opened opened) throws Exception {
        if (!m.getDeclaringClass().getPackageName().equals("org.temporalfilters")) {
            return;
        }
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (!NativeObject.class.isAssignableFrom(types[i])) {
                continue;
            }
            Object[] args = argumentsFor(m, opened::open);
            NativeObject<?> arg = (NativeObject<?>) args[i];
            arg.close();
            Object target = Modifier.isStatic(m.getModifiers()) ? null : opened.open(m.getDeclaringClass());
            expectClosedCall(types[i].getSimpleName(), signature(m) + ", argument " + i, () -> invoke(m, target, args));
        }
    }

    /* Every public instance method of a deleted native proxy (what close()
     * leaves behind), but delete() itself, called with valid arguments,
     * throws status NULL ("closed") from the native layer's check of its
     * handle, before the freed pointer is used; delete() again is a no-op. */
    static void checkEveryProxyMethodDeleted(Object proxy, String name) throws Exception {
        Class<?> cls = proxy.getClass();
        int checked = 0;
        try (Opened opened = new Opened()) {
            for (Method m : cls.getDeclaredMethods()) {
                if (Modifier.isStatic(m.getModifiers()) || !Modifier.isPublic(m.getModifiers()) || m.isSynthetic()) {
                    continue;
                }
                if (m.getName().equals("delete")) {
                    answer(m, proxy); // again: a no-op
                    continue;
                }
                Object[] args = argumentsFor(m, opened::open);
                String sig = cls.getSimpleName() + "." + signature(m);
                try {
                    expectStatus(Status.NULL, "closed", () -> invoke(m, proxy, args));
                } catch (AssertionError e) {
                    throw new AssertionError(sig + " of a deleted " + name + " proxy: " + e.getMessage(), e);
                }
                checked++;
            }
        }
        assertTrue(cls.getSimpleName() + " has methods to check", checked > 0);
    }

    /* Runs `call`, a deserialize of a bad blob: a BadBlobException with one
     * of the blob statuses. */
    static BadBlobException expectBadBlob(ThrowingRunnable call) {
        BadBlobException e = assertThrows(BadBlobException.class, call);
        int code = e.status().code();
        assertTrue(e.getMessage(), code <= Status.TRUNCATED.code() && code >= Status.CORRUPT.code());
        checkConsistent(e);
        return e;
    }

    /* The blob's envelope (docs/wire-format.md): magic "TFLT", format
     * version 1, the structure's kind and flags, the payload's length, and
     * 8 bytes of checksum after the payload. */
    static void assertEnvelope(byte[] blob, int kind, int flags) {
        ByteBuffer b = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
        assertArrayEquals("magic", utf8("TFLT"), Arrays.copyOf(blob, 4));
        assertEquals("version", 1, b.getShort(4));
        assertEquals("kind", kind, b.getShort(6));
        assertEquals("flags", flags, b.getInt(8));
        assertEquals("payload length", blob.length - 28, b.getLong(12));
    }

    /* A structure's deserialize. */
    interface Reader<T extends NativeHandle<?>> {
        T read(byte[] blob);
    }

    /* What every structure's deserialize does with a damaged blob (the
     * envelope's checks, docs/wire-format.md, "Reading the envelope"): a blob
     * cut short is TRUNCATED, a wrong magic byte BAD_MAGIC, an unknown
     * version UNSUPPORTED_VERSION, a byte after the checksum CORRUPT, a bit
     * flipped in the flags or the payload CHECKSUM, and random bytes (half of
     * them starting as a blob does) some BadBlobException, never a crash.
     * Returns the intact blob read back, for the caller's own checks (and to
     * close). */
    static <T extends NativeHandle<?>> T checkHostileBlobs(byte[] blob, Reader<T> reader, long garbageSeed) {
        for (int n : new int[] {0, 1, 4, 19, 20, 27, blob.length / 2, blob.length - 1}) {
            byte[] cut = Arrays.copyOf(blob, n);
            expectStatus(Status.TRUNCATED, () -> reader.read(cut));
        }
        for (int at = 0; at < 4; at++) {
            byte[] b = blob.clone();
            b[at] = 'X';
            expectStatus(Status.BAD_MAGIC, () -> reader.read(b));
        }
        byte[] v = blob.clone();
        v[4] = 99; // format version
        expectStatus(Status.UNSUPPORTED_VERSION, () -> reader.read(v));
        byte[] extra = Arrays.copyOf(blob, blob.length + 1);
        expectStatus(Status.CORRUPT, () -> reader.read(extra));
        for (int at : new int[] {8, 20, 40, 100, blob.length / 2, blob.length - 20, blob.length - 1}) {
            for (int mask : new int[] {0x04, 0x10, 0x20}) {
                if (at < blob.length) {
                    byte[] c = blob.clone();
                    c[at] ^= (byte) mask;
                    expectStatus(Status.CHECKSUM, () -> reader.read(c));
                }
            }
        }
        Rng rng = new Rng(garbageSeed);
        for (int i = 0; i < 300; i++) {
            byte[] g = rng.bytes(rng.below(200));
            if (i % 4 == 0 && g.length >= 8) {
                System.arraycopy(blob, 0, g, 0, 8); // magic, version, kind
            } else if (i % 4 == 2 && g.length >= 4) {
                System.arraycopy(utf8("TFLT"), 0, g, 0, 4);
            }
            expectBadBlob(() -> reader.read(g));
        }
        return reader.read(blob);
    }

    /* A structure's deserialize with a memory limit. */
    interface LimitedReader<T extends NativeHandle<?>> {
        T read(byte[] blob, long maxMemory);
    }

    /* deserialize(blob, maxMemory) makes the structure when it fits in
     * maxMemory bytes (0: no limit; the limit is exact: memory() of the
     * result), and refuses it with TOO_LARGE one byte below, as well as a
     * negative limit. Returns the memory the blob needs. */
    static <T extends NativeHandle<?>> long checkMaxMemory(byte[] blob, LimitedReader<T> reader) {
        long need;
        try (T t = reader.read(blob, 0)) {
            need = t.memory();
        }
        assertTrue(need > 0);
        try (T t = reader.read(blob, need)) {
            assertEquals(need, t.memory());
            assertArrayEquals(blob, t.serialize());
        }
        reader.read(blob, Long.MAX_VALUE).close();
        expectStatus(Status.TOO_LARGE, () -> reader.read(blob, need - 1));
        expectStatus(Status.TOO_LARGE, () -> reader.read(blob, 1));
        expectStatus(Status.INVALID_ARGUMENT, "max_memory", () -> reader.read(blob, -1));
        expectStatus(Status.NULL, "blob", () -> reader.read(null, need));
        return need;
    }

    /* The native layer's checks of serialize's buffer: null and too short
     * are refused; a longer buffer holds the blob in its first
     * serialized_size() bytes (the idiomatic layer's retry with room to
     * spare relies on it), and the rest is not written. */
    static void checkSerializeInto(NativeProxy h) {
        expectStatus(Status.NULL, "out_buf", () -> h.serialize_into(null));
        expectStatus(Status.BUFFER_TOO_SMALL, () -> h.serialize_into(new byte[10]));
        int size = (int) h.serialized_size();
        byte[] exact = new byte[size];
        assertEquals(size, h.serialize_into(exact));
        byte[] longer = new byte[size + 100];
        Arrays.fill(longer, (byte) 0x5a);
        assertEquals(size, h.serialize_into(longer));
        assertArrayEquals(exact, Arrays.copyOf(longer, size));
        for (int i = size; i < longer.length; i++) {
            assertEquals("byte " + i + " beyond the blob", (byte) 0x5a, longer[i]);
        }
    }

    /* Makes 1000 objects, 50 a round with make(0 .. 49) (which also uses
     * them), and drops them unclosed, running the collector between rounds:
     * the Cleaner frees them, which must neither crash nor disturb the
     * objects still in use. */
    static void dropUnclosed(IntFunction<NativeHandle<?>> make) throws InterruptedException {
        int made = 0;
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 50; i++) {
                assertTrue(make.apply(i).memory() > 0);
                made++;
            }
            System.gc();
            Thread.sleep(5);
        }
        assertEquals(1000, made);
    }

    /* The body of one of onThreads' threads. */
    interface Body {
        void run(int thread) throws Exception;
    }

    /* Runs body(t) on n threads started together; rethrows the first failure
     * of any of them. */
    static void onThreads(int n, Body body) throws Exception {
        CyclicBarrier start = new CyclicBarrier(n);
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            final int id = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    body.run(id);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "tf-test-" + t);
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        Throwable first = failures.peek();
        if (first instanceof Exception) {
            throw (Exception) first;
        }
        if (first != null) {
            throw new AssertionError(first);
        }
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] hex(String h) {
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    /* A deterministic pseudo-random generator (splitmix64), so that every run
     * tests the same keys. */
    static final class Rng {
        private long state;

        Rng(long seed) {
            state = seed;
        }

        long next() {
            long z = (state += 0x9E3779B97F4A7C15L);
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        int below(int n) {
            return (int) Long.remainderUnsigned(next(), n);
        }

        byte[] bytes(int n) {
            byte[] b = new byte[n];
            for (int i = 0; i < n; i++) {
                b[i] = (byte) next();
            }
            return b;
        }
    }
}
