/* test_pos_grid_bias.c (float32): the 2-D encodings of src/nn/pos_grid_bias.h in the reference model, with a grid
 * layout of axes (a BOS, then a 3 x 4 grid flattened row-major in row 0 and a shifted 4 x 3 grid in row 1):
 *   - against the PyTorch fixtures tests/fixtures/model_<name>.h5 (tools/gen_fixtures.py grid_bias_fixtures,
 *     tools/ref_grid_bias.py): logits and loss within 1e-5, every gradient within 1e-5 of the model's largest
 *     expected gradient magnitude; control: the same model fed rows and columns swapped (ALiBi: no axes, since its
 *     distances are symmetric in the two) is off by more than 1e-3, so the comparison can fail;
 *   - KV-cache decoding with axes (prefill 4 tokens, then one per forward) equals the full forward (1e-5); control:
 *     one decoded token given another column differs;
 *   - a checkpoint round trip (rg_checkpoint_save, rg_checkpoint_open) gives the same logits bit for bit; control:
 *     a model of another seed differs, and loading into a model of other settings or another encoding is refused;
 *   - errors: a row or column id past learned-2d's table is RG_ERR_ARG naming the table; sinusoidal-2d refuses a
 *     d_model that is not a multiple of 4, t5-2d a max distance <= num_buckets / 4. */
#include "common.h"
#include "io/checkpoint.h"
#include "nn/pos_grid_bias.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { B = 2, T = 13 };

/* the fixtures' layout (tools/gen_fixtures.py grid_axes) */
static void grid_axes(int32_t *ax)
{
    memset(ax, 0, sizeof(int32_t) * RG_POS_AXES * B * T);
    for (int k = 0; k < 12; k++) {
        ax[(1 * B + 0) * T + k + 1] = k / 4, ax[(2 * B + 0) * T + k + 1] = k % 4;
        ax[(0 * B + 1) * T + k + 1] = 1;
        ax[(1 * B + 1) * T + k + 1] = 1 + k / 3, ax[(2 * B + 1) * T + k + 1] = 1 + k % 3;
    }
}

static const struct {
    const char *file, *pos;
} FIXTURES[] = {
    {"learned-2d", "learned-2d"},
    {"sinusoidal-2d", "sinusoidal-2d"},
    {"alibi-2d-manhattan", "alibi-2d-manhattan"},
    {"alibi-2d-euclidean", "alibi-2d-euclidean"},
    {"t5-2d", "t5-2d"},
    {"t5-2d_buckets", "t5-2d"},
};
#define N_FIXTURES (int)(sizeof FIXTURES / sizeof FIXTURES[0])

static double max_diff(const rg_tensor *a, const double *want)
{
    double w = 0;
    for (int64_t i = 0; i < a->numel; i++) w = tc_max(w, fabs((double)a->data[i] - want[i]));
    return w;
}

