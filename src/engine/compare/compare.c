/* compare.c: reading a report back (report.csv, or report.json with cJSON) as user input, for re-plotting and for
 * comparing two reports cell by cell with their 95% t intervals. */
#include "engine/views/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 100000          /* runs in one report file */
#define MAX_LINES 2000000        /* lines of a report.csv */
#define MAX_JSON_BYTES (256L << 20)

typedef struct {
    to_result *res;
    int n, cap;
    const char *path;
} loader;

/* One (run, n) point as read from a file: text fields unchecked, numbers unchecked. */
typedef struct {
    const char *task, *pos, *variant, *ext; /* variant NULL: an older report (base) */
    double seed, steps, loss, secs, n, em, acc;
    int generated;             /* 0 or 1; -1: not in the file */
    double learn;              /* steps_to_learn (0 when not in the file) */
} point;

/* Finds or appends the run of x's identity. NULL with a message on too many runs or no memory. */
static to_result *run_of(loader *l, const to_result *x, const char *where)
{
    for (int i = l->n - 1; i >= 0; i--) {
        to_result *r = &l->res[i];
        if (r->task == x->task && r->pos == x->pos && r->variant == x->variant && r->ext == x->ext &&
            r->ext_factor == x->ext_factor && r->seed == x->seed)
            return r;
    }
    if (l->n == MAX_RUNS) {
        to_err("%s%s: more than %d runs\n", l->path, where, MAX_RUNS);
        return NULL;
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        to_result *p = realloc(l->res, sizeof *p * (size_t)cap);
        if (!p) { to_err("%s: out of memory\n", l->path); return NULL; }
        l->res = p;
        l->cap = cap;
    }
    to_result *r = &l->res[l->n++];
    *r = *x;
    return r;
}

/* Validates one (run, n) point and adds it. where: " line 12" or " runs[3]". 0 or -1 with a message. */
static int add_point(loader *l, const char *where, const point *p)
{
    to_result x = {0};
    const char *why = NULL;
    if (rg_task_parse(p->task, &x.task)) why = "unknown task";
    else if (rg_pos_parse(p->pos, &x.pos)) why = "unknown encoding";
    else if (p->variant && to_variant_parse(p->variant, &x.variant)) why = "unknown variant";
    else if (to_ext_parse(p->ext, &x.ext, &x.ext_factor)) why = "unknown rope_ext";
    else if (!(p->seed >= 0 && p->seed <= 1000000 && p->seed == floor(p->seed)))
        why = "seed is not an integer in 0..1000000";
    else if (!(p->steps >= 0 && p->steps <= 1e12 && p->steps == floor(p->steps)))
        why = "steps is not an integer in 0..10^12";
    else if (!(isnan(p->loss) || (p->loss >= 0 && isfinite(p->loss)))) why = "final_loss is not a number >= 0 (or nan)";
    else if (!(p->secs >= 0 && isfinite(p->secs))) why = "train_seconds is not a number >= 0";
    else if (!(p->n >= 1 && p->n <= RG_TASK_MAX_N && p->n == floor(p->n))) why = "n is not an integer in 1..100000";
    else if (!(isnan(p->em) || (p->em >= 0 && p->em <= 1))) why = "exact_match is not in [0, 1] (or nan)";
    else if (!(isnan(p->acc) || (p->acc >= 0 && p->acc <= 1))) why = "token_acc is not in [0, 1] (or nan)";
    else if (isnan(p->em) != isnan(p->acc)) why = "exact_match and token_acc: one is nan, the other is not";
    else if (!(p->learn >= -1 && p->learn <= p->steps && p->learn == floor(p->learn)))
        why = "steps_to_learn is not -1, 0 or a step from 1 to steps";
    if (why) { to_err("%s%s: %s\n", l->path, where, why); return -1; }
    x.seed = (int)p->seed;
    x.steps_to_learn = (int64_t)p->learn;
    to_result *r = run_of(l, &x, where);
    if (!r) return -1;
    int n = (int)p->n;
    for (int j = 0; j < r->n_lens; j++)
        if (r->lens[j] == n) {
            to_err("%s%s: n = %d appears twice for %s/%s/%s/%s seed %d\n", l->path, where, n,
                    p->task, p->pos, p->variant ? p->variant : "base", p->ext, x.seed);
            return -1;
        }
    if (r->n_lens == TO_MAX_LENS) {
        to_err("%s%s: more than %d test lengths in one run\n", l->path, where, TO_MAX_LENS);
        return -1;
    }
    r->steps = (int64_t)p->steps;
    r->final_loss = p->loss;
    r->train_seconds = p->secs;
    r->lens[r->n_lens] = n;
    r->exact[r->n_lens] = p->em;
    r->generated[r->n_lens] = p->generated == 1;
    r->token_acc[r->n_lens++] = p->acc;
    return 0;
}

