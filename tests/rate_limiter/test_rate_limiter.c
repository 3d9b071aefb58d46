/* Sliding-window rate limiter (seed 002): the seed's worked example, the
 * exact-mode invariant and the bucketed bound as properties against an exact
 * reference kept here, retry_at / remaining / n permits / peek / refund /
 * reset, the global limit with per-key overrides, idle reclamation, the key
 * bound, many threads, clocks that go backwards, bad input and the wire
 * format (round trip, hostile blobs, golden blobs).
 *
 * Semantics this suite holds the library to (include/temporalfilters/
 * rate_limiter.h), in the words of a reference model:
 *  - a key's clock is clamped: a request at `now` is decided at
 *    t = max(now, the latest time the key has seen);
 *  - every permit granted at t has an expiry: t + window (exact mode), or
 *    floor(t / width) * width + window (bucketed: its bucket leaves the
 *    window when floor(now / width) - buckets reaches it); a permit counts
 *    at time t while t < its expiry;
 *  - n permits are granted iff n <= limit and used + n <= limit; remaining
 *    is the room left; retry_at is the expiry of the (used + n - limit)-th
 *    oldest permit (the earliest time at which the request would be
 *    granted), or UINT64_MAX when n > limit;
 *  - with a global limit the same rule runs over all keys' permits (its own
 *    clock clamped too); a request needs both.
 * So the bucketed mode is the exact rule applied to permit times rounded
 * down to their bucket: this suite checks it decision by decision, and
 * derives from it the precise bound (at most `limit` permits in any real
 * interval of length window - width + 1, at most 2 * limit in one of length
 * `window`, both tight) and that it never denies what the exact rule over
 * its own history would grant. */
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

#include "golden.h"
#include "temporalfilters.h"
#include "test_util.h"

#define OK(call) assert_int_equal((call), TF_OK)
#define NEVER TF_RETRY_NEVER
#define EXACT TF_RATE_LIMITER_EXACT
#define ULL(x) ((unsigned long long)(x))

static const uint32_t kModes[] = {0, TF_RATE_LIMITER_EXACT};
#define NMODES (sizeof kModes / sizeof kModes[0])

static tf_rate_limiter *make(uint64_t limit, uint64_t window, uint64_t width, uint32_t flags) {
    tf_rate_limiter *r = NULL;
    OK(tf_rate_limiter_new(limit, window, width, flags, &r));
    assert_non_null(r);
    return r;
}

/* One decision. */
typedef struct {
    int allowed;
    uint64_t remaining, retry_at;
} dec;

static dec acq_b(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n) {
    dec d = {-1, 12345, 12345};
    OK(tf_rate_limiter_acquire(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at));
    return d;
}
static dec peek_b(tf_rate_limiter *r, const void *k, size_t len, uint64_t now, uint64_t n) {
    dec d = {-1, 12345, 12345};
    OK(tf_rate_limiter_peek(r, k, len, now, n, &d.allowed, &d.remaining, &d.retry_at));
    return d;
}
static dec acq(tf_rate_limiter *r, const char *k, uint64_t now, uint64_t n) { return acq_b(r, k, strlen(k), now, n); }
static dec peek(tf_rate_limiter *r, const char *k, uint64_t now, uint64_t n) { return peek_b(r, k, strlen(k), now, n); }
static dec acq_id(tf_rate_limiter *r, uint64_t id, uint64_t now, uint64_t n) {
    tu_key k = tu_make_key('L', id);
    return acq_b(r, k.b, sizeof k.b, now, n);
}

#define EXPECT(d, a, rem, retry) check_dec((d), (a), (rem), (retry), __LINE__)
static void check_dec(dec d, int a, uint64_t rem, uint64_t retry, int line) {
    if (d.allowed != a || d.remaining != rem || d.retry_at != retry)
        fail_msg("line %d: got (allowed %d, remaining %llu, retry_at %llu), want (%d, %llu, %llu)", line, d.allowed,
                 ULL(d.remaining), ULL(d.retry_at), a, ULL(rem), ULL(retry));
}

static unsigned char *snap(tf_rate_limiter *r, size_t *len) {
    size_t n = 0, w = 0;
    OK(tf_rate_limiter_serialized_size(r, &n));
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    OK(tf_rate_limiter_serialize(r, buf, n, &w));
    assert_int_equal(w, n);
    *len = n;
    return buf;
}

static void assert_unchanged(tf_rate_limiter *r, const unsigned char *before, size_t len) {
    size_t n;
    unsigned char *now = snap(r, &n);
    assert_int_equal(n, len);
    assert_memory_equal(now, before, len);
    free(now);
}

static tf_rate_limiter *clone_of(tf_rate_limiter *r) {
    size_t n;
    unsigned char *b = snap(r, &n);
    tf_rate_limiter *c = NULL;
    OK(tf_rate_limiter_deserialize(b, n, NULL, &c));
    free(b);
    return c;
}

static tf_rate_limiter_stats stats_of(const tf_rate_limiter *r) {
    tf_rate_limiter_stats s = TF_RATE_LIMITER_STATS_INIT;
    OK(tf_rate_limiter_get_stats(r, &s));
    return s;
}

static tf_rate_limiter_info info_of(const tf_rate_limiter *r) {
    tf_rate_limiter_info i = TF_RATE_LIMITER_INFO_INIT;
    OK(tf_rate_limiter_get_info(r, &i));
    return i;
}

/* ------------------------------------------------------------------ */
/* the reference model                                                 */

/* Expiries of permits, oldest first, in a growable ring. */
typedef struct {
    uint64_t *v;
    uint32_t cap, start, count;
} ring;

static uint64_t ring_at(const ring *g, uint32_t i) { return g->v[(g->start + i) % g->cap]; }
static void ring_push(ring *g, uint64_t x) {
    if (g->count == g->cap) {
        uint32_t ncap = g->cap ? g->cap * 2 : 8;
        uint64_t *nv = malloc(sizeof *nv * ncap);
        assert_non_null(nv);
        for (uint32_t i = 0; i < g->count; ++i) nv[i] = ring_at(g, i);
        free(g->v);
        g->v = nv;
        g->cap = ncap;
        g->start = 0;
    }
    g->v[(g->start + g->count) % g->cap] = x;
    g->count++;
}
static void ring_prune(ring *g, uint64_t t) { /* drops expiries <= t */
    while (g->count && ring_at(g, 0) <= t) {
        g->start = (g->start + 1) % g->cap;
        g->count--;
    }
}
static void ring_pop_back(ring *g, uint32_t n) { g->count -= n < g->count ? n : g->count; }
static void ring_clear(ring *g) { g->count = 0; }
static void ring_free(ring *g) {
    free(g->v);
    memset(g, 0, sizeof *g);
}
/* Permits still counting at t (the ring is sorted). */
static uint32_t ring_first_live(const ring *g, uint64_t t) {
    uint32_t i = 0;
    while (i < g->count && ring_at(g, i) <= t) ++i;
    return i;
}

/* The rule, without changing anything: n permits against `limit` at t. */
static dec rule(const ring *g, uint64_t t, uint64_t limit, uint64_t n) {
    dec d = {0, 0, 0};
    const uint32_t first = ring_first_live(g, t);
    const uint64_t used = g->count - first;
    if (n <= limit && used <= limit - n) {
        d.allowed = 1;
        d.remaining = limit - used - n;
        return d;
    }
    d.remaining = used >= limit ? 0 : limit - used;
    d.retry_at = n > limit ? NEVER : ring_at(g, (uint32_t)(first + used + n - limit - 1));
    return d;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > NEVER - b ? NEVER : a + b; }

typedef struct {
    ring win;  /* expiries of the key's permits */
    ring real; /* grant times + window (the exact expiry, for real-time checks) */
    uint64_t latest;
    uint32_t limit; /* override, 0 = none */
    int tracked, cold;
    long last_log; /* newest entry of this key in the grant log, -1 */
} ref_key;

/* Every permit granted, for the after-the-fact window checks. */
typedef struct {
    uint32_t *key;
    uint64_t *t, *gt;
    long *prev;
    unsigned char *live, *glive;
    long n, cap;
} grant_log;

typedef struct {
    int exact;
    uint64_t window, width, limit, global;
    size_t nkeys;
    ref_key *keys;
    ring gwin;
    uint64_t glatest;
    grant_log log;
    /* bucketed mode: permits the exact rule over the same history would
     * have refused (over-admission) */
    uint64_t granted, over_admitted;
} ref;

static void ref_init(ref *m, uint32_t flags, uint64_t limit, uint64_t window, uint64_t width, size_t nkeys) {
    memset(m, 0, sizeof *m);
    m->exact = (flags & EXACT) != 0;
    m->limit = limit;
    m->window = window;
    m->width = width;
    m->nkeys = nkeys;
    m->keys = calloc(nkeys, sizeof *m->keys);
    assert_non_null(m->keys);
    for (size_t i = 0; i < nkeys; ++i) m->keys[i].last_log = -1;
}

static void ref_free(ref *m) {
    for (size_t i = 0; i < m->nkeys; ++i) {
        ring_free(&m->keys[i].win);
        ring_free(&m->keys[i].real);
    }
    ring_free(&m->gwin);
    free(m->keys);
    free(m->log.key);
    free(m->log.t);
    free(m->log.gt);
    free(m->log.prev);
    free(m->log.live);
    free(m->log.glive);
}

static uint64_t ref_expiry(const ref *m, uint64_t t) {
    if (m->exact) return sat_add(t, m->window);
    return sat_add(t / m->width * m->width, m->window);
}

static uint64_t ref_limit(const ref *m, size_t id) { return m->keys[id].limit ? m->keys[id].limit : m->limit; }

static void log_grant(ref *m, size_t id, uint64_t t, uint64_t gt) {
    grant_log *g = &m->log;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 4096;
        g->key = realloc(g->key, sizeof *g->key * (size_t)g->cap);
        g->t = realloc(g->t, sizeof *g->t * (size_t)g->cap);
        g->gt = realloc(g->gt, sizeof *g->gt * (size_t)g->cap);
        g->prev = realloc(g->prev, sizeof *g->prev * (size_t)g->cap);
        g->live = realloc(g->live, (size_t)g->cap);
        g->glive = realloc(g->glive, (size_t)g->cap);
        assert_true(g->key && g->t && g->gt && g->prev && g->live && g->glive);
    }
    g->key[g->n] = (uint32_t)id;
    g->t[g->n] = t;
    g->gt[g->n] = gt;
    g->prev[g->n] = m->keys[id].last_log;
    g->live[g->n] = 1;
    g->glive[g->n] = 1;
    m->keys[id].last_log = g->n++;
}

/* The decision the documented rules give for (key, now, n). With `take`,
 * applies it. */
static dec ref_op(ref *m, size_t id, uint64_t now, uint64_t n, int take) {
    ref_key *k = &m->keys[id];
    const uint64_t lim = ref_limit(m, id);
    const uint64_t t = now > k->latest ? now : k->latest;
    dec d = rule(&k->win, t, lim, n);
    uint64_t gt = 0;
    if (m->global) {
        /* both windows: granted when both grant, the fewer remaining after
         * the decision (a denial takes nothing: a window that would have
         * granted keeps its n), the later retry time */
        gt = t > m->glatest ? t : m->glatest;
        dec gd = rule(&m->gwin, gt, m->global, n);
        dec both;
        both.allowed = d.allowed && gd.allowed;
        const uint64_t rem_k = !both.allowed && d.allowed ? d.remaining + n : d.remaining;
        const uint64_t rem_g = !both.allowed && gd.allowed ? gd.remaining + n : gd.remaining;
        both.remaining = rem_g < rem_k ? rem_g : rem_k;
        const uint64_t rk = d.allowed ? 0 : d.retry_at, rg = gd.allowed ? 0 : gd.retry_at;
        both.retry_at = both.allowed ? 0 : rk > rg ? rk : rg;
        d = both;
        if (take) {
            m->glatest = gt;
            ring_prune(&m->gwin, gt);
        }
    }
    if (!take) return d;
    ring_prune(&k->win, t);
    ring_prune(&k->real, t);
    if (d.allowed) {
        /* bucketed: the exact rule over the same (real) history */
        if (!m->exact && k->real.count + n > lim) {
            const uint64_t over = k->real.count + n - lim;
            m->over_admitted += over < n ? over : n;
        }
        m->granted += n;
        for (uint64_t i = 0; i < n; ++i) {
            ring_push(&k->win, ref_expiry(m, t));
            ring_push(&k->real, sat_add(t, m->window));
            if (m->global) ring_push(&m->gwin, ref_expiry(m, gt));
            log_grant(m, id, t, gt);
        }
        k->tracked = 1;
        k->cold = 0;
    } else if (!m->exact && !m->global && n <= lim && k->real.count + n <= lim) {
        fail_msg("bucketed mode denied key %zu at %llu (n %llu) though only %u permits were granted in (t - window, t]",
                 id, ULL(t), ULL(n), k->real.count);
    }
    if (k->tracked) k->latest = t;
    /* a denied request with an empty window: the library may hold no record
     * (a first request leaves nothing behind; an idle key may have been
     * reclaimed), so the key's clock is not known for sure: in-order only */
    if (!d.allowed && k->win.count == 0) k->cold = 1;
    return d;
}

static void ref_refund(ref *m, size_t id, uint64_t now, uint64_t n) {
    ref_key *k = &m->keys[id];
    assert_int_equal(m->global, 0); /* see test_global_refund_gives_back_the_keys_permits */
    if (!k->tracked) return;
    const uint64_t t = now > k->latest ? now : k->latest;
    k->latest = t;
    ring_prune(&k->win, t);
    ring_prune(&k->real, t);
    const uint32_t back = (uint32_t)(n < k->win.count ? n : k->win.count);
    ring_pop_back(&k->win, back);
    ring_pop_back(&k->real, back);
    for (long i = k->last_log, left = back; left > 0; i = m->log.prev[i]) {
        assert_true(i >= 0);
        if (m->log.live[i]) m->log.live[i] = 0, --left;
    }
    if (k->win.count == 0) k->cold = 1;
}

