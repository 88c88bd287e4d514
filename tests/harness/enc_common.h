/* enc_common.h: what tests/nn/pos/test_enc.c (float32) and tests/nn/pos/gradcheck_enc.c (float64) share: the golden file of
 * tools/golden_enc.py and a FIRE module loaded from one of its cases. Include after common.h. */
#ifndef RG_TEST_ENC_COMMON_H
#define RG_TEST_ENC_COMMON_H

#include "nn/pos_ext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENC_GOLDEN "tests/fixtures/enc_golden.h5"

/* The case names of the golden file (tools/golden_enc.py MROPE_CASES, FIRE_CASES). */
static const char *const enc_mrope_cases[] = {"half_small", "interleaved_small", "half_far", "qwen2vl_128"};
static const char *const enc_fire_cases[] = {"dense_threshold", "dense_default", "cache_far", "sparse", "huge"};
#define ENC_N_MROPE 4
#define ENC_N_FIRE 5

/* A FIRE case: the module (parameters registered in ps under "fire"), the positions, the loss weights w and the
 * golden bias [H, T, S] and gradients of sum(bias * w) (in the order of the parameters in ps). */
typedef struct {
    rg_params ps;
    rg_pos_fire f;
    int32_t *q, *k;
    int T, S, H;
    double *w, *bias, *grad[6];
} enc_fire_case;

static void enc_fire_load(const char *name, enc_fire_case *fc)
{
    char grp[96], path[160];
    snprintf(grp, sizeof grp, "/fire/%s", name);
    memset(fc, 0, sizeof *fc);
    rg_fire_config cfg = rg_fire_config_default((int)tc_h5_attr(ENC_GOLDEN, grp, "n_heads"));
    cfg.mlp_width = (int)tc_h5_attr(ENC_GOLDEN, grp, "mlp_width");
    cfg.init_L = tc_h5_attr(ENC_GOLDEN, grp, "init_L");
    cfg.eps = tc_h5_attr(ENC_GOLDEN, grp, "eps");
    rg_rng rng;
    rg_rng_seed(&rng, 1, 1);
    assert_int_equal(rg_pos_fire_init(&fc->f, &fc->ps, "fire", &cfg, &rng), RG_OK);
    fc->H = cfg.n_heads;
    int64_t n;
    for (int i = 0; i < fc->ps.n; i++) {
        rg_tensor *p = fc->ps.items[i];
        const char *pn = p->name + strlen("fire.");
        snprintf(path, sizeof path, "%s/%s", grp, pn);
        double *v = tc_h5_read(ENC_GOLDEN, path, &n, NULL, NULL);
        assert_int_equal(n, p->numel);
        for (int64_t j = 0; j < n; j++) p->data[j] = (rg_real)v[j];
        free(v);
        snprintf(path, sizeof path, "%s/grad/%s", grp, pn);
        fc->grad[i] = tc_h5_read(ENC_GOLDEN, path, &n, NULL, NULL);
        assert_int_equal(n, p->numel);
    }
    int64_t nt, ns, nw;
    snprintf(path, sizeof path, "%s/q_pos", grp);
    fc->q = tc_h5_read_int(ENC_GOLDEN, path, &nt, NULL, NULL);
    snprintf(path, sizeof path, "%s/k_pos", grp);
    fc->k = tc_h5_read_int(ENC_GOLDEN, path, &ns, NULL, NULL);
    fc->T = (int)nt;
    fc->S = (int)ns;
    snprintf(path, sizeof path, "%s/w", grp);
    fc->w = tc_h5_read(ENC_GOLDEN, path, &nw, NULL, NULL);
    snprintf(path, sizeof path, "%s/bias", grp);
    fc->bias = tc_h5_read(ENC_GOLDEN, path, &n, NULL, NULL);
    assert_int_equal(n, (int64_t)fc->H * nt * ns);
    assert_int_equal(nw, n);
}

static void enc_fire_free(enc_fire_case *fc)
{
    rg_params_free(&fc->ps);
    free(fc->q);
    free(fc->k);
    free(fc->w);
    free(fc->bias);
    for (int i = 0; i < 6; i++) free(fc->grad[i]);
}

#endif
