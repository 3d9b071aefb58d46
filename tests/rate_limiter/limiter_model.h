/* The reference model of the rate limiter suites: an exact, slow limiter
 * kept beside the library's, decision by decision.
 *
 * Semantics the suites hold the library to (include/temporalfilters/
 * rate_limiter.h), in the words of this model:
 *  - a key's clock is clamped: a request at `now` is decided at
 *    t = max(now, the latest time the key has seen);
 *  - every permit granted at t has an expiry: t + window (exact mode), or
 *    floor(t / width) * width + window (bucketed: its bucket leaves the
 *    window when floor(now / width) - buckets reaches it); a permit counts
 *    at time t while t < its expiry;
 *  - n permits are granted iff n <= limit and used + n <= limit; remaining
 *    is the room left; retry_at is the expiry of the (used + n - limit)-th
 *    oldest permit (the earliest time at which the request would be
 *    granted), or TF_RETRY_NEVER when n > limit;
 *  - with a global limit the same rule runs over all keys' permits (its own
 *    clock clamped too); a request needs both.
 * So the bucketed mode is the exact rule applied to permit times rounded
 * down to their bucket: the suites check it decision by decision, and derive
 * from it the precise bound (at most `limit` permits in any real interval
 * of length window - width + 1, at most 2 * limit in one of length
 * `window`, both tight) and that it never denies what the exact rule over
 * its own history would grant. */
#ifndef TF_TESTS_LIMITER_MODEL_H
#define TF_TESTS_LIMITER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "temporalfilters.h"

/* Expiries of permits, oldest first, in a growable ring. */
typedef struct {
    uint64_t *v;
    uint32_t cap, start, count;
} ring;

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

void ref_free(ref *m);

/* Most permits of one key in any half-open interval (s - len, s] over the
 * live grant log; `global` looks at all keys with their global times. */
uint64_t max_in_interval(const ref *m, long id, uint64_t len, int global, uint64_t *limit_out);

/* A property run: random traffic against the model. */
typedef struct {
    uint32_t flags;
    uint64_t limit, window, width, global;
    size_t nkeys, hot, warm;
    long ops;
    int refunds;
    uint64_t seed;
    /* Times (0: the defaults): the first time (1), the largest forward
     * step of a call (2: steps of 0 or 1), and the largest of the rare
     * jumps (1 call in 64; none). */
    uint64_t t0, step, jump;
} prop_cfg;

/* Random traffic: hot, warm and cold keys, n from 1 to beyond the limit,
 * times that go backwards (below the key's latest time: clamped; or below
 * the newest time of other keys), peeks, refunds, resets. Every decision
 * is compared with the model; the limiter (*out) and the model (*m, free it
 * with ref_free) are left for the window bounds to be checked over the
 * whole grant log. */
void run_property(const prop_cfg *c, ref *m, tf_rate_limiter **out);

#endif
