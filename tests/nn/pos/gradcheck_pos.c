/* gradcheck_pos.c (float64 build): finite-difference checks (rg_gradcheck, relative error < 1e-6) of the position
 * encodings' ops with respect to their inputs and parameters, at positions far past any training length (150..160,
 * and sparse random positions up to 400), and of the whole reference model's loss with respect to every parameter,
 * in the cases the conformance check (gradcheck_conformance.c, every registered encoding at its default config:
 * causal, rows of different positions, full rotary width, no RoPE scaling; each hook at every element within
 * 1.1e-7, the model within 3.7e-7) does not reach: T5 with rows that share positions and bidirectional, XL with
 * fewer queries than keys and its direct path, RoPE at a partial rotary width and under each scaling type, axial
 * RoPE with distinct row and column ids, KERPLE's shared-rows and per-entry paths, and the model bidirectional, with
 * rotary_dim 2, with RoPE scaling, and FIRE around its threshold L. The sinusoidal, learned, rope and rope-half ops
 * and the model with sinusoidal, learned, t5, xl, alibi, rope, kerple-log and kerple-power at the default config are
 * the conformance check's (it was checked here too). Each case prints its worst relative error. Losses are
 * sum(out * w) with a fixed random w, or the model's cross-entropy. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-6
#define H_STEP 1e-6
#define NAME_W 52 /* report column width */

/* A generic op case: the op builds its output from the inputs; w weights it. */
typedef struct op_case op_case;
struct op_case {
    rg_tensor *(*op)(rg_ctx *c, rg_tensor **in, op_case *oc);
    const int32_t *pos, *pos2;  /* positions (queries / columns), keys / rows */
    int B, T, S, H;
    bool flag;                  /* half pairing / bidirectional */
    const rg_rope_table *tab;
    rg_pos_summary sum;         /* T5, XL: of pos, pos2 */
    rg_real *w;                 /* allocated on the first call (output size known then) */
    rg_rng *rng;
};

static rg_tensor *op_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    op_case *oc = user;
    rg_tensor *out = oc->op(c, in, oc);
    if (!oc->w) oc->w = tc_random_weights(out->numel, oc->rng);
    return tc_weighted_sum(c, out, oc->w);
}

static void run_case(const char *name, op_case *oc, rg_tensor **in, int n)
{
    double rel[8];
    double worst = rg_gradcheck(op_fn, oc, in, n, H_STEP, rel);
    tc_gradcheck_report(NAME_W, name, worst, rel, n, TOL);
    free(oc->w);
    oc->w = NULL;
    for (int i = 0; i < n; i++) rg_param_free(in[i]);
}

/* positions 150.. (row b offset by b), or sparse sorted random ones */
static void far_positions(int32_t *pos, int B, int T, int start) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) pos[b * T + t] = start + t + b;
}

/* ------------------------------------------------------------------ T5 */

static rg_tensor *t5_op(rg_ctx *c, rg_tensor **in, op_case *oc)
{
    return rg_pos_t5_bias(c, in[0], &oc->sum, oc->flag, 128);
}

static void check_t5(const char *name, bool bidir, bool shared)
{
    rg_rng rng;
    rg_rng_seed(&rng, 3, bidir);
    int B = 2, T = 4, S = 6;
    int32_t qp[8], kp[12];
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) qp[b * T + t] = 150 + 2 * t + (shared ? 0 : 40 * b);
        for (int s = 0; s < S; s++) kp[b * S + s] = 146 + 3 * s + (shared ? 0 : 7 * b);
    }
    op_case oc = {.op = t5_op, .pos = qp, .pos2 = kp, .B = B, .T = T, .S = S, .flag = bidir, .rng = &rng};
    rg_pos_summarize(&oc.sum, qp, kp, B, T, S);
    assert_true(oc.sum.rows_shared == shared);
    rg_tensor *in[1] = {tc_param_randn("rel_bias", 2, (int[]){32, 3}, &rng, 1)};
    run_case(name, &oc, in, 1);
}

static void test_t5_causal(void **state) { check_t5("t5 causal: table, [H,T,S] at 146..165", false, true); }
static void test_t5_bidir(void **state) { check_t5("t5 bidirectional: table, [B,H,T,S] at 146..203", true, false); }

/* ------------------------------------------------------------------ KERPLE */

static rg_tensor *kerple_op(rg_ctx *c, rg_tensor **in, op_case *oc)
{
    return rg_pos_kerple_bias(c, in[0], in[1], oc->flag, &oc->sum);
}

/* r1, r2 in (0.2, 1.9): inside the region the projection keeps (no clamp at these values). shared: rows share
 * positions, 146..165 with repeated query/key positions (distance 0: power's d/dr2 is 0 there), distances from a
 * table; else sparse per-row positions up to 400, more distances than entries (computed per entry). */
