/* ops_fused.c: fused ops of the transformer block, each one node with one analytic backward, so that an
 * intermediate is neither written nor read back a second time.
 *
 *   rg_linear_gelu      y = gelu(x W^T + b)          x [..., in], W [out, in], b [out] -> [..., out]
 *                       Forward: the GEMM writes pre = x W^T (beta 0), one pass adds the bias in place and writes
 *                       y = gelu(pre) (pre is saved). Backward: dpre = G gelu'(pre) (written, never zero-filled),
 *                       db += sum_rows dpre, dx (+)= dpre W, dW += dpre^T x. Same formulas as rg_gelu after
 *                       rg_linear (docs/derivatives.md rows "linear" and "gelu").
 *   rg_linear_residual  y = r + x W^T + b            r [..., out] (the residual stream)
 *                       Forward: one pass writes r + b into y, the GEMM adds x W^T with beta = 1 (the residual add
 *                       folded into the output GEMM). Backward: dr += G, db += sum_rows G, dx (+)= G W,
 *                       dW += G^T x (rows "add" and "linear").
 * "(+)=": when the input's gradient buffer is fresh (rg_grad_fresh) the GEMM writes it (beta 0) instead of
 * accumulating into a zero-filled buffer. With Linear's products in bf16 (rg_set_linear_precision) the passes also
 * write the bf16 copies the products read, as they write or read the float32 values: y's (rg_linear_bf16_slot),
 * dpre's and G's, so that no separate conversion pass reads them again. */
#include "ops.h"
#include "gemm.h"
#include "fastmath.h"
#include "pool.h"

#include <string.h>

static void linear_gelu_backward(rg_tensor *node);
static void linear_residual_backward(rg_tensor *node);
static const rg_op OP_LINEAR_GELU = {"linear_gelu", linear_gelu_backward};
static const rg_op OP_LINEAR_RESIDUAL = {"linear_residual", linear_residual_backward};

static inline bool wants_grad(const rg_tensor *t) { return t && t->requires_grad; }

#define GELU_C 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_A 0.044715

static void check_linear(const char *op, const rg_tensor *x, const rg_tensor *w, const rg_tensor *b)
{
    char sx[64], sw[64], sb[64];
    int in = x->shape[x->ndim - 1];
    if (w->ndim != 2 || w->shape[1] != in || !b || b->ndim != 1 || b->shape[0] != w->shape[0])
        RG_FATAL("%s: x %s, weight %s (want [out, %d]), bias %s (want [out])", op, rg_shape_str(x, sx, 64),
                 rg_shape_str(w, sw, 64), in, b ? rg_shape_str(b, sb, 64) : "none");
}

/* The passes below run over the pool (rg_pool_for) when they are large: the ones without a sum over rows split
 * the rows, the ones with one (the bias gradient) split the columns, each part summing its columns over all rows in
 * row order, so every thread count gives the bits of one thread. */
typedef struct {
    rg_real *y, *pre, *d, *db, *dres;
    uint16_t *y16, *d16, *g16; /* bf16 copies written beside y, d and g (rg_linear_bf16_slot), or NULL */
    const rg_real *b, *g, *res;
    int64_t rows;
    int n;
    bool fresh;
} pass;

/* rows [r0, r1): pre[r, :] += b; y = 0.5 pre (1 + tanh(c (pre + a pre^3))); y16 (if not NULL) = bf16(y) */
RG_VECTORIZE static void bias_gelu(rg_real *restrict y, uint16_t *restrict y16, rg_real *restrict pre,
                                   const rg_real *restrict b, int64_t r0, int64_t r1, int n)
{
    for (int64_t r = r0; r < r1; r++) {
        rg_real *p = pre + r * n, *o = y + r * n;
        for (int j = 0; j < n; j++) {
            rg_real v = p[j] + b[j];
            p[j] = v;
            o[j] = (rg_real)0.5 * v * (1 + rg_tanh_fast((rg_real)GELU_C * (v + (rg_real)GELU_A * v * v * v)));
        }
        if (y16) rg_bf16_rows(y16 + r * n, n, o, n, 1, n);
    }
}

static void bias_gelu_part(void *p, int64_t r0, int64_t r1)
{
    const pass *a = p;
    bias_gelu(a->y, a->y16, a->pre, a->b, r0, r1, a->n);
}

/* columns [j0, j1): d[r, j] = g gelu'(pre) and db[j] += sum_rows d; d16 (if not NULL) = bf16(d) */
RG_VECTORIZE static void gelu_grad_bias(rg_real *restrict d, uint16_t *restrict d16, rg_real *restrict db,
                                        const rg_real *restrict g, const rg_real *restrict pre, int64_t rows, int n,
                                        int j0, int j1)
{
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *p = pre + r * n, *gr = g + r * n;
        rg_real *dr = d + r * n;
        for (int j = j0; j < j1; j++) {
            rg_real v = p[j], t = rg_tanh_fast((rg_real)GELU_C * (v + (rg_real)GELU_A * v * v * v));
            rg_real dt = (rg_real)GELU_C * (1 + 3 * (rg_real)GELU_A * v * v);
            dr[j] = gr[j] * ((rg_real)0.5 * (1 + t) + (rg_real)0.5 * v * (1 - t * t) * dt);
        }
        if (db)
            for (int j = j0; j < j1; j++) db[j] += dr[j];
        if (d16) rg_bf16_rows(d16 + r * n + j0, n, dr + j0, n, 1, j1 - j0);
    }
}

