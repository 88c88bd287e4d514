/* test_task_registry.c: the task registry of src/task (registry.c): the ordering tasks are its first three
 * descriptors and the descriptor path gives exactly what their own functions give (draws, evaluation sets, streams);
 * registration errors (a table); a registered toy task's batches laid out by hand from the same draws, its sets
 * from a seed, its stream; hooks that break their contract (a token out of range, a score out of range, lengths
 * that shrink) are refused with messages naming the task. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/task.h"

#define IGN RG_TASK_IGNORE

static void assert_err_contains(const char *needle)
{
    if (!strstr(rg_last_error(), needle)) fail_msg("error message '%s' lacks '%s'", rg_last_error(), needle);
}

static void test_builtin_descriptors(void **state)
{
    const rg_task_desc *want[] = {&rg_task_desc_copy, &rg_task_desc_reverse, &rg_task_desc_sort};
    assert_true(rg_task_count() >= RG_TASK_BUILTIN);
    for (int t = 0; t < RG_TASK_BUILTIN; t++) {
        assert_ptr_equal(rg_task_get(t), want[t]);
        rg_task k = -1;
        assert_int_equal(rg_task_parse(want[t]->name, &k), RG_OK);
        assert_int_equal(k, t);
        assert_int_equal(want[t]->vocab_size, RG_TASK_VOCAB);
        for (int n = 1; n <= 64; n += 21) {
            assert_int_equal(rg_task_prompt_len(t, n), n + 2);
            assert_int_equal(rg_task_target_len(t, n), n + 1);
            assert_int_equal(rg_task_total_len(t, n), rg_task_seq_len(n));
            assert_true(rg_task_stream(t, n) == rg_eval_stream(t, n));
            assert_true(rg_task_batch_cap_of(t, 5, n) == rg_task_batch_cap(5, n));
        }
    }
    assert_null(rg_task_get(-1));
    assert_null(rg_task_get(RG_TASK_MAX));
    assert_int_equal(rg_task_prompt_len(RG_TASK_MAX, 4), -1);
    assert_int_equal(rg_task_prompt_len(RG_TASK_COPY, 0), -1);
}

/* rg_task_draw of an ordering task = rg_task_sample + rg_task_prompt + rg_task_expected, with the same draws. */
static void test_draw_equals_ordering_functions(void **state)
{
    for (int t = 0; t < RG_TASK_BUILTIN; t++)
        for (int n = 1; n <= 40; n += 13) {
            rg_rng a, b;
            rg_rng_seed(&a, 7, 100 + (uint64_t)n);
            b = a;
            int32_t p1[64], g1[64], x[64], y[64], p2[64], g2[64];
            assert_int_equal(rg_task_draw(t, &a, n, p1, g1), RG_OK);
            assert_int_equal(rg_task_sample(t, &b, n, x, y), RG_OK);
            assert_int_equal(rg_task_prompt(x, n, p2), RG_OK);
            assert_int_equal(rg_task_expected(t, x, n, g2), RG_OK);
            assert_memory_equal(p1, p2, sizeof(int32_t) * (n + 2));
            assert_memory_equal(g1, g2, sizeof(int32_t) * (n + 1));
            assert_true(rg_rng_u32(&a) == rg_rng_u32(&b)); /* the same number of draws */
        }
}

/* rg_task_evalset from RG_EVAL_SEED = rg_evalset_make (the file's sets), with prompt and expected laid out. */
static void test_evalset_from_seed(void **state)
{
    for (int t = 0; t < RG_TASK_BUILTIN; t++) {
        int n = 8, count = 20;
        rg_evalset e;
        assert_int_equal(rg_task_evalset(t, n, count, RG_EVAL_SEED, &e), RG_OK);
        int32_t x[20 * 8], y[20 * 8];
        assert_int_equal(rg_evalset_make(t, n, count, x, y), RG_OK);
        assert_memory_equal(e.x, x, sizeof x);
        assert_memory_equal(e.y, y, sizeof y);
        assert_int_equal(e.prompt_len, n + 2);
        assert_int_equal(e.target_len, n + 1);
        for (int i = 0; i < count; i++) {
            const int32_t *p = e.prompt + i * (n + 2), *g = e.expected + i * (n + 1);
            assert_int_equal(p[0], RG_TOK_BOS);
            assert_memory_equal(p + 1, x + i * n, sizeof(int32_t) * n);
            assert_int_equal(p[n + 1], RG_TOK_SEP);
            assert_memory_equal(g, y + i * n, sizeof(int32_t) * n);
            assert_int_equal(g[n], RG_TOK_EOS);
        }
        rg_evalset_free(&e);
        assert_null(e.prompt);
    }
    rg_evalset e;
    assert_int_equal(rg_task_evalset(RG_TASK_MAX, 8, 4, 1, &e), RG_ERR_ARG);
    assert_int_equal(rg_task_evalset(RG_TASK_COPY, 8, 0, 1, &e), RG_ERR_ARG);
}

