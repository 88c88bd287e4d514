/* lm_run.c: the language-modelling runs of train_order (tasks lm, lm_en; src/task/lm.h) and their report
 * (docs/lm.md). A run trains like any task (rows of n = train_len tokens: RG_TASK_FULL_LEN), then instead of
 * greedy decoding evaluates perplexity on the corpus's validation split at contexts E = round(f L), f in
 * ENG_LM_RATIOS (Press et al. 2022, Table 2: L to 8L), by non-overlapping chunks and by a sliding window of stride
 * the largest divisor of E not above E/8 (each scored token past the first window sees >= 7/8 E of context;
 * App. B uses stride 1), and the per-position loss of the chunks at every E. Files: runs/<run>/lm.csv (one row per
 * method and context), runs/<run>/lm_positions.csv (offset j, context j+1, mean NLL at each E); the invocation's
 * lm_report.md, lm_report.csv and lm_ppl_<task>.svg (gnuplot) aggregate them over seeds (median, min, max). */
#include "engine/run/lm_run.h"
#include "engine/base/clock.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/types.h"
#include "task/lm.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double ratios[ENG_LM_NRATIOS] = {1, 1.25, 1.5, 2, 4, 8};
#define LM_BATCH 16

bool eng_lm_task(rg_task task)
{
    return rg_task_views(task) & RG_TASK_VIEW_PERPLEXITY;
}

int eng_lm_context(int train_len, int k) { return (int)lround(ratios[k] * train_len); }

int eng_lm_stride(int E)
{
    int s = E / 8 > 1 ? E / 8 : 1;
    while (E % s) s--;
    return s;
}

static void run_dir(const eng_options *o, const char *name, char *dir, size_t cap)
{
    snprintf(dir, cap, "%.*s/runs/%s", ENG_PATH - 1, o->out, name);
}

void eng_lm_forget(const eng_options *o, const char *name)
{
    char dir[ENG_PATH + 160], path[ENG_PATH + 192];
    run_dir(o, name, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/lm.csv", dir);
    remove(path);
}

int eng_lm_evaluate_run(const eng_options *o, rg_model *m, rg_task task, const char *name, const char *tag)
{
    const rg_lm_corpus *c = rg_lm_corpus_of(task);
    if (!c) { fprintf(stderr, "%s: %s\n", tag, rg_last_error()); return -1; }
    char dir[ENG_PATH + 160];
    run_dir(o, name, dir, sizeof dir);
    if (eng_make_dir(dir)) return -1;
    int Emax = eng_lm_context(o->train_len, ENG_LM_NRATIOS - 1);
    double *pos_nll = calloc((size_t)ENG_LM_NRATIOS * Emax, sizeof *pos_nll);
    int64_t *pos_n = calloc((size_t)ENG_LM_NRATIOS * Emax, sizeof *pos_n);
    eng_out csv, pcsv;
    if (!pos_nll || !pos_n || eng_out_open(&csv, dir, "lm.csv")) { free(pos_nll); free(pos_n); return -1; }
    eng_out_printf(&csv, "task,pos,method,context,ratio,stride,ppl,nll,scored\n");
    double t0 = eng_now_seconds();
    for (int k = 0; k < ENG_LM_NRATIOS; k++) {
        int E = eng_lm_context(o->train_len, k);
        for (int meth = 0; meth < 2; meth++) {
            int S = meth ? eng_lm_stride(E) : E;
            rg_lm_score s = {0, 0, meth ? NULL : pos_nll + (size_t)k * Emax, meth ? NULL : pos_n + (size_t)k * Emax};
            rg_status st = rg_lm_evaluate(m, c->valid, c->n_valid, E, (rg_lm_method)meth, S, LM_BATCH, &s);
            double ppl = st ? NAN : rg_lm_perplexity(&s);
            if (st && !(st == RG_ERR_ARG && eng_pos_bounded(m->cfg.pos))) { /* past a learned table: n/a */
                fprintf(stderr, "%s: perplexity at context %d: %s\n", tag, E, rg_last_error());
                eng_out_discard(&csv);
                free(pos_nll); free(pos_n);
                return -1;
            }
            eng_out_printf(&csv, "%s,%s,%s,%d,%g,%d,%.6g,%.9g,%lld\n", rg_task_name(task), rg_pos_name(m->cfg.pos),
                          meth ? "sliding" : "chunks", E, ratios[k], S, ppl, st ? NAN : s.nll,
                          st ? 0LL : (long long)s.scored);
            if (!o->quiet)
                fprintf(stderr, "%s: perplexity at context %d (%gL), %s: %.4g\n", tag, E, ratios[k],
                        meth ? "sliding window" : "chunks", ppl);
        }
    }
    int rc = eng_out_close(&csv);
    if (!rc && !eng_out_open(&pcsv, dir, "lm_positions.csv")) {
        eng_out_printf(&pcsv, "offset,context");
        for (int k = 0; k < ENG_LM_NRATIOS; k++) eng_out_printf(&pcsv, ",nll_E%d", eng_lm_context(o->train_len, k));
        eng_out_printf(&pcsv, "\n");
        for (int j = 0; j < Emax; j++) {
            eng_out_printf(&pcsv, "%d,%d", j, j + 1);
            for (int k = 0; k < ENG_LM_NRATIOS; k++) {
                int64_t n = pos_n[(size_t)k * Emax + j];
                if (n) eng_out_printf(&pcsv, ",%.6g", pos_nll[(size_t)k * Emax + j] / (double)n);
                else eng_out_printf(&pcsv, ",nan");
            }
            eng_out_printf(&pcsv, "\n");
        }
        rc = eng_out_close(&pcsv);
    } else {
        rc = -1;
    }
    if (!o->quiet) fprintf(stderr, "%s: perplexity evaluation took %.1f s\n", tag, eng_now_seconds() - t0);
    free(pos_nll);
    free(pos_n);
    return rc;
}
