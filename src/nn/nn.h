/* nn.h: modules (Linear, Embedding, LayerNorm, MLP, multi-head attention), the parameter registry, the reference
 * decoder-only transformer with its KV cache, and the optimizers (AdamW, SGD with momentum, LR schedule).
 *
 * Parameters are registered under PyTorch state_dict names ("blocks.0.attn.q_proj.weight") in a fixed order;
 * Linear weights are stored [out_features, in_features] as in torch.nn.Linear. Initialization (GPT-2 style):
 * Linear and Embedding weights N(0, 0.02), biases 0, LayerNorm weight 1 and bias 0, from the model's seeded RNG.
 */
#ifndef RG_NN_H
#define RG_NN_H

#include "../tensor/tensor.h"
#include "../tensor/ops.h"
#include "../tensor/rng.h"
#include "pos.h"

/* ------------------------------------------------------------------ parameter registry */

/* The parameters of a model in registration order (the order of state_dict). Owns the tensors.
 * Once packed (rg_params_pack; rg_model_new packs its registry), every parameter's data lives in ONE block and
 * every gradient in another, at the same element offsets (llm.c's layout): items[i]->data = data + offset[i],
 * items[i]->grad = grad + offset[i]. Each parameter's span is padded to a multiple of 16 elements with at least
 * one spare element (kept 0: the gradient guard of rg_backward), so zero_grad is one memset and the norm, clip and
 * optimizer updates are flat loops over [0, offset[n]). */
typedef struct rg_params {
    rg_tensor **items;
    int n, cap;
    int n_packed;          /* items[0..n_packed) live in the blocks (n_packed == n when fully packed) */
    int64_t *offset;       /* [n_packed + 1] element offsets; offset[n_packed] = the blocks' length */
    rg_real *data, *grad;  /* the blocks (NULL before packing) */
    int64_t max_numel;     /* > 0: rg_params_register refuses a parameter that would bring the total past it (a
                            * model built from a file's config: rg_model_new_within); 0: no limit */
} rg_params;

/* The standard deviation of the N(0, std) initialization of Linear, Embedding and position tables (GPT-2). */
#define RG_INIT_STD 0.02

/* Creates a zero-filled parameter named `name`, appends it to the registry and stores it in *out (NULL on error).
 * RG_ERR_ARG for a bad shape, a duplicate name or a total past ps->max_numel (checked before allocating),
 * RG_ERR_NOMEM. */
rg_status rg_params_register(rg_params *ps, const char *name, int ndim, const int *shape, rg_tensor **out);
/* rg_params_register, then fills the parameter N(0, std) from rng when std > 0 (else it stays zero). Same errors.
 * (src/nn/model.c) */
rg_status rg_params_register_normal(rg_params *ps, const char *name, int ndim, const int *shape, rg_rng *rng,
                                    double std, rg_tensor **out);
/* The parameter with that name, or NULL. */
rg_tensor *rg_params_find(const rg_params *ps, const char *name);
/* Total number of scalars. */
int64_t rg_params_numel(const rg_params *ps);
void rg_params_zero_grad(rg_params *ps);
/* Global L2 norm of all gradients (accumulated in double). */
double rg_params_grad_norm(const rg_params *ps);
/* torch.nn.utils.clip_grad_norm_: scales every gradient by min(1, max_norm / (norm + 1e-6)). Returns the norm
 * before clipping. */
double rg_params_clip_grad_norm(rg_params *ps, double max_norm);
/* Moves every parameter's data and gradient into the two contiguous blocks described by ps->offset (values are
 * copied; each tensor's data/grad pointers are updated, the tensors themselves stay). Called again after more
 * parameters were registered, it repacks all of them (optimizer state made before that no longer fits: the
 * optimizers assert on it). RG_ERR_NOMEM (nothing changed) if the blocks cannot be allocated. */
rg_status rg_params_pack(rg_params *ps);
/* Frees every parameter and the list. */
void rg_params_free(rg_params *ps);

/* ------------------------------------------------------------------ modules */

typedef struct { rg_tensor *weight, *bias; } rg_nn_linear;      /* weight [out, in], bias [out] or NULL */
typedef struct { rg_tensor *weight, *bias; } rg_nn_layernorm;   /* [C], [C]; eps 1e-5 */
typedef struct { rg_nn_linear fc1, fc2; } rg_nn_mlp;            /* fc1 [d_ff, d], GELU (tanh), fc2 [d, d_ff] */

