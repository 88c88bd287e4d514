/* test_report.c: the report of examples/train_order (report.h): statistics over seeds (t quantiles and intervals
 * against values computed independently, bootstrap determinism, k/N), the contents of report.md/csv/json, the plots
 * (no shell: an --out made to inject commands), a full disk during the report (RLIMIT_FSIZE at many sizes, and
 * /dev/full), re-plotting from report.csv, validation of hostile report.csv files, and comparing two reports. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "../examples/train_order/report.h"

static char tmpdir[256];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { return remove(p); }

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rg_report_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    if (!getenv("RG_KEEP_TMP")) nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* ------------------------------------------------------------------ helpers */

static bool have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char buf[4096], exe[4200];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(exe, sizeof exe, "%s/gnuplot", d);
        if (access(exe, X_OK) == 0) return true;
    }
    return false;
}

static char *slurp(const char *dir, const char *name)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static bool exists(const char *dir, const char *name)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static void make_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
    if (mkdir(out, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", out, strerror(errno));
}

/* Runs fn with stderr sent to <tmpdir>/stderr.txt; returns fn's result and the text (malloc'ed) in *msg. */
#define CAPTURE(msg, expr)                                                                                            \
    ({                                                                                                                \
        char p_[512];                                                                                                 \
        snprintf(p_, sizeof p_, "%s/stderr.txt", tmpdir);                                                             \
        fflush(stderr);                                                                                               \
        int saved_ = dup(2), fd_ = open(p_, O_WRONLY | O_CREAT | O_TRUNC, 0644);                                      \
        dup2(fd_, 2);                                                                                                 \
        close(fd_);                                                                                                   \
        int r_ = (expr);                                                                                              \
        fflush(stderr);                                                                                               \
        dup2(saved_, 2);                                                                                              \
        close(saved_);                                                                                                \
        *(msg) = slurp(tmpdir, "stderr.txt");                                                                         \
        r_;                                                                                                           \
    })

static const int LENS[4] = {8, 16, 24, 32};

/* A run with exact match e[j] and token accuracy a[j] at LENS. */
static to_result result(rg_task task, rg_pos_kind pos, rg_rope_ext ext, int seed, const double *e, const double *a)
{
    to_result r = {.task = task, .pos = pos, .ext = ext, .seed = seed, .n_lens = 4, .final_loss = 0.05 * seed,
                   .train_seconds = 10.0 + seed, .steps = 300};
    for (int j = 0; j < 4; j++) {
        r.lens[j] = LENS[j];
        r.exact[j] = e[j];
        r.token_acc[j] = a[j];
    }
    return r;
}

/* The fixture: copy/alibi with 6 seeds, exact match at n = 24 of 0,0,0,0,0,0.61 (the bimodal cell);
 * copy/rope with 3 seeds; copy/rope+pi with 1 seed (no sd, no interval); reverse/none with 2 seeds and a NaN cell. */
static int fixture(to_result *res)
{
    int n = 0;
    for (int s = 1; s <= 6; s++) {
        double e[4] = {1, 0.99, s == 6 ? 0.61 : 0, 0}, a[4] = {1, 1, 0.5 + 0.05 * s, 0.3};
        res[n++] = result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, s, e, a);
    }
    for (int s = 1; s <= 3; s++) {
        double e[4] = {1, 0.4 + 0.1 * s, 0.1, 0}, a[4] = {1, 0.9, 0.2, 0.1};
        res[n++] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, s, e, a);
    }
    double e1[4] = {1, 0.8, 0.61, 0.2}, a1[4] = {1, 0.9, 0.7, 0.4};
    res[n++] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_PI, 1, e1, a1);
    for (int s = 1; s <= 2; s++) {
        double e[4] = {0.9, 0.5, 0, NAN}, a[4] = {0.95, 0.8, 0.1, NAN};
        res[n++] = result(RG_TASK_REVERSE, RG_POS_NONE, RG_ROPE_EXT_NONE, s, e, a);
    }
    return n;
}

