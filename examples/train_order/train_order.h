/* train_order.h: the length-extrapolation experiment (issue 7): options, one run (train + evaluate), results and
 * the report. A run is one (task, position encoding, seed); its results are one row per evaluated variant (the
 * encoding, plus each RoPE extension for the RoPE encodings) and one cell per test length.
 *
 * Files of the program: main.c (defaults -> parse -> check -> build -> run -> free), settings.c (the table of every
 * option: usage, parsing, --config JSON, --print-config, the checkpoint's /run group), lists.c (the list-valued
 * options), options.c (the checks before anything is built), outdir.c (the output folder: lock, refusal of another
 * invocation's results), pool.c (the job pool: one process and one pipe per run), run.c (one run), report.c (the
 * report). */
#ifndef TRAIN_ORDER_H
#define TRAIN_ORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ropegrad.h"
#include "io/checkpoint.h"
#include "task/task.h"

#define TO_MAX_LENS 16
#define TO_MAX_EXTS 4
#define TO_PATH 1024
#define TO_MAX_MICRO 16
#define TO_MAX_SEEDS 1000
#define TO_MAX_STEPS 100000000
#define TO_EVAL_FILE "data/eval_sets.h5" /* the canonical evaluation sets, in the repository */
#define TO_MAX_PARAMS 1e8      /* the largest model train_order builds (400 MB of float32, 1.2 GB with AdamW) */
#define TO_MAX_TEST_N 999      /* longest test n: streams 1000 * task + n stay distinct per (task, n) */

/* What a resume does with the learning-rate schedule (--lr-schedule). */
typedef enum {
    TO_LR_CONTINUE = 0,   /* the checkpoint's schedule goes on (PyTorch's restored scheduler state); steps past its
                             end run at the final rate min_lr_frac * lr */
    TO_LR_RESTART = 1     /* a new warmup + cosine schedule from the resume step to --steps */
} to_lr_mode;

typedef struct {
    bool tasks[RG_TASK_COUNT];
    bool pos[RG_POS_COUNT];
    int seed_list[TO_MAX_SEEDS], n_seeds;  /* --seed S, or --seeds N (1..N) or a list */
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
    int log_every;             /* steps between rows of runs/<run>/train.csv */
    int lr_start;              /* the step the learning-rate schedule starts from (0; the resume step on restart) */
    int lr_total;              /* the schedule's last step (steps, unless a resume continues a shorter schedule) */
    to_lr_mode lr_mode;
    char out[TO_PATH];
    char resume[TO_PATH];
    char eval[TO_PATH];
    char data[TO_PATH];
    char config[TO_PATH];
    bool quiet, overwrite, print_config;
    bool steps_given;          /* --steps on the command line or in --config */
    bool data_parallel;        /* --data-parallel: every MPI rank computes a share of each batch (mpi.h) */
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
    bool generated[TO_MAX_LENS]; /* the evaluation set of lens[i] was generated (not in the data file) */
} to_result;

/* ------------------------------------------------------------------ lists.c: list-valued options */

/* Parsers of the flags' text (modified in place; 0, or -1 when a value is outside the allowed ones) and printers
 * back to that text. */
int to_parse_task(to_options *o, char *v);        /* copy | reverse | sort | all, or a comma list */
int to_parse_pos(to_options *o, char *v);         /* encodings, or all */
int to_parse_seed(to_options *o, char *v);        /* one seed 1..1000000 */
int to_parse_seeds(to_options *o, char *v);       /* N (1..N) or a comma list of distinct seeds */
int to_parse_test_lens(to_options *o, char *v);   /* up to 16 distinct lengths 1..TO_MAX_TEST_N */
int to_parse_rope_ext(to_options *o, char *v);    /* pi,ntk,yarn,llama3 | all | none */
int to_parse_lr_schedule(to_options *o, char *v); /* continue | restart */
void to_print_task(const to_options *o, char *b, size_t n);
void to_print_pos(const to_options *o, char *b, size_t n);
void to_print_seeds(const to_options *o, char *b, size_t n);
void to_print_test_lens(const to_options *o, char *b, size_t n);
void to_print_rope_ext(const to_options *o, char *b, size_t n);
void to_print_lr_schedule(const to_options *o, char *b, size_t n);

