/* test_task.c: the ordering tasks of src/task: vocabulary and names, the sequence layout of each task, the training
 * batch (tokens, targets, ignored positions, padding, sampling order, buffer checks), the evaluation prompt /
 * expected continuation and scoring, and the canonical evaluation file data/eval_sets.h5 (loader errors, and the
 * committed file equals a fresh generation by rg_evalset_generate, the function tools/gen_data calls).
 *
 * Expected layouts and scores are written out by hand. The pinned first rows of data/eval_sets.h5 were computed by
 * an independent Python implementation of PCG32 following docs/data.md (not by this library). */
#include "common.h"

#include <dirent.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "task/task.h"

#define RG_EVAL_PATH "data/eval_sets.h5" /* the committed file (tests run from the repository root) */

#define IGN RG_TASK_IGNORE

/* Tokens from a string of a..z (content symbols) and ^ | $ _ (BOS SEP EOS PAD). */
static int toks(const char *s, int32_t *out)
{
    int n = 0;
    for (; *s; s++, n++) {
        switch (*s) {
        case '^': out[n] = RG_TOK_BOS; break;
        case '|': out[n] = RG_TOK_SEP; break;
        case '$': out[n] = RG_TOK_EOS; break;
        case '_': out[n] = RG_TOK_PAD; break;
        default: out[n] = RG_TOK_SYM0 + (*s - 'a'); break;
        }
    }
    return n;
}

static void assert_ints(const char *what, const int32_t *got, const int32_t *want, int n)
{
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("%s[%d]: got %d, want %d", what, i, (int)got[i], (int)want[i]);
}

static void assert_err_contains(const char *needle)
{
    if (!strstr(rg_last_error(), needle)) fail_msg("error message '%s' lacks '%s'", rg_last_error(), needle);
}

/* ------------------------------------------------------------------ vocabulary, names */

static void test_vocab_and_names(void **state)
{
    (void)state;
    assert_int_equal(RG_TOK_PAD, 0);
    assert_int_equal(RG_TOK_BOS, 1);
    assert_int_equal(RG_TOK_SEP, 2);
    assert_int_equal(RG_TOK_EOS, 3);
    assert_int_equal(RG_TOK_SYM0, 4);
    assert_int_equal(RG_TASK_NSYM, 26);
    assert_int_equal(RG_TASK_VOCAB, 30);
    assert_int_equal(RG_TASK_IGNORE, -100);
    assert_int_equal(rg_task_token_char(4), 'a');
    assert_int_equal(rg_task_token_char(29), 'z');
    assert_int_equal(rg_task_token_char(30), '?');
    assert_int_equal(rg_task_token_char(-100), '?');
    int32_t t[16];
    int n = toks("^zab|baz$__", t);
    char buf[32];
    assert_int_equal(rg_task_format(t, n, buf, sizeof buf), n);
    assert_string_equal(buf, "^zab|baz$__");
    assert_int_equal(rg_task_format(t, n, buf, 4), 3); /* truncates, NUL-terminated */
    assert_string_equal(buf, "^za");

    const char *names[] = {"copy", "reverse", "sort"};
    for (int i = 0; i < RG_TASK_BUILTIN; i++) {
        rg_task k = RG_TASK_BUILTIN;
        assert_int_equal(rg_task_parse(names[i], &k), RG_OK);
        assert_int_equal(k, i);
        assert_string_equal(rg_task_name((rg_task)i), names[i]);
    }
    assert_string_equal(rg_task_name(RG_TASK_BUILTIN), "?");
    rg_task k = RG_TASK_SORT;
    assert_int_equal(rg_task_parse("Copy", &k), RG_ERR_ARG);
    assert_err_contains("copy, reverse, sort");
    assert_err_contains("'Copy'");
    assert_int_equal(k, RG_TASK_SORT); /* untouched */
    assert_int_equal(rg_task_parse("", &k), RG_ERR_ARG);
    assert_int_equal(rg_task_parse(NULL, &k), RG_ERR_ARG);
}

/* ------------------------------------------------------------------ sequence layout */

static void check_sequence(rg_task task, const char *x_str, const char *want_str)
{
    int32_t x[64], t[160], want[160];
    int n = toks(x_str, x);
    int m = toks(want_str, want);
    assert_int_equal(m, rg_task_seq_len(n));
    for (int i = 0; i < 160; i++) t[i] = -7;
    if (rg_task_sequence(task, x, n, t) != RG_OK) fail_msg("rg_task_sequence: %s", rg_last_error());
    char buf[200];
    rg_task_format(t, m, buf, sizeof buf);
    if (strcmp(buf, want_str)) fail_msg("%s(%s): got %s, want %s", rg_task_name(task), x_str, buf, want_str);
    assert_int_equal(t[m], -7); /* nothing written past 2n+3 */
    /* the same through rg_task_targets */
    int32_t y[64];
    assert_int_equal(rg_task_targets(task, x, n, y), RG_OK);
    assert_ints("y", y, want + n + 2, n);
}

