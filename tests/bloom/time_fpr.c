/* The time-limited Bloom filter's false-positive rate at steady state,
 * against the target and the exact model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloom_util.h"

/* The steady state is one insert per unit with span = l * g units, so that
 * it matches the count window's generation g; the rate is the time average
 * over a generation, with N = max(1e6, 480 / target) absent keys and the
 * margins of bu_check_band: the model lies between 0.6 and 1.0 x target, so
 * the band [0.5, 1.2] x target holds (checked before measuring). */
/* (state: cmocka's, unused) */
static void fpr_at_steady_state(double target, uint64_t g, uint32_t seed, void **state) {
    (void)state;
    uint32_t k, l;
    OK(tf_age_bloom_choose(target, 0, &k, &l, NULL));
    const uint64_t span = (uint64_t)l * g;
    tf_time_bloom *f = tb_make_for(target, span, span, seed);
    uint64_t now = 1;
    for (; now <= 2 * span; ++now) tb_add_id(f, 'p', now, now);
    /* steady: k + l slices (k + l + 1 for a moment after a shift) */
    uint64_t slices = tb_n_slices(f, now);
    assert_true(slices == k + l || slices == k + l + 1);
    const double N = kScale * fmax(1e6, 480 / target);
    const uint64_t per = (uint64_t)ceil(N / (double)g);
    uint64_t fp = 0, asked = 0;
    double model_sum = 0, actual_sum = 0, fpr_sum = 0;
    int samples = 0;
    for (uint64_t j = 0; j < g; ++j, ++now) {
        tb_add_id(f, 'p', now, now);
        const double p = tb_fpr_now(f, now);
        model_sum += p;
        if (j % (g / 8) == 0) {
            /* fpr_now is the model of the measured fills: computed here too */
            actual_sum += tb_model_actual(f, now);
            fpr_sum += p;
            samples++;
        }
        fp += tb_count_absent(f, per, now);
        asked += per;
    }
    char what[96];
    snprintf(what, sizeof what, "target %g (k=%u l=%u), span %llu", target, k, l, (unsigned long long)span);
    const double model = model_sum / (double)g;
    bu_check_band(what, target, (double)fp / (double)asked, model, (double)asked);
    assert_true(fabs(actual_sum - fpr_sum) <= 1e-9 * fpr_sum);
    /* bits per element at steady state: (k + l) k / (l ln 2), within the
     * rounding of m up and the extra slice after a shift */
    const double bpe = tb_bits_per_elt(f, now - 1);
    print_message("# bits per element %.2f (formula %.2f)\n", bpe, bu_steady_bpe(k, l));
    assert_true(bpe >= 0.9 * bu_steady_bpe(k, l) && bpe <= 1.1 * bu_steady_bpe(k, l));
    tf_time_bloom_free(f);
}

static const uint64_t kG = TF_SANITIZED ? 500 : 1500;

static void test_fpr_1e1(void **state) { fpr_at_steady_state(1e-1, 2000, 201, state); }

static void test_fpr_1e2(void **state) { fpr_at_steady_state(1e-2, kG, 202, state); }

static void test_fpr_1e3(void **state) { fpr_at_steady_state(1e-3, kG, 203, state); }

static void test_fpr_1e4(void **state) { fpr_at_steady_state(1e-4, kG, 204, state); }

BU_DEFINE_GROUP(time_fpr_tests, cmocka_unit_test(test_fpr_1e1), cmocka_unit_test(test_fpr_1e2),
                cmocka_unit_test(test_fpr_1e3), cmocka_unit_test(test_fpr_1e4));
