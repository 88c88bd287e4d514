/* ckpt_helpers.h: what the checkpoint tests (test_checkpoint.c, test_ckpt_corrupt.c, test_ckpt_save.c) share: a
 * small model and its reference checkpoint, bitwise snapshots, the load-must-fail check, HDF5 surgery on a saved
 * checkpoint, and the fixture (a fresh mkdtemp folder under /tmp, removed at the end unless RG_KEEP_TEST_FILES is
 * set). Header-only (static inline), included once per test binary. */
#ifndef RG_TEST_CKPT_HELPERS_H
#define RG_TEST_CKPT_HELPERS_H

#include "common.h"
#include "io/checkpoint.h"

#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[64]; /* the test folder (one per binary) */

static inline void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", g_dir, name); }

static inline rg_model_config small_config(void)
{
    rg_model_config c = rg_model_config_default();
    c.vocab_size = 11;
    c.d_model = 16;
    c.n_heads = 2;
    c.n_layers = 2;
    c.d_ff = 32;
    c.max_len = 16;
    return c;
}

static inline rg_model *new_model(uint64_t seed)
{
    rg_model_config c = small_config();
    rg_model *m = NULL;
    rg_status st = rg_model_new(&c, seed, &m);
    if (st != RG_OK) fail_msg("rg_model_new: %s", rg_last_error());
    return m;
}

static inline void new_adamw(rg_adamw *opt, rg_model *m)
{
    if (rg_adamw_init(opt, &m->params, 0.9, 0.95, 1e-8, 0.1) != RG_OK) fail_msg("rg_adamw_init: %s", rg_last_error());
}

/* Fills the optimizer moments with distinct values (v >= 0) and a step count. */
static inline void fill_moments(rg_adamw *opt, rg_model *m, uint64_t seed)
{
    rg_rng r;
    rg_rng_seed(&r, seed, 3);
    for (int i = 0; i < m->params.n; i++)
        for (int64_t j = 0; j < m->params.items[i]->numel; j++) {
            opt->m[i][j] = (rg_real)rg_rng_normal(&r);
            opt->v[i][j] = (rg_real)rg_rng_uniform(&r);
        }
    opt->step = 17;
}

static inline void run_state(rg_run_state *rs)
{
    rg_run_state_init(rs);
    rs->step = 17;
    rs->lr = (rg_lr_state){.step = 17, .peak = 3e-3, .warmup = 5, .total = 100, .min_frac = 0.1, .grad_clip = 1.0};
    rg_rng a, b;
    rg_rng_seed(&a, 1, 1);
    rg_rng_seed(&b, 2, 7);
    for (int i = 0; i < 5; i++) rg_rng_u32(&a);
    assert_non_null(rg_run_state_add_rng(rs, "data", &a));
    assert_non_null(rg_run_state_add_rng(rs, "positions", &b));
    assert_int_equal(rg_run_state_set_int(rs, "batch_size", 32), RG_OK);
    assert_int_equal(rg_run_state_set_double(rs, "label_smoothing", 0.25), RG_OK);
    assert_int_equal(rg_run_state_set_str(rs, "git_commit", "88e8183"), RG_OK);
}

/* A bitwise copy of every parameter (and moment, when opt != NULL) of m. */
typedef struct {
    int n;
    rg_real **p, **m, **v;
} snapshot;

static inline snapshot snap(const rg_model *m, const rg_adamw *opt)
{
    snapshot s = {m->params.n, calloc((size_t)m->params.n, sizeof(rg_real *)),
                  calloc((size_t)m->params.n, sizeof(rg_real *)), calloc((size_t)m->params.n, sizeof(rg_real *))};
    for (int i = 0; i < s.n; i++) {
        size_t b = (size_t)m->params.items[i]->numel * sizeof(rg_real);
        s.p[i] = malloc(b);
        memcpy(s.p[i], m->params.items[i]->data, b);
        if (opt) {
            s.m[i] = malloc(b);
            s.v[i] = malloc(b);
            memcpy(s.m[i], opt->m[i], b);
            memcpy(s.v[i], opt->v[i], b);
        }
    }
    return s;
}

static inline void assert_same(const snapshot *s, const rg_model *m, const rg_adamw *opt, const char *when)
{
    assert_int_equal(s->n, m->params.n);
    for (int i = 0; i < s->n; i++) {
        const rg_tensor *p = m->params.items[i];
        size_t b = (size_t)p->numel * sizeof(rg_real);
        if (memcmp(s->p[i], p->data, b) != 0) fail_msg("%s: parameter %s differs", when, p->name);
        if (opt && s->m[i] && memcmp(s->m[i], opt->m[i], b) != 0) fail_msg("%s: exp_avg of %s differs", when, p->name);
        if (opt && s->v[i] && memcmp(s->v[i], opt->v[i], b) != 0)
            fail_msg("%s: exp_avg_sq of %s differs", when, p->name);
    }
}

static inline void snap_free(snapshot *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->p[i]);
        free(s->m[i]);
        free(s->v[i]);
    }
    free(s->p);
    free(s->m);
    free(s->v);
}

static inline void assert_contains(const char *msg, const char *want)
{
    if (!strstr(msg, want)) fail_msg("error message '%s' does not mention '%s'", msg, want);
}

static inline bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Number of entries of g_dir whose name contains ".tmp.". */
static inline int count_temp_files(void)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

/* Saves a reference checkpoint (model seed 1, moments, run state) to `name`; returns its full path in buf. */
static inline void save_reference(char *buf, size_t n, const char *name)
{
    path_in(buf, n, name);
    rg_model *m = new_model(1);
    rg_adamw opt;
    new_adamw(&opt, m);
    fill_moments(&opt, m, 5);
    rg_run_state rs;
    run_state(&rs);
    if (rg_checkpoint_save(buf, m, &opt, &rs) != RG_OK) fail_msg("save: %s", rg_last_error());
    rg_adamw_free(&opt);
    rg_model_free(m);
}