static void test_sequence_layout(void **state)
{
    (void)state;
    check_sequence(RG_TASK_COPY, "cab", "^cab|cab$");
    check_sequence(RG_TASK_REVERSE, "cab", "^cab|bac$");
    check_sequence(RG_TASK_SORT, "cab", "^cab|abc$");
    check_sequence(RG_TASK_COPY, "q", "^q|q$");
    check_sequence(RG_TASK_REVERSE, "q", "^q|q$");
    check_sequence(RG_TASK_SORT, "q", "^q|q$");
    /* repeats are kept */
    check_sequence(RG_TASK_COPY, "zazab", "^zazab|zazab$");
    check_sequence(RG_TASK_REVERSE, "zazab", "^zazab|bazaz$");
    check_sequence(RG_TASK_SORT, "zazab", "^zazab|aabzz$");
    check_sequence(RG_TASK_SORT, "thequickbrownfox", "^thequickbrownfox|bcefhiknooqrtuwx$");
    check_sequence(RG_TASK_REVERSE, "abcdefghijklmnopqrstuvwxyz", "^abcdefghijklmnopqrstuvwxyz|zyxwvutsrqponmlkjihgfedcba$");

    /* token ids at the positions (0-based on BOS) for n = 3, reverse of c a b */
    int32_t x[3] = {6, 4, 5}, t[9];
    assert_int_equal(rg_task_sequence(RG_TASK_REVERSE, x, 3, t), RG_OK);
    const int32_t want[9] = {1, 6, 4, 5, 2, 5, 4, 6, 3};
    assert_ints("t", t, want, 9);
}

static void test_task_errors(void **state)
{
    (void)state;
    int32_t x[4] = {4, 5, 6, 7}, y[8];
    assert_int_equal(rg_task_targets(RG_TASK_COPY, x, 0, y), RG_ERR_ARG);
    assert_err_contains("n = 0");
    assert_int_equal(rg_task_targets(RG_TASK_COPY, x, -3, y), RG_ERR_ARG);
    assert_int_equal(rg_task_targets((rg_task)3, x, 4, y), RG_ERR_ARG);
    assert_err_contains("task 3 is not an ordering task");
    assert_err_contains("unknown task");
    assert_int_equal(rg_task_targets((rg_task)-1, x, 4, y), RG_ERR_ARG);
    x[2] = RG_TOK_EOS;
    assert_int_equal(rg_task_targets(RG_TASK_SORT, x, 4, y), RG_ERR_ARG);
    assert_err_contains("x[2] = 3");
    x[2] = 30;
    assert_int_equal(rg_task_sequence(RG_TASK_REVERSE, x, 4, y), RG_ERR_ARG);
    assert_int_equal(rg_task_prompt(x, 4, y), RG_ERR_ARG);
    assert_int_equal(rg_task_expected(RG_TASK_COPY, x, 4, y), RG_ERR_ARG);
    x[2] = 6;
    assert_int_equal(rg_task_prompt(x, 0, y), RG_ERR_ARG);
    rg_rng rng;
    rg_rng_seed(&rng, 1, 2);
    assert_int_equal(rg_task_sample(RG_TASK_COPY, &rng, 0, x, y), RG_ERR_ARG);
    assert_int_equal(rg_task_sample((rg_task)9, &rng, 2, x, y), RG_ERR_ARG);
    assert_int_equal(rg_task_targets(RG_TASK_COPY, x, RG_TASK_MAX_N + 1, y), RG_ERR_ARG);
}

/* Sort and reverse on random inputs: checked by their defining properties. */
static void test_sort_reverse_properties(void **state)
{
    (void)state;
    rg_rng rng;
    rg_rng_seed(&rng, 42, 7);
    int32_t x[200], y[200], z[200];
    for (int trial = 0; trial < 300; trial++) {
        int n = 1 + (int)rg_rng_below(&rng, 200);
        assert_int_equal(rg_task_sample(RG_TASK_SORT, &rng, n, x, y), RG_OK);
        int cx[RG_TASK_VOCAB] = {0}, cy[RG_TASK_VOCAB] = {0};
        for (int j = 0; j < n; j++) {
            assert_in_range(x[j], RG_TOK_SYM0, RG_TASK_VOCAB - 1);
            cx[x[j]]++;
            cy[y[j]]++;
            if (j && y[j - 1] > y[j]) fail_msg("sort: y[%d] = %d > y[%d] = %d", j - 1, y[j - 1], j, y[j]);
        }
        for (int v = 0; v < RG_TASK_VOCAB; v++) assert_int_equal(cx[v], cy[v]); /* same multiset */
        assert_int_equal(rg_task_targets(RG_TASK_REVERSE, x, n, y), RG_OK);
        for (int j = 0; j < n; j++) assert_int_equal(y[j], x[n - 1 - j]);
        assert_int_equal(rg_task_targets(RG_TASK_REVERSE, y, n, z), RG_OK);
        assert_ints("reverse(reverse(x))", z, x, n);
        assert_int_equal(rg_task_targets(RG_TASK_COPY, x, n, y), RG_OK);
        assert_ints("copy", y, x, n);
    }
}

/* rg_task_sample draws exactly n symbols, 4 + rg_rng_below(26) each, in order. */
static void test_sample_draws(void **state)
{
    (void)state;
    rg_rng a, b;
    rg_rng_seed(&a, 5, 9);
    rg_rng_seed(&b, 5, 9);
    int32_t x[10], y[10];
    assert_int_equal(rg_task_sample(RG_TASK_REVERSE, &a, 10, x, y), RG_OK);
    for (int j = 0; j < 10; j++) assert_int_equal(x[j], 4 + (int32_t)rg_rng_below(&b, 26));
    assert_int_equal(rg_rng_u32(&a), rg_rng_u32(&b)); /* same number of draws */
}

