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
 * whole block's kernel: float32 rounding, results/bench/history/. A NaN or inf in V reaches the rows whose blocks read
 * it, where a full P V, as torch's, spreads it to every row through 0 * NaN.) Products with a transposed right
 * operand (Q K^T, dO V^T) first transpose that head's K or V [S, hd] into an [hd, S] arena buffer (libxsmm 1.17
 * kernels take B untransposed), and the scale is applied in the softmax pass and to dS (the kernels run with
 * alpha = 1). With more than one thread (rg_set_num_threads) the (b, h) pairs are split over the library's pool
 * (src/tensor/pool.h), each part with its own scratch; with a bias gradient shared by the batch the backward's parts
 * split the heads instead, each adding its heads' dS over b in order (the bits of one thread). The only memory is
 * arena memory. When Linear runs in bf16 (rg_set_linear_precision), each head's output block is also written as
 * bf16, the copy the output projection reads (rg_linear_bf16_slot: converted where produced, not in a separate
 * pass), and the products run with bf16 operands on oneDNN, batched over (batch, head) pairs, as torch.autocast
 * runs matmul and bmm (src/nn/attention_bf16.c; the softmax, its gradient and P stay float32). The float32 path
 * is the one of before, bit for bit.
 */
#include "attention_rows.h"
#include "attention_bf16.h"
#include "../tensor/gemm.h"
#include "../tensor/pool.h"
#include "../tensor/transpose.h"

#include <string.h>

static void attention_backward(rg_tensor *node);
static const rg_op OP_ATTENTION = {"attention", attention_backward};

static inline bool wants_grad(const rg_tensor *t) { return t && t->requires_grad; }

/* dst [hd, S] (row stride S) = head columns [S, hd] of src (row stride D): 8 x 8 AVX blocks (transpose.h). */
static void transpose_head(rg_real *restrict dst, const rg_real *restrict src, int S, int hd, int D)
{
    rg_transpose_block(dst, S, src, D, S, hd, true);
}

/* The blocks of a call: nb of them, each blk long (the last one the rest); one block of every row when not
 * causal. Query blocks when `keys` is false, else key blocks. Arena memory. */
static attn_block *plan_blocks(rg_ctx *c, bool causal, bool keys, int blk, int T, int S, int *nb)
{
    const int len = keys ? S : T, step = causal ? blk : len;
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
            rg_attn_softmax_rows(Pbh, bb, j->scale, qb->first, qb->first + qb->count, T, S, j->causal, BLOCK);
            block_run(&qb->mm[1], Pq, j->v->data + ko, j->out->data + qo + (int64_t)qb->first * D);
        }
        if (j->out16) rg_bf16_rows(j->out16 + qo, D, j->out->data + qo, D, T, hd); /* while in cache */
    }
}

/* True when attention's products run in bf16: Linear's precision (rg_set_linear_precision) is bf16, as autocast
 * runs both; never in the float64 build. */
static bool bf16_products(void)
{
#ifndef RG_DOUBLE
    return rg_get_linear_precision() == RG_PRECISION_BF16;
#else
    return false;
#endif
}

/* The bf16 copies kept from the forward to the backward, one arena block: q [B, T, D], k and v [B, S, D], P
 * [B, H, T, S] (the node's saved2) */
static void bf16_copies(attn_job *j, uint16_t *base)
{
    j->q16 = base;
    j->k16 = j->q16 + (int64_t)j->B * j->T * j->D;
    j->v16 = j->k16 + (int64_t)j->B * j->S * j->D;
    j->p16 = j->v16 + (int64_t)j->B * j->S * j->D;
}

/* The forward's blocks, and for nt parts: with float32 products their kernels and the K^T scratch; with bf16
 * products (whole blocks) q, k and v rounded (over the pool) and the memory of P's copy. */
