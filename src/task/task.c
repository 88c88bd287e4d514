/* task.c: see task.h (tasks, batches, scoring) and docs/data.md (the evaluation file). */
#include "task.h"

#include "../io/atomic.h"
#include "../io/h5.h"
#include "../io/h5_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const task_names[RG_TASK_COUNT] = {"copy", "reverse", "sort"};

const int rg_eval_lengths[RG_EVAL_NLENS] = {8, 16, 24, 32, 48, 64};

/* ------------------------------------------------------------------ vocabulary */

char rg_task_token_char(int32_t tok)
{
    switch (tok) {
    case RG_TOK_PAD: return '_';
    case RG_TOK_BOS: return '^';
    case RG_TOK_SEP: return '|';
    case RG_TOK_EOS: return '$';
    default:
        if (tok >= RG_TOK_SYM0 && tok < RG_TASK_VOCAB) return (char)('a' + (tok - RG_TOK_SYM0));
        return '?';
    }
}

int rg_task_format(const int32_t *tokens, int n, char *buf, size_t cap)
{
    if (!buf || cap == 0) return 0;
    int k = 0;
    for (int i = 0; i < n && (size_t)k + 1 < cap; i++) buf[k++] = rg_task_token_char(tokens[i]);
    buf[k] = 0;
    return k;
}

/* ------------------------------------------------------------------ tasks */

const char *rg_task_name(rg_task task)
{
    return ((unsigned)task < RG_TASK_COUNT) ? task_names[task] : "?";
}

rg_status rg_task_parse(const char *name, rg_task *out)
{
    for (int i = 0; name && i < RG_TASK_COUNT; i++)
        if (strcmp(name, task_names[i]) == 0) {
            if (out) *out = (rg_task)i;
            return RG_OK;
        }
    return rg_error(RG_ERR_ARG, "unknown task '%s' (allowed: copy, reverse, sort)", name ? name : "(null)");
}

static rg_status check_task(rg_task task)
{
    if ((unsigned)task >= RG_TASK_COUNT)
        return rg_error(RG_ERR_ARG, "unknown task %d (allowed: %d copy, %d reverse, %d sort)", (int)task,
                        RG_TASK_COPY, RG_TASK_REVERSE, RG_TASK_SORT);
    return RG_OK;
}

static rg_status check_n(int n)
{
    if (n < 1 || n > RG_TASK_MAX_N)
        return rg_error(RG_ERR_ARG, "sequence length n = %d outside 1..%d", n, RG_TASK_MAX_N);
    return RG_OK;
}

static rg_status check_symbols(const int32_t *x, int n)
{
    for (int j = 0; j < n; j++)
        if (x[j] < RG_TOK_SYM0 || x[j] >= RG_TASK_VOCAB)
            return rg_error(RG_ERR_ARG, "x[%d] = %d is not a content symbol (%d..%d)", j, (int)x[j], RG_TOK_SYM0,
                            RG_TASK_VOCAB - 1);
    return RG_OK;
}

/* y = task(x) for valid inputs. */
static void targets_unchecked(rg_task task, const int32_t *x, int n, int32_t *y)
{
    switch (task) {
    case RG_TASK_COPY:
        memcpy(y, x, (size_t)n * sizeof *y);
        break;
    case RG_TASK_REVERSE:
        for (int j = 0; j < n; j++) y[j] = x[n - 1 - j];
        break;
    default: { /* sort: counting sort over the 26 symbols */
        int count[RG_TASK_NSYM] = {0};
        for (int j = 0; j < n; j++) count[x[j] - RG_TOK_SYM0]++;
        int k = 0;
        for (int s = 0; s < RG_TASK_NSYM; s++)
            for (int c = 0; c < count[s]; c++) y[k++] = RG_TOK_SYM0 + s;
        break;
    }
    }
}

rg_status rg_task_targets(rg_task task, const int32_t *x, int n, int32_t *y)
{
    rg_status st;
    if ((st = check_task(task)) || (st = check_n(n)) || (st = check_symbols(x, n))) return st;
    targets_unchecked(task, x, n, y);
    return RG_OK;
}

