/* pos_axial.c: 2-D axial rotary embeddings for vision transformers (Heo et al. 2024, "Rotary Position Embedding
 * for Vision Transformer", sec. 3.2 RoPE-Axial; as in the reference code naver-ai/rope-vit, compute_axial_cis:
 * frequencies theta_i = base^(-4i/hd), i < hd/4, the x (column) angles on the first hd/4 complex pairs and the y
 * (row) angles on the last hd/4, each complex pair being two adjacent channels (view_as_complex)).
 * In each head of x [B, N, n_heads*hd] (hd % 4 == 0), pair i < hd/4 = channels (2i, 2i+1) rotates by
 * col * theta_i and pair hd/4 + i = channels (hd/2 + 2i, hd/2 + 2i + 1) by row * theta_i:
 * (a, b) -> (a cos - b sin, a sin + b cos). So q.k after the rotation depends on the patches only through
 * (col_q - col_k, row_q - row_k). Angles are computed in double per patch into the step arena.
 * Backward: the inverse rotation (angle -p theta) of the incoming gradient (docs/derivatives.md row
 * "pos_axial_rope"). The model encodings rope-2d and rope-2d-pixtral (below) build their tables from the config's 1-D
 * tables and rotate with rg_pos_rope. */
#include "nn.h"

#include <math.h>
#include <string.h>

static void axial_backward(rg_tensor *node);
static const rg_op OP_AXIAL = {"pos_axial_rope", axial_backward};

/* Rotates the pairs of each head of one patch with cs/sn [hd/2] (dir -1: the inverse rotation, accumulated). */
static inline void axial_patch(const rg_real *restrict x, rg_real *restrict o, int H, int hd, const rg_real *cs,
                               const rg_real *sn, bool inverse)
{
    int np = hd / 2;
    for (int h = 0; h < H; h++) {
        const rg_real *xh = x + (int64_t)h * hd;
        rg_real *oh = o + (int64_t)h * hd;
        for (int i = 0; i < np; i++) {
            rg_real a = xh[2 * i], b = xh[2 * i + 1], c = cs[i], s = sn[i];
            if (inverse) {
                oh[2 * i] += a * c + b * s;
                oh[2 * i + 1] += -a * s + b * c;
            } else {
                oh[2 * i] = a * c - b * s;
                oh[2 * i + 1] = a * s + b * c;
            }
        }
    }
}

rg_tensor *rg_pos_axial_rope(rg_ctx *c, rg_tensor *x, int n_heads, double base, const int32_t *col,
                             const int32_t *row)
{
    char s[64];
    int D = x->shape[x->ndim - 1];
    RG_ASSERT(D % n_heads == 0 && (D / n_heads) % 4 == 0, "pos_axial_rope: x %s with %d heads needs head_dim %% 4 "
              "== 0", rg_shape_str(x, s, 64), n_heads);
    int hd = D / n_heads, nq = hd / 4, np = hd / 2;
    int64_t n = x->numel / D;
    rg_tensor *out = rg_node_new(c, &OP_AXIAL, x->ndim, x->shape, 1, &x);
    rg_real *cs = rg_arena_alloc(&c->arena, (size_t)n * np * 2 * sizeof(rg_real)), *sn = cs + n * np;
    double *theta = rg_arena_alloc(&c->arena, (size_t)nq * sizeof(double));
    for (int i = 0; i < nq; i++) theta[i] = 1.0 / pow(base, (double)(4 * i) / hd);
    for (int64_t t = 0; t < n; t++) {
        rg_real *ct = cs + t * np, *st = sn + t * np;
        for (int i = 0; i < nq; i++) {
            double ax = (double)col[t] * theta[i], ay = (double)row[t] * theta[i];
            ct[i] = (rg_real)cos(ax);
            st[i] = (rg_real)sin(ax);
            ct[nq + i] = (rg_real)cos(ay);
            st[nq + i] = (rg_real)sin(ay);
        }
        axial_patch(x->data + t * D, out->data + t * D, n_heads, hd, ct, st, false);
    }
    out->saved = cs;
    out->iarg[0] = n_heads;
    return out;
}

static void axial_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    int H = (int)node->iarg[0], D = x->shape[x->ndim - 1], hd = D / H, np = hd / 2;
    int64_t n = x->numel / D;
    const rg_real *cs = node->saved, *sn = cs + n * np;
    rg_real *dx = rg_grad_of(x);
    for (int64_t t = 0; t < n; t++)
        axial_patch(node->grad + t * D, dx + t * D, H, hd, cs + t * np, sn + t * np, true);
}

