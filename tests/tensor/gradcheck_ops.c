/* gradcheck_ops.c: every differentiable op of src/tensor against central finite differences (float64 build,
 * rg_gradcheck with h = 1e-6), one cmocka test per op or case, each asserting the worst relative error <= 1e-6.
 *
 * Inputs are parameters from tc_param_randn with shapes and values drawn from a seeded RNG. Each checked function
 * reduces to a scalar as sum(op(inputs) * W) with W a fixed random tensor of the output's shape (so every output
 * element reaches the loss with its own weight), unless the op already returns a scalar. The worst relative error
 * of every case is printed (print_message) and a table of them is printed at the end. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H 1e-6
#define TOL 1e-6

/* ------------------------------------------------------------------------------------------------ harness */

/* The configuration of one checked function; inputs are in[0..n-1]. */
typedef struct {
    rg_tensor *in[RG_MAX_SRC];
    int n;
    bool ta, tb;
    int dim, start, end, ndim;
    int perm[RG_MAX_DIMS], shape[RG_MAX_DIMS];
    double alpha;
    const uint8_t *mask;
    const int32_t *targets;
    int32_t ignore;
    const int32_t *idx;
    int idx_ndim, idx_shape[3];
    bool has_bias;
} gc_user;

/* sum(y * W), W ~ N(0, 1) from a fixed seed (the same W on every evaluation of the same shape). */
static rg_tensor *wsum(rg_ctx *c, rg_tensor *y)
{
    rg_rng r;
    rg_rng_seed(&r, 777, (uint64_t)y->numel);
    rg_tensor *w = rg_tensor_new(c, y->ndim, y->shape);
    tc_fill_randn(w, &r, 1.0);
    return rg_sum(c, rg_mul(c, y, w));
}

/* The results of every case, printed as a table by the group teardown. */
static struct { char name[48]; double err; } results[128];
static int n_results;

static void record(const char *name, double err)
{
    if (n_results < (int)(sizeof results / sizeof results[0])) {
        snprintf(results[n_results].name, sizeof results[0].name, "%s", name);
        results[n_results++].err = err;
    }
}

/* Runs rg_gradcheck on f, prints and records the worst relative error, fails above TOL or on a non-finite
 * analytic gradient. Frees nothing (the caller frees its inputs). */
static double check(const char *name, rg_gradcheck_fn f, gc_user *u)
{
    double rel[RG_MAX_SRC] = {0};
    double worst = rg_gradcheck(f, u, u->in, u->n, H, rel);
    char per[160] = "";
    size_t k = 0;
    for (int i = 0; i < u->n && k < sizeof per; i++)
        k += (size_t)snprintf(per + k, sizeof per - k, "%s%s %.2e", i ? ", " : "", u->in[i]->name, rel[i]);
    print_message("gradcheck %-34s worst rel err %.3e  (%s)\n", name, worst, per);
    record(name, worst);
    for (int i = 0; i < u->n; i++)
        for (int64_t j = 0; j < u->in[i]->numel; j++)
            if (!isfinite(u->in[i]->grad[j])) fail_msg("%s: gradient of %s[%lld] is %g", name, u->in[i]->name,
                                                       (long long)j, u->in[i]->grad[j]);
    if (!(worst <= TOL)) fail_msg("%s: worst relative error %.3e > %.0e", name, worst, TOL);
    return worst;
}

static void free_inputs(gc_user *u)
{
    for (int i = 0; i < u->n; i++) rg_param_free(u->in[i]);
    u->n = 0;
}

static rg_rng rng;

/* A size in [lo, hi]. */
static int rnd(int lo, int hi) { return lo + (int)rg_rng_below(&rng, (uint32_t)(hi - lo + 1)); }

static rg_tensor *param(const char *name, int ndim, const int *shape)
{
    return tc_param_randn(name, ndim, shape, &rng, 1.0);
}

/* ------------------------------------------------------------------------------------------------ functions */

