/* test_tensor.c: the forward kernels of src/tensor (float32 build) against independently computed values, the RNG
 * and the arena.
 *
 * Expected values were computed by hand or with a NumPy one-off (/usr/bin/python3, numpy 1.24, float64); each
 * array says how. They are never copied from this library's output. */
#include "common.h"
#include "tensor/fastmath.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A tensor on c holding the doubles v (rounded to rg_real). */
static rg_tensor *T(rg_ctx *c, int ndim, const int *shape, const double *v)
{
    rg_tensor *t = rg_tensor_new(c, ndim, shape);
    for (int64_t i = 0; i < t->numel; i++) t->data[i] = (rg_real)v[i];
    return t;
}

static void assert_shape(const rg_tensor *t, int ndim, const int *shape)
{
    char s[64];
    if (t->ndim != ndim) fail_msg("shape %s: ndim %d, want %d", rg_shape_str(t, s, 64), t->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i])
            fail_msg("shape %s: dim %d is %d, want %d", rg_shape_str(t, s, 64), i, t->shape[i], shape[i]);
}

static int setup_ctx(void **state) { *state = rg_ctx_new(); return 0; }
static int teardown_ctx(void **state) { rg_ctx_free(*state); return 0; }

/* ------------------------------------------------------------------------------------------------ matmul */

/* A = [[1,2,3],[4,5,6]], B = [[1,0,-1,2],[0,1,2,-1],[3,-2,1,0]]; A B by hand:
 * row 0 = [1+0+9, 0+2-6, -1+4+3, 2-2+0], row 1 = [4+0+18, 0+5-12, -4+10+6, 8-5+0]. */
static const double MM_A[] = {1, 2, 3, 4, 5, 6};
static const double MM_AT[] = {1, 4, 2, 5, 3, 6}; /* A^T stored [3, 2] */
static const double MM_B[] = {1, 0, -1, 2, 0, 1, 2, -1, 3, -2, 1, 0};
static const double MM_BT[] = {1, 0, 3, 0, 1, -2, -1, 2, 1, 2, -1, 0}; /* B^T stored [4, 3] */
static const double MM_AB[] = {10, -4, 6, 0, 22, -7, 12, 3};

static void test_matmul_2d(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *a = T(c, 2, (int[]){2, 3}, MM_A), *b = T(c, 2, (int[]){3, 4}, MM_B);
    rg_tensor *y = rg_matmul(c, a, b, false, false);
    assert_shape(y, 2, (int[]){2, 4});
    tc_assert_close("A B", y->data, MM_AB, 8, 1e-5, 0);
}

static void test_matmul_transposed(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *a = T(c, 2, (int[]){2, 3}, MM_A), *at = T(c, 2, (int[]){3, 2}, MM_AT);
    rg_tensor *b = T(c, 2, (int[]){3, 4}, MM_B), *bt = T(c, 2, (int[]){4, 3}, MM_BT);
    rg_tensor *y = rg_matmul(c, at, b, true, false);
    assert_shape(y, 2, (int[]){2, 4});
    tc_assert_close("A^T^T B", y->data, MM_AB, 8, 1e-5, 0);
    y = rg_matmul(c, a, bt, false, true);
    assert_shape(y, 2, (int[]){2, 4});
    tc_assert_close("A B^T^T", y->data, MM_AB, 8, 1e-5, 0);
    y = rg_matmul(c, at, bt, true, true);
    assert_shape(y, 2, (int[]){2, 4});
    tc_assert_close("A^T^T B^T^T", y->data, MM_AB, 8, 1e-5, 0);
}

/* a = arange(12)*0.5 - 2 as [2,2,3], b = arange(12)*0.25 - 1 as [2,3,2]; numpy: (a @ b).ravel(). */
static void test_matmul_batched(void **state)
{
    rg_ctx *c = *state;
    double av[12], bv[12];
    for (int i = 0; i < 12; i++) { av[i] = i * 0.5 - 2; bv[i] = i * 0.25 - 1; }
    rg_tensor *a = T(c, 3, (int[]){2, 2, 3}, av), *b = T(c, 3, (int[]){2, 3, 2}, bv);
    rg_tensor *y = rg_matmul(c, a, b, false, false);
    assert_shape(y, 3, (int[]){2, 2, 2});
    static const double want[] = {2.75, 1.625, 0.5, 0.5, 5, 6.125, 9.5, 11.75};
    tc_assert_close("batched", y->data, want, 8, 1e-5, 0);
    /* the same as a 4-D product [1, 2, 2, 3] x [1, 2, 3, 2] */
    rg_tensor *a4 = T(c, 4, (int[]){1, 2, 2, 3}, av), *b4 = T(c, 4, (int[]){1, 2, 3, 2}, bv);
    y = rg_matmul(c, a4, b4, false, false);
    assert_shape(y, 4, (int[]){1, 2, 2, 2});
    tc_assert_close("batched 4-D", y->data, want, 8, 1e-5, 0);
}

