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
