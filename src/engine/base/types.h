/* train_order.h: the length-extrapolation experiment (issue 7): options, one run (train + evaluate), results and
 * the report. A run is one (task, position encoding, seed); its results are one row per evaluated variant (the
 * encoding, plus each RoPE extension for the RoPE encodings) and one cell per test length.
 *
 * Files of the program: main.c (defaults -> parse -> check -> build -> run -> free), settings.c (the table of every
 * option: usage, parsing, --config JSON, --print-config; its rows in settings.h), settings_run.c (the checkpoint's
 * /run group, read and written through the table), lists.c (the list-valued
 * options), options.c (the checks before anything is built), outdir.c (the output folder: lock, refusal of another
 * invocation's results), pool.c (the job pool: one process and one pipe per run), run.c (one run); the report in
 * report.h (report.c, stats.c, plot.c, compare.c). */
#ifndef TRAIN_ORDER_H
#define TRAIN_ORDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ropegrad.h"
#include "io/checkpoint.h"
#include "task/task.h"

#define TO_MAX_LENS 32          /* test lengths per run (the default set of --train-len 32 has 21) */
/* Per-position accounting (issue 20 §3; protocol.c): for a test length n the output has n+1 positions (y_1..y_n,
 * then EOS at position n+1); they are counted for n + 1 <= TO_POS_MAX, longer lengths keep exact match and token
 * accuracy only (4 x --train-len 32 = 128 fits). */
#define TO_POS_MAX 129
/* Extrapolation over training (issue 20 §1): every --extrap-every steps a run measures exact match and token
 * accuracy on the first TO_CURVE_COUNT samples of the evaluation set of every test length (runs/<run>/extrap.csv). */
#define TO_CURVE_COUNT 32
/* T5's max_distance of the variant row t5max128 (the setting before issue 20: 32 buckets, max_distance 128, so
 * buckets past the training distances were never trained); the default (--t5-max-distance 0) is 2 train_len + 1,
 * the longest distance in training, so that every longer distance falls into the last, trained bucket. */
#define TO_T5_LEGACY_MAX_DISTANCE 128
#define TO_GRID_SIDE 9       /* RG_GRID_MAX_SIDE: the grid image's rows and columns */
#define TO_GRID_CELLS (TO_GRID_SIDE * TO_GRID_SIDE)
#define TO_MAX_EXTS 8
#define TO_PATH 1024
#define TO_MAX_MICRO 16
#define TO_MAX_SEEDS 1000
#define TO_MAX_STEPS 100000000
#define TO_EVAL_FILE "data/eval_sets.h5" /* the canonical evaluation sets, in the repository */
#define TO_MAX_PARAMS 1e8      /* the largest model train_order builds (400 MB of float32, 1.2 GB with AdamW) */
#define TO_MAX_TEST_N 999      /* longest test n: streams 1000 * task + n stay distinct per (task, n) */
/* Steps-to-learn (issue 15 §5): every --eval-every steps a run measures exact match on a held-out set of
 * TO_HELDOUT_COUNT samples at each of up to 4 lengths n <= train_len (train_len/4, /2, 3/4 rounded up, and
 * train_len), drawn with rg_task_sample from PCG32 seed TO_HELDOUT_SEED, stream 1000 * task + n: not the test
 * sets' seed (RG_EVAL_SEED) nor the training streams. The first step with exact match >= TO_LEARNED_EXACT over the
 * whole set is the run's steps_to_learn. */
#define TO_HELDOUT_SEED 0x686f6c646f7574ULL
#define TO_HELDOUT_COUNT 64
#define TO_HELDOUT_LENS 4
#define TO_LEARNED_EXACT 0.99

/* The training variants of a run (--variants; issue 15): the encoding as configured; RoPE with rope_theta
 * TO_THETA_500K (Llama 3's base; the rotary encodings only); randomized positions (Ruoss et al. 2023; every encoding
 * that reads positions, i.e. all but none); the max_distance_setting at TO_T5_LEGACY_MAX_DISTANCE (t5max128; T5);
 * RoPE with bf16 angles and tables (bf16angles, rg_model_config.rope_bf16_angles; the rotary encodings only; issue
 * 22's ablation). Which encoding takes which variant is its descriptor's answer (to_variant_applies). A variant is part of a result's identity: its label is in every table, CSV, JSON, plot and
 * comparison. */
typedef enum {
    TO_VAR_BASE = 0, TO_VAR_THETA500K, TO_VAR_RAND, TO_VAR_T5MAX128, TO_VAR_BF16ANGLES, TO_VAR_COUNT
} to_variant;
#define TO_THETA_500K 500000.0