/* prefix.weight and prefix.bias (if bias), initialized N(0, 0.02) and 0. NULL-free status on error. */
rg_status rg_nn_linear_init(rg_nn_linear *m, rg_params *ps, const char *prefix, int in_features, int out_features,
                            bool bias, rg_rng *rng);
/* x [..., in] -> [..., out]. */
rg_tensor *rg_nn_linear_forward(rg_ctx *c, const rg_nn_linear *m, rg_tensor *x);
rg_status rg_nn_layernorm_init(rg_nn_layernorm *m, rg_params *ps, const char *prefix, int C);
/* x [..., C] -> [..., C]. */
rg_tensor *rg_nn_layernorm_forward(rg_ctx *c, const rg_nn_layernorm *m, rg_tensor *x);
rg_status rg_nn_mlp_init(rg_nn_mlp *m, rg_params *ps, const char *prefix, int d_model, int d_ff, rg_rng *rng);
/* x [..., d] -> fc2(gelu(fc1(x))) [..., d]. */
rg_tensor *rg_nn_mlp_forward(rg_ctx *c, const rg_nn_mlp *m, rg_tensor *x);
/* r + fc2(gelu(fc1(x))): bias + GELU fused (rg_linear_gelu) and the residual add folded into fc2's GEMM
 * (rg_linear_residual). r has x's shape. */
rg_tensor *rg_nn_mlp_forward_residual(rg_ctx *c, const rg_nn_mlp *m, rg_tensor *x, rg_tensor *r);
/* r + linear(x), the add folded into the GEMM (rg_linear_residual; rg_add after rg_linear without a bias). */
rg_tensor *rg_nn_linear_forward_residual(rg_ctx *c, const rg_nn_linear *m, rg_tensor *x, rg_tensor *r);

/* Fused scaled-dot-product attention (one op, one backward): q [B, T, H*hd], k and v [B, S, H*hd] with heads as
 * contiguous hd chunks; scores = q_h k_h^T * scale (+ bias), bias [H, T, S] or [B, H, T, S] or NULL (it may
 * require grad); causal masks key j > i + (S - T) (query i sits at the end of the keys, as with a KV cache) with
 * -inf; softmax; out = P v -> [B, T, H*hd]. Saves P for the backward. The products are small GEMMs per (b, h),
 * causal ones in blocks of queries and keys that skip the masked part (src/nn/attention.c). */
rg_tensor *rg_attention(rg_ctx *c, rg_tensor *q, rg_tensor *k, rg_tensor *v, int n_heads, rg_tensor *bias,
                        bool causal, double scale);

/* ------------------------------------------------------------------ the reference model */

typedef struct rg_model_config {
    int vocab_size;      /* 30 */
    int d_model;         /* 64 */
    int n_heads;         /* 4 (head_dim = d_model / n_heads) */
    int n_layers;        /* 2 */
    int d_ff;            /* 256 */
    int max_len;         /* 160: rows of the learned table; positions must stay below it */
    bool causal;         /* true (decoder-only) */
    rg_pos_kind pos;     /* RG_POS_NONE; a registry id (pos.h: rg_pos_parse of the encoding's name) */
    /* RoPE, with Hugging Face's names (transformers PretrainedConfig rope_theta, partial_rotary_factor and the
     * rope_scaling dict; modeling_rope_utils.py) where ours differ: */
    double rope_base;    /* 10000; HF rope_theta */
    int rotary_dim;      /* 0 = head_dim * partial_rotary_factor (head_dim when that is 0 too) */
    double partial_rotary_factor;  /* 0 = unset; else in (0, 1]: rotary dim = (int)(head_dim * factor) (HF) */
    rg_rope_ext rope_ext;/* none; evaluation-time extension; HF rope_scaling.rope_type (default = none,
                            linear = pi, dynamic, yarn, llama3; ntk is the static NTK-aware base) */
    double rope_scale;   /* s, 1; HF rope_scaling.factor */
    int rope_orig_len;   /* 0 = max_len; HF rope_scaling.original_max_position_embeddings */
    double rope_attention_factor;  /* 0 = derived (yarn: 0.1 ln s + 1); HF rope_scaling.attention_factor (yarn) */
    double llama3_low_freq_factor, llama3_high_freq_factor; /* 1, 4; HF low_freq_factor, high_freq_factor */
    double yarn_beta_fast, yarn_beta_slow;                  /* 32, 1; HF beta_fast, beta_slow */
    /* false (the default): RoPE's angles p theta_i in double and its cos / sin tables in float32, as Hugging Face
     * forces them (transformers PR #29285: "since bfloat16 loses precision on long contexts"). true, an ablation
     * (is bf16 RoPE's precision loss visible?): the angles and tables as torch.autocast(bfloat16) computed them before that PR: angle =
     * bf16(bf16(p) * bf16(theta_i)) (the product of the bf16-rounded position and inverse frequency, exact in
     * float32, rounded to bf16), cos and sin of that angle rounded to bf16; every rounding round-to-nearest-even
     * from float32 (rg_bf16_from_float). p is the position after Position Interpolation's 1/s when that applies.
     * Applies to every table rg_rope_table_new builds (rope, rope-half, M-RoPE's axes); a checkpoint keeps it in
     * /config (rope_bf16_angles; older files read as false). docs/precision.md. */
    bool rope_bf16_angles;
    /* The encodings' own settings (pos.h rg_pos_setting: T5's t5_num_buckets, t5_max_distance; FIRE's fire_*;
     * KERPLE's kerple_eps; a registered encoding's): the values set with rg_pos_config_set, every other setting at
     * its declared default (rg_pos_config_get). */
    int n_pos_values;
    rg_pos_value pos_values[RG_POS_VALUES_MAX];
} rg_model_config;

