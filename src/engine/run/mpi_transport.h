/* mpi_transport.h: train_order over MPI ranks, the transport (mpi_transport.c; the scheduler is mpi_sched.h). OpenMPI launches the ranks
 * (`mpirun -np N build/examples/train_order ...`); MPI is initialized only when the environment says mpirun started
 * this process (OMPI_COMM_WORLD_SIZE or PMIX_RANK), so a plain run and its --jobs fork pool are unchanged.
 *
 * Two modes:
 *   - the grid over ranks (default): rank 0 hands out the runs one at a time to whichever rank asks (runs differ in
 *     length), gathers their results (eng_result records) and writes the report, logs and plot as one process would;
 *     ranks 1..N-1 train and write their runs' checkpoints and train.csv to the shared --out. Rank 0 only
 *     coordinates (it polls with a 2 ms sleep, so it costs no core); with one rank it runs the grid itself.
 *   - --data-parallel: every rank takes part in every run; micro-batch j of each batch is computed by rank j % N
 *     (rg_trainer_set_share) and the flat gradient block is summed in a FIXED order: MPI_Gather of every rank's block
 *     to rank 0, a sum in rank order there (((g0 + g1) + g2) + ...), MPI_Bcast of the sum (and the same for the loss),
 *     so the result never depends on timing and every rank clips and updates identical parameters. Only rank 0
 *     writes checkpoints, train.csv, evaluations and the report.
 * A rank whose run fails prints "train_order: rank R of N (host): run TASK/POS/seedS failed; ending the MPI job" and
 * calls MPI_Abort, which ends every rank. Built without MPI (no mpicc), the MPI files are stubs that refuse --data-parallel
 * and an mpirun launch with a message (exit 2).
 *
 * Test hooks (environment): TRAIN_ORDER_MPI_CHECKSUM=1 prints "mpi checksum: rank R step S HEX" (FNV-1a of the
 * parameter bytes) after every step on every rank; TRAIN_ORDER_MPI_FAIL=R:S makes rank R's run fail at step S. */
#ifndef ENG_RUN_MPI_TRANSPORT_H
#define ENG_RUN_MPI_TRANSPORT_H

#include "engine/base/types.h"

/* First thing in main: MPI_Init when launched by mpirun, and an exit handler that ends MPI cleanly (MPI_Finalize;
 * ranks still waiting for rank 0 are released first). Exits 2 in a build without MPI when launched by mpirun. */
void eng_mpi_start(int *argc, char ***argv);
/* After the options are checked: --data-parallel needs an mpirun launch (exit 2 with a message otherwise). */
void eng_mpi_check(const eng_options *o);
/* This process's rank (0 without MPI) and the number of ranks (1 without MPI). */
int eng_mpi_rank(void);
int eng_mpi_size(void);
/* ---- used by the scheduler (mpi_sched.c), MPI builds only */
/* Rank 0 tells the others whether the work starts (1) or the program ends before it (0); returns go as received. */
int eng_mpi_release(int go);
bool eng_mpi_active(void);         /* launched by mpirun, MPI initialized */
bool eng_mpi_data_parallel(void);  /* --data-parallel */
const char *eng_mpi_host(void);    /* this rank's processor name */

/* ---- used by run.c */
/* Data-parallel: gives trainer t this rank's share and the MPI reduction (rg_trainer_set_share). Otherwise nothing.
 * 0, or -1 with a message. */
int eng_mpi_share(rg_trainer *t, const char *tag);
/* Whether this rank writes a run's checkpoints, train.csv and evaluations: false only on ranks 1..N-1 with
 * --data-parallel. */
bool eng_mpi_writes(void);
/* After each step: the test hooks (checksum line, injected failure: -1 with a message) and, at the last step of a
 * data-parallel run, rank 0's line on communication time per step and gradient bytes. 0 or -1. */
int eng_mpi_after_step(const eng_options *o, const rg_model *m, const char *tag, int64_t step);

#endif