static void ref_reset(ref *m, size_t id) {
    ref_key *k = &m->keys[id];
    ring_clear(&k->win);
    ring_clear(&k->real);
    k->latest = 0;
    k->tracked = 0;
    k->cold = 1;
    for (long i = k->last_log; i >= 0; i = m->log.prev[i]) m->log.live[i] = 0; /* forgotten (not globally) */
}

/* Most permits of one key in any half-open interval (s - len, s] over the
 * live grant log; `global` looks at all keys with their global times. */
static uint64_t max_in_interval(const ref *m, long id, uint64_t len, int global, uint64_t *limit_out) {
    const grant_log *g = &m->log;
    uint64_t best = 0;
    /* entries of the key in log order have non-decreasing times */
    long *idx = malloc(sizeof *idx * (size_t)(g->n ? g->n : 1));
    assert_non_null(idx);
    long cnt = 0;
    if (global) {
        for (long i = 0; i < g->n; ++i)
            if (g->glive[i]) idx[cnt++] = i;
    } else {
        for (long i = m->keys[id].last_log; i >= 0; i = g->prev[i])
            if (g->live[i]) idx[cnt++] = i;
        for (long a = 0, b = cnt - 1; a < b; ++a, --b) {
            long x = idx[a];
            idx[a] = idx[b];
            idx[b] = x;
        }
    }
    const uint64_t *tv = global ? g->gt : g->t;
    for (long hi = 0, lo = 0; hi < cnt; ++hi) {
        if (hi > 0 && tv[idx[hi]] < tv[idx[hi - 1]]) fail_msg("grant times out of order in the log");
        while (tv[idx[lo]] + len <= tv[idx[hi]]) ++lo;
        if ((uint64_t)(hi - lo + 1) > best) best = (uint64_t)(hi - lo + 1);
    }
    free(idx);
    if (limit_out) *limit_out = global ? m->global : ref_limit(m, (size_t)id);
    return best;
}

/* ------------------------------------------------------------------ */
/* the seed's worked example                                          */

static void seed_example(uint32_t flags) {
    /* 5 requests per second, 100 ms buckets, the README's timestamps */
    tf_rate_limiter *r = make(5, 1000, 100, flags);
    const uint64_t T = 1592171100000ULL;
    EXPECT(acq(r, "user", T + 1900, 1), 1, 4, 0);
    EXPECT(acq(r, "user", T + 1950, 1), 1, 3, 0);
    EXPECT(acq(r, "user", T + 2013, 1), 1, 2, 0);
    EXPECT(acq(r, "user", T + 2810, 1), 1, 1, 0);
    EXPECT(acq(r, "user", T + 2850, 1), 1, 0, 0); /* total = 5 */
    /* "total = 5 is equal to rps = 5, so we return False"; the bucket
     * 15921711019 (two requests) leaves at 1592171102900 (bucketed), the
     * request at ...1900 leaves then too (exact) */
    EXPECT(acq(r, "user", T + 2890, 1), 0, 0, T + 2900);
    {
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq(c, "user", T + 2899, 1), 0, 0, T + 2900); /* one unit early */
        /* bucketed: both requests of that bucket leave (total 3 -> 4);
         * exact: only ...1900 has left (4 -> 5) */
        EXPECT(acq(c, "user", T + 2900, 1), 1, (flags & EXACT) ? 0 : 1, 0);
        tf_rate_limiter_free(c);
    }
    /* "Next request comes at 1592171102980": the bucket is outdated,
     * total 5 - 2 = 3 < 5, allowed, total = 4 */
    EXPECT(acq(r, "user", T + 2980, 1), 1, 1, 0);
    EXPECT(acq(r, "user", T + 2981, 1), 1, 0, 0);
    /* the oldest left is ...2013 (bucket 15921711020) */
    EXPECT(acq(r, "user", T + 2982, 1), 0, 0, (flags & EXACT) ? T + 3013 : T + 3000);
    tf_rate_limiter_free(r);

    /* The README's error analysis: 1 rps, 100 ms buckets, requests at
     * ...1990 and ...2930 are both allowed by the buckets although less than
     * a second apart; the exact mode refuses the second until ...2990. */
    r = make(1, 1000, 100, flags);
    EXPECT(acq(r, "u", T + 1990, 1), 1, 0, 0);
    if (flags & EXACT)
        EXPECT(acq(r, "u", T + 2930, 1), 0, 0, T + 2990);
    else
        EXPECT(acq(r, "u", T + 2930, 1), 1, 0, 0);
    tf_rate_limiter_free(r);
}

static void test_seed_example(void **state) {
    (void)state;
    seed_example(0);
    seed_example(EXACT);
}

/* ------------------------------------------------------------------ */
/* properties against the reference                                     */

typedef struct {
    uint32_t flags;
    uint64_t limit, window, width, global;
    size_t nkeys, hot, warm;
    long ops;
    int refunds;
    uint64_t seed;
} prop_cfg;

/* Random traffic: hot, warm and cold keys, n from 1 to beyond the limit,
 * times that go backwards (below the key's latest time: clamped; or below
 * the newest time of other keys), peeks, refunds, resets. Every decision
 * is compared with the reference, then the window bounds are checked over
 * the whole grant log. Out-of-order times are generated only where the
 * key's clock is certain: see test_reclaim_respects_the_keys_clock for the
 * case left out (a key reclaimed through another key's newer time). */
static void run_property(const prop_cfg *c, ref *m, tf_rate_limiter **out) {
    tf_rate_limiter *r = make(c->limit, c->window, c->width, c->flags);
    ref_init(m, c->flags, c->limit, c->window, c->width, c->nkeys);
    if (c->global) {
        OK(tf_rate_limiter_set_global_limit(r, c->global));
        m->global = c->global;
    }
    /* overrides: below, at and above the default (and above the global) */
    for (size_t id = 1; id < c->nkeys; id += 97) {
        uint32_t lim = (uint32_t)(1 + (id / 97) % 20);
        if (c->global && id % 3 == 0) lim = (uint32_t)c->global + 10;
        tu_key k = tu_make_key('L', id);
        OK(tf_rate_limiter_set_key_limit(r, k.b, sizeof k.b, lim));
        m->keys[id].limit = lim;
    }
    tu_rng g = {c->seed};
    uint64_t M = 1; /* the newest time of any call so far */
    long peeks = 0, backwards = 0, refunds = 0, resets = 0, denied = 0;
    for (long op = 0; op < c->ops; ++op) {
        const uint64_t p = tu_below(&g, 100);
        size_t id = p < 40 ? tu_below(&g, c->hot) : p < 70 ? c->hot + tu_below(&g, c->warm) : tu_below(&g, c->nkeys);
        ref_key *k = &m->keys[id];
        const uint64_t lim = ref_limit(m, id);
        uint64_t now;
        const int sure = k->tracked && !k->cold && M < k->latest + c->window;
        if (sure && tu_below(&g, 10) < 3) {
            /* backwards: anywhere in [M - 2 window, M] */
            now = M > 2 * c->window ? M - tu_below(&g, 2 * c->window + 1) : 1 + tu_below(&g, M);
            backwards += now < M;
        } else {
            now = M + tu_below(&g, 2);
        }
        if (now > M) M = now;
        const uint64_t q = tu_below(&g, 100);
        uint64_t n = q < 70   ? 1
                     : q < 90 ? 2 + tu_below(&g, 2)
                     : q < 98 ? 1 + tu_below(&g, lim + 2)
                     : q < 99 ? lim + 1
                              : NEVER;
        tu_key key = tu_make_key('L', id);
        const uint64_t kind = tu_below(&g, 1000);
        if (kind < 50 && c->refunds) {
            n = 1 + tu_below(&g, 3);
            OK(tf_rate_limiter_refund(r, key.b, sizeof key.b, now, n));
            ref_refund(m, id, now, n);
            refunds++;
            continue;
        }
        if (kind == 999) {
            OK(tf_rate_limiter_reset(r, key.b, sizeof key.b));
            ref_reset(m, id);
            resets++;
            continue;
        }
        dec want = ref_op(m, id, now, n, 0);
        if (kind < 150) { /* a peek first: the decision acquire is about to make */
            dec got = peek_b(r, key.b, sizeof key.b, now, n);
            if (got.allowed != want.allowed || got.remaining != want.remaining || got.retry_at != want.retry_at)
                fail_msg("op %ld: peek key %zu now %llu n %llu: got (%d, %llu, %llu), want (%d, %llu, %llu)", op, id,
                         ULL(now), ULL(n), got.allowed, ULL(got.remaining), ULL(got.retry_at), want.allowed,
                         ULL(want.remaining), ULL(want.retry_at));
            peeks++;
        }
        dec got = acq_b(r, key.b, sizeof key.b, now, n);
        want = ref_op(m, id, now, n, 1);
        const int same =
            got.allowed == want.allowed && got.remaining == want.remaining && got.retry_at == want.retry_at;
        if (!same)
            fail_msg(
                "op %ld: acquire key %zu (limit %llu) now %llu n %llu: got (%d, %llu, %llu), want (%d, %llu, %llu)", op,
                id, ULL(lim), ULL(now), ULL(n), got.allowed, ULL(got.remaining), ULL(got.retry_at), want.allowed,
                ULL(want.remaining), ULL(want.retry_at));
        denied += !got.allowed;
    }
    /* the mix really happened */
    assert_true(backwards > c->ops / 20);
    assert_true(peeks > c->ops / 20);
    assert_true(denied > c->ops / 20);
    assert_true(!c->refunds || refunds > c->ops / 50);
    assert_true(resets > 0);
    *out = r;
}

/* The exact-mode invariant: never more than the key's limit in any
 * (t - window, t], over >= 1e6 requests from >= 1e4 keys. */
static void test_exact_property(void **state) {
    (void)state;
    prop_cfg c = {EXACT, 4, 1000, 0, 0, 10000, 64, 1000, 1000000, 1, 11};
    ref m;
    tf_rate_limiter *r;
    run_property(&c, &m, &r);
    uint64_t keys_seen = 0, limited = 0;
    for (size_t id = 0; id < c.nkeys; ++id) {
        uint64_t lim, most = max_in_interval(&m, (long)id, c.window, 0, &lim);
        if (most > lim) fail_msg("key %zu: %llu permits in one window, limit %llu", id, ULL(most), ULL(lim));
        keys_seen += m.keys[id].last_log >= 0;
        limited += most == lim;
    }
    assert_true(keys_seen >= 10000);
    assert_true(limited >= 64);
    print_message("# exact: %ld requests, %llu keys granted, %llu permits, %llu keys reached their limit\n", c.ops,
                  ULL(keys_seen), ULL(m.granted), ULL(limited));
    tf_rate_limiter_stats s = stats_of(r);
    assert_true(s.reclaimed > 0); /* idle keys went away meanwhile */
    assert_true(s.keys < 10000);
    ref_free(&m);
    tf_rate_limiter_free(r);
}

/* The bucketed mode: the exact rule over bucket-rounded times, decision by
 * decision (ref_op also fails if it ever denies what the exact rule over
 * its own history grants); hence at most `limit` permits in any real
 * interval of length window - width + 1 and at most 2 * limit in one of
 * length window. */
static void test_bucketed_property(void **state) {
    (void)state;
    const uint64_t widths[] = {100, 250, 1000, 1};
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w) {
        prop_cfg c = {0, 4, 1000, widths[w], 0, 10000, 64, 1000, w == 0 ? 1000000 : 200000, 1, 12 + w};
        ref m;
        tf_rate_limiter *r;
        run_property(&c, &m, &r);
        uint64_t worst_short = 0, worst_window = 0, over_limit_windows = 0;
        for (size_t id = 0; id < c.nkeys; ++id) {
            uint64_t lim;
            uint64_t a = max_in_interval(&m, (long)id, c.window - c.width + 1, 0, &lim);
            uint64_t b = max_in_interval(&m, (long)id, c.window, 0, &lim);
            if (a > lim)
                fail_msg("width %llu key %zu: %llu permits within window - width + 1", ULL(c.width), id, ULL(a));
            if (b > 2 * lim) fail_msg("width %llu key %zu: %llu permits within a window", ULL(c.width), id, ULL(b));
            if (a * 100 / lim > worst_short) worst_short = a * 100 / lim;
            if (b * 100 / lim > worst_window) worst_window = b * 100 / lim;
            over_limit_windows += b > lim;
        }
        if (c.width == 1) assert_int_equal(m.over_admitted, 0); /* one-unit buckets are exact */
        if (c.width == 1) assert_int_equal(over_limit_windows, 0);
        if (c.width == 100) assert_true(m.over_admitted > 0);
        print_message(
            "# bucketed, %llu buckets: over-admission %.3f%% of %llu permits on random traffic; busiest "
            "window %llu%% of the limit (%llu keys above it), busiest window - width + 1: %llu%%\n",
            ULL(c.window / c.width), 100.0 * (double)m.over_admitted / (double)m.granted, ULL(m.granted),
            ULL(worst_window), ULL(over_limit_windows), ULL(worst_short));
        ref_free(&m);
        tf_rate_limiter_free(r);
    }
}

/* Adversarial traffic reaches the bucketed bound exactly: `limit` permits
 * at the last unit of a bucket, `limit` more as the bucket leaves, window -
 * width + 1 later: 2 * limit within one window (the header's "about
 * limit * (1 + 1 / buckets)" holds only for traffic spread evenly). The
 * exact mode refuses all of the second burst. Over aligned stretches of k
 * windows neither mode grants more than k * limit. */
