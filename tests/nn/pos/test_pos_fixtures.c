/* test_pos_fixtures.c (float32): every position encoding plugged into the reference model against the PyTorch
 * fixtures tests/fixtures/model_<pos>.h5 (tools/gen_fixtures.py; layout in tests/fixtures/README.md): the model is
 * built from the root attributes, loaded with /params, run on /input/tokens (and /input/positions where present);
 * logits and loss must be within 1e-5 and every parameter gradient within 1e-4 of the largest gradient magnitude
 * of the model (FIRE's parameters also within 1e-4 of each one's own largest gradient). Prints the worst errors
 * per fixture. The encoding and extension come from the test table (and are
 * checked against the file's string attributes); the numeric config from the root attributes. */
#include "common.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A model with the fixture's config (root attributes) and parameters (/params/<name>); the encoding and extension
 * are the test table's, and the file's string attributes must name them. */
/* A numeric root attribute of file, or dflt when the file has none (fixtures older than the field). */
static double attr_or(const char *file, const char *name, double dflt)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s", file);
    htri_t has = H5Aexists(f, name);
    H5Fclose(f);
    return has > 0 ? tc_h5_attr(file, "/", name) : dflt;
}

static rg_model *load_model(const char *file, rg_pos_kind pos, rg_rope_ext ext)
{
    rg_model_config cfg = tc_fx_config(file);
    /* the rope_scaling fields beyond type, factor and original length (HF names in nn.h) */
    cfg.rope_attention_factor = attr_or(file, "rope_attention_factor", cfg.rope_attention_factor);
    cfg.partial_rotary_factor = attr_or(file, "partial_rotary_factor", cfg.partial_rotary_factor);
    cfg.yarn_beta_fast = attr_or(file, "yarn_beta_fast", cfg.yarn_beta_fast);
    cfg.yarn_beta_slow = attr_or(file, "yarn_beta_slow", cfg.yarn_beta_slow);
    cfg.llama3_low_freq_factor = attr_or(file, "llama3_low_freq_factor", cfg.llama3_low_freq_factor);
    cfg.llama3_high_freq_factor = attr_or(file, "llama3_high_freq_factor", cfg.llama3_high_freq_factor);
    /* the encoding's declared settings (FIRE's fire_*, T5's t5_*): read by tc_fx_config */
    /* the names in the file must agree */
    char buf[64];
    tc_h5_attr_str(file, "/", "pos_encoding", buf, sizeof buf);
    if (strcmp(buf, rg_pos_name(pos)))
        fail_msg("%s: pos_encoding '%s' is not '%s'", file, buf, rg_pos_name(pos));
    tc_h5_attr_str(file, "/", "rope_ext", buf, sizeof buf);
    if (strcmp(buf, rg_rope_ext_name(ext)))
        fail_msg("%s: rope_ext '%s' is not '%s'", file, buf, rg_rope_ext_name(ext));
    cfg.pos = pos;
    cfg.rope_ext = ext;
    return tc_fx_model(file, &cfg);
}

static void check_fixture(const char *name, rg_pos_kind pos, rg_rope_ext ext)
{
    char file[256];
    snprintf(file, sizeof file, "tests/fixtures/model_%s.h5", name);
    rg_model *m = load_model(file, pos, ext);
    int64_t n;
    int shape[4], ndim;
    int32_t *tokens = tc_h5_read_int(file, "/input/tokens", &n, shape, &ndim);
    int B = shape[0], T = shape[1];
    int32_t *targets = tc_h5_read_int(file, "/input/targets", &n, NULL, NULL);
    int32_t *positions = tc_h5_exists(file, "/input/positions") ? tc_h5_read_int(file, "/input/positions", &n, NULL,
                                                                                  NULL)
                                                                 : NULL;
    rg_ctx *c = rg_ctx_new();
    rg_tensor *logits;
    if (rg_model_forward(c, m, tokens, positions, B, T, NULL, &logits)) fail_msg("%s: %s", file, rg_last_error());
    rg_tensor *loss = rg_cross_entropy(c, logits, targets, -100);
    rg_params_zero_grad(&m->params);
    rg_backward(c, loss, NULL);

    double *want = tc_h5_read(file, "/expected/logits", &n, NULL, NULL);
    assert_int_equal(n, logits->numel);
    double worst_logit = 0;
    for (int64_t i = 0; i < n; i++) worst_logit = tc_max(worst_logit, fabs((double)logits->data[i] - want[i]));
    free(want);
    double *wl = tc_h5_read(file, "/expected/loss", &n, NULL, NULL);
    double loss_err = fabs((double)loss->data[0] - wl[0]);
    free(wl);

    /* gradients: relative to the largest expected gradient magnitude of the model */
    double gmax = 0, worst_grad = 0, worst_own = 0; /* worst_own: of the encoding's own parameters, each relative
                                                      * to its own largest expected gradient (FIRE's c, L_multiplier
                                                      * have small gradients next to tok_emb's) */
    char path[256], worst_name[RG_NAME_LEN] = "", worst_fire[RG_NAME_LEN] = "";
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < m->params.n; i++) {
            rg_tensor *p = m->params.items[i];
            snprintf(path, sizeof path, "/expected/grads/%s", p->name);
            double *g = tc_h5_read(file, path, &n, NULL, NULL);
            assert_int_equal(n, p->numel);
            if (pass == 1 && (strstr(p->name, ".fire.") || strstr(p->name, ".kerple."))) {
                double own = 0, e = 0;
                for (int64_t j = 0; j < n; j++) own = tc_max(own, fabs(g[j]));
                for (int64_t j = 0; j < n; j++) e = tc_max(e, fabs((double)p->grad[j] - g[j]));
                /* mlp.2.bias adds a per-head constant to every score of a row, which the softmax ignores: its
                 * gradient is 0 in exact arithmetic (torch: ~1e-18), so it is checked absolutely */
                if (own < 1e-12) {
                    if (!(e < 1e-6)) fail_msg("%s: %s gradient %.3g, expected 0", file, p->name, e);
                } else if (!(e / own <= worst_own)) {
                    worst_own = e / own;
                    snprintf(worst_fire, sizeof worst_fire, "%s", p->name);
                }
            }
            for (int64_t j = 0; j < n; j++) {
                if (pass == 0) gmax = tc_max(gmax, fabs(g[j]));
                else {
                    double e = fabs((double)p->grad[j] - g[j]) / gmax;
                    if (!(e <= worst_grad)) { worst_grad = e; snprintf(worst_name, sizeof worst_name, "%s", p->name); }
                }
            }
            free(g);
        }
    print_message("%-14s logits %.2e  loss %.2e  grads %.2e (rel. to max |g| %.3g; worst %s)\n", name, worst_logit,
                  loss_err, worst_grad, gmax, worst_name);
    assert_true(worst_logit <= 1e-5);
    assert_true(loss_err <= 1e-5);
    assert_true(worst_grad <= 1e-4);
    if (pos == RG_POS_FIRE || pos == RG_POS_KERPLE_LOG || pos == RG_POS_KERPLE_POWER) {
        print_message("%-14s encoding parameters: grads %.2e relative to each one's own max |g| (worst %s)\n", name,
                      worst_own, worst_fire);
        assert_true(worst_own <= 1e-4);
    }
    rg_ctx_free(c);
    free(tokens);
    free(targets);
    free(positions);
    rg_model_free(m);
}

