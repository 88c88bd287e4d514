/* test_train_order_sizes.c: the model size as an axis of train_order's grid (--sizes; docs/experiment.md, "A
 * model-size axis"), end to end on a tiny grid (copy; alibi and rope with --rope-scaling yarn; sizes 8x1 and 16x2;
 * seeds 1, 2; 4 steps):
 *   - a row per size in every table of report.md, the size columns of report.csv / report_cells.csv, the fields
 *     of report.json, a run folder and a checkpoint per size; without --sizes none of them (names as before);
 *   - the checkpoint records the size (/run size; rg_engine_run_settings), --eval and --resume report it;
 *   - --combine of the two one-size blocks equals (cells) the invocation with both sizes, and so does a block
 *     run without --sizes at 8x1 beside the 16x2 block; blocks of one size with other settings are refused;
 *   - --compare matches cells by size; --continue of the grid finds its runs by their sized names;
 *   - bad --sizes values and conflicting flags exit 2 before anything is written (a table);
 *   - --print-config writes "sizes" (not d_model, n_layers, d_ff), and reads back through --config.
 * The binary is driven through the harness (eng_harness.h). */
#include "eng_harness.h"
#include "engine/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GRID "--task copy --pos alibi,rope --seeds 1,2 --steps 4 --batch 4 --train-len 4 --test-lens 2,4,6 " \
             "--rope-scaling yarn --eval-every 2 --extrap-every 2 --ckpt-every 4 --log-every 2 --jobs 2 --threads 1 " \
             "--quiet"

static char full[300], b8[300], b16[300], plain[300];

/* The grid with both sizes, each size alone, and the 8x1 model without --sizes (the scalar flags). */
static int group_setup(void **state)
{
    if (th_setup(state)) return -1;
    struct { char *dir; const char *name, *args; } runs[] = {
        {full, "full", "--sizes 8x1,16x2"}, {b8, "b8", "--sizes 8x1"}, {b16, "b16", "--sizes 16x2"},
        {plain, "plain", "--d-model 8 --n-layers 1 --d-ff 32"}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        snprintf(runs[i].dir, sizeof full, "%s/%s", th_tmpdir, runs[i].name);
        if (th_run(GRID " %s --out %s", runs[i].args, runs[i].dir) != 0) {
            fprintf(stderr, "the grid %s failed:\n%s", runs[i].name, th_logbuf);
            return -1;
        }
    }
    return 0;
}

/* How many times dir/file holds text. */
static int count_in(const char *dir, const char *file, const char *text)
{
    static char buf[1 << 20];
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    th_read_text(path, buf, sizeof buf);
    int n = 0;
    for (const char *p = buf; (p = strstr(p, text)); p++) n++;
    return n;
}