/* ------------------------------------------------------------------ batches */

/* Two rows by hand: copy of "ab" (n 2) and "cab" (n 3): T = 2*3+2 = 8. */
static void test_batch_build_by_hand(void **state)
{
    (void)state;
    /* caller-provided buffers sized for L_train = 3, B = 2 (rg_task_batch_cap = 16) */
    int32_t tokens[16], targets[16];
    int len[2], nn[2];
    rg_task_batch b = {.tokens = tokens, .targets = targets, .len = len, .n = nn, .cap = rg_task_batch_cap(2, 3),
                       .max_batch = 2};
    assert_int_equal(b.cap, 16);
    int n[2] = {2, 3};
    int32_t x[2 * 3] = {4, 5, 0, 6, 4, 5}; /* x_stride 3: "ab" (third entry unused), "cab" */
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 2, n, x, 3), RG_OK);
    assert_int_equal(b.B, 2);
    assert_int_equal(b.T, 8);
    assert_int_equal(b.n_loss, 3 + 4);
    assert_int_equal(len[0], 6);
    assert_int_equal(len[1], 8);
    assert_int_equal(nn[0], 2);
    assert_int_equal(nn[1], 3);
    /* row 0: t = ^ab|ab$ ; input t[0..5] + PAD PAD; loss at p = 3 (SEP -> a), 4 (a -> b), 5 (b -> EOS) */
    /* row 1: t = ^cab|cab$ ; input t[0..7]; loss at p = 4 (SEP -> c), 5, 6, 7 (b -> EOS) */
    const int32_t want_tok[16] = {1, 4, 5, 2, 4, 5, 0, 0, /**/ 1, 6, 4, 5, 2, 6, 4, 5};
    const int32_t want_tgt[16] = {IGN, IGN, IGN, 4, 5, 3, IGN, IGN, /**/ IGN, IGN, IGN, IGN, 6, 4, 5, 3};
    assert_ints("tokens", tokens, want_tok, 16);
    assert_ints("targets", targets, want_tgt, 16);

    /* the same rows, reverse and sort */
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_REVERSE, 2, n, x, 3), RG_OK);
    const int32_t rev_tok[16] = {1, 4, 5, 2, 5, 4, 0, 0, /**/ 1, 6, 4, 5, 2, 5, 4, 6};
    const int32_t rev_tgt[16] = {IGN, IGN, IGN, 5, 4, 3, IGN, IGN, /**/ IGN, IGN, IGN, IGN, 5, 4, 6, 3};
    assert_ints("reverse tokens", tokens, rev_tok, 16);
    assert_ints("reverse targets", targets, rev_tgt, 16);
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_SORT, 2, n, x, 3), RG_OK);
    const int32_t sort_tok[16] = {1, 4, 5, 2, 4, 5, 0, 0, /**/ 1, 6, 4, 5, 2, 4, 5, 6};
    const int32_t sort_tgt[16] = {IGN, IGN, IGN, 4, 5, 3, IGN, IGN, /**/ IGN, IGN, IGN, IGN, 4, 5, 6, 3};
    assert_ints("sort tokens", tokens, sort_tok, 16);
    assert_ints("sort targets", targets, sort_tgt, 16);

    /* one row of n 1: ^q|q$ -> input ^q|q, targets: p = 2 (SEP -> q), p = 3 (q -> EOS) */
    int n1 = 1;
    int32_t q = RG_TOK_SYM0 + 16;
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_REVERSE, 1, &n1, &q, 1), RG_OK);
    assert_int_equal(b.T, 4);
    assert_int_equal(b.n_loss, 2);
    const int32_t one_tok[4] = {1, q, 2, q}, one_tgt[4] = {IGN, IGN, q, 3};
    assert_ints("n=1 tokens", tokens, one_tok, 4);
    assert_ints("n=1 targets", targets, one_tgt, 4);
}

