/* grid_frames.c: the video-like task "frames" (docs/grids.md): F frames of H x W, each the previous
 * one shifted by one per-sample step (dr, dc), then the next frame to predict. Size n = 100 F + 10 H + W (task.h
 * grid size code, text "FxHxW": "3x4x4" is 344), F in RG_FRAMES_MIN..9; training sizes "up to" the training size:
 * F drawn in RG_FRAMES_MIN..F_train, H in 1..H_train, W in 1..W_train (uniformly, independently), so
 * --train-len 3x4x4 trains on two or three frames and the test sizes may show more.
 *
 * Frame 0 holds symbols a..z drawn uniformly; (dr, dc) is drawn uniformly from {-1, 0, 1}^2 and frame k+1 is
 * frame k moved by it: F_{k+1}(r, c) = F_k(r - dr, c - dc) inside the grid, '.' (RG_GRID_TOK_BG) for a cell that
 * moved in from outside. Each frame is written as grid.c writes a grid (rows ending in '/'):
 *
 *     token   BOS       frame 0 .. frame F-1              SEP        frame F (the target)         EOS
 *     axes    (0,0,0)   frame k: (k, r, c+1), '/' W+1     (F,0,0)    (F, r, c+1), '/' W+1          (F, H, 0)
 *
 * Prompt 2 + F H (W + 1) tokens, target H (W + 1) + 1. The target cell (r, c) is frame F-1's cell (r - dr, c - dc)
 * (or '.'): a step of one frame and a per-sample spatial offset the model must read off the frames it is shown.
 *
 * frames_qwen2vl: the same samples with the axis ids Qwen2-VL's get_rope_index gives this layout (Wang et al. 2024,
 * sec. 2.1; Hugging Face modeling_qwen2_vl.py), reading the F frames as one video of F x H x (W + 1) merged patches
 * ('/' is the patch after a row's last cell) and every other token as text. Text takes one id on all three axes,
 * counting on from the largest id before it + 1; the video adds the id after the text before it to its own
 * (frame, row, column) = (k, r, c), c = 0 .. W:
 *
 *     token   BOS       frame k cell (r, c), '/' c = W     SEP         target token j (0 .. H (W + 1))
 *     axes    (0,0,0)   (1 + k, 1 + r, 1 + c)              (s, s, s)   (s + 1 + j) on all three
 *
 * with s = 2 + max(F - 1, H - 1, W), the video's largest id + 1. So the frame to predict is text: it keeps no row
 * or column of its own, as the answer of a Qwen2-VL model is text. The 1-D positions stay the raster index. */
#include "grid.h"
#include "task_internal.h"

static bool frames_shape(const rg_task_desc *d, int n, rg_grid_shape *s)
{
    (void)d;
    rg_grid_shape g;
    if (!rg_grid_decode(n, &g) || g.frames < RG_FRAMES_MIN) return false;
    if (s) *s = g;
    return true;
}

/* F, H, W of any n (clamped to valid sides, so the length hooks are >= 1 everywhere). */
static void dims(int n, int *F, int *H, int *W)
{
    *F = n / 100 >= RG_FRAMES_MIN ? n / 100 % 10 : RG_FRAMES_MIN;
    *H = n / 10 % 10 > 0 ? n / 10 % 10 : 1;
    *W = n % 10 > 0 ? n % 10 : 1;
}

static int frames_prompt_len(int n)
{
    int F, H, W;
    dims(n, &F, &H, &W);
    return 2 + F * H * (W + 1);
}

static int frames_target_len(int n)
{
    int F, H, W;
    dims(n, &F, &H, &W);
    return H * (W + 1) + 1;
}

static int frames_train_size(const rg_task_desc *d, rg_rng *rng, int L)
{
    (void)d;
    int F, H, W;
    dims(L, &F, &H, &W);
    int f = RG_FRAMES_MIN + (int)rg_rng_below(rng, (uint32_t)(F - RG_FRAMES_MIN + 1));
    int h = 1 + (int)rg_rng_below(rng, (uint32_t)H);
    return rg_grid_code(f, h, 1 + (int)rg_rng_below(rng, (uint32_t)W));
}

