/* evalset.c: the canonical evaluation sets of the ordering tasks (data/eval_sets.h5: generator and loader; see
 * task.h and docs/data.md) and the evaluation set of any registered task built from a seed (rg_task_evalset). */
#include "task_internal.h"

#include "../io/atomic.h"
#include "../io/h5.h"
#include "../io/h5_image.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int rg_eval_lengths[RG_EVAL_NLENS] = {8, 16, 24, 32, 48, 64};

/* ------------------------------------------------------------------ canonical evaluation sets */

bool rg_evalset_has(rg_task task) { return task >= 0 && task < RG_TASK_BUILTIN; }

rg_status rg_evalset_make(rg_task task, int n, int count, int32_t *x, int32_t *y)
{
    rg_status st;
    if ((st = rg_task_check_ordering(task)) || (st = rg_task_check_n(n))) return st;
    if (count < 1) return rg_error(RG_ERR_ARG, "evaluation set count %d < 1", count);
    rg_rng rng;
    rg_rng_seed(&rng, RG_EVAL_SEED, rg_eval_stream(task, n));
    for (int i = 0; i < count; i++) rg_task_sample(task, &rng, n, x + (int64_t)i * n, y + (int64_t)i * n);
    return RG_OK;
}

static const char eval_description[] =
    "ropegrad canonical evaluation sets for the ordering tasks (copy, reverse, sort). For each task and length n, "
    "/<task>/n<n>/x int32 [256, n] holds the content symbols (4..29, printed a..z) and /<task>/n<n>/y int32 "
    "[256, n] the targets (copy y = x, reverse y_j = x_{n+1-j}, sort ascending by id). Each (task, n) uses its own "
    "PCG32 stream (pcg32_srandom_r(seed, stream), stream = 1000 * task_index + n with copy 0, reverse 1, sort 2); "
    "samples are drawn in order, each symbol as 4 + pcg32_boundedrand_r(26). See docs/data.md.";

/* Writes every group and attribute into the open file; returns < 0 on failure (message in buf). */
static herr_t write_eval_file(hid_t f, char *err, size_t errsz)
{
    const int64_t seed = (int64_t)RG_EVAL_SEED, count = RG_EVAL_COUNT, vocab = RG_TASK_VOCAB;
    int64_t lens[RG_EVAL_NLENS];
    for (int i = 0; i < RG_EVAL_NLENS; i++) lens[i] = rg_eval_lengths[i];
    if (rg_h5_write_str(f, "generator", "tools/gen_data (rg_evalset_generate, src/task/task.c)") < 0 ||
        rg_h5_write_str(f, "description", eval_description) < 0 ||
        rg_h5_write_int(f, "seed", H5T_STD_U64LE, seed) < 0 ||
        rg_h5_write_str(f, "stream_formula", "1000 * task_index + n; task_index: copy 0, reverse 1, sort 2") < 0 ||
        rg_h5_write_str(f, "tasks", "copy,reverse,sort") < 0 ||
        rg_h5_write_ints(f, "lengths", H5T_STD_I32LE, lens, RG_EVAL_NLENS) < 0 ||
        rg_h5_write_int(f, "count", H5T_STD_I32LE, count) < 0 ||
        rg_h5_write_int(f, "vocab", H5T_STD_I32LE, vocab) < 0) {
        snprintf(err, errsz, "cannot write the root attributes");
        return -1;
    }
    int maxn = rg_eval_lengths[RG_EVAL_NLENS - 1];
    int32_t *x = malloc((size_t)RG_EVAL_COUNT * maxn * sizeof *x), *y = malloc((size_t)RG_EVAL_COUNT * maxn * sizeof *y);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    herr_t r = (x && y) ? 0 : -1;
    if (r < 0) snprintf(err, errsz, "out of memory");
    for (int t = 0; t < RG_TASK_BUILTIN && r >= 0; t++) {
        hid_t gt = H5Gcreate2(f, rg_task_name(t), H5P_DEFAULT, gcpl, H5P_DEFAULT);
        if (gt < 0) { snprintf(err, errsz, "cannot create group /%s", rg_task_name(t)); r = -1; break; }
        for (int k = 0; k < RG_EVAL_NLENS && r >= 0; k++) {
            int n = rg_eval_lengths[k];
            char name[32];
            snprintf(name, sizeof name, "n%d", n);
            rg_evalset_make((rg_task)t, n, RG_EVAL_COUNT, x, y);
            hid_t g = H5Gcreate2(gt, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
            int64_t nv = n, stream = (int64_t)rg_eval_stream((rg_task)t, n);
            hsize_t dims[2] = {RG_EVAL_COUNT, (hsize_t)n};
            unsigned flags = RG_H5_COMPRESS | RG_H5_NO_TIMES;
            if (g < 0 || rg_h5_write_str(g, "task", rg_task_name(t)) < 0 ||
                rg_h5_write_int(g, "n", H5T_STD_I32LE, nv) < 0 ||
                rg_h5_write_int(g, "stream", H5T_STD_U64LE, stream) < 0 ||
                rg_h5_write_dataset(g, "x", RG_H5_INT32, 2, dims, x, flags) < 0 ||
                rg_h5_write_dataset(g, "y", RG_H5_INT32, 2, dims, y, flags) < 0) {
                snprintf(err, errsz, "cannot write /%s/%s", rg_task_name(t), name);
                r = -1;
            }
            if (g >= 0) H5Gclose(g);
        }
        H5Gclose(gt);
    }
    H5Pclose(gcpl);
    free(x);
    free(y);
    return r;
}

rg_status rg_evalset_generate(const char *path)
{
    if (!path || !*path) return rg_error(RG_ERR_ARG, "rg_evalset_generate: empty path");
    /* built in memory, then one atomic write (temporary file, fsync, rename, fsync of the folder) */
    rg_h5_quiet q;
    rg_h5_quiet_begin(&q);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0); /* the root group: a file creation list is a group creation list */
    hid_t f = rg_h5_create_memory(fcpl);
    H5Pclose(fcpl);
    char err[256] = "cannot create the file in memory";
    unsigned char *img = NULL;
    size_t n = 0;
    if (f >= 0 && write_eval_file(f, err, sizeof err) >= 0 && !(img = rg_h5_memory_image(f, 0, &n)))
        snprintf(err, sizeof err, "cannot get the file image");
    rg_h5_close_file(f);
    rg_h5_quiet_end(&q);
    if (!img) return rg_error(RG_ERR_IO, "evaluation file %s: %s", path, err);
    rg_status st = rg_atomic_write("evaluation file", path, img, n);
    free(img);
    return st;
}

