/* task.c: the built-in ordering tasks copy, reverse, sort (their descriptors, targets, sequences), batches built
 * from given content, and scoring; see task.h. The registry is registry.c, the evaluation sets evalset.c. */
#include "task_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ------------------------------------------------------------------ the ordering tasks */

rg_status rg_task_check_ordering(rg_task task)
{
    /* by id, not by name: the registry sits above this file (it holds the ordering tasks' descriptors) */
    if (task < 0 || task >= RG_TASK_BUILTIN)
        return rg_error(RG_ERR_ARG, "task %d is not an ordering task (allowed: %d copy, %d reverse, %d sort): an "
                        "unknown task, or a registered one, which goes through its descriptor (rg_task_draw, "
                        "rg_task_batch_sample, rg_task_evalset)", (int)task, RG_TASK_COPY, RG_TASK_REVERSE, RG_TASK_SORT);
    return RG_OK;
}

rg_status rg_task_check_n(int n)
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

static void copy_targets(const int32_t *x, int n, int32_t *y) { memcpy(y, x, (size_t)n * sizeof *y); }

static void reverse_targets(const int32_t *x, int n, int32_t *y)
{
    for (int j = 0; j < n; j++) y[j] = x[n - 1 - j];
}

static void sort_targets(const int32_t *x, int n, int32_t *y) /* counting sort over the 26 symbols */
{
    int count[RG_TASK_NSYM] = {0};
    for (int j = 0; j < n; j++) count[x[j] - RG_TOK_SYM0]++;
    int k = 0;
    for (int s = 0; s < RG_TASK_NSYM; s++)
        for (int c = 0; c < count[s]; c++) y[k++] = RG_TOK_SYM0 + s;
}

typedef void (*targets_fn)(const int32_t *x, int n, int32_t *y);
static const targets_fn ordering_targets[RG_TASK_BUILTIN] = {copy_targets, reverse_targets, sort_targets};

void rg_task_targets_unchecked(rg_task task, const int32_t *x, int n, int32_t *y) { ordering_targets[task](x, n, y); }

static void draw_symbols(rg_rng *rng, int n, int32_t *x)
{
    for (int j = 0; j < n; j++) x[j] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
}

/* ------------------------------------------------------------------ their descriptors */

static int ordering_prompt_len(int n) { return n + 2; }
static int ordering_target_len(int n) { return n + 1; }

/* prompt BOS x SEP, target y EOS: the draws of rg_task_sample (n symbols in order) */
static rg_status ordering_sample(targets_fn f, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    prompt[0] = RG_TOK_BOS;
    draw_symbols(rng, n, prompt + 1);
    prompt[n + 1] = RG_TOK_SEP;
    f(prompt + 1, n, target);
    target[n] = RG_TOK_EOS;
    return RG_OK;
}
static rg_status copy_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *p, int32_t *y)
{
    return ordering_sample(copy_targets, rng, n, p, y);
}
static rg_status reverse_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *p, int32_t *y)
{
    return ordering_sample(reverse_targets, rng, n, p, y);
}
static rg_status sort_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *p, int32_t *y)
{
    return ordering_sample(sort_targets, rng, n, p, y);
}

#define ORDERING_TASK(NAME, SUMMARY, SAMPLE) \
    {NAME, SUMMARY, RG_TASK_VOCAB, ordering_prompt_len, ordering_target_len, SAMPLE, NULL, rg_task_token_char, NULL, \
     NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0}
const rg_task_desc rg_task_desc_copy = ORDERING_TASK("copy", "y = x", copy_sample);
const rg_task_desc rg_task_desc_reverse = ORDERING_TASK("reverse", "y = x reversed", reverse_sample);
const rg_task_desc rg_task_desc_sort = ORDERING_TASK("sort", "y = x sorted ascending (repeats kept)", sort_sample);

rg_status rg_task_targets(rg_task task, const int32_t *x, int n, int32_t *y)
{
    rg_status st;
    if ((st = rg_task_check_ordering(task)) || (st = rg_task_check_n(n)) || (st = check_symbols(x, n))) return st;
    rg_task_targets_unchecked(task, x, n, y);
    return RG_OK;
}


rg_status rg_task_sample(rg_task task, rg_rng *rng, int n, int32_t *x, int32_t *y)
{
    rg_status st;
    if ((st = rg_task_check_ordering(task)) || (st = rg_task_check_n(n))) return st;
    draw_symbols(rng, n, x);
    rg_task_targets_unchecked(task, x, n, y);
    return RG_OK;
}

/* t[0..2n+3) for valid inputs. */
static void sequence_unchecked(rg_task task, const int32_t *x, int n, int32_t *t)
{
    t[0] = RG_TOK_BOS;
    memcpy(t + 1, x, (size_t)n * sizeof *t);
    t[n + 1] = RG_TOK_SEP;
    rg_task_targets_unchecked(task, x, n, t + n + 2);
    t[2 * n + 2] = RG_TOK_EOS;
}

rg_status rg_task_sequence(rg_task task, const int32_t *x, int n, int32_t *t)
{
    rg_status st;
    if ((st = rg_task_check_ordering(task)) || (st = rg_task_check_n(n)) || (st = check_symbols(x, n))) return st;
    sequence_unchecked(task, x, n, t);
    return RG_OK;
}

/* ------------------------------------------------------------------ training batches */

rg_status rg_task_batch_alloc(rg_task_batch *b, int max_batch, int L_train)
{
    memset(b, 0, sizeof *b);
    rg_status st;
    if (max_batch < 1) return rg_error(RG_ERR_ARG, "batch size %d < 1", max_batch);
    if ((st = rg_task_check_n(L_train))) return st;
    return rg_task_batch_alloc_cap(b, max_batch, rg_task_batch_cap(max_batch, L_train));
}

rg_status rg_task_batch_alloc_cap(rg_task_batch *b, int max_batch, int64_t cap)
{
    memset(b, 0, sizeof *b);
    b->tokens = malloc((size_t)cap * sizeof *b->tokens);
    b->targets = malloc((size_t)cap * sizeof *b->targets);
    b->len = malloc((size_t)max_batch * sizeof *b->len);
    b->n = malloc((size_t)max_batch * sizeof *b->n);
    if (!b->tokens || !b->targets || !b->len || !b->n) {
        rg_task_batch_free(b);
        return rg_error(RG_ERR_NOMEM, "cannot allocate a batch of %d x %lld tokens", max_batch,
                        (long long)(cap / max_batch));
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
    free(b->positions);
    free(b->axes);
    memset(b, 0, sizeof *b);
}

rg_status rg_task_check_batch(const rg_task_batch *b, int B)
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
    rg_task_targets_unchecked(task, x, n, tok + n + 2); /* y_1..y_n at positions n+2..2n+1 */
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
    if ((st = rg_task_check_ordering(task)) || (st = rg_task_check_batch(b, B))) return st;
    if (!n || !x) return rg_error(RG_ERR_ARG, "n and x must not be NULL");
    int max_n = 0;
    for (int i = 0; i < B; i++) {
        if ((st = rg_task_check_n(n[i]))) return rg_error(st, "row %d: n = %d outside 1..%d", i, n[i], RG_TASK_MAX_N);
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

/* ------------------------------------------------------------------ evaluation */

rg_status rg_task_prompt(const int32_t *x, int n, int32_t *prompt)
{
    rg_status st;
    if ((st = rg_task_check_n(n)) || (st = check_symbols(x, n))) return st;
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

