/* test_pos_grid_rot.c (float32): the rotary encodings of the position axes as model encodings (rope-2d,
 * rope-2d-pixtral, mrope; src/nn/pos_axial.c, src/nn/pos_mrope.c) against the PyTorch fixtures of
 * tools/gen_fixtures.py grid_rot_fixtures (tools/ref_grid_rot.py): a BOS then a 3x4 grid flattened row-major in
 * batch row 0, two 2x3 frames in row 1 (/input/axes [3, B, T]). For every fixture (a table run by one loop):
 *   - logits and loss within 1e-5, every gradient within 1e-4 of the largest expected gradient magnitude;
 *   - the control: rows and columns exchanged move the logits by more than 1e-2 (the comparison can fail);
 *   - KV-cache decoding with axes (a prefill of 4 tokens, then one per forward) equals the full forward (1e-5);
 *   - a checkpoint round trip: the settings (mrope_section_*) come back, the reloaded logits are bit for bit.
 * And: mrope without axes is rope-half bit for bit (with and without a rope_scaling extension); rope-2d's rotation
 * is the op rg_pos_axial_rope's bit for bit; configs the encodings cannot serve are refused with a message. */
#include "ckpt_helpers.h"
#include "nn/pos_ext.h"

typedef struct {
    const char *file;
    rg_pos_kind pos;
} grid_fixture;

static const grid_fixture FIXTURES[] = {
    {"tests/fixtures/model_rope-2d.h5", RG_POS_ROPE_2D},
    {"tests/fixtures/model_rope-2d-pixtral.h5", RG_POS_ROPE_2D_PIXTRAL},
    {"tests/fixtures/model_rope-2d_partial.h5", RG_POS_ROPE_2D},
    {"tests/fixtures/model_mrope.h5", RG_POS_MROPE},
    {"tests/fixtures/model_mrope_section.h5", RG_POS_MROPE},
};
#define N_FIXTURES (int)(sizeof FIXTURES / sizeof *FIXTURES)

typedef struct {
    rg_model *m;
    int32_t *tokens, *targets, *axes;
    int B, T;
} loaded;

static loaded load(const grid_fixture *fx)
{
    loaded L;
    rg_model_config cfg = tc_fx_config(fx->file);
    if (cfg.pos != fx->pos) fail_msg("%s: pos_encoding %s, expected %s", fx->file, rg_pos_name(cfg.pos),
                                     rg_pos_name(fx->pos));
    L.m = tc_fx_model(fx->file, &cfg);
    int64_t n;
    int shape[4], ndim;
    L.tokens = tc_h5_read_int(fx->file, "/input/tokens", &n, shape, &ndim);
    L.B = shape[0], L.T = shape[1];
    L.targets = tc_h5_read_int(fx->file, "/input/targets", &n, NULL, NULL);
    L.axes = tc_h5_read_int(fx->file, "/input/axes", &n, NULL, NULL);
    assert_int_equal(n, (int64_t)RG_POS_AXES * L.B * L.T);
    return L;
}

static void unload(loaded *L)
{
    rg_model_free(L->m);
    free(L->tokens), free(L->targets), free(L->axes);
}

static rg_tensor *forward(rg_ctx *c, rg_model *m, const int32_t *tok, const int32_t *ax, int B, int T)
{
    rg_tensor *logits;
    if (rg_model_forward_axes(c, m, tok, NULL, ax, B, T, NULL, &logits)) fail_msg("forward: %s", rg_last_error());
    return logits;
}

static double max_diff(const rg_real *a, const double *b, int64_t n)
{
    double w = 0;
    for (int64_t i = 0; i < n; i++) w = tc_max(w, fabs((double)a[i] - b[i]));
    return w;
}

