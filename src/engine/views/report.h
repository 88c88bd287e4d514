/* report.h: a report's files: report.md, report.csv, report.json and the figures (report.c), each task's part of
 * them written by the views it asks for (views.h). Every file is written through base/files.h's checked output
 * files: renamed into place only when complete. */
#ifndef ENG_VIEWS_REPORT_H
#define ENG_VIEWS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/base/files.h"
#include "engine/base/types.h"

/* What the report says about the invocation that produced it. */
typedef struct {
    double wall_seconds;
    const char *command;       /* the command line, as typed */
    bool partial;              /* written while runs are still going: the report says so */
    int runs_done, runs_total; /* shown for a partial report (0, 0: not shown) */
    const char *sources;       /* a combined report (eng_combine_load): markdown naming its inputs; NULL otherwise */
} eng_report_meta;

/* Writes report.md, report.csv, report_cells.csv, report_positions.csv, report.json and the figures into o->out:
 * each task's section of report.md, keys of report.json's cells and figures are those of its views (views.c:
 * extrapolation.svg, the exact-match and token-accuracy heatmaps of every task; curves_<task>.svg; loss_<task>.svg
 * from <o->out>/runs/<run>/train.csv (eng_run_name) where those logs exist; ...). Returns 0, or -1 with a message
 * on stderr naming the file that could not be written (a missing gnuplot is a warning, not an error: the data and
 * scripts are still written). */
int eng_report(const eng_options *o, const eng_result *res, int n_res, const eng_report_meta *meta);

/* ------------------------------------------------------------------ provenance */

/* Where and when a report was made: UTC date, the commit the binary was built from (RG_GIT_COMMIT, "+dirty" when
 * the tree had changes), /proc/cpuinfo's model name ("unknown" without it), OpenBLAS's kernel name and config. */
typedef struct {
    char date[32], cpu[160];
    const char *commit, *blas_core, *blas_config;
} eng_provenance;

/* Fills p for now. Never fails (a field it cannot read is "unknown"). */
void eng_provenance_get(eng_provenance *p);
/* A report's "## Provenance" section: p, the ropegrad version and real type, the command (NULL: empty) and the
 * wall time in seconds. */
void eng_md_provenance(eng_out *w, const eng_provenance *p, const char *command, double wall_seconds);

#endif
