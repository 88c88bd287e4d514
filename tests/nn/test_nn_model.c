/* test_nn_model.c (float32): the reference model's structure and its guards.
 *   - parameter count of the default config (printed, against a hand computation) and the registration order
 *     (PyTorch state_dict order of tools/ref_model.py, including xl and t5 extras);
 *   - initialization (N(0, 0.02) weights, zero biases, unit LayerNorm weights, seeded and reproducible);
 *   - KV-cache greedy decoding (B = 2) gives the logits of the full forward at every position, within 1e-5, for every
 *     position encoding (fire with its threshold L = 4.5 inside the decoded range);
 *   - bad input: an out-of-range token id returns RG_ERR_ARG and leaves the model, tape and cache untouched; cache
 *     overflow, a cache in grad mode, and bad configs are refused. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ structure */

static void test_param_count_default(void **state)
{
    rg_model_config cfg = rg_model_config_default();
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 1, &m), RG_OK);
    const int64_t V = 30, d = 64, ff = 256, L = 2;
    const int64_t per_block = 2 * d               /* ln1 */
                              + 4 * (d * d + d)   /* q, k, v, o projections with bias */
                              + 2 * d             /* ln2 */
                              + (ff * d + ff)     /* fc1 */
                              + (d * ff + d);     /* fc2 */
    const int64_t want = V * d + L * per_block + 2 * d + V * d; /* tok_emb, blocks, ln_f, lm_head */
    print_message("default reference model: %lld parameters (hand count %lld = 1920 + 2 x %lld + 128 + 1920), "
                  "%d tensors\n", (long long)rg_params_numel(&m->params), (long long)want, (long long)per_block,
                  m->params.n);
    assert_int_equal(want, 103936); /* also sum(p.numel()) of tools/ref_model.py Model(Config()) */
    assert_int_equal(rg_params_numel(&m->params), want);
    assert_int_equal(m->params.n, 1 + 2 * 16 + 3);
    rg_model_free(m);
}

/* The expected state_dict names for one layer (as printed by torch 1.13 for tools/ref_model.py). */
static const char *const ORDER_NONE[] = {
    "tok_emb.weight", "blocks.0.ln1.weight", "blocks.0.ln1.bias", "blocks.0.attn.q_proj.weight",
    "blocks.0.attn.q_proj.bias", "blocks.0.attn.k_proj.weight", "blocks.0.attn.k_proj.bias",
    "blocks.0.attn.v_proj.weight", "blocks.0.attn.v_proj.bias", "blocks.0.attn.o_proj.weight",
    "blocks.0.attn.o_proj.bias", "blocks.0.ln2.weight", "blocks.0.ln2.bias", "blocks.0.mlp.fc1.weight",
    "blocks.0.mlp.fc1.bias", "blocks.0.mlp.fc2.weight", "blocks.0.mlp.fc2.bias", "ln_f.weight", "ln_f.bias",
    "lm_head.weight", NULL};
static const char *const ORDER_XL[] = {
    "tok_emb.weight", "blocks.0.ln1.weight", "blocks.0.ln1.bias", "blocks.0.attn.u", "blocks.0.attn.v",
    "blocks.0.attn.q_proj.weight", "blocks.0.attn.q_proj.bias", "blocks.0.attn.k_proj.weight",
    "blocks.0.attn.k_proj.bias", "blocks.0.attn.v_proj.weight", "blocks.0.attn.v_proj.bias",
    "blocks.0.attn.o_proj.weight", "blocks.0.attn.o_proj.bias", "blocks.0.attn.r_proj.weight", "blocks.0.ln2.weight",
    "blocks.0.ln2.bias", "blocks.0.mlp.fc1.weight", "blocks.0.mlp.fc1.bias", "blocks.0.mlp.fc2.weight",
    "blocks.0.mlp.fc2.bias", "ln_f.weight", "ln_f.bias", "lm_head.weight", NULL};