/* The member names of group `group` of root as a comma-separated list (messages). */
static void list_links(const rg_h5_src *src, const rg_h5_obj *root, const char *group, char *buf, size_t cap)
{
    buf[0] = 0;
    const rg_h5_obj *g = root;
    rg_h5_names l = {0};
    if ((group[0] && rg_h5i_open_group(src, root, group, group, &g)) || rg_h5i_list_links(src, g, group, 1 << 16, &l)) return;
    for (int i = 0; i < l.n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", l.names[i]);
    }
    rg_h5_names_free(&l);
}

/* Checks that dataset dname of g is [rows >= 1, n] int32-compatible integers; 0 or the error. */
static rg_status check_2d(const rg_h5_src *src, const rg_h5_obj *g, const char *path, const char *gpath,
                          const char *dname, int n, hsize_t *rows)
{
    if (!rg_h5i_exists(g, dname)) return rg_error(RG_ERR_FORMAT, "%s: no dataset %s", path, dname);
    int nd = 0;
    hsize_t dims[RG_H5I_MAX_ND] = {0};
    rg_status st = rg_h5i_dataset_shape(src, g, gpath, dname, RG_H5_INT32, RG_H5I_MAX_ND, &nd, dims);
    if (st) return st;
    if (nd != 2 || dims[0] < 1 || dims[1] != (hsize_t)n || dims[0] > (hsize_t)1 << 24) {
        char shape[200];
        rg_h5_shape_str(nd, dims, shape, sizeof shape);
        return rg_error(RG_ERR_FORMAT, "%s: dataset %s has shape %s, expected [count, %d]", path, dname, shape, n);
    }
    *rows = dims[0];
    return RG_OK;
}

/* The limits of an evaluation-set read: the file at most RG_EVAL_MAX_FILE_BYTES, the values of group gpath only. */
static rg_h5_image_opts evalset_opts(const char *const *data)
{
    return (rg_h5_image_opts){data, RG_EVAL_MAX_FILE_BYTES, RG_EVAL_MAX_FILE_BYTES, 1 << 16, 60, false};
}

/* Parses the file path in the HDF5 reader process (h5_image.h), asking for the values of group gpath; on failure,
 * a message that says how to get the file. */
static rg_status evalset_open(const rg_h5_src *src, const char *gpath, rg_h5_image **im)
{
    char prefix[80];
    snprintf(prefix, sizeof prefix, "%s/", gpath);
    const char *const data[] = {prefix, NULL};
    rg_h5_image_opts o = evalset_opts(data);
    rg_status st = rg_h5_image_load(src, &o, im);
    if (st == RG_ERR_IO) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", rg_last_error());
        return rg_error(st, "%s (run from the repository root, or `make data` to regenerate it)", msg);
    }
    return st;
}

