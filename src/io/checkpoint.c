/* checkpoint.c: see checkpoint.h and docs/checkpoint.md. */
#include "checkpoint.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef RG_DOUBLE
#define H5_REAL_MEM H5T_NATIVE_DOUBLE
#define H5_REAL_FILE H5T_IEEE_F64LE
#else
#define H5_REAL_MEM H5T_NATIVE_FLOAT
#define H5_REAL_FILE H5T_IEEE_F32LE
#endif

int (*rg_checkpoint_test_hook_before_rename)(const char *tmp_path) = NULL;

/* ================================================================== run state */

void rg_run_state_init(rg_run_state *rs) { memset(rs, 0, sizeof *rs); }

static rg_status check_key(const char *what, const char *key)
{
    if (!key || !key[0]) return rg_error(RG_ERR_ARG, "%s: empty name", what);
    if (strlen(key) >= RG_CKPT_KEY_LEN)
        return rg_error(RG_ERR_ARG, "%s '%s': longer than %d characters", what, key, RG_CKPT_KEY_LEN - 1);
    if (strchr(key, '/')) return rg_error(RG_ERR_ARG, "%s '%s': contains '/'", what, key);
    return RG_OK;
}

rg_rng *rg_run_state_rng(rg_run_state *rs, const char *name)
{
    for (int i = 0; i < rs->n_rngs; i++)
        if (strcmp(rs->rngs[i].name, name) == 0) return &rs->rngs[i].rng;
    return NULL;
}

rg_rng *rg_run_state_add_rng(rg_run_state *rs, const char *name, const rg_rng *init)
{
    if (check_key("run state RNG", name) != RG_OK) return NULL;
    rg_rng *r = rg_run_state_rng(rs, name);
    if (!r) {
        if (rs->n_rngs >= RG_CKPT_MAX_RNGS) {
            rg_error(RG_ERR_ARG, "run state RNG '%s': already %d RNGs (RG_CKPT_MAX_RNGS)", name, RG_CKPT_MAX_RNGS);
            return NULL;
        }
        rg_named_rng *n = &rs->rngs[rs->n_rngs++];
        snprintf(n->name, sizeof n->name, "%s", name);
        r = &n->rng;
    }
    *r = *init;
    return r;
}

const rg_run_attr *rg_run_state_attr(const rg_run_state *rs, const char *key)
{
    for (int i = 0; i < rs->n_attrs; i++)
        if (strcmp(rs->attrs[i].key, key) == 0) return &rs->attrs[i];
    return NULL;
}

static rg_run_attr *attr_slot(rg_run_state *rs, const char *key)
{
    if (check_key("run state attribute", key) != RG_OK) return NULL;
    rg_run_attr *a = (rg_run_attr *)rg_run_state_attr(rs, key);
    if (a) return a;
    if (rs->n_attrs >= RG_CKPT_MAX_ATTRS) {
        rg_error(RG_ERR_ARG, "run state attribute '%s': already %d attributes (RG_CKPT_MAX_ATTRS)", key,
                 RG_CKPT_MAX_ATTRS);
        return NULL;
    }
    a = &rs->attrs[rs->n_attrs++];
    memset(a, 0, sizeof *a);
    snprintf(a->key, sizeof a->key, "%s", key);
    return a;
}

rg_status rg_run_state_set_int(rg_run_state *rs, const char *key, int64_t v)
{
    rg_run_attr *a = attr_slot(rs, key);
    if (!a) return RG_ERR_ARG;
    a->type = RG_RUN_ATTR_INT;
    a->i = v;
    return RG_OK;
}

rg_status rg_run_state_set_double(rg_run_state *rs, const char *key, double v)
{
    rg_run_attr *a = attr_slot(rs, key);
    if (!a) return RG_ERR_ARG;
    a->type = RG_RUN_ATTR_DOUBLE;
    a->d = v;
    return RG_OK;
}

rg_status rg_run_state_set_str(rg_run_state *rs, const char *key, const char *v)
{
    if (strlen(v) >= RG_CKPT_STR_LEN)
        return rg_error(RG_ERR_ARG, "run state attribute '%s': value longer than %d characters", key,
                        RG_CKPT_STR_LEN - 1);
    rg_run_attr *a = attr_slot(rs, key);
    if (!a) return RG_ERR_ARG;
    a->type = RG_RUN_ATTR_STRING;
    snprintf(a->s, sizeof a->s, "%s", v);
    return RG_OK;
}

/* ================================================================== HDF5 error handling */

/* HDF5 prints its error stack to stderr by default; every public function here switches that off and restores the
 * previous handler on return. */
typedef struct {
    H5E_auto2_t func;
    void *data;
} h5_quiet;

static void quiet_begin(h5_quiet *q)
{
    q->func = NULL;
    q->data = NULL;
    H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void quiet_end(const h5_quiet *q) { H5Eset_auto2(H5E_DEFAULT, q->func, q->data); }

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    if (e->desc && e->desc[0]) snprintf(buf, 256, "%s", e->desc);
    return 0;
}

/* The innermost description on HDF5's current error stack (the most specific), or "" (buf has 256 bytes). Call
 * right after the failing HDF5 call. */
static const char *h5_detail(char *buf)
{
    buf[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, walk_cb, buf);
    return buf;
}

