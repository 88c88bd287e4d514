/* pos_mrope.c: multimodal rotary position embeddings, M-RoPE (Wang et al. 2024, "Qwen2-VL: Enhancing
 * Vision-Language Model's Perception of the World at Any Resolution", sec. 2.1 "Multimodal Rotary Position
 * Embedding"; as Hugging Face modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb).
 *   Each token has three position ids (temporal, height, width). The rotary pairs are split into three contiguous
 *   sections by mrope_section = [s0, s1, s2] (Qwen2-VL: [16, 24, 24] of the 64 pairs of head_dim 128); pair i
 *   rotates by angle pos_axis(i) * inv_freq[i], where inv_freq[i] is the frequency of pair i in the whole rotary dim
 *   (HF builds cos/sin of all three ids over the full dim, splits the doubled channel list by mrope_section * 2 and
 *   takes chunk k from axis k % 3, i.e. channel i and i + d/2 both from the axis of pair i).
 * A pure op on per-forward tables, as 1-D RoPE (pos_rope.c): rg_mrope_table_new builds an rg_rope_table whose entry
 * (row r, pair i) is the cos/sin of the angle of pair i on the axis of its section, merged column by column from the
 * three 1-D tables of the axes (rg_rope_table_new, so every RoPE setting of the config applies: rope_base, rotary
 * dim, the rope_scaling extensions and the attention factor). The rotation is then exactly rg_pos_rope's: pairing
 * half-split (i, i + d/2) (HF rotate_half, what Qwen2-VL uses) or interleaved (2i, 2i+1), (a, b) -> (a cos - b sin,
 * a sin + b cos). Text tokens carry equal ids on the three axes; their table rows are then the 1-D rows, so M-RoPE
 * is 1-D RoPE bit for bit.
 * Shapes: pos3 [3, n_rows] -> table [n_rows, rotary_dim/2]; x [B, T, n_heads*hd] -> same shape.
 * Backward: rg_pos_rope's, the inverse rotation of each pair by its own axis's angle (docs/derivatives.md row
 * "pos_mrope"). */
#include "pos_ext.h"

#include <string.h>

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

int rg_mrope_axis_of_pair(const int mrope_section[RG_MROPE_AXES], bool interleaved, int i)
{
    if (interleaved) {
        if (i % 3 == 1 && i < 3 * mrope_section[1]) return 1;
        if (i % 3 == 2 && i < 3 * mrope_section[2]) return 2;
        return 0;
    }
    return i < mrope_section[0] ? 0 : i < mrope_section[0] + mrope_section[1] ? 1 : 2;
}

rg_rope_table rg_mrope_table_new_layout(rg_ctx *c, const rg_model_config *cfg, const int mrope_section[RG_MROPE_AXES],
                                        bool interleaved, const int32_t *pos3, int n_rows, int64_t seq_len)
{
    int rd = rg_rope_dim(cfg);
    rg_status st = rg_mrope_check_section(mrope_section, rd);
    RG_ASSERT(st == RG_OK, "mrope_table_new: %s", rg_last_error());
    RG_ASSERT(n_rows >= 1, "mrope_table_new: %d rows", n_rows);
    int nf = rd / 2;
    rg_real *cs = rg_arena_alloc(&c->arena, (size_t)n_rows * nf * 2 * sizeof(rg_real)), *sn = cs + (int64_t)n_rows * nf;
    for (int a = 0; a < RG_MROPE_AXES; a++) {
        bool used = false;
        for (int i = 0; i < nf && !used; i++) used = rg_mrope_axis_of_pair(mrope_section, interleaved, i) == a;
        if (!used) continue;
        rg_rope_table ax = rg_rope_table_new(c, cfg, pos3 + (int64_t)a * n_rows, n_rows, seq_len);
        /* Copy each run of pairs of axis a (one run per axis contiguous, runs of one pair interleaved). */
        for (int lo = 0; lo < nf;) {
            if (rg_mrope_axis_of_pair(mrope_section, interleaved, lo) != a) {
                lo++;
                continue;
            }
            int hi = lo + 1;
            while (hi < nf && rg_mrope_axis_of_pair(mrope_section, interleaved, hi) == a) hi++;
            for (int64_t r = 0; r < n_rows; r++) {
                memcpy(cs + r * nf + lo, ax.cos + r * nf + lo, (size_t)(hi - lo) * sizeof(rg_real));
                memcpy(sn + r * nf + lo, ax.sin + r * nf + lo, (size_t)(hi - lo) * sizeof(rg_real));
            }
            lo = hi;
        }
    }
    return (rg_rope_table){nf, n_rows, cs, sn};
}

rg_rope_table rg_mrope_table_new(rg_ctx *c, const rg_model_config *cfg, const int mrope_section[RG_MROPE_AXES],
                                 const int32_t *pos3, int n_rows, int64_t seq_len)
{
    return rg_mrope_table_new_layout(c, cfg, mrope_section, false, pos3, n_rows, seq_len);
}

rg_tensor *rg_pos_mrope(rg_ctx *c, rg_tensor *x, int n_heads, bool half, const rg_rope_table *tab)
{
    return rg_pos_rope(c, x, n_heads, half, tab);
}

