/* ops_shape.c: reshape (a view), permute/transpose, slice and concat (materialized contiguous copies).
 * Backward rules: docs/derivatives.md rows "reshape", "permute", "slice", "concat": each routes the gradient
 * back to where the element came from. */
#include "ops.h"

#include <string.h>

static void reshape_backward(rg_tensor *node);
static void permute_backward(rg_tensor *node);
static void slice_backward(rg_tensor *node);
static void concat_backward(rg_tensor *node);
static const rg_op OP_RESHAPE = {"reshape", reshape_backward};
static const rg_op OP_PERMUTE = {"permute", permute_backward};
static const rg_op OP_SLICE = {"slice", slice_backward};
static const rg_op OP_CONCAT = {"concat", concat_backward};

rg_tensor *rg_reshape(rg_ctx *c, rg_tensor *x, int ndim, const int *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    if (n != x->numel) {
        char sx[64];
        RG_FATAL("reshape: %s has %lld elements, the new shape %lld", rg_shape_str(x, sx, 64), (long long)x->numel,
                 (long long)n);
    }
    return rg_node_new_view(c, &OP_RESHAPE, ndim, shape, 1, &x, x->data);
}

/* dx += g in the same element order. docs/derivatives.md row "reshape". */
static void reshape_backward(rg_tensor *node)
{
    rg_real *dx = rg_grad_of(node->src[0]);
    for (int64_t i = 0; i < node->numel; i++) dx[i] += node->grad[i];
}

/* For output index (o0..o3) of a permute padded to 4 dims: the input offset is sum_i o_i * st[i]. */
static void permute_strides(const rg_tensor *x, const int64_t *perm, int shape4[4], int64_t st[4])
{
    int pad = 4 - x->ndim;
    for (int i = 0; i < 4; i++) {
        if (i < pad) { shape4[i] = 1; st[i] = 0; continue; }
        int d = (int)perm[i - pad];
        shape4[i] = x->shape[d];
        st[i] = x->stride[d];
    }
}

rg_tensor *rg_permute(rg_ctx *c, rg_tensor *x, const int *perm)
{
    int shape[RG_MAX_DIMS], seen = 0;
    for (int i = 0; i < x->ndim; i++) {
        RG_ASSERT(perm[i] >= 0 && perm[i] < x->ndim && !(seen & (1 << perm[i])),
                  "permute: perm[%d] = %d is not a permutation of 0..%d", i, perm[i], x->ndim - 1);
        seen |= 1 << perm[i];
        shape[i] = x->shape[perm[i]];
    }
    rg_tensor *out = rg_node_new(c, &OP_PERMUTE, x->ndim, shape, 1, &x);
    for (int i = 0; i < x->ndim; i++) out->iarg[i] = perm[i];
    int s4[4];
    int64_t st[4], k = 0;
    permute_strides(x, out->iarg, s4, st);
    for (int a = 0; a < s4[0]; a++)
        for (int b = 0; b < s4[1]; b++)
            for (int d = 0; d < s4[2]; d++) {
                const rg_real *src = x->data + a * st[0] + b * st[1] + d * st[2];
                for (int e = 0; e < s4[3]; e++) out->data[k++] = src[e * st[3]];
            }
    return out;
}

/* dx = permute(g, perm^-1). docs/derivatives.md row "permute" (transpose included). */
static void permute_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    rg_real *dx = rg_grad_of(x);
    int s4[4];
    int64_t st[4], k = 0;
    permute_strides(x, node->iarg, s4, st);
    for (int a = 0; a < s4[0]; a++)
        for (int b = 0; b < s4[1]; b++)
            for (int d = 0; d < s4[2]; d++) {
                rg_real *dst = dx + a * st[0] + b * st[1] + d * st[2];
                for (int e = 0; e < s4[3]; e++) dst[e * st[3]] += node->grad[k++];
            }
}

rg_tensor *rg_transpose(rg_ctx *c, rg_tensor *x, int dim0, int dim1)
{
    RG_ASSERT(dim0 >= 0 && dim0 < x->ndim && dim1 >= 0 && dim1 < x->ndim, "transpose: dims %d, %d of a %d-D tensor",
              dim0, dim1, x->ndim);
    int perm[RG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) perm[i] = i;
    perm[dim0] = dim1;
    perm[dim1] = dim0;
    return rg_permute(c, x, perm);
}

