/* Rotating cuckoo filter: the operations, info and stats, batches, remove
 * then re-add, clear. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cuckoo_util.h"

static tf_status get_stats(const void *f, void *out) { return tf_rotating_cuckoo_get_stats(f, 1, out); }
static tf_status get_table(const void *f, void *out) { return tf_rotating_cuckoo_get_table(f, 0, 1, out); }

static void test_defaults_and_info(void **state) {
    (void)state;
    tf_rotating_cuckoo *f = ck_new(NULL);
    tf_rotating_cuckoo_info info = TF_ROTATING_CUCKOO_INFO_INIT;
    assert_int_equal(tf_rotating_cuckoo_get_info(f, &info), TF_OK);
    assert_int_equal(info.table_slots, 16384);
    assert_int_equal(info.max_memory, (uint64_t)64 << 20);
    assert_int_equal(info.ttl, 0);
    assert_true(info.max_occupancy == 0.92);
    assert_int_equal(info.slots_per_bucket, 4);
    assert_int_equal(info.max_kicks, 500);
    assert_int_equal(info.max_tables, 64);
    assert_int_equal(info.seed, 0);
    assert_int_equal(info.flags, 0);
    assert_int_equal(info.ways, 2);
    tu_check_versioned_out(f, sizeof info, tu_rotating_cuckoo.get_info, NULL);
    tu_check_versioned_out(f, sizeof(tf_rotating_cuckoo_stats), get_stats, NULL);
    tu_check_versioned_out(f, sizeof(tf_rotating_cuckoo_table), get_table, NULL);
    const tf_rotating_cuckoo_stats s = ck_stats(f, 1);
    assert_int_equal(s.tables, 1);
    assert_int_equal(s.live_tables, 1);
    assert_int_equal(s.slots, 16384);
    assert_int_equal(s.items, 0);
    size_t mem = 0;
    assert_int_equal(tf_rotating_cuckoo_memory(f, &mem), TF_OK);
    assert_int_equal(s.memory, mem);
    assert_true(mem > 16384 * 8 && mem < 16384 * 8 + 128 * 1024);
    tf_rotating_cuckoo_free(f);
    tf_rotating_cuckoo_free(NULL);

    /* three ways: the default occupancy follows */
    tf_rotating_cuckoo_options o = ck_options(1024, 8, 3, 0);
    f = ck_new(&o);
    assert_int_equal(tf_rotating_cuckoo_get_info(f, &info), TF_OK);
    assert_int_equal(info.ways, 3);
    assert_int_equal(info.flags, TF_ROTATING_CUCKOO_THREE_WAY);
    assert_true(info.max_occupancy == 0.98);
    tf_rotating_cuckoo_free(f);
}

static void test_add_contains_remove(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(1024, 4, 2, 0);
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 500; ++i) assert_int_equal(ck_add_if_absent(f, i, 10), 0);
    for (uint64_t i = 0; i < 500; ++i) assert_int_equal(ck_add_if_absent(f, i, 10), 1);
    for (uint64_t i = 0; i < 1000; ++i) assert_int_equal(ck_contains(f, i, 10), i < 500);
    tf_rotating_cuckoo_stats s = ck_stats(f, 10);
    assert_int_equal(s.items, 500);
    assert_int_equal(s.inserts, 500);
    /* remove then re-add */
    for (uint64_t i = 0; i < 500; i += 2) assert_int_equal(ck_remove(f, i, 11), 1);
    for (uint64_t i = 0; i < 500; i += 2) assert_int_equal(ck_remove(f, i, 11), 0); /* no-op that says so */
    assert_int_equal(ck_remove(f, 777777, 11), 0);
    for (uint64_t i = 0; i < 500; ++i) assert_int_equal(ck_contains(f, i, 11), i % 2);
    s = ck_stats(f, 11);
    assert_int_equal(s.items, 250);
    assert_int_equal(s.removes, 250);
    for (uint64_t i = 0; i < 500; i += 2) assert_int_equal(ck_add_if_absent(f, i, 12), 0);
    for (uint64_t i = 0; i < 500; ++i) assert_int_equal(ck_contains(f, i, 12), 1);
    /* remove with a NULL result */
    tu_key k = ck_key(0);
    assert_int_equal(tf_rotating_cuckoo_remove(f, k.b, sizeof k.b, 12, NULL), TF_OK);
    assert_int_equal(ck_contains(f, 0, 12), 0);
    /* the empty key is a key */
    int was = -1;
    assert_int_equal(tf_rotating_cuckoo_add_if_absent(f, NULL, 0, 12, &was), TF_OK);
    assert_int_equal(was, 0);
    assert_int_equal(tf_rotating_cuckoo_contains(f, "", 0, 12, &was), TF_OK);
    assert_int_equal(was, 1);
    tf_rotating_cuckoo_free(f);
}

