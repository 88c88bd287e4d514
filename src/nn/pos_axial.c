/* pos_axial.c: 2-D axial rotary embeddings for vision transformers (Heo et al. 2024, "Rotary Position Embedding
 * for Vision Transformer", sec. 3.2 RoPE-Axial; as in the reference code naver-ai/rope-vit, compute_axial_cis:
 * frequencies theta_i = base^(-4i/hd), i < hd/4, the x (column) angles on the first hd/4 complex pairs and the y
 * (row) angles on the last hd/4, each complex pair being two adjacent channels (view_as_complex)).
 * In each head of x [B, N, n_heads*hd] (hd % 4 == 0), pair i < hd/4 = channels (2i, 2i+1) rotates by
 * col * theta_i and pair hd/4 + i = channels (hd/2 + 2i, hd/2 + 2i + 1) by row * theta_i:
 * (a, b) -> (a cos - b sin, a sin + b cos). So q.k after the rotation depends on the patches only through
 * (col_q - col_k, row_q - row_k). Angles are computed in double per patch into the step arena.
 * Backward: the inverse rotation (angle -p theta) of the incoming gradient (docs/derivatives.md row
 * "pos_axial_rope"). */
#include "pos.h"

#include <math.h>
#include <string.h>

static void axial_backward(rg_tensor *node);
static const rg_op OP_AXIAL = {"pos_axial_rope", axial_backward};

/* Rotates the pairs of each head of one patch with cs/sn [hd/2] (dir -1: the inverse rotation, accumulated). */
static inline void axial_patch(const rg_real *restrict x, rg_real *restrict o, int H, int hd, const rg_real *cs,
                               const rg_real *sn, bool inverse)
{
    int np = hd / 2;
    for (int h = 0; h < H; h++) {
        const rg_real *xh = x + (int64_t)h * hd;
        rg_real *oh = o + (int64_t)h * hd;
        for (int i = 0; i < np; i++) {
            rg_real a = xh[2 * i], b = xh[2 * i + 1], c = cs[i], s = sn[i];
            if (inverse) {
                oh[2 * i] += a * c + b * s;
                oh[2 * i + 1] += -a * s + b * c;
            } else {
                oh[2 * i] = a * c - b * s;
                oh[2 * i + 1] = a * s + b * c;
            }
        }
    }
}

rg_tensor *rg_pos_axial_rope(rg_ctx *c, rg_tensor *x, int n_heads, double base, const int32_t *col,
                             const int32_t *row)
{
    char s[64];
    int D = x->shape[x->ndim - 1];
    RG_ASSERT(D % n_heads == 0 && (D / n_heads) % 4 == 0, "pos_axial_rope: x %s with %d heads needs head_dim %% 4 "
              "== 0", rg_shape_str(x, s, 64), n_heads);
    int hd = D / n_heads, nq = hd / 4, np = hd / 2;
    int64_t n = x->numel / D;
    rg_tensor *out = rg_node_new(c, &OP_AXIAL, x->ndim, x->shape, 1, &x);
    rg_real *cs = rg_arena_alloc(&c->arena, (size_t)n * np * 2 * sizeof(rg_real)), *sn = cs + n * np;
    double *theta = rg_arena_alloc(&c->arena, (size_t)nq * sizeof(double));
    for (int i = 0; i < nq; i++) theta[i] = 1.0 / pow(base, (double)(4 * i) / hd);
    for (int64_t t = 0; t < n; t++) {
        rg_real *ct = cs + t * np, *st = sn + t * np;
        for (int i = 0; i < nq; i++) {
            double ax = (double)col[t] * theta[i], ay = (double)row[t] * theta[i];
            ct[i] = (rg_real)cos(ax);
            st[i] = (rg_real)sin(ax);
            ct[nq + i] = (rg_real)cos(ay);
            st[nq + i] = (rg_real)sin(ay);
        }
        axial_patch(x->data + t * D, out->data + t * D, n_heads, hd, ct, st, false);
    }
    out->saved = cs;
    out->iarg[0] = n_heads;
    return out;
}

static void axial_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int H = (int)node->iarg[0], D = x->shape[x->ndim - 1], hd = D / H, np = hd / 2;
    int64_t n = x->numel / D;
    const rg_real *cs = node->saved, *sn = cs + n * np;
    rg_real *dx = rg_grad_of(x);
    for (int64_t t = 0; t < n; t++)
        axial_patch(node->grad + t * D, dx + t * D, H, hd, cs + t * np, sn + t * np, true);
}
