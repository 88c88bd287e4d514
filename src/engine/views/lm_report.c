/* lm_report.c: the language-modelling report of an invocation (lm_run.h): reads back runs/<run>/lm.csv of each of
 * its LM jobs (files this invocation wrote, still parsed strictly), and writes lm_report.csv (one row per task,
 * encoding, training variant, method and context: seeds, median, min and max perplexity; a variant such as t5max128
 * is its own row, never pooled with its base), lm_report.md (a table per task and method:
 * encodings x contexts L..8L, median [min, max] over seeds) and lm_ppl_<task>.svg (gnuplot: perplexity against
 * context / L, log scale, a curve per encoding, chunks solid and sliding dashed). */
#include "engine/views/lm_report.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/plot/gnuplot.h"
#include "engine/results/results.h"
#include "engine/run/lm_run.h"
#include "engine/views/report.h"
#include "engine/views/report_protocol.h"
#include "task/lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    rg_task task;
    rg_pos_kind pos;
    eng_variant variant;
    int seed;
    double ppl[2][ENG_LM_NRATIOS];
    int ctx[ENG_LM_NRATIOS];
} lm_row;

/* Reads one run's lm.csv into r. 0, or -1 with a message. */
static int read_run(const eng_options *o, const eng_job *j, const char *name, lm_row *r)
{
    char path[ENG_PATH + 200];
    snprintf(path, sizeof path, "%.*s/runs/%s/lm.csv", ENG_PATH - 1, o->out, name);
    FILE *f = eng_fopen_read(path);
    if (!f) { eng_err("LM report: no %s (the run failed?)\n", path); return -1; }
    char line[512];
    int got = 0, bad = !fgets(line, sizeof line, f) || strncmp(line, "task,pos,method,context,", 24) != 0;
    *r = (lm_row){j->task, j->pos, j->variant, j->seed, {{0}}, {0}};
    while (!bad && fgets(line, sizeof line, f)) {
        char task[40], pos[40], meth[16];
        int E, S, n_read = 0;
        double ratio, ppl;
        if (sscanf(line, "%39[^,],%39[^,],%15[^,],%d,%lf,%d,%lf,%*[^,],%*d%n", task, pos, meth, &E, &ratio, &S, &ppl,
                   &n_read) < 7 || n_read == 0) { bad = 1; break; }
        int k = 0, m = strcmp(meth, "sliding") == 0;
        while (k < ENG_LM_NRATIOS && eng_lm_context(o->train_len, k) != E) k++;
        if (k == ENG_LM_NRATIOS || (!m && strcmp(meth, "chunks")) || strcmp(task, rg_task_name(j->task))) { bad = 1; break; }
        r->ppl[m][k] = ppl;
        r->ctx[k] = E;
        got++;
    }
    fclose(f);
    if (bad || got != 2 * ENG_LM_NRATIOS) {
        eng_err("LM report: %s is not a complete lm.csv of this invocation\n", path);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min, max of the finite values of v[0..n) (sorted in place); *k the count. */
static void stats(double *v, int n, double *med, double *lo, double *hi, int *k)
{
    int m = 0;
    for (int i = 0; i < n; i++) if (isfinite(v[i])) v[m++] = v[i];
    qsort(v, (size_t)m, sizeof *v, cmp_double);
    *k = m;
    *med = m ? (m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2])) : NAN;
    *lo = m ? v[0] : NAN;
    *hi = m ? v[m - 1] : NAN;
}

/* The mean of the finite v[0..n) (stats() has gathered them first) and its 95% Student-t interval mean -+
 * t(0.975, n-1) sd / sqrt(n) (not clipped: a perplexity has no upper bound); NaN where n < 2 (the mean: n < 1). */
static void mean_interval(const double *v, int n, double *mean, double *lo, double *hi)
{
    eng_stat st; /* stats.c's mean and sd; its interval is clipped to [0, 1] for accuracies, so made here */
    eng_stat_compute(v, n, 0, &st);
    double h = n > 1 ? eng_t_quantile(0.5 + 0.5 * ENG_CI_LEVEL, n - 1) * st.sd / sqrt(n) : NAN;
    *mean = st.mean;
    *lo = st.mean - h;
    *hi = st.mean + h;
}

