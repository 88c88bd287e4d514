/* pos_t5.c: the T5 relative position bias (Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a
 * Unified Text-to-Text Transformer", sec. 2.1), with the bucketing of Hugging Face transformers
 * (models/t5/modeling_t5.py, T5Attention._relative_position_bucket; tools/ref_model.py t5_relative_position_bucket):
 * relative_position = p_j - p_i (key minus query); bidirectional: half the buckets per direction, keys after the
 * query in the upper half, n = |rel|; causal: n = max(-rel, 0). Of each half, n < max_exact = half/2 is its own
 * bucket, larger n go to max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact) * (half -
 * max_exact)) (float32 as HF), clamped to half - 1.
 * One learned table rel_bias.weight [num_buckets, H] shared by all layers; bias[b, h, i, j] = table[bucket, h] is
 * added to the scaled scores. Shapes: -> [H, T, S] (every row has the same positions) or [B, H, T, S].
 * Backward: dtable[bucket(b, i, j), h] += g[b, h, i, j] (scatter-add; docs/derivatives.md row "pos_t5_bias"). */
#include "nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void t5_backward(rg_tensor *node);
static const rg_op OP_T5 = {"pos_t5_bias", t5_backward};

int rg_t5_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance)
{
    int ret = 0, n;
    if (bidirectional) {
        num_buckets /= 2;
        if (relative_position > 0) ret += num_buckets;
        n = relative_position < 0 ? -relative_position : relative_position;
    } else {
        n = relative_position < 0 ? -relative_position : 0;
    }
    int max_exact = num_buckets / 2;
    if (n < max_exact) return ret + n;
    float v = logf((float)n / (float)max_exact) / (float)log((double)max_distance / max_exact) *
              (float)(num_buckets - max_exact);
    int large = max_exact + (int)v;
    if (large > num_buckets - 1) large = num_buckets - 1;
    return ret + large;
}

rg_tensor *rg_pos_t5_bias(rg_ctx *c, rg_tensor *table, const rg_pos_summary *ps, bool bidirectional,
                          int max_distance)
{
    char s[64];
    RG_ASSERT(table && table->ndim == 2, "pos_t5_bias: table %s must be [num_buckets, H]",
              table ? rg_shape_str(table, s, 64) : "NULL");
    int nb = table->shape[0], H = table->shape[1], T = ps->T, S = ps->S;
    const int32_t *q_pos = ps->q_pos, *k_pos = ps->k_pos;
    int Bq = ps->rows_shared ? 1 : ps->B;
    int32_t *bucket = rg_arena_alloc(&c->arena, (size_t)Bq * T * S * sizeof(int32_t));
    /* bucket of each relative position in [rmin, rmax] once when that range is small (the usual case) */
    int32_t qmin = ps->q_min, qmax = ps->q_max, kmin = ps->k_min, kmax = ps->k_max;
    int64_t rmin = (int64_t)kmin - qmax, range = (int64_t)kmax - qmin - rmin + 1;
    int32_t *lut = NULL;
    if (range <= (int64_t)Bq * T * S) {
        lut = rg_arena_alloc(&c->arena, (size_t)range * sizeof(int32_t));
        for (int64_t r = 0; r < range; r++) lut[r] = rg_t5_bucket((int)(rmin + r), bidirectional, nb, max_distance);
    }
    for (int b = 0; b < Bq; b++)
        for (int i = 0; i < T; i++) {
            int32_t *o = bucket + ((int64_t)b * T + i) * S;
            int64_t qp = q_pos[(int64_t)b * T + i];
            const int32_t *kp = k_pos + (int64_t)b * S;
            for (int j = 0; j < S; j++) {
                int64_t rel = kp[j] - qp;
                o[j] = lut ? lut[rel - rmin] : rg_t5_bucket((int)rel, bidirectional, nb, max_distance);
            }
        }
    int shape4[4] = {Bq, H, T, S};
    rg_tensor *out = Bq == 1 ? rg_node_new(c, &OP_T5, 3, shape4 + 1, 1, &table)
                             : rg_node_new(c, &OP_T5, 4, shape4, 1, &table);
    int64_t TS = (int64_t)T * S;
    for (int b = 0; b < Bq; b++)
        for (int h = 0; h < H; h++) {
            rg_real *o = out->data + ((int64_t)b * H + h) * TS;
            const int32_t *bk = bucket + b * TS;
            for (int64_t e = 0; e < TS; e++) o[e] = table->data[(int64_t)bk[e] * H + h];
        }
    out->saved = bucket;
    out->iarg[0] = Bq;
    out->iarg[1] = T;
    out->iarg[2] = S;
    return out;
}

/* bias[b, h, i, j] = table[bucket[b, i, j], h]: dtable[bucket, h] += g. */
static void t5_backward(rg_tensor *node)
{
    rg_tensor *table = node->src[0];
    int H = table->shape[1];
    int Bq = (int)node->iarg[0];
    int64_t TS = node->iarg[1] * node->iarg[2];
    const int32_t *bucket = node->saved;
    rg_real *dt = rg_grad_of(table);
    for (int b = 0; b < Bq; b++)
        for (int h = 0; h < H; h++) {
            const rg_real *g = node->grad + ((int64_t)b * H + h) * TS;
            const int32_t *bk = bucket + b * TS;
            for (int64_t e = 0; e < TS; e++) dt[(int64_t)bk[e] * H + h] += g[e];
        }
}