/* The defaults above (the reference model, NoPE). */
rg_model_config rg_model_config_default(void);
/* RG_ERR_ARG with a message if a value is out of range (d_model % n_heads, even rotary_dim <= head_dim, ...; the
 * RoPE settings through rg_rope_validate; the encoding and its settings through rg_pos_config_check). */
rg_status rg_model_config_validate(const rg_model_config *cfg);

typedef struct { rg_nn_linear q_proj, k_proj, v_proj, o_proj; } rg_nn_attention;
typedef struct { rg_nn_layernorm ln1, ln2; rg_nn_attention attn; rg_nn_mlp mlp; } rg_nn_block;


typedef struct rg_model {
    rg_model_config cfg;
    rg_params params;      /* state_dict order */
    rg_tensor *tok_emb;    /* [V, d] */
    rg_nn_block *blocks;   /* n_layers */
    rg_nn_layernorm ln_f;
    rg_tensor *lm_head;    /* [V, d], no bias */
    const rg_pos_encoding *pos; /* the registered descriptor of cfg.pos (pos.h) */
    void *pos_state;       /* its state: its parameters (also in params), constants */
} rg_model;

/* Builds and initializes the model from cfg with an RNG seeded by `seed` (N(0, 0.02) weights; sinusoidal:
 * tok_emb N(0, d_model^-1/2)). Returns RG_ERR_ARG for a bad config, RG_ERR_NOMEM. */
rg_status rg_model_new(const rg_model_config *cfg, uint64_t seed, rg_model **out);
/* rg_model_new refusing (RG_ERR_ARG, nothing left allocated) a config whose parameters would number more than
 * max_params (> 0), before the parameter past the limit is allocated: for a config read from a file, whose table
 * sizes (max_len, learned_2d_max_rows, t5_2d_num_buckets, ...) are user input (rg_checkpoint_open passes
 * rg_checkpoint_max_params()). max_params <= 0: no limit, rg_model_new. */
rg_status rg_model_new_within(const rg_model_config *cfg, uint64_t seed, int64_t max_params, rg_model **out);
void rg_model_free(rg_model *m);

/* The RoPE scaling settings of a model with Hugging Face's rope_scaling names (transformers
 * modeling_rope_utils.py); stored in rg_model_config as rope_ext, rope_scale, rope_orig_len, rope_attention_factor,
 * yarn_beta_*, llama3_*_freq_factor. */
typedef struct {
    rg_rope_ext rope_type;                 /* none (HF default), pi (linear), ntk, dynamic, yarn, llama3 */
    double factor;                         /* s */
    int original_max_position_embeddings;  /* L; 0 = max_len */
    double attention_factor;               /* yarn; 0 = derived 0.1 ln s + 1 */
    double beta_fast, beta_slow;           /* yarn: 32, 1 */
    double low_freq_factor, high_freq_factor; /* llama3: 1, 4 */
} rg_rope_scaling;

