/* h5.c: see h5.h. The error plumbing, files in memory, datatype checks, groups and datasets; the attributes are
 * in h5_attr.c. */
#include "h5.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================== errors */

void rg_h5_quiet_begin(rg_h5_quiet *q)
{
    q->func = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void rg_h5_quiet_end(const rg_h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

typedef struct {
    char *buf;
    size_t n;
} detail_buf;

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    detail_buf *d = data;
    if (e->desc && e->desc[0]) snprintf(d->buf, d->n, "%s", e->desc);
    return 0;
}

const char *rg_h5_detail(char *buf, size_t n)
{
    buf[0] = 0;
    detail_buf d = {buf, n};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, &d);
    return buf;
}

rg_status rg_h5_err(const rg_h5_src *src, rg_status code, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rg_error(code, "%s %s: %s", src->what, src->path, msg);
}

/* ================================================================== files */

rg_status rg_h5_read_file(const rg_h5_src *src, unsigned char **buf, size_t *n)
{
    *buf = NULL;
    *n = 0;
    int fd = open(src->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block here: refused below */
    if (fd < 0) return rg_h5_err(src, RG_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat st;
    rg_status s = RG_OK;
    if (fstat(fd, &st) != 0) s = rg_h5_err(src, RG_ERR_IO, "cannot stat: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode)) s = rg_h5_err(src, RG_ERR_IO, "not a regular file");
    else if (st.st_size == 0) s = rg_h5_err(src, RG_ERR_FORMAT, "empty file (0 bytes)");
    /* HDF5 1.10 takes flock(LOCK_EX) on a file it opens for writing: the same lock, probed without waiting */
    else if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
        s = rg_h5_err(src, RG_ERR_IO, "cannot open: locked by another process (a writer has it open)");
    unsigned char *b = NULL;
    size_t len = s ? 0 : (size_t)st.st_size;
    if (!s && !(b = malloc(len))) s = rg_h5_err(src, RG_ERR_NOMEM, "out of memory for its %zu bytes", len);
    for (size_t got = 0; !s && got < len;) {
        ssize_t r = read(fd, b + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) s = rg_h5_err(src, RG_ERR_IO, "read failed: %s", r < 0 ? strerror(errno) : "file shrank");
        else got += (size_t)r;
    }
    close(fd);
    if (s) {
        free(b);
        return s;
    }
    *buf = b;
    *n = len;
    return RG_OK;
}

static const unsigned char h5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

rg_status rg_h5_open_image(const rg_h5_src *src, const unsigned char *buf, size_t n, hid_t *file)
{
    *file = -1;
    bool sig = false;
    for (size_t off = 0; !sig && off + 8 <= n; off = off ? 2 * off : 512) sig = memcmp(buf + off, h5_signature, 8) == 0;
    if (!sig) return rg_h5_err(src, RG_ERR_FORMAT, "not an HDF5 file (no HDF5 signature in its %zu bytes)", n);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
        H5Pset_file_image(fapl, (void *)buf, n) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        return rg_h5_err(src, RG_ERR_NOMEM, "cannot set up HDF5's memory driver");
    }
    static unsigned long counter;
    char name[64];
    /* a name that cannot exist as a file (the core driver looks it up; nothing on disk may be picked up) */
    snprintf(name, sizeof name, "/dev/null/rg_image_%lu", counter++);
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    char detail[256];
    if (f < 0) rg_h5_detail(detail, sizeof detail);
    H5Pclose(fapl);
    if (f < 0)
        return rg_h5_err(src, RG_ERR_FORMAT, "not a valid HDF5 file (truncated or corrupt; %zu bytes): %s", n,
                         detail[0] ? detail : "unknown HDF5 error");
    *file = f;
    return RG_OK;
}

hid_t rg_h5_create_memory(hid_t fcpl)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return -1;
    static unsigned long counter;
    char name[64];
    snprintf(name, sizeof name, "/dev/null/rg_new_image_%lu", counter++);
    hid_t f = -1;
    if (H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
        f = H5Fcreate(name, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fapl);
    return f;
}

unsigned char *rg_h5_memory_image(hid_t f, size_t userblock, size_t *n)
{
    *n = 0;
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) return NULL;
    ssize_t sz = H5Fget_file_image(f, NULL, 0);
    if (sz <= 0) return NULL;
    unsigned char *buf = calloc(userblock + (size_t)sz, 1);
    if (!buf) return NULL;
    if (H5Fget_file_image(f, buf + userblock, (size_t)sz) != sz) {
        free(buf);
        return NULL;
    }
    *n = userblock + (size_t)sz;
    return buf;
}

herr_t rg_h5_close_file(hid_t f)
{
    if (f < 0) return 0;
    unsigned types = H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE | H5F_OBJ_ATTR | H5F_OBJ_LOCAL;
    ssize_t cnt = H5Fget_obj_count(f, types);
    if (cnt > 0) {
        hid_t *ids = malloc((size_t)cnt * sizeof *ids);
        ssize_t got = ids ? H5Fget_obj_ids(f, types, (size_t)cnt, ids) : 0;
        for (ssize_t i = 0; i < got; i++) {
            if (H5Iget_type(ids[i]) == H5I_ATTR) H5Aclose(ids[i]);
            else H5Oclose(ids[i]);
        }
        free(ids);
    }
    return H5Fclose(f);
}

/* ================================================================== types */

void rg_h5_type_desc(hid_t t, char *buf, size_t n)
{
    H5T_class_t c = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    switch (c) {
    case H5T_FLOAT: snprintf(buf, n, "float%zu", sz * 8); break;
    case H5T_INTEGER: snprintf(buf, n, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", sz * 8); break;
    case H5T_STRING: snprintf(buf, n, "a string"); break;
    case H5T_COMPOUND: snprintf(buf, n, "a compound"); break;
    default: snprintf(buf, n, "HDF5 type class %d", (int)c); break;
    }
}

bool rg_h5_standard_number(hid_t t)
{
    const hid_t std[] = {H5T_IEEE_F32LE, H5T_IEEE_F32BE, H5T_IEEE_F64LE, H5T_IEEE_F64BE, H5T_STD_I8LE,
                         H5T_STD_I8BE,   H5T_STD_I16LE,  H5T_STD_I16BE,  H5T_STD_I32LE,  H5T_STD_I32BE,
                         H5T_STD_I64LE,  H5T_STD_I64BE,  H5T_STD_U8LE,   H5T_STD_U8BE,   H5T_STD_U16LE,
                         H5T_STD_U16BE,  H5T_STD_U32LE,  H5T_STD_U32BE,  H5T_STD_U64LE,  H5T_STD_U64BE};
    for (size_t i = 0; i < sizeof std / sizeof std[0]; i++)
        if (H5Tequal(t, std[i]) > 0) return true;
    return false;
}

/* ================================================================== groups */

bool rg_h5_exists(hid_t loc, const char *name) { return H5Lexists(loc, name, H5P_DEFAULT) > 0; }

/* H5I_GROUP, H5I_DATASET, ... of the object `name` of loc, or H5I_BADID. */
static H5I_type_t obj_type(hid_t loc, const char *name)
{
    hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
    if (o < 0) return H5I_BADID;
    H5I_type_t t = H5Iget_type(o);
    H5Oclose(o);
    return t;
}

rg_status rg_h5_open_group(const rg_h5_src *src, hid_t loc, const char *name, const char *full, hid_t *g)
{
    *g = -1;
    if (!rg_h5_exists(loc, name)) return rg_h5_err(src, RG_ERR_FORMAT, "missing group %s", full);
    if (obj_type(loc, name) != H5I_GROUP) return rg_h5_err(src, RG_ERR_FORMAT, "%s is not a group", full);
    *g = H5Gopen2(loc, name, H5P_DEFAULT);
    if (*g < 0) return rg_h5_err(src, RG_ERR_FORMAT, "cannot open group %s (corrupt file?)", full);
    return RG_OK;
}

hid_t rg_h5_create_group(hid_t loc, const char *name)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0) return -1;
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    H5Pset_attr_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    return g;
}

