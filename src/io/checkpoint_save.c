/* checkpoint_save.c: the save path of the checkpoint (docs/checkpoint.md): the whole file built in memory from the
 * schema in checkpoint_schema.h, sealed with its digest block and written by one atomic replace
 * (rg_checkpoint_save). The load that validates everything, then commits, is in checkpoint.c. */
#include "checkpoint_schema.h"

#include <stdlib.h>

#include "guard.h"
#include "h5.h"

/* The encoding's declared settings of cfg, resolved, as /config attributes. */
static herr_t write_pos_settings(hid_t loc, const rg_model_config *cfg)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(cfg->pos);
    herr_t r = 0;
    for (int i = 0; e && i < e->n_settings && r >= 0; i++) {
        const rg_pos_setting *d = &e->settings[i];
        double v = rg_pos_config_get(cfg, d->name);
        r = d->type == RG_POS_SETTING_INT ? rg_h5_write_int(loc, d->name, H5T_STD_I32LE, (int64_t)v)
                                          : rg_h5_write_f64(loc, d->name, v);
    }
    return r;
}

static herr_t write_fields(hid_t loc, const field *fs, int n, const void *base)
{
    herr_t r = 0;
    for (int i = 0; i < n && r >= 0; i++) {
        const char *p = (const char *)base + fs[i].off;
        switch (fs[i].type) {
        case F_I32: r = rg_h5_write_int(loc, fs[i].name, H5T_STD_I32LE, *(const int *)p); break;
        case F_BOOL: r = rg_h5_write_int(loc, fs[i].name, H5T_STD_I32LE, *(const bool *)p); break;
        case F_I64: r = rg_h5_write_int(loc, fs[i].name, H5T_STD_I64LE, *(const int64_t *)p); break;
        case F_F64: r = rg_h5_write_f64(loc, fs[i].name, *(const double *)p); break;
        case F_POS: r = rg_h5_write_str(loc, fs[i].name, rg_pos_name(*(const rg_pos_kind *)p)); break;
        case F_EXT: r = rg_h5_write_str(loc, fs[i].name, rg_rope_ext_name(*(const rg_rope_ext *)p)); break;
        }
    }
    return r;
}

/* ================================================================== save */

static herr_t write_params(hid_t loc, const char *name, const rg_params *ps, rg_real *const *data)
{
    hid_t g = rg_h5_create_group(loc, name);
    if (g < 0) return -1;
    herr_t r = 0;
    for (int i = 0; i < ps->n && r >= 0; i++) {
        const rg_tensor *t = ps->items[i];
        hsize_t dims[RG_MAX_DIMS];
        for (int k = 0; k < t->ndim; k++) dims[k] = (hsize_t)t->shape[k];
        r = rg_h5_write_dataset(g, t->name, REAL_DTYPE, t->ndim, dims, data ? data[i] : t->data, RG_H5_CHECKSUM);
    }
    if (H5Gclose(g) < 0) r = -1;
    return r;
}

