/* pos_rope.c: rotary position embeddings (Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position
 * Embedding", sec. 3.4.2, eq. 34: theta_i = base^(-2i/d)) and their evaluation-time extensions, matching
 * tools/ref_model.py (rope_params, rope_cos_sin, apply_rope).
 *   Pairing: interleaved (2i, 2i+1) (GPT-J, Meta's complex form) or half-split (i, i + d/2) (GPT-NeoX, Hugging
 *   Face rotate_half); (a, b) -> (a cos - b sin, a sin + b cos) with angle (p * pos_mult) * inv_freq[i] computed in
 *   double from the integer position (in bf16 with rg_model_config.rope_bf16_angles, an ablation: bf16_table).
 *   Partial rotary: only channels [0, rotary_dim) of each head rotate.
 *   Extensions (scale s):
 *     pi     Position Interpolation (Chen et al. 2023, eq. 2): p -> p / s (HF "linear").
 *     ntk    NTK-aware (bloc97 2023; HF _compute_dynamic_ntk_parameters with a static factor):
 *            base -> base * s^(d/(d-2)).
 *     yarn   Peng et al. 2023, "YaRN", sec. 3.2-3.4 as HF modeling_rope_utils._compute_yarn_parameters: a linear
 *            ramp over the pairs between floor(dim(beta_fast)) and ceil(dim(beta_slow)), dim(r) = d ln(L / (2 pi
 *            r)) / (2 ln base), blending extrapolated base^(-2i/d) and interpolated base^(-2i/d)/s; attention
 *            factor 0.1 ln s + 1 multiplied into both cos and sin (so q.k is scaled by its square), exactly once.
 *     llama3 HF _compute_llama3_parameters: wavelengths 2 pi / f above L/low_freq_factor divided by s, below
 *            L/high_freq_factor kept, smoothly interpolated in between.
 *     dynamic HF _compute_dynamic_ntk_parameters (dynamic NTK, emozilla 2023): the NTK base recomputed for the
 *            current length n = largest query position + 1: base (s n / L - (s - 1))^(d/(d-2)) when n > L, the
 *            original base at or below L. Nothing is cached between forwards, so a long call never changes a
 *            later short one.
 *   A yarn attention_factor given in the config (rope_attention_factor > 0) is used verbatim.
 * The path of rope_base (HF rope_theta): rg_model_config.rope_base (nn.h; its one default in model.c, its one
 * validation rg_rope_validate here) -> rope_prepare (the descriptor's hook, once per forward) -> rg_rope_table_new
 * -> rg_rope_freqs (the only reader of the base) -> rg_pos_rope (per layer, the table as an argument).
 * Shapes: x [B, T, n_heads*hd] (heads are contiguous hd chunks); the table has one row per token of a row
 * (positions shared by the batch) or per token -> same shape as x. The op takes the table as an argument and the
 * table is immutable arena memory: nothing the backward reads can change between forward and backward.
 * Backward: the transpose of the rotation, i.e. the inverse rotation (angle -p theta_i, times the attention
 * factor) applied to the incoming gradient: (ga, gb) -> (ga cos + gb sin, -ga sin + gb cos); unrotated channels
 * pass the gradient through (docs/derivatives.md row "pos_rope"). */
#include "nn.h"
#include "../tensor/gemm.h"
#include "../tensor/fastmath.h"
#include "../tensor/pool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void rope_backward(rg_tensor *node);
static const rg_op OP_ROPE = {"pos_rope", rope_backward};

static const char *const EXT_NAMES[RG_ROPE_EXT_COUNT] = {"none", "pi", "ntk", "yarn", "llama3", "dynamic"};

const char *rg_rope_ext_name(rg_rope_ext e) { return (unsigned)e < RG_ROPE_EXT_COUNT ? EXT_NAMES[e] : "?"; }

rg_status rg_rope_ext_parse(const char *name, rg_rope_ext *out)
{
    for (int i = 0; i < RG_ROPE_EXT_COUNT; i++)
        if (strcmp(name, EXT_NAMES[i]) == 0) { *out = (rg_rope_ext)i; return RG_OK; }
    /* HF rope_type names */
    if (strcmp(name, "default") == 0) { *out = RG_ROPE_EXT_NONE; return RG_OK; }
    if (strcmp(name, "linear") == 0) { *out = RG_ROPE_EXT_PI; return RG_OK; }
    return rg_error(RG_ERR_ARG, "unknown RoPE extension '%s' (allowed: none or default, pi or linear, ntk, dynamic, "
                    "yarn, llama3)", name);
}

