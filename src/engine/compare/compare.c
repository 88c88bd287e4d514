/* compare.c: --compare: two reports (read back by report_load.c) cell by cell with their 95% t intervals, and
 * their settings side by side; also where a report's settings and provenance are found (--combine reads them). */
#include "engine/compare/compare.h"
#include "engine/base/files.h"
#include "engine/base/messages.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ the settings of two reports */

#define MAX_SETTINGS_BYTES (16L << 20) /* a report's settings file (a sixteenth of the largest report.json) */

/* The text of path (malloc'ed, NUL-terminated), or NULL if it cannot be read whole within MAX_SETTINGS_BYTES. */
static char *slurp(const char *path)
{
    FILE *f = eng_fopen_read(path);
    if (!f) return NULL;
    size_t cap = MAX_SETTINGS_BYTES;
    char *text = malloc(cap);
    size_t n = text ? fread(text, 1, cap - 1, f) : 0;
    bool whole = text && feof(f) && !ferror(f);
    fclose(f);
    if (!whole) { free(text); return NULL; }
    text[n] = 0;
    return text;
}

/* From a report.md: the JSON block under "## Settings" and the provenance lines (commit, host CPU, BLAS kernels),
 * as {"settings": ..., "provenance": ...}; NULL when the text has neither. */
static cJSON *md_settings(const char *md)
{
    cJSON *root = cJSON_CreateObject(), *pv = cJSON_AddObjectToObject(root, "provenance");
    const char *sec = strstr(md, "\n## Settings"), *js = sec ? strstr(sec, "```json\n") : NULL;
    const char *end = js ? strstr(js + 8, "\n```") : NULL;
    if (end) {
        cJSON *set = cJSON_ParseWithLength(js + 8, (size_t)(end - js - 8));
        if (cJSON_IsObject(set)) cJSON_AddItemToObject(root, "settings", set);
        else cJSON_Delete(set);
    }
    static const char *const keys[][2] = {{"\n- commit: ", "commit"}, {"\n- host CPU: ", "host_cpu"},
                                          {"\n- BLAS: OpenBLAS kernels ", "blas_core"}};
    const char *wall = strstr(md, "\n- wall time: "), *title_end = strstr(md, "\n## Provenance");
    double ws = wall ? strtod(wall + 14, NULL) : NAN;
    if (wall && isfinite(ws) && ws >= 0) cJSON_AddNumberToObject(pv, "wall_seconds", ws); /* as report.json has it */
    if (title_end) { /* "# Length extrapolation report — PARTIAL" (report.c md_header) */
        const char *t = strstr(md, "PARTIAL");
        if (t && t < title_end) cJSON_AddBoolToObject(root, "partial", true);
    }
    for (int i = 0; i < 3; i++) {
        const char *v = strstr(md, keys[i][0]);
        if (!v) continue;
        v += strlen(keys[i][0]);
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(v, i == 2 ? " \n" : "\n"), v);
        cJSON_AddStringToObject(pv, keys[i][1], buf);
    }
    if (!cJSON_GetObjectItemCaseSensitive(root, "settings") && !pv->child) { cJSON_Delete(root); return NULL; }
    return root;
}

size_t eng_report_stem(const char *report)
{
    size_t len = strlen(report);
    return len > 4 && strcmp(report + len - 4, ".csv") == 0 ? len - 4
           : len > 5 && strcmp(report + len - 5, ".json") == 0 ? len - 5 : len;
}

/* eng_report_settings (report.h). */
void *eng_report_settings(const char *report, char *where, size_t cap)
{
    size_t len = strlen(report), stem = eng_report_stem(report);
    char folder[ENG_PATH], path[3][ENG_PATH + 32];
    eng_folder_of(report, folder, sizeof folder);
    bool json = len >= 5 && strcmp(report + len - 5, ".json") == 0;
    snprintf(path[0], sizeof path[0], "%.*s.json", (int)stem, report);
    snprintf(path[1], sizeof path[1], "%s/settings.json", folder);
    snprintf(path[2], sizeof path[2], "%.*s.md", (int)stem, report);
    if (json) snprintf(path[0], sizeof path[0], "%s", report);
    for (int i = 0; i < (json ? 1 : 3); i++) {
        char *text = slurp(path[i]);
        if (!text) continue;
        cJSON *root = i == 2 ? md_settings(text) : cJSON_Parse(text);
        free(text);
        if (!cJSON_IsObject(root)) { cJSON_Delete(root); continue; }
        snprintf(where, cap, "%.*s", (int)(cap - 1), path[i]);
        if (i == 1) { /* settings.json is the settings object itself */
            cJSON *w = cJSON_CreateObject();
            cJSON_AddItemToObject(w, "settings", root);
            return w;
        }
        return root;
    }
    snprintf(where, cap, "nowhere");
    return NULL;
}

