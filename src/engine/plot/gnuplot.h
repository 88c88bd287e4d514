/* gnuplot.h: the gnuplot runner (gnuplot.c). */
#ifndef ENG_PLOT_GNUPLOT_H
#define ENG_PLOT_GNUPLOT_H

#include "engine/base/files.h"

#define FONT "sans"

/* The script's opening: the format (fmt = svg | pdf | png, -e "fmt='pdf'"), the output name <base>.<fmt>, and one
 * terminal per format at w_in x h_in inches (SVG at 72 px per inch, so that its text has the PDF's size; PNG at
 * 150 dpi); 9 pt text. */
void eng_plot_terminal(eng_out *g, const char *base, double w_in, double h_in);
/* Runs gnuplot on script (a file in dir) writing the SVG name in dir (written under a temporary name, renamed when complete).
 * 0, 1 when gnuplot is not installed, -1 on failure (message on stderr). */
int eng_gnuplot(const char *dir, const char *script, const char *base);

#endif
