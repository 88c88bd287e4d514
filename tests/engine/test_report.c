/* test_report.c: the report of examples/train_order (report.h): statistics over seeds (t quantiles and intervals
 * against values computed independently, bootstrap determinism, k/N), the contents of report.md/csv/json, a
 * partial report, the plots (no shell: an --out made to inject commands), and a full disk during the report
 * (RLIMIT_FSIZE at many sizes, and /dev/full). Re-plotting, hostile reports and comparing: test_report_tools.c. */
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

/* ------------------------------------------------------------------ statistics */

static void test_t_quantiles_match_independent_values(void **state)
{
    /* 0.975 quantiles by Simpson integration of the t density and bisection in Python (not the incomplete beta
     * function the code uses); to 10 decimals. Textbook tables agree to their 3 decimals (12.706, 4.303, ...). */
    static const struct { int df; double q; } cases[] = {
        {1, 12.7062047362}, {2, 4.3026527297}, {3, 3.1824463053}, {5, 2.5705818356}, {9, 2.2621571628},
        {29, 2.0452296421}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double q = eng_t_quantile(0.975, cases[i].df);
        if (fabs(q - cases[i].q) > 2e-9) fail_msg("t(0.975, %d) = %.10f, want %.10f", cases[i].df, q, cases[i].q);
        assert_true(fabs(eng_t_quantile(0.025, cases[i].df) + q) < 1e-12);
        assert_true(fabs(eng_t_cdf(q, cases[i].df) - 0.975) < 1e-10);
    }
    assert_true(fabs(eng_t_cdf(0, 4) - 0.5) < 1e-15);
    assert_true(fabs(eng_t_cdf(1, 1) - 0.75) < 1e-12); /* Cauchy: 1/2 + atan(1)/pi */
}

static void test_t_interval_known_values(void **state)
{
    /* expected values from Python (mean, sample sd, mean -+ t(0.975, n-1) sd / sqrt(n), then clipped to [0, 1]) */
    static const struct {
        double v[6];
        int n, k;
        double mean, sd, lo, hi;
    } cases[] = {
        {{0, 0, 0, 0, 0, 0.61}, 6, 1, 0.1016666666667, 0.2490314571830, 0.0, 0.3630091533},
        {{0.5, 0.6, 0.7}, 3, 3, 0.6, 0.1, 0.3515862288, 0.8484137712},
        {{0.9, 0.95, 1.0}, 3, 3, 0.95, 0.05, 0.8257931144, 1.0},
        {{0.2, 0.4, 0.9}, 3, 1, 0.5, 0.3605551275, 0.0, 1.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        eng_stat s;
        eng_stat_compute(cases[i].v, cases[i].n, 7, &s);
        assert_int_equal(s.n, cases[i].n);
        assert_int_equal(s.k, cases[i].k);
        if (fabs(s.mean - cases[i].mean) > 1e-9 || fabs(s.sd - cases[i].sd) > 1e-9 || fabs(s.lo - cases[i].lo) > 1e-9 ||
            fabs(s.hi - cases[i].hi) > 1e-9)
            fail_msg("case %zu: mean %.10f sd %.10f [%.10f, %.10f], want %.10f %.10f [%.10f, %.10f]", i, s.mean, s.sd,
                     s.lo, s.hi, cases[i].mean, cases[i].sd, cases[i].lo, cases[i].hi);
    }
}

static void test_one_seed_and_nan(void **state)
{
    eng_stat s;
    double one[1] = {0.61};
    eng_stat_compute(one, 1, 1, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.k, 1);
    assert_true(s.mean == 0.61 && isnan(s.sd) && isnan(s.lo) && isnan(s.hi) && isnan(s.boot_lo));
    double some[4] = {NAN, 0.2, NAN, 0.4};
    eng_stat_compute(some, 4, 1, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.k, 0);
    assert_true(fabs(s.mean - 0.3) < 1e-15);
    double none[2] = {NAN, NAN};
    eng_stat_compute(none, 2, 1, &s);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.mean));
}

