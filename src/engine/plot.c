/* plot.c: the report's figures, drawn by gnuplot (SVG, white background, 12 pt labels):
 * - extrapolation.svg: per task (a row of panels) two heatmaps, encodings x test lengths, coloured by mean exact
 *   match (printed in each cell with k/N seeds reaching 0.5) and by mean token accuracy; a labelled line separates
 *   the training lengths from the extrapolation ones.
 * - curves_<task>.svg: exact match and token accuracy against n; top the encodings (one colour each), bottom RoPE
 *   and its extensions (one colour per extension, a marker per RoPE variant); the mean line, the 95% t band and
 *   every seed's value as a point; the training length is a labelled black line over a shaded trained range.
 * - loss_<task>.svg: the training loss of every run from its log runs/<run>/train.csv (to_run_name) (columns
 *   step,loss,...), one colour per encoding; missing logs are skipped.
 * Each figure's data (.dat) and script (.gp) are kept beside it: `gnuplot curves_copy.gp` in the folder redraws it.
 * gnuplot runs with fork/exec and an argument vector (no shell), in the output folder, and reads only file names
 * made here (task and encoding names), so no user string reaches a shell or gnuplot's parser. Its output goes to a
 * temporary name and is renamed into place only when complete (the SVG's closing tag is present). */
#include "report.h"
#include "lm_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FONT "sans,12"

/* Okabe-Ito colours (colour-blind safe), yellow darkened for a white background; then extras. */
static const char *const colours[] = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#B59B00", "#0072B2", "#D55E00",
                                      "#CC79A7", "#7F7F7F", "#8C564B"};
static const int markers[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10};
#define N_STYLES 10

static const char *colour_of(int i) { return colours[i % N_STYLES]; }

/* ------------------------------------------------------------------ running gnuplot */

/* Starts gnuplot with argv in dir (stdin and stdout /dev/null): *err_fd reads its stderr, *st_fd an errno when
 * chdir or exec failed (nothing when exec succeeded). Returns the pid, or -1 after a message naming path. */
static pid_t spawn_gnuplot(const char *dir, char *const *argv, const char *path, int *err_fd, int *st_fd)
{
    int errp[2], st[2];
    if (pipe(errp)) { fprintf(stderr, "train_order: cannot draw %s: pipe: %s\n", path, strerror(errno)); return -1; }
    if (pipe(st)) {
        close(errp[0]); close(errp[1]);
        fprintf(stderr, "train_order: cannot draw %s: pipe: %s\n", path, strerror(errno));
        return -1;
    }
    fcntl(st[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* only async-signal-safe calls until exec */
        int e = 0, null = open("/dev/null", O_RDWR);
        if (chdir(dir) != 0) e = errno;
        if (!e && (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(errp[1], 2) < 0)) e = errno;
        if (!e) { execvp("gnuplot", argv); e = errno; }
        ssize_t wr = write(st[1], &e, sizeof e);
        (void)wr;
        _exit(127);
    }
    close(errp[1]);
    close(st[1]);
    if (pid < 0) {
        close(errp[0]); close(st[0]);
        fprintf(stderr, "train_order: cannot draw %s: fork: %s\n", path, strerror(errno));
        return -1;
    }
    *err_fd = errp[0];
    *st_fd = st[0];
    return pid;
}

/* Reads fd to its end into log (cap bytes, NUL-terminated; what does not fit is dropped); returns the length kept. */
static size_t read_log(int fd, char *log, size_t cap)
{
    size_t n_log = 0;
    ssize_t r;
    char chunk[512];
    while ((r = read(fd, chunk, sizeof chunk)) != 0) {
        if (r < 0) { if (errno == EINTR) continue; break; }
        size_t take = (size_t)r < cap - 1 - n_log ? (size_t)r : cap - 1 - n_log;
        memcpy(log + n_log, chunk, take);
        n_log += take;
    }
    log[n_log] = 0;
    return n_log;
}

/* True if the file at path is a complete SVG, synced: a full disk leaves gnuplot's output truncated or empty, and a
 * complete one ends with its closing tag. */
static bool complete_svg(const char *path)
{
    int fd = open(path, O_RDWR), ok = 0;
    char tail[64] = "";
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 16) {
        off_t at = sb.st_size > 63 ? sb.st_size - 63 : 0;
        ssize_t k = pread(fd, tail, 63, at);
        tail[k > 0 ? k : 0] = 0;
        ok = strstr(tail, "</svg>") != NULL && fsync(fd) == 0;
    }
    if (fd >= 0) close(fd);
    return ok;
}

