/* model.c: the reference decoder-only pre-LayerNorm transformer (tools/ref_model.py, class Model) and its KV cache.
 *
 * Shapes: tokens int32 [B, T] -> h [B, T, d] = tok_emb[tokens] (+ the encoding's input hook); per block:
 *   a = LN1(h); q, k, v = Linear(a) [B, T, d] (heads = contiguous head_dim chunks); q, k rotated (rotate_qk hook);
 *   with a cache, k and v are appended and the whole cached [B, S = len + T, d] is used; score bias (score_bias
 *   hook); h += o_proj(attention(q, k, v, causal, scale 1/sqrt(head_dim)));  h += fc2(gelu(fc1(LN2(h))));
 * logits = lm_head(LN_f(h)) [B, T, vocab] (no bias, not tied). The position encoding is reached only through its
 * descriptor (pos.h): this file has no branch on the encoding. One position summary (ranges, rows shared) is
 * computed per forward and handed to every hook.
 *
 * Parameters are registered in the exact order of the PyTorch model's state_dict (checked with torch 1.13 on
 * tools/ref_model.py): tok_emb.weight, [encoding site INPUT: pos_emb.weight (learned)], per block ln1.*,
 * [site ATTN_BEGIN: attn.u, attn.v (xl: a module's own parameters come before its submodules' in state_dict)],
 * attn.{q,k,v,o}_proj.*, [site ATTN_END: attn.r_proj.weight (xl); attn.fire.c, attn.fire.L_multiplier,
 * attn.fire.mlp.{0,2}.{weight,bias} (fire); attn.kerple.r1, attn.kerple.r2 (kerple-*)], ln2.*, mlp.fc1.*,
 * mlp.fc2.*; then [site
 * OUTPUT: rel_bias.weight (t5)], ln_f.*, lm_head.weight. Initialization draws from one rg_rng seeded (seed,
 * stream 0) in that order: Linear / Embedding / r_proj / rel_bias / pos_emb N(0, 0.02) (sinusoidal: tok_emb
 * N(0, d^-1/2)), biases 0, LayerNorm weight 1, xl u and v 0; fire: its MLP as torch.nn.Linear's default
 * U(+-1/sqrt(fan_in)), c = init_c, L_multiplier = 1 (rg_pos_fire_init); kerple: r1, r2 scaled U(0, 1)
 * (pos_kerple.c).
 * The encoding is the registered descriptor of cfg.pos (pos.h), called through its hooks only.
 */
#include "nn.h"
#include "pos.h"
#include "pos_ext.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


rg_model_config rg_model_config_default(void)
{
    rg_model_config c;
    memset(&c, 0, sizeof c);
    c.vocab_size = 30;
    c.d_model = 64;
    c.n_heads = 4;
    c.n_layers = 2;
    c.d_ff = 256;
    c.max_len = 160;
    c.causal = true;
    c.pos = RG_POS_NONE;
    c.rope_base = 10000;
    c.rotary_dim = 0;
    c.rope_ext = RG_ROPE_EXT_NONE;
    c.rope_scale = 1;
    c.rope_orig_len = 0;
    c.rope_attention_factor = 0;
    c.partial_rotary_factor = 0;
    c.llama3_low_freq_factor = 1;
    c.llama3_high_freq_factor = 4;
    c.yarn_beta_fast = 32;
    c.yarn_beta_slow = 1;
    c.n_pos_values = 0; /* every encoding setting at its declared default */
    return c;
}

rg_status rg_model_config_validate(const rg_model_config *c)
{
    if (c->vocab_size < 1) return rg_error(RG_ERR_ARG, "config: vocab_size %d must be >= 1", c->vocab_size);
    if (c->d_model < 1) return rg_error(RG_ERR_ARG, "config: d_model %d must be >= 1", c->d_model);
    if (c->n_heads < 1 || c->d_model % c->n_heads)
        return rg_error(RG_ERR_ARG, "config: n_heads %d must be >= 1 and divide d_model %d", c->n_heads, c->d_model);
    if (c->n_layers < 1) return rg_error(RG_ERR_ARG, "config: n_layers %d must be >= 1", c->n_layers);
    if (c->d_ff < 1) return rg_error(RG_ERR_ARG, "config: d_ff %d must be >= 1", c->d_ff);
    if (c->max_len < 1) return rg_error(RG_ERR_ARG, "config: max_len %d must be >= 1", c->max_len);
    /* upper limits keep every size product inside int64 and a corrupt config from building a huge model */
    if (c->vocab_size > (1 << 24) || c->d_model > (1 << 16) || c->n_layers > 4096 || c->d_ff > (1 << 20) ||
        c->max_len > (1 << 24) || c->n_heads > c->d_model)
        return rg_error(RG_ERR_ARG, "config: a size is past its limit (vocab_size %d <= 2^24, d_model %d <= 65536, "
                        "n_layers %d <= 4096, d_ff %d <= 2^20, max_len %d <= 2^24)", c->vocab_size, c->d_model,
                        c->n_layers, c->d_ff, c->max_len);
    rg_status st = rg_rope_validate(c);
    if (st) return st;
    return rg_pos_config_check(c);
}

