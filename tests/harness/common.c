/* common.c: see common.h. */
#include "common.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rg_tensor *tc_param_randn(const char *name, int ndim, const int *shape, rg_rng *rng, double std)
{
    rg_tensor *p = rg_param_new(name, ndim, shape);
    if (!p) fail_msg("rg_param_new(%s): %s", name, rg_last_error());
    tc_fill_randn(p, rng, std);
    return p;
}

void tc_fill_randn(rg_tensor *t, rg_rng *rng, double std)
{
    for (int64_t i = 0; i < t->numel; i++) t->data[i] = (rg_real)(std * rg_rng_normal(rng));
}

void tc_assert_close(const char *what, const rg_real *got, const double *want, int64_t n, double atol, double rtol)
{
    for (int64_t i = 0; i < n; i++) {
        double g = (double)got[i], w = want[i];
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s[%lld]: got %.9g, want %.9g (|diff| %.3g > atol %.3g + rtol %.3g)", what, (long long)i, g, w,
                     fabs(g - w), atol, rtol);
    }
}

rg_tensor *tc_weighted_sum(rg_ctx *c, rg_tensor *out, const rg_real *w)
{
    return rg_sum(c, rg_mul(c, out, rg_tensor_from(c, out->ndim, out->shape, w)));
}

rg_real *tc_random_weights(int64_t n, rg_rng *rng)
{
    rg_real *w = malloc((size_t)n * sizeof *w);
    for (int64_t i = 0; i < n; i++) w[i] = (rg_real)rg_rng_normal(rng);
    return w;
}

void tc_gradcheck_report(int width, const char *name, double worst, const double *rel, int n, double tol)
{
    print_message("%-*s worst rel err %.3g (%d inputs)\n", width, name, worst, n);
    for (int i = 0; i < n; i++)
        if (!(rel[i] < tol)) print_message("  input %d: %.3g\n", i, rel[i]);
    assert_true(worst < tol);
}

void tc_gradcheck_model_report(int width, const char *name, const rg_model *m, double *rel, double tol)
{
    double worst = 0;
    for (int i = 0; i < m->params.n; i++) {
        const rg_tensor *p = m->params.items[i];
        double gmax = 0;
        for (int64_t j = 0; j < p->numel; j++) gmax = tc_max(gmax, fabs((double)p->grad[j]));
        if (strstr(p->name, "k_proj.bias") && gmax < 1e-12) rel[i] = 0;
        if (!(rel[i] < tol)) print_message("  %s: %.3g\n", p->name, rel[i]);
        if (!(rel[i] <= worst)) worst = rel[i];
    }
    char buf[128];
    snprintf(buf, sizeof buf, "model %s (%lld params)", name, (long long)rg_params_numel(&m->params));
    tc_gradcheck_report(width, buf, worst, rel, m->params.n, tol);
}

static hid_t open_or_fail(const char *file)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) fail_msg("fixture %s: cannot open (run tests from the repository root)", file);
    return f;
}

static void *read_any(const char *file, const char *dataset, hid_t memtype, size_t elsize, int64_t *n, int *shape,
                      int *ndim)
{
    hid_t f = open_or_fail(file);
    hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
    if (d < 0) { H5Fclose(f); fail_msg("fixture %s: no dataset %s", file, dataset); }
    hid_t s = H5Dget_space(d);
    hsize_t dims[8] = {0};
    int nd = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    int64_t count = 1;
    for (int i = 0; i < nd; i++) count *= (int64_t)dims[i];
    void *buf = malloc((size_t)(count ? count : 1) * elsize);
    if (H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) fail_msg("fixture %s: cannot read %s", file, dataset);
    H5Sclose(s);
    H5Dclose(d);
    H5Fclose(f);
    if (n) *n = count;
    if (ndim) *ndim = nd;
    if (shape)
        for (int i = 0; i < nd && i < 4; i++) shape[i] = (int)dims[i];
    return buf;
}

double *tc_h5_read(const char *file, const char *dataset, int64_t *n, int *shape, int *ndim)
{
    return read_any(file, dataset, H5T_NATIVE_DOUBLE, sizeof(double), n, shape, ndim);
}

int32_t *tc_h5_read_int(const char *file, const char *dataset, int64_t *n, int *shape, int *ndim)
{
    return read_any(file, dataset, H5T_NATIVE_INT32, sizeof(int32_t), n, shape, ndim);
}

double tc_h5_attr(const char *file, const char *object, const char *attr)
{
    hid_t f = open_or_fail(file);
    hid_t a = H5Aopen_by_name(f, object, attr, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) { H5Fclose(f); fail_msg("fixture %s: no attribute %s on %s", file, attr, object); }
    double v = 0;
    H5Aread(a, H5T_NATIVE_DOUBLE, &v);
    H5Aclose(a);
    H5Fclose(f);
    return v;
}

bool tc_h5_attr_exists(const char *file, const char *object, const char *attr)
{
    hid_t f = open_or_fail(file);
    htri_t has = H5Aexists_by_name(f, object, attr, H5P_DEFAULT);
    H5Fclose(f);
    return has > 0;
}

