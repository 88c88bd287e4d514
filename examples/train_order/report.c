/* report.c: the experiment's outputs: report.md (configuration, wall time, one table per task: a row per encoding
 * and RoPE extension, a column per test length, exact_match mean ± sd over seeds with token_acc beside it),
 * report.csv and report.json (every number, per seed), and extrapolation.svg (gnuplot: exact_match against test
 * length, one line per row, one panel per task, the training length marked). */
#include "train_order.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int to_result_save(const char *path, const to_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "train_order: cannot write %s: %s\n", path, strerror(errno)); return -1; }
    for (int i = 0; i < n; i++) {
        const to_result *r = &res[i];
        fprintf(f, "%d %d %d %d %lld %.17g %.17g %d", (int)r->task, (int)r->pos, (int)r->ext, r->seed,
                (long long)r->steps, r->final_loss, r->train_seconds, r->n_lens);
        for (int j = 0; j < r->n_lens; j++) fprintf(f, " %d %.17g %.17g", r->lens[j], r->exact[j], r->token_acc[j]);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

int to_result_load(const char *path, to_result *res, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    while (n < max) {
        to_result *r = &res[n];
        int task, pos, ext;
        long long steps;
        char a[64], b[64];
        if (fscanf(f, "%d %d %d %d %lld %63s %lf %d", &task, &pos, &ext, &r->seed, &steps, a, &r->train_seconds,
                   &r->n_lens) != 8 || r->n_lens < 0 || r->n_lens > TO_MAX_LENS)
            break;
        r->final_loss = strtod(a, NULL); /* may be "nan" (evaluation only) */
        r->task = (rg_task)task;
        r->pos = (rg_pos_kind)pos;
        r->ext = (rg_rope_ext)ext;
        r->steps = steps;
        int ok = 1;
        for (int j = 0; j < r->n_lens && ok; j++) {
            ok = fscanf(f, "%d %63s %63s", &r->lens[j], a, b) == 3;
            r->exact[j] = strtod(a, NULL);
            r->token_acc[j] = strtod(b, NULL);
        }
        if (!ok) break;
        n++;
    }
    fclose(f);
    return n;
}

/* Mean and sample standard deviation of the finite values among k (NaN when none). */
static void mean_sd(const double *v, int k, double *mean, double *sd)
{
    double s = 0, ss = 0;
    int n = 0;
    for (int i = 0; i < k; i++)
        if (isfinite(v[i])) { s += v[i]; n++; }
    *mean = n ? s / n : NAN;
    for (int i = 0; i < k; i++)
        if (isfinite(v[i])) ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

/* A report row: one (task, pos, ext) and its seeds. */
typedef struct {
    rg_task task;
    rg_pos_kind pos;
    rg_rope_ext ext;
    int idx[256], n;      /* indices of its results, one per seed */
} row;

static const char *row_label(const row *r, char *buf, size_t n)
{
    if (r->ext == RG_ROPE_EXT_NONE) snprintf(buf, n, "%s", rg_pos_name(r->pos));
    else snprintf(buf, n, "%s+%s", rg_pos_name(r->pos), rg_rope_ext_name(r->ext));
    return buf;
}

static int collect_rows(const to_result *res, int n_res, row *rows, int max_rows)
{
    int n = 0;
    for (int i = 0; i < n_res; i++) {
        int k;
        for (k = 0; k < n; k++)
            if (rows[k].task == res[i].task && rows[k].pos == res[i].pos && rows[k].ext == res[i].ext) break;
        if (k == n) {
            if (n == max_rows) continue;
            rows[n] = (row){res[i].task, res[i].pos, res[i].ext, {0}, 0};
            n++;
        }
        if (rows[k].n < 256) rows[k].idx[rows[k].n++] = i;
    }
    /* order: task, encoding, extension (none first) */
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            long ka = rows[a].task * 10000L + rows[a].pos * 100L + rows[a].ext;
            long kb = rows[b].task * 10000L + rows[b].pos * 100L + rows[b].ext;
            if (kb < ka) { row t = rows[a]; rows[a] = rows[b]; rows[b] = t; }
        }
    return n;
}

/* exact_match or token_acc of a row at length index j, over its seeds. */
static void row_stat(const row *r, const to_result *res, int j, bool exact, double *mean, double *sd)
{
    double v[256];
    for (int i = 0; i < r->n; i++) v[i] = exact ? res[r->idx[i]].exact[j] : res[r->idx[i]].token_acc[j];
    mean_sd(v, r->n, mean, sd);
}

static int write_md(const to_options *o, const to_result *res, const row *rows, int n_rows, double wall,
                    const char *command)
{
    char path[TO_PATH + 32];
    snprintf(path, sizeof path, "%s/report.md", o->out);
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "train_order: cannot write %s: %s\n", path, strerror(errno)); return -1; }
    const to_result *r0 = &res[rows[0].idx[0]];
    int L = o->train_len;
    fprintf(f, "# Length extrapolation report\n\n");
    fprintf(f, "- command: `%s`\n- wall time: %.1f s (%.1f min)\n", command, wall, wall / 60);
    fprintf(f, "- model: d_model %d, n_heads %d, n_layers %d, d_ff %d, vocab %d, pre-LayerNorm decoder, no dropout\n",
            o->model.d_model, o->model.n_heads, o->model.n_layers, o->model.d_ff, o->model.vocab_size);
    fprintf(f, "- training: %lld steps, batch %d, n uniform in 1..%d, AdamW lr %g betas (%g, %g) eps %g wd %g, "
               "clip %g, warmup %d then cosine to %g x lr%s\n",
            (long long)r0->steps, o->batch, L, o->lr, o->beta1, o->beta2, o->eps, o->weight_decay, o->clip, o->warmup,
            o->min_lr_frac, o->random_positions ? ", randomized positions" : "");
    fprintf(f, "- evaluation: greedy decoding with the KV cache on %s (256 samples per task and length); "
               "cells are exact_match mean ± sd over seeds (token_acc in parentheses)\n", o->data);
    fprintf(f, "- RoPE extensions (rows rope+ext) apply beyond the training length with s = (2n+3)/%d; at n <= %d "
               "s = 1 and they equal plain RoPE\n", 2 * L + 3, L);
    bool has_L = false;
    for (int j = 0; j < r0->n_lens; j++) has_L |= r0->lens[j] == L;
    if (has_L)
        fprintf(f, "- ✗ marks a row whose exact_match at n = %d is below 0.9: the model did not learn the task, so "
                   "its extrapolation numbers say nothing about the encoding\n\n", L);
    else
        fprintf(f, "- n = %d (the training length) was not evaluated, so no row is checked for having learned the "
                   "task\n\n", L);
    for (int t = 0; t < RG_TASK_COUNT; t++) {
        bool any = false;
        for (int k = 0; k < n_rows; k++) any |= rows[k].task == (rg_task)t;
        if (!any) continue;
        fprintf(f, "## %s\n\n| encoding | seeds |", rg_task_name((rg_task)t));
        for (int j = 0; j < r0->n_lens; j++) fprintf(f, " n=%d%s |", r0->lens[j], r0->lens[j] == L ? " (train)" : "");
        fprintf(f, "\n|---|---|");
        for (int j = 0; j < r0->n_lens; j++) fprintf(f, "---|");
        fputc('\n', f);
        for (int k = 0; k < n_rows; k++) {
            const row *rw = &rows[k];
            if (rw->task != (rg_task)t) continue;
            char label[64];
            bool learned = true;
            for (int j = 0; j < r0->n_lens; j++)
                if (r0->lens[j] == L) {
                    double m, sd;
                    row_stat(rw, res, j, true, &m, &sd);
                    learned = m >= 0.9;
                }
            fprintf(f, "| %s%s | %d |", row_label(rw, label, sizeof label), learned ? "" : " ✗", rw->n);
            for (int j = 0; j < r0->n_lens; j++) {
                double m, sd, am, asd;
                row_stat(rw, res, j, true, &m, &sd);
                row_stat(rw, res, j, false, &am, &asd);
                if (isnan(m)) fprintf(f, " n/a |");
                else fprintf(f, " %.3f ± %.3f (%.3f) |", m, sd, am);
            }
            fputc('\n', f);
        }
        fputc('\n', f);
    }
    fprintf(f, "n/a: positions past the learned table (max_len %d).\n", o->model.max_len);
    return fclose(f) == 0 ? 0 : -1;
}

