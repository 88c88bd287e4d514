/* pos_ext.h: two more position encodings at the op level (docs/encodings.md):
 *   M-RoPE (pos_mrope.c)  multimodal rotary embeddings of Qwen2-VL: three position ids per token (an op on
 *                         per-forward tables, as 1-D RoPE; not an encoding of the reference model, which has one
 *                         position stream).
 *   FIRE   (pos_fire.c)   functional interpolation for relative positions: a learned additive attention bias; also
 *                         the reference model's encoding "fire" (RG_POS_FIRE, descriptor rg_pos_enc_fire).
 * Layouts follow pos.h: q/k are [B, T, n_heads*head_dim] with heads as contiguous head_dim chunks; positions are
 * int32, row-major. docs/encodings.md has the formulas, sources, parameters and what is tested.
 */
#ifndef RG_NN_POS_EXT_H
#define RG_NN_POS_EXT_H

#include "nn.h"
#include "pos.h"

/* ------------------------------------------------------------------ M-RoPE (pos_mrope.c) */

/* Number of position axes of M-RoPE: temporal, height, width (Qwen2-VL). */
#define RG_MROPE_AXES 3

/* Checks an mrope_section against the rotary dim: each entry >= 0 and their sum == rotary_dim / 2 (the number of
 * rotary pairs; Qwen2-VL: [16, 24, 24] with head_dim 128). RG_ERR_ARG with a message naming the values otherwise.
 * Use it to validate user input (a config or a checkpoint) before calling rg_mrope_table_new, which aborts
 * instead. */
rg_status rg_mrope_check_section(const int mrope_section[RG_MROPE_AXES], int rotary_dim);

/* The section split of the model encoding "mrope" for cfg: its settings mrope_section_t, _h, _w, or, when all three
 * are 0, the split derived from rotary_dim / 2 = n pairs by Qwen2-VL's [16, 24, 24] of 64: h = w = round(3n/8)
 * (halves up), t = n - 2h (pos_mrope.c). Not validated (rg_model_config_validate checks it). */
void rg_mrope_section_of(const rg_model_config *cfg, int out[RG_MROPE_AXES]);

/* Text-only position ids: writes pos[t] to all three axes, out[a*n + t] = pos[t] for a < 3, t < n (Qwen2-VL gives
 * text tokens equal temporal, height and width ids). out has 3*n entries. */
void rg_mrope_text_positions(const int32_t *pos, int64_t n, int32_t *out);

/* The M-RoPE cos/sin table of one forward (Wang et al. 2024, "Qwen2-VL", sec. 2.1; Hugging Face
 * modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb), in the arena of c: row r, rotary pair i (i < rotary_dim/2
 * = the sum of mrope_section) holds cos/sin of pos3[a*n_rows + r] * inv_freq[i] (times the attention factor), with
 * a = 0 (temporal) for i < s0, 1 (height) for s0 <= i < s0 + s1, 2 (width) otherwise, and inv_freq[i] the frequency
 * of pair i in the whole rotary dim (rg_rope_freqs of cfg: rope_base, rotary dim, any rope_scaling extension).
 * pos3 [3, n_rows] (HF position_ids [3, B, T] flattened: n_rows = B*T, or T when the rows share positions); any
 * int32 values. seq_len: the current length, largest id + 1 (read by dynamic NTK only). cfg must validate
 * (rg_rope_validate); aborts on a bad section (validate user input with rg_mrope_check_section) or n_rows < 1.
 * With equal ids on the three axes the table equals rg_rope_table_new's bit for bit. */
rg_rope_table rg_mrope_table_new(rg_ctx *c, const rg_model_config *cfg, const int mrope_section[RG_MROPE_AXES],
                                 const int32_t *pos3, int n_rows, int64_t seq_len);

/* The axis (0 frame, 1 row, 2 column) of rotary pair i under mrope_section: contiguous sections (interleaved
 * false, Qwen2-VL: pairs [0, s0) frame, [s0, s0 + s1) row, the rest column), or Qwen3-VL's interleaved layout (HF
 * modeling_qwen3_vl.py apply_interleaved_mrope: row when i % 3 == 1 and i < 3 s1, column when i % 3 == 2 and
 * i < 3 s2, frame otherwise). */
int rg_mrope_axis_of_pair(const int mrope_section[RG_MROPE_AXES], bool interleaved, int i);

/* rg_mrope_table_new with the pairs' axes of rg_mrope_axis_of_pair (interleaved false: rg_mrope_table_new). */
rg_rope_table rg_mrope_table_new_layout(rg_ctx *c, const rg_model_config *cfg, const int mrope_section[RG_MROPE_AXES],
                                        bool interleaved, const int32_t *pos3, int n_rows, int64_t seq_len);

/* Multimodal RoPE of x [B, T, n_heads*hd] with a table of rg_mrope_table_new: each rotary pair rotated by its
 * section's axis angle; pairing half-split (i, i + rotary_dim/2) (half = true: HF rotate_half, what Qwen2-VL uses)
 * or interleaved (2i, 2i+1); channels [rotary_dim, hd) pass through. The same pure op as rg_pos_rope (the table is
 * the argument; token t of the flattened input uses row t % n_rows), so text tokens with equal ids give exactly 1-D
 * RoPE. Aborts on a shape the table does not fit. Backward: the inverse rotation of each pair by its own axis's
 * angle (docs/derivatives.md row "pos_mrope"). */