/* logits, loss, gradients; the control with rows and columns exchanged */
static void check_against_torch(const grid_fixture *fx, loaded *L)
{
    rg_ctx *c = rg_ctx_new();
    rg_tensor *logits = forward(c, L->m, L->tokens, L->axes, L->B, L->T);
    rg_tensor *loss = rg_cross_entropy(c, logits, L->targets, -100);
    rg_params_zero_grad(&L->m->params);
    rg_backward(c, loss, NULL);
    int64_t n;
    double *want = tc_h5_read(fx->file, "/expected/logits", &n, NULL, NULL), *wl;
    assert_int_equal(n, logits->numel);
    double worst_logit = max_diff(logits->data, want, n);
    wl = tc_h5_read(fx->file, "/expected/loss", &n, NULL, NULL);
    double loss_err = fabs((double)loss->data[0] - wl[0]), gmax = 0, worst_grad = 0;
    free(wl);
    char path[256];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < L->m->params.n; i++) {
            rg_tensor *p = L->m->params.items[i];
            snprintf(path, sizeof path, "/expected/grads/%s", p->name);
            double *g = tc_h5_read(fx->file, path, &n, NULL, NULL);
            assert_int_equal(n, p->numel);
            for (int64_t j = 0; j < n; j++)
                if (pass == 0) gmax = tc_max(gmax, fabs(g[j]));
                else worst_grad = tc_max(worst_grad, fabs((double)p->grad[j] - g[j]) / gmax);
            free(g);
        }
    /* the control: the row and column axes exchanged */
    int64_t bt = (int64_t)L->B * L->T;
    int32_t *sw = malloc(sizeof(int32_t) * RG_POS_AXES * bt);
    memcpy(sw, L->axes, sizeof(int32_t) * bt);
    memcpy(sw + bt, L->axes + 2 * bt, sizeof(int32_t) * bt);
    memcpy(sw + 2 * bt, L->axes + bt, sizeof(int32_t) * bt);
    rg_set_grad_enabled(c, false);
    double moved = max_diff(forward(c, L->m, L->tokens, sw, L->B, L->T)->data, want, logits->numel);
    print_message("%-42s logits %.2e  loss %.2e  grads %.2e (rel. to max |g| %.3g); rows<->cols moves %.3g\n",
                  fx->file, worst_logit, loss_err, worst_grad, gmax, moved);
    assert_true(worst_logit <= 1e-5 && loss_err <= 1e-5 && worst_grad <= 1e-4);
    assert_true(moved > 1e-2);
    free(sw), free(want);
    rg_ctx_free(c);
}

/* a prefill of 4 tokens, then one token per forward, each step's logits against the full forward's */
static void check_cache(const grid_fixture *fx, loaded *L)
{
    int B = L->B, T = L->T, V = L->m->cfg.vocab_size;
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *full = forward(c, L->m, L->tokens, L->axes, B, T);
    rg_kv_cache kv;
    assert_int_equal(rg_kv_cache_init(&kv, L->m, B, T), RG_OK);
    double worst = 0;
    int32_t *tt = malloc(sizeof(int32_t) * B * 4), *pp = malloc(sizeof(int32_t) * B * 4),
            *aa = malloc(sizeof(int32_t) * RG_POS_AXES * B * 4);
    for (int t0 = 0; t0 < T;) {
        int len = t0 ? 1 : 4;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len; t++) {
                tt[b * len + t] = L->tokens[b * T + t0 + t];
                pp[b * len + t] = t0 + t;
                for (int a = 0; a < RG_POS_AXES; a++) aa[(a * B + b) * len + t] = L->axes[(a * B + b) * T + t0 + t];
            }
        rg_ctx *d = rg_ctx_new();
        rg_set_grad_enabled(d, false);
        rg_tensor *lg;
        assert_int_equal(rg_model_forward_axes(d, L->m, tt, pp, aa, B, len, &kv, &lg), RG_OK);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < len; t++)
                for (int v = 0; v < V; v++)
                    worst = tc_max(worst, fabs(lg->data[(b * len + t) * V + v] - full->data[(b * T + t0 + t) * V + v]));
        rg_ctx_free(d);
        t0 += len;
    }
    print_message("%-42s KV-cache decode with axes vs full forward: %.2e\n", fx->file, worst);
    assert_true(worst <= 1e-5);
    rg_kv_cache_free(&kv);
    free(tt), free(pp), free(aa);
    rg_ctx_free(c);
}

