/* h5_image_query.c: the queries of an rg_h5_image (h5_image.h): groups, members, attributes and datasets, with
 * the checks and messages of the in-process readers of h5.h. Plain data: no HDF5 call, no I/O. */
#include "h5_image_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================== queries */

static const rg_h5_obj *lookup(const rg_h5_obj *loc, const char *name)
{
    const rg_h5_image *im = loc->im;
    char path[2 * RG_H5I_MAX_NAME + 2];
    if (snprintf(path, sizeof path, "%s/%s", loc->path, name) >= (int)sizeof path) return NULL;
    size_t lo = 0, hi = (size_t)im->n_objs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(im->objs[im->sorted[mid]].path, path);
        if (c == 0) return &im->objs[im->sorted[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

bool rg_h5i_exists(const rg_h5_obj *o, const char *name) { return lookup(o, name) != NULL; }

rg_status rg_h5i_open_group(const rg_h5_src *src, const rg_h5_obj *loc, const char *name, const char *full,
                            const rg_h5_obj **g)
{
    const rg_h5_obj *o = lookup(loc, name);
    *g = NULL;
    if (!o) return rg_h5_err(src, RG_ERR_FORMAT, "missing group %s", full);
    if (o->kind != RG_H5I_GROUP) return rg_h5_err(src, RG_ERR_FORMAT, "%s is not a group", full);
    *g = o;
    return RG_OK;
}

static rg_status add_names(const rg_h5_src *src, const char *full, int max_n, rg_h5_names *l, const char *name,
                           bool attrs)
{
    if (l->n >= max_n)
        return rg_h5_err(src, RG_ERR_FORMAT, "%s has more than %d %s", full, max_n, attrs ? "attributes" : "members");
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->names, (size_t)cap * sizeof *p);
        if (!p) return rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
        l->names = p;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(name))) return rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    l->n++;
    return RG_OK;
}

rg_status rg_h5i_list_links(const rg_h5_src *src, const rg_h5_obj *g, const char *full, int max_n, rg_h5_names *l)
{
    memset(l, 0, sizeof *l);
    const rg_h5_image *im = g->im;
    int gi = (int)(g - im->objs);
    rg_status st = RG_OK;
    for (int i = gi + 1; i < im->n_objs && !st; i++)
        if (im->objs[i].parent == gi) st = add_names(src, full, max_n, l, strrchr(im->objs[i].path, '/') + 1, false);
    if (st) rg_h5_names_free(l);
    return st;
}

rg_status rg_h5i_list_attrs(const rg_h5_src *src, const rg_h5_obj *o, const char *full, int max_n, rg_h5_names *l)
{
    memset(l, 0, sizeof *l);
    rg_status st = RG_OK;
    for (int i = 0; i < o->n_attrs && !st; i++) st = add_names(src, full, max_n, l, o->im->attrs[o->first_attr + i].name, true);
    if (st) rg_h5_names_free(l);
    return st;
}

static const rg_h5i_attr *find_attr(const rg_h5_obj *o, const char *name)
{
    for (int i = 0; i < o->n_attrs; i++)
        if (strcmp(o->im->attrs[o->first_attr + i].name, name) == 0) return &o->im->attrs[o->first_attr + i];
    return NULL;
}

rg_h5_kind rg_h5i_attr_kind(const rg_h5_obj *o, const char *name)
{
    const rg_h5i_attr *a = find_attr(o, name);
    if (!a) return RG_H5_MISSING;
    if (a->npts != 1) return RG_H5_OTHER;
    return a->cls == RG_H5I_CLS_INT ? RG_H5_INT : a->cls == RG_H5I_CLS_FLOAT ? RG_H5_FLOAT
           : a->cls == RG_H5I_CLS_STRING ? RG_H5_STRING : RG_H5_OTHER;
}

/* The attribute holding one readable value of class want (the checks of h5_attr.c's open_attr). */
static rg_status open_attr(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name,
                           unsigned want, const char *want_name, const rg_h5i_attr **out)
{
    const rg_h5i_attr *a = find_attr(o, name);
    *out = NULL;
    if (!a) return rg_h5_err(src, RG_ERR_FORMAT, "missing attribute '%s' on %s", name, obj);
    if (a->npts < 0 && a->err[0]) return rg_error(RG_ERR_FORMAT, "%s", a->err);
    if (a->cls != want)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s is %s, expected %s", name, obj, a->desc, want_name);
    if (a->npts != 1)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has %lld values, expected 1", name, obj,
                         (long long)a->npts);
    if (want != RG_H5I_CLS_STRING && !a->standard)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has a non-standard %s type", name, obj, a->desc);
    if (!a->has_value)
        return a->err[0] ? rg_error(RG_ERR_FORMAT, "%s", a->err)
                         : rg_h5_err(src, RG_ERR_FORMAT, "cannot read attribute '%s' on %s", name, obj);
    *out = a;
    return RG_OK;
}

rg_status rg_h5i_read_int(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, int64_t lo,
                          int64_t hi, int64_t *v)
{
    const rg_h5i_attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_INT, "an integer", &a);
    if (st) return st;
    if (a->is_unsigned && a->bits > (uint64_t)INT64_MAX)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %llu is outside %lld..%lld", name, obj,
                         (unsigned long long)a->bits, (long long)lo, (long long)hi);
    int64_t x = (int64_t)a->bits;
    if (x < lo || x > hi)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %lld is outside %lld..%lld", name, obj,
                         (long long)x, (long long)lo, (long long)hi);
    *v = x;
    return RG_OK;
}

rg_status rg_h5i_read_u64(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, uint64_t *v)
{
    const rg_h5i_attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_INT, "an integer", &a);
    if (st) return st;
    if (!a->is_unsigned && (int64_t)a->bits < 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %lld is negative", name, obj,
                         (long long)(int64_t)a->bits);
    *v = a->bits;
    return RG_OK;
}