static void test_rows_columns_and_folders(void **state)
{
    (void)state;
    /* each output of the sized grid: a text and how many times it holds it (at least) */
    static const struct { const char *file, *text; int times; } HOLDS[] = {
        {"report.md", "| alibi 8x1", 3}, {"report.md", "| alibi 16x2", 3}, /* exact, max / median, token acc */
        {"report.md", "| rope 16x2", 3}, {"report.md", "| rope+yarn 8x1", 3},
        {"report.md", "- model: sizes 8x1, 16x2", 1}, {"report.md", "| 16x2 | 16 | 2 | 4 | 64 |", 1},
        {"report.csv", "steps_to_learn,size,d_model,n_layers,n_heads,d_ff,params\n", 1},
        {"report.csv", ",8x1,8,1,4,32,", 2 * 3 * 3},  /* alibi, rope, rope+yarn: 2 seeds x 3 lengths */
        {"report.csv", ",16x2,16,2,4,64,", 2 * 3 * 3},
        {"report_cells.csv", ",16x2,16,2,4,64,", 3 * 3 * 2},
        {"report_positions.csv", "first_wrong,size\n", 1},
        {"report.json", "\"size\":\t\"8x1\"", 6 + 3 + 9},
        {"loss_copy.gp", "title 'alibi 16x2'", 1},
        {"curves_copy.gp", "rope+yarn 16x2", 1},
    };
    for (size_t i = 0; i < sizeof HOLDS / sizeof *HOLDS; i++) {
        int n = count_in(full, HOLDS[i].file, HOLDS[i].text);
        if (n < HOLDS[i].times) fail_msg("%s holds '%s' %d times, expected %d", HOLDS[i].file, HOLDS[i].text, n,
                                         HOLDS[i].times);
    }
    static const char *const encs[] = {"alibi", "rope"}, *const sizes[] = {"8x1", "16x2"};
    for (int e = 0; e < 2; e++)
        for (int z = 0; z < 2; z++)
            for (int s = 1; s <= 2; s++) {
                char run[128];
                snprintf(run, sizeof run, "runs/copy-%s-%s-seed%d/train.csv", encs[e], sizes[z], s);
                if (!th_exists(full, run)) fail_msg("%s/%s missing", full, run);
                snprintf(run, sizeof run, "ckpt/copy-%s-%s-seed%d.h5", encs[e], sizes[z], s);
                if (!th_exists(full, run)) fail_msg("%s/%s missing", full, run);
            }
    /* without --sizes: the names and files as before the axis */
    assert_true(th_exists(plain, "runs/copy-alibi-seed1/train.csv"));
    assert_true(th_exists(plain, "ckpt/copy-rope-seed2.h5"));
    static const char *const NOT_PLAIN[][2] = {{"report.csv", "size"}, {"report_cells.csv", "size"},
                                               {"report_positions.csv", "size"}, {"report.json", "\"size\""},
                                               {"report.md", "Model sizes"}, {"settings.json", "\"sizes\""}};
    for (size_t i = 0; i < sizeof NOT_PLAIN / sizeof *NOT_PLAIN; i++)
        if (count_in(plain, NOT_PLAIN[i][0], NOT_PLAIN[i][1]))
            fail_msg("without --sizes, %s holds '%s'", NOT_PLAIN[i][0], NOT_PLAIN[i][1]);
    assert_int_equal(count_in(plain, "report.md", "- model: d_model 8, n_heads 4, n_layers 1, d_ff 32,"), 1);
}

static void test_checkpoint_records_size(void **state)
{
    (void)state;
    char ckpt[512], out[400];
    struct { const char *dir, *name, *size; } CK[] = {{full, "copy-rope-16x2-seed1", "16x2"},
                                                      {plain, "copy-rope-seed1", ""}};
    for (int i = 0; i < 2; i++) {
        snprintf(ckpt, sizeof ckpt, "%s/ckpt/%s.h5", CK[i].dir, CK[i].name);
        rg_model_config cfg;
        static rg_run_state rs;
        assert_int_equal(rg_checkpoint_read_config(ckpt, &cfg, &rs), RG_OK);
        rg_engine_settings s;
        assert_int_equal(rg_engine_run_settings(&rs, &s), RG_OK);
        assert_string_equal(s.size, CK[i].size);
        assert_int_equal(cfg.d_model, i ? 8 : 16);
        assert_int_equal(cfg.n_layers, i ? 1 : 2);
    }
    /* --eval and --resume read it back and report it */
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-16x2-seed1.h5", full);
    snprintf(out, sizeof out, "%s/eval16", th_tmpdir);
    assert_int_equal(th_run("--eval %s --quiet --out %s", ckpt, out), 0);
    assert_int_equal(count_in(out, "report.csv", ",16x2,16,2,4,64,"), 3 * 2);
    assert_true(count_in(out, "report.md", "| rope 16x2") >= 3);
    snprintf(out, sizeof out, "%s/resume16", th_tmpdir);
    assert_int_equal(th_run("--resume %s --steps 6 --quiet --out %s", ckpt, out), 0);
    assert_true(th_exists(out, "ckpt/copy-rope-16x2-seed1.h5"));
    assert_int_equal(count_in(out, "report.csv", ",16x2,16,2,4,64,"), 3 * 2);
    char ck2[512];
    snprintf(ck2, sizeof ck2, "%s/ckpt/copy-rope-16x2-seed1.h5", out);
    rg_model_config cfg;
    static rg_run_state rs;
    rg_engine_settings s;
    assert_int_equal(rg_checkpoint_read_config(ck2, &cfg, &rs), RG_OK);
    assert_int_equal(rg_engine_run_settings(&rs, &s), RG_OK);
    assert_string_equal(s.size, "16x2");
}

/* text without each line's last field (report_cells.csv's params: not known for a report without the size axis,
 * whose runs carry no parameter count), in place. */
