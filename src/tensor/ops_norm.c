/* ops_norm.c: LayerNorm over the last dim. Shapes: x [..., C], weight [C], bias [C] or NULL -> [..., C].
 * Saves the per-row mean and 1/sqrt(var + eps) for the backward (as llm.c's layernorm_forward).
 * Backward rule: docs/derivatives.md row "layernorm". Large passes run over the pool (rg_pool_for) with the bits of
 * one thread: rows split for the forward and dx, columns for dw and db (each a sum over rows in row order). */
#include "ops.h"
#include "gemm.h"
#include "fastmath.h"
#include "pool.h"

#include <string.h>
#include <tgmath.h>

static void layernorm_backward(rg_tensor *node);
static const rg_op OP_LAYERNORM = {"layernorm", layernorm_backward};

/* Row sums with 8 independent accumulators, in double: vectorizable without reassociating (no fast-math), and an
 * offset of 40000 costs no precision. */
#define LN_LANES 8
static inline double sum_lanes(const double *acc)
{
    double s = 0;
    for (int k = 0; k < LN_LANES; k++) s += acc[k];
    return s;
}

/* out [rows, C] = (x - mean) rstd w + b, two passes per row (mean, then squared deviations); saves mean, rstd;
 * out16 (if not NULL) = bf16(out), the copy a bf16 Linear reads (rg_linear_bf16_slot). */
RG_VECTORIZE static void layernorm_rows(rg_real *restrict out, uint16_t *restrict out16, rg_real *restrict mean,
                                        rg_real *restrict rstd, const rg_real *restrict x, const rg_real *restrict w,
                                        const rg_real *restrict b, int64_t rows, int C, double eps)
{
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *in = x + r * C;
        rg_real *o = out + r * C;
        double acc[LN_LANES] = {0}, acc2[LN_LANES] = {0};
        int j = 0;
        for (; j + LN_LANES <= C; j += LN_LANES)
            for (int k = 0; k < LN_LANES; k++) acc[k] += in[j + k];
        for (; j < C; j++) acc[0] += in[j];
        double m = sum_lanes(acc) / C;
        for (j = 0; j + LN_LANES <= C; j += LN_LANES)
            for (int k = 0; k < LN_LANES; k++) {
                double d = in[j + k] - m;
                acc2[k] += d * d;
            }
        for (; j < C; j++) acc2[0] += (in[j] - m) * (in[j] - m);
        double v = sum_lanes(acc2) / C;
        rg_real s = (rg_real)(1.0 / sqrt(v + eps)), mu = (rg_real)m;
        if (b)
            for (j = 0; j < C; j++) o[j] = (in[j] - mu) * s * w[j] + b[j];
        else
            for (j = 0; j < C; j++) o[j] = (in[j] - mu) * s * w[j];
        if (out16) rg_bf16_rows(out16 + r * C, C, o, C, 1, C); /* the row while in cache */
        mean[r] = mu;
        rstd[r] = s;
    }
}

/* One row's sums of g w and of g w xhat (xhat = (x - mu) s, in rg_real) in LN_LANES partial sums a1, a2: lane k
 * adds the entries j = k mod LN_LANES in order, then the tail goes into lane 0. Written as the plain loop, GCC left
 * it scalar inside layernorm_rows_backward's row loop (128 scalar double instructions per 8 x 8 block, 10% of the
 * reference step); in the float32 build the 8 lanes are one GCC vector of 8 doubles (vector_size: the same IEEE
 * operations per lane, lowered to one AVX-512 instruction or several narrower ones), so the bits are the loop's. */