static void test_fixtures(void **state)
{
    (void)state;
    int failed = 0; /* every fixture is reported before the test fails */
    for (int f = 0; f < N_FIXTURES; f++) {
        char file[256], path[256], got_name[64];
        snprintf(file, sizeof file, "tests/fixtures/model_%s.h5", FIXTURES[f].file);
        tc_h5_attr_str(file, "/", "pos_encoding", got_name, sizeof got_name);
        assert_string_equal(got_name, FIXTURES[f].pos);
        rg_model *m = tc_fx_model(file, NULL);
        int64_t n;
        int32_t *tokens = tc_h5_read_int(file, "/input/tokens", &n, NULL, NULL);
        int32_t *targets = tc_h5_read_int(file, "/input/targets", &n, NULL, NULL);
        int32_t *axes = tc_h5_read_int(file, "/input/axes", &n, NULL, NULL), mine[RG_POS_AXES * B * T];
        assert_int_equal(n, RG_POS_AXES * B * T);
        grid_axes(mine);
        assert_memory_equal(axes, mine, sizeof mine);
        rg_ctx *c = rg_ctx_new();
        rg_tensor *logits;
        if (rg_model_forward_axes(c, m, tokens, NULL, axes, B, T, NULL, &logits)) fail_msg("%s", rg_last_error());
        rg_tensor *loss = rg_cross_entropy(c, logits, targets, -100);
        rg_params_zero_grad(&m->params);
        rg_backward(c, loss, NULL);
        double *want = tc_h5_read(file, "/expected/logits", &n, NULL, NULL), *wl = tc_h5_read(file, "/expected/loss",
                                                                                            &n, NULL, NULL);
        double worst_logit = max_diff(logits, want), loss_err = fabs((double)loss->data[0] - wl[0]);
        double gmax = 0, worst_grad = 0;
        const char *worst_name = "";
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < m->params.n; i++) {
                rg_tensor *p = m->params.items[i];
                snprintf(path, sizeof path, "/expected/grads/%s", p->name);
                double *g = tc_h5_read(file, path, &n, NULL, NULL);
                assert_int_equal(n, p->numel);
                for (int64_t j = 0; j < n; j++) {
                    if (pass == 0) gmax = tc_max(gmax, fabs(g[j]));
                    else if (!(fabs((double)p->grad[j] - g[j]) / gmax <= worst_grad)) {
                        worst_grad = fabs((double)p->grad[j] - g[j]) / gmax;
                        worst_name = p->name;
                    }
                }
                free(g);
            }
        /* control: rows and columns swapped (alibi: no axes) */
        rg_set_grad_enabled(c, false);
        int32_t swapped[RG_POS_AXES * B * T];
        memcpy(swapped, axes, sizeof swapped);
        memcpy(swapped + B * T, axes + 2 * B * T, sizeof(int32_t) * B * T);
        memcpy(swapped + 2 * B * T, axes + B * T, sizeof(int32_t) * B * T);
        bool alibi = strncmp(FIXTURES[f].pos, "alibi", 5) == 0;
        rg_tensor *other;
        if (rg_model_forward_axes(c, m, tokens, NULL, alibi ? NULL : swapped, B, T, NULL, &other))
            fail_msg("%s", rg_last_error());
        double control = max_diff(other, want);
        print_message("%-20s logits %.2e  loss %.2e  grads %.2e (rel. to max |g| %.3g; worst %s); control %s %.3g\n",
                      FIXTURES[f].file, worst_logit, loss_err, worst_grad, gmax, worst_name,
                      alibi ? "no axes" : "swapped axes", control);
        if (!(worst_logit <= 1e-5 && loss_err <= 1e-5 && worst_grad <= 1e-5))
            print_message("FAIL %s differs from the fixture\n", file), failed++;
        if (!(control > 1e-3))
            print_message("FAIL %s: the control agrees with the fixture (%g)\n", file, control), failed++;
        free(want), free(wl), free(tokens), free(targets), free(axes);
        rg_ctx_free(c);
        rg_model_free(m);
    }
    assert_int_equal(failed, 0);
}

/* ------------------------------------------------------------------ models of each encoding */

static const rg_pos_kind KINDS[] = {RG_POS_LEARNED_2D, RG_POS_SINUSOIDAL_2D, RG_POS_ALIBI_2D_MANHATTAN,
                                    RG_POS_ALIBI_2D_EUCLIDEAN, RG_POS_T5_2D};
#define N_KINDS (int)(sizeof KINDS / sizeof KINDS[0])

static rg_model *small_model(rg_pos_kind k, uint64_t seed)
{
    rg_model_config cfg = tc_tiny_config(k);
    cfg.max_len = 16;
    assert_int_equal(rg_pos_config_set(&cfg, "t5_2d_num_buckets", 8), RG_OK); /* logarithmic buckets from 2 on */
    assert_int_equal(rg_pos_config_set(&cfg, "t5_2d_max_distance", 5), RG_OK);
    return tc_model_randn(&cfg, seed, 0.5);
}

static void tokens_of(int32_t *tok)
{
    rg_rng r;
    rg_rng_seed(&r, 11, 0);
    for (int i = 0; i < B * T; i++) tok[i] = (int32_t)rg_rng_below(&r, 7);
}