/* rg_error with the "checkpoint <path>: " prefix. */
static rg_status ck_err(rg_status code, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static rg_status ck_err(rg_status code, const char *path, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rg_error(code, "checkpoint %s: %s", path, msg);
}

static void close_id(hid_t *id, herr_t (*fn)(hid_t))
{
    if (*id >= 0) fn(*id);
    *id = -1;
}

/* "float64", "int32", "string", ... for an HDF5 datatype. */
static void dtype_name(hid_t t, char *buf, size_t n)
{
    H5T_class_t c = H5Tget_class(t);
    size_t sz = H5Tget_size(t);
    switch (c) {
    case H5T_FLOAT: snprintf(buf, n, "float%zu", sz * 8); break;
    case H5T_INTEGER: snprintf(buf, n, "%sint%zu", H5Tget_sign(t) == H5T_SGN_NONE ? "u" : "", sz * 8); break;
    case H5T_STRING: snprintf(buf, n, "string"); break;
    case H5T_COMPOUND: snprintf(buf, n, "compound"); break;
    default: snprintf(buf, n, "HDF5 type class %d", (int)c); break;
    }
}

static void shape_str(int nd, const hsize_t *dims, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* ================================================================== writing helpers */

static herr_t write_attr(hid_t loc, const char *name, hid_t filetype, hid_t memtype, const void *v)
{
    hid_t s = H5Screate(H5S_SCALAR);
    if (s < 0) return -1;
    hid_t a = H5Acreate2(loc, name, filetype, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = -1;
    if (a >= 0) {
        r = H5Awrite(a, memtype, v);
        if (H5Aclose(a) < 0) r = -1;
    }
    H5Sclose(s);
    return r;
}

static herr_t attr_i32(hid_t loc, const char *name, int v)
{
    int32_t x = v;
    return write_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &x);
}
static herr_t attr_i64(hid_t loc, const char *name, int64_t v)
{
    return write_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}
static herr_t attr_u64(hid_t loc, const char *name, uint64_t v)
{
    return write_attr(loc, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &v);
}
static herr_t attr_f64(hid_t loc, const char *name, double v)
{
    return write_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}
/* A fixed-length, NUL-terminated ASCII string. */
static herr_t attr_str(hid_t loc, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return -1;
    herr_t r = H5Tset_size(t, strlen(v) + 1);
    if (r >= 0) r = H5Tset_strpad(t, H5T_STR_NULLTERM);
    if (r >= 0) r = write_attr(loc, name, t, t, v);
    H5Tclose(t);
    return r;
}

/* A group whose links remember their creation order (so registry order survives; h5py/h5ls still list by name). */
static hid_t make_group(hid_t loc, const char *name)
{
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0) return -1;
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    return g;
}

/* A dataset stored as one chunk with the Fletcher-32 checksum filter: HDF5 verifies the checksum on every read,
 * so a flipped bit in the values is an error instead of a silently wrong weight (h5py and h5dump read it as
 * usual). Datasets of 1 GiB or more are written contiguous, without checksum (HDF5's chunk limit is 4 GiB). */
static herr_t write_dataset(hid_t loc, const char *name, hid_t filetype, hid_t memtype, int nd, const hsize_t *dims,
                            const void *data)
{
    hid_t s = H5Screate_simple(nd, dims, NULL);
    if (s < 0) return -1;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0) {
        H5Sclose(s);
        return -1;
    }
    hsize_t bytes = H5Tget_size(filetype);
    for (int i = 0; i < nd; i++) bytes *= dims[i];
    if (bytes < ((hsize_t)1 << 30) && (H5Pset_chunk(dcpl, nd, dims) < 0 || H5Pset_fletcher32(dcpl) < 0)) {
        H5Pclose(dcpl);
        H5Sclose(s);
        return -1;
    }
    hid_t d = H5Dcreate2(loc, name, filetype, s, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    herr_t r = -1;
    if (d >= 0) {
        r = H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
        if (H5Dclose(d) < 0) r = -1;
    }
    H5Pclose(dcpl);
    H5Sclose(s);
    return r;
}

static herr_t write_tensor(hid_t loc, const char *name, const rg_tensor *t, const rg_real *data)
{
    hsize_t dims[RG_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) dims[i] = (hsize_t)t->shape[i];
    return write_dataset(loc, name, H5_REAL_FILE, H5_REAL_MEM, t->ndim, dims, data);
}

/* ================================================================== config */

static const char *rope_layout_of(rg_pos_kind k)
{
    return k == RG_POS_ROPE ? "interleaved" : k == RG_POS_ROPE_HALF ? "half" : "none";
}

/* cfg with rotary_dim and rope_orig_len resolved as tools/ref_model.py does. */
static rg_model_config resolved(const rg_model_config *cfg)
{
    rg_model_config c = *cfg;
    if (c.rotary_dim == 0 && c.n_heads > 0) c.rotary_dim = rg_rope_dim(&c);
    if (c.rope_orig_len == 0) c.rope_orig_len = c.max_len;
    return c;
}

typedef enum { K_INT, K_BOOL, K_DOUBLE, K_POS, K_EXT } key_type;
typedef struct {
    const char *name;
    key_type type;
    size_t off;
    bool optional;  /* absent in older files: read as 0 (the field's "unset") */
} config_key;

#define CK(name, type) {#name, type, offsetof(rg_model_config, name), false}
static const config_key CONFIG_KEYS[] = {
    CK(vocab_size, K_INT),
    CK(d_model, K_INT),
    CK(n_heads, K_INT),
    CK(n_layers, K_INT),
    CK(d_ff, K_INT),
    CK(max_len, K_INT),
    CK(causal, K_BOOL),
    {"pos_encoding", K_POS, offsetof(rg_model_config, pos), false},
    CK(rope_base, K_DOUBLE),
    CK(rotary_dim, K_INT),
    CK(rope_ext, K_EXT),
    CK(rope_scale, K_DOUBLE),
    CK(rope_orig_len, K_INT),
    CK(llama3_low_freq_factor, K_DOUBLE),
    CK(llama3_high_freq_factor, K_DOUBLE),
    CK(yarn_beta_fast, K_DOUBLE),
    CK(yarn_beta_slow, K_DOUBLE),
    {"rope_attention_factor", K_DOUBLE, offsetof(rg_model_config, rope_attention_factor), true},
    {"partial_rotary_factor", K_DOUBLE, offsetof(rg_model_config, partial_rotary_factor), true},
    CK(t5_num_buckets, K_INT),
    CK(t5_max_distance, K_INT),
    {"fire_mlp_width", K_INT, offsetof(rg_model_config, fire_mlp_width), true},
    {"fire_init_c", K_DOUBLE, offsetof(rg_model_config, fire_init_c), true},
    {"fire_init_L", K_DOUBLE, offsetof(rg_model_config, fire_init_L), true},
    {"fire_eps", K_DOUBLE, offsetof(rg_model_config, fire_eps), true},
};
#undef CK
#define N_CONFIG_KEYS (int)(sizeof CONFIG_KEYS / sizeof CONFIG_KEYS[0])

/* The value of key k of cfg as text (for messages). */
static void config_value_str(const rg_model_config *cfg, const config_key *k, char *buf, size_t n)
{
    const char *p = (const char *)cfg + k->off;
    switch (k->type) {
    case K_INT: snprintf(buf, n, "%d", *(const int *)p); break;
    case K_BOOL: snprintf(buf, n, "%d", *(const bool *)p ? 1 : 0); break;
    case K_DOUBLE: snprintf(buf, n, "%.17g", *(const double *)p); break;
    case K_POS: snprintf(buf, n, "'%s'", rg_pos_name(*(const rg_pos_kind *)p)); break;
    case K_EXT: snprintf(buf, n, "'%s'", rg_rope_ext_name(*(const rg_rope_ext *)p)); break;
    }
}

static bool config_value_equal(const rg_model_config *a, const rg_model_config *b, const config_key *k)
{
    const char *pa = (const char *)a + k->off, *pb = (const char *)b + k->off;
    switch (k->type) {
    case K_INT: return *(const int *)pa == *(const int *)pb;
    case K_BOOL: return *(const bool *)pa == *(const bool *)pb;
    case K_DOUBLE: return memcmp(pa, pb, sizeof(double)) == 0 || *(const double *)pa == *(const double *)pb;
    case K_POS: return *(const rg_pos_kind *)pa == *(const rg_pos_kind *)pb;
    case K_EXT: return *(const rg_rope_ext *)pa == *(const rg_rope_ext *)pb;
    }
    return false;
}

static herr_t write_config(hid_t g, const rg_model_config *cfg_in, const rg_run_state *rs)
{
    rg_model_config cfg = resolved(cfg_in);
    herr_t r = 0;
    for (int i = 0; i < N_CONFIG_KEYS && r >= 0; i++) {
        const config_key *k = &CONFIG_KEYS[i];
        const char *p = (const char *)&cfg + k->off;
        switch (k->type) {
        case K_INT: r = attr_i32(g, k->name, *(const int *)p); break;
        case K_BOOL: r = attr_i32(g, k->name, *(const bool *)p ? 1 : 0); break;
        case K_DOUBLE: r = attr_f64(g, k->name, *(const double *)p); break;
        case K_POS: r = attr_str(g, k->name, rg_pos_name(*(const rg_pos_kind *)p)); break;
        case K_EXT: r = attr_str(g, k->name, rg_rope_ext_name(*(const rg_rope_ext *)p)); break;
        }
        if (r >= 0 && k->type == K_POS) r = attr_str(g, "rope_layout", rope_layout_of(cfg.pos));
    }
    if (r >= 0) r = attr_str(g, "task", rs->task);
    if (r >= 0) r = attr_i64(g, "L_train", rs->L_train);
    if (r >= 0) r = attr_u64(g, "seed", rs->seed);
    return r;
}

/* ================================================================== reading helpers */

/* All readers return RG_OK or an rg_error with the checkpoint prefix. `obj` names the object for messages. */
typedef struct {
    const char *path;
    hid_t file;
} reader;

static rg_status open_attr(const reader *rd, hid_t loc, const char *obj, const char *name, H5T_class_t want,
                           const char *want_name, hid_t *attr)
{
    *attr = -1;
    htri_t ex = H5Aexists(loc, name);
    if (ex <= 0)
        return ck_err(RG_ERR_FORMAT, rd->path, "missing attribute '%s' on %s", name, obj);
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return ck_err(RG_ERR_FORMAT, rd->path, "cannot open attribute '%s' on %s (corrupt file?)", name, obj);
    hid_t s = H5Aget_space(a), t = H5Aget_type(a);
    hssize_t npts = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    char tn[64] = "?";
    if (t >= 0) dtype_name(t, tn, sizeof tn);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    if (npts != 1) {
        H5Aclose(a);
        return ck_err(RG_ERR_FORMAT, rd->path, "attribute '%s' on %s has %lld values, expected 1", name, obj,
                      (long long)npts);
    }
    if (cls != want) {
        H5Aclose(a);
        return ck_err(RG_ERR_FORMAT, rd->path, "attribute '%s' on %s is %s, expected %s", name, obj, tn, want_name);
    }
    *attr = a;
    return RG_OK;
}

/* Reads a scalar attribute of HDF5 class `cls` (described as `cls_name` in errors) as `memtype` into *v. */
static rg_status read_attr_scalar(const reader *rd, hid_t loc, const char *obj, const char *name, H5T_class_t cls,
                                  const char *cls_name, hid_t memtype, void *v)
{
    hid_t a;
    rg_status st = open_attr(rd, loc, obj, name, cls, cls_name, &a);
    if (st) return st;
    herr_t r = H5Aread(a, memtype, v);
    H5Aclose(a);
    return r < 0 ? ck_err(RG_ERR_FORMAT, rd->path, "cannot read attribute '%s' on %s", name, obj) : RG_OK;
}

static rg_status read_attr_i64(const reader *rd, hid_t loc, const char *obj, const char *name, int64_t *v)
{
    return read_attr_scalar(rd, loc, obj, name, H5T_INTEGER, "an integer", H5T_NATIVE_INT64, v);
}

static rg_status read_attr_u64(const reader *rd, hid_t loc, const char *obj, const char *name, uint64_t *v)
{
    return read_attr_scalar(rd, loc, obj, name, H5T_INTEGER, "an integer", H5T_NATIVE_UINT64, v);
}

static rg_status read_attr_int(const reader *rd, hid_t loc, const char *obj, const char *name, int *v)
{
    int64_t x;
    rg_status st = read_attr_i64(rd, loc, obj, name, &x);
    if (st) return st;
    if (x < INT32_MIN || x > INT32_MAX)
        return ck_err(RG_ERR_FORMAT, rd->path, "attribute '%s' on %s = %lld is out of range", name, obj,
                      (long long)x);
    *v = (int)x;
    return RG_OK;
}

static rg_status read_attr_f64(const reader *rd, hid_t loc, const char *obj, const char *name, double *v)
{
    return read_attr_scalar(rd, loc, obj, name, H5T_FLOAT, "a float", H5T_NATIVE_DOUBLE, v);
}

/* Reads an open string attribute (fixed or variable length) into buf (n bytes). */
static rg_status read_str_from(const reader *rd, hid_t a, const char *obj, const char *name, char *buf, size_t n)
{
    hid_t ft = H5Aget_type(a);
    if (ft < 0) return ck_err(RG_ERR_FORMAT, rd->path, "cannot read attribute '%s' on %s", name, obj);
    rg_status st = RG_OK;
    if (H5Tis_variable_str(ft) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        char *s = NULL;
        if (H5Aread(a, mt, &s) < 0 || !s) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "cannot read attribute '%s' on %s", name, obj);
        } else {
            if (strlen(s) >= n)
                st = ck_err(RG_ERR_FORMAT, rd->path, "attribute '%s' on %s is longer than %zu characters", name,
                            obj, n - 1);
            else
                snprintf(buf, n, "%s", s);
            H5free_memory(s);
        }
        H5Tclose(mt);
    } else {
        size_t sz = H5Tget_size(ft);
        char *tmp = calloc(sz + 2, 1);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, sz + 1);
        H5Tset_strpad(mt, H5T_STR_NULLTERM);
        if (!tmp) {
            st = ck_err(RG_ERR_NOMEM, rd->path, "out of memory");
        } else if (H5Aread(a, mt, tmp) < 0) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "cannot read attribute '%s' on %s", name, obj);
        } else if (strlen(tmp) >= n) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "attribute '%s' on %s is longer than %zu characters", name, obj,
                        n - 1);
        } else {
            snprintf(buf, n, "%s", tmp);
        }
        free(tmp);
        H5Tclose(mt);
    }
    H5Tclose(ft);
    return st;
}

