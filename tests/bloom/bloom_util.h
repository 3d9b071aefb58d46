/* Helpers the Bloom filter suites share (tests/bloom): the age-partitioned
 * filter's suite (age_*.c, run by age_main.c as test_age_bloom) and the
 * time-limited filter's (time_*.c, run by time_main.c as test_time_bloom).
 *
 *   bu_*  both filters: the payload of kinds 2 and 3 decoded independently
 *         of the library, an independent false-positive model, the margins
 *         of the statistical checks, snapshots, the suites' runner;
 *   ab_*  the age-partitioned (count window) filter;
 *   tb_*  the time-limited filter. */
#ifndef TF_TESTS_BLOOM_UTIL_H
#define TF_TESTS_BLOOM_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "temporalfilters.h"
#include "test_util.h"

#define OK(call) assert_int_equal((call), TF_OK)
/* The call fails with `status` and a last error message containing `text`. */
#define BU_EXPECT_ERR(call, status, text)                                                        \
    do {                                                                                         \
        tf_clear_last_error();                                                                   \
        assert_int_equal((call), (status));                                                      \
        if (strstr(tf_last_error_message(), (text)) == NULL)                                     \
            fail_msg("message \"%s\" does not mention \"%s\"", tf_last_error_message(), (text)); \
    } while (0)

/* Where counts are reduced (TU_REDUCED: under AddressSanitizer, an
 * unoptimised build in CI ~10x slower, and under emulation) the
 * statistical tests query a tenth of the absent keys on smaller filters
 * (kScale), and the long streams are a third as long (kStream): the same
 * code paths, with bounds that follow the counts (the full-size runs are
 * the normal build's). */
#define TF_SANITIZED TU_REDUCED /* test_util.h */
extern const double kScale, kStream;
extern const double kLn2;

/* ---- the suites ---------------------------------------------------------- */

/* One file's tests (a concern: model, window, wire...). */
typedef struct {
    const struct CMUnitTest *tests;
    size_t count;
} bu_group;

/* Declares and defines a file's group `name` (an array `name` and its
 * `name_count`). */
#define BU_GROUP(name)                     \
    extern const struct CMUnitTest name[]; \
    extern const size_t name##_count
#define BU_DEFINE_GROUP(name, ...)                  \
    const struct CMUnitTest name[] = {__VA_ARGS__}; \
    const size_t name##_count = sizeof name / sizeof name[0]

/* Runs the groups in order as one cmocka group "tests" (one TAP plan);
 * TF_TEST_FILTER=<glob> in the environment runs only the matching tests. */
int bu_run_groups(const bu_group *groups, size_t n);

/* The main of a suite whose groups `groups(X)` lists as X(name) X(name)
 * ..., in the order they run: declares them and runs them with
 * bu_run_groups. */
#define BU_DECLARE_(g) BU_GROUP(g);
#define BU_ENTRY_(g) {g, g##_count},
#define BU_MAIN(groups)                                           \
    groups(BU_DECLARE_) int main(void) {                          \
        const bu_group all_[] = {groups(BU_ENTRY_)};              \
        return bu_run_groups(all_, sizeof all_ / sizeof all_[0]); \
    }

/* ---- the payload of kinds 2 (classic layout) and 3 ------------------------ */

/* Offsets in a blob (the 20-byte envelope, then the payload as
 * docs/wire-format.md and lib/bloom/age_partitioned.cpp give it):
 *   u32 k, l, seed, S; u64 span, generation, until_shift, gen_inserts,
 *   last_shift, high_water, inserts, next_serial;
 *   S times: u64 m, n, t, serial, owned, own_end, words[ceil(m/64)]. */
enum {
    HDR = 20,
    P_K = HDR,
    P_L = HDR + 4,
    P_SEED = HDR + 8,
    P_S = HDR + 12,
    P_SPAN = HDR + 16,
    P_GEN = HDR + 24,
    P_UNTIL = HDR + 32,
    P_GEN_INS = HDR + 40,
    P_LAST = HDR + 48,
    P_HIGH = HDR + 56,
    P_INSERTS = HDR + 64,
    P_NEXT = HDR + 72,
    P_SLICES = HDR + 80
};