/* a as above [2,2,3] times the shared B [3,4]; numpy: (a @ B).ravel(). Also with a stored transposed [2,3,2]. */
static void test_matmul_shared_b(void **state)
{
    rg_ctx *c = *state;
    double av[12], at[12];
    for (int i = 0; i < 12; i++) av[i] = i * 0.5 - 2;
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 3; k++) at[n * 6 + k * 2 + i] = av[n * 6 + i * 3 + k];
    static const double want[] = {-5, 0.5, -2, -2.5, 1, -1, 1, -1, 7, -2.5, 4, 0.5, 13, -4, 7, 2};
    rg_tensor *b = T(c, 2, (int[]){3, 4}, MM_B), *bt = T(c, 2, (int[]){4, 3}, MM_BT);
    rg_tensor *y = rg_matmul(c, T(c, 3, (int[]){2, 2, 3}, av), b, false, false);
    assert_shape(y, 3, (int[]){2, 2, 4});
    tc_assert_close("3-D x 2-D", y->data, want, 16, 1e-5, 0);
    y = rg_matmul(c, T(c, 3, (int[]){2, 3, 2}, at), b, true, false);
    assert_shape(y, 3, (int[]){2, 2, 4});
    tc_assert_close("3-D^T x 2-D", y->data, want, 16, 1e-5, 0);
    y = rg_matmul(c, T(c, 3, (int[]){2, 2, 3}, av), bt, false, true);
    tc_assert_close("3-D x 2-D^T", y->data, want, 16, 1e-5, 0);
}

/* x = [[1,-2,0.5],[0,3,-1]], W = [[1,0,2],[-1,1,0],[0.5,0.5,0.5],[2,-3,1]], b = [0.1,-0.2,0.3,-0.4];
 * numpy: x @ W.T and x @ W.T + b. */
static void test_linear(void **state)
{
    rg_ctx *c = *state;
    static const double xv[] = {1, -2, 0.5, 0, 3, -1}, wv[] = {1, 0, 2, -1, 1, 0, 0.5, 0.5, 0.5, 2, -3, 1},
                        bv[] = {0.1, -0.2, 0.3, -0.4};
    static const double want_nb[] = {2, -3, -0.25, 8.5, -2, 3, 1, -10};
    static const double want_b[] = {2.1, -3.2, 0.05, 8.1, -1.9, 2.8, 1.3, -10.4};
    rg_tensor *x = T(c, 2, (int[]){2, 3}, xv), *w = T(c, 2, (int[]){4, 3}, wv), *b = T(c, 1, (int[]){4}, bv);
    rg_tensor *y = rg_linear(c, x, w, NULL);
    assert_shape(y, 2, (int[]){2, 4});
    tc_assert_close("linear no bias", y->data, want_nb, 8, 1e-5, 0);
    y = rg_linear(c, x, w, b);
    tc_assert_close("linear bias", y->data, want_b, 8, 1e-5, 0);
    /* leading dims are rows: x as [2, 1, 3] */
    y = rg_linear(c, T(c, 3, (int[]){2, 1, 3}, xv), w, b);
    assert_shape(y, 3, (int[]){2, 1, 4});
    tc_assert_close("linear 3-D", y->data, want_b, 8, 1e-5, 0);
}

/* ------------------------------------------------------------------------------------------------ elementwise */

static void test_broadcast(void **state)
{
    rg_ctx *c = *state;
    double a23[6], a234[24], a214[8];
    for (int i = 0; i < 6; i++) a23[i] = i;
    for (int i = 0; i < 24; i++) a234[i] = i - 5;
    for (int i = 0; i < 8; i++) a214[i] = i;
    /* arange(6).reshape(2,3) + [10,20,30] */
    static const double w1[] = {10, 21, 32, 13, 24, 35};
    rg_tensor *y = rg_add(c, T(c, 2, (int[]){2, 3}, a23), T(c, 1, (int[]){3}, (double[]){10, 20, 30}));
    assert_shape(y, 2, (int[]){2, 3});
    tc_assert_close("[2,3]+[3]", y->data, w1, 6, 0, 0);
    /* the broadcast operand first: [3] + [2,3] */
    y = rg_add(c, T(c, 1, (int[]){3}, (double[]){10, 20, 30}), T(c, 2, (int[]){2, 3}, a23));
    tc_assert_close("[3]+[2,3]", y->data, w1, 6, 0, 0);
    /* arange(6).reshape(2,3) - [[1],[2]] */
    static const double w2[] = {-1, 0, 1, 1, 2, 3};
    y = rg_sub(c, T(c, 2, (int[]){2, 3}, a23), T(c, 2, (int[]){2, 1}, (double[]){1, 2}));
    tc_assert_close("[2,3]-[2,1]", y->data, w2, 6, 0, 0);
    /* (arange(24).reshape(2,3,4) - 5) * [[2],[-1],[0.5]] */
    static const double w3[] = {-10, -8, -6, -4, 1, 0, -1, -2, 1.5, 2, 2.5, 3,
                                14, 16, 18, 20, -11, -12, -13, -14, 7.5, 8, 8.5, 9};
    y = rg_mul(c, T(c, 3, (int[]){2, 3, 4}, a234), T(c, 2, (int[]){3, 1}, (double[]){2, -1, 0.5}));
    assert_shape(y, 3, (int[]){2, 3, 4});
    tc_assert_close("[2,3,4]*[3,1]", y->data, w3, 24, 0, 0);
    /* arange(8).reshape(2,1,4) + [[100],[200],[300]] -> [2,3,4] */
    static const double w4[] = {100, 101, 102, 103, 200, 201, 202, 203, 300, 301, 302, 303,
                                104, 105, 106, 107, 204, 205, 206, 207, 304, 305, 306, 307};
    y = rg_add(c, T(c, 3, (int[]){2, 1, 4}, a214), T(c, 2, (int[]){3, 1}, (double[]){100, 200, 300}));
    assert_shape(y, 3, (int[]){2, 3, 4});
    tc_assert_close("[2,1,4]+[3,1]", y->data, w4, 24, 0, 0);
    /* same shapes: elementwise */
    y = rg_mul(c, T(c, 2, (int[]){2, 3}, a23), T(c, 2, (int[]){2, 3}, a23));
    tc_assert_close("[2,3]*[2,3]", y->data, (double[]){0, 1, 4, 9, 16, 25}, 6, 0, 0);
}

