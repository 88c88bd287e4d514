/* pos_xl.c: Transformer-XL relative attention (Dai et al. 2019, "Transformer-XL: Attentive Language Models Beyond
 * a Fixed-Length Context", sec. 3.3, the score decomposed into terms (a)-(d)), without the memory segment:
 *   score(i, j) = ((q_i + u) . k_j + (q_i + v) . r_{p_i - p_j}) / sqrt(hd),
 *   r_k = W_r R_k (split into heads), R_k = concat(sin(k w), cos(k w)), w_i = 10000^(-2i/d_model), i < d_model/2.
 * The attention op computes q_i . k_j / sqrt(hd); this file returns the rest as an additive bias,
 *   bias[b, h, i, j] = (u_h . k_{b,j,h} + (q_{b,i,h} + v_h) . r_h(p_i - p_j)) / sqrt(hd),
 * matching tools/ref_model.py (Attention.forward with xl_R = xl_rel_table(p_i - p_j), R in double rounded to the
 * tensor type). Negative distances (keys after the query: masked when causal) are computed like any other.
 * Shapes: q [B, T, d], k [B, S, d], u and v [H, hd], W_r = blocks.{l}.attn.r_proj.weight [d, d] -> [B, H, T, S].
 *
 * Three recorded ops (a node has at most 4 sources):
 *   xl_rel   rr [nd, d] = R W_r^T for the nd distinct distances dmin..dmax (one GEMM); dW_r += drr^T R.
 *   xl_ubias ub [B, H, S] = u_h . k_{b,j,h} / sqrt(hd);  dk += g u / sqrt(hd), du += sum_{b,j} g k / sqrt(hd).
 *   xl_bias  out[b,h,i,j] = (q_{b,i,h} + v_h) . rr[p_i - p_j - dmin, h] / sqrt(hd) + ub[b,h,j];
 *            with G = the gradient gathered by distance: dq, dv from G rr, drr from G^T (q + v), dub = sum_i g.
 * When the distances are few (nd <= 4 S: positions 0..T-1 give nd = T + S - 1) the products are GEMMs per (b, h)
 * over a [T, nd] score-by-distance matrix; otherwise (sparse random positions) direct dot products per (i, j).
 * docs/derivatives.md rows "pos_xl_rel", "pos_xl_ubias", "pos_xl_bias". */
#include "nn.h"
#include "../tensor/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void xl_rel_backward(rg_tensor *node);
static void xl_ubias_backward(rg_tensor *node);
static void xl_bias_backward(rg_tensor *node);
static const rg_op OP_XL_REL = {"pos_xl_rel", xl_rel_backward};
static const rg_op OP_XL_UBIAS = {"pos_xl_ubias", xl_ubias_backward};
static const rg_op OP_XL_BIAS = {"pos_xl_bias", xl_bias_backward};

/* rr = R W_r^T for distances dmin .. dmin + nd - 1. */
static rg_tensor *xl_rel(rg_ctx *c, rg_tensor *w_r, int64_t dmin, int nd)
{
    int d = w_r->shape[0];
    int shape[2] = {nd, d};
    rg_tensor *out = rg_node_new(c, &OP_XL_REL, 2, shape, 1, &w_r);
    rg_real *R = rg_arena_alloc(&c->arena, (size_t)nd * d * sizeof(rg_real));
    int half = d / 2;
    double *w = rg_arena_alloc(&c->arena, (size_t)half * sizeof(double));
    for (int i = 0; i < half; i++) w[i] = 1.0 / pow(10000.0, (double)(2 * i) / d);
    for (int r = 0; r < nd; r++) {
        double k = (double)(dmin + r);
        rg_real *row = R + (int64_t)r * d;
        for (int i = 0; i < half; i++) {
            double a = k * w[i];
            row[i] = (rg_real)sin(a);
            row[half + i] = (rg_real)cos(a);
        }
    }
    rg_gemm(false, true, nd, d, d, 1, R, d, w_r->data, d, 0, out->data, d);
    out->saved = R;
    return out;
}

static void xl_rel_backward(rg_tensor *node)
{
    rg_tensor *w_r = node->src[0];
    int nd = node->shape[0], d = node->shape[1];
    rg_gemm(true, false, d, d, nd, 1, node->grad, d, node->saved, d, 1, rg_grad_of(w_r), d);
}

