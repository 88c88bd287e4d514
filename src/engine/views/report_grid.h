/* report_grid.h: the grid tasks' part of the report (report_grid.c). */
#ifndef ENG_VIEWS_REPORT_GRID_H
#define ENG_VIEWS_REPORT_GRID_H

#include <stdbool.h>

#include "engine/base/files.h"
#include "engine/results/results.h"

#include <stddef.h>

/* The grid tasks' part (docs/grids.md), the grid view (views.c). eng_md_grid: report.md's matrices of grid task
 * `task` (mean, 95% t interval, k/N per size, per encoding row). eng_write_grid_cells_csv: <dir>/grid_cells.csv, the
 * per-cell counts of every grid task of t pooled over seeds (0 or -1). The figures of grid task `task`, each its .dat
 * and .gp in dir, base (cap bytes) its name: heat_<task> (the matrices as heatmaps, a panel per encoding row) and
 * cells_<task> (per-cell accuracy images at up to three sizes): 1 written, 0 nothing to draw (no per-cell counts:
 * a report read back), -1 failed (a message). */
void eng_md_grid(eng_out *w, const eng_table *t, int task);
int eng_write_grid_cells_csv(const eng_table *t, const char *dir);
int eng_plot_grid_heat(const eng_table *t, int task, const char *dir, char *base, size_t cap);
int eng_plot_grid_cells(const eng_table *t, int task, const char *dir, char *base, size_t cap);

#endif
