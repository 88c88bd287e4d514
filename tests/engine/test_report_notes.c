/* test_report_notes.c: reports say only what applies (a note about rows the report lacks misleads). report.md's notes explain RoPE scaling per length,
 * fixed factors, the training variants, randomized positions and ✗ only when the report has such rows; --compare
 * prints the settings that differ between its two reports first and words the case of two zero-width intervals
 * as what it is; --replot says where it wrote each file. */
#include "report_fixture.h"
#include "task/task.h"
#include "task/tricks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes a report of res into rf_tmpdir/name with options o (o.out set here); returns report.md's text. */
static char *report_md(const char *name, eng_options *o, const eng_result *res, int n)
{
    char out[512];
    rf_make_dir(out, sizeof out, name);
    snprintf(o->out, sizeof o->out, "%s", out);
    eng_report_meta meta = {1, "t", false, 0, 0, NULL};
    if (eng_report(o, res, n, &meta) != 0) fail_msg("eng_report into %s failed", out);
    return rf_slurp(out, "report.md");
}

/* Each note appears exactly when its rows are in the report. */
static void test_notes_only_for_what_the_report_holds(void **state)
{
    static const char *const NOTE_SCALED = "- RoPE scaling (rows rope+TYPE", *const NOTE_FIXED = "fixed factor (rows",
                              *const NOTE_THETA = "training variant `θ=500k`", *const NOTE_RAND = "- randomized positions",
                              *const NOTE_X = "- ✗ marks a row", *const NOTE_NA_RAND = "for a +rand row";
    double learned[4] = {1, 1, 0.5, 0}, poor[4] = {1, 0.5, 0, 0}, acc[4] = {1, 1, 0.8, 0.3};
    eng_result res[8];
    struct {
        const char *name;
        int n_rows;
        struct { rg_pos_kind pos; rg_rope_ext ext; double factor; eng_variant v; const double *e; } rows[4];
        bool scaled, fixed, theta, rand, x;
    } cases[] = {
        {"plain", 2, {{RG_POS_ALIBI, RG_ROPE_EXT_NONE, 0, ENG_VAR_BASE, learned},
                      {RG_POS_ROPE, RG_ROPE_EXT_NONE, 0, ENG_VAR_BASE, learned}}, false, false, false, false, false},
        {"scaled", 2, {{RG_POS_ROPE, RG_ROPE_EXT_NONE, 0, ENG_VAR_BASE, learned},
                       {RG_POS_ROPE, RG_ROPE_EXT_YARN, 0, ENG_VAR_BASE, learned}}, true, false, false, false, false},
        {"fixed", 2, {{RG_POS_ROPE, RG_ROPE_EXT_NONE, 0, ENG_VAR_BASE, learned},
                      {RG_POS_ROPE, RG_ROPE_EXT_YARN, 4, ENG_VAR_BASE, learned}}, false, true, false, false, false},
        {"variants", 3, {{RG_POS_ROPE, RG_ROPE_EXT_NONE, 0, ENG_VAR_BASE, learned},
                         {RG_POS_ROPE, RG_ROPE_EXT_NONE, 0, ENG_VAR_THETA500K, learned},
                         {RG_POS_ALIBI, RG_ROPE_EXT_NONE, 0, ENG_VAR_RAND, poor}}, false, false, true, true, true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int n = 0;
        for (int k = 0; k < cases[c].n_rows; k++) {
            res[n] = rf_result(RG_TASK_COPY, cases[c].rows[k].pos, cases[c].rows[k].ext, 1, cases[c].rows[k].e, acc);
            res[n].ext_factor = cases[c].rows[k].factor;
            res[n++].variant = cases[c].rows[k].v;
        }
        eng_options o = rf_options("");
        char *md = report_md(cases[c].name, &o, res, n);
        assert_non_null(md);
        struct { const char *note; bool want; } checks[] = {
            {NOTE_SCALED, cases[c].scaled}, {NOTE_FIXED, cases[c].fixed}, {NOTE_THETA, cases[c].theta},
            {NOTE_RAND, cases[c].rand}, {NOTE_NA_RAND, cases[c].rand}, {NOTE_X, cases[c].x},
            {"- MPI:", false}};
        for (size_t i = 0; i < sizeof checks / sizeof *checks; i++)
            if ((strstr(md, checks[i].note) != NULL) != checks[i].want)
                fail_msg("case %s: the note '%s' is %s:\n%s", cases[c].name, checks[i].note,
                         checks[i].want ? "missing" : "there but does not apply", md);
        free(md);
    }
}

/* A report of 3 seeds of copy/alibi at n = 8, 16, 24, 32 with exact match e (every seed the same), in rf_tmpdir/name
 * with learning rate lr; its report.csv path into csv. */
static void flat_report(const char *name, double e, double lr, char *csv, size_t cap)
{
    eng_result res[3];
    double ev[4] = {e, e, e, e}, a[4] = {1, 1, 1, 1};
    for (int s = 0; s < 3; s++) res[s] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, s + 1, ev, a);
    eng_options o = rf_options("");
    o.lr = lr;
    free(report_md(name, &o, res, 3));
    snprintf(csv, cap, "%s/%s/report.csv", rf_tmpdir, name);
}

