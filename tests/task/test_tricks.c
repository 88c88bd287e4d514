/* test_tricks.c: the tricks tasks of src/task/tricks.c on hand-built cases: the coupled position ids of copy and
 * reverse (the tables written out by hand), the descriptor's positions at evaluation (start 0) and in training (a
 * start within [0, 128)), the training batch's positions row by row (rg_task_batch_sample), a training step with
 * explicit positions (rg_train_grad's loss equals rg_model_loss_backward's at those positions, and differs from
 * positions 0..T-1 for learned positions; explicit + random positions refused), and the index-hint layouts. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "task/task.h"
#include "task/tricks.h"

static void assert_ints(const char *what, const int32_t *got, const int32_t *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("%s[%d]: got %d, want %d", what, i, (int)got[i], (int)want[i]);
}

static rg_task task_of(const char *name)
{
    rg_task t;
    assert_int_equal(rg_task_register_tricks(), RG_OK);
    assert_int_equal(rg_task_parse(name, &t), RG_OK);
    return t;
}

/* BOS x1 x2 x3 SEP y1 y2 y3 EOS at start 5 */
static void test_coupled_tables(void **state)
{
    static const int32_t copy5[9] = {5, 6, 7, 8, 5, 6, 7, 8, 9};
    static const int32_t rev5[9] = {5, 6, 7, 8, 9, 8, 7, 6, 5};
    static const int32_t copy0_1[5] = {0, 1, 0, 1, 2}; /* n = 1 */
    int32_t pos[9];
    assert_int_equal(rg_coupled_positions(false, 3, 5, pos), RG_OK);
    assert_ints("copy n=3 s=5", pos, copy5, 9);
    assert_int_equal(rg_coupled_positions(true, 3, 5, pos), RG_OK);
    assert_ints("reverse n=3 s=5", pos, rev5, 9);
    assert_int_equal(rg_coupled_positions(false, 1, 0, pos), RG_OK);
    assert_ints("copy n=1 s=0", pos, copy0_1, 5);
    assert_int_equal(rg_coupled_positions(false, 0, 0, pos), RG_ERR_ARG);
    assert_int_equal(rg_coupled_positions(false, 3, -1, pos), RG_ERR_ARG);
    assert_int_equal(rg_coupled_positions(false, 3, RG_TASK_MAX_POSITION - 4, pos), RG_ERR_ARG);
}

static void test_coupled_descriptor(void **state)
{
    static const int32_t rev0[9] = {0, 1, 2, 3, 4, 3, 2, 1, 0};
    rg_task rc = task_of("reverse_coupled"), cc = task_of("copy_coupled");
    assert_string_equal(rg_task_get(rc)->base, "reverse");
    assert_true(rg_task_get(cc)->flags & RG_TASK_OPT_IN);
    int32_t pos[9], want[9];
    assert_int_equal(rg_task_positions(rc, NULL, 3, pos), RG_OK); /* evaluation: start 0 */
    assert_ints("reverse_coupled eval n=3", pos, rev0, 9);
    rg_rng rng;
    rg_rng_seed(&rng, 7, 1);
    int seen_nonzero = 0;
    for (int i = 0; i < 200; i++) { /* training: a random start, all ids below 128 */
        assert_int_equal(rg_task_positions(cc, &rng, 3, pos), RG_OK);
        int s = pos[0];
        assert_true(s >= 0 && s + 3 + 1 < RG_COUPLED_MAX_POS);
        rg_coupled_positions(false, 3, s, want);
        assert_ints("copy_coupled train n=3", pos, want, 9);
        seen_nonzero += s != 0;
    }
    assert_true(seen_nonzero > 150);
    /* a task without the hook: 0..T-1 */
    assert_int_equal(rg_task_positions(RG_TASK_COPY, NULL, 2, pos), RG_OK);
    for (int t = 0; t < 7; t++) assert_int_equal(pos[t], t);
    /* the largest training n: ids up to 127 */
    assert_int_equal(rg_task_positions(cc, &rng, RG_COUPLED_MAX_POS - 2, NULL), RG_ERR_ARG);
}

/* Every row's positions are the coupled table of its own n and start, without the last id, then 0 on padding; its
 * tokens and targets are the copy layout. */
static void test_coupled_batch(void **state)
{
    rg_task cc = task_of("copy_coupled");
    rg_task_batch b;
    assert_int_equal(rg_task_batch_alloc_for(&b, cc, 6, 5), RG_OK);
    assert_non_null(b.positions);
    rg_rng rng;
    rg_rng_seed(&rng, 11, 1);
    assert_int_equal(rg_task_batch_sample(&b, cc, &rng, 6, 5), RG_OK);
    for (int r = 0; r < b.B; r++) {
        int n = b.n[r], len = b.len[r];
        assert_int_equal(len, 2 * n + 2);
        const int32_t *p = b.positions + (int64_t)r * b.T, *tok = b.tokens + (int64_t)r * b.T;
        int32_t want[2 * 5 + 3];
        rg_coupled_positions(false, n, p[0], want);
        assert_ints("batch row positions", p, want, len);
        for (int t = len; t < b.T; t++) assert_int_equal(p[t], 0);
        assert_int_equal(tok[0], RG_TOK_BOS);
        assert_int_equal(tok[n + 1], RG_TOK_SEP);
        for (int j = 0; j < n; j++) assert_int_equal(tok[n + 2 + j], tok[1 + j]); /* y = x */
    }
    /* a batch without the positions buffer is refused for a task with the hook */
    free(b.positions);
    b.positions = NULL;
    assert_int_equal(rg_task_batch_sample(&b, cc, &rng, 6, 5), RG_ERR_ARG);
    rg_task_batch_free(&b);
}

