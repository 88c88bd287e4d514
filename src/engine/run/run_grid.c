/* run_grid.c: what evaluating a grid task adds to run.c (docs/grids.md): the (frame, row, column) axis ids of the
 * evaluation prompts for rg_generate_axes, and the per-cell counts of the outputs (eng_result.cell_count,
 * cell_right) behind the report's grid images (report_grid.c). */
#include "engine/run/run_grid.h"
#include "engine/base/types.h"
#include "task/grid.h"

#include <stdlib.h>

/* A grid task's axis ids of count prompts [count, P]: *axes [RG_POS_AXES, count, P + G] malloc'ed (NULL for a 1-D
 * task, whose forward has none). */
rg_status eng_eval_axes(rg_task task, int n, const int32_t *prompts, int count, int32_t **axes)
{
    *axes = NULL;
    if (!rg_task_is_grid(task)) return RG_OK;
    int P = rg_task_prompt_len(task, n), T = rg_task_total_len(task, n);
    if (!(*axes = malloc(sizeof(int32_t) * RG_POS_AXES * (size_t)count * T)))
        return rg_error(RG_ERR_NOMEM, "evaluation axes n=%d: out of memory", n);
    rg_status st = RG_OK;
    for (int i = 0; i < count && st == RG_OK; i++) /* row i: axis a at a * count * T + i * T */
        st = rg_task_axes(task, n, prompts + (int64_t)i * P, *axes + (int64_t)i * T, (int64_t)count * T);
    if (st) { free(*axes); *axes = NULL; }
    return st;
}

/* The grid image of a grid task's outputs (eng_result.cell_right): each expected target token that is a cell's
 * symbol ('a'..'z' or the background '.') counts at its cell (axis row, axis column - 1; grid.c's layout). */
void eng_cell_count(rg_task task, int n, const int32_t *gen, const int32_t *want, const int32_t *axes, int count,
                   eng_result *r, int slot)
{
    int P = rg_task_prompt_len(task, n), G = rg_task_target_len(task, n), T = P + G;
    int64_t stride = (int64_t)count * T;
    for (int i = 0; i < count; i++)
        for (int j = 0; j < G; j++) {
            int32_t w = want[(int64_t)i * G + j];
            if (!((w >= RG_TOK_SYM0 && w < RG_TOK_SYM0 + RG_TASK_NSYM) || w == RG_GRID_TOK_BG)) continue;
            int64_t at = (int64_t)i * T + P + j;
            int row = axes[stride + at], col = axes[2 * stride + at] - 1;
            if (row < 0 || row >= RG_GRID_MAX_SIDE || col < 0 || col >= RG_GRID_MAX_SIDE) continue;
            r->cell_count[slot][row * RG_GRID_MAX_SIDE + col]++;
            r->cell_right[slot][row * RG_GRID_MAX_SIDE + col] += gen[(int64_t)i * G + j] == w;
        }
}
