/* plot.h: what the figure files of the report share (plot.c: running gnuplot in every format, the curves and
 * losses, the entry points; plot_heat.c: the heatmaps; plot_style.c: each curve's colour and marker). Internal to
 * the engine (prefix to_). */
#ifndef TO_PLOT_H
#define TO_PLOT_H

#include "engine/views/report.h"

#define FONT "sans"

/* The script's opening: the format (fmt = svg | pdf | png, -e "fmt='pdf'"), the output name <base>.<fmt>, and one
 * terminal per format at w_in x h_in inches (SVG at 72 px per inch, so that its text has the PDF's size; PNG at
 * 150 dpi); 9 pt text. */
void to_plot_terminal(to_out *g, const char *base, double w_in, double h_in);

/* extrapolation.dat and extrapolation.gp in dir; *n_tasks gets the number of tasks drawn. 0 or -1 with a message. */
int to_plot_heatmaps(const to_table *t, const char *dir, int *n_tasks);

#endif
