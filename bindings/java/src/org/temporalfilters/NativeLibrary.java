package org.temporalfilters;

import java.io.File;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/*
 * Finds and loads the JNI library (libtemporalfilters_jni.so) for the static
 * initializer of TemporalFiltersJNI, the class that declares the native
 * methods (temporalfilters_java.i).
 *
 * The property org.temporalfilters.jni, when set, names the library's file or
 * the directory holding it, and is the only place tried. Otherwise, in order:
 *   1. every directory of java.library.path (empty entries skipped);
 *   2. the install prefix of this jar, when it sits in <prefix>/share/java
 *      (as given on the class path, then with its symbolic links resolved):
 *      <prefix>/lib/<triplet>/jni, then <prefix>/lib/jni;
 *   3. /usr/lib/<triplet>/jni, then /usr/lib/jni (Debian's JNI directories).
 * <triplet> is the Debian multiarch triplet of the running JVM (os.arch on
 * Linux; meson.build installs into lib/<gcc -print-multiarch>/jni and the
 * test NativeLibraryTest checks that the two agree). The first file that
 * exists and loads wins; a file that exists but does not load (another
 * architecture, libtemporalfilters.so.0 missing) is noted and the search goes
 * on. When nothing loads, the UnsatisfiedLinkError names the property and
 * every path tried with what happened there.
 *
 * The Redis limiter's JNI library (libtemporalfilters_redis_jni.so, built
 * with the redis option; loaded by TemporalFiltersRedisJNI the first time
 * RedisLimiter is used) is searched for in the same places under its own
 * name, with the same error: when the property is set, its directory (or
 * that of the file it names) is the only place tried.
 */
final class NativeLibrary {
    /* -Dorg.temporalfilters.jni=FILE-OR-DIRECTORY */
    static final String PROPERTY = "org.temporalfilters.jni";
    /* libtemporalfilters_jni.so */
    static final String FILE_NAME = System.mapLibraryName("temporalfilters_jni");
    /* libtemporalfilters_redis_jni.so */
    static final String REDIS_FILE_NAME = System.mapLibraryName("temporalfilters_redis_jni");

    private static Path loadedFrom;
    private static Path redisLoadedFrom;

    private NativeLibrary() {
    }

    /* Loads the library once; throws UnsatisfiedLinkError when it cannot. */
    static synchronized void load() {
        if (loadedFrom != null) {
            return;
        }
        String property = System.getProperty(PROPERTY);
        loadedFrom = loadFirst(candidates(property, System.getProperty("java.library.path"), jarLocation(),
                                          System.getProperty("os.name"), System.getProperty("os.arch")),
                               property);
    }

    /* Loads the Redis limiter's library once (after the core's, which it
     * needs); throws UnsatisfiedLinkError when it cannot. */
    static synchronized void loadRedis() {
        if (redisLoadedFrom != null) {
            return;
        }
        load();
        String property = System.getProperty(PROPERTY);
        redisLoadedFrom = loadFirst(REDIS_FILE_NAME,
                                    candidates(REDIS_FILE_NAME, property, System.getProperty("java.library.path"),
                                               jarLocation(), System.getProperty("os.name"),
                                               System.getProperty("os.arch")),
                                    property);
    }

    /*
     * Loads the first of the candidates that exists and loads, and returns it;
     * else throws the UnsatisfiedLinkError that names the property and every
     * candidate with what happened there.
     */
    static Path loadFirst(List<Path> candidates, String property) {
        return loadFirst(FILE_NAME, candidates, property);
    }

    /* loadFirst for the library fileName (FILE_NAME or REDIS_FILE_NAME). */
    static Path loadFirst(String fileName, List<Path> candidates, String property) {
        StringBuilder tried = new StringBuilder();
        for (Path p : candidates) {
            if (!Files.isRegularFile(p)) {
                tried.append("\n  ").append(p).append(": not found");
                continue;
            }
            try {
                System.load(p.toString());
                return p;
            } catch (UnsatisfiedLinkError e) {
                tried.append("\n  ").append(p).append(": present but not loadable: ").append(e.getMessage());
            }
        }
        throw new UnsatisfiedLinkError(failure(fileName, property, tried.toString()));
    }

    /* The file the library was loaded from; null before load(). */
    static synchronized Path loadedFrom() {
        return loadedFrom;
    }

    /* The file the Redis limiter's library was loaded from; null before loadRedis(). */
    static synchronized Path redisLoadedFrom() {
        return redisLoadedFrom;
    }

    private static String failure(String fileName, String property, String tried) {
        String head = "org.temporalfilters cannot load its JNI library " + fileName;
        if (!FILE_NAME.equals(fileName)) {
            head += " (the Redis limiter's, built when temporalfilters is configured with its redis option;"
                + " it needs libtemporalfilters-redis.so.0 and hiredis)";
        }
        if (isSet(property)) {
            return head + " from -D" + PROPERTY + "=" + property
                + " (when set, the property is the only place tried). Tried:" + tried
                + "\nName the library's file or the directory holding it with -D" + PROPERTY + "=PATH.";
        }
        return head + " (-D" + PROPERTY + " is not set; os.name " + System.getProperty("os.name") + ", os.arch "
            + System.getProperty("os.arch") + "). Tried, in order:" + tried + "\nInstall the library (Debian: "
            + "/usr/lib/<triplet>/jni), add its directory to -Djava.library.path, or name its file or directory "
            + "with -D" + PROPERTY + "=PATH.";
    }

