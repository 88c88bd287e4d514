/* h5_walk.c: the child's side of rg_h5_image_load (h5_image.h): read the file, verify its digest block, open it
 * with HDF5 from memory, walk every group, dataset and attribute, check each dataset's storage, and write the
 * stream the parent parses (h5_image.c). Runs only in the forked child, under the limits set there.
 *
 * The stream (native byte order: parent and child are the same program on the same machine), after a u32 magic:
 *   'O' str path, u8 kind                                           an object (group, dataset, other link)
 *       dataset: u8 class, u8 size, u8 unsigned, u8 standard, str type desc, i32 nd (-1: not simple),
 *                u64 dims[nd], u8 error kind (0 none, 1 storage, 2 read), str error, u8 has values,
 *                [u64 nbytes, bytes]
 *   'A' str owner path, str name, u8 class, str type desc, i64 npts, u8 standard, u8 has value,
 *       [int: u8 unsigned, u64 bits | float: f64 | string: str], str read error
 *   'E' i32 status, str message                                     the file is refused as a whole; then exit
 *   'Z' u32 number of records before it                             the end: without it the stream is incomplete
 * where str = u32 length + bytes (no NUL). Objects come parent first (a group before its members), each object's
 * attributes right after it. */
#include "h5_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "h5_walk.h"

static void flush_out(writer *w)
{
    for (size_t off = 0; off < w->used;) {
        ssize_t r = write(w->fd, w->buf + off, w->used - off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) _exit(3); /* the parent is gone */
        off += (size_t)r;
    }
    w->used = 0;
}

static void put(writer *w, const void *p, size_t n)
{
    const unsigned char *b = p;
    while (n) {
        if (w->used == sizeof w->buf) flush_out(w);
        size_t k = sizeof w->buf - w->used < n ? sizeof w->buf - w->used : n;
        memcpy(w->buf + w->used, b, k);
        w->used += k;
        b += k;
        n -= k;
    }
}

static void put_u8(writer *w, unsigned v) { unsigned char b = (unsigned char)v; put(w, &b, 1); }
static void put_u32(writer *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(writer *w, uint64_t v) { put(w, &v, 8); }
static void put_str(writer *w, const char *s)
{
    size_t n = strlen(s);
    put_u32(w, (uint32_t)n);
    put(w, s, n);
}

/* Refuses the file as a whole and ends the child. */
static void fail(writer *w, rg_status code, const char *msg)
{
    put_u8(w, RG_H5I_REC_ERR);
    int32_t c = code;
    put(w, &c, 4);
    put_str(w, msg);
    flush_out(w);
    _exit(0);
}

static void count_object(writer *w)
{
    if (++w->objects > w->opts->max_objects) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s %s: more than %d groups, datasets and attributes", w->src->what, w->src->path,
                 w->opts->max_objects);
        fail(w, RG_ERR_FORMAT, msg);
    }
    w->records++;
}

/* ------------------------------------------------------------------ types */

typedef struct {
    unsigned cls, size, is_unsigned, standard;
    char desc[64];
} type_facts;

static void facts_of(hid_t t, type_facts *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->desc, sizeof f->desc, "an unreadable type");
    if (t < 0) { f->cls = RG_H5I_CLS_OTHER; return; }
    H5T_class_t c = H5Tget_class(t);
    f->cls = c == H5T_INTEGER ? RG_H5I_CLS_INT : c == H5T_FLOAT ? RG_H5I_CLS_FLOAT : c == H5T_STRING
             ? RG_H5I_CLS_STRING : RG_H5I_CLS_OTHER;
    size_t sz = H5Tget_size(t);
    f->size = sz < 256 ? (unsigned)sz : 255;
    f->is_unsigned = c == H5T_INTEGER && H5Tget_sign(t) == H5T_SGN_NONE;
    f->standard = (c == H5T_INTEGER || c == H5T_FLOAT) && rg_h5_standard_number(t);
    rg_h5_type_desc(t, f->desc, sizeof f->desc);
}

static void put_facts(writer *w, const type_facts *f)
{
    put_u8(w, f->cls);
    put_u8(w, f->size);
    put_u8(w, f->is_unsigned);
    put_u8(w, f->standard);
    put_str(w, f->desc);
}

/* The native memory type of a standard number type (values are sent as the machine holds them). */
static hid_t native_of(const type_facts *f)
{
    if (f->cls == RG_H5I_CLS_FLOAT) return f->size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    switch (f->size) {
    case 1: return f->is_unsigned ? H5T_NATIVE_UINT8 : H5T_NATIVE_INT8;
    case 2: return f->is_unsigned ? H5T_NATIVE_UINT16 : H5T_NATIVE_INT16;
    case 4: return f->is_unsigned ? H5T_NATIVE_UINT32 : H5T_NATIVE_INT32;
    default: return f->is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64;
    }
}

