/* report_protocol.h: the report's parts beside report.md's tables (report_protocol.c). */
#ifndef ENG_VIEWS_REPORT_PROTOCOL_H
#define ENG_VIEWS_REPORT_PROTOCOL_H

#include <stdbool.h>

#include "engine/base/files.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

/* The (encoding, training variant) pairs a report's rows hold. */
typedef struct { bool held[RG_POS_MAX][ENG_VAR_COUNT]; } eng_rows_held;
/* report.md's bullet of each held encoding's extrapolation-relevant settings: each descriptor's report_note (in
 * note_order; T5 buckets and max_distance, ALiBi slopes, rope_theta, FIRE's L, the learned table), or without one
 * its doc and declared settings; +rand's range; against dmax, the longest distance training reaches (why: how). */
void eng_md_encoding_settings(eng_out *w, const eng_options *o, const eng_rows_held *h, int dmax, const char *why);
/* report.md bullets: every row's budget (a row marked ✗ had the same), each encoding's extrapolation-relevant
 * settings against the tasks' longest training distance (rg_task_longest_distance), where the per-position data
 * (and plots, when a task has the view) and the over-training data are. */
void eng_md_protocol(eng_out *w, const eng_options *o, const eng_table *t);
/* report.md's section "Tricks against their base tasks": for every task of t whose descriptor names a base task
 * (copy_hints, copy_coupled: copy) that t also holds, a table per pair: each encoding's trick row beside its base
 * row of the same variant (exact match mean and k/N) at the lengths both were tested at. Nothing without a pair. */
void eng_md_tricks(eng_out *w, const eng_table *t);
/* <dir>/report_cells.csv: one line per (row, test length, metric) with n_seeds, k, mean, sd, the 95% t interval,
 * max and median. 0, or -1 with a message naming the file. */
int eng_write_cells_csv(const char *dir, const eng_table *t);
/* <dir>/report_positions.csv: one line per (run, test length, output position 1..n+1) with the samples, how many
 * had that position right and how many had their first wrong token there. 0 or -1. */
int eng_write_positions_csv(const char *dir, const eng_table *t);
/* The same as a cJSON object {n_seeds, accuracy, first_wrong, all_right}, or JSON null (returned as void *: a
 * cJSON * the caller adds to its tree). */
void *eng_json_positions(const eng_table *t, const eng_row *r, int n);

#endif