/* save, read the config back (the declared settings), load into a fresh model: logits bit for bit */
static void check_checkpoint(const grid_fixture *fx, loaded *L, int i)
{
    char p[256], name[32];
    snprintf(name, sizeof name, "grid%d.h5", i);
    path_in(p, sizeof p, name);
    assert_int_equal(rg_checkpoint_save(p, L->m, NULL, NULL), RG_OK);
    rg_model_config got;
    assert_int_equal(rg_checkpoint_read_config(p, &got, NULL), RG_OK);
    assert_int_equal(got.pos, fx->pos);
    const rg_pos_encoding *e = rg_pos_encoding_of(fx->pos);
    for (int j = 0; j < e->n_settings; j++)
        assert_true(rg_pos_config_get(&got, e->settings[j].name) == rg_pos_config_get(&L->m->cfg, e->settings[j].name));
    rg_model *m2;
    assert_int_equal(rg_model_new(&got, 11, &m2), RG_OK);
    assert_int_equal(rg_checkpoint_load(p, m2, NULL, NULL), RG_OK);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *a = forward(c, L->m, L->tokens, L->axes, L->B, L->T), *b = forward(c, m2, L->tokens, L->axes, L->B, L->T);
    assert_memory_equal(a->data, b->data, sizeof(rg_real) * (size_t)a->numel);
    rg_ctx_free(c);
    rg_model_free(m2);
}

static void test_fixtures(void **state)
{
    (void)state;
    for (int i = 0; i < N_FIXTURES; i++) {
        loaded L = load(&FIXTURES[i]);
        check_against_torch(&FIXTURES[i], &L);
        check_cache(&FIXTURES[i], &L);
        check_checkpoint(&FIXTURES[i], &L, i);
        unload(&L);
    }
    /* the settings of the explicit section are in its checkpoint */
    rg_model_config cfg = tc_fx_config(FIXTURES[4].file);
    assert_true(rg_pos_config_get(&cfg, "mrope_section_h") == 2 && rg_pos_config_get(&cfg, "mrope_section_w") == 1);
}

static rg_model_config grid_config(rg_pos_kind pos)
{
    rg_model_config cfg = tc_tiny_config(pos);
    cfg.d_model = 32, cfg.n_heads = 2; /* head_dim 16: 8 pairs, M-RoPE's derived section [2, 3, 3] */
    return cfg;
}

/* Without axes (1-D tasks) every axis is the position: M-RoPE is rope-half bit for bit; rows that do not share
 * their positions, and with YaRN (the extension reaches both through the same 1-D table). */
static void test_mrope_is_rope_half_without_axes(void **state)
{
    (void)state;
    enum { B = 2, T = 9 };
    int32_t tok[B * T], pos[B * T];
    for (int i = 0; i < B * T; i++) tok[i] = (i * 5 + 1) % 7, pos[i] = i % T + 3 * (i / T);
    for (int ext = 0; ext < 2; ext++) {
        rg_model_config a = grid_config(RG_POS_MROPE), b = grid_config(RG_POS_ROPE_HALF);
        a.rope_ext = b.rope_ext = ext ? RG_ROPE_EXT_YARN : RG_ROPE_EXT_NONE;
        a.rope_scale = b.rope_scale = ext ? 2 : 1;
        rg_model *ma = tc_model_randn(&a, 6, 0.5), *mb = tc_model_randn(&b, 6, 0.5);
        rg_ctx *c = rg_ctx_new();
        rg_set_grad_enabled(c, false);
        rg_tensor *la, *lb;
        assert_int_equal(rg_model_forward(c, ma, tok, pos, B, T, NULL, &la), RG_OK);
        assert_int_equal(rg_model_forward(c, mb, tok, pos, B, T, NULL, &lb), RG_OK);
        assert_memory_equal(la->data, lb->data, sizeof(rg_real) * (size_t)la->numel);
        rg_ctx_free(c);
        rg_model_free(ma), rg_model_free(mb);
    }
}

/* rope-2d's rotation of q and k (the descriptor's prepare and rotate_qk) is the op rg_pos_axial_rope's, bit for bit;
 * rope-2d-pixtral's is not (another layout), nor rope-2d's with rows and columns exchanged. */
