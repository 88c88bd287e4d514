/* gradcheck_grid_rot.c (float64 build): finite-difference checks (rg_gradcheck, relative error < 1e-6) of the whole
 * model's cross-entropy with respect to every parameter, for the rotary encodings of the position axes (rope-2d,
 * rope-2d-pixtral, mrope; src/nn/pos_axial.c, src/nn/pos_mrope.c) fed per-token (frame, row, column) ids through
 * rg_model_forward_axes: a BOS then a 2x3 grid in row 0, two frames of a 1x3 strip at a column offset in row 1
 * (the rows do not share their axes). One table, one loop: each layout, partial rotary, rope_scaling extensions
 * (YaRN, dynamic NTK), the derived and an explicit M-RoPE section. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-6
#define H_STEP 1e-6
#define NAME_W 60

enum { B = 2, T = 7 };

typedef struct {
    rg_model *m;
    const int32_t *tokens, *targets, *axes;
} model_case;

static rg_tensor *model_fn(rg_ctx *c, rg_tensor **in, void *user)
{
    (void)in;
    model_case *mc = user;
    rg_tensor *logits;
    rg_status st = rg_model_forward_axes(c, mc->m, mc->tokens, NULL, mc->axes, B, T, NULL, &logits);
    RG_ASSERT(st == RG_OK, "forward: %s", rg_last_error());
    return rg_cross_entropy(c, logits, mc->targets, -100);
}

typedef struct {
    const char *name;
    rg_pos_kind pos;
    int rotary_dim;
    rg_rope_ext ext;
    int section[3]; /* M-RoPE: all 0 = derived */
} grid_case;

static const grid_case CASES[] = {
    {"rope-2d", RG_POS_ROPE_2D, 0, RG_ROPE_EXT_NONE, {0}},
    {"rope-2d rotary_dim 4, yarn s=2", RG_POS_ROPE_2D, 4, RG_ROPE_EXT_YARN, {0}},
    {"rope-2d-pixtral", RG_POS_ROPE_2D_PIXTRAL, 0, RG_ROPE_EXT_NONE, {0}},
    {"rope-2d-pixtral dynamic s=2", RG_POS_ROPE_2D_PIXTRAL, 0, RG_ROPE_EXT_DYNAMIC, {0}},
    {"mrope derived section [0, 2, 2]", RG_POS_MROPE, 0, RG_ROPE_EXT_NONE, {0}},
    {"mrope section [2, 1, 1], yarn s=2", RG_POS_MROPE, 0, RG_ROPE_EXT_YARN, {2, 1, 1}},
    {"mrope rotary_dim 6 section [1, 1, 1]", RG_POS_MROPE, 6, RG_ROPE_EXT_NONE, {1, 1, 1}},
};

static void check_case(const grid_case *gc)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 7, cfg.d_model = 16, cfg.n_heads = 2, cfg.n_layers = 1, cfg.d_ff = 12, cfg.max_len = 24;
    cfg.pos = gc->pos;
    cfg.rotary_dim = gc->rotary_dim;
    cfg.rope_ext = gc->ext;
    cfg.rope_scale = gc->ext == RG_ROPE_EXT_NONE ? 1 : 2;
    cfg.rope_orig_len = 4; /* dynamic NTK and YaRN act on ids up to 6 */
    static const char *const SEC[3] = {"mrope_section_t", "mrope_section_h", "mrope_section_w"};
    for (int a = 0; a < 3 && gc->section[0] + gc->section[1] + gc->section[2]; a++)
        assert_int_equal(rg_pos_config_set(&cfg, SEC[a], gc->section[a]), RG_OK);
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 5, &m), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 79, (uint64_t)gc->pos);
    for (int i = 0; i < m->params.n; i++) tc_fill_randn(m->params.items[i], &rng, 0.4);
    int32_t tokens[B * T] = {1, 5, 2, 6, 0, 3, 3, 4, 4, 1, 2, 6, 5, 0};
    int32_t targets[B * T] = {5, 2, -100, 1, 3, 3, 4, 1, 2, 6, -100, 5, 0, 2};
    int32_t axes[3 * B * T] = {0, 0, 0, 0, 0, 0, 0, /* frames */ 0, 1, 1, 1, 2, 2, 2,
                               0, 0, 0, 0, 1, 1, 1, /* rows */ 0, 0, 0, 0, 0, 0, 0,
                               0, 0, 1, 2, 0, 1, 2, /* columns */ 0, 4, 5, 6, 4, 5, 6};
    model_case mc = {m, tokens, targets, axes};
    double *rel = malloc((size_t)m->params.n * sizeof *rel);
    rg_gradcheck(model_fn, &mc, m->params.items, m->params.n, H_STEP, rel);
    tc_gradcheck_model_report(NAME_W, gc->name, m, rel, TOL);
    free(rel);
    rg_model_free(m);
}

static void test_models(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) check_case(&CASES[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_models)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
