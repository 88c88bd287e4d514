/* pos.h: position encodings, chosen by name, plugged into the reference model through four hook points:
 *   1. input:  h = tok_emb[t] (+ a position embedding)           rg_pos_input
 *   2. q/k:    q, k rotated after their projections (RoPE)          rg_pos_rotate_qk
 *   3. scores: an additive bias on the scaled scores (T5, ALiBi, Transformer-XL's position terms)  rg_pos_score_bias
 * Layouts: hidden states and q/k/v are [B, T, d_model], heads are contiguous head_dim chunks of d_model.
 * Positions are int32 [B, T] (row b, token t); the default is 0..T-1 (cached decoding: offset by the cache length).
 * Each encoding's formula and source are documented with its implementation (src/nn/pos_*.c).
 */
#ifndef RG_NN_POS_H
#define RG_NN_POS_H

#include "../tensor/tensor.h"
#include "../tensor/rng.h"

typedef enum {
    RG_POS_NONE = 0,    /* NoPE: no position signal */
    RG_POS_SINUSOIDAL,  /* Vaswani et al. 2017, 3.5 */
    RG_POS_LEARNED,     /* learned absolute table pos_emb.weight [max_len, d_model] */
    RG_POS_T5,          /* Raffel et al. 2020 bucketed relative bias, rel_bias.weight [num_buckets, n_heads] */
    RG_POS_XL,          /* Dai et al. 2019 relative attention with u, v, r_proj per layer */
    RG_POS_ALIBI,       /* Press et al. 2022 linear biases */
    RG_POS_ROPE,        /* Su et al. 2021, interleaved pairs (2i, 2i+1) */
    RG_POS_ROPE_HALF,   /* Su et al. 2021, half-split pairs (i, i + d/2) (GPT-NeoX, HF rotate_half) */
    RG_POS_COUNT
} rg_pos_kind;

/* Evaluation-time RoPE extensions (no retraining). */
typedef enum {
    RG_ROPE_EXT_NONE = 0,
    RG_ROPE_EXT_PI,     /* Position Interpolation (Chen et al. 2023): p -> p / s */
    RG_ROPE_EXT_NTK,    /* NTK-aware: base -> base * s^(d / (d - 2)) */
    RG_ROPE_EXT_YARN,   /* YaRN (Peng et al. 2023) */
    RG_ROPE_EXT_LLAMA3, /* Llama 3 frequency smoothing */
    RG_ROPE_EXT_COUNT
} rg_rope_ext;

/* Names as used on the command line and in checkpoints: "none", "sinusoidal", "learned", "t5", "xl", "alibi",
 * "rope", "rope-half"; and "none", "pi", "ntk", "yarn", "llama3". */
const char *rg_pos_name(rg_pos_kind k);
/* Parses a name; RG_ERR_ARG (with the allowed names in the message) if unknown. */
rg_status rg_pos_parse(const char *name, rg_pos_kind *out);
const char *rg_rope_ext_name(rg_rope_ext e);
rg_status rg_rope_ext_parse(const char *name, rg_rope_ext *out);

/* ------------------------------------------------------------------ hooks used by the model (src/nn/model.c)
 * The model creates and owns the parameters (pos_emb.weight, rel_bias.weight, blocks.{i}.attn.r_proj.weight, .u,
 * .v: see nn.h); the hooks read m->cfg at every call, so changing the RoPE extension settings of a trained model
 * before evaluation takes effect at the next forward (caches rebuild or extend on demand). */
struct rg_model;
typedef struct rg_pos_state rg_pos_state; /* encoding-private caches (RoPE tables, ALiBi slopes) */

/* Creates the caches for model m. RG_ERR_NOMEM. */
rg_status rg_pos_state_new(const struct rg_model *m, rg_pos_state **out);
void rg_pos_state_free(rg_pos_state *s);

/* Hook 1. tok: token embeddings [B, T, d_model]; pos [B, T]. *h = tok (none, relative encodings), tok*sqrt(d) +
 * PE(pos) (sinusoidal), tok + pos_emb[pos] (learned). RG_ERR_ARG if a learned position is outside [0, max_len). */
rg_status rg_pos_input(rg_ctx *c, struct rg_model *m, rg_tensor *tok, const int32_t *pos, int B, int T,
                       rg_tensor **h);
/* Hook 2. q and k [B, T, d_model] with pos [B, T]: replaced by their rotated versions (RoPE kinds); untouched
 * otherwise. Values are never rotated. */
void rg_pos_rotate_qk(rg_ctx *c, struct rg_model *m, rg_tensor **q, rg_tensor **k, const int32_t *pos, int B, int T);
/* Hook 3. The additive bias on the scaled scores of `layer` for queries q [B, T, d] at q_pos [B, T] against keys
 * k [B, S, d] at k_pos [B, S]: [H, T, S] or [B, H, T, S], or NULL for encodings without one. Transformer-XL returns
 * (u . k_j + (q_i + v) . r_{i-j}) / sqrt(head_dim), which depends on q and k. */
rg_tensor *rg_pos_score_bias(rg_ctx *c, struct rg_model *m, int layer, rg_tensor *q, rg_tensor *k,
                             const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S);

#endif