static void test_add_refreshes(void **state) {
    (void)state;
    /* add of a key in the newest table stores nothing; after a rotation it
     * stores a copy in the new table, so one remove leaves it present */
    tf_rotating_cuckoo_options o = ck_options(64, 4, 2, 0);
    o.max_occupancy = 0.5;
    tf_rotating_cuckoo *f = ck_new(&o);
    ck_add(f, 1, 5);
    ck_add(f, 1, 6);
    assert_int_equal(ck_stats(f, 6).inserts, 1);
    for (uint64_t i = 100; i < 140; ++i) ck_add(f, i, 7); /* rotates: 32 per table */
    tf_rotating_cuckoo_stats s = ck_stats(f, 7);
    assert_true(s.tables >= 2);
    assert_true(s.fill_rotations >= 1);
    ck_add(f, 1, 8); /* a copy in the newest table */
    assert_int_equal(ck_remove(f, 1, 9), 1);
    assert_int_equal(ck_contains(f, 1, 9), 1); /* the older copy */
    assert_int_equal(ck_remove(f, 1, 9), 1);
    assert_int_equal(ck_contains(f, 1, 9), 0);
    assert_int_equal(ck_remove(f, 1, 9), 0);
    /* add_if_absent does not refresh: a hit writes nothing */
    size_t len;
    unsigned char *before = tu_snapshot(f, tu_rotating_cuckoo.serialize, &len);
    assert_int_equal(ck_add_if_absent(f, 100, 9), 1);
    tu_assert_blob(f, tu_rotating_cuckoo.serialize, before, len);
    free(before);
    tf_rotating_cuckoo_free(f);
}

static void test_tables_and_stats(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(256, 4, 2, 0);
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 5000; ++i) assert_int_equal(ck_add_if_absent(f, i, 1 + i), 0);
    tf_rotating_cuckoo_stats s = ck_stats(f, 6000);
    assert_true(s.tables > 1);
    assert_int_equal(s.items, 5000);
    assert_int_equal(s.forgotten_memory, 0);
    assert_int_equal(s.forgotten_age, 0);
    uint64_t items = 0, slots = 0, serial = 0;
    for (uint64_t i = 0; i < s.tables; ++i) {
        tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
        assert_int_equal(tf_rotating_cuckoo_get_table(f, i, 6000, &t), TF_OK);
        items += t.items;
        slots += t.slots;
        assert_true(t.load <= 0.92 + 1e-9);
        assert_true(t.slots >= 256 && (t.slots & (t.slots - 1)) == 0);
        if (i > 0) assert_int_equal(t.serial + 1, serial); /* newest first */
        serial = t.serial;
        assert_int_equal(t.expired, 0);
    }
    assert_int_equal(items, 5000);
    assert_int_equal(slots, s.slots);
    assert_true(s.load > 0.3 && s.load <= 0.92 + 1e-9);
    /* growth: no ttl, so each table doubles */
    tf_rotating_cuckoo_table t0 = TF_ROTATING_CUCKOO_TABLE_INIT, t1 = TF_ROTATING_CUCKOO_TABLE_INIT;
    assert_int_equal(tf_rotating_cuckoo_get_table(f, 0, 6000, &t0), TF_OK);
    assert_int_equal(tf_rotating_cuckoo_get_table(f, 1, 6000, &t1), TF_OK);
    assert_int_equal(t0.slots, 2 * t1.slots);
    TU_REFUSED(tf_rotating_cuckoo_get_table(f, s.tables, 6000, &t0), TF_ERR_INVALID_ARGUMENT);
    tf_rotating_cuckoo_free(f);
}

