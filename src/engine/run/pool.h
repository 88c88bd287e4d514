/* pool.h: the job pool (pool.c). */
#ifndef ENG_RUN_POOL_H
#define ENG_RUN_POOL_H

#include "engine/base/types.h"

/* Runs the jobs, at most o->jobs processes at a time; each child hands its results back through its own pipe.
 * After each finished job, on_partial (if not NULL) is called with the results so far. Writes the results into
 * all (room for n_jobs * (1 + TO_MAX_EXTS)) and their count into *n_all; returns the number of failed jobs. */
int to_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx);

#endif