static rg_status read_attr_str(const reader *rd, hid_t loc, const char *obj, const char *name, char *buf, size_t n)
{
    hid_t a;
    rg_status st = open_attr(rd, loc, obj, name, H5T_STRING, "a string", &a);
    if (st) return st;
    st = read_str_from(rd, a, obj, name, buf, n);
    H5Aclose(a);
    return st;
}

static bool link_exists(hid_t loc, const char *name) { return H5Lexists(loc, name, H5P_DEFAULT) > 0; }

/* H5I_GROUP, H5I_DATASET, ... of the object `name` of loc, or H5I_BADID (portable across HDF5 1.10 and 1.12). */
static H5I_type_t obj_type(hid_t loc, const char *name)
{
    hid_t o = H5Oopen(loc, name, H5P_DEFAULT);
    if (o < 0) return H5I_BADID;
    H5I_type_t t = H5Iget_type(o);
    H5Oclose(o);
    return t;
}

/* Opens group `name` of loc; RG_ERR_FORMAT if missing. */
static rg_status open_group(const reader *rd, hid_t loc, const char *name, const char *full, hid_t *g)
{
    *g = -1;
    if (!link_exists(loc, name)) return ck_err(RG_ERR_FORMAT, rd->path, "missing group %s", full);
    if (obj_type(loc, name) != H5I_GROUP)
        return ck_err(RG_ERR_FORMAT, rd->path, "%s is not a group", full);
    *g = H5Gopen2(loc, name, H5P_DEFAULT);
    if (*g < 0) return ck_err(RG_ERR_FORMAT, rd->path, "cannot open group %s (corrupt file?)", full);
    return RG_OK;
}