/* What a resume does with the learning-rate schedule (--lr-schedule). */
typedef enum {
    TO_LR_CONTINUE = 0,   /* the checkpoint's schedule goes on (PyTorch's restored scheduler state); steps past its
                             end run at the final rate min_lr_frac * lr */
    TO_LR_RESTART = 1     /* a new warmup + cosine schedule from the resume step to --steps */
} to_lr_mode;

typedef struct {
    bool tasks[RG_TASK_MAX];
    bool pos[RG_POS_MAX];           /* by registry id (pos.h), 0 .. rg_pos_count() - 1 */
    int seed_list[TO_MAX_SEEDS], n_seeds;  /* --seed S, or --seeds N (1..N) or a list */
    int steps, batch, train_len, warmup;
    double lr, min_lr_frac, weight_decay, clip, beta1, beta2, eps;
    int test_lens[TO_MAX_LENS], n_test_lens;
    rg_rope_ext exts[TO_MAX_EXTS];
    double ext_factor[TO_MAX_EXTS]; /* 0: s = (2n+3)/(2 train_len+3) per test length; else this fixed factor (HF) */
    int n_exts;
    bool variants[TO_VAR_COUNT];    /* the training variants of the grid (--variants) */
    bool random_positions;
    bool fair_max_distance;         /* the encodings' max_distance_setting follows the tasks' longest training
                                     * distance (not given: to_set_fair_max_distance) */
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
    to_lr_mode lr_mode;
    char out[TO_PATH];
    char resume[TO_PATH];
    char eval[TO_PATH];
    char data[TO_PATH];
    char config[TO_PATH];
    char replot[TO_PATH];      /* --replot CSV: re-draw a report's plots into out, nothing trained */
    char compare[2][TO_PATH];  /* --compare A B: print the cell-by-cell comparison of two reports */
    char combine[TO_PATH];     /* --combine A,B,...: one report in out from reports of one grid's blocks of seeds */
    char cont[TO_PATH];        /* --continue OUT: the interrupted invocation whose folder is OUT (continue.c) */
    bool continuing;           /* these are the settings of OUT read by --continue (cont is then "") */
    char check_pos[TO_PATH];   /* --check-pos NAME: the encoding's conformance check (pos_conformance.h), no run */
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
    to_variant variant;        /* how it was trained (to_variant_of its settings) */
    rg_rope_ext ext;           /* RG_ROPE_EXT_NONE for the encoding itself */
    double ext_factor;         /* 0: per test length s; else the fixed factor */
    int seed;
    int n_lens;
    int lens[TO_MAX_LENS];
    double exact[TO_MAX_LENS], token_acc[TO_MAX_LENS];
    double final_loss, train_seconds;
    int64_t steps;
    int64_t steps_to_learn;    /* the first step with held-out exact match >= TO_LEARNED_EXACT; -1 not reached
                                  within `steps`; 0 not measured (--eval-every 0, --eval, older reports) */
    bool generated[TO_MAX_LENS]; /* the evaluation set of lens[i] was generated (not in the data file) */
    /* Per-position accounting of lens[i] = n (protocol.c), when pos_count[i] > 0 (n + 1 <= TO_POS_MAX): of the
     * pos_count[i] samples, pos_right[i][p] had output position p+1 right (p = 0..n, p = n the EOS), and
     * first_wrong[i][p] had their first wrong token at position p+1; first_wrong[i][n+1] were all right. */
    int pos_count[TO_MAX_LENS];
    uint16_t pos_right[TO_MAX_LENS][TO_POS_MAX];
    uint16_t first_wrong[TO_MAX_LENS][TO_POS_MAX + 1];
    /* Grid tasks (report_grid.c): the grid image of lens[i], cell (row, col) at row * TO_GRID_SIDE + col: of the
     * cell_count tokens expected there (a cell's symbol or background, over the samples; run.c), cell_right were
     * generated right. Zero for a 1-D task and in a report read back (report.csv does not hold them). */
    uint16_t cell_count[TO_MAX_LENS][TO_GRID_CELLS];
    uint16_t cell_right[TO_MAX_LENS][TO_GRID_CELLS];
    /* The folder holding this run's logs (runs_dir/<run>/train.csv, extrap.csv) when it is not the report's own
     * <out>/runs: a block's runs/ read by --combine (combine.c owns the string), "" for a combined run without
     * logs (never read from --out's runs/); NULL otherwise. */
    const char *runs_dir;
} to_result;