static const char *const ORDER_T5[] = {
    "tok_emb.weight", "blocks.0.ln1.weight", "blocks.0.ln1.bias", "blocks.0.attn.q_proj.weight",
    "blocks.0.attn.q_proj.bias", "blocks.0.attn.k_proj.weight", "blocks.0.attn.k_proj.bias",
    "blocks.0.attn.v_proj.weight", "blocks.0.attn.v_proj.bias", "blocks.0.attn.o_proj.weight",
    "blocks.0.attn.o_proj.bias", "blocks.0.ln2.weight", "blocks.0.ln2.bias", "blocks.0.mlp.fc1.weight",
    "blocks.0.mlp.fc1.bias", "blocks.0.mlp.fc2.weight", "blocks.0.mlp.fc2.bias", "rel_bias.weight", "ln_f.weight",
    "ln_f.bias", "lm_head.weight", NULL};
static const char *const ORDER_FIRE[] = {
    "tok_emb.weight", "blocks.0.ln1.weight", "blocks.0.ln1.bias", "blocks.0.attn.q_proj.weight",
    "blocks.0.attn.q_proj.bias", "blocks.0.attn.k_proj.weight", "blocks.0.attn.k_proj.bias",
    "blocks.0.attn.v_proj.weight", "blocks.0.attn.v_proj.bias", "blocks.0.attn.o_proj.weight",
    "blocks.0.attn.o_proj.bias", "blocks.0.attn.fire.c", "blocks.0.attn.fire.L_multiplier",
    "blocks.0.attn.fire.mlp.0.weight", "blocks.0.attn.fire.mlp.0.bias", "blocks.0.attn.fire.mlp.2.weight",
    "blocks.0.attn.fire.mlp.2.bias", "blocks.0.ln2.weight", "blocks.0.ln2.bias", "blocks.0.mlp.fc1.weight",
    "blocks.0.mlp.fc1.bias", "blocks.0.mlp.fc2.weight", "blocks.0.mlp.fc2.bias", "ln_f.weight", "ln_f.bias",
    "lm_head.weight", NULL};
static const char *const ORDER_LEARNED_HEAD[] = {"tok_emb.weight", "pos_emb.weight", "blocks.0.ln1.weight", NULL};

static void check_order(rg_pos_kind pos, const char *const *want, bool prefix_only)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.n_layers = 1;
    cfg.pos = pos;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 1, &m), RG_OK);
    int n = 0;
    for (; want[n]; n++) {
        assert_true(n < m->params.n);
        if (strcmp(m->params.items[n]->name, want[n]))
            fail_msg("%s: parameter %d is %s, PyTorch has %s", rg_pos_name(pos), n, m->params.items[n]->name, want[n]);
    }
    if (!prefix_only) assert_int_equal(n, m->params.n);
    rg_model_free(m);
}

static void test_param_order(void **state)
{
    check_order(RG_POS_NONE, ORDER_NONE, false);
    check_order(RG_POS_XL, ORDER_XL, false);
    check_order(RG_POS_T5, ORDER_T5, false);
    check_order(RG_POS_LEARNED, ORDER_LEARNED_HEAD, true);
    check_order(RG_POS_ROPE, ORDER_NONE, false);
    check_order(RG_POS_FIRE, ORDER_FIRE, false);
}