/* Group gpath (/<task>/n<n>) of root into *g; a missing one names what the file has instead. */
static rg_status evalset_group(const rg_h5_src *src, const rg_h5_obj *root, const char *path, const char *task,
                               const char *gpath, const rg_h5_obj **g)
{
    char names[512];
    if (!rg_h5i_exists(root, task)) {
        list_links(src, root, "", names, sizeof names);
        return rg_error(RG_ERR_FORMAT, "%s: no group /%s (the file has: %s)", path, task, names[0] ? names : "nothing");
    }
    if (!rg_h5i_exists(root, gpath + 1) || rg_h5i_open_group(src, root, gpath + 1, gpath, g)) {
        list_links(src, root, task, names, sizeof names);
        return rg_error(RG_ERR_FORMAT, "%s: no group %s (lengths for %s: %s)", path, gpath, task,
                        names[0] ? names : "none");
    }
    return RG_OK;
}

/* Datasets x and y of g ([count, n] integers each, the same count) into out->x, out->y (malloc'ed); *rows = count.
 * `where` ("<path>:<group>") names them in messages. */
static rg_status evalset_read_xy(const rg_h5_src *src, const rg_h5_obj *g, const char *gpath, const char *where,
                                 int n, rg_evalset *out, hsize_t *rows)
{
    hsize_t rx = 0, ry = 0;
    rg_status st = check_2d(src, g, where, gpath, "x", n, &rx);
    if (!st) st = check_2d(src, g, where, gpath, "y", n, &ry);
    if (st) return st;
    if (rx != ry)
        return rg_error(RG_ERR_FORMAT, "%s: x has %llu rows, y has %llu", where, (unsigned long long)rx,
                        (unsigned long long)ry);
    out->x = malloc((size_t)rx * (size_t)n * sizeof *out->x);
    out->y = malloc((size_t)rx * (size_t)n * sizeof *out->y);
    if (!out->x || !out->y)
        return rg_error(RG_ERR_NOMEM, "%s: cannot allocate %llu x %d samples", where, (unsigned long long)rx, n);
    hsize_t dims[2] = {rx, (hsize_t)n};
    if ((st = rg_h5i_read_dataset(src, g, gpath, "x", RG_H5_INT32, 2, dims, out->x)) ||
        (st = rg_h5i_read_dataset(src, g, gpath, "y", RG_H5_INT32, 2, dims, out->y)))
        return st;
    *rows = rx;
    return RG_OK;
}

/* Every sample of `rows` in out: x content symbols only, y the task applied to x. */
static rg_status evalset_check(const char *where, rg_task tk, const char *task, int n, const rg_evalset *out,
                               hsize_t rows)
{
    int32_t *want = malloc((size_t)n * sizeof *want);
    if (!want)
        return rg_error(RG_ERR_NOMEM, "%s: cannot allocate %llu x %d samples", where, (unsigned long long)rows, n);
    rg_status st = RG_OK;
    for (hsize_t i = 0; i < rows && !st; i++) {
        const int32_t *xi = out->x + i * (size_t)n, *yi = out->y + i * (size_t)n;
        for (int j = 0; j < n && !st; j++)
            if (xi[j] < RG_TOK_SYM0 || xi[j] >= RG_TASK_VOCAB)
                st = rg_error(RG_ERR_FORMAT, "%s: sample %llu: x[%d] = %d is not a content symbol (%d..%d)", where,
                              (unsigned long long)i, j, (int)xi[j], RG_TOK_SYM0, RG_TASK_VOCAB - 1);
        if (st) break;
        rg_task_targets_unchecked(tk, xi, n, want);
        for (int j = 0; j < n; j++)
            if (yi[j] != want[j]) {
                st = rg_error(RG_ERR_FORMAT, "%s: sample %llu: y[%d] = %d, but %s of x gives %d", where,
                              (unsigned long long)i, j, (int)yi[j], task, (int)want[j]);
                break;
            }
    }
    free(want);
    return st;
}

/* prompt and expected of a loaded set from its x and y (prompt BOS x SEP, expected y EOS). */
static rg_status evalset_prompts(rg_evalset *e)
{
    int n = e->n, P = n + 2, G = n + 1;
    e->prompt_len = P;
    e->target_len = G;
    e->prompt = malloc(sizeof(int32_t) * (size_t)e->count * P);
    e->expected = malloc(sizeof(int32_t) * (size_t)e->count * G);
    if (!e->prompt || !e->expected)
        return rg_error(RG_ERR_NOMEM, "evaluation set %s n=%d: out of memory", rg_task_name(e->task), n);
    for (int i = 0; i < e->count; i++) {
        int32_t *p = e->prompt + (int64_t)i * P, *g = e->expected + (int64_t)i * G;
        p[0] = RG_TOK_BOS;
        memcpy(p + 1, e->x + (int64_t)i * n, sizeof(int32_t) * (size_t)n);
        p[n + 1] = RG_TOK_SEP;
        memcpy(g, e->y + (int64_t)i * n, sizeof(int32_t) * (size_t)n);
        g[n] = RG_TOK_EOS;
    }
    return RG_OK;
}

