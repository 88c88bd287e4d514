/* pos_rope.c: rotary position embeddings (Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position
 * Embedding", sec. 3.4.2, eq. 34: theta_i = base^(-2i/d)) and their evaluation-time extensions, matching
 * tools/ref_model.py (rope_params, rope_cos_sin, apply_rope).
 *   Pairing: interleaved (2i, 2i+1) (GPT-J, Meta's complex form) or half-split (i, i + d/2) (GPT-NeoX, Hugging
 *   Face rotate_half); (a, b) -> (a cos - b sin, a sin + b cos) with angle (p * pos_mult) * inv_freq[i] computed in
 *   double from the integer position. Partial rotary: only channels [0, rotary_dim) of each head rotate.
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
 * Shapes: x [B, T, n_heads*hd] (heads are contiguous hd chunks), positions [B*T] -> same shape as x.
 * Tables: cos/sin of every position 0..n_pos-1 (rg_rope_cache), rebuilt when the config changes and extended
 * when a larger position is first asked for; negative positions use cos(-a) = cos a, sin(-a) = -sin a (exact: the
 * angle of -p is exactly minus the angle of p).
 * Backward: the transpose of the rotation, i.e. the inverse rotation (angle -p theta_i, times the attention
 * factor) applied to the incoming gradient: (ga, gb) -> (ga cos + gb sin, -ga sin + gb cos); unrotated channels
 * pass the gradient through (docs/derivatives.md row "pos_rope"). */
#include "pos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void rope_backward(rg_tensor *node);
static const rg_op OP_ROPE = {"pos_rope", rope_backward};

rg_rope_config rg_rope_config_default(int rotary_dim, int orig_len)
{
    rg_rope_config c = {rotary_dim, 10000.0, RG_ROPE_EXT_NONE, 1.0, orig_len, 1.0, 4.0, 32.0, 1.0};
    return c;
}

static void default_inv_freq(int d, double base, double *out)
{
    for (int i = 0; i < d / 2; i++) out[i] = 1.0 / pow(base, (double)(2 * i) / d);
}

void rg_rope_params(const rg_rope_config *cfg, double *inv_freq, double *pos_mult, double *attn_factor)
{
    int d = cfg->rotary_dim, nf = d / 2;
    double base = cfg->base, s = cfg->scale;
    *pos_mult = 1.0;
    *attn_factor = 1.0;
    switch (cfg->ext) {
    case RG_ROPE_EXT_NONE:
        default_inv_freq(d, base, inv_freq);
        break;
    case RG_ROPE_EXT_PI:
        default_inv_freq(d, base, inv_freq);
        *pos_mult = 1.0 / s;
        break;
    case RG_ROPE_EXT_NTK:
        default_inv_freq(d, base * pow(s, (double)d / (d - 2)), inv_freq);
        break;
    case RG_ROPE_EXT_YARN: {
        double L = cfg->orig_len;
        double lowf = floor(d * log(L / (cfg->beta_fast * 2 * M_PI)) / (2 * log(base)));
        double highf = ceil(d * log(L / (cfg->beta_slow * 2 * M_PI)) / (2 * log(base)));
        if (lowf < 0) lowf = 0;
        if (highf > d - 1) highf = d - 1;
        if (lowf == highf) highf += 0.001; /* HF: prevent a singularity */
        for (int i = 0; i < nf; i++) {
            double ramp = (i - lowf) / (highf - lowf);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            double pf = pow(base, (double)(2 * i) / d);
            double extrap = 1.0 - ramp;
            inv_freq[i] = 1.0 / (s * pf) * (1.0 - extrap) + 1.0 / pf * extrap;
        }
        *attn_factor = s <= 1 ? 1.0 : 0.1 * log(s) + 1.0;
        break;
    }
    case RG_ROPE_EXT_LLAMA3: {
        double L = cfg->orig_len, lff = cfg->low_freq_factor, hff = cfg->high_freq_factor;
        double low_wl = L / lff, high_wl = L / hff;
        default_inv_freq(d, base, inv_freq);
        for (int i = 0; i < nf; i++) {
            double f = inv_freq[i], wl = 2 * M_PI / f;
            double fl = wl > low_wl ? f / s : f;
            double smooth = (L / wl - lff) / (hff - lff);
            bool medium = !(wl < high_wl) && !(wl > low_wl);
            inv_freq[i] = medium ? (1 - smooth) * fl / s + smooth * fl : fl;
        }
        break;
    }
    default:
        RG_FATAL("rg_rope_params: unknown extension %d", (int)cfg->ext);
    }
}

