/* pool.c: the job pool of train_order. Runs the jobs at most o->jobs at a time, one process per job (fork); each
 * child hands its results to the parent through its own pipe (a count, then the eng_result records), so no two
 * runs share a file and results of another invocation can never be read. Results are kept in job order, whatever
 * order the jobs finish in. With o->jobs == 1 the jobs run in this process, one after the other. The parent reads
 * every running child's pipe as data arrives (poll), so a child's results may be larger than a pipe's buffer (the
 * per-position counts make a RoPE run's records about 200 KiB). */
#include "engine/run/pool.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/run/run.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct { pid_t pid; int fd; char *buf; size_t len; } child; /* buf: what the pipe gave so far */
#define RESULT_BYTES (sizeof(int) + sizeof(eng_result) * (1 + ENG_MAX_EXTS)) /* the most a child sends */

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

/* In the child: run the job and send its results; never returns. */
static _Noreturn void child_main(const eng_options *o, const eng_job *j, int fd)
{
    eng_result res[1 + ENG_MAX_EXTS];
    int n = eng_run(o, j, res);
    int rc = n < 0 || write_all(fd, &n, sizeof n) || (n > 0 && write_all(fd, res, sizeof *res * (size_t)n));
    fflush(NULL);
    _exit(rc ? 1 : 0);
}

/* A finished child's results from its bytes: the count, then that many records. Returns the count, or -1. */
static int collect(const child *c, eng_result *dst)
{
    int n = 0;
    if (c->len < sizeof n) return -1;
    memcpy(&n, c->buf, sizeof n);
    if (n < 0 || n > 1 + ENG_MAX_EXTS || c->len != sizeof n + sizeof *dst * (size_t)n) return -1;
    memcpy(dst, c->buf + sizeof n, sizeof *dst * (size_t)n);
    for (int i = 0; i < n; i++) dst[i].runs_dir = NULL; /* a pointer of the child's memory: never used here */
    return n;
}

/* Reads the running children's pipes until one reaches its end; returns its index, or -1 (poll failed). */
static int read_until_eof(child *kids, int n_jobs)
{
    struct pollfd *pf = malloc(sizeof *pf * (size_t)n_jobs);
    int *who = malloc(sizeof *who * (size_t)n_jobs), done = -1;
    while (pf && who && done < 0) {
        int k = 0;
        for (int i = 0; i < n_jobs; i++)
            if (kids[i].pid > 0 && kids[i].fd >= 0) { pf[k] = (struct pollfd){kids[i].fd, POLLIN, 0}; who[k++] = i; }
        if (k == 0) break;
        if (poll(pf, (nfds_t)k, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int q = 0; q < k && done < 0; q++) {
            if (!pf[q].revents) continue;
            child *c = &kids[who[q]];
            char chunk[65536];
            ssize_t r = read(c->fd, chunk, sizeof chunk);
            if (r < 0 && errno == EINTR) continue;
            if (r > 0 && c->len + (size_t)r <= RESULT_BYTES) {
                memcpy(c->buf + c->len, chunk, (size_t)r);
                c->len += (size_t)r;
            } else if (r > 0) {
                c->len = RESULT_BYTES + 1; /* too much: refused by collect */
            } else {
                close(c->fd);
                c->fd = -1;
                done = who[q];
            }
        }
    }
    free(pf);
    free(who);
    return done;
}

static int start(const eng_options *o, const eng_job *j, child *c)
{
    int p[2];
    char *buf = malloc(RESULT_BYTES);
    if (!buf) { eng_err("out of memory\n"); return -1; }
    if (pipe(p) != 0) { eng_err("pipe: %s\n", strerror(errno)); free(buf); return -1; }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { eng_err("fork: %s\n", strerror(errno)); close(p[0]); close(p[1]); free(buf); return -1; }
    if (pid == 0) { close(p[0]); child_main(o, j, p[1]); }
    close(p[1]);
    *c = (child){pid, p[0], buf, 0};
    return 0;
}

/* all = the results of the finished jobs in job order (whatever order they finished in). */
static int compact(const eng_result *slots, const int *counts, int n_jobs, eng_result *all)
{
    int n = 0;
    for (int i = 0; i < n_jobs; i++)
        for (int k = 0; k < counts[i]; k++) all[n++] = slots[i * (1 + ENG_MAX_EXTS) + k];
    return n;
}

/* Reads the children's pipes until one ends, waits for that child and takes its results into its slot; returns 0,
 * or -1 when it failed. */
static int reap(const eng_job *jobs, child *kids, int n_jobs, eng_result *slots, int *counts, int *running)
{
    int status, i = read_until_eof(kids, n_jobs);
    if (i < 0) { *running = 0; return -1; }
    pid_t pid;
    while ((pid = waitpid(kids[i].pid, &status, 0)) < 0 && errno == EINTR) {}
    (*running)--;
    int n = pid < 0 ? -1 : collect(&kids[i], slots + i * (1 + ENG_MAX_EXTS));
    kids[i].pid = 0;
    free(kids[i].buf);
    kids[i].buf = NULL;
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || n < 0) {
        eng_err("run %s/%s/seed%d failed\n", rg_task_name(jobs[i].task), rg_pos_name(jobs[i].pos),
                jobs[i].seed);
        return -1;
    }
    counts[i] = n;
    return 0;
}

int eng_pool_run(const eng_options *o, const eng_job *jobs, int n_jobs, eng_result *all, int *n_all,
                void (*on_partial)(const eng_options *o, const eng_result *res, int n, void *ctx), void *ctx)
{
    int failed = 0, running = 0, next = 0;
    child *kids = calloc((size_t)n_jobs, sizeof *kids);
    int *counts = calloc((size_t)n_jobs, sizeof *counts);
    eng_result *slots = calloc((size_t)n_jobs * (1 + ENG_MAX_EXTS), sizeof *slots);
    *n_all = 0;
    if (!kids || !counts || !slots) { free(kids); free(counts); free(slots); return n_jobs; }
    while (next < n_jobs || running > 0) {
        if (next < n_jobs && running < o->jobs) {
            int i = next++;
            if (o->jobs == 1) { /* in this process */
                counts[i] = eng_run(o, &jobs[i], slots + i * (1 + ENG_MAX_EXTS));
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
