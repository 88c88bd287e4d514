/* view_tables.c: the exact-match views' tables of a task (views.c): report.md's exact-match table (a row per
 * encoding and RoPE extension, a column per test length: mean ± sd [95% t interval] · k/N seeds reaching 0.5, and
 * the steps to learn), the maximum over seeds / median table below it, the token-accuracy table; report.json's
 * "exact_match" and "token_acc" of a cell (every statistic with its per-seed values). */
#include "engine/views/view_tables.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/types.h"
#include "engine/results/results.h"
#include "engine/settings/protocol.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ report.md */

static const char *fmt_stat(const eng_stat *s, bool exact, char *buf, size_t cap)
{
    if (s->n == 0) snprintf(buf, cap, "n/a");
    else if (s->n == 1 && exact) snprintf(buf, cap, "%.3f · %d/1", s->mean, s->k);
    else if (s->n == 1) snprintf(buf, cap, "%.3f", s->mean);
    else if (exact) snprintf(buf, cap, "%.3f ± %.3f [%.3f, %.3f] · %d/%d", s->mean, s->sd, s->lo, s->hi, s->k, s->n);
    else snprintf(buf, cap, "%.3f ± %.3f [%.3f, %.3f]", s->mean, s->sd, s->lo, s->hi);
    return buf;
}

static void md_table(eng_out *w, const eng_table *t, int task, bool exact)
{
    int L = t->train_len;
    eng_out_printf(w, "### %s: %s\n\n| encoding | seeds |", rg_task_name((rg_task)task),
                  exact ? "exact match" : "token accuracy");
    bool learn = exact && eng_table_has_learn(t);
    char size[32];
    for (int j = 0; j < t->n_lens[task]; j++)
        eng_out_printf(w, " %s%s |", eng_size_label((rg_task)task, t->lens[task][j], size, sizeof size),
                      t->lens[task][j] == L ? " (train)" : "");
    if (learn) eng_out_printf(w, " steps to %.2f |", ENG_LEARNED_EXACT);
    eng_out_printf(w, "\n|---|---|");
    for (int j = 0; j < t->n_lens[task] + learn; j++) eng_out_printf(w, "---|");
    eng_out_printf(w, "\n");
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (r->task != (rg_task)task) continue;
        eng_stat s;
        char label[96], cell[128];
        eng_out_printf(w, "| %s%s | %d |", eng_row_label(r, label, sizeof label), eng_row_learned(t, r) ? "" : " ✗",
                      r->n_runs);
        for (int j = 0; j < t->n_lens[task]; j++) {
            eng_table_cell(t, r, t->lens[task][j], exact, &s, NULL);
            eng_out_printf(w, " %s |", fmt_stat(&s, exact, cell, sizeof cell));
        }
        if (learn) {
            eng_learn_stat ls;
            eng_row_steps_to_learn(t, r, &ls);
            eng_out_printf(w, " %s |", eng_learn_text(&ls, cell, sizeof cell));
        }
        eng_out_printf(w, "\n");
    }
    eng_out_printf(w, "\n");
}

void eng_md_exact_table(eng_out *w, const eng_table *t, int task) { md_table(w, t, task, true); }
void eng_md_token_table(eng_out *w, const eng_table *t, int task) { md_table(w, t, task, false); }

void eng_md_max_median(eng_out *w, const eng_table *t, int task)
{
    int L = t->train_len;
    eng_out_printf(w, "### %s: exact match, maximum over seeds / median\n\n| encoding | seeds |",
                  rg_task_name((rg_task)task));
    char size[32];
    for (int j = 0; j < t->n_lens[task]; j++)
        eng_out_printf(w, " %s%s |", eng_size_label((rg_task)task, t->lens[task][j], size, sizeof size),
                      t->lens[task][j] == L ? " (train)" : "");
    eng_out_printf(w, "\n|---|---|");
    for (int j = 0; j < t->n_lens[task]; j++) eng_out_printf(w, "---|");
    eng_out_printf(w, "\n");
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        if (r->task != (rg_task)task) continue;
        char label[96];
        eng_out_printf(w, "| %s%s | %d |", eng_row_label(r, label, sizeof label), eng_row_learned(t, r) ? "" : " ✗",
                      r->n_runs);
        for (int j = 0; j < t->n_lens[task]; j++) {
            eng_stat s;
            eng_table_cell(t, r, t->lens[task][j], true, &s, NULL);
            if (s.n == 0) eng_out_printf(w, " n/a |");
            else eng_out_printf(w, " %.3f / %.3f |", s.max, s.median);
        }
        eng_out_printf(w, "\n");
    }
    eng_out_printf(w, "\n");
}

/* ------------------------------------------------------------------ report.json */

static cJSON *num_or_null(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *json_stat(const eng_stat *s, const double *values, const eng_row *r, const eng_table *t, bool exact)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "mean", num_or_null(s->mean));
    cJSON_AddItemToObject(o, "sd", num_or_null(s->sd));
    cJSON *ci = cJSON_AddArrayToObject(o, "ci95_t");
    cJSON_AddItemToArray(ci, num_or_null(s->lo));
    cJSON_AddItemToArray(ci, num_or_null(s->hi));
    cJSON *bi = cJSON_AddArrayToObject(o, "ci95_bootstrap");
    cJSON_AddItemToArray(bi, num_or_null(s->boot_lo));
    cJSON_AddItemToArray(bi, num_or_null(s->boot_hi));
    cJSON_AddItemToObject(o, "max", num_or_null(s->max));
    cJSON_AddItemToObject(o, "median", num_or_null(s->median));
    if (exact) cJSON_AddNumberToObject(o, "k_reaching_0.5", s->k);
    cJSON_AddNumberToObject(o, "n_seeds", s->n);
    cJSON *ps = cJSON_AddArrayToObject(o, "per_seed");
    for (int i = 0; i < r->n_runs; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "seed", t->res[r->runs[i]].seed);
        cJSON_AddItemToObject(e, "value", num_or_null(values[i]));
        cJSON_AddItemToArray(ps, e);
    }
    return o;
}

/* A cell's statistics of one metric, with its per-seed values (JSON null when out of memory). */
static cJSON *json_cell(const eng_table *t, const eng_row *r, int n, bool exact)
{
    double *v = malloc(sizeof(double) * (size_t)(r->n_runs > 0 ? r->n_runs : 1));
    if (!v) return cJSON_CreateNull();
    eng_stat s;
    eng_table_cell(t, r, n, exact, &s, v);
    cJSON *o = json_stat(&s, v, r, t, exact);
    free(v);
    return o;
}

void *eng_json_exact(const eng_table *t, const eng_row *r, int n) { return json_cell(t, r, n, true); }
void *eng_json_token(const eng_table *t, const eng_row *r, int n) { return json_cell(t, r, n, false); }
