/* pos_alibi_2d.c: ALiBi on a grid: the linear bias of Press et al. 2022 ("Train Short, Test Long", sec. 3) with the
 * 1-D distance p_i - p_j replaced by a distance between the (row, column) ids of query i and key j:
 *   alibi-2d-manhattan  bias[b, h, i, j] = -m_h (|r_i - r_j| + |c_i - c_j|)
 *   alibi-2d-euclidean  bias[b, h, i, j] = -m_h sqrt((r_i - r_j)^2 + (c_i - c_j)^2)
 * (the Euclidean one is CROMA's 2D-ALiBi: Fuller et al. 2023, "CROMA: Remote Sensing Representations with
 * Contrastive Radar-Optical Masked Autoencoders", NeurIPS, sec. 3; Manhattan is its L1 counterpart, the distance a
 * raster walk over the grid takes). Slopes m_h: Press et al.'s geometric sequence (rg_alibi_slopes). Two names,
 * not a setting, so that one --pos list compares them. No parameters; computed in double, rounded to the tensor
 * type (tools/ref_grid_bias.py). Shapes: ids of s -> [H, T, S] (shared ids) or [B, H, T, S]. A constant: no
 * backward (docs/derivatives.md row "pos_alibi_2d_bias"). */
#include "pos_grid_bias.h"

#include <math.h>
#include <stdlib.h>

rg_tensor *rg_pos_alibi_2d_bias(rg_ctx *c, const double *slopes, int n_heads, rg_grid_distance dist,
                                const rg_pos_summary *s)
{
    const int Bq = s->rows_shared ? 1 : s->B, T = s->T, S = s->S;
    const int32_t *qr = rg_pos_q_axis(s, RG_AXIS_ROW), *qc = rg_pos_q_axis(s, RG_AXIS_COL);
    const int32_t *kr = rg_pos_k_axis(s, RG_AXIS_ROW), *kc = rg_pos_k_axis(s, RG_AXIS_COL);
    int shape4[4] = {Bq, n_heads, T, S};
    rg_tensor *out = Bq == 1 ? rg_tensor_new(c, 3, shape4 + 1) : rg_tensor_new(c, 4, shape4);
    /* the distances of one row [T, S] once, then one scaled copy per head */
    double *dd = rg_arena_alloc(&c->arena, (size_t)T * S * sizeof(double));
    for (int b = 0; b < Bq; b++) {
        for (int i = 0; i < T; i++) {
            double r = qr[(int64_t)b * T + i], col = qc[(int64_t)b * T + i];
            const int32_t *rr = kr + (int64_t)b * S, *cc = kc + (int64_t)b * S;
            double *o = dd + (int64_t)i * S;
            if (dist == RG_GRID_MANHATTAN)
                for (int j = 0; j < S; j++) o[j] = fabs(r - rr[j]) + fabs(col - cc[j]);
            else
                for (int j = 0; j < S; j++) o[j] = sqrt((r - rr[j]) * (r - rr[j]) + (col - cc[j]) * (col - cc[j]));
        }
        for (int h = 0; h < n_heads; h++) {
            rg_real *o = out->data + ((int64_t)b * n_heads + h) * T * S;
            double m = slopes[h];
            for (int64_t e = 0; e < (int64_t)T * S; e++) o[e] = (rg_real)(-m * dd[e]);
        }
    }
    return out;
}

/* ------------------------------------------------------------------ the descriptors: the slopes are the state */

typedef struct {
    int n_heads;
    double slopes[]; /* [n_heads] */
} alibi_2d_state;

static rg_status alibi_2d_new(const rg_model_config *cfg, void **state)
{
    alibi_2d_state *st = malloc(sizeof *st + (size_t)cfg->n_heads * sizeof(double));
    if (!st) return rg_error(RG_ERR_NOMEM, "alibi-2d: out of memory for %d slopes", cfg->n_heads);
    st->n_heads = cfg->n_heads;
    rg_alibi_slopes(cfg->n_heads, st->slopes);
    *state = st;
    return RG_OK;
}

static rg_tensor *manhattan_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                 rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)layer, (void)q, (void)k;
    const alibi_2d_state *st = state;
    return rg_pos_alibi_2d_bias(c, st->slopes, st->n_heads, RG_GRID_MANHATTAN, s);
}

static rg_tensor *euclidean_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                 rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)layer, (void)q, (void)k;
    const alibi_2d_state *st = state;
    return rg_pos_alibi_2d_bias(c, st->slopes, st->n_heads, RG_GRID_EUCLIDEAN, s);
}

const rg_pos_encoding rg_pos_enc_alibi_2d_manhattan = {
    .name = "alibi-2d-manhattan",
    .doc = "ALiBi bias -m_h (|dr| + |dc|) on (row, column) ids (Press et al. 2022 slopes)",
    .state_new = alibi_2d_new, .score_bias = manhattan_bias, .state_free = free,
    .flags = RG_POS_OPT_IN | RG_POS_RELATIVE,
    .plot_colour = "#56B4E9", .plot_marker = 9};

const rg_pos_encoding rg_pos_enc_alibi_2d_euclidean = {
    .name = "alibi-2d-euclidean", .doc = "ALiBi bias -m_h sqrt(dr^2 + dc^2) on (row, column) ids (CROMA's 2D-ALiBi)",
    .state_new = alibi_2d_new, .score_bias = euclidean_bias, .state_free = free,
    .flags = RG_POS_OPT_IN | RG_POS_RELATIVE,
    .plot_colour = "#009E73", .plot_marker = 11};
