/* The reference model of the rate limiter suites: see limiter_model.h. */
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

#include "limiter_model.h"
#include "limiter_util.h"
#include "test_util.h"

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

void ref_free(ref *m) {
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

uint64_t max_in_interval(const ref *m, long id, uint64_t len, int global, uint64_t *limit_out) {
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

/* Out-of-order times are generated only where the key's clock is certain:
 * see test_reclaim_respects_the_keys_clock (test_keys.c) for the case left
 * out (a key reclaimed through another key's newer time). */
void run_property(const prop_cfg *c, ref *m, tf_rate_limiter **out) {
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
    uint64_t M = c->t0 ? c->t0 : 1; /* the newest time of any call so far */
    const uint64_t step = c->step ? c->step : 2;
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
            now = M + tu_below(&g, step);
            if (c->jump && tu_below(&g, 64) == 0) now += tu_below(&g, c->jump);
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
            if (!same_dec(got, want))
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
