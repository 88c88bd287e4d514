/* pool.c: a fixed set of worker threads that run the parts of one job at a time (see pool.h). A job is published
 * under a mutex with a generation number; workers wait for a new generation and the caller for the count of
 * finished parts. Both first poll for at most SPIN_NS, reading the two counters without the lock (PAUSE for a few
 * us, then sched_yield), and then sleep on a condition variable. The poll is what makes a second thread pay: a
 * training step runs hundreds of jobs of 20-200 us with serial work of a few us to tens of us between them, and
 * waking a sleeping thread on a virtual machine took longer than that (results/bench/history/, the exp row at 2 threads on
 * an idle Xeon: 13.8-15.6 ms per step with sleeping workers, 8.0-8.2 ms polling). The yield matters when every core
 * is busy: a poll of PAUSEs alone made the same step 14.5-14.8 ms while two other processes ran (9.8-10.4 ms with
 * sleeping workers, bench/ab-2026-12-02.txt), the yielding poll 8.8-9.0 ms. The poll is bounded, so between steps an idle worker sleeps.
 * Also rg_set_num_threads (tensor.h), which sizes this pool and OpenBLAS's threads. */
#include "pool.h"
#include "blas.h"
#include "tensor.h"

#include <cblas.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define MAX_WORKERS 63
#define SPIN_NS 50000 /* how long a waiting thread polls before it sleeps */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_t workers[MAX_WORKERS];
static int n_workers;     /* running */
static int wanted = 1;    /* threads asked for by rg_pool_resize (a forked child starts its workers again) */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static atomic_ulong generation; /* written under mu; read without it while spinning */
static atomic_bool stopping;
static rg_pool_fn job_fn;
static void *job_arg;
static int job_parts;
static atomic_int job_done; /* incremented under mu; read without it while spinning */
static _Thread_local bool in_job;

typedef struct { int index; unsigned long start; } worker_arg; /* start: the generation when it was made */
static worker_arg worker_args[MAX_WORKERS];

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One wait of a poll (the i-th): PAUSE for the first 64 (a few us), then sched_yield, so that on a machine whose
 * cores are all busy the poll hands its core to the thread it waits for (or to another process) instead of burning
 * the slice. Returns false once the poll has lasted SPIN_NS (*until: its deadline, 0 before the first call). */
static bool poll_wait(unsigned i, double *until)
{
    if (i < 64) cpu_relax();
    else sched_yield();
    if (i % 64) return true;
    double t = now_ns();
    if (*until == 0) *until = t + SPIN_NS;
    return t <= *until;
}

/* Polls until a job newer than `seen` is published or the pool stops, for at most SPIN_NS. */
static void spin_for_job(unsigned long seen)
{
    double until = 0;
    for (unsigned i = 0; atomic_load_explicit(&generation, memory_order_acquire) == seen && !stopping; i++)
        if (!poll_wait(i, &until)) return;
}

/* Polls until every worker has finished its part, for at most SPIN_NS. */
static void spin_for_done(int workers)
{
    double until = 0;
    for (unsigned i = 0; atomic_load_explicit(&job_done, memory_order_acquire) < workers; i++)
        if (!poll_wait(i, &until)) return;
}

