package org.temporalfilters;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/*
 * How the JNI library is found (NativeLibrary): the property, then
 * java.library.path, the jni directories of the jar's install prefix and of
 * /usr; and the error that names the property and every path tried. The
 * search order is checked as a function; the real loading in child JVMs.
 *
 * meson.build passes -Dtf.jni.installdir (where it installs the JNI library,
 * relative to the prefix: lib/<triplet>/jni) and runs this JVM with
 * -Djava.library.path=<the build's JNI directory>.
 */
public class NativeLibraryTest {
    private static final String F = NativeLibrary.FILE_NAME;
    private Path tmp;

    @Before
    public void makeTmp() throws IOException {
        tmp = Files.createTempDirectory("tf-jni-test");
    }

    @After
    public void removeTmp() throws IOException {
        try (Stream<Path> walk = Files.walk(tmp)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    private static String installDir() {
        String d = System.getProperty("tf.jni.installdir");
        assertTrue("run with -Dtf.jni.installdir", d != null && !d.isEmpty());
        return d;
    }

    private static Path buildJni() {
        Path p = Path.of(System.getProperty("java.library.path")).resolve(F);
        assertTrue(p + " exists", Files.isRegularFile(p));
        return p;
    }

    @Test
    public void searchOrder() {
        List<Path> got = NativeLibrary.candidates(null, "/a::/b/", Path.of("/p/share/java/temporalfilters.jar"),
                                                  "Linux", "amd64");
        List<Path> want = List.of(Path.of("/a", F), Path.of("/b", F), Path.of("/p/lib/x86_64-linux-gnu/jni", F),
                                  Path.of("/p/lib/jni", F), Path.of("/usr/lib/x86_64-linux-gnu/jni", F),
                                  Path.of("/usr/lib/jni", F));
        assertEquals(want, got);
        // /usr itself: no duplicates
        got = NativeLibrary.candidates(null, "/usr/lib/jni", Path.of("/usr/share/java/temporalfilters-0.1.0.jar"),
                                       "Linux", "aarch64");
        want = List.of(Path.of("/usr/lib/jni", F), Path.of("/usr/lib/aarch64-linux-gnu/jni", F));
        assertEquals(want, got);
    }

    @Test
    public void aJarOutsideShareJavaHasNoPrefix() {
        for (String jar : new String[] {"/home/u/lib/temporalfilters.jar", "/p/java/temporalfilters.jar",
                                        "/p/share/temporalfilters.jar", "temporalfilters.jar"}) {
            List<Path> got = NativeLibrary.candidates("", null, Path.of(jar), "Linux", "amd64");
            assertEquals(jar, List.of(Path.of("/usr/lib/x86_64-linux-gnu/jni", F), Path.of("/usr/lib/jni", F)), got);
        }
        assertEquals(null, NativeLibrary.prefixOf(Path.of("/p/java/x.jar")));
        assertEquals(Path.of("/"), NativeLibrary.prefixOf(Path.of("/share/java/x.jar")));
        assertEquals(Path.of("/opt/tf"), NativeLibrary.prefixOf(Path.of("/opt/tf/share/java/x.jar")));
    }

    @Test
    public void aLinkedJarAlsoSearchesItsTargetsPrefix() throws IOException {
        Path real = Files.createDirectories(tmp.resolve("real/share/java")).resolve("temporalfilters-0.1.0.jar");
        Files.write(real, new byte[] {0});
        Path link = Files.createDirectories(tmp.resolve("project/libs")).resolve("temporalfilters.jar");
        Files.createSymbolicLink(link, real);
        Path prefix = tmp.resolve("real").toRealPath();
        List<Path> got = NativeLibrary.candidates(null, null, link, "Linux", "amd64");
        assertEquals(List.of(prefix.resolve("lib/x86_64-linux-gnu/jni").resolve(F), prefix.resolve("lib/jni").resolve(F),
                             Path.of("/usr/lib/x86_64-linux-gnu/jni", F), Path.of("/usr/lib/jni", F)),
                     got);
    }

    @Test
    public void thePropertyIsTheOnlyPlace() throws IOException {
        Path file = tmp.resolve("elsewhere.so");
        assertEquals(List.of(file), NativeLibrary.candidates(file.toString(), "/a", Path.of("/p/share/java/t.jar"),
                                                             "Linux", "amd64"));
        assertEquals(List.of(tmp.resolve(F)), NativeLibrary.candidates(tmp.toString(), "/a", null, "Linux", "amd64"));
    }

    @Test
    public void triplets() {
        assertEquals(List.of("x86_64-linux-gnu"), NativeLibrary.triplets("Linux", "amd64"));
        assertEquals(List.of("i386-linux-gnu"), NativeLibrary.triplets("Linux", "i386"));
        assertEquals(List.of("arm-linux-gnueabihf", "arm-linux-gnueabi"), NativeLibrary.triplets("Linux", "arm"));
        assertEquals(List.of(), NativeLibrary.triplets("Linux", "vax"));
        assertEquals(List.of(), NativeLibrary.triplets("Mac OS X", "aarch64"));
        assertEquals(List.of(Path.of("/usr/lib/jni", F)), NativeLibrary.candidates(null, null, null, "Linux", "vax"));
    }

    /* The loader looks where meson.build installs: the loader's triplet for
     * this JVM is the build's (gcc -print-multiarch). */
    @Test
    public void theLoaderLooksWhereMesonInstalls() {
        Path want = Path.of("/p").resolve(installDir()).resolve(F);
        List<Path> got = NativeLibrary.candidates(null, null, Path.of("/p/share/java/temporalfilters.jar"),
                                                  System.getProperty("os.name"), System.getProperty("os.arch"));
        assertTrue(got + " has " + want, got.contains(want));
    }

    @Test
    public void thisJvmLoadedTheBuildsLibrary() {
        assertNotEquals("", TemporalFilters.version());
        assertEquals(buildJni(), NativeLibrary.loadedFrom());
    }

    @Test
    public void theErrorNamesThePropertyAndEveryPath() throws IOException {
        Path missing = tmp.resolve("missing").resolve(F);
        Path garbage = tmp.resolve("garbage.so");
        Files.write(garbage, "not a shared object".getBytes(StandardCharsets.UTF_8));
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
                                              () -> NativeLibrary.loadFirst(List.of(missing, garbage), null));
        String m = e.getMessage();
        assertTrue(m, m.contains("-Dorg.temporalfilters.jni is not set"));
        assertTrue(m, m.contains("\n  " + missing + ": not found\n"));
        assertTrue(m, m.contains("\n  " + garbage + ": present but not loadable: "));
        assertTrue(m, m.contains("-Dorg.temporalfilters.jni=PATH"));
        assertTrue(m, m.indexOf(missing.toString()) < m.indexOf(garbage.toString()));

        e = assertThrows(UnsatisfiedLinkError.class, () -> NativeLibrary.loadFirst(List.of(garbage), "/x"));
        m = e.getMessage();
        assertTrue(m, m.contains("from -Dorg.temporalfilters.jni=/x (when set, the property is the only place tried)"));
        assertTrue(m, m.contains("\n  " + garbage + ": present but not loadable: "));
        // a library that exists and loads wins over the later candidates
        assertEquals(buildJni(), NativeLibrary.loadFirst(List.of(missing, garbage, buildJni(), missing), null));
    }

    /* A child JVM's exit status and output (stdout and stderr). */
    private record Run(int status, String output) {
    }

    private Run java(String classPath, String... options) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(options));
        cmd.addAll(List.of("-cp", classPath, NativeLibraryTest.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).directory(tmp.toFile());
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().remove("_JAVA_OPTIONS");
        pb.environment().remove("JDK_JAVA_OPTIONS");
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue("child JVM finished", p.waitFor(120, TimeUnit.SECONDS));
        return new Run(p.exitValue(), out);
    }

