/* pos_t5_2d.c: a T5-style relative bias on the grid offset (dr, dc): the bucketed bias of Raffel et al. 2020 (sec.
 * 2.1; bucketing of HF T5Attention._relative_position_bucket, rg_t5_bucket) applied per axis and summed, one table per
 * axis (the factorized 2-D relative bias of vision transformers, e.g. the decomposed relative positions of Li et al.
 * 2022, "MViTv2", sec. 3.1, with T5's buckets in place of one entry per offset):
 *   bias[b, h, i, j] = rel_bias_row.weight[bucket(r_j - r_i), h] + rel_bias_col.weight[bucket(c_j - c_i), h]
 * key minus query as T5; always bidirectional buckets (in raster order a key before the query may have dc > 0,
 * and with other layouts dr too). Settings t5_2d_num_buckets (both tables' rows) and t5_2d_max_distance (>
 * t5_2d_num_buckets / 4: the logarithmic buckets of a direction start at num_buckets / 4). Both tables are shared by
 * every layer, N(0, 0.02), registered after the last block (as T5's rel_bias.weight).
 * Shapes: tables [num_buckets, H]; ids of s -> [H, T, S] (shared ids) or [B, H, T, S].
 * Backward: dW_row[bucket_r(b, i, j), h] += g[b, h, i, j], dW_col[bucket_c(b, i, j), h] += g (scatter-add;
 * docs/derivatives.md row "pos_t5_2d_bias"). */
#include "pos_grid_bias.h"

#include <stdlib.h>

static void t5_2d_backward(rg_tensor *node);
static const rg_op OP_T5_2D = {"pos_t5_2d_bias", t5_2d_backward};

/* out[b, i, j] = bucket(k[b, j] - q[b, i]) for the Bq rows of ids q [.., T], k [.., S]; a table of the buckets of
 * every offset in [k_min - q_max, k_max - q_min] when that range is no larger than the output */
static void buckets_of(rg_ctx *c, const int32_t *q, const int32_t *k, int32_t qmin, int32_t qmax, int32_t kmin,
                       int32_t kmax, int Bq, int T, int S, int nb, int md, int32_t *out)
{
    int64_t rmin = (int64_t)kmin - qmax, range = (int64_t)kmax - qmin - rmin + 1;
    int32_t *lut = NULL;
    if (range <= (int64_t)Bq * T * S) {
        lut = rg_arena_alloc(&c->arena, (size_t)range * sizeof(int32_t));
        for (int64_t r = 0; r < range; r++) lut[r] = rg_t5_bucket((int)(rmin + r), true, nb, md);
    }
    for (int b = 0; b < Bq; b++)
        for (int i = 0; i < T; i++) {
            int32_t *o = out + ((int64_t)b * T + i) * S;
            int64_t qi = q[(int64_t)b * T + i];
            const int32_t *kb = k + (int64_t)b * S;
            if (lut)
                for (int j = 0; j < S; j++) o[j] = lut[kb[j] - qi - rmin];
            else
                for (int j = 0; j < S; j++) o[j] = rg_t5_bucket((int)(kb[j] - qi), true, nb, md);
        }
}

rg_tensor *rg_pos_t5_2d_bias(rg_ctx *c, rg_tensor *table_row, rg_tensor *table_col, const rg_pos_summary *s,
                             int max_distance)
{
    char s1[64], s2[64];
    RG_ASSERT(table_row && table_col && table_row->ndim == 2 && table_col->ndim == 2 &&
              table_row->shape[0] == table_col->shape[0] && table_row->shape[1] == table_col->shape[1],
              "pos_t5_2d_bias: tables %s and %s must both be [num_buckets, H]",
              table_row ? rg_shape_str(table_row, s1, 64) : "NULL",
              table_col ? rg_shape_str(table_col, s2, 64) : "NULL");
    const int nb = table_row->shape[0], H = table_row->shape[1], T = s->T, S = s->S;
    RG_ASSERT(nb >= 4 && max_distance > nb / 4, "pos_t5_2d_bias: %d buckets, max_distance %d", nb, max_distance);
    const int Bq = s->rows_shared ? 1 : s->B;
    const int64_t TS = (int64_t)T * S;
    int32_t *br = rg_arena_alloc(&c->arena, (size_t)(2 * Bq * TS) * sizeof(int32_t)), *bc = br + Bq * TS;
    const int R = RG_AXIS_ROW, C = RG_AXIS_COL;
    buckets_of(c, rg_pos_q_axis(s, R), rg_pos_k_axis(s, R), s->q_axis_min[R], s->q_axis_max[R], s->k_axis_min[R],
               s->k_axis_max[R], Bq, T, S, nb, max_distance, br);
    buckets_of(c, rg_pos_q_axis(s, C), rg_pos_k_axis(s, C), s->q_axis_min[C], s->q_axis_max[C], s->k_axis_min[C],
               s->k_axis_max[C], Bq, T, S, nb, max_distance, bc);
    int shape4[4] = {Bq, H, T, S};
    rg_tensor *src[2] = {table_row, table_col};
    rg_tensor *out = Bq == 1 ? rg_node_new(c, &OP_T5_2D, 3, shape4 + 1, 2, src)
                             : rg_node_new(c, &OP_T5_2D, 4, shape4, 2, src);
    const rg_real *wr = table_row->data, *wc = table_col->data;
    for (int b = 0; b < Bq; b++)
        for (int h = 0; h < H; h++) {
            rg_real *o = out->data + ((int64_t)b * H + h) * TS;
            const int32_t *xr = br + b * TS, *xc = bc + b * TS;
            for (int64_t e = 0; e < TS; e++) o[e] = wr[(int64_t)xr[e] * H + h] + wc[(int64_t)xc[e] * H + h];
        }
    out->saved = br;
    out->iarg[0] = Bq;
    out->iarg[1] = T;
    out->iarg[2] = S;
    return out;
}