/* ------------------------------------------------------------------ a toy task: the first symbol of n */

enum { TOY_VOCAB = 12 };
static int toy_prompt_len(int n) { return n + 1; }
static int toy_target_len(int n) { return 1; }
static rg_status toy_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    prompt[0] = RG_TOK_BOS;
    for (int j = 1; j <= n; j++) prompt[j] = 4 + (int32_t)rg_rng_below(rng, TOY_VOCAB - 4);
    target[0] = prompt[1];
    return RG_OK;
}
static const rg_task_desc toy = {"first", "the first symbol", TOY_VOCAB, toy_prompt_len, toy_target_len, toy_sample,
                                 NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0};

static rg_status bad_token_sample(const rg_task_desc *t, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    toy_sample(t, rng, n, prompt, target);
    target[0] = TOY_VOCAB; /* one past the vocabulary */
    return RG_OK;
}
static int bad_score(const rg_task_desc *t, int n, const int32_t *p, const int32_t *g, const int32_t *e) { return 2; }
static int shrinking_prompt_len(int n) { return n < 3 ? 10 : n + 1; }
static int zero_len(int n) { return 0; }

static void test_register_errors(void **state)
{
    static const rg_task_desc bad[] = {
        {"", "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {NULL, "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"Upper", "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"has-dash", "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"all", "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"copy", "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"a_name_of_thirty_two_characters_", "", 10, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"nohook", "", 10, toy_prompt_len, toy_target_len, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"nolen", "", 10, NULL, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"tinyvocab", "", 1, toy_prompt_len, toy_target_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
        {"zerolen", "", 10, toy_prompt_len, zero_len, toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0},
    };
    int before = rg_task_count();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rg_task id = -7;
        if (rg_task_register(&bad[i], &id) != RG_ERR_ARG) fail_msg("bad descriptor %zu was registered", i);
        assert_int_equal(id, -7);
        assert_err_contains("rg_task_register");
    }
    assert_int_equal(rg_task_register(NULL, NULL), RG_ERR_ARG);
    assert_int_equal(rg_task_count(), before);
}

