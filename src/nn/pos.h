/* pos.h: position encodings. Each encoding is one descriptor (rg_pos_encoding) exported by its own file
 * (src/nn/pos_*.c); src/nn/pos.c holds the table of descriptors, indexed by rg_pos_kind. The model (model.c) calls
 * the descriptor's hooks and never branches on the encoding. The hooks, in the order the model calls them:
 *   1. params:  the encoding's parameters, registered at fixed sites of the state_dict order     add_params
 *   2. input:   h = tok_emb[t] (+ a position embedding)                                            input
 *   3. prepare: per-forward constants shared by every layer (RoPE tables; arena memory)            prepare
 *   4. q/k:     q, k rotated after their projections (RoPE)                                        rotate_qk
 *   5. scores:  an additive bias on the scaled scores (T5, ALiBi, Transformer-XL's position terms)  score_bias
 * and state_free at the end. Any hook may be NULL (nothing to do).
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
    RG_POS_FIRE,        /* Li et al. 2023 FIRE learned bias, blocks.{l}.attn.fire.* per layer (pos_ext.h) */
    RG_POS_COUNT        /* new encodings are appended before this (their numbers are stored) */
} rg_pos_kind;

/* Evaluation-time RoPE extensions (no retraining). New values are appended (their numbers are stored by
 * examples/train_order). */
typedef enum {
    RG_ROPE_EXT_NONE = 0,
    RG_ROPE_EXT_PI,     /* Position Interpolation (Chen et al. 2023): p -> p / s */
    RG_ROPE_EXT_NTK,    /* NTK-aware: base -> base * s^(d / (d - 2)) */
    RG_ROPE_EXT_YARN,   /* YaRN (Peng et al. 2023) */
    RG_ROPE_EXT_LLAMA3, /* Llama 3 frequency smoothing */
    RG_ROPE_EXT_DYNAMIC,/* dynamic NTK (HF _compute_dynamic_ntk_parameters): the base grows with the length */
    RG_ROPE_EXT_COUNT
} rg_rope_ext;

/* Names as used on the command line and in checkpoints: "none", "sinusoidal", "learned", "t5", "xl", "alibi",
 * "rope", "rope-half", "fire" (the descriptors' names); and "none", "pi", "ntk", "yarn", "llama3", "dynamic" (parsing
 * also takes HF's rope_type names "default" for none and "linear" for pi). */
const char *rg_pos_name(rg_pos_kind k);
/* Parses a name; RG_ERR_ARG (with the allowed names in the message) if unknown. */
rg_status rg_pos_parse(const char *name, rg_pos_kind *out);
const char *rg_rope_ext_name(rg_rope_ext e);
rg_status rg_rope_ext_parse(const char *name, rg_rope_ext *out);

/* ------------------------------------------------------------------ the position summary of one forward
 * Computed once per forward by the model (rg_pos_summarize) and handed to every hook and op that needs position
 * ranges: the only range scan and the only rows-shared test. */
typedef struct {
    const int32_t *q_pos;   /* [B*T] query positions */
    const int32_t *k_pos;   /* [B*S] key positions (the cached ones, then q_pos; k_pos == q_pos without a cache) */
    int B, T, S;
    int32_t q_min, q_max, k_min, k_max;
    bool rows_shared;       /* every row of q_pos equals the first, and every row of k_pos too */
} rg_pos_summary;

/* Fills s for q_pos [B*T] and k_pos [B*S] (B, T, S >= 1; any int32 values). */
void rg_pos_summarize(rg_pos_summary *s, const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S);

/* ------------------------------------------------------------------ the descriptor of one encoding */
struct rg_model_config;
struct rg_params;

/* Where add_params is called while the model registers its parameters (this fixes the state_dict order):
 * after tok_emb.weight; in each block after ln1 (before q_proj) and after o_proj; after the last block (before
 * ln_f). */
typedef enum { RG_POS_SITE_INPUT, RG_POS_SITE_ATTN_BEGIN, RG_POS_SITE_ATTN_END, RG_POS_SITE_OUTPUT } rg_pos_site;

typedef struct rg_pos_encoding {
    const char *name;           /* command line and checkpoint name */
    bool scaled_embedding;      /* tok_emb initialized N(0, d_model^-1/2) instead of N(0, 0.02) (sinusoidal) */
    /* The encoding's state (its parameters and constants) for a validated config; RG_ERR_NOMEM. */
    rg_status (*state_new)(const struct rg_model_config *cfg, void **state);
    /* Registers the encoding's parameters of `site` (layer: the block index, or -1) under their state_dict
     * names, drawing their initial values from rng. RG_ERR_ARG / RG_ERR_NOMEM from rg_params_register. */
    rg_status (*add_params)(void *state, const struct rg_model_config *cfg, rg_pos_site site, int layer,
                            struct rg_params *ps, rg_rng *rng);
    /* *h from the token embeddings tok [B, T, d] at the query positions. RG_ERR_ARG (nothing recorded) for a
     * position the encoding cannot represent. */
    rg_status (*input)(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h);
    /* Per-forward constants shared by all layers (arena memory of c), from the config as it is now. */
    void *(*prepare)(rg_ctx *c, void *state, const struct rg_model_config *cfg, const rg_pos_summary *s);
    /* q and k [B, T, d] replaced by their rotated versions (values are never rotated). */
    void (*rotate_qk)(rg_ctx *c, const void *prep, rg_tensor **q, rg_tensor **k);
    /* The additive bias on the scaled scores of `layer` for queries q [B, T, d] against keys k [B, S, d]:
     * [H, T, S] or [B, H, T, S]. */
    rg_tensor *(*score_bias)(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                             rg_tensor *q, rg_tensor *k);
    void (*state_free)(void *state);
} rg_pos_encoding;

