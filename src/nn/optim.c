/* optim.c: AdamW, SGD with momentum and the learning-rate schedule. State (m, v, momentum buffers) is one array of
 * numel values per parameter, in registry order.
 *
 * AdamW follows torch.optim.AdamW, single-tensor path (torch 1.13, torch/optim/adamw.py _single_tensor_adamw):
 *   t += 1; p *= 1 - lr*wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
 *   p -= (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps),
 * with weight decay only on 2-D parameters (tools/ref_model.py decay_param_groups). The arithmetic is done in double
 * and rounded to rg_real once per update. SGD follows torch.optim.SGD (dampening 0, not Nesterov). The schedule is
 * tools/ref_model.py lr_schedule.
 */
#include "nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One zeroed array of numel values per parameter; NULL (and nothing allocated) on failure. */
static rg_real **state_new(const rg_params *ps)
{
    rg_real **s = calloc((size_t)(ps->n ? ps->n : 1), sizeof *s);
    if (!s) return NULL;
    for (int i = 0; i < ps->n; i++) {
        s[i] = calloc((size_t)ps->items[i]->numel, sizeof(rg_real));
        if (!s[i]) {
            for (int j = 0; j < i; j++) free(s[j]);
            free(s);
            return NULL;
        }
    }
    return s;
}

static void state_free(rg_real **s, int n)
{
    if (!s) return;
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

rg_status rg_adamw_init(rg_adamw *opt, const rg_params *ps, double beta1, double beta2, double eps,
                        double weight_decay)
{
    memset(opt, 0, sizeof *opt);
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps >= 0) || !(weight_decay >= 0))
        return rg_error(RG_ERR_ARG, "adamw: betas (%g, %g) must be in [0, 1), eps %g and weight_decay %g >= 0", beta1,
                        beta2, eps, weight_decay);
    opt->beta1 = beta1;
    opt->beta2 = beta2;
    opt->eps = eps;
    opt->weight_decay = weight_decay;
    opt->n = ps->n;
    opt->m = state_new(ps);
    opt->v = state_new(ps);
    if (!opt->m || !opt->v) {
        rg_adamw_free(opt);
        return rg_error(RG_ERR_NOMEM, "adamw: out of memory for the moments");
    }
    return RG_OK;
}

void rg_adamw_step(rg_adamw *opt, rg_params *ps, double lr)
{
    RG_ASSERT(ps->n == opt->n, "adamw: initialized for %d parameters, stepping %d", opt->n, ps->n);
    opt->step++;
    const double b1 = opt->beta1, b2 = opt->beta2, eps = opt->eps;
    const double bc1 = 1 - pow(b1, (double)opt->step), bc2 = 1 - pow(b2, (double)opt->step);
    const double step_size = lr / bc1, bc2_sqrt = sqrt(bc2);
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        rg_real *m = opt->m[i], *v = opt->v[i];
        const double decay = p->ndim == 2 ? 1 - lr * opt->weight_decay : 1;
        for (int64_t j = 0; j < p->numel; j++) {
            double g = (double)p->grad[j];
            double x = (double)p->data[j] * decay;
            double mj = b1 * (double)m[j] + (1 - b1) * g;
            double vj = b2 * (double)v[j] + (1 - b2) * g * g;
            m[j] = (rg_real)mj;
            v[j] = (rg_real)vj;
            p->data[j] = (rg_real)(x - step_size * (double)m[j] / (sqrt((double)v[j]) / bc2_sqrt + eps));
        }
        rg_tensor_bump_version(p);
    }
}

void rg_adamw_free(rg_adamw *opt)
{
    state_free(opt->m, opt->n);
    state_free(opt->v, opt->n);
    opt->m = opt->v = NULL;
}

rg_status rg_sgd_init(rg_sgd *opt, const rg_params *ps, double momentum, double weight_decay)
{
    memset(opt, 0, sizeof *opt);
    if (!(momentum >= 0) || !(weight_decay >= 0))
        return rg_error(RG_ERR_ARG, "sgd: momentum %g and weight_decay %g must be >= 0", momentum, weight_decay);
    opt->momentum = momentum;
    opt->weight_decay = weight_decay;
    opt->n = ps->n;
    opt->buf = state_new(ps);
    if (!opt->buf) return rg_error(RG_ERR_NOMEM, "sgd: out of memory for the momentum buffers");
    return RG_OK;
}

void rg_sgd_step(rg_sgd *opt, rg_params *ps, double lr)
{
    RG_ASSERT(ps->n == opt->n, "sgd: initialized for %d parameters, stepping %d", opt->n, ps->n);
    const bool first = opt->step == 0;
    opt->step++;
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        rg_real *buf = opt->buf[i];
        const double wd = p->ndim == 2 ? opt->weight_decay : 0;
        for (int64_t j = 0; j < p->numel; j++) {
            double g = (double)p->grad[j] + wd * (double)p->data[j];
            if (opt->momentum != 0) {
                buf[j] = (rg_real)(first ? g : opt->momentum * (double)buf[j] + g);
                g = (double)buf[j];
            }
            p->data[j] = (rg_real)((double)p->data[j] - lr * g);
        }
        rg_tensor_bump_version(p);
    }
}

void rg_sgd_free(rg_sgd *opt)
{
    state_free(opt->buf, opt->n);
    opt->buf = NULL;
}

double rg_lr_schedule(int64_t s, double peak, int64_t warmup, int64_t total, double min_frac)
{
    if (s < warmup) return peak * (double)(s + 1) / (double)warmup;
    int64_t span = total - warmup > 1 ? total - warmup : 1;
    double progress = (double)(s - warmup) / (double)span;
    return peak * (min_frac + (1 - min_frac) * 0.5 * (1 + cos(3.14159265358979323846 * progress)));
}
