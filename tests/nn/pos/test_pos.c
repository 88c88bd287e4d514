/* test_pos.c (float32): position encodings against golden values computed independently by the PyTorch fixture
 * script (tests/fixtures/pos_golden.h5: ALiBi slopes, T5 buckets, sinusoids, RoPE of a small vector in both
 * pairings, YaRN / Llama 3 frequencies and attention factor, the NTK base), and their properties: RoPE keeps norms
 * and makes q.k depend only on i - j (both pairings, partial rotary, far positions); half-split equals interleaved
 * after the fixed channel permutation; axial RoPE is relative in 2-D; RoPE tables at far positions and with PI;
 * the position summary; learned positions past the table are an error that records nothing; randomized positions
 * are sorted subsets; with NoPE bidirectional attention is permutation-equivariant and every encoding breaks that;
 * causal outputs at earlier positions ignore later tokens for every encoding; the rope_scaling settings survive a
 * checkpoint (FIRE's: tests/nn/pos/test_pos_fire.c). */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GOLDEN "tests/fixtures/pos_golden.h5"
#define SCALING "tests/fixtures/rope_scaling_golden.h5" /* tools/golden_rope.py: HF rope_scaling formulas */

/* A config whose RoPE settings are: rotary_dim rd, base 10000, extension ext with factor s, original length 32. */
static rg_model_config rope_cfg(int rd, rg_rope_ext ext, double s)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = 64;
    cfg.n_heads = 1;
    cfg.rotary_dim = rd;
    cfg.rope_ext = ext;
    cfg.rope_scale = s;
    cfg.rope_orig_len = 32;
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    return cfg;
}

/* The RoPE table of rotary_dim rd (no extension) at positions pos [n]. */
static rg_rope_table rope_table(rg_ctx *c, int rd, const int32_t *pos, int n)
{
    rg_model_config cfg = rope_cfg(rd, RG_ROPE_EXT_NONE, 1);
    return rg_rope_table_new(c, &cfg, pos, n, 0);
}

/* ------------------------------------------------------------------ golden values */

static void test_alibi_golden(void **state)
{
    int ns[4] = {4, 6, 8, 12};
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "/alibi_slopes_%d", ns[k]);
        int64_t n;
        double *want = tc_h5_read(GOLDEN, name, &n, NULL, NULL);
        assert_int_equal(n, ns[k]);
        double got[12];
        rg_alibi_slopes(ns[k], got);
        for (int h = 0; h < ns[k]; h++)
            if (fabs(got[h] - want[h]) > 1e-15 * want[h]) fail_msg("%s[%d]: %.17g != %.17g", name, h, got[h], want[h]);
        free(want);
    }
}

static void test_t5_golden(void **state)
{
    for (int bidir = 0; bidir < 2; bidir++) {
        int64_t n;
        int32_t *want = tc_h5_read_int(GOLDEN, bidir ? "/t5_buckets_bidir" : "/t5_buckets_causal", &n, NULL, NULL);
        assert_int_equal(n, 401);
        for (int k = 0; k < 401; k++) {
            int got = rg_t5_bucket(k - 200, bidir, 32, 128);
            if (got != want[k]) fail_msg("t5 %s bucket of %d: %d != %d", bidir ? "bidir" : "causal", k - 200, got,
                                         want[k]);
        }
        free(want);
    }
}

static void test_sinusoidal_golden(void **state)
{
    int64_t n;
    int shape[4], ndim;
    double *want = tc_h5_read(GOLDEN, "/sinusoidal", &n, shape, &ndim);
    assert_int_equal(shape[1], 16);
    int32_t pos[4] = {0, 1, 7, 100};
    double pe[16];
    for (int r = 0; r < 4; r++) {
        rg_sinusoidal_pe(16, pos[r], pe);
        for (int j = 0; j < 16; j++)
            if (fabs(pe[j] - want[r * 16 + j]) > 1e-13) fail_msg("PE(%d)[%d]: %.17g != %.17g", pos[r], j, pe[j],
                                                                   want[r * 16 + j]);
    }
    /* the op: tok = 0 gives PE, rounded to float32 */
    rg_ctx *c = rg_ctx_new();
    rg_tensor *tok = rg_tensor_zeros(c, 3, (int[]){1, 4, 16});
    rg_tensor *h = rg_pos_sinusoidal(c, tok, pos, true);
    tc_assert_close("sinusoidal op", h->data, want, 64, 1e-7, 1e-6);
    rg_ctx_free(c);
    free(want);
}

