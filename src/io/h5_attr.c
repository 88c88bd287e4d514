/* h5_attr.c: see h5.h. Typed scalar, 1-D integer and string attributes, written and read with their HDF5 class,
 * size and sign checked (the rest of the HDF5 layer is in h5.c). */
#include "h5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================== attributes: writing */

static herr_t write_attr(hid_t loc, const char *name, hid_t filetype, hid_t memtype, hid_t space, const void *v)
{
    if (space < 0) return -1;
    hid_t a = H5Acreate2(loc, name, filetype, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = -1;
    if (a >= 0) {
        r = H5Awrite(a, memtype, v);
        if (H5Aclose(a) < 0) r = -1;
    }
    H5Sclose(space);
    return r;
}

herr_t rg_h5_write_int(hid_t loc, const char *name, hid_t file_type, int64_t v)
{
    return write_attr(loc, name, file_type, H5T_NATIVE_INT64, H5Screate(H5S_SCALAR), &v);
}

herr_t rg_h5_write_u64(hid_t loc, const char *name, uint64_t v)
{
    return write_attr(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, H5Screate(H5S_SCALAR), &v);
}

herr_t rg_h5_write_f64(hid_t loc, const char *name, double v)
{
    return write_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, H5Screate(H5S_SCALAR), &v);
}

herr_t rg_h5_write_ints(hid_t loc, const char *name, hid_t file_type, const int64_t *v, hsize_t count)
{
    return write_attr(loc, name, file_type, H5T_NATIVE_INT64, H5Screate_simple(1, &count, NULL), v);
}

herr_t rg_h5_write_str(hid_t loc, const char *name, const char *v)
{
    bool ascii = true;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) ascii = ascii && *p < 0x80;
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    herr_t r = H5Tset_size(t, strlen(v) + 1);
    if (r >= 0) r = H5Tset_strpad(t, H5T_STR_NULLTERM);
    if (r >= 0) r = H5Tset_cset(t, ascii ? H5T_CSET_ASCII : H5T_CSET_UTF8);
    if (r >= 0) r = write_attr(loc, name, t, t, H5Screate(H5S_SCALAR), v);
    H5Tclose(t);
    return r;
}

/* ================================================================== attributes: reading */

rg_h5_kind rg_h5_attr_kind(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0) return RG_H5_MISSING;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return RG_H5_OTHER;
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    H5T_class_t c = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    hssize_t npts = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    H5Aclose(a);
    if (npts != 1) return RG_H5_OTHER;
    return c == H5T_INTEGER ? RG_H5_INT : c == H5T_FLOAT ? RG_H5_FLOAT : c == H5T_STRING ? RG_H5_STRING : RG_H5_OTHER;
}

/* Opens attribute `name` of loc holding one value of class `want` (`want_name` for messages); *type gets its
 * stored type (close it). */
static rg_status open_attr(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, H5T_class_t want,
                           const char *want_name, hid_t *attr, hid_t *type)
{
    *attr = *type = -1;
    if (H5Aexists(loc, name) <= 0) return rg_h5_err(src, RG_ERR_FORMAT, "missing attribute '%s' on %s", name, obj);
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return rg_h5_err(src, RG_ERR_FORMAT, "cannot open attribute '%s' on %s (corrupt file?)", name, obj);
    hid_t s = H5Aget_space(a), t = H5Aget_type(a);
    hssize_t npts = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    if (s >= 0) H5Sclose(s);
    char tn[64] = "an unreadable type";
    if (t >= 0) rg_h5_type_desc(t, tn, sizeof tn);
    rg_status st = RG_OK;
    if (t < 0 || H5Tget_class(t) != want)
        st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s is %s, expected %s", name, obj, tn, want_name);
    else if (npts != 1)
        st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has %lld values, expected 1", name, obj,
                       (long long)npts);
    else if (want != H5T_STRING && !rg_h5_standard_number(t))
        st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has a non-standard %s type", name, obj, tn);
    if (st) {
        if (t >= 0) H5Tclose(t);
        H5Aclose(a);
        return st;
    }
    *attr = a;
    *type = t;
    return RG_OK;
}

/* Reads a scalar integer attribute as 64 bits: *u if its type is unsigned (*is_unsigned), else *x. */
static rg_status read_integer(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, bool *is_unsigned,
                              int64_t *x, uint64_t *u)
{
    hid_t a, t;
    rg_status st = open_attr(src, loc, obj, name, H5T_INTEGER, "an integer", &a, &t);
    if (st) return st;
    *is_unsigned = H5Tget_sign(t) == H5T_SGN_NONE;
    H5Tclose(t);
    herr_t r = *is_unsigned ? H5Aread(a, H5T_NATIVE_UINT64, u) : H5Aread(a, H5T_NATIVE_INT64, x);
    H5Aclose(a);
    return r < 0 ? rg_h5_err(src, RG_ERR_FORMAT, "cannot read attribute '%s' on %s", name, obj) : RG_OK;
}