/* ------------------------------------------------------------------ the model encodings rope-2d, rope-2d-pixtral
 * Axial 2-D RoPE as an encoding of the model: q and k of every token rotated by its row and column axis ids
 * (pos.h "position axes"; without axes both are the 1-D position). Two layouts of the rotary pairs, both built
 * from the 1-D frequencies inv_freq[j] (j < n = rotary_dim / 2) of the config (rg_rope_freqs: rope_base = HF
 * rope_theta, rotary_dim, any rope_scaling extension and its attention factor), n a multiple of 2:
 *   rope-2d          interleaved pairs (2i, 2i+1); pair i < n/2 rotates by col * inv_freq[2i], pair n/2 + i by
 *                    row * inv_freq[2i], i.e. both axes take the frequencies base^(-4i/d). Heo et al. 2024
 *                    RoPE-Axial as naver-ai/rope-vit compute_axial_cis (x = column first) and HF / torchtune
 *                    Llama 4 vision (Llama4VisionRotaryEmbedding: freqs_x then freqs_y, complex pairs); with
 *                    rotary_dim = head_dim and no scaling it is rg_pos_axial_rope above, bit for bit.
 *   rope-2d-pixtral  half-split pairs (i, i + n) (HF rotate_half); pair i < n/2 rotates by row * inv_freq[2i], pair
 *                    n/2 + i by col * inv_freq[2i + 1]: row and column alternate through the 1-D frequency ladder.
 *                    HF PixtralRotaryEmbedding (freqs_h = outer(h, freqs[::2]), freqs_w = outer(w, freqs[1::2]),
 *                    cat, doubled for rotate_half) and mistral-inference precompute_freqs_cis_2d.
 * Both rotate with rg_pos_rope (the table as its argument), so the backward is its inverse rotation. The table is
 * merged column by column from the two 1-D tables (rg_rope_table_new) of the row and column ids, at the length
 * largest row or column id + 1 (read by dynamic NTK only). With a KV cache the table is of the new tokens; the
 * cache keeps rotated keys. */

typedef struct {
    rg_rope_table tab;
    int n_heads;
    bool half;
} axial_prep;

static rg_status axial_validate(const rg_model_config *cfg)
{
    int rd = rg_rope_dim(cfg);
    if (rd % 4)
        return rg_error(RG_ERR_ARG, "config: %s needs rotary_dim %% 4 == 0 (pairs split between row and column; "
                        "rotary_dim %d)", rg_pos_name(cfg->pos), rd);
    return RG_OK;
}

/* The merged table: pair j of row r takes column src_col[j] of the table of axis src_axis[j]. */
static void *axial_prepare(rg_ctx *c, const rg_model_config *cfg, const rg_pos_summary *s, bool pixtral)
{
    axial_prep *p = rg_arena_alloc(&c->arena, sizeof *p);
    int nf = rg_rope_dim(cfg) / 2, nq = nf / 2, nr = s->rows_shared ? s->T : s->B * s->T;
    int32_t top = s->q_axis_max[RG_AXIS_ROW] > s->q_axis_max[RG_AXIS_COL] ? s->q_axis_max[RG_AXIS_ROW]
                                                                            : s->q_axis_max[RG_AXIS_COL];
    rg_rope_table row = rg_rope_table_new(c, cfg, rg_pos_q_axis(s, RG_AXIS_ROW), nr, (int64_t)top + 1);
    rg_rope_table col = rg_rope_table_new(c, cfg, rg_pos_q_axis(s, RG_AXIS_COL), nr, (int64_t)top + 1);
    const rg_rope_table *first = pixtral ? &row : &col, *second = pixtral ? &col : &row;
    int off2 = pixtral ? 1 : 0; /* pixtral: the second axis takes the odd frequencies */
    rg_real *cs = rg_arena_alloc(&c->arena, (size_t)nr * nf * 2 * sizeof(rg_real)), *sn = cs + (int64_t)nr * nf;
    for (int64_t r = 0; r < nr; r++)
        for (int i = 0; i < nq; i++) {
            cs[r * nf + i] = first->cos[r * nf + 2 * i];
            sn[r * nf + i] = first->sin[r * nf + 2 * i];
            cs[r * nf + nq + i] = second->cos[r * nf + 2 * i + off2];
            sn[r * nf + nq + i] = second->sin[r * nf + 2 * i + off2];
        }
    p->tab = (rg_rope_table){nf, nr, cs, sn};
    p->n_heads = cfg->n_heads;
    p->half = pixtral;
    return p;
}

static void *prepare_2d(rg_ctx *c, void *state, const rg_model_config *cfg, const rg_pos_summary *s)
{
    (void)state;
    return axial_prepare(c, cfg, s, false);
}

static void *prepare_pixtral(rg_ctx *c, void *state, const rg_model_config *cfg, const rg_pos_summary *s)
{
    (void)state;
    return axial_prepare(c, cfg, s, true);
}

static void axial_rotate_qk(rg_ctx *c, const void *prep, rg_tensor **q, rg_tensor **k)
{
    const axial_prep *p = prep;
    *q = rg_pos_rope(c, *q, p->n_heads, p->half, &p->tab);
    *k = rg_pos_rope(c, *k, p->n_heads, p->half, &p->tab);
}

/* Their settings are the config's RoPE fields, as 1-D RoPE's (rope_base is HF's rope_theta, what Llama 4 and
 * Pixtral read; rope-vit's base 100 is --rope-base 100). */
const rg_pos_encoding rg_pos_enc_rope_2d = {
    .name = "rope-2d", .doc = "axial 2-D RoPE, interleaved pairs: first half by column, second by row, "
    "base^(-4i/d) each (Heo et al. 2024 RoPE-Axial; rope-vit, Llama 4 vision)",
    .rope_layout = "interleaved", .validate = axial_validate, .prepare = prepare_2d, .rotate_qk = axial_rotate_qk,
    .flags = RG_POS_OPT_IN | RG_POS_RELATIVE, .plot_colour = "#17BECF", .plot_marker = 14};
const rg_pos_encoding rg_pos_enc_rope_2d_pixtral = {
    .name = "rope-2d-pixtral", .doc = "2-D RoPE of HF Pixtral, half-split pairs: first half by row on the even "
    "frequencies, second by column on the odd ones",
    .rope_layout = "half", .validate = axial_validate, .prepare = prepare_pixtral, .rotate_qk = axial_rotate_qk,
    .flags = RG_POS_OPT_IN | RG_POS_RELATIVE, .plot_colour = "#E31A1C", .plot_marker = 1};
