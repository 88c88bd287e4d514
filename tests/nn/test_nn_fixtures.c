/* test_nn_fixtures.c (float32): the C modules and model against the PyTorch fixtures (tools/gen_fixtures.py,
 * layout in tests/fixtures/README.md).
 *   - model_none.h5: logits [3, 10, 30] and loss within 1e-5, every parameter gradient within 1e-4 of the largest
 *     magnitude of that parameter's expected gradient.
 *   - attn.h5: one multi-head attention module (rg_nn_linear projections + rg_attention, d 16, 2 heads, B 2, T 5,
 *     S 7) in the groups self_causal, self_bidir, cross; loss = sum(out * wout); out within 1e-5, grad_x, grad_m
 *     and grad_<param> within 1e-4 of their largest magnitude.
 * Each case prints its largest errors. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_FILE "tests/fixtures/model_none.h5"
#define ATTN_FILE "tests/fixtures/attn.h5"

/* max |got - want| over n values. */
static double max_abs_diff(const rg_real *got, const double *want, int64_t n)
{
    double d = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        if (!(e <= d)) d = e;
    }
    return d;
}

static double max_abs(const double *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

/* The largest magnitude of an expected dataset. */
static double dataset_max(const char *file, const char *dataset)
{
    int64_t n;
    double *v = tc_h5_read(file, dataset, &n, NULL, NULL);
    double m = max_abs(v, n);
    free(v);
    return m;
}

/* Compares a gradient with the expected dataset: |diff| <= 1e-4 * max|expected|. A gradient that is zero in exact
 * arithmetic (the key bias: softmax ignores the constant q_i . b_k it adds to every score of row i) holds only
 * rounding noise (expected ~1e-17, float32 ~1e-7 of the other gradients), so when max|expected| < 1e-9 * global
 * (the largest gradient magnitude of the case) it is compared against global instead. Returns the relative error. */
static double check_grad(const char *file, const char *dataset, const rg_real *grad, int64_t numel, double global)
{
    int64_t n;
    double *want = tc_h5_read(file, dataset, &n, NULL, NULL);
    assert_int_equal(n, numel);
    double scale = max_abs(want, n);
    if (scale < 1e-9 * global) scale = global;
    double err = max_abs_diff(grad, want, n) / (scale > 0 ? scale : 1);
    if (!(err <= 1e-4)) fail_msg("%s %s: error %.3g of the largest magnitude %.3g", file, dataset, err, scale);
    free(want);
    return err;
}

static void test_model_none(void **state)
{
    rg_model *m = tc_fx_model(MODEL_FILE, NULL);
    int64_t n;
    int shape[4], ndim;
    int32_t *tokens = tc_h5_read_int(MODEL_FILE, "/input/tokens", &n, shape, &ndim);
    int32_t *targets = tc_h5_read_int(MODEL_FILE, "/input/targets", NULL, NULL, NULL);
    assert_int_equal(ndim, 2);
    int B = shape[0], T = shape[1];
    rg_ctx *c = rg_ctx_new();
    rg_params_zero_grad(&m->params);
    rg_tensor *logits;
    assert_int_equal(rg_model_forward(c, m, tokens, NULL, B, T, NULL, &logits), RG_OK);
    rg_tensor *loss = rg_cross_entropy(c, logits, targets, -100);
    rg_backward(c, loss, NULL);

    int64_t nl;
    double *want_logits = tc_h5_read(MODEL_FILE, "/expected/logits", &nl, NULL, NULL);
    assert_int_equal(nl, logits->numel);
    double *want_loss = tc_h5_read(MODEL_FILE, "/expected/loss", NULL, NULL, NULL);
    double e_logits = max_abs_diff(logits->data, want_logits, nl);
    double e_loss = fabs((double)loss->data[0] - want_loss[0]);
    tc_assert_close("logits", logits->data, want_logits, nl, 1e-5, 0);
    tc_assert_close("loss", loss->data, want_loss, 1, 1e-5, 0);
    double e_grad = 0, global = 0;
    char path[256];
    for (int i = 0; i < m->params.n; i++) {
        snprintf(path, sizeof path, "/expected/grads/%s", m->params.items[i]->name);
        double g = dataset_max(MODEL_FILE, path);
        if (g > global) global = g;
    }
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        snprintf(path, sizeof path, "/expected/grads/%s", p->name);
        double e = check_grad(MODEL_FILE, path, p->grad, p->numel, global);
        if (e > e_grad) e_grad = e;
    }
    print_message("model_none: %d params, max |logits diff| %.3g, |loss diff| %.3g (loss %.6f), worst grad error "
                  "%.3g of the largest magnitude\n", m->params.n, e_logits, e_loss, want_loss[0], e_grad);
    free(want_logits);
    free(want_loss);
    free(tokens);
    free(targets);
    rg_ctx_free(c);
    rg_model_free(m);
}

