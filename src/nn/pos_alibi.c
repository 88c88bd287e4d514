/* pos_alibi.c: ALiBi, attention with linear biases (Press et al. 2022, "Train Short, Test Long: Attention with
 * Linear Biases Enables Input Length Extrapolation", sec. 3): bias[h, i, j] = -m_h (p_i - p_j) added to the
 * scaled scores, no learned parameters. Slopes m_h = 2^(-8h/H), h = 1..H, for H a power of two; otherwise the
 * slopes of the nearest lower power of two followed by every other slope of twice that (the paper's reference
 * code, ofirpress/attention_with_linear_biases, fairseq/models/transformer.py get_slopes; tools/ref_model.py
 * alibi_slopes). The bias is computed in double and rounded to the tensor type, as ref_model.py.
 * Shapes: q_pos [B*T], k_pos [B*S] -> [H, T, S] (shared positions) or [B, H, T, S]. A constant: no backward
 * (docs/derivatives.md row "pos_alibi_bias"). */
#include "nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void rg_alibi_slopes(int n_heads, double *out)
{
    RG_ASSERT(n_heads >= 1, "rg_alibi_slopes: %d heads", n_heads);
    int p2 = 1;
    while (p2 * 2 <= n_heads) p2 *= 2;
    /* slopes of p2 heads: start = 2^(-8/p2), start^(h+1) */
    double start = pow(2.0, -8.0 / p2);
    for (int h = 0; h < p2; h++) out[h] = pow(start, h + 1);
    if (p2 == n_heads) return;
    /* every other slope of 2*p2 heads (all powers of two: no recursion needed): indices 0, 2, 4, ... */
    double start2 = pow(2.0, -8.0 / (2 * p2));
    for (int h = 0; h < n_heads - p2; h++) out[p2 + h] = pow(start2, 2 * h + 1);
}

rg_tensor *rg_pos_alibi_bias(rg_ctx *c, const double *slopes, int n_heads, const rg_pos_summary *s)
{
    int Bq = s->rows_shared ? 1 : s->B, T = s->T, S = s->S;
    const int32_t *q_pos = s->q_pos, *k_pos = s->k_pos;
    int shape4[4] = {Bq, n_heads, T, S};
    rg_tensor *out = Bq == 1 ? rg_tensor_new(c, 3, shape4 + 1) : rg_tensor_new(c, 4, shape4);
    for (int b = 0; b < Bq; b++)
        for (int h = 0; h < n_heads; h++) {
            double m = slopes[h];
            for (int i = 0; i < T; i++) {
                rg_real *o = out->data + (((int64_t)b * n_heads + h) * T + i) * S;
                double qp = q_pos[(int64_t)b * T + i];
                const int32_t *kp = k_pos + (int64_t)b * S;
                for (int j = 0; j < S; j++) o[j] = (rg_real)(-m * (qp - (double)kp[j]));
            }
        }
    return out;
}

/* ------------------------------------------------------------------ the descriptor: the slopes are its state */

typedef struct {
    int n_heads;
    double slopes[];    /* [n_heads] */
} alibi_state;

static rg_status alibi_new(const rg_model_config *cfg, void **state)
{
    alibi_state *st = malloc(sizeof *st + (size_t)cfg->n_heads * sizeof(double));
    if (!st) return rg_error(RG_ERR_NOMEM, "alibi: out of memory for %d slopes", cfg->n_heads);
    st->n_heads = cfg->n_heads;
    rg_alibi_slopes(cfg->n_heads, st->slopes);
    *state = st;
    return RG_OK;
}

static rg_tensor *alibi_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                   rg_tensor *q, rg_tensor *k)
{
    (void)prep, (void)layer, (void)q, (void)k;
    const alibi_state *st = state;
    return rg_pos_alibi_bias(c, st->slopes, st->n_heads, s);
}

/* The report's note: the head slopes, as 1/x (2^(-8h/H) for H a power of two). */
static void alibi_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    int H = c->n_heads, w = snprintf(buf, cap, "alibi: %d heads, slopes", H);
    double m[256];
    rg_alibi_slopes(H <= 256 ? H : 256, m);
    for (int h = 0; h < H && h < 256 && w >= 0 && (size_t)w < cap; h++)
        w += snprintf(buf + w, cap - (size_t)w, "%s1/%g", h ? ", " : " ", 1 / m[h]);
    if (w >= 0 && (size_t)w < cap) snprintf(buf + w, cap - (size_t)w, " (Press et al. 2022: 2^(-8h/H))");
}

const rg_pos_encoding rg_pos_enc_alibi = {
    .name = "alibi", .doc = "ALiBi bias -m_h (p_i - p_j), fixed geometric slopes (Press et al. 2022)",
    .state_new = alibi_new, .score_bias = alibi_score_bias, .state_free = free, .report_note = alibi_note,
    .note_order = 2, .flags = RG_POS_RELATIVE, .plot_colour = "#0072B2", .plot_marker = 15};
