/* mpi_transport.c: the MPI transport (mpi_transport.h): the launch check, MPI_Init and the exit handler, the ranks,
 * the release of the waiting ranks, the data-parallel gradient sum (in a fixed order) and the test hooks. The
 * scheduler that hands jobs to ranks is apart (mpi_sched.c): this file runs no job. Compiled against OpenMPI when the Makefile finds mpicc (ENG_HAVE_MPI),
 * otherwise as stubs that refuse an MPI launch and --data-parallel. The records travel as bytes: every rank runs
 * the same binary on the same architecture (a homogeneous cluster). */
#include "engine/run/mpi_transport.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
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

/* The test hooks of mpi_transport.h (checksum line, injected failure). 0 or -1. */
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

#ifdef ENG_HAVE_MPI
#include <mpi.h>

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
int eng_mpi_release(int go)
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
    if (!g.released) eng_mpi_release(0);
    free(dp.all);
    free(dp.losses);
    MPI_Finalize();
}

void eng_mpi_start(int *argc, char ***argv)
{
    if (!launched_by_mpirun()) return;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        eng_err("MPI_Init failed\n");
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
    enum { CAP = ENG_PLUGIN_MAX * 80 + 1 };
    char mine[CAP], *all = g.rank == 0 ? malloc((size_t)CAP * g.size) : NULL;
    eng_plugins_fingerprint(mine, CAP);
    MPI_Gather(mine, CAP, MPI_CHAR, all, CAP, MPI_CHAR, 0, MPI_COMM_WORLD);
    int bad = -1;
    for (int r = 1; g.rank == 0 && all && r < g.size && bad < 0; r++)
        if (strcmp(all + (size_t)r * CAP, mine)) bad = r;
    if (g.rank == 0 && bad > 0)
        eng_err("MPI rank %d loaded other plugins than rank 0 (every rank must load the same --plugin files and "
               "ROPEGRAD_PLUGINS):\n  rank 0: %s\n  rank %d: %s\n", bad, mine[0] ? mine : "(none)", bad,
               all[(size_t)bad * CAP] ? all + (size_t)bad * CAP : "(none)");
    free(all);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (bad > 0) exit(2);
}

void eng_mpi_check(const eng_options *o)
{
    if (g.active) check_plugins();
    g.data_parallel = o->data_parallel;
    if (o->data_parallel && !g.active)
        eng_usage_error("mpirun -np N build/examples/train_order ... --data-parallel",
                       "--data-parallel needs an MPI launch (this process was not started by mpirun)");
}

int eng_mpi_rank(void) { return g.rank; }
int eng_mpi_size(void) { return g.size; }
bool eng_mpi_writes(void) { return !(g.active && g.data_parallel && g.rank > 0); }
bool eng_mpi_active(void) { return g.active; }
bool eng_mpi_data_parallel(void) { return g.data_parallel; }
const char *eng_mpi_host(void) { return g.host; }

/* ------------------------------------------------------------------ data-parallel runs */

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
            eng_err("rank 0: out of memory for %d gradient blocks of %lld elements\n", g.size,
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

int eng_mpi_share(rg_trainer *t, const char *tag)
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

int eng_mpi_after_step(const eng_options *o, const rg_model *m, const char *tag, int64_t step)
{
    if (test_hooks(m, tag, g.rank, step)) return -1;
    if (g.active && g.data_parallel && g.rank == 0 && step == o->steps && dp.steps > 0 && !o->quiet)
        fprintf(stderr, "%s: data-parallel over %d ranks: %lld steps, %.2f ms/step; per step %.2f ms waiting for the "
                "slowest rank, %.2f ms in the gradient sum (gather + add + bcast of %lld bytes)\n", tag, g.size,
                (long long)dp.steps, 1e3 * (MPI_Wtime() - dp.t0) / (double)dp.steps, 1e3 * dp.wait_s / (double)dp.steps,
                1e3 * dp.comm_s / (double)dp.steps, (long long)(dp.n * (int64_t)sizeof(rg_real)));
    return 0;
}

#else /* no MPI in this build: refuse the MPI modes with a message */

void eng_mpi_start(int *argc, char ***argv)
{
    if (!launched_by_mpirun()) return;
    eng_err("started by mpirun, but this build has no MPI (mpicc was not found when it was "
            "built); install libopenmpi-dev and openmpi-bin (make deps) and rebuild\n");
    exit(2);
}

void eng_mpi_check(const eng_options *o)
{
    if (o->data_parallel)
        eng_usage_error("a build with MPI (install libopenmpi-dev openmpi-bin, rebuild), launched by mpirun",
                       "--data-parallel needs MPI, and this build has none (mpicc was not found)");
}

int eng_mpi_rank(void) { return 0; }
int eng_mpi_size(void) { return 1; }
bool eng_mpi_writes(void) { return true; }
int eng_mpi_share(rg_trainer *t, const char *tag) { return 0; }
int eng_mpi_after_step(const eng_options *o, const rg_model *m, const char *tag, int64_t step)
{
    return test_hooks(m, tag, 0, step);
}
#endif