typedef struct {
    uint64_t m, n, t, serial, owned, own_end;
    size_t off;   /* offset of the slice header in the blob */
    uint64_t pop; /* set bits */
} slice_view;

typedef struct {
    uint32_t k, l, seed, S;
    uint64_t span, generation, until_shift, gen_inserts, last_shift, high_water, inserts, next_serial;
    slice_view *s; /* s_0 first; free() it */
} blob_view;

/* Decodes a whole blob of kind 2 (classic) or 3, checking that its slices
 * fill the payload exactly. */
blob_view bu_decode(const unsigned char *b, size_t len);

/* ---- an independent false-positive model --------------------------------- */

/* P(some run of k consecutive set bits) among S independent slices with
 * fill ratios r[0..S), as a sum over where the first run completes (the
 * library scans a dynamic program); prefix[j] (if not NULL) receives the
 * rate of the first j slices alone. */
double bu_model_prefix(uint32_t k, const double *r, size_t S, double *prefix);
double bu_model_fpr(uint32_t k, const double *r, size_t S);
/* The fill ratios just before a shift at steady state (equation 2), and
 * the model's rate for them. */
void bu_steady_fills(uint32_t k, uint32_t l, double *r);
double bu_model_steady(uint32_t k, uint32_t l);
/* The model with the fills a blob records, slices older than the span at
 * `now` counting as empty. */
double bu_model_of_view(const blob_view *v, uint64_t now);
/* tf_age_bloom_bits_per_element(k, l). */
double bu_steady_bpe(uint32_t k, uint32_t l);

/* ---- the false-positive rate at steady state ------------------------------ */

/* z standard deviations of a count of N Bernoulli(p) trials, plus 4% of p
 * for what the model leaves out (bloom_util.c explains the margins). */
double bu_tolerance(double p, double N, double z);
/* measured within bu_tolerance(model, N, z) of the model. */
void bu_check_model(const char *what, double target, double measured, double model, double N, double z);
/* bu_check_model with z = 3.5, and measured in [0.5, 1.2] x target. */
void bu_check_band(const char *what, double target, double measured, double model, double N);

/* ---- blobs ---------------------------------------------------------------- */

/* The decoded blob of a filter (tu_age_bloom or tu_time_bloom). */
blob_view bu_view(const void *obj, const tu_structure *st);

/* The cases every payload of kinds 2 and 3 refuses, for the blob `v`
 * decodes (its slices' offsets and serials): a format version it does not
 * know, an undefined flag, k and l out of range, slice counts that do not
 * fit the payload (fewer, and 2^32 - 1: refused before allocating), s_0's
 * serial at next_serial, slices below 64 bits or of 2^64 - 1 bits, serials
 * out of order. Each gets its status (tu_check_field_cases). */
void bu_check_slice_payload_cases(const blob_view *v, const unsigned char *good, size_t n, tu_try_blob_fn try_blob);

/* ---- one interface over the two filters ----------------------------------- */

/* The calls the checks both suites share drive on either filter; the count
 * window ignores `now`. */
typedef struct {
    const tu_structure *st;
    int timed; /* the calls take a time: the time-limited filter */
    tf_status (*add)(void *f, const void *key, size_t len, uint64_t now);
    tf_status (*add_if_absent)(void *f, const void *key, size_t len, uint64_t now, int *was_present);
    tf_status (*contains)(const void *f, const void *key, size_t len, uint64_t now, int *present);
    uint64_t (*inserts)(const void *f, uint64_t now); /* the stats' count */
} bu_filter;
extern const bu_filter bu_age, bu_time;

/* add_if_absent on `a` against contains-then-add on `b`, two filters made
 * alike, for 30000 keys tu_make_key('d', below `ids`) (many repeats; when
 * timed the clock moves 0..2 units a key): the same answers and the same
 * bytes; a key reported present changes nothing (not even the clock); the
 * stats count the inserts. Frees both. */
