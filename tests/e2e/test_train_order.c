/* test_train_order.c: end-to-end tests of examples/train_order's runs and reports, each driving the binary
 * (fork/exec, no shell; the harness in eng_harness.h) and checking its files:
 *   - a short run writes the report, the checkpoints and runs/<run>/train.csv, from any folder (the data file is
 *     found next to the executable's repository), with generated test lengths; --eval reproduces its numbers and
 *     writes no checkpoint or training log;
 *   - the final report is not marked partial and shows the resolved settings, the learning-rate schedule and the
 *     generated test lengths; --replot CSV (refused into another report's folder unless --overwrite) and
 *     --compare A B through the program, and their option hygiene;
 *   - --variants all: the rope θ=500k and +rand rows (not for none), fixed --rope-scaling factors, their files and
 *     labels; --eval of a variant's checkpoint keeps its label; conflicting variant options exit 2;
 *   - --eval-every: runs/<run>/eval.csv at every E steps, the report's steps-to-0.99 column, and training that is
 *     bit for bit the same with and without the measurements;
 *   - the data file through $ROPEGRAD_DATA for a binary outside the repository;
 *   - a resume writes a new checkpoint, never replaces its source unless --overwrite, and continues or restarts the
 *     learning-rate schedule as asked; the run's task, seed and train_len in the checkpoint's /run group.
 * Command lines and hostile input: test_train_order_input.c. */
#define _DEFAULT_SOURCE /* realpath */
#include "eng_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ a short run, from another folder */

