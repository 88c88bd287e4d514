/* mpi.c: train_order over MPI ranks (see mpi.h): the launch check, the grid over ranks (rank 0 hands out runs and
 * gathers their to_result records), data-parallel runs (the fixed-order gradient sum), the failure path
 * (message + MPI_Abort) and the test hooks. Compiled against OpenMPI when the Makefile finds mpicc (TO_HAVE_MPI),
 * otherwise as stubs that refuse an MPI launch and --data-parallel. The records travel as bytes: every rank runs
 * the same binary on the same architecture (a homogeneous cluster). */
#include "engine/run/mpi.h"
#include "engine/settings/plugin_load.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* mpirun (OpenMPI's ORTE or a PMIx launcher) started this process. */
static bool launched_by_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

/* FNV-1a over the parameter block: equal on every rank iff the parameters are (up to a 2^-64 collision). */
static uint64_t param_checksum(const rg_model *m)
{
    const unsigned char *p = (const unsigned char *)m->params.data;
    size_t n = sizeof(rg_real) * (size_t)m->params.offset[m->params.n_packed];
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* The test hooks of mpi.h (checksum line, injected failure). 0 or -1. */
static int test_hooks(const rg_model *m, const char *tag, int rank, int64_t step)
{
    const char *ck = getenv("TRAIN_ORDER_MPI_CHECKSUM"), *fail = getenv("TRAIN_ORDER_MPI_FAIL");
    if (ck && strcmp(ck, "1") == 0)
        fprintf(stderr, "mpi checksum: rank %d step %lld %016" PRIx64 "\n", rank, (long long)step, param_checksum(m));
    int fr, fs;
    if (fail && sscanf(fail, "%d:%d", &fr, &fs) == 2 && fr == rank && fs == step) {
        fprintf(stderr, "%s: failing at step %lld as TRAIN_ORDER_MPI_FAIL=%s asks\n", tag, (long long)step, fail);
        return -1;
    }
    return 0;
}

#ifdef TO_HAVE_MPI
#include <mpi.h>

enum { TAG_RESULT = 1, TAG_JOB = 2 };

/* A worker's message to rank 0: the results of run `job` (-1: none yet, ready for the first). */
typedef struct { int job, n; to_result res[1 + TO_MAX_EXTS]; } result_msg;

static struct {
    bool active, released, data_parallel;
    int rank, size;
    char host[MPI_MAX_PROCESSOR_NAME];
} g = {.size = 1};

/* The data-parallel reduction's buffers and timers (one run at a time). */
static struct {
    rg_real *all;     /* rank 0: size x n gathered blocks */
    double *losses;   /* rank 0: size losses */
    int64_t cap, n, steps;
    double wait_s, comm_s, t0; /* barrier (waiting for the slowest rank), gather + sum + bcast, the run's start */
} dp;

/* Rank 0 tells the others whether the work starts (1) or the program ends before it (0). Every rank calls it once:
 * in the pool or the worker, or else in the exit handler. */
static int release(int go)
{
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    g.released = true;
    return go;
}

static void at_exit(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (done) return;
    if (!g.released) release(0);
    free(dp.all);
    free(dp.losses);
    MPI_Finalize();
}

void to_mpi_start(int *argc, char ***argv)
{
    if (!launched_by_mpirun()) return;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        to_err("MPI_Init failed\n");
        exit(1);
    }
    g.active = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    int len = 0;
    MPI_Get_processor_name(g.host, &len);
    atexit(at_exit);
}

/* Every rank must have loaded the same plugins (the same files, by digest, in the same order): rank 0 gathers each
 * rank's list and compares it with its own; on a difference every rank stops with exit status 2 (rank 0 names the
 * rank and both lists). */
