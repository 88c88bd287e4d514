/* pos.c: position-encoding names and the dispatch of the model's hooks to each encoding (src/nn/pos_*.c).
 * Until the encodings land, only NoPE is implemented. */
#include "pos.h"
#include "nn.h"

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

struct rg_pos_state { int unused; };

rg_status rg_pos_state_new(const struct rg_model *m, rg_pos_state **out)
{
    if (m->cfg.pos != RG_POS_NONE)
        return rg_error(RG_ERR_ARG, "position encoding '%s' is not implemented yet", rg_pos_name(m->cfg.pos));
    *out = calloc(1, sizeof **out);
    return *out ? RG_OK : rg_error(RG_ERR_NOMEM, "out of memory");
}

void rg_pos_state_free(rg_pos_state *s) { free(s); }

rg_status rg_pos_input(rg_ctx *c, struct rg_model *m, rg_tensor *tok, const int32_t *pos, int B, int T,
                       rg_tensor **h)
{
    *h = tok;
    return RG_OK;
}

void rg_pos_rotate_qk(rg_ctx *c, struct rg_model *m, rg_tensor **q, rg_tensor **k, const int32_t *pos, int B, int T)
{
}

rg_tensor *rg_pos_score_bias(rg_ctx *c, struct rg_model *m, int layer, rg_tensor *q, rg_tensor *k,
                             const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S)
{
    return NULL;
}
