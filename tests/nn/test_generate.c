/* test_generate.c (float32): rg_generate and rg_evaluate (src/nn/generate.c).
 *   - for every position encoding, start positions 0 and 7, and 5 prompts in batches of 2 (a short last batch of 1):
 *     every generated token is the argmax (within 1e-4 of the largest logit) of a full forward without cache over
 *     the prompt and the tokens generated so far, at positions start, start+1, ...; the check fails when the
 *     positions are wrong (a control run decodes from start 0 and is checked against start 7, learned positions);
 *   - batch sizes 1, 2, 5 and 64 give the same tokens;
 *   - explicit positions, every encoding: 0..P+G-1 in every row equals NULL bit for bit; per-row sorted random
 *     subsets of [0, 24) (as rg_random_positions draws for +rand training) are greedy under a cache-free full forward
 *     at those positions, for batches 2, 1 and 64 alike (control: tokens decoded at 0.. fail the check at the sparse
 *     positions with learned positions);
 *   - rg_evaluate: 1/1 on its own output, 4/5 exact and 29/30 tokens after one token of one row is changed;
 *   - errors: sizes < 1, start < 0, positions past the learned table; explicit positions with start != 0, < 0,
 *     >= RG_MAX_POSITION (the last, never-read one too), or past the learned table. */
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 5, P = 5, G = 6 };

/* A small model whose logits are well apart (lm_head scaled up), so that argmax is a sharp check. */
static rg_model *small_model(rg_pos_kind pos)
{
    rg_model_config cfg = rg_model_config_default();
    cfg.d_model = 32;
    cfg.n_heads = 2;
    cfg.d_ff = 64;
    cfg.max_len = 24;
    cfg.pos = pos;
    rg_model *m;
    assert_int_equal(rg_model_new(&cfg, 3, &m), RG_OK);
    for (int64_t i = 0; i < m->lm_head->numel; i++) m->lm_head->data[i] *= 30;
    return m;
}

static void prompts_of(int32_t *p)
{
    rg_rng r;
    rg_rng_seed(&r, 11, 0);
    for (int i = 0; i < N * P; i++) p[i] = (int32_t)rg_rng_below(&r, 30);
}

/* Sparse positions: row b gets its own sorted random subset of [0, 24) (24 = max_len, so learned positions hold). */
static void sparse_positions_of(int32_t *pos)
{
    rg_rng r;
    rg_rng_seed(&r, 12, 0);
    rg_random_positions(&r, N, P + G, 24, pos);
}

/* Row b of out is greedy under a full forward at positions start.. (or row b of positions [N, P + G] if not NULL):
 * returns the worst gap between the largest logit and the chosen token's logit over all rows and steps. */
static double worst_gap(rg_model *m, const int32_t *prompts, const int32_t *out, int start, const int32_t *positions)
{
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    double worst = 0;
    for (int b = 0; b < N; b++) {
        int32_t seq[P + G], pos[P + G];
        memcpy(seq, prompts + b * P, sizeof(int32_t) * P);
        memcpy(seq + P, out + b * G, sizeof(int32_t) * G);
        for (int t = 0; t < P + G; t++) pos[t] = positions ? positions[b * (P + G) + t] : start + t;
        for (int j = 0; j < G; j++) {
            rg_tensor *logits;
            rg_ctx_reset(c);
            assert_int_equal(rg_model_forward(c, m, seq, pos, 1, P + j, NULL, &logits), RG_OK);
            const rg_real *last = logits->data + (int64_t)(P + j - 1) * 30;
            double mx = last[0];
            for (int v = 1; v < 30; v++) mx = last[v] > mx ? last[v] : mx;
            worst = tc_max(worst, mx - last[out[b * G + j]]);
        }
    }
    rg_ctx_free(c);
    return worst;
}

