/* generate.c: batched greedy decoding with the KV cache, and exact match / token accuracy (see generate.h). */
#include "generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../autograd/autograd.h"
#include "../tensor/ops.h"

/* Token t of row b (prompt t < P, generated token t - P) sits at positions[b * (P + G) + t], or start + t when
 * positions is NULL. */
static int32_t position_of(const int32_t *positions, int b, int t, int P, int G, int start)
{
    return positions ? positions[(int64_t)b * (P + G) + t] : start + t;
}

/* The ids of one batch's tokens: its rows' 1-D positions and (axes given) axis ids. Axis a of row b (of the whole
 * call's n rows), token t is axes[(a * n + b) * (P + G) + t]. */
typedef struct {
    const int32_t *positions, *axes;
    int n, start;
} ids_in;

static void gather_ids(const ids_in *in, int s0, int B, int t0, int len, int P, int G, int32_t *pos, int32_t *ax)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len; t++) pos[b * len + t] = position_of(in->positions, s0 + b, t0 + t, P, G, in->start);
    for (int a = 0; in->axes && a < RG_POS_AXES; a++)
        for (int b = 0; b < B; b++)
            memcpy(ax + ((int64_t)a * B + b) * len, in->axes + ((int64_t)a * in->n + s0 + b) * (P + G) + t0,
                   sizeof(int32_t) * (size_t)len);
}

/* Decodes rows s0 .. s0+B-1 (B <= the cache's allocated batch): reset the cache to B rows, prefill the prompts, then
 * one token per forward. */
static rg_status decode_batch(rg_ctx *c, rg_model *m, rg_kv_cache *kv, const int32_t *prompts, int s0, int B, int P,
                              int G, const ids_in *in, int32_t *pos, int32_t *ax, int32_t *argmax, int32_t *next,
                              int32_t *out)
{
    rg_kv_cache_reset(kv);
    kv->batch = B; /* a short last batch uses the first B rows of the cache */
    gather_ids(in, s0, B, 0, P, P, G, pos, ax);
    rg_tensor *logits;
    rg_ctx_reset(c);
    rg_status st = rg_model_forward_axes(c, m, prompts, pos, in->axes ? ax : NULL, B, P, kv, &logits);
    if (st) return st;
    rg_argmax(logits, argmax); /* [B, P]: the last position of each row predicts the first new token */
    for (int b = 0; b < B; b++) out[(int64_t)b * G] = next[b] = argmax[b * P + P - 1];
    for (int j = 1; j < G; j++) {
        gather_ids(in, s0, B, P + j - 1, 1, P, G, pos, ax);
        rg_ctx_reset(c);
        if ((st = rg_model_forward_axes(c, m, next, pos, in->axes ? ax : NULL, B, 1, kv, &logits))) return st;
        rg_argmax(logits, next);
        for (int b = 0; b < B; b++) out[(int64_t)b * G + j] = next[b];
    }
    return RG_OK;
}

/* RG_OK when every given id lies in [0, RG_MAX_POSITION), else RG_ERR_ARG naming the first one that does not. */
static rg_status check_positions(const int32_t *positions, int64_t n, int len)
{
    for (int64_t i = 0; i < n * len; i++)
        if (positions[i] < 0 || positions[i] >= RG_MAX_POSITION)
            return rg_error(RG_ERR_ARG, "generate: positions[%lld] (row %lld, token %lld) is %d, outside [0, %d)",
                            (long long)i, (long long)(i / len), (long long)(i % len), (int)positions[i],
                            RG_MAX_POSITION);
    return RG_OK;
}