rg_status rg_h5i_read_f64(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, double *v)
{
    const rg_h5i_attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_FLOAT, "a float", &a);
    if (!st) *v = a->d;
    return st;
}

rg_status rg_h5i_read_str(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name, char **v)
{
    const rg_h5i_attr *a;
    *v = NULL;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_STRING, "a string", &a);
    if (!st && !(*v = strdup(a->s))) st = rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    return st;
}

rg_status rg_h5i_read_str_buf(const rg_h5_src *src, const rg_h5_obj *o, const char *obj, const char *name,
                              char *buf, size_t n)
{
    const rg_h5i_attr *a;
    rg_status st = open_attr(src, o, obj, name, RG_H5I_CLS_STRING, "a string", &a);
    if (st) return st;
    size_t len = strlen(a->s);
    if (len >= n)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has %zu characters, at most %zu fit", name, obj,
                         len, n - 1);
    memcpy(buf, a->s, len + 1);
    return RG_OK;
}

/* True if every value of the stored type of o reads into t without loss (h5.c's reads_into). */
static bool reads_into(const rg_h5_obj *o, rg_h5_dtype t)
{
    if (!o->standard) return false;
    bool fl = o->cls == RG_H5I_CLS_FLOAT, in = o->cls == RG_H5I_CLS_INT;
    switch (t) {
    case RG_H5_FLOAT32: return fl && o->size == 4;
    case RG_H5_FLOAT64: return fl && o->size == 8;
    case RG_H5_INT32: return in && (o->is_unsigned ? o->size <= 2 : o->size <= 4);
    default: return in && o->is_unsigned;
    }
}

static rg_status open_dataset(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                              rg_h5_dtype t, int max_nd, const rg_h5_obj **out)
{
    const rg_h5_obj *d = lookup(loc, name);
    *out = NULL;
    if (!d) return rg_h5_err(src, RG_ERR_FORMAT, "missing dataset %s/%s", grp, name);
    if (d->kind != RG_H5I_DATASET) return rg_h5_err(src, RG_ERR_FORMAT, "%s/%s is not a dataset", grp, name);
    if (d->err_kind == 2 && d->nd < 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "cannot open dataset %s/%s (corrupt file?)", grp, name);
    if (!reads_into(d, t))
        return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s has dtype %s, expected %s", grp, name, d->desc,
                         rg_h5_dtype_name(t));
    if (d->nd < 1 || d->nd > max_nd)
        return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s does not have a shape of 1 to %d dimensions", grp, name,
                         max_nd);
    if (d->err_kind == 1) return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s: %s", grp, name, d->err);
    *out = d;
    return RG_OK;
}

rg_status rg_h5i_dataset_shape(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                               rg_h5_dtype t, int max_nd, int *nd, hsize_t *dims)
{
    const rg_h5_obj *d;
    rg_status st = open_dataset(src, loc, grp, name, t, max_nd, &d);
    if (st) return st;
    *nd = d->nd;
    memcpy(dims, d->dims, (size_t)d->nd * sizeof *dims);
    return RG_OK;
}

/* The stored values of d (native form of its type) into buf as t. */
static void convert(const rg_h5_obj *d, rg_h5_dtype t, void *buf)
{
    size_t n = d->nbytes / d->size;
    if (t == RG_H5_FLOAT32 || t == RG_H5_FLOAT64 || (t == RG_H5_INT32 && d->size == 4) ||
        (t == RG_H5_UINT64 && d->size == 8)) {
        memcpy(buf, d->data, d->nbytes);
        return;
    }
    const unsigned char *p = d->data;
    for (size_t i = 0; i < n; i++) {
        int64_t s = 0;
        uint64_t u = 0;
        switch (d->size) {
        case 1: s = d->is_unsigned ? (int64_t)p[i] : (int64_t)((const int8_t *)p)[i]; break;
        case 2: s = d->is_unsigned ? (int64_t)((const uint16_t *)p)[i] : (int64_t)((const int16_t *)p)[i]; break;
        case 4: u = ((const uint32_t *)p)[i]; s = (int64_t)u; break;
        default: break;
        }
        if (t == RG_H5_INT32) ((int32_t *)buf)[i] = (int32_t)s;
        else ((uint64_t *)buf)[i] = d->size == 4 ? u : (uint64_t)s;
    }
}

rg_status rg_h5i_read_dataset(const rg_h5_src *src, const rg_h5_obj *loc, const char *grp, const char *name,
                              rg_h5_dtype t, int nd, const hsize_t *dims, void *buf)
{
    const rg_h5_obj *d;
    rg_status st = open_dataset(src, loc, grp, name, t, RG_H5I_MAX_ND, &d);
    if (st) return st;
    bool same = d->nd == nd;
    for (int i = 0; same && i < nd; i++) same = d->dims[i] == dims[i];
    if (!same) {
        char a[200], b[200];
        rg_h5_shape_str(d->nd, d->dims, a, sizeof a);
        rg_h5_shape_str(nd, dims, b, sizeof b);
        return rg_h5_err(src, RG_ERR_SHAPE, "dataset %s/%s has shape %s, expected %s", grp, name, a, b);
    }
    if (d->err_kind == 2)
        return rg_h5_err(src, RG_ERR_FORMAT, "cannot read dataset %s/%s (truncated or corrupt file, or a checksum "
                         "mismatch): %s", grp, name, d->err);
    if (!d->has_data)
        return rg_h5_err(src, RG_ERR_ARG, "dataset %s/%s: its values were not asked for when the file was read",
                         grp, name);
    convert(d, t, buf);
    return RG_OK;
}
