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
 * The products run per (b, h) on kernels looked up once per call (rg_mm_get: libxsmm's JIT kernels for these small
 * shapes, src/tensor/gemm.h). Causal products skip the masked upper triangle (about half of a long block's work):
 * the queries run in blocks of BLOCK rows, each against the keys its last row sees (S and dP, and O and dQ, which
 * read them), and the keys in blocks of BLOCK, each with the queries that see its first key (dV and dK); what is
 * skipped are the exact zeros of P and dS. (libxsmm's kernel for a block shape may round a sum differently from the
 * whole block's kernel: float32 rounding, bench/README.md. A NaN or inf in V reaches the rows whose blocks read
 * it, where a full P V, as torch's, spreads it to every row through 0 * NaN.) Products with a transposed right
 * operand (Q K^T, dO V^T) first transpose that head's K or V [S, hd] into an [hd, S] arena buffer (libxsmm 1.17
 * kernels take B untransposed), and the scale is applied in the softmax pass and to dS (the kernels run with
 * alpha = 1). With more than one thread (rg_set_num_threads) the (b, h) pairs are split over the library's pool
 * (src/tensor/pool.h), each part with its own scratch; with a bias gradient shared by the batch the backward's parts
 * split the heads instead, each adding its heads' dS over b in order (the bits of one thread). The only memory is
 * arena memory. When Linear runs in bf16 (rg_set_linear_precision), each head's output block is also written as
 * bf16, the copy the output projection reads (rg_linear_bf16_slot: converted where produced, not in a separate
 * pass).
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

/* Causal products run in blocks of this many queries (or keys): a multiple of RG_LANES, so a block's softmax rows
 * group into lanes as the whole block's do. 16 and 32 ran alike on the large model's T = 130, 16 faster on T = 34
 * (bench/README.md). */
#define BLOCK 16

/* The end of the zeros row i of P (and of dS) needs past its visible keys: the products read it up to its query
 * block's key count (S and P V, dP and dQ) and up to the end of the last key block it sees (dV and dK); nothing
 * reads further, so the masked rest of a long row is never written. */
static inline int zeros_end(bool causal, int i, int T, int S)
{
    if (!causal) return S;
    const int last = i / BLOCK * BLOCK + BLOCK - 1, vis = visible_keys(causal, i, T, S);
    const int nq = visible_keys(causal, last < T ? last : T - 1, T, S), nk = (vis + BLOCK - 1) / BLOCK * BLOCK;
    const int e = nq > nk ? nq : nk;
    return e < S ? e : S;
}

/* One group of up to RG_LANES rows i0.. (before row `end`) of a T x S block (row stride S), as lanes.h takes it:
 * off[r] the offset of row i0 + r (the group's last row again for lanes past `end`, with n[r] = 0), n[r] its
 * visible keys. */
static void lane_rows(int i0, int end, int T, int S, bool causal, int64_t off[RG_LANES], int n[RG_LANES])
{
    for (int r = 0; r < RG_LANES; r++) {
        const int i = i0 + r < end ? i0 + r : end - 1;
        off[r] = (int64_t)i * S;
        n[r] = i0 + r < end ? visible_keys(causal, i, T, S) : 0;
    }
}

/* In-place scale (+ bias, when not NULL) and softmax of rows [i_lo, i_hi) of the T x S score block P (row stride
 * S; bias the same block's); entries past the visible prefix become 0 up to zeros_end (the whole row when it sees
 * no key). The scale, exp and normalization run along each row (RG_VECTORIZE; rg_expf, expf.h, is libm's expf bit
 * for bit; on a CPU with AVX-512F its row form, 16 at a time with a masked rest, whose bits are the same); the row
 * maxima and sums, reductions in key order, run on 16 rows at once (lanes.h), so the bits are those of libm's
 * scalar loop. */
RG_VECTORIZE static void softmax_block(rg_real *P, const rg_real *bias, rg_real scale, int i_lo, int i_hi, int T,
                                       int S, bool causal)
{
#if defined(RG_EXPF_AVX512) && !defined(RG_DOUBLE)
    const bool avx512 = rg_expf_avx512();
#endif
    for (int i0 = i_lo; i0 < i_hi; i0 += RG_LANES) {
        int64_t off[RG_LANES];
        int n[RG_LANES];
        rg_real m[RG_LANES], s[RG_LANES];
        lane_rows(i0, i_hi, T, S, causal, off, n);
        const int rows = i_hi - i0 < RG_LANES ? i_hi - i0 : RG_LANES;
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
#ifdef RG_EXPF_AVX512
            if (avx512) {
                rg_expf_sub_avx512(row, n[r], mr);
                continue;
            }
#endif
            for (int j = 0; j < n[r]; j++) row[j] = rg_expf(row[j] - mr);
#endif
        }
        rg_lanes_sum(P, off, n, s);
        for (int r = 0; r < rows; r++) {
            if (m[r] == -INFINITY) continue;
            rg_real *row = P + off[r];
            const rg_real inv = 1 / s[r];
            for (int j = 0; j < n[r]; j++) row[j] *= inv;
            const int e = zeros_end(causal, i0 + r, T, S);
            if (n[r] < e) memset(row + n[r], 0, (size_t)(e - n[r]) * sizeof(rg_real));
        }
    }
}

