/* report_grid.c: the grid tasks' part of the report (docs/grids.md). For each grid task of the table:
 *   - report.md: per encoding row, exact match and token accuracy as a matrix over the sizes (rows H x columns W;
 *     frames: grid H x W x number of frames F), each cell the mean over seeds with its 95% t interval and k/N seeds
 *     >= 0.5 (the statistics of the 1-D tables, stats.c; the 1-D tables list the same cells by size);
 *   - heat_<task>.{svg,pdf,png}: those matrices as heatmaps, one panel per encoding, exact match above token
 *     accuracy, the training size outlined;
 *   - cells_<task>.{svg,pdf,png}: per-position accuracy as an image of the grid at up to three test sizes (the
 *     largest, the widest, the tallest): each cell's accuracy pooled over seeds and samples (eng_result.cell_right /
 *     cell_count, counted at evaluation: run.c), the training extent outlined, so it shows where in a larger grid
 *     the model fails;
 *   - grid_cells.csv: those per-cell counts for every size (task, encoding, variant, rope_ext, size, row, col,
 *     count, right; pooled over seeds).
 * The per-cell counts exist only for runs evaluated by this invocation (a report read back has none: no images). */
#include "engine/views/report_grid.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/types.h"
#include "engine/plot/gnuplot.h"
#include "engine/results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the axes of a task's size matrix */

/* x and y categories of the task's sizes: one frame: y = rows H, x = columns W; frames: y = H x W, x = F. */
typedef struct { int nx, ny, x[ENG_MAX_TABLE_LENS], y[ENG_MAX_TABLE_LENS]; bool frames; } size_axes;

static int key_x(const size_axes *a, const rg_grid_shape *s) { return a->frames ? s->frames : s->cols; }
static int key_y(const size_axes *a, const rg_grid_shape *s) { return a->frames ? 10 * s->rows + s->cols : s->rows; }

static void add_key(int *v, int *n, int k)
{
    int i = 0;
    while (i < *n && v[i] < k) i++;
    if (i < *n && v[i] == k) return;
    memmove(v + i + 1, v + i, sizeof(int) * (size_t)(*n - i));
    v[i] = k;
    (*n)++;
}

static void axes_of(const eng_table *t, int task, size_axes *a)
{
    memset(a, 0, sizeof *a);
    rg_grid_shape s;
    for (int j = 0; j < t->n_lens[task]; j++)
        if (rg_task_shape(task, t->lens[task][j], &s) == RG_OK && s.frames > 1) a->frames = true;
    for (int j = 0; j < t->n_lens[task]; j++)
        if (rg_task_shape(task, t->lens[task][j], &s) == RG_OK) {
            add_key(a->x, &a->nx, key_x(a, &s));
            add_key(a->y, &a->ny, key_y(a, &s));
        }
}

/* The size at (x index i, y index k), or 0 when the table has none there. */
static int size_at(const eng_table *t, int task, const size_axes *a, int i, int k)
{
    rg_grid_shape s;
    for (int j = 0; j < t->n_lens[task]; j++)
        if (rg_task_shape(task, t->lens[task][j], &s) == RG_OK && key_x(a, &s) == a->x[i] && key_y(a, &s) == a->y[k])
            return t->lens[task][j];
    return 0;
}

static const char *y_text(const size_axes *a, int k, char *buf, size_t cap)
{
    if (a->frames) snprintf(buf, cap, "%dx%d", a->y[k] / 10, a->y[k] % 10);
    else snprintf(buf, cap, "%d", a->y[k]);
    return buf;
}

/* ------------------------------------------------------------------ report.md */

