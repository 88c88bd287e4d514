/* combine.c: one report from several reports of the same grid, each a block of it (train_order --combine): a grid
 * too long for one session (make experiment: 330 runs, ~8 h on 2 cores) is run as `--seeds 1,2`, then `--seeds 3,4`,
 * ..., or split by tasks and encodings (make experiment-small's five encodings, then the other six, at the same
 * seeds), each block's report committed, and the blocks read back as one report with the intervals over all their
 * seeds. A run depends only on its task, encoding, variant, seed and the shared settings (never on the other runs of
 * its grid), so the union of the blocks is the grid run at once. The seeds, tasks and encodings may differ between
 * blocks (the combined settings hold their union; an encoding setting in two blocks must have one value); any other
 * setting that differs is refused, naming it; a run present in two blocks is refused, naming the run and the later
 * file; rows with fewer seeds than the union, and rows no block ran, are named in the report. A block's
 * per-position counts (its report_positions.csv) and its runs' logs (its runs/ folder, when the block is an output
 * folder) come along, so the combined report draws the per-position and over-training plots of the seeds that
 * have them. */
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/compare/compare.h"
#include "engine/results/results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Settings that may differ between the blocks of one grid: the seeds, and where and how the output went. */
static const char *const MAY_DIFFER[] = {"seed", "seeds", "out", "overwrite", "quiet", "jobs", NULL};
/* Provenance that is named, not refused (a block run on another machine or after a documentation commit). */
static const char *const PROV_KEYS[] = {"commit", "host_cpu", "blas_core", NULL};

/* Comma lists whose union the combined report takes: the tasks, the encodings, the encodings' settings
 * (NAME=VALUE items; the same NAME with two values is refused) and the model sizes (--sizes; a block without the
 * size axis beside blocks with it is of its settings' one size: normalize_size). */
static const char *const UNION_KEYS[] = {"task", "pos", "pos_config", "sizes", NULL};

static bool in_list(const char *key, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(key, list[i]) == 0) return true;
    return false;
}

static bool may_differ(const char *key) { return in_list(key, MAY_DIFFER) || in_list(key, UNION_KEYS); }

static char *value_text(const cJSON *v)
{
    if (!v) return strdup("(absent)");
    if (cJSON_IsString(v)) return strdup(v->valuestring);
    return cJSON_PrintUnformatted(v);
}

/* The first setting of a or b (objects) that differs and may not; NULL when none. */
static const char *differing_setting(const cJSON *a, const cJSON *b)
{
    for (int pass = 0; pass < 2; pass++)
        for (const cJSON *x = (pass ? b : a)->child; x; x = x->next) {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(pass ? a : b, x->string);
            if (!may_differ(x->string) && (!y || !cJSON_Compare(x, y, true))) return x->string;
        }
    return NULL;
}

/* Whether the comma list `list` holds `item` (len characters) as one of its items. */
static bool list_holds(const char *list, const char *item, size_t len)
{
    for (const char *q = list; *q; q += strcspn(q, ","), q += *q == ',')
        if (strcspn(q, ",") == len && strncmp(q, item, len) == 0) return true;
    return false;
}

/* The first of reports[0..i) whose settings' `key` list holds item (len characters): the block a merged value
 * came from (reports[0] when none does: the conflict is then with the first report's value). */
static const char *holder(const char *const *reports, cJSON *const *info, int i, const char *key, const char *item,
                          size_t len)
{
    for (int j = 0; j < i; j++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(info[j], "settings"), key);
        if (cJSON_IsString(v) && list_holds(v->valuestring, item, len)) return reports[j];
    }
    return reports[0];
}

/* The items of reports[i]'s comma list `key` added to the merged object's list that it lacks. pos_config items must
 * be NAME=VALUE, and a NAME the merged list holds with another value is refused, naming the block it came from.
 * 0, or -1 with a message. */
