/* run_state.c: the run state of a checkpoint (rg_run_state, declared in checkpoint.h): named RNGs and free-form
 * attributes, with typed access for values read from a file. Plain data, no I/O. */
#include "checkpoint.h"

#include <stdio.h>
#include <string.h>

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

static rg_run_attr *attr_slot(rg_run_state *rs, const char *key, rg_run_attr_type type)
{
    if (check_key("run state attribute", key) != RG_OK) return NULL;
    rg_run_attr *a = (rg_run_attr *)rg_run_state_attr(rs, key);
    if (!a && rs->n_attrs >= RG_CKPT_MAX_ATTRS) {
        rg_error(RG_ERR_ARG, "run state attribute '%s': already %d attributes (RG_CKPT_MAX_ATTRS)", key,
                 RG_CKPT_MAX_ATTRS);
        return NULL;
    }
    if (!a) a = &rs->attrs[rs->n_attrs++];
    memset(a, 0, sizeof *a);
    snprintf(a->key, sizeof a->key, "%s", key);
    a->type = type;
    return a;
}

rg_status rg_run_state_set_int(rg_run_state *rs, const char *key, int64_t v)
{
    rg_run_attr *a = attr_slot(rs, key, RG_RUN_ATTR_INT);
    if (!a) return RG_ERR_ARG;
    a->i = v;
    return RG_OK;
}

rg_status rg_run_state_set_double(rg_run_state *rs, const char *key, double v)
{
    rg_run_attr *a = attr_slot(rs, key, RG_RUN_ATTR_DOUBLE);
    if (!a) return RG_ERR_ARG;
    a->d = v;
    return RG_OK;
}

rg_status rg_run_state_set_str(rg_run_state *rs, const char *key, const char *v)
{
    if (strlen(v) >= RG_CKPT_STR_LEN)
        return rg_error(RG_ERR_ARG, "run state attribute '%s': value longer than %d characters", key,
                        RG_CKPT_STR_LEN - 1);
    rg_run_attr *a = attr_slot(rs, key, RG_RUN_ATTR_STRING);
    if (!a) return RG_ERR_ARG;
    snprintf(a->s, sizeof a->s, "%s", v);
    return RG_OK;
}

static const char *const attr_type_names[] = {"an integer", "a float", "a string"};

/* The attribute `key` of type `type`, or NULL with RG_ERR_FORMAT set. */
static const rg_run_attr *typed_attr(const rg_run_state *rs, const char *key, rg_run_attr_type type)
{
    const rg_run_attr *a = rg_run_state_attr(rs, key);
    if (!a) rg_error(RG_ERR_FORMAT, "run attribute '%s' is missing", key);
    else if (a->type != type)
        rg_error(RG_ERR_FORMAT, "run attribute '%s' is %s, expected %s", key, attr_type_names[a->type],
                 attr_type_names[type]);
    return a && a->type == type ? a : NULL;
}

rg_status rg_run_state_get_int(const rg_run_state *rs, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
    const rg_run_attr *a = typed_attr(rs, key, RG_RUN_ATTR_INT);
    if (!a) return RG_ERR_FORMAT;
    if (a->i < lo || a->i > hi)
        return rg_error(RG_ERR_FORMAT, "run attribute '%s' = %lld is outside %lld..%lld", key, (long long)a->i,
                        (long long)lo, (long long)hi);
    *v = a->i;
    return RG_OK;
}

rg_status rg_run_state_get_double(const rg_run_state *rs, const char *key, double lo, double hi, double *v)
{
    const rg_run_attr *a = typed_attr(rs, key, RG_RUN_ATTR_DOUBLE);
    if (!a) return RG_ERR_FORMAT;
    if (!(a->d >= lo && a->d <= hi))
        return rg_error(RG_ERR_FORMAT, "run attribute '%s' = %g is outside [%g, %g]", key, a->d, lo, hi);
    *v = a->d;
    return RG_OK;
}

rg_status rg_run_state_get_str(const rg_run_state *rs, const char *key, const char **v)
{
    const rg_run_attr *a = typed_attr(rs, key, RG_RUN_ATTR_STRING);
    if (!a) return RG_ERR_FORMAT;
    *v = a->s;
    return RG_OK;
}

rg_status rg_run_state_get_rng(rg_run_state *rs, const char *name, rg_rng **out)
{
    *out = rg_run_state_rng(rs, name);
    return *out ? RG_OK : rg_error(RG_ERR_FORMAT, "run state has no RNG '%s'", name);
}

rg_status rg_run_state_check(const rg_run_state *rs)
{
    if (rs->n_rngs < 0 || rs->n_rngs > RG_CKPT_MAX_RNGS)
        return rg_error(RG_ERR_ARG, "run state: n_rngs %d outside 0..%d", rs->n_rngs, RG_CKPT_MAX_RNGS);
    if (rs->n_attrs < 0 || rs->n_attrs > RG_CKPT_MAX_ATTRS)
        return rg_error(RG_ERR_ARG, "run state: n_attrs %d outside 0..%d", rs->n_attrs, RG_CKPT_MAX_ATTRS);
    for (int i = 0; i < rs->n_rngs + rs->n_attrs; i++) {
        bool rng = i < rs->n_rngs;
        const char *key = rng ? rs->rngs[i].name : rs->attrs[i - rs->n_rngs].key;
        rg_status st = check_key(rng ? "run state RNG" : "run state attribute", key);
        if (st) return st;
        for (int j = rng ? 0 : rs->n_rngs; j < i; j++)
            if (strcmp(key, j < rs->n_rngs ? rs->rngs[j].name : rs->attrs[j - rs->n_rngs].key) == 0)
                return rg_error(RG_ERR_ARG, "run state: two %s named '%s'", rng ? "RNGs" : "attributes", key);
        const rg_run_attr *a = rng ? NULL : &rs->attrs[i - rs->n_rngs];
        if (a && (unsigned)a->type > RG_RUN_ATTR_STRING)
            return rg_error(RG_ERR_ARG, "run state attribute '%s': unknown type", key);
        if (a && a->type == RG_RUN_ATTR_STRING && !memchr(a->s, 0, sizeof a->s))
            return rg_error(RG_ERR_ARG, "run state attribute '%s': string value not terminated", key);
    }
    return RG_OK;
}
