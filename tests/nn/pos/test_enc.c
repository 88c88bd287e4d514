/* test_enc.c (float32): M-RoPE and FIRE (src/nn/pos_ext.h) against golden values computed by PyTorch from the
 * published formulas (tools/golden_enc.py -> tests/fixtures/enc_golden.h5), and their properties.
 *   M-RoPE: text tokens (equal ids) give exactly 1-D RoPE, forward and gradient, for every pairing, partial rotary,
 *   sections with empty axes and the Qwen2-VL shape; HF apply_multimodal_rotary_pos_emb golden values (half and
 *   interleaved, a vision block, far positions, head_dim 128 with [16, 24, 24]); q.k depends only on the per-axis
 *   position differences; bad sections are errors; the axis of each pair, contiguous (Qwen2-VL) and interleaved
 *   (Qwen3-VL).
 *   FIRE: golden bias and gradients of every parameter; parameter names, shapes, order and initialization; the bias
 *   depends on (i - j) alone below the threshold and on i through psi(max(L, i)) above it (checked against the
 *   formula evaluated here in double); the sparse path and the per-row [B, H, T, S] result agree with it; finite at
 *   positions 10^5 and 2^20. */
#include "common.h"
#include "enc_common.h"

#include <math.h>

/* ------------------------------------------------------------------ M-RoPE */

typedef struct {
    const char *name;
    int H, hd, rotary_dim, section[3];
    bool half;
    double base;
    rg_rope_ext ext; /* with factor 4 and original length 32 (the table takes every RoPE setting of the config) */
} mrope_case;

static const mrope_case TEXT_CASES[] = {
    {"qwen2-vl half, hd 128, [16, 24, 24]", 1, 128, 128, {16, 24, 24}, true, 1e6, RG_ROPE_EXT_NONE},
    {"half, hd 16, [2, 3, 3]", 2, 16, 16, {2, 3, 3}, true, 1e4, RG_ROPE_EXT_NONE},
    {"interleaved, hd 16, [2, 3, 3]", 2, 16, 16, {2, 3, 3}, false, 1e4, RG_ROPE_EXT_NONE},
    {"half partial rotary 8 of 16, [1, 2, 1]", 2, 16, 8, {1, 2, 1}, true, 1e4, RG_ROPE_EXT_NONE},
    {"interleaved, one axis only [0, 4, 0]", 3, 8, 8, {0, 4, 0}, false, 1e4, RG_ROPE_EXT_NONE},
    {"half, hd 16, [2, 3, 3], yarn s 4", 2, 16, 16, {2, 3, 3}, true, 1e4, RG_ROPE_EXT_YARN},
    {"interleaved, hd 16, [3, 3, 2], dynamic s 4", 2, 16, 16, {3, 3, 2}, false, 1e4, RG_ROPE_EXT_DYNAMIC},
};

/* A validated model config carrying the RoPE settings of an M-RoPE test: H heads of hd, rotary_dim, rope_base. */
static rg_model_config rope_cfg(int H, int hd, int rotary_dim, double base)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = H * hd;
    cfg.n_heads = H;
    cfg.rotary_dim = rotary_dim;
    cfg.rope_base = base;
    assert_int_equal(rg_model_config_validate(&cfg), RG_OK);
    return cfg;
}

/* The largest id + 1 of n ids (the seq_len the tables take). */
static int64_t seq_len_of(const int32_t *p, int64_t n)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) m = p[i] + 1 > m ? p[i] + 1 : m;
    return m;
}

/* x rotated by M-RoPE (mrope, ids pos3 [3, B*T]) or 1-D RoPE (ids pos3[0 .. B*T)), and the gradient of
 * sum(out * w) with respect to x. */
