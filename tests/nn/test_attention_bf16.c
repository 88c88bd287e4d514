/* test_attention_bf16.c (float32): attention's products in bf16 (rg_set_linear_precision(RG_PRECISION_BF16), as
 * torch.autocast runs matmul and bmm) against a float64 loop reference of the exact formula on the float32 inputs.
 *
 * One table of cases run by one loop: T = S, T < S (a KV cache: queries at the end of the keys), T > S, one and
 * several causal blocks, bidirectional, a bias [H, T, S] or [B, H, T, S] requiring grad, head widths 8-64, inputs
 * that are parameters (the gradients accumulate: beta 1) or intermediates (fresh gradient buffers: beta 0), and 1
 * or 2 threads. Checked: the output O and the gradients dQ, dK, dV and dbias (dbias = dS before the scale: the
 * softmax gradient of dP) for dO a fixed random array.
 *
 * The tolerance is a first-order error bound per element, computed beside the reference in float64. A product of
 * n terms with both operands rounded to bf16 and float32 accumulation is off by at most
 * rho(n) sum |a||b|, rho(n) = 2u + u^2 + n 2^-23 (u = 2^-8, bf16's unit roundoff; n 2^-23 twice float32's
 * accumulation bound over the reduction length n). Through the chain: scores e_s = scale rho(hd) sum_d |q||k|;
 * softmax |dP_ij| <= 2 P_ij max_l e_s,il (plus 1e-6 P_ij for float32's exp); O and dV add rho(n) P |v| (|dO|) to
 * that error carried through |v| (|dO|), the whole propagated term times 1.02 for the second-order rounding of
 * the perturbed P; dP's e_dP = rho(hd) sum |dO||v|; dS's error from P's, dP's and the row sum's errors; dQ and dK
 * as O. Every element must lie within its bound (the ratio err / bound is printed: about 0.01-0.1, the bound being
 * a worst case), and each output's largest error must exceed 2^-14 of its largest value, which float32 products
 * never reach: the operands really are bf16. Skipped (counted) where rg_bf16_supported is false. */
#include "common.h"
#include "tensor/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U 0x1p-8 /* bf16's unit roundoff */

static double rho(int n) { return 2 * U + U * U + n * 0x1p-23; }

typedef struct {
    const char *name;
    int B, T, S, H, hd;
    bool causal;
    int bias_dims; /* 0 none, 3 [H, T, S], 4 [B, H, T, S] */
    bool leaves;   /* q, k, v parameters (gradients accumulate) or intermediates (fresh gradient buffers) */
    int threads;
    double scale;
} attn_case;

static const attn_case CASES[] = {
    {"T = S = 5, causal", 2, 5, 5, 2, 8, true, 0, true, 1, 0.35},
    {"T = S = 34, causal, 2 heads", 4, 34, 34, 2, 16, true, 0, false, 1, 0.25},
    {"T = S = 130, causal (3 blocks)", 2, 130, 130, 4, 32, true, 0, false, 1, 0.18},
    {"T = S = 130, causal, 2 threads", 2, 130, 130, 4, 32, true, 0, true, 2, 0.18},
    {"T = 20 < S = 150 (KV cache), causal", 2, 20, 150, 2, 16, true, 0, true, 1, 0.25},
    {"T = 70 < S = 200, causal, bias [H,T,S]", 2, 70, 200, 2, 16, true, 3, false, 2, 0.25},
    {"T = 90 > S = 40, causal (rows see no key)", 2, 90, 40, 2, 16, true, 0, true, 1, 0.25},
    {"T = 33, S = 70, bidirectional", 3, 33, 70, 2, 16, false, 0, false, 1, 0.25},
    {"T = S = 66, causal, bias [B,H,T,S], hd 64", 2, 66, 66, 2, 64, true, 4, true, 1, 0.125},
    {"T = S = 80, bidirectional, bias [H,T,S]", 2, 80, 80, 3, 8, false, 3, true, 2, 0.35},
};

