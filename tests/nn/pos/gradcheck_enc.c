/* gradcheck_enc.c (float64 build): finite-difference checks (rg_gradcheck, relative error < 1e-6) of M-RoPE and
 * FIRE (src/nn/pos_ext.h), and the FIRE golden values of tools/golden_enc.py at float64 precision.
 *   M-RoPE: x, both pairings, partial rotary, an empty section, per-axis ids that differ, far and negative.
 *   FIRE: every parameter (mlp.0.weight/bias, mlp.2.weight/bias, c, L_multiplier) for rows on both sides of the
 *   threshold L, queries at the end of the keys past L, per-row [B, H, T, S] positions, sparse keys (the path
 *   without the distance table) and L_multiplier < 0; the bias inside causal attention (rg_attention) with q, k, v;
 *   the reciprocal op on its own.
 *   Golden: the bias (max abs error < 1e-12) and the gradients of sum(bias * w) (max rel error < 1e-10) of every
 *   case. Losses are sum(out * w) with a fixed random w. */
#include "common.h"
#include "enc_common.h"

#include <math.h>

#define TOL 1e-6
#define H_STEP 1e-6
#define NAME_W 60

/* ------------------------------------------------------------------ M-RoPE */

typedef struct {
    int H;
    bool half;
    const rg_rope_table *tab;
    rg_real *w;
    rg_rng *rng;
} mrope_gc;

static rg_tensor *mrope_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    mrope_gc *g = user;
    rg_tensor *y = rg_pos_mrope(c, in[0], g->H, g->half, g->tab);
    if (!g->w) g->w = tc_random_weights(y->numel, g->rng);
    return tc_weighted_sum(c, y, g->w);
}

static void check_mrope(const char *name, bool half, int rotary_dim, int s0, int s1, int s2)
{
    rg_rng rng;
    rg_rng_seed(&rng, 15, (uint64_t)half * 8 + (uint64_t)rotary_dim + (uint64_t)s1);
    int B = 2, T = 4, H = 2, hd = 8;
    /* [axis][b*T + t]: different ids per axis, far and negative ones */
    int32_t pos[3 * 8] = {150, 151, 152, 153, 160, 160, 161, -3,
                          150, 152, 154, 156, 7, 8, 9, 10,
                          150, 149, 300, 2, 160, -160, 0, 5};
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = H * hd;
    cfg.n_heads = H;
    cfg.rotary_dim = rotary_dim;
    assert_int_equal(rg_model_config_validate(&cfg), RG_OK);
    rg_ctx *tc = rg_ctx_new(); /* the table's arena: it outlives every forward of the check */
    rg_rope_table tab = rg_mrope_table_new(tc, &cfg, (int[]){s0, s1, s2}, pos, B * T, 301);
    mrope_gc g = {H, half, &tab, NULL, &rng};
    rg_tensor *in[1] = {tc_param_randn("x", 3, (int[]){B, T, H * hd}, &rng, 1)};
    double rel[1];
    double worst = rg_gradcheck(mrope_fn, &g, in, 1, H_STEP, rel);
    tc_gradcheck_report(NAME_W, name, worst, rel, 1, TOL);
    free(g.w);
    rg_param_free(in[0]);
    rg_ctx_free(tc);
}

static void test_mrope_half(void **s) { check_mrope("m-rope half [1, 2, 1]: x", true, 8, 1, 2, 1); }
static void test_mrope_interleaved(void **s) { check_mrope("m-rope interleaved [2, 1, 1]: x", false, 8, 2, 1, 1); }
static void test_mrope_partial(void **s) { check_mrope("m-rope half rotary 4 of 8 [1, 0, 1]: x", true, 4, 1, 0, 1); }

/* ------------------------------------------------------------------ FIRE */

typedef struct {
    rg_pos_fire *f;
    const int32_t *q, *k;
    int B, T, S;
    rg_real *w;
    rg_rng *rng;
} fire_gc;

static rg_tensor *fire_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    fire_gc *g = user;
    rg_tensor *y = rg_pos_fire_bias(c, g->f, g->q, g->k, g->B, g->T, g->S);
    if (!g->w) g->w = tc_random_weights(y->numel, g->rng);
    return tc_weighted_sum(c, y, g->w);
}

