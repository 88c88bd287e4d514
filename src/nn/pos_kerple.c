/* pos_kerple.c: KERPLE, kernelized relative positional embedding (Chi et al. 2022, "KERPLE: Kernelized Relative
 * Positional Embedding for Length Extrapolation", NeurIPS, sec. 4.2, eqs. for the power and logarithmic variants;
 * reference code chijames/KERPLE, megatron/model/positional_embeddings.py ParallelKerpleLog / ParallelKerplePower):
 * an additive bias on the scaled scores from a conditionally positive definite kernel of the distance
 * d = |p_i - p_j|, with two learned parameters per head and layer:
 *   kerple-log:   bias[h, i, j] = -r1[h] log(1 + r2[h] d)
 *   kerple-power: bias[h, i, j] = -r1[h] d^r2[h],   0 < r2 <= 2
 * Parameters (state_dict names of tools/ref_model.py) blocks.{l}.attn.kerple.r1 and .r2 [n_heads], registered after
 * o_proj. Initialization as the reference code: log: r1 = bias_p ~ U(0, 2), r2 = bias_a ~ U(0, 1); power:
 * r1 = bias_a ~ U(0, 1), r2 = bias_p ~ U(0, 2) (r1 of every head drawn first, then r2). Positivity as the reference
 * code: before every forward the parameters are clamped IN PLACE to >= kerple_eps (0.01), r2 of power also to
 * <= 2 (a projection after the optimizer's step; the gradient is that of the clamped values, as torch's
 * `p.data = p.data.clamp(...)`). The reference uses the causal distance tril(i - j) (0 above the diagonal, where
 * the mask removes the entries anyway); here d = |p_i - p_j| in both directions, the same on every unmasked entry.
 * Shapes: positions of the summary s -> [H, T, S] (rows share positions) or [B, H, T, S]; computed in double over
 * the distinct distances (a table of nd = dmax + 1 values per head when nd <= the number of entries, else per
 * entry), rounded to the tensor type. Backward: see rg_pos_kerple_bias in pos.h (docs/derivatives.md row
 * "pos_kerple_bias"). */
#include "nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void kerple_backward(rg_tensor *node);
static const rg_op OP_KERPLE = {"pos_kerple_bias", kerple_backward};

/* The kernel's value and its partial derivatives at distance d. power: d^r2, with d/dr2 = 0 at d = 0 (torch.pow). */
static inline double k_value(bool power, double r1, double r2, double d)
{
    return power ? -r1 * pow(d, r2) : -r1 * log1p(r2 * d);
}

static inline void k_grads(bool power, double r1, double r2, double d, double *d1, double *d2)
{
    if (power) {
        double p = pow(d, r2);
        *d1 = -p;
        *d2 = d > 0 ? -r1 * p * log(d) : 0;
    } else {
        *d1 = -log1p(r2 * d);
        *d2 = -r1 * d / (1 + r2 * d);
    }
}