static void run_rope(const mrope_case *mc, bool mrope, const int32_t *pos3, int B, int T, const rg_real *xv,
                     const rg_real *w, rg_real *out, rg_real *dx)
{
    rg_ctx *c = rg_ctx_new();
    rg_model_config cfg = rope_cfg(mc->H, mc->hd, mc->rotary_dim, mc->base);
    if (mc->ext != RG_ROPE_EXT_NONE) {
        cfg.rope_ext = mc->ext;
        cfg.rope_scale = 4;
        cfg.rope_orig_len = 32;
        assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    }
    int D = mc->H * mc->hd, n = B * T;
    rg_tensor *x = rg_param_new("x", 3, (int[]){B, T, D});
    memcpy(x->data, xv, (size_t)B * T * D * sizeof(rg_real));
    rg_rope_table tab = mrope ? rg_mrope_table_new(c, &cfg, mc->section, pos3, n, seq_len_of(pos3, 3 * (int64_t)n))
                              : rg_rope_table_new(c, &cfg, pos3, n, seq_len_of(pos3, n));
    rg_tensor *y = mrope ? rg_pos_mrope(c, x, mc->H, mc->half, &tab) : rg_pos_rope(c, x, mc->H, mc->half, &tab);
    memcpy(out, y->data, (size_t)y->numel * sizeof(rg_real));
    rg_backward(c, tc_weighted_sum(c, y, w), NULL);
    memcpy(dx, x->grad, (size_t)x->numel * sizeof(rg_real));
    rg_param_free(x);
    rg_ctx_free(c);
}

static void test_mrope_text_is_rope(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 15, 2);
    int B = 2, T = 5;
    int32_t pos[2 * 5] = {0, 1, 2, 3, 4, 150, 151, -3, 1000, 7000};
    int32_t pos3[3 * 2 * 5];
    rg_mrope_text_positions(pos, B * T, pos3);
    for (size_t k = 0; k < sizeof TEXT_CASES / sizeof *TEXT_CASES; k++) {
        const mrope_case *mc = &TEXT_CASES[k];
        int64_t n = (int64_t)B * T * mc->H * mc->hd;
        rg_real *x = tc_random_weights(n, &rng), *w = tc_random_weights(n, &rng);
        rg_real *buf = malloc(4 * (size_t)n * sizeof(rg_real));
        run_rope(mc, true, pos3, B, T, x, w, buf, buf + n);
        run_rope(mc, false, pos, B, T, x, w, buf + 2 * n, buf + 3 * n);
        if (memcmp(buf, buf + 2 * n, (size_t)n * sizeof(rg_real)))
            fail_msg("%s: M-RoPE with equal ids differs from 1-D RoPE", mc->name);
        if (memcmp(buf + n, buf + 3 * n, (size_t)n * sizeof(rg_real)))
            fail_msg("%s: the M-RoPE gradient with equal ids differs from 1-D RoPE's", mc->name);
        print_message("%-44s bit-identical to rope (out and dx)\n", mc->name);
        free(x);
        free(w);
        free(buf);
    }
}

