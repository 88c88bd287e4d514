/* test_train_order_continue.c: `train_order --continue OUT`, end to end (the harness: eng_harness.h).
 *   - a tiny grid (2 encodings x 2 seeds, RoPE scaling, held-out and extrapolation measurements) run without
 *     interruption, with --jobs 1 and --jobs 2; then the same grid killed with SIGKILL (the whole process group,
 *     through the test hook TRAIN_ORDER_KILL) during training, inside a checkpoint save, during evaluation and
 *     while the final report is written, in the first run and in a later one (and twice: the --continue killed
 *     too), and continued: the report (report.md,
 *     .csv, .json, the cells and positions files, the plots' data) is the uninterrupted one byte for byte but for
 *     its time columns, every run's logs are the same but for theirs, and every final checkpoint holds the same
 *     parameters bit for bit (one table of kill points, one loop), and the temporary files a killed process left
 *     in OUT and its folders are gone (one outside OUT is not);
 *   - hostile folders: every file --continue reads (invocation.json, results/<run>.bin, ckpt/<run>.h5) missing,
 *     empty, truncated, corrupted, of another version or of another run is refused with exit status 2 and a
 *     message naming the file and what is wrong (one table, one loop); flags other than --jobs and --quiet are
 *     refused with --continue. */
#define _DEFAULT_SOURCE /* usleep */
#include "eng_harness.h"
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

/* Runs train_order with the space-separated arguments text in folder dir/ (made here) and TRAIN_ORDER_KILL=kill_at
 * (NULL: none), in a process group of its own (the kill hook kills the group, not this test). Returns the wait
 * status. */
