/* pos_mrope.c: multimodal rotary position embeddings, M-RoPE (Wang et al. 2024, "Qwen2-VL: Enhancing
 * Vision-Language Model's Perception of the World at Any Resolution", sec. 2.1 "Multimodal Rotary Position
 * Embedding"; as Hugging Face modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb).
 *   Each token has three position ids (temporal, height, width). The rotary pairs are split into three contiguous
 *   sections by mrope_section = [s0, s1, s2] (Qwen2-VL: [16, 24, 24] of the 64 pairs of head_dim 128); pair i
 *   rotates by angle pos_axis(i) * inv_freq[i], where inv_freq[i] is the frequency of pair i in the whole rotary dim
 *   (HF builds cos/sin of all three ids over the full dim, splits the doubled channel list by mrope_section * 2 and
 *   takes chunk k from axis k % 3, i.e. channel i and i + d/2 both from the axis of pair i).
 *   Pairing: half-split (i, i + d/2) with (a, b) -> (a cos - b sin, a sin + b cos) is q*cos + rotate_half(q)*sin of
 *   HF; interleaved (2i, 2i+1) is the same rotation on adjacent channels (as rg_pos_rope). Text tokens carry equal ids
 *   on the three axes, and then M-RoPE is exactly 1-D RoPE: the same table entries and the same arithmetic.
 * Shapes: x [B, T, n_heads*hd], pos [3, B*T] -> same shape as x. The cos/sin tables are rg_rope_cache's (so every
 * RoPE extension of pos_rope.c applies per axis); negative positions use the symmetry as there.
 * Backward: the transpose of each pair's rotation, i.e. the inverse rotation by the same axis's angle applied to the
 * incoming gradient: (ga, gb) -> (ga cos + gb sin, -ga sin + gb cos); unrotated channels pass the gradient through
 * (docs/encodings.md row "pos_mrope"). */
#include "pos_ext.h"

#include <string.h>

static void mrope_backward(rg_tensor *node);
static const rg_op OP_MROPE = {"pos_mrope", mrope_backward};

rg_status rg_mrope_check_section(const int mrope_section[RG_MROPE_AXES], int rotary_dim)
{
    int64_t sum = 0;
    for (int a = 0; a < RG_MROPE_AXES; a++) {
        if (mrope_section[a] < 0)
            return rg_error(RG_ERR_ARG, "M-RoPE: mrope_section [%d, %d, %d] has a negative entry", mrope_section[0],
                            mrope_section[1], mrope_section[2]);
        sum += mrope_section[a];
    }
    if (rotary_dim < 2 || rotary_dim % 2 || sum != rotary_dim / 2)
        return rg_error(RG_ERR_ARG, "M-RoPE: mrope_section [%d, %d, %d] must sum to rotary_dim / 2 = %d pairs (sum %lld)",
                        mrope_section[0], mrope_section[1], mrope_section[2], rotary_dim / 2, (long long)sum);
    return RG_OK;
}

void rg_mrope_text_positions(const int32_t *pos, int64_t n, int32_t *out)
{
    for (int a = 0; a < RG_MROPE_AXES; a++) memcpy(out + a * n, pos, (size_t)n * sizeof(int32_t));
}

/* The table rows of one token: cos/sin of each axis's |position| and the sign of the sine (negative positions, and
 * -1 for the inverse rotation). */
typedef struct {
    const rg_real *cs[RG_MROPE_AXES], *sn[RG_MROPE_AXES];
    rg_real sgn[RG_MROPE_AXES];
} token_rows;

static token_rows rows_of(const rg_rope_cache *rc, const int32_t *pos, int64_t n, int64_t t, rg_real dir)
{
    token_rows r;
    for (int a = 0; a < RG_MROPE_AXES; a++) {
        int32_t p = pos[a * n + t];
        int64_t q = p < 0 ? -(int64_t)p : p;
        r.cs[a] = rc->cos + q * rc->n_freq;
        r.sn[a] = rc->sin + q * rc->n_freq;
        r.sgn[a] = (p < 0 ? -1 : 1) * dir;
    }
    return r;
}

/* Rotates (dir +1) or inverse-rotates (dir -1) the rotary pairs of one token's heads, pair i by the rows of its
 * section's axis; writes or accumulates (acc); channels past 2*nf are copied / accumulated. The arithmetic is that of
 * pos_rope.c's rope_token, so equal ids give identical bits. */
