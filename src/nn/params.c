/* params.c: the parameter registry of a model (rg_params: parameters in registration = state_dict order, owned),
 * the global gradient norm and gradient-norm clipping. Clipping follows torch.nn.utils.clip_grad_norm_ (torch 1.13,
 * torch/nn/utils/clip_grad.py): total = ||all grads||_2, every gradient is multiplied by
 * min(1, max_norm / (total + 1e-6)); the norm before clipping is returned. Norms accumulate in double. */
#include "nn.h"
#include "../autograd/autograd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

rg_status rg_params_register(rg_params *ps, const char *name, int ndim, const int *shape, rg_tensor **out)
{
    *out = NULL;
    if (rg_params_find(ps, name)) return rg_error(RG_ERR_ARG, "parameter %s is already registered", name);
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 32;
        rg_tensor **items = realloc(ps->items, (size_t)cap * sizeof *items);
        if (!items) return rg_error(RG_ERR_NOMEM, "parameter %s: out of memory growing the registry", name);
        ps->items = items;
        ps->cap = cap;
    }
    if (ndim < 1 || ndim > RG_MAX_DIMS)
        return rg_error(RG_ERR_ARG, "parameter %s: ndim %d outside 1..%d", name, ndim, RG_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 1) return rg_error(RG_ERR_ARG, "parameter %s: dimension %d has size %d", name, i, shape[i]);
    rg_tensor *p = rg_param_new(name, ndim, shape); /* the shape is valid: NULL means no memory */
    if (!p) return rg_error(RG_ERR_NOMEM, "parameter %s: out of memory", name);
    ps->items[ps->n++] = p;
    *out = p;
    return RG_OK;
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
