/* gradcheck_share.c (float64 build): data-parallel shares of a training step (rg_step_config's rank, n_ranks,
 * reduce_grad), without MPI: rg_train_grad called once per share in one process.
 *   - the shares' gradient blocks and losses sum to the whole batch's (to 1e-12 relative), for 1..6 ranks over 4
 *     length-sorted micro-batches with random positions (6 ranks: two ranks without a micro-batch);
 *   - n_ranks 1 (rank 0) gives the default step's gradients bit for bit;
 *   - the reduce callback gets the flat block (its length offset[n_packed]) and the share's loss once per step, its
 *     result is what the step clips and updates with, and its error stops the step with no update;
 *   - a rank outside 0..n_ranks-1 is refused. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { V = 9, NB = 7, NT = 9, K = 4, MAXPOS = 40 };
static const int len[NB] = {9, 3, 5, 1, 9, 4, 6};
static int32_t tokens[NB * NT], targets[NB * NT];

static rg_model *share_model(void)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_ROPE);
    cfg.vocab_size = V;
    cfg.max_len = MAXPOS;
    return tc_model_randn(&cfg, 12, 0.3);
}

static int setup(void **state)
{
    tc_padded_batch(13, V, NB, NT, len, tokens, targets);
    return 0;
}

/* rg_train_grad of share (rank, n_ranks) with a fresh positions stream; the gradient block copied to g. */
static void share_grad(rg_model *m, int rank, int n_ranks, double *g, double *loss, int64_t *tokens_out)
{
    rg_trainer tr;
    rg_trainer_init(&tr);
    rg_rng pos;
    rg_rng_seed(&pos, 21, 2);
    rg_batch b = {tokens, targets, len, NB, NT, NULL, NULL};
    if (n_ranks) assert_int_equal(rg_trainer_set_share(&tr, rank, n_ranks, NULL, NULL), RG_OK);
    rg_step_config sc = {K, 1e-2, 0.1, -100, &pos, MAXPOS};
    rg_step_stats st;
    assert_int_equal(rg_train_grad(&tr, m, &b, &sc, &st), RG_OK);
    int64_t n = m->params.offset[m->params.n_packed];
    memcpy(g, m->params.grad, sizeof(double) * (size_t)n);
    *loss = st.loss;
    *tokens_out = st.tokens;
    rg_trainer_free(&tr);
}

static void test_shares_sum_to_batch(void **state)
{
    rg_model *m = share_model();
    int64_t n = m->params.offset[m->params.n_packed], want_tokens, tok;
    double *want = malloc(sizeof(double) * (size_t)n), *sum = malloc(sizeof(double) * (size_t)n);
    double *g = malloc(sizeof(double) * (size_t)n), want_loss, loss;
    share_grad(m, 0, 0, want, &want_loss, &want_tokens);
    share_grad(m, 0, 1, g, &loss, &tok);
    assert_memory_equal(g, want, sizeof(double) * (size_t)n); /* n_ranks 1 is the default step, bit for bit */
    assert_true(loss == want_loss);
    double mag = 0;
    for (int64_t i = 0; i < n; i++) mag = tc_max(mag, fabs(want[i]));
    assert_true(mag > 1e-3);
    for (int p = 2; p <= K + 2; p++) {
        double lsum = 0, part_max = 0;
        memset(sum, 0, sizeof(double) * (size_t)n);
        for (int r = 0; r < p; r++) {
            share_grad(m, r, p, g, &loss, &tok);
            assert_int_equal(tok, want_tokens); /* every rank counts the whole batch's tokens */
            lsum += loss;
            double d = 0;
            for (int64_t i = 0; i < n; i++) { sum[i] += g[i]; d = tc_max(d, fabs(g[i] - want[i])); }
            part_max = tc_max(part_max, d);
        }
        double worst = 0;
        for (int64_t i = 0; i < n; i++) worst = tc_max(worst, fabs(sum[i] - want[i]));
        print_message("%d ranks: max |sum of shares - batch gradient| %.3g (largest %.3g), loss %.15g vs %.15g\n", p,
                      worst, mag, lsum, want_loss);
        assert_true(worst <= 1e-12 * mag);
        assert_true(fabs(lsum - want_loss) <= 1e-12 * want_loss);
        assert_true(part_max > 1e-3 * mag); /* a share alone is not the batch gradient */
    }
    free(want);
    free(sum);
    free(g);
    rg_model_free(m);
}