/* A block of queries [first, first + count) with the n keys its last row sees (the causal prefix of every row in
 * it; S when not causal), or of keys [first, first + count) with the n queries [T - n, T) that see its first key;
 * mm[0] and mm[1] its two products' kernels. */
typedef struct {
    int first, count, n;
    rg_mm mm[2];
} attn_block;

/* The blocks of a call: nb of them, each BLOCK long (the last one the rest); one block of every row when not
 * causal. Query blocks when `keys` is false, else key blocks. Arena memory. */
static attn_block *plan_blocks(rg_ctx *c, bool causal, bool keys, int T, int S, int *nb)
{
    const int len = keys ? S : T, step = causal ? BLOCK : len;
    *nb = len > 0 ? (len + step - 1) / step : 0;
    attn_block *bl = rg_arena_alloc(&c->arena, (size_t)(*nb ? *nb : 1) * sizeof *bl);
    for (int i = 0; i < *nb; i++) {
        attn_block *b = &bl[i];
        b->first = i * step;
        b->count = len - b->first < step ? len - b->first : step;
        if (!keys) {
            b->n = visible_keys(causal, b->first + b->count - 1, T, S);
        } else { /* query i sees key j when j <= i + S - T: the queries from max(0, j + T - S) */
            int f = causal ? b->first + T - S : 0;
            b->n = T - (f < 0 ? 0 : f > T ? T : f);
        }
    }
    return bl;
}

/* A block's product kernel (rg_mm_get's arguments); none to look up when it has no rows, columns or terms. */
static rg_mm block_mm(bool trans_a, int M, int N, int K, int lda, int ldb, int ldc, rg_real beta)
{
    if (M > 0 && N > 0 && K > 0) return rg_mm_get(trans_a, M, N, K, lda, ldb, ldc, beta);
    return (rg_mm){.trans_a = trans_a, .M = M, .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc, .beta = beta};
}

/* C = op(A) B (+ C): the block product, or, when no term is left (K 0: no query of the block sees a key, or no
 * query sees the key block), C's zeros for beta 0 and nothing for beta 1. */
