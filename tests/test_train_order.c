/* test_train_order.c: end-to-end tests of examples/train_order (the experiment program), each driving the binary
 * (fork/exec, no shell) and checking its files:
 *   - bad command lines (unknown or abbreviated options, --seed with --seeds, empty or too long paths, options that
 *     do not apply to the mode) exit 2 and write nothing;
 *   - a short run writes the report, the checkpoints and runs/<run>/train.csv, from any folder (the data file is
 *     found next to the executable's repository), with generated test lengths; --eval reproduces its numbers;
 *   - a folder holding another invocation's results is refused; two invocations on one folder at once: the second
 *     is refused by the lock and the first's results stay whole;
 *   - a resume writes a new checkpoint, never replaces its source unless --overwrite, and continues or restarts the
 *     learning-rate schedule as asked;
 *   - checkpoints with hostile /run, /config, /optim or /rng contents are refused with exit 2 and a message naming
 *     the checkpoint, before anything is built;
 *   - --config FILE (JSON) and --print-config; the data file through $ROPEGRAD_DATA for a binary outside the
 *     repository;
 *   - --variants all: the rope θ=500k and +rand rows (not for none), fixed --rope-scaling factors, their files and
 *     labels; --eval of a variant's checkpoint keeps its label; conflicting variant options exit 2;
 *   - --eval-every: runs/<run>/eval.csv at every E steps, the report's steps-to-0.99 column, and training that is
 *     bit for bit the same with and without the measurements;
 *   - the final report is not marked partial and shows the resolved settings, the learning-rate schedule and the
 *     generated test lengths; --replot CSV and --compare A B through the program, and their option hygiene.
 * The binary is found through RG_BUILD_DIR (set by tests/run.sh) or build/. */
#define _DEFAULT_SOURCE /* realpath */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char bin[PATH_MAX];
static char tmpdir[256];
static char logbuf[1 << 14];
static const char *exe = bin;          /* the binary run (a copy outside the repository in one test) */
static const char *data_env;           /* ROPEGRAD_DATA for the child (NULL: unset) */

static int setup(void **state)
{
    const char *bd = getenv("RG_BUILD_DIR");
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/examples/train_order", bd && *bd ? bd : "build");
    if (!realpath(rel, bin) || access(bin, X_OK) != 0) {
        fprintf(stderr, "test_train_order: %s is missing (make all)\n", rel);
        return -1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rg_train_order_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* Before each test: the binary under test, no ROPEGRAD_DATA (a failed test may have left others). */
static int reset(void **state)
{
    exe = bin;
    data_env = NULL;
    return 0;
}

static int teardown(void **state)
{
    pid_t pid = fork();
    if (pid == 0) { execlp("rm", "rm", "-rf", tmpdir, (char *)NULL); _exit(127); }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Starts the program with the arguments: a space-separated list in which '' stands for an empty argument. Runs in
 * folder cwd (NULL: this one), output to `log`. Returns the child's pid. */
static pid_t start(const char *cwd, const char *log, const char *fmt, va_list ap)
{
    static char args[1 << 14];
    vsnprintf(args, sizeof args, fmt, ap);
    char *argv[256];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (char *p = strtok(args, " "); p && argc < 255; p = strtok(NULL, " ")) argv[argc++] = strcmp(p, "''") ? p : "";
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || (cwd && chdir(cwd) != 0)) _exit(126);
        dup2(fd, 1);
        dup2(fd, 2);
        setenv("RG_KEEP_BLAS_CORE", "1", 1);
        if (data_env) setenv("ROPEGRAD_DATA", data_env, 1);
        else unsetenv("ROPEGRAD_DATA");
        execv(exe, argv);
        _exit(127);
    }
    return pid;
}

static int wait_rc(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void read_text(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* Runs the program (in folder cwd, or here) and returns its exit status; its output is in logbuf. */
static int run_in(const char *cwd, const char *fmt, ...)
{
    char log[512];
    snprintf(log, sizeof log, "%s/log", tmpdir);
    va_list ap;
    va_start(ap, fmt);
    pid_t pid = start(cwd, log, fmt, ap);
    va_end(ap);
    int rc = wait_rc(pid);
    read_text(log, logbuf, sizeof logbuf);
    return rc;
}
#define run(...) run_in(NULL, __VA_ARGS__)

/* Starts the program in the background, output to log. */
static pid_t start_bg(const char *log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pid_t pid = start(NULL, log, fmt, ap);
    va_end(ap);
    return pid;
}

static int exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat s;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &s) == 0 && s.st_size > 0;
}

static void copy_file(const char *from, const char *to)
{
    static char buf[1 << 20];
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    assert_non_null(f);
    assert_non_null(g);
    size_t n, total = 0; /* in pieces: a sanitizer build of train_order passes 4 MiB */
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        assert_int_equal(fwrite(buf, 1, n, g), n);
        total += n;
    }
    assert_true(total > 0 && !ferror(f));
    fclose(f);
    assert_int_equal(fclose(g), 0);
}

/* ------------------------------------------------------------------ bad command lines */