static void test_rope_golden(void **state)
{
    int64_t n;
    double *x = tc_h5_read(GOLDEN, "/rope_x", &n, NULL, NULL);
    assert_int_equal(n, 8);
    rg_ctx *c = rg_ctx_new();
    rg_tensor *t = rg_tensor_new(c, 3, (int[]){1, 1, 8});
    for (int i = 0; i < 8; i++) t->data[i] = (rg_real)x[i];
    int32_t p = 5;
    rg_rope_table tab = rope_table(c, 8, &p, 1);
    for (int half = 0; half < 2; half++) {
        double *want = tc_h5_read(GOLDEN, half ? "/rope_half" : "/rope_interleaved", &n, NULL, NULL);
        rg_tensor *o = rg_pos_rope(c, t, 1, half, &tab);
        tc_assert_close(half ? "rope half" : "rope interleaved", o->data, want, 8, 1e-6, 1e-6);
        free(want);
    }
    rg_ctx_free(c);
    free(x);
}

static void test_rope_ext_golden(void **state)
{
    int d = (int)tc_h5_attr(GOLDEN, "/", "head_dim");
    rg_model_config cfg = rope_cfg(d, RG_ROPE_EXT_NONE, 1);
    cfg.rope_orig_len = (int)tc_h5_attr(GOLDEN, "/", "rope_orig_len");
    cfg.rope_base = tc_h5_attr(GOLDEN, "/", "rope_base");
    cfg.rope_scale = tc_h5_attr(GOLDEN, "/", "rope_scale");
    double inv[64], mult, af;
    int64_t n;
    /* YaRN */
    cfg.rope_ext = RG_ROPE_EXT_YARN;
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    double *want = tc_h5_read(GOLDEN, "/yarn_inv_freq", &n, NULL, NULL);
    assert_int_equal(n, d / 2);
    for (int i = 0; i < d / 2; i++)
        if (fabs(inv[i] - want[i]) > 1e-14 * want[i]) fail_msg("yarn inv_freq[%d]: %.17g != %.17g", i, inv[i], want[i]);
    free(want);
    double *waf = tc_h5_read(GOLDEN, "/yarn_attention_factor", &n, NULL, NULL);
    assert_true(fabs(af - waf[0]) < 1e-15 && mult == 1.0);
    free(waf);
    /* Llama 3 */
    cfg.rope_ext = RG_ROPE_EXT_LLAMA3;
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    want = tc_h5_read(GOLDEN, "/llama3_inv_freq", &n, NULL, NULL);
    for (int i = 0; i < d / 2; i++)
        if (fabs(inv[i] - want[i]) > 1e-14 * want[i]) fail_msg("llama3 inv_freq[%d]: %.17g != %.17g", i, inv[i],
                                                               want[i]);
    assert_true(af == 1.0 && mult == 1.0);
    free(want);
    /* NTK: the frequencies of the golden base */
    cfg.rope_ext = RG_ROPE_EXT_NTK;
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    double *wb = tc_h5_read(GOLDEN, "/ntk_base", &n, NULL, NULL);
    for (int i = 0; i < d / 2; i++) {
        double f = 1.0 / pow(wb[0], (double)(2 * i) / d);
        if (fabs(inv[i] - f) > 1e-14 * f) fail_msg("ntk inv_freq[%d]: %.17g != %.17g", i, inv[i], f);
    }
    free(wb);
    /* PI: positions divided by s */
    cfg.rope_ext = RG_ROPE_EXT_PI;
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    assert_true(mult == 1.0 / cfg.rope_scale && af == 1.0);
}

/* ------------------------------------------------------------------ HF rope_scaling (tools/golden_rope.py) */

static void assert_freqs(const char *what, const double *got, const char *dataset, int nf)
{
    int64_t n;
    double *want = tc_h5_read(SCALING, dataset, &n, NULL, NULL);
    assert_int_equal(n, nf);
    for (int i = 0; i < nf; i++)
        if (fabs(got[i] - want[i]) > 1e-14 * want[i]) fail_msg("%s[%d]: %.17g != %.17g", what, i, got[i], want[i]);
    free(want);
}

/* A config of one head of head_dim d whose RoPE settings come from the attributes of a golden dataset. */
static rg_model_config golden_cfg(const char *ds, rg_rope_ext ext)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = (int)tc_h5_attr(SCALING, ds, "d");
    cfg.n_heads = 1;
    cfg.rope_ext = ext;
    cfg.rope_base = tc_h5_attr(SCALING, ds, "base");
    cfg.rope_scale = tc_h5_attr(SCALING, ds, "factor");
    cfg.rope_orig_len = (int)tc_h5_attr(SCALING, ds, "original");
    return cfg;
}

/* Dynamic NTK (Hugging Face's case: d 8, base 1e4, factor 2, original 16): the base at each length, never below the
 * original base, finite; length 32 gives 43267.49; the frequencies at 32; a rotation at position 40. */