static void block_run(const rg_mm *k, const rg_real *A, const rg_real *B, rg_real *C)
{
    if (k->M <= 0 || k->N <= 0) return;
    if (k->K > 0) {
        rg_mm_run(k, A, B, C);
    } else if (k->beta == 0) {
        for (int r = 0; r < k->M; r++) memset(C + (int64_t)r * k->ldc, 0, (size_t)k->N * sizeof *C);
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
    attn_block *qb, *kb;         /* query blocks (S / dP, then O / dQ) and, backward, key blocks (dV, dK) */
    int nqb, nkb;
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
        const rg_real *bb = j->bias ? j->bias->data + ((j->bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
        for (int x = 0; x < j->nqb; x++) { /* scores, softmax and P V of a query block while it is in cache */
            const attn_block *qb = &j->qb[x];
            rg_real *Pq = Pbh + (int64_t)qb->first * S;
            block_run(&qb->mm[0], j->q->data + qo + (int64_t)qb->first * D, kt, Pq);
            softmax_block(Pbh, bb, j->scale, qb->first, qb->first + qb->count, T, S, j->causal);
            block_run(&qb->mm[1], Pq, j->v->data + ko, j->out->data + qo + (int64_t)qb->first * D);
        }
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
    j.qb = plan_blocks(c, causal, false, T, S, &j.nqb);
    for (int x = 0; x < j.nqb; x++) {
        attn_block *qb = &j.qb[x];
        qb->mm[0] = block_mm(false, qb->count, qb->n, hd, D, S, S, 0); /* scores [m, n] = Q [m, hd] K^T [hd, n] */
        qb->mm[1] = block_mm(false, qb->count, hd, qb->n, S, D, D, 0); /* out [m, hd] = P [m, n] V [n, hd] */
    }
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
 * entries past the visible prefix (P = 0) become 0 up to zeros_end. The row sums run in key order, 16 rows at once
 * (lanes.h). */
RG_VECTORIZE static void softmax_grad_block(rg_real *restrict dS, rg_real *restrict db, const rg_real *restrict P,
                                            rg_real scale, int T, int S, bool causal)
{
    for (int i0 = 0; i0 < T; i0 += RG_LANES) {
        int64_t off[RG_LANES];
        int n[RG_LANES]; /* P is 0 past the visible prefix */
        rg_real dots[RG_LANES];
        lane_rows(i0, T, T, S, causal, off, n);
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
            const int e = zeros_end(causal, i0 + r, T, S);
            if (nr < e) memset(ds + nr, 0, (size_t)(e - nr) * sizeof(rg_real));
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
    /* dV first, by key blocks (each with the queries [T - n, T) that see it): it also brings P into cache for the
     * softmax gradient's gathers (which wait on memory when dV comes last) */
    for (int x = 0; j->dv && x < j->nkb; x++) {
        const attn_block *kb = &j->kb[x];
        const int64_t a = (int64_t)(T - kb->n) * S + kb->first, r = (int64_t)(T - kb->n) * D;
        block_run(&kb->mm[0], Pbh + a, dObh + r, j->dv + ko + (int64_t)kb->first * D);
    }
    if (!dS) return;
    transpose_head(vt, j->v->data + ko, S, hd, D);
    rg_real *db = j->dbias ? j->dbias + ((j->bias_batched ? (int64_t)b * H : 0) + h) * TS : NULL;
    for (int x = 0; x < j->nqb; x++) { /* dP by query blocks */
        const attn_block *qb = &j->qb[x];
        block_run(&qb->mm[0], dObh + (int64_t)qb->first * D, vt, dS + (int64_t)qb->first * S);
    }
    /* dS = P * (dP - rowsum(dP * P)), then scaled for dQ and dK; masked entries have P = 0. After every block's dP,
     * not block by block: the row sums' gathers of rows a product has just written stall (perf: rg_lanes_dot 1.5%
     * of the large step's samples this way, 4.6% interleaved) */
    softmax_grad_block(dS, db, Pbh, j->scale, T, S, j->causal);
    for (int x = 0; j->dq && x < j->nqb; x++) {
        const attn_block *qb = &j->qb[x];
        block_run(&qb->mm[1], dS + (int64_t)qb->first * S, j->k->data + ko, j->dq + qo + (int64_t)qb->first * D);
    }
    for (int x = 0; j->dk && x < j->nkb; x++) {
        const attn_block *kb = &j->kb[x];
        const int64_t a = (int64_t)(T - kb->n) * S + kb->first, r = (int64_t)(T - kb->n) * D;
        block_run(&kb->mm[1], dS + a, j->q->data + qo + r, j->dk + ko + (int64_t)kb->first * D);
    }
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
    j.qb = plan_blocks(node->ctx, causal, false, T, S, &j.nqb);
    for (int x = 0; x < j.nqb; x++) {
        attn_block *qb = &j.qb[x];
        qb->mm[0] = block_mm(false, qb->count, qb->n, hd, D, S, S, 0);   /* dP [m, n] = dO [m, hd] V^T [hd, n] */
        qb->mm[1] = block_mm(false, qb->count, hd, qb->n, S, D, D, !fq); /* dQ [m, hd] (+)= (scale dS) [m, n] K */
    }
    j.kb = plan_blocks(node->ctx, causal, true, T, S, &j.nkb);
    for (int x = 0; x < j.nkb; x++) {
        attn_block *kb = &j.kb[x];
        kb->mm[0] = block_mm(true, kb->count, hd, kb->n, S, D, D, !fv); /* dV [m, hd] (+)= P^T [m, n] dO [n, hd] */
        kb->mm[1] = block_mm(true, kb->count, hd, kb->n, S, D, D, !fk); /* dK [m, hd] (+)= (scale dS)^T Q [n, hd] */
    }
    /* a bias shared by the batch gathers every b's dS into one block per head: the parts split the heads */
    j.by_head = dbias && !bias_batched;
    int nt = (double)B * H * TS * hd >= PAR_MIN ? rg_pool_threads() : 1;
    if (j.by_head && nt > H) nt = H;
    if (need_ds) j.scratch = rg_arena_alloc(&node->ctx->arena, (size_t)nt * (TS + (int64_t)hd * S) * sizeof(rg_real));
    rg_pool_run(attn_backward_part, &j, nt);
}