static void check_kerple(const char *name, bool power, bool shared)
{
    rg_rng rng;
    rg_rng_seed(&rng, 9, 2 * power + shared);
    int B = 2, T = 3, S = 4, H = 3;
    int32_t qp[6], kp[8];
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < T; t++) qp[b * T + t] = shared ? 150 + 2 * t : 150 + 97 * t + 31 * b;
        for (int s = 0; s < S; s++) kp[b * S + s] = shared ? 146 + 4 * s : 120 + 83 * s + 13 * b;
    }
    op_case oc = {.op = kerple_op, .B = B, .T = T, .S = S, .flag = power, .rng = &rng};
    rg_pos_summarize(&oc.sum, qp, kp, B, T, S);
    assert_true(oc.sum.rows_shared == shared);
    rg_tensor *in[2] = {tc_param_randn("r1", 1, (int[]){H}, &rng, 1), tc_param_randn("r2", 1, (int[]){H}, &rng, 1)};
    for (int k = 0; k < 2; k++)
        for (int h = 0; h < H; h++) in[k]->data[h] = 0.2 + fmod(fabs(in[k]->data[h]), 1.7);
    run_case(name, &oc, in, 2);
}

static void test_kerple_log(void **state) { check_kerple("kerple log: r1, r2, [H,T,S] at 146..158", false, true); }
static void test_kerple_log_sparse(void **state)
{
    check_kerple("kerple log: r1, r2, [B,H,T,S] sparse to 400", false, false);
}
static void test_kerple_power(void **state) { check_kerple("kerple power: r1, r2, [H,T,S] (d = 0)", true, true); }
static void test_kerple_power_sparse(void **state)
{
    check_kerple("kerple power: r1, r2, [B,H,T,S] sparse to 400", true, false);
}

/* ------------------------------------------------------------------ Transformer-XL */

static rg_tensor *xl_op(rg_ctx *c, rg_tensor **in, op_case *oc)
{
    return rg_pos_xl_bias(c, in[0], in[1], in[2], in[3], in[4], oc->H, &oc->sum);
}

static void check_xl(const char *name, bool sparse)
{
    rg_rng rng;
    rg_rng_seed(&rng, 4, sparse);
    int B = 2, T = 4, S = 5, H = 2, hd = 4, d = H * hd;
    int32_t qp[8], kp[10];
    if (sparse) { /* random sorted positions in [0, 400): far more distances than keys (direct path) */
        int32_t all[2 * 5];
        rg_random_positions(&rng, B, S, 400, all);
        memcpy(kp, all, sizeof kp);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) qp[b * T + t] = all[b * S + 1 + t];
    } else { /* queries at the end of the keys, as with a KV cache: 151..154 against 150..154 */
        for (int b = 0; b < B; b++) {
            for (int t = 0; t < T; t++) qp[b * T + t] = 151 + t;
            for (int s = 0; s < S; s++) kp[b * S + s] = 150 + s;
        }
    }
    op_case oc = {.op = xl_op, .pos = qp, .pos2 = kp, .H = H, .rng = &rng};
    rg_pos_summarize(&oc.sum, qp, kp, B, T, S);
    rg_tensor *in[5] = {tc_param_randn("q", 3, (int[]){B, T, d}, &rng, 1),
                        tc_param_randn("k", 3, (int[]){B, S, d}, &rng, 1),
                        tc_param_randn("u", 2, (int[]){H, hd}, &rng, 1),
                        tc_param_randn("v", 2, (int[]){H, hd}, &rng, 1),
                        tc_param_randn("r_proj", 2, (int[]){d, d}, &rng, 0.5)};
    run_case(name, &oc, in, 5);
}

static void test_xl_gemm(void **state) { check_xl("xl: q, k, u, v, W_r at 150..154 (GEMM path)", false); }
static void test_xl_sparse(void **state) { check_xl("xl: q, k, u, v, W_r, random positions < 400 (direct)", true); }

/* ------------------------------------------------------------------ RoPE */

static rg_tensor *rope_op(rg_ctx *c, rg_tensor **in, op_case *oc)
{
    return rg_pos_rope(c, in[0], oc->H, oc->flag, oc->tab);
}

