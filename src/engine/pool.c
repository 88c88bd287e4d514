/* pool.c: the job pool of train_order. Runs the jobs at most o->jobs at a time, one process per job (fork); each
 * child hands its results to the parent through its own pipe (a count, then the to_result records), so no two
 * runs share a file and results of another invocation can never be read. Results are kept in job order, whatever
 * order the jobs finish in. With o->jobs == 1 the jobs run in this process, one after the other. */
#include "train_order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct { pid_t pid; int fd; } child;

static int write_all(int fd, const void *p, size_t n)
{
    for (const char *c = p; n;) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static ssize_t read_all(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)p + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* In the child: run the job and send its results; never returns. */
static _Noreturn void child_main(const to_options *o, const to_job *j, int fd)
{
    to_result res[1 + TO_MAX_EXTS];
    int n = to_run(o, j, res);
    int rc = n < 0 || write_all(fd, &n, sizeof n) || (n > 0 && write_all(fd, res, sizeof *res * (size_t)n));
    fflush(NULL);
    _exit(rc ? 1 : 0);
}

/* Reads a finished child's results (the pipe holds them all: a child writes at most a few KiB). */
static int collect(int fd, to_result *dst)
{
    int n = 0;
    if (read_all(fd, &n, sizeof n) != (ssize_t)sizeof n || n < 0 || n > 1 + TO_MAX_EXTS) return -1;
    if (read_all(fd, dst, sizeof *dst * (size_t)n) != (ssize_t)(sizeof *dst * (size_t)n)) return -1;
    return n;
}

static int start(const to_options *o, const to_job *j, child *c)
{
    int p[2];
    if (pipe(p) != 0) { perror("train_order: pipe"); return -1; }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { perror("train_order: fork"); close(p[0]); close(p[1]); return -1; }
    if (pid == 0) { close(p[0]); child_main(o, j, p[1]); }
    close(p[1]);
    *c = (child){pid, p[0]};
    return 0;
}

/* all = the results of the finished jobs in job order (whatever order they finished in). */
static int compact(const to_result *slots, const int *counts, int n_jobs, to_result *all)
{
    int n = 0;
    for (int i = 0; i < n_jobs; i++)
        for (int k = 0; k < counts[i]; k++) all[n++] = slots[i * (1 + TO_MAX_EXTS) + k];
    return n;
}

/* Waits for one child and reads its results into its slot; returns 0, or -1 when it failed. */
static int reap(const to_job *jobs, child *kids, int n_jobs, to_result *slots, int *counts, int *running)
{
    int status;
    pid_t pid = wait(&status);
    if (pid < 0) { *running = 0; return -1; }
    int i = 0;
    while (i < n_jobs && kids[i].pid != pid) i++;
    if (i == n_jobs) return 0; /* not ours */
    (*running)--;
    int n = collect(kids[i].fd, slots + i * (1 + TO_MAX_EXTS));
    close(kids[i].fd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n < 0) {
        fprintf(stderr, "train_order: run %s/%s/seed%d failed\n", rg_task_name(jobs[i].task), rg_pos_name(jobs[i].pos),
                jobs[i].seed);
        return -1;
    }
    counts[i] = n;
    return 0;
}

int to_pool_run(const to_options *o, const to_job *jobs, int n_jobs, to_result *all, int *n_all,
                void (*on_partial)(const to_options *o, const to_result *res, int n, void *ctx), void *ctx)
{
    int failed = 0, running = 0, next = 0;
    child *kids = calloc((size_t)n_jobs, sizeof *kids);
    int *counts = calloc((size_t)n_jobs, sizeof *counts);
    to_result *slots = calloc((size_t)n_jobs * (1 + TO_MAX_EXTS), sizeof *slots);
    *n_all = 0;
    if (!kids || !counts || !slots) { free(kids); free(counts); free(slots); return n_jobs; }
    while (next < n_jobs || running > 0) {
        if (next < n_jobs && running < o->jobs) {
            int i = next++;
            if (o->jobs == 1) { /* in this process */
                counts[i] = to_run(o, &jobs[i], slots + i * (1 + TO_MAX_EXTS));
                if (counts[i] < 0) { counts[i] = 0; failed++; }
            } else if (start(o, &jobs[i], &kids[i]) == 0) {
                running++;
                continue;
            } else {
                failed++;
            }
        } else if (reap(jobs, kids, n_jobs, slots, counts, &running)) {
            failed++;
        }
        *n_all = compact(slots, counts, n_jobs, all);
        if (on_partial && (next < n_jobs || running > 0)) on_partial(o, all, *n_all, ctx);
    }
    free(kids);
    free(counts);
    free(slots);
    return failed;
}
