/* continue.h: --continue OUT: an interrupted invocation's grid, picked up (continue.c). */
#ifndef ENG_RUN_CONTINUE_H
#define ENG_RUN_CONTINUE_H

#include "engine/base/types.h"

/* Writes <out>/invocation.json atomically (the command line and the resolved settings) for an invocation of new
 * runs (nothing for --resume, --eval or --continue itself). 0, or -1 with a message naming the file. */
int eng_continue_record(const eng_options *o, const char *cmd);
/* For --continue OUT (o->cont): refuses every flag but --jobs and --quiet, then replaces o by the settings of
 * OUT/invocation.json (checked as --config's are; --jobs and --quiet given win; out = OUT; continuing set) and cmd
 * by its command line. Exits 2 with a message naming the file when it is missing or not one train_order wrote. */
void eng_continue_load(eng_options *o, char *cmd, size_t cap);
/* eng_pool_run's contract for a continued invocation: each job's files in o->out are checked first (exit 2 naming
 * the first that cannot be used: a results file or a checkpoint that is not this run's, corrupt, truncated or of
 * another version); finished jobs' stored records are used, the others run (a checkpoint's run resumes from it:
 * eng_run). Results in job order, as for an uninterrupted invocation. */
int eng_continue_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                         void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx);

#endif
