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
 * and the scale is applied in the softmax pass and to dS (the kernels run with alpha = 1). With more than one thread
 * (rg_set_num_threads) the (b, h) pairs are split over the library's pool (src/tensor/pool.h), each part with its
 * own scratch; with a bias gradient shared by the batch the backward's parts split the heads instead, each adding
 * its heads' dS over b in order (the bits of one thread). The only memory is arena memory. When Linear runs in bf16
 * (rg_set_linear_precision), each head's output block is also written as bf16, the copy the output projection
 * reads (rg_linear_bf16_slot: converted where produced, not in a separate pass).
 */
#include "nn.h"
#include "../tensor/gemm.h"
#include "../tensor/lanes.h"
#include "../tensor/fastmath.h"
#include "../tensor/expf.h"
#include "../tensor/pool.h"
#include "../tensor/transpose.h"

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

/* dst [hd, S] (row stride S) = head columns [S, hd] of src (row stride D): 8 x 8 AVX blocks (transpose.h). */
static void transpose_head(rg_real *restrict dst, const rg_real *restrict src, int S, int hd, int D)
{
    rg_transpose_block(dst, S, src, D, S, hd, true);
}

/* One group of up to RG_LANES rows i0.. of a T x S block (row stride S), as lanes.h takes it: off[r] the offset of
 * row i0 + r (the group's last row again for lanes past the block, with n[r] = 0), n[r] its visible keys. */
static void lane_rows(int i0, int T, int S, bool causal, int64_t off[RG_LANES], int n[RG_LANES])
{
    for (int r = 0; r < RG_LANES; r++) {
        const int i = i0 + r < T ? i0 + r : T - 1;
        off[r] = (int64_t)i * S;
        n[r] = i0 + r < T ? visible_keys(causal, i, T, S) : 0;
    }
}

/* In-place scale (+ bias, when not NULL) and softmax of the T x S score block (row stride S); entries past the
 * visible prefix become 0. The scale, exp and normalization run along each row (RG_VECTORIZE; rg_expf, expf.h, is
 * libm's expf bit for bit); the row maxima and sums, reductions in key order, run on 16 rows at once (lanes.h), so
 * the bits are those of libm's scalar loop. */
RG_VECTORIZE static void softmax_block(rg_real *P, const rg_real *bias, rg_real scale, int T, int S, bool causal)
{
    for (int i0 = 0; i0 < T; i0 += RG_LANES) {
        int64_t off[RG_LANES];
        int n[RG_LANES];
        rg_real m[RG_LANES], s[RG_LANES];
        lane_rows(i0, T, S, causal, off, n);
        const int rows = T - i0 < RG_LANES ? T - i0 : RG_LANES;
        for (int r = 0; r < rows; r++) {
            rg_real *row = P + off[r];
            if (bias) {
                const rg_real *br = bias + off[r];
                for (int j = 0; j < n[r]; j++) row[j] = row[j] * scale + br[j];
            } else {
                for (int j = 0; j < n[r]; j++) row[j] *= scale;
            }
        }
        rg_lanes_max(P, off, n, m);
        for (int r = 0; r < rows; r++) {
            rg_real *row = P + off[r];
            const rg_real mr = m[r];
            if (mr == -INFINITY) { memset(row, 0, (size_t)S * sizeof(rg_real)); n[r] = 0; continue; } /* masked */
#ifdef RG_DOUBLE
            for (int j = 0; j < n[r]; j++) row[j] = exp(row[j] - mr);
#else
            for (int j = 0; j < n[r]; j++) row[j] = rg_expf(row[j] - mr);
#endif
        }
        rg_lanes_sum(P, off, n, s);
        for (int r = 0; r < rows; r++) {
            if (m[r] == -INFINITY) continue;
            rg_real *row = P + off[r];
            const rg_real inv = 1 / s[r];
            for (int j = 0; j < n[r]; j++) row[j] *= inv;
            if (n[r] < S) memset(row + n[r], 0, (size_t)(S - n[r]) * sizeof(rg_real));
        }
    }
}

/* One attention call's operands and kernels, shared by the parts of a parallel loop over the (b, h) pairs. */
typedef struct {
    const rg_tensor *q, *k, *v, *bias;
    rg_tensor *out;
    uint16_t *out16;             /* out's bf16 copy, written head block by head block (rg_linear_bf16_slot), or NULL */
    const rg_real *P;            /* [B, H, T, S] (one [T, S] block when not recording: forward only) */
    rg_real *dq, *dk, *dv, *dbias, *scratch;
    const rg_real *dO;
    int B, T, S, D, H, hd;
    bool causal, bias_batched, rec;
    bool by_head;                /* backward: the parts split the heads (a bias gradient shared by the batch) */
    rg_real scale;
    rg_mm k1, k2, k3, k4;        /* the products' kernels, looked up once per call */
} attn_job;