/* A whole field as a number (strtod: "nan" allowed here, ranges checked by add_point). */
static bool number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == 0 && errno != ERANGE;
}

/* The columns of report.csv: every header of every version names a subset; the first ten are required. */
enum {
    C_TASK, C_ENC, C_EXT, C_SEED, C_STEPS, C_LOSS, C_SECS, C_N, C_EM, C_ACC, C_VARIANT, C_TRAIN_LEN, C_GEN, C_LEARN,
    C_COUNT
};
static const char *const COLUMNS[C_COUNT] = {"task", "encoding", "rope_ext", "seed", "steps", "final_loss",
                                             "train_seconds", "n", "exact_match", "token_acc", "variant", "train_len",
                                             "generated", "steps_to_learn"};
#define C_REQUIRED 10

/* Reads the header into col[c] (the field index of column c, -1 when absent); *nf gets the field count. */
static int csv_header(loader *l, char *line, int col[C_COUNT], int *nf)
{
    for (int c = 0; c < C_COUNT; c++) col[c] = -1;
    *nf = 0;
    for (char *p = line; p; (*nf)++) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        int c = 0;
        while (c < C_COUNT && strcmp(p, COLUMNS[c]) != 0) c++;
        if (c == C_COUNT || col[c] >= 0 || *nf == C_COUNT) {
            to_err("%s line 1: not a report.csv header (column '%s')\n  expected: %s\n", l->path,
                    p, TO_CSV_HEADER);
            return -1;
        }
        col[c] = *nf;
        p = comma ? comma + 1 : NULL;
    }
    for (int c = 0; c < C_REQUIRED; c++)
        if (col[c] < 0) {
            to_err("%s line 1: not a report.csv header (no column %s)\n  expected: %s\n",
                    l->path, COLUMNS[c], TO_CSV_HEADER);
            return -1;
        }
    return 0;
}

/* One data line by the header's columns. 0 or -1 with a message. */
static int csv_line(loader *l, char *line, const int col[C_COUNT], int nf, const char *where, int *train_len)
{
    char *field[C_COUNT];
    int k = 0;
    for (char *p = line; p && k <= nf; k++) {
        if (k < nf) field[k] = p;
        p = strchr(p, ',');
        if (p) *p++ = 0;
    }
    if (k != nf) {
        to_err("%s%s: %d fields, expected %d\n", l->path, where, k, nf);
        return -1;
    }
    double v[C_COUNT];
    for (int c = C_SEED; c < C_COUNT; c++)
        if (c != C_VARIANT && col[c] >= 0 && !number(field[col[c]], &v[c])) {
            to_err("%s%s: field %d '%s' (%s) is not a number\n", l->path, where, col[c] + 1,
                    field[col[c]], COLUMNS[c]);
            return -1;
        }
    if (col[C_TRAIN_LEN] >= 0) {
        double tl = v[C_TRAIN_LEN];
        if (!(tl >= 1 && tl <= 1000 && tl == floor(tl)) || (*train_len >= 0 && *train_len != (int)tl)) {
            to_err("%s%s: train_len is not an integer in 1..1000 or differs from the first "
                            "line's\n", l->path, where);
            return -1;
        }
        *train_len = (int)tl;
    }
    if (col[C_GEN] >= 0 && v[C_GEN] != 0 && v[C_GEN] != 1) {
        to_err("%s%s: generated is not 0 or 1\n", l->path, where);
        return -1;
    }
    point p = {field[col[C_TASK]], field[col[C_ENC]], col[C_VARIANT] >= 0 ? field[col[C_VARIANT]] : NULL,
               field[col[C_EXT]], v[C_SEED], v[C_STEPS], v[C_LOSS], v[C_SECS], v[C_N], v[C_EM], v[C_ACC],
               col[C_GEN] >= 0 ? (int)v[C_GEN] : -1, col[C_LEARN] >= 0 ? v[C_LEARN] : 0};
    return add_point(l, where, &p);
}

