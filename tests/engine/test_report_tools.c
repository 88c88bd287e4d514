/* test_report_tools.c: reading reports back (report.h): re-plotting from report.csv and report.json, validation
 * of hostile and mutated report files, comparing two reports cell by cell, the training variants as rows in every
 * output, and the steps-to-learn column. The written report itself: test_report.c. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "report_fixture.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------------------ replot and hostile report.csv files */

static void test_replot_from_csv_and_json(void **state)
{
    char out[512], re[512], re2[512], csv[600], json[600];
    rf_make_dir(out, sizeof out, "orig");
    rf_make_dir(re, sizeof re, "replot");
    rf_make_dir(re2, sizeof re2, "replot_json");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    snprintf(json, sizeof json, "%s/report.json", out);
    assert_int_equal(eng_replot(csv, re), 0);
    assert_int_equal(eng_replot(json, re2), 0);
    /* the same cells as the original report, to the digits the data files hold */
    const char *same[] = {"extrapolation.dat", "curves_copy.dat", "curves_reverse.dat"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        char *a = rf_slurp(out, same[i]), *b = rf_slurp(re, same[i]), *c = rf_slurp(re2, same[i]);
        assert_non_null(a);
        if (!b || strcmp(a, b) != 0) fail_msg("replot from CSV: %s differs", same[i]);
        if (!c || strcmp(a, c) != 0) fail_msg("replot from JSON: %s differs", same[i]);
        free(a); free(b); free(c);
    }
    if (rf_have_gnuplot()) assert_true(rf_complete_svg(re, "extrapolation.svg") && rf_complete_svg(re, "curves_copy.svg"));
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nope", rf_tmpdir);
    char *msg;
    assert_int_equal(RF_CAPTURE(&msg, eng_replot(csv, missing)), -1);
    assert_non_null(strstr(msg, missing));
    free(msg);
}

static void test_hostile_report_csv_is_refused(void **state)
{
    static const char *H = "task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc,train_len\n";
    static const char *OK = "copy,rope,none,1,300,0.1,10,8,1,1,16\n";
    static const struct { const char *body, *why; } cases[] = {
        {"", "empty file"},
        {"task,encoding\ncopy,rope\n", "line 1: not a report.csv header"},
        {"copy,rope,none,1,300,0.1,10,8,1,1\n", "line 3: 10 fields, expected 11"},
        {"copy,rope,none,1,300,0.1,10,8,1,1,16,9\n", "line 3: 12 fields"},
        {"fly,rope,none,1,300,0.1,10,16,1,1,16\n", "line 3: unknown task"},
        {"copy,rope;rm,none,1,300,0.1,10,16,1,1,16\n", "line 3: unknown encoding"},
        {"copy,rope,zz,1,300,0.1,10,16,1,1,16\n", "line 3: unknown rope_ext"},
        {"copy,rope,none,1,300,0.1,10,16,1.5,1,16\n", "line 3: exact_match is not in [0, 1]"},
        {"copy,rope,none,1,300,0.1,10,16,0.5,-0.1,16\n", "line 3: token_acc is not in [0, 1]"},
        {"copy,rope,none,1,300,0.1,10,8,1,1,16\n", "line 3: n = 8 appears twice"},
        {"copy,rope,none,1,300,0.1,10,0,1,1,16\n", "line 3: n is not an integer"},
        {"copy,rope,none,1,300,0.1,10,100001,1,1,16\n", "line 3: n is not an integer"},
        {"copy,rope,none,1.5,300,0.1,10,16,1,1,16\n", "line 3: seed is not an integer"},
        {"copy,rope,none,-1,300,0.1,10,16,1,1,16\n", "line 3: seed is not an integer"},
        {"copy,rope,none,1,300,0.1,10,16,1,1,17\n", "line 3: train_len"},
        {"copy,rope,none,1,300,0.1,10,16,1,1,16x\n", "line 3: field 11 '16x' (train_len) is not a number"},
        {"copy,rope,yarn:0.5,1,300,0.1,10,16,1,1,16\n", "line 3: unknown rope_ext"},
        {"copy,rope,yarn:4x,1,300,0.1,10,16,1,1,16\n", "line 3: unknown rope_ext"},
        {"copy,rope,none,1,300,inf,10,16,1,1,16\n", "line 3: final_loss"},
        {"copy,rope,none,1,300,0.1,1e999,16,1,1,16\n", "line 3: field 7"},
        {"copy,rope,none,1,300,0.1,10,16,nan,0.5,16\n", "line 3: exact_match and token_acc"},
    };
    char path[600];
    snprintf(path, sizeof path, "%s/hostile.csv", rf_tmpdir);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        if (i == 0) fputs(cases[i].body, f);
        else if (i == 1) fputs(cases[i].body, f);
        else fprintf(f, "%s%s%s", H, OK, cases[i].body);
        fclose(f);
        char *msg;
        int rc = RF_CAPTURE(&msg, eng_replot(path, rf_tmpdir));
        if (rc != -1) fail_msg("case %zu (%s): accepted", i, cases[i].why);
        if (!strstr(msg, path) || !strstr(msg, cases[i].why))
            fail_msg("case %zu: the message does not name the file and \"%s\":\n%s", i, cases[i].why, msg);
        free(msg);
    }
    /* a line longer than the reader's buffer */
    FILE *f = fopen(path, "w");
    fprintf(f, "%s%s", H, OK);
    for (int i = 0; i < 3000; i++) fputc('1', f);
    fputc('\n', f);
    fclose(f);
    char *msg;
    assert_int_equal(RF_CAPTURE(&msg, eng_replot(path, rf_tmpdir)), -1);
    assert_non_null(strstr(msg, "line 3: line too long"));
    free(msg);
    /* a JSON that is not a report */
    snprintf(path, sizeof path, "%s/hostile.json", rf_tmpdir);
    const char *js[] = {"{", "[]", "{\"runs\": [], \"config\": {\"train_len\": 0}}",
                        "{\"runs\": [{\"task\": \"copy\"}], \"config\": {\"train_len\": 16}}",
                        "{\"runs\": [{\"task\": \"copy\", \"encoding\": \"rope\", \"rope_ext\": \"none\", \"seed\": 1, "
                        "\"steps\": 1, \"final_loss\": null, \"train_seconds\": 1, \"results\": [{\"n\": 8, "
                        "\"exact_match\": 2, \"token_acc\": 1}]}], \"config\": {\"train_len\": 16}}"};
    for (size_t i = 0; i < sizeof js / sizeof *js; i++) {
        f = fopen(path, "w");
        fputs(js[i], f);
        fclose(f);
        assert_int_equal(RF_CAPTURE(&msg, eng_replot(path, rf_tmpdir)), -1);
        if (!strstr(msg, path)) fail_msg("json case %zu: %s", i, msg);
        free(msg);
    }
}