static void test_k_of_n_threshold(void **state)
{
    static const struct { double v[5]; int n, k; } cases[] = {
        {{0.5, 0.4999, 1, 0, 0.75}, 5, 3}, {{0, 0, 0}, 3, 0}, {{1, 1}, 2, 2}, {{0.49, 0.51}, 2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        eng_stat s;
        eng_stat_compute(cases[i].v, cases[i].n, 1, &s);
        if (s.k != cases[i].k) fail_msg("case %zu: k = %d, want %d", i, s.k, cases[i].k);
    }
}

static void test_bootstrap_is_seeded_and_sane(void **state)
{
    double v[6] = {0, 0, 0, 0, 0, 0.61}, lo1, hi1, lo2, hi2, lo3, hi3;
    eng_bootstrap_ci(v, 6, ENG_BOOT_REPS, 42, 0.95, &lo1, &hi1);
    eng_bootstrap_ci(v, 6, ENG_BOOT_REPS, 42, 0.95, &lo2, &hi2);
    assert_true(lo1 == lo2 && hi1 == hi2); /* bit-identical for the same seed */
    /* the resampled mean takes values j * 0.61 / 6: P(no 0.61 drawn) = (5/6)^6 = 0.335 > 0.025, so lo = 0, and
     * P(at least 2 drawn) = 0.263 > 0.025 while P(at least 3) = 0.0623 > 0.025 and P(>= 4) = 0.0087: hi = 3 * 0.61/6 */
    assert_true(lo1 == 0);
    assert_true(fabs(hi1 - 3 * 0.61 / 6) < 1e-12);
    double w[5] = {0.1, 0.35, 0.4, 0.8, 0.9};
    eng_bootstrap_ci(w, 5, ENG_BOOT_REPS, 1, 0.95, &lo1, &hi1);
    eng_bootstrap_ci(w, 5, ENG_BOOT_REPS, 2, 0.95, &lo3, &hi3);
    assert_true(lo1 != lo3 || hi1 != hi3); /* another seed, other resamples */
    assert_true(lo1 > 0.1 && hi1 < 0.9 && lo1 < 0.51 && hi1 > 0.51);
    double c[3] = {0.7, 0.7, 0.7};
    eng_bootstrap_ci(c, 3, 1000, 5, 0.95, &lo1, &hi1);
    assert_true(fabs(lo1 - 0.7) < 1e-15 && fabs(hi1 - 0.7) < 1e-15);
    /* the cell seed depends on the cell only */
    assert_true(eng_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 24, true) ==
                eng_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 24, true));
    assert_true(eng_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 24, true) !=
                eng_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 32, true));
}

/* ------------------------------------------------------------------ report.md, report.csv, report.json */

static const cJSON *find_cell(const cJSON *cells, const char *task, const char *enc, const char *ext, int n)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cells) {
        if (strcmp(cJSON_GetObjectItem(c, "task")->valuestring, task) == 0 &&
            strcmp(cJSON_GetObjectItem(c, "encoding")->valuestring, enc) == 0 &&
            strcmp(cJSON_GetObjectItem(c, "rope_ext")->valuestring, ext) == 0 &&
            cJSON_GetObjectItem(c, "n")->valueint == n)
            return c;
    }
    fail_msg("report.json has no cell %s/%s/%s n=%d", task, enc, ext, n);
    return NULL;
}