static void check_fire(const char *name, const int32_t *q, const int32_t *k, int B, int T, int S, double init_L,
                       double L_mult, uint64_t seed)
{
    rg_rng rng;
    rg_rng_seed(&rng, 15, seed);
    rg_params ps = {0};
    rg_pos_fire f;
    rg_fire_config cfg = rg_fire_config_default(3);
    cfg.mlp_width = 8;
    cfg.init_L = init_L;
    cfg.init_c = 0.3;
    assert_int_equal(rg_pos_fire_init(&f, &ps, "fire", &cfg, &rng), RG_OK);
    f.L_multiplier->data[0] = L_mult;
    fire_gc g = {&f, q, k, B, T, S, NULL, &rng};
    double rel[6];
    double worst = rg_gradcheck(fire_fn, &g, ps.items, ps.n, H_STEP, rel);
    /* L_multiplier must get a gradient when some row lies below L, and none when every row is past it */
    bool below = false;
    for (int i = 0; i < B * T; i++) below |= q[i] < fabs(L_mult * init_L);
    if (below) assert_true(fabs(f.L_multiplier->grad[0]) > 1e-8);
    else assert_true(f.L_multiplier->grad[0] == 0);
    tc_gradcheck_report(NAME_W, name, worst, rel, ps.n, TOL);
    free(g.w);
    rg_params_free(&ps);
}

static void test_fire_threshold(void **s)
{
    int32_t p[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    check_fire("fire: 6 params, T = S = 10, L = 4.5 (rows on both sides)", p, p, 1, 10, 10, 6, 0.75, 1);
}

static void test_fire_cache_far(void **s)
{
    int32_t q[3] = {1010, 1011, 1012}, k[6] = {0, 300, 700, 1008, 1011, 1012};
    check_fire("fire: queries 1010..1012 past L = 512, keys 0..1012", q, k, 1, 3, 6, 512, 1, 2);
}

static void test_fire_rows(void **s)
{
    int32_t q[2 * 3] = {2, 5, 9, 20, 30, 31}, k[2 * 4] = {0, 2, 5, 9, 0, 20, 25, 31};
    check_fire("fire: [B, H, T, S] per-row positions, L = 10", q, k, 2, 3, 4, 10, 1, 3);
}

static void test_fire_sparse(void **s)
{
    int32_t q[4] = {5, 60, 400, 3000}, k[5] = {0, 5, 60, 700, 2999};
    check_fire("fire: sparse keys to 3000 (no table), L_multiplier < 0", q, k, 1, 4, 5, 80, -1.25, 4);
}

/* The bias through causal attention, as a model would use it: q, k, v and the six FIRE parameters. */
typedef struct {
    rg_pos_fire *f;
    rg_real *w;
    rg_rng *rng;
} attn_gc;

static rg_tensor *attn_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    attn_gc *g = user;
    static const int32_t pos[2 * 5] = {0, 1, 2, 3, 4, 0, 1, 2, 3, 4}; /* rows share positions: [H, T, S] */
    rg_tensor *bias = rg_pos_fire_bias(c, g->f, pos, pos, 2, 5, 5);
    rg_tensor *y = rg_attention(c, in[0], in[1], in[2], 3, bias, true, 0.5);
    if (!g->w) g->w = tc_random_weights(y->numel, g->rng);
    return tc_weighted_sum(c, y, g->w);
}

