/* plot.c: the report's figures, drawn by gnuplot, each as SVG, PDF (pdfcairo) and PNG (pngcairo, 150 dpi) from one
 * script, at the physical size a paper prints them (7 in wide for the curves and losses; 9 pt text, 7 pt in the
 * heatmap cells):
 * - extrapolation.{svg,pdf,png}: the heatmaps (plot_heat.c).
 * - curves_<task>.*: exact match and token accuracy against n, a row of two panels per group of at most
 *   ENG_PLOT_MAX_SERIES series: the encodings, the training variants, and each RoPE layout (and variant) with its
 *   scaling types; the mean line, the 95% t band and every seed's value as a point; the training length is a
 *   labelled black line over a shaded trained range. One legend per row, as wide as its longest label.
 * - loss_<task>.*: the training loss of every run from its log runs/<run>/train.csv (eng_run_name) (columns
 *   step,loss,...), one colour per encoding; missing logs are skipped.
 * Each figure's data (.dat) and script (.gp) are kept beside it: `gnuplot curves_copy.gp` in the folder redraws the
 * SVG, `gnuplot -e "fmt='pdf'" curves_copy.gp` the PDF. gnuplot runs with fork/exec and an argument vector (no
 * shell), in the output folder, and reads only file names made here (task and encoding names), so no user string
 * reaches a shell or gnuplot's parser. Its output goes to a temporary name and is renamed into place only when
 * complete (the SVG's closing tag, the PDF's %%EOF, the PNG's IEND chunk are present). */
#include "engine/plot/plot.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/plot/gnuplot.h"
#include "engine/plot/plot_style.h"
#include "engine/results/results.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ENG_PLOT_MAX_SERIES 9   /* series per panel: more are split into panels of their own */

/* ------------------------------------------------------------------ curves_<task>.* */

/* The group of a row's panel: 0 the encodings (base, no scaling), 1 the training variants (no scaling), then per
 * variant and rotary encoding (RG_POS_ROTARY) its plain row with its scaling types: 2 + RG_POS_MAX variant + pos. */
#define N_GROUPS (2 + RG_POS_MAX * ENG_VAR_COUNT)
#define MAX_CURVE_PANELS 96
static int group_of(const eng_row *r)
{
    if (r->ext != RG_ROPE_EXT_NONE) return 2 + RG_POS_MAX * (int)r->variant + (int)r->pos;
    return r->variant == ENG_VAR_BASE ? 0 : 1;
}

/* The panels of a task: panel[k] of each row k of the task (-1 for other tasks), their titles; a group of more than
 * ENG_PLOT_MAX_SERIES rows is split into panels of equal size. Plain RoPE rows are drawn in their group and, when
 * their layout has scaling rows, again in that layout's panel (in_also). Returns the number of panels. */
typedef struct {
    int n;
    int first_group[MAX_CURVE_PANELS];
    char title[MAX_CURVE_PANELS][96];
} panels;

static bool in_scaling_group(const eng_table *t, const eng_row *r, int grp)
{
    if (r->ext != RG_ROPE_EXT_NONE || !eng_pos_rotary(r->pos)) return false;
    if (grp != 2 + RG_POS_MAX * (int)r->variant + (int)r->pos) return false;
    for (int k = 0; k < t->n_rows; k++)
        if (t->rows[k].task == r->task && group_of(&t->rows[k]) == grp) return true;
    return false;
}

