/* plot_curves.c: the per-position and over-training figures, drawn by gnuplot through gnuplot.c's eng_gnuplot
 * (same checks, same SVG style), each with its .dat and .gp kept beside it:
 * - positions_<task>.svg (tasks with the per-position view): top, the accuracy of each output position (1..G, the
 *   answer's G = target_len(n) tokens: 1..n+1 for the ordering tasks, n+1 the EOS; mean over seeds) at the
 *   window's test lengths (ceil(1.5 L), 2L, 4L: those the report has per-position counts for); bottom, the fraction
 *   of samples whose first wrong token is at that position. A curve per row (RoPE scaling rows left out), the
 *   training length L marked: a model that fails at exactly position L+1 reads positions (absolute), a smooth
 *   decline reads distances (relative).
 * - over_training_<task>.svg: exact match (left) and token accuracy (right) against the training step, from the
 *   runs' runs/<run>/extrap.csv (step,n,exact_match,token_acc: --extrap-every), averaged over the lengths of a band
 *   (n <= L; L < n <= 1.5 L; n > 1.5 L) and over seeds; a colour per encoding, a dash type per band. Missing logs
 *   are skipped; a malformed one is skipped with a warning naming the file and line. */
#include "engine/plot/plot_curves.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/plot/gnuplot.h"
#include "engine/plot/plot_style.h"
#include "engine/results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PANELS 3
#define MAX_CURVE_STEPS 4096   /* distinct steps per row in over_training (a longer log is cut there) */
#define MAX_LOG_LINES 1000000

static bool plotted_row(const eng_row *r, int task) { return r->task == (rg_task)task && r->ext == RG_ROPE_EXT_NONE; }

/* ------------------------------------------------------------------ positions_<task>.svg */

/* The panels' test lengths: ceil(1.5 L), 2L, 4L among the task's lengths that have counts (else the longest that
 * has). Returns their count. */
static int position_lens(const eng_table *t, int task, int *lens)
{
    int L = t->train_len, want[3] = {(3 * L + 1) / 2, 2 * L, 4 * L}, n = 0, longest = 0;
    double a[ENG_POS_MAX], f[ENG_POS_MAX], all;
    for (int j = 0; j < t->n_lens[task]; j++) {
        int len = t->lens[task][j];
        bool has = false;
        for (int k = 0; k < t->n_rows && !has; k++)
            has = plotted_row(&t->rows[k], task) && eng_cell_positions(t, &t->rows[k], len, a, f, &all) > 0;
        if (!has) continue;
        if (len > L) longest = len;
        for (int q = 0; q < 3; q++)
            if (len == want[q] && n < MAX_PANELS) lens[n++] = len;
    }
    if (n == 0 && longest) lens[n++] = longest;
    return n;
}

