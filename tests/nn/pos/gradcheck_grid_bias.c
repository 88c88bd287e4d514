/* gradcheck_grid_bias.c (float64 build): finite-difference checks (rg_gradcheck, relative error < 1e-6) of the 2-D
 * encodings of src/nn/pos_grid_bias.h: the ops with respect to their inputs and parameters (t5-2d's scatter-add
 * backward with rows sharing ids and per-row ids, through the bucket table and the direct path, with ids far past a
 * training grid; learned-2d with repeated ids; sinusoidal-2d), and the whole reference model's loss with respect
 * to every parameter for each encoding fed a grid layout of axes (causal, and t5-2d bidirectional). One table of
 * cases, run by one loop; each case prints its worst relative error. Losses: sum(out * w) with a fixed random w,
 * or the model's cross-entropy. ALiBi 2-D has no inputs or parameters of its own: it is checked through the
 * model. */
#include "common.h"
#include "nn/pos_grid_bias.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-6
#define H_STEP 1e-6
#define NAME_W 60

enum { B = 2, T = 4, S = 6, H = 3, D = 8 };

/* ------------------------------------------------------------------ op cases */

typedef struct {
    int op;                 /* 0 t5-2d, 1 learned-2d, 2 sinusoidal-2d */
    rg_pos_summary sum;     /* of the ids below */
    int32_t qax[RG_POS_AXES * B * T], kax[RG_POS_AXES * B * S], qpos[B * T], kpos[B * S];
    int max_distance;
    rg_real *w;
    rg_rng *rng;
} op_case;

static rg_tensor *op_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    op_case *oc = user;
    rg_tensor *out = NULL;
    const int32_t *row = rg_pos_q_axis(&oc->sum, RG_AXIS_ROW), *col = rg_pos_q_axis(&oc->sum, RG_AXIS_COL);
    if (oc->op == 0) out = rg_pos_t5_2d_bias(c, in[0], in[1], &oc->sum, oc->max_distance);
    else if (oc->op == 1) RG_ASSERT(rg_pos_learned_2d(c, in[0], in[1], in[2], row, col, &out) == RG_OK, "%s",
                                    rg_last_error());
    else out = rg_pos_sinusoidal_2d(c, in[0], row, col, oc->sum.rows_shared);
    if (!oc->w) oc->w = tc_random_weights(out->numel, oc->rng);
    return tc_weighted_sum(c, out, oc->w);
}

/* ids: rows share a 2 x 3 (queries 2 x 2) grid at rows 150.., columns 40..; or per row, sparse ids to 400 (far
 * more offsets than entries: the direct bucket path) */
static void ids_of(op_case *oc, bool shared)
{
    for (int b = 0; b < B; b++) {
        for (int s = 0; s < S; s++) {
            oc->kpos[b * S + s] = s;
            oc->kax[(1 * B + b) * S + s] = shared ? 150 + s / 3 : 7 + 97 * s + 31 * b;
            oc->kax[(2 * B + b) * S + s] = shared ? 40 + s % 3 : 390 - 71 * s - 5 * b;
        }
        for (int t = 0; t < T; t++) {
            oc->qpos[b * T + t] = t;
            oc->qax[(1 * B + b) * T + t] = shared ? 150 + t / 2 : 3 + 89 * t + 17 * b;
            oc->qax[(2 * B + b) * T + t] = shared ? 40 + t % 2 * 2 : 11 + 61 * t + 3 * b;
        }
    }
    rg_pos_summarize_axes(&oc->sum, oc->qpos, oc->kpos, oc->qax, oc->kax, B, T, S);
    assert_true(oc->sum.rows_shared == shared);
}

static void check_op(const char *name, int op, bool shared, int num_buckets, int max_distance)
{
    rg_rng rng;
    rg_rng_seed(&rng, 21, (uint64_t)(op * 4 + shared * 2 + (num_buckets > 8)));
    op_case oc = {.op = op, .max_distance = max_distance, .rng = &rng};
    ids_of(&oc, shared);
    rg_tensor *in[3];
    int n = 0;
    if (op == 0) {
        in[n++] = tc_param_randn("rel_bias_row", 2, (int[]){num_buckets, H}, &rng, 1);
        in[n++] = tc_param_randn("rel_bias_col", 2, (int[]){num_buckets, H}, &rng, 1);
    } else {
        in[n++] = tc_param_randn("tok", 3, (int[]){B, T, D}, &rng, 1);
        if (op == 1) { /* ids up to 152 / 42 (shared) or 400 (sparse), repeated ids scatter-add */
            in[n++] = tc_param_randn("pos_emb_row", 2, (int[]){401, D}, &rng, 1);
            in[n++] = tc_param_randn("pos_emb_col", 2, (int[]){401, D}, &rng, 1);
        }
    }
    double rel[3];
    double worst = rg_gradcheck(op_fn, &oc, in, n, H_STEP, rel);
    tc_gradcheck_report(NAME_W, name, worst, rel, n, TOL);
    free(oc.w);
    for (int i = 0; i < n; i++) rg_param_free(in[i]);
}