#define FIXTURE(id, name, pos, ext) \
    static void test_##id(void **state) { check_fixture(name, pos, ext); }
FIXTURE(none, "none", RG_POS_NONE, RG_ROPE_EXT_NONE)
FIXTURE(sinusoidal, "sinusoidal", RG_POS_SINUSOIDAL, RG_ROPE_EXT_NONE)
FIXTURE(learned, "learned", RG_POS_LEARNED, RG_ROPE_EXT_NONE)
FIXTURE(t5, "t5", RG_POS_T5, RG_ROPE_EXT_NONE)
FIXTURE(xl, "xl", RG_POS_XL, RG_ROPE_EXT_NONE)
FIXTURE(alibi, "alibi", RG_POS_ALIBI, RG_ROPE_EXT_NONE)
FIXTURE(rope, "rope", RG_POS_ROPE, RG_ROPE_EXT_NONE)
FIXTURE(rope_half, "rope-half", RG_POS_ROPE_HALF, RG_ROPE_EXT_NONE)
FIXTURE(rope_partial, "rope_partial", RG_POS_ROPE_HALF, RG_ROPE_EXT_NONE)
FIXTURE(rope_pi, "rope_pi", RG_POS_ROPE, RG_ROPE_EXT_PI)
FIXTURE(rope_ntk, "rope_ntk", RG_POS_ROPE, RG_ROPE_EXT_NTK)
FIXTURE(rope_yarn, "rope_yarn", RG_POS_ROPE, RG_ROPE_EXT_YARN)
FIXTURE(rope_llama3, "rope_llama3", RG_POS_ROPE, RG_ROPE_EXT_LLAMA3)
FIXTURE(rope_positions, "rope_positions", RG_POS_ROPE, RG_ROPE_EXT_NONE)
FIXTURE(rope_dynamic, "rope_dynamic", RG_POS_ROPE, RG_ROPE_EXT_DYNAMIC)
FIXTURE(rope_yarn_factors, "rope_yarn_factors", RG_POS_ROPE, RG_ROPE_EXT_YARN)
FIXTURE(rope_llama3_factors, "rope_llama3_factors", RG_POS_ROPE_HALF, RG_ROPE_EXT_LLAMA3)
FIXTURE(fire, "fire", RG_POS_FIRE, RG_ROPE_EXT_NONE)
FIXTURE(fire_positions, "fire_positions", RG_POS_FIRE, RG_ROPE_EXT_NONE)
FIXTURE(kerple_log, "kerple-log", RG_POS_KERPLE_LOG, RG_ROPE_EXT_NONE)
FIXTURE(kerple_power, "kerple-power", RG_POS_KERPLE_POWER, RG_ROPE_EXT_NONE)
FIXTURE(kerple_positions, "kerple_positions", RG_POS_KERPLE_POWER, RG_ROPE_EXT_NONE)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none),        cmocka_unit_test(test_sinusoidal),   cmocka_unit_test(test_learned),
        cmocka_unit_test(test_t5),          cmocka_unit_test(test_xl),           cmocka_unit_test(test_alibi),
        cmocka_unit_test(test_rope),        cmocka_unit_test(test_rope_half),    cmocka_unit_test(test_rope_partial),
        cmocka_unit_test(test_rope_pi),     cmocka_unit_test(test_rope_ntk),     cmocka_unit_test(test_rope_yarn),
        cmocka_unit_test(test_rope_llama3), cmocka_unit_test(test_rope_positions), cmocka_unit_test(test_rope_dynamic),
        cmocka_unit_test(test_rope_yarn_factors), cmocka_unit_test(test_rope_llama3_factors),
        cmocka_unit_test(test_fire),        cmocka_unit_test(test_fire_positions),
        cmocka_unit_test(test_kerple_log),  cmocka_unit_test(test_kerple_power), cmocka_unit_test(test_kerple_positions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