static rg_tensor *f_matmul(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_matmul(c, in[0], in[1], u->ta, u->tb));
}
static rg_tensor *f_linear(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_linear(c, in[0], in[1], u->has_bias ? in[2] : NULL));
}
static rg_tensor *f_add(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_add(c, in[0], in[1])); }
static rg_tensor *f_sub(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_sub(c, in[0], in[1])); }
static rg_tensor *f_mul(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_mul(c, in[0], in[1])); }
static rg_tensor *f_scale(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_scale(c, in[0], ((gc_user *)p)->alpha));
}
static rg_tensor *f_exp(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_exp(c, in[0])); }
static rg_tensor *f_log(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_log(c, in[0])); }
static rg_tensor *f_tanh(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_tanh(c, in[0])); }
static rg_tensor *f_relu(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_relu(c, in[0])); }
static rg_tensor *f_gelu(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_gelu(c, in[0])); }
static rg_tensor *f_softmax(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_softmax(c, in[0])); }
static rg_tensor *f_softmax_masked(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_softmax(c, rg_masked_fill_neg_inf(c, in[0], ((gc_user *)p)->mask)));
}
static rg_tensor *f_log_softmax(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_log_softmax(c, in[0])); }
/* exp maps the -inf entries to 0, so the weighted sum stays finite */
static rg_tensor *f_masked_fill(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_exp(c, rg_masked_fill_neg_inf(c, in[0], ((gc_user *)p)->mask)));
}
static rg_tensor *f_cross_entropy(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return rg_cross_entropy(c, in[0], u->targets, u->ignore);
}
static rg_tensor *f_layernorm(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_layernorm(c, in[0], in[1], u->has_bias ? in[2] : NULL, 1e-5));
}
static rg_tensor *f_embedding(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_embedding(c, in[0], u->idx, u->idx_ndim, u->idx_shape));
}
/* reshape, then tanh and the weighted sum over the new shape: the gradient must land back where each element came
 * from */
static rg_tensor *f_reshape(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_tanh(c, rg_reshape(c, in[0], u->ndim, u->shape)));
}
static rg_tensor *f_permute(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_permute(c, in[0], ((gc_user *)p)->perm));
}
static rg_tensor *f_transpose(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_transpose(c, in[0], u->perm[0], u->perm[1]));
}
static rg_tensor *f_slice(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_slice(c, in[0], u->dim, u->start, u->end));
}
static rg_tensor *f_concat(rg_ctx *c, rg_tensor **in, void *p)
{
    gc_user *u = p;
    return wsum(c, rg_concat(c, in, u->n, u->dim));
}
/* sum and mean return scalars already; squaring makes the upstream gradient depend on the value */
static rg_tensor *f_sum(rg_ctx *c, rg_tensor **in, void *p)
{
    rg_tensor *s = rg_sum(c, in[0]);
    return rg_mul(c, s, s);
}
static rg_tensor *f_mean(rg_ctx *c, rg_tensor **in, void *p)
{
    rg_tensor *s = rg_mean(c, in[0]);
    return rg_mul(c, s, s);
}
static rg_tensor *f_sum_dim(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_sum_dim(c, in[0], ((gc_user *)p)->dim));
}
static rg_tensor *f_mean_dim(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_mean_dim(c, in[0], ((gc_user *)p)->dim));
}

/* ------------------------------------------------------------------------------------------------ matmul */

static const char *tname(bool ta, bool tb)
{
    return ta ? (tb ? "TT" : "TN") : (tb ? "NT" : "NN");
}

/* op(a) [batch..., M, K] x op(b) [bbatch..., K, N], for the four transpose combinations. nb = number of batch dims
 * of a; b_shared: b is 2-D. */
static void matmul_case(const char *what, int nb, bool b_shared)
{
    for (int combo = 0; combo < 4; combo++) {
        gc_user u = {0};
        u.ta = combo & 1;
        u.tb = combo & 2;
        int M = rnd(2, 4), K = rnd(2, 5), N = rnd(2, 4);
        int sa[4], sb[4], na = nb + 2, nbd = b_shared ? 2 : nb + 2;
        for (int i = 0; i < nb; i++) sa[i] = sb[i] = rnd(1, 3);
        sa[na - 2] = u.ta ? K : M;
        sa[na - 1] = u.ta ? M : K;
        sb[nbd - 2] = u.tb ? N : K;
        sb[nbd - 1] = u.tb ? K : N;
        u.in[0] = param("a", na, sa);
        u.in[1] = param("b", nbd, sb);
        u.n = 2;
        char name[64];
        snprintf(name, sizeof name, "matmul %s %s", what, tname(u.ta, u.tb));
        check(name, f_matmul, &u);
        free_inputs(&u);
    }
}