/* outer = product of dims before `dim`, inner = product after it. */
static void split_at(const rg_tensor *t, int dim, int64_t *outer, int64_t *inner)
{
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < dim; i++) *outer *= t->shape[i];
    for (int i = dim + 1; i < t->ndim; i++) *inner *= t->shape[i];
}

rg_tensor *rg_slice(rg_ctx *c, rg_tensor *x, int dim, int start, int end)
{
    char sx[64];
    RG_ASSERT(dim >= 0 && dim < x->ndim && start >= 0 && start < end && end <= x->shape[dim],
              "slice: [%d:%d] along dim %d of %s", start, end, dim, rg_shape_str(x, sx, 64));
    int shape[RG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[dim] = end - start;
    rg_tensor *out = rg_node_new(c, &OP_SLICE, x->ndim, shape, 1, &x);
    out->iarg[0] = dim;
    out->iarg[1] = start;
    int64_t outer, inner, n = end - start, full = x->shape[dim];
    split_at(x, dim, &outer, &inner);
    for (int64_t o = 0; o < outer; o++)
        memcpy(out->data + o * n * inner, x->data + (o * full + start) * inner, (size_t)(n * inner) * sizeof(rg_real));
    return out;
}

/* dx[..., start:end, ...] += g. docs/derivatives.md row "slice". */
static void slice_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int dim = (int)node->iarg[0];
    int64_t start = node->iarg[1], outer, inner, n = node->shape[dim], full = x->shape[dim];
    split_at(x, dim, &outer, &inner);
    rg_real *dx = rg_grad_of(x);
    for (int64_t o = 0; o < outer; o++) {
        rg_real *d = dx + (o * full + start) * inner;
        const rg_real *g = node->grad + o * n * inner;
        for (int64_t i = 0; i < n * inner; i++) d[i] += g[i];
    }
}

rg_tensor *rg_concat(rg_ctx *c, rg_tensor *const *xs, int n, int dim)
{
    RG_ASSERT(n >= 1 && n <= RG_MAX_SRC, "concat: %d tensors (1..%d)", n, RG_MAX_SRC);
    rg_tensor *x0 = xs[0];
    RG_ASSERT(dim >= 0 && dim < x0->ndim, "concat: dim %d of a %d-D tensor", dim, x0->ndim);
    int shape[RG_MAX_DIMS];
    memcpy(shape, x0->shape, sizeof shape);
    shape[dim] = 0;
    for (int k = 0; k < n; k++) {
        bool ok = xs[k]->ndim == x0->ndim;
        for (int i = 0; ok && i < x0->ndim; i++) ok = i == dim || xs[k]->shape[i] == x0->shape[i];
        if (!ok) {
            char s0[64], sk[64];
            RG_FATAL("concat: along dim %d, %s and %s differ elsewhere", dim, rg_shape_str(x0, s0, 64),
                     rg_shape_str(xs[k], sk, 64));
        }
        shape[dim] += xs[k]->shape[dim];
    }
    rg_tensor *out = rg_node_new(c, &OP_CONCAT, x0->ndim, shape, n, xs);
    out->iarg[0] = dim;
    int64_t outer, inner, total = shape[dim], off = 0;
    split_at(x0, dim, &outer, &inner);
    for (int k = 0; k < n; k++) {
        int64_t nk = xs[k]->shape[dim];
        for (int64_t o = 0; o < outer; o++)
            memcpy(out->data + (o * total + off) * inner, xs[k]->data + o * nk * inner,
                   (size_t)(nk * inner) * sizeof(rg_real));
        off += nk;
    }
    return out;
}

/* dx_k += g[..., off_k : off_k + n_k, ...]. docs/derivatives.md row "concat". */
static void concat_backward(rg_tensor *node)
{
    int dim = (int)node->iarg[0];
    int64_t outer, inner, total = node->shape[dim], off = 0;
    split_at(node, dim, &outer, &inner);
    for (int k = 0; k < node->nsrc; k++) {
        rg_tensor *x = node->src[k];
        int64_t nk = x->shape[dim];
        if (x->requires_grad) {
            rg_real *dx = rg_grad_of(x);
            for (int64_t o = 0; o < outer; o++) {
                const rg_real *g = node->grad + (o * total + off) * inner;
                rg_real *d = dx + o * nk * inner;
                for (int64_t i = 0; i < nk * inner; i++) d[i] += g[i];
            }
        }
        off += nk;
    }
}