static rg_status frames_sample(const rg_task_desc *d, rg_rng *rng, int n, int32_t *prompt, int32_t *target)
{
    (void)d;
    int F, H, W;
    dims(n, &F, &H, &W);
    int32_t cur[RG_GRID_MAX_SIDE * RG_GRID_MAX_SIDE], next[RG_GRID_MAX_SIDE * RG_GRID_MAX_SIDE];
    for (int i = 0; i < H * W; i++) cur[i] = RG_TOK_SYM0 + (int32_t)rg_rng_below(rng, RG_TASK_NSYM);
    int dr = (int)rg_rng_below(rng, 3) - 1, dc = (int)rg_rng_below(rng, 3) - 1;
    prompt[0] = RG_TOK_BOS;
    int fl = H * (W + 1);
    for (int k = 0; k <= F; k++) {
        rg_grid_write(cur, H, W, k < F ? prompt + 1 + k * fl : target);
        for (int r = 0; r < H; r++)
            for (int c = 0; c < W; c++) {
                int sr = r - dr, sc = c - dc;
                next[r * W + c] = sr >= 0 && sr < H && sc >= 0 && sc < W ? cur[sr * W + sc] : RG_GRID_TOK_BG;
            }
        for (int i = 0; i < H * W; i++) cur[i] = next[i];
    }
    prompt[1 + F * fl] = RG_TOK_SEP;
    target[fl] = RG_TOK_EOS;
    return RG_OK;
}

/* The numbering of frames_axes: the tasks' own (the table at the top; .user NULL) or Qwen2-VL's. */
typedef enum { FRAMES_NUMBERING_GRID, FRAMES_NUMBERING_QWEN2VL } frames_numbering;
static const frames_numbering qwen2vl_numbering = FRAMES_NUMBERING_QWEN2VL;

static rg_status frames_axes(const rg_task_desc *d, int n, const int32_t *prompt, int32_t *axes, int64_t stride)
{
    (void)prompt;
    int F, H, W;
    dims(n, &F, &H, &W);
    int fl = H * (W + 1), P = frames_prompt_len(n);
    if (d->user && *(const frames_numbering *)d->user == FRAMES_NUMBERING_QWEN2VL) {
        rg_grid_axes_set(axes, stride, 0, 0, 0, 0);
        for (int k = 0; k < F; k++)
            for (int r = 0; r < H; r++)
                for (int c = 0; c <= W; c++)
                    rg_grid_axes_set(axes, stride, 1 + k * fl + r * (W + 1) + c, 1 + k, 1 + r, 1 + c);
        int top = F - 1 > H - 1 ? F - 1 : H - 1, s = 2 + (top > W ? top : W);
        for (int t = P - 1; t < P + fl + 1; t++) { /* SEP, the target frame, EOS: text */
            int id = s + t - (P - 1);
            rg_grid_axes_set(axes, stride, t, id, id, id);
        }
        return RG_OK;
    }
    rg_grid_axes_set(axes, stride, 0, 0, 0, 0);
    for (int k = 0; k < F; k++) rg_grid_axes_of(axes, stride, 1 + k * fl, k, H, W);
    rg_grid_axes_set(axes, stride, P - 1, F, 0, 0);
    rg_grid_axes_of(axes, stride, P, F, H, W);
    rg_grid_axes_set(axes, stride, P + fl, F, H, 0);
    return RG_OK;
}

const rg_task_desc rg_task_desc_frames = {
    .name = "frames", .summary = "F frames of H x W, each the previous shifted by one step; predict the next frame",
    .vocab_size = RG_GRID_VOCAB, .prompt_len = frames_prompt_len, .target_len = frames_target_len,
    .sample = frames_sample, .token_char = rg_grid_token_char, .flags = RG_TASK_OPT_IN, .shape = frames_shape,
    .train_size = frames_train_size, .axes = frames_axes, .train_len = 344 /* 3x4x4 */};

const rg_task_desc rg_task_desc_frames_qwen2vl = {
    .name = "frames_qwen2vl",
    .summary = "frames with Qwen2-VL's position ids (get_rope_index: the frames a video, the rest text)",
    .vocab_size = RG_GRID_VOCAB, .prompt_len = frames_prompt_len, .target_len = frames_target_len,
    .sample = frames_sample, .token_char = rg_grid_token_char, .user = (void *)&qwen2vl_numbering, .base = "frames",
    .flags = RG_TASK_OPT_IN, .shape = frames_shape, .train_size = frames_train_size, .axes = frames_axes,
    .train_len = 344 /* 3x4x4 */};
