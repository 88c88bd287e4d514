/* attention.c: the fused scaled-dot-product attention op (one node, one analytic backward).
 *
 * Shapes: q [B, T, H*hd], k and v [B, S, H*hd] (heads are contiguous hd chunks of the last dim, so head h of batch
 * row b is the strided matrix q + b*T*D + h*hd with row stride D = H*hd: no permute copies); optional additive
 * bias [H, T, S] (shared by the batch) or [B, H, T, S]; result [B, T, H*hd].
 *
 * Forward per (b, h), as torch: S_bh = scale * Q_bh K_bh^T (+ bias); causal: key j > i + (S - T) gets -inf (query i
 * sits at the end of the keys, as with a KV cache); P = softmax(S) over keys (max-subtracted; -inf entries give 0;
 * a fully masked row gives zeros, never NaN); O_bh = P V_bh. P [B, H, T, S] is saved for the backward.
 * Backward (docs/derivatives.md, row "attention"; Vaswani et al. 2017 eq. 1 differentiated, softmax Jacobian as in
 * the "softmax" row): dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)), dQ = scale dS K,
 * dK = scale dS^T Q, dbias = dS (summed over b for a [H, T, S] bias).
 * Every product is one cblas GEMM per (b, h) (src/tensor/gemm.h); the only memory is arena memory.
 */
#include "nn.h"
#include "../tensor/gemm.h"

#include <string.h>
#include <tgmath.h>

static void attention_backward(rg_tensor *node);
static const rg_op OP_ATTENTION = {"attention", attention_backward};

static inline bool wants_grad(const rg_tensor *t) { return t && t->requires_grad; }

/* Keys of row i that the causal mask leaves (a prefix of the row): clamp(i + S - T + 1, 0, S); S when not causal. */
static inline int visible_keys(bool causal, int i, int T, int S)
{
    if (!causal) return S;
    int n = i + S - T + 1;
    return n < 0 ? 0 : n > S ? S : n;
}

/* In-place softmax of the T x S score block (row stride S); entries past the visible prefix become 0. */
static void softmax_block(rg_real *P, int T, int S, bool causal)
{
    for (int i = 0; i < T; i++) {
        rg_real *row = P + (int64_t)i * S;
        int n = visible_keys(causal, i, T, S);
        rg_real m = -INFINITY;
        for (int j = 0; j < n; j++)
            if (row[j] > m) m = row[j];
        if (m == -INFINITY) { memset(row, 0, (size_t)S * sizeof(rg_real)); continue; } /* fully masked */
        rg_real s = 0;
        for (int j = 0; j < n; j++) { row[j] = exp(row[j] - m); s += row[j]; }
        rg_real inv = 1 / s;
        for (int j = 0; j < n; j++) row[j] *= inv;
        if (n < S) memset(row + n, 0, (size_t)(S - n) * sizeof(rg_real));
    }
}

rg_tensor *rg_attention(rg_ctx *c, rg_tensor *q, rg_tensor *k, rg_tensor *v, int n_heads, rg_tensor *bias,
                        bool causal, double scale)
{
    char sq[64], sk[64], sv[64], sb[64];
    bool ok = q->ndim == 3 && k->ndim == 3 && v->ndim == 3 && n_heads >= 1 && rg_same_shape(k, v) &&
              q->shape[0] == k->shape[0] && q->shape[2] == k->shape[2] && q->shape[2] % n_heads == 0;
    if (!ok)
        RG_FATAL("attention: q %s, k %s, v %s with %d heads (want q [B, T, H*hd], k = v [B, S, H*hd])",
                 rg_shape_str(q, sq, 64), rg_shape_str(k, sk, 64), rg_shape_str(v, sv, 64), n_heads);
    const int B = q->shape[0], T = q->shape[1], S = k->shape[1], D = q->shape[2], H = n_heads, hd = D / H;
    bool bias_batched = false;
    if (bias) {
        bool b3 = bias->ndim == 3 && bias->shape[0] == H && bias->shape[1] == T && bias->shape[2] == S;
        bool b4 = bias->ndim == 4 && bias->shape[0] == B && bias->shape[1] == H && bias->shape[2] == T &&
                  bias->shape[3] == S;
        if (!b3 && !b4)
            RG_FATAL("attention: bias %s (want [%d, %d, %d] or [%d, %d, %d, %d])", rg_shape_str(bias, sb, 64), H, T,
                     S, B, H, T, S);
        bias_batched = b4;
    }
    rg_tensor *out = rg_node_new(c, &OP_ATTENTION, 3, q->shape, 4, (rg_tensor *[]){q, k, v, bias});
    /* P for every (b, h) when recording (the backward needs it); one reused block otherwise (decoding) */
    bool rec = out->op != NULL;
    const int64_t TS = (int64_t)T * S;
    rg_real *P = rg_arena_alloc(&c->arena, (size_t)(rec ? (int64_t)B * H * TS : TS) * sizeof(rg_real));
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            rg_real *Pbh = rec ? P + ((int64_t)b * H + h) * TS : P;
            const rg_real *qbh = q->data + (int64_t)b * T * D + h * hd;
            const rg_real *kbh = k->data + (int64_t)b * S * D + h * hd;
            const rg_real *vbh = v->data + (int64_t)b * S * D + h * hd;
            rg_gemm(false, true, T, S, hd, (rg_real)scale, qbh, D, kbh, D, 0, Pbh, S);
            if (bias) {
                const rg_real *bb = bias->data + ((bias_batched ? (int64_t)b * H : 0) + h) * TS;
                for (int64_t x = 0; x < TS; x++) Pbh[x] += bb[x];
            }
            softmax_block(Pbh, T, S, causal);
            rg_gemm(false, false, T, hd, S, 1, Pbh, S, vbh, D, 0, out->data + (int64_t)b * T * D + h * hd, D);
        }
    }
    if (rec) {
        out->saved = P;
        out->iarg[0] = H;
        out->iarg[1] = causal;
        out->iarg[2] = bias_batched;
        out->farg[0] = scale;
    }
    return out;
}