static int spawn(const char *dir, const char *text, const char *kill_at)
{
    static char args[1024];
    char *argv[64], log[600];
    int argc = 0;
    mkdir(dir, 0755);
    snprintf(args, sizeof args, "%s", text);
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

/* The grid in dir/out with `jobs` jobs, killed at kill_at (NULL: not). */
static int run_grid(const char *dir, int jobs, const char *kill_at)
{
    char args[1024];
    snprintf(args, sizeof args, GRID "%d", jobs);
    return spawn(dir, args, kill_at);
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

typedef enum { REMOVE, TRUNCATE, FLIP, WRITE, COPY, MKDIR, REPLACE } edit_kind;
static void edit(const char *path, edit_kind k, long n, const char *text);

static void test_killed_and_continued_gives_the_same_report(void **state)
{
    /* again: the --continue itself killed there, then continued once more */
    static const struct { const char *kill_at; int jobs; const char *again; } KILLS[] = {
        {"train:3", 1, NULL}, {"save:4", 1, NULL}, {"eval:2", 1, NULL}, {"report:2", 1, NULL},
        {"train:5:copy-rope-seed2", 1, NULL},   /* three runs finished: kept */
        {"save:6:copy-alibi-seed2", 1, NULL},   /* the last save of a run: it resumes at its end and only evaluates */
        {"train:3", 2, NULL}, {"save:2:copy-rope-seed1", 2, NULL}, {"eval:1:copy-rope-seed1", 2, NULL},
        {"report:4", 2, NULL},
        {"train:1:copy-alibi-seed2", 1, "train:5:copy-rope-seed1"}, {"train:2", 2, "save:6:copy-rope-seed2"},
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
        /* temporary files a killed process left half written (pid past any pid_max), in every folder the engine
         * writes: the report, a plot's data, script and figure, a checkpoint, a results file, a run's log; and one
         * beside OUT, which --continue must leave alone */
        static const char *const STALE[] = {"out/report.md", "out/curves_copy.dat", "out/loss_copy.gp",
                                            "out/curves_copy.svg", "out/ckpt/copy-alibi-seed1.h5",
                                            "out/results/copy-rope-seed1.bin", "out/runs/copy-rope-seed2/train.csv",
                                            "report.md"};
        enum { N_STALE = sizeof STALE / sizeof *STALE };
        char stale[N_STALE][400];
        for (int i = 0; i < N_STALE; i++) {
            snprintf(stale[i], sizeof stale[i], "%s/%s.tmp.999999999", dir, STALE[i]);
            char folder[720];
            const char *slash = strrchr(STALE[i], '/');
            snprintf(folder, sizeof folder, "%s/%.*s", dir, slash ? (int)(slash - STALE[i]) : 0, STALE[i]);
            mkdir(folder, 0755); /* results/ or runs/<run>/ of a run the kill came before */
            edit(stale[i], WRITE, 0, "# Length extrap");
        }
        if (KILLS[k].again && (!WIFSIGNALED(st = spawn(dir, "--continue out", KILLS[k].again)) ||
                               WTERMSIG(st) != SIGKILL))
            fail_msg("%s: the --continue was not killed at %s (status %d)", what, KILLS[k].again, st);
        int rc = th_run_in(dir, "--continue out");
        if (rc != 0) fail_msg("%s: --continue exited %d:\n%s", what, rc, th_logbuf);
        for (int i = 0; i < N_STALE - 1; i++)
            if (access(stale[i], F_OK) == 0) fail_msg("%s: %s is left", what, stale[i]);
        if (access(stale[N_STALE - 1], F_OK) != 0) fail_msg("%s: %s (outside OUT) was removed", what,
                                                           stale[N_STALE - 1]);
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

/* ------------------------------------------------------------------ hostile folders */

/* Copies folder from to `to` (cp -a, started without a shell). */
static void copy_tree(const char *from, const char *to)
{
    pid_t pid = fork();
    if (pid == 0) { execlp("cp", "cp", "-a", from, to, (char *)NULL); _exit(127); }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* One edit of file path: n a byte count or offset, text the bytes to write or the file to copy. */
static void edit(const char *path, edit_kind k, long n, const char *text)
{
    if (k == REMOVE || k == MKDIR) assert_int_equal(unlink(path), 0);
    if (k == MKDIR) assert_int_equal(mkdir(path, 0755), 0);
    if (k == TRUNCATE) assert_int_equal(truncate(path, n), 0);
    if (k == COPY) th_copy_file(text, path);
    if (k == WRITE) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
    }
    if (k == REPLACE) { /* text "OLD|NEW": the first OLD replaced */
        static char buf[1 << 16], out[1 << 16];
        th_read_text(path, buf, sizeof buf);
        const char *bar = strchr(text, '|');
        char old[64];
        snprintf(old, sizeof old, "%.*s", (int)(bar - text), text);
        char *hit = strstr(buf, old);
        assert_non_null(hit);
        snprintf(out, sizeof out, "%.*s%s%s", (int)(hit - buf), buf, bar + 1, hit + strlen(old));
        edit(path, WRITE, 0, out);
    }
    if (k == FLIP) {
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, n, SEEK_SET), 0);
        int c = fgetc(f);
        assert_true(c != EOF);
        assert_int_equal(fseek(f, n, SEEK_SET), 0);
        fputc(c ^ 0x5a, f);
        assert_int_equal(fclose(f), 0);
    }
}

#define HEAD "{\"format\": \"train_order invocation\", \"version\": "

static void test_hostile_folders_are_refused(void **state)
{
    /* the base: the grid killed while evaluating its third run: two results files, the third run's final
       checkpoint, no file of the fourth */
    char base[300], alibi2[400], alibi1_ckpt[400];
    snprintf(base, sizeof base, "%s/hostile_base", th_tmpdir);
    int st = run_grid(base, 1, "eval:1:copy-rope-seed1");
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    snprintf(alibi2, sizeof alibi2, "%s/out/results/copy-alibi-seed2.bin", base);
    snprintf(alibi1_ckpt, sizeof alibi1_ckpt, "%s/out/ckpt/copy-alibi-seed1.h5", base);
    struct { const char *file; edit_kind k; long n; const char *text, *args, *says; } CASES[] = {
        {"invocation.json", REMOVE, 0, NULL, NULL, "invocation.json: No such file or directory"},
        {"invocation.json", WRITE, 0, "", NULL, "invocation.json: not a JSON object"},
        {"invocation.json", TRUNCATE, 100, NULL, NULL, "invocation.json: not a JSON object"},
        {"invocation.json", WRITE, 0, "{\"format\": \"something else\"}", NULL, "invocation.json: its format is not"},
        {"invocation.json", WRITE, 0, HEAD "2, \"command\": \"x\", \"settings\": {}}", NULL, "another version"},
        {"invocation.json", WRITE, 0, HEAD "1, \"settings\": {}}", NULL, "invocation.json: no command line"},
        {"invocation.json", WRITE, 0, HEAD "1, \"command\": \"x\", \"settings\": {\"steps\": -5}}", NULL,
         "invocation.json: settings: steps"},
        {"invocation.json", WRITE, 0, HEAD "1, \"command\": \"x\", \"settings\": {\"bogus\": 1}}", NULL,
         "invocation.json: settings: bogus: unknown setting"},
        {"invocation.json", WRITE, 0, HEAD "1, \"command\": \"x\", \"settings\": {\"eval\": \"a.h5\"}}", NULL,
         "invocation.json: settings of a --resume, --eval or --continue invocation"},
        {"invocation.json", REPLACE, 0, "\"copy\"|\"copy\\u0000sort\"", NULL, "invocation.json: a \\u0000 escape"},
        {"invocation.json", REPLACE, 0, "\"lr\":\t0.001|\"lr\":\t0.002", NULL,
         "copy-alibi-seed1.bin: written by an invocation with other settings"},
        {"results/copy-alibi-seed1.bin", TRUNCATE, 1000, NULL, NULL, "copy-alibi-seed1.bin: 1 records in 1000 bytes"},
        {"results/copy-alibi-seed1.bin", FLIP, 5000, NULL, NULL, "copy-alibi-seed1.bin: its records do not match"},
        {"results/copy-alibi-seed1.bin", FLIP, 20, NULL, NULL, "copy-alibi-seed1.bin: written by another version"},
        {"results/copy-alibi-seed1.bin", FLIP, 3, NULL, NULL, "copy-alibi-seed1.bin: not a train_order results"},
        {"results/copy-alibi-seed1.bin", COPY, 0, alibi2, NULL, "copy-alibi-seed1.bin: record 1 is not row alibi"},
        {"results/copy-alibi-seed1.bin", MKDIR, 0, NULL, NULL, "copy-alibi-seed1.bin: not a regular file"},
        {"results/copy-alibi-seed1.bin", WRITE, 0, "hello", NULL, "copy-alibi-seed1.bin: 5 bytes, but a results"},
        {"ckpt/copy-rope-seed1.h5", TRUNCATE, 2000, NULL, NULL, "copy-rope-seed1.h5: corrupt file: 2000 bytes"},
        {"ckpt/copy-rope-seed1.h5", FLIP, 3000, NULL, NULL, "copy-rope-seed1.h5: corrupt file: its bytes have CRC-32"},
        {"ckpt/copy-rope-seed1.h5", COPY, 0, alibi1_ckpt, NULL, "copy-rope-seed1.h5: config mismatch"},
        {"ckpt/copy-rope-seed1.h5", WRITE, 0, "", NULL, "copy-rope-seed1.h5: empty"},
        {NULL, REMOVE, 0, NULL, "--continue out --steps 9", "--steps does not apply with --continue"},
        {NULL, REMOVE, 0, NULL, "--continue out --overwrite", "--overwrite does not apply with --continue"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        char dir[300], path[400];
        snprintf(dir, sizeof dir, "%s/hostile%zu", th_tmpdir, i);
        copy_tree(base, dir);
        snprintf(path, sizeof path, "%s/out/%s", dir, CASES[i].file ? CASES[i].file : "");
        if (CASES[i].file) edit(path, CASES[i].k, CASES[i].n, CASES[i].text);
        int rc = th_run_in(dir, "%s", CASES[i].args ? CASES[i].args : "--continue out");
        if (rc != 2 || !strstr(th_logbuf, CASES[i].says))
            fail_msg("case %zu (%s): exit %d, expected 2 and '%s':\n%s", i, CASES[i].file ? CASES[i].file :
                     CASES[i].args, rc, CASES[i].says, th_logbuf);
        if (th_exists(dir, "out/report.md") && !strstr(th_logbuf, "--continue"))
            fail_msg("case %zu: the message does not say --continue:\n%s", i, th_logbuf);
    }
    /* the base itself continues */
    int rc = th_run_in(base, "--continue out");
    if (rc != 0) fail_msg("the untouched folder: exit %d:\n%s", rc, th_logbuf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_killed_and_continued_gives_the_same_report, th_reset),
        cmocka_unit_test_setup(test_hostile_folders_are_refused, th_reset),
    };
    return cmocka_run_group_tests(tests, group_setup, th_teardown);
}
