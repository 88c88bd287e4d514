/* test_lm.c: the language-modelling tasks and evaluation of src/task/lm.h on known sequences: the windows of the
 * chunked and sliding-window evaluation written out by hand (which targets are scored, each exactly once, with
 * which context), their refusals, the NLL of rg_lm_evaluate equal to a separate forward of each scored token's exact
 * context (so the accounting, not just the arithmetic, is checked), the per-position counts, the synthetic
 * language's determinism and range, the byte rule of lm_en, and the LM task's training rows (n = L_train, a
 * contiguous corpus window). */
#include "common.h"

#include <math.h>
#include <string.h>

#include "task/lm.h"

typedef struct { int E, stride; rg_lm_method m; int count; rg_lm_window w[6]; } window_case;

/* N = 13 tokens: W = floor(12 / E) windows, targets tok[1..W E] scored. */
static const window_case window_cases[] = {
    {4, 4, RG_LM_CHUNKS, 3, {{0, 4, 0}, {4, 4, 0}, {8, 4, 0}}},
    {5, 5, RG_LM_CHUNKS, 2, {{0, 5, 0}, {5, 5, 0}}},                        /* targets 1..10; 11, 12 not scored */
    {4, 2, RG_LM_SLIDING, 5, {{0, 4, 0}, {2, 4, 2}, {4, 4, 2}, {6, 4, 2}, {8, 4, 2}}},
    {4, 1, RG_LM_SLIDING, 6, {{0, 4, 0}, {1, 4, 3}, {2, 4, 3}, {3, 4, 3}, {4, 4, 3}, {5, 4, 3}}}, /* first 6 of 9 */
    {6, 3, RG_LM_SLIDING, 3, {{0, 6, 0}, {3, 6, 3}, {6, 6, 3}}},
    {12, 12, RG_LM_CHUNKS, 1, {{0, 12, 0}}},
};

static void test_windows(void **state)
{
    for (size_t i = 0; i < sizeof window_cases / sizeof *window_cases; i++) {
        const window_case *c = &window_cases[i];
        rg_lm_window w[16];
        int64_t n = rg_lm_windows(13, c->E, c->m, c->stride, w, 16);
        if (n != (c->m == RG_LM_SLIDING && c->stride == 1 ? 9 : c->count))
            fail_msg("case %zu: %lld windows", i, (long long)n);
        for (int k = 0; k < c->count; k++)
            if (w[k].start != c->w[k].start || w[k].len != c->w[k].len || w[k].score_from != c->w[k].score_from)
                fail_msg("case %zu window %d: (%lld, %d, %d)", i, k, (long long)w[k].start, w[k].len, w[k].score_from);
        /* every target 1..M exactly once, none past M */
        int scored[14] = {0}, M = (12 / c->E) * c->E;
        for (int k = 0; k < n; k++)
            for (int j = w[k].score_from; j < w[k].len; j++) scored[w[k].start + j + 1]++;
        for (int t = 0; t < 14; t++)
            if (scored[t] != (t >= 1 && t <= M)) fail_msg("case %zu: target %d scored %d times", i, t, scored[t]);
    }
    rg_lm_window w[4];
    assert_int_equal(rg_lm_windows(13, 4, RG_LM_SLIDING, 3, NULL, 0), -1); /* 3 does not divide 4 */
    assert_int_equal(rg_lm_windows(13, 4, RG_LM_SLIDING, 0, NULL, 0), -1);
    assert_int_equal(rg_lm_windows(4, 4, RG_LM_CHUNKS, 4, NULL, 0), -1);   /* N < E + 1 */
    assert_int_equal(rg_lm_windows(13, 4, RG_LM_CHUNKS, 4, w, 2), -1);     /* room for 2 of 3 */
    assert_int_equal(rg_lm_windows(13, 0, RG_LM_CHUNKS, 0, NULL, 0), -1);
}

/* -log p(tok[i] | tok[a..i)) by a forward of exactly that context. */
static double nll_of_context(rg_model *m, const int32_t *tok, int a, int i)
{
    rg_ctx *c = rg_ctx_new();
    rg_set_grad_enabled(c, false);
    rg_tensor *logits;
    assert_int_equal(rg_model_forward(c, m, tok + a, NULL, 1, i - a, NULL, &logits), RG_OK);
    const int V = m->cfg.vocab_size;
    const rg_real *z = logits->data + (int64_t)(i - a - 1) * V;
    double mx = z[0], s = 0;
    for (int v = 1; v < V; v++) mx = fmax(mx, z[v]);
    for (int v = 0; v < V; v++) s += exp(z[v] - mx);
    double r = mx + log(s) - z[tok[i]];
    rg_ctx_free(c);
    return r;
}

/* The windows' NLL equals the sum over scored targets i of a forward of the context the window gives i:
 * tok[start .. i) (chunks: from the chunk's start; sliding: the window's start, i.e. E-S+1..E tokens). */