int rg_rope_dim(const rg_model_config *cfg)
{
    int hd = cfg->d_model / cfg->n_heads;
    if (cfg->rotary_dim) return cfg->rotary_dim;
    return cfg->partial_rotary_factor > 0 ? (int)(hd * cfg->partial_rotary_factor) : hd;
}

/* The original (training) length of YaRN / Llama 3: rope_orig_len, or max_len when 0. */
static int orig_len(const rg_model_config *cfg) { return cfg->rope_orig_len ? cfg->rope_orig_len : cfg->max_len; }

rg_status rg_rope_validate(const rg_model_config *c)
{
    int hd = c->d_model / c->n_heads;
    if ((unsigned)c->rope_ext >= RG_ROPE_EXT_COUNT)
        return rg_error(RG_ERR_ARG, "config: unknown RoPE extension %d", c->rope_ext);
    if (!(c->partial_rotary_factor >= 0 && c->partial_rotary_factor <= 1))
        return rg_error(RG_ERR_ARG, "config: partial_rotary_factor %g must be in (0, 1] (0 = unset)",
                        c->partial_rotary_factor);
    int rd = rg_rope_dim(c);
    if (c->rotary_dim && c->partial_rotary_factor > 0 && c->rotary_dim != (int)(hd * c->partial_rotary_factor))
        return rg_error(RG_ERR_ARG, "config: rotary_dim %d and partial_rotary_factor %g (head_dim %d) disagree",
                        c->rotary_dim, c->partial_rotary_factor, hd);
    if (c->rotary_dim < 0 || rd > hd || rd % 2 || rd < 2)
        return rg_error(RG_ERR_ARG, "config: rotary_dim %d must be even, >= 2 and <= head_dim %d (0 = head_dim or "
                        "head_dim * partial_rotary_factor)", rd, hd);
    if (!(c->rope_base > 1)) return rg_error(RG_ERR_ARG, "config: rope_base %g must be > 1", c->rope_base);
    if (!(c->rope_scale > 0)) return rg_error(RG_ERR_ARG, "config: rope_scale %g must be > 0", c->rope_scale);
    if ((c->rope_ext == RG_ROPE_EXT_NTK || c->rope_ext == RG_ROPE_EXT_DYNAMIC) && rd <= 2)
        return rg_error(RG_ERR_ARG, "config: NTK scaling needs rotary_dim > 2 (got %d)", rd);
    if (!(c->rope_attention_factor >= 0) || isinf(c->rope_attention_factor))
        return rg_error(RG_ERR_ARG, "config: rope attention_factor %g must be > 0 (0 = derived)",
                        c->rope_attention_factor);
    if (c->rope_orig_len < 0) return rg_error(RG_ERR_ARG, "config: rope_orig_len %d must be >= 0", c->rope_orig_len);
    if (!(c->llama3_low_freq_factor > 0) || !(c->llama3_high_freq_factor > c->llama3_low_freq_factor))
        return rg_error(RG_ERR_ARG, "config: llama3 factors (low %g, high %g) need 0 < low < high",
                        c->llama3_low_freq_factor, c->llama3_high_freq_factor);
    if (!(c->yarn_beta_fast > 0) || !(c->yarn_beta_slow > 0))
        return rg_error(RG_ERR_ARG, "config: yarn betas (fast %g, slow %g) must be > 0", c->yarn_beta_fast,
                        c->yarn_beta_slow);
    return RG_OK;
}

static void default_inv_freq(int d, double base, double *out)
{
    for (int i = 0; i < d / 2; i++) out[i] = 1.0 / pow(base, (double)(2 * i) / d);
}

/* HF _compute_yarn_parameters: inv_freq blended between interpolation and extrapolation by a linear ramp. */
static void yarn_inv_freq(int d, double base, double s, double L, double beta_fast, double beta_slow, double *out)
{
    double lowf = floor(d * log(L / (beta_fast * 2 * M_PI)) / (2 * log(base)));
    double highf = ceil(d * log(L / (beta_slow * 2 * M_PI)) / (2 * log(base)));
    if (lowf < 0) lowf = 0;
    if (highf > d - 1) highf = d - 1;
    if (lowf == highf) highf += 0.001; /* HF: prevent a singularity */
    for (int i = 0; i < d / 2; i++) {
        double ramp = (i - lowf) / (highf - lowf);
        ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
        double pf = pow(base, (double)(2 * i) / d);
        double extrap = 1.0 - ramp;
        out[i] = 1.0 / (s * pf) * (1.0 - extrap) + 1.0 / pf * extrap;
    }
}