void rg_rope_cache_init(rg_rope_cache *rc) { memset(rc, 0, sizeof *rc); }

void rg_rope_cache_free(rg_rope_cache *rc)
{
    free(rc->inv_freq);
    free(rc->cos);
    free(rc->sin);
    unsigned gen = rc->generation;
    memset(rc, 0, sizeof *rc);
    rc->generation = gen + 1;
}

static bool config_equal(const rg_rope_config *a, const rg_rope_config *b)
{
    if (a->rotary_dim != b->rotary_dim || a->base != b->base || a->ext != b->ext) return false;
    switch (a->ext) {
    case RG_ROPE_EXT_NONE: return true;
    case RG_ROPE_EXT_PI:
    case RG_ROPE_EXT_NTK: return a->scale == b->scale;
    case RG_ROPE_EXT_YARN:
        return a->scale == b->scale && a->orig_len == b->orig_len && a->beta_fast == b->beta_fast &&
               a->beta_slow == b->beta_slow;
    default:
        return a->scale == b->scale && a->orig_len == b->orig_len && a->low_freq_factor == b->low_freq_factor &&
               a->high_freq_factor == b->high_freq_factor;
    }
}

static rg_status check_config(const rg_rope_config *c)
{
    if (c->rotary_dim < 2 || c->rotary_dim % 2)
        return rg_error(RG_ERR_ARG, "RoPE: rotary_dim %d must be even and >= 2", c->rotary_dim);
    if (!(c->base > 1)) return rg_error(RG_ERR_ARG, "RoPE: base %g must be > 1", c->base);
    if ((unsigned)c->ext >= RG_ROPE_EXT_COUNT) return rg_error(RG_ERR_ARG, "RoPE: unknown extension %d", c->ext);
    if (c->ext != RG_ROPE_EXT_NONE && !(c->scale > 0))
        return rg_error(RG_ERR_ARG, "RoPE %s: scale %g must be > 0", rg_rope_ext_name(c->ext), c->scale);
    if (c->ext == RG_ROPE_EXT_NTK && c->rotary_dim < 4)
        return rg_error(RG_ERR_ARG, "RoPE ntk: rotary_dim %d must be >= 4", c->rotary_dim);
    if ((c->ext == RG_ROPE_EXT_YARN || c->ext == RG_ROPE_EXT_LLAMA3) && c->orig_len < 1)
        return rg_error(RG_ERR_ARG, "RoPE %s: original length %d must be >= 1", rg_rope_ext_name(c->ext),
                        c->orig_len);
    if (c->ext == RG_ROPE_EXT_LLAMA3 && !(c->high_freq_factor > c->low_freq_factor && c->low_freq_factor > 0))
        return rg_error(RG_ERR_ARG, "RoPE llama3: need 0 < low_freq_factor %g < high_freq_factor %g",
                        c->low_freq_factor, c->high_freq_factor);
    if (c->ext == RG_ROPE_EXT_YARN && !(c->beta_fast > 0 && c->beta_slow > 0))
        return rg_error(RG_ERR_ARG, "RoPE yarn: betas %g, %g must be > 0", c->beta_fast, c->beta_slow);
    return RG_OK;
}