static void test_short_run_writes_everything_and_eval_reproduces(void **state)
{
    char out[512], ckpt[600], csv[700], text[4096];
    snprintf(out, sizeof out, "%s/run", th_tmpdir);
    /* run from th_tmpdir (not the repository) without --data; n = 20 is not in the data file: generated */
    int rc = th_run_in(th_tmpdir, "--task copy --pos rope,learned --steps 30 --batch 8 --test-lens 8,20 --rope-ext pi "
                    "--jobs 2 --log-every 10 --out %s", out);
    if (rc != 0) fail_msg("short run exited %d:\n%s", rc, th_logbuf);
    assert_non_null(strstr(th_logbuf, "n=20 (generated set)"));
    assert_non_null(strstr(th_logbuf, "copy/rope/seed1: step 30/30, loss"));
    const char *files[] = {"report.md", "report.csv", "report.json", "ckpt/copy-rope-seed1.h5",
                           "ckpt/copy-learned-seed1.h5", "runs/copy-rope-seed1/train.csv", "settings.json",
                           "runs/copy-learned-seed1/train.csv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!th_exists(out, files[i])) fail_msg("the run did not write %s/%s", out, files[i]);
    snprintf(csv, sizeof csv, "%s/runs/copy-rope-seed1/train.csv", out);
    th_read_text(csv, text, sizeof text);
    const char *head = "step,loss,lr,grad_norm,tokens_per_s,elapsed_s\n10,";
    assert_int_equal(strncmp(text, head, strlen(head)), 0);
    assert_int_equal(th_count_lines(text), 4); /* header + steps 10, 20, 30 */
    assert_non_null(strstr(text, "\n30,"));
    char rows[2048];
    th_csv_rows(out, "rope", rows, sizeof rows);
    assert_int_equal(th_count_lines(rows), 4); /* rope and rope+pi at n = 8 and 20 */

    char out2[512];
    snprintf(out2, sizeof out2, "%s/eval", th_tmpdir);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    rc = th_run("--eval %s --test-lens 8,20 --rope-ext pi --quiet --out %s", ckpt, out2);
    if (rc != 0) fail_msg("--eval exited %d:\n%s", rc, th_logbuf);
    char rows2[2048];
    th_csv_rows(out2, "rope", rows2, sizeof rows2);
    if (strcmp(rows, rows2) != 0) fail_msg("--eval differs from the run:\nrun:\n%seval:\n%s", rows, rows2);
    if (th_exists(out2, "ckpt") || th_exists(out2, "runs"))
        fail_msg("--eval made %s/ckpt or %s/runs, but it writes no checkpoint and no training log", out2, out2);
}

/* The short run's report, then --replot and --compare on it (and on its --eval twin). */
static void test_report_replot_and_compare(void **state)
{
    char out[512], md[600], re[512], csv[600], json[600];
    static char text[1 << 16];
    snprintf(out, sizeof out, "%s/run", th_tmpdir);
    snprintf(md, sizeof md, "%s/report.md", out);
    th_read_text(md, text, sizeof text);
    const char *want[] = {"# Length extrapolation report\n", "## Settings", "\"test_lens\":\t\"8,20\"",
                          "learning-rate schedule: new: warmup", "copy: test sets generated (not in the data file; "
                          "same generator and seed rule): n=20\n"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(text, want[i])) fail_msg("report.md lacks '%s':\n%s", want[i], text);
    assert_null(strstr(text, "PARTIAL"));
    snprintf(json, sizeof json, "%s/report.json", out);
    th_read_text(json, text, sizeof text);
    assert_non_null(strstr(text, "\"generated_test_lengths\""));
    assert_non_null(strstr(text, "\"partial\":\tfalse"));

    snprintf(csv, sizeof csv, "%s/report.csv", out);
    snprintf(re, sizeof re, "%s/replot", th_tmpdir);
    int rc = th_run("--replot %s --out %s --quiet", csv, re);
    if (rc != 0) fail_msg("--replot exited %d:\n%s", rc, th_logbuf);
    const char *files[] = {"extrapolation.dat", "extrapolation.gp", "curves_copy.dat", "curves_copy.gp"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!th_exists(re, files[i])) fail_msg("--replot did not write %s/%s", re, files[i]);
    rc = th_run("--replot %s --quiet", csv); /* default: into the CSV's own folder */
    if (rc != 0 || !th_exists(out, "extrapolation.gp")) fail_msg("--replot into its folder exited %d:\n%s", rc, th_logbuf);
    /* another report's folder: refused (its plots would no longer match its report) unless --overwrite; a CSV
     * that does not load makes no folder */
    char other[600], none[600];
    snprintf(other, sizeof other, "%s/eval", th_tmpdir);
    static char before[1 << 14], after[1 << 14];
    char dat[700];
    snprintf(dat, sizeof dat, "%s/extrapolation.dat", other);
    th_read_text(dat, before, sizeof before);
    assert_true(before[0]);
    rc = th_run("--replot %s --out %s --quiet", csv, other);
    if (rc != 2 || !strstr(th_logbuf, "is not the folder of")) fail_msg("--replot into %s: %d\n%s", other, rc, th_logbuf);
    th_read_text(dat, after, sizeof after);
    assert_string_equal(before, after);
    rc = th_run("--replot %s --out %s --overwrite --quiet", csv, other);
    th_read_text(dat, after, sizeof after);
    if (rc != 0 || !strcmp(before, after)) fail_msg("--replot --overwrite: %d, or the plot data is unchanged\n%s", rc, th_logbuf);
    snprintf(none, sizeof none, "%s/replot_none", th_tmpdir);
    rc = th_run("--replot %s.missing --out %s --quiet", csv, none);
    if (rc != 1 || th_exists(th_tmpdir, "replot_none")) fail_msg("a failed --replot: %d, or it made %s\n%s", rc, none, th_logbuf);
    snprintf(json, sizeof json, "%s/eval/report.json", th_tmpdir);
    rc = th_run("--compare %s %s", csv, json);
    if (rc != 0) fail_msg("--compare exited %d:\n%s", rc, th_logbuf);
    if (!strstr(th_logbuf, "rope+pi") || !strstr(th_logbuf, "A: ") || !strstr(th_logbuf, "cells whose intervals do not"))
        fail_msg("--compare printed:\n%s", th_logbuf);

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
        rc = th_run(cases[i].args, csv, csv);
        if (rc != cases[i].rc || !strstr(th_logbuf, cases[i].msg))
            fail_msg("'%s' exited %d (want %d):\n%s", cases[i].args, rc, cases[i].rc, th_logbuf);
    }
}

/* --variants all on a tiny grid: which runs exist, what they are called, and that --eval of a variant's checkpoint
 * reports it under the same label. */
