/* checkpoint.h: HDF5 checkpoints of a model, its AdamW state and the training run (step, learning-rate schedule
 * position, named RNGs, and an opaque group of the experiment's own settings). The file layout is documented in docs/checkpoint.md; in short:
 *
 *   /                      attributes format = "ropegrad-checkpoint", format_version = 1, step
 *   /config                attributes: the model config (rg_model_config) and rope_layout
 *   /params/<name>         one dataset per parameter (state_dict name), registry order, C order, float32
 *   /optim                 attributes: lr schedule (lr_step, lr_peak, lr_warmup, lr_total, lr_min_frac, grad_clip);
 *                          with an optimizer also has_adamw = 1, step, beta1, beta2, eps, weight_decay
 *   /optim/exp_avg/<name>, /optim/exp_avg_sq/<name>   AdamW moments (only with an optimizer)
 *   /rng/<name>            uint64 [2] = (state, inc) per named RNG
 *   /run                   attributes: free-form experiment attributes (int64, float64 or string); the library
 *                          stores them and checks their types, their meaning is the program's (task, seed, ...)
 *
 * Files written before the experiment settings moved to /run (format_version 1 as well) also hold /config task,
 * L_train and seed: those three attributes are ignored on reading (not validated, not returned), so such files load.
 *
 * The file starts with a 512-byte user block holding a CRC-32 of the rest (guard.h), checked before HDF5 parses
 * anything. Every file, sealed or not, is parsed by HDF5 only in a child process under resource limits
 * (h5_image.h): the loader reads the plain, checked values it sends, so corrupted or crafted metadata gives an
 * error, never a crash, hang or silently zero dataset in the caller; every dataset must have all its chunks. Saving builds the file in memory and writes it
 * atomically (atomic.h); loading validates the whole file (every value against the same limits as the library's
 * own setters: finite weights and moments, exp_avg_sq >= 0, betas in [0, 1), eps and weight_decay >= 0, steps in
 * 0..RG_CKPT_MAX_STEP, ...) before anything is written into the model, optimizer or run state.
 *
 * Element type: the float32 library reads and writes float32 datasets; the float64 gradient-check build
 * (-DRG_DOUBLE) uses float64 datasets instead (a checkpoint is specific to the rg_real of the build that wrote it).
 *
 * Errors (rg_status, message in rg_last_error(), always starting with "checkpoint <path>: "):
 *   RG_ERR_IO      the file or its folder cannot be created, opened, written (disk full), fsync'ed or renamed; a
 *                  file locked by another process
 *   RG_ERR_FORMAT  not an HDF5 file, empty, truncated, corrupt (digest mismatch, HDF5 crashed/hung/ran out of its limits in the reader process, a dataset without all its
 *                  chunks, a file larger than rg_checkpoint_max_bytes, more parameters than rg_checkpoint_max_params),
 *                  an HDF5 file from another program, wrong format version, a missing/unknown/wrong-dtype dataset
 *                  or attribute, a value out of range (NaN/Inf weights, negative beta, step < 0, lr_total > 2^31-1)
 *   RG_ERR_SHAPE   a dataset whose shape differs from the model's parameter (both shapes in the message)
 *   RG_ERR_ARG     config mismatch between the file and the model (key and both values in the message), bad
 *                  arguments (NULL model, optimizer for another parameter list, too many RNGs/attributes)
 *   RG_ERR_NOMEM   out of memory
 * HDF5's own error printing is switched off during every call here (and restored afterwards); where useful, the
 * innermost HDF5 message is appended to ours.
 */
#ifndef RG_IO_CHECKPOINT_H
#define RG_IO_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "../nn/nn.h"
#include "../tensor/rng.h"
#include "../tensor/tensor.h"
#include "atomic.h"

#define RG_CKPT_FORMAT "ropegrad-checkpoint"
#define RG_CKPT_VERSION 1

#define RG_CKPT_MAX_RNGS 4     /* named RNGs per run state */
#define RG_CKPT_MAX_ATTRS 32   /* free-form attributes per run state */
#define RG_CKPT_KEY_LEN 32     /* RNG names and attribute keys, including the terminating NUL */
#define RG_CKPT_STR_LEN 1024   /* string attribute values, including the terminating NUL */
#define RG_CKPT_MAX_STEP 2147483647 /* steps, lr_warmup, lr_total: at most 2^31 - 1 (what an int holds) */
#define RG_CKPT_READ_SECONDS 60 /* CPU time of the HDF5 reader process per load (twice that wall-clock) */
#define RG_CKPT_MAX_PARAMS ((int64_t)1 << 28) /* default of rg_checkpoint_set_max_params: 1 GiB of float32 */

/* The largest model a load accepts, in parameters (n < 1: back to RG_CKPT_MAX_PARAMS). A program sets the largest
 * model its own limits allow (train_order: ENG_MAX_PARAMS). Before any byte of a file is read, its size is checked
 * against rg_checkpoint_max_bytes() (RG_ERR_FORMAT naming both sizes); before a model or buffer of the size a file
 * declares is built, the parameters /params declares are checked against this limit (RG_ERR_FORMAT). */
