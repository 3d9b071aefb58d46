/* Rotating cuckoo filter against an exact set: every layout (1, 2, 4, 8
 * slots per bucket, two and three ways) and every first-table size from
 * two buckets to 2^12 slots; every inserted key found while its table
 * lives, no key found that was never added; kick failures lose nothing;
 * the memory cap's losses are counted exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cuckoo_util.h"

static const uint32_t spbs[] = {1, 2, 4, 8};

/* n distinct keys into a filter that never forgets (a cap far above what
 * they need): every add_if_absent says absent (a 1 would be a false
 * positive), every key is found, n absent keys are not; then half are
 * removed and found absent, and added again. */
static void check_never_forgets(const tf_rotating_cuckoo_options *o, uint64_t n) {
    tf_rotating_cuckoo *f = ck_new(o);
    for (uint64_t i = 0; i < n; ++i) assert_int_equal(ck_add_if_absent(f, i, 1 + i / 16), 0);
    const uint64_t now = 1 + n / 16;
    for (uint64_t i = 0; i < 2 * n; ++i) assert_int_equal(ck_contains(f, i, now), i < n);
    tf_rotating_cuckoo_stats s = ck_stats(f, now);
    assert_int_equal(s.items, n);
    assert_int_equal(s.inserts, n);
    assert_int_equal(s.forgotten_memory, 0);
    assert_int_equal(s.forgotten_age, 0);
    for (uint64_t i = 0; i < n; i += 2) assert_int_equal(ck_remove(f, i, now), 1);
    for (uint64_t i = 0; i < n; ++i) assert_int_equal(ck_contains(f, i, now), i % 2);
    for (uint64_t i = 0; i < n; i += 2) assert_int_equal(ck_add_if_absent(f, i, now), 0);
    for (uint64_t i = 0; i < n; ++i) assert_int_equal(ck_contains(f, i, now), 1);
    s = ck_stats(f, now);
    assert_int_equal(s.items, n);
    assert_int_equal(s.forgotten_memory, 0);
    tf_rotating_cuckoo_free(f);
}

static void test_every_layout_and_size(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i)
            for (uint64_t slots = 2 * spbs[i]; slots <= 4096; slots *= 2) {
                tf_rotating_cuckoo_options o = ck_options(slots, spbs[i], ways, 0);
                o.max_tables = 1024;
                check_never_forgets(&o, 3 * slots + 5);
            }
}

/* A first table of 64 slots at occupancy 1 with chains of 1 kick: most
 * rotations come from failed chains. */
static tf_rotating_cuckoo *new_kicking(uint32_t spb, unsigned ways, uint32_t max_tables) {
    tf_rotating_cuckoo_options o = ck_options(64, spb, ways, 0);
    o.max_occupancy = 1.0;
    o.max_kicks = 1;
    o.max_tables = max_tables;
    return ck_new(&o);
}

static void test_kick_failures_lose_nothing(void **state) {
    (void)state;
    /* occupancy 1 and chains of 1 kick: most rotations come from failed
     * chains, which are undone; every key stays */
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i) {
            tf_rotating_cuckoo *f = new_kicking(spbs[i], ways, 1024);
            for (uint64_t k = 0; k < 20000; ++k) assert_int_equal(ck_add_if_absent(f, k, 5), 0);
            for (uint64_t k = 0; k < 40000; ++k) assert_int_equal(ck_contains(f, k, 5), k < 20000);
            const tf_rotating_cuckoo_stats s = ck_stats(f, 5);
            assert_true(s.kick_rotations > 0);
            assert_int_equal(s.items, 20000);
            assert_int_equal(s.forgotten_memory + s.forgotten_age, 0);
            tf_rotating_cuckoo_free(f);
        }
}

/* A ring of one table (max_tables 1) takes add_if_absent's one-table
 * path: a failed chain there starts a new table (a kick rotation, not a
 * fill rotation: occupancy 1 is never reached with chains of 1 kick), the
 * key that failed is in it, and the dropped table's keys are counted. */
static void test_one_table_kick_failures(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i) {
            tf_rotating_cuckoo *f = new_kicking(spbs[i], ways, 1);
            uint64_t rotations = 0, k = 0;
            for (; rotations < 10; ++k) {
                assert_int_equal(ck_add_if_absent(f, k, 5 + k), 0);
                const tf_rotating_cuckoo_stats s = ck_stats(f, 5 + k);
                assert_int_equal(s.tables, 1);
                assert_int_equal(s.fill_rotations, 0);
                assert_int_equal(s.items + s.forgotten_memory, k + 1);
                if (s.kick_rotations > rotations) {
                    rotations = s.kick_rotations;
                    assert_int_equal(s.items, 1); /* only the key that failed */
                    assert_int_equal(ck_contains(f, k, 5 + k), 1);
                    if (k > 0) assert_int_equal(ck_contains(f, k - 1, 5 + k), 0);
                }
                assert_int_equal(ck_add_if_absent(f, k, 5 + k), 1);
            }
            tf_rotating_cuckoo_free(f);
        }
}