static void test_batch_build_errors(void **state)
{
    (void)state;
    int32_t tokens[16], targets[16];
    int len[2], nn[2];
    rg_task_batch b = {.tokens = tokens, .targets = targets, .len = len, .n = nn, .cap = 16, .max_batch = 2};
    int n[3] = {2, 3, 1};
    int32_t x[9] = {4, 5, 4, 6, 4, 5, 7, 7, 7};
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 3, n, x, 3), RG_ERR_ARG); /* B > max_batch */
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 0, n, x, 3), RG_ERR_ARG);
    assert_int_equal(rg_task_batch_build(&b, (rg_task)5, 2, n, x, 3), RG_ERR_ARG);
    int big[2] = {2, 4}; /* T = 10: 20 > cap 16 */
    int32_t xb[8] = {4, 4, 4, 4, 4, 4, 4, 4};
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 2, big, xb, 4), RG_ERR_ARG);
    assert_err_contains("capacity");
    int zero[2] = {2, 0};
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 2, zero, x, 3), RG_ERR_ARG);
    assert_err_contains("row 1");
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 2, n, x, 2), RG_ERR_ARG); /* n 3 > stride 2 */
    x[4] = RG_TOK_PAD;
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_COPY, 2, n, x, 3), RG_ERR_ARG);
    assert_err_contains("row 1: x[1] = 0");
    rg_task_batch unset = {0};
    assert_int_equal(rg_task_batch_build(&unset, RG_TASK_COPY, 1, n, x, 3), RG_ERR_ARG);

    rg_rng rng;
    rg_rng_seed(&rng, 1, 1);
    assert_int_equal(rg_task_batch_sample(&b, RG_TASK_COPY, &rng, 2, 4), RG_ERR_ARG); /* 2 * 10 > 16 */
    assert_int_equal(rg_task_batch_sample(&b, RG_TASK_COPY, &rng, 2, 0), RG_ERR_ARG);
    assert_int_equal(rg_task_batch_sample(&b, RG_TASK_COPY, &rng, 3, 3), RG_ERR_ARG);
    assert_int_equal(rg_task_batch_sample(&b, RG_TASK_COPY, &rng, 2, 3), RG_OK);

    rg_task_batch a;
    assert_int_equal(rg_task_batch_alloc(&a, 0, 16), RG_ERR_ARG);
    assert_int_equal(rg_task_batch_alloc(&a, 4, 0), RG_ERR_ARG);
    assert_int_equal(rg_task_batch_alloc(&a, 4, 16), RG_OK);
    assert_int_equal(a.cap, 4 * 34);
    assert_int_equal(a.max_batch, 4);
    rg_task_batch_free(&a);
    assert_null(a.tokens);
    rg_task_batch_free(&a); /* twice is fine */
}

/* Checks every entry of a batch against the full sequence of its row, rebuilt from the row's own x. */
static void check_batch_invariants(const rg_task_batch *b, rg_task task, int L_train)
{
    int max_n = 0;
    int64_t loss = 0;
    int32_t t[2 * 64 + 3];
    for (int i = 0; i < b->B; i++) {
        int n = b->n[i];
        assert_in_range(n, 1, L_train);
        assert_int_equal(b->len[i], 2 * n + 2);
        if (n > max_n) max_n = n;
        const int32_t *tok = b->tokens + (int64_t)i * b->T, *tgt = b->targets + (int64_t)i * b->T;
        assert_int_equal(rg_task_sequence(task, tok + 1, n, t), RG_OK);
        for (int p = 0; p < b->T; p++) {
            int32_t want_tok = p < 2 * n + 2 ? t[p] : RG_TOK_PAD;
            int32_t want_tgt = (p >= n + 1 && p <= 2 * n + 1) ? t[p + 1] : IGN;
            if (tok[p] != want_tok) fail_msg("row %d (n %d) tokens[%d] = %d, want %d", i, n, p, tok[p], want_tok);
            if (tgt[p] != want_tgt) fail_msg("row %d (n %d) targets[%d] = %d, want %d", i, n, p, tgt[p], want_tgt);
            loss += tgt[p] != IGN;
        }
        assert_int_equal(tgt[2 * n + 1], RG_TOK_EOS); /* the last loss position predicts EOS */
        assert_int_equal(tok[n + 1], RG_TOK_SEP);     /* the first loss position is the SEP */
    }
    assert_int_equal(b->T, 2 * max_n + 2);
    assert_int_equal(b->n_loss, loss);
}

static void test_batch_sample(void **state)
{
    (void)state;
    const int B = 64, L = 16;
    rg_task_batch b;
    assert_int_equal(rg_task_batch_alloc(&b, B, L), RG_OK);
    rg_rng rng, ref;
    int seen_min = 99, seen_max = 0;
    for (int task = 0; task < RG_TASK_BUILTIN; task++) {
        rg_rng_seed(&rng, 1234 + task, 3);
        rg_rng_seed(&ref, 1234 + task, 3);
        for (int it = 0; it < 20; it++) {
            int Bi = it % 2 ? B : 1 + it; /* smaller batches fit in the same buffers */
            assert_int_equal(rg_task_batch_sample(&b, (rg_task)task, &rng, Bi, L), RG_OK);
            assert_int_equal(b.B, Bi);
            check_batch_invariants(&b, (rg_task)task, L);
            /* the documented draw order: per row, n = 1 + below(L), then the n symbols */
            for (int i = 0; i < Bi; i++) {
                int n = 1 + (int)rg_rng_below(&ref, (uint32_t)L);
                assert_int_equal(b.n[i], n);
                for (int j = 0; j < n; j++)
                    assert_int_equal(b.tokens[(int64_t)i * b.T + 1 + j], 4 + (int32_t)rg_rng_below(&ref, 26));
                if (n < seen_min) seen_min = n;
                if (n > seen_max) seen_max = n;
            }
        }
        assert_int_equal(rg_rng_u32(&rng), rg_rng_u32(&ref));
    }
    assert_int_equal(seen_min, 1); /* lengths cover 1..L_train */
    assert_int_equal(seen_max, L);

    /* a batch whose rows all have the same n has no padding and no ignored position after the EOS target */
    int n[3] = {4, 4, 4};
    int32_t x[12];
    for (int i = 0; i < 12; i++) x[i] = 4 + (i * 7) % 26;
    assert_int_equal(rg_task_batch_build(&b, RG_TASK_SORT, 3, n, x, 4), RG_OK);
    assert_int_equal(b.T, 10);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(b.targets[i * 10 + 9], RG_TOK_EOS);
        for (int p = 0; p < 10; p++) assert_int_not_equal(b.tokens[i * 10 + p], RG_TOK_PAD);
    }
    check_batch_invariants(&b, RG_TASK_SORT, 4);
    rg_task_batch_free(&b);
}

