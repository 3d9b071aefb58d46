/* The wire tests both Bloom filters' suites run, each over its own filter
 * (a bu_wire, the test's cmocka state; age_wire.c and time_wire.c list
 * them with BU_WIRE_TESTS): the serialize contract, cut, flipped, hostile,
 * foreign, random and NULL blobs. */
#include <stdlib.h>

#include "bloom_util.h"

/* The test's filter, made by one of its suite's makers. */
static void *made(void *(*make)(void)) {
    void *f = make();
    assert_non_null(f);
    return f;
}

/* Runs `check` (tu_check_truncations, tu_check_bit_flips...) on the blob
 * of the suite's filled or small filter; the small one's blob is short
 * (each of its flips is a deserialize). */
enum which { FILLED, SMALL };
static void check_blob_of(const bu_wire *w, enum which which, tu_blob_check_fn check) {
    void *f = made(which == SMALL ? w->make.small : w->make.filled);
    size_t n;
    unsigned char *blob = tu_snapshot(f, w->filter->st->serialize, &n);
    if (which == SMALL) assert_true(n < w->make.small_max);
    check(blob, n, w->try_blob);
    free(blob);
    w->filter->st->free(f);
}

void bu_test_serialize_buffer_too_small(void **state) {
    const bu_wire *w = *state;
    void *f = made(w->make.tiny);
    tu_check_serialize_contract(f, w->filter->st);
    w->filter->st->free(f);
}

/* Every proper prefix, a byte too many, a cut payload: refused. */
void bu_test_deserialize_truncated(void **state) { check_blob_of(*state, FILLED, tu_check_truncations); }

/* Every single-bit flip is caught, with the status its field calls for. */
void bu_test_deserialize_bit_flips(void **state) { check_blob_of(*state, SMALL, tu_check_bit_flips); }

/* Every payload bit flipped with the checksum fixed: either a clean error
 * or a filter that works (a flipped bit in a slice is a valid filter). */
void bu_test_deserialize_bit_flips_fixed_checksum(void **state) {
    check_blob_of(*state, SMALL, tu_check_payload_flips);
}

/* Blobs with a valid checksum but fields that break the invariants: those
 * every payload of kinds 2 and 3 refuses, and the filter's own. */
void bu_test_deserialize_hostile_fields(void **state) {
    const bu_wire *w = *state;
    void *f = made(w->make.small);
    size_t n;
    unsigned char *good = tu_snapshot(f, w->filter->st->serialize, &n);
    blob_view v = bu_decode(good, n);
    bu_check_slice_payload_cases(&v, good, n, w->try_blob);
    w->check_own_cases(&v, good, n);
    free(v.s);
    free(good);
    w->filter->st->free(f);
}

/* The other Bloom filter's blob and a recency sketch's are not this
 * filter's, even with the kind edited (the payload is checked on its own);
 * random bytes and random payloads behind a valid envelope are refused;
 * so are NULL blobs and a NULL `out`. */
void bu_test_deserialize_wrong_kind_random_and_null(void **state) {
    const bu_wire *w = *state;
    void *other = made(w->foreign.other_small);
    tu_check_foreign_blob(w->foreign.other, other, w->kind, w->foreign.other_edited, w->try_blob);
    w->foreign.other->free(other);
    tf_recency_sketch *rs = NULL;
    OK(tf_recency_sketch_new(16, 2, 1, 0, &rs));
    tu_check_foreign_blob(&tu_recency_sketch, rs, w->kind, w->foreign.sketch_edited, w->try_blob);
    tf_recency_sketch_free(rs);
    tu_check_random_blobs(w->kind, 0, w->random.seed, w->random.max_len, bu_plant_header, &w->random.header,
                          w->try_blob);
    tu_check_deserialize_nulls(w->filter->st);
}