static void test_init(void **state)
{
    rg_model_config cfg = rg_model_config_default();
    rg_model *m, *m2, *m3;
    assert_int_equal(rg_model_new(&cfg, 42, &m), RG_OK);
    assert_int_equal(rg_model_new(&cfg, 42, &m2), RG_OK);
    assert_int_equal(rg_model_new(&cfg, 43, &m3), RG_OK);
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        assert_memory_equal(p->data, m2->params.items[i]->data, (size_t)p->numel * sizeof(rg_real));
        bool is_ln = strstr(p->name, "ln") != NULL, is_bias = strstr(p->name, ".bias") != NULL;
        double s = 0, s2 = 0;
        for (int64_t j = 0; j < p->numel; j++) { s += p->data[j]; s2 += (double)p->data[j] * p->data[j]; }
        double mean = s / p->numel, sd = sqrt(s2 / p->numel - mean * mean);
        if (is_bias) assert_true(s2 == 0);
        else if (is_ln) assert_true(mean == 1 && sd < 1e-6);
        else {
            assert_true(fabs(sd - 0.02) < 0.002); /* >= 1920 draws each */
            assert_true(fabs(mean) < 0.002);
            assert_true(memcmp(p->data, m3->params.items[i]->data, (size_t)p->numel * sizeof(rg_real)) != 0);
        }
    }
    rg_model_free(m);
    rg_model_free(m2);
    rg_model_free(m3);
    /* sinusoidal: tok_emb N(0, d^-1/2) */
    cfg.pos = RG_POS_SINUSOIDAL;
    assert_int_equal(rg_model_new(&cfg, 42, &m), RG_OK);
    double s2 = 0;
    for (int64_t j = 0; j < m->tok_emb->numel; j++) s2 += (double)m->tok_emb->data[j] * m->tok_emb->data[j];
    assert_true(fabs(sqrt(s2 / m->tok_emb->numel) - 0.125) < 0.01);
    rg_model_free(m);
}

/* ------------------------------------------------------------------ KV cache */

static rg_model *small_model(rg_pos_kind pos, uint64_t seed)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 11;
    cfg.d_model = 32;
    cfg.n_heads = 4;
    cfg.n_layers = 2;
    cfg.d_ff = 64;
    cfg.max_len = 32;
    cfg.pos = pos;
    rg_model *m;
    if (rg_model_new(&cfg, seed, &m)) fail_msg("rg_model_new(%s): %s", rg_pos_name(pos), rg_last_error());
    /* larger weights than the 0.02 init so that attention is far from uniform and positions matter */
    rg_rng rng;
    rg_rng_seed(&rng, seed, 9);
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        if (strstr(p->name, "ln")) continue;
        tc_fill_randn(p, &rng, p->ndim == 2 ? 0.3 : 0.1);
        /* fire: threshold L = 4.5, so that the decoded queries (positions 3..11) lie past it */
        if (strstr(p->name, "fire.L_multiplier")) p->data[0] = (rg_real)(4.5 / 512);
    }
    return m;
}

static int argmax_row(const rg_real *x, int n)
{
    int best = 0;
    for (int j = 1; j < n; j++)
        if (x[j] > x[best]) best = j;
    return best;
}

/* Greedy decoding of B = 2 rows with the cache (prompt of 3 tokens in one chunk, then 9 single steps) against the
 * full no-cache forward of the whole sequence. Returns the largest logit difference. */
static double kv_decode_diff(rg_pos_kind pos)
{
    enum { B = 2, P = 3, STEPS = 9, L = P + STEPS };
    rg_model *m = small_model(pos, 3 + pos);
    const int V = m->cfg.vocab_size;
    int32_t seq[B][L] = {{1, 7, 3}, {4, 4, 9}};
    rg_real *cached = malloc((size_t)B * L * V * sizeof *cached);
    rg_kv_cache kv;
    assert_int_equal(rg_kv_cache_init(&kv, m, B, L), RG_OK);
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    int32_t in[B * P];
    for (int b = 0; b < B; b++) memcpy(in + b * P, seq[b], P * sizeof(int32_t));
    rg_tensor *logits;
    assert_int_equal(rg_model_forward(c, m, in, NULL, B, P, &kv, &logits), RG_OK);
    for (int b = 0; b < B; b++)
        memcpy(cached + ((size_t)b * L) * V, logits->data + (size_t)b * P * V, (size_t)P * V * sizeof(rg_real));
    for (int t = P; t < L; t++) {
        int32_t next[B];
        for (int b = 0; b < B; b++) {
            const rg_real *last = cached + ((size_t)b * L + t - 1) * V;
            next[b] = seq[b][t] = argmax_row(last, V);
        }
        rg_ctx_reset(c);
        assert_int_equal(rg_model_forward(c, m, next, NULL, B, 1, &kv, &logits), RG_OK);
        for (int b = 0; b < B; b++)
            memcpy(cached + ((size_t)b * L + t) * V, logits->data + (size_t)b * V, (size_t)V * sizeof(rg_real));
    }
    assert_int_equal(kv.len, L);
    /* full forward over the generated sequence */
    rg_ctx_reset(c);
    assert_int_equal(rg_model_forward(c, m, &seq[0][0], NULL, B, L, NULL, &logits), RG_OK);
    double worst = 0;
    for (int64_t i = 0; i < logits->numel; i++) worst = tc_max(worst, fabs((double)logits->data[i] - cached[i]));
    rg_ctx_free(c);
    rg_kv_cache_free(&kv);
    free(cached);
    rg_model_free(m);
    return worst;
}