/* ------------------------------------------------------------------ evaluation helpers */

static void test_prompt_expected(void **state)
{
    (void)state;
    int32_t x[4], p[8], e[8], want[8];
    toks("dcab", x);
    assert_int_equal(rg_task_prompt(x, 4, p), RG_OK);
    assert_ints("prompt", p, want, toks("^dcab|", want));
    assert_int_equal(rg_task_expected(RG_TASK_COPY, x, 4, e), RG_OK);
    assert_ints("copy expected", e, want, toks("dcab$", want));
    assert_int_equal(rg_task_expected(RG_TASK_REVERSE, x, 4, e), RG_OK);
    assert_ints("reverse expected", e, want, toks("bacd$", want));
    assert_int_equal(rg_task_expected(RG_TASK_SORT, x, 4, e), RG_OK);
    assert_ints("sort expected", e, want, toks("abcd$", want));
    /* prompt + expected is the full sequence */
    int32_t t[11], pe[11];
    assert_int_equal(rg_task_sequence(RG_TASK_SORT, x, 4, t), RG_OK);
    memcpy(pe, p, 6 * sizeof *pe);
    memcpy(pe + 6, e, 5 * sizeof *pe);
    assert_ints("prompt+expected", pe, t, 11);
}

static void test_score(void **state)
{
    (void)state;
    rg_task_score s = {0};
    assert_true(rg_task_exact_match(&s) == 0.0);
    assert_true(rg_task_token_acc(&s) == 0.0);
    /* B 3, m 4 (n 3): row 0 all right, row 1 one wrong (EOS missing), row 2 all wrong */
    const int32_t expected[12] = {5, 4, 6, 3, /**/ 7, 7, 8, 3, /**/ 4, 5, 6, 3};
    const int32_t gen[12] = {5, 4, 6, 3, /**/ 7, 7, 8, 8, /**/ 6, 4, 5, 0};
    int rc[3] = {-1, -1, -1};
    assert_int_equal(rg_task_score_add(&s, gen, expected, 3, 4, rc), RG_OK);
    assert_int_equal(rc[0], 4);
    assert_int_equal(rc[1], 3);
    assert_int_equal(rc[2], 0);
    assert_int_equal(s.samples, 3);
    assert_int_equal(s.exact, 1);
    assert_int_equal(s.tokens, 12);
    assert_int_equal(s.correct, 7);
    assert_true(rg_task_exact_match(&s) == 1.0 / 3.0);
    assert_true(rg_task_token_acc(&s) == 7.0 / 12.0);
    /* accumulates over batches (of another length): one row of m 2, right */
    const int32_t e2[2] = {9, 3};
    assert_int_equal(rg_task_score_add(&s, e2, e2, 1, 2, NULL), RG_OK);
    assert_true(rg_task_exact_match(&s) == 2.0 / 4.0);
    assert_true(rg_task_token_acc(&s) == 9.0 / 14.0);
    /* a shifted but otherwise right answer scores no exact match */
    rg_task_score s2 = {0};
    const int32_t shifted[4] = {4, 5, 6, 3}, exp2[4] = {4, 4, 5, 6};
    assert_int_equal(rg_task_score_add(&s2, shifted, exp2, 1, 4, NULL), RG_OK);
    assert_int_equal(s2.exact, 0);
    assert_int_equal(s2.correct, 1);
    assert_int_equal(rg_task_score_add(&s2, gen, expected, 0, 4, NULL), RG_ERR_ARG);
    assert_int_equal(rg_task_score_add(&s2, gen, expected, 1, 0, NULL), RG_ERR_ARG);
    assert_int_equal(s2.samples, 1);
}

/* ------------------------------------------------------------------ evaluation sets */

static char tmpdir[256];

static int setup_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rg_test_task_XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(tmpdir);
    return 0;
}

/* Number of entries in tmpdir (other than . and ..). */
static int tmpdir_entries(void)
{
    DIR *d = opendir(tmpdir);
    int k = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        k += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return k;
}

static unsigned char *read_bytes(const char *path, long *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)*size + 1);
    if (fread(buf, 1, (size_t)*size, f) != (size_t)*size) fail_msg("cannot read %s", path);
    fclose(f);
    return buf;
}

