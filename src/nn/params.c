/* params.c: the parameter registry of a model (rg_params: parameters in registration = state_dict order, owned),
 * the global gradient norm and gradient-norm clipping. Clipping follows torch.nn.utils.clip_grad_norm_ (torch 1.13,
 * torch/nn/utils/clip_grad.py): total = ||all grads||_2, every gradient is multiplied by
 * min(1, max_norm / (total + 1e-6)); the norm before clipping is returned. Norms accumulate in double. */
#include "nn.h"
#include "../autograd/autograd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rg_tensor *rg_params_new(rg_params *ps, const char *name, int ndim, const int *shape)
{
    if (rg_params_find(ps, name)) {
        rg_error(RG_ERR_ARG, "parameter %s is already registered", name);
        return NULL;
    }
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 32;
        rg_tensor **items = realloc(ps->items, (size_t)cap * sizeof *items);
        if (!items) { rg_error(RG_ERR_NOMEM, "parameter %s: out of memory growing the registry", name); return NULL; }
        ps->items = items;
        ps->cap = cap;
    }
    rg_tensor *p = rg_param_new(name, ndim, shape);
    if (!p) return NULL;
    ps->items[ps->n++] = p;
    return p;
}

rg_tensor *rg_params_find(const rg_params *ps, const char *name)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->items[i]->name, name) == 0) return ps->items[i];
    return NULL;
}

int64_t rg_params_numel(const rg_params *ps)
{
    int64_t n = 0;
    for (int i = 0; i < ps->n; i++) n += ps->items[i]->numel;
    return n;
}

void rg_params_zero_grad(rg_params *ps)
{
    for (int i = 0; i < ps->n; i++) rg_zero_grad(ps->items[i]);
}

double rg_params_grad_norm(const rg_params *ps)
{
    double s = 0;
    for (int i = 0; i < ps->n; i++) {
        const rg_tensor *p = ps->items[i];
        for (int64_t j = 0; j < p->numel; j++) s += (double)p->grad[j] * (double)p->grad[j];
    }
    return sqrt(s);
}

double rg_params_clip_grad_norm(rg_params *ps, double max_norm)
{
    double norm = rg_params_grad_norm(ps);
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1) {
        for (int i = 0; i < ps->n; i++) {
            rg_tensor *p = ps->items[i];
            for (int64_t j = 0; j < p->numel; j++) p->grad[j] = (rg_real)(p->grad[j] * coef);
        }
    }
    return norm;
}

void rg_params_free(rg_params *ps)
{
    for (int i = 0; i < ps->n; i++) rg_param_free(ps->items[i]);
    free(ps->items);
    memset(ps, 0, sizeof *ps);
}
