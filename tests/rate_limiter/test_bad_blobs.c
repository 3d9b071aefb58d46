/* Rate limiter blobs that must be refused: truncated, flipped bits, hostile
 * fields (built field by field), other kinds, random bytes and NULL. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "limiter_util.h"
#include "temporalfilters.h"
#include "test_util.h"

static void test_deserialize_truncated(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = populated(kModes[m]);
        tu_check_blob_of(r, tu_rate_limiter.serialize, tu_check_truncations, try_blob);
        tf_rate_limiter_free(r);
    }
}

static void test_deserialize_bit_flips(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(3, 100, 50, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 5));
        OK(tf_rate_limiter_set_key_limit(r, "o", 1, 2));
        (void)acq(r, "a", 10, 2);
        (void)acq(r, "o", 60, 1);
        tu_check_blob_of(r, tu_rate_limiter.serialize, tu_check_bit_flips, try_blob);
        tf_rate_limiter_free(r);
    }
}

/* A blob writer, to build blobs field by field (layout in
 * lib/rate_limiter/rate_limiter.cpp; checked against the library's own
 * output first). */
typedef struct {
    unsigned char b[4096];
    size_t n;
} bb;

static void put(bb *x, uint64_t v, int bytes) {
    assert_true(x->n + (size_t)bytes <= sizeof x->b);
    tu_put_le(x->b + x->n, v, bytes);
    x->n += (size_t)bytes;
}

static void put_bytes(bb *x, const void *p, size_t len) {
    assert_true(x->n + len <= sizeof x->b);
    memcpy(x->b + x->n, p, len);
    x->n += len;
}

/* Envelope around payload `p`: a fresh blob of exactly the right size. */
static unsigned char *wrap(const bb *p, uint32_t flags, size_t *len) {
    *len = 20 + p->n + 8;
    unsigned char *b = malloc(*len);
    memcpy(b, "TFLT", 4);
    tu_put_le(b + 4, 1, 2);
    tu_put_le(b + 6, 4, 2);
    tu_put_le(b + 8, flags, 4);
    tu_put_le(b + 12, p->n, 8);
    memcpy(b + 20, p->b, p->n);
    tu_fix_checksum(b, *len);
    return b;
}

/* Fields of a small blob; each hostile case changes some of them. */
typedef struct {
    uint32_t flags;
    uint64_t limit, window, width, max_keys, glimit, reclaimed, denied, allowed, horizon, glatest;
    int n_g;          /* global window entries written */
    uint64_t g[4];    /* bucketed: counts (nb = 2); exact: times (count = n_g) */
    uint64_t g_count; /* exact: the count field */
    uint64_t n_over;  /* override count field */
    uint32_t over_limit, over_klen;
    uint64_t n_keys;  /* key count field */
    int keys_written; /* key records written (the same but the 2nd one's key byte) */
    char key2;        /* the 2nd key written: 'k' again (a repeat), 'j' (out of order), 'l' */
    uint32_t klen;
    uint64_t latest;
    uint64_t counts[2]; /* bucketed */
    uint64_t k_count;   /* exact: count field */
    int n_times;
    uint64_t times[4];
    int extra; /* trailing payload bytes */
} blob_spec;

static blob_spec base_spec(int exact) {
    blob_spec s;
    memset(&s, 0, sizeof s);
    s.flags = exact ? EXACT : 0;
    s.limit = 3;
    s.window = 20;
    s.width = exact ? 20 : 10; /* exact mode writes the window there */
    s.n_over = 1;
    s.over_limit = 2;
    s.over_klen = 1;
    s.n_keys = 1;
    s.keys_written = 1;
    s.klen = 1;
    s.latest = 15;
    s.key2 = 'k';
    if (exact) {
        s.k_count = 2;
        s.n_times = 2;
        s.times[0] = 5;
        s.times[1] = 15;
    } else {
        s.counts[0] = 1;
        s.counts[1] = 1;
    }
    return s;
}