static void test_variants_grid(void **state)
{
    char out[512], csv[600], ck[600];
    static char text[1 << 16];
    snprintf(out, sizeof out, "%s/variants", th_tmpdir);
    int rc = th_run("--task copy --pos none,alibi,rope --variants all --steps 4 --batch 4 --test-lens 8,20 "
                 "--rope-scaling yarn,yarn:2 --jobs 2 --quiet --out %s", out);
    if (rc != 0) fail_msg("variants grid exited %d:\n%s", rc, th_logbuf);
    const char *files[] = {"ckpt/copy-none-seed1.h5", "ckpt/copy-alibi-seed1.h5", "ckpt/copy-rope-seed1.h5",
                           "ckpt/copy-rope-theta500k-seed1.h5", "ckpt/copy-alibi-rand-seed1.h5",
                           "ckpt/copy-rope-rand-seed1.h5", "runs/copy-rope-theta500k-seed1/train.csv",
                           "runs/copy-alibi-rand-seed1/train.csv", "ckpt/copy-rope-bf16angles-seed1.h5"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!th_exists(out, files[i])) fail_msg("the grid did not write %s/%s", out, files[i]);
    assert_false(th_exists(out, "ckpt/copy-none-rand-seed1.h5")); /* NoPE reads no positions */
    assert_false(th_exists(out, "ckpt/copy-alibi-theta500k-seed1.h5"));
    assert_false(th_exists(out, "ckpt/copy-alibi-bf16angles-seed1.h5")); /* bf16 angles: RoPE's only */
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    th_read_text(csv, text, sizeof text);
    const char *rows[] = {"copy,rope,theta500k,none,1,", "copy,rope,theta500k,yarn:2,1,", "copy,alibi,rand,none,1,",
                          "copy,rope,rand,yarn,1,", "copy,rope,base,yarn:2,1,", "copy,none,base,none,1,",
                          "copy,rope,bf16angles,yarn,1,"};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (!strstr(text, rows[i])) fail_msg("report.csv lacks '%s':\n%s", rows[i], text);
    assert_int_equal(th_count_lines(text), 1 + 2 * (3 + 4 * 3)); /* none, alibi, alibi+rand; 4 rope runs x 3 rows */
    snprintf(csv, sizeof csv, "%s/report.md", out);
    th_read_text(csv, text, sizeof text);
    const char *labels[] = {"| rope θ=500k |", "| alibi+rand |", "| rope+rand+yarn:2 |", "| rope θ=500k+yarn |",
                            "| rope bf16 angles |", "| rope bf16 angles+yarn:2 |"};
    for (size_t i = 0; i < sizeof labels / sizeof *labels; i++)
        if (!strstr(text, labels[i])) fail_msg("report.md lacks '%s'", labels[i]);
    /* a variant's checkpoint evaluated alone keeps its variant */
    const char *ckpts[] = {"copy-rope-theta500k-seed1", "copy-alibi-rand-seed1", "copy-rope-bf16angles-seed1"};
    const char *want[] = {"copy,rope,theta500k,none,1,", "copy,alibi,rand,none,1,", "copy,rope,bf16angles,none,1,"};
    for (int i = 0; i < 3; i++) {
        snprintf(ck, sizeof ck, "%s/ckpt/%s.h5", out, ckpts[i]);
        rc = th_run("--eval %s --test-lens 8 --rope-ext none --quiet --out %s/ev%d", ck, th_tmpdir, i);
        if (rc != 0) fail_msg("--eval %s exited %d:\n%s", ck, rc, th_logbuf);
        snprintf(csv, sizeof csv, "%s/ev%d/report.csv", th_tmpdir, i);
        th_read_text(csv, text, sizeof text);
        if (!strstr(text, want[i])) fail_msg("--eval %s:\n%s", ck, text);
    }
    /* conflicting or misplaced variant settings */
    struct { const char *args, *msg; } bad[] = {
        {"--variants rand --random-positions", "--random-positions with --variants"},
        {"--variants all --rope-theta 500000", "--rope-theta 500000 with --variants theta500k"},
        {"--variants fast", "--variants: 'fast' is not valid"},
        {"--rope-angles bf16 --variants base,bf16angles", "--rope-angles bf16 with --random-positions or --variants"},
        {"--rope-angles bf16 --rope-theta 500000", "--rope-angles bf16 with --rope-theta 500000"},
        {"--rope-angles bf8", "--rope-angles: 'bf8' is not valid"},
        {"--rope-scaling yarn --rope-ext pi", "--rope-scaling and --rope-ext together"},
        {"--rope-scaling yarn:0.5", "--rope-scaling: 'yarn:0.5' is not valid"},
        {"--rope-scaling yarn,yarn", "--rope-scaling: 'yarn,yarn' is not valid"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = th_run("%s --steps 2 --quiet --out %s/bad%zu", bad[i].args, th_tmpdir, i);
        if (rc != 2 || !strstr(th_logbuf, bad[i].msg)) fail_msg("'%s' exited %d:\n%s", bad[i].args, rc, th_logbuf);
    }
    snprintf(ck, sizeof ck, "%s/ckpt/copy-rope-seed1.h5", out);
    rc = th_run("--eval %s --variants all --quiet --out %s/bad_eval", ck, th_tmpdir);
    if (rc != 2 || !strstr(th_logbuf, "--variants does not apply with --eval")) fail_msg("exit %d:\n%s", rc, th_logbuf);
}

/* The first four columns (step, loss, lr, grad_norm) of a train.csv. */
static void train_columns(const char *path, char *out, size_t cap)
{
    static char text[1 << 14];
    th_read_text(path, text, sizeof text);
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
        snprintf(out[i], sizeof out[i], "%s/learn%d", th_tmpdir, i);
        int rc = th_run("--pos rope --steps 20 --batch 4 --test-lens 8 --rope-scaling none --log-every 5 "
                     "--eval-every %d --quiet --out %s", i ? 0 : 5, out[i]);
        if (rc != 0) fail_msg("--eval-every %d exited %d:\n%s", i ? 0 : 5, rc, th_logbuf);
        snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/train.csv", out[i]);
        train_columns(path, cols[i], sizeof cols[i]);
    }
    if (strcmp(cols[0], cols[1]) != 0) fail_msg("training differs with measurements:\n%s---\n%s", cols[0], cols[1]);
    assert_int_equal(th_count_lines(cols[0]), 5);
    snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/eval.csv", out[0]);
    th_read_text(path, text, sizeof text);
    assert_int_equal(strncmp(text, "step,exact_match,token_acc,eval_seconds\n5,", 42), 0);
    assert_int_equal(th_count_lines(text), 5); /* header + steps 5, 10, 15, 20 */
    assert_false(th_exists(out[1], "runs/copy-rope-seed1/eval.csv"));
    snprintf(path, sizeof path, "%s/report.md", out[0]);
    static char md[1 << 16];
    th_read_text(path, md, sizeof md);
    if (!strstr(md, "| steps to 0.99 |") || !strstr(md, "within 20 · 0/1 |") ||
        !strstr(md, "every 5 steps and at the last, 64 samples"))
        fail_msg("report.md:\n%s", md);
    snprintf(path, sizeof path, "%s/report.csv", out[0]);
    th_read_text(path, text, sizeof text);
    assert_non_null(strstr(text, ",steps_to_learn\n"));
    assert_non_null(strstr(text, ",-1\n"));
    snprintf(path, sizeof path, "%s/report.md", out[1]);
    th_read_text(path, md, sizeof md);
    assert_null(strstr(md, "steps to 0.99"));
}