static void test_generate_is_greedy_for_every_encoding(void **state)
{
    int32_t prompts[N * P], out[N * G], again[N * G];
    prompts_of(prompts);
    for (int p = 0; p < rg_pos_count(); p++) {
        rg_model *m = small_model((rg_pos_kind)p);
        for (int start = 0; start <= 7; start += 7) {
            assert_int_equal(rg_generate(m, prompts, N, P, G, start, NULL, 2, out), RG_OK);
            double gap = worst_gap(m, prompts, out, start, NULL);
            if (!(gap <= 1e-4)) fail_msg("%s start %d: a generated token is %g below the argmax logit",
                                         rg_pos_name((rg_pos_kind)p), start, gap);
            int batches[] = {1, 5, 64};
            for (int i = 0; i < 3; i++) {
                assert_int_equal(rg_generate(m, prompts, N, P, G, start, NULL, batches[i], again), RG_OK);
                if (memcmp(out, again, sizeof out)) fail_msg("%s: batch %d differs from batch 2",
                                                            rg_pos_name((rg_pos_kind)p), batches[i]);
            }
        }
        rg_model_free(m);
    }
}

/* Explicit positions: 0..P+G-1 in every row gives the tokens of NULL bit for bit; a sorted random subset of
 * [0, 24) per row gives tokens that are greedy under a cache-free full forward at those positions, in batches of 2
 * (a short last batch), 1 and 64 alike. */
static void test_explicit_positions_for_every_encoding(void **state)
{
    int32_t prompts[N * P], out[N * G], again[N * G], consecutive[N * (P + G)], sparse[N * (P + G)];
    prompts_of(prompts);
    sparse_positions_of(sparse);
    for (int b = 0; b < N; b++)
        for (int t = 0; t < P + G; t++) consecutive[b * (P + G) + t] = t;
    for (int p = 0; p < rg_pos_count(); p++) {
        const char *name = rg_pos_name((rg_pos_kind)p);
        rg_model *m = small_model((rg_pos_kind)p);
        assert_int_equal(rg_generate(m, prompts, N, P, G, 0, NULL, 2, out), RG_OK);
        assert_int_equal(rg_generate(m, prompts, N, P, G, 0, consecutive, 2, again), RG_OK);
        if (memcmp(out, again, sizeof out)) fail_msg("%s: explicit positions 0.. differ from NULL", name);
        assert_int_equal(rg_generate(m, prompts, N, P, G, 0, sparse, 2, out), RG_OK);
        double gap = worst_gap(m, prompts, out, 0, sparse);
        if (!(gap <= 1e-4)) fail_msg("%s sparse positions: a generated token is %g below the argmax logit", name, gap);
        int batches[] = {1, 64};
        for (int i = 0; i < 2; i++) {
            assert_int_equal(rg_generate(m, prompts, N, P, G, 0, sparse, batches[i], again), RG_OK);
            if (memcmp(out, again, sizeof out)) fail_msg("%s sparse: batch %d differs from batch 2", name, batches[i]);
        }
        rg_model_free(m);
    }
}

/* The check above can fail: tokens decoded from start 0 are not greedy at positions 7.. with learned (absolute)
 * positions. (RoPE, ALiBi, T5 and XL see only relative positions, so a shift leaves their logits unchanged.) */
static void test_wrong_positions_are_detected(void **state)
{
    int32_t prompts[N * P], out[N * G];
    prompts_of(prompts);
    rg_model *m = small_model(RG_POS_LEARNED);
    assert_int_equal(rg_generate(m, prompts, N, P, G, 0, NULL, 2, out), RG_OK);
    double gap = worst_gap(m, prompts, out, 7, NULL);
    print_message("learned: tokens decoded at positions 0.. are up to %.3g below the argmax at positions 7..\n", gap);
    assert_true(gap > 1e-2);
    int32_t sparse[N * (P + G)];
    sparse_positions_of(sparse);
    gap = worst_gap(m, prompts, out, 0, sparse);
    print_message("learned: tokens decoded at positions 0.. are up to %.3g below the argmax at sparse positions\n", gap);
    assert_true(gap > 1e-2);
    rg_model_free(m);
}