static void test_matmul_2d(void **state) { matmul_case("2-D", 0, false); }
static void test_matmul_3d(void **state) { matmul_case("3-D batched", 1, false); }
static void test_matmul_4d(void **state) { matmul_case("4-D batched", 2, false); }
static void test_matmul_3d_shared(void **state) { matmul_case("3-D x shared 2-D", 1, true); }
static void test_matmul_4d_shared(void **state) { matmul_case("4-D x shared 2-D", 2, true); }

static void linear_case(bool bias, int xdims)
{
    gc_user u = {0};
    int in = rnd(2, 5), out = rnd(2, 5), xs[3];
    for (int i = 0; i < xdims - 1; i++) xs[i] = rnd(1, 3);
    xs[xdims - 1] = in;
    u.in[0] = param("x", xdims, xs);
    u.in[1] = param("W", 2, (int[]){out, in});
    u.n = 2;
    if (bias) u.in[u.n++] = param("b", 1, (int[]){out});
    u.has_bias = bias;
    char name[64];
    snprintf(name, sizeof name, "linear %d-D x %s", xdims, bias ? "+ bias" : "no bias");
    check(name, f_linear, &u);
    free_inputs(&u);
}

static void test_linear_bias(void **state) { linear_case(true, 2); linear_case(true, 3); }
static void test_linear_no_bias(void **state) { linear_case(false, 2); linear_case(false, 3); }

/* ------------------------------------------------------------------------------------------------ fused */

static rg_tensor *f_linear_gelu(rg_ctx *c, rg_tensor **in, void *p) { return wsum(c, rg_linear_gelu(c, in[0], in[1], in[2])); }
static rg_tensor *f_linear_residual(rg_ctx *c, rg_tensor **in, void *p)
{
    return wsum(c, rg_linear_residual(c, in[0], in[1], in[2], in[3]));
}
/* The block's MLP shape on an intermediate a = 0.7 x: a + fc2(gelu(fc1(a))). a's gradient is first WRITTEN
 * (fresh) by the residual backward and then accumulated by linear_gelu's; h's is written by the residual GEMM. */
static rg_tensor *f_fused_chain(rg_ctx *c, rg_tensor **in, void *p)
{
    rg_tensor *a = rg_scale(c, in[0], 0.7);
    rg_tensor *h = rg_linear_gelu(c, a, in[1], in[2]);
    rg_tensor *b2 = rg_tensor_zeros(c, 1, (int[]){in[3]->shape[0]}); /* a constant bias (u.in holds 4 inputs) */
    return wsum(c, rg_linear_residual(c, h, in[3], b2, a));
}

static void test_linear_gelu(void **state)
{
    int B = rnd(1, 3), T = rnd(1, 5), in = rnd(1, 6), out = rnd(1, 6);
    gc_user u = {0};
    u.in[0] = param("x", 3, (int[]){B, T, in});
    u.in[1] = param("w", 2, (int[]){out, in});
    u.in[2] = tc_param_randn("b", 1, (int[]){out}, &rng, 2.0); /* reaches GELU's curved part */
    u.n = 3;
    check("linear_gelu", f_linear_gelu, &u);
    free_inputs(&u);
}

static void test_linear_residual(void **state)
{
    int B = rnd(1, 3), T = rnd(1, 5), in = rnd(1, 6), out = rnd(1, 6);
    gc_user u = {0};
    u.in[0] = param("x", 3, (int[]){B, T, in});
    u.in[1] = param("w", 2, (int[]){out, in});
    u.in[2] = param("b", 1, (int[]){out});
    u.in[3] = param("r", 3, (int[]){B, T, out});
    u.n = 4;
    check("linear_residual", f_linear_residual, &u);
    free_inputs(&u);
}

static void test_fused_chain(void **state)
{
    int B = rnd(1, 3), T = rnd(1, 5), d = rnd(2, 6), f = rnd(2, 8);
    gc_user u = {0};
    u.in[0] = param("x", 3, (int[]){B, T, d});
    u.in[1] = param("w1", 2, (int[]){f, d});
    u.in[2] = param("b1", 1, (int[]){f});
    u.in[3] = param("w2", 2, (int[]){d, f});
    u.n = 4;
    check("fused chain a + fc2(gelu(fc1(a)))", f_fused_chain, &u);
    free_inputs(&u);
}