/* ------------------------------------------------------------------ settings.c: the option table */

/* Defaults of every option. */
void to_options_default(to_options *o);
/* Parses the command line into o (after to_options_default): --config FILE first, then the flags, which win.
 * Exact option names only (an abbreviation is refused); an option that does not apply to the mode (--lr with
 * --eval) is refused. Exits 2 with a message on a bad command line. */
void to_options_parse(int argc, char **argv, to_options *o);
/* Prints the resolved settings as JSON (the format --config reads). */
void to_options_print(const to_options *o, FILE *f);
/* The same JSON text, malloc'ed (free it), for the report (report.md / report.json); NULL when out of memory. */
char *to_options_json(const to_options *o);
/* Writes the settings that a resume must reuse into the run state's /run group (one loop over the table). */
int to_settings_to_run(const to_options *o, rg_run_state *rs);
/* Reads the training settings of checkpoint ckpt (its config, /optim schedule and /run group) into o, each
 * validated against the limits of its flag; a missing or wrongly typed value is an error naming the checkpoint.
 * Exits 2 with a message naming the checkpoint and the value. */
void to_settings_from_checkpoint(to_options *o, const char *ckpt, const rg_model_config *cfg, const rg_run_state *rs);
/* The optimizer settings a checkpoint loaded into opt (beta1, beta2, eps, weight_decay), checked against the limits
 * of their flags. 0, or -1 with a message naming the checkpoint. */
int to_settings_check_optim(const rg_adamw *opt, const char *ckpt);

/* ------------------------------------------------------------------ options.c: the checks */

/* Everything that can be checked before anything is built: modes, paths, the checkpoint's settings, the model
 * config, the data file. Exits 2 with a message when the command line (or the checkpoint it names) is unusable. */
void to_options_check(to_options *o);
/* The message helper for usage errors: "train_order: <what>\n  allowed: <allowed>", exit 2. */
_Noreturn void to_usage_error(const char *allowed, const char *fmt, ...);

/* ------------------------------------------------------------------ outdir.c: the output folder */

/* Creates o->out (mkdir -p), takes its lock (flock on <out>/.train_order.lock, held until exit) and refuses a
 * folder that already holds files unless o->overwrite. Returns the lock's descriptor, or -1 with a message. */
int to_outdir_claim(const to_options *o);
/* mkdir -p path. 0 or -1 with a message. */
int to_make_dir(const char *path);

/* ------------------------------------------------------------------ pool.c: the job pool */

typedef struct { rg_task task; rg_pos_kind pos; int seed; } to_job;

/* Runs the jobs, at most o->jobs processes at a time; each child hands its results back through its own pipe.
 * After each finished job, on_partial (if not NULL) is called with the results so far. Writes the results into
 * all (room for n_jobs * (1 + TO_MAX_EXTS)) and their count into *n_all; returns the number of failed jobs. */
int to_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx);

/* ------------------------------------------------------------------ run.c: one run */

double to_now_seconds(void);

/* The evaluation set of (task, n): the lengths of the canonical file (rg_eval_lengths) are read from o->data, any
 * other length is generated in memory by the same generator and seed rule (rg_evalset_make: RG_EVAL_SEED, stream
 * 1000 * task + n, RG_EVAL_COUNT samples), which reproduces the file's sets exactly; *generated tells which. */
rg_status to_evalset_get(const to_options *o, rg_task task, int n, rg_evalset *es, bool *generated);

/* Trains (or resumes, or only evaluates) one run and writes its variants to res (up to 1 + TO_MAX_EXTS); returns
 * the number written, or -1 with a message on stderr. With o->resume or o->eval set, task, pos and seed come from
 * that checkpoint. */
int to_run(const to_options *o, rg_task task, rg_pos_kind pos, int seed, to_result *res);

/* ------------------------------------------------------------------ report.c */

/* Writes report.md, report.csv, report.json and extrapolation.svg (gnuplot) into o->out. Returns 0 or -1. */
int to_write_report(const to_options *o, const to_result *res, int n_res, double wall_seconds, const char *command);

/* Results of a run in a small text file (one line per variant). No longer used by the pool (pipes). */
int to_result_save(const char *path, const to_result *res, int n);
int to_result_load(const char *path, to_result *res, int max);

#endif
