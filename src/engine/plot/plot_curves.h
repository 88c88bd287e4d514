/* plot_curves.h: the per-position and over-training figures (plot_curves.c). */
#ifndef ENG_PLOT_PLOT_CURVES_H
#define ENG_PLOT_PLOT_CURVES_H

#include "engine/results/results.h"

/* positions_<task>.svg (accuracy against output position at the window's lengths, a curve per row,
 * the training length marked) and over_training_<task>.svg (exact match against the step from the runs'
 * runs/<run>/extrap.csv, a curve per encoding and length band). 0 or -1. */
int eng_plot_positions(const eng_table *t, const char *dir);
int eng_plot_over_training(const eng_table *t, const char *dir, const char *runs_dir);

#endif