/* ------------------------------------------------------------------------------------------------ elementwise */

/* op(a, b) with the shapes given (sizes chosen by the caller from rnd). */
static void binary_case(const char *opname, rg_gradcheck_fn f, int na, const int *sa, int nb, const int *sb)
{
    gc_user u = {0};
    u.in[0] = param("a", na, sa);
    u.in[1] = param("b", nb, sb);
    u.n = 2;
    char name[64], s1[64], s2[64];
    snprintf(name, sizeof name, "%s %s %s", opname, rg_shape_str(u.in[0], s1, 64), rg_shape_str(u.in[1], s2, 64));
    check(name, f, &u);
    free_inputs(&u);
}

static void binary_all(const char *opname, rg_gradcheck_fn f)
{
    /* distinct sizes, so that a gradient summed along the wrong dim cannot have the right shape */
    int B = rnd(2, 3), T = B + rnd(1, 2), C = T + rnd(1, 2), D = rnd(2, 3);
    binary_case(opname, f, 2, (int[]){T, C}, 2, (int[]){T, C});            /* same shape */
    binary_case(opname, f, 2, (int[]){T, C}, 1, (int[]){C});               /* rank-2 with a row */
    binary_case(opname, f, 1, (int[]){C}, 2, (int[]){T, C});               /* the broadcast operand first */
    binary_case(opname, f, 2, (int[]){T, C}, 2, (int[]){T, 1});            /* a column */
    binary_case(opname, f, 3, (int[]){B, T, C}, 2, (int[]){T, 1});         /* rank 3 with [T, 1] */
    binary_case(opname, f, 3, (int[]){B, 1, C}, 2, (int[]){T, 1});         /* both stretched */
    binary_case(opname, f, 3, (int[]){1, T, 1}, 3, (int[]){B, 1, C});      /* both stretched, same rank */
    binary_case(opname, f, 4, (int[]){D, B, T, C}, 3, (int[]){B, 1, C});   /* rank 4 */
    binary_case(opname, f, 3, (int[]){B, T, C}, 1, (int[]){1});            /* a one-element operand */
}

static void test_add(void **state) { binary_all("add", f_add); }
static void test_sub(void **state) { binary_all("sub", f_sub); }
static void test_mul(void **state) { binary_all("mul", f_mul); }

/* kind: 0 N(0,1) values, 1 positive (0.2 + |x|), 2 at least 0.05 away from 0 */
static void unary_case(const char *opname, rg_gradcheck_fn f, int kind, double alpha)
{
    gc_user u = {0};
    u.alpha = alpha;
    u.in[0] = param("x", 3, (int[]){rnd(1, 3), rnd(2, 4), rnd(2, 5)});
    u.n = 1;
    rg_tensor *x = u.in[0];
    for (int64_t i = 0; i < x->numel; i++) {
        if (kind == 1) x->data[i] = 0.2 + fabs(x->data[i]);
        if (kind == 2 && fabs(x->data[i]) < 0.05) x->data[i] += x->data[i] < 0 ? -0.1 : 0.1;
    }
    check(opname, f, &u);
    free_inputs(&u);
}

static void test_scale(void **state) { unary_case("scale", f_scale, 0, -1.7); }
static void test_exp(void **state) { unary_case("exp", f_exp, 0, 0); }
static void test_log(void **state) { unary_case("log", f_log, 1, 0); }
static void test_tanh(void **state) { unary_case("tanh", f_tanh, 0, 0); }
static void test_relu(void **state) { unary_case("relu", f_relu, 2, 0); }
static void test_gelu(void **state)
{
    unary_case("gelu", f_gelu, 0, 0);
    /* wider inputs reach the tails of the tanh */
    gc_user u = {0};
    u.in[0] = tc_param_randn("x", 2, (int[]){3, 7}, &rng, 3.0);
    u.n = 1;
    check("gelu (std 3)", f_gelu, &u);
    free_inputs(&u);
}