#if defined(__GNUC__) && !defined(RG_DOUBLE)
typedef double ln_v8d __attribute__((vector_size(8 * sizeof(double))));
typedef float ln_v8f __attribute__((vector_size(8 * sizeof(float))));
#endif
static inline void grad_sums(double *restrict a1, double *restrict a2, const rg_real *restrict g,
                             const rg_real *restrict w, const rg_real *restrict in, rg_real mu, rg_real s, int C)
{
    for (int k = 0; k < LN_LANES; k++) a1[k] = 0, a2[k] = 0;
    int j = 0;
#if defined(__GNUC__) && !defined(RG_DOUBLE)
    ln_v8d v1 = {0}, v2 = {0};
    for (; j + LN_LANES <= C; j += LN_LANES) {
        ln_v8f gf, wf, xf;
        memcpy(&gf, g + j, sizeof gf);
        memcpy(&wf, w + j, sizeof wf);
        memcpy(&xf, in + j, sizeof xf);
        ln_v8f xh = (xf - mu) * s;
        ln_v8d gw = __builtin_convertvector(gf, ln_v8d) * __builtin_convertvector(wf, ln_v8d);
        v1 += gw;
        v2 += gw * __builtin_convertvector(xh, ln_v8d);
    }
    memcpy(a1, &v1, sizeof v1);
    memcpy(a2, &v2, sizeof v2);
#else
    for (; j + LN_LANES <= C; j += LN_LANES)
        for (int k = 0; k < LN_LANES; k++) {
            double gw = (double)g[j + k] * w[j + k];
            a1[k] += gw;
            a2[k] += gw * ((in[j + k] - mu) * s);
        }
#endif
    for (; j < C; j++) {
        double gw = (double)g[j] * w[j];
        a1[0] += gw;
        a2[0] += gw * ((in[j] - mu) * s);
    }
}

/* One row's share of the weight and bias gradients, columns [j0, j1): dw += g xhat, db += g. */
static inline void param_grads_row(rg_real *restrict dw, rg_real *restrict db, const rg_real *restrict g,
                                   const rg_real *restrict in, rg_real mu, rg_real s, int j0, int j1)
{
    if (dw)
        for (int j = j0; j < j1; j++) dw[j] += g[j] * (in[j] - mu) * s;
    if (db)
        for (int j = j0; j < j1; j++) db[j] += g[j];
}

/* The backward of layernorm_rows for rows [r0, r1) (see layernorm_backward). dw, db, dx may be NULL. */
RG_VECTORIZE static void layernorm_rows_backward(rg_real *restrict dx, rg_real *restrict dw, rg_real *restrict db,
                                                 const rg_real *restrict grad, const rg_real *restrict x,
                                                 const rg_real *restrict w, const rg_real *restrict mean,
                                                 const rg_real *restrict rstd, int64_t r0, int64_t r1, int C)
{
    for (int64_t r = r0; r < r1; r++) {
        const rg_real *in = x + r * C, *g = grad + r * C;
        rg_real mu = mean[r], s = rstd[r];
        param_grads_row(dw, db, g, in, mu, s, 0, C);
        if (!dx) continue;
        double a1[LN_LANES], a2[LN_LANES];
        grad_sums(a1, a2, g, w, in, mu, s, C);
        rg_real mean_gw = (rg_real)(sum_lanes(a1) / C), mean_gwx = (rg_real)(sum_lanes(a2) / C);
        rg_real *d = dx + r * C;
        for (int j = 0; j < C; j++) d[j] += s * (g[j] * w[j] - mean_gw - (in[j] - mu) * s * mean_gwx);
    }
}

/* The weight and bias gradients alone, columns [j0, j1), every row in order (the column split of the pool). */
RG_VECTORIZE static void layernorm_param_grads(rg_real *restrict dw, rg_real *restrict db,
                                               const rg_real *restrict grad, const rg_real *restrict x,
                                               const rg_real *restrict mean, const rg_real *restrict rstd,
                                               int64_t rows, int C, int j0, int j1)
{
    for (int64_t r = 0; r < rows; r++)
        param_grads_row(dw, db, grad + r * C, x + r * C, mean[r], rstd[r], j0, j1);
}

/* A LayerNorm pass over the pool: the forward and dx split the rows; dw and db, sums over rows, the columns. */
typedef struct {
    rg_real *out, *mean_out, *rstd_out, *dx, *dw, *db;
    uint16_t *out16;
    const rg_real *x, *w, *b, *grad, *mean, *rstd;
    int64_t rows;
    int C;
    double eps;
} ln_pass;

