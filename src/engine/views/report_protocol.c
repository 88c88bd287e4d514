/* report_protocol.c: the report's parts beside report.c: the protocol statement (every row's budget, each
 * encoding's extrapolation-relevant settings), report_cells.csv (one line per table cell: every statistic over
 * seeds), and the per-position accounting written out (report_positions.csv, one line per run, test length and
 * output position; report.json "positions" per cell). */
#include "engine/views/report_protocol.h"
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/types.h"
#include "engine/results/results.h"
#include "engine/settings/protocol.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ the protocol statement (report.md) */

/* The budget of the runs: "every run 10000 steps", or the range when they differ. */
static void budget_text(const eng_table *t, char *b, size_t cap)
{
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < t->n_res; i++) {
        if (t->res[i].steps < lo) lo = t->res[i].steps;
        if (t->res[i].steps > hi) hi = t->res[i].steps;
    }
    if (lo == hi) snprintf(b, cap, "every run of every row was trained for the same %lld steps", (long long)lo);
    else snprintf(b, cap, "the runs' budgets differ: %lld to %lld steps (see report.csv's steps)", (long long)lo,
                  (long long)hi);
}

/* Whether the rows hold encoding pos in variant (variant < 0: in any). */
static bool has_row(const eng_rows_held *h, rg_pos_kind pos, int variant)
{
    for (int v = 0; v < ENG_VAR_COUNT; v++)
        if (h->held[pos][v] && (variant < 0 || v == variant)) return true;
    return false;
}

/* The notes' order: each encoding's note_order (0: after those with one), then the registry's. */
static int held_in_note_order(const eng_rows_held *t, int *order)
{
    int n = 0;
    for (int p = 0; p < rg_pos_count(); p++) {
        if (!has_row(t, (rg_pos_kind)p, -1)) continue;
        int key = rg_pos_encoding_of((rg_pos_kind)p)->note_order, k = n++;
        key = key > 0 ? key : INT_MAX;
        for (; k > 0; k--) { /* insertion: stable, so ties keep the registry's order */
            int prev = rg_pos_encoding_of((rg_pos_kind)order[k - 1])->note_order;
            if ((prev > 0 ? prev : INT_MAX) <= key) break;
            order[k] = order[k - 1];
        }
        order[k] = p;
    }
    return n;
}

/* The note of encoding p: its descriptor's report_note (which may write nothing), or without one its doc and the
 * values of the settings it declares. */
static void note_of(const eng_options *o, const eng_rows_held *t, rg_pos_kind p, int dmax, char *buf, size_t cap)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(p);
    rg_pos_note_info in = {dmax, has_row(t, p, ENG_VAR_BASE), has_row(t, p, ENG_VAR_T5MAX128)};
    buf[0] = 0;
    if (e->report_note) { e->report_note(&o->model, &in, buf, cap); return; }
    size_t w = (size_t)snprintf(buf, cap, "%s: %s", e->name, e->doc ? e->doc : "(no description)");
    for (int k = 0; k < e->n_settings && w < cap; k++)
        w += (size_t)snprintf(buf + w, cap - w, "%s%s %g", k ? ", " : "; settings: ", e->settings[k].name,
                              rg_pos_config_get(&o->model, e->settings[k].name));
}

void eng_md_encoding_settings(eng_out *w, const eng_options *o, const eng_rows_held *t, int dmax, const char *why)
{
    eng_out_printf(w, "- extrapolation-relevant settings of each encoding (the longest training distance is %d, "
                     "%s):\n", dmax, why);
    int order[RG_POS_MAX], n = held_in_note_order(t, order);
    static char note[8192], prev[8192];
    prev[0] = 0;
    for (int i = 0; i < n; i++) {
        note_of(o, t, (rg_pos_kind)order[i], dmax, note, sizeof note);
        if (!note[0] || strcmp(note, prev) == 0) continue; /* one line for two layouts of one encoding */
        for (const char *line = note; *line;) {
            size_t len = strcspn(line, "\n");
            eng_out_printf(w, "  - %.*s\n", (int)len, line);
            line += len + (line[len] == '\n');
        }
        strcpy(prev, note);
    }
    bool rand = false;
    for (int p = 0; p < RG_POS_MAX; p++) rand |= t->held[p][ENG_VAR_RAND];
    if (rand)
        eng_out_printf(w, "  - +rand rows: positions drawn from [0, %d) in training and at evaluation\n",
                      o->max_position);
}

/* The settings bullet of the tasks whose longest training distance is d (rg_task_longest_distance at the table's
 * L): each encoding's note against d, under the max_distance a run of those tasks had (eng_set_fair_max_distance),
 * naming the tasks when the table's tasks differ in it. */