void rg_h5_names_free(rg_h5_names *l)
{
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

typedef struct {
    rg_h5_names *l;
    int max_n;
    bool nomem, too_many;
} collector;

static herr_t collect(const char *name, collector *c)
{
    rg_h5_names *l = c->l;
    if (l->n >= c->max_n) {
        c->too_many = true;
        return 1; /* stop */
    }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->names, (size_t)cap * sizeof *p);
        if (!p) { c->nomem = true; return -1; }
        l->names = p;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(name))) { c->nomem = true; return -1; }
    l->n++;
    return 0;
}

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) { return collect(name, data); }
static herr_t attr_cb(hid_t o, const char *name, const H5A_info_t *info, void *data) { return collect(name, data); }

static rg_status list_names(const rg_h5_src *src, hid_t o, const char *full, int max_n, rg_h5_names *l, bool attrs)
{
    memset(l, 0, sizeof *l);
    collector c = {l, max_n, false, false};
    herr_t r = -1;
    for (int pass = 0; pass < 2 && r < 0 && !c.nomem; pass++) {
        rg_h5_names_free(l);
        c.too_many = false;
        hsize_t idx = 0;
        H5_index_t ix = pass == 0 ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
        r = attrs ? H5Aiterate2(o, ix, H5_ITER_INC, &idx, attr_cb, &c) : H5Literate(o, ix, H5_ITER_INC, &idx, link_cb, &c);
    }
    rg_status st = RG_OK;
    if (c.nomem) st = rg_h5_err(src, RG_ERR_NOMEM, "out of memory");
    else if (r < 0) st = rg_h5_err(src, RG_ERR_FORMAT, "cannot list the %s of %s (corrupt file?)",
                                   attrs ? "attributes" : "members", full);
    else if (c.too_many) st = rg_h5_err(src, RG_ERR_FORMAT, "%s has more than %d %s", full, max_n,
                                        attrs ? "attributes" : "members");
    if (st) rg_h5_names_free(l);
    return st;
}

