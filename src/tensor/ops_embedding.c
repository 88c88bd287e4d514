/* ops_embedding.c: embedding gather. Shapes: weight [V, C], idx [idx_shape] (int32) -> [idx_shape..., C].
 * Backward rule: docs/derivatives.md row "embedding" (scatter-add into the rows of weight). */
#include "ops.h"

#include <string.h>

static void embedding_backward(rg_tensor *node);
static const rg_op OP_EMBEDDING = {"embedding", embedding_backward};

rg_tensor *rg_embedding(rg_ctx *c, rg_tensor *weight, const int32_t *idx, int idx_ndim, const int *idx_shape)
{
    char sw[64];
    RG_ASSERT(weight->ndim == 2, "embedding: weight %s must be 2-D [V, C]", rg_shape_str(weight, sw, 64));
    RG_ASSERT(idx_ndim >= 0 && idx_ndim < RG_MAX_DIMS, "embedding: %d index dims (at most %d)", idx_ndim,
              RG_MAX_DIMS - 1);
    int V = weight->shape[0], C = weight->shape[1];
    int shape[RG_MAX_DIMS];
    int64_t n = 1;
    for (int i = 0; i < idx_ndim; i++) { shape[i] = idx_shape[i]; n *= idx_shape[i]; }
    shape[idx_ndim] = C;
    rg_tensor *out = rg_node_new(c, &OP_EMBEDDING, idx_ndim + 1, shape, 1, &weight);
    int32_t *saved = rg_arena_alloc(&c->arena, (size_t)n * sizeof(int32_t));
    for (int64_t i = 0; i < n; i++) {
        RG_ASSERT(idx[i] >= 0 && idx[i] < V, "embedding %s: index %d at %lld outside [0, %d)", weight->name, idx[i],
                  (long long)i, V);
        saved[i] = idx[i];
        memcpy(out->data + i * C, weight->data + (int64_t)idx[i] * C, C * sizeof(rg_real));
    }
    out->saved = saved;
    return out;
}

/* dweight[idx[i], :] += g[i, :] for every i (repeated indices add up). docs/derivatives.md row "embedding". */
static void embedding_backward(rg_tensor *node)
{
    rg_tensor *w = node->src[0];
    int C = w->shape[1];
    int64_t n = node->numel / C;
    const int32_t *idx = node->saved;
    rg_real *dw = rg_grad_of(w);
    for (int64_t i = 0; i < n; i++) {
        rg_real *row = dw + (int64_t)idx[i] * C;
        const rg_real *g = node->grad + i * C;
        for (int j = 0; j < C; j++) row[j] += g[j];
    }
}