    private static boolean isSet(String s) {
        return s != null && !s.isEmpty();
    }

    /*
     * The paths tried, in order, without duplicates: the property's file alone
     * when it is set (a directory stands for the library's file in it), else
     * java.library.path, the jar's prefix and /usr (see the class comment).
     * jar is the jar this class was loaded from, or null.
     */
    static List<Path> candidates(String property, String libraryPath, Path jar, String osName, String osArch) {
        return candidates(FILE_NAME, property, libraryPath, jar, osName, osArch);
    }

    /*
     * candidates() for the library fileName: for REDIS_FILE_NAME, a property
     * naming a file stands for the directory holding it.
     */
    static List<Path> candidates(String fileName, String property, String libraryPath, Path jar, String osName,
                                 String osArch) {
        Set<Path> out = new LinkedHashSet<>();
        if (isSet(property)) {
            Path p = Path.of(property).toAbsolutePath().normalize();
            if (Files.isDirectory(p)) {
                out.add(p.resolve(fileName));
            } else if (FILE_NAME.equals(fileName) || p.getParent() == null) {
                out.add(p);
            } else {
                out.add(p.getParent().resolve(fileName));
            }
            return new ArrayList<>(out);
        }
        if (libraryPath != null) {
            for (String dir : libraryPath.split(File.pathSeparator)) {
                if (!dir.isEmpty()) {
                    out.add(Path.of(dir).toAbsolutePath().normalize().resolve(fileName));
                }
            }
        }
        List<String> triplets = triplets(osName, osArch);
        if (jar != null) {
            List<Path> jars = new ArrayList<>();
            jars.add(jar.toAbsolutePath().normalize());
            try {
                jars.add(jar.toRealPath());
            } catch (java.io.IOException | SecurityException e) {
                // the jar as given is all there is to go on
            }
            for (Path j : jars) {
                Path prefix = prefixOf(j);
                if (prefix != null) {
                    addJniDirs(out, prefix, triplets, fileName);
                }
            }
        }
        addJniDirs(out, Path.of("/usr"), triplets, fileName);
        return new ArrayList<>(out);
    }

    /* <prefix> of <prefix>/share/java/NAME.jar, else null. */
    static Path prefixOf(Path jar) {
        Path java = jar.getParent();
        Path share = java == null ? null : java.getParent();
        if (share == null || share.getParent() == null || !"java".equals(java.getFileName().toString())
            || !"share".equals(share.getFileName().toString())) {
            return null;
        }
        return share.getParent();
    }

    private static void addJniDirs(Set<Path> out, Path prefix, List<String> triplets, String fileName) {
        for (String t : triplets) {
            out.add(prefix.resolve("lib").resolve(t).resolve("jni").resolve(fileName));
        }
        out.add(prefix.resolve("lib").resolve("jni").resolve(fileName));
    }

    /*
     * Debian's multiarch triplets for the JVM's os.arch on Linux (the names
     * gcc -print-multiarch prints), most likely first; none elsewhere or for
     * an architecture this table does not know.
     */
    static List<String> triplets(String osName, String osArch) {
        if (osName == null || osArch == null || !osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            return List.of();
        }
        return switch (osArch) {
        case "amd64", "x86_64" -> List.of("x86_64-linux-gnu");
        case "x86", "i386", "i486", "i586", "i686" -> List.of("i386-linux-gnu");
        case "aarch64" -> List.of("aarch64-linux-gnu");
        case "arm" -> List.of("arm-linux-gnueabihf", "arm-linux-gnueabi");
        case "ppc64le" -> List.of("powerpc64le-linux-gnu");
        case "ppc64" -> List.of("powerpc64-linux-gnu");
        case "ppc" -> List.of("powerpc-linux-gnu");
        case "s390x" -> List.of("s390x-linux-gnu");
        case "riscv64" -> List.of("riscv64-linux-gnu");
        case "mips64el" -> List.of("mips64el-linux-gnuabi64");
        case "mipsel" -> List.of("mipsel-linux-gnu");
        case "loongarch64" -> List.of("loongarch64-linux-gnu");
        case "sparcv9" -> List.of("sparc64-linux-gnu");
        default -> List.of();
        };
    }

    /* The jar (or class directory) this class was loaded from, or null. */
    private static Path jarLocation() {
        try {
            CodeSource source = NativeLibrary.class.getProtectionDomain().getCodeSource();
            URL url = source == null ? null : source.getLocation();
            if (url == null || !"file".equals(url.getProtocol())) {
                return null;
            }
            Path p = Path.of(url.toURI());
            return Files.isRegularFile(p) ? p : null;
        } catch (java.net.URISyntaxException | IllegalArgumentException | SecurityException e) {
            return null;
        }
    }
}