/* The descriptor of encoding k (pos.c's table), or NULL if k is not an encoding. */
const rg_pos_encoding *rg_pos_encoding_of(rg_pos_kind k);

/* The descriptors (one per file). */
extern const rg_pos_encoding rg_pos_enc_sinusoidal, rg_pos_enc_learned, rg_pos_enc_t5, rg_pos_enc_xl,
    rg_pos_enc_alibi, rg_pos_enc_rope, rg_pos_enc_rope_half, rg_pos_enc_fire;

/* ------------------------------------------------------------------ encodings at the op level
 * The descriptors call these (one file per family: src/nn/pos_*.c). They are public so that tests and other
 * models can use the encodings without the reference model. Positions are int32, row-major [B, T]. */

/* Randomized positions (Ruoss et al. 2023, "Randomized Positional Encodings Boost Length Generalization of
 * Transformers", sec. 3): writes to out[b*T + t] a sorted uniformly random subset of size T of [0, max_position)
 * for each of the B rows (selection sampling, Knuth TAOCP vol. 2, 3.4.2 Algorithm S). Needs T <= max_position
 * (aborts otherwise). Training only; evaluation uses 0..T-1. */
void rg_random_positions(rg_rng *rng, int B, int T, int max_position, int32_t *out);

/* ---- sinusoidal (pos_sinusoidal.c) */
/* PE(p) [d_model] in double: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same) (d_model even). */
void rg_sinusoidal_pe(int d_model, int32_t p, double *out);
/* h = tok * sqrt(d_model) + PE(pos), composed of rg_scale and a broadcast rg_add of a constant: tok [B, T, d],
 * pos [B*T] (any sign); rows_shared: every row of pos equals the first (PE is then built once, [T, d]). */
rg_tensor *rg_pos_sinusoidal(rg_ctx *c, rg_tensor *tok, const int32_t *pos, bool rows_shared);

/* ---- learned absolute (pos_learned.c) */
/* *h = tok + table[pos], composed of rg_embedding and rg_add: tok [B, T, d], table [max_len, d], pos [B*T].
 * RG_ERR_ARG (nothing recorded) if a position is outside [0, max_len). */
rg_status rg_pos_learned(rg_ctx *c, rg_tensor *tok, rg_tensor *table, const int32_t *pos, rg_tensor **h);

/* ---- T5 relative bias (pos_t5.c) */
/* The Hugging Face T5 bucket (T5Attention._relative_position_bucket) of relative_position = p_key - p_query:
 * bidirectional: half the buckets per direction (keys after the query in the upper half); causal: distance
 * n = max(-relative_position, 0). Of each half, the first half are exact distances, the rest logarithmic up to
 * max_distance (float32 log arithmetic as HF), clamped to the last bucket. */
int rg_t5_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance);
/* bias[b, h, i, j] = table[bucket(k_pos[b, j] - q_pos[b, i]), h]: table [num_buckets, H]; positions from s.
 * The result is [H, T, S] when s->rows_shared, else [B, H, T, S]. The gradient scatter-adds into the table. */
rg_tensor *rg_pos_t5_bias(rg_ctx *c, rg_tensor *table, const rg_pos_summary *s, bool bidirectional,
                          int max_distance);

/* ---- ALiBi (pos_alibi.c) */
/* The head slopes of Press et al. 2022 (reference get_slopes): 2^(-8h/n) for h = 1..n when n is a power of two;
 * else the slopes of the nearest lower power of two followed by every other slope of twice that. out [n_heads]. */
void rg_alibi_slopes(int n_heads, double *out);
/* bias[b, h, i, j] = -slopes[h] * (q_pos[b, i] - k_pos[b, j]) (computed in double). [H, T, S] when
 * s->rows_shared, else [B, H, T, S]. A constant (records nothing). */
rg_tensor *rg_pos_alibi_bias(rg_ctx *c, const double *slopes, int n_heads, const rg_pos_summary *s);