/* A reduce callback that stands in for the other rank of two: adds that rank's gradients and loss. */
typedef struct { const double *other; double other_loss; int64_t n; int calls; rg_status fail; } fake_reduce;

static rg_status add_other(rg_real *grad, int64_t n, double *loss, void *ctx)
{
    fake_reduce *f = ctx;
    f->calls++;
    assert_int_equal(n, f->n);
    if (f->fail) return rg_error(f->fail, "fake reduce: failing as asked");
    for (int64_t i = 0; i < n; i++) grad[i] += f->other[i];
    *loss += f->other_loss;
    return RG_OK;
}

static void test_reduce_callback(void **state)
{
    rg_model *ref = share_model(), *m = share_model(), *other = share_model();
    int64_t n = m->params.offset[m->params.n_packed], tok;
    double *g1 = malloc(sizeof(double) * (size_t)n), loss1;
    share_grad(other, 1, 2, g1, &loss1, &tok);
    rg_adamw ro, mo;
    assert_int_equal(rg_adamw_init(&ro, &ref->params, 0.9, 0.98, 1e-8, 0.1), RG_OK);
    assert_int_equal(rg_adamw_init(&mo, &m->params, 0.9, 0.98, 1e-8, 0.1), RG_OK);
    rg_trainer tr;
    rg_trainer_init(&tr);
    rg_batch b = {tokens, targets, len, NB, NT, NULL, NULL};
    rg_rng pos;
    rg_rng_seed(&pos, 21, 2);
    rg_step_config sc = {K, 1e-2, 0.1, -100, &pos, MAXPOS};
    rg_step_stats want, got;
    assert_int_equal(rg_train_step(&tr, ref, &ro, &b, &sc, &want), RG_OK);
    fake_reduce f = {g1, loss1, n, 0, RG_OK};
    rg_rng_seed(&pos, 21, 2);
    assert_int_equal(rg_trainer_set_share(&tr, 0, 2, add_other, &f), RG_OK);
    assert_int_equal(rg_train_step(&tr, m, &mo, &b, &sc, &got), RG_OK);
    assert_int_equal(f.calls, 1);
    double worst = 0;
    for (int64_t i = 0; i < n; i++) worst = tc_max(worst, fabs(m->params.data[i] - ref->params.data[i]));
    print_message("rank 0 + rank 1 through the callback: loss %.15g vs %.15g, grad norm %.15g vs %.15g, max |param "
                  "diff| %.3g\n", got.loss, want.loss, got.grad_norm, want.grad_norm, worst);
    assert_true(fabs(got.loss - want.loss) <= 1e-12 * want.loss);
    assert_true(fabs(got.grad_norm - want.grad_norm) <= 1e-12 * want.grad_norm);
    assert_true(worst <= 1e-12);
    /* the callback's error: returned, no update */
    double *before = malloc(sizeof(double) * (size_t)n);
    memcpy(before, m->params.data, sizeof(double) * (size_t)n);
    f.fail = RG_ERR_IO;
    rg_rng_seed(&pos, 21, 2);
    assert_int_equal(rg_train_step(&tr, m, &mo, &b, &sc, &got), RG_ERR_IO);
    assert_non_null(strstr(rg_last_error(), "failing as asked"));
    assert_memory_equal(before, m->params.data, sizeof(double) * (size_t)n);
    /* ranks outside 0..n_ranks-1: refused, the share unchanged */
    int bad[][2] = {{2, 2}, {-1, 2}, {1, 0}, {1, 1}, {0, -1}, {0, 0}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(rg_trainer_set_share(&tr, bad[i][0], bad[i][1], NULL, NULL), RG_ERR_ARG);
        assert_true(tr.rank == 0 && tr.n_ranks == 2 && tr.reduce_grad == add_other);
    }
    free(before);
    free(g1);
    rg_trainer_free(&tr);
    rg_adamw_free(&ro);
    rg_adamw_free(&mo);
    rg_model_free(ref);
    rg_model_free(m);
    rg_model_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_shares_sum_to_batch),
                                       cmocka_unit_test(test_reduce_callback)};
    return cmocka_run_group_tests(tests, setup, NULL);
}