/* The current RoPE scaling of m. */
rg_rope_scaling rg_model_rope_scaling(const rg_model *m);
/* Sets the evaluation-time RoPE scaling of m (no retraining; the parameters do not depend on it). Takes effect at
 * the next forward (the tables are built per forward). RG_ERR_ARG (m unchanged) if the result does not validate
 * (rg_rope_validate). */
rg_status rg_model_set_rope_scaling(rg_model *m, const rg_rope_scaling *s);

/* Keys and values of every layer for incremental (greedy) decoding. */
typedef struct {
    int batch, capacity, len;   /* len tokens cached per row, at most capacity */
    int n_layers, d_model;
    rg_real **k, **v;           /* per layer [batch, capacity, d_model] (RoPE already applied to k) */
    int32_t *positions;         /* [batch, capacity] */
    int32_t *axes;              /* [RG_POS_AXES, batch, capacity]: each cached key's axis ids (pos.h) */
    bool has_axes;              /* a forward since the last reset gave axes (else every axis is the position) */
} rg_kv_cache;

rg_status rg_kv_cache_init(rg_kv_cache *kv, const rg_model *m, int batch, int capacity);
void rg_kv_cache_reset(rg_kv_cache *kv);
void rg_kv_cache_free(rg_kv_cache *kv);

/* Positions passed to rg_model_forward must lie in [0, RG_MAX_POSITION) (the RoPE tables grow to the largest one). */
#define RG_MAX_POSITION (1 << 20)

/* Forward pass. tokens int32 [B, T] (ids in [0, vocab)); positions int32 [B, T] or NULL (0..T-1, or continuing
 * from kv->len); kv NULL for a full forward, else the T new tokens are appended to the cache (needs no-grad mode).
 * Writes logits [B, T, vocab] to *logits. Reads every parameter as it is now: a forward begins a new derivation
 * epoch (tensor.h rg_derived), so values stored into a parameter's data since the last forward are used, with no call
 * to make. Returns RG_ERR_ARG (nothing recorded that matters) for a token id out of range, a given position outside
 * [0, RG_MAX_POSITION), a position < 0 or >= max_len with learned positions, or a cache overflow. */
rg_status rg_model_forward(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *positions, int B, int T,
                           rg_kv_cache *kv, rg_tensor **logits);
/* rg_model_forward with each token's axis ids (frame, row, column: pos.h, "position axes"): axes int32
 * [RG_POS_AXES, B, T] (axis-major, HF's M-RoPE position_ids [3, B, T]) or NULL (every axis of a token is its 1-D
 * position, and rg_model_forward's result bit for bit). The encoding reads them from the forward's summary
 * (rg_pos_q_axis); the 1-D positions are still there for the encodings that read those. With kv, the cache keeps each
 * key's axis ids. Errors as rg_model_forward, and RG_ERR_ARG for an axis id outside [0, RG_MAX_POSITION) (the
 * message names axis, row and token). */
rg_status rg_model_forward_axes(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *positions,
                                const int32_t *axes, int B, int T, rg_kv_cache *kv, rg_tensor **logits);

/* Forward, cross-entropy (mean over every target != ignore_index of the batch) and backward of one batch,
 * computed in `chunks` groups of consecutive rows (gradient accumulation: each chunk's backward is seeded with its
 * share of the batch's targets), so the parameter gradients ACCUMULATE the gradient of the batch's mean loss,
 * equal to one forward/backward of the whole batch up to float rounding. Only one chunk's intermediates are alive
 * at a time (8 chunks: peak memory 19 MB instead of 61 MB on the reference model at batch 64). Resets c before
 * each chunk: the tensors of the last chunk stay valid. Zero the gradients before, clip and step after.
 * tokens, targets [B, T]; positions [B, T] or NULL. Writes the batch loss to *loss (0 with no targets).
 * Errors: RG_ERR_ARG for B, T or chunks < 1, and those of rg_model_forward (nothing is accumulated for the chunk
 * that failed; earlier chunks' gradients stay). */
rg_status rg_model_loss_backward(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *targets,
                                 const int32_t *positions, int B, int T, int chunks, int32_t ignore_index,
                                 double *loss);

/* ------------------------------------------------------------------ optimizers */

