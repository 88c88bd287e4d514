/* test_rope_bf16.c (float32): the bf16-angle ablation of RoPE (rg_model_config.rope_bf16_angles, torch.autocast's angles before transformers PR #29285).
 * Hand-computed cases of angle = bf16(bf16(p) bf16(theta_i)) with cos and sin rounded to bf16 (rotary dim 16, base
 * 10000, so theta_i = 10000^(-i/8)); every entry of a table against an independent bit-level bf16 rounding; the
 * default (flag off) table bit for bit the double-precision formula of before; the flag survives a checkpoint and
 * changes a model's logits at long positions only where bf16 loses the angle. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Round-to-nearest-even of float32 x to bfloat16, on the bits (independent of the library's rg_bf16_from_float). */
static float ref_bf16(double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&f, &u, 4);
    return f;
}

static rg_model_config cfg16(bool bf16)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = 16;
    cfg.n_heads = 1;
    cfg.rope_bf16_angles = bf16;
    assert_int_equal(rg_rope_validate(&cfg), RG_OK);
    return cfg;
}

/* Each case by hand: bf16(theta_i) and the bf16 product, with the exact binary values. */
static const struct {
    int p, i;
    double angle;         /* bf16(bf16(p) * bf16(theta_i)) */
    double exact;         /* p theta_i */
} CASES[] = {
    {3, 0, 3.0, 3.0},                 /* integers below 256 are exact in bf16 (8 significant bits) */
    {131, 0, 131.0, 131.0},
    {257, 0, 256.0, 257.0},           /* 257 = 256 + 1, spacing 2 above 256: a tie, to even (256) */
    {259, 0, 260.0, 259.0},           /* 259: a tie between 258 and 260, to even (260 = 130 * 2) */
    {131, 1, 41.5, 41.425837348205770}, /* bf16(0.3162278) = 162/512 = 0.31640625; 131 * that = 41.449...
                                           spacing 0.25 in [32, 64): 41.5 */
    {100, 4, 1.0, 1.0},               /* bf16(0.01) = 164 * 2^-14 = 0.010009765625; 100 * that = 1.00098 -> 1 */
    {131, 7, 0.04150390625, 0.041425837348205770}, /* bf16(10000^-7/8) = 166 * 2^-19; 131 * that = 0.0414772
                                                      spacing 2^-12: 170 * 2^-12 */
    {64, 2, 6.40625, 6.4},            /* bf16(0.1) = 0.10009765625; 64 * that = 6.40625 (exact in bf16) */
};

static void test_hand_cases(void **state)
{
    rg_ctx *c = rg_ctx_new();
    rg_model_config cfg = cfg16(true), f32 = cfg16(false);
    for (size_t k = 0; k < sizeof CASES / sizeof *CASES; k++) {
        int32_t p = CASES[k].p;
        int i = CASES[k].i;
        rg_rope_table t = rg_rope_table_new(c, &cfg, &p, 1, 0), t32 = rg_rope_table_new(c, &f32, &p, 1, 0);
        assert_int_equal(t.n_freq, 8);
        double a = CASES[k].angle;
        if (t.cos[i] != ref_bf16(cos(a)) || t.sin[i] != ref_bf16(sin(a)))
            fail_msg("p=%d i=%d: cos %.9g sin %.9g, want bf16 of cos/sin(%.17g) = %.9g %.9g", p, i, t.cos[i],
                     t.sin[i], a, ref_bf16(cos(a)), ref_bf16(sin(a)));
        /* the float32 table holds the exact angle's cos and sin */
        assert_true(fabs(t32.cos[i] - cos(CASES[k].exact)) <= 1e-6 && fabs(t32.sin[i] - sin(CASES[k].exact)) <= 1e-6);
    }
    rg_ctx_free(c);
}

/* Every entry at positions 0..299 (rotary dim 16, and PI's 1/s, and a partial rotary dim): the bf16 table against
 * the formula with the independent rounding; the default table bit for bit (float)cos(p * 10000^(-2i/d)). */
