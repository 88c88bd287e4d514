/* optim.c: AdamW, SGD with momentum and the learning-rate schedule.
 *
 * State (m, v, momentum) is one block laid out like the registry's parameter block (rg_params.offset), so each
 * update is one flat loop per run of parameters with the same weight-decay rule.
 *
 * AdamW follows torch.optim.AdamW, single-tensor path (torch 1.13, torch/optim/adamw.py _single_tensor_adamw):
 *   t += 1; p *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 *   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps),
 * with weight decay only on 2-D parameters (tools/ref_model.py decay_param_groups). The arithmetic is done in double
 * and rounded to rg_real once per update. SGD follows torch.optim.SGD (dampening 0, not Nesterov). The schedule is
 * tools/ref_model.py lr_schedule.
 */
#include "nn.h"
#include "../tensor/fastmath.h"
#include "../tensor/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per-parameter views of a state block laid out like the registry (ps->offset); NULL on no memory. */
static rg_real **state_views(const rg_params *ps, rg_real *block)
{
    rg_real **s = calloc((size_t)(ps->n ? ps->n : 1), sizeof *s);
    if (!s) return NULL;
    for (int i = 0; i < ps->n; i++) s[i] = block + ps->offset[i];
    return s;
}

/* A zeroed, 64-byte aligned state block of the registry's length. */
static rg_real *state_block(const rg_params *ps)
{
    void *p = NULL;
    size_t bytes = (size_t)(ps->n ? ps->offset[ps->n] : 1) * sizeof(rg_real);
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    memset(p, 0, bytes);
    return p;
}

/* The end of the run of parameters from i on that share i's weight-decay rule (2-D or not): the flat loops run
 * once per run, over [offset[i], offset[end]). */
static int decay_run_end(const rg_params *ps, int i)
{
    int j = i + 1;
    while (j < ps->n && (ps->items[j]->ndim == 2) == (ps->items[i]->ndim == 2)) j++;
    return j;
}

static void check_layout(const char *who, const rg_params *ps, int n)
{
    RG_ASSERT(ps->n == n, "%s: initialized for %d parameters, stepping %d", who, n, ps->n);
    RG_ASSERT(ps->n_packed == ps->n && (ps->data || ps->n == 0),
              "%s: the registry was repacked or extended after the optimizer was initialized", who);
}

rg_status rg_adamw_init(rg_adamw *opt, rg_params *ps, double beta1, double beta2, double eps,
                        double weight_decay)
{
    memset(opt, 0, sizeof *opt);
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps >= 0) || !(weight_decay >= 0))
        return rg_error(RG_ERR_ARG, "adamw: betas (%g, %g) must be in [0, 1), eps %g and weight_decay %g >= 0", beta1,
                        beta2, eps, weight_decay);
    rg_status st = rg_params_pack(ps);
    if (st) return st;
    opt->beta1 = beta1;
    opt->beta2 = beta2;
    opt->eps = eps;
    opt->weight_decay = weight_decay;
    opt->n = ps->n;
    opt->m_block = state_block(ps);
    opt->v_block = state_block(ps);
    if (opt->m_block && opt->v_block) {
        opt->m = state_views(ps, opt->m_block);
        opt->v = state_views(ps, opt->v_block);
    }
    if (!opt->m || !opt->v) {
        rg_adamw_free(opt);
        return rg_error(RG_ERR_NOMEM, "adamw: out of memory for the moments");
    }
    return RG_OK;
}

/* The AdamW update of elements [lo, hi) of the blocks (see the top of the file; double arithmetic, one rounding of
 * each stored value). RG_VECTORIZE: the same IEEE operations per element (double sqrt and division are correctly
 * rounded in every clone), so the bits do not depend on the clone. */
RG_VECTORIZE static void adamw_flat(rg_real *restrict p, const rg_real *restrict g, rg_real *restrict m, rg_real *restrict v,
                       int64_t n, double decay, double b1, double b2, double step_size, double bc2_sqrt, double eps)
{
    for (int64_t j = 0; j < n; j++) {
        double gj = (double)g[j];
        double x = (double)p[j] * decay;
        rg_real mj = (rg_real)(b1 * (double)m[j] + (1 - b1) * gj);
        rg_real vj = (rg_real)(b2 * (double)v[j] + (1 - b2) * gj * gj);
        m[j] = mj;
        v[j] = vj;
        p[j] = (rg_real)(x - step_size * (double)mj / (sqrt((double)vj) / bc2_sqrt + eps));
    }
}