/* ------------------------------------------------------------------ lists.c: list-valued options */

/* Parsers of the flags' text (modified in place; 0, or -1 when a value is outside the allowed ones) and printers
 * back to that text. */
int to_parse_task(to_options *o, char *v);        /* copy | reverse | sort | all, or a comma list */
int to_parse_pos(to_options *o, char *v);         /* encodings, or all */
int to_parse_pos_config(to_options *o, char *v);
/* The allowed values of --task (tasks true) or --pos: every registered name (built-in, the program's, plugins'). */
void to_allowed_names(bool tasks, char *b, size_t n);
int to_parse_plugin(to_options *o, char *v);      /* a path to_plugins_load loaded (plugin_load.h) */
void to_print_plugin(const to_options *o, char *b, size_t n);  /* NAME=VALUE,... encoding settings into o->model */
int to_parse_seed(to_options *o, char *v);        /* one seed 1..1000000 */
int to_parse_seeds(to_options *o, char *v);       /* N (1..N) or a comma list of distinct seeds */
/* True if cfg holds a value of encoding setting `name` (set with --pos-config or read from a checkpoint), false
 * when it would read the declared default. */
bool to_pos_value_given(const rg_model_config *cfg, const char *name);
/* True if s is a decimal integer (an optional sign, then digits only: no 1e3, 0x10, spaces or fraction). */
bool to_is_decimal_int(const char *s);
int to_parse_test_lens(to_options *o, char *v);   /* up to TO_MAX_LENS distinct lengths 1..TO_MAX_TEST_N */
int to_parse_rope_ext(to_options *o, char *v);    /* pi,ntk,yarn,llama3 | all | none */
int to_parse_lr_schedule(to_options *o, char *v); /* continue | restart */
int to_parse_variants(to_options *o, char *v);    /* base,theta500k,rand,t5max128,bf16angles | all */
void to_print_task(const to_options *o, char *b, size_t n);
void to_print_pos(const to_options *o, char *b, size_t n);
/* NAME=VALUE,... the settings the selected encodings declare, resolved (rg_pos_config_get of o->model) */
void to_print_pos_config(const to_options *o, char *b, size_t n);
void to_print_seeds(const to_options *o, char *b, size_t n);
void to_print_test_lens(const to_options *o, char *b, size_t n);
void to_print_rope_ext(const to_options *o, char *b, size_t n);
void to_print_lr_schedule(const to_options *o, char *b, size_t n);
void to_print_variants(const to_options *o, char *b, size_t n);


/* --help's lists: every registered task and encoding with its summary or doc, the opt-in ones marked. */
void to_print_registries(FILE *f);

/* A test length's name in messages and reports: "n=16" (a 1-D task), "4x8" / "3x4x4" (a grid task's size). */
const char *to_size_label(rg_task task, int n, char *buf, size_t cap);

/* ------------------------------------------------------------------ protocol.c: the protocol's rules */

/* The default test lengths of training length L (issue 20 §2) into lens (room for TO_MAX_LENS); returns their
 * count: the in-distribution points L/2 (rounded up) and L, every n from L+1 to ceil(1.5 L) (the window where
 * encodings differ; at most TO_MAX_LENS - 5 of them), then 2L, 3L, 4L; lengths above TO_MAX_TEST_N dropped.
 * L = 16: 8,16,17..24,32,48,64 (13); L = 32: 16,32,33..48,64,96,128 (21). */
int to_default_test_lens(int L, int *lens);
/* The default test sizes of a grid task trained at size L (protocol.c; docs/grids.md): one frame: every H x W with
 * H, W in {ceil(s/2), s, s+1, ceil(1.5 s), 2 s} of the training sides s (at most 9): 4x4 gives 25 sizes 2..8 x 2..8
 * with 4x8, 8x4 and 8x8; frames F x H x W: F, F+1, 2F frames at H x W and 2H x 2W. Returns the count (0 when L is
 * not a size of the task). */
int to_default_grid_sizes(rg_task task, int L, int *lens);
/* The fair value of encoding pos's max_distance_setting (T5's max_distance) for the longest training distance d
 * (rg_task_longest_distance: 2 L + 1 for the ordering tasks): d, raised to the setting's lower limit and then to
 * the first value the encoding's validate accepts under cfg (T5: num_buckets / 2 + 1; below it every training
 * distance has its own exact bucket anyway). -1 for an encoding without a max_distance_setting. */
