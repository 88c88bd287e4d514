/* pos_sinusoidal.c: the absolute sinusoidal encoding (Vaswani et al. 2017, "Attention Is All You Need", sec. 3.4
 * (embeddings scaled by sqrt(d_model)) and 3.5: PE(p, 2i) = sin(p / 10000^(2i/d_model)), PE(p, 2i+1) = cos(same)),
 * added once at the input: h = tok * sqrt(d_model) + PE(p). Matches tools/ref_model.py sinusoidal_table (angles
 * p / 10000^(2i/d) in double, then rounded to the tensor type).
 * Shapes: tok [B, T, d_model], positions [B*T] -> h [B, T, d_model]. Composed of existing ops: rg_scale and a
 * broadcast rg_add of the constant PE ([T, d] when the rows share positions, else [B, T, d]); no backward of its
 * own (docs/derivatives.md rows "scale" and "add": dtok = sqrt(d_model) g). */
#include "nn.h"

#include <math.h>
#include <stdio.h>

void rg_sinusoidal_pe(int d_model, int32_t p, double *out)
{
    for (int i = 0; i + 1 < d_model; i += 2) {
        double a = (double)p / pow(10000.0, (double)i / d_model);
        out[i] = sin(a);
        out[i + 1] = cos(a);
    }
    if (d_model % 2) out[d_model - 1] = sin((double)p / pow(10000.0, (double)(d_model - 1) / d_model));
}

rg_tensor *rg_pos_sinusoidal(rg_ctx *c, rg_tensor *tok, const int32_t *pos, bool rows_shared)
{
    char s[64];
    RG_ASSERT(tok->ndim >= 2, "pos_sinusoidal: tok %s needs [.., T, d]", rg_shape_str(tok, s, 64));
    int d = tok->shape[tok->ndim - 1];
    /* the constant: the last two dims of tok when the rows share positions, else all of them */
    int ndim = rows_shared ? 2 : tok->ndim;
    rg_tensor *pe = rg_tensor_new(c, ndim, tok->shape + tok->ndim - ndim);
    double *row = rg_arena_alloc(&c->arena, (size_t)d * sizeof(double));
    for (int64_t i = 0; i < pe->numel / d; i++) {
        rg_sinusoidal_pe(d, pos[i], row);
        for (int j = 0; j < d; j++) pe->data[i * d + j] = (rg_real)row[j];
    }
    return rg_add(c, rg_scale(c, tok, sqrt((double)d)), pe);
}

/* ------------------------------------------------------------------ the descriptor */

static rg_status sinusoidal_input(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h)
{
    (void)state;
    *h = rg_pos_sinusoidal(c, tok, s->q_pos, s->rows_shared);
    return RG_OK;
}

/* The report's note (no setting: the base is fixed). */
static void sinusoidal_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    snprintf(buf, cap, "sinusoidal: absolute, base 10000 (Vaswani et al. 2017)");
}

const rg_pos_encoding rg_pos_enc_sinusoidal = {
    .name = "sinusoidal", .doc = "h = tok sqrt(d) + PE(p), PE = sin/cos(p / 10000^(2i/d)) (Vaswani et al. 2017)",
    .scaled_embedding = true, .input = sinusoidal_input, .report_note = sinusoidal_note, .note_order = 6,
    .plot_colour = "#E69F00", .plot_marker = 5};
