/* report_load.c: reading a report back (report.csv, or report.json with cJSON) as user input, every field
 * validated, into the results it was made from: --replot, --compare and --combine start here. */
#include "engine/base/files.h"
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/sizes.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 100000          /* runs in one report file */
#define MAX_LINES 2000000        /* lines of a report.csv */
#define MAX_JSON_BYTES (256L << 20)

typedef struct {
    eng_result *res;
    int n, cap;
    const char *path;
} loader;

/* One (run, n) point as read from a file: text fields unchecked, numbers unchecked. */
typedef struct {
    const char *task, *pos, *variant, *ext; /* variant NULL: an older report (base) */
    double seed, steps, loss, secs, n, em, acc;
    int generated;             /* 0 or 1; -1: not in the file */
    double learn;              /* steps_to_learn (0 when not in the file) */
    const char *size;          /* the model size (a report with the size axis), NULL when not in the file */
    double d_model, n_layers, n_heads, d_ff, params;
} point;

/* Finds or appends the run of x's identity. NULL with a message on too many runs or no memory. */
static eng_result *run_of(loader *l, const eng_result *x, const char *where)
{
    for (int i = l->n - 1; i >= 0; i--) {
        eng_result *r = &l->res[i];
        if (r->task == x->task && r->pos == x->pos && r->variant == x->variant && r->ext == x->ext &&
            r->ext_factor == x->ext_factor && r->seed == x->seed && strcmp(r->size, x->size) == 0)
            return r;
    }
    if (l->n == MAX_RUNS) {
        eng_err("%s%s: more than %d runs\n", l->path, where, MAX_RUNS);
        return NULL;
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        eng_result *p = realloc(l->res, sizeof *p * (size_t)cap);
        if (!p) { eng_err("%s: out of memory\n", l->path); return NULL; }
        l->res = p;
        l->cap = cap;
    }
    eng_result *r = &l->res[l->n++];
    *r = *x;
    return r;
}

/* The model size of a point into x (its text and numbers): NULL, or why they are not one size. */
static const char *size_fields(const point *p, eng_result *x)
{
    eng_size s;
    double v[5] = {p->d_model, p->n_layers, p->n_heads, p->d_ff, p->params};
    for (int i = 0; i < 5; i++)
        if (!(v[i] >= 0 && v[i] <= 1e12 && v[i] == floor(v[i]))) return "d_model, n_layers, n_heads, d_ff or params "
                                                                         "is not a whole number";
    if (eng_size_parse(p->size, &s) || strcmp(s.text, p->size) != 0 || s.d_model != p->d_model ||
        s.n_layers != p->n_layers || (s.n_heads && s.n_heads != p->n_heads) || (s.d_ff && s.d_ff != p->d_ff) ||
        !(p->n_heads >= 1 && p->n_heads <= 256) || !(p->d_ff >= 1 && p->d_ff <= 65536))
        return "size is not a model size DxL[hH][fF] matching d_model, n_layers, n_heads and d_ff";
    memcpy(x->size, s.text, sizeof x->size);
    x->d_model = s.d_model;
    x->n_layers = s.n_layers;
    x->n_heads = (int)p->n_heads;
    x->d_ff = (int)p->d_ff;
    x->params = (int64_t)p->params;
    return NULL;
}

