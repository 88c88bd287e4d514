/* params.c: the parameter registry of a model (rg_params: parameters in registration = state_dict order, owned),
 * its contiguous layout (one data block, one gradient block, a table of offsets: llm.c's layout), the global
 * gradient norm and gradient-norm clipping. Clipping follows torch.nn.utils.clip_grad_norm_ (torch 1.13,
 * torch/nn/utils/clip_grad.py): total = ||all grads||_2, every gradient is multiplied by
 * min(1, max_norm / (total + 1e-6)); the norm before clipping is returned. Norms accumulate in double.
 *
 * Layout (rg_params_pack): parameter i occupies elements [offset[i], offset[i+1]) of both blocks: its numel values,
 * then padding up to the next multiple of 16 elements (64-byte aligned views in float32), at least one element. The
 * padding stays 0 in the gradient block (the guard rg_backward checks for packed parameters) and is updated like
 * any value by the flat loops (a zero gradient leaves zero data and moments at 0), so those loops need no gaps. */
#include "nn.h"
#include "../autograd/autograd.h"
#include "../tensor/fastmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PACK_ALIGN 16 /* elements */

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
    if (ps->max_numel > 0) {
        int64_t numel = 1, have = rg_params_numel(ps);
        for (int i = 0; i < ndim; i++) numel = numel > INT64_MAX / shape[i] ? INT64_MAX : numel * shape[i];
        if (numel > ps->max_numel - have)
            return rg_error(RG_ERR_ARG, "parameter %s: its %lld scalars would bring the model past its limit of %lld "
                            "parameters (%lld registered before it)", name, (long long)numel,
                            (long long)ps->max_numel, (long long)have);
    }
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

static void *block_alloc(int64_t len)
{
    void *p = NULL;
    size_t bytes = (size_t)(len > 0 ? len : 1) * sizeof(rg_real);
    if (posix_memalign(&p, 64, bytes) != 0) return NULL;
    memset(p, 0, bytes);
    return p;
}

rg_status rg_params_pack(rg_params *ps)
{
    if (ps->n_packed == ps->n && ps->data) return RG_OK;
    int64_t *offset = malloc(sizeof(int64_t) * (size_t)(ps->n + 1));
    if (!offset) return rg_error(RG_ERR_NOMEM, "params: out of memory for the offset table");
    int64_t len = 0;
    for (int i = 0; i < ps->n; i++) {
        offset[i] = len;
        len += (ps->items[i]->numel + PACK_ALIGN) / PACK_ALIGN * PACK_ALIGN; /* >= numel + 1 */
    }
    offset[ps->n] = len;
    rg_real *data = block_alloc(len), *grad = block_alloc(len);
    if (!data || !grad) {
        free(offset); free(data); free(grad);
        return rg_error(RG_ERR_NOMEM, "params: out of memory for %lld parameters", (long long)len);
    }
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        memcpy(data + offset[i], p->data, (size_t)p->numel * sizeof(rg_real));
        memcpy(grad + offset[i], p->grad, (size_t)p->numel * sizeof(rg_real));
        if (!p->packed) { free(p->data); free(p->grad); }
        p->data = data + offset[i];
        p->grad = grad + offset[i];
        p->packed = true;
    }
    free(ps->data); free(ps->grad); free(ps->offset);
    ps->data = data;
    ps->grad = grad;
    ps->offset = offset;
    ps->n_packed = ps->n;
    return RG_OK;
}

/* Packs ps when needed; out of memory for it is rg_oom (the callers have no status to return). */
static void ensure_packed(rg_params *ps)
{
    if (ps->n_packed != ps->n || (!ps->data && ps->n > 0))
        if (rg_params_pack(ps)) rg_oom("%s", rg_last_error());
}

void rg_params_zero_grad(rg_params *ps)
{
    ensure_packed(ps);
    if (ps->n) memset(ps->grad, 0, (size_t)ps->offset[ps->n] * sizeof(rg_real));
}

/* Sum of squares of x[0..n) in double, in 8 independent partial sums (vectorized, a fixed order). */
RG_VECTORIZE static double sum_squares(const rg_real *x, int64_t n)
{
    double acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += (double)x[i + k] * (double)x[i + k];
    for (; i < n; i++) acc[0] += (double)x[i] * (double)x[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

double rg_params_grad_norm(const rg_params *ps)
{
    if (ps->n_packed == ps->n && ps->data) return ps->n ? sqrt(sum_squares(ps->grad, ps->offset[ps->n])) : 0;
    double s = 0; /* not packed (a registry no optimizer or zero_grad has touched yet) */
    for (int i = 0; i < ps->n; i++) s += sum_squares(ps->items[i]->grad, ps->items[i]->numel);
    return sqrt(s);
}

/* g[0..n) = (float)(g * coef), each product in double (vectorized; the same bits as the scalar loop). */
RG_VECTORIZE static void scale_grads(rg_real *restrict g, int64_t n, double coef)
{
    for (int64_t j = 0; j < n; j++) g[j] = (rg_real)(g[j] * coef);
}

double rg_params_clip_grad_norm(rg_params *ps, double max_norm)
{
    ensure_packed(ps);
    double norm = rg_params_grad_norm(ps);
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1 && ps->n) scale_grads(ps->grad, ps->offset[ps->n], coef);
    return norm;
}

void rg_params_free(rg_params *ps)
{
    for (int i = 0; i < ps->n; i++) {
        rg_tensor *p = ps->items[i];
        if (p->packed) { free(p->bf16.p); free(p->transposed.p); free(p); } /* its data and grad live in the blocks */
        else rg_param_free(p);
    }
    free(ps->items);
    free(ps->data);
    free(ps->grad);
    free(ps->offset);
    memset(ps, 0, sizeof *ps);
}
