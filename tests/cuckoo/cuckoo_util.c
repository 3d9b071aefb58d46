#include "cuckoo_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

tu_key ck_key(uint64_t id) { return tu_make_key('C', id); }

tf_rotating_cuckoo_options ck_options(uint64_t slots, uint32_t spb, unsigned ways, uint64_t max_memory) {
    tf_rotating_cuckoo_options o = TF_ROTATING_CUCKOO_OPTIONS_INIT;
    o.table_slots = slots;
    o.slots_per_bucket = spb;
    o.flags = ways == 3 ? TF_ROTATING_CUCKOO_THREE_WAY : 0;
    o.max_memory = max_memory ? max_memory : (uint64_t)1 << 30;
    o.seed = 7;
    return o;
}

tf_rotating_cuckoo *ck_new(const tf_rotating_cuckoo_options *o) {
    tf_rotating_cuckoo *f = NULL;
    assert_int_equal(tf_rotating_cuckoo_new(o, &f), TF_OK);
    assert_non_null(f);
    return f;
}

int ck_contains(const tf_rotating_cuckoo *f, uint64_t id, uint64_t now) {
    tu_key k = ck_key(id);
    int present = -1;
    assert_int_equal(tf_rotating_cuckoo_contains(f, k.b, sizeof k.b, now, &present), TF_OK);
    return present;
}

int ck_add_if_absent(tf_rotating_cuckoo *f, uint64_t id, uint64_t now) {
    tu_key k = ck_key(id);
    int was = -1;
    assert_int_equal(tf_rotating_cuckoo_add_if_absent(f, k.b, sizeof k.b, now, &was), TF_OK);
    return was;
}

void ck_add(tf_rotating_cuckoo *f, uint64_t id, uint64_t now) {
    tu_key k = ck_key(id);
    assert_int_equal(tf_rotating_cuckoo_add(f, k.b, sizeof k.b, now), TF_OK);
}

int ck_remove(tf_rotating_cuckoo *f, uint64_t id, uint64_t now) {
    tu_key k = ck_key(id);
    int removed = -1;
    assert_int_equal(tf_rotating_cuckoo_remove(f, k.b, sizeof k.b, now, &removed), TF_OK);
    return removed;
}

tf_rotating_cuckoo_stats ck_stats(const tf_rotating_cuckoo *f, uint64_t now) {
    tf_rotating_cuckoo_stats s = TF_ROTATING_CUCKOO_STATS_INIT;
    assert_int_equal(tf_rotating_cuckoo_get_stats(f, now, &s), TF_OK);
    return s;
}

static size_t ck_slot(uint64_t id, size_t cap) {
    uint64_t h = id * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    return (size_t)(h & (cap - 1));
}

void ck_set_init(ck_set *s) {
    s->cap = 1024;
    s->n = 0;
    s->slots = malloc(s->cap * sizeof *s->slots);
    assert_non_null(s->slots);
    for (size_t i = 0; i < s->cap; ++i) s->slots[i] = UINT64_MAX;
}

void ck_set_free(ck_set *s) { free(s->slots); }

static size_t ck_find(const ck_set *s, uint64_t id) {
    size_t i = ck_slot(id, s->cap);
    while (s->slots[i] != UINT64_MAX && s->slots[i] != id) i = (i + 1) & (s->cap - 1);
    return i;
}

int ck_set_has(const ck_set *s, uint64_t id) { return s->slots[ck_find(s, id)] == id; }

int ck_set_add(ck_set *s, uint64_t id) {
    if (ck_set_has(s, id)) return 0;
    if (2 * (s->n + 1) > s->cap) {
        ck_set old = *s;
        s->cap *= 2;
        s->n = 0;
        s->slots = malloc(s->cap * sizeof *s->slots);
        assert_non_null(s->slots);
        for (size_t i = 0; i < s->cap; ++i) s->slots[i] = UINT64_MAX;
        for (size_t i = 0; i < old.cap; ++i)
            if (old.slots[i] != UINT64_MAX) ck_set_add(s, old.slots[i]);
        free(old.slots);
    }
    s->slots[ck_find(s, id)] = id;
    s->n++;
    return 1;
}

int ck_set_remove(ck_set *s, uint64_t id) {
    size_t i = ck_find(s, id);
    if (s->slots[i] != id) return 0;
    /* backward-shift deletion keeps the probe sequences whole */
    s->slots[i] = UINT64_MAX;
    s->n--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (s->cap - 1);
        if (s->slots[j] == UINT64_MAX) break;
        const uint64_t v = s->slots[j];
        s->slots[j] = UINT64_MAX;
        s->n--;
        ck_set_add(s, v);
    }
    return 1;
}

tf_status ck_try_blob(const unsigned char *blob, size_t len) { return tu_try_load(&tu_rotating_cuckoo, blob, len); }