/* --compare: the settings diff comes first (from report.json beside each report.csv, or the report itself), then
 * the cells; two zero-width intervals are "both sets of seeds agree exactly", not a difference. */
static void test_compare_settings_diff_and_zero_width(void **state)
{
    char a[600], b[600], c[600];
    flat_report("cmp_a", 1.0, 1e-3, a, sizeof a);
    flat_report("cmp_b", 0.0, 3e-3, b, sizeof b);
    flat_report("cmp_c", 1.0, 1e-3, c, sizeof c);
    char *t = rf_compare_text(a, b);
    const char *diff = strstr(t, "Settings that differ"), *cells = strstr(t, "exact match (k/N");
    if (!diff || !cells || diff > cells) fail_msg("no settings diff before the cells:\n%s", t);
    if (!strstr(diff, "report.json") || !strstr(diff, "  lr                   A: 0.001\n") ||
        !strstr(diff, "B: 0.003\n"))
        fail_msg("the diff lacks lr 0.001 -> 0.003 read from report.json:\n%s", t);
    if (strstr(diff, "  batch "))
        fail_msg("the diff lists a setting that is the same:\n%s", t);
    if (!strstr(t, "0/3 max 0.000 med 0.000    both sets of seeds agree exactly; no interval to compare\n"))
        fail_msg("the zero-width case is not worded as such:\n%s", t);
    if (strstr(t, "strong sign")) fail_msg("%s", t);
    if (!strstr(t, "\n0 exact-match and 0 token-accuracy cells whose intervals do not overlap"))
        fail_msg("zero-width cells counted as non-overlapping:\n%s", t);
    free(t);
    /* the same settings: says so */
    t = rf_compare_text(a, c);
    if (!strstr(t, "  none: the same settings, commit, CPU and BLAS kernels\n")) fail_msg("%s", t);
    if (!strstr(t, "yes (every seed of both the same value)")) fail_msg("%s", t);
    free(t);
    /* a report.csv alone (nothing beside it): the diff says it is not known */
    char lone[600];
    snprintf(lone, sizeof lone, "%s/lone.csv", rf_tmpdir);
    FILE *f = fopen(lone, "w");
    fprintf(f, "task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n"
               "copy,alibi,none,1,300,0.1,10,8,1,1\n");
    fclose(f);
    t = rf_compare_text(lone, a);
    if (!strstr(t, "not known: ") || !strstr(t, "lone.csv has no report.json, settings.json or report.md"))
        fail_msg("%s", t);
    free(t);
    /* a report.md beside it without a Settings block: says which file it read and what is missing, and lists no
     * setting (it listed each as "(absent)") */
    char lone_md[600];
    snprintf(lone_md, sizeof lone_md, "%s/lone.md", rf_tmpdir);
    f = fopen(lone_md, "w");
    fprintf(f, "# Length extrapolation report\n\n## Provenance\n\n- commit: abc1234\n- wall time: 5.0 s\n");
    fclose(f);
    t = rf_compare_text(lone, a);
    if (!strstr(t, "lone.csv's settings not known: ") || !strstr(t, "lone.md has no Settings block") ||
        strstr(t, "  steps ") || strstr(t, "  lr ") || !strstr(t, "  commit "))
        fail_msg("%s", t);
    free(t);
}