static void test_rope_dynamic_golden(void **state)
{
    rg_model_config cfg = golden_cfg("/dynamic_base", RG_ROPE_EXT_DYNAMIC);
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    int64_t n, nl;
    double *want = tc_h5_read(SCALING, "/dynamic_base", &n, NULL, NULL);
    int32_t *lens = tc_h5_read_int(SCALING, "/dynamic_seq_len", &nl, NULL, NULL);
    assert_int_equal(n, nl);
    for (int k = 0; k < n; k++) {
        double b = rg_rope_dynamic_base(&cfg, lens[k]);
        if (fabs(b - want[k]) > 1e-12 * want[k]) fail_msg("dynamic base at %d: %.17g != %.17g", lens[k], b, want[k]);
        if (lens[k] <= 16) assert_true(b == 1e4);
    }
    assert_true(fabs(rg_rope_dynamic_base(&cfg, 32) - 43267.49) < 0.005);
    /* below and at the original length, negative and huge lengths: the original base or a finite larger one */
    int64_t odd[4] = {-5, 0, (int64_t)1 << 40, INT32_MAX};
    for (int k = 0; k < 4; k++) {
        double b = rg_rope_dynamic_base(&cfg, odd[k]);
        assert_true(isfinite(b) && b >= 1e4);
        if (odd[k] <= 16) assert_true(b == 1e4);
    }
    double inv[8], mult, af;
    rg_rope_freqs(&cfg, 32, inv, &mult, &af);
    assert_true(mult == 1 && af == 1);
    assert_freqs("dynamic inv_freq at 32", inv, "/dynamic_inv_freq_32", 4);
    rg_rope_freqs(&cfg, 4, inv, &mult, &af);
    for (int i = 0; i < 4; i++) assert_true(inv[i] == 1.0 / pow(1e4, (double)(2 * i) / 8));
    /* the op at position 40 with the table of length 41 */
    rg_ctx *c = rg_ctx_new();
    double *x = tc_h5_read(SCALING, "/dynamic_x", &n, NULL, NULL), *rot = tc_h5_read(SCALING, "/dynamic_rotated", &n,
                                                                                       NULL, NULL);
    rg_tensor *t = rg_tensor_new(c, 3, (int[]){1, 1, 8});
    for (int i = 0; i < 8; i++) t->data[i] = (rg_real)x[i];
    int32_t p = 40;
    rg_rope_table tab = rg_rope_table_new(c, &cfg, &p, 1, 41);
    tc_assert_close("dynamic rotation at 40", rg_pos_rope(c, t, 1, false, &tab)->data, rot, 8, 1e-6, 1e-6);
    rg_ctx_free(c);
    free(x);
    free(rot);
    free(want);
    free(lens);
}

/* YaRN with explicit betas and attention_factor (used verbatim), Llama 3 with non-default factors, and
 * partial_rotary_factor. */
static void test_rope_scaling_golden(void **state)
{
    double inv[16], mult, af;
    rg_model_config cfg = golden_cfg("/yarn_inv_freq", RG_ROPE_EXT_YARN);
    cfg.yarn_beta_fast = tc_h5_attr(SCALING, "/yarn_inv_freq", "beta_fast");
    cfg.yarn_beta_slow = tc_h5_attr(SCALING, "/yarn_inv_freq", "beta_slow");
    cfg.rope_attention_factor = tc_h5_attr(SCALING, "/yarn_inv_freq", "attention_factor");
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    assert_freqs("yarn inv_freq", inv, "/yarn_inv_freq", 8);
    assert_true(af == 1.25 && mult == 1);
    cfg.rope_attention_factor = 0; /* derived: 0.1 ln 4 + 1 */
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    assert_true(fabs(af - (0.1 * log(4.0) + 1)) < 1e-15);

    cfg = golden_cfg("/llama3_inv_freq", RG_ROPE_EXT_LLAMA3);
    cfg.llama3_low_freq_factor = tc_h5_attr(SCALING, "/llama3_inv_freq", "low_freq_factor");
    cfg.llama3_high_freq_factor = tc_h5_attr(SCALING, "/llama3_inv_freq", "high_freq_factor");
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    assert_freqs("llama3 inv_freq", inv, "/llama3_inv_freq", 8);

    cfg = rg_model_config_default();
    cfg.d_model = (int)tc_h5_attr(SCALING, "/partial_inv_freq", "head_dim");
    cfg.n_heads = 1;
    cfg.partial_rotary_factor = tc_h5_attr(SCALING, "/partial_inv_freq", "partial_rotary_factor");
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    assert_int_equal(rg_rope_dim(&cfg), 8);
    rg_rope_freqs(&cfg, 0, inv, &mult, &af);
    assert_freqs("partial_rotary_factor inv_freq", inv, "/partial_inv_freq", 4);
    cfg.rotary_dim = 8; /* consistent: fine; inconsistent or out of range: refused */
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    cfg.rotary_dim = 4;
    assert_int_equal(rg_rope_validate(&cfg), RG_ERR_ARG);
    cfg.rotary_dim = 0;
    cfg.partial_rotary_factor = 1.5;
    assert_int_equal(rg_rope_validate(&cfg), RG_ERR_ARG);
    cfg.partial_rotary_factor = 0.05; /* (int)(16 * 0.05) = 0 rotary channels */
    assert_int_equal(rg_rope_validate(&cfg), RG_ERR_ARG);
    cfg.partial_rotary_factor = 0;
    cfg.rope_attention_factor = -1;
    assert_int_equal(rg_rope_validate(&cfg), RG_ERR_ARG);
    /* HF rope_type names parse */
    rg_rope_ext e;
    assert_int_equal(rg_rope_ext_parse("default", &e), RG_OK);
    assert_int_equal(e, RG_ROPE_EXT_NONE);
    assert_int_equal(rg_rope_ext_parse("linear", &e), RG_OK);
    assert_int_equal(e, RG_ROPE_EXT_PI);
    assert_int_equal(rg_rope_ext_parse("dynamic", &e), RG_OK);
    assert_int_equal(e, RG_ROPE_EXT_DYNAMIC);
    assert_string_equal(rg_rope_ext_name(RG_ROPE_EXT_DYNAMIC), "dynamic");
}