static void test_bucketed_adversarial(void **state) {
    (void)state;
    const uint64_t L = 7, W = 1000, B = 100;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(L, W, B, kModes[m]);
        uint64_t per_cycle_max = 0, total = 0;
        const uint64_t cycles = 200;
        for (uint64_t id = 0; id < 50; ++id) {
            uint64_t granted_key = 0;
            for (uint64_t cyc = 0; cyc < cycles; cyc += 2) {
                /* bucket j = 10 * cyc + 5: its last unit, then as it leaves */
                const uint64_t end = (10 * cyc + 6) * B - 1, leave = (10 * cyc + 5 + 10) * B;
                uint64_t got = 0;
                for (uint64_t i = 0; i < L + 2; ++i) got += (uint64_t)acq_id(r, id, end, 1).allowed;
                for (uint64_t i = 0; i < L + 2; ++i) got += (uint64_t)acq_id(r, id, leave, 1).allowed;
                assert_true(leave - end < W);
                assert_int_equal(got, kModes[m] & EXACT ? L : 2 * L); /* within window - width + 1 */
                if (got > per_cycle_max) per_cycle_max = got;
                granted_key += got;
            }
            /* the stretch (0, 10 * cycles * B] of `cycles` whole windows */
            assert_true(granted_key <= cycles * L);
            total += granted_key;
        }
        print_message("# %s: adversarial bursts get %llu permits in %llu units (limit %llu per %llu)\n",
                      kModes[m] & EXACT ? "exact" : "bucketed", ULL(per_cycle_max), ULL(W - B + 2), ULL(L), ULL(W));
        (void)total;
        tf_rate_limiter_free(r);
    }
}

/* ------------------------------------------------------------------ */
/* results: retry_at, remaining, n permits, peek, refund, reset          */

/* Random small histories: whenever a request is denied with retry_at = R,
 * the same request at R - 1 is denied and at R granted (on copies, so
 * that nothing else happens), and R is after now. */
static void test_retry_at_exact_time(void **state) {
    (void)state;
    tu_rng g = {77};
    const uint64_t windows[] = {1, 10, 60, 100, 1000};
    long checked = 0;
    for (int trial = 0; trial < 1500; ++trial) {
        const uint32_t flags = kModes[trial % 2];
        const uint64_t W = windows[tu_below(&g, 5)];
        uint64_t B = 1 + tu_below(&g, W);
        while (W % B) --B;
        const uint64_t L = 1 + tu_below(&g, 6);
        tf_rate_limiter *r = make(L, W, B, flags);
        uint64_t now = 1 + tu_below(&g, 3 * W);
        const int steps = (int)tu_below(&g, 12);
        for (int s = 0; s < steps; ++s) {
            now += tu_below(&g, W / 3 + 1);
            (void)acq(r, "x", now, 1 + tu_below(&g, 2));
            if (tu_below(&g, 8) == 0) OK(tf_rate_limiter_refund(r, "x", 1, now, 1));
        }
        now += tu_below(&g, W / 2 + 1);
        const uint64_t n = 1 + tu_below(&g, L);
        tf_rate_limiter *c = clone_of(r);
        dec d = acq(c, "x", now, n);
        tf_rate_limiter_free(c);
        if (d.allowed) {
            assert_int_equal(d.retry_at, 0);
        } else {
            assert_true(d.retry_at > now && d.retry_at != NEVER);
            c = clone_of(r);
            dec early = acq(c, "x", d.retry_at - 1, n);
            tf_rate_limiter_free(c);
            c = clone_of(r);
            dec on_time = acq(c, "x", d.retry_at, n);
            tf_rate_limiter_free(c);
            if (early.allowed || !on_time.allowed)
                fail_msg(
                    "trial %d (%s L %llu W %llu B %llu n %llu): retry_at %llu, granted one unit before: %d, at "
                    "it: %d",
                    trial, flags ? "exact" : "bucketed", ULL(L), ULL(W), ULL(B), ULL(n), ULL(d.retry_at), early.allowed,
                    on_time.allowed);
            checked++;
        }
        tf_rate_limiter_free(r);
    }
    assert_true(checked > 300);
}

static void test_remaining_and_n_permits(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(10, 100, 10, kModes[m]);
        EXPECT(acq(r, "a", 5, 3), 1, 7, 0);
        EXPECT(acq(r, "a", 15, 4), 1, 3, 0);
        EXPECT(acq(r, "a", 25, 4), 0, 3, ex ? 105 : 100); /* 4 > 3: the 3 at 5 must leave */
        EXPECT(acq(r, "a", 25, 3), 1, 0, 0);              /* all at once, exactly to the limit */
        EXPECT(acq(r, "a", 26, 1), 0, 0, ex ? 105 : 100);
        EXPECT(acq(r, "a", 26, 8), 0, 0, ex ? 125 : 120); /* three batches must leave */
        EXPECT(acq(r, "a", 26, 10), 0, 0, ex ? 125 : 120);
        EXPECT(acq(r, "a", 26, 11), 0, 0, NEVER); /* more than the limit: never */
        EXPECT(acq(r, "a", ex ? 105 : 100, 3), 1, 0, 0);
        /* a fresh key: all at once, more than the limit, exactly the limit */
        EXPECT(acq(r, "b", 200, 11), 0, 10, NEVER);
        EXPECT(peek(r, "b", 200, 10), 1, 0, 0);
        EXPECT(acq(r, "b", 200, 10), 1, 0, 0);
        EXPECT(acq(r, "c", 200, NEVER), 0, 10, NEVER);
        EXPECT(acq(r, "c", 200, (uint64_t)1 << 63), 0, 10, NEVER);
        tf_rate_limiter_free(r);
    }
    /* the largest limits */
    tf_rate_limiter *r = make(TF_RATE_LIMITER_MAX_KEY_LIMIT, 10, 1, 0);
    EXPECT(acq(r, "k", 1, TF_RATE_LIMITER_MAX_KEY_LIMIT), 1, 0, 0);
    EXPECT(acq(r, "k", 2, 1), 0, 0, 11);
    EXPECT(acq(r, "k", 11, TF_RATE_LIMITER_MAX_KEY_LIMIT), 1, 0, 0);
    tf_rate_limiter_free(r);
    r = make(TF_RATE_LIMITER_MAX_EXACT_LIMIT, 10, 0, EXACT);
    EXPECT(acq(r, "k", 1, TF_RATE_LIMITER_MAX_EXACT_LIMIT - 1), 1, 1, 0);
    EXPECT(acq(r, "k", 2, 2), 0, 1, 11);
    EXPECT(acq(r, "k", 2, 1), 1, 0, 0);
    tf_rate_limiter_free(r);
}

/* peek creates nothing and takes nothing: the serialized state is the same
 * byte for byte, at the key's own time and at a later one. */
static void test_peek_changes_nothing(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(3, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 5));
        (void)acq(r, "a", 50, 2);
        (void)acq(r, "b", 60, 3);
        size_t n;
        unsigned char *before = snap(r, &n);
        const uint64_t keys = stats_of(r).keys;
        EXPECT(peek(r, "a", 50, 1), 0, 0, 150); /* global full (b took 3) */
        EXPECT(peek(r, "b", 60, 1), 0, 0, 160);
        EXPECT(peek(r, "new", 60, 1), 0, 0, 150);
        assert_unchanged(r, before, n);
        assert_int_equal(stats_of(r).keys, keys);
        /* later than the key has seen, later than anything */
        EXPECT(peek(r, "a", 60, 1), 0, 0, 150);
        EXPECT(peek(r, "a", 5000, 1), 1, 2, 0);
        EXPECT(peek(r, "new", 5000, 3), 1, 0, 0);
        size_t n2;
        unsigned char *after = snap(r, &n2);
        if (n2 != n || memcmp(after, before, n) != 0)
            fail_msg("%s: a peek later than the key's clock changed the serialized state",
                     kModes[m] ? "exact" : "bucketed");
        free(after);
        /* and so a later request at an earlier time is decided as if no
         * peek had happened: a's permits at 50 still count at 100 */
        EXPECT(acq(r, "a", 100, 1), 0, 0, 150);
        free(before);
        tf_rate_limiter_free(r);
    }
}

static void test_refund(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(3, 1000, 100, kModes[m]);
        EXPECT(acq(r, "k", 100, 1), 1, 2, 0);
        EXPECT(acq(r, "k", 200, 1), 1, 1, 0);
        EXPECT(acq(r, "k", 300, 1), 1, 0, 0);
        /* the most recent first: the permit of 300 goes back */
        OK(tf_rate_limiter_refund(r, "k", 1, 350, 1));
        EXPECT(peek(r, "k", 350, 1), 1, 0, 0);
        EXPECT(acq(r, "k", 400, 1), 1, 0, 0);
        EXPECT(acq(r, "k", 500, 1), 0, 0, 1100); /* 100 leaves first, not 300 */
        /* more than it holds: back to the full limit, no further */
        OK(tf_rate_limiter_refund(r, "k", 1, 500, 10));
        EXPECT(peek(r, "k", 500, 3), 1, 0, 0);
        EXPECT(peek(r, "k", 500, 4), 0, 3, NEVER);
        OK(tf_rate_limiter_refund(r, "k", 1, 500, NEVER));
        EXPECT(acq(r, "k", 500, 3), 1, 0, 0);
        /* permits that already left are not given back again */
        OK(tf_rate_limiter_refund(r, "k", 1, 1500, 3));
        EXPECT(acq(r, "k", 1500, 3), 1, 0, 0);
        EXPECT(acq(r, "k", 1500, 1), 0, 0, 2500);
        /* an untracked key: a no-op that creates nothing */
        const uint64_t keys = stats_of(r).keys;
        OK(tf_rate_limiter_refund(r, "nobody", 6, 1500, 2));
        OK(tf_rate_limiter_refund(r, "k", 1, 1500, 0)); /* nothing */
        assert_int_equal(stats_of(r).keys, keys);
        EXPECT(acq(r, "k", 1500, 1), 0, 0, 2500);
        /* refund at an earlier time: clamped to the key's clock */
        OK(tf_rate_limiter_refund(r, "k", 1, 10, 1));
        EXPECT(acq(r, "k", 20, 1), 1, 0, 0);
        EXPECT(acq(r, "k", 2499, 1), 0, 0, 2500);
        tf_rate_limiter_free(r);
    }
    /* the global window gets the permits back too */
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(5, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 4));
        EXPECT(acq(r, "a", 10, 4), 1, 0, 0);
        EXPECT(acq(r, "b", 20, 1), 0, 0, ex ? 1010 : 1000);
        OK(tf_rate_limiter_refund(r, "a", 1, 30, 2));
        EXPECT(acq(r, "b", 40, 1), 1, 1, 0);
        EXPECT(acq(r, "b", 40, 1), 1, 0, 0);
        EXPECT(acq(r, "c", 40, 1), 0, 0, ex ? 1010 : 1000);
        tf_rate_limiter_free(r);
    }
}

static void test_reset(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(2, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 4));
        EXPECT(acq(r, "k", 10, 2), 1, 0, 0);
        EXPECT(acq(r, "vip", 10, 4), 1, 0, 0);
        EXPECT(acq(r, "other", 10, 1), 1, 1, 0);
        assert_int_equal(stats_of(r).keys, 3);
        OK(tf_rate_limiter_reset(r, "k", 1));
        OK(tf_rate_limiter_reset(r, "vip", 3));
        assert_int_equal(stats_of(r).keys, 1);
        EXPECT(acq(r, "k", 20, 2), 1, 0, 0);
        EXPECT(acq(r, "vip", 20, 4), 1, 0, 0); /* its override stays */
        EXPECT(acq(r, "vip", 20, 1), 0, 0, ex ? 1020 : 1000);
        EXPECT(acq(r, "other", 20, 1), 1, 0, 0); /* others untouched */
        EXPECT(acq(r, "other", 20, 1), 0, 0, ex ? 1010 : 1000);
        OK(tf_rate_limiter_reset(r, "never-seen", 10)); /* a no-op */
        OK(tf_rate_limiter_reset(r, NULL, 0));          /* the empty key */
        assert_int_equal(stats_of(r).keys, 3);
        tf_rate_limiter_free(r);
    }
}

/* Keys are their bytes: NUL bytes, the empty key, long keys. */
static void test_keys_are_bytes(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const uint64_t at = (kModes[m] & EXACT) ? 105 : 100; /* when the permits of 5 leave */
        tf_rate_limiter *r = make(1, 100, 10, kModes[m]);
        const char long_a[] = "a key that is longer than sixteen bytes, kept out of line";
        char long_b[sizeof long_a];
        memcpy(long_b, long_a, sizeof long_a);
        long_b[sizeof long_a - 2] ^= 1;
        EXPECT(acq_b(r, NULL, 0, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "", 0, 5, 1), 0, 0, at); /* the same empty key */
        EXPECT(acq_b(r, "\0", 1, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "\0\0", 2, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "a\0b", 3, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, "a\0c", 3, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, long_a, sizeof long_a, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, long_b, sizeof long_b, 5, 1), 1, 0, 0);
        EXPECT(acq_b(r, long_a, sizeof long_a, 6, 1), 0, 0, at);
        EXPECT(acq_b(r, long_a, 16, 6, 1), 1, 0, 0); /* its 16-byte prefix is another key */
        assert_int_equal(stats_of(r).keys, 8);
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq_b(c, long_b, sizeof long_b, 7, 1), 0, 0, at);
        EXPECT(acq_b(c, "a\0b", 3, 7, 1), 0, 0, at);
        tf_rate_limiter_free(c);
        tf_rate_limiter_free(r);
    }
}

/* ------------------------------------------------------------------ */
/* global limit and overrides                                          */

