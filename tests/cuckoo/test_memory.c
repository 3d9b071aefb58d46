/* Rotating cuckoo filter: a failed call leaves the filter as it was.
 * Allocation failures are provoked through the library's internal test
 * hook (alloc_hook.cpp): a rotation that cannot allocate its new table
 * returns TF_ERR_OUT_OF_MEMORY with no table dropped (neither those older
 * than the ttl nor those the memory cap would push out), no counter and no
 * clock changed, byte for byte; the same call then succeeds once memory is
 * back. A failed batch processed exactly the keys before the one that
 * failed; a failed clear and a failed creation change nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cuckoo_util.h"

/* alloc_hook.cpp: while n >= 0, n more table allocations succeed and every
 * later one fails; -1 turns it off. */
void cuckoo_fail_allocations_after(long n);

static tf_status try_add_if_absent(tf_rotating_cuckoo *f, uint64_t id, uint64_t now, int *was) {
    tu_key k = ck_key(id);
    return tf_rotating_cuckoo_add_if_absent(f, k.b, sizeof k.b, now, was);
}

static tf_status try_add(tf_rotating_cuckoo *f, uint64_t id, uint64_t now) {
    tu_key k = ck_key(id);
    return tf_rotating_cuckoo_add(f, k.b, sizeof k.b, now);
}

/* Runs a stream of keys through `f` with every table allocation failing
 * first: each call that fails must leave the blob as it was, and the key
 * absent; the same call then succeeds. Returns the failures seen. */
static unsigned stream_with_failures(tf_rotating_cuckoo *f, uint64_t n, uint64_t per_tick, int use_add) {
    unsigned failures = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t now = 1 + i / per_tick;
        size_t len = 0;
        unsigned char *before = tu_snapshot(f, tu_rotating_cuckoo.serialize, &len);
        const tf_rotating_cuckoo_stats s0 = ck_stats(f, now);
        cuckoo_fail_allocations_after(0);
        int was = -1;
        tf_status st = use_add ? try_add(f, i, now) : try_add_if_absent(f, i, now, &was);
        cuckoo_fail_allocations_after(-1);
        if (st != TF_OK) {
            assert_int_equal(st, TF_ERR_OUT_OF_MEMORY);
            assert_int_equal(was, -1);
            tu_assert_blob(f, tu_rotating_cuckoo.serialize, before, len);
            const tf_rotating_cuckoo_stats s1 = ck_stats(f, now);
            assert_int_equal(s1.tables, s0.tables);
            assert_int_equal(s1.forgotten_age, s0.forgotten_age);
            assert_int_equal(s1.forgotten_memory, s0.forgotten_memory);
            assert_int_equal(ck_contains(f, i, now), 0);
            failures++;
            if (use_add) {
                assert_int_equal(try_add(f, i, now), TF_OK);
            } else {
                assert_int_equal(try_add_if_absent(f, i, now, &was), TF_OK);
                assert_int_equal(was, 0);
            }
        } else if (!use_add) {
            assert_int_equal(was, 0);
        }
        assert_int_equal(ck_contains(f, i, now), 1);
        free(before);
    }
    return failures;
}

/* Tables older than the ttl are due to be dropped when a fill rotation
 * fails: they stay, counted nowhere, and go with the retried call. */
static void test_failed_rotation_keeps_expired_tables(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways) {
        tf_rotating_cuckoo_options o = ck_options(64, 4, ways, 0);
        o.ttl = 50;
        tf_rotating_cuckoo *f = ck_new(&o);
        /* slow enough that old tables expire between rotations */
        const unsigned failures = stream_with_failures(f, 6000, 4, 0);
        const tf_rotating_cuckoo_stats s = ck_stats(f, 1 + 6000 / 4);
        assert_true(failures > 10);
        assert_int_equal(s.fill_rotations + s.kick_rotations, failures);
        assert_true(s.forgotten_age > 0);
        assert_int_equal(s.forgotten_memory, 0);
        tf_rotating_cuckoo_free(f);
    }
}

/* At the memory cap a rotation drops the oldest tables for room: a failed
 * one drops nothing. add (the refreshing call) as well as add_if_absent. */
static void test_failed_rotation_keeps_tables_at_the_cap(void **state) {
    (void)state;
    for (int use_add = 0; use_add <= 1; ++use_add) {
        tf_rotating_cuckoo_options o = ck_options(256, 4, 2, 0);
        tf_rotating_cuckoo *probe = ck_new(&o);
        size_t fixed = 0;
        assert_int_equal(tf_rotating_cuckoo_memory(probe, &fixed), TF_OK);
        tf_rotating_cuckoo_free(probe);
        o.max_memory = fixed + 4 * (256 * 8 + 64); /* about four first-size tables */
        tf_rotating_cuckoo *f = ck_new(&o);
        const unsigned failures = stream_with_failures(f, 5000, 1000, use_add);
        const tf_rotating_cuckoo_stats s = ck_stats(f, 10);
        assert_true(failures > 10);
        assert_int_equal(s.fill_rotations + s.kick_rotations, failures);
        assert_true(s.forgotten_memory > 0);
        tf_rotating_cuckoo_free(f);
    }
}

