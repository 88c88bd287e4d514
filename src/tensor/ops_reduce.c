/* ops_reduce.c: sum and mean over all elements (-> scalar, ndim 0) or over one dim (removed), and argmax over the
 * last dim. Sums accumulate in double. Backward rules: docs/derivatives.md rows "sum", "mean", "sum_dim",
 * "mean_dim" (the gradient is broadcast back, divided by the count for a mean). */
#include "ops.h"

#include <string.h>

static void reduce_all_backward(rg_tensor *node);
static void reduce_dim_backward(rg_tensor *node);
static const rg_op OP_SUM = {"sum", reduce_all_backward};
static const rg_op OP_MEAN = {"mean", reduce_all_backward};
static const rg_op OP_SUM_DIM = {"sum_dim", reduce_dim_backward};
static const rg_op OP_MEAN_DIM = {"mean_dim", reduce_dim_backward};

static rg_tensor *reduce_all(rg_ctx *c, rg_tensor *x, bool mean)
{
    rg_tensor *out = rg_node_new(c, mean ? &OP_MEAN : &OP_SUM, 0, NULL, 1, &x);
    double s = 0;
    for (int64_t i = 0; i < x->numel; i++) s += x->data[i];
    out->data[0] = (rg_real)(mean ? s / (double)x->numel : s);
    out->iarg[0] = mean;
    return out;
}

rg_tensor *rg_sum(rg_ctx *c, rg_tensor *x) { return reduce_all(c, x, false); }
rg_tensor *rg_mean(rg_ctx *c, rg_tensor *x) { return reduce_all(c, x, true); }

/* dx += g (sum) or g / numel (mean). docs/derivatives.md rows "sum", "mean". */
static void reduce_all_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    rg_real g = node->grad[0];
    if (node->iarg[0]) g /= (rg_real)x->numel;
    rg_real *dx = rg_grad_of(x);
    for (int64_t i = 0; i < x->numel; i++) dx[i] += g;
}

static rg_tensor *reduce_dim(rg_ctx *c, rg_tensor *x, int dim, bool mean)
{
    RG_ASSERT(dim >= 0 && dim < x->ndim, "%s: dim %d of a %d-D tensor", mean ? "mean_dim" : "sum_dim", dim, x->ndim);
    int shape[RG_MAX_DIMS], k = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != dim) shape[k++] = x->shape[i];
    rg_tensor *out = rg_node_new(c, mean ? &OP_MEAN_DIM : &OP_SUM_DIM, k, shape, 1, &x);
    int64_t outer = 1, inner = 1, n = x->shape[dim];
    for (int i = 0; i < dim; i++) outer *= x->shape[i];
    for (int i = dim + 1; i < x->ndim; i++) inner *= x->shape[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double s = 0;
            for (int64_t j = 0; j < n; j++) s += x->data[(o * n + j) * inner + in];
            out->data[o * inner + in] = (rg_real)(mean ? s / (double)n : s);
        }
    out->iarg[0] = dim;
    out->iarg[1] = mean;
    return out;
}

rg_tensor *rg_sum_dim(rg_ctx *c, rg_tensor *x, int dim) { return reduce_dim(c, x, dim, false); }
rg_tensor *rg_mean_dim(rg_ctx *c, rg_tensor *x, int dim) { return reduce_dim(c, x, dim, true); }

/* dx[..., j, ...] += g[...] (/ n for the mean). docs/derivatives.md rows "sum_dim", "mean_dim". */
static void reduce_dim_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int dim = (int)node->iarg[0];
    int64_t outer = 1, inner = 1, n = x->shape[dim];
    for (int i = 0; i < dim; i++) outer *= x->shape[i];
    for (int i = dim + 1; i < x->ndim; i++) inner *= x->shape[i];
    rg_real scale = node->iarg[1] ? (rg_real)1 / (rg_real)n : 1;
    rg_real *dx = rg_grad_of(x);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t in = 0; in < inner; in++)
                dx[(o * n + j) * inner + in] += scale * node->grad[o * inner + in];
}

void rg_argmax(const rg_tensor *x, int32_t *out)
{
    int n = x->ndim ? x->shape[x->ndim - 1] : 1;
    int64_t rows = x->numel / n;
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *v = x->data + r * n;
        int best = 0;
        for (int j = 1; j < n; j++)
            if (v[j] > v[best] || (v[best] != v[best] && v[j] == v[j])) best = j; /* strict >: ties stay low */
        out[r] = best;
    }
}