static void check_plugins(void)
{
    enum { CAP = TO_PLUGIN_MAX * 80 + 1 };
    char mine[CAP], *all = g.rank == 0 ? malloc((size_t)CAP * g.size) : NULL;
    to_plugins_fingerprint(mine, CAP);
    MPI_Gather(mine, CAP, MPI_CHAR, all, CAP, MPI_CHAR, 0, MPI_COMM_WORLD);
    int bad = -1;
    for (int r = 1; g.rank == 0 && all && r < g.size && bad < 0; r++)
        if (strcmp(all + (size_t)r * CAP, mine)) bad = r;
    if (g.rank == 0 && bad > 0)
        to_err("MPI rank %d loaded other plugins than rank 0 (every rank must load the same --plugin files and "
               "ROPEGRAD_PLUGINS):\n  rank 0: %s\n  rank %d: %s\n", bad, mine[0] ? mine : "(none)", bad,
               all[(size_t)bad * CAP] ? all + (size_t)bad * CAP : "(none)");
    free(all);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad > 0) exit(2);
}

void to_mpi_check(const to_options *o)
{
    if (g.active) check_plugins();
    g.data_parallel = o->data_parallel;
    if (o->data_parallel && !g.active)
        to_usage_error("mpirun -np N build/examples/train_order ... --data-parallel",
                       "--data-parallel needs an MPI launch (this process was not started by mpirun)");
}

int to_mpi_rank(void) { return g.rank; }
int to_mpi_size(void) { return g.size; }
bool to_mpi_writes(void) { return !(g.active && g.data_parallel && g.rank > 0); }

