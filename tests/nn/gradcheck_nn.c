/* gradcheck_nn.c (float64 build): finite-difference checks (rg_gradcheck, relative error < 1e-6) of the fused
 * attention op (causal / bidirectional, cross-attention T != S, bias [H, T, S] and [B, H, T, S] requiring grad,
 * fully masked rows; causal cases of several blocks of 16 queries and keys: T = S, T < S, and T > S with a block
 * that sees no key), each forward also against a plain float64 loop, of the Linear / LayerNorm / MLP modules, and
 * of the whole NoPE model's loss with respect to every parameter. Each case prints its worst relative error.
 * Scalar losses are sum(out * w) with a fixed random w, or the model's cross-entropy. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-6
#define H_STEP 1e-6
#define NAME_W 44 /* report column width */

/* ------------------------------------------------------------------ attention */

typedef struct {
    int H;
    bool causal;
    double scale;
    const rg_real *w;
} attn_case;

static rg_tensor *attn_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    attn_case *a = user;
    rg_tensor *out = rg_attention(c, in[0], in[1], in[2], a->H, in[3], a->causal, a->scale);
    return tc_weighted_sum(c, out, a->w);
}

/* The largest |difference| between rg_attention's output and the formula run as plain loops (torch's
 * scaled_dot_product_attention: softmax(scale Q K^T + bias, causal mask j <= i + S - T) V; a row with no key
 * gives 0). */
static double attention_vs_loops(rg_tensor *const in[4], int H, bool causal, double scale)
{
    const rg_tensor *q = in[0], *k = in[1], *v = in[2], *bias = in[3];
    const int B = q->shape[0], T = q->shape[1], S = k->shape[1], D = q->shape[2], hd = D / H;
    rg_ctx *c = rg_ctx_new();
    rg_tensor *out = rg_attention(c, in[0], in[1], in[2], H, in[3], causal, scale);
    double *p = malloc((size_t)S * sizeof *p), worst = 0;
#define AT(t, b, L, i, h, d) (t)->data[((int64_t)(b) * (L) + (i)) * D + (h) * hd + (d)] /* [B, L, H*hd] entry */
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double m = -INFINITY, sum = 0;
                for (int j = 0; j < S; j++) {
                    double x = -INFINITY;
                    if (!causal || j <= i + S - T) {
                        x = 0;
                        for (int d = 0; d < hd; d++)
                            x += AT(q, b, T, i, h, d) * AT(k, b, S, j, h, d);
                        x *= scale;
                        if (bias)
                            x += bias->data[(((bias->ndim == 4 ? (int64_t)b * H : 0) + h) * T + i) * S + j];
                    }
                    p[j] = x;
                    if (x > m) m = x;
                }
                for (int j = 0; j < S; j++) sum += p[j] = m == -INFINITY ? 0 : exp(p[j] - m);
                for (int d = 0; d < hd; d++) {
                    double o = 0;
                    for (int j = 0; j < S; j++) o += (sum > 0 ? p[j] / sum : 0) * AT(v, b, S, j, h, d);
                    double e = fabs(o - AT(out, b, T, i, h, d));
                    if (!(e <= worst)) worst = e;
                }
            }
#undef AT
    free(p);
    rg_ctx_free(c);
    return worst;
}

/* bias_dims: 0 none, 3 [H, T, S], 4 [B, H, T, S]. */
static void check_attention(const char *name, int B, int T, int S, int H, int hd, bool causal, int bias_dims,
                            uint64_t seed)
{
    rg_rng rng;
    rg_rng_seed(&rng, seed, 7);
    int D = H * hd;
    rg_tensor *in[4] = {tc_param_randn("q", 3, (int[]){B, T, D}, &rng, 1.0),
                        tc_param_randn("k", 3, (int[]){B, S, D}, &rng, 1.0),
                        tc_param_randn("v", 3, (int[]){B, S, D}, &rng, 1.0), NULL};
    if (bias_dims == 3) in[3] = tc_param_randn("bias", 3, (int[]){H, T, S}, &rng, 1.0);
    if (bias_dims == 4) in[3] = tc_param_randn("bias", 4, (int[]){B, H, T, S}, &rng, 1.0);
    rg_real *w = tc_random_weights((int64_t)B * T * D, &rng);
    attn_case a = {H, causal, 1 / sqrt((double)hd), w};
    int n = bias_dims ? 4 : 3;
    double fwd = attention_vs_loops(in, H, causal, a.scale);
    printf("  %-*s forward vs plain loops: max |diff| %.2e\n", NAME_W, name, fwd);
    assert_true(fwd < 1e-12);
    double rel[4];
    double worst = rg_gradcheck(attn_fn, &a, in, n, H_STEP, rel);
    tc_gradcheck_report(NAME_W, name, worst, rel, n, TOL);
    free(w);
    for (int i = 0; i < n; i++) rg_param_free(in[i]);
}

