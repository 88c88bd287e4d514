/* ops_matmul.c: matrix products and Linear. Shapes: rg_matmul op(a) [..., M, K] x op(b) [..., K, N] -> [..., M, N]
 * (b may be 2-D, shared over the batch); rg_linear x [..., in], W [out, in], b [out] -> [..., out].
 * Every product is one GEMM (a batched product is one GEMM per batch entry, or a single GEMM with the batch
 * folded into M when b is shared). Backward rules: docs/derivatives.md rows "matmul" and "linear".
 * Linear's three products (here and in ops_fused.c) go through rg_linear_product / rg_linear_grads, which honour
 * rg_set_linear_precision (tensor.h): float32 rg_gemm, or bf16 operands on oneDNN (rg_gemm_bf16) with each
 * operand's bf16 copy made once (tensor.h, field bf16); rg_linear's bias is broadcast into y before an accumulating
 * product in float32, and added by oneDNN (rg_gemm_bf16_bias) in bf16. */
#include "ops.h"
#include "gemm.h"
#include "fastmath.h"
#include "transpose.h"
#include "pool.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- precision */

static rg_precision linear_precision = RG_PRECISION_FP32;

rg_status rg_set_linear_precision(rg_precision p)
{
    char why[256];
    if (p != RG_PRECISION_FP32 && p != RG_PRECISION_BF16)
        return rg_error(RG_ERR_ARG, "linear precision %d: not fp32 (0) or bf16 (1)", (int)p);
    if (p == RG_PRECISION_BF16 && !rg_bf16_supported(why, sizeof why))
        return rg_error(RG_ERR_ARG, "precision bf16: %s", why);
    linear_precision = p;
    return RG_OK;
}

rg_precision rg_get_linear_precision(void) { return linear_precision; }

const char *rg_precision_name(rg_precision p) { return p == RG_PRECISION_BF16 ? "bf16" : "fp32"; }

/* The memory of a derived copy of t (bytes, the same for every version of t): reused for a parameter, fresh arena
 * memory for an intermediate. NULL when d is still current (tensor.h rg_derived: same data, version and derivation
 * epoch; nothing to recompute). */
static void *derived_memory(rg_tensor *t, rg_derived *d, size_t bytes)
{
    if (rg_derived_current(t, d)) return NULL;
    if (t->is_param) {
        if (!d->p && !(d->p = malloc(bytes))) RG_FATAL("a derived copy of %s: out of memory", t->name);
    } else {
        RG_ASSERT(t->ctx, "a derived copy of %s: the tensor has no context", t->name);
        d->p = rg_arena_alloc(&t->ctx->arena, bytes);
    }
    d->of = t->data;
    d->version = t->version;
    d->epoch = rg_derivation_epoch();
    return d->p;
}

uint16_t *rg_linear_bf16_slot(rg_tensor *t)
{
#ifndef RG_DOUBLE
    if (linear_precision == RG_PRECISION_BF16)
        return derived_memory(t, &t->bf16, (size_t)t->numel * sizeof(uint16_t));
#endif
    (void)t;
    return NULL;
}

static inline bool wants_grad(const rg_tensor *t) { return t && t->requires_grad; }

uint16_t *rg_linear_grad_bf16(rg_ctx *c, const rg_tensor *x, const rg_tensor *w, int64_t n)
{
    if (linear_precision != RG_PRECISION_BF16 || !(wants_grad(x) || wants_grad(w))) return NULL;
    return rg_arena_alloc(&c->arena, (size_t)n * sizeof(uint16_t));
}

#ifndef RG_DOUBLE
/* t's data rounded to bf16, converted once per version and derivation epoch (tensor.h rg_derived: once per step or
 * forward), unless its producer wrote it (rg_linear_bf16_slot) */
static const uint16_t *bf16_data(rg_tensor *t)
{
    uint16_t *p = derived_memory(t, &t->bf16, (size_t)t->numel * sizeof(uint16_t));
    if (p) rg_bf16_from_float(p, t->data, t->numel);
    return t->bf16.p;
}
#endif

/* W [out, in] transposed to [in, out], once per version and derivation epoch (once per step or forward; a copy: 8 x 8
 * AVX blocks, transpose.h) */