static void test_global_and_overrides(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(3, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 5));
        OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 100)); /* above the global */
        OK(tf_rate_limiter_set_key_limit(r, "low", 3, 1));   /* below the default */
        OK(tf_rate_limiter_set_key_limit(r, "mid", 3, 4));   /* above the default */
        /* an override cannot take more than the global limit */
        EXPECT(acq(r, "vip", 100, 6), 0, 5, NEVER);
        EXPECT(acq(r, "vip", 100, 4), 1, 1, 0);
        EXPECT(acq(r, "vip", 150, 2), 0, 1, 1100);
        EXPECT(acq(r, "low", 150, 1), 1, 0, 0);
        EXPECT(acq(r, "vip", 150, 1), 0, 0, 1100);
        EXPECT(acq(r, "k", 150, 1), 0, 0, 1100);
        /* when the global window empties, each key up to its own limit */
        EXPECT(acq(r, "low", 1150, 2), 0, 1, NEVER);
        EXPECT(acq(r, "low", 1150, 1), 1, 0, 0);
        EXPECT(acq(r, "low", 1150, 1), 0, 0, ex ? 2150 : 2100);
        EXPECT(acq(r, "mid", 1150, 4), 1, 0, 0);              /* 4 > the default of 3 */
        EXPECT(acq(r, "k", 1150, 1), 0, 0, ex ? 2150 : 2100); /* global full again */
        /* 10 keys share the global window in any window */
        tf_rate_limiter *q = make(3, 1000, 100, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(q, 7));
        uint64_t per_window[40] = {0}, total = 0;
        for (uint64_t t = 1; t <= 20000; t += 37) {
            for (uint64_t id = 0; id < 10; ++id) {
                dec d = acq_id(q, id, t, 1 + id % 2);
                if (d.allowed) per_window[t / 500] += 1 + id % 2;
            }
        }
        for (int i = 0; i + 1 < 40; ++i) {
            /* a 1000-long stretch [500 i, 500 i + 1000): at most 7 exact; the
             * bucketed global window can take up to 2 * 7 */
            uint64_t two = per_window[i] + per_window[i + 1];
            assert_true(two <= (ex ? 7u : 14u));
            total += per_window[i];
        }
        assert_true(total >= 7 * 15);
        tf_rate_limiter_free(q);
        /* changing and removing overrides on tracked keys */
        OK(tf_rate_limiter_set_global_limit(r, 0)); /* no global limit */
        EXPECT(acq(r, "k", 1200, 3), 1, 0, 0);
        OK(tf_rate_limiter_set_key_limit(r, "k", 1, 5));
        EXPECT(peek(r, "k", 1200, 2), 1, 0, 0);
        EXPECT(acq(r, "k", 1200, 3), 0, 2, 2200);
        OK(tf_rate_limiter_set_key_limit(r, "k", 1, 0)); /* back to the default */
        EXPECT(acq(r, "k", 1200, 1), 0, 0, 2200);
        OK(tf_rate_limiter_set_key_limit(r, "mid", 3, 2)); /* below what it holds */
        EXPECT(acq(r, "mid", 1200, 1), 0, 0, ex ? 2150 : 2100);
        EXPECT(acq(r, "mid", ex ? 2150 : 2100, 2), 1, 0, 0);
        /* an override set before the key is ever seen, kept while idle */
        OK(tf_rate_limiter_set_key_limit(r, "later", 5, 2));
        EXPECT(acq(r, "later", 3000, 2), 1, 0, 0);
        EXPECT(acq(r, "later", 9000, 3), 0, 2, NEVER);
        tf_rate_limiter_free(r);
    }
}

/* With a global limit, remaining is bounded by the global window's room
 * on every decision, including one the key itself refuses. */
static void test_remaining_bounded_by_global(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        EXPECT(acq(r, "A", 5, 1), 1, 1, 0);
        EXPECT(acq(r, "B", 6, 1), 1, 0, 0);
        dec d = acq(r, "A", 7, 10); /* more than A's limit: never */
        assert_int_equal(d.allowed, 0);
        assert_int_equal(d.retry_at, NEVER);
        if (d.remaining != 0)
            fail_msg("%s: remaining %llu although the global window has no room", kModes[m] ? "exact" : "bucketed",
                     ULL(d.remaining));
        tf_rate_limiter_free(r);
        /* the key would grant n = 2 (then 0 left), the global window has 1:
         * denied, nothing taken, so 1 remains (the key still has 2) */
        r = make(3, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        EXPECT(acq(r, "A", 5, 1), 1, 1, 0);
        EXPECT(peek(r, "A", 6, 2), 0, 1, (kModes[m] & EXACT) ? 105 : 100);
        EXPECT(acq(r, "A", 6, 2), 0, 1, (kModes[m] & EXACT) ? 105 : 100);
        tf_rate_limiter_free(r);
    }
}

/* retry_at when both the key and the global window refuse: the later of
 * the two times, at which the request is granted. */
static void test_retry_at_with_global_and_key(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(2, 100, 5, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        EXPECT(acq(r, "A", 5, 1), 1, 1, 0);
        EXPECT(acq(r, "B", 10, 1), 1, 0, 0);
        /* A needs its permit of 5 gone (105) and the global window both (110) */
        dec d = acq(r, "A", 15, 2);
        assert_int_equal(d.allowed, 0);
        tf_rate_limiter *c = clone_of(r);
        const int early = acq(c, "A", d.retry_at > 0 ? d.retry_at - 1 : 0 + 1, 2).allowed;
        const int on_time = acq(c, "A", d.retry_at, 2).allowed;
        tf_rate_limiter_free(c);
        if (d.retry_at != 110 || early || !on_time)
            fail_msg("%s: retry_at %llu (want 110); granted one unit before: %d, at it: %d",
                     kModes[m] ? "exact" : "bucketed", ULL(d.retry_at), early, on_time);
        tf_rate_limiter_free(r);
    }
}

/* A refund gives the key's own permits back to the global window: in
 * exact mode the global limit holds in every window afterwards. */
static void test_global_refund_gives_back_the_keys_permits(void **state) {
    (void)state;
    tf_rate_limiter *r = make(10, 100, 0, EXACT);
    OK(tf_rate_limiter_set_global_limit(r, 2));
    EXPECT(acq(r, "A", 10, 1), 1, 1, 0);
    EXPECT(acq(r, "B", 50, 1), 1, 0, 0);
    OK(tf_rate_limiter_refund(r, "A", 1, 60, 1)); /* A's permit of 10 goes back */
    /* B's permit of 50 counts until 150: one more in (11, 111] at most */
    EXPECT(acq(r, "C", 111, 1), 1, 0, 0);
    EXPECT(acq(r, "D", 111, 1), 0, 0, 150);
    tf_rate_limiter_free(r);
}

/* Fail-open admits a new key the full table cannot track; the global
 * limit ("requests are then granted only when both the key and the global
 * window allow them") still holds. */
static void test_full_allow_keeps_the_global_limit(void **state) {
    (void)state;
    tf_rate_limiter *r = make(5, 100, 10, TF_RATE_LIMITER_FULL_ALLOW);
    OK(tf_rate_limiter_set_global_limit(r, 3));
    OK(tf_rate_limiter_set_max_keys(r, 1));
    EXPECT(acq(r, "A", 5, 3), 1, 0, 0);
    dec d = acq(r, "B", 6, 1);
    tf_rate_limiter_stats s = stats_of(r);
    if (d.allowed)
        fail_msg("an untracked key was admitted past a full global window (allowed_full %llu)", ULL(s.allowed_full));
    tf_rate_limiter_free(r);
}

/* The same interplay as a property: 200 keys, overrides above and below
 * the default and above the global limit, the global limit binding often. */
static void test_global_property(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        prop_cfg c = {kModes[m], 4, 1000, 100, 40, 300, 16, 100, 300000, 0, 21 + m};
        ref rm;
        tf_rate_limiter *r;
        run_property(&c, &rm, &r);
        uint64_t lim;
        for (size_t id = 0; id < c.nkeys; ++id) {
            uint64_t most = max_in_interval(&rm, (long)id, c.window, 0, &lim);
            if (kModes[m] & EXACT) assert_true(most <= lim);
        }
        uint64_t g = max_in_interval(&rm, -1, c.window, 1, &lim);
        uint64_t g_short = max_in_interval(&rm, -1, c.window - c.width + 1, 1, &lim);
        assert_true(g_short <= c.global);
        assert_true(g <= ((kModes[m] & EXACT) ? c.global : 2 * c.global));
        assert_true(g_short == c.global); /* it did bind */
        ref_free(&rm);
        tf_rate_limiter_free(r);
    }
}

/* ------------------------------------------------------------------ */
/* idle keys and the bound on keys                                     */

static void test_idle_reclamation(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const uint64_t W = 1000;
        tf_rate_limiter *r = make(2, W, 100, kModes[m]);
        OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 1));
        EXPECT(acq(r, "vip", 1000, 1), 1, 0, 0);
        /* group A at 1000, group B at 1500 */
        for (uint64_t id = 0; id < 1000; ++id) assert_int_equal(acq_id(r, id, 1000, 2).allowed, 1);
        for (uint64_t id = 1000; id < 2000; ++id) assert_int_equal(acq_id(r, id, 1500, 1).allowed, 1);
        assert_int_equal(stats_of(r).keys, 2001);
        /* one unit before A's window passes nothing is reclaimed */
        tu_rng g = {5};
        for (int i = 0; i < 20000; ++i) (void)acq_id(r, 1000 + tu_below(&g, 1000), 1000 + W - 1, 1);
        tf_rate_limiter_stats s = stats_of(r);
        assert_int_equal(s.keys, 2001);
        assert_int_equal(s.reclaimed, 0);
        /* group A's permits still count */
        EXPECT(acq_id(r, 7, 1000 + W - 1, 1), 0, 0, 2000);
        /* from then on, requests of group B reclaim group A a few at a time */
        uint64_t prev = 0;
        for (int i = 0; i < 20000; ++i) {
            (void)acq_id(r, 1000 + tu_below(&g, 1000), 1000 + W + (uint64_t)i / 100, 1);
            s = stats_of(r);
            assert_true(s.reclaimed - prev <=
                        8); /* never a full scan: no new key here, so a request sweeps at most 8 slots */
            prev = s.reclaimed;
        }
        /* all of A (but key 7, asked at 1999) and vip are gone, B stays */
        assert_int_equal(s.keys, 1001);
        assert_int_equal(s.reclaimed, 1000);
        /* a reclaimed key starts afresh; its override stayed */
        EXPECT(acq_id(r, 3, 3000, 2), 1, 0, 0);
        EXPECT(acq(r, "vip", 3000, 1), 1, 0, 0);
        EXPECT(acq(r, "vip", 3000, 1), 0, 0, 4000);
        tf_rate_limiter_free(r);
    }
}

/* A large table where only a few keys are touched afterwards still
 * reclaims its idle keys over time. */
static void test_idle_reclaimed_when_few_keys_are_touched(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        for (uint64_t id = 0; id < 10000; ++id) (void)acq_id(r, id, 10, 1);
        for (uint64_t i = 0; i < 200000; ++i) (void)acq(r, i % 2 ? "a" : "b", 200 + i, 1);
        tf_rate_limiter_stats s = stats_of(r);
        if (s.keys > 2 + 64)
            fail_msg("%s: %llu keys still tracked (reclaimed %llu) after 200000 requests on 2 keys, all others idle",
                     kModes[m] ? "exact" : "bucketed", ULL(s.keys), ULL(s.reclaimed));
        tf_rate_limiter_free(r);
    }
}

/* A key's clock is its own: another key's newer time may reclaim it only
 * once nothing of it counts at any time the key can still be asked about. */
static void test_reclaim_respects_the_keys_clock(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(1, 100, 10, kModes[m]);
        EXPECT(acq(r, "A", 1000, 1), 1, 0, 0);
        /* many other keys at 1200 (a client whose clock runs ahead) */
        for (uint64_t id = 0; id < 3000; ++id) (void)acq_id(r, id, 1200, 1);
        /* A at 1050 by its own clock: its permit of 1000 still counts */
        dec d = acq(r, "A", 1050, 1);
        if (d.allowed)
            fail_msg("%s: A granted twice within its window (reclaimed %llu keys)", kModes[m] ? "exact" : "bucketed",
                     ULL(stats_of(r).reclaimed));
        EXPECT(d, 0, 0, 1100);
        tf_rate_limiter_free(r);
    }
}

static void test_max_keys(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (int allow = 0; allow < 2; ++allow) {
            const uint32_t flags = kModes[m] | (allow ? TF_RATE_LIMITER_FULL_ALLOW : 0);
            tf_rate_limiter *r = make(2, 100, 10, flags);
            OK(tf_rate_limiter_set_max_keys(r, 10));
            for (uint64_t id = 0; id < 10; ++id) EXPECT(acq_id(r, id, 50, 1), 1, 1, 0);
            /* full: a new key is denied for good (fail closed) or admitted
             * untracked (fail open) */
            for (uint64_t id = 10; id < 15; ++id) {
                dec d = acq_id(r, id, 60, 1);
                if (allow)
                    EXPECT(d, 1, 0, 0);
                else
                    EXPECT(d, 0, 0, NEVER);
            }
            if (allow) EXPECT(acq_id(r, 10, 61, 2), 1, 0, 0); /* untracked: admitted again */
            tf_rate_limiter_stats s = stats_of(r);
            assert_int_equal(s.keys, 10);
            assert_int_equal(s.denied_full, allow ? 0 : 5);
            assert_int_equal(s.allowed_full, allow ? 6 : 0);
            /* tracked keys carry on */
            EXPECT(acq_id(r, 3, 70, 1), 1, 0, 0);
            EXPECT(acq_id(r, 3, 70, 1), 0, 0, 150);
            /* a reset frees a place */
            tu_key k3 = tu_make_key('L', 3);
            OK(tf_rate_limiter_reset(r, k3.b, sizeof k3.b));
            EXPECT(acq_id(r, 20, 80, 1), 1, 1, 0);
            s = stats_of(r);
            assert_int_equal(s.keys, 10);
            /* no bound */
            OK(tf_rate_limiter_set_max_keys(r, 0));
            for (uint64_t id = 30; id < 40; ++id) EXPECT(acq_id(r, id, 90, 1), 1, 1, 0);
            assert_int_equal(stats_of(r).keys, 20);
            /* a bound below the keys already tracked */
            OK(tf_rate_limiter_set_max_keys(r, 5));
            EXPECT(acq_id(r, 31, 91, 1), 1, 0, 0);
            dec d = acq_id(r, 50, 91, 1);
            assert_int_equal(d.allowed, allow);
            s = stats_of(r);
            assert_int_equal(s.keys, 20);
            assert_int_equal(s.denied_full + s.allowed_full, allow ? 7 : 6);
            tf_rate_limiter_free(r);
        }
    }
}

/* When the table is full and every key is idle, a new key takes the
 * place of an idle one ("denied when no idle key can be reclaimed"). */
