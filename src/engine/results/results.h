/* results.h: a report's results as tables: statistics over seeds (stats.c), the table of rows and cells (table.c),
 * per-position counts (positions.c), and a report read back (report_load.c). */
#ifndef ENG_RESULTS_RESULTS_H
#define ENG_RESULTS_RESULTS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/base/files.h"
#include "engine/base/types.h"

/* Statistics over seeds (stats.c). */
#define ENG_CI_LEVEL 0.95      /* the intervals' confidence level */
#define ENG_PASS_EXACT 0.5     /* a seed "reaches" a cell when its exact match is >= this */
#define ENG_BOOT_REPS 10000    /* bootstrap resamples */

/* One cell over seeds: the finite values among the seeds' (NaN = not evaluated). */
typedef struct {
    int n;                     /* seeds with a finite value */
    int k;                     /* of those, seeds with value >= ENG_PASS_EXACT */
    double mean, sd;           /* sd: sample standard deviation (n - 1); NaN when n < 2; mean NaN when n = 0 */
    double lo, hi;             /* 95% Student t interval mean -+ t(0.975, n-1) sd / sqrt(n), clipped to [0, 1];
                                  NaN when n < 2 */
    double boot_lo, boot_hi;   /* 95% percentile bootstrap interval of the mean (ENG_BOOT_REPS resamples, seeded);
                                  NaN when n < 2 */
    double max, median;        /* the largest value over seeds (the convention of Deletang et al. 2023 and Ruoss et
                                  al. 2023) and the median (the mean of the middle two for even n); NaN when n = 0 */
} eng_stat;
#define ENG_STAT_NONE ((eng_stat){0, 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}) /* no finite value */

/* P(T <= t) for Student's t with df >= 1 degrees of freedom, through the regularized incomplete beta function
 * I_x(df/2, 1/2) with x = df / (df + t^2) (Abramowitz & Stegun 26.7.1, 26.5.8 continued fraction). */
double eng_t_cdf(double t, int df);
/* The p-quantile (0 < p < 1) of Student's t with df >= 1, by bisection on eng_t_cdf (|error| < 1e-10). */
double eng_t_quantile(double p, int df);
/* Percentile bootstrap interval (level in (0, 1)) of the mean of v[0..n), n >= 2, reps resamples drawn with
 * rg_rng seeded (seed, 0x5eed): the same inputs and seed give the same interval. Percentiles interpolate linearly
 * between order statistics (R's type 7). */
void eng_bootstrap_ci(const double *v, int n, int reps, uint64_t seed, double level, double *lo, double *hi);
/* All of eng_stat for v[0..n) (non-finite values skipped); boot_seed seeds the bootstrap. */
void eng_stat_compute(const double *v, int n, uint64_t boot_seed, eng_stat *s);
/* A bootstrap seed for one cell, from its identity (so that it does not depend on the order of the report). */
uint64_t eng_cell_seed(rg_task task, rg_pos_kind pos, rg_rope_ext ext, int n, bool exact);

/* The table of a report (table.c). */
#define ENG_MAX_TABLE_LENS 64
/* report.csv's header. Older reports (without variant, train_len or generated) still load: eng_report_load reads
 * the columns by name. */
#define ENG_CSV_HEADER "task,encoding,variant,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc," \
                      "train_len,generated,steps_to_learn"   /* distinct test lengths per task in one report */

/* The columns a report with a model-size axis adds at the end of report.csv (sizes_table.c; old reports without
 * them load, each run then of the report's single size). */
#define ENG_CSV_SIZE_COLUMNS ",size,d_model,n_layers,n_heads,d_ff,params"

/* One row of the report: a (task, encoding, training variant, RoPE extension) and the indices of its runs (one per
 * seed). */
typedef struct {
    rg_task task;
    rg_pos_kind pos;
    eng_variant variant;
    rg_rope_ext ext;
    double ext_factor;         /* 0: per test length; else the fixed RoPE scaling factor */
    int n_runs;
    int *runs;
    char size[ENG_SIZE_TEXT];  /* the model size (eng_result.size; "" without a size axis) and its numbers */
    int d_model, n_layers, n_heads, d_ff;
} eng_row;

typedef struct {
    const eng_result *res;
    int n_res;
    eng_row *rows;              /* ordered by task, encoding, variant, size, extension (none first), factor */
    int n_rows;
    int lens[RG_TASK_MAX][ENG_MAX_TABLE_LENS]; /* per task the union of the runs' test lengths, ascending */
    int n_lens[RG_TASK_MAX];
    int train_len;
} eng_table;

/* Groups res into rows. Returns 0, or -1 with a message (out of memory, more than ENG_MAX_TABLE_LENS lengths). */
int eng_table_build(eng_table *t, const eng_result *res, int n_res, int train_len);
void eng_table_free(eng_table *t);
/* The row of t with like's task, encoding, variant, RoPE extension, factor and size text, or NULL. */
const eng_row *eng_table_row_like(const eng_table *t, const eng_row *like);
/* The statistics of row r at test length n for exact match (exact) or token accuracy; if values is not NULL it
 * gets the per-run values (NaN where the run has no such length), r->n_runs of them. */