/* The data file is found next to the executable's repository, else through $ROPEGRAD_DATA: a copy of the binary
 * outside the repository needs the variable, and says so. */
static void test_data_file_from_the_environment(void **state)
{
    char copy[600], data[PATH_MAX];
    snprintf(copy, sizeof copy, "%s/train_order_copy", th_tmpdir);
    th_copy_file(th_bin, copy);
    assert_int_equal(chmod(copy, 0755), 0);
    assert_non_null(realpath("data/eval_sets.h5", data));
    th_exe = copy;
    th_data_env = NULL;
    int rc = th_run_in(th_tmpdir, "--pos rope --steps 2 --print-config");
    if (rc != 2 || !strstr(th_logbuf, "ROPEGRAD_DATA")) fail_msg("without the variable: exit %d\n%s", rc, th_logbuf);
    th_data_env = data;
    rc = th_run_in(th_tmpdir, "--pos rope --steps 2 --print-config");
    char want[PATH_MAX + 32];
    snprintf(want, sizeof want, "\"data\":\t\"%s\"", data);
    if (rc != 0 || !strstr(th_logbuf, want)) fail_msg("with ROPEGRAD_DATA: exit %d\n%s", rc, th_logbuf);
    th_exe = th_bin;
    th_data_env = NULL;
}