static unsigned char *build(const blob_spec *s, size_t *len) {
    bb p;
    p.n = 0;
    const int exact = (s->flags & EXACT) != 0;
    put(&p, s->limit, 8);
    put(&p, s->window, 8);
    put(&p, s->width, 8);
    put(&p, s->max_keys, 8);
    put(&p, s->glimit, 8);
    put(&p, s->reclaimed, 8);
    put(&p, s->denied, 8);
    put(&p, s->allowed, 8);
    put(&p, s->horizon, 8);
    put(&p, s->glatest, 8);
    if (s->glimit) {
        if (exact) put(&p, s->g_count, 4);
        for (int i = 0; i < s->n_g; ++i) put(&p, s->g[i], 8);
    }
    put(&p, s->n_over, 8);
    if (s->n_over == 1 || s->n_over == 2) {
        for (uint64_t i = 0; i < s->n_over; ++i) {
            put(&p, s->over_limit, 4);
            put(&p, s->over_klen, 4);
            put_bytes(&p, "o", 1);
        }
    }
    put(&p, s->n_keys, 8);
    for (int i = 0; i < s->keys_written; ++i) {
        put(&p, s->klen, 4);
        put_bytes(&p, i == 0 ? "k" : &s->key2, 1);
        put(&p, s->latest, 8);
        if (exact) {
            put(&p, s->k_count, 4);
            for (int j = 0; j < s->n_times; ++j) put(&p, s->times[j], 8);
        } else {
            put(&p, s->counts[0], 2);
            put(&p, s->counts[1], 2);
        }
    }
    for (int i = 0; i < s->extra; ++i) put(&p, 0, 1);
    return wrap(&p, s->flags, len);
}

/* The builder's base blobs are what the library writes for that state. */
static void test_blob_builder_matches(void **state) {
    (void)state;
    for (int exact = 0; exact < 2; ++exact) {
        tf_rate_limiter *r = make(3, 20, 10, exact ? EXACT : 0);
        OK(tf_rate_limiter_set_key_limit(r, "o", 1, 2));
        EXPECT(acq(r, "k", 5, 1), 1, 2, 0);
        EXPECT(acq(r, "k", 15, 1), 1, 1, 0);
        size_t n, m;
        unsigned char *got = snap(r, &n);
        blob_spec s = base_spec(exact);
        unsigned char *want = build(&s, &m);
        assert_int_equal(n, m);
        assert_memory_equal(got, want, n);
        assert_int_equal(try_blob(want, m), TF_OK);
        free(got);
        free(want);
        tf_rate_limiter_free(r);
    }
}

