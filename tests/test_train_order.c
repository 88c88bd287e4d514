/* test_train_order.c: end-to-end tests of examples/train_order (the experiment program): a short run with tiny
 * settings writes every output file; --eval of a saved checkpoint reproduces the run's own numbers; bad flags exit
 * with status 2 and write nothing. The binary is found through RG_BUILD_DIR (set by tests/run.sh) or build/. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char bin[1024];
static char tmpdir[256];

static int setup(void **state)
{
    const char *bd = getenv("RG_BUILD_DIR");
    snprintf(bin, sizeof bin, "%s/examples/train_order", bd && *bd ? bd : "build");
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "test_train_order: %s is missing (make all)\n", bin);
        return -1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rg_train_order_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs the program with the arguments (a shell-quoted string, no quotes inside) and returns its exit status;
 * its output goes to tmpdir/log. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "RG_KEEP_BLAS_CORE=1 '%s' %s > '%s/log' 2>&1", bin, args, tmpdir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int exists(const char *dir, const char *name)
{
    char p[1024];
    struct stat s;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &s) == 0 && s.st_size > 0;
}

static void test_bad_flags_exit_2_and_write_nothing(void **state)
{
    const char *bad[] = {"--task bogus", "--pos rope,fourier", "--steps 0", "--steps 12x", "--lr -1",
                         "--rope-ext zzz", "--test-lens 8,,", "--jobs 0", "--no-such-flag", "--seeds",
                         "--eval /nonexistent.h5", "--resume a.h5 --eval b.h5", "extra-argument",
                         /* values that used to fail only after training (or abort): checked up front now */
                         "--test-lens 8,5", "--data tests/fixtures/attn.h5", "--eval tests/fixtures/attn.h5",
                         "--pos learned --train-len 79", "--pos rope --random-positions --train-len 79"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[1024], out[512];
        snprintf(out, sizeof out, "%s/bad%zu", tmpdir, i);
        /* tiny settings first (the bad value after them wins): a value wrongly accepted fails in seconds instead
         * of starting a 3000-step grid */
        snprintf(args, sizeof args, "--steps 2 --batch 2 --test-lens 8 --rope-ext none --quiet %s --out %s", bad[i],
                 out);
        int rc = run(args);
        if (rc != 2) fail_msg("'%s' exited %d, want 2", bad[i], rc);
        struct stat s;
        if (stat(out, &s) == 0) fail_msg("'%s' created %s", bad[i], out);
    }
    /* the message says what is wrong and what is allowed */
    char args[512];
    snprintf(args, sizeof args, "--pos fourier --out %s/badmsg", tmpdir);
    assert_int_equal(run(args), 2);
    char log[512], buf[4096] = "";
    snprintf(log, sizeof log, "%s/log", tmpdir);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "fourier"));
    assert_non_null(strstr(buf, "allowed"));
}

/* The exact_match and token_acc of the rows of report.csv for one encoding, as "ext n em acc" lines. */
static void csv_rows(const char *dir, const char *enc, char *out, size_t cap)
{
    char p[1024], line[512];
    snprintf(p, sizeof p, "%s/report.csv", dir);
    FILE *f = fopen(p, "r");
    if (!f) fail_msg("no %s", p);
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        char task[32], e[32], ext[32];
        int seed, n;
        long long steps;
        double loss, secs, em, acc;
        if (sscanf(line, "%31[^,],%31[^,],%31[^,],%d,%lld,%lf,%lf,%d,%lf,%lf", task, e, ext, &seed, &steps, &loss,
                   &secs, &n, &em, &acc) == 10 && strcmp(e, enc) == 0) {
            char row[128];
            snprintf(row, sizeof row, "%s %d %.6g %.6g\n", ext, n, em, acc);
            strncat(out, row, cap - strlen(out) - 1);
        }
    }
    fclose(f);
}

static void test_short_run_writes_everything_and_eval_reproduces(void **state)
{
    char out[512], args[2048];
    snprintf(out, sizeof out, "%s/run", tmpdir);
    snprintf(args, sizeof args, "--task copy --pos rope,learned --steps 30 --batch 8 --test-lens 8,24 "
             "--rope-ext pi --jobs 2 --quiet --out %s", out);
    int rc = run(args);
    if (rc != 0) fail_msg("short run exited %d (log in %s/log)", rc, tmpdir);
    const char *files[] = {"report.md", "report.csv", "report.json", "ckpt/copy-rope-seed1.h5",
                           "ckpt/copy-learned-seed1.h5"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!exists(out, files[i])) fail_msg("the run did not write %s/%s", out, files[i]);
    if (system("command -v gnuplot >/dev/null 2>&1") == 0 && !exists(out, "extrapolation.svg"))
        fail_msg("gnuplot is installed but %s/extrapolation.svg is missing", out);
    char rows[2048];
    csv_rows(out, "rope", rows, sizeof rows);
    /* rope and rope+pi at n = 8 and 24 */
    int lines = 0;
    for (char *p = rows; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 4);

    char out2[512], ckpt[600];
    snprintf(out2, sizeof out2, "%s/eval", tmpdir);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    snprintf(args, sizeof args, "--eval %s --test-lens 8,24 --rope-ext pi --quiet --out %s", ckpt, out2);
    rc = run(args);
    if (rc != 0) fail_msg("--eval exited %d (log in %s/log)", rc, tmpdir);
    char rows2[2048];
    csv_rows(out2, "rope", rows2, sizeof rows2);
    if (strcmp(rows, rows2) != 0) fail_msg("--eval differs from the run:\nrun:\n%seval:\n%s", rows, rows2);
}

/* --resume continues with the checkpoint's own settings (learning rate, batch, schedule), not the defaults, and
 * extends the schedule to the new --steps. */
static void test_resume_uses_the_checkpoint_settings(void **state)
{
    char out[512], args[2048], ckpt[700];
    snprintf(out, sizeof out, "%s/resume", tmpdir);
    snprintf(args, sizeof args, "--task copy --pos rope --steps 4 --batch 8 --lr 5e-3 --test-lens 8 --rope-ext none "
             "--quiet --jobs 1 --out %s", out);
    int rc = run(args);
    if (rc != 0) fail_msg("first run exited %d (log in %s/log)", rc, tmpdir);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 4);
    snprintf(args, sizeof args, "--resume %s --steps 6 --test-lens 8 --rope-ext none --quiet --out %s", ckpt, out);
    rc = run(args);
    if (rc != 0) fail_msg("--resume exited %d (log in %s/log)", rc, tmpdir);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 6);
    assert_true(tc_h5_attr(ckpt, "/optim", "lr_peak") == 5e-3);
    assert_true(tc_h5_attr(ckpt, "/optim", "lr_total") == 6);
    assert_true(tc_h5_attr(ckpt, "/run", "batch") == 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_flags_exit_2_and_write_nothing),
        cmocka_unit_test(test_short_run_writes_everything_and_eval_reproduces),
        cmocka_unit_test(test_resume_uses_the_checkpoint_settings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