/* Opens the file read-only and checks the root format attributes. */
static rg_status open_checkpoint(const char *path, hid_t *out)
{
    *out = -1;
    struct stat st;
    if (stat(path, &st) != 0) return ck_err(RG_ERR_IO, path, "cannot open: %s", strerror(errno));
    if (!S_ISREG(st.st_mode)) return ck_err(RG_ERR_IO, path, "not a regular file");
    if (st.st_size == 0) return ck_err(RG_ERR_FORMAT, path, "empty file (0 bytes), not a checkpoint");
    char detail[256];
    htri_t is = H5Fis_hdf5(path);
    if (is == 0)
        return ck_err(RG_ERR_FORMAT, path, "not an HDF5 file (no HDF5 signature in its %lld bytes)",
                      (long long)st.st_size);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (f < 0) h5_detail(detail);
    if (fapl >= 0) H5Pclose(fapl);
    if (f < 0) {
        bool locked = strstr(detail, "unable to lock") || strstr(detail, "lock the file") || strstr(detail, "locking");
        return ck_err(locked ? RG_ERR_IO : RG_ERR_FORMAT, path,
                      "cannot open (locked by another process, or not a valid HDF5 file: truncated or corrupt; "
                      "%lld bytes): %s", (long long)st.st_size, detail[0] ? detail : "unknown HDF5 error");
    }
    reader rd = {path, f};
    char fmt[64];
    if (H5Aexists(f, "format") <= 0) {
        H5Fclose(f);
        return ck_err(RG_ERR_FORMAT, path, "not a ropegrad checkpoint: an HDF5 file without the root attribute "
                      "'format' (written by another program?)");
    }
    rg_status s = read_attr_str(&rd, f, "/", "format", fmt, sizeof fmt);
    if (!s && strcmp(fmt, RG_CKPT_FORMAT) != 0)
        s = ck_err(RG_ERR_FORMAT, path, "not a ropegrad checkpoint: root attribute format = '%s', expected '%s'",
                   fmt, RG_CKPT_FORMAT);
    int64_t version = 0;
    if (!s) s = read_attr_i64(&rd, f, "/", "format_version", &version);
    if (!s && version != RG_CKPT_VERSION)
        s = ck_err(RG_ERR_FORMAT, path, "format_version %lld is not supported (this build reads version %d)",
                   (long long)version, RG_CKPT_VERSION);
    if (s) {
        H5Fclose(f);
        return s;
    }
    *out = f;
    return RG_OK;
}

static rg_status read_config_group(const reader *rd, rg_model_config *cfg, rg_run_state *rs)
{
    hid_t g;
    rg_status st = open_group(rd, rd->file, "config", "/config", &g);
    if (st) return st;
    rg_model_config c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < N_CONFIG_KEYS && !st; i++) {
        const config_key *k = &CONFIG_KEYS[i];
        char *p = (char *)&c + k->off;
        char s[64];
        int v;
        if (k->optional && H5Aexists(g, k->name) == 0) continue;
        switch (k->type) {
        case K_INT: st = read_attr_int(rd, g, "/config", k->name, (int *)p); break;
        case K_BOOL:
            st = read_attr_int(rd, g, "/config", k->name, &v);
            if (!st) *(bool *)p = v != 0;
            break;
        case K_DOUBLE: st = read_attr_f64(rd, g, "/config", k->name, (double *)p); break;
        case K_POS:
            st = read_attr_str(rd, g, "/config", k->name, s, sizeof s);
            if (!st && rg_pos_parse(s, (rg_pos_kind *)p) != RG_OK)
                st = ck_err(RG_ERR_FORMAT, rd->path, "/config: %s", rg_last_error());
            break;
        case K_EXT:
            st = read_attr_str(rd, g, "/config", k->name, s, sizeof s);
            if (!st && rg_rope_ext_parse(s, (rg_rope_ext *)p) != RG_OK)
                st = ck_err(RG_ERR_FORMAT, rd->path, "/config: %s", rg_last_error());
            break;
        }
    }
    char layout[32];
    if (!st) st = read_attr_str(rd, g, "/config", "rope_layout", layout, sizeof layout);
    if (!st && strcmp(layout, rope_layout_of(c.pos)) != 0)
        st = ck_err(RG_ERR_FORMAT, rd->path, "/config: rope_layout '%s' does not match pos_encoding '%s' "
                    "(expected '%s')", layout, rg_pos_name(c.pos), rope_layout_of(c.pos));
    if (!st) st = read_attr_str(rd, g, "/config", "task", rs->task, sizeof rs->task);
    if (!st) st = read_attr_i64(rd, g, "/config", "L_train", &rs->L_train);
    if (!st) st = read_attr_u64(rd, g, "/config", "seed", &rs->seed);
    H5Gclose(g);
    if (!st) *cfg = c;
    return st;
}

/* Names of the links of a group, in creation order when tracked, else by name. */
typedef struct {
    char **names;
    int n, cap;
    bool nomem;
} name_list;