static int load_csv(loader *l, int *train_len)
{
    FILE *f = to_fopen_read(l->path);
    if (!f) { to_err("cannot read %s: %s\n", l->path, strerror(errno)); return -1; }
    char line[1024], where[48];
    int rc = -1, col[C_COUNT], nf = 0;
    long lineno = 0;
    *train_len = -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, " line %ld", lineno);
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = 0;
        else if (!feof(f)) { to_err("%s%s: line too long\n", l->path, where); goto done; }
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (lineno > MAX_LINES) { to_err("%s: more than %d lines\n", l->path, MAX_LINES); goto done; }
        if (lineno == 1 ? csv_header(l, line, col, &nf) : csv_line(l, line, col, nf, where, train_len)) goto done;
    }
    if (ferror(f)) { to_err("cannot read %s: %s\n", l->path, strerror(errno)); goto done; }
    if (lineno == 0) { to_err("%s: empty file (no report.csv header)\n", l->path); goto done; }
    if (*train_len < 0) *train_len = 0; /* a report.csv without the column: training length unknown */
    rc = 0;
done:
    fclose(f);
    return rc;
}

/* A JSON number, or NaN for null; false when neither. */
static bool json_num(const cJSON *o, const char *key, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(x)) { *v = x->valuedouble; return true; }
    if (cJSON_IsNull(x)) { *v = NAN; return true; }
    return false;
}

static char *read_all(const char *path, long *size)
{
    FILE *f = to_fopen_read(path);
    if (!f) { to_err("cannot read %s: %s\n", path, strerror(errno)); return NULL; }
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (*size = ftell(f)) >= 0 && *size <= MAX_JSON_BYTES && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)*size + 1);
    if (!buf || fread(buf, 1, (size_t)*size, f) != (size_t)*size) {
        to_err("cannot read %s: %s\n", path, buf ? "read error" : "too large or unreadable");
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[*size] = 0;
    fclose(f);
    return buf;
}