/* bias = W_row[br, h] + W_col[bc, h]: each table gets g scattered at its buckets */
static void t5_2d_backward(rg_tensor *node)
{
    const int H = node->src[0]->shape[1], Bq = (int)node->iarg[0];
    const int64_t TS = node->iarg[1] * node->iarg[2];
    const int32_t *br = node->saved, *bc = br + Bq * TS;
    rg_real *dr = node->src[0]->requires_grad ? rg_grad_of(node->src[0]) : NULL;
    rg_real *dc = node->src[1]->requires_grad ? rg_grad_of(node->src[1]) : NULL;
    for (int b = 0; b < Bq; b++)
        for (int h = 0; h < H; h++) {
            const rg_real *g = node->grad + ((int64_t)b * H + h) * TS;
            const int32_t *xr = br + b * TS, *xc = bc + b * TS;
            if (dr)
                for (int64_t e = 0; e < TS; e++) dr[(int64_t)xr[e] * H + h] += g[e];
            if (dc)
                for (int64_t e = 0; e < TS; e++) dc[(int64_t)xc[e] * H + h] += g[e];
        }
}

/* ------------------------------------------------------------------ the descriptor */

typedef struct {
    rg_tensor *row, *col; /* rel_bias_row.weight, rel_bias_col.weight [t5_2d_num_buckets, n_heads] */
    int max_distance;
} t5_2d_state;

static rg_status t5_2d_new(const rg_model_config *cfg, void **state)
{
    t5_2d_state *st = calloc(1, sizeof *st);
    if (!st) return rg_error(RG_ERR_NOMEM, "t5-2d bias: out of memory");
    st->max_distance = (int)rg_pos_config_get(cfg, "t5_2d_max_distance");
    *state = st;
    return RG_OK;
}

static rg_status t5_2d_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                              rg_rng *rng)
{
    (void)layer;
    if (site != RG_POS_SITE_OUTPUT) return RG_OK;
    t5_2d_state *st = state;
    int shape[2] = {(int)rg_pos_config_get(cfg, "t5_2d_num_buckets"), cfg->n_heads};
    rg_status s = rg_params_register_normal(ps, "rel_bias_row.weight", 2, shape, rng, RG_INIT_STD, &st->row);
    return s ? s : rg_params_register_normal(ps, "rel_bias_col.weight", 2, shape, rng, RG_INIT_STD, &st->col);
}

static rg_tensor *t5_2d_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                   rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)layer, (void)q, (void)k;
    const t5_2d_state *st = state;
    return rg_pos_t5_2d_bias(c, st->row, st->col, s, st->max_distance);
}

static rg_status t5_2d_validate(const rg_model_config *cfg)
{
    int nb = (int)rg_pos_config_get(cfg, "t5_2d_num_buckets"), md = (int)rg_pos_config_get(cfg, "t5_2d_max_distance");
    if (md <= nb / 4)
        return rg_error(RG_ERR_ARG, "config: t5_2d_max_distance %d must be > t5_2d_num_buckets/4 (t5_2d_num_buckets "
                        "%d: each direction's logarithmic buckets start at num_buckets/4)", md, nb);
    return RG_OK;
}

static const rg_pos_setting T5_2D_SETTINGS[] = {
    {"t5_2d_num_buckets", RG_POS_SETTING_INT, 32, 4, 1 << 20,
     "buckets of each axis' table, half per direction (HF num_buckets, bidirectional)"},
    {"t5_2d_max_distance", RG_POS_SETTING_INT, 128, 2, 2147483647,
     "offset of the last logarithmic bucket per axis (HF max_distance; > t5_2d_num_buckets/4)"},
};

const rg_pos_encoding rg_pos_enc_t5_2d = {
    .name = "t5-2d", .doc = "rel_bias_row.weight[bucket(dr), h] + rel_bias_col.weight[bucket(dc), h], T5 buckets "
    "per axis (Raffel et al. 2020)",
    .settings = T5_2D_SETTINGS, .n_settings = 2, .validate = t5_2d_validate, .state_new = t5_2d_new,
    .add_params = t5_2d_params, .score_bias = t5_2d_score_bias, .state_free = free,
    .flags = RG_POS_OPT_IN | RG_POS_RELATIVE,
    .plot_colour = "#B59B00", .plot_marker = 13};
