/* test_train_script.c: the pieces a user's training script needs, checked against independent computations:
 * rg_model_eval_batch (the loss equals rg_model_loss_backward's training loss; accuracy and per-position counts
 * equal a hand count over the logits of rg_model_forward), rg_trainer_track (rg_train_step advances the run state
 * with AdamW's step; a desynchronized run state is refused), rg_run_state_lr (the schedule), rg_checkpoint_open
 * (model, optimizer and run state back in one call: training continues bit for bit), and the version. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ropegrad.h"

enum { NB = 3, NT = 6 };
static const int LEN[NB] = {6, 4, 5};

static void batch(uint64_t seed, int32_t *tokens, int32_t *targets)
{
    tc_padded_batch(seed, 7, NB, NT, LEN, tokens, targets);
}

static void test_eval_batch(void **state)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_ROPE);
    rg_model *m = tc_model_randn(&cfg, 5, 0.5);
    int32_t tokens[NB * NT], targets[NB * NT];
    batch(11, tokens, targets);
    rg_batch b = {tokens, targets, LEN, NB, NT, NULL, NULL};
    rg_eval_stats es;
    int64_t right[NT] = {0}, count[NT] = {0};
    assert_int_equal(rg_model_eval_batch(m, &b, -100, NULL, &es, right, count), RG_OK);

    /* the loss: the training loss of the same batch (one chunk) */
    rg_ctx *c = rg_ctx_new();
    double train_loss;
    rg_params_zero_grad(&m->params);
    assert_int_equal(rg_model_loss_backward(c, m, tokens, targets, NULL, NB, NT, 1, -100, &train_loss), RG_OK);
    if (fabs(es.loss - train_loss) > 1e-6 * fabs(train_loss))
        fail_msg("eval loss %.9g, training loss %.9g", es.loss, train_loss);
    /* accuracy by hand from the logits: argmax over the vocabulary, ties to the lowest id */
    rg_ctx_reset(c);
    rg_set_grad_enabled(c, false);
    rg_tensor *logits;
    assert_int_equal(rg_model_forward(c, m, tokens, NULL, NB, NT, NULL, &logits), RG_OK);
    int64_t n = 0, k = 0, hand_right[NT] = {0}, hand_count[NT] = {0};
    for (int r = 0; r < NB; r++)
        for (int p = 0; p < LEN[r]; p++) {
            int32_t y = targets[r * NT + p];
            if (y == -100) continue;
            const rg_real *l = logits->data + (int64_t)(r * NT + p) * 7;
            int best = 0;
            for (int v = 1; v < 7; v++)
                if (l[v] > l[best]) best = v;
            n++;
            k += best == y;
            hand_count[p]++;
            hand_right[p] += best == y;
        }
    rg_ctx_free(c);
    assert_true(n > 4);
    assert_int_equal(es.n_targets, n);
    assert_int_equal(es.n_correct, k);
    assert_true(es.token_acc == (double)k / (double)n);
    assert_memory_equal(right, hand_right, sizeof right);
    assert_memory_equal(count, hand_count, sizeof count);
    /* per-position counts accumulate over calls */
    assert_int_equal(rg_model_eval_batch(m, &b, -100, NULL, &es, right, count), RG_OK);
    for (int p = 0; p < NT; p++) assert_int_equal(count[p], 2 * hand_count[p]);
    /* errors */
    targets[0] = 7;
    assert_int_equal(rg_model_eval_batch(m, &b, -100, NULL, &es, NULL, NULL), RG_ERR_ARG);
    assert_true(isnan(es.loss));
    rg_batch empty = {tokens, targets, NULL, 0, NT, NULL, NULL};
    assert_int_equal(rg_model_eval_batch(m, &empty, -100, NULL, &es, NULL, NULL), RG_ERR_ARG);
    rg_model_free(m);
}

static void test_schedule(void **state)
{
    rg_run_state rs;
    rg_run_state_init(&rs);
    rs.lr = (rg_lr_state){0, 1e-3, 10, 100, 0.1, 1.0};
    for (int64_t s = 0; s < 100; s += 7) {
        rs.lr.step = s;
        assert_true(rg_run_state_lr(&rs) == rg_lr_schedule(s, 1e-3, 10, 100, 0.1));
    }
    rs.lr.step = 100;
    assert_true(rg_run_state_lr(&rs) == 1e-3 * 0.1);
    rs.lr.step = 250;
    assert_true(rg_run_state_lr(&rs) == 1e-3 * 0.1);
}

static char tmpdir[64];