/* ------------------------------------------------------------------ the descriptor */

typedef struct {
    rg_tensor *table;   /* rel_bias.weight [t5_num_buckets, n_heads], shared by every layer */
    bool bidirectional;
    int max_distance;
} t5_state;

static rg_status t5_new(const rg_model_config *cfg, void **state)
{
    t5_state *st = calloc(1, sizeof *st);
    if (!st) return rg_error(RG_ERR_NOMEM, "t5 bias: out of memory");
    st->bidirectional = !cfg->causal;
    st->max_distance = (int)rg_pos_config_get(cfg, "t5_max_distance");
    *state = st;
    return RG_OK;
}

/* rel_bias.weight N(0, 0.02), after the last block */
static rg_status t5_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                           rg_rng *rng)
{
    (void)layer;
    if (site != RG_POS_SITE_OUTPUT) return RG_OK;
    int nb = (int)rg_pos_config_get(cfg, "t5_num_buckets");
    return rg_params_register_normal(ps, "rel_bias.weight", 2, (int[]){nb, cfg->n_heads}, rng,
                                     RG_INIT_STD, &((t5_state *)state)->table);
}

static rg_tensor *t5_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)layer, (void)q, (void)k;
    const t5_state *st = state;
    return rg_pos_t5_bias(c, st->table, s, st->bidirectional, st->max_distance);
}

static rg_status t5_validate(const rg_model_config *cfg)
{
    int nb = (int)rg_pos_config_get(cfg, "t5_num_buckets"), md = (int)rg_pos_config_get(cfg, "t5_max_distance");
    if (md <= nb / 2)
        return rg_error(RG_ERR_ARG, "config: t5_max_distance %d must be > t5_num_buckets/2 (t5_num_buckets %d)", md,
                        nb);
    return RG_OK;
}

/* HF T5Config relative_attention_num_buckets, relative_attention_max_distance */
static const rg_pos_setting T5_SETTINGS[] = {
    {"t5_num_buckets", RG_POS_SETTING_INT, 32, 4, 1 << 20, "buckets of the relative bias table (HF num_buckets)"},
    {"t5_max_distance", RG_POS_SETTING_INT, 128, 1, 2147483647,
     "distance of the last logarithmic bucket (HF max_distance; > t5_num_buckets/2)"},
};

/* The report's note: which buckets the longest training distance reaches under the config's max_distance (the
 * buckets past it are never trained), and the same under 128, the rows of the variant that keeps that value. */
static void t5_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    int nb = (int)rg_pos_config_get(c, "t5_num_buckets"), md = (int)rg_pos_config_get(c, "t5_max_distance");
    int dmax = in->longest_distance, b = rg_t5_bucket(-dmax, false, nb, md), w = 0;
    buf[0] = 0;
    if (in->base_rows && dmax >= nb / 2 && b == nb - 1)
        w = snprintf(buf, cap, "t5: %d causal buckets (the first %d exact), max_distance %d: training distances reach "
                     "the last bucket %d, so every longer distance reads a trained bucket", nb, nb / 2, md, b);
    else if (in->base_rows && dmax >= nb / 2)
        w = snprintf(buf, cap, "t5: %d causal buckets (the first %d exact), max_distance %d: training distances reach "
                     "bucket %d only; buckets %d..%d are never trained and are read at test distances past %d", nb,
                     nb / 2, md, b, b + 1, nb - 1, dmax);
    else if (in->base_rows)
        w = snprintf(buf, cap, "t5: %d causal buckets (the first %d exact), max_distance %d: training distances reach "
                     "exact bucket %d only, so test distances %d..%d read untrained exact buckets (no max_distance "
                     "helps: a longest training distance below %d never reaches the log buckets)", nb, nb / 2, md,
                     dmax, dmax + 1, nb / 2 - 1, nb / 2);
    if (w < 0 || (size_t)w >= cap) w = 0;
    int b128 = rg_t5_bucket(-dmax, false, nb, 128);
    if (in->capped_rows)
        snprintf(buf + w, cap - (size_t)w, "%st5 max_distance=128 (variant t5max128, the setting before the fair 2L+1 default): "
                 "training distances reach bucket %d only; buckets %d..%d are never trained and are read at test "
                 "distances past %d", w ? "\n" : "", b128, b128 + 1, nb - 1, dmax);
}

const rg_pos_encoding rg_pos_enc_t5 = {
    .name = "t5", .doc = "T5 bucketed relative bias rel_bias.weight[bucket(j-i), h] (Raffel et al. 2020)",
    .settings = T5_SETTINGS, .n_settings = 2, .validate = t5_validate, .state_new = t5_new, .add_params = t5_params,
    .score_bias = t5_score_bias, .state_free = free, .max_distance_setting = "t5_max_distance",
    .report_note = t5_note, .note_order = 1, .flags = RG_POS_RELATIVE, .plot_colour = "#009E73", .plot_marker = 11};