static void draw_symbols(rg_rng *rng, int n, int32_t *x)
{
    for (int j = 0; j < n; j++) x[j] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
}

rg_status rg_task_sample(rg_task task, rg_rng *rng, int n, int32_t *x, int32_t *y)
{
    rg_status st;
    if ((st = check_task(task)) || (st = check_n(n))) return st;
    draw_symbols(rng, n, x);
    targets_unchecked(task, x, n, y);
    return RG_OK;
}

/* t[0..2n+3) for valid inputs. */
static void sequence_unchecked(rg_task task, const int32_t *x, int n, int32_t *t)
{
    t[0] = RG_TOK_BOS;
    memcpy(t + 1, x, (size_t)n * sizeof *t);
    t[n + 1] = RG_TOK_SEP;
    targets_unchecked(task, x, n, t + n + 2);
    t[2 * n + 2] = RG_TOK_EOS;
}

rg_status rg_task_sequence(rg_task task, const int32_t *x, int n, int32_t *t)
{
    rg_status st;
    if ((st = check_task(task)) || (st = check_n(n)) || (st = check_symbols(x, n))) return st;
    sequence_unchecked(task, x, n, t);
    return RG_OK;
}

/* ------------------------------------------------------------------ training batches */

rg_status rg_task_batch_alloc(rg_task_batch *b, int max_batch, int L_train)
{
    memset(b, 0, sizeof *b);
    rg_status st;
    if (max_batch < 1) return rg_error(RG_ERR_ARG, "batch size %d < 1", max_batch);
    if ((st = check_n(L_train))) return st;
    int64_t cap = rg_task_batch_cap(max_batch, L_train);
    b->tokens = malloc((size_t)cap * sizeof *b->tokens);
    b->targets = malloc((size_t)cap * sizeof *b->targets);
    b->len = malloc((size_t)max_batch * sizeof *b->len);
    b->n = malloc((size_t)max_batch * sizeof *b->n);
    if (!b->tokens || !b->targets || !b->len || !b->n) {
        rg_task_batch_free(b);
        return rg_error(RG_ERR_NOMEM, "cannot allocate a batch of %d x %lld tokens", max_batch,
                        (long long)(2 * (int64_t)L_train + 2));
    }
    b->cap = cap;
    b->max_batch = max_batch;
    return RG_OK;
}

void rg_task_batch_free(rg_task_batch *b)
{
    if (!b) return;
    free(b->tokens);
    free(b->targets);
    free(b->len);
    free(b->n);
    memset(b, 0, sizeof *b);
}

static rg_status check_batch(const rg_task_batch *b, int B)
{
    if (!b || !b->tokens || !b->targets || !b->len || !b->n)
        return rg_error(RG_ERR_ARG, "batch buffers not set (use rg_task_batch_alloc or set them)");
    if (B < 1 || B > b->max_batch) return rg_error(RG_ERR_ARG, "batch size %d outside 1..%d", B, b->max_batch);
    return RG_OK;
}

/* Writes row i of tokens (T = b->T columns) from the n symbols x: t[0..2n+1] then PAD; sets len and n. */
static void fill_tokens_row(rg_task_batch *b, rg_task task, int i, int n, const int32_t *x)
{
    int T = b->T;
    int32_t *tok = b->tokens + (int64_t)i * T;
    tok[0] = RG_TOK_BOS;
    memcpy(tok + 1, x, (size_t)n * sizeof *tok);
    tok[n + 1] = RG_TOK_SEP;
    targets_unchecked(task, x, n, tok + n + 2); /* y_1..y_n at positions n+2..2n+1 */
    for (int p = 2 * n + 2; p < T; p++) tok[p] = RG_TOK_PAD;
    b->len[i] = 2 * n + 2;
    b->n[i] = n;
}

/* Writes row i of targets from row i of tokens: targets[p] = t[p+1] for p = n+1..2n+1 (y_1..y_n, then EOS, which
 * is t[2n+2] and not in the input row), RG_TASK_IGNORE elsewhere. */
