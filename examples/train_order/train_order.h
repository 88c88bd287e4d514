/* train_order.h: the length-extrapolation experiment (issue 7): options, one run (train + evaluate), results and
 * the report. A run is one (task, position encoding, seed); its results are one row per evaluated variant (the
 * encoding, plus each RoPE extension for the RoPE encodings) and one cell per test length. */
#ifndef TRAIN_ORDER_H
#define TRAIN_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "ropegrad.h"
#include "io/checkpoint.h"
#include "task/task.h"

#define TO_MAX_LENS 16
#define TO_MAX_EXTS 4
#define TO_PATH 1024
#define TO_MAX_MICRO 16

typedef struct {
    bool tasks[RG_TASK_COUNT];
    bool pos[RG_POS_COUNT];
    int seeds;
    int steps, batch, train_len, warmup;
    double lr, min_lr_frac, weight_decay, clip, beta1, beta2, eps;
    int test_lens[TO_MAX_LENS], n_test_lens;
    rg_rope_ext exts[TO_MAX_EXTS];
    int n_exts;
    bool random_positions;
    int max_position;          /* random positions are drawn from [0, max_position) */
    int threads, jobs;
    int micro_batches;         /* length-sorted micro-batches per batch (same samples and loss, less padding) */
    int ckpt_every;            /* steps between checkpoints (the last step always saves) */
    char out[TO_PATH];
    char resume[TO_PATH];
    char eval[TO_PATH];
    char data[TO_PATH];
    bool quiet;
    rg_model_config model;     /* the reference model; pos set per run */
} to_options;

/* One evaluated variant of a run: cells per test length. NaN where the length cannot be evaluated (a position past
 * the learned table). */
typedef struct {
    rg_task task;
    rg_pos_kind pos;
    rg_rope_ext ext;           /* RG_ROPE_EXT_NONE for the encoding itself */
    int seed;
    int n_lens;
    int lens[TO_MAX_LENS];
    double exact[TO_MAX_LENS], token_acc[TO_MAX_LENS];
    double final_loss, train_seconds;
    int64_t steps;
} to_result;

/* For --resume / --eval: replaces o's training settings (train_len, lr, warmup, steps unless steps_given,
 * min_lr_frac, clip, batch, random positions, micro-batches) by the checkpoint's, so that the run continues as it
 * was started and the report describes it. Returns 0, or -1 with a message. */
int to_options_from_checkpoint(to_options *o, const char *ckpt, bool steps_given);

/* Trains (or resumes, or only evaluates) one run and writes its variants to res (up to 1 + TO_MAX_EXTS); returns
 * the number written, or -1 with a message on stderr. */
int to_run(const to_options *o, rg_task task, rg_pos_kind pos, int seed, const char *resume_from, bool eval_only,
           to_result *res);

/* Greedy decoding of an evaluation set with the KV cache: for each sample the prompt BOS x SEP, then n+1 argmax
 * tokens (ties to the lowest id, no early stop). Writes exact_match and token_acc. RG_ERR_ARG when a position
 * passes the learned table. */
rg_status to_evaluate(rg_model *m, const rg_evalset *es, double *exact, double *token_acc);

/* Writes report.md, report.csv, report.json and extrapolation.svg (gnuplot) into o->out. Returns 0 or -1. */
int to_write_report(const to_options *o, const to_result *res, int n_res, double wall_seconds, const char *command);

/* Results of a run in a small text file (one line per variant) so parallel jobs can hand them to the parent. */
int to_result_save(const char *path, const to_result *res, int n);
int to_result_load(const char *path, to_result *res, int max);

#endif