/* HF _compute_llama3_parameters. */
static void llama3_inv_freq(int d, double base, double s, double L, double lff, double hff, double *out)
{
    double low_wl = L / lff, high_wl = L / hff;
    default_inv_freq(d, base, out);
    for (int i = 0; i < d / 2; i++) {
        double f = out[i], wl = 2 * M_PI / f;
        double fl = wl > low_wl ? f / s : f;
        double smooth = (L / wl - lff) / (hff - lff);
        bool medium = !(wl < high_wl) && !(wl > low_wl);
        out[i] = medium ? (1 - smooth) * fl / s + smooth * fl : fl;
    }
}

double rg_rope_dynamic_base(const rg_model_config *cfg, int64_t seq_len)
{
    double L = orig_len(cfg), s = cfg->rope_scale, d = rg_rope_dim(cfg);
    double n = seq_len > L ? (double)seq_len : L;
    return cfg->rope_base * pow(s * n / L - (s - 1), d / (d - 2));
}

void rg_rope_freqs(const rg_model_config *cfg, int64_t seq_len, double *inv_freq, double *pos_mult,
                   double *attn_factor)
{
    int d = rg_rope_dim(cfg);
    double base = cfg->rope_base, s = cfg->rope_scale;
    *pos_mult = 1.0;
    *attn_factor = 1.0;
    switch (cfg->rope_ext) {
    case RG_ROPE_EXT_NONE: default_inv_freq(d, base, inv_freq); break;
    case RG_ROPE_EXT_PI:
        default_inv_freq(d, base, inv_freq);
        *pos_mult = 1.0 / s;
        break;
    case RG_ROPE_EXT_NTK: default_inv_freq(d, base * pow(s, (double)d / (d - 2)), inv_freq); break;
    case RG_ROPE_EXT_DYNAMIC: default_inv_freq(d, rg_rope_dynamic_base(cfg, seq_len), inv_freq); break;
    case RG_ROPE_EXT_YARN:
        yarn_inv_freq(d, base, s, orig_len(cfg), cfg->yarn_beta_fast, cfg->yarn_beta_slow, inv_freq);
        *attn_factor = cfg->rope_attention_factor > 0 ? cfg->rope_attention_factor : s <= 1 ? 1.0 : 0.1 * log(s) + 1.0;
        break;
    case RG_ROPE_EXT_LLAMA3:
        llama3_inv_freq(d, base, s, orig_len(cfg), cfg->llama3_low_freq_factor, cfg->llama3_high_freq_factor,
                        inv_freq);
        break;
    default: RG_FATAL("rg_rope_freqs: unknown extension %d", (int)cfg->rope_ext);
    }
}

/* x rounded to bfloat16 (round to nearest even from float32) and back. */
static float bf16_round(float x)
{
    uint16_t h;
    rg_bf16_from_float(&h, &x, 1);
    return rg_bf16_to_float(h);
}

/* The bf16-angle ablation (rg_model_config.rope_bf16_angles): angle bf16(bf16(p) bf16(theta_i)), cos and sin of
 * it times the attention factor, each rounded to bf16. The product of two bf16 values is exact in float32. */
static void bf16_table(const double *inv, int nf, const int32_t *pos, int n_rows, double mult, double af,
                       rg_real *cs, rg_real *sn)
{
    for (int64_t r = 0; r < n_rows; r++) {
        float pp = bf16_round((float)(mult != 1.0 ? (double)pos[r] * mult : (double)pos[r]));
        for (int i = 0; i < nf; i++) {
            double a = bf16_round(pp * bf16_round((float)inv[i]));
            cs[r * nf + i] = bf16_round((float)(cos(a) * af));
            sn[r * nf + i] = bf16_round((float)(sin(a) * af));
        }
    }
}