static void fill_targets_row(rg_task_batch *b, int i)
{
    int T = b->T, n = b->n[i];
    const int32_t *tok = b->tokens + (int64_t)i * T;
    int32_t *tgt = b->targets + (int64_t)i * T;
    for (int p = 0; p <= n; p++) tgt[p] = RG_TASK_IGNORE;
    for (int p = n + 1; p <= 2 * n; p++) tgt[p] = tok[p + 1];
    tgt[2 * n + 1] = RG_TOK_EOS;
    for (int p = 2 * n + 2; p < T; p++) tgt[p] = RG_TASK_IGNORE;
}

rg_status rg_task_batch_build(rg_task_batch *b, rg_task task, int B, const int *n, const int32_t *x, int x_stride)
{
    rg_status st;
    if ((st = check_task(task)) || (st = check_batch(b, B))) return st;
    if (!n || !x) return rg_error(RG_ERR_ARG, "n and x must not be NULL");
    int max_n = 0;
    for (int i = 0; i < B; i++) {
        if ((st = check_n(n[i]))) return rg_error(st, "row %d: n = %d outside 1..%d", i, n[i], RG_TASK_MAX_N);
        if (n[i] > x_stride) return rg_error(RG_ERR_ARG, "row %d: n = %d > x_stride %d", i, n[i], x_stride);
        for (int j = 0; j < n[i]; j++) {
            int32_t v = x[(int64_t)i * x_stride + j];
            if (v < RG_TOK_SYM0 || v >= RG_TASK_VOCAB)
                return rg_error(RG_ERR_ARG, "row %d: x[%d] = %d is not a content symbol (%d..%d)", i, j, (int)v,
                                RG_TOK_SYM0, RG_TASK_VOCAB - 1);
        }
        if (n[i] > max_n) max_n = n[i];
    }
    int T = 2 * max_n + 2;
    if ((int64_t)B * T > b->cap)
        return rg_error(RG_ERR_ARG, "batch %d x %d tokens exceeds the buffer capacity %lld", B, T, (long long)b->cap);
    b->B = B;
    b->T = T;
    b->n_loss = 0;
    for (int i = 0; i < B; i++) {
        fill_tokens_row(b, task, i, n[i], x + (int64_t)i * x_stride);
        fill_targets_row(b, i);
        b->n_loss += n[i] + 1;
    }
    return RG_OK;
}

rg_status rg_task_batch_sample(rg_task_batch *b, rg_task task, rg_rng *rng, int B, int L_train)
{
    rg_status st;
    if ((st = check_task(task)) || (st = check_batch(b, B)) || (st = check_n(L_train))) return st;
    if (!rng) return rg_error(RG_ERR_ARG, "rng must not be NULL");
    if (rg_task_batch_cap(B, L_train) > b->cap)
        return rg_error(RG_ERR_ARG, "batch %d x L_train %d needs %lld tokens, the buffer holds %lld", B, L_train,
                        (long long)rg_task_batch_cap(B, L_train), (long long)b->cap);
    /* T is known only after every row is drawn: stage the symbols in the targets buffer (row i at i * L_train;
     * B * L_train <= cap), lay out the token rows (a separate buffer), then derive the targets from the tokens
     * (overwriting the staging area, no longer needed). */
    int32_t *stage = b->targets;
    int max_n = 0;
    for (int i = 0; i < B; i++) {
        int n = 1 + (int)rg_rng_below(rng, (uint32_t)L_train);
        b->n[i] = n;
        draw_symbols(rng, n, stage + (int64_t)i * L_train);
        if (n > max_n) max_n = n;
    }
    b->B = B;
    b->T = 2 * max_n + 2;
    b->n_loss = 0;
    for (int i = 0; i < B; i++) {
        fill_tokens_row(b, task, i, b->n[i], stage + (int64_t)i * L_train);
        b->n_loss += b->n[i] + 1;
    }
    for (int i = 0; i < B; i++) fill_targets_row(b, i);
    return RG_OK;
}