static void *worker_main(void *p)
{
    const int index = ((worker_arg *)p)->index; /* runs part index + 1 */
    unsigned long seen = ((worker_arg *)p)->start; /* a job published before this thread first runs is its own */
    rg_flush_denormals(true);
    in_job = true;
    for (;;) {
        spin_for_job(seen);
        pthread_mutex_lock(&mu);
        while (!stopping && generation == seen) pthread_cond_wait(&wake, &mu);
        if (stopping) break;
        seen = generation;
        rg_pool_fn fn = job_fn;
        void *arg = job_arg;
        int parts = job_parts;
        pthread_mutex_unlock(&mu);
        if (index + 1 < parts) fn(arg, index + 1, parts);
        pthread_mutex_lock(&mu);
        if (atomic_fetch_add_explicit(&job_done, 1, memory_order_release) + 1 == n_workers)
            pthread_cond_signal(&done_cv);
        pthread_mutex_unlock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

int rg_pool_threads(void) { return in_job ? 1 : wanted; }

static void start_workers(int n);

/* After fork() only the forking thread exists in the child: forget the parent's workers (and whatever locks they
 * held); the child's first job starts its own. */
static void atfork_child(void)
{
    pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c0 = PTHREAD_COND_INITIALIZER;
    mu = m0;
    busy = m0;
    wake = c0;
    done_cv = c0;
    n_workers = 0;
    stopping = false;
    in_job = false;
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, atfork_child); }

void rg_pool_run(rg_pool_fn fn, void *arg, int nparts)
{
    if (!in_job && n_workers != wanted - 1 && nparts > 1) rg_pool_resize(wanted); /* e.g. in a forked child */
    if (nparts <= 1 || n_workers == 0 || in_job || pthread_mutex_trylock(&busy) != 0) {
        for (int i = 0; i < nparts; i++) fn(arg, i, nparts);
        return;
    }
    if (nparts > 1 + n_workers) { /* fewer workers started than asked for */
        pthread_mutex_unlock(&busy);
        for (int i = 0; i < nparts; i++) fn(arg, i, nparts);
        return;
    }
    pthread_mutex_lock(&mu);
    job_fn = fn;
    job_arg = arg;
    job_parts = nparts;
    job_done = 0;
    generation++;
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&mu);
    in_job = true;
    fn(arg, 0, nparts);
    in_job = false;
    spin_for_done(n_workers);
    pthread_mutex_lock(&mu);
    while (job_done < n_workers) pthread_cond_wait(&done_cv, &mu);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&busy);
}

void rg_pool_resize(int n)
{
    RG_ASSERT(n >= 1, "pool: %d threads", n);
    if (n - 1 > MAX_WORKERS) n = MAX_WORKERS + 1;
    pthread_once(&atfork_once, register_atfork);
    wanted = n;
    start_workers(n);
}

static void start_workers(int n)
{
    pthread_mutex_lock(&busy);
    if (n_workers) {
        pthread_mutex_lock(&mu);
        stopping = true;
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&mu);
        for (int i = 0; i < n_workers; i++) pthread_join(workers[i], NULL);
        stopping = false;
        n_workers = 0;
    }
    for (int i = 0; i < n - 1; i++) {
        worker_args[i].index = i;
        worker_args[i].start = generation; /* no job runs now: `busy` is held */
        if (pthread_create(&workers[i], NULL, worker_main, &worker_args[i]) != 0) break; /* fewer workers */
        n_workers++;
    }
    pthread_mutex_unlock(&busy);
}

typedef struct {
    rg_range_fn fn;
    void *arg;
    int64_t n, align;
} range_job;

static void range_part(void *p, int part, int nparts)
{
    const range_job *j = p;
    int64_t units = (j->n + j->align - 1) / j->align;
    int64_t b = units * part / nparts * j->align, e = units * (part + 1) / nparts * j->align;
    if (e > j->n) e = j->n;
    if (b < e) j->fn(j->arg, b, e);
}

void rg_pool_for(int64_t n, int64_t min_per_part, int64_t align, rg_range_fn fn, void *arg)
{
    if (n <= 0) return;
    if (align < 1) align = 1;
    if (min_per_part < 1) min_per_part = 1;
    int64_t parts = rg_pool_threads();
    if (parts > n / min_per_part) parts = n / min_per_part;
    if (parts > (n + align - 1) / align) parts = (n + align - 1) / align;
    if (parts <= 1) {
        fn(arg, 0, n);
        return;
    }
    range_job j = {fn, arg, n, align};
    rg_pool_run(range_part, &j, (int)parts);
}

/* tensor.h: OpenBLAS's threads and this pool's, both started again from the calling thread (FTZ/DAZ set first) */
void rg_set_num_threads(int n)
{
    RG_ASSERT(n >= 1, "rg_set_num_threads: %d threads (must be >= 1)", n);
    rg_flush_denormals(true);
    openblas_set_num_threads(n);
    rg_blas_restart_workers(); /* the workers start again from this thread, with its FTZ/DAZ */
    rg_pool_resize(n);         /* ropegrad's own workers (libxsmm products, attention) */
}
