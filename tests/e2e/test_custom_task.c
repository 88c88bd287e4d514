/* test_custom_task.c: examples/custom_task (a program's own task, associative recall, registered with
 * rg_task_register and run by rg_engine_main) end to end: a few training steps of recall beside the built-in copy
 * give report rows for both tasks (recall's sets generated, copy's n=8 read from the data file), the version in
 * the provenance, recall's plots; its checkpoint reloads with --eval in the same program and gives the training
 * run's cells again; train_order, which has no such task, refuses that checkpoint naming the task and
 * rg_task_register; --compare and --replot of its reports work in the program. The tests run in order (the later ones read the first one's folder). */
#define _DEFAULT_SOURCE /* realpath */
#include "eng_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

static char custom_bin[PATH_MAX];

static int setup(void **state)
{
    if (th_setup(state)) return -1;
    const char *bd = getenv("RG_BUILD_DIR");
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/examples/custom_task", bd && *bd ? bd : "build");
    if (!realpath(rel, custom_bin)) {
        fprintf(stderr, "%s is missing (make all)\n", rel);
        return -1;
    }
    return 0;
}

static int use_custom(void **state)
{
    th_reset(state);
    th_exe = custom_bin;
    return 0;
}

#define SMALL "--pos rope,alibi --steps 20 --eval-every 10 --test-lens 4,8 --train-len 4 --batch 16 --d-model 32 " \
              "--d-ff 64 --rope-scaling none --quiet --jobs 2"

/* The rows of dir/report.csv of one task as "encoding n exact token generated steps" lines; their count. */
static int task_rows(const char *dir, const char *want_task, char *out, size_t cap)
{
    char p[1024], line[512];
    snprintf(p, sizeof p, "%s/report.csv", dir);
    FILE *f = fopen(p, "r");
    if (!f) fail_msg("no %s", p);
    out[0] = 0;
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        char task[32], enc[32], var[32], ext[32];
        int seed, n, train_len, gen;
        long long steps;
        double loss, secs, em, acc;
        if (sscanf(line, "%31[^,],%31[^,],%31[^,],%31[^,],%d,%lld,%lf,%lf,%d,%lf,%lf,%d,%d", task, enc, var, ext,
                   &seed, &steps, &loss, &secs, &n, &em, &acc, &train_len, &gen) != 13 || strcmp(task, want_task))
            continue;
        if (!(em >= 0 && em <= 1 && acc >= 0 && acc <= 1)) fail_msg("%s: metrics outside [0, 1]: %s", p, line);
        char row[160];
        snprintf(row, sizeof row, "%s %d %.9g %.9g %d %lld\n", enc, n, em, acc, gen, steps);
        strncat(out, row, cap - strlen(out) - 1);
        rows++;
    }
    fclose(f);
    return rows;
}

static void assert_contains(const char *what, const char *text, const char *needle)
{
    if (!strstr(text, needle)) fail_msg("%s lacks '%s':\n%s", what, needle, text);
}

static char train_recall[4096]; /* the training run's recall rows, for the --eval test */

static void test_recall_beside_copy(void **state)
{
    char out[512];
    snprintf(out, sizeof out, "%s/run", th_tmpdir);
    int rc = th_run("--task recall,copy " SMALL " --out %s", out);
    if (rc != 0) fail_msg("custom_task exit %d:\n%s", rc, th_logbuf);
    char copy[4096];
    assert_int_equal(task_rows(out, "recall", train_recall, sizeof train_recall), 4); /* 2 encodings x 2 lengths */
    assert_int_equal(task_rows(out, "copy", copy, sizeof copy), 4);
    /* recall's sets are generated at every length; copy's n=8 comes from data/eval_sets.h5, n=4 is generated */
    assert_contains("recall rows", train_recall, "rope 4 ");
    assert_contains("recall rows", train_recall, "alibi 8 ");
    for (const char *l = train_recall; *l; l = strchr(l, '\n') + 1) {
        char enc[32];
        int n, gen;
        long long steps;
        double em, acc;
        assert_int_equal(sscanf(l, "%31s %d %lf %lf %d %lld", enc, &n, &em, &acc, &gen, &steps), 6);
        assert_int_equal(gen, 1);
        assert_int_equal(steps, 20);
    }
    assert_true(strstr(copy, " 8 ") && strstr(copy, " 0 20\n"));
    char md[1 << 16], json[1 << 17], path[600];
    snprintf(path, sizeof path, "%s/report.md", out);
    th_read_text(path, md, sizeof md);
    assert_contains("report.md", md, "- ropegrad: " RG_VERSION " (float32)");
    assert_contains("report.md", md, "## recall");
    assert_contains("report.md", md, "vocab per task (copy 30, recall 40)"); /* each run's model, its task's */
    snprintf(path, sizeof path, "%s/report.json", out);
    th_read_text(path, json, sizeof json);
    assert_contains("report.json", json, "\"ropegrad_version\":\t\"" RG_VERSION "\"");
    assert_contains("report.json", json, "\"task\":\t\"recall\"");
    assert_true(th_exists(out, "curves_recall.dat"));
    assert_true(th_exists(out, "ckpt/recall-rope-seed1.h5"));
    assert_true(th_exists(out, "runs/recall-alibi-seed1/eval.csv"));
}

