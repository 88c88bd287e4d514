/* ops.h: the differentiable tensor ops of the core (forward kernels here in src/tensor, each paired with its
 * analytic backward in the same file; docs/derivatives.md has one row per op with its formula and source).
 *
 * Every op takes the step context first, writes a fresh contiguous result from the context's arena, and, when the
 * context records and a source requires grad, records a node for rg_backward. Shape mismatches abort naming the
 * op and both shapes (they are programming errors). Shapes use PyTorch order; "[..., K]" means any leading dims.
 */
#ifndef RG_OPS_H
#define RG_OPS_H

#include "tensor.h"

/* ---- matrix products (ops_matmul.c); all through cblas_sgemm (cblas_dgemm in the float64 build) ---- */

/* Matrix product of the last two dims: op(a) [..., M, K] x op(b) [..., K, N] -> [..., M, N], where op transposes
 * the last two dims when trans_a / trans_b is set. Leading (batch) dims of a and b must be equal, or b may be 2-D
 * (one matrix shared by the whole batch). torch.matmul semantics for these cases. */
rg_tensor *rg_matmul(rg_ctx *c, rg_tensor *a, rg_tensor *b, bool trans_a, bool trans_b);
/* y = x W^T + b (torch.nn.functional.linear): x [..., in], W [out, in], bias [out] or NULL -> [..., out]. */
rg_tensor *rg_linear(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *bias);

/* ---- fused (ops_fused.c): one node each, the intermediate never stored twice ---- */

/* gelu(x W^T + b) (rg_gelu of rg_linear in one op): x [..., in], W [out, in], b [out] (required) -> [..., out]. */
rg_tensor *rg_linear_gelu(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *b);
/* r + x W^T + b (rg_add of r and rg_linear in one op, the add folded into the GEMM with beta = 1): r [..., out]
 * with the same leading dims as x. */
rg_tensor *rg_linear_residual(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *b, rg_tensor *r);

/* ---- elementwise (ops_elementwise.c) ---- */

/* a (+ - *) b with broadcasting (NumPy/PyTorch rules: shapes aligned from the right, each dim equal or 1 in one
 * of them). The result has the broadcast shape; the gradient of a broadcast operand is summed back to its shape. */
rg_tensor *rg_add(rg_ctx *c, rg_tensor *a, rg_tensor *b);
rg_tensor *rg_sub(rg_ctx *c, rg_tensor *a, rg_tensor *b);
rg_tensor *rg_mul(rg_ctx *c, rg_tensor *a, rg_tensor *b);
/* x * alpha. */
rg_tensor *rg_scale(rg_ctx *c, rg_tensor *x, double alpha);
rg_tensor *rg_exp(rg_ctx *c, rg_tensor *x);
/* Natural log; log(0) = -inf, negative inputs give NaN (as torch.log). */
rg_tensor *rg_log(rg_ctx *c, rg_tensor *x);
rg_tensor *rg_tanh(rg_ctx *c, rg_tensor *x);
rg_tensor *rg_relu(rg_ctx *c, rg_tensor *x);
/* GELU, tanh approximation (Hendrycks & Gimpel 2016, eq. for GELU(x) ~ 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)));
 * torch.nn.functional.gelu(x, approximate="tanh")). */
rg_tensor *rg_gelu(rg_ctx *c, rg_tensor *x);

/* ---- softmax family (ops_softmax.c) ---- */

/* Softmax over the last dim, max-subtracted. Entries equal to -inf get probability 0; a row that is entirely
 * -inf gives all zeros (never NaN) and passes no gradient. */
rg_tensor *rg_softmax(rg_ctx *c, rg_tensor *x);
/* log(softmax(x)) over the last dim, computed as x - max - log(sum(exp(x - max))). A fully -inf row gives -inf. */
rg_tensor *rg_log_softmax(rg_ctx *c, rg_tensor *x);
/* Copy of x [..., T, S] with entries where mask[t*S + s] != 0 set to -inf; mask [T, S] is shared by all leading
 * dims. The gradient of masked entries is 0. */
rg_tensor *rg_masked_fill_neg_inf(rg_ctx *c, rg_tensor *x, const uint8_t *mask);
/* Cross-entropy of logits [..., V] against integer targets (one per row of logits, row-major over the leading
 * dims), torch.nn.functional.cross_entropy(reduction="mean", ignore_index=ignore_index): the mean of
 * -log_softmax(logits)[row, target] over rows whose target != ignore_index; 0 (and zero gradient) when every
 * target is ignored. A target outside [0, V) that is not ignore_index aborts. Returns a scalar (ndim 0). */
rg_tensor *rg_cross_entropy(rg_ctx *c, rg_tensor *logits, const int32_t *targets, int32_t ignore_index);

/* ---- normalization (ops_norm.c) ---- */

/* LayerNorm over the last dim (Ba et al. 2016; torch.nn.functional.layer_norm): (x - mean) / sqrt(var + eps) * w
 * + b, biased variance, two-pass (mean first, then squared deviations). x [..., C], w [C], b [C] (b may be NULL). */
rg_tensor *rg_layernorm(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *b, double eps);

/* ---- gather (ops_embedding.c) ---- */

/* out[..., :] = weight[idx[...], :] (torch.nn.functional.embedding). weight [V, C]; idx has idx_ndim dims with
 * shape idx_shape and values in [0, V) (aborts otherwise: check user input before); result [idx_shape..., C].
 * The gradient scatter-adds into the rows of weight, so repeated indices add up. */
rg_tensor *rg_embedding(rg_ctx *c, rg_tensor *weight, const int32_t *idx, int idx_ndim, const int *idx_shape);

/* ---- shape (ops_shape.c) ---- */

/* Same data, new shape (numel must match); a view: no copy. */
rg_tensor *rg_reshape(rg_ctx *c, rg_tensor *x, int ndim, const int *shape);
/* out.shape[i] = x.shape[perm[i]] (torch.permute); materialized contiguous. */
rg_tensor *rg_permute(rg_ctx *c, rg_tensor *x, const int *perm);
/* Swaps two dims (torch.transpose); materialized contiguous. */
rg_tensor *rg_transpose(rg_ctx *c, rg_tensor *x, int dim0, int dim1);
/* x[..., start:end, ...] along dim (0 <= start < end <= shape[dim]); materialized. */
rg_tensor *rg_slice(rg_ctx *c, rg_tensor *x, int dim, int start, int end);
/* Concatenation of n (<= RG_MAX_SRC) tensors along dim; other dims must match. */
rg_tensor *rg_concat(rg_ctx *c, rg_tensor *const *xs, int n, int dim);

/* ---- reductions (ops_reduce.c) ---- */

/* Sum / mean of all elements: a scalar (ndim 0). */
rg_tensor *rg_sum(rg_ctx *c, rg_tensor *x);
rg_tensor *rg_mean(rg_ctx *c, rg_tensor *x);
/* Sum / mean over one dim, which is removed (torch.sum(x, dim), keepdim=False). A 1-D input gives a scalar. */
rg_tensor *rg_sum_dim(rg_ctx *c, rg_tensor *x, int dim);
rg_tensor *rg_mean_dim(rg_ctx *c, rg_tensor *x, int dim);
/* Index of the largest entry of each row of the last dim, ties to the lowest index (NaN never wins). Writes
 * numel/last-dim values to out. Not differentiable; records nothing. */
void rg_argmax(const rg_tensor *x, int32_t *out);

#endif