rg_status rg_h5_read_int(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, int64_t lo, int64_t hi,
                         int64_t *v)
{
    bool uns;
    int64_t x = 0;
    uint64_t u = 0;
    rg_status st = read_integer(src, loc, obj, name, &uns, &x, &u);
    if (st) return st;
    if (uns && u > (uint64_t)INT64_MAX)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %llu is outside %lld..%lld", name, obj,
                         (unsigned long long)u, (long long)lo, (long long)hi);
    if (uns) x = (int64_t)u;
    if (x < lo || x > hi)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %lld is outside %lld..%lld", name, obj,
                         (long long)x, (long long)lo, (long long)hi);
    *v = x;
    return RG_OK;
}

rg_status rg_h5_read_u64(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, uint64_t *v)
{
    bool uns;
    int64_t x = 0;
    uint64_t u = 0;
    rg_status st = read_integer(src, loc, obj, name, &uns, &x, &u);
    if (st) return st;
    if (!uns && x < 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %lld is negative", name, obj, (long long)x);
    *v = uns ? u : (uint64_t)x;
    return RG_OK;
}

rg_status rg_h5_read_f64(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, double *v)
{
    hid_t a, t;
    rg_status st = open_attr(src, loc, obj, name, H5T_FLOAT, "a float", &a, &t);
    if (st) return st;
    H5Tclose(t);
    herr_t r = H5Aread(a, H5T_NATIVE_DOUBLE, v);
    H5Aclose(a);
    return r < 0 ? rg_h5_err(src, RG_ERR_FORMAT, "cannot read attribute '%s' on %s", name, obj) : RG_OK;
}

bool rg_h5_valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        int more = c == 0 ? -1 : c < 0x80 ? 0 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 1 : (c & 0xf0) == 0xe0 ? 2
                   : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 3 : -1;
        if (more < 0 || (more > 0 && i + (size_t)more >= n)) return false;
        for (int k = 1; k <= more; k++)
            if ((s[i + k] & 0xc0) != 0x80) return false;
        i += (size_t)more + 1;
    }
    return true;
}

/* The stored bytes of a fixed-length string attribute: up to the first NUL (NUL-terminated or padded; only NULs
 * may follow it) or without the trailing spaces (space-padded). */
static rg_status fixed_str(const rg_h5_src *src, hid_t a, hid_t ft, const char *obj, const char *name, char **v)
{
    size_t sz = H5Tget_size(ft);
    if (sz == 0 || sz > ((size_t)1 << 30)) return rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has a string "
                                                           "size of %zu bytes", name, obj, sz);
    char *raw = calloc(sz + 1, 1);
    hid_t mt = H5Tcopy(ft);
    rg_status st = RG_OK;
    if (!raw || mt < 0) st = rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    else if (H5Aread(a, mt, raw) < 0) st = rg_h5_err(src, RG_ERR_FORMAT, "cannot read attribute '%s' on %s", name, obj);
    if (mt >= 0) H5Tclose(mt);
    if (st) {
        free(raw);
        return st;
    }
    size_t len = strlen(raw);
    if (H5Tget_strpad(ft) == H5T_STR_SPACEPAD)
        while (len > 0 && raw[len - 1] == ' ') len--;
    for (size_t i = len; i < sz; i++)
        if (raw[i] != 0 && raw[i] != ' ')
            st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s holds a NUL byte inside the string", name, obj);
    raw[len] = 0;
    if (st) free(raw);
    else *v = raw;
    return st;
}

rg_status rg_h5_read_str(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, char **v)
{
    *v = NULL;
    hid_t a, ft;
    rg_status st = open_attr(src, loc, obj, name, H5T_STRING, "a string", &a, &ft);
    if (st) return st;
    char *s = NULL;
    if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        char *p = NULL;
        if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Tset_cset(mt, H5Tget_cset(ft)) < 0 ||
            H5Aread(a, mt, &p) < 0 || !p)
            st = rg_h5_err(src, RG_ERR_FORMAT, "cannot read attribute '%s' on %s", name, obj);
        else if (!(s = strdup(p)))
            st = rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
        if (p) H5free_memory(p);
        if (mt >= 0) H5Tclose(mt);
    } else {
        st = fixed_str(src, a, ft, obj, name, &s);
    }
    H5Tclose(ft);
    H5Aclose(a);
    if (!st && !rg_h5_valid_utf8((const unsigned char *)s, strlen(s)))
        st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s is not valid UTF-8 text", name, obj);
    if (st) {
        free(s);
        return st;
    }
    *v = s;
    return RG_OK;
}

rg_status rg_h5_read_str_buf(const rg_h5_src *src, hid_t loc, const char *obj, const char *name, char *buf, size_t n)
{
    char *s;
    rg_status st = rg_h5_read_str(src, loc, obj, name, &s);
    if (st) return st;
    size_t len = strlen(s);
    if (len >= n) st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s has %zu characters, at most %zu fit",
                                 name, obj, len, n - 1);
    else memcpy(buf, s, len + 1);
    free(s);
    return st;
}

