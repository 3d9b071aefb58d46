/* Rotating cuckoo filter: forgetting by time with explicit `now`. A key
 * added at t is present until at least t + ttl (no memory pressure here),
 * a clock going backwards is clamped, a table dropped for age stays
 * dropped through a round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cuckoo_util.h"

static void test_one_table_expires(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(1024, 4, 2, 0);
    o.ttl = 100;
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 100; ++i) assert_int_equal(ck_add_if_absent(f, i, 10), 0);
    for (uint64_t i = 0; i < 100; ++i) assert_int_equal(ck_contains(f, i, 110), 1); /* t + ttl */
    for (uint64_t i = 0; i < 100; ++i) assert_int_equal(ck_contains(f, i, 111), 0); /* its table is older */
    tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
    assert_int_equal(tf_rotating_cuckoo_get_table(f, 0, 111, &t), TF_OK);
    assert_int_equal(t.expired, 1);
    assert_int_equal(t.last, 10);
    assert_int_equal(ck_stats(f, 111).live_tables, 0);
    /* the next modifying call drops it, counted */
    assert_int_equal(ck_add_if_absent(f, 1000, 200), 0);
    tf_rotating_cuckoo_stats s = ck_stats(f, 200);
    assert_int_equal(s.forgotten_age, 100);
    assert_int_equal(s.items, 1);
    /* not resurrected by a round trip, whatever `now` asks later */
    tf_rotating_cuckoo *copy = tu_copy(&tu_rotating_cuckoo, f);
    for (uint64_t i = 0; i < 100; ++i) {
        assert_int_equal(ck_contains(copy, i, 200), 0);
        assert_int_equal(ck_contains(copy, i, 20), 0);
    }
    assert_int_equal(ck_contains(copy, 1000, 20), 1);
    tf_rotating_cuckoo_free(copy);
    tf_rotating_cuckoo_free(f);
}

static void test_guarantee_against_exact_times(void **state) {
    (void)state;
    /* keys arrive at a steady rate with small tables: many rotations; at
     * every check, every key added within the ttl is present and every
     * key found was added */
    for (unsigned ways = 2; ways <= 3; ++ways) {
        tf_rotating_cuckoo_options o = ck_options(64, 4, ways, 0);
        o.ttl = 500;
        tf_rotating_cuckoo *f = ck_new(&o);
        enum { N = 40000 };
        static uint64_t added_at[N];
        uint64_t now = 1;
        for (uint64_t i = 0; i < N; ++i) {
            now = 1 + i / 8;
            assert_int_equal(ck_add_if_absent(f, i, now), 0);
            added_at[i] = now;
            if (i % 5000 == 4999) {
                for (uint64_t j = 0; j <= i; ++j) {
                    const int p = ck_contains(f, j, now);
                    if (added_at[j] + o.ttl >= now) assert_int_equal(p, 1);
                }
                for (uint64_t j = N; j < N + 2000; ++j) assert_int_equal(ck_contains(f, j, now), 0);
            }
        }
        const tf_rotating_cuckoo_stats s = ck_stats(f, now);
        assert_true(s.forgotten_age > 0);
        assert_int_equal(s.forgotten_memory, 0);
        /* everything added is either still held or forgotten for age */
        assert_int_equal(s.items + s.forgotten_age, N);
        /* sized from the rate: 8 keys per unit, 4000 per ttl, about 1000
         * per table at the occupancy 0.92: the tables grew from 64 slots */
        tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
        assert_int_equal(tf_rotating_cuckoo_get_table(f, 0, now, &t), TF_OK);
        assert_true(t.slots >= 512 && t.slots <= 4096);
        tf_rotating_cuckoo_free(f);
    }
}

static void test_clock_backwards(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(256, 4, 2, 0);
    o.ttl = 100;
    tf_rotating_cuckoo *f = ck_new(&o);
    assert_int_equal(ck_add_if_absent(f, 1, 1000), 0);
    /* times before the clock are clamped to 1000 */
    assert_int_equal(ck_add_if_absent(f, 2, 5), 0);
    assert_int_equal(ck_contains(f, 1, 5), 1);
    assert_int_equal(ck_contains(f, 2, 1), 1);
    /* key 2 counts as added at 1000: present until 1100 */
    assert_int_equal(ck_contains(f, 2, 1100), 1);
    assert_int_equal(ck_contains(f, 2, 1101), 0);
    /* a clock jumping back after the drop does not bring keys back */
    assert_int_equal(ck_add_if_absent(f, 3, 5000), 0);
    assert_int_equal(ck_contains(f, 1, 50), 0);
    assert_int_equal(ck_contains(f, 2, 50), 0);
    assert_int_equal(ck_contains(f, 3, 50), 1);
    assert_int_equal(ck_remove(f, 3, 10), 1);
    assert_int_equal(ck_contains(f, 3, 5000), 0);
    assert_int_equal(ck_stats(f, 1).forgotten_age, 2);
    tf_rotating_cuckoo_free(f);
}

static void test_add_refresh_extends_life(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(256, 4, 2, 0);
    o.ttl = 100;
    tf_rotating_cuckoo *f = ck_new(&o);
    ck_add(f, 7, 10);
    ck_add(f, 7, 90); /* refreshes its table */
    assert_int_equal(ck_contains(f, 7, 190), 1);
    assert_int_equal(ck_contains(f, 7, 191), 0);
    /* add_if_absent does not refresh */
    assert_int_equal(ck_add_if_absent(f, 8, 200), 0);
    assert_int_equal(ck_add_if_absent(f, 8, 290), 1);
    assert_int_equal(ck_contains(f, 8, 300), 1);
    assert_int_equal(ck_contains(f, 8, 301), 0);
    tf_rotating_cuckoo_free(f);
}

TU_MAIN(test_one_table_expires, test_guarantee_against_exact_times, test_clock_backwards, test_add_refresh_extends_life)