/* The seeds' values of (task, pos, variant, method, k) into v; returns their number. A variant is its own row
 * (t5 and t5 max_distance=128 are never pooled). */
static int gather(const lm_row *rows, int n, rg_task t, rg_pos_kind p, eng_variant var, int m, int k, double *v)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].task == t && rows[i].pos == p && rows[i].variant == var) v[c++] = rows[i].ppl[m][k];
    return c;
}

static void write_tables(const eng_options *o, const lm_row *rows, int n, eng_out *md, eng_out *csv, double *v)
{
    static const char *const meth[2] = {"chunks", "sliding"};
    eng_out_printf(csv, "task,pos,variant,method,context,ratio,seeds,median_ppl,min_ppl,max_ppl,mean_ppl,ci95_t_lo,"
                       "ci95_t_hi\n");
    eng_out_printf(md, "Trained at L = %d tokens, %d steps, "
                  "batch %d; validation perplexity (natural log) at contexts round(f L); median [min, max] over the "
                  "seeds (n/a: the learned table ends before the context; lm_report.csv adds the mean and its 95%% Student-t "
                  "interval). Chunks: non-overlapping windows; sliding: "
                  "stride the largest divisor of E not above E/8 (Press et al. 2022, App. B). See docs/lm.md.\n",
                  o->train_len, o->steps, o->batch);
    /* every report states the settings that decide extrapolation, so its rows can be read against them */
    eng_rows_held h = {{{false}}};
    for (int i = 0; i < n; i++) h.held[rows[i].pos][rows[i].variant] = true;
    char why[64];
    snprintf(why, sizeof why, "L - 1 for a causal context of L = %d", o->train_len);
    eng_out_printf(md, "\n");
    eng_md_encoding_settings(md, o, &h, o->train_len - 1, why);
    for (int t = 0; t < rg_task_count(); t++)
        for (int m = 0; m < 2; m++) {
            bool any = false;
            for (int i = 0; i < n; i++) any |= rows[i].task == t;
            if (!any) continue;
            const rg_lm_corpus *c = rg_lm_corpus_of(t);
            eng_out_printf(md, "\n## %s, %s\n\n", rg_task_name(t), meth[m]);
            if (c) eng_out_printf(md, "Corpus: %s; %lld training tokens, %lld validation tokens.\n\n", c->source,
                                 (long long)c->n_train, (long long)c->n_valid);
            eng_out_printf(md, "| encoding | seeds |");
            for (int k = 0; k < ENG_LM_NRATIOS; k++)
                eng_out_printf(md, " %.3gL = %d |", (double)eng_lm_context(o->train_len, k) / o->train_len,
                              eng_lm_context(o->train_len, k));
            eng_out_printf(md, "\n|---|---|");
            for (int k = 0; k < ENG_LM_NRATIOS; k++) eng_out_printf(md, "---|");
            eng_out_printf(md, "\n");
            for (int p = 0; p < rg_pos_count(); p++)
            for (int var = 0; var < ENG_VAR_COUNT; var++) {
                int seeds = gather(rows, n, t, (rg_pos_kind)p, (eng_variant)var, m, 0, v);
                if (!seeds) continue;
                char label[96];
                eng_label((rg_pos_kind)p, (eng_variant)var, RG_ROPE_EXT_NONE, 0, label, sizeof label);
                eng_out_printf(md, "| %s | %d |", label, seeds);
                for (int k = 0; k < ENG_LM_NRATIOS; k++) {
                    int c = gather(rows, n, t, (rg_pos_kind)p, (eng_variant)var, m, k, v), kk;
                    double med, lo, hi;
                    stats(v, c, &med, &lo, &hi, &kk);
                    int E = eng_lm_context(o->train_len, k);
                    if (kk) eng_out_printf(md, " %.3f [%.3f, %.3f] |", med, lo, hi);
                    else eng_out_printf(md, " n/a |");
                    double mean, ci_lo, ci_hi;
                    mean_interval(v, kk, &mean, &ci_lo, &ci_hi);
                    eng_out_printf(csv, "%s,%s,%s,%s,%d,%.6g,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", rg_task_name(t),
                                  rg_pos_name((rg_pos_kind)p), eng_variant_name((eng_variant)var), meth[m], E,
                                  (double)E / o->train_len, kk, med, lo, hi, mean, ci_lo, ci_hi);
                }
                eng_out_printf(md, "\n");
            }
        }
}