/* Seeded mutations of a valid report.csv and report.json (bytes replaced, inserted, deleted; lines cut): every load
 * returns 0 or -1 and never crashes (the sanitizer build checks the memory accesses); a load that succeeds gives
 * results within the validated ranges. */
static void test_mutated_reports_load_or_fail_cleanly(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "mutate");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    const char *names[] = {"report.csv", "report.json"};
    static const char alphabet[] = "0123456789,.-+eEnaNi\"{}[]:\n \xff";
    rg_rng rng;
    rg_rng_seed(&rng, 2026, 16);
    int accepted = 0, refused = 0;
    for (int f = 0; f < 2; f++) {
        char *orig = rf_slurp(out, names[f]);
        size_t len = strlen(orig);
        char *buf = malloc(len + 64), path[600];
        snprintf(path, sizeof path, "%s/m_%s", rf_tmpdir, names[f]);
        for (int it = 0; it < 150; it++) {
            memcpy(buf, orig, len + 1);
            size_t n = len;
            for (int k = 0, edits = 1 + (int)rg_rng_below(&rng, 3); k < edits && n > 1; k++) {
                size_t at = rg_rng_below(&rng, (uint32_t)n);
                char c = alphabet[rg_rng_below(&rng, sizeof alphabet - 1)];
                switch (rg_rng_below(&rng, 4)) {
                case 0: buf[at] = c; break;
                case 1: memmove(buf + at + 1, buf + at, n - at + 1); buf[at] = c; n++; break;
                case 2: memmove(buf + at, buf + at + 1, n - at); n--; break;
                default: buf[at] = 0; n = at; break;
                }
            }
            FILE *fp = fopen(path, "wb");
            fwrite(buf, 1, n, fp);
            fclose(fp);
            eng_result *res = NULL;
            int n_res = 0, train_len = 0;
            char *msg;
            int rc = RF_CAPTURE(&msg, eng_report_load(path, &res, &n_res, &train_len));
            free(msg);
            if (rc == 0) {
                accepted++;
                assert_true(n_res > 0 && train_len >= 0 && train_len <= 1000);
                for (int i = 0; i < n_res; i++) {
                    assert_true(res[i].n_lens >= 1 && res[i].n_lens <= ENG_MAX_LENS);
                    for (int j = 0; j < res[i].n_lens; j++) {
                        assert_true(res[i].lens[j] >= 1 && res[i].lens[j] <= RG_TASK_MAX_N);
                        assert_true(isnan(res[i].exact[j]) || (res[i].exact[j] >= 0 && res[i].exact[j] <= 1));
                    }
                }
            } else {
                assert_int_equal(rc, -1);
                assert_null(res);
                refused++;
            }
            free(res);
        }
        free(buf);
        free(orig);
    }
    print_message("mutated reports: %d loaded, %d refused\n", accepted, refused);
    assert_true(refused > 0 && accepted > 0);
}