/* ub[b, h, j] = scale * u_h . k_{b,j,h} */
static rg_tensor *xl_ubias(rg_ctx *c, rg_tensor *k, rg_tensor *u, int H, double scale)
{
    int B = k->shape[0], S = k->shape[1], d = k->shape[2], hd = d / H;
    int shape[3] = {B, H, S};
    rg_tensor *srcs[2] = {k, u};
    rg_tensor *out = rg_node_new(c, &OP_XL_UBIAS, 3, shape, 2, srcs);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < S; j++) {
            const rg_real *kr = k->data + ((int64_t)b * S + j) * d;
            for (int h = 0; h < H; h++) {
                const rg_real *uh = u->data + (int64_t)h * hd, *kh = kr + h * hd;
                rg_real s = 0;
                for (int e = 0; e < hd; e++) s += uh[e] * kh[e];
                out->data[((int64_t)b * H + h) * S + j] = s * (rg_real)scale;
            }
        }
    out->farg[0] = scale;
    return out;
}

static void xl_ubias_backward(rg_tensor *node)
{
    rg_tensor *k = node->src[0], *u = node->src[1];
    int B = k->shape[0], S = k->shape[1], d = k->shape[2], H = node->shape[1], hd = d / H;
    rg_real sc = (rg_real)node->farg[0];
    rg_real *dk = k->requires_grad ? rg_grad_of(k) : NULL, *du = u->requires_grad ? rg_grad_of(u) : NULL;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < S; j++)
            for (int h = 0; h < H; h++) {
                rg_real g = node->grad[((int64_t)b * H + h) * S + j] * sc;
                int64_t off = ((int64_t)b * S + j) * d + h * hd;
                if (dk)
                    for (int e = 0; e < hd; e++) dk[off + e] += g * u->data[h * hd + e];
                if (du)
                    for (int e = 0; e < hd; e++) du[h * hd + e] += g * k->data[off + e];
            }
}

/* (q + v) of head h for batch row b, packed [T, hd]. */
static void pack_qv(const rg_tensor *q, const rg_tensor *v, int b, int h, int hd, rg_real *qv)
{
    int T = q->shape[1], d = q->shape[2];
    for (int i = 0; i < T; i++) {
        const rg_real *qi = q->data + ((int64_t)b * T + i) * d + h * hd, *vh = v->data + (int64_t)h * hd;
        for (int e = 0; e < hd; e++) qv[(int64_t)i * hd + e] = qi[e] + vh[e];
    }
}

/* Whether the [T, nd] score-by-distance GEMM path is used. */
static bool use_gemm(int nd, int S) { return (int64_t)nd <= 4 * (int64_t)S; }

static rg_tensor *xl_bias(rg_ctx *c, rg_tensor *q, rg_tensor *v, rg_tensor *rr, rg_tensor *ub, int H, double scale,
                          const int32_t *q_pos, const int32_t *k_pos, int64_t dmin)
{
    int B = q->shape[0], T = q->shape[1], d = q->shape[2], hd = d / H, S = ub->shape[2], nd = rr->shape[0];
    int shape[4] = {B, H, T, S};
    rg_tensor *srcs[4] = {q, v, rr, ub};
    rg_tensor *out = rg_node_new(c, &OP_XL_BIAS, 4, shape, 4, srcs);
    int32_t *qp = rg_arena_alloc(&c->arena, (size_t)B * (T + S) * sizeof(int32_t)), *kp = qp + (int64_t)B * T;
    memcpy(qp, q_pos, (size_t)B * T * sizeof(int32_t));
    memcpy(kp, k_pos, (size_t)B * S * sizeof(int32_t));
    rg_real *qv = rg_arena_alloc(&c->arena, (size_t)T * hd * sizeof(rg_real));
    bool gemm = use_gemm(nd, S);
    rg_real *tmp = gemm ? rg_arena_alloc(&c->arena, (size_t)T * nd * sizeof(rg_real)) : NULL;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            pack_qv(q, v, b, h, hd, qv);
            rg_real *o = out->data + ((int64_t)b * H + h) * T * S;
            const rg_real *u = ub->data + ((int64_t)b * H + h) * S;
            const int32_t *kb = kp + (int64_t)b * S;
            if (gemm) rg_gemm(false, true, T, nd, hd, (rg_real)scale, qv, hd, rr->data + h * hd, d, 0, tmp, nd);
            for (int i = 0; i < T; i++) {
                int64_t base = (int64_t)qp[(int64_t)b * T + i] - dmin;
                rg_real *oi = o + (int64_t)i * S;
                if (gemm) {
                    const rg_real *ti = tmp + (int64_t)i * nd + base;
                    for (int j = 0; j < S; j++) oi[j] = ti[-kb[j]] + u[j];
                } else {
                    const rg_real *qi = qv + (int64_t)i * hd;
                    for (int j = 0; j < S; j++) {
                        const rg_real *r = rr->data + (base - kb[j]) * d + h * hd;
                        rg_real s = 0;
                        for (int e = 0; e < hd; e++) s += qi[e] * r[e];
                        oi[j] = s * (rg_real)scale + u[j];
                    }
                }
            }
        }
    out->saved = qp;
    out->iarg[0] = H;
    out->iarg[1] = dmin;
    out->farg[0] = scale;
    return out;
}