/* ------------------------------------------------------------------ resume */

/* The lr column of train.csv at a step ("" if absent). */
static double csv_lr(const char *path, int step)
{
    char text[8192], key[32];
    th_read_text(path, text, sizeof text);
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
    snprintf(out, sizeof out, "%s/resume", th_tmpdir);
    int rc = th_run("--task copy --pos rope --steps 4 --batch 8 --lr 5e-3 --test-lens 8 --rope-ext none --quiet "
                 "--jobs 1 --out %s", out);
    if (rc != 0) fail_msg("first run exited %d:\n%s", rc, th_logbuf);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 4);
    /* into its own folder: refused, the source untouched */
    assert_int_equal(th_run("--resume %s --steps 6 --test-lens 8 --quiet --out %s", ckpt, out), 2);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 4);
    /* back to fewer steps than the checkpoint has: refused (its report would say both step counts) */
    snprintf(out2, sizeof out2, "%s/resume_fewer", th_tmpdir);
    assert_int_equal(th_run("--resume %s --steps 3 --test-lens 8 --quiet --out %s", ckpt, out2), 2);
    if (!strstr(th_logbuf, "--steps 3 is below the checkpoint's step 4")) fail_msg("no reason given:\n%s", th_logbuf);
    /* continue: a new checkpoint; the schedule ends at step 4, steps 5-6 run at the final rate 0.1 * 5e-3 */
    snprintf(out2, sizeof out2, "%s/resume2", th_tmpdir);
    rc = th_run("--resume %s --steps 6 --test-lens 8 --rope-ext none --log-every 1 --quiet --out %s", ckpt, out2);
    if (rc != 0) fail_msg("--resume exited %d:\n%s", rc, th_logbuf);
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
    snprintf(out2, sizeof out2, "%s/resume3", th_tmpdir);
    rc = th_run("--resume %s --steps 8 --lr-schedule restart --test-lens 8 --rope-ext none --log-every 1 --quiet "
             "--out %s", ckpt, out2);
    if (rc != 0) fail_msg("--resume --lr-schedule restart exited %d:\n%s", rc, th_logbuf);
    snprintf(ck2, sizeof ck2, "%s/ckpt/copy-rope-seed1.h5", out2);
    assert_true(tc_h5_attr(ck2, "/optim", "lr_total") == 8);
    assert_true(tc_h5_attr(ck2, "/run", "lr_start") == 4);
    snprintf(csv, sizeof csv, "%s/runs/copy-rope-seed1/train.csv", out2);
    assert_true(fabs(csv_lr(csv, 5) - 5e-3 / 4) < 1e-12 && fabs(csv_lr(csv, 8) - 5e-3) < 1e-12);
    /* asked: --overwrite replaces the source */
    rc = th_run("--resume %s --steps 5 --test-lens 8 --rope-ext none --quiet --overwrite --out %s", ckpt, out);
    if (rc != 0) fail_msg("--resume --overwrite exited %d:\n%s", rc, th_logbuf);
    assert_true(tc_h5_attr(ckpt, "/", "step") == 5);
}

/* --resume keeps the source run's evaluation settings (test lengths, RoPE scaling, --eval-every) unless given, and
 * its train.csv and eval.csv continue the source run's rows; without the source's log, the resumed log starts at
 * the resume step and says so. */