static void test_fire_attention(void **s)
{
    rg_rng rng;
    rg_rng_seed(&rng, 15, 7);
    rg_params ps = {0};
    rg_pos_fire f;
    rg_fire_config cfg = rg_fire_config_default(3);
    cfg.mlp_width = 8;
    cfg.init_L = 3.5;
    cfg.init_c = 0.5; /* at 0.1 L_multiplier's gradient is 5e-4 and the central difference's own error ~4e-6 */
    assert_int_equal(rg_pos_fire_init(&f, &ps, "blocks.0.attn.fire", &cfg, &rng), RG_OK);
    rg_tensor *in[9] = {tc_param_randn("q", 3, (int[]){2, 5, 12}, &rng, 1),
                        tc_param_randn("k", 3, (int[]){2, 5, 12}, &rng, 1),
                        tc_param_randn("v", 3, (int[]){2, 5, 12}, &rng, 1)};
    for (int i = 0; i < 6; i++) in[3 + i] = ps.items[i];
    attn_gc g = {&f, NULL, &rng};
    double rel[9];
    rg_gradcheck(attn_fn, &g, in, 9, H_STEP, rel);
    /* mlp.2.bias adds one constant per head to every score of a row, which the softmax ignores: its gradient is 0
     * in exact arithmetic (the check would compare rounding noise with rounding noise), so check that instead. */
    double worst = 0;
    for (int i = 0; i < 9; i++) {
        if (in[i] == f.b2) {
            for (int h = 0; h < 3; h++) assert_true(fabs(f.b2->grad[h]) < 1e-12);
            rel[i] = 0;
        }
        worst = tc_max(worst, rel[i]);
    }
    tc_gradcheck_report(NAME_W, "fire bias in causal attention: q, k, v, 5 params", worst, rel, 9, TOL);
    free(g.w);
    for (int i = 0; i < 3; i++) rg_param_free(in[i]);
    rg_params_free(&ps);
}

static rg_tensor *recip_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    static const rg_real w[6] = {1, -0.5, 2, 0.3, -1.2, 0.7};
    return tc_weighted_sum(c, rg_fire_reciprocal(c, in[0]), w);
}

static void test_reciprocal(void **s)
{
    rg_tensor *x = rg_param_new("x", 2, (int[]){2, 3});
    const rg_real v[6] = {0.5, -2, 3.25, 1e-2 + 0.3, -0.7, 9};
    memcpy(x->data, v, sizeof v);
    double rel[1];
    double worst = rg_gradcheck(recip_fn, NULL, &x, 1, H_STEP, rel);
    tc_gradcheck_report(NAME_W, "fire_reciprocal: x [2, 3]", worst, rel, 1, TOL);
    rg_param_free(x);
}

/* ------------------------------------------------------------------ FIRE golden in float64 */

static void test_fire_golden_f64(void **s)
{
    double worst_b = 0, worst_g = 0;
    for (int k = 0; k < ENC_N_FIRE; k++) {
        enc_fire_case fc;
        enc_fire_load(enc_fire_cases[k], &fc);
        rg_ctx *c = rg_ctx_new();
        rg_tensor *bias = rg_pos_fire_bias(c, &fc.f, fc.q, fc.k, 1, fc.T, fc.S);
        for (int64_t i = 0; i < bias->numel; i++) worst_b = tc_max(worst_b, fabs(bias->data[i] - fc.bias[i]));
        rg_params_zero_grad(&fc.ps);
        rg_backward(c, tc_weighted_sum(c, bias, fc.w), NULL);
        for (int p = 0; p < fc.ps.n; p++) {
            rg_tensor *t = fc.ps.items[p];
            double mag = 1e-12, diff = 0;
            for (int64_t j = 0; j < t->numel; j++) {
                mag = tc_max(mag, fabs(fc.grad[p][j]));
                diff = tc_max(diff, fabs(t->grad[j] - fc.grad[p][j]));
            }
            worst_g = tc_max(worst_g, diff / mag);
        }
        rg_ctx_free(c);
        enc_fire_free(&fc);
    }
    print_message("%-*s bias max abs err %.3g, grads max rel err %.3g\n", NAME_W, "fire golden (5 cases, float64)",
                  worst_b, worst_g);
    assert_true(worst_b < 1e-12);
    assert_true(worst_g < 1e-10);
}

int main(void)
{
    (void)enc_mrope_cases;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mrope_half),      cmocka_unit_test(test_mrope_interleaved),
        cmocka_unit_test(test_mrope_partial),   cmocka_unit_test(test_fire_threshold),
        cmocka_unit_test(test_fire_cache_far),  cmocka_unit_test(test_fire_rows),
        cmocka_unit_test(test_fire_sparse),     cmocka_unit_test(test_fire_attention),
        cmocka_unit_test(test_reciprocal),
        cmocka_unit_test(test_fire_golden_f64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