/* rg_evalset_make follows the documented stream: seed 20261130, stream 1000 * task + n, samples in order. */
static void test_evalset_make(void **state)
{
    (void)state;
    assert_int_equal(rg_eval_stream(RG_TASK_COPY, 8), 8);
    assert_int_equal(rg_eval_stream(RG_TASK_REVERSE, 16), 1016);
    assert_int_equal(rg_eval_stream(RG_TASK_SORT, 64), 2064);
    const int want_lens[RG_EVAL_NLENS] = {8, 16, 24, 32, 48, 64};
    for (int i = 0; i < RG_EVAL_NLENS; i++) assert_int_equal(rg_eval_lengths[i], want_lens[i]);

    int32_t x[20 * 8], y[20 * 8], x5[5 * 8], y5[5 * 8];
    assert_int_equal(rg_evalset_make(RG_TASK_REVERSE, 8, 20, x, y), RG_OK);
    rg_rng r;
    rg_rng_seed(&r, 20261130ULL, 1008);
    for (int i = 0; i < 20 * 8; i++) assert_int_equal(x[i], 4 + (int32_t)rg_rng_below(&r, 26));
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < 8; j++) assert_int_equal(y[i * 8 + j], x[i * 8 + 7 - j]);
    assert_int_equal(rg_evalset_make(RG_TASK_REVERSE, 8, 5, x5, y5), RG_OK); /* prefix-stable in count */
    assert_ints("x prefix", x5, x, 5 * 8);
    assert_int_equal(rg_evalset_make(RG_TASK_COPY, 8, 5, x5, y5), RG_OK); /* another task: another stream */
    assert_memory_not_equal(x5, x, 5 * 8 * sizeof *x);
    assert_int_equal(rg_evalset_make(RG_TASK_COPY, 0, 5, x5, y5), RG_ERR_ARG);
    assert_int_equal(rg_evalset_make(RG_TASK_COPY, 8, 0, x5, y5), RG_ERR_ARG);
    assert_int_equal(rg_evalset_make((rg_task)3, 8, 5, x5, y5), RG_ERR_ARG);
}

/* The committed file loads for every (task, length), and its first rows match values computed by an independent
 * Python PCG32 implementation following docs/data.md. */
static void test_evalset_load_committed(void **state)
{
    (void)state;
    const char *names[] = {"copy", "reverse", "sort"};
    for (int t = 0; t < RG_TASK_BUILTIN; t++)
        for (int k = 0; k < RG_EVAL_NLENS; k++) {
            int n = rg_eval_lengths[k];
            rg_evalset e;
            if (rg_evalset_load(RG_EVAL_PATH, names[t], n, &e) != RG_OK)
                fail_msg("load %s n%d: %s", names[t], n, rg_last_error());
            assert_int_equal(e.task, t);
            assert_int_equal(e.n, n);
            assert_int_equal(e.count, RG_EVAL_COUNT);
            int32_t *x = malloc(sizeof *x * RG_EVAL_COUNT * n), *y = malloc(sizeof *y * RG_EVAL_COUNT * n);
            assert_int_equal(rg_evalset_make((rg_task)t, n, RG_EVAL_COUNT, x, y), RG_OK);
            assert_ints("x", e.x, x, RG_EVAL_COUNT * n);
            assert_ints("y", e.y, y, RG_EVAL_COUNT * n);
            free(x);
            free(y);
            rg_evalset_free(&e);
            assert_null(e.x);
        }
    /* independent values (Python PCG32, docs/data.md): first sample of each task at n = 8, as letters */
    const char *pinned[3][2] = {
        {"ywfkpuxy", "ywfkpuxy"},   /* copy: x, y */
        {"zlkvhumy", "ymuhvklz"},   /* reverse */
        {"fscnjenm", "cefjmnns"},   /* sort */
    };
    for (int t = 0; t < 3; t++) {
        rg_evalset e;
        assert_int_equal(rg_evalset_load(RG_EVAL_PATH, names[t], 8, &e), RG_OK);
        char bx[16], by[16];
        rg_task_format(e.x, 8, bx, sizeof bx);
        rg_task_format(e.y, 8, by, sizeof by);
        if (strcmp(bx, pinned[t][0]) || strcmp(by, pinned[t][1]))
            fail_msg("%s n8 sample 0: x %s y %s, want %s %s", names[t], bx, by, pinned[t][0], pinned[t][1]);
        rg_evalset_free(&e);
    }
}

/* Reads a string attribute of the root of `file`. */
static void root_str(const char *file, const char *attr, char *buf, size_t n) { tc_h5_attr_str(file, "/", attr, buf, n); }

/* The committed file equals a fresh generation by rg_evalset_generate (the code path of tools/gen_data): every
 * dataset value and root attribute, the same set of groups; and two fresh generations are byte-identical. */
