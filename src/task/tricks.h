/* tricks.h: the literature's length-generalization tricks as registered tasks (src/task/tricks.c has the layouts
 * and sources; docs/tricks.md how they are run; results/tricks/ the measurements): index hints (copy_hints,
 * reverse_hints; Zhou et al. 2024) and position coupling (copy_coupled, reverse_coupled; Cho et al. 2024). Each names
 * its base task (rg_task_desc.base) and is RG_TASK_OPT_IN: train_order's --task all leaves them out. */
#ifndef RG_TASK_TRICKS_H
#define RG_TASK_TRICKS_H

#include <stdbool.h>

#include "task.h"

#define RG_HINT_COUNT 128                            /* index tokens h_0..h_127 */
#define RG_HINT_TOK0 RG_TASK_VOCAB                   /* h_k is token 30 + k */
#define RG_HINT_VOCAB (RG_TASK_VOCAB + RG_HINT_COUNT) /* 158 */
#define RG_COUPLED_MAX_POS 128                       /* training's coupled ids lie in [0, 128) */

extern const rg_task_desc rg_task_desc_copy_hints, rg_task_desc_reverse_hints;
extern const rg_task_desc rg_task_desc_copy_coupled, rg_task_desc_reverse_coupled;

/* The coupled position ids of a copy (reverse false) or reverse sample of length n from start s into
 * pos[0..2n+3) (the table in tricks.c). RG_ERR_ARG for n < 1, s < 0, or s + n + 2 > RG_TASK_MAX_POSITION. */
rg_status rg_coupled_positions(bool reverse, int n, int s, int32_t *pos);

/* Registers the four tasks (again: a no-op). The errors of rg_task_register (a full registry). */
rg_status rg_task_register_tricks(void);

#endif