static void test_report_contents(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "contents");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    char *md = rf_slurp(out, "report.md");
    assert_non_null(md);
    /* provenance */
    const char *must[] = {"- date: 20", "- commit: ", "- host CPU: ", "- BLAS: OpenBLAS kernels ",
                          "- command: `train_order --task copy,reverse --seeds 6`",
                          /* the bimodal cell: mean ± sd [t interval] · k/N */
                          "| alibi | 6 | 1.000 ± 0.000 [1.000, 1.000] · 6/6 | 0.990 ± 0.000 [0.990, 0.990] · 6/6 | "
                          "0.102 ± 0.249 [0.000, 0.363] · 1/6 |",
                          /* one seed: no sd, no interval */
                          "| rope+pi ✗ | 1 | 1.000 · 1/1 | 0.800 · 1/1 | 0.610 · 1/1 | 0.200 · 0/1 |",
                          "| none ✗ | 2 |", "n/a", "Student t interval"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (!strstr(md, must[i])) fail_msg("report.md lacks \"%s\":\n%s", must[i], md);
    assert_null(strstr(md, "PARTIAL"));
    /* "±" only in rows of 2 or more seeds */
    const char *row = strstr(md, "| rope+pi ✗ | 1 |");
    assert_non_null(row);
    const char *eol = strchr(row, '\n');
    for (const char *p = row; p < eol; p++) assert_false(strncmp(p, "±", strlen("±")) == 0);
    free(md);

    /* report.csv: one line per run and length, every seed */
    char *csv = rf_slurp(out, "report.csv");
    assert_non_null(csv);
    int lines = 0;
    for (char *p = csv; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 1 + 12 * 4);
    assert_non_null(strstr(csv, ENG_CSV_HEADER "\n"));
    assert_non_null(strstr(csv, "\ncopy,alibi,base,none,6,300,0.3,16.000,24,0.61,0.8,16,0,0\n"));
    assert_non_null(strstr(csv, "\nreverse,none,base,none,2,300,0.1,12.000,32,nan,nan,16,0,0\n"));
    free(csv);

    /* report.json: cJSON parses it; cells carry the statistics and per-seed values */
    char *js = rf_slurp(out, "report.json");
    cJSON *root = cJSON_Parse(js);
    free(js);
    assert_non_null(root);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(root, "partial")));
    const cJSON *pv = cJSON_GetObjectItem(root, "provenance");
    assert_true(cJSON_IsString(cJSON_GetObjectItem(pv, "commit")) && cJSON_IsString(cJSON_GetObjectItem(pv, "blas_core")));
    const cJSON *em = cJSON_GetObjectItem(find_cell(cJSON_GetObjectItem(root, "cells"), "copy", "alibi", "none", 24),
                                          "exact_match");
    assert_int_equal(cJSON_GetObjectItem(em, "k_reaching_0.5")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(em, "n_seeds")->valueint, 6);
    const cJSON *ci = cJSON_GetObjectItem(em, "ci95_t");
    assert_true(fabs(cJSON_GetArrayItem(ci, 0)->valuedouble) < 1e-12);
    assert_true(fabs(cJSON_GetArrayItem(ci, 1)->valuedouble - 0.3630091533) < 1e-9);
    const cJSON *ps = cJSON_GetObjectItem(em, "per_seed");
    assert_int_equal(cJSON_GetArraySize(ps), 6);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 5), "seed")->valueint, 6);
    assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(ps, 5), "value")->valuedouble == 0.61);
    const cJSON *one = cJSON_GetObjectItem(find_cell(cJSON_GetObjectItem(root, "cells"), "copy", "rope", "pi", 24),
                                           "exact_match");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(one, "sd")));
    const cJSON *nan_cell = cJSON_GetObjectItem(find_cell(cJSON_GetObjectItem(root, "cells"), "reverse", "none", "none", 32),
                                                "exact_match");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(nan_cell, "mean")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "runs")), 12);
    cJSON_Delete(root);
}

static void test_partial_report_says_so(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "partial");
    assert_int_equal(rf_write_fixture_report(out, true), 0);
    char *md = rf_slurp(out, "report.md");
    assert_non_null(strstr(md, "# Length extrapolation report — PARTIAL"));
    assert_non_null(strstr(md, "(4 of 9 runs finished)"));
    free(md);
    char *js = rf_slurp(out, "report.json");
    cJSON *root = cJSON_Parse(js);
    free(js);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    assert_int_equal(cJSON_GetObjectItem(root, "runs_total")->valueint, 9);
    cJSON_Delete(root);
}

/* ------------------------------------------------------------------ plots, and no shell */

static void test_no_shell_with_hostile_out(void **state)
{
    if (!rf_have_gnuplot()) skip();
    /* shell injection: --out "a';touch X;'b" ran touch through system(); these names try single and double quotes,
     * $(...), backticks and a gnuplot string escape */
    const char *names[] = {"a';touch X;'b", "c\";touch Y;\"d", "e$(touch Z)f", "g`touch W`h", "i'.system('touch V').'j"};
    const char *marks[] = {"X", "Y", "Z", "W", "V"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char out[512];
        rf_make_dir(out, sizeof out, names[i]);
        if (rf_write_fixture_report(out, false) != 0) fail_msg("report into '%s' failed", out);
        if (!rf_complete_svg(out, "extrapolation.svg") || !rf_complete_svg(out, "curves_copy.svg"))
            fail_msg("no plot in '%s'", out);
        for (size_t m = 0; m < sizeof marks / sizeof *marks; m++)
            if (rf_exists(rf_tmpdir, marks[m]) || rf_exists(".", marks[m]) || rf_exists(out, marks[m]))
                fail_msg("'%s' ran a command: %s was created", names[i], marks[m]);
    }
    /* and no shell in the sources of the report (nor of train_order) */
    const char *src[] = {"src/engine/report.c", "src/engine/plot.c", "src/engine/stats.c",
                         "src/engine/compare.c", "src/engine/engine.c", "src/engine/run.c"};
    for (size_t i = 0; i < sizeof src / sizeof *src; i++) {
        char *s = rf_slurp(".", src[i]);
        if (!s) continue; /* a file another change removed */
        if (strstr(s, "system(") || strstr(s, "popen(")) fail_msg("%s calls system() or popen()", src[i]);
        free(s);
    }
}

