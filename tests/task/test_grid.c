/* test_grid.c: the grid tasks of src/task/grid.c and grid_frames.c and the registry's grid sizes (grid_size.c):
 * a hand-checked sample of each task (tokens and axis ids written out by hand from the drawn grid), the maps
 * against an independent re-implementation on many random sizes, the training sizes (every H x W up to the
 * training size drawn, none beyond), the training batch's axes row by row, the size codes and their text, and the
 * refusals. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#include "task/grid.h"
#include "task/task.h"

static rg_task task_of(const char *name)
{
    rg_task t;
    assert_int_equal(rg_task_register_grids(), RG_OK);
    assert_int_equal(rg_task_parse(name, &t), RG_OK);
    return t;
}

static void text_of(const int32_t *tok, int n, char *buf)
{
    for (int i = 0; i < n; i++) buf[i] = rg_grid_token_char(tok[i]);
    buf[n] = 0;
}

/* Each task at one size, drawn from PCG32 (seed, stream 2): the tokens as text, and the three axes as digit strings
 * (every id below 10 at these sizes), all checked by hand against the layouts in grid.c / grid_frames.c. */
static const struct {
    const char *task, *size;
    uint64_t seed;
    const char *prompt, *target, *frame, *row, *col;
} samples[] = {
    {"grid_copy", "2x3", 1, "^rfp/hyh/|", "rfp/hyh/$", "0000000001111111111", "0000011110000011112",
     "0123412340123412340"},
    {"grid_transpose", "2x3", 1, "^rfp/hyh/|", "rh/fy/ph/$", "00000000011111111111", "00000111100001112223",
     "01234123401231231230"},
    {"grid_rotate", "2x3", 1, "^rfp/hyh/|", "hr/yf/hp/$", "00000000011111111111", "00000111100001112223",
     "01234123401231231230"},
    {"grid_lookup", "2x3", 1, "^rfp/hyh/|0B1A0C1C?", "f?h?p?h$", "000000000111111111222222222",
     "000001111000110011001100112", "012341234022113333221133330"},
    /* shift (0, -1): each frame moves one column left, '.' enters on the right */
    {"frames", "2x2x3", 3, "^zjv/jvg/jv./vg./|", "v../g../$", "000000000111111112222222222",
     "000001111000011110000011112", "012341234123412340123412340"},
    /* shift (-1, 0): up one row */
    {"frames", "2x2x3", 5, "^ipa/pxc/pxc/.../|", ".../.../$", "000000000111111112222222222",
     "000001111000011110000011112", "012341234123412340123412340"},
};

static void test_hand_checked_samples(void **state)
{
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        rg_task t = task_of(samples[i].task);
        int n;
        assert_int_equal(rg_size_parse(samples[i].size, &n), RG_OK);
        int P = rg_task_prompt_len(t, n), G = rg_task_target_len(t, n), T = P + G;
        int32_t p[64], g[64], ax[RG_TASK_AXES * 64];
        char buf[65];
        rg_rng rng;
        rg_rng_seed(&rng, samples[i].seed, 2);
        assert_int_equal(rg_task_draw(t, &rng, n, p, g), RG_OK);
        text_of(p, P, buf);
        assert_string_equal(buf, samples[i].prompt);
        text_of(g, G, buf);
        assert_string_equal(buf, samples[i].target);
        assert_int_equal(rg_task_axes(t, n, p, ax, 64), RG_OK);
        const char *want[3] = {samples[i].frame, samples[i].row, samples[i].col};
        for (int a = 0; a < RG_TASK_AXES; a++) {
            assert_int_equal((int)strlen(want[a]), T);
            for (int k = 0; k < T; k++)
                if (ax[a * 64 + k] != want[a][k] - '0')
                    fail_msg("%s sample %zu axis %d token %d: %d, want %c", samples[i].task, i, a, k, ax[a * 64 + k],
                             want[a][k]);
        }
    }
}

/* frames_qwen2vl: the ids Hugging Face's Qwen2-VL get_rope_index gives the frames layout, worked out by hand from
 * its rule (text: one id on all three axes, the largest id before + 1 on; the video: the id after the text before
 * it plus (frame, row, column), '/' the column after a row's cells), not from the task's code. Three layouts whose
 * largest video id comes from the column (2x2x3), the frame (3x1x1) and the row (2x3x1) axis, so the text after
 * the video starts from each in turn. */
