/* types.h: the records every layer of the engine passes: the settings of an invocation (eng_options), one
 * evaluated variant of a run (eng_result: cells per test length, per-position counts, a grid task's image), one job
 * of the grid (eng_job), and the limits they are sized by. A run is one (task, position encoding, training variant,
 * seed); its results are one row per evaluated variant (the encoding, plus each RoPE extension for the rotary
 * encodings) and one cell per test length. The file map is in engine.h. */
#ifndef ENG_BASE_TYPES_H
#define ENG_BASE_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ropegrad.h"
#include "io/checkpoint.h"
#include "task/task.h"

#define ENG_MAX_LENS 32          /* test lengths per run (the default set of --train-len 32 has 21) */
/* Per-position accounting (protocol.c): for a test length n the output has n+1 positions (y_1..y_n,
 * then EOS at position n+1); they are counted for n + 1 <= ENG_POS_MAX, longer lengths keep exact match and token
 * accuracy only (4 x --train-len 32 = 128 fits). */
#define ENG_POS_MAX 129
/* Extrapolation over training (run_curves.c): every --extrap-every steps a run measures exact match and token
 * accuracy on the first ENG_CURVE_COUNT samples of the evaluation set of every test length (runs/<run>/extrap.csv). */
#define ENG_CURVE_COUNT 32
/* T5's max_distance of the variant row t5max128 (the engine's earlier setting: 32 buckets, max_distance 128, so
 * buckets past the training distances were never trained); the default (--t5-max-distance 0) is 2 train_len + 1,
 * the longest distance in training, so that every longer distance falls into the last, trained bucket. */
#define ENG_T5_LEGACY_MAX_DISTANCE 128
#define ENG_GRID_SIDE 9       /* RG_GRID_MAX_SIDE: the grid image's rows and columns */
#define ENG_GRID_CELLS (ENG_GRID_SIDE * ENG_GRID_SIDE)
#define ENG_MAX_EXTS 8
#define ENG_PATH 1024
#define ENG_MAX_MICRO 16
#define ENG_MAX_SEEDS 1000
#define ENG_MAX_STEPS 100000000
#define ENG_EVAL_FILE "data/eval_sets.h5" /* the canonical evaluation sets, in the repository */
#define ENG_MAX_PARAMS 1e8      /* the largest model train_order builds (400 MB of float32, 1.2 GB with AdamW) */
#define ENG_MAX_TEST_N 999      /* longest test n: streams 1000 * task + n stay distinct per (task, n) */
/* Steps-to-learn: every --eval-every steps a run measures exact match on a held-out set of
 * ENG_HELDOUT_COUNT samples at each of up to 4 lengths n <= train_len (train_len/4, /2, 3/4 rounded up, and
 * train_len), drawn with rg_task_sample from PCG32 seed ENG_HELDOUT_SEED, stream 1000 * task + n: not the test
 * sets' seed (RG_EVAL_SEED) nor the training streams. The first step with exact match >= ENG_LEARNED_EXACT over the
 * whole set is the run's steps_to_learn. */
#define ENG_HELDOUT_SEED 0x686f6c646f7574ULL
#define ENG_HELDOUT_COUNT 64
#define ENG_HELDOUT_LENS 4
#define ENG_LEARNED_EXACT 0.99

/* The training variants of a run (--variants): the encoding as configured; RoPE with rope_theta
 * ENG_THETA_500K (Llama 3's base; the rotary encodings only); randomized positions (Ruoss et al. 2023; every encoding
 * that reads positions, i.e. all but none); the max_distance_setting at ENG_T5_LEGACY_MAX_DISTANCE (t5max128; T5);
 * RoPE with bf16 angles and tables (bf16angles, rg_model_config.rope_bf16_angles; the rotary encodings only; issue
 * 22's ablation). Which encoding takes which variant is its descriptor's answer (eng_variant_applies). A variant is part of a result's identity: its label is in every table, CSV, JSON, plot and
 * comparison. */
