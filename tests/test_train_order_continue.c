/* test_train_order_continue.c: `train_order --continue OUT`, end to end (the harness: to_harness.h).
 *   - a tiny grid (2 encodings x 2 seeds, RoPE scaling, held-out and extrapolation measurements) run without
 *     interruption, with --jobs 1 and --jobs 2; then the same grid killed with SIGKILL (the whole process group,
 *     through the test hook TRAIN_ORDER_KILL) during training, inside a checkpoint save, during evaluation and
 *     while the final report is written, in the first run and in a later one, and continued: the report (report.md,
 *     .csv, .json, the cells and positions files, the plots' data) is the uninterrupted one byte for byte but for
 *     its time columns, every run's logs are the same but for theirs, and every final checkpoint holds the same
 *     parameters bit for bit (one table of kill points, one loop);
 *   - hostile folders: every file --continue reads (invocation.json, results/<run>.bin, ckpt/<run>.h5) missing,
 *     empty, truncated, corrupted, of another version or of another run is refused with exit status 2 and a
 *     message naming the file and what is wrong (one table, one loop); flags other than --jobs and --quiet are
 *     refused with --continue. */
#define _DEFAULT_SOURCE /* usleep */
#include "to_harness.h"
#include "engine/engine.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GRID "--task copy --pos alibi,rope --seeds 2 --steps 6 --batch 4 --ckpt-every 2 --log-every 4 --d-model 16 " \
             "--n-heads 2 --n-layers 1 --d-ff 32 --test-lens 4,8 --rope-scaling yarn --eval-every 3 --extrap-every 2 " \
             "--quiet --out out --jobs "
static const char *const RUNS[] = {"copy-alibi-seed1", "copy-alibi-seed2", "copy-rope-seed1", "copy-rope-seed2"};

/* Runs the grid in folder dir/ (made here) with `jobs` jobs and TRAIN_ORDER_KILL=kill_at (NULL: none), in a
 * process group of its own (the kill hook kills the group, not this test). Returns the wait status. */
static int run_grid(const char *dir, int jobs, const char *kill_at)
{
    static char args[1024];
    char *argv[64], log[600];
    int argc = 0;
    mkdir(dir, 0755);
    snprintf(args, sizeof args, GRID "%d", jobs);
    snprintf(log, sizeof log, "%s/log", dir);
    argv[argc++] = (char *)th_exe;
    for (char *p = strtok(args, " "); p && argc < 63; p = strtok(NULL, " ")) argv[argc++] = p;
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || chdir(dir) != 0) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("RG_KEEP_BLAS_CORE", "1", 1);
        if (kill_at) setenv("TRAIN_ORDER_KILL", kill_at, 1);
        execv(th_exe, argv);
        _exit(127);
    }
    setpgid(pid, pid);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    for (int i = 0; i < 500 && kill(-pid, 0) == 0; i++) usleep(10000); /* the group's other members (--jobs 2) */
    return st;
}

static int group_setup(void **state)
{
    if (th_setup(state)) return -1;
    for (int jobs = 1; jobs <= 2; jobs++) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/whole%d", th_tmpdir, jobs);
        int st = run_grid(dir, jobs, NULL);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "the uninterrupted grid (--jobs %d) failed\n", jobs);
            return -1;
        }
    }
    return 0;
}

/* The text of path without its time columns: report.md's date and wall time lines, report.json's "date" and
 * *seconds* members, the CSV column whose header names seconds (train_seconds, elapsed_s, tokens_per_s,
 * eval_seconds), into out. */
static void timeless(const char *path, char *out, size_t cap)
{
    static char text[1 << 20];
    th_read_text(path, text, sizeof text);
    if (!text[0]) fail_msg("%s is missing or empty", path);
    bool csv = strstr(path, ".csv") != NULL;
    bool drop[64] = {false};
    out[0] = 0;
    size_t at = 0;
    bool header = true;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, "- date: ") || strstr(line, "- wall time: ") || strstr(line, "\"date\":") ||
            strstr(line, "seconds\":"))
            continue;
        int col = 0;
        for (char *p = line, *start = line; csv; p++) {
            if (*p != ',' && *p) continue;
            bool last = !*p;
            *p = 0;
            if (header && (strstr(start, "seconds") || strstr(start, "elapsed") || strstr(start, "per_s")))
                drop[col] = true;
            if (!drop[col]) at += (size_t)snprintf(out + at, cap - at, "%s,", start);
            col++;
            start = p + 1;
            if (last) break;
        }
        if (!csv) at += (size_t)snprintf(out + at, cap - at, "%s", line);
        header = false;
        at += (size_t)snprintf(out + at, cap - at, "\n");
        if (at >= cap) fail_msg("%s: too long for the comparison", path);
    }
}

