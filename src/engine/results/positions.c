/* positions.c: the per-position counts of a report's results: a row's accuracy and first-wrong fractions per output
 * position over its seeds, and report_positions.csv read back into the results it belongs to (--combine).
 *
 * Per-position values of a cell (eng_cell_positions), for a task with that view (RG_TASK_VIEW_POSITIONS): output
 * position p = 1..G, the answer's G = target_len(n) tokens (n+1 for the ordering tasks, the EOS last).
 * accuracy[p] is the mean over the row's seeds of each seed's fraction of samples with position p right;
 * first_wrong[p] is the fraction, pooled over the seeds' samples, whose first wrong token is at p; all_right the
 * pooled fraction with none wrong (so first_wrong sums with all_right to 1).
 *
 * eng_read_positions_csv reads report_positions.csv back (train_order --combine: a block's counts travel with its
 * report), every line checked as user input. */
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The slot of test length n in result x with per-position counts, or -1. */
static int pos_slot(const eng_result *x, int n)
{
    for (int j = 0; j < x->n_lens; j++)
        if (x->lens[j] == n) return x->pos_count[j] > 0 ? j : -1;
    return -1;
}

int eng_cell_positions(const eng_table *t, const eng_row *r, int n, double *accuracy, double *first_wrong,
                      double *all_right)
{
    int m = rg_task_target_len(r->task, n), seeds = 0;
    /* the view of a task that asks for it (RG_TASK_VIEW_POSITIONS: the answer's m tokens); other tasks (the grids:
     * their cell images, report_grid.c) have their counts in report_positions.csv only */
    if (!(rg_task_views(r->task) & RG_TASK_VIEW_POSITIONS) || m < 1 || m > ENG_POS_MAX) return 0;
    double pooled = 0;
    for (int p = 0; p < m; p++) accuracy[p] = first_wrong[p] = 0;
    *all_right = 0;
    for (int i = 0; i < r->n_runs; i++) {
        const eng_result *x = &t->res[r->runs[i]];
        int j = pos_slot(x, n);
        if (j < 0) continue;
        seeds++;
        double c = x->pos_count[j];
        for (int p = 0; p < m; p++) {
            accuracy[p] += x->pos_right[j][p] / c;
            first_wrong[p] += x->first_wrong[j][p];
        }
        *all_right += x->first_wrong[j][m];
        pooled += c;
    }
    if (!seeds) return 0;
    for (int p = 0; p < m; p++) {
        accuracy[p] /= seeds;
        first_wrong[p] /= pooled;
    }
    *all_right /= pooled;
    return seeds;
}

/* ------------------------------------------------------------------ reading report_positions.csv back (--combine) */

#define POS_HEADER "task,encoding,variant,rope_ext,seed,n,position,samples,right,first_wrong"
#define POS_SIZE ",size" /* the header's last column in a report with a size axis (eng_results_sized) */

/* A whole non-negative decimal integer in [0, max], or -1. */
static long whole(const char *s, long max)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9) return -1;
    long v = strtol(s, NULL, 10);
    return v <= max ? v : -1;
}

/* The result of res[0..n) that a line's first five fields (and its size, f[10], when the file has the column) name,
 * or -1. */
static int find_run(const eng_result *res, int n, char *const *f, long seed, bool sized)
{
    for (int i = 0; i < n; i++) {
        const eng_result *x = &res[i];
        char ext[48];
        if (sized && strcmp(f[10], x->size) != 0) continue;
        if (x->seed == seed && strcmp(f[0], rg_task_name(x->task)) == 0 && strcmp(f[1], rg_pos_name(x->pos)) == 0 &&
            strcmp(f[2], eng_variant_name(x->variant)) == 0 &&
            strcmp(f[3], eng_ext_text(x->ext, x->ext_factor, ext, sizeof ext)) == 0)
            return i;
    }
    return -1;
}