rg_status rg_h5_list_links(const rg_h5_src *src, hid_t g, const char *full, int max_n, rg_h5_names *l)
{
    return list_names(src, g, full, max_n, l, false);
}

rg_status rg_h5_list_attrs(const rg_h5_src *src, hid_t o, const char *full, int max_n, rg_h5_names *l)
{
    return list_names(src, o, full, max_n, l, true);
}

/* ================================================================== datasets */

const char *rg_h5_dtype_name(rg_h5_dtype t)
{
    static const char *const names[] = {"float32", "float64", "int32", "uint64"};
    return (unsigned)t < 4 ? names[t] : "?";
}

static hid_t file_type_of(rg_h5_dtype t)
{
    switch (t) {
    case RG_H5_FLOAT32: return H5T_IEEE_F32LE;
    case RG_H5_FLOAT64: return H5T_IEEE_F64LE;
    case RG_H5_INT32: return H5T_STD_I32LE;
    default: return H5T_STD_U64LE;
    }
}

static hid_t mem_type_of(rg_h5_dtype t)
{
    switch (t) {
    case RG_H5_FLOAT32: return H5T_NATIVE_FLOAT;
    case RG_H5_FLOAT64: return H5T_NATIVE_DOUBLE;
    case RG_H5_INT32: return H5T_NATIVE_INT32;
    default: return H5T_NATIVE_UINT64;
    }
}

/* True if every value of the stored type ft reads into t without loss. */
static bool reads_into(hid_t ft, rg_h5_dtype t)
{
    if (!rg_h5_standard_number(ft)) return false;
    H5T_class_t c = H5Tget_class(ft);
    size_t sz = H5Tget_size(ft);
    bool is_unsigned = H5Tget_sign(ft) == H5T_SGN_NONE;
    switch (t) {
    case RG_H5_FLOAT32: return c == H5T_FLOAT && sz == 4;
    case RG_H5_FLOAT64: return c == H5T_FLOAT && sz == 8;
    case RG_H5_INT32: return c == H5T_INTEGER && (is_unsigned ? sz <= 2 : sz <= 4);
    default: return c == H5T_INTEGER && is_unsigned;
    }
}

