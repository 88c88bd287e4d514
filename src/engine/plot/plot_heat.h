/* plot_heat.h: the heatmaps of extrapolation.svg (plot_heat.c). */
#ifndef ENG_PLOT_PLOT_HEAT_H
#define ENG_PLOT_PLOT_HEAT_H

#include "engine/results/results.h"

/* extrapolation.dat and extrapolation.gp in dir; *n_tasks gets the number of tasks drawn. 0 or -1 with a message. */
int eng_plot_heatmaps(const eng_table *t, const char *dir, int *n_tasks);

#endif