static void gelu_grad_bias_part(void *p, int64_t j0, int64_t j1)
{
    const pass *a = p;
    gelu_grad_bias(a->d, a->d16, a->db, a->g, a->pre, a->rows, a->n, (int)j0, (int)j1);
}

/* rows [r0, r1): y[r, :] = res[r, :] + b */
RG_VECTORIZE static void residual_bias(rg_real *restrict y, const rg_real *restrict res, const rg_real *restrict b,
                                       int64_t r0, int64_t r1, int n)
{
    for (int64_t r = r0; r < r1; r++)
        for (int j = 0; j < n; j++) y[r * n + j] = res[r * n + j] + b[j];
}

static void residual_bias_part(void *p, int64_t r0, int64_t r1)
{
    const pass *a = p;
    residual_bias(a->y, a->res, a->b, r0, r1, a->n);
}

/* columns [j0, j1): db += sum_rows g; dres (if not NULL) = or += g; g16 (if not NULL) = bf16(g) */
RG_VECTORIZE static void residual_grads(rg_real *restrict db, rg_real *restrict dres, uint16_t *restrict g16,
                                        bool fresh, const rg_real *restrict g, int64_t rows, int n, int j0, int j1)
{
    for (int64_t r = 0; r < rows; r++) {
        const rg_real *gr = g + r * n;
        if (g16) rg_bf16_rows(g16 + r * n + j0, n, gr + j0, n, 1, j1 - j0);
        if (db)
            for (int j = j0; j < j1; j++) db[j] += gr[j];
        if (dres && fresh)
            for (int j = j0; j < j1; j++) dres[r * n + j] = gr[j];
        else if (dres)
            for (int j = j0; j < j1; j++) dres[r * n + j] += gr[j];
    }
}

static void residual_grads_part(void *p, int64_t j0, int64_t j1)
{
    const pass *a = p;
    residual_grads(a->db, a->dres, a->g16, a->fresh, a->g, a->rows, a->n, (int)j0, (int)j1);
}

rg_tensor *rg_linear_gelu(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *b)
{
    check_linear("linear_gelu", x, w, b);
    const int in = w->shape[1], out_f = w->shape[0];
    const int64_t rows = x->numel / in;
    int shape[RG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = out_f;
    rg_tensor *y = rg_node_new(c, &OP_LINEAR_GELU, x->ndim, shape, 3, (rg_tensor *[]){x, w, b});
    rg_real *pre = rg_arena_alloc(&c->arena, (size_t)(rows * out_f) * sizeof(rg_real));
    rg_linear_product(x, w, 0, pre);
    pass a = {.y = y->data, .y16 = rg_linear_bf16_slot(y), .pre = pre, .b = b->data, .n = out_f};
    rg_pool_for(rows, rg_pool_part_min(out_f), 1, bias_gelu_part, &a);
    y->saved = pre;
    return y;
}

static void linear_gelu_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0], *w = node->src[1], *b = node->src[2];
    const int in = w->shape[1], out_f = w->shape[0];
    const int64_t rows = x->numel / in;
    rg_real *d = rg_arena_alloc(&node->ctx->arena, (size_t)(rows * out_f) * sizeof(rg_real));
    pass a = {.d = d, .d16 = rg_linear_grad_bf16(node->ctx, x, w, rows * out_f),
              .db = wants_grad(b) ? rg_grad_of(b) : NULL, .g = node->grad, .pre = node->saved, .rows = rows,
              .n = out_f};
    rg_pool_for(out_f, rg_pool_part_min(rows), 16, gelu_grad_bias_part, &a);
    rg_linear_grads(node->ctx, x, w, d, a.d16);
}

rg_tensor *rg_linear_residual(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *b, rg_tensor *res)
{
    check_linear("linear_residual", x, w, b);
    const int in = w->shape[1], out_f = w->shape[0];
    const int64_t rows = x->numel / in;
    char sr[64], sx[64];
    if (res->numel != rows * out_f || res->shape[res->ndim - 1] != out_f || res->ndim != x->ndim)
        RG_FATAL("linear_residual: residual %s does not match x %s with %d outputs", rg_shape_str(res, sr, 64),
                 rg_shape_str(x, sx, 64), out_f);
    rg_tensor *y = rg_node_new(c, &OP_LINEAR_RESIDUAL, res->ndim, res->shape, 4, (rg_tensor *[]){x, w, b, res});
    pass a = {.y = y->data, .res = res->data, .b = b->data, .n = out_f};
    rg_pool_for(rows, rg_pool_part_min(out_f), 1, residual_bias_part, &a);
    rg_linear_product(x, w, 1, y->data);
    return y;
}

static void linear_residual_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0], *w = node->src[1], *b = node->src[2], *res = node->src[3];
    const int in = w->shape[1], out_f = w->shape[0];
    const int64_t rows = x->numel / in;
    bool fresh = false;
    rg_real *dres = wants_grad(res) ? rg_grad_fresh(res, &fresh) : NULL;
    pass a = {.db = wants_grad(b) ? rg_grad_of(b) : NULL, .dres = dres,
              .g16 = rg_linear_grad_bf16(node->ctx, x, w, rows * out_f), .fresh = fresh, .g = node->grad, .rows = rows,
              .n = out_f};
    rg_pool_for(out_f, rg_pool_part_min(rows), 16, residual_grads_part, &a);
    rg_linear_grads(node->ctx, x, w, node->grad, a.g16);
}
