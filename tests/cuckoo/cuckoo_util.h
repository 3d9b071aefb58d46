/* Helpers of the rotating cuckoo filter's suites: options, keys, an exact
 * set of key ids (the reference), blob loading. */
#ifndef TF_TESTS_CUCKOO_UTIL_H
#define TF_TESTS_CUCKOO_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "test_util.h"

/* The key of id `id` (tu_make_key with the suite's tag). */
tu_key ck_key(uint64_t id);

/* Options with `slots` first-table slots, `spb` slots per bucket, `ways`
 * (2 or 3) and a memory cap of `max_memory` bytes (0: 1 GiB). */
tf_rotating_cuckoo_options ck_options(uint64_t slots, uint32_t spb, unsigned ways, uint64_t max_memory);
/* tf_rotating_cuckoo_new, asserted to succeed. */
tf_rotating_cuckoo *ck_new(const tf_rotating_cuckoo_options *o);

int ck_contains(const tf_rotating_cuckoo *f, uint64_t id, uint64_t now);
int ck_add_if_absent(tf_rotating_cuckoo *f, uint64_t id, uint64_t now);
void ck_add(tf_rotating_cuckoo *f, uint64_t id, uint64_t now);
int ck_remove(tf_rotating_cuckoo *f, uint64_t id, uint64_t now);
tf_rotating_cuckoo_stats ck_stats(const tf_rotating_cuckoo *f, uint64_t now);

/* An exact set of ids (open addressing; ids must not be UINT64_MAX). */
typedef struct {
    uint64_t *slots;
    size_t cap, n;
} ck_set;
void ck_set_init(ck_set *s);
void ck_set_free(ck_set *s);
int ck_set_has(const ck_set *s, uint64_t id);
/* 1 when added, 0 when already there */
int ck_set_add(ck_set *s, uint64_t id);
/* 1 when removed */
int ck_set_remove(ck_set *s, uint64_t id);

/* Deserializes a blob and frees what it made (a tu_try_blob_fn). */
tf_status ck_try_blob(const unsigned char *blob, size_t len);

#endif
