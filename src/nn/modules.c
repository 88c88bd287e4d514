/* modules.c: Linear, LayerNorm and MLP as thin wrappers over the core ops (rg_linear, rg_layernorm, and the fused
 * rg_linear_gelu / rg_linear_residual of ops_fused.c).
 * Shapes: Linear x [..., in] -> [..., out] with weight [out, in] (torch.nn.Linear layout) and bias [out];
 * LayerNorm x [..., C] -> [..., C] with weight, bias [C], eps 1e-5 (torch.nn.LayerNorm default);
 * MLP x [..., d] -> fc2(gelu_tanh(fc1(x))) with fc1 [d_ff, d], fc2 [d, d_ff] (tools/ref_model.py class MLP).
 * Initialization (GPT-2 style, nn.h): weights N(0, 0.02) from the caller's RNG, biases 0, LayerNorm weight 1. */
#include "nn.h"

#include <stdio.h>
#include <string.h>

#define LINEAR_STD 0.02

static void fill_normal(rg_tensor *t, rg_rng *rng, double std)
{
    for (int64_t i = 0; i < t->numel; i++) t->data[i] = (rg_real)(std * rg_rng_normal(rng));
}

rg_status rg_nn_linear_init(rg_nn_linear *m, rg_params *ps, const char *prefix, int in_features, int out_features,
                            bool bias, rg_rng *rng)
{
    char name[RG_NAME_LEN];
    m->weight = m->bias = NULL;
    snprintf(name, sizeof name, "%s.weight", prefix);
    rg_status st = rg_params_register(ps, name, 2, (int[]){out_features, in_features}, &m->weight);
    if (st) return st;
    fill_normal(m->weight, rng, LINEAR_STD);
    if (bias) {
        snprintf(name, sizeof name, "%s.bias", prefix);
        return rg_params_register(ps, name, 1, (int[]){out_features}, &m->bias); /* zero-filled */
    }
    return RG_OK;
}

rg_tensor *rg_nn_linear_forward(rg_ctx *c, const rg_nn_linear *m, rg_tensor *x)
{
    return rg_linear(c, x, m->weight, m->bias);
}

rg_tensor *rg_nn_linear_forward_residual(rg_ctx *c, const rg_nn_linear *m, rg_tensor *x, rg_tensor *r)
{
    if (!m->bias) return rg_add(c, r, rg_linear(c, x, m->weight, NULL));
    return rg_linear_residual(c, x, m->weight, m->bias, r);
}

rg_status rg_nn_layernorm_init(rg_nn_layernorm *m, rg_params *ps, const char *prefix, int C)
{
    char name[RG_NAME_LEN];
    m->weight = m->bias = NULL;
    snprintf(name, sizeof name, "%s.weight", prefix);
    rg_status st = rg_params_register(ps, name, 1, (int[]){C}, &m->weight);
    if (st) return st;
    for (int64_t i = 0; i < C; i++) m->weight->data[i] = 1;
    snprintf(name, sizeof name, "%s.bias", prefix);
    return rg_params_register(ps, name, 1, (int[]){C}, &m->bias);
}

rg_tensor *rg_nn_layernorm_forward(rg_ctx *c, const rg_nn_layernorm *m, rg_tensor *x)
{
    return rg_layernorm(c, x, m->weight, m->bias, 1e-5);
}

rg_status rg_nn_mlp_init(rg_nn_mlp *m, rg_params *ps, const char *prefix, int d_model, int d_ff, rg_rng *rng)
{
    char name[RG_NAME_LEN];
    snprintf(name, sizeof name, "%s.fc1", prefix);
    rg_status st = rg_nn_linear_init(&m->fc1, ps, name, d_model, d_ff, true, rng);
    if (st) return st;
    snprintf(name, sizeof name, "%s.fc2", prefix);
    return rg_nn_linear_init(&m->fc2, ps, name, d_ff, d_model, true, rng);
}

/* gelu(fc1(x)): one fused op (fc1 always has a bias; rg_nn_mlp_init) */
static rg_tensor *mlp_hidden(rg_ctx *c, const rg_nn_mlp *m, rg_tensor *x)
{
    if (!m->fc1.bias) return rg_gelu(c, rg_nn_linear_forward(c, &m->fc1, x));
    return rg_linear_gelu(c, x, m->fc1.weight, m->fc1.bias);
}

rg_tensor *rg_nn_mlp_forward(rg_ctx *c, const rg_nn_mlp *m, rg_tensor *x)
{
    return rg_nn_linear_forward(c, &m->fc2, mlp_hidden(c, m, x));
}

rg_tensor *rg_nn_mlp_forward_residual(rg_ctx *c, const rg_nn_mlp *m, rg_tensor *x, rg_tensor *r)
{
    return rg_nn_linear_forward_residual(c, &m->fc2, mlp_hidden(c, m, x), r);
}
