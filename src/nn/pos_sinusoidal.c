/* pos_sinusoidal.c: the absolute sinusoidal encoding (Vaswani et al. 2017, "Attention Is All You Need", sec. 3.4
 * (embeddings scaled by sqrt(d_model)) and 3.5: PE(p, 2i) = sin(p / 10000^(2i/d_model)), PE(p, 2i+1) = cos(same)),
 * added once at the input: h = tok * sqrt(d_model) + PE(p). Matches tools/ref_model.py sinusoidal_table (angles
 * p / 10000^(2i/d) in double, then rounded to the tensor type).
 * Shapes: tok [B, T, d_model], positions [B*T] -> h [B, T, d_model]. Backward: dtok += sqrt(d_model) * g
 * (docs/derivatives.md row "pos_sinusoidal"). */
#include "pos.h"

#include <math.h>
#include <string.h>

static void sinusoidal_backward(rg_tensor *node);
static const rg_op OP_SINUSOIDAL = {"pos_sinusoidal", sinusoidal_backward};

void rg_sinusoidal_pe(int d_model, int32_t p, double *out)
{
    for (int i = 0; i + 1 < d_model; i += 2) {
        double a = (double)p / pow(10000.0, (double)i / d_model);
        out[i] = sin(a);
        out[i + 1] = cos(a);
    }
    if (d_model % 2) out[d_model - 1] = sin((double)p / pow(10000.0, (double)(d_model - 1) / d_model));
}

rg_tensor *rg_pos_sinusoidal(rg_ctx *c, rg_tensor *tok, const int32_t *pos)
{
    char s[64];
    RG_ASSERT(tok->ndim >= 2, "pos_sinusoidal: tok %s needs [.., T, d]", rg_shape_str(tok, s, 64));
    int d = tok->shape[tok->ndim - 1];
    int64_t n = tok->numel / d;
    rg_tensor *out = rg_node_new(c, &OP_SINUSOIDAL, tok->ndim, tok->shape, 1, &tok);
    rg_real sc = (rg_real)sqrt((double)d);
    int32_t pmin = INT32_MAX, pmax = INT32_MIN;
    for (int64_t i = 0; i < n; i++) {
        if (pos[i] < pmin) pmin = pos[i];
        if (pos[i] > pmax) pmax = pos[i];
    }
    double *pe = rg_arena_alloc(&c->arena, (size_t)d * sizeof(double));
    /* One PE row per distinct position when the range is small (shared positions), else one per token. */
    int64_t range = n ? (int64_t)pmax - pmin + 1 : 0;
    rg_real *table = NULL;
    if (range > 0 && range <= n) {
        table = rg_arena_alloc(&c->arena, (size_t)range * d * sizeof(rg_real));
        for (int64_t r = 0; r < range; r++) {
            rg_sinusoidal_pe(d, (int32_t)(pmin + r), pe);
            for (int j = 0; j < d; j++) table[r * d + j] = (rg_real)pe[j];
        }
    }
    for (int64_t i = 0; i < n; i++) {
        const rg_real *x = tok->data + i * d;
        rg_real *o = out->data + i * d;
        if (table) {
            const rg_real *t = table + (int64_t)(pos[i] - pmin) * d;
            for (int j = 0; j < d; j++) o[j] = x[j] * sc + t[j];
        } else {
            rg_sinusoidal_pe(d, pos[i], pe);
            for (int j = 0; j < d; j++) o[j] = x[j] * sc + (rg_real)pe[j];
        }
    }
    out->farg[0] = (double)sc;
    return out;
}

/* h = tok * sqrt(d) + PE: dtok += sqrt(d) g. */
static void sinusoidal_backward(rg_tensor *node)
{
    rg_tensor *tok = node->src[0];
    rg_real *dx = rg_grad_of(tok);
    rg_real sc = (rg_real)node->farg[0];
    for (int64_t i = 0; i < tok->numel; i++) dx[i] += sc * node->grad[i];
}