rg_rope_table rg_rope_table_new(rg_ctx *c, const rg_model_config *cfg, const int32_t *pos, int n_rows, int64_t seq_len)
{
    int nf = rg_rope_dim(cfg) / 2;
    double *inv = rg_arena_alloc(&c->arena, (size_t)nf * sizeof(double)), mult, af;
    rg_rope_freqs(cfg, seq_len, inv, &mult, &af);
    rg_real *cs = rg_arena_alloc(&c->arena, (size_t)n_rows * nf * 2 * sizeof(rg_real)), *sn = cs + (int64_t)n_rows * nf;
    if (cfg->rope_bf16_angles) {
        bf16_table(inv, nf, pos, n_rows, mult, af, cs, sn);
        return (rg_rope_table){nf, n_rows, cs, sn};
    }
    for (int64_t r = 0; r < n_rows; r++) {
        double pp = mult != 1.0 ? (double)pos[r] * mult : (double)pos[r];
        for (int i = 0; i < nf; i++) {
            double a = pp * inv[i];
            cs[r * nf + i] = (rg_real)(cos(a) * af);
            sn[r * nf + i] = (rg_real)(sin(a) * af);
        }
    }
    return (rg_rope_table){nf, n_rows, cs, sn};
}

/* Rotates (dir = +1) or inverse-rotates (dir = -1, the transpose) the rotary channels of one token's heads and
 * accumulates (acc) or writes the result; unrotated channels are copied / accumulated. */
static inline __attribute__((always_inline)) void rope_token(const rg_real *restrict x, rg_real *restrict o, int H, int hd, int nf, bool half,
                              const rg_real *restrict cs, const rg_real *restrict sn, rg_real sgn, bool acc)
{
    for (int h = 0; h < H; h++) {
        const rg_real *xh = x + (int64_t)h * hd;
        rg_real *oh = o + (int64_t)h * hd;
        int sa = half ? 1 : 2, ob = half ? nf : 1;
        for (int i = 0; i < nf; i++) {
            rg_real a = xh[i * sa], b = xh[i * sa + ob], c = cs[i], s = sgn * sn[i];
            rg_real ra = a * c - b * s, rb = a * s + b * c;
            if (acc) { oh[i * sa] += ra; oh[i * sa + ob] += rb; }
            else { oh[i * sa] = ra; oh[i * sa + ob] = rb; }
        }
        for (int e = 2 * nf; e < hd; e++) oh[e] = acc ? oh[e] + xh[e] : xh[e];
    }
}

/* The rotation (sgn 1, write) or its transpose (sgn -1, accumulate) of tokens [t0, t1) of D channels, table row
 * t % nr. RG_VECTORIZE: the same operations per element in every clone (no FMA contraction under -std=c11). */
RG_VECTORIZE static void rope_rows(const rg_real *restrict x, rg_real *restrict o, int64_t t0, int64_t t1, int D,
                                   int H, int hd, bool half, const rg_rope_table *tab, rg_real sgn, bool acc)
{
    const int nf = tab->n_freq, nr = tab->n_rows;
    for (int64_t t = t0; t < t1; t++) {
        const rg_real *cs = tab->cos + (t % nr) * nf, *sn = tab->sin + (t % nr) * nf;
        /* constant pairing and mode per call site, so the inlined loops specialize */
        if (half && acc) rope_token(x + t * D, o + t * D, H, hd, nf, true, cs, sn, sgn, true);
        else if (half) rope_token(x + t * D, o + t * D, H, hd, nf, true, cs, sn, sgn, false);
        else if (acc) rope_token(x + t * D, o + t * D, H, hd, nf, false, cs, sn, sgn, true);
        else rope_token(x + t * D, o + t * D, H, hd, nf, false, cs, sn, sgn, false);
    }
}

/* rope_rows over the pool (rg_pool_for): tokens are independent, so the split keeps the bits */
typedef struct {
    const rg_real *x;
    rg_real *o;
    int D, H, hd;
    bool half, acc;
    const rg_rope_table *tab;
    rg_real sgn;
} rope_pass;

static void rope_part(void *p, int64_t t0, int64_t t1)
{
    const rope_pass *a = p;
    rope_rows(a->x, a->o, t0, t1, a->D, a->H, a->hd, a->half, a->tab, a->sgn, a->acc);
}

static void rope_run(const rg_real *x, rg_real *o, int64_t n, int D, int H, bool half, const rg_rope_table *tab,
                     rg_real sgn, bool acc)
{
    rope_pass a = {x, o, D, H, D / H, half, acc, tab, sgn};
    rg_pool_for(n, rg_pool_part_min(D), 1, rope_part, &a);
}

