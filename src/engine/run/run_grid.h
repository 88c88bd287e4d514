/* run_grid.h: grid tasks at evaluation (run_grid.c). */
#ifndef ENG_RUN_RUN_GRID_H
#define ENG_RUN_RUN_GRID_H

#include "engine/base/types.h"

/* The axis ids of count prompts [count, P] of grid task `task` at size n: *axes [RG_POS_AXES, count, P + G]
 * malloc'ed (rg_task_axes per row; the caller frees it), NULL for a 1-D task (its forward has none). RG_ERR_NOMEM,
 * the errors of rg_task_axes. */
rg_status eng_eval_axes(rg_task task, int n, const int32_t *prompts, int count, int32_t **axes);
/* Adds the grid image of count outputs gen [count, G] against want [count, G] to r's slot: every expected token
 * that is a cell's symbol (a..z, or the background '.') counts at its cell (axis row, axis column - 1 of axes, the
 * layout of eng_eval_axes); cells outside 9 x 9 are not counted. */
void eng_cell_count(rg_task task, int n, const int32_t *gen, const int32_t *want, const int32_t *axes, int count,
                   eng_result *r, int slot);

#endif