/* ------------------------------------------------------------------ compare */

static void test_compare_two_reports(void **state)
{
    char out[512], a[600], aj[600], b[600];
    rf_make_dir(out, sizeof out, "cmp");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    snprintf(a, sizeof a, "%s/report.csv", out);
    snprintf(aj, sizeof aj, "%s/report.json", out);
    /* B: copy/alibi at n = 24 reaches 0.9, 0.95, 1.0 (no overlap with A's [0, 0.363]); at n = 8 the same as A
     * (overlap); copy/t5 only in B */
    snprintf(b, sizeof b, "%s/b.csv", rf_tmpdir);
    FILE *f = fopen(b, "w");
    fprintf(f, "task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc,train_len\n");
    for (int s = 1; s <= 3; s++) {
        fprintf(f, "copy,alibi,none,%d,300,0.1,10,8,1,1,16\n", s);
        fprintf(f, "copy,alibi,none,%d,300,0.1,10,24,%g,0.99,16\n", s, 0.85 + 0.05 * s);
        fprintf(f, "copy,t5,none,%d,300,0.1,10,8,0.5,0.9,16\n", s);
    }
    fclose(f);
    /* one seed each: the same value is "the same", a different one has no interval to compare */
    char c1[512], c2[512];
    snprintf(c1, sizeof c1, "%s/c1.csv", rf_tmpdir);
    snprintf(c2, sizeof c2, "%s/c2.csv", rf_tmpdir);
    for (int k = 0; k < 2; k++) {
        FILE *g = fopen(k ? c2 : c1, "w");
        fprintf(g, "task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc,train_len\n"
                   "copy,alibi,none,1,300,0.1,10,8,1,1,16\ncopy,alibi,none,1,300,0.1,10,24,%g,0.5,16\n", k ? 0.25 : 0.5);
        fclose(g);
    }
    char *one = rf_compare_text(c1, c2);
    if (!strstr(one, "1/1                        yes (every seed of both the same value)\n") ||
        !strstr(one, "n/a (needs 2 seeds each)\n"))
    {
        fprintf(stderr, "%s", one);
        fail_msg("one seed each: the verdicts above");
    }
    free(one);
    char *t = rf_compare_text(a, b);
    const char *must[] = {
        /* the maximum over seeds and the median (one mean hides a bimodal cell) */
        "copy     alibi                  24  0.102 [0.000, 0.363]    1/6 max 0.610 med 0.000    0.950 [0.826, 1.000]    3/3 max 1.000 med 0.950    NO\n",
        "copy     alibi                   8  1.000 [1.000, 1.000]    6/6 max 1.000 med 1.000    1.000 [1.000, 1.000]    3/3 max 1.000 med 1.000    yes (every seed of both the same value)\n",
        "copy     rope+pi                24  0.610 (1 seed)          1/1                        -                                                  n/a (one report only)\n",
        "copy     t5                      8  -",
        "1 exact-match and 1 token-accuracy cells whose intervals do not overlap"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (!strstr(t, must[i])) fail_msg("the comparison lacks\n%s\n---\n%s", must[i], t);
    free(t);
    /* a report against itself, CSV against JSON: every interval overlaps */
    t = rf_compare_text(a, aj);
    if (!strstr(t, "\n0 exact-match and 0 token-accuracy cells whose intervals do not overlap")) fail_msg("%s", t);
    free(t);
}

/* Training variants and fixed RoPE factors are rows of their own in every output, and survive a reload; an older
 * report.csv (no variant column) loads as the base variant; an unknown variant or column is refused. */
static void test_variants_are_rows_everywhere(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "variants");
    eng_result res[8];
    int n = 0;
    double e[4] = {1, 1, 0.5, 0}, a[4] = {1, 1, 0.8, 0.3}, e2[4] = {1, 1, 0.9, 0.4};
    res[n++] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e, a);
    res[n] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e2, a);
    res[n++].variant = ENG_VAR_THETA500K;
    res[n] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 1, e2, a);
    res[n++].variant = ENG_VAR_RAND;
    res[n] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_YARN, 1, e2, a);
    res[n++].ext_factor = 4;
    res[n++] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_YARN, 1, e, a);
    res[0].generated[2] = true;
    eng_options o = rf_options(out);
    eng_report_meta meta = {1, "t", false, 0, 0, NULL};
    assert_int_equal(eng_report(&o, res, n, &meta), 0);
    char *md = rf_slurp(out, "report.md"), *csv = rf_slurp(out, "report.csv"), *js = rf_slurp(out, "report.json");
    const char *md_rows[] = {"| rope | 1 |", "| rope+yarn | 1 |", "| rope+yarn:4 | 1 |", "| rope θ=500k | 1 |",
                             "| alibi+rand | 1 |"};
    for (size_t i = 0; i < sizeof md_rows / sizeof *md_rows; i++)
        if (!strstr(md, md_rows[i])) fail_msg("report.md lacks '%s':\n%s", md_rows[i], md);
    assert_non_null(strstr(md, "copy: test sets generated (not in the data file; same generator and seed rule): n=24"));
    const char *csv_rows[] = {"copy,rope,base,none,1,", "copy,rope,theta500k,none,1,", "copy,alibi,rand,none,1,",
                              "copy,rope,base,yarn:4,1,", ",24,0.5,0.8,16,1,0\n", ",24,0.9,0.8,16,0,0\n"};
    for (size_t i = 0; i < sizeof csv_rows / sizeof *csv_rows; i++)
        if (!strstr(csv, csv_rows[i])) fail_msg("report.csv lacks '%s':\n%s", csv_rows[i], csv);
    const char *js_keys[] = {"\"label\":\t\"rope θ=500k\"", "\"label\":\t\"alibi+rand\"", "\"variant\":\t\"rand\"",
                             "\"rope_ext\":\t\"yarn:4\""};
    for (size_t i = 0; i < sizeof js_keys / sizeof *js_keys; i++)
        if (!strstr(js, js_keys[i])) fail_msg("report.json lacks '%s'", js_keys[i]);
    free(md);
    free(csv);
    free(js);
    /* CSV and JSON read back with the same identities and values */
    const char *files[] = {"report.csv", "report.json"};
    for (int f = 0; f < 2; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", out, files[f]);
        eng_result *back;
        int nb, tl;
        assert_int_equal(eng_report_load(path, &back, &nb, &tl), 0);
        assert_int_equal(nb, n);
        for (int i = 0; i < n; i++) {
            assert_int_equal(back[i].variant, res[i].variant);
            assert_int_equal(back[i].ext, res[i].ext);
            assert_true(back[i].ext_factor == res[i].ext_factor);
            assert_true(back[i].exact[2] == res[i].exact[2]);
            assert_int_equal(back[i].generated[2], res[i].generated[2]);
        }
        free(back);
    }
    /* an older CSV (no variant, no generated) loads as base; bad variants and columns are refused */
    char path[600];
    snprintf(path, sizeof path, "%s/variants.csv", rf_tmpdir);
    struct { const char *text; int rc; const char *why; } cases[] = {
        {"task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n"
         "copy,rope,none,1,300,0.1,10,8,1,1\n", 0, NULL},
        {ENG_CSV_HEADER "\ncopy,rope,fast,none,1,300,0.1,10,8,1,1,16,0,0\n", -1, "line 2: unknown variant"},
        {ENG_CSV_HEADER "\ncopy,rope,base,none,1,300,0.1,10,8,1,1,16,2,0\n", -1, "line 2: generated is not 0 or 1"},
        {"task,encoding,colour,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n", -1,
         "line 1: not a report.csv header (column 'colour')"},
        {"task,encoding,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n", -1,
         "line 1: not a report.csv header (no column rope_ext)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i].text, f);
        fclose(f);
        eng_result *back = NULL;
        int nb, tl;
        char *msg;
        int rc = RF_CAPTURE(&msg, eng_report_load(path, &back, &nb, &tl));
        if (rc != cases[i].rc || (cases[i].why && !strstr(msg, cases[i].why)))
            fail_msg("case %zu: rc %d:\n%s", i, rc, msg);
        if (rc == 0) assert_int_equal(back[0].variant, ENG_VAR_BASE);
        free(back);
        free(msg);
    }
}

