/* test_mpi.c: train_order over MPI ranks (docs/mpi.md, src/engine/mpi.h), driving `mpirun --oversubscribe
 * -np N` (plus --allow-run-as-root as root, as in CI) on tiny settings, every child under a timeout (its process
 * group is killed past it: nothing can hang the suite):
 *   - the grid over 2 and 3 ranks writes the single process's report.csv cell for cell (train_seconds aside) and
 *     the checkpoints of every run;
 *   - --data-parallel: the parameter checksum is identical on both ranks after every step; one rank takes the plain
 *     run's steps bit for bit; two ranks end within the stated tolerance of one (docs/mpi.md: max |diff| <= 1e-4
 *     after 12 steps at lr 1e-3, measured 1.2e-5), and not bitwise (else the second rank took no part);
 *   - a data-parallel run resumed with the same ranks ends bit-identical to the straight run;
 *   - a rank that fails (TRAIN_ORDER_MPI_FAIL=1:3) ends the whole job, grid or data-parallel, non-zero, with a
 *     message naming the rank and the run, well within the timeout;
 *   - a grid over 3 ranks killed with SIGKILL during a run and continued over 3 ranks (--continue) writes the
 *     single process's report.csv;
 *   - every rank loads the same plugins (a rank with another list stops the job, exit status 2).
 * Skipped with a message when mpirun is not on PATH. Under AddressSanitizer (make sanitize) the ranks run with
 * ASAN_OPTIONS=detect_leaks=0 (OpenMPI's own allocations at exit are reported as leaks), every other check on. */
#define _DEFAULT_SOURCE /* realpath, setenv */
#include "eng_harness.h"
#include "io/checkpoint.h"

#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_S 60
static char logbuf[1 << 16];
static const char *skip_why;
/* a constant learning rate (no warmup, cosine down to 1 x lr), so that a run of 6 steps resumed to 12 follows the
 * schedule of the straight 12-step run */
#define ARGS "--task copy --pos rope --steps 12 --batch 8 --test-lens 8 --rope-ext none --micro-batches 4 --quiet " \
             "--warmup 0 --min-lr-frac 1"

