package org.temporalfilters;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import org.junit.Test;

/*
 * The golden blobs of tests/data, shared by the C suite and every binding:
 * each blob reads back with the answers recorded in its .expected file, and
 * the operations of tests/golden.h, replayed through this binding, serialize
 * to exactly the golden bytes. Since every language writes those same bytes
 * and reads them, a blob written by one is read by the others.
 */
public class GoldenTest {
    private static final byte[] BINARY_KEY = {0x00, 'b', 'i', 'n', 0x00, (byte) 0xff, 0x7f};

    private static Path dataDir() {
        String dir = System.getProperty("tf.golden.dir");
        assertNotNull("run with -Dtf.golden.dir=<repo>/tests/data", dir);
        return Paths.get(dir);
    }

    /* tests/golden.h, golden_recency_sketch(flags). */
    private static RecencySketch rebuild(int flags) {
        long width = (flags & RecencySketch.BLOCKED) != 0 ? 96 : 256;
        RecencySketch s = new RecencySketch(width, 3, 42, flags);
        for (int i = 0; i < 200; i++) {
            s.update("key-" + i, 1000 + 7L * i);
        }
        for (int i = 0; i < 200; i += 3) {
            s.update("key-" + i, (i % 2 != 0) ? 5000 + i : 500 + i);
        }
        s.update(BINARY_KEY, 123456789);
        return s;
    }

    private static void check(String name, int flags) throws IOException {
        byte[] golden = Files.readAllBytes(dataDir().resolve(name + ".tfb"));
        List<String> lines = Files.readAllLines(dataDir().resolve(name + ".expected"), StandardCharsets.US_ASCII);

        try (RecencySketch built = rebuild(flags)) {
            assertArrayEquals(name + ": rebuilt sketch differs from the golden blob", golden, built.serialize());
        }

        try (RecencySketch s = RecencySketch.deserialize(golden)) {
            assertEquals(flags, s.flags());
            assertEquals(42, s.seed());
            assertEquals(3, s.depth());
            int checked = 0;
            int never = 0;
            byte[][] keys = new byte[lines.size()][];
            long[] want = new long[lines.size()];
            for (String line : lines) {
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                String[] f = line.trim().split("\\s+");
                assertEquals(line, 2, f.length);
                keys[checked] = TestSupport.hex(f[0]);
                want[checked] = Long.parseLong(f[1]);
                assertEquals(name + " " + f[0], want[checked], s.query(keys[checked]));
                never += want[checked] == 0 ? 1 : 0;
                checked++;
            }
            assertEquals(251, checked); // key-0 .. key-249 and the binary key
            assertTrue(never > 0 && never <= 50);
            assertEquals(123456789, s.query(BINARY_KEY));
            // the batch call gives the same answers
            byte[][] ks = java.util.Arrays.copyOf(keys, checked);
            assertArrayEquals(java.util.Arrays.copyOf(want, checked), s.queryBatch(ks));
            // and the blob writes back unchanged
            assertArrayEquals(golden, s.serialize());
        }
    }

    @Test
    public void standardLayout() throws IOException {
        check("recency_sketch_v1", 0);
    }

    @Test
    public void blockedConcurrentLayout() throws IOException {
        check("recency_sketch_blocked_v1", RecencySketch.BLOCKED | RecencySketch.CONCURRENT);
    }
}