typedef enum {
    ENG_VAR_BASE = 0, ENG_VAR_THETA500K, ENG_VAR_RAND, ENG_VAR_T5MAX128, ENG_VAR_BF16ANGLES, ENG_VAR_COUNT
} eng_variant;
#define ENG_THETA_500K 500000.0

/* One model size of the grid (--sizes, docs/experiment.md "A model-size axis"): d_model, n_layers, and the heads and
 * MLP width (0 in a parsed item that did not give them: eng_options_check fills in --n-heads and 4 d_model). text
 * is the item as the report names it: "128x4", "128x4h8", "128x4h8f256" (h and f only when the item gave them). */
#define ENG_MAX_SIZES 16
#define ENG_SIZE_TEXT 32
typedef struct {
    int d_model, n_layers, n_heads, d_ff;
    char text[ENG_SIZE_TEXT];
} eng_size;

/* What a resume does with the learning-rate schedule (--lr-schedule). */
typedef enum {
    ENG_LR_CONTINUE = 0,   /* the checkpoint's schedule goes on (PyTorch's restored scheduler state); steps past its
                             end run at the final rate min_lr_frac * lr */
    ENG_LR_RESTART = 1     /* a new warmup + cosine schedule from the resume step to --steps */
} eng_lr_mode;

typedef struct {
    bool tasks[RG_TASK_MAX];
    bool pos[RG_POS_MAX];           /* by registry id (pos.h), 0 .. rg_pos_count() - 1 */
    int seed_list[ENG_MAX_SEEDS], n_seeds;  /* --seed S, or --seeds N (1..N) or a list */
    int steps, batch, train_len, warmup;
    double lr, min_lr_frac, weight_decay, clip, beta1, beta2, eps;
    int test_lens[ENG_MAX_LENS], n_test_lens;
    rg_rope_ext exts[ENG_MAX_EXTS];
    double ext_factor[ENG_MAX_EXTS]; /* 0: s = (2n+3)/(2 train_len+3) per test length; else this fixed factor (HF) */
    int n_exts;
    bool variants[ENG_VAR_COUNT];    /* the training variants of the grid (--variants) */
    bool random_positions;
    bool fair_max_distance;         /* the encodings' max_distance_setting follows the tasks' longest training
                                     * distance (not given: eng_set_fair_max_distance) */
    int max_position;          /* random positions are drawn from [0, max_position) */
    int threads, jobs;
    rg_precision precision;    /* --precision: Linear's products fp32 (default) or bf16 (rg_set_linear_precision) */
    int micro_batches;         /* length-sorted micro-batches per batch (same samples and loss, less padding) */
    int ckpt_every;            /* steps between checkpoints (the last step always saves) */
    int log_every;             /* steps between rows of runs/<run>/train.csv */
    int eval_every;            /* steps between held-out measurements (runs/<run>/eval.csv); 0: none */
    int extrap_every;          /* steps between measurements at every test length (runs/<run>/extrap.csv); 0: none */
    int lr_start;              /* the step the learning-rate schedule starts from (0; the resume step on restart) */
    int lr_total;              /* the schedule's last step (steps, unless a resume continues a shorter schedule) */
    eng_lr_mode lr_mode;
    char out[ENG_PATH];
    char resume[ENG_PATH];
    char eval[ENG_PATH];
    char data[ENG_PATH];
    char config[ENG_PATH];
    char replot[ENG_PATH];      /* --replot CSV: re-draw a report's plots into out, nothing trained */
    char compare[2][ENG_PATH];  /* --compare A B: print the cell-by-cell comparison of two reports */
    char combine[ENG_PATH];     /* --combine A,B,...: one report in out from reports of one grid's blocks of seeds */
    char cont[ENG_PATH];        /* --continue OUT: the interrupted invocation whose folder is OUT (continue.c) */
    bool continuing;           /* these are the settings of OUT read by --continue (cont is then "") */
    char check_pos[ENG_PATH];   /* --check-pos NAME: the encoding's conformance check (pos_conformance.h), no run */
    bool quiet, overwrite, print_config;
    bool steps_given;          /* --steps on the command line or in --config */
    bool data_parallel;        /* --data-parallel: every MPI rank computes a share of each batch (mpi_transport.h) */
    rg_model_config model;     /* the reference model; pos set per run */
    /* --sizes: the model sizes of the grid (each run's d_model, n_layers, n_heads, d_ff), n_sizes 0 without it (the
     * one implicit size of model: no size in names and outputs). A run's own options (eng_run_options) and a
     * checkpoint's hold its one size. */
    eng_size sizes[ENG_MAX_SIZES];
    int n_sizes;
} eng_options;