/* The reference's outputs and their bounds, float64 */
typedef struct {
    double *o, *dq, *dk, *dv, *db;     /* values */
    double *eo, *edq, *edk, *edv, *edb; /* bounds */
} attn_ref;

static double *zeros(int64_t n) { return calloc((size_t)n, sizeof(double)); }

/* One (b, h) pair's forward: P [T, S] and its bound dp (2 P max e_s + exp's), O and its bound */
static void ref_forward(const attn_case *a, const rg_real *q, const rg_real *k, const rg_real *v, const rg_real *bias,
                        int b, int h, double *P, double *dp, attn_ref *r)
{
    const int T = a->T, S = a->S, D = a->H * a->hd, hd = a->hd;
#define AT(x, L, i, d) (x)[((int64_t)b * (L) + (i)) * D + h * hd + (d)]
    for (int i = 0; i < T; i++) {
        double m = -INFINITY, sum = 0, es = 0;
        for (int j = 0; j < S; j++) {
            double s = -INFINITY, mag = 0;
            if (!a->causal || j <= i + S - T) {
                s = 0;
                for (int d = 0; d < hd; d++) {
                    s += AT(q, T, i, d) * AT(k, S, j, d);
                    mag += fabs(AT(q, T, i, d) * AT(k, S, j, d));
                }
                s *= a->scale;
                if (bias) s += bias[(((a->bias_dims == 4 ? (int64_t)b * a->H : 0) + h) * T + i) * S + j];
                es = fmax(es, a->scale * rho(hd) * mag);
            }
            P[(int64_t)i * S + j] = s;
            m = fmax(m, s);
        }
        for (int j = 0; j < S; j++) sum += P[(int64_t)i * S + j] = m == -INFINITY ? 0 : exp(P[(int64_t)i * S + j] - m);
        for (int j = 0; j < S; j++) {
            double p = sum > 0 ? P[(int64_t)i * S + j] / sum : 0;
            P[(int64_t)i * S + j] = p;
            dp[(int64_t)i * S + j] = 2 * p * es + 1e-6 * p;
        }
        for (int d = 0; d < hd; d++) {
            double o = 0, e = 0;
            for (int j = 0; j < S; j++) {
                o += P[(int64_t)i * S + j] * AT(v, S, j, d);
                e += (1.02 * dp[(int64_t)i * S + j] + rho(S) * P[(int64_t)i * S + j]) * fabs(AT(v, S, j, d));
            }
            AT(r->o, T, i, d) = o;
            AT(r->eo, T, i, d) = e;
        }
    }
}