static void test_mrope_golden(void **state)
{
    double worst_all = 0;
    for (int k = 0; k < ENC_N_MROPE; k++) {
        char grp[64], path[96];
        snprintf(grp, sizeof grp, "/mrope/%s", enc_mrope_cases[k]);
        int H = (int)tc_h5_attr(ENC_GOLDEN, grp, "n_heads"), hd = (int)tc_h5_attr(ENC_GOLDEN, grp, "head_dim");
        bool half = tc_h5_attr(ENC_GOLDEN, grp, "half") != 0;
        int64_t n, np, ns, no;
        snprintf(path, sizeof path, "%s/x", grp);
        double *xv = tc_h5_read(ENC_GOLDEN, path, &n, NULL, NULL);
        snprintf(path, sizeof path, "%s/pos", grp);
        int32_t *pos = tc_h5_read_int(ENC_GOLDEN, path, &np, NULL, NULL);
        snprintf(path, sizeof path, "%s/section", grp);
        int32_t *sec = tc_h5_read_int(ENC_GOLDEN, path, &ns, NULL, NULL);
        snprintf(path, sizeof path, "%s/out", grp);
        double *want = tc_h5_read(ENC_GOLDEN, path, &no, NULL, NULL);
        int N = (int)(np / 3);
        assert_int_equal(ns, 3);
        assert_int_equal(n, (int64_t)N * H * hd);
        assert_int_equal(no, n);
        rg_ctx *c = rg_ctx_new();
        rg_model_config cfg = rope_cfg(H, hd, hd, tc_h5_attr(ENC_GOLDEN, grp, "base"));
        rg_tensor *x = rg_tensor_new(c, 3, (int[]){1, N, H * hd});
        for (int64_t i = 0; i < n; i++) x->data[i] = (rg_real)xv[i];
        int section[3] = {sec[0], sec[1], sec[2]};
        rg_rope_table tab = rg_mrope_table_new(c, &cfg, section, pos, N, seq_len_of(pos, np));
        rg_tensor *y = rg_pos_mrope(c, x, H, half, &tab);
        double worst = 0;
        for (int64_t i = 0; i < n; i++) worst = tc_max(worst, fabs((double)y->data[i] - want[i]));
        print_message("m-rope golden %-18s [%d, %d, %d] max abs err %.3g\n", enc_mrope_cases[k], section[0],
                      section[1], section[2], worst);
        tc_assert_close(enc_mrope_cases[k], y->data, want, n, 1e-6, 1e-6);
        worst_all = tc_max(worst_all, worst);
        rg_ctx_free(c);
        free(xv);
        free(pos);
        free(sec);
        free(want);
    }
    assert_true(worst_all < 1e-6);
}

/* q.k of M-RoPE-rotated vectors depends only on the per-axis differences of the ids: shifting the query's and the
 * key's ids by the same (dt, dh, dw) (different per axis) keeps every head's dot product. */
static void test_mrope_relative(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 15, 3);
    int H = 2, hd = 16, D = H * hd, section[3] = {2, 3, 3};
    rg_ctx *c = rg_ctx_new();
    rg_model_config cfg = rope_cfg(H, hd, hd, 1e4);
    rg_tensor *qk = rg_tensor_new(c, 3, (int[]){1, 2, D});
    tc_fill_randn(qk, &rng, 1);
    for (int half = 0; half < 2; half++) {
        /* [axis][token 0 = q, 1 = k] at the base ids and shifted by (5, -2, 40) */
        int32_t p0[6] = {3, 1, 7, 2, 4, 9}, p1[6] = {8, 6, 5, 0, 44, 49};
        rg_rope_table t0 = rg_mrope_table_new(c, &cfg, section, p0, 2, 50);
        rg_rope_table t1 = rg_mrope_table_new(c, &cfg, section, p1, 2, 50);
        rg_tensor *a = rg_pos_mrope(c, qk, H, half, &t0);
        rg_tensor *b = rg_pos_mrope(c, qk, H, half, &t1);
        for (int h = 0; h < H; h++) {
            double da = 0, db = 0;
            for (int e = 0; e < hd; e++) {
                da += (double)a->data[h * hd + e] * a->data[D + h * hd + e];
                db += (double)b->data[h * hd + e] * b->data[D + h * hd + e];
            }
            if (fabs(da - db) > 1e-5 * (1 + fabs(da))) fail_msg("half %d head %d: q.k %.9g != %.9g", half, h, da, db);
        }
        /* and it does depend on them: moving only the key's height id changes it */
        int32_t p2[6] = {3, 1, 7, 3, 4, 9};
        rg_rope_table t2 = rg_mrope_table_new(c, &cfg, section, p2, 2, 50);
        rg_tensor *d = rg_pos_mrope(c, qk, H, half, &t2);
        double dd = 0, da = 0;
        for (int e = 0; e < hd; e++) {
            dd += (double)d->data[e] * d->data[D + e];
            da += (double)a->data[e] * a->data[D + e];
        }
        assert_true(fabs(dd - da) > 1e-4);
    }
    rg_ctx_free(c);
}