static const rg_real *transposed_data(rg_tensor *w)
{
    const int out_f = w->shape[0], in = w->shape[1];
    rg_real *p = derived_memory(w, &w->transposed, (size_t)w->numel * sizeof(rg_real));
    if (p) rg_transpose_block(p, out_f, w->data, in, out_f, in, true);
    return w->transposed.p;
}

void rg_linear_product(rg_tensor *x, rg_tensor *w, rg_real beta, rg_real *y)
{
    const int in = w->shape[1], out_f = w->shape[0], rows = (int)(x->numel / in);
#ifndef RG_DOUBLE
    if (linear_precision == RG_PRECISION_BF16) {
        rg_gemm_bf16(false, true, rows, out_f, in, bf16_data(x), in, bf16_data(w), in, beta, y, out_f);
        return;
    }
#endif
    if (rg_gemm_transposes_b(rows, out_f, in)) {
        /* the product rg_gemm would run after transposing W into its scratch (the same kernel, the same bits),
         * with W^T made once per step or forward (tensor.h rg_derived) instead of once per call */
        rg_gemm(false, false, rows, out_f, in, 1, x->data, in, transposed_data(w), out_f, beta, y, out_f);
        return;
    }
    rg_gemm(false, true, rows, out_f, in, 1, x->data, in, w->data, in, beta, y, out_f);
}

void rg_linear_grads(rg_ctx *c, rg_tensor *x, rg_tensor *w, const rg_real *dy, const uint16_t *dy16)
{
    const int in = w->shape[1], out_f = w->shape[0], rows = (int)(x->numel / in);
#ifndef RG_DOUBLE
    if (linear_precision == RG_PRECISION_BF16 && (wants_grad(x) || wants_grad(w))) {
        const uint16_t *d = dy16;
        if (!d) {
            uint16_t *conv = rg_arena_alloc(&c->arena, (size_t)rows * out_f * sizeof(uint16_t));
            rg_bf16_from_float(conv, dy, (int64_t)rows * out_f);
            d = conv;
        }
        if (wants_grad(x)) {
            bool fresh;
            rg_real *dx = rg_grad_fresh(x, &fresh);
            rg_gemm_bf16(false, false, rows, in, out_f, d, out_f, bf16_data(w), in, fresh ? 0 : 1, dx, in);
        }
        if (wants_grad(w))
            rg_gemm_bf16(true, false, out_f, in, rows, d, out_f, bf16_data(x), in, 1, rg_grad_of(w), in);
        return;
    }
#else
    (void)c;
    (void)dy16;
#endif
    if (wants_grad(x)) { /* written (beta 0) when x's gradient buffer is new: no zero-fill first */
        bool fresh;
        rg_real *dx = rg_grad_fresh(x, &fresh);
        rg_gemm(false, false, rows, in, out_f, 1, dy, out_f, w->data, in, fresh ? 0 : 1, dx, in);
    }
    if (wants_grad(w)) rg_gemm(true, false, out_f, in, rows, 1, dy, out_f, x->data, in, 1, rg_grad_of(w), in);
}

static void matmul_backward(rg_tensor *node);
static void linear_backward(rg_tensor *node);
static const rg_op OP_MATMUL = {"matmul", matmul_backward};
static const rg_op OP_LINEAR = {"linear", linear_backward};

/* The sizes of a product, shared by forward and backward. */
typedef struct {
    int batch, M, N, K;
    bool shared_b; /* b is 2-D and a has batch dims */
} mm_dims;

static mm_dims matmul_dims(const rg_tensor *a, const rg_tensor *b, bool ta, bool tb)
{
    char sa[64], sb[64];
    RG_ASSERT(a->ndim >= 2 && b->ndim >= 2, "matmul: operands need >= 2 dims, got %s and %s",
              rg_shape_str(a, sa, 64), rg_shape_str(b, sb, 64));
    mm_dims d;
    d.M = ta ? a->shape[a->ndim - 1] : a->shape[a->ndim - 2];
    d.K = ta ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
    int kb = tb ? b->shape[b->ndim - 1] : b->shape[b->ndim - 2];
    d.N = tb ? b->shape[b->ndim - 2] : b->shape[b->ndim - 1];
    if (kb != d.K)
        RG_FATAL("matmul: inner dims differ: %s%s x %s%s", rg_shape_str(a, sa, 64), ta ? "^T" : "",
                 rg_shape_str(b, sb, 64), tb ? "^T" : "");
    d.batch = 1;
    for (int i = 0; i < a->ndim - 2; i++) d.batch *= a->shape[i];
    d.shared_b = b->ndim == 2 && a->ndim > 2;
    if (b->ndim > 2) {
        bool ok = b->ndim == a->ndim;
        for (int i = 0; ok && i < a->ndim - 2; i++) ok = a->shape[i] == b->shape[i];
        if (!ok)
            RG_FATAL("matmul: batch dims differ: %s x %s", rg_shape_str(a, sa, 64), rg_shape_str(b, sb, 64));
    }
    return d;
}

