/* gnuplot.h: the gnuplot runner (gnuplot.c). */
#ifndef ENG_PLOT_GNUPLOT_H
#define ENG_PLOT_GNUPLOT_H

#include "engine/base/files.h"

#include <stdbool.h>
#include <stdio.h>

#define FONT "sans"

/* The script's opening: the format (fmt = svg | pdf | png, -e "fmt='pdf'"), the output name <base>.<fmt>, and one
 * terminal per format at w_in x h_in inches (SVG at 72 px per inch, so that its text has the PDF's size; PNG at
 * 150 dpi); 9 pt text. */
void eng_plot_terminal(eng_out *g, const char *base, double w_in, double h_in);
/* Runs gnuplot on script (a file in dir) writing the SVG name in dir (written under a temporary name, renamed when complete).
 * 0, 1 when gnuplot is not installed, -1 on failure (message on stderr). */
int eng_gnuplot(const char *dir, const char *script, const char *base);

/* A figure's two files, <base>.dat (its data) and <base>.gp (its script), open in dir for writing (eng_out: renamed
 * into place only when closed). 0, or -1 with a message naming the file (neither is left open). */
int eng_plot_pair_open(const char *dir, const char *base, eng_out *dat, eng_out *gp);
/* Closes both (the data first: a script is never left without its data). 0 or -1 (both then discarded). */
int eng_plot_pair_close(eng_out *dat, eng_out *gp);
/* Discards both (a figure with nothing to draw). */
void eng_plot_pair_discard(eng_out *dat, eng_out *gp);

/* Where the figures of one report go: the folder, a stream told a line per figure drawn (NULL: none), and whether
 * gnuplot was found missing (then the figures' data and scripts are still written, but not drawn). */
typedef struct {
    const char *dir;
    FILE *said;
    bool no_gnuplot;
} eng_plot_pen;
/* Draws figure base (<base>.gp in pen->dir) in every format when written is 1 (a figure writer's result: 1 written,
 * 0 nothing to draw, -1 failed). Returns 0, or -1 when written was -1 or gnuplot failed (message on stderr). A
 * missing gnuplot is a warning, given once per pen: pen->no_gnuplot is set and no later figure is drawn. */
int eng_plot_draw(eng_plot_pen *pen, int written, const char *base);

#endif
