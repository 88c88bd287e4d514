/* gradcheck_adamw.c (float64 build): the 5-step AdamW trajectory of tests/fixtures/model_none.h5 (/adamw, see
 * tests/fixtures/README.md): each step zero grads, forward, cross-entropy, backward, clip to `clip`
 * (clip_grad_norm_), lr = rg_lr_schedule(s, lr, warmup, total_steps, min_lr_frac), AdamW step. The losses, the
 * pre-clip gradient norms and the final parameters must match PyTorch (float64) within 1e-6; the worst errors are
 * printed (in double they are ~1e-12 or below). Also the schedule's values and SGD with momentum on a small case. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_NONE "tests/fixtures/model_none.h5"

static void test_adamw_trajectory(void **state)
{
    rg_model *m = tc_fx_model(FILE_NONE, NULL);
    int64_t n;
    int shape[4];
    int32_t *tokens = tc_h5_read_int(FILE_NONE, "/input/tokens", &n, shape, NULL);
    int32_t *targets = tc_h5_read_int(FILE_NONE, "/input/targets", NULL, NULL, NULL);
    const int B = shape[0], T = shape[1];
    const double lr = tc_h5_attr(FILE_NONE, "/adamw", "lr"), b1 = tc_h5_attr(FILE_NONE, "/adamw", "beta1");
    const double b2 = tc_h5_attr(FILE_NONE, "/adamw", "beta2"), eps = tc_h5_attr(FILE_NONE, "/adamw", "eps");
    const double wd = tc_h5_attr(FILE_NONE, "/adamw", "weight_decay"), clip = tc_h5_attr(FILE_NONE, "/adamw", "clip");
    const double min_frac = tc_h5_attr(FILE_NONE, "/adamw", "min_lr_frac");
    const int warmup = (int)tc_h5_attr(FILE_NONE, "/adamw", "warmup");
    const int total = (int)tc_h5_attr(FILE_NONE, "/adamw", "total_steps");
    double *want_losses = tc_h5_read(FILE_NONE, "/adamw/losses", NULL, NULL, NULL);
    double *want_norms = tc_h5_read(FILE_NONE, "/adamw/grad_norms", NULL, NULL, NULL);

    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, &m->params, b1, b2, eps, wd), RG_OK);
    rg_ctx *c = rg_ctx_new();
    double e_loss = 0, e_norm = 0;
    for (int s = 0; s < total; s++) {
        rg_ctx_reset(c);
        rg_params_zero_grad(&m->params);
        rg_tensor *logits;
        assert_int_equal(rg_model_forward(c, m, tokens, NULL, B, T, NULL, &logits), RG_OK);
        rg_tensor *loss = rg_cross_entropy(c, logits, targets, -100);
        rg_backward(c, loss, NULL);
        double norm = rg_params_clip_grad_norm(&m->params, clip);
        double cur = rg_lr_schedule(s, lr, warmup, total, min_frac);
        rg_adamw_step(&opt, &m->params, cur);
        e_loss = tc_max(e_loss, fabs((double)loss->data[0] - want_losses[s]));
        e_norm = tc_max(e_norm, fabs(norm - want_norms[s]));
        assert_true(fabs((double)loss->data[0] - want_losses[s]) < 1e-6);
        assert_true(fabs(norm - want_norms[s]) < 1e-6);
    }
    assert_int_equal(opt.step, total);
    double e_param = 0;
    char path[256];
    for (int i = 0; i < m->params.n; i++) {
        rg_tensor *p = m->params.items[i];
        snprintf(path, sizeof path, "/adamw/params/%s", p->name);
        int64_t np;
        double *want = tc_h5_read(FILE_NONE, path, &np, NULL, NULL);
        assert_int_equal(np, p->numel);
        for (int64_t j = 0; j < np; j++) e_param = tc_max(e_param, fabs((double)p->data[j] - want[j]));
        tc_assert_close(p->name, p->data, want, np, 1e-6, 0);
        free(want);
    }
    print_message("adamw 5 steps: max |loss diff| %.3g, max |grad norm diff| %.3g, max |param diff| %.3g\n", e_loss,
                  e_norm, e_param);
    rg_ctx_free(c);
    rg_adamw_free(&opt);
    free(want_losses);
    free(want_norms);
    free(tokens);
    free(targets);
    rg_model_free(m);
}

/* The fixture's learning rates (README: 0.005, 0.01, 0.01, 0.00775, 0.00325) and the end points. */
static void test_lr_schedule(void **state)
{
    const double want[5] = {0.005, 0.01, 0.01, 0.00775, 0.00325};
    for (int s = 0; s < 5; s++) assert_true(fabs(rg_lr_schedule(s, 1e-2, 2, 5, 0.1) - want[s]) < 1e-15);
    assert_true(fabs(rg_lr_schedule(100, 1.0, 0, 100, 0.1) - 0.1) < 1e-15);
    assert_true(fabs(rg_lr_schedule(0, 1.0, 0, 100, 0.1) - 1.0) < 1e-15);
    assert_true(fabs(rg_lr_schedule(0, 3.0, 0, 0, 0.5) - 3.0) < 1e-15); /* total <= warmup: no division by 0 */
}