int to_fair_max_distance(const rg_model_config *cfg, rg_pos_kind pos, int d);
/* With o->fair_max_distance: sets encoding pos's max_distance_setting in o->model to the fair value of task's
 * longest training distance at o->train_len (a run's own task: to_run); nothing otherwise. */
void to_set_fair_max_distance(to_options *o, rg_task task, rg_pos_kind pos);
/* Per-position accounting of `count` greedy outputs gen [count, m] against want [count, m] (row-major; m = n + 1
 * output positions, EOS last): right[p] += rows with gen[.][p] == want[.][p]; first_wrong[p] += rows whose first
 * wrong position is p (0-based), first_wrong[m] += rows with every position right. right has m entries,
 * first_wrong m + 1; both are added to (zero them first). */
void to_position_count(const int32_t *gen, const int32_t *want, int count, int m, uint16_t *right,
                       uint16_t *first_wrong);

/* ------------------------------------------------------------------ settings.c: the option table */

/* Defaults of every option. */
void to_options_default(to_options *o);
/* Parses the command line into o (after to_options_default): --config FILE first, then the flags, which win.
 * Exact option names only (an abbreviation is refused); an option that does not apply to the mode (--lr with
 * --eval) is refused. Exits 2 with a message on a bad command line. */
void to_options_parse(int argc, char **argv, to_options *o);
/* Applies a JSON object of settings (the text --print-config writes, as a report's Settings hold it) to o, as
 * --config does; exits 2 with a message starting with src ("--combine FILE: settings") on an invalid one. */
void to_options_apply_config(to_options *o, const char *text, const char *src);
/* Prints the resolved settings as JSON (the format --config reads). */
void to_options_print(const to_options *o, FILE *f);
/* The same JSON text, malloc'ed (free it), for the report (report.md / report.json); NULL when out of memory. */
char *to_options_json(const to_options *o);
/* ------------------------------------------------------------------ settings_run.c: the checkpoint's /run group */
/* Writes the settings that a resume or --eval must reuse into the run state's /run group (one loop over the table):
 * the run's task (string) and seed, train_len, the training settings (integers). 0, or -1 (rg_last_error). */
int to_settings_to_run(const to_options *o, rg_task task, int seed, rg_run_state *rs);
/* Reads the settings of checkpoint ckpt (its /run group, /optim schedule and config) into o, each validated
 * against the limits of its flag: the /run rows of the table, among them the run's task (o->tasks, one), seed
 * (o->seed_list[0], n_seeds 1) and train_len. A missing or wrongly typed value is an error naming the checkpoint
 * (a file written before task, train_len and seed moved to /run is refused so). Exits 2 with a message naming the
 * checkpoint and the value. */
void to_settings_from_checkpoint(to_options *o, const char *ckpt, const rg_model_config *cfg, const rg_run_state *rs);
/* The same /run values (the table's /run rows and the evaluation settings test_lens, rope_scaling, eval_every,
 * extrap_every; the defaults for those a checkpoint written before they were stored lacks) into o, returning instead
 * of exiting: 0, or -1 with err = "/run KEY ... (allowed: ...)" (the caller names the file). Used by --continue and
 * rg_engine_run_settings. */
int to_settings_read_run(to_options *o, const rg_run_state *rs, char *err, size_t cap);
/* Where the settings of the last to_settings_from_checkpoint came from, one line of text for the report: the
 * checkpoint's keys, those the command line or --config gave, those the checkpoint lacks (defaults). "" when no
 * checkpoint was read. Returns buf. */
const char *to_settings_sources(char *buf, size_t cap);
/* The optimizer settings a checkpoint loaded into opt (beta1, beta2, eps, weight_decay), checked against the limits
 * of their flags. 0, or -1 with a message naming the checkpoint. */
int to_settings_check_optim(const rg_adamw *opt, const char *ckpt);

/* ------------------------------------------------------------------ options.c: the checks */

/* Everything that can be checked before anything is built: modes, paths, the checkpoint's settings, the model
 * config, the data file. Exits 2 with a message when the command line (or the checkpoint it names) is unusable. */
void to_options_check(to_options *o);

/* ------------------------------------------------------------------ outdir.c: the output folder */

/* Creates o->out (mkdir -p), takes its lock (flock on <out>/.train_order.lock, held until exit) and refuses a
 * folder that already holds results of another invocation (report.*, settings.json, ckpt/, runs/, the plots
 * extrapolation.*, curves_*, loss_*) unless o->overwrite. Returns the lock's descriptor; -2 (bad usage: exit 2) for
 * a folder holding results or a file named like the folder; -1 with a message otherwise (in use, cannot create). */
