/* gradcheck.c: central finite differences against the analytic gradient (see autograd.h). */
#include "autograd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double eval_no_grad(rg_gradcheck_fn f, void *user, rg_tensor **inputs, rg_ctx *c)
{
    rg_ctx_reset(c);
    bool old = rg_set_grad_enabled(c, false);
    rg_tensor *y = f(c, inputs, user);
    rg_set_grad_enabled(c, old);
    RG_ASSERT(y->numel == 1, "gradcheck: the function must return a scalar");
    return (double)y->data[0];
}

double rg_gradcheck(rg_gradcheck_fn f, void *user, rg_tensor **inputs, int n_inputs, double h, double *rel_err)
{
    RG_ASSERT(sizeof(rg_real) == sizeof(double), "gradcheck: build with -DRG_DOUBLE (the float64 library)");
    rg_ctx *c = rg_ctx_new();
    for (int i = 0; i < n_inputs; i++) {
        RG_ASSERT(inputs[i]->requires_grad && inputs[i]->grad,
                  "gradcheck: input %d must be a parameter (rg_param_new) that requires grad", i);
        rg_zero_grad(inputs[i]);
    }
    rg_tensor *y = f(c, inputs, user);
    rg_backward(c, y, NULL);
    double worst = 0;
    for (int i = 0; i < n_inputs; i++) {
        rg_tensor *x = inputs[i];
        double max_diff = 0, max_mag = 1e-12;
        for (int64_t j = 0; j < x->numel; j++) {
            rg_real v = x->data[j];
            /* plain stores, as a user's own check would make: each evaluation resets the context, which begins a
             * new derivation epoch, so copies made from the data (a weight's transpose, tensor.h rg_derived) are
             * made again from the written value */
            x->data[j] = v + h;
            double fp = eval_no_grad(f, user, inputs, c);
            x->data[j] = v - h;
            double fm = eval_no_grad(f, user, inputs, c);
            x->data[j] = v;
            double num = (fp - fm) / (2 * h), ana = (double)x->grad[j];
            double d = fabs(num - ana);
            if (!(d <= max_diff)) max_diff = d; /* NaN propagates as the worst */
            if (fabs(num) > max_mag) max_mag = fabs(num);
            if (fabs(ana) > max_mag) max_mag = fabs(ana);
        }
        double e = max_diff / max_mag;
        if (rel_err) rel_err[i] = e;
        if (!(e <= worst)) worst = e;
    }
    rg_ctx_free(c);
    return worst;
}
