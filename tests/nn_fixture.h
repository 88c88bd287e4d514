/* nn_fixture.h: loading a reference-model fixture (tests/fixtures/model_*.h5, layout in tests/fixtures/README.md)
 * into an rg_model: the config from the root attributes, the parameters from /params/<name> by registry name.
 * Shared by tests/test_nn_fixtures.c (float32) and tests/gradcheck_adamw.c (float64). Include after common.h. */
#ifndef RG_TEST_NN_FIXTURE_H
#define RG_TEST_NN_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

/* The model config stored in a fixture's root attributes. */
static rg_model_config fx_config(const char *file)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = (int)tc_h5_attr(file, "/", "vocab_size");
    cfg.d_model = (int)tc_h5_attr(file, "/", "d_model");
    cfg.n_heads = (int)tc_h5_attr(file, "/", "n_heads");
    cfg.n_layers = (int)tc_h5_attr(file, "/", "n_layers");
    cfg.d_ff = (int)tc_h5_attr(file, "/", "d_ff");
    cfg.max_len = (int)tc_h5_attr(file, "/", "max_len");
    cfg.causal = tc_h5_attr(file, "/", "causal") != 0;
    cfg.rotary_dim = (int)tc_h5_attr(file, "/", "rotary_dim");
    cfg.rope_orig_len = (int)tc_h5_attr(file, "/", "rope_orig_len");
    cfg.t5_num_buckets = (int)tc_h5_attr(file, "/", "t5_num_buckets");
    cfg.t5_max_distance = (int)tc_h5_attr(file, "/", "t5_max_distance");
    cfg.rope_base = tc_h5_attr(file, "/", "rope_base");
    cfg.rope_scale = tc_h5_attr(file, "/", "rope_scale");
    char name[64];
    tc_h5_attr_str(file, "/", "pos_encoding", name, sizeof name);
    if (rg_pos_parse(name, &cfg.pos)) fail_msg("%s: %s", file, rg_last_error());
    tc_h5_attr_str(file, "/", "rope_ext", name, sizeof name);
    if (rg_rope_ext_parse(name, &cfg.rope_ext)) fail_msg("%s: %s", file, rg_last_error());
    return cfg;
}

/* Copies the datasets group/<name> (values cast to rg_real) into every registered parameter, checking shapes. */
static void fx_load_params(const char *file, const char *group, rg_params *ps)
{
    char path[256];
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        snprintf(path, sizeof path, "%s/%s", group, p->name);
        int64_t n;
        int shape[4], ndim;
        double *v = tc_h5_read(file, path, &n, shape, &ndim);
        if (n != p->numel || ndim != p->ndim) fail_msg("%s %s: %lld values in %d dims, model has %lld in %d", file,
                                                       path, (long long)n, ndim, (long long)p->numel, p->ndim);
        for (int d = 0; d < ndim; d++)
            if (shape[d] != p->shape[d]) fail_msg("%s %s: dim %d is %d, model has %d", file, path, d, shape[d],
                                                  p->shape[d]);
        for (int64_t j = 0; j < n; j++) p->data[j] = (rg_real)v[j];
        rg_tensor_bump_version(p);
        free(v);
    }
}

/* A model built from the fixture's config with the fixture's /params. */
static rg_model *fx_model(const char *file)
{
    rg_model_config cfg = fx_config(file);
    rg_model *m = NULL;
    if (rg_model_new(&cfg, 0, &m)) fail_msg("%s: rg_model_new: %s", file, rg_last_error());
    fx_load_params(file, "/params", &m->params);
    return m;
}

#endif