herr_t rg_h5_write_dataset(hid_t loc, const char *name, rg_h5_dtype t, int nd, const hsize_t *dims, const void *data,
                           unsigned flags)
{
    hid_t s = H5Screate_simple(nd, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    herr_t r = s < 0 || dcpl < 0 ? -1 : 0;
    hid_t ft = file_type_of(t);
    hsize_t bytes = H5Tget_size(ft);
    for (int i = 0; i < nd; i++) bytes *= dims[i];
    bool chunk = (flags & (RG_H5_CHECKSUM | RG_H5_COMPRESS)) && bytes > 0 && bytes < ((hsize_t)1 << 30);
    if (r >= 0 && (flags & RG_H5_NO_TIMES)) r = H5Pset_obj_track_times(dcpl, 0);
    if (r >= 0 && chunk) r = H5Pset_chunk(dcpl, nd, dims);
    if (r >= 0 && chunk && (flags & RG_H5_COMPRESS)) r = H5Pset_shuffle(dcpl);
    if (r >= 0 && chunk && (flags & RG_H5_COMPRESS)) r = H5Pset_deflate(dcpl, 9);
    if (r >= 0 && chunk && (flags & RG_H5_CHECKSUM)) r = H5Pset_fletcher32(dcpl);
    hid_t d = r < 0 ? -1 : H5Dcreate2(loc, name, ft, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (d < 0) r = -1;
    if (r >= 0) r = H5Dwrite(d, mem_type_of(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    if (d >= 0 && H5Dclose(d) < 0) r = -1;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (s >= 0) H5Sclose(s);
    return r;
}

void rg_h5_shape_str(int nd, const hsize_t *dims, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Opens dataset grp/name and checks its dtype and shape rank; *d open on success. */
static rg_status open_dataset(const rg_h5_src *src, hid_t loc, const char *grp, const char *name, rg_h5_dtype t,
                              int max_nd, int *nd, hsize_t *dims, hid_t *d)
{
    *d = -1;
    if (!rg_h5_exists(loc, name)) return rg_h5_err(src, RG_ERR_FORMAT, "missing dataset %s/%s", grp, name);
    if (obj_type(loc, name) != H5I_DATASET) return rg_h5_err(src, RG_ERR_FORMAT, "%s/%s is not a dataset", grp, name);
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return rg_h5_err(src, RG_ERR_FORMAT, "cannot open dataset %s/%s (corrupt file?)", grp, name);
    hid_t ft = H5Dget_type(ds), s = H5Dget_space(ds);
    rg_status st = RG_OK;
    char tn[64] = "an unreadable type";
    if (ft >= 0) rg_h5_type_desc(ft, tn, sizeof tn);
    int k = s >= 0 && H5Sget_simple_extent_type(s) == H5S_SIMPLE ? H5Sget_simple_extent_ndims(s) : -1;
    if (ft < 0 || !reads_into(ft, t))
        st = rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s has dtype %s, expected %s", grp, name, tn,
                       rg_h5_dtype_name(t));
    else if (k < 1 || k > max_nd || H5Sget_simple_extent_dims(s, dims, NULL) < 0)
        st = rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s does not have a shape of 1 to %d dimensions", grp, name,
                       max_nd);
    if (ft >= 0) H5Tclose(ft);
    if (s >= 0) H5Sclose(s);
    if (st) {
        H5Dclose(ds);
        return st;
    }
    *nd = k;
    *d = ds;
    return RG_OK;
}

rg_status rg_h5_dataset_shape(const rg_h5_src *src, hid_t loc, const char *grp, const char *name, rg_h5_dtype t,
                              int max_nd, int *nd, hsize_t *dims)
{
    hid_t d;
    rg_status st = open_dataset(src, loc, grp, name, t, max_nd, nd, dims, &d);
    if (!st) H5Dclose(d);
    return st;
}

rg_status rg_h5_read_dataset(const rg_h5_src *src, hid_t loc, const char *grp, const char *name, rg_h5_dtype t,
                             int nd, const hsize_t *dims, void *buf)
{
    hsize_t got[32];
    int gnd;
    hid_t d;
    rg_status st = open_dataset(src, loc, grp, name, t, 32, &gnd, got, &d);
    if (st) return st;
    bool same = gnd == nd;
    for (int i = 0; same && i < nd; i++) same = got[i] == dims[i];
    if (!same) {
        char a[200], b[200];
        rg_h5_shape_str(gnd, got, a, sizeof a);
        rg_h5_shape_str(nd, dims, b, sizeof b);
        st = rg_h5_err(src, RG_ERR_SHAPE, "dataset %s/%s has shape %s, expected %s", grp, name, a, b);
    } else if (H5Dread(d, mem_type_of(t), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char detail[256];
        rg_h5_detail(detail, sizeof detail);
        st = rg_h5_err(src, RG_ERR_FORMAT, "cannot read dataset %s/%s (truncated or corrupt file, or a checksum "
                       "mismatch): %s", grp, name, detail);
    }
    H5Dclose(d);
    return st;
}