static void drop_last_field(char *text)
{
    char *w = text;
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        size_t keep = len;
        while (keep > 0 && line[keep - 1] != ',') keep--;
        keep = keep ? keep - 1 : len; /* up to the last comma (a line without one whole) */
        memmove(w, line, keep);
        w += keep;
        line += len;
        if (*line) *w++ = *line++;
    }
    *w = 0;
}

static void test_combine_blocks_of_sizes(void **state)
{
    (void)state;
    static char want[1 << 18], got[1 << 18];
    char path[600], out[400];
    snprintf(path, sizeof path, "%s/report_cells.csv", full);
    th_read_text(path, want, sizeof want);
    assert_true(strlen(want) > 100);
    /* the two one-size blocks, and the 8x1 model run without --sizes beside the 16x2 block; read from report.json,
     * which holds every digit (report.csv's 9 significant digits move a statistic's last digit) */
    const char *pairs[][2] = {{b8, b16}, {b16, b8}, {plain, b16}};
    for (int i = 0; i < 3; i++) {
        snprintf(out, sizeof out, "%s/comb%d", th_tmpdir, i);
        int rc = th_run("--combine %s/report.json,%s/report.json --quiet --out %s", pairs[i][0], pairs[i][1], out);
        if (rc != 0) fail_msg("--combine %s %s: exit %d\n%s", pairs[i][0], pairs[i][1], rc, th_logbuf);
        snprintf(path, sizeof path, "%s/report_cells.csv", out);
        th_read_text(path, got, sizeof got);
        static char want_i[1 << 18];
        snprintf(want_i, sizeof want_i, "%s", want);
        if (i == 2) { /* the block without --sizes: its 8x1 runs' parameter count not known (0) */
            drop_last_field(want_i);
            drop_last_field(got);
            assert_true(count_in(out, "report.md", "| 8x1 | 8 | 1 | 4 | 32 | not known |") == 1);
        }
        if (strcmp(got, want_i) != 0) fail_msg("--combine %s,%s: report_cells.csv differs from the grid's", pairs[i][0],
                                             pairs[i][1]);
        assert_true(count_in(out, "report.md", "| alibi 8x1") >= 3);
        assert_true(count_in(out, "report.md", "| alibi 16x2") >= 3);
        assert_int_equal(count_in(out, "settings.json", "\"sizes\":\t\"8x1,16x2\""), i == 1 ? 0 : 1);
    }
    /* a block of the same size with another setting: refused, naming the setting */
    char other[400];
    snprintf(other, sizeof other, "%s/b16steps", th_tmpdir);
    assert_int_equal(th_run(GRID " --sizes 16x2 --steps 5 --pos alibi --seeds 3 --out %s", other), 0);
    snprintf(out, sizeof out, "%s/comb_refused", th_tmpdir);
    assert_int_equal(th_run("--combine %s/report.csv,%s/report.csv --quiet --out %s", b16, other, out), 1);
    assert_non_null(strstr(th_logbuf, "'steps'"));
}

static void test_compare_matches_by_size(void **state)
{
    (void)state;
    /* B of one size: its cells meet A's of that size only; B without --sizes: its one size from its settings */
    const char *other[] = {b8, plain};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(th_run("--compare %s/report.csv %s/report.csv", full, other[i]), 0);
        int matched = 0, alone = 0;
        for (const char *line = th_logbuf; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
            size_t len = strcspn(line, "\n");
            char text[512];
            snprintf(text, sizeof text, "%.*s", (int)(len < 511 ? len : 511), line);
            if (strncmp(text, "copy ", 5) != 0) continue;
            bool one = strstr(text, "one report only") != NULL;
            if (strstr(text, " 8x1 ") && one) fail_msg("an 8x1 cell unmatched: %s", text);
            if (strstr(text, " 16x2 ") && !one) fail_msg("a 16x2 cell matched: %s", text);
            matched += strstr(text, " 8x1 ") != NULL;
            alone += strstr(text, " 16x2 ") != NULL;
        }
        assert_int_equal(matched, 2 * 3 * 3); /* alibi, rope, rope+yarn x 3 lengths x 2 metrics */
        assert_int_equal(alone, 2 * 3 * 3);
    }
}