/* ------------------------------------------------------------------------------------------------ softmax family */

static void test_softmax(void **state)
{
    gc_user u = {0};
    u.in[0] = param("x", 3, (int[]){rnd(1, 3), rnd(2, 4), rnd(2, 6)});
    u.n = 1;
    check("softmax", f_softmax, &u);
    free_inputs(&u);
}

/* [B, H, T, T] scores, causal mask plus row 0 fully masked: masked entries and the whole of row 0 get an exact
 * zero gradient, nothing is NaN */
static void test_softmax_masked(void **state)
{
    gc_user u = {0};
    int T = rnd(3, 5);
    uint8_t mask[25];
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) mask[t * T + s] = t == 0 || s > t;
    u.mask = mask;
    u.in[0] = param("x", 4, (int[]){2, rnd(1, 2), T, T});
    u.n = 1;
    check("softmax (causal mask, masked row)", f_softmax_masked, &u);
    rg_tensor *x = u.in[0];
    for (int64_t i = 0; i < x->numel; i++)
        if (mask[i % (T * T)]) assert_true(x->grad[i] == 0);
    free_inputs(&u);
}

static void test_log_softmax(void **state)
{
    gc_user u = {0};
    u.in[0] = param("x", 3, (int[]){rnd(1, 3), rnd(2, 4), rnd(2, 6)});
    u.n = 1;
    check("log_softmax", f_log_softmax, &u);
    free_inputs(&u);
    /* large logits: the max-subtraction path */
    u.in[0] = tc_param_randn("x", 2, (int[]){3, 5}, &rng, 1.0);
    for (int i = 0; i < 15; i++) u.in[0]->data[i] += 300;
    u.n = 1;
    check("log_softmax (offset 300)", f_log_softmax, &u);
    free_inputs(&u);
}

static void test_masked_fill(void **state)
{
    gc_user u = {0};
    int T = rnd(2, 4), S = rnd(2, 5);
    uint8_t mask[20];
    for (int i = 0; i < T * S; i++) mask[i] = rg_rng_below(&rng, 3) == 0;
    u.mask = mask;
    u.in[0] = param("x", 3, (int[]){rnd(1, 3), T, S});
    u.n = 1;
    check("masked_fill", f_masked_fill, &u);
    for (int64_t i = 0; i < u.in[0]->numel; i++)
        if (mask[i % (T * S)]) assert_true(u.in[0]->grad[i] == 0);
    free_inputs(&u);
}

static void test_cross_entropy(void **state)
{
    gc_user u = {0};
    int B = rnd(2, 3), T = rnd(2, 4), V = rnd(3, 6);
    int32_t tg[12];
    for (int i = 0; i < B * T; i++) tg[i] = i % 3 == 1 ? -100 : (int32_t)rg_rng_below(&rng, (uint32_t)V);
    u.targets = tg;
    u.ignore = -100;
    u.in[0] = param("logits", 3, (int[]){B, T, V});
    u.n = 1;
    check("cross_entropy (some ignored)", f_cross_entropy, &u);
    for (int i = 0; i < B * T; i++)
        if (tg[i] == -100)
            for (int j = 0; j < V; j++) assert_true(u.in[0]->grad[i * V + j] == 0);
    free_inputs(&u);
    /* none ignored, 2-D logits, another ignore index */
    u.in[0] = param("logits", 2, (int[]){5, V});
    for (int i = 0; i < 5; i++) tg[i] = (int32_t)rg_rng_below(&rng, (uint32_t)V);
    u.ignore = -1;
    u.n = 1;
    check("cross_entropy (none ignored)", f_cross_entropy, &u);
    free_inputs(&u);
}

static void test_cross_entropy_all_ignored(void **state)
{
    gc_user u = {0};
    int32_t tg[6] = {-100, -100, -100, -100, -100, -100};
    u.targets = tg;
    u.ignore = -100;
    u.in[0] = param("logits", 2, (int[]){6, 4});
    u.n = 1;
    double e = check("cross_entropy (all ignored)", f_cross_entropy, &u);
    assert_true(e == 0);
    for (int i = 0; i < 24; i++) assert_true(u.in[0]->grad[i] == 0);
    rg_ctx *c = rg_ctx_new();
    assert_true(f_cross_entropy(c, u.in, &u)->data[0] == 0);
    rg_ctx_free(c);
    free_inputs(&u);
}

