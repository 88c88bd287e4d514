/* plot_heat.c: extrapolation.{svg,pdf,png}, the report's heatmaps (one script, drawn by plot.c in every format):
 * per task a row of two panels, encodings x test lengths, coloured by mean exact match (printed in each cell with
 * k/N seeds reaching 0.5; ✗ after the rows not learned) beside mean token accuracy (its colour box); a labelled line
 * separates the training lengths from the extrapolation ones. Sizes in inches, text 7-10 pt (plot.h). */
#include "engine/plot/plot_heat.h"
#include "engine/base/files.h"
#include "engine/plot/gnuplot.h"
#include "engine/results/results.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ heatmaps: extrapolation.svg */

static int n_rows_of(const eng_table *t, int task)
{
    int n = 0;
    for (int k = 0; k < t->n_rows; k++) n += t->rows[k].task == (rg_task)task;
    return n;
}

/* x of the boundary between the test lengths <= train_len and the longer ones, in column units. */
static double train_boundary(const eng_table *t, int task)
{
    int j = 0;
    while (j < t->n_lens[task] && t->lens[task][j] <= t->train_len) j++;
    return j - 0.5;
}

/* The row labels' column: a glyph of the 9 pt tic labels is at most ~0.085 in wide on average in DejaVu Sans, the
 * usual "sans" (a row label "rope bf16 angles+dynamic ✗" measures 2.19 in at 150 dpi), and the labels end ~0.25 in
 * left of the panel; sized from the longest label so that none is cut at the figure's left edge. */
#define LABEL_GLYPH_IN 0.09
#define LABEL_PAD_IN 0.4

/* The characters of UTF-8 text s (a label's "θ" is one glyph of two bytes). */
static size_t glyphs(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* The heatmaps' geometry in inches: the exact-match panel (row labels, cells wide enough for "0.98 10/10" in
 * 7 pt) beside the token-accuracy panel (cells for "0.98", the colour box), one row of both per task. */
typedef struct { double w, h, exact_w, label_w, cell_w_exact, cell_w_token, row_h, top, bottom; int n_tasks; } heat_geom;

