/* checkpoint.c: the load that validates everything, then commits (docs/checkpoint.md), the limits and
 * rg_checkpoint_seal. The schema is in checkpoint_schema.h, the save in checkpoint_save.c. The HDF5 mechanics live
 * in h5.c, the atomic replace in atomic.c, the digest block in guard.c; a file is parsed by HDF5 only in the reader
 * process of h5_image.c, and read here from the image it sends. */
#include "checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "h5.h"
#include "h5_image.h"

#include "checkpoint_schema.h"

/* ================================================================== the schema: reading it */

/* Reads the declared settings of cfg's encoding that the file has into cfg (limits checked). */
static rg_status read_pos_settings(const rg_h5_src *src, const rg_h5_obj *loc, rg_model_config *cfg)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(cfg->pos);
    rg_status st = RG_OK;
    for (int i = 0; e && i < e->n_settings && !st; i++) {
        const rg_pos_setting *d = &e->settings[i];
        double v;
        int64_t iv;
        if (rg_h5i_attr_kind(loc, d->name) == RG_H5_MISSING) continue;
        if (d->type == RG_POS_SETTING_INT) {
            st = rg_h5i_read_int(src, loc, "/config", d->name, (int64_t)d->lo, (int64_t)d->hi, &iv);
            v = (double)iv;
        } else {
            st = rg_h5i_read_f64(src, loc, "/config", d->name, &v);
        }
        if (!st && rg_pos_config_set(cfg, d->name, v))
            st = rg_h5_err(src, RG_ERR_FORMAT, "/config: %s", rg_last_error());
    }
    return st;
}

/* Reads the fields into base; `obj` names the group in messages. */
static rg_status read_fields(const rg_h5_src *src, const rg_h5_obj *loc, const char *obj, const field *fs, int n, void *base)
{
    rg_status st = RG_OK;
    for (int i = 0; i < n && !st; i++) {
        const field *f = &fs[i];
        char *p = (char *)base + f->off, *s = NULL;
        int64_t v = 0;
        if (f->optional && rg_h5i_attr_kind(loc, f->name) == RG_H5_MISSING) continue;
        switch (f->type) {
        case F_I32:
        case F_BOOL:
        case F_I64:
            st = rg_h5i_read_int(src, loc, obj, f->name, (int64_t)f->lo, (int64_t)f->hi, &v);
            if (st) break;
            if (f->type == F_I32) *(int *)p = (int)v;
            else if (f->type == F_BOOL) *(bool *)p = v != 0;
            else *(int64_t *)p = v;
            break;
        case F_F64:
            st = rg_h5i_read_f64(src, loc, obj, f->name, (double *)p);
            if (!st && !(isfinite(*(double *)p) && *(double *)p >= f->lo && *(double *)p <= f->hi))
                st = rg_h5_err(src, RG_ERR_FORMAT, "attribute '%s' on %s = %g is outside [%g, %g]%s", f->name, obj,
                               *(double *)p, f->lo, f->hi, f->hi == BELOW_ONE ? " (below 1)" : "");
            break;
        case F_POS:
        case F_EXT:
            st = rg_h5i_read_str(src, loc, obj, f->name, &s);
            if (!st && (f->type == F_POS ? rg_pos_parse(s, (rg_pos_kind *)p) : rg_rope_ext_parse(s, (rg_rope_ext *)p)))
                st = rg_h5_err(src, RG_ERR_FORMAT, "%s: %s", obj, rg_last_error());
            free(s);
            break;
        }
    }
    return st;
}

/* The value of field f of base as text (messages and comparisons: doubles with 17 digits, so equal text is an
 * equal value). */
static void field_str(const field *f, const void *base, char *buf, size_t n)
{
    const char *p = (const char *)base + f->off;
    switch (f->type) {
    case F_I32: snprintf(buf, n, "%d", *(const int *)p); break;
    case F_BOOL: snprintf(buf, n, "%d", *(const bool *)p ? 1 : 0); break;
    case F_I64: snprintf(buf, n, "%lld", (long long)*(const int64_t *)p); break;
    case F_F64: snprintf(buf, n, "%.17g", *(const double *)p); break;
    case F_POS: snprintf(buf, n, "'%s'", rg_pos_name(*(const rg_pos_kind *)p)); break;
    case F_EXT: snprintf(buf, n, "'%s'", rg_rope_ext_name(*(const rg_rope_ext *)p)); break;
    }
}