static int merge_list(cJSON *merged, const char *key, const char *const *reports, cJSON *const *info, int i)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(merged, key);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(info[i], "settings"), key);
    if ((!a && !b) || cJSON_Compare(a, b, true)) return 0;
    if (!cJSON_IsString(a) || !cJSON_IsString(b)) {
        char *ta = value_text(a), *tb = value_text(b);
        eng_err("--combine: %s and an earlier report of the list differ in the setting '%s' (%s "
                "against %s), which is not a list\n", reports[i], key, tb ? tb : "?", ta ? ta : "?");
        free(ta);
        free(tb);
        return -1;
    }
    bool settings = strcmp(key, "pos_config") == 0;
    for (int pass = 0; pass < 2 && settings; pass++) /* every item NAME=VALUE, in both lists */
        for (const char *q = pass ? b->valuestring : a->valuestring; *q; q += strcspn(q, ","), q += *q == ',')
            if (strcspn(q, "=") >= strcspn(q, ",")) {
                eng_err("--combine: %s: the setting 'pos_config' holds the item '%.*s', which is "
                        "not NAME=VALUE\n", pass ? reports[i] : holder(reports, info, i, key, q, strcspn(q, ",")),
                        (int)strcspn(q, ","), q);
                return -1;
            }
    size_t cap = strlen(a->valuestring) + strlen(b->valuestring) + 2;
    char *out = malloc(cap), *items = strdup(b->valuestring);
    if (!out || !items) { free(out); free(items); eng_err("--combine: out of memory\n"); return -1; }
    snprintf(out, cap, "%s", a->valuestring);
    int rc = 0;
    for (char *save = NULL, *it = strtok_r(items, ",", &save); it && rc == 0; it = strtok_r(NULL, ",", &save)) {
        size_t name = settings ? strcspn(it, "=") : strlen(it);
        if (list_holds(out, it, strlen(it))) continue;
        for (const char *q = out; *q && settings; q += strcspn(q, ","), q += *q == ',') {
            size_t len = strcspn(q, ",");
            if (strcspn(q, "=") == name && strncmp(q, it, name) == 0) {
                eng_err("--combine: %s and %s differ in the encoding setting %.*s (%.*s against "
                        "%s): blocks of one grid share every setting of an encoding they both hold\n",
                        holder(reports, info, i, key, q, len), reports[i], (int)name, it, (int)(len - name - 1),
                        q + name + 1, it + name + 1);
                rc = -1;
                break;
            }
        }
        if (rc == 0) snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "," : "", it);
    }
    if (rc == 0) cJSON_ReplaceItemInObjectCaseSensitive(merged, key, cJSON_CreateString(out));
    free(out);
    free(items);
    return rc;
}

/* Appends to sources a line per (task, encoding, variant) row trained with fewer seeds than the union: a grid split
 * by encodings and by seeds need not be a rectangle, and its intervals are then over fewer seeds in those rows. */
static int name_short_rows(eng_combined *c, size_t *cap_src);

static bool same_run(const eng_result *x, const eng_result *y)
{
    return x->task == y->task && x->pos == y->pos && x->variant == y->variant && x->ext == y->ext &&
           x->ext_factor == y->ext_factor && x->seed == y->seed && strcmp(x->size, y->size) == 0;
}

/* Whether x is a training run (not a RoPE scaling row evaluated on one) of y's row: task, encoding, variant and
 * size. */
static bool training_run_of(const eng_result *x, const eng_result *y)
{
    return x->ext == RG_ROPE_EXT_NONE && x->task == y->task && x->pos == y->pos && x->variant == y->variant &&
           strcmp(x->size, y->size) == 0;
}

/* The label of a run's row with its size: "alibi 128x4" ("alibi" without the size axis). */
static const char *run_label(const eng_result *r, rg_rope_ext ext, double factor, char *buf, size_t cap)
{
    eng_label(r->pos, r->variant, ext, factor, buf, cap);
    size_t n = strlen(buf);
    if (r->size[0] && n < cap) snprintf(buf + n, cap - n, " %s", r->size);
    return buf;
}