/* ------------------------------------------------------------------ RoPE properties */

static double dot(const rg_real *a, const rg_real *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* Rotated copies of one random vector (n_heads 2, head_dim 16) at the given positions. */
static rg_tensor *rotate_at(rg_ctx *c, int rd, bool half, const rg_real *x, const int32_t *pos, int n)
{
    rg_tensor *t = rg_tensor_new(c, 3, (int[]){1, n, 32});
    for (int k = 0; k < n; k++) memcpy(t->data + k * 32, x, 32 * sizeof(rg_real));
    rg_rope_table tab = rope_table(c, rd, pos, n);
    return rg_pos_rope(c, t, 2, half, &tab);
}

static void test_rope_norm_and_relative(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 11, 0);
    rg_ctx *c = rg_ctx_new();
    rg_real q[32], k[32];
    for (int i = 0; i < 32; i++) { q[i] = (rg_real)rg_rng_normal(&rng); k[i] = (rg_real)rg_rng_normal(&rng); }
    int rds[2] = {16, 6};
    for (int half = 0; half < 2; half++)
        for (int r = 0; r < 2; r++) {
            /* norms: every position, including far ones */
            int32_t pos[6] = {0, 1, 17, 159, 4000, -25};
            rg_tensor *rq = rotate_at(c, rds[r], half, q, pos, 6);
            double nq = dot(q, q, 32);
            for (int p = 0; p < 6; p++)
                if (fabs(dot(rq->data + p * 32, rq->data + p * 32, 32) - nq) > 1e-5 * nq)
                    fail_msg("rope %s rd %d: norm changes at position %d", half ? "half" : "interleaved", rds[r],
                             pos[p]);
            /* q.k at (i, j) depends only on i - j: pairs shifted by 0, 100, 1000, 3000 */
            int32_t qp[4] = {7, 107, 1007, 3007}, kp[4] = {3, 103, 1003, 3003};
            rg_tensor *a = rotate_at(c, rds[r], half, q, qp, 4), *b = rotate_at(c, rds[r], half, k, kp, 4);
            for (int h = 0; h < 2; h++) {
                double ref = dot(a->data + h * 16, b->data + h * 16, 16);
                for (int s = 1; s < 4; s++) {
                    double v = dot(a->data + s * 32 + h * 16, b->data + s * 32 + h * 16, 16);
                    if (fabs(v - ref) > 2e-4 * (1 + fabs(ref)))
                        fail_msg("rope %s rd %d head %d: q.k at (%d, %d) = %.7g, at (7, 3) = %.7g",
                                 half ? "half" : "interleaved", rds[r], h, qp[s], kp[s], v, ref);
                }
            }
        }
    rg_ctx_free(c);
}

static void test_rope_half_is_permuted_interleaved(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 12, 0);
    rg_ctx *c = rg_ctx_new();
    int hd = 16, rd = 12, H = 2, n = 5;
    int32_t pos[5] = {0, 3, 150, 999, -7};
    rg_rope_table tab = rope_table(c, rd, pos, n);
    rg_tensor *xi = rg_tensor_new(c, 3, (int[]){1, n, H * hd}), *xh = rg_tensor_new(c, 3, (int[]){1, n, H * hd});
    tc_fill_randn(xi, &rng, 1);
    /* perm: interleaved channel 2i -> half channel i, 2i+1 -> i + rd/2 (within the rotary block of each head) */
    int perm[16];
    for (int i = 0; i < rd / 2; i++) { perm[2 * i] = i; perm[2 * i + 1] = i + rd / 2; }
    for (int e = rd; e < hd; e++) perm[e] = e;
    for (int t = 0; t < n * H; t++)
        for (int e = 0; e < hd; e++) xh->data[t * hd + perm[e]] = xi->data[t * hd + e];
    rg_tensor *oi = rg_pos_rope(c, xi, H, false, &tab), *oh = rg_pos_rope(c, xh, H, true, &tab);
    for (int t = 0; t < n * H; t++)
        for (int e = 0; e < hd; e++)
            if (oh->data[t * hd + perm[e]] != oi->data[t * hd + e])
                fail_msg("half-split != permuted interleaved at token/head %d channel %d", t, e);
    rg_ctx_free(c);
}

