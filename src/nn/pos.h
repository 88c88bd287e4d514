/* pos.h: position encodings, and the registry that names them.
 * An encoding is one descriptor (rg_pos_encoding, below) in its own file (src/nn/pos_*.c for the built-ins, or a
 * user's program: examples/custom_encoding.c, docs/extending.md). rg_pos_register adds a descriptor to the
 * registry at run time; the built-ins are registered the same way, in rg_pos_kind order, before the first lookup
 * (Hugging Face's ROPE_INIT_FUNCTIONS, a dict of named functions, is the model). A model config names its encoding
 * by its registry id (rg_pos_parse of the name); checkpoints, the command line and reports use the name. The
 * encoding's own settings are named config values the descriptor declares (rg_pos_setting), carried by
 * rg_model_config.pos_values and read with rg_pos_config_get. The model (model.c) calls the descriptor's hooks and
 * never branches on the encoding. The hooks, in the order the model calls them:
 *   1. params:  the encoding's parameters, registered at fixed sites of the state_dict order     add_params
 *   2. input:   h = tok_emb[t] (+ a position embedding)                                            input
 *   3. prepare: per-forward constants shared by every layer (RoPE tables; arena memory)            prepare
 *   4. q/k:     q, k rotated after their projections (RoPE)                                        rotate_qk
 *   5. scores:  an additive bias on the scaled scores (T5, ALiBi, KERPLE, Transformer-XL's terms)  score_bias
 * and state_free at the end. Any hook may be NULL (nothing to do).
 * Layouts: hidden states and q/k/v are [B, T, d_model], heads are contiguous head_dim chunks of d_model.
 * Positions are int32 [B, T] (row b, token t); the default is 0..T-1 (cached decoding: offset by the cache length).
 * Each encoding's formula and source are documented with its implementation (src/nn/pos_*.c).
 */
#ifndef RG_NN_POS_H
#define RG_NN_POS_H

#include "../tensor/tensor.h"
#include "../tensor/rng.h"

/* Registry ids. The built-ins have these stable numbers (their registration order); rg_pos_register gives the
 * next ids (RG_POS_BUILTIN_COUNT, ...) to the encodings a program adds, in its order of registration. Ids are
 * never stored in files (names are), so they only need to agree within one process. */
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
    RG_POS_KERPLE_LOG,  /* Chi et al. 2022 KERPLE log bias -r1 log(1 + r2 |i-j|), blocks.{l}.attn.kerple.* */
    RG_POS_KERPLE_POWER,/* Chi et al. 2022 KERPLE power bias -r1 |i-j|^r2, 0 < r2 <= 2 */
    RG_POS_ROPE_2D,     /* axial 2-D RoPE (Heo et al. 2024; rope-vit, Llama 4 vision): column pairs, then row pairs */
    RG_POS_ROPE_2D_PIXTRAL, /* 2-D RoPE of HF Pixtral: row and column alternate through the frequencies (half) */
    RG_POS_MROPE,       /* M-RoPE (Qwen2-VL): frame, row, column sections of the pairs (half-split) */
    RG_POS_LEARNED_2D,  /* learned row + column tables pos_emb_row.weight, pos_emb_col.weight (pos_grid_bias.h) */
    RG_POS_SINUSOIDAL_2D,/* MAE's 2-D sin/cos: half the channels the column, half the row (pos_grid_bias.h) */
    RG_POS_ALIBI_2D_MANHATTAN, /* ALiBi -m_h (|dr| + |dc|) (pos_grid_bias.h) */
    RG_POS_ALIBI_2D_EUCLIDEAN, /* ALiBi -m_h sqrt(dr^2 + dc^2) (pos_grid_bias.h) */
    RG_POS_T5_2D,       /* T5 buckets per axis, rel_bias_row.weight + rel_bias_col.weight (pos_grid_bias.h) */
    RG_POS_BUILTIN_COUNT/* new built-ins are appended before this; registered encodings follow it */
} rg_pos_kind;

