/* ops_elementwise.c: add, sub, mul with broadcasting; scale; exp, log, tanh, ReLU, GELU (tanh approximation).
 * Shapes: binary ops broadcast NumPy-style (aligned from the right, size-1 dims stretch) to the output shape;
 * unary ops keep the shape. Backward rules: docs/derivatives.md rows "add", "sub", "mul", "scale", "exp", "log",
 * "tanh", "relu", "gelu". */
#include "ops.h"
#include "fastmath.h"

#include <tgmath.h>
#include <string.h>

static inline bool wants_grad(const rg_tensor *t) { return t && t->requires_grad; }

/* ------------------------------------------------------------ broadcasting */

/* Index arithmetic of a broadcast: the output padded to 4 dims, and each operand's strides in that space
 * (0 where the operand's dim is 1 or missing). */
typedef struct {
    int shape[4];
    int64_t sa[4], sb[4];
    bool same; /* both operands have the output's shape: a flat loop */
} bcast;

static bcast broadcast(const char *op, const rg_tensor *a, const rg_tensor *b, int *out_ndim)
{
    bcast r;
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    *out_ndim = nd;
    for (int i = 0; i < 4; i++) {
        int k = i - (4 - nd);                        /* dim index in the output, < 0 for padding */
        int ia = k - (nd - a->ndim), ib = k - (nd - b->ndim);
        int da = (k >= 0 && ia >= 0) ? a->shape[ia] : 1, db = (k >= 0 && ib >= 0) ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char s1[64], s2[64];
            RG_FATAL("%s: shapes do not broadcast: %s and %s", op, rg_shape_str(a, s1, 64), rg_shape_str(b, s2, 64));
        }
        r.shape[i] = da > db ? da : db;
        r.sa[i] = (da == 1 || ia < 0 || k < 0) ? 0 : a->stride[ia];
        r.sb[i] = (db == 1 || ib < 0 || k < 0) ? 0 : b->stride[ib];
    }
    r.same = rg_same_shape(a, b);
    return r;
}

enum { BIN_ADD, BIN_SUB, BIN_MUL };

static void binary_backward(rg_tensor *node);
static const rg_op OP_ADD = {"add", binary_backward};
static const rg_op OP_SUB = {"sub", binary_backward};
static const rg_op OP_MUL = {"mul", binary_backward};

static rg_tensor *binary(rg_ctx *c, const rg_op *op, int kind, rg_tensor *a, rg_tensor *b)
{
    int nd;
    bcast bc = broadcast(op->name, a, b, &nd);
    int shape[4];
    for (int i = 0; i < nd; i++) shape[i] = bc.shape[4 - nd + i];
    rg_tensor *out = rg_node_new(c, op, nd, shape, 2, (rg_tensor *[]){a, b});
    out->iarg[0] = kind;
    rg_real *o = out->data;
    const rg_real *x = a->data, *y = b->data;
    if (bc.same) {
        int64_t n = out->numel;
        if (kind == BIN_ADD) for (int64_t i = 0; i < n; i++) o[i] = x[i] + y[i];
        else if (kind == BIN_SUB) for (int64_t i = 0; i < n; i++) o[i] = x[i] - y[i];
        else for (int64_t i = 0; i < n; i++) o[i] = x[i] * y[i];
        return out;
    }
    int64_t k = 0;
    for (int i0 = 0; i0 < bc.shape[0]; i0++)
        for (int i1 = 0; i1 < bc.shape[1]; i1++)
            for (int i2 = 0; i2 < bc.shape[2]; i2++) {
                const rg_real *xa = x + i0 * bc.sa[0] + i1 * bc.sa[1] + i2 * bc.sa[2];
                const rg_real *yb = y + i0 * bc.sb[0] + i1 * bc.sb[1] + i2 * bc.sb[2];
                int64_t s3a = bc.sa[3], s3b = bc.sb[3];
                for (int i3 = 0; i3 < bc.shape[3]; i3++, k++) {
                    rg_real u = xa[i3 * s3a], v = yb[i3 * s3b];
                    o[k] = kind == BIN_ADD ? u + v : kind == BIN_SUB ? u - v : u * v;
                }
            }
    return out;
}