void rg_checkpoint_set_max_params(int64_t n);
int64_t rg_checkpoint_max_params(void);
/* 3 x max_params x sizeof(rg_real) (parameters and both AdamW moments) + 64 MiB of HDF5 metadata: the largest
 * checkpoint file a load reads, and the most dataset bytes it accepts from the HDF5 reader process. */
uint64_t rg_checkpoint_max_bytes(void);

/* Learning-rate schedule settings and position (see rg_lr_schedule). */
typedef struct {
    int64_t step;       /* index of the next step to take (0-based) */
    double peak;        /* peak learning rate */
    int64_t warmup;     /* warmup steps */
    int64_t total;      /* total steps */
    double min_frac;    /* final lr = min_frac * peak */
    double grad_clip;   /* max global gradient norm (0 = no clipping) */
} rg_lr_state;

typedef enum { RG_RUN_ATTR_INT = 0, RG_RUN_ATTR_DOUBLE, RG_RUN_ATTR_STRING } rg_run_attr_type;

typedef struct {
    char key[RG_CKPT_KEY_LEN];
    rg_run_attr_type type;
    int64_t i;
    double d;
    char s[RG_CKPT_STR_LEN];
} rg_run_attr;

typedef struct {
    char name[RG_CKPT_KEY_LEN];
    rg_rng rng;
} rg_named_rng;

/* Everything of a training run that is not the model or the optimizer. Plain data: copy it with `=`.
 * A training loop can draw from the RNGs stored here directly (rg_run_state_rng), so a save captures them. */
typedef struct rg_run_state {
    int64_t step;                      /* training steps completed (rg_train_step advances it: rg_trainer_track) */
    rg_lr_state lr;                    /* learning-rate schedule */
    int n_rngs;
    rg_named_rng rngs[RG_CKPT_MAX_RNGS];
    int n_attrs;
    rg_run_attr attrs[RG_CKPT_MAX_ATTRS];
} rg_run_state;

/* A zeroed run state (step 0, zero schedule, no RNGs, no attributes). */
void rg_run_state_init(rg_run_state *rs);
/* Adds the RNG `name` with state *init, or overwrites it if the name exists. Returns the stored RNG (use it for
 * drawing) or NULL with rg_last_error set (RG_ERR_ARG: name empty, too long, containing '/', or the state is full). */
rg_rng *rg_run_state_add_rng(rg_run_state *rs, const char *name, const rg_rng *init);
/* The RNG `name`, or NULL. */
rg_rng *rg_run_state_rng(rg_run_state *rs, const char *name);
/* Sets the free-form attribute `key` (overwriting one of the same key, whatever its type). RG_ERR_ARG if the key
 * is empty, too long or contains '/', the string is too long, or the state is full. */
rg_status rg_run_state_set_int(rg_run_state *rs, const char *key, int64_t v);
rg_status rg_run_state_set_double(rg_run_state *rs, const char *key, double v);
rg_status rg_run_state_set_str(rg_run_state *rs, const char *key, const char *v);
/* The attribute `key`, or NULL. */
const rg_run_attr *rg_run_state_attr(const rg_run_state *rs, const char *key);
/* Typed access for values read from a checkpoint: the attribute `key` of that type, range-checked (lo <= v <= hi;
 * doubles also not NaN). RG_ERR_FORMAT "run attribute 'batch' is missing" / "... is a string, expected an
 * integer" / "... = 0 is outside 1..4096" (prefix it with the checkpoint's path); *v unchanged on error. */
rg_status rg_run_state_get_int(const rg_run_state *rs, const char *key, int64_t lo, int64_t hi, int64_t *v);
rg_status rg_run_state_get_double(const rg_run_state *rs, const char *key, double lo, double hi, double *v);
rg_status rg_run_state_get_str(const rg_run_state *rs, const char *key, const char **v);
/* RG_ERR_ARG if rs is not consistent (counts out of range, an empty, too long or duplicate name, a name with '/',
 * an unknown attribute type, a string value not NUL-terminated): checked by rg_checkpoint_save before writing. */
rg_status rg_run_state_check(const rg_run_state *rs);
/* The RNG `name` into *out, or RG_ERR_FORMAT "run state has no RNG 'positions'" (*out = NULL). */
rg_status rg_run_state_get_rng(rg_run_state *rs, const char *name, rg_rng **out);

/* Writes a checkpoint of model m, optimizer opt (NULL: no moments are written) and run state rs (NULL: an empty
 * run state) to `path`. The file is built in memory (HDF5's core driver), its digest block filled in, then written
 * with rg_atomic_write: "<path>.tmp.<pid>" in the same folder, fsync'ed, renamed over `path`, folder fsync'ed;
 * stale "<path>.tmp.<pid>" files of dead processes are removed first. On any failure the temporary file is removed
 * and an existing file at `path` is left as it was; a partial file never appears under `path`. Errors: RG_ERR_ARG
 * (m NULL, opt for a different number of parameters, a bad RNG or attribute name), RG_ERR_IO (folder missing or not
 * writable, write/fsync/rename failure, disk full: strerror's text included), RG_ERR_NOMEM (also: HDF5 failed to
 * build the file in memory). */
