/* evaluate.h: evaluating a model on an evaluation set (evaluate.c). */
#ifndef ENG_RUN_EVALUATE_H
#define ENG_RUN_EVALUATE_H

#include "engine/base/types.h"

/* Greedy decoding of the first `count` samples of an evaluation set and its scores: exact match and token
 * accuracy through the task's score hook (token equality without one), and, when r is not NULL and the target
 * length <= ENG_POS_MAX, the per-position accounting of r's slot (eng_position_count). At positions 0.., or at row i
 * of pos [count, prompt + target length]. RG_ERR_ARG when a position passes the learned table. */
rg_status eng_evaluate_set(rg_model *m, const rg_evalset *es, int count, const int32_t *pos, double *exact,
                          double *token_acc, eng_result *r, int slot);
/* Randomized evaluation positions (Ruoss et al. 2023; run.c): *pos = NULL unless random, else [count, 2n+3] sorted
 * random subsets of [0, max_position) from PCG32 (seed, base + rg_eval_stream(task, n)); base EVALPOS_TEST for the
 * test sets, EVALPOS_HELDOUT for the held-out set. RG_ERR_ARG when 2n+3 > max_position, RG_ERR_NOMEM. */
#define EVALPOS_TEST ((uint64_t)1 << 32)
#define EVALPOS_HELDOUT ((uint64_t)2 << 32)
rg_status eng_eval_positions(bool random, uint64_t seed, uint64_t base, rg_task task, int n, int count,
                            int max_position, int32_t **pos);

/* Greedy decoding of count prompts [count, P] of (task, n), target_len(n) tokens each, scored against want
 * [count, G]: exact match and token accuracy through the task's score hook (rg_task_score_rows; token equality
 * without one), and into r's slot (when r is not NULL and G <= ENG_POS_MAX) the per-position accounting by token
 * equality (eng_position_count). At positions 0.., or at row i of pos [count, P + G] if not NULL. RG_ERR_ARG when a
 * position passes the learned table. */
rg_status eng_evaluate_rows(rg_model *m, rg_task task, int n, const int32_t *prompts, const int32_t *want,
                               int count, const int32_t *pos, double *exact, double *token_acc, eng_result *r,
                               int slot);

#endif