void bu_check_add_if_absent(const bu_filter *bf, void *a, void *b, uint64_t ids);
/* A filter of `bytes` (tf_*_memory) made while the process had `before`
 * bytes resident (tu_resident_bytes): it holds at least 300 MiB, and making
 * it made at most 16 MiB of them resident (its slices are zeroed blocks,
 * not written at creation). */
void bu_check_made_lazily(uint64_t before, size_t bytes);
/* Two filters made alike but for their seeds, after the same 30 inserts
 * at time 10: different bytes, and different answers for more than 100 of
 * 2000 other keys. Frees both. */
void bu_check_seeds_differ(const bu_filter *bf, void *a, void *b);
/* `c` (a copy of `f` through its blob) answers as `f` for the keys
 * tu_make_key('r', 0 .. answers - 1) at *now, and stays the same bytes
 * under the same `steps` random operations on both (adds and
 * add_if_absents, with the same answers, of ids below `ids`; when timed
 * the clock moves, faster in the second half); one insert more into `c`
 * and they differ. *now (NULL for the count window) ends at the last
 * time. */
void bu_check_same_future(const bu_filter *bf, void *f, void *c, uint64_t answers, uint64_t ids, int steps,
                          uint64_t *now);

/* Deserializes a blob (a tu_try_blob_fn's work): a failure makes nothing
 * and says why; an accepted filter answers, reports its stats and
 * serializes to the same bytes, and a count window takes an insert too. */
tf_status bu_try_blob(const bu_filter *bf, const unsigned char *b, size_t n);

/* ---- the wire tests both suites run (bloom_wire.c) ------------------------ */

/* Plausible small header fields of a kind 2/3 payload (bu_plant_header):
 * k and l in 1..3, S in s_min + [0, s_range), span in span_min + [0,
 * span_range) (span_min alone when span_range is 0), generation in 1 +
 * [0, gen_range) (left alone when gen_range is 0). */
typedef struct {
    uint32_t s_min, s_range;
    uint64_t span_min, span_range, gen_range;
} bu_header_ranges;
/* A tu_plant_fn (ctx: the bu_header_ranges): those fields, on half the
 * payloads that hold them. */
void bu_plant_header(unsigned char *buf, size_t len, tu_rng *r, const void *ctx);

/* What they need of a filter's suite. */
typedef struct {
    const bu_filter *filter;
    uint16_t kind;
    tu_try_blob_fn try_blob; /* deserializes, and uses what it accepted */
    /* checks the filter's own hostile fields on `good`, the blob `v`
     * decodes (tu_check_field_cases) */
    void (*check_own_cases)(const blob_view *v, const unsigned char *good, size_t n);
    struct {
        void *(*tiny)(void);   /* k = l = 3, 256-bit slices, one key */
        void *(*filled)(void); /* a few hundred inserts: the cut blobs */
        void *(*small)(void);  /* four 64-bit slices, inserts, a shift... */
        size_t small_max;      /* ...in a blob shorter than this */
    } make;
    struct {
        const tu_structure *other;  /* the other Bloom filter... */
        void *(*other_small)(void); /* ...a small one of it... */
        tf_status other_edited;     /* ...and its blob with this kind */
        tf_status sketch_edited;    /* a recency sketch's blob with this kind (TF_OK: not tried) */
    } foreign;
    struct {
        uint64_t seed; /* blobs of up to max_len bytes */
        size_t max_len;
        bu_header_ranges header; /* plausible header fields for half the payloads */
    } random;
} bu_wire;