static void test_attention_causal(void **state)
{
    check_attention("attention self causal B2 T4 S4 H2 hd3", 2, 4, 4, 2, 3, true, 0, 1);
}
static void test_attention_bidir(void **state)
{
    check_attention("attention self bidirectional B2 T4 S4 H2 hd3", 2, 4, 4, 2, 3, false, 0, 2);
}
static void test_attention_cross_causal(void **state)
{
    check_attention("attention cross causal T3 S5 (offset mask)", 2, 3, 5, 2, 3, true, 0, 3);
}
static void test_attention_cross_bidir(void **state)
{
    check_attention("attention cross bidirectional T5 S3", 2, 5, 3, 3, 2, false, 0, 4);
}
static void test_attention_bias3(void **state)
{
    check_attention("attention causal T3 S5 + bias [H,T,S]", 2, 3, 5, 2, 3, true, 3, 5);
}
static void test_attention_bias4(void **state)
{
    check_attention("attention bidir T4 S6 + bias [B,H,T,S]", 2, 4, 6, 2, 2, false, 4, 6);
}
static void test_attention_masked_rows(void **state)
{
    /* causal with T 5 > S 3: rows 0 and 1 see no key (zeros, no gradient) */
    check_attention("attention fully masked rows T5 S3 + bias", 2, 5, 3, 2, 3, true, 4, 7);
}

/* Causal attention runs in blocks of 16 queries and 16 keys (src/nn/attention.c): cases past one block. */
static void test_attention_blocks(void **state)
{
    static const struct {
        const char *name;
        int T, S, bias_dims;
    } cases[] = {
        {"attention blocks T70 S70 + bias [H,T,S]", 70, 70, 3},
        {"attention blocks T40 S75 (KV cache) + bias", 40, 75, 4},
        {"attention blocks T75 S40 (one sees no key)", 75, 40, 4},
        {"attention blocks T64 S64 (whole blocks)", 64, 64, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_attention(cases[i].name, 1, cases[i].T, cases[i].S, 2, 3, true, cases[i].bias_dims, 20 + i);
}

/* The fully masked rows give exact zeros and the op never produces NaN. */
static void test_attention_masked_rows_zero(void **state)
{
    rg_rng rng;
    rg_rng_seed(&rng, 11, 0);
    rg_ctx *c = rg_ctx_new();
    rg_tensor *q = rg_tensor_3d(c, 1, 4, 4), *k = rg_tensor_3d(c, 1, 2, 4), *v = rg_tensor_3d(c, 1, 2, 4);
    tc_fill_randn(q, &rng, 1);
    tc_fill_randn(k, &rng, 1);
    tc_fill_randn(v, &rng, 1);
    rg_tensor *o = rg_attention(c, q, k, v, 2, NULL, true, 0.5);
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 4; j++) {
            double x = o->data[t * 4 + j];
            if (t < 2) assert_true(x == 0);
            else assert_true(x == x);
        }
    rg_ctx_free(c);
}

/* ------------------------------------------------------------------ modules */

typedef struct {
    int kind; /* 0 linear, 1 layernorm, 2 mlp */
    rg_nn_linear lin;
    rg_nn_layernorm ln;
    rg_nn_mlp mlp;
    const rg_real *w;
} module_case;

static rg_tensor *module_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    module_case *mc = user;
    rg_tensor *y = mc->kind == 0 ? rg_nn_linear_forward(c, &mc->lin, in[0])
                 : mc->kind == 1 ? rg_nn_layernorm_forward(c, &mc->ln, in[0])
                                 : rg_nn_mlp_forward(c, &mc->mlp, in[0]);
    return tc_weighted_sum(c, y, mc->w);
}

/* Fills every registered parameter with N(0, std) (LayerNorm weights 1 + N(0, 0.1)). */
static void randomize(rg_params *ps, rg_rng *rng, double std)
{
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        bool ln_w = strstr(p->name, "ln") && strstr(p->name, ".weight") && p->ndim == 1;
        for (int64_t j = 0; j < p->numel; j++)
            p->data[j] = ln_w ? (rg_real)(1 + 0.1 * rg_rng_normal(rng)) : (rg_real)(std * rg_rng_normal(rng));
    }
}

