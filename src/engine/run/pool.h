/* pool.h: the job pool (pool.c). */
#ifndef ENG_RUN_POOL_H
#define ENG_RUN_POOL_H

#include "engine/base/types.h"

/* Runs the jobs, at most o->jobs processes at a time; each child hands its results back through its own pipe.
 * After each finished job, on_partial (if not NULL) is called with the results so far. Writes the results into
 * all (room for n_jobs * (1 + ENG_MAX_EXTS)) and their count into *n_all; returns the number of failed jobs. */
int eng_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx);

#endif