/* The tests, each run with a bu_wire as its cmocka state. */
void bu_test_serialize_buffer_too_small(void **state);
void bu_test_deserialize_truncated(void **state);
void bu_test_deserialize_bit_flips(void **state);
void bu_test_deserialize_bit_flips_fixed_checksum(void **state);
void bu_test_deserialize_hostile_fields(void **state);
void bu_test_deserialize_wrong_kind_random_and_null(void **state);
#define BU_WIRE_TEST_(name, wire) \
    { #name, bu_##name, NULL, NULL, (void *)(wire) }
/* The entries of a group for them, over `wire` (a const bu_wire *). */
#define BU_WIRE_TESTS(wire)                                                                                \
    BU_WIRE_TEST_(test_serialize_buffer_too_small, wire), BU_WIRE_TEST_(test_deserialize_truncated, wire), \
        BU_WIRE_TEST_(test_deserialize_bit_flips, wire),                                                   \
        BU_WIRE_TEST_(test_deserialize_bit_flips_fixed_checksum, wire),                                    \
        BU_WIRE_TEST_(test_deserialize_hostile_fields, wire),                                              \
        BU_WIRE_TEST_(test_deserialize_wrong_kind_random_and_null, wire)

/* ---- the age-partitioned (count window) filter ----------------------------- */

tf_age_bloom *ab_make(uint32_t k, uint32_t l, uint64_t bits, uint32_t seed);
tf_age_bloom *ab_make_for(double rate, uint64_t capacity, uint32_t seed);
/* ab_make, whose generation must be g = floor(bits ln 2 / k) (section 5). */
tf_age_bloom *ab_make_with_generation(uint32_t k, uint32_t l, uint64_t bits, uint32_t seed, uint64_t g);
/* tf_age_bloom_get_info and tf_age_bloom_get_stats into the fields a test
 * asks for (any pointer may be NULL): one call each, the status passed on
 * (on failure the fields are the zeros of _INIT). */
tf_status ab_info(const tf_age_bloom *f, uint32_t *k, uint32_t *l, uint64_t *slice_bits, uint64_t *generation,
                  uint64_t *capacity, uint32_t *seed);
tf_status ab_stats(const tf_age_bloom *f, uint64_t *slices, uint64_t *bits, double *bits_per_element, uint64_t *inserts,
                   double *fpr_now);
/* tf_age_bloom_get_info, asserting success. */
tf_age_bloom_info ab_info_of(const tf_age_bloom *f);
/* 1 for the blocked layout (the flags of tf_age_bloom_get_info), else 0. */
tf_status ab_is_blocked(const tf_age_bloom *f, int *blocked);
/* Inserts / asks for the key tu_make_key(tag, id). */
void ab_add_id(tf_age_bloom *f, unsigned char tag, uint64_t id);
/* f after the keys (tag, 0) .. (tag, n - 1) were inserted in order. */
tf_age_bloom *ab_filled(tf_age_bloom *f, unsigned char tag, uint64_t n);
int ab_has_id(const tf_age_bloom *f, unsigned char tag, uint64_t id);
/* False positives among the next q never-inserted keys. */
uint64_t ab_count_absent(const tf_age_bloom *f, uint64_t q);

unsigned char *ab_snap(const tf_age_bloom *f, size_t *len);
int ab_same(const tf_age_bloom *a, const tf_age_bloom *b);
void ab_assert_unchanged(const tf_age_bloom *f, const unsigned char *before, size_t len);
blob_view ab_view(const tf_age_bloom *f);
/* The model with the filter's actual fill ratios (set bits / m). */
double ab_model_actual(const tf_age_bloom *f);

/* The window guarantee over `total` operations (fresh keys, repeats, a hot
 * key, add_if_absent) against a log of the inserts: every key among the
 * last l * g inserts is found (bloom_util.c); *checked counts the queries. */
void ab_check_window(tf_age_bloom *f, uint64_t total, uint64_t seed, uint64_t *checked);
/* ab_check_window, then frees f. */
void ab_window_then_free(tf_age_bloom *f, uint64_t total, uint64_t seed, uint64_t *checked);

/* Deserializes a blob (tu_try_blob_fn): whatever is accepted is usable. */
tf_status ab_try_blob(const unsigned char *b, size_t n);
/* options->max_memory refuses `blob` (f's) below what f holds, before
 * allocating, and accepts it at exactly that. */
void ab_check_max_memory(const tf_age_bloom *f, const unsigned char *blob, size_t n);
/* The golden blob `name`.tfb equals what golden_age_bloom(flags) (golden.h)
 * serializes to and reads back with the answers of `name`.expected; the
 * last `window` golden inserts are present. */
void ab_check_golden(const char *name, uint32_t flags, unsigned window);

/* ---- the time-limited filter ---------------------------------------------- */

tf_time_bloom *tb_make(uint32_t k, uint32_t l, uint64_t bits, uint64_t span, uint32_t seed);
tf_time_bloom *tb_make_for(double rate, uint64_t span, uint64_t capacity, uint32_t seed);
/* tf_time_bloom_get_info and tf_time_bloom_get_stats into the fields a
 * test asks for (any pointer may be NULL), as ab_info and ab_stats. */
tf_status tb_info(const tf_time_bloom *f, uint32_t *k, uint32_t *l, uint64_t *span, uint32_t *seed);
tf_status tb_stats(const tf_time_bloom *f, uint64_t now, uint64_t *slices, uint64_t *bits, double *bits_per_element,
                   uint64_t *inserts, double *fpr_now);
/* One field of the stats at `now`, and the size of s_0. */
uint64_t tb_n_slices(const tf_time_bloom *f, uint64_t now);
uint64_t tb_total_bits(const tf_time_bloom *f, uint64_t now);
double tb_bits_per_elt(const tf_time_bloom *f, uint64_t now);
double tb_fpr_now(const tf_time_bloom *f, uint64_t now);
uint64_t tb_s0_bits(const tf_time_bloom *f);
void tb_add_id(tf_time_bloom *f, unsigned char tag, uint64_t id, uint64_t now);
int tb_has_id(const tf_time_bloom *f, unsigned char tag, uint64_t id, uint64_t now);
uint64_t tb_count_absent(const tf_time_bloom *f, uint64_t q, uint64_t now);

unsigned char *tb_snap(const tf_time_bloom *f, size_t *len);
int tb_same(const tf_time_bloom *a, const tf_time_bloom *b);
void tb_assert_unchanged(const tf_time_bloom *f, const unsigned char *before, size_t len);
blob_view tb_view(const tf_time_bloom *f);
/* The model with the filter's actual fills at `now` (stale slices empty). */
double tb_model_actual(const tf_time_bloom *f, uint64_t now);

/* A stream driver for the span guarantee: a log of every actual insert
 * (id, time); after every insert the oldest logged key still within the
 * span (now - span <= t) is queried, so each key is checked at the last
 * moment it is guaranteed, and tb_sweep() queries every key of the span.
 * Ids repeat (15% a recent key again, 5% add_if_absent of a recent key,
 * whose answer must be 1 when its last insert is within the span). */
typedef struct {
    tf_time_bloom *f;
    uint64_t span;
    uint64_t *id, *t; /* the log */
    uint64_t *last;   /* last insert time of an id (0: never) */
    size_t n, cap, lo;
    uint64_t next_id, now, checked, max_slices, inserts_at_max;
    double max_bpe;
    tu_rng rng;
} tb_stream;

void tb_stream_init(tb_stream *s, tf_time_bloom *f, size_t cap, uint64_t seed);
void tb_stream_free(tb_stream *s);
void tb_stream_insert(tb_stream *s, uint64_t now);
/* An insert at a time the caller gives, which may be behind the clock: the
 * filter clamps it to the highest time seen, and so does the record. */
void tb_stream_insert_given(tb_stream *s, uint64_t given);
void tb_sweep(tb_stream *s, uint64_t now);
/* Poisson arrivals at `rate` per time unit during `duration` units; a
 * sweep of the whole span every span. */
void tb_poisson_phase(tb_stream *s, double *clock, double rate, double duration, uint64_t *next_sweep);
/* An idle gap of `gap` units with queries inside it (bloom_util.c). */
void tb_idle_gap(tb_stream *s, double *clock, uint64_t gap);

#endif
