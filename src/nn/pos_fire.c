/* pos_fire.c: FIRE, functional interpolation for relative positions (Li et al. 2023, "Functional Interpolation for
 * Relative Positions Improves Long Context Transformers", arXiv:2310.04418, sec. 3: b(i, j) = f_theta(psi(i - j) /
 * psi(max(L, i))), psi(x) = log(c x + 1), learnable c and threshold L, f_theta an MLP; the paper's reference
 * listing (appendix): one hidden layer of 32 ReLU units with one output per head, psi(x) = log(|c x| + 1), L =
 * |L_multiplier * init_L| with init_c 0.1, init_L 512, L_multiplier 1, and eps 1e-6 added to the normalizer).
 *   bias[b, h, i, j] = f( psi(p_i - p_j) / (psi(max(L, p_i)) + eps) )[h]
 * Shapes: q_pos [B*T], k_pos [B*S] -> [H, T, S] (every row the same positions) or [B, H, T, S].
 *
 * Composed from recorded ops, no monolithic kernel (as pos_xl.c evaluates its projections once per distance):
 *   1. L = |L_multiplier * init_L| (scale, |y| = relu(y) + relu(-y): its derivative at 0 is 0, as torch.abs).
 *   2. Query rows fall into normalizer classes: every row with p_i < L has max(L, p_i) = L (class 0), every distinct
 *      p_i >= L is a class of its own with the constant p_i. norm [NC] = psi(m) + eps with m = concat(L, p...),
 *      inv = 1 / norm (rg_fire_reciprocal below: ops.h has no division).
 *   3. The MLP inputs are the distinct (class, distance) pairs, U of them: x_u = psi(d_u) * inv[class_u]
 *      (mul, |.|, add, log, an embedding gather of inv). With positions 0..T-1 below L, U = T + S - 1.
 *   4. f: linear [U, 1] -> [U, W], relu, linear -> [U, H] (GEMMs over the distinct inputs).
 *   5. An embedding gather of the [U, H] rows by each (i, j)'s input index -> [(B,) T, S, H], then a permute to
 *      [(B,) H, T, S].
 * The (class, distance) pairs are found with a dense table over each class's distance range when those ranges are
 * small (at most 4 entries per (row, key), always so for consecutive positions); otherwise each (row, key) gets its
 * own input (sparse random positions), which gives the same values.
 * Every rule is the backward of an op of ops.h except the reciprocal's (docs/encodings.md). */
#include "pos_ext.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ reciprocal op */

static void reciprocal_backward(rg_tensor *node);
static const rg_op OP_RECIPROCAL = {"fire_reciprocal", reciprocal_backward};

rg_tensor *rg_fire_reciprocal(rg_ctx *c, rg_tensor *x)
{
    rg_tensor *out = rg_node_new(c, &OP_RECIPROCAL, x->ndim, x->shape, 1, &x);
    out->output_saved = true; /* the backward reads y */
    for (int64_t i = 0; i < x->numel; i++) out->data[i] = 1 / x->data[i];
    return out;
}

/* y = 1/x: dx += g * (-1/x^2) = -g y^2. */
static void reciprocal_backward(rg_tensor *node)
{
    rg_real *dx = rg_grad_of(node->src[0]);
    const rg_real *y = node->data, *g = node->grad;
    for (int64_t i = 0; i < node->numel; i++) dx[i] -= g[i] * y[i] * y[i];
}

/* ------------------------------------------------------------------ parameters */

rg_fire_config rg_fire_config_default(int n_heads)
{
    rg_fire_config c = {n_heads, 32, 0.1, 512.0, 1e-6};
    return c;
}

rg_fire_config rg_fire_config_of(const rg_model_config *cfg)
{
    rg_fire_config f = rg_fire_config_default(cfg->n_heads);
    double w = rg_pos_config_get(cfg, "fire_mlp_width"), c = rg_pos_config_get(cfg, "fire_init_c"),
           L = rg_pos_config_get(cfg, "fire_init_L"), eps = rg_pos_config_get(cfg, "fire_eps");
    if (w != 0) f.mlp_width = (int)w;
    if (c != 0) f.init_c = c;
    if (L != 0) f.init_L = L;
    if (eps != 0) f.eps = eps;
    return f;
}

