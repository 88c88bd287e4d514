/* protocol.c: the experiment protocol's rules that follow from the training length L: the default test
 * lengths (dense over the window L+1 .. 1.5 L where encodings differ, then 2L, 3L, 4L), T5's max_distance tied to
 * the longest training distance, and the per-position accounting of greedy outputs (accuracy of each output
 * position and where the first error falls). */
#include "engine/settings/protocol.h"
#include "engine/base/types.h"

#include <math.h>
#include <stdio.h>

int eng_default_test_lens(int L, int *lens)
{
    int n = 0;
    int half = (L + 1) / 2, window_end = (3 * L + 1) / 2; /* ceil(L / 2), ceil(1.5 L) */
    if (half < L) lens[n++] = half;
    lens[n++] = L;
    for (int k = L + 1; k <= window_end && n < ENG_MAX_LENS - 3 && k <= ENG_MAX_TEST_N; k++) lens[n++] = k;
    for (int f = 2; f <= 4; f++) {
        int k = f * L;
        if (k > lens[n - 1] && k <= ENG_MAX_TEST_N && n < ENG_MAX_LENS) lens[n++] = k;
    }
    return n;
}

/* The sides {ceil(s/2), s, s+1, ceil(1.5 s), 2 s} of a training side s, ascending, distinct, at most
 * RG_GRID_MAX_SIDE; returns their count. */
static int grid_sides(int s, int *out)
{
    int cand[5] = {(s + 1) / 2, s, s + 1, (3 * s + 1) / 2, 2 * s}, n = 0;
    for (int i = 0; i < 5; i++)
        if (cand[i] <= RG_GRID_MAX_SIDE && (n == 0 || cand[i] > out[n - 1])) out[n++] = cand[i];
    return n;
}

const char *eng_size_label(rg_task task, int n, char *buf, size_t cap)
{
    if (rg_task_is_grid(task)) return rg_task_size_text(task, n, buf, cap);
    snprintf(buf, cap, "n=%d", n);
    return buf;
}

int eng_default_grid_sizes(rg_task task, int L, int *lens)
{
    rg_grid_shape s;
    if (rg_task_shape(task, L, &s)) return 0;
    int hs[5], ws[5], nh = grid_sides(s.rows, hs), nw = grid_sides(s.cols, ws), n = 0;
    if (s.frames == 1) { /* every H x W of the sides: a full heatmap (at most 25 sizes) */
        for (int i = 0; i < nh; i++)
            for (int j = 0; j < nw; j++) lens[n++] = rg_grid_code(1, hs[i], ws[j]);
        return n;
    }
    int fs[3] = {s.frames, s.frames + 1, 2 * s.frames}; /* frames: more frames, at the training grid and twice it */
    for (int f = 0; f < 3; f++) {
        if (fs[f] > RG_GRID_MAX_SIDE || (f && fs[f] <= fs[f - 1])) continue;
        lens[n++] = rg_grid_code(fs[f], s.rows, s.cols);
        int H2 = 2 * s.rows <= RG_GRID_MAX_SIDE ? 2 * s.rows : s.rows, W2 = 2 * s.cols <= RG_GRID_MAX_SIDE ? 2 * s.cols : s.cols;
        if (H2 != s.rows || W2 != s.cols) lens[n++] = rg_grid_code(fs[f], H2, W2);
    }
    return n;
}

int eng_fair_max_distance(const rg_model_config *cfg, rg_pos_kind pos, int d)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    const rg_pos_setting *s = e && e->max_distance_setting ? rg_pos_setting_find(e->max_distance_setting) : NULL;
    if (!s) return -1;
    rg_model_config c = *cfg;
    c.pos = pos;
    int v = d > s->lo ? d : (int)s->lo;
    /* the encoding's own lower limit (T5: above num_buckets / 2): the first value its validate accepts */
    for (int k = 0; k < (1 << 20) && v < s->hi; k++, v++)
        if (rg_pos_config_set(&c, s->name, v) == RG_OK && (!e->validate || e->validate(&c) == RG_OK)) break;
    return v;
}

void eng_set_fair_max_distance(eng_options *o, rg_task task, rg_pos_kind pos)
{
    const rg_pos_encoding *e = rg_pos_encoding_of(pos);
    int d = rg_task_longest_distance(task, o->train_len);
    if (o->fair_max_distance && e && e->max_distance_setting && d >= 0)
        rg_pos_config_set(&o->model, e->max_distance_setting, eng_fair_max_distance(&o->model, pos, d));
}

void eng_position_count(const int32_t *gen, const int32_t *want, int count, int m, uint16_t *right,
                       uint16_t *first_wrong)
{
    /* the library's accounting (rg_position_counts, generate.h), added into the result's 16-bit counts */
    int64_t r[ENG_POS_MAX] = {0}, f[ENG_POS_MAX + 1] = {0};
    if (m < 1 || m > ENG_POS_MAX) return;
    rg_position_counts(gen, want, count, m, r, f);
    for (int p = 0; p < m; p++) right[p] = (uint16_t)(right[p] + r[p]);
    for (int p = 0; p <= m; p++) first_wrong[p] = (uint16_t)(first_wrong[p] + f[p]);
}

rg_status eng_evalset_get(const eng_options *o, rg_task task, int n, rg_evalset *es, bool *generated)
{
    *generated = true;
    for (int i = 0; rg_evalset_has(task) && i < RG_EVAL_NLENS; i++) /* the file holds the ordering tasks' sets */
        if (rg_eval_lengths[i] == n) *generated = false;
    if (!*generated) return rg_evalset_load(o->data, rg_task_name(task), n, es);
    return rg_task_evalset(task, n, RG_EVAL_COUNT, RG_EVAL_SEED, es);
}