static void test_random_stream_against_set(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i) {
            tf_rotating_cuckoo_options o = ck_options(128, spbs[i], ways, 0);
            tf_rotating_cuckoo *f = ck_new(&o);
            ck_set ref;
            ck_set_init(&ref);
            tu_rng r = {1000 + 10 * ways + i};
            uint64_t now = 1;
            for (unsigned step = 0; step < 60000; ++step) {
                const uint64_t id = tu_below(&r, 4000);
                /* times in and out of order: the clock is clamped, no ttl */
                now = tu_below(&r, 10) == 0 ? (now > 5 ? now - 5 : now) : now + tu_below(&r, 3);
                switch (tu_below(&r, 4)) {
                    case 0:
                    case 1:
                        assert_int_equal(ck_add_if_absent(f, id, now), !ck_set_add(&ref, id));
                        break;
                    case 2:
                        assert_int_equal(ck_remove(f, id, now), ck_set_remove(&ref, id));
                        break;
                    default:
                        assert_int_equal(ck_contains(f, id, now), ck_set_has(&ref, id));
                }
            }
            const tf_rotating_cuckoo_stats s = ck_stats(f, now);
            assert_int_equal(s.items, ref.n);
            assert_int_equal(s.forgotten_memory, 0);
            ck_set_free(&ref);
            tf_rotating_cuckoo_free(f);
        }
}

/* A stream of distinct keys through a filter capped at `cap` bytes: the
 * memory never passes the cap, every inserted key reported absent was
 * counted in forgotten_memory (and no other), and a key is lost only once
 * more recent keys filled the cap. Returns the fraction of the last
 * `window` keys forgotten. */
static double stream_under_cap(uint32_t spb, unsigned ways, uint64_t slots, uint64_t cap, uint64_t n, uint64_t window) {
    tf_rotating_cuckoo_options o = ck_options(slots, spb, ways, cap);
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < n; ++i) {
        assert_int_equal(ck_add_if_absent(f, i, 1 + i), 0);
        if (i % 997 == 0) {
            size_t mem = 0;
            assert_int_equal(tf_rotating_cuckoo_memory(f, &mem), TF_OK);
            assert_true(mem <= cap);
        }
    }
    uint64_t absent = 0, absent_window = 0, last_absent = 0;
    for (uint64_t i = 0; i < n; ++i)
        if (!ck_contains(f, i, n)) {
            absent++;
            last_absent = i;
            if (i >= n - window) absent_window++;
        }
    const tf_rotating_cuckoo_stats s = ck_stats(f, n);
    assert_int_equal(absent, s.forgotten_memory);
    assert_int_equal(n - absent, s.items);
    /* the oldest go first: everything after the last loss is present */
    if (absent) assert_true(last_absent < n - s.items + absent);
    tf_rotating_cuckoo_free(f);
    return (double)absent_window / (double)window;
}

static void test_memory_cap_losses_counted(void **state) {
    (void)state;
    /* The README's "about 1/n at SIZE_K = 4n" is for one table holding n
     * keys in 4n slots: here a table never drops a key on its own (a
     * failed chain is undone), so keys go only with a whole table, oldest
     * first. Measured: the fraction of the most recent keys forgotten, for
     * a window of n keys and caps of 2x, 4x and 8x their fingerprints. */
    const uint64_t n = 20000;
    for (unsigned mult = 2; mult <= 8; mult *= 2) {
        const uint64_t cap = 64 * 1024 + mult * n * 8;
        const double fn = stream_under_cap(4, 2, 1024, cap, 200000, n);
        print_message("# cap %llu bytes (%ux the window's fingerprints): %.5f of the last %llu keys forgotten\n",
                      (unsigned long long)cap, mult, fn, (unsigned long long)n);
        if (mult >= 4) assert_true(fn == 0.0);
    }
    for (unsigned ways = 2; ways <= 3; ++ways)
        for (size_t i = 0; i < 4; ++i) (void)stream_under_cap(spbs[i], ways, 256, 200 * 1024, 60000, 1000);
}

TU_MAIN(test_every_layout_and_size, test_kick_failures_lose_nothing, test_one_table_kick_failures,
        test_random_stream_against_set, test_memory_cap_losses_counted)