static rg_tensor *full_forward(rg_ctx *c, rg_model *m, const int32_t *tok, const int32_t *ax)
{
    rg_tensor *lg;
    if (rg_model_forward_axes(c, m, tok, NULL, ax, B, T, NULL, &lg)) fail_msg("%s", rg_last_error());
    return lg;
}

/* max |cached - full| over a decode of prefill 4 then one token per forward; shift: added to the column of
 * token 7 of row 1 in the decode only (the control) */
static double decode_diff(rg_model *m, const int32_t *tok, const int32_t *ax, const rg_tensor *full, int shift)
{
    const int V = m->cfg.vocab_size;
    rg_kv_cache kv;
    assert_int_equal(rg_kv_cache_init(&kv, m, B, T), RG_OK);
    double worst = 0;
    for (int t0 = 0; t0 < T;) {
        int len = t0 ? 1 : 4;
        int32_t tt[B * 4], aa[RG_POS_AXES * B * 4];
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len; t++) {
                tt[b * len + t] = tok[b * T + t0 + t];
                for (int a = 0; a < RG_POS_AXES; a++) aa[(a * B + b) * len + t] = ax[(a * B + b) * T + t0 + t];
                if (b == 1 && t0 + t == 7) aa[(2 * B + b) * len + t] += shift;
            }
        rg_ctx *d = rg_ctx_new();
        rg_set_grad_enabled(d, false);
        rg_tensor *lg;
        if (rg_model_forward_axes(d, m, tt, NULL, aa, B, len, &kv, &lg)) fail_msg("%s", rg_last_error());
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len; t++)
                for (int v = 0; v < V; v++)
                    worst = tc_max(worst, fabs(lg->data[(b * len + t) * V + v] - full->data[(b * T + t0 + t) * V + v]));
        rg_ctx_free(d);
        t0 += len;
    }
    rg_kv_cache_free(&kv);
    return worst;
}

static void test_kv_cache(void **state)
{
    (void)state;
    int32_t tok[B * T], ax[RG_POS_AXES * B * T];
    tokens_of(tok);
    grid_axes(ax);
    for (int k = 0; k < N_KINDS; k++) {
        rg_model *m = small_model(KINDS[k], 3);
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *full = full_forward(c, m, tok, ax);
        double d = decode_diff(m, tok, ax, full, 0), control = decode_diff(m, tok, ax, full, 3);
        print_message("%-20s KV-cache decode with axes vs full forward %.3g (control: one column moved by 3: %.3g)\n",
                      rg_pos_name(KINDS[k]), d, control);
        if (!(d <= 1e-5)) fail_msg("%s: cached decoding differs by %g", rg_pos_name(KINDS[k]), d);
        if (!(control > 1e-3)) fail_msg("%s: a moved column changes nothing (%g)", rg_pos_name(KINDS[k]), control);
        rg_ctx_free(c);
        rg_model_free(m);
    }
}