static void check_module(const char *name, int kind, bool bias)
{
    rg_rng rng;
    rg_rng_seed(&rng, 100 + kind, 1);
    rg_params ps = {0};
    module_case mc = {.kind = kind};
    int in_f = 4, out_f = kind == 0 ? 5 : 4;
    if (kind == 0) assert_int_equal(rg_nn_linear_init(&mc.lin, &ps, "lin", in_f, out_f, bias, &rng), RG_OK);
    if (kind == 1) assert_int_equal(rg_nn_layernorm_init(&mc.ln, &ps, "ln", in_f), RG_OK);
    if (kind == 2) assert_int_equal(rg_nn_mlp_init(&mc.mlp, &ps, "mlp", in_f, 6, &rng), RG_OK);
    randomize(&ps, &rng, 0.5);
    rg_tensor *x = tc_param_randn("x", 3, (int[]){2, 3, in_f}, &rng, 1.0);
    rg_real *w = tc_random_weights(2 * 3 * out_f, &rng);
    mc.w = w;
    int n = 1 + ps.n;
    rg_tensor **in = malloc((size_t)n * sizeof *in);
    in[0] = x;
    for (int i = 0; i < ps.n; i++) in[1 + i] = ps.items[i];
    double *rel = malloc((size_t)n * sizeof *rel);
    double worst = rg_gradcheck(module_fn, &mc, in, n, H_STEP, rel);
    tc_gradcheck_report(NAME_W, name, worst, rel, n, TOL);
    free(rel);
    free(in);
    free(w);
    rg_param_free(x);
    rg_params_free(&ps);
}

static void test_linear(void **state) { check_module("Linear 4->5 with bias", 0, true); }
static void test_linear_nobias(void **state) { check_module("Linear 4->5 without bias", 0, false); }
static void test_layernorm(void **state) { check_module("LayerNorm 4", 1, false); }
static void test_mlp(void **state) { check_module("MLP 4->6->4", 2, false); }

/* ------------------------------------------------------------------ the whole model */

typedef struct {
    rg_model *m;
    const int32_t *tokens, *targets;
    int B, T;
} model_case;

static rg_tensor *model_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    model_case *mc = user;
    rg_tensor *logits;
    rg_status st = rg_model_forward(c, mc->m, mc->tokens, NULL, mc->B, mc->T, NULL, &logits);
    RG_ASSERT(st == RG_OK, "forward: %s", rg_last_error());
    return rg_cross_entropy(c, logits, mc->targets, -100);
}

static void check_model(const char *name, bool causal, int n_layers)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_NONE);
    cfg.n_layers = n_layers;
    cfg.causal = causal;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 5, &m), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 77, 3);
    randomize(&m->params, &rng, 0.4);
    int32_t tokens[2 * 4] = {1, 5, 2, 6, 0, 3, 3, 4};
    int32_t targets[2 * 4] = {5, 2, -100, 1, 3, 3, 4, -100};
    model_case mc = {m, tokens, targets, 2, 4};
    double *rel = malloc((size_t)m->params.n * sizeof *rel);
    double worst = rg_gradcheck(model_fn, &mc, m->params.items, m->params.n, H_STEP, rel);
    /* The key bias has an exactly zero gradient (it adds q_i . b_k to every score of row i, and softmax ignores a
     * constant per row), so its relative error compares rounding noise with rounding noise: check it is ~0. */
    worst = 0;
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        if (strstr(p->name, "k_proj.bias")) {
            for (int64_t j = 0; j < p->numel; j++) assert_true(fabs((double)p->grad[j]) < 1e-12);
            rel[i] = 0;
        }
        if (!(rel[i] <= worst)) worst = rel[i];
    }
    char buf[96];
    snprintf(buf, sizeof buf, "%s (%lld params)", name, (long long)rg_params_numel(&m->params));
    for (int i = 0; i < m->params.n; i++)
        if (!(rel[i] < TOL)) print_message("  %s: %.3g\n", m->params.items[i]->name, rel[i]);
    tc_gradcheck_report(NAME_W, buf, worst, rel, m->params.n, TOL);
    free(rel);
    rg_model_free(m);
}

static void test_model_causal(void **state) { check_model("model NoPE causal, 2 layers", true, 2); }
static void test_model_bidir(void **state) { check_model("model NoPE bidirectional, 1 layer", false, 1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_causal),
        cmocka_unit_test(test_attention_bidir),
        cmocka_unit_test(test_attention_cross_causal),
        cmocka_unit_test(test_attention_cross_bidir),
        cmocka_unit_test(test_attention_bias3),
        cmocka_unit_test(test_attention_bias4),
        cmocka_unit_test(test_attention_masked_rows),
        cmocka_unit_test(test_attention_blocks),
        cmocka_unit_test(test_attention_masked_rows_zero),
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_linear_nobias),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_model_causal),
        cmocka_unit_test(test_model_bidir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
