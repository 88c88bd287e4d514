/* pos_learned_2d.c: learned 2-D absolute position embeddings, a row table and a column table added to the token
 * embedding (the factorized 2-D learned embedding of vision transformers: Dosovitskiy et al. 2021, "An Image is
 * Worth 16x16 Words", appendix D.4, "2-dimensional embedding": X- and Y-embeddings of D/2 each, concatenated; here
 * both are d_model wide and added, so that the sum is the 1-D learned encoding's shape, as tools/ref_grid_bias.py):
 *   h = tok + pos_emb_row.weight[r] + pos_emb_col.weight[c]
 * r, c: the row and column axes of each query (pos.h; without axes both are the 1-D position).
 * Shapes: tok [B, T, d], pos_emb_row.weight [learned_2d_max_rows, d], pos_emb_col.weight [learned_2d_max_cols, d]
 * (0 = max_len), ids [B*T] -> h [B, T, d]. An id past its table is RG_ERR_ARG before anything is recorded.
 * Composed of rg_embedding and rg_add: no backward of its own (docs/derivatives.md rows "embedding", "add"). */
#include "pos_grid_bias.h"

#include <stdlib.h>

static rg_status check_ids(const int32_t *ids, int64_t n, int L, const char *table, const char *setting)
{
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= L)
            return rg_error(RG_ERR_ARG, "learned-2d: id %d (token %lld) is outside %s [0, %d): the learned 2-D "
                            "encoding cannot represent it (raise %s)", ids[i], (long long)i, table, L,
                            setting);
    return RG_OK;
}

rg_status rg_pos_learned_2d(rg_ctx *c, rg_tensor *tok, rg_tensor *row_table, rg_tensor *col_table,
                            const int32_t *row, const int32_t *col, rg_tensor **h)
{
    char s1[64], s2[64], s3[64];
    *h = NULL;
    RG_ASSERT(row_table && col_table && row_table->ndim == 2 && col_table->ndim == 2 && tok->ndim >= 1 &&
              tok->shape[tok->ndim - 1] == row_table->shape[1] && row_table->shape[1] == col_table->shape[1],
              "pos_learned_2d: tok %s, tables %s and %s do not fit", rg_shape_str(tok, s1, 64),
              row_table ? rg_shape_str(row_table, s2, 64) : "NULL",
              col_table ? rg_shape_str(col_table, s3, 64) : "NULL");
    int64_t n = tok->numel / row_table->shape[1];
    rg_status st = check_ids(row, n, row_table->shape[0], "pos_emb_row.weight", "learned_2d_max_rows");
    if (!st) st = check_ids(col, n, col_table->shape[0], "pos_emb_col.weight", "learned_2d_max_cols");
    if (st) return st;
    rg_tensor *er = rg_embedding(c, row_table, row, tok->ndim - 1, tok->shape);
    rg_tensor *ec = rg_embedding(c, col_table, col, tok->ndim - 1, tok->shape);
    *h = rg_add(c, rg_add(c, tok, er), ec);
    return RG_OK;
}

/* ------------------------------------------------------------------ the descriptor */

typedef struct {
    rg_tensor *row, *col;
} learned_2d_state;

static int table_rows(const rg_model_config *cfg, const char *name)
{
    int n = (int)rg_pos_config_get(cfg, name);
    return n ? n : cfg->max_len;
}

static rg_status learned_2d_new(const rg_model_config *cfg, void **state)
{
    (void)cfg;
    *state = calloc(1, sizeof(learned_2d_state));
    return *state ? RG_OK : rg_error(RG_ERR_NOMEM, "learned-2d: out of memory");
}

/* pos_emb_row.weight, then pos_emb_col.weight, N(0, 0.02), right after tok_emb.weight */
static rg_status learned_2d_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer,
                                   rg_params *ps, rg_rng *rng)
{
    (void)layer;
    if (site != RG_POS_SITE_INPUT) return RG_OK;
    learned_2d_state *st = state;
    rg_status s = rg_params_register_normal(ps, "pos_emb_row.weight", 2,
                                            (int[]){table_rows(cfg, "learned_2d_max_rows"), cfg->d_model}, rng,
                                            RG_INIT_STD, &st->row);
    if (s) return s;
    return rg_params_register_normal(ps, "pos_emb_col.weight", 2,
                                     (int[]){table_rows(cfg, "learned_2d_max_cols"), cfg->d_model}, rng, RG_INIT_STD,
                                     &st->col);
}

static rg_status learned_2d_input(rg_ctx *c, void *state, const rg_pos_summary *s, rg_tensor *tok, rg_tensor **h)
{
    const learned_2d_state *st = state;
    return rg_pos_learned_2d(c, tok, st->row, st->col, rg_pos_q_axis(s, RG_AXIS_ROW), rg_pos_q_axis(s, RG_AXIS_COL),
                             h);
}

static const rg_pos_setting LEARNED_2D_SETTINGS[] = {
    {"learned_2d_max_rows", RG_POS_SETTING_INT, 0, 0, 1 << 20,
     "rows of pos_emb_row.weight (row ids 0 .. n-1; 0: max_len)"},
    {"learned_2d_max_cols", RG_POS_SETTING_INT, 0, 0, 1 << 20,
     "rows of pos_emb_col.weight (column ids 0 .. n-1; 0: max_len)"},
};

const rg_pos_encoding rg_pos_enc_learned_2d = {
    .name = "learned-2d",
    .doc = "h = tok + pos_emb_row.weight[r] + pos_emb_col.weight[c], learned row and column tables (ViT's 2-D)",
    .settings = LEARNED_2D_SETTINGS, .n_settings = 2, .state_new = learned_2d_new, .add_params = learned_2d_params,
    .input = learned_2d_input, .state_free = free, .flags = RG_POS_OPT_IN, .plot_colour = "#000000",
    .plot_marker = 7};
