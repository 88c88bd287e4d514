/* views.h: the report's views (views.c): what a report shows of a task, one row of a table per view. A task asks for
 * its views through rg_task_views (RG_TASK_VIEW_* of src/task/task.h: exact match, per position, perplexity, grid);
 * a view needs one of those bits (or none: every task) and has up to four hooks, each optional: its part of the
 * task's section of report.md, a key of every cell of report.json, a figure of the whole report and figures of each
 * task. report.md, report.json and the figures (eng_report, --replot) are loops over the table, in its order; a new
 * view is a row there and a file of its own. The language models' perplexity has its own report (lm_report.c): a
 * table of eng_results never holds a perplexity task. */
#ifndef ENG_VIEWS_VIEWS_H
#define ENG_VIEWS_VIEWS_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/base/files.h"
#include "engine/base/types.h"
#include "engine/plot/gnuplot.h"
#include "engine/results/results.h"

/* What a view's figure hooks are given: the table, the folder of the runs' logs, and the pen (gnuplot.h: the output
 * folder, where to say what was drawn, whether gnuplot is missing). */
typedef struct {
    const eng_table *t;
    const char *runs_dir;
    eng_plot_pen *pen;
} eng_view_ctx;

typedef struct {
    const char *name;       /* the view's name, [a-z_] */
    unsigned needs;         /* RG_TASK_VIEW_* bits: it applies to a task of the table that has one (0: every task) */
    /* report.md: the view's part of a task's section (after "## <task>"), for each task it applies to */
    void (*markdown)(eng_out *w, const eng_table *t, int task);
    /* report.json: key json_key of every cell object (row r at test length n): the hook's value (a cJSON *) where the
     * view applies to r's task, JSON null elsewhere, so that the cells keep one schema */
    const char *json_key;
    void *(*json)(const eng_table *t, const eng_row *r, int n);
    /* figures: plot_report once per report (when the view applies to a task of it), then plot per task it applies
     * to; each writes its files and draws them with eng_plot_draw. 0 or -1 (a message). */
    int (*plot_report)(const eng_view_ctx *c);
    int (*plot)(const eng_view_ctx *c, int task);
    bool replot;            /* --replot draws its figures too (from report.csv alone) */
} eng_view;

/* The views in their order (report.md's parts of a section, report.json's keys of a cell, the figures). */
int eng_view_count(void);
const eng_view *eng_view_get(int i);
/* Whether view v applies to task: t holds the task and the task asks for one of v->needs (or v needs none). */
bool eng_view_applies(const eng_view *v, const eng_table *t, int task);

/* report.md: the parts of task's section, every applying view's markdown in order. */
void eng_views_markdown(eng_out *w, const eng_table *t, int task);
/* report.json: every view's key of the cell (row r at test length n) added to cell (a cJSON object). */
void eng_views_json_cell(void *cell, const eng_table *t, const eng_row *r, int n);
/* The figures of t into dir: each view's plot_report, then its plot per task, view after view; runs_dir holds the
 * runs' logs; said (or NULL) gets a line per figure drawn; replot: only the views that --replot draws. 0 or -1 (a
 * missing gnuplot is a warning: the data and scripts are still written). */
int eng_views_plot(const eng_table *t, const char *dir, const char *runs_dir, FILE *said, bool replot);

/* --replot: re-draws the figures of a report from its report.csv (validated as user input: header, names, ranges,
 * duplicates) into out_dir (which must exist), without retraining. Loss curves are drawn from the runs' logs under
 * <folder of report_csv>/runs/ when present. Returns 0, or -1 with a message naming the file and line. */
int eng_replot(const char *report_csv, const char *out_dir);
/* The same from results already loaded from report_csv by eng_report_load (the CSV's folder gives runs/). */
int eng_replot_results(const char *report_csv, const eng_result *res, int n_res, int train_len, const char *out_dir);

#endif
