/* grid_size.c: what the registry knows about grid sizes (task.h "grid sizes"; docs/grids.md): the size code
 * n = 100 F + 10 H + W of F frames of H x W, its text form ("4x8", "3x4x4"), and, for any registered task through
 * its descriptor's grid hooks, the shape of a size, the (frame, row, column) axis ids of a sample, the size of a
 * training row, and the fractions of a training size the held-out sets use. */
#include "task_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rg_grid_decode(int n, rg_grid_shape *s)
{
    int F = n / 100, H = n / 10 % 10, W = n % 10;
    if (n < 111 || n > 999 || H < 1 || W < 1) return false;
    if (s) *s = (rg_grid_shape){F, H, W};
    return true;
}

/* One side 1..RG_GRID_MAX_SIDE at *p (digits only), advancing *p; -1 when not. */
static int side(const char **p)
{
    const char *s = *p;
    int v = 0, k = 0;
    while (s[k] >= '0' && s[k] <= '9' && k < 3) v = 10 * v + (s[k++] - '0');
    if (k == 0 || (s[k] >= '0' && s[k] <= '9') || v < 1 || v > RG_GRID_MAX_SIDE) return -1;
    *p = s + k;
    return v;
}

rg_status rg_size_parse(const char *text, int *n)
{
    if (!text || !n) return rg_error(RG_ERR_ARG, "size: NULL text");
    int d[3], k = 0;
    const char *p = text;
    if (!strchr(text, 'x')) { /* a length */
        char *end;
        long v = strtol(text, &end, 10);
        if (end != text && *end == 0 && text[0] >= '0' && text[0] <= '9' && v >= 1 && v <= RG_TASK_MAX_N) {
            *n = (int)v;
            return RG_OK;
        }
        return rg_error(RG_ERR_ARG, "size '%.40s' is not a length 1..%d nor a grid HxW or FxHxW", text, RG_TASK_MAX_N);
    }
    while (k < 3 && (d[k] = side(&p)) > 0) {
        k++;
        if (*p != 'x') break;
        p++;
    }
    if (*p != 0 || k < 2 || d[k - 1] < 0)
        return rg_error(RG_ERR_ARG, "size '%.40s' is not a grid HxW or FxHxW with every side 1..%d", text,
                        RG_GRID_MAX_SIDE);
    *n = k == 2 ? rg_grid_code(1, d[0], d[1]) : rg_grid_code(d[0], d[1], d[2]);
    return RG_OK;
}

bool rg_task_is_grid(rg_task task)
{
    const rg_task_desc *d = rg_task_get(task);
    return d && d->shape;
}

rg_status rg_task_shape(rg_task task, int n, rg_grid_shape *s)
{
    const rg_task_desc *d = rg_task_get(task);
    if (!d) return rg_error(RG_ERR_ARG, "unknown task %d", (int)task);
    if (!d->shape) return rg_error(RG_ERR_ARG, "task '%s' is not a grid task", d->name);
    if (n < 1 || n > RG_TASK_MAX_N || !d->shape(d, n, s))
        return rg_error(RG_ERR_ARG, "n = %d is not a size of grid task '%s'", n, d->name);
    return RG_OK;
}

const char *rg_task_size_text(rg_task task, int n, char *buf, size_t cap)
{
    rg_grid_shape s;
    const rg_task_desc *d = rg_task_get(task);
    if (!d || !d->shape || n < 1 || n > RG_TASK_MAX_N || !d->shape(d, n, &s)) snprintf(buf, cap, "%d", n);
    else if (s.frames == 1) snprintf(buf, cap, "%dx%d", s.rows, s.cols);
    else snprintf(buf, cap, "%dx%dx%d", s.frames, s.rows, s.cols);
    return buf;
}

rg_status rg_task_axes(rg_task task, int n, const int32_t *prompt, int32_t *axes, int64_t stride)
{
    int T = rg_task_total_len(task, n);
    const rg_task_desc *d = rg_task_get(task);
    rg_grid_shape sh;
    if (T < 0 && d && d->shape) return rg_task_shape(task, n, &sh);
    if (T < 0) return rg_error(RG_ERR_ARG, "rg_task_axes: unknown task %d or n = %d outside 1..%d", (int)task, n,
                               RG_TASK_MAX_N);
    if (!axes || !prompt || stride < T)
        return rg_error(RG_ERR_ARG, "rg_task_axes: NULL axes or prompt, or stride %lld < %d tokens",
                                             (long long)stride, T);
    if (!d->axes) {
        for (int a = 0; a < RG_TASK_AXES; a++)
            for (int t = 0; t < T; t++) axes[a * stride + t] = t;
        return RG_OK;
    }
    rg_status st = d->axes(d, n, prompt, axes, stride);
    if (st) return st;
    for (int a = 0; a < RG_TASK_AXES; a++)
        for (int t = 0; t < T; t++)
            if (axes[a * stride + t] < 0 || axes[a * stride + t] >= RG_TASK_MAX_POSITION)
                return rg_error(RG_ERR_FORMAT, "task '%s' n=%d: axis %d of token %d = %d outside 0..%d", d->name, n, a,
                                t, (int)axes[a * stride + t], RG_TASK_MAX_POSITION - 1);
    return RG_OK;
}

int rg_task_train_size(rg_task task, rg_rng *rng, int L_train)
{
    const rg_task_desc *d = rg_task_get(task);
    if (!d || rg_task_total_len(task, L_train) < 0) {
        rg_error(RG_ERR_ARG, "training size %d is not a size of task '%s'", L_train, rg_task_name(task));
        return -1;
    }
    if (d->flags & RG_TASK_FULL_LEN) return L_train;
    if (!d->train_size) return 1 + (int)rg_rng_below(rng, (uint32_t)L_train);
    int n = d->train_size(d, rng, L_train);
    if (rg_task_total_len(task, n) < 0 || rg_task_total_len(task, n) > rg_task_total_len(task, L_train)) {
        rg_error(RG_ERR_ARG, "task '%s': its train_size hook drew %d at L_train %d (not a size no longer than it)",
                 d->name, n, L_train);
        return -1;
    }
    return n;
}

int rg_task_size_part(rg_task task, int L, int q, int Q)
{
    if (q < 1 || Q < q || rg_task_total_len(task, L) < 0) return -1;
    if (!rg_task_is_grid(task)) return (int)(((int64_t)q * L + Q - 1) / Q);
    rg_grid_shape s;
    rg_task_shape(task, L, &s);
    int H = (q * s.rows + Q - 1) / Q, W = (q * s.cols + Q - 1) / Q;
    for (int F = (q * s.frames + Q - 1) / Q; F <= s.frames; F++)
        if (rg_task_total_len(task, rg_grid_code(F, H, W)) > 0) return rg_grid_code(F, H, W);
    return L;
}