/* ------------------------------------------------------------------------------------------------ layernorm */

static void layernorm_case(bool bias)
{
    gc_user u = {0};
    int C = rnd(3, 6);
    u.in[0] = param("x", 3, (int[]){rnd(1, 3), rnd(2, 3), C});
    u.in[1] = param("w", 1, (int[]){C});
    for (int j = 0; j < C; j++) u.in[1]->data[j] += 1; /* weights around 1, as initialized */
    u.n = 2;
    if (bias) u.in[u.n++] = param("b", 1, (int[]){C});
    u.has_bias = bias;
    check(bias ? "layernorm (x, w, b)" : "layernorm (x, w)", f_layernorm, &u);
    free_inputs(&u);
}

static void test_layernorm(void **state) { layernorm_case(true); layernorm_case(false); }

/* ------------------------------------------------------------------------------------------------ embedding */

static void test_embedding(void **state)
{
    gc_user u = {0};
    int V = rnd(5, 6), C = rnd(2, 4);
    static const int32_t idx[] = {1, 3, 1, 0, 3, 3, 2, 1}; /* repeated indices add up; row V-1 >= 4 is never used */
    u.idx = idx;
    u.idx_ndim = 2;
    u.idx_shape[0] = 2;
    u.idx_shape[1] = 4;
    u.in[0] = param("weight", 2, (int[]){V, C});
    u.n = 1;
    check("embedding (repeated indices)", f_embedding, &u);
    for (int j = 0; j < C; j++) assert_true(u.in[0]->grad[(V - 1) * C + j] == 0);
    free_inputs(&u);
}

/* ------------------------------------------------------------------------------------------------ shape */

static void test_reshape(void **state)
{
    gc_user u = {0};
    int A = rnd(2, 3), B = rnd(2, 3), C = rnd(2, 4);
    u.in[0] = param("x", 3, (int[]){A, B, C});
    u.n = 1;
    u.ndim = 2;
    u.shape[0] = A * B;
    u.shape[1] = C;
    check("reshape (via tanh)", f_reshape, &u);
    u.ndim = 4;
    u.shape[0] = C; u.shape[1] = 1; u.shape[2] = A; u.shape[3] = B;
    check("reshape 4-D (via tanh)", f_reshape, &u);
    free_inputs(&u);
}

static void test_permute(void **state)
{
    static const int perms3[][3] = {{2, 0, 1}, {1, 2, 0}, {0, 2, 1}};
    static const int perms4[][4] = {{0, 2, 1, 3}, {3, 1, 0, 2}, {0, 2, 3, 1}};
    for (int k = 0; k < 3; k++) {
        gc_user u = {0};
        memcpy(u.perm, perms3[k], sizeof perms3[k]);
        u.in[0] = param("x", 3, (int[]){rnd(2, 3), rnd(2, 4), rnd(2, 5)});
        u.n = 1;
        char name[64];
        snprintf(name, sizeof name, "permute (%d,%d,%d)", u.perm[0], u.perm[1], u.perm[2]);
        check(name, f_permute, &u);
        free_inputs(&u);
        memcpy(u.perm, perms4[k], sizeof perms4[k]);
        u.in[0] = param("x", 4, (int[]){rnd(1, 2), rnd(2, 3), rnd(2, 3), rnd(2, 4)});
        u.n = 1;
        snprintf(name, sizeof name, "permute (%d,%d,%d,%d)", u.perm[0], u.perm[1], u.perm[2], u.perm[3]);
        check(name, f_permute, &u);
        free_inputs(&u);
    }
}

static void test_transpose(void **state)
{
    static const int pairs[][2] = {{0, 1}, {1, 2}, {0, 2}};
    for (int k = 0; k < 3; k++) {
        gc_user u = {0};
        u.perm[0] = pairs[k][0];
        u.perm[1] = pairs[k][1];
        u.in[0] = param("x", 3, (int[]){rnd(2, 3), rnd(2, 4), rnd(2, 5)});
        u.n = 1;
        char name[64];
        snprintf(name, sizeof name, "transpose (%d,%d)", u.perm[0], u.perm[1]);
        check(name, f_transpose, &u);
        free_inputs(&u);
    }
}