static void test_max_keys_reclaims_idle_keys(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(2, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_max_keys(r, 10));
        for (uint64_t id = 0; id < 10; ++id) EXPECT(acq_id(r, id, 50, 1), 1, 1, 0);
        /* at 1000 every tracked key is idle */
        uint64_t admitted = 0;
        for (uint64_t id = 100; id < 110; ++id) admitted += (uint64_t)acq_id(r, id, 1000, 1).allowed;
        tf_rate_limiter_stats s = stats_of(r);
        if (admitted != 10)
            fail_msg("%s: %llu of 10 new keys admitted with 10 idle keys to reclaim (reclaimed %llu, denied_full %llu)",
                     kModes[m] ? "exact" : "bucketed", ULL(admitted), ULL(s.reclaimed), ULL(s.denied_full));
        assert_int_equal(s.keys, 10);
        tf_rate_limiter_free(r);
    }
}

/* peek answers what acquire would: a full table denies new keys. */
static void test_peek_when_full(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_max_keys(r, 1));
        EXPECT(acq(r, "A", 5, 1), 1, 4, 0);
        dec p = peek(r, "Z", 6, 1), a = acq(r, "Z", 6, 1);
        if (p.allowed != a.allowed || p.remaining != a.remaining || p.retry_at != a.retry_at)
            fail_msg("%s: peek says (%d, %llu, %llu), acquire then (%d, %llu, %llu)", kModes[m] ? "exact" : "bucketed",
                     p.allowed, ULL(p.remaining), ULL(p.retry_at), a.allowed, ULL(a.remaining), ULL(a.retry_at));
        tf_rate_limiter_free(r);
    }
}

/* After a room search that found nothing, acquire looks only at its own
 * shard for a while; peek must answer the same (found by the Go binding's
 * tests). */
static void test_peek_follows_the_room_search(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_max_keys(r, 1));
        EXPECT(acq(r, "A", 10, 1), 1, 4, 0);
        EXPECT(acq(r, "B", 11, 1), 0, 0, NEVER); /* full, A not idle yet */
        char key[8];
        for (int i = 0; i < 40; ++i) {
            snprintf(key, sizeof key, "Z%d", i);
            dec p = peek(r, key, 1000, 1), a = acq(r, key, 1000, 1);
            if (p.allowed != a.allowed || p.remaining != a.remaining || p.retry_at != a.retry_at)
                fail_msg("%s: %s: peek says (%d, %llu, %llu), acquire then (%d, %llu, %llu)",
                         kModes[m] ? "exact" : "bucketed", key, p.allowed, ULL(p.remaining), ULL(p.retry_at), a.allowed,
                         ULL(a.remaining), ULL(a.retry_at));
        }
        tf_rate_limiter_free(r);
    }
}

/* A request a full table refuses still brings the global window to its
 * time, like any other denied acquire (found by the Go binding's tests). */
static void test_full_table_denial_moves_the_global_clock(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        OK(tf_rate_limiter_set_global_limit(r, 2));
        OK(tf_rate_limiter_set_max_keys(r, 1));
        EXPECT(acq(r, "A", 10, 1), 1, 1, 0);
        EXPECT(acq(r, "A", 20, 1), 1, 0, 0);
        EXPECT(acq(r, "B", 115, 1), 0, 0, NEVER); /* full: A is not idle at 115 */
        /* the global window is at 115: the permit of 10 has left it */
        EXPECT(acq(r, "A", 50, 1), 1, 0, 0);
        tf_rate_limiter_free(r);
    }
}

/* acquire_batch decides exactly as the same single calls in order: the
 * same answers and, afterwards, the same state byte for byte (both modes,
 * global limit and overrides, inline, out-of-line and empty keys, times
 * going backwards, batches across the library's 64-key chunks). */
static void test_acquire_batch_equals_single_calls(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *a = make(4, 1000, 100, kModes[m]), *b = make(4, 1000, 100, kModes[m]);
        for (int i = 0; i < 2; ++i) {
            tf_rate_limiter *r = i ? b : a;
            OK(tf_rate_limiter_set_global_limit(r, 300));
            OK(tf_rate_limiter_set_key_limit(r, "k7", 2, 9));
        }
        enum { NK = 500, MAXB = 200 };
        char names[NK][48];
        size_t lens[NK];
        for (int k = 0; k < NK; ++k) {
            lens[k] = (size_t)snprintf(names[k], sizeof names[k], "k%d", k);
            if (k % 7 == 3) lens[k] = (size_t)snprintf(names[k], sizeof names[k], "a longer key, out of line, %d", k);
            if (k == 0) lens[k] = 0;
        }
        tu_rng g = {31 + m};
        uint64_t now = 1, batches = 0, granted = 0, denied = 0;
        const void *keys[MAXB];
        size_t klens[MAXB];
        uint64_t times[MAXB], rem[MAXB], retry[MAXB];
        int allowed[MAXB];
        for (long done = 0; done < 40000; ++batches) {
            const size_t count = 1 + tu_below(&g, MAXB);
            const uint64_t n = 1 + tu_below(&g, 2);
            for (size_t i = 0; i < count; ++i) {
                const size_t k = tu_below(&g, NK);
                keys[i] = k == 0 && tu_below(&g, 2) ? NULL : names[k];
                klens[i] = lens[k];
                now += tu_below(&g, 5);
                times[i] = tu_below(&g, 10) == 0 && now > 500 ? now - tu_below(&g, 500) : now;
            }
            OK(tf_rate_limiter_acquire_batch(b, keys, klens, count, times, n, allowed, rem, retry));
            for (size_t i = 0; i < count; ++i) {
                dec d = acq_b(a, keys[i], klens[i], times[i], n);
                if (d.allowed != allowed[i] || d.remaining != rem[i] || d.retry_at != retry[i])
                    fail_msg("%s: batch %llu entry %zu: batch (%d, %llu, %llu), single call (%d, %llu, %llu)",
                             kModes[m] ? "exact" : "bucketed", ULL(batches), i, allowed[i], ULL(rem[i]), ULL(retry[i]),
                             d.allowed, ULL(d.remaining), ULL(d.retry_at));
                granted += (uint64_t)d.allowed;
                denied += (uint64_t)!d.allowed;
            }
            done += (long)count;
        }
        assert_true(granted > 1000 && denied > 1000);
        size_t na, nb;
        unsigned char *sa = snap(a, &na), *sb = snap(b, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(sa, sb, na);
        /* remaining and retry_at may be NULL */
        const void *k1[1] = {"k1"};
        size_t l1[1] = {2};
        uint64_t t1[1] = {now};
        int al[1] = {-1};
        OK(tf_rate_limiter_acquire_batch(b, k1, l1, 1, t1, 1, al, NULL, NULL));
        assert_int_equal(al[0], acq_b(a, "k1", 2, now, 1).allowed);
        free(sa);
        free(sb);
        tf_rate_limiter_free(a);
        tf_rate_limiter_free(b);
    }
}

/* Every bad argument of a batch is refused before any decision. */
static void test_acquire_batch_bad_input(void **state) {
    (void)state;
    tf_rate_limiter *r = make(2, 100, 10, 0);
    EXPECT(acq(r, "x", 5, 1), 1, 1, 0);
    size_t n;
    unsigned char *before = snap(r, &n);
    const void *keys[3] = {"x", "y", "z"};
    size_t lens[3] = {1, 1, 1};
    uint64_t times[3] = {6, 7, 8}, rem[3], retry[3];
    int allowed[3];
    assert_int_equal(tf_rate_limiter_acquire_batch(NULL, keys, lens, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, NULL, lens, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, NULL, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, NULL, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, times, 1, NULL, rem, retry), TF_ERR_NULL);
    const void *holes[3] = {"x", NULL, "z"};
    assert_int_equal(tf_rate_limiter_acquire_batch(r, holes, lens, 3, times, 1, allowed, rem, retry), TF_ERR_NULL);
    assert_non_null(strstr(tf_last_error_message(), "keys[1]"));
    uint64_t zero[3] = {6, 7, 0};
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, zero, 1, allowed, rem, retry),
                     TF_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tf_last_error_message(), "times[2]"));
    assert_int_equal(tf_rate_limiter_acquire_batch(r, keys, lens, 3, times, 0, allowed, rem, retry),
                     TF_ERR_INVALID_ARGUMENT);
    OK(tf_rate_limiter_acquire_batch(r, NULL, NULL, 0, NULL, 1, NULL, NULL, NULL)); /* nothing to do */
    assert_unchanged(r, before, n);
    assert_int_equal(stats_of(r).keys, 1);
    /* a huge n is an answer, not an error */
    OK(tf_rate_limiter_acquire_batch(r, keys, lens, 3, times, NEVER, allowed, rem, retry));
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(allowed[i], 0);
        assert_int_equal(retry[i], NEVER);
    }
    free(before);
    tf_rate_limiter_free(r);
}

/* A bound lowered below the keys tracked: a new key reclaims as many idle
 * keys as it takes to go under it, and peek counts alike (found by the
 * fuzz target). With one idle key too few, the new key is refused. */
static void test_lowered_bound_makes_room(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        EXPECT(acq(r, "A", 1, 1), 1, 4, 0);
        EXPECT(acq(r, "B", 1, 1), 1, 4, 0);
        EXPECT(acq(r, "C", 1, 1), 1, 4, 0);
        OK(tf_rate_limiter_set_max_keys(r, 1));
        EXPECT(peek(r, "D", 1000, 1), 1, 4, 0);
        EXPECT(acq(r, "D", 1000, 1), 1, 4, 0);
        tf_rate_limiter_stats s = stats_of(r);
        assert_int_equal(s.keys, 1);
        assert_int_equal(s.reclaimed, 3);
        assert_int_equal(s.denied_full, 0);
        /* two busy keys, one idle, bound 2: reclaiming the idle one is not enough */
        OK(tf_rate_limiter_set_max_keys(r, 0));
        EXPECT(acq(r, "E", 1000, 1), 1, 4, 0);
        EXPECT(acq(r, "F", 1500, 1), 1, 4, 0);
        EXPECT(acq(r, "G", 1500, 1), 1, 4, 0);
        OK(tf_rate_limiter_set_max_keys(r, 2));
        /* at 1550: D and E idle, F and G busy; 4 keys, bound 2: 3 must go, 2 can */
        EXPECT(peek(r, "H", 1550, 1), 0, 0, NEVER);
        EXPECT(acq(r, "H", 1550, 1), 0, 0, NEVER);
        s = stats_of(r);
        assert_int_equal(s.keys, 2); /* the idle ones went anyway */
        assert_int_equal(s.denied_full, 1);
        tf_rate_limiter_free(r);
    }
}

/* Memory per key as documented (56 bytes per key for 10 buckets and short
 * keys, plus the table's spare room: the table doubles past a load of 7/8,
 * so between 64 and 128 per key; exact: 8 * limit + 40 plus spare room). */
static void test_memory_per_key(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const uint64_t L = 10;
        tf_rate_limiter *r = make(L, 1000, 100, kModes[m]);
        const uint64_t empty = stats_of(r).memory;
        const uint64_t N = 100000;
        for (uint64_t id = 0; id < N; ++id) (void)acq_id(r, id, 5, 1);
        tf_rate_limiter_stats s = stats_of(r);
        assert_int_equal(s.keys, N);
        const double per_key = (double)(s.memory - empty) / (double)N;
        print_message("# %s, 10 buckets, limit %llu: %.1f bytes per key (%llu keys)\n",
                      kModes[m] ? "exact" : "bucketed", ULL(L), per_key, ULL(N));
        if (kModes[m] & EXACT) {
            assert_true(per_key >= 8.0 * L + 40);
            assert_true(per_key <= 8.0 * L + 24 + 40.0 * 16 / 7 + 1);
        } else {
            assert_true(per_key >= 56);
            assert_true(per_key <= 56.0 * 16 / 7 + 1);
        }
        tf_rate_limiter_free(r);
    }
}

/* ------------------------------------------------------------------ */
/* clocks that go backwards                                            */

static void test_clock_backwards(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = make(2, 1000, 100, kModes[m]);
        EXPECT(acq(r, "k", 10000, 2), 1, 0, 0);
        dec d = acq(r, "k", 10050, 1);
        EXPECT(d, 0, 0, 11000);
        size_t n;
        unsigned char *before = snap(r, &n);
        /* earlier times: the same decision, nothing changes */
        EXPECT(acq(r, "k", 5000, 1), 0, 0, 11000);
        EXPECT(acq(r, "k", 1, 1), 0, 0, 11000);
        EXPECT(acq(r, "k", 10049, 2), 0, 0, 11000);
        OK(tf_rate_limiter_refund(r, "k", 1, 10050, 0));
        assert_unchanged(r, before, n);
        free(before);
        /* a permit granted at an earlier time is recorded at the key's time */
        EXPECT(acq(r, "j", 10000, 1), 1, 1, 0);
        EXPECT(acq(r, "j", 100, 1), 1, 0, 0);
        EXPECT(acq(r, "j", 10999, 1), 0, 0, 11000);
        EXPECT(acq(r, "j", 11000, 2), 1, 0, 0);
        /* the global window has its own clock */
        OK(tf_rate_limiter_set_global_limit(r, 1));
        EXPECT(acq(r, "a", 50000, 1), 1, 0, 0);
        EXPECT(acq(r, "b", 100, 1), 0, 0, 51000);
        EXPECT(acq(r, "b", 50999, 1), 0, 0, 51000);
        EXPECT(acq(r, "b", 51000, 1), 1, 0, 0);
        /* the far end of time: no overflow, no wrap */
        OK(tf_rate_limiter_set_global_limit(r, 0));
        EXPECT(acq(r, "end", NEVER - 5, 2), 1, 0, 0);
        EXPECT(acq(r, "end", NEVER, 1), 0, 0, NEVER); /* its permits leave past the end of time */
        EXPECT(acq(r, "end", 7, 1), 0, 0, NEVER);
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq(c, "end", 8, 1), 0, 0, NEVER);
        tf_rate_limiter_free(c);
        (void)ex;
        tf_rate_limiter_free(r);
    }
}

/* ------------------------------------------------------------------ */
/* many threads                                                        */