/* Fills panel_of[2 * k + slot] (slot 0 its own group, slot 1 a scaling group it also appears in; -1 none). */
static void make_panels(const eng_table *t, int task, int *panel_of, panels *pl)
{
    pl->n = 0;
    for (int k = 0; k < 2 * t->n_rows; k++) panel_of[k] = -1;
    for (int grp = 0; grp < N_GROUPS; grp++) {
        int n = 0;
        for (int k = 0; k < t->n_rows; k++)
            if (t->rows[k].task == (rg_task)task)
                n += group_of(&t->rows[k]) == grp || in_scaling_group(t, &t->rows[k], grp);
        int chunks = (n + ENG_PLOT_MAX_SERIES - 1) / ENG_PLOT_MAX_SERIES, per = n ? (n + chunks - 1) / chunks : 1, i = 0;
        if (!n || pl->n + chunks > MAX_CURVE_PANELS) continue; /* (a table of far more rows than a plot shows) */
        for (int k = 0; k < t->n_rows; k++) {
            const eng_row *r = &t->rows[k];
            if (r->task != (rg_task)task) continue;
            bool own = group_of(r) == grp, also = in_scaling_group(t, r, grp);
            if (own || also) panel_of[2 * k + !own] = pl->n + i++ / per;
        }
        char lay[64];
        for (int c = 0; c < chunks; c++) {
            const eng_row *any = NULL;
            for (int k = 0; k < t->n_rows && !any; k++)
                if (t->rows[k].task == (rg_task)task && group_of(&t->rows[k]) == grp) any = &t->rows[k];
            if (grp == 0) snprintf(lay, sizeof lay, "encodings");
            else if (grp == 1) snprintf(lay, sizeof lay, "training variants");
            else snprintf(lay, sizeof lay, "%s%s%s and its scaling types", rg_pos_name(any->pos),
                          any->variant == ENG_VAR_THETA500K || any->variant == ENG_VAR_BF16ANGLES ? " " : "",
                          any->variant == ENG_VAR_THETA500K ? "θ=500k" : any->variant == ENG_VAR_RAND ? "+rand"
                          : any->variant == ENG_VAR_BF16ANGLES ? "bf16 angles" : "");
            if (chunks > 1) snprintf(pl->title[pl->n], sizeof pl->title[0], "%s (%d of %d)", lay, c + 1, chunks);
            else snprintf(pl->title[pl->n], sizeof pl->title[0], "%s", lay);
            pl->first_group[pl->n++] = grp;
        }
    }
}

/* One subplot: panel p of a row, exact match (left, no legend) or token accuracy (right, the legend). */
static void curve_panel(eng_out *g, const eng_table *t, int task, int p, const panels *pl, const int *panel_of,
                        bool exact, const int *block_of)
{
    const char *cname = rg_task_name((rg_task)task);
    eng_out_printf(g, "set ylabel '%s' font ',8' offset 1.2,0\n%s\nplot ",
                  exact ? "exact match (fraction)" : "token accuracy (fraction)",
                  exact ? "unset key" : "");
    int ycol = exact ? 2 : 5, s = 0;
    bool scaling = pl->first_group[p] >= 2;
    char label[96];
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (r->task != (rg_task)task || (panel_of[2 * k] != p && panel_of[2 * k + 1] != p)) continue;
        /* scaling panels: the plain row keeps its encoding's colour, each scaling type gets its own */
        bool own = !scaling || r->ext == RG_ROPE_EXT_NONE;
        const char *c = own ? eng_plot_colour(r->pos) : eng_plot_scaling_colour(r->ext);
        int marker = own ? eng_plot_marker(r->pos) : eng_plot_scaling_marker(r->ext);
        int b = block_of[k];
        eng_out_printf(g, "%s'curves_%s.dat' index %d using 1:%d:%d with filledcurves fs transparent solid 0.12 "
                         "noborder lc rgb '%s' notitle, \\\n", s ? ", \\\n     " : "", cname, b, ycol + 1, ycol + 2, c);
        eng_out_printf(g, "     '' index %d using 1:%d with linespoints lw 1.5 pt %d ps 0.7 dt %d lc rgb '%s' title '%s', "
                         "\\\n", b, ycol, marker, 1 + (int)r->variant, c,
                      eng_row_label(r, label, sizeof label));
        eng_out_printf(g, "     '' index %d using 1:%d with points pt 6 ps 0.35 lc rgb '%s' notitle", b + 1,
                      exact ? 2 : 3, c);
        s++;
    }
    eng_out_printf(g, "\n");
}

/* curves_<task>.dat: per row of the task two blocks (block_of[k] and the next): the means with their 95% t
 * intervals, then every seed's values (n jittered by row so that rows' seeds stand side by side). */
