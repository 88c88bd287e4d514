/* alibi_learned.h: a position encoding that is not built in, "alibi-learned", written against the public headers
 * only and shared by examples/custom_encoding.c (its own training loop) and examples/custom_task.c (the engine, beside
 * the built-in encodings). ALiBi's linear bias with learned slopes,
 *   bias[h, i, j] = -m[h] |p_i - p_j|,   m = blocks.{l}.attn.slopes [n_heads], one per layer,
 * initialized to alibi_learned_scale (a declared setting, default 1) times ALiBi's geometric slopes 2^(-8h/H)
 * (Press et al. 2022, "Train Short, Test Long", sec. 3; rg_alibi_slopes). Backward of the bias op:
 *   dm[h] += sum_{b, i, j} -|p_i - p_j| g[b, h, i, j].
 * Shapes: the bias [H, T, S] (rows share positions) or [B, H, T, S].
 * Header-only (static definitions) so that a user's program is one .c file plus this header: include it in one
 * translation unit and call rg_pos_register(&ALIBI_LEARNED, NULL) before naming "alibi-learned" in a config or on
 * the engine's command line (docs/extending.md). */
#ifndef ALIBI_LEARNED_H
#define ALIBI_LEARNED_H

#include <ropegrad/ropegrad.h>

#include <stdio.h>
#include <stdlib.h>

/* the bias op: sources m [H]; saved: the distances |p_i - p_j| [Bq, T, S] */
static void slopes_backward(rg_tensor *node)
{
    rg_tensor *m = node->src[0];
    int H = m->shape[0], Bq = (int)node->iarg[0];
    int64_t TS = node->iarg[1];
    const int32_t *dist = node->saved;
    rg_real *dm = rg_grad_of(m);
    for (int h = 0; h < H; h++) {
        double acc = 0;
        for (int b = 0; b < Bq; b++) {
            const rg_real *g = node->grad + ((int64_t)b * H + h) * TS;
            const int32_t *d = dist + b * TS;
            for (int64_t e = 0; e < TS; e++) acc -= (double)d[e] * g[e];
        }
        dm[h] += (rg_real)acc;
    }
}

static const rg_op OP_SLOPES = {"alibi_learned_bias", slopes_backward};

static rg_tensor *slopes_bias(rg_ctx *c, rg_tensor *m, const rg_pos_summary *s)
{
    int H = m->shape[0], Bq = s->rows_shared ? 1 : s->B, T = s->T, S = s->S;
    int64_t TS = (int64_t)T * S;
    int32_t *dist = rg_arena_alloc(&c->arena, (size_t)(Bq * TS) * sizeof(int32_t));
    for (int b = 0; b < Bq; b++)
        for (int i = 0; i < T; i++)
            for (int j = 0; j < S; j++)
                dist[b * TS + (int64_t)i * S + j] = abs(s->q_pos[b * T + i] - s->k_pos[b * S + j]);
    int shape[4] = {Bq, H, T, S};
    rg_tensor *out = Bq == 1 ? rg_node_new(c, &OP_SLOPES, 3, shape + 1, 1, &m)
                             : rg_node_new(c, &OP_SLOPES, 4, shape, 1, &m);
    for (int b = 0; b < Bq; b++)
        for (int h = 0; h < H; h++)
            for (int64_t e = 0; e < TS; e++)
                out->data[((int64_t)b * H + h) * TS + e] = -m->data[h] * (rg_real)dist[b * TS + e];
    out->saved = dist;
    out->iarg[0] = Bq;
    out->iarg[1] = TS;
    return out;
}

/* the state: the borrowed pointers to each layer's slopes (the model's registry owns them) */
typedef struct {
    double scale;
    rg_tensor *slopes[]; /* [n_layers] */
} slopes_state;

static rg_status slopes_new(const rg_model_config *cfg, void **state)
{
    slopes_state *st = calloc(1, sizeof *st + (size_t)cfg->n_layers * sizeof st->slopes[0]);
    if (!st) return rg_error(RG_ERR_NOMEM, "alibi-learned: out of memory");
    st->scale = rg_pos_config_get(cfg, "alibi_learned_scale");
    *state = st;
    return RG_OK;
}

/* blocks.{l}.attn.slopes after o_proj; no draws from rng (a deterministic initialization) */
static rg_status slopes_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                               rg_rng *rng)
{
    (void)rng;
    slopes_state *st = state;
    if (site != RG_POS_SITE_ATTN_END) return RG_OK;
    char name[RG_NAME_LEN];
    snprintf(name, sizeof name, "blocks.%d.attn.slopes", layer);
    rg_status e = rg_params_register(ps, name, 1, (int[]){cfg->n_heads}, &st->slopes[layer]);
    if (e) return e;
    double *m = malloc((size_t)cfg->n_heads * sizeof *m);
    if (!m) return rg_error(RG_ERR_NOMEM, "alibi-learned: out of memory");
    rg_alibi_slopes(cfg->n_heads, m);
    for (int h = 0; h < cfg->n_heads; h++) st->slopes[layer]->data[h] = (rg_real)(st->scale * m[h]);
    free(m);
    return RG_OK;
}

static rg_tensor *slopes_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                    rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)q, (void)k;
    return slopes_bias(c, ((slopes_state *)state)->slopes[layer], s);
}

static const rg_pos_setting SLOPES_SETTINGS[] = {
    {"alibi_learned_scale", RG_POS_SETTING_DOUBLE, 1, 0, 100, "initial slopes = scale * ALiBi's 2^(-8h/H)"},
};

static const rg_pos_encoding ALIBI_LEARNED = {
    .name = "alibi-learned", .doc = "ALiBi bias -m_h |p_i - p_j| with learned slopes m per layer (example)",
    .settings = SLOPES_SETTINGS, .n_settings = 1, .state_new = slopes_new, .add_params = slopes_params,
    .score_bias = slopes_score_bias, .state_free = free};

#endif
