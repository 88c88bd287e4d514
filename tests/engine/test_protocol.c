/* test_protocol.c: the experiment protocol (docs/protocol.md, src/engine/protocol.c, report_protocol.c, the
 * --extrap-every log of run.c): the per-position accounting on a hand-built case and over a report's seeds, the
 * default test lengths and T5's fair max_distance, the maximum and median over seeds, and one real run in process
 * whose over-training log and per-position counts are checked against the library's own greedy decoding of its
 * checkpoint (rg_generate, rg_evaluate) and an independent recount. */
#include "report_fixture.h"
#include "task/tricks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/checkpoint.h"
#include "nn/generate.h"

/* ------------------------------------------------------------------ the accounting, by hand */

/* Five outputs of n = 3 (m = 4 positions, the last the EOS) against one expected row: the engine's counts and the
 * library's rg_position_counts. */
static void test_position_count_hand_built(void **state)
{
    const int32_t want[5 * 4] = {5, 6, 7, 3, 5, 6, 7, 3, 5, 6, 7, 3, 5, 6, 7, 3, 5, 6, 7, 3};
    const int32_t gen[5 * 4] = {
        5, 6, 7, 3,   /* all right */
        9, 6, 7, 3,   /* wrong at 1 only */
        5, 6, 9, 9,   /* wrong at 3 and 4 */
        5, 6, 7, 8,   /* the EOS wrong */
        9, 9, 9, 9};  /* all wrong */
    uint16_t right[4] = {0}, first[5] = {0};
    eng_position_count(gen, want, 5, 4, right, first);
    const uint16_t want_right[4] = {3, 4, 3, 2}, want_first[5] = {2, 0, 1, 1, 1};
    for (int p = 0; p < 4; p++) assert_int_equal(right[p], want_right[p]);
    for (int p = 0; p < 5; p++) assert_int_equal(first[p], want_first[p]);
    eng_position_count(gen, want, 5, 4, right, first); /* it adds */
    for (int p = 0; p < 4; p++) assert_int_equal(right[p], 2 * want_right[p]);
    assert_int_equal(first[4], 2);
    int64_t r64[4] = {0}, f64[5] = {0}; /* the library's function (generate.h) the engine adds from */
    rg_position_counts(gen, want, 5, 4, r64, f64);
    for (int p = 0; p < 4; p++) assert_int_equal(r64[p], want_right[p]);
    for (int p = 0; p < 5; p++) assert_int_equal(f64[p], want_first[p]);
    rg_position_counts(gen, want, 0, 4, r64, f64); /* no rows: nothing added */
    rg_position_counts(gen + 4, want + 4, 1, 4, r64, f64); /* row 2 alone: wrong at position 1 */
    assert_int_equal(r64[0], want_right[0]);
    assert_int_equal(f64[0], want_first[0] + 1);
}

/* Over a row's seeds: accuracy is the mean of the seeds' fractions, first_wrong and all_right are pooled. */
static void test_cell_positions_over_seeds(void **state)
{
    eng_result res[2];
    double e[4] = {0}, a[4] = {0};
    for (int s = 0; s < 2; s++) res[s] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, s + 1, e, a);
    /* RF_LENS[0] = 8: 9 positions; seed 1 of 4 samples, seed 2 of 2 */
    res[0].pos_count[0] = 4;
    res[1].pos_count[0] = 2;
    for (int p = 0; p < 9; p++) { res[0].pos_right[0][p] = p < 4 ? 4 : 1; res[1].pos_right[0][p] = p < 2 ? 2 : 0; }
    res[0].first_wrong[0][4] = 3; res[0].first_wrong[0][9] = 1;
    res[1].first_wrong[0][2] = 2;
    eng_table t;
    assert_int_equal(eng_table_build(&t, res, 2, 16), 0);
    double acc[ENG_POS_MAX], fw[ENG_POS_MAX], all;
    assert_int_equal(eng_cell_positions(&t, &t.rows[0], 8, acc, fw, &all), 2);
    assert_true(fabs(acc[0] - 1.0) < 1e-12);                   /* (4/4 + 2/2) / 2 */
    assert_true(fabs(acc[3] - 0.5) < 1e-12);                   /* (4/4 + 0/2) / 2 */
    assert_true(fabs(acc[8] - 0.125) < 1e-12);                 /* (1/4 + 0/2) / 2 */
    assert_true(fabs(fw[2] - 2.0 / 6) < 1e-12 && fabs(fw[4] - 3.0 / 6) < 1e-12 && fw[0] == 0);
    assert_true(fabs(all - 1.0 / 6) < 1e-12);
    assert_int_equal(eng_cell_positions(&t, &t.rows[0], 16, acc, fw, &all), 0); /* no counts at n = 16 */
    eng_table_free(&t);
}