static void xl_bias_backward(rg_tensor *node)
{
    rg_tensor *q = node->src[0], *v = node->src[1], *rr = node->src[2], *ub = node->src[3];
    int H = (int)node->iarg[0];
    int64_t dmin = node->iarg[1];
    rg_real sc = (rg_real)node->farg[0];
    int B = q->shape[0], T = q->shape[1], d = q->shape[2], hd = d / H, S = ub->shape[2], nd = rr->shape[0];
    const int32_t *qp = node->saved, *kp = qp + (int64_t)B * T;
    rg_ctx *c = node->ctx;
    if (ub->requires_grad) {
        rg_real *dub = rg_grad_of(ub);
        for (int64_t bh = 0; bh < (int64_t)B * H; bh++)
            for (int i = 0; i < T; i++) {
                const rg_real *g = node->grad + (bh * T + i) * S;
                for (int j = 0; j < S; j++) dub[bh * S + j] += g[j];
            }
    }
    bool need_qv = q->requires_grad || v->requires_grad;
    if (!need_qv && !rr->requires_grad) return;
    rg_real *dq = q->requires_grad ? rg_grad_of(q) : NULL, *dv = v->requires_grad ? rg_grad_of(v) : NULL;
    rg_real *drr = rr->requires_grad ? rg_grad_of(rr) : NULL;
    rg_real *qv = rg_arena_alloc(&c->arena, (size_t)T * hd * sizeof(rg_real));
    rg_real *dqv = rg_arena_alloc(&c->arena, (size_t)T * hd * sizeof(rg_real));
    bool gemm = use_gemm(nd, S);
    rg_real *dtmp = gemm ? rg_arena_alloc(&c->arena, (size_t)T * nd * sizeof(rg_real)) : NULL;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            pack_qv(q, v, b, h, hd, qv);
            const rg_real *g = node->grad + ((int64_t)b * H + h) * T * S;
            const int32_t *kb = kp + (int64_t)b * S;
            if (gemm) {
                memset(dtmp, 0, (size_t)T * nd * sizeof(rg_real));
                for (int i = 0; i < T; i++) {
                    rg_real *ti = dtmp + (int64_t)i * nd + ((int64_t)qp[(int64_t)b * T + i] - dmin);
                    const rg_real *gi = g + (int64_t)i * S;
                    for (int j = 0; j < S; j++) ti[-kb[j]] += gi[j];
                }
                if (need_qv) rg_gemm(false, false, T, hd, nd, sc, dtmp, nd, rr->data + h * hd, d, 0, dqv, hd);
                if (drr) rg_gemm(true, false, nd, hd, T, sc, dtmp, nd, qv, hd, 1, drr + h * hd, d);
            } else {
                memset(dqv, 0, (size_t)T * hd * sizeof(rg_real));
                for (int i = 0; i < T; i++) {
                    int64_t base = (int64_t)qp[(int64_t)b * T + i] - dmin;
                    const rg_real *qi = qv + (int64_t)i * hd;
                    rg_real *dqi = dqv + (int64_t)i * hd;
                    for (int j = 0; j < S; j++) {
                        rg_real gs = g[(int64_t)i * S + j] * sc;
                        int64_t off = (base - kb[j]) * d + h * hd;
                        const rg_real *r = rr->data + off;
                        for (int e = 0; e < hd; e++) dqi[e] += gs * r[e];
                        if (drr)
                            for (int e = 0; e < hd; e++) drr[off + e] += gs * qi[e];
                    }
                }
            }
            if (need_qv)
                for (int i = 0; i < T; i++) {
                    const rg_real *dqi = dqv + (int64_t)i * hd;
                    if (dq) {
                        rg_real *o = dq + ((int64_t)b * T + i) * d + h * hd;
                        for (int e = 0; e < hd; e++) o[e] += dqi[e];
                    }
                    if (dv)
                        for (int e = 0; e < hd; e++) dv[h * hd + e] += dqi[e];
                }
        }
}