static const struct {
    const char *size;
    int T;
    int ids[3][27]; /* frame, row, column of tokens 0..T-1 */
} qwen2vl_ids[] = {
    {"2x2x3", 27, {{0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
                   {0, 1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
                   {0, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}}},
    {"3x1x1", 11, {{0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7}, {0, 1, 1, 1, 1, 1, 1, 4, 5, 6, 7}, {0, 1, 2, 1, 2, 1, 2, 4, 5, 6, 7}}},
    {"2x3x1", 21, {{0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 4, 5, 6, 7, 8, 9, 10, 11},
                   {0, 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                   {0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11}}},
};

static void test_frames_qwen2vl_ids(void **state)
{
    rg_task q = task_of("frames_qwen2vl"), fr = task_of("frames");
    for (size_t i = 0; i < sizeof qwen2vl_ids / sizeof *qwen2vl_ids; i++) {
        int n;
        assert_int_equal(rg_size_parse(qwen2vl_ids[i].size, &n), RG_OK);
        int P = rg_task_prompt_len(q, n), G = rg_task_target_len(q, n);
        assert_int_equal(P + G, qwen2vl_ids[i].T);
        int32_t p[64], g[64], p2[64], g2[64], ax[RG_TASK_AXES * 64];
        rg_rng rng, rng2;
        rg_rng_seed(&rng, 9, 2);
        rg_rng_seed(&rng2, 9, 2);
        assert_int_equal(rg_task_draw(q, &rng, n, p, g), RG_OK);
        assert_int_equal(rg_task_draw(fr, &rng2, n, p2, g2), RG_OK); /* the same samples as frames */
        assert_memory_equal(p, p2, sizeof(int32_t) * (size_t)P);
        assert_memory_equal(g, g2, sizeof(int32_t) * (size_t)G);
        assert_int_equal(rg_task_axes(q, n, p, ax, 64), RG_OK);
        for (int a = 0; a < RG_TASK_AXES; a++)
            for (int k = 0; k < qwen2vl_ids[i].T; k++)
                if (ax[a * 64 + k] != qwen2vl_ids[i].ids[a][k])
                    fail_msg("frames_qwen2vl %s axis %d token %d: %d, want %d", qwen2vl_ids[i].size, a, k,
                             ax[a * 64 + k], qwen2vl_ids[i].ids[a][k]);
    }
}

/* The maps on every size up to 9x9 against an independent reading of the prompt's grid. */
static void test_maps_all_sizes(void **state)
{
    const char *names[] = {"grid_copy", "grid_transpose", "grid_rotate"};
    rg_rng rng;
    rg_rng_seed(&rng, 42, 7);
    for (int m = 0; m < 3; m++) {
        rg_task t = task_of(names[m]);
        for (int H = 1; H <= 9; H++)
            for (int W = 1; W <= 9; W++) {
                int n = rg_grid_code(1, H, W), P = rg_task_prompt_len(t, n), G = rg_task_target_len(t, n);
                int32_t p[128], g[128];
                assert_int_equal(rg_task_draw(t, &rng, n, p, g), RG_OK);
                assert_int_equal(P, 2 + H * (W + 1));
                int Ho = m ? W : H, Wo = m ? H : W;
                assert_int_equal(G, Ho * (Wo + 1) + 1);
                assert_int_equal(p[0], RG_TOK_BOS);
                assert_int_equal(p[P - 1], RG_TOK_SEP);
                assert_int_equal(g[G - 1], RG_TOK_EOS);
                for (int r = 0; r < Ho; r++) {
                    assert_int_equal(g[r * (Wo + 1) + Wo], RG_GRID_TOK_NL);
                    for (int c = 0; c < Wo; c++) {
                        int sr = m == 0 ? r : m == 1 ? c : H - 1 - c, sc = m == 0 ? c : r;
                        assert_int_equal(g[r * (Wo + 1) + c], p[1 + sr * (W + 1) + sc]);
                    }
                }
            }
    }
}

/* lookup: every answer is the symbol at its query's cell, on random sizes; frames: every target cell follows the
 * shift read off the first two frames (when that shift is visible). */
static void test_lookup_and_frames(void **state)
{
    rg_task lk = task_of("grid_lookup");
    rg_rng rng;
    rg_rng_seed(&rng, 9, 9);
    for (int i = 0; i < 200; i++) {
        int H = 1 + (int)rg_rng_below(&rng, 9), W = 1 + (int)rg_rng_below(&rng, 9), n = rg_grid_code(1, H, W);
        int32_t p[160], g[16];
        assert_int_equal(rg_task_draw(lk, &rng, n, p, g), RG_OK);
        int q0 = 2 + H * (W + 1);
        for (int k = 0; k < RG_GRID_QUERIES; k++) {
            int r = p[q0 + 2 * k] - RG_GRID_TOK_ROW0, c = p[q0 + 2 * k + 1] - RG_GRID_TOK_COL0;
            assert_true(r >= 0 && r < H && c >= 0 && c < W);
            assert_int_equal(g[2 * k], p[1 + r * (W + 1) + c]);
        }
    }
    rg_task fr = task_of("frames");
    for (int i = 0; i < 200; i++) {
        int F = 2 + (int)rg_rng_below(&rng, 8), H = 1 + (int)rg_rng_below(&rng, 9), W = 1 + (int)rg_rng_below(&rng, 9);
        int n = rg_grid_code(F, H, W), fl = H * (W + 1);
        int32_t p[1024], g[128];
        assert_int_equal(rg_task_draw(fr, &rng, n, p, g), RG_OK);
        assert_int_equal(rg_task_prompt_len(fr, n), 2 + F * fl);
        /* frame k+1 from frame k by the one shift that explains frame 1 from frame 0 and every later frame */
        int found = 0;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                int ok = 1;
                for (int k = 0; k < F && ok; k++) {
                    const int32_t *cur = p + 1 + k * fl, *nx = k + 1 < F ? p + 1 + (k + 1) * fl : g;
                    for (int r = 0; r < H && ok; r++)
                        for (int c = 0; c < W && ok; c++) {
                            int sr = r - dr, sc = c - dc;
                            int32_t want = sr >= 0 && sr < H && sc >= 0 && sc < W ? cur[sr * (W + 1) + sc] : RG_GRID_TOK_BG;
                            ok = nx[r * (W + 1) + c] == want;
                        }
                }
                found |= ok;
            }
        assert_true(found);
    }
}

/* Training sizes of 4x4: H and W each 1..4, all 16 shapes drawn; frames 3x4x4: F 2..3. */
static void test_train_sizes(void **state)
{
    rg_task t = task_of("grid_copy"), fr = task_of("frames");
    int seen[10][10] = {{0}}, fseen[10] = {0};
    rg_rng rng;
    rg_rng_seed(&rng, 3, 3);
    for (int i = 0; i < 2000; i++) {
        rg_grid_shape s;
        int n = rg_task_train_size(t, &rng, 144);
        assert_int_equal(rg_task_shape(t, n, &s), RG_OK);
        assert_true(s.frames == 1 && s.rows >= 1 && s.rows <= 4 && s.cols >= 1 && s.cols <= 4);
        seen[s.rows][s.cols]++;
        n = rg_task_train_size(fr, &rng, 344);
        assert_int_equal(rg_task_shape(fr, n, &s), RG_OK);
        assert_true(s.frames >= 2 && s.frames <= 3 && s.rows <= 4 && s.cols <= 4);
        fseen[s.frames]++;
    }
    for (int h = 1; h <= 4; h++)
        for (int w = 1; w <= 4; w++) assert_true(seen[h][w] > 50);
    assert_true(fseen[2] > 500 && fseen[3] > 500);
    assert_int_equal(rg_task_size_part(t, 144, 1, 4), 111);
    assert_int_equal(rg_task_size_part(t, 148, 2, 4), 124);
    assert_int_equal(rg_task_size_part(fr, 344, 1, 4), 211); /* frames raised to the task's minimum 2 */
    assert_int_equal(rg_task_size_part(RG_TASK_COPY, 16, 1, 4), 4);
}

/* The batch's axes: row b's ids are rg_task_axes of its own prompt, padding 0, axis-major [3, B, T]. */
static void test_batch_axes(void **state)
{
    rg_task t = task_of("grid_lookup");
    rg_task_batch b;
    assert_int_equal(rg_task_batch_alloc_for(&b, t, 8, 144), RG_OK);
    assert_non_null(b.axes);
    rg_rng rng;
    rg_rng_seed(&rng, 5, 1);
    for (int rep = 0; rep < 5; rep++) {
        assert_int_equal(rg_task_batch_sample(&b, t, &rng, 8, 144), RG_OK);
        for (int i = 0; i < b.B; i++) {
            int32_t ax[RG_TASK_AXES * 64];
            assert_int_equal(rg_task_axes(t, b.n[i], b.tokens + (int64_t)i * b.T, ax, 64), RG_OK);
            for (int a = 0; a < RG_TASK_AXES; a++)
                for (int p = 0; p < b.T; p++) {
                    int32_t got = b.axes[((int64_t)a * b.B + i) * b.T + p];
                    int32_t want = p < b.len[i] ? ax[a * 64 + p] : 0;
                    if (got != want) fail_msg("rep %d row %d axis %d token %d: %d, want %d", rep, i, a, p, got, want);
                }
        }
    }
    rg_task_batch_free(&b);
    rg_task_batch nob; /* a grid task's batch without the axes buffer is refused */
    assert_int_equal(rg_task_batch_alloc_for(&nob, t, 2, 144), RG_OK);
    free(nob.axes);
    nob.axes = NULL;
    assert_int_equal(rg_task_batch_sample(&nob, t, &rng, 2, 144), RG_ERR_ARG);
    rg_task_batch_free(&nob);
}

static void test_sizes_and_errors(void **state)
{
    static const struct { const char *text; int n; } ok[] = {
        {"4x4", 144}, {"4x8", 148}, {"8x4", 184}, {"1x1", 111}, {"9x9", 199}, {"3x4x4", 344}, {"16", 16}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int n = 0;
        assert_int_equal(rg_size_parse(ok[i].text, &n), RG_OK);
        assert_int_equal(n, ok[i].n);
    }
    static const char *bad[] = {"0x4", "4x0", "10x2", "4x", "x4", "4x4x4x4", "4*4", "-3", "", "4x4 ", "1x2x0", "0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int n = -5;
        if (rg_size_parse(bad[i], &n) != RG_ERR_ARG) fail_msg("size '%s' was accepted as %d", bad[i], n);
    }
    rg_task t = task_of("grid_copy"), fr = task_of("frames");
    char buf[32];
    assert_string_equal(rg_task_size_text(t, 148, buf, sizeof buf), "4x8");
    assert_string_equal(rg_task_size_text(fr, 344, buf, sizeof buf), "3x4x4");
    assert_string_equal(rg_task_size_text(RG_TASK_COPY, 148, buf, sizeof buf), "148");
    assert_true(rg_task_is_grid(t) && !rg_task_is_grid(RG_TASK_COPY));
    /* sizes that are not the task's: a frames code for a single grid, one frame for frames, a zero side */
    int32_t p[2048], g[256], ax[3 * 64];
    rg_rng rng;
    rg_rng_seed(&rng, 1, 1);
    static const struct { const char *task; int n; } refused[] = {
        {"grid_copy", 244}, {"grid_copy", 140}, {"grid_copy", 16}, {"frames", 144}, {"frames", 304},
        {"grid_lookup", 1000}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        rg_task k = task_of(refused[i].task);
        assert_int_equal(rg_task_prompt_len(k, refused[i].n), -1);
        assert_int_equal(rg_task_draw(k, &rng, refused[i].n, p, g), RG_ERR_ARG);
        assert_int_equal(rg_task_axes(k, refused[i].n, p, ax, 64), RG_ERR_ARG);
        assert_int_equal(rg_task_shape(k, refused[i].n, NULL), RG_ERR_ARG);
    }
    assert_int_equal(rg_task_shape(RG_TASK_COPY, 144, NULL), RG_ERR_ARG);  /* not a grid task */
    assert_int_equal(rg_task_axes(t, 144, p, ax, 10), RG_ERR_ARG);         /* stride below the 41 tokens */
    assert_int_equal(rg_task_train_size(t, &rng, 16), -1);                 /* 16 is not a grid size */
    /* a lookup prompt whose query names a cell outside the grid */
    rg_task lk = task_of("grid_lookup");
    assert_int_equal(rg_task_draw(lk, &rng, 122, p, g), RG_OK);
    p[2 + 2 * 3] = RG_GRID_TOK_ROW0 + 5;
    assert_int_equal(rg_task_axes(lk, 122, p, ax, 64), RG_ERR_FORMAT);
    /* a descriptor with only some of the grid hooks is refused */
    rg_task_desc half = rg_task_desc_grid_copy;
    half.name = "half_grid";
    half.axes = NULL;
    assert_int_equal(rg_task_register(&half, NULL), RG_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_checked_samples), cmocka_unit_test(test_maps_all_sizes),
        cmocka_unit_test(test_frames_qwen2vl_ids),   cmocka_unit_test(test_lookup_and_frames),
        cmocka_unit_test(test_train_sizes),
        cmocka_unit_test(test_batch_axes),           cmocka_unit_test(test_sizes_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
