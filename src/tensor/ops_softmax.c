/* ops_softmax.c: softmax and log-softmax over the last dim, masking with -inf, and cross-entropy over logits.
 * Shapes: x [..., S] -> same; cross-entropy logits [..., V] with one target per row -> scalar.
 * Masked entries are -inf; a fully masked row gives zeros (softmax) and never NaN. Backward rules:
 * docs/derivatives.md rows "softmax", "log_softmax", "masked_fill", "cross_entropy". */
#include "ops.h"
#include "fastmath.h"
#include "expf.h"

#include <string.h>
#include <tgmath.h>

static void softmax_backward(rg_tensor *node);
static void log_softmax_backward(rg_tensor *node);
static void masked_fill_backward(rg_tensor *node);
static void cross_entropy_backward(rg_tensor *node);
static const rg_op OP_SOFTMAX = {"softmax", softmax_backward};
static const rg_op OP_LOG_SOFTMAX = {"log_softmax", log_softmax_backward};
static const rg_op OP_MASKED_FILL = {"masked_fill", masked_fill_backward};
static const rg_op OP_CROSS_ENTROPY = {"cross_entropy", cross_entropy_backward};

/* Largest entry of a row (-inf for an all -inf row). */
static inline rg_real row_max(const rg_real *x, int n)
{
    rg_real m = -INFINITY;
    for (int j = 0; j < n; j++)
        if (x[j] > m) m = x[j];
    return m;
}

rg_tensor *rg_softmax(rg_ctx *c, rg_tensor *x)
{
    rg_tensor *out = rg_node_new(c, &OP_SOFTMAX, x->ndim, x->shape, 1, &x);
    out->output_saved = true; /* the backward reads y */
    int n = x->shape[x->ndim - 1];
    int64_t rows = x->numel / n;
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *in = x->data + r * n;
        rg_real *o = out->data + r * n;
        rg_real m = row_max(in, n);
        if (m == -INFINITY) { memset(o, 0, n * sizeof(rg_real)); continue; }
        rg_real s = 0;
        for (int j = 0; j < n; j++) { o[j] = exp(in[j] - m); s += o[j]; }
        rg_real inv = 1 / s;
        for (int j = 0; j < n; j++) o[j] *= inv;
    }
    return out;
}

/* y = softmax(x): dx += y * (g - sum_j g_j y_j). docs/derivatives.md row "softmax". */
static void softmax_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int n = x->shape[x->ndim - 1];
    int64_t rows = x->numel / n;
    rg_real *dx = rg_grad_of(x);
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *y = node->data + r * n, *g = node->grad + r * n;
        rg_real dot = 0;
        for (int j = 0; j < n; j++) dot += g[j] * y[j];
        for (int j = 0; j < n; j++) dx[r * n + j] += y[j] * (g[j] - dot);
    }
}

rg_tensor *rg_log_softmax(rg_ctx *c, rg_tensor *x)
{
    rg_tensor *out = rg_node_new(c, &OP_LOG_SOFTMAX, x->ndim, x->shape, 1, &x);
    out->output_saved = true; /* the backward reads y */
    int n = x->shape[x->ndim - 1];
    int64_t rows = x->numel / n;
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *in = x->data + r * n;
        rg_real *o = out->data + r * n;
        rg_real m = row_max(in, n);
        if (m == -INFINITY) { for (int j = 0; j < n; j++) o[j] = -INFINITY; continue; }
        rg_real s = 0;
        for (int j = 0; j < n; j++) s += exp(in[j] - m);
        rg_real lse = m + log(s);
        for (int j = 0; j < n; j++) o[j] = in[j] - lse;
    }
    return out;
}

/* y = log_softmax(x): dx += g - exp(y) * sum_j g_j; a fully -inf row passes no gradient.
 * docs/derivatives.md row "log_softmax". */
static void log_softmax_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int n = x->shape[x->ndim - 1];
    int64_t rows = x->numel / n;
    rg_real *dx = rg_grad_of(x);
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *y = node->data + r * n, *g = node->grad + r * n;
        if (row_max(y, n) == -INFINITY) continue;
        rg_real s = 0;
        for (int j = 0; j < n; j++) s += g[j];
        for (int j = 0; j < n; j++) dx[r * n + j] += g[j] - exp(y[j]) * s;
    }
}

