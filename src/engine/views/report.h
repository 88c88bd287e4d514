/* report.h: the extrapolation report of examples/train_order: statistics over seeds (stats.c), the written report
 * (report.c: report.md, report.csv, report.json; the table of rows and cells in table.c), the plots (plot.c:
 * gnuplot, started with fork/exec and an argument vector, never a shell), and reading reports back to re-plot or
 * compare them (compare.c).
 *
 * Every file is written to <name>.tmp.<pid> and renamed into place only after every write, fflush, fsync and
 * fclose succeeded, so a full disk leaves the previous file (or none), never a half one; the error names the file. */
#ifndef TO_REPORT_H
#define TO_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/base/types.h"

/* ------------------------------------------------------------------ entry points */

/* What the report says about the invocation that produced it. */
typedef struct {
    double wall_seconds;
    const char *command;       /* the command line, as typed */
    bool partial;              /* written while runs are still going: the report says so */
    int runs_done, runs_total; /* shown for a partial report (0, 0: not shown) */
    const char *sources;       /* a combined report (to_combine_load): markdown naming its inputs; NULL otherwise */
} to_report_meta;

/* Writes report.md, report.csv, report.json and the plots (extrapolation.svg: per task the exact-match and
 * token-accuracy heatmaps; curves_<task>.svg; loss_<task>.svg from <o->out>/runs/<run>/train.csv (to_run_name)
 * where those logs exist) into o->out. Returns 0, or -1 with a message on stderr naming the file that could not be
 * written (a missing gnuplot is a warning, not an error: the data and scripts are still written). */
int to_report(const to_options *o, const to_result *res, int n_res, const to_report_meta *meta);

/* Re-draws the plots of a report from its report.csv (validated as user input: header, names, ranges, duplicates)
 * into out_dir (which must exist), without retraining. Loss curves are drawn from the runs' logs under
 * <folder of report_csv>/runs/ when present. Returns 0, or -1 with a message naming the file and line. */
int to_replot(const char *report_csv, const char *out_dir);
/* The same from results already loaded from report_csv by to_report_load (the CSV's folder gives runs/). */
int to_replot_results(const char *report_csv, const to_result *res, int n_res, int train_len, const char *out_dir);

/* Compares two reports (each a report.csv or a report.json, by the name's ending) cell by cell: for every (task,
 * encoding, variant, RoPE extension, n) in either, both exact-match means with their 95% t intervals and k/N seeds, and
 * whether the intervals overlap; then the same for token accuracy. Prints the table to out. Returns 0, or -1 with a
 * message on stderr (a file that cannot be read or validated, or a failed write to out). */
int to_compare(const char *report_a, const char *report_b, FILE *out);

/* The settings and provenance of a report file as a cJSON object {"settings": ..., "provenance": ..., "partial"}
 * (returned as void *; the caller cJSON_Deletes it), NULL when none is found; where gets the file read ("nowhere"
 * when none). A report.json holds them all; for X.csv they come from X.json beside it, else settings.json in its
 * folder (settings only), else X.md (its Settings block, provenance lines, wall time and PARTIAL title, as the
 * reports committed in docs/ have them). */
void *to_report_settings(const char *report, char *where, size_t cap);
/* The length of a report's path without its ".csv" or ".json" ending (the stem its sibling files share: X.json,
 * X.md, X_positions.csv). */
size_t to_report_stem(const char *report);

/* ------------------------------------------------------------------ combining reports (combine.c) */

#define TO_COMBINE_MAX 64     /* reports in one --combine */

/* Reports of one grid run in blocks of seeds (train_order --seeds 1-3, then 4-6, ...), read back as one. */
typedef struct {
    to_result *res;            /* every input's results (malloc'ed), input order */
    int n_res;
    int train_len;
    char *settings;            /* the first input's settings object as JSON text (malloc'ed): a valid --config */
    int seeds[TO_MAX_SEEDS], n_seeds; /* the union of the inputs' seeds, ascending */
    int runs;                  /* training runs (results without a RoPE scaling) */
    double wall_seconds;       /* the sum of the inputs' wall times; NaN when one is not known */
    bool partial;              /* an input was a PARTIAL report (written while its runs were going) */
    char *sources;             /* markdown (malloc'ed): per input its file, runs, seeds, commit, wall time */
    char *runs_dirs[TO_COMBINE_MAX]; /* the inputs' runs/ folders that res[i].runs_dir points into (malloc'ed) */
    int n_dirs;
} to_combined;