static to_options options(const char *out)
{
    to_options o;
    memset(&o, 0, sizeof o);
    o.model = rg_model_config_default();
    o.train_len = 16;
    o.steps = 300;
    o.batch = 8;
    o.lr = 1e-3;
    o.warmup = 10;
    o.min_lr_frac = 0.1;
    o.weight_decay = 0.01;
    o.clip = 1;
    o.beta1 = 0.9;
    o.beta2 = 0.98;
    o.eps = 1e-8;
    snprintf(o.out, sizeof o.out, "%s", out);
    snprintf(o.data, sizeof o.data, "data/eval_sets.h5");
    return o;
}

static int write_fixture_report(const char *out, bool partial)
{
    to_result res[16];
    int n = fixture(res);
    to_options o = options(out);
    to_report_meta meta = {12.5, "train_order --task copy,reverse --seeds 6", partial, 4, 9};
    return to_report(&o, res, n, &meta);
}

/* ------------------------------------------------------------------ statistics */

static void test_t_quantiles_match_independent_values(void **state)
{
    /* 0.975 quantiles by Simpson integration of the t density and bisection in Python (not the incomplete beta
     * function the code uses); to 10 decimals. Textbook tables agree to their 3 decimals (12.706, 4.303, ...). */
    static const struct { int df; double q; } cases[] = {
        {1, 12.7062047362}, {2, 4.3026527297}, {3, 3.1824463053}, {5, 2.5705818356}, {9, 2.2621571628},
        {29, 2.0452296421}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double q = to_t_quantile(0.975, cases[i].df);
        if (fabs(q - cases[i].q) > 2e-9) fail_msg("t(0.975, %d) = %.10f, want %.10f", cases[i].df, q, cases[i].q);
        assert_true(fabs(to_t_quantile(0.025, cases[i].df) + q) < 1e-12);
        assert_true(fabs(to_t_cdf(q, cases[i].df) - 0.975) < 1e-10);
    }
    assert_true(fabs(to_t_cdf(0, 4) - 0.5) < 1e-15);
    assert_true(fabs(to_t_cdf(1, 1) - 0.75) < 1e-12); /* Cauchy: 1/2 + atan(1)/pi */
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
        to_stat s;
        to_stat_compute(cases[i].v, cases[i].n, 7, &s);
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
    to_stat s;
    double one[1] = {0.61};
    to_stat_compute(one, 1, 1, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.k, 1);
    assert_true(s.mean == 0.61 && isnan(s.sd) && isnan(s.lo) && isnan(s.hi) && isnan(s.boot_lo));
    double some[4] = {NAN, 0.2, NAN, 0.4};
    to_stat_compute(some, 4, 1, &s);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.k, 0);
    assert_true(fabs(s.mean - 0.3) < 1e-15);
    double none[2] = {NAN, NAN};
    to_stat_compute(none, 2, 1, &s);
    assert_int_equal(s.n, 0);
    assert_true(isnan(s.mean));
}