/* Points -3, -1, -0.5, 0, 0.5, 1, 2.5; numpy exp/tanh; GELU from
 * torch.nn.functional.gelu(x, approximate="tanh") in float64 (agrees with 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))))
 * to all printed digits). */
static void test_unary(void **state)
{
    rg_ctx *c = *state;
    static const double pts[] = {-3, -1, -0.5, 0, 0.5, 1, 2.5};
    static const double w_exp[] = {0.049787068, 0.367879441, 0.60653066, 1, 1.648721271, 2.718281828, 12.182493961};
    static const double w_tanh[] = {-0.995054754, -0.761594156, -0.462117157, 0, 0.462117157, 0.761594156,
                                    0.986614298};
    static const double w_relu[] = {0, 0, 0, 0, 0.5, 1, 2.5};
    static const double w_gelu[] = {-0.003637392, -0.158808009, -0.15428599, 0, 0.34571401, 0.841191991,
                                    2.484915734};
    static const double w_scale[] = {4.5, 1.5, 0.75, 0, -0.75, -1.5, -3.75};
    rg_tensor *x = T(c, 1, (int[]){7}, pts);
    tc_assert_close("exp", rg_exp(c, x)->data, w_exp, 7, 1e-6, 1e-6);
    tc_assert_close("tanh", rg_tanh(c, x)->data, w_tanh, 7, 1e-6, 1e-6);
    tc_assert_close("relu", rg_relu(c, x)->data, w_relu, 7, 0, 0);
    tc_assert_close("gelu", rg_gelu(c, x)->data, w_gelu, 7, 1e-6, 1e-6);
    tc_assert_close("scale", rg_scale(c, x, -1.5)->data, w_scale, 7, 0, 0);
    /* numpy: log([0.5, 1, 2, 10]); log(0) = -inf and log(-1) = NaN as torch.log */
    rg_tensor *l = rg_log(c, T(c, 1, (int[]){6}, (double[]){0.5, 1, 2, 10, 0, -1}));
    tc_assert_close("log", l->data, (double[]){-0.693147181, 0, 0.693147181, 2.302585093}, 4, 1e-6, 1e-6);
    assert_true(isinf(l->data[4]) && l->data[4] < 0);
    assert_true(isnan(l->data[5]));
}

/* ------------------------------------------------------------------------------------------------ softmax */

static void test_softmax_large_logits(void **state)
{
    rg_ctx *c = *state;
    /* numpy: e = exp(z - z.max()); e / e.sum() for z = [400, 401, 402] (exp(400) alone overflows float32) */
    static const double want[] = {0.090030573, 0.244728471, 0.665240956};
    rg_tensor *y = rg_softmax(c, T(c, 2, (int[]){1, 3}, (double[]){400, 401, 402}));
    tc_assert_close("softmax [400,401,402]", y->data, want, 3, 1e-6, 1e-5);
    y = rg_softmax(c, T(c, 1, (int[]){3}, (double[]){-400, -401, -402}));
    /* the reverse order of -z: [0.665240956, 0.244728471, 0.090030573] */
    tc_assert_close("softmax [-400,-401,-402]", y->data, (double[]){0.665240956, 0.244728471, 0.090030573}, 3, 1e-6,
                    1e-5);
}

static void test_softmax_fully_masked_row(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *x = rg_tensor_new(c, 2, (int[]){2, 3});
    x->data[0] = x->data[1] = x->data[2] = -INFINITY;
    x->data[3] = 0; x->data[4] = 0; x->data[5] = -INFINITY;
    rg_tensor *y = rg_softmax(c, x);
    /* row 0 fully masked: zeros; row 1: two equal logits and one masked entry: [0.5, 0.5, 0] by hand */
    tc_assert_close("masked softmax", y->data, (double[]){0, 0, 0, 0.5, 0.5, 0}, 6, 0, 0);
    for (int i = 0; i < 6; i++) assert_false(isnan(y->data[i]));
}

