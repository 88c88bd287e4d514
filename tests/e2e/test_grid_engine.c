/* test_grid_engine.c: the grid tasks in train_order end to end (docs/grids.md): a few training steps of grid_copy
 * and grid_lookup with axial 2-D RoPE and NoPE at --train-len 2x2 give report rows named by size (2x2 (train),
 * 2x3, 3x3), report.md's size matrices, grid_cells.csv with one count per sample at every cell of the copied grid
 * (256 samples: 256 at each of the 9 cells of 3x3) and the heat / cells figures' data; --eval of the checkpoint
 * reproduces the trained run's cells (the evaluation's axes are the task's, not the training batch's); and the
 * refusals: grid and 1-D tasks together, a size that is not the task's (training or test), a malformed size. */
#include "eng_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_contains(const char *what, const char *text, const char *needle)
{
    if (!strstr(text, needle)) fail_msg("%s lacks \"%s\"", what, needle);
}

#define TINY "--pos rope-2d,none --steps 4 --batch 8 --d-model 16 --n-heads 2 --d-ff 32 --rope-scaling none " \
             "--eval-every 2 --quiet --jobs 2"

static void test_grid_run(void **state)
{
    char out[512], path[600], buf[1 << 15];
    snprintf(out, sizeof out, "%s/grid", th_tmpdir);
    int rc = th_run("--task grid_copy,grid_lookup " TINY " --train-len 2x2 --test-lens 2x2,3x3,2x3 --seeds 1 "
                    "--out %s", out);
    if (rc != 0) fail_msg("train_order exited %d:\n%s", rc, th_logbuf);
    snprintf(path, sizeof path, "%s/report.md", out);
    th_read_text(path, buf, sizeof buf);
    assert_contains("report.md", buf, "| 2x2 (train) | 2x3 | 3x3 |");
    assert_contains("report.md", buf, "### grid_copy: by grid size (training size 2x2");
    assert_contains("report.md", buf, "### grid_lookup: by grid size");
    assert_contains("report.md", buf, "| H \\ W | 2 | 3 |");
    snprintf(path, sizeof path, "%s/grid_cells.csv", out);
    th_read_text(path, buf, sizeof buf);
    assert_contains("grid_cells.csv", buf, "task,encoding,variant,rope_ext,size,n,row,col,count,right\n");
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            char line[96];
            snprintf(line, sizeof line, "grid_copy,rope-2d,base,none,3x3,133,%d,%d,256,", r, c);
            assert_contains("grid_cells.csv", buf, line);
        }
    assert_null(strstr(buf, "grid_copy,rope-2d,base,none,3x3,133,3,")); /* no row 3 in a 3x3 grid */
    assert_contains("grid_cells.csv", buf, "grid_lookup,none,base,none,2x3,123,1,2,");
    /* per-position counts: the G target tokens of a size, not 1..n+1 of its size code (n = 133 for 3x3) */
    snprintf(path, sizeof path, "%s/report_positions.csv", out);
    static char csv[1 << 20];
    th_read_text(path, csv, sizeof csv);
    assert_contains("report_positions.csv", csv, "\ngrid_copy,rope-2d,base,none,1,133,1,256,");
    assert_null(strstr(csv, "\ngrid_copy,rope-2d,base,none,1,133,100,"));
    const char *files[] = {"heat_grid_copy.dat", "heat_grid_copy.gp", "cells_grid_copy.dat", "heat_grid_lookup.gp",
                           "cells_grid_lookup.gp", "report_cells.csv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (!th_exists(out, files[i])) fail_msg("%s/%s is missing", out, files[i]);
    /* the checkpoint evaluated again gives the run's cells */
    char rows_run[4096], rows_eval[4096], ev[512];
    th_csv_rows(out, "rope-2d", rows_run, sizeof rows_run);
    snprintf(ev, sizeof ev, "%s/eval", th_tmpdir);
    rc = th_run("--eval %s/ckpt/grid_copy-rope-2d-seed1.h5 --test-lens 2x2,3x3,2x3 --rope-scaling none --quiet "
                "--out %s", out, ev);
    if (rc != 0) fail_msg("--eval exited %d:\n%s", rc, th_logbuf);
    th_csv_rows(ev, "rope-2d", rows_eval, sizeof rows_eval);
    assert_true(rows_eval[0] != 0);
    assert_non_null(strstr(rows_run, rows_eval)); /* grid_copy's rows of the run (the run also has grid_lookup) */
}

static void test_grid_refusals(void **state)
{
    char out[512];
    snprintf(out, sizeof out, "%s/refused", th_tmpdir);
    static const char *bad[] = {
        "--task grid_copy,copy --train-len 2x2",           /* grid and 1-D together */
        "--task grid_copy --train-len 16",                 /* not a grid size */
        "--task grid_copy --train-len 10x2",               /* a side past 9 */
        "--task grid_copy --train-len 2x2x2",              /* frames for a single grid */
        "--task frames --train-len 4x4",                   /* one frame for frames */
        "--task grid_copy --train-len 2x2 --test-lens 3x3,2x2x3", /* a test size not the task's */
        "--task grid_copy --train-len 2x2 --test-lens 3*3",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = th_run("%s --pos none --steps 1 --quiet --out %s", bad[i], out);
        if (rc != 2) fail_msg("'%s' exited %d, want 2:\n%s", bad[i], rc, th_logbuf);
    }
    assert_int_equal(th_run("--task grid_copy --train-len 10x2 --pos none --steps 1 --out %s", out), 2);
    assert_contains("message", th_logbuf, "grid size HxW");
    assert_int_equal(th_run("--task grid_copy,copy --train-len 2x2 --pos none --steps 1 --out %s", out), 2);
    assert_contains("message", th_logbuf, "grid task 'grid_copy' with 1-D task 'copy'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_grid_run, th_reset),
        cmocka_unit_test_setup(test_grid_refusals, th_reset),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