/* Loads `path` into a fresh model + optimizer + run state and checks that it fails with `code`, a message
 * containing each of want1/want2 (if not NULL), and that nothing was modified. Unless the error is about the
 * optimizer state only (optim_only), a load without optimizer must fail the same way. */
static inline void expect_load_error_opt(const char *path, rg_status code, const char *want1, const char *want2,
                                  bool optim_only)
{
    rg_model *m = new_model(99);
    rg_adamw opt;
    new_adamw(&opt, m);
    fill_moments(&opt, m, 77);
    rg_run_state rs, rs0;
    rg_run_state_init(&rs);
    rs.step = 5;
    rs0 = rs;
    snapshot s = snap(m, &opt);
    int64_t step0 = opt.step;
    double b1 = opt.beta1;
    rg_status st = rg_checkpoint_load(path, m, &opt, &rs);
    if (st != code) fail_msg("load %s: status %d, want %d (%s)", path, (int)st, (int)code, rg_last_error());
    assert_contains(rg_last_error(), path);
    if (want1) assert_contains(rg_last_error(), want1);
    if (want2) assert_contains(rg_last_error(), want2);
    assert_same(&s, m, &opt, "after a failed load");
    assert_int_equal(opt.step, step0);
    assert_true(opt.beta1 == b1);
    assert_memory_equal(&rs, &rs0, sizeof rs);
    /* without an optimizer too (the moments are then not read, the rest is checked the same way) */
    if (!optim_only) {
        st = rg_checkpoint_load(path, m, NULL, NULL);
        if (st != code) fail_msg("load %s without optimizer: status %d, want %d (%s)", path, (int)st, (int)code,
                                 rg_last_error());
        assert_same(&s, m, NULL, "after a failed load without optimizer");
    }
    snap_free(&s);
    rg_adamw_free(&opt);
    rg_model_free(m);
}

static inline void expect_load_error(const char *path, rg_status code, const char *want1, const char *want2)
{
    expect_load_error_opt(path, code, want1, want2, false);
}

/* ------------------------------------------------------------------ HDF5 surgery on a saved checkpoint */

static inline hid_t open_rw(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) fail_msg("cannot open %s for surgery", path);
    return f;
}

static inline void put_dataset(hid_t f, const char *name, hid_t type, int nd, const hsize_t *dims)
{
    if (H5Lexists(f, name, H5P_DEFAULT) > 0) assert_true(H5Ldelete(f, name, H5P_DEFAULT) >= 0);
    hsize_t n = 1;
    for (int i = 0; i < nd; i++) n *= dims[i];
    double *zeros = calloc((size_t)n, sizeof(double));
    hid_t s = H5Screate_simple(nd, dims, NULL);
    hid_t d = H5Dcreate2(f, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros) >= 0);
    H5Dclose(d);
    H5Sclose(s);
    free(zeros);
}

static inline void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    fclose(b);
}

/* Copies the checkpoint ref to `name` in the test folder (its full path into buf) and opens the copy for surgery. */
static inline hid_t open_copy(const char *ref, char *buf, size_t n, const char *name)
{
    path_in(buf, n, name);
    copy_file(ref, buf);
    return open_rw(buf);
}

/* Closes a file after surgery and recomputes its digest (an edit made on purpose), so that the load reaches the
 * check under test. */
static inline void close_edit(hid_t f, const char *path)
{
    assert_true(H5Fclose(f) >= 0);
    if (rg_checkpoint_seal(path) != RG_OK) fail_msg("seal %s: %s", path, rg_last_error());
}


/* Replaces (or creates) the scalar attribute obj/name with one of `type` holding *v (in the same type). */
static inline void put_attr(hid_t f, const char *obj, const char *name, hid_t type, const void *v)
{
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) > 0) assert_true(H5Adelete_by_name(f, obj, name, H5P_DEFAULT) >= 0);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate_by_name(f, obj, name, type, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, type, v) >= 0);
    H5Aclose(a);
    H5Sclose(s);
}

static inline void put_f64(hid_t f, const char *obj, const char *name, double v) { put_attr(f, obj, name, H5T_NATIVE_DOUBLE, &v); }
static inline void put_i64(hid_t f, const char *obj, const char *name, int64_t v) { put_attr(f, obj, name, H5T_NATIVE_INT64, &v); }
static inline void put_u64(hid_t f, const char *obj, const char *name, uint64_t v) { put_attr(f, obj, name, H5T_STD_U64LE, &v); }
/* A fixed-length, NUL-terminated ASCII string attribute (as the library writes strings). */
static inline void put_str(hid_t f, const char *obj, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    assert_true(H5Tset_size(t, strlen(v) + 1) >= 0 && H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0);
    put_attr(f, obj, name, t, v);
    H5Tclose(t);
}

/* Sets element `index` of a float dataset to v. */
static inline void poke(hid_t f, const char *dset, int index, double v)
{
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t s = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    double *x = malloc((size_t)n * sizeof *x);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
    x[index] = v;
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0);
    free(x);
    H5Sclose(s);
    H5Dclose(d);
}


/* ------------------------------------------------------------------ fixture: the temp folder */


static inline int rm_cb_dir(void)
{
    DIR *d = opendir(g_dir);
    if (!d) return 0;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    return rmdir(g_dir);
}

static inline int setup(void **state)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/rg_ckpt_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static inline int teardown(void **state) { return getenv("RG_KEEP_TEST_FILES") ? 0 : rm_cb_dir(); }


#endif
