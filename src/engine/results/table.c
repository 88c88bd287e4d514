/* table.c: the report's table, built from the results of every run: one row per (task, encoding, training
 * variant, model size, RoPE extension) in a fixed order, the runs (seeds) of each row, and per task the sorted test lengths; a
 * cell is the statistics over a row's seeds at one length (stats.c). report.c, plot.c and compare.c read it. */
#include "engine/base/labels.h"
#include "engine/base/messages.h"
#include "engine/base/types.h"
#include "engine/results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *eng_row_label(const eng_row *r, char *buf, size_t cap)
{
    eng_label(r->pos, r->variant, r->ext, r->ext_factor, buf, cap);
    size_t n = strlen(buf);
    if (r->size[0] && n < cap) snprintf(buf + n, cap - n, " %s", r->size); /* "alibi 128x4" */
    return buf;
}

/* The order of sizes: d_model, then n_layers, n_heads, d_ff (the text last, for equal numbers). */
static int cmp_size(const char *s1, const eng_result *a, const char *s2, const eng_result *b)
{
    int x[4] = {a->d_model, a->n_layers, a->n_heads, a->d_ff}, y[4] = {b->d_model, b->n_layers, b->n_heads, b->d_ff};
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i]) return (x[i] > y[i]) - (x[i] < y[i]);
    return strcmp(s1, s2);
}

/* The order of rows: task, encoding, variant, extension (none first), factor (per length first). */
static int cmp_ident(rg_task t1, rg_pos_kind p1, eng_variant v1, rg_rope_ext e1, double f1, rg_task t2, rg_pos_kind p2,
                     eng_variant v2, rg_rope_ext e2, double f2)
{
    long a = (long)t1 * 1000000L + (long)p1 * 10000L + (long)v1 * 100L + (long)e1;
    long b = (long)t2 * 1000000L + (long)p2 * 10000L + (long)v2 * 100L + (long)e2;
    if (a != b) return (a > b) - (a < b);
    return (f1 > f2) - (f1 < f2);
}

/* The size numbers of a row, as a result (cmp_size). */
static eng_result size_of(const eng_row *r)
{
    eng_result x;
    x.d_model = r->d_model;
    x.n_layers = r->n_layers;
    x.n_heads = r->n_heads;
    x.d_ff = r->d_ff;
    return x;
}

static bool row_of(const eng_row *r, const eng_result *x)
{
    eng_result rs = size_of(r);
    return cmp_ident(r->task, r->pos, r->variant, r->ext, r->ext_factor, x->task, x->pos, x->variant, x->ext,
                     x->ext_factor) == 0 && cmp_size(r->size, &rs, x->size, x) == 0;
}