static void test_kv_cache_decoding(void **state)
{
    for (int k = 0; k < rg_pos_count(); k++) {
        double d = kv_decode_diff((rg_pos_kind)k);
        print_message("KV-cache greedy decoding (B 2, 12 tokens), %-10s max |logit diff| vs full forward %.3g\n",
                      rg_pos_name((rg_pos_kind)k), d);
        if (!(d <= 1e-5)) fail_msg("%s: cached decoding differs from the full forward by %.3g", rg_pos_name(k), d);
    }
}

/* ------------------------------------------------------------------ bad input */

static void test_bad_token(void **state)
{
    rg_model *m = small_model(RG_POS_NONE, 5);
    rg_ctx *c = rg_ctx_new();
    const int V = m->cfg.vocab_size;
    unsigned *versions = malloc((size_t)m->params.n * sizeof *versions);
    for (int i = 0; i < m->params.n; i++) versions[i] = m->params.items[i]->version;
    rg_real w0 = m->tok_emb->data[0];
    int32_t tokens[2][3] = {{1, 2, 3}, {4, V, 5}};
    rg_tensor *logits = (rg_tensor *)1;
    size_t used = c->arena.used;
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 2, 3, NULL, &logits), RG_ERR_ARG);
    print_message("out-of-range token: %s\n", rg_last_error());
    assert_non_null(strstr(rg_last_error(), "token id 11"));
    assert_null(logits);
    assert_int_equal(c->tape_len, 0);
    assert_int_equal(c->arena.used, used);
    tokens[1][1] = -1;
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 2, 3, NULL, &logits), RG_ERR_ARG);
    assert_int_equal(c->tape_len, 0);
    /* positions outside [0, RG_MAX_POSITION) are refused before anything is recorded */
    tokens[1][1] = 5;
    int32_t bad_pos[2][3] = {{0, 1, 2}, {0, -1, 2}};
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], &bad_pos[0][0], 2, 3, NULL, &logits), RG_ERR_ARG);
    assert_non_null(strstr(rg_last_error(), "position -1"));
    bad_pos[1][1] = RG_MAX_POSITION;
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], &bad_pos[0][0], 2, 3, NULL, &logits), RG_ERR_ARG);
    assert_int_equal(c->tape_len, 0);
    assert_int_equal(c->arena.used, used);
    tokens[1][1] = -1; /* a bad token again for the cache cases below */
    for (int i = 0; i < m->params.n; i++) assert_int_equal(m->params.items[i]->version, versions[i]);
    assert_true(m->tok_emb->data[0] == w0);
    /* with a cache: nothing appended */
    rg_kv_cache kv;
    assert_int_equal(rg_kv_cache_init(&kv, m, 2, 4), RG_OK);
    rg_set_grad_enabled(c, false);
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 2, 3, &kv, &logits), RG_ERR_ARG);
    assert_int_equal(kv.len, 0);
    /* the model still works afterwards */
    tokens[1][1] = 0;
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 2, 3, &kv, &logits), RG_OK);
    assert_int_equal(kv.len, 3);
    /* overflow: 3 cached + 3 new > 4 */
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 2, 3, &kv, &logits), RG_ERR_ARG);
    print_message("cache overflow: %s\n", rg_last_error());
    assert_int_equal(kv.len, 3);
    /* a cache while recording gradients, and a cache of the wrong batch */
    rg_set_grad_enabled(c, true);
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 2, 1, &kv, &logits), RG_ERR_ARG);
    rg_set_grad_enabled(c, false);
    assert_int_equal(rg_model_forward(c, m, &tokens[0][0], NULL, 1, 1, &kv, &logits), RG_ERR_ARG);
    rg_kv_cache_reset(&kv);
    assert_int_equal(kv.len, 0);
    rg_kv_cache_free(&kv);
    free(versions);
    rg_ctx_free(c);
    rg_model_free(m);
}

