/* pos_learned.c: learned absolute position embeddings (Gehring et al. 2017, "Convolutional Sequence to Sequence
 * Learning", sec. 3.1; the GPT/BERT `wpe` table): h = tok + pos_emb[p], added once at the input; matches
 * tools/ref_model.py (`h + self.pos_emb(positions)`).
 * Shapes: tok [B, T, d], table pos_emb.weight [max_len, d], positions [B*T] -> h [B, T, d]. A position outside
 * [0, max_len) is an error returned before anything is recorded (never a read past the table).
 * Composed of existing ops: rg_embedding (its backward scatter-adds into the table, so repeated positions add up)
 * and rg_add. No backward of its own (docs/derivatives.md rows "embedding" and "add"). */
#include "nn.h"

#include <stdio.h>
#include <stdlib.h>

rg_status rg_pos_learned(rg_ctx *c, rg_tensor *tok, rg_tensor *table, const int32_t *pos, rg_tensor **h)
{
    char s1[64], s2[64];
    *h = NULL;
    if (!table) return rg_error(RG_ERR_ARG, "learned positions: the model has no pos_emb table");
    RG_ASSERT(table->ndim == 2 && tok->ndim >= 1 && tok->shape[tok->ndim - 1] == table->shape[1],
              "pos_learned: tok %s and table %s do not fit", rg_shape_str(tok, s1, 64), rg_shape_str(table, s2, 64));
    int d = table->shape[1], L = table->shape[0];
    int64_t n = tok->numel / d;
    for (int64_t i = 0; i < n; i++)
        if (pos[i] < 0 || pos[i] >= L)
            return rg_error(RG_ERR_ARG, "learned position %d (token %lld) is outside the table [0, %d): the learned "
                            "encoding cannot represent positions past max_len", pos[i], (long long)i, L);
    *h = rg_add(c, tok, rg_embedding(c, table, pos, tok->ndim - 1, tok->shape));
    return RG_OK;
}

/* ------------------------------------------------------------------ the descriptor */

static rg_status learned_new(const rg_model_config *cfg, void **state)
{
    (void)cfg;
    *state = calloc(1, sizeof(rg_tensor *));
    return *state ? RG_OK : rg_error(RG_ERR_NOMEM, "learned positions: out of memory");
}

/* pos_emb.weight [max_len, d_model] N(0, 0.02), right after tok_emb.weight */
static rg_status learned_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                                rg_rng *rng)
{
    (void)layer;
    if (site != RG_POS_SITE_INPUT) return RG_OK;
    return rg_params_register_normal(ps, "pos_emb.weight", 2, (int[]){cfg->max_len, cfg->d_model}, rng, RG_INIT_STD,
                                     (rg_tensor **)state);
}

static rg_status learned_input(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h)
{
    return rg_pos_learned(c, tok, *(rg_tensor **)state, s->q_pos, h);
}

/* The table holds positions 0 .. max_len - 1. */
static int learned_max_position(const rg_model_config *c) { return c->max_len - 1; }

/* The report's note: the table's size, and the rows training never reaches. */
static void learned_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    snprintf(buf, cap, "learned: a table of %d positions (rows past position %d are never trained; n/a past the "
             "table)", c->max_len, in->longest_distance);
}

const rg_pos_encoding rg_pos_enc_learned = {
    .name = "learned", .doc = "h = tok + pos_emb.weight[p], a learned absolute table (Gehring et al. 2017)",
    .state_new = learned_new, .add_params = learned_params, .input = learned_input, .state_free = free,
    .max_position = learned_max_position, .report_note = learned_note, .note_order = 5, .plot_colour = "#56B4E9",
    .plot_marker = 9};
