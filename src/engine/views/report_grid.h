/* report_grid.h: the grid tasks' part of the report (report_grid.c). */
#ifndef ENG_VIEWS_REPORT_GRID_H
#define ENG_VIEWS_REPORT_GRID_H

#include <stdbool.h>

#include "engine/base/files.h"
#include "engine/results/results.h"

/* The grid tasks' part (docs/grids.md). eng_md_grid: report.md's matrices of grid task `task` (mean,
 * 95% t interval, k/N per size, per encoding row). eng_plot_grids: grid_cells.csv, heat_<task> and cells_<task>
 * (.svg, .pdf, .png; data .dat, script .gp) for every grid task of t; nothing without one. 0 or -1 (a missing
 * gnuplot is not an error). */
void eng_md_grid(eng_out *w, const eng_table *t, int task);
int eng_plot_grids(const eng_table *t, const char *dir);

#endif