static void forward_setup(rg_ctx *c, attn_job *j, int nt)
{
    const int T = j->T, S = j->S, D = j->D, hd = j->hd;
    j->blk = j->bf16 ? BF16_BLOCK : BLOCK;
    j->qb = plan_blocks(c, j->causal, false, j->blk, T, S, &j->nqb);
#ifndef RG_DOUBLE
    if (j->bf16) {
        const int64_t nq = (int64_t)j->B * T * D, nk = (int64_t)j->B * S * D, np = (int64_t)j->B * j->H * T * S;
        bf16_copies(j, rg_arena_alloc(&c->arena, (size_t)(nq + 2 * nk + np) * sizeof(uint16_t)));
        rg_bf16_from_float(j->q16, j->q->data, nq);
        rg_bf16_from_float(j->k16, j->k->data, nk);
        rg_bf16_from_float(j->v16, j->v->data, nk);
        return;
    }
#endif
    for (int x = 0; x < j->nqb; x++) {
        attn_block *qb = &j->qb[x];
        qb->mm[0] = block_mm(false, qb->count, qb->n, hd, D, S, S, 0); /* scores [m, n] = Q [m, hd] K^T [hd, n] */
        qb->mm[1] = block_mm(false, qb->count, hd, qb->n, S, D, D, 0); /* out [m, hd] = P [m, n] V [n, hd] */
    }
    j->scratch = rg_arena_alloc(&c->arena, (size_t)nt * hd * S * sizeof(rg_real));
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
    const bool bf16 = bf16_products(); /* whole blocks, batched: P for every (b, h) */
    rg_real *P = rg_arena_alloc(&c->arena, (size_t)(rec || bf16 ? (int64_t)B * H * TS : TS) * sizeof(rg_real));
    attn_job j = {.q = q, .k = k, .v = v, .bias = bias, .out = out, .P = P, .B = B, .T = T, .S = S, .D = D, .H = H,
                  .hd = hd, .causal = causal, .bias_batched = bias_batched, .rec = rec, .scale = (rg_real)scale};
    j.out16 = rg_linear_bf16_slot(out); /* bf16 Linear: the copy o_proj reads, written as each head's block is */
    j.bf16 = bf16;
    /* split the (b, h) pairs over the pool when P is kept per pair (recording) and the work is worth a wake-up */
    int nt = (rec || bf16) && (double)B * H * TS * hd >= PAR_MIN ? rg_pool_threads() : 1;
    forward_setup(c, &j, nt);
#ifndef RG_DOUBLE
    if (j.bf16) rg_pool_run(rg_attn_forward_part_bf16, &j, nt);
#endif
    if (!j.bf16) rg_pool_run(attn_forward_part, &j, nt);
    if (rec) {
        out->saved = P;
        out->saved2 = j.q16; /* bf16: q, k, v and P rounded (NULL: float32 products) */
        out->iarg[0] = H;
        out->iarg[1] = causal;
        out->iarg[2] = bias_batched;
        out->farg[0] = scale;
    }
    return out;
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
    rg_attn_softmax_grad_rows(dS, db, Pbh, j->scale, 0, T, T, S, j->causal, BLOCK);
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

/* The backward's query and key blocks, and for nt parts: with float32 products their kernels (a product into a
 * fresh gradient buffer, fq, fk, fv, writes with beta 0) and scratch; with bf16 products the scratch of
 * backward_pair_bf16. */
static void backward_setup(rg_ctx *c, attn_job *j, bool fq, bool fk, bool fv, int nt)
{
    const int T = j->T, S = j->S, D = j->D, hd = j->hd;
    const int64_t TS = (int64_t)T * S;
    j->blk = j->bf16 ? BF16_BLOCK : BLOCK;
    j->qb = plan_blocks(c, j->causal, false, j->blk, T, S, &j->nqb);
    j->kb = plan_blocks(c, j->causal, true, j->blk, T, S, &j->nkb);
#ifndef RG_DOUBLE
    if (j->bf16) {
        j->acc_q = !fq, j->acc_k = !fk, j->acc_v = !fv;
        j->do16 = rg_arena_alloc(&c->arena, (size_t)j->B * T * D * sizeof(uint16_t));
        const int nh = j->by_head ? (j->H + nt - 1) / nt : j->H;
        j->tile_nb = rg_attn_tile_batch(nh, T, S);
        const size_t bytes = (size_t)j->tile_nb * j->H * TS * (sizeof(rg_real) + sizeof(uint16_t));
        j->part_bytes = (bytes + 63) / 64 * 64;
        j->scratch16 = rg_arena_alloc(&c->arena, (size_t)nt * j->part_bytes);
        return;
    }
#endif
    for (int x = 0; x < j->nqb; x++) {
        attn_block *qb = &j->qb[x];
        qb->mm[0] = block_mm(false, qb->count, qb->n, hd, D, S, S, 0);   /* dP [m, n] = dO [m, hd] V^T [hd, n] */
        qb->mm[1] = block_mm(false, qb->count, hd, qb->n, S, D, D, !fq); /* dQ [m, hd] (+)= (scale dS) [m, n] K */
    }
    for (int x = 0; x < j->nkb; x++) {
        attn_block *kb = &j->kb[x];
        kb->mm[0] = block_mm(true, kb->count, hd, kb->n, S, D, D, !fv); /* dV [m, hd] (+)= P^T [m, n] dO [n, hd] */
        kb->mm[1] = block_mm(true, kb->count, hd, kb->n, S, D, D, !fk); /* dK [m, hd] (+)= (scale dS)^T Q [n, hd] */
    }
    if (j->dq || j->dk || j->dbias)
        j->scratch = rg_arena_alloc(&c->arena, (size_t)nt * (TS + (int64_t)hd * S) * sizeof(rg_real));
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
    attn_job j = {.q = q, .k = k, .v = v, .bias = bias, .P = P, .dq = dq, .dk = dk, .dv = dv, .dbias = dbias,
                  .dO = dO, .B = B, .T = T, .S = S, .D = D, .H = H, .hd = hd, .causal = causal,
                  .bias_batched = bias_batched, .rec = true, .scale = scale};
    /* the forward's precision: bf16 when it kept q, k, v rounded */
    j.bf16 = node->saved2 != NULL;
    if (j.bf16) bf16_copies(&j, node->saved2);
    /* a bias shared by the batch gathers every b's dS into one block per head: the parts split the heads */
    j.by_head = dbias && !bias_batched;
    int nt = (double)B * H * TS * hd >= PAR_MIN ? rg_pool_threads() : 1;
    if (j.by_head && nt > H) nt = H;
    backward_setup(node->ctx, &j, fq, fk, fv, nt);
#ifndef RG_DOUBLE
    if (j.bf16) rg_pool_run(rg_attn_backward_part_bf16, &j, nt);
#endif
    if (!j.bf16) rg_pool_run(attn_backward_part, &j, nt);
}