/* AdamW (Loshchilov & Hutter 2019) exactly as torch.optim.AdamW: p *= 1 - lr*wd; m = b1 m + (1-b1) g;
 * v = b2 v + (1-b2) g^2; p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps). Weight decay only on
 * parameters with 2 dims. m and v are kept per parameter in registry order. */
typedef struct {
    double beta1, beta2, eps, weight_decay;
    int64_t step;           /* steps taken */
    int n;                  /* parameters */
    rg_real **m, **v;       /* per parameter, numel each: views into m_block / v_block at the registry's offsets */
    rg_real *m_block, *v_block; /* the moments, laid out like the parameters' block (rg_params.offset) */
} rg_adamw;

/* Packs ps (rg_params_pack) if it is not packed yet, then allocates zeroed moments in the same layout. */
rg_status rg_adamw_init(rg_adamw *opt, rg_params *ps, double beta1, double beta2, double eps,
                        double weight_decay);
/* One update of every parameter with learning rate lr (bumps each parameter's version). */
void rg_adamw_step(rg_adamw *opt, rg_params *ps, double lr);
void rg_adamw_free(rg_adamw *opt);

/* SGD with momentum as torch.optim.SGD (dampening 0, not Nesterov): g += wd p (2-D params only); buf = mu buf + g
 * (buf = g on the first step); p -= lr buf. */
typedef struct {
    double momentum, weight_decay;
    int64_t step;
    int n;
    rg_real **buf;          /* per parameter: views into buf_block at the registry's offsets */
    rg_real *buf_block;
} rg_sgd;

/* Packs ps if needed, then allocates the zeroed momentum block. */
rg_status rg_sgd_init(rg_sgd *opt, rg_params *ps, double momentum, double weight_decay);
void rg_sgd_step(rg_sgd *opt, rg_params *ps, double lr);
void rg_sgd_free(rg_sgd *opt);

/* Learning rate for step index s (0-based, the step about to be taken): linear warmup peak*(s+1)/warmup for
 * s < warmup, then cosine from peak down to min_frac*peak at s = total: peak*(min_frac + (1-min_frac) *
 * 0.5*(1 + cos(pi * (s-warmup)/max(1, total-warmup)))). Matches tools/ref_model.py lr_schedule. */
double rg_lr_schedule(int64_t s, double peak, int64_t warmup, int64_t total, double min_frac);

/* ------------------------------------------------------------------ one training step (train_step.c) */

/* A batch of right-padded rows: tokens, targets int32 [B, T] (row stride T); lengths [B] the unpadded length of each
 * row (tokens past it are padding, their targets ignore_index), or NULL when every row is T long. */
typedef struct {
    const int32_t *tokens, *targets;
    const int *lengths;
    int B, T;
    const int32_t *positions; /* [B, T] position ids of every token, or NULL (0..T-1, or rg_step_config's random
                                 positions); not with pos_rng (position coupling: rg_task_desc.positions) */
    const int32_t *axes;      /* [RG_POS_AXES, B, T] axis ids (frame, row, column; pos.h), or NULL: every axis is
                                 the token's 1-D position (grid tasks: rg_task_desc.axes) */
} rg_batch;

typedef struct {
    int micro_batches;      /* k >= 1: rows sorted by length, k groups of ceil(B/k), each padded to its longest row */
    double lr;              /* this step's learning rate (rg_lr_schedule) */
    double clip;            /* > 0: clip the global gradient norm to it (rg_params_clip_grad_norm); 0: no clipping */
    int32_t ignore_index;   /* targets not counted (-100, RG_TASK_IGNORE) */
    rg_rng *pos_rng;        /* NULL: positions 0..T-1; else each micro-batch (in order) draws its positions with
                             * rg_random_positions(pos_rng, rows, its T, max_position) */
    int max_position;
} rg_step_config;

typedef struct {
    double loss;            /* the batch's mean cross-entropy over its targets (before the update) */
    double grad_norm;       /* the global gradient norm before clipping */
    double lr;
    int64_t tokens;         /* tokens run through the model, padding of the micro-batches included */
} rg_step_stats;

struct rg_run_state; /* io/checkpoint.h */

/* What a training loop keeps between steps: the step context and the micro-batch buffers (grown to the largest
 * batch once; steady-state steps allocate nothing), and the run state it advances (rg_trainer_track). */