/* Steps-to-learn: the column appears when a run measured it; mean (median) over the seeds that reached 0.99, k/N of
 * the measured ones, "not within S" when none did; it survives CSV and JSON; a bad value in a file is refused. */
static void test_steps_to_learn_column(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "learn");
    eng_result res[8];
    int n = 0;
    double e[4] = {1, 1, 0.5, 0}, a[4] = {1, 1, 0.8, 0.3};
    int64_t alibi[3] = {1200, -1, 1000}, none[2] = {-1, -1}, rope[3] = {700, 900, 200};
    for (int s = 0; s < 3; s++) {
        res[n] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, s + 1, e, a);
        res[n].steps = 3000;
        res[n++].steps_to_learn = alibi[s];
    }
    for (int s = 0; s < 2; s++) {
        res[n] = rf_result(RG_TASK_COPY, RG_POS_NONE, RG_ROPE_EXT_NONE, s + 1, e, a);
        res[n].steps = 3000;
        res[n++].steps_to_learn = none[s];
    }
    for (int s = 0; s < 3; s++) {
        res[n] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, s + 1, e, a);
        res[n].steps = 3000;
        res[n++].steps_to_learn = rope[s];
    }
    eng_options o = rf_options(out);
    o.eval_every = 100;
    eng_report_meta meta = {1, "t", false, 0, 0, NULL};
    assert_int_equal(eng_report(&o, res, n, &meta), 0);
    char *md = rf_slurp(out, "report.md");
    const char *must[] = {" steps to 0.99 |\n", "[0.000, 0.000] · 0/3 | 1100 (median 1100) · 2/3 |\n",
                          "[0.000, 0.000] · 0/2 | not within 3000 · 0/2 |\n",
                          "[0.000, 0.000] · 0/3 | 600 (median 700) · 3/3 |\n"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (!strstr(md, must[i]))
            fail_msg("report.md lacks '%s':\n%s", must[i], strstr(md, "### copy") ? strstr(md, "### copy") : md);
    free(md);
    const char *files[] = {"report.csv", "report.json"};
    for (int f = 0; f < 2; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", out, files[f]);
        eng_result *back;
        int nb, tl;
        assert_int_equal(eng_report_load(path, &back, &nb, &tl), 0);
        assert_int_equal(nb, n);
        for (int i = 0; i < n; i++) assert_int_equal(back[i].steps_to_learn, res[i].steps_to_learn);
        free(back);
    }
    /* the fixture without measurements has no such column */
    char out2[512];
    rf_make_dir(out2, sizeof out2, "learn_none");
    assert_int_equal(rf_write_fixture_report(out2, false), 0);
    md = rf_slurp(out2, "report.md");
    assert_null(strstr(md, "steps to 0.99"));
    free(md);
    char path[600];
    snprintf(path, sizeof path, "%s/learn.csv", rf_tmpdir);
    const char *bad[] = {"5000", "-2", "1.5", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        fprintf(f, ENG_CSV_HEADER "\ncopy,rope,base,none,1,3000,0.1,10,8,1,1,16,0,%s\n", bad[i]);
        fclose(f);
        eng_result *back = NULL;
        int nb, tl;
        char *msg;
        assert_int_equal(RF_CAPTURE(&msg, eng_report_load(path, &back, &nb, &tl)), -1);
        if (!strstr(msg, "line 2")) fail_msg("'%s': %s", bad[i], msg);
        free(msg);
        free(back);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replot_from_csv_and_json),
        cmocka_unit_test(test_hostile_report_csv_is_refused),
        cmocka_unit_test(test_mutated_reports_load_or_fail_cleanly),
        cmocka_unit_test(test_compare_two_reports),
        cmocka_unit_test(test_variants_are_rows_everywhere),
        cmocka_unit_test(test_steps_to_learn_column),
    };
    return cmocka_run_group_tests(tests, rf_setup, rf_teardown);
}
