/* pos_learned.c: learned absolute position embeddings (Gehring et al. 2017, "Convolutional Sequence to Sequence
 * Learning", sec. 3.1; the GPT/BERT `wpe` table): h = tok + pos_emb[p], added once at the input; matches
 * tools/ref_model.py (`h + self.pos_emb(positions)`).
 * Shapes: tok [B, T, d], table pos_emb.weight [max_len, d], positions [B*T] -> h [B, T, d]. A position outside
 * [0, max_len) is an error returned before anything is recorded (never a read past the table).
 * Backward: dtok += g; dtable[p] += g, scatter-add so repeated positions add up (docs/derivatives.md row
 * "pos_learned"). */
#include "pos.h"

#include <string.h>

static void learned_backward(rg_tensor *node);
static const rg_op OP_LEARNED = {"pos_learned", learned_backward};

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
    rg_tensor *srcs[2] = {tok, table};
    rg_tensor *out = rg_node_new(c, &OP_LEARNED, tok->ndim, tok->shape, 2, srcs);
    for (int64_t i = 0; i < n; i++) {
        const rg_real *x = tok->data + i * d, *t = table->data + (int64_t)pos[i] * d;
        rg_real *o = out->data + i * d;
        for (int j = 0; j < d; j++) o[j] = x[j] + t[j];
    }
    if (out->op) {
        int32_t *saved = rg_arena_alloc(&c->arena, (size_t)n * sizeof(int32_t));
        memcpy(saved, pos, (size_t)n * sizeof(int32_t));
        out->saved = saved;
    }
    *h = out;
    return RG_OK;
}

/* h = tok + table[p]: dtok += g; dtable[p] += g. */
static void learned_backward(rg_tensor *node)
{
    rg_tensor *tok = node->src[0], *table = node->src[1];
    const rg_real *g = node->grad;
    if (tok->requires_grad) {
        rg_real *dx = rg_grad_of(tok);
        for (int64_t i = 0; i < tok->numel; i++) dx[i] += g[i];
    }
    if (table->requires_grad) {
        int d = table->shape[1];
        int64_t n = tok->numel / d;
        const int32_t *p = node->saved;
        rg_real *dt = rg_grad_of(table);
        for (int64_t i = 0; i < n; i++) {
            rg_real *row = dt + (int64_t)p[i] * d;
            for (int j = 0; j < d; j++) row[j] += g[i * d + j];
        }
    }
}
