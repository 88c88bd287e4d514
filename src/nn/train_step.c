/* train_step.c: one training step (rg_train_step: forward, cross-entropy, backward, clip, AdamW) of a batch taken as
 * length-sorted micro-batches, and the chunked forward + loss + backward it is built on (rg_model_loss_backward).
 *
 * Shapes: tokens, targets int32 [B, T], right-padded rows; row b's unpadded length lengths[b] (targets past it are
 * ignore_index). Micro-batching: rows are sorted by length (stable), split into k groups of ceil(B/k) consecutive
 * rows, and each group is run padded only to its own longest row, so a batch of mixed lengths costs the tokens it
 * has instead of B x T. The loss is the mean over every target of the whole batch: each micro-batch's backward is
 * seeded with its share (its targets over all targets), so the parameter gradients receive exactly the gradient of
 * the batch's mean loss (up to float rounding), while only one micro-batch's intermediates are alive at a time (the
 * context is reset before each: the arena's working set is one micro-batch's).
 * Data parallelism (rg_trainer_set_share: rank, n_ranks, reduce_grad): each rank computes its fixed share of the
 * micro-batches (j % n_ranks == rank), weighted against the whole batch's target count, and the program's callback
 * sums the ranks' flat gradient blocks (and losses) before clipping and AdamW. */
#include "nn.h"
#include "../autograd/autograd.h"
#include "../io/checkpoint.h" /* rg_run_state, advanced by a tracked step */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forward, loss and backward of rows [0, rows) of tokens/targets (row stride T), seeded with count / total.
 * Adds the weighted loss to *sum. */
static rg_status run_micro(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *targets,
                           const int32_t *positions, const int32_t *axes, int rows, int T, int32_t ignore_index,
                           int64_t count, int64_t total, double *sum)
{
    rg_ctx_reset(c);
    rg_tensor *logits;
    rg_status st = rg_model_forward_axes(c, m, tokens, positions, axes, rows, T, NULL, &logits);
    if (st) return st;
    rg_tensor *l = rg_cross_entropy(c, logits, targets, ignore_index);
    rg_real w = (rg_real)((double)count / (double)total);
    rg_backward(c, l, &w);
    *sum += (double)w * (double)l->data[0];
    return RG_OK;
}

static int64_t count_targets(const int32_t *targets, int64_t n, int32_t ignore_index)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += targets[i] != ignore_index;
    return k;
}

rg_status rg_model_loss_backward(rg_ctx *c, rg_model *m, const int32_t *tokens, const int32_t *targets,
                                 const int32_t *positions, int B, int T, int chunks, int32_t ignore_index,
                                 double *loss)
{
    if (B < 1 || T < 1 || chunks < 1)
        return rg_error(RG_ERR_ARG, "loss_backward: B %d, T %d, chunks %d (each must be >= 1)", B, T, chunks);
    if (chunks > B) chunks = B;
    int64_t total = count_targets(targets, (int64_t)B * T, ignore_index);
    double sum = 0;
    int per = (B + chunks - 1) / chunks;
    rg_status st = RG_OK;
    rg_derivation_hold(true); /* each weight's derived copies made once for all chunks: no caller code runs between */
    for (int lo = 0; st == RG_OK && lo < B; lo += per) {
        int rows = lo + per <= B ? per : B - lo;
        int64_t off = (int64_t)lo * T, count = count_targets(targets + off, (int64_t)rows * T, ignore_index);
        if (count == 0) continue; /* no target: contributes nothing to the loss or the gradients */
        st = run_micro(c, m, tokens + off, targets + off, positions ? positions + off : NULL, NULL, rows, T,
                       ignore_index, count, total, &sum);
    }
    rg_derivation_hold(false);
    if (st) return st;
    *loss = sum;
    return RG_OK;
}

/* ------------------------------------------------------------------ the training step */

rg_status rg_trainer_init(rg_trainer *t)
{
    memset(t, 0, sizeof *t);
    t->ctx = rg_ctx_new();
    return RG_OK;
}

rg_status rg_trainer_set_share(rg_trainer *t, int rank, int n_ranks,
                               rg_status (*reduce_grad)(rg_real *grad, int64_t n, double *loss, void *ctx),
                               void *ctx)
{
    if (n_ranks < 1 || rank < 0 || rank >= n_ranks)
        return rg_error(RG_ERR_ARG, "train step share: rank %d of %d ranks (1 <= n_ranks, 0 <= rank < n_ranks)",
                        rank, n_ranks);
    t->rank = rank;
    t->n_ranks = n_ranks;
    t->reduce_grad = reduce_grad;
    t->reduce_ctx = ctx;
    return RG_OK;
}