/* ---- Transformer-XL (pos_xl.c) */
/* bias[b, h, i, j] = (u_h . k_{b,j,h} + (q_{b,i,h} + v_h) . r_{h}(p_i - p_j)) / sqrt(hd), r(k) = W_r R_k split into
 * heads, R_k = concat(sin(k w), cos(k w)), w_i = 10000^(-2i/d). q [B, T, d], k [B, S, d] (B, T, S those of s),
 * u and v [H, hd], W_r [d, d]; -> [B, H, T, S]. Gradients for q, k, u, v and W_r. */
rg_tensor *rg_pos_xl_bias(rg_ctx *c, rg_tensor *q, rg_tensor *k, rg_tensor *u, rg_tensor *v, rg_tensor *w_r,
                          int n_heads, const rg_pos_summary *s);

/* ---- RoPE (pos_rope.c) */
/* The rotary dimension of a config: rotary_dim; when 0, (int)(head_dim * partial_rotary_factor) (HF); head_dim
 * when both are 0. */
int rg_rope_dim(const struct rg_model_config *cfg);
/* RG_ERR_ARG with a message if the RoPE settings of cfg are out of range (rotary_dim and partial_rotary_factor
 * (consistent when both are set), rope_base, the extension and its factors). The one validation of them
 * (rg_model_config_validate and rg_model_set_rope_scaling call it). */
rg_status rg_rope_validate(const struct rg_model_config *cfg);
/* The angle of pair i at position p is (p * pos_mult) * inv_freq[i] (double); cos and sin are multiplied by
 * attn_factor. For a validated cfg and the current sequence length seq_len (largest position + 1; read by dynamic
 * only), writes inv_freq [rg_rope_dim(cfg)/2] (d = rotary dim, s = rope_scale, L = rope_orig_len or max_len when 0):
 *   none: base^(-2i/d); pi: same, pos_mult 1/s; ntk: base' = base s^(d/(d-2));
 *   dynamic: HF _compute_dynamic_ntk_parameters: base' = base (s n / L - (s - 1))^(d/(d-2)) with n = seq_len when
 *   seq_len > L, else base' = base (the formula at n = L);
 *   yarn: HF _compute_yarn_parameters (ramp between floor/ceil of the correction dims of beta_fast/beta_slow;
 *   attn_factor = rope_attention_factor verbatim when set, else 0.1 ln s + 1 for s > 1);
 *   llama3: HF _compute_llama3_parameters (wavelengths above L/low_freq_factor divided by s, below
 *   L/high_freq_factor kept, smoothed in between). */
void rg_rope_freqs(const struct rg_model_config *cfg, int64_t seq_len, double *inv_freq, double *pos_mult,
                   double *attn_factor);
/* The base of dynamic NTK at sequence length seq_len (HF _compute_dynamic_ntk_parameters): base for seq_len <= L,
 * else base (s seq_len / L - (s - 1))^(d/(d-2)); finite and >= base for every validated cfg. */
double rg_rope_dynamic_base(const struct rg_model_config *cfg, int64_t seq_len);

/* The cos/sin tables of one forward (arena memory; immutable once built). Token t of the flattened [n, D] input
 * uses row t % n_rows. */
typedef struct {
    int n_freq;                 /* rotary_dim / 2 */
    int n_rows;
    const rg_real *cos, *sin;   /* [n_rows, n_freq], attention factor included */
} rg_rope_table;

/* Builds the table of positions pos [n_rows] for a validated cfg at sequence length seq_len (rg_rope_freqs; angles
 * in double, rounded to rg_real) in the arena of c. */
rg_rope_table rg_rope_table_new(rg_ctx *c, const struct rg_model_config *cfg, const int32_t *pos, int n_rows,
                                int64_t seq_len);
/* Rotates the first 2 * tab->n_freq channels of each head of x [.., n, n_heads*hd] (n a multiple of
 * tab->n_rows) with the table rows: pairs (2i, 2i+1) (interleaved) or (i, i + n_freq) (half),
 * (a, b) -> (a c - b s, a s + b c). A pure op: the table is an argument (as ggml's rope_ext takes its scalars).
 * Backward: the inverse rotation (angle -p theta) of the incoming gradient. */
rg_tensor *rg_pos_rope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, const rg_rope_table *tab);

/* ---- 2-D axial RoPE for vision transformers (pos_axial.c) */
/* x [B, N, n_heads*hd] (N patches, hd % 4 == 0): in each head, the interleaved pairs of channels [0, hd/2) rotate
 * by col[b*N + n] * theta_i and those of [hd/2, hd) by row[b*N + n] * theta_i, theta_i = base^(-4i/hd),
 * i < hd/4 (Heo et al. 2024, "Rotary Position Embedding for Vision Transformer", RoPE-Axial; as the reference
 * code naver-ai/rope-vit compute_axial_cis, which uses base 100). Backward: the inverse rotation. */
rg_tensor *rg_pos_axial_rope(rg_ctx *c, rg_tensor *x, int n_heads, double base, const int32_t *col,
                             const int32_t *row);

#endif
