/* grid.c: the 2-D grid tasks (docs/grids.md) as registered tasks: grid_copy, grid_transpose,
 * grid_rotate (90 degrees clockwise) and grid_lookup, with the grid size code n = 100 F + 10 H + W (task.h; F = 1
 * here, so n = 100 + 10 H + W: "4x8" is 148), the (frame, row, column) axis ids of every token, and training
 * sizes "up to" the training size: H and W drawn uniformly and independently in 1..H_train and 1..W_train.
 * Declared in grid.h; the frames task is grid_frames.c.
 *
 * A grid of H x W symbols (a..z, drawn uniformly) is written row-major, each row followed by '/' (RG_GRID_TOK_NL):
 * H (W + 1) tokens. Axis ids (frame, row, column), rows 0-based, cells from column 1: cell (r, c) of a grid in
 * frame f is (f, r, c + 1), the '/' ending row r is (f, r, W + 1) (the next free cell of its row). Every other
 * token takes column 0 (the column before a row's first cell), as documented per task. The 1-D position of every
 * token is its raster index 0..T-1 in the sequence.
 *
 *   grid_copy / _transpose / _rotate (n = HxW; the output O has Ho x Wo = H x W, W x H, W x H):
 *     token    BOS      input grid (frame 0)    SEP       output grid O (frame 1)    EOS
 *     axes     (0,0,0)  (0, r, c+1), '/' W+1    (1,0,0)   (1, r, c+1), '/' Wo+1      (1, Ho, 0)
 *     O(r, c) = I(r, c) (copy), I(c, r) (transpose), I(H-1-c, r) (rotate 90 degrees clockwise).
 *     Prompt 2 + H (W + 1) tokens, target Ho (Wo + 1) + 1. SEP stands just left of the output's first cell, so
 *     the token predicting output cell (r, c) from inside a row sits at spatial offset (0, -1) from it, and copy
 *     is a constant spatial offset between a predicting token and the input cell it copies (transpose and rotate
 *     are not: their source cell moves against the output cell).
 *
 *   grid_lookup (n = HxW): the grid, then RG_GRID_QUERIES queries (r_k, c_k) drawn uniformly over the cells (with
 *     repeats), each written as two tokens "row r" (RG_GRID_TOK_ROW0 + r) "column c" (RG_GRID_TOK_COL0 + c), then
 *     the answers, each asked by '?' (RG_GRID_TOK_ASK):
 *       token  BOS  grid (frame 0)  SEP      q_1 .. q_K (2 tokens each)   ?                 a_1 ? a_2 .. ? a_K   EOS
 *       axes   (0,0,0) as above     (1,0,0)  both (1, r_k, c_k + 1)       (2, r_1, c_1 + 1)  a_k, and the ? that
 *                                                                                            asks it: (2, r_k, c_k + 1)  (2, H, 0)
 *     a_k = the symbol at (r_k, c_k). A query's tokens and the '?' asking it carry the cell they name, so the
 *     answer is at spatial offset (0, 0) from the token predicting it (the lookup is purely positional for an
 *     encoding reading the axes); a 1-D encoding must use the query tokens' content instead (and the row and
 *     column tokens of rows / columns >= 4 never occur in training at 4x4: a 1-D model cannot know them).
 *     Prompt 3 + H (W + 1) + 2K tokens, target 2K (the K-1 '?' between the answers count as tokens to get
 *     right; they are predictable). */
#include "grid.h"
#include "task_internal.h"

#include <string.h>

_Static_assert(RG_GRID_MAX_SIDE <= 9, "a side is one digit of the size code");

char rg_grid_token_char(int32_t tok)
{
    if (tok == RG_GRID_TOK_NL) return '/';
    if (tok == RG_GRID_TOK_BG) return '.';
    if (tok == RG_GRID_TOK_ASK) return '?';
    if (tok >= RG_GRID_TOK_ROW0 && tok < RG_GRID_TOK_ROW0 + RG_GRID_MAX_SIDE) return (char)('0' + tok - RG_GRID_TOK_ROW0);
    if (tok >= RG_GRID_TOK_COL0 && tok < RG_GRID_VOCAB) return (char)('A' + tok - RG_GRID_TOK_COL0);
    return rg_task_token_char(tok);
}

void rg_grid_write(const int32_t *g, int H, int W, int32_t *tok)
{
    for (int r = 0; r < H; r++) {
        memcpy(tok + r * (W + 1), g + r * W, sizeof(int32_t) * (size_t)W);
        tok[r * (W + 1) + W] = RG_GRID_TOK_NL;
    }
}

