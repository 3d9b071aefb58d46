/* Rotating cuckoo filter: no false positives. A key never added is found
 * only when another key's 128-bit hash matches it in a candidate bucket
 * and all 64 fingerprint bits: about tables x ways x slots per bucket /
 * 2^64 per probe (below 2^-55 here), so the expected count over the
 * probes below is below 1e-8 and a single false positive fails the test.
 * The plain build probes 1e8 absent keys at full load (every table at its
 * occupancy, newest first: 9.6 s for 1e8 probes of four tables in a
 * debugoptimized build on the development machine); a sanitized build,
 * 1e6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "cuckoo_util.h"

#define CK_SANITIZED TU_REDUCED /* test_util.h */

enum { GROUP = 4096 };

/* Fills a filter to full load, then probes `probes` keys never added with
 * contains_batch; returns the false positives. Also checks that every
 * inserted key is still found (nothing was forgotten). */
static uint64_t probe_full_filter(uint32_t spb, unsigned ways, uint64_t slots, uint64_t inserted, uint64_t probes) {
    tf_rotating_cuckoo_options o = ck_options(slots, spb, ways, 0);
    tf_rotating_cuckoo *f = ck_new(&o);
    static tu_key keys[GROUP];
    static const void *ptrs[GROUP];
    static size_t lens[GROUP];
    static int got[GROUP];
    for (size_t i = 0; i < GROUP; ++i) {
        ptrs[i] = keys[i].b;
        lens[i] = sizeof keys[i].b;
    }
    for (uint64_t base = 0; base < inserted; base += GROUP) {
        const size_t n = inserted - base < GROUP ? (size_t)(inserted - base) : GROUP;
        for (size_t i = 0; i < n; ++i) keys[i] = ck_key(base + i);
        assert_int_equal(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, lens, n, 1, got), TF_OK);
        for (size_t i = 0; i < n; ++i) assert_int_equal(got[i], 0);
    }
    const tf_rotating_cuckoo_stats s = ck_stats(f, 1);
    assert_int_equal(s.items, inserted);
    assert_int_equal(s.forgotten_memory, 0);
    /* full load: the newest table near its occupancy, the others at it */
    tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
    assert_int_equal(tf_rotating_cuckoo_get_info(f, &info), TF_OK);
    for (uint64_t t = 1; t < s.tables; ++t) {
        tf_rotating_cuckoo_table tb = TF_ROTATING_CUCKOO_TABLE_INIT;
        assert_int_equal(tf_rotating_cuckoo_get_table(f, t, 1, &tb), TF_OK);
        assert_true(tb.load >= info.max_occupancy - 0.01 || s.kick_rotations > 0);
    }
    uint64_t fp = 0;
    const uint64_t absent = (uint64_t)1 << 40; /* ids never added */
    for (uint64_t base = 0; base < probes; base += GROUP) {
        const size_t n = probes - base < GROUP ? (size_t)(probes - base) : GROUP;
        for (size_t i = 0; i < n; ++i) keys[i] = ck_key(absent + base + i);
        assert_int_equal(tf_rotating_cuckoo_contains_batch(f, ptrs, lens, n, 1, got), TF_OK);
        for (size_t i = 0; i < n; ++i) fp += (uint64_t)got[i];
    }
    for (uint64_t base = 0; base < inserted; base += GROUP) {
        const size_t n = inserted - base < GROUP ? (size_t)(inserted - base) : GROUP;
        for (size_t i = 0; i < n; ++i) keys[i] = ck_key(base + i);
        assert_int_equal(tf_rotating_cuckoo_contains_batch(f, ptrs, lens, n, 1, got), TF_OK);
        for (size_t i = 0; i < n; ++i) assert_int_equal(got[i], 1);
    }
    print_message(
        "# %u slot(s) per bucket, %u ways: %llu tables, load %.3f, %llu absent probes, %llu false positives\n", spb,
        ways, (unsigned long long)s.tables, s.load, (unsigned long long)probes, (unsigned long long)fp);
    tf_rotating_cuckoo_free(f);
    return fp;
}

static void test_no_false_positives_default_layout(void **state) {
    (void)state;
    const uint64_t probes = CK_SANITIZED ? 1000000 : 100000000;
    const clock_t t0 = clock();
    /* four tables of 2^14 .. 2^17 slots, each filled to 0.92 */
    assert_int_equal(probe_full_filter(4, 2, 16384, 15073 + 30146 + 60293 + 100000, probes), 0);
    print_message("# %.1f s\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
}

static void test_no_false_positives_every_layout(void **state) {
    (void)state;
    const uint64_t probes = CK_SANITIZED ? 200000 : 5000000;
    static const uint32_t spbs[] = {1, 2, 4, 8};
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i) assert_int_equal(probe_full_filter(spbs[i], ways, 4096, 30000, probes), 0);
}

TU_MAIN(test_no_false_positives_default_layout, test_no_false_positives_every_layout)