#define RG_POS_MAX 32           /* the registry's capacity (built-ins included) */
#define RG_POS_SETTINGS_MAX 8   /* settings one encoding declares at most */
#define RG_POS_VALUES_MAX 16    /* encoding settings one config carries at most */
#define RG_POS_NAME_MAX 32      /* encoding and setting names are shorter than this */

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

/* RoPE extension names as used on the command line and in checkpoints: "none", "pi", "ntk", "yarn", "llama3",
 * "dynamic" (parsing also takes HF's rope_type names "default" for none and "linear" for pi). RG_ERR_ARG (with the
 * allowed names in the message) for another name. */
const char *rg_rope_ext_name(rg_rope_ext e);
rg_status rg_rope_ext_parse(const char *name, rg_rope_ext *out);

/* ------------------------------------------------------------------ position axes (grids and frames)
 * Besides its 1-D position (the raster index of a flattened grid), a token may carry one id per axis: frame
 * (temporal), row (height) and column (width), in M-RoPE's order (Qwen2-VL position_ids [3, B, T]). Layout: int32
 * [RG_POS_AXES, B, T], axis-major as HF's. A forward given no axes (every 1-D task) gives each axis the token's 1-D
 * position, as Qwen2-VL gives text tokens equal ids on its three axes; so a 2-D encoding runs on 1-D tasks too.
 * Which axes an encoding reads is the encoding's choice (axial 2-D RoPE: row and column; M-RoPE: all three). */
#define RG_POS_AXES 3
enum { RG_AXIS_FRAME = 0, RG_AXIS_ROW = 1, RG_AXIS_COL = 2 };

/* ------------------------------------------------------------------ the position summary of one forward
 * Computed once per forward by the model (rg_pos_summarize_axes) and handed to every hook and op that needs
 * position ranges: the only range scan and the only rows-shared test. */
typedef struct {
    const int32_t *q_pos;   /* [B*T] query positions */
    const int32_t *k_pos;   /* [B*S] key positions (the cached ones, then q_pos; k_pos == q_pos without a cache) */
    int B, T, S;
    int32_t q_min, q_max, k_min, k_max;
    bool rows_shared;       /* every row of q_pos (and of each axis of q_axes) equals the first, and so for keys */
    /* The axis ids ([RG_POS_AXES, B*T] and [RG_POS_AXES, B*S], axis-major), or NULL when the forward had none:
     * then axis a of a token is its 1-D position. Read them through rg_pos_q_axis / rg_pos_k_axis. */
    const int32_t *q_axes, *k_axes;
    int32_t q_axis_min[RG_POS_AXES], q_axis_max[RG_POS_AXES], k_axis_min[RG_POS_AXES], k_axis_max[RG_POS_AXES];
} rg_pos_summary;

/* Fills s for q_pos [B*T] and k_pos [B*S] (B, T, S >= 1; any int32 values) without axes (every axis is the 1-D
 * position). */
void rg_pos_summarize(rg_pos_summary *s, const int32_t *q_pos, const int32_t *k_pos, int B, int T, int S);
/* Fills s as rg_pos_summarize, with the axis ids q_axes [RG_POS_AXES, B*T] and k_axes [RG_POS_AXES, B*S] (both
 * NULL, or both given; k_axes == q_axes without a cache). */
void rg_pos_summarize_axes(rg_pos_summary *s, const int32_t *q_pos, const int32_t *k_pos, const int32_t *q_axes,
                           const int32_t *k_axes, int B, int T, int S);
/* The ids of axis a (0 .. RG_POS_AXES-1) of the queries [B*T] and of the keys [B*S]: the summary's axes, or the
 * 1-D positions when the forward had no axes. */
static inline const int32_t *rg_pos_q_axis(const rg_pos_summary *s, int a)
{
    return s->q_axes ? s->q_axes + (size_t)a * s->B * s->T : s->q_pos;
}
static inline const int32_t *rg_pos_k_axis(const rg_pos_summary *s, int a)
{
    return s->k_axes ? s->k_axes + (size_t)a * s->B * s->S : s->k_pos;
}