/* The axis of each rotary pair: Qwen2-VL's contiguous sections and Qwen3-VL's interleaved layout, written out by
 * hand from HF's rules (apply_multimodal_rotary_pos_emb's split by mrope_section; apply_interleaved_mrope's slices
 * [1 : 3 s1 : 3] row and [2 : 3 s2 : 3] column over a frame base), one string of axis digits per pair; and every
 * interleaved table entry is its axis's 1-D RoPE entry bit for bit. */
static void test_mrope_pair_axes(void **state)
{
    static const struct {
        int section[3];
        bool interleaved;
        const char *axes; /* pair i: '0' frame, '1' row, '2' column */
    } cases[] = {
        {{2, 3, 3}, false, "00111222"},
        {{2, 3, 3}, true, "01201201"}, /* the column's third pair (8) is past the 8 pairs: the frame gets 3 */
        {{4, 6, 6}, false, "0000111111222222"},
        {{4, 6, 6}, true, "0120120120120120"},
        {{2, 2, 4}, true, "01201200"}, /* the row stops at 3 s1 = 6: pair 7 falls to the frame */
        {{24, 20, 20}, true, "0120120120120120120120120120120120120120120120120120120120120000"},
        {{16, 24, 24}, false, "0000000000000000111111111111111111111111222222222222222222222222"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int n = (int)strlen(cases[k].axes);
        for (int i = 0; i < n; i++)
            if (rg_mrope_axis_of_pair(cases[k].section, cases[k].interleaved, i) != cases[k].axes[i] - '0')
                fail_msg("case %zu pair %d: axis %d, want %c", k, i,
                         rg_mrope_axis_of_pair(cases[k].section, cases[k].interleaved, i), cases[k].axes[i]);
    }
    rg_ctx *c = rg_ctx_new();
    rg_model_config cfg = rope_cfg(2, 16, 16, 1e4);
    int32_t pos3[3 * 4] = {0, 1, 2, 3, /* row */ 5, 0, 7, 1, /* column */ 2, 9, 4, 11};
    rg_rope_table tab = rg_mrope_table_new_layout(c, &cfg, (int[]){2, 3, 3}, true, pos3, 4, 12);
    for (int a = 0; a < 3; a++) {
        rg_rope_table ax = rg_rope_table_new(c, &cfg, pos3 + 4 * a, 4, 12);
        for (int r = 0; r < 4; r++)
            for (int i = 0; i < 8; i++)
                if (rg_mrope_axis_of_pair((int[]){2, 3, 3}, true, i) == a &&
                    (tab.cos[r * 8 + i] != ax.cos[r * 8 + i] || tab.sin[r * 8 + i] != ax.sin[r * 8 + i]))
                    fail_msg("interleaved table row %d pair %d is not axis %d's", r, i, a);
    }
    rg_ctx_free(c);
}

static void test_mrope_section_check(void **state)
{
    assert_int_equal(rg_mrope_check_section((int[]){16, 24, 24}, 128), RG_OK);
    assert_int_equal(rg_mrope_check_section((int[]){0, 8, 0}, 16), RG_OK);
    assert_int_equal(rg_mrope_check_section((int[]){16, 24, 23}, 128), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "sum to rotary_dim / 2 = 64"));
    assert_int_equal(rg_mrope_check_section((int[]){-1, 5, 4}, 16), RG_ERR_ARG);
    assert_int_equal(rg_mrope_check_section((int[]){1, 1, 1}, 7), RG_ERR_ARG);
    int32_t pos[3] = {4, -1, 9}, out[9];
    rg_mrope_text_positions(pos, 3, out);
    for (int a = 0; a < 3; a++)
        for (int t = 0; t < 3; t++) assert_int_equal(out[a * 3 + t], pos[t]);
}

/* ------------------------------------------------------------------ FIRE */