rg_status rg_params_register_normal(rg_params *ps, const char *name, int ndim, const int *shape, rg_rng *rng,
                                    double std, rg_tensor **out)
{
    rg_status st = rg_params_register(ps, name, ndim, shape, out);
    if (!st && std > 0)
        for (int64_t i = 0; i < (*out)->numel; i++) (*out)->data[i] = (rg_real)(std * rg_rng_normal(rng));
    return st;
}

/* The encoding's parameters of one site (none if it has no add_params hook). */
static rg_status pos_params(rg_model *m, rg_pos_site site, int layer, rg_rng *rng)
{
    return m->pos->add_params ? m->pos->add_params(m->pos_state, &m->cfg, site, layer, &m->params, rng) : RG_OK;
}

static rg_status build(rg_model *m, rg_rng *rng)
{
    const rg_model_config *c = &m->cfg;
    const int d = c->d_model;
    char pre[RG_NAME_LEN];
    rg_status st;
    if (m->pos->state_new && (st = m->pos->state_new(c, &m->pos_state))) return st;
    double tok_std = m->pos->scaled_embedding ? 1 / sqrt((double)d) : RG_INIT_STD;
    if ((st = rg_params_register_normal(&m->params, "tok_emb.weight", 2, (int[]){c->vocab_size, d}, rng, tok_std,
                                        &m->tok_emb)))
        return st;
    if ((st = pos_params(m, RG_POS_SITE_INPUT, -1, rng))) return st;
    m->blocks = calloc((size_t)c->n_layers, sizeof *m->blocks);
    if (!m->blocks) return rg_error(RG_ERR_NOMEM, "model: out of memory");
    for (int i = 0; i < c->n_layers; i++) {
        rg_nn_block *b = &m->blocks[i];
        snprintf(pre, sizeof pre, "blocks.%d.ln1", i);
        if ((st = rg_nn_layernorm_init(&b->ln1, &m->params, pre, d))) return st;
        if ((st = pos_params(m, RG_POS_SITE_ATTN_BEGIN, i, rng))) return st;
        rg_nn_linear *proj[4] = {&b->attn.q_proj, &b->attn.k_proj, &b->attn.v_proj, &b->attn.o_proj};
        const char *pname[4] = {"q_proj", "k_proj", "v_proj", "o_proj"};
        for (int j = 0; j < 4; j++) {
            snprintf(pre, sizeof pre, "blocks.%d.attn.%s", i, pname[j]);
            if ((st = rg_nn_linear_init(proj[j], &m->params, pre, d, d, true, rng))) return st;
        }
        if ((st = pos_params(m, RG_POS_SITE_ATTN_END, i, rng))) return st;
        snprintf(pre, sizeof pre, "blocks.%d.ln2", i);
        if ((st = rg_nn_layernorm_init(&b->ln2, &m->params, pre, d))) return st;
        snprintf(pre, sizeof pre, "blocks.%d.mlp", i);
        if ((st = rg_nn_mlp_init(&b->mlp, &m->params, pre, d, c->d_ff, rng))) return st;
    }
    if ((st = pos_params(m, RG_POS_SITE_OUTPUT, -1, rng))) return st;
    if ((st = rg_nn_layernorm_init(&m->ln_f, &m->params, "ln_f", d))) return st;
    if ((st = rg_params_register_normal(&m->params, "lm_head.weight", 2, (int[]){c->vocab_size, d}, rng,
                                        RG_INIT_STD, &m->lm_head)))
        return st;
    return rg_params_pack(&m->params); /* one data block, one gradient block (nn.h) */
}

rg_status rg_model_new(const rg_model_config *cfg, uint64_t seed, rg_model **out)
{
    return rg_model_new_within(cfg, seed, 0, out);
}