/* ------------------------------------------------------------------ the descriptor of one encoding */
struct rg_model_config;
struct rg_params;
struct rg_pos_note_info;

/* Where add_params is called while the model registers its parameters (this fixes the state_dict order):
 * after tok_emb.weight; in each block after ln1 (before q_proj) and after o_proj; after the last block (before
 * ln_f). */
typedef enum { RG_POS_SITE_INPUT, RG_POS_SITE_ATTN_BEGIN, RG_POS_SITE_ATTN_END, RG_POS_SITE_OUTPUT } rg_pos_site;

/* One setting an encoding declares: a named number of the model config (rg_model_config.pos_values), with the
 * encoding's default and limits. Checkpoints store it as a /config attribute of that name (int32 or float64),
 * train_order takes it as --pos-config NAME=VALUE (and the same key in --config files), prints it with
 * --print-config and in the report. The name is the config key: [A-Za-z0-9_], shorter than
 * RG_POS_NAME_MAX, prefixed with the encoding's name ("t5_max_distance") so that it cannot collide with the
 * core /config attributes (docs/checkpoint.md). Two encodings may declare the same name only with the same type,
 * default and limits (the kerple variants share kerple_eps). */
typedef enum { RG_POS_SETTING_INT, RG_POS_SETTING_DOUBLE } rg_pos_setting_type;
typedef struct {
    const char *name;
    rg_pos_setting_type type;   /* INT: integral values (stored as int32: |lo|, |hi| <= 2^31 - 1) */
    double def, lo, hi;         /* default and inclusive limits (lo <= def <= hi, all finite) */
    const char *doc;            /* one line: what it is, its unit, its source */
} rg_pos_setting;

/* The value of one setting in a config. */
typedef struct {
    char name[RG_POS_NAME_MAX];
    double value;
} rg_pos_value;

/* The descriptor of one position encoding. Ownership: the descriptor and everything it points to (name, doc,
 * settings) belong to the caller of rg_pos_register and must stay valid and unchanged until the process ends
 * (static storage). The state belongs to the model: state_new makes it when the model is built, state_free frees
 * it with the model. Parameters belong to the model's registry (rg_params, registered in add_params): the state
 * only keeps borrowed pointers to them. Tensors the hooks return live in the arena of the forward's context c.
 *
 * Backward: a hook that composes recorded ops (rg_add, rg_mul, rg_embedding, rg_linear, ... of tensor/ops.h)
 * needs no backward of its own; their gradients reach the parameters. A hook that computes a result itself makes
 * it with rg_node_new (tensor.h) over its sources and an rg_op whose backward ADDS (+=) d loss / d source into
 * rg_grad_of(source) for every source, from node->grad (d loss / d result, the result's shape); what the backward
 * needs from the forward goes in node->saved / iarg / farg (arena memory of c). Every such op has a float64
 * finite-difference check (the conformance check, pos_conformance.h, of every registered encoding; the cases it does
 * not reach in tests/nn/pos/gradcheck_pos.c). A hook never keeps a tensor of c past
 * the forward (rg_ctx_reset frees them). Hooks must not allocate per element or call a function pointer per element
 * (speed is part of correctness). */
