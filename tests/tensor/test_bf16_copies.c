/* test_bf16_copies.c (float32): with Linear's products in bf16, the bf16 copies written by the passes that produce
 * a tensor or read a gradient (rg_linear_bf16_slot, gemm.h; the rule: "each activation once, where it is
 * produced") are exactly the conversions a consuming Linear would make (rg_bf16_from_float), and are used:
 * - forward: after rg_layernorm, rg_linear_gelu and rg_attention (causal, 1 and several heads), the output's bf16
 *   copy is current (bf16_data will not convert again) and equal to rg_bf16_from_float of its data, value for value;
 * - backward: the gradients of rg_linear_gelu (dpre's copy written by the GELU-gradient pass), rg_linear_residual
 *   (G's copy written by the residual pass) and rg_linear with a bias (dy's copy written by the bias gradient's
 *   pass) equal bit for bit those of the same graph of unfused ops (rg_linear without bias, rg_add of the bias,
 *   rg_gelu; rg_add of the residual), whose rg_linear converts dy itself; checked in fp32 too, where nothing is
 *   converted, so the two graphs are known to be the same arithmetic.
 * At 1 and 2 threads (rows x width past the pool's split: the passes' parts write their own rows or columns);
 * widths with odd column tails. The bf16 cases are skipped (printed) where rg_bf16_supported is false. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensor/gemm.h"

typedef struct { int rows, in, out, heads, head_dim; } copies_case;

static const copies_case CASES[] = {
    {7, 13, 37, 1, 5},        /* below one vector and a tail */
    {130, 64, 256, 4, 16},    /* the reference model's MLP and attention */
    {1040, 200, 600, 3, 24},  /* past the pool's split (2 x 65536 values), odd column tails */
};