/* ------------------------------------------------------------------ lengths, T5, statistics */

static void test_default_test_lens(void **state)
{
    static const struct { int L, n, lens[ENG_MAX_LENS]; } cases[] = {
        {16, 13, {8, 16, 17, 18, 19, 20, 21, 22, 23, 24, 32, 48, 64}},
        {32, 21, {16, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 64, 96, 128}},
        {4, 7, {2, 4, 5, 6, 8, 12, 16}},
        {1, 4, {1, 2, 3, 4}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int lens[ENG_MAX_LENS], n = eng_default_test_lens(cases[i].L, lens);
        assert_int_equal(n, cases[i].n);
        for (int j = 0; j < n; j++)
            if (lens[j] != cases[i].lens[j]) fail_msg("L=%d: lens[%d] = %d, want %d", cases[i].L, j, lens[j], cases[i].lens[j]);
    }
    /* a long training length: the dense window is cut so that everything fits, nothing passes ENG_MAX_TEST_N */
    int lens[ENG_MAX_LENS], n = eng_default_test_lens(500, lens);
    assert_true(n <= ENG_MAX_LENS);
    for (int j = 1; j < n; j++) assert_true(lens[j] > lens[j - 1] && lens[j] <= ENG_MAX_TEST_N);
    assert_int_equal(lens[0], 250);
    assert_int_equal(lens[2], 501);
}

/* With the fair max_distance every bucket that any distance reads was reached by a training distance (0..2L+1),
 * and every longer distance reads the last bucket (for L >= 8); 128 makes test distances read buckets training never reached. */
static void test_t5_fair_max_distance(void **state)
{
    rg_model_config c = {0}; /* the declared defaults: 32 buckets */
    assert_int_equal(eng_fair_max_distance(&c, RG_POS_T5, 2 * 16 + 1), 33);
    assert_int_equal(eng_fair_max_distance(&c, RG_POS_T5, 2 * 32 + 1), 65);
    assert_int_equal(eng_fair_max_distance(&c, RG_POS_T5, 2 * 4 + 1), 17); /* the model's floor num_buckets / 2 + 1 */
    for (int L = 8; L <= 64; L *= 2) { /* below 8 the exact buckets 2L+2..15 are never trained: no max_distance helps */
        int d = eng_fair_max_distance(&c, RG_POS_T5, 2 * L + 1);
        bool trained[32] = {false}, legacy[32] = {false};
        for (int k = 0; k <= 2 * L + 1; k++) {
            trained[rg_t5_bucket(-k, false, 32, d)] = true;
            legacy[rg_t5_bucket(-k, false, 32, ENG_T5_LEGACY_MAX_DISTANCE)] = true;
        }
        bool legacy_gap = false;
        for (int k = 0; k < 2000; k++) {
            if (!trained[rg_t5_bucket(-k, false, 32, d)]) fail_msg("L=%d: distance %d reads an untrained bucket", L, k);
            legacy_gap |= !legacy[rg_t5_bucket(-k, false, 32, ENG_T5_LEGACY_MAX_DISTANCE)];
        }
        assert_int_equal(rg_t5_bucket(-(2 * L + 2), false, 32, d), 31);
        if (2 * L + 1 < ENG_T5_LEGACY_MAX_DISTANCE) assert_true(legacy_gap); /* L = 64 reaches 128 in training */
    }
}

static void test_stat_max_median(void **state)
{
    static const struct { double v[6]; int n; double max, median; } cases[] = {
        {{0, 0, 0, 0, 0, 0.61}, 6, 0.61, 0},
        {{0.2, 0.9, 0.4}, 3, 0.9, 0.4},
        {{0.7, NAN, 0.5}, 3, 0.7, 0.6},   /* NaN skipped: two values, the median their mean */
        {{0.25}, 1, 0.25, 0.25},
        {{0.1, 0.3, 0.2, 0.4}, 4, 0.4, 0.25},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        eng_stat s;
        eng_stat_compute(cases[i].v, cases[i].n, 3, &s);
        if (fabs(s.max - cases[i].max) > 1e-12 || fabs(s.median - cases[i].median) > 1e-12)
            fail_msg("case %zu: max %g median %g, want %g %g", i, s.max, s.median, cases[i].max, cases[i].median);
    }
    double none[2] = {NAN, NAN};
    eng_stat s;
    eng_stat_compute(none, 2, 3, &s);
    assert_true(isnan(s.max) && isnan(s.median));
    /* sorting for the median leaves the bootstrap (which resamples in the seeds' order) as it was */
    double v[3] = {0.9, 0.1, 0.5};
    double lo, hi;
    eng_stat_compute(v, 3, 11, &s);
    eng_bootstrap_ci(v, 3, ENG_BOOT_REPS, 11, ENG_CI_LEVEL, &lo, &hi);
    assert_true(s.boot_lo == lo && s.boot_hi == hi);
}

/* ------------------------------------------------------------------ one real run */

/* The rows of extrap.csv at `step` as n -> (exact, token) into em/acc indexed by slot of lens; returns the lines. */
static int extrap_rows(const char *text, int step, const int *lens, int n_lens, double *em, double *acc)
{
    int lines = 0;
    for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        int s, n;
        double e, a;
        lines++;
        if (sscanf(p + 1, "%d,%d,%lf,%lf", &s, &n, &e, &a) != 4 || s != step) continue;
        for (int j = 0; j < n_lens; j++)
            if (lens[j] == n) { em[j] = e; acc[j] = a; }
    }
    return lines;
}

