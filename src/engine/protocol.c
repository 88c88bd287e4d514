/* protocol.c: the experiment protocol's rules that follow from the training length L (issue 20): the default test
 * lengths (dense over the window L+1 .. 1.5 L where encodings differ, then 2L, 3L, 4L), T5's max_distance tied to
 * the longest training distance, and the per-position accounting of greedy outputs (accuracy of each output
 * position and where the first error falls). */
#include "train_order.h"

int to_default_test_lens(int L, int *lens)
{
    int n = 0;
    int half = (L + 1) / 2, window_end = (3 * L + 1) / 2; /* ceil(L / 2), ceil(1.5 L) */
    if (half < L) lens[n++] = half;
    lens[n++] = L;
    for (int k = L + 1; k <= window_end && n < TO_MAX_LENS - 3 && k <= TO_MAX_TEST_N; k++) lens[n++] = k;
    for (int f = 2; f <= 4; f++) {
        int k = f * L;
        if (k > lens[n - 1] && k <= TO_MAX_TEST_N && n < TO_MAX_LENS) lens[n++] = k;
    }
    return n;
}

int to_t5_fair_max_distance(int L, int num_buckets)
{
    int d = 2 * L + 1, floor_d = num_buckets / 2 + 1;
    return d > floor_d ? d : floor_d;
}

void to_position_count(const int32_t *gen, const int32_t *want, int count, int m, uint16_t *right,
                       uint16_t *first_wrong)
{
    for (int i = 0; i < count; i++) {
        const int32_t *g = gen + (int64_t)i * m, *w = want + (int64_t)i * m;
        int first = m;
        for (int p = 0; p < m; p++) {
            bool ok = g[p] == w[p];
            right[p] += ok;
            if (!ok && first == m) first = p;
        }
        first_wrong[first]++;
    }
}
