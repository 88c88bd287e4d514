/* autograd.h: reverse-mode differentiation over the define-by-run tape of a context, and the finite-difference
 * gradient checker.
 *
 * Ops (src/tensor/ops.h and the nn modules) record a node per result when the context records and a source
 * requires grad. rg_backward seeds d(loss) and walks the tape in reverse creation order (a topological order),
 * calling each node's op->backward, which ACCUMULATES into its sources' gradients (a tensor used on several paths
 * receives every contribution). Parameter gradients persist across backward calls until zeroed (PyTorch .grad
 * semantics); gradients of intermediates live in the step arena and are re-zeroed by every backward. The formula
 * of each rule is listed in docs/derivatives.md.
 */
#ifndef RG_AUTOGRAD_H
#define RG_AUTOGRAD_H

#include "../tensor/tensor.h"

/* Back-propagates from `loss`, a tensor recorded on context c. seed: d(final)/d(loss), loss->numel values, or NULL
 * for a scalar loss (seed 1). Aborts with a message on misuse: a non-scalar loss without a seed, a loss from
 * another context or from before the last rg_ctx_reset, a tensor saved for backward that was modified in place
 * since (version counter), an op without a backward rule, or a rule that wrote outside a gradient's shape. */
void rg_backward(rg_ctx *c, rg_tensor *loss, const rg_real *seed);

/* Sets t's gradient to zero (parameters and leaves). */
void rg_zero_grad(rg_tensor *t);

/* A scalar function of `inputs` built from ops on c (which is reset before each call). */
typedef rg_tensor *(*rg_gradcheck_fn)(rg_ctx *c, rg_tensor **inputs, void *user);

/* Compares the analytic gradient of f with central finite differences (f(x+h) - f(x-h)) / 2h, element by element,
 * for every input (parameters from rg_param_new; their gradients are zeroed first and hold the analytic gradient
 * afterwards). Writes per input the error max_j |analytic_j - numeric_j| / max(max_j |numeric_j|, max_j
 * |analytic_j|, 1e-12) to rel_err[i] (may be NULL) and returns the largest. Needs the float64 build (aborts in
 * the float32 one, where rounding drowns the check); h = 1e-6 suits inputs of order 1. */
double rg_gradcheck(rg_gradcheck_fn f, void *user, rg_tensor **inputs, int n_inputs, double h, double *rel_err);

#endif