static void settings_of_distance(eng_out *w, const eng_options *o, const eng_table *t, int d, bool several)
{
    static eng_options og;
    og = *o;
    eng_rows_held h = {{{false}}};
    char why[512] = "", names[384] = "", size[32];
    int first = -1;
    for (int k = 0; k < t->n_rows; k++) {
        rg_task task = t->rows[k].task;
        if (rg_task_longest_distance(task, t->train_len) != d) continue;
        h.held[t->rows[k].pos][t->rows[k].variant] = true;
        eng_set_fair_max_distance(&og, task, t->rows[k].pos);
        if (first < 0) first = task;
        char item[48];
        snprintf(item, sizeof item, "%s%s", names[0] ? ", " : "", rg_task_name(task));
        if (!strstr(names, item + (names[0] ? 2 : 0)) && strlen(names) + strlen(item) < sizeof names)
            strcat(names, item);
    }
    if (d == 2 * t->train_len + 1) snprintf(why, sizeof why, "2 L + 1 for L = %d", t->train_len);
    else snprintf(why, sizeof why, "the first to the last fed position of a training sequence of %s at L = %s",
                  rg_task_name(first), rg_task_size_text(first, t->train_len, size, sizeof size));
    if (several) snprintf(why + strlen(why), sizeof why - strlen(why), "; the rows of %s", names);
    eng_md_encoding_settings(w, &og, &h, d, why);
}

void eng_md_protocol(eng_out *w, const eng_options *o, const eng_table *t)
{
    char b[160];
    budget_text(t, b, sizeof b);
    eng_out_printf(w, "- budget: %s; a row marked ✗ had that same budget (docs/protocol.md: why this budget)\n", b);
    /* the longest training distance: the tasks' own (rg_task_longest_distance); a bullet per distinct one */
    int dist[RG_TASK_MAX], n_dist = 0;
    bool positions = false;
    for (int task = 0; task < rg_task_count(); task++) {
        if (!t->n_lens[task]) continue;
        int d = rg_task_longest_distance(task, t->train_len), k = 0;
        while (k < n_dist && dist[k] != d) k++;
        if (k == n_dist) dist[n_dist++] = d;
        positions |= (rg_task_views(task) & RG_TASK_VIEW_POSITIONS) != 0;
    }
    for (int k = 0; k < n_dist; k++) settings_of_distance(w, o, t, dist[k], n_dist > 1);
    if (positions)
        eng_out_printf(w, "- per-position accuracy: report_positions.csv (per run, test length and output position) "
                         "and report.json \"positions\" (per cell: accuracy of each output position over seeds, the "
                         "distribution of the first wrong position); plots positions_<task>.svg\n");
    else
        eng_out_printf(w, "- per-position accuracy: report_positions.csv (per run, test length and output position; "
                         "no task of this report has the per-position view)\n");
    if (o->extrap_every)
        eng_out_printf(w, "- extrapolation over training: every %d steps, exact match and token accuracy at every "
                         "test length on the first %d samples of its evaluation set (runs/<run>/extrap.csv); plots "
                         "over_training_<task>.svg\n", o->extrap_every, ENG_CURVE_COUNT);
}

/* ------------------------------------------------------------------ report_cells.csv */

static void csv_num(eng_out *w, double v) { if (isfinite(v)) eng_out_printf(w, ",%.9g", v); else eng_out_printf(w, ","); }

int eng_write_cells_csv(const char *dir, const eng_table *t)
{
    eng_out w;
    if (eng_out_open(&w, dir, "report_cells.csv")) return -1;
    eng_out_printf(&w, "task,encoding,variant,rope_ext,n,train_len,metric,n_seeds,k_reaching_0.5,mean,sd,ci95_t_lo,"
                      "ci95_t_hi,max,median%s\n", eng_size_csv_header(eng_results_sized(t->res, t->n_res)));
    for (int k = 0; k < t->n_rows; k++) {
        const eng_row *r = &t->rows[k];
        for (int j = 0; j < t->n_lens[r->task]; j++)
            for (int e = 1; e >= 0; e--) {
                eng_stat s;
                char ext[48];
                eng_table_cell(t, r, t->lens[r->task][j], e, &s, NULL);
                eng_out_printf(&w, "%s,%s,%s,%s,%d,%d,%s,%d,%d", rg_task_name(r->task), rg_pos_name(r->pos),
                              eng_variant_name(r->variant), eng_ext_text(r->ext, r->ext_factor, ext, sizeof ext),
                              t->lens[r->task][j], t->train_len, e ? "exact_match" : "token_acc", s.n, s.k);
                csv_num(&w, s.mean);
                csv_num(&w, s.sd);
                csv_num(&w, s.lo);
                csv_num(&w, s.hi);
                csv_num(&w, s.max);
                csv_num(&w, s.median);
                char size[128];
                eng_out_printf(&w, "%s\n", eng_row_size_fields(t, r, size, sizeof size));
            }
    }
    return eng_out_close(&w);
}

/* ------------------------------------------------------------------ a trick against its base task (report.md) */

/* The row of (task, pos, variant, the model size of row r) without a RoPE scaling, or NULL. */
static const eng_row *plain_row(const eng_table *t, int task, const eng_row *r)
{
    eng_row like = {.task = (rg_task)task, .pos = r->pos, .variant = r->variant, .ext = RG_ROPE_EXT_NONE};
    memcpy(like.size, r->size, sizeof like.size);
    return eng_table_row_like(t, &like);
}