/* ------------------------------------------------------------------ attributes */

typedef struct {
    char **names;
    int n, cap, max;
    bool too_many;
} name_list;

static herr_t add_name(name_list *l, const char *name)
{
    if (l->n >= l->max) { l->too_many = true; return 1; }
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->names, (size_t)cap * sizeof *p);
        if (!p) return -1;
        l->names = p;
        l->cap = cap;
    }
    if (!(l->names[l->n] = strdup(name))) return -1;
    l->n++;
    return 0;
}

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *d) { return add_name(d, name); }
static herr_t attr_cb(hid_t o, const char *name, const H5A_info_t *info, void *d) { return add_name(d, name); }

static void free_names(name_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    l->names = NULL;
    l->n = l->cap = 0;
}

/* The names of o's links or attributes (creation order if tracked, else by name); false if HDF5 cannot list them. */
static bool list_of(writer *w, hid_t o, bool attrs, name_list *l)
{
    herr_t r = -1;
    for (int pass = 0; pass < 2 && r < 0; pass++) {
        free_names(l);
        l->too_many = false;
        l->max = w->opts->max_objects;
        hsize_t idx = 0;
        H5_index_t ix = pass == 0 ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
        r = attrs ? H5Aiterate2(o, ix, H5_ITER_INC, &idx, attr_cb, l) : H5Literate(o, ix, H5_ITER_INC, &idx, link_cb, l);
    }
    if (l->too_many) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s %s: an object has more than %d %s", w->src->what, w->src->path,
                 w->opts->max_objects, attrs ? "attributes" : "members");
        fail(w, RG_ERR_FORMAT, msg);
    }
    return r >= 0;
}

static void put_attr(writer *w, hid_t o, const char *path, const char *name)
{
    count_object(w);
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, s = a >= 0 ? H5Aget_space(a) : -1;
    type_facts f;
    facts_of(t, &f);
    long long npts = s >= 0 ? (long long)H5Sget_simple_extent_npoints(s) : -1;
    size_t str_size = t >= 0 && f.cls == RG_H5I_CLS_STRING && H5Tis_variable_str(t) <= 0 ? H5Tget_size(t) : 0;
    if (t >= 0) H5Tclose(t);
    if (s >= 0) H5Sclose(s);
    if (a >= 0) H5Aclose(a);
    put_u8(w, RG_H5I_REC_ATTR);
    put_str(w, path);
    put_str(w, name);
    put_facts(w, &f);
    int64_t np = npts;
    put(w, &np, 8);
    /* the value, read by the in-process readers of h5_attr.c (their checks and messages) */
    const char *obj = path[0] ? path : "/";
    char err[1024] = "";
    bool ok = false;
    int64_t x = 0;
    uint64_t u = 0;
    double d = 0;
    char *str = NULL;
    bool is_u = false;
    if (a < 0) snprintf(err, sizeof err, "%s %s: cannot open attribute '%s' on %s (corrupt file?)", w->src->what,
                        w->src->path, name, obj);
    else if (npts == 1 && f.cls == RG_H5I_CLS_INT && f.standard) {
        ok = rg_h5_read_int(w->src, o, obj, name, INT64_MIN, INT64_MAX, &x) == RG_OK;
        if (!ok && f.is_unsigned) ok = is_u = rg_h5_read_u64(w->src, o, obj, name, &u) == RG_OK;
    } else if (npts == 1 && f.cls == RG_H5I_CLS_FLOAT && f.standard) {
        ok = rg_h5_read_f64(w->src, o, obj, name, &d) == RG_OK;
    } else if (npts == 1 && f.cls == RG_H5I_CLS_STRING) {
        if (str_size > RG_H5I_MAX_STR)
            snprintf(err, sizeof err, "%s %s: attribute '%s' on %s has a string size of %zu bytes (at most %d)",
                     w->src->what, w->src->path, name, obj, str_size, RG_H5I_MAX_STR);
        else if ((ok = rg_h5_read_str(w->src, o, obj, name, &str) == RG_OK) && strlen(str) > RG_H5I_MAX_STR) {
            ok = false;
            snprintf(err, sizeof err, "%s %s: attribute '%s' on %s has a string of %zu bytes (at most %d)",
                     w->src->what, w->src->path, name, obj, strlen(str), RG_H5I_MAX_STR);
        }
    }
    if (!ok && !err[0] && npts == 1 && f.cls != RG_H5I_CLS_OTHER && (f.cls == RG_H5I_CLS_STRING || f.standard))
        snprintf(err, sizeof err, "%s", rg_last_error());
    put_u8(w, ok);
    if (ok && f.cls == RG_H5I_CLS_INT) {
        put_u8(w, is_u);
        put_u64(w, is_u ? u : (uint64_t)x);
    } else if (ok && f.cls == RG_H5I_CLS_FLOAT) {
        put(w, &d, 8);
    } else if (ok) {
        put_str(w, str);
    }
    put_str(w, err);
    free(str);
}