/* Loads reports[0..n) (each a report.csv or report.json, to_report_load) and checks that they are blocks of one
 * grid: every setting (to_report_settings) equal to the first report's except seed/seeds and where and how the
 * output went (out, overwrite, quiet, jobs), and no run (task, encoding, variant, RoPE scaling, seed) in two of
 * them. A different commit, host CPU or BLAS kernels is allowed but named in c->sources and on stderr (the
 * inputs' own Provenance lines say which). Each input's per-position counts come along when its
 * <name>_positions.csv is beside it (X/report.csv: X/report_positions.csv; Y_report.csv:
 * Y_report_positions.csv; to_read_positions_csv, a malformed one refused), and an input named report.csv or
 * report.json whose folder holds runs/ lends those logs to the loss and over-training plots (res[i].runs_dir);
 * c->sources names both. Returns 0, or -1 with a message naming the file and, for different settings, the setting
 * and both values (c is then empty). 1 <= n <= TO_COMBINE_MAX. */
int to_combine_load(const char *const *reports, int n, to_combined *c);
void to_combined_free(to_combined *c);

/* ------------------------------------------------------------------ statistics over seeds (stats.c) */

#define TO_CI_LEVEL 0.95      /* the intervals' confidence level */
#define TO_PASS_EXACT 0.5     /* a seed "reaches" a cell when its exact match is >= this */
#define TO_BOOT_REPS 10000    /* bootstrap resamples */

/* One cell over seeds: the finite values among the seeds' (NaN = not evaluated). */
typedef struct {
    int n;                     /* seeds with a finite value */
    int k;                     /* of those, seeds with value >= TO_PASS_EXACT */
    double mean, sd;           /* sd: sample standard deviation (n - 1); NaN when n < 2; mean NaN when n = 0 */
    double lo, hi;             /* 95% Student t interval mean -+ t(0.975, n-1) sd / sqrt(n), clipped to [0, 1];
                                  NaN when n < 2 */
    double boot_lo, boot_hi;   /* 95% percentile bootstrap interval of the mean (TO_BOOT_REPS resamples, seeded);
                                  NaN when n < 2 */
    double max, median;        /* the largest value over seeds (the convention of Deletang et al. 2023 and Ruoss et
                                  al. 2023) and the median (the mean of the middle two for even n); NaN when n = 0 */
} to_stat;
#define TO_STAT_NONE ((to_stat){0, 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}) /* no finite value */

/* P(T <= t) for Student's t with df >= 1 degrees of freedom, through the regularized incomplete beta function
 * I_x(df/2, 1/2) with x = df / (df + t^2) (Abramowitz & Stegun 26.7.1, 26.5.8 continued fraction). */
double to_t_cdf(double t, int df);
/* The p-quantile (0 < p < 1) of Student's t with df >= 1, by bisection on to_t_cdf (|error| < 1e-10). */
double to_t_quantile(double p, int df);
/* Percentile bootstrap interval (level in (0, 1)) of the mean of v[0..n), n >= 2, reps resamples drawn with
 * rg_rng seeded (seed, 0x5eed): the same inputs and seed give the same interval. Percentiles interpolate linearly
 * between order statistics (R's type 7). */
void to_bootstrap_ci(const double *v, int n, int reps, uint64_t seed, double level, double *lo, double *hi);
/* All of to_stat for v[0..n) (non-finite values skipped); boot_seed seeds the bootstrap. */
void to_stat_compute(const double *v, int n, uint64_t boot_seed, to_stat *s);
/* A bootstrap seed for one cell, from its identity (so that it does not depend on the order of the report). */
uint64_t to_cell_seed(rg_task task, rg_pos_kind pos, rg_rope_ext ext, int n, bool exact);

/* ------------------------------------------------------------------ the table of a report (table.c) */

#define TO_MAX_TABLE_LENS 64
/* report.csv's header. Older reports (without variant, train_len or generated) still load: to_report_load reads
 * the columns by name. */
#define TO_CSV_HEADER "task,encoding,variant,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc," \
                      "train_len,generated,steps_to_learn"   /* distinct test lengths per task in one report */

/* One row of the report: a (task, encoding, training variant, RoPE extension) and the indices of its runs (one per
 * seed). */
typedef struct {
    rg_task task;
    rg_pos_kind pos;
    to_variant variant;
    rg_rope_ext ext;
    double ext_factor;         /* 0: per test length; else the fixed RoPE scaling factor */
    int n_runs;
    int *runs;
} to_row;