int eng_plot_positions(const eng_table *t, int task, const char *dir, char *name, size_t cap)
{
    int lens[MAX_PANELS], n_panels = t->n_lens[task] ? position_lens(t, task, lens) : 0;
    if (!n_panels) return 0;
    const char *cname = rg_task_name((rg_task)task);
    char dname[64];
    snprintf(dname, sizeof dname, "positions_%s.dat", cname);
    snprintf(name, cap, "positions_%s", cname);
    eng_out d, g;
    if (eng_plot_pair_open(dir, name, &d, &g)) return -1;
    int L = t->train_len, block = 0, base[MAX_PANELS], GL = rg_task_target_len((rg_task)task, L);
    eng_out_printf(&g, "# %s: per-position accuracy and first wrong position (data: %s, one block per panel and row)\n"
                      , cname, dname);
    char what[96]; /* the answer: n + 1 tokens (EOS last) for the ordering tasks, the task's target_len otherwise */
    if (GL == L + 1) snprintf(what, sizeof what, "output position n+1 is the EOS");
    else snprintf(what, sizeof what, "an answer of %d output positions at L", GL);
    /* the key once per row of panels, outside the last one (eleven encodings would cover the curves inside) */
    eng_plot_terminal(&g, name, (520.0 * n_panels + 80) / 100 + 1.6, 9); /* plot.c: SVG, PDF and PNG */
    eng_out_printf(&g, "set multiplot layout 2,%d title '%s: where the output breaks (training length L = %d, %s)' "
                      "font ',9'\nset grid lc rgb '#dddddd' lw 0.5 dt 3\n", n_panels, cname, L, what);
    for (int m = 0; m < 2; m++)
        for (int p = 0; p < n_panels; p++) {
            int n = lens[p], G = rg_task_target_len((rg_task)task, n);
            eng_out_printf(&g, "%s\n", p == n_panels - 1 ? "set key outside right top vertical font ',8'" : "unset key");
            eng_out_printf(&g, "set title 'n = %d: %s'\nset xlabel 'output position'\nset ylabel '%s'\n"
                              "set xrange [0.5:%d.5]\nset yrange [0:1.02]\nset arrow 1 from %g, graph 0 to %g, graph 1 "
                              "nohead lw 2 dt 2 lc rgb 'black'\nset label 1 'L = %d' at %g, graph 0.95 left offset "
                              "0.5,0\nplot ", n, m ? "first wrong position (fraction of samples)" :
                          "accuracy of each position", m ? "fraction" : "accuracy", G, GL - 0.5, GL - 0.5, L, GL - 0.5);
            int drawn = 0;
            if (m == 0) base[p] = block;
            for (int k = 0; k < t->n_rows; k++) {
                const eng_row *r = &t->rows[k];
                double acc[ENG_POS_MAX], fw[ENG_POS_MAX], all;
                if (!plotted_row(r, task) || eng_cell_positions(t, r, n, acc, fw, &all) == 0) continue;
                char label[96];
                if (m == 0) { /* the data once, for the top panels; the bottom ones read column 3 */
                    eng_out_printf(&d, "# %s %s n=%d: position accuracy first_wrong\n", cname,
                                  eng_row_label(r, label, sizeof label), n);
                    for (int q = 0; q < G; q++) eng_out_printf(&d, "%d %.6g %.6g\n", q + 1, acc[q], fw[q]);
                    eng_out_printf(&d, "\n\n");
                }
                int idx = base[p] + drawn;
                eng_out_printf(&g, "%s'%s' index %d using 1:%d with linespoints pt 7 ps 0.4 lw 1.5 dt %d lc rgb '%s' "
                                  "title '%s'", drawn ? ", \\\n     " : "", dname, idx, m ? 3 : 2, 1 + (int)r->variant,
                              eng_plot_colour(r->pos), eng_row_label(r, label, sizeof label));
                drawn++;
            }
            eng_out_printf(&g, "\n");
            if (m == 0) block += drawn;
        }
    eng_out_printf(&g, "unset multiplot\n");
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}

/* ------------------------------------------------------------------ over_training_<task>.svg */

/* A row's curves: per distinct step, per band, the sums over seeds of each seed's band mean, and their counts. */
typedef struct {
    int n_steps;
    double step[MAX_CURVE_STEPS];
    double sum[MAX_CURVE_STEPS][3][2];
    int cnt[MAX_CURVE_STEPS][3];
} row_curves;

static int band_of(int n, int L) { return n <= L ? 0 : 2 * n <= 3 * L + 1 ? 1 : 2; }

/* One value of a CSV field: 1 a number, 0 empty, -1 not a number. */
static int field(const char *s, const char *end, double *v)
{
    if (s == end) return 0;
    char *stop;
    *v = strtod(s, &stop);
    return stop == end ? 1 : -1;
}

/* Adds one run's extrap.csv into c: per step the band means of that run. 1 read, 0 no file, -1 malformed (a warning
 * naming the file and line). */