/* ------------------------------------------------------------------ attn.h5 */

static rg_tensor *load_param(const char *group, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/%s/%s", group, name);
    int64_t n;
    int shape[4], ndim;
    double *v = tc_h5_read(ATTN_FILE, path, &n, shape, &ndim);
    rg_tensor *p = rg_param_new(name, ndim, shape);
    for (int64_t i = 0; i < n; i++) p->data[i] = (rg_real)v[i];
    free(v);
    return p;
}

static void check_attn_group(const char *group, bool cross)
{
    const int H = (int)tc_h5_attr(ATTN_FILE, "/", "n_heads");
    const int d = (int)tc_h5_attr(ATTN_FILE, "/", "d_model");
    char path[128];
    snprintf(path, sizeof path, "/%s", group);
    bool causal = tc_h5_attr(ATTN_FILE, path, "causal") != 0;
    const char *names[8] = {"q_proj.weight", "q_proj.bias", "k_proj.weight", "k_proj.bias",
                            "v_proj.weight", "v_proj.bias", "o_proj.weight", "o_proj.bias"};
    rg_tensor *p[8];
    for (int i = 0; i < 8; i++) p[i] = load_param(group, names[i]);
    rg_nn_linear qp = {p[0], p[1]}, kp = {p[2], p[3]}, vp = {p[4], p[5]}, op = {p[6], p[7]};
    rg_tensor *x = load_param(group, "x"), *mem = cross ? load_param(group, "m") : x;
    int64_t nw;
    double *wout = tc_h5_read(ATTN_FILE, (snprintf(path, sizeof path, "/%s/wout", group), path), &nw, NULL, NULL);

    rg_ctx *c = rg_ctx_new();
    rg_tensor *q = rg_nn_linear_forward(c, &qp, x);
    rg_tensor *k = rg_nn_linear_forward(c, &kp, mem), *v = rg_nn_linear_forward(c, &vp, mem);
    rg_tensor *out = rg_nn_linear_forward(c, &op, rg_attention(c, q, k, v, H, NULL, causal, 1 / sqrt((double)(d / H))));
    assert_int_equal(out->numel, nw);
    rg_real *w = rg_arena_alloc(&c->arena, (size_t)nw * sizeof *w);
    for (int64_t i = 0; i < nw; i++) w[i] = (rg_real)wout[i];
    rg_tensor *loss = rg_sum(c, rg_mul(c, out, rg_tensor_from(c, out->ndim, out->shape, w)));
    rg_backward(c, loss, NULL);

    int64_t no;
    double *want = tc_h5_read(ATTN_FILE, (snprintf(path, sizeof path, "/%s/out", group), path), &no, NULL, NULL);
    assert_int_equal(no, out->numel);
    double e_out = max_abs_diff(out->data, want, no);
    tc_assert_close(group, out->data, want, no, 1e-5, 0);
    double global = 0;
    for (int i = 0; i < 10; i++) {
        if (i == 9 && !cross) break;
        snprintf(path, sizeof path, "/%s/grad_%s", group, i < 8 ? names[i] : i == 8 ? "x" : "m");
        double g = dataset_max(ATTN_FILE, path);
        if (g > global) global = g;
    }
    double e_grad = check_grad(ATTN_FILE, (snprintf(path, sizeof path, "/%s/grad_x", group), path), x->grad, x->numel,
                               global);
    if (cross) {
        double e = check_grad(ATTN_FILE, (snprintf(path, sizeof path, "/%s/grad_m", group), path), mem->grad,
                              mem->numel, global);
        if (e > e_grad) e_grad = e;
    }
    for (int i = 0; i < 8; i++) {
        snprintf(path, sizeof path, "/%s/grad_%s", group, names[i]);
        double e = check_grad(ATTN_FILE, path, p[i]->grad, p[i]->numel, global);
        if (e > e_grad) e_grad = e;
    }
    print_message("attn.h5 %-12s max |out diff| %.3g, worst grad error %.3g of the largest magnitude\n", group, e_out,
                  e_grad);
    free(want);
    free(wout);
    rg_ctx_free(c);
    for (int i = 0; i < 8; i++) rg_param_free(p[i]);
    rg_param_free(x);
    if (cross) rg_param_free(mem);
}

static void test_attn_self_causal(void **state) { check_attn_group("self_causal", false); }
static void test_attn_self_bidir(void **state) { check_attn_group("self_bidir", false); }
static void test_attn_cross(void **state) { check_attn_group("cross", true); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_none),
        cmocka_unit_test(test_attn_self_causal),
        cmocka_unit_test(test_attn_self_bidir),
        cmocka_unit_test(test_attn_cross),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