/* ================================================================== load: read everything into a `loaded` */

typedef struct {
    rg_model_config cfg;
    rg_run_state rs;
    rg_adamw hyper;   /* step, betas, eps, weight_decay (no moments) */
    rg_real *pool;    /* params, then exp_avg, exp_avg_sq */
} loaded;

typedef struct {
    rg_h5_src src;
    const rg_model *m;  /* NULL: the config and the run state only */
    bool want_opt;
    bool run_only;      /* the run state only: /config is not read (rg_checkpoint_read_run) */
} load_job;

/* ================================================================== limits (docs/checkpoint.md, "Limits") */

static int64_t max_params = RG_CKPT_MAX_PARAMS;

void rg_checkpoint_set_max_params(int64_t n) { max_params = n < 1 ? RG_CKPT_MAX_PARAMS : n; }
int64_t rg_checkpoint_max_params(void) { return max_params; }

uint64_t rg_checkpoint_max_bytes(void)
{
    /* parameters and both moments, plus HDF5's metadata (a few kB per dataset: 64 MiB covers 10^4 of them) */
    return 3 * (uint64_t)max_params * sizeof(rg_real) + ((uint64_t)64 << 20);
}

/* Checks every value of the array read from grp/name: finite, and >= 0 for exp_avg_sq. */
static rg_status check_values(const rg_h5_src *src, const char *grp, const char *name, const rg_real *x, int64_t n,
                              bool nonneg)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(x[i]) || (nonneg && x[i] < 0))
            return rg_h5_err(src, RG_ERR_FORMAT, "dataset %s/%s holds %g at index %lld (%s)", grp, name,
                             (double)x[i], (long long)i, nonneg ? "expected finite and >= 0" : "expected finite");
    return RG_OK;
}

/* Reads group `rel` of loc (path `full`): exactly the model's parameters, into buf (registry order). */
static rg_status read_params(const rg_h5_src *src, const rg_h5_obj *loc, const char *rel, const char *full, const rg_params *ps,
                             rg_real *buf, bool nonneg)
{
    const rg_h5_obj *g;
    rg_status st = rg_h5i_open_group(src, loc, rel, full, &g);
    if (st) return st;
    rg_h5_names l = {0};
    st = rg_h5i_list_links(src, g, full, ps->n + 1, &l);
    for (int i = 0; !st && i < l.n; i++)
        if (!rg_params_find(ps, l.names[i]))
            st = rg_h5_err(src, RG_ERR_FORMAT, "unknown dataset %s/%s: the model has no parameter of that name", full,
                           l.names[i]);
    for (int i = 0; !st && i < ps->n; i++) {
        const rg_tensor *t = ps->items[i];
        hsize_t dims[RG_MAX_DIMS];
        for (int k = 0; k < t->ndim; k++) dims[k] = (hsize_t)t->shape[k];
        st = rg_h5i_read_dataset(src, g, full, t->name, REAL_DTYPE, t->ndim, dims, buf);
        if (!st) st = check_values(src, full, t->name, buf, t->numel, nonneg);
        buf += t->numel;
    }
    rg_h5_names_free(&l);
    return st;
}

static rg_status read_rngs(const rg_h5_src *src, const rg_h5_obj *f, rg_run_state *rs)
{
    const rg_h5_obj *g;
    rg_status st = rg_h5i_open_group(src, f, "rng", "/rng", &g);
    if (st) return st;
    rg_h5_names l = {0};
    st = rg_h5i_list_links(src, g, "/rng", RG_CKPT_MAX_RNGS, &l);
    for (int i = 0; !st && i < l.n; i++) {
        const char *name = l.names[i];
        uint64_t v[2];
        hsize_t two = 2;
        if (strlen(name) >= RG_CKPT_KEY_LEN)
            st = rg_h5_err(src, RG_ERR_FORMAT, "/rng/%s: name longer than %d characters", name, RG_CKPT_KEY_LEN - 1);
        else st = rg_h5i_read_dataset(src, g, "/rng", name, RG_H5_UINT64, 1, &two, v);
        if (!st && (v[1] & 1) == 0)
            st = rg_h5_err(src, RG_ERR_FORMAT, "/rng/%s: increment %llu is even (PCG32 needs it odd)", name,
                           (unsigned long long)v[1]);
        if (st) break;
        rg_named_rng *r = &rs->rngs[rs->n_rngs++];
        snprintf(r->name, sizeof r->name, "%s", name);
        r->rng = (rg_rng){.state = v[0], .inc = v[1]};
    }
    rg_h5_names_free(&l);
    return st;
}