/* ------------------------------------------------------------------ evaluation */

rg_status rg_task_prompt(const int32_t *x, int n, int32_t *prompt)
{
    rg_status st;
    if ((st = check_n(n)) || (st = check_symbols(x, n))) return st;
    prompt[0] = RG_TOK_BOS;
    memcpy(prompt + 1, x, (size_t)n * sizeof *prompt);
    prompt[n + 1] = RG_TOK_SEP;
    return RG_OK;
}

rg_status rg_task_expected(rg_task task, const int32_t *x, int n, int32_t *expected)
{
    rg_status st = rg_task_targets(task, x, n, expected);
    if (st) return st;
    expected[n] = RG_TOK_EOS;
    return RG_OK;
}

rg_status rg_task_score_add(rg_task_score *s, const int32_t *gen, const int32_t *expected, int B, int m,
                            int *row_correct)
{
    if (B < 1 || m < 1) return rg_error(RG_ERR_ARG, "score: B = %d and m = %d must be >= 1", B, m);
    for (int b = 0; b < B; b++) {
        int right = 0;
        for (int j = 0; j < m; j++) right += gen[(int64_t)b * m + j] == expected[(int64_t)b * m + j];
        s->samples++;
        s->exact += right == m;
        s->tokens += m;
        s->correct += right;
        if (row_correct) row_correct[b] = right;
    }
    return RG_OK;
}

double rg_task_exact_match(const rg_task_score *s)
{
    return s->samples ? (double)s->exact / (double)s->samples : 0.0;
}

double rg_task_token_acc(const rg_task_score *s)
{
    return s->tokens ? (double)s->correct / (double)s->tokens : 0.0;
}

/* ------------------------------------------------------------------ canonical evaluation sets */

rg_status rg_evalset_make(rg_task task, int n, int count, int32_t *x, int32_t *y)
{
    rg_status st;
    if ((st = check_task(task)) || (st = check_n(n))) return st;
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
    for (int t = 0; t < RG_TASK_COUNT && r >= 0; t++) {
        hid_t gt = H5Gcreate2(f, task_names[t], H5P_DEFAULT, gcpl, H5P_DEFAULT);
        if (gt < 0) { snprintf(err, errsz, "cannot create group /%s", task_names[t]); r = -1; break; }
        for (int k = 0; k < RG_EVAL_NLENS && r >= 0; k++) {
            int n = rg_eval_lengths[k];
            char name[32];
            snprintf(name, sizeof name, "n%d", n);
            rg_evalset_make((rg_task)t, n, RG_EVAL_COUNT, x, y);
            hid_t g = H5Gcreate2(gt, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
            int64_t nv = n, stream = (int64_t)rg_eval_stream((rg_task)t, n);
            hsize_t dims[2] = {RG_EVAL_COUNT, (hsize_t)n};
            unsigned flags = RG_H5_COMPRESS | RG_H5_NO_TIMES;
            if (g < 0 || rg_h5_write_str(g, "task", task_names[t]) < 0 || rg_h5_write_int(g, "n", H5T_STD_I32LE, nv) < 0 ||
                rg_h5_write_int(g, "stream", H5T_STD_U64LE, stream) < 0 ||
                rg_h5_write_dataset(g, "x", RG_H5_INT32, 2, dims, x, flags) < 0 ||
                rg_h5_write_dataset(g, "y", RG_H5_INT32, 2, dims, y, flags) < 0) {
                snprintf(err, errsz, "cannot write /%s/%s", task_names[t], name);
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
        targets_unchecked(tk, xi, n, want);
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

rg_status rg_evalset_load(const char *path, const char *task, int n, rg_evalset *out)
{
    memset(out, 0, sizeof *out);
    rg_task tk;
    rg_status st;
    if ((st = rg_task_parse(task, &tk))) return st;
    if ((st = check_n(n))) return st;
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
    memset(e, 0, sizeof *e);
}