static void test_continue_finds_sized_runs(void **state)
{
    (void)state;
    char out[400], cmd[1200];
    snprintf(out, sizeof out, "%s/cont", th_tmpdir);
    snprintf(cmd, sizeof cmd, "cp -r %s %s && rm %s/results/copy-rope-16x2-seed2.bin", full, out, out);
    assert_int_equal(system(cmd), 0);
    int rc = th_run("--continue %s --quiet", out);
    if (rc != 0) fail_msg("--continue: exit %d\n%s", rc, th_logbuf);
    static char a[1 << 18], b[1 << 18];
    char path[600];
    snprintf(path, sizeof path, "%s/report_cells.csv", full);
    th_read_text(path, a, sizeof a);
    snprintf(path, sizeof path, "%s/report_cells.csv", out);
    th_read_text(path, b, sizeof b);
    assert_string_equal(a, b);
    assert_true(th_exists(out, "results/copy-rope-16x2-seed2.bin"));
}

/* Bad --sizes values and conflicting flags: exit 2, a message naming the cause, nothing written. */
static void test_bad_sizes_refused(void **state)
{
    (void)state;
    static const struct { const char *args, *says; } BAD[] = {
        {"--sizes 0x2", "--sizes"}, {"--sizes 64x", "--sizes"}, {"--sizes 64x2x", "--sizes"},
        {"--sizes 63x2", "4 heads do not divide d_model 63"}, {"--sizes 64x2 --n-heads 5", "5 heads"},
        {"--sizes 8x1h3", "3 heads"}, {"--sizes 99999999999999999999x2", "--sizes"},
        {"--sizes 8x99999999999", "--sizes"}, {"--sizes 8x1,,16x2", "--sizes"}, {"--sizes ''", "--sizes"},
        {"--sizes 8x1,8x1", "--sizes"}, {"--sizes 8x1,8x1h4", "the same model"},
        {"--sizes 8x1 --d-model 16", "--d-model"}, {"--sizes 8x1 --n-layers 2", "--n-layers"},
        {"--sizes 8x1 --d-ff 64", "--d-ff"}, {"--sizes 8x1 --task lm", "language-model"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        char out[400];
        snprintf(out, sizeof out, "%s/bad%zu", th_tmpdir, i);
        int rc = th_run("--task copy --pos alibi --steps 2 --quiet %s --out %s", BAD[i].args, out);
        if (rc != 2 || !strstr(th_logbuf, BAD[i].says))
            fail_msg("%s: exit %d (expected 2), output lacks '%s':\n%s", BAD[i].args, rc, BAD[i].says, th_logbuf);
        struct stat st;
        if (stat(out, &st) == 0) fail_msg("%s: %s was made", BAD[i].args, out);
    }
    char ckpt[512];
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-rope-16x2-seed1.h5", full);
    assert_int_equal(th_run("--eval %s --sizes 8x1 --quiet --out %s/badeval", ckpt, th_tmpdir), 2);
}

static void test_print_config_round_trip(void **state)
{
    (void)state;
    static char first[1 << 14];
    assert_int_equal(th_run("--task copy --sizes 8x1,16x2h2f48 --print-config"), 0);
    snprintf(first, sizeof first, "%s", th_logbuf);
    assert_non_null(strstr(first, "\"sizes\":\t\"8x1,16x2h2f48\""));
    assert_null(strstr(first, "\"d_model\""));
    assert_null(strstr(first, "\"n_layers\""));
    assert_null(strstr(first, "\"d_ff\""));
    char path[400];
    snprintf(path, sizeof path, "%s/sizes_config.json", th_tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(first, f);
    fclose(f);
    assert_int_equal(th_run("--config %s --print-config", path), 0);
    assert_string_equal(th_logbuf, first);
    /* --help documents the option */
    assert_int_equal(th_run("--help"), 0);
    assert_non_null(strstr(th_logbuf, "--sizes LIST"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_rows_columns_and_folders, th_reset),
        cmocka_unit_test_setup(test_checkpoint_records_size, th_reset),
        cmocka_unit_test_setup(test_combine_blocks_of_sizes, th_reset),
        cmocka_unit_test_setup(test_compare_matches_by_size, th_reset),
        cmocka_unit_test_setup(test_continue_finds_sized_runs, th_reset),
        cmocka_unit_test_setup(test_bad_sizes_refused, th_reset),
        cmocka_unit_test_setup(test_print_config_round_trip, th_reset),
    };
    return cmocka_run_group_tests(tests, group_setup, th_teardown);
}
