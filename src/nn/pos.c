/* pos.c: position-encoding names, the per-model encoding state, the dispatch of the model's four hooks to each
 * encoding family (src/nn/pos_*.c: one file per family, each citing its source), and randomized positions.
 *
 * Randomized positions: Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of
 * Transformers" (ACL), sec. 3: during training each sequence of length T takes the positions of a sorted uniformly
 * random subset of size T of [0, L) with L larger than any test length; at evaluation positions are 0..T-1.
 * The subset is drawn with selection sampling (Knuth, TAOCP vol. 2, 3.4.2, Algorithm S), which emits it sorted.
 */
#include "pos.h"
#include "nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const POS_NAMES[RG_POS_COUNT] = {"none", "sinusoidal", "learned", "t5", "xl", "alibi", "rope",
                                                    "rope-half"};
static const char *const EXT_NAMES[RG_ROPE_EXT_COUNT] = {"none", "pi", "ntk", "yarn", "llama3"};

const char *rg_pos_name(rg_pos_kind k) { return (unsigned)k < RG_POS_COUNT ? POS_NAMES[k] : "?"; }
const char *rg_rope_ext_name(rg_rope_ext e) { return (unsigned)e < RG_ROPE_EXT_COUNT ? EXT_NAMES[e] : "?"; }

rg_status rg_pos_parse(const char *name, rg_pos_kind *out)
{
    for (int i = 0; i < RG_POS_COUNT; i++)
        if (strcmp(name, POS_NAMES[i]) == 0) { *out = (rg_pos_kind)i; return RG_OK; }
    return rg_error(RG_ERR_ARG, "unknown position encoding '%s' (allowed: none, sinusoidal, learned, t5, xl, alibi, "
                    "rope, rope-half)", name);
}

rg_status rg_rope_ext_parse(const char *name, rg_rope_ext *out)
{
    for (int i = 0; i < RG_ROPE_EXT_COUNT; i++)
        if (strcmp(name, EXT_NAMES[i]) == 0) { *out = (rg_rope_ext)i; return RG_OK; }
    return rg_error(RG_ERR_ARG, "unknown RoPE extension '%s' (allowed: none, pi, ntk, yarn, llama3)", name);
}

void rg_random_positions(rg_rng *rng, int B, int T, int max_position, int32_t *out)
{
    RG_ASSERT(T >= 0 && T <= max_position, "rg_random_positions: %d positions from [0, %d)", T, max_position);
    for (int b = 0; b < B; b++) {
        int32_t *o = out + (int64_t)b * T;
        int chosen = 0;
        for (int t = 0; t < max_position && chosen < T; t++)
            /* select t with probability (still needed) / (still available) */
            if ((int)rg_rng_below(rng, (uint32_t)(max_position - t)) < T - chosen) o[chosen++] = t;
    }
}

/* ------------------------------------------------------------------ per-model state */

struct rg_pos_state {
    rg_rope_cache rope;   /* rope, rope-half */
    double *slopes;       /* alibi [n_heads] */
    int n_heads;
};

rg_status rg_pos_state_new(const struct rg_model *m, rg_pos_state **out)
{
    *out = NULL;
    if ((unsigned)m->cfg.pos >= RG_POS_COUNT)
        return rg_error(RG_ERR_ARG, "position encoding %d does not exist", (int)m->cfg.pos);
    rg_pos_state *s = calloc(1, sizeof *s);
    if (!s) return rg_error(RG_ERR_NOMEM, "out of memory");
    rg_rope_cache_init(&s->rope);
    s->n_heads = m->cfg.n_heads;
    if (m->cfg.pos == RG_POS_ALIBI) {
        s->slopes = malloc((size_t)m->cfg.n_heads * sizeof *s->slopes);
        if (!s->slopes) { free(s); return rg_error(RG_ERR_NOMEM, "out of memory"); }
        rg_alibi_slopes(m->cfg.n_heads, s->slopes);
    }
    *out = s;
    return RG_OK;
}

