/* plot.h: the report's figures (plot.c): every figure of a table drawn, and --replot. */
#ifndef ENG_PLOT_PLOT_H
#define ENG_PLOT_PLOT_H

#include "engine/base/types.h"
#include "engine/results/results.h"

/* Writes the plots of t into dir (see eng_report); runs_dir: the folder holding the runs' logs. 0 or -1. */
int eng_plot(const eng_table *t, const char *dir, const char *runs_dir);

/* Re-draws the plots of a report from its report.csv (validated as user input: header, names, ranges, duplicates)
 * into out_dir (which must exist), without retraining. Loss curves are drawn from the runs' logs under
 * <folder of report_csv>/runs/ when present. Returns 0, or -1 with a message naming the file and line. */
int eng_replot(const char *report_csv, const char *out_dir);
/* The same from results already loaded from report_csv by eng_report_load (the CSV's folder gives runs/). */
int eng_replot_results(const char *report_csv, const eng_result *res, int n_res, int train_len, const char *out_dir);

#endif
