/* resume.h: what one run keeps for a resume (resume.c). */
#ifndef ENG_RUN_RESUME_H
#define ENG_RUN_RESUME_H

#include "engine/base/types.h"

/* CRC-32 of the settings JSON of o with how and where it runs (jobs, quiet, overwrite, out) left out: equal for an
 * invocation and its --continue. */
uint32_t eng_settings_digest(const eng_options *o);
/* In a continued invocation, run job's settings ov (eng_run_options) resume from the run's checkpoint in
 * <out>/ckpt when there is one (checked by eng_continue_pool_run before any run started): ov->resume names it. */
void eng_continue_resume_source(eng_options *ov, const eng_job *job);
/* The training loop's loss window (the mean loss of train.csv's rows and the run's final loss: the sum and count
 * of the losses since the last row, and the last row's mean, NaN before the first) kept in the run state at each
 * checkpoint, so that a continued run ends with the loss an uninterrupted one has. 0, or -1 (rg_last_error). */
int eng_loss_window_store(rg_run_state *rs, double sum, int64_t steps, double row);
/* Reads it back (a checkpoint without it: an empty window, row NaN). */
void eng_loss_window_load(const rg_run_state *rs, double *sum, int64_t *steps, double *row);
/* Checks what a checkpoint's run state keeps for the training loop of a run with settings ov: steps_to_learn (-1
 * or a step from 1 to rs->step) and the loss window (finite values, at most log_every steps). 0, or -1 with why. */
int eng_run_check_state(const rg_run_state *rs, const eng_options *ov, char *why, size_t cap);

#endif