rg_tensor *rg_pos_mrope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, const rg_rope_table *tab);

/* ------------------------------------------------------------------ FIRE (pos_fire.c) */

/* Hyperparameters of FIRE (defaults of the reference listing of Li et al. 2023, and 32 hidden units). */
typedef struct {
    int n_heads;        /* outputs of the MLP: one bias per head */
    int mlp_width;      /* 32 */
    double init_c;      /* 0.1: initial c of psi(x) = log(|c x| + 1) */
    double init_L;      /* 512: the threshold is L = |L_multiplier * init_L| (init_L is a constant, not trained) */
    double eps;         /* 1e-6: added to the normalizer psi(max(L, i)) */
} rg_fire_config;

/* n_heads and the defaults above. */
rg_fire_config rg_fire_config_default(int n_heads);

/* The FIRE config of a model config: n_heads, and fire_mlp_width, fire_init_c, fire_init_L, fire_eps with 0
 * replaced by the default above (nn.h). */
rg_fire_config rg_fire_config_of(const rg_model_config *cfg);

/* RG_ERR_ARG with a message if the FIRE settings of cfg are out of range (after rg_fire_config_of: mlp_width in
 * [1, 65536], init_L finite and > 0, eps finite and >= 0, init_c finite). The one validation of them
 * (rg_model_config_validate calls it, for every encoding: the zeros of a non-FIRE config are valid). */
rg_status rg_fire_validate(const rg_model_config *cfg);

/* The parameters of one FIRE module, registered under `prefix` (state_dict names of the reference PyTorch module
 * nn.Sequential(Linear(1, W), ReLU(), Linear(W, H)) plus two scalars):
 *   prefix.c            [1]      (torch: shape [])   initialized to init_c
 *   prefix.L_multiplier [1]      (torch: shape [])   initialized to 1
 *   prefix.mlp.0.weight [W, 1]   prefix.mlp.0.bias [W]
 *   prefix.mlp.2.weight [H, W]   prefix.mlp.2.bias [H]
 * in this order, torch's state_dict order (a module's own parameters before its submodule's).
 * The MLP is initialized as torch.nn.Linear's default (weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in))) from
 * rng, not N(0, 0.02): with zero biases and inputs >= 0 half the ReLU units would never activate. */
typedef struct {
    rg_fire_config cfg;
    rg_tensor *w1, *b1, *w2, *b2;
    rg_tensor *c, *L_multiplier;
} rg_pos_fire;

/* Validates cfg (n_heads >= 1, mlp_width in [1, 65536], init_L > 0, eps >= 0, finite init_c) and registers the six
 * parameters in ps in the order listed. RG_ERR_ARG for a bad config or a name already registered, RG_ERR_NOMEM. */
rg_status rg_pos_fire_init(rg_pos_fire *f, rg_params *ps, const char *prefix, const rg_fire_config *cfg,
                           rg_rng *rng);

/* The FIRE attention bias (Li et al. 2023, "Functional Interpolation for Relative Positions Improves Long Context
 * Transformers", eq. for FIRE in sec. 3 and the reference listing in its appendix):
 *   bias[b, h, i, j] = f_theta( psi(p_i - p_j) / (psi(max(L, p_i)) + eps) )[h],   psi(x) = log(|c x| + 1),
 *   L = |L_multiplier * init_L|, f_theta(x) = W2 relu(W1 x + b1) + b2,
 * with p_i = q_pos[b*T + i] and p_j = k_pos[b*S + j]. It is meant for causal attention (p_j <= p_i); entries with
 * p_j > p_i are computed by the same formula (|c x|) and are finite, to be masked by the attention. Positions are
 * any int32 with |p| < 2^24 (exact in float32). Returns [H, T, S] when every batch row has the same positions, else
 * [B, H, T, S]. Built from recorded ops (mul, relu, log, linear, embedding gathers, permute and the reciprocal of
 * pos_fire.c) over the distinct (normalizer, distance) inputs only: rows with p_i < L share the normalizer psi(L),
 * so with positions 0..T-1 < L the MLP runs on T + S - 1 inputs rather than T*S. Gradients reach every parameter;
 * at a tie p_i == L the row uses p_i (no gradient to L_multiplier; torch.max would split it in half). */
rg_tensor *rg_pos_fire_bias(rg_ctx *c, const rg_pos_fire *f, const int32_t *q_pos, const int32_t *k_pos, int B,
                            int T, int S);

/* 1 / x elementwise (x [any shape] -> same shape; 1/0 = inf as IEEE). Backward dx += -g / x^2, written -g y^2 with
 * the saved result y (docs/encodings.md row "reciprocal"). Used by FIRE for the normalizer; public for its
 * gradient check. */
rg_tensor *rg_fire_reciprocal(rg_ctx *c, rg_tensor *x);

#endif