rg_tensor *rg_matmul(rg_ctx *c, rg_tensor *a, rg_tensor *b, bool trans_a, bool trans_b)
{
    mm_dims d = matmul_dims(a, b, trans_a, trans_b);
    int shape[RG_MAX_DIMS];
    for (int i = 0; i < a->ndim - 2; i++) shape[i] = a->shape[i];
    shape[a->ndim - 2] = d.M;
    shape[a->ndim - 1] = d.N;
    rg_tensor *out = rg_node_new(c, &OP_MATMUL, a->ndim, shape, 2, (rg_tensor *[]){a, b});
    out->iarg[0] = trans_a;
    out->iarg[1] = trans_b;
    int lda = trans_a ? d.M : d.K, ldb = trans_b ? d.K : d.N;
    if (d.shared_b && !trans_a) {
        /* the batch folds into the rows of one product */
        rg_gemm(false, trans_b, d.batch * d.M, d.N, d.K, 1, a->data, lda, b->data, ldb, 0, out->data, d.N);
        return out;
    }
    int64_t sa = (int64_t)d.M * d.K, sb = d.shared_b ? 0 : (int64_t)d.K * d.N, so = (int64_t)d.M * d.N;
    for (int i = 0; i < d.batch; i++)
        rg_gemm(trans_a, trans_b, d.M, d.N, d.K, 1, a->data + i * sa, lda, b->data + i * sb, ldb, 0,
                out->data + i * so, d.N);
    return out;
}

/* C = op(A) op(B): d op(A) = dC op(B)^T, d op(B) = op(A)^T dC, written for A and B as stored.
 * docs/derivatives.md row "matmul". */
static void matmul_backward(rg_tensor *node)
{
    rg_tensor *a = node->src[0], *b = node->src[1];
    bool ta = node->iarg[0], tb = node->iarg[1];
    mm_dims d = matmul_dims(a, b, ta, tb);
    const rg_real *dc = node->grad;
    int lda = ta ? d.M : d.K, ldb = tb ? d.K : d.N;
    bool fold = d.shared_b && !ta;
    int batch = fold ? 1 : d.batch, M = fold ? d.batch * d.M : d.M;
    int64_t sa = (int64_t)d.M * d.K, sb = d.shared_b ? 0 : (int64_t)d.K * d.N, sc = (int64_t)d.M * d.N;
    if (wants_grad(a)) {
        rg_real *da = rg_grad_of(a);
        for (int i = 0; i < batch; i++) {
            if (!ta) /* dA [M,K] += dC [M,N] op(B)^T */
                rg_gemm(false, !tb, M, d.K, d.N, 1, dc + i * sc, d.N, b->data + i * sb, ldb, 1, da + i * sa, lda);
            else     /* dA [K,M] += op(B) [K,N] dC^T */
                rg_gemm(tb, true, d.K, d.M, d.N, 1, b->data + i * sb, ldb, dc + i * sc, d.N, 1, da + i * sa, lda);
        }
    }
    if (wants_grad(b)) {
        rg_real *db = rg_grad_of(b);
        for (int i = 0; i < batch; i++) {
            if (!tb) /* dB [K,N] += op(A)^T dC */
                rg_gemm(!ta, false, d.K, d.N, M, 1, a->data + i * sa, lda, dc + i * sc, d.N, 1, db + i * sb, ldb);
            else     /* dB [N,K] += dC^T op(A) */
                rg_gemm(true, ta, d.N, d.K, M, 1, dc + i * sc, d.N, a->data + i * sa, lda, 1, db + i * sb, ldb);
        }
    }
}

/* The bias passes of rg_linear over the pool (rg_pool_for): the broadcast splits the rows, the bias gradient (a sum
 * over rows) the columns, each column summed over every row in order: the bits of one thread. */