void rg_grid_axes_of(int32_t *axes, int64_t stride, int t0, int f, int H, int W)
{
    for (int r = 0; r < H; r++)
        for (int c = 0; c <= W; c++) rg_grid_axes_set(axes, stride, t0 + r * (W + 1) + c, f, r, c + 1);
}

/* ------------------------------------------------------------------ sizes */

/* A single grid (F = 1) of sides 1..RG_GRID_MAX_SIDE. */
static bool grid_shape(const rg_task_desc *d, int n, rg_grid_shape *s)
{
    (void)d;
    rg_grid_shape g;
    if (!rg_grid_decode(n, &g) || g.frames != 1) return false;
    if (s) *s = g;
    return true;
}

/* H and W of n (any n: digits clamped to 1.., so the length hooks are >= 1 everywhere). */
static void sides(int n, int *H, int *W)
{
    *H = n / 10 % 10 > 0 ? n / 10 % 10 : 1;
    *W = n % 10 > 0 ? n % 10 : 1;
}

static int grid_train_size(const rg_task_desc *d, rg_rng *rng, int L)
{
    (void)d;
    int H, W;
    sides(L, &H, &W);
    int h = 1 + (int)rg_rng_below(rng, (uint32_t)H);
    return rg_grid_code(1, h, 1 + (int)rg_rng_below(rng, (uint32_t)W));
}

static int map_prompt_len(int n)
{
    int H, W;
    sides(n, &H, &W);
    return 2 + H * (W + 1);
}

static int copy_target_len(int n) { return map_prompt_len(n) - 1; }
static int turn_target_len(int n) /* W rows of H cells */
{
    int H, W;
    sides(n, &H, &W);
    return W * (H + 1) + 1;
}

/* ------------------------------------------------------------------ copy, transpose, rotate */

typedef enum { MAP_COPY, MAP_TRANSPOSE, MAP_ROTATE } grid_map;
static const grid_map maps[3] = {MAP_COPY, MAP_TRANSPOSE, MAP_ROTATE};

static rg_status map_sample(const rg_task_desc *d, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    int H, W;
    sides(n, &H, &W);
    grid_map m = *(const grid_map *)d->user;
    int32_t in[RG_GRID_MAX_SIDE * RG_GRID_MAX_SIDE], out[RG_GRID_MAX_SIDE * RG_GRID_MAX_SIDE];
    for (int i = 0; i < H * W; i++) in[i] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
    int Ho = m == MAP_COPY ? H : W, Wo = m == MAP_COPY ? W : H;
    for (int r = 0; r < Ho; r++)
        for (int c = 0; c < Wo; c++)
            out[r * Wo + c] = m == MAP_COPY ? in[r * W + c] : m == MAP_TRANSPOSE ? in[c * W + r] : in[(H - 1 - c) * W + r];
    prompt[0] = RG_TOK_BOS;
    rg_grid_write(in, H, W, prompt + 1);
    prompt[1 + H * (W + 1)] = RG_TOK_SEP;
    rg_grid_write(out, Ho, Wo, target);
    target[Ho * (Wo + 1)] = RG_TOK_EOS;
    return RG_OK;
}

static rg_status map_axes(const rg_task_desc *d, int n, const int32_t *prompt, int32_t *axes, int64_t stride)
{
    (void)prompt;
    int H, W;
    sides(n, &H, &W);
    grid_map m = *(const grid_map *)d->user;
    int Ho = m == MAP_COPY ? H : W, Wo = m == MAP_COPY ? W : H, P = map_prompt_len(n);
    rg_grid_axes_set(axes, stride, 0, 0, 0, 0);
    rg_grid_axes_of(axes, stride, 1, 0, H, W);
    rg_grid_axes_set(axes, stride, P - 1, 1, 0, 0);
    rg_grid_axes_of(axes, stride, P, 1, Ho, Wo);
    rg_grid_axes_set(axes, stride, P + Ho * (Wo + 1), 1, Ho, 0);
    return RG_OK;
}

#define GRID_TASK(NAME, SUMMARY, TARGET, MAP)                                                                       \
    {.name = NAME, .summary = SUMMARY, .vocab_size = RG_GRID_VOCAB, .prompt_len = map_prompt_len,                  \
     .target_len = TARGET, .sample = map_sample, .token_char = rg_grid_token_char, .user = (void *)&maps[MAP],     \
     .flags = RG_TASK_OPT_IN, .shape = grid_shape, .train_size = grid_train_size, .axes = map_axes,              \
     .train_len = 144 /* 4x4 */}

