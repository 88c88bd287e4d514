/* plot_style.h: the colours and markers of the figures (plot_style.c). */
#ifndef ENG_PLOT_PLOT_STYLE_H
#define ENG_PLOT_PLOT_STYLE_H

#include "nn/pos.h"


/* An encoding's colour "#RRGGBB" and gnuplot point type in every figure: its descriptor's plot_colour and
 * plot_marker, or for an encoding without them a pair of a palette reserved for such encodings (by their order of
 * registration), never a built-in's. */
const char *eng_plot_colour(rg_pos_kind pos);
int eng_plot_marker(rg_pos_kind pos);
/* The colour and marker of scaling type e's curves in a scaling panel (like the two above). */
const char *eng_plot_scaling_colour(rg_rope_ext e);
int eng_plot_scaling_marker(rg_rope_ext e);

#endif
