/* task_internal.h: checks and helpers shared by the files of the tasks library (task.c, registry.c, grid_size.c,
 * batch.c, evalset.c); not installed, not part of the interface. */
#ifndef RG_TASK_INTERNAL_H
#define RG_TASK_INTERNAL_H

#include "task.h"

/* RG_ERR_ARG "task N is not an ordering task" unless 0 <= task < RG_TASK_BUILTIN. */
rg_status rg_task_check_ordering(rg_task task);
/* RG_ERR_ARG unless 1 <= n <= RG_TASK_MAX_N. */
rg_status rg_task_check_n(int n);
/* y = the ordering task's targets of the content symbols x[0..n) (no checks). */
void rg_task_targets_unchecked(rg_task task, const int32_t *x, int n, int32_t *y);

/* The registered task's descriptor when n is one of its sizes (1 <= n <= RG_TASK_MAX_N, and a grid size of a grid
 * task); NULL with RG_ERR_ARG in *st and the error set ("unknown task", "n = .. is not a size of grid task"). */
const rg_task_desc *rg_task_at(rg_task task, int n, rg_status *st);

/* RG_ERR_ARG unless the batch's buffers are set and 1 <= B <= max_batch. */
rg_status rg_task_check_batch(const rg_task_batch *b, int B);

/* Mallocs the batch buffers: tokens and targets of cap elements, len and n of max_batch entries (max_batch >= 1,
 * cap >= 1). RG_ERR_NOMEM. */
rg_status rg_task_batch_alloc_cap(rg_task_batch *b, int max_batch, int64_t cap);

#endif