static rg_status check_config(const rg_fire_config *cfg)
{
    if (cfg->n_heads < 1 || cfg->mlp_width < 1 || cfg->mlp_width > (1 << 16))
        return rg_error(RG_ERR_ARG, "FIRE: n_heads %d and mlp_width %d must be >= 1 (mlp_width <= 65536)",
                        cfg->n_heads, cfg->mlp_width);
    if (!(cfg->init_L > 0) || !isfinite(cfg->init_L))
        return rg_error(RG_ERR_ARG, "FIRE: init_L %g must be finite and > 0", cfg->init_L);
    if (!(cfg->eps >= 0) || !isfinite(cfg->eps)) return rg_error(RG_ERR_ARG, "FIRE: eps %g must be >= 0", cfg->eps);
    if (!isfinite(cfg->init_c)) return rg_error(RG_ERR_ARG, "FIRE: init_c %g must be finite", cfg->init_c);
    return RG_OK;
}

rg_status rg_fire_validate(const rg_model_config *cfg)
{
    rg_fire_config f = rg_fire_config_of(cfg);
    rg_status st = check_config(&f);
    if (!st) return RG_OK;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", rg_last_error());
    return rg_error(st, "config: %s", msg);
}

/* Registers prefix.suffix with the shape in *out: the status of rg_params_register (message recorded). */
static rg_status param(rg_params *ps, const char *prefix, const char *suffix, int ndim, const int *shape,
                       rg_tensor **out)
{
    char name[RG_NAME_LEN];
    int len = snprintf(name, sizeof name, "%s.%s", prefix, suffix);
    if (len < 0 || len >= (int)sizeof name)
        return rg_error(RG_ERR_ARG, "FIRE: parameter name %s.%s longer than %d characters", prefix, suffix,
                        RG_NAME_LEN - 1);
    return rg_params_register(ps, name, ndim, shape, out);
}

static void fill_uniform(rg_tensor *t, rg_rng *rng, double bound)
{
    for (int64_t i = 0; i < t->numel; i++) t->data[i] = (rg_real)(bound * (2 * rg_rng_uniform(rng) - 1));
}

