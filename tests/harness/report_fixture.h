/* report_fixture.h: what the tests of examples/train_order's report share (test_report.c: statistics, the written
 * report, plots, a full disk; test_report_tools.c: re-plotting, loading hostile reports, comparing, variants and
 * steps-to-learn): a temporary folder per test binary, file helpers, and the fixture of results. */
#ifndef RF_REPORT_FIXTURE_H
#define RF_REPORT_FIXTURE_H

#include "common.h"
#include "engine/base/labels.h"
#include "engine/compare/compare.h"
#include "engine/plot/plot.h"
#include "engine/plot/plot_curves.h"
#include "engine/plot/plot_heat.h"
#include "engine/plot/plot_style.h"
#include "engine/run/run.h"
#include "engine/settings/lists.h"
#include "engine/settings/protocol.h"
#include "engine/settings/settings.h"
#include "engine/views/lm_report.h"
#include "engine/views/report.h"
#include "engine/views/report_grid.h"
#include "engine/views/report_protocol.h"
#include "engine/views/views.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

extern char rf_tmpdir[256]; /* this binary's temporary folder (rf_setup makes it, rf_teardown removes it) */
extern const int RF_LENS[4]; /* the fixture's test lengths: 8, 16, 24, 32 */

/* cmocka group setup and teardown (RG_KEEP_TMP=1 keeps the folder). 0 or -1. */
int rf_setup(void **state);
int rf_teardown(void **state);
/* Whether gnuplot is on PATH (plots are checked only then). */
bool rf_have_gnuplot(void);
/* dir/name's text, malloc'ed (free it), or NULL if it cannot be read. */
char *rf_slurp(const char *dir, const char *name);
/* Whether dir/name is a whole SVG file (its opening and closing tags). */
bool rf_complete_svg(const char *dir, const char *name);
/* Whether dir/name exists. */
bool rf_exists(const char *dir, const char *name);
/* Makes rf_tmpdir/name (it may exist) and writes its path to out. */
void rf_make_dir(char *out, size_t cap, const char *name);
/* A run with exact match e[j] and token accuracy a[j] at RF_LENS. */
eng_result rf_result(rg_task task, rg_pos_kind pos, rg_rope_ext ext, int seed, const double *e, const double *a);
/* The fixture into res (at least 16 entries): copy/alibi with 6 seeds, exact match at n = 24 of 0,0,0,0,0,0.61
 * (a bimodal cell: the mean alone misleads); copy/rope with 3 seeds; copy/rope+pi with 1 seed (no sd, no interval);
 * reverse/none with 2 seeds and a NaN cell. Returns the count. */
int rf_fixture(eng_result *res);
/* The options of the fixture's invocation, writing to out. */
eng_options rf_options(const char *out);
/* Writes the fixture's report (report.md/csv/json and plots) into out. 0 or -1. */
int rf_write_fixture_report(const char *out, bool partial);

/* Runs fn with stderr sent to <rf_tmpdir>/stderr.txt; returns fn's result and the text (malloc'ed) in *msg. */
#define RF_CAPTURE(msg, expr)                                                                                         \
    ({                                                                                                                \
        char p_[512];                                                                                                 \
        snprintf(p_, sizeof p_, "%s/stderr.txt", rf_tmpdir);                                                          \
        fflush(stderr);                                                                                               \
        int saved_ = dup(2), fd_ = open(p_, O_WRONLY | O_CREAT | O_TRUNC, 0644);                                      \
        dup2(fd_, 2);                                                                                                 \
        close(fd_);                                                                                                   \
        int r_ = (expr);                                                                                              \
        fflush(stderr);                                                                                               \
        dup2(saved_, 2);                                                                                              \
        close(saved_);                                                                                                \
        *(msg) = rf_slurp(rf_tmpdir, "stderr.txt");                                                                   \
        r_;                                                                                                           \
    })

/* The text of --compare A B (eng_compare, through <tmp>/compare.txt; malloc'ed); fails the test if it fails. */
char *rf_compare_text(const char *a, const char *b);

#endif