static void test_evalset_committed_equals_fresh(void **state)
{
    (void)state;
    char fresh[400], fresh2[400];
    snprintf(fresh, sizeof fresh, "%s/fresh.h5", tmpdir);
    snprintf(fresh2, sizeof fresh2, "%s/fresh2.h5", tmpdir);
    if (rg_evalset_generate(fresh) != RG_OK) fail_msg("generate: %s", rg_last_error());
    const char *names[] = {"copy", "reverse", "sort"};
    for (int t = 0; t < RG_TASK_BUILTIN; t++) {
        for (int k = 0; k < RG_EVAL_NLENS; k++)
            for (int d = 0; d < 2; d++) {
                char ds[64];
                snprintf(ds, sizeof ds, "/%s/n%d/%s", names[t], rg_eval_lengths[k], d ? "y" : "x");
                int64_t na, nb;
                int sa[4], sb[4], nda, ndb;
                int32_t *a = tc_h5_read_int(RG_EVAL_PATH, ds, &na, sa, &nda);
                int32_t *b = tc_h5_read_int(fresh, ds, &nb, sb, &ndb);
                assert_int_equal(nda, 2);
                assert_int_equal(ndb, 2);
                assert_int_equal(sa[0], RG_EVAL_COUNT);
                assert_int_equal(sa[1], rg_eval_lengths[k]);
                assert_int_equal(sb[0], sa[0]);
                assert_int_equal(sb[1], sa[1]);
                assert_int_equal(na, nb);
                for (int64_t i = 0; i < na; i++)
                    if (a[i] != b[i]) fail_msg("%s[%lld]: committed %d, fresh %d", ds, (long long)i, a[i], b[i]);
                free(a);
                free(b);
            }
    }
    const char *str_attrs[] = {"generator", "description", "stream_formula", "tasks"};
    for (int i = 0; i < 4; i++) {
        char a[1024], b[1024];
        root_str(RG_EVAL_PATH, str_attrs[i], a, sizeof a);
        root_str(fresh, str_attrs[i], b, sizeof b);
        assert_string_equal(a, b);
    }
    assert_true(tc_h5_attr(RG_EVAL_PATH, "/", "seed") == 20261130.0);
    assert_true(tc_h5_attr(fresh, "/", "seed") == 20261130.0);
    assert_true(tc_h5_attr(RG_EVAL_PATH, "/", "count") == 256.0);
    assert_true(tc_h5_attr(RG_EVAL_PATH, "/", "vocab") == 30.0);
    assert_true(tc_h5_attr(RG_EVAL_PATH, "/sort/n48", "stream") == 2048.0);
    /* no extra lengths in the committed file (n4, n12 are not part of it) */
    assert_false(tc_h5_exists(RG_EVAL_PATH, "/copy/n4"));
    assert_false(tc_h5_exists(RG_EVAL_PATH, "/copy/n12"));

    /* determinism: a second generation is byte-identical to the first (no timestamps) */
    assert_int_equal(rg_evalset_generate(fresh2), RG_OK);
    long s1, s2, s0;
    unsigned char *b1 = read_bytes(fresh, &s1), *b2 = read_bytes(fresh2, &s2), *b0 = read_bytes(RG_EVAL_PATH, &s0);
    assert_int_equal(s1, s2);
    assert_memory_equal(b1, b2, (size_t)s1);
    /* the committed bytes equal a fresh generation with this HDF5/zlib build; another build may lay the file out
     * differently with the same values (checked above), so a difference is reported, not failed */
    if (s0 != s1 || memcmp(b0, b1, (size_t)s1))
        print_message("note: %s differs in bytes from a fresh generation (same values): another HDF5/zlib build?\n",
                      RG_EVAL_PATH);
    free(b0);
    free(b1);
    free(b2);
    assert_int_equal(tmpdir_entries(), 2); /* no temporary files left */
}

/* Sets (or replaces) the root attribute count of an HDF5 file to an int32 value. */
static void set_root_count(const char *path, int count)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    if (H5Aexists(f, "count") > 0) H5Adelete(f, "count");
    hid_t sp = H5Screate(H5S_SCALAR), a = H5Acreate2(f, "count", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, H5T_NATIVE_INT, &count) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Fclose(f);
}

/* Writes a small HDF5 file with /<group>/x and /<group>/y of the given shapes (NULL data: skip that dataset). */
static void write_custom(const char *path, const char *group, const int32_t *x, int xr, int xc, const int32_t *y,
                         int yr, int yc, int y_float)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t g = H5Gcreate2(f, group, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(g >= 0);
    if (x) {
        hsize_t d[2] = {(hsize_t)xr, (hsize_t)xc};
        hid_t sp = H5Screate_simple(2, d, NULL);
        hid_t ds = H5Dcreate2(g, "x", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, x);
        H5Dclose(ds);
        H5Sclose(sp);
    }
    if (y) {
        hsize_t d[2] = {(hsize_t)yr, (hsize_t)yc};
        hid_t sp = H5Screate_simple(yc ? 2 : 1, d, NULL);
        hid_t ds = H5Dcreate2(g, "y", y_float ? H5T_IEEE_F32LE : H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                              H5P_DEFAULT);
        H5Dwrite(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, y);
        H5Dclose(ds);
        H5Sclose(sp);
    }
    H5Gclose(g);
    H5Pclose(lcpl);
    H5Fclose(f);
    set_root_count(path, xr); /* as the canonical file: every set has count rows */
}

static void expect_load_fail(const char *path, const char *task, int n, rg_status code, const char *needle)
{
    rg_evalset e;
    memset(&e, 0x5a, sizeof e);
    rg_status st = rg_evalset_load(path, task, n, &e);
    if (st != code) fail_msg("load(%s, %s, %d): status %d, want %d (%s)", path, task, n, st, code, rg_last_error());
    assert_err_contains(needle);
    assert_null(e.x); /* zeroed on failure */
    assert_null(e.y);
    assert_int_equal(e.count, 0);
}