/* Far positions are exact (angles in double from the integer position); PI with s = 4 at 4p equals p; a table of
 * one row per token of a row serves every row of the batch; bad settings are refused by the one validation. */
static void test_rope_far_pi_and_shared_rows(void **state)
{
    rg_ctx *c = rg_ctx_new();
    int32_t p = 70000;
    rg_tensor *x = rg_tensor_new(c, 3, (int[]){1, 1, 8});
    for (int i = 0; i < 8; i++) x->data[i] = (rg_real)(i + 1);
    rg_rope_table tab = rope_table(c, 8, &p, 1);
    rg_tensor *o = rg_pos_rope(c, x, 1, false, &tab);
    double want[8];
    for (int i = 0; i < 4; i++) {
        double a = 70000.0 / pow(10000.0, (double)(2 * i) / 8), xa = 2 * i + 1, xb = 2 * i + 2;
        want[2 * i] = xa * cos(a) - xb * sin(a);
        want[2 * i + 1] = xa * sin(a) + xb * cos(a);
    }
    tc_assert_close("rope at 70000", o->data, want, 8, 1e-5, 1e-5);
    rg_model_config cfg = rope_cfg(8, RG_ROPE_EXT_PI, 4);
    p = 280000;
    tab = rg_rope_table_new(c, &cfg, &p, 1, p + 1);
    o = rg_pos_rope(c, x, 1, false, &tab);
    tc_assert_close("rope pi s=4 at 280000", o->data, want, 8, 1e-5, 1e-5);
    /* shared rows: 3 rows of positions {70000, 70000}; every token rotates as position 70000 */
    int32_t two[2] = {70000, 70000};
    tab = rope_table(c, 8, two, 2);
    rg_tensor *x6 = rg_tensor_new(c, 3, (int[]){3, 2, 8});
    for (int t = 0; t < 6; t++) memcpy(x6->data + t * 8, x->data, 8 * sizeof(rg_real));
    o = rg_pos_rope(c, x6, 1, false, &tab);
    for (int t = 0; t < 6; t++) tc_assert_close("rope shared rows", o->data + t * 8, want, 8, 1e-5, 1e-5);
    cfg.rotary_dim = 7;
    assert_int_equal(rg_rope_validate(&cfg), RG_ERR_ARG);
    cfg = rope_cfg(8, RG_ROPE_EXT_NTK, 2);
    cfg.rotary_dim = 2;
    assert_int_equal(rg_rope_validate(&cfg), RG_ERR_ARG);
    rg_ctx_free(c);
}

/* The summary: ranges of queries and keys, rows shared only when every row of both equals the first. */
static void test_pos_summary(void **state)
{
    int32_t q[6] = {3, 4, 5, 3, 4, 5}, k[8] = {0, 1, 2, 9, 0, 1, 2, 9}, q2[6] = {3, 4, 5, 3, 4, 6};
    rg_pos_summary s;
    rg_pos_summarize(&s, q, k, 2, 3, 4);
    assert_true(s.rows_shared && s.q_min == 3 && s.q_max == 5 && s.k_min == 0 && s.k_max == 9);
    rg_pos_summarize(&s, q2, k, 2, 3, 4);
    assert_true(!s.rows_shared && s.q_max == 6);
    rg_pos_summarize(&s, q, q, 2, 3, 3);
    assert_true(s.rows_shared && s.k_min == 3 && s.k_max == 5);
    k[7] = -4;
    rg_pos_summarize(&s, q, k, 2, 3, 4);
    assert_true(!s.rows_shared && s.k_min == -4);
}