/* rg_train_grad with a batch's explicit positions computes the loss at those positions. */
static void test_train_step_positions(void **state)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_LEARNED);
    cfg.max_len = 64;
    rg_model *m = tc_model_randn(&cfg, 5, 0.5);
    enum { B = 3, T = 6 };
    int len[B] = {6, 4, 5};
    int32_t tok[B * T], tgt[B * T], pos[B * T];
    tc_padded_batch(9, cfg.vocab_size, B, T, len, tok, tgt);
    for (int i = 0; i < B * T; i++) pos[i] = 10 + (i * 7) % 40;
    rg_ctx *c = rg_ctx_new();
    double want, plain;
    assert_int_equal(rg_model_loss_backward(c, m, tok, tgt, pos, B, T, 1, -100, &want), RG_OK);
    assert_int_equal(rg_model_loss_backward(c, m, tok, tgt, NULL, B, T, 1, -100, &plain), RG_OK);
    rg_trainer tr;
    rg_trainer_init(&tr);
    rg_batch bt = {tok, tgt, len, B, T, pos, NULL};
    rg_step_config sc = {2, 1e-3, 0, -100, NULL, 0}; /* two length-sorted micro-batches */
    rg_step_stats ss;
    assert_int_equal(rg_train_grad(&tr, m, &bt, &sc, &ss), RG_OK);
    assert_true(fabs(ss.loss - want) < 1e-5 * fabs(want));
    assert_true(fabs(plain - want) > 1e-3); /* the positions matter */
    rg_rng r;
    rg_rng_seed(&r, 1, 2);
    rg_step_config both = {1, 1e-3, 0, -100, &r, 64};
    assert_int_equal(rg_train_grad(&tr, m, &bt, &both, &ss), RG_ERR_ARG);
    rg_trainer_free(&tr);
    rg_ctx_free(c);
    rg_model_free(m);
}

/* The hint layouts: BOS h_s x1 h_s+1 x2 SEP, then h_s x1 h_s+1 x2 EOS (copy) or h_s+1 x2 h_s x1 EOS (reverse). */
static void test_hints(void **state)
{
    rg_task ch = task_of("copy_hints"), rh = task_of("reverse_hints");
    assert_int_equal(rg_task_prompt_len(ch, 2), 6);
    assert_int_equal(rg_task_target_len(ch, 2), 5);
    assert_int_equal(rg_task_get(ch)->vocab_size, 158);
    for (int which = 0; which < 2; which++) {
        rg_rng rng;
        rg_rng_seed(&rng, 3, 1);
        int32_t p[6], y[5];
        assert_int_equal(rg_task_draw(which ? rh : ch, &rng, 2, p, y), RG_OK);
        int32_t h = p[1], a = p[2], b = p[4];
        assert_true(h >= RG_HINT_TOK0 && h + 1 < RG_HINT_TOK0 + RG_HINT_COUNT);
        int32_t want_p[6] = {RG_TOK_BOS, h, a, h + 1, b, RG_TOK_SEP};
        int32_t want_copy[5] = {h, a, h + 1, b, RG_TOK_EOS}, want_rev[5] = {h + 1, b, h, a, RG_TOK_EOS};
        assert_ints("hint prompt", p, want_p, 6);
        assert_ints(which ? "reverse_hints target" : "copy_hints target", y, which ? want_rev : want_copy, 5);
        assert_true(a >= RG_TOK_SYM0 && a < RG_TOK_SYM0 + RG_TASK_NSYM);
    }
    /* the start is drawn: over many samples of n = 100 every start 0..28 is possible, and n = 128 starts at 0 */
    rg_rng rng;
    rg_rng_seed(&rng, 4, 1);
    static int32_t p[2 * 129 + 2], y[2 * 129 + 1];
    int max_s = 0;
    for (int i = 0; i < 300; i++) {
        assert_int_equal(rg_task_draw(ch, &rng, 100, p, y), RG_OK);
        if (p[1] - RG_HINT_TOK0 > max_s) max_s = p[1] - RG_HINT_TOK0;
    }
    assert_int_equal(max_s, 28);
    assert_int_equal(rg_task_draw(ch, &rng, 128, p, y), RG_OK);
    assert_int_equal(p[1], RG_HINT_TOK0);
    assert_int_equal(rg_task_draw(ch, &rng, 129, p, y), RG_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coupled_tables),
        cmocka_unit_test(test_coupled_descriptor),
        cmocka_unit_test(test_coupled_batch),
        cmocka_unit_test(test_train_step_positions),
        cmocka_unit_test(test_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
