/* evaluate.c: greedy decoding of an evaluation set and its scores (exact match, token accuracy, per-position counts
 * and a grid task's image), and the randomized evaluation positions of a +rand run. One run (run.c) and the curves
 * over training (run_curves.c) evaluate through it. */
#include "engine/run/evaluate.h"
#include "engine/base/types.h"
#include "engine/run/run_grid.h"
#include "engine/settings/protocol.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_BATCH 64

/* Randomized positions at evaluation, for runs trained with them (variant +rand; Ruoss et al. 2023: the reference
 * code, google-deepmind/randomized_positional_encodings, draws them at evaluation too): each sample of 2n+3 tokens
 * (prompt BOS x SEP, answer y EOS) gets a sorted uniform random subset of [0, max_position), drawn as in training
 * (rg_random_positions) from PCG32 seed = the run's seed, stream = base + rg_eval_stream(task, n) -- apart from the
 * training streams 1 (data) and 2 (positions), so --eval of a checkpoint draws the same positions. */
/* the streams' bases EVALPOS_TEST (the test sets) and EVALPOS_HELDOUT (the held-out set): evaluate.h */

/* [count, T] evaluation ids of a task with a positions hook (rg_task_positions with no rng): *pos malloc'ed. */
static rg_status task_positions(rg_task task, int n, int count, int32_t **pos)
{
    int T = rg_task_total_len(task, n);
    if (!(*pos = malloc(sizeof(int32_t) * (size_t)count * T)))
        return rg_error(RG_ERR_NOMEM, "evaluation positions n=%d: out of memory", n);
    rg_status st = rg_task_positions(task, NULL, n, *pos);
    for (int i = 1; i < count && st == RG_OK; i++) memcpy(*pos + (int64_t)i * T, *pos, sizeof(int32_t) * (size_t)T);
    if (st) { free(*pos); *pos = NULL; }
    return st;
}

/* *pos = NULL (positions 0..T-1) unless random or the task gives its own (then those); else [count, 2n+3] positions (the caller frees them). RG_ERR_ARG
 * when 2n+3 > max_position (no such subset: the caller reports n/a), RG_ERR_NOMEM. */
rg_status eng_eval_positions(bool random, uint64_t seed, uint64_t base, rg_task task, int n, int count,
                                int max_position, int32_t **pos)
{
    *pos = NULL;
    int T = rg_task_total_len(task, n);
    if (!random && rg_task_get(task)->positions) /* the task's own ids (position coupling), the same every row */
        return task_positions(task, n, count, pos);
    if (!random) return RG_OK;
    if (T > max_position)
        return rg_error(RG_ERR_ARG, "n=%d: %d tokens need more random positions than [0, %d) has", n, T, max_position);
    if (!(*pos = malloc(sizeof(int32_t) * (size_t)count * T)))
        return rg_error(RG_ERR_NOMEM, "evaluation positions n=%d: out of memory", n);
    rg_rng rng;
    rg_rng_seed(&rng, seed, base + rg_task_stream(task, n));
    rg_random_positions(&rng, count, T, max_position, *pos);
    return RG_OK;
}

/* Greedy decoding of count prompts [count, P] of (task, n), target_len(n) tokens each, scored against want
 * [count, G]: exact match and token accuracy through the task's score hook (rg_task_score_rows; token equality
 * without one), and into r's slot (when r is not NULL and G <= ENG_POS_MAX) the per-position accounting by token
 * equality (eng_position_count). At positions 0.., or at row i of pos [count, P + G] if not NULL. RG_ERR_ARG when a
 * position passes the learned table. */
rg_status eng_evaluate_rows(rg_model *m, rg_task task, int n, const int32_t *prompts, const int32_t *want,
                               int count, const int32_t *pos, double *exact, double *token_acc, eng_result *r,
                               int slot)
{
    int P = rg_task_prompt_len(task, n), G = rg_task_target_len(task, n);
    int32_t *gen = malloc(sizeof(int32_t) * (size_t)count * G), *axes = NULL;
    rg_status st = gen ? eng_eval_axes(task, n, prompts, count, &axes)
                       : rg_error(RG_ERR_NOMEM, "evaluation n=%d: out of memory", n);
    if (st == RG_OK) st = rg_generate_axes(m, prompts, count, P, G, pos, axes, EVAL_BATCH, gen);
    rg_task_score sc = {0};
    if (st == RG_OK) st = rg_task_score_rows(task, n, &sc, prompts, gen, want, count);
    if (st == RG_OK && r && G <= ENG_POS_MAX) {
        r->pos_count[slot] = count;
        eng_position_count(gen, want, count, G, r->pos_right[slot], r->first_wrong[slot]);
    }
    if (st == RG_OK && r && axes) eng_cell_count(task, n, gen, want, axes, count, r, slot);
    free(gen);
    free(axes);
    *exact = st ? NAN : rg_task_exact_match(&sc);
    *token_acc = st ? NAN : rg_task_token_acc(&sc);
    return st;
}

/* The first `count` samples of an evaluation set (its prompts and expected continuations), as eng_evaluate_rows. */
rg_status eng_evaluate_set(rg_model *m, const rg_evalset *es, int count, const int32_t *pos, double *exact,
                          double *token_acc, eng_result *r, int slot)
{
    return eng_evaluate_rows(m, es->task, es->n, es->prompt, es->expected, count, pos, exact, token_acc, r, slot);
}