static void test_k_of_n_threshold(void **state)
{
    static const struct { double v[5]; int n, k; } cases[] = {
        {{0.5, 0.4999, 1, 0, 0.75}, 5, 3}, {{0, 0, 0}, 3, 0}, {{1, 1}, 2, 2}, {{0.49, 0.51}, 2, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        to_stat s;
        to_stat_compute(cases[i].v, cases[i].n, 1, &s);
        if (s.k != cases[i].k) fail_msg("case %zu: k = %d, want %d", i, s.k, cases[i].k);
    }
}

static void test_bootstrap_is_seeded_and_sane(void **state)
{
    double v[6] = {0, 0, 0, 0, 0, 0.61}, lo1, hi1, lo2, hi2, lo3, hi3;
    to_bootstrap_ci(v, 6, TO_BOOT_REPS, 42, 0.95, &lo1, &hi1);
    to_bootstrap_ci(v, 6, TO_BOOT_REPS, 42, 0.95, &lo2, &hi2);
    assert_true(lo1 == lo2 && hi1 == hi2); /* bit-identical for the same seed */
    /* the resampled mean takes values j * 0.61 / 6: P(no 0.61 drawn) = (5/6)^6 = 0.335 > 0.025, so lo = 0, and
     * P(at least 2 drawn) = 0.263 > 0.025 while P(at least 3) = 0.0623 > 0.025 and P(>= 4) = 0.0087: hi = 3 * 0.61/6 */
    assert_true(lo1 == 0);
    assert_true(fabs(hi1 - 3 * 0.61 / 6) < 1e-12);
    double w[5] = {0.1, 0.35, 0.4, 0.8, 0.9};
    to_bootstrap_ci(w, 5, TO_BOOT_REPS, 1, 0.95, &lo1, &hi1);
    to_bootstrap_ci(w, 5, TO_BOOT_REPS, 2, 0.95, &lo3, &hi3);
    assert_true(lo1 != lo3 || hi1 != hi3); /* another seed, other resamples */
    assert_true(lo1 > 0.1 && hi1 < 0.9 && lo1 < 0.51 && hi1 > 0.51);
    double c[3] = {0.7, 0.7, 0.7};
    to_bootstrap_ci(c, 3, 1000, 5, 0.95, &lo1, &hi1);
    assert_true(fabs(lo1 - 0.7) < 1e-15 && fabs(hi1 - 0.7) < 1e-15);
    /* the cell seed depends on the cell only */
    assert_true(to_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 24, true) ==
                to_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 24, true));
    assert_true(to_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 24, true) !=
                to_cell_seed(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 32, true));
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
    make_dir(out, sizeof out, "contents");
    assert_int_equal(write_fixture_report(out, false), 0);
    char *md = slurp(out, "report.md");
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
    char *csv = slurp(out, "report.csv");
    assert_non_null(csv);
    int lines = 0;
    for (char *p = csv; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, 1 + 12 * 4);
    assert_non_null(strstr(csv, TO_CSV_HEADER "\n"));
    assert_non_null(strstr(csv, "\ncopy,alibi,base,none,6,300,0.3,16.000,24,0.61,0.8,16,0,0\n"));
    assert_non_null(strstr(csv, "\nreverse,none,base,none,2,300,0.1,12.000,32,nan,nan,16,0,0\n"));
    free(csv);

    /* report.json: cJSON parses it; cells carry the statistics and per-seed values */
    char *js = slurp(out, "report.json");
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
    make_dir(out, sizeof out, "partial");
    assert_int_equal(write_fixture_report(out, true), 0);
    char *md = slurp(out, "report.md");
    assert_non_null(strstr(md, "# Length extrapolation report — PARTIAL"));
    assert_non_null(strstr(md, "(4 of 9 runs finished)"));
    free(md);
    char *js = slurp(out, "report.json");
    cJSON *root = cJSON_Parse(js);
    free(js);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(root, "partial")));
    assert_int_equal(cJSON_GetObjectItem(root, "runs_total")->valueint, 9);
    cJSON_Delete(root);
}

/* ------------------------------------------------------------------ plots, and no shell */

static bool complete_svg(const char *dir, const char *name)
{
    char *s = slurp(dir, name);
    bool ok = s && strstr(s, "<svg") && strstr(s, "</svg>");
    free(s);
    return ok;
}

static void test_no_shell_with_hostile_out(void **state)
{
    if (!have_gnuplot()) skip();
    /* issue 16: --out "a';touch X;'b" ran touch through system(); these names try single and double quotes,
     * $(...), backticks and a gnuplot string escape */
    const char *names[] = {"a';touch X;'b", "c\";touch Y;\"d", "e$(touch Z)f", "g`touch W`h", "i'.system('touch V').'j"};
    const char *marks[] = {"X", "Y", "Z", "W", "V"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char out[512];
        make_dir(out, sizeof out, names[i]);
        if (write_fixture_report(out, false) != 0) fail_msg("report into '%s' failed", out);
        if (!complete_svg(out, "extrapolation.svg") || !complete_svg(out, "curves_copy.svg"))
            fail_msg("no plot in '%s'", out);
        for (size_t m = 0; m < sizeof marks / sizeof *marks; m++)
            if (exists(tmpdir, marks[m]) || exists(".", marks[m]) || exists(out, marks[m]))
                fail_msg("'%s' ran a command: %s was created", names[i], marks[m]);
    }
    /* and no shell in the sources of the report (nor of train_order) */
    const char *src[] = {"examples/train_order/report.c", "examples/train_order/plot.c", "examples/train_order/stats.c",
                         "examples/train_order/compare.c", "examples/train_order/main.c", "examples/train_order/run.c"};
    for (size_t i = 0; i < sizeof src / sizeof *src; i++) {
        char *s = slurp(".", src[i]);
        if (!s) continue; /* a file another change removed */
        if (strstr(s, "system(") || strstr(s, "popen(")) fail_msg("%s calls system() or popen()", src[i]);
        free(s);
    }
}