static void forward_part(void *p, int64_t r0, int64_t r1)
{
    const ln_pass *a = p;
    layernorm_rows(a->out + r0 * a->C, a->out16 ? a->out16 + r0 * a->C : NULL, a->mean_out + r0, a->rstd_out + r0,
                   a->x + r0 * a->C, a->w, a->b, r1 - r0, a->C, a->eps);
}

static void dx_part(void *p, int64_t r0, int64_t r1)
{
    const ln_pass *a = p;
    layernorm_rows_backward(a->dx, NULL, NULL, a->grad, a->x, a->w, a->mean, a->rstd, r0, r1, a->C);
}

static void param_part(void *p, int64_t j0, int64_t j1)
{
    const ln_pass *a = p;
    layernorm_param_grads(a->dw, a->db, a->grad, a->x, a->mean, a->rstd, a->rows, a->C, (int)j0, (int)j1);
}

rg_tensor *rg_layernorm(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *b, double eps)
{
    int C = x->shape[x->ndim - 1];
    char sx[64], sw[64], sb[64];
    if (w->ndim != 1 || w->shape[0] != C || (b && (b->ndim != 1 || b->shape[0] != C)))
        RG_FATAL("layernorm: x %s, weight %s, bias %s (want [%d])", rg_shape_str(x, sx, 64),
                 rg_shape_str(w, sw, 64), b ? rg_shape_str(b, sb, 64) : "none", C);
    rg_tensor *out = rg_node_new(c, &OP_LAYERNORM, x->ndim, x->shape, b ? 3 : 2, (rg_tensor *[]){x, w, b});
    int64_t rows = x->numel / C;
    rg_real *mean = rg_arena_alloc(&c->arena, (size_t)rows * sizeof(rg_real));
    rg_real *rstd = rg_arena_alloc(&c->arena, (size_t)rows * sizeof(rg_real));
    ln_pass a = {.out = out->data, .out16 = rg_linear_bf16_slot(out), .mean_out = mean, .rstd_out = rstd,
                 .x = x->data, .w = w->data, .b = b ? b->data : NULL, .C = C, .eps = eps};
    rg_pool_for(rows, rg_pool_part_min(C), 1, forward_part, &a);
    out->saved = mean;
    out->saved2 = rstd;
    out->farg[0] = eps;
    return out;
}

/* xhat = (x - mean) rstd, y = xhat w + b: dw += sum_rows g xhat; db += sum_rows g;
 * dx += rstd (g w - mean_j(g w) - xhat mean_j(g w xhat)). docs/derivatives.md row "layernorm". */
static void layernorm_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0], *w = node->src[1], *b = node->nsrc > 2 ? node->src[2] : NULL;
    int C = x->shape[x->ndim - 1];
    int64_t rows = x->numel / C;
    const rg_real *mean = node->saved, *rstd = node->saved2;
    rg_real *dx = x->requires_grad ? rg_grad_of(x) : NULL;
    rg_real *dw = w->requires_grad ? rg_grad_of(w) : NULL;
    rg_real *db = b && b->requires_grad ? rg_grad_of(b) : NULL;
    if (rg_pool_threads() == 1 || rows * C < 2 * RG_POOL_GRAIN) { /* one pass */
        layernorm_rows_backward(dx, dw, db, node->grad, x->data, w->data, mean, rstd, 0, rows, C);
        return;
    }
    ln_pass a = {.dx = dx, .dw = dw, .db = db, .grad = node->grad, .x = x->data, .w = w->data, .mean = mean,
                 .rstd = rstd, .rows = rows, .C = C};
    if (dx) rg_pool_for(rows, rg_pool_part_min(C), 1, dx_part, &a);
    if (dw || db) rg_pool_for(C, rg_pool_part_min(rows), 16, param_part, &a);
}
