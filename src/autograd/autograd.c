/* autograd.c: the backward walk over a context's tape. See autograd.h. */
#include "autograd.h"

#include <string.h>

/* Gradient buffers carry one guard element past their end (rg_grad_of, rg_param_new: NaN; a packed parameter's
 * block padding: 0); a rule that writes outside its input's shape changes it. */
static bool guard_ok(const rg_tensor *t)
{
    if (!t->grad) return true;
    rg_real g = t->grad[t->numel];
    return t->packed ? g == 0 : g != g;
}

void rg_backward(rg_ctx *c, rg_tensor *loss, const rg_real *seed)
{
    char sl[64];
    /* Find the loss on the tape before reading it: a reset that merged the arena's blocks has freed the memory of
     * every tensor of the previous step, so a stale loss may only be read if it lies in the current arena. */
    int end = -1;
    for (int i = c->tape_len - 1; i >= 0 && end < 0; i--)
        if (c->tape[i] == loss) end = i;
    if (end < 0) {
        RG_ASSERT(rg_arena_owns(&c->arena, loss),
                  "backward: the loss was not made on this context, or was made before the last rg_ctx_reset (the "
                  "tape was reset); run the forward again");
        RG_ASSERT(loss->ctx == c, "backward: loss %s was not made on this context", rg_shape_str(loss, sl, 64));
        RG_ASSERT(loss->generation == c->generation,
                  "backward: the tape was reset (rg_ctx_reset) after the loss was computed; run the forward again");
        RG_ASSERT(loss->requires_grad && loss->op, "backward: the loss does not depend on anything that requires "
                  "grad (no parameters, or no-grad mode)");
        RG_FATAL("backward: the loss is not on the tape");
    }
    RG_ASSERT(seed || loss->numel == 1,
              "backward: loss %s is not a scalar; pass a seed gradient of the same shape", rg_shape_str(loss, sl, 64));
    /* intermediate gradients start from zero on every backward, so a second backward does not count twice */
    for (int i = 0; i < c->tape_len; i++) {
        rg_tensor *t = c->tape[i];
        if (t->grad) memset(t->grad, 0, (size_t)t->numel * sizeof(rg_real));
    }
    rg_real *g = rg_grad_of(loss);
    for (int64_t i = 0; i < loss->numel; i++) g[i] += seed ? seed[i] : 1;
    for (int i = end; i >= 0; i--) {
        rg_tensor *t = c->tape[i];
        if (!t->grad) continue; /* not on a path to the loss */
        RG_ASSERT(t->op->backward, "backward: op '%s' has no backward rule", t->op->name);
        if (t->output_saved && t->version != 0) /* a node starts at version 0 */
            RG_FATAL("backward: the result of op '%s' %s was modified in place after it was computed, and its "
                     "backward reads it (version now %u)", t->op->name, rg_shape_str(t, sl, 64), t->version);
        for (int k = 0; k < t->nsrc; k++) {
            rg_tensor *s = t->src[k];
            if (s && s->version != t->src_version[k])
                RG_FATAL("backward: input %d (%s) of op '%s' was modified in place after the op saved it "
                         "(version %u, now %u)", k, s->name[0] ? s->name : "unnamed", t->op->name, t->src_version[k],
                         s->version);
        }
        t->op->backward(t);
        for (int k = 0; k < t->nsrc; k++) {
            rg_tensor *s = t->src[k];
            if (s && !guard_ok(s))
                RG_FATAL("backward: op '%s' wrote past the end of the gradient of input %d %s", t->op->name, k,
                         rg_shape_str(s, sl, 64));
        }
    }
}

void rg_zero_grad(rg_tensor *t)
{
    if (t->grad) memset(t->grad, 0, (size_t)t->numel * sizeof(rg_real));
}