static void test_resume_continues_history(void **state)
{
    char out[512], out2[512], out3[512], ckpt[700], text[16384];
    snprintf(out, sizeof out, "%s/hist", th_tmpdir);
    int rc = th_run("--task copy --pos rope --steps 4 --batch 8 --test-lens 8,20 --rope-scaling yarn --eval-every 2 "
                    "--log-every 1 --quiet --jobs 1 --out %s", out);
    if (rc != 0) fail_msg("first run exited %d:\n%s", rc, th_logbuf);
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-seed1.h5", out);
    snprintf(out2, sizeof out2, "%s/hist2", th_tmpdir);
    rc = th_run("--resume %s --steps 6 --quiet --out %s", ckpt, out2);
    if (rc != 0) fail_msg("--resume exited %d:\n%s", rc, th_logbuf);
    char path[700];
    snprintf(path, sizeof path, "%s/report.csv", out2);
    th_read_text(path, text, sizeof text);
    if (!strstr(text, ",yarn,1,6,") || !strstr(text, ",20,")) fail_msg("the source's test lengths and RoPE scaling "
                                                                      "were not kept:\n%s", text);
    snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/train.csv", out2);
    th_read_text(path, text, sizeof text);
    for (int step = 1; step <= 6; step++) {
        char key[16];
        snprintf(key, sizeof key, "\n%d,", step);
        if (!strstr(text, key)) fail_msg("train.csv lacks step %d (the source's history):\n%s", step, text);
    }
    assert_int_equal(th_count_lines(text), 7); /* header + 6 rows, none twice */
    snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/eval.csv", out2);
    th_read_text(path, text, sizeof text);
    if (!strstr(text, "\n2,") || !strstr(text, "\n4,") || !strstr(text, "\n6,")) fail_msg("eval.csv: %s", text);
    /* overridden on the command line; a checkpoint away from its runs/: the log starts at step 4, with a message */
    snprintf(out3, sizeof out3, "%s/hist3", th_tmpdir);
    char moved[700];
    snprintf(moved, sizeof moved, "%s/moved.h5", th_tmpdir);
    th_copy_file(ckpt, moved);
    rc = th_run("--resume %s --steps 6 --test-lens 8 --rope-scaling none --out %s", moved, out3);
    if (rc != 0) fail_msg("--resume exited %d:\n%s", rc, th_logbuf);
    if (!strstr(th_logbuf, "train.csv starts at the resume step 4: no readable log of the source run at"))
        fail_msg("no message on where the log starts:\n%s", th_logbuf);
    snprintf(path, sizeof path, "%s/report.csv", out3);
    th_read_text(path, text, sizeof text);
    if (strstr(text, ",yarn,") || strstr(text, ",20,")) fail_msg("the command line did not win:\n%s", text);
    snprintf(path, sizeof path, "%s/runs/copy-rope-seed1/train.csv", out3);
    th_read_text(path, text, sizeof text);
    if (strstr(text, "\n4,") || !strstr(text, "\n5,")) fail_msg("train.csv: %s", text);
}

/* The run's task, seed and train_len are rows of train_order's settings table, stored in /run (not /config, which is
 * the model's only): --eval and --resume take them from there (the defaults copy, seed 1, 16 would be wrong here). */
static void test_task_seed_train_len_in_run_group(void **state)
{
    char out[512], ck[700], out2[512], path[700], s[64];
    static char text[1 << 16];
    snprintf(out, sizeof out, "%s/rungroup", th_tmpdir);
    int rc = th_run("--task sort --pos rope --seed 7 --train-len 5 --steps 2 --batch 4 --test-lens 8 --rope-ext none "
                 "--eval-every 0 --quiet --jobs 1 --out %s", out);
    if (rc != 0) fail_msg("run exited %d:\n%s", rc, th_logbuf);
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
        snprintf(out2, sizeof out2, "%s/rungroup%d", th_tmpdir, i);
        rc = th_run(modes[i], ck, out2);
        if (rc != 0) fail_msg("%.8s exited %d:\n%s", modes[i], rc, th_logbuf);
        snprintf(path, sizeof path, "%s/report.csv", out2);
        th_read_text(path, text, sizeof text);
        if (!strstr(text, "\nsort,rope,") || !strstr(text, ",7,")) fail_msg("%.8s: report.csv:\n%s", modes[i], text);
    }
    snprintf(path, sizeof path, "%s/ckpt/sort-rope-seed7.h5", out2); /* the resumed run's */
    assert_true(tc_h5_attr(path, "/", "step") == 3);
    assert_true(tc_h5_attr(path, "/run", "train_len") == 5 && tc_h5_attr(path, "/run", "seed") == 7);
}