static herr_t collect_cb(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    name_list *l = data;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->names, (size_t)cap * sizeof *p);
        if (!p) { l->nomem = true; return -1; }
        l->names = p;
        l->cap = cap;
    }
    l->names[l->n] = strdup(name);
    if (!l->names[l->n]) { l->nomem = true; return -1; }
    l->n++;
    return 0;
}

static void name_list_free(name_list *l)
{
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

static rg_status list_group(const reader *rd, hid_t g, const char *full, name_list *l)
{
    memset(l, 0, sizeof *l);
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, collect_cb, l) < 0 && !l->nomem) {
        name_list_free(l);
        idx = 0;
        if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_cb, l) < 0 && !l->nomem) {
            name_list_free(l);
            return ck_err(RG_ERR_FORMAT, rd->path, "cannot list group %s (corrupt file?)", full);
        }
    }
    if (l->nomem) {
        name_list_free(l);
        return ck_err(RG_ERR_NOMEM, rd->path, "out of memory");
    }
    return RG_OK;
}

/* Checks that dataset `name` in group g (full path `full` for messages) exists, has the float type of the build
 * and the shape of t, and reads it into buf (t->numel values). */
static rg_status read_param_dataset(const reader *rd, hid_t g, const char *full, const char *name,
                                    const rg_tensor *t, rg_real *buf)
{
    if (!link_exists(g, name)) return ck_err(RG_ERR_FORMAT, rd->path, "missing dataset %s/%s", full, name);
    if (obj_type(g, name) != H5I_DATASET)
        return ck_err(RG_ERR_FORMAT, rd->path, "%s/%s is not a dataset", full, name);
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    if (d < 0) return ck_err(RG_ERR_FORMAT, rd->path, "cannot open dataset %s/%s (corrupt file?)", full, name);
    rg_status st = RG_OK;
    hid_t t_id = H5Dget_type(d), s = H5Dget_space(d);
    if (t_id < 0 || s < 0) {
        st = ck_err(RG_ERR_FORMAT, rd->path, "cannot read the type or shape of dataset %s/%s", full, name);
        goto done;
    }
    if (H5Tget_class(t_id) != H5T_FLOAT || H5Tget_size(t_id) != sizeof(rg_real)) {
        char tn[64];
        dtype_name(t_id, tn, sizeof tn);
        st = ck_err(RG_ERR_FORMAT, rd->path, "dataset %s/%s has dtype %s, expected %s", full, name, tn,
                    RG_REAL_NAME);
        goto done;
    }
    hsize_t dims[32];
    int nd = H5Sget_simple_extent_ndims(s);
    if (nd < 0 || nd > 32 || H5Sget_simple_extent_type(s) != H5S_SIMPLE) {
        st = ck_err(RG_ERR_FORMAT, rd->path, "dataset %s/%s has no simple shape", full, name);
        goto done;
    }
    H5Sget_simple_extent_dims(s, dims, NULL);
    bool same = nd == t->ndim;
    for (int i = 0; same && i < nd; i++) same = dims[i] == (hsize_t)t->shape[i];
    if (!same) {
        char a[160], b[160];
        hsize_t want[RG_MAX_DIMS];
        for (int i = 0; i < t->ndim; i++) want[i] = (hsize_t)t->shape[i];
        shape_str(nd, dims, a, sizeof a);
        shape_str(t->ndim, want, b, sizeof b);
        st = ck_err(RG_ERR_SHAPE, rd->path, "dataset %s/%s has shape %s, the model's parameter %s has shape %s",
                    full, name, a, name, b);
        goto done;
    }
    if (H5Dread(d, H5_REAL_MEM, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        char detail[256];
        h5_detail(detail);
        st = ck_err(RG_ERR_FORMAT, rd->path, "cannot read dataset %s/%s (truncated or corrupt file, or a checksum "
                    "mismatch): %s", full, name, detail);
    }
done:
    if (t_id >= 0) H5Tclose(t_id);
    if (s >= 0) H5Sclose(s);
    H5Dclose(d);
    return st;
}

/* Reads every parameter's dataset of group `full` (e.g. "/params") into bufs[i] and rejects datasets that are not
 * parameters. */
static rg_status read_param_group(const reader *rd, hid_t loc, const char *rel, const char *full,
                                  const rg_params *ps, rg_real **bufs)
{
    hid_t g;
    rg_status st = open_group(rd, loc, rel, full, &g);
    if (st) return st;
    name_list l;
    st = list_group(rd, g, full, &l);
    for (int i = 0; !st && i < l.n; i++)
        if (!rg_params_find(ps, l.names[i]))
            st = ck_err(RG_ERR_FORMAT, rd->path, "unknown dataset %s/%s: the model has no parameter of that name",
                        full, l.names[i]);
    for (int i = 0; !st && i < ps->n; i++)
        st = read_param_dataset(rd, g, full, ps->items[i]->name, ps->items[i], bufs[i]);
    name_list_free(&l);
    H5Gclose(g);
    return st;
}

static rg_status read_rngs(const reader *rd, rg_run_state *rs)
{
    rs->n_rngs = 0;
    if (!link_exists(rd->file, "rng")) return RG_OK;
    hid_t g;
    rg_status st = open_group(rd, rd->file, "rng", "/rng", &g);
    if (st) return st;
    name_list l;
    st = list_group(rd, g, "/rng", &l);
    if (!st && l.n > RG_CKPT_MAX_RNGS)
        st = ck_err(RG_ERR_FORMAT, rd->path, "/rng has %d RNGs, at most %d supported", l.n, RG_CKPT_MAX_RNGS);
    for (int i = 0; !st && i < l.n; i++) {
        const char *name = l.names[i];
        if (strlen(name) >= RG_CKPT_KEY_LEN) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "/rng/%s: name longer than %d characters", name,
                        RG_CKPT_KEY_LEN - 1);
            break;
        }
        hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
        if (d < 0) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "/rng/%s is not a dataset", name);
            break;
        }
        hid_t t = H5Dget_type(d), s = H5Dget_space(d);
        hssize_t npts = s >= 0 ? H5Sget_simple_extent_npoints(s) : -1;
        uint64_t v[2];
        if (t < 0 || H5Tget_class(t) != H5T_INTEGER || H5Tget_size(t) != 8 || H5Tget_sign(t) != H5T_SGN_NONE ||
            npts != 2) {
            char tn[64] = "?";
            if (t >= 0) dtype_name(t, tn, sizeof tn);
            st = ck_err(RG_ERR_FORMAT, rd->path, "/rng/%s is %s with %lld values, expected uint64 [2] (state, inc)",
                        name, tn, (long long)npts);
        } else if (H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "cannot read /rng/%s (truncated or corrupt file)", name);
        } else if ((v[1] & 1) == 0) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "/rng/%s: increment %" PRIu64 " is even (PCG32 needs it odd)", name,
                        v[1]);
        } else {
            rg_named_rng *n = &rs->rngs[rs->n_rngs++];
            snprintf(n->name, sizeof n->name, "%s", name);
            n->rng.state = v[0];
            n->rng.inc = v[1];
        }
        if (t >= 0) H5Tclose(t);
        if (s >= 0) H5Sclose(s);
        H5Dclose(d);
    }
    name_list_free(&l);
    H5Gclose(g);
    return st;
}