int to_outdir_claim(const to_options *o);
/* For --replot: refuses (-2, bad usage) an --out other than the CSV's own folder that holds results of another
 * report, unless o->overwrite; refuses (-1) a folder whose lock another train_order holds (probed without creating
 * the lock file); then creates the folder. 0, -1 or -2, with a message. */
int to_outdir_check_replot(const to_options *o);

/* ------------------------------------------------------------------ pool.c: the job pool */

typedef struct { rg_task task; rg_pos_kind pos; to_variant variant; int seed; } to_job;

/* Runs the jobs, at most o->jobs processes at a time; each child hands its results back through its own pipe.
 * After each finished job, on_partial (if not NULL) is called with the results so far. Writes the results into
 * all (room for n_jobs * (1 + TO_MAX_EXTS)) and their count into *n_all; returns the number of failed jobs. */
int to_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx);

/* ------------------------------------------------------------------ run.c: one run */


/* The evaluation set of (task, n): the lengths of the canonical file (rg_eval_lengths) are read from o->data, any
 * other length is generated in memory by the same generator and seed rule (rg_evalset_make: RG_EVAL_SEED, stream
 * 1000 * task + n, RG_EVAL_COUNT samples), which reproduces the file's sets exactly; *generated tells which. */
rg_status to_evalset_get(const to_options *o, rg_task task, int n, rg_evalset *es, bool *generated);

/* Trains (or resumes, or only evaluates) one run of training variant `variant` and writes its evaluated rows to
 * res (the encoding, then each RoPE extension: up to 1 + TO_MAX_EXTS); returns the number written, or -1 with a
 * message on stderr. With o->resume or o->eval set, task, pos, seed and the variant come from that checkpoint. */
int to_run(const to_options *o, const to_job *job, to_result *res);

/* The settings run `job` trains with: o with the job's training variant applied (none for a checkpoint's run).
 * ov may not be o. */
void to_run_options(const to_options *o, const to_job *job, to_options *ov);

/* Greedy decoding of the first `count` samples of an evaluation set and its scores: exact match and token
 * accuracy through the task's score hook (token equality without one), and, when r is not NULL and the target
 * length <= TO_POS_MAX, the per-position accounting of r's slot (to_position_count). At positions 0.., or at row i
 * of pos [count, prompt + target length]. RG_ERR_ARG when a position passes the learned table. */
rg_status to_evaluate_set(rg_model *m, const rg_evalset *es, int count, const int32_t *pos, double *exact,
                          double *token_acc, to_result *r, int slot);
/* Randomized evaluation positions (Ruoss et al. 2023; run.c): *pos = NULL unless random, else [count, 2n+3] sorted
 * random subsets of [0, max_position) from PCG32 (seed, base + rg_eval_stream(task, n)); base EVALPOS_TEST for the
 * test sets, EVALPOS_HELDOUT for the held-out set. RG_ERR_ARG when 2n+3 > max_position, RG_ERR_NOMEM. */
#define EVALPOS_TEST ((uint64_t)1 << 32)
#define EVALPOS_HELDOUT ((uint64_t)2 << 32)
rg_status to_eval_positions(bool random, uint64_t seed, uint64_t base, rg_task task, int n, int count,
                            int max_position, int32_t **pos);

/* ------------------------------------------------------------------ run_grid.c: grid tasks at evaluation */

/* The axis ids of count prompts [count, P] of grid task `task` at size n: *axes [RG_POS_AXES, count, P + G]
 * malloc'ed (rg_task_axes per row; the caller frees it), NULL for a 1-D task (its forward has none). RG_ERR_NOMEM,
 * the errors of rg_task_axes. */
rg_status to_eval_axes(rg_task task, int n, const int32_t *prompts, int count, int32_t **axes);
/* Adds the grid image of count outputs gen [count, G] against want [count, G] to r's slot: every expected token
 * that is a cell's symbol (a..z, or the background '.') counts at its cell (axis row, axis column - 1 of axes, the
 * layout of to_eval_axes); cells outside 9 x 9 are not counted. */
void to_cell_count(rg_task task, int n, const int32_t *gen, const int32_t *want, const int32_t *axes, int count,
                   to_result *r, int slot);

/* ------------------------------------------------------------------ run_curves.c: extrapolation over training */

