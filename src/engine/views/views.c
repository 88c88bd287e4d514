/* views.c: the table of the report's views (views.h) and the loops over it that write report.md's task sections,
 * report.json's cell keys and the figures, for eng_report (report.c) and --replot. The rows, in order:
 *   exact_match     report.md's exact-match table, report.json "exact_match"; extrapolation (the heatmaps of every
 *                   task) and curves_<task>
 *   max_median      report.md's maximum over seeds / median table
 *   token_accuracy  report.md's token-accuracy table, report.json "token_acc"
 *   grid            report.md's size matrices; grid_cells.csv, heat_<task>, cells_<task> (report_grid.c)
 *   positions       report.json "positions"; positions_<task> (plot_curves.c)
 *   loss            loss_<task>, the training loss of every run (every task)
 *   over_training   over_training_<task>, exact match over training (plot_curves.c) */
#include "engine/views/views.h"
#include "engine/base/files.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/plot/gnuplot.h"
#include "engine/plot/plot.h"
#include "engine/plot/plot_curves.h"
#include "engine/plot/plot_heat.h"
#include "engine/results/results.h"
#include "engine/views/report_grid.h"
#include "engine/views/report_protocol.h"
#include "engine/views/view_tables.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ the figures of the views */

static int plot_heatmaps(const eng_view_ctx *c)
{
    char b[96];
    return eng_plot_draw(c->pen, eng_plot_heatmaps(c->t, c->pen->dir, b, sizeof b), b);
}

static int plot_curves(const eng_view_ctx *c, int task)
{
    char b[96];
    return eng_plot_draw(c->pen, eng_plot_curves(c->t, task, c->pen->dir, b, sizeof b), b);
}

static int plot_grid_cells_csv(const eng_view_ctx *c) { return eng_write_grid_cells_csv(c->t, c->pen->dir); }

static int plot_grid(const eng_view_ctx *c, int task)
{
    char b[96];
    if (eng_plot_draw(c->pen, eng_plot_grid_heat(c->t, task, c->pen->dir, b, sizeof b), b)) return -1;
    return eng_plot_draw(c->pen, eng_plot_grid_cells(c->t, task, c->pen->dir, b, sizeof b), b);
}

static int plot_positions(const eng_view_ctx *c, int task)
{
    char b[96];
    return eng_plot_draw(c->pen, eng_plot_positions(c->t, task, c->pen->dir, b, sizeof b), b);
}

static int plot_loss(const eng_view_ctx *c, int task)
{
    char b[96];
    return eng_plot_draw(c->pen, eng_plot_loss(c->t, task, c->pen->dir, c->runs_dir, b, sizeof b), b);
}

static int plot_over_training(const eng_view_ctx *c, int task)
{
    char b[96];
    return eng_plot_draw(c->pen, eng_plot_over_training(c->t, task, c->pen->dir, c->runs_dir, b, sizeof b), b);
}

/* ------------------------------------------------------------------ the table */

/* --replot draws what it drew before there were views: not the grid's figures, which are the report's (grid_cells.csv
 * and cells_<task> need per-cell counts, which a report.csv read back does not have). */
static const eng_view VIEWS[] = {
    {"exact_match", RG_TASK_VIEW_EXACT, eng_md_exact_table, "exact_match", eng_json_exact, plot_heatmaps, plot_curves,
     true},
    {"max_median", RG_TASK_VIEW_EXACT, eng_md_max_median, NULL, NULL, NULL, NULL, true},
    {"token_accuracy", RG_TASK_VIEW_EXACT, eng_md_token_table, "token_acc", eng_json_token, NULL, NULL, true},
    {"grid", RG_TASK_VIEW_GRID, eng_md_grid, NULL, NULL, plot_grid_cells_csv, plot_grid, false},
    {"positions", RG_TASK_VIEW_POSITIONS, NULL, "positions", eng_json_positions, NULL, plot_positions, true},
    {"loss", 0, NULL, NULL, NULL, NULL, plot_loss, true},
    {"over_training", RG_TASK_VIEW_EXACT, NULL, NULL, NULL, NULL, plot_over_training, true},
};
#define N_VIEWS ((int)(sizeof VIEWS / sizeof VIEWS[0]))

int eng_view_count(void) { return N_VIEWS; }

const eng_view *eng_view_get(int i) { return i >= 0 && i < N_VIEWS ? &VIEWS[i] : NULL; }

bool eng_view_applies(const eng_view *v, const eng_table *t, int task)
{
    return task >= 0 && task < rg_task_count() && t->n_lens[task] && (!v->needs || (rg_task_views(task) & v->needs));
}

/* ------------------------------------------------------------------ the loops */

void eng_views_markdown(eng_out *w, const eng_table *t, int task)
{
    for (int i = 0; i < N_VIEWS; i++)
        if (VIEWS[i].markdown && eng_view_applies(&VIEWS[i], t, task)) VIEWS[i].markdown(w, t, task);
}

void eng_views_json_cell(void *cell, const eng_table *t, const eng_row *r, int n)
{
    for (int i = 0; i < N_VIEWS; i++)
        if (VIEWS[i].json)
            cJSON_AddItemToObject((cJSON *)cell, VIEWS[i].json_key, eng_view_applies(&VIEWS[i], t, r->task) ?
                                  (cJSON *)VIEWS[i].json(t, r, n) : cJSON_CreateNull());
}

int eng_views_plot(const eng_table *t, const char *dir, const char *runs_dir, FILE *said, bool replot)
{
    eng_plot_pen pen = {dir, said, false};
    eng_view_ctx c = {t, runs_dir, &pen};
    for (int i = 0; i < N_VIEWS; i++) {
        const eng_view *v = &VIEWS[i];
        bool any = false;
        for (int task = 0; task < rg_task_count(); task++) any |= eng_view_applies(v, t, task);
        if (!any || (replot && !v->replot)) continue;
        if (v->plot_report && v->plot_report(&c)) return -1;
        for (int task = 0; task < rg_task_count(); task++)
            if (v->plot && eng_view_applies(v, t, task) && v->plot(&c, task)) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ --replot */

int eng_replot_results(const char *report_csv, const eng_result *res, int n_res, int train_len, const char *out_dir)
{
    struct stat sb;
    if (stat(out_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        eng_err("--replot: output folder %s: %s\n", out_dir,
                errno && stat(out_dir, &sb) != 0 ? strerror(errno) : "not a folder");
        return -1;
    }
    char folder[ENG_PATH], runs[ENG_PATH + 16];
    snprintf(runs, sizeof runs, "%s/runs", eng_folder_of(report_csv, folder, sizeof folder));
    eng_table t;
    int rc = eng_table_build(&t, res, n_res, train_len);
    if (rc == 0) {
        rc = eng_views_plot(&t, out_dir, runs, stdout, true);
        eng_table_free(&t);
    }
    if (rc == 0 && fflush(stdout) != 0) rc = -1;
    return rc;
}

int eng_replot(const char *report_csv, const char *out_dir)
{
    eng_result *res = NULL;
    int n_res = 0, train_len = 0;
    if (eng_report_load(report_csv, &res, &n_res, &train_len)) return -1;
    int rc = eng_replot_results(report_csv, res, n_res, train_len, out_dir);
    free(res);
    return rc;
}