/* --eval of recall's checkpoint in the same program: the same cells as the training run's evaluation. */
static void test_eval_in_same_program(void **state)
{
    char out[512], rows[4096];
    snprintf(out, sizeof out, "%s/eval", th_tmpdir);
    int rc = th_run("--eval %s/run/ckpt/recall-rope-seed1.h5 --test-lens 4,8 --rope-scaling none --quiet --out %s",
                    th_tmpdir, out);
    if (rc != 0) fail_msg("custom_task --eval exit %d:\n%s", rc, th_logbuf);
    assert_int_equal(task_rows(out, "recall", rows, sizeof rows), 2);
    char want[4096] = "";
    for (const char *l = train_recall; *l; l = strchr(l, '\n') + 1)
        if (strncmp(l, "rope ", 5) == 0) strncat(want, l, (size_t)(strchr(l, '\n') - l + 1));
    assert_string_equal(rows, want);
}

/* train_order has no task "recall": its checkpoint is refused (exit 2, nothing written), naming the task and
 * how to register it. */
static void test_train_order_refuses(void **state)
{
    th_exe = th_bin;
    char out[512];
    snprintf(out, sizeof out, "%s/refused", th_tmpdir);
    int rc = th_run("--eval %s/run/ckpt/recall-rope-seed1.h5 --quiet --out %s", th_tmpdir, out);
    assert_int_equal(rc, 2);
    assert_contains("train_order's message", th_logbuf, "'recall'");
    assert_contains("train_order's message", th_logbuf, "rg_task_register");
    assert_false(th_exists(th_tmpdir, "refused"));
}

/* --compare of the training run's report with the --eval one's, and --replot, in the same program. */
static void test_compare_and_replot(void **state)
{
    int rc = th_run("--compare %s/run/report.csv %s/eval/report.csv", th_tmpdir, th_tmpdir);
    if (rc != 0) fail_msg("custom_task --compare exit %d:\n%s", rc, th_logbuf);
    assert_contains("--compare", th_logbuf, "recall");
    char out[512];
    snprintf(out, sizeof out, "%s/replot", th_tmpdir);
    rc = th_run("--replot %s/run/report.csv --out %s", th_tmpdir, out);
    if (rc != 0) fail_msg("custom_task --replot exit %d:\n%s", rc, th_logbuf);
    assert_true(th_exists(out, "curves_recall.dat"));
}

/* --help lists every registered task and encoding, the program's own task with its summary and the opt-in ones
 * marked, and the max_distance runs use (the default task's longest training distance, not the declared 128). */
static void test_help_lists_task(void **state)
{
    assert_int_equal(th_run("--help"), 0);
    assert_contains("--help", th_logbuf, "Tasks (--task values");
    assert_contains("--help", th_logbuf, "recall                 associative recall");
    assert_contains("--help", th_logbuf, "grid_copy              * copy an H x W grid");
    assert_contains("--help", th_logbuf, "mrope                  * M-RoPE");
    assert_contains("--help", th_logbuf, "alibi-2d-euclidean     * ALiBi");
    assert_contains("--help", th_logbuf, "t5_max_distance=33");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_recall_beside_copy, use_custom),
        cmocka_unit_test_setup(test_eval_in_same_program, use_custom),
        cmocka_unit_test_setup(test_train_order_refuses, use_custom),
        cmocka_unit_test_setup(test_compare_and_replot, use_custom),
        cmocka_unit_test_setup(test_help_lists_task, use_custom),
    };
    return cmocka_run_group_tests(tests, setup, th_teardown);
}