static int add_log(row_curves *c, const char *path, int L)
{
    FILE *f = eng_fopen_read(path);
    if (!f) return 0;
    char line[256];
    long lineno = 1;
    const char *why = NULL;
    double cur = -1, bs[3][2] = {{0}};
    int bn[3] = {0};
    if (!fgets(line, sizeof line, f) || strncmp(line, "step,n,exact_match,token_acc", 28) != 0)
        why = "not a step,n,exact_match,token_acc header";
    for (bool more = !why; more;) {
        char *ok = fgets(line, sizeof line, f);
        double step = -2, n = 0, em = 0, acc = 0;
        if (ok) {
            if (++lineno > MAX_LOG_LINES) { why = "too many lines"; break; }
            if (!strchr(line, '\n') && !feof(f)) { why = "line too long"; break; }
            line[strcspn(line, "\r\n")] = 0;
            char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL, *c3 = c2 ? strchr(c2 + 1, ',') : NULL;
            if (!c3 || strchr(c3 + 1, ',')) { why = "not 4 fields"; break; }
            int fs = field(line, c1, &step), fn = field(c1 + 1, c2, &n), fe = field(c2 + 1, c3, &em),
                fa = field(c3 + 1, c3 + 1 + strlen(c3 + 1), &acc);
            if (fs != 1 || fn != 1 || !(step >= 0 && step <= 1e12) || !(n >= 1 && n <= RG_TASK_MAX_N) || fe < 0 ||
                fa < 0 || fe != fa || (fe && !(em >= 0 && em <= 1 && acc >= 0 && acc <= 1))) {
                why = "a value out of range";
                break;
            }
            if (fe == 0) continue; /* n/a at this length */
        }
        if (cur >= 0 && step != cur) { /* the previous step is complete: add its band means */
            int s = 0;
            while (s < c->n_steps && c->step[s] != cur) s++;
            if (s == c->n_steps && s < MAX_CURVE_STEPS) c->step[c->n_steps++] = cur;
            for (int b = 0; s < c->n_steps && b < 3; b++)
                if (bn[b]) {
                    c->sum[s][b][0] += bs[b][0] / bn[b];
                    c->sum[s][b][1] += bs[b][1] / bn[b];
                    c->cnt[s][b]++;
                }
            memset(bs, 0, sizeof bs);
            memset(bn, 0, sizeof bn);
        }
        if (!ok) break;
        int b = band_of((int)n, L);
        bs[b][0] += em;
        bs[b][1] += acc;
        bn[b]++;
        cur = step;
    }
    fclose(f);
    if (why) {
        eng_err("warning: skipping the log %s: line %ld: %s\n", path, lineno, why);
        return -1;
    }
    return 1;
}