/* Steps with a tracked run state, a checkpoint, rg_checkpoint_open, and one more step on both copies. */
static void test_track_and_reopen(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rg_train_script_XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    char path[128];
    snprintf(path, sizeof path, "%s/ckpt.h5", tmpdir);
    rg_model_config cfg = tc_tiny_config(RG_POS_ALIBI);
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 9, &m), RG_OK);
    rg_adamw opt;
    assert_int_equal(rg_adamw_init(&opt, &m->params, 0.9, 0.98, 1e-8, 0.01), RG_OK);
    rg_run_state rs;
    rg_run_state_init(&rs);
    rs.lr = (rg_lr_state){0, 3e-3, 2, 10, 0.1, 1.0};
    rg_trainer tr;
    assert_int_equal(rg_trainer_init(&tr), RG_OK);
    rg_trainer_track(&tr, &rs);
    int32_t tokens[NB * NT], targets[NB * NT];
    rg_step_stats ss;
    for (int s = 0; s < 3; s++) {
        batch(20 + (uint64_t)s, tokens, targets);
        rg_batch b = {tokens, targets, LEN, NB, NT, NULL, NULL};
        rg_step_config sc = {1, rg_run_state_lr(&rs), 1.0, -100, NULL, 0};
        assert_int_equal(rg_train_step(&tr, m, &opt, &b, &sc, &ss), RG_OK);
    }
    assert_int_equal(rs.step, 3);
    assert_int_equal(rs.lr.step, 3);
    assert_int_equal(opt.step, 3);
    assert_int_equal(rg_checkpoint_save(path, m, &opt, &rs), RG_OK);

    rg_model *m2;
    rg_adamw opt2;
    rg_run_state rs2;
    assert_int_equal(rg_checkpoint_open(path, &m2, &opt2, &rs2), RG_OK);
    assert_int_equal(rs2.step, 3);
    assert_int_equal(rs2.lr.step, 3);
    assert_int_equal(opt2.step, 3);
    assert_true(opt2.beta2 == 0.98 && opt2.weight_decay == 0.01);
    int64_t np = m->params.offset[m->params.n_packed];
    assert_memory_equal(m->params.data, m2->params.data, sizeof(rg_real) * (size_t)np);
    /* one more step on both: the same parameters, the same run state */
    rg_trainer tr2;
    assert_int_equal(rg_trainer_init(&tr2), RG_OK);
    rg_trainer_track(&tr2, &rs2);
    batch(30, tokens, targets);
    rg_batch b = {tokens, targets, LEN, NB, NT, NULL, NULL};
    rg_step_config sc = {1, rg_run_state_lr(&rs), 1.0, -100, NULL, 0};
    assert_true(rg_run_state_lr(&rs) == rg_run_state_lr(&rs2));
    assert_int_equal(rg_train_step(&tr, m, &opt, &b, &sc, &ss), RG_OK);
    assert_int_equal(rg_train_step(&tr2, m2, &opt2, &b, &sc, &ss), RG_OK);
    assert_memory_equal(m->params.data, m2->params.data, sizeof(rg_real) * (size_t)np);
    assert_int_equal(rs2.step, 4);

    /* a run state out of step with the optimizer is refused, nothing changed */
    rs2.step = 7;
    rg_real before = m2->params.data[0];
    assert_int_equal(rg_train_step(&tr2, m2, &opt2, &b, &sc, &ss), RG_ERR_ARG);
    if (!strstr(rg_last_error(), "step 7") || !strstr(rg_last_error(), "step 4")) fail_msg("%s", rg_last_error());
    assert_true(m2->params.data[0] == before);
    assert_int_equal(opt2.step, 4);

    /* model only (evaluation), and a missing file */
    rg_model *m3;
    assert_int_equal(rg_checkpoint_open(path, &m3, NULL, NULL), RG_OK);
    rg_model_free(m3);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none.h5", tmpdir);
    m3 = (rg_model *)1;
    rg_adamw_free(&opt2); /* rg_checkpoint_open initializes the optimizer it is given */
    assert_int_equal(rg_checkpoint_open(missing, &m3, &opt2, NULL), RG_ERR_IO);
    assert_null(m3);
    assert_null(opt2.m_block);
    unlink(path);
    rmdir(tmpdir);
    rg_trainer_free(&tr);
    rg_trainer_free(&tr2);
    rg_adamw_free(&opt);
    rg_model_free(m);
    rg_model_free(m2);
}

static void test_version(void **state)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", RG_VERSION_MAJOR, RG_VERSION_MINOR, RG_VERSION_PATCH);
    assert_string_equal(RG_VERSION, want);
    assert_string_equal(rg_version(), RG_VERSION);
    assert_string_equal(rg_build_real(), "float32");
    assert_int_equal(RG_VERSION_NUMBER, RG_VERSION_MAJOR * 10000 + RG_VERSION_MINOR * 100 + RG_VERSION_PATCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_batch),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_track_and_reopen),
        cmocka_unit_test(test_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