static void check_rope_af(const char *name, bool half, int rotary_dim, rg_rope_ext ext, double attention_factor)
{
    rg_rng rng;
    rg_rng_seed(&rng, 5, (uint64_t)ext * 4 + half * 2 + (rotary_dim < 8));
    int B = 2, T = 6, H = 2, hd = 8;
    int32_t pos[12];
    far_positions(pos, B, T, 150);
    pos[5] = 160;
    pos[6] = -3; /* negative positions */
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = H * hd;
    cfg.n_heads = H;
    cfg.rotary_dim = rotary_dim;
    cfg.rope_ext = ext;
    cfg.rope_scale = ext == RG_ROPE_EXT_NONE ? 1 : 2;
    cfg.rope_orig_len = 24;
    cfg.rope_attention_factor = attention_factor;
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    rg_ctx *tc = rg_ctx_new(); /* holds the table: one row per token */
    rg_rope_table tab = rg_rope_table_new(tc, &cfg, pos, B * T, 161);
    op_case oc = {.op = rope_op, .pos = pos, .H = H, .flag = half, .tab = &tab, .rng = &rng};
    /* q and k are rotated by the same op: one input each */
    rg_tensor *in[2] = {tc_param_randn("q", 3, (int[]){B, T, H * hd}, &rng, 1),
                        tc_param_randn("k", 3, (int[]){B, T, H * hd}, &rng, 1)};
    double rel[2];
    double worst = rg_gradcheck(op_fn, &oc, in, 1, H_STEP, rel);
    free(oc.w);
    oc.w = NULL;
    double w2 = rg_gradcheck(op_fn, &oc, in + 1, 1, H_STEP, rel + 1);
    tc_gradcheck_report(NAME_W, name, tc_max(worst, w2), rel, 2, TOL);
    free(oc.w);
    rg_param_free(in[0]);
    rg_param_free(in[1]);
    rg_ctx_free(tc);
}

static void check_rope(const char *name, bool half, int rotary_dim, rg_rope_ext ext)
{
    check_rope_af(name, half, rotary_dim, ext, 0);
}

static void test_rope_partial(void **state) { check_rope("rope interleaved, rotary_dim 4", false, 4, RG_ROPE_EXT_NONE); }
static void test_rope_half_partial(void **state) { check_rope("rope half, rotary_dim 4", true, 4, RG_ROPE_EXT_NONE); }
static void test_rope_pi(void **state) { check_rope("rope pi s=2", false, 8, RG_ROPE_EXT_PI); }
static void test_rope_ntk(void **state) { check_rope("rope ntk s=2", true, 8, RG_ROPE_EXT_NTK); }
static void test_rope_yarn(void **state) { check_rope("rope yarn s=2", false, 8, RG_ROPE_EXT_YARN); }
static void test_rope_llama3(void **state) { check_rope("rope llama3 s=2", true, 8, RG_ROPE_EXT_LLAMA3); }
static void test_rope_dynamic(void **state) { check_rope("rope dynamic s=2, L 24, length 161", false, 8, RG_ROPE_EXT_DYNAMIC); }
static void test_rope_yarn_af(void **state)
{
    check_rope_af("rope yarn s=2, attention_factor 1.3", true, 8, RG_ROPE_EXT_YARN, 1.3);
}

/* ------------------------------------------------------------------ axial RoPE */

static rg_tensor *axial_op(rg_ctx *c, rg_tensor **in, op_case *oc)
{
    return rg_pos_axial_rope(c, in[0], oc->H, 100.0, oc->pos, oc->pos2);
}

static void test_axial(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 6, 1);
    int B = 2, N = 6, H = 2, hd = 8;
    int32_t col[12], row[12];
    for (int i = 0; i < B * N; i++) { col[i] = 150 + i % 3; row[i] = 155 + i / 3; }
    op_case oc = {.op = axial_op, .pos = col, .pos2 = row, .H = H, .rng = &rng};
    rg_tensor *in[1] = {tc_param_randn("x", 3, (int[]){B, N, H * hd}, &rng, 1)};
    run_case("axial rope: x at columns 150..152, rows 155..158", &oc, in, 1);
}

/* ------------------------------------------------------------------ the model with each encoding */

typedef struct {
    rg_model *m;
    const int32_t *tokens, *targets, *positions;
    int B, T;
} model_case;

static rg_tensor *model_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    model_case *mc = user;
    rg_tensor *logits;
    rg_status st = rg_model_forward(c, mc->m, mc->tokens, mc->positions, mc->B, mc->T, NULL, &logits);
    RG_ASSERT(st == RG_OK, "forward: %s", rg_last_error());
    return rg_cross_entropy(c, logits, mc->targets, -100);
}