static inline __attribute__((always_inline)) void mrope_token(const rg_real *restrict x, rg_real *restrict o, int H,
                                                              int hd, int nf, bool half, const int bound[4],
                                                              const token_rows *r, bool acc)
{
    int sa = half ? 1 : 2, ob = half ? nf : 1;
    for (int h = 0; h < H; h++) {
        const rg_real *xh = x + (int64_t)h * hd;
        rg_real *oh = o + (int64_t)h * hd;
        for (int a = 0; a < RG_MROPE_AXES; a++) {
            const rg_real *cs = r->cs[a], *sn = r->sn[a];
            rg_real sg = r->sgn[a];
            for (int i = bound[a]; i < bound[a + 1]; i++) {
                rg_real u = xh[i * sa], v = xh[i * sa + ob], c = cs[i], s = sg * sn[i];
                rg_real ru = u * c - v * s, rv = u * s + v * c;
                if (acc) { oh[i * sa] += ru; oh[i * sa + ob] += rv; }
                else { oh[i * sa] = ru; oh[i * sa + ob] = rv; }
            }
        }
        for (int e = 2 * nf; e < hd; e++) oh[e] = acc ? oh[e] + xh[e] : xh[e];
    }
}

static void apply(const rg_real *x, rg_real *o, int64_t n, int D, int H, bool half, const int bound[4],
                  const rg_rope_cache *rc, const int32_t *pos, rg_real dir, bool acc)
{
    int hd = D / H, nf = rc->n_freq;
    for (int64_t t = 0; t < n; t++) {
        token_rows r = rows_of(rc, pos, n, t, dir);
        /* constant pairing per call site, so the inlined loops specialize */
        if (half) mrope_token(x + t * D, o + t * D, H, hd, nf, true, bound, &r, acc);
        else mrope_token(x + t * D, o + t * D, H, hd, nf, false, bound, &r, acc);
    }
}

rg_tensor *rg_pos_mrope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, const int mrope_section[RG_MROPE_AXES],
                        rg_rope_cache *rc, const int32_t *pos)
{
    char s[64];
    RG_ASSERT(rc->n_freq > 0, "pos_mrope: the RoPE cache has no config (call rg_rope_cache_ensure first)");
    rg_status st = rg_mrope_check_section(mrope_section, rc->cfg.rotary_dim);
    RG_ASSERT(st == RG_OK, "pos_mrope: %s", rg_last_error());
    int D = x->shape[x->ndim - 1];
    RG_ASSERT(n_heads >= 1 && D % n_heads == 0 && rc->cfg.rotary_dim <= D / n_heads,
              "pos_mrope: x %s with %d heads cannot rotate %d channels per head", rg_shape_str(x, s, 64), n_heads,
              rc->cfg.rotary_dim);
    int64_t n = x->numel / D;
    int max_abs = 0;
    for (int64_t t = 0; t < RG_MROPE_AXES * n; t++) {
        RG_ASSERT(pos[t] != INT32_MIN, "pos_mrope: position %d", pos[t]);
        int a = pos[t] < 0 ? -pos[t] : pos[t];
        if (a > max_abs) max_abs = a;
    }
    st = rg_rope_cache_ensure(rc, &rc->cfg, max_abs);
    RG_ASSERT(st == RG_OK, "pos_mrope: %s", rg_last_error());
    int bound[4] = {0, mrope_section[0], mrope_section[0] + mrope_section[1], rc->n_freq};
    rg_tensor *out = rg_node_new(c, &OP_MROPE, x->ndim, x->shape, 1, &x);
    apply(x->data, out->data, n, D, n_heads, half, bound, rc, pos, 1, false);
    if (out->op) {
        int32_t *saved = rg_arena_alloc(&c->arena, (size_t)(RG_MROPE_AXES * n) * sizeof(int32_t));
        memcpy(saved, pos, (size_t)(RG_MROPE_AXES * n) * sizeof(int32_t));
        out->saved = saved;
        out->saved2 = rc;
        out->iarg[0] = n_heads;
        out->iarg[1] = half;
        out->iarg[2] = rc->generation;
        out->iarg[3] = bound[1];
        out->iarg[4] = bound[2];
    }
    return out;
}

/* dx += the inverse rotation of g, pair by pair with its axis's angle. */
static void mrope_backward(rg_tensor *node)
{
    rg_tensor *x = node->src[0];
    const rg_rope_cache *rc = node->saved2;
    RG_ASSERT((unsigned)node->iarg[2] == rc->generation,
              "pos_mrope backward: the RoPE tables were rebuilt (config changed) between forward and backward");
    int H = (int)node->iarg[0], D = x->shape[x->ndim - 1];
    int bound[4] = {0, (int)node->iarg[3], (int)node->iarg[4], rc->n_freq};
    int64_t n = x->numel / D;
    apply(node->grad, rg_grad_of(x), n, D, H, node->iarg[1] != 0, bound, rc, node->saved, -1, true);
}
