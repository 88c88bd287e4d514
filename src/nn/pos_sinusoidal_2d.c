/* pos_sinusoidal_2d.c: the 2-D sinusoidal encoding of MAE (He et al. 2022, "Masked Autoencoders Are Scalable
 * Vision Learners"; reference code facebookresearch/mae util/pos_embed.py get_2d_sincos_pos_embed, from MoCo v3):
 * half of d_model's channels encode the column, half the row, each half a 1-D sin/cos table of d_model/2 channels
 * with its sines first and cosines second (not interleaved). MAE's meshgrid puts the width first ("here w goes
 * first"), so its first half (named emb_h there) is the COLUMN:
 *   q = d/4, w_k = 10000^(-k/q):  [0,q) sin(c w_k) | [q,2q) cos(c w_k) | [2q,3q) sin(r w_k) | [3q,4q) cos(r w_k)
 * added once at the input as the 1-D sinusoidal encoding is: h = tok * sqrt(d_model) + PE2(r, c) (MAE adds it to
 * patch embeddings unscaled; the scale keeps the one difference from `sinusoidal` the 2-D layout). Angles in double,
 * rounded to the tensor type (tools/ref_grid_bias.py sincos_2d).
 * Shapes: tok [B, T, d_model] (d_model % 4 == 0), ids [B*T] -> h [B, T, d_model]. Composed of rg_scale and a
 * broadcast rg_add of a constant: no backward of its own (docs/derivatives.md rows "scale", "add"). */
#include "pos_grid_bias.h"

#include <math.h>

void rg_sinusoidal_2d_pe(int d_model, int32_t row, int32_t col, double *out)
{
    const int q = d_model / 4;
    for (int k = 0; k < q; k++) {
        double w = pow(10000.0, -(double)k / q);
        out[k] = sin(col * w);
        out[q + k] = cos(col * w);
        out[2 * q + k] = sin(row * w);
        out[3 * q + k] = cos(row * w);
    }
}

rg_tensor *rg_pos_sinusoidal_2d(rg_ctx *c, rg_tensor *tok, const int32_t *row, const int32_t *col, bool rows_shared)
{
    char s[64];
    RG_ASSERT(tok->ndim >= 2 && tok->shape[tok->ndim - 1] % 4 == 0, "pos_sinusoidal_2d: tok %s needs [.., T, d], "
              "d %% 4 == 0", rg_shape_str(tok, s, 64));
    int d = tok->shape[tok->ndim - 1];
    int ndim = rows_shared ? 2 : tok->ndim;
    rg_tensor *pe = rg_tensor_new(c, ndim, tok->shape + tok->ndim - ndim);
    double *v = rg_arena_alloc(&c->arena, (size_t)d * sizeof(double));
    for (int64_t i = 0; i < pe->numel / d; i++) {
        rg_sinusoidal_2d_pe(d, row[i], col[i], v);
        for (int j = 0; j < d; j++) pe->data[i * d + j] = (rg_real)v[j];
    }
    return rg_add(c, rg_scale(c, tok, sqrt((double)d)), pe);
}

/* ------------------------------------------------------------------ the descriptor */

static rg_status sinusoidal_2d_validate(const rg_model_config *cfg)
{
    if (cfg->d_model % 4)
        return rg_error(RG_ERR_ARG, "config: sinusoidal-2d needs d_model %% 4 == 0 (a sin and a cos half for the "
                        "row and for the column), d_model is %d", cfg->d_model);
    return RG_OK;
}

static rg_status sinusoidal_2d_input(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h)
{
    (void)state;
    *h = rg_pos_sinusoidal_2d(c, tok, rg_pos_q_axis(s, RG_AXIS_ROW), rg_pos_q_axis(s, RG_AXIS_COL), s->rows_shared);
    return RG_OK;
}

const rg_pos_encoding rg_pos_enc_sinusoidal_2d = {
    .name = "sinusoidal-2d",
    .doc = "h = tok sqrt(d) + [sin, cos](c w) | [sin, cos](r w), w = 10000^(-4k/d) (MAE get_2d_sincos_pos_embed)",
    .scaled_embedding = true, .validate = sinusoidal_2d_validate, .input = sinusoidal_2d_input,
    .flags = RG_POS_OPT_IN, .plot_colour = "#E69F00", .plot_marker = 5};