/* Validates one (run, n) point and adds it. where: " line 12" or " runs[3]". 0 or -1 with a message. */
static int add_point(loader *l, const char *where, const point *p)
{
    eng_result x = {0};
    const char *why = NULL;
    if (rg_task_parse(p->task, &x.task)) why = "unknown task";
    else if (rg_pos_parse(p->pos, &x.pos)) why = "unknown encoding";
    else if (p->variant && eng_variant_parse(p->variant, &x.variant)) why = "unknown variant";
    else if (eng_ext_parse(p->ext, &x.ext, &x.ext_factor)) why = "unknown rope_ext";
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
    if (!why && p->size) why = size_fields(p, &x);
    if (why) { eng_err("%s%s: %s\n", l->path, where, why); return -1; }
    x.seed = (int)p->seed;
    x.steps_to_learn = (int64_t)p->learn;
    eng_result *r = run_of(l, &x, where);
    if (!r) return -1;
    int n = (int)p->n;
    for (int j = 0; j < r->n_lens; j++)
        if (r->lens[j] == n) {
            eng_err("%s%s: n = %d appears twice for %s/%s/%s/%s seed %d\n", l->path, where, n,
                    p->task, p->pos, p->variant ? p->variant : "base", p->ext, x.seed);
            return -1;
        }
    if (r->n_lens == ENG_MAX_LENS) {
        eng_err("%s%s: more than %d test lengths in one run\n", l->path, where, ENG_MAX_LENS);
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
    C_SIZE, C_DMODEL, C_NLAYERS, C_NHEADS, C_DFF, C_PARAMS, C_COUNT
};
static const char *const COLUMNS[C_COUNT] = {"task", "encoding", "rope_ext", "seed", "steps", "final_loss",
                                             "train_seconds", "n", "exact_match", "token_acc", "variant", "train_len",
                                             "generated", "steps_to_learn", "size", "d_model", "n_layers", "n_heads",
                                             "d_ff", "params"};
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
            eng_err("%s line 1: not a report.csv header (column '%s')\n  expected: %s\n", l->path,
                    p, ENG_CSV_HEADER);
            return -1;
        }
        col[c] = *nf;
        p = comma ? comma + 1 : NULL;
    }
    for (int c = 0; c < C_REQUIRED; c++)
        if (col[c] < 0) {
            eng_err("%s line 1: not a report.csv header (no column %s)\n  expected: %s\n",
                    l->path, COLUMNS[c], ENG_CSV_HEADER);
            return -1;
        }
    for (int c = C_SIZE; c < C_COUNT; c++) /* the size axis: all its columns, or none */
        if ((col[c] < 0) != (col[C_SIZE] < 0)) {
            eng_err("%s line 1: the size columns %s come together (column %s %s)\n", l->path,
                    ENG_CSV_SIZE_COLUMNS + 1, COLUMNS[c], col[c] < 0 ? "missing" : "without size");
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
        eng_err("%s%s: %d fields, expected %d\n", l->path, where, k, nf);
        return -1;
    }
    double v[C_COUNT];
    for (int c = C_SEED; c < C_COUNT; c++)
        if (c != C_VARIANT && c != C_SIZE && col[c] >= 0 && !number(field[col[c]], &v[c])) {
            eng_err("%s%s: field %d '%s' (%s) is not a number\n", l->path, where, col[c] + 1,
                    field[col[c]], COLUMNS[c]);
            return -1;
        }
    if (col[C_TRAIN_LEN] >= 0) {
        double tl = v[C_TRAIN_LEN];
        if (!(tl >= 1 && tl <= 1000 && tl == floor(tl)) || (*train_len >= 0 && *train_len != (int)tl)) {
            eng_err("%s%s: train_len is not an integer in 1..1000 or differs from the first "
                            "line's\n", l->path, where);
            return -1;
        }
        *train_len = (int)tl;
    }
    if (col[C_GEN] >= 0 && v[C_GEN] != 0 && v[C_GEN] != 1) {
        eng_err("%s%s: generated is not 0 or 1\n", l->path, where);
        return -1;
    }
    point p = {field[col[C_TASK]], field[col[C_ENC]], col[C_VARIANT] >= 0 ? field[col[C_VARIANT]] : NULL,
               field[col[C_EXT]], v[C_SEED], v[C_STEPS], v[C_LOSS], v[C_SECS], v[C_N], v[C_EM], v[C_ACC],
               col[C_GEN] >= 0 ? (int)v[C_GEN] : -1, col[C_LEARN] >= 0 ? v[C_LEARN] : 0,
               col[C_SIZE] >= 0 ? field[col[C_SIZE]] : NULL, 0, 0, 0, 0, 0};
    if (p.size) {
        p.d_model = v[C_DMODEL];
        p.n_layers = v[C_NLAYERS];
        p.n_heads = v[C_NHEADS];
        p.d_ff = v[C_DFF];
        p.params = v[C_PARAMS];
    }
    return add_point(l, where, &p);
}