#define CT_THREADS 8
#define CT_STEP 10 /* time units per phase = bucket width */
#define CT_WINDOW 40
#define CT_PHASES 300

typedef struct {
    tf_rate_limiter *r;
    pthread_barrier_t *bar;
    unsigned id, per_phase, nkeys;
    int jitter, mixed;
    uint32_t *granted; /* [phase][key] permits */
    uint32_t *asked;   /* [phase][key] requests */
    int failed;
} ct_arg;

static void *ct_worker(void *p) {
    ct_arg *a = p;
    tu_rng g = {1000 + a->id};
    for (unsigned ph = 0; ph < CT_PHASES; ++ph) {
        pthread_barrier_wait(a->bar);
        const uint64_t base = (uint64_t)CT_STEP * (ph + 1);
        for (unsigned i = 0; i < a->per_phase; ++i) {
            const unsigned key = (unsigned)tu_below(&g, a->nkeys);
            const uint64_t n = a->mixed ? 1 + tu_below(&g, 2) : 1;
            const uint64_t now = base + (a->jitter ? tu_below(&g, CT_STEP) : 0);
            tu_key k = tu_make_key('T', key);
            int allowed = -1;
            uint64_t rem, retry;
            if (tf_rate_limiter_acquire(a->r, k.b, sizeof k.b, now, n, &allowed, &rem, &retry) != TF_OK ||
                allowed < 0 || (allowed && retry != 0) || (!allowed && retry <= now))
                a->failed = 1;
            if (allowed) a->granted[ph * a->nkeys + key] += (uint32_t)n;
            a->asked[ph * a->nkeys + key] += 1;
            if (i % 8 == 7) { /* readers meanwhile */
                tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT;
                tf_rate_limiter_info info = TF_RATE_LIMITER_INFO_INIT;
                if (tf_rate_limiter_peek(a->r, k.b, sizeof k.b, now, 1, &allowed, NULL, NULL) != TF_OK ||
                    tf_rate_limiter_get_stats(a->r, &st) != TF_OK || tf_rate_limiter_get_info(a->r, &info) != TF_OK ||
                    info.window != CT_WINDOW)
                    a->failed = 1;
            }
        }
    }
    return NULL;
}

/* 8 threads on overlapping keys in phases of CT_STEP time units (times
 * within a phase in any order across threads). In any CT_WINDOW / CT_STEP
 * consecutive phases a key gets at most its limit and all keys at most the
 * global limit; with one time per phase and one permit per request the
 * totals are exactly what the rules give, whatever the interleaving. */
static void concurrent_run(uint32_t flags, uint64_t limit, uint64_t global, int jitter, int mixed) {
    const unsigned nkeys = 32, per_phase = 12;
    tf_rate_limiter *r = make(limit, CT_WINDOW, CT_STEP, flags);
    if (global) OK(tf_rate_limiter_set_global_limit(r, global));
    pthread_barrier_t bar;
    assert_int_equal(pthread_barrier_init(&bar, NULL, CT_THREADS), 0);
    ct_arg args[CT_THREADS];
    pthread_t th[CT_THREADS];
    for (unsigned t = 0; t < CT_THREADS; ++t) {
        ct_arg a = {r, &bar, t, per_phase, nkeys, jitter, mixed, NULL, NULL, 0};
        a.granted = calloc((size_t)CT_PHASES * nkeys, sizeof(uint32_t));
        a.asked = calloc((size_t)CT_PHASES * nkeys, sizeof(uint32_t));
        assert_true(a.granted && a.asked);
        args[t] = a;
    }
    for (unsigned t = 0; t < CT_THREADS; ++t) assert_int_equal(pthread_create(&th[t], NULL, ct_worker, &args[t]), 0);
    for (unsigned t = 0; t < CT_THREADS; ++t) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
    uint64_t *gk = calloc((size_t)CT_PHASES * nkeys, sizeof(uint64_t)), *ak = calloc((size_t)CT_PHASES * nkeys, 8);
    assert_true(gk && ak);
    for (unsigned t = 0; t < CT_THREADS; ++t) {
        assert_int_equal(args[t].failed, 0);
        for (size_t i = 0; i < (size_t)CT_PHASES * nkeys; ++i) gk[i] += args[t].granted[i], ak[i] += args[t].asked[i];
        free(args[t].granted);
        free(args[t].asked);
    }
    const unsigned span = CT_WINDOW / CT_STEP;
    const int exact_totals = !jitter && !mixed;
    uint64_t total = 0, binding = 0;
    uint64_t *want = calloc(nkeys, sizeof(uint64_t));
    assert_non_null(want);
    for (unsigned ph = 0; ph < CT_PHASES; ++ph) {
        uint64_t in_window_all = 0, before_all = 0, want_sum = 0, phase_total = 0;
        for (unsigned k = 0; k < nkeys; ++k) {
            uint64_t inwin = 0; /* phases ph - span + 1 .. ph */
            for (unsigned q = ph + 1 >= span ? ph + 1 - span : 0; q <= ph; ++q) inwin += gk[q * nkeys + k];
            if (inwin > limit)
                fail_msg("phase %u key %u: %llu permits in one window (limit %llu)", ph, k, ULL(inwin), ULL(limit));
            const uint64_t got = gk[ph * nkeys + k], before = inwin - got, asked = ak[ph * nkeys + k];
            want[k] = asked < limit - before ? asked : limit - before;
            want_sum += want[k];
            in_window_all += inwin;
            before_all += before;
            phase_total += got;
        }
        if (global && in_window_all > global)
            fail_msg("phase %u: %llu permits in one window (global %llu)", ph, ULL(in_window_all), ULL(global));
        if (exact_totals) {
            /* one time per phase, one permit per request: every key gets
             * min(asked, its room) unless the global room runs out first,
             * and then the global room is used up exactly */
            const uint64_t room_all = global ? global - before_all : NEVER;
            if (want_sum <= room_all) {
                for (unsigned k = 0; k < nkeys; ++k)
                    if (gk[ph * nkeys + k] != want[k])
                        fail_msg("phase %u key %u: %llu granted, want %llu (asked %llu)", ph, k,
                                 ULL(gk[ph * nkeys + k]), ULL(want[k]), ULL(ak[ph * nkeys + k]));
            } else {
                binding++;
                if (phase_total != room_all)
                    fail_msg("phase %u: %llu granted, want the global room %llu (demand %llu)", ph, ULL(phase_total),
                             ULL(room_all), ULL(want_sum));
            }
        }
        total += phase_total;
    }
    free(want);
    assert_true(total > CT_PHASES);
    if (global && exact_totals) assert_true(binding > 10);
    free(gk);
    free(ak);
    tf_rate_limiter_free(r);
}

static void test_concurrent_windows(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        concurrent_run(kModes[m], 3, 0, 0, 0);  /* exact totals per key */
        concurrent_run(kModes[m], 3, 40, 0, 0); /* exact totals with the global limit */
        concurrent_run(kModes[m], 3, 40, 1, 1); /* any order, n = 1 or 2: bounds */
        concurrent_run(kModes[m], 5, 0, 1, 1);
    }
}

typedef struct {
    tf_rate_limiter *r;
    unsigned id;
    uint32_t *granted; /* per key */
    int failed;
    long blobs;
} fr_arg;

#define FR_KEYS 3000
#define FR_REQUESTS 20000

static void *fr_worker(void *p) {
    fr_arg *a = p;
    tu_rng g = {500 + a->id};
    for (uint64_t i = 0; i < FR_REQUESTS; ++i) {
        const unsigned key = (unsigned)tu_below(&g, FR_KEYS);
        tu_key k = tu_make_key('F', key);
        int allowed = -1;
        if (tf_rate_limiter_acquire(a->r, k.b, sizeof k.b, 1 + i, 1, &allowed, NULL, NULL) != TF_OK) a->failed = 1;
        if (allowed == 1) a->granted[key]++;
        if (a->id == 0 && i % 2000 == 0) { /* a snapshot meanwhile reads back */
            size_t need = 0, w = 0;
            if (tf_rate_limiter_serialized_size(a->r, &need) != TF_OK) a->failed = 1;
            for (;;) {
                unsigned char *buf = malloc(need + 1);
                tf_status st = tf_rate_limiter_serialize(a->r, buf, need, &w);
                if (st == TF_ERR_BUFFER_TOO_SMALL) {
                    need = w;
                    free(buf);
                    continue;
                }
                tf_rate_limiter *c = NULL;
                if (st != TF_OK || tf_rate_limiter_deserialize(buf, w, NULL, &c) != TF_OK) a->failed = 1;
                tf_rate_limiter_free(c);
                free(buf);
                a->blobs++;
                break;
            }
        }
    }
    return NULL;
}

/* Free-running threads growing the table on shared keys; nothing leaves
 * the window (it is longer than the run), so each key ends with exactly
 * min(requests, limit) permits, and the global limit is reached exactly. */
static void test_concurrent_free_running(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (int with_global = 0; with_global < 2; ++with_global) {
            const uint64_t L = 5, G = 5000;
            tf_rate_limiter *r = make(L, 1000000000000ULL, 1000000000ULL, kModes[m]);
            if (with_global) OK(tf_rate_limiter_set_global_limit(r, G));
            fr_arg args[CT_THREADS];
            pthread_t th[CT_THREADS];
            for (unsigned t = 0; t < CT_THREADS; ++t) {
                args[t].r = r;
                args[t].id = t;
                args[t].granted = calloc(FR_KEYS, sizeof(uint32_t));
                args[t].failed = 0;
                args[t].blobs = 0;
                assert_non_null(args[t].granted);
            }
            for (unsigned t = 0; t < CT_THREADS; ++t)
                assert_int_equal(pthread_create(&th[t], NULL, fr_worker, &args[t]), 0);
            for (unsigned t = 0; t < CT_THREADS; ++t) pthread_join(th[t], NULL);
            /* what each key asked for, replayed from the seeds */
            uint64_t asked[FR_KEYS] = {0}, total = 0, want_total = 0;
            for (unsigned t = 0; t < CT_THREADS; ++t) {
                tu_rng g = {500 + t};
                for (uint64_t i = 0; i < FR_REQUESTS; ++i) asked[tu_below(&g, FR_KEYS)]++;
            }
            uint64_t tracked = 0;
            for (unsigned k = 0; k < FR_KEYS; ++k) {
                uint64_t got = 0;
                for (unsigned t = 0; t < CT_THREADS; ++t) got += args[t].granted[k];
                const uint64_t want = asked[k] < L ? asked[k] : L;
                if (!with_global) assert_int_equal(got, want);
                assert_true(got <= want);
                total += got;
                want_total += want;
                tracked += got > 0;
            }
            if (with_global) assert_int_equal(total, want_total < G ? want_total : G);
            tf_rate_limiter_stats s = stats_of(r);
            assert_int_equal(s.keys, tracked);
            for (unsigned t = 0; t < CT_THREADS; ++t) {
                assert_int_equal(args[t].failed, 0);
                free(args[t].granted);
            }
            assert_true(args[0].blobs >= 10);
            tf_rate_limiter_free(r);
        }
    }
}

typedef struct {
    tf_rate_limiter *r;
    int stop;
    pthread_mutex_t mu;
} gl_arg;

static void *gl_worker(void *p) {
    gl_arg *a = p;
    uint64_t t = 1;
    for (;;) {
        pthread_mutex_lock(&a->mu);
        const int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop) break;
        int allowed;
        for (int i = 0; i < 64; ++i) (void)tf_rate_limiter_acquire(a->r, "key", 3, t++, 3, &allowed, NULL, NULL);
    }
    return NULL;
}

/* Every function may be called concurrently: set_global_limit while
 * requests run. Runs in a child process so that a crash is a failure of
 * this test only. */