static void test_plots_and_loss_logs(void **state)
{
    if (!rf_have_gnuplot()) skip();
    char out[512], dir[600];
    rf_make_dir(out, sizeof out, "plots");
    snprintf(dir, sizeof dir, "%s/runs", out);
    mkdir(dir, 0755);
    /* logs for copy/alibi seeds 1 and 2; seed 3 missing; a malformed one for copy/rope seed 1 */
    for (int s = 1; s <= 2; s++) {
        snprintf(dir, sizeof dir, "%s/runs/copy-alibi-seed%d", out, s);
        mkdir(dir, 0755);
        strcat(dir, "/train.csv");
        FILE *f = fopen(dir, "w");
        fprintf(f, "step,loss,lr,grad_norm,tokens_per_s,elapsed_s\n");
        for (int k = 10; k <= 300; k += 10) fprintf(f, "%d,%g,0.001,1.0,5000,%g\n", k, 3.0 / (1 + 0.02 * k * s), 0.1 * k);
        fclose(f);
    }
    snprintf(dir, sizeof dir, "%s/runs/copy-rope-seed1", out);
    mkdir(dir, 0755);
    strcat(dir, "/train.csv");
    FILE *f = fopen(dir, "w");
    fprintf(f, "step,loss\n10,oops\n");
    fclose(f);
    char *msg;
    int rc = RF_CAPTURE(&msg, rf_write_fixture_report(out, false));
    assert_int_equal(rc, 0);
    if (!strstr(msg, "copy-rope-seed1/train.csv: line 2")) fail_msg("no warning naming the bad log:\n%s", msg);
    free(msg);
    assert_true(rf_complete_svg(out, "extrapolation.svg"));
    assert_true(rf_complete_svg(out, "curves_copy.svg"));
    assert_true(rf_complete_svg(out, "curves_reverse.svg"));
    assert_true(rf_complete_svg(out, "loss_copy.svg"));
    assert_false(rf_exists(out, "loss_reverse.svg")); /* no logs */
    /* every figure also as PDF and PNG, complete (PDF: %%EOF at its end; PNG: its signature and IEND chunk) */
    const char *figs[] = {"extrapolation", "curves_copy", "curves_reverse", "loss_copy"};
    for (size_t i = 0; i < sizeof figs / sizeof *figs; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.pdf", figs[i]);
        char *pdf = rf_slurp(out, name);
        if (!pdf || strncmp(pdf, "%PDF-", 5) != 0) fail_msg("%s is not a PDF", name);
        free(pdf);
        snprintf(name, sizeof name, "%s.png", figs[i]);
        char path[700], sig[8] = "", tail[12] = "";
        snprintf(path, sizeof path, "%s/%s", out, name);
        FILE *pf = fopen(path, "rb");
        if (!pf) fail_msg("no %s", name);
        size_t got = fread(sig, 1, 8, pf);
        fseek(pf, -12, SEEK_END);
        got += fread(tail, 1, 12, pf);
        fclose(pf);
        if (got != 20 || memcmp(sig, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(tail + 4, "IEND", 4) != 0)
            fail_msg("%s is not a complete PNG", name);
    }
    char *dat = rf_slurp(out, "loss_copy.dat");
    assert_non_null(strstr(dat, "# copy alibi seed 2: step loss\n10 2.14286\n"));
    free(dat);
    char *gp = rf_slurp(out, "extrapolation.gp");
    assert_non_null(strstr(gp, "background rgb 'white'"));
    assert_non_null(strstr(gp, "training length n <= 16"));
    assert_non_null(strstr(gp, "pdfcairo") && strstr(gp, "pngcairo")); /* one script, every format */
    free(gp);
    char *heat = rf_slurp(out, "extrapolation.dat");
    assert_non_null(strstr(heat, "\"0.10 1/6\"")); /* the bimodal cell, printed in its square */
    assert_non_null(strstr(heat, "\"n/a\""));
    free(heat);
}

/* ------------------------------------------------------------------ full disk */

/* In a child with RLIMIT_FSIZE = limit bytes (SIGXFSZ ignored: writes fail with EFBIG, also in gnuplot), writes the
 * fixture report into out. Returns the child's exit status (0 report written, 1 failed); its stderr in *msg. */
static int report_with_limit(const char *out, rlim_t limit, char **msg)
{
    int pfd[2];
    if (pipe(pfd)) fail_msg("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* stderr into a pipe: a file would be under the size limit too */
        close(pfd[0]);
        dup2(pfd[1], 2);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {limit, limit};
        setrlimit(RLIMIT_FSIZE, &rl);
        _exit(rf_write_fixture_report(out, false) == 0 ? 0 : 1);
    }
    close(pfd[1]);
    size_t cap = 1 << 16, n = 0;
    *msg = malloc(cap);
    for (ssize_t r; (r = read(pfd[0], *msg + n, cap - 1 - n)) > 0;) n += (size_t)r;
    (*msg)[n] = 0;
    close(pfd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) fail_msg("the report crashed with limit %lu (signal %d)", (unsigned long)limit, WTERMSIG(status));
    return WEXITSTATUS(status);
}

static void test_disk_full_fails_loudly_and_keeps_old_files(void **state)
{
    char out[512];
    rf_make_dir(out, sizeof out, "full");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    static const char *files[] = {"report.md", "report.csv", "report.json", "extrapolation.dat", "extrapolation.gp",
                                  "extrapolation.svg", "curves_copy.svg", "curves_reverse.svg"};
    enum { NF = sizeof files / sizeof *files };
    char *before[NF];
    long biggest_text = 0, smallest_svg = 1L << 40;
    for (int i = 0; i < NF; i++) {
        before[i] = rf_slurp(out, files[i]);
        if (!before[i]) { if (strstr(files[i], ".svg") && !rf_have_gnuplot()) continue; fail_msg("no %s", files[i]); }
        long n = (long)strlen(before[i]);
        if (strstr(files[i], ".svg")) { if (n < smallest_svg) smallest_svg = n; }
        else if (n > biggest_text) biggest_text = n;
    }
    /* limits from nothing to enough for every file but the plots (then gnuplot's own writes fail) */
    rlim_t limits[] = {0, 1, 100, 1000, 4000, 16000, 0};
    int nl = 6, failed_in_plot = 0;
    if (rf_have_gnuplot() && biggest_text < smallest_svg - 1000) limits[nl++] = (rlim_t)(biggest_text + 500);
    for (int l = 0; l < nl; l++) {
        char *msg;
        int rc = report_with_limit(out, limits[l], &msg);
        if (rc == 0) fail_msg("limit %lu bytes: the report claims success", (unsigned long)limits[l]);
        if (!strstr(msg, "train_order: cannot write ") || !strstr(msg, out))
            fail_msg("limit %lu: the message does not name the file:\n%s", (unsigned long)limits[l], msg);
        failed_in_plot += strstr(msg, ".svg") != NULL;
        print_message("limit %7lu bytes: %.*s\n", (unsigned long)limits[l], (int)strcspn(msg, "\n"), msg);
        free(msg);
        /* every old file intact (each is replaced only when its new version is complete): the same bytes, or for
         * the two files holding the date the same length */
        for (int i = 0; i < NF; i++) {
            if (!before[i]) continue;
            char *now = rf_slurp(out, files[i]);
            bool dated = strcmp(files[i], "report.md") == 0 || strcmp(files[i], "report.json") == 0;
            if (!now || (dated ? strlen(now) != strlen(before[i]) : strcmp(now, before[i]) != 0))
                fail_msg("limit %lu: %s was damaged", (unsigned long)limits[l], files[i]);
            free(now);
        }
        /* and no temporary file left behind */
        DIR *d = opendir(out);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d));)
            if (strstr(e->d_name, ".tmp.")) fail_msg("limit %lu: %s was left behind", (unsigned long)limits[l], e->d_name);
        closedir(d);
    }
    if (rf_have_gnuplot() && nl == 7 && !failed_in_plot) fail_msg("no limit made gnuplot's output fail");
    for (int i = 0; i < NF; i++) free(before[i]);
}

