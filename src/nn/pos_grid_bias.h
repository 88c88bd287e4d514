/* pos_grid_bias.h: the 2-D rivals of axial RoPE for grids (docs/encodings.md), as model encodings that read the
 * row and column axes of a forward (pos.h "position axes": rg_pos_q_axis / rg_pos_k_axis with RG_AXIS_ROW and
 * RG_AXIS_COL; without axes both are the 1-D position, so they run on 1-D tasks too):
 *   learned-2d          (pos_learned_2d.c)     h = tok + pos_emb_row.weight[r] + pos_emb_col.weight[c]
 *   sinusoidal-2d       (pos_sinusoidal_2d.c)  h = tok sqrt(d) + PE2(r, c), MAE's get_2d_sincos_pos_embed layout
 *   alibi-2d-manhattan  (pos_alibi_2d.c)       bias = -m_h (|r_i - r_j| + |c_i - c_j|)
 *   alibi-2d-euclidean  (pos_alibi_2d.c)       bias = -m_h sqrt((r_i - r_j)^2 + (c_i - c_j)^2)
 *   t5-2d               (pos_t5_2d.c)          bias = rel_bias_row.weight[bucket(dr), h]
 *                                                     + rel_bias_col.weight[bucket(dc), h]
 * All carry RG_POS_OPT_IN (not in train_order's --pos all). Layouts as pos.h: tok/h [B, T, d], ids int32 [B*T]
 * (queries) and [B*S] (keys), biases [H, T, S] when s->rows_shared, else [B, H, T, S]. Formulas, sources and
 * tests: docs/encodings.md ("2-D absolute encodings and biases"); backward rows: docs/derivatives.md. */
#ifndef RG_NN_POS_GRID_BIAS_H
#define RG_NN_POS_GRID_BIAS_H

#include "nn.h"
#include "pos.h"

extern const rg_pos_encoding rg_pos_enc_learned_2d, rg_pos_enc_sinusoidal_2d, rg_pos_enc_alibi_2d_manhattan,
    rg_pos_enc_alibi_2d_euclidean, rg_pos_enc_t5_2d;

/* ---- learned 2-D absolute (pos_learned_2d.c) */
/* *h = tok + row_table[row] + col_table[col], composed of rg_embedding and rg_add (their backward scatter-adds into
 * the tables): tok [B, T, d], row_table [R, d], col_table [C, d], row and col [B*T]. RG_ERR_ARG (nothing recorded),
 * the message naming the table (pos_emb_row.weight / pos_emb_col.weight), the id and the token, if a row id is
 * outside [0, R) or a column id outside [0, C). */
rg_status rg_pos_learned_2d(rg_ctx *c, rg_tensor *tok, rg_tensor *row_table, rg_tensor *col_table,
                            const int32_t *row, const int32_t *col, rg_tensor **h);

/* ---- sinusoidal 2-D (pos_sinusoidal_2d.c) */
/* PE2(r, c) [d_model] in double (d_model % 4 == 0), the layout of MAE's get_2d_sincos_pos_embed (He et al. 2022,
 * facebookresearch/mae util/pos_embed.py, whose meshgrid puts the width first): with q = d_model / 4 and
 * w_k = 10000^(-k/q), k < q:
 *   [0, q) sin(c w_k), [q, 2q) cos(c w_k)    the column (MAE's grid[0], "w goes first")
 *   [2q, 3q) sin(r w_k), [3q, 4q) cos(r w_k) the row. */
void rg_sinusoidal_2d_pe(int d_model, int32_t row, int32_t col, double *out);
/* h = tok * sqrt(d_model) + PE2(row, col) (the 1-D sinusoidal encoding's embedding scale), composed of rg_scale and
 * a broadcast rg_add of a constant: tok [B, T, d], row and col [B*T]; rows_shared: every row's ids equal the first
 * (PE2 is then built once, [T, d]). */
rg_tensor *rg_pos_sinusoidal_2d(rg_ctx *c, rg_tensor *tok, const int32_t *row, const int32_t *col, bool rows_shared);

/* ---- ALiBi 2-D (pos_alibi_2d.c) */
typedef enum { RG_GRID_MANHATTAN, RG_GRID_EUCLIDEAN } rg_grid_distance;
/* bias[b, h, i, j] = -slopes[h] * dist((r_i, c_i), (r_j, c_j)), the row and column axes of the queries and keys of
 * s; Manhattan |dr| + |dc| or Euclidean sqrt(dr^2 + dc^2), in double, rounded to the tensor type. slopes [n_heads]
 * (rg_alibi_slopes: Press et al. 2022). [H, T, S] when s->rows_shared, else [B, H, T, S]. A constant (records
 * nothing). */
rg_tensor *rg_pos_alibi_2d_bias(rg_ctx *c, const double *slopes, int n_heads, rg_grid_distance dist,
                                const rg_pos_summary *s);

/* ---- T5-style bias on (dr, dc) (pos_t5_2d.c) */
/* bias[b, h, i, j] = table_row[bucket(r_j - r_i), h] + table_col[bucket(c_j - c_i), h] (key minus query, as T5),
 * bucket = rg_t5_bucket(., bidirectional = true, num_buckets, max_distance): both signs of dr and dc get their own
 * buckets (in raster order a key before the query may lie to its right). table_row, table_col [num_buckets, H]
 * (the same num_buckets); max_distance > num_buckets / 4. [H, T, S] when s->rows_shared, else [B, H, T, S].
 * Backward (docs/derivatives.md row "pos_t5_2d_bias"): dtable_row[bucket(dr), h] += g, dtable_col[bucket(dc), h]
 * += g (scatter-add). */
rg_tensor *rg_pos_t5_2d_bias(rg_ctx *c, rg_tensor *table_row, rg_tensor *table_col, const rg_pos_summary *s,
                             int max_distance);

#endif