static void write_curves_dat(eng_out *d, const eng_table *t, int task, double span, int *block_of)
{
    const char *cname = rg_task_name((rg_task)task);
    int block = 0, nr = 0;
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (r->task != (rg_task)task) continue;
        block_of[k] = block;
        block += 2;
        char label[96];
        double *ve = malloc(sizeof(double) * 2 * (size_t)r->n_runs), *va = ve ? ve + r->n_runs : NULL;
        if (!ve) break;
        eng_out_printf(d, "# %s %s: n exact_mean exact_lo exact_hi token_mean token_lo token_hi\n", cname,
                      eng_row_label(r, label, sizeof label));
        for (int j = 0; j < t->n_lens[task]; j++) {
            eng_stat e, a;
            eng_table_cell(t, r, t->lens[task][j], true, &e, NULL);
            eng_table_cell(t, r, t->lens[task][j], false, &a, NULL);
            eng_out_printf(d, "%d %.6g %.6g %.6g %.6g %.6g %.6g\n", t->lens[task][j], e.mean, e.lo, e.hi, a.mean, a.lo,
                          a.hi);
        }
        eng_out_printf(d, "\n\n# %s per seed: n exact token (n jittered for visibility)\n", label);
        for (int j = 0; j < t->n_lens[task]; j++) {
            eng_stat s;
            eng_table_cell(t, r, t->lens[task][j], true, &s, ve);
            eng_table_cell(t, r, t->lens[task][j], false, &s, va);
            double jit = 0.008 * span * ((nr % 8) - 3.5); /* rows' seeds side by side, not on top */
            for (int i = 0; i < r->n_runs; i++)
                if (isfinite(ve[i])) eng_out_printf(d, "%.3f %.6g %.6g\n", t->lens[task][j] + jit, ve[i], va[i]);
        }
        eng_out_printf(d, "\n\n");
        free(ve);
        nr++;
    }
}

/* curves_<task>.gp (gname): the page, the axes, the shaded trained range and line, then a row of two subplots
 * (exact match; token accuracy with the legend, as wide as its longest label) per panel, reading dname's blocks. */
static void write_curves_gp(eng_out *g, const eng_table *t, int task, const char *gname, const char *dname,
                            const char *base, double span, const int *block_of, const int *panel_of, const panels *pl)
{
    int lo = t->lens[task][0], hi = t->lens[task][t->n_lens[task] - 1], L = t->train_len;
    size_t max_label = 4;
    char label[96];
    for (int k = 0; k < t->n_rows; k++)
        if (t->rows[k].task == (rg_task)task) {
            size_t n = strlen(eng_row_label(&t->rows[k], label, sizeof label));
            if (n > max_label) max_label = n;
        }
    double pad = 0.06 * span + 0.5, W = 7.0, row_h = 2.5, H = row_h * pl->n, lm = 0.78, key_w = 0.6 + 0.08 * max_label;
    double gap = 0.05, pw = (W - 2 * lm - gap - key_w) / 2;
    eng_out_printf(g, "# %s: curves of the report (data: %s; per row: a block of means and 95%% t intervals, then "
                      "a block of per-seed values)\n", gname, dname);
    eng_plot_terminal(g, base, W, H);
    eng_out_printf(g, "set datafile missing 'nan'\nset multiplot\nset xlabel 'test length n (symbols)' offset 0,0.4\n"
                     "set xrange [%g:%g]\nset yrange [-0.02:1.08]\nset ytics 0.25 font ',8'\nset xtics font ',8'\n"
                     "set xtics (", lo - pad, hi + pad);
    /* every test length gets a tic; a label only outside the dense window L+1..1.5L (its numbers would print over
     * each other) and where it clears the last label by ~0.3 in of the 2.3 in panel: the others are minor tics */
    for (int j = 0, last = INT_MIN / 2; j < t->n_lens[task]; j++) {
        int x = t->lens[task][j];
        bool labelled = x - last >= 0.12 * span && (x <= L || 2 * x >= 3 * L);
        if (labelled) last = x;
        if (labelled) eng_out_printf(g, "%s\"%d\" %d", j ? ", " : "", x, x);
        else eng_out_printf(g, "%s\"\" %d 1", j ? ", " : "", x);
    }
    eng_out_printf(g, ")\nset grid lc rgb '#dddddd' lw 0.5 dt 3\nset border lc rgb '#444444'\n");
    if (L >= lo - pad && L <= hi + pad)
        eng_out_printf(g, "set object 1 rect from graph 0, graph 0 to first %d, graph 1 fc rgb '#f2f2f2' fs solid "
                          "noborder behind\nset arrow 1 from %d, graph 0 to %d, graph 1 nohead lw 1.5 dt 2 lc rgb "
                          "'black' front\nset label 1 'training length n = %d' at %d, graph 0.5 rotate by 90 center "
                          "offset -0.9,0 font ',7' front\n", L, L, L, L, L);
    for (int p = 0; p < pl->n; p++)
        for (int m = 0; m < 2; m++) {
            double x0 = lm + m * (pw + lm + gap), y1 = 1 - p * row_h / H;
            if (m == 1) /* the legend right of the token-accuracy panel, at its top */
                eng_out_printf(g, "set key at screen %.4f, screen %.4f left top reverse Left font ',8' spacing 1.0 "
                                 "samplen 2 maxcols 1\n", (x0 + pw + 0.08) / W, y1 - 0.32 / H);
            eng_out_printf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\nset tmargin at screen %.4f\n"
                             "set bmargin at screen %.4f\n", x0 / W, (x0 + pw) / W, y1 - 0.32 / H,
                          y1 - (row_h - 0.5) / H);
            if (m == 0) /* the row's title: the task and the panel's series */
                eng_out_printf(g, "set label 2 '%s: %s' at screen %.4f, screen %.4f center font ',10'\n",
                              rg_task_name((rg_task)task), pl->title[p], (lm + pw + 0.6 * lm) / W, y1 - 0.14 / H);
            else eng_out_printf(g, "unset label 2\n");
            curve_panel(g, t, task, p, pl, panel_of, m == 0, block_of);
        }
    eng_out_printf(g, "unset multiplot\n");
}