/* --replot prints a line naming each figure it wrote (stdout). */
static void test_replot_says_where(void **state)
{
    char out[512], re[512], csv[600], txt[600];
    rf_make_dir(out, sizeof out, "rp_src");
    rf_make_dir(re, sizeof re, "rp_out");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    snprintf(txt, sizeof txt, "%s/stdout.txt", rf_tmpdir);
    fflush(stdout);
    int saved = dup(1), fd = open(txt, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    close(fd);
    int rc = eng_replot(csv, re);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_int_equal(rc, 0);
    char *said = rf_slurp(rf_tmpdir, "stdout.txt");
    assert_non_null(said);
    char want[700];
    if (rf_have_gnuplot()) {
        const char *figs[] = {"extrapolation", "curves_copy", "curves_reverse"};
        for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
            snprintf(want, sizeof want, "train_order: wrote %s/%s.svg, .pdf, .png (data %s.dat, script %s.gp)\n", re,
                     figs[i], figs[i], figs[i]);
            if (!strstr(said, want)) fail_msg("--replot did not say '%s':\n%s", want, said);
            char name[64];
            snprintf(name, sizeof name, "%s.pdf", figs[i]);
            assert_true(rf_exists(re, name));
            snprintf(name, sizeof name, "%s.png", figs[i]);
            assert_true(rf_exists(re, name));
        }
    } else {
        snprintf(want, sizeof want, "(no gnuplot): %s/*.dat", re);
        if (!strstr(said, want)) fail_msg("--replot did not say '%s':\n%s", want, said);
    }
    free(said);
}

/* A task of its own geometry: the prompt x_1..x_n and a separator, one answer token; T(n) = n + 2. */
static int tail_prompt(int n) { return n + 1; }
static int tail_target(int n) { (void)n; return 1; }
static rg_status tail_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    for (int i = 0; i < n; i++) prompt[i] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
    prompt[n] = RG_TOK_SEP;
    target[0] = prompt[n - 1];
    return RG_OK;
}
static const rg_task_desc tail = {.name = "tail", .summary = "the last symbol", .vocab_size = RG_TASK_VOCAB,
                                  .prompt_len = tail_prompt, .target_len = tail_target, .sample = tail_sample};

/* The RoPE scaling notes give s = T(n)/T(L) and original_max_position_embeddings T(L) from the report's task's own
 * sequence length T (what the evaluation applies), and name each task of another T(L). */
static void test_scaling_note_from_the_task_geometry(void **state)
{
    rg_task tail_id, hints;
    assert_int_equal(rg_task_register(&tail, &tail_id), RG_OK);
    assert_int_equal(rg_task_register_tricks(), RG_OK);
    assert_int_equal(rg_task_parse("copy_hints", &hints), RG_OK);
    double e[4] = {1, 1, 0.5, 0}, acc[4] = {1, 1, 0.8, 0.3};
    int L = 16, TH = rg_task_total_len(hints, L);
    char want[4][256];
    snprintf(want[0], sizeof want[0], "factor s = (2n+3)/%d and original_max_position_embeddings %d; at n <= %d s = 1",
             2 * L + 3, 2 * L + 3, L);
    snprintf(want[1], sizeof want[1], "factor s = (n+2)/%d and original_max_position_embeddings %d; at n <= %d s = 1",
             L + 2, L + 2, L);
    snprintf(want[2], sizeof want[2], "original_max_position_embeddings %d; copy_hints: s = T(n)/%d and %d (T(n) its "
             "sequence length); at n <= %d", 2 * L + 3, TH, TH, L);
    snprintf(want[3], sizeof want[3], "as an HF rope_scaling config does, with original_max_position_embeddings %d; "
             "copy_hints: %d\n", 2 * L + 3, TH);
    struct { const char *name; rg_task task[2]; double factor; const char *want; } cases[] = {
        {"geometry_copy", {RG_TASK_COPY, -1}, 0, want[0]},
        {"geometry_tail", {tail_id, -1}, 0, want[1]},
        {"geometry_hints", {RG_TASK_COPY, hints}, 0, want[2]},
        {"geometry_fixed", {RG_TASK_COPY, hints}, 4, want[3]},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        eng_result res[4];
        int n = 0;
        for (int k = 0; k < 2 && cases[c].task[k] >= 0; k++)
            for (int x = 0; x < 2; x++) {
                res[n] = rf_result(cases[c].task[k], RG_POS_ROPE, x ? RG_ROPE_EXT_YARN : RG_ROPE_EXT_NONE, 1, e, acc);
                res[n++].ext_factor = x ? cases[c].factor : 0;
            }
        eng_options o = rf_options("");
        assert_int_equal(o.train_len, L);
        char *md = report_md(cases[c].name, &o, res, n);
        assert_non_null(md);
        if (!strstr(md, cases[c].want)) fail_msg("case %s: no '%s' in:\n%s", cases[c].name, cases[c].want, md);
        free(md);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes_only_for_what_the_report_holds),
        cmocka_unit_test(test_scaling_note_from_the_task_geometry),
        cmocka_unit_test(test_compare_settings_diff_and_zero_width),
        cmocka_unit_test(test_replot_says_where),
    };
    return cmocka_run_group_tests(tests, rf_setup, rf_teardown);
}
