/* batch.c: the training batch of any registered task (task.h "training batches"): a batch's buffers sized for a
 * task (rg_task_batch_alloc_for) and B rows drawn through its descriptor (rg_task_batch_sample): tokens and
 * targets [B, T] with T the longest row, its positions [B, T] when the task draws them, its axes
 * [RG_TASK_AXES, B, T] for a grid task. It asks the registry (lengths, draws) and grid_size.c (training sizes,
 * axes), so it sits above both. */
#include "task_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int64_t rg_task_batch_cap_of(rg_task task, int B, int L_train)
{
    int total = rg_task_total_len(task, L_train);
    return total < 0 || B < 1 ? -1 : (int64_t)B * (total - 1);
}

rg_status rg_task_batch_alloc_for(rg_task_batch *b, rg_task task, int max_batch, int L_train)
{
    memset(b, 0, sizeof *b);
    rg_status st;
    if (!rg_task_at(task, L_train, &st)) return st;
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
    const rg_task_desc *d = rg_task_at(task, L_train, &st);
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