const rg_task_desc rg_task_desc_grid_copy =
    GRID_TASK("grid_copy", "copy an H x W grid (rows end in '/'; axes frame, row, column)", copy_target_len, MAP_COPY);
const rg_task_desc rg_task_desc_grid_transpose =
    GRID_TASK("grid_transpose", "transpose an H x W grid into W x H", turn_target_len, MAP_TRANSPOSE);
const rg_task_desc rg_task_desc_grid_rotate =
    GRID_TASK("grid_rotate", "rotate an H x W grid 90 degrees clockwise into W x H", turn_target_len, MAP_ROTATE);

/* ------------------------------------------------------------------ lookup */

static int lookup_prompt_len(int n) { return map_prompt_len(n) + 2 * RG_GRID_QUERIES + 1; }
static int lookup_target_len(int n) { (void)n; return 2 * RG_GRID_QUERIES; }

static rg_status lookup_sample(const rg_task_desc *d, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    (void)d;
    int H, W;
    sides(n, &H, &W);
    int32_t g[RG_GRID_MAX_SIDE * RG_GRID_MAX_SIDE];
    for (int i = 0; i < H * W; i++) g[i] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
    prompt[0] = RG_TOK_BOS;
    rg_grid_write(g, H, W, prompt + 1);
    int t = 1 + H * (W + 1);
    prompt[t++] = RG_TOK_SEP;
    for (int k = 0; k < RG_GRID_QUERIES; k++) {
        int r = (int)rg_rng_below(rng, (uint32_t)H), c = (int)rg_rng_below(rng, (uint32_t)W);
        prompt[t++] = RG_GRID_TOK_ROW0 + r;
        prompt[t++] = RG_GRID_TOK_COL0 + c;
        target[2 * k] = g[r * W + c];
        target[2 * k + 1] = k + 1 < RG_GRID_QUERIES ? RG_GRID_TOK_ASK : RG_TOK_EOS;
    }
    prompt[t] = RG_GRID_TOK_ASK;
    return RG_OK;
}

static rg_status lookup_axes(const rg_task_desc *d, int n, const int32_t *prompt, int32_t *axes, int64_t stride)
{
    int H, W;
    sides(n, &H, &W);
    int q0 = map_prompt_len(n), P = lookup_prompt_len(n), K = RG_GRID_QUERIES;
    rg_grid_axes_set(axes, stride, 0, 0, 0, 0);
    rg_grid_axes_of(axes, stride, 1, 0, H, W);
    rg_grid_axes_set(axes, stride, q0 - 1, 1, 0, 0);
    for (int k = 0; k < K; k++) {
        int r = prompt[q0 + 2 * k] - RG_GRID_TOK_ROW0, c = prompt[q0 + 2 * k + 1] - RG_GRID_TOK_COL0;
        if (r < 0 || r >= H || c < 0 || c >= W)
            return rg_error(RG_ERR_FORMAT, "task '%s' n=%d: query %d is not a row and a column token of the grid",
                            d->name, n, k);
        rg_grid_axes_set(axes, stride, q0 + 2 * k, 1, r, c + 1);
        rg_grid_axes_set(axes, stride, q0 + 2 * k + 1, 1, r, c + 1);
        rg_grid_axes_set(axes, stride, P - 1 + 2 * k, 2, r, c + 1); /* the '?' asking query k */
        rg_grid_axes_set(axes, stride, P + 2 * k, 2, r, c + 1);     /* its answer */
    }
    rg_grid_axes_set(axes, stride, P + 2 * K - 1, 2, H, 0); /* EOS (in place of the '?' after a_K) */
    return RG_OK;
}

const rg_task_desc rg_task_desc_grid_lookup = {
    .name = "grid_lookup", .summary = "an H x W grid, then queries (r, c) answered by the symbol there",
    .vocab_size = RG_GRID_VOCAB, .prompt_len = lookup_prompt_len, .target_len = lookup_target_len,
    .sample = lookup_sample, .token_char = rg_grid_token_char, .flags = RG_TASK_OPT_IN, .shape = grid_shape,
    .train_size = grid_train_size, .axes = lookup_axes, .train_len = 144 /* 4x4 */};

rg_status rg_task_register_grids(void)
{
    const rg_task_desc *all[] = {&rg_task_desc_grid_copy, &rg_task_desc_grid_transpose, &rg_task_desc_grid_rotate,
                                 &rg_task_desc_grid_lookup, &rg_task_desc_frames, &rg_task_desc_frames_qwen2vl};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        rg_status st = rg_task_register(all[i], NULL);
        if (st) return st;
    }
    return RG_OK;
}