typedef struct {
    rg_ctx *ctx;
    int cap_rows;
    int64_t cap;
    int *order;
    int32_t *tokens, *targets, *positions;
    int32_t *axes;          /* [RG_POS_AXES, cap] a micro-batch's axis ids (batches with axes) */
    /* Data parallelism (rg_trainer_set_share; 0, 0, NULL after rg_trainer_init: every micro-batch here, no
     * reduction, the one-process step bit for bit). */
    int rank, n_ranks;
    rg_status (*reduce_grad)(rg_real *grad, int64_t n, double *loss, void *ctx);
    void *reduce_ctx;
    struct rg_run_state *run; /* NULL, or the run state each step advances (rg_trainer_track) */
} rg_trainer;

rg_status rg_trainer_init(rg_trainer *t);
/* Makes t compute one rank's share of every later step (data parallelism, e.g. over MPI ranks). Micro-batch j
 * (0-based, in length order) is computed by rank j % n_ranks only; its backward is seeded with its targets over the
 * WHOLE batch's targets, so the gradients and losses of ranks 0..n_ranks-1 sum to the whole batch's. Every rank
 * still draws every micro-batch's positions from cfg->pos_rng, so the streams stay in step across ranks.
 * reduce_grad (NULL: none) is called after the last backward and before clipping with the flat gradient block
 * (m->params.grad, n = m->params.offset[m->params.n_packed] elements) and *loss this rank's part of the batch's
 * mean loss; it must replace both with their sums over the ranks, identically on every rank (then every rank
 * clips and updates to the same parameters). A status other than RG_OK from it is returned by the step with no
 * update taken (set rg_error's message first). rank 0 of n_ranks 1 with no callback is the one-process step.
 * Errors: RG_ERR_ARG unless 1 <= n_ranks and 0 <= rank < n_ranks (t unchanged). */
rg_status rg_trainer_set_share(rg_trainer *t, int rank, int n_ranks,
                               rg_status (*reduce_grad)(rg_real *grad, int64_t n, double *loss, void *ctx),
                               void *ctx);
/* One source of truth for the step: after this, every successful rg_train_step with t also advances rs (the run
 * state rg_checkpoint_save writes): rs->step and rs->lr.step become the number of updates taken, as AdamW's own
 * opt->step, so a checkpoint saved at any point records the step the optimizer is at. A step whose rs->step differs
 * from opt->step before the update is refused (RG_ERR_ARG naming both; e.g. a run state not loaded from the same
 * checkpoint as the optimizer). rs NULL stops tracking. rs must outlive t's use. */
void rg_trainer_track(rg_trainer *t, struct rg_run_state *rs);
void rg_trainer_free(rg_trainer *t);

/* One training step: zero the gradients, forward + cross-entropy + backward of every micro-batch (gradient
 * accumulation of the batch's mean loss, see train_step.c; with rg_trainer_set_share this rank's share, summed
 * over the ranks by its reduce_grad), clip, and one AdamW update with cfg->lr (rg_train_grad, then the update).
 * Errors (RG_ERR_ARG, nothing changed): B or T < 1, a length outside 1..T, micro_batches < 1, clip < 0, lr not
 * finite, max_position < T with random positions, both explicit and random positions; RG_ERR_NOMEM; and those of rg_model_forward (then no update is
 * taken, the gradients are partial). A non-finite loss is returned, not an error: the update was taken. */
rg_status rg_train_step(rg_trainer *t, rg_model *m, rg_adamw *opt, const rg_batch *b, const rg_step_config *cfg,
                        rg_step_stats *out);
/* With a tracked run state (rg_trainer_track), rg_train_step also sets rs->step = rs->lr.step = opt->step after the
 * update (and refuses, RG_ERR_ARG, nothing changed, when rs->step != opt->step before it). */

/* The gradient part of rg_train_step: zero the gradients, forward + cross-entropy + backward of this rank's share
 * of the micro-batches (all of them unless rg_trainer_set_share gave a share), then the share's reduce_grad if set. Leaves the gradients in
 * m->params.grad and writes out->loss (this share's part of the batch's mean loss, or the reduced sum), out->lr
 * and out->tokens (every micro-batch's, whichever rank runs it); out->grad_norm is 0. No update. Errors: those of
 * rg_train_step and the callback's status. */
rg_status rg_train_grad(rg_trainer *t, rg_model *m, const rg_batch *b, const rg_step_config *cfg, rg_step_stats *out);

#endif