/* --train-len 32 end to end (the literature's second training length): the test lengths 16, 32,
 * every n from 33 to 48, 64, 96, 128 evaluated (generated sets), per-position counts up to the EOS of n = 128
 * (position 129, ENG_POS_MAX), the over-training log, the encoding statement against 2 L + 1 = 65, the plots. */
static void test_train_len_32_end_to_end(void **state)
{
    char out[512], path[700];
    static char text[1 << 17];
    snprintf(out, sizeof out, "%s/l32", th_tmpdir);
    int rc = th_run("--task copy --pos alibi --seeds 1 --steps 20 --batch 4 --train-len 32 --extrap-every 10 "
                    "--eval-every 0 --rope-scaling none --jobs 1 --out %s", out);
    if (rc != 0) fail_msg("the run exited %d:\n%s", rc, th_logbuf);
    snprintf(path, sizeof path, "%s/report.csv", out);
    th_read_text(path, text, sizeof text);
    bool seen[129] = {false};
    int lines = 0;
    for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n'), lines++) {
        const char *f = line + 1;
        for (int k = 0; k < 8 && f; k++) f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL; /* the 9th field: n */
        assert_non_null(f);
        int n = atoi(f);
        assert_true(n >= 1 && n <= 128);
        seen[n] = true;
    }
    for (int n = 1; n <= 128; n++)
        if (seen[n] != (n == 16 || (n >= 32 && n <= 48) || n == 64 || n == 96 || n == 128))
            fail_msg("test length %d %s in report.csv:\n%s", n, seen[n] ? "unexpected" : "missing", text);
    assert_int_equal(lines, 21);
    snprintf(path, sizeof path, "%s/report_positions.csv", out);
    th_read_text(path, text, sizeof text);
    assert_non_null(strstr(text, "\ncopy,alibi,base,none,1,128,129,256,"));
    assert_null(strstr(text, ",128,130,"));
    snprintf(path, sizeof path, "%s/report.md", out);
    th_read_text(path, text, sizeof text);
    assert_non_null(strstr(text, "the longest training distance is 65, 2 L + 1 for L = 32"));
    assert_true(th_exists(out, "runs/copy-alibi-seed1/extrap.csv"));
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        assert_true(th_exists(out, "positions_copy.svg"));
        assert_true(th_exists(out, "over_training_copy.svg"));
    }
}

/* An LM-only invocation: lm_report.md opens with the provenance (the command, the commit) like report.md, its table
 * has a row per encoding over both seeds, lm_report.csv a row per (encoding, method, context); no report.md is
 * written and the closing line does not name one. */