static void test_fire_golden(void **state)
{
    double worst_b = 0, worst_g = 0;
    for (int k = 0; k < ENC_N_FIRE; k++) {
        enc_fire_case fc;
        enc_fire_load(enc_fire_cases[k], &fc);
        rg_ctx *c = rg_ctx_new();
        rg_tensor *bias = rg_pos_fire_bias(c, &fc.f, fc.q, fc.k, 1, fc.T, fc.S);
        assert_int_equal(bias->ndim, 3);
        assert_int_equal(bias->numel, (int64_t)fc.H * fc.T * fc.S);
        double wb = 0, wg = 0;
        for (int64_t i = 0; i < bias->numel; i++) wb = tc_max(wb, fabs((double)bias->data[i] - fc.bias[i]));
        rg_real *w = malloc((size_t)bias->numel * sizeof(rg_real));
        for (int64_t i = 0; i < bias->numel; i++) w[i] = (rg_real)fc.w[i];
        rg_params_zero_grad(&fc.ps);
        rg_backward(c, tc_weighted_sum(c, bias, w), NULL);
        for (int p = 0; p < fc.ps.n; p++) {
            rg_tensor *t = fc.ps.items[p];
            double mag = 1e-12, diff = 0;
            for (int64_t j = 0; j < t->numel; j++) {
                mag = tc_max(mag, fabs(fc.grad[p][j]));
                diff = tc_max(diff, fabs((double)t->grad[j] - fc.grad[p][j]));
            }
            if (!(diff / mag < 1e-5)) print_message("  %s: %s rel err %.3g\n", enc_fire_cases[k], t->name, diff / mag);
            wg = tc_max(wg, diff / mag);
        }
        print_message("fire golden %-16s T %2d S %2d: bias max abs err %.3g, grads max rel err %.3g\n",
                      enc_fire_cases[k], fc.T, fc.S, wb, wg);
        worst_b = tc_max(worst_b, wb);
        worst_g = tc_max(worst_g, wg);
        free(w);
        rg_ctx_free(c);
        enc_fire_free(&fc);
    }
    assert_true(worst_b <= 1e-6);
    assert_true(worst_g < 1e-5);
}

static void test_fire_init(void **state)
{
    rg_params ps = {0};
    rg_rng rng;
    rg_rng_seed(&rng, 15, 4);
    rg_pos_fire f;
    rg_fire_config cfg = rg_fire_config_default(4);
    assert_int_equal(cfg.mlp_width, 32);
    assert_true(cfg.init_c == 0.1 && cfg.init_L == 512 && cfg.eps == 1e-6);
    assert_int_equal(rg_pos_fire_init(&f, &ps, "blocks.1.attn.fire", &cfg, &rng), RG_OK);
    /* torch's state_dict order: the module's own parameters, then its submodule mlp's */
    static const struct { const char *name; int ndim, d0, d1; double bound; } want[6] = {
        {"blocks.1.attn.fire.c", 1, 1, 0, 0}, {"blocks.1.attn.fire.L_multiplier", 1, 1, 0, 0},
        {"blocks.1.attn.fire.mlp.0.weight", 2, 32, 1, 1.0}, {"blocks.1.attn.fire.mlp.0.bias", 1, 32, 0, 1.0},
        {"blocks.1.attn.fire.mlp.2.weight", 2, 4, 32, 0.17678}, {"blocks.1.attn.fire.mlp.2.bias", 1, 4, 0, 0.17678}};
    assert_int_equal(ps.n, 6);
    for (int i = 0; i < 6; i++) {
        rg_tensor *p = ps.items[i];
        assert_string_equal(p->name, want[i].name);
        assert_int_equal(p->ndim, want[i].ndim);
        assert_int_equal(p->shape[0], want[i].d0);
        if (want[i].ndim == 2) assert_int_equal(p->shape[1], want[i].d1);
        double mx = 0;
        for (int64_t j = 0; j < p->numel; j++) mx = tc_max(mx, fabs((double)p->data[j]));
        if (want[i].bound > 0) assert_true(mx <= want[i].bound && mx > 0.5 * want[i].bound);
    }
    assert_true(f.c->data[0] == (rg_real)0.1 && f.L_multiplier->data[0] == 1);
    /* a second module under the same prefix, and bad configs, are errors */
    rg_pos_fire g;
    assert_int_equal(rg_pos_fire_init(&g, &ps, "blocks.1.attn.fire", &cfg, &rng), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "already registered"));
    rg_fire_config bad = cfg;
    bad.init_L = 0;
    assert_int_equal(rg_pos_fire_init(&g, &ps, "fire", &bad, &rng), RG_ERR_ARG);
    bad = cfg;
    bad.mlp_width = 0;
    assert_int_equal(rg_pos_fire_init(&g, &ps, "fire", &bad, &rng), RG_ERR_ARG);
    assert_int_equal(ps.n, 6); /* the duplicate's first name failed; nothing was added */
    rg_params_free(&ps);
}

