/* grid.h: the grid tasks (docs/grids.md): grid_copy, grid_transpose, grid_rotate, grid_lookup
 * (src/task/grid.c), frames and its variant frames_qwen2vl (the same samples with Qwen2-VL's position ids;
 * src/task/grid_frames.c), registered tasks whose size n is a grid size code (task.h "grid sizes": 100 F + 10 H +
 * W) and whose tokens carry (frame, row, column) axis ids (the axes hook). All are RG_TASK_OPT_IN: train_order's
 * --task all leaves them out. The layouts are at the top of grid.c and grid_frames.c. */
#ifndef RG_TASK_GRID_H
#define RG_TASK_GRID_H

#include "task.h"

/* The grid tasks' vocabulary: the ordering tasks' 30 tokens (PAD, BOS, SEP, EOS, symbols a..z), then these. */
enum {
    RG_GRID_TOK_NL = RG_TASK_VOCAB,       /* 30 '/': the end of a grid row */
    RG_GRID_TOK_BG = RG_TASK_VOCAB + 1,   /* 31 '.': background (frames: a cell shifted in from outside) */
    RG_GRID_TOK_ASK = RG_TASK_VOCAB + 2,  /* 32 '?': asks grid_lookup's next query */
    RG_GRID_TOK_ROW0 = RG_TASK_VOCAB + 3, /* 33..41 '0'..'8': "row r" of a grid_lookup query */
    RG_GRID_TOK_COL0 = RG_TASK_VOCAB + 3 + RG_GRID_MAX_SIDE, /* 42..50 'A'..'I': "column c" of a query */
    RG_GRID_VOCAB = RG_TASK_VOCAB + 3 + 2 * RG_GRID_MAX_SIDE /* 51 */
};
#define RG_GRID_QUERIES 4   /* queries per grid_lookup sample */
#define RG_FRAMES_MIN 2     /* frames: a sample shows at least two frames (one shift to infer) */

extern const rg_task_desc rg_task_desc_grid_copy, rg_task_desc_grid_transpose, rg_task_desc_grid_rotate,
    rg_task_desc_grid_lookup, rg_task_desc_frames, rg_task_desc_frames_qwen2vl;

/* The printable character of a grid task's token: rg_task_token_char's, and '/', '.', '?', '0'..'8' (row tokens),
 * 'A'..'I' (column tokens). */
char rg_grid_token_char(int32_t tok);

/* Registers the six tasks (again: a no-op). The errors of rg_task_register (a full registry). */
rg_status rg_task_register_grids(void);

/* ------------------------------------------------------------------ shared by grid.c and grid_frames.c */

/* Writes grid g [H, W] (row-major symbols) as H rows of W cells and a RG_GRID_TOK_NL: H (W + 1) tokens. */
void rg_grid_write(const int32_t *g, int H, int W, int32_t *tok);
/* The axis ids of such a serialized grid at tokens t0.. of frame f: cell (r, c) gets (f, r, c + 1), the row's NL
 * (f, r, W + 1). */
void rg_grid_axes_of(int32_t *axes, int64_t stride, int t0, int f, int H, int W);
/* Axis ids (f, r, c) of token t. */
static inline void rg_grid_axes_set(int32_t *axes, int64_t stride, int t, int f, int r, int c)
{
    axes[t] = f;
    axes[stride + t] = r;
    axes[2 * stride + t] = c;
}

#endif