rg_status rg_model_new_within(const rg_model_config *cfg, uint64_t seed, int64_t max_params, rg_model **out)
{
    *out = NULL;
    rg_status st = rg_model_config_validate(cfg);
    if (st) return st;
    rg_model *m = calloc(1, sizeof *m);
    if (!m) return rg_error(RG_ERR_NOMEM, "model: out of memory");
    m->cfg = *cfg;
    m->params.max_numel = max_params > 0 ? max_params : 0;
    m->pos = rg_pos_encoding_of(cfg->pos);
    rg_rng rng;
    rg_rng_seed(&rng, seed, 0);
    if ((st = build(m, &rng))) {
        rg_model_free(m);
        return st;
    }
    *out = m;
    return RG_OK;
}

rg_rope_scaling rg_model_rope_scaling(const rg_model *m)
{
    const rg_model_config *c = &m->cfg;
    return (rg_rope_scaling){c->rope_ext, c->rope_scale, c->rope_orig_len, c->rope_attention_factor,
                             c->yarn_beta_fast, c->yarn_beta_slow, c->llama3_low_freq_factor,
                             c->llama3_high_freq_factor};
}

rg_status rg_model_set_rope_scaling(rg_model *m, const rg_rope_scaling *s)
{
    rg_model_config c = m->cfg;
    c.rope_ext = s->rope_type;
    c.rope_scale = s->factor;
    c.rope_orig_len = s->original_max_position_embeddings;
    c.rope_attention_factor = s->attention_factor;
    c.yarn_beta_fast = s->beta_fast;
    c.yarn_beta_slow = s->beta_slow;
    c.llama3_low_freq_factor = s->low_freq_factor;
    c.llama3_high_freq_factor = s->high_freq_factor;
    rg_status st = rg_rope_validate(&c);
    if (!st) m->cfg = c;
    return st;
}

void rg_model_free(rg_model *m)
{
    if (!m) return;
    if (m->pos_state && m->pos->state_free) m->pos->state_free(m->pos_state);
    rg_params_free(&m->params);
    free(m->blocks);
    free(m);
}

/* ------------------------------------------------------------------ KV cache */

rg_status rg_kv_cache_init(rg_kv_cache *kv, const rg_model *m, int batch, int capacity)
{
    memset(kv, 0, sizeof *kv);
    if (batch < 1 || capacity < 1)
        return rg_error(RG_ERR_ARG, "kv cache: batch %d and capacity %d must be >= 1", batch, capacity);
    kv->batch = batch;
    kv->capacity = capacity;
    kv->n_layers = m->cfg.n_layers;
    kv->d_model = m->cfg.d_model;
    size_t per = (size_t)batch * capacity * kv->d_model;
    kv->k = calloc((size_t)kv->n_layers, sizeof *kv->k);
    kv->v = calloc((size_t)kv->n_layers, sizeof *kv->v);
    kv->positions = calloc((size_t)batch * capacity, sizeof *kv->positions);
    kv->axes = calloc((size_t)RG_POS_AXES * batch * capacity, sizeof *kv->axes);
    bool ok = kv->k && kv->v && kv->positions && kv->axes;
    for (int l = 0; ok && l < kv->n_layers; l++) {
        kv->k[l] = calloc(per, sizeof(rg_real));
        kv->v[l] = calloc(per, sizeof(rg_real));
        ok = kv->k[l] && kv->v[l];
    }
    if (!ok) {
        rg_kv_cache_free(kv);
        return rg_error(RG_ERR_NOMEM, "kv cache: out of memory (%d x %d tokens)", batch, capacity);
    }
    return RG_OK;
}

void rg_kv_cache_reset(rg_kv_cache *kv) { kv->len = 0, kv->has_axes = false; }

void rg_kv_cache_free(rg_kv_cache *kv)
{
    for (int l = 0; l < kv->n_layers; l++) {
        if (kv->k) free(kv->k[l]);
        if (kv->v) free(kv->v[l]);
    }
    free(kv->k);
    free(kv->v);
    free(kv->positions);
    free(kv->axes);
    memset(kv, 0, sizeof *kv);
}

/* Appends x [B, T, d] at row offset len of the cache buffer [B, cap, d] and returns an arena tensor [B, len + T, d]
 * holding the whole cached prefix (a leaf: decoding runs without gradients). */