/* The formula evaluated directly in double for one (p_i, p_j), all heads. */
static void fire_formula(const rg_pos_fire *f, int64_t pi, int64_t pj, double *out)
{
    double cc = f->c->data[0], L = fabs(f->L_multiplier->data[0] * f->cfg.init_L);
    double num = log(fabs(cc * (double)(pi - pj)) + 1);
    double den = log(fabs(cc * fmax((double)pi, L)) + 1) + f->cfg.eps;
    double x = num / den;
    int W = f->cfg.mlp_width, H = f->cfg.n_heads;
    for (int h = 0; h < H; h++) out[h] = f->b2->data[h];
    for (int u = 0; u < W; u++) {
        double a = f->w1->data[u] * x + f->b1->data[u];
        if (a > 0)
            for (int h = 0; h < H; h++) out[h] += f->w2->data[h * W + u] * a;
    }
}

/* Every entry of bias [(B,) H, T, S] equals the formula at its positions (row b's). */
static double fire_vs_formula(const rg_pos_fire *f, const rg_tensor *bias, const int32_t *q, const int32_t *k,
                              int Bq, int T, int S)
{
    int H = f->cfg.n_heads;
    double worst = 0, want[16];
    for (int b = 0; b < Bq; b++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < S; j++) {
                fire_formula(f, q[b * T + i], k[b * S + j], want);
                for (int h = 0; h < H; h++) {
                    double got = bias->data[(((int64_t)b * H + h) * T + i) * S + j];
                    worst = tc_max(worst, fabs(got - want[h]) / (1 + fabs(want[h])));
                }
            }
    return worst;
}

static void fire_module(rg_params *ps, rg_pos_fire *f, int H, double init_L, double L_mult, double c, uint64_t seed)
{
    rg_rng rng;
    rg_rng_seed(&rng, seed, 5);
    rg_fire_config cfg = rg_fire_config_default(H);
    cfg.init_L = init_L;
    cfg.init_c = c;
    memset(ps, 0, sizeof *ps);
    assert_int_equal(rg_pos_fire_init(f, ps, "fire", &cfg, &rng), RG_OK);
    f->L_multiplier->data[0] = (rg_real)L_mult;
}

/* Below L the bias depends on i - j only (bit for bit: one MLP input per distance); above it on i through the
 * normalizer, exactly as the formula says. */
static void test_fire_relative(void **state)
{
    rg_params ps;
    rg_pos_fire f;
    fire_module(&ps, &f, 3, 16, 1, 0.4, 1);  /* L = 16 */
    int T = 24;
    int32_t pos[24];
    for (int t = 0; t < T; t++) pos[t] = t;
    rg_ctx *c = rg_ctx_new();
    rg_tensor *b = rg_pos_fire_bias(c, &f, pos, pos, 1, T, T);
    for (int h = 0; h < 3; h++)
        for (int i = 1; i < 16; i++)
            for (int j = 1; j <= i; j++) {
                rg_real x = b->data[((int64_t)h * T + i) * T + j], y = b->data[((int64_t)h * T + i - 1) * T + j - 1];
                if (x != y) fail_msg("head %d: b(%d, %d) = %.9g != b(%d, %d) = %.9g", h, i, j, x, i - 1, j - 1, y);
            }
    /* above L the same distance gives different values (the normalizer grows with i) */
    int differ = 0;
    for (int i = 17; i < T; i++) differ += b->data[(int64_t)i * T + i - 3] != b->data[(int64_t)(i - 1) * T + i - 4];
    assert_int_equal(differ, T - 17);
    double worst = fire_vs_formula(&f, b, pos, pos, 1, T, T);
    print_message("fire vs formula (dense, L = 16, T = 24): max rel err %.3g\n", worst);
    assert_true(worst < 1e-6);
    rg_ctx_free(c);
    rg_params_free(&ps);
}

