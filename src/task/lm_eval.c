/* lm_eval.c: perplexity of a language model over a token stream by non-overlapping chunks or a sliding window
 * (Press et al. 2022, §4 and App. B), with the windows' accounting exposed (rg_lm_windows) so that tests can check
 * which tokens are scored with which context. See lm.h. Shapes: a forward reads [B, E] tokens at positions 0..E-1
 * and gives logits [B, E, V]; offset j of window w predicts tok[start_w + j + 1]. */
#include "lm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../autograd/autograd.h"

int64_t rg_lm_windows(int64_t N, int E, rg_lm_method method, int stride, rg_lm_window *w, int64_t cap)
{
    if (E < 1 || N < (int64_t)E + 1) {
        rg_error(RG_ERR_ARG, "lm windows: context %d needs E >= 1 and at least E + 1 tokens (%lld given)", E,
                 (long long)N);
        return -1;
    }
    if (method == RG_LM_SLIDING && (stride < 1 || stride > E || E % stride != 0)) {
        rg_error(RG_ERR_ARG, "lm windows: stride %d must be in 1..%d and divide the context %d", stride, E, E);
        return -1;
    }
    int64_t W = (N - 1) / E, M = W * E; /* targets tok[1..M] are scored */
    int64_t S = method == RG_LM_CHUNKS ? E : stride, count = (M - E) / S + 1;
    if (w && cap < count) {
        rg_error(RG_ERR_ARG, "lm windows: %lld windows, room for %lld", (long long)count, (long long)cap);
        return -1;
    }
    for (int64_t k = 0; w && k < count; k++)
        w[k] = (rg_lm_window){k * S, E, method == RG_LM_CHUNKS || k == 0 ? 0 : E - (int)S};
    return count;
}

/* Adds the scored predictions of window w (its logits [E, V], row j predicting tok[start+j+1]) to s. */
static void score_window(const rg_real *logits, int V, const int32_t *tok, const rg_lm_window *w, rg_lm_score *s)
{
    for (int j = w->score_from; j < w->len; j++) {
        const rg_real *z = logits + (int64_t)j * V;
        double mx = z[0], sum = 0;
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
        double nll = mx + log(sum) - (double)z[tok[w->start + j + 1]];
        s->nll += nll;
        s->scored++;
        if (s->pos_nll) s->pos_nll[j] += nll;
        if (s->pos_count) s->pos_count[j]++;
    }
}

rg_status rg_lm_evaluate(rg_model *m, const int32_t *tok, int64_t N, int E, rg_lm_method method, int stride,
                         int batch, rg_lm_score *s)
{
    if (!m || !tok || !s || batch < 1) return rg_error(RG_ERR_ARG, "lm evaluate: NULL argument or batch %d < 1", batch);
    int64_t n_win = rg_lm_windows(N, E, method, stride, NULL, 0);
    if (n_win < 0) return RG_ERR_ARG;
    rg_lm_window *w = malloc(sizeof *w * (size_t)n_win);
    int32_t *in = malloc(sizeof(int32_t) * (size_t)batch * E);
    rg_ctx *c = rg_ctx_new();
    rg_status st = w && in && c ? RG_OK : rg_error(RG_ERR_NOMEM, "lm evaluate: out of memory (%lld windows)",
                                                   (long long)n_win);
    if (st == RG_OK && rg_lm_windows(N, E, method, stride, w, n_win) < 0) st = RG_ERR_ARG;
    if (c) rg_set_grad_enabled(c, false);
    const int V = m->cfg.vocab_size;
    rg_derivation_hold(true); /* one derivation of each weight for every window (tensor.h rg_derived) */
    for (int64_t k0 = 0; st == RG_OK && k0 < n_win; k0 += batch) {
        int B = n_win - k0 < batch ? (int)(n_win - k0) : batch;
        for (int b = 0; b < B; b++) memcpy(in + (int64_t)b * E, tok + w[k0 + b].start, sizeof(int32_t) * (size_t)E);
        rg_ctx_reset(c);
        rg_tensor *logits;
        if ((st = rg_model_forward(c, m, in, NULL, B, E, NULL, &logits))) break;
        for (int b = 0; b < B; b++) score_window(logits->data + (int64_t)b * E * V, V, tok, &w[k0 + b], s);
    }
    rg_derivation_hold(false);
    if (c) rg_ctx_free(c);
    free(in);
    free(w);
    return st;
}

double rg_lm_perplexity(const rg_lm_score *s) { return s->scored > 0 ? exp(s->nll / (double)s->scored) : NAN; }