static void test_compare_to_dev_full_fails(void **state)
{
    char out[512], csv[600];
    rf_make_dir(out, sizeof out, "devfull");
    assert_int_equal(rf_write_fixture_report(out, false), 0);
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    FILE *f = fopen("/dev/full", "w");
    if (!f) skip();
    char *msg;
    int rc = RF_CAPTURE(&msg, eng_compare(csv, csv, f));
    fclose(f);
    assert_int_equal(rc, -1);
    if (!strstr(msg, "cannot write the comparison")) fail_msg("message: %s", msg);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_quantiles_match_independent_values),
        cmocka_unit_test(test_t_interval_known_values),
        cmocka_unit_test(test_one_seed_and_nan),
        cmocka_unit_test(test_k_of_n_threshold),
        cmocka_unit_test(test_bootstrap_is_seeded_and_sane),
        cmocka_unit_test(test_report_contents),
        cmocka_unit_test(test_partial_report_says_so),
        cmocka_unit_test(test_no_shell_with_hostile_out),
        cmocka_unit_test(test_plots_and_loss_logs),
        cmocka_unit_test(test_disk_full_fails_loudly_and_keeps_old_files),
        cmocka_unit_test(test_compare_to_dev_full_fails),
    };
    return cmocka_run_group_tests(tests, rf_setup, rf_teardown);
}