/* A block's settings without the size axis among blocks with it: its one size as "sizes" (eng_settings_size) in
 * place of d_model, n_layers and d_ff, so that the blocks compare as a grid's blocks of sizes. 0, or -1 with a
 * message. */
static int normalize_size(cJSON *set, const char *report)
{
    if (cJSON_GetObjectItemCaseSensitive(set, "sizes")) return 0;
    eng_size s;
    if (eng_settings_size(set, &s)) {
        eng_err("--combine: %s: its settings give no model size (d_model, n_layers, n_heads, d_ff), needed beside "
                "the reports with --sizes\n", report);
        return -1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(set, "d_model");
    cJSON_DeleteItemFromObjectCaseSensitive(set, "n_layers");
    cJSON_DeleteItemFromObjectCaseSensitive(set, "d_ff");
    cJSON_AddStringToObject(set, "sizes", s.text);
    return 0;
}

/* Appends printf text to the malloc'ed *buf (grown as needed). */
static int append(char **buf, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int append(char **buf, size_t *cap, const char *fmt, ...)
{
    size_t at = *buf ? strlen(*buf) : 0;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf ? *buf + at : NULL, *buf ? *cap - at : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return -1;
        if (*buf && at + (size_t)n < *cap) return 0;
        size_t want = 2 * (at + (size_t)n + 256);
        char *p = realloc(*buf, want);
        if (!p) return -1;
        if (!*buf) p[0] = 0;
        *buf = p;
        *cap = want;
    }
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* The extras of an input whose results are res[0..n) (the last n of c->res): its per-position counts from
 * <path without .csv/.json>_positions.csv, and, for X/report.csv or X/report.json, the logs in X/runs. Each named in
 * c->sources. 0, or -1 with a message (a malformed positions file, out of memory). */
static int add_extras(eng_combined *c, const char *path, eng_result *res, int n, size_t *cap_src)
{
    char file[ENG_PATH + 32];
    snprintf(file, sizeof file, "%.*s_positions.csv", (int)eng_report_stem(path), path);
    int slots = 0, got = eng_read_positions_csv(file, res, n, &slots);
    if (got < 0) {
        eng_err("--combine: the per-position counts beside %s are malformed (above)\n", path);
        return -1;
    }
    if (got && append(&c->sources, cap_src, "  - per-position counts of %d (run, test length) pairs from `%s`\n", slots,
                      file))
        return -1;
    for (int i = 0; i < n; i++) res[i].runs_dir = ""; /* no logs unless its own runs/ holds them (never --out's) */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "report.csv") != 0 && strcmp(base, "report.json") != 0) return 0;
    snprintf(file, sizeof file, "%.*sruns", (int)(base - path), path);
    struct stat st;
    if (stat(file, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    bool holds = false; /* a folder of this block's runs (a combined report's runs/ is empty) */
    for (int i = 0; i < n && !holds; i++) {
        char run[128], dir[ENG_PATH + 200];
        snprintf(dir, sizeof dir, "%s/%s", file, eng_run_name(res[i].task, res[i].pos, res[i].variant, res[i].size,
                                                              res[i].seed, run, sizeof run));
        holds = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (!holds) return 0;
    if (c->n_dirs == ENG_COMBINE_MAX || !(c->runs_dirs[c->n_dirs] = strdup(file))) {
        eng_err("--combine: out of memory\n");
        return -1;
    }
    for (int i = 0; i < n; i++) res[i].runs_dir = c->runs_dirs[c->n_dirs];
    c->n_dirs++;
    return append(&c->sources, cap_src, "  - its runs' logs (training loss, extrapolation over training) from `%s`\n",
                  file);
}

/* One input: its results appended to c, its seeds added to the union, its line of c->sources. 0 or -1. */
static int add_input(eng_combined *c, const char *path, const cJSON *info, int *cap_res, size_t *cap_src,
                     const cJSON *first_info, const char *first_path)
{
    eng_result *res;
    int n, train_len;
    if (eng_report_load(path, &res, &n, &train_len)) return -1;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(info, "settings");
    eng_size size; /* a block without the size axis among blocks with it: its runs of its one size */
    if (cJSON_GetObjectItemCaseSensitive(set, "sizes") && !eng_results_sized(res, n) &&
        eng_settings_size(set, &size) == 0)
        eng_results_set_size(res, n, &size);
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(set, "task"), *pos = cJSON_GetObjectItemCaseSensitive(set, "pos");
    for (int i = 0; i < n; i++) { /* the lists the union is taken of must name what the block holds */
        const char *tn = rg_task_name(res[i].task), *pn = rg_pos_name(res[i].pos);
        bool t_ok = cJSON_IsString(tasks) && list_holds(tasks->valuestring, tn, strlen(tn));
        if (!t_ok || !cJSON_IsString(pos) || !list_holds(pos->valuestring, pn, strlen(pn))) {
            eng_err("--combine: %s holds a run of %s %s, but its settings list the %s %s\n", path,
                    tn, pn, t_ok ? "encodings" : "tasks", cJSON_IsString(t_ok ? pos : tasks) ?
                    (t_ok ? pos : tasks)->valuestring : "(none)");
            free(res);
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < c->n_res; j++)
            if (same_run(&res[i], &c->res[j])) {
                char label[160];
                run_label(&res[i], res[i].ext, res[i].ext_factor, label, sizeof label);
                eng_err("--combine: the run %s %s seed %d is in %s and in an earlier report of "
                        "the list (a seed may be in one block only)\n", rg_task_name(res[i].task), label,
                        res[i].seed, path);
                free(res);
                return -1;
            }
    if (c->n_res + n > *cap_res) {
        int cap = 2 * (c->n_res + n);
        eng_result *p = realloc(c->res, sizeof *p * (size_t)cap);
        if (!p) { free(res); eng_err("--combine: out of memory\n"); return -1; }
        c->res = p;
        *cap_res = cap;
    }
    memcpy(c->res + c->n_res, res, sizeof *res * (size_t)n);
    c->n_res += n;
    free(res);
    int runs = 0, seeds[ENG_MAX_SEEDS], n_seeds = 0;
    for (int i = c->n_res - n; i < c->n_res; i++) {
        const eng_result *r = &c->res[i];
        if (r->ext != RG_ROPE_EXT_NONE) continue;
        runs++;
        bool seen = false;
        for (int s = 0; s < n_seeds; s++) seen |= seeds[s] == r->seed;
        if (!seen && n_seeds < ENG_MAX_SEEDS) seeds[n_seeds++] = r->seed;
        seen = false;
        for (int s = 0; s < c->n_seeds; s++) seen |= c->seeds[s] == r->seed;
        if (!seen && c->n_seeds == ENG_MAX_SEEDS) {
            eng_err("--combine: %s brings the seeds of the union past %d\n", path, ENG_MAX_SEEDS);
            return -1;
        }
        if (!seen) c->seeds[c->n_seeds++] = r->seed;
    }
    c->runs += runs;
    qsort(seeds, (size_t)n_seeds, sizeof *seeds, cmp_int);
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(info, "provenance");
    const cJSON *commit = cJSON_GetObjectItemCaseSensitive(pv, "commit");
    const cJSON *wall = cJSON_GetObjectItemCaseSensitive(pv, "wall_seconds");
    bool partial = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(info, "partial"));
    c->partial |= partial;
    c->wall_seconds = cJSON_IsNumber(wall) ? c->wall_seconds + wall->valuedouble : NAN;
    char seed_text[256] = "";
    for (int s = 0, at = 0; s < n_seeds; s++) { /* named in part past ~200 characters: the first ones, then a count */
        int w = at < 200 ? snprintf(seed_text + at, sizeof seed_text - (size_t)at, "%s%d", s ? "," : "", seeds[s])
                         : snprintf(seed_text + at, sizeof seed_text - (size_t)at, " and %d more", n_seeds - s);
        if (at >= 200 || w < 0) break;
        at += w;
    }
    char wall_text[64] = "wall time not known";
    if (cJSON_IsNumber(wall)) snprintf(wall_text, sizeof wall_text, "%.1f s", wall->valuedouble);
    if (append(&c->sources, cap_src, "- `%s`: %d training runs, seeds %s, tasks %s, encodings %s, commit %s, %s%s\n",
               path, runs, seed_text, cJSON_IsString(tasks) ? tasks->valuestring : "not known",
               cJSON_IsString(pos) ? pos->valuestring : "not known",
               cJSON_IsString(commit) ? commit->valuestring : "not known", wall_text,
               partial ? ", **PARTIAL** (written while its runs were going)" : ""))
        return -1;
    const cJSON *fpv = cJSON_GetObjectItemCaseSensitive(first_info, "provenance");
    for (int k = 0; PROV_KEYS[k] && first_info != info; k++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(fpv, PROV_KEYS[k]), *y = cJSON_GetObjectItemCaseSensitive(pv, PROV_KEYS[k]);
        if (x && y && cJSON_Compare(x, y, true)) continue;
        char *tx = value_text(x), *ty = value_text(y);
        eng_err("--combine: note: %s has %s %s, %s has %s (the combined report names both)\n",
                first_path, PROV_KEYS[k], tx ? tx : "?", path, ty ? ty : "?");
        if (append(&c->sources, cap_src, "  - its %s differs from the first report's: %s against %s\n", PROV_KEYS[k],
                   ty ? ty : "?", tx ? tx : "?")) { free(tx); free(ty); return -1; }
        free(tx);
        free(ty);
    }
    return add_extras(c, path, c->res + c->n_res - n, n, cap_src);
}

int eng_combine_load(const char *const *reports, int n, eng_combined *c)
{
    memset(c, 0, sizeof *c);
    if (n < 1 || n > ENG_COMBINE_MAX) {
        eng_err("--combine: %d reports (1 to %d allowed)\n", n, ENG_COMBINE_MAX);
        return -1;
    }
    cJSON *info[ENG_COMBINE_MAX] = {NULL}, *merged = NULL; /* merged: the first report's settings, lists united */
    int cap_res = 0, rc = -1;
    size_t cap_src = 0;
    bool sized = false; /* a block with the size axis (its settings hold "sizes") */
    for (int i = 0; i < n; i++) {
        char where[ENG_PATH + 32];
        struct stat st;
        if (stat(reports[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            /* an output folder names its report only by convention: say which file to give, not "not found" */
            eng_err("--combine: %s is a folder: give its report.csv or report.json\n", reports[i]);
            goto done;
        }
        info[i] = eng_report_settings(reports[i], where, sizeof where);
        const cJSON *set = cJSON_GetObjectItemCaseSensitive(info[i], "settings");
        if (!cJSON_IsObject(set)) {
            eng_err("--combine: %s: no settings found (read %s; looked for its report.json, the "
                    "settings.json in its folder and the Settings block of its report.md): without them the reports "
                    "cannot be checked to be blocks of one grid\n", reports[i], where);
            goto done;
        }
        sized |= cJSON_GetObjectItemCaseSensitive(set, "sizes") != NULL;
    }
    for (int i = 0; i < n && sized; i++)
        if (normalize_size(cJSON_GetObjectItemCaseSensitive(info[i], "settings"), reports[i])) goto done;
    for (int i = 0; i < n; i++) {
        const cJSON *set = cJSON_GetObjectItemCaseSensitive(info[i], "settings");
        const cJSON *first = cJSON_GetObjectItemCaseSensitive(info[0], "settings");
        const char *key = i ? differing_setting(first, set) : NULL;
        if (key) {
            char *ta = value_text(cJSON_GetObjectItemCaseSensitive(first, key));
            char *tb = value_text(cJSON_GetObjectItemCaseSensitive(set, key));
            eng_err("--combine: %s and %s differ in the setting '%s' (%s against %s): only the "
                    "seeds, tasks, encodings and model sizes (and out, overwrite, quiet, jobs) may differ between "
                    "blocks of one grid\n", reports[0],
                    reports[i], key, ta ? ta : "?", tb ? tb : "?");
            free(ta);
            free(tb);
            goto done;
        }
        if (!i && !(merged = cJSON_Duplicate(first, true))) { eng_err("--combine: out of memory\n"); goto done; }
        for (int k = 0; i && UNION_KEYS[k]; k++)
            if (merge_list(merged, UNION_KEYS[k], reports, info, i))
                goto done;
        if (add_input(c, reports[i], info[i], &cap_res, &cap_src, info[0], reports[0])) goto done;
    }
    char *list = c->sources;
    c->sources = NULL;
    size_t cap = 0;
    if (append(&c->sources, &cap, "**%d training runs** (seeds", c->runs) == 0) {
        qsort(c->seeds, (size_t)c->n_seeds, sizeof *c->seeds, cmp_int);
        for (int s = 0; s < c->n_seeds; s++) append(&c->sources, &cap, "%s%d", s ? "," : " ", c->seeds[s]);
        append(&c->sources, &cap, ") from %d reports%s:\n\n%s", n, c->partial ? "; **one or more of them PARTIAL**, so "
               "this report holds fewer runs than their grids" : "", list ? list : "");
    }
    free(list);
    c->settings = cJSON_PrintUnformatted(merged);
    if (!c->settings || !c->sources || name_short_rows(c, &cap)) {
        eng_err("--combine: out of memory\n");
        goto done;
    }
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(info[0], "settings"), "train_len");
    c->train_len = cJSON_IsNumber(tl) ? (int)tl->valuedouble : 0;
    rc = 0;
done:
    cJSON_Delete(merged);
    for (int i = 0; i < n; i++) cJSON_Delete(info[i]);
    if (rc) eng_combined_free(c);
    return rc;
}

void eng_combined_free(eng_combined *c)
{
    free(c->res);
    cJSON_free(c->settings);
    free(c->sources);
    for (int i = 0; i < c->n_dirs; i++) free(c->runs_dirs[i]);
    memset(c, 0, sizeof *c);
}

static int name_short_rows(eng_combined *c, size_t *cap_src)
{
    for (int i = 0; i < c->n_res; i++) {
        const eng_result *r = &c->res[i];
        bool first = training_run_of(r, r);
        for (int j = 0; j < i && first; j++) /* the row's first training run: count its seeds once */
            first = !training_run_of(&c->res[j], r);
        if (!first) continue;
        int seeds = 0;
        for (int j = i; j < c->n_res; j++)
            seeds += training_run_of(&c->res[j], r);
        if (seeds >= c->n_seeds) continue;
        char label[160];
        run_label(r, RG_ROPE_EXT_NONE, 0, label, sizeof label);
        if (append(&c->sources, cap_src, "- the row %s %s holds %d of the %d seeds (its intervals are over those)\n",
                   rg_task_name(r->task), label, seeds, c->n_seeds))
            return -1;
    }
    /* a task and an encoding each in some block, never together: the union's grid has a row no block ran */
    for (int t = 0; t < rg_task_count(); t++)
        for (int p = 0; p < rg_pos_count(); p++) {
            bool task = false, pos = false, both = false;
            for (int i = 0; i < c->n_res; i++) {
                task |= c->res[i].task == (rg_task)t;
                pos |= c->res[i].pos == (rg_pos_kind)p;
                both |= c->res[i].task == (rg_task)t && c->res[i].pos == (rg_pos_kind)p;
            }
            if (task && pos && !both &&
                append(&c->sources, cap_src, "- no block ran %s %s: the union of the tasks and encodings is not a "
                       "full grid, and the report has no such row\n", rg_task_name((rg_task)t),
                       rg_pos_name((rg_pos_kind)p)))
                return -1;
        }
    return 0;
}