/* The pair's backward for dO = w: dV, dS (into g, before the scale) with its bound eg, dQ, dK, dbias */
static void ref_backward(const attn_case *a, const rg_real *q, const rg_real *k, const rg_real *v, const rg_real *w,
                         int b, int h, const double *P, const double *dp, double *g, double *eg, attn_ref *r)
{
    const int T = a->T, S = a->S, D = a->H * a->hd, hd = a->hd;
    const double sc = a->scale;
    for (int j = 0; j < S; j++)
        for (int d = 0; d < hd; d++)
            for (int i = 0; i < T; i++) {
                const double p = P[(int64_t)i * S + j], dpe = dp[(int64_t)i * S + j];
                AT(r->dv, S, j, d) += p * AT(w, T, i, d);
                AT(r->edv, S, j, d) += (1.02 * dpe + rho(T) * p) * fabs(AT(w, T, i, d));
            }
    double *dP = malloc((size_t)S * sizeof *dP), *edP = malloc((size_t)S * sizeof *edP);
    for (int i = 0; i < T; i++) {
        double rs = 0, ers = 0;
        for (int j = 0; j < S; j++) {
            double x = 0, mag = 0;
            for (int d = 0; d < hd; d++) {
                x += AT(w, T, i, d) * AT(v, S, j, d);
                mag += fabs(AT(w, T, i, d) * AT(v, S, j, d));
            }
            dP[j] = x, edP[j] = rho(hd) * mag;
        }
        for (int j = 0; j < S; j++) {
            const double p = P[(int64_t)i * S + j];
            rs += p * dP[j];
            ers += dp[(int64_t)i * S + j] * fabs(dP[j]) + p * edP[j] + 0x1p-23 * fabs(p * dP[j]);
        }
        for (int j = 0; j < S; j++) {
            const double p = P[(int64_t)i * S + j], x = p * (dP[j] - rs);
            g[(int64_t)i * S + j] = x;
            eg[(int64_t)i * S + j] = dp[(int64_t)i * S + j] * fabs(dP[j] - rs) + p * (edP[j] + ers) +
                                     0x1p-22 * p * (fabs(dP[j]) + fabs(rs));
        }
    }
    free(dP), free(edP);
    for (int i = 0; i < T; i++)
        for (int d = 0; d < hd; d++)
            for (int j = 0; j < S; j++) {
                const double x = sc * g[(int64_t)i * S + j], e = 1.02 * sc * eg[(int64_t)i * S + j];
                AT(r->dq, T, i, d) += x * AT(k, S, j, d);
                AT(r->edq, T, i, d) += (e + rho(S) * fabs(x)) * fabs(AT(k, S, j, d));
                AT(r->dk, S, j, d) += x * AT(q, T, i, d);
                AT(r->edk, S, j, d) += (e + rho(T) * fabs(x)) * fabs(AT(q, T, i, d));
            }
#undef AT
    if (!r->db) return;
    const int64_t off = ((a->bias_dims == 4 ? (int64_t)b * a->H : 0) + h) * T * S;
    for (int64_t x = 0; x < (int64_t)T * S; x++) r->db[off + x] += g[x], r->edb[off + x] += eg[x];
}

/* The float64 reference of every output and bound (arrays malloc'ed into r) */
static void reference(const attn_case *a, const rg_real *q, const rg_real *k, const rg_real *v, const rg_real *bias,
                      const rg_real *w, int64_t nb, attn_ref *r)
{
    const int64_t nq = (int64_t)a->B * a->T * a->H * a->hd, nk = (int64_t)a->B * a->S * a->H * a->hd;
    const int64_t TS = (int64_t)a->T * a->S;
    *r = (attn_ref){zeros(nq), zeros(nq), zeros(nk), zeros(nk), nb ? zeros(nb) : NULL,
                    zeros(nq), zeros(nq), zeros(nk), zeros(nk), nb ? zeros(nb) : NULL};
    double *P = malloc((size_t)TS * sizeof *P), *dp = malloc((size_t)TS * sizeof *dp);
    double *g = malloc((size_t)TS * sizeof *g), *eg = malloc((size_t)TS * sizeof *eg);
    for (int b = 0; b < a->B; b++)
        for (int h = 0; h < a->H; h++) {
            ref_forward(a, q, k, v, bias, b, h, P, dp, r);
            ref_backward(a, q, k, v, w, b, h, P, dp, g, eg, r);
        }
    free(P), free(dp), free(g), free(eg);
}

/* Every |got - want| within its bound; returns the largest ratio err / bound, and the largest error relative to
 * the largest |want| in *rel */
static double check(const char *c, const char *what, const rg_real *got, const double *want, const double *bound,
                    int64_t n, double *rel)
{
    double worst = 0, emax = 0, vmax = 0;
    for (int64_t i = 0; i < n; i++) {
        const double e = fabs(got[i] - want[i]);
        if (!(e <= bound[i] + 1e-30))
            fail_msg("%s: %s[%lld] = %.9g, want %.9g (error %.3g > bound %.3g)", c, what, (long long)i,
                     (double)got[i], want[i], e, bound[i]);
        worst = tc_max(worst, e / (bound[i] + 1e-30));
        emax = tc_max(emax, e);
        vmax = fmax(vmax, fabs(want[i]));
    }
    *rel = emax / vmax;
    if (!(*rel > 0x1p-14))
        fail_msg("%s: %s's largest error %.3g of its largest value: not bf16 products", c, what, *rel);
    return worst;
}