static herr_t attr_name_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
    return collect_cb(loc, name, NULL, data);
}

static rg_status read_run_attrs(const reader *rd, rg_run_state *rs)
{
    rs->n_attrs = 0;
    if (!link_exists(rd->file, "run")) return RG_OK;
    hid_t g;
    rg_status st = open_group(rd, rd->file, "run", "/run", &g);
    if (st) return st;
    /* creation order is tracked on /run; fall back to name order for files written otherwise */
    name_list l;
    memset(&l, 0, sizeof l);
    hsize_t idx = 0;
    if (H5Aiterate2(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, attr_name_cb, &l) < 0 && !l.nomem) {
        name_list_free(&l);
        idx = 0;
        if (H5Aiterate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_name_cb, &l) < 0 && !l.nomem)
            st = ck_err(RG_ERR_FORMAT, rd->path, "cannot list the attributes of /run (corrupt file?)");
    }
    if (!st && l.nomem) st = ck_err(RG_ERR_NOMEM, rd->path, "out of memory");
    if (!st && l.n > RG_CKPT_MAX_ATTRS)
        st = ck_err(RG_ERR_FORMAT, rd->path, "/run has %d attributes, at most %d supported", l.n, RG_CKPT_MAX_ATTRS);
    for (int i = 0; !st && i < l.n; i++) {
        const char *key = l.names[i];
        if (strlen(key) >= RG_CKPT_KEY_LEN) {
            st = ck_err(RG_ERR_FORMAT, rd->path, "/run: attribute name '%s' longer than %d characters", key,
                        RG_CKPT_KEY_LEN - 1);
            break;
        }
        rg_run_attr *a = &rs->attrs[rs->n_attrs];
        memset(a, 0, sizeof *a);
        snprintf(a->key, sizeof a->key, "%s", key);
        hid_t at = H5Aopen(g, key, H5P_DEFAULT);
        hid_t t = at >= 0 ? H5Aget_type(at) : -1;
        H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
        if (t >= 0) H5Tclose(t);
        if (at >= 0) H5Aclose(at);
        if (cls == H5T_INTEGER) {
            a->type = RG_RUN_ATTR_INT;
            st = read_attr_i64(rd, g, "/run", key, &a->i);
        } else if (cls == H5T_FLOAT) {
            a->type = RG_RUN_ATTR_DOUBLE;
            st = read_attr_f64(rd, g, "/run", key, &a->d);
        } else if (cls == H5T_STRING) {
            a->type = RG_RUN_ATTR_STRING;
            st = read_attr_str(rd, g, "/run", key, a->s, sizeof a->s);
        } else {
            st = ck_err(RG_ERR_FORMAT, rd->path, "/run: attribute '%s' is not an integer, float or string", key);
        }
        if (!st) rs->n_attrs++;
    }
    name_list_free(&l);
    H5Gclose(g);
    return st;
}

/* The whole run state: root step, /config run keys, /optim schedule, /rng, /run. */
static rg_status read_run_state(const reader *rd, rg_model_config *cfg, rg_run_state *rs)
{
    rg_run_state_init(rs);
    rg_status st = read_attr_i64(rd, rd->file, "/", "step", &rs->step);
    if (!st) st = read_config_group(rd, cfg, rs);
    if (!st) {
        hid_t g;
        st = open_group(rd, rd->file, "optim", "/optim", &g);
        if (!st) {
            st = read_attr_i64(rd, g, "/optim", "lr_step", &rs->lr.step);
            if (!st) st = read_attr_f64(rd, g, "/optim", "lr_peak", &rs->lr.peak);
            if (!st) st = read_attr_i64(rd, g, "/optim", "lr_warmup", &rs->lr.warmup);
            if (!st) st = read_attr_i64(rd, g, "/optim", "lr_total", &rs->lr.total);
            if (!st) st = read_attr_f64(rd, g, "/optim", "lr_min_frac", &rs->lr.min_frac);
            if (!st) st = read_attr_f64(rd, g, "/optim", "grad_clip", &rs->lr.grad_clip);
            H5Gclose(g);
        }
    }
    if (!st) st = read_rngs(rd, rs);
    if (!st) st = read_run_attrs(rd, rs);
    return st;
}

/* ================================================================== public: read_config, load */

rg_status rg_checkpoint_read_config(const char *path, rg_model_config *cfg, rg_run_state *rs)
{
    if (!path || !cfg) return rg_error(RG_ERR_ARG, "rg_checkpoint_read_config: NULL path or config");
    h5_quiet q;
    quiet_begin(&q);
    hid_t f;
    rg_status st = open_checkpoint(path, &f);
    if (!st) {
        reader rd = {path, f};
        rg_run_state *tmp = malloc(sizeof *tmp);
        rg_model_config c;
        if (!tmp) {
            st = ck_err(RG_ERR_NOMEM, path, "out of memory");
        } else {
            st = read_run_state(&rd, &c, tmp);
            if (!st) {
                *cfg = c;
                if (rs) *rs = *tmp;
            }
            free(tmp);
        }
        H5Fclose(f);
    }
    quiet_end(&q);
    return st;
}