/* scores [2, 3, 3] (batch 1 = batch 0 + 1.5), causal mask (s > t masked): softmax of the visible prefix of each
 * row, numpy e = exp(r - r.max()); e / e.sum() with r = x[t, :t+1]; the +1.5 shift does not change it. */
static void test_causal_mask_softmax(void **state)
{
    rg_ctx *c = *state;
    double xv[18];
    static const double base[9] = {0.5, 1.0, -1.0, 2.0, 0.0, 1.0, -1.0, 3.0, 0.25};
    for (int i = 0; i < 9; i++) { xv[i] = base[i]; xv[9 + i] = base[i] + 1.5; }
    uint8_t mask[9];
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 3; s++) mask[t * 3 + s] = s > t;
    rg_tensor *m = rg_masked_fill_neg_inf(c, T(c, 3, (int[]){2, 3, 3}, xv), mask);
    assert_shape(m, 3, (int[]){2, 3, 3});
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < 9; k++) {
            if (mask[k]) assert_true(isinf(m->data[b * 9 + k]) && m->data[b * 9 + k] < 0);
            else assert_true(m->data[b * 9 + k] == (rg_real)xv[b * 9 + k]);
        }
    rg_tensor *y = rg_softmax(c, m);
    static const double want[9] = {1, 0, 0, 0.880797078, 0.119202922, 0, 0.016923769, 0.924006474, 0.059069758};
    tc_assert_close("causal softmax b0", y->data, want, 9, 1e-6, 1e-5);
    tc_assert_close("causal softmax b1", y->data + 9, want, 9, 1e-6, 1e-5);
}

static void test_log_softmax(void **state)
{
    rg_ctx *c = *state;
    /* numpy: l - log(exp(l).sum()) for l = [1, 2, 3]; [1000, 0, -1000] - 1000 for the second row */
    rg_tensor *y = rg_log_softmax(c, T(c, 2, (int[]){2, 3}, (double[]){1, 2, 3, 1000, 0, -1000}));
    tc_assert_close("log_softmax", y->data, (double[]){-2.407605964, -1.407605964, -0.407605964, 0, -1000, -2000}, 6,
                    1e-5, 1e-6);
    /* a fully -inf row gives -inf */
    rg_tensor *z = rg_tensor_new(c, 1, (int[]){2});
    z->data[0] = z->data[1] = -INFINITY;
    y = rg_log_softmax(c, z);
    assert_true(isinf(y->data[0]) && y->data[0] < 0 && isinf(y->data[1]) && y->data[1] < 0);
}

/* ------------------------------------------------------------------------------------------------ layernorm */

static void test_layernorm(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *w = T(c, 1, (int[]){4}, (double[]){1, 1, 1, 1}), *b = T(c, 1, (int[]){4}, (double[]){0, 0, 0, 0});
    /* row 40000..40003: mean 40001.5, biased var 1.25; numpy (r - m) / sqrt(1.25 + 1e-5) */
    rg_tensor *y = rg_layernorm(c, T(c, 2, (int[]){1, 4}, (double[]){40000, 40001, 40002, 40003}), w, b, 1e-5);
    tc_assert_close("layernorm offset", y->data, (double[]){-1.34163542, -0.447211807, 0.447211807, 1.34163542}, 4,
                    1e-4, 0);
    /* row [1,-2,0.5,3], w [2,0.5,-1,1], b [0.1,0.2,0.3,0.4]: numpy (r-m)/sqrt(v+1e-5)*w+b */
    rg_tensor *w2 = T(c, 1, (int[]){4}, (double[]){2, 0.5, -1, 1});
    rg_tensor *b2 = T(c, 1, (int[]){4}, (double[]){0.1, 0.2, 0.3, 0.4});
    y = rg_layernorm(c, T(c, 2, (int[]){1, 4}, (double[]){1, -2, 0.5, 3}), w2, b2, 1e-5);
    static const double want[] = {0.52111678, -0.536954365, 0.37018613, 1.73353647};
    tc_assert_close("layernorm w b", y->data, want, 4, 1e-5, 1e-5);
    /* without bias: want - b */
    y = rg_layernorm(c, T(c, 1, (int[]){4}, (double[]){1, -2, 0.5, 3}), w2, NULL, 1e-5);
    tc_assert_close("layernorm no bias", y->data, (double[]){0.42111678, -0.736954365, 0.07018613, 1.33353647}, 4,
                    1e-5, 1e-5);
}

/* ------------------------------------------------------------------------------------------------ embedding */

static void test_embedding(void **state)
{
    rg_ctx *c = *state;
    double wv[8];
    for (int i = 0; i < 8; i++) wv[i] = i * 10 + 1; /* rows [1,11], [21,31], [41,51], [61,71] */
    rg_tensor *w = T(c, 2, (int[]){4, 2}, wv);
    static const int32_t idx[] = {3, 0, 3, 2, 1, 1};
    rg_tensor *y = rg_embedding(c, w, idx, 2, (int[]){2, 3});
    assert_shape(y, 3, (int[]){2, 3, 2});
    tc_assert_close("embedding", y->data, (double[]){61, 71, 1, 11, 61, 71, 41, 51, 21, 31, 21, 31}, 12, 0, 0);
}