/* A value as one line of text (malloc'ed): strings bare, anything else as compact JSON; "(absent)" for NULL. */
static char *value_text(const cJSON *v)
{
    if (!v) return strdup("(absent)");
    if (cJSON_IsString(v)) return strdup(v->valuestring);
    return cJSON_PrintUnformatted(v);
}

/* Prints the keys of object `group` whose values differ between a and b (the union of their keys). */
static int diff_group(const cJSON *a, const cJSON *b, const char *group, const char *const *skip, FILE *out)
{
    const cJSON *ga = cJSON_GetObjectItemCaseSensitive(a, group), *gb = cJSON_GetObjectItemCaseSensitive(b, group);
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        const cJSON *g = pass ? gb : ga, *o = pass ? ga : gb;
        for (const cJSON *x = cJSON_IsObject(g) ? g->child : NULL; x; x = x->next) {
            bool skipped = false;
            for (int i = 0; skip[i]; i++) skipped |= strcmp(x->string, skip[i]) == 0;
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(o, x->string);
            if (skipped || (pass && y) || (y && cJSON_Compare(x, y, true))) continue;
            char *ta = value_text(pass ? y : x), *tb = value_text(pass ? x : y);
            fprintf(out, "  %-20s A: %s\n  %-20s B: %s\n", x->string, ta ? ta : "?", "", tb ? tb : "?");
            free(ta);
            free(tb);
            n++;
        }
    }
    return n;
}

/* "Settings that differ": the settings (and the commit, CPU and BLAS kernels of the provenance) of the two reports,
 * key by key; says where they were read from, and so when they could not be. */
static void compare_settings(const char *report_a, const char *report_b, FILE *out)
{
    char wa[ENG_PATH + 32], wb[ENG_PATH + 32];
    cJSON *a = eng_report_settings(report_a, wa, sizeof wa), *b = eng_report_settings(report_b, wb, sizeof wb);
    fprintf(out, "\nSettings that differ (A's read from %s, B's from %s):\n", wa, wb);
    const char *side[2] = {report_a, report_b}, *read[2] = {wa, wb};
    const cJSON *ab[2] = {a, b};
    bool known = true;
    for (int i = 0; i < 2; i++) {
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ab[i], "settings"))) continue;
        known = false;
        if (!ab[i]) /* the three files eng_report_settings tries */
            fprintf(out, "  not known: %s has no report.json, settings.json or report.md beside it (tried the .json "
                    "of its name, settings.json in its folder, the .md of its name)\n", side[i]);
        else
            fprintf(out, "  %s's settings not known: %s has no Settings block (a \"## Settings\" section with a "
                    "```json block); only its provenance lines are compared\n", side[i], read[i]);
    }
    /* where the results went and how loudly are no settings of the experiment; the date, wall time and command
     * line always differ */
    static const char *const set_skip[] = {"out", "overwrite", "quiet", NULL},
                             *const prov_skip[] = {"date", "wall_seconds", "command", NULL};
    if (a && b) {
        int n = (known ? diff_group(a, b, "settings", set_skip, out) : 0) + diff_group(a, b, "provenance", prov_skip, out);
        if (n == 0) fprintf(out, known ? "  none: the same settings, commit, CPU and BLAS kernels\n"
                                       : "  none in the provenance that both have\n");
    }
    fprintf(out, "\n");
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* ------------------------------------------------------------------ the model size of a report without the axis */