/* adamw_flat over the pool (rg_pool_for): each element is updated on its own, so every split gives the same bits */
typedef struct {
    rg_real *p, *g, *m, *v;
    double decay, b1, b2, step_size, bc2_sqrt, eps;
} adamw_pass;

static void adamw_part(void *arg, int64_t lo, int64_t hi)
{
    const adamw_pass *a = arg;
    adamw_flat(a->p + lo, a->g + lo, a->m + lo, a->v + lo, hi - lo, a->decay, a->b1, a->b2, a->step_size,
               a->bc2_sqrt, a->eps);
}

void rg_adamw_step(rg_adamw *opt, rg_params *ps, double lr)
{
    check_layout("adamw", ps, opt->n);
    opt->step++;
    const double b1 = opt->beta1, b2 = opt->beta2, eps = opt->eps;
    const double bc1 = 1 - pow(b1, (double)opt->step), bc2 = 1 - pow(b2, (double)opt->step);
    const double step_size = lr / bc1, bc2_sqrt = sqrt(bc2);
    for (int i = 0; i < ps->n;) {
        int end = decay_run_end(ps, i);
        const double decay = ps->items[i]->ndim == 2 ? 1 - lr * opt->weight_decay : 1;
        const int64_t lo = ps->offset[i], n = ps->offset[end] - lo;
        adamw_pass a = {ps->data + lo, ps->grad + lo, opt->m_block + lo, opt->v_block + lo,
                        decay, b1, b2, step_size, bc2_sqrt, eps};
        rg_pool_for(n, RG_POOL_GRAIN / 4, 16, adamw_part, &a);
        i = end;
    }
    for (int i = 0; i < ps->n; i++) rg_tensor_bump_version(ps->items[i]);
}

void rg_adamw_free(rg_adamw *opt)
{
    free(opt->m);
    free(opt->v);
    free(opt->m_block);
    free(opt->v_block);
    opt->m = opt->v = NULL;
    opt->m_block = opt->v_block = NULL;
}

rg_status rg_sgd_init(rg_sgd *opt, rg_params *ps, double momentum, double weight_decay)
{
    memset(opt, 0, sizeof *opt);
    if (!(momentum >= 0) || !(weight_decay >= 0))
        return rg_error(RG_ERR_ARG, "sgd: momentum %g and weight_decay %g must be >= 0", momentum, weight_decay);
    rg_status st = rg_params_pack(ps);
    if (st) return st;
    opt->momentum = momentum;
    opt->weight_decay = weight_decay;
    opt->n = ps->n;
    opt->buf_block = state_block(ps);
    if (opt->buf_block) opt->buf = state_views(ps, opt->buf_block);
    if (!opt->buf) {
        rg_sgd_free(opt);
        return rg_error(RG_ERR_NOMEM, "sgd: out of memory for the momentum buffers");
    }
    return RG_OK;
}

void rg_sgd_step(rg_sgd *opt, rg_params *ps, double lr)
{
    check_layout("sgd", ps, opt->n);
    const bool first = opt->step == 0;
    const double mu = opt->momentum;
    opt->step++;
    for (int i = 0; i < ps->n;) {
        int end = decay_run_end(ps, i);
        const double wd = ps->items[i]->ndim == 2 ? opt->weight_decay : 0;
        const int64_t lo = ps->offset[i], n = ps->offset[end] - lo;
        rg_real *restrict p = ps->data + lo, *restrict buf = opt->buf_block + lo;
        const rg_real *restrict gr = ps->grad + lo;
        for (int64_t j = 0; j < n; j++) {
            double g = (double)gr[j] + wd * (double)p[j];
            if (mu != 0) {
                buf[j] = (rg_real)(first ? g : mu * (double)buf[j] + g);
                g = (double)buf[j];
            }
            p[j] = (rg_real)((double)p[j] - lr * g);
        }
        i = end;
    }
    for (int i = 0; i < ps->n; i++) rg_tensor_bump_version(ps->items[i]);
}

void rg_sgd_free(rg_sgd *opt)
{
    free(opt->buf);
    free(opt->buf_block);
    opt->buf = NULL;
    opt->buf_block = NULL;
}

double rg_lr_schedule(int64_t s, double peak, int64_t warmup, int64_t total, double min_frac)
{
    if (s < warmup) return peak * (double)(s + 1) / (double)warmup;
    int64_t span = total - warmup > 1 ? total - warmup : 1;
    double progress = (double)(s - warmup) / (double)span;
    return peak * (min_frac + (1 - min_frac) * 0.5 * (1 + cos(3.14159265358979323846 * progress)));
}