rg_status rg_checkpoint_save(const char *path, const rg_model *m, const rg_adamw *opt, const rg_run_state *rs);

/* Reads the checkpoint at `path` into model m (parameters), opt (moments, step and beta1/beta2/eps/weight_decay,
 * which replace the optimizer's own, as torch's load_state_dict does; NULL: moments are not read) and rs (NULL:
 * not returned; otherwise *rs is replaced by the file's run state).
 * Everything is validated and read into temporary buffers before anything is written: on any error m, opt and rs
 * are unchanged. Checks, in order: the file opens and is HDF5 (RG_ERR_IO if missing or locked, RG_ERR_FORMAT if
 * empty, truncated or not HDF5); root `format` and `format_version` (RG_ERR_FORMAT); every /config attribute equals
 * m->cfg, with rotary_dim 0 read as head_dim and rope_orig_len 0 as max_len (RG_ERR_ARG naming the key and both
 * values; RoPE extension settings included: change them on the model after loading, the model reads them at every
 * forward); every parameter has a dataset /params/<name> (RG_ERR_FORMAT "missing dataset"), of the parameter's
 * shape (RG_ERR_SHAPE naming the dataset and both shapes) and float type of the build (RG_ERR_FORMAT naming the
 * dtype, e.g. float64); no other dataset under /params (RG_ERR_FORMAT "unknown dataset"); with opt, the same for
 * /optim/exp_avg and /optim/exp_avg_sq (RG_ERR_FORMAT if the file has no optimizer state); the run state (RNGs
 * uint64 [2] with an odd increment; /rng and /run must exist). Values: weights and moments finite, exp_avg_sq >= 0,
 * the ranges listed at the top (RG_ERR_FORMAT naming the attribute or dataset, the value and the range); /config
 * passes rg_model_config_validate. Each parameter's version is bumped after the copy. */
rg_status rg_checkpoint_load(const char *path, rg_model *m, rg_adamw *opt, rg_run_state *rs);

/* Reads only /config (into *cfg, the values as stored: rotary_dim and rope_orig_len resolved) and, if rs is not
 * NULL, the run state, so that a caller can build the matching model (rg_model_new) before rg_checkpoint_load.
 * Same file checks and errors as rg_checkpoint_load; *cfg and *rs are unchanged on error. */
rg_status rg_checkpoint_read_config(const char *path, rg_model_config *cfg, rg_run_state *rs);

/* Reads only the run state (step, schedule, RNGs, /run attributes) without /config, so that a caller can read what
 * a checkpoint says about itself when its config cannot be read here (an encoding this program has not registered:
 * train_order names the plugin a checkpoint records). Same file checks and errors as rg_checkpoint_read_config but
 * none of /config's; *rs unchanged on error. */
rg_status rg_checkpoint_read_run(const char *path, rg_run_state *rs);

/* Recomputes the digest block of the checkpoint at `path` after an edit made on purpose (h5py, h5repack, ...), so
 * that rg_checkpoint_load accepts it again if it passes validation; a file without a user block (written before
 * digests existed, or written by another program) gets one. The file is first parsed by the reader process (a file that
 * crashes or hangs HDF5 is refused: RG_ERR_FORMAT) and must open as HDF5; it is replaced atomically. Errors as
 * rg_checkpoint_load's file checks and rg_atomic_write's. */
rg_status rg_checkpoint_seal(const char *path);

/* The learning rate of the run state's schedule for its next step: rg_lr_schedule(rs->lr.step, peak, warmup, total,
 * min_frac), min_frac * peak past the schedule's total. Pass it as rg_step_config.lr (with rg_trainer_track, the
 * step advances rs->lr.step). */
double rg_run_state_lr(const rg_run_state *rs);

/* Reloads a checkpoint in one call, for evaluation or for training on: reads /config (rg_checkpoint_read_config),
 * builds the model (rg_model_new_within with rg_checkpoint_max_params(): a /config whose tables (max_len,
 * learned_2d_max_rows, t5_2d_num_buckets, ...) would make more parameters is RG_ERR_FORMAT naming the file and the
 * parameter, before that table is allocated), and loads the parameters (rg_checkpoint_load); with opt != NULL also
 * the AdamW moments, step and settings (opt is initialized here: rg_adamw_free it), with rs != NULL the run state
 * (step, lr schedule, RNGs, attributes). *m is the new model (rg_model_free it); on any error *m is NULL, opt is
 * zeroed and nothing needs freeing. Errors: those of rg_checkpoint_read_config, rg_model_new, rg_adamw_init and
 * rg_checkpoint_load, messages naming the file. A training loop goes on with
 *     rg_checkpoint_open(path, &m, &opt, &rs); rg_trainer_track(&tr, &rs); ... cfg.lr = rg_run_state_lr(&rs); */
rg_status rg_checkpoint_open(const char *path, rg_model **m, rg_adamw *opt, rg_run_state *rs);

/* Test hook (tests only): the atomic write's hook (atomic.h), under its old name. */
#define rg_checkpoint_test_hook_before_rename rg_atomic_test_hook_before_rename

#endif