rg_tensor *rg_pos_xl_bias(rg_ctx *c, rg_tensor *q, rg_tensor *k, rg_tensor *u, rg_tensor *v, rg_tensor *w_r,
                          int n_heads, const rg_pos_summary *ps)
{
    char s1[64], s2[64], s3[64];
    RG_ASSERT(q->ndim == 3 && k->ndim == 3 && q->shape[0] == ps->B && k->shape[0] == ps->B && q->shape[1] == ps->T &&
              k->shape[1] == ps->S && q->shape[2] == k->shape[2],
              "pos_xl_bias: q %s and k %s must be [B, T, d] and [B, S, d] (B %d, T %d, S %d)",
              rg_shape_str(q, s1, 64), rg_shape_str(k, s2, 64), ps->B, ps->T, ps->S);
    int d = q->shape[2], hd = d / n_heads;
    RG_ASSERT(u && v && w_r && u->numel == d && v->numel == d && w_r->ndim == 2 && w_r->shape[0] == d &&
              w_r->shape[1] == d && d % n_heads == 0 && d % 2 == 0,
              "pos_xl_bias: u, v [%d, %d] and W_r [%d, %d] expected (W_r %s)", n_heads, hd, d, d,
              w_r ? rg_shape_str(w_r, s3, 64) : "NULL");
    int64_t dmin = (int64_t)ps->q_min - ps->k_max, nd = (int64_t)ps->q_max - ps->k_min - dmin + 1;
    RG_ASSERT(nd <= INT32_MAX / d, "pos_xl_bias: %lld distinct distances", (long long)nd);
    double scale = 1.0 / sqrt((double)hd);
    rg_tensor *rr = xl_rel(c, w_r, dmin, (int)nd);
    rg_tensor *ub = xl_ubias(c, k, u, n_heads, scale);
    return xl_bias(c, q, v, rr, ub, n_heads, scale, ps->q_pos, ps->k_pos, dmin);
}

/* ------------------------------------------------------------------ the descriptor: u, v, r_proj per layer */

typedef struct {
    int n_heads;
    struct { rg_tensor *u, *v, *r_proj; } layer[]; /* [n_layers] */
} xl_state;

static rg_status xl_new(const rg_model_config *cfg, void **state)
{
    xl_state *st = calloc(1, sizeof *st + (size_t)cfg->n_layers * sizeof st->layer[0]);
    if (!st) return rg_error(RG_ERR_NOMEM, "xl: out of memory");
    st->n_heads = cfg->n_heads;
    *state = st;
    return RG_OK;
}

/* blocks.{l}.attn.u and .v [H, hd] zero before q_proj (a module's own parameters precede its submodules' in
 * state_dict); blocks.{l}.attn.r_proj.weight [d, d] N(0, 0.02) after o_proj. */
static rg_status xl_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                           rg_rng *rng)
{
    xl_state *st = state;
    int d = cfg->d_model, H = cfg->n_heads;
    char name[RG_NAME_LEN];
    rg_status e = RG_OK;
    if (site == RG_POS_SITE_ATTN_BEGIN) {
        snprintf(name, sizeof name, "blocks.%d.attn.u", layer);
        e = rg_params_register_normal(ps, name, 2, (int[]){H, d / H}, rng, 0, &st->layer[layer].u);
        snprintf(name, sizeof name, "blocks.%d.attn.v", layer);
        if (!e) e = rg_params_register_normal(ps, name, 2, (int[]){H, d / H}, rng, 0, &st->layer[layer].v);
    } else if (site == RG_POS_SITE_ATTN_END) {
        snprintf(name, sizeof name, "blocks.%d.attn.r_proj.weight", layer);
        e = rg_params_register_normal(ps, name, 2, (int[]){d, d}, rng, RG_INIT_STD, &st->layer[layer].r_proj);
    }
    return e;
}

static rg_tensor *xl_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                rg_tensor *q, rg_tensor *k)
{
    (void)prep;
    const xl_state *st = state;
    return rg_pos_xl_bias(c, q, k, st->layer[layer].u, st->layer[layer].v, st->layer[layer].r_proj, st->n_heads, s);
}

/* The report's note (no setting). */
static void xl_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    snprintf(buf, cap, "xl: Transformer-XL relative sinusoidal terms with learned u, v and r_proj per layer");
}

const rg_pos_encoding rg_pos_enc_xl = {
    .name = "xl", .doc = "Transformer-XL relative attention with u, v, r_proj per layer (Dai et al. 2019)",
    .state_new = xl_new, .add_params = xl_params, .score_bias = xl_score_bias, .state_free = free,
    .report_note = xl_note, .note_order = 7, .flags = RG_POS_RELATIVE, .plot_colour = "#B59B00", .plot_marker = 13};
