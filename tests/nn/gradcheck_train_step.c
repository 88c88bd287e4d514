/* gradcheck_train_step.c (float64 build): rg_model_loss_backward in chunks gives the loss and the parameter
 * gradients of one forward/backward of the whole batch (to 1e-12), also when a chunk has no target, and rejects
 * bad sizes; rg_train_step with k length-sorted micro-batches of right-padded rows of different lengths takes the same step as the whole padded batch: loss, gradient norm and updated parameters to
 * 1e-12. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { B = 5, T = 6, V = 9 };

static void test_chunks_equal_whole_batch(void **state)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_ROPE);
    cfg.vocab_size = V;
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

/* A small model with the seed's parameters (N(0, 0.3)). */
static rg_model *step_model(void)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_ROPE);
    cfg.vocab_size = V;
    cfg.max_len = 32;
    return tc_model_randn(&cfg, 12, 0.3);
}

static void test_train_step_micro_batches(void **state)
{
    enum { NB = 7, NT = 9 };
    int len[NB] = {9, 3, 5, 1, 9, 4, 6};
    int32_t tokens[NB * NT], targets[NB * NT];
    tc_padded_batch(13, V, NB, NT, len, tokens, targets);
    {
        /* the reference: the whole padded batch in one piece, clip 0.5, AdamW */
        rg_model *ref = step_model();
        rg_adamw ropt;
        assert_int_equal(rg_adamw_init(&ropt, &ref->params, 0.9, 0.98, 1e-8, 0.1), RG_OK);
        rg_trainer rt;
        rg_trainer_init(&rt);
        rg_batch whole = {tokens, targets, NULL, NB, NT, NULL, NULL};
        rg_step_config rc = {1, 1e-2, 0.1, -100, NULL, 0};
        rg_step_stats want;
        assert_int_equal(rg_train_step(&rt, ref, &ropt, &whole, &rc, &want), RG_OK);
        assert_int_equal(want.tokens, NB * NT);
        for (int k = 1; k <= NB + 1; k++) {
            rg_model *m = step_model();
            rg_adamw opt;
            assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.1), RG_OK);
            rg_trainer tr;
            rg_trainer_init(&tr);
            rg_batch b = {tokens, targets, len, NB, NT, NULL, NULL};
            rg_step_config sc = {k, 1e-2, 0.1, -100, NULL, 0};
            rg_step_stats got;
            assert_int_equal(rg_train_step(&tr, m, &opt, &b, &sc, &got), RG_OK);
            if (fabs(got.loss - want.loss) > 1e-12 * fabs(want.loss))
                fail_msg("k %d: loss %.15g, want %.15g", k, got.loss, want.loss);
            if (fabs(got.grad_norm - want.grad_norm) > 1e-12 * want.grad_norm)
                fail_msg("k %d: grad norm %.15g, want %.15g", k, got.grad_norm, want.grad_norm);
            double worst = 0;
            for (int i = 0; i < m->params.n; i++)
                for (int64_t j = 0; j < m->params.items[i]->numel; j++)
                    worst = tc_max(worst, fabs(m->params.items[i]->data[j] - ref->params.items[i]->data[j]));
            print_message("k %d: loss %.6f, grad norm %.6f (clipped to 0.1), max |param diff| %.3g, %lld tokens\n", k,
                          got.loss, got.grad_norm, worst, (long long)got.tokens);
            assert_true(worst <= 1e-12);
            assert_true(got.tokens <= NB * NT);
            rg_trainer_free(&tr);
            rg_adamw_free(&opt);
            rg_model_free(m);
        }
        rg_trainer_free(&rt);
        rg_adamw_free(&ropt);
        rg_model_free(ref);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_chunks_equal_whole_batch),
                                       cmocka_unit_test(test_train_step_micro_batches)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