void eng_md_grid(eng_out *w, const eng_table *t, int task)
{
    size_axes a;
    axes_of(t, task, &a);
    char label[96], yb[16], train[32];
    rg_task_size_text(task, t->train_len, train, sizeof train);
    eng_out_printf(w, "### %s: by grid size (training size %s; figures heat_%s and cells_%s)\n\n", rg_task_name(task),
                  train, rg_task_name(task), rg_task_name(task));
    eng_out_printf(w, "Mean over seeds, 95%% t interval, k/N seeds with exact match >= %.1f; rows: %s, columns: %s. "
                     "Training draws every size up to %s.\n\n", ENG_PASS_EXACT, a.frames ? "grid H x W" : "H (rows)",
                  a.frames ? "F (frames)" : "W (columns)", train);
    for (int r = 0; r < t->n_rows; r++) {
        const eng_row *row = &t->rows[r];
        if (row->task != (rg_task)task) continue;
        for (int e = 1; e >= 0; e--) {
            eng_out_printf(w, "%s, %s\n\n| %s |", eng_row_label(row, label, sizeof label), e ? "exact match" :
                          "token accuracy", a.frames ? "H x W \\ F" : "H \\ W");
            for (int i = 0; i < a.nx; i++) eng_out_printf(w, " %d |", a.x[i]);
            eng_out_printf(w, "\n|---|");
            for (int i = 0; i < a.nx; i++) eng_out_printf(w, "---|");
            eng_out_printf(w, "\n");
            for (int k = 0; k < a.ny; k++) {
                eng_out_printf(w, "| %s |", y_text(&a, k, yb, sizeof yb));
                for (int i = 0; i < a.nx; i++) {
                    int n = size_at(t, task, &a, i, k);
                    eng_stat s = ENG_STAT_NONE;
                    if (n) eng_table_cell(t, row, n, e, &s, NULL);
                    if (s.n == 0) eng_out_printf(w, " |");
                    else if (isnan(s.lo)) eng_out_printf(w, " %.2f (k %d/%d)%s |", s.mean, s.k, s.n, n == t->train_len ? " train" : "");
                    else eng_out_printf(w, " %.2f [%.2f, %.2f] %d/%d%s |", s.mean, s.lo, s.hi, s.k, s.n,
                                       n == t->train_len ? " train" : "");
                }
                eng_out_printf(w, "\n");
            }
            eng_out_printf(w, "\n");
        }
    }
}

/* ------------------------------------------------------------------ per-cell counts */

/* Row r's counts at size n pooled over its runs into count/right [ENG_GRID_CELLS]; false when no run has any. */
static bool pooled_cells(const eng_table *t, const eng_row *r, int n, double *count, double *right)
{
    bool any = false;
    for (int c = 0; c < ENG_GRID_CELLS; c++) count[c] = right[c] = 0;
    for (int i = 0; i < r->n_runs; i++) {
        const eng_result *x = &t->res[r->runs[i]];
        for (int j = 0; j < x->n_lens; j++)
            if (x->lens[j] == n)
                for (int c = 0; c < ENG_GRID_CELLS; c++) {
                    count[c] += x->cell_count[j][c];
                    right[c] += x->cell_right[j][c];
                    any |= x->cell_count[j][c] > 0;
                }
    }
    return any;
}

int eng_write_grid_cells_csv(const eng_table *t, const char *dir)
{
    eng_out w;
    if (eng_out_open(&w, dir, "grid_cells.csv")) return -1;
    eng_out_printf(&w, "task,encoding,variant,rope_ext,size,n,row,col,count,right\n");
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (!(rg_task_views(r->task) & RG_TASK_VIEW_GRID)) continue;
        for (int j = 0; j < t->n_lens[r->task]; j++) {
            int n = t->lens[r->task][j];
            double count[ENG_GRID_CELLS], right[ENG_GRID_CELLS];
            if (!pooled_cells(t, r, n, count, right)) continue;
            char ext[48], size[32];
            eng_ext_text(r->ext, r->ext_factor, ext, sizeof ext);
            rg_task_size_text(r->task, n, size, sizeof size);
            for (int c = 0; c < ENG_GRID_CELLS; c++)
                if (count[c] > 0)
                    eng_out_printf(&w, "%s,%s,%s,%s,%s,%d,%d,%d,%.0f,%.0f\n", rg_task_name(r->task), rg_pos_name(r->pos),
                                  eng_variant_name(r->variant), ext, size, n, c / ENG_GRID_SIDE, c % ENG_GRID_SIDE,
                                  count[c], right[c]);
        }
    }
    return eng_out_close(&w);
}

/* ------------------------------------------------------------------ figures */

static int rows_of(const eng_table *t, int task, int *idx)
{
    int n = 0;
    for (int k = 0; k < t->n_rows; k++)
        if (t->rows[k].task == (rg_task)task) idx[n++] = k;
    return n;
}

/* Panel placement: column c of nc, row q of nq (screen fractions, a margin for labels). */
static void place(eng_out *g, int c, int nc, int q, int nq, double W, double H, double left, double top, double bottom)
{
    double pw = (W - left - 0.2) / nc, ph = (H - top - 0.1) / nq;
    double x0 = left + c * pw, y1 = H - top - q * ph;
    eng_out_printf(g, "set lmargin at screen %.4f\nset rmargin at screen %.4f\nset tmargin at screen %.4f\n"
                     "set bmargin at screen %.4f\n", (x0 + 0.35) / W, (x0 + pw - 0.1) / W, (y1 - 0.3) / H,
                  (y1 - ph + bottom) / H);
}

