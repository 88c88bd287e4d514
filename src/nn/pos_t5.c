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
#include "pos.h"

#include <math.h>
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

/* True when all B rows of pos [B, T] equal the first. */
static bool rows_share(const int32_t *pos, int B, int T)
{
    for (int b = 1; b < B; b++)
        if (memcmp(pos, pos + (int64_t)b * T, (size_t)T * sizeof(int32_t))) return false;
    return true;
}

rg_tensor *rg_pos_t5_bias(rg_ctx *c, rg_tensor *table, const int32_t *q_pos, const int32_t *k_pos, int B, int T,
                          int S, bool bidirectional, int max_distance)
{
    char s[64];
    RG_ASSERT(table && table->ndim == 2, "pos_t5_bias: table %s must be [num_buckets, H]",
              table ? rg_shape_str(table, s, 64) : "NULL");
    int nb = table->shape[0], H = table->shape[1];
    int Bq = rows_share(q_pos, B, T) && rows_share(k_pos, B, S) ? 1 : B;
    int32_t *bucket = rg_arena_alloc(&c->arena, (size_t)Bq * T * S * sizeof(int32_t));
    /* bucket of each relative position in [rmin, rmax] once when that range is small (the usual case) */
    int32_t qmin = INT32_MAX, qmax = INT32_MIN, kmin = INT32_MAX, kmax = INT32_MIN;
    for (int64_t i = 0; i < (int64_t)Bq * T; i++) {
        if (q_pos[i] < qmin) qmin = q_pos[i];
        if (q_pos[i] > qmax) qmax = q_pos[i];
    }
    for (int64_t i = 0; i < (int64_t)Bq * S; i++) {
        if (k_pos[i] < kmin) kmin = k_pos[i];
        if (k_pos[i] > kmax) kmax = k_pos[i];
    }
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
