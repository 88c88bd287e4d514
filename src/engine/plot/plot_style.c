/* plot_style.c: the colour and marker of every curve (plot.h): an encoding's own, from its descriptor
 * (rg_pos_encoding.plot_colour, plot_marker), or for a registered encoding without one a pair of a palette reserved
 * for such encodings, never a built-in's; and the scaling types' styles in a RoPE scaling panel. */
#include "engine/plot/plot_style.h"

/* The scaling types' styles in a scaling panel (by rg_rope_ext: Okabe-Ito colours, colour-blind safe, yellow
 * darkened for a white background). An encoding's own style is its descriptor's (plot_colour, plot_marker). */
static const char *const colours[] = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#B59B00", "#0072B2", "#D55E00",
                                      "#CC79A7", "#7F7F7F", "#8C564B", "#9467BD", "#17BECF", "#E31A1C", "#6A3D9A"};
static const int markers[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 12, 14, 1, 2};
#define N_STYLES 14

const char *eng_plot_scaling_colour(rg_rope_ext e) { return colours[(unsigned)e % N_STYLES]; }
int eng_plot_scaling_marker(rg_rope_ext e) { return markers[(unsigned)e % N_STYLES]; }

/* The palette of registered encodings without a style of their own: colours no built-in descriptor uses. */
static const char *const reserved_colours[] = {"#FF7F0E", "#2CA02C", "#D62728", "#1F77B4", "#BCBD22", "#393B79",
                                               "#AD494A", "#8C6D31", "#7B4173", "#3182BD", "#E6550D", "#31A354",
                                               "#636363"};
static const int reserved_markers[] = {3, 1, 2, 4, 6, 8, 10, 12, 14, 5, 7, 9, 11};
#define N_RESERVED 13

/* The place of an encoding without a style among those before it in the registry. */
static int unstyled_rank(rg_pos_kind pos)
{
    int k = 0;
    for (int p = 0; p < (int)pos; p++) {
        const rg_pos_encoding *e = rg_pos_encoding_of((rg_pos_kind)p);
        k += e && !e->plot_colour;
    }
    return k % N_RESERVED;
}

const char *eng_plot_colour(rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    return e && e->plot_colour ? e->plot_colour : reserved_colours[unstyled_rank(pos)];
}

int eng_plot_marker(rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    return e && e->plot_colour ? e->plot_marker : reserved_markers[unstyled_rank(pos)];
}