rg_tensor *rg_add(rg_ctx *c, rg_tensor *a, rg_tensor *b) { return binary(c, &OP_ADD, BIN_ADD, a, b); }
rg_tensor *rg_sub(rg_ctx *c, rg_tensor *a, rg_tensor *b) { return binary(c, &OP_SUB, BIN_SUB, a, b); }
rg_tensor *rg_mul(rg_ctx *c, rg_tensor *a, rg_tensor *b) { return binary(c, &OP_MUL, BIN_MUL, a, b); }

/* add: da += dout, db += dout; sub: db -= dout; mul: da += dout*b, db += dout*a; each summed over the dims the
 * operand was broadcast along (the stride-0 dims accumulate into one element). docs/derivatives.md rows "add",
 * "sub", "mul". */
static void binary_backward(rg_tensor *node)
{
    rg_tensor *a = node->src[0], *b = node->src[1];
    int kind = (int)node->iarg[0], nd;
    bcast bc = broadcast(node->op->name, a, b, &nd);
    const rg_real *g = node->grad, *x = a->data, *y = b->data;
    rg_real *ga = wants_grad(a) ? rg_grad_of(a) : NULL, *gb = wants_grad(b) ? rg_grad_of(b) : NULL;
    int64_t k = 0;
    for (int i0 = 0; i0 < bc.shape[0]; i0++)
        for (int i1 = 0; i1 < bc.shape[1]; i1++)
            for (int i2 = 0; i2 < bc.shape[2]; i2++) {
                int64_t oa = i0 * bc.sa[0] + i1 * bc.sa[1] + i2 * bc.sa[2];
                int64_t ob = i0 * bc.sb[0] + i1 * bc.sb[1] + i2 * bc.sb[2];
                for (int i3 = 0; i3 < bc.shape[3]; i3++, k++) {
                    int64_t ia = oa + i3 * bc.sa[3], ib = ob + i3 * bc.sb[3];
                    rg_real d = g[k];
                    if (ga) ga[ia] += kind == BIN_MUL ? d * y[ib] : d;
                    if (gb) gb[ib] += kind == BIN_MUL ? d * x[ia] : kind == BIN_SUB ? -d : d;
                }
            }
}

/* ------------------------------------------------------------ unary */

enum { UN_SCALE, UN_EXP, UN_LOG, UN_TANH, UN_RELU, UN_GELU };

static void unary_backward(rg_tensor *node);
static const rg_op OP_SCALE = {"scale", unary_backward};
static const rg_op OP_EXP = {"exp", unary_backward};
static const rg_op OP_LOG = {"log", unary_backward};
static const rg_op OP_TANH = {"tanh", unary_backward};
static const rg_op OP_RELU = {"relu", unary_backward};
static const rg_op OP_GELU = {"gelu", unary_backward};

#define GELU_C 0.7978845608028654 /* sqrt(2/pi) */
#define GELU_A 0.044715

/* o = 0.5 x (1 + tanh(c (x + a x^3))) */
RG_VECTORIZE static void gelu_forward(rg_real *restrict o, const rg_real *restrict in, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        rg_real v = in[i];
        o[i] = (rg_real)0.5 * v * (1 + rg_tanh_fast((rg_real)GELU_C * (v + (rg_real)GELU_A * v * v * v)));
    }
}