static int load_json(loader *l, int *train_len)
{
    long size;
    char *text = read_all(l->path, &size);
    if (!text) return -1;
    cJSON *root = cJSON_ParseWithLength(text, (size_t)size);
    free(text);
    int rc = -1;
    double tl;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs"), *run;
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (!root) { to_err("%s: not valid JSON\n", l->path); return -1; }
    if (!cJSON_IsArray(runs) || !json_num(cfg, "train_len", &tl) || !(tl >= 1 && tl <= 1000 && tl == floor(tl))) {
        to_err("%s: not a report.json (needs \"runs\": [...] and \"config\": {\"train_len\": "
                        "1..1000})\n", l->path);
        goto done;
    }
    *train_len = (int)tl;
    int i = 0;
    cJSON_ArrayForEach(run, runs) {
        char where[48];
        snprintf(where, sizeof where, " runs[%d]", i++);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(run, "task"), *p = cJSON_GetObjectItemCaseSensitive(run, "encoding");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(run, "rope_ext"), *rs = cJSON_GetObjectItemCaseSensitive(run, "results"), *x;
        const cJSON *va = cJSON_GetObjectItemCaseSensitive(run, "variant");
        double seed, steps, loss, secs, learn = 0;
        if (cJSON_GetObjectItemCaseSensitive(run, "steps_to_learn") && !json_num(run, "steps_to_learn", &learn)) {
            to_err("%s%s: steps_to_learn is not a number\n", l->path, where);
            goto done;
        }
        if (!cJSON_IsString(t) || !cJSON_IsString(p) || !cJSON_IsString(e) || !cJSON_IsArray(rs) ||
            (va && !cJSON_IsString(va)) || !json_num(run, "seed", &seed) || !json_num(run, "steps", &steps) ||
            !json_num(run, "final_loss", &loss) || !json_num(run, "train_seconds", &secs)) {
            to_err("%s%s: needs task, encoding, rope_ext (strings; variant a string if given), "
                            "seed, steps, final_loss, train_seconds (numbers) and results (an array)\n", l->path, where);
            goto done;
        }
        if (cJSON_GetArraySize(rs) == 0) { to_err("%s%s: no results\n", l->path, where); goto done; }
        cJSON_ArrayForEach(x, rs) {
            double n, em, acc;
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(x, "generated");
            if (!json_num(x, "n", &n) || !json_num(x, "exact_match", &em) || !json_num(x, "token_acc", &acc) ||
                (g && !cJSON_IsBool(g))) {
                to_err("%s%s: a result needs n, exact_match and token_acc (and generated, if "
                                "given, true or false)\n", l->path, where);
                goto done;
            }
            point pt = {t->valuestring, p->valuestring, va ? va->valuestring : NULL, e->valuestring, seed, steps, loss,
                        secs, n, em, acc, g ? cJSON_IsTrue(g) : -1, learn};
            if (add_point(l, where, &pt)) goto done;
        }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int to_report_load(const char *path, to_result **res, int *n_res, int *train_len)
{
    loader l = {NULL, 0, 0, path};
    size_t len = strlen(path);
    bool json = len >= 5 && strcmp(path + len - 5, ".json") == 0;
    int rc = json ? load_json(&l, train_len) : load_csv(&l, train_len);
    if (rc == 0 && l.n == 0) { to_err("%s: no results\n", path); rc = -1; }
    if (rc) { free(l.res); l.res = NULL; l.n = 0; }
    *res = l.res;
    *n_res = l.n;
    return rc;
}

/* ------------------------------------------------------------------ the settings of two reports */

/* The text of path (malloc'ed, NUL-terminated), or NULL if it cannot be read whole within MAX_JSON_BYTES / 16. */
static char *slurp(const char *path)
{
    FILE *f = to_fopen_read(path);
    if (!f) return NULL;
    size_t cap = MAX_JSON_BYTES / 16;
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

size_t to_report_stem(const char *report)
{
    size_t len = strlen(report);
    return len > 4 && strcmp(report + len - 4, ".csv") == 0 ? len - 4
           : len > 5 && strcmp(report + len - 5, ".json") == 0 ? len - 5 : len;
}

/* to_report_settings (report.h). */
void *to_report_settings(const char *report, char *where, size_t cap)
{
    size_t len = strlen(report), stem = to_report_stem(report);
    char folder[TO_PATH], path[3][TO_PATH + 32];
    to_folder_of(report, folder, sizeof folder);
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
    char wa[TO_PATH + 32], wb[TO_PATH + 32];
    cJSON *a = to_report_settings(report_a, wa, sizeof wa), *b = to_report_settings(report_b, wb, sizeof wb);
    fprintf(out, "\nSettings that differ (A's read from %s, B's from %s):\n", wa, wb);
    const char *side[2] = {report_a, report_b}, *read[2] = {wa, wb};
    const cJSON *ab[2] = {a, b};
    bool known = true;
    for (int i = 0; i < 2; i++) {
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(ab[i], "settings"))) continue;
        known = false;
        if (!ab[i]) /* the three files to_report_settings tries */
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

/* ------------------------------------------------------------------ comparing two reports */

/* "0.102 [0.000, 0.363]    1/6 max 0.410 med 0.020", "0.610 (1 seed)    1/1", "-": one report's side of a line
 * (mean [95% t interval] k/N, then the maximum over seeds and the median). */
static void cell_text(const to_stat *s, bool exact, char *buf, size_t cap)
{
    char kn[24] = "";
    if (exact && s->n > 0) snprintf(kn, sizeof kn, "%d/%d", s->k, s->n);
    if (s->n == 0) snprintf(buf, cap, "-");
    else if (s->n == 1) snprintf(buf, cap, "%.3f %-14s %6s", s->mean, "(1 seed)", kn);
    else snprintf(buf, cap, "%.3f [%.3f, %.3f] %6s max %.3f med %.3f", s->mean, s->lo, s->hi, kn, s->max, s->median);
}

/* Prints every cell of the union of the rows of a and b for one metric; counts the cells whose intervals do not
 * overlap. */
static int compare_metric(const to_table *a, const to_table *b, bool exact, FILE *out)
{
    int differ = 0;
    fprintf(out, "\n%s\n%-8s %-18s %6s  %-49s  %-49s  %s\n", exact ? "exact match (k/N: seeds >= 0.5)" : "token accuracy",
            "task", "encoding", "n", "A mean [95% t interval] k/N max median", "B mean [95% t interval] k/N max median",
            "intervals overlap");
    for (int pass = 0; pass < 2; pass++) {
        const to_table *t = pass ? b : a, *o = pass ? a : b;
        for (int k = 0; k < t->n_rows; k++) {
            const to_row *r = &t->rows[k], *ro = to_table_row_like(o, r);
            if (pass && ro) continue; /* printed in the first pass */
            const to_row *ra = pass ? ro : r, *rb = pass ? r : ro;
            int task = r->task, lens[2 * TO_MAX_TABLE_LENS], nl = 0;
            for (int j = 0; j < a->n_lens[task]; j++) lens[nl++] = a->lens[task][j];
            for (int j = 0; j < b->n_lens[task]; j++) {
                int q = 0;
                while (q < a->n_lens[task] && a->lens[task][q] != b->lens[task][j]) q++;
                if (q == a->n_lens[task]) lens[nl++] = b->lens[task][j];
            }
            for (int j = 0; j < nl; j++) {
                to_stat sa = TO_STAT_NONE, sb = sa;
                if (ra) to_table_cell(a, ra, lens[j], exact, &sa, NULL);
                if (rb) to_table_cell(b, rb, lens[j], exact, &sb, NULL);
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
                        to_row_label(r, label, sizeof label), lens[j], ta, tb, ov);
            }
        }
    }
    return differ;
}

/* Training runs among n results: each run has one result for its encoding (ext none) plus one per RoPE extension. */
static int count_runs(const to_result *r, int n)
{
    int runs = 0;
    for (int i = 0; i < n; i++) runs += r[i].ext == RG_ROPE_EXT_NONE;
    return runs;
}

int to_compare(const char *report_a, const char *report_b, FILE *out)
{
    to_result *ra = NULL, *rb = NULL;
    int na, nb, la, lb, rc = -1;
    to_table ta, tb;
    if (to_report_load(report_a, &ra, &na, &la)) return -1;
    if (to_report_load(report_b, &rb, &nb, &lb)) { free(ra); return -1; }
    if (to_table_build(&ta, ra, na, la) == 0) {
        if (to_table_build(&tb, rb, nb, lb) == 0) {
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
            to_table_free(&tb);
        }
        to_table_free(&ta);
    }
    if (rc == 0 && (fflush(out) != 0 || ferror(out))) {
        to_err("cannot write the comparison: %s\n", strerror(errno ? errno : EIO));
        rc = -1;
    }
    free(ra);
    free(rb);
    return rc;
}