static void test_run_logs_over_training_and_counts_positions(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "run");
    eng_options o;
    eng_options_default(&o);
    o.steps = 40;
    o.batch = 8;
    o.train_len = 4;
    o.extrap_every = 20;
    o.eval_every = 0;
    o.quiet = true;
    o.jobs = 1;
    o.n_exts = 0;
    snprintf(o.out, sizeof o.out, "%s", out);
    eng_options_check(&o);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/ckpt", out);
    assert_int_equal(eng_make_dir(sub), 0); /* eng_outdir_claim makes it for a whole invocation */
    const int lens[2] = {4, 8};
    memcpy(o.test_lens, lens, sizeof lens);
    o.n_test_lens = 2;
    eng_job job = {RG_TASK_COPY, RG_POS_ALIBI, ENG_VAR_BASE, 1, 0};
    static eng_result res[1 + ENG_MAX_EXTS];
    assert_int_equal(eng_run(&o, &job, res), 1);

    /* the log: a header, then steps 20 and 40 at both lengths */
    char *text = rf_slurp(out, "runs/copy-alibi-seed1/extrap.csv");
    assert_non_null(text);
    assert_int_equal(strncmp(text, "step,n,exact_match,token_acc\n20,4,", 34), 0);
    double em[2] = {NAN, NAN}, acc[2] = {NAN, NAN};
    assert_int_equal(extrap_rows(text, 40, lens, 2, em, acc), 4);
    free(text);

    /* the library's greedy decoding of the saved model on the first ENG_CURVE_COUNT samples gives the last row */
    char ckpt[700];
    snprintf(ckpt, sizeof ckpt, "%s/ckpt/copy-alibi-seed1.h5", out);
    rg_model_config cfg;
    static rg_run_state rs;
    rg_model *m;
    rg_adamw opt;
    assert_int_equal(rg_checkpoint_read_config(ckpt, &cfg, &rs), RG_OK);
    assert_int_equal(rg_model_new(&cfg, 1, &m), RG_OK);
    assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    assert_int_equal(rg_checkpoint_load(ckpt, m, &opt, &rs), RG_OK);
    for (int j = 0; j < 2; j++) {
        int n = lens[j], c = RG_EVAL_COUNT, G = n + 1;
        int32_t *x = malloc(sizeof(int32_t) * c * n), *y = malloc(sizeof(int32_t) * c * n);
        int32_t *prompts = malloc(sizeof(int32_t) * c * (n + 2)), *want = malloc(sizeof(int32_t) * c * G);
        int32_t *gen = malloc(sizeof(int32_t) * c * G);
        assert_int_equal(rg_evalset_make(RG_TASK_COPY, n, c, x, y), RG_OK);
        for (int i = 0; i < c; i++) {
            rg_task_prompt(x + i * n, n, prompts + i * (n + 2));
            rg_task_expected(RG_TASK_COPY, x + i * n, n, want + i * G);
        }
        double e, a;
        assert_int_equal(rg_evaluate(m, prompts, want, ENG_CURVE_COUNT, n + 2, G, 0, NULL, 16, &e, &a), RG_OK);
        if (fabs(e - em[j]) > 1e-5 || fabs(a - acc[j]) > 1e-5)
            fail_msg("n=%d: extrap.csv %g %g, the checkpoint %g %g", n, em[j], acc[j], e, a);
        /* the run's per-position counts of all RG_EVAL_COUNT samples, recounted here */
        assert_int_equal(rg_generate(m, prompts, c, n + 2, G, 0, NULL, 64, gen), RG_OK);
        assert_int_equal(res[0].pos_count[j], c);
        int first[ENG_POS_MAX + 1] = {0}, all_right = 0;
        for (int p = 0; p < G; p++) {
            int right = 0;
            for (int i = 0; i < c; i++) right += gen[i * G + p] == want[i * G + p];
            assert_int_equal(res[0].pos_right[j][p], right);
        }
        for (int i = 0; i < c; i++) {
            int p = 0;
            while (p < G && gen[i * G + p] == want[i * G + p]) p++;
            first[p]++;
            all_right += p == G;
        }
        for (int p = 0; p <= G; p++) assert_int_equal(res[0].first_wrong[j][p], first[p]);
        assert_true(fabs(res[0].exact[j] - (double)all_right / c) < 1e-12);
        free(x); free(y); free(prompts); free(want); free(gen);
    }
    rg_adamw_free(&opt);
    rg_model_free(m);

    /* the report: per-position lines and the max / median table */
    eng_report_meta meta = {1.0, "test", false, 0, 0, NULL};
    assert_int_equal(eng_report(&o, res, 1, &meta), 0);
    char *pos = rf_slurp(out, "report_positions.csv"), *md = rf_slurp(out, "report.md");
    assert_non_null(pos);
    assert_non_null(md);
    assert_int_equal(strncmp(pos, "task,encoding,variant,rope_ext,seed,n,position,samples,right,first_wrong\n"
                                  "copy,alibi,base,none,1,4,1,256,", 102), 0);
    assert_non_null(strstr(md, "exact match, maximum over seeds / median"));
    assert_non_null(strstr(md, "every run of every row was trained for the same 40 steps"));
    assert_non_null(strstr(md, "alibi: 4 heads, slopes 1/4, 1/16, 1/64, 1/256"));
    if (rf_have_gnuplot()) {
        assert_true(rf_complete_svg(out, "positions_copy.svg"));
        assert_true(rf_complete_svg(out, "over_training_copy.svg"));
    }
    free(pos);
    free(md);
}

