/* report.h: the views of a report: report.md, report.csv, report.json (report.c), the protocol's parts
 * (report_protocol.c), the grid tasks' part (report_grid.c) and the language models' report (lm_report.c). Every
 * file is written through base/files.h's checked output files: renamed into place only when complete. */
#ifndef ENG_VIEWS_REPORT_H
#define ENG_VIEWS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/base/files.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

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
/* The same as a cJSON object {n_seeds, accuracy, first_wrong, all_right}, or JSON null (returned as void *: a
 * cJSON * the caller adds to its tree). */
void *to_json_positions(const to_table *t, const to_row *r, int n);

/* report_grid.c: the grid tasks' part (docs/grids.md). to_md_grid: report.md's matrices of grid task `task` (mean,
 * 95% t interval, k/N per size, per encoding row). to_plot_grids: grid_cells.csv, heat_<task> and cells_<task>
 * (.svg, .pdf, .png; data .dat, script .gp) for every grid task of t; nothing without one. 0 or -1 (a missing
 * gnuplot is not an error). */
void to_md_grid(to_out *w, const to_table *t, int task);
int to_plot_grids(const to_table *t, const char *dir);

/* Aggregates the LM jobs of jobs[0..n_jobs) into <out>/lm_report.{md,csv} and lm_ppl_<task>.svg; nothing without
 * LM jobs. lm_report.md opens with the provenance (report.h: date, commit, CPU, command, wall_seconds: the
 * invocation's). 0, or -1 when a run's file is missing or an output failed (messages on stderr). */
int to_lm_report(const to_options *o, const to_job *jobs, int n_jobs, const char *command, double wall_seconds);

#endif