/* Kick chains failing (one slot per bucket, a chain of one kick, no fill
 * limit before 1.0): the undone chain and the failed table both leave the
 * filter as it was. */
static void test_failed_kick_rotation(void **state) {
    (void)state;
    for (unsigned ways = 2; ways <= 3; ++ways) {
        tf_rotating_cuckoo_options o = ck_options(128, 1, ways, 0);
        o.max_kicks = 1;
        o.max_occupancy = 1.0;
        o.max_tables = 4;
        tf_rotating_cuckoo *f = ck_new(&o);
        const unsigned failures = stream_with_failures(f, 3000, 100, 0);
        const tf_rotating_cuckoo_stats s = ck_stats(f, 100);
        assert_true(s.kick_rotations > 0);
        assert_int_equal(s.fill_rotations + s.kick_rotations, failures);
        tf_rotating_cuckoo_free(f);
    }
}

/* A batch that fails at key i processed keys 0 .. i-1 exactly as single
 * calls would, wrote their answers and nothing after. */
static void test_failed_batch(void **state) {
    (void)state;
    enum { N = 400 };
    tf_rotating_cuckoo_options o = ck_options(64, 4, 2, 0);
    tf_rotating_cuckoo *f = ck_new(&o), *ref = ck_new(&o);
    tu_key keys[N];
    const void *ptrs[N];
    size_t lens[N];
    int was[N];
    for (size_t i = 0; i < N; ++i) {
        keys[i] = ck_key(i % 300); /* repeats within the batch */
        ptrs[i] = keys[i].b;
        lens[i] = sizeof keys[i].b;
        was[i] = -1;
    }
    cuckoo_fail_allocations_after(1); /* the second rotation fails */
    assert_int_equal(tf_rotating_cuckoo_add_if_absent_batch(f, ptrs, lens, N, 5, was), TF_ERR_OUT_OF_MEMORY);
    cuckoo_fail_allocations_after(-1);
    assert_non_null(strstr(tf_last_error_message(), "key "));
    size_t done = 0;
    while (done < N && was[done] != -1) done++;
    assert_true(done > 0 && done < N);
    for (size_t i = done; i < N; ++i) assert_int_equal(was[i], -1);
    for (size_t i = 0; i < done; ++i) assert_int_equal(ck_add_if_absent(ref, i % 300, 5), was[i]);
    assert_true(tu_same_blob(f, ref, tu_rotating_cuckoo.serialize));
    assert_int_equal(ck_stats(f, 5).fill_rotations, 1);
    tf_rotating_cuckoo_free(ref);
    tf_rotating_cuckoo_free(f);
}

/* clear allocates the first table's size anew when the newest table has
 * another size; failing, it changes nothing. Creation fails cleanly. */
static void test_failed_clear_and_new(void **state) {
    (void)state;
    tf_rotating_cuckoo_options o = ck_options(64, 4, 2, 0);
    tf_rotating_cuckoo *f = ck_new(&o);
    for (uint64_t i = 0; i < 2000; ++i) assert_int_equal(ck_add_if_absent(f, i, 1), 0);
    tf_rotating_cuckoo_table t = TF_ROTATING_CUCKOO_TABLE_INIT;
    assert_int_equal(tf_rotating_cuckoo_get_table(f, 0, 1, &t), TF_OK);
    assert_true(t.slots > 64); /* no ttl: tables grow */
    size_t len = 0;
    unsigned char *before = tu_snapshot(f, tu_rotating_cuckoo.serialize, &len);
    cuckoo_fail_allocations_after(0);
    TU_REFUSED_UNCHANGED(tf_rotating_cuckoo_clear(f), TF_ERR_OUT_OF_MEMORY, f, tu_rotating_cuckoo.serialize, before,
                         len);
    cuckoo_fail_allocations_after(-1);
    assert_int_equal(tf_rotating_cuckoo_clear(f), TF_OK);
    assert_int_equal(ck_stats(f, 1).items, 0);
    assert_int_equal(ck_contains(f, 1, 1), 0);
    free(before);
    tf_rotating_cuckoo_free(f);

    tf_rotating_cuckoo *g = (tf_rotating_cuckoo *)&o; /* a sentinel: must stay */
    cuckoo_fail_allocations_after(0);
    assert_int_equal(tf_rotating_cuckoo_new(&o, &g), TF_ERR_OUT_OF_MEMORY);
    cuckoo_fail_allocations_after(-1);
    assert_ptr_equal(g, (tf_rotating_cuckoo *)&o);
}

TU_MAIN(test_failed_rotation_keeps_expired_tables, test_failed_rotation_keeps_tables_at_the_cap,
        test_failed_kick_rotation, test_failed_batch, test_failed_clear_and_new)
