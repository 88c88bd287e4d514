/* eval_batch.c: teacher-forced evaluation of a labelled batch in one call (rg_model_eval_batch, generate.h): one
 * forward without gradients over tokens [B, T], then the mean cross-entropy over the counted targets (the training
 * loss, rg_cross_entropy), the argmax accuracy of every counted target, and per-position counts. */
#include "generate.h"

#include "../tensor/ops.h"

#include <math.h>
#include <stdlib.h>

rg_status rg_model_eval_batch(rg_model *m, const rg_batch *b, int32_t ignore_index, const int32_t *positions,
                              rg_eval_stats *out, int64_t *pos_correct, int64_t *pos_count)
{
    *out = (rg_eval_stats){NAN, NAN, 0, 0};
    if (!m || !b || !b->tokens || !b->targets || b->B < 1 || b->T < 1)
        return rg_error(RG_ERR_ARG, "eval batch: B = %d and T = %d must be >= 1 (and no NULL pointers)", b ? b->B : 0,
                        b ? b->T : 0);
    int B = b->B, T = b->T, V = m->cfg.vocab_size;
    for (int64_t i = 0; i < (int64_t)B * T; i++) {
        int32_t y = b->targets[i];
        if (y != ignore_index && (y < 0 || y >= V))
            return rg_error(RG_ERR_ARG, "eval batch: target %d at row %lld, position %lld is outside the vocabulary "
                            "0..%d (and not ignore_index %d)", y, (long long)(i / T), (long long)(i % T), V - 1,
                            ignore_index);
    }
    rg_ctx *c = rg_ctx_new();
    int32_t *argmax = malloc(sizeof(int32_t) * (size_t)B * T);
    rg_status st = c && argmax ? RG_OK : rg_error(RG_ERR_NOMEM, "eval batch: out of memory (%d x %d tokens)", B, T);
    rg_tensor *logits = NULL;
    if (st == RG_OK) {
        rg_set_grad_enabled(c, false);
        st = rg_model_forward_axes(c, m, b->tokens, positions, b->axes, B, T, NULL, &logits);
    }
    if (st == RG_OK) {
        rg_tensor *loss = rg_cross_entropy(c, logits, b->targets, ignore_index);
        rg_argmax(logits, argmax); /* over the last dim, ties to the lowest id */
        for (int r = 0; r < B; r++)
            for (int p = 0; p < T; p++) {
                int64_t i = (int64_t)r * T + p;
                if (b->targets[i] == ignore_index || (b->lengths && p >= b->lengths[r])) continue;
                int right = argmax[i] == b->targets[i];
                out->n_targets++;
                out->n_correct += right;
                if (pos_count) pos_count[p]++;
                if (pos_correct) pos_correct[p] += right;
            }
        out->loss = out->n_targets ? (double)loss->data[0] : 0.0;
        out->token_acc = out->n_targets ? (double)out->n_correct / (double)out->n_targets : 0.0;
    }
    free(argmax);
    if (c) rg_ctx_free(c);
    return st;
}