/* The rows of a task: encoding, variant, then size (the sizes of one encoding together), extension, factor. */
static int cmp_row(const void *a, const void *b)
{
    const eng_row *x = a, *y = b;
    int c = cmp_ident(x->task, x->pos, x->variant, 0, 0, y->task, y->pos, y->variant, 0, 0);
    eng_result xs = size_of(x), ys = size_of(y);
    if (!c) c = cmp_size(x->size, &xs, y->size, &ys);
    return c ? c : cmp_ident(x->task, x->pos, x->variant, x->ext, x->ext_factor, y->task, y->pos, y->variant, y->ext,
                             y->ext_factor);
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

int eng_table_build(eng_table *t, const eng_result *res, int n_res, int train_len)
{
    memset(t, 0, sizeof *t);
    t->res = res;
    t->n_res = n_res;
    t->train_len = train_len;
    t->rows = calloc((size_t)(n_res > 0 ? n_res : 1), sizeof *t->rows);
    if (!t->rows) goto nomem;
    for (int i = 0; i < n_res; i++) {
        int k;
        for (k = 0; k < t->n_rows; k++)
            if (row_of(&t->rows[k], &res[i])) break;
        if (k == t->n_rows) {
            t->rows[t->n_rows++] = (eng_row){res[i].task, res[i].pos, res[i].variant, res[i].ext, res[i].ext_factor, 0,
                                            NULL, "", res[i].d_model, res[i].n_layers, res[i].n_heads, res[i].d_ff};
            memcpy(t->rows[k].size, res[i].size, sizeof res[i].size);
        }
        t->rows[k].n_runs++;
        rg_task task = res[i].task;
        for (int j = 0; j < res[i].n_lens; j++) {
            int n = res[i].lens[j], q;
            for (q = 0; q < t->n_lens[task] && t->lens[task][q] != n; q++) {}
            if (q < t->n_lens[task]) continue;
            if (t->n_lens[task] == ENG_MAX_TABLE_LENS) {
                eng_err("more than %d test lengths for task %s in one report\n",
                        ENG_MAX_TABLE_LENS, rg_task_name(task));
                eng_table_free(t);
                return -1;
            }
            t->lens[task][t->n_lens[task]++] = n;
        }
    }
    for (int k = 0; k < t->n_rows; k++) {
        t->rows[k].runs = malloc(sizeof(int) * (size_t)t->rows[k].n_runs);
        if (!t->rows[k].runs) goto nomem;
        t->rows[k].n_runs = 0;
    }
    qsort(t->rows, (size_t)t->n_rows, sizeof *t->rows, cmp_row);
    for (int i = 0; i < n_res; i++)
        for (int k = 0; k < t->n_rows; k++)
            if (row_of(&t->rows[k], &res[i])) t->rows[k].runs[t->rows[k].n_runs++] = i;
    for (int task = 0; task < rg_task_count(); task++) qsort(t->lens[task], (size_t)t->n_lens[task], sizeof(int), cmp_int);
    return 0;
nomem:
    eng_err("report: out of memory\n");
    eng_table_free(t);
    return -1;
}

const eng_row *eng_table_row_like(const eng_table *t, const eng_row *like)
{
    for (int k = 0; k < t->n_rows; k++)
        if (t->rows[k].task == like->task && t->rows[k].pos == like->pos && t->rows[k].variant == like->variant &&
            t->rows[k].ext == like->ext && t->rows[k].ext_factor == like->ext_factor &&
            strcmp(t->rows[k].size, like->size) == 0)
            return &t->rows[k];
    return NULL;
}

void eng_table_free(eng_table *t)
{
    for (int k = 0; k < t->n_rows && t->rows; k++) free(t->rows[k].runs);
    free(t->rows);
    t->rows = NULL;
    t->n_rows = 0;
}

void eng_table_cell(const eng_table *t, const eng_row *r, int n, bool exact, eng_stat *s, double *values)
{
    double stack[64], *v = values ? values : r->n_runs <= 64 ? stack : malloc(sizeof(double) * (size_t)r->n_runs);
    if (!v) { *s = ENG_STAT_NONE; return; }
    for (int i = 0; i < r->n_runs; i++) {
        const eng_result *x = &t->res[r->runs[i]];
        v[i] = NAN;
        for (int j = 0; j < x->n_lens; j++)
            if (x->lens[j] == n) v[i] = exact ? x->exact[j] : x->token_acc[j];
    }
    /* the variant and a fixed factor enter the bootstrap seed so that base rows keep the seeds they had */
    uint64_t seed = eng_cell_seed(r->task, r->pos, r->ext, n, exact) ^ ((uint64_t)r->variant << 20) ^
                    ((uint64_t)(r->ext_factor * 1000) << 24);
    if (r->size[0]) /* a size axis: each size's cells their own seeds (rows without a size keep theirs) */
        seed ^= ((uint64_t)r->d_model << 36) ^ ((uint64_t)r->n_layers << 50) ^ ((uint64_t)r->n_heads << 56) ^
                ((uint64_t)r->d_ff << 40);
    eng_stat_compute(v, r->n_runs, seed, s);
    if (v != values && v != stack) free(v);
}

bool eng_row_learned(const eng_table *t, const eng_row *r)
{
    eng_stat s;
    eng_table_cell(t, r, t->train_len, true, &s, NULL);
    return s.n == 0 || s.mean >= 0.9;
}