static void test_axial_relative_2d(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 13, 0);
    rg_ctx *c = rg_ctx_new();
    int H = 2, hd = 16, D = H * hd;
    rg_real q[32], k[32];
    for (int i = 0; i < D; i++) { q[i] = (rg_real)rg_rng_normal(&rng); k[i] = (rg_real)rg_rng_normal(&rng); }
    /* (col, row) of q and k; each case shifts both patches by the same 2-D offset */
    int32_t qc[4] = {5, 25, 5, 305}, qr[4] = {2, 2, 42, 102}, kc[4] = {1, 21, 1, 301}, kr[4] = {7, 7, 47, 107};
    rg_tensor *tq = rg_tensor_new(c, 3, (int[]){1, 4, D}), *tk = rg_tensor_new(c, 3, (int[]){1, 4, D});
    for (int s = 0; s < 4; s++) { memcpy(tq->data + s * D, q, sizeof q); memcpy(tk->data + s * D, k, sizeof k); }
    rg_tensor *a = rg_pos_axial_rope(c, tq, H, 100, qc, qr), *b = rg_pos_axial_rope(c, tk, H, 100, kc, kr);
    for (int h = 0; h < H; h++) {
        double ref = dot(a->data + h * hd, b->data + h * hd, hd);
        for (int s = 1; s < 4; s++) {
            double v = dot(a->data + s * D + h * hd, b->data + s * D + h * hd, hd);
            if (fabs(v - ref) > 2e-4 * (1 + fabs(ref))) fail_msg("axial head %d case %d: %.7g != %.7g", h, s, v, ref);
        }
        if (fabs(dot(a->data + h * hd, a->data + h * hd, hd) - dot(q + h * hd, q + h * hd, hd)) > 1e-4)
            fail_msg("axial rope changes the norm");
    }
    /* and it does depend on each axis: moving only the row of k changes q.k */
    int32_t kr2[4] = {8, 8, 8, 8};
    rg_tensor *b2 = rg_pos_axial_rope(c, tk, H, 100, kc, kr2);
    assert_true(fabs(dot(a->data, b2->data, hd) - dot(a->data, b->data, hd)) > 1e-3);
    rg_ctx_free(c);
}

/* ------------------------------------------------------------------ learned, randomized positions */

static void test_learned_past_table(void **state)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *table = rg_param_new("pos_emb.weight", 2, (int[]){10, 4});
    rg_tensor *tok = rg_tensor_zeros(c, 3, (int[]){1, 3, 4});
    tok->requires_grad = true;
    int32_t ok[3] = {0, 5, 9}, past[3] = {0, 5, 10}, neg[3] = {-1, 0, 1};
    rg_tensor *h;
    assert_int_equal(rg_pos_learned(c, tok, table, ok, &h), RG_OK);
    int tape = c->tape_len;
    assert_int_equal(rg_pos_learned(c, tok, table, past, &h), RG_ERR_ARG);
    assert_null(h);
    assert_non_null(strstr(rg_last_error(), "10"));
    assert_int_equal(rg_pos_learned(c, tok, table, neg, &h), RG_ERR_ARG);
    assert_int_equal(c->tape_len, tape); /* nothing recorded */
    rg_param_free(table);
    rg_ctx_free(c);
}

static void test_random_positions(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 14, 0);
    int B = 200, T = 8, L = 64;
    int32_t *p = malloc((size_t)B * T * sizeof *p);
    rg_random_positions(&rng, B, T, L, p);
    long hist[64] = {0};
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            int32_t v = p[b * T + t];
            assert_true(v >= 0 && v < L);
            if (t) assert_true(v > p[b * T + t - 1]); /* sorted, distinct */
            hist[v]++;
        }
    /* each value is chosen with probability T/L = 1/8: 25 expected of 200 rows; a loose uniformity check */
    for (int v = 0; v < L; v++) assert_true(hist[v] > 5 && hist[v] < 60);
    /* T == L: every position */
    rg_random_positions(&rng, 1, 8, 8, p);
    for (int t = 0; t < 8; t++) assert_int_equal(p[t], t);
    free(p);
}

/* ------------------------------------------------------------------ model-level properties */

static rg_model *small_model(rg_pos_kind pos, bool causal)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 11;
    cfg.d_model = 16;
    cfg.n_heads = 2;
    cfg.n_layers = 2;
    cfg.d_ff = 32;
    cfg.max_len = 24;
    cfg.causal = causal;
    cfg.pos = pos;
    rg_model *m;
    if (rg_model_new(&cfg, 3, &m)) fail_msg("rg_model_new: %s", rg_last_error());
    /* larger weights than the init, so every encoding's signal is far above rounding */
    rg_rng rng;
    rg_rng_seed(&rng, 21, (uint64_t)pos);
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        if (strstr(p->name, "ln")) continue;
        tc_fill_randn(p, &rng, 0.3);
    }
    return m;
}

static const rg_pos_kind ALL_POS[] = {RG_POS_NONE, RG_POS_SINUSOIDAL, RG_POS_LEARNED, RG_POS_T5, RG_POS_XL,
                                      RG_POS_ALIBI, RG_POS_ROPE, RG_POS_ROPE_HALF, RG_POS_FIRE};