rg_status rg_checkpoint_load(const char *path, rg_model *m, rg_adamw *opt, rg_run_state *rs)
{
    if (!path || !m) return rg_error(RG_ERR_ARG, "rg_checkpoint_load: NULL path or model");
    const rg_params *ps = &m->params;
    if (opt && opt->n != ps->n)
        return rg_error(RG_ERR_ARG, "rg_checkpoint_load: the optimizer has %d parameters, the model %d", opt->n,
                        ps->n);
    h5_quiet q;
    quiet_begin(&q);
    hid_t f = -1, og = -1;
    rg_real *pool = NULL;
    rg_real **bufs = NULL;
    rg_run_state *tmp = NULL;
    rg_status st = open_checkpoint(path, &f);
    if (st) goto done;
    reader rd = {path, f};

    /* 1. run state and config */
    tmp = malloc(sizeof *tmp);
    if (!tmp) { st = ck_err(RG_ERR_NOMEM, path, "out of memory"); goto done; }
    rg_model_config fc;
    st = read_run_state(&rd, &fc, tmp);
    if (st) goto done;
    rg_model_config a = resolved(&fc), b = resolved(&m->cfg);
    for (int i = 0; i < N_CONFIG_KEYS; i++) {
        const config_key *k = &CONFIG_KEYS[i];
        if (!config_value_equal(&a, &b, k)) {
            char va[64], vb[64];
            config_value_str(&a, k, va, sizeof va);
            config_value_str(&b, k, vb, sizeof vb);
            st = ck_err(RG_ERR_ARG, path, "config mismatch: %s is %s in the checkpoint but %s in the model", k->name,
                        va, vb);
            goto done;
        }
    }

    /* 2. buffers: params, then exp_avg and exp_avg_sq */
    int nsets = opt ? 3 : 1;
    int64_t total = rg_params_numel(ps);
    pool = malloc((size_t)(total * nsets + 1) * sizeof(rg_real));
    bufs = malloc((size_t)(ps->n * nsets + 1) * sizeof *bufs);
    if (!pool || !bufs) { st = ck_err(RG_ERR_NOMEM, path, "out of memory"); goto done; }
    int64_t off = 0;
    for (int s = 0; s < nsets; s++)
        for (int i = 0; i < ps->n; i++) {
            bufs[s * ps->n + i] = pool + off;
            off += ps->items[i]->numel;
        }

    /* 3. datasets */
    st = read_param_group(&rd, f, "params", "/params", ps, bufs);
    if (st) goto done;
    int64_t ostep = 0;
    double beta1 = 0, beta2 = 0, eps = 0, wd = 0;
    if (opt) {
        st = open_group(&rd, f, "optim", "/optim", &og);
        if (st) goto done;
        int64_t has = 0;
        if (H5Aexists(og, "has_adamw") > 0) st = read_attr_i64(&rd, og, "/optim", "has_adamw", &has);
        if (st) goto done;
        if (!has) {
            st = ck_err(RG_ERR_FORMAT, path, "the checkpoint has no optimizer state (saved without one); load it "
                        "with opt = NULL");
            goto done;
        }
        st = read_attr_i64(&rd, og, "/optim", "step", &ostep);
        if (!st) st = read_attr_f64(&rd, og, "/optim", "beta1", &beta1);
        if (!st) st = read_attr_f64(&rd, og, "/optim", "beta2", &beta2);
        if (!st) st = read_attr_f64(&rd, og, "/optim", "eps", &eps);
        if (!st) st = read_attr_f64(&rd, og, "/optim", "weight_decay", &wd);
        if (!st) st = read_param_group(&rd, og, "exp_avg", "/optim/exp_avg", ps, bufs + ps->n);
        if (!st) st = read_param_group(&rd, og, "exp_avg_sq", "/optim/exp_avg_sq", ps, bufs + 2 * ps->n);
        if (st) goto done;
    }

    /* 4. everything is valid: commit */
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        memcpy(p->data, bufs[i], (size_t)p->numel * sizeof(rg_real));
        rg_tensor_bump_version(p);
        if (opt) {
            memcpy(opt->m[i], bufs[ps->n + i], (size_t)p->numel * sizeof(rg_real));
            memcpy(opt->v[i], bufs[2 * ps->n + i], (size_t)p->numel * sizeof(rg_real));
        }
    }
    if (opt) {
        opt->step = ostep;
        opt->beta1 = beta1;
        opt->beta2 = beta2;
        opt->eps = eps;
        opt->weight_decay = wd;
    }
    if (rs) *rs = *tmp;

done:
    close_id(&og, H5Gclose);
    close_id(&f, H5Fclose);
    free(pool);
    free(bufs);
    free(tmp);
    quiet_end(&q);
    return st;
}

/* ================================================================== public: save */

/* Writes the whole checkpoint into the open file f. Returns a negative value on an HDF5 failure; *what names the
 * part being written. */
static herr_t write_all(hid_t f, const rg_model *m, const rg_adamw *opt, const rg_run_state *rs, const char **what)
{
    const rg_params *ps = &m->params;
    hid_t g = -1, g2 = -1;
    herr_t r;
    *what = "root attributes";
    r = attr_str(f, "format", RG_CKPT_FORMAT);
    if (r >= 0) r = attr_i32(f, "format_version", RG_CKPT_VERSION);
    if (r >= 0) r = attr_i64(f, "step", rs->step);
    if (r < 0) return r;

    *what = "/config";
    if ((g = make_group(f, "config")) < 0) return -1;
    r = write_config(g, &m->cfg, rs);
    H5Gclose(g);
    if (r < 0) return r;

    *what = "/params";
    if ((g = make_group(f, "params")) < 0) return -1;
    for (int i = 0; i < ps->n && r >= 0; i++) r = write_tensor(g, ps->items[i]->name, ps->items[i], ps->items[i]->data);
    H5Gclose(g);
    if (r < 0) return r;

    *what = "/optim";
    if ((g = make_group(f, "optim")) < 0) return -1;
    r = attr_i32(g, "has_adamw", opt ? 1 : 0);
    if (r >= 0) r = attr_i64(g, "lr_step", rs->lr.step);
    if (r >= 0) r = attr_f64(g, "lr_peak", rs->lr.peak);
    if (r >= 0) r = attr_i64(g, "lr_warmup", rs->lr.warmup);
    if (r >= 0) r = attr_i64(g, "lr_total", rs->lr.total);
    if (r >= 0) r = attr_f64(g, "lr_min_frac", rs->lr.min_frac);
    if (r >= 0) r = attr_f64(g, "grad_clip", rs->lr.grad_clip);
    if (r >= 0 && opt) {
        r = attr_i64(g, "step", opt->step);
        if (r >= 0) r = attr_f64(g, "beta1", opt->beta1);
        if (r >= 0) r = attr_f64(g, "beta2", opt->beta2);
        if (r >= 0) r = attr_f64(g, "eps", opt->eps);
        if (r >= 0) r = attr_f64(g, "weight_decay", opt->weight_decay);
        for (int s = 0; s < 2 && r >= 0; s++) {
            *what = s ? "/optim/exp_avg_sq" : "/optim/exp_avg";
            if ((g2 = make_group(g, s ? "exp_avg_sq" : "exp_avg")) < 0) { r = -1; break; }
            for (int i = 0; i < ps->n && r >= 0; i++)
                r = write_tensor(g2, ps->items[i]->name, ps->items[i], s ? opt->v[i] : opt->m[i]);
            H5Gclose(g2);
        }
    }
    H5Gclose(g);
    if (r < 0) return r;

    *what = "/rng";
    if ((g = make_group(f, "rng")) < 0) return -1;
    for (int i = 0; i < rs->n_rngs && r >= 0; i++) {
        uint64_t v[2] = {rs->rngs[i].rng.state, rs->rngs[i].rng.inc};
        hsize_t two = 2;
        r = write_dataset(g, rs->rngs[i].name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &two, v);
    }
    H5Gclose(g);
    if (r < 0) return r;

    *what = "/run";
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0) return -1;
    H5Pset_attr_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    g = H5Gcreate2(f, "run", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    if (g < 0) return -1;
    for (int i = 0; i < rs->n_attrs && r >= 0; i++) {
        const rg_run_attr *a = &rs->attrs[i];
        switch (a->type) {
        case RG_RUN_ATTR_INT: r = attr_i64(g, a->key, a->i); break;
        case RG_RUN_ATTR_DOUBLE: r = attr_f64(g, a->key, a->d); break;
        case RG_RUN_ATTR_STRING: r = attr_str(g, a->key, a->s); break;
        default: r = -1; break;
        }
    }
    H5Gclose(g);
    return r;
}