static void same_file(const char *a_dir, const char *b_dir, const char *name, const char *what)
{
    static char a[1 << 20], b[1 << 20];
    char pa[700], pb[700];
    snprintf(pa, sizeof pa, "%s/%s", a_dir, name);
    snprintf(pb, sizeof pb, "%s/%s", b_dir, name);
    timeless(pa, a, sizeof a);
    timeless(pb, b, sizeof b);
    if (strcmp(a, b) != 0) {
        char pd[720];
        snprintf(pd, sizeof pd, "%s.timeless", pb);
        FILE *f = fopen(pd, "w");
        if (f) { fputs(a, f); fputs("=====\n", f); fputs(b, f); fclose(f); }
    }
    if (strcmp(a, b) != 0) fail_msg("%s: %s differs from the uninterrupted grid's (time columns aside)", what, pb);
}

/* Every parameter of two checkpoints equal bit for bit. */
static void same_parameters(const char *a, const char *b, const char *what)
{
    rg_model *ma, *mb;
    if (rg_checkpoint_open(a, &ma, NULL, NULL) || rg_checkpoint_open(b, &mb, NULL, NULL))
        fail_msg("%s: %s", what, rg_last_error());
    assert_int_equal(ma->params.n, mb->params.n);
    for (int i = 0; i < ma->params.n; i++)
        if (memcmp(ma->params.items[i]->data, mb->params.items[i]->data,
                   sizeof(rg_real) * (size_t)ma->params.items[i]->numel) != 0)
            fail_msg("%s: parameter %d of %s differs from the uninterrupted run's", what, i, b);
    rg_model_free(ma);
    rg_model_free(mb);
}

static void test_killed_and_continued_gives_the_same_report(void **state)
{
    static const struct { const char *kill_at; int jobs; } KILLS[] = {
        {"train:3", 1}, {"save:4", 1}, {"eval:2", 1}, {"report:2", 1},
        {"train:5:copy-rope-seed2", 1},   /* three runs finished: kept */
        {"save:6:copy-alibi-seed2", 1},   /* the last save of a run: it resumes at its end and only evaluates */
        {"train:3", 2}, {"save:2:copy-rope-seed1", 2}, {"eval:1:copy-rope-seed1", 2}, {"report:4", 2},
    };
    static const char *const FILES[] = {"report.md", "report.csv", "report.json", "report_cells.csv",
                                        "report_positions.csv", "curves_copy.dat", "over_training_copy.dat",
                                        "loss_copy.dat"};
    for (size_t k = 0; k < sizeof KILLS / sizeof *KILLS; k++) {
        char dir[300], out[320], whole[320], what[128];
        snprintf(dir, sizeof dir, "%s/kill%zu", th_tmpdir, k);
        snprintf(out, sizeof out, "%s/out", dir);
        snprintf(whole, sizeof whole, "%s/whole%d/out", th_tmpdir, KILLS[k].jobs);
        snprintf(what, sizeof what, "killed at %s (--jobs %d)", KILLS[k].kill_at, KILLS[k].jobs);
        int st = run_grid(dir, KILLS[k].jobs, KILLS[k].kill_at);
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) fail_msg("%s: the grid was not killed (status %d)", what, st);
        int rc = th_run_in(dir, "--continue out");
        if (rc != 0) fail_msg("%s: --continue exited %d:\n%s", what, rc, th_logbuf);
        for (size_t f = 0; f < sizeof FILES / sizeof *FILES; f++) same_file(whole, out, FILES[f], what);
        for (size_t r = 0; r < sizeof RUNS / sizeof *RUNS; r++) {
            const char *logs[] = {"train.csv", "eval.csv", "extrap.csv"};
            char name[200], a[700], b[700];
            for (int l = 0; l < 3; l++) {
                snprintf(name, sizeof name, "runs/%s/%s", RUNS[r], logs[l]);
                same_file(whole, out, name, what);
            }
            snprintf(a, sizeof a, "%s/ckpt/%s.h5", whole, RUNS[r]);
            snprintf(b, sizeof b, "%s/ckpt/%s.h5", out, RUNS[r]);
            same_parameters(a, b, what);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_killed_and_continued_gives_the_same_report, th_reset),
    };
    return cmocka_run_group_tests(tests, group_setup, getenv("KEEP") ? NULL : th_teardown);
}