static rg_tensor *cache_append(rg_ctx *c, rg_real *buf, const rg_tensor *x, int B, int T, int len, int cap, int d)
{
    int S = len + T;
    rg_tensor *all = rg_tensor_3d(c, B, S, d);
    for (int b = 0; b < B; b++) {
        rg_real *row = buf + (size_t)b * cap * d;
        memcpy(row + (size_t)len * d, x->data + (size_t)b * T * d, (size_t)T * d * sizeof(rg_real));
        memcpy(all->data + (size_t)b * S * d, row, (size_t)S * d * sizeof(rg_real));
    }
    return all;
}

/* ------------------------------------------------------------------ forward */

/* The user input of a forward (tokens, positions, the cache): RG_ERR_ARG with a message, before anything is
 * recorded. */
static rg_status check_forward_args(const rg_ctx *c, const rg_model_config *cfg, const int32_t *tokens,
                                    const int32_t *positions, const int32_t *axes, int B, int T,
                                    const rg_kv_cache *kv)
{
    if (B < 1 || T < 1) return rg_error(RG_ERR_ARG, "forward: batch %d and length %d must be >= 1", B, T);
    for (int64_t i = 0; i < (int64_t)B * T; i++)
        if (tokens[i] < 0 || tokens[i] >= cfg->vocab_size)
            return rg_error(RG_ERR_ARG, "forward: token id %d at row %lld, position %lld is outside [0, %d)",
                            tokens[i], (long long)(i / T), (long long)(i % T), cfg->vocab_size);
    if (positions)
        for (int64_t i = 0; i < (int64_t)B * T; i++)
            if (positions[i] < 0 || positions[i] >= RG_MAX_POSITION)
                return rg_error(RG_ERR_ARG, "forward: position %d at row %lld, token %lld is outside [0, %d)",
                                positions[i], (long long)(i / T), (long long)(i % T), RG_MAX_POSITION);
    for (int64_t i = 0; axes && i < (int64_t)RG_POS_AXES * B * T; i++)
        if (axes[i] < 0 || axes[i] >= RG_MAX_POSITION)
            return rg_error(RG_ERR_ARG, "forward: axis %lld id %d at row %lld, token %lld is outside [0, %d)",
                            (long long)(i / ((int64_t)B * T)), axes[i], (long long)(i % ((int64_t)B * T) / T),
                            (long long)(i % T), RG_MAX_POSITION);
    if (!kv) return RG_OK;
    if (c->grad_enabled)
        return rg_error(RG_ERR_ARG, "forward: decoding with a KV cache needs no-grad mode (rg_set_grad_enabled)");
    if (kv->batch != B || kv->n_layers != cfg->n_layers || kv->d_model != cfg->d_model)
        return rg_error(RG_ERR_ARG, "forward: KV cache made for batch %d, %d layers, d_model %d (got batch %d, "
                        "model %d layers, d_model %d)", kv->batch, kv->n_layers, kv->d_model, B, cfg->n_layers,
                        cfg->d_model);
    if (kv->len + T > kv->capacity)
        return rg_error(RG_ERR_ARG, "forward: KV cache overflow: %d cached + %d new tokens > capacity %d", kv->len, T,
                        kv->capacity);
    return RG_OK;
}

rg_status rg_model_forward(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *positions, int B, int T,
                           rg_kv_cache *kv, rg_tensor **logits)
{
    return rg_model_forward_axes(c, m, tokens, positions, NULL, B, T, kv, logits);
}

/* The key ids of one forward with a cache: the T new ids of each row [B, T] appended at len to the cache's rows
 * [B, cap], then the rows' S = len + T ids gathered into an arena array [B, S]. */
static const int32_t *cache_ids(rg_ctx *c, int32_t *cache, const int32_t *ids, int B, int T, int len, int cap)
{
    const int S = len + T;
    int32_t *out = rg_arena_alloc(&c->arena, (size_t)B * S * sizeof(int32_t));
    for (int b = 0; b < B; b++) {
        memcpy(cache + (size_t)b * cap + len, ids + (size_t)b * T, (size_t)T * sizeof(int32_t));
        memcpy(out + (size_t)b * S, cache + (size_t)b * cap, (size_t)S * sizeof(int32_t));
    }
    return out;
}

