/* protocol.h: the protocol's rules (protocol.c): test sizes, evaluation sets, fair max_distance, per-position counts. */
#ifndef ENG_SETTINGS_PROTOCOL_H
#define ENG_SETTINGS_PROTOCOL_H

#include "engine/base/types.h"

/* A test length's name in messages and reports: "n=16" (a 1-D task), "4x8" / "3x4x4" (a grid task's size). */
const char *eng_size_label(rg_task task, int n, char *buf, size_t cap);

/* The default test lengths of training length L into lens (room for ENG_MAX_LENS); returns their
 * count: the in-distribution points L/2 (rounded up) and L, every n from L+1 to ceil(1.5 L) (the window where
 * encodings differ; at most ENG_MAX_LENS - 5 of them), then 2L, 3L, 4L; lengths above ENG_MAX_TEST_N dropped.
 * L = 16: 8,16,17..24,32,48,64 (13); L = 32: 16,32,33..48,64,96,128 (21). */
int eng_default_test_lens(int L, int *lens);
/* The default test sizes of a grid task trained at size L (protocol.c; docs/grids.md): one frame: every H x W with
 * H, W in {ceil(s/2), s, s+1, ceil(1.5 s), 2 s} of the training sides s (at most 9): 4x4 gives 25 sizes 2..8 x 2..8
 * with 4x8, 8x4 and 8x8; frames F x H x W: F, F+1, 2F frames at H x W and 2H x 2W. Returns the count (0 when L is
 * not a size of the task). */
int eng_default_grid_sizes(rg_task task, int L, int *lens);
/* The fair value of encoding pos's max_distance_setting (T5's max_distance) for the longest training distance d
 * (rg_task_longest_distance: 2 L + 1 for the ordering tasks): d, raised to the setting's lower limit and then to
 * the first value the encoding's validate accepts under cfg (T5: num_buckets / 2 + 1; below it every training
 * distance has its own exact bucket anyway). -1 for an encoding without a max_distance_setting. */
int eng_fair_max_distance(const rg_model_config *cfg, rg_pos_kind pos, int d);
/* With o->fair_max_distance: sets encoding pos's max_distance_setting in o->model to the fair value of task's
 * longest training distance at o->train_len (a run's own task: eng_run); nothing otherwise. */
void eng_set_fair_max_distance(eng_options *o, rg_task task, rg_pos_kind pos);
/* Per-position accounting of `count` greedy outputs gen [count, m] against want [count, m] (row-major; m = n + 1
 * output positions, EOS last): right[p] += rows with gen[.][p] == want[.][p]; first_wrong[p] += rows whose first
 * wrong position is p (0-based), first_wrong[m] += rows with every position right. right has m entries,
 * first_wrong m + 1; both are added to (zero them first). */
void eng_position_count(const int32_t *gen, const int32_t *want, int count, int m, uint16_t *right,
                       uint16_t *first_wrong);

/* The evaluation set of (task, n): the lengths of the canonical file (rg_eval_lengths) are read from o->data, any
 * other length is generated in memory by the same generator and seed rule (rg_evalset_make: RG_EVAL_SEED, stream
 * 1000 * task + n, RG_EVAL_COUNT samples), which reproduces the file's sets exactly; *generated tells which. */
rg_status eng_evalset_get(const eng_options *o, rg_task task, int n, rg_evalset *es, bool *generated);

#endif