/* One panel: placed by margins at screen fractions (row `slot` from the top), titled, labelled, plotted. */
static void heat_panel(eng_out *g, const eng_table *t, int task, int block, int slot, bool exact, const heat_geom *hg)
{
    int nr = n_rows_of(t, task), nc = t->n_lens[task];
    bool any_x = false;
    for (int k = 0; k < t->n_rows; k++) any_x |= t->rows[k].task == (rg_task)task && !eng_row_learned(t, &t->rows[k]);
    double y1 = 1 - slot * (hg->h / hg->n_tasks) / hg->h, ph = hg->h / hg->n_tasks;
    double x0 = exact ? hg->label_w : hg->exact_w + 0.12, x1 = exact ? hg->exact_w - 0.12 : hg->w - 0.75;
    eng_out_printf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\nset tmargin at screen %.4f\n"
                     "set bmargin at screen %.4f\n", x0 / hg->w, x1 / hg->w, y1 - hg->top / hg->h,
                  y1 - (ph - hg->bottom) / hg->h);
    eng_out_printf(g, "set title '%s%s' font ',9' offset 0,0.6\n", exact ? rg_task_name((rg_task)task) : "",
                  exact ? ": exact match (mean, k/N seeds >= 0.5)" : "token accuracy (mean)");
    eng_out_printf(g, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset xtics (", nc - 1, nr - 1);
    char size[32];
    for (int j = 0; j < nc; j++) /* "16", or a grid task's "4x8" */
        eng_out_printf(g, "%s\"%s%s\" %d", j ? ", " : "", rg_task_size_text((rg_task)task, t->lens[task][j], size,
                      sizeof size), t->lens[task][j] == t->train_len ? "\\n(train)" : "", j);
    eng_out_printf(g, ")\n");
    char label[96];
    if (exact) {
        eng_out_printf(g, "unset colorbox\nset ytics (");
        for (int k = 0, r = 0; k < t->n_rows; k++)
            if (t->rows[k].task == (rg_task)task)
                eng_out_printf(g, "%s\"%s%s\" %d", r ? ", " : "", eng_row_label(&t->rows[k], label, sizeof label),
                              eng_row_learned(t, &t->rows[k]) ? "" : " ✗", r), r++;
        eng_out_printf(g, ")\n");
    } else eng_out_printf(g, "set colorbox user origin screen %.4f, screen %.4f size screen %.4f, screen %.4f\n"
                            "set cblabel 'fraction' offset -0.5,0\nunset ytics\n", (hg->w - 0.62) / hg->w,
                         y1 - (ph - hg->bottom) / hg->h, 0.12 / hg->w, (ph - hg->top - hg->bottom) / hg->h);
    double xb = train_boundary(t, task);
    eng_out_printf(g, "unset arrow\nunset label\n");
    if (exact && any_x)
        eng_out_printf(g, "set xlabel \"test length n (symbols)\\n✗: not learned (mean exact match < 0.9 at n = %d)\" offset 0,-0.5\n",
                      t->train_len);
    else eng_out_printf(g, "set xlabel '%s' offset 0,-0.5\n", rg_task_is_grid((rg_task)task) ?
                       "test size (rows x columns; heat_<task>.svg draws the grid)" : "test length n (symbols)");
    if (xb > -0.5 && xb < nc - 0.5) {
        eng_out_printf(g, "set arrow from %g, graph 0 to %g, graph 1.04 nohead lw 2 lc rgb 'black' front\n", xb, xb);
        if (exact)
            /* above the table's top border by character units (a fraction of the graph is a few points on a table
             * of few rows, and the text sat on the border) */
            eng_out_printf(g, "set label 'training length n <= %d' at %g, graph 1 right offset -0.8,0.8 font ',7'\n"
                             "set label 'longer: extrapolation' at %g, graph 1 left offset 0.8,0.8 font ',7'\n",
                          t->train_len, xb, xb);
    }
    int col = exact ? 3 : 4, lab = exact ? 5 : 6;
    eng_out_printf(g, "plot 'extrapolation.dat' index %d using 1:2:%d with image pixels notitle, \\\n"
                     "     '' index %d using 1:2:%d:(column(%d) > 0.6 ? 0xffffff : 0) with labels tc rgb variable "
                     "font ',7' notitle\n", block, col, block, lab, col);
}

int eng_plot_heatmaps(const eng_table *t, const char *dir, char *base, size_t cap)
{
    eng_out d, g;
    snprintf(base, cap, "extrapolation");
    if (eng_plot_pair_open(dir, base, &d, &g)) return -1;
    int n_tasks = 0;
    int max_rows = 1, max_cols = 1;
    size_t max_label = 4;
    char label[96];
    for (int task = 0; task < rg_task_count(); task++)
        if (t->n_lens[task]) {
            n_tasks++;
            if (n_rows_of(t, task) > max_rows) max_rows = n_rows_of(t, task);
            if (t->n_lens[task] > max_cols) max_cols = t->n_lens[task];
        }
    for (int k = 0; k < t->n_rows; k++) {
        size_t n = glyphs(eng_row_label(&t->rows[k], label, sizeof label)) + 2; /* and " ✗" */
        if (n > max_label) max_label = n;
    }
    heat_geom hg = {.label_w = LABEL_PAD_IN + LABEL_GLYPH_IN * (double)max_label, .cell_w_exact = 0.72, .cell_w_token = 0.36,
                    .row_h = 0.19, .top = 0.55, .bottom = 0.95, .n_tasks = n_tasks};
    hg.exact_w = hg.label_w + hg.cell_w_exact * max_cols + 0.12;
    hg.w = hg.exact_w + 0.12 + hg.cell_w_token * max_cols + 0.75;
    hg.h = (hg.top + hg.bottom + hg.row_h * max_rows) * n_tasks;
    eng_out_printf(&g, "# extrapolation.gp: heatmaps of the report (data: extrapolation.dat, one block per task)\n");
    eng_plot_terminal(&g, "extrapolation", hg.w, hg.h);
    eng_out_printf(&g, "set datafile missing 'nan'\nset palette defined (0 '#ffffff', 0.25 "
                      "'#c6dbef', 0.5 '#6baed6', 0.75 '#2171b5', 1 '#08306b')\nset cbrange [0:1]\n"
                      "set cbtics 0.25 font ',7'\nset tics scale 0\nset multiplot\n");
    int block = 0;
    for (int task = 0; task < rg_task_count(); task++) {
        if (!t->n_lens[task]) continue;
        eng_out_printf(&d, "# %s: column row exact_mean token_mean exact_label token_label\n", rg_task_name((rg_task)task));
        for (int k = 0, r = 0; k < t->n_rows; k++) {
            const eng_row *row = &t->rows[k];
            if (row->task != (rg_task)task) continue;
            for (int j = 0; j < t->n_lens[task]; j++) {
                eng_stat e, a;
                eng_table_cell(t, row, t->lens[task][j], true, &e, NULL);
                eng_table_cell(t, row, t->lens[task][j], false, &a, NULL);
                if (e.n == 0) eng_out_printf(&d, "%d %d nan nan \"n/a\" \"n/a\"\n", j, r);
                else eng_out_printf(&d, "%d %d %.6f %.6f \"%.2f %d/%d\" \"%.2f\"\n", j, r, e.mean, a.mean, e.mean, e.k,
                                   e.n, a.mean);
            }
            r++;
        }
        eng_out_printf(&d, "\n\n");
        heat_panel(&g, t, task, block, block, true, &hg);
        heat_panel(&g, t, task, block, block, false, &hg);
        block++;
    }
    eng_out_printf(&g, "unset multiplot\n");
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}