static void test_bad_flags_exit_2_and_write_nothing(void **state)
{
    char longpath[1300];
    snprintf(longpath, sizeof longpath, "%s/", tmpdir);
    while (strlen(longpath) < 1100) strcat(longpath, "d");
    struct { const char *args; bool own_out; } bad[] = {
        {"--task bogus", 0}, {"--pos rope,fourier", 0}, {"--steps 0", 0}, {"--steps 12x", 0}, {"--lr -1", 0},
        {"--rope-ext zzz", 0}, {"--test-lens 8,,", 0}, {"--jobs 0", 0}, {"--no-such-flag", 0}, {"--seeds", 0},
        {"--eval /nonexistent.h5", 0}, {"--resume a.h5 --eval b.h5", 0}, {"extra-argument", 0},
        {"--test-lens 8,8", 0}, {"--data tests/fixtures/attn.h5", 0}, {"--eval tests/fixtures/attn.h5", 0},
        {"--pos learned --train-len 79", 0}, {"--pos rope --random-positions --train-len 79", 0},
        /* issue 13 section 2: one seed or several, exact option names */
        {"--seed 7 --seeds 3", 0}, {"--seed 0", 0}, {"--seeds 1,1", 0}, {"--see 7", 0}, {"--ste 5", 0},
        {"--qui", 0}, {"--lr-schedule restart", 0}, {"--n-heads 3", 0}, {"--quiet=1", 0},
        {"--pos learned --random-positions --max-position 200", 0},
        {"--d-model 4096 --n-heads 8 --n-layers 64 --d-ff 65536", 0},
        /* issue 16 section 3: empty and too long paths */
        {"--eval ''", 0}, {"--resume ''", 0}, {"--data ''", 0}, {"--config ''", 0},
        {"--config /nonexistent.json", 0}, {"--out ''", 1}, {"--out", 1}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char out[512];
        snprintf(out, sizeof out, "%s/bad%zu", tmpdir, i);
        /* tiny settings first (the bad value after them wins): a value wrongly accepted fails in seconds */
        int rc = bad[i].own_out ? run("--steps 2 --batch 2 --test-lens 8 --rope-ext none --quiet %s", bad[i].args)
                                : run("--steps 2 --batch 2 --test-lens 8 --rope-ext none --quiet %s --out %s",
                                      bad[i].args, out);
        if (rc != 2) fail_msg("'%s' exited %d, want 2:\n%s", bad[i].args, rc, logbuf);
        struct stat s;
        if (stat(out, &s) == 0) fail_msg("'%s' created %s", bad[i].args, out);
        if (!strstr(logbuf, "allowed")) fail_msg("'%s': no 'allowed' in the message:\n%s", bad[i].args, logbuf);
    }
    /* an --out past the path limit is refused, never cut */
    assert_int_equal(run("--steps 2 --batch 2 --test-lens 8 --quiet --out %s", longpath), 2);
    assert_non_null(strstr(logbuf, "longer than the limit"));
    longpath[1023] = 0;
    struct stat s;
    assert_int_not_equal(stat(longpath, &s), 0);
    /* an --out that is a file: bad usage (exit 2), the file untouched (it exited 1: "cannot create the lock file") */
    char afile[600];
    snprintf(afile, sizeof afile, "%s/afile", tmpdir);
    FILE *af = fopen(afile, "w");
    assert_non_null(af);
    fclose(af);
    assert_int_equal(run("--steps 2 --batch 2 --test-lens 8 --quiet --out %s", afile), 2);
    assert_non_null(strstr(logbuf, "is a file, not a folder"));
    assert_int_equal(stat(afile, &s), 0);
    assert_true(S_ISREG(s.st_mode) && s.st_size == 0);
    /* the message says what is wrong and what is allowed */
    assert_int_equal(run("--pos fourier --out %s/badmsg", tmpdir), 2);
    assert_non_null(strstr(logbuf, "fourier"));
    /* --seed is an option of its own, not an abbreviation of --seeds (resolved, never run: a run here would write
     * into the repository's ./out, and the exit status would depend on whether ./out already holds results) */
    assert_int_equal(run("--seed 7 --steps 2 --print-config"), 0);
    assert_non_null(strstr(logbuf, "\"seed\":\t7"));
    assert_int_equal(run("--ste 5 --seed 7"), 2);
    assert_non_null(strstr(logbuf, "abbreviation of --steps"));
}

/* ------------------------------------------------------------------ a short run, from another folder */

/* The exact_match and token_acc of the rows of report.csv for one encoding (base variant), as "ext n em acc"
 * lines. */
