/* test_norm_bits.c (float32): LayerNorm's backward (src/tensor/ops_norm.c) equals, bit for bit, the plain scalar
 * loops it was written as before its row sums became a GCC vector of 8 doubles (grad_sums): dx, dw and db of
 * rg_layernorm for row widths with and without a tail past the 8 lanes (C = 64, 256, 13, 7, 8). The forward's mean
 * and 1 / std are recomputed here with the forward's own order (8 partial sums in double), so every input of the
 * backward formula is the library's. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8

static double lane_total(const double *a)
{
    double s = 0;
    for (int k = 0; k < LANES; k++) s += a[k];
    return s;
}

/* The forward's mean and rstd of one row (ops_norm.c layernorm_rows: two passes, 8 partial sums in double). */
static void row_stats(const float *in, int C, double eps, float *mu, float *rs)
{
    double acc[LANES] = {0}, acc2[LANES] = {0};
    int j = 0;
    for (; j + LANES <= C; j += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += in[j + k];
    for (; j < C; j++) acc[0] += in[j];
    double m = lane_total(acc) / C;
    for (j = 0; j + LANES <= C; j += LANES)
        for (int k = 0; k < LANES; k++) {
            double d = in[j + k] - m;
            acc2[k] += d * d;
        }
    for (; j < C; j++) acc2[0] += (in[j] - m) * (in[j] - m);
    double v = lane_total(acc2) / C;
    *rs = (float)(1.0 / sqrt(v + eps));
    *mu = (float)m;
}

/* The backward as plain scalar loops (the code of before), accumulating into dx, dw, db. */
static void backward_plain(float *dx, float *dw, float *db, const float *g, const float *x, const float *w,
                           int rows, int C, double eps)
{
    for (int r = 0; r < rows; r++) {
        const float *in = x + (size_t)r * C, *gr = g + (size_t)r * C;
        float mu, s;
        row_stats(in, C, eps, &mu, &s);
        for (int j = 0; j < C; j++) dw[j] += gr[j] * (in[j] - mu) * s;
        for (int j = 0; j < C; j++) db[j] += gr[j];
        double a1[LANES] = {0}, a2[LANES] = {0};
        int j = 0;
        for (; j + LANES <= C; j += LANES)
            for (int k = 0; k < LANES; k++) {
                double gw = (double)gr[j + k] * w[j + k];
                a1[k] += gw;
                a2[k] += gw * ((in[j + k] - mu) * s);
            }
        for (; j < C; j++) {
            double gw = (double)gr[j] * w[j];
            a1[0] += gw;
            a2[0] += gw * ((in[j] - mu) * s);
        }
        float mean_gw = (float)(lane_total(a1) / C), mean_gwx = (float)(lane_total(a2) / C);
        float *d = dx + (size_t)r * C;
        for (j = 0; j < C; j++) d[j] += s * (gr[j] * w[j] - mean_gw - (in[j] - mu) * s * mean_gwx);
    }
}

static void test_backward_bits(void **state)
{
    (void)state;
    static const int WIDTHS[] = {64, 256, 13, 7, 8};
    const int rows = 5;
    const double eps = 1e-5;
    for (size_t t = 0; t < sizeof WIDTHS / sizeof *WIDTHS; t++) {
        const int C = WIDTHS[t];
        rg_rng rng;
        rg_rng_seed(&rng, 42, (uint64_t)C);
        rg_ctx *c = rg_ctx_new();
        rg_tensor *x = tc_param_randn("x", 2, (int[]){rows, C}, &rng, 3.0);
        rg_tensor *w = tc_param_randn("w", 1, (int[]){C}, &rng, 1.0);
        rg_tensor *b = tc_param_randn("b", 1, (int[]){C}, &rng, 1.0);
        rg_real *u = tc_random_weights((int64_t)rows * C, &rng);
        rg_tensor *loss = tc_weighted_sum(c, rg_layernorm(c, x, w, b, eps), u); /* upstream gradient = u */
        rg_backward(c, loss, NULL);
        float *dx = calloc((size_t)rows * C, sizeof *dx), *dw = calloc((size_t)C, sizeof *dw),
              *db = calloc((size_t)C, sizeof *db);
        assert_non_null(dx), assert_non_null(dw), assert_non_null(db);
        backward_plain(dx, dw, db, u, x->data, w->data, rows, C, eps);
        if (memcmp(dx, x->grad, (size_t)rows * C * sizeof *dx)) fail_msg("C = %d: dx differs from the plain loops", C);
        if (memcmp(dw, w->grad, (size_t)C * sizeof *dw)) fail_msg("C = %d: dw differs from the plain loops", C);
        if (memcmp(db, b->grad, (size_t)C * sizeof *db)) fail_msg("C = %d: db differs from the plain loops", C);
        free(dx), free(dw), free(db), free(u);
        rg_param_free(x), rg_param_free(w), rg_param_free(b);
        rg_ctx_free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backward_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