int eng_plot_curves(const eng_table *t, int task, const char *dir, char *base, size_t cap)
{
    const char *cname = rg_task_name((rg_task)task);
    char dname[64], gname[64];
    snprintf(dname, sizeof dname, "curves_%s.dat", cname);
    snprintf(gname, sizeof gname, "curves_%s.gp", cname);
    snprintf(base, cap, "curves_%s", cname);
    if (!t->n_lens[task]) return 0;
    eng_out d, g;
    if (eng_plot_pair_open(dir, base, &d, &g)) return -1;
    double span = t->lens[task][t->n_lens[task] - 1] - t->lens[task][0];
    if (span < 1) span = 1;
    int *block_of = calloc((size_t)t->n_rows * 3, sizeof *block_of), *panel_of = block_of + t->n_rows;
    panels *pl = malloc(sizeof *pl);
    if (!block_of || !pl) { free(block_of); free(pl); eng_plot_pair_discard(&d, &g); return -1; }
    make_panels(t, task, panel_of, pl);
    write_curves_dat(&d, t, task, span, block_of);
    write_curves_gp(&g, t, task, gname, dname, base, span, block_of, panel_of, pl);
    free(block_of);
    free(pl);
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}

/* ------------------------------------------------------------------ loss_<task>.* */

/* Copies the (step, loss) columns of one run's log into d as a block. Returns the number of points, 0 when the log
 * does not exist, -1 when it is malformed (a warning naming the file and line; the figure goes on without it). */
static int copy_log(eng_out *d, const char *path)
{
    FILE *f = eng_fopen_read(path);
    if (!f) return 0;
    char line[1024];
    int c_step = -1, c_loss = -1, n = 0;
    long lineno = 1;
    const char *why = NULL;
    if (!fgets(line, sizeof line, f)) why = "empty";
    else {
        line[strcspn(line, "\r\n")] = 0;
        int c = 0;
        for (char *tok = line, *end; tok; tok = end ? end + 1 : NULL, c++) {
            end = strchr(tok, ',');
            size_t len = end ? (size_t)(end - tok) : strlen(tok);
            if (len == 4 && strncmp(tok, "step", 4) == 0) c_step = c;
            if (len == 4 && strncmp(tok, "loss", 4) == 0) c_loss = c;
        }
        if (c_step < 0 || c_loss < 0) why = "no step and loss columns in the header";
    }
    while (!why && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) { why = "line too long"; break; }
        double v[2] = {NAN, NAN};
        int c = 0;
        for (char *tok = line, *end; tok && c <= (c_step > c_loss ? c_step : c_loss); c++) {
            char *stop;
            if (c == c_step || c == c_loss) {
                double x = strtod(tok, &stop);
                if (stop == tok || (*stop != ',' && *stop != '\n' && *stop != '\r' && *stop)) { why = "not a number"; break; }
                v[c == c_step ? 0 : 1] = x;
            }
            end = strchr(tok, ',');
            tok = end ? end + 1 : NULL;
        }
        if (why) break;
        if (!(v[0] >= 0 && v[0] <= 1e12) || isnan(v[1])) { why = "missing or out-of-range step or loss"; break; }
        if (isfinite(v[1]) && v[1] > 0) { eng_out_printf(d, "%.0f %.6g\n", v[0], v[1]); n++; }
        if (lineno > 10000000) { why = "more than 10^7 lines"; break; }
    }
    fclose(f);
    if (why) {
        eng_err("warning: skipping the loss log %s: line %ld: %s\n", path, lineno, why);
        return -1;
    }
    return n;
}

