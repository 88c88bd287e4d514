/* registry.c: the task registry (rg_task_register; the ordering tasks are its first three entries) and what works
 * for any registered task through its descriptor: lengths, checked samples, scoring, the streams of its evaluation
 * sets, and the training batch (rg_task_batch_sample). See task.h. */
#include "task_internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rg_task_desc *registry[RG_TASK_MAX] = {&rg_task_desc_copy, &rg_task_desc_reverse, &rg_task_desc_sort};
static int n_registered = RG_TASK_BUILTIN;

int rg_task_count(void) { return n_registered; }

const rg_task_desc *rg_task_get(rg_task task) { return task >= 0 && task < n_registered ? registry[task] : NULL; }

const char *rg_task_name(rg_task task)
{
    const rg_task_desc *d = rg_task_get(task);
    return d ? d->name : "?";
}

/* The registered names, comma-separated, into buf. */
static void registered_names(char *buf, size_t cap)
{
    buf[0] = 0;
    for (int i = 0; i < n_registered; i++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", registry[i]->name);
}

rg_status rg_task_parse(const char *name, rg_task *out)
{
    for (int i = 0; name && i < n_registered; i++)
        if (strcmp(name, registry[i]->name) == 0) {
            if (out) *out = i;
            return RG_OK;
        }
    char names[RG_TASK_MAX * (RG_TASK_NAME_MAX + 2)];
    registered_names(names, sizeof names);
    return rg_error(RG_ERR_ARG, "unknown task '%s' (allowed: %s; a program adds its own with rg_task_register)",
                    name ? name : "(null)", names);
}

static bool valid_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 1 || n > RG_TASK_NAME_MAX || strcmp(s, "all") == 0) return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

rg_status rg_task_register(const rg_task_desc *d, rg_task *id)
{
    if (!d) return rg_error(RG_ERR_ARG, "rg_task_register: NULL descriptor");
    for (int i = 0; i < n_registered; i++)
        if (registry[i] == d) {
            if (id) *id = i;
            return RG_OK;
        }
    const char *name = d->name ? d->name : "(null)";
    if (!valid_name(d->name))
        return rg_error(RG_ERR_ARG, "rg_task_register: task name '%.64s' is not 1..%d characters of [a-z0-9_] (nor "
                        "\"all\")", name, RG_TASK_NAME_MAX);
    if (rg_task_parse(d->name, NULL) == RG_OK)
        return rg_error(RG_ERR_ARG, "rg_task_register: a task named '%s' is already registered", name);
    if (!d->prompt_len || !d->target_len || !d->sample)
        return rg_error(RG_ERR_ARG, "rg_task_register: task '%s' lacks a prompt_len, target_len or sample hook", name);
    if (d->vocab_size < 2 || d->vocab_size > (1 << 24))
        return rg_error(RG_ERR_ARG, "rg_task_register: task '%s': vocab_size %d outside 2..%d", name, d->vocab_size,
                        1 << 24);
    if (!!d->shape != !!d->train_size || !!d->shape != !!d->axes)
        return rg_error(RG_ERR_ARG, "rg_task_register: task '%s' sets some of the grid hooks shape, train_size, axes "
                        "(all three or none)", name);
    if (d->prompt_len(1) < 1 || d->target_len(1) < 1)
        return rg_error(RG_ERR_ARG, "rg_task_register: task '%s': prompt_len(1) = %d and target_len(1) = %d must be "
                        ">= 1", name, d->prompt_len(1), d->target_len(1));
    if (n_registered == RG_TASK_MAX)
        return rg_error(RG_ERR_ARG, "rg_task_register: the registry is full (%d tasks)", RG_TASK_MAX);
    registry[n_registered] = d;
    if (id) *id = n_registered;
    n_registered++;
    return RG_OK;
}

/* ------------------------------------------------------------------ lengths, samples, scores, streams */

/* The descriptor, with n checked; NULL with the error set. */
static const rg_task_desc *task_at(rg_task task, int n, rg_status *st)
{
    const rg_task_desc *d = rg_task_get(task);
    if (!d) {
        *st = rg_error(RG_ERR_ARG, "unknown task %d (%d registered)", (int)task, n_registered);
        return NULL;
    }
    if ((*st = rg_task_check_n(n))) return NULL;
    rg_grid_shape sh;
    if (d->shape && !d->shape(d, n, &sh)) {
        *st = rg_error(RG_ERR_ARG, "n = %d is not a size of grid task '%s' (a grid size code 100 F + 10 H + W, "
                       "written HxW or FxHxW: docs/grids.md)", n, d->name);
        return NULL;
    }
    return d;
}