/* Clipping: the returned norm is the pre-clip one and the new norm is max_norm * norm / (norm + 1e-6). */
static void test_clip(void **state)
{
    rg_params ps = {0};
    rg_tensor *a, *b, *dup;
    assert_int_equal(rg_params_register(&ps, "a", 1, (int[]){2}, &a), RG_OK);
    assert_int_equal(rg_params_register(&ps, "b", 2, (int[]){1, 1}, &b), RG_OK);
    assert_int_equal(rg_params_register(&ps, "a", 1, (int[]){3}, &dup), RG_ERR_ARG); /* duplicate name */
    assert_null(dup);
    a->grad[0] = 3; a->grad[1] = 0; b->grad[0] = 4;
    assert_true(fabs(rg_params_grad_norm(&ps) - 5) < 1e-15);
    assert_true(fabs(rg_params_clip_grad_norm(&ps, 1.0) - 5) < 1e-15);
    assert_true(fabs(rg_params_grad_norm(&ps) - 5 / (5 + 1e-6)) < 1e-15);
    assert_true(fabs(rg_params_clip_grad_norm(&ps, 10.0) - 5 / (5 + 1e-6)) < 1e-15); /* below: unchanged */
    assert_true(fabs(rg_params_grad_norm(&ps) - 5 / (5 + 1e-6)) < 1e-15);
    assert_int_equal(rg_params_numel(&ps), 3);
    assert_ptr_equal(rg_params_find(&ps, "b"), b);
    assert_null(rg_params_find(&ps, "c"));
    rg_params_free(&ps);
}

/* SGD with momentum 0.9 and weight decay 0.1 by hand (torch.optim.SGD): 2-D param decays, 1-D does not. */
static void test_sgd(void **state)
{
    rg_params ps = {0};
    rg_tensor *w, *b;
    assert_int_equal(rg_params_register(&ps, "w", 2, (int[]){1, 1}, &w), RG_OK);
    assert_int_equal(rg_params_register(&ps, "b", 1, (int[]){1}, &b), RG_OK);
    w->data[0] = 1; b->data[0] = 1;
    rg_sgd opt;
    assert_int_equal(rg_sgd_init(&opt, &ps, 0.9, 0.1), RG_OK);
    double pw = 1, pb = 1, bw = 0, bb = 0;
    for (int s = 0; s < 3; s++) {
        w->grad[0] = 0.5; b->grad[0] = -0.25;
        unsigned v0 = w->version;
        rg_sgd_step(&opt, &ps, 0.1);
        assert_int_equal(w->version, v0 + 1);
        double gw = 0.5 + 0.1 * pw, gb = -0.25;
        bw = s ? 0.9 * bw + gw : gw;
        bb = s ? 0.9 * bb + gb : gb;
        pw -= 0.1 * bw;
        pb -= 0.1 * bb;
        assert_true(fabs(w->data[0] - pw) < 1e-15);
        assert_true(fabs(b->data[0] - pb) < 1e-15);
    }
    rg_sgd_free(&opt);
    rg_params_free(&ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adamw_trajectory),
        cmocka_unit_test(test_lr_schedule),
        cmocka_unit_test(test_clip),
        cmocka_unit_test(test_sgd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
