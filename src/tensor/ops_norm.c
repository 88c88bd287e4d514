/* ops_norm.c: LayerNorm over the last dim. Shapes: x [..., C], weight [C], bias [C] or NULL -> [..., C].
 * Saves the per-row mean and 1/sqrt(var + eps) for the backward (as llm.c's layernorm_forward).
 * Backward rule: docs/derivatives.md row "layernorm". */
#include "ops.h"

#include <tgmath.h>

static void layernorm_backward(rg_tensor *node);
static const rg_op OP_LAYERNORM = {"layernorm", layernorm_backward};

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
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *in = x->data + r * C;
        rg_real *o = out->data + r * C;
        double m = 0, v = 0; /* two passes in double: an offset of 40000 costs no precision */
        for (int j = 0; j < C; j++) m += in[j];
        m /= C;
        for (int j = 0; j < C; j++) { double d = in[j] - m; v += d * d; }
        v /= C;
        rg_real s = (rg_real)(1.0 / sqrt(v + eps)), mu = (rg_real)m;
        for (int j = 0; j < C; j++) o[j] = (in[j] - mu) * s * w->data[j] + (b ? b->data[j] : 0);
        mean[r] = mu;
        rstd[r] = s;
    }
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
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *in = x->data + r * C, *g = node->grad + r * C;
        rg_real mu = mean[r], s = rstd[r];
        rg_real sum_gw = 0, sum_gwx = 0;
        for (int j = 0; j < C; j++) {
            rg_real xh = (in[j] - mu) * s, gw = g[j] * w->data[j];
            sum_gw += gw;
            sum_gwx += gw * xh;
            if (dw) dw[j] += g[j] * xh;
            if (db) db[j] += g[j];
        }
        if (!dx) continue;
        sum_gw /= C;
        sum_gwx /= C;
        for (int j = 0; j < C; j++) {
            rg_real xh = (in[j] - mu) * s;
            dx[r * C + j] += s * (g[j] * w->data[j] - sum_gw - xh * sum_gwx);
        }
    }
}
