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
 * otherwise. Values are never rotated. The RoPE tables grow to the largest |position| seen (aborts with a message
 * if that allocation fails). */
void rg_pos_rotate_qk(rg_ctx *c, struct rg_model *m, rg_tensor **q, rg_tensor **k, const int32_t *pos, int B, int T);
/* Hook 3. The additive bias on the scaled scores of `layer` for queries q [B, T, d] at q_pos [B, T] against keys
 * k [B, S, d] at k_pos [B, S]: [H, T, S] or [B, H, T, S], or NULL for encodings without one. Transformer-XL returns
 * (u . k_j + (q_i + v) . r_{i-j}) / sqrt(head_dim), which depends on q and k. */
rg_tensor *rg_pos_score_bias(rg_ctx *c, struct rg_model *m, int layer, rg_tensor *q, rg_tensor *k,
                             const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S);

/* ------------------------------------------------------------------ encodings at the op level
 * The hooks above dispatch to these (one file per family: src/nn/pos_*.c). They are public so that tests and
 * other models can use the encodings without the reference model. Positions are int32, row-major [B, T]. */

/* Randomized positions (Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of
 * Transformers", sec. 3): writes to out[b*T + t] a sorted uniformly random subset of size T of [0, max_position)
 * for each of the B rows (selection sampling, Knuth TAOCP vol. 2, 3.4.2 Algorithm S). Needs T <= max_position
 * (aborts otherwise). Training only; evaluation uses 0..T-1. */
void rg_random_positions(rg_rng *rng, int B, int T, int max_position, int32_t *out);

/* ---- sinusoidal (pos_sinusoidal.c) */
/* PE(p) [d_model] in double: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same) (d_model even). */
void rg_sinusoidal_pe(int d_model, int32_t p, double *out);
/* h = tok * sqrt(d_model) + PE(pos): tok [B, T, d_model], pos [B*T] (any sign). Gradient: dtok += sqrt(d) g. */
rg_tensor *rg_pos_sinusoidal(rg_ctx *c, rg_tensor *tok, const int32_t *pos);

/* ---- learned absolute (pos_learned.c) */
/* *h = tok + table[pos]: tok [B, T, d], table [max_len, d], pos [B*T]. RG_ERR_ARG (nothing recorded) if a position
 * is outside [0, max_len). Gradients: dtok += g, dtable[pos] += g (scatter-add). */
rg_status rg_pos_learned(rg_ctx *c, rg_tensor *tok, rg_tensor *table, const int32_t *pos, rg_tensor **h);

/* ---- T5 relative bias (pos_t5.c) */
/* The Hugging Face T5 bucket (T5Attention._relative_position_bucket) of relative_position = p_key - p_query:
 * bidirectional: half the buckets per direction (keys after the query in the upper half); causal: distance
 * n = max(-relative_position, 0). Of each half, the first half are exact distances, the rest logarithmic up to
 * max_distance (float32 log arithmetic as HF), clamped to the last bucket. */
int rg_t5_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance);
/* bias[b, h, i, j] = table[bucket(k_pos[b, j] - q_pos[b, i]), h]: table [num_buckets, H]; q_pos [B*T], k_pos
 * [B*S]. The result is [H, T, S] when every row has the same positions, else [B, H, T, S]. The gradient
 * scatter-adds into the table. */
rg_tensor *rg_pos_t5_bias(rg_ctx *c, rg_tensor *table, const int32_t *q_pos, const int32_t *k_pos, int B, int T,
                          int S, bool bidirectional, int max_distance);

/* ---- ALiBi (pos_alibi.c) */
/* The head slopes of Press et al. 2022 (reference get_slopes): 2^(-8h/n) for h = 1..n when n is a power of two;
 * else the slopes of the nearest lower power of two followed by every other slope of twice that. out [n_heads]. */
void rg_alibi_slopes(int n_heads, double *out);
/* bias[b, h, i, j] = -slopes[h] * (q_pos[b, i] - k_pos[b, j]) (computed in double). [H, T, S] when all rows share
 * positions, else [B, H, T, S]. A constant (records nothing). */
rg_tensor *rg_pos_alibi_bias(rg_ctx *c, const double *slopes, int n_heads, const int32_t *q_pos,
                             const int32_t *k_pos, int B, int T, int S);