static void test_plots_and_loss_logs(void **state)
{
    if (!have_gnuplot()) skip();
    char out[512], dir[600];
    make_dir(out, sizeof out, "plots");
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
    int rc = CAPTURE(&msg, write_fixture_report(out, false));
    assert_int_equal(rc, 0);
    if (!strstr(msg, "copy-rope-seed1/train.csv: line 2")) fail_msg("no warning naming the bad log:\n%s", msg);
    free(msg);
    assert_true(complete_svg(out, "extrapolation.svg"));
    assert_true(complete_svg(out, "curves_copy.svg"));
    assert_true(complete_svg(out, "curves_reverse.svg"));
    assert_true(complete_svg(out, "loss_copy.svg"));
    assert_false(exists(out, "loss_reverse.svg")); /* no logs */
    char *dat = slurp(out, "loss_copy.dat");
    assert_non_null(strstr(dat, "# copy alibi seed 2: step loss\n10 2.14286\n"));
    free(dat);
    char *gp = slurp(out, "extrapolation.gp");
    assert_non_null(strstr(gp, "background rgb 'white'"));
    assert_non_null(strstr(gp, "training length n = 16"));
    free(gp);
    char *heat = slurp(out, "extrapolation.dat");
    assert_non_null(strstr(heat, "\"0.10 · 1/6\"")); /* the bimodal cell, printed in its square */
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
        _exit(write_fixture_report(out, false) == 0 ? 0 : 1);
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
    make_dir(out, sizeof out, "full");
    assert_int_equal(write_fixture_report(out, false), 0);
    static const char *files[] = {"report.md", "report.csv", "report.json", "extrapolation.dat", "extrapolation.gp",
                                  "extrapolation.svg", "curves_copy.svg", "curves_reverse.svg"};
    enum { NF = sizeof files / sizeof *files };
    char *before[NF];
    long biggest_text = 0, smallest_svg = 1L << 40;
    for (int i = 0; i < NF; i++) {
        before[i] = slurp(out, files[i]);
        if (!before[i]) { if (strstr(files[i], ".svg") && !have_gnuplot()) continue; fail_msg("no %s", files[i]); }
        long n = (long)strlen(before[i]);
        if (strstr(files[i], ".svg")) { if (n < smallest_svg) smallest_svg = n; }
        else if (n > biggest_text) biggest_text = n;
    }
    /* limits from nothing to enough for every file but the plots (then gnuplot's own writes fail) */
    rlim_t limits[] = {0, 1, 100, 1000, 4000, 16000, 0};
    int nl = 6, failed_in_plot = 0;
    if (have_gnuplot() && biggest_text < smallest_svg - 1000) limits[nl++] = (rlim_t)(biggest_text + 500);
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
            char *now = slurp(out, files[i]);
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
    if (have_gnuplot() && nl == 7 && !failed_in_plot) fail_msg("no limit made gnuplot's output fail");
    for (int i = 0; i < NF; i++) free(before[i]);
}

static void test_compare_to_dev_full_fails(void **state)
{
    char out[512], csv[600];
    make_dir(out, sizeof out, "devfull");
    assert_int_equal(write_fixture_report(out, false), 0);
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    FILE *f = fopen("/dev/full", "w");
    if (!f) skip();
    char *msg;
    int rc = CAPTURE(&msg, to_compare(csv, csv, f));
    fclose(f);
    assert_int_equal(rc, -1);
    if (!strstr(msg, "cannot write the comparison")) fail_msg("message: %s", msg);
    free(msg);
}

/* ------------------------------------------------------------------ replot and hostile report.csv files */

