/* plot_heat.h: the heatmaps of extrapolation.svg (plot_heat.c). */
#ifndef ENG_PLOT_PLOT_HEAT_H
#define ENG_PLOT_PLOT_HEAT_H

#include "engine/results/results.h"

#include <stddef.h>

/* extrapolation.dat and extrapolation.gp in dir, a row of panels per task of t; base (cap bytes) gets the figure's
 * name, "extrapolation". 1 written, or -1 with a message. */
int eng_plot_heatmaps(const eng_table *t, const char *dir, char *base, size_t cap);

#endif