static void test_checkpoint_round_trip(void **state)
{
    (void)state;
    char dir[] = "/tmp/rg_grid_bias_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.h5", dir);
    int32_t tok[B * T], ax[RG_POS_AXES * B * T];
    tokens_of(tok);
    grid_axes(ax);
    for (int k = 0; k < N_KINDS; k++) {
        rg_model *m = small_model(KINDS[k], 4), *back = NULL, *other = small_model(KINDS[k], 5);
        if (rg_checkpoint_save(path, m, NULL, NULL)) fail_msg("save: %s", rg_last_error());
        if (rg_checkpoint_open(path, &back, NULL, NULL)) fail_msg("open: %s", rg_last_error());
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *a = full_forward(c, m, tok, ax), *b = full_forward(c, back, tok, ax);
        rg_tensor *o = full_forward(c, other, tok, ax);
        if (memcmp(a->data, b->data, sizeof(rg_real) * (size_t)a->numel))
            fail_msg("%s: logits after the round trip differ", rg_pos_name(KINDS[k]));
        double apart = 0;
        for (int64_t i = 0; i < a->numel; i++) apart = tc_max(apart, fabs(a->data[i] - o->data[i]));
        assert_true(apart > 1e-3); /* control: the comparison sees a different model */
        /* another encoding (or other t5-2d / learned-2d settings) is refused */
        rg_model_config cfg = m->cfg;
        cfg.pos = KINDS[(k + 1) % N_KINDS];
        if (KINDS[k] == RG_POS_T5_2D || KINDS[k] == RG_POS_LEARNED_2D) {
            cfg.pos = KINDS[k];
            const char *key = KINDS[k] == RG_POS_T5_2D ? "t5_2d_max_distance" : "learned_2d_max_cols";
            assert_int_equal(rg_pos_config_set(&cfg, key, 6), RG_OK);
        }
        rg_model *wrong;
        assert_int_equal(rg_model_new(&cfg, 1, &wrong), RG_OK);
        assert_int_not_equal(rg_checkpoint_load(path, wrong, NULL, NULL), RG_OK);
        print_message("%-20s checkpoint round trip: bitwise equal logits; refused by '%s': %s\n", rg_pos_name(KINDS[k]),
                      rg_pos_name(cfg.pos), rg_last_error());
        rg_model_free(wrong);
        rg_ctx_free(c);
        rg_model_free(m), rg_model_free(back), rg_model_free(other);
    }
    unlink(path);
    rmdir(dir);
}

static void test_errors(void **state)
{
    (void)state;
    int32_t tok[B * T], ax[RG_POS_AXES * B * T];
    tokens_of(tok);
    grid_axes(ax);
    rg_model_config cfg = tc_tiny_config(RG_POS_LEARNED_2D);
    assert_int_equal(rg_pos_config_set(&cfg, "learned_2d_max_rows", 4), RG_OK);
    assert_int_equal(rg_pos_config_set(&cfg, "learned_2d_max_cols", 4), RG_OK);
    rg_model *m = tc_model_randn(&cfg, 1, 0.5);
    assert_int_equal(m->params.items[1]->shape[0], 4);
    assert_string_equal(m->params.items[1]->name, "pos_emb_row.weight");
    assert_string_equal(m->params.items[2]->name, "pos_emb_col.weight");
    rg_ctx *c = rg_ctx_new();
    rg_tensor *lg;
    /* row 1 reaches row id 4 */
    assert_int_equal(rg_model_forward_axes(c, m, tok, NULL, ax, B, T, NULL, &lg), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "id 4 (token 23) is outside pos_emb_row.weight [0, 4)"));
    for (int i = 0; i < B * T; i++) ax[B * T + i] = ax[B * T + i] > 3 ? 3 : ax[B * T + i];
    assert_int_equal(rg_model_forward_axes(c, m, tok, NULL, ax, B, T, NULL, &lg), RG_OK);
    ax[2 * B * T + 5] = 4;
    assert_int_equal(rg_model_forward_axes(c, m, tok, NULL, ax, B, T, NULL, &lg), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "pos_emb_col.weight"));
    rg_ctx_free(c);
    rg_model_free(m);
    rg_model *bad;
    cfg = tc_tiny_config(RG_POS_SINUSOIDAL_2D);
    cfg.d_model = 6, cfg.n_heads = 1;
    assert_int_equal(rg_model_new(&cfg, 1, &bad), RG_ERR_ARG);
    if (!strstr(rg_last_error(), "d_model % 4")) fail_msg("%s", rg_last_error());
    cfg = tc_tiny_config(RG_POS_T5_2D);
    assert_int_equal(rg_pos_config_set(&cfg, "t5_2d_max_distance", 8), RG_OK);
    assert_int_equal(rg_model_new(&cfg, 1, &bad), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "t5_2d_max_distance 8"));
    /* opt-in: none of them is in --pos all */
    for (int k = 0; k < N_KINDS; k++) assert_true(rg_pos_encoding_of(KINDS[k])->flags & RG_POS_OPT_IN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_kv_cache),
        cmocka_unit_test(test_checkpoint_round_trip),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