static void test_concurrent_set_global_limit(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            /* a crash is the child's own death, not cmocka's to report */
            const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
            for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = SIG_DFL;
                sigaction(sigs[i], &sa, NULL);
            }
            gl_arg a;
            a.r = NULL;
            a.stop = 0;
            pthread_mutex_init(&a.mu, NULL);
            if (tf_rate_limiter_new(5, 100, 10, kModes[m], &a.r) != TF_OK) _exit(2);
            pthread_t th[3];
            for (int i = 0; i < 3; ++i)
                if (pthread_create(&th[i], NULL, gl_worker, &a) != 0) _exit(3);
            for (int i = 0; i < 300000; ++i)
                if (tf_rate_limiter_set_global_limit(a.r, (i & 1) ? 2 : 0) != TF_OK) _exit(4);
            pthread_mutex_lock(&a.mu);
            a.stop = 1;
            pthread_mutex_unlock(&a.mu);
            for (int i = 0; i < 3; ++i) pthread_join(th[i], NULL);
            tf_rate_limiter_free(a.r);
            _exit(0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("%s: the child %s %d while set_global_limit ran beside acquire", kModes[m] ? "exact" : "bucketed",
                     WIFSIGNALED(status) ? "died of signal" : "exited with",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
}

/* ------------------------------------------------------------------ */
/* bad input                                                           */

static void test_new_bad_input(void **state) {
    (void)state;
    tf_rate_limiter *r = NULL;
#define BADNEW(l, w, b, f, status)                                     \
    do {                                                               \
        tf_clear_last_error();                                         \
        assert_int_equal(tf_rate_limiter_new(l, w, b, f, &r), status); \
        assert_null(r);                                                \
        assert_true(strlen(tf_last_error_message()) > 0);              \
    } while (0)
    assert_int_equal(tf_rate_limiter_new(5, 100, 10, 0, NULL), TF_ERR_NULL);
    assert_true(strlen(tf_last_error_message()) > 0);
    BADNEW(0, 100, 10, 0, TF_ERR_INVALID_ARGUMENT); /* zero limit */
    BADNEW(0, 100, 0, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 0, 10, 0, TF_ERR_INVALID_ARGUMENT); /* zero window */
    BADNEW(5, 0, 0, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 0, 0, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 0, 0, TF_ERR_INVALID_ARGUMENT);  /* zero bucket width */
    BADNEW(5, 100, 30, 0, TF_ERR_INVALID_ARGUMENT); /* does not divide */
    BADNEW(5, 100, 101, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 200, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 4097, 1, 0, TF_ERR_INVALID_ARGUMENT); /* too many buckets */
    BADNEW(5, (uint64_t)TF_RATE_LIMITER_MAX_BUCKETS * 2, 1, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, NEVER, 1, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(TF_RATE_LIMITER_MAX_KEY_LIMIT + 1, 100, 10, 0, TF_ERR_INVALID_ARGUMENT); /* limit too large */
    BADNEW(TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1, 100, 0, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(NEVER, 100, 10, 0, TF_ERR_INVALID_ARGUMENT);
    BADNEW(NEVER, 100, 10, EXACT, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 10, 0x4, TF_ERR_INVALID_ARGUMENT); /* unknown flags */
    BADNEW(5, 100, 10, 0x80000000u, TF_ERR_INVALID_ARGUMENT);
    BADNEW(5, 100, 10, EXACT | 0x100, TF_ERR_INVALID_ARGUMENT);
#undef BADNEW
    /* the edges that are fine */
    const struct {
        uint64_t l, w, b;
        uint32_t f;
    } good[] = {
        {1, 1, 1, 0},
        {TF_RATE_LIMITER_MAX_KEY_LIMIT, 4096, 1, 0},
        {5, NEVER, NEVER, 0},
        {5, 1ULL << 63, 1ULL << 52, TF_RATE_LIMITER_FULL_ALLOW},
        {TF_RATE_LIMITER_MAX_EXACT_LIMIT, 100, 0, EXACT},
        {5, 100, 30, EXACT}, /* the width is ignored in exact mode */
        {TF_RATE_LIMITER_MAX_KEY_LIMIT + 1, 100, 0, EXACT | TF_RATE_LIMITER_FULL_ALLOW},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        OK(tf_rate_limiter_new(good[i].l, good[i].w, good[i].b, good[i].f, &r));
        EXPECT(acq(r, "k", 1, 1), 1, good[i].l - 1, 0);
        tf_rate_limiter_free(r);
        r = NULL;
    }
    tf_rate_limiter_free(NULL);
}

/* A populated limiter, with every kind of state. */
static tf_rate_limiter *populated(uint32_t flags) {
    tf_rate_limiter *r = make(4, 1000, 100, flags);
    OK(tf_rate_limiter_set_global_limit(r, 50));
    OK(tf_rate_limiter_set_key_limit(r, "vip", 3, 9));
    OK(tf_rate_limiter_set_key_limit(r, "unseen", 6, 2));
    OK(tf_rate_limiter_set_max_keys(r, 1000));
    tu_rng g = {3};
    for (uint64_t i = 0; i < 300; ++i) (void)acq_id(r, tu_below(&g, 40), 1000 + 5 * i, 1 + tu_below(&g, 2));
    (void)acq(r, "vip", 2400, 5);
    return r;
}

/* Every failing call says why and leaves the limiter exactly as it was. */
static void test_calls_bad_input(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        tf_rate_limiter *r = populated(kModes[m]);
        size_t n;
        unsigned char *before = snap(r, &n);
        int a = 7;
        uint64_t u = 7, v = 7;
        size_t sz = 7;
        tf_rate_limiter_stats st = TF_RATE_LIMITER_STATS_INIT, st0;
        tf_rate_limiter_info info = TF_RATE_LIMITER_INFO_INIT, info0;
        memset(&st0, 0, sizeof st0);
        memset(&info0, 0, sizeof info0);
#define BAD(call, status)                                 \
    do {                                                  \
        tf_clear_last_error();                            \
        assert_int_equal((call), (status));               \
        assert_true(strlen(tf_last_error_message()) > 0); \
        assert_unchanged(r, before, n);                   \
    } while (0)
        BAD(tf_rate_limiter_set_global_limit(NULL, 5), TF_ERR_NULL);
        if (ex) BAD(tf_rate_limiter_set_global_limit(r, (1ULL << 24) + 1), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_set_key_limit(NULL, "k", 1, 5), TF_ERR_NULL);
        BAD(tf_rate_limiter_set_key_limit(r, NULL, 1, 5), TF_ERR_NULL);
        BAD(tf_rate_limiter_set_key_limit(r, "k", 1,
                                          ex ? TF_RATE_LIMITER_MAX_EXACT_LIMIT + 1 : TF_RATE_LIMITER_MAX_KEY_LIMIT + 1),
            TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_set_key_limit(r, "vip", 3, NEVER), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_set_max_keys(NULL, 5), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(NULL, "k", 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(r, NULL, 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(r, "k", 1, 5000, 1, NULL, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_acquire(r, "k", 1, 0, 1, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_acquire(r, "k", 1, 5000, 0, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_peek(NULL, "k", 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_peek(r, NULL, 1, 5000, 1, &a, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_peek(r, "k", 1, 5000, 1, NULL, &u, &v), TF_ERR_NULL);
        BAD(tf_rate_limiter_peek(r, "k", 1, 0, 1, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_peek(r, "k", 1, 5000, 0, &a, &u, &v), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_refund(NULL, "vip", 3, 5000, 1), TF_ERR_NULL);
        BAD(tf_rate_limiter_refund(r, NULL, 3, 5000, 1), TF_ERR_NULL);
        BAD(tf_rate_limiter_refund(r, "vip", 3, 0, 1), TF_ERR_INVALID_ARGUMENT);
        BAD(tf_rate_limiter_reset(NULL, "vip", 3), TF_ERR_NULL);
        BAD(tf_rate_limiter_reset(r, NULL, 3), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_stats(NULL, &st), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_stats(r, NULL), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_stats(r, &st0), TF_ERR_INVALID_ARGUMENT); /* not initialized */
        BAD(tf_rate_limiter_get_info(NULL, &info), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_info(r, NULL), TF_ERR_NULL);
        BAD(tf_rate_limiter_get_info(r, &info0), TF_ERR_INVALID_ARGUMENT);
        assert_true(st.keys == 0 && st0.keys == 0 && st0.memory == 0 && info.limit == 0 && info0.limit == 0);
        BAD(tf_rate_limiter_serialized_size(NULL, &sz), TF_ERR_NULL);
        BAD(tf_rate_limiter_serialized_size(r, NULL), TF_ERR_NULL);
        BAD(tf_rate_limiter_serialize(NULL, before, n, &sz), TF_ERR_NULL);
        BAD(tf_rate_limiter_serialize(r, before, n, NULL), TF_ERR_NULL);
        BAD(tf_rate_limiter_serialize(r, NULL, n, &sz), TF_ERR_NULL);
        assert_int_equal(a, 7); /* out-parameters untouched on failure */
        assert_int_equal(u, 7);
        assert_int_equal(v, 7);
        /* n far above the limit: not an error, a denial that can never be
         * granted; nothing changes (a request at the key's own time) */
        const char *who[] = {"vip", "vip", "fresh", "fresh"};
        const uint64_t how_many[] = {NEVER, 10, 5, NEVER};
        for (int i = 0; i < 4; ++i) {
            dec d = acq(r, who[i], 2400, how_many[i]);
            assert_int_equal(d.allowed, 0);
            assert_int_equal(d.retry_at, NEVER);
            d = peek(r, who[i], 2400, how_many[i]);
            assert_int_equal(d.allowed, 0);
            assert_int_equal(d.retry_at, NEVER);
        }
        OK(tf_rate_limiter_get_stats(r, &st));
        OK(tf_rate_limiter_get_info(r, &info));
        assert_unchanged(r, before, n);
#undef BAD
        free(before);
        tf_rate_limiter_free(r);
    }
}

/* ------------------------------------------------------------------ */
/* wire format                                                          */

/* Decisions of two limiters agree over the same random in-order traffic. */
static void assert_same_decisions(tf_rate_limiter *a, tf_rate_limiter *b, uint64_t from, uint64_t seed) {
    tu_rng g = {seed};
    uint64_t now = from;
    for (int i = 0; i < 20000; ++i) {
        now += tu_below(&g, 3);
        const uint64_t id = tu_below(&g, 60), n = 1 + tu_below(&g, 3);
        tu_key k = tu_make_key('L', id);
        if (tu_below(&g, 20) == 0) {
            OK(tf_rate_limiter_refund(a, k.b, sizeof k.b, now, 1));
            OK(tf_rate_limiter_refund(b, k.b, sizeof k.b, now, 1));
            continue;
        }
        dec x = acq_b(a, k.b, sizeof k.b, now, n), y = acq_b(b, k.b, sizeof k.b, now, n);
        if (x.allowed != y.allowed || x.remaining != y.remaining || x.retry_at != y.retry_at)
            fail_msg("request %d: (%d, %llu, %llu) vs (%d, %llu, %llu)", i, x.allowed, ULL(x.remaining),
                     ULL(x.retry_at), y.allowed, ULL(y.remaining), ULL(y.retry_at));
    }
    dec x = acq(a, "vip", now, 1), y = acq(b, "vip", now, 1);
    assert_true(x.allowed == y.allowed && x.remaining == y.remaining && x.retry_at == y.retry_at);
}

static void test_serialize_round_trip(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        for (int allow = 0; allow < 2; ++allow) {
            tf_rate_limiter *r = populated(kModes[m] | (allow ? TF_RATE_LIMITER_FULL_ALLOW : 0));
            size_t n;
            unsigned char *blob = snap(r, &n);
            assert_memory_equal(blob, "TFLT\x01\x00\x04\x00", 8);
            tf_rate_limiter *c = NULL;
            OK(tf_rate_limiter_deserialize(blob, n, NULL, &c));
            tf_rate_limiter_stats s1 = stats_of(r), s2 = stats_of(c);
            assert_int_equal(s1.keys, s2.keys);
            assert_int_equal(s1.reclaimed, s2.reclaimed);
            assert_int_equal(s1.denied_full, s2.denied_full);
            assert_int_equal(s1.allowed_full, s2.allowed_full);
            size_t n2;
            unsigned char *again = snap(c, &n2);
            assert_int_equal(n2, n);
            free(again);
            /* nobody who is limited is forgotten: the same decisions from here */
            assert_same_decisions(r, c, 2400, 99 + m);
            free(blob);
            tf_rate_limiter_free(c);
            tf_rate_limiter_free(r);
        }
    }
    /* max_keys, the policy and the counters survive */
    for (int allow = 0; allow < 2; ++allow) {
        tf_rate_limiter *r = make(2, 100, 10, allow ? TF_RATE_LIMITER_FULL_ALLOW : 0);
        OK(tf_rate_limiter_set_max_keys(r, 2));
        (void)acq(r, "a", 5, 2);
        (void)acq(r, "b", 5, 1);
        (void)acq(r, "c", 5, 1);
        tf_rate_limiter *c = clone_of(r);
        EXPECT(acq(c, "d", 6, 1), allow, 0, allow ? 0 : NEVER);
        EXPECT(acq(c, "a", 6, 1), 0, 0, 100);
        EXPECT(acq(c, "b", 6, 1), 1, 0, 0);
        tf_rate_limiter_stats s = stats_of(c);
        assert_int_equal(s.keys, 2);
        assert_int_equal(allow ? s.allowed_full : s.denied_full, 2);
        tf_rate_limiter_free(c);
        tf_rate_limiter_free(r);
    }
}

/* get_info: what the limiter was created and configured with; a blob
 * keeps it. */
static void test_info(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const int ex = (kModes[m] & EXACT) != 0;
        const uint32_t flags = kModes[m] | TF_RATE_LIMITER_FULL_ALLOW;
        tf_rate_limiter *r = make(7, 1000, ex ? 0 : 250, flags);
        tf_rate_limiter_info i = info_of(r);
        assert_int_equal(i.size, sizeof i);
        assert_int_equal(i.limit, 7);
        assert_int_equal(i.window, 1000);
        assert_int_equal(i.bucket_width, ex ? 0 : 250);
        assert_int_equal(i.flags, flags);
        assert_int_equal(i.global_limit, 0);
        assert_int_equal(i.max_keys, 0);
        OK(tf_rate_limiter_set_global_limit(r, 40));
        OK(tf_rate_limiter_set_max_keys(r, 123));
        i = info_of(r);
        assert_int_equal(i.global_limit, 40);
        assert_int_equal(i.max_keys, 123);
        tf_rate_limiter *c = clone_of(r);
        const tf_rate_limiter_info j = info_of(c);
        assert_true(j.limit == 7 && j.window == 1000 && j.bucket_width == i.bucket_width && j.flags == flags &&
                    j.global_limit == 40 && j.max_keys == 123);
        tf_rate_limiter_free(c);
        /* a caller built against a later, longer struct: the rest is left alone */
        struct {
            tf_rate_limiter_stats stats;
            uint64_t later_field;
        } longer;
        memset(&longer, 0, sizeof longer);
        longer.stats.size = sizeof longer;
        longer.later_field = 99;
        (void)acq(r, "k", 5, 1);
        OK(tf_rate_limiter_get_stats(r, &longer.stats));
        assert_int_equal(longer.stats.size, sizeof longer);
        assert_int_equal(longer.stats.keys, 1);
        assert_true(longer.stats.memory > 0);
        assert_int_equal(longer.later_field, 99);
        tf_rate_limiter_free(r);
    }
    /* a bucketed limiter created with a bucket as wide as the window */
    tf_rate_limiter *r = make(3, 60, 60, 0);
    assert_int_equal(info_of(r).bucket_width, 60);
    tf_rate_limiter_free(r);
}

static tf_status load_limiter(const unsigned char *blob, size_t len, const tf_deserialize_options *options,
                              uint64_t *memory) {
    tf_rate_limiter *r = NULL;
    const tf_status st = tf_rate_limiter_deserialize(blob, len, options, &r);
    if (st != TF_OK) {
        assert_null(r);
        return st;
    }
    *memory = stats_of(r).memory;
    tf_rate_limiter_free(r);
    return TF_OK;
}

/* Checks max_memory on the blob of `r`: its memory figure is known before
 * anything is allocated (the tables as they grow, long keys, exact rings,
 * the global window and the overrides). */
static void check_max_memory_of(const tf_rate_limiter *r) {
    size_t n = 0, w = 0;
    OK(tf_rate_limiter_serialized_size(r, &n));
    unsigned char *blob = malloc(n);
    assert_non_null(blob);
    OK(tf_rate_limiter_serialize(r, blob, n, &w));
    /* the copy's memory: its tables grew only as far as its keys need */
    tf_rate_limiter *c = NULL;
    OK(tf_rate_limiter_deserialize(blob, n, NULL, &c));
    assert_int_equal(tu_check_max_memory(blob, n, load_limiter), stats_of(c).memory);
    tf_rate_limiter_free(c);
    free(blob);
}

static void test_deserialize_max_memory(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = make(4, 1000, 100, kModes[m]);
        check_max_memory_of(r); /* empty */
        tf_rate_limiter_free(r);
        r = populated(kModes[m]); /* a global window, overrides, keys */
        check_max_memory_of(r);
        /* long keys (stored out of line), long overrides, and enough keys
         * for every shard's table to grow several times */
        OK(tf_rate_limiter_set_key_limit(r, "an override with a rather long key", 34, 3));
        for (uint64_t i = 0; i < 3000; ++i) {
            char key[64];
            const int len = snprintf(key, sizeof key, "%s-%llu", i % 3 ? "k" : "a-key-longer-than-16-bytes", ULL(i));
            (void)acq_b(r, key, (size_t)len, 2500 + i % 7, 1);
        }
        check_max_memory_of(r);
        tf_rate_limiter_free(r);
    }
    /* an exact limiter with a large limit: the rings dwarf the blob */
    tf_rate_limiter *r = make(100000, 1000, 0, EXACT);
    OK(tf_rate_limiter_set_global_limit(r, 1u << 20));
    for (uint64_t i = 0; i < 20; ++i) (void)acq_id(r, i, 10, 1);
    check_max_memory_of(r);
    tf_rate_limiter_stats s = stats_of(r);
    assert_true(s.memory > 20 * 100000 * 8); /* 16 MB from a blob of a few hundred bytes */
    tf_rate_limiter_free(r);
}

/* serialize for tu_check_serialize_contract */
static tf_status serialize_any(const void *obj, void *buf, size_t capacity, size_t *written) {
    return tf_rate_limiter_serialize((tf_rate_limiter *)obj, buf, capacity, written);
}

static void test_serialize_buffer_too_small(void **state) {
    (void)state;
    tf_rate_limiter *r = populated(0);
    size_t need;
    OK(tf_rate_limiter_serialized_size(r, &need));
    tu_check_serialize_contract(r, need, serialize_any);
    /* an empty limiter: the envelope and the fixed fields */
    tf_rate_limiter *e = make(1, 1, 1, 0);
    OK(tf_rate_limiter_serialized_size(e, &need));
    assert_int_equal(need, 20 + 10 * 8 + 8 + 8 + 8);
    tf_rate_limiter_free(e);
    tf_rate_limiter_free(r);
}

static tf_status try_blob(const unsigned char *b, size_t n) {
    tf_rate_limiter *c = NULL;
    tf_clear_last_error();
    tf_status st = tf_rate_limiter_deserialize(b, n, NULL, &c);
    if (st == TF_OK) {
        assert_non_null(c);
        tf_rate_limiter_free(c);
    } else {
        assert_null(c);
        assert_true(strlen(tf_last_error_message()) > 0);
    }
    return st;
}

static void test_deserialize_truncated(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        tf_rate_limiter *r = populated(kModes[m]);
        size_t n;
        unsigned char *blob = snap(r, &n);
        tu_check_truncations(blob, n, try_blob);
        unsigned char *longer = malloc(n + 1);
        memcpy(longer, blob, n);
        longer[n] = 0;
        assert_int_equal(try_blob(longer, n + 1), TF_ERR_CORRUPT);
        free(longer);
        free(blob);
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
        size_t n;
        unsigned char *blob = snap(r, &n);
        tu_check_bit_flips(blob, n, try_blob);
        free(blob);
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
                fail_msg("%s: %s: got %s (%s), want %s", exact ? "exact" : "bucketed", cases[i].what,
                         tf_status_string(st), tf_last_error_message(), tf_status_string(cases[i].want));
            free(b);
        }
        /* envelope fields, checksum fixed */
        blob_spec s = base_spec(exact);
        size_t len;
        unsigned char *b = build(&s, &len);
        const struct {
            size_t off;
            uint64_t v;
            int bytes;
            tf_status want;
        } env[] = {
            {4, 2, 2, TF_ERR_UNSUPPORTED_VERSION},
            {4, 0, 2, TF_ERR_UNSUPPORTED_VERSION},
            {6, 1, 2, TF_ERR_WRONG_KIND},
            {6, 3, 2, TF_ERR_WRONG_KIND},
            {6, 999, 2, TF_ERR_WRONG_KIND},
            {0, 0x544C4655, 4, TF_ERR_BAD_MAGIC},
            {8, exact ? 0 : EXACT, 4, TF_ERR_CORRUPT}, /* the other mode's payload */
        };
        for (size_t i = 0; i < sizeof env / sizeof env[0]; ++i) {
            unsigned char *c = malloc(len);
            memcpy(c, b, len);
            tu_put_le(c + env[i].off, env[i].v, env[i].bytes);
            tu_fix_checksum(c, len);
            assert_int_equal(try_blob(c, len), env[i].want);
            free(c);
        }
        free(b);
    }
}

/* A key whose limit was lowered below what it holds is a state the
 * library makes; its blob reads back. */
static void test_serialize_lowered_limit(void **state) {
    (void)state;
    for (size_t m = 0; m < NMODES; ++m) {
        const uint64_t at = (kModes[m] & EXACT) ? 105 : 100;
        tf_rate_limiter *r = make(5, 100, 10, kModes[m]);
        EXPECT(acq(r, "A", 5, 5), 1, 0, 0);
        OK(tf_rate_limiter_set_key_limit(r, "A", 1, 2));
        EXPECT(acq(r, "A", 6, 1), 0, 0, at);
        size_t n;
        unsigned char *blob = snap(r, &n);
        tf_rate_limiter *c = NULL;
        tf_status st = tf_rate_limiter_deserialize(blob, n, NULL, &c);
        if (st != TF_OK)
            fail_msg("%s: %s (%s)", kModes[m] ? "exact" : "bucketed", tf_status_string(st), tf_last_error_message());
        EXPECT(acq(c, "A", 7, 1), 0, 0, at);
        tf_rate_limiter_free(c);
        free(blob);
        tf_rate_limiter_free(r);
    }
}

static void test_deserialize_wrong_kind_random_and_null(void **state) {
    (void)state;
    /* another structure's blob */
    tf_recency_sketch *s = NULL;
    OK(tf_recency_sketch_new(64, 2, 1, 0, &s));
    OK(tf_recency_sketch_update(s, "k", 1, 5));
    size_t n = 0, w = 0;
    OK(tf_recency_sketch_serialized_size(s, &n));
    unsigned char *blob = malloc(n);
    OK(tf_recency_sketch_serialize(s, blob, n, &w));
    assert_int_equal(try_blob(blob, n), TF_ERR_WRONG_KIND);
    /* the kind edited to 4: its payload is not a rate limiter's */
    tu_put_le(blob + 6, 4, 2);
    tu_fix_checksum(blob, n);
    tf_status st = try_blob(blob, n);
    assert_true(st == TF_ERR_CORRUPT);
    free(blob);
    tf_recency_sketch_free(s);
    /* and the other way round */
    tf_rate_limiter *r = populated(0);
    unsigned char *rb = snap(r, &n);
    assert_int_equal(tf_recency_sketch_deserialize(rb, n, NULL, &s), TF_ERR_WRONG_KIND);
    free(rb);
    tf_rate_limiter_free(r);
    /* random bytes */
    tu_rng g = {2025};
    unsigned char buf[512];
    for (int i = 0; i < 20000; ++i) {
        size_t len = tu_below(&g, sizeof buf);
        for (size_t j = 0; j < len; ++j) buf[j] = (unsigned char)tu_next(&g);
        if (i % 2) memcpy(buf, "TFLT\x01\x00\x04\x00", len < 8 ? len : 8);
        if (i % 4 == 3 && len >= 28) { /* a consistent envelope: the payload is parsed */
            tu_put_le(buf + 8, tu_below(&g, 4), 4);
            tu_put_le(buf + 12, len - 28, 8);
            tu_fix_checksum(buf, len);
        }
        st = try_blob(buf, len);
        assert_true(st < 0 && st >= TF_STATUS_MIN);
    }
    tf_rate_limiter *c = NULL;
    assert_int_equal(tf_rate_limiter_deserialize(NULL, 10, NULL, &c), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_deserialize(buf, 10, NULL, NULL), TF_ERR_NULL);
    assert_int_equal(tf_rate_limiter_deserialize(NULL, 0, NULL, &c), TF_ERR_NULL);
    assert_null(c);
}

static void check_golden(const char *name, int exact) {
    char file[256];
    snprintf(file, sizeof file, "%s.tfb", name);
    size_t len;
    unsigned char *golden = tu_read_file(tu_data_path(file), &len);
    if (!golden) fail_msg("cannot read %s", tu_data_path(file));
    /* the same operations today give the same bytes */
    tf_rate_limiter *built = golden_rate_limiter(exact);
    assert_non_null(built);
    size_t n;
    unsigned char *now = snap(built, &n);
    assert_int_equal(n, len);
    assert_memory_equal(now, golden, len);
    /* and the blob reads back with the recorded answers */
    tf_rate_limiter *r = NULL;
    OK(tf_rate_limiter_deserialize(golden, len, NULL, &r));
    snprintf(file, sizeof file, "%s.expected", name);
    size_t elen;
    char *expected = (char *)tu_read_file(tu_data_path(file), &elen);
    if (!expected) fail_msg("cannot read %s", tu_data_path(file));
    expected = realloc(expected, elen + 1);
    expected[elen] = 0;
    unsigned lines = 0, denied = 0;
    for (char *line = strtok(expected, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char hex[128];
        int allowed;
        unsigned long long rem, retry;
        assert_int_equal(sscanf(line, "%127s %d %llu %llu", hex, &allowed, &rem, &retry), 4);
        unsigned char key[64];
        const size_t klen = strlen(hex) / 2;
        for (size_t i = 0; i < klen; ++i) {
            unsigned v;
            assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
            key[i] = (unsigned char)v;
        }
        /* on the blob, and on the limiter built today */
        EXPECT(peek_b(r, key, klen, GOLDEN_RL_PEEK_AT, 1), allowed, rem, retry);
        EXPECT(peek_b(built, key, klen, GOLDEN_RL_PEEK_AT, 1), allowed, rem, retry);
        lines++;
        denied += !allowed;
    }
    assert_int_equal(lines, GOLDEN_RL_KEYS + 1);
    assert_true(denied > 0);
    /* key-7 kept its override of 9, the others the default of 5 */
    assert_int_equal(peek(r, "key-7", GOLDEN_RL_PEEK_AT, 9).retry_at != NEVER, 1);
    assert_int_equal(peek(r, "key-7", GOLDEN_RL_PEEK_AT, 10).retry_at, NEVER);
    assert_int_equal(peek(r, "key-6", GOLDEN_RL_PEEK_AT, 6).retry_at, NEVER);
    free(expected);
    free(now);
    free(golden);
    tf_rate_limiter_free(r);
    tf_rate_limiter_free(built);
}

static void test_golden_blobs(void **state) {
    (void)state;
    check_golden("rate_limiter_v1", 0);
    check_golden("rate_limiter_exact_v1", 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_example),
        cmocka_unit_test(test_exact_property),
        cmocka_unit_test(test_bucketed_property),
        cmocka_unit_test(test_bucketed_adversarial),
        cmocka_unit_test(test_retry_at_exact_time),
        cmocka_unit_test(test_remaining_and_n_permits),
        cmocka_unit_test(test_peek_changes_nothing),
        cmocka_unit_test(test_refund),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_keys_are_bytes),
        cmocka_unit_test(test_global_and_overrides),
        cmocka_unit_test(test_remaining_bounded_by_global),
        cmocka_unit_test(test_retry_at_with_global_and_key),
        cmocka_unit_test(test_global_refund_gives_back_the_keys_permits),
        cmocka_unit_test(test_full_allow_keeps_the_global_limit),
        cmocka_unit_test(test_global_property),
        cmocka_unit_test(test_idle_reclamation),
        cmocka_unit_test(test_idle_reclaimed_when_few_keys_are_touched),
        cmocka_unit_test(test_reclaim_respects_the_keys_clock),
        cmocka_unit_test(test_max_keys),
        cmocka_unit_test(test_max_keys_reclaims_idle_keys),
        cmocka_unit_test(test_peek_when_full),
        cmocka_unit_test(test_peek_follows_the_room_search),
        cmocka_unit_test(test_full_table_denial_moves_the_global_clock),
        cmocka_unit_test(test_lowered_bound_makes_room),
        cmocka_unit_test(test_acquire_batch_equals_single_calls),
        cmocka_unit_test(test_acquire_batch_bad_input),
        cmocka_unit_test(test_memory_per_key),
        cmocka_unit_test(test_clock_backwards),
        cmocka_unit_test(test_concurrent_windows),
        cmocka_unit_test(test_concurrent_free_running),
        cmocka_unit_test(test_concurrent_set_global_limit),
        cmocka_unit_test(test_new_bad_input),
        cmocka_unit_test(test_calls_bad_input),
        cmocka_unit_test(test_serialize_round_trip),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_serialize_buffer_too_small),
        cmocka_unit_test(test_deserialize_truncated),
        cmocka_unit_test(test_deserialize_bit_flips),
        cmocka_unit_test(test_blob_builder_matches),
        cmocka_unit_test(test_deserialize_hostile_fields),
        cmocka_unit_test(test_serialize_lowered_limit),
        cmocka_unit_test(test_deserialize_wrong_kind_random_and_null),
        cmocka_unit_test(test_deserialize_max_memory),
        cmocka_unit_test(test_golden_blobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
