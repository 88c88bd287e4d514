/* generate.h: batched greedy decoding with the KV cache (rg_generate) and its scoring (rg_evaluate), for any model
 * built by rg_model_new. This is the loop every evaluation script needs: prefill each batch of prompts in one
 * forward, then one token per forward from the cache, with the cache reset (and its batch shrunk) for a short last
 * batch. Greedy: the next token is the argmax of the last logits, ties to the lowest id (rg_argmax); no early stop
 * (every row gets exactly `n_new` tokens), so rows of one batch stay aligned.
 *
 * Positions: prompt token t of every row sits at position start + t, generated token j at start + prompt_len + j.
 * Start 0 is the usual case; a larger start evaluates a model at positions it was not trained on (the
 * "shifted positions" probe of length-generalization work) without longer inputs.
 *
 * Explicit positions (`positions` non-NULL, then start must be 0): row i's token t sits at
 * positions[i * (prompt_len + n_new) + t], prompt tokens t < prompt_len and generated token j at t = prompt_len + j
 * (the last one, never fed back, is not read but must lie in range too). Each row may have its own positions, in any
 * order; the KV cache keeps each key at the position it was computed with. This evaluates a model trained with
 * randomized positions the way the reference code of Ruoss et al. 2023 ("Randomized Positional Encodings Boost
 * Length Generalization of Transformers", google-deepmind/randomized_positional_encodings, positional_encodings.py)
 * does: at test time too, each sequence gets a sorted random subset of [0, noise_max_length), as rg_random_positions
 * draws. positions = 0..prompt_len+n_new-1 in every row gives exactly (bit for bit) the tokens of NULL with start 0.
 *
 * Shapes are row-major int32: prompts [n, prompt_len], positions [n, prompt_len + n_new] (or NULL), out and
 * expected [n, n_new]. */
#ifndef RG_NN_GENERATE_H
#define RG_NN_GENERATE_H

#include <stdint.h>

#include "nn.h"

/* Greedy-decodes n_new tokens after each of the n prompts into out, `batch` rows per forward (the last batch may be
 * shorter). Allocates one KV cache of batch x (prompt_len + n_new) tokens and frees it before returning.
 * Errors (nothing written to out is meaningful then): RG_ERR_ARG for n, prompt_len, n_new or batch < 1, start < 0,
 * start + prompt_len + n_new > RG_MAX_POSITION, start != 0 with positions, a given position outside
 * [0, RG_MAX_POSITION) (the message names row and token), and every error of rg_model_forward (a token id outside the
 * vocabulary, a position past the learned table: the message names it); RG_ERR_NOMEM. */
rg_status rg_generate(rg_model *m, const int32_t *prompts, int n, int prompt_len, int n_new, int start,
                      const int32_t *positions, int batch, int32_t *out);

/* rg_generate (start 0) with each token's axis ids (frame, row, column: pos.h "position axes", the grid tasks'
 * rg_task_desc.axes): axes int32 [RG_POS_AXES, n, prompt_len + n_new] (axis-major; row i's token t at
 * axes[(a * n + i) * (prompt_len + n_new) + t], generated token j at t = prompt_len + j) or NULL (rg_generate's result
 * bit for bit). The KV cache keeps each key's axis ids. Errors as rg_generate, and RG_ERR_ARG for an axis id outside
 * [0, RG_MAX_POSITION) (the message names axis, row and token, as rg_model_forward_axes). */
rg_status rg_generate_axes(rg_model *m, const int32_t *prompts, int n, int prompt_len, int n_new,
                           const int32_t *positions, const int32_t *axes, int batch, int32_t *out);

/* Exact match and token accuracy of greedy decoding: generates as rg_generate, then compares row i of the output
 * with row i of expected token by token. *exact_match = the fraction of rows with all n_new tokens right,
 * *token_acc = the fraction of tokens right (both in [0, 1]). Errors as rg_generate (then both are NaN). */
rg_status rg_evaluate(rg_model *m, const int32_t *prompts, const int32_t *expected, int n, int prompt_len, int n_new,
                      int start, const int32_t *positions, int batch, double *exact_match, double *token_acc);

/* ------------------------------------------------------------------ teacher-forced evaluation (eval_batch.c) */

/* The result of rg_model_eval_batch. */
typedef struct {
    double loss;          /* mean cross-entropy (nats) over the counted targets: the training loss of the batch */
    double token_acc;     /* n_correct / n_targets (0 with no counted target) */
    int64_t n_targets;    /* targets != ignore_index inside each row's length */
    int64_t n_correct;    /* of those, how many are the argmax of their logits (ties to the lowest id) */
} rg_eval_stats;

/* Where greedy outputs break (the per-position view of train_order's reports): for the rows i < n of gen and want
 * (both [n, n_new], e.g. rg_generate's output and the expected tokens), ADDS to right[p] (n_new entries) the rows
 * whose token p is right, and to first_wrong[p] (n_new + 1 entries) the rows whose first wrong token is at p,
 * first_wrong[n_new] the rows with none wrong (zero both first; call again to accumulate). Per-position accuracy is
 * right[p] / n; first_wrong sums to n. Nothing is allocated; n < 1 or n_new < 1 adds nothing. */
void rg_position_counts(const int32_t *gen, const int32_t *want, int n, int n_new, int64_t *right,
                        int64_t *first_wrong);

/* Teacher-forced evaluation of a labelled batch in one call, the analogue of HF's model(input_ids, labels=...) but
 * with the labels already shifted, as rg_task_batch_sample and rg_train_step take them: targets[b][p] is the token
 * position p must predict (ignore_index: not counted). One forward without gradients (positions [B, T] or NULL:
 * 0..T-1), then *out as above; a target at p >= lengths[b] (padding, when lengths is set) is not counted (its
 * target should be ignore_index anyway, as in training). pos_correct and pos_count (each NULL or T entries) are
 * ADDED to: pos_count[p] += the counted targets at position p, pos_correct[p] += the right ones (zero them first;
 * call again to accumulate over batches; per-position accuracy = pos_correct[p] / pos_count[p]). The model is not
 * changed. Errors (out->loss and token_acc NaN then): RG_ERR_ARG for B or T < 1, a target outside 0..vocab-1 that is
 * not ignore_index, and those of rg_model_forward (a token out of range, a position past the learned table);
 * RG_ERR_NOMEM. */
rg_status rg_model_eval_batch(rg_model *m, const rg_batch *b, int32_t ignore_index, const int32_t *positions,
                              rg_eval_stats *out, int64_t *pos_correct, int64_t *pos_count);

#endif