rg_status rg_pos_fire_init(rg_pos_fire *f, rg_params *ps, const char *prefix, const rg_fire_config *cfg,
                           rg_rng *rng)
{
    memset(f, 0, sizeof *f);
    rg_status st = check_config(cfg);
    if (st) return st;
    f->cfg = *cfg;
    int W = cfg->mlp_width, H = cfg->n_heads;
    /* state_dict order: a module's own parameters (c, L_multiplier) before its submodule's (mlp) */
    if ((st = param(ps, prefix, "c", 1, (int[]){1}, &f->c)) ||
        (st = param(ps, prefix, "L_multiplier", 1, (int[]){1}, &f->L_multiplier)) ||
        (st = param(ps, prefix, "mlp.0.weight", 2, (int[]){W, 1}, &f->w1)) ||
        (st = param(ps, prefix, "mlp.0.bias", 1, (int[]){W}, &f->b1)) ||
        (st = param(ps, prefix, "mlp.2.weight", 2, (int[]){H, W}, &f->w2)) ||
        (st = param(ps, prefix, "mlp.2.bias", 1, (int[]){H}, &f->b2)))
        return st;
    /* torch.nn.Linear.reset_parameters: weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    fill_uniform(f->w1, rng, 1.0);
    fill_uniform(f->b1, rng, 1.0);
    fill_uniform(f->w2, rng, 1 / sqrt((double)W));
    fill_uniform(f->b2, rng, 1 / sqrt((double)W));
    f->c->data[0] = (rg_real)cfg->init_c;
    f->L_multiplier->data[0] = 1;
    return RG_OK;
}

/* ------------------------------------------------------------------ the bias */

/* |y| = relu(y) + relu(-y) */
static rg_tensor *abs_op(rg_ctx *c, rg_tensor *y) { return rg_add(c, rg_relu(c, y), rg_relu(c, rg_scale(c, y, -1))); }

static rg_tensor *constant(rg_ctx *c, int n, const rg_real *v) { return rg_tensor_from(c, 1, (int[]){n}, v); }

/* psi(c * v) = log(|c v| + 1) for a [n] tensor v. */
static rg_tensor *psi(rg_ctx *c, rg_tensor *cpar, rg_tensor *v)
{
    rg_real one = 1;
    return rg_log(c, rg_add(c, abs_op(c, rg_mul(c, cpar, v)), constant(c, 1, &one)));
}

/* The plan of one call: query rows (R of them, B*T or T), their classes, and the distinct inputs. */
typedef struct {
    int R, S, NC, U;
    int32_t *cls;       /* [R] class of each row */
    rg_real *m;         /* [NC] max(L, p) of the singleton classes (entry 0 unused when class 0 exists) */
    bool has_low;       /* class 0 (rows below L) exists */
    int32_t *u_cls;     /* [U] class of each distinct input */
    rg_real *u_dist;    /* [U] its distance */
    int32_t *idx;       /* [R*S] distinct input of each (row, key) */
} fire_plan;

typedef struct { int32_t p, r; } pos_row;

static int cmp_pos_row(const void *a, const void *b)
{
    const pos_row *x = a, *y = b;
    return x->p != y->p ? (x->p > y->p) - (x->p < y->p) : (x->r > y->r) - (x->r < y->r);
}

/* Classes: 0 for rows with p < L (if any), then one per distinct p >= L in increasing order. */
static void plan_classes(rg_ctx *c, fire_plan *pl, const int32_t *q_pos, double L)
{
    int R = pl->R;
    pl->cls = rg_arena_alloc(&c->arena, (size_t)R * sizeof(int32_t));
    pos_row *hi = rg_arena_alloc(&c->arena, (size_t)R * sizeof(pos_row)); /* the rows with p >= L */
    int nhi = 0;
    pl->has_low = false;
    for (int r = 0; r < R; r++) {
        if ((double)q_pos[r] < L) { pl->cls[r] = 0; pl->has_low = true; }
        else hi[nhi++] = (pos_row){q_pos[r], r};
    }
    qsort(hi, (size_t)nhi, sizeof *hi, cmp_pos_row);
    pl->m = rg_arena_alloc(&c->arena, (size_t)(nhi + 1) * sizeof(rg_real));
    int nc = pl->has_low ? 1 : 0;
    for (int k = 0; k < nhi; k++) {
        if (k == 0 || hi[k].p != hi[k - 1].p) pl->m[nc++] = (rg_real)hi[k].p;
        pl->cls[hi[k].r] = nc - 1;
    }
    pl->NC = nc;
}

/* Distinct (class, distance) inputs; kp(r) = the keys of row r. */
static void plan_inputs(rg_ctx *c, fire_plan *pl, const int32_t *q_pos, const int32_t *k_pos, int T)
{
    int R = pl->R, S = pl->S, NC = pl->NC;
    int64_t RS = (int64_t)R * S;
    pl->idx = rg_arena_alloc(&c->arena, (size_t)RS * sizeof(int32_t));
    pl->u_cls = rg_arena_alloc(&c->arena, (size_t)RS * sizeof(int32_t));
    pl->u_dist = rg_arena_alloc(&c->arena, (size_t)RS * sizeof(rg_real));
    /* distance range of each class */
    int64_t *lo = rg_arena_alloc(&c->arena, (size_t)NC * 3 * sizeof(int64_t)), *hi = lo + NC, *off = hi + NC;
    for (int k = 0; k < NC; k++) { lo[k] = INT64_MAX; hi[k] = INT64_MIN; }
    for (int r = 0; r < R; r++) {
        const int32_t *kp = k_pos + (int64_t)(r / T) * S;
        for (int j = 0; j < S; j++) {
            int64_t d = (int64_t)q_pos[r] - kp[j];
            int k = pl->cls[r];
            if (d < lo[k]) lo[k] = d;
            if (d > hi[k]) hi[k] = d;
        }
    }
    int64_t total = 0;
    for (int k = 0; k < NC; k++) { off[k] = total; total += hi[k] - lo[k] + 1; }
    int32_t *slot = NULL;
    if (total <= 4 * RS + 64) {
        slot = rg_arena_alloc(&c->arena, (size_t)total * sizeof(int32_t));
        for (int64_t e = 0; e < total; e++) slot[e] = -1;
    }
    int U = 0;
    for (int r = 0; r < R; r++) {
        const int32_t *kp = k_pos + (int64_t)(r / T) * S;
        int k = pl->cls[r];
        for (int j = 0; j < S; j++) {
            int64_t d = (int64_t)q_pos[r] - kp[j];
            int32_t *sl = slot ? slot + off[k] + (d - lo[k]) : NULL;
            if (!sl || *sl < 0) {
                pl->u_cls[U] = k;
                pl->u_dist[U] = (rg_real)d;
                if (sl) *sl = U;
                pl->idx[(int64_t)r * S + j] = U++;
            } else {
                pl->idx[(int64_t)r * S + j] = *sl;
            }
        }
    }
    pl->U = U;
}

static bool rows_share(const int32_t *pos, int B, int T)
{
    for (int b = 1; b < B; b++)
        if (memcmp(pos, pos + (int64_t)b * T, (size_t)T * sizeof(int32_t))) return false;
    return true;
}

/* The normalizer's reciprocal per class: 1 / (psi(max(L, p)) + eps) -> [NC]. */
static rg_tensor *inv_norm(rg_ctx *c, const rg_pos_fire *f, const fire_plan *pl, rg_tensor *L)
{
    rg_tensor *m;
    int nhi = pl->NC - (pl->has_low ? 1 : 0);
    rg_tensor *phi = nhi ? constant(c, nhi, pl->m + (pl->has_low ? 1 : 0)) : NULL;
    if (pl->has_low && phi) m = rg_concat(c, (rg_tensor *[]){L, phi}, 2, 0);
    else m = pl->has_low ? L : phi;
    rg_real eps = (rg_real)f->cfg.eps;
    return rg_fire_reciprocal(c, rg_add(c, psi(c, f->c, m), constant(c, 1, &eps)));
}

rg_tensor *rg_pos_fire_bias(rg_ctx *c, const rg_pos_fire *f, const int32_t *q_pos, const int32_t *k_pos, int B,
                            int T, int S)
{
    int H = f->cfg.n_heads;
    RG_ASSERT(B >= 1 && T >= 1 && S >= 1, "pos_fire_bias: B %d, T %d, S %d must be >= 1", B, T, S);
    RG_ASSERT(f->w1 && f->w2->shape[0] == H, "pos_fire_bias: the module is not initialized (rg_pos_fire_init)");
    int Bq = rows_share(q_pos, B, T) && rows_share(k_pos, B, S) ? 1 : B;
    for (int64_t i = 0; i < (int64_t)Bq * T; i++)
        RG_ASSERT(q_pos[i] > -(1 << 24) && q_pos[i] < (1 << 24), "pos_fire_bias: query position %d", q_pos[i]);
    for (int64_t i = 0; i < (int64_t)Bq * S; i++)
        RG_ASSERT(k_pos[i] > -(1 << 24) && k_pos[i] < (1 << 24), "pos_fire_bias: key position %d", k_pos[i]);
    RG_ASSERT((int64_t)Bq * T * S <= INT32_MAX, "pos_fire_bias: %d x %d x %d entries", Bq, T, S);

    /* 1. L = |L_multiplier * init_L| */
    rg_tensor *L = abs_op(c, rg_scale(c, f->L_multiplier, f->cfg.init_L));
    /* 2.-3. classes, distinct inputs, x_u = psi(d_u) / norm[class_u] */
    fire_plan pl = {.R = Bq * T, .S = S};
    plan_classes(c, &pl, q_pos, (double)L->data[0]);
    plan_inputs(c, &pl, q_pos, k_pos, T);
    rg_tensor *inv = inv_norm(c, f, &pl, L);
    rg_tensor *inv_u = rg_embedding(c, rg_reshape(c, inv, 2, (int[]){pl.NC, 1}), pl.u_cls, 1, &pl.U);
    rg_tensor *num = psi(c, f->c, constant(c, pl.U, pl.u_dist));
    rg_tensor *x = rg_mul(c, rg_reshape(c, num, 2, (int[]){pl.U, 1}), inv_u);
    /* 4. the MLP over the distinct inputs */
    rg_tensor *y = rg_linear(c, rg_relu(c, rg_linear(c, x, f->w1, f->b1)), f->w2, f->b2);
    /* 5. gather per (row, key) and put the heads first */
    if (Bq == 1) {
        rg_tensor *g = rg_embedding(c, y, pl.idx, 2, (int[]){T, S});
        return rg_permute(c, g, (int[]){2, 0, 1});
    }
    rg_tensor *g = rg_embedding(c, y, pl.idx, 3, (int[]){Bq, T, S});
    return rg_permute(c, g, (int[]){0, 3, 1, 2});
}

/* ------------------------------------------------------------------ the descriptor: one FIRE module per layer */

typedef struct {
    rg_fire_config cfg;
    rg_pos_fire layer[]; /* [n_layers] */
} fire_state;

static rg_status fire_new(const rg_model_config *cfg, void **state)
{
    fire_state *st = calloc(1, sizeof *st + (size_t)cfg->n_layers * sizeof st->layer[0]);
    if (!st) return rg_error(RG_ERR_NOMEM, "fire: out of memory");
    st->cfg = rg_fire_config_of(cfg);
    *state = st;
    return RG_OK;
}

/* blocks.{l}.attn.fire.{c, L_multiplier, mlp.0.weight, mlp.0.bias, mlp.2.weight, mlp.2.bias} after o_proj (the
 * module is the attention's last submodule in tools/ref_model.py). */
static rg_status fire_params(void *state, const rg_model_config *cfg, rg_pos_site site, int layer, rg_params *ps,
                             rg_rng *rng)
{
    fire_state *st = state;
    if (site != RG_POS_SITE_ATTN_END) return RG_OK;
    char prefix[RG_NAME_LEN];
    snprintf(prefix, sizeof prefix, "blocks.%d.attn.fire", layer);
    return rg_pos_fire_init(&st->layer[layer], ps, prefix, &st->cfg, rng);
}

static rg_tensor *fire_score_bias(rg_ctx *c, void *state, const void *prep, int layer, const rg_pos_summary *s,
                                  rg_tensor *q, rg_tensor *k)
{
    const fire_state *st = state;
    return rg_pos_fire_bias(c, &st->layer[layer], s->q_pos, s->k_pos, s->B, s->T, s->S);
}

/* Its settings: 0 stands for the value of the paper's reference listing (rg_fire_config_default), so that files
 * written before a setting existed read as the defaults. */
static const rg_pos_setting FIRE_SETTINGS[] = {
    {"fire_mlp_width", RG_POS_SETTING_INT, 0, 0, 65536, "hidden units of the FIRE MLP (0: 32)"},
    {"fire_init_c", RG_POS_SETTING_DOUBLE, 0, -DBL_MAX, DBL_MAX, "initial c of psi(x) = log(|c x| + 1) (0: 0.1)"},
    {"fire_init_L", RG_POS_SETTING_DOUBLE, 0, 0, DBL_MAX,
     "the threshold L = |L_multiplier init_L|, a constant (0: 512)"},
    {"fire_eps", RG_POS_SETTING_DOUBLE, 0, 0, DBL_MAX, "added to the normalizer psi(max(L, p_i)) (0: 1e-6)"},
};

/* The report's note: the MLP width, the threshold L and the initial c. */
static void fire_note(const rg_model_config *c, const rg_pos_note_info *in, char *buf, size_t cap)
{
    rg_fire_config f = rg_fire_config_of(c);
    snprintf(buf, cap, "fire: MLP of %d hidden units, L = %g (positions below L share the normalizer psi(L): every "
             "test position here is below it), initial c %g", f.mlp_width, f.init_L, f.init_c);
}

const rg_pos_encoding rg_pos_enc_fire = {
    .name = "fire", .doc = "FIRE learned bias f(psi(i-j)/psi(max(L,i))) per layer (Li et al. 2023)",
    .settings = FIRE_SETTINGS, .n_settings = 4, .validate = rg_fire_validate, .state_new = fire_new,
    .add_params = fire_params, .score_bias = fire_score_bias, .state_free = free, .report_note = fire_note,
    .note_order = 4, .plot_colour = "#7F7F7F", .plot_marker = 8};