    /* A child JVM with a property naming a file that is not there fails with
     * the error that names the property and the path. */
    @Test
    public void aBadPropertyFailsWithItsName() throws Exception {
        Path bad = tmp.resolve("no-such-dir").resolve(F);
        Run r = java(System.getProperty("java.class.path"), "-Dorg.temporalfilters.jni=" + bad);
        assertNotEquals(r.output(), 0, r.status());
        assertTrue(r.output(), r.output().contains("java.lang.UnsatisfiedLinkError: org.temporalfilters cannot load "
                                                   + "its JNI library " + F + " from -Dorg.temporalfilters.jni=" + bad));
        assertTrue(r.output(), r.output().contains("\n  " + bad + ": not found\n"));
        // the same property naming the build's directory loads the library there
        Path dir = buildJni().getParent();
        r = java(System.getProperty("java.class.path"), "-Dorg.temporalfilters.jni=" + dir);
        assertEquals(r.output(), 0, r.status());
        assertTrue(r.output(), r.output().contains("loaded " + buildJni() + "\n"));
    }

    /* A jar in <prefix>/share/java finds the library in <prefix>/lib/<triplet>/jni
     * with no property and nothing on java.library.path; a file there that does
     * not load is passed over for <prefix>/lib/jni. */
    @Test
    public void theJarsPrefixIsSearched() throws Exception {
        String jar = null;
        List<String> rest = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (jar == null && Path.of(e).getFileName().toString().matches("temporalfilters(-[0-9.]+)?\\.jar")) {
                jar = e;
            } else {
                rest.add(e);
            }
        }
        assertTrue("the library's jar is on the class path", jar != null);
        Path prefix = tmp.resolve("prefix");
        Path copy = Files.createDirectories(prefix.resolve("share/java")).resolve("temporalfilters.jar");
        Files.copy(Path.of(jar), copy, StandardCopyOption.REPLACE_EXISTING);
        Path jni = Files.createDirectories(prefix.resolve(installDir())).resolve(F);
        Files.createSymbolicLink(jni, buildJni());
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        String cp = copy + File.pathSeparator + String.join(File.pathSeparator, rest);

