/* report_grid.h: the grid tasks' part of the report (report_grid.c). */
#ifndef ENG_VIEWS_REPORT_GRID_H
#define ENG_VIEWS_REPORT_GRID_H

#include <stdbool.h>

#include "engine/base/files.h"
#include "engine/results/results.h"

/* The grid tasks' part (docs/grids.md). to_md_grid: report.md's matrices of grid task `task` (mean,
 * 95% t interval, k/N per size, per encoding row). to_plot_grids: grid_cells.csv, heat_<task> and cells_<task>
 * (.svg, .pdf, .png; data .dat, script .gp) for every grid task of t; nothing without one. 0 or -1 (a missing
 * gnuplot is not an error). */
void to_md_grid(to_out *w, const to_table *t, int task);
int to_plot_grids(const to_table *t, const char *dir);

#endif
