/* run.h: one run: train, evaluate, write its files (run.c). */
#ifndef ENG_RUN_RUN_H
#define ENG_RUN_RUN_H

#include "engine/base/types.h"

/* Trains (or resumes, or only evaluates) one run of training variant `variant` and writes its evaluated rows to
 * res (the encoding, then each RoPE extension: up to 1 + ENG_MAX_EXTS); returns the number written, or -1 with a
 * message on stderr. With o->resume or o->eval set, task, pos, seed and the variant come from that checkpoint. */
int eng_run(const eng_options *o, const eng_job *job, eng_result *res);

/* The settings run `job` trains with: o with the job's training variant applied (none for a checkpoint's run).
 * ov may not be o. */
void eng_run_options(const eng_options *o, const eng_job *job, eng_options *ov);

#endif
