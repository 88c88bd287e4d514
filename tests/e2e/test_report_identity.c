/* test_report_identity.c: the report files that train_order writes from recorded results stay what they were.
 * tests/fixtures/report_identity/inputs holds the report.csv, report_positions.csv, settings.json and run logs of
 * small grids (ordering tasks in two blocks of seeds with t5 and its max_distance variant, alibi, rope and rope-half
 * with --rope-scaling rows per length and with a fixed factor, theta500k, the trick task copy_hints; sort with every
 * scaling type, +rand, bf16 angles, sinusoidal and xl; a grid task with the 2-D encodings), and expected/ the files
 * `train_order --combine` wrote from them (the README there says how they were made). A combined report is
 * computed from those files alone, never from a training run, so it does not depend on the CPU's kernels: every
 * expected file must come back byte for byte, apart from the lines naming when, where and by what it was made
 * (date, commit, host CPU, BLAS, version, command) and the output folder's name; and no report file may appear that
 * expected/ lacks. The figures' images are not compared (their .dat and .gp are). */
#include "eng_harness.h"
#include "report_fixture.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/report_identity"

/* The lines whose rest names the making, not the report: cut after the marker in both files. */
static const char *const MASKED[] = {
    "- date: ",   "- ropegrad: ", "- commit: ", "- host CPU: ", "- BLAS: ", "- command: ",
    "\"date\":",  "\"ropegrad_version\":", "\"commit\":", "\"host_cpu\":", "\"blas_core\":", "\"blas_config\":",
    "\"command\":",
};

/* text with every `out` replaced by "OUT" and every masked line cut after its marker (malloc'd). */
static char *masked(const char *text, const char *out)
{
    size_t lo = strlen(out), cap = strlen(text) + 1;
    char *r = malloc(cap), *w = r;
    assert_non_null(r);
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *line = w;
        for (size_t i = 0; i < len;) /* "OUT" is never longer than the folder's name */
            if (lo && len - i >= lo && memcmp(p + i, out, lo) == 0) { memcpy(w, "OUT", 3); w += 3; i += lo; }
            else *w++ = p[i++];
        *w = 0;
        for (size_t m = 0; m < sizeof MASKED / sizeof *MASKED; m++) {
            char *at = strstr(line, MASKED[m]);
            if (at) { w = at + strlen(MASKED[m]); break; }
        }
        if (end) *w++ = '\n';
        p += len + (end != NULL);
    }
    *w = 0;
    return r;
}

/* Fails naming the file and its first differing line. */
static void compare_file(const char *name, const char *want_dir, const char *out)
{
    char *want_raw = rf_slurp(want_dir, name), *got_raw = rf_slurp(out, name);
    if (!want_raw) fail_msg("cannot read %s/%s", want_dir, name);
    if (!got_raw) fail_msg("%s/%s was not written (expected as %s/%s)", out, name, want_dir, name);
    char *want = masked(want_raw, "OUT"), *got = masked(got_raw, out);
    if (strcmp(want, got) != 0) {
        int line = 1;
        const char *a = want, *b = got, *la = want, *lb = got;
        for (; *a && *a == *b; a++, b++)
            if (*a == '\n') { line++; la = a + 1; lb = b + 1; }
        fail_msg("%s/%s differs from %s/%s at line %d:\n  want: %.200s\n  got:  %.200s", out, name, want_dir, name,
                 line, la, lb);
    }
    free(want);
    free(got);
    free(want_raw);
    free(got_raw);
}

static bool report_file(const char *name)
{
    static const char *const ext[] = {".md", ".json", ".csv", ".dat", ".gp"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++)
        if (n > strlen(ext[i]) && strcmp(name + n - strlen(ext[i]), ext[i]) == 0) return true;
    return false;
}

static void test_combined_reports_unchanged(void **state)
{
    if (!rf_have_gnuplot()) skip(); /* without it the figures' files are written, but the expected ones were drawn */
    static const struct { const char *name, *inputs; } cases[] = {
        {"ordering", FIXTURE "/inputs/a/report.csv," FIXTURE "/inputs/b/report.csv"},
        {"sort", FIXTURE "/inputs/sort/report.csv"},
        {"grid", FIXTURE "/inputs/grid/report.csv"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char out[512], want_dir[256], want[800];
        snprintf(out, sizeof out, "%s/%s", th_tmpdir, cases[c].name);
        snprintf(want_dir, sizeof want_dir, FIXTURE "/expected/%s", cases[c].name);
        int rc = th_run("--combine %s --out %s --quiet", cases[c].inputs, out);
        if (rc != 0) fail_msg("--combine %s exited %d:\n%s", cases[c].inputs, rc, th_logbuf);
        int n_files = 0;
        DIR *d = opendir(want_dir);
        if (!d) fail_msg("no folder %s", want_dir);
        for (struct dirent *e; (e = readdir(d));) {
            if (!report_file(e->d_name)) continue;
            compare_file(e->d_name, want_dir, out);
            n_files++;
        }
        closedir(d);
        if (n_files < 10) fail_msg("%s: only %d expected files", want_dir, n_files);
        d = opendir(out);
        assert_non_null(d);
        for (struct dirent *e; (e = readdir(d));) {
            snprintf(want, sizeof want, "%s/%s", want_dir, e->d_name);
            if (report_file(e->d_name) && access(want, F_OK) != 0)
                fail_msg("%s/%s was written, but %s has no such file", out, e->d_name, want_dir);
        }
        closedir(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_combined_reports_unchanged, th_reset),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