rg_tensor *rg_masked_fill_neg_inf(rg_ctx *c, rg_tensor *x, const uint8_t *mask)
{
    char sx[64];
    RG_ASSERT(x->ndim >= 2, "masked_fill: x %s needs >= 2 dims", rg_shape_str(x, sx, 64));
    int T = x->shape[x->ndim - 2], S = x->shape[x->ndim - 1];
    rg_tensor *out = rg_node_new(c, &OP_MASKED_FILL, x->ndim, x->shape, 1, &x);
    uint8_t *m = rg_arena_alloc(&c->arena, (size_t)T * S);
    memcpy(m, mask, (size_t)T * S);
    out->saved = m;
    int64_t mats = x->numel / ((int64_t)T * S);
    for (int64_t b = 0; b < mats; b++)
        for (int64_t k = 0; k < (int64_t)T * S; k++)
            out->data[b * T * S + k] = m[k] ? -INFINITY : x->data[b * T * S + k];
    return out;
}

/* dx += g where the mask is 0. docs/derivatives.md row "masked_fill". */
static void masked_fill_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int64_t ts = (int64_t)x->shape[x->ndim - 2] * x->shape[x->ndim - 1];
    const uint8_t *m = node->saved;
    rg_real *dx = rg_grad_of(x);
    for (int64_t i = 0; i < x->numel; i++)
        if (!m[i % ts]) dx[i] += node->grad[i];
}

rg_tensor *rg_cross_entropy(rg_ctx *c, rg_tensor *logits, const int32_t *targets, int32_t ignore_index)
{
    int V = logits->shape[logits->ndim - 1];
    int64_t rows = logits->numel / V;
    rg_tensor *out = rg_node_new(c, &OP_CROSS_ENTROPY, 0, NULL, 1, &logits);
    rg_real *lse = rg_arena_alloc(&c->arena, (size_t)rows * sizeof(rg_real));
    int32_t *tg = rg_arena_alloc(&c->arena, (size_t)rows * sizeof(int32_t));
    memcpy(tg, targets, (size_t)rows * sizeof(int32_t));
    double total = 0;
    int64_t count = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (tg[r] == ignore_index) continue;
        RG_ASSERT(tg[r] >= 0 && tg[r] < V, "cross_entropy: target %d at row %lld outside [0, %d)", tg[r],
                  (long long)r, V);
        const rg_real *x = logits->data + r * V;
        rg_real m = row_max(x, V), s = 0;
        for (int j = 0; j < V; j++) s += exp(x[j] - m);
        lse[r] = m + log(s);
        total += (double)(lse[r] - x[tg[r]]);
        count++;
    }
    out->data[0] = count ? (rg_real)(total / (double)count) : 0;
    out->saved = lse;
    out->saved2 = tg;
    out->iarg[0] = count;
    out->iarg[1] = ignore_index;
    return out;
}

/* d[j] += scale * exp(x[j] - lse) for one row of V logits; rg_expf is libm's expf bit for bit (expf.h), in a loop
 * that vectorizes. */
RG_VECTORIZE static void ce_row_grad(rg_real *restrict d, const rg_real *restrict x, rg_real lse, rg_real scale, int V)
{
#ifdef RG_DOUBLE
    for (int j = 0; j < V; j++) d[j] += scale * exp(x[j] - lse);
#else
    for (int j = 0; j < V; j++) d[j] += scale * rg_expf(x[j] - lse);
#endif
}

/* loss = mean_r (lse_r - x[r, t_r]): dx[r, :] += g / count * (softmax(x[r]) - onehot(t_r)) on counted rows.
 * docs/derivatives.md row "cross_entropy". */
static void cross_entropy_backward(rg_tensor *node)
{
    rg_tensor *logits = node->src[0];
    int64_t count = node->iarg[0];
    if (count == 0) return;
    int V = logits->shape[logits->ndim - 1];
    int64_t rows = logits->numel / V;
    const rg_real *lse = node->saved;
    const int32_t *tg = node->saved2;
    rg_real scale = node->grad[0] / (rg_real)count;
    rg_real *dx = rg_grad_of(logits);
    for (int64_t r = 0; r < rows; r++) {
        if (tg[r] == (int32_t)node->iarg[1]) continue;
        const rg_real *x = logits->data + r * V;
        rg_real *d = dx + r * V;
        ce_row_grad(d, x, lse[r], scale, V);
        d[tg[r]] -= scale;
    }
}