static rg_tensor *input(rg_ctx *c, const attn_case *a, rg_tensor *p, rg_tensor *ones)
{
    return a->leaves ? p : rg_mul(c, p, ones); /* an intermediate: its gradient buffer is fresh in the backward */
}

static void run_case(const attn_case *a, rg_rng *rng)
{
    const int D = a->H * a->hd;
    rg_tensor *q = tc_param_randn("q", 3, (int[]){a->B, a->T, D}, rng, 1.0);
    rg_tensor *k = tc_param_randn("k", 3, (int[]){a->B, a->S, D}, rng, 1.0);
    rg_tensor *v = tc_param_randn("v", 3, (int[]){a->B, a->S, D}, rng, 1.0);
    rg_tensor *bias = NULL;
    if (a->bias_dims == 3) bias = tc_param_randn("bias", 3, (int[]){a->H, a->T, a->S}, rng, 0.5);
    if (a->bias_dims == 4) bias = tc_param_randn("bias", 4, (int[]){a->B, a->H, a->T, a->S}, rng, 0.5);
    rg_real *w = tc_random_weights(q->numel, rng);
    attn_ref r;
    reference(a, q->data, k->data, v->data, bias ? bias->data : NULL, w, bias ? bias->numel : 0, &r);
    rg_set_num_threads(a->threads);
    rg_ctx *c = rg_ctx_new();
    rg_tensor *o1 = rg_tensor_new(c, 3, (int[]){a->B, a->S, D});
    for (int64_t i = 0; i < o1->numel; i++) o1->data[i] = 1;
    rg_tensor *oq = rg_tensor_new(c, 3, (int[]){a->B, a->T, D});
    for (int64_t i = 0; i < oq->numel; i++) oq->data[i] = 1;
    rg_tensor *out = rg_attention(c, input(c, a, q, oq), input(c, a, k, o1), input(c, a, v, o1), a->H, bias,
                                  a->causal, a->scale);
    rg_backward(c, out, w);
    double ro, rq, rk, rv, rb = 0, wb = 0;
    double wo = check(a->name, "O", out->data, r.o, r.eo, q->numel, &ro);
    double wq = check(a->name, "dQ", q->grad, r.dq, r.edq, q->numel, &rq);
    double wk = check(a->name, "dK", k->grad, r.dk, r.edk, k->numel, &rk);
    double wv = check(a->name, "dV", v->grad, r.dv, r.edv, v->numel, &rv);
    if (bias) wb = check(a->name, "dbias", bias->grad, r.db, r.edb, bias->numel, &rb);
    printf("%-44s err/bound O %.3f dQ %.3f dK %.3f dV %.3f dbias %.3f; max err/max|ref| O %.1e dQ %.1e dK %.1e "
           "dV %.1e dbias %.1e\n", a->name, wo, wq, wk, wv, wb, ro, rq, rk, rv, rb);
    rg_ctx_free(c);
    rg_set_num_threads(1);
    double *arrays[] = {r.o, r.dq, r.dk, r.dv, r.db, r.eo, r.edq, r.edk, r.edv, r.edb};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
    free(w);
    rg_param_free(q), rg_param_free(k), rg_param_free(v);
    if (bias) rg_param_free(bias);
}

static void test_attention_bf16(void **state)
{
    char why[256];
    if (!rg_bf16_supported(why, sizeof why)) {
        printf("skipped: %s\n", why);
        skip();
    }
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_BF16), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 42, 0);
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) run_case(&CASES[i], &rng);
    assert_int_equal(rg_set_linear_precision(RG_PRECISION_FP32), RG_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attention_bf16),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