static void put_attrs(writer *w, hid_t o, const char *path)
{
    name_list l = {0};
    bool ok = list_of(w, o, true, &l);
    for (int i = 0; ok && i < l.n; i++) put_attr(w, o, path, l.names[i]);
    free_names(&l);
    if (!ok) {
        char msg[4400];
        snprintf(msg, sizeof msg, "%s %s: cannot list the attributes of %s (corrupt file?)", w->src->what,
                 w->src->path, path[0] ? path : "/");
        fail(w, RG_ERR_FORMAT, msg);
    }
}

/* ------------------------------------------------------------------ datasets */

static bool wanted(const writer *w, const char *path)
{
    const char *const *p = w->opts->data_prefixes;
    if (!p) return true;
    for (; *p; p++)
        if (strncmp(path, *p, strlen(*p)) == 0) return true;
    return false;
}

static void put_dataset(writer *w, hid_t g, const char *name, const char *path)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    hid_t t = d >= 0 ? H5Dget_type(d) : -1, s = d >= 0 ? H5Dget_space(d) : -1;
    type_facts f;
    facts_of(t, &f);
    if (t >= 0) H5Tclose(t);
    int nd = s >= 0 && H5Sget_simple_extent_type(s) == H5S_SIMPLE ? H5Sget_simple_extent_ndims(s) : -1;
    hsize_t dims[RG_H5I_MAX_ND] = {0};
    if (nd > RG_H5I_MAX_ND || (nd >= 0 && H5Sget_simple_extent_dims(s, dims, NULL) < 0)) nd = -1;
    if (s >= 0) H5Sclose(s);
    char err[600] = "";
    unsigned err_kind = 0;
    if (d < 0) {
        err_kind = 2;
        snprintf(err, sizeof err, "it cannot be opened (corrupt file?)");
    } else if (nd >= 0 && f.standard) {
        rg_h5i_storage_check(w, d, nd, dims, f.size, err, sizeof err);
        if (err[0]) err_kind = 1;
    }
    unsigned char *data = NULL;
    uint64_t nbytes = 0;
    if (!err_kind && nd >= 0 && f.standard && wanted(w, path)) {
        nbytes = f.size;
        for (int i = 0; i < nd; i++) nbytes *= dims[i]; /* bounded: rg_h5i_storage_check */
        if (nbytes > w->opts->max_data_bytes - w->data_bytes) {
            char msg[4400];
            snprintf(msg, sizeof msg, "%s %s: dataset %s holds %llu bytes: more than the %llu this reader accepts "
                     "in a file", w->src->what, w->src->path, path, (unsigned long long)nbytes,
                     (unsigned long long)w->opts->max_data_bytes);
            fail(w, RG_ERR_FORMAT, msg);
        }
        w->data_bytes += nbytes;
        data = malloc(nbytes ? nbytes : 1);
        if (!data) {
            char msg[4400];
            snprintf(msg, sizeof msg, "%s %s: out of memory for the %llu bytes of dataset %s", w->src->what,
                     w->src->path, (unsigned long long)nbytes, path);
            fail(w, RG_ERR_NOMEM, msg);
        }
        if (nbytes && H5Dread(d, native_of(&f), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
            err_kind = 2;
            rg_h5_detail(err, sizeof err);
            if (!err[0]) snprintf(err, sizeof err, "unknown HDF5 error");
        } else if (nbytes) {
            hid_t ft = H5Dget_type(d);
            if (ft >= 0) rg_h5i_verify_chunks(d, ft, nd, dims, f.size, data, err, sizeof err);
            if (ft >= 0) H5Tclose(ft);
            if (err[0]) err_kind = 1;
        }
        if (err_kind) {
            free(data);
            data = NULL;
        }
    }
    put_u8(w, RG_H5I_REC_OBJ);
    put_str(w, path);
    put_u8(w, RG_H5I_DATASET);
    put_facts(w, &f);
    int32_t k = nd;
    put(w, &k, 4);
    for (int i = 0; i < nd; i++) put_u64(w, dims[i]);
    put_u8(w, err_kind);
    put_str(w, err);
    put_u8(w, data != NULL);
    if (data) {
        put_u64(w, nbytes);
        put(w, data, nbytes);
        free(data);
    }
    if (d >= 0) {
        put_attrs(w, d, path);
        H5Dclose(d);
    }
}