static bool has_len(const eng_table *t, int task, int n)
{
    for (int j = 0; j < t->n_lens[task]; j++)
        if (t->lens[task][j] == n) return true;
    return false;
}

void eng_md_tricks(eng_out *w, const eng_table *t)
{
    bool header = false;
    for (int task = 0; task < rg_task_count(); task++) {
        const rg_task_desc *d = rg_task_get((rg_task)task);
        rg_task base;
        if (!t->n_lens[task] || !d || !d->base || rg_task_parse(d->base, &base) || !t->n_lens[base]) continue;
        int lens[ENG_MAX_TABLE_LENS], nl = 0; /* the lengths both tasks were tested at */
        for (int j = 0; j < t->n_lens[task]; j++)
            if (has_len(t, base, t->lens[task][j])) lens[nl++] = t->lens[task][j];
        bool rows = false; /* an encoding (and variant) both tasks hold */
        for (int k = 0; k < t->n_rows && !rows; k++)
            rows = t->rows[k].task == (rg_task)task && t->rows[k].ext == RG_ROPE_EXT_NONE &&
                   plain_row(t, base, &t->rows[k]);
        if (!nl || !rows) continue;
        if (!header)
            eng_out_printf(w, "## Tricks against their base tasks\n\nExact match of each trick row beside its base "
                             "task's row of the same encoding and variant (mean over seeds, k/N seeds reaching %.1f): "
                             "trick / base; the budget line above says whether every run had the same steps.\n\n", ENG_PASS_EXACT);
        header = true;
        eng_out_printf(w, "### %s against %s\n\n| encoding |", rg_task_name((rg_task)task), rg_task_name(base));
        for (int j = 0; j < nl; j++) eng_out_printf(w, " n=%d%s |", lens[j], lens[j] == t->train_len ? " (train)" : "");
        eng_out_printf(w, "\n|---|");
        for (int j = 0; j < nl; j++) eng_out_printf(w, "---|");
        eng_out_printf(w, "\n");
        for (int k = 0; k < t->n_rows; k++) {
            const eng_row *r = &t->rows[k], *b;
            if (r->task != (rg_task)task || r->ext != RG_ROPE_EXT_NONE ||
                !(b = plain_row(t, base, r)))
                continue;
            char label[96];
            eng_out_printf(w, "| %s |", eng_row_label(r, label, sizeof label));
            for (int j = 0; j < nl; j++) {
                eng_stat x, y;
                eng_table_cell(t, r, lens[j], true, &x, NULL);
                eng_table_cell(t, b, lens[j], true, &y, NULL);
                if (x.n && y.n) eng_out_printf(w, " %.3f (%d/%d) / %.3f (%d/%d) |", x.mean, x.k, x.n, y.mean, y.k, y.n);
                else eng_out_printf(w, " n/a |");
            }
            eng_out_printf(w, "\n");
        }
        eng_out_printf(w, "\n");
    }
}

/* ------------------------------------------------------------------ per-position accounting */

int eng_write_positions_csv(const char *dir, const eng_table *t)
{
    eng_out w;
    if (eng_out_open(&w, dir, "report_positions.csv")) return -1;
    bool sized = eng_results_sized(t->res, t->n_res); /* a model-size axis: the size last */
    eng_out_printf(&w, "task,encoding,variant,rope_ext,seed,n,position,samples,right,first_wrong%s\n",
                  sized ? ",size" : "");
    for (int i = 0; i < t->n_res; i++) {
        const eng_result *x = &t->res[i];
        char ext[48];
        eng_ext_text(x->ext, x->ext_factor, ext, sizeof ext);
        for (int j = 0; j < x->n_lens; j++) /* the counts hold the G target tokens of lens[j] (run.c) */
            for (int p = 0, G = rg_task_target_len(x->task, x->lens[j]); x->pos_count[j] > 0 && p < G; p++)
                eng_out_printf(&w, "%s,%s,%s,%s,%d,%d,%d,%d,%d,%d%s%s\n", rg_task_name(x->task), rg_pos_name(x->pos),
                              eng_variant_name(x->variant), ext, x->seed, x->lens[j], p + 1, x->pos_count[j],
                              x->pos_right[j][p], x->first_wrong[j][p], sized ? "," : "", sized ? x->size : "");
    }
    return eng_out_close(&w);
}

void *eng_json_positions(const eng_table *t, const eng_row *r, int n)
{
    double acc[ENG_POS_MAX], fw[ENG_POS_MAX], all;
    int seeds = eng_cell_positions(t, r, n, acc, fw, &all);
    if (!seeds) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n_seeds", seeds);
    int m = rg_task_target_len(r->task, n); /* the answer's tokens */
    cJSON_AddItemToObject(o, "accuracy", cJSON_CreateDoubleArray(acc, m));
    cJSON_AddItemToObject(o, "first_wrong", cJSON_CreateDoubleArray(fw, m));
    cJSON_AddNumberToObject(o, "all_right", all);
    return o;
}