static void csv_rows(const char *dir, const char *enc, char *out, size_t cap)
{
    char p[1024], line[512];
    snprintf(p, sizeof p, "%s/report.csv", dir);
    FILE *f = fopen(p, "r");
    if (!f) fail_msg("no %s", p);
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char task[32], e[32], var[32], ext[32];
        int seed, n;
        long long steps;
        double loss, secs, em, acc;
        if (sscanf(line, "%31[^,],%31[^,],%31[^,],%31[^,],%d,%lld,%lf,%lf,%d,%lf,%lf", task, e, var, ext, &seed, &steps,
                   &loss, &secs, &n, &em, &acc) == 11 && strcmp(e, enc) == 0 && strcmp(var, "base") == 0) {
            char row[128];
            snprintf(row, sizeof row, "%s %d %.6g %.6g\n", ext, n, em, acc);
            strncat(out, row, cap - strlen(out) - 1);
        }
    }
    fclose(f);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_short_run_writes_everything_and_eval_reproduces(void **state)
{
    char out[512], ckpt[600], csv[700], text[4096];
    snprintf(out, sizeof out, "%s/run", tmpdir);
    /* run from tmpdir (not the repository) without --data; n = 20 is not in the data file: generated */
    int rc = run_in(tmpdir, "--task copy --pos rope,learned --steps 30 --batch 8 --test-lens 8,20 --rope-ext pi "
                    "--jobs 2 --log-every 10 --out %s", out);
    if (rc != 0) fail_msg("short run exited %d:\n%s", rc, logbuf);
    assert_non_null(strstr(logbuf, "n=20 (generated set)"));
    assert_non_null(strstr(logbuf, "copy/rope/seed1: step 30/30, loss"));
    const char *files[] = {"report.md", "report.csv", "report.json", "ckpt/copy-rope-seed1.h5",
                           "ckpt/copy-learned-seed1.h5", "runs/copy-rope-seed1/train.csv", "settings.json",
                           "runs/copy-learned-seed1/train.csv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!exists(out, files[i])) fail_msg("the run did not write %s/%s", out, files[i]);
    snprintf(csv, sizeof csv, "%s/runs/copy-rope-seed1/train.csv", out);
    read_text(csv, text, sizeof text);
    const char *head = "step,loss,lr,grad_norm,tokens_per_s,elapsed_s\n10,";
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    assert_int_equal(count_lines(text), 4); /* header + steps 10, 20, 30 */
    assert_non_null(strstr(text, "\n30,"));
    char rows[2048];
    csv_rows(out, "rope", rows, sizeof rows);
    assert_int_equal(count_lines(rows), 4); /* rope and rope+pi at n = 8 and 20 */

    char out2[512];
    snprintf(out2, sizeof out2, "%s/eval", tmpdir);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    rc = run("--eval %s --test-lens 8,20 --rope-ext pi --quiet --out %s", ckpt, out2);
    if (rc != 0) fail_msg("--eval exited %d:\n%s", rc, logbuf);
    char rows2[2048];
    csv_rows(out2, "rope", rows2, sizeof rows2);
    if (strcmp(rows, rows2) != 0) fail_msg("--eval differs from the run:\nrun:\n%seval:\n%s", rows, rows2);
    if (exists(out2, "ckpt") || exists(out2, "runs"))
        fail_msg("--eval made %s/ckpt or %s/runs, but it writes no checkpoint and no training log", out2, out2);
}

/* The short run's report, then --replot and --compare on it (and on its --eval twin). */
static void test_report_replot_and_compare(void **state)
{
    char out[512], md[600], re[512], csv[600], json[600];
    static char text[1 << 16];
    snprintf(out, sizeof out, "%s/run", tmpdir);
    snprintf(md, sizeof md, "%s/report.md", out);
    read_text(md, text, sizeof text);
    const char *want[] = {"# Length extrapolation report\n", "## Settings", "\"test_lens\":\t\"8,20\"",
                          "learning-rate schedule: new: warmup", "copy: test sets generated (not in the data file; "
                          "same generator and seed rule): n=20\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(text, want[i])) fail_msg("report.md lacks '%s':\n%s", want[i], text);
    assert_null(strstr(text, "PARTIAL"));
    snprintf(json, sizeof json, "%s/report.json", out);
    read_text(json, text, sizeof text);
    assert_non_null(strstr(text, "\"generated_test_lengths\""));
    assert_non_null(strstr(text, "\"partial\":\tfalse"));

    snprintf(csv, sizeof csv, "%s/report.csv", out);
    snprintf(re, sizeof re, "%s/replot", tmpdir);
    int rc = run("--replot %s --out %s --quiet", csv, re);
    if (rc != 0) fail_msg("--replot exited %d:\n%s", rc, logbuf);
    const char *files[] = {"extrapolation.dat", "extrapolation.gp", "curves_copy.dat", "curves_copy.gp"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!exists(re, files[i])) fail_msg("--replot did not write %s/%s", re, files[i]);
    rc = run("--replot %s --quiet", csv); /* default: into the CSV's own folder */
    if (rc != 0 || !exists(out, "extrapolation.gp")) fail_msg("--replot into its folder exited %d:\n%s", rc, logbuf);
    /* another report's folder: refused (its plots would no longer match its report) unless --overwrite; a CSV
     * that does not load makes no folder */
    char other[600], none[600];
    snprintf(other, sizeof other, "%s/eval", tmpdir);
    static char before[1 << 14], after[1 << 14];
    char dat[700];
    snprintf(dat, sizeof dat, "%s/extrapolation.dat", other);
    read_text(dat, before, sizeof before);
    assert_true(before[0]);
    rc = run("--replot %s --out %s --quiet", csv, other);
    if (rc != 2 || !strstr(logbuf, "holds results of another report")) fail_msg("--replot into %s: %d\n%s", other, rc, logbuf);
    read_text(dat, after, sizeof after);
    assert_string_equal(before, after);
    rc = run("--replot %s --out %s --overwrite --quiet", csv, other);
    read_text(dat, after, sizeof after);
    if (rc != 0 || !strcmp(before, after)) fail_msg("--replot --overwrite: %d, or the plot data is unchanged\n%s", rc, logbuf);
    snprintf(none, sizeof none, "%s/replot_none", tmpdir);
    rc = run("--replot %s.missing --out %s --quiet", csv, none);
    if (rc != 1 || exists(tmpdir, "replot_none")) fail_msg("a failed --replot: %d, or it made %s\n%s", rc, none, logbuf);
    snprintf(json, sizeof json, "%s/eval/report.json", tmpdir);
    rc = run("--compare %s %s", csv, json);
    if (rc != 0) fail_msg("--compare exited %d:\n%s", rc, logbuf);
    if (!strstr(logbuf, "rope+pi") || !strstr(logbuf, "A: ") || !strstr(logbuf, "cells whose intervals do not"))
        fail_msg("--compare printed:\n%s", logbuf);

    /* option hygiene: what does not apply is refused (2), a missing file fails (1) */
    struct { const char *args; int rc; const char *msg; } cases[] = {
        {"--replot %s --lr 1", 2, "does not apply with --replot"},
        {"--replot %s --task copy", 2, "does not apply with --replot"},
        {"--compare %s", 2, "second report is missing"},
        {"--compare %s %s --out x", 2, "does not apply with --compare"},
        {"--replot %s --compare a b", 2, "does not apply"},
        {"--replot %s --print-config", 2, "does not apply"},
        {"--replot %s.missing", 1, "cannot read"},
        {"--compare %s %s.missing", 1, "cannot read"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rc = run(cases[i].args, csv, csv);
        if (rc != cases[i].rc || !strstr(logbuf, cases[i].msg))
            fail_msg("'%s' exited %d (want %d):\n%s", cases[i].args, rc, cases[i].rc, logbuf);
    }
}

/* --variants all on a tiny grid: which runs exist, what they are called, and that --eval of a variant's checkpoint
 * reports it under the same label. */
static void test_variants_grid(void **state)
{
    char out[512], csv[600], ck[600];
    static char text[1 << 16];
    snprintf(out, sizeof out, "%s/variants", tmpdir);
    int rc = run("--task copy --pos none,alibi,rope --variants all --steps 4 --batch 4 --test-lens 8,20 "
                 "--rope-scaling yarn,yarn:2 --jobs 2 --quiet --out %s", out);
    if (rc != 0) fail_msg("variants grid exited %d:\n%s", rc, logbuf);
    const char *files[] = {"ckpt/copy-none-seed1.h5", "ckpt/copy-alibi-seed1.h5", "ckpt/copy-rope-seed1.h5",
                           "ckpt/copy-rope-theta500k-seed1.h5", "ckpt/copy-alibi-rand-seed1.h5",
                           "ckpt/copy-rope-rand-seed1.h5", "runs/copy-rope-theta500k-seed1/train.csv",
                           "runs/copy-alibi-rand-seed1/train.csv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!exists(out, files[i])) fail_msg("the grid did not write %s/%s", out, files[i]);
    assert_false(exists(out, "ckpt/copy-none-rand-seed1.h5")); /* NoPE reads no positions */
    assert_false(exists(out, "ckpt/copy-alibi-theta500k-seed1.h5"));
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    read_text(csv, text, sizeof text);
    const char *rows[] = {"copy,rope,theta500k,none,1,", "copy,rope,theta500k,yarn:2,1,", "copy,alibi,rand,none,1,",
                          "copy,rope,rand,yarn,1,", "copy,rope,base,yarn:2,1,", "copy,none,base,none,1,"};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (!strstr(text, rows[i])) fail_msg("report.csv lacks '%s':\n%s", rows[i], text);
    assert_int_equal(count_lines(text), 1 + 2 * (3 + 3 * 3)); /* none, alibi, alibi+rand; 3 rope runs x 3 rows */
    snprintf(csv, sizeof csv, "%s/report.md", out);
    read_text(csv, text, sizeof text);
    const char *labels[] = {"| rope θ=500k |", "| alibi+rand |", "| rope+rand+yarn:2 |", "| rope θ=500k+yarn |"};
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
        if (!strstr(text, labels[i])) fail_msg("report.md lacks '%s'", labels[i]);
    /* a variant's checkpoint evaluated alone keeps its variant */
    const char *ckpts[] = {"copy-rope-theta500k-seed1", "copy-alibi-rand-seed1"};
    const char *want[] = {"copy,rope,theta500k,none,1,", "copy,alibi,rand,none,1,"};
    for (int i = 0; i < 2; i++) {
        snprintf(ck, sizeof ck, "%s/ckpt/%s.h5", out, ckpts[i]);
        rc = run("--eval %s --test-lens 8 --rope-ext none --quiet --out %s/ev%d", ck, tmpdir, i);
        if (rc != 0) fail_msg("--eval %s exited %d:\n%s", ck, rc, logbuf);
        snprintf(csv, sizeof csv, "%s/ev%d/report.csv", tmpdir, i);
        read_text(csv, text, sizeof text);
        if (!strstr(text, want[i])) fail_msg("--eval %s:\n%s", ck, text);
    }
    /* conflicting or misplaced variant settings */
    struct { const char *args, *msg; } bad[] = {
        {"--variants rand --random-positions", "--random-positions with --variants"},
        {"--variants all --rope-theta 500000", "--rope-theta 500000 with --variants theta500k"},
        {"--variants fast", "--variants: 'fast' is not valid"},
        {"--rope-scaling yarn --rope-ext pi", "--rope-scaling and --rope-ext together"},
        {"--rope-scaling yarn:0.5", "--rope-scaling: 'yarn:0.5' is not valid"},
        {"--rope-scaling yarn,yarn", "--rope-scaling: 'yarn,yarn' is not valid"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = run("%s --steps 2 --quiet --out %s/bad%zu", bad[i].args, tmpdir, i);
        if (rc != 2 || !strstr(logbuf, bad[i].msg)) fail_msg("'%s' exited %d:\n%s", bad[i].args, rc, logbuf);
    }
    snprintf(ck, sizeof ck, "%s/ckpt/copy-rope-seed1.h5", out);
    rc = run("--eval %s --variants all --quiet --out %s/bad_eval", ck, tmpdir);
    if (rc != 2 || !strstr(logbuf, "--variants does not apply with --eval")) fail_msg("exit %d:\n%s", rc, logbuf);
}

/* The first four columns (step, loss, lr, grad_norm) of a train.csv. */
static void train_columns(const char *path, char *out, size_t cap)
{
    static char text[1 << 14];
    read_text(path, text, sizeof text);
    out[0] = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *p = line;
        for (int c = 0; c < 4 && p; c++) p = strchr(p + 1, ',');
        if (p) *p = 0;
        strncat(out, line, cap - strlen(out) - 2);
        strcat(out, "\n");
    }
}

/* Steps-to-learn: the held-out measurements are logged every E steps and do not change training. */
static void test_eval_every(void **state)
{
    char out[2][512], path[700], text[4096];
    static char cols[2][1 << 14];
    for (int i = 0; i < 2; i++) {
        snprintf(out[i], sizeof out[i], "%s/learn%d", tmpdir, i);
        int rc = run("--pos rope --steps 20 --batch 4 --test-lens 8 --rope-scaling none --log-every 5 "
                     "--eval-every %d --quiet --out %s", i ? 0 : 5, out[i]);
        if (rc != 0) fail_msg("--eval-every %d exited %d:\n%s", i ? 0 : 5, rc, logbuf);
        snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/train.csv", out[i]);
        train_columns(path, cols[i], sizeof cols[i]);
    }
    if (strcmp(cols[0], cols[1]) != 0) fail_msg("training differs with measurements:\n%s---\n%s", cols[0], cols[1]);
    assert_int_equal(count_lines(cols[0]), 5);
    snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/eval.csv", out[0]);
    read_text(path, text, sizeof text);
    assert_int_equal(strncmp(text, "step,exact_match,token_acc,eval_seconds\n5,", 42), 0);
    assert_int_equal(count_lines(text), 5); /* header + steps 5, 10, 15, 20 */
    assert_false(exists(out[1], "runs/copy-rope-seed1/eval.csv"));
    snprintf(path, sizeof path, "%s/report.md", out[0]);
    static char md[1 << 16];
    read_text(path, md, sizeof md);
    if (!strstr(md, "| steps to 0.99 |") || !strstr(md, "within 20 · 0/1 |") ||
        !strstr(md, "every 5 steps and at the last, 64 samples"))
        fail_msg("report.md:\n%s", md);
    snprintf(path, sizeof path, "%s/report.csv", out[0]);
    read_text(path, text, sizeof text);
    assert_non_null(strstr(text, ",steps_to_learn\n"));
    assert_non_null(strstr(text, ",-1\n"));
    snprintf(path, sizeof path, "%s/report.md", out[1]);
    read_text(path, md, sizeof md);
    assert_null(strstr(md, "steps to 0.99"));
}

/* The data file is found next to the executable's repository, else through $ROPEGRAD_DATA: a copy of the binary
 * outside the repository needs the variable, and says so. */
static void test_data_file_from_the_environment(void **state)
{
    char copy[600], data[PATH_MAX];
    snprintf(copy, sizeof copy, "%s/train_order_copy", tmpdir);
    copy_file(bin, copy);
    assert_int_equal(chmod(copy, 0755), 0);
    assert_non_null(realpath("data/eval_sets.h5", data));
    exe = copy;
    data_env = NULL;
    int rc = run_in(tmpdir, "--pos rope --steps 2 --print-config");
    if (rc != 2 || !strstr(logbuf, "ROPEGRAD_DATA")) fail_msg("without the variable: exit %d\n%s", rc, logbuf);
    data_env = data;
    rc = run_in(tmpdir, "--pos rope --steps 2 --print-config");
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "\"data\":\t\"%s\"", data);
    if (rc != 0 || !strstr(logbuf, want)) fail_msg("with ROPEGRAD_DATA: exit %d\n%s", rc, logbuf);
    exe = bin;
    data_env = NULL;
}

/* Options that do not apply to the mode are errors (the checkpoint's settings are used). */
static void test_options_that_do_not_apply_are_refused(void **state)
{
    char ckpt[600];
    snprintf(ckpt, sizeof ckpt, "%s/run/ckpt/copy-rope-seed1.h5", tmpdir);
    const char *bad[] = {"--eval %s --lr 1e-3", "--eval %s --steps 5", "--eval %s --task copy", "--eval %s --pos rope",
                         "--eval %s --seed 2", "--eval %s --ckpt-every 5", "--resume %s --batch 4",
                         "--resume %s --d-model 32", "--resume %s --seeds 2", "--resume %s --lr 1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[1024];
        snprintf(args, sizeof args, bad[i], ckpt);
        int rc = run("%s --quiet --out %s/na%zu", args, tmpdir, i);
        if (rc != 2) fail_msg("'%s' exited %d, want 2:\n%s", bad[i], rc, logbuf);
        if (!strstr(logbuf, "does not apply")) fail_msg("'%s': %s", bad[i], logbuf);
    }
}

/* --seed S runs one seed, --seeds N the seeds 1..N, --seeds LIST the listed ones. */
static void test_seed_options(void **state)
{
    struct { const char *flag; const char *want[3]; const char *not; } cases[] = {
        {"--seed 7", {"seed7"}, "seed1"}, {"--seeds 2", {"seed1", "seed2"}, "seed3"},
        {"--seeds 3,9", {"seed3", "seed9"}, "seed1"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[512], f[128];
        snprintf(out, sizeof out, "%s/seeds%zu", tmpdir, i);
        int rc = run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet %s --out %s", cases[i].flag, out);
        if (rc != 0) fail_msg("%s exited %d:\n%s", cases[i].flag, rc, logbuf);
        for (int k = 0; k < 3 && cases[i].want[k]; k++) {
            snprintf(f, sizeof f, "ckpt/copy-none-%s.h5", cases[i].want[k]);
            if (!exists(out, f)) fail_msg("%s: no %s", cases[i].flag, f);
        }
        snprintf(f, sizeof f, "ckpt/copy-none-%s.h5", cases[i].not);
        if (exists(out, f)) fail_msg("%s wrote %s", cases[i].flag, f);
    }
}

/* ------------------------------------------------------------------ outputs never mix */

static void test_folder_with_results_is_refused_unless_overwrite(void **state)
{
    char out[512], md[600], before[8192], after[8192];
    snprintf(out, sizeof out, "%s/run", tmpdir);
    snprintf(md, sizeof md, "%s/report.md", out);
    read_text(md, before, sizeof before);
    assert_int_equal(run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --out %s", out), 2);
    assert_non_null(strstr(logbuf, "already holds results"));
    read_text(md, after, sizeof after);
    assert_string_equal(before, after);
    assert_int_equal(run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --overwrite --out %s", out), 0);
}

static bool locked(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}

static void test_two_invocations_on_one_folder(void **state)
{
    char out[512], lock[600], loga[600], text[8192];
    snprintf(out, sizeof out, "%s/conc", tmpdir);
    snprintf(lock, sizeof lock, "%s/.train_order.lock", out);
    snprintf(loga, sizeof loga, "%s/log_a", tmpdir);
    pid_t a = start_bg(loga, "--pos rope --steps 1000 --batch 8 --test-lens 8 --rope-ext none --jobs 1 --quiet "
                       "--out %s", out);
    for (int i = 0; i < 3000 && !locked(lock); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!locked(lock)) fail_msg("the first invocation never took the lock %s", lock);
    /* a second invocation on the same folder, even with --overwrite, is refused while the first runs */
    int rc = run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --overwrite --out %s", out);
    if (rc != 1 || !strstr(logbuf, "in use by another train_order")) fail_msg("second invocation: %d\n%s", rc, logbuf);
    rc = run("--pos none --steps 2 --batch 2 --test-lens 8 --quiet --out %s", out);
    assert_int_not_equal(rc, 0);
    rc = wait_rc(a);
    read_text(loga, text, sizeof text);
    if (rc != 0) fail_msg("first invocation exited %d:\n%s", rc, text);
    /* its results are whole: one rope row, no row of the refused runs */
    char rows[2048];
    csv_rows(out, "rope", rows, sizeof rows);
    assert_int_equal(count_lines(rows), 1);
    csv_rows(out, "none", rows, sizeof rows);
    assert_int_equal(count_lines(rows), 0);
    assert_false(exists(out, "ckpt/copy-none-seed1.h5"));
    assert_true(tc_h5_attr(strcat(out, "/ckpt/copy-rope-seed1.h5"), "/", "step") == 1000);
}

/* ------------------------------------------------------------------ resume */

/* The lr column of train.csv at a step ("" if absent). */
static double csv_lr(const char *path, int step)
{
    char text[8192], key[32];
    read_text(path, text, sizeof text);
    snprintf(key, sizeof key, "\n%d,", step);
    char *p = strstr(text, key);
    if (!p) fail_msg("%s has no row for step %d:\n%s", path, step, text);
    double loss, lr;
    if (sscanf(p + strlen(key), "%lf,%lf", &loss, &lr) != 2) fail_msg("%s: bad row %d", path, step);
    return lr;
}

/* --resume continues with the checkpoint's own settings (learning rate, batch, schedule), writes a new checkpoint
 * and never replaces its source unless asked; the schedule continues (default) or restarts. */
static void test_resume_semantics(void **state)
{
    char out[512], ckpt[700], out2[512], ck2[700], csv[700];
    snprintf(out, sizeof out, "%s/resume", tmpdir);
    int rc = run("--task copy --pos rope --steps 4 --batch 8 --lr 5e-3 --test-lens 8 --rope-ext none --quiet "
                 "--jobs 1 --out %s", out);
    if (rc != 0) fail_msg("first run exited %d:\n%s", rc, logbuf);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 4);
    /* into its own folder: refused, the source untouched */
    assert_int_equal(run("--resume %s --steps 6 --test-lens 8 --quiet --out %s", ckpt, out), 2);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 4);
    /* continue: a new checkpoint; the schedule ends at step 4, steps 5-6 run at the final rate 0.1 * 5e-3 */
    snprintf(out2, sizeof out2, "%s/resume2", tmpdir);
    rc = run("--resume %s --steps 6 --test-lens 8 --rope-ext none --log-every 1 --quiet --out %s", ckpt, out2);
    if (rc != 0) fail_msg("--resume exited %d:\n%s", rc, logbuf);
    snprintf(ck2, sizeof ck2, "%s/ckpt/copy-rope-seed1.h5", out2);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 4);
    assert_true(tc_h5_attr(ck2, "/", "step") == 6);
    assert_true(tc_h5_attr(ck2, "/optim", "lr_peak") == 5e-3);
    assert_true(tc_h5_attr(ck2, "/optim", "lr_total") == 4);
    assert_true(tc_h5_attr(ck2, "/run", "steps") == 6);
    assert_true(tc_h5_attr(ck2, "/run", "batch") == 8);
    snprintf(csv, sizeof csv, "%s/runs/copy-rope-seed1/train.csv", out2);
    assert_true(fabs(csv_lr(csv, 5) - 5e-4) < 1e-12 && fabs(csv_lr(csv, 6) - 5e-4) < 1e-12);
    /* restart: a new warmup (4 steps, the checkpoint's) + cosine from step 4 to 8 */
    snprintf(out2, sizeof out2, "%s/resume3", tmpdir);
    rc = run("--resume %s --steps 8 --lr-schedule restart --test-lens 8 --rope-ext none --log-every 1 --quiet "
             "--out %s", ckpt, out2);
    if (rc != 0) fail_msg("--resume --lr-schedule restart exited %d:\n%s", rc, logbuf);
    snprintf(ck2, sizeof ck2, "%s/ckpt/copy-rope-seed1.h5", out2);
    assert_true(tc_h5_attr(ck2, "/optim", "lr_total") == 8);
    assert_true(tc_h5_attr(ck2, "/run", "lr_start") == 4);
    snprintf(csv, sizeof csv, "%s/runs/copy-rope-seed1/train.csv", out2);
    assert_true(fabs(csv_lr(csv, 5) - 5e-3 / 4) < 1e-12 && fabs(csv_lr(csv, 8) - 5e-3) < 1e-12);
    /* asked: --overwrite replaces the source */
    rc = run("--resume %s --steps 5 --test-lens 8 --rope-ext none --quiet --overwrite --out %s", ckpt, out);
    if (rc != 0) fail_msg("--resume --overwrite exited %d:\n%s", rc, logbuf);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 5);
}

/* The run's task, seed and train_len are rows of train_order's settings table, stored in /run (not /config, which is
 * the model's only): --eval and --resume take them from there (the defaults copy, seed 1, 16 would be wrong here). */
static void test_task_seed_train_len_in_run_group(void **state)
{
    char out[512], ck[700], out2[512], path[700], s[64];
    static char text[1 << 16];
    snprintf(out, sizeof out, "%s/rungroup", tmpdir);
    int rc = run("--task sort --pos rope --seed 7 --train-len 5 --steps 2 --batch 4 --test-lens 8 --rope-ext none "
                 "--eval-every 0 --quiet --jobs 1 --out %s", out);
    if (rc != 0) fail_msg("run exited %d:\n%s", rc, logbuf);
    snprintf(ck, sizeof ck, "%s/ckpt/sort-rope-seed7.h5", out);
    tc_h5_attr_str(ck, "/run", "task", s, sizeof s);
    assert_string_equal(s, "sort");
    assert_true(tc_h5_attr(ck, "/run", "seed") == 7);
    assert_true(tc_h5_attr(ck, "/run", "train_len") == 5);
    hid_t f = H5Fopen(ck, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    const char *gone[] = {"task", "L_train", "seed"};
    for (int i = 0; i < 3; i++)
        if (H5Aexists_by_name(f, "/config", gone[i], H5P_DEFAULT) != 0) fail_msg("/config %s is written", gone[i]);
    H5Fclose(f);
    const char *modes[] = {"--eval %s --test-lens 8 --rope-ext none --quiet --out %s",
                           "--resume %s --steps 3 --test-lens 8 --rope-ext none --quiet --out %s"};
    for (int i = 0; i < 2; i++) {
        snprintf(out2, sizeof out2, "%s/rungroup%d", tmpdir, i);
        rc = run(modes[i], ck, out2);
        if (rc != 0) fail_msg("%.8s exited %d:\n%s", modes[i], rc, logbuf);
        snprintf(path, sizeof path, "%s/report.csv", out2);
        read_text(path, text, sizeof text);
        if (!strstr(text, "\nsort,rope,") || !strstr(text, ",7,")) fail_msg("%.8s: report.csv:\n%s", modes[i], text);
    }
    snprintf(path, sizeof path, "%s/ckpt/sort-rope-seed7.h5", out2); /* the resumed run's */
    assert_true(tc_h5_attr(path, "/", "step") == 3);
    assert_true(tc_h5_attr(path, "/run", "train_len") == 5 && tc_h5_attr(path, "/run", "seed") == 7);
}

/* ------------------------------------------------------------------ hostile checkpoints */

typedef enum { SET_INT, SET_DOUBLE, SET_STR, DELETE_ATTR, DELETE_LINK } edit_kind;

/* Edits obj/name of the checkpoint at path: v for SET_INT and SET_DOUBLE, str for SET_STR; then seals it. */
static void edit(const char *path, const char *obj, const char *name, edit_kind k, double v, const char *str)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    if (k == DELETE_LINK) {
        assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    } else {
        hid_t o = H5Oopen(f, obj, H5P_DEFAULT);
        assert_true(o >= 0);
        if (H5Aexists(o, name) > 0) assert_true(H5Adelete(o, name) >= 0);
        if (k == SET_STR) {
            hid_t sp = H5Screate(H5S_SCALAR), t = H5Tcopy(H5T_C_S1);
            assert_true(H5Tset_size(t, strlen(str) + 1) >= 0);
            hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
            assert_true(H5Awrite(a, t, str) >= 0);
            H5Aclose(a);
            H5Tclose(t);
            H5Sclose(sp);
        } else if (k != DELETE_ATTR) {
            hid_t sp = H5Screate(H5S_SCALAR);
            hid_t t = k == SET_INT ? H5T_STD_I64LE : H5T_IEEE_F64LE;
            hid_t a = H5Acreate2(o, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
            int64_t i = (int64_t)v;
            assert_true(H5Awrite(a, k == SET_INT ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, k == SET_INT ?
                                 (void *)&i : (void *)&v) >= 0);
            H5Aclose(a);
            H5Sclose(sp);
        }
        H5Oclose(o);
    }
    H5Fclose(f);
    /* an edited file is refused by its digest until sealed again (docs/checkpoint.md, "Edited files"): seal it,
     * so that the value checks behind the digest are what is tested */
    assert_int_equal(rg_checkpoint_seal(path), RG_OK);
}

static void test_hostile_checkpoints_are_refused(void **state)
{
    char src[700];
    snprintf(src, sizeof src, "%s/resume/ckpt/copy-rope-seed1.h5", tmpdir);
    struct { const char *obj, *name; edit_kind k; double v; const char *str, *mode, *says; } cases[] = {
        {"/run", "batch", DELETE_ATTR, 0, NULL, "--resume", "/run batch is missing"},
        {"/run", "batch", SET_INT, 0, NULL, "--resume", "/run batch = 0"},
        {"/run", "batch", SET_INT, 1e6, NULL, "--resume", "/run batch = 1000000"},
        {"/run", "batch", SET_DOUBLE, 8, NULL, "--eval", "/run batch is not an integer"},
        {"/run", "random_positions", DELETE_ATTR, 0, NULL, "--resume", "random_positions is missing"},
        {"/run", "micro_batches", SET_DOUBLE, 2, NULL, "--resume", "micro_batches is not an integer"},
        {"/run", "max_position", SET_INT, -1, NULL, "--resume", "max_position = -1"},
        {"/run", "max_position", SET_INT, 2147483648.0, NULL, "--resume", "max_position = 2147483648"},
        /* task, train_len and seed: rows of the settings table in /run, validated like the others */
        {"/run", "train_len", SET_INT, 100000, NULL, "--resume", "/run train_len = 100000"},
        {"/run", "train_len", SET_INT, 2147483647, NULL, "--eval", "/run train_len = 2147483647"},
        {"/run", "train_len", DELETE_ATTR, 0, NULL, "--eval", "/run train_len is missing"},
        {"/run", "seed", SET_INT, 0, NULL, "--resume", "/run seed = 0 is outside the limits of seed"},
        {"/run", "seed", SET_INT, 1000001, NULL, "--eval", "/run seed = 1000001"},
        {"/run", "seed", SET_STR, 0, "1", "--eval", "/run seed is not an integer"},
        {"/run", "task", DELETE_ATTR, 0, NULL, "--resume", "/run task is missing"},
        {"/run", "task", SET_INT, 1, NULL, "--eval", "/run task is not a string"},
        {"/run", "task", SET_STR, 0, "fly", "--eval", "/run task = 'fly' is not one value of --task"},
        {"/run", "task", SET_STR, 0, "all", "--resume", "/run task = 'all' is not one value of --task"},
        {"/run", "task", SET_STR, 0, "copy,sort", "--eval", "/run task = 'copy,sort' is not one value"},
        {"/config", "n_layers", SET_INT, 4096, NULL, "--eval", "n_layers 4096"},
        {"/config", "d_model", SET_INT, 4096, NULL, "--eval", "d_model 4096"},
        {"/", "step", SET_INT, -1, NULL, "--resume", "'step' on / = -1"},
        {"/optim", "lr_total", SET_INT, 4294967351.0, NULL, "--resume", "'lr_total' on /optim = 4294967351"},
        {"/optim", "lr_total", SET_INT, 0, NULL, "--resume", "lr_total = 0"},
        {"/optim", "lr_peak", SET_DOUBLE, -1, NULL, "--resume", "'lr_peak' on /optim = -1"},
        {NULL, "/rng/positions", DELETE_LINK, 0, NULL, "--resume", "/rng/positions is missing"},
        {NULL, "/rng/data", DELETE_LINK, 0, NULL, "--resume", "/rng/data is missing"},
        /* values only the full load sees: refused before anything is written too (used to exit 1 after writing
         * settings.json, ckpt/ and runs/ into --out) */
        {NULL, "/params/ln_f.bias", DELETE_LINK, 0, NULL, "--eval", "missing dataset /params/ln_f.bias"},
        {NULL, "/optim/exp_avg/ln_f.bias", DELETE_LINK, 0, NULL, "--resume",
         "missing dataset /optim/exp_avg/ln_f.bias"},
        {"/optim", "eps", SET_DOUBLE, 0, NULL, "--resume", "/optim eps = 0"},
        {"/run", "steps_to_learn", SET_INT, 1e9, NULL, "--eval", "steps_to_learn is not -1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char ck[700];
        snprintf(ck, sizeof ck, "%s/hostile%zu.h5", tmpdir, i);
        copy_file(src, ck);
        edit(ck, cases[i].obj, cases[i].name, cases[i].k, cases[i].v, cases[i].str);
        int rc = run("%s %s --test-lens 8 --quiet --out %s/hostile_out%zu", cases[i].mode, ck, tmpdir, i);
        if (rc != 2) fail_msg("case %zu (%s %s): exit %d, want 2:\n%s", i, cases[i].obj ? cases[i].obj : "",
                              cases[i].name, rc, logbuf);
        if (!strstr(logbuf, ck) && !strstr(logbuf, "hostile"))
            fail_msg("case %zu: the message does not name the checkpoint:\n%s", i, logbuf);
        if (!strstr(logbuf, cases[i].says)) fail_msg("case %zu: want '%s' in:\n%s", i, cases[i].says, logbuf);
        char out[600];
        snprintf(out, sizeof out, "%s/hostile_out%zu", tmpdir, i);
        struct stat s;
        if (stat(out, &s) == 0) fail_msg("case %zu created %s", i, out);
    }
    /* random positions from [0, 10) for sequences of 35 tokens (used to abort in pos.c) */
    char ck[700];
    snprintf(ck, sizeof ck, "%s/hostile_rp.h5", tmpdir);
    copy_file(src, ck);
    edit(ck, "/run", "random_positions", SET_INT, 1, NULL);
    edit(ck, "/run", "max_position", SET_INT, 10, NULL);
    assert_int_equal(run("--resume %s --test-lens 8 --quiet --out %s/hostile_rp", ck, tmpdir), 2);
    if (!strstr(logbuf, ck) || !strstr(logbuf, "need more random positions than [0, 10)")) fail_msg("%s", logbuf);
    /* a negative beta: refused by the checkpoint's own validation, before anything is built */
    snprintf(ck, sizeof ck, "%s/hostile_beta.h5", tmpdir);
    copy_file(src, ck);
    edit(ck, "/optim", "beta1", SET_DOUBLE, -0.5, NULL);
    assert_int_equal(run("--resume %s --steps 6 --test-lens 8 --quiet --out %s/hostile_beta", ck, tmpdir), 2);
    if (!strstr(logbuf, ck) || !strstr(logbuf, "'beta1' on /optim = -0.5")) fail_msg("%s", logbuf);
    /* NaN weights: refused at load, naming the checkpoint and the dataset */
    snprintf(ck, sizeof ck, "%s/hostile_nan.h5", tmpdir);
    copy_file(src, ck);
    hid_t f = H5Fopen(ck, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "/params/lm_head.weight", H5P_DEFAULT);
    assert_true(f >= 0 && d >= 0);
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    float *nan = malloc(sizeof(float) * (size_t)n);
    for (hssize_t i = 0; i < n; i++) nan[i] = NAN;
    assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, nan) >= 0);
    free(nan);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    assert_int_equal(rg_checkpoint_seal(ck), RG_OK);
    int rc = run("--resume %s --steps 6 --test-lens 8 --quiet --out %s/hostile_nan", ck, tmpdir);
    if (rc != 2 || !strstr(logbuf, ck) || !strstr(logbuf, "holds nan")) fail_msg("NaN weights: exit %d\n%s", rc, logbuf);
    char nan_out[600];
    snprintf(nan_out, sizeof nan_out, "%s/hostile_nan", tmpdir);
    struct stat st;
    if (stat(nan_out, &st) == 0) fail_msg("NaN weights: %s was created", nan_out);
}

/* ------------------------------------------------------------------ --config */

static void test_config_file_and_print_config(void **state)
{
    char cfg[600], out[600], ck[700];
    snprintf(cfg, sizeof cfg, "%s/cfg.json", tmpdir);
    FILE *f = fopen(cfg, "w");
    assert_non_null(f);
    fprintf(f, "{\"pos\": \"rope\", \"steps\": 3, \"batch\": 4, \"d_model\": 32, \"n_heads\": 2,\n"
               " \"test_lens\": [8], \"rope_ext\": \"none\", \"beta2\": 0.95, \"random_positions\": true}\n");
    fclose(f);
    assert_int_equal(run("--config %s --batch 6 --print-config", cfg), 0);
    const char *want[] = {"\"batch\":\t6", "\"d_model\":\t32", "\"beta2\":\t0.95", "\"test_lens\":\t\"8\"",
                          "\"random_positions\":\ttrue", "\"pos\":\t\"rope\""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(logbuf, want[i])) fail_msg("--print-config lacks %s:\n%s", want[i], logbuf);
    /* the printed settings read back as a config give the same settings */
    char cfg2[600];
    static char first[sizeof logbuf];
    snprintf(cfg2, sizeof cfg2, "%s/cfg2.json", tmpdir);
    snprintf(first, sizeof first, "%s", logbuf);
    f = fopen(cfg2, "w");
    fputs(logbuf, f);
    fclose(f);
    assert_int_equal(run("--config %s --print-config", cfg2), 0);
    assert_string_equal(first, logbuf);
    /* seeds: a count, a list, and a list of one */
    const char *seeds[][2] = {{"3", "\"seeds\":\t\"1,2,3\""}, {"[4, 9]", "\"seeds\":\t\"4,9\""},
                              {"[5]", "\"seed\":\t5"}};
    for (int i = 0; i < 3; i++) {
        f = fopen(cfg2, "w");
        fprintf(f, "{\"seeds\": %s}\n", seeds[i][0]);
        fclose(f);
        assert_int_equal(run("--config %s --print-config", cfg2), 0);
        if (!strstr(logbuf, seeds[i][1])) fail_msg("seeds %s: want %s in\n%s", seeds[i][0], seeds[i][1], logbuf);
    }
    /* a run with it: the model and the settings are in the checkpoint (random positions: the run is rope+rand) */
    snprintf(out, sizeof out, "%s/cfgrun", tmpdir);
    int rc = run("--config %s --quiet --out %s", cfg, out);
    if (rc != 0) fail_msg("--config run exited %d:\n%s", rc, logbuf);
    snprintf(ck, sizeof ck, "%s/ckpt/copy-rope-rand-seed1.h5", out);
    assert_true(tc_h5_attr(ck, "/config", "d_model") == 32);
    assert_true(tc_h5_attr(ck, "/run", "batch") == 4);
    assert_true(tc_h5_attr(ck, "/run", "random_positions") == 1);
    /* unknown keys and bad values are refused */
    f = fopen(cfg, "w");
    fprintf(f, "{\"stepz\": 3}\n");
    fclose(f);
    assert_int_equal(run("--config %s --print-config", cfg), 2);
    assert_non_null(strstr(logbuf, "stepz: unknown setting"));
    f = fopen(cfg, "w");
    fprintf(f, "{\"steps\": 0}\n");
    fclose(f);
    assert_int_equal(run("--config %s --print-config", cfg), 2);
    f = fopen(cfg, "w");
    fprintf(f, "{\"steps\": 3,\n");
    fclose(f);
    assert_int_equal(run("--config %s --print-config", cfg), 2);
    /* files that cJSON alone would accept with a part of them dropped, and a folder: refused, naming the file */
    static const struct { const char *text; size_t len; const char *msg; } bad[] = {
        {"{\"steps\": 3} {\"steps\": 5}", 0, "syntax error"}, {"{\"steps\": 3} garbage", 0, "syntax error"},
        {"{\"steps\": 3}\0{\"steps\": 5}", 25, "NUL byte"}, {"{\"steps\": 3, \"steps\": 5}", 0, "given twice"},
        {"{\"seeds\": [5], \"seed\": 6}", 0, "given twice"}, {"{\"seed\": 3, \"seeds\": 4}", 0, "seed and seeds"},
        {"{\"task\": \"copy\\u0000sort\"}", 0, "\\u0000 escape at byte 14"},
        {"{\"steps\\u0000x\": 20}", 0, "\\u0000 escape"},
        {"{\"steps\": \"20\"}", 0, "a JSON string, but --steps takes a number"},
        {"{\"out\": 5}", 0, "a JSON number, but --out takes a string"},
        {"{\"quiet\": 1}", 0, "takes true or false"}, {"{\"lr\": null}", 0, "a JSON null"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fopen(cfg, "wb");
        fwrite(bad[i].text, 1, bad[i].len ? bad[i].len : strlen(bad[i].text), f);
        fclose(f);
        int rc = run("--config %s --print-config", cfg);
        if (rc != 2 || !strstr(logbuf, bad[i].msg) || !strstr(logbuf, cfg))
            fail_msg("config '%s': exit %d, want 2 and '%s' naming the file:\n%s", bad[i].text, rc, bad[i].msg, logbuf);
    }
    assert_int_equal(run("--config %s --print-config", tmpdir), 2);
    assert_non_null(strstr(logbuf, "Is a directory"));
    /* an escaped backslash before "u0000" is text, not a NUL */
    f = fopen(cfg, "w");
    fprintf(f, "{\"out\": \"a\\\\u0000b\"}\n");
    fclose(f);
    assert_int_equal(run("--config %s --print-config", cfg), 0);
    assert_non_null(strstr(logbuf, "\"out\":\t\"a\\\\u0000b\""));
}

/* A FIFO given where a file is read (--config, --eval, --data) is refused or read as empty: never a hang. */
static void test_fifo_inputs_do_not_block(void **state)
{
    char fifo[512], out[512], log[512];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    snprintf(out, sizeof out, "%s/fifo_out", tmpdir);
    snprintf(log, sizeof log, "%s/fifo_log", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *cases[] = {"--config %s --print-config", "--eval %s --out %s --quiet",
                           "--data %s --pos rope --steps 2 --batch 4 --test-lens 8 --out %s --quiet"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pid_t pid = start_bg(log, cases[i], fifo, out);
        int st = 0, waited = 0;
        while (waitpid(pid, &st, WNOHANG) == 0 && waited < 300) {
            usleep(100000);
            waited++;
        }
        if (waited == 300) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            fail_msg("'%s' with a FIFO still runs after 30 s", cases[i]);
        }
        read_text(log, logbuf, sizeof logbuf);
        if (!WIFEXITED(st) || WEXITSTATUS(st) == 0)
            fail_msg("'%s' with a FIFO: status %d, want a refusal:\n%s", cases[i], st, logbuf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_bad_flags_exit_2_and_write_nothing, reset),
        cmocka_unit_test_setup(test_short_run_writes_everything_and_eval_reproduces, reset),
        cmocka_unit_test_setup(test_report_replot_and_compare, reset),
        cmocka_unit_test_setup(test_variants_grid, reset),
        cmocka_unit_test_setup(test_eval_every, reset),
        cmocka_unit_test_setup(test_options_that_do_not_apply_are_refused, reset),
        cmocka_unit_test_setup(test_data_file_from_the_environment, reset),
        cmocka_unit_test_setup(test_seed_options, reset),
        cmocka_unit_test_setup(test_folder_with_results_is_refused_unless_overwrite, reset),
        cmocka_unit_test_setup(test_two_invocations_on_one_folder, reset),
        cmocka_unit_test_setup(test_resume_semantics, reset),
        cmocka_unit_test_setup(test_task_seed_train_len_in_run_group, reset),
        cmocka_unit_test_setup(test_hostile_checkpoints_are_refused, reset),
        cmocka_unit_test_setup(test_config_file_and_print_config, reset),
        cmocka_unit_test_setup(test_fifo_inputs_do_not_block, reset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