static void test_deserialize_hostile_fields(void **state) {
    (void)state;
    for (int exact = 0; exact < 2; ++exact) {
        struct {
            const char *what;
            blob_spec s;
            tf_status want;
        } cases[64];
        size_t nc = 0;
#define CASE(desc, status, edit)         \
    do {                                 \
        cases[nc].what = desc;           \
        cases[nc].s = base_spec(exact);  \
        cases[nc].want = status;         \
        {                                \
            blob_spec *s = &cases[nc].s; \
            edit;                        \
        }                                \
        nc++;                            \
    } while (0)
        CASE("base", TF_OK, (void)s);
        CASE("unknown flag", TF_ERR_CORRUPT, s->flags |= 0x4);
        CASE("high flag", TF_ERR_CORRUPT, s->flags |= 0x80000000u);
        CASE("limit 0", TF_ERR_CORRUPT, s->limit = 0);
        CASE("limit too large", TF_ERR_CORRUPT, s->limit = exact ? TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1 : 65536);
        CASE("limit huge", TF_ERR_CORRUPT, s->limit = NEVER);
        CASE("window 0", TF_ERR_CORRUPT, s->window = 0);
        if (!exact) {
            CASE("width 0", TF_ERR_CORRUPT, s->width = 0);
            CASE("width does not divide", TF_ERR_CORRUPT, s->width = 3);
            CASE("width larger", TF_ERR_CORRUPT, s->width = 40);
            CASE("too many buckets", TF_ERR_CORRUPT, (s->window = 8192, s->width = 1));
            CASE("other bucket count", TF_ERR_CORRUPT, s->width = 5);
            CASE("counts over the largest limit", TF_ERR_CORRUPT, (s->counts[0] = 0xFFFF, s->counts[1] = 0xFFFF));
            CASE("global counts over the global limit", TF_ERR_CORRUPT,
                 (s->glimit = 3, s->glatest = 15, s->n_g = 2, s->g[0] = 2, s->g[1] = 2));
            CASE("global count huge", TF_ERR_CORRUPT,
                 (s->glimit = 3, s->glatest = 15, s->n_g = 2, s->g[0] = NEVER, s->g[1] = 2));
            CASE("global window", TF_OK, (s->glimit = 3, s->glatest = 15, s->n_g = 2, s->g[0] = 1, s->g[1] = 2));
            CASE("global window truncated", TF_ERR_CORRUPT, (s->glimit = 3, s->glatest = 15, s->n_g = 1, s->g[0] = 1));
        } else {
            CASE("grant count above the limit", TF_ERR_CORRUPT,
                 (s->k_count = 4, s->n_times = 4, s->times[2] = s->times[3] = 15));
            CASE("grant count huge", TF_ERR_CORRUPT, s->k_count = 0xFFFFFFFFu);
            CASE("grant count beyond the bytes", TF_ERR_CORRUPT, s->k_count = 2 + 0 * (s->n_times = 1));
            CASE("grant times out of order", TF_ERR_CORRUPT, (s->times[0] = 15, s->times[1] = 5));
            CASE("grant time after latest", TF_ERR_CORRUPT, s->times[1] = 16);
            CASE("grant time 0", TF_ERR_CORRUPT, s->times[0] = 0);
            CASE("global limit above 2^24", TF_ERR_CORRUPT, (s->glimit = (1ULL << 24) + 1, s->glatest = 15));
            CASE("global window", TF_OK,
                 (s->glimit = 3, s->glatest = 15, s->g_count = 2, s->n_g = 2, s->g[0] = 5, s->g[1] = 15));
            CASE("global count above the global limit", TF_ERR_CORRUPT,
                 (s->glimit = 1, s->glatest = 15, s->g_count = 2, s->n_g = 2, s->g[0] = 5, s->g[1] = 15));
            CASE("global count huge", TF_ERR_CORRUPT, (s->glimit = 3, s->glatest = 15, s->g_count = 0xFFFFFFFFu));
            CASE("global times out of order", TF_ERR_CORRUPT,
                 (s->glimit = 3, s->glatest = 15, s->g_count = 2, s->n_g = 2, s->g[0] = 15, s->g[1] = 5));
            CASE("global time after its latest", TF_ERR_CORRUPT,
                 (s->glimit = 3, s->glatest = 15, s->g_count = 2, s->n_g = 2, s->g[0] = 5, s->g[1] = 16));
            CASE("global time 0", TF_ERR_CORRUPT,
                 (s->glimit = 3, s->glatest = 15, s->g_count = 1, s->n_g = 1, s->g[0] = 0));
        }
        CASE("global clock without a global limit", TF_ERR_CORRUPT, s->glatest = 9);
        CASE("override count huge", TF_ERR_CORRUPT, s->n_over = NEVER);
        CASE("override count beyond the bytes", TF_ERR_CORRUPT, s->n_over = 1000);
        CASE("override limit 0", TF_ERR_CORRUPT, s->over_limit = 0);
        CASE("override limit too large", TF_ERR_CORRUPT,
             s->over_limit = exact ? TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1 : 65536);
        CASE("override key length huge", TF_ERR_CORRUPT, s->over_klen = 0xFFFFFFFFu);
        CASE("override twice", TF_ERR_CORRUPT, s->n_over = 2);
        CASE("key count huge", TF_ERR_CORRUPT, s->n_keys = NEVER);
        CASE("key count beyond the bytes", TF_ERR_CORRUPT, s->n_keys = 2);
        CASE("key count 0 (bytes left over)", TF_ERR_CORRUPT, s->n_keys = 0);
        CASE("key twice", TF_ERR_CORRUPT, (s->n_keys = 2, s->keys_written = 2));
        CASE("key length huge", TF_ERR_CORRUPT, s->klen = 0xFFFFFFFFu);
        CASE("key length beyond the bytes", TF_ERR_CORRUPT, s->klen = 200);
        CASE("key latest 0", TF_ERR_CORRUPT, s->latest = 0);
        CASE("keys out of order", TF_ERR_CORRUPT, (s->n_keys = 2, s->keys_written = 2, s->key2 = 'j'));
        CASE("two keys in order", TF_OK, (s->n_keys = 2, s->keys_written = 2, s->key2 = 'l'));
        CASE("a reclaim horizon", TF_OK, s->horizon = NEVER);
        CASE("trailing payload", TF_ERR_CORRUPT, s->extra = 1);
        CASE("counters and max_keys are free", TF_OK, (s->max_keys = NEVER, s->reclaimed = 7, s->denied = NEVER));
#undef CASE
        assert_true(nc <= sizeof cases / sizeof cases[0]);
        for (size_t i = 0; i < nc; ++i) {
            size_t len;
            unsigned char *b = build(&cases[i].s, &len);
            tf_status st = try_blob(b, len);
            if (st != cases[i].want)
                fail_msg("%s: %s: got %s (%s), want %s", mode_name(exact ? EXACT : 0), cases[i].what,
                         tf_status_string(st), tf_last_error_message(), tf_status_string(cases[i].want));
            free(b);
        }
        /* envelope fields, checksum fixed */
        blob_spec s = base_spec(exact);
        size_t len;
        unsigned char *b = build(&s, &len);
        const tu_field_case env[] = {
            {4, 2, 2, TF_ERR_UNSUPPORTED_VERSION},
            {4, 0, 2, TF_ERR_UNSUPPORTED_VERSION},
            {6, 1, 2, TF_ERR_WRONG_KIND},
            {6, 3, 2, TF_ERR_WRONG_KIND},
            {6, 999, 2, TF_ERR_WRONG_KIND},
            {0, 0x544C4655, 4, TF_ERR_BAD_MAGIC},
            {8, exact ? 0 : EXACT, 4, TF_ERR_CORRUPT}, /* the other mode's payload */
        };
        tu_check_field_cases(b, len, env, sizeof env / sizeof env[0], try_blob);
        free(b);
    }
}