/* One evaluated variant of a run: cells per test length. NaN where the length cannot be evaluated (a position past
 * the learned table). */
typedef struct {
    rg_task task;
    rg_pos_kind pos;
    eng_variant variant;        /* how it was trained (eng_variant_of its settings) */
    rg_rope_ext ext;           /* RG_ROPE_EXT_NONE for the encoding itself */
    double ext_factor;         /* 0: per test length s; else the fixed factor */
    int seed;
    /* The run's model size when the grid has a size axis (--sizes, or a checkpoint of such a run): its text
     * ("128x4") and numbers; size "" and zeros otherwise (every output then as without the axis). params: the
     * model's parameter count (rg_params_numel; 0 when not known, a report read back without it). */
    char size[ENG_SIZE_TEXT];
    int d_model, n_layers, n_heads, d_ff;
    int64_t params;
    int n_lens;
    int lens[ENG_MAX_LENS];
    double exact[ENG_MAX_LENS], token_acc[ENG_MAX_LENS];
    double final_loss, train_seconds;
    int64_t steps;
    int64_t steps_to_learn;    /* the first step with held-out exact match >= ENG_LEARNED_EXACT; -1 not reached
                                  within `steps`; 0 not measured (--eval-every 0, --eval, older reports) */
    bool generated[ENG_MAX_LENS]; /* the evaluation set of lens[i] was generated (not in the data file) */
    /* Per-position accounting of lens[i] = n (protocol.c), when pos_count[i] > 0 (n + 1 <= ENG_POS_MAX): of the
     * pos_count[i] samples, pos_right[i][p] had output position p+1 right (p = 0..n, p = n the EOS), and
     * first_wrong[i][p] had their first wrong token at position p+1; first_wrong[i][n+1] were all right. */
    int pos_count[ENG_MAX_LENS];
    uint16_t pos_right[ENG_MAX_LENS][ENG_POS_MAX];
    uint16_t first_wrong[ENG_MAX_LENS][ENG_POS_MAX + 1];
    /* Grid tasks (report_grid.c): the grid image of lens[i], cell (row, col) at row * ENG_GRID_SIDE + col: of the
     * cell_count tokens expected there (a cell's symbol or background, over the samples; run.c), cell_right were
     * generated right. Zero for a 1-D task and in a report read back (report.csv does not hold them). */
    uint16_t cell_count[ENG_MAX_LENS][ENG_GRID_CELLS];
    uint16_t cell_right[ENG_MAX_LENS][ENG_GRID_CELLS];
    /* The folder holding this run's logs (runs_dir/<run>/train.csv, extrap.csv) when it is not the report's own
     * <out>/runs: a block's runs/ read by --combine (combine.c owns the string), "" for a combined run without
     * logs (never read from --out's runs/); NULL otherwise. */
    const char *runs_dir;
} eng_result;

/* One run of the grid: a task, an encoding, a training variant, a seed, and its model size (size: 1 + its index
 * in eng_options.sizes; 0 without --sizes, the scalar flags' model). */
typedef struct { rg_task task; rg_pos_kind pos; eng_variant variant; int seed; int size; } eng_job;

#endif