static void test_evaluate_scores(void **state)
{
    int32_t prompts[N * P], out[N * G];
    prompts_of(prompts);
    rg_model *m = small_model(RG_POS_ALIBI);
    assert_int_equal(rg_generate(m, prompts, N, P, G, 0, NULL, 2, out), RG_OK);
    double em, acc;
    assert_int_equal(rg_evaluate(m, prompts, out, N, P, G, 0, NULL, 2, &em, &acc), RG_OK);
    assert_true(em == 1 && acc == 1);
    out[3 * G + 2] = (out[3 * G + 2] + 1) % 30;
    assert_int_equal(rg_evaluate(m, prompts, out, N, P, G, 0, NULL, 3, &em, &acc), RG_OK);
    assert_true(fabs(em - 4.0 / 5) < 1e-15 && fabs(acc - 29.0 / 30) < 1e-15);
    rg_model_free(m);
}

static void test_errors(void **state)
{
    int32_t prompts[N * P], out[N * G];
    prompts_of(prompts);
    rg_model *m = small_model(RG_POS_LEARNED);
    double em, acc;
    assert_int_equal(rg_generate(m, prompts, 0, P, G, 0, NULL, 2, out), RG_ERR_ARG);
    assert_int_equal(rg_generate(m, prompts, N, 0, G, 0, NULL, 2, out), RG_ERR_ARG);
    assert_int_equal(rg_generate(m, prompts, N, P, 0, 0, NULL, 2, out), RG_ERR_ARG);
    assert_int_equal(rg_generate(m, prompts, N, P, G, -1, NULL, 2, out), RG_ERR_ARG);
    assert_int_equal(rg_generate(m, prompts, N, P, G, 0, NULL, 0, out), RG_ERR_ARG);
    /* max_len 24: the model reads positions start .. start + P + G - 2 (the last token is never fed back) */
    assert_int_equal(rg_generate(m, prompts, N, P, G, 15, NULL, 2, out), RG_ERR_ARG);
    assert_int_equal(rg_evaluate(m, prompts, out, N, P, G, 15, NULL, 2, &em, &acc), RG_ERR_ARG);
    assert_true(isnan(em) && isnan(acc));
    assert_int_equal(rg_generate(m, prompts, N, P, G, 14, NULL, 2, out), RG_OK);
    /* explicit positions: start must be 0, each in [0, RG_MAX_POSITION), learned ones inside the table */
    int32_t pos[N * (P + G)];
    sparse_positions_of(pos);
    assert_int_equal(rg_generate(m, prompts, N, P, G, 1, pos, 2, out), RG_ERR_ARG);
    pos[3 * (P + G) + P + G - 1] = -1; /* even the last position, never read, is checked */
    assert_int_equal(rg_generate(m, prompts, N, P, G, 0, pos, 2, out), RG_ERR_ARG);
    pos[3 * (P + G) + P + G - 1] = RG_MAX_POSITION;
    assert_int_equal(rg_evaluate(m, prompts, out, N, P, G, 0, pos, 2, &em, &acc), RG_ERR_ARG);
    assert_true(isnan(em) && isnan(acc));
    pos[3 * (P + G) + P + G - 1] = 23;
    pos[4 * (P + G) + 2] = 24; /* past the learned table of max_len 24 (rg_model_forward's error) */
    assert_int_equal(rg_generate(m, prompts, N, P, G, 0, pos, 2, out), RG_ERR_ARG);
    pos[4 * (P + G) + 2] = 23;
    assert_int_equal(rg_generate(m, prompts, N, P, G, 0, pos, 2, out), RG_OK);
    rg_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate_is_greedy_for_every_encoding),
        cmocka_unit_test(test_explicit_positions_for_every_encoding),
        cmocka_unit_test(test_wrong_positions_are_detected),
        cmocka_unit_test(test_evaluate_scores),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