/* (b, h) pairs of a part: [BH * part / nparts, BH * (part + 1) / nparts) */
static void part_range(const attn_job *j, int part, int nparts, int *lo, int *hi)
{
    int64_t BH = (int64_t)j->B * j->H;
    *lo = (int)(BH * part / nparts);
    *hi = (int)(BH * (part + 1) / nparts);
}

/* Work below this many multiply-adds (B H T S hd) runs on one thread. */
#define PAR_MIN 2e5

static void attn_forward_part(void *p, int part, int nparts)
{
    const attn_job *j = p;
    const int T = j->T, S = j->S, D = j->D, H = j->H, hd = j->hd;
    const int64_t TS = (int64_t)T * S;
    rg_real *kt = j->scratch + (int64_t)part * hd * S;
    int lo, hi;
    part_range(j, part, nparts, &lo, &hi);
    for (int bh = lo; bh < hi; bh++) {
        const int b = bh / H, h = bh % H;
        rg_real *Pbh = (rg_real *)j->P + (j->rec ? (int64_t)bh * TS : 0);
        const int64_t qo = (int64_t)b * T * D + h * hd, ko = (int64_t)b * S * D + h * hd;
        transpose_head(kt, j->k->data + ko, S, hd, D);
        rg_mm_run(&j->k1, j->q->data + qo, kt, Pbh);
        const rg_real *bb = j->bias ? j->bias->data + ((j->bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
        softmax_block(Pbh, bb, j->scale, T, S, j->causal);
        rg_mm_run(&j->k2, Pbh, j->v->data + ko, j->out->data + qo);
        if (j->out16) rg_bf16_rows(j->out16 + qo, D, j->out->data + qo, D, T, hd); /* while in cache */
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
    attn_job j = {.q = q, .k = k, .v = v, .bias = bias, .out = out, .P = P, .B = B, .T = T, .S = S, .D = D, .H = H,
                  .hd = hd, .causal = causal, .bias_batched = bias_batched, .rec = rec, .scale = (rg_real)scale};
    j.out16 = rg_linear_bf16_slot(out); /* bf16 Linear: the copy o_proj reads, written as each head's block is */
    j.k1 = rg_mm_get(false, T, S, hd, D, S, S, 0);   /* scores [T, S] = Q [T, hd] K^T [hd, S] */
    j.k2 = rg_mm_get(false, T, hd, S, S, D, D, 0);   /* out [T, hd] = P [T, S] V [S, hd] */
    /* split the (b, h) pairs over the pool when P is kept per pair (recording) and the work is worth a wake-up */
    int nt = rec && (double)B * H * TS * hd >= PAR_MIN ? rg_pool_threads() : 1;
    j.scratch = rg_arena_alloc(&c->arena, (size_t)nt * hd * S * sizeof(rg_real));
    rg_pool_run(attn_forward_part, &j, nt);
    if (rec) {
        out->saved = P;
        out->iarg[0] = H;
        out->iarg[1] = causal;
        out->iarg[2] = bias_batched;
        out->farg[0] = scale;
    }
    return out;
}

/* dS [T, S] (row stride S, holding dP) = P * (dP - rowsum(dP * P)) (added to dbias when not NULL), then scaled;
 * entries past the visible prefix (P = 0) become 0. The row sums run in key order, 16 rows at once (lanes.h). */
RG_VECTORIZE static void softmax_grad_block(rg_real *restrict dS, rg_real *restrict db, const rg_real *restrict P,
                                            rg_real scale, int T, int S, bool causal)
{
    for (int i0 = 0; i0 < T; i0 += RG_LANES) {
        int64_t off[RG_LANES];
        int n[RG_LANES]; /* P is 0 past the visible prefix */
        rg_real dots[RG_LANES];
        lane_rows(i0, T, S, causal, off, n);
        rg_lanes_dot(dS, P, off, n, dots);
        const int rows = T - i0 < RG_LANES ? T - i0 : RG_LANES;
        for (int r = 0; r < rows; r++) {
            rg_real *ds = dS + off[r];
            const rg_real *pr = P + off[r], dot = dots[r];
            const int nr = n[r];
            if (db) {
                rg_real *dbr = db + off[r];
                for (int x = 0; x < nr; x++) {
                    rg_real g = pr[x] * (ds[x] - dot);
                    dbr[x] += g;
                    ds[x] = g * scale;
                }
            } else {
                for (int x = 0; x < nr; x++) ds[x] = pr[x] * (ds[x] - dot) * scale;
            }
            if (nr < S) memset(ds + nr, 0, (size_t)(S - nr) * sizeof(rg_real));
        }
    }
}

/* The backward of one (b, h) pair; dS and vt are the part's scratch (NULL when no dS is needed). */
static void backward_pair(const attn_job *j, int b, int h, rg_real *dS, rg_real *vt)
{
    const int T = j->T, S = j->S, D = j->D, H = j->H, hd = j->hd;
    const int64_t TS = (int64_t)T * S, bh = (int64_t)b * H + h;
    const rg_real *Pbh = j->P + bh * TS;
    const int64_t qo = (int64_t)b * T * D + h * hd, ko = (int64_t)b * S * D + h * hd;
    const rg_real *dObh = j->dO + qo;
    if (j->dv) rg_mm_run(&j->k1, Pbh, dObh, j->dv + ko);
    if (!dS) return;
    transpose_head(vt, j->v->data + ko, S, hd, D);
    rg_mm_run(&j->k2, dObh, vt, dS);
    /* dS = P * (dP - rowsum(dP * P)) (to dbias), then scaled for dQ and dK; masked entries have P = 0 */
    rg_real *db = j->dbias ? j->dbias + ((j->bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
    softmax_grad_block(dS, db, Pbh, j->scale, T, S, j->causal);
    if (j->dq) rg_mm_run(&j->k3, dS, j->k->data + ko, j->dq + qo);
    if (j->dk) rg_mm_run(&j->k4, dS, j->q->data + qo, j->dk + ko);
}

/* A part of the backward: its share of the (b, h) pairs, or, when a bias shared by the batch gathers every b's dS
 * into one [T, S] block per head (by_head), its share of the heads, each for b = 0, 1, ... in order: the order in
 * which one thread adds them, so the bias gradient has the bits of one thread. */
static void attn_backward_part(void *p, int part, int nparts)
{
    const attn_job *j = p;
    const int64_t TS = (int64_t)j->T * j->S;
    const bool need_ds = j->dq || j->dk || j->dbias;
    rg_real *dS = need_ds ? j->scratch + (int64_t)part * (TS + (int64_t)j->hd * j->S) : NULL;
    rg_real *vt = dS ? dS + TS : NULL;
    if (j->by_head) {
        const int h0 = (int)((int64_t)j->H * part / nparts), h1 = (int)((int64_t)j->H * (part + 1) / nparts);
        for (int b = 0; b < j->B; b++)
            for (int h = h0; h < h1; h++) backward_pair(j, b, h, dS, vt);
        return;
    }
    int lo, hi;
    part_range(j, part, nparts, &lo, &hi);
    for (int bh = lo; bh < hi; bh++) backward_pair(j, bh / j->H, bh % j->H, dS, vt);
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
    attn_job j = {.q = q, .k = k, .v = v, .bias = bias, .P = P, .dq = dq, .dk = dk, .dv = dv, .dbias = dbias,
                  .dO = dO, .B = B, .T = T, .S = S, .D = D, .H = H, .hd = hd, .causal = causal,
                  .bias_batched = bias_batched, .rec = true, .scale = scale};
    j.k1 = rg_mm_get(true, S, hd, T, S, D, D, !fv);  /* dV [S, hd] (+)= P^T [S, T] dO [T, hd] */
    j.k2 = rg_mm_get(false, T, S, hd, D, S, S, 0);   /* dP [T, S] = dO [T, hd] V^T [hd, S] */
    j.k3 = rg_mm_get(false, T, hd, S, S, D, D, !fq); /* dQ [T, hd] (+)= (scale dS) [T, S] K [S, hd] */
    j.k4 = rg_mm_get(true, S, hd, T, S, D, D, !fk);  /* dK [S, hd] (+)= (scale dS)^T [S, T] Q [T, hd] */
    /* a bias shared by the batch gathers every b's dS into one block per head: the parts split the heads */
    j.by_head = dbias && !bias_batched;
    int nt = (double)B * H * TS * hd >= PAR_MIN ? rg_pool_threads() : 1;
    if (j.by_head && nt > H) nt = H;
    if (need_ds) j.scratch = rg_arena_alloc(&node->ctx->arena, (size_t)nt * (TS + (int64_t)hd * S) * sizeof(rg_real));
    rg_pool_run(attn_backward_part, &j, nt);
}