void rg_trainer_track(rg_trainer *t, struct rg_run_state *rs) { t->run = rs; }

void rg_trainer_free(rg_trainer *t)
{
    rg_ctx_free(t->ctx);
    free(t->order);
    free(t->tokens);
    free(t->targets);
    free(t->positions);
    free(t->axes);
    memset(t, 0, sizeof *t);
}

/* Grows the trainer's buffers to B rows of T (only when a batch is larger than any before). */
static rg_status trainer_reserve(rg_trainer *t, int B, int T)
{
    int64_t need = (int64_t)B * T;
    if (B > t->cap_rows) {
        int *order = realloc(t->order, sizeof(int) * (size_t)B);
        if (!order) return rg_error(RG_ERR_NOMEM, "train step: out of memory for %d rows", B);
        t->order = order;
        t->cap_rows = B;
    }
    if (need > t->cap) {
        int32_t *a = realloc(t->tokens, sizeof(int32_t) * (size_t)need);
        if (a) t->tokens = a;
        int32_t *b = a ? realloc(t->targets, sizeof(int32_t) * (size_t)need) : NULL;
        if (b) t->targets = b;
        int32_t *p = b ? realloc(t->positions, sizeof(int32_t) * (size_t)need) : NULL;
        if (p) t->positions = p;
        int32_t *x = p ? realloc(t->axes, sizeof(int32_t) * RG_POS_AXES * (size_t)need) : NULL;
        if (x) t->axes = x;
        if (!x) return rg_error(RG_ERR_NOMEM, "train step: out of memory for %lld tokens", (long long)need);
        t->cap = need;
    }
    return RG_OK;
}

static rg_status check_step(const rg_batch *b, const rg_step_config *cfg)
{
    if (!b->tokens || !b->targets || b->B < 1 || b->T < 1)
        return rg_error(RG_ERR_ARG, "train step: batch %d x %d (each >= 1, tokens and targets given)", b->B, b->T);
    if (cfg->micro_batches < 1)
        return rg_error(RG_ERR_ARG, "train step: micro_batches %d (must be >= 1)", cfg->micro_batches);
    if (!(cfg->clip >= 0) || !isfinite(cfg->lr))
        return rg_error(RG_ERR_ARG, "train step: clip %g (>= 0) and lr %g (finite)", cfg->clip, cfg->lr);
    if (cfg->pos_rng && b->positions)
        return rg_error(RG_ERR_ARG, "train step: a batch with explicit positions cannot also take random positions");
    if (cfg->pos_rng && cfg->max_position < b->T)
        return rg_error(RG_ERR_ARG, "train step: max_position %d < T %d", cfg->max_position, b->T);
    for (int i = 0; b->lengths && i < b->B; i++)
        if (b->lengths[i] < 1 || b->lengths[i] > b->T)
            return rg_error(RG_ERR_ARG, "train step: row %d has length %d outside 1..%d", i, b->lengths[i], b->T);
    return RG_OK;
}

typedef struct {
    rg_ctx *c;
    rg_model *m;
    const int32_t *tokens, *targets, *positions, *axes;
    int rows, T;
    int32_t ignore_index;
    int64_t count, total;
    double *sum;
} micro_args;

static rg_status micro_fn(void *p)
{
    micro_args *a = p;
    return run_micro(a->c, a->m, a->tokens, a->targets, a->positions, a->axes, a->rows, a->T, a->ignore_index, a->count,
                     a->total, a->sum);
}

/* run_micro with out of memory in the arena or the tape returned as RG_ERR_NOMEM (tensor.h, rg_oom_try). */
static rg_status run_micro_guarded(micro_args *a)
{
    rg_status st = rg_oom_try(micro_fn, a);
    if (st == RG_ERR_NOMEM) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", rg_last_error());
        rg_ctx_reset(a->c);
        rg_error(st, "a micro-batch of %d rows x %d tokens: %s", a->rows, a->T, msg);
    }
    return st;
}

/* Micro-batch j of k is computed by rank j % n_ranks (n_ranks <= 1: every one here). Every rank walks all k
 * micro-batches in the same order (so the positions RNG advances identically everywhere) and seeds each backward with
 * its targets over the WHOLE batch's, so the ranks' gradients sum to the batch gradient. */