static void test_slice(void **state)
{
    for (int dim = 0; dim < 3; dim++) {
        gc_user u = {0};
        int s[3] = {rnd(2, 4), rnd(3, 5), rnd(3, 5)};
        u.dim = dim;
        u.start = 1;
        u.end = s[dim] - (dim == 0 ? 0 : 1);
        u.in[0] = param("x", 3, s);
        u.n = 1;
        char name[64];
        snprintf(name, sizeof name, "slice dim %d [%d:%d] of %d", dim, u.start, u.end, s[dim]);
        check(name, f_slice, &u);
        free_inputs(&u);
    }
}

static void test_concat(void **state)
{
    for (int dim = 0; dim < 3; dim++) {
        gc_user u = {0};
        int s[3] = {rnd(2, 3), rnd(2, 3), rnd(2, 3)};
        for (int k = 0; k < 3; k++) {
            int sk[3] = {s[0], s[1], s[2]};
            sk[dim] = k + 1;
            char nm[16];
            snprintf(nm, sizeof nm, "x%d", k);
            u.in[k] = param(nm, 3, sk);
        }
        u.n = 3;
        u.dim = dim;
        char name[64];
        snprintf(name, sizeof name, "concat of 3 along dim %d", dim);
        check(name, f_concat, &u);
        free_inputs(&u);
    }
}

/* ------------------------------------------------------------------------------------------------ reductions */

static void test_sum_mean(void **state)
{
    gc_user u = {0};
    u.in[0] = param("x", 3, (int[]){rnd(1, 3), rnd(2, 4), rnd(2, 4)});
    u.n = 1;
    check("sum (squared)", f_sum, &u);
    check("mean (squared)", f_mean, &u);
    free_inputs(&u);
}

static void test_sum_mean_dim(void **state)
{
    gc_user u = {0};
    u.in[0] = param("x", 4, (int[]){rnd(2, 3), rnd(2, 3), rnd(2, 3), rnd(2, 4)});
    u.n = 1;
    for (int d = 0; d < 4; d++) {
        char name[64];
        u.dim = d;
        snprintf(name, sizeof name, "sum_dim %d of 4-D", d);
        check(name, f_sum_dim, &u);
        snprintf(name, sizeof name, "mean_dim %d of 4-D", d);
        check(name, f_mean_dim, &u);
    }
    free_inputs(&u);
    u.in[0] = param("x", 1, (int[]){5});
    u.n = 1;
    u.dim = 0;
    check("sum_dim of 1-D (scalar)", f_sum_dim, &u);
    check("mean_dim of 1-D (scalar)", f_mean_dim, &u);
    free_inputs(&u);
}

/* ------------------------------------------------------------------------------------------------ main */

static int group_setup(void **state)
{
    rg_rng_seed(&rng, 20240611, 3);
    return 0;
}

static int group_teardown(void **state)
{
    print_message("\n%-40s %s\n", "case", "worst relative error");
    for (int i = 0; i < n_results; i++) print_message("%-40s %.3e\n", results[i].name, results[i].err);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_2d),
        cmocka_unit_test(test_matmul_3d),
        cmocka_unit_test(test_matmul_4d),
        cmocka_unit_test(test_matmul_3d_shared),
        cmocka_unit_test(test_matmul_4d_shared),
        cmocka_unit_test(test_linear_bias),
        cmocka_unit_test(test_linear_no_bias),
        cmocka_unit_test(test_linear_gelu),
        cmocka_unit_test(test_linear_residual),
        cmocka_unit_test(test_fused_chain),
        cmocka_unit_test(test_add),
        cmocka_unit_test(test_sub),
        cmocka_unit_test(test_mul),
        cmocka_unit_test(test_scale),
        cmocka_unit_test(test_exp),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_tanh),
        cmocka_unit_test(test_relu),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_softmax_masked),
        cmocka_unit_test(test_log_softmax),
        cmocka_unit_test(test_masked_fill),
        cmocka_unit_test(test_cross_entropy),
        cmocka_unit_test(test_cross_entropy_all_ignored),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_reshape),
        cmocka_unit_test(test_permute),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_sum_mean),
        cmocka_unit_test(test_sum_mean_dim),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
