package org.temporalfilters;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.temporalfilters.TestSupport.checkEveryMethodClosed;

import java.io.File;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.Test;

/*
 * Every public method of every structure on a closed object, found by
 * reflection (TestSupport.checkEveryMethodClosed; the hand-written lists of
 * the other test classes check the messages of some calls, this one that
 * none is forgotten): a method added later is checked without a change here,
 * and a parameter type the check cannot fill fails it ("add an argument for
 * TYPE"). Each structure is checked closed in three ways: by close() in this
 * thread (twice), by close() in another thread, and after being used. The
 * RedisLimiter, which needs a server, is checked the same way in
 * RedisLimiterTest.
 */
public class ClosedHandleTest {
    /* The methods each check must have called on the closed object (a few
     * per class, so that a check which found no method fails). */
    private static void check(Class<? extends NativeHandle<?>> cls, String... want) throws Exception {
        Supplier<NativeHandle<?>> make = TestSupport.STRUCTURES.get(cls);
        NativeHandle<?> here = make.get();
        here.close();
        here.close();
        NativeHandle<?> there = make.get();
        Thread closer = new Thread(there::close, "tf-closer");
        closer.start();
        closer.join();
        NativeHandle<?> used = make.get();
        assertTrue(used.serialize().length > 0);
        used.close();
        for (NativeHandle<?> closed : new NativeHandle<?>[] {here, there, used}) {
            Set<String> checked = checkEveryMethodClosed(closed);
            for (String m : want) {
                assertTrue(cls.getSimpleName() + "." + m + " was not checked: " + checked, checked.contains(m));
            }
            assertTrue(checked.contains("serialize") && checked.contains("memory") && checked.contains("info"));
        }
    }

    @Test
    public void recencySketch() throws Exception {
        check(RecencySketch.class, "update", "query", "lastSeen", "pace", "ttlInsert", "ttlMaybeLive", "merge",
              "clear", "errorEstimate", "updateBatch", "queryBatch");
    }

    @Test
    public void concurrentRecencySketch() throws Exception {
        // a concurrent handle counts its calls in flight (NativeObject): closed
        // by another thread, every later call still fails cleanly
        RecencySketch s = new RecencySketch(64, 2, 1, RecencySketch.CONCURRENT);
        s.update("k", 5);
        Thread closer = new Thread(s::close, "tf-closer");
        closer.start();
        closer.join();
        assertTrue(checkEveryMethodClosed(s).contains("update"));
    }

    @Test
    public void ageBloom() throws Exception {
        check(AgeBloom.class, "add", "contains", "addIfAbsent", "addBatch", "containsBatch", "addIfAbsentBatch",
              "clear", "stats");
    }

    @Test
    public void timeBloom() throws Exception {
        check(TimeBloom.class, "add", "contains", "addIfAbsent", "addBatch", "containsBatch", "addIfAbsentBatch",
              "clear", "stats", "sliceBits");
    }

    @Test
    public void rateLimiter() throws Exception {
        check(RateLimiter.class, "acquire", "acquireBatch", "peek", "refund", "reset", "setGlobalLimit",
              "setKeyLimit", "setMaxKeys", "stats");
    }

    @Test
    public void rotatingCuckoo() throws Exception {
        check(RotatingCuckoo.class, "add", "contains", "remove", "addIfAbsent", "containsBatch",
              "addIfAbsentBatch", "clear", "stats", "table");
    }

    @Test
    public void recencyWindow() throws Exception {
        check(RecencyWindow.class, "insert", "query", "insertReport", "insertBatch", "queryBatch",
              "insertReportBatch", "clear", "stats", "level");
    }

    /* The classes checked here (TestSupport.STRUCTURES) and the RedisLimiter
     * (RedisLimiterTest) are every public class of the library's jar that
     * owns a native handle: a new structure fails here until it is added. */
    @Test
    public void everyClassWithAHandleIsChecked() throws Exception {
        File jar = new File(RecencySketch.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> found = new TreeSet<>();
        try (JarFile j = new JarFile(jar)) {
            for (Enumeration<JarEntry> e = j.entries(); e.hasMoreElements();) {
                String entry = e.nextElement().getName();
                if (!entry.startsWith("org/temporalfilters/") || !entry.endsWith(".class") || entry.contains("$")) {
                    continue;
                }
                String name = entry.substring(0, entry.length() - 6).replace('/', '.');
                Class<?> c = Class.forName(name, false, ClosedHandleTest.class.getClassLoader());
                if (NativeObject.class.isAssignableFrom(c) && Modifier.isPublic(c.getModifiers())
                        && !Modifier.isAbstract(c.getModifiers())) {
                    found.add(c.getSimpleName());
                }
            }
        }
        Set<String> checked = new TreeSet<>(Arrays.asList("RedisLimiter"));
        for (Class<?> c : TestSupport.STRUCTURES.keySet()) {
            checked.add(c.getSimpleName());
        }
        assertEquals(checked, found);
    }
}