        Run r = java(cp, "-Djava.library.path=" + empty);
        assertEquals(r.output(), 0, r.status());
        assertTrue(r.output(), r.output().contains("loaded " + jni + "\n"));

        Files.delete(jni);
        Files.write(jni, "not a shared object".getBytes(StandardCharsets.UTF_8));
        Path fallback = Files.createDirectories(prefix.resolve("lib/jni")).resolve(F);
        Files.createSymbolicLink(fallback, buildJni());
        r = java(cp, "-Djava.library.path=" + empty);
        assertEquals(r.output(), 0, r.status());
        assertTrue(r.output(), r.output().contains("loaded " + fallback + "\n"));
    }

    /* The Redis limiter's library is searched for under its own name in the
     * same places; a property naming a file stands for its directory. */
    @Test
    public void theRedisLibrarysSearchOrder() {
        String r = NativeLibrary.REDIS_FILE_NAME;
        assertEquals(List.of(Path.of("/a", r), Path.of("/p/lib/x86_64-linux-gnu/jni", r), Path.of("/p/lib/jni", r),
                             Path.of("/usr/lib/x86_64-linux-gnu/jni", r), Path.of("/usr/lib/jni", r)),
                     NativeLibrary.candidates(r, null, "/a", Path.of("/p/share/java/temporalfilters.jar"), "Linux",
                                              "amd64"));
        assertEquals(List.of(Path.of("/x", r)),
                     NativeLibrary.candidates(r, "/x/" + F, "/a", null, "Linux", "amd64"));
        assertEquals(List.of(tmp.resolve(r)), NativeLibrary.candidates(r, tmp.toString(), "/a", null, "Linux", "amd64"));
    }

    /* The core alone never loads the Redis limiter's library; RedisLimiter's
     * first use does, from the same directory as the core's, and when it is
     * not there fails with the loader's error, which names it and every path
     * tried. (-Dtf.redis.built: whether the build made it, the redis option.) */
    @Test
    public void theRedisLibraryIsLoadedOnFirstUseOnly() throws Exception {
        String cp = System.getProperty("java.class.path");
        String r = NativeLibrary.REDIS_FILE_NAME;
        Path dir = buildJni().getParent();
        Run run = java(cp, "-Dorg.temporalfilters.jni=" + dir);
        assertEquals(run.output(), 0, run.status());
        assertTrue(run.output(), run.output().contains("redis null\n"));
        if (Boolean.getBoolean("tf.redis.built")) {
            run = java(cp, "-Dorg.temporalfilters.jni=" + dir, "-Dtf.test.redis=true");
            assertEquals(run.output(), 0, run.status());
            assertTrue(run.output(), run.output().contains("redis " + dir.resolve(r) + "\n"));
        }
        Path coreOnly = Files.createDirectories(tmp.resolve("core-only"));
        Files.createSymbolicLink(coreOnly.resolve(F), buildJni());
        run = java(cp, "-Dorg.temporalfilters.jni=" + coreOnly, "-Dtf.test.redis=true");
        assertNotEquals(run.output(), 0, run.status());
        assertTrue(run.output(), run.output().contains("java.lang.UnsatisfiedLinkError: org.temporalfilters cannot "
                                                       + "load its JNI library " + r + " (the Redis limiter's"));
        assertTrue(run.output(), run.output().contains("\n  " + coreOnly.resolve(r) + ": not found\n"));
        assertTrue(run.output(), run.output().contains("-Dorg.temporalfilters.jni=" + coreOnly));
    }

    /* The child JVM: loads the library through the public API and says from
     * where; with -Dtf.test.redis=true, RedisLimiter's library too (its
     * builder is the class's first use). */
    public static void main(String[] args) {
        String version = TemporalFilters.version();
        System.out.println("version " + version);
        System.out.println("loaded " + NativeLibrary.loadedFrom());
        if (Boolean.getBoolean("tf.test.redis")) {
            RedisLimiter.builder(1, 10, 1);
        }
        System.out.println("redis " + NativeLibrary.redisLoadedFrom());
    }
}