static void test_batches_match_singles(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways) {
        tf_rotating_cuckoo_options o = ck_options(512, 4, ways, 0);
        tf_rotating_cuckoo *a = ck_new(&o), *b = ck_new(&o);
        enum { N = 3000 };
        static tu_key keys[N];
        static const void *ptrs[N];
        static size_t lens[N];
        static int got[N];
        tu_rng r = {ways};
        for (size_t i = 0; i < N; ++i) {
            keys[i] = ck_key(tu_below(&r, 2000)); /* repeats within the batch */
            ptrs[i] = keys[i].b;
            lens[i] = sizeof keys[i].b;
        }
        assert_int_equal(tf_rotating_cuckoo_add_if_absent_batch(a, ptrs, lens, N, 100, got), TF_OK);
        for (size_t i = 0; i < N; ++i) {
            int was = -1;
            assert_int_equal(tf_rotating_cuckoo_add_if_absent(b, ptrs[i], lens[i], 100, &was), TF_OK);
            assert_int_equal(got[i], was);
        }
        assert_true(tu_same_blob(a, b, tu_rotating_cuckoo.serialize));
        for (size_t i = 0; i < N; ++i) keys[i] = ck_key(tu_below(&r, 4000));
        assert_int_equal(tf_rotating_cuckoo_contains_batch(a, ptrs, lens, N, 100, got), TF_OK);
        for (size_t i = 0; i < N; ++i) {
            int p = -1;
            assert_int_equal(tf_rotating_cuckoo_contains(b, ptrs[i], lens[i], 100, &p), TF_OK);
            assert_int_equal(got[i], p);
        }
        /* count 0 is a no-op, the arrays may be NULL */
        assert_int_equal(tf_rotating_cuckoo_contains_batch(a, NULL, NULL, 0, 100, NULL), TF_OK);
        assert_int_equal(tf_rotating_cuckoo_add_if_absent_batch(a, NULL, NULL, 0, 100, NULL), TF_OK);
        tf_rotating_cuckoo_free(a);
        tf_rotating_cuckoo_free(b);
    }
}

static void test_clear(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(128, 2, 2, 0);
    tf_rotating_cuckoo *f = ck_new(&o), *fresh = ck_new(&o);
    for (uint64_t i = 0; i < 1000; ++i) ck_add(f, i, 50);
    assert_true(ck_stats(f, 50).tables > 1);
    assert_int_equal(tf_rotating_cuckoo_clear(f), TF_OK);
    tf_rotating_cuckoo_stats s = ck_stats(f, 50);
    assert_int_equal(s.tables, 1);
    assert_int_equal(s.items, 0);
    assert_int_equal(s.inserts, 0);
    assert_int_equal(s.slots, 128);
    size_t m1 = 0, m2 = 0;
    assert_int_equal(tf_rotating_cuckoo_memory(f, &m1), TF_OK);
    assert_int_equal(tf_rotating_cuckoo_memory(fresh, &m2), TF_OK);
    assert_int_equal(m1, m2);
    for (uint64_t i = 0; i < 1000; ++i) assert_int_equal(ck_contains(f, i, 50), 0);
    for (uint64_t i = 0; i < 50; ++i) assert_int_equal(ck_add_if_absent(f, i, 60), 0);
    tf_rotating_cuckoo_free(f);
    tf_rotating_cuckoo_free(fresh);
}

TU_MAIN(test_defaults_and_info, test_add_contains_remove, test_add_refreshes, test_tables_and_stats,
        test_batches_match_singles, test_clear)