rg_tensor *rg_pos_kerple_bias(rg_ctx *c, rg_tensor *r1, rg_tensor *r2, bool power, const rg_pos_summary *s)
{
    char s1[64], s2[64];
    RG_ASSERT(r1 && r2 && r1->ndim == 1 && rg_same_shape(r1, r2), "pos_kerple_bias: r1 %s and r2 %s must be [H]",
              r1 ? rg_shape_str(r1, s1, 64) : "NULL", r2 ? rg_shape_str(r2, s2, 64) : "NULL");
    int H = r1->shape[0], Bq = s->rows_shared ? 1 : s->B, T = s->T, S = s->S;
    int64_t dmax = (int64_t)s->q_max - s->k_min;
    if ((int64_t)s->k_max - s->q_min > dmax) dmax = (int64_t)s->k_max - s->q_min;
    RG_ASSERT(dmax >= 0 && dmax < INT32_MAX, "pos_kerple_bias: distance %lld", (long long)dmax);
    int64_t TS = (int64_t)T * S, n = Bq * TS;
    int32_t *dist = rg_arena_alloc(&c->arena, (size_t)n * sizeof(int32_t));
    for (int b = 0; b < Bq; b++)
        for (int i = 0; i < T; i++) {
            int64_t qp = s->q_pos[(int64_t)b * T + i];
            const int32_t *kp = s->k_pos + (int64_t)b * S;
            int32_t *o = dist + ((int64_t)b * T + i) * S;
            for (int j = 0; j < S; j++) o[j] = (int32_t)llabs(qp - kp[j]);
        }
    int shape4[4] = {Bq, H, T, S};
    rg_tensor *src[2] = {r1, r2};
    rg_tensor *out = Bq == 1 ? rg_node_new(c, &OP_KERPLE, 3, shape4 + 1, 2, src)
                             : rg_node_new(c, &OP_KERPLE, 4, shape4, 2, src);
    bool table = dmax + 1 <= n;
    double *lut = table ? rg_arena_alloc(&c->arena, (size_t)(dmax + 1) * sizeof(double)) : NULL;
    for (int h = 0; h < H; h++) {
        double a = r1->data[h], p = r2->data[h];
        if (table)
            for (int64_t d = 0; d <= dmax; d++) lut[d] = k_value(power, a, p, (double)d);
        for (int b = 0; b < Bq; b++) {
            rg_real *o = out->data + ((int64_t)b * H + h) * TS;
            const int32_t *dd = dist + b * TS;
            if (table)
                for (int64_t e = 0; e < TS; e++) o[e] = (rg_real)lut[dd[e]];
            else
                for (int64_t e = 0; e < TS; e++) o[e] = (rg_real)k_value(power, a, p, (double)dd[e]);
        }
    }
    out->saved = dist;
    out->iarg[0] = Bq;
    out->iarg[1] = TS;
    out->iarg[2] = power;
    out->iarg[3] = table ? dmax + 1 : 0;
    return out;
}

/* dr1[h] += sum_e g[h, e] dB/dr1(d_e), dr2 likewise; with the table, g is first summed per distance. */
static void kerple_backward(rg_tensor *node)
{
    rg_tensor *r1 = node->src[0], *r2 = node->src[1];
    int H = r1->shape[0], Bq = (int)node->iarg[0];
    int64_t TS = node->iarg[1], nd = node->iarg[3];
    bool power = node->iarg[2] != 0;
    const int32_t *dist = node->saved;
    double *G = nd ? calloc((size_t)nd, sizeof(double)) : NULL;
    RG_ASSERT(!nd || G, "pos_kerple_bias backward: out of memory for %lld distances", (long long)nd);
    for (int h = 0; h < H; h++) {
        double a = r1->data[h], p = r2->data[h], g1 = 0, g2 = 0, d1, d2;
        if (nd) memset(G, 0, (size_t)nd * sizeof(double));
        for (int b = 0; b < Bq; b++) {
            const rg_real *g = node->grad + ((int64_t)b * H + h) * TS;
            const int32_t *dd = dist + b * TS;
            if (nd) {
                for (int64_t e = 0; e < TS; e++) G[dd[e]] += g[e];
            } else {
                for (int64_t e = 0; e < TS; e++) {
                    k_grads(power, a, p, (double)dd[e], &d1, &d2);
                    g1 += g[e] * d1;
                    g2 += g[e] * d2;
                }
            }
        }
        for (int64_t d = 0; d < nd; d++) {
            if (G[d] == 0) continue;
            k_grads(power, a, p, (double)d, &d1, &d2);
            g1 += G[d] * d1;
            g2 += G[d] * d2;
        }
        if (r1->requires_grad) rg_grad_of(r1)[h] += (rg_real)g1;
        if (r2->requires_grad) rg_grad_of(r2)[h] += (rg_real)g2;
    }
    free(G);
}