/* ---- Transformer-XL (pos_xl.c) */
/* bias[b, h, i, j] = (u_h . k_{b,j,h} + (q_{b,i,h} + v_h) . r_{h}(p_i - p_j)) / sqrt(hd), r(k) = W_r R_k split into
 * heads, R_k = concat(sin(k w), cos(k w)), w_i = 10000^(-2i/d). q [B, T, d], k [B, S, d], u and v [H, hd], W_r
 * [d, d]; -> [B, H, T, S]. Gradients for q, k, u, v and W_r. */
rg_tensor *rg_pos_xl_bias(rg_ctx *c, rg_tensor *q, rg_tensor *k, rg_tensor *u, rg_tensor *v, rg_tensor *w_r,
                          int n_heads, const int32_t *q_pos, const int32_t *k_pos);

/* ---- RoPE (pos_rope.c) */
/* Everything that determines the RoPE angles. d = rotary_dim (even). */
typedef struct {
    int rotary_dim;
    double base;             /* 10000 */
    rg_rope_ext ext;
    double scale;            /* s */
    int orig_len;            /* original training length (YaRN, Llama 3) */
    double low_freq_factor, high_freq_factor;   /* Llama 3: 1, 4 */
    double beta_fast, beta_slow;                /* YaRN: 32, 1 */
} rg_rope_config;

/* Defaults: base 10000, no extension, s 1, Llama 3 factors 1 and 4, YaRN betas 32 and 1. */
rg_rope_config rg_rope_config_default(int rotary_dim, int orig_len);
/* The angle of pair i at position p is (p * pos_mult) * inv_freq[i] (double); cos and sin are multiplied by
 * attn_factor. Writes inv_freq [rotary_dim/2]:
 *   none: base^(-2i/d); pi: same, pos_mult 1/s; ntk: base' = base s^(d/(d-2)); yarn: HF _compute_yarn_parameters
 *   (ramp between floor/ceil of the correction dims of beta_fast/beta_slow, attn_factor 0.1 ln s + 1 for s > 1);
 *   llama3: HF _compute_llama3_parameters (wavelengths above orig_len/low_freq_factor divided by s, below
 *   orig_len/high_freq_factor kept, smoothed in between). */
void rg_rope_params(const rg_rope_config *cfg, double *inv_freq, double *pos_mult, double *attn_factor);

/* cos/sin tables for positions 0..n_pos-1 (negative positions use the symmetry), attention factor included,
 * computed in double then rounded to rg_real. Rebuilt when the config changes, extended when a larger position is
 * first asked for (the only heap allocation). */
typedef struct {
    rg_rope_config cfg;
    int n_freq;              /* rotary_dim / 2 */
    int n_pos;               /* tabulated positions */
    double *inv_freq;        /* [n_freq] from rg_rope_params */
    double pos_mult, attn_factor;
    rg_real *cos, *sin;      /* [n_pos, n_freq] */
    unsigned generation;     /* bumped at every rebuild (a pending backward checks it) */
} rg_rope_cache;

void rg_rope_cache_init(rg_rope_cache *rc);
/* Makes the tables match cfg and cover |p| <= max_abs_pos. RG_ERR_NOMEM, RG_ERR_ARG for a bad config. */
rg_status rg_rope_cache_ensure(rg_rope_cache *rc, const rg_rope_config *cfg, int max_abs_pos);
void rg_rope_cache_free(rg_rope_cache *rc);
/* Rotates the first rotary_dim channels of each head of x [B, T, n_heads*hd] at positions pos [B*T]: pairs
 * (2i, 2i+1) (interleaved) or (i, i + rotary_dim/2) (half), (a, b) -> (a c - b s, a s + b c). The cache must be
 * ensured for cfg and these positions (the function ensures it). Backward: the inverse rotation (angle -p theta)
 * of the incoming gradient. */
rg_tensor *rg_pos_rope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, rg_rope_cache *rc, const int32_t *pos);

/* ---- 2-D axial RoPE for vision transformers (pos_axial.c) */
/* x [B, N, n_heads*hd] (N patches, hd % 4 == 0): in each head, the interleaved pairs of channels [0, hd/2) rotate
 * by col[b*N + n] * theta_i and those of [hd/2, hd) by row[b*N + n] * theta_i, theta_i = base^(-4i/hd),
 * i < hd/4 (Heo et al. 2024, "Rotary Position Embedding for Vision Transformer", RoPE-Axial; as the reference
 * code naver-ai/rope-vit compute_axial_cis, which uses base 100). Backward: the inverse rotation. */
rg_tensor *rg_pos_axial_rope(rg_ctx *c, rg_tensor *x, int n_heads, double base, const int32_t *col,
                             const int32_t *row);

#endif