static void test_replot_from_csv_and_json(void **state)
{
    char out[512], re[512], re2[512], csv[600], json[600];
    make_dir(out, sizeof out, "orig");
    make_dir(re, sizeof re, "replot");
    make_dir(re2, sizeof re2, "replot_json");
    assert_int_equal(write_fixture_report(out, false), 0);
    snprintf(csv, sizeof csv, "%s/report.csv", out);
    snprintf(json, sizeof json, "%s/report.json", out);
    assert_int_equal(to_replot(csv, re), 0);
    assert_int_equal(to_replot(json, re2), 0);
    /* the same cells as the original report, to the digits the data files hold */
    const char *same[] = {"extrapolation.dat", "curves_copy.dat", "curves_reverse.dat"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        char *a = slurp(out, same[i]), *b = slurp(re, same[i]), *c = slurp(re2, same[i]);
        assert_non_null(a);
        if (!b || strcmp(a, b) != 0) fail_msg("replot from CSV: %s differs", same[i]);
        if (!c || strcmp(a, c) != 0) fail_msg("replot from JSON: %s differs", same[i]);
        free(a); free(b); free(c);
    }
    if (have_gnuplot()) assert_true(complete_svg(re, "extrapolation.svg") && complete_svg(re, "curves_copy.svg"));
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nope", tmpdir);
    char *msg;
    assert_int_equal(CAPTURE(&msg, to_replot(csv, missing)), -1);
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
    snprintf(path, sizeof path, "%s/hostile.csv", tmpdir);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        if (i == 0) fputs(cases[i].body, f);
        else if (i == 1) fputs(cases[i].body, f);
        else fprintf(f, "%s%s%s", H, OK, cases[i].body);
        fclose(f);
        char *msg;
        int rc = CAPTURE(&msg, to_replot(path, tmpdir));
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
    assert_int_equal(CAPTURE(&msg, to_replot(path, tmpdir)), -1);
    assert_non_null(strstr(msg, "line 3: line too long"));
    free(msg);
    /* a JSON that is not a report */
    snprintf(path, sizeof path, "%s/hostile.json", tmpdir);
    const char *js[] = {"{", "[]", "{\"runs\": [], \"config\": {\"train_len\": 0}}",
                        "{\"runs\": [{\"task\": \"copy\"}], \"config\": {\"train_len\": 16}}",
                        "{\"runs\": [{\"task\": \"copy\", \"encoding\": \"rope\", \"rope_ext\": \"none\", \"seed\": 1, "
                        "\"steps\": 1, \"final_loss\": null, \"train_seconds\": 1, \"results\": [{\"n\": 8, "
                        "\"exact_match\": 2, \"token_acc\": 1}]}], \"config\": {\"train_len\": 16}}"};
    for (size_t i = 0; i < sizeof js / sizeof *js; i++) {
        f = fopen(path, "w");
        fputs(js[i], f);
        fclose(f);
        assert_int_equal(CAPTURE(&msg, to_replot(path, tmpdir)), -1);
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
    make_dir(out, sizeof out, "mutate");
    assert_int_equal(write_fixture_report(out, false), 0);
    const char *names[] = {"report.csv", "report.json"};
    static const char alphabet[] = "0123456789,.-+eEnaNi\"{}[]:\n \xff";
    rg_rng rng;
    rg_rng_seed(&rng, 2026, 16);
    int accepted = 0, refused = 0;
    for (int f = 0; f < 2; f++) {
        char *orig = slurp(out, names[f]);
        size_t len = strlen(orig);
        char *buf = malloc(len + 64), path[600];
        snprintf(path, sizeof path, "%s/m_%s", tmpdir, names[f]);
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
            to_result *res = NULL;
            int n_res = 0, train_len = 0;
            char *msg;
            int rc = CAPTURE(&msg, to_report_load(path, &res, &n_res, &train_len));
            free(msg);
            if (rc == 0) {
                accepted++;
                assert_true(n_res > 0 && train_len >= 0 && train_len <= 1000);
                for (int i = 0; i < n_res; i++) {
                    assert_true(res[i].n_lens >= 1 && res[i].n_lens <= TO_MAX_LENS);
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

static char *compare_text(const char *a, const char *b)
{
    char p[600];
    snprintf(p, sizeof p, "%s/compare.txt", tmpdir);
    FILE *f = fopen(p, "w");
    int rc = to_compare(a, b, f);
    fclose(f);
    if (rc != 0) fail_msg("to_compare(%s, %s) failed", a, b);
    return slurp(tmpdir, "compare.txt");
}

static void test_compare_two_reports(void **state)
{
    char out[512], a[600], aj[600], b[600];
    make_dir(out, sizeof out, "cmp");
    assert_int_equal(write_fixture_report(out, false), 0);
    snprintf(a, sizeof a, "%s/report.csv", out);
    snprintf(aj, sizeof aj, "%s/report.json", out);
    /* B: copy/alibi at n = 24 reaches 0.9, 0.95, 1.0 (no overlap with A's [0, 0.363]); at n = 8 the same as A
     * (overlap); copy/t5 only in B */
    snprintf(b, sizeof b, "%s/b.csv", tmpdir);
    FILE *f = fopen(b, "w");
    fprintf(f, "task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc,train_len\n");
    for (int s = 1; s <= 3; s++) {
        fprintf(f, "copy,alibi,none,%d,300,0.1,10,8,1,1,16\n", s);
        fprintf(f, "copy,alibi,none,%d,300,0.1,10,24,%g,0.99,16\n", s, 0.85 + 0.05 * s);
        fprintf(f, "copy,t5,none,%d,300,0.1,10,8,0.5,0.9,16\n", s);
    }
    fclose(f);
    char *t = compare_text(a, b);
    const char *must[] = {
        "copy     alibi                  24  0.102 [0.000, 0.363]    1/6    0.950 [0.826, 1.000]    3/3    NO\n",
        "copy     alibi                   8  1.000 [1.000, 1.000]    6/6    1.000 [1.000, 1.000]    3/3    yes\n",
        "copy     rope+pi                24  0.610 (1 seed)          1/1    -                              n/a (one report only)\n",
        "copy     t5                      8  -",
        "1 exact-match and 1 token-accuracy cells whose intervals do not overlap"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        if (!strstr(t, must[i])) fail_msg("the comparison lacks\n%s\n---\n%s", must[i], t);
    free(t);
    /* a report against itself, CSV against JSON: every interval overlaps */
    t = compare_text(a, aj);
    if (!strstr(t, "\n0 exact-match and 0 token-accuracy cells whose intervals do not overlap")) fail_msg("%s", t);
    free(t);
}

/* Training variants and fixed RoPE factors are rows of their own in every output, and survive a reload; an older
 * report.csv (no variant column) loads as the base variant; an unknown variant or column is refused. */
static void test_variants_are_rows_everywhere(void **state)
{
    char out[512];
    make_dir(out, sizeof out, "variants");
    to_result res[8];
    int n = 0;
    double e[4] = {1, 1, 0.5, 0}, a[4] = {1, 1, 0.8, 0.3}, e2[4] = {1, 1, 0.9, 0.4};
    res[n++] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e, a);
    res[n] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, 1, e2, a);
    res[n++].variant = TO_VAR_THETA500K;
    res[n] = result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, 1, e2, a);
    res[n++].variant = TO_VAR_RAND;
    res[n] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_YARN, 1, e2, a);
    res[n++].ext_factor = 4;
    res[n++] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_YARN, 1, e, a);
    res[0].generated[2] = true;
    to_options o = options(out);
    to_report_meta meta = {1, "t", false, 0, 0};
    assert_int_equal(to_report(&o, res, n, &meta), 0);
    char *md = slurp(out, "report.md"), *csv = slurp(out, "report.csv"), *js = slurp(out, "report.json");
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
        to_result *back;
        int nb, tl;
        assert_int_equal(to_report_load(path, &back, &nb, &tl), 0);
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
    snprintf(path, sizeof path, "%s/variants.csv", tmpdir);
    struct { const char *text; int rc; const char *why; } cases[] = {
        {"task,encoding,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n"
         "copy,rope,none,1,300,0.1,10,8,1,1\n", 0, NULL},
        {TO_CSV_HEADER "\ncopy,rope,fast,none,1,300,0.1,10,8,1,1,16,0,0\n", -1, "line 2: unknown variant"},
        {TO_CSV_HEADER "\ncopy,rope,base,none,1,300,0.1,10,8,1,1,16,2,0\n", -1, "line 2: generated is not 0 or 1"},
        {"task,encoding,colour,rope_ext,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n", -1,
         "line 1: not a report.csv header (column 'colour')"},
        {"task,encoding,seed,steps,final_loss,train_seconds,n,exact_match,token_acc\n", -1,
         "line 1: not a report.csv header (no column rope_ext)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i].text, f);
        fclose(f);
        to_result *back = NULL;
        int nb, tl;
        char *msg;
        int rc = CAPTURE(&msg, to_report_load(path, &back, &nb, &tl));
        if (rc != cases[i].rc || (cases[i].why && !strstr(msg, cases[i].why)))
            fail_msg("case %zu: rc %d:\n%s", i, rc, msg);
        if (rc == 0) assert_int_equal(back[0].variant, TO_VAR_BASE);
        free(back);
        free(msg);
    }
}

/* Steps-to-learn: the column appears when a run measured it; mean (median) over the seeds that reached 0.99, k/N of
 * the measured ones, "not within S" when none did; it survives CSV and JSON; a bad value in a file is refused. */
static void test_steps_to_learn_column(void **state)
{
    char out[512];
    make_dir(out, sizeof out, "learn");
    to_result res[8];
    int n = 0;
    double e[4] = {1, 1, 0.5, 0}, a[4] = {1, 1, 0.8, 0.3};
    int64_t alibi[3] = {1200, -1, 1000}, none[2] = {-1, -1}, rope[3] = {700, 900, 200};
    for (int s = 0; s < 3; s++) {
        res[n] = result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, s + 1, e, a);
        res[n].steps = 3000;
        res[n++].steps_to_learn = alibi[s];
    }
    for (int s = 0; s < 2; s++) {
        res[n] = result(RG_TASK_COPY, RG_POS_NONE, RG_ROPE_EXT_NONE, s + 1, e, a);
        res[n].steps = 3000;
        res[n++].steps_to_learn = none[s];
    }
    for (int s = 0; s < 3; s++) {
        res[n] = result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, s + 1, e, a);
        res[n].steps = 3000;
        res[n++].steps_to_learn = rope[s];
    }
    to_options o = options(out);
    o.eval_every = 100;
    to_report_meta meta = {1, "t", false, 0, 0};
    assert_int_equal(to_report(&o, res, n, &meta), 0);
    char *md = slurp(out, "report.md");
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
        to_result *back;
        int nb, tl;
        assert_int_equal(to_report_load(path, &back, &nb, &tl), 0);
        assert_int_equal(nb, n);
        for (int i = 0; i < n; i++) assert_int_equal(back[i].steps_to_learn, res[i].steps_to_learn);
        free(back);
    }
    /* the fixture without measurements has no such column */
    char out2[512];
    make_dir(out2, sizeof out2, "learn_none");
    assert_int_equal(write_fixture_report(out2, false), 0);
    md = slurp(out2, "report.md");
    assert_null(strstr(md, "steps to 0.99"));
    free(md);
    char path[600];
    snprintf(path, sizeof path, "%s/learn.csv", tmpdir);
    const char *bad[] = {"5000", "-2", "1.5", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(path, "w");
        fprintf(f, TO_CSV_HEADER "\ncopy,rope,base,none,1,3000,0.1,10,8,1,1,16,0,%s\n", bad[i]);
        fclose(f);
        to_result *back = NULL;
        int nb, tl;
        char *msg;
        assert_int_equal(CAPTURE(&msg, to_report_load(path, &back, &nb, &tl)), -1);
        if (!strstr(msg, "line 2")) fail_msg("'%s': %s", bad[i], msg);
        free(msg);
        free(back);
    }
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
        cmocka_unit_test(test_replot_from_csv_and_json),
        cmocka_unit_test(test_hostile_report_csv_is_refused),
        cmocka_unit_test(test_mutated_reports_load_or_fail_cleanly),
        cmocka_unit_test(test_compare_two_reports),
        cmocka_unit_test(test_variants_are_rows_everywhere),
        cmocka_unit_test(test_steps_to_learn_column),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