/* ------------------------------------------------------------------ groups */

static void put_obj(writer *w, const char *path, unsigned kind)
{
    put_u8(w, RG_H5I_REC_OBJ);
    put_str(w, path);
    put_u8(w, kind);
}

static void walk_group(writer *w, hid_t g, const char *path, int depth)
{
    name_list l = {0};
    if (!list_of(w, g, false, &l)) {
        char msg[4400];
        snprintf(msg, sizeof msg, "%s %s: cannot list the members of %s (corrupt file?)", w->src->what, w->src->path,
                 path[0] ? path : "/");
        fail(w, RG_ERR_FORMAT, msg);
    }
    for (int i = 0; i < l.n; i++) {
        const char *name = l.names[i];
        char child[2 * RG_H5I_MAX_NAME + 2];
        if (strlen(path) + 1 + strlen(name) > RG_H5I_MAX_NAME || strchr(name, '/') || !name[0]) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s %s: a member of %s has an empty, too long or invalid name", w->src->what,
                     w->src->path, path[0] ? path : "/");
            fail(w, RG_ERR_FORMAT, msg);
        }
        snprintf(child, sizeof child, "%s/%.*s", path, RG_H5I_MAX_NAME, name);
        count_object(w);
        H5L_info_t li;
        H5O_info_t oi;
        /* only hard links are followed: a soft or external link (another file) is an object of kind "other" */
        if (H5Lget_info(g, name, &li, H5P_DEFAULT) < 0 || li.type != H5L_TYPE_HARD ||
            H5Oget_info_by_name2(g, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
            put_obj(w, child, RG_H5I_OTHER);
            continue;
        }
        if (oi.type == H5O_TYPE_DATASET) {
            put_dataset(w, g, name, child);
            continue;
        }
        bool seen = false;
        for (int k = 0; k < w->n_groups; k++) seen = seen || w->groups[k] == oi.addr;
        if (oi.type != H5O_TYPE_GROUP || seen || depth + 1 > RG_H5I_MAX_DEPTH) {
            put_obj(w, child, RG_H5I_OTHER);
            continue;
        }
        hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
        if (sub < 0) {
            put_obj(w, child, RG_H5I_OTHER);
            continue;
        }
        if (w->n_groups == w->cap_groups) {
            int cap = w->cap_groups ? 2 * w->cap_groups : 16;
            haddr_t *p = realloc(w->groups, (size_t)cap * sizeof *p);
            if (!p) fail(w, RG_ERR_NOMEM, "out of memory in the HDF5 reader process");
            w->groups = p;
            w->cap_groups = cap;
        }
        w->groups[w->n_groups++] = oi.addr;
        put_obj(w, child, RG_H5I_GROUP);
        put_attrs(w, sub, child);
        walk_group(w, sub, child, depth + 1);
        H5Gclose(sub);
    }
    free_names(&l);
}

void rg_h5i_child_main(const rg_h5_src *src, const rg_h5_image_opts *opts, int fd, size_t n, int out_fd)
{
    static writer w;
    w.fd = out_fd;
    w.src = src;
    w.opts = opts;
    w.file_n = n;
    put_u32(&w, RG_H5I_MAGIC);
    unsigned char *buf = malloc(n ? n : 1);
    char msg[4400];
    if (!buf) {
        snprintf(msg, sizeof msg, "%s %s: out of memory for its %zu bytes", src->what, src->path, n);
        fail(&w, RG_ERR_NOMEM, msg);
    }
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(msg, sizeof msg, "%s %s: read failed: %s", src->what, src->path,
                     r < 0 ? strerror(errno) : "file shrank");
            fail(&w, RG_ERR_IO, msg);
        }
        got += (size_t)r;
    }
    close(fd);
    bool sealed = false;
    rg_status st = opts->skip_digest ? RG_OK : rg_guard_verify(src, buf, n, &sealed);
    hid_t f = -1;
    if (!st) st = rg_h5_open_image(src, buf, n, &f);
    if (st) fail(&w, st, rg_last_error());
    free(buf); /* HDF5 holds its own copy */
    put_obj(&w, "", RG_H5I_GROUP);
    w.records++;
    put_attrs(&w, f, "");
    walk_group(&w, f, "", 0);
    put_u8(&w, RG_H5I_REC_END);
    put_u32(&w, w.records);
    flush_out(&w);
}