static rg_status read_run_attrs(const rg_h5_src *src, const rg_h5_obj *f, rg_run_state *rs)
{
    const rg_h5_obj *g;
    rg_status st = rg_h5i_open_group(src, f, "run", "/run", &g);
    if (st) return st;
    rg_h5_names l = {0};
    st = rg_h5i_list_attrs(src, g, "/run", RG_CKPT_MAX_ATTRS, &l);
    for (int i = 0; !st && i < l.n; i++) {
        const char *key = l.names[i];
        rg_run_attr *a = &rs->attrs[rs->n_attrs];
        memset(a, 0, sizeof *a);
        if (strlen(key) >= RG_CKPT_KEY_LEN) {
            st = rg_h5_err(src, RG_ERR_FORMAT, "/run: attribute name '%s' longer than %d characters", key,
                           RG_CKPT_KEY_LEN - 1);
            break;
        }
        snprintf(a->key, sizeof a->key, "%s", key);
        switch (rg_h5i_attr_kind(g, key)) {
        case RG_H5_INT: a->type = RG_RUN_ATTR_INT; st = rg_h5i_read_int(src, g, "/run", key, INT64_MIN, INT64_MAX, &a->i); break;
        case RG_H5_FLOAT: a->type = RG_RUN_ATTR_DOUBLE; st = rg_h5i_read_f64(src, g, "/run", key, &a->d); break;
        case RG_H5_STRING: a->type = RG_RUN_ATTR_STRING; st = rg_h5i_read_str_buf(src, g, "/run", key, a->s, sizeof a->s); break;
        default: st = rg_h5_err(src, RG_ERR_FORMAT, "/run: attribute '%s' is not one integer, float or string", key);
        }
        if (!st) rs->n_attrs++;
    }
    rg_h5_names_free(&l);
    return st;
}

/* The /params datasets against the config, before any model is built from it (a config of 4096 layers must not
 * allocate 4096 layers to find out): tok_emb.weight is [vocab_size, d_model], and the layers present are exactly
 * blocks.0 .. blocks.<n_layers - 1> (state_dict names). */
static rg_status check_params_vs_config(const rg_h5_src *src, const rg_h5_obj *f, const rg_model_config *cfg)
{
    const rg_h5_obj *g;
    rg_status st = rg_h5i_open_group(src, f, "params", "/params", &g);
    if (st) return st;
    int nd;
    hsize_t dims[RG_MAX_DIMS];
    st = rg_h5i_dataset_shape(src, g, "/params", "tok_emb.weight", REAL_DTYPE, RG_MAX_DIMS, &nd, dims);
    if (!st && (nd != 2 || dims[0] != (hsize_t)cfg->vocab_size || dims[1] != (hsize_t)cfg->d_model))
        st = rg_h5_err(src, RG_ERR_FORMAT, "/config says vocab_size %d, d_model %d, but /params/tok_emb.weight is "
                       "not [%d, %d]", cfg->vocab_size, cfg->d_model, cfg->vocab_size, cfg->d_model);
    rg_h5_names l = {0};
    if (!st) st = rg_h5i_list_links(src, g, "/params", 1 << 20, &l);
    long max_layer = -1;
    for (int i = 0; !st && i < l.n; i++) {
        char *end;
        if (strncmp(l.names[i], "blocks.", 7) != 0) continue;
        long k = strtol(l.names[i] + 7, &end, 10);
        if (end != l.names[i] + 7 && *end == '.' && k > max_layer) max_layer = k;
    }
    if (!st && max_layer + 1 != cfg->n_layers)
        st = rg_h5_err(src, RG_ERR_FORMAT, "/config says n_layers %d, but /params has the layers of %ld",
                       cfg->n_layers, max_layer + 1);
    /* the size the file declares, against what this reader accepts, before anything of that size is built */
    uint64_t total = 0;
    for (int i = 0; !st && i < l.n; i++) {
        uint64_t numel = 1;
        if ((st = rg_h5i_dataset_shape(src, g, "/params", l.names[i], REAL_DTYPE, RG_MAX_DIMS, &nd, dims))) break;
        for (int k = 0; k < nd; k++) numel = dims[k] && numel > UINT64_MAX / dims[k] ? UINT64_MAX : numel * dims[k];
        total = total > UINT64_MAX - numel ? UINT64_MAX : total + numel;
    }
    if (!st && total > (uint64_t)max_params)
        st = rg_h5_err(src, RG_ERR_FORMAT, "/params declares %llu parameters, more than the %lld this reader accepts "
                       "(rg_checkpoint_set_max_params)", (unsigned long long)total, (long long)max_params);
    rg_h5_names_free(&l);
    return st;
}