static void test_nll_accounting(void **state)
{
    rg_model_config cfg = tc_tiny_config(RG_POS_ROPE);
    cfg.max_len = 32;
    rg_model *m = tc_model_randn(&cfg, 21, 0.4);
    int32_t tok[13];
    rg_rng r;
    rg_rng_seed(&r, 5, 0);
    for (int i = 0; i < 13; i++) tok[i] = (int32_t)rg_rng_below(&r, (uint32_t)cfg.vocab_size);
    for (size_t i = 0; i < sizeof window_cases / sizeof *window_cases; i++) {
        const window_case *c = &window_cases[i];
        double pos_nll[12] = {0};
        int64_t pos_n[12] = {0};
        rg_lm_score s = {0, 0, pos_nll, pos_n};
        assert_int_equal(rg_lm_evaluate(m, tok, 13, c->E, c->m, c->stride, 2, &s), RG_OK);
        rg_lm_window w[16];
        int64_t n = rg_lm_windows(13, c->E, c->m, c->stride, w, 16);
        double want = 0, want_pos[12] = {0};
        int64_t want_n[12] = {0}, count = 0;
        for (int k = 0; k < n; k++)
            for (int j = w[k].score_from; j < w[k].len; j++) {
                double l = nll_of_context(m, tok, (int)w[k].start, (int)w[k].start + j + 1);
                want += l;
                want_pos[j] += l;
                want_n[j]++;
                count++;
            }
        assert_int_equal(s.scored, count);
        if (fabs(s.nll - want) > 1e-4 * fabs(want)) fail_msg("case %zu: nll %.8g, want %.8g", i, s.nll, want);
        for (int j = 0; j < c->E; j++) {
            assert_int_equal(pos_n[j], want_n[j]);
            if (fabs(pos_nll[j] - want_pos[j]) > 1e-4 * (1 + fabs(want_pos[j]))) fail_msg("case %zu offset %d", i, j);
        }
        assert_true(fabs(rg_lm_perplexity(&s) - exp(want / (double)count)) < 1e-3 * exp(want / (double)count));
    }
    /* chunks: offset j always has context j + 1, so pos_n is one per chunk at every offset */
    rg_lm_score e = {0};
    assert_int_equal(rg_lm_evaluate(m, tok, 13, 20, RG_LM_CHUNKS, 20, 2, &e), RG_ERR_ARG); /* N < E + 1 */
    rg_model_free(m);
}

static void test_synthetic_and_bytes(void **state)
{
    enum { N = 4096 };
    static int32_t a[N], b[N], v[N];
    assert_int_equal(rg_lm_synth_generate(RG_LM_SYNTH_SEED, 1, N, a), RG_OK);
    assert_int_equal(rg_lm_synth_generate(RG_LM_SYNTH_SEED, 1, N, b), RG_OK);
    assert_int_equal(rg_lm_synth_generate(RG_LM_SYNTH_SEED, 2, N, v), RG_OK);
    assert_memory_equal(a, b, sizeof a);
    int same = 0;
    static unsigned char trigram[26 * 26 * 26];
    for (int i = 0; i < N; i++) {
        assert_true(a[i] >= RG_TOK_SYM0 && a[i] < RG_TOK_SYM0 + 26);
        same += a[i] == v[i];
        if (i >= 2) trigram[((a[i - 2] - RG_TOK_SYM0) * 26 + a[i - 1] - RG_TOK_SYM0) * 26 + a[i] - RG_TOK_SYM0] = 1;
    }
    assert_true(same < N / 8); /* the validation stream is another text */
    /* sparse: each context (a, b) has 3 successors in the chain, so at most 26 * 26 * 3 distinct trigrams, plus two
     * at each copied span's start (about N / 24 spans; N / 8 allowed); a uniform text of N would show ~3600 */
    int distinct = 0;
    for (int i = 0; i < 26 * 26 * 26; i++) distinct += trigram[i];
    if (distinct > 26 * 26 * 3 + N / 8) fail_msg("%d distinct trigrams", distinct);
    assert_int_equal(rg_lm_synth_generate(RG_LM_SYNTH_SEED, 3, N, a), RG_ERR_ARG);
    assert_int_equal(rg_lm_synth_generate(RG_LM_SYNTH_SEED, 1, 1, a), RG_ERR_ARG);
    assert_int_equal(rg_lm_byte_token('a'), 97);
    assert_int_equal(rg_lm_byte_token('\n'), 10);
    assert_int_equal(rg_lm_byte_token(0), 127);
    assert_int_equal(rg_lm_byte_token(127), 127);
    assert_int_equal(rg_lm_byte_token(0xc3), 127);
}

/* Training rows of lm: every row n = L_train, the target the corpus tokens after the prompt's. */
static void test_lm_task_rows(void **state)
{
    assert_int_equal(rg_lm_register(), RG_OK);
    rg_task t;
    assert_int_equal(rg_task_parse("lm", &t), RG_OK);
    const rg_lm_corpus *c = rg_lm_corpus_of(t);
    assert_non_null(c);
    assert_int_equal(c->n_train, RG_LM_SYNTH_TRAIN);
    assert_int_equal(rg_lm_corpus_of(RG_TASK_COPY) == NULL, 1);
    rg_task_batch b;
    assert_int_equal(rg_task_batch_alloc_for(&b, t, 4, 16), RG_OK);
    rg_rng rng;
    rg_rng_seed(&rng, 2, 1);
    assert_int_equal(rg_task_batch_sample(&b, t, &rng, 4, 16), RG_OK);
    assert_int_equal(b.T, 16);
    assert_int_equal(b.n_loss, 4 * 16);
    for (int r = 0; r < 4; r++) {
        assert_int_equal(b.n[r], 16);
        const int32_t *tok = b.tokens + r * 16, *tgt = b.targets + r * 16;
        for (int p = 0; p + 1 < 16; p++) assert_int_equal(tgt[p], tok[p + 1]);
        /* the row is a window of the training text */
        int found = 0;
        for (int64_t s = 0; s + 17 <= c->n_train && !found; s++)
            found = memcmp(c->train + s, tok, 16 * sizeof *tok) == 0 && c->train[s + 16] == tgt[15];
        assert_true(found);
    }
    rg_task_batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_nll_accounting),
        cmocka_unit_test(test_synthetic_and_bytes),
        cmocka_unit_test(test_lm_task_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