static rg_status generate(rg_model *m, const int32_t *prompts, int n, int prompt_len, int n_new, int start,
                          const int32_t *positions, const int32_t *axes, int batch, int32_t *out)
{
    if (!m || !prompts || !out || n < 1 || prompt_len < 1 || n_new < 1 || batch < 1 || start < 0)
        return rg_error(RG_ERR_ARG, "generate: n %d, prompt_len %d, n_new %d and batch %d must be >= 1, start %d >= 0 "
                        "(and no NULL pointers)", n, prompt_len, n_new, batch, start);
    if ((int64_t)start + prompt_len + n_new > RG_MAX_POSITION)
        return rg_error(RG_ERR_ARG, "generate: positions up to start %d + prompt_len %d + n_new %d pass %d", start,
                        prompt_len, n_new, RG_MAX_POSITION);
    if (positions && start != 0)
        return rg_error(RG_ERR_ARG, "generate: start %d with explicit positions (start must be 0 then)", start);
    rg_status st = positions ? check_positions(positions, n, prompt_len + n_new) : RG_OK;
    if (st) return st;
    for (int64_t i = 0, len = prompt_len + n_new; axes && i < (int64_t)RG_POS_AXES * n * len; i++)
        if (axes[i] < 0 || axes[i] >= RG_MAX_POSITION)
            return rg_error(RG_ERR_ARG, "generate: axis %lld id %d at row %lld, token %lld is outside [0, %d)",
                            (long long)(i / (n * len)), (int)axes[i], (long long)(i % (n * len) / len),
                            (long long)(i % len), RG_MAX_POSITION);
    if (batch > n) batch = n;
    int P = prompt_len, G = n_new;
    rg_kv_cache kv;
    if ((st = rg_kv_cache_init(&kv, m, batch, P + G))) return st;
    rg_ctx *c = rg_ctx_new();
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)batch * P), *argmax = malloc(sizeof(int32_t) * (size_t)batch * P);
    int32_t *ax = malloc(sizeof(int32_t) * RG_POS_AXES * (size_t)batch * P);
    int32_t *next = malloc(sizeof(int32_t) * (size_t)batch);
    if (!c || !pos || !argmax || !next || !ax) {
        st = rg_error(RG_ERR_NOMEM, "generate: out of memory (batch %d x %d tokens)", batch, P);
    } else {
        rg_set_grad_enabled(c, false);
        ids_in in = {positions, axes, n, start};
        rg_derivation_hold(true); /* one derivation of each weight for every token's forward (tensor.h rg_derived) */
        for (int s0 = 0; s0 < n && st == RG_OK; s0 += batch) {
            int B = n - s0 < batch ? n - s0 : batch;
            st = decode_batch(c, m, &kv, prompts + (int64_t)s0 * P, s0, B, P, G, &in, pos, ax, argmax, next,
                              out + (int64_t)s0 * G);
        }
        rg_derivation_hold(false);
    }
    free(pos);
    free(argmax);
    free(ax);
    free(next);
    if (c) rg_ctx_free(c);
    rg_kv_cache_free(&kv);
    return st;
}

rg_status rg_generate(rg_model *m, const int32_t *prompts, int n, int prompt_len, int n_new, int start,
                      const int32_t *positions, int batch, int32_t *out)
{
    return generate(m, prompts, n, prompt_len, n_new, start, positions, NULL, batch, out);
}

rg_status rg_generate_axes(rg_model *m, const int32_t *prompts, int n, int prompt_len, int n_new,
                           const int32_t *positions, const int32_t *axes, int batch, int32_t *out)
{
    return generate(m, prompts, n, prompt_len, n_new, 0, positions, axes, batch, out);
}

void rg_position_counts(const int32_t *gen, const int32_t *want, int n, int n_new, int64_t *right,
                        int64_t *first_wrong)
{
    for (int i = 0; i < n && n_new > 0; i++) {
        const int32_t *g = gen + (int64_t)i * n_new, *w = want + (int64_t)i * n_new;
        int first = n_new;
        for (int p = 0; p < n_new; p++) {
            bool ok = g[p] == w[p];
            right[p] += ok;
            if (!ok && first == n_new) first = p;
        }
        first_wrong[first]++;
    }
}

rg_status rg_evaluate(rg_model *m, const int32_t *prompts, const int32_t *expected, int n, int prompt_len, int n_new,
                      int start, const int32_t *positions, int batch, double *exact_match, double *token_acc)
{
    *exact_match = *token_acc = NAN;
    if (!expected) return rg_error(RG_ERR_ARG, "evaluate: expected is NULL");
    int32_t *gen = n >= 1 && n_new >= 1 ? malloc(sizeof(int32_t) * (size_t)n * (size_t)n_new) : NULL;
    if (n >= 1 && n_new >= 1 && !gen) return rg_error(RG_ERR_NOMEM, "evaluate: out of memory (%d x %d)", n, n_new);
    rg_status st = rg_generate(m, prompts, n, prompt_len, n_new, start, positions, batch, gen);
    if (st == RG_OK) {
        int64_t exact = 0, right = 0;
        for (int i = 0; i < n; i++) {
            int row = 0;
            for (int j = 0; j < n_new; j++) row += gen[(int64_t)i * n_new + j] == expected[(int64_t)i * n_new + j];
            right += row;
            exact += row == n_new;
        }
        *exact_match = (double)exact / n;
        *token_acc = (double)right / ((double)n * n_new);
    }
    free(gen);
    return st;
}