/* Root, /config (unless run_only), /optim schedule, /rng, /run: the config and the run state. */
static rg_status read_state(const rg_h5_src *src, const rg_h5_obj *f, loaded *out, bool run_only)
{
    char *fmt = NULL;
    int64_t version = 0;
    if (rg_h5i_attr_kind(f, "format") == RG_H5_MISSING)
        return rg_h5_err(src, RG_ERR_FORMAT, "not a ropegrad checkpoint: an HDF5 file without the root attribute "
                         "'format' (written by another program?)");
    rg_status st = rg_h5i_read_str(src, f, "/", "format", &fmt);
    if (!st && strcmp(fmt, RG_CKPT_FORMAT) != 0)
        st = rg_h5_err(src, RG_ERR_FORMAT, "not a ropegrad checkpoint: root attribute format = '%s', expected '%s'",
                       fmt, RG_CKPT_FORMAT);
    free(fmt);
    if (!st) st = rg_h5i_read_int(src, f, "/", "format_version", INT64_MIN, INT64_MAX, &version);
    if (!st && version != RG_CKPT_VERSION)
        st = rg_h5_err(src, RG_ERR_FORMAT, "format_version %lld is not supported (this build reads version %d)",
                       (long long)version, RG_CKPT_VERSION);
    if (!st) st = rg_h5i_read_int(src, f, "/", "step", 0, RG_CKPT_MAX_STEP, &out->rs.step);
    const rg_h5_obj *g = NULL;
    char layout[32];
    if (!st && run_only) goto schedule;
    if (!st) st = rg_h5i_open_group(src, f, "config", "/config", &g);
    if (!st) st = read_fields(src, g, "/config", CONFIG_FIELDS, N_OF(CONFIG_FIELDS), &out->cfg);
    if (!st) out->cfg.n_pos_values = 0;
    if (!st) st = read_pos_settings(src, g, &out->cfg);
    if (!st && rg_model_config_validate(&out->cfg) != RG_OK)
        st = rg_h5_err(src, RG_ERR_FORMAT, "/config: %s", rg_last_error());
    if (!st) st = check_params_vs_config(src, f, &out->cfg);
    if (!st) st = rg_h5i_read_str_buf(src, g, "/config", "rope_layout", layout, sizeof layout);
    if (!st && strcmp(layout, rope_layout_of(out->cfg.pos)) != 0)
        st = rg_h5_err(src, RG_ERR_FORMAT, "/config: rope_layout '%s' does not match pos_encoding '%s' (expected "
                       "'%s')", layout, rg_pos_name(out->cfg.pos), rope_layout_of(out->cfg.pos));
schedule:;
    int64_t has = 0;
    if (!st) st = rg_h5i_open_group(src, f, "optim", "/optim", &g);
    if (!st) st = read_fields(src, g, "/optim", LR_FIELDS, N_OF(LR_FIELDS), &out->rs.lr);
    if (!st) st = rg_h5i_read_int(src, g, "/optim", "has_adamw", 0, 1, &has);
    if (!st && has) st = read_fields(src, g, "/optim", ADAMW_FIELDS, N_OF(ADAMW_FIELDS), &out->hyper);
    out->hyper.n = (int)has; /* 1: the file has an optimizer state */
    if (!st) st = read_rngs(src, f, &out->rs);
    if (!st) st = read_run_attrs(src, f, &out->rs);
    return st;
}

