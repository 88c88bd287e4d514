/* gradcheck_direct_write.c (float64 build): central finite differences through the whole model, made the way a
 * user checks a gradient by hand: plain stores into a parameter's data (p->data[j] = v +- h) between forwards, and
 * no call to the library other than rg_ctx_reset and rg_model_forward. For every registered encoding (the registry,
 * not a list), at 1 and 2 threads, and every parameter of a tiny model (entries 0, the middle and the last), the
 * difference quotient of the cross-entropy agrees with the analytic gradient of one backward:
 * |num - ana| <= 1e-7 + 1e-6 |ana|. A forward that reused anything derived from the values before the write (a
 * Linear weight's transpose, say) would read a quotient of 0 for that weight. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H_STEP 1e-6
#define ATOL 1e-7
#define RTOL 1e-6

enum { B = 2, T = 5 };
static const int32_t TOKENS[B * T] = {1, 5, 3, 0, 6, 4, 4, 2, 6, 1};
static const int32_t TARGETS[B * T] = {5, 3, 0, 6, 2, 4, 2, -100, 1, 3};

/* The cross-entropy of the model on the batch, in a context just reset (as every step of a program resets it). */
static rg_tensor *loss_of(rg_ctx *c, rg_model *m)
{
    rg_tensor *logits;
    rg_ctx_reset(c);
    if (rg_model_forward(c, m, TOKENS, NULL, B, T, NULL, &logits))
        fail_msg("forward of %s: %s", rg_pos_name(m->cfg.pos), rg_last_error());
    return rg_cross_entropy(c, logits, TARGETS, -100);
}

/* The worst |num - ana| / (ATOL + RTOL |ana|) over the checked entries of m's parameters (printing any above 1). */
static double check_model(rg_model *m)
{
    rg_ctx *c = rg_ctx_new();
    rg_params_zero_grad(&m->params);
    rg_backward(c, loss_of(c, m), NULL);
    rg_set_grad_enabled(c, false);
    double worst = 0;
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        const int64_t at[3] = {0, p->numel / 2, p->numel - 1};
        for (int e = 0; e < 3; e++) {
            const int64_t j = at[e];
            const rg_real v = p->data[j];
            p->data[j] = v + H_STEP;
            double fp = (double)loss_of(c, m)->data[0];
            p->data[j] = v - H_STEP;
            double fm = (double)loss_of(c, m)->data[0];
            p->data[j] = v;
            double num = (fp - fm) / (2 * H_STEP), ana = (double)p->grad[j];
            double r = fabs(num - ana) / (ATOL + RTOL * fabs(ana));
            if (!(r <= 1))
                printf("  %s %s[%lld]: finite difference %.9g, analytic %.9g\n", rg_pos_name(m->cfg.pos), p->name,
                       (long long)j, num, ana);
            worst = tc_max(worst, r);
        }
    }
    rg_ctx_free(c);
    return worst;
}

static void test_every_encoding(void **state)
{
    static const int THREADS[] = {1, 2};
    int bad = 0;
    for (int i = 0; i < 2 * rg_pos_count(); i++) {
        const int k = i % rg_pos_count(), threads = THREADS[i / rg_pos_count()];
        rg_set_num_threads(threads);
        rg_model_config cfg = tc_tiny_config((rg_pos_kind)k);
        rg_model *m;
        if (rg_model_new(&cfg, 5, &m)) fail_msg("rg_model_new(%s): %s", rg_pos_name(k), rg_last_error());
        rg_rng rng;
        rg_rng_seed(&rng, 11, 0);
        for (int i = 0; i < m->params.n; i++) /* far from the init, so that attention and positions matter */
            if (m->params.items[i]->ndim == 2) tc_fill_randn(m->params.items[i], &rng, 0.3);
        double worst = check_model(m);
        print_message("%-20s %d thread(s): worst |num - ana| / (%.0e + %.0e |ana|) = %.3g\n", rg_pos_name(k),
                      threads, ATOL, RTOL, worst);
        bad += !(worst <= 1);
        rg_model_free(m);
    }
    rg_set_num_threads(1);
    if (bad) fail_msg("%d of %d cases (encodings x 1, 2 threads): a finite difference through plain writes disagrees "
                      "with the gradient", bad, 2 * rg_pos_count());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_encoding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
