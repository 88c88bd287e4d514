/* plot_curves.h: the per-position and over-training figures (plot_curves.c). */
#ifndef ENG_PLOT_PLOT_CURVES_H
#define ENG_PLOT_PLOT_CURVES_H

#include "engine/results/results.h"

#include <stddef.h>

/* The figures of task: positions_<task> (accuracy against output position at the window's lengths, a curve per
 * row, the training length marked) and over_training_<task> (exact match against the step from the runs'
 * runs/<run>/extrap.csv, a curve per encoding and length band). Each writes its .dat and .gp into dir and names the
 * figure in name (cap bytes): 1 written, 0 nothing to draw (no counts, no logs: no file), -1 failed (a message). */
int eng_plot_positions(const eng_table *t, int task, const char *dir, char *name, size_t cap);
int eng_plot_over_training(const eng_table *t, int task, const char *dir, const char *runs_dir, char *name,
                           size_t cap);

#endif