/* fsync of an existing path (a file or a folder). Returns 0 or errno. */
static int fsync_path(const char *p, bool dir)
{
    int fd = open(p, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd < 0) return errno;
    int e = fsync(fd) == 0 ? 0 : errno;
    if (close(fd) != 0 && !e) e = errno;
    return e;
}

static rg_status check_run_state(const rg_run_state *rs)
{
    if (rs->n_rngs < 0 || rs->n_rngs > RG_CKPT_MAX_RNGS)
        return rg_error(RG_ERR_ARG, "run state: n_rngs %d outside 0..%d", rs->n_rngs, RG_CKPT_MAX_RNGS);
    if (rs->n_attrs < 0 || rs->n_attrs > RG_CKPT_MAX_ATTRS)
        return rg_error(RG_ERR_ARG, "run state: n_attrs %d outside 0..%d", rs->n_attrs, RG_CKPT_MAX_ATTRS);
    for (int i = 0; i < rs->n_rngs; i++) {
        rg_status st = check_key("run state RNG", rs->rngs[i].name);
        if (st) return st;
        for (int j = 0; j < i; j++)
            if (strcmp(rs->rngs[i].name, rs->rngs[j].name) == 0)
                return rg_error(RG_ERR_ARG, "run state: two RNGs named '%s'", rs->rngs[i].name);
    }
    for (int i = 0; i < rs->n_attrs; i++) {
        rg_status st = check_key("run state attribute", rs->attrs[i].key);
        if (st) return st;
        for (int j = 0; j < i; j++)
            if (strcmp(rs->attrs[i].key, rs->attrs[j].key) == 0)
                return rg_error(RG_ERR_ARG, "run state: two attributes named '%s'", rs->attrs[i].key);
    }
    if (memchr(rs->task, 0, sizeof rs->task) == NULL) return rg_error(RG_ERR_ARG, "run state: task not terminated");
    return RG_OK;
}

rg_status rg_checkpoint_save(const char *path, const rg_model *m, const rg_adamw *opt, const rg_run_state *rs)
{
    if (!path || !path[0] || !m) return rg_error(RG_ERR_ARG, "rg_checkpoint_save: NULL path or model");
    if (opt && opt->n != m->params.n)
        return rg_error(RG_ERR_ARG, "rg_checkpoint_save: the optimizer has %d parameters, the model %d", opt->n,
                        m->params.n);
    rg_run_state *empty = NULL;
    if (!rs) {
        empty = calloc(1, sizeof *empty);
        if (!empty) return rg_error(RG_ERR_NOMEM, "rg_checkpoint_save: out of memory");
        rs = empty;
    }
    rg_status st = check_run_state(rs);
    if (st) {
        free(empty);
        return st;
    }

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 40), *dir = malloc(plen + 2);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        free(empty);
        return rg_error(RG_ERR_NOMEM, "rg_checkpoint_save: out of memory");
    }
    snprintf(tmp, plen + 40, "%s.tmp.%ld", path, (long)getpid());
    /* the folder of path, for the fsync after the rename */
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, plen + 2, ".");
    else if (slash == path) snprintf(dir, plen + 2, "/");
    else snprintf(dir, plen + 2, "%.*s", (int)(slash - path), path);

    h5_quiet q;
    quiet_begin(&q);
    hid_t f = -1, fapl = -1, fcpl = -1;
    bool created = false;
    char detail[256] = "";

    /* Create the temporary file with open() first: a missing or read-only folder gives a clear errno. */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        st = ck_err(RG_ERR_IO, path, "cannot create the temporary file %s: %s", tmp, strerror(errno));
        goto done;
    }
    close(fd);
    created = true;
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0) H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    /* The default (oldest, most widely readable) file format, without the 1.10 superblock whose "open for write"
     * flag makes a file unreadable after a crashed writer until h5clear. Each dataset is one chunk: the chunk
     * B-tree's node size is kept minimal (istore_k 1) so that the per-dataset overhead stays small. */
    fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl >= 0) H5Pset_istore_k(fcpl, 1);
    f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl >= 0 ? fcpl : H5P_DEFAULT, fapl >= 0 ? fapl : H5P_DEFAULT);
    if (f < 0) {
        st = ck_err(RG_ERR_IO, path, "cannot create the HDF5 file %s: %s", tmp, h5_detail(detail));
        goto done;
    }
    const char *what = "";
    if (write_all(f, m, opt, rs, &what) < 0) {
        st = ck_err(RG_ERR_IO, path, "writing %s to %s failed: %s", what, tmp, h5_detail(detail));
        goto done;
    }
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) {
        st = ck_err(RG_ERR_IO, path, "flushing %s failed (disk full?): %s", tmp, h5_detail(detail));
        goto done;
    }
    herr_t cr = H5Fclose(f);
    f = -1;
    if (cr < 0) {
        st = ck_err(RG_ERR_IO, path, "closing %s failed (disk full?): %s", tmp, h5_detail(detail));
        goto done;
    }
    int e = fsync_path(tmp, false);
    if (e) {
        st = ck_err(RG_ERR_IO, path, "fsync of %s failed: %s", tmp, strerror(e));
        goto done;
    }
    if (rg_checkpoint_test_hook_before_rename && rg_checkpoint_test_hook_before_rename(tmp) != 0) {
        st = ck_err(RG_ERR_IO, path, "simulated failure before renaming %s (test hook)", tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        st = ck_err(RG_ERR_IO, path, "cannot rename %s over it: %s", tmp, strerror(errno));
        goto done;
    }
    created = false; /* the temporary file is now the checkpoint */
    e = fsync_path(dir, true);
    if (e) st = ck_err(RG_ERR_IO, path, "written, but the fsync of its folder %s failed: %s", dir, strerror(e));

done:
    if (f >= 0) H5Fclose(f);
    if (fapl >= 0) H5Pclose(fapl);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (created) unlink(tmp);
    quiet_end(&q);
    free(tmp);
    free(dir);
    free(empty);
    return st;
}
