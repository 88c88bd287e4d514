/* checkpoint_schema.h: the checkpoint schema (docs/checkpoint.md) shared by the save path (checkpoint_save.c)
 * and the load path (checkpoint.c): the attribute tables of /config and /optim and the helpers both sides use.
 * Not a public header. */
#ifndef RG_IO_CHECKPOINT_SCHEMA_H
#define RG_IO_CHECKPOINT_SCHEMA_H

#include "checkpoint.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "h5.h"

#ifdef RG_DOUBLE
#define REAL_DTYPE RG_H5_FLOAT64
#else
#define REAL_DTYPE RG_H5_FLOAT32
#endif

/* ================================================================== the schema */

/* One scalar attribute of the file, stored at byte offset `off` of a C struct. Integers are stored as int32
 * (F_I32, F_BOOL) or int64 (F_I64); doubles (F_F64) as float64; F_POS and F_EXT as the encoding's
 * and the RoPE extension's names. Reading checks [lo, hi] (doubles: also finite). */
typedef enum { F_I32, F_BOOL, F_I64, F_F64, F_POS, F_EXT } field_type;
typedef struct {
    const char *name;
    field_type type;
    size_t off;
    double lo, hi;
    bool optional; /* absent in files written before the field existed: read as 0 (the field's "unset") */
} field;

#define BELOW_ONE (1 - 0x1p-53) /* the largest double < 1 */
#define INT_FIELD(st, name) {#name, F_I32, offsetof(st, name), INT32_MIN, INT32_MAX, false}
#define F64_FIELD(st, name) {#name, F_F64, offsetof(st, name), -HUGE_VAL, HUGE_VAL, false}

/* /config: the model (rg_model_config), and nothing of the experiment (that is the program's, in /run). A new config
 * field is one row here. The values are checked as a whole by rg_model_config_validate after reading. Other
 * attributes of /config are not read: files written before the experiment settings moved to /run also hold task,
 * L_train and seed there, and load as they are (docs/checkpoint.md, "Older files"). */
static const field CONFIG_FIELDS[] = {
    INT_FIELD(rg_model_config, vocab_size),
    INT_FIELD(rg_model_config, d_model),
    INT_FIELD(rg_model_config, n_heads),
    INT_FIELD(rg_model_config, n_layers),
    INT_FIELD(rg_model_config, d_ff),
    INT_FIELD(rg_model_config, max_len),
    {"causal", F_BOOL, offsetof(rg_model_config, causal), 0, 1, false},
    {"pos_encoding", F_POS, offsetof(rg_model_config, pos), 0, 0, false},
    F64_FIELD(rg_model_config, rope_base),
    INT_FIELD(rg_model_config, rotary_dim),
    {"rope_ext", F_EXT, offsetof(rg_model_config, rope_ext), 0, 0, false},
    F64_FIELD(rg_model_config, rope_scale),
    INT_FIELD(rg_model_config, rope_orig_len),
    F64_FIELD(rg_model_config, llama3_low_freq_factor),
    F64_FIELD(rg_model_config, llama3_high_freq_factor),
    F64_FIELD(rg_model_config, yarn_beta_fast),
    F64_FIELD(rg_model_config, yarn_beta_slow),
    {"rope_attention_factor", F_F64, offsetof(rg_model_config, rope_attention_factor), 0, HUGE_VAL, true},
    {"partial_rotary_factor", F_F64, offsetof(rg_model_config, partial_rotary_factor), 0, 1, true},
    {"rope_bf16_angles", F_BOOL, offsetof(rg_model_config, rope_bf16_angles), 0, 1, true},
};
/* After these rows: the settings the encoding declares (pos.h rg_pos_setting: t5_num_buckets, fire_*, kerple_eps,
 * a registered encoding's), each an attribute of its name (int32 or float64), written resolved, read when present
 * (a file written before the setting existed reads as its default); then rope_layout. */

/* /optim: the learning-rate schedule (rg_lr_state). */
static const field LR_FIELDS[] = {
    {"lr_step", F_I64, offsetof(rg_lr_state, step), 0, RG_CKPT_MAX_STEP, false},
    {"lr_peak", F_F64, offsetof(rg_lr_state, peak), 0, 1e6, false},
    {"lr_warmup", F_I64, offsetof(rg_lr_state, warmup), 0, RG_CKPT_MAX_STEP, false},
    {"lr_total", F_I64, offsetof(rg_lr_state, total), 0, RG_CKPT_MAX_STEP, false},
    {"lr_min_frac", F_F64, offsetof(rg_lr_state, min_frac), 0, 1, false},
    {"grad_clip", F_F64, offsetof(rg_lr_state, grad_clip), 0, HUGE_VAL, false},
};

/* /optim: AdamW (only with has_adamw = 1); the ranges of rg_adamw_init. */
static const field ADAMW_FIELDS[] = {
    {"step", F_I64, offsetof(rg_adamw, step), 0, RG_CKPT_MAX_STEP, false},
    {"beta1", F_F64, offsetof(rg_adamw, beta1), 0, BELOW_ONE, false},
    {"beta2", F_F64, offsetof(rg_adamw, beta2), 0, BELOW_ONE, false},
    {"eps", F_F64, offsetof(rg_adamw, eps), 0, HUGE_VAL, false},
    {"weight_decay", F_F64, offsetof(rg_adamw, weight_decay), 0, HUGE_VAL, false},
};

#define N_OF(a) (int)(sizeof a / sizeof a[0])

static inline const char *rope_layout_of(rg_pos_kind k)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(k);
    return e && e->rope_layout ? e->rope_layout : "none";
}

/* cfg with rotary_dim and rope_orig_len resolved as tools/ref_model.py does. */
static inline rg_model_config resolved(const rg_model_config *cfg)
{
    rg_model_config c = *cfg;
    if (c.rotary_dim == 0 && c.n_heads > 0) c.rotary_dim = rg_rope_dim(&c);
    if (c.rope_orig_len == 0) c.rope_orig_len = c.max_len;
    return c;
}

#endif
