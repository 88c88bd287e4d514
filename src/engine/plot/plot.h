/* plot.h: the report's figures of exact match and loss (plot.c): curves_<task> and loss_<task>. The views
 * (views/views.c) choose which figures a report draws; gnuplot.h draws them. */
#ifndef ENG_PLOT_PLOT_H
#define ENG_PLOT_PLOT_H

#include <stddef.h>

#include "engine/base/types.h"
#include "engine/results/results.h"

/* curves_<task>.dat and .gp in dir: exact match and token accuracy against n, the seeds and the 95% band. base
 * (cap bytes) gets the figure's name without its extension. 1 written, 0 nothing (task not in t), -1 failed. */
int eng_plot_curves(const eng_table *t, int task, const char *dir, char *base, size_t cap);
/* loss_<task>.dat and .gp in dir: the training loss of every run of task from its log <runs_dir>/<run>/train.csv
 * (eng_result.runs_dir overrides runs_dir per run; "" there: no log). 1 written, 0 no run of the task has a log
 * (no file), -1 failed. */
int eng_plot_loss(const eng_table *t, int task, const char *dir, const char *runs_dir, char *base, size_t cap);

#endif