/* Writes the whole checkpoint into the open (in-memory) file f; *what names the part being written. */
static herr_t write_all(hid_t f, const rg_model *m, const rg_adamw *opt, const rg_run_state *rs, const char **what)
{
    rg_model_config cfg = resolved(&m->cfg);
    hid_t g;
    *what = "root attributes";
    herr_t r = rg_h5_write_str(f, "format", RG_CKPT_FORMAT);
    if (r >= 0) r = rg_h5_write_int(f, "format_version", H5T_STD_I32LE, RG_CKPT_VERSION);
    if (r >= 0) r = rg_h5_write_int(f, "step", H5T_STD_I64LE, rs->step);
    if (r < 0 || (*what = "/config", g = rg_h5_create_group(f, "config")) < 0) return -1;
    r = write_fields(g, CONFIG_FIELDS, N_OF(CONFIG_FIELDS), &cfg);
    if (r >= 0) r = write_pos_settings(g, &cfg);
    if (r >= 0) r = rg_h5_write_str(g, "rope_layout", rope_layout_of(cfg.pos));
    if (H5Gclose(g) < 0 || r < 0) return -1;
    if ((*what = "/params", write_params(f, "params", &m->params, NULL)) < 0) return -1;
    if ((*what = "/optim", g = rg_h5_create_group(f, "optim")) < 0) return -1;
    r = rg_h5_write_int(g, "has_adamw", H5T_STD_I32LE, opt != NULL);
    if (r >= 0) r = write_fields(g, LR_FIELDS, N_OF(LR_FIELDS), &rs->lr);
    if (r >= 0 && opt) r = write_fields(g, ADAMW_FIELDS, N_OF(ADAMW_FIELDS), opt);
    if (r >= 0 && opt) r = write_params(g, "exp_avg", &m->params, opt->m);
    if (r >= 0 && opt) r = write_params(g, "exp_avg_sq", &m->params, opt->v);
    if (H5Gclose(g) < 0 || r < 0) return -1;
    if ((*what = "/rng", g = rg_h5_create_group(f, "rng")) < 0) return -1;
    for (int i = 0; i < rs->n_rngs && r >= 0; i++) {
        uint64_t v[2] = {rs->rngs[i].rng.state, rs->rngs[i].rng.inc};
        hsize_t two = 2;
        r = rg_h5_write_dataset(g, rs->rngs[i].name, RG_H5_UINT64, 1, &two, v, RG_H5_CHECKSUM);
    }
    if (H5Gclose(g) < 0 || r < 0) return -1;
    if ((*what = "/run", g = rg_h5_create_group(f, "run")) < 0) return -1;
    for (int i = 0; i < rs->n_attrs && r >= 0; i++) {
        const rg_run_attr *a = &rs->attrs[i];
        r = a->type == RG_RUN_ATTR_INT ? rg_h5_write_int(g, a->key, H5T_STD_I64LE, a->i)
            : a->type == RG_RUN_ATTR_DOUBLE ? rg_h5_write_f64(g, a->key, a->d) : rg_h5_write_str(g, a->key, a->s);
    }
    if (H5Gclose(g) < 0 || r < 0) return -1;
    return 0;
}

rg_status rg_checkpoint_save(const char *path, const rg_model *m, const rg_adamw *opt, const rg_run_state *rs)
{
    if (!path || !path[0] || !m) return rg_error(RG_ERR_ARG, "rg_checkpoint_save: NULL path or model");
    if (opt && opt->n != m->params.n)
        return rg_error(RG_ERR_ARG, "rg_checkpoint_save: the optimizer has %d parameters, the model %d", opt->n,
                        m->params.n);
    static const rg_run_state empty;
    if (!rs) rs = &empty;
    rg_status st = rg_run_state_check(rs);
    if (st) return st;

    rg_h5_src src = {"checkpoint", path};
    rg_h5_quiet q;
    rg_h5_quiet_begin(&q);
    /* built in memory (nothing touches the disk until the atomic write), with the digest block as user block and
     * a minimal chunk B-tree (istore_k 1: each dataset is one chunk) */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    hid_t f = fcpl >= 0 && H5Pset_userblock(fcpl, RG_GUARD_BLOCK) >= 0 && H5Pset_istore_k(fcpl, 1) >= 0
                  ? rg_h5_create_memory(fcpl) : -1;
    if (fcpl >= 0) H5Pclose(fcpl);
    const char *what = "the file";
    unsigned char *img = NULL;
    size_t n = 0;
    char detail[256];
    if (f < 0 || write_all(f, m, opt, rs, &what) < 0 || !(img = rg_h5_memory_image(f, RG_GUARD_BLOCK, &n)))
        st = rg_h5_err(&src, RG_ERR_NOMEM, "building %s in memory failed: %s", what,
                       rg_h5_detail(detail, sizeof detail));
    if (rg_h5_close_file(f) < 0 && !st) st = rg_h5_err(&src, RG_ERR_NOMEM, "closing the in-memory file failed");
    rg_h5_quiet_end(&q);
    if (!st) {
        rg_guard_seal(img, n);
        st = rg_atomic_write("checkpoint", path, img, n);
    }
    free(img);
    return st;
}