int eng_settings_size(const void *settings, eng_size *s)
{
    const cJSON *set = settings, *sizes = cJSON_GetObjectItemCaseSensitive(set, "sizes");
    const char *keys[4] = {"d_model", "n_layers", "n_heads", "d_ff"};
    double v[4];
    for (int i = 0; i < 4; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(set, keys[i]);
        v[i] = cJSON_IsNumber(x) ? x->valuedouble : -1;
    }
    char text[64];
    if (cJSON_IsString(sizes)) snprintf(text, sizeof text, "%s", sizes->valuestring);
    else if (v[0] >= 1 && v[0] <= 4096 && v[1] >= 1 && v[1] <= 64 && v[3] >= 1 && v[3] <= 65536)
        snprintf(text, sizeof text, v[3] == 4 * v[0] ? "%.0fx%.0f" : "%.0fx%.0ff%.0f", v[0], v[1], v[3]);
    else return -1;
    if (strchr(text, ',') || eng_size_parse(text, s) || !(v[2] >= 1 && v[2] <= 256)) return -1;
    eng_size_resolve(s, (int)v[2]);
    return 0;
}

void eng_results_set_size(eng_result *res, int n, const eng_size *s)
{
    for (int i = 0; i < n; i++) {
        if (res[i].size[0]) continue;
        memcpy(res[i].size, s->text, sizeof res[i].size);
        res[i].d_model = s->d_model;
        res[i].n_layers = s->n_layers;
        res[i].n_heads = s->n_heads;
        res[i].d_ff = s->d_ff;
    }
}

/* When one of two reports has the size axis and the other not, the other's runs are of its settings' one size
 * (so that its cells meet the other's cells of that size). */
static void align_sizes(const char *path_a, eng_result *ra, int na, const char *path_b, eng_result *rb, int nb)
{
    bool sa = eng_results_sized(ra, na), sb = eng_results_sized(rb, nb);
    if (sa == sb) return;
    char where[ENG_PATH + 32];
    cJSON *info = eng_report_settings(sa ? path_b : path_a, where, sizeof where);
    eng_size s;
    if (info && eng_settings_size(cJSON_GetObjectItemCaseSensitive(info, "settings"), &s) == 0)
        eng_results_set_size(sa ? rb : ra, sa ? nb : na, &s);
    cJSON_Delete(info);
}

/* ------------------------------------------------------------------ comparing two reports */

/* "0.102 [0.000, 0.363]    1/6 max 0.410 med 0.020", "0.610 (1 seed)    1/1", "-": one report's side of a line
 * (mean [95% t interval] k/N, then the maximum over seeds and the median). */
static void cell_text(const eng_stat *s, bool exact, char *buf, size_t cap)
{
    char kn[24] = "";
    if (exact && s->n > 0) snprintf(kn, sizeof kn, "%d/%d", s->k, s->n);
    if (s->n == 0) snprintf(buf, cap, "-");
    else if (s->n == 1) snprintf(buf, cap, "%.3f %-14s %6s", s->mean, "(1 seed)", kn);
    else snprintf(buf, cap, "%.3f [%.3f, %.3f] %6s max %.3f med %.3f", s->mean, s->lo, s->hi, kn, s->max, s->median);
}

/* Prints every cell of the union of the rows of a and b for one metric; counts the cells whose intervals do not
 * overlap. */