/* The fixed subsample of every test length measured over training (--extrap-every): the first TO_CURVE_COUNT
 * samples of its evaluation set (the first rows of a generated set do not depend on its count), with, for a +rand
 * run, positions drawn as for the test sets, once; a length whose positions cannot be drawn is n/a. */
typedef struct {
    int n_lens;
    rg_evalset sets[TO_MAX_LENS];
    int32_t *pos[TO_MAX_LENS];
    bool na[TO_MAX_LENS];
} to_curveset;
/* For o's test lengths of task; random: a +rand run (seed draws its positions). RG_OK or the error. */
rg_status to_curveset_init(to_curveset *c, const to_options *o, rg_task task, bool random, uint64_t seed);
void to_curveset_free(to_curveset *c);
/* One measurement at `step`: a row step,n,exact_match,token_acc per test length into csv (empty values for n/a).
 * 0, or -1 with a message on stderr naming tag. */
int to_curveset_measure(const to_curveset *c, rg_model *m, int64_t step, FILE *csv, const char *tag);

/* ------------------------------------------------------------------ results_file.c: a finished run's results */

/* <out>/results/<name>.bin into buf. */
void to_results_path(const to_options *o, const char *name, char *buf, size_t cap);
/* Writes the n result records of run `name` atomically to its results file (the folder made if needed), marked with
 * digest (to_settings_digest of the invocation). 0, or -1 with a message naming the file. */
int to_results_save(const to_options *o, uint32_t digest, const char *name, const to_result *res, int n);
/* Reads the results file at path as job j's under settings o (the job's variant applied: to_run_options): format,
 * version and record size, exact length, CRC-32, the invocation's digest, and every record checked against the run
 * (its row, test lengths, steps, ranges of scores and counts). Returns the number of records written to res (room
 * for 1 + TO_MAX_EXTS), or -1 with why (what is wrong, for a message naming the file). */
int to_results_load(const to_options *o, uint32_t digest, const to_job *j, const char *path, to_result *res,
                    char *why, size_t cap);

/* ------------------------------------------------------------------ continue.c: --continue OUT */

/* CRC-32 of the settings JSON of o with how and where it runs (jobs, quiet, overwrite, out) left out: equal for an
 * invocation and its --continue. */
uint32_t to_settings_digest(const to_options *o);
/* Writes <out>/invocation.json atomically (the command line and the resolved settings) for an invocation of new
 * runs (nothing for --resume, --eval or --continue itself). 0, or -1 with a message naming the file. */
int to_continue_record(const to_options *o, const char *cmd);
/* For --continue OUT (o->cont): refuses every flag but --jobs and --quiet, then replaces o by the settings of
 * OUT/invocation.json (checked as --config's are; --jobs and --quiet given win; out = OUT; continuing set) and cmd
 * by its command line. Exits 2 with a message naming the file when it is missing or not one train_order wrote. */
void to_continue_load(to_options *o, char *cmd, size_t cap);
/* to_pool_run's contract for a continued invocation: each job's files in o->out are checked first (exit 2 naming
 * the first that cannot be used: a results file or a checkpoint that is not this run's, corrupt, truncated or of
 * another version); finished jobs' stored records are used, the others run (a checkpoint's run resumes from it:
 * to_run). Results in job order, as for an uninterrupted invocation. */
int to_continue_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                         void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx);
/* In a continued invocation, run job's settings ov (to_run_options) resume from the run's checkpoint in
 * <out>/ckpt when there is one (checked by to_continue_pool_run before any run started): ov->resume names it. */
void to_continue_resume_source(to_options *ov, const to_job *job);
/* The training loop's loss window (the mean loss of train.csv's rows and the run's final loss: the sum and count
 * of the losses since the last row, and the last row's mean, NaN before the first) kept in the run state at each
 * checkpoint, so that a continued run ends with the loss an uninterrupted one has. 0, or -1 (rg_last_error). */
int to_loss_window_store(rg_run_state *rs, double sum, int64_t steps, double row);
/* Reads it back (a checkpoint without it: an empty window, row NaN). */
void to_loss_window_load(const rg_run_state *rs, double *sum, int64_t *steps, double *row);
/* Checks what a checkpoint's run state keeps for the training loop of a run with settings ov: steps_to_learn (-1
 * or a step from 1 to rs->step) and the loss window (finite values, at most log_every steps). 0, or -1 with why. */
int to_run_check_state(const rg_run_state *rs, const to_options *ov, char *why, size_t cap);

/* The report (to_report, to_replot, to_compare) is declared in report.h. */

#include "engine/base/clock.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/kill.h"

#endif