static const char *PALETTE = "set palette defined (0 '#ffffff', 0.25 '#c6dbef', 0.5 '#6baed6', 0.75 '#2171b5', "
                             "1 '#08306b')\nset cbrange [0:1]\nunset colorbox\nset tics scale 0\n";

/* heat_<task>: exact match (top) and token accuracy (bottom) over the size matrix, a panel per encoding row. */
int eng_plot_grid_heat(const eng_table *t, int task, const char *dir, char *base, size_t cap)
{
    snprintf(base, cap, "heat_%s", rg_task_name(task));
    size_axes a;
    axes_of(t, task, &a);
    int idx[256], nr = rows_of(t, task, idx);
    eng_out d, g;
    if (eng_plot_pair_open(dir, base, &d, &g)) return -1;
    double cw = 0.5 * (a.nx > 4 ? a.nx : 4), W = 0.3 + nr * (cw + 0.55), H = 0.5 + 2 * (0.42 * a.ny + 0.9);
    eng_out_printf(&g, "# %s.gp: %s exact match (top) and token accuracy (bottom) by grid size (data %s.dat)\n", base,
                  rg_task_name(task), base);
    eng_plot_terminal(&g, base, W, H);
    eng_out_printf(&g, "set datafile missing 'nan'\n%sset multiplot\n", PALETTE);
    char label[96], yb[16], train[32];
    rg_task_size_text(task, t->train_len, train, sizeof train);
    rg_grid_shape ts;
    rg_task_shape(task, t->train_len, &ts);
    int block = 0;
    for (int e = 1; e >= 0; e--)
        for (int q = 0; q < nr; q++) {
            const eng_row *row = &t->rows[idx[q]];
            eng_out_printf(&d, "# %s %s: x y mean label\n", eng_row_label(row, label, sizeof label),
                          e ? "exact_match" : "token_acc");
            for (int k = 0; k < a.ny; k++)
                for (int i = 0; i < a.nx; i++) {
                    int n = size_at(t, task, &a, i, k);
                    eng_stat s = ENG_STAT_NONE;
                    if (n) eng_table_cell(t, row, n, e, &s, NULL);
                    if (s.n == 0) eng_out_printf(&d, "%d %d nan \"\"\n", i, k);
                    else if (e) eng_out_printf(&d, "%d %d %.6f \"%.2f\\n%d/%d\"\n", i, k, s.mean, s.mean, s.k, s.n);
                    else eng_out_printf(&d, "%d %d %.6f \"%.2f\"\n", i, k, s.mean, s.mean);
                }
            eng_out_printf(&d, "\n\n");
            place(&g, q, nr, 1 - e, 2, W, H, 0.3, 0.45, 0.55);
            eng_out_printf(&g, "set title \"%s: %s\" font ',8'\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n"
                              "set xlabel '%s' font ',8' offset 0,0.5\nset ylabel '%s' font ',8' offset 1,0\n"
                              "set xtics (", label, e ? "exact match, k/N" : "token accuracy",
                          a.nx - 1, a.ny - 1, a.frames ? "frames F" : "columns W", a.frames ? "H x W" : "rows H");
            for (int i = 0; i < a.nx; i++) eng_out_printf(&g, "%s\"%d\" %d", i ? ", " : "", a.x[i], i);
            eng_out_printf(&g, ") font ',7'\nset ytics (");
            for (int k = 0; k < a.ny; k++) eng_out_printf(&g, "%s\"%s\" %d", k ? ", " : "", y_text(&a, k, yb, sizeof yb), k);
            eng_out_printf(&g, ") font ',7'\nunset object\n");
            /* the training sizes: x and y keys up to the training size's */
            int xi = -1, yi = -1;
            for (int i = 0; i < a.nx; i++) xi = a.x[i] <= (a.frames ? ts.frames : ts.cols) ? i : xi;
            for (int k = 0; k < a.ny; k++) yi = (a.frames ? a.y[k] == 10 * ts.rows + ts.cols : a.y[k] <= ts.rows) ? k : yi;
            if (xi >= 0 && yi >= 0 && !a.frames)
                eng_out_printf(&g, "set object 1 rect from -0.5,-0.5 to %d.5,%d.5 fs empty border lc rgb '#d55e00' "
                                  "lw 2 front\n", xi, yi);
            eng_out_printf(&g, "plot '%s.dat' index %d using 1:2:3 with image pixels notitle, \\\n"
                              "     '' index %d using 1:2:4:($3 > 0.6 ? 0xffffff : 0) with labels tc rgb variable "
                              "font ',6' notitle\n", base, block, block);
            block++;
        }
    eng_out_printf(&g, "unset multiplot\n");
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}