static void test_tables(void **state)
{
    enum { N = 300 };
    static const struct { rg_rope_ext ext; double s; int rd; } SET[] = {
        {RG_ROPE_EXT_NONE, 1, 0}, {RG_ROPE_EXT_PI, 3, 0}, {RG_ROPE_EXT_NONE, 1, 8}};
    int32_t pos[N];
    for (int r = 0; r < N; r++) pos[r] = r;
    rg_ctx *c = rg_ctx_new();
    for (size_t k = 0; k < sizeof SET / sizeof *SET; k++) {
        rg_model_config cb = cfg16(true), cf = cfg16(false);
        cb.rope_ext = cf.rope_ext = SET[k].ext;
        cb.rope_scale = cf.rope_scale = SET[k].s;
        cb.rotary_dim = cf.rotary_dim = SET[k].rd;
        int d = rg_rope_dim(&cf), nf = d / 2;
        rg_rope_table tb = rg_rope_table_new(c, &cb, pos, N, 0), tf = rg_rope_table_new(c, &cf, pos, N, 0);
        long differ = 0;
        for (int r = 0; r < N; r++)
            for (int i = 0; i < nf; i++) {
                double inv = 1.0 / pow(10000.0, (double)(2 * i) / d), pp = SET[k].s != 1 ? r / SET[k].s : r;
                double a = ref_bf16((double)ref_bf16(pp) * ref_bf16(inv));
                float wc = ref_bf16(cos(a)), ws = ref_bf16(sin(a));
                if (tb.cos[r * nf + i] != wc || tb.sin[r * nf + i] != ws)
                    fail_msg("set %zu p=%d i=%d: bf16 table %.9g %.9g, want %.9g %.9g", k, r, i, tb.cos[r * nf + i],
                             tb.sin[r * nf + i], wc, ws);
                if (tf.cos[r * nf + i] != (float)cos(pp * inv) || tf.sin[r * nf + i] != (float)sin(pp * inv))
                    fail_msg("set %zu p=%d i=%d: fp32 table changed", k, r, i);
                differ += tb.cos[r * nf + i] != tf.cos[r * nf + i];
            }
        assert_true(differ > N); /* the ablation is not the default */
    }
    rg_ctx_free(c);
}

/* The flag survives a checkpoint (/config rope_bf16_angles), the loaded model's logits equal the saved one's, and
 * they differ from the same weights with float32 angles (a file of a bf16-angle model does not load into a float32
 * one). */
static void test_checkpoint_and_model(void **state)
{
    char dir[] = "/tmp/rg_test_rope_bf16_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.h5", dir);
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 11, cfg.d_model = 16, cfg.n_heads = 2, cfg.n_layers = 1, cfg.d_ff = 32, cfg.max_len = 160;
    cfg.pos = RG_POS_ROPE;
    cfg.rope_bf16_angles = true;
    rg_model *m, *m2, *m32;
    assert_int_equal(rg_model_new(&cfg, 4, &m), RG_OK);
    assert_int_equal(rg_checkpoint_save(path, m, NULL, NULL), RG_OK);
    rg_model_config got;
    assert_int_equal(rg_checkpoint_read_config(path, &got, NULL), RG_OK);
    assert_true(got.rope_bf16_angles);
    assert_int_equal(rg_model_new(&got, 9, &m2), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m2, NULL, NULL), RG_OK);
    got.rope_bf16_angles = false; /* the same weights (seed 4: the flag does not enter the initialization) */
    assert_int_equal(rg_model_new(&got, 4, &m32), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m32, NULL, NULL), RG_ERR_ARG); /* the file's config is bf16 */
    assert_non_null(strstr(rg_last_error(), "rope_bf16_angles"));
    enum { T = 131 };
    int32_t tok[T];
    for (int t = 0; t < T; t++) tok[t] = 1 + t % 10;
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *a, *b, *f;
    assert_int_equal(rg_model_forward(c, m, tok, NULL, 1, T, NULL, &a), RG_OK);
    assert_int_equal(rg_model_forward(c, m2, tok, NULL, 1, T, NULL, &b), RG_OK);
    assert_int_equal(rg_model_forward(c, m32, tok, NULL, 1, T, NULL, &f), RG_OK);
    assert_memory_equal(a->data, b->data, (size_t)a->numel * sizeof(rg_real));
    assert_memory_not_equal(a->data, f->data, (size_t)a->numel * sizeof(rg_real));
    rg_ctx_free(c);
    rg_model_free(m);
    rg_model_free(m2);
    rg_model_free(m32);
    remove(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_cases),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_checkpoint_and_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