/* An encoding the statement has no case for (kerple-log, like a program's registered one) is stated from its
 * descriptor: its formula line and its declared settings' values. */
static void test_registered_encoding_stated(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "kerple");
    eng_options o = rf_options(out);
    rg_pos_kind k;
    assert_int_equal(rg_pos_parse("kerple-log", &k), RG_OK);
    assert_int_equal(rg_pos_config_set_text(&o.model, "kerple_eps=0.05"), 0);
    double e[4] = {1, 0.5, 0, 0}, a[4] = {1, 0.9, 0.3, 0.1};
    eng_result r = rf_result(RG_TASK_COPY, k, RG_ROPE_EXT_NONE, 1, e, a);
    o.tasks[RG_TASK_COPY] = o.pos[k] = true;
    o.seed_list[o.n_seeds++] = 1;
    eng_report_meta meta = {1.0, "test", false, 0, 0, NULL};
    assert_int_equal(eng_report(&o, &r, 1, &meta), 0);
    char *md = rf_slurp(out, "report.md");
    assert_non_null(md);
    assert_non_null(strstr(md, "  - kerple-log: KERPLE log bias"));
    assert_non_null(strstr(md, "; settings: kerple_eps 0.05\n"));
    assert_null(strstr(md, "  - alibi:")); /* only the table's encodings */
    free(md);
}

/* The T5 statement against the longest training distance dmax, one case per line: the last bucket reached; a
 * max_distance past dmax (buckets never trained, named); dmax inside the exact buckets. */