/* dx += g (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)) */
RG_VECTORIZE static void gelu_backward(rg_real *restrict dx, const rg_real *restrict g, const rg_real *restrict in,
                                       int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        rg_real v = in[i], t = rg_tanh_fast((rg_real)GELU_C * (v + (rg_real)GELU_A * v * v * v));
        rg_real dt = (rg_real)GELU_C * (1 + 3 * (rg_real)GELU_A * v * v);
        dx[i] += g[i] * ((rg_real)0.5 * (1 + t) + (rg_real)0.5 * v * (1 - t * t) * dt);
    }
}

static rg_tensor *unary(rg_ctx *c, const rg_op *op, int kind, rg_tensor *x, double alpha)
{
    rg_tensor *out = rg_node_new(c, op, x->ndim, x->shape, 1, &x);
    out->iarg[0] = kind;
    out->farg[0] = alpha;
    out->output_saved = kind == UN_EXP || kind == UN_TANH; /* their backward reads y */
    const rg_real *in = x->data;
    rg_real *o = out->data;
    int64_t n = x->numel;
    switch (kind) {
    case UN_SCALE: for (int64_t i = 0; i < n; i++) o[i] = (rg_real)(in[i] * alpha); break;
    case UN_EXP: for (int64_t i = 0; i < n; i++) o[i] = exp(in[i]); break;
    case UN_LOG: for (int64_t i = 0; i < n; i++) o[i] = log(in[i]); break;
    case UN_TANH: for (int64_t i = 0; i < n; i++) o[i] = tanh(in[i]); break;
    case UN_RELU: for (int64_t i = 0; i < n; i++) o[i] = in[i] > 0 ? in[i] : 0; break;
    case UN_GELU: gelu_forward(o, in, n); break;
    default: RG_FATAL("unary: unknown kind %d", kind);
    }
    return out;
}

rg_tensor *rg_scale(rg_ctx *c, rg_tensor *x, double alpha) { return unary(c, &OP_SCALE, UN_SCALE, x, alpha); }
rg_tensor *rg_exp(rg_ctx *c, rg_tensor *x) { return unary(c, &OP_EXP, UN_EXP, x, 0); }
rg_tensor *rg_log(rg_ctx *c, rg_tensor *x) { return unary(c, &OP_LOG, UN_LOG, x, 0); }
rg_tensor *rg_tanh(rg_ctx *c, rg_tensor *x) { return unary(c, &OP_TANH, UN_TANH, x, 0); }
rg_tensor *rg_relu(rg_ctx *c, rg_tensor *x) { return unary(c, &OP_RELU, UN_RELU, x, 0); }
rg_tensor *rg_gelu(rg_ctx *c, rg_tensor *x) { return unary(c, &OP_GELU, UN_GELU, x, 0); }

/* scale: dx += alpha g; exp: dx += g y; log: dx += g / x; tanh: dx += g (1 - y^2); relu: dx += g [x > 0];
 * gelu: dx += g (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2)), t = tanh(c (x + a x^3)).
 * docs/derivatives.md rows "scale", "exp", "log", "tanh", "relu", "gelu". */
static void unary_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    const rg_real *g = node->grad, *in = x->data, *y = node->data;
    rg_real *dx = rg_grad_of(x);
    int64_t n = x->numel;
    switch ((int)node->iarg[0]) {
    case UN_SCALE: { rg_real a = (rg_real)node->farg[0]; for (int64_t i = 0; i < n; i++) dx[i] += a * g[i]; } break;
    case UN_EXP: for (int64_t i = 0; i < n; i++) dx[i] += g[i] * y[i]; break;
    case UN_LOG: for (int64_t i = 0; i < n; i++) dx[i] += g[i] / in[i]; break;
    case UN_TANH: for (int64_t i = 0; i < n; i++) dx[i] += g[i] * (1 - y[i] * y[i]); break;
    case UN_RELU: for (int64_t i = 0; i < n; i++) dx[i] += in[i] > 0 ? g[i] : 0; break;
    case UN_GELU: gelu_backward(dx, g, in, n); break;
    default: RG_FATAL("unary backward: unknown kind %lld", (long long)node->iarg[0]);
    }
}