static bool same_bits(const rg_real *a, const rg_real *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* t's bf16 copy is current for its data and equals rg_bf16_from_float(t->data) */
static void check_copy(const char *what, const rg_tensor *t)
{
    if (!rg_derived_current(t, &t->bf16))
        fail_msg("%s: no current bf16 copy after the forward", what);
    uint16_t *want = malloc((size_t)t->numel * sizeof *want);
    assert_non_null(want);
    rg_bf16_from_float(want, t->data, t->numel);
    const uint16_t *got = t->bf16.p;
    for (int64_t i = 0; i < t->numel; i++)
        if (got[i] != want[i])
            fail_msg("%s: copy[%lld] 0x%04x, conversion 0x%04x", what, (long long)i, got[i], want[i]);
    free(want);
}

typedef struct { rg_tensor *x, *w, *b, *r, *lw, *lb; rg_real *g; } operands;

static void zero_grads(const operands *o)
{
    rg_zero_grad(o->x), rg_zero_grad(o->w), rg_zero_grad(o->b), rg_zero_grad(o->r);
}

enum { GELU, RESIDUAL, BIAS, GRAPHS };
static const char *const GRAPH_NAME[GRAPHS] = {"linear_gelu", "linear_residual", "linear with bias"};

/* the gradients of x, w, b, r after one backward of the fused (or unfused) graph; the unfused ones add the bias
 * after a bias-free rg_linear (which converts dy itself); with the weighted sum's loss, linear in y, dy = g whatever
 * the forward's rounding, so only the GELU graph needs the bias added in rg_linear_gelu's order */
static rg_real *grads_of(rg_ctx *c, const operands *o, bool fused, int graph, bool check)
{
    zero_grads(o);
    rg_ctx_reset(c);
    rg_tensor *y = fused ? NULL : rg_add(c, rg_linear(c, o->x, o->w, NULL), o->b);
    if (graph == GELU) y = fused ? rg_linear_gelu(c, o->x, o->w, o->b) : rg_gelu(c, y);
    if (graph == RESIDUAL) y = fused ? rg_linear_residual(c, o->x, o->w, o->b, o->r) : rg_add(c, o->r, y);
    if (graph == BIAS && fused) y = rg_linear(c, o->x, o->w, o->b);
    if (check && fused && graph == GELU) check_copy("rg_linear_gelu's output", y);
    rg_backward(c, tc_weighted_sum(c, y, o->g), NULL);
    const rg_tensor *t[] = {o->x, o->w, o->b, o->r};
    int64_t n = 0;
    for (int i = 0; i < 4; i++) n += t[i]->numel;
    rg_real *all = malloc((size_t)n * sizeof *all), *p = all;
    assert_non_null(all);
    for (int i = 0; i < 4; i++, p += t[i - 1]->numel) memcpy(p, t[i]->grad, (size_t)t[i]->numel * sizeof *p);
    return all;
}

/* rg_attention's output copy: q, k, v [2, T, H*hd] with T = rows / 2 and the case's heads (past the pool's split
 * for the larger cases: B H T^2 hd >= 2e5), causal */
static void check_attention_copy(rg_ctx *c, const copies_case *k, rg_rng *rng)
{
    const int T = k->rows / 2 > 1 ? k->rows / 2 : 2, H = k->heads, D = H * k->head_dim;
    rg_tensor *q = tc_param_randn("q", 3, (int[]){2, T, D}, rng, 1);
    rg_tensor *kk = tc_param_randn("k", 3, (int[]){2, T, D}, rng, 1);
    rg_tensor *v = tc_param_randn("v", 3, (int[]){2, T, D}, rng, 1);
    rg_ctx_reset(c);
    check_copy("rg_attention's output", rg_attention(c, q, kk, v, H, NULL, true, 0.25));
    rg_param_free(q), rg_param_free(kk), rg_param_free(v);
}

static void run_case(const copies_case *k, int threads, rg_precision prec, rg_rng *rng)
{
    rg_set_num_threads(threads);
    assert_int_equal(rg_set_linear_precision(prec), RG_OK);
    operands o;
    o.x = tc_param_randn("x", 2, (int[]){k->rows, k->in}, rng, 1);
    o.w = tc_param_randn("w", 2, (int[]){k->out, k->in}, rng, 0.2);
    o.b = tc_param_randn("b", 1, (int[]){k->out}, rng, 1);
    o.r = tc_param_randn("r", 2, (int[]){k->rows, k->out}, rng, 1);
    o.lw = tc_param_randn("ln.weight", 1, (int[]){k->in}, rng, 1);
    o.lb = tc_param_randn("ln.bias", 1, (int[]){k->in}, rng, 1);
    o.g = tc_random_weights((int64_t)k->rows * k->out, rng);
    const int64_t n = o.x->numel + o.w->numel + o.b->numel + o.r->numel;
    rg_ctx *c = rg_ctx_new();
    const bool bf16 = prec == RG_PRECISION_BF16;
    if (bf16) check_copy("rg_layernorm's output", rg_layernorm(c, o.x, o.lw, o.lb, 1e-5));
    if (bf16) check_attention_copy(c, k, rng);
    for (int graph = 0; graph < GRAPHS; graph++) {
        rg_real *fused = grads_of(c, &o, true, graph, bf16), *plain = grads_of(c, &o, false, graph, false);
        if (!same_bits(fused, plain, n))
            fail_msg("%s %s, rows %d, %d -> %d, %d thread(s): the fused op's gradients differ from the unfused graph's",
                     rg_precision_name(prec), GRAPH_NAME[graph], k->rows, k->in, k->out, threads);
        free(fused), free(plain);
    }
    rg_ctx_free(c);
    free(o.g);
    rg_param_free(o.x), rg_param_free(o.w), rg_param_free(o.b), rg_param_free(o.r);
    rg_param_free(o.lw), rg_param_free(o.lb);
    rg_set_num_threads(1);
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_FP32), RG_OK);
}

static void test_copies(void **state)
{
    char why[256];
    const bool have_bf16 = rg_bf16_supported(why, sizeof why);
    if (!have_bf16) printf("bf16 cases skipped: %s (the fp32 cases run)\n", why);
    rg_rng rng;
    rg_rng_seed(&rng, 20261203, 1);
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++)
        for (int threads = 1; threads <= 2; threads++) {
            run_case(&CASES[i], threads, RG_PRECISION_FP32, &rng);
            if (have_bf16) run_case(&CASES[i], threads, RG_PRECISION_BF16, &rng);
        }
    if (!have_bf16) skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
