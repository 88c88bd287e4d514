/* test_fused_ref.c: the float32 build's fused rg_linear_gelu (the code train_order runs: rg_tanh_fast, the AVX2
 * clone of the bias+GELU loops) against a float64 reference written here from the formulas, not from the library.
 *
 * Why, beside gradcheck_ops: the float64 gradient check runs the -DRG_DOUBLE build, where rg_tanh_fast is libm's
 * tanh, on widths out <= 6, so the vector body of the AVX2 loops (8 floats) and the clamped rational tanh are never
 * differentiated there. Derivation (docs/derivatives.md rows "linear" and "gelu"):
 *   pre = x W^T + b,  y = ½ pre (1 + t),  t = tanh(u),  u = c (pre + a pre³),  c = √(2/π), a = 0.044715
 *   L = Σ G ⊙ y  =>  dpre = G ⊙ (½ (1 + t) + ½ pre (1 − t²) c (1 + 3 a pre²))
 *   db = Σ_rows dpre,  dx = dpre W  [rows, in],  dW = dpre^T x  [out, in].
 * Parameters accumulate their gradient over backward calls: a second backward without zeroing doubles every
 * gradient (a rule that wrote a parameter's buffer instead of adding would pass a single-call check). */
#include "common.h"
#include <math.h>
#include <stdlib.h>

#define GC 0.7978845608028654
#define GA 0.044715

typedef struct { int B, T, in, out; double bias_std; } fused_case;

static double rel_err(double got, double want, double scale) { return fabs(got - want) / (scale + 1e-30); }

static double max_abs(const double *v, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m = tc_max(m, fabs(v[i]));
    return m;
}

/* worst |got - want| / max|want| over n values, float32 got against float64 want (times `times`) */
static double worst_of(const rg_real *got, const double *want, int64_t n, double times)
{
    double scale = times * max_abs(want, n), w = 0;
    for (int64_t i = 0; i < n; i++) w = tc_max(w, rel_err(got[i], times * want[i], scale));
    return w;
}

static void run_case(const fused_case *k, rg_rng *rng)
{
    const int rows = k->B * k->T, in = k->in, out = k->out;
    rg_tensor *x = rg_param_new("x", 3, (int[]){k->B, k->T, in});
    rg_tensor *w = rg_param_new("w", 2, (int[]){out, in});
    rg_tensor *b = rg_param_new("b", 1, (int[]){out});
    for (int64_t i = 0; i < x->numel; i++) x->data[i] = (rg_real)rg_rng_normal(rng);
    for (int64_t i = 0; i < w->numel; i++) w->data[i] = (rg_real)(rg_rng_normal(rng) / sqrt(in));
    for (int64_t i = 0; i < b->numel; i++) b->data[i] = (rg_real)(k->bias_std * rg_rng_normal(rng));
    rg_real *g = tc_random_weights((int64_t)rows * out, rng);

    /* the reference, in double */
    double *pre = calloc((size_t)rows * out, sizeof *pre), *y = calloc((size_t)rows * out, sizeof *y);
    double *dpre = calloc((size_t)rows * out, sizeof *dpre), *dx = calloc((size_t)rows * in, sizeof *dx);
    double *dw = calloc((size_t)out * in, sizeof *dw), *db = calloc((size_t)out, sizeof *db);
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double v = b->data[o];
            for (int i = 0; i < in; i++) v += (double)x->data[r * in + i] * w->data[o * in + i];
            double t = tanh(GC * (v + GA * v * v * v));
            pre[r * out + o] = v;
            y[r * out + o] = 0.5 * v * (1 + t);
            dpre[r * out + o] = g[r * out + o] * (0.5 * (1 + t) + 0.5 * v * (1 - t * t) * GC * (1 + 3 * GA * v * v));
        }
    for (int r = 0; r < rows; r++)
        for (int o = 0; o < out; o++) {
            double d = dpre[r * out + o];
            db[o] += d;
            for (int i = 0; i < in; i++) {
                dx[r * in + i] += d * w->data[o * in + i];
                dw[o * in + i] += d * x->data[r * in + i];
            }
        }

    rg_ctx *c = rg_ctx_new();
    for (int call = 1; call <= 2; call++) { /* no zero_grad between the calls: parameters accumulate */
        rg_ctx_reset(c);
        rg_tensor *yy = rg_linear_gelu(c, x, w, b);
        double ey = worst_of(yy->data, y, (int64_t)rows * out, 1);
        rg_backward(c, tc_weighted_sum(c, yy, g), NULL);
        double ex = worst_of(x->grad, dx, (int64_t)rows * in, call), ew = worst_of(w->grad, dw, (int64_t)out * in, call),
               eb = worst_of(b->grad, db, out, call);
        print_message("linear_gelu x [%d, %d, %d] -> %d (|pre| <= %.1f), call %d: y %.2g, dx %.2g, dW %.2g, "
                      "db %.2g\n", k->B, k->T, in, out,
                      max_abs(pre, (int64_t)rows * out), call, ey, ex, ew, eb);
        /* float32 accumulation over in (or rows) terms, relative to the largest value: 1e-5 is ~100 ulp */
        if (!(ey < 1e-5 && ex < 1e-5 && ew < 1e-5 && eb < 1e-5))
            fail_msg("linear_gelu differs from the float64 reference (call %d): y %g dx %g dW %g db %g", call, ey, ex,
                     ew, eb);
    }
    rg_ctx_free(c);
    free(pre), free(y), free(dpre), free(dx), free(dw), free(db), free(g);
    rg_param_free(x), rg_param_free(w), rg_param_free(b);
}

/* Widths: below one AVX2 vector, one vector, vectors plus a remainder, the model's d_ff; a bias of std 6 puts
 * pre-activations past rg_tanh_fast's clamp at ±7.9. */
static void test_linear_gelu_against_float64_reference(void **state)
{
    static const fused_case cases[] = {
        {1, 1, 3, 5, 1}, {2, 7, 13, 8, 1}, {2, 19, 13, 37, 2}, {3, 11, 64, 256, 1}, {1, 33, 9, 17, 6},
    };
    rg_rng rng;
    rg_rng_seed(&rng, 20261201, 7);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i], &rng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_linear_gelu_against_float64_reference)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
