/* plot.h: the report's figures (plot.c: heatmaps, curves and losses, --replot; plot_heat.c; plot_curves.c;
 * plot_style.c: colours and markers). */
#ifndef ENG_PLOT_PLOT_H
#define ENG_PLOT_PLOT_H

#include "engine/base/types.h"
#include "engine/results/results.h"

/* Writes the plots of t into dir (see to_report); runs_dir: the folder holding the runs' logs. 0 or -1. */
int to_plot(const to_table *t, const char *dir, const char *runs_dir);
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

/* extrapolation.dat and extrapolation.gp in dir; *n_tasks gets the number of tasks drawn. 0 or -1 with a message. */
int to_plot_heatmaps(const to_table *t, const char *dir, int *n_tasks);

/* Re-draws the plots of a report from its report.csv (validated as user input: header, names, ranges, duplicates)
 * into out_dir (which must exist), without retraining. Loss curves are drawn from the runs' logs under
 * <folder of report_csv>/runs/ when present. Returns 0, or -1 with a message naming the file and line. */
int to_replot(const char *report_csv, const char *out_dir);
/* The same from results already loaded from report_csv by to_report_load (the CSV's folder gives runs/). */
int to_replot_results(const char *report_csv, const to_result *res, int n_res, int train_len, const char *out_dir);

#endif