static void test_deserialize_wrong_kind_random_and_null(void **state) {
    (void)state;
    /* another structure's blob, and with the kind edited to 4: its payload
     * is not a rate limiter's */
    tf_recency_sketch *s = NULL;
    OK(tf_recency_sketch_new(64, 2, 1, 0, &s));
    OK(tf_recency_sketch_update(s, "k", 1, 5));
    tu_check_foreign_blob(&tu_recency_sketch, s, 4, TF_ERR_CORRUPT, try_blob);
    tf_recency_sketch_free(s);
    s = NULL;
    /* and the other way round */
    tf_rate_limiter *r = populated(0);
    size_t n;
    unsigned char *rb = snap(r, &n);
    assert_int_equal(tf_recency_sketch_deserialize(rb, n, NULL, &s), TF_ERR_WRONG_KIND);
    assert_null(s);
    free(rb);
    tf_rate_limiter_free(r);
    /* random bytes */
    tu_check_random_blobs(4, TF_RATE_LIMITER_EXACT | TF_RATE_LIMITER_FULL_ALLOW, 2025, 512, NULL, NULL, try_blob);
    tu_check_deserialize_nulls(&tu_rate_limiter);
}

TU_MAIN(test_deserialize_truncated, test_deserialize_bit_flips, test_blob_builder_matches,
        test_deserialize_hostile_fields, test_deserialize_wrong_kind_random_and_null)
