/* lm_run.h: the language-modelling runs and report of train_order (lm_run.c, lm_report.c; tasks in
 * src/task/lm.h; docs/lm.md). Internal to the engine (prefix eng_). */
#ifndef ENG_RUN_LM_RUN_H
#define ENG_RUN_LM_RUN_H

#include "engine/base/types.h"

#define ENG_LM_NRATIOS 6 /* contexts round(f L), f = 1, 1.25, 1.5, 2, 4, 8 (Press et al. 2022, Table 2) */

/* True for the LM tasks (lm, lm_en), whose runs are evaluated by perplexity instead of greedy decoding. */
bool eng_lm_task(rg_task task);
/* Context k (0..ENG_LM_NRATIOS-1) of training length L: round(f_k L). */
int eng_lm_context(int train_len, int k);
/* The sliding window's stride at context E: the largest divisor of E not above max(1, E/8). */
int eng_lm_stride(int E);
/* Removes runs/<name>/lm.csv (a stale file of an --overwrite'd folder is never read as this run's). */
void eng_lm_forget(const eng_options *o, const char *name);
/* Evaluates a trained LM run at every context and writes runs/<name>/lm.csv and lm_positions.csv. 0, or -1 with a
 * message (tag first). */
int eng_lm_evaluate_run(const eng_options *o, rg_model *m, rg_task task, const char *name, const char *tag);

#endif