void eng_table_cell(const eng_table *t, const eng_row *r, int n, bool exact, eng_stat *s, double *values);
/* False when the row's mean exact match at the training length is below 0.9 (the model did not learn the task, so
 * its extrapolation says nothing about the encoding; marked ✗); true when it is not below, or not evaluated. */
bool eng_row_learned(const eng_table *t, const eng_row *r);
/* Steps-to-learn of a row over its seeds (stats.c): n runs measured (steps_to_learn != 0), k of them reached
 * ENG_LEARNED_EXACT; mean and median of the k steps (NaN when k = 0); max_steps: the longest of the n runs (the
 * "not within" bound). */
typedef struct { int n, k; double mean, median; int64_t max_steps; } eng_learn_stat;
void eng_row_steps_to_learn(const eng_table *t, const eng_row *r, eng_learn_stat *s);
/* "1200 (median 1100) · 3/3", "not within 3000 · 0/3", "n/a". */
const char *eng_learn_text(const eng_learn_stat *s, char *buf, size_t cap);
/* Whether any run of the table measured steps-to-learn (else the reports leave the column out). */
bool eng_table_has_learn(const eng_table *t);

/* "rope+pi", "alibi", "rope θ=500k", "alibi+rand", "rope+yarn:4": the row's label (eng_label), and with a size
 * axis its size after a space: "alibi 128x4", "rope+yarn 64x2". */
const char *eng_row_label(const eng_row *r, char *buf, size_t cap);

/* The model-size axis in the outputs (sizes_table.c): all of these add nothing when the report has no size axis.
 * Whether any of res[0..n) has a size (then the report has the axis). */
bool eng_results_sized(const eng_result *res, int n);
/* report.csv's extra header columns (ENG_CSV_SIZE_COLUMNS or "") and a run's fields ",128x4,128,4,4,512,812345". */
const char *eng_size_csv_header(bool sized);
const char *eng_size_csv_fields(const eng_result *r, bool sized, char *buf, size_t cap);
/* The same fields for a row (report_cells.csv; its parameter count is its first run's); "" without the axis. */
const char *eng_row_size_fields(const eng_table *t, const eng_row *r, char *buf, size_t cap);
/* Adds "size", "d_model", "n_layers", "n_heads", "d_ff", "params" to the cJSON object (a run's, or a row's or cell's
 * through its first run) when it has a size. */
void eng_size_json(void *object, const eng_result *r);
void eng_row_size_json(void *object, const eng_table *t, const eng_row *r);
/* report.json config's "sizes": an array of {size, d_model, n_layers, n_heads, d_ff}, one per o->sizes (a cJSON
 * array, returned as void *). */
void *eng_sizes_json(const eng_options *o);
/* report.md's model text: "d_model 64, n_heads 4, n_layers 2, d_ff 256" (m's) without the axis, else the sizes. */
const char *eng_model_text(const rg_model_config *m, const eng_table *t, char *buf, size_t cap);
/* report.md's "Model sizes" section: a line per size with its numbers and parameter counts (nothing without the
 * axis). */
void eng_md_sizes(eng_out *w, const eng_table *t);

/* Per-position counts (positions.c). */
/* Reads a report_positions.csv (the layout above) back into the results res[0..n) it belongs to (pos_count,
 * pos_right, first_wrong; the all-right count from the samples less the first-wrong counts). Every line is user
 * input: the header, 10 fields of printable text, whole numbers in range, a run, test length and position that res
 * holds, counts that fit the samples and each other (a position's right count between the samples not yet wrong
 * there and the samples not first wrong there), no line twice, every position of a counted (run, length) present,
 * and the all-right count equal to the report's exact match at that length (for a task scored token by token).
 * A FIFO is not waited on. Returns 1 read (*slots: the
 * (run, length) pairs counted), 0 when the file does not exist, -1 with a message naming the file and line (res's
 * counts are then all zero). */
int eng_read_positions_csv(const char *path, eng_result *res, int n, int *slots);
/* The per-position values of row r at test length n (accuracy[0..n], first_wrong[0..n], *all_right; see
 * report_protocol.c); returns the number of seeds with counts (0: none, the arrays are then unset). */
int eng_cell_positions(const eng_table *t, const eng_row *r, int n, double *accuracy, double *first_wrong,
                      double *all_right);

/* Loads a report.csv or report.json (by the name's ending) into a malloc'ed array of results (*res, *n_res) and
 * its training length. Every field is validated (names, 1 <= seed <= 1000000, 1 <= n <= RG_TASK_MAX_N, metrics in
 * [0, 1] or missing, at most ENG_MAX_LENS lengths per run, no duplicate (run, n)). Returns 0, or -1 with a message
 * naming the file (and line for CSV). */
int eng_report_load(const char *path, eng_result **res, int *n_res, int *train_len);

#endif
