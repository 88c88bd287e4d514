/* report_fixture.c: the shared part of the report tests (report_fixture.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "report_fixture.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char rf_tmpdir[256];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) { return remove(p); }

int rf_setup(void **state)
{
    snprintf(rf_tmpdir, sizeof rf_tmpdir, "/tmp/rg_report_XXXXXX");
    return mkdtemp(rf_tmpdir) ? 0 : -1;
}

int rf_teardown(void **state)
{
    if (!getenv("RG_KEEP_TMP")) nftw(rf_tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* ------------------------------------------------------------------ helpers */

bool rf_have_gnuplot(void)
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

char *rf_slurp(const char *dir, const char *name)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) s[fread(s, 1, (size_t)n, f)] = 0;
    fclose(f);
    return s;
}

bool rf_exists(const char *dir, const char *name)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

void rf_make_dir(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", rf_tmpdir, name);
    if (mkdir(out, 0755) != 0 && errno != EEXIST) fail_msg("mkdir %s: %s", out, strerror(errno));
}


const int RF_LENS[4] = {8, 16, 24, 32};

/* A run with exact match e[j] and token accuracy a[j] at RF_LENS. */
eng_result rf_result(rg_task task, rg_pos_kind pos, rg_rope_ext ext, int seed, const double *e, const double *a)
{
    eng_result r = {.task = task, .pos = pos, .ext = ext, .seed = seed, .n_lens = 4, .final_loss = 0.05 * seed,
                   .train_seconds = 10.0 + seed, .steps = 300};
    for (int j = 0; j < 4; j++) {
        r.lens[j] = RF_LENS[j];
        r.exact[j] = e[j];
        r.token_acc[j] = a[j];
    }
    return r;
}

/* The fixture: copy/alibi with 6 seeds, exact match at n = 24 of 0,0,0,0,0,0.61 (the bimodal cell);
 * copy/rope with 3 seeds; copy/rope+pi with 1 seed (no sd, no interval); reverse/none with 2 seeds and a NaN cell. */
int rf_fixture(eng_result *res)
{
    int n = 0;
    for (int s = 1; s <= 6; s++) {
        double e[4] = {1, 0.99, s == 6 ? 0.61 : 0, 0}, a[4] = {1, 1, 0.5 + 0.05 * s, 0.3};
        res[n++] = rf_result(RG_TASK_COPY, RG_POS_ALIBI, RG_ROPE_EXT_NONE, s, e, a);
    }
    for (int s = 1; s <= 3; s++) {
        double e[4] = {1, 0.4 + 0.1 * s, 0.1, 0}, a[4] = {1, 0.9, 0.2, 0.1};
        res[n++] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_NONE, s, e, a);
    }
    double e1[4] = {1, 0.8, 0.61, 0.2}, a1[4] = {1, 0.9, 0.7, 0.4};
    res[n++] = rf_result(RG_TASK_COPY, RG_POS_ROPE, RG_ROPE_EXT_PI, 1, e1, a1);
    for (int s = 1; s <= 2; s++) {
        double e[4] = {0.9, 0.5, 0, NAN}, a[4] = {0.95, 0.8, 0.1, NAN};
        res[n++] = rf_result(RG_TASK_REVERSE, RG_POS_NONE, RG_ROPE_EXT_NONE, s, e, a);
    }
    return n;
}

eng_options rf_options(const char *out)
{
    eng_options o;
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

int rf_write_fixture_report(const char *out, bool partial)
{
    eng_result res[16];
    int n = rf_fixture(res);
    eng_options o = rf_options(out);
    eng_report_meta meta = {12.5, "train_order --task copy,reverse --seeds 6", partial, 4, 9, NULL};
    return eng_report(&o, res, n, &meta);
}

bool rf_complete_svg(const char *dir, const char *name)
{
    char *s = rf_slurp(dir, name);
    bool ok = s && strstr(s, "<svg") && strstr(s, "</svg>");
    free(s);
    return ok;
}

/* --compare A B into <tmp>/compare.txt (eng_compare); the text (malloc'ed), or the test fails. */
char *rf_compare_text(const char *a, const char *b)
{
    char p[600];
    snprintf(p, sizeof p, "%s/compare.txt", rf_tmpdir);
    FILE *f = fopen(p, "w");
    if (!f) fail_msg("cannot write %s", p);
    int rc = eng_compare(a, b, f);
    fclose(f);
    if (rc != 0) fail_msg("eng_compare(%s, %s) failed", a, b);
    return rf_slurp(rf_tmpdir, "compare.txt");
}