typedef struct rg_pos_encoding {
    const char *name;           /* the registry's key: command line, checkpoint and report name ([a-z0-9_-]) */
    const char *doc;            /* one line: the formula and its source (listed by the docs and messages) */
    bool scaled_embedding;      /* tok_emb initialized N(0, d_model^-1/2) instead of N(0, 0.02) (sinusoidal) */
    const char *rope_layout;    /* checkpoints' /config rope_layout (tools/ckpt_to_torch.py): "interleaved" or "half"
                                 * for the rotary encodings; NULL: "none" */
    const rg_pos_setting *settings; /* [n_settings] the settings it reads with rg_pos_config_get */
    int n_settings;             /* 0 .. RG_POS_SETTINGS_MAX */
    /* Checks what the declared limits cannot (a relation between settings, a relation to d_model or n_heads):
     * RG_ERR_ARG with a message. Called by rg_model_config_validate for a config of this encoding, after every
     * value was checked against its limits. */
    rg_status (*validate)(const struct rg_model_config *cfg);
    /* The encoding's state (its parameters' pointers and constants) for a validated config; RG_ERR_NOMEM. */
    rg_status (*state_new)(const struct rg_model_config *cfg, void **state);
    /* Registers the encoding's parameters of `site` (layer: the block index, or -1) under their state_dict
     * names with rg_params_register / rg_params_register_normal (nn.h), drawing their initial values from rng
     * (the model's one generator: the draws' order is part of the model's initialization). RG_ERR_ARG /
     * RG_ERR_NOMEM from rg_params_register. Called for every site, layer by layer. */
    rg_status (*add_params)(void *state, const struct rg_model_config *cfg, rg_pos_site site, int layer,
                            struct rg_params *ps, rg_rng *rng);
    /* *h [B, T, d] from the token embeddings tok [B, T, d] at the query positions s->q_pos. RG_ERR_ARG (nothing
     * recorded, a message naming the position) for a position the encoding cannot represent. */
    rg_status (*input)(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h);
    /* Per-forward constants shared by all layers (arena memory of c), from the config as it is now (RoPE scaling
     * may change between forwards). The result is handed to rotate_qk and score_bias. */
    void *(*prepare)(rg_ctx *c, void *state, const struct rg_model_config *cfg, const rg_pos_summary *s);
    /* q and k [B, T, d] replaced by their rotated versions (values are never rotated). With a KV cache, k holds
     * the new tokens only, and they sit at the query positions s->q_pos (the new keys are the new queries' tokens):
     * rotate both with the same rows of prep; the cache keeps keys already rotated, so a hook never rotates a
     * cached key again. */
    void (*rotate_qk)(rg_ctx *c, const void *prep, rg_tensor **q, rg_tensor **k);
    /* The additive bias on the scaled scores q k^T / sqrt(head_dim) of `layer` for queries q [B, T, d] against keys
     * k [B, S, d] (S = cached + new keys; positions s->q_pos [B*T], s->k_pos [B*S]): [H, T, S] when the bias is the
     * same for every row (e.g. s->rows_shared), else [B, H, T, S]. The attention adds it before the causal mask
     * (masked entries may hold any finite value). */
    rg_tensor *(*score_bias)(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                             rg_tensor *q, rg_tensor *k);
    void (*state_free)(void *state);
    unsigned flags;             /* RG_POS_OPT_IN, RG_POS_ROTARY, RG_POS_POSITIONLESS (or 0) */

    /* ---- capabilities: what a program running experiments (the engine of train_order, src/engine) asks of an
     * encoding. The built-ins answer through these fields exactly as a registered encoding does; every one is
     * optional (zero / NULL: the default each line states). */
    /* The INT setting (one of `settings`) that caps the relative distance the encoding tells apart (T5's
     * t5_max_distance), or NULL. The engine sets it to the task's longest training distance unless the user gave
     * it, and offers the training variant that sets it to 128 (t5max128). */
    const char *max_distance_setting;
    /* The largest position the encoding represents under cfg (a learned table: max_len - 1), or NULL: every
     * position. The engine refuses training sequences that pass it, and reports a test length whose forward the
     * encoding refuses (RG_ERR_ARG of input) as n/a rather than as an error. */
    int (*max_position)(const struct rg_model_config *cfg);
    /* The report's note on the encoding's extrapolation-relevant settings: writes one or more lines (separated by
     * '\n', no list marker, no final newline) into buf[cap] (cap >= 4096), or nothing (buf[0] = 0: no line, e.g.
     * T5 when only its +rand rows are in the report). NULL: the report writes doc and the values of the declared
     * settings. Two encodings writing the same text one after the other share one line (rope and rope-half). */
    void (*report_note)(const struct rg_model_config *cfg, const struct rg_pos_note_info *info, char *buf,
                        size_t cap);
    int note_order;             /* the note's place among the notes (ascending, then registry order); 0: after
                                 * every encoding with a place */
    /* The colour ("#RRGGBB") and gnuplot point type (1..15) of the encoding's curves in plots, or NULL / 0: the
     * engine gives a registered encoding a colour and marker of a palette reserved for registered encodings (by
     * registration order), never a built-in's. */
    const char *plot_colour;
    int plot_marker;
} rg_pos_encoding;