rg_status rg_model_forward_axes(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *positions,
                                const int32_t *axes, int B, int T, rg_kv_cache *kv, rg_tensor **logits)
{
    const rg_model_config *cfg = &m->cfg;
    const int d = cfg->d_model, H = cfg->n_heads, hd = d / H;
    *logits = NULL;
    rg_status st = check_forward_args(c, cfg, tokens, positions, axes, B, T, kv);
    if (st) return st;
    rg_derivation_begin(); /* the parameters as they are now, whatever was written into them since (tensor.h) */
    const int len = kv ? kv->len : 0;
    const int S = len + T;
    int32_t *pos = rg_arena_alloc(&c->arena, (size_t)B * T * sizeof(int32_t));
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            pos[b * T + t] = positions ? positions[b * T + t] : len + t;
    /* key ids: the cached ones followed by the new ones. A forward without axes caches its 1-D positions as every
     * axis (what its encoding read), so that a later forward with axes sees consistent keys; the axis ids are
     * gathered only once a forward of this cache gave axes (1-D decoding pays T ids per row and axis) */
    const int32_t *kpos = pos, *qax = axes, *kax = axes;
    if (kv) {
        kpos = cache_ids(c, kv->positions, pos, B, T, len, kv->capacity);
        kv->has_axes = kv->has_axes || axes;
        const size_t plane = (size_t)B * kv->capacity;
        for (int a = 0; a < RG_POS_AXES; a++)
            for (int b = 0; b < B; b++)
                memcpy(kv->axes + a * plane + (size_t)b * kv->capacity + len,
                       (axes ? axes + (size_t)a * B * T : pos) + (size_t)b * T, (size_t)T * sizeof(int32_t));
        if (kv->has_axes) {
            int32_t *kk = rg_arena_alloc(&c->arena, (size_t)RG_POS_AXES * B * S * sizeof(int32_t));
            for (int a = 0; a < RG_POS_AXES; a++)
                for (int b = 0; b < B; b++)
                    memcpy(kk + ((size_t)a * B + b) * S, kv->axes + a * plane + (size_t)b * kv->capacity,
                           (size_t)S * sizeof(int32_t));
            kax = kk;
            if (!axes) { /* cached keys carry axes of an earlier forward: the new queries' axes are their positions */
                int32_t *qq = rg_arena_alloc(&c->arena, (size_t)RG_POS_AXES * B * T * sizeof(int32_t));
                for (int a = 0; a < RG_POS_AXES; a++)
                    memcpy(qq + (size_t)a * B * T, pos, (size_t)B * T * sizeof(int32_t));
                qax = qq;
            }
        }
    }
    rg_pos_summary ps;
    rg_pos_summarize_axes(&ps, pos, kpos, qax, kax, B, T, S);
    const rg_pos_encoding *enc = m->pos;
    rg_tensor *h = rg_embedding(c, m->tok_emb, tokens, 2, (int[]){B, T});
    if (enc->input && (st = enc->input(c, m->pos_state, &ps, h, &h)))
        return st; /* kv->positions past kv->len are not part of the cache */
    void *prep = enc->prepare ? enc->prepare(c, m->pos_state, cfg, &ps) : NULL;
    const double scale = 1 / sqrt((double)hd);
    for (int l = 0; l < cfg->n_layers; l++) {
        rg_nn_block *blk = &m->blocks[l];
        rg_tensor *a = rg_nn_layernorm_forward(c, &blk->ln1, h);
        rg_tensor *q = rg_nn_linear_forward(c, &blk->attn.q_proj, a);
        rg_tensor *k = rg_nn_linear_forward(c, &blk->attn.k_proj, a);
        rg_tensor *v = rg_nn_linear_forward(c, &blk->attn.v_proj, a);
        if (enc->rotate_qk) enc->rotate_qk(c, prep, &q, &k);
        if (kv) {
            k = cache_append(c, kv->k[l], k, B, T, len, kv->capacity, d);
            v = cache_append(c, kv->v[l], v, B, T, len, kv->capacity, d);
        }
        rg_tensor *bias = enc->score_bias ? enc->score_bias(c, m->pos_state, prep, l, &ps, q, k) : NULL;
        rg_tensor *att = rg_attention(c, q, k, v, H, bias, cfg->causal, scale);
        h = rg_nn_linear_forward_residual(c, &blk->attn.o_proj, att, h); /* h + o_proj(att), one GEMM */
        h = rg_nn_mlp_forward_residual(c, &blk->mlp, rg_nn_layernorm_forward(c, &blk->ln2, h), h);
    }
    if (kv) kv->len += T;
    *logits = rg_linear(c, rg_nn_layernorm_forward(c, &m->ln_f, h), m->lm_head, NULL);
    return RG_OK;
}