static void test_rope_2d_is_the_axial_op(void **state)
{
    (void)state;
    enum { B = 2, T = 6, D = 32, H = 2 };
    int32_t pos[B * T], ax[RG_POS_AXES * B * T];
    for (int i = 0; i < B * T; i++) {
        pos[i] = i % T;
        ax[i] = 0, ax[B * T + i] = i % T / 3 + i / T, ax[2 * B * T + i] = i % 3 + 5 * (i / T);
    }
    rg_rng rng;
    rg_rng_seed(&rng, 21, 0);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *x = rg_tensor_new(c, 3, (int[]){B, T, D});
    tc_fill_randn(x, &rng, 1);
    rg_tensor *op = rg_pos_axial_rope(c, x, H, 10000.0, ax + 2 * B * T, ax + B * T);
    rg_tensor *swapped = rg_pos_axial_rope(c, x, H, 10000.0, ax + B * T, ax + 2 * B * T);
    rg_pos_summary s;
    rg_pos_summarize_axes(&s, pos, pos, ax, ax, B, T, T);
    for (int k = 0; k < 2; k++) {
        rg_model_config cfg = grid_config(k ? RG_POS_ROPE_2D_PIXTRAL : RG_POS_ROPE_2D);
        assert_int_equal(rg_model_config_validate(&cfg), RG_OK);
        const rg_pos_encoding *e = rg_pos_encoding_of(cfg.pos);
        rg_tensor *q = x, *kk = x;
        e->rotate_qk(c, e->prepare(c, NULL, &cfg, &s), &q, &kk);
        bool same = memcmp(q->data, op->data, sizeof(rg_real) * (size_t)x->numel) == 0;
        if (same != !k) fail_msg("%s: rotation %s the axial op's", e->name, same ? "equals" : "differs from");
        assert_true(memcmp(q->data, swapped->data, sizeof(rg_real) * (size_t)x->numel) != 0);
        assert_memory_equal(q->data, kk->data, sizeof(rg_real) * (size_t)x->numel);
    }
    rg_ctx_free(c);
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        rg_pos_kind pos;
        int rotary_dim;
        const char *setting;
        double v;
        const char *why;
    } BAD[] = {
        {RG_POS_ROPE_2D, 6, NULL, 0, "rope-2d needs rotary_dim % 4 == 0"},
        {RG_POS_ROPE_2D_PIXTRAL, 10, NULL, 0, "rope-2d-pixtral needs rotary_dim % 4 == 0"},
        {RG_POS_MROPE, 0, "mrope_section_t", 1, "mrope_section [1, 0, 0] must sum to rotary_dim / 2 = 8 pairs"},
        {RG_POS_MROPE, 8, "mrope_section_w", 8, "mrope_section [0, 0, 8] must sum to rotary_dim / 2 = 4 pairs"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        rg_model_config cfg = grid_config(BAD[i].pos);
        cfg.rotary_dim = BAD[i].rotary_dim;
        if (BAD[i].setting) assert_int_equal(rg_pos_config_set(&cfg, BAD[i].setting, BAD[i].v), RG_OK);
        assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
        if (!strstr(rg_last_error(), BAD[i].why)) fail_msg("case %zu: no '%s' in '%s'", i, BAD[i].why, rg_last_error());
    }
    /* the derived sections (Qwen2-VL's [16, 24, 24] of 64 pairs, scaled) */
    static const int DERIVED[][4] = {{128, 16, 24, 24}, {16, 2, 3, 3}, {8, 0, 2, 2}, {4, 0, 1, 1}, {32, 4, 6, 6}};
    for (size_t i = 0; i < sizeof DERIVED / sizeof *DERIVED; i++) {
        rg_model_config cfg = grid_config(RG_POS_MROPE);
        cfg.d_model = 2 * DERIVED[i][0];
        assert_int_equal(rg_model_config_validate(&cfg), RG_OK);
        int sec[3];
        rg_mrope_section_of(&cfg, sec);
        if (sec[0] != DERIVED[i][1] || sec[1] != DERIVED[i][2] || sec[2] != DERIVED[i][3])
            fail_msg("head_dim %d: section [%d, %d, %d]", DERIVED[i][0], sec[0], sec[1], sec[2]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_mrope_is_rope_half_without_axes),
        cmocka_unit_test(test_rope_2d_is_the_axial_op),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