/* The whole read of a job from the image f: the state and (with a model) the datasets, validated. */
static rg_status read_job(const load_job *j, const rg_h5_obj *f, loaded *out)
{
    memset(out, 0, sizeof *out);
    rg_status st = read_state(&j->src, f, out, j->run_only);
    const rg_params *ps = j->m ? &j->m->params : NULL;
    if (!st && ps) {
        rg_model_config a = resolved(&out->cfg), b = resolved(&j->m->cfg);
        char va[64], vb[64];
        for (int i = 0; i < N_OF(CONFIG_FIELDS) && !st; i++) {
            field_str(&CONFIG_FIELDS[i], &a, va, sizeof va);
            field_str(&CONFIG_FIELDS[i], &b, vb, sizeof vb);
            if (strcmp(va, vb) != 0)
                st = rg_h5_err(&j->src, RG_ERR_ARG, "config mismatch: %s is %s in the checkpoint but %s in the "
                               "model", CONFIG_FIELDS[i].name, va, vb);
        }
        const rg_pos_encoding *e = rg_pos_encoding_of(a.pos);
        for (int i = 0; !st && e && i < e->n_settings; i++) {
            double x = rg_pos_config_get(&a, e->settings[i].name), y = rg_pos_config_get(&b, e->settings[i].name);
            if (x != y)
                st = rg_h5_err(&j->src, RG_ERR_ARG, "config mismatch: %s is %.17g in the checkpoint but %.17g in the "
                               "model", e->settings[i].name, x, y);
        }
    }
    if (!st && ps && j->want_opt && !out->hyper.n)
        st = rg_h5_err(&j->src, RG_ERR_FORMAT, "the checkpoint has no optimizer state (saved without one); load it "
                       "with opt = NULL");
    if (!st && ps) {
        int64_t total = rg_params_numel(ps);
        size_t bytes = (size_t)(total * (j->want_opt ? 3 : 1) + 1) * sizeof(rg_real);
        out->pool = malloc(bytes);
        if (!out->pool) st = rg_h5_err(&j->src, RG_ERR_NOMEM, "out of memory for %zu bytes of parameters", bytes);
        if (!st) st = read_params(&j->src, f, "params", "/params", ps, out->pool, false);
        if (!st && j->want_opt)
            st = read_params(&j->src, f, "optim/exp_avg", "/optim/exp_avg", ps, out->pool + total, false);
        if (!st && j->want_opt)
            st = read_params(&j->src, f, "optim/exp_avg_sq", "/optim/exp_avg_sq", ps, out->pool + 2 * total, true);
    }
    if (st) {
        free(out->pool);
        out->pool = NULL;
    }
    return st;
}

/* The limits of a checkpoint read (data: the prefixes of the datasets whose values are needed, or NULL). */
static rg_h5_image_opts image_opts(const char *const *data, bool skip_digest)
{
    return (rg_h5_image_opts){data, rg_checkpoint_max_bytes(), rg_checkpoint_max_bytes(), 1 << 18,
                              RG_CKPT_READ_SECONDS, skip_digest};
}

/* Reads the file of job j into *out: parsed by HDF5 in a child process (h5_image.h), validated here. */
static rg_status load_into(load_job *j, loaded *out)
{
    static const char *const state_only[] = {"/rng/", NULL}, *const no_moments[] = {"/params/", "/rng/", NULL};
    rg_h5_image_opts o = image_opts(!j->m ? state_only : j->want_opt ? NULL : no_moments, false);
    rg_h5_image *im;
    rg_status st = rg_h5_image_load(&j->src, &o, &im);
    if (st) return st;
    st = read_job(j, rg_h5_image_root(im), out);
    rg_h5_image_free(im);
    return st;
}

/* ================================================================== public: read_config, load */

rg_status rg_checkpoint_read_config(const char *path, rg_model_config *cfg, rg_run_state *rs)
{
    if (!path || !cfg) return rg_error(RG_ERR_ARG, "rg_checkpoint_read_config: NULL path or config");
    load_job j = {{"checkpoint", path}, NULL, false, false};
    loaded *l = malloc(sizeof *l);
    if (!l) return rg_error(RG_ERR_NOMEM, "checkpoint %s: out of memory", path);
    rg_status st = load_into(&j, l);
    if (!st) {
        *cfg = resolved(&l->cfg);
        if (rs) *rs = l->rs;
    }
    free(l);
    return st;
}