/* Per-row positions give [B, H, T, S] with each row its own bias; widely spread keys take the path without the
 * distance table; both agree with the formula. */
static void test_fire_rows_and_sparse(void **state)
{
    rg_params ps;
    rg_pos_fire f;
    fire_module(&ps, &f, 2, 64, -1, 0.1, 2); /* L = |-64| */
    int B = 2, T = 3, S = 4;
    int32_t q[6] = {10, 63, 64, 900, 5000, 5001}, k[8] = {0, 10, 63, 64, 0, 1000, 3000, 5001};
    rg_ctx *c = rg_ctx_new();
    rg_tensor *b = rg_pos_fire_bias(c, &f, q, k, B, T, S);
    assert_int_equal(b->ndim, 4);
    assert_int_equal(b->shape[0], B);
    assert_int_equal(b->shape[1], 2);
    double worst = fire_vs_formula(&f, b, q, k, B, T, S);
    /* one row alone gives the [H, T, S] slice of that row */
    rg_tensor *b1 = rg_pos_fire_bias(c, &f, q + T, k + S, 1, T, S);
    assert_int_equal(b1->ndim, 3);
    for (int64_t e = 0; e < b1->numel; e++) assert_true(b1->data[e] == b->data[b1->numel + e]);
    /* shared rows give [H, T, S] */
    int32_t q2[6] = {1, 2, 3, 1, 2, 3}, k2[8] = {0, 1, 2, 3, 0, 1, 2, 3};
    assert_int_equal(rg_pos_fire_bias(c, &f, q2, k2, B, T, S)->ndim, 3);
    print_message("fire vs formula ([B, H, T, S], sparse keys up to 5001): max rel err %.3g\n", worst);
    assert_true(worst < 1e-6);
    rg_ctx_free(c);
    rg_params_free(&ps);
}

static void test_fire_far(void **state)
{
    rg_params ps;
    rg_pos_fire f;
    fire_module(&ps, &f, 4, 512, 1, 0.1, 3);
    int32_t far[2][4] = {{100000, 100001, 100002, 100003}, {1 << 20, (1 << 20) + 7, (1 << 20) + 100, 3 << 20}};
    rg_ctx *c = rg_ctx_new();
    for (int r = 0; r < 2; r++) {
        int32_t keys[4] = {0, far[r][0] - 5, far[r][1], far[r][3]};
        rg_tensor *b = rg_pos_fire_bias(c, &f, far[r], keys, 1, 4, 4);
        for (int64_t e = 0; e < b->numel; e++)
            if (!isfinite(b->data[e])) fail_msg("bias entry %lld at positions ~%d is %g", (long long)e, far[r][0],
                                                (double)b->data[e]);
        double worst = fire_vs_formula(&f, b, far[r], keys, 1, 4, 4);
        print_message("fire at positions ~%d: finite, max rel err vs formula %.3g\n", far[r][0], worst);
        assert_true(worst < 1e-5);
    }
    rg_ctx_free(c);
    rg_params_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mrope_text_is_rope), cmocka_unit_test(test_mrope_golden),
        cmocka_unit_test(test_mrope_relative),     cmocka_unit_test(test_mrope_section_check),
        cmocka_unit_test(test_mrope_pair_axes),
        cmocka_unit_test(test_fire_golden),        cmocka_unit_test(test_fire_init),
        cmocka_unit_test(test_fire_relative),      cmocka_unit_test(test_fire_rows_and_sparse),
        cmocka_unit_test(test_fire_far),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