/* lm_ppl_<task>.dat/.gp and the SVG through gnuplot (a missing gnuplot: a note, not an error). */
static int write_plot(const eng_options *o, const lm_row *rows, int n, rg_task t, double *v)
{
    char dat[96], gp[96], svg[96];
    snprintf(dat, sizeof dat, "lm_ppl_%s.dat", rg_task_name(t));
    snprintf(gp, sizeof gp, "lm_ppl_%s.gp", rg_task_name(t));
    snprintf(svg, sizeof svg, "lm_ppl_%s", rg_task_name(t));
    eng_out d, g;
    if (eng_out_open(&d, o->out, dat)) return -1;
    int n_enc = 0;
    char enc[RG_POS_MAX * ENG_VAR_COUNT][96]; /* the curves' labels, one per (encoding, variant) */
    for (int p = 0; p < rg_pos_count(); p++)
        for (int var = 0; var < ENG_VAR_COUNT; var++) {
            if (!gather(rows, n, t, (rg_pos_kind)p, (eng_variant)var, 0, 0, v)) continue;
            eng_label((rg_pos_kind)p, (eng_variant)var, RG_ROPE_EXT_NONE, 0, enc[n_enc], sizeof enc[n_enc]);
            eng_out_printf(&d, "# %s\n", enc[n_enc++]);
            for (int k = 0; k < ENG_LM_NRATIOS; k++) {
                double med[2], lo, hi;
                int kk;
                for (int m = 0; m < 2; m++)
                    stats(v, gather(rows, n, t, (rg_pos_kind)p, (eng_variant)var, m, k, v), &med[m], &lo, &hi, &kk);
                eng_out_printf(&d, "%g %g %g\n", (double)eng_lm_context(o->train_len, k) / o->train_len, med[0], med[1]);
            }
            eng_out_printf(&d, "\n\n");
        }
    if (eng_out_close(&d) || eng_out_open(&g, o->out, gp)) return -1;
    eng_plot_terminal(&g, svg, 7, 4.2); /* plot.c: SVG, PDF and PNG */
    eng_out_printf(&g, "set logscale xy\n"
                  "set xlabel 'context / L (L = %d)'\nset ylabel 'validation perplexity (median over seeds)'\n"
                  "set title '%s: chunks (solid), sliding window (dashed)'\nset key outside right\n"
                  "set xtics ('1' 1, '' 1.25, '1.5' 1.5, '2' 2, '4' 4, '8' 8)\n"
                  "set label 1 '1.25' at 1.25, graph 0 center offset 0, -2\nplot ", /* a line lower: 1.5 is close */
                  o->train_len, rg_task_name(t));
    for (int i = 0; i < n_enc; i++)
        eng_out_printf(&g, "%s'%s' index %d using 1:2 with linespoints lc %d dt 1 title '%s', '%s' index %d using 1:3 "
                      "with linespoints lc %d dt 2 notitle", i ? ", " : "", dat, i, i + 1, enc[i], dat, i,
                      i + 1);
    eng_out_printf(&g, "\n");
    if (eng_out_close(&g)) return -1;
    int rc = eng_gnuplot(o->out, gp, svg);
    if (rc == 1) eng_err("gnuplot is not installed: %s/%s not drawn\n", o->out, svg);
    return rc < 0 ? -1 : 0;
}

/* lm_positions_<task>.svg: the per-position loss (mean NLL at window offset j, context j+1) of the chunks at 4L,
 * one curve per run, read by gnuplot from the runs' lm_positions.csv (column 7: context 4L); the training length
 * marked. */