/* ------------------------------------------------------------------ the model with each encoding and axes */

typedef struct {
    rg_model *m;
    const int32_t *tokens, *targets, *axes;
} model_case;

static rg_tensor *model_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    (void)in;
    model_case *mc = user;
    rg_tensor *logits;
    rg_status st = rg_model_forward_axes(c, mc->m, mc->tokens, NULL, mc->axes, 2, 5, NULL, &logits);
    RG_ASSERT(st == RG_OK, "forward: %s", rg_last_error());
    return rg_cross_entropy(c, logits, mc->targets, -100);
}

static void check_model(const char *name, rg_pos_kind pos, bool causal)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 7, cfg.d_model = 8, cfg.n_heads = 2, cfg.n_layers = 1, cfg.d_ff = 12, cfg.max_len = 8;
    cfg.causal = causal;
    cfg.pos = pos;
    assert_int_equal(rg_pos_config_set(&cfg, "learned_2d_max_rows", 4), RG_OK);
    assert_int_equal(rg_pos_config_set(&cfg, "learned_2d_max_cols", 5), RG_OK);
    assert_int_equal(rg_pos_config_set(&cfg, "t5_2d_num_buckets", 8), RG_OK); /* log buckets from offset 2 */
    assert_int_equal(rg_pos_config_set(&cfg, "t5_2d_max_distance", 5), RG_OK);
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 5, &m), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 79, (uint64_t)pos);
    for (int i = 0; i < m->params.n; i++) tc_fill_randn(m->params.items[i], &rng, 0.4);
    int32_t tokens[2 * 5] = {1, 5, 2, 6, 0, 3, 3, 4, 2, 1};
    int32_t targets[2 * 5] = {5, 2, -100, 1, 3, 3, 4, 2, 1, -100};
    /* a BOS at (0, 0), then a 2 x 2 grid (row 0) and a 2 x 2 grid at rows 1.., columns 2.. (row 1) */
    int32_t axes[RG_POS_AXES * 2 * 5] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1,
                                         0, 0, 0, 1, 1, 0, 1, 1, 3, 3,
                                         0, 0, 1, 0, 1, 0, 2, 4, 2, 4};
    model_case mc = {m, tokens, targets, axes};
    double *rel = malloc((size_t)m->params.n * sizeof *rel);
    rg_gradcheck(model_fn, &mc, m->params.items, m->params.n, H_STEP, rel);
    tc_gradcheck_model_report(NAME_W, name, m, rel, TOL);
    free(rel);
    rg_model_free(m);
}

/* ------------------------------------------------------------------ the table */

static const struct {
    const char *name;
    int op;                 /* 0..2: op cases; 3: the model */
    bool shared;            /* op: rows share ids; model: causal */
    int num_buckets, max_distance;
    rg_pos_kind pos;
} CASES[] = {
    {"t5-2d: tables, [H,T,S], 8 buckets to 5 (lookup table)", 0, true, 8, 5, 0},
    {"t5-2d: tables, [B,H,T,S], ids to 400, 32 buckets to 128", 0, false, 32, 128, 0},
    {"t5-2d: tables, [B,H,T,S], ids to 400, 8 buckets to 3", 0, false, 8, 3, 0},
    {"learned-2d: tok, row and column tables, shared ids", 1, true, 0, 0, 0},
    {"learned-2d: tok, row and column tables, ids to 400", 1, false, 0, 0, 0},
    {"sinusoidal-2d: tok, shared ids", 2, true, 0, 0, 0},
    {"sinusoidal-2d: tok, per-row ids to 400", 2, false, 0, 0, 0},
    {"learned-2d", 3, true, 0, 0, RG_POS_LEARNED_2D},
    {"sinusoidal-2d", 3, true, 0, 0, RG_POS_SINUSOIDAL_2D},
    {"alibi-2d-manhattan", 3, true, 0, 0, RG_POS_ALIBI_2D_MANHATTAN},
    {"alibi-2d-euclidean", 3, true, 0, 0, RG_POS_ALIBI_2D_EUCLIDEAN},
    {"t5-2d causal", 3, true, 0, 0, RG_POS_T5_2D},
    {"t5-2d bidirectional", 3, false, 0, 0, RG_POS_T5_2D},
};

static void test_all(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        if (CASES[i].op < 3)
            check_op(CASES[i].name, CASES[i].op, CASES[i].shared, CASES[i].num_buckets, CASES[i].max_distance);
        else
            check_model(CASES[i].name, CASES[i].pos, CASES[i].shared);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_all)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