static void test_evalset_load_errors(void **state)
{
    (void)state;
    char p[400];
    expect_load_fail("no/such/file.h5", "copy", 8, RG_ERR_IO, "no/such/file.h5");
    expect_load_fail(RG_EVAL_PATH, "rotate", 8, RG_ERR_ARG, "copy, reverse, sort");
    expect_load_fail(RG_EVAL_PATH, "copy", 0, RG_ERR_ARG, "n = 0");
    /* a length the file does not have: the message lists the ones it has */
    expect_load_fail(RG_EVAL_PATH, "copy", 12, RG_ERR_FORMAT, "/copy/n12");
    assert_err_contains("n16");
    assert_err_contains("n64");

    snprintf(p, sizeof p, "%s/text.h5", tmpdir);
    FILE *f = fopen(p, "w");
    fputs("not an hdf5 file\n", f);
    fclose(f);
    expect_load_fail(p, "copy", 8, RG_ERR_FORMAT, "not an HDF5 file");

    int32_t x[2 * 3] = {4, 5, 6, 7, 8, 9}, xcopy[6];
    memcpy(xcopy, x, sizeof x);
    snprintf(p, sizeof p, "%s/custom.h5", tmpdir);
    /* a valid tiny file: 2 samples of n 3 */
    write_custom(p, "/copy/n3", x, 2, 3, xcopy, 2, 3, 0);
    rg_evalset e;
    assert_int_equal(rg_evalset_load(p, "copy", 3, &e), RG_OK);
    assert_int_equal(e.count, 2);
    assert_ints("x", e.x, x, 6);
    rg_evalset_free(&e);
    /* fewer samples than the file's count says (a cut set is not that set), and no count at all */
    set_root_count(p, 3);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "2 samples, but the file's count attribute is 3");
    set_root_count(p, 0);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "count");
    write_custom(p, "/copy/n3", x, 2, 3, xcopy, 2, 3, 0);
    /* the task group missing: the message lists the groups the file has */
    expect_load_fail(p, "sort", 3, RG_ERR_FORMAT, "no group /sort");
    assert_err_contains("copy");
    /* wrong shape: x is [2, 3] but n 2 requested from a group named n2 */
    write_custom(p, "/copy/n2", x, 2, 3, xcopy, 2, 3, 0);
    expect_load_fail(p, "copy", 2, RG_ERR_FORMAT, "shape [2, 3], expected [count, 2]");
    /* y 1-D */
    write_custom(p, "/copy/n3", x, 2, 3, xcopy, 6, 0, 0);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "dataset y has shape [6]");
    /* x and y differ in count */
    write_custom(p, "/copy/n3", x, 2, 3, xcopy, 1, 3, 0);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "x has 2 rows, y has 1");
    /* y missing */
    write_custom(p, "/copy/n3", x, 2, 3, NULL, 0, 0, 0);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "no dataset y");
    /* y not integer */
    write_custom(p, "/copy/n3", x, 2, 3, xcopy, 2, 3, 1);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "has dtype float32, expected int32");
    /* y not the target of x (copy expected, reversed given) */
    int32_t yrev[6] = {6, 5, 4, 9, 8, 7};
    write_custom(p, "/copy/n3", x, 2, 3, yrev, 2, 3, 0);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "sample 0: y[0] = 6");
    /* ... which is right for reverse */
    write_custom(p, "/reverse/n3", x, 2, 3, yrev, 2, 3, 0);
    assert_int_equal(rg_evalset_load(p, "reverse", 3, &e), RG_OK);
    rg_evalset_free(&e);
    /* a non-symbol in x */
    int32_t xbad[6] = {4, 5, 6, 7, RG_TOK_EOS, 9};
    write_custom(p, "/copy/n3", xbad, 2, 3, xbad, 2, 3, 0);
    expect_load_fail(p, "copy", 3, RG_ERR_FORMAT, "sample 1: x[1] = 3");
    rg_evalset_free(&e); /* on a zeroed struct */
}

static void test_evalset_generate_errors(void **state)
{
    (void)state;
    char p[400];
    snprintf(p, sizeof p, "%s/missing_dir/e.h5", tmpdir);
    assert_int_equal(rg_evalset_generate(p), RG_ERR_IO);
    assert_int_equal(rg_evalset_generate(""), RG_ERR_ARG);
    /* atomic replace: an existing file is replaced, no temporary file is left */
    snprintf(p, sizeof p, "%s/replace.h5", tmpdir);
    FILE *f = fopen(p, "w");
    fputs("old", f);
    fclose(f);
    int before = tmpdir_entries();
    assert_int_equal(rg_evalset_generate(p), RG_OK);
    assert_int_equal(tmpdir_entries(), before);
    rg_evalset e;
    assert_int_equal(rg_evalset_load(p, "sort", 64, &e), RG_OK);
    assert_int_equal(e.count, 256);
    rg_evalset_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vocab_and_names),
        cmocka_unit_test(test_sequence_layout),
        cmocka_unit_test(test_task_errors),
        cmocka_unit_test(test_sort_reverse_properties),
        cmocka_unit_test(test_sample_draws),
        cmocka_unit_test(test_batch_build_by_hand),
        cmocka_unit_test(test_batch_build_errors),
        cmocka_unit_test(test_batch_sample),
        cmocka_unit_test(test_prompt_expected),
        cmocka_unit_test(test_score),
        cmocka_unit_test(test_evalset_make),
        cmocka_unit_test(test_evalset_load_committed),
        cmocka_unit_test_setup_teardown(test_evalset_committed_equals_fresh, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_evalset_load_errors, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_evalset_generate_errors, setup_tmpdir, teardown_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