static rg_status train_grad(rg_trainer *t, rg_model *m, const rg_batch *b, const rg_step_config *cfg,
                            rg_step_stats *out)
{
    memset(out, 0, sizeof *out);
    rg_flush_denormals(true); /* this thread may not be the one that made the trainer (tensor.h) */
    rg_status st = check_step(b, cfg);
    if (st || (st = trainer_reserve(t, b->B, b->T))) return st;
    const int B = b->B, T = b->T, k = cfg->micro_batches < B ? cfg->micro_batches : B;
    const int n_ranks = t->n_ranks > 1 ? t->n_ranks : 1;
    /* rows by length, stable (insertion sort: B is small) */
    for (int i = 0; i < B; i++) t->order[i] = i;
    for (int i = 1; b->lengths && i < B; i++)
        for (int j = i; j > 0 && b->lengths[t->order[j - 1]] > b->lengths[t->order[j]]; j--) {
            int x = t->order[j]; t->order[j] = t->order[j - 1]; t->order[j - 1] = x;
        }
    const int64_t total = count_targets(b->targets, (int64_t)B * T, cfg->ignore_index);
    rg_params_zero_grad(&m->params);
    double sum = 0;
    const int per = (B + k - 1) / k;
    for (int lo = 0, j = 0; lo < B; lo += per, j++) {
        const int rows = lo + per <= B ? per : B - lo;
        int Tm = 1; /* this micro-batch's longest row */
        for (int i = lo; i < lo + rows; i++) {
            int len = b->lengths ? b->lengths[t->order[i]] : T;
            if (len > Tm) Tm = len;
        }
        for (int i = 0; i < rows; i++) {
            int64_t src = (int64_t)t->order[lo + i] * T, dst = (int64_t)i * Tm;
            memcpy(t->tokens + dst, b->tokens + src, sizeof(int32_t) * (size_t)Tm);
            memcpy(t->targets + dst, b->targets + src, sizeof(int32_t) * (size_t)Tm);
            if (b->positions) memcpy(t->positions + dst, b->positions + src, sizeof(int32_t) * (size_t)Tm);
            for (int a = 0; b->axes && a < RG_POS_AXES; a++) /* [3, B, T] -> [3, rows, Tm] */
                memcpy(t->axes + (int64_t)a * rows * Tm + dst, b->axes + (int64_t)a * B * T + src,
                       sizeof(int32_t) * (size_t)Tm);
        }
        int64_t count = count_targets(t->targets, (int64_t)rows * Tm, cfg->ignore_index);
        if (cfg->pos_rng) rg_random_positions(cfg->pos_rng, rows, Tm, cfg->max_position, t->positions);
        out->tokens += (int64_t)rows * Tm;
        if (count == 0 || j % n_ranks != t->rank) continue; /* no target, or another rank's share */
        micro_args a = {t->ctx, m, t->tokens, t->targets, cfg->pos_rng || b->positions ? t->positions : NULL,
                        b->axes ? t->axes : NULL, rows, Tm, cfg->ignore_index, count, total, &sum};
        st = run_micro_guarded(&a);
        if (st) return st;
    }
    if (t->reduce_grad &&
        (st = t->reduce_grad(m->params.grad, m->params.offset[m->params.n_packed], &sum, t->reduce_ctx)))
        return st;
    out->loss = sum;
    out->lr = cfg->lr;
    return RG_OK;
}

/* The micro-batches of one step read each weight's derived copies (tensor.h rg_derived) made by the first of them:
 * no caller code runs between them, so one derivation epoch holds for the whole step, as the copies did before
 * epochs existed (a write before the step is seen: holding begins a new epoch). */
rg_status rg_train_grad(rg_trainer *t, rg_model *m, const rg_batch *b, const rg_step_config *cfg, rg_step_stats *out)
{
    rg_derivation_hold(true);
    rg_status st = train_grad(t, m, b, cfg, out);
    rg_derivation_hold(false);
    return st;
}

rg_status rg_train_step(rg_trainer *t, rg_model *m, rg_adamw *opt, const rg_batch *b, const rg_step_config *cfg,
                        rg_step_stats *out)
{
    if (t->run && t->run->step != opt->step)
        return rg_error(RG_ERR_ARG, "train step: the tracked run state is at step %lld but AdamW at step %lld (load "
                        "both from one checkpoint: rg_checkpoint_open)", (long long)t->run->step, (long long)opt->step);
    rg_status st = rg_train_grad(t, m, b, cfg, out);
    if (st) return st;
    out->grad_norm = cfg->clip > 0 ? rg_params_clip_grad_norm(&m->params, cfg->clip)
                                   : rg_params_grad_norm(&m->params);
    rg_adamw_step(opt, &m->params, cfg->lr);
    if (t->run) t->run->step = t->run->lr.step = opt->step;
    return RG_OK;
}
