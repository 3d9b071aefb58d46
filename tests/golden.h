/* The operations behind the golden blobs in tests/data. The C suite rebuilds
 * each sketch from these operations and compares its serialization with the
 * committed blob byte for byte; tests/make_golden.c writes the blobs and the
 * ".expected" answer files that every binding's suite checks too.
 *
 * Changing anything here changes the golden files: that is a format or hash
 * change, which needs a new format version (see README "Wire format"). */
#ifndef TF_TESTS_GOLDEN_H
#define TF_TESTS_GOLDEN_H

#include <stdio.h>
#include <string.h>

#include "temporalfilters.h"

#define GOLDEN_RS_KEYS 250     /* keys "key-0" .. "key-249" are queried */
#define GOLDEN_RS_INSERTED 200 /* of which "key-0" .. "key-199" are updated */

/* The binary key (with NUL bytes) that is also updated. */
static const unsigned char golden_binary_key[] = {0x00, 'b', 'i', 'n', 0x00, 0xff, 0x7f};

static inline size_t golden_key(unsigned i, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "key-%u", i);
    return n < 0 ? 0 : (size_t)n;
}

/* Builds one golden recency sketch: `flags` 0 gives recency_sketch_v1.tfb,
 * TF_RECENCY_SKETCH_BLOCKED | TF_RECENCY_SKETCH_CONCURRENT gives
 * recency_sketch_blocked_v1.tfb. Returns NULL on any failure. */
static inline tf_recency_sketch *golden_recency_sketch(uint32_t flags) {
    tf_recency_sketch *s = NULL;
    const uint64_t width = (flags & TF_RECENCY_SKETCH_BLOCKED) ? 96 : 256;
    if (tf_recency_sketch_new(width, 3, 42, flags, &s) != TF_OK) return NULL;
    char key[32];
    for (unsigned i = 0; i < GOLDEN_RS_INSERTED; ++i) {
        size_t n = golden_key(i, key, sizeof key);
        if (tf_recency_sketch_update(s, key, n, 1000 + 7 * (uint64_t)i) != TF_OK) goto fail;
    }
    /* out of order: some keys again, some with older times (no effect) */
    for (unsigned i = 0; i < GOLDEN_RS_INSERTED; i += 3) {
        size_t n = golden_key(i, key, sizeof key);
        uint64_t t = (i % 2) ? 5000 + i : 500 + i;
        if (tf_recency_sketch_update(s, key, n, t) != TF_OK) goto fail;
    }
    if (tf_recency_sketch_update(s, golden_binary_key, sizeof golden_binary_key, 123456789) != TF_OK) goto fail;
    return s;
fail:
    tf_recency_sketch_free(s);
    return NULL;
}

#endif