void rg_pos_state_free(rg_pos_state *s)
{
    if (!s) return;
    rg_rope_cache_free(&s->rope);
    free(s->slopes);
    free(s);
}

rg_status rg_pos_input(rg_ctx *c, struct rg_model *m, rg_tensor *tok, const int32_t *pos, int B, int T,
                       rg_tensor **h)
{
    switch (m->cfg.pos) {
    case RG_POS_SINUSOIDAL:
        *h = rg_pos_sinusoidal(c, tok, pos);
        return RG_OK;
    case RG_POS_LEARNED:
        return rg_pos_learned(c, tok, m->pos_emb, pos, h);
    default:
        *h = tok;
        return RG_OK;
    }
}

/* The RoPE settings of a model config (rotary_dim 0 = head_dim, rope_orig_len 0 = max_len). */
static rg_rope_config rope_config_of(const rg_model_config *cfg)
{
    rg_rope_config r;
    r.rotary_dim = cfg->rotary_dim ? cfg->rotary_dim : cfg->d_model / cfg->n_heads;
    r.base = cfg->rope_base;
    r.ext = cfg->rope_ext;
    r.scale = cfg->rope_scale;
    r.orig_len = cfg->rope_orig_len ? cfg->rope_orig_len : cfg->max_len;
    r.low_freq_factor = cfg->llama3_low_freq_factor;
    r.high_freq_factor = cfg->llama3_high_freq_factor;
    r.beta_fast = cfg->yarn_beta_fast;
    r.beta_slow = cfg->yarn_beta_slow;
    return r;
}

void rg_pos_rotate_qk(rg_ctx *c, struct rg_model *m, rg_tensor **q, rg_tensor **k, const int32_t *pos, int B, int T)
{
    if (m->cfg.pos != RG_POS_ROPE && m->cfg.pos != RG_POS_ROPE_HALF) return;
    rg_rope_config rc = rope_config_of(&m->cfg);
    int max_abs = 0;
    for (int64_t i = 0; i < (int64_t)B * T; i++) {
        RG_ASSERT(pos[i] != INT32_MIN, "RoPE: position %d", pos[i]);
        int a = pos[i] < 0 ? -pos[i] : pos[i];
        if (a > max_abs) max_abs = a;
    }
    rg_status st = rg_rope_cache_ensure(&m->pos->rope, &rc, max_abs);
    RG_ASSERT(st == RG_OK, "RoPE tables: %s", rg_last_error());
    bool half = m->cfg.pos == RG_POS_ROPE_HALF;
    *q = rg_pos_rope(c, *q, m->cfg.n_heads, half, &m->pos->rope, pos);
    *k = rg_pos_rope(c, *k, m->cfg.n_heads, half, &m->pos->rope, pos);
}

rg_tensor *rg_pos_score_bias(rg_ctx *c, struct rg_model *m, int layer, rg_tensor *q, rg_tensor *k,
                             const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S)
{
    switch (m->cfg.pos) {
    case RG_POS_T5:
        return rg_pos_t5_bias(c, m->rel_bias, q_pos, k_pos, B, T, S, !m->cfg.causal, m->cfg.t5_max_distance);
    case RG_POS_ALIBI:
        if (m->pos->n_heads != m->cfg.n_heads || !m->pos->slopes) {
            double *sl = realloc(m->pos->slopes, (size_t)m->cfg.n_heads * sizeof *sl);
            RG_ASSERT(sl, "out of memory for %d ALiBi slopes", m->cfg.n_heads);
            m->pos->slopes = sl;
            m->pos->n_heads = m->cfg.n_heads;
            rg_alibi_slopes(m->cfg.n_heads, sl);
        }
        return rg_pos_alibi_bias(c, m->pos->slopes, m->cfg.n_heads, q_pos, k_pos, B, T, S);
    case RG_POS_XL: {
        rg_nn_attention *a = &m->blocks[layer].attn;
        return rg_pos_xl_bias(c, q, k, a->u, a->v, a->r_proj_weight, m->cfg.n_heads, q_pos, k_pos);
    }
    default:
        return NULL;
    }
}