/* A run failed on this rank: the message, then the whole MPI job ends. */
static _Noreturn void fail_run(const to_job *j)
{
    char label[96];
    to_err("rank %d of %d (%s): run %s/%s/seed%d failed; ending the MPI job\n", g.rank,
            g.size, g.host, rg_task_name(j->task), to_label(j->pos, j->variant, RG_ROPE_EXT_NONE, 0, label,
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
static int compact(const to_result *slots, const int *counts, int n_jobs, to_result *all)
{
    int n = 0;
    for (int i = 0; i < n_jobs; i++)
        for (int k = 0; k < counts[i]; k++) all[n++] = slots[i * (1 + TO_MAX_EXTS) + k];
    return n;
}

/* Rank 0: hands run after run to whichever rank reports (its previous results with it), keeps the results in job
 * order. Returns 0, or -1 when out of memory (then the workers are stopped). */
static int grid_master(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                       void (*on_partial)(const to_options *, const to_result *, int, void *), void *ctx)
{
    static result_msg m;
    int *counts = calloc((size_t)n_jobs, sizeof *counts);
    to_result *slots = calloc((size_t)n_jobs * (1 + TO_MAX_EXTS), sizeof *slots);
    int next = counts && slots ? 0 : n_jobs, busy = g.size - 1, got = 0;
    while (busy > 0) {
        MPI_Request rq;
        MPI_Status st;
        int done = 0;
        MPI_Irecv(&m, (int)sizeof m, MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &rq);
        for (MPI_Test(&rq, &done, &st); !done; MPI_Test(&rq, &done, &st)) sleep_ms(2); /* keeps no core busy */
        bool result = counts && m.job >= 0 && m.job < n_jobs && m.n >= 0 && m.n <= 1 + TO_MAX_EXTS;
        if (result) {
            memcpy(slots + (size_t)m.job * (1 + TO_MAX_EXTS), m.res, sizeof *m.res * (size_t)m.n);
            for (int i = 0; i < m.n; i++) slots[(size_t)m.job * (1 + TO_MAX_EXTS) + i].runs_dir = NULL; /* another rank's */
            counts[m.job] = m.n;
            got++;
        }
        int cmd[5] = {-1, 0, 0, 0, 0};
        if (next < n_jobs) {
            cmd[0] = next;
            cmd[1] = (int)jobs[next].task;
            cmd[2] = (int)jobs[next].pos;
            cmd[3] = jobs[next].seed;
            cmd[4] = (int)jobs[next].variant;
            next++;
        } else {
            busy--;
        }
        MPI_Send(cmd, 5, MPI_INT, st.MPI_SOURCE, TAG_JOB, MPI_COMM_WORLD);
        if (result) {
            *n_all = compact(slots, counts, n_jobs, all);
            if (on_partial && got < n_jobs) on_partial(o, all, *n_all, ctx);
        }
    }
    int rc = counts && slots ? 0 : -1;
    if (rc) to_err("rank 0: out of memory for the results\n");
    free(counts);
    free(slots);
    return rc;
}

/* Ranks 1..N-1 of the grid: ask, run, send the results with the next request; a failed run ends the job. */
static int grid_worker(const to_options *o)
{
    static result_msg m;
    m.job = -1;
    m.n = 0;
    for (;;) {
        MPI_Send(&m, (int)sizeof m, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        int cmd[5];
        MPI_Recv(cmd, 5, MPI_INT, 0, TAG_JOB, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (cmd[0] < 0) return 0;
        to_job j = {(rg_task)cmd[1], (rg_pos_kind)cmd[2], (to_variant)cmd[4], cmd[3]};
        m.job = cmd[0];
        m.n = to_run(o, &j, m.res);
        if (m.n < 0) fail_run(&j);
    }
}

/* ------------------------------------------------------------------ data-parallel runs */

/* Every rank runs every job in the same order (rank 0's list, broadcast); only rank 0 keeps results. */
static int dp_jobs(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                   void (*on_partial)(const to_options *, const to_result *, int, void *), void *ctx)
{
    MPI_Bcast(&n_jobs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    to_job *list = malloc(sizeof *list * (size_t)(n_jobs > 0 ? n_jobs : 1));
    if (!list) {
        to_err("rank %d: out of memory\n", g.rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (g.rank == 0) memcpy(list, jobs, sizeof *list * (size_t)n_jobs);
    MPI_Bcast(list, (int)(sizeof *list * (size_t)n_jobs), MPI_BYTE, 0, MPI_COMM_WORLD);
    to_result res[1 + TO_MAX_EXTS];
    for (int i = 0; i < n_jobs; i++) {
        int n = to_run(o, &list[i], res);
        if (n < 0) fail_run(&list[i]);
        if (g.rank > 0) continue;
        memcpy(all + *n_all, res, sizeof *res * (size_t)n);
        *n_all += n;
        if (on_partial && i + 1 < n_jobs) on_partial(o, all, *n_all, ctx);
    }
    free(list);
    return 0;
}

/* The fixed-order sum: MPI_Gather of the blocks to rank 0, ((g0 + g1) + g2) + ... there, MPI_Bcast of the sum. */
static rg_status dp_reduce(rg_real *grad, int64_t n, double *loss, void *ctx)
{
    double t0 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD); /* only to time the wait for the slowest rank apart from the transfer */
    double t1 = MPI_Wtime();
    MPI_Datatype ty = sizeof(rg_real) == sizeof(float) ? MPI_FLOAT : MPI_DOUBLE;
    if (n > INT_MAX) return rg_error(RG_ERR_ARG, "data-parallel: %lld gradient elements (MPI counts are int)",
                                     (long long)n);
    if (g.rank == 0 && n > dp.cap) {
        free(dp.all);
        free(dp.losses);
        dp.all = malloc(sizeof(rg_real) * (size_t)n * (size_t)g.size);
        dp.losses = malloc(sizeof(double) * (size_t)g.size);
        dp.cap = dp.all && dp.losses ? n : 0;
        if (!dp.cap) {
            to_err("rank 0: out of memory for %d gradient blocks of %lld elements\n", g.size,
                    (long long)n);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(grad, (int)n, ty, dp.all, (int)n, ty, 0, MPI_COMM_WORLD);
    MPI_Gather(loss, 1, MPI_DOUBLE, dp.losses, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (g.rank == 0) {
        for (int r = 1; r < g.size; r++) {
            const rg_real *b = dp.all + (size_t)r * (size_t)n;
            for (int64_t i = 0; i < n; i++) grad[i] += b[i];
        }
        double l = dp.losses[0];
        for (int r = 1; r < g.size; r++) l += dp.losses[r];
        *loss = l;
    }
    MPI_Bcast(grad, (int)n, ty, 0, MPI_COMM_WORLD);
    MPI_Bcast(loss, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    dp.wait_s += t1 - t0;
    dp.comm_s += MPI_Wtime() - t1;
    dp.n = n;
    dp.steps++;
    return RG_OK;
}

int to_mpi_share(rg_trainer *t, const char *tag)
{
    if (!g.active || !g.data_parallel) return 0;
    dp.steps = 0;
    dp.comm_s = dp.wait_s = 0;
    dp.t0 = MPI_Wtime();
    if (rg_trainer_set_share(t, g.rank, g.size, dp_reduce, NULL)) {
        fprintf(stderr, "%s: %s\n", tag, rg_last_error());
        return -1;
    }
    return 0;
}

int to_mpi_after_step(const to_options *o, const rg_model *m, const char *tag, int64_t step)
{
    if (test_hooks(m, tag, g.rank, step)) return -1;
    if (g.active && g.data_parallel && g.rank == 0 && step == o->steps && dp.steps > 0 && !o->quiet)
        fprintf(stderr, "%s: data-parallel over %d ranks: %lld steps, %.2f ms/step; per step %.2f ms waiting for the "
                "slowest rank, %.2f ms in the gradient sum (gather + add + bcast of %lld bytes)\n", tag, g.size,
                (long long)dp.steps, 1e3 * (MPI_Wtime() - dp.t0) / (double)dp.steps, 1e3 * dp.wait_s / (double)dp.steps,
                1e3 * dp.comm_s / (double)dp.steps, (long long)(dp.n * (int64_t)sizeof(rg_real)));
    return 0;
}

/* ------------------------------------------------------------------ entry points */

int to_mpi_worker(const to_options *o)
{
    rg_set_num_threads(o->threads);
    if (!release(0)) return 1; /* rank 0 ended before the work (its message says why) */
    return g.data_parallel ? dp_jobs(o, NULL, 0, NULL, NULL, NULL, NULL) : grid_worker(o);
}

int to_mpi_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                    void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx)
{
    *n_all = 0;
    if (!g.active) return to_pool_run(o, jobs, n_jobs, all, n_all, on_partial, ctx);
    release(1);
    if (g.data_parallel) return dp_jobs(o, jobs, n_jobs, all, n_all, on_partial, ctx);
    if (g.size == 1) { /* rank 0 alone: the runs in this process (no fork under MPI) */
        to_options one = *o;
        one.jobs = 1;
        return to_pool_run(&one, jobs, n_jobs, all, n_all, on_partial, ctx);
    }
    return grid_master(o, jobs, n_jobs, all, n_all, on_partial, ctx) ? n_jobs : 0;
}

#else /* no MPI in this build: refuse the MPI modes with a message */

void to_mpi_start(int *argc, char ***argv)
{
    if (!launched_by_mpirun()) return;
    to_err("started by mpirun, but this build has no MPI (mpicc was not found when it was "
            "built); install libopenmpi-dev and openmpi-bin (make deps) and rebuild\n");
    exit(2);
}

void to_mpi_check(const to_options *o)
{
    if (o->data_parallel)
        to_usage_error("a build with MPI (install libopenmpi-dev openmpi-bin, rebuild), launched by mpirun",
                       "--data-parallel needs MPI, and this build has none (mpicc was not found)");
}

int to_mpi_rank(void) { return 0; }
int to_mpi_size(void) { return 1; }
bool to_mpi_writes(void) { return true; }
int to_mpi_worker(const to_options *o) { return 1; }
int to_mpi_share(rg_trainer *t, const char *tag) { return 0; }
int to_mpi_after_step(const to_options *o, const rg_model *m, const char *tag, int64_t step)
{
    return test_hooks(m, tag, 0, step);
}
int to_mpi_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                    void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx)
{
    return to_pool_run(o, jobs, n_jobs, all, n_all, on_partial, ctx);
}
#endif