static int cmp_step(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

/* Writes the row's blocks (one per band with data: step exact token, ascending) into d; sets has[b]. */
static void write_row_blocks(eng_out *d, const row_curves *c, const char *label, bool *has)
{
    static const char *const bands[3] = {"n <= L", "L < n <= 1.5L", "n > 1.5L"};
    int order[MAX_CURVE_STEPS];
    double keys[MAX_CURVE_STEPS];
    memcpy(keys, c->step, sizeof(double) * (size_t)c->n_steps);
    qsort(keys, (size_t)c->n_steps, sizeof *keys, cmp_step);
    for (int i = 0; i < c->n_steps; i++)
        for (int s = 0; s < c->n_steps; s++)
            if (c->step[s] == keys[i]) { order[i] = s; break; }
    for (int b = 0; b < 3; b++) {
        eng_out_printf(d, "# %s, %s: step exact_match token_acc (means over the band's lengths, then seeds)\n", label,
                      bands[b]);
        has[b] = false;
        for (int i = 0; i < c->n_steps; i++) {
            int s = order[i];
            if (!c->cnt[s][b]) continue;
            eng_out_printf(d, "%.0f %.6g %.6g\n", c->step[s], c->sum[s][b][0] / c->cnt[s][b],
                          c->sum[s][b][1] / c->cnt[s][b]);
            has[b] = true;
        }
        if (!has[b]) eng_out_printf(d, "0 NaN NaN\n");
        eng_out_printf(d, "\n\n");
    }
}

static int write_over_training(const eng_table *t, const char *dir, const char *runs_dir, int task, row_curves *c,
                               char *name, size_t cap)
{
    static const int dts[3] = {3, 1, 2};
    const char *cname = rg_task_name((rg_task)task);
    char dname[64], gname[64];
    snprintf(dname, sizeof dname, "over_training_%s.dat", cname);
    snprintf(gname, sizeof gname, "over_training_%s.gp", cname);
    snprintf(name, cap, "over_training_%s", cname);
    eng_out d, g;
    if (eng_plot_pair_open(dir, name, &d, &g)) return -1;
    char plot[2][16384] = {"", ""};
    int block = 0, drawn = 0;
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (!plotted_row(r, task)) continue;
        memset(c, 0, sizeof *c);
        int logs = 0;
        for (int i = 0; i < r->n_runs; i++) {
            char run[128], path[ENG_PATH + 160];
            const eng_result *x = &t->res[r->runs[i]];
            if (x->runs_dir && !x->runs_dir[0]) continue; /* a combined run without logs */
            snprintf(path, sizeof path, "%s/%s/extrap.csv", x->runs_dir ? x->runs_dir : runs_dir,
                     eng_run_name(r->task, r->pos, r->variant, r->size, x->seed, run, sizeof run));
            logs += add_log(c, path, t->train_len) > 0;
        }
        if (!logs || !c->n_steps) continue;
        char label[96];
        bool has[3];
        eng_row_label(r, label, sizeof label);
        write_row_blocks(&d, c, label, has);
        /* one key entry per encoding (its colour), on the first band present, L<n<=1.5L first; the title says
         * which dash type is which band */
        int keyed = has[1] ? 1 : has[0] ? 0 : 2;
        for (int b = 0; b < 3; b++, block++)
            for (int m = 0; has[b] && m < 2; m++) {
                size_t len = strlen(plot[m]);
                snprintf(plot[m] + len, sizeof plot[m] - len, "%s'%s' index %d using 1:%d with lines lw 1.8 dt %d lc "
                         "rgb '%s' %s%s%s", len ? ", \\\n     " : "", dname, block, 2 + m, dts[b],
                         eng_plot_colour(r->pos), b == keyed ? "title '" : "notitle", b == keyed ? label : "",
                         b == keyed ? "'" : "");
            }
        drawn += has[0] || has[1] || has[2];
    }
    if (!drawn) { eng_plot_pair_discard(&d, &g); return 0; }
    eng_out_printf(&g, "# %s: extrapolation over training (data: %s, per row three blocks: the bands n<=L, L<n<=1.5L, "
                      "n>1.5L)\n", gname, dname);
    eng_plot_terminal(&g, name, 11.6, 4.8); /* plot.c: SVG, PDF and PNG */
    eng_out_printf(&g, "set multiplot layout 1,2 title '%s over training (L = %d): dotted n<=L, solid L<n<=1.5L, "
                      "dashed n>1.5L; first %d samples per length, mean over seeds' font ',9'\n"
                      "set grid lc rgb '#dddddd' lw 0.5 dt 3\nset xlabel 'step'\nset format x '%%.0s%%c'\n"
                      "set yrange [0:1.02]\nunset key\nset ylabel 'exact match'\nplot %s\n"
                      "set key outside right top vertical font ',8'\nset ylabel 'token accuracy'\nplot %s\n"
                      "unset multiplot\n", cname, t->train_len, ENG_CURVE_COUNT, plot[0], plot[1]);
    return eng_plot_pair_close(&d, &g) ? -1 : 1;
}

int eng_plot_over_training(const eng_table *t, int task, const char *dir, const char *runs_dir, char *name,
                           size_t cap)
{
    if (!t->n_lens[task]) return 0;
    row_curves *c = malloc(sizeof *c);
    if (!c) { eng_err("over-training plot: out of memory\n"); return -1; }
    int rc = write_over_training(t, dir, runs_dir, task, c, name, cap);
    free(c);
    return rc;
}