/* The descriptor when n is one of its sizes, else NULL (no error set). */
static const rg_task_desc *sized(rg_task task, int n)
{
    const rg_task_desc *d = rg_task_get(task);
    rg_grid_shape sh;
    if (!d || n < 1 || n > RG_TASK_MAX_N || (d->shape && !d->shape(d, n, &sh))) return NULL;
    return d;
}

int rg_task_prompt_len(rg_task task, int n)
{
    const rg_task_desc *d = sized(task, n);
    return d ? d->prompt_len(n) : -1;
}

int rg_task_target_len(rg_task task, int n)
{
    const rg_task_desc *d = sized(task, n);
    return d ? d->target_len(n) : -1;
}

int rg_task_total_len(rg_task task, int n)
{
    int P = rg_task_prompt_len(task, n);
    return P < 0 ? -1 : P + rg_task_target_len(task, n);
}

/* RG_ERR_FORMAT for a token of tok[0..len) outside 1..vocab-1. */
static rg_status check_tokens(const rg_task_desc *d, const char *what, int n, const int32_t *tok, int len)
{
    for (int j = 0; j < len; j++)
        if (tok[j] < 1 || tok[j] >= d->vocab_size)
            return rg_error(RG_ERR_FORMAT, "task '%s' n=%d: its sample hook wrote %s[%d] = %d, outside its tokens "
                            "1..%d (vocab_size %d): a bug of the task's sample hook", d->name, n, what, j, (int)tok[j],
                            d->vocab_size - 1, d->vocab_size);
    return RG_OK;
}

rg_status rg_task_draw(rg_task task, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    rg_status st;
    const rg_task_desc *d = task_at(task, n, &st);
    if (!d) return st;
    if (!rng || !prompt || !target) return rg_error(RG_ERR_ARG, "rg_task_draw: rng, prompt and target must be set");
    if ((st = d->sample(d, rng, n, prompt, target))) return st;
    if ((st = check_tokens(d, "prompt", n, prompt, d->prompt_len(n)))) return st;
    return check_tokens(d, "target", n, target, d->target_len(n));
}

rg_status rg_task_positions(rg_task task, rg_rng *rng, int n, int32_t *pos)
{
    rg_status st;
    const rg_task_desc *d = task_at(task, n, &st);
    if (!d) return st;
    if (!pos) return rg_error(RG_ERR_ARG, "rg_task_positions: pos must be set");
    int T = d->prompt_len(n) + d->target_len(n);
    if (!d->positions) {
        for (int t = 0; t < T; t++) pos[t] = t;
        return RG_OK;
    }
    if ((st = d->positions(d, rng, n, pos))) return st;
    for (int t = 0; t < T; t++)
        if (pos[t] < 0 || pos[t] >= RG_TASK_MAX_POSITION)
            return rg_error(RG_ERR_FORMAT, "task '%s' n=%d: position[%d] = %d outside 0..%d", d->name, n, t,
                            (int)pos[t], RG_TASK_MAX_POSITION - 1);
    return RG_OK;
}

unsigned rg_task_views(rg_task task)
{
    const rg_task_desc *d = rg_task_get(task);
    if (!d) return 0;
    if (d->views) return d->shape ? d->views : d->views & ~RG_TASK_VIEW_GRID; /* cell images need a grid's shape */
    return RG_TASK_VIEW_EXACT | (d->shape ? RG_TASK_VIEW_GRID : RG_TASK_VIEW_POSITIONS);
}

int rg_task_longest_distance(rg_task task, int n)
{
    rg_status st;
    const rg_task_desc *d = task_at(task, n, &st);
    if (!d) return -1;
    if (d->longest_distance) {
        int v = d->longest_distance(d, n);
        if (v < 0) rg_error(RG_ERR_FORMAT, "task '%s' n=%d: longest_distance is %d (negative)", d->name, n, v);
        return v < 0 ? -1 : v;
    }
    int T = d->prompt_len(n) + d->target_len(n);
    int32_t *pos = malloc(sizeof *pos * (size_t)T);
    if (!pos) return rg_error(RG_ERR_NOMEM, "task '%s': %d position ids", d->name, T), -1;
    int lo = INT32_MAX, hi = 0;
    st = rg_task_positions(task, NULL, n, pos);
    for (int t = 0; !st && t < T - 1; t++) { /* the last token is never fed */
        if (pos[t] < lo) lo = pos[t];
        if (pos[t] > hi) hi = pos[t];
    }
    free(pos);
    return st ? -1 : T < 2 ? 0 : hi - lo;
}