static void test_permutation_equivariance(void **state)
{
    enum { T = 7, V = 11 };
    int32_t tok[T] = {1, 4, 7, 2, 9, 3, 10}, perm[T] = {3, 0, 6, 1, 5, 2, 4}, ptok[T];
    for (int t = 0; t < T; t++) ptok[t] = tok[perm[t]];
    for (size_t e = 0; e < sizeof ALL_POS / sizeof *ALL_POS; e++) {
        rg_model *m = small_model(ALL_POS[e], false);
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *a, *b;
        assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, T, NULL, &a), RG_OK);
        assert_int_equal(rg_model_forward(c, m, ptok, NULL, 1, T, NULL, &b), RG_OK);
        /* row t of the permuted run should equal row perm[t] of the original */
        double diff = 0, mag = 0;
        for (int t = 0; t < T; t++)
            for (int v = 0; v < V; v++) {
                diff = tc_max(diff, fabs((double)b->data[t * V + v] - a->data[perm[t] * V + v]));
                mag = tc_max(mag, fabs((double)a->data[perm[t] * V + v]));
            }
        print_message("bidirectional %-10s max |out(perm x) - perm(out x)| = %.3g (|out| %.3g)\n",
                      rg_pos_name(ALL_POS[e]), diff, mag);
        if (ALL_POS[e] == RG_POS_NONE) assert_true(diff < 1e-5 * (1 + mag));
        else assert_true(diff > 1e-3 * mag);
        rg_ctx_free(c);
        rg_model_free(m);
    }
}

static void test_causal_prefix(void **state)
{
    enum { T = 9, V = 11 };
    int32_t tok[T] = {1, 4, 7, 2, 9, 3, 10, 5, 6}, tok2[T];
    memcpy(tok2, tok, sizeof tok);
    tok2[6] = 8; /* a later token changes: outputs 0..5 must not */
    for (size_t e = 0; e < sizeof ALL_POS / sizeof *ALL_POS; e++) {
        rg_model *m = small_model(ALL_POS[e], true);
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *a, *b;
        assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, T, NULL, &a), RG_OK);
        assert_int_equal(rg_model_forward(c, m, tok2, NULL, 1, T, NULL, &b), RG_OK);
        double before = 0, after = 0;
        for (int t = 0; t < T; t++)
            for (int v = 0; v < V; v++) {
                double d = fabs((double)a->data[t * V + v] - b->data[t * V + v]);
                if (t < 6) before = tc_max(before, d);
                else after = tc_max(after, d);
            }
        print_message("causal %-10s change before the edited token %.3g, from it on %.3g\n", rg_pos_name(ALL_POS[e]),
                      before, after);
        assert_true(before < 1e-6);
        assert_true(after > 1e-4);
        rg_ctx_free(c);
        rg_model_free(m);
    }
}

/* Changing the RoPE extension of a model (rg_model_set_rope_scaling) takes effect at the next forward; with s = 1
 * PI is the identity; a bad setting is refused and leaves the model unchanged. */
static void test_model_rope_ext_switch(void **state)
{
    enum { T = 6 };
    int32_t tok[T] = {1, 4, 7, 2, 9, 3};
    rg_model *m = small_model(RG_POS_ROPE, true);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *a, *b, *d;
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, T, NULL, &a), RG_OK);
    rg_rope_scaling sc = rg_model_rope_scaling(m);
    assert_true(sc.rope_type == RG_ROPE_EXT_NONE && sc.factor == 1 && sc.beta_fast == 32 && sc.high_freq_factor == 4);
    sc.rope_type = RG_ROPE_EXT_PI;
    sc.factor = 2;
    assert_int_equal(rg_model_set_rope_scaling(m, &sc), RG_OK);
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, T, NULL, &b), RG_OK);
    sc.factor = -1;
    assert_int_equal(rg_model_set_rope_scaling(m, &sc), RG_ERR_ARG);
    assert_true(m->cfg.rope_scale == 2);
    sc.factor = 1;
    assert_int_equal(rg_model_set_rope_scaling(m, &sc), RG_OK);
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, T, NULL, &d), RG_OK);
    double ab = 0, ad = 0;
    for (int64_t i = 0; i < a->numel; i++) {
        ab = tc_max(ab, fabs((double)a->data[i] - b->data[i]));
        ad = tc_max(ad, fabs((double)a->data[i] - d->data[i]));
    }
    assert_true(ab > 1e-4);
    assert_true(ad == 0);
    rg_ctx_free(c);
    rg_model_free(m);
}

/* Dynamic NTK in the model (original length 16, factor 2): sequences of length <= 16 give exactly the outputs of
 * plain RoPE, before and after a call of length 40 (nothing is kept between forwards); length 40 differs. */
