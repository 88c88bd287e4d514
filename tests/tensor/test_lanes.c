/* test_lanes.c (float32): the 16-row in-order reductions of src/tensor/lanes.h (attention's softmax row maxima and
 * sums, and its backward's row dot products) equal the plain per-row loops bit for bit: ragged and empty rows,
 * groups shorter than 16 rows (lanes repeating the last row with n = 0), NaN of both signs, -0, -inf and values of
 * mixed magnitude, where any reordering of a sum changes its bits (checked: a row whose in-order sum is 1 and whose
 * pairwise sum is 0); a NaN result need only be a NaN (lanes.h). On a CPU with AVX-512F the AVX-512 path runs
 * (printed). A row ending at an unreadable page is read without a fault (the tiles' masked loads). */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tensor/lanes.h"

typedef struct {
    int rows, S;       /* rows of the group (<= 16), row stride */
    int n[RG_LANES];   /* entries per row; lanes >= rows get 0 */
} group_case;

static const group_case CASES[] = {
    {16, 34, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},   /* causal rows 1..16 */
    {16, 34, {17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}},
    {2, 34, {33, 34}},                                                    /* the last 2 rows of a T = 34 block */
    {16, 130, {130, 130, 130, 130, 130, 130, 130, 130, 130, 130, 130, 130, 130, 130, 130, 130}},
    {7, 9, {0, 9, 3, 0, 9, 1, 5}},                                        /* empty rows */
    {1, 1, {1}},
    {16, 20, {20, 0, 20, 0, 20, 0, 20, 0, 20, 0, 20, 0, 20, 0, 20, 0}},
    {4, 47, {47, 16, 33, 17}},                                            /* 16-entry tiles: full, exact, + 1 */
};

/* value i of a case: mixed magnitudes and signs; some NaN, -0 and -inf */
static float value(size_t i, unsigned salt)
{
    uint32_t h = (uint32_t)(i * 2654435761u + salt * 40503u);
    if (h % 101 == 7) return NAN;
    if (h % 103 == 9) return -NAN;
    if (h % 89 == 3) return -0.0f;
    if (h % 97 == 11) return -INFINITY;
    float mag = (float)(h % 1000) / 7.0f * (h % 3 == 0 ? 1e6f : 1.0f);
    return h & 0x10000u ? -mag : mag;
}

/* The same bits, or both NaN: which of two NaNs an add keeps depends on its operand order, which the compiler
 * chooses in the plain loop too (lanes.h). */
static bool same_values(const float *got, const float *want)
{
    for (int r = 0; r < RG_LANES; r++)
        if (memcmp(&got[r], &want[r], sizeof *got) && !(isnan(got[r]) && isnan(want[r]))) return false;
    return true;
}

static void group_offsets(const group_case *c, int64_t off[RG_LANES], int n[RG_LANES])
{
    for (int r = 0; r < RG_LANES; r++) {
        off[r] = (int64_t)(r < c->rows ? r : c->rows - 1) * c->S;
        n[r] = r < c->rows ? c->n[r] : 0;
    }
}

static void test_equal_to_plain_loops(void **state)
{
    (void)state;
#ifdef RG_LANES_AVX512
    printf("lanes: %s path\n", rg_lanes_fast() ? "AVX-512" : "plain");
#endif
    for (size_t t = 0; t < sizeof CASES / sizeof *CASES; t++) {
        const group_case *c = &CASES[t];
        size_t len = (size_t)c->rows * c->S;
        float *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b);
        assert_non_null(a), assert_non_null(b);
        for (size_t i = 0; i < len; i++) a[i] = value(i, (unsigned)t), b[i] = value(i, (unsigned)t + 1000);
        int64_t off[RG_LANES];
        int n[RG_LANES];
        group_offsets(c, off, n);
        float got[RG_LANES], want[RG_LANES];
        rg_lanes_max(a, off, n, got);
        rg_lanes_max_plain(a, off, n, want);
        if (!same_values(got, want)) fail_msg("case %zu: rg_lanes_max differs from the plain loop", t);
        rg_lanes_sum(a, off, n, got);
        rg_lanes_sum_plain(a, off, n, want);
        if (!same_values(got, want)) fail_msg("case %zu: rg_lanes_sum differs from the plain loop", t);
        rg_lanes_dot(a, b, off, n, got);
        rg_lanes_dot_plain(a, b, off, n, want);
        if (!same_values(got, want)) fail_msg("case %zu: rg_lanes_dot differs from the plain loop", t);
        free(a), free(b);
    }
}

/* The order is kept: 1e8 + 1 - 1e8 + 1 is 1 in order, 0 pairwise ((1e8 + 1) + (-1e8 + 1)); the maximum of a row
 * with a NaN and signed zeros is that of the plain comparison (-0 first, then +0: -0 stays; NaN skipped). */
static void test_order_kept(void **state)
{
    (void)state;
    float row[4 * RG_LANES] = {1e8f, 1.0f, -1e8f, 1.0f};
    const float zeros[4] = {-0.0f, 0.0f, NAN, -0.0f};
    memcpy(row + 4, zeros, sizeof zeros);
    int64_t off[RG_LANES];
    int n[RG_LANES];
    for (int r = 0; r < RG_LANES; r++) off[r] = r < 2 ? 4 * r : 4, n[r] = r < 2 ? 4 : 0;
    float s[RG_LANES], m[RG_LANES];
    rg_lanes_sum(row, off, n, s);
    assert_true(s[0] == 1.0f);
    assert_true((1e8f + 1.0f) + (-1e8f + 1.0f) == 0.0f); /* what a pairwise order would give */
    rg_lanes_max(row, off, n, m);
    assert_true(m[0] == 1e8f);
    assert_true(m[1] == 0.0f && signbit(m[1]));
    for (int r = 2; r < RG_LANES; r++) assert_true(s[r] == 0.0f && !signbit(s[r]) && m[r] == -INFINITY);
}

/* Only a row's n[r] entries are read: rows that end at an unreadable page (the AVX-512 path's masked loads of a
 * 16-entry tile must not touch what lies past the row) give the plain loop's values instead of a fault. */
static void test_reads_only_the_rows(void **state)
{
    (void)state;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + page, page, PROT_NONE), 0);
    float *end = (float *)(map + page); /* the first unreadable float */
    const int lens[] = {1, 5, 16, 17, 37};
    for (size_t t = 0; t < sizeof lens / sizeof *lens; t++) {
        const int len = lens[t]; /* rows 0 (len entries) and 1 (len - 1, from one entry later) end at the page */
        float *base = end - 2 * len;
        for (int j = 0; j < 2 * len; j++) base[j] = value((size_t)j, 7u + (unsigned)t);
        int64_t off[RG_LANES];
        int n[RG_LANES];
        for (int r = 0; r < RG_LANES; r++) {
            off[r] = r == 0 ? len : r == 1 && len > 1 ? len + 1 : 0;
            n[r] = r == 0 ? len : r == 1 ? len - 1 : 0;
        }
        float got[RG_LANES], want[RG_LANES];
        rg_lanes_max(base, off, n, got);
        rg_lanes_max_plain(base, off, n, want);
        assert_true(same_values(got, want));
        rg_lanes_sum(base, off, n, got);
        rg_lanes_sum_plain(base, off, n, want);
        assert_true(same_values(got, want));
        rg_lanes_dot(base, base, off, n, got);
        rg_lanes_dot_plain(base, base, off, n, want);
        assert_true(same_values(got, want));
    }
    munmap(map, 2 * page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_to_plain_loops),
        cmocka_unit_test(test_order_kept),
        cmocka_unit_test(test_reads_only_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