/* Up to three sizes to draw as images: the largest area, the widest, the tallest (one frame; frames: the largest
 * grid at the most frames). */
static int image_sizes(const eng_table *t, int task, int *out)
{
    int n = 0, best[3] = {0, 0, 0};
    double score[3] = {-1, -1, -1};
    rg_grid_shape s;
    for (int j = 0; j < t->n_lens[task]; j++) {
        if (rg_task_shape(task, t->lens[task][j], &s)) continue;
        double v[3] = {s.rows * s.cols * 100.0 + s.frames, s.cols * 100.0 - s.rows, s.rows * 100.0 - s.cols};
        for (int k = 0; k < 3; k++)
            if (v[k] > score[k]) { score[k] = v[k]; best[k] = t->lens[task][j]; }
    }
    for (int k = 0; k < 3; k++) {
        bool dup = false;
        for (int i = 0; i < n; i++) dup |= out[i] == best[k];
        if (best[k] && !dup) out[n++] = best[k];
    }
    return n;
}

/* cells_<task>: per-cell accuracy images. */
int eng_plot_grid_cells(const eng_table *t, int task, const char *dir, char *base, size_t cap)
{
    snprintf(base, cap, "cells_%s", rg_task_name(task));
    int idx[256], nr = rows_of(t, task, idx), sizes[3], ns = image_sizes(t, task, sizes), any = 0;
    double count[ENG_GRID_CELLS], right[ENG_GRID_CELLS];
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < ns; j++) any |= pooled_cells(t, &t->rows[idx[q]], sizes[j], count, right);
    if (!any) return 0;
    char label[96], size[32], train[32];
    eng_out d, g;
    if (eng_plot_pair_open(dir, base, &d, &g)) return -1;
    double W = 0.3 + ns * 2.3, H = 0.5 + nr * 2.1;
    rg_grid_shape ts;
    rg_task_shape(task, t->train_len, &ts);
    rg_task_size_text(task, t->train_len, train, sizeof train);
    eng_out_printf(&g, "# %s.gp: %s per-cell accuracy of the target grid, pooled over seeds and samples (data %s.dat)"
                      "\n", base, rg_task_name(task), base);
    eng_plot_terminal(&g, base, W, H);
    eng_out_printf(&g, "set datafile missing 'nan'\n%sset multiplot\nset size ratio -1\n", PALETTE);
    int block = 0;
    for (int q = 0; q < nr; q++)
        for (int j = 0; j < ns; j++) {
            rg_grid_shape s;
            rg_task_shape(task, sizes[j], &s);
            pooled_cells(t, &t->rows[idx[q]], sizes[j], count, right);
            eng_out_printf(&d, "# %s %s: col row accuracy\n", eng_row_label(&t->rows[idx[q]], label, sizeof label),
                          rg_task_size_text(task, sizes[j], size, sizeof size));
            for (int r = 0; r < s.rows; r++)
                for (int c = 0; c < s.cols; c++) {
                    double n = count[r * ENG_GRID_SIDE + c];
                    if (n > 0) eng_out_printf(&d, "%d %d %.6f \"%.2f\"\n", c, r, right[r * ENG_GRID_SIDE + c] / n,
                                             right[r * ENG_GRID_SIDE + c] / n);
                    else eng_out_printf(&d, "%d %d nan \"\"\n", c, r);
                }
            eng_out_printf(&d, "\n\n");
            place(&g, j, ns, q, nr, W, H, 0.3, 0.4, 0.35);
            eng_out_printf(&g, "set title \"%s at %s (training %s outlined)\\ncell accuracy: white 0 .. dark blue 1\" font ',8'\nset xrange [-0.5:%d.5]\n"
                              "set yrange [%d.5:-0.5]\nset xtics 1 font ',6'\nset ytics 1 font ',6'\nunset xlabel\n"
                              "unset ylabel\nunset object\n", label, size, train, s.cols - 1, s.rows - 1);
            eng_out_printf(&g, "set object 1 rect from -0.5,-0.5 to %d.5,%d.5 fs empty border lc rgb '#d55e00' lw 2 "
                              "front\n", (ts.cols < s.cols ? ts.cols : s.cols) - 1, (ts.rows < s.rows ? ts.rows : s.rows) - 1);
            eng_out_printf(&g, "plot '%s.dat' index %d using 1:2:3 with image pixels notitle\n", base, block);
            block++;
        }
    eng_out_printf(&g, "unset multiplot\n");
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}