static int compare_metric(const eng_table *a, const eng_table *b, bool exact, FILE *out)
{
    int differ = 0;
    fprintf(out, "\n%s\n%-8s %-18s %6s  %-49s  %-49s  %s\n", exact ? "exact match (k/N: seeds >= 0.5)" : "token accuracy",
            "task", "encoding", "n", "A mean [95% t interval] k/N max median", "B mean [95% t interval] k/N max median",
            "intervals overlap");
    for (int pass = 0; pass < 2; pass++) {
        const eng_table *t = pass ? b : a, *o = pass ? a : b;
        for (int k = 0; k < t->n_rows; k++) {
            const eng_row *r = &t->rows[k], *ro = eng_table_row_like(o, r);
            if (pass && ro) continue; /* printed in the first pass */
            const eng_row *ra = pass ? ro : r, *rb = pass ? r : ro;
            int task = r->task, lens[2 * ENG_MAX_TABLE_LENS], nl = 0;
            for (int j = 0; j < a->n_lens[task]; j++) lens[nl++] = a->lens[task][j];
            for (int j = 0; j < b->n_lens[task]; j++) {
                int q = 0;
                while (q < a->n_lens[task] && a->lens[task][q] != b->lens[task][j]) q++;
                if (q == a->n_lens[task]) lens[nl++] = b->lens[task][j];
            }
            for (int j = 0; j < nl; j++) {
                eng_stat sa = ENG_STAT_NONE, sb = sa;
                if (ra) eng_table_cell(a, ra, lens[j], exact, &sa, NULL);
                if (rb) eng_table_cell(b, rb, lens[j], exact, &sb, NULL);
                if (sa.n == 0 && sb.n == 0) continue;
                char ta[96], tb[96], label[96];
                cell_text(&sa, exact, ta, sizeof ta);
                cell_text(&sb, exact, tb, sizeof tb);
                const char *ov;
                /* a cell whose seeds all hold one value: one seed, or an interval of zero width */
                bool ca = sa.n == 1 || (sa.n >= 2 && sa.lo == sa.hi), cb = sb.n == 1 || (sb.n >= 2 && sb.lo == sb.hi);
                if (!sa.n || !sb.n) ov = "n/a (one report only)";
                else if (ca && cb && sa.mean == sb.mean) ov = "yes (every seed of both the same value)";
                else if (sa.n < 2 || sb.n < 2) ov = "n/a (needs 2 seeds each)";
                else if (ca && cb) ov = "both sets of seeds agree exactly; no interval to compare";
                else if (sa.hi < sb.lo || sb.hi < sa.lo) { ov = "NO"; differ++; }
                else ov = "yes";
                fprintf(out, "%-8s %-18s %6d  %-49s  %-49s  %s\n", rg_task_name(r->task),
                        eng_row_label(r, label, sizeof label), lens[j], ta, tb, ov);
            }
        }
    }
    return differ;
}

/* Training runs among n results: each run has one result for its encoding (ext none) plus one per RoPE extension. */
static int count_runs(const eng_result *r, int n)
{
    int runs = 0;
    for (int i = 0; i < n; i++) runs += r[i].ext == RG_ROPE_EXT_NONE;
    return runs;
}

int eng_compare(const char *report_a, const char *report_b, FILE *out)
{
    eng_result *ra = NULL, *rb = NULL;
    int na, nb, la, lb, rc = -1;
    eng_table ta, tb;
    if (eng_report_load(report_a, &ra, &na, &la)) return -1;
    if (eng_report_load(report_b, &rb, &nb, &lb)) { free(ra); return -1; }
    align_sizes(report_a, ra, na, report_b, rb, nb); /* cells are matched by size too */
    if (eng_table_build(&ta, ra, na, la) == 0) {
        if (eng_table_build(&tb, rb, nb, lb) == 0) {
            char sa[16] = "unknown", sb[16] = "unknown"; /* 0: a report.csv without the train_len column */
            if (la > 0) snprintf(sa, sizeof sa, "%d", la);
            if (lb > 0) snprintf(sb, sizeof sb, "%d", lb);
            fprintf(out, "A: %s (%d runs, training length %s)\nB: %s (%d runs, training length %s)\n", report_a,
                    count_runs(ra, na), sa, report_b, count_runs(rb, nb), sb);
            if (la != lb) fprintf(out, "warning: the training lengths differ\n");
            compare_settings(report_a, report_b, out);
            fprintf(out, "Cells: mean [95%% Student t interval of the seed mean], k/N seeds, the maximum over seeds and "
                         "the median; overlap: whether the two intervals intersect (non-overlap suggests a difference, "
                         "overlap does not prove equality; where both sets of seeds agree exactly the intervals have "
                         "zero width and there is nothing to compare)\n");
            int de = compare_metric(&ta, &tb, true, out);
            int dt = compare_metric(&ta, &tb, false, out);
            fprintf(out, "\n%d exact-match and %d token-accuracy cells whose intervals do not overlap\n", de, dt);
            rc = 0;
            eng_table_free(&tb);
        }
        eng_table_free(&ta);
    }
    if (rc == 0 && (fflush(out) != 0 || ferror(out))) {
        eng_err("cannot write the comparison: %s\n", strerror(errno ? errno : EIO));
        rc = -1;
    }
    free(ra);
    free(rb);
    return rc;
}
