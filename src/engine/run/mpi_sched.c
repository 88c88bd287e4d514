/* mpi_sched.c: the MPI scheduler (mpi_sched.h): the grid over ranks (rank 0 hands out runs and gathers their
 * eng_result records, ranks 1..N-1 run them) and the job loop of data-parallel runs; a failed run ends the MPI job
 * (message + MPI_Abort). It runs jobs (eng_run, the pool) and talks through the transport (mpi_transport.c), which
 * knows nothing of jobs. Compiled against OpenMPI when the Makefile finds mpicc (ENG_HAVE_MPI), otherwise the pool of
 * this process. The records travel as bytes: every rank runs the same binary on the same architecture. */
#include "engine/run/mpi_sched.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/run/mpi_transport.h"
#include "engine/run/pool.h"
#include "engine/run/run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef ENG_HAVE_MPI
#include <mpi.h>

enum { TAG_RESULT = 1, TAG_JOB = 2 };

/* A worker's message to rank 0: the results of run `job` (-1: none yet, ready for the first). */
typedef struct { int job, n; eng_result res[1 + ENG_MAX_EXTS]; } result_msg;

/* A run failed on this rank: the message, then the whole MPI job ends. */
static _Noreturn void fail_run(const eng_job *j)
{
    char label[96];
    eng_err("rank %d of %d (%s): run %s/%s/seed%d failed; ending the MPI job\n", eng_mpi_rank(),
            eng_mpi_size(), eng_mpi_host(), rg_task_name(j->task), eng_label(j->pos, j->variant, RG_ROPE_EXT_NONE, 0, label,
            sizeof label), j->seed);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/* ------------------------------------------------------------------ the grid over ranks */

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* all = the finished runs' results in job order. */
static int compact(const eng_result *slots, const int *counts, int n_jobs, eng_result *all)
{
    int n = 0;
    for (int i = 0; i < n_jobs; i++)
        for (int k = 0; k < counts[i]; k++) all[n++] = slots[i * (1 + ENG_MAX_EXTS) + k];
    return n;
}

/* Rank 0: hands run after run to whichever rank reports (its previous results with it), keeps the results in job
 * order. Returns 0, or -1 when out of memory (then the workers are stopped). */
static int grid_master(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                       void (*on_partial)(const eng_options *, const eng_result *, int, void *), void *ctx)
{
    static result_msg m;
    int *counts = calloc((size_t)n_jobs, sizeof *counts);
    eng_result *slots = calloc((size_t)n_jobs * (1 + ENG_MAX_EXTS), sizeof *slots);
    int next = counts && slots ? 0 : n_jobs, busy = eng_mpi_size() - 1, got = 0;
    while (busy > 0) {
        MPI_Request rq;
        MPI_Status st;
        int done = 0;
        MPI_Irecv(&m, (int)sizeof m, MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &rq);
        for (MPI_Test(&rq, &done, &st); !done; MPI_Test(&rq, &done, &st)) sleep_ms(2); /* keeps no core busy */
        bool result = counts && m.job >= 0 && m.job < n_jobs && m.n >= 0 && m.n <= 1 + ENG_MAX_EXTS;
        if (result) {
            memcpy(slots + (size_t)m.job * (1 + ENG_MAX_EXTS), m.res, sizeof *m.res * (size_t)m.n);
            for (int i = 0; i < m.n; i++) slots[(size_t)m.job * (1 + ENG_MAX_EXTS) + i].runs_dir = NULL; /* another rank's */
            counts[m.job] = m.n;
            got++;
        }
        int cmd[6] = {-1, 0, 0, 0, 0, 0};
        if (next < n_jobs) {
            cmd[0] = next;
            cmd[1] = (int)jobs[next].task;
            cmd[2] = (int)jobs[next].pos;
            cmd[3] = jobs[next].seed;
            cmd[4] = (int)jobs[next].variant;
            cmd[5] = jobs[next].size;
            next++;
        } else {
            busy--;
        }
        MPI_Send(cmd, 6, MPI_INT, st.MPI_SOURCE, TAG_JOB, MPI_COMM_WORLD);
        if (result) {
            *n_all = compact(slots, counts, n_jobs, all);
            if (on_partial && got < n_jobs) on_partial(o, all, *n_all, ctx);
        }
    }
    int rc = counts && slots ? 0 : -1;
    if (rc) eng_err("rank 0: out of memory for the results\n");
    free(counts);
    free(slots);
    return rc;
}

/* Ranks 1..N-1 of the grid: ask, run, send the results with the next request; a failed run ends the job. */
static int grid_worker(const eng_options *o)
{
    static result_msg m;
    m.job = -1;
    m.n = 0;
    for (;;) {
        MPI_Send(&m, (int)sizeof m, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        int cmd[6];
        MPI_Recv(cmd, 6, MPI_INT, 0, TAG_JOB, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (cmd[0] < 0) return 0;
        eng_job j = {(rg_task)cmd[1], (rg_pos_kind)cmd[2], (eng_variant)cmd[4], cmd[3], cmd[5]};
        m.job = cmd[0];
        m.n = eng_run(o, &j, m.res);
        if (m.n < 0) fail_run(&j);
    }
}

/* Every rank runs every job in the same order (rank 0's list, broadcast); only rank 0 keeps results. */
static int dp_jobs(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                   void (*on_partial)(const eng_options *, const eng_result *, int, void *), void *ctx)
{
    MPI_Bcast(&n_jobs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    eng_job *list = malloc(sizeof *list * (size_t)(n_jobs > 0 ? n_jobs : 1));
    if (!list) {
        eng_err("rank %d: out of memory\n", eng_mpi_rank());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (eng_mpi_rank() == 0) memcpy(list, jobs, sizeof *list * (size_t)n_jobs);
    MPI_Bcast(list, (int)(sizeof *list * (size_t)n_jobs), MPI_BYTE, 0, MPI_COMM_WORLD);
    eng_result res[1 + ENG_MAX_EXTS];
    for (int i = 0; i < n_jobs; i++) {
        int n = eng_run(o, &list[i], res);
        if (n < 0) fail_run(&list[i]);
        if (eng_mpi_rank() > 0) continue;
        memcpy(all + *n_all, res, sizeof *res * (size_t)n);
        *n_all += n;
        if (on_partial && i + 1 < n_jobs) on_partial(o, all, *n_all, ctx);
    }
    free(list);
    return 0;
}

/* ------------------------------------------------------------------ entry points */

int eng_mpi_worker(const eng_options *o)
{
    rg_set_num_threads(o->threads);
    if (!eng_mpi_release(0)) return 1; /* rank 0 ended before the work (its message says why) */
    return eng_mpi_data_parallel() ? dp_jobs(o, NULL, 0, NULL, NULL, NULL, NULL) : grid_worker(o);
}

int eng_mpi_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                    void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx)
{
    *n_all = 0;
    if (!eng_mpi_active()) return eng_pool_run(o, jobs, n_jobs, all, n_all, on_partial, ctx);
    eng_mpi_release(1);
    if (eng_mpi_data_parallel()) return dp_jobs(o, jobs, n_jobs, all, n_all, on_partial, ctx);
    if (eng_mpi_size() == 1) { /* rank 0 alone: the runs in this process (no fork under MPI) */
        eng_options one = *o;
        one.jobs = 1;
        return eng_pool_run(&one, jobs, n_jobs, all, n_all, on_partial, ctx);
    }
    return grid_master(o, jobs, n_jobs, all, n_all, on_partial, ctx) ? n_jobs : 0;
}

#else /* no MPI in this build: the pool of this process */

int eng_mpi_worker(const eng_options *o) { return 1; }
int eng_mpi_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                    void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx)
{
    return eng_pool_run(o, jobs, n_jobs, all, n_all, on_partial, ctx);
}
#endif