rg_status rg_rope_cache_ensure(rg_rope_cache *rc, const rg_rope_config *cfg, int max_abs_pos)
{
    if (rc->n_freq == 0 || !config_equal(&rc->cfg, cfg)) {
        rg_status st = check_config(cfg);
        if (st) return st;
        rg_rope_config keep = *cfg; /* cfg may point into rc */
        double *inv = realloc(rc->inv_freq, (size_t)(keep.rotary_dim / 2) * sizeof(double));
        if (!inv) return rg_error(RG_ERR_NOMEM, "out of memory for RoPE frequencies");
        rc->inv_freq = inv;
        rc->cfg = keep;
        rc->n_freq = keep.rotary_dim / 2;
        rc->n_pos = 0; /* every row is recomputed */
        rc->generation++;
        rg_rope_params(&rc->cfg, rc->inv_freq, &rc->pos_mult, &rc->attn_factor);
    }
    RG_ASSERT(max_abs_pos >= 0 && max_abs_pos < INT32_MAX, "RoPE: position %d", max_abs_pos);
    if (max_abs_pos < rc->n_pos) return RG_OK;
    int64_t want = (int64_t)max_abs_pos + 1, grown = 2 * (int64_t)rc->n_pos;
    if (want < grown) want = grown;
    if (want < 256) want = 256;
    int nf = rc->n_freq;
    rg_real *cs = realloc(rc->cos, (size_t)want * nf * sizeof(rg_real));
    if (!cs) return rg_error(RG_ERR_NOMEM, "out of memory for RoPE tables of %lld positions", (long long)want);
    rc->cos = cs;
    rg_real *sn = realloc(rc->sin, (size_t)want * nf * sizeof(rg_real));
    if (!sn) return rg_error(RG_ERR_NOMEM, "out of memory for RoPE tables of %lld positions", (long long)want);
    rc->sin = sn;
    double mult = rc->pos_mult, af = rc->attn_factor;
    for (int64_t p = rc->n_pos; p < want; p++) {
        double pp = mult != 1.0 ? (double)p * mult : (double)p;
        for (int i = 0; i < nf; i++) {
            double a = pp * rc->inv_freq[i];
            rc->cos[p * nf + i] = (rg_real)(cos(a) * af);
            rc->sin[p * nf + i] = (rg_real)(sin(a) * af);
        }
    }
    rc->n_pos = (int)want;
    return RG_OK;
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

rg_tensor *rg_pos_rope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, rg_rope_cache *rc, const int32_t *pos)
{
    char s[64];
    RG_ASSERT(rc->n_freq > 0, "pos_rope: the RoPE cache has no config (call rg_rope_cache_ensure first)");
    int D = x->shape[x->ndim - 1];
    RG_ASSERT(D % n_heads == 0 && rc->cfg.rotary_dim <= D / n_heads,
              "pos_rope: x %s with %d heads cannot rotate %d channels per head", rg_shape_str(x, s, 64), n_heads,
              rc->cfg.rotary_dim);
    int hd = D / n_heads, nf = rc->n_freq;
    int64_t n = x->numel / D;
    int max_abs = 0;
    for (int64_t t = 0; t < n; t++) {
        RG_ASSERT(pos[t] != INT32_MIN, "pos_rope: position %d", pos[t]);
        int a = pos[t] < 0 ? -pos[t] : pos[t];
        if (a > max_abs) max_abs = a;
    }
    rg_status st = rg_rope_cache_ensure(rc, &rc->cfg, max_abs);
    RG_ASSERT(st == RG_OK, "pos_rope: %s", rg_last_error());
    rg_tensor *out = rg_node_new(c, &OP_ROPE, x->ndim, x->shape, 1, &x);
    for (int64_t t = 0; t < n; t++) {
        int p = pos[t] < 0 ? -pos[t] : pos[t];
        const rg_real *cs = rc->cos + (int64_t)p * nf, *sn = rc->sin + (int64_t)p * nf;
        rg_real sgn = pos[t] < 0 ? -1 : 1;
        /* constant pairing and mode per call site, so the inlined loops specialize */
        if (half) rope_token(x->data + t * D, out->data + t * D, n_heads, hd, nf, true, cs, sn, sgn, false);
        else rope_token(x->data + t * D, out->data + t * D, n_heads, hd, nf, false, cs, sn, sgn, false);
    }
    if (out->op) {
        int32_t *saved = rg_arena_alloc(&c->arena, (size_t)n * sizeof(int32_t));
        memcpy(saved, pos, (size_t)n * sizeof(int32_t));
        out->saved = saved;
        out->saved2 = rc;
        out->iarg[0] = n_heads;
        out->iarg[1] = half;
        out->iarg[2] = rc->generation;
    }
    return out;
}

/* dx += R(-p theta)^T-style inverse rotation of g (the transpose of the forward rotation). */
static void rope_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    const rg_rope_cache *rc = node->saved2;
    RG_ASSERT((unsigned)node->iarg[2] == rc->generation,
              "pos_rope backward: the RoPE tables were rebuilt (config changed) between forward and backward");
    const int32_t *pos = node->saved;
    int H = (int)node->iarg[0], D = x->shape[x->ndim - 1], hd = D / H, nf = rc->n_freq;
    bool half = node->iarg[1];
    int64_t n = x->numel / D;
    rg_real *dx = rg_grad_of(x);
    for (int64_t t = 0; t < n; t++) {
        int p = pos[t] < 0 ? -pos[t] : pos[t];
        /* inverse rotation: the sine changes sign */
        const rg_real *cs = rc->cos + (int64_t)p * nf, *sn = rc->sin + (int64_t)p * nf;
        rg_real sgn = pos[t] < 0 ? 1 : -1;
        if (half) rope_token(node->grad + t * D, dx + t * D, H, hd, nf, true, cs, sn, sgn, true);
        else rope_token(node->grad + t * D, dx + t * D, H, hd, nf, false, cs, sn, sgn, true);
    }
}
