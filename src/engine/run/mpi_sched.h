/* mpi_sched.h: the MPI scheduler (mpi_sched.c): the grid over ranks and data-parallel runs' job loop; the modes
 * are described in mpi_transport.h. */
#ifndef ENG_RUN_MPI_SCHED_H
#define ENG_RUN_MPI_SCHED_H

#include "engine/base/types.h"

/* Ranks 1..N-1: serve rank 0 (grid: run the runs it hands out; data-parallel: take part in each run) until it is
 * done. Returns the exit status (a failed run never returns: MPI_Abort). */
int eng_mpi_worker(const eng_options *o);
/* Rank 0 under MPI: eng_pool_run's contract (results in job order, on_partial after each finished run, the number of
 * failed runs), over the ranks. */
int eng_mpi_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                    void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx);

#endif