typedef struct {
    const to_result *res;
    int n_res;
    to_row *rows;              /* ordered by task, encoding, variant, extension (none first), factor */
    int n_rows;
    int lens[RG_TASK_MAX][TO_MAX_TABLE_LENS]; /* per task the union of the runs' test lengths, ascending */
    int n_lens[RG_TASK_MAX];
    int train_len;
} to_table;

/* Groups res into rows. Returns 0, or -1 with a message (out of memory, more than TO_MAX_TABLE_LENS lengths). */
int to_table_build(to_table *t, const to_result *res, int n_res, int train_len);
void to_table_free(to_table *t);
/* The row of t with like's task, encoding, variant, RoPE extension and factor, or NULL. */
const to_row *to_table_row_like(const to_table *t, const to_row *like);
/* The statistics of row r at test length n for exact match (exact) or token accuracy; if values is not NULL it
 * gets the per-run values (NaN where the run has no such length), r->n_runs of them. */
void to_table_cell(const to_table *t, const to_row *r, int n, bool exact, to_stat *s, double *values);
/* False when the row's mean exact match at the training length is below 0.9 (the model did not learn the task, so
 * its extrapolation says nothing about the encoding; marked ✗); true when it is not below, or not evaluated. */
bool to_row_learned(const to_table *t, const to_row *r);
/* Steps-to-learn of a row over its seeds (stats.c): n runs measured (steps_to_learn != 0), k of them reached
 * TO_LEARNED_EXACT; mean and median of the k steps (NaN when k = 0); max_steps: the longest of the n runs (the
 * "not within" bound). */
typedef struct { int n, k; double mean, median; int64_t max_steps; } to_learn_stat;
void to_row_steps_to_learn(const to_table *t, const to_row *r, to_learn_stat *s);
/* "1200 (median 1100) · 3/3", "not within 3000 · 0/3", "n/a". */
const char *to_learn_text(const to_learn_stat *s, char *buf, size_t cap);
/* Whether any run of the table measured steps-to-learn (else the reports leave the column out). */
bool to_table_has_learn(const to_table *t);

/* "rope+pi", "alibi", "rope θ=500k", "alibi+rand", "rope+yarn:4": the row's label (to_label). */
const char *to_row_label(const to_row *r, char *buf, size_t cap);


/* ------------------------------------------------------------------ provenance (report.c) */

/* Where and when a report was made: UTC date, the commit the binary was built from (RG_GIT_COMMIT, "+dirty" when
 * the tree had changes), /proc/cpuinfo's model name ("unknown" without it), OpenBLAS's kernel name and config. */
typedef struct {
    char date[32], cpu[160];
    const char *commit, *blas_core, *blas_config;
} to_provenance;

/* Fills p for now. Never fails (a field it cannot read is "unknown"). */
void to_provenance_get(to_provenance *p);
/* A report's "## Provenance" section: p, the ropegrad version and real type, the command (NULL: empty) and the
 * wall time in seconds. */
void to_md_provenance(to_out *w, const to_provenance *p, const char *command, double wall_seconds);

/* ------------------------------------------------------------------ the protocol's report parts (report_protocol.c) */

/* The (encoding, training variant) pairs a report's rows hold. */
typedef struct { bool held[RG_POS_MAX][TO_VAR_COUNT]; } to_rows_held;
/* report.md's bullet of each held encoding's extrapolation-relevant settings: each descriptor's report_note (in
 * note_order; T5 buckets and max_distance, ALiBi slopes, rope_theta, FIRE's L, the learned table), or without one
 * its doc and declared settings; +rand's range; against dmax, the longest distance training reaches (why: how). */
void to_md_encoding_settings(to_out *w, const to_options *o, const to_rows_held *h, int dmax, const char *why);
/* report.md bullets: every row's budget (a row marked ✗ had the same), each encoding's extrapolation-relevant
 * settings against the tasks' longest training distance (rg_task_longest_distance), where the per-position data
 * (and plots, when a task has the view) and the over-training data are. */
void to_md_protocol(to_out *w, const to_options *o, const to_table *t);
/* report.md's section "Tricks against their base tasks": for every task of t whose descriptor names a base task
 * (copy_hints, copy_coupled: copy) that t also holds, a table per pair: each encoding's trick row beside its base
 * row of the same variant (exact match mean and k/N) at the lengths both were tested at. Nothing without a pair. */