rg_status rg_task_score_rows(rg_task task, int n, rg_task_score *s, const int32_t *prompts, const int32_t *gen,
                             const int32_t *expected, int B)
{
    rg_status st;
    const rg_task_desc *d = task_at(task, n, &st);
    if (!d) return st;
    if (B < 1) return rg_error(RG_ERR_ARG, "score: B = %d must be >= 1", B);
    int P = d->prompt_len(n), G = d->target_len(n);
    for (int b = 0; b < B; b++) {
        const int32_t *g = gen + (int64_t)b * G, *e = expected + (int64_t)b * G;
        int right = 0;
        if (d->score) {
            right = d->score(d, n, prompts + (int64_t)b * P, g, e);
            if (right < 0 || right > G)
                return rg_error(RG_ERR_FORMAT, "task '%s' n=%d: its score hook returned %d right tokens of %d",
                                d->name, n, right, G);
        } else {
            for (int j = 0; j < G; j++) right += g[j] == e[j];
        }
        s->samples++;
        s->exact += right == G;
        s->tokens += G;
        s->correct += right;
    }
    return RG_OK;
}

uint64_t rg_task_stream(rg_task task, int n)
{
    if (task >= 0 && task < RG_TASK_BUILTIN) return rg_eval_stream(task, n);
    uint32_t h = 2166136261u; /* FNV-1a, 32 bits */
    for (const char *p = rg_task_name(task); *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
    return 1000u * (((uint64_t)1 << 20) + h) + (uint64_t)n;
}

/* ------------------------------------------------------------------ training batches of any task */

int64_t rg_task_batch_cap_of(rg_task task, int B, int L_train)
{
    int total = rg_task_total_len(task, L_train);
    return total < 0 || B < 1 ? -1 : (int64_t)B * (total - 1);
}

rg_status rg_task_batch_alloc_for(rg_task_batch *b, rg_task task, int max_batch, int L_train)
{
    memset(b, 0, sizeof *b);
    rg_status st;
    if (!task_at(task, L_train, &st)) return st;
    if (max_batch < 1) return rg_error(RG_ERR_ARG, "batch size %d < 1", max_batch);
    int64_t cap = rg_task_batch_cap_of(task, max_batch, L_train);
    if ((st = rg_task_batch_alloc_cap(b, max_batch, cap))) return st;
    if (rg_task_get(task)->axes &&
        !(b->axes = malloc((size_t)RG_TASK_AXES * (size_t)(cap + max_batch) * sizeof *b->axes))) {
        rg_task_batch_free(b);
        return rg_error(RG_ERR_NOMEM, "cannot allocate the axes of a batch of %lld tokens", (long long)cap);
    }
    if (!rg_task_get(task)->positions) return RG_OK;
    if (!(b->positions = malloc((size_t)(cap + 1) * sizeof *b->positions))) {
        rg_task_batch_free(b);
        return rg_error(RG_ERR_NOMEM, "cannot allocate the positions of a batch of %lld tokens", (long long)cap);
    }
    return RG_OK;
}

/* Row i of the final batch (T columns) from its prompt staged in tokens and target staged in targets, both at
 * row stride S >= T (rows before i are final already; see rg_task_batch_sample). */
static void place_row(rg_task_batch *b, int i, int S, int P, int G)
{
    int T = b->T;
    int32_t *tok = b->tokens + (int64_t)i * T, *tgt = b->targets + (int64_t)i * T;
    memmove(tok, b->tokens + (int64_t)i * S, sizeof(int32_t) * (size_t)P);
    memcpy(tok + P, b->targets + (int64_t)i * S, sizeof(int32_t) * (size_t)(G - 1));
    for (int p = P + G - 1; p < T; p++) tok[p] = RG_TOK_PAD;
    memmove(tgt + P - 1, b->targets + (int64_t)i * S, sizeof(int32_t) * (size_t)G);
    for (int p = 0; p < P - 1; p++) tgt[p] = RG_TASK_IGNORE;
    for (int p = P - 1 + G; p < T; p++) tgt[p] = RG_TASK_IGNORE;
}

/* Stages the ids of row i's full sequence (T = P + G ids, one more than the row feeds) at stride S: the last id
 * spills into row i+1's stage, which is drawn later, or into the buffer's extra element (cap + 1). */
static rg_status row_positions(rg_task_batch *b, rg_task task, rg_rng *rng, int n, int i, int S)
{
    return rg_task_positions(task, rng, n, b->positions + (int64_t)i * S);
}

rg_status rg_task_batch_sample(rg_task_batch *b, rg_task task, rg_rng *rng, int B, int L_train)
{
    rg_status st;
    const rg_task_desc *d = task_at(task, L_train, &st);
    if (!d || (st = rg_task_check_batch(b, B))) return st;
    if (!rng) return rg_error(RG_ERR_ARG, "rng must not be NULL");
    int64_t cap = rg_task_batch_cap_of(task, B, L_train);
    if (cap > b->cap)
        return rg_error(RG_ERR_ARG, "batch %d x L_train %d needs %lld tokens, the buffer holds %lld", B, L_train,
                        (long long)cap, (long long)b->cap);
    /* T is known only after every row is drawn: stage row i's prompt in tokens and its target in targets at
     * stride S (the longest row), then place the rows at stride T <= S in order (a row's final place never
     * reaches a later row's staged one). */
    bool with_pos = d->positions != NULL, with_axes = d->axes != NULL;
    if (with_pos && !b->positions)
        return rg_error(RG_ERR_ARG, "task '%s' has positions: the batch needs its positions buffer "
                        "(rg_task_batch_alloc_for)", d->name);
    if (with_axes && !b->axes)
        return rg_error(RG_ERR_ARG, "grid task '%s': the batch needs its axes buffer (rg_task_batch_alloc_for)",
                        d->name);
    int S = (int)(cap / B), max_len = 0;
    /* axis a of row i is staged at (a B + i)(S + 1): its full sequence's S + 1 ids at most, no spill */
    int64_t AS = (int64_t)B * (S + 1);
    for (int i = 0; i < B; i++) {
        int n = rg_task_train_size(task, rng, L_train);
        if (n < 0) return RG_ERR_ARG;
        int len = d->prompt_len(n) + d->target_len(n) - 1;
        if (len > S)
            return rg_error(RG_ERR_ARG, "task '%s': its length at n = %d (%d) passes its length at L_train = %d (%d): "
                            "prompt_len and target_len must not decrease", d->name, n, len, L_train, S);
        if ((st = rg_task_draw(task, rng, n, b->tokens + (int64_t)i * S, b->targets + (int64_t)i * S))) return st;
        if (with_pos && (st = row_positions(b, task, rng, n, i, S))) return st;
        if (with_axes &&
            (st = rg_task_axes(task, n, b->tokens + (int64_t)i * S, b->axes + (int64_t)i * (S + 1), AS)))
            return st;
        b->n[i] = n;
        b->len[i] = len;
        if (len > max_len) max_len = len;
    }
    b->B = B;
    b->T = max_len;
    b->n_loss = 0;
    for (int i = 0; i < B; i++) {
        int P = d->prompt_len(b->n[i]), G = d->target_len(b->n[i]);
        place_row(b, i, S, P, G);
        if (with_pos) { /* row i's ids from its stage (S apart, at or after its final place: moved in order) */
            int32_t *dst = b->positions + (int64_t)i * max_len;
            memmove(dst, b->positions + (int64_t)i * S, sizeof(int32_t) * (size_t)(P + G - 1));
            for (int p = P + G - 1; p < max_len; p++) dst[p] = 0;
        }
        b->n_loss += G;
    }
    for (int a = 0; with_axes && a < RG_TASK_AXES; a++) /* to [RG_TASK_AXES, B, T]: each row at or before its stage */
        for (int i = 0; i < B; i++) {
            int32_t *dst = b->axes + ((int64_t)a * B + i) * max_len;
            int len = b->len[i];
            memmove(dst, b->axes + (int64_t)a * AS + (int64_t)i * (S + 1), sizeof(int32_t) * (size_t)len);
            for (int p = len; p < max_len; p++) dst[p] = 0;
        }
    return RG_OK;
}