rg_status rg_evalset_load(const char *path, const char *task, int n, rg_evalset *out)
{
    memset(out, 0, sizeof *out);
    rg_task tk;
    rg_status st;
    if ((st = rg_task_parse(task, &tk))) return st;
    if (tk >= RG_TASK_BUILTIN)
        return rg_error(RG_ERR_ARG, "task '%s' is not one of the file's (copy, reverse, sort): build a registered "
                        "task's sets with rg_task_evalset", task);
    if ((st = rg_task_check_n(n))) return st;
    rg_h5_src src = {"evaluation file", path};
    char gpath[64], where[4200];
    snprintf(gpath, sizeof gpath, "/%s/n%d", task, n);
    snprintf(where, sizeof where, "%s:%s", path, gpath);
    rg_h5_image *im;
    if ((st = evalset_open(&src, gpath, &im))) return st;
    const rg_h5_obj *root = rg_h5_image_root(im), *g = NULL;
    hsize_t rows = 0;
    int64_t count = 0; /* the root's count: every set has that many samples (a shorter one is not that set) */
    if (!(st = rg_h5i_read_int(&src, root, "/", "count", 1, INT32_MAX, &count)) &&
        !(st = evalset_group(&src, root, path, task, gpath, &g)) &&
        !(st = evalset_read_xy(&src, g, gpath, where, n, out, &rows)) &&
        !(st = rows != (hsize_t)count ? rg_error(RG_ERR_FORMAT, "%s: %llu samples, but the file's count attribute is "
                                                 "%lld", where, (unsigned long long)rows, (long long)count) : RG_OK) &&
        !(st = evalset_check(where, tk, task, n, out, rows))) {
        out->task = tk;
        out->n = n;
        out->count = (int)rows;
        st = evalset_prompts(out);
    }
    rg_h5_image_free(im);
    if (st) rg_evalset_free(out);
    return st;
}

void rg_evalset_free(rg_evalset *e)
{
    if (!e) return;
    free(e->x);
    free(e->y);
    free(e->prompt);
    free(e->expected);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------------------ any registered task, from a seed */

rg_status rg_task_evalset(rg_task task, int n, int count, uint64_t seed, rg_evalset *out)
{
    memset(out, 0, sizeof *out);
    int P = rg_task_prompt_len(task, n), G = rg_task_target_len(task, n);
    if (P < 0) return rg_task_draw(task, NULL, n, NULL, NULL); /* the unknown task's or n's message */
    if (count < 1) return rg_error(RG_ERR_ARG, "evaluation set count %d < 1", count);
    *out = (rg_evalset){.task = task, .n = n, .count = count, .prompt_len = P, .target_len = G};
    out->prompt = malloc(sizeof(int32_t) * (size_t)count * (size_t)P);
    out->expected = malloc(sizeof(int32_t) * (size_t)count * (size_t)G);
    bool ordering = task < RG_TASK_BUILTIN;
    if (ordering) {
        out->x = malloc(sizeof(int32_t) * (size_t)count * (size_t)n);
        out->y = malloc(sizeof(int32_t) * (size_t)count * (size_t)n);
    }
    rg_status st = RG_OK;
    if (!out->prompt || !out->expected || (ordering && (!out->x || !out->y)))
        st = rg_error(RG_ERR_NOMEM, "evaluation set %s n=%d: cannot allocate %d samples", rg_task_name(task), n, count);
    rg_rng rng;
    rg_rng_seed(&rng, seed, rg_task_stream(task, n));
    for (int i = 0; i < count && !st; i++) {
        int32_t *p = out->prompt + (int64_t)i * P, *e = out->expected + (int64_t)i * G;
        st = rg_task_draw(task, &rng, n, p, e);
        if (!st && ordering) { /* prompt BOS x SEP, expected y EOS */
            memcpy(out->x + (int64_t)i * n, p + 1, sizeof(int32_t) * (size_t)n);
            memcpy(out->y + (int64_t)i * n, e, sizeof(int32_t) * (size_t)n);
        }
    }
    if (st) rg_evalset_free(out);
    return st;
}