/* Runs `gnuplot -e "outfile='<name>.tmp.<pid>'" <script>` in dir, checks the output is a complete SVG, renames it
 * to <name>. Returns 0, 1 when gnuplot is not installed, -1 on failure (message on stderr). */
static int run_gnuplot(const char *dir, const char *script, const char *name)
{
    char tmp[600], expr[640], path[TO_PATH + 640], tmp_path[TO_PATH + 640];
    snprintf(tmp, sizeof tmp, "%.63s.tmp.%ld", name, (long)getpid()); /* names: 64 bytes (to_plot) */
    snprintf(expr, sizeof expr, "outfile='%s'", tmp); /* our names only: [a-z0-9_.-] */
    snprintf(path, sizeof path, "%s/%.63s", dir, name);
    snprintf(tmp_path, sizeof tmp_path, "%s/%s", dir, tmp);
    char *const argv[] = {"gnuplot", "-e", expr, (char *)script, NULL};
    int err_fd, st_fd;
    pid_t pid = spawn_gnuplot(dir, argv, path, &err_fd, &st_fd);
    if (pid < 0) return -1;
    char log[2048];
    size_t n_log = read_log(err_fd, log, sizeof log);
    close(err_fd);
    int exec_err = 0;
    if (read(st_fd, &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err) exec_err = 0;
    close(st_fd);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (exec_err == ENOENT) return 1;
    if (exec_err) {
        fprintf(stderr, "train_order: cannot draw %s: starting gnuplot: %s\n", path, strerror(exec_err));
        return -1;
    }
    int exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    int ok = exited_ok && complete_svg(tmp_path);
    if (ok && rename(tmp_path, path) == 0) return 0;
    int e = errno;
    remove(tmp_path);
    fprintf(stderr, "train_order: cannot write %s: gnuplot's output is %s%s%s\n", path,
            exited_ok ? "incomplete (disk full?)" : "missing (gnuplot failed)", n_log ? "; gnuplot said:\n" : "",
            n_log ? log : (ok ? strerror(e) : ""));
    return -1;
}

/* ------------------------------------------------------------------ heatmaps: extrapolation.svg */

static int n_rows_of(const to_table *t, int task)
{
    int n = 0;
    for (int k = 0; k < t->n_rows; k++) n += t->rows[k].task == (rg_task)task;
    return n;
}

/* x of the boundary between the test lengths <= train_len and the longer ones, in column units. */
static double train_boundary(const to_table *t, int task)
{
    int j = 0;
    while (j < t->n_lens[task] && t->lens[task][j] <= t->train_len) j++;
    return j - 0.5;
}

static void heat_panel(to_out *g, const to_table *t, int task, int block, bool exact)
{
    int nr = n_rows_of(t, task), nc = t->n_lens[task];
    bool any_x = false;
    for (int k = 0; k < t->n_rows; k++) any_x |= t->rows[k].task == (rg_task)task && !to_row_learned(t, &t->rows[k]);
    to_out_printf(g, "set title '%s: %s' font ',14' offset 0,1.4\n", rg_task_name((rg_task)task),
                  exact ? "exact match (mean, k/N seeds >= 0.5)" : "token accuracy (mean over seeds)");
    to_out_printf(g, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\nset xtics (", nc - 1, nr - 1);
    for (int j = 0; j < nc; j++)
        to_out_printf(g, "%s\"%d%s\" %d", j ? ", " : "", t->lens[task][j], t->lens[task][j] == t->train_len ?
                      "\\n(train)" : "", j);
    to_out_printf(g, ")\nset ytics (");
    char label[96];
    for (int k = 0, r = 0; k < t->n_rows; k++)
        if (t->rows[k].task == (rg_task)task)
            to_out_printf(g, "%s\"%s%s\" %d", r ? ", " : "", to_row_label(&t->rows[k], label, sizeof label),
                          to_row_learned(t, &t->rows[k]) ? "" : " ✗", r), r++;
    double xb = train_boundary(t, task);
    to_out_printf(g, ")\nunset arrow\nunset label\n");
    if (any_x) to_out_printf(g, "set xlabel \"test length n\\n✗: not learned (mean exact match < 0.9 at n = %d)\"\n",
                             t->train_len);
    else to_out_printf(g, "set xlabel 'test length n'\n");
    if (xb > -0.5 && xb < nc - 0.5)
        to_out_printf(g, "set arrow from %g, graph 0 to %g, graph 1.06 nohead lw 3 lc rgb 'black' front\n"
                         "set label 'training length n = %d' at %g, graph 1.06 right offset -0.5,0 font ',11'\n"
                         "set label 'longer: extrapolation' at %g, graph 1.06 left offset 0.5,0 font ',11'\n",
                      xb, xb, t->train_len, xb, xb);
    int col = exact ? 3 : 4, lab = exact ? 5 : 6;
    to_out_printf(g, "plot 'extrapolation.dat' index %d using 1:2:%d with image pixels notitle, \\\n"
                     "     '' index %d using 1:2:%d:(column(%d) > 0.6 ? 0xffffff : 0) with labels tc rgb variable "
                     "font ',11' notitle\n", block, col, block, lab, col);
}

static int write_heatmaps(const to_table *t, const char *dir, int *n_tasks)
{
    to_out d, g;
    if (to_out_open(&d, dir, "extrapolation.dat")) return -1;
    if (to_out_open(&g, dir, "extrapolation.gp")) { to_out_discard(&d); return -1; }
    *n_tasks = 0;
    int max_rows = 1, max_cols = 1;
    for (int task = 0; task < rg_task_count(); task++)
        if (t->n_lens[task]) {
            (*n_tasks)++;
            if (n_rows_of(t, task) > max_rows) max_rows = n_rows_of(t, task);
            if (t->n_lens[task] > max_cols) max_cols = t->n_lens[task];
        }
    /* cells wide enough for "0.00 · 10/10" in 11 pt, tall enough for one line */
    int panel_h = 170 + 34 * max_rows, panel_w = 330 + 115 * max_cols;
    to_out_printf(&g, "# extrapolation.gp: heatmaps of the report (data: extrapolation.dat, one block per task)\n"
                      "if (!exists('outfile')) outfile = 'extrapolation.svg'\nset encoding utf8\n"
                      "set terminal svg size %d,%d dynamic noenhanced background rgb 'white' font '" FONT "'\n"
                      "set output outfile\nset datafile missing 'nan'\nset palette defined (0 '#ffffff', 0.25 "
                      "'#c6dbef', 0.5 '#6baed6', 0.75 '#2171b5', 1 '#08306b')\nset cbrange [0:1]\n"
                      "set cbtics 0.25\nset tics scale 0\nset lmargin 20\nset rmargin 10\nset tmargin 5\n"
                      "set xlabel 'test length n'\nset multiplot layout %d,2\n", 2 * panel_w, panel_h * *n_tasks, *n_tasks);
    int block = 0;
    for (int task = 0; task < rg_task_count(); task++) {
        if (!t->n_lens[task]) continue;
        to_out_printf(&d, "# %s: column row exact_mean token_mean exact_label token_label\n", rg_task_name((rg_task)task));
        for (int k = 0, r = 0; k < t->n_rows; k++) {
            const to_row *row = &t->rows[k];
            if (row->task != (rg_task)task) continue;
            for (int j = 0; j < t->n_lens[task]; j++) {
                to_stat e, a;
                to_table_cell(t, row, t->lens[task][j], true, &e, NULL);
                to_table_cell(t, row, t->lens[task][j], false, &a, NULL);
                if (e.n == 0) to_out_printf(&d, "%d %d nan nan \"n/a\" \"n/a\"\n", j, r);
                else to_out_printf(&d, "%d %d %.6f %.6f \"%.2f · %d/%d\" \"%.2f\"\n", j, r, e.mean, a.mean, e.mean, e.k,
                                   e.n, a.mean);
            }
            r++;
        }
        to_out_printf(&d, "\n\n");
        heat_panel(&g, t, task, block, true);
        heat_panel(&g, t, task, block, false);
        block++;
    }
    to_out_printf(&g, "unset multiplot\n");
    int rc = to_out_close(&d);
    if (rc) to_out_discard(&g);
    else rc = to_out_close(&g);
    return rc;
}

/* ------------------------------------------------------------------ curves_<task>.svg */

/* Panel p of a row: 0 the encodings (extension none), 1 RoPE with extensions (rope, rope-half and their exts). */
static bool in_panel(const to_row *r, int p)
{
    bool rope = r->pos == RG_POS_ROPE || r->pos == RG_POS_ROPE_HALF;
    return p == 0 ? r->ext == RG_ROPE_EXT_NONE : rope;
}

static void curve_panel(to_out *g, const to_table *t, int task, int p, bool exact, const int *block_of)
{
    const char *cname = rg_task_name((rg_task)task);
    to_out_printf(g, "set title '%s: %s, %s' font ',14'\nset ylabel '%s'\nplot ", cname,
                  exact ? "exact match" : "token accuracy", p ? "RoPE and its extensions" : "encodings",
                  exact ? "exact match" : "token accuracy");
    int ycol = exact ? 2 : 5, s = 0;
    char label[96];
    for (int k = 0; k < t->n_rows; k++) {
        const to_row *r = &t->rows[k];
        if (r->task != (rg_task)task || !in_panel(r, p)) continue;
        /* bottom panels: plain RoPE keeps its top-panel colour, each extension gets its own */
        int style = p ? (r->ext == RG_ROPE_EXT_NONE ? (int)RG_POS_ROPE : (int)r->ext) : (int)r->pos;
        int mk = p ? (r->pos == RG_POS_ROPE ? 7 : 9) : markers[style % N_STYLES];
        const char *c = colour_of(style);
        int b = block_of[k];
        to_out_printf(g, "%s'curves_%s.dat' index %d using 1:%d:%d with filledcurves fs transparent solid 0.12 "
                         "noborder lc rgb '%s' notitle, \\\n", s ? ", \\\n     " : "", cname, b, ycol + 1, ycol + 2, c);
        to_out_printf(g, "     '' index %d using 1:%d with linespoints lw 2 pt %d ps 1.1 dt %d lc rgb '%s' title '%s', "
                         "\\\n", b, ycol, mk, p ? (r->pos == RG_POS_ROPE_HALF ? 2 : 1) : 1 + (int)r->variant, c,
                      to_row_label(r, label, sizeof label));
        to_out_printf(g, "     '' index %d using 1:%d with points pt 6 ps 0.6 lc rgb '%s' notitle", b + 1,
                      exact ? 2 : 3, c);
        s++;
    }
    to_out_printf(g, "\n");
}

/* curves_<task>.dat: per row of the task two blocks (block_of[k] and the next): the means with their 95% t
 * intervals, then every seed's values (n jittered by row so that rows' seeds stand side by side). */
static void write_curves_dat(to_out *d, const to_table *t, int task, double span, int *block_of)
{
    const char *cname = rg_task_name((rg_task)task);
    int block = 0, nr = 0;
    for (int k = 0; k < t->n_rows; k++) {
        const to_row *r = &t->rows[k];
        if (r->task != (rg_task)task) continue;
        block_of[k] = block;
        block += 2;
        char label[96];
        double *ve = malloc(sizeof(double) * 2 * (size_t)r->n_runs), *va = ve ? ve + r->n_runs : NULL;
        if (!ve) break;
        to_out_printf(d, "# %s %s: n exact_mean exact_lo exact_hi token_mean token_lo token_hi\n", cname,
                      to_row_label(r, label, sizeof label));
        for (int j = 0; j < t->n_lens[task]; j++) {
            to_stat e, a;
            to_table_cell(t, r, t->lens[task][j], true, &e, NULL);
            to_table_cell(t, r, t->lens[task][j], false, &a, NULL);
            to_out_printf(d, "%d %.6g %.6g %.6g %.6g %.6g %.6g\n", t->lens[task][j], e.mean, e.lo, e.hi, a.mean, a.lo,
                          a.hi);
        }
        to_out_printf(d, "\n\n# %s per seed: n exact token (n jittered for visibility)\n", label);
        for (int j = 0; j < t->n_lens[task]; j++) {
            to_stat s;
            to_table_cell(t, r, t->lens[task][j], true, &s, ve);
            to_table_cell(t, r, t->lens[task][j], false, &s, va);
            double jit = 0.008 * span * ((nr % 8) - 3.5); /* rows' seeds side by side, not on top */
            for (int i = 0; i < r->n_runs; i++)
                if (isfinite(ve[i])) to_out_printf(d, "%.3f %.6g %.6g\n", t->lens[task][j] + jit, ve[i], va[i]);
        }
        to_out_printf(d, "\n\n");
        free(ve);
        nr++;
    }
}

/* curves_<task>.gp (gname): the page, the axes, the shaded trained range and line, then up to two panel rows
 * (encodings; RoPE and its extensions) of exact match and token accuracy, reading dname's blocks. */
static void write_curves_gp(to_out *g, const to_table *t, int task, const char *gname, const char *dname,
                            const char *name, double span, const int *block_of)
{
    bool has_panel[2] = {false, false};
    for (int k = 0; k < t->n_rows; k++)
        for (int p = 0; p < 2; p++) has_panel[p] |= t->rows[k].task == (rg_task)task && in_panel(&t->rows[k], p);
    int n_panels = has_panel[0] + has_panel[1];
    int lo = t->lens[task][0], hi = t->lens[task][t->n_lens[task] - 1], L = t->train_len;
    double pad = 0.06 * span + 0.5;
    to_out_printf(g, "# %s: curves of the report (data: %s; per row: a block of means and 95%% t intervals, then "
                      "a block of per-seed values)\nif (!exists('outfile')) outfile = '%s'\nset encoding utf8\n"
                      "set terminal svg size 1500,%d dynamic noenhanced background rgb 'white' font '" FONT "'\n"
                      "set output outfile\nset datafile missing 'nan'\nset multiplot layout %d,2\n"
                      "set key outside right top font ',11' spacing 1.1\nset rmargin 22\nset xlabel 'test length n'\n"
                      "set xrange [%g:%g]\nset yrange [-0.02:1.08]\nset xtics (", gname, dname, name, 1100 * n_panels / 2,
                  n_panels, lo - pad, hi + pad);
    for (int j = 0; j < t->n_lens[task]; j++) to_out_printf(g, "%s%d", j ? ", " : "", t->lens[task][j]);
    to_out_printf(g, ")\nset grid lc rgb '#dddddd' lw 0.5 dt 3\nset border lc rgb '#444444'\n");
    if (L >= lo - pad && L <= hi + pad)
        to_out_printf(g, "set object 1 rect from graph 0, graph 0 to first %d, graph 1 fc rgb '#f2f2f2' fs solid "
                          "noborder behind\nset arrow 1 from %d, graph 0 to %d, graph 1 nohead lw 2.5 dt 2 lc rgb "
                          "'black' front\nset label 1 'training length n = %d' at %d, graph 0.5 rotate by 90 center "
                          "offset -1.8,0 font ',11' front\n", L, L, L, L, L);
    for (int p = 0; p < 2; p++)
        for (int m = 0; m < 2 && has_panel[p]; m++) curve_panel(g, t, task, p, m == 0, block_of);
    to_out_printf(g, "unset multiplot\n");
}

/* curves_<task>.dat and .gp in dir; name (cap bytes) gets the figure's name, curves_<task>.svg. 0 or -1. */
static int write_curves(const to_table *t, const char *dir, int task, char *name, size_t cap)
{
    const char *cname = rg_task_name((rg_task)task);
    char dname[64], gname[64];
    snprintf(dname, sizeof dname, "curves_%s.dat", cname);
    snprintf(gname, sizeof gname, "curves_%s.gp", cname);
    snprintf(name, cap, "curves_%s.svg", cname);
    to_out d, g;
    if (to_out_open(&d, dir, dname)) return -1;
    if (to_out_open(&g, dir, gname)) { to_out_discard(&d); return -1; }
    double span = t->lens[task][t->n_lens[task] - 1] - t->lens[task][0];
    if (span < 1) span = 1;
    int *block_of = calloc((size_t)t->n_rows, sizeof *block_of);
    if (!block_of) { to_out_discard(&d); to_out_discard(&g); return -1; }
    write_curves_dat(&d, t, task, span, block_of);
    write_curves_gp(&g, t, task, gname, dname, name, span, block_of);
    free(block_of);
    int rc = to_out_close(&d);
    if (rc) to_out_discard(&g);
    else rc = to_out_close(&g);
    return rc;
}

/* ------------------------------------------------------------------ loss_<task>.svg */

/* Copies the (step, loss) columns of one run's log into d as a block. Returns the number of points, 0 when the log
 * does not exist, -1 when it is malformed (a warning naming the file and line; the figure goes on without it). */
static int copy_log(to_out *d, const char *path)
{
    FILE *f = to_fopen_read(path);
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
        if (isfinite(v[1]) && v[1] > 0) { to_out_printf(d, "%.0f %.6g\n", v[0], v[1]); n++; }
        if (lineno > 10000000) { why = "more than 10^7 lines"; break; }
    }
    fclose(f);
    if (why) {
        fprintf(stderr, "train_order: warning: skipping the loss log %s: line %ld: %s\n", path, lineno, why);
        return -1;
    }
    return n;
}

/* Returns 1 if a figure was written, 0 if no run of the task has a log, -1 on a write error. */
static int write_loss(const to_table *t, const char *dir, const char *runs_dir, int task, char *name, size_t cap)
{
    const char *cname = rg_task_name((rg_task)task);
    char dname[64], gname[64];
    snprintf(dname, sizeof dname, "loss_%s.dat", cname);
    snprintf(gname, sizeof gname, "loss_%s.gp", cname);
    snprintf(name, cap, "loss_%s.svg", cname);
    to_out d, g;
    if (to_out_open(&d, dir, dname)) return -1;
    if (to_out_open(&g, dir, gname)) { to_out_discard(&d); return -1; }
    to_out_printf(&g, "# %s: training loss of every %s run (data: %s, one block per run, from "
                      "runs/<task>-<pos>[-<variant>]"
                      "-seed<S>/train.csv)\nif (!exists('outfile')) outfile = '%s'\nset encoding utf8\n"
                      "set terminal svg size 1200,700 dynamic noenhanced background rgb 'white' font '" FONT "'\n"
                      "set output outfile\nset title '%s: training loss (every seed, one colour per encoding)' "
                      "font ',14'\nset xlabel 'step'\nset ylabel 'loss (log scale)'\nset logscale y\n"
                      "set grid lc rgb '#dddddd' lw 0.5 dt 3\nset key outside right top font ',11'\nplot ",
                  gname, cname, dname, name, cname);
    int block = 0, drawn = 0;
    bool titled[RG_POS_COUNT][TO_VAR_COUNT] = {{false}};
    for (int k = 0; k < t->n_rows; k++) {
        const to_row *r = &t->rows[k];
        if (r->task != (rg_task)task || r->ext != RG_ROPE_EXT_NONE) continue;
        char label[96], run[128];
        to_label(r->pos, r->variant, RG_ROPE_EXT_NONE, 0, label, sizeof label);
        for (int i = 0; i < r->n_runs; i++) {
            int seed = t->res[r->runs[i]].seed;
            char path[TO_PATH + 128];
            snprintf(path, sizeof path, "%s/%s/train.csv", runs_dir, to_run_name((rg_task)task, r->pos, r->variant,
                     seed, run, sizeof run));
            to_out_printf(&d, "# %s %s seed %d: step loss\n", cname, label, seed);
            int n = copy_log(&d, path);
            to_out_printf(&d, "\n\n");
            if (n > 0) { /* one colour per encoding, one dash type per training variant */
                to_out_printf(&g, "%s'%s' index %d using 1:2 with lines lw 1.5 dt %d lc rgb '%s' ",
                              drawn ? ", \\\n     " : "", dname, block, 1 + (int)r->variant, colour_of((int)r->pos));
                if (titled[r->pos][r->variant]) to_out_printf(&g, "notitle");
                else to_out_printf(&g, "title '%s'", label);
                titled[r->pos][r->variant] = true;
                drawn++;
            }
            block++;
        }
    }
    to_out_printf(&g, "\n");
    if (!drawn) { to_out_discard(&d); to_out_discard(&g); return 0; }
    if (to_out_close(&d)) { to_out_discard(&g); return -1; }
    return to_out_close(&g) ? -1 : 1;
}

/* ------------------------------------------------------------------ entry points */

int to_plot(const to_table *t, const char *dir, const char *runs_dir)
{
    int n_tasks;
    if (write_heatmaps(t, dir, &n_tasks)) return -1;
    char names[1 + 2 * RG_TASK_MAX][64], scripts[1 + 2 * RG_TASK_MAX][64];
    int n_fig = 0;
    snprintf(names[n_fig], 64, "extrapolation.svg");
    snprintf(scripts[n_fig++], 64, "extrapolation.gp");
    for (int task = 0; task < rg_task_count(); task++) {
        if (!t->n_lens[task]) continue;
        if (write_curves(t, dir, task, names[n_fig], 64)) return -1;
        snprintf(scripts[n_fig++], 64, "curves_%s.gp", rg_task_name((rg_task)task));
        int rc = write_loss(t, dir, runs_dir, task, names[n_fig], 64);
        if (rc < 0) return -1;
        if (rc == 1) snprintf(scripts[n_fig++], 64, "loss_%s.gp", rg_task_name((rg_task)task));
    }
    for (int i = 0; i < n_fig; i++) {
        int rc = run_gnuplot(dir, scripts[i], names[i]);
        if (rc < 0) return -1;
        if (rc == 1) {
            fprintf(stderr, "train_order: warning: gnuplot is not installed: no plots (their data and scripts are "
                            "in %s: *.dat, *.gp; apt-get install gnuplot-nox)\n", dir);
            return 0;
        }
    }
    return 0;
}

int to_replot_results(const char *report_csv, const to_result *res, int n_res, int train_len, const char *out_dir)
{
    struct stat sb;
    if (stat(out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "train_order: --replot: output folder %s: %s\n", out_dir,
                errno && stat(out_dir, &sb) != 0 ? strerror(errno) : "not a folder");
        return -1;
    }
    char folder[TO_PATH], runs[TO_PATH + 16];
    snprintf(runs, sizeof runs, "%s/runs", to_folder_of(report_csv, folder, sizeof folder));
    to_table t;
    int rc = to_table_build(&t, res, n_res, train_len);
    if (rc == 0) {
        rc = to_plot(&t, out_dir, runs);
        to_table_free(&t);
    }
    return rc;
}

int to_replot(const char *report_csv, const char *out_dir)
{
    to_result *res = NULL;
    int n_res = 0, train_len = 0;
    if (to_report_load(report_csv, &res, &n_res, &train_len)) return -1;
    int rc = to_replot_results(report_csv, res, n_res, train_len, out_dir);
    free(res);
    return rc;
}

int to_plot_gnuplot(const char *dir, const char *script, const char *name) { return run_gnuplot(dir, script, name); }