/* One line (split into f[10]) into res: 0, or -1 with the reason in why. seen[i][j][p]: a line was read for result
 * i, length slot j, position p. */
static int read_position_line(char *const *f, bool sized, eng_result *res, int n,
                              bool (*seen)[ENG_MAX_LENS][ENG_POS_MAX], char *why, size_t cap)
{
    long seed = whole(f[4], 1000000), len = whole(f[5], 100000), p = whole(f[6], ENG_POS_MAX);
    long samples = whole(f[7], UINT16_MAX), right = whole(f[8], UINT16_MAX), fw = whole(f[9], UINT16_MAX);
    if (seed < 1 || len < 1 || p < 1 || samples < 1 || right < 0 || fw < 0) {
        snprintf(why, cap, "a field is not a whole number in its range (seed 1..1000000, n >= 1, position 1..%d, "
                 "samples 1..65535, right and first_wrong 0..65535)", ENG_POS_MAX);
        return -1;
    }
    int i = find_run(res, n, f, seed, sized);
    if (i < 0) {
        snprintf(why, cap, "no run %s %s %s %s%s%s seed %ld in the report beside it", f[0], f[1], f[2], f[3],
                 sized ? " " : "", sized ? f[10] : "", seed);
        return -1;
    }
    eng_result *x = &res[i];
    int j = 0;
    while (j < x->n_lens && x->lens[j] != len) j++;
    int G = j < x->n_lens ? rg_task_target_len(x->task, (int)len) : 0;
    if (j == x->n_lens || G > ENG_POS_MAX || p > G) {
        snprintf(why, cap, "n = %ld, position %ld: not a test length of that run with %s", len, p,
                 j == x->n_lens ? "an evaluation" : "that many output positions");
        return -1;
    }
    if (right > samples || fw > samples || (x->pos_count[j] && x->pos_count[j] != samples) || seen[i][j][p - 1]) {
        snprintf(why, cap, "%s", seen[i][j][p - 1] ? "a second line for that run, length and position"
                 : "the counts do not fit (right and first_wrong at most samples; one sample count per run and length)");
        return -1;
    }
    seen[i][j][p - 1] = true;
    x->pos_count[j] = (int)samples;
    x->pos_right[j][p - 1] = (uint16_t)right;
    x->first_wrong[j][p - 1] = (uint16_t)fw;
    return 0;
}

/* After the lines: every counted (run, length) has all its positions, and its first-wrong counts leave the
 * all-right count (first_wrong[G]) non-negative. 0, or -1 with the reason. */
static int finish_positions(eng_result *res, int n, bool (*seen)[ENG_MAX_LENS][ENG_POS_MAX], char *why, size_t cap)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < res[i].n_lens; j++) {
            eng_result *x = &res[i];
            if (!x->pos_count[j]) continue;
            int G = rg_task_target_len(x->task, x->lens[j]), sum = 0;
            for (int p = 0; p < G; p++) {
                if (!seen[i][j][p]) {
                    snprintf(why, cap, "%s %s seed %d, n = %d: no line for position %d", rg_task_name(x->task),
                             rg_pos_name(x->pos), x->seed, x->lens[j], p + 1);
                    return -1;
                }
                sum += x->first_wrong[j][p];
            }
            int c = x->pos_count[j], all = c - sum, wrong_by = 0;
            const char *bad = NULL;
            if (sum > c) bad = "first_wrong sums to more than the samples";
            else if (!isfinite(x->exact[j]))
                bad = "counts for a length the report has no exact match at";
            else if (rg_task_get(x->task) && !rg_task_get(x->task)->score && fabs((double)all / c - x->exact[j]) > 1e-6)
                bad = "the samples with no wrong token do not give the report's exact match at that length";
                /* (a task with its own score hook may score fewer tokens than it generates: not compared) */
            for (int p = 0; p < G && !bad; p++) { /* every sample right at p: those first wrong after p, at least */
                wrong_by += x->first_wrong[j][p];
                if (x->pos_right[j][p] > c - x->first_wrong[j][p] || x->pos_right[j][p] < c - wrong_by)
                    bad = "a position's right count contradicts the first-wrong counts";
            }
            if (bad) {
                snprintf(why, cap, "%s %s seed %d, n = %d: %s", rg_task_name(x->task), rg_pos_name(x->pos), x->seed,
                         x->lens[j], bad);
                return -1;
            }
            x->first_wrong[j][G] = (uint16_t)all;
        }
    return 0;
}