static void check_model(const char *name, rg_pos_kind pos, rg_rope_ext ext, int rotary_dim, bool causal)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 7;
    cfg.d_model = 8;
    cfg.n_heads = 2;
    cfg.n_layers = 1;
    cfg.d_ff = 12;
    cfg.max_len = 162;
    cfg.causal = causal;
    cfg.pos = pos;
    cfg.rope_ext = ext;
    cfg.rope_scale = ext == RG_ROPE_EXT_NONE ? 1 : 2;
    cfg.rope_orig_len = 24;
    cfg.rotary_dim = rotary_dim;
    /* fire: with L_multiplier 1 below, both rows have positions on both sides of L */
    assert_int_equal(rg_pos_config_set(&cfg, "fire_init_L", 152.5), RG_OK);
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 5, &m), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 78, (uint64_t)pos);
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        tc_fill_randn(p, &rng, 0.4);
        if (strstr(p->name, "fire.L_multiplier")) p->data[0] = 1;
        if (strstr(p->name, ".kerple.")) /* (0.2, 1.9): no clamp by the projection at or near these values */
            for (int64_t j = 0; j < p->numel; j++) p->data[j] = 0.2 + fmod(fabs(p->data[j]), 1.7);
    }
    int32_t tokens[2 * 4] = {1, 5, 2, 6, 0, 3, 3, 4};
    int32_t targets[2 * 4] = {5, 2, -100, 1, 3, 3, 4, -100};
    int32_t positions[2 * 4] = {150, 152, 155, 161, 151, 152, 153, 154};
    model_case mc = {m, tokens, targets, positions, 2, 4};
    double *rel = malloc((size_t)m->params.n * sizeof *rel);
    rg_gradcheck(model_fn, &mc, m->params.items, m->params.n, H_STEP, rel);
    /* A gradient that is exactly zero in exact arithmetic (the key bias when the scores only see q . b_k, constant
     * along a row; FIRE's output bias mlp.2.bias, a per-head constant on every score) compares rounding noise with
     * rounding noise: check it is ~0 instead. */
    double worst = 0;
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        double gmax = 0;
        for (int64_t j = 0; j < p->numel; j++) gmax = tc_max(gmax, fabs((double)p->grad[j]));
        if ((strstr(p->name, "k_proj.bias") || strstr(p->name, "fire.mlp.2.bias")) && gmax < 1e-12) rel[i] = 0;
        if (strstr(p->name, "fire.mlp.2.bias")) assert_true(gmax < 1e-12);
        if (strstr(p->name, "fire.L_multiplier")) assert_true(gmax > 1e-8); /* rows below L: it is checked */
        if (!(rel[i] < TOL)) print_message("  %s: %.3g\n", p->name, rel[i]);
        if (!(rel[i] <= worst)) worst = rel[i];
    }
    char buf[128];
    snprintf(buf, sizeof buf, "model %s (%lld params)", name, (long long)rg_params_numel(&m->params));
    tc_gradcheck_report(NAME_W, buf, worst, rel, m->params.n, TOL);
    free(rel);
    rg_model_free(m);
}

static void test_model_t5_bidir(void **s) { check_model("t5 bidirectional", RG_POS_T5, 0, 0, false); }
static void test_model_rope_half(void **s) { check_model("rope-half rotary_dim 2", RG_POS_ROPE_HALF, 0, 2, true); }
static void test_model_rope_dynamic(void **s)
{
    check_model("rope dynamic s=2 (L 24, positions to 161)", RG_POS_ROPE, RG_ROPE_EXT_DYNAMIC, 0, true);
}
static void test_model_fire(void **s) { check_model("fire (L 152.5, per-row positions)", RG_POS_FIRE, 0, 0, true); }
static void test_model_fire_bidir(void **s) { check_model("fire bidirectional", RG_POS_FIRE, 0, 0, false); }
static void test_model_rope_yarn(void **s) { check_model("rope yarn s=2", RG_POS_ROPE, RG_ROPE_EXT_YARN, 0, true); }
static void test_model_rope_llama3(void **s)
{
    check_model("rope-half llama3 s=2", RG_POS_ROPE_HALF, RG_ROPE_EXT_LLAMA3, 0, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t5_causal),          cmocka_unit_test(test_t5_bidir),
        cmocka_unit_test(test_xl_gemm),            cmocka_unit_test(test_xl_sparse),
        cmocka_unit_test(test_rope_partial),       cmocka_unit_test(test_rope_half_partial),
        cmocka_unit_test(test_rope_pi),            cmocka_unit_test(test_rope_ntk),
        cmocka_unit_test(test_rope_dynamic),       cmocka_unit_test(test_rope_yarn_af),
        cmocka_unit_test(test_rope_yarn),          cmocka_unit_test(test_rope_llama3),
        cmocka_unit_test(test_axial),              cmocka_unit_test(test_model_t5_bidir),
        cmocka_unit_test(test_model_rope_half),    cmocka_unit_test(test_model_rope_dynamic),
        cmocka_unit_test(test_model_rope_yarn),    cmocka_unit_test(test_model_rope_llama3),
        cmocka_unit_test(test_model_fire),         cmocka_unit_test(test_model_fire_bidir),
        cmocka_unit_test(test_kerple_log),         cmocka_unit_test(test_kerple_log_sparse),
        cmocka_unit_test(test_kerple_power),       cmocka_unit_test(test_kerple_power_sparse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