static void test_registered_task(void **state)
{
    rg_task id, again;
    assert_int_equal(rg_task_register(&toy, &id), RG_OK);
    assert_true(id >= RG_TASK_BUILTIN);
    assert_int_equal(rg_task_register(&toy, &again), RG_OK); /* the same descriptor: the same index */
    assert_int_equal(again, id);
    rg_task k;
    assert_int_equal(rg_task_parse("first", &k), RG_OK);
    assert_int_equal(k, id);
    assert_string_equal(rg_task_name(id), "first");
    /* not an ordering task: the content/target functions refuse its id and point to the descriptor's path */
    int32_t x[4] = {4, 5, 6, 7}, y[4];
    assert_int_equal(rg_task_targets(id, x, 4, y), RG_ERR_ARG);
    char want[64];
    snprintf(want, sizeof want, "task %d is not an ordering task", (int)id);
    assert_err_contains(want);
    assert_err_contains("rg_task_draw");
    /* its stream: from its name, not its index; distinct from every ordering task's */
    assert_true(rg_task_stream(id, 8) > 1000u * (1ull << 20));
    assert_true(rg_task_stream(id, 8) != rg_task_stream(id, 9));

    /* a batch, laid out by hand from the same draws: row = BOS x_1..x_n (the target's last token is not input),
       targets IGN.. then x_1 at position n (the last prompt token predicts the target), IGN padding */
    int B = 3, L = 5;
    rg_task_batch b;
    assert_int_equal(rg_task_batch_alloc_for(&b, id, B, L), RG_OK);
    assert_true(b.cap == rg_task_batch_cap_of(id, B, L));
    assert_true(b.cap == (int64_t)B * (L + 1));
    rg_rng r, mirror;
    rg_rng_seed(&r, 3, 4);
    mirror = r;
    assert_int_equal(rg_task_batch_sample(&b, id, &r, B, L), RG_OK);
    int32_t p[3][8], g[3][1], n[3], T = 0;
    for (int i = 0; i < B; i++) {
        n[i] = 1 + (int)rg_rng_below(&mirror, (uint32_t)L);
        toy_sample(&toy, &mirror, n[i], p[i], g[i]);
        if (n[i] + 1 > T) T = n[i] + 1;
    }
    assert_int_equal(b.T, T);
    assert_int_equal(b.n_loss, B);
    for (int i = 0; i < B; i++) {
        assert_int_equal(b.n[i], n[i]);
        assert_int_equal(b.len[i], n[i] + 1);
        for (int q = 0; q < T; q++) {
            int32_t tok = q <= n[i] ? p[i][q] : RG_TOK_PAD, tgt = q == n[i] ? g[i][0] : IGN;
            if (b.tokens[i * T + q] != tok || b.targets[i * T + q] != tgt)
                fail_msg("row %d position %d: token %d target %d, want %d %d", i, q, b.tokens[i * T + q],
                         b.targets[i * T + q], tok, tgt);
        }
    }
    rg_task_batch_free(&b);

    /* its evaluation set: draws from (seed, its stream); no x/y */
    rg_evalset e;
    assert_int_equal(rg_task_evalset(id, 6, 5, 99, &e), RG_OK);
    assert_null(e.x);
    rg_rng_seed(&mirror, 99, rg_task_stream(id, 6));
    for (int i = 0; i < 5; i++) {
        int32_t pp[7], gg[1];
        toy_sample(&toy, &mirror, 6, pp, gg);
        assert_memory_equal(e.prompt + i * 7, pp, sizeof pp);
        assert_int_equal(e.expected[i], gg[0]);
    }
    /* scoring without a hook: token equality */
    rg_task_score s = {0};
    int32_t gen[5];
    memcpy(gen, e.expected, sizeof gen);
    gen[0] = gen[0] == 4 ? 5 : 4;
    assert_int_equal(rg_task_score_rows(id, 6, &s, e.prompt, gen, e.expected, 5), RG_OK);
    assert_int_equal(s.samples, 5);
    assert_int_equal(s.exact, 4);
    assert_int_equal(s.correct, 4);
    rg_evalset_free(&e);
}

static void test_broken_hooks(void **state)
{
    static const rg_task_desc bad_token = {"badtoken", "", TOY_VOCAB, toy_prompt_len, toy_target_len,
                                           bad_token_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL,
                                           NULL, 0, 0};
    static const rg_task_desc bad_scorer = {"badscore", "", TOY_VOCAB, toy_prompt_len, toy_target_len, toy_sample,
                                            bad_score, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0};
    static const rg_task_desc shrinking = {"shrinking", "", TOY_VOCAB, shrinking_prompt_len, toy_target_len,
                                           toy_sample, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 0};
    rg_task a, b, c;
    assert_int_equal(rg_task_register(&bad_token, &a), RG_OK);
    assert_int_equal(rg_task_register(&bad_scorer, &b), RG_OK);
    assert_int_equal(rg_task_register(&shrinking, &c), RG_OK);
    rg_rng r;
    rg_rng_seed(&r, 1, 1);
    int32_t p[16], g[16];
    assert_int_equal(rg_task_draw(a, &r, 4, p, g), RG_ERR_FORMAT);
    assert_err_contains("task 'badtoken' n=4: its sample hook wrote target[0] = 12, outside its tokens 1..11");
    rg_evalset e;
    assert_int_equal(rg_task_evalset(a, 4, 3, 1, &e), RG_ERR_FORMAT);
    assert_null(e.prompt);
    assert_int_equal(rg_task_evalset(b, 4, 2, 1, &e), RG_OK);
    rg_task_score s = {0};
    assert_int_equal(rg_task_score_rows(b, 4, &s, e.prompt, e.expected, e.expected, 2), RG_ERR_FORMAT);
    assert_err_contains("'badscore'");
    rg_evalset_free(&e);
    rg_task_batch bt;
    assert_int_equal(rg_task_batch_alloc_for(&bt, c, 64, 4), RG_OK);
    rg_status st = RG_OK;
    for (int k = 0; k < 8 && st == RG_OK; k++) st = rg_task_batch_sample(&bt, c, &r, 64, 4); /* some n < 3 */
    assert_int_equal(st, RG_ERR_ARG);
    assert_err_contains("must not decrease");
    rg_task_batch_free(&bt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_descriptors),
        cmocka_unit_test(test_draw_equals_ordering_functions),
        cmocka_unit_test(test_evalset_from_seed),
        cmocka_unit_test(test_register_errors),
        cmocka_unit_test(test_registered_task),
        cmocka_unit_test(test_broken_hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