static void clear_positions(eng_result *res, int n)
{
    for (int i = 0; i < n; i++) {
        memset(res[i].pos_count, 0, sizeof res[i].pos_count);
        memset(res[i].pos_right, 0, sizeof res[i].pos_right);
        memset(res[i].first_wrong, 0, sizeof res[i].first_wrong);
    }
}

int eng_read_positions_csv(const char *path, eng_result *res, int n, int *slots)
{
    *slots = 0;
    FILE *f = eng_fopen_read(path); /* never waits on a FIFO */
    if (!f) {
        if (errno == ENOENT) return 0;
        eng_err("%s: cannot be read: %s\n", path, strerror(errno));
        return -1;
    }
    bool (*seen)[ENG_MAX_LENS][ENG_POS_MAX] = calloc((size_t)(n > 0 ? n : 1), sizeof *seen);
    char *line = NULL, why[256] = "";
    size_t cap = 0;
    long at = 0;
    int rc = seen ? 0 : -1, fields = 10; /* 11 with the size column */
    if (!seen) snprintf(why, sizeof why, "out of memory");
    for (ssize_t len; rc == 0 && (len = getline(&line, &cap, f)) >= 0;) {
        at++;
        if (len > 510) { snprintf(why, sizeof why, "a line longer than 510 bytes"); rc = -1; break; }
        if (memchr(line, 0, (size_t)len)) { snprintf(why, sizeof why, "a NUL byte (not a text file)"); rc = -1; break; }
        for (ssize_t k = 0; k < len && rc == 0; k++)
            if ((unsigned char)line[k] < 32 && line[k] != '\n' && line[k] != '\r') {
                snprintf(why, sizeof why, "a control character (not a CSV text line)");
                rc = -1;
            }
        if (rc) break;
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (at == 1) {
            if (strcmp(line, POS_HEADER POS_SIZE) == 0) fields = 11;
            else if (strcmp(line, POS_HEADER) != 0) {
                snprintf(why, sizeof why, "not the header " POS_HEADER " (then " POS_SIZE " with a size axis)");
                rc = -1;
            }
            continue;
        }
        char *fld[11], *s = line;
        int k = 0;
        for (; k < fields && s; k++) {
            fld[k] = s;
            s = strchr(s, ',');
            if (s) *s++ = 0;
        }
        if (k != fields || s) { snprintf(why, sizeof why, "not %d comma-separated fields", fields); rc = -1; break; }
        rc = read_position_line(fld, fields == 11, res, n, seen, why, sizeof why);
    }
    if (rc == 0 && ferror(f)) { snprintf(why, sizeof why, "read error"); rc = -1; }
    if (rc == 0 && at == 0) { snprintf(why, sizeof why, "empty (no header)"); rc = -1; }
    if (rc == 0 && finish_positions(res, n, seen, why, sizeof why)) { at = 0; rc = -1; }
    fclose(f);
    free(line);
    for (int i = 0; rc == 0 && i < n; i++)
        for (int j = 0; j < res[i].n_lens; j++) *slots += res[i].pos_count[j] > 0;
    free(seen);
    if (rc) {
        clear_positions(res, n);
        if (at) eng_err("%s, line %ld: %s\n", path, at, why);
        else eng_err("%s: %s\n", path, why);
    }
    return rc ? -1 : 1;
}