static int write_csv_json(const to_options *o, const to_result *res, int n_res)
{
    char path[TO_PATH + 32];
    snprintf(path, sizeof path, "%s/report.csv", o->out);
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "train_order: cannot write %s: %s\n", path, strerror(errno)); return -1; }
    fprintf(f, "task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n");
    for (int i = 0; i < n_res; i++)
        for (int j = 0; j < res[i].n_lens; j++)
            fprintf(f, "%s,%s,%s,%d,%lld,%.6g,%.3f,%d,%.6g,%.6g\n", rg_task_name(res[i].task), rg_pos_name(res[i].pos),
                    rg_rope_ext_name(res[i].ext), res[i].seed, (long long)res[i].steps, res[i].final_loss,
                    res[i].train_seconds, res[i].lens[j], res[i].exact[j], res[i].token_acc[j]);
    if (fclose(f)) return -1;
    snprintf(path, sizeof path, "%s/report.json", o->out);
    f = fopen(path, "w");
    if (!f) { fprintf(stderr, "train_order: cannot write %s: %s\n", path, strerror(errno)); return -1; }
    fprintf(f, "{\n  \"train_len\": %d,\n  \"runs\": [\n", o->train_len);
    for (int i = 0; i < n_res; i++) {
        const to_result *r = &res[i];
        fprintf(f, "    {\"task\": \"%s\", \"encoding\": \"%s\", \"rope_ext\": \"%s\", \"seed\": %d, \"steps\": %lld, ",
                rg_task_name(r->task), rg_pos_name(r->pos), rg_rope_ext_name(r->ext), r->seed, (long long)r->steps);
        if (isfinite(r->final_loss)) fprintf(f, "\"final_loss\": %.6g, ", r->final_loss);
        else fprintf(f, "\"final_loss\": null, ");
        fprintf(f, "\"train_seconds\": %.3f, \"results\": [", r->train_seconds);
        for (int j = 0; j < r->n_lens; j++) {
            fprintf(f, "%s{\"n\": %d, ", j ? ", " : "", r->lens[j]);
            if (isfinite(r->exact[j]))
                fprintf(f, "\"exact_match\": %.6g, \"token_acc\": %.6g}", r->exact[j], r->token_acc[j]);
            else
                fprintf(f, "\"exact_match\": null, \"token_acc\": null}");
        }
        fprintf(f, "]}%s\n", i + 1 < n_res ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* extrapolation.dat (one block per task, one column per row) + extrapolation.gp, then gnuplot. */
static int write_plot(const to_options *o, const to_result *res, const row *rows, int n_rows)
{
    char dat[TO_PATH + 32], gp[TO_PATH + 32], svg[TO_PATH + 32];
    snprintf(dat, sizeof dat, "%s/extrapolation.dat", o->out);
    snprintf(gp, sizeof gp, "%s/extrapolation.gp", o->out);
    snprintf(svg, sizeof svg, "%s/extrapolation.svg", o->out);
    FILE *f = fopen(dat, "w"), *g = fopen(gp, "w");
    if (!f || !g) {
        fprintf(stderr, "train_order: cannot write %s: %s\n", f ? gp : dat, strerror(errno));
        if (f) fclose(f);
        if (g) fclose(g);
        return -1;
    }
    const to_result *r0 = &res[rows[0].idx[0]];
    int n_tasks = 0;
    for (int t = 0; t < RG_TASK_COUNT; t++) {
        bool any = false;
        for (int k = 0; k < n_rows; k++) any |= rows[k].task == (rg_task)t;
        n_tasks += any;
    }
    /* extrapolation.dat: one block per task; per row two columns, exact_match and token_acc (means over seeds) */
    int cols[RG_TASK_COUNT][64], ncols[RG_TASK_COUNT] = {0};
    for (int t = 0; t < RG_TASK_COUNT; t++) {
        for (int k = 0; k < n_rows && ncols[t] < 64; k++)
            if (rows[k].task == (rg_task)t) cols[t][ncols[t]++] = k;
        if (!ncols[t]) continue;
        fprintf(f, "# %s: n", rg_task_name((rg_task)t));
        char label[64];
        for (int c = 0; c < ncols[t]; c++) {
            row_label(&rows[cols[t][c]], label, sizeof label);
            fprintf(f, " %s:exact %s:token", label, label);
        }
        fputc('\n', f);
        for (int j = 0; j < r0->n_lens; j++) {
            fprintf(f, "%d", r0->lens[j]);
            for (int c = 0; c < ncols[t]; c++) {
                double m, sd, a, asd;
                row_stat(&rows[cols[t][c]], res, j, true, &m, &sd);
                row_stat(&rows[cols[t][c]], res, j, false, &a, &asd);
                fprintf(f, " %.6g %.6g", m, a);
            }
            fputc('\n', f);
        }
        fprintf(f, "\n\n");
    }
    /* panels: exact_match on the first row, token_acc on the second, one column per task */
    fprintf(g, "set terminal svg size %d,900 dynamic noenhanced font 'sans,11'\nset output '%s'\n", 520 * n_tasks, svg);
    fprintf(g, "set multiplot layout 2,%d\nset xlabel 'test length n'\nset yrange [0:1.05]\n"
               "set key top right font ',8'\nset grid\nset datafile missing 'nan'\n", n_tasks);
    for (int metric = 0; metric < 2; metric++) {
        int block = 0;
        fprintf(g, "set ylabel '%s'\n", metric ? "token accuracy" : "exact match");
        for (int t = 0; t < RG_TASK_COUNT; t++) {
            if (!ncols[t]) continue;
            fprintf(g, "set title '%s: %s (trained on n <= %d)'\nset arrow 1 from %d,0 to %d,1.05 nohead dt 2 "
                       "lc rgb 'gray'\nplot", rg_task_name((rg_task)t), metric ? "token accuracy" : "exact match",
                    o->train_len, o->train_len, o->train_len);
            char label[64];
            for (int c = 0; c < ncols[t]; c++)
                fprintf(g, "%s '%s' index %d using 1:%d with linespoints title '%s'", c ? "," : "", dat, block,
                        2 + 2 * c + metric, row_label(&rows[cols[t][c]], label, sizeof label));
            fputc('\n', g);
            block++;
        }
    }
    fprintf(g, "unset multiplot\n");
    fclose(f);
    fclose(g);
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "train_order: gnuplot is not installed: no %s (the data and script are in %s and %s; "
                        "apt-get install gnuplot-nox)\n", svg, dat, gp);
        return 0;
    }
    char cmd[3 * TO_PATH];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>'%s.log'", gp, gp); /* its warnings go to extrapolation.gp.log */
    if (system(cmd) != 0) {
        fprintf(stderr, "train_order: gnuplot failed on %s\n", gp);
        return -1;
    }
    return 0;
}

int to_write_report(const to_options *o, const to_result *res, int n_res, double wall, const char *command)
{
    row *rows = calloc(256, sizeof *rows);
    if (!rows) return -1;
    int n_rows = collect_rows(res, n_res, rows, 256);
    int rc = 0;
    if (write_md(o, res, rows, n_rows, wall, command)) rc = -1;
    if (write_csv_json(o, res, n_res)) rc = -1;
    if (write_plot(o, res, rows, n_rows)) rc = -1;
    free(rows);
    return rc;
}