int eng_plot_loss(const eng_table *t, int task, const char *dir, const char *runs_dir, char *base, size_t cap)
{
    const char *cname = rg_task_name((rg_task)task);
    char dname[64], gname[64];
    snprintf(dname, sizeof dname, "loss_%s.dat", cname);
    snprintf(gname, sizeof gname, "loss_%s.gp", cname);
    snprintf(base, cap, "loss_%s", cname);
    if (!t->n_lens[task]) return 0;
    eng_out d, g;
    if (eng_plot_pair_open(dir, base, &d, &g)) return -1;
    size_t max_label = 4;
    char label[96];
    for (int k = 0; k < t->n_rows; k++)
        if (t->rows[k].task == (rg_task)task && t->rows[k].ext == RG_ROPE_EXT_NONE) {
            size_t n = strlen(eng_row_label(&t->rows[k], label, sizeof label));
            if (n > max_label) max_label = n;
        }
    double W = 7.0, key_w = 0.6 + 0.08 * max_label;
    eng_out_printf(&g, "# %s: training loss of every %s run (data: %s, one block per run, from "
                      "runs/<task>-<pos>[-<variant>]-seed<S>/train.csv)\n", gname, cname, dname);
    eng_plot_terminal(&g, base, W, 3.4);
    eng_out_printf(&g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\nset tmargin at screen 0.88\n"
                      "set title '%s: training loss (every seed, one colour per encoding)' font ',10'\n"
                      "set xlabel 'training step'\nset ylabel 'loss (nats per token, log scale)' font ',8'\n"
                      "set logscale y\nset grid lc rgb '#dddddd' lw 0.5 dt 3\n"
                      "set key at screen %.4f, screen 0.88 left top reverse Left font ',8' spacing 1.0 samplen 2 "
                      "maxcols 1\nplot ", 0.75 / W, (W - key_w) / W, cname, (W - key_w + 0.08) / W);
    int block = 0, drawn = 0;
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (r->task != (rg_task)task || r->ext != RG_ROPE_EXT_NONE) continue;
        char label[96], run[160];
        bool titled = false; /* the row's first drawn seed names it in the key ("alibi", "alibi 128x4") */
        eng_row_label(r, label, sizeof label);
        for (int i = 0; i < r->n_runs; i++) {
            int seed = t->res[r->runs[i]].seed;
            const char *from = t->res[r->runs[i]].runs_dir ? t->res[r->runs[i]].runs_dir : runs_dir;
            if (!from[0]) continue; /* a combined run without logs */
            char path[ENG_PATH + 128];
            snprintf(path, sizeof path, "%s/%s/train.csv", from, eng_run_name((rg_task)task, r->pos, r->variant,
                     r->size, seed, run, sizeof run));
            eng_out_printf(&d, "# %s %s seed %d: step loss\n", cname, label, seed);
            int n = copy_log(&d, path);
            eng_out_printf(&d, "\n\n");
            if (n > 0) { /* one colour per encoding, one dash type per training variant */
                eng_out_printf(&g, "%s'%s' index %d using 1:2 with lines lw 1 dt %d lc rgb '%s' ",
                              drawn ? ", \\\n     " : "", dname, block, 1 + (int)r->variant, eng_plot_colour(r->pos));
                if (titled) eng_out_printf(&g, "notitle");
                else eng_out_printf(&g, "title '%s'", label);
                titled = true;
                drawn++;
            }
            block++;
        }
    }
    eng_out_printf(&g, "\n");
    if (!drawn) { eng_plot_pair_discard(&d, &g); return 0; }
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}