static int load_csv(loader *l, int *train_len)
{
    FILE *f = eng_fopen_read(l->path);
    if (!f) { eng_err("cannot read %s: %s\n", l->path, strerror(errno)); return -1; }
    char line[1024], where[48];
    int rc = -1, col[C_COUNT], nf = 0;
    long lineno = 0;
    *train_len = -1;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, " line %ld", lineno);
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n') line[--len] = 0;
        else if (!feof(f)) { eng_err("%s%s: line too long\n", l->path, where); goto done; }
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (lineno > MAX_LINES) { eng_err("%s: more than %d lines\n", l->path, MAX_LINES); goto done; }
        if (lineno == 1 ? csv_header(l, line, col, &nf) : csv_line(l, line, col, nf, where, train_len)) goto done;
    }
    if (ferror(f)) { eng_err("cannot read %s: %s\n", l->path, strerror(errno)); goto done; }
    if (lineno == 0) { eng_err("%s: empty file (no report.csv header)\n", l->path); goto done; }
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
    FILE *f = eng_fopen_read(path);
    if (!f) { eng_err("cannot read %s: %s\n", path, strerror(errno)); return NULL; }
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (*size = ftell(f)) >= 0 && *size <= MAX_JSON_BYTES && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)*size + 1);
    if (!buf || fread(buf, 1, (size_t)*size, f) != (size_t)*size) {
        eng_err("cannot read %s: %s\n", path, buf ? "read error" : "too large or unreadable");
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
    if (!root) { eng_err("%s: not valid JSON\n", l->path); return -1; }
    if (!cJSON_IsArray(runs) || !json_num(cfg, "train_len", &tl) || !(tl >= 1 && tl <= 1000 && tl == floor(tl))) {
        eng_err("%s: not a report.json (needs \"runs\": [...] and \"config\": {\"train_len\": "
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
        double seed, steps, loss, secs, learn = 0, sz[5] = {0, 0, 0, 0, 0};
        const cJSON *size = cJSON_GetObjectItemCaseSensitive(run, "size");
        static const char *const size_keys[5] = {"d_model", "n_layers", "n_heads", "d_ff", "params"};
        for (int k = 0; size && k < 5; k++)
            if (!cJSON_IsString(size) || !json_num(run, size_keys[k], &sz[k])) {
                eng_err("%s%s: a run with a size needs it as a string and d_model, n_layers, n_heads, d_ff, params "
                        "as numbers\n", l->path, where);
                goto done;
            }
        if (cJSON_GetObjectItemCaseSensitive(run, "steps_to_learn") && !json_num(run, "steps_to_learn", &learn)) {
            eng_err("%s%s: steps_to_learn is not a number\n", l->path, where);
            goto done;
        }
        if (!cJSON_IsString(t) || !cJSON_IsString(p) || !cJSON_IsString(e) || !cJSON_IsArray(rs) ||
            (va && !cJSON_IsString(va)) || !json_num(run, "seed", &seed) || !json_num(run, "steps", &steps) ||
            !json_num(run, "final_loss", &loss) || !json_num(run, "train_seconds", &secs)) {
            eng_err("%s%s: needs task, encoding, rope_ext (strings; variant a string if given), "
                            "seed, steps, final_loss, train_seconds (numbers) and results (an array)\n", l->path, where);
            goto done;
        }
        if (cJSON_GetArraySize(rs) == 0) { eng_err("%s%s: no results\n", l->path, where); goto done; }
        cJSON_ArrayForEach(x, rs) {
            double n, em, acc;
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(x, "generated");
            if (!json_num(x, "n", &n) || !json_num(x, "exact_match", &em) || !json_num(x, "token_acc", &acc) ||
                (g && !cJSON_IsBool(g))) {
                eng_err("%s%s: a result needs n, exact_match and token_acc (and generated, if "
                                "given, true or false)\n", l->path, where);
                goto done;
            }
            point pt = {t->valuestring, p->valuestring, va ? va->valuestring : NULL, e->valuestring, seed, steps, loss,
                        secs, n, em, acc, g ? cJSON_IsTrue(g) : -1, learn, size ? size->valuestring : NULL,
                        sz[0], sz[1], sz[2], sz[3], sz[4]};
            if (add_point(l, where, &pt)) goto done;
        }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    return rc;
}

int eng_report_load(const char *path, eng_result **res, int *n_res, int *train_len)
{
    loader l = {NULL, 0, 0, path};
    size_t len = strlen(path);
    bool json = len >= 5 && strcmp(path + len - 5, ".json") == 0;
    int rc = json ? load_json(&l, train_len) : load_csv(&l, train_len);
    if (rc == 0 && l.n == 0) { eng_err("%s: no results\n", path); rc = -1; }
    if (rc) { free(l.res); l.res = NULL; l.n = 0; }
    *res = l.res;
    *n_res = l.n;
    return rc;
}