static void test_model_rope_dynamic(void **state)
{
    enum { T = 40 };
    int32_t tok[T];
    for (int t = 0; t < T; t++) tok[t] = (t * 7 + 3) % 11;
    rg_model *m = small_model(RG_POS_ROPE, true);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *plain4, *plain40, *a, *b, *d;
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, 4, NULL, &plain4), RG_OK);
    int32_t pos[T];
    for (int t = 0; t < T; t++) pos[t] = t;
    /* max_len is 24: positions past it are given explicitly (RoPE reads any position) */
    assert_int_equal(rg_model_forward(c, m, tok, pos, 1, T, NULL, &plain40), RG_OK);
    rg_rope_scaling sc = rg_model_rope_scaling(m);
    sc.rope_type = RG_ROPE_EXT_DYNAMIC;
    sc.factor = 2;
    sc.original_max_position_embeddings = 16;
    assert_int_equal(rg_model_set_rope_scaling(m, &sc), RG_OK);
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, 4, NULL, &a), RG_OK);
    assert_int_equal(rg_model_forward(c, m, tok, pos, 1, T, NULL, &b), RG_OK);
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, 4, NULL, &d), RG_OK);
    assert_memory_equal(a->data, plain4->data, (size_t)a->numel * sizeof(rg_real));
    assert_memory_equal(d->data, plain4->data, (size_t)d->numel * sizeof(rg_real));
    double diff = 0;
    for (int64_t i = 0; i < b->numel; i++) diff = tc_max(diff, fabs((double)b->data[i] - plain40->data[i]));
    assert_true(diff > 1e-4);
    rg_ctx_free(c);
    rg_model_free(m);
}

/* The rope_scaling fields survive a checkpoint: save a dynamic-NTK model with partial_rotary_factor and an
 * attention_factor, read the config back (every field equal, rotary_dim resolved from the factor) and load it into
 * a model built from that config; its logits equal the original's. Set ROPEGRAD_KEEP_CKPT=path to keep a copy
 * (for tools/ckpt_to_torch.py). */
static void test_rope_scaling_checkpoint(void **state)
{
    char dir[] = "/tmp/rg_test_pos_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.h5", dir);
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 11, cfg.d_model = 16, cfg.n_heads = 2, cfg.n_layers = 1, cfg.d_ff = 32, cfg.max_len = 24;
    cfg.pos = RG_POS_ROPE_HALF;
    cfg.partial_rotary_factor = 0.5;
    cfg.rope_ext = RG_ROPE_EXT_YARN;
    cfg.rope_scale = 3;
    cfg.rope_attention_factor = 1.2;
    cfg.yarn_beta_fast = 8;
    rg_model *m, *m2;
    assert_int_equal(rg_model_new(&cfg, 4, &m), RG_OK);
    assert_int_equal(rg_checkpoint_save(path, m, NULL, NULL), RG_OK);
    const char *keep = getenv("ROPEGRAD_KEEP_CKPT");
    if (keep) assert_int_equal(rg_checkpoint_save(keep, m, NULL, NULL), RG_OK);
    rg_model_config got;
    assert_int_equal(rg_checkpoint_read_config(path, &got, NULL), RG_OK);
    assert_true(got.partial_rotary_factor == 0.5 && got.rotary_dim == 4 && got.rope_ext == RG_ROPE_EXT_YARN &&
                got.rope_scale == 3 && got.rope_attention_factor == 1.2 && got.yarn_beta_fast == 8);
    assert_int_equal(rg_model_new(&got, 9, &m2), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m2, NULL, NULL), RG_OK);
    int32_t tok[5] = {1, 2, 3, 4, 5};
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *a, *b;
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, 5, NULL, &a), RG_OK);
    assert_int_equal(rg_model_forward(c, m2, tok, NULL, 1, 5, NULL, &b), RG_OK);
    assert_memory_equal(a->data, b->data, (size_t)a->numel * sizeof(rg_real));
    rg_ctx_free(c);
    rg_model_free(m);
    rg_model_free(m2);
    remove(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alibi_golden),
        cmocka_unit_test(test_t5_golden),
        cmocka_unit_test(test_sinusoidal_golden),
        cmocka_unit_test(test_rope_golden),
        cmocka_unit_test(test_rope_ext_golden),
        cmocka_unit_test(test_rope_dynamic_golden),
        cmocka_unit_test(test_rope_scaling_golden),
        cmocka_unit_test(test_rope_norm_and_relative),
        cmocka_unit_test(test_rope_half_is_permuted_interleaved),
        cmocka_unit_test(test_rope_far_pi_and_shared_rows),
        cmocka_unit_test(test_pos_summary),
        cmocka_unit_test(test_axial_relative_2d),
        cmocka_unit_test(test_learned_past_table),
        cmocka_unit_test(test_random_positions),
        cmocka_unit_test(test_permutation_equivariance),
        cmocka_unit_test(test_causal_prefix),
        cmocka_unit_test(test_model_rope_ext_switch),
        cmocka_unit_test(test_model_rope_dynamic),
        cmocka_unit_test(test_rope_scaling_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