static bool on_path(const char *name)
{
    const char *path = getenv("PATH");
    char full[PATH_MAX + 64];
    for (const char *p = path; p && *p;) {
        size_t n = strcspn(p, ":");
        snprintf(full, sizeof full, "%.*s/%s", (int)(n < PATH_MAX ? n : PATH_MAX), p, name);
        if (access(full, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/* The harness's setup (the binary, th_tmpdir), and a skip when mpirun is missing. */
static int setup(void **state)
{
    if (!on_path("mpirun")) skip_why = "mpirun is not on PATH (apt-get install openmpi-bin libopenmpi-dev)";
    return th_setup(state);
}

/* Runs train_order (np 0: directly; else under mpirun -np np) with the space-separated arguments, env "K=V" (or
 * NULL), output to logbuf. Returns the exit status, -2 on a timeout (the process group is killed), -1 on a signal. */
static int run(int np, const char *env, double *seconds, const char *fmt, ...)
{
    static char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *argv[128], npbuf[16], log[PATH_MAX];
    int argc = 0;
    snprintf(npbuf, sizeof npbuf, "%d", np);
    if (np) {
        argv[argc++] = "mpirun";
        argv[argc++] = "--oversubscribe";
        if (geteuid() == 0) argv[argc++] = "--allow-run-as-root";
        argv[argc++] = "-np";
        argv[argc++] = npbuf;
    }
    argv[argc++] = th_bin;
    for (char *p = strtok(args, " "); p && argc < 127; p = strtok(NULL, " ")) argv[argc++] = p;
    argv[argc] = NULL;
    snprintf(log, sizeof log, "%s/log.txt", th_tmpdir);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || chdir(th_tmpdir) != 0) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("RG_KEEP_BLAS_CORE", "1", 1);
        unsetenv("TRAIN_ORDER_MPI_CHECKSUM");
        unsetenv("TRAIN_ORDER_MPI_FAIL");
        if (env) putenv((char *)env);
#if defined(__SANITIZE_ADDRESS__)
        /* OpenMPI's own allocations at exit would be reported as leaks: the ranks run with every other check */
        if (np) setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
        execvp(argv[0], argv);
        _exit(127);
    }
    setpgid(pid, pid);
    int st = 0, rc = -2;
    for (int waited = 0; waited < TIMEOUT_S * 50; waited++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) { rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1; break; }
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
    if (rc == -2) { kill(-pid, SIGKILL); waitpid(pid, &st, 0); }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (seconds) *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    logbuf[0] = 0;
    FILE *f = fopen(log, "r");
    if (f) { size_t n = fread(logbuf, 1, sizeof logbuf - 1, f); logbuf[n] = 0; fclose(f); }
    if (rc != 0) print_message("exit %d; output:\n%s\n", rc, logbuf);
    return rc;
}

/* report.csv of th_tmpdir/dir without its train_seconds column (8th, ENG_CSV_HEADER), which is a timing. */
static void report_cells(const char *dir, char *out, size_t cap)
{
    char path[PATH_MAX], line[1024];
    snprintf(path, sizeof path, "%s/%s/report.csv", th_tmpdir, dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    out[0] = 0;
    size_t at = 0;
    while (fgets(line, sizeof line, f)) {
        int col = 1;
        for (char *p = line; *p && at + 1 < cap; p++) {
            if (*p == ',' && ++col == 8) continue;
            if (col != 8) out[at++] = *p;
        }
    }
    out[at] = 0;
    fclose(f);
}

static void test_grid_over_ranks(void **state)
{
    if (skip_why) { print_message("skipped: %s\n", skip_why); skip(); }
    static char want[1 << 14], got[1 << 14];
    const char *grid = "--task copy --pos rope,alibi,none --steps 12 --batch 8 --test-lens 8 --rope-ext none --quiet";
    assert_int_equal(run(0, NULL, NULL, "%s --jobs 1 --out g1", grid), 0);
    report_cells("g1", want, sizeof want);
    assert_non_null(strstr(want, "copy,alibi,base,none,1,12,"));
    for (int np = 2; np <= 3; np++) {
        double s;
        assert_int_equal(run(np, NULL, &s, "%s --out g%d", grid, np), 0);
        char dir[16];
        snprintf(dir, sizeof dir, "g%d", np);
        report_cells(dir, got, sizeof got);
        print_message("grid over %d ranks (%.1f s): report.csv %s the single process's\n", np, s,
                      strcmp(got, want) ? "DIFFERS from" : "equals");
        assert_string_equal(got, want);
        const char *runs[] = {"rope", "alibi", "none"};
        for (int i = 0; i < 3; i++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/g%d/ckpt/copy-%s-seed1.h5", th_tmpdir, np, runs[i]);
            assert_int_equal(access(path, R_OK), 0);
        }
    }
}

/* The checksum lines of logbuf: sums[rank][step-1]; returns the number of lines. */
static int checksums(char sums[][64][17], int max_steps)
{
    int n = 0, r, s;
    char hex[17];
    for (const char *p = strstr(logbuf, "mpi checksum: "); p; p = strstr(p + 1, "mpi checksum: "))
        if (sscanf(p, "mpi checksum: rank %d step %d %16s", &r, &s, hex) == 3 && r >= 0 && r < 2 && s >= 1 &&
            s <= max_steps) {
            memcpy(sums[r][s - 1], hex, 17);
            n++;
        }
    return n;
}

/* The parameters of a checkpoint, malloc'ed; *n their count. */
static rg_real *load_params(const char *dir, int64_t *n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/ckpt/copy-rope-seed1.h5", th_tmpdir, dir);
    rg_model_config cfg;
    rg_model *m;
    rg_run_state rs;
    rg_run_state_init(&rs);
    assert_int_equal(rg_checkpoint_read_config(path, &cfg, &rs), RG_OK);
    assert_int_equal(rg_model_new(&cfg, 1, &m), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m, NULL, &rs), RG_OK);
    *n = m->params.offset[m->params.n_packed];
    rg_real *p = malloc(sizeof(rg_real) * (size_t)*n);
    memcpy(p, m->params.data, sizeof(rg_real) * (size_t)*n);
    rg_model_free(m);
    return p;
}

static char plain[2][64][17], dp2[2][64][17];

static void test_data_parallel(void **state)
{
    if (skip_why) { print_message("skipped: %s\n", skip_why); skip(); }
    static char one[2][64][17];
    assert_int_equal(run(0, "TRAIN_ORDER_MPI_CHECKSUM=1", NULL, ARGS " --out p"), 0);
    assert_int_equal(checksums(plain, 64), 12);
    assert_int_equal(run(1, "TRAIN_ORDER_MPI_CHECKSUM=1", NULL, ARGS " --data-parallel --out d1"), 0);
    assert_int_equal(checksums(one, 64), 12);
    for (int s = 0; s < 12; s++) assert_string_equal(one[0][s], plain[0][s]); /* one rank: the plain run's steps */
    double secs;
    assert_int_equal(run(2, "TRAIN_ORDER_MPI_CHECKSUM=1", &secs, ARGS " --data-parallel --out d2"), 0);
    assert_int_equal(checksums(dp2, 64), 24);
    for (int s = 0; s < 12; s++) assert_string_equal(dp2[0][s], dp2[1][s]); /* identical ranks after every step */
    int64_t n, n2;
    rg_real *a = load_params("p", &n), *b = load_params("d2", &n2);
    assert_int_equal(n, n2);
    double worst = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
        mag = fmax(mag, fabs((double)a[i]));
    }
    print_message("data-parallel, 2 ranks (%.1f s): checksums equal on both ranks at all 12 steps; final parameters "
                  "vs 1 process: max |diff| %.3g (largest |param| %.3g)\n", secs, worst, mag);
    assert_true(worst <= 1e-4); /* the stated tolerance (docs/mpi.md) */
    assert_true(worst > 0); /* the second rank's share took part (a different summation order) */
    free(a);
    free(b);
}

static void test_data_parallel_resume(void **state)
{
    if (skip_why) { print_message("skipped: %s\n", skip_why); skip(); }
    if (!dp2[0][11][0]) { print_message("needs test_data_parallel's run\n"); fail(); }
    assert_int_equal(run(2, NULL, NULL, ARGS " --steps 6 --data-parallel --out r1"), 0);
    static char sums[2][64][17];
    assert_int_equal(run(2, "TRAIN_ORDER_MPI_CHECKSUM=1", NULL, "--resume r1/ckpt/copy-rope-seed1.h5 --steps 12 "
                         "--test-lens 8 --rope-ext none --quiet --data-parallel --out r2"), 0);
    assert_int_equal(checksums(sums, 64), 12); /* steps 7..12 on both ranks */
    for (int s = 6; s < 12; s++) {
        assert_string_equal(sums[0][s], dp2[0][s]);
        assert_string_equal(sums[1][s], dp2[0][s]);
    }
    print_message("resumed at step 6 with 2 ranks: steps 7..12 bit-identical to the straight run\n");
}

static void test_failed_rank_ends_the_job(void **state)
{
    if (skip_why) { print_message("skipped: %s\n", skip_why); skip(); }
    const char *modes[] = {"--pos rope,alibi,none", "--pos rope --data-parallel"};
    for (int i = 0; i < 2; i++) {
        double s;
        int rc = run(2, "TRAIN_ORDER_MPI_FAIL=1:3", &s, "--task copy %s --steps 12 --batch 8 --test-lens 8 "
                     "--rope-ext none --quiet --out f%d", modes[i], i);
        print_message("%s with rank 1 failing at step 3: exit %d after %.1f s\n", modes[i], rc, s);
        assert_true(rc > 0); /* not 0, not a timeout */
        assert_true(s < TIMEOUT_S);
        assert_non_null(strstr(logbuf, "train_order: rank 1 of 2"));
        assert_non_null(strstr(logbuf, "): run copy/"));
        assert_non_null(strstr(logbuf, "/seed1 failed; ending the MPI job"));
    }
}

/* A grid over 3 ranks killed with SIGKILL (mpirun and every rank: the kill hook kills the process group) in its
 * second run, then `--continue` over 3 ranks: the single process's report.csv. */
static void test_continue_over_ranks(void **state)
{
    if (skip_why) { print_message("skipped: %s\n", skip_why); skip(); }
    static char want[1 << 14], got[1 << 14];
    const char *grid = "--task copy --pos rope,alibi,none --steps 12 --batch 8 --test-lens 8 --rope-ext none --quiet "
                       "--ckpt-every 4";
    assert_int_equal(run(0, NULL, NULL, "%s --jobs 1 --out c1", grid), 0);
    report_cells("c1", want, sizeof want);
    int rc = run(3, "TRAIN_ORDER_KILL=train:6:copy-alibi-seed1", NULL, "%s --out c3", grid);
    assert_true(rc != 0);
    double s;
    assert_int_equal(run(3, NULL, &s, "--continue c3"), 0);
    report_cells("c3", got, sizeof got);
    print_message("grid over 3 ranks killed at step 6 of a run, continued (%.1f s): report.csv %s the single "
                  "process's\n", s, strcmp(got, want) ? "DIFFERS from" : "equals");
    assert_string_equal(got, want);
}

/* Every rank loads the same plugins: with the example plugin on rank 1 only (mpirun's second program, "-x
 * ROPEGRAD_PLUGINS=..."), the job stops at start with exit status 2, rank 0 naming rank 1 and both lists; with the
 * plugin on both ranks (--plugin), a run of the plugin's encoding over the ranks succeeds. */
static void test_ranks_load_the_same_plugins(void **state)
{
    if (skip_why) { print_message("skipped: %s\n", skip_why); skip(); }
    char so[PATH_MAX + 64], build[PATH_MAX];
    snprintf(build, sizeof build, "%s", th_bin);
    *strrchr(build, '/') = 0; /* <build>/examples */
    snprintf(so, sizeof so, "%s/plugin_xpos_addition.so", build);
    const char *common = "--task copy --pos rope --steps 2 --batch 8 --test-lens 8 --rope-ext none --quiet";
    int rc = run(1, NULL, NULL, "%s --out p0 : -np 1 -x ROPEGRAD_PLUGINS=%s %s %s --out p0", common, so, th_bin,
                 common);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(logbuf, "MPI rank 1 loaded other plugins than rank 0"));
    assert_non_null(strstr(logbuf, "rank 1: plugin_xpos_addition.so:"));
    assert_non_null(strstr(logbuf, "rank 0: (none)"));
    rc = run(2, NULL, NULL, "--plugin %s --task copy --pos xpos,rope --steps 2 --batch 8 --test-lens 8 "
             "--rope-ext none --quiet --out p1", so);
    assert_int_equal(rc, 0);
    char csv[1 << 12];
    report_cells("p1", csv, sizeof csv);
    assert_non_null(strstr(csv, "copy,xpos,base,none,1,2,"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_grid_over_ranks), cmocka_unit_test(test_data_parallel),
                                       cmocka_unit_test(test_data_parallel_resume),
                                       cmocka_unit_test(test_failed_rank_ends_the_job),
                                       cmocka_unit_test(test_continue_over_ranks),
                                       cmocka_unit_test(test_ranks_load_the_same_plugins)};
    return cmocka_run_group_tests(tests, setup, th_teardown);
}