void to_md_tricks(to_out *w, const to_table *t);
/* report.md table of task: exact match, the maximum over seeds / the median, per row and test length. */
void to_md_max_median(to_out *w, const to_table *t, int task);
/* <dir>/report_cells.csv: one line per (row, test length, metric) with n_seeds, k, mean, sd, the 95% t interval,
 * max and median. 0, or -1 with a message naming the file. */
int to_write_cells_csv(const char *dir, const to_table *t);
/* <dir>/report_positions.csv: one line per (run, test length, output position 1..n+1) with the samples, how many
 * had that position right and how many had their first wrong token there. 0 or -1. */
int to_write_positions_csv(const char *dir, const to_table *t);
/* Reads a report_positions.csv (the layout above) back into the results res[0..n) it belongs to (pos_count,
 * pos_right, first_wrong; the all-right count from the samples less the first-wrong counts). Every line is user
 * input: the header, 10 fields of printable text, whole numbers in range, a run, test length and position that res
 * holds, counts that fit the samples and each other (a position's right count between the samples not yet wrong
 * there and the samples not first wrong there), no line twice, every position of a counted (run, length) present,
 * and the all-right count equal to the report's exact match at that length (for a task scored token by token).
 * A FIFO is not waited on. Returns 1 read (*slots: the
 * (run, length) pairs counted), 0 when the file does not exist, -1 with a message naming the file and line (res's
 * counts are then all zero). */
int to_read_positions_csv(const char *path, to_result *res, int n, int *slots);
/* The per-position values of row r at test length n (accuracy[0..n], first_wrong[0..n], *all_right; see
 * report_protocol.c); returns the number of seeds with counts (0: none, the arrays are then unset). */
int to_cell_positions(const to_table *t, const to_row *r, int n, double *accuracy, double *first_wrong,
                      double *all_right);
/* The same as a cJSON object {n_seeds, accuracy, first_wrong, all_right}, or JSON null (returned as void *: a
 * cJSON * the caller adds to its tree). */
void *to_json_positions(const to_table *t, const to_row *r, int n);

/* ------------------------------------------------------------------ plots (plot.c) and reading reports (compare.c) */

/* Writes the plots of t into dir (see to_report); runs_dir: the folder holding the runs' logs. 0 or -1. */
int to_plot(const to_table *t, const char *dir, const char *runs_dir);
/* Runs gnuplot on script (a file in dir) writing the SVG name in dir (plot.c's checked temporary-then-rename).
 * 0, 1 when gnuplot is not installed, -1 on failure (message on stderr). */
int to_gnuplot(const char *dir, const char *script, const char *base);
/* An encoding's colour "#RRGGBB" and gnuplot point type in every figure: its descriptor's plot_colour and
 * plot_marker, or for an encoding without them a pair of a palette reserved for such encodings (by their order of
 * registration), never a built-in's. */
const char *to_plot_colour(rg_pos_kind pos);
int to_plot_marker(rg_pos_kind pos);
/* The colour and marker of scaling type e's curves in a scaling panel (plot_style.c, like the two above). */
const char *to_plot_scaling_colour(rg_rope_ext e);
int to_plot_scaling_marker(rg_rope_ext e);
/* plot_curves.c: positions_<task>.svg (accuracy against output position at the window's lengths, a curve per row,
 * the training length marked) and over_training_<task>.svg (exact match against the step from the runs'
 * runs/<run>/extrap.csv, a curve per encoding and length band). 0 or -1. */
int to_plot_positions(const to_table *t, const char *dir);
int to_plot_over_training(const to_table *t, const char *dir, const char *runs_dir);

/* report_grid.c: the grid tasks' part (docs/grids.md). to_md_grid: report.md's matrices of grid task `task` (mean,
 * 95% t interval, k/N per size, per encoding row). to_plot_grids: grid_cells.csv, heat_<task> and cells_<task>
 * (.svg, .pdf, .png; data .dat, script .gp) for every grid task of t; nothing without one. 0 or -1 (a missing
 * gnuplot is not an error). */
void to_md_grid(to_out *w, const to_table *t, int task);
int to_plot_grids(const to_table *t, const char *dir);

/* Loads a report.csv or report.json (by the name's ending) into a malloc'ed array of results (*res, *n_res) and
 * its training length. Every field is validated (names, 1 <= seed <= 1000000, 1 <= n <= RG_TASK_MAX_N, metrics in
 * [0, 1] or missing, at most TO_MAX_LENS lengths per run, no duplicate (run, n)). Returns 0, or -1 with a message
 * naming the file (and line for CSV). */
int to_report_load(const char *path, to_result **res, int *n_res, int *train_len);

#endif
