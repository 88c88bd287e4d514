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
 * Every product is one GEMM per (b, h) on a kernel looked up once per shape before the loop (rg_mm_get: libxsmm's
 * JIT kernels for these small shapes, src/tensor/gemm.h); products with a transposed right operand (Q K^T, dO V^T)
 * first transpose that head's K or V [S, hd] into an [hd, S] arena buffer (libxsmm 1.17 kernels take B untransposed),
 * and the scale is applied in the softmax pass and to dS (the kernels run with alpha = 1). The only memory is arena
 * memory.
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

/* dst [hd, S] (row stride S) = head columns [S, hd] of src (row stride D). */
static void transpose_head(rg_real *restrict dst, const rg_real *restrict src, int S, int hd, int D)
{
    for (int j = 0; j < S; j++)
        for (int x = 0; x < hd; x++) dst[(int64_t)x * S + j] = src[(int64_t)j * D + x];
}

/* In-place scale (+ bias, when not NULL) and softmax of the T x S score block (row stride S); entries past the
 * visible prefix become 0. */
static void softmax_block(rg_real *P, const rg_real *bias, rg_real scale, int T, int S, bool causal)
{
    for (int i = 0; i < T; i++) {
        rg_real *row = P + (int64_t)i * S;
        int n = visible_keys(causal, i, T, S);
        if (bias) {
            const rg_real *br = bias + (int64_t)i * S;
            for (int j = 0; j < n; j++) row[j] = row[j] * scale + br[j];
        } else {
            for (int j = 0; j < n; j++) row[j] *= scale;
        }
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
    rg_real *kt = rg_arena_alloc(&c->arena, (size_t)hd * S * sizeof(rg_real));
    const rg_mm qk = rg_mm_get(false, T, S, hd, D, S, S, 0);   /* scores [T, S] = Q [T, hd] K^T [hd, S] */
    const rg_mm pv = rg_mm_get(false, T, hd, S, S, D, D, 0);   /* out [T, hd] = P [T, S] V [S, hd] */
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            rg_real *Pbh = rec ? P + ((int64_t)b * H + h) * TS : P;
            const rg_real *qbh = q->data + (int64_t)b * T * D + h * hd;
            const rg_real *kbh = k->data + (int64_t)b * S * D + h * hd;
            const rg_real *vbh = v->data + (int64_t)b * S * D + h * hd;
            transpose_head(kt, kbh, S, hd, D);
            rg_mm_run(&qk, qbh, kt, Pbh);
            const rg_real *bb = bias ? bias->data + ((bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
            softmax_block(Pbh, bb, (rg_real)scale, T, S, causal);
            rg_mm_run(&pv, Pbh, vbh, out->data + (int64_t)b * T * D + h * hd);
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
    /* each of dV, dQ, dK is written block by block, in that order, for every (b, h): a buffer that is new here
     * (rg_grad_fresh) is written with beta 0 instead of being zero-filled and accumulated */
    bool fv = false, fq = false, fk = false;
    rg_real *dv = wants_grad(v) ? rg_grad_fresh(v, &fv) : NULL;
    rg_real *dq = wants_grad(q) ? rg_grad_fresh(q, &fq) : NULL, *dk = wants_grad(k) ? rg_grad_fresh(k, &fk) : NULL;
    rg_real *dbias = wants_grad(bias) ? rg_grad_of(bias) : NULL;
    bool need_ds = dq || dk || dbias;
    rg_arena *ar = &node->ctx->arena;
    rg_real *dS = need_ds ? rg_arena_alloc(ar, (size_t)TS * sizeof(rg_real)) : NULL;
    rg_real *vt = need_ds ? rg_arena_alloc(ar, (size_t)hd * S * sizeof(rg_real)) : NULL;
    const rg_mm k_dv = rg_mm_get(true, S, hd, T, S, D, D, !fv);  /* dV [S, hd] (+)= P^T [S, T] dO [T, hd] */
    const rg_mm k_dp = rg_mm_get(false, T, S, hd, D, S, S, 0);    /* dP [T, S] = dO [T, hd] V^T [hd, S] */
    const rg_mm k_dq = rg_mm_get(false, T, hd, S, S, D, D, !fq);  /* dQ [T, hd] (+)= (scale dS) [T, S] K [S, hd] */
    const rg_mm k_dk = rg_mm_get(true, S, hd, T, S, D, D, !fk);   /* dK [S, hd] (+)= (scale dS)^T [S, T] Q [T, hd] */
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < H; h++) {
            const rg_real *Pbh = P + ((int64_t)b * H + h) * TS;
            const int64_t qo = (int64_t)b * T * D + h * hd, ko = (int64_t)b * S * D + h * hd;
            const rg_real *dObh = dO + qo;
            if (dv) rg_mm_run(&k_dv, Pbh, dObh, dv + ko);
            if (!need_ds) continue;
            transpose_head(vt, v->data + ko, S, hd, D);
            rg_mm_run(&k_dp, dObh, vt, dS);
            /* dS = P * (dP - rowsum(dP * P)) (to dbias), then scaled for dQ and dK; masked entries have P = 0 */
            rg_real *db = dbias ? dbias + ((bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
            for (int i = 0; i < T; i++) {
                rg_real *ds = dS + (int64_t)i * S;
                const rg_real *p = Pbh + (int64_t)i * S;
                const int n = visible_keys(causal, i, T, S); /* P is 0 past the visible prefix */
                rg_real dot = 0;
                for (int j = 0; j < n; j++) dot += ds[j] * p[j];
                if (db) {
                    rg_real *dbr = db + (int64_t)i * S;
                    for (int j = 0; j < n; j++) {
                        rg_real g = p[j] * (ds[j] - dot);
                        dbr[j] += g;
                        ds[j] = g * scale;
                    }
                } else {
                    for (int j = 0; j < n; j++) ds[j] = p[j] * (ds[j] - dot) * scale;
                }
                if (n < S) memset(ds + n, 0, (size_t)(S - n) * sizeof(rg_real));
            }
            if (dq) rg_mm_run(&k_dq, dS, k->data + ko, dq + qo);
            if (dk) rg_mm_run(&k_dk, dS, q->data + qo, dk + ko);
        }
    }
}
