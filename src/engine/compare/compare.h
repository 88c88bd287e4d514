/* compare.h: --compare (compare.c) and --combine (combine.c): reports read back and set side by side or joined. */
#ifndef ENG_COMPARE_COMPARE_H
#define ENG_COMPARE_COMPARE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/base/types.h"

/* Compares two reports (each a report.csv or a report.json, by the name's ending) cell by cell: for every (task,
 * encoding, variant, model size, RoPE extension, n) in either (a report without the size axis beside one with it:
 * its runs of its settings' one size, eng_settings_size), both exact-match means with their 95% t intervals and k/N seeds, and
 * whether the intervals overlap; then the same for token accuracy. Prints the table to out. Returns 0, or -1 with a
 * message on stderr (a file that cannot be read or validated, or a failed write to out). */
int eng_compare(const char *report_a, const char *report_b, FILE *out);

/* The settings and provenance of a report file as a cJSON object {"settings": ..., "provenance": ..., "partial"}
 * (returned as void *; the caller cJSON_Deletes it), NULL when none is found; where gets the file read ("nowhere"
 * when none). A report.json holds them all; for X.csv they come from X.json beside it, else settings.json in its
 * folder (settings only), else X.md (its Settings block, provenance lines, wall time and PARTIAL title, as the
 * reports committed in docs/ have them). */
void *eng_report_settings(const char *report, char *where, size_t cap);
/* The length of a report's path without its ".csv" or ".json" ending (the stem its sibling files share: X.json,
 * X.md, X_positions.csv). */
size_t eng_report_stem(const char *report);

/* The model size of a report without the size axis (an older report, or one run without --sizes), from its settings
 * (the cJSON object eng_report_settings gives under "settings"): its one "sizes" item, else "DxL" of d_model and
 * n_layers ("DxLfF" when d_ff is not 4 d_model), numbers and text into *s (n_heads the settings' n_heads, d_ff
 * theirs). 0, or -1 when the settings do not give it. */
int eng_settings_size(const void *settings, eng_size *s);
/* Gives every result of res[0..n) without a size the size s (a report read back without the size column is of its
 * settings' one size: eng_settings_size). */
void eng_results_set_size(eng_result *res, int n, const eng_size *s);

#define ENG_COMBINE_MAX 64     /* reports in one --combine */

/* Reports of one grid run in blocks of seeds (train_order --seeds 1-3, then 4-6, ...), read back as one. */
typedef struct {
    eng_result *res;            /* every input's results (malloc'ed), input order */
    int n_res;
    int train_len;
    char *settings;            /* the first input's settings object as JSON text (malloc'ed): a valid --config */
    int seeds[ENG_MAX_SEEDS], n_seeds; /* the union of the inputs' seeds, ascending */
    int runs;                  /* training runs (results without a RoPE scaling) */
    double wall_seconds;       /* the sum of the inputs' wall times; NaN when one is not known */
    bool partial;              /* an input was a PARTIAL report (written while its runs were going) */
    char *sources;             /* markdown (malloc'ed): per input its file, runs, seeds, commit, wall time */
    char *runs_dirs[ENG_COMBINE_MAX]; /* the inputs' runs/ folders that res[i].runs_dir points into (malloc'ed) */
    int n_dirs;
} eng_combined;

/* Loads reports[0..n) (each a report.csv or report.json, eng_report_load) and checks that they are blocks of one
 * grid: every setting (eng_report_settings) equal to the first report's except seed/seeds and where and how the
 * output went (out, overwrite, quiet, jobs), and no run (task, encoding, variant, RoPE scaling, seed) in two of
 * them. A different commit, host CPU or BLAS kernels is allowed but named in c->sources and on stderr (the
 * inputs' own Provenance lines say which). Each input's per-position counts come along when its
 * <name>_positions.csv is beside it (X/report.csv: X/report_positions.csv; Y_report.csv:
 * Y_report_positions.csv; eng_read_positions_csv, a malformed one refused), and an input named report.csv or
 * report.json whose folder holds runs/ lends those logs to the loss and over-training plots (res[i].runs_dir);
 * c->sources names both. Returns 0, or -1 with a message naming the file and, for different settings, the setting
 * and both values (c is then empty). 1 <= n <= ENG_COMBINE_MAX. */
int eng_combine_load(const char *const *reports, int n, eng_combined *c);
void eng_combined_free(eng_combined *c);

#endif