/* ------------------------------------------------------------------------------------------------ shape */

static void test_reshape_is_view(void **state)
{
    rg_ctx *c = *state;
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = i;
    rg_tensor *x = T(c, 3, (int[]){2, 3, 4}, v);
    rg_tensor *y = rg_reshape(c, x, 2, (int[]){6, 4});
    assert_shape(y, 2, (int[]){6, 4});
    assert_ptr_equal(y->data, x->data);
    assert_int_equal(y->stride[0], 4);
    x->data[5] = 100;
    assert_true(y->data[5] == 100);
}

/* x = arange(24).reshape(2,3,4); numpy x.transpose(2,0,1).ravel() and x.transpose(2,1,0).ravel() */
static void test_permute_transpose(void **state)
{
    rg_ctx *c = *state;
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = i;
    rg_tensor *x = T(c, 3, (int[]){2, 3, 4}, v);
    rg_tensor *p = rg_permute(c, x, (int[]){2, 0, 1});
    assert_shape(p, 3, (int[]){4, 2, 3});
    static const double w_perm[] = {0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21,
                                    2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23};
    tc_assert_close("permute (2,0,1)", p->data, w_perm, 24, 0, 0);
    rg_tensor *t = rg_transpose(c, x, 0, 2);
    assert_shape(t, 3, (int[]){4, 3, 2});
    static const double w_tr[] = {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23};
    tc_assert_close("transpose(0,2)", t->data, w_tr, 24, 0, 0);
    /* a 4-D permute [1,2,3,4] -> perm (0,3,1,2): by hand element [0,l,j,k] = x[j,k,l] = 12j + 4k + l */
    rg_tensor *x4 = T(c, 4, (int[]){1, 2, 3, 4}, v);
    rg_tensor *p4 = rg_permute(c, x4, (int[]){0, 3, 1, 2});
    assert_shape(p4, 4, (int[]){1, 4, 2, 3});
    tc_assert_close("permute 4-D", p4->data, w_perm, 24, 0, 0);
}

static void test_slice_concat(void **state)
{
    rg_ctx *c = *state;
    double v[24], v2[8];
    for (int i = 0; i < 24; i++) v[i] = i;
    for (int i = 0; i < 8; i++) v2[i] = 100 + i;
    rg_tensor *x = T(c, 3, (int[]){2, 3, 4}, v);
    /* numpy x[:, 1:3, :].ravel(), x[:, :, 1:2].ravel(), x[1:2].ravel() */
    rg_tensor *s = rg_slice(c, x, 1, 1, 3);
    assert_shape(s, 3, (int[]){2, 2, 4});
    tc_assert_close("slice dim1", s->data, (double[]){4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}, 16,
                    0, 0);
    s = rg_slice(c, x, 2, 1, 2);
    assert_shape(s, 3, (int[]){2, 3, 1});
    tc_assert_close("slice dim2", s->data, (double[]){1, 5, 9, 13, 17, 21}, 6, 0, 0);
    s = rg_slice(c, x, 0, 1, 2);
    assert_shape(s, 3, (int[]){1, 3, 4});
    tc_assert_close("slice dim0", s->data, v + 12, 12, 0, 0); /* x[1:2] = 12..23 */
    /* numpy np.concatenate([c1, x[:, :2, :]], 1) with c1 = arange(8).reshape(2,1,4) + 100 */
    rg_tensor *c1 = T(c, 3, (int[]){2, 1, 4}, v2), *x2 = rg_slice(c, x, 1, 0, 2);
    rg_tensor *cat = rg_concat(c, (rg_tensor *[]){c1, x2}, 2, 1);
    assert_shape(cat, 3, (int[]){2, 3, 4});
    static const double w_cat[] = {100, 101, 102, 103, 0, 1, 2, 3, 4, 5, 6, 7,
                                   104, 105, 106, 107, 12, 13, 14, 15, 16, 17, 18, 19};
    tc_assert_close("concat dim1", cat->data, w_cat, 24, 0, 0);
    /* along dim 0 and the last dim, three pieces */
    rg_tensor *a = T(c, 2, (int[]){1, 2}, (double[]){1, 2}), *b = T(c, 2, (int[]){2, 2}, (double[]){3, 4, 5, 6});
    cat = rg_concat(c, (rg_tensor *[]){a, b, a}, 3, 0);
    assert_shape(cat, 2, (int[]){4, 2});
    tc_assert_close("concat dim0", cat->data, (double[]){1, 2, 3, 4, 5, 6, 1, 2}, 8, 0, 0);
    rg_tensor *d = T(c, 2, (int[]){2, 1}, (double[]){7, 8});
    cat = rg_concat(c, (rg_tensor *[]){b, d}, 2, 1);
    assert_shape(cat, 2, (int[]){2, 3});
    tc_assert_close("concat dim1 2-D", cat->data, (double[]){3, 4, 7, 5, 6, 8}, 6, 0, 0);
}