static void attention_backward(rg_tensor *node)
{
    rg_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2], *bias = node->src[3];
    const int B = q->shape[0], T = q->shape[1], S = k->shape[1], D = q->shape[2];
    const int H = (int)node->iarg[0], hd = D / H;
    const bool causal = node->iarg[1], bias_batched = node->iarg[2];
    const rg_real scale = (rg_real)node->farg[0];
    const int64_t TS = (int64_t)T * S;
    const rg_real *P = node->saved, *dO = node->grad;
    rg_real *dq = wants_grad(q) ? rg_grad_of(q) : NULL, *dk = wants_grad(k) ? rg_grad_of(k) : NULL;
    rg_real *dv = wants_grad(v) ? rg_grad_of(v) : NULL, *dbias = wants_grad(bias) ? rg_grad_of(bias) : NULL;
    bool need_ds = dq || dk || dbias;
    rg_real *dS = need_ds ? rg_arena_alloc(&node->ctx->arena, (size_t)TS * sizeof(rg_real)) : NULL;
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const rg_real *Pbh = P + ((int64_t)b * H + h) * TS;
            const int64_t qo = (int64_t)b * T * D + h * hd, ko = (int64_t)b * S * D + h * hd;
            const rg_real *dObh = dO + qo;
            if (dv) /* dV [S, hd] += P^T [S, T] dO [T, hd] */
                rg_gemm(true, false, S, hd, T, 1, Pbh, S, dObh, D, 1, dv + ko, D);
            if (!need_ds) continue;
            /* dP [T, S] = dO [T, hd] V^T [hd, S] */
            rg_gemm(false, true, T, S, hd, 1, dObh, D, v->data + ko, D, 0, dS, S);
            /* dS = P * (dP - rowsum(dP * P)); masked entries have P = 0 and get 0 */
            for (int i = 0; i < T; i++) {
                rg_real *ds = dS + (int64_t)i * S;
                const rg_real *p = Pbh + (int64_t)i * S;
                const int n = visible_keys(causal, i, T, S); /* P is 0 past the visible prefix */
                rg_real dot = 0;
                for (int j = 0; j < n; j++) dot += ds[j] * p[j];
                for (int j = 0; j < n; j++) ds[j] = p[j] * (ds[j] - dot);
                if (n < S) memset(ds + n, 0, (size_t)(S - n) * sizeof(rg_real));
            }
            if (dbias) {
                rg_real *db = dbias + ((bias_batched ? (int64_t)b * H : 0) + h) * TS;
                for (int64_t x = 0; x < TS; x++) db[x] += dS[x];
            }
            if (dq) /* dQ [T, hd] += scale dS [T, S] K [S, hd] */
                rg_gemm(false, false, T, hd, S, scale, dS, S, k->data + ko, D, 1, dq + qo, D);
            if (dk) /* dK [S, hd] += scale dS^T [S, T] Q [T, hd] */
                rg_gemm(true, false, S, hd, T, scale, dS, S, q->data + qo, D, 1, dk + ko, D);
        }
    }
}