/* What a report knows when it asks an encoding for its note (rg_pos_encoding.report_note). */
typedef struct rg_pos_note_info {
    int longest_distance;       /* the longest distance between two positions of a training sequence */
    bool base_rows;             /* the report has rows of the encoding as configured (no training variant) */
    bool capped_rows;           /* the report has rows trained with max_distance_setting = 128 (variant t5max128) */
} rg_pos_note_info;

/* rg_pos_encoding.flags. OPT_IN: not selected by train_order's --pos all (name it): the grid encodings, which read
 * the position axes and are meant for the grid tasks. ROTARY: rotates q and k with tables of the config's RoPE
 * fields (rg_rope_table_new: rope_base, rope_scaling, rope_bf16_angles), so evaluation-time rope_scaling applies
 * (train_order's --rope-scaling rows) and the training variants theta500k and bf16angles. POSITIONLESS: reads no
 * position (NoPE), so randomized positions would train the same model (no +rand variant). */
#define RG_POS_OPT_IN 1u
#define RG_POS_ROTARY 2u
#define RG_POS_POSITIONLESS 4u
/* RELATIVE: the logits do not change when every position is shifted by the same amount (a relative encoding:
 * T5, ALiBi, RoPE, KERPLE, ...; not absolute positions, nor FIRE, which normalizes by the query's position). The
 * conformance check (pos_conformance.h) tests it. */
#define RG_POS_RELATIVE 8u

/* ------------------------------------------------------------------ the registry */

/* Adds enc to the registry under enc->name; writes its id to *id (id may be NULL). Call it before building a
 * model, parsing a name or loading a checkpoint of that encoding, and before starting threads that look names up
 * (the registry is not locked). RG_ERR_ARG with a message (nothing registered) for: a NULL or empty name, a
 * name of characters other than [a-z0-9_-] or RG_POS_NAME_MAX or more long, a name already registered, a full
 * registry (RG_POS_MAX), more than RG_POS_SETTINGS_MAX settings, a setting without a valid name (see
 * rg_pos_setting), with limits that are not finite or do not hold its default (an INT setting: not integral or
 * past int32), or declared twice in enc or differently by another registered encoding. */
rg_status rg_pos_register(const rg_pos_encoding *enc, rg_pos_kind *id);
/* The number of registered encodings (ids 0 .. rg_pos_count() - 1); >= RG_POS_BUILTIN_COUNT. */
int rg_pos_count(void);
/* The descriptor of id k, or NULL if no encoding has that id. */
const rg_pos_encoding *rg_pos_encoding_of(rg_pos_kind k);
/* The name of id k ("?" if none). */
const char *rg_pos_name(rg_pos_kind k);
/* The id of a registered name; RG_ERR_ARG for another name, with a message listing the registered names and
 * saying that a program's own encoding must be registered (rg_pos_register) first. */
rg_status rg_pos_parse(const char *name, rg_pos_kind *out);
/* The declaration of setting `name` by any registered encoding, or NULL. */
const rg_pos_setting *rg_pos_setting_find(const char *name);

/* ------------------------------------------------------------------ encoding settings in a model config */

/* The value of setting `name` in cfg: the one set (rg_pos_config_set), else its declared default. Aborts if no
 * registered encoding declares the name (a descriptor reading a setting it did not declare is a bug). */