rg_tensor *rg_pos_rope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, const rg_rope_table *tab)
{
    char s[64];
    int D = x->shape[x->ndim - 1];
    int64_t n = x->numel / D;
    RG_ASSERT(D % n_heads == 0 && 2 * tab->n_freq <= D / n_heads && tab->n_rows >= 1 && n % tab->n_rows == 0,
              "pos_rope: x %s with %d heads cannot rotate %d channels per head with a table of %d rows",
              rg_shape_str(x, s, 64), n_heads, 2 * tab->n_freq, tab->n_rows);
    rg_tensor *out = rg_node_new(c, &OP_ROPE, x->ndim, x->shape, 1, &x);
    rope_run(x->data, out->data, n, D, n_heads, half, tab, 1, false);
    if (out->op) {
        rg_rope_table *saved = rg_arena_alloc(&c->arena, sizeof *saved);
        *saved = *tab;
        out->saved = saved;
        out->iarg[0] = n_heads;
        out->iarg[1] = half;
    }
    return out;
}

/* dx += the transpose of the forward rotation applied to g: the inverse rotation, times the attention factor. */
static void rope_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    const rg_rope_table *tab = node->saved;
    int H = (int)node->iarg[0], D = x->shape[x->ndim - 1];
    bool half = node->iarg[1];
    int64_t n = x->numel / D;
    rg_real *dx = rg_grad_of(x);
    rope_run(node->grad, dx, n, D, H, half, tab, -1, true); /* inverse rotation: the sine changes sign */
}

/* ------------------------------------------------------------------ the descriptors (rope, rope-half) */

typedef struct {
    rg_rope_table tab;
    int n_heads;
    bool half;
} rope_prep;

/* The table of this forward's query positions (one row per token of a row when the rows share positions), at
 * the current length (largest query position + 1, read by dynamic NTK). Serves rope and rope-half. */
static rope_prep *rope_prepare(rg_ctx *c, const rg_model_config *cfg, const rg_pos_summary *s, bool half)
{
    rope_prep *p = rg_arena_alloc(&c->arena, sizeof *p);
    p->tab = rg_rope_table_new(c, cfg, s->q_pos, s->rows_shared ? s->T : s->B * s->T, (int64_t)s->q_max + 1);
    p->n_heads = cfg->n_heads;
    p->half = half;
    return p;
}

static void *prepare_interleaved(rg_ctx *c, void *state, const rg_model_config *cfg, const rg_pos_summary *s)
{
    (void)state;
    return rope_prepare(c, cfg, s, false);
}

static void *prepare_half(rg_ctx *c, void *state, const rg_model_config *cfg, const rg_pos_summary *s)
{
    (void)state;
    return rope_prepare(c, cfg, s, true);
}

static void rope_rotate_qk(rg_ctx *c, const void *prep, rg_tensor **q, rg_tensor **k)
{
    const rope_prep *p = prep;
    *q = rg_pos_rope(c, *q, p->n_heads, p->half, &p->tab);
    *k = rg_pos_rope(c, *k, p->n_heads, p->half, &p->tab);
}

/* Their settings are the model config's own RoPE fields (rope_base, rotary_dim, rope_scaling...: HF keeps them in
 * the model config too, and M-RoPE and the evaluation-time extensions read them). */
/* The report's note, one line for both layouts: the base (the config's, unless it is the theta500k variant's),
 * the rotary dimension. */
static void rope_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    snprintf(buf, cap, "rope: rope_theta %g (rows θ=500k: 500000), rotary dim %d of head_dim %d; rope-half rotates "
             "half of it", c->rope_base == 500000 ? 10000.0 : c->rope_base, rg_rope_dim(c), c->d_model / c->n_heads);
}

const rg_pos_encoding rg_pos_enc_rope = {
    .name = "rope", .doc = "RoPE, interleaved pairs (2i, 2i+1) rotated by p theta_i (Su et al. 2021)",
    .rope_layout = "interleaved", .prepare = prepare_interleaved, .rotate_qk = rope_rotate_qk,
    .flags = RG_POS_ROTARY | RG_POS_RELATIVE, .report_note = rope_note, .note_order = 3, .plot_colour = "#D55E00",
    .plot_marker = 6};
const rg_pos_encoding rg_pos_enc_rope_half = {
    .name = "rope-half", .doc = "RoPE, half-split pairs (i, i + d/2) as GPT-NeoX / HF rotate_half (Su et al. 2021)",
    .rope_layout = "half", .prepare = prepare_half, .rotate_qk = rope_rotate_qk,
    .flags = RG_POS_ROTARY | RG_POS_RELATIVE,
    .report_note = rope_note, .note_order = 3, .plot_colour = "#CC79A7", .plot_marker = 4};
