/* gradcheck_train_step.c (float64 build): rg_model_loss_backward in chunks gives the loss and the parameter
 * gradients of one forward/backward of the whole batch (to 1e-12), also when a chunk has no target, and rejects
 * bad sizes. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, T = 6, V = 9 };

static void test_chunks_equal_whole_batch(void **state)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.vocab_size = V;
    cfg.d_model = 8;
    cfg.n_heads = 2;
    cfg.n_layers = 2;
    cfg.d_ff = 16;
    cfg.max_len = 16;
    cfg.pos = RG_POS_ROPE;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 3, &m), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 11, 0);
    for (int i = 0; i < m->params.n; i++) tc_fill_randn(m->params.items[i], &rng, 0.3);
    int32_t tokens[B * T], targets[B * T];
    for (int i = 0; i < B * T; i++) {
        tokens[i] = (int32_t)rg_rng_below(&rng, V);
        targets[i] = rg_rng_below(&rng, 3) ? (int32_t)rg_rng_below(&rng, V) : -100;
    }
    for (int t = 0; t < T; t++) targets[1 * T + t] = -100; /* row 1: no target at all */
    rg_ctx *c = rg_ctx_new();
    /* reference: the whole batch at once */
    rg_params_zero_grad(&m->params);
    rg_tensor *logits;
    assert_int_equal(rg_model_forward(c, m, tokens, NULL, B, T, NULL, &logits), RG_OK);
    rg_tensor *loss = rg_cross_entropy(c, logits, targets, -100);
    rg_backward(c, loss, NULL);
    double want_loss = loss->data[0];
    int64_t total = rg_params_numel(&m->params), k = 0;
    double *want = malloc(sizeof(double) * total);
    for (int i = 0; i < m->params.n; i++)
        for (int64_t j = 0; j < m->params.items[i]->numel; j++) want[k++] = m->params.items[i]->grad[j];
    for (int chunks = 1; chunks <= B + 1; chunks++) {
        rg_params_zero_grad(&m->params);
        double l;
        assert_int_equal(rg_model_loss_backward(c, m, tokens, targets, NULL, B, T, chunks, -100, &l), RG_OK);
        if (fabs(l - want_loss) > 1e-12) fail_msg("chunks %d: loss %.15g, want %.15g", chunks, l, want_loss);
        double worst = 0, mag = 0;
        k = 0;
        for (int i = 0; i < m->params.n; i++)
            for (int64_t j = 0; j < m->params.items[i]->numel; j++, k++) {
                double d = fabs(m->params.items[i]->grad[j] - want[k]);
                if (d > worst) worst = d;
                if (fabs(want[k]) > mag) mag = fabs(want[k]);
            }
        print_message("chunks %d: max |grad diff| %.3g (largest gradient %.3g)\n", chunks, worst, mag);
        assert_true(mag > 1e-3);
        assert_true(worst <= 1e-12 * mag);
    }
    double l;
    assert_int_equal(rg_model_loss_backward(c, m, tokens, targets, NULL, B, T, 0, -100, &l), RG_ERR_ARG);
    assert_int_equal(rg_model_loss_backward(c, m, tokens, targets, NULL, 0, T, 1, -100, &l), RG_ERR_ARG);
    free(want);
    rg_ctx_free(c);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_chunks_equal_whole_batch)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