void tc_h5_attr_str(const char *file, const char *object, const char *attr, char *buf, size_t n)
{
    hid_t f = open_or_fail(file);
    hid_t a = H5Aopen_by_name(f, object, attr, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0) { H5Fclose(f); fail_msg("fixture %s: no attribute %s on %s", file, attr, object); }
    hid_t t = H5Aget_type(a);
    buf[0] = 0;
    if (H5Tis_variable_str(t) > 0) {
        char *s = NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Aread(a, mt, &s);
        snprintf(buf, n, "%s", s ? s : "");
        H5free_memory(s);
        H5Tclose(mt);
    } else {
        size_t sz = H5Tget_size(t);
        char *tmp = calloc(sz + 1, 1);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, sz);
        H5Tset_strpad(mt, H5T_STR_NULLPAD); /* keep all sz characters of a NULLPAD string (NULLTERM drops the last) */
        H5Aread(a, mt, tmp);
        snprintf(buf, n, "%s", tmp);
        free(tmp);
        H5Tclose(mt);
    }
    H5Tclose(t);
    H5Aclose(a);
    H5Fclose(f);
}

int tc_h5_exists(const char *file, const char *path)
{
    hid_t f = open_or_fail(file);
    int r = H5Lexists(f, path, H5P_DEFAULT) > 0;
    H5Fclose(f);
    return r;
}

rg_model_config tc_tiny_config(rg_pos_kind pos)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = 7;
    cfg.d_model = 8;
    cfg.n_heads = 2;
    cfg.n_layers = 2;
    cfg.d_ff = 16;
    cfg.max_len = 16;
    cfg.pos = pos;
    return cfg;
}

rg_model *tc_model_randn(const rg_model_config *cfg, uint64_t rng_seed, double std)
{
    rg_model *m;
    if (rg_model_new(cfg, 3, &m)) fail_msg("rg_model_new: %s", rg_last_error());
    rg_rng rng;
    rg_rng_seed(&rng, rng_seed, 0);
    for (int i = 0; i < m->params.n; i++) tc_fill_randn(m->params.items[i], &rng, std);
    return m;
}

void tc_padded_batch(uint64_t rng_seed, int vocab, int nb, int nt, const int *len, int32_t *tokens, int32_t *targets)
{
    rg_rng rng;
    rg_rng_seed(&rng, rng_seed, 0);
    for (int b = 0; b < nb; b++)
        for (int t = 0; t < nt; t++) {
            bool real = t < len[b];
            tokens[b * nt + t] = real ? (int32_t)rg_rng_below(&rng, (uint32_t)vocab) : 0; /* padding token 0 */
            targets[b * nt + t] = real && rg_rng_below(&rng, 4) ? (int32_t)rg_rng_below(&rng, (uint32_t)vocab) : -100;
        }
}

rg_model_config tc_fx_config(const char *file)
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
    cfg.rope_base = tc_h5_attr(file, "/", "rope_base");
    cfg.rope_scale = tc_h5_attr(file, "/", "rope_scale");
    char name[64];
    tc_h5_attr_str(file, "/", "pos_encoding", name, sizeof name);
    if (rg_pos_parse(name, &cfg.pos)) fail_msg("%s: %s", file, rg_last_error());
    /* the settings the encoding declares, where the file has them (t5_num_buckets, fire_*, ...) */
    const rg_pos_encoding *enc = rg_pos_encoding_of(cfg.pos);
    for (int i = 0; i < enc->n_settings; i++) {
        const char *key = enc->settings[i].name;
        if (tc_h5_attr_exists(file, "/", key) && rg_pos_config_set(&cfg, key, tc_h5_attr(file, "/", key)))
            fail_msg("%s: %s", file, rg_last_error());
    }
    tc_h5_attr_str(file, "/", "rope_ext", name, sizeof name);
    if (rg_rope_ext_parse(name, &cfg.rope_ext)) fail_msg("%s: %s", file, rg_last_error());
    return cfg;
}

rg_model *tc_fx_model(const char *file, const rg_model_config *cfg)
{
    rg_model_config own;
    if (!cfg) {
        own = tc_fx_config(file);
        cfg = &own;
    }
    rg_model *m = NULL;
    if (rg_model_new(cfg, 0, &m)) fail_msg("%s: rg_model_new: %s", file, rg_last_error());
    char path[256];
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        snprintf(path, sizeof path, "/params/%s", p->name);
        int64_t n;
        int shape[4], ndim;
        double *v = tc_h5_read(file, path, &n, shape, &ndim);
        if (n != p->numel || ndim != p->ndim) fail_msg("%s %s: %lld values in %d dims, model has %lld in %d", file,
                                                       path, (long long)n, ndim, (long long)p->numel, p->ndim);
        for (int d = 0; d < ndim; d++)
            if (shape[d] != p->shape[d]) fail_msg("%s %s: dim %d is %d, model has %d", file, path, d, shape[d],
                                                  p->shape[d]);
        for (int64_t j = 0; j < n; j++) p->data[j] = (rg_real)v[j]; /* plain stores: the next forward reads them */
        free(v);
    }
    return m;
}