rg_status rg_checkpoint_read_run(const char *path, rg_run_state *rs)
{
    if (!path || !rs) return rg_error(RG_ERR_ARG, "rg_checkpoint_read_run: NULL path or run state");
    load_job j = {{"checkpoint", path}, NULL, false, true};
    loaded *l = malloc(sizeof *l);
    if (!l) return rg_error(RG_ERR_NOMEM, "checkpoint %s: out of memory", path);
    rg_status st = load_into(&j, l);
    if (!st) *rs = l->rs;
    free(l);
    return st;
}

rg_status rg_checkpoint_load(const char *path, rg_model *m, rg_adamw *opt, rg_run_state *rs)
{
    if (!path || !m) return rg_error(RG_ERR_ARG, "rg_checkpoint_load: NULL path or model");
    const rg_params *ps = &m->params;
    if (opt && opt->n != ps->n)
        return rg_error(RG_ERR_ARG, "rg_checkpoint_load: the optimizer has %d parameters, the model %d", opt->n,
                        ps->n);
    load_job j = {{"checkpoint", path}, m, opt != NULL, false};
    loaded *l = malloc(sizeof *l);
    if (!l) return rg_error(RG_ERR_NOMEM, "checkpoint %s: out of memory", path);
    rg_status st = load_into(&j, l);
    if (st) {
        free(l);
        return st;
    }
    /* everything is valid: commit */
    int64_t total = rg_params_numel(ps), off = 0;
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        size_t b = (size_t)p->numel * sizeof(rg_real);
        memcpy(p->data, l->pool + off, b);
        rg_tensor_bump_version(p);
        if (opt) {
            memcpy(opt->m[i], l->pool + total + off, b);
            memcpy(opt->v[i], l->pool + 2 * total + off, b);
        }
        off += p->numel;
    }
    if (opt) {
        opt->step = l->hyper.step;
        opt->beta1 = l->hyper.beta1;
        opt->beta2 = l->hyper.beta2;
        opt->eps = l->hyper.eps;
        opt->weight_decay = l->hyper.weight_decay;
    }
    if (rs) *rs = l->rs;
    free(l->pool);
    free(l);
    return RG_OK;
}

/* ================================================================== public: seal */

rg_status rg_checkpoint_seal(const char *path)
{
    if (!path) return rg_error(RG_ERR_ARG, "rg_checkpoint_seal: NULL path");
    load_job j = {{"checkpoint", path}, NULL, false, false};
    unsigned char *buf = NULL, *img = NULL;
    size_t n = 0, len = 0;
    rg_status st = rg_h5_read_file(&j.src, &buf, &n);
    /* the HDF5 part: the whole file, or what follows a user block */
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    size_t start = !st && n >= 8 && memcmp(buf, sig, 8) == 0 ? 0 : RG_GUARD_BLOCK;
    if (!st && (n < start + 8 || memcmp(buf + start, sig, 8) != 0))
        st = rg_h5_err(&j.src, RG_ERR_FORMAT, "not an HDF5 file with the HDF5 signature at offset 0 or %d",
                       RG_GUARD_BLOCK);
    if (!st && !(img = calloc(RG_GUARD_BLOCK + n - start, 1))) st = rg_h5_err(&j.src, RG_ERR_NOMEM, "out of memory");
    if (!st) {
        memcpy(img + RG_GUARD_BLOCK, buf + start, n - start);
        len = RG_GUARD_BLOCK + n - start;
        /* it must parse (in the child process: a file that crashes or hangs HDF5 is refused) */
        rg_h5_image_opts o = image_opts((const char *const[]){NULL}, true);
        rg_h5_image *im = NULL;
        st = rg_h5_image_load(&j.src, &o, &im);
        rg_h5_image_free(im);
    }
    if (!st) {
        rg_guard_seal(img, len);
        st = rg_atomic_write("checkpoint", path, img, len);
    }
    free(img);
    free(buf);
    return st;
}