/* ------------------------------------------------------------------------------------------------ reductions */

/* x = arange(24).reshape(2,3,4): sum 276 = 23*24/2, mean 11.5; numpy x.sum(d), x.mean(d) */
static void test_reductions(void **state)
{
    rg_ctx *c = *state;
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = i;
    rg_tensor *x = T(c, 3, (int[]){2, 3, 4}, v);
    rg_tensor *s = rg_sum(c, x);
    assert_int_equal(s->ndim, 0);
    assert_int_equal(s->numel, 1);
    assert_true(s->data[0] == 276);
    assert_true(rg_mean(c, x)->data[0] == 11.5f);
    static const double s0[] = {12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34};
    static const double m0[] = {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    static const double s1[] = {12, 15, 18, 21, 48, 51, 54, 57}, m1[] = {4, 5, 6, 7, 16, 17, 18, 19};
    static const double s2[] = {6, 22, 38, 54, 70, 86}, m2[] = {1.5, 5.5, 9.5, 13.5, 17.5, 21.5};
    rg_tensor *r = rg_sum_dim(c, x, 0);
    assert_shape(r, 2, (int[]){3, 4});
    tc_assert_close("sum_dim 0", r->data, s0, 12, 0, 0);
    tc_assert_close("mean_dim 0", rg_mean_dim(c, x, 0)->data, m0, 12, 0, 0);
    r = rg_sum_dim(c, x, 1);
    assert_shape(r, 2, (int[]){2, 4});
    tc_assert_close("sum_dim 1", r->data, s1, 8, 0, 0);
    tc_assert_close("mean_dim 1", rg_mean_dim(c, x, 1)->data, m1, 8, 0, 0);
    r = rg_sum_dim(c, x, 2);
    assert_shape(r, 2, (int[]){2, 3});
    tc_assert_close("sum_dim 2", r->data, s2, 6, 0, 0);
    tc_assert_close("mean_dim 2", rg_mean_dim(c, x, 2)->data, m2, 6, 1e-6, 0);
    /* a 1-D input gives a scalar */
    r = rg_sum_dim(c, T(c, 1, (int[]){3}, (double[]){1, 2, 4}), 0);
    assert_int_equal(r->ndim, 0);
    assert_true(r->data[0] == 7);
}

static void test_argmax(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *x = T(c, 2, (int[]){4, 4},
                     (double[]){1, 3, 3, 2,    /* tie between 1 and 2: 1 */
                                5, 5, 5, 5,    /* all equal: 0 */
                                -1, -2, -0.5, -0.5, /* 2 */
                                0, 0, 0, 7});  /* 3 */
    x->data[8] = NAN; /* NaN never wins: row 2 is [NaN, -2, -0.5, -0.5] -> 2 */
    int32_t out[4];
    rg_argmax(x, out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 2);
    assert_int_equal(out[3], 3);
}

/* ------------------------------------------------------------------------------------------------ cross-entropy */

/* logits L = [[1,2,0.5,-1],[0,0,0,0],[3,-2,1,0.5]], targets [2, -100, 0]:
 * numpy lse = log(exp(L).sum(1)); mean(lse[0]-L[0,2], lse[2]-L[2,0]) = 1.0987176728826038, and the gradient
 * (softmax - onehot)/2 on counted rows, 0 on the ignored row (both also match torch.nn.functional.cross_entropy). */
static void test_cross_entropy(void **state)
{
    rg_ctx *c = *state;
    rg_tensor *p = rg_param_new("logits", 2, (int[]){3, 4});
    static const double L[] = {1, 2, 0.5, -1, 0, 0, 0, 0, 3, -2, 1, 0.5};
    for (int i = 0; i < 12; i++) p->data[i] = (rg_real)L[i];
    rg_tensor *loss = rg_cross_entropy(c, p, (int32_t[]){2, -100, 0}, -100);
    assert_int_equal(loss->ndim, 0);
    tc_assert_close("cross_entropy", loss->data, (double[]){1.0987176728826038}, 1, 1e-6, 1e-6);
    rg_backward(c, loss, NULL);
    static const double g[] = {0.112103909, 0.304730019, -0.432005542, 0.015171614, 0, 0, 0, 0,
                               -0.091556068, 0.002752074, 0.055276875, 0.03352712};
    tc_assert_close("cross_entropy grad", p->grad, g, 12, 1e-6, 1e-5);
    /* a single row, by hand: logits [0, 0], target 1: log 2 */
    rg_tensor *two = T(c, 2, (int[]){1, 2}, (double[]){0, 0});
    tc_assert_close("ce log2", rg_cross_entropy(c, two, (int32_t[]){1}, -100)->data, (double[]){0.6931471805599453},
                    1, 1e-7, 1e-6);
    rg_param_free(p);
}

static void test_cross_entropy_all_ignored(void **state)
{
    rg_ctx *c = *state;
    rg_rng r;
    rg_rng_seed(&r, 5, 0);
    rg_tensor *p = tc_param_randn("logits", 2, (int[]){3, 4}, &r, 1.0);
    rg_tensor *w = tc_param_randn("w", 2, (int[]){4, 4}, &r, 1.0);
    /* directly on a parameter */
    rg_tensor *loss = rg_cross_entropy(c, p, (int32_t[]){-100, -100, -100}, -100);
    assert_true(loss->data[0] == 0);
    rg_backward(c, loss, NULL);
    for (int i = 0; i < 12; i++) assert_true(p->grad[i] == 0);
    /* through a linear layer: the weight gets an exact zero gradient too */
    rg_ctx_reset(c);
    loss = rg_cross_entropy(c, rg_linear(c, p, w, NULL), (int32_t[]){7, 7, 7}, 7);
    assert_true(loss->data[0] == 0);
    rg_backward(c, loss, NULL);
    for (int i = 0; i < 16; i++) assert_true(w->grad[i] == 0);
    for (int i = 0; i < 12; i++) assert_true(p->grad[i] == 0);
    rg_param_free(p);
    rg_param_free(w);
}

/* ------------------------------------------------------------------------------------------------ RNG */

/* The pcg32 reference demo (pcg32-demo.c, seed 42, stream 54) prints 0xa15c02b7 0x7b47f409 0xba1d3330 0x83d2f293
 * 0xbfa4784b 0xcbed606e; a 10-line Python port of pcg32_srandom_r/pcg32_random_r gives the same. */
static void test_rng_reference(void **state)
{
    rg_rng r;
    rg_rng_seed(&r, 42, 54);
    static const uint32_t want[] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    for (int i = 0; i < 6; i++) assert_int_equal(rg_rng_u32(&r), want[i]);
    /* Python port: seed (7, 3): uniform = ((u32 >> 5) * 2^26 + (u32 >> 6)) / 2^53 = 0.8573479186125073 for the
     * first two draws; Box-Muller on the first two uniforms of a fresh (7, 3) stream gives -1.4833790416584294. */
    rg_rng_seed(&r, 7, 3);
    assert_true(fabs(rg_rng_uniform(&r) - 0.8573479186125073) < 1e-15);
    rg_rng_seed(&r, 7, 3);
    assert_true(fabs(rg_rng_normal(&r) - -1.4833790416584294) < 1e-12);
}

static void test_rng_determinism_and_state(void **state)
{
    rg_rng a, b;
    rg_rng_seed(&a, 1234, 1);
    rg_rng_seed(&b, 1234, 1);
    for (int i = 0; i < 1000; i++) assert_int_equal(rg_rng_u32(&a), rg_rng_u32(&b));
    /* another seed and another stream differ */
    rg_rng_seed(&b, 1235, 1);
    rg_rng c2;
    rg_rng_seed(&c2, 1234, 2);
    int same_seed = 0, same_stream = 0;
    rg_rng_seed(&a, 1234, 1);
    for (int i = 0; i < 100; i++) {
        uint32_t v = rg_rng_u32(&a);
        same_seed += v == rg_rng_u32(&b);
        same_stream += v == rg_rng_u32(&c2);
    }
    assert_true(same_seed < 3 && same_stream < 3);
    /* save mid-stream, draw, restore: the identical continuation (the struct is the whole state) */
    rg_rng_seed(&a, 99, 7);
    for (int i = 0; i < 37; i++) rg_rng_normal(&a);
    rg_rng saved = a;
    double first[64];
    for (int i = 0; i < 64; i++) first[i] = i % 3 == 0 ? rg_rng_normal(&a) : i % 3 == 1 ? rg_rng_uniform(&a)
                                                                                          : rg_rng_below(&a, 1000);
    a = saved;
    for (int i = 0; i < 64; i++) {
        double v = i % 3 == 0 ? rg_rng_normal(&a) : i % 3 == 1 ? rg_rng_uniform(&a) : rg_rng_below(&a, 1000);
        assert_true(v == first[i]);
    }
}

static void test_rng_distributions(void **state)
{
    rg_rng r;
    rg_rng_seed(&r, 2024, 0);
    const int n = 100000;
    double su = 0, sn = 0, sn2 = 0;
    for (int i = 0; i < n; i++) {
        double u = rg_rng_uniform(&r);
        assert_true(u >= 0 && u < 1);
        su += u;
    }
    for (int i = 0; i < n; i++) {
        double z = rg_rng_normal(&r);
        assert_true(isfinite(z));
        sn += z;
        sn2 += z * z;
    }
    double mu = sn / n, var = sn2 / n - mu * mu;
    /* 5-sigma bounds: uniform mean sd = sqrt(1/12)/sqrt(n) = 0.00091; normal mean sd = 0.0032, variance sd =
     * sqrt(2/n) = 0.0045 */
    assert_true(fabs(su / n - 0.5) < 0.0046);
    assert_true(fabs(mu) < 0.016);
    assert_true(fabs(var - 1) < 0.023);
    /* below(n): in range, every value hit */
    int hits[7] = {0};
    for (int i = 0; i < 7000; i++) {
        uint32_t v = rg_rng_below(&r, 7);
        assert_true(v < 7);
        hits[v]++;
    }
    for (int i = 0; i < 7; i++) assert_true(hits[i] > 800 && hits[i] < 1200);
    assert_int_equal(rg_rng_below(&r, 1), 0);
}

/* ------------------------------------------------------------------------------------------------ arena */

static void test_arena(void **state)
{
    rg_arena a;
    memset(&a, 0, sizeof a);
    /* alignment of odd sizes */
    static const size_t sizes[] = {1, 3, 64, 65, 1000, 7, 0};
    for (int i = 0; i < 7; i++) {
        void *p = rg_arena_alloc(&a, sizes[i]);
        assert_int_equal((uintptr_t)p % 64, 0);
    }
    unsigned char *z = rg_arena_calloc(&a, 333);
    assert_int_equal((uintptr_t)z % 64, 0);
    for (int i = 0; i < 333; i++) assert_int_equal(z[i], 0);
    rg_arena_reset(&a);
    assert_int_equal(a.n_mallocs, 1);
    /* grow past one block (1 MiB minimum): 40 x 100 kB plus one 3 MB piece; earlier pointers stay valid */
    enum { N = 41 };
    unsigned char *ptrs[N];
    size_t len[N];
    for (int round = 0; round < 3; round++) {
        size_t before = a.n_mallocs;
        for (int i = 0; i < N; i++) {
            len[i] = i == 20 ? 3000000 : 100000 + 13 * i;
            ptrs[i] = rg_arena_alloc(&a, len[i]);
            assert_int_equal((uintptr_t)ptrs[i] % 64, 0);
            memset(ptrs[i], i + 1 + round, len[i]);
        }
        for (int i = 0; i < N; i++) {
            assert_int_equal(ptrs[i][0], (unsigned char)(i + 1 + round));
            assert_int_equal(ptrs[i][len[i] - 1], (unsigned char)(i + 1 + round));
            assert_int_equal(ptrs[i][len[i] / 2], (unsigned char)(i + 1 + round));
        }
        if (round == 0) assert_true(a.n_mallocs > before + 1); /* the first round chained several blocks */
        else assert_int_equal(a.n_mallocs, before);            /* after one reset: no new block */
        size_t before_reset = a.n_mallocs;
        rg_arena_reset(&a);
        /* resetting a chain merges it into one new block (tensor.h); a single block is reused as it is */
        assert_int_equal(a.n_mallocs, before_reset + (round == 0 ? 1 : 0));
    }
    assert_true(a.high_water >= 3000000 + 40 * 100000);
    rg_arena_free(&a);
    assert_null(a.head);
}

/* The vectorizable tanh used by GELU in the float32 build stays within 5e-7 of libm's double tanh everywhere,
 * saturates to +-1, and is odd; GELU on a grid stays within 5e-7 of the exact double formula. */
static void test_tanh_fast(void **state)
{
    double worst = 0;
    for (int i = -240000; i <= 240000; i++) {
        float x = (float)i * 5e-5f; /* [-12, 12] */
        double e = fabs((double)rg_tanh_fast(x) - tanh((double)x));
        if (e > worst) worst = e;
        if (rg_tanh_fast(-x) != -rg_tanh_fast(x)) fail_msg("rg_tanh_fast is not odd at %g", x);
    }
    print_message("rg_tanh_fast: max |error| %.3g on [-12, 12]\n", worst);
    assert_true(worst < 5e-7);
    assert_true(fabs(rg_tanh_fast(1e30f) - 1) < 5e-7 && fabs(rg_tanh_fast(-1e30f) + 1) < 5e-7);
    rg_ctx *c = rg_ctx_new();
    rg_tensor *x = rg_tensor_1d(c, 1001);
    for (int i = 0; i < 1001; i++) x->data[i] = (rg_real)(-10 + 0.02 * i);
    rg_tensor *y = rg_gelu(c, x);
    for (int i = 0; i < 1001; i++) {
        double v = x->data[i], want = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        if (fabs(y->data[i] - want) > 5e-7 * (1 + fabs(v))) fail_msg("gelu(%g) = %.9g, want %.9g", v, y->data[i], want);
    }
    rg_ctx_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_matmul_2d, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_matmul_transposed, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_matmul_batched, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_matmul_shared_b, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_linear, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_broadcast, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_unary, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_softmax_large_logits, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_softmax_fully_masked_row, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_causal_mask_softmax, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_log_softmax, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_layernorm, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_embedding, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_reshape_is_view, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_permute_transpose, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_slice_concat, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_reductions, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_argmax, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_cross_entropy, setup_ctx, teardown_ctx),
        cmocka_unit_test_setup_teardown(test_cross_entropy_all_ignored, setup_ctx, teardown_ctx),
        cmocka_unit_test(test_rng_reference),
        cmocka_unit_test(test_rng_determinism_and_state),
        cmocka_unit_test(test_rng_distributions),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_tanh_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