double rg_pos_config_get(const struct rg_model_config *cfg, const char *name);
/* Sets setting `name` of cfg to v (replacing an earlier value). RG_ERR_ARG (cfg unchanged) if no registered
 * encoding declares the name (the message lists the declared names), v is outside the declared limits or not
 * integral for an INT setting, or cfg already holds RG_POS_VALUES_MAX other values. A config may hold settings of
 * encodings other than its own (a grid's shared settings): they are checked and otherwise unused. */
rg_status rg_pos_config_set(struct rg_model_config *cfg, const char *name, double v);
/* Parses "NAME=VALUE" (VALUE a C number) and sets it (rg_pos_config_set). RG_ERR_ARG with a message otherwise. */
rg_status rg_pos_config_set_text(struct rg_model_config *cfg, const char *text);
/* RG_ERR_ARG with a message if a value of cfg is not a declared setting or outside its limits, or the encoding's
 * validate hook refuses cfg (rg_model_config_validate calls it). */
rg_status rg_pos_config_check(const struct rg_model_config *cfg);

/* The built-in descriptors (one per file). */
extern const rg_pos_encoding rg_pos_enc_none, rg_pos_enc_sinusoidal, rg_pos_enc_learned, rg_pos_enc_t5,
    rg_pos_enc_xl, rg_pos_enc_alibi, rg_pos_enc_rope, rg_pos_enc_rope_half, rg_pos_enc_fire, rg_pos_enc_kerple_log,
    rg_pos_enc_kerple_power;
extern const rg_pos_encoding rg_pos_enc_rope_2d, rg_pos_enc_rope_2d_pixtral, rg_pos_enc_mrope; /* grids: opt-in */

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

/* ---- KERPLE (pos_kerple.c) */
/* The KERPLE biases of Chi et al. 2022 ("KERPLE: Kernelized Relative Positional Embedding for Length
 * Extrapolation", NeurIPS, sec. 4.2; reference code chijames/KERPLE, ParallelKerpleLog / ParallelKerplePower), with
 * the distance d = |p_i - p_j| (q_pos[b, i], k_pos[b, j] of s), in double, rounded to the tensor type:
 *   log:   bias[b, h, i, j] = -r1[h] log(1 + r2[h] d)
 *   power: bias[b, h, i, j] = -r1[h] d^r2[h]
 * r1, r2 [H] (any values: the op does not clamp; see rg_pos_kerple_project). -> [H, T, S] when s->rows_shared, else
 * [B, H, T, S]. Backward (docs/derivatives.md row "pos_kerple_bias"): with G[h, d] the incoming gradient summed over
 * the entries at distance d, dr1[h] += sum_d G dB/dr1, dr2[h] += sum_d G dB/dr2; log: dB/dr1 = -log(1 + r2 d),
 * dB/dr2 = -r1 d / (1 + r2 d); power: dB/dr1 = -d^r2, dB/dr2 = -r1 d^r2 ln d, taken as 0 at d = 0 (as torch.pow's
 * exponent gradient). */
rg_tensor *rg_pos_kerple_bias(rg_ctx *c, rg_tensor *r1, rg_tensor *r2, bool power, const rg_pos_summary *s);
/* The reference code's positivity constraint, applied before every forward: r1 and r2 clamped in place to >= eps,
 * and r2 <= 2 for power (the kernel is conditionally positive definite for 0 < r2 <= 2, the paper's sec. 4.2).
 * Bumps the version of a parameter it changed. */
void rg_pos_kerple_project(rg_tensor *r1, rg_tensor *r2, bool power, double eps);

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
 * code naver-ai/rope-vit compute_axial_cis, which uses base 100). Backward: the inverse rotation. The model encoding
 * rope-2d (RG_POS_ROPE_2D, the same file) rotates as this op, bit for bit, with rotary_dim = hd and no rope_scaling. */
rg_tensor *rg_pos_axial_rope(rg_ctx *c, rg_tensor *x, int n_heads, double base, const int32_t *col,
                             const int32_t *row);

#endif