typedef struct {
    rg_real *out;          /* y (the broadcast) or the bias gradient */
    const rg_real *b, *dy;
    uint16_t *dy16;        /* the bias gradient's pass: bf16(dy) written as it reads dy, or NULL */
    int rows, n;
} bias_pass;

static void broadcast_part(void *p, int64_t r0, int64_t r1)
{
    const bias_pass *a = p;
    for (int64_t r = r0; r < r1; r++) memcpy(a->out + r * a->n, a->b, (size_t)a->n * sizeof(rg_real));
}

/* db [j0, j1) += sum over rows of dy [rows, n], row by row (the order of before; vectorized across j);
 * dy16 (if not NULL) = bf16(dy) in those columns, the copy rg_linear_grads reads. */
RG_VECTORIZE static void bias_grad(rg_real *restrict db, uint16_t *restrict dy16, const rg_real *restrict dy,
                                   int rows, int n, int j0, int j1)
{
    for (int r = 0; r < rows; r++) {
        const rg_real *dr = dy + (int64_t)r * n;
        for (int j = j0; j < j1; j++) db[j] += dr[j];
        if (dy16) rg_bf16_rows(dy16 + (int64_t)r * n + j0, n, dr + j0, n, 1, j1 - j0);
    }
}

static void bias_grad_part(void *p, int64_t j0, int64_t j1)
{
    const bias_pass *a = p;
    bias_grad(a->out, a->dy16, a->dy, a->rows, a->n, (int)j0, (int)j1);
}

rg_tensor *rg_linear(rg_ctx *c, rg_tensor *x, rg_tensor *w, rg_tensor *bias)
{
    char sx[64], sw[64], sbias[64];
    int in = x->shape[x->ndim - 1];
    if (w->ndim != 2 || w->shape[1] != in || (bias && (bias->ndim != 1 || bias->shape[0] != w->shape[0])))
        RG_FATAL("linear: x %s, weight %s (want [out, %d]), bias %s", rg_shape_str(x, sx, 64),
                 rg_shape_str(w, sw, 64), in, bias ? rg_shape_str(bias, sbias, 64) : "none");
    int out_f = w->shape[0];
    int shape[RG_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = out_f;
    rg_tensor *y = rg_node_new(c, &OP_LINEAR, x->ndim, shape, bias ? 3 : 2, (rg_tensor *[]){x, w, bias});
    int rows = (int)(x->numel / in);
#ifndef RG_DOUBLE
    if (bias && linear_precision == RG_PRECISION_BF16) { /* oneDNN adds the bias: no broadcast pass, no read of y */
        rg_gemm_bf16_bias(false, true, rows, out_f, in, bf16_data(x), in, bf16_data(w), in, bias->data, y->data,
                          out_f);
        return y;
    }
#endif
    if (bias) {
        bias_pass a = {.out = y->data, .b = bias->data, .rows = rows, .n = out_f};
        rg_pool_for(rows, rg_pool_part_min(out_f), 1, broadcast_part, &a);
    }
    rg_linear_product(x, w, bias ? 1 : 0, y->data);
    return y;
}

/* y = x W^T + b: dx += dy W, dW += dy^T x, db += sum over rows of dy. docs/derivatives.md row "linear". */
static void linear_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0], *w = node->src[1], *bias = node->nsrc > 2 ? node->src[2] : NULL;
    int in = w->shape[1], out_f = w->shape[0];
    int rows = (int)(x->numel / in);
    const rg_real *dy = node->grad;
    /* bf16: the bias gradient's pass writes dy's bf16 copy as it reads dy, so it runs first; fp32 keeps the order
     * of before (the products, then the bias), which gives the same bits even when x is also the bias */
    bias_pass a = {.out = wants_grad(bias) ? rg_grad_of(bias) : NULL, .dy = dy, .rows = rows, .n = out_f,
                   .dy16 = wants_grad(bias) ? rg_linear_grad_bf16(node->ctx, x, w, (int64_t)rows * out_f) : NULL};
    if (a.dy16) rg_pool_for(out_f, rg_pool_part_min(rows), 16, bias_grad_part, &a);
    rg_linear_grads(node->ctx, x, w, dy, a.dy16);
    if (a.out && !a.dy16) rg_pool_for(out_f, rg_pool_part_min(rows), 16, bias_grad_part, &a);
}