static void test_bad_config(void **state)
{
    rg_model *m = (rg_model *)1;
    rg_model_config cfg = rg_model_config_default();
    assert_int_equal(rg_model_config_validate(&cfg), RG_OK);
    cfg.n_heads = 5; /* 64 % 5 */
    assert_int_equal(rg_model_new(&cfg, 1, &m), RG_ERR_ARG);
    assert_null(m);
    print_message("bad config: %s\n", rg_last_error());
    cfg = rg_model_config_default();
    cfg.rotary_dim = 7;
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    cfg.rotary_dim = 18; /* > head_dim 16 */
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    cfg = rg_model_config_default();
    cfg.vocab_size = 0;
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    cfg = rg_model_config_default();
    cfg.pos = (rg_pos_kind)rg_pos_count(); /* no encoding has that id */
    assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
    /* the FIRE settings (declared by the encoding; 0 = default): negative or non-finite values are refused when
     * set (rg_pos_config_set) and when written into the config directly (validate), for every encoding */
    static const struct { const char *name; double v; } BAD_FIRE[] = {
        {"fire_mlp_width", -1}, {"fire_mlp_width", 1 << 17}, {"fire_mlp_width", 2.5}, {"fire_init_c", NAN},
        {"fire_init_L", -512}, {"fire_init_L", INFINITY}, {"fire_eps", -1e-6}};
    for (size_t i = 0; i < sizeof BAD_FIRE / sizeof *BAD_FIRE; i++) {
        cfg = rg_model_config_default();
        cfg.pos = i % 2 ? RG_POS_FIRE : RG_POS_NONE;
        assert_int_equal(rg_pos_config_set(&cfg, BAD_FIRE[i].name, BAD_FIRE[i].v), RG_ERR_ARG);
        assert_non_null(strstr(rg_last_error(), BAD_FIRE[i].name));
        assert_int_equal(cfg.n_pos_values, 0);
        cfg.n_pos_values = 1;
        snprintf(cfg.pos_values[0].name, RG_POS_NAME_MAX, "%s", BAD_FIRE[i].name);
        cfg.pos_values[0].value = BAD_FIRE[i].v;
        assert_int_equal(rg_model_config_validate(&cfg), RG_ERR_ARG);
        assert_non_null(strstr(rg_last_error(), BAD_FIRE[i].name));
    }
    cfg = rg_model_config_default();
    cfg.pos = RG_POS_FIRE;
    assert_int_equal(rg_pos_config_set(&cfg, "fire_mlp_width", 8), RG_OK);
    assert_int_equal(rg_pos_config_set(&cfg, "fire_init_c", -0.5), RG_OK); /* psi uses |c x| */
    assert_int_equal(rg_pos_config_set(&cfg, "fire_init_L", 64), RG_OK);
    assert_int_equal(rg_pos_config_set(&cfg, "fire_eps", 1e-3), RG_OK);
    assert_int_equal(rg_model_new(&cfg, 1, &m), RG_OK);
    assert_int_equal(rg_params_find(&m->params, "blocks.1.attn.fire.mlp.2.weight")->shape[1], 8);
    assert_true(rg_params_find(&m->params, "blocks.0.attn.fire.c")->data[0] == (rg_real)-0.5);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_count_default),
        cmocka_unit_test(test_param_order),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_kv_cache_decoding),
        cmocka_unit_test(test_bad_token),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