static void test_t5_statement(void **state)
{
    const struct { int dmax, md; const char *want; } cases[] = {
        {33, 33, "max_distance 33: training distances reach the last bucket 31, so every longer distance reads a"},
        {39, 1000, "max_distance 1000: training distances reach bucket 19 only; buckets 20..31 are never trained and "
                   "are read at test distances past 39"},
        {7, 65, "training distances reach exact bucket 7 only, so test distances 8..15 read untrained exact buckets "
                "(no max_distance helps: a longest training distance below 16 never reaches the log buckets)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char out[512], cfg[64];
        rf_make_dir(out, sizeof out, "t5text");
        eng_options o = rf_options(out);
        snprintf(cfg, sizeof cfg, "t5_max_distance=%d", cases[k].md);
        assert_int_equal(rg_pos_config_set_text(&o.model, cfg), 0);
        eng_rows_held h = {{{false}}};
        h.held[RG_POS_T5][ENG_VAR_BASE] = true;
        eng_out w;
        assert_int_equal(eng_out_open(&w, out, "t5.md"), 0);
        eng_md_encoding_settings(&w, &o, &h, cases[k].dmax, "test");
        assert_int_equal(eng_out_close(&w), 0);
        char *md = rf_slurp(out, "t5.md");
        assert_non_null(md);
        if (!strstr(md, cases[k].want)) fail_msg("case %zu: no '%s' in:\n%s", k, cases[k].want, md);
        free(md);
    }
}

/* A trick task (copy_hints, whose descriptor's base is copy) beside its base: one table per pair, a row per
 * encoding both hold (rope only in the trick: no row), trick / base at each length; no section without a pair. */
static void test_tricks_beside_their_base(void **state)
{
    rg_task hints;
    if (rg_task_parse("copy_hints", &hints) != RG_OK) /* the engine registers the tricks at start */
        assert_int_equal(rg_task_register_tricks(), RG_OK);
    assert_int_equal(rg_task_parse("copy_hints", &hints), RG_OK);
    eng_result res[5];
    double e_base[4] = {1, 0.9, 0.1, 0}, e_trick[4] = {1, 1, 0.95, 0.4}, a[4] = {1, 1, 1, 1};
    res[0] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 1, e_base, a);
    res[1] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 2, e_base, a);
    res[2] = rf_result(hints, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 1, e_trick, a);
    res[3] = rf_result(hints, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 2, e_base, a);
    res[4] = rf_result(hints, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e_trick, a);
    for (int pass = 0; pass < 2; pass++) {
        char out[512];
        rf_make_dir(out, sizeof out, pass ? "tricks_alone" : "tricks");
        eng_options o = rf_options(out);
        o.tasks[RG_TASK_COPY] = !pass, o.tasks[hints] = true, o.pos[RG_POS_ALIBI] = o.pos[RG_POS_ROPE] = true;
        o.seed_list[o.n_seeds++] = 1, o.seed_list[o.n_seeds++] = 2;
        eng_report_meta meta = {1.0, "test", false, 0, 0, NULL};
        assert_int_equal(eng_report(&o, pass ? res + 2 : res, pass ? 3 : 5, &meta), 0);
        char *md = rf_slurp(out, "report.md");
        assert_non_null(md);
        if (pass) { /* no base task, and (the rope row) no shared encoding: no section, no empty table */
            assert_null(strstr(md, "## Tricks against their base tasks"));
        } else {
            const char *sec = strstr(md, "### copy_hints against copy\n\n| encoding | n=8 | n=16 (train) | n=24 | n=32 |");
            assert_non_null(sec);
            /* n = 24: trick seeds 0.95 and 0.1 (mean 0.525, 1 of 2 >= 0.5), base 0.1 twice */
            assert_non_null(strstr(sec, "| alibi | 1.000 (2/2) / 1.000 (2/2) | 0.950 (2/2) / 0.900 (2/2) | "
                                        "0.525 (1/2) / 0.100 (0/2) | 0.200 (0/2) / 0.000 (0/2) |\n"));
            assert_null(strstr(sec, "| rope |"));
        }
        free(md);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_position_count_hand_built),
        cmocka_unit_test(test_cell_positions_over_seeds),
        cmocka_unit_test(test_default_test_lens),
        cmocka_unit_test(test_t5_fair_max_distance),
        cmocka_unit_test(test_registered_encoding_stated),
        cmocka_unit_test(test_tricks_beside_their_base),
        cmocka_unit_test(test_t5_statement),
        cmocka_unit_test(test_stat_max_median),
        cmocka_unit_test(test_run_logs_over_training_and_counts_positions),
    };
    return cmocka_run_group_tests(tests, rf_setup, rf_teardown);
}
