/* test_pos_fire.c (float32): the FIRE encoding of the reference model (pos "fire") through a checkpoint: its
 * settings and parameters survive save / read_config / load (identical logits), and a checkpoint written before FIRE
 * (no fire_* rows in /config) reads as the defaults. The model's FIRE is checked against PyTorch in
 * test_pos_fixtures.c, by finite differences in gradcheck_pos.c and with a KV cache in test_nn_model.c; the op in
 * test_enc.c / gradcheck_enc.c. */
#include "common.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FIRE through a checkpoint: non-default FIRE settings and trained-looking parameters are saved, the config read
 * back (every FIRE field equal), loaded into a model built from it: identical logits. Then the four FIRE rows are
 * deleted from /config (a file from before FIRE): they read as 0 = the defaults, and a default-config model loads
 * it. Set ROPEGRAD_KEEP_FIRE=dir to keep dir/fire.h5 and dir/fire_logits.h5 (/tokens, /logits) for
 * tools/ckpt_to_torch.py --logits. */
static void write_logits(const char *path, const int32_t *tok, int B, int T, const rg_tensor *logits)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hsize_t d2[2] = {(hsize_t)B, (hsize_t)T}, d3[3] = {(hsize_t)B, (hsize_t)T, (hsize_t)logits->shape[2]};
    hid_t s = H5Screate_simple(2, d2, NULL), d = H5Dcreate2(f, "tokens", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT,
                                                             H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, tok) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    s = H5Screate_simple(3, d3, NULL);
    d = H5Dcreate2(f, "logits", H5T_IEEE_F32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, logits->data) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
}

static void test_fire_checkpoint(void **state)
{
    char dir[] = "/tmp/rg_test_fire_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.h5", dir);
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 11, cfg.d_model = 16, cfg.n_heads = 2, cfg.n_layers = 2, cfg.d_ff = 32, cfg.max_len = 24;
    cfg.pos = RG_POS_FIRE;
    static const char *const KEYS[4] = {"fire_mlp_width", "fire_init_c", "fire_init_L", "fire_eps"};
    const double vals[4] = {6, 0.25, 5, 1e-4};
    for (int i = 0; i < 4; i++) assert_int_equal(rg_pos_config_set(&cfg, KEYS[i], vals[i]), RG_OK);
    rg_model *m, *m2;
    assert_int_equal(rg_model_new(&cfg, 4, &m), RG_OK);
    rg_rng r;
    rg_rng_seed(&r, 15, 15);
    for (int i = 0; i < m->params.n; i++) /* larger weights: the FIRE bias must matter for the logits */
        tc_fill_randn(m->params.items[i], &r, strstr(m->params.items[i]->name, "L_mult") ? 0.05 : 0.4);
    for (int l = 0; l < 2; l++) {
        char name[64];
        snprintf(name, sizeof name, "blocks.%d.attn.fire.L_multiplier", l);
        rg_params_find(&m->params, name)->data[0] += 1; /* L near 5: rows on both sides */
    }
    assert_int_equal(rg_checkpoint_save(path, m, NULL, NULL), RG_OK);
    rg_model_config got;
    assert_int_equal(rg_checkpoint_read_config(path, &got, NULL), RG_OK);
    assert_true(got.pos == RG_POS_FIRE);
    for (int i = 0; i < 4; i++) assert_true(rg_pos_config_get(&got, KEYS[i]) == vals[i]);
    assert_int_equal(rg_model_new(&got, 9, &m2), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m2, NULL, NULL), RG_OK);
    enum { B = 2, T = 9 };
    int32_t tok[B * T] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 1, 4, 1, 5, 9, 2, 6, 5};
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *a, *b;
    assert_int_equal(rg_model_forward(c, m, tok, NULL, B, T, NULL, &a), RG_OK);
    assert_int_equal(rg_model_forward(c, m2, tok, NULL, B, T, NULL, &b), RG_OK);
    assert_memory_equal(a->data, b->data, (size_t)a->numel * sizeof(rg_real));
    const char *keep = getenv("ROPEGRAD_KEEP_FIRE");
    if (keep && keep[0]) {
        char p2[512];
        snprintf(p2, sizeof p2, "%s/fire.h5", keep);
        assert_int_equal(rg_checkpoint_save(p2, m, NULL, NULL), RG_OK);
        snprintf(p2, sizeof p2, "%s/fire_logits.h5", keep);
        write_logits(p2, tok, B, T, a);
    }
    rg_model_free(m2);
    rg_model_free(m);
    /* a file from before the FIRE settings existed: no fire_* rows, read as the defaults (0) */
    cfg.n_pos_values = 0;
    assert_int_equal(rg_model_new(&cfg, 4, &m), RG_OK);
    assert_int_equal(rg_checkpoint_save(path, m, NULL, NULL), RG_OK);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t g = H5Gopen2(f, "config", H5P_DEFAULT);
    for (int i = 0; i < 4; i++) assert_true(H5Adelete(g, KEYS[i]) >= 0);
    H5Gclose(g);
    H5Fclose(f);
    assert_int_equal(rg_checkpoint_seal(path), RG_OK); /* an edited file is refused until sealed again */
    assert_int_equal(rg_checkpoint_read_config(path, &got, NULL), RG_OK);
    assert_int_equal(got.n_pos_values, 0);
    for (int i = 0; i < 4; i++) assert_true(rg_pos_config_get(&got, KEYS[i]) == 0);
    rg_model_config dflt = rg_model_config_default();
    dflt.vocab_size = 11, dflt.d_model = 16, dflt.n_heads = 2, dflt.n_layers = 2, dflt.d_ff = 32, dflt.max_len = 24;
    dflt.pos = RG_POS_FIRE;
    assert_int_equal(rg_model_new(&dflt, 1, &m2), RG_OK);
    assert_int_equal(rg_checkpoint_load(path, m2, NULL, NULL), RG_OK);
    rg_model_free(m2);
    rg_model_free(m);
    rg_ctx_free(c);
    remove(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fire_checkpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
