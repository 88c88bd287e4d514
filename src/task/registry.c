/* registry.c: the task registry (rg_task_register; the ordering tasks are its first three entries) and what works
 * for any registered task through its descriptor: lengths, checked samples, scoring, the streams of its evaluation
 * sets (the training batch is batch.c's, above this file and grid_size.c). See task.h. */
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

const rg_task_desc *rg_task_at(rg_task task, int n, rg_status *st)
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
    const rg_task_desc *d = rg_task_at(task, n, &st);
    if (!d) return st;
    if (!rng || !prompt || !target) return rg_error(RG_ERR_ARG, "rg_task_draw: rng, prompt and target must be set");
    if ((st = d->sample(d, rng, n, prompt, target))) return st;
    if ((st = check_tokens(d, "prompt", n, prompt, d->prompt_len(n)))) return st;
    return check_tokens(d, "target", n, target, d->target_len(n));
}

rg_status rg_task_positions(rg_task task, rg_rng *rng, int n, int32_t *pos)
{
    rg_status st;
    const rg_task_desc *d = rg_task_at(task, n, &st);
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
    const rg_task_desc *d = rg_task_at(task, n, &st);
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
    const rg_task_desc *d = rg_task_at(task, n, &st);
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