void rg_pos_kerple_project(rg_tensor *r1, rg_tensor *r2, bool power, double eps)
{
    bool changed1 = false, changed2 = false;
    for (int64_t h = 0; h < r1->numel; h++) {
        if (!(r1->data[h] >= eps)) { r1->data[h] = (rg_real)eps; changed1 = true; }
        if (!(r2->data[h] >= eps)) { r2->data[h] = (rg_real)eps; changed2 = true; }
        if (power && r2->data[h] > 2) { r2->data[h] = 2; changed2 = true; }
    }
    if (changed1) rg_tensor_bump_version(r1);
    if (changed2) rg_tensor_bump_version(r2);
}

/* ------------------------------------------------------------------ the descriptors: r1, r2 per layer */

typedef struct {
    bool power;
    double eps;
    struct { rg_tensor *r1, *r2; } layer[]; /* [n_layers] */
} kerple_state;

static rg_status kerple_new(const rg_model_config *cfg, bool power, void **state)
{
    kerple_state *st = calloc(1, sizeof *st + (size_t)cfg->n_layers * sizeof st->layer[0]);
    if (!st) return rg_error(RG_ERR_NOMEM, "kerple: out of memory");
    st->power = power;
    st->eps = rg_pos_config_get(cfg, "kerple_eps");
    *state = st;
    return RG_OK;
}

static rg_status new_log(const rg_model_config *cfg, void **state) { return kerple_new(cfg, false, state); }
static rg_status new_power(const rg_model_config *cfg, void **state) { return kerple_new(cfg, true, state); }

/* blocks.{l}.attn.kerple.r1 then .r2 [H], after o_proj: r1 of every head, then r2, each scale * U(0, 1) */
static rg_status kerple_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                               rg_rng *rng)
{
    kerple_state *st = state;
    if (site != RG_POS_SITE_ATTN_END) return RG_OK;
    const char *suffix[2] = {"r1", "r2"};
    double scale[2] = {st->power ? 1 : 2, st->power ? 2 : 1}; /* the reference's bias_p (2) and bias_a (1) */
    rg_tensor **dst[2] = {&st->layer[layer].r1, &st->layer[layer].r2};
    for (int k = 0; k < 2; k++) {
        char name[RG_NAME_LEN];
        snprintf(name, sizeof name, "blocks.%d.attn.kerple.%s", layer, suffix[k]);
        rg_status e = rg_params_register(ps, name, 1, (int[]){cfg->n_heads}, dst[k]);
        if (e) return e;
        for (int h = 0; h < cfg->n_heads; h++) (*dst[k])->data[h] = (rg_real)(scale[k] * rg_rng_uniform(rng));
    }
    return RG_OK;
}

static rg_tensor *kerple_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                    rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)q, (void)k;
    kerple_state *st = state;
    rg_pos_kerple_project(st->layer[layer].r1, st->layer[layer].r2, st->power, st->eps);
    return rg_pos_kerple_bias(c, st->layer[layer].r1, st->layer[layer].r2, st->power, s);
}

static const rg_pos_setting KERPLE_SETTINGS[] = {
    {"kerple_eps", RG_POS_SETTING_DOUBLE, 0.01, 1e-6, 1,
     "lower bound r1, r2 are clamped to before each forward (the reference code's 1e-2)"},
};

const rg_pos_encoding rg_pos_enc_kerple_log = {
    .name = "kerple-log",
    .doc = "KERPLE log bias -r1 log(1 + r2 |i-j|), r1, r2 > 0 per head and layer (Chi et al. 2022)",
    .settings = KERPLE_SETTINGS, .n_settings = 1, .state_new = new_log, .add_params = kerple_params,
    .score_bias = kerple_score_bias, .state_free = free, .flags = RG_POS_RELATIVE, .plot_colour = "#8C564B",
    .plot_marker = 10};

const rg_pos_encoding rg_pos_enc_kerple_power = {
    .name = "kerple-power",
    .doc = "KERPLE power bias -r1 |i-j|^r2, r1 > 0, 0 < r2 <= 2 per head and layer (Chi et al. 2022)",
    .settings = KERPLE_SETTINGS, .n_settings = 1, .state_new = new_power, .add_params = kerple_params,
    .score_bias = kerple_score_bias, .state_free = free, .flags = RG_POS_RELATIVE, .plot_colour = "#9467BD",
    .plot_marker = 12};