static void test_lm_invocation_reports(void **state)
{
    char out[512], path[700], text[16384];
    snprintf(out, sizeof out, "%s/lm", th_tmpdir);
    int rc = th_run("--task lm --pos alibi,learned --seeds 2 --steps 3 --batch 4 --train-len 8 --jobs 2 --out %s",
                    out);
    if (rc != 0) fail_msg("the LM run exited %d:\n%s", rc, th_logbuf);
    assert_non_null(strstr(th_logbuf, "/lm_report.md"));
    if (strstr(th_logbuf, "/report.md")) fail_msg("the closing lines name a report.md never written:\n%s", th_logbuf);
    assert_false(th_exists(out, "report.md"));
    snprintf(path, sizeof path, "%s/lm_report.md", out);
    th_read_text(path, text, sizeof text);
    const char *want[] = {"# Language-modelling perplexity against context length\n\n## Provenance\n", "- commit: ",
                          "- command: `", "--task lm --pos alibi,learned --seeds 2 --steps 3", "- wall time: ",
                          "Trained at L = 8 tokens, 3 steps, batch 4", "| alibi | 2 | ", "| learned | 2 | ",
                          "longest training distance is 7, L - 1 for a causal context of L = 8",
                          "  - alibi: 4 heads, slopes", "  - learned: a table of"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr(text, want[i])) fail_msg("lm_report.md lacks \"%s\":\n%s", want[i], text);
    snprintf(path, sizeof path, "%s/lm_report.csv", out);
    th_read_text(path, text, sizeof text);
    assert_int_equal(th_count_lines(text), 1 + 2 * 2 * 6); /* header + 2 encodings x 2 methods x 6 contexts */
    assert_int_equal(strncmp(text, "task,pos,variant,method,context,ratio,seeds,median_ppl,min_ppl,max_ppl,mean_ppl,"
                                   "ci95_t_lo,ci95_t_hi\n", 100), 0);
    /* two seeds a <= b: the mean is the median (a + b) / 2, and the interval's half-width t(0.975, 1) sd / sqrt(2)
     * = 12.7062 (b - a) / 2 (sd = (b - a) / sqrt(2)), by hand */
    const char *row = strstr(text, "\nlm,alibi,base,chunks,8,1,2,");
    assert_non_null(row);
    double med, mn, mx, mean, lo, hi;
    assert_int_equal(sscanf(row + 28, "%lf,%lf,%lf,%lf,%lf,%lf", &med, &mn, &mx, &mean, &lo, &hi), 6);
    assert_true(fabs(mean - med) <= 1e-5 * med && mx > mn);
    /* the CSV's 6 significant digits: each value within 5e-6 of itself, relative */
    if (fabs((hi - mean) - 6.35310 * (mx - mn)) > 1e-4 * (hi - mean) + 1e-4 * mean || fabs((mean - lo) - (hi - mean)) >
        5e-5 * mean)
        fail_msg("interval [%g, %g] of mean %g, seeds %g and %g", lo, hi, mean, mn, mx);

    /* lm_report.md cannot be written (a folder of that name): neither file is left, no line names the report */
    snprintf(out, sizeof out, "%s/lm_blocked", th_tmpdir);
    snprintf(path, sizeof path, "%s/lm_report.md", out);
    assert_int_equal(mkdir(out, 0755) | mkdir(path, 0755), 0);
    rc = th_run("--task lm --pos alibi --steps 2 --batch 4 --train-len 8 --out %s", out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(th_logbuf, "lm_report.md: Is a directory"));
    if (strstr(th_logbuf, "LM report of")) fail_msg("a line names the LM report never written:\n%s", th_logbuf);
    assert_false(th_exists(out, "lm_report.csv"));

    /* a command past the report's 8 KB: cut, and marked so (115 x "--lr 0.00100...0", 76 characters each) */
    static char args[12000];
    int at = snprintf(args, sizeof args, "--task lm --pos alibi --steps 2 --batch 4 --train-len 8 --quiet");
    for (int i = 0; i < 115; i++) at += snprintf(args + at, sizeof args - (size_t)at, " --lr 0.001%060d", 0);
    snprintf(out, sizeof out, "%s/lm_long", th_tmpdir);
    rc = th_run("%s --out %s", args, out);
    if (rc != 0) fail_msg("the long command exited %d:\n%s", rc, th_logbuf);
    snprintf(path, sizeof path, "%s/lm_report.md", out);
    th_read_text(path, text, sizeof text);
    if (!strstr(text, " ... (cut: the command is longer than this report keeps)`\n"))
        fail_msg("the long command is not marked as cut:\n%.600s", text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_short_run_writes_everything_and_eval_reproduces, th_reset),
        cmocka_unit_test_setup(test_report_replot_and_compare, th_reset),
        cmocka_unit_test_setup(test_variants_grid, th_reset),
        cmocka_unit_test_setup(test_eval_every, th_reset),
        cmocka_unit_test_setup(test_data_file_from_the_environment, th_reset),
        cmocka_unit_test_setup(test_resume_semantics, th_reset),
        cmocka_unit_test_setup(test_resume_continues_history, th_reset),
        cmocka_unit_test_setup(test_task_seed_train_len_in_run_group, th_reset),
        cmocka_unit_test_setup(test_lm_invocation_reports, th_reset),
        cmocka_unit_test_setup(test_train_len_32_end_to_end, th_reset),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