static int write_positions_plot(const eng_options *o, const lm_row *rows, int n, rg_task t)
{
    char gp[96], svg[96];
    snprintf(gp, sizeof gp, "lm_positions_%s.gp", rg_task_name(t));
    snprintf(svg, sizeof svg, "lm_positions_%s", rg_task_name(t));
    eng_out g;
    if (eng_out_open(&g, o->out, gp)) return -1;
    eng_plot_terminal(&g, svg, 7, 4.2); /* plot.c: SVG, PDF and PNG */
    eng_out_printf(&g, "set datafile separator ','\n"
                  "set xlabel 'context (tokens) of the prediction'\nset ylabel 'mean NLL (nats)'\n"
                  "set title '%s: loss by position, chunks of 4L = %d tokens (L = %d marked)'\nset key outside right\n"
                  "set arrow from %d, graph 0 to %d, graph 1 nohead dt 3\nplot ", rg_task_name(t),
                  eng_lm_context(o->train_len, 4), o->train_len, o->train_len, o->train_len);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (rows[i].task != t) continue;
        char name[128];
        char label[96];
        eng_run_name(rows[i].task, rows[i].pos, rows[i].variant, NULL, rows[i].seed, name, sizeof name);
        eng_label(rows[i].pos, rows[i].variant, RG_ROPE_EXT_NONE, 0, label, sizeof label);
        eng_out_printf(&g, "%s'runs/%s/lm_positions.csv' every ::1 using 2:7 with lines title '%s seed %d'", k++ ? ", " : "",
                      name, label, rows[i].seed);
    }
    eng_out_printf(&g, "\n");
    if (eng_out_close(&g)) return -1;
    int rc = eng_gnuplot(o->out, gp, svg);
    return rc < 0 ? -1 : 0;
}

int eng_lm_report(const eng_options *o, const eng_job *jobs, int n_jobs, const char *command, double wall_seconds)
{
    int n_lm = 0, n = 0, rc = 0;
    for (int i = 0; i < n_jobs; i++) n_lm += eng_lm_task(jobs[i].task);
    if (!n_lm) return 0;
    lm_row *rows = calloc((size_t)n_lm, sizeof *rows);
    double *v = calloc((size_t)n_lm + 1, sizeof *v);
    if (!rows || !v) { free(rows); free(v); eng_err("LM report: out of memory\n"); return -1; }
    for (int i = 0; i < n_jobs; i++) {
        if (!eng_lm_task(jobs[i].task)) continue;
        char name[128];
        eng_run_name(jobs[i].task, jobs[i].pos, jobs[i].variant, NULL, jobs[i].seed, name, sizeof name);
        if (read_run(o, &jobs[i], name, &rows[n]) == 0) n++;
        else rc = -1;
    }
    eng_out md, csv;
    bool written = false; /* lm_report.md and .csv both in place: the pair, or neither */
    if (n && !eng_out_open(&md, o->out, "lm_report.md")) {
        if (eng_out_open(&csv, o->out, "lm_report.csv")) { eng_out_discard(&md); rc = -1; }
        else {
            eng_provenance p;
            eng_provenance_get(&p);
            eng_out_printf(&md, "# Language-modelling perplexity against context length\n\n");
            eng_md_provenance(&md, &p, command, wall_seconds);
            write_tables(o, rows, n, &md, &csv, v);
            if (eng_out_close(&md)) { eng_out_discard(&csv); rc = -1; }
            else if (eng_out_close(&csv)) { remove(md.path); rc = -1; } /* the .md just renamed: not left alone */
            else written = true;
        }
        for (int t = 0; t < rg_task_count(); t++) {
            bool any = false;
            for (int i = 0; i < n; i++) any |= rows[i].task == t;
            if (any && (write_plot(o, rows, n, (rg_task)t, v) || write_positions_plot(o, rows, n, (rg_task)t)))
                rc = -1;
        }
    } else if (n) {
        rc = -1;
    }
    if (!o->quiet && written) eng_err("LM report of %d run(s) in %s/lm_report.md\n", n, o->out);
    free(rows);
    free(v);
    return rc;
}