/* ------------------------------------------------------------------ the model encoding mrope
 * M-RoPE as an encoding of the model: q and k of every token rotated by its (frame, row, column) axis ids (pos.h
 * "position axes", M-RoPE's order; without axes all three are the 1-D position, as Qwen2-VL's text tokens, and the
 * model is rope-half bit for bit). Half-split pairing as HF Qwen2-VL; every RoPE setting of the config applies
 * (rope_base = rope_theta, rotary_dim, rope_scaling), through rg_mrope_table_new at the length largest id of the
 * three axes + 1 (HF's dynamic update takes the largest position id too). The section split is three declared
 * settings (HF rope_scaling.mrope_section = [t, h, w]); all three 0 (the default) derives it from the number of
 * rotary pairs n = rotary_dim / 2 by Qwen2-VL's [16, 24, 24] of 64: h = w = round(3n/8) (halves up), t = n - 2h
 * (n = 64: [16, 24, 24]; 8: [2, 3, 3]; 4: [0, 2, 2]; 2: [0, 1, 1]). Set ones are checked with
 * rg_mrope_check_section (they must sum to n).
 * Qwen2-VL's contiguous sections give the frame axis the highest frequencies and the column axis the lowest: pair i
 * turns by base^(-2i/d), so the column section [n - s2, n) turns by at most base^(-2(n - s2)/rotary_dim) per unit
 * whatever the head size (at base 10000 and the derived split, 0.0032 rad: a column offset of a few cells is no
 * angle at all). The setting mrope_interleaved = 1 takes Qwen3-VL's layout instead (Hugging Face
 * modeling_qwen3_vl.py apply_interleaved_mrope): pair i is the row's when i % 3 == 1 and i < 3 s1, the column's when
 * i % 3 == 2 and i < 3 s2, the frame's otherwise, so every axis spans the whole frequency range. */

static const rg_pos_setting MROPE_SETTINGS[] = {
    {"mrope_section_t", RG_POS_SETTING_INT, 0, 0, 65536,
     "M-RoPE pairs of the frame axis (HF mrope_section[0]; all three 0: derived, Qwen2-VL's 16/64 of the pairs)"},
    {"mrope_section_h", RG_POS_SETTING_INT, 0, 0, 65536, "M-RoPE pairs of the row axis (HF mrope_section[1])"},
    {"mrope_section_w", RG_POS_SETTING_INT, 0, 0, 65536, "M-RoPE pairs of the column axis (HF mrope_section[2])"},
    {"mrope_interleaved", RG_POS_SETTING_INT, 0, 0, 1,
     "1: Qwen3-VL's interleaved M-RoPE (pairs frame, row, column in turn; 0: Qwen2-VL's contiguous sections)"},
};

void rg_mrope_section_of(const rg_model_config *cfg, int out[RG_MROPE_AXES])
{
    for (int a = 0; a < RG_MROPE_AXES; a++) out[a] = (int)rg_pos_config_get(cfg, MROPE_SETTINGS[a].name);
    if (out[0] || out[1] || out[2]) return;
    int n = rg_rope_dim(cfg) / 2;
    out[1] = out[2] = (3 * n + 4) / 8;
    out[0] = n - 2 * out[1];
}

static rg_status mrope_validate(const rg_model_config *cfg)
{
    int sec[RG_MROPE_AXES];
    rg_mrope_section_of(cfg, sec);
    return rg_mrope_check_section(sec, rg_rope_dim(cfg));
}

typedef struct {
    rg_rope_table tab;
    int n_heads;
} mrope_prep;

static void *mrope_prepare(rg_ctx *c, void *state, const rg_model_config *cfg, const rg_pos_summary *s)
{
    (void)state;
    mrope_prep *p = rg_arena_alloc(&c->arena, sizeof *p);
    int nr = s->rows_shared ? s->T : s->B * s->T, sec[RG_MROPE_AXES];
    rg_mrope_section_of(cfg, sec);
    int32_t *pos3 = rg_arena_alloc(&c->arena, (size_t)RG_MROPE_AXES * nr * sizeof(int32_t)), top = INT32_MIN;
    for (int a = 0; a < RG_MROPE_AXES; a++) {
        memcpy(pos3 + (int64_t)a * nr, rg_pos_q_axis(s, a), (size_t)nr * sizeof(int32_t));
        top = s->q_axis_max[a] > top ? s->q_axis_max[a] : top;
    }
    p->tab = rg_mrope_table_new_layout(c, cfg, sec, rg_pos_config_get(cfg, "mrope_interleaved") != 0, pos3, nr,
                                       (int64_t)top + 1);
    p->n_heads = cfg->n_heads;
    return p;
}

static void mrope_rotate_qk(rg_ctx *c, const void *prep, rg_tensor **q, rg_tensor **k)
{
    const mrope_prep *p = prep;
    *q = rg_pos_mrope(c, *q, p->n_heads, true, &p->tab);
    *k = rg_pos_mrope(c, *k, p->n_heads, true, &p->tab);
}

const rg_pos_encoding rg_pos_enc_mrope = {
    .name = "mrope", .doc = "M-RoPE (Qwen2-VL): half-split pairs in frame, row, column sections (mrope_section_*), "
    "each rotated by its axis id (Wang et al. 2024)",
    .rope_layout = "half", .settings = MROPE_SETTINGS, .n_settings = 4, .validate = mrope_validate,
    .prepare = mrope_prepare, .rotate_qk = mrope_rotate_qk, .flags = RG_POS_OPT_IN | RG_POS_ROTARY | RG_POS_RELATIVE,
    .plot_colour = "#6A3D9A", .plot_marker = 2};
